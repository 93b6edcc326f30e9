# from tvm.script import ir as I
# from tvm.script import relax as R
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("a", "b", "c"), dtype="float32"), y: R.Tensor(("c",), dtype="float32")) -> R.Tensor(("a", "b", "c"), dtype="float32"):
        a = T.int64()
        b = T.int64()
        c = T.int64()
        gv: R.Tensor((a, b, c), dtype="float32") = R.add(x, y)
        return gv
