# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def add(A: T.Buffer((T.int64(10), T.int64(20)), "float32"), B: T.Buffer((), "float32"), Out: T.Buffer((T.int64(10), T.int64(20)), "float32")):
        T.func_attr({"op_pattern": 0, "tirx.noalias": True})
        # with T.sblock("root"):
        for ax0, ax1 in T.grid(T.int64(10), T.int64(20)):
            with T.sblock("T_add"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(A[v_ax0, v_ax1], B[()])
                T.writes(Out[v_ax0, v_ax1])
                Out[v_ax0, v_ax1] = A[v_ax0, v_ax1] + B[()]

    @T.prim_func(private=True, s_tir=True)
    def exp_inplace(A: T.Buffer((T.int64(10), T.int64(20)), "float32")):
        T.func_attr({"op_pattern": 0, "tirx.noalias": True})
        # with T.sblock("root"):
        for i0, i1 in T.grid(T.int64(10), T.int64(20)):
            with T.sblock("compute"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(A[v_i0, v_i1])
                T.writes(A[v_i0, v_i1])
                A[v_i0, v_i1] = T.exp(A[v_i0, v_i1])

    @T.prim_func(private=True, s_tir=True)
    def squeeze_inplace(A: T.Buffer((T.int64(10), T.int64(20)), "float32")):
        T.func_attr({"op_pattern": 0, "tirx.noalias": True})
        # with T.sblock("root"):
        for ax0, ax1 in T.grid(T.int64(10), T.int64(20)):
            with T.sblock("T_squeeze"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(A[v_ax0, v_ax1])
                T.writes(A[v_ax0, v_ax1])
                A[v_ax0, v_ax1] = A[v_ax0, v_ax1]

    @R.function(private=True)
    def fused_add_exp_inplace_squeeze_inplace(x: R.Tensor((10, 20), dtype="float32"), p0: R.Tensor((), dtype="float32")) -> R.Tensor((10, 20), dtype="float32"):
        R.func_attr({"Primitive": True})
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.add, (x, p0), out_ty=R.Tensor((10, 20), dtype="float32"))
            lv1: R.Tensor((10, 20), dtype="float32") = R.call_tir_inplace(cls.exp_inplace, (lv,), out_ty=R.Tensor((10, 20), dtype="float32"), inplace_indices=[0])
            gv: R.Tensor((10, 20), dtype="float32") = R.call_tir_inplace(cls.squeeze_inplace, (lv1,), out_ty=R.Tensor((10, 20), dtype="float32"), inplace_indices=[0])
            R.output(gv)
        return gv

    @R.function
    def main(x: R.Tensor((10, 20), dtype="float32"), p0: R.Tensor((), dtype="float32")) -> R.Tensor((10, 20), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv: R.Tensor((10, 20), dtype="float32") = cls.fused_add_exp_inplace_squeeze_inplace(x, p0)
            R.output(gv)
        return gv
