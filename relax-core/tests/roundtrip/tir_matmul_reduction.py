# from tvm.script import ir as I
# from tvm.script import relax as R
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def matmul(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 16), "float32"), C: T.Buffer((4, 16), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.sblock("root"):
        for i, j, k in T.grid(4, 16, 8):
            with T.sblock("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(C[vi, vj])
                with T.init():
                    C[vi, vj] = T.float32(0.0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
