# from tvm.script import ir as I
# from tvm.script import relax as R
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @R.function(private=True)
    def closure_pure(a: R.Tensor((3,), dtype="int64")) -> R.Callable((R.Tensor((3,), dtype="int64"),), R.Tensor((3,), dtype="int64"), False):
        @R.function(pure=False)
        def add_a(b: R.Tensor((3,), dtype="int64")) -> R.Tensor((3,), dtype="int64"):
            c: R.Tensor((3,), dtype="int64") = R.add(a, b)
            return c
        return add_a

    @R.function
    def main(x: R.Tensor(("n",), dtype="float32")) -> R.Tensor(("n",), dtype="float32"):
        n = T.int64()
        n_1 = T.int64()
        @R.function
        def inner(y: R.Tensor(("n_1",), dtype="float32")) -> R.Tensor(("n_1",), dtype="float32"):
            z: R.Tensor((n_1,), dtype="float32") = R.add(x, y)
            return z
        r: R.Tensor((n,), dtype="float32") = inner(x)
        return r
