//! The candidates of one kernel: the knob values its schedules act on,
//! combined, and sampled when there are more than the tuner may try.
//!
//! 1. Each knob (`Knobs`' fields; the register tile's rows and vectors
//!    count as one knob, since their product is bounded by the register
//!    file) has a list of values ([`DIMENSIONS`]). A value is kept for
//!    this kernel when the knobs it gives pass [`Knobs::check`] for the
//!    schedule's vector width and schedule the kernel differently from
//!    the default: a knob of a schedule the kernel does not have (the
//!    GEMM's tile in an elementwise kernel) keeps none, a row folding
//!    that does not divide the height is the rule's and is dropped too.
//! 2. The space is the product of the kept values of every knob (each
//!    with the default's own value). The default knobs are always
//!    candidate 0; when the space has more points than the tuner may
//!    try, the others are drawn without replacement by SplitMix64 from
//!    a seed (`tir::schedule::sampling`'s generator), so a tuning run is
//!    reproducible.
//! 3. Candidates whose scheduled PrimFunc is structurally equal to an
//!    earlier one's are dropped (two blockings that clamp to the same
//!    loops): each candidate returned is a different program.
//!
//! The block's `mc` is kept a multiple of the tile's rows: a value
//! is rounded down to one (at least one tile).

use crate::ir::structural_equal::{structural_equal_map_free_vars, structural_hash_map_free_vars};
use crate::tir::schedule::sampling::SplitMix64;
use crate::tir::PrimFunc;
use crate::transform::{Blocking, DefaultSchedule, Knobs};
use std::collections::HashMap;

/// One knob: the values it takes, as functions of the default knobs.
type Dimension = (&'static str, fn(&Knobs, usize) -> Option<Knobs>, usize);

/// The register tiles tried, `(rows, vectors per row)`: the default
/// (6, 2), more or fewer rows of two vectors, and tiles of one and four
/// vectors per row (three vectors are not whole steps of the back end's
/// 16 lanes for every dtype, [`Knobs::check`]).
const TILES: [(i64, i64); 11] = [
    (4, 2),
    (8, 2),
    (10, 2),
    (12, 2),
    (14, 2),
    (3, 4),
    (4, 4),
    (5, 4),
    (6, 4),
    (8, 1),
    (16, 1),
];
const KC: [i64; 6] = [64, 128, 256, 512, 1024, 2048];
const MC: [i64; 5] = [24, 48, 96, 192, 384];
const NC: [i64; 4] = [256, 512, 1024, 2048];
const CONV_ROWS: [i64; 9] = [1, 2, 3, 4, 7, 8, 14, 16, 28];
const CHUNKS: [i64; 3] = [1024, 16384, 65536];
const REDUCTION_ROWS: [i64; 8] = [2, 3, 4, 6, 8, 12, 16, 24];

/// `mc` rounded down to a multiple of `mr` (at least `mr`).
fn whole_tiles(mc: i64, mr: i64) -> i64 {
    (mc / mr).max(1) * mr
}

fn with_blocking(k: &Knobs, window: bool, f: impl Fn(&mut Blocking)) -> Knobs {
    let mut k = *k;
    let b = if window {
        &mut k.window_blocking
    } else {
        &mut k.gemm_blocking
    };
    f(b);
    b.mc = whole_tiles(b.mc, k.gemm_mr);
    k
}

/// The knobs and their values (module docs).
pub const DIMENSIONS: [Dimension; 10] = [
    (
        "gemm_tile",
        |k, i| {
            let (mr, nv) = *TILES.get(i)?;
            let mut k = Knobs {
                gemm_mr: mr,
                gemm_nr_vectors: nv,
                ..*k
            };
            k.gemm_blocking.mc = whole_tiles(k.gemm_blocking.mc, mr);
            k.window_blocking.mc = whole_tiles(k.window_blocking.mc, mr);
            Some(k)
        },
        TILES.len(),
    ),
    (
        "gemm_kc",
        |k, i| Some(with_blocking(k, false, |b| b.kc = KC[i])),
        KC.len(),
    ),
    (
        "gemm_mc",
        |k, i| Some(with_blocking(k, false, |b| b.mc = MC[i])),
        MC.len(),
    ),
    (
        "gemm_nc",
        |k, i| Some(with_blocking(k, false, |b| b.nc = NC[i])),
        NC.len(),
    ),
    (
        "window_kc",
        |k, i| Some(with_blocking(k, true, |b| b.kc = KC[i])),
        KC.len(),
    ),
    (
        "window_mc",
        |k, i| Some(with_blocking(k, true, |b| b.mc = MC[i])),
        MC.len(),
    ),
    (
        "window_nc",
        |k, i| Some(with_blocking(k, true, |b| b.nc = NC[i])),
        NC.len(),
    ),
    (
        "conv_rows",
        |k, i| {
            Some(Knobs {
                conv_rows: CONV_ROWS[i],
                ..*k
            })
        },
        CONV_ROWS.len(),
    ),
    (
        "reduction_rows",
        |k, i| {
            Some(Knobs {
                reduction_rows: REDUCTION_ROWS[i],
                ..*k
            })
        },
        REDUCTION_ROWS.len(),
    ),
    (
        "parallel_chunk",
        |k, i| {
            Some(Knobs {
                parallel_chunk: CHUNKS[i],
                ..*k
            })
        },
        CHUNKS.len(),
    ),
];

/// One candidate: its knobs and the kernel they schedule.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// The knobs.
    pub knobs: Knobs,
    /// `func` scheduled with them.
    pub scheduled: PrimFunc,
}

/// Up to `n` (at least one) candidates for the unscheduled `func` under
/// `schedule`, the default knobs first, drawn from `seed` when the space
/// is larger (module docs).
pub fn candidates(
    schedule: &DefaultSchedule,
    func: &PrimFunc,
    n: usize,
    seed: u64,
) -> Vec<Candidate> {
    let base = schedule.knobs();
    let bits = schedule.vector_bits();
    let mut distinct = Distinct::default();
    let default = schedule.schedule_prim_func_with(func, base);
    distinct.add(&default);
    let mut out = vec![Candidate {
        knobs: base,
        scheduled: default.clone(),
    }];
    if n <= 1 {
        return out;
    }
    // 1. The values of each knob that change this kernel's schedule
    //    (index `None`: the default's own value).
    let mut kept: Vec<(usize, Vec<Option<usize>>)> = Vec::new();
    for (d, (_, value, count)) in DIMENSIONS.iter().enumerate() {
        let mut values = vec![None];
        let mut seen = Distinct::default();
        seen.add(&default);
        for i in 0..*count {
            let Some(k) = value(&base, i) else { continue };
            if k == base || k.check(bits).is_err() {
                continue;
            }
            if seen.add(&schedule.schedule_prim_func_with(func, k)) {
                values.push(Some(i));
            }
        }
        if values.len() > 1 {
            kept.push((d, values));
        }
    }
    // 2. The product of the kept values, in a seeded random order.
    let size = kept
        .iter()
        .try_fold(1usize, |acc, (_, v)| acc.checked_mul(v.len()))
        .unwrap_or(usize::MAX);
    let knobs_at = |mut index: usize| -> Option<Knobs> {
        let mut k = base;
        for (d, values) in &kept {
            let choice = values[index % values.len()];
            index /= values.len();
            if let Some(i) = choice {
                k = (DIMENSIONS[*d].1)(&k, i)?;
            }
        }
        Some(k)
    };
    let mut rng = SplitMix64(seed ^ 0x7475_6e65);
    let mut drawn: std::collections::HashSet<usize> = std::collections::HashSet::from([0]);
    // Index 0 is every knob at its default value: candidate 0.
    let mut tries = 0usize;
    while out.len() < n && drawn.len() < size && tries < 64 * n {
        tries += 1;
        let index = if size <= 4 * n {
            // Small spaces: every point, in order.
            match (0..size).find(|i| !drawn.contains(i)) {
                Some(i) => i,
                None => break,
            }
        } else {
            (rng.next() % size as u64) as usize
        };
        if !drawn.insert(index) {
            continue;
        }
        let Some(k) = knobs_at(index).filter(|k| k.check(bits).is_ok()) else {
            continue;
        };
        let scheduled = schedule.schedule_prim_func_with(func, k);
        // 3. Only programs not seen yet.
        if distinct.add(&scheduled) {
            out.push(Candidate {
                knobs: k,
                scheduled,
            });
        }
    }
    out
}

/// Scheduled PrimFuncs seen so far, modulo variable names.
#[derive(Default)]
struct Distinct {
    by_hash: HashMap<u64, Vec<PrimFunc>>,
}

impl Distinct {
    /// Adds `f`; whether it was new.
    fn add(&mut self, f: &PrimFunc) -> bool {
        let bucket = self
            .by_hash
            .entry(structural_hash_map_free_vars(f))
            .or_default();
        if bucket.iter().any(|g| structural_equal_map_free_vars(g, f)) {
            return false;
        }
        bucket.push(f.clone());
        true
    }
}
