# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 4), dtype="float32")) -> R.Tensor((1, 2), dtype="float32"):
        with R.dataflow():
            lv: R.Tensor((4, 3), dtype="float32") = R.permute_dims(metadata["relax.expr.Constant"][0], axes=None)
            lv1: R.Tensor((1, 3), dtype="float32") = R.matmul(x, lv, out_dtype=None)
            lv2: R.Tensor((1, 3), dtype="float32") = R.add(lv1, metadata["relax.expr.Constant"][1])
            lv3: R.Tensor((1, 3), dtype="float32") = R.nn.relu(lv2)
            lv4: R.Tensor((3, 2), dtype="float32") = R.permute_dims(metadata["relax.expr.Constant"][2], axes=None)
            lv5: R.Tensor((1, 2), dtype="float32") = R.matmul(lv3, lv4, out_dtype=None)
            lv6: R.Tensor((1, 2), dtype="float32") = R.add(lv5, metadata["relax.expr.Constant"][3])
            gv: R.Tensor((1, 2), dtype="float32") = lv6
            R.output(gv)
        return gv

metadata = {
    "relax.expr.Constant": [
        R.const([[0.5, -1.0, 2.0, 0.25], [1.0, 1.5, -0.5, 0.0], [3.0, 0.125, 1.0, -2.0]], "float32"),
        R.const([0.1, 0.2, 0.3], "float32"),
        R.const([[1.0, 0.0, -1.0], [0.5, 0.5, 0.5]], "float32"),
        R.const([0.0, 1.0], "float32"),
    ],
}
