# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def fused_function(x: T.Buffer((T.int64(512),), "float32"), B: T.Buffer((T.int64(16),), "float32"), C: T.Buffer((T.int64(32),), "float32"), D_intermediate_1: T.Buffer((T.int64(512),), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        D_intermediate = T.sblock_alloc_buffer((T.int64(512),))
        for i, j in T.grid(T.int64(16), T.int64(32)):
            with T.sblock("compute"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(x[vi * T.int64(32) + vj], B[vi], C[vj])
                T.writes(D_intermediate[vi * T.int64(32) + vj])
                D_intermediate[vi * T.int64(32) + vj] = x[vi * T.int64(32) + vj] * B[vi] + C[vj]
        for i, j in T.grid(T.int64(16), T.int64(32)):
            with T.sblock("compute1"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(D_intermediate[vi * T.int64(32) + vj], B[vi], C[vj])
                T.writes(D_intermediate_1[vi * T.int64(32) + vj])
                D_intermediate_1[vi * T.int64(32) + vj] = D_intermediate[vi * T.int64(32) + vj] * B[vi] + C[vj]

    @R.function
    def main(x: R.Tensor((512,), dtype="float32"), B: R.Tensor((16,), dtype="float32"), C: R.Tensor((32,), dtype="float32")) -> R.Tensor((512,), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv = R.call_tir(cls.fused_function, (x, B, C), out_ty=R.Tensor((512,), dtype="float32"))
            R.output(gv)
        return gv
