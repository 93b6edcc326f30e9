# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def fused_sums(x: T.Buffer((T.int64(10), T.int64(20)), "float32"), p0: T.Buffer((), "float32"), Out_intermediate: T.Buffer((T.int64(10), T.int64(20)), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for ax0, ax1 in T.grid(T.int64(10), T.int64(20)):
            with T.sblock("T_add"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(x[v_ax0, v_ax1], p0[()])
                T.writes(Out_intermediate[v_ax0, v_ax1])
                Out_intermediate[v_ax0, v_ax1] = x[v_ax0, v_ax1] + p0[()]
        for ax0, ax1 in T.grid(T.int64(10), T.int64(20)):
            with T.sblock("T_add1"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(x[v_ax0, v_ax1], p0[()])
                T.writes(Out_intermediate[v_ax0, v_ax1])
                Out_intermediate[v_ax0, v_ax1] = x[v_ax0, v_ax1] + p0[()]
        for ax0, ax1 in T.grid(T.int64(10), T.int64(20)):
            with T.sblock("T_add2"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(x[v_ax0, v_ax1], p0[()])
                T.writes(Out_intermediate[v_ax0, v_ax1])
                Out_intermediate[v_ax0, v_ax1] = x[v_ax0, v_ax1] + p0[()]

    @R.function
    def main(x: R.Tensor((10, 20), dtype="float32"), p0: R.Tensor((), dtype="float32")) -> R.Tensor((10, 20), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv1 = R.call_tir(cls.fused_sums, (x, p0), out_ty=R.Tensor((10, 20), dtype="float32"))
            R.output(gv1)
        return gv1
