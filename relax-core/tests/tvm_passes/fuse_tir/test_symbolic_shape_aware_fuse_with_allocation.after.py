# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def fused_mean_add_tir_sqrt_divide_multiply(x: T.Buffer((T.int64(1), n, T.int64(4096)), "float32"), y: T.Buffer((T.int64(1), n, T.int64(4096)), "float32"), rms_norm_weight: T.Buffer((T.int64(4096),), "float32"), T_multiply_intermediate: T.Buffer((T.int64(1), n, T.int64(4096)), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        x_red = T.sblock_alloc_buffer((T.int64(1), n, T.int64(1)))
        T_divide_intermediate = T.sblock_alloc_buffer((T.int64(1), n, T.int64(1)))
        T_add_intermediate = T.sblock_alloc_buffer((T.int64(1), n, T.int64(1)))
        compute_intermediate = T.sblock_alloc_buffer((T.int64(1), n, T.int64(1)))
        T_divide_intermediate_1 = T.sblock_alloc_buffer((T.int64(1), n, T.int64(4096)))
        for ax0, ax1, ax2, k2 in T.grid(T.int64(1), n, T.int64(1), T.int64(4096)):
            with T.sblock("x_red"):
                v_ax0, v_ax1, v_ax2, v_k2 = T.axis.remap("SSSR", [ax0, ax1, ax2, k2])
                T.reads(x[v_ax0, v_ax1, v_k2])
                T.writes(x_red[v_ax0, v_ax1, v_ax2])
                with T.init():
                    x_red[v_ax0, v_ax1, v_ax2] = T.float32(0.0)
                x_red[v_ax0, v_ax1, v_ax2] = x_red[v_ax0, v_ax1, v_ax2] + x[v_ax0, v_ax1, v_k2]
        for ax0, ax1, ax2 in T.grid(T.int64(1), n, T.int64(1)):
            with T.sblock("T_divide"):
                v_ax0, v_ax1, v_ax2 = T.axis.remap("SSS", [ax0, ax1, ax2])
                T.reads(x_red[v_ax0, v_ax1, v_ax2])
                T.writes(T_divide_intermediate[v_ax0, v_ax1, v_ax2])
                T_divide_intermediate[v_ax0, v_ax1, v_ax2] = x_red[v_ax0, v_ax1, v_ax2] / T.float32(4096.0)
        for ax0, ax1, ax2 in T.grid(T.int64(1), n, T.int64(1)):
            with T.sblock("T_add"):
                v_ax0, v_ax1, v_ax2 = T.axis.remap("SSS", [ax0, ax1, ax2])
                T.reads(T_divide_intermediate[v_ax0, v_ax1, v_ax2])
                T.writes(T_add_intermediate[v_ax0, v_ax1, v_ax2])
                T_add_intermediate[v_ax0, v_ax1, v_ax2] = T_divide_intermediate[v_ax0, v_ax1, v_ax2] + T_divide_intermediate[v_ax0, v_ax1, v_ax2]
        for i0, i1, i2 in T.grid(T.int64(1), n, T.int64(1)):
            with T.sblock("compute"):
                v_i0, v_i1, v_i2 = T.axis.remap("SSS", [i0, i1, i2])
                T.reads(T_add_intermediate[v_i0, v_i1, v_i2])
                T.writes(compute_intermediate[v_i0, v_i1, v_i2])
                compute_intermediate[v_i0, v_i1, v_i2] = T.sqrt(T_add_intermediate[v_i0, v_i1, v_i2])
        for ax0, ax1, ax2 in T.grid(T.int64(1), n, T.int64(4096)):
            with T.sblock("T_divide1"):
                v_ax0, v_ax1, v_ax2 = T.axis.remap("SSS", [ax0, ax1, ax2])
                T.reads(y[v_ax0, v_ax1, v_ax2], compute_intermediate[v_ax0, v_ax1, T.int64(0)])
                T.writes(T_divide_intermediate_1[v_ax0, v_ax1, v_ax2])
                T_divide_intermediate_1[v_ax0, v_ax1, v_ax2] = y[v_ax0, v_ax1, v_ax2] / compute_intermediate[v_ax0, v_ax1, T.int64(0)]
        for ax0, ax1, ax2 in T.grid(T.int64(1), n, T.int64(4096)):
            with T.sblock("T_multiply"):
                v_ax0, v_ax1, v_ax2 = T.axis.remap("SSS", [ax0, ax1, ax2])
                T.reads(rms_norm_weight[v_ax2], T_divide_intermediate_1[v_ax0, v_ax1, v_ax2])
                T.writes(T_multiply_intermediate[v_ax0, v_ax1, v_ax2])
                T_multiply_intermediate[v_ax0, v_ax1, v_ax2] = rms_norm_weight[v_ax2] * T_divide_intermediate_1[v_ax0, v_ax1, v_ax2]

    @R.function
    def main(x: R.Tensor((1, n, 4096), dtype="float32"), y: R.Tensor((1, n, 4096), dtype="float32"), rms_norm_weight: R.Tensor((4096,), dtype="float32")) -> R.Tensor((1, n, 4096), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv = R.call_tir(cls.fused_mean_add_tir_sqrt_divide_multiply, (x, y, rms_norm_weight), out_ty=R.Tensor((1, n, 4096), dtype="float32"))
            R.output(gv)
        return gv
