//! `quantize` and `dequantize`: one elementwise stage each, the scale and
//! zero point read at the element's index along `axis` when they are 1-d.
//!
//! `quantize` divides in `data`'s float type, rounds half to even
//! (`T.round`), adds the zero point in `float64` (exact for zero points of
//! 32 bits or fewer), clamps to `out_dtype`'s range and casts; a NaN
//! quotient gives the zero point. `dequantize` subtracts the zero point in
//! `int32` (`int64` when an operand is wider than 16 bits), casts to
//! `out_dtype` and multiplies by the scale there. The reference kernels
//! compute the same.

use super::{Legalize, LegalizeCtx};
use crate::ir::{Expr, PrimExpr};
use crate::op::infer::{attr_int, normalize_axis};
use crate::tir::te::{self, compute, Tensor};
use relax_runtime::{DataType, Error};

/// The normalized `axis` of the call (0 for a scalar `data`).
fn axis(cx: &LegalizeCtx<'_>, ndim: usize) -> Result<usize, Error> {
    if ndim == 0 {
        return Ok(0);
    }
    let a = attr_int(cx.call, "axis").unwrap_or(-1);
    cx.check(normalize_axis(cx.call, a, ndim as i32))
}

/// The scale or zero point `t` at output index `i`: its element along
/// `axis` when it is 1-d, else its only element.
fn pick(t: &Tensor, i: &[PrimExpr], axis: usize) -> PrimExpr {
    if t.ndim() == 1 {
        t.at(&[i[axis].clone()])
    } else {
        t.at(&[])
    }
}

fn quantize(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let (dims, out) = cx.out_tensor(0)?;
    let axis = axis(cx, dims.len())?;
    let f64t = DataType::f64();
    let (lo, hi) = (te::lowest(out).cast(f64t), te::highest(out).cast(f64t));
    cx.te1(&[0, 1, 2], |xs| {
        let (x, s, z) = (&xs[0], &xs[1], &xs[2]);
        let xdt = x.dtype();
        Ok(compute("T_quantize", x.shape().to_vec(), |i| {
            let q = te::div(x.at(i), pick(s, i, axis).cast(xdt));
            let zf = pick(z, i, axis).cast(f64t);
            let q = te::unary("round", q).cast(f64t) + zf.clone();
            let clamped = te::maximum(te::minimum(q.clone(), hi.clone()), lo.clone());
            PrimExpr::select(te::is_nan(&q), zf, clamped).cast(out)
        }))
    })
}

fn dequantize(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let (dims, out) = cx.out_tensor(0)?;
    let axis = axis(cx, dims.len())?;
    cx.te1(&[0, 1, 2], |xs| {
        let (x, s, z) = (&xs[0], &xs[1], &xs[2]);
        let wide = if x.dtype().bits() <= 16 && z.dtype().bits() <= 16 {
            DataType::i32()
        } else {
            DataType::i64()
        };
        Ok(compute("T_dequantize", x.shape().to_vec(), |i| {
            let diff = x.at(i).cast(wide) - pick(z, i, axis).cast(wide);
            diff.cast(out) * pick(s, i, axis).cast(out)
        }))
    })
}

/// The quantization legalizations.
pub const LEGALIZE: &[(&str, Legalize)] = &[
    ("relax.quantize", quantize),
    ("relax.dequantize", dequantize),
];
