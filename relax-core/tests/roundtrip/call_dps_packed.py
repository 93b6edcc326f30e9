# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tuple(R.Tensor((2, 3), dtype="float32"), R.Tensor((3,), dtype="int32")):
        with R.dataflow():
            lv: R.Tensor((2, 3), dtype="float32") = R.call_dps_packed("my_exp", (x,), out_ty=R.Tensor((2, 3), dtype="float32"))
            gv: R.Tuple(R.Tensor((2, 3), dtype="float32"), R.Tensor((3,), dtype="int32")) = R.call_dps_packed("my_split", (lv, x), out_ty=[R.Tensor((2, 3), dtype="float32"), R.Tensor((3,), dtype="int32")])
            R.output(gv)
        return gv
