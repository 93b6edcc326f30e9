//! `split`, `fuse` and `reorder`: loop primitives that change the
//! iteration space's loops but not the block instances they run.
//!
//! 1. `split(loop, factors)` replaces a loop of extent `n` by nested loops
//!    of the given extents (one may be `None`, inferred as
//!    `ceil(n / product of the others)`); the old loop variable becomes
//!    `min + l0 * f1 * … + l1 * f2 * … + … + lk`. When the product cannot be
//!    proved equal to `n`, every block under the loop gets the predicate
//!    `fused < n`, so no iteration outside the original range runs.
//! 2. `fuse(loops)` replaces a chain of directly nested loops by one loop
//!    over the product of their extents; each old variable becomes
//!    `min + (fused // inner) % extent`. Loops whose extents depend on one
//!    another, or that mix loops bound to spatial and to reduce block
//!    variables, are refused (the reduction's `init` must keep running at
//!    the first instance of every output element).
//! 3. `reorder(loops)` permutes loops of one chain of directly nested
//!    loops; loops of the chain not listed keep their places. A loop whose
//!    bounds use another loop of the chain is refused, and so is a nest in
//!    which one block instance reads what another writes in a different
//!    iteration of a moved loop (a reduction's update of its own element
//!    excepted: only its summation order changes).
//! 4. Factors of `split` whose product is not provably at least the
//!    extent are refused (iterations would be lost).

use super::tree::{self, find_loop, replace_loop};
use super::{Instruction, LoopRV, Result, Schedule, ScheduleError};
use crate::arith::Analyzer;
use crate::ir::prim_expr::{PrimExpr, TirVar};
use crate::ir::Attrs;
use crate::tir::{ForKind, IterKind, Stmt, Substitute};
use std::collections::HashMap;

/// The header of a loop: variable, min, extent, kind, annotations.
type Header = (TirVar, PrimExpr, PrimExpr, ForKind, Attrs);

fn header(s: &Stmt) -> (Header, &Stmt) {
    match s {
        Stmt::For {
            loop_var,
            min,
            extent,
            kind,
            body,
            annotations,
        } => (
            (
                loop_var.clone(),
                min.clone(),
                extent.clone(),
                *kind,
                annotations.clone(),
            ),
            body,
        ),
        _ => unreachable!("find_loop returns loops"),
    }
}

fn nest(headers: &[Header], body: Stmt) -> Stmt {
    headers
        .iter()
        .rev()
        .fold(body, |body, (v, min, extent, kind, annotations)| {
            Stmt::For {
                loop_var: v.clone(),
                min: min.clone(),
                extent: extent.clone(),
                kind: *kind,
                body: Box::new(body),
                annotations: annotations.clone(),
            }
        })
}

/// Whether the variable `v` is bound to spatial and to reduce block
/// variables of the blocks in `s`.
pub(crate) fn binding_kinds(s: &Stmt, v: &TirVar) -> (bool, bool) {
    let (mut spatial, mut reduce) = (false, false);
    for (_, b) in tree::realizes(s) {
        for (iv, value) in b.iter_vars.iter().zip(&b.iter_values) {
            if value.free_vars().contains(v) {
                match iv.kind {
                    IterKind::Spatial => spatial = true,
                    IterKind::Reduce => reduce = true,
                }
            }
        }
    }
    (spatial, reduce)
}

impl Schedule {
    /// Splits `loop_rv` into nested loops of extents `factors` (TVM's
    /// `split`); at most one factor is `None` (inferred). Returns the new
    /// loops, outermost first.
    pub fn split(&mut self, loop_rv: LoopRV, factors: &[Option<i64>]) -> Result<Vec<LoopRV>> {
        let var = self.loop_var(loop_rv)?;
        let what = self.describe_loop(loop_rv);
        let err = |m: String| Err(ScheduleError::new(format!("split: {what}: {m}")));
        if factors.is_empty() {
            return err("expected at least one factor".into());
        }
        if factors.iter().filter(|f| f.is_none()).count() > 1 {
            return err(format!(
                "at most one factor may be inferred (None), found {factors:?}"
            ));
        }
        if let Some(f) = factors.iter().flatten().find(|f| **f < 1) {
            return err(format!("factors must be positive, found {f}"));
        }
        let known = factors
            .iter()
            .flatten()
            .try_fold(1i64, |acc, f| acc.checked_mul(*f));
        let Some(known) = known else {
            return err(format!("the product of {factors:?} overflows"));
        };
        let ((_, min, extent, _, _), body) =
            header(find_loop(&self.func.body, &var).expect("found"));
        let dt = var.dtype();
        let analyzer = Analyzer::new();
        let inferred = match extent.as_int() {
            Some(n) => PrimExpr::int_of(dt, (n.max(0) + known - 1) / known),
            None => analyzer.simplify(
                &(extent.clone() + PrimExpr::int_of(extent.dtype(), known - 1))
                    .floordiv(PrimExpr::int_of(extent.dtype(), known)),
            ),
        };
        let extents: Vec<PrimExpr> = factors
            .iter()
            .map(|f| f.map_or_else(|| inferred.clone(), |f| PrimExpr::int_of(dt, f)))
            .collect();
        let vars: Vec<TirVar> = (0..factors.len())
            .map(|i| TirVar::with_dtype(format!("{}_{i}", var.name()), dt))
            .collect();
        let fused = vars
            .iter()
            .zip(&extents)
            .skip(1)
            .fold(vars[0].to_expr(), |acc, (v, e)| {
                acc * e.clone() + v.to_expr()
            });
        let fused = analyzer.simplify(&fused);
        let value = match min.as_int() {
            Some(0) => fused.clone(),
            _ => analyzer.simplify(&(min.clone() + fused.clone())),
        };
        let product = extents
            .iter()
            .skip(1)
            .fold(extents[0].clone(), |acc, e| acc * e.clone());
        let product = analyzer.simplify(&product);
        let exact = analyzer.can_prove_equal(&product, &extent);
        let inferred_one = factors.iter().any(Option::is_none);
        if !exact && !inferred_one && !analyzer.can_prove(&product.clone().ge(extent.clone())) {
            return err(format!(
                "the factors {factors:?} cover {product} iterations, fewer than the extent {extent} (or not provably as many)"
            ));
        }
        let mut sub = Substitute::default();
        sub.vars.insert(var.clone(), value);
        let mut new_body = sub.stmt(body);
        if !exact {
            new_body = tree::add_predicate(&new_body, &fused.lt(extent.clone()));
        }
        let headers: Vec<Header> = vars
            .iter()
            .zip(&extents)
            .map(|(v, e)| {
                (
                    v.clone(),
                    PrimExpr::int_of(dt, 0),
                    e.clone(),
                    ForKind::Serial,
                    Attrs::new(),
                )
            })
            .collect();
        let new_loop = nest(&headers, new_body);
        self.func.body = replace_loop(&self.func.body, &var, &mut |_| Ok(new_loop.clone()))?;
        let out: Vec<LoopRV> = vars.iter().map(|v| self.new_loop(v)).collect();
        self.trace.insts.push(Instruction::Split {
            loop_rv: loop_rv.0,
            factors: factors.to_vec(),
            outs: out.iter().map(|l| l.0).collect(),
        });
        Ok(out)
    }

    /// Fuses a chain of directly nested loops, outermost first, into one
    /// loop (TVM's `fuse`).
    pub fn fuse(&mut self, loops: &[LoopRV]) -> Result<LoopRV> {
        if loops.len() < 2 {
            return Err(ScheduleError::new(format!(
                "fuse: expected at least two loops, found {}",
                loops.len()
            )));
        }
        let vars = loops
            .iter()
            .map(|l| self.loop_var(*l))
            .collect::<Result<Vec<_>>>()?;
        let outer = find_loop(&self.func.body, &vars[0]).expect("found");
        let mut headers: Vec<Header> = Vec::new();
        let mut cur = outer;
        for (i, v) in vars.iter().enumerate() {
            match cur {
                Stmt::For { loop_var, .. } if loop_var == v => {}
                _ => {
                    return Err(ScheduleError::new(format!(
                        "fuse: {} is not the only statement in the body of {}",
                        self.describe_loop(loops[i]),
                        self.describe_loop(loops[i - 1])
                    )))
                }
            }
            let (h, body) = header(cur);
            headers.push(h);
            cur = body;
        }
        let body = cur;
        for (i, (_, min, extent, _, _)) in headers.iter().enumerate() {
            let used = min.free_vars().into_iter().chain(extent.free_vars());
            if let Some(u) = used.into_iter().find(|u| vars[..i].contains(u)) {
                return Err(ScheduleError::new(format!(
                    "fuse: the bounds of {} depend on loop {}",
                    self.describe_loop(loops[i]),
                    u.name()
                )));
            }
        }
        let kinds: Vec<(bool, bool)> = vars.iter().map(|v| binding_kinds(body, v)).collect();
        if kinds.iter().any(|k| k.0) && kinds.iter().any(|k| k.1) {
            let (s, r) = (
                kinds.iter().position(|k| k.0).expect("some"),
                kinds.iter().position(|k| k.1).expect("some"),
            );
            return Err(ScheduleError::new(format!(
                "fuse: {} is bound to a spatial block variable and {} to a reduce one",
                self.describe_loop(loops[s]),
                self.describe_loop(loops[r])
            )));
        }
        let analyzer = Analyzer::new();
        let dt = vars[0].dtype();
        let name = vars.iter().map(|v| v.name()).collect::<Vec<_>>().join("_") + "_fused";
        let fused = TirVar::with_dtype(name, dt);
        let extent = analyzer.simplify(
            &headers
                .iter()
                .skip(1)
                .fold(headers[0].2.clone(), |acc, h| acc * h.2.clone()),
        );
        let mut sub = Substitute::default();
        let n = headers.len();
        for (i, (v, min, ext, _, _)) in headers.iter().enumerate() {
            let inner = headers[i + 1..]
                .iter()
                .fold(PrimExpr::int_of(dt, 1), |acc, h| acc * h.2.clone());
            let inner = analyzer.simplify(&inner);
            let mut value = fused.to_expr();
            if i + 1 < n {
                value = value.floordiv(inner);
            }
            if i > 0 {
                value = value.floormod(ext.clone());
            }
            if min.as_int() != Some(0) {
                value = min.clone() + value;
            }
            sub.vars.insert(v.clone(), analyzer.simplify(&value));
        }
        let new_loop = Stmt::For {
            loop_var: fused.clone(),
            min: PrimExpr::int_of(dt, 0),
            extent,
            kind: ForKind::Serial,
            body: Box::new(sub.stmt(body)),
            annotations: Attrs::new(),
        };
        self.func.body = replace_loop(&self.func.body, &vars[0], &mut |_| Ok(new_loop.clone()))?;
        let out = self.new_loop(&fused);
        self.trace.insts.push(Instruction::Fuse {
            loops: loops.iter().map(|l| l.0).collect(),
            out: out.0,
        });
        Ok(out)
    }

    /// Puts the loops `loops`, which lie on one chain of directly nested
    /// loops, in the given order, outermost first (TVM's `reorder`).
    pub fn reorder(&mut self, loops: &[LoopRV]) -> Result<()> {
        let vars = loops
            .iter()
            .map(|l| self.loop_var(*l))
            .collect::<Result<Vec<_>>>()?;
        for (i, v) in vars.iter().enumerate() {
            if vars[..i].contains(v) {
                return Err(ScheduleError::new(format!(
                    "reorder: {} is listed twice",
                    self.describe_loop(loops[i])
                )));
            }
        }
        if vars.is_empty() {
            return Ok(());
        }
        let paths: Vec<Vec<TirVar>> = vars
            .iter()
            .map(|v| tree::loop_path(&self.func.body, v))
            .collect();
        let top = (0..vars.len())
            .min_by_key(|i| paths[*i].len())
            .expect("non-empty");
        for (i, p) in paths.iter().enumerate() {
            if !p.contains(&vars[top]) {
                return Err(ScheduleError::new(format!(
                    "reorder: {} and {} are not in one loop nest",
                    self.describe_loop(loops[top]),
                    self.describe_loop(loops[i])
                )));
            }
        }
        let mut chain: Vec<Header> = Vec::new();
        let mut cur = find_loop(&self.func.body, &vars[top]).expect("found");
        loop {
            let (h, body) = header(cur);
            chain.push(h);
            if vars.iter().all(|v| chain.iter().any(|h| &h.0 == v)) {
                cur = body;
                break;
            }
            match body {
                Stmt::For { .. } => cur = body,
                _ => {
                    let missing = (0..vars.len())
                        .find(|i| !chain.iter().any(|h| h.0 == vars[*i]))
                        .expect("some loop is missing");
                    return Err(ScheduleError::new(format!(
                        "reorder: {} is not on a single chain of loops below {}: loop {} has a body other than one loop",
                        self.describe_loop(loops[missing]),
                        self.describe_loop(loops[top]),
                        chain.last().expect("non-empty").0.name()
                    )));
                }
            }
        }
        let body = cur.clone();
        let positions: Vec<usize> = (0..chain.len())
            .filter(|i| vars.contains(&chain[*i].0))
            .collect();
        let chain_vars: Vec<TirVar> = chain.iter().map(|h| h.0.clone()).collect();
        for h in &chain {
            let used = h.1.free_vars().into_iter().chain(h.2.free_vars());
            if let Some(u) = used.into_iter().find(|u| chain_vars.contains(u)) {
                return Err(ScheduleError::new(format!(
                    "reorder: the bounds of loop {} depend on loop {}",
                    h.0.name(),
                    u.name()
                )));
            }
        }
        // Dependences between block instances must stay within one
        // iteration of every loop moved, except a reduction's update of
        // the element it writes (the order of a reduction is free).
        let top_loop = find_loop(&self.func.body, &chain[0].0).expect("found");
        let ranges = super::for_kind::loop_ranges(top_loop);
        let all = super::for_kind::all_loops(&self.func.body);
        let blocks = tree::realizes(top_loop);
        for (_, w) in &blocks {
            for (_, r) in &blocks {
                for region in &w.writes {
                    let mut loads = Vec::new();
                    tree::loads(&r.body, &region.buffer, &mut loads);
                    let read_regions: Vec<_> = r
                        .reads
                        .iter()
                        .filter(|g| g.buffer == region.buffer)
                        .collect();
                    if loads.is_empty() && read_regions.is_empty() {
                        continue;
                    }
                    let update = w.name == r.name
                        && w.iter_vars.iter().any(|iv| iv.kind == IterKind::Reduce)
                        && read_regions.iter().all(|g| g.region == region.region)
                        && loads.iter().all(|idx| {
                            idx.len() == region.region.len()
                                && idx
                                    .iter()
                                    .zip(&region.region)
                                    .all(|(i, (lo, n))| i == lo && n.as_int() == Some(1))
                        });
                    if update {
                        continue;
                    }
                    for v in &vars {
                        if !super::for_kind::same_iteration(w, r, &region.buffer, v, &ranges, &all)
                        {
                            return Err(ScheduleError::new(format!(
                                "reorder: block {:?} reads {} that block {:?} writes in another iteration of loop {}",
                                r.name,
                                region.buffer.name(),
                                w.name,
                                v.name()
                            )));
                        }
                    }
                }
            }
        }
        let by_var: HashMap<TirVar, Header> =
            chain.iter().map(|h| (h.0.clone(), h.clone())).collect();
        let mut new_chain = chain.clone();
        for (pos, v) in positions.iter().zip(&vars) {
            new_chain[*pos] = by_var[v].clone();
        }
        let new_loop = nest(&new_chain, body);
        self.func.body = replace_loop(&self.func.body, &chain[0].0, &mut |_| Ok(new_loop.clone()))?;
        self.trace.insts.push(Instruction::Reorder {
            loops: loops.iter().map(|l| l.0).collect(),
        });
        Ok(())
    }
}
