# from tvm.script import ir as I
# from tvm.script import relax as R
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", "m"), dtype="float32"), p: R.Prim("int64"), sh: R.Shape(["a", 3])) -> R.Tuple(R.Shape(["n", "m"]), R.Object, R.Object, R.Shape(["a", 3])):
        n = T.int64()
        m = T.int64()
        a = T.int64()
        s: R.Shape([n, m]) = R.shape([n, m])
        st: R.Object = R.str("hello \"world\"\n")
        dt: R.Object = R.dtype("float16")
        t: R.Tuple(R.Shape([n, m]), R.Object, R.Object, R.Shape([a, 3])) = (s, st, dt, sh)
        return t
