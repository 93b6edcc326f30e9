"""Exports the main example's digits MLP (weights in examples/data/) as an
ONNX model with a symbolic batch, for examples/aot-onnx:

    relu(x @ w0.T + b0) @ w1.T + b1   as   Gemm(transB=1) -> Relu -> Gemm(transB=1)

Run once, offline:  python3 scripts/export_digits_onnx.py  (numpy, onnx)
It also checks the model with onnxruntime when that is installed.
"""

import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "examples", "data")
OUT = os.path.join(HERE, "..", "examples", "aot-onnx", "models", "digits_mlp.onnx")


def load(name, shape):
    return np.fromfile(os.path.join(DATA, name), dtype="<f4").reshape(shape)


def main():
    w0, b0 = load("w0.bin", (128, 64)), load("b0.bin", (128,))
    w1, b1 = load("w1.bin", (10, 128)), load("b1.bin", (10,))
    graph = helper.make_graph(
        [
            helper.make_node("Gemm", ["x", "w0", "b0"], ["h"], name="dense0", transB=1),
            helper.make_node("Relu", ["h"], ["a"], name="relu0"),
            helper.make_node("Gemm", ["a", "w1", "b1"], ["logits"], name="dense1", transB=1),
        ],
        "digits_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 64])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])],
        [numpy_helper.from_array(a, n) for a, n in [(w0, "w0"), (b0, "b0"), (w1, "w1"), (b1, "b1")]],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, OUT)
    x = np.fromfile(os.path.join(DATA, "x_test.bin"), dtype="<f4").reshape(-1, 64)
    y = np.fromfile(os.path.join(DATA, "y_test.bin"), dtype="<i8")
    try:
        import onnxruntime as ort

        logits = ort.InferenceSession(OUT, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
        print(f"onnxruntime accuracy: {(logits.argmax(1) == y).mean():.4f}")
    except ImportError:
        pass
    print(f"wrote {OUT} ({os.path.getsize(OUT)} bytes)")


if __name__ == "__main__":
    main()
