//! Sorting: `topk`, by ranks.
//!
//! 1. `T_rank`: each element's place in the sorted axis, the number of
//!    elements along the axis that come before it (better, or equal and
//!    earlier). "Better" is larger (smaller with `largest = False`), NaN
//!    counting as larger than any number and equal to NaN, so the order is
//!    total and the ranks are `0..n` exactly once each.
//! 2. `T_topk_indices`: output position `o` takes the position whose rank
//!    is `o` (a `max` reduction over the axis, -1 for none, which cannot
//!    happen; it is clamped to 0 so no read leaves the axis), in `dtype`.
//! 3. `T_topk_values`: the data at those positions.
//!
//! O(n²) per lane along the axis: simple and exact, like the reference
//! kernel's stable sort.

use super::statistical::input_ndim;
use super::{Legalize, LegalizeCtx};
use crate::ir::{AttrValue, Expr, PrimExpr};
use crate::op::infer::{attr, attr_bool, attr_int, normalize_axis};
use crate::tir::te::{self, compute, reduce_axis, Combiner, Reduce};
use relax_runtime::{DataType, Error};

/// Whether `a` comes before `b` in the order of `largest` (NaN largest).
fn better(a: &PrimExpr, b: &PrimExpr, largest: bool) -> PrimExpr {
    let (hi, lo) = if largest { (a, b) } else { (b, a) };
    hi.clone()
        .gt(lo.clone())
        .or(te::is_nan(hi).and(!te::is_nan(lo)))
}

/// Whether `a` and `b` are equal in that order (NaN equals NaN).
fn same(a: &PrimExpr, b: &PrimExpr) -> PrimExpr {
    a.clone()
        .eq_(b.clone())
        .or(te::is_nan(a).and(te::is_nan(b)))
}

fn topk(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let ndim = input_ndim(cx)?;
    let axis = attr_int(cx.call, "axis").unwrap_or(-1);
    let axis = cx.check(normalize_axis(cx.call, axis, ndim as i32))?;
    let largest = attr_bool(cx.call, "largest", true);
    let ret = match attr(cx.call, "ret_type") {
        Some(AttrValue::Str(s)) => s.clone(),
        _ => "both".to_string(),
    };
    let (out_dims, _) = cx.out_tensor(0)?;
    let index_dtype = match ret.as_str() {
        "both" => cx.out_tensor(1)?.1,
        "indices" => cx.out_tensor(0)?.1,
        _ => DataType::i32(),
    };
    cx.te1_many(&[0], |xs| {
        let x = &xs[0];
        let n = x.shape()[axis].clone();
        let rank = compute("T_rank", x.shape().to_vec(), |i| {
            let j = reduce_axis(n.clone(), "j");
            let mut at_j = i.to_vec();
            at_j[axis] = j.to_expr();
            let (vi, vj) = (x.at(i), x.at(&at_j));
            let before =
                better(&vj, &vi, largest).or(same(&vj, &vi).and(j.to_expr().lt(i[axis].clone())));
            Reduce {
                combiner: Combiner::Sum,
                source: PrimExpr::select(
                    before,
                    PrimExpr::int_of(DataType::i64(), 1),
                    PrimExpr::int_of(DataType::i64(), 0),
                ),
                axes: vec![j],
            }
        });
        let found = compute("T_topk_found", out_dims.clone(), |o| {
            let p = reduce_axis(n.clone(), "p");
            let mut at_p = o.to_vec();
            at_p[axis] = p.to_expr();
            let hit = rank.at(&at_p).eq_(o[axis].clone().cast(DataType::i64()));
            Reduce {
                combiner: Combiner::Max,
                source: PrimExpr::select(
                    hit,
                    p.to_expr().cast(DataType::i64()),
                    PrimExpr::int_of(DataType::i64(), -1),
                ),
                axes: vec![p],
            }
        });
        let indices = compute("T_topk_indices", out_dims.clone(), |o| {
            found
                .at(o)
                .max(PrimExpr::int_of(DataType::i64(), 0))
                .cast(index_dtype)
        });
        let values = compute("T_topk_values", out_dims.clone(), |o| {
            let mut at = o.to_vec();
            at[axis] = found.at(o).max(PrimExpr::int_of(DataType::i64(), 0));
            x.at(&at)
        });
        Ok(match ret.as_str() {
            "values" => vec![values],
            "indices" => vec![indices],
            _ => vec![values, indices],
        })
    })
}

/// The sorting legalizations.
pub const LEGALIZE: &[(&str, Legalize)] = &[("relax.topk", topk)];
