"""Writes ONNX's own node test cases for the indexing ops into
relax-onnx/tests/data/ (backend-case layout: model.onnx and
test_data_set_0/{input,output}_N.pb). The `onnx` wheel ships no node test
data, but it ships the generators (`onnx.backend.test.case.node`, ONNX's
reference outputs); this runs them.

An input that decides an axis, a dim or a diagonal (CumSum's `axis`,
Trilu's `k`, OneHot's `depth`) is a graph input in ONNX's cases; the
importer needs it constant, so it is moved into the graph's initializers
(with the value of the case's data set) and dropped from the data set.
Every other case is written unchanged.

    python3 scripts/onnx_index_cases.py   (venv: onnx, numpy)
"""

import os
import shutil

import onnx.backend.test.case.node as node
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "relax-onnx", "tests", "data")

CASES = [
    "test_gather_elements_0",
    "test_gather_elements_1",
    "test_gather_elements_negative_indices",
    "test_gathernd_example_float32",
    "test_gathernd_example_int32",
    "test_gathernd_example_int32_batch_dim1",
    "test_scatter_elements_with_axis",
    "test_scatter_elements_with_negative_indices",
    "test_scatter_elements_with_duplicate_indices",
    "test_scatter_elements_with_reduction_max",
    "test_scatter_elements_with_reduction_min",
    "test_scatter_with_axis",
    "test_scatternd",
    "test_scatternd_add",
    "test_scatternd_multiply",
    "test_cumsum_1d_exclusive",
    "test_cumsum_1d_reverse",
    "test_cumsum_1d_reverse_exclusive",
    "test_cumsum_2d_axis_0",
    "test_cumsum_2d_negative_axis",
    "test_cumsum_2d_int32",
    "test_tril",
    "test_tril_neg",
    "test_triu",
    "test_triu_one_row",
    "test_triu_square_neg",
    "test_triu_zero",
    "test_onehot_with_axis",
    "test_onehot_negative_indices",
    "test_onehot_without_axis",
]

# op type -> the inputs (by position) that must be constants.
FROZEN = {"CumSum": [1], "Trilu": [1], "OneHot": [1]}


def main():
    wanted = set(CASES)
    found = set()
    for case in node.collect_testcases():
        if case.name not in wanted:
            continue
        found.add(case.name)
        model = case.model
        [(inputs, outputs)] = case.data_sets
        inputs = list(inputs)
        graph = model.graph
        frozen = set()
        for n in graph.node:
            for pos in FROZEN.get(n.op_type, []):
                if pos < len(n.input) and n.input[pos]:
                    frozen.add(n.input[pos])
        names = [i.name for i in graph.input]
        for name in sorted(frozen, key=names.index, reverse=True):
            j = names.index(name)
            graph.initializer.append(numpy_helper.from_array(inputs[j], name))
            del graph.input[j]
            del inputs[j]
            del names[j]
        d = os.path.join(OUT, case.name)
        shutil.rmtree(d, ignore_errors=True)
        ds = os.path.join(d, "test_data_set_0")
        os.makedirs(ds)
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(model.SerializeToString())
        for j, x in enumerate(inputs):
            with open(os.path.join(ds, f"input_{j}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(x, names[j]).SerializeToString())
        for j, x in enumerate(outputs):
            with open(os.path.join(ds, f"output_{j}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(x, graph.output[j].name).SerializeToString())
    missing = wanted - found
    assert not missing, f"not in this onnx version: {sorted(missing)}"
    print(f"{len(found)} cases written to {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()
