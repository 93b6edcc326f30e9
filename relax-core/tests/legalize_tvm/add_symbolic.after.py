# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

a = TypeVar("a")
b = TypeVar("b")
c = TypeVar("c")
@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def add(x: T.Buffer((a, b, c), "float32"), y: T.Buffer((c,), "float32"), T_add: T.Buffer((a, b, c), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for ax0, ax1, ax2 in T.grid(a, b, c):
            with T.sblock("T_add"):
                v_ax0, v_ax1, v_ax2 = T.axis.remap("SSS", [ax0, ax1, ax2])
                T.reads(x[v_ax0, v_ax1, v_ax2], y[v_ax2])
                T.writes(T_add[v_ax0, v_ax1, v_ax2])
                T_add[v_ax0, v_ax1, v_ax2] = x[v_ax0, v_ax1, v_ax2] + y[v_ax2]

    @R.function
    def main(x: R.Tensor((a, b, c), dtype="float32"), y: R.Tensor((c,), dtype="float32")) -> R.Tensor((a, b, c), dtype="float32"):
        cls = Module
        gv = R.call_tir(cls.add, (x, y), out_ty=R.Tensor((a, b, c), dtype="float32"))
        return gv
