"""Writes ONNX node test cases for the elementwise converters into
relax-onnx/tests/data/ (backend-case layout: model.onnx and
test_data_set_0/{input,output}_N.pb). The `onnx` wheel ships no node test
data, but it ships their generators (`onnx.backend.test.case.node`, Apache-2.0),
whose expected outputs are ONNX's NumPy reference; this script runs them
and keeps the cases listed below, unchanged.

    /work/venv/bin/python scripts/onnx_elementwise_cases.py   (venv: onnx 1.23)
"""

import os
import warnings

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.backend.test.case.node import collect_testcases

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "relax-onnx", "tests", "data")

CASES = [
    "test_erf", "test_sin", "test_cos", "test_tan", "test_asin", "test_acos",
    "test_atan", "test_sinh", "test_cosh", "test_asinh", "test_acosh",
    "test_atanh", "test_floor", "test_ceil", "test_round", "test_sign",
    "test_isnan", "test_isinf", "test_isinf_positive", "test_isinf_negative",
    "test_not_2d", "test_and2d", "test_or_bcast3v1d", "test_xor4d",
    "test_bitwise_not_2d", "test_bitwise_and_i32_2d",
    "test_bitwise_or_ui8_bcast_4v3d", "test_bitwise_xor_ui64_bcast_3v1d",
    "test_bitshift_left_uint8", "test_bitshift_right_uint64",
    "test_bitshift_right_int8_negative_input",
    "test_bitshift_left_int32_shift_ge_width",
    "test_bitshift_right_int8_negative_shift",
    "test_mod_mixed_sign_int32", "test_mod_mixed_sign_float32",
    "test_mod_uint8", "test_mod_broadcast", "test_mod_int64_fmod",
    "test_hardswish", "test_gelu_default_1", "test_gelu_tanh_1",
    "test_thresholdedrelu", "test_celu", "test_shrink_hard",
    "test_shrink_soft", "test_castlike_FLOAT_to_DOUBLE",
]


def main():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = {c.name: c for c in collect_testcases("")}
    for name in CASES:
        case = cases[name]
        (inputs, outputs), = case.data_sets
        d = os.path.join(OUT, name)
        os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
        onnx.save(case.model, os.path.join(d, "model.onnx"))
        graph = case.model.graph
        for kind, values, infos in (("input", inputs, graph.input), ("output", outputs, graph.output)):
            for i, (v, info) in enumerate(zip(values, infos)):
                if isinstance(v, onnx.TensorProto):
                    t = onnx.TensorProto()
                    t.CopyFrom(v)
                    t.name = info.name
                else:
                    t = numpy_helper.from_array(np.asarray(v), info.name)
                with open(os.path.join(d, "test_data_set_0", f"{kind}_{i}.pb"), "wb") as f:
                    f.write(t.SerializeToString())
        print(name)


if __name__ == "__main__":
    main()
