# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor) -> R.Tensor:
        y: R.Tensor = x
        z: R.Tensor = y
        q: R.Tensor = z
        p: R.Tensor = q
        o: R.Tensor = p
        return o
