//! `compute_at`: a producer block moves under a loop of its consumers and
//! computes, at each iteration of that loop, the region of its buffer the
//! consumers under the loop read (TVM's `compute_at`).
//!
//! 1. **Producer.** A block with spatial variables only, no init, no
//!    predicate and no allocation, writing one intermediate buffer `X`
//!    (not a parameter) at exactly its iteration variables, alone in its
//!    loop nest. Its nest and the statement holding the loop are siblings
//!    in one sequence, the producer first; the statements between them
//!    neither use `X` nor write what the producer reads, nothing else
//!    writes `X`, and the statement holding the loop does not write what
//!    the producer reads.
//! 2. **Consumers.** Every block that reads `X` is under the loop.
//! 3. **Region.** Each read of `X` under the loop (regions and loads, via
//!    the reader's bindings) must be affine in the loops below the loop,
//!    whose bounds must be constants; per dimension its lowest and highest
//!    index over those loops gives the region `[lo, hi]`, the union over
//!    the reads taken where the analyzer orders the bounds. Loops above the
//!    loop stay symbolic in `lo`.
//! 4. **Concurrency.** No loop from the root down to the loop is parallel
//!    or vectorized (the regions of its iterations may overlap).
//! 5. **Result.** The producer's nest is removed; under the loop, before
//!    its old body, new loops `ax0, ax1, …` of extents `hi - lo + 1` run
//!    the block with each variable bound to `lo + ax` (a dimension of
//!    extent 1 gets no loop: its variable is bound to `lo`), under a
//!    predicate keeping it inside its domain when that is not provable.

use super::tree::{self, map_children};
use super::{BlockRV, LoopRV, Result, Schedule, ScheduleError};
use crate::arith::Analyzer;
use crate::ir::prim_expr::{PrimExpr, TirVar};
use crate::ir::Attrs;
use crate::tir::affine::linear_coeff;
use crate::tir::buffer_uses::{stmt_uses, stmt_writes};
use crate::tir::{Block, Buffer, ForKind, IterKind, Stmt};
use std::collections::HashMap;

/// The lowest and highest value of `e` over the loops `inner`
/// (`(var, min, max)`), when `e` is affine in them.
pub(crate) fn bounds(
    e: &PrimExpr,
    inner: &[(TirVar, i64, i64)],
    a: &Analyzer,
) -> Option<(PrimExpr, PrimExpr)> {
    let (mut lo, mut hi) = (HashMap::new(), HashMap::new());
    for (v, min, max) in inner {
        let c = linear_coeff(e, v)?;
        let (l, h) = if c >= 0 { (*min, *max) } else { (*max, *min) };
        lo.insert(v.clone(), PrimExpr::int_of(v.dtype(), l));
        hi.insert(v.clone(), PrimExpr::int_of(v.dtype(), h));
    }
    Some((
        a.simplify(&e.substitute_map(&lo)),
        a.simplify(&e.substitute_map(&hi)),
    ))
}

/// Every index tuple at which the blocks of `s` read `x`, through their
/// bindings; `None` for a read of a region wider than a point whose extent
/// is not constant.
fn reads_of(s: &Stmt, x: &Buffer) -> Option<Vec<Vec<PrimExpr>>> {
    let mut out = Vec::new();
    for (_, b) in tree::realizes(s) {
        let map = tree::bindings(b);
        let mut raw = Vec::new();
        for r in b.reads.iter().filter(|r| &r.buffer == x) {
            raw.extend(tree::region_corners(r)?);
        }
        tree::loads(&b.body, x, &mut raw);
        if let Some(init) = &b.init {
            tree::loads(init, x, &mut raw);
        }
        out.extend(
            raw.into_iter()
                .map(|idx| idx.iter().map(|e| e.substitute_map(&map)).collect()),
        );
    }
    Some(out)
}

impl Schedule {
    /// Moves the producer `block` under `loop_rv`, computing there what the
    /// consumers under the loop read (TVM's `compute_at`).
    pub fn compute_at(&mut self, block: BlockRV, loop_rv: LoopRV) -> Result<()> {
        let name = self.block_name(block)?;
        let var = self.loop_var(loop_rv)?;
        let what = self.describe_loop(loop_rv);
        let err = |m: String| {
            Err(ScheduleError::new(format!(
                "compute_at: block {name:?} {m}"
            )))
        };
        let body = &self.func.body;
        let (b, b_loops) = tree::the_block(body, &name, "compute_at")?;
        let b = b.clone();
        if b.init.is_some()
            || !b.alloc_buffers.is_empty()
            || b.iter_vars.iter().any(|iv| iv.kind != IterKind::Spatial)
        {
            return err("is not a spatial block without init and allocations".into());
        }
        if b.writes.len() != 1 {
            return err(format!("writes {} buffers, not one", b.writes.len()));
        }
        let x = b.writes[0].buffer.clone();
        if self.func.buffers().any(|p| *p == x) {
            return err(format!("writes {}, a parameter of the function", x.name()));
        }
        // The write is X[v0, …] at the iteration variables, in some order.
        let mut var_of_dim = Vec::new();
        for (lo, n) in &b.writes[0].region {
            let pos = lo
                .as_var()
                .and_then(|v| b.iter_vars.iter().position(|iv| &iv.var == v));
            match pos {
                Some(p) if n.as_int() == Some(1) && !var_of_dim.contains(&p) => var_of_dim.push(p),
                _ => {
                    return err(format!(
                        "does not write {} at exactly its iteration variables",
                        x.name()
                    ))
                }
            }
        }
        if var_of_dim.len() != b.iter_vars.len() {
            return err(format!("has variables that do not index {}", x.name()));
        }
        let Some(Stmt::For { loop_var: top, .. }) = b_loops.first() else {
            return err("is not in a loop nest".into());
        };
        let top = top.clone();
        let producer_nest = tree::find_loop(body, &top).expect("found").clone();
        {
            let mut cur = &producer_nest;
            while let Stmt::For { body, .. } = cur {
                cur = body;
            }
            match cur {
                Stmt::Block(inner) if inner.name == name => {}
                _ => return err("is not alone in its loop nest (or has a predicate)".into()),
            }
        }
        // The consumers: every reader of X is under the loop.
        let target = tree::find_loop(body, &var).expect("found").clone();
        if tree::find_loop(&producer_nest, &var).is_some() {
            return err(format!("is above {what}"));
        }
        let under: Vec<String> = tree::realizes(&target)
            .iter()
            .map(|(_, r)| r.name.clone())
            .collect();
        for (_, r) in tree::realizes(body) {
            let mut l = Vec::new();
            tree::loads(&r.body, &x, &mut l);
            let reads = !l.is_empty() || r.reads.iter().any(|g| g.buffer == x);
            if reads && r.name != name && !under.contains(&r.name) {
                return err(format!(
                    "writes {}, which block {:?} outside {what} reads",
                    x.name(),
                    r.name
                ));
            }
        }
        // Iterations of a parallel or vectorized loop above would compute
        // overlapping regions at once.
        if let Some(l) = concurrent_loop(body, &var, &[]) {
            return err(format!(
                "cannot move under {what}: loop {l} above runs its iterations at once (make it parallel after compute_at)"
            ));
        }
        // The region read per iteration of the loop.
        let Stmt::For {
            body: loop_body, ..
        } = &target
        else {
            unreachable!("find_loop returns loops")
        };
        let mut inner = Vec::new();
        let mut bad_loop = None;
        collect_loops(loop_body, &mut inner, &mut bad_loop);
        if let Some(l) = bad_loop {
            return err(format!(
                "cannot be bounded: loop {l} under {what} has non-constant bounds"
            ));
        }
        let mut analyzer = Analyzer::new();
        for (v, lo, hi) in &inner {
            analyzer.bind_range(v, Some(*lo), Some(*hi));
        }
        let Some(accesses) = reads_of(loop_body, &x) else {
            return err(format!(
                "cannot be bounded: a read region of {} has a non-constant extent",
                x.name()
            ));
        };
        if accesses.is_empty() {
            return err(format!(
                "writes {}, which nothing under {what} reads",
                x.name()
            ));
        }
        let dims = x.shape().len();
        let mut region: Vec<(PrimExpr, PrimExpr)> = Vec::new();
        for d in 0..dims {
            let mut acc: Option<(PrimExpr, PrimExpr)> = None;
            for idx in &accesses {
                let Some((lo, hi)) = idx.get(d).and_then(|e| bounds(e, &inner, &analyzer)) else {
                    return err(format!(
                        "cannot be bounded: a read of {} under {what} is not affine in the loops below it",
                        x.name()
                    ));
                };
                acc = Some(match acc {
                    None => (lo, hi),
                    Some((l0, h0)) => {
                        let l = if analyzer.can_prove(&lo.clone().le(l0.clone())) {
                            lo
                        } else if analyzer.can_prove(&l0.clone().le(lo.clone())) {
                            l0
                        } else {
                            return err(format!(
                                "cannot order the reads of {} in dimension {d}",
                                x.name()
                            ));
                        };
                        let h = if analyzer.can_prove(&hi.clone().ge(h0.clone())) {
                            hi
                        } else if analyzer.can_prove(&h0.clone().ge(hi.clone())) {
                            h0
                        } else {
                            return err(format!(
                                "cannot order the reads of {} in dimension {d}",
                                x.name()
                            ));
                        };
                        (l, h)
                    }
                });
            }
            region.push(acc.expect("accesses is not empty"));
        }
        // The sequence holding both nests.
        let Some(new_body) = self.move_into(&top, &var, &b, &x, &region, &var_of_dim)? else {
            return err(format!(
                "and {what} are not in one sequence with the producer first, or other statements write {} or what the producer reads",
                x.name()
            ));
        };
        self.func.body = new_body;
        self.trace.insts.push(super::Instruction::ComputeAt {
            block: block.0,
            loop_rv: loop_rv.0,
        });
        Ok(())
    }

    /// The function body with the producer nest `top` removed from its
    /// sequence and its block, bound to `region`, put under `var`; `None`
    /// when no sequence holds the producer before the loop with nothing
    /// conflicting between them.
    fn move_into(
        &self,
        top: &TirVar,
        var: &TirVar,
        b: &Block,
        x: &Buffer,
        region: &[(PrimExpr, PrimExpr)],
        var_of_dim: &[usize],
    ) -> Result<Option<Stmt>> {
        let mut read_bufs: Vec<Buffer> = b.reads.iter().map(|r| r.buffer.clone()).collect();
        collect_loaded(&b.body, &mut read_bufs);
        let analyzer = Analyzer::new();
        let mut new_loops = Vec::new();
        let mut values = b.iter_values.clone();
        let mut conds: Vec<PrimExpr> = Vec::new();
        // What is known of the loops above the producer's new place.
        let mut ranged = Analyzer::new();
        for v in tree::loop_path(&self.func.body, var) {
            if let Some(Stmt::For { min, extent, .. }) = tree::find_loop(&self.func.body, &v) {
                if let (Some(lo), Some(n)) = (min.as_int(), extent.as_int()) {
                    ranged.bind_range(&v, Some(lo), Some(lo + n - 1));
                }
            }
        }
        for (d, (lo, hi)) in region.iter().enumerate() {
            let iv = &b.iter_vars[var_of_dim[d]];
            let dt = iv.var.dtype();
            let extent = analyzer.simplify(&(hi.clone() - lo.clone() + PrimExpr::int_of(dt, 1)));
            // A unit dimension binds to its one index, without a loop.
            let value = if extent.as_int() == Some(1) {
                lo.clone()
            } else {
                let ax = TirVar::with_dtype(format!("ax{}", new_loops.len()), dt);
                if let Some(n) = extent.as_int() {
                    ranged.bind_range(&ax, Some(0), Some(n - 1));
                }
                let value = analyzer.simplify(&(lo.clone() + ax.to_expr()));
                new_loops.push((ax, extent));
                value
            };
            let lower = iv.min.clone().le(value.clone());
            let upper = value.clone().lt(iv.min.clone() + iv.extent.clone());
            for c in [lower, upper] {
                if !ranged.can_prove(&c) {
                    conds.push(c);
                }
            }
            values[var_of_dim[d]] = value;
        }
        let mut block = b.clone();
        block.iter_values = values;
        let mut realize = Stmt::Block(Box::new(block));
        if let Some(c) = conds.into_iter().reduce(|a, c| a.and(c)) {
            realize = Stmt::IfThenElse {
                cond: c,
                then_case: Box::new(realize),
                else_case: None,
            };
        }
        let producer = new_loops
            .iter()
            .rev()
            .fold(realize, |body, (ax, extent)| Stmt::For {
                loop_var: ax.clone(),
                min: PrimExpr::int_of(ax.dtype(), 0),
                extent: extent.clone(),
                kind: ForKind::Serial,
                body: Box::new(body),
                annotations: Attrs::new(),
            });
        let mut done = false;
        let out = rewrite_seq(
            &self.func.body,
            &mut |items: &[Stmt]| {
                let i = items
                    .iter()
                    .position(|s| matches!(s, Stmt::For { loop_var, .. } if loop_var == top))?;
                let j = items
                    .iter()
                    .position(|s| tree::find_loop(s, var).is_some())?;
                if j <= i {
                    return None;
                }
                for s in &items[i + 1..j] {
                    if stmt_uses(s, x) || read_bufs.iter().any(|r| stmt_writes(s, r)) {
                        return None;
                    }
                }
                // Nothing else writes X, and the statement holding the loop
                // does not write what the producer reads (it would be read
                // too late).
                let mut others = items.iter().enumerate().filter(|(k, _)| *k != i);
                if others.any(|(_, s)| stmt_writes(s, x))
                    || read_bufs.iter().any(|r| stmt_writes(&items[j], r))
                {
                    return None;
                }
                let moved = tree::replace_loop(&items[j], var, &mut |l| match l {
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
                        body: Box::new(Stmt::Seq(vec![producer.clone(), (**body).clone()])),
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
        Ok(done.then_some(out))
    }
}

/// Every loop in `s` as `(var, min, max)`; the name of one whose bounds
/// are not constant goes to `bad`.
pub(crate) fn collect_loops(s: &Stmt, out: &mut Vec<(TirVar, i64, i64)>, bad: &mut Option<String>) {
    if let Stmt::For {
        loop_var,
        min,
        extent,
        ..
    } = s
    {
        match (min.as_int(), extent.as_int()) {
            (Some(lo), Some(n)) if n > 0 => out.push((loop_var.clone(), lo, lo + n - 1)),
            (Some(_), Some(_)) => {}
            _ => *bad = Some(loop_var.name().to_string()),
        }
    }
    for c in tree::children(s) {
        collect_loops(c, out, bad);
    }
}

/// The buffers `s` loads from, added to `out`.
pub(crate) fn collect_loaded(s: &Stmt, out: &mut Vec<Buffer>) {
    fn expr(e: &PrimExpr, out: &mut Vec<Buffer>) {
        if let crate::ir::prim_expr::PrimExprKind::BufferLoad(b, _) = e.kind() {
            if !out.contains(b) {
                out.push(b.clone());
            }
        }
        for c in e.children() {
            expr(c, out);
        }
    }
    match s {
        Stmt::BufferStore { value, indices, .. } => {
            expr(value, out);
            indices.iter().for_each(|i| expr(i, out));
        }
        Stmt::IfThenElse { cond, .. } => expr(cond, out),
        Stmt::LetStmt { value, .. } => expr(value, out),
        Stmt::Evaluate(e) => expr(e, out),
        _ => {}
    }
    for c in tree::children(s) {
        collect_loaded(c, out);
    }
}

/// `s` with the first sequence for which `f` gives new items replaced by
/// them.
pub(crate) fn rewrite_seq(
    s: &Stmt,
    f: &mut dyn FnMut(&[Stmt]) -> Option<Vec<Stmt>>,
    done: &mut bool,
) -> Stmt {
    if *done {
        return s.clone();
    }
    if let Stmt::Seq(items) = s {
        if let Some(v) = f(items) {
            *done = true;
            return if v.len() == 1 {
                v.into_iter().next().expect("one")
            } else {
                Stmt::Seq(v)
            };
        }
    }
    map_children(s, &mut |c| Ok(rewrite_seq(c, f, done))).expect("infallible")
}

/// The name of a parallel or vectorized loop from the root down to `var`
/// (inclusive) that is not in `allowed`.
pub(crate) fn concurrent_loop(body: &Stmt, var: &TirVar, allowed: &[TirVar]) -> Option<String> {
    tree::loop_path(body, var)
        .into_iter()
        .find_map(|v| match tree::find_loop(body, &v) {
            Some(Stmt::For {
                kind: ForKind::Parallel | ForKind::Vectorized,
                ..
            }) if !allowed.contains(&v) => Some(v.name().to_string()),
            _ => None,
        })
}
