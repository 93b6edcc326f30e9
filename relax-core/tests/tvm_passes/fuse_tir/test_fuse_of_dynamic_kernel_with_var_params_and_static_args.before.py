# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

m = TypeVar("m")
n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def dynamic_tir_kernel(A: T.Buffer((m, n), "float32"), B: T.Buffer((m, n), "float32")):
        # with T.sblock("root"):
        for iters_0, iters_1 in T.grid(m, n):
            with T.sblock("compute"):
                i, j = T.axis.remap("SS", [iters_0, iters_1])
                T.reads(A[i, j])
                T.writes(B[i, j])
                B[i, j] = A[i, j] * T.Cast("float32", i) + T.Cast("float32", j)

    @R.function(private=True)
    def fused_function(x: R.Tensor((16, 32), dtype="float32")) -> R.Tensor((16, 32), dtype="float32"):
        R.func_attr({"Primitive": True})
        cls = Module
        with R.dataflow():
            y = R.call_tir(cls.dynamic_tir_kernel, (x,), out_ty=R.Tensor((16, 32), dtype="float32"))
            z = R.call_tir(cls.dynamic_tir_kernel, (y,), out_ty=R.Tensor((16, 32), dtype="float32"))
            R.output(z)
        return z

    @R.function
    def main(x: R.Tensor((16, 32), dtype="float32")) -> R.Tensor((16, 32), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv: R.Tensor((16, 32), dtype="float32") = cls.fused_function(x)
            R.output(gv)
        return gv
