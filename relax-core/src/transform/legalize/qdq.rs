//! `quantize` and `dequantize`: one elementwise stage each, the scale and
//! zero point read at the element's index along `axis` when they are 1-d.
//!
//! `quantize` divides in `data`'s float type, rounds half to even
//! (`T.round`), adds the zero point, clamps to `out_dtype`'s range and
//! casts; a NaN quotient gives the zero point. The sum and the clamp are
//! in `float32` when the output and the zero point have at most 16 bits
//! (and `data` at most 32), else in `float64`: either way a sum inside the
//! output's range is exact (an integer below 2^24, resp. 2^53), and one
//! outside it is clamped to the same bound as the exact sum would be. The
//! rounded quotient is read twice (the NaN test, the clamp through
//! `T.min`/`T.max` nodes): fused into a chain of quantizes (a QDQ model's
//! requantizations), the inlined expression grows by a factor of two per
//! quantize, not the twenty the NaN-propagating `maximum`/`minimum` would
//! give. `dequantize` subtracts the zero point in
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
    cx.te1(&[0, 1, 2], |xs| {
        let (x, s, z) = (&xs[0], &xs[1], &xs[2]);
        let xdt = x.dtype();
        let narrow = out.bits() <= 16 && z.dtype().bits() <= 16 && xdt.bits() <= 32;
        let wt = if narrow {
            DataType::f32()
        } else {
            DataType::f64()
        };
        let (lo, hi) = (te::lowest(out).cast(wt), te::highest(out).cast(wt));
        Ok(compute("T_quantize", x.shape().to_vec(), |i| {
            let q = te::div(x.at(i), pick(s, i, axis).cast(xdt));
            let r = te::unary("round", q).cast(wt);
            let zf = pick(z, i, axis).cast(wt);
            // Min and Max nodes (the value is not NaN where it is taken).
            let clamped = (r.clone() + zf.clone()).min(hi.clone()).max(lo.clone());
            let nan = PrimExpr::call(DataType::bool(), "isnan", vec![r]);
            PrimExpr::select(nan, zf, clamped).cast(out)
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
