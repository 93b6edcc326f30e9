"""Writes ONNX Resize and Upsample test cases with onnxruntime's outputs
into relax-onnx/tests/data/ (backend-case layout: model.onnx and
test_data_set_0/{input,output}_0.pb), for the modes the importer maps to
image.resize2d. The `onnx` wheel ships no node tests, so onnxruntime is the
oracle.

    python3 scripts/onnx_resize_cases.py   (venv: onnx, onnxruntime, numpy)
"""

import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "relax-onnx", "tests", "data")

CASES = [
    # name, opset, attrs, scales, sizes
    ("resize_nearest_half_pixel_up", 13, dict(mode="nearest"), [1, 1, 2.0, 1.5], None),
    ("resize_nearest_asymmetric_floor", 13, dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"), None, [1, 2, 7, 3]),
    ("resize_nearest_round_prefer_ceil_down", 13, dict(mode="nearest", nearest_mode="round_prefer_ceil"), None, [1, 2, 3, 4]),
    ("resize_linear_half_pixel", 13, dict(mode="linear"), [1, 1, 2.0, 2.0], None),
    ("resize_linear_align_corners", 13, dict(mode="linear", coordinate_transformation_mode="align_corners"), None, [1, 2, 9, 5]),
    ("resize_linear_pytorch_half_pixel_down", 13, dict(mode="linear", coordinate_transformation_mode="pytorch_half_pixel"), None, [1, 2, 1, 3]),
    ("resize_linear_asymmetric_opset10", 10, dict(mode="linear"), [1, 1, 1.5, 2.0], None),
    ("upsample_nearest_opset9", 9, dict(mode="nearest"), [1, 1, 2.0, 3.0], None),
]


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 2, 4, 6)).astype(np.float32)
    for name, opset, attrs, scales, sizes in CASES:
        inits = []
        if name.startswith("upsample"):
            inits.append(numpy_helper.from_array(np.array(scales, np.float32), "scales"))
            node = helper.make_node("Upsample", ["x", "scales"], ["y"], **attrs)
        elif opset < 11:
            inits.append(numpy_helper.from_array(np.array(scales, np.float32), "scales"))
            node = helper.make_node("Resize", ["x", "scales"], ["y"], **attrs)
        elif sizes is not None:
            inits.append(numpy_helper.from_array(np.array(sizes, np.int64), "sizes"))
            node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], **attrs)
        else:
            inits.append(numpy_helper.from_array(np.array(scales, np.float32), "scales"))
            node = helper.make_node("Resize", ["x", "", "scales"], ["y"], **attrs)
        graph = helper.make_graph(
            [node],
            name,
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
            inits,
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 7
        case = os.path.join(OUT, f"test_{name}")
        os.makedirs(os.path.join(case, "test_data_set_0"), exist_ok=True)
        onnx.save(model, os.path.join(case, "model.onnx"))
        y = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
        for kind, t in (("input", x), ("output", y)):
            with open(os.path.join(case, "test_data_set_0", f"{kind}_0.pb"), "wb") as f:
                f.write(numpy_helper.from_array(t).SerializeToString())
        print(name, y.shape)


if __name__ == "__main__":
    main()
