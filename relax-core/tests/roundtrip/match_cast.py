# from tvm.script import ir as I
# from tvm.script import relax as R
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(dtype="float32", ndim=2), s: R.Shape(ndim=2)) -> R.Tensor(dtype="float32", ndim=2):
        m = T.int64()
        k = T.int64()
        y: R.Tensor((m, 4), dtype="float32") = R.match_cast(x, R.Tensor((m, 4), dtype="float32"))
        z: R.Tensor((m, 4), dtype="float32") = R.add(y, y)
        t: R.Shape([k, m]) = R.match_cast(s, R.Shape([k, m]))
        o: R.Object = R.match_cast(z, R.Object)
        return z
