# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def fused_argmax_add(x: T.Buffer((T.int64(10), T.int64(20)), "float32"), offset: T.Buffer((T.int64(10),), "int32"), T_add_intermediate: T.Buffer((T.int64(10),), "int64")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        argmax_v0_intermediate = T.sblock_alloc_buffer((T.int64(10),), "int64")
        argmax_v1_intermediate = T.sblock_alloc_buffer((T.int64(10),))
        for i, k in T.grid(T.int64(10), T.int64(20)):
            with T.sblock("argmax"):
                v_i, v_k = T.axis.remap("SR", [i, k])
                T.reads(x[v_i, v_k])
                T.writes(argmax_v0_intermediate[v_i], argmax_v1_intermediate[v_i])
                with T.init():
                    argmax_v0_intermediate[v_i] = T.int64(-1)
                    argmax_v1_intermediate[v_i] = T.float32(-340282346638528859811704183484516925440.0)
                v_argmax_v0: T.let[T.int64] = T.Select(argmax_v1_intermediate[v_i] >= x[v_i, v_k], argmax_v0_intermediate[v_i], v_k)
                v_argmax_v1: T.let[T.float32] = T.Select(argmax_v1_intermediate[v_i] >= x[v_i, v_k], argmax_v1_intermediate[v_i], x[v_i, v_k])
                argmax_v0_intermediate[v_i] = v_argmax_v0
                argmax_v1_intermediate[v_i] = v_argmax_v1
        for ax0 in range(T.int64(10)):
            with T.sblock("T_add"):
                v_ax0 = T.axis.spatial(T.int64(10), ax0)
                T.reads(argmax_v0_intermediate[v_ax0], offset[v_ax0])
                T.writes(T_add_intermediate[v_ax0])
                T_add_intermediate[v_ax0] = argmax_v0_intermediate[v_ax0] + T.Cast("int64", offset[v_ax0])

    @R.function
    def main(x: R.Tensor((10, 20), dtype="float32"), x_1: R.Tensor((10,), dtype="int32")) -> R.Tensor((10,), dtype="int64"):
        cls = Module
        with R.dataflow():
            gv1 = R.call_tir(cls.fused_argmax_add, (x, x_1), out_ty=R.Tensor((10,), dtype="int64"))
            R.output(gv1)
        return gv1
