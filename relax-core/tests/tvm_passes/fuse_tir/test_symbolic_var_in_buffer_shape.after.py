# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

sequence_length = TypeVar("sequence_length")
m = TypeVar("m")
@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def fused(x: T.Buffer((T.int64(1), sequence_length, T.int64(32), T.int64(128)), "float32"), y: T.Buffer((T.int64(2048), T.int64(128)), "float32"), m: T.int64, rotary_intermediate: T.Buffer((T.int64(1), sequence_length, T.int64(32), T.int64(128)), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        T_add_intermediate = T.sblock_alloc_buffer((T.int64(1), sequence_length, T.int64(32), T.int64(128)))
        for ax0, ax1, ax2, ax3 in T.grid(T.int64(1), sequence_length, T.int64(32), T.int64(128)):
            with T.sblock("T_add"):
                v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
                T.reads(x[v_ax0, v_ax1, v_ax2, v_ax3])
                T.writes(T_add_intermediate[v_ax0, v_ax1, v_ax2, v_ax3])
                T_add_intermediate[v_ax0, v_ax1, v_ax2, v_ax3] = x[v_ax0, v_ax1, v_ax2, v_ax3] + x[v_ax0, v_ax1, v_ax2, v_ax3]
        for i0, i1, i2, i3 in T.grid(T.int64(1), sequence_length, T.int64(32), T.int64(128)):
            with T.sblock("rotary"):
                v0, v1, v2, v3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                T.reads(y[m + v1 - T.int64(1), v3], T_add_intermediate[v0, v1, v2, v3])
                T.writes(rotary_intermediate[v0, v1, v2, v3])
                rotary_intermediate[v0, v1, v2, v3] = y[m + v1 - T.int64(1), v3] * T_add_intermediate[v0, v1, v2, v3]

    @R.function
    def main(x: R.Tensor((1, sequence_length, 32, 128), dtype="float32"), y: R.Tensor((2048, 128), dtype="float32"), len: R.Shape([m])) -> R.Tensor((1, sequence_length, 32, 128), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv = R.call_tir(cls.fused, (x, y, m), out_ty=R.Tensor((1, sequence_length, 32, 128), dtype="float32"))
            R.output(gv)
        return gv
