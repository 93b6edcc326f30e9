//! Indexing: `take` (a gather: the index tensor is read inside the index
//! expression, so the read region of the data is its whole extent) and
//! `strided_slice` (an affine index per sliced axis, with the begin
//! normalized and clamped by Python's slice rules as inference does).

use super::{error, unravel, Legalize, LegalizeCtx};
use crate::ir::{Expr, PrimExpr};
use crate::op::infer::{
    attr_bool, attr_exprs, attr_int, attr_ints, normalize_axes, normalize_axis,
};
use crate::tir::te::compute;
use relax_runtime::{DataType, Error};

use super::statistical::input_ndim;

fn take(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let ndim = input_ndim(cx)?;
    let axis = match attr_int(cx.call, "axis") {
        Some(a) => Some(cx.check(normalize_axis(cx.call, a, ndim as i32))?),
        None => None,
    };
    cx.te1(&[0, 1], |xs| {
        let (x, ind) = (&xs[0], &xs[1]);
        let r = ind.ndim();
        let shape = match axis {
            None => ind.shape().to_vec(),
            Some(a) => [&x.shape()[..a], ind.shape(), &x.shape()[a + 1..]].concat(),
        };
        Ok(compute("T_take", shape, |i| match axis {
            None => {
                let flat = ind.at(i).cast(DataType::i64());
                x.at(&unravel(flat, x.shape()))
            }
            Some(a) => {
                let k = ind.at(&i[a..a + r]).cast(DataType::i64());
                let idx: Vec<PrimExpr> = i[..a]
                    .iter()
                    .cloned()
                    .chain(std::iter::once(k))
                    .chain(i[a + r..].iter().cloned())
                    .collect();
                x.at(&idx)
            }
        }))
    })
}

/// The first index of `begin::stride` over a dim of size `dim`: a negative
/// literal counts from the end, then clamps into `[0, dim]` (stride > 0) or
/// `[-1, dim - 1]` (stride < 0), the rule of the op's `slice_extent`.
fn slice_begin(begin: &PrimExpr, stride: i64, dim: &PrimExpr) -> PrimExpr {
    let b = match begin.as_int() {
        Some(v) if v < 0 => dim.clone() + v,
        _ => begin.clone(),
    };
    if stride > 0 {
        b.max(0).min(dim.clone())
    } else {
        b.max(-1).min(dim.clone() - 1)
    }
}

fn strided_slice(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let ndim = input_ndim(cx)?;
    let axes = attr_ints(cx.call, "axes").unwrap_or_default();
    let axes = cx.check(normalize_axes(cx.call, &axes, ndim as i32))?;
    let begin = attr_exprs(cx.call, "begin").unwrap_or_default();
    let strides: Vec<i64> = match attr_exprs(cx.call, "strides") {
        Some(s) => s
            .iter()
            .map(|e| e.as_int())
            .collect::<Option<_>>()
            .ok_or_else(|| error("strided_slice: strides must be integer literals"))?,
        None => vec![1; axes.len()],
    };
    let inbound = attr_bool(cx.call, "assume_inbound", false);
    let (shape, _) = cx.out_tensor(0)?;
    cx.te1(&[0], |xs| {
        let x = &xs[0];
        Ok(compute("T_strided_slice", shape, |i| {
            let mut idx = i.to_vec();
            for (k, &a) in axes.iter().enumerate() {
                let s = strides[k];
                let b = if inbound && s == 1 {
                    begin[k].clone()
                } else {
                    slice_begin(&begin[k], s, &x.shape()[a])
                };
                idx[a] = b + i[a].clone() * s;
            }
            x.at(&idx)
        }))
    })
}

/// The indexing legalizations.
pub const LEGALIZE: &[(&str, Legalize)] =
    &[("relax.take", take), ("relax.strided_slice", strided_slice)];
