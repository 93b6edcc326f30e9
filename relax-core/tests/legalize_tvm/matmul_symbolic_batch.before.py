# from tvm.script import ir as I
# from tvm.script import relax as R
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("b", 3, 4), dtype="float32"), y: R.Tensor((4, 5), dtype="float32")) -> R.Tensor(("b", 3, 5), dtype="float32"):
        b = T.int64()
        gv: R.Tensor((b, 3, 5), dtype="float32") = R.matmul(x, y)
        return gv
