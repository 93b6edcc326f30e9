# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(ndim=2)) -> R.Tensor(ndim=2):
        o = T.int64()
        p = T.int64()
        y: R.Tensor(ndim=2) = x
        z: R.Tensor((o, p)) = R.match_cast(x, R.Tensor((o, p)))
        w: R.Tensor((o, p)) = z
        q: R.Tensor(ndim=2) = R.add(w, y)
        gv4: R.Tensor(ndim=2) = R.add(q, w)
        return gv4
