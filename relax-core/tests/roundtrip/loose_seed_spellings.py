# Spellings TVM's parser accepts and the seed listings use, which the
# printer writes differently: positional dtypes, unannotated bindings,
# `cls = Module`, a call as a branch's or the function's result, typed
# literals in buffer shapes, `pass` bodies, a tuple of one `sinfo_args`.
@tvm.script.ir_module
class MyModule:
    @T.prim_func
    def relu(rxplaceholder: T.Buffer((T.int64(1), T.int64(4)), "float32"), compute: T.Buffer((T.int64(1), T.int64(4)), "float32")):
        T.func_attr({"tir.noalias": T.bool(True)})
        pass

    @R.function
    def main(x: R.Tensor((1, 4), "float32"), y: R.Tensor((1, 4), "float32"), c: R.Tensor((), "bool")):
        cls = MyModule
        with R.dataflow():
            lv0 = R.multiply(x, y)
            gv0 = R.call_tir(cls.relu, (lv0,), out_sinfo=R.Tensor((1, 4), "float32"))
            R.output(gv0)
        if c:
            r = R.add(gv0, x)
        else:
            r = gv0
        return R.multiply(r, r)

    @R.function(pure=False)
    def effect(x: R.Tensor((1, 4), "float32")) -> R.Tensor((1, 4), "float32"):
        y: R.Tensor((1, 4), "float32") = R.call_packed("f", x, sinfo_args=(R.Tensor((1, 4), "float32"),))
        return y
