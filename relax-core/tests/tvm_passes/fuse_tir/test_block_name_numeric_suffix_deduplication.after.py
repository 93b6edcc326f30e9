# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def fused_add_mul(x: T.Buffer((T.int64(10),), "float32"), y_intermediate_1: T.Buffer((T.int64(10),), "float32", elem_offset=0)):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        y_intermediate = T.sblock_alloc_buffer((T.int64(10),), elem_offset=0)
        for i in range(10):
            with T.sblock("compute1"):
                vi = T.axis.spatial(10, i)
                T.reads(x[vi])
                T.writes(y_intermediate[vi])
                y_intermediate[vi] = x[vi] + T.float32(1.0)
        for i in range(10):
            with T.sblock("compute2"):
                vi = T.axis.spatial(10, i)
                T.reads(y_intermediate[vi])
                T.writes(y_intermediate_1[vi])
                y_intermediate_1[vi] = y_intermediate[vi] * T.float32(2.0)

    @R.function
    def main(x: R.Tensor((10,), dtype="float32")) -> R.Tensor((10,), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv = R.call_tir(cls.fused_add_mul, (x,), out_ty=R.Tensor((10,), dtype="float32"))
            R.output(gv)
        return gv
