# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main() -> R.Tensor((), dtype="int32"):
        with R.dataflow():
            x: R.Tensor((), dtype="int32") = R.const(1, "int32")
            y: R.Tensor((), dtype="int32") = R.const(1, "int32")
            z: R.Tensor((), dtype="int32") = R.const(1, "int32")
            l: R.Tensor((), dtype="int32") = x
            m: R.Tensor((), dtype="int32") = y
            n: R.Tensor((), dtype="int32") = z
            R.output(l, m, n)
        return n
