# from tvm.script import ir as I
# from tvm.script import relax as R
# from tvm.script import tir as T

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add(A: T.Buffer((1, 128), "float32"), B: T.Buffer((128,), "float32"), C: T.Buffer((1, 128), "float32")):
        T.func_attr({"tir.noalias": True})
        T.evaluate(0)

    @R.function
    def main(x: R.Tensor((1, 784), dtype="float32"), w: R.Tensor((784, 128), dtype="float32"), b: R.Tensor((128,), dtype="float32")) -> R.Tensor((1, 128), dtype="float32"):
        with R.dataflow():
            lv: R.Tensor((1, 128), dtype="float32") = R.call_tir(cls.matmul, (x, w), out_sinfo=R.Tensor((1, 128), dtype="float32"))
            gv: R.Tensor((1, 128), dtype="float32") = R.call_tir(cls.add, (lv, b), out_sinfo=R.Tensor((1, 128), dtype="float32"))
            R.output(gv)
        return gv

    @T.prim_func
    def matmul(A: T.Buffer((1, 784), "float32"), B: T.Buffer((784, 128), "float32"), C: T.Buffer((1, 128), "float32")):
        T.func_attr({"layout_free_buffers": [1], "tir.noalias": True})
        T.evaluate(0)
