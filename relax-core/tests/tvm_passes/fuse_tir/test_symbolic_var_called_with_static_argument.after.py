# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.tirx.layout import Axis
# from tvm.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def fused(x: T.Buffer((T.int64(64),), "float32"), Y_intermediate: T.Buffer((T.int64(1),), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for i in range(T.int64(64)):
            with T.sblock("sum"):
                vi = T.axis.reduce(T.int64(64), i)
                T.reads(x[vi])
                T.writes(Y_intermediate[0])
                with T.init():
                    Y_intermediate[0] = T.float32(0.0)
                Y_intermediate[0] = Y_intermediate[0] + x[vi]

    @R.function
    def main(x: R.Tensor((64,), dtype="float32")) -> R.Tensor((1,), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv = R.call_tir(cls.fused, (x,), out_ty=R.Tensor((1,), dtype="float32"))
            R.output(gv)
        return gv
