//! `image.resize2d`: one stage `resize` over the output, each pixel the
//! weighted sum of the taps around the source coordinate of its mode
//! (`relax_runtime::kernels::image`: one tap per axis for nearest, two
//! for linear, four for cubic), computed in `float64` as the reference
//! kernel computes it; tap indices are clamped into the image, so no read
//! is out of bounds, and `tf_crop_and_resize` selects
//! `extrapolation_value` where the source coordinate is outside. The
//! `roi` and `scales` operands, when given, are read per pixel (cast to
//! `float64`) where the attributes would be constants. With `antialias`
//! the taps per axis are a reduce axis of `2·B` (kernel docs, item 3; `B`
//! from the input and output dims): stages `resize_wsum_h` and
//! `resize_wsum_w` sum each output row's and column's weights,
//! `resize_sum` sums the weighted taps over both reduce axes, and
//! `resize` divides by the two weight sums.
//!
//! `image.grid_sample`: one stage `grid_sample` over the output, each
//! point the sum over every combination of one tap per spatial axis
//! around the grid's coordinate (`relax_runtime::kernels::grid`), in
//! `float64`; each read is guarded by `if_then_else` on the tap being
//! inside the image (`zeros`) or the axis being non-empty, at an index
//! clamped into the image. `image.affine_grid`: one stage `affine_grid`,
//! the matrix applied to the base coordinates of each output position.

use super::{convert, Legalize, LegalizeCtx};
use crate::ir::{DataType, Expr, PrimExpr};
use crate::op::image::{grid_sample_mode, resize_mode};
use crate::tir::te::{self, compute};
use relax_runtime::kernels::grid::{GridMethod, GridPadding, GridSampleMode, GRID_CUBIC_ALPHA};
use relax_runtime::kernels::image::{CoordinateMode, Method, ResizeMode, Rounding};
use relax_runtime::Error;

fn f64c(v: f64) -> PrimExpr {
    PrimExpr::float(DataType::f64(), v)
}

/// The per-axis parameters that may be operands: the axis's `roi`
/// start and end and its scale (None: map by the size ratio).
#[derive(Clone)]
struct AxisParams {
    roi: (PrimExpr, PrimExpr),
    scale: Option<PrimExpr>,
}

/// The source coordinate (float64) of output index `o` along an axis of
/// `input` extent resized to `output` (the kernel's `ResizeMode::source`).
fn source(
    mode: &ResizeMode,
    o: &PrimExpr,
    input: &PrimExpr,
    output: &PrimExpr,
    p: &AxisParams,
) -> PrimExpr {
    let (o, i, out) = (
        o.clone().cast(DataType::f64()),
        input.clone().cast(DataType::f64()),
        output.clone().cast(DataType::f64()),
    );
    let length = match &p.scale {
        Some(s) => i.clone() * s.clone(),
        None => out.clone(),
    };
    let r = |v: PrimExpr| match &p.scale {
        Some(s) => te::div(v, s.clone()),
        None => v * te::div(i.clone(), out.clone()),
    };
    let half = || r(o.clone() + f64c(0.5)) - f64c(0.5);
    match mode.coordinates {
        CoordinateMode::HalfPixel => half(),
        CoordinateMode::HalfPixelSymmetric => match &p.scale {
            Some(_) => {
                te::div(i.clone(), f64c(2.0)) * (f64c(1.0) - te::div(out.clone(), length)) + half()
            }
            None => half(),
        },
        CoordinateMode::PytorchHalfPixel => {
            PrimExpr::select(length.gt(f64c(1.0)), half(), f64c(0.0))
        }
        CoordinateMode::AlignCorners => PrimExpr::select(
            length.clone().gt(f64c(1.0)),
            te::div(o.clone() * (i - f64c(1.0)), length - f64c(1.0)),
            f64c(0.0),
        ),
        CoordinateMode::Asymmetric => r(o),
        CoordinateMode::TfHalfPixelForNn => r(o + f64c(0.5)),
        CoordinateMode::TfCropAndResize => {
            let (a, b) = p.roi.clone();
            let last = i - f64c(1.0);
            PrimExpr::select(
                length.clone().gt(f64c(1.0)),
                a.clone() * last.clone()
                    + te::div(
                        o * (b.clone() - a.clone()) * last.clone(),
                        length - f64c(1.0),
                    ),
                f64c(0.5) * (a + b) * last,
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

/// The antialiased taps' `B` (kernel docs, item 3) of `input` resized to
/// `output`: `max(ceil(input / max(output, 1)), 1)`, doubled for cubic.
fn antialias_reach(mode: &ResizeMode, input: &PrimExpr, output: &PrimExpr) -> PrimExpr {
    let out = output.clone().max(PrimExpr::int(1));
    let b = (input.clone() + out.clone() - 1)
        .floordiv(out)
        .max(PrimExpr::int(1));
    if mode.method == Method::Cubic {
        b * 2
    } else {
        b
    }
}

/// The weight (float64) of a pixel at distance `d` under the method's
/// unwidened filter (the kernel's `ResizeMode::filter`).
fn filter(mode: &ResizeMode, d: PrimExpr) -> PrimExpr {
    let d = te::unary("fabs", d);
    match mode.method {
        Method::Cubic => {
            let a = mode.cubic_alpha;
            let near = cubic(d.clone(), [a + 2.0, -(a + 3.0), 0.0, 1.0]);
            let far = cubic(d.clone(), [a, -5.0 * a, 8.0 * a, -4.0 * a]);
            PrimExpr::select(
                d.clone().le(f64c(1.0)),
                near,
                PrimExpr::select(d.lt(f64c(2.0)), far, f64c(0.0)),
            )
        }
        _ => (f64c(1.0) - d).max(f64c(0.0)),
    }
}

/// Antialiased tap `k` (in `0..2·B`) of source coordinate `s` along an axis
/// of `extent`: its clamped index and its weight before normalization
/// (after `cubic_exclude`); `scale` is the filter's `min(scale, 1)`.
fn antialias_tap(
    mode: &ResizeMode,
    s: PrimExpr,
    k: PrimExpr,
    reach: &PrimExpr,
    scale: PrimExpr,
    extent: &PrimExpr,
) -> (PrimExpr, PrimExpr) {
    let f = ceil(s.clone()) - f64c(1.0);
    let t = s - f.clone();
    let i = (k + 1 - reach.clone()).cast(DataType::f64());
    let p = f + i.clone();
    let mut w = filter(mode, (i - t) * scale);
    if mode.cubic_exclude {
        w = PrimExpr::select(outside(p.clone(), extent), f64c(0.0), w);
    }
    (index(p, extent), w)
}

fn resize2d(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let (shape, dtype) = cx.out_tensor(0)?;
    let mode = cx.check(resize_mode(cx.call))?;
    let nargs = cx.call.args.len();
    let which: Vec<usize> = [0, 2, 3].into_iter().filter(|&i| i < nargs).collect();
    cx.te1(&which, |xs| {
        let x = &xs[0];
        // The roi and scales of each axis: operand reads or constants
        // (called inside each stage's closure).
        let params = |axis: usize| AxisParams {
            roi: match xs.get(1) {
                Some(r) => (
                    r.at(&[PrimExpr::int(axis as i64)]).cast(DataType::f64()),
                    r.at(&[PrimExpr::int(axis as i64 + 2)])
                        .cast(DataType::f64()),
                ),
                None => (f64c(mode.roi[axis]), f64c(mode.roi[axis + 2])),
            },
            scale: match xs.get(2) {
                Some(sc) => Some(sc.at(&[PrimExpr::int(axis as i64)]).cast(DataType::f64())),
                None => mode.scales.map(|s| f64c(s[axis])),
            },
        };
        let dims = x.shape().to_vec();
        let (h, w) = (dims[2].clone(), dims[3].clone());
        let (oh, ow) = (shape[2].clone(), shape[3].clone());
        if mode.antialias {
            return Ok(antialiased(&mode, x, &shape, dtype, &params));
        }
        Ok(compute("resize", shape.clone(), |i| {
            // Read inside the stage, so that it records the operands.
            let (py, px) = (params(0), params(1));
            let sy = source(&mode, &i[2], &h, &oh, &py);
            let sx = source(&mode, &i[3], &w, &ow, &px);
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

/// The antialiased resize of `x` to `shape` (module docs).
fn antialiased(
    mode: &ResizeMode,
    x: &te::Tensor,
    shape: &[PrimExpr],
    dtype: DataType,
    params: &dyn Fn(usize) -> AxisParams,
) -> te::Tensor {
    let dims = x.shape().to_vec();
    // Per axis: input extent, output extent, B, the reduce axis.
    let axes: Vec<(PrimExpr, PrimExpr, PrimExpr, te::ReduceAxis)> = (0..2)
        .map(|a| {
            let (input, output) = (dims[a + 2].clone(), shape[a + 2].clone());
            let reach = antialias_reach(mode, &input, &output);
            let k = te::reduce_axis(reach.clone() * 2, &format!("k{}", ["h", "w"][a]));
            (input, output, reach, k)
        })
        .collect();
    // The filter scale `min(scale, 1)` of an axis.
    let filter_scale = |a: usize| {
        let (input, output) = (&axes[a].0, &axes[a].1);
        let s = match &params(a).scale {
            Some(s) => s.clone(),
            None => te::div(
                output.clone().cast(DataType::f64()),
                input.clone().cast(DataType::f64()),
            ),
        };
        s.min(f64c(1.0))
    };
    // Tap `k` of output index `o` along axis `a`.
    let tap = |a: usize, o: &PrimExpr, k: PrimExpr| {
        let (input, output, reach, _) = &axes[a];
        let s = source(mode, o, input, output, &params(a));
        antialias_tap(mode, s, k, reach, filter_scale(a), input)
    };
    let wsum: Vec<te::Tensor> = (0..2)
        .map(|a| {
            let k = axes[a].3.clone();
            let name = format!("resize_wsum_{}", ["h", "w"][a]);
            compute(&name, vec![shape[a + 2].clone()], |i| {
                te::sum(tap(a, &i[0], k.to_expr()).1, std::slice::from_ref(&k))
            })
        })
        .collect();
    let (ky, kx) = (axes[0].3.clone(), axes[1].3.clone());
    let total = compute("resize_sum", shape.to_vec(), |i| {
        let (y, wy) = tap(0, &i[2], ky.to_expr());
        let (xx, wx) = tap(1, &i[3], kx.to_expr());
        let v = x
            .at(&[i[0].clone(), i[1].clone(), y, xx])
            .cast(DataType::f64());
        te::sum(v * wy * wx, &[ky.clone(), kx.clone()])
    });
    compute("resize", shape.to_vec(), |i| {
        let nonzero = |v: PrimExpr| PrimExpr::select(v.clone().eq_(f64c(0.0)), f64c(1.0), v);
        let norm = nonzero(wsum[0].at(&[i[2].clone()])) * nonzero(wsum[1].at(&[i[3].clone()]));
        let mut v = te::div(total.at(i), norm);
        if mode.coordinates == CoordinateMode::TfCropAndResize {
            let sy = source(mode, &i[2], &axes[0].0, &axes[0].1, &params(0));
            let sx = source(mode, &i[3], &axes[1].0, &axes[1].1, &params(1));
            v = PrimExpr::select(
                outside(sy, &axes[0].0).or(outside(sx, &axes[1].0)),
                f64c(mode.extrapolation_value),
                v,
            );
        }
        convert(v, dtype)
    })
}

/// `x` reflected at `lo` and `hi` until inside (`lo` when they meet), as
/// the kernel's `reflect`.
fn reflect(x: PrimExpr, lo: PrimExpr, hi: PrimExpr) -> PrimExpr {
    let span = hi.clone() - lo.clone();
    let even = |n: PrimExpr| {
        let half = floor(te::div(n.clone(), f64c(2.0)));
        (n - half * f64c(2.0)).eq_(f64c(0.0))
    };
    let fold = |d: PrimExpr| {
        let n = floor(te::div(d.clone(), span.clone()));
        let r = d - n.clone() * span.clone();
        (even(n), r)
    };
    let (below_even, below_r) = fold(lo.clone() - x.clone());
    let below = PrimExpr::select(
        below_even,
        lo.clone() + below_r.clone(),
        hi.clone() - below_r,
    );
    let (above_even, above_r) = fold(x.clone() - hi.clone());
    let above = PrimExpr::select(
        above_even,
        hi.clone() - above_r.clone(),
        lo.clone() + above_r,
    );
    let inside = PrimExpr::select(
        x.clone().lt(lo.clone()),
        below,
        PrimExpr::select(x.clone().gt(hi), above, x),
    );
    PrimExpr::select(span.le(f64c(0.0)), lo, inside)
}

/// The bounds of pixel coordinates along an axis of (float) length `len`.
fn grid_bounds(mode: &GridSampleMode, len: &PrimExpr) -> (PrimExpr, PrimExpr) {
    if mode.align_corners {
        (f64c(0.0), len.clone() - f64c(1.0))
    } else {
        (f64c(-0.5), len.clone() - f64c(0.5))
    }
}

/// The pixel coordinate of normalized coordinate `g` along an axis of
/// (float) length `len` (the kernel's `GridSampleMode::source`).
fn grid_source(mode: &GridSampleMode, g: PrimExpr, len: &PrimExpr) -> PrimExpr {
    let one = f64c(1.0);
    let mut x = if mode.align_corners {
        te::div(g + one.clone(), f64c(2.0)) * (len.clone() - one)
    } else {
        te::div((g + one.clone()) * len.clone() - one, f64c(2.0))
    };
    if mode.method == GridMethod::Nearest {
        x = te::unary("round", x);
    }
    let (lo, hi) = grid_bounds(mode, len);
    let outside = x.clone().lt(lo.clone()).or(x.clone().gt(hi.clone()));
    match mode.padding {
        GridPadding::Zeros => x,
        GridPadding::Border => PrimExpr::select(
            outside,
            x.clone().max(f64c(0.0)).min(len.clone() - f64c(1.0)),
            x,
        ),
        GridPadding::Reflection => PrimExpr::select(outside, reflect(x.clone(), lo, hi), x),
    }
}

/// A tap at integer position `i` along an axis of `extent`: the clamped
/// index it reads and the condition for reading it (else 0).
fn grid_pixel(mode: &GridSampleMode, i: PrimExpr, extent: &PrimExpr) -> (PrimExpr, PrimExpr) {
    let len = extent.clone().cast(DataType::f64());
    let last = len.clone() - f64c(1.0);
    let nonempty = extent.clone().gt(PrimExpr::int(0));
    match mode.padding {
        GridPadding::Zeros => {
            let inside = i.clone().ge(f64c(0.0)).and(i.clone().le(last));
            (index(i, extent), inside)
        }
        GridPadding::Border => (index(i, extent), nonempty),
        GridPadding::Reflection => {
            let (lo, hi) = grid_bounds(mode, &len);
            (
                index(te::unary("trunc", reflect(i, lo, hi)), extent),
                nonempty,
            )
        }
    }
}

/// The taps (integer position, weight) around pixel coordinate `x`.
fn grid_taps(mode: &GridSampleMode, x: PrimExpr) -> Vec<(PrimExpr, PrimExpr)> {
    let one = || f64c(1.0);
    let f = floor(x.clone());
    let t = x.clone() - f.clone();
    match mode.method {
        GridMethod::Nearest => vec![(x, one())],
        GridMethod::Bilinear => vec![(f.clone(), one() - t.clone()), (f + one(), t)],
        GridMethod::Bicubic => {
            let a = GRID_CUBIC_ALPHA;
            let near = [a + 2.0, -(a + 3.0), 0.0, 1.0];
            let far = [a, -5.0 * a, 8.0 * a, -4.0 * a];
            let w = [
                cubic(one() + t.clone(), far),
                cubic(t.clone(), near),
                cubic(one() - t.clone(), near),
                cubic(f64c(2.0) - t, far),
            ];
            w.into_iter()
                .enumerate()
                .map(|(k, wk)| (f.clone() + f64c(k as f64 - 1.0), wk))
                .collect()
        }
    }
}

fn grid_sample(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let (shape, dtype) = cx.out_tensor(0)?;
    let mode = cx.check(grid_sample_mode(cx.call))?;
    let k = mode.spatial;
    cx.te1(&[0, 1], |xs| {
        let (x, grid) = (&xs[0], &xs[1]);
        let sizes: Vec<PrimExpr> = x.shape()[2..].to_vec();
        Ok(compute("grid_sample", shape.clone(), |i| {
            // Per spatial axis, its taps as (index, read condition, weight).
            let axes: Vec<Vec<(PrimExpr, PrimExpr, PrimExpr)>> = (0..k)
                .map(|a| {
                    let mut at = vec![i[0].clone(), PrimExpr::int((k - 1 - a) as i64)];
                    at.extend(i[2..].iter().cloned());
                    let g = grid.at(&at).cast(DataType::f64());
                    let len = sizes[a].clone().cast(DataType::f64());
                    let s = grid_source(&mode, g, &len);
                    grid_taps(&mode, s)
                        .into_iter()
                        .map(|(p, w)| {
                            let (idx, ok) = grid_pixel(&mode, p, &sizes[a]);
                            (idx, ok, w)
                        })
                        .collect()
                })
                .collect();
            // Every combination of one tap per axis.
            let mut combos: Vec<(Vec<PrimExpr>, PrimExpr, PrimExpr)> =
                vec![(vec![], PrimExpr::bool(true), f64c(1.0))];
            for taps in &axes {
                combos = combos
                    .iter()
                    .flat_map(|(idx, ok, w)| {
                        taps.iter().map(move |(ti, tok, tw)| {
                            let mut idx = idx.clone();
                            idx.push(ti.clone());
                            (idx, ok.clone().and(tok.clone()), w.clone() * tw.clone())
                        })
                    })
                    .collect();
            }
            let terms = combos.into_iter().map(|(idx, ok, w)| {
                let mut at = vec![i[0].clone(), i[1].clone()];
                at.extend(idx);
                let read = PrimExpr::call(
                    DataType::f64(),
                    "if_then_else",
                    vec![ok, x.at(&at).cast(DataType::f64()), f64c(0.0)],
                );
                read * w
            });
            let v = terms.fold(f64c(0.0), |acc, t| acc + t);
            convert(v, dtype)
        }))
    })
}

fn affine_grid(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let (shape, dtype) = cx.out_tensor(0)?;
    let align = crate::op::infer::attr_bool(cx.call, "align_corners", false);
    let (h, w) = (shape[2].clone(), shape[3].clone());
    cx.te1(&[0], |xs| {
        let theta = &xs[0];
        let base = |j: &PrimExpr, len: &PrimExpr| {
            let (j, len) = (
                j.clone().cast(DataType::f64()),
                len.clone().cast(DataType::f64()),
            );
            if align {
                PrimExpr::select(
                    len.clone().gt(f64c(1.0)),
                    f64c(-1.0) + te::div(f64c(2.0) * j, len - f64c(1.0)),
                    f64c(-1.0),
                )
            } else {
                f64c(-1.0) + te::div(f64c(2.0) * j + f64c(1.0), len)
            }
        };
        Ok(compute("affine_grid", shape.clone(), |i| {
            let m = |c: i64| {
                theta
                    .at(&[i[0].clone(), i[1].clone(), PrimExpr::int(c)])
                    .cast(DataType::f64())
            };
            let v = m(0) * base(&i[3], &w) + m(1) * base(&i[2], &h) + m(2);
            convert(v, dtype)
        }))
    })
}

/// The image legalizations.
pub const LEGALIZE: &[(&str, Legalize)] = &[
    ("relax.image.resize2d", resize2d),
    ("relax.image.grid_sample", grid_sample),
    ("relax.image.affine_grid", affine_grid),
];
