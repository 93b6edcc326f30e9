# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def sum(x: T.Buffer((T.int64(2), T.int64(3), T.int64(4)), "float32"), x_red: T.Buffer((T.int64(2), T.int64(4)), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for ax0, ax1, k1 in T.grid(T.int64(2), T.int64(4), T.int64(3)):
            with T.sblock("x_red"):
                v_ax0, v_ax1, v_k1 = T.axis.remap("SSR", [ax0, ax1, k1])
                T.reads(x[v_ax0, v_k1, v_ax1])
                T.writes(x_red[v_ax0, v_ax1])
                with T.init():
                    x_red[v_ax0, v_ax1] = T.float32(0.0)
                x_red[v_ax0, v_ax1] = x_red[v_ax0, v_ax1] + x[v_ax0, v_k1, v_ax1]

    @R.function
    def main(x: R.Tensor((2, 3, 4), dtype="float32")) -> R.Tensor((2, 4), dtype="float32"):
        cls = Module
        gv = R.call_tir(cls.sum, (x,), out_ty=R.Tensor((2, 4), dtype="float32"))
        return gv
