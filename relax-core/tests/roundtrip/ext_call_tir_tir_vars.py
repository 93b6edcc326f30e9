# Not in TVM 0.27: call_tir's tir_vars (TVM 0.27 passes scalars positionally in the
# arguments).
# from tvm.script import ir as I
# from tvm.script import relax as R
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 4), dtype="float32")) -> R.Tensor(("n", 4), dtype="float32"):
        cls = Module
        n = T.int64()
        y: R.Tensor((n, 4), dtype="float32") = R.call_tir(cls.scale, (x,), out_ty=R.Tensor((n, 4), dtype="float32"), tir_vars=R.shape([n]))
        return y

    @T.prim_func
    def scale(A: T.Buffer(("n", 4), "float32"), B: T.Buffer(("n", 4), "float32"), n: T.int64, alpha: T.float32):
        T.evaluate(0)

    @T.prim_func
    def sym(a: T.handle, m: T.int32):
        T.evaluate(0)
