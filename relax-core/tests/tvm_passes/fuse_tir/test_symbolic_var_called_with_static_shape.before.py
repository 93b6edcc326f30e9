# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

num_elements = TypeVar("num_elements")
@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def sum_1d(X: T.Buffer((num_elements,), "float32"), Y: T.Buffer((T.int64(1),), "float32")):
        # with T.sblock("root"):
        for i in range(num_elements):
            with T.sblock("sum"):
                vi = T.axis.reduce(num_elements, i)
                T.reads(X[vi])
                T.writes(Y[0])
                with T.init():
                    Y[0] = T.float32(0.0)
                Y[0] = Y[0] + X[vi]

    @R.function(private=True)
    def fused(x: R.Tensor((64,), dtype="float32")) -> R.Tensor((1,), dtype="float32"):
        R.func_attr({"Primitive": True})
        cls = Module
        with R.dataflow():
            gv = R.call_tir(cls.sum_1d, (x,), out_ty=R.Tensor((1,), dtype="float32"))
            R.output(gv)
        return gv

    @R.function
    def main(x: R.Tensor((64,), dtype="float32")) -> R.Tensor((1,), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv: R.Tensor((1,), dtype="float32") = cls.fused(x)
            R.output(gv)
        return gv
