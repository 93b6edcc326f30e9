# from tvm.script import ir as I
# from tvm.script import relax as R
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @R.function
    def flatten(x: R.Tensor(("n", "m"), dtype="float32")) -> R.Tensor(("n * m",), dtype="float32"):
        n = T.int64()
        m = T.int64()
        with R.dataflow():
            gv: R.Tensor((n * m,), dtype="float32") = R.reshape(x, R.shape([n * m]))
            R.output(gv)
        return gv

    @R.function
    def pad(x: R.Tensor(("n",), dtype="float32"), y: R.Tensor(("n * 2 + 1",), dtype="float32")) -> R.Shape(["T.min(n, 8)", "n // 2", "n % 3", "(n + 1) * 2", "n - (n - 1)", "T.max(n, 1)"]):
        n = T.int64()
        s: R.Shape([T.min(n, 8), n // 2, n % 3, (n + 1) * 2, n - (n - 1), T.max(n, 1)]) = R.shape([T.min(n, 8), n // 2, n % 3, (n + 1) * 2, n - (n - 1), T.max(n, 1)])
        return s
