# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def add(lv0: T.Buffer((T.int64(1), n, T.int64(1)), "float32"), lv0_1: T.Buffer((T.int64(1), n, T.int64(1)), "float32"), T_add: T.Buffer((T.int64(1), n, T.int64(1)), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for ax0, ax1, ax2 in T.grid(T.int64(1), n, T.int64(1)):
            with T.sblock("T_add"):
                v_ax0, v_ax1, v_ax2 = T.axis.remap("SSS", [ax0, ax1, ax2])
                T.reads(lv0[v_ax0, v_ax1, v_ax2], lv0_1[v_ax0, v_ax1, v_ax2])
                T.writes(T_add[v_ax0, v_ax1, v_ax2])
                T_add[v_ax0, v_ax1, v_ax2] = lv0[v_ax0, v_ax1, v_ax2] + lv0_1[v_ax0, v_ax1, v_ax2]

    @T.prim_func(private=True, s_tir=True)
    def divide(y: T.Buffer((T.int64(1), n, T.int64(4096)), "float32"), lv2: T.Buffer((T.int64(1), n, T.int64(1)), "float32"), T_divide: T.Buffer((T.int64(1), n, T.int64(4096)), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for ax0, ax1, ax2 in T.grid(T.int64(1), n, T.int64(4096)):
            with T.sblock("T_divide"):
                v_ax0, v_ax1, v_ax2 = T.axis.remap("SSS", [ax0, ax1, ax2])
                T.reads(y[v_ax0, v_ax1, v_ax2], lv2[v_ax0, v_ax1, T.int64(0)])
                T.writes(T_divide[v_ax0, v_ax1, v_ax2])
                T_divide[v_ax0, v_ax1, v_ax2] = y[v_ax0, v_ax1, v_ax2] / lv2[v_ax0, v_ax1, T.int64(0)]

    @T.prim_func(private=True, s_tir=True)
    def multiply(rms_norm_weight: T.Buffer((T.int64(4096),), "float32"), lv3: T.Buffer((T.int64(1), n, T.int64(4096)), "float32"), T_multiply: T.Buffer((T.int64(1), n, T.int64(4096)), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for ax0, ax1, ax2 in T.grid(T.int64(1), n, T.int64(4096)):
            with T.sblock("T_multiply"):
                v_ax0, v_ax1, v_ax2 = T.axis.remap("SSS", [ax0, ax1, ax2])
                T.reads(rms_norm_weight[v_ax2], lv3[v_ax0, v_ax1, v_ax2])
                T.writes(T_multiply[v_ax0, v_ax1, v_ax2])
                T_multiply[v_ax0, v_ax1, v_ax2] = rms_norm_weight[v_ax2] * lv3[v_ax0, v_ax1, v_ax2]

    @T.prim_func(private=True, s_tir=True)
    def sqrt(lv1: T.Buffer((T.int64(1), n, T.int64(1)), "float32"), compute: T.Buffer((T.int64(1), n, T.int64(1)), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for i0, i1, i2 in T.grid(T.int64(1), n, T.int64(1)):
            with T.sblock("compute"):
                v_i0, v_i1, v_i2 = T.axis.remap("SSS", [i0, i1, i2])
                T.reads(lv1[v_i0, v_i1, v_i2])
                T.writes(compute[v_i0, v_i1, v_i2])
                compute[v_i0, v_i1, v_i2] = T.sqrt(lv1[v_i0, v_i1, v_i2])

    @T.prim_func(private=True, s_tir=True)
    def te_mean(x: T.Buffer((T.int64(1), n, T.int64(4096)), "float32"), T_divide: T.Buffer((T.int64(1), n, T.int64(1)), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        x_red = T.sblock_alloc_buffer((T.int64(1), n, T.int64(1)))
        for ax0, ax1, ax2, k2 in T.grid(T.int64(1), n, T.int64(1), T.int64(4096)):
            with T.sblock("x_red"):
                v_ax0, v_ax1, v_ax2, v_k2 = T.axis.remap("SSSR", [ax0, ax1, ax2, k2])
                T.reads(x[v_ax0, v_ax1, v_k2])
                T.writes(x_red[v_ax0, v_ax1, v_ax2])
                with T.init():
                    x_red[v_ax0, v_ax1, v_ax2] = T.float32(0.0)
                x_red[v_ax0, v_ax1, v_ax2] = x_red[v_ax0, v_ax1, v_ax2] + x[v_ax0, v_ax1, v_k2]
        for ax0, ax1, ax2 in T.grid(T.int64(1), n, T.int64(1)):
            with T.sblock("T_divide"):
                v_ax0, v_ax1, v_ax2 = T.axis.remap("SSS", [ax0, ax1, ax2])
                T.reads(x_red[v_ax0, v_ax1, v_ax2])
                T.writes(T_divide[v_ax0, v_ax1, v_ax2])
                T_divide[v_ax0, v_ax1, v_ax2] = x_red[v_ax0, v_ax1, v_ax2] / T.float32(4096.0)

    @R.function
    def fused_mean_add_tir_sqrt_divide_multiply(x: R.Tensor((1, n, 4096), dtype="float32"), y: R.Tensor((1, n, 4096), dtype="float32"), rms_norm_weight: R.Tensor((4096,), dtype="float32")) -> R.Tensor((1, n, 4096), dtype="float32"):
        R.func_attr({"Primitive": True})
        cls = Module
        with R.dataflow():
            lv0 = R.call_tir(cls.te_mean, (x,), out_ty=R.Tensor((1, n, 1), dtype="float32"))
            lv1 = R.call_tir(cls.add, (lv0, lv0), out_ty=R.Tensor((1, n, 1), dtype="float32"))
            lv2 = R.call_tir(cls.sqrt, (lv1,), out_ty=R.Tensor((1, n, 1), dtype="float32"))
            lv3 = R.call_tir(cls.divide, (y, lv2), out_ty=R.Tensor((1, n, 4096), dtype="float32"))
            gv = R.call_tir(cls.multiply, (rms_norm_weight, lv3), out_ty=R.Tensor((1, n, 4096), dtype="float32"))
            R.output(gv)
        return gv

    @R.function
    def main(x: R.Tensor((1, n, 4096), dtype="float32"), y: R.Tensor((1, n, 4096), dtype="float32"), rms_norm_weight: R.Tensor((4096,), dtype="float32")) -> R.Tensor((1, n, 4096), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv: R.Tensor((1, n, 4096), dtype="float32") = cls.fused_mean_add_tir_sqrt_divide_multiply(x, y, rms_norm_weight)
            R.output(gv)
        return gv
