//! `cargo bench --bench matmul_mlp`: how fast compiled code is, with every
//! figure measured in the same run so the ratios are meaningful on a busy
//! machine.
//!
//! 1. The FMA peak of one core: independent `_mm512_fmadd_ps` chains with
//!    AVX-512, `_mm256_fmadd_ps` chains with AVX2 and FMA (detected at run
//!    time), else scalar `mul_add` chains.
//! 2. Our matmul (`R.matmul` of two square f32 matrices, a one-op module
//!    built for `Target::host()`), timed through `vm.call` (argument checks
//!    and output allocation included) and as kernel time alone, against
//!    ndarray's `dot` on the same data, at 256, 512 and 1024.
//! 3. The main example's digits MLP (x (n, 64), w0 (128, 64), b0 (128,),
//!    w1 (10, 128), b1 (10,)) at batch 1 and 64 through `Target::host()`
//!    against the same computation in ndarray, with the VM's share of the
//!    batch-1 time split into argument checking, output allocation,
//!    dispatch and kernel time.
//! 4. The VM's own cost per call: a one-op module (`R.add` of two
//!    one-element tensors) through `vm.call`, against calling its compiled
//!    kernel directly with an output allocated once. The difference is what
//!    the VM adds (argument checks, output allocation, dispatch).
//!
//! `cargo bench --bench matmul_mlp -- call` runs section 4 alone.
//!
//! Every figure is the median of repeated samples (the peak: the best
//! sample, since sharing the machine only slows samples down); a sample
//! repeats a call until it lasts about a millisecond. Kernel time is
//! measured by wrapping the JIT library in one that times each kernel call;
//! the end-to-end latency is measured without that wrapper.

use ndarray::{Array1, Array2, Axis};
use relax::ir::IRModule;
use relax::native::{NativeKernel, NativeLibrary};
use relax::{build, Executable, Target, Tensor, Value, VirtualMachine};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The shortest a sample may be: shorter calls are repeated inside it.
const SAMPLE: Duration = Duration::from_millis(1);

/// Median seconds per call of `f`, sampling for about `budget` (at least
/// five samples).
fn measure(budget: Duration, f: impl FnMut()) -> f64 {
    median(&mut samples(budget, f))
}

/// Seconds per call of `f`, one value per sample.
fn samples(budget: Duration, mut f: impl FnMut()) -> Vec<f64> {
    f(); // warm up: caches, lazily started thread pool, page faults
    let t = Instant::now();
    f();
    let once = t.elapsed().max(Duration::from_nanos(20));
    let reps = (SAMPLE.as_secs_f64() / once.as_secs_f64()).ceil().max(1.0) as u32;
    let mut samples = Vec::new();
    let start = Instant::now();
    while samples.len() < 5 || (start.elapsed() < budget && samples.len() < 1000) {
        let t = Instant::now();
        for _ in 0..reps {
            f();
        }
        samples.push(t.elapsed().as_secs_f64() / f64::from(reps));
    }
    samples
}

/// The fastest sample: a peak is what the core can do, and sharing the
/// machine only ever slows a sample down.
fn best(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[0]
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

// ---- FMA peak ---------------------------------------------------------------

/// One core's peak in GFLOPS (an FMA is two flops) and how it was measured.
fn fma_peak() -> (f64, &'static str) {
    #[cfg(target_arch = "x86_64")]
    {
        if is_x86_feature_detected!("avx512f") {
            const ITERS: u64 = 1 << 22;
            let secs = best(samples(Duration::from_millis(600), || {
                // SAFETY: the feature was detected above.
                black_box(unsafe { avx512::fma_chains(ITERS) });
            }));
            // 12 chains of 16 lanes, two flops per lane.
            let flops = ITERS as f64 * 12.0 * 16.0 * 2.0;
            return (flops / secs / 1e9, "AVX-512 _mm512_fmadd_ps, 12 chains");
        }
        if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
            const ITERS: u64 = 1 << 22;
            let secs = best(samples(Duration::from_millis(600), || {
                // SAFETY: the features were detected above.
                black_box(unsafe { avx2::fma_chains(ITERS) });
            }));
            // 12 chains of 8 lanes, two flops per lane.
            let flops = ITERS as f64 * 12.0 * 8.0 * 2.0;
            return (flops / secs / 1e9, "AVX2 _mm256_fmadd_ps, 12 chains");
        }
    }
    const ITERS: u64 = 1 << 20;
    let secs = best(samples(Duration::from_millis(600), || {
        black_box(scalar_fma_chains(ITERS));
    }));
    (
        ITERS as f64 * 8.0 * 2.0 / secs / 1e9,
        "scalar mul_add, 8 chains",
    )
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// `iters` rounds of 12 independent FMAs (enough chains to cover the
    /// FMA latency on two ports); returns a sum so nothing is dropped.
    #[target_feature(enable = "avx2,fma")]
    pub unsafe fn fma_chains(iters: u64) -> f32 {
        let a = _mm256_set1_ps(0.999_999);
        let b = _mm256_set1_ps(1e-7);
        let mut acc = [_mm256_set1_ps(1.0); 12];
        for _ in 0..iters {
            for x in acc.iter_mut() {
                *x = _mm256_fmadd_ps(*x, a, b);
            }
        }
        let mut sum = _mm256_setzero_ps();
        for x in acc {
            sum = _mm256_add_ps(sum, x);
        }
        let mut out = [0.0f32; 8];
        _mm256_storeu_ps(out.as_mut_ptr(), sum);
        out.iter().sum()
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    /// [`super::avx2::fma_chains`] on 512-bit registers.
    #[target_feature(enable = "avx512f")]
    pub unsafe fn fma_chains(iters: u64) -> f32 {
        let a = _mm512_set1_ps(0.999_999);
        let b = _mm512_set1_ps(1e-7);
        let mut acc = [_mm512_set1_ps(1.0); 12];
        for _ in 0..iters {
            for x in acc.iter_mut() {
                *x = _mm512_fmadd_ps(*x, a, b);
            }
        }
        acc.iter().map(|&x| _mm512_reduce_add_ps(x)).sum()
    }
}

fn scalar_fma_chains(iters: u64) -> f32 {
    let mut acc = [1.0f32; 8];
    let (a, b) = (black_box(0.999_999f32), black_box(1e-7f32));
    for _ in 0..iters {
        for x in acc.iter_mut() {
            *x = x.mul_add(a, b);
        }
    }
    acc.iter().sum()
}

// ---- kernel timing ------------------------------------------------------------

/// A library that forwards to another and adds up the time spent in
/// kernel calls.
struct TimedLibrary {
    inner: Arc<dyn NativeLibrary>,
    nanos: Arc<AtomicU64>,
    per_kernel: Arc<PerKernel>,
}

/// Nanoseconds and calls by kernel symbol.
type PerKernel = Mutex<BTreeMap<String, (u64, u64)>>;

struct TimedKernel {
    symbol: String,
    inner: Arc<dyn NativeKernel>,
    nanos: Arc<AtomicU64>,
    per_kernel: Arc<PerKernel>,
}

impl NativeKernel for TimedKernel {
    fn call(
        &self,
        inputs: &[&Tensor],
        outputs: &mut [Tensor],
        scalars: &[i64],
    ) -> Result<(), String> {
        let t = Instant::now();
        let r = self.inner.call(inputs, outputs, scalars);
        let ns = t.elapsed().as_nanos() as u64;
        self.nanos.fetch_add(ns, Ordering::Relaxed);
        let mut per = self.per_kernel.lock().expect("not poisoned");
        let e = per.entry(self.symbol.clone()).or_default();
        e.0 += ns;
        e.1 += 1;
        r
    }
}

impl NativeLibrary for TimedLibrary {
    fn lookup(&self, symbol: &str) -> Option<Arc<dyn NativeKernel>> {
        let inner = self.inner.lookup(symbol)?;
        Some(Arc::new(TimedKernel {
            symbol: symbol.to_string(),
            inner,
            nanos: self.nanos.clone(),
            per_kernel: self.per_kernel.clone(),
        }))
    }
    fn describe(&self) -> String {
        format!("timed {}", self.inner.describe())
    }
}

/// `exec` with its kernels timed into the returned counters.
fn timed(exec: Executable) -> (Executable, Arc<AtomicU64>, Arc<PerKernel>) {
    let nanos = Arc::new(AtomicU64::new(0));
    let per_kernel = Arc::new(PerKernel::default());
    let inner = exec.library.clone().expect("a host build has a library").0;
    let lib = TimedLibrary {
        inner,
        nanos: nanos.clone(),
        per_kernel: per_kernel.clone(),
    };
    (exec.with_library(Arc::new(lib)), nanos, per_kernel)
}

/// A build run two ways: as compiled, and with its kernels timed.
struct Runner {
    plain: VirtualMachine,
    timed: VirtualMachine,
    nanos: Arc<AtomicU64>,
    per_kernel: Arc<PerKernel>,
}

impl Runner {
    fn new(exec: Executable) -> Self {
        let plain = VirtualMachine::new(&exec);
        let (exec, nanos, per_kernel) = timed(exec);
        Runner {
            plain,
            timed: VirtualMachine::new(&exec),
            nanos,
            per_kernel,
        }
    }

    /// Median seconds per call of `main` (untimed kernels, so the wrapper's
    /// own cost is not counted) and the median kernel seconds of a call.
    /// The per-kernel table holds the calls of the second measurement only.
    fn measure(&self, args: &[Value], budget: Duration) -> (f64, f64) {
        let total = measure(budget / 2, || {
            black_box(self.plain.call("main", args).expect("main runs"));
        });
        self.timed.call("main", args).expect("main runs");
        self.per_kernel.lock().expect("not poisoned").clear();
        let mut kernel = Vec::new();
        measure(budget / 2, || {
            let before = self.nanos.load(Ordering::Relaxed);
            black_box(self.timed.call("main", args).expect("main runs"));
            kernel.push((self.nanos.load(Ordering::Relaxed) - before) as f64 * 1e-9);
        });
        (total, median(&mut kernel))
    }
}

// ---- data -----------------------------------------------------------------------

/// Deterministic values in [-1, 1) (a linear congruential generator).
fn random(rows: usize, cols: usize, seed: u64) -> Array2<f32> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    Array2::from_shape_fn((rows, cols), |_| {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    })
}

fn parse(text: &str) -> IRModule {
    text.parse()
        .unwrap_or_else(|e| panic!("the benchmark module does not parse: {e}"))
}

fn matmul_module(n: usize) -> IRModule {
    parse(&format!(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor(({n}, {n}), dtype="float32"), b: R.Tensor(({n}, {n}), dtype="float32")) -> R.Tensor(({n}, {n}), dtype="float32"):
        with R.dataflow():
            c: R.Tensor(({n}, {n}), dtype="float32") = R.matmul(a, b, out_dtype="void")
            R.output(c)
        return c
"#
    ))
}

/// The main example's digits MLP, batch size symbolic.
const MLP: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 64), dtype="float32"), w0: R.Tensor((128, 64), dtype="float32"), b0: R.Tensor((128,), dtype="float32"), w1: R.Tensor((10, 128), dtype="float32"), b1: R.Tensor((10,), dtype="float32")) -> R.Tensor(("n", 10), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            lv0: R.Tensor((64, 128), dtype="float32") = R.permute_dims(w0, axes=None)
            lv1: R.Tensor((n, 128), dtype="float32") = R.matmul(x, lv0, out_dtype="void")
            lv2: R.Tensor((n, 128), dtype="float32") = R.add(lv1, b0)
            lv3: R.Tensor((n, 128), dtype="float32") = R.nn.relu(lv2)
            lv4: R.Tensor((128, 10), dtype="float32") = R.permute_dims(w1, axes=None)
            lv5: R.Tensor((n, 10), dtype="float32") = R.matmul(lv3, lv4, out_dtype="void")
            gv: R.Tensor((n, 10), dtype="float32") = R.add(lv5, b1)
            R.output(gv)
        return gv
"#;

/// The MLP's weights already transposed: what FoldConstant leaves of the
/// model when its weights are constants.
const MLP_FOLDED: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 64), dtype="float32"), w0t: R.Tensor((64, 128), dtype="float32"), b0: R.Tensor((128,), dtype="float32"), w1t: R.Tensor((128, 10), dtype="float32"), b1: R.Tensor((10,), dtype="float32")) -> R.Tensor(("n", 10), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            lv1: R.Tensor((n, 128), dtype="float32") = R.matmul(x, w0t, out_dtype="void")
            lv2: R.Tensor((n, 128), dtype="float32") = R.add(lv1, b0)
            lv3: R.Tensor((n, 128), dtype="float32") = R.nn.relu(lv2)
            lv5: R.Tensor((n, 10), dtype="float32") = R.matmul(lv3, w1t, out_dtype="void")
            gv: R.Tensor((n, 10), dtype="float32") = R.add(lv5, b1)
            R.output(gv)
        return gv
"#;

/// A module with a model's parameters (its `def main` line replaces
/// SIGNATURE, returning `x`'s type) whose body only returns `x`: what a
/// call costs before any kernel runs (argument checks, frames).
const MLP_SIGNATURE_ONLY: &str = r#"
@I.ir_module
class Module:
    @R.function
SIGNATURE
        return x
"#;

/// The MLP's weights, as ndarray has them.
struct Weights {
    w0: Array2<f32>,
    b0: Array1<f32>,
    w1: Array2<f32>,
    b1: Array1<f32>,
}

/// How the compiled MLP receives its weights.
#[derive(Clone, Copy)]
enum Variant {
    /// As parameters in ndarray's layout (transposed by the model).
    Parameters,
    /// Already transposed.
    Folded,
}

/// Measures one variant at batch 1 and 64, prints a row each and records
/// the per-kernel times.
fn mlp_rows(variant: Variant, w: &Weights, breakdowns: &mut Vec<String>) {
    let (text, label) = match variant {
        Variant::Parameters => (MLP, "params"),
        Variant::Folded => (MLP_FOLDED, "folded"),
    };
    let exec = build(&parse(text), &Target::host()).expect("the MLP builds");
    let runner = Runner::new(exec);
    let def_main = text
        .lines()
        .find(|l| l.contains("def main"))
        .expect("the model has a main")
        .replace(r#"-> R.Tensor(("n", 10)"#, r#"-> R.Tensor(("n", 64)"#);
    let sig_text = MLP_SIGNATURE_ONLY.replace("SIGNATURE", &def_main);
    let sig = build(&parse(&sig_text), &Target::host()).expect("the signature builds");
    let sig_vm = VirtualMachine::new(&sig);
    for batch in [1usize, 64] {
        let x = random(batch, 64, 7);
        let (w0, w1) = match variant {
            Variant::Parameters => (w.w0.clone(), w.w1.clone()),
            Variant::Folded => (w.w0.t().to_owned(), w.w1.t().to_owned()),
        };
        let args: Vec<Value> = vec![
            Tensor::from(&x).into(),
            Tensor::from(&w0).into(),
            Tensor::from(&w.b0).into(),
            Tensor::from(&w1).into(),
            Tensor::from(&w.b1).into(),
        ];
        let ours = to_array2(&runner.plain.call("main", &args).expect("the MLP runs"));
        let want = ndarray_mlp(&x, &w.w0, &w.b0, &w.w1, &w.b1);
        let diff = max_diff(&ours, &want);
        assert!(diff < 1e-3, "MLP batch {batch}: off by {diff}");
        let budget = Duration::from_millis(2000);
        let (total, kernel) = runner.measure(&args, budget);
        let nd = measure(budget, || {
            black_box(ndarray_mlp(&x, &w.w0, &w.b0, &w.w1, &w.b1));
        });
        let checks = measure(Duration::from_millis(400), || {
            black_box(sig_vm.call("main", &args).expect("runs"));
        });
        // The outputs the VM allocates (zero-filled).
        let b = batch as i64;
        let mut shapes: Vec<Vec<i64>> = vec![
            vec![b, 128],
            vec![b, 128],
            vec![b, 128],
            vec![b, 10],
            vec![b, 10],
        ];
        if let Variant::Parameters = variant {
            shapes.extend([vec![64, 128], vec![128, 10]]);
        }
        let allocs = measure(Duration::from_millis(400), || {
            for s in &shapes {
                black_box(Tensor::zeros(relax::DataType::f32(), s).expect("allocates"));
            }
        });
        let dispatch = total - kernel - checks - allocs;
        println!(
            "{:>10} {:>6} | {:>11} | {:>11} | {:>8.2} | {:>11} {:>11} {:>11} {:>11}",
            label,
            batch,
            micros(total),
            micros(nd),
            total / nd,
            micros(checks),
            micros(allocs),
            micros(kernel),
            micros(dispatch),
        );
        let per = runner.per_kernel.lock().expect("not poisoned");
        let line = per
            .iter()
            .map(|(k, (ns, calls))| format!("{k} {:.2}", *ns as f64 / *calls as f64 / 1e3))
            .collect::<Vec<_>>()
            .join(", ");
        breakdowns.push(format!("{label}, batch {batch}: {line}"));
    }
}

/// The VM's overhead on a one-op module over one-element tensors: seconds
/// per `vm.call` and per direct call of its compiled kernel.
fn call_overhead() -> (f64, f64) {
    let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1,), dtype="float32"), y: R.Tensor((1,), dtype="float32")) -> R.Tensor((1,), dtype="float32"):
        z: R.Tensor((1,), dtype="float32") = R.add(x, y)
        return z
"#;
    let exec = build(&parse(text), &Target::host()).expect("the one-op module builds");
    let vm = VirtualMachine::new(&exec);
    let (x, y) = (
        Tensor::from_slice(&[1], &[2.0f32]).expect("a tensor"),
        Tensor::from_slice(&[1], &[3.0f32]).expect("a tensor"),
    );
    let args: Vec<Value> = vec![x.clone().into(), y.clone().into()];
    let z = vm.call("main", &args).expect("main runs");
    assert_eq!(
        z.as_tensor().and_then(|t| t.to_vec::<f32>().ok()),
        Some(vec![5.0])
    );
    let [symbol] = exec.natives.as_slice() else {
        panic!("one kernel expected, found {:?}", exec.natives);
    };
    let library = exec.library.as_ref().expect("a host build has a library");
    let kernel = library
        .0
        .lookup(symbol)
        .expect("the kernel is in the library");
    let mut out = vec![Tensor::zeros(relax::DataType::f32(), &[1]).expect("allocates")];
    let budget = Duration::from_millis(1500);
    let direct = measure(budget, || {
        kernel
            .call(&[&x, &y], &mut out, &[])
            .expect("the kernel runs");
        black_box(&out);
    });
    let total = measure(budget, || {
        black_box(vm.call("main", &args).expect("main runs"));
    });
    (total, direct)
}

fn print_call_overhead() {
    let (total, direct) = call_overhead();
    println!(
        "\nVM call overhead, one-op module (R.add of two (1,) tensors) on Target::host():\n  \
         vm.call {} | kernel called directly {} | overhead {} (target: under 0.50 us)",
        micros(total),
        micros(direct),
        micros(total - direct)
    );
}

fn ndarray_mlp(
    x: &Array2<f32>,
    w0: &Array2<f32>,
    b0: &Array1<f32>,
    w1: &Array2<f32>,
    b1: &Array1<f32>,
) -> Array2<f32> {
    let h = (x.dot(&w0.t()) + b0).mapv_into(|v| v.max(0.0));
    h.dot(&w1.t()) + b1
}

fn max_diff(a: &Array2<f32>, b: &Array2<f32>) -> f32 {
    a.iter()
        .zip(b.iter())
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

fn to_array2(v: &Value) -> Array2<f32> {
    v.as_tensor()
        .expect("a tensor result")
        .to_ndarray::<f32>()
        .expect("float32")
        .into_dimensionality()
        .expect("rank 2")
}

fn micros(s: f64) -> String {
    format!("{:.2} us", s * 1e6)
}

fn main() {
    if std::env::args().any(|a| a == "call") {
        // `cargo bench --bench matmul_mlp -- call`: only section 4.
        print_call_overhead();
        return;
    }
    let started = Instant::now();
    let threads = relax_runtime::parallel::num_threads();
    println!("relax-rs matmul / MLP benchmark (release build; medians of repeated samples)");
    println!(
        "kernel threads: {threads} (set RELAX_NUM_THREADS to change); ndarray's dot: one thread\n"
    );

    let (peak, how) = fma_peak();
    println!("FMA peak, one core: {peak:.1} GFLOPS ({how})\n");

    println!("matmul C = A B, square f32, R.matmul on Target::host()");
    println!(
        "{:>6} | {:>12} {:>12} | {:>12} | {:>9} {:>9} {:>11}",
        "n", "ours vm.call", "ours kernel", "ndarray dot", "ours/nd", "ours/peak", "ours/(peak*t)"
    );
    println!("{}", "-".repeat(88));
    for n in [256usize, 512, 1024] {
        let exec = build(&matmul_module(n), &Target::host()).expect("matmul builds");
        let runner = Runner::new(exec);
        let (a, b) = (random(n, n, 1), random(n, n, 2));
        let args: Vec<Value> = vec![Tensor::from(&a).into(), Tensor::from(&b).into()];
        let ours = to_array2(&runner.plain.call("main", &args).expect("matmul runs"));
        let want = a.dot(&b);
        let diff = max_diff(&ours, &want);
        assert!(diff < 1e-3 * n as f32, "matmul {n}: off by {diff}");
        let budget = Duration::from_millis(if n >= 1024 { 4000 } else { 1200 });
        let (total, kernel) = runner.measure(&args, budget);
        let nd = measure(budget, || {
            black_box(a.dot(&b));
        });
        let flops = 2.0 * (n as f64).powi(3);
        let g = |s: f64| flops / s / 1e9;
        println!(
            "{:>6} | {:>7.1} GF/s {:>7.1} GF/s | {:>7.1} GF/s | {:>9.2} {:>9.2} {:>11.2}",
            n,
            g(total),
            g(kernel),
            g(nd),
            nd / total,
            g(total) / peak,
            g(total) / (peak * threads as f64),
        );
    }

    println!("\ndigits MLP: x (n, 64) -> 128 -> relu -> 10, Target::host() vs ndarray");
    let (w0, w1) = (random(128, 64, 3), random(10, 128, 4));
    let b0 = random(128, 1, 5).index_axis(Axis(1), 0).to_owned();
    let b1 = random(10, 1, 6).index_axis(Axis(1), 0).to_owned();
    let weights = Weights { w0, b0, w1, b1 };
    println!(
        "{:>10} {:>6} | {:>11} | {:>11} | {:>8} | {:>11} {:>11} {:>11} {:>11}",
        "weights",
        "batch",
        "ours",
        "ndarray",
        "ours/nd",
        "arg checks",
        "out allocs",
        "kernels",
        "dispatch"
    );
    println!("{}", "-".repeat(111));
    let mut breakdowns = Vec::new();
    for variant in [Variant::Parameters, Variant::Folded] {
        mlp_rows(variant, &weights, &mut breakdowns);
    }
    println!("\nmean time per kernel call (us, timing overhead included):");
    for line in breakdowns {
        println!("  {line}");
    }
    println!(
        "\nparams: the weights are parameters, so w0 and w1 are transposed on every call.\n\
         folded: the weights arrive transposed, which is what the pipeline's FoldConstant\n\
         leaves when the weights are bound as constants (permute_dims folded at build time).\n\
         ours/nd is a latency ratio (below 1: faster than ndarray); dispatch = total - checks\n\
         - allocations - kernels; ndarray computes x w0^T + b0, relu, w1^T + b1 on views."
    );
    print_call_overhead();
    println!(
        "total benchmark time: {:.1} s",
        started.elapsed().as_secs_f64()
    );
}
