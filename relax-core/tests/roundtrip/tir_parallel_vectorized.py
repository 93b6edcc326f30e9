# from tvm.script import ir as I
# from tvm.script import relax as R
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func
    def scale(A: T.Buffer((64, 16), "float32"), B: T.Buffer((64, 16), "float32")):
        for i in T.parallel(64):
            for j in T.vectorized(16):
                B[i, j] = A[i, j] * T.float32(2.0) + T.float32(1.0)
        for k in T.unroll(4):
            for i_1 in T.serial(2, 6):
                B[i_1, k] = T.Cast("float32", i_1 * 4 + k) / T.float32(3.0)
        for t in T.parallel(1, 5):
            B[t, 0] = T.exp(A[t, 0]) - T.sqrt(T.fabs(A[t, 1]))
