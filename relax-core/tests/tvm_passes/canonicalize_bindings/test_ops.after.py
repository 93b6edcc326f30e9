# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor, y: R.Tensor) -> R.Tensor:
        z: R.Tensor = R.add(y, x)
        gv3: R.Tensor = R.add(x, z)
        return gv3
