# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def fused(x: T.Buffer((T.int64(64),), "float32"), y: T.Buffer((T.int64(16),), "float32"), Sum_intermediate_1_2: T.Buffer((T.int64(1),), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        Sum_intermediate = T.sblock_alloc_buffer((T.int64(1),))
        Sum_intermediate_1 = T.sblock_alloc_buffer((T.int64(1),))
        for i in range(T.int64(64)):
            with T.sblock("sum"):
                vi = T.axis.reduce(T.int64(64), i)
                T.reads(x[vi])
                T.writes(Sum_intermediate[0])
                with T.init():
                    Sum_intermediate[0] = T.float32(0.0)
                Sum_intermediate[0] = Sum_intermediate[0] + x[vi]
        for i in range(T.int64(16)):
            with T.sblock("sum1"):
                vi = T.axis.reduce(T.int64(16), i)
                T.reads(y[vi])
                T.writes(Sum_intermediate_1[0])
                with T.init():
                    Sum_intermediate_1[0] = T.float32(0.0)
                Sum_intermediate_1[0] = Sum_intermediate_1[0] + y[vi]
        for i in range(T.int64(1)):
            with T.sblock("Out"):
                vi = T.axis.spatial(T.int64(1), i)
                T.reads(Sum_intermediate[vi], Sum_intermediate_1[vi])
                T.writes(Sum_intermediate_1_2[vi])
                Sum_intermediate_1_2[vi] = Sum_intermediate[vi] + Sum_intermediate_1[vi]

    @R.function
    def main(x: R.Tensor((64,), dtype="float32"), y: R.Tensor((16,), dtype="float32")) -> R.Tensor((1,), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv = R.call_tir(cls.fused, (x, y), out_ty=R.Tensor((1,), dtype="float32"))
            R.output(gv)
        return gv
