# from tvm.script import ir as I
# from tvm.script import relax as R
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @R.function
    def main(cond: R.Tensor((), dtype="bool"), x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        if cond:
            lv: R.Tensor((2, 3), dtype="float32") = R.add(x, x)
            y_1: R.Tensor((2, 3), dtype="float32") = R.multiply(lv, x)
            y: R.Tensor((2, 3), dtype="float32") = y_1
        else:
            y_2: R.Tensor((2, 3), dtype="float32") = R.subtract(x, x)
            y: R.Tensor((2, 3), dtype="float32") = y_2
        z: R.Tensor((2, 3), dtype="float32") = R.nn.relu(y)
        return z

    @R.function
    def prim_cond(flag: R.Prim("bool"), x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        if flag:
            r: R.Tensor((2,), dtype="float32") = x
        else:
            r_1: R.Tensor((2,), dtype="float32") = R.negative(x)
            r: R.Tensor((2,), dtype="float32") = r_1
        return r

    @R.function
    def sym_cond(x: R.Tensor(("n",), dtype="float32")) -> R.Tensor(("n",), dtype="float32"):
        n = T.int64()
        if R.prim_value(n > 4):
            with R.dataflow():
                lv: R.Tensor((n,), dtype="float32") = R.exp(x)
                gv: R.Tensor((n,), dtype="float32") = R.log(lv)
                R.output(gv)
            s: R.Tensor((n,), dtype="float32") = gv
        else:
            s: R.Tensor((n,), dtype="float32") = x
        return s
