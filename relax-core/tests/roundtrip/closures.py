# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def adder(a: R.Tensor((4,), dtype="float32")) -> R.Callable((R.Tensor((4,), dtype="float32"),), R.Tensor((4,), dtype="float32"), True):
        cls = Module
        add_a: R.Callable((R.Tensor((4,), dtype="float32"),), R.Tensor((4,), dtype="float32"), True) = R.make_closure(cls.adder_add_a, (a,))
        return add_a

    @R.function(private=True)
    def adder_add_a(a: R.Tensor((4,), dtype="float32"), b: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        c: R.Tensor((4,), dtype="float32") = R.add(a, b)
        return c

    @R.function(pure=False)
    def main(x: R.Tensor((4,), dtype="float32"), y: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        cls = Module
        f: R.Callable((R.Tensor((4,), dtype="float32"),), R.Tensor((4,), dtype="float32"), True) = cls.adder(x)
        z: R.Tensor((4,), dtype="float32") = R.invoke_closure(f, (y,), ty_args=(R.Tensor((4,), dtype="float32"),))
        return z
