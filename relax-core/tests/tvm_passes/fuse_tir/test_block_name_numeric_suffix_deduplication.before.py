# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def add1(x: T.Buffer((10,), "float32"), y: T.Buffer((10,), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for i in range(10):
            with T.sblock("compute1"):
                vi = T.axis.spatial(10, i)
                T.reads(x[vi])
                T.writes(y[vi])
                y[vi] = x[vi] + T.float32(1.0)

    @T.prim_func(private=True, s_tir=True)
    def mul1(x: T.Buffer((10,), "float32"), y: T.Buffer((10,), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for i in range(10):
            with T.sblock("compute1"):
                vi = T.axis.spatial(10, i)
                T.reads(x[vi])
                T.writes(y[vi])
                y[vi] = x[vi] * T.float32(2.0)

    @R.function(private=True)
    def fused_add_mul(x: R.Tensor((10,), dtype="float32")) -> R.Tensor((10,), dtype="float32"):
        R.func_attr({"Primitive": True})
        cls = Module
        with R.dataflow():
            lv1 = R.call_tir(cls.add1, (x,), out_ty=R.Tensor((10,), dtype="float32"))
            lv2 = R.call_tir(cls.mul1, (lv1,), out_ty=R.Tensor((10,), dtype="float32"))
            R.output(lv2)
        return lv2

    @R.function
    def main(x: R.Tensor((10,), dtype="float32")) -> R.Tensor((10,), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv: R.Tensor((10,), dtype="float32") = cls.fused_add_mul(x)
            R.output(gv)
        return gv
