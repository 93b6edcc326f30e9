# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

M = TypeVar("M")
N = TypeVar("N")
@I.ir_module
class Module:
    @R.function
    def main(state: R.Tensor((N,), dtype="float32"), A: R.Tensor((M, 16), dtype="float32"), B: R.Tensor((M, 32), dtype="float32"), scale: T.float32) -> R.Tensor((M,), dtype="float32"):
        if N == 16:
            weights_1: R.Tensor((M, 16), dtype="float32") = R.multiply(A, scale)
            weights_2: R.Tensor((M, N), dtype="float32") = R.match_cast(weights_1, R.Tensor((M, N), dtype="float32"))
            weights_then: R.Tensor((M, N), dtype="float32") = R.multiply(weights_2, scale)
            weights: R.Tensor((M, N), dtype="float32") = weights_then
        else:
            weights_1: R.Tensor((M, 32), dtype="float32") = R.multiply(B, scale)
            weights_2: R.Tensor((M, N), dtype="float32") = R.match_cast(weights_1, R.Tensor((M, N), dtype="float32"))
            weights_else: R.Tensor((M, N), dtype="float32") = R.multiply(weights_2, scale)
            weights: R.Tensor((M, N), dtype="float32") = weights_else
        weights_1: R.Tensor((M, N), dtype="float32") = R.multiply(weights, scale)
        out: R.Tensor((M,), dtype="float32") = R.matmul(weights_1, state, out_dtype=None)
        return out
