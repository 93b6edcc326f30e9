//! Timing the candidates of one kernel on this machine (feature "llvm").
//!
//! 1. Every candidate's scheduled PrimFunc is JIT-compiled, together, as
//!    `relax::build` compiles kernels (LLVM at O3 for the host CPU).
//! 2. The kernel's buffers get their shapes from the unscheduled
//!    PrimFunc, a symbolic dim (and a scalar parameter) bound by name to
//!    the value given, else to [`DEFAULT_DIM`]; they are filled with
//!    random values from a fixed seed: floats in `[-1, 1]`, integers in
//!    `[0, 4)` (valid indices of any axis the kernel gathers along, and
//!    small enough that integer sums never overflow).
//! 3. The default candidate (index 0) runs first; every other candidate
//!    runs on copies of the same inputs and must leave every buffer as
//!    the default did: integers exactly, floats within [`rtol`] of the
//!    largest magnitude of the buffer (a schedule may sum in another
//!    order, module docs of `DefaultSchedule`). A candidate that differs
//!    is rejected, never timed.
//! 4. The others are timed in rounds, one call of each per round so that
//!    load from other processes spreads over all of them; each keeps its
//!    best time. Rounds continue until the default has run
//!    [`TIME_BUDGET`] or [`MAX_ROUNDS`] times (at least [`MIN_ROUNDS`]).
//! 5. Before each timed call the candidate's buffers are flushed from the
//!    caches (`flush`, MetaSchedule's `enable_cpu_cache_flush`): in a
//!    model a kernel's weights come from memory, not from the cache its
//!    previous call left them in. Timed warm, two of ResNet-50's tuned
//!    convolutions ran faster alone but 4–15% slower in the model than
//!    the default (a 64 → 256 pointwise layer with its residual: 0.74–0.84
//!    ms against 0.71–0.74; a 3 × 3 layer: 0.61–0.62 against 0.53–0.55);
//!    timed cold, their tuned versions ran in 0.68–0.73 and 0.56–0.57 ms
//!    (2-core Intel Xeon, 2026-11-29).

use super::space::Candidate;
use crate::codegen::llvm::{jit, scalar_abi, CodegenOptions};
use crate::ir::prim_expr::TirVar;
use crate::tir::PrimFunc;
use relax_runtime::{DataType, Tensor};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The value of a symbolic dim no binding names (a batch of one).
pub const DEFAULT_DIM: i64 = 1;
/// The time the default candidate is run for, in total, at most.
pub const TIME_BUDGET: Duration = Duration::from_millis(150);
/// The fewest rounds of timing.
pub const MIN_ROUNDS: usize = 3;
/// The most rounds of timing.
pub const MAX_ROUNDS: usize = 25;
/// The largest buffers (bytes, all together) a kernel is measured with.
pub const MAX_BYTES: usize = 1 << 30;

/// The tolerance of a float candidate against the default, relative to
/// the largest magnitude in the buffer. A candidate differs from the
/// default only by the order of its sums (split `k` slices, partial sums
/// per lane); with inputs in `[-1, 1]` that moves a sum of `K` terms by
/// about `√K` units of its last place, under `1e-5` of its magnitude for
/// `float32` up to `K` = 10⁵, while a wrong schedule (a term lost or
/// counted twice, an element not written) moves it by a whole term,
/// about `1/√K` of the magnitude, more than `3e-3` for `K` up to 10⁵.
/// 16-bit floats round each output to 8 (bfloat16) or 11 bits: two
/// orders of summation may differ by one unit of the result's last
/// place, `2⁻⁷` relative.
pub fn rtol(dtype: DataType) -> f64 {
    match dtype.bits() {
        64 => 1e-9,
        32 => 1e-4,
        _ => 1.0 / 64.0,
    }
}

/// What measuring one candidate found.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Its best time.
    Time(Duration),
    /// It left a buffer different from the default's (which buffer,
    /// where, what).
    Rejected(String),
}

/// Compiles and times `candidates` (index 0 the default) of the
/// unscheduled `func`, its symbolic dims bound by `dims` (module docs).
/// An error when the kernel cannot be measured at all (strided buffers,
/// a shape too large, the default failing to compile or run).
pub fn measure(
    func: &PrimFunc,
    candidates: &[Candidate],
    dims: &HashMap<String, i64>,
) -> Result<Vec<Outcome>, String> {
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    let abi = scalar_abi(func);
    let env: HashMap<TirVar, i64> = abi
        .iter()
        .map(|v| {
            (
                v.clone(),
                dims.get(v.name()).copied().unwrap_or(DEFAULT_DIM),
            )
        })
        .collect();
    let scalars: Vec<i64> = abi.iter().map(|v| env[v]).collect();
    let mut shapes = Vec::new();
    let mut bytes = 0usize;
    for b in func.buffers() {
        if !b.strides().is_empty() {
            return Err(format!("buffer `{}` has strides", b.name()));
        }
        let shape = b
            .shape()
            .iter()
            .map(|d| {
                d.eval(&env)
                    .map_err(|e| format!("buffer `{}`: {e:?}", b.name()))
            })
            .collect::<Result<Vec<i64>, String>>()?;
        if shape.iter().any(|&d| d < 0) {
            return Err(format!("buffer `{}` has the shape {shape:?}", b.name()));
        }
        let n = shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d as usize))
            .and_then(|n| n.checked_mul(usize::from(b.dtype().bits()).div_ceil(8)))
            .filter(|n| bytes.saturating_add(*n) <= MAX_BYTES)
            .ok_or_else(|| format!("the buffers are larger than {MAX_BYTES} bytes"))?;
        bytes += n;
        shapes.push((b.dtype(), shape));
    }
    let inputs: Vec<Tensor> = shapes
        .iter()
        .enumerate()
        .map(|(i, (dt, shape))| random(*dt, shape, i as u64 + 1))
        .collect::<Result<_, _>>()?;
    let fresh = || -> Result<Vec<Tensor>, String> {
        inputs
            .iter()
            .map(|t| {
                Tensor::from_bytes(t.dtype(), t.shape(), t.as_bytes()).map_err(|e| e.to_string())
            })
            .collect()
    };
    let symbols: Vec<(String, PrimFunc)> = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| (format!("relax_tune_candidate_{i}"), c.scheduled.clone()))
        .collect();
    let opts = CodegenOptions {
        native_cpu: true,
        ..Default::default()
    };
    let library = jit(&symbols, &opts).map_err(|e| format!("compiling the candidates: {e}"))?;
    let kernels = symbols
        .iter()
        .map(|(s, _)| {
            library
                .lookup(s)
                .ok_or_else(|| format!("the compiled library has no kernel `{s}`"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let call = |k: usize, buffers: &mut [Tensor]| -> Result<Duration, String> {
        let start = Instant::now();
        kernels[k].call(&[], buffers, &scalars)?;
        Ok(start.elapsed())
    };
    // The default's results, then every other candidate's against them.
    let mut reference = fresh()?;
    call(0, &mut reference).map_err(|e| format!("the default schedule failed: {e}"))?;
    let mut outcomes: Vec<Option<Outcome>> = vec![None; candidates.len()];
    let mut buffers: Vec<Vec<Tensor>> = vec![reference];
    for (k, outcome) in outcomes.iter_mut().enumerate().skip(1) {
        let mut mine = fresh()?;
        let verdict = match call(k, &mut mine) {
            Err(e) => Some(format!("it failed: {e}")),
            Ok(_) => compare(&buffers[0], &mine),
        };
        *outcome = verdict.map(Outcome::Rejected);
        buffers.push(mine);
    }
    let timed: Vec<usize> = (0..candidates.len())
        .filter(|&k| outcomes[k].is_none())
        .collect();
    let mut best = vec![Duration::MAX; candidates.len()];
    let mut spent = Duration::ZERO;
    let mut rounds = 0;
    while rounds < MIN_ROUNDS || (rounds < MAX_ROUNDS && spent < TIME_BUDGET) {
        for &k in &timed {
            for b in &buffers[k] {
                flush(b.as_bytes());
            }
            let t = call(k, &mut buffers[k])?;
            best[k] = best[k].min(t);
            if k == 0 {
                spent += t;
            }
        }
        rounds += 1;
    }
    Ok((0..candidates.len())
        .map(|k| outcomes[k].take().unwrap_or(Outcome::Time(best[k])))
        .collect())
}

/// Why `got` is not what `want` holds, if it is not (module docs).
fn compare(want: &[Tensor], got: &[Tensor]) -> Option<String> {
    for (i, (w, g)) in want.iter().zip(got).enumerate() {
        let (wv, gv) = (w.to_f64_vec(), g.to_f64_vec());
        let dt = w.dtype();
        let tol = if dt.is_float() {
            let scale = wv
                .iter()
                .filter(|v| v.is_finite())
                .fold(0f64, |m, v| m.max(v.abs()));
            rtol(dt) * scale
        } else {
            0.0
        };
        for (e, (a, b)) in wv.iter().zip(&gv).enumerate() {
            let same = a == b || (a.is_nan() && b.is_nan()) || (a - b).abs() <= tol;
            if !same {
                return Some(format!(
                    "buffer {i}, element {e}: {b} where the default gives {a} (tolerance {tol:e})"
                ));
            }
        }
    }
    None
}

/// A tensor of `dtype` and `shape` with random values from `seed`
/// (module docs).
pub(crate) fn random(dtype: DataType, shape: &[i64], seed: u64) -> Result<Tensor, String> {
    let n: i64 = shape.iter().product();
    let mut rng = crate::tir::schedule::sampling::SplitMix64(seed);
    let float = dtype.is_float();
    let data: Vec<f64> = (0..n)
        .map(|_| {
            let r = rng.next();
            if float {
                (r >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
            } else {
                (r % 4) as f64
            }
        })
        .collect();
    Tensor::from_vec(shape, data)
        .map_err(|e| e.to_string())?
        .astype(dtype)
        .map_err(|e| e.to_string())
}

/// Evicts `bytes` from every level of the cache (x86's `clflush`, a line
/// at a time), as MetaSchedule's runner does before each timed call
/// (`enable_cpu_cache_flush`); elsewhere nothing.
fn flush(bytes: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    for line in bytes.chunks(64) {
        // SAFETY: the address is inside a live slice; clflush only
        // affects the cache, not the memory's contents.
        unsafe { std::arch::x86_64::_mm_clflush(line.as_ptr()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}
