//! `parallel`, `vectorize` and `unroll`: how a loop's iterations run.
//!
//! 1. `parallel` and `vectorize` run iterations at once, so the loop must
//!    be data parallel: every block under it binds the loop only to
//!    spatial variables and binds at least one spatial variable to it (else
//!    every iteration writes the same element), no store under it sits
//!    outside a block, and no buffer written by one block under it is read
//!    by another block under it (they would need a barrier).
//! 2. `vectorize` also needs a constant positive extent.
//! 3. `unroll` changes no order and has no precondition.

use super::loop_transform::binding_kinds;
use super::tree::{self, find_loop, replace_loop};
use super::{Instruction, LoopRV, Result, Schedule, ScheduleError};
use crate::arith::Analyzer;
use crate::ir::prim_expr::{PrimExpr, TirVar};
use crate::tir::affine::linear_coeff;
use crate::tir::{Block, Buffer, ForKind, Stmt};

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
                ..
            } => Ok(Stmt::For {
                loop_var: loop_var.clone(),
                min: min.clone(),
                extent: extent.clone(),
                kind: new,
                body: body.clone(),
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
        for (_, w) in &blocks {
            for (_, r) in &blocks {
                if w.name == r.name {
                    continue;
                }
                for region in &w.writes {
                    let read = r.reads.iter().any(|x| x.buffer == region.buffer)
                        || crate::tir::buffer_uses::stmt_reads(&r.body, &region.buffer);
                    if read && !same_iteration(w, r, &region.buffer, &var, &analyzer) {
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
fn loop_ranges(s: &Stmt) -> Analyzer {
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
fn same_iteration(w: &Block, r: &Block, buffer: &Buffer, x: &TirVar, a: &Analyzer) -> bool {
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
