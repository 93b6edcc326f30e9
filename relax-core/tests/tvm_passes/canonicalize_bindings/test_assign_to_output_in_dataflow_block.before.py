# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor) -> R.Tensor:
        with R.dataflow():
            y: R.Tensor = x
            z: R.Tensor = y
            o: R.Tensor = z
            p: R.Tensor = o
            m: R.Tensor = p
            n: R.Tensor = m
            R.output(n)
        return n
