"""Quantized and float16 variants of two PyTorch exports (ResNet-18 and the
BERT encoder), checked and timed against onnxruntime: issue 25's acceptance
on models no one here wrote.

For each model folder (`EXPORTS/<model>/model.onnx` with its external data
and `test_data_set_0`, as `scripts/export_torch.py` writes them) it makes
three variants in OUT/<model>/<variant>/model.onnx:

- `dynamic`: onnxruntime's `quantize_dynamic` with its defaults (weights
  QInt8; activations quantized at run time by DynamicQuantizeLinear, which
  is uint8: MatMulInteger / ConvInteger);
- `static`: onnxruntime's `quantize_static`, QDQ format, its defaults
  (activations and weights QInt8, MinMax calibration), calibrated on four
  seeded random inputs of the model's input shape;
- `fp16`: onnxconverter-common's `convert_float_to_float16` with
  `keep_io_types=True`: everything inside computes in float16, the graph
  inputs and outputs stay float32 (so the same input feeds every variant and
  the outputs compare directly).

It runs each variant on the input of `test_data_set_0` through onnxruntime
and through `relax run` (the CLI, `--output y.npy`) and compares:

- quantized variants: the largest absolute difference in units of one
  quantization step. The step is the scale of the last quantized tensor
  before the output: for QDQ (`static`), the scale of the last
  DequantizeLinear on the path back from the output; for `dynamic`, the
  run-time scale of the last DynamicQuantizeLinear (read from onnxruntime by
  exposing it as an extra output) times the largest dequantized weight of
  the MatMulInteger/ConvInteger it feeds (one step of one input element,
  carried through that last integer layer). Ops after that (BERT's final
  LayerNormalization) rescale the step by gamma / sigma, which the script
  also carries through when the path ends in a LayerNormalization (it
  divides by the standard deviation of its input, read the same way).
  Pass: max |relax - ort| <= 1 step.
- `fp16`: max |relax - ort| <= 1e-2 * (1 + max |ort|) (ten float16 ulps of
  the output's scale; float16's epsilon is 2^-10).

Then it times each variant back to back (ResNet-18 on the same input, BERT on
seeded random token ids at sequence length 128): onnxruntime
(`intra_op_num_threads = os.cpu_count()`, median of --runs) and
`relax bench --json` (median), and prints the ratio relax-rs / onnxruntime.
`--profile` also prints `relax bench --profile`'s slowest kernels for each
quantized variant.

    /work/venv/bin/python scripts/quantized_models.py --relax target/release/relax \
        [--exports /work/exports] [--out /tmp/quantized] [--runs 20] \
        [--only resnet18,bert] [--variants fp32,dynamic,static,fp16] [--profile]

(venv: numpy, onnx, onnxruntime, onnxconverter-common. Never used by CI.)
"""

import json
import os
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper

warnings.filterwarnings("ignore")  # convert_float_to_float16 warns once per clamped constant

SEED = 0
CALIBRATION_INPUTS = 4
TIMED_SEQ = 128  # token-id models are timed at this sequence length


def arg(flag, default=None):
    return sys.argv[sys.argv.index(flag) + 1] if flag in sys.argv else default


def graph_inputs(model):
    inits = {i.name for i in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def test_feeds(folder, model):
    """The model's inputs from `test_data_set_0`, by graph input order."""
    feeds = {}
    for k, inp in enumerate(graph_inputs(model)):
        t = onnx.load_tensor(os.path.join(folder, "test_data_set_0", f"input_{k}.pb"))
        feeds[inp.name] = numpy_helper.to_array(t)
    return feeds


def random_feeds(model, like, rng):
    """One seeded random input per graph input, the shape and dtype of `like`
    (token ids below the embedding table's row count)."""
    vocab = min(
        (i.dims[0] for i in model.graph.initializer if "word_embeddings" in i.name),
        default=1000,
    )
    feeds = {}
    for name, x in like.items():
        if np.issubdtype(x.dtype, np.integer):
            feeds[name] = rng.integers(0, vocab, size=x.shape).astype(x.dtype)
        else:
            feeds[name] = rng.standard_normal(x.shape).astype(x.dtype)
    return feeds


class Calibration:
    """onnxruntime's CalibrationDataReader over a list of feeds."""

    def __init__(self, feeds):
        self.feeds = iter(feeds)

    def get_next(self):
        return next(self.feeds, None)

    def rewind(self):
        pass


def make_variants(src_folder, out_folder, feeds, variants):
    from onnxruntime.quantization import QuantFormat, quantize_dynamic, quantize_static

    src = os.path.abspath(os.path.join(src_folder, "model.onnx"))
    out_folder = os.path.abspath(out_folder)
    paths = {"fp32": src}
    os.makedirs(out_folder, exist_ok=True)
    # onnxruntime's recommended pre-processing (shape inference, constant
    # folding) so that quantization sees every tensor's type.
    pre = os.path.join(out_folder, "preprocessed.onnx")
    if not os.path.exists(pre):
        from onnxruntime.quantization.shape_inference import quant_pre_process

        # One file, weights inline (quant_pre_process loses external data
        # it writes to its temporary folder).
        inline = os.path.join(out_folder, "inline.onnx")
        onnx.save(onnx.load(src), inline)
        # Its symbolic shape inference writes scratch files into the
        # working directory: run it in a temporary one.
        cwd = os.getcwd()
        with tempfile.TemporaryDirectory() as scratch:
            os.chdir(scratch)
            try:
                quant_pre_process(inline, pre, skip_symbolic_shape=False)
            except Exception:
                # BERT's symbolic sequence length defeats onnxruntime's
                # symbolic shape inference; ONNX's own is enough.
                quant_pre_process(inline, pre, skip_symbolic_shape=True)
            finally:
                os.chdir(cwd)
    for v in variants:
        if v == "fp32":
            continue
        d = os.path.join(out_folder, v)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "model.onnx")
        paths[v] = path
        if os.path.exists(path):
            continue
        if v == "dynamic":
            quantize_dynamic(pre, path)
        elif v == "static":
            rng = np.random.default_rng(SEED)
            calib = [random_feeds(onnx.load(pre, load_external_data=False), feeds, rng) for _ in range(CALIBRATION_INPUTS)]
            quantize_static(pre, path, Calibration(calib), quant_format=QuantFormat.QDQ)
        elif v == "fp16":
            from onnxconverter_common import float16

            m = onnx.load(src)
            onnx.save(float16.convert_float_to_float16(m, keep_io_types=True), path)
        else:
            sys.exit(f"unknown variant {v}")
    return paths


def session(path_or_bytes, threads=None):
    options = ort.SessionOptions()
    options.log_severity_level = 3
    if threads:
        options.intra_op_num_threads = threads
    return ort.InferenceSession(path_or_bytes, options, providers=["CPUExecutionProvider"])


def producers(model):
    return {o: n for n in model.graph.node for o in n.output}


def initializer(model, name):
    for i in model.graph.initializer:
        if i.name == name:
            return numpy_helper.to_array(i)
    return None


def run_with_extra_outputs(path, feeds, names):
    """onnxruntime's values of intermediate tensors `names` on `feeds`."""
    m = onnx.load(path)
    have = {o.name for o in m.graph.output}
    for n in names:
        if n not in have:
            m.graph.output.append(helper.make_empty_tensor_value_info(n))
    values = session(m.SerializeToString()).run(names, feeds)
    return dict(zip(names, values))


def quant_step(path, feeds, output):
    """One quantization step at `output`, dequantized (see the module doc),
    and the sentence saying what it is."""
    m = onnx.load(path, load_external_data=False)
    prod = producers(m)
    node = prod.get(output)
    layer_norm = None
    # Walk back through ops that carry one input to the output unchanged in
    # scale, to the last quantized tensor.
    while node is not None and node.op_type not in ("DequantizeLinear", "MatMulInteger", "ConvInteger"):
        if node.op_type == "LayerNormalization" and layer_norm is None:
            layer_norm = node
        node = prod.get(node.input[0])
    if node is None:
        return None, "no quantized tensor before the output"
    extra = {}
    if node.op_type == "DequantizeLinear":
        scale = initializer(m, node.input[1])
        step = float(np.max(scale))
        what = f"scale of DequantizeLinear `{node.name}`"
    else:
        # MatMulInteger(a_q, w_q, a_zp, w_zp) ... Mul(a_scale * w_scale):
        # one step of one activation element moves the output by a_scale
        # times that element's weight.
        a = prod[node.input[0]]
        assert a.op_type == "DynamicQuantizeLinear", a.op_type
        w_q = initializer(m, node.input[1]).astype(np.float32)
        w_zp = initializer(m, node.input[3]) if len(node.input) > 3 and node.input[3] else 0
        # the weight scale: the Mul after the Cast multiplies by a_scale * w_scale
        w_scale = None
        for n in m.graph.node:
            if n.op_type == "Mul" and a.output[1] in n.input:
                other = [i for i in n.input if i != a.output[1]][0]
                w_scale = initializer(m, other)
        extra = run_with_extra_outputs(path, feeds, [a.output[1]])
        a_scale = float(extra[a.output[1]])
        w = (w_q - np.asarray(w_zp, np.float32)) * np.asarray(w_scale if w_scale is not None else 1.0, np.float32)
        step = a_scale * float(np.max(np.abs(w)))
        what = f"DynamicQuantizeLinear `{a.name}` scale {a_scale:.3g} x max |weight| {np.max(np.abs(w)):.3g}"
    if layer_norm is not None:
        x = layer_norm.input[0]
        sd = float(np.min(np.std(run_with_extra_outputs(path, feeds, [x])[x], axis=-1)))
        gamma = initializer(m, layer_norm.input[1])
        g = float(np.max(np.abs(gamma))) if gamma is not None else 1.0
        step = step * g / sd
        what += f", through LayerNormalization (x max|gamma| {g:.3g} / min sigma {sd:.3g})"
    return step, what


def relax_args(relax, command, path, feeds, tmp):
    args = [relax, command, path]
    for k, (name, x) in enumerate(feeds.items()):
        npy = os.path.join(tmp, f"input_{k}.npy")
        np.save(npy, x)
        args += ["--input", f"{name}={npy}"]
    return args


def run_relax(relax, path, feeds, n_outputs, tmp):
    args = relax_args(relax, "run", path, feeds, tmp)
    outs = [os.path.join(tmp, f"output_{k}.npy") for k in range(n_outputs)]
    for o in outs:
        args += ["--output", o]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        return None, (done.stderr.strip().splitlines() or ["failed"])
    return [np.load(o) for o in outs], None


def bench_relax(relax, path, feeds, runs, tmp, profile=False):
    args = relax_args(relax, "bench", path, feeds, tmp)
    args += ["--runs", str(runs), "--json"]
    if profile:
        args += ["--profile", "--top", "8"]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        return None, (done.stderr.strip().splitlines() or ["failed"])
    return json.loads(done.stdout), None


def median_ms(fn, runs):
    for _ in range(3):
        fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return 1e3 * sorted(times)[len(times) // 2]


def main():
    relax = arg("--relax")
    if relax is None:
        sys.exit(__doc__)
    relax = os.path.abspath(relax)
    exports = arg("--exports", "/work/exports")
    out = os.path.abspath(arg("--out", "/tmp/quantized"))
    runs = int(arg("--runs", "20"))
    models = arg("--only", "resnet18,bert").split(",")
    variants = arg("--variants", "fp32,dynamic,static,fp16").split(",")
    profile = "--profile" in sys.argv
    tmp = os.path.join(out, "io")
    os.makedirs(tmp, exist_ok=True)

    print(f"{os.cpu_count()} cores; onnxruntime {ort.__version__}; medians of {runs} runs", flush=True)
    rows = []
    profiles = []
    for name in models:
        src = os.path.join(exports, name)
        model = onnx.load(os.path.join(src, "model.onnx"), load_external_data=False)
        feeds = test_feeds(src, model)
        paths = make_variants(src, os.path.join(out, name), feeds, variants)
        timed = {
            k: random_feeds(model, {k: np.zeros((x.shape[0], TIMED_SEQ), x.dtype)}, np.random.default_rng(SEED))[k]
            if np.issubdtype(x.dtype, np.integer)
            else x
            for k, x in feeds.items()
        }
        print(f"{name}: checked on test_data_set_0 {[list(x.shape) for x in feeds.values()]}, timed on {[list(x.shape) for x in timed.values()]}")
        for v in variants:
            path = paths[v]
            sess = session(path)
            names = [o.name for o in sess.get_outputs()]
            ref = sess.run(None, feeds)
            got, err = run_relax(relax, path, feeds, len(names), tmp)
            row = {"model": name, "variant": v}
            if got is None:
                row["check"] = "relax run failed: " + err[-1][:100]
            else:
                diff = max(float(np.max(np.abs(g.astype(np.float64) - r))) for g, r in zip(got, ref))
                row["max_abs_diff"] = diff
                if v in ("dynamic", "static"):
                    step, what = quant_step(path, feeds, names[0])
                    row["step"] = step
                    row["step_is"] = what
                    # (float32 rounding: a difference of exactly one step
                    # is one output element rounded the other way)
                    row["ok"] = step is not None and diff <= step * (1 + 1e-5)
                    row["check"] = f"max diff {diff:.3g} = {diff / step:.2f} step (step {step:.3g})"
                else:
                    scale = max(float(np.max(np.abs(r))) for r in ref)
                    tol = (1e-2 if v == "fp16" else 1e-4) * (1 + scale)
                    row["tolerance"] = tol
                    row["ok"] = diff <= tol
                    row["check"] = f"max diff {diff:.3g} (tolerance {tol:.3g})"
            # Timing, back to back, on `timed` (BERT at sequence length 128).
            fast = session(path, os.cpu_count())
            ort_ms = median_ms(lambda: fast.run(None, timed), runs)
            bench, berr = bench_relax(relax, path, timed, runs, tmp)
            row["onnxruntime_ms"] = ort_ms
            if bench is not None:
                row["relax_ms"] = bench["ms"]["p50"]
                row["compile_s"] = bench["compile_s"]
                row["ratio"] = row["relax_ms"] / ort_ms
            else:
                row["bench_error"] = berr[-1][:100]
            rows.append(row)
            ok = {True: "ok", False: "FAIL"}.get(row.get("ok"), "FAIL")
            timing = (
                f"{ort_ms:8.2f} {row['relax_ms']:9.2f} {row['ratio']:6.2f}"
                if "ratio" in row
                else f"{ort_ms:8.2f}  bench failed: {row.get('bench_error')}"
            )
            print(f"{name:9} {v:8} {ok:4} {row['check']:58} {timing}", flush=True)
            if "step_is" in row:
                print(f"{'':23}one step: {row['step_is']}")
            if profile and v in ("dynamic", "static") and bench is not None:
                prof, _ = bench_relax(relax, path, feeds, max(5, runs // 4), tmp, profile=True)
                if prof is not None:
                    profiles.append((name, v, prof.get("profile", [])))
    print()
    print(f"{'model':9} {'variant':8} {'ok':4} {'correctness':58} {'ort ms':>8} {'relax ms':>9} {'ratio':>6}")
    for r in rows:
        ok = {True: "ok", False: "FAIL"}.get(r.get("ok"), "FAIL")
        timing = (
            f"{r['onnxruntime_ms']:8.2f} {r['relax_ms']:9.2f} {r['ratio']:6.2f}" if "ratio" in r else "bench failed"
        )
        print(f"{r['model']:9} {r['variant']:8} {ok:4} {r['check']:58} {timing}")
    for name, v, prof in profiles:
        print(f"\nslowest kernels, {name} {v} (relax bench --profile):")
        for k in prof:
            print(f"  {k['ms_per_run']:9.3f} ms {k['calls_per_run']:5} calls  {k['kernel']}")
    if arg("--json"):
        with open(arg("--json"), "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
