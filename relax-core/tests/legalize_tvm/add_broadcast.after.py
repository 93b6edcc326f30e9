# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def add(x: T.Buffer((T.int64(2), T.int64(1), T.int64(3)), "float32"), y: T.Buffer((T.int64(4), T.int64(1)), "float32"), T_add: T.Buffer((T.int64(2), T.int64(4), T.int64(3)), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for ax0, ax1, ax2 in T.grid(T.int64(2), T.int64(4), T.int64(3)):
            with T.sblock("T_add"):
                v_ax0, v_ax1, v_ax2 = T.axis.remap("SSS", [ax0, ax1, ax2])
                T.reads(x[v_ax0, T.int64(0), v_ax2], y[v_ax1, T.int64(0)])
                T.writes(T_add[v_ax0, v_ax1, v_ax2])
                T_add[v_ax0, v_ax1, v_ax2] = x[v_ax0, T.int64(0), v_ax2] + y[v_ax1, T.int64(0)]

    @R.function
    def main(x: R.Tensor((2, 1, 3), dtype="float32"), y: R.Tensor((4, 1), dtype="float32")) -> R.Tensor((2, 4, 3), dtype="float32"):
        cls = Module
        gv = R.call_tir(cls.add, (x, y), out_ty=R.Tensor((2, 4, 3), dtype="float32"))
        return gv
