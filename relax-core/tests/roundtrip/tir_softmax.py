# from tvm.script import ir as I
# from tvm.script import relax as R
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def softmax(A: T.Buffer((2, 5), "float32"), T_softmax: T.Buffer((2, 5), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.sblock("root"):
        maxelem = T.alloc_buffer((2,))
        expsum = T.alloc_buffer((2,))
        for i0, k in T.grid(2, 5):
            with T.sblock("maxelem"):
                v_i0, v_k = T.axis.remap("SR", [i0, k])
                T.reads(A[v_i0, v_k])
                T.writes(maxelem[v_i0])
                with T.init():
                    maxelem[v_i0] = T.float32(-3.4028234663852886e38)
                maxelem[v_i0] = T.max(maxelem[v_i0], A[v_i0, v_k])
        for i0_1, k_1 in T.grid(2, 5):
            with T.sblock("expsum"):
                v_i0_1, v_k_1 = T.axis.remap("SR", [i0_1, k_1])
                T.reads(A[v_i0_1, v_k_1], maxelem[v_i0_1])
                T.writes(expsum[v_i0_1])
                with T.init():
                    expsum[v_i0_1] = T.float32(0.0)
                expsum[v_i0_1] = expsum[v_i0_1] + T.exp(A[v_i0_1, v_k_1] - maxelem[v_i0_1])
        for i0_2, i1 in T.grid(2, 5):
            with T.sblock("norm"):
                v_i0_2, v_i1 = T.axis.remap("SS", [i0_2, i1])
                T.reads(A[v_i0_2, v_i1], maxelem[v_i0_2], expsum[v_i0_2])
                T.writes(T_softmax[v_i0_2, v_i1])
                T_softmax[v_i0_2, v_i1] = T.exp(A[v_i0_2, v_i1] - maxelem[v_i0_2]) / expsum[v_i0_2]
