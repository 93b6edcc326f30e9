# Not in TVM 0.27: a callable's derive_func (TVM 0.27 prints it as a bare
# R.Callable, and rejects it beside ret=).
# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(p: R.Callable(derive_func="empty_derive", ret=R.Shape), k: R.Object) -> R.Object:
        return k
