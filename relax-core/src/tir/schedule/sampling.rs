//! `sample_perfect_tile`: random tile sizes whose product is a loop's
//! extent (TVM's `sample_perfect_tile`), drawn from a seed so that a
//! schedule is reproducible.
//!
//! The extent's prime factors are dealt, in a shuffled order, to `n`
//! positions chosen by a SplitMix64 generator seeded with `seed`; a prime
//! that would push the innermost factor over `max_innermost_factor` goes to
//! another position. The draw is recorded with its decision, which a
//! replay reuses.

use super::{Instruction, LoopRV, Result, Schedule, ScheduleError};
use crate::tir::Stmt;

/// SplitMix64: a small, well-mixed, seedable generator (also the
/// tuner's, `crate::tune::space`).
pub(crate) struct SplitMix64(pub(crate) u64);

impl SplitMix64 {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn prime_factors(mut n: i64) -> Vec<i64> {
    let mut out = Vec::new();
    let mut p = 2;
    while p * p <= n {
        while n % p == 0 {
            out.push(p);
            n /= p;
        }
        p += 1;
    }
    if n > 1 {
        out.push(n);
    }
    out
}

/// `n` factors of `extent`, the last at most `max_innermost`, drawn from
/// `seed`; `None` when impossible (`n == 1` and `extent > max_innermost`).
pub fn perfect_tile(extent: i64, n: usize, max_innermost: i64, seed: u64) -> Option<Vec<i64>> {
    let mut rng = SplitMix64(seed);
    let mut primes = prime_factors(extent);
    for i in (1..primes.len()).rev() {
        primes.swap(i, rng.below(i + 1));
    }
    let mut out = vec![1i64; n];
    for p in primes {
        let mut pos = rng.below(n);
        if pos == n - 1 && out[n - 1] * p > max_innermost {
            if n == 1 {
                return None;
            }
            pos = rng.below(n - 1);
        }
        out[pos] *= p;
    }
    Some(out)
}

impl Schedule {
    /// `n` tile sizes whose product is `loop_rv`'s constant extent, the
    /// innermost at most `max_innermost_factor`, drawn deterministically
    /// from `seed` (TVM's `sample_perfect_tile`). Pass them to
    /// [`Schedule::split`].
    pub fn sample_perfect_tile(
        &mut self,
        loop_rv: LoopRV,
        n: usize,
        max_innermost_factor: i64,
        seed: u64,
    ) -> Result<Vec<i64>> {
        self.sample_perfect_tile_with(loop_rv, n, max_innermost_factor, seed, None)
            .map(|(v, _)| v)
    }

    /// [`Schedule::sample_perfect_tile`], or the given `decision` checked
    /// (a replay); returns the factors and their value handles.
    pub(crate) fn sample_perfect_tile_with(
        &mut self,
        loop_rv: LoopRV,
        n: usize,
        max_innermost_factor: i64,
        seed: u64,
        decision: Option<Vec<i64>>,
    ) -> Result<(Vec<i64>, Vec<usize>)> {
        let var = self.loop_var(loop_rv)?;
        let what = self.describe_loop(loop_rv);
        let err = |m: String| {
            Err(ScheduleError::new(format!(
                "sample_perfect_tile: {what} {m}"
            )))
        };
        if n == 0 || max_innermost_factor < 1 {
            return err(format!(
                "needs n >= 1 and max_innermost_factor >= 1, found {n} and {max_innermost_factor}"
            ));
        }
        let Some(Stmt::For { extent, .. }) = super::tree::find_loop(&self.func.body, &var) else {
            unreachable!("loop_var checked the loop exists")
        };
        let Some(extent) = extent.as_int().filter(|e| *e > 0) else {
            return err(format!("has extent {extent}, not a positive constant"));
        };
        let factors = match decision {
            Some(d) => {
                let product = d.iter().try_fold(1i64, |a, f| a.checked_mul(*f));
                if d.len() != n
                    || d.iter().any(|f| *f < 1)
                    || product != Some(extent)
                    || d[n - 1] > max_innermost_factor
                {
                    return err(format!(
                        "cannot take decision {d:?}: expected {n} positive factors of {extent}, the last at most {max_innermost_factor}"
                    ));
                }
                d
            }
            None => match perfect_tile(extent, n, max_innermost_factor, seed) {
                Some(f) => f,
                None => {
                    return err(format!(
                        "has extent {extent}, which one factor at most {max_innermost_factor} cannot tile"
                    ))
                }
            },
        };
        let outs: Vec<usize> = factors.iter().map(|_| self.new_expr()).collect();
        self.trace.insts.push(Instruction::SamplePerfectTile {
            loop_rv: loop_rv.0,
            n,
            max_innermost_factor,
            seed,
            decision: factors.clone(),
            outs: outs.clone(),
        });
        Ok((factors, outs))
    }
}
