//! Row fusion: a row reduction followed by the work that reads it (softmax's
//! maximum, sum of exponentials and division; layer norm's sum, sum of
//! squares and normalization) runs as one loop over the rows, each stage
//! once per row, so a row is read while it is in cache and the per-row
//! values never leave it.
//!
//! A run of consecutive canonical stages of a root block is fused when,
//! with `r` the number of indices of the first stage's store (its *row
//! axes*: one for a matrix's rows, three for an attention softmax's
//! (batch, head, query)),
//!
//! 1. every stage's first `r` spatial variables are its store's first `r`
//!    indices, and their extents are provably equal to the first stage's
//!    (the rows);
//! 2. every stage but the last is a reduction to a per-row scalar (its store
//!    has those `r` indices only) into a buffer of the root block; and
//! 3. a stage reads a buffer an earlier stage of the run writes only at its
//!    own row (indices its first `r` spatial variables); and
//! 4. with more than one row axis, the last stage runs along the rows
//!    (more spatial axes than `r`): a matrix product and its epilogue, both
//!    over `(i, j)`, are not a row run.
//!
//! Each stage then becomes a nest without its row axes, the row replaced by
//! the shared loop's variable (the row axes fused into one), scheduled as
//! any other nest (dot products
//! along the row, vectorized elementwise loops). When the last stage's
//! value contains the summand of the sum just before it, with a
//! transcendental call in it (softmax's `exp(x - max)`), the summand is
//! computed once per element: stored into the output, summed from there,
//! and read back by the last stage ([`summand_once`]). The row loop is
//! `Parallel` when the run does enough work (by the same measure as a
//! single nest, with a run-time choice for symbolic sizes).

use super::knobs::Knobs;
use super::nest::{parallel_choice, transcendental_calls, Nest};
use super::util::*;
use crate::ir::prim_expr::{PrimExpr, TirVar};
use crate::tir::buffer_uses::expr_reads;
use crate::tir::{Buffer, ForKind, Stmt};
use std::collections::HashMap;

/// The stages `stages[i..i + n]` as one row loop, with `n`, if a run of at
/// least two stages starts at `i` (see the module docs).
pub(super) fn row_run(
    stages: &[Stmt],
    i: usize,
    allocated: &[Buffer],
    vector_bits: u32,
    knobs: Knobs,
) -> Option<(Stmt, usize)> {
    let first = Nest::of(stages.get(i)?, vector_bits, knobs)?;
    let r = first.indices.len();
    if r == 0 || first.reduce.is_empty() || r != first.spatial.len() {
        return None;
    }
    // The first `r` spatial variables, when they are the store's first
    // `r` indices.
    let row_of = |n: &Nest| -> Option<Vec<TirVar>> {
        let vars: Vec<TirVar> = n.spatial.get(..r)?.iter().map(|a| a.var.clone()).collect();
        at_row(n.indices.get(..r)?, &vars).then_some(vars)
    };
    let extents: Vec<PrimExpr> = first.spatial.iter().map(|a| a.extent.clone()).collect();
    let mut run: Vec<Nest> = Vec::new();
    let mut per_row: Vec<Buffer> = Vec::new();
    for stage in &stages[i..] {
        let Some(nest) = Nest::of(stage, vector_bits, knobs) else {
            break;
        };
        let Some(row) = row_of(&nest) else { break };
        if !nest.spatial[..r]
            .iter()
            .zip(&extents)
            .all(|(a, e)| same_extent(&a.extent, e))
        {
            break;
        }
        // Per-row values of earlier stages are read at this row only.
        let mut loads = Vec::new();
        collect_loads(&nest.value, &mut loads);
        if let Some(init) = &nest.init {
            collect_loads(init, &mut loads);
        }
        let local = loads
            .iter()
            .filter(|(b, _)| per_row.contains(b))
            .all(|(_, idx)| at_row(idx, &row));
        if !local {
            break;
        }
        let reads_run = loads.iter().any(|(b, _)| per_row.contains(b));
        let scalar_reduction =
            !nest.reduce.is_empty() && nest.indices.len() == r && allocated.contains(&nest.buffer);
        if !run.is_empty() && !reads_run {
            break;
        }
        let buffer = nest.buffer.clone();
        run.push(nest);
        if !scalar_reduction {
            break;
        }
        per_row.push(buffer);
    }
    let last_reads = run.len() >= 2;
    // Rows of several axes are a reduction's rows only when the last stage
    // runs along them (an attention softmax's keys): a matrix product and
    // its elementwise epilogue (both over `(i, j)`) are not rows.
    let along = r == 1 || run.last().is_some_and(|n| n.spatial.len() > r);
    if !last_reads || !along {
        return None;
    }
    let n = run.len();
    Some((fuse(&run, r), n))
}

/// Whether `indices` are exactly the row variables `row`, in order.
fn at_row(indices: &[PrimExpr], row: &[TirVar]) -> bool {
    indices.len() == row.len() && indices.iter().zip(row).all(|(e, v)| e.as_var() == Some(v))
}

/// The row loop over `run`, whose first `r` axes are the rows (see the
/// module docs).
fn fuse(run: &[Nest], r: usize) -> Stmt {
    let axes = &run[0].spatial[..r];
    let dtype = run[0].index_dtype();
    let work = run
        .iter()
        .map(Nest::work)
        .reduce(|a, b| a + b)
        .expect("a run has stages");
    let build = |parallel: bool| {
        let row = TirVar::with_dtype(format!("{}_row", axes[0].loop_var.name()), dtype);
        let stages: Vec<Nest> = run.iter().map(|n| without_rows(n, r, &row)).collect();
        let stages = summand_once(&stages).unwrap_or(stages);
        let body: Vec<Stmt> = stages
            .iter()
            .map(|n| n.with_new_loops().build(false))
            .collect();
        let kind = if parallel {
            ForKind::Parallel
        } else {
            ForKind::Serial
        };
        let extent = fused_extent(axes, dtype);
        for_(&row, PrimExpr::int_of(dtype, 0), extent, kind, seq(body))
    };
    match parallel_choice(&work, dtype) {
        Ok(parallel) => build(parallel),
        Err(cond) => Stmt::IfThenElse {
            cond,
            then_case: Box::new(build(true)),
            else_case: Some(Box::new(build(false))),
        },
    }
}

/// `n` without its first `r` axes (the rows), each read from the fused
/// row variable `row`.
fn without_rows(n: &Nest, r: usize, row: &TirVar) -> Nest {
    let map = unfuse(&n.spatial[..r], &PrimExpr::var(row), row.dtype());
    Nest {
        spatial: n.spatial[r..].to_vec(),
        reduce: n.reduce.clone(),
        buffer: n.buffer.clone(),
        indices: n.indices.iter().map(|e| e.substitute_map(&map)).collect(),
        value: n.value.substitute_map(&map),
        init: n.init.as_ref().map(|e| e.substitute_map(&map)),
        epilogue: None,
        vector_bits: n.vector_bits,
        knobs: n.knobs,
    }
}

/// Softmax's exponentials once, not twice: for row stages `… sum, last`
/// where `sum` is `s[row] + S(k)` over one reduce axis `k`, `last` is
/// elementwise over one axis `j` of the same extent, `S(j)` (with a
/// transcendental call) occurs in `last`'s value, and `last` writes its
/// buffer at `[.., j]`: the stages `… out[.., j] = S(j); s[row] += out[.., k];
/// out[.., j] = value with S(j) read from out`. The same numbers, summed in
/// the same order.
fn summand_once(stages: &[Nest]) -> Option<Vec<Nest>> {
    let n = stages.len();
    let (last, sum) = (
        stages.get(n.checked_sub(1)?)?,
        stages.get(n.checked_sub(2)?)?,
    );
    if !last.reduce.is_empty() || last.spatial.len() != 1 || last.epilogue.is_some() {
        return None;
    }
    if sum.reduce.len() != 1 || sum.epilogue.is_some() {
        return None;
    }
    let (j, k) = (&last.spatial[0], &sum.reduce[0]);
    if !same_extent(&j.extent, &k.extent) || j.var.dtype() != k.var.dtype() {
        return None;
    }
    let crate::ir::prim_expr::PrimExprKind::Add(a, summand) = sum.value.kind() else {
        return None;
    };
    let own = PrimExpr::load(&sum.buffer, sum.indices.clone());
    if *a != own || expr_reads(summand, &sum.buffer) || expr_reads(summand, &last.buffer) {
        return None;
    }
    if transcendental_calls(summand) == 0 {
        return None;
    }
    let to_j = HashMap::from([(k.var.clone(), PrimExpr::var(&j.var))]);
    let s_j = summand.substitute_map(&to_j);
    if !contains(&last.value, &s_j) {
        return None;
    }
    // `last` writes `[.., j]` with `j` only in its last index.
    let (head, tail) = last.indices.split_at(last.indices.len().checked_sub(1)?);
    if tail[0].as_var() != Some(&j.var) || head.iter().any(|e| uses_var(e, &j.var)) {
        return None;
    }
    let out_j = PrimExpr::load(&last.buffer, last.indices.clone());
    let mut out_k_idx = head.to_vec();
    out_k_idx.push(PrimExpr::var(&k.var));
    let out_k = PrimExpr::load(&last.buffer, out_k_idx);
    let exps = Nest {
        spatial: last.spatial.clone(),
        reduce: vec![],
        buffer: last.buffer.clone(),
        indices: last.indices.clone(),
        value: s_j.clone(),
        init: None,
        epilogue: None,
        vector_bits: last.vector_bits,
        knobs: last.knobs,
    };
    let summed = Nest {
        value: own + out_k,
        ..sum.with_new_loops()
    };
    let finished = Nest {
        value: replace_subexpr(&last.value, &s_j, &out_j),
        ..last.with_new_loops()
    };
    let mut out: Vec<Nest> = stages[..n - 2].iter().map(Nest::with_new_loops).collect();
    out.extend([exps, summed, finished]);
    Some(out)
}

/// Whether `sub` occurs in `e`.
fn contains(e: &PrimExpr, sub: &PrimExpr) -> bool {
    e == sub || e.children().into_iter().any(|c| contains(c, sub))
}

/// `e` with every occurrence of `sub` replaced by `with`.
fn replace_subexpr(e: &PrimExpr, sub: &PrimExpr, with: &PrimExpr) -> PrimExpr {
    if e == sub {
        return with.clone();
    }
    e.map_children(|c| replace_subexpr(c, sub, with))
}
