# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import relax as R
# from tvm.script import tirx as T

n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def add_n(A: T.Buffer((n, 4), "float32"), B: T.Buffer((n, 4), "float32"), C: T.Buffer((n, 4), "float32")):
        # with T.sblock("root"):
        for i, j in T.grid(n, 4):
            with T.sblock("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj], B[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = A[vi, vj] + B[vi, vj]

    @R.function
    def main(x: R.Tensor(("n", 4), dtype="float32")) -> R.Tensor(("n", 4), dtype="float32"):
        cls = Module
        n = T.int64()
        with R.dataflow():
            gv: R.Tensor((n, 4), dtype="float32") = R.call_tir(cls.add_n, (x, x), out_ty=R.Tensor((n, 4), dtype="float32"))
            R.output(gv)
        return gv

    @T.prim_func(private=True, s_tir=True)
    def tile_sum(A: T.Buffer(("m * 4",), "float32"), B: T.Buffer(("m",), "float32"), m: T.int64):
        # with T.sblock("root"):
        for i in range(m):
            with T.sblock("B"):
                vi = T.axis.spatial(m, i)
                T.reads(A[vi * 4:vi * 4 + 4])
                T.writes(B[vi])
                tmp: T.float32 = A[vi * 4] + A[vi * 4 + 1]
                B[vi] = tmp + A[vi * 4 + 2] + A[vi * 4 + 3]
