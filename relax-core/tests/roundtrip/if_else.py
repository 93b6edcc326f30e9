# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(cond: R.Tensor((), dtype="bool"), x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        if cond:
            lv: R.Tensor((2, 3), dtype="float32") = R.add(x, x)
            y: R.Tensor((2, 3), dtype="float32") = R.multiply(lv, x)
        else:
            y: R.Tensor((2, 3), dtype="float32") = R.subtract(x, x)
        z: R.Tensor((2, 3), dtype="float32") = R.nn.relu(y)
        return z

    @R.function
    def prim_cond(flag: R.Prim("bool"), x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        if flag:
            r: R.Tensor((2,), dtype="float32") = x
        else:
            r: R.Tensor((2,), dtype="float32") = R.negative(x)
        return r
