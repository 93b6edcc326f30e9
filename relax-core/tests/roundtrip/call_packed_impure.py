# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function(pure=False, private=True)
    def helper(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        f: R.Callable = R.ExternFunc("my_func")
        y: R.Tensor((4,), dtype="float32") = R.call_packed("my_func", x, ty_args=(R.Tensor((4,), dtype="float32"),))
        return y

    @R.function(pure=False)
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        y: R.Tensor((4,), dtype="float32") = R.call_packed("my_inplace_update", x, ty_args=(R.Tensor((4,), dtype="float32"),))
        pair: R.Tuple(R.Tensor((4,), dtype="float32"), R.Object) = R.call_packed("split_state", y, x, ty_args=(R.Tensor((4,), dtype="float32"), R.Object))
        _: R.Object = R.call_packed("log_value", y, ty_args=(R.Object,))
        nothing: R.Object = R.call_packed("flush")
        return y
