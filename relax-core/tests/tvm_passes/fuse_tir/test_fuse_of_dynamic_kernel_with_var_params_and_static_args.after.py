# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def fused_function(x: T.Buffer((T.int64(16), T.int64(32)), "float32"), B_intermediate_1: T.Buffer((T.int64(16), T.int64(32)), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        B_intermediate = T.sblock_alloc_buffer((T.int64(16), T.int64(32)))
        for iters_0, iters_1 in T.grid(T.int64(16), T.int64(32)):
            with T.sblock("compute"):
                i, j = T.axis.remap("SS", [iters_0, iters_1])
                T.reads(x[i, j])
                T.writes(B_intermediate[i, j])
                B_intermediate[i, j] = x[i, j] * T.Cast("float32", i) + T.Cast("float32", j)
        for iters_0, iters_1 in T.grid(T.int64(16), T.int64(32)):
            with T.sblock("compute1"):
                i, j = T.axis.remap("SS", [iters_0, iters_1])
                T.reads(B_intermediate[i, j])
                T.writes(B_intermediate_1[i, j])
                B_intermediate_1[i, j] = B_intermediate[i, j] * T.Cast("float32", i) + T.Cast("float32", j)

    @R.function
    def main(x: R.Tensor((16, 32), dtype="float32")) -> R.Tensor((16, 32), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv = R.call_tir(cls.fused_function, (x,), out_ty=R.Tensor((16, 32), dtype="float32"))
            R.output(gv)
        return gv
