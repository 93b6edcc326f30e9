# from tvm.script import ir as I
# from tvm.script import relax as R
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 2), dtype="float32")) -> R.Tensor((2, 2), dtype="float32"):
        cls = Module
        with R.dataflow():
            lv: R.Tuple(R.Tensor((2, 2), dtype="float32"), R.Tensor((2, 2), dtype="float32")) = R.call_tir(cls.split, (x,), out_ty=[R.Tensor((2, 2), dtype="float32"), R.Tensor((2, 2), dtype="float32")])
            lv1: R.Tensor((2, 2), dtype="float32") = lv[0]
            lv2: R.Tensor((2, 2), dtype="float32") = lv[1]
            gv: R.Tensor((2, 2), dtype="float32") = R.add(lv1, lv2)
            R.output(gv)
        return gv

    @T.prim_func
    def split(A: T.Buffer((4, 2), "float32"), B: T.Buffer((2, 2), "float32"), C: T.Buffer((2, 2), "float32")):
        T.evaluate(0)
