# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def reshape(x: T.Buffer((T.int64(2), T.int64(3), T.int64(4)), "float32"), T_reshape: T.Buffer((T.int64(6), T.int64(4)), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for ax0, ax1 in T.grid(T.int64(6), T.int64(4)):
            with T.sblock("T_reshape"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(x[(v_ax1 // T.int64(4) + v_ax0) % T.int64(6) // T.int64(3), (v_ax1 // T.int64(4) + v_ax0) % T.int64(3), v_ax1 % T.int64(4)])
                T.writes(T_reshape[v_ax0, v_ax1])
                T_reshape[v_ax0, v_ax1] = x[(v_ax1 // T.int64(4) + v_ax0) % T.int64(6) // T.int64(3), (v_ax1 // T.int64(4) + v_ax0) % T.int64(3), v_ax1 % T.int64(4)]

    @R.function
    def main(x: R.Tensor((2, 3, 4), dtype="float32")) -> R.Tensor((6, 4), dtype="float32"):
        cls = Module
        gv = R.call_tir(cls.reshape, (x,), out_ty=R.Tensor((6, 4), dtype="float32"))
        return gv
