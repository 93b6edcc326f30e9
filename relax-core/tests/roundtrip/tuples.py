# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32"), y: R.Tensor((3,), dtype="int32")) -> R.Tuple(R.Tensor((2, 3), dtype="float32"), R.Tuple(R.Tensor((3,), dtype="int32")), R.Tuple):
        with R.dataflow():
            t: R.Tuple(R.Tensor((2, 3), dtype="float32"), R.Tensor((3,), dtype="int32")) = (x, y)
            a: R.Tensor((2, 3), dtype="float32") = t[0]
            b: R.Tensor((3,), dtype="int32") = t[1]
            one: R.Tuple(R.Tensor((3,), dtype="int32")) = (b,)
            empty: R.Tuple = ()
            gv: R.Tuple(R.Tensor((2, 3), dtype="float32"), R.Tuple(R.Tensor((3,), dtype="int32")), R.Tuple) = (a, one, empty)
            R.output(gv)
        return gv
