# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        x: R.Tensor((4,), dtype="float32") = R.add(x, x)
        x: R.Tensor((4,), dtype="float32") = R.multiply(x, x)
        with R.dataflow():
            x: R.Tensor((4,), dtype="float32") = R.exp(x)
            y: R.Tensor((4,), dtype="float32") = R.log(x)
            R.output(y)
        return y
