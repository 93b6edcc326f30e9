//! `image.resize2d`: one stage `resize` over the output, each pixel read
//! at the source coordinate of its mode (`relax_runtime::kernels::image`),
//! computed in `float64` as the reference kernel computes it; indices are
//! clamped into the image, so no read is out of bounds.

use super::{convert, Legalize, LegalizeCtx};
use crate::ir::{DataType, Expr, PrimExpr};
use crate::op::image::resize_mode;
use crate::tir::te::{self, compute};
use relax_runtime::kernels::image::{CoordinateMode, ResizeMode, Rounding};
use relax_runtime::Error;

fn f64c(v: f64) -> PrimExpr {
    PrimExpr::float(DataType::f64(), v)
}

/// The source coordinate (float64) of output index `o` along an axis of
/// `input` extent resized to `output`.
fn source(mode: &ResizeMode, o: &PrimExpr, input: &PrimExpr, output: &PrimExpr) -> PrimExpr {
    let (o, i, out) = (
        o.clone().cast(DataType::f64()),
        input.clone().cast(DataType::f64()),
        output.clone().cast(DataType::f64()),
    );
    let scale = te::div(i.clone(), out.clone());
    let half = || (o.clone() + f64c(0.5)) * scale.clone() - f64c(0.5);
    match mode.coordinates {
        CoordinateMode::HalfPixel => half(),
        CoordinateMode::PytorchHalfPixel => {
            PrimExpr::select(out.clone().gt(f64c(1.0)), half(), f64c(0.0))
        }
        CoordinateMode::AlignCorners => PrimExpr::select(
            out.clone().gt(f64c(1.0)),
            te::div(o.clone() * (i - f64c(1.0)), out - f64c(1.0)),
            f64c(0.0),
        ),
        CoordinateMode::Asymmetric => o * scale,
        CoordinateMode::TfHalfPixelForNn => (o + f64c(0.5)) * scale,
    }
}

fn floor(v: PrimExpr) -> PrimExpr {
    te::unary("floor", v)
}

fn ceil(v: PrimExpr) -> PrimExpr {
    te::unary("ceil", v)
}

/// `v` rounded as `nearest_neighbor` rounds.
fn round(mode: &ResizeMode, v: PrimExpr) -> PrimExpr {
    match mode.rounding {
        Rounding::Round => PrimExpr::select(
            v.clone().ge(f64c(0.0)),
            floor(v.clone() + f64c(0.5)),
            ceil(v - f64c(0.5)),
        ),
        Rounding::RoundPreferFloor => ceil(v - f64c(0.5)),
        Rounding::RoundPreferCeil => floor(v + f64c(0.5)),
        Rounding::Floor => floor(v),
        Rounding::Ceil => ceil(v),
    }
}

/// A float coordinate clamped into `[0, extent - 1]`, as an index.
fn index(v: PrimExpr, extent: &PrimExpr) -> PrimExpr {
    let last = (extent.clone() - 1).cast(DataType::f64());
    v.min(last).max(f64c(0.0)).cast(DataType::i64())
}

fn resize2d(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let (shape, dtype) = cx.out_tensor(0)?;
    let mode = cx.check(resize_mode(cx.call))?;
    cx.te1(&[0], |xs| {
        let x = &xs[0];
        let dims = x.shape().to_vec();
        let (h, w) = (dims[2].clone(), dims[3].clone());
        let (oh, ow) = (shape[2].clone(), shape[3].clone());
        Ok(compute("resize", shape.clone(), |i| {
            let sy = source(&mode, &i[2], &h, &oh);
            let sx = source(&mode, &i[3], &w, &ow);
            let at = |y: PrimExpr, xx: PrimExpr| {
                x.at(&[i[0].clone(), i[1].clone(), y, xx])
                    .cast(DataType::f64())
            };
            let v = if mode.nearest {
                at(index(round(&mode, sy), &h), index(round(&mode, sx), &w))
            } else {
                let (fy, fx) = (floor(sy.clone()), floor(sx.clone()));
                let (ty, tx) = (sy - fy.clone(), sx - fx.clone());
                let (y0, y1) = (index(fy.clone(), &h), index(fy + f64c(1.0), &h));
                let (x0, x1) = (index(fx.clone(), &w), index(fx + f64c(1.0), &w));
                let one = f64c(1.0);
                let top = at(y0.clone(), x0.clone()) * (one.clone() - tx.clone())
                    + at(y0, x1.clone()) * tx.clone();
                let bottom = at(y1.clone(), x0) * (one.clone() - tx.clone()) + at(y1, x1) * tx;
                top * (one - ty.clone()) + bottom * ty
            };
            convert(v, dtype)
        }))
    })
}

/// The image legalizations.
pub const LEGALIZE: &[(&str, Legalize)] = &[("relax.image.resize2d", resize2d)];
