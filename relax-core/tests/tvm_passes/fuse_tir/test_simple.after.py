# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

@I.ir_module
class Module:
    I.module_attrs({"foo": "bar"})
    @T.prim_func(private=True, s_tir=True)
    def fused_add_exp_squeeze(x: T.Buffer((T.int64(10), T.int64(20)), "float32"), p0: T.Buffer((), "float32"), T_squeeze_intermediate: T.Buffer((T.int64(10), T.int64(20)), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        T_add_intermediate = T.sblock_alloc_buffer((T.int64(10), T.int64(20)))
        compute_intermediate = T.sblock_alloc_buffer((T.int64(10), T.int64(20)))
        for ax0, ax1 in T.grid(T.int64(10), T.int64(20)):
            with T.sblock("T_add"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(x[v_ax0, v_ax1], p0[()])
                T.writes(T_add_intermediate[v_ax0, v_ax1])
                T_add_intermediate[v_ax0, v_ax1] = x[v_ax0, v_ax1] + p0[()]
        for i0, i1 in T.grid(T.int64(10), T.int64(20)):
            with T.sblock("compute"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(T_add_intermediate[v_i0, v_i1])
                T.writes(compute_intermediate[v_i0, v_i1])
                compute_intermediate[v_i0, v_i1] = T.exp(T_add_intermediate[v_i0, v_i1])
        for ax0, ax1 in T.grid(T.int64(10), T.int64(20)):
            with T.sblock("T_squeeze"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(compute_intermediate[v_ax0, v_ax1])
                T.writes(T_squeeze_intermediate[v_ax0, v_ax1])
                T_squeeze_intermediate[v_ax0, v_ax1] = compute_intermediate[v_ax0, v_ax1]

    @R.function
    def main(x: R.Tensor((10, 20), dtype="float32"), p0: R.Tensor((), dtype="float32")) -> R.Tensor((10, 20), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv1 = R.call_tir(cls.fused_add_exp_squeeze, (x, p0), out_ty=R.Tensor((10, 20), dtype="float32"))
            R.output(gv1)
        return gv1
