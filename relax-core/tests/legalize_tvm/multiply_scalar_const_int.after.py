# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def multiply(x: T.Buffer((n, T.int64(4)), "int32"), T_multiply: T.Buffer((n, T.int64(4)), "int32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for ax0, ax1 in T.grid(n, T.int64(4)):
            with T.sblock("T_multiply"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(x[v_ax0, v_ax1])
                T.writes(T_multiply[v_ax0, v_ax1])
                T_multiply[v_ax0, v_ax1] = x[v_ax0, v_ax1] * 3

    @R.function
    def main(x: R.Tensor((n, 4), dtype="int32")) -> R.Tensor((n, 4), dtype="int32"):
        cls = Module
        gv = R.call_tir(cls.multiply, (x,), out_ty=R.Tensor((n, 4), dtype="int32"))
        return gv
