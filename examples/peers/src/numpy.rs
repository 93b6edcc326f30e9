//! numpy as a peer: the same rows timed by a Python script in a child
//! process (`$PEERS_PYTHON`, default `python3`), run in the same minute as
//! the Rust peers. numpy is skipped when that Python cannot import it.

use std::collections::BTreeMap;
use std::process::Command;

/// The script: one line `row seconds` per row, with the same shapes and
/// the same computations as the Rust peers.
const SCRIPT: &str = r#"
import sys, time
import numpy as np
rng = np.random.default_rng(0)
def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)
def timeit(f):
    f()
    t = time.perf_counter(); f(); once = max(time.perf_counter() - t, 5e-8)
    reps = max(1, int(0.002 / once))
    samples = []
    for _ in range(int(sys.argv[1])):
        f()
        t = time.perf_counter()
        for _ in range(reps):
            f()
        samples.append((time.perf_counter() - t) / reps)
    samples.sort()
    return samples[len(samples) // 2]
w0, b0, w1, b1 = f32(128, 784), f32(128), f32(10, 128), f32(10)
for batch in (1, 16, 64, 256):
    x = f32(batch, 784)
    print(f"mlp_b{batch}", timeit(lambda: np.maximum(x @ w0.T + b0, 0) @ w1.T + b1))
x = f32(64, 1000)
def softmax():
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
print("softmax", timeit(softmax))
x, g, b = f32(64, 768), f32(768), f32(768)
def layer_norm():
    m = x.mean(axis=-1, keepdims=True)
    v = x.var(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * g + b
print("layer_norm", timeit(layer_norm))
n = 1 << 22
x, y, z = f32(n), f32(n), f32(n)
print("add_relu", timeit(lambda: np.maximum(x + y, 0)))
print("chain3", timeit(lambda: np.maximum((x + y) * z, 0)))
a = f32(4096, 4096)
print("transpose", timeit(lambda: np.ascontiguousarray(a.T)))
x = f32(4096, 1024)
print("sum_rows", timeit(lambda: x.sum(axis=1)))
print("sum_cols", timeit(lambda: x.sum(axis=0)))
for n in (64, 128, 256, 512, 1024, 2048):
    a, b = f32(n, n), f32(n, n)
    print(f"gemm_{n}", timeit(lambda: a @ b))
"#;

/// Seconds per call for each row, or why numpy could not run.
pub fn times(rounds: usize) -> Result<BTreeMap<String, f64>, String> {
    let python = std::env::var("PEERS_PYTHON").unwrap_or_else(|_| "python3".into());
    let out = Command::new(&python)
        .arg("-c")
        .arg(SCRIPT)
        .arg(rounds.to_string())
        .output()
        .map_err(|e| format!("{python}: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().last().unwrap_or("failed").to_string();
        return Err(format!("{python}: {last}"));
    }
    let mut rows = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        if let Some((name, secs)) = line.split_once(' ') {
            if let Ok(s) = secs.trim().parse::<f64>() {
                rows.insert(name.to_string(), s);
            }
        }
    }
    Ok(rows)
}
