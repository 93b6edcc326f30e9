"""Oracles for the nine real CNNs of ONNX's `light` test models.

The `onnx` package ships AlexNet, DenseNet-121, Inception v1 and v2,
ResNet-50, ShuffleNet, SqueezeNet, VGG-19 and ZFNet-512 in
`onnx/backend/test/data/light/`, with their weights made by ConstantOfShape
(constant fills), so their outputs prove little. This script replaces each
ConstantOfShape that makes a weight with a seeded random initializer of
the same shape (1-d tensors uniform in [0.5, 1.5], so batch-norm variances
stay positive; others normal with He scaling), draws a seeded random
input, runs onnxruntime, and writes each model as an ONNX backend test
case:

    OUT/<name>/model.onnx
    OUT/<name>/test_data_set_0/input_0.pb
    OUT/<name>/test_data_set_0/output_0.pb

which `cargo run --release -p relax-onnx --example onnx_backend -- OUT`
(or `relax run`) checks.

    python3 scripts/onnx_oracle.py OUT [--time]   (venv: onnx, onnxruntime, numpy)

With --time it also prints onnxruntime's median latency per model
(batch 1, the default session options), and with `--relax BIN` (the
`relax` binary, `cargo build --release -p relax-cli`) it runs
`relax bench` on the same model and input right after, so the two figures
come from the same minute:

    python3 scripts/onnx_oracle.py OUT --time --relax target/release/relax
"""

import os
import subprocess
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper


def constant_value(graph, name):
    for init in graph.initializer:
        if init.name == name:
            return numpy_helper.to_array(init)
    for node in graph.node:
        if node.op_type == "Constant" and node.output[0] == name:
            return numpy_helper.to_array(node.attribute[0].t)
    return None


def randomize(model, rng):
    graph = model.graph
    keep = []
    for node in graph.node:
        if node.op_type == "ConstantOfShape":
            shape = constant_value(graph, node.input[0])
            if shape is not None:
                shape = [int(d) for d in shape]
                if len(shape) == 1:
                    w = rng.uniform(0.5, 1.5, size=shape)
                else:
                    fan_in = int(np.prod(shape[1:])) or 1
                    w = rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)
                graph.initializer.append(
                    numpy_helper.from_array(w.astype(np.float32), node.output[0])
                )
                continue
        keep.append(node)
    del graph.node[:]
    graph.node.extend(keep)
    return model


def main():
    out = sys.argv[1]
    timing = "--time" in sys.argv
    relax = sys.argv[sys.argv.index("--relax") + 1] if "--relax" in sys.argv else None
    light = os.path.join(os.path.dirname(onnx.__file__), "backend/test/data/light")
    names = sorted(
        f[len("light_") : -len(".onnx")] for f in os.listdir(light) if f.endswith(".onnx")
    )
    for name in names:
        rng = np.random.default_rng(0)
        model = randomize(onnx.load(os.path.join(light, f"light_{name}.onnx")), rng)
        case = os.path.join(out, name)
        data = os.path.join(case, "test_data_set_0")
        os.makedirs(data, exist_ok=True)
        onnx.save(model, os.path.join(case, "model.onnx"))
        inits = {i.name for i in model.graph.initializer}
        inputs = [i for i in model.graph.input if i.name not in inits]
        feeds = {}
        for k, inp in enumerate(inputs):
            dims = [d.dim_value or 1 for d in inp.type.tensor_type.shape.dim]
            x = rng.standard_normal(dims).astype(np.float32)
            feeds[inp.name] = x
            with open(os.path.join(data, f"input_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(x, inp.name).SerializeToString())
        options = ort.SessionOptions()
        options.log_severity_level = 3
        sess = ort.InferenceSession(
            os.path.join(case, "model.onnx"), options, providers=["CPUExecutionProvider"]
        )
        results = sess.run(None, feeds)
        for k, y in enumerate(results):
            with open(os.path.join(data, f"output_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(y).SerializeToString())
        line = f"{name}: output {results[0].shape}, max {results[0].max():.4f}"
        if timing:
            for _ in range(3):
                sess.run(None, feeds)
            times = []
            for _ in range(20):
                t = time.perf_counter()
                sess.run(None, feeds)
                times.append(time.perf_counter() - t)
            ort_ms = 1e3 * sorted(times)[len(times) // 2]
            line += f", onnxruntime median {ort_ms:.2f} ms"
            if relax and len(feeds) == 1:
                npy = os.path.join(case, "x.npy")
                np.save(npy, next(iter(feeds.values())))
                bench = subprocess.run(
                    [relax, "bench", os.path.join(case, "model.onnx"), "--input", npy, "--runs", "20"],
                    capture_output=True,
                    text=True,
                )
                p50 = [w for w in bench.stdout.split(",") if "p50" in w]
                if bench.returncode == 0 and p50:
                    relax_ms = float(p50[0].split()[1])
                    line += f"; relax bench p50 {relax_ms:.2f} ms ({relax_ms / ort_ms:.2f}x onnxruntime)"
                else:
                    line += f"; relax bench failed: {bench.stderr.strip()[:200]}"
        print(line)


if __name__ == "__main__":
    main()
