//! `reverse_compute_at`: a consumer block moves under a loop of its
//! producers and consumes, at each iteration, the tile they have just
//! finished (TVM's `reverse_compute_at`; the epilogue of a tiled kernel).
//!
//! 1. **Consumer.** A block with spatial variables only, no init, no
//!    predicate and no allocation, alone in its loop nest, that reads the
//!    produced buffer `X` only at exactly its iteration variables (one per
//!    dimension, in some order) and does not read what it writes.
//! 2. **Producers.** The blocks under the loop that write `X`, without
//!    predicates. Each writes, per iteration of the loop, a dense box: in
//!    every dimension the index is a base without loops below the loop
//!    plus at most one loop below it (from 0, coefficient 1), no loop in
//!    two dimensions; all producers write the same box. No loop from the
//!    root to the loop (inclusive) is bound to a reduce variable of a
//!    producer, so the box is final when the iteration ends.
//! 3. **Coverage.** In every dimension the boxes over the loops above
//!    cover the consumer's domain: the base is a constant, or a constant
//!    plus one loop above (from 0) times the box's extent, that loop used
//!    in no other dimension.
//! 4. **Concurrency.** Every parallel or vectorized loop from the root
//!    down to the loop is one the tiles depend on (so its iterations own
//!    disjoint tiles).
//! 5. **Order.** The statement holding the loop and the consumer's nest
//!    are siblings in one sequence, the loop's first; nothing between them
//!    uses `X`, writes what the consumer reads or uses what it writes;
//!    nothing but the loop's statement writes `X`, and the loop's statement
//!    does not otherwise use what the consumer reads or writes.
//! 6. **Result.** Under the loop, after its old body, loops `ax0, ax1, …`
//!    over the box run the consumer with each variable bound to
//!    `base + ax`, under a predicate keeping it in its domain when that is
//!    not provable.

use super::compute_at::{collect_loaded, collect_loops, rewrite_seq};
use super::tree;
use super::{BlockRV, Instruction, LoopRV, Result, Schedule, ScheduleError};
use crate::arith::Analyzer;
use crate::ir::prim_expr::{PrimExpr, TirVar};
use crate::ir::Attrs;
use crate::tir::affine::linear_coeff;
use crate::tir::buffer_uses::{stmt_uses, stmt_writes};
use crate::tir::{Buffer, ForKind, IterKind, Stmt};
use std::collections::HashMap;

impl Schedule {
    /// Moves the consumer `block` under `loop_rv`, after the producers
    /// there (TVM's `reverse_compute_at`).
    pub fn reverse_compute_at(&mut self, block: BlockRV, loop_rv: LoopRV) -> Result<()> {
        let name = self.block_name(block)?;
        let var = self.loop_var(loop_rv)?;
        let what = self.describe_loop(loop_rv);
        let err = |m: String| {
            Err(ScheduleError::new(format!(
                "reverse_compute_at: block {name:?} {m}"
            )))
        };
        let body = &self.func.body;
        let (d, d_loops) = tree::the_block(body, &name, "reverse_compute_at")?;
        let d = d.clone();
        if d.init.is_some()
            || !d.alloc_buffers.is_empty()
            || d.iter_vars.iter().any(|iv| iv.kind != IterKind::Spatial)
        {
            return err("is not a spatial block without init and allocations".into());
        }
        let Some(Stmt::For { loop_var: top, .. }) = d_loops.first() else {
            return err("is not in a loop nest".into());
        };
        let top = top.clone();
        let consumer_nest = tree::find_loop(body, &top).expect("found").clone();
        {
            let mut cur = &consumer_nest;
            while let Stmt::For { body, .. } = cur {
                cur = body;
            }
            if !matches!(cur, Stmt::Block(inner) if inner.name == name) {
                return err("is not alone in its loop nest (or has a predicate)".into());
            }
        }
        let target = tree::find_loop(body, &var).expect("found").clone();
        if tree::find_loop(&consumer_nest, &var).is_some() {
            return err(format!("is under {what}"));
        }
        let Stmt::For {
            body: loop_body, ..
        } = &target
        else {
            unreachable!("find_loop returns loops")
        };
        // X: what the consumer reads that is written under the loop.
        let mut reads: Vec<Buffer> = d.reads.iter().map(|r| r.buffer.clone()).collect();
        collect_loaded(&d.body, &mut reads);
        let produced: Vec<Buffer> = reads
            .iter()
            .filter(|b| stmt_writes(loop_body, b))
            .cloned()
            .collect();
        let [x] = &produced[..] else {
            return err(format!(
                "reads {} buffers written under {what}, not one",
                produced.len()
            ));
        };
        let x = x.clone();
        let writes: Vec<Buffer> = d.writes.iter().map(|w| w.buffer.clone()).collect();
        if writes.iter().any(|w| reads.contains(w)) {
            return err("reads what it writes".into());
        }
        // The consumer reads X at exactly its iteration variables.
        let mut accesses: Vec<Vec<PrimExpr>> = Vec::new();
        for r in d.reads.iter().filter(|r| r.buffer == x) {
            if r.region.iter().any(|(_, n)| n.as_int() != Some(1)) {
                return err(format!("reads a region of {} wider than a point", x.name()));
            }
            accesses.push(r.region.iter().map(|(lo, _)| lo.clone()).collect());
        }
        tree::loads(&d.body, &x, &mut accesses);
        let mut var_of_dim: Option<Vec<usize>> = None;
        for idx in &accesses {
            let mut dims = Vec::new();
            for e in idx {
                match e
                    .as_var()
                    .and_then(|v| d.iter_vars.iter().position(|iv| &iv.var == v))
                {
                    Some(p) if !dims.contains(&p) => dims.push(p),
                    _ => {
                        return err(format!(
                            "does not read {} at exactly its iteration variables",
                            x.name()
                        ))
                    }
                }
            }
            if var_of_dim.as_ref().is_some_and(|v| *v != dims) {
                return err(format!("reads {} at different points", x.name()));
            }
            var_of_dim = Some(dims);
        }
        let Some(var_of_dim) = var_of_dim.filter(|v| v.len() == d.iter_vars.len()) else {
            return err(format!("has variables that do not index {}", x.name()));
        };
        // The producers' box per iteration.
        let mut inner = Vec::new();
        let mut bad = None;
        collect_loops(loop_body, &mut inner, &mut bad);
        if let Some(l) = bad {
            return err(format!(
                "cannot be placed: loop {l} under {what} has non-constant bounds"
            ));
        }
        let path = tree::loop_path(body, &var);
        let analyzer = Analyzer::new();
        let mut boxes: Option<Vec<(PrimExpr, i64)>> = None;
        for (pred, p) in tree::realizes(loop_body) {
            if !p.writes.iter().any(|w| w.buffer == x) {
                continue;
            }
            if pred.is_some() {
                return err(format!(
                    "cannot follow block {:?}, which has a predicate",
                    p.name
                ));
            }
            for (iv, value) in p.iter_vars.iter().zip(&p.iter_values) {
                if iv.kind == IterKind::Reduce {
                    if let Some(l) = path.iter().find(|l| value.free_vars().contains(l)) {
                        return err(format!(
                            "cannot follow block {:?}: loop {} at or above {what} is bound to its reduce variable {}",
                            p.name,
                            l.name(),
                            iv.var.name()
                        ));
                    }
                }
            }
            let map: HashMap<TirVar, PrimExpr> = p
                .iter_vars
                .iter()
                .map(|iv| iv.var.clone())
                .zip(p.iter_values.iter().cloned())
                .collect();
            for w in p.writes.iter().filter(|w| w.buffer == x) {
                let mut this = Vec::new();
                let mut used: Vec<TirVar> = Vec::new();
                for (lo, n) in &w.region {
                    if n.as_int() != Some(1) {
                        return err(format!(
                            "cannot follow block {:?}, which writes a region of {}",
                            p.name,
                            x.name()
                        ));
                    }
                    let e = analyzer.simplify(&lo.substitute_map(&map));
                    let mut base = e.clone();
                    let mut extent = 1;
                    for (v, min, max) in &inner {
                        match linear_coeff(&e, v) {
                            Some(0) => {}
                            Some(1) if *min == 0 && !used.contains(v) && extent == 1 => {
                                used.push(v.clone());
                                extent = max + 1;
                                base = analyzer.simplify(
                                    &base.substitute_map(&HashMap::from([(v.clone(), PrimExpr::int_of(v.dtype(), 0))])),
                                );
                            }
                            _ => {
                                return err(format!(
                                    "cannot follow block {:?}: its write of {} is not a dense box per iteration of {what}",
                                    p.name,
                                    x.name()
                                ))
                            }
                        }
                    }
                    this.push((base, extent));
                }
                match &boxes {
                    None => boxes = Some(this),
                    Some(b) => {
                        let same = b.iter().zip(&this).all(|((b0, e0), (b1, e1))| {
                            e0 == e1 && analyzer.can_prove_equal(b0, b1)
                        });
                        if !same {
                            return err(format!(
                                "cannot follow the blocks under {what}: they write different boxes of {}",
                                x.name()
                            ));
                        }
                    }
                }
            }
        }
        let Some(boxes) = boxes else {
            return err(format!(
                "reads {}, which nothing under {what} writes",
                x.name()
            ));
        };
        // Coverage of the consumer's domain by the boxes over the loops
        // above.
        let mut outer_used: Vec<TirVar> = Vec::new();
        let mut known = Analyzer::new();
        for (dim, (base, extent)) in boxes.iter().enumerate() {
            let iv = &d.iter_vars[var_of_dim[dim]];
            let (Some(dmin), Some(dext)) = (iv.min.as_int(), iv.extent.as_int()) else {
                return err(format!(
                    "has variable {} with a non-constant domain",
                    iv.var.name()
                ));
            };
            let covered = tile_cover(body, base, *extent, &path, &mut outer_used, &mut known);
            match covered {
                Some((lo, hi)) if lo <= dmin && dmin + dext <= hi => {}
                _ => {
                    return err(format!(
                        "cannot be shown to run for its whole domain: the boxes of {} under {what} do not tile dimension {dim}",
                        x.name()
                    ))
                }
            }
        }
        // A parallel or vectorized loop above must own its tiles: one the
        // tiles do not depend on would run the consumer on the same
        // elements at once.
        if let Some(l) = super::compute_at::concurrent_loop(body, &var, &outer_used) {
            return err(format!(
                "cannot move under {what}: loop {l} above runs its iterations at once and the tiles do not depend on it"
            ));
        }
        // The new consumer nest.
        let mut values = d.iter_values.clone();
        let mut conds = Vec::new();
        let mut loops = Vec::new();
        for (dim, (base, extent)) in boxes.iter().enumerate() {
            let iv = &d.iter_vars[var_of_dim[dim]];
            let dt = iv.var.dtype();
            let value = if *extent == 1 {
                base.clone()
            } else {
                let ax = TirVar::with_dtype(format!("ax{}", loops.len()), dt);
                known.bind_range(&ax, Some(0), Some(extent - 1));
                loops.push((ax.clone(), *extent));
                analyzer.simplify(&(base.clone() + ax.to_expr()))
            };
            for c in [
                iv.min.clone().le(value.clone()),
                value.clone().lt(iv.min.clone() + iv.extent.clone()),
            ] {
                if !known.can_prove(&c) {
                    conds.push(c);
                }
            }
            values[var_of_dim[dim]] = value;
        }
        let mut moved = d.clone();
        moved.iter_values = values;
        let mut realize = Stmt::Block(Box::new(moved));
        if let Some(c) = conds.into_iter().reduce(|a, c| a.and(c)) {
            realize = Stmt::IfThenElse {
                cond: c,
                then_case: Box::new(realize),
                else_case: None,
            };
        }
        let consumer = loops.iter().rev().fold(realize, |body, (ax, n)| Stmt::For {
            loop_var: ax.clone(),
            min: PrimExpr::int_of(ax.dtype(), 0),
            extent: PrimExpr::int_of(ax.dtype(), *n),
            kind: ForKind::Serial,
            body: Box::new(body),
            annotations: Attrs::new(),
        });
        let mut done = false;
        let new_body = rewrite_seq(
            body,
            &mut |items: &[Stmt]| {
                let j = items
                    .iter()
                    .position(|s| tree::find_loop(s, &var).is_some())?;
                let i = items
                    .iter()
                    .position(|s| matches!(s, Stmt::For { loop_var, .. } if *loop_var == top))?;
                if i <= j {
                    return None;
                }
                for s in &items[j + 1..i] {
                    if stmt_uses(s, &x)
                        || reads.iter().any(|r| stmt_writes(s, r))
                        || writes.iter().any(|w| stmt_uses(s, w))
                    {
                        return None;
                    }
                }
                let others = items.iter().enumerate().filter(|(k, _)| *k != j && *k != i);
                if others.clone().any(|(_, s)| stmt_writes(s, &x))
                    || writes.iter().any(|w| stmt_uses(&items[j], w))
                    || reads.iter().any(|r| *r != x && stmt_writes(&items[j], r))
                {
                    return None;
                }
                let moved = tree::replace_loop(&items[j], &var, &mut |l| match l {
                    Stmt::For {
                        loop_var,
                        min,
                        extent,
                        kind,
                        body,
                        annotations,
                    } => Ok(Stmt::For {
                        loop_var: loop_var.clone(),
                        min: min.clone(),
                        extent: extent.clone(),
                        kind: *kind,
                        body: Box::new(Stmt::Seq(vec![(**body).clone(), consumer.clone()])),
                        annotations: annotations.clone(),
                    }),
                    _ => unreachable!("replace_loop passes the loop"),
                })
                .ok()?;
                let mut v: Vec<Stmt> = items.to_vec();
                v[j] = moved;
                v.remove(i);
                Some(v)
            },
            &mut done,
        );
        if !done {
            return err(format!(
                "and {what} are not in one sequence with the loop first, or other statements use {} or what the consumer reads or writes",
                x.name()
            ));
        }
        self.func.body = new_body;
        self.trace.insts.push(Instruction::ReverseComputeAt {
            block: block.0,
            loop_rv: loop_rv.0,
        });
        Ok(())
    }
}

/// The range `[lo, hi)` that `base + [0, extent)` covers over the loops
/// of `path` when it tiles it densely: `base` is a constant plus loops
/// (from 0, constant extents, used by no other dimension) whose
/// coefficients, in increasing order, are `extent`, then each the previous
/// coefficient times the previous loop's extent. Their ranges go to
/// `known`.
fn tile_cover(
    body: &Stmt,
    base: &PrimExpr,
    extent: i64,
    path: &[TirVar],
    used: &mut Vec<TirVar>,
    known: &mut Analyzer,
) -> Option<(i64, i64)> {
    let analyzer = Analyzer::new();
    let mut terms = Vec::new();
    let mut zero = HashMap::new();
    for o in path.iter().filter(|l| base.free_vars().contains(l)) {
        if used.contains(o) {
            return None;
        }
        let c = linear_coeff(base, o)?;
        let Some(Stmt::For { min, extent: n, .. }) = tree::find_loop(body, o) else {
            return None;
        };
        if min.as_int() != Some(0) || c <= 0 {
            return None;
        }
        terms.push((c, n.as_int()?, o.clone()));
        zero.insert(o.clone(), PrimExpr::int_of(o.dtype(), 0));
    }
    let k = analyzer.simplify(&base.substitute_map(&zero)).as_int()?;
    terms.sort_by_key(|t| t.0);
    let mut step = extent;
    for (c, n, o) in &terms {
        if *c != step {
            return None;
        }
        step = c.checked_mul(*n)?;
        used.push(o.clone());
        known.bind_range(o, Some(0), Some(n - 1));
    }
    Some((k, k + step))
}
