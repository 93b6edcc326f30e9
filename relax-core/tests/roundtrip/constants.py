# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main() -> R.Tuple(R.Tensor((), dtype="float32"), R.Tensor((2,), dtype="int64"), R.Tensor((2, 2), dtype="bool"), R.Tensor((3,), dtype="uint8"), R.Tensor((2,), dtype="float16"), R.Tensor((2,), dtype="int8"), R.Tensor((1,), dtype="float64")):
        t: R.Tuple(R.Tensor((), dtype="float32"), R.Tensor((2,), dtype="int64"), R.Tensor((2, 2), dtype="bool"), R.Tensor((3,), dtype="uint8"), R.Tensor((2,), dtype="float16"), R.Tensor((2,), dtype="int8"), R.Tensor((1,), dtype="float64")) = (R.const(1.5, "float32"), metadata["relax.expr.Constant"][0], metadata["relax.expr.Constant"][1], metadata["relax.expr.Constant"][2], metadata["relax.expr.Constant"][3], metadata["relax.expr.Constant"][4], metadata["relax.expr.Constant"][5])
        return t

metadata = {
    "relax.expr.Constant": [
        R.const([-9223372036854775807, 42], "int64"),
        R.const([[True, False], [False, True]], "bool"),
        R.const([0, 128, 255], "uint8"),
        R.const([0.5, -2.0], "float16"),
        R.const([-128, 127], "int8"),
        R.const([0.1], "float64"),
    ],
}
