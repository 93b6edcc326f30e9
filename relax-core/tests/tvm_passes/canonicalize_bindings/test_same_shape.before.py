# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import relax as R

m = TypeVar("m")
n = TypeVar("n")
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((m, n), dtype="float32")) -> R.Tensor((m, n), dtype="float32"):
        y: R.Tensor((m, n), dtype="float32") = x
        z: R.Tensor((m, n), dtype="float32") = R.match_cast(x, R.Tensor((m, n), dtype="float32"))
        w: R.Tensor((m, n), dtype="float32") = z
        q: R.Tensor((m, n), dtype="float32") = R.add(w, y)
        gv4: R.Tensor((m, n), dtype="float32") = R.add(q, w)
        return gv4
