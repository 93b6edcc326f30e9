# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def fused_exp_add(x_0: T.Buffer((T.int64(10),), "float32"), x_1: T.Buffer((T.int64(10),), "float32"), T_add_intermediate: T.Buffer((T.int64(10),), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        compute_intermediate = T.sblock_alloc_buffer((T.int64(10),))
        for i0 in range(T.int64(10)):
            with T.sblock("compute"):
                v_i0 = T.axis.spatial(T.int64(10), i0)
                T.reads(x_0[v_i0])
                T.writes(compute_intermediate[v_i0])
                compute_intermediate[v_i0] = T.exp(x_0[v_i0])
        for ax0 in range(T.int64(10)):
            with T.sblock("T_add"):
                v_ax0 = T.axis.spatial(T.int64(10), ax0)
                T.reads(compute_intermediate[v_ax0], x_1[v_ax0])
                T.writes(T_add_intermediate[v_ax0])
                T_add_intermediate[v_ax0] = compute_intermediate[v_ax0] + x_1[v_ax0]

    @R.function
    def main(x: R.Tuple(R.Tensor((10,), dtype="float32"), R.Tensor((10,), dtype="float32"))) -> R.Tensor((10,), dtype="float32"):
        cls = Module
        with R.dataflow():
            lv: R.Tensor((10,), dtype="float32") = x[0]
            lv1: R.Tensor((10,), dtype="float32") = x[1]
            gv1 = R.call_tir(cls.fused_exp_add, (lv, lv1), out_ty=R.Tensor((10,), dtype="float32"))
            R.output(gv1)
        return gv1
