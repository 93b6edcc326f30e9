# from tvm.script import ir as I
# from tvm.script import relax as R
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def relu(A: T.Buffer((2, 8), "float32"), B: T.Buffer((2, 8), "float32")):
        # with T.sblock("root"):
        for i, j in T.grid(2, 8):
            with T.sblock("compute"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = T.max(A[vi, vj], T.float32(0.0))
