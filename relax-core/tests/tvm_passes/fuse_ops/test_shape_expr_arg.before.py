# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def broadcast_to(lv1: T.Buffer((n, n), "float32"), T_broadcast_to: T.Buffer((T.int64(1), T.int64(1), n, n), "float32")):
        T.func_attr({"op_pattern": 1, "tirx.noalias": True})
        # with T.sblock("root"):
        for ax0, ax1, ax2, ax3 in T.grid(T.int64(1), T.int64(1), n, n):
            with T.sblock("T_broadcast_to"):
                v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
                T.reads(lv1[v_ax2, v_ax3])
                T.writes(T_broadcast_to[v_ax0, v_ax1, v_ax2, v_ax3])
                T_broadcast_to[v_ax0, v_ax1, v_ax2, v_ax3] = lv1[v_ax2, v_ax3]

    @T.prim_func(private=True, s_tir=True)
    def full(T_full: T.Buffer((n, n), "float32")):
        T.func_attr({"op_pattern": 0, "tirx.noalias": True})
        # with T.sblock("root"):
        for ax0, ax1 in T.grid(n, n):
            with T.sblock("T_full"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads()
                T.writes(T_full[v_ax0, v_ax1])
                T_full[v_ax0, v_ax1] = T.float32(0.0)

    @T.prim_func(private=True, s_tir=True)
    def trilu(lv0: T.Buffer((n, n), "float32"), trilu: T.Buffer((n, n), "float32")):
        T.func_attr({"op_pattern": 0, "tirx.noalias": True})
        # with T.sblock("root"):
        for i0, i1 in T.grid(n, n):
            with T.sblock("trilu"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(lv0[v_i0, v_i1])
                T.writes(trilu[v_i0, v_i1])
                trilu[v_i0, v_i1] = T.Select(v_i0 < v_i1, lv0[v_i0, v_i1], T.float32(0.0))

    @R.function
    def main(s: R.Shape([n]), kv_cache: R.Any) -> R.Tuple(R.Tensor(("1 + n", 32, 128), dtype="float32"), R.Tensor((1, 1, n, n), dtype="float32")):
        cls = Module
        with R.dataflow():
            lv0 = R.call_tir(cls.full, R.tuple(), out_ty=R.Tensor((n, n), dtype="float32"))
            lv1 = R.call_tir(cls.trilu, (lv0,), out_ty=R.Tensor((n, n), dtype="float32"))
            lv2 = R.call_tir(cls.broadcast_to, (lv1,), out_ty=R.Tensor((1, 1, n, n), dtype="float32"))
            gv: R.Tensor((1 + n, 32, 128), dtype="float32") = R.call_pure_packed("vm.builtin.attention_kv_cache_view", kv_cache, R.shape([1 + n, 32, 128]), ty_args=(R.Tensor((1 + n, 32, 128), dtype="float32"),))
            R.output(lv2, gv)
        return (gv, lv2)
