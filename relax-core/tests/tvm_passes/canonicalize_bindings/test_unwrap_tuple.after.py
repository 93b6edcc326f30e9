# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor, y: R.Tensor) -> R.Tensor:
        tuple_var: R.Tuple(R.Tensor, R.Tensor) = x, y
        z: R.Tensor = R.add(x, y)
        gv4: R.Tensor = R.add(y, z)
        return gv4
