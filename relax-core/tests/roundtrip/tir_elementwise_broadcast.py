# from tvm.script import ir as I
# from tvm.script import relax as R
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def add(A: T.Buffer((4, 3), "float32"), B: T.Buffer((3,), "float32"), C: T.Buffer((4, 3), "float32")):
        T.func_attr({"op_pattern": 1, "tir.noalias": True})
        # with T.sblock("root"):
        for ax0, ax1 in T.grid(4, 3):
            with T.sblock("T_add"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(A[v_ax0, v_ax1], B[v_ax1])
                T.writes(C[v_ax0, v_ax1])
                C[v_ax0, v_ax1] = A[v_ax0, v_ax1] + B[v_ax1]

    @R.function
    def main(x: R.Tensor((4, 3), dtype="float32"), y: R.Tensor((3,), dtype="float32")) -> R.Tensor((4, 3), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv: R.Tensor((4, 3), dtype="float32") = R.call_tir(cls.add, (x, y), out_ty=R.Tensor((4, 3), dtype="float32"))
            R.output(gv)
        return gv
