# from tvm.script import ir as I
# from tvm.script import relax as R
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 4), dtype="float32"), w: R.Tensor((3, 4), dtype="float32"), b: R.Tensor((3,), dtype="float32"), y: R.Tensor(("n", 3), dtype="float32")) -> R.Tensor((), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            wt: R.Tensor((4, 3), dtype="float32") = R.permute_dims(w, axes=None)
            lv: R.Tensor((n, 3), dtype="float32") = R.matmul(x, wt, out_dtype=None)
            lv1: R.Tensor((n, 3), dtype="float32") = R.add(lv, b)
            lv2: R.Tensor((n, 3), dtype="float32") = R.nn.log_softmax(lv1, axis=-1)
            lv3: R.Tensor((n, 3), dtype="float32") = R.multiply(lv2, y)
            lv4: R.Tensor((), dtype="float32") = R.mean(lv3, axis=None, keepdims=False)
            gv: R.Tensor((), dtype="float32") = R.negative(lv4)
            R.output(gv)
        return gv

    @R.function
    def main_adjoint(x: R.Tensor(("n", 4), dtype="float32"), w: R.Tensor((3, 4), dtype="float32"), b: R.Tensor((3,), dtype="float32"), y: R.Tensor(("n", 3), dtype="float32")) -> R.Tuple(R.Tensor((), dtype="float32"), R.Tuple(R.Tensor(("n", 4), dtype="float32"), R.Tensor((3, 4), dtype="float32"), R.Tensor((3,), dtype="float32"), R.Tensor(("n", 3), dtype="float32"))):
        n = T.int64()
        with R.dataflow():
            wt: R.Tensor((4, 3), dtype="float32") = R.permute_dims(w, axes=None)
            lv: R.Tensor((n, 3), dtype="float32") = R.matmul(x, wt, out_dtype=None)
            lv1: R.Tensor((n, 3), dtype="float32") = R.add(lv, b)
            lv2: R.Tensor((n, 3), dtype="float32") = R.nn.log_softmax(lv1, axis=-1)
            lv3: R.Tensor((n, 3), dtype="float32") = R.multiply(lv2, y)
            lv4: R.Tensor((), dtype="float32") = R.mean(lv3, axis=None, keepdims=False)
            gv: R.Tensor((), dtype="float32") = R.negative(lv4)
            gv_adjoint: R.Tensor((), dtype="float32") = R.ones(R.shape([]), dtype="float32")
            lv4_adjoint: R.Tensor((), dtype="float32") = R.negative(gv_adjoint)
            lv5: R.Tensor((n, 3), dtype="float32") = R.ones(R.shape([n, 3]), dtype="float32")
            lv6: R.Tensor((n, 3), dtype="float32") = R.broadcast_to(lv4_adjoint, R.shape([n, 3]))
            lv7: R.Tensor((1, 1), dtype="float32") = R.sum(lv5, axis=[0, 1], keepdims=True)
            lv3_adjoint: R.Tensor((n, 3), dtype="float32") = R.divide(lv6, lv7)
            lv2_adjoint: R.Tensor((n, 3), dtype="float32") = R.multiply(lv3_adjoint, y)
            lv8: R.Tensor((n, 3), dtype="float32") = R.exp(lv2)
            lv9: R.Tensor((n, 1), dtype="float32") = R.sum(lv2_adjoint, axis=[1], keepdims=True)
            lv10: R.Tensor((n, 3), dtype="float32") = R.multiply(lv8, lv9)
            lv1_adjoint: R.Tensor((n, 3), dtype="float32") = R.subtract(lv2_adjoint, lv10)
            lv_adjoint: R.Tensor((n, 3), dtype="float32") = lv1_adjoint
            lv11: R.Tensor((3, 4), dtype="float32") = R.permute_dims(wt, axes=[1, 0])
            lv12: R.Tensor((4, n), dtype="float32") = R.permute_dims(x, axes=[1, 0])
            wt_adjoint: R.Tensor((4, 3), dtype="float32") = R.matmul(lv12, lv_adjoint, out_dtype=None)
            x_adjoint: R.Tensor((n, 4), dtype="float32") = R.matmul(lv_adjoint, lv11, out_dtype=None)
            w_adjoint: R.Tensor((3, 4), dtype="float32") = R.permute_dims(wt_adjoint, axes=None)
            b_adjoint: R.Tensor((3,), dtype="float32") = R.sum(lv1_adjoint, axis=[0], keepdims=False)
            y_adjoint: R.Tensor((n, 3), dtype="float32") = R.multiply(lv3_adjoint, lv2)
            R.output(gv, x_adjoint, w_adjoint, b_adjoint, y_adjoint)
        return (gv, (x_adjoint, w_adjoint, b_adjoint, y_adjoint))