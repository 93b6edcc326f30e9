# from tvm.script import ir as I
# from tvm.script import relax as R
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def fused_matmul_add(x: T.Buffer((1, 8), "float32"), w: T.Buffer((8, 4), "float32"), b: T.Buffer((4,), "float32"), T_add: T.Buffer((1, 4), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.sblock("root"):
        T_matmul_NN = T.alloc_buffer((1, 4))
        for i, j, k in T.grid(1, 4, 8):
            with T.sblock("T_matmul_NN"):
                v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                T.reads(x[v_i, v_k], w[v_k, v_j])
                T.writes(T_matmul_NN[v_i, v_j])
                with T.init():
                    T_matmul_NN[v_i, v_j] = T.float32(0.0)
                T_matmul_NN[v_i, v_j] = T_matmul_NN[v_i, v_j] + x[v_i, v_k] * w[v_k, v_j]
        for ax0, ax1 in T.grid(1, 4):
            with T.sblock("T_add"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(T_matmul_NN[v_ax0, v_ax1], b[v_ax1])
                T.writes(T_add[v_ax0, v_ax1])
                T_add[v_ax0, v_ax1] = T_matmul_NN[v_ax0, v_ax1] + b[v_ax1]

    @T.prim_func(s_tir=True)
    def row_sum(A: T.Buffer((4, 16), "float32"), B: T.Buffer((4,), "float32")):
        # with T.sblock("root"):
        acc = T.alloc_buffer((4,))
        for i in range(4):
            with T.sblock("init"):
                vi = T.axis.spatial(4, i)
                T.reads()
                T.writes(acc[vi])
                acc[vi] = T.float32(0.0)
        for i_1, k in T.grid(4, 16):
            with T.sblock("acc"):
                vi_1, vk = T.axis.remap("SR", [i_1, k])
                T.reads(acc[vi_1], A[vi_1, vk])
                T.writes(acc[vi_1])
                acc[vi_1] = acc[vi_1] + A[vi_1, vk]
        for i_2 in range(4):
            with T.sblock("out"):
                vi_2 = T.axis.spatial(4, i_2)
                T.reads(acc[vi_2])
                T.writes(B[vi_2])
                B[vi_2] = acc[vi_2]
