# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def fused_concatenate_transpose2(inp_0: T.Buffer((T.int64(1), T.int64(4), T.int64(64), T.int64(64)), "float32"), T_transpose_intermediate: T.Buffer((T.int64(2), T.int64(64), T.int64(64), T.int64(4)), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        T_concat_intermediate = T.sblock_alloc_buffer((T.int64(2), T.int64(4), T.int64(64), T.int64(64)))
        for ax0, ax1, ax2, ax3 in T.grid(T.int64(2), T.int64(4), T.int64(64), T.int64(64)):
            with T.sblock("T_concat"):
                v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
                T.reads(inp_0[v_ax0 - T.int64(1), v_ax1, v_ax2, v_ax3])
                T.writes(T_concat_intermediate[v_ax0, v_ax1, v_ax2, v_ax3])
                T_concat_intermediate[v_ax0, v_ax1, v_ax2, v_ax3] = T.if_then_else(T.int64(1) <= v_ax0, inp_0[v_ax0 - T.int64(1), v_ax1, v_ax2, v_ax3], inp_0[v_ax0, v_ax1, v_ax2, v_ax3])
        for ax0, ax1, ax2, ax3 in T.grid(T.int64(2), T.int64(64), T.int64(64), T.int64(4)):
            with T.sblock("T_transpose"):
                v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
                T.reads(T_concat_intermediate[v_ax0, v_ax3, v_ax1, v_ax2])
                T.writes(T_transpose_intermediate[v_ax0, v_ax1, v_ax2, v_ax3])
                T_transpose_intermediate[v_ax0, v_ax1, v_ax2, v_ax3] = T_concat_intermediate[v_ax0, v_ax3, v_ax1, v_ax2]

    @R.function
    def main(inp_0: R.Tensor((1, 4, 64, 64), dtype="float32")) -> R.Tensor((2, 64, 64, 4), dtype="float32"):
        R.func_attr({"num_input": 3})
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.fused_concatenate_transpose2, (inp_0,), out_ty=R.Tensor((2, 64, 64, 4), dtype="float32"))
            R.output(lv)
        return lv
