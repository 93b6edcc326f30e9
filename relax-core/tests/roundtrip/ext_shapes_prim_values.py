# Not in TVM 0.27: R.Prim(value=...), a prim value known symbolically (TVM 0.27 has
# only R.Prim(dtype)).
# from tvm.script import ir as I
# from tvm.script import relax as R
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", "m"), dtype="float32"), k: R.Prim(value="k_1"), p: R.Prim("int64"), sh: R.Shape(["a", 3])) -> R.Tuple(R.Shape(["n", "m"]), R.Prim(value="n * k_1"), R.Object, R.Object, R.Prim(value=T.int32(7)), R.Prim(value=T.float32(1.5)), R.Prim(value=True)):
        n = T.int64()
        m = T.int64()
        k_1 = T.int64()
        a = T.int64()
        s: R.Shape([n, m]) = R.shape([n, m])
        v: R.Prim(value=n * k_1) = R.prim_value(n * k_1)
        st: R.Object = R.str("hello \"world\"\n")
        dt: R.Object = R.dtype("float16")
        i: R.Prim(value=T.int32(7)) = R.prim_value(T.int32(7))
        f: R.Prim(value=T.float32(1.5)) = R.prim_value(T.float32(1.5))
        b: R.Prim(value=True) = R.prim_value(True)
        t: R.Tuple(R.Shape([n, m]), R.Prim(value=n * k_1), R.Object, R.Object, R.Prim(value=T.int32(7)), R.Prim(value=T.float32(1.5)), R.Prim(value=True)) = (s, v, st, dt, i, f, b)
        return t

    @R.function
    def select(x: R.Tensor(("n",), dtype="float32")) -> R.Prim(value="T.Select(n < 4 and not n == 2, n, 4)"):
        n = T.int64()
        p: R.Prim(value=T.Select(n < 4 and not n == 2, n, 4)) = R.prim_value(T.Select(n < 4 and not n == 2, n, 4))
        return p
