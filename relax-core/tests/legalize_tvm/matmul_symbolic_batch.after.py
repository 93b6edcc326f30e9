# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

b = TypeVar("b")
@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def matmul(x: T.Buffer((b, T.int64(3), T.int64(4)), "float32"), y: T.Buffer((T.int64(4), T.int64(5)), "float32"), matmul: T.Buffer((b, T.int64(3), T.int64(5)), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for i0, i1, i2, k in T.grid(b, T.int64(3), T.int64(5), T.int64(4)):
            with T.sblock("matmul"):
                v_i0, v_i1, v_i2, v_k = T.axis.remap("SSSR", [i0, i1, i2, k])
                T.reads(x[v_i0, v_i1, v_k], y[v_k, v_i2])
                T.writes(matmul[v_i0, v_i1, v_i2])
                with T.init():
                    matmul[v_i0, v_i1, v_i2] = T.float32(0.0)
                matmul[v_i0, v_i1, v_i2] = matmul[v_i0, v_i1, v_i2] + x[v_i0, v_i1, v_k] * y[v_k, v_i2]

    @R.function
    def main(x: R.Tensor((b, 3, 4), dtype="float32"), y: R.Tensor((4, 5), dtype="float32")) -> R.Tensor((b, 3, 5), dtype="float32"):
        cls = Module
        gv = R.call_tir(cls.matmul, (x, y), out_ty=R.Tensor((b, 3, 5), dtype="float32"))
        return gv
