# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def apply(f: R.Callable((R.Tensor((2,), dtype="float32"),), R.Tensor((2,), dtype="float32"), True), x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        y: R.Tensor((2,), dtype="float32") = f(x)
        return y

    @R.function
    def double(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        y: R.Tensor((2,), dtype="float32") = R.add(x, x)
        return y

    @R.function
    def main(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        cls = Module
        f: R.Callable((R.Tensor((2,), dtype="float32"),), R.Tensor((2,), dtype="float32"), True) = cls.double
        y: R.Tensor((2,), dtype="float32") = cls.apply(f, x)
        z: R.Tensor((2,), dtype="float32") = cls.apply(cls.double, y)
        return z
