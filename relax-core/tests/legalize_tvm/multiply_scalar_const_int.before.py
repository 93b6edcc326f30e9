# from tvm.script import ir as I
# from tvm.script import relax as R
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 4), dtype="int32")) -> R.Tensor(("n", 4), dtype="int32"):
        n = T.int64()
        gv: R.Tensor((n, 4), dtype="int32") = R.multiply(x, R.const(3, "int32"))
        return gv
