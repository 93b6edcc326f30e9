# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor((2, 3), dtype="float32"), b: R.Tensor((5,)), c: R.Tensor(dtype="int8", ndim=3), d: R.Tensor(ndim=2), e: R.Tensor(dtype="float16"), f: R.Tensor, g: R.Shape([1, 2]), h: R.Shape(ndim=4), i: R.Shape, j: R.Prim("float64"), k: R.Object, l: R.Tuple(R.Tensor((1,), dtype="bool"), R.Object), m: R.Tuple, n: R.Callable((R.Tensor((2, 3), dtype="float32"), R.Object), R.Tensor((2, 3), dtype="float32"), True), o: R.Callable((), R.Object, False), q: R.Tensor((), dtype="uint8")) -> R.Object:
        return k
