# from tvm.script import ir as I
# from tvm.script import relax as R
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func
    def relu(A: T.Buffer((2, 8), "float32"), B: T.Buffer((2, 8), "float32")):
        for i, j in T.grid(2, 8):
            with T.block("compute"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = T.max(A[vi, vj], T.float32(0.0))
