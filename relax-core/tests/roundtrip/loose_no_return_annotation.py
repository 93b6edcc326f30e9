# Return annotations left out: each is derived from the body and erased of
# what is local to it (the match_cast's `m`, the dataflow block's `lv`).
from tvm.script import ir as I
from tvm.script import relax as R
from tvm.script import tir as T

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 2), dtype="float32")):
        cls = Module
        y = cls.helper(x)
        return y

    @R.function
    def helper(x: R.Tensor((2, 2), "float32")):
        return x

    @R.function
    def dynamic(x: R.Tensor(("n",), "float32"), y: R.Tensor(ndim=1, dtype="float32")):
        n = T.int64()
        m = T.int64()
        z = R.match_cast(y, R.Tensor((m,), "float32"))
        with R.dataflow():
            lv = R.add(x, x)
            gv = (lv, z)
            R.output(gv)
        return gv
