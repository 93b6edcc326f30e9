# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function(pure=False)
    def main(x: R.Tensor((8,), dtype="float32")) -> R.Tensor((8,), dtype="float32"):
        with R.dataflow():
            lv: R.Tensor((8,), dtype="float32") = R.exp(x)
            gv: R.Tensor((8,), dtype="float32") = R.add(lv, x)
            R.output(gv)
        y: R.Tensor((8,), dtype="float32") = R.call_packed("side_effect", gv, ty_args=(R.Tensor((8,), dtype="float32"),))
        z: R.Tensor((8,), dtype="float32") = R.multiply(y, y)
        with R.dataflow():
            lv1: R.Tensor((8,), dtype="float32") = R.sqrt(z)
            gv1: R.Tensor((8,), dtype="float32") = R.tanh(lv1)
            gv2: R.Tensor((8,), dtype="float32") = R.sigmoid(gv1)
            R.output(gv1, gv2)
        w: R.Tensor((8,), dtype="float32") = R.maximum(gv1, gv2)
        return w
