# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        x_1: R.Tensor((4,), dtype="float32") = R.add(x, x)
        x_2: R.Tensor((4,), dtype="float32") = R.multiply(x_1, x_1)
        with R.dataflow():
            x_3: R.Tensor((4,), dtype="float32") = R.exp(x_2)
            y: R.Tensor((4,), dtype="float32") = R.log(x_3)
            R.output(y)
        return y
