# from tvm.script import ir as I
# from tvm.script import relax as R
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def clip_pad(A: T.Buffer((8,), "float32"), B: T.Buffer((10,), "float32")):
        # with T.sblock("root"):
        for i in range(10):
            if 1 <= i and i < 9:
                if A[i - 1] < T.float32(0.0):
                    B[i] = T.float32(0.0)
                else:
                    B[i] = T.min(A[i - 1], T.float32(6.0))
            else:
                B[i] = T.Select(i == 0, T.float32(-1.0), T.float32(1.0))
        for i_1 in range(10):
            with T.sblock("shift"):
                vi = T.axis.spatial(10, i_1)
                T.reads(A[0:8])
                T.writes(B[vi])
                B[vi] = T.if_then_else(vi >= 1 and vi < 9, A[vi - 1], B[vi])
