"""The PyTorch exports through the two ways a user runs them: `relax run`
and `relax::aot::Builder::onnx` in a crate's build.rs.

For each model folder that `scripts/export_torch.py` wrote (`DIR/<name>/
model.onnx` with `model.onnx.data` and `test_data_set_<k>/` holding the
input and PyTorch's output at one batch size and sequence length each):

1. `relax compile` (target/release/relax, `cargo build --release -p
   relax-cli`) once into a package (`model.relax`), then `relax run` of
   that one package on each data set's input, written as `.npy`: every
   batch size and sequence length from one compiled executable;
2. a throwaway crate whose build.rs compiles the model once with
   `aot::Builder::onnx` and whose `main` runs every data set through that
   one compiled module.

Each output is compared with PyTorch's at the acceptance tolerance of the
ONNX issue: |relax - torch| <= 1e-3 * |torch| + 1e-3 * std(torch). It
prints, per model, the import and compile time `relax compile` reports,
the wall time of each `relax run` call (loading the package and running
it), the AOT build time
(import and compile in build.rs), and pass or fail on each path:

    python3 scripts/check_exports.py DIR [NAME ...] [--relax BIN] [--no-aot]

(venv: numpy, onnx). The AOT crates share one target directory,
`target/check-exports`, so relax-rs and its dependencies build once.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CARGO_TOML = """[package]
name = "check-export"
version = "0.1.0"
edition = "2021"
publish = false

[dependencies]
relax = {{ path = "{root}", default-features = false, features = ["onnx"] }}

[build-dependencies]
relax = {{ path = "{root}", features = ["aot", "onnx"] }}

# The build script compiles the model: optimize it and the compiler.
[profile.dev.build-override]
opt-level = 3

[workspace]
"""

BUILD_RS = """fn main() {{
    relax::aot::Builder::new().onnx({model}, "model").compile("models");
}}
"""

MAIN_RS = """include!(env!("RELAX_AOT_MODULE_model"));

use relax::ndarray::{{ArrayD, Dimension}};

fn read(path: &str) -> relax::Tensor {{
    let bytes = std::fs::read(path).expect(path);
    relax::frontend::onnx::decode_tensor(&bytes).expect(path).1
}}

fn main() {{
    let mut failed = false;
    for set in {sets} {{
        let x = read(&format!("{{set}}/input_0.pb"));
        let want: ArrayD<f32> = read(&format!("{{set}}/output_0.pb")).to_ndarray::<f32>().unwrap();
        let x = x.to_ndarray::<{elem}>().unwrap().into_dimensionality::<relax::ndarray::{ix}>().unwrap();
        let t = std::time::Instant::now();
        let got = model::main(&x).expect("the compiled model runs").into_dyn();
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let n = want.len() as f32;
        let mean = want.sum() / n;
        let std = (want.mapv(|v| (v - mean) * (v - mean)).sum() / n).sqrt();
        let mut worst = 0.0f32;
        let mut ok = got.shape() == want.shape();
        if ok {{
            for (a, b) in got.iter().zip(want.iter()) {{
                let excess = (a - b).abs() - (1e-3 * b.abs() + 1e-3 * std);
                worst = worst.max((a - b).abs());
                ok &= excess <= 0.0;
            }}
        }}
        failed |= !ok;
        println!("{{}} {{set}} shape {{:?}} max |diff| {{worst:.2e}} (std {{std:.2e}}) in {{ms:.1}} ms",
            if ok {{ "ok" }} else {{ "FAIL" }}, got.raw_dim().slice());
    }}
    if failed {{
        std::process::exit(1);
    }}
}}
"""


def close(got, want):
    if got.shape != want.shape:
        return False, float("inf")
    tol = 1e-3 * np.abs(want) + 1e-3 * want.std()
    diff = np.abs(got.astype(np.float64) - want)
    return bool((diff <= tol).all()), float(diff.max())


def data_sets(folder):
    return sorted(
        os.path.join(folder, d) for d in os.listdir(folder) if d.startswith("test_data_set_")
    )


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def check_run(relax, folder, model, tmp):
    """Compiles the model once with `relax compile`, then runs every data
    set from the one package with `relax run`. Returns the compile step's
    report (ok, text, seconds) and one (ok, text, seconds) per data set."""
    name = model.graph.input[0].name
    package = os.path.join(tmp, "model.relax")
    t = time.perf_counter()
    done = subprocess.run(
        [relax, "compile", os.path.join(folder, "model.onnx"), "-o", package],
        capture_output=True,
        text=True,
    )
    took = time.perf_counter() - t
    if done.returncode != 0:
        return (False, done.stderr.strip()[-300:], took), []
    # `relax compile` says: "<model>: imported in A s, compiled in B s for <cpu>; wrote …".
    compiled = (True, done.stdout.strip().split(": ", 1)[-1], took)
    results = []
    for ds in data_sets(folder):
        x = load_pb(os.path.join(ds, "input_0.pb"))
        want = load_pb(os.path.join(ds, "output_0.pb"))
        xin, yout = os.path.join(tmp, "x.npy"), os.path.join(tmp, "y.npy")
        np.save(xin, x)
        t = time.perf_counter()
        done = subprocess.run(
            [relax, "run", package, "--input", f"{name}={xin}", "--output", yout],
            capture_output=True,
            text=True,
        )
        took = time.perf_counter() - t
        if done.returncode != 0:
            results.append((False, f"{os.path.basename(ds)}: {done.stderr.strip()[-200:]}", took))
            continue
        ok, worst = close(np.load(yout), want)
        results.append((ok, f"{os.path.basename(ds)} {list(x.shape)} max |diff| {worst:.2e}", took))
    os.remove(package)
    return compiled, results


def check_aot(folder, model, crate, target):
    inp = model.graph.input[0]
    rank = len(inp.type.tensor_type.shape.dim)
    elem = "i64" if inp.type.tensor_type.elem_type == onnx.TensorProto.INT64 else "f32"
    os.makedirs(os.path.join(crate, "src"), exist_ok=True)
    with open(os.path.join(crate, "Cargo.toml"), "w") as f:
        f.write(CARGO_TOML.format(root=ROOT))
    with open(os.path.join(crate, "build.rs"), "w") as f:
        f.write(BUILD_RS.format(model=json.dumps(os.path.join(folder, "model.onnx"))))
    with open(os.path.join(crate, "src", "main.rs"), "w") as f:
        f.write(MAIN_RS.format(sets=json.dumps(data_sets(folder)), elem=elem, ix=f"Ix{rank}"))
    env = dict(os.environ, CARGO_TARGET_DIR=target)
    t = time.perf_counter()
    build = subprocess.run(
        ["cargo", "build", "--quiet", "--manifest-path", os.path.join(crate, "Cargo.toml")],
        capture_output=True,
        text=True,
        env=env,
    )
    took = time.perf_counter() - t
    if build.returncode != 0:
        return False, build.stderr.strip()[-400:], took
    run = subprocess.run(
        [os.path.join(target, "debug", "check-export")], capture_output=True, text=True
    )
    return run.returncode == 0, (run.stdout + run.stderr).strip(), took


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    relax = sys.argv[sys.argv.index("--relax") + 1] if "--relax" in sys.argv else os.path.join(ROOT, "target/release/relax")
    args = [a for a in args if a != relax]
    root, names = args[0], args[1:]
    names = names or sorted(n for n in os.listdir(root) if os.path.exists(os.path.join(root, n, "model.onnx")))
    target = os.path.join(ROOT, "target", "check-exports")
    passed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            folder = os.path.abspath(os.path.join(root, name))
            model = onnx.load(os.path.join(folder, "model.onnx"), load_external_data=False)
            compiled, run = check_run(relax, folder, model, tmp)
            print(f"  compile    {'ok  ' if compiled[0] else 'FAIL'} {compiled[1]} (wall {compiled[2]:.1f} s)")
            ok = compiled[0] and bool(run) and all(r[0] for r in run)
            for r in run:
                print(f"  relax run  {'ok  ' if r[0] else 'FAIL'} {r[1]} (load + run {r[2]:.2f} s)")
            if "--no-aot" not in sys.argv:
                aot_ok, text, took = check_aot(folder, model, os.path.join(tmp, "crate"), target)
                for line in text.splitlines():
                    print(f"  aot        {line}")
                print(f"  aot        build (import + compile) {took:.1f} s")
                ok &= aot_ok
            print(f"{'ok  ' if ok else 'FAIL'} {name}", flush=True)
            passed += ok
    print(f"{passed} of {len(names)} models match PyTorch on every path")


if __name__ == "__main__":
    main()
