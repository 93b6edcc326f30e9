# Not in TVM 0.27: a tensor annotation whose shape is a shape parameter (TVM does not
# define parameters before it reads the annotations).
# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(g: R.Shape([1, 2]), r: R.Tensor(g, dtype="float32")) -> R.Tensor(g, dtype="float32"):
        return r
