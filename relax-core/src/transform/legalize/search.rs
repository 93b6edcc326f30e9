//! `where` (three-way broadcast select) and `argmax`/`argmin`.
//!
//! `argmax` is two stages: the maximum (NaN-propagating), then the smallest
//! flat index along the reduced axes whose element equals it or is NaN; so
//! ties give the first occurrence and a NaN gives the first NaN, as the
//! reference kernel (and NumPy) do. The index is row-major over the reduced
//! axes, which for `axis = None` is the index into the flattened tensor.

use super::statistical::{input_ndim, reduce_stage, reduced_shape, source_index};
use super::{broadcast_index, broadcast_shape, ravel, Legalize, LegalizeCtx};
use crate::ir::{Expr, PrimExpr};
use crate::op::infer::{attr_bool, attr_int, normalize_axis};
use crate::tir::te::{self, compute, reduce_axis, Combiner, Reduce};
use relax_runtime::Error;

fn where_(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    cx.te1(&[0, 1, 2], |xs| {
        let (c, a, b) = (&xs[0], &xs[1], &xs[2]);
        let shape = broadcast_shape(c.shape(), &broadcast_shape(a.shape(), b.shape()));
        let out = shape.clone();
        Ok(compute("T_where", shape, |i| {
            PrimExpr::select(
                c.at(&broadcast_index(c.shape(), i, &out)),
                a.at(&broadcast_index(a.shape(), i, &out)),
                b.at(&broadcast_index(b.shape(), i, &out)),
            )
        }))
    })
}

fn arg_reduce(cx: &mut LegalizeCtx<'_>, combiner: Combiner) -> Result<Expr, Error> {
    let keepdims = attr_bool(cx.call, "keepdims", false);
    let ndim = input_ndim(cx)?;
    let axes: Vec<usize> = match attr_int(cx.call, "axis") {
        Some(a) => vec![cx.check(normalize_axis(cx.call, a, ndim as i32))?],
        None => (0..ndim).collect(),
    };
    let name = format!("T_{}", cx.name());
    cx.te1(&[0], |xs| {
        let x = &xs[0];
        let ext = reduce_stage("T_extreme", x, &axes, keepdims, combiner, |v, _| v);
        let dims: Vec<PrimExpr> = axes.iter().map(|&a| x.shape()[a].clone()).collect();
        let count = dims.iter().fold(PrimExpr::int(1), |acc, d| acc * d.clone());
        let ks: Vec<_> = dims
            .iter()
            .enumerate()
            .map(|(j, d)| reduce_axis(d.clone(), &format!("k{j}")))
            .collect();
        Ok(compute(&name, reduced_shape(x, &axes, keepdims), |i| {
            let red: Vec<PrimExpr> = ks.iter().map(|k| k.to_expr()).collect();
            let v = x.at(&source_index(x.ndim(), &axes, keepdims, i, &red));
            let hit = v.clone().eq_(ext.at(i)).or(te::is_nan(&v));
            let flat = ravel(&red, &dims);
            Reduce {
                combiner: Combiner::Min,
                source: PrimExpr::select(hit, flat, count.clone()),
                axes: ks.clone(),
            }
        }))
    })
}

fn argmax(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    arg_reduce(cx, Combiner::Max)
}

fn argmin(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    arg_reduce(cx, Combiner::Min)
}

/// The search legalizations.
pub const LEGALIZE: &[(&str, Legalize)] = &[
    ("relax.where", where_),
    ("relax.argmax", argmax),
    ("relax.argmin", argmin),
];
