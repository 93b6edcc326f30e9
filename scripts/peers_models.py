"""Whole models against onnxruntime (and PyTorch eager), timed in the same
minute: the peers benchmark for models.

For each model folder it finds (an ONNX backend-test layout: `DIR/<name>/
model.onnx`, as `scripts/onnx_oracle.py` writes ONNX's nine `light` CNNs
and `scripts/export_torch.py` writes the PyTorch exports), at each batch
size, it makes one seeded random input, compiles the model once (`relax
compile`), then times in `--rounds` alternated rounds:

- onnxruntime, with `intra_op_num_threads` set to the machine's core count;
- `relax bench --json` of the compiled package (`RELAX_NUM_THREADS` unset,
  so all cores), which it reads the median of;
- PyTorch eager (`torch.inference_mode`, `torch.set_num_threads` to the
  core count) for the models `export_torch.py` builds, when torch is
  installed.

Each side's time is the smallest of its per-round medians: on a shared,
noisy machine a burst of load then lands in one round of one side, not in
the ratio. Each side starts a second after the last one ended, when the
other's threads have stopped spinning.

Token-id models (an input named `input_ids`) run at sequence length 128
for encoders (BERT) and 64 for decoders (GPT-2, Llama). A model whose batch
dim is fixed (the `light` CNNs) runs at batch 1 only.

It prints one row per (model, batch) with each median in milliseconds and
relax-rs's time as a multiple of onnxruntime's, then the geometric means at
batch 1 and over every row:

    python3 scripts/peers_models.py --relax target/release/relax DIR [DIR ...]
        [--batches 1,8] [--runs 20] [--rounds 3] [--no-torch] [--only NAME,...]
        [--json OUT]

(venv: numpy, onnx, onnxruntime; torch, torchvision and transformers for
the PyTorch column.) Lower is better: a ratio of 0.8 means relax-rs takes
80% of onnxruntime's time.
"""

import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort

DECODERS = ("gpt2", "llama", "tiny_llama")

# Seconds to wait after timing onnxruntime, before `relax bench` starts.
IDLE_S = 1.0


def arg(flag, default=None):
    return sys.argv[sys.argv.index(flag) + 1] if flag in sys.argv else default


def median_ms(fn, runs):
    for _ in range(3):
        fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return 1e3 * sorted(times)[len(times) // 2]


def graph_inputs(model):
    inits = {i.name for i in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def make_inputs(name, model, batch, rng):
    """One input per graph input, or None when the model cannot take this
    batch size (a fixed batch dim)."""
    feeds = {}
    for inp in graph_inputs(model):
        dims = inp.type.tensor_type.shape.dim
        shape = []
        for k, d in enumerate(dims):
            if d.dim_value:
                if k == 0 and d.dim_value != batch:
                    return None
                shape.append(d.dim_value)
            elif k == 0:
                shape.append(batch)
            else:
                # a symbolic non-batch dim: the sequence length
                shape.append(64 if name in DECODERS else 128)
        if inp.type.tensor_type.elem_type == onnx.TensorProto.INT64:
            feeds[inp.name] = rng.integers(0, 256, size=shape, dtype=np.int64)
        else:
            feeds[inp.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def ort_session(path):
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = os.cpu_count()
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def compile_relax(relax, path, tmp):
    """The package `relax compile` writes, and its compile time in seconds
    (as it prints it), or None and the error."""
    package = os.path.join(tmp, "model.relax")
    done = subprocess.run([relax, "compile", path, "-o", package], capture_output=True, text=True)
    if done.returncode != 0:
        return None, None, done.stderr.strip().splitlines()[-1:] or ["failed"]
    found = re.search(r"compiled in ([0-9.]+) s", done.stdout + done.stderr)
    return package, float(found.group(1)) if found else None, None


def time_relax(relax, package, feeds, runs, tmp):
    args = [relax, "bench", package, "--runs", str(runs), "--json"]
    for k, (name, x) in enumerate(feeds.items()):
        npy = os.path.join(tmp, f"input_{k}.npy")
        np.save(npy, x)
        args += ["--input", f"{name}={npy}"]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        return None, done.stderr.strip().splitlines()[-1:] or ["failed"]
    return json.loads(done.stdout)["ms"]["p50"], None


def torch_model(name):
    """PyTorch's own model for a folder `export_torch.py` wrote, or None."""
    try:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import export_torch
        import torch
    except Exception:
        return None
    if name not in export_torch.MODELS:
        return None
    torch.manual_seed(export_torch.SEED)
    model = export_torch.MODELS[name]()[0]().eval()
    torch.set_num_threads(os.cpu_count())
    return model


def time_torch(model, feeds, runs):
    import torch

    args = [torch.from_numpy(x) for x in feeds.values()]
    with torch.inference_mode():
        return median_ms(lambda: model(*args), runs)


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    relax = arg("--relax")
    if relax is None:
        sys.exit(__doc__)
    batches = [int(b) for b in arg("--batches", "1,8").split(",")]
    runs = int(arg("--runs", "20"))
    rounds = int(arg("--rounds", "3"))
    only = arg("--only")
    only = set(only.split(",")) if only else None
    use_torch = "--no-torch" not in sys.argv
    flags_with_values = {"--relax", "--batches", "--runs", "--rounds", "--only", "--json"}
    dirs = [
        a
        for i, a in enumerate(sys.argv[1:], 1)
        if not a.startswith("--") and sys.argv[i - 1] not in flags_with_values
    ]
    cases = []
    for d in dirs:
        for name in sorted(os.listdir(d)):
            path = os.path.join(d, name, "model.onnx")
            if os.path.exists(path) and (only is None or name in only):
                cases.append((name, path))

    print(
        f"{os.cpu_count()} cores; onnxruntime {ort.__version__}; "
        f"the least of {rounds} alternated medians of {runs} runs"
    )
    print(f"{'model':28} {'batch':>5} {'onnxruntime':>12} {'relax-rs':>10} {'ratio':>6} {'pytorch':>9}  compile")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in cases:
            model = onnx.load(path, load_external_data=False)
            pt = torch_model(name) if use_torch else None
            for batch in batches:
                feeds = make_inputs(name, model, batch, np.random.default_rng(0))
                if feeds is None:
                    continue
                sess = ort_session(path)
                package, compile_s, err = compile_relax(relax, path, tmp)
                ort_times, relax_times, pt_times = [], [], []
                # Each side starts after IDLE_S: the thread pools spin for a
                # while after a run (onnxruntime's, OpenMP's), and on two
                # cores onnxruntime's took a core from `relax bench` (GPT-2:
                # 0.80 ms against 0.57 ms alone).
                for _ in range(rounds):
                    time.sleep(IDLE_S)
                    ort_times.append(median_ms(lambda: sess.run(None, feeds), runs))
                    time.sleep(IDLE_S)
                    if package is not None:
                        relax_ms, err = time_relax(relax, package, feeds, runs, tmp)
                        if relax_ms is not None:
                            relax_times.append(relax_ms)
                    if pt is not None:
                        time.sleep(IDLE_S)
                        pt_times.append(time_torch(pt, feeds, runs))
                ort_ms = min(ort_times)
                relax_ms = min(relax_times) if relax_times else None
                pt_ms = min(pt_times) if pt_times else None
                row = {
                    "model": name,
                    "batch": batch,
                    "shapes": {k: list(v.shape) for k, v in feeds.items()},
                    "onnxruntime_ms": ort_ms,
                    "relax_ms": relax_ms,
                    "pytorch_ms": pt_ms,
                    "compile_s": compile_s,
                }
                rows.append(row)
                if relax_ms is None:
                    print(f"{name:28} {batch:5} {ort_ms:12.2f}   relax bench failed: {err[0][:80]}")
                    continue
                row["ratio"] = relax_ms / ort_ms
                pt_text = f"{pt_ms:9.2f}" if pt_ms is not None else f"{'-':>9}"
                print(
                    f"{name:28} {batch:5} {ort_ms:12.2f} {relax_ms:10.2f} {row['ratio']:6.2f} {pt_text}  {compile_s or 0:.1f} s",
                    flush=True,
                )
    ratios = [r["ratio"] for r in rows if "ratio" in r]
    ones = [r["ratio"] for r in rows if "ratio" in r and r["batch"] == 1]
    print(f"geometric mean of relax-rs / onnxruntime: batch 1 {geomean(ones):.2f}, all rows {geomean(ratios):.2f}")
    if arg("--json"):
        with open(arg("--json"), "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
