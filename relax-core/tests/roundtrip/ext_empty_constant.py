# Not in TVM 0.27: a constant with no elements and a shape of rank two or more (TVM's
# R.const takes a nested list, which cannot give that shape).
# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main() -> R.Tensor((0, 3), dtype="float32"):
        t: R.Tensor((0, 3), dtype="float32") = metadata["relax.expr.Constant"][0]
        return t

metadata = {
    "relax.expr.Constant": [
        R.const([], "float32", shape=(0, 3)),
    ],
}
