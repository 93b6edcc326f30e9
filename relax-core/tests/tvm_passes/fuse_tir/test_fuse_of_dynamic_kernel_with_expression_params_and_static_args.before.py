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
    def dynamic_tir_kernel(A: T.Buffer(("m * n",), "float32"), B: T.Buffer((m,), "float32"), C: T.Buffer((n,), "float32"), D: T.Buffer(("m * n",), "float32")):
        # with T.sblock("root"):
        for i, j in T.grid(m, n):
            with T.sblock("compute"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi * T.int64(32) + vj], B[vi], C[vj])
                T.writes(D[vi * T.int64(32) + vj])
                D[vi * T.int64(32) + vj] = A[vi * T.int64(32) + vj] * B[vi] + C[vj]

    @R.function(private=True)
    def fused_function(x: R.Tensor((512,), dtype="float32"), B: R.Tensor((16,), dtype="float32"), C: R.Tensor((32,), dtype="float32")) -> R.Tensor((512,), dtype="float32"):
        R.func_attr({"Primitive": True})
        cls = Module
        with R.dataflow():
            y = R.call_tir(cls.dynamic_tir_kernel, (x, B, C), out_ty=R.Tensor((512,), dtype="float32"))
            z = R.call_tir(cls.dynamic_tir_kernel, (y, B, C), out_ty=R.Tensor((512,), dtype="float32"))
            R.output(z)
        return z

    @R.function
    def main(x: R.Tensor((512,), dtype="float32"), B: R.Tensor((16,), dtype="float32"), C: R.Tensor((32,), dtype="float32")) -> R.Tensor((512,), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv: R.Tensor((512,), dtype="float32") = cls.fused_function(x, B, C)
            R.output(gv)
        return gv
