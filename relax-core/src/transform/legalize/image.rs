//! `image.resize2d`: one stage `resize` over the output, each pixel the
//! weighted sum of the taps around the source coordinate of its mode
//! (`relax_runtime::kernels::image`: one tap per axis for nearest, two
//! for linear, four for cubic), computed in `float64` as the reference
//! kernel computes it; tap indices are clamped into the image, so no read
//! is out of bounds, and `tf_crop_and_resize` selects
//! `extrapolation_value` where the source coordinate is outside.

use super::{convert, Legalize, LegalizeCtx};
use crate::ir::{DataType, Expr, PrimExpr};
use crate::op::image::resize_mode;
use crate::tir::te::{self, compute};
use relax_runtime::kernels::image::{CoordinateMode, Method, ResizeMode, Rounding};
use relax_runtime::Error;

fn f64c(v: f64) -> PrimExpr {
    PrimExpr::float(DataType::f64(), v)
}

/// The source coordinate (float64) of output index `o` along `axis` (0
/// for height, 1 for width) of `input` extent resized to `output`.
fn source(
    mode: &ResizeMode,
    o: &PrimExpr,
    input: &PrimExpr,
    output: &PrimExpr,
    axis: usize,
) -> PrimExpr {
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
        CoordinateMode::TfCropAndResize => {
            let (a, b) = (mode.roi[axis], mode.roi[axis + 2]);
            let last = i - f64c(1.0);
            PrimExpr::select(
                out.clone().gt(f64c(1.0)),
                f64c(a) * last.clone() + te::div(o * f64c(b - a) * last.clone(), out - f64c(1.0)),
                f64c(0.5 * (a + b)) * last,
            )
        }
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

/// `k[0]·d³ + k[1]·d² + k[2]·d + k[3]` by Horner's rule.
fn cubic(d: PrimExpr, k: [f64; 4]) -> PrimExpr {
    ((f64c(k[0]) * d.clone() + f64c(k[1])) * d.clone() + f64c(k[2])) * d + f64c(k[3])
}

/// The taps (index, weight) an output position reads along an axis of
/// `extent`, for source coordinate `s` (the kernel's `ResizeMode::taps`).
fn taps(mode: &ResizeMode, s: PrimExpr, extent: &PrimExpr) -> Vec<(PrimExpr, PrimExpr)> {
    let one = || f64c(1.0);
    match mode.method {
        Method::NearestNeighbor => vec![(index(round(mode, s), extent), one())],
        Method::Linear => {
            let f = floor(s.clone());
            let t = s - f.clone();
            vec![
                (index(f.clone(), extent), one() - t.clone()),
                (index(f + one(), extent), t),
            ]
        }
        Method::Cubic => {
            let a = mode.cubic_alpha;
            let near = [a + 2.0, -(a + 3.0), 0.0, 1.0];
            let far = [a, -5.0 * a, 8.0 * a, -4.0 * a];
            let f = floor(s.clone());
            let t = s - f.clone();
            let mut w = vec![
                cubic(one() + t.clone(), far),
                cubic(t.clone(), near),
                cubic(one() - t.clone(), near),
                cubic(f64c(2.0) - t, far),
            ];
            let at: Vec<PrimExpr> = (0..4).map(|k| f.clone() + f64c(k as f64 - 1.0)).collect();
            if mode.cubic_exclude {
                let last = (extent.clone() - 1).cast(DataType::f64());
                for (wk, p) in w.iter_mut().zip(&at) {
                    let outside = p.clone().lt(f64c(0.0)).or(p.clone().gt(last.clone()));
                    *wk = PrimExpr::select(outside, f64c(0.0), wk.clone());
                }
                let sum = w[1..].iter().fold(w[0].clone(), |acc, v| acc + v.clone());
                let sum = PrimExpr::select(sum.clone().eq_(f64c(0.0)), one(), sum);
                w = w.into_iter().map(|wk| te::div(wk, sum.clone())).collect();
            }
            at.into_iter().map(|p| index(p, extent)).zip(w).collect()
        }
    }
}

/// Whether source coordinate `s` along an axis of `extent` reads the
/// extrapolation value (`tf_crop_and_resize` only).
fn outside(s: PrimExpr, extent: &PrimExpr) -> PrimExpr {
    let last = (extent.clone() - 1).cast(DataType::f64());
    s.clone().lt(f64c(0.0)).or(s.gt(last))
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
            let sy = source(&mode, &i[2], &h, &oh, 0);
            let sx = source(&mode, &i[3], &w, &ow, 1);
            let at = |y: PrimExpr, xx: PrimExpr| {
                x.at(&[i[0].clone(), i[1].clone(), y, xx])
                    .cast(DataType::f64())
            };
            let (ty, tx) = (taps(&mode, sy.clone(), &h), taps(&mode, sx.clone(), &w));
            let mut v: Option<PrimExpr> = None;
            for (y, wy) in &ty {
                let mut row: Option<PrimExpr> = None;
                for (xx, wx) in &tx {
                    let term = if mode.method == Method::NearestNeighbor {
                        at(y.clone(), xx.clone())
                    } else {
                        at(y.clone(), xx.clone()) * wx.clone()
                    };
                    row = Some(match row {
                        Some(r) => r + term,
                        None => term,
                    });
                }
                let row = row.expect("at least one tap");
                let term = if mode.method == Method::NearestNeighbor {
                    row
                } else {
                    row * wy.clone()
                };
                v = Some(match v {
                    Some(acc) => acc + term,
                    None => term,
                });
            }
            let mut v = v.expect("at least one tap");
            if mode.coordinates == CoordinateMode::TfCropAndResize {
                v = PrimExpr::select(
                    outside(sy, &h).or(outside(sx, &w)),
                    f64c(mode.extrapolation_value),
                    v,
                );
            }
            convert(v, dtype)
        }))
    })
}

/// The image legalizations.
pub const LEGALIZE: &[(&str, Legalize)] = &[("relax.image.resize2d", resize2d)];
