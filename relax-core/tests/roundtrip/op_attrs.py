# from tvm.script import ir as I
# from tvm.script import relax as R
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 4, 8), dtype="float32"), gamma: R.Tensor((8,), dtype="float32"), beta: R.Tensor((8,), dtype="float32")) -> R.Tensor(dtype="float32", ndim=2):
        n = T.int64()
        with R.dataflow():
            a: R.Tensor((n, 4), dtype="float32") = R.sum(x, axis=[2], keepdims=False)
            b: R.Tensor((n, 4, 8), dtype="float32") = R.nn.softmax(x, axis=-1)
            c: R.Tensor((n, 4, 8), dtype="float32") = R.nn.layer_norm(x, gamma, beta, axes=[-1], epsilon=1e-5, center=True, scale=True)
            d: R.Tensor((n, 4, 8), dtype="float16") = R.astype(c, dtype="float16")
            e: R.Tensor((n, 32), dtype="float32") = R.reshape(b, R.shape([n, 32]))
            f: R.Tensor((n, 4, 8), dtype="float32") = R.strided_slice(x, axes=[0], begin=[0], end=[n], strides=None, assume_inbound=False)
            g: R.Tensor(dtype="float32", ndim=2) = R.call_pure_packed(R.ExternFunc("opaque_op"), e, ty_args=(R.Tensor(dtype="float32", ndim=2),))
            h: R.Tensor(dtype="float32", ndim=1) = R.flatten(g)
            R.output(g, h)
        return g
