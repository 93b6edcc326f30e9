//! A matmul scheduled by hand, next to `DefaultSchedule`'s.
//!
//! `LegalizeOps` turns `R.matmul` into the PrimFunc `matmul` (one block,
//! `T_matmul`, under loops `i, j, k`); `ApplySchedule` runs TVM's schedule
//! primitives on it from Rust, and `relax::build` keeps that schedule
//! (the function is marked `tir.is_scheduled`). The program checks both
//! builds against the reference kernels, prints the hand schedule's trace
//! as TVM's Python and the scheduled function, and times both builds.
//!
//! Run: `cargo run --release --example schedule_matmul [-- N]` (N = 512 by
//! default: the matrices are N × N).

use relax::ir::IRModule;
use relax::tir::schedule::Schedule;
use relax::transform::{ApplySchedule, LegalizeOps, Pass};
use relax::{Error, Target, Tensor, Value, VirtualMachine};
use std::time::Instant;

fn module(n: i64) -> IRModule {
    let text = format!(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor(({n}, {n}), dtype="float32"), b: R.Tensor(({n}, {n}), dtype="float32")) -> R.Tensor(({n}, {n}), dtype="float32"):
        c = R.matmul(a, b)
        return c
"#
    );
    text.parse().expect("the module parses")
}

/// The hand schedule: tiles of 8 rows by 16 columns (one AVX-512
/// vector) accumulated in a cache (`cache_write(…, "local")`) that is
/// written back right after each tile (`reverse_compute_at`), so that
/// `ApplySchedule`'s compaction makes the cache the 8 × 16 tile; rows of
/// tiles in parallel, the tile's rows unrolled and its columns vectorized.
fn by_hand(s: &mut Schedule) -> relax::tir::schedule::Result<()> {
    let c = s.get_block("T_matmul")?;
    let [i, j, k] = s.get_loops(c)?[..] else {
        unreachable!("a matmul has three loops")
    };
    let [i0, i1] = s.split(i, &[None, Some(8)])?[..] else {
        unreachable!()
    };
    let [j0, j1] = s.split(j, &[None, Some(16)])?[..] else {
        unreachable!()
    };
    s.reorder(&[i0, j0, k, i1, j1])?;
    let write_back = s.cache_write(c, 0, "local")?;
    s.reverse_compute_at(write_back, j0)?;
    s.decompose_reduction(c, k)?;
    s.parallel(i0)?;
    s.unroll(i1)?;
    s.vectorize(j1)?;
    Ok(())
}

/// The best of `runs` timings of `main`, in seconds, and its output.
fn time(vm: &VirtualMachine, args: &[Value], runs: usize) -> Result<(f64, Vec<f32>), Error> {
    let mut best = f64::INFINITY;
    let mut out = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        let y = vm.call("main", args)?;
        best = best.min(start.elapsed().as_secs_f64());
        out = y.as_tensor().expect("a tensor").to_vec::<f32>()?;
    }
    Ok((best, out))
}

fn main() -> Result<(), Error> {
    let big_n: i64 = match std::env::args().nth(1) {
        Some(a) => a.parse().map_err(|_| {
            Error::Unsupported(format!("N must be a positive integer, found {a:?}"))
        })?,
        None => 512,
    };
    let n = big_n as usize;
    let a: Vec<f32> = (0..n * n)
        .map(|i| ((i * 7) % 17) as f32 / 17.0 - 0.5)
        .collect();
    let b: Vec<f32> = (0..n * n)
        .map(|i| ((i * 5) % 13) as f32 / 13.0 - 0.5)
        .collect();
    let args = [
        Value::Tensor(Tensor::from_vec(&[big_n, big_n], a)?),
        Value::Tensor(Tensor::from_vec(&[big_n, big_n], b)?),
    ];

    let legalized = LegalizeOps::default().run(module(big_n))?;
    let mut trace = String::new();
    let hand = ApplySchedule::default().func("matmul", by_hand);
    let scheduled = hand.run(legalized.clone())?;
    {
        // The same steps on a schedule of our own, for its trace.
        let f = legalized
            .functions()
            .find_map(|(_, f)| match f {
                relax::ir::BaseFunc::Prim(p) => Some(p.clone()),
                _ => None,
            })
            .expect("the legalized matmul");
        let mut s = Schedule::new(f);
        by_hand(&mut s).map_err(|e| Error::Unsupported(e.to_string()))?;
        trace.push_str(&s.trace().as_python());
    }
    println!("the hand schedule, as TVM's trace:\n{trace}");
    println!("the module with the scheduled matmul:\n{scheduled}");

    let reference = VirtualMachine::new(&relax::build(&module(big_n), &Target::interpreter())?);
    let (_, want) = time(&reference, &args, 1)?;
    let flops = 2.0 * (big_n * big_n * big_n) as f64;
    for (name, m) in [("DefaultSchedule", &legalized), ("by hand", &scheduled)] {
        let vm = VirtualMachine::new(&relax::build(m, &Target::host())?);
        let (secs, got) = time(&vm, &args, 20)?;
        let err = got
            .iter()
            .zip(&want)
            .map(|(g, w)| (g - w).abs())
            .fold(0.0f32, f32::max);
        assert!(err < 1e-3, "{name}: differs from the reference by {err}");
        println!(
            "{name:>16}: {:8.3} ms  {:6.1} GFLOPS  (max |diff| {err:.1e})",
            secs * 1e3,
            flops / secs / 1e9
        );
    }
    Ok(())
}
