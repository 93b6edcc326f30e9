# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 2), dtype="float32")) -> R.Tensor((2, 2), dtype="float32"):
        R.func_attr({"Primitive": 1, "num_input": 1, "relax.force_pure": True, "Codegen": "dnnl", "ratio": 0.5, "tags": ["a", "b"], "nothing": None, "nested": [[1, 2], [3]]})
        return x
