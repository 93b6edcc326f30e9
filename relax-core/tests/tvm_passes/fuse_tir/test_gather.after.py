# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def fused_func(input_ids: T.Buffer((T.int64(1),), "int32"), input_embeds: T.Buffer((T.int64(4096), T.int64(4096)), "float16"), T_take_intermediate: T.Buffer((T.int64(1), T.int64(4096)), "float16")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        Out_intermediate = T.sblock_alloc_buffer((T.int64(4096), T.int64(4096)), "float16")
        for i, j in T.grid(T.int64(4096), T.int64(4096)):
            with T.sblock("add"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(input_embeds[vi, vj])
                T.writes(Out_intermediate[vi, vj])
                Out_intermediate[vi, vj] = input_embeds[vi, vj] + T.float16(1.0)
        for ax0, ax1 in T.grid(T.int64(1), T.int64(4096)):
            with T.sblock("T_take"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(Out_intermediate[input_ids[v_ax0], v_ax1], input_ids[v_ax0])
                T.writes(T_take_intermediate[v_ax0, v_ax1])
                T_take_intermediate[v_ax0, v_ax1] = Out_intermediate[input_ids[v_ax0], v_ax1]

    @R.function
    def main(input_ids: R.Tensor((1,), dtype="int32"), input_embeds: R.Tensor((4096, 4096), dtype="float16")) -> R.Tensor((1, 4096), dtype="float16"):
        cls = Module
        with R.dataflow():
            gv = R.call_tir(cls.fused_func, (input_ids, input_embeds), out_ty=R.Tensor((1, 4096), dtype="float16"))
            R.output(gv)
        return gv
