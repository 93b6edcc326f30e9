//! `parallel`, `vectorize` and `unroll`: how a loop's iterations run.
//!
//! 1. `parallel` and `vectorize` run iterations at once, so the loop must
//!    be data parallel: every block under it binds the loop only to
//!    spatial variables and binds at least one spatial variable to it (else
//!    every iteration writes the same element), no store under it sits
//!    outside a block, and every element a block under it writes and a
//!    block under it (the same one included) reads belongs to one
//!    iteration: some dimension of every such access is `c * loop + rest`
//!    with `0 <= rest < c`, so no iteration reads what another writes.
//! 2. `vectorize` also needs a constant positive extent.
//! 3. `unroll` changes no order and has no precondition.

use super::loop_transform::binding_kinds;
use super::tree::{self, find_loop, replace_loop};
use super::{Instruction, LoopRV, Result, Schedule, ScheduleError};
use crate::arith::Analyzer;
use crate::ir::prim_expr::{PrimExpr, TirVar};
use crate::tir::affine::linear_coeff;
use crate::tir::{Block, Buffer, ForKind, Stmt};
use std::collections::HashMap;

impl Schedule {
    /// Runs `loop_rv`'s iterations on the thread pool (TVM's `parallel`).
    pub fn parallel(&mut self, loop_rv: LoopRV) -> Result<()> {
        self.check_data_parallel(loop_rv, "parallel")?;
        self.set_kind(loop_rv, ForKind::Parallel)?;
        self.trace
            .insts
            .push(Instruction::Parallel { loop_rv: loop_rv.0 });
        Ok(())
    }

    /// Runs `loop_rv`'s iterations as vector lanes (TVM's `vectorize`).
    pub fn vectorize(&mut self, loop_rv: LoopRV) -> Result<()> {
        let var = self.loop_var(loop_rv)?;
        if let Some(Stmt::For { extent, .. }) = find_loop(&self.func.body, &var) {
            if extent.as_int().is_none_or(|n| n <= 0) {
                return Err(ScheduleError::new(format!(
                    "vectorize: {} has extent {extent}, not a positive constant",
                    self.describe_loop(loop_rv)
                )));
            }
        }
        self.check_data_parallel(loop_rv, "vectorize")?;
        self.set_kind(loop_rv, ForKind::Vectorized)?;
        self.trace
            .insts
            .push(Instruction::Vectorize { loop_rv: loop_rv.0 });
        Ok(())
    }

    /// Unrolls `loop_rv` (TVM's `unroll`).
    pub fn unroll(&mut self, loop_rv: LoopRV) -> Result<()> {
        self.loop_var(loop_rv)?;
        self.set_kind(loop_rv, ForKind::Unrolled)?;
        self.trace
            .insts
            .push(Instruction::Unroll { loop_rv: loop_rv.0 });
        Ok(())
    }

    fn set_kind(&mut self, loop_rv: LoopRV, new: ForKind) -> Result<()> {
        let var = self.loop_var(loop_rv)?;
        self.func.body = replace_loop(&self.func.body, &var, &mut |s| match s {
            Stmt::For {
                loop_var,
                min,
                extent,
                body,
                annotations,
                ..
            } => Ok(Stmt::For {
                loop_var: loop_var.clone(),
                min: min.clone(),
                extent: extent.clone(),
                kind: new,
                body: body.clone(),
                annotations: annotations.clone(),
            }),
            _ => unreachable!("replace_loop passes the loop"),
        })?;
        Ok(())
    }

    fn check_data_parallel(&self, loop_rv: LoopRV, primitive: &str) -> Result<()> {
        let var = self.loop_var(loop_rv)?;
        let what = self.describe_loop(loop_rv);
        let err = |m: String| Err(ScheduleError::new(format!("{primitive}: {what} {m}")));
        let Some(Stmt::For { body, .. }) = find_loop(&self.func.body, &var) else {
            unreachable!("loop_var checked the loop exists")
        };
        if tree::has_store_outside_blocks(body) {
            return err("stores to a buffer outside any block".into());
        }
        let (_, reduce) = binding_kinds(body, &var);
        let blocks = tree::realizes(body);
        if reduce {
            let b = blocks
                .iter()
                .find(|(_, b)| {
                    b.iter_vars.iter().zip(&b.iter_values).any(|(iv, v)| {
                        iv.kind == crate::tir::IterKind::Reduce && v.free_vars().contains(&var)
                    })
                })
                .map(|(_, b)| b.name.clone())
                .unwrap_or_default();
            return err(format!("is bound to a reduce variable of block {b:?}"));
        }
        for (_, b) in &blocks {
            let uses = b.iter_values.iter().any(|v| v.free_vars().contains(&var));
            if !uses && !b.writes.is_empty() {
                return err(format!(
                    "is bound to no variable of block {:?}, whose every iteration writes the same elements",
                    b.name
                ));
            }
        }
        let analyzer = loop_ranges(find_loop(&self.func.body, &var).expect("found"));
        let loops = all_loops(&self.func.body);
        for (_, w) in &blocks {
            for (_, r) in &blocks {
                for region in &w.writes {
                    let read = r.reads.iter().any(|x| x.buffer == region.buffer)
                        || crate::tir::buffer_uses::stmt_reads(&r.body, &region.buffer);
                    if read && !same_iteration(w, r, &region.buffer, &var, &analyzer, &loops) {
                        return err(format!(
                            "runs block {:?}, which reads buffer {} that block {:?} under it writes, and the element cannot be shown to be one iteration's own",
                            r.name,
                            region.buffer.name(),
                            w.name
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

/// An analyzer knowing the range of every loop in `s` with constant
/// bounds.
pub(crate) fn loop_ranges(s: &Stmt) -> Analyzer {
    fn go(s: &Stmt, a: &mut Analyzer) {
        if let Stmt::For {
            loop_var,
            min,
            extent,
            ..
        } = s
        {
            if let (Some(lo), Some(n)) = (min.as_int(), extent.as_int()) {
                a.bind_range(loop_var, Some(lo), Some(lo + n - 1));
            }
        }
        for c in tree::children(s) {
            go(c, a);
        }
    }
    let mut a = Analyzer::new();
    go(s, &mut a);
    a
}

/// Whether every element of `buffer` that `w` writes and `r` reads under
/// the parallel loop `x` belongs to one iteration of `x`: some dimension
/// of every such access is `c * x + rest` with `0 <= rest < c`, so the
/// element determines `x`.
pub(crate) fn same_iteration(
    w: &Block,
    r: &Block,
    buffer: &Buffer,
    x: &TirVar,
    a: &Analyzer,
    loops: &[(TirVar, i64, i64)],
) -> bool {
    if w.name == r.name && reads_own_point(w, buffer) && injective(w, x, loops) {
        return true;
    }
    let bind = |b: &Block, e: &PrimExpr| {
        let map = b
            .iter_vars
            .iter()
            .map(|iv| iv.var.clone())
            .zip(b.iter_values.iter().cloned())
            .collect();
        a.simplify(&e.substitute_map(&map))
    };
    let mut accesses: Vec<Vec<PrimExpr>> = Vec::new();
    for (b, regions) in [(w, &w.writes), (r, &r.reads)] {
        for region in regions.iter().filter(|g| &g.buffer == buffer) {
            if region.region.iter().any(|(_, n)| n.as_int() != Some(1)) {
                return false;
            }
            accesses.push(region.region.iter().map(|(lo, _)| bind(b, lo)).collect());
        }
    }
    let mut body = Vec::new();
    tree::loads(&r.body, buffer, &mut body);
    accesses.extend(
        body.iter()
            .map(|idx| idx.iter().map(|e| bind(r, e)).collect()),
    );
    let dims = buffer.shape().len();
    (0..dims).any(|d| {
        let mut coeff = None;
        accesses.iter().all(|idx| {
            let Some(e) = idx.get(d) else { return false };
            let Some(c) = linear_coeff(e, x).filter(|c| *c > 0) else {
                return false;
            };
            if coeff.is_some_and(|k| k != c) {
                return false;
            }
            coeff = Some(c);
            let rest = a.simplify(&(e.clone() - x.to_expr() * PrimExpr::int_of(x.dtype(), c)));
            if rest.free_vars().contains(x) {
                return false;
            }
            let bound = a.const_int_bound(&rest);
            bound.min.is_some_and(|m| m >= 0) && bound.max.is_some_and(|m| m < c)
        })
    })
}

/// Whether `b` writes `buffer` at exactly its spatial variables (one per
/// dimension) and reads it only at that point (a reduction's update).
fn reads_own_point(b: &Block, buffer: &Buffer) -> bool {
    let Some(w) = b.writes.iter().find(|w| &w.buffer == buffer) else {
        return false;
    };
    let point: Option<Vec<&TirVar>> = w
        .region
        .iter()
        .map(|(lo, n)| lo.as_var().filter(|_| n.as_int() == Some(1)))
        .collect();
    let Some(point) = point else { return false };
    let spatial: Vec<&TirVar> = b
        .iter_vars
        .iter()
        .filter(|iv| iv.kind == crate::tir::IterKind::Spatial)
        .map(|iv| &iv.var)
        .collect();
    if point.len() != spatial.len() || spatial.iter().any(|v| !point.contains(v)) {
        return false;
    }
    let mut loads = Vec::new();
    tree::loads(&b.body, buffer, &mut loads);
    b.writes.iter().filter(|g| &g.buffer == buffer).count() == 1
        && b.reads
            .iter()
            .filter(|g| &g.buffer == buffer)
            .all(|g| g.region == w.region)
        && loads.iter().all(|idx| {
            idx.len() == point.len() && idx.iter().zip(&point).all(|(e, v)| e.as_var() == Some(v))
        })
}

/// The most loop points [`injective`] enumerates.
const MAX_POINTS: i64 = 1 << 20;

/// Whether the values of `b`'s spatial variables determine `x`: every
/// point of the loops they use (constant ranges from `loops`, at most
/// [`MAX_POINTS`]) gives a different tuple of values, and `x` is one of
/// those loops.
fn injective(b: &Block, x: &TirVar, loops: &[(TirVar, i64, i64)]) -> bool {
    let values: Vec<&PrimExpr> = b
        .iter_vars
        .iter()
        .zip(&b.iter_values)
        .filter(|(iv, _)| iv.kind == crate::tir::IterKind::Spatial)
        .map(|(_, v)| v)
        .collect();
    let mut used: Vec<&(TirVar, i64, i64)> = Vec::new();
    for v in values.iter().flat_map(|e| e.free_vars()) {
        match loops.iter().find(|l| l.0 == v) {
            Some(l) if !used.iter().any(|u| u.0 == v) => used.push(l),
            Some(_) => {}
            None => return false,
        }
    }
    if !used.iter().any(|l| &l.0 == x) {
        return false;
    }
    if mixed_radix(&values, &used) {
        return true;
    }
    let points = used
        .iter()
        .try_fold(1i64, |acc, l| acc.checked_mul(l.2 - l.1 + 1));
    if points.is_none_or(|p| p > MAX_POINTS) {
        return false;
    }
    let mut seen = std::collections::HashSet::new();
    let mut env: HashMap<TirVar, i64> = used.iter().map(|l| (l.0.clone(), l.1)).collect();
    loop {
        let tuple: Option<Vec<i64>> = values.iter().map(|e| e.eval(&env).ok()).collect();
        match tuple {
            Some(t) => {
                if !seen.insert(t) {
                    return false;
                }
            }
            None => return false,
        }
        // The next point, the last loop fastest.
        let mut k = used.len();
        loop {
            if k == 0 {
                return true;
            }
            k -= 1;
            let (v, lo, hi) = used[k];
            let cur = env[v];
            if cur < *hi {
                env.insert(v.clone(), cur + 1);
                break;
            }
            env.insert(v.clone(), *lo);
        }
    }
}

/// Whether `values` are injective in the loops `used` without enumerating
/// them: each loop appears in one value only, each value is affine in its
/// loops, and within a value the terms sorted by coefficient form a mixed
/// radix (each coefficient at least the previous one times that loop's
/// extent), as `split` and `fuse` leave their bindings.
fn mixed_radix(values: &[&PrimExpr], used: &[&(TirVar, i64, i64)]) -> bool {
    let mut seen: Vec<&TirVar> = Vec::new();
    for e in values {
        let mut terms = Vec::new();
        for l in used {
            let Some(c) = crate::tir::affine::linear_coeff(e, &l.0) else {
                return false;
            };
            if c == 0 {
                if e.free_vars().contains(&l.0) {
                    return false;
                }
                continue;
            }
            if seen.contains(&&l.0) {
                return false;
            }
            seen.push(&l.0);
            terms.push((c.unsigned_abs(), (l.2 - l.1 + 1) as u64));
        }
        terms.sort_unstable();
        for pair in terms.windows(2) {
            let (c0, n0) = pair[0];
            if c0.checked_mul(n0).is_none_or(|span| pair[1].0 < span) {
                return false;
            }
        }
    }
    true
}

/// Every loop of `s` with constant bounds, as `(var, min, max)`.
pub(crate) fn all_loops(s: &Stmt) -> Vec<(TirVar, i64, i64)> {
    let mut out = Vec::new();
    let mut bad = None;
    super::compute_at::collect_loops(s, &mut out, &mut bad);
    out
}
