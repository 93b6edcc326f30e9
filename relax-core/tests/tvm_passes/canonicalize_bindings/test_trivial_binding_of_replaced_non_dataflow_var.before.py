# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(param_tuple: R.Tuple(R.Tensor)) -> R.Tensor:
        with R.dataflow():
            A: R.Tensor = param_tuple[0]
            B: R.Tensor = A
            C: R.Tensor = R.add(A, B)
            R.output(A, B, C)
        return C
