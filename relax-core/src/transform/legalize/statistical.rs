//! Reductions: `sum`, `prod`, `max`, `min` (one reduction stage) and
//! `mean` (a sum, then a division by the number of elements reduced,
//! truncating for integers as the reference kernel does).

use super::{Legalize, LegalizeCtx};
use crate::ir::{Expr, PrimExpr};
use crate::op::infer::{attr_bool, attr_ints, normalize_axes};
use crate::tir::te::{self, compute, reduce_axis, Combiner, Reduce, Tensor};
use relax_runtime::Error;

/// The axes an op reduces (`axis` attribute, all when `None`), normalized.
pub(crate) fn reduce_axes(
    cx: &LegalizeCtx<'_>,
    ndim: usize,
    name: &str,
) -> Result<Vec<usize>, Error> {
    match attr_ints(cx.call, name) {
        Some(a) => cx.check(normalize_axes(cx.call, &a, ndim as i32)),
        None => Ok((0..ndim).collect()),
    }
}

/// The shape of reducing `x` over `axes`: reduced dims dropped, or kept as
/// 1 with `keepdims` (the op's inference rule).
pub(crate) fn reduced_shape(x: &Tensor, axes: &[usize], keepdims: bool) -> Vec<PrimExpr> {
    x.shape()
        .iter()
        .enumerate()
        .filter_map(|(i, d)| match (axes.contains(&i), keepdims) {
            (false, _) => Some(d.clone()),
            (true, true) => Some(PrimExpr::int(1)),
            (true, false) => None,
        })
        .collect()
}

/// The index into `x` for output index `out` of a reduction over `axes`
/// whose reduced dims take the values `red` (in order).
pub(crate) fn source_index(
    ndim: usize,
    axes: &[usize],
    keepdims: bool,
    out: &[PrimExpr],
    red: &[PrimExpr],
) -> Vec<PrimExpr> {
    let mut o = out.iter();
    let mut r = red.iter();
    (0..ndim)
        .map(|i| {
            if axes.contains(&i) {
                if keepdims {
                    o.next();
                }
                r.next().cloned().unwrap_or_else(|| PrimExpr::int(0))
            } else {
                o.next().cloned().unwrap_or_else(|| PrimExpr::int(0))
            }
        })
        .collect()
}

/// A stage reducing `f(x[…])` over `axes` with `combiner`.
pub(crate) fn reduce_stage(
    name: &str,
    x: &Tensor,
    axes: &[usize],
    keepdims: bool,
    combiner: Combiner,
    f: impl Fn(PrimExpr, &[PrimExpr]) -> PrimExpr,
) -> Tensor {
    let ks: Vec<_> = axes
        .iter()
        .enumerate()
        .map(|(j, &a)| reduce_axis(x.shape()[a].clone(), &format!("k{j}")))
        .collect();
    let shape = reduced_shape(x, axes, keepdims);
    compute(name, shape, |i| {
        let red: Vec<PrimExpr> = ks.iter().map(|k| k.to_expr()).collect();
        let idx = source_index(x.ndim(), axes, keepdims, i, &red);
        Reduce {
            combiner,
            source: f(x.at(&idx), &idx),
            axes: ks.clone(),
        }
    })
}

fn reduction(cx: &mut LegalizeCtx<'_>, combiner: Combiner) -> Result<Expr, Error> {
    let keepdims = attr_bool(cx.call, "keepdims", false);
    let (name, ndim) = (format!("T_{}", cx.name()), input_ndim(cx)?);
    let axes = reduce_axes(cx, ndim, "axis")?;
    cx.te1(&[0], |xs| {
        Ok(reduce_stage(
            &name,
            &xs[0],
            &axes,
            keepdims,
            combiner,
            |v, _| v,
        ))
    })
}

/// The rank of argument 0.
pub(crate) fn input_ndim(cx: &LegalizeCtx<'_>) -> Result<usize, Error> {
    let t = cx.check(crate::op::infer::tensor_arg(cx.call, 0))?;
    Ok(t.ndim.max(0) as usize)
}

fn sum(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    reduction(cx, Combiner::Sum)
}
fn prod(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    reduction(cx, Combiner::Prod)
}
fn max(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    reduction(cx, Combiner::Max)
}
fn min(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    reduction(cx, Combiner::Min)
}

fn mean(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let keepdims = attr_bool(cx.call, "keepdims", false);
    let ndim = input_ndim(cx)?;
    let axes = reduce_axes(cx, ndim, "axis")?;
    cx.te1(&[0], |xs| {
        let x = &xs[0];
        let s = reduce_stage("T_sum", x, &axes, keepdims, Combiner::Sum, |v, _| v);
        let count = axes
            .iter()
            .fold(PrimExpr::int(1), |acc, &a| acc * x.shape()[a].clone());
        Ok(compute("T_mean", s.shape().to_vec(), |i| {
            te::div(s.at(i), count.clone().cast(x.dtype()))
        }))
    })
}

/// The statistical legalizations.
pub const LEGALIZE: &[(&str, Legalize)] = &[
    ("relax.sum", sum),
    ("relax.mean", mean),
    ("relax.max", max),
    ("relax.min", min),
    ("relax.prod", prod),
];
