# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main() -> R.Tensor((), dtype="int32"):
        with R.dataflow():
            n: R.Tensor((), dtype="int32") = R.const(1, "int32")
            R.output(n)
        return R.const(1, "int32")
