//! Neural-network ops.
//!
//! 1. `relu`, `gelu` (erf form: `x · ½ · (1 + erf(x/√2))`) and `silu`
//!    (`x · sigmoid(x)`) are elementwise.
//! 2. `softmax`/`log_softmax`: a max stage and a sum-of-exponentials stage
//!    over the axis, then `exp(x - max) / sum` or `x - max - log(sum)`;
//!    for `float16`/`bfloat16` the sum and the last stage are `float32`,
//!    rounded once to the half type at the output.
//! 3. `layer_norm`: a sum stage (the mean), a sum of squared deviations (the
//!    biased variance, two passes as the reference kernel), then
//!    `(x - mean) / sqrt(var + ε) · γ + β`.
//! 4. `batch_norm`: in training, a sum stage and a sum of squared
//!    deviations over every axis but `axis` (the batch statistics, as the
//!    reference kernel computes them); in inference, the moving statistics.
//!    Then `(x - mean) / sqrt(var + ε) · γ + β`, and the moving statistics
//!    (updated in training, `(1 - momentum) · moving + momentum · batch`) as
//!    two more outputs of the same PrimFunc.
//! 5. `conv2d`/`max_pool2d`/`avg_pool2d` (NCHW, OIHW): one reduction over the window
//!    (and the input channels of the group); a tap in the padding reads a
//!    clamped, in-bounds element and a `Select` replaces it by 0 (conv) or
//!    the lowest value (pool). A grouped NCHW/OIHW `conv2d` computes over
//!    `(n, group, channel in group, h, w)` and a second stage lays the
//!    groups out as channels, so each group is an implicit GEMM for
//!    DefaultSchedule; a depthwise one (one filter per group) is the plain
//!    NCHW reduction, a window reduction for DefaultSchedule.

use super::statistical::{input_ndim, reduce_stage};
use super::unary::{elementwise_as, sigmoid};
use super::{clamp_index, in_range, Legalize, LegalizeCtx};
use crate::ir::{Expr, PrimExpr};
use crate::op::infer::{
    attr_bool, attr_dtype, attr_int, attr_ints, normalize_axes, normalize_axis,
};
use crate::op::nn::{to_canonical, to_layout};
use crate::tir::te::{self, compute, reduce_axis, Combiner, Reduce};
use relax_runtime::{DataType, Error};

/// TOPI's `relu` (the PrimFunc `relu`, one stage `compute` over `i0, …`),
/// `T.max(x, 0)`, which gives 0 for NaN; with `relu_propagates_nan`, NaN
/// propagates (`te::maximum`), as in numpy and PyTorch.
fn relu(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let tvm = !cx.relu_propagates_nan;
    elementwise_as(cx, "relu", "compute", "i", |x| {
        let z = te::zero(x.dtype());
        if tvm {
            x.max(z)
        } else {
            te::maximum(x, z)
        }
    })
}

/// A stage `T_<op>` over `ax0, …` in the PrimFunc `<op>`.
fn activation(cx: &mut LegalizeCtx<'_>, f: impl Fn(PrimExpr) -> PrimExpr) -> Result<Expr, Error> {
    let name = cx.name();
    elementwise_as(cx, name, &format!("T_{name}"), "ax", f)
}

/// `x · ½ · (1 + erf(x/√2))` in the input's dtype (`float32` for the half
/// types), as TVM's legalization, onnxruntime's kernel and PyTorch compute
/// it: the back end's `erf` of `float32` is vector code, where `float64`'s
/// is a libm call per lane (a sixth of a quantized BERT's time). For
/// negative `x` the sum `1 + erf` cancels, so far in the tail the result
/// is exact to about `|x| · 2⁻²⁴` absolutely, not relatively; the reference
/// kernel's `float64` keeps the tail's relative accuracy.
fn gelu(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    activation(cx, |x| {
        let d = x.dtype();
        let w = if d.bits() < 32 { DataType::f32() } else { d };
        let xw = x.cast(w);
        let scaled = xw.clone() * te::constant(w, std::f64::consts::FRAC_1_SQRT_2);
        let erf = te::unary("erf", scaled);
        (xw * te::constant(w, 0.5) * (te::one(w) + erf)).cast(d)
    })
}

fn silu(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    activation(cx, |x| x.clone() * sigmoid(x))
}

fn softmax_like(cx: &mut LegalizeCtx<'_>, log: bool) -> Result<Expr, Error> {
    let ndim = input_ndim(cx)?;
    let axis = attr_int(cx.call, "axis").unwrap_or(-1);
    let axis = cx.check(normalize_axis(cx.call, axis, ndim as i32))?;
    let axes = [axis];
    let name = format!("T_{}", cx.name());
    cx.te1(&[0], |xs| {
        let x = &xs[0];
        // For half types the sum stage is float32: a half one would round
        // the (float32-accumulated) sum to half before the division while
        // the exponentials it divides stay float32, one ulp of error too
        // many; so the op rounds once, at its output, as the reference
        // kernel does.
        let d = x.dtype();
        let acc = if d.is_half() { DataType::f32() } else { d };
        let m = reduce_stage(
            "T_softmax_maxelem",
            x,
            &axes,
            false,
            Combiner::Max,
            |v, _| v,
        );
        let s = reduce_stage(
            "T_softmax_expsum",
            x,
            &axes,
            false,
            Combiner::Sum,
            |v, idx| {
                let mut mi = idx.to_vec();
                mi.remove(axis);
                te::unary("exp", v - m.at(&mi)).cast(acc)
            },
        );
        Ok(compute(&name, x.shape().to_vec(), |i| {
            let mut r = i.to_vec();
            r.remove(axis);
            let shifted = (x.at(i) - m.at(&r)).cast(acc);
            let y = if log {
                shifted - te::unary("log", s.at(&r))
            } else {
                te::div(te::unary("exp", shifted), s.at(&r))
            };
            y.cast(d)
        }))
    })
}

fn softmax(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    softmax_like(cx, false)
}

fn log_softmax(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    softmax_like(cx, true)
}

fn layer_norm(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let ndim = input_ndim(cx)?;
    let axes = attr_ints(cx.call, "axes").unwrap_or_default();
    let axes = cx.check(normalize_axes(cx.call, &axes, ndim as i32))?;
    let eps = float_attr(cx, "epsilon", 1e-5);
    let center = attr_bool(cx.call, "center", true);
    let scale = attr_bool(cx.call, "scale", true);
    cx.te1(&[0, 1, 2], |xs| {
        let (x, gamma, beta) = (&xs[0], &xs[1], &xs[2]);
        let d = x.dtype();
        let count = axes
            .iter()
            .fold(PrimExpr::int(1), |acc, &a| acc * x.shape()[a].clone())
            .cast(d);
        let reduced = |idx: &[PrimExpr]| -> Vec<PrimExpr> {
            (0..ndim)
                .filter(|k| !axes.contains(k))
                .map(|k| idx[k].clone())
                .collect()
        };
        let s1 = reduce_stage("T_layer_norm_sum", x, &axes, false, Combiner::Sum, |v, _| v);
        let s2 = reduce_stage(
            "T_layer_norm_sqsum",
            x,
            &axes,
            false,
            Combiner::Sum,
            |v, idx| {
                let dev = v - te::div(s1.at(&reduced(idx)), count.clone());
                dev.clone() * dev
            },
        );
        Ok(compute("T_layer_norm", x.shape().to_vec(), |i| {
            let r = reduced(i);
            let mean = te::div(s1.at(&r), count.clone());
            let var = te::div(s2.at(&r), count.clone());
            let denom = te::unary("sqrt", var + te::constant(d, eps));
            let mut y = te::div(x.at(i) - mean, denom);
            let p: Vec<PrimExpr> = axes.iter().map(|&a| i[a].clone()).collect();
            if scale {
                y = y * gamma.at(&p);
            }
            if center {
                y = y + beta.at(&p);
            }
            y
        }))
    })
}

fn float_attr(cx: &LegalizeCtx<'_>, name: &str, default: f64) -> f64 {
    cx.call
        .attrs
        .get(name)
        .and_then(crate::ir::AttrValue::as_float)
        .unwrap_or(default)
}

fn batch_norm(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let ndim = input_ndim(cx)?;
    let axis = attr_int(cx.call, "axis").unwrap_or(1);
    let axis = cx.check(normalize_axis(cx.call, axis, ndim as i32))?;
    let eps = float_attr(cx, "epsilon", 1e-5);
    let momentum = float_attr(cx, "momentum", 0.1);
    let center = attr_bool(cx.call, "center", true);
    let scale = attr_bool(cx.call, "scale", true);
    let training = attr_bool(cx.call, "training", true);
    cx.te1_many(&[0, 1, 2, 3, 4], |xs| {
        let (x, gamma, beta, mm, mv) = (&xs[0], &xs[1], &xs[2], &xs[3], &xs[4]);
        let d = x.dtype();
        let others: Vec<usize> = (0..ndim).filter(|&a| a != axis).collect();
        // The batch statistics, as channel -> expression.
        let batch = training.then(|| {
            let count = others
                .iter()
                .fold(PrimExpr::int(1), |acc, &a| acc * x.shape()[a].clone())
                .cast(d);
            let sum = reduce_stage(
                "T_batch_norm_sum",
                x,
                &others,
                false,
                Combiner::Sum,
                |v, _| v,
            );
            let sq = reduce_stage(
                "T_batch_norm_sqsum",
                x,
                &others,
                false,
                Combiner::Sum,
                |v, idx| {
                    let dev = v - te::div(sum.at(&[idx[axis].clone()]), count.clone());
                    dev.clone() * dev
                },
            );
            (sum, sq, count)
        });
        let mean = |c: &PrimExpr| match &batch {
            Some((sum, _, count)) => te::div(sum.at(std::slice::from_ref(c)), count.clone()),
            None => mm.at(std::slice::from_ref(c)),
        };
        let var = |c: &PrimExpr| match &batch {
            Some((_, sq, count)) => te::div(sq.at(std::slice::from_ref(c)), count.clone()),
            None => mv.at(std::slice::from_ref(c)),
        };
        let out = compute("T_batch_norm", x.shape().to_vec(), |i| {
            let c = &i[axis];
            let denom = te::unary("sqrt", var(c) + te::constant(d, eps));
            let mut y = te::div(x.at(i) - mean(c), denom);
            if scale {
                y = y * gamma.at(std::slice::from_ref(c));
            }
            if center {
                y = y + beta.at(std::slice::from_ref(c));
            }
            y
        });
        let moving = |name: &str, old: &te::Tensor, stat: &dyn Fn(&PrimExpr) -> PrimExpr| {
            compute(name, old.shape().to_vec(), |i| {
                if training {
                    old.at(i) * te::constant(d, 1.0 - momentum)
                        + stat(&i[0]) * te::constant(d, momentum)
                } else {
                    old.at(i)
                }
            })
        };
        let new_mean = moving("T_batch_norm_moving_mean", mm, &mean);
        let new_var = moving("T_batch_norm_moving_var", mv, &var);
        Ok(vec![out, new_mean, new_var])
    })
}

/// The window attributes as inference reads them (inference has already
/// rejected malformed ones, so the error paths are for calls built by hand).
fn padding4(cx: &LegalizeCtx<'_>) -> Result<[PrimExpr; 4], Error> {
    Ok(crate::op::nn::padding4(cx.call)?)
}

fn pair(cx: &LegalizeCtx<'_>, name: &str) -> Result<[PrimExpr; 2], Error> {
    Ok(crate::op::nn::pair(cx.call, name)?)
}

/// The input position of output position `o`, window tap `k`.
fn tap(
    o: &PrimExpr,
    k: &PrimExpr,
    stride: &PrimExpr,
    dilation: &PrimExpr,
    pad: &PrimExpr,
) -> PrimExpr {
    o.clone() * stride.clone() + k.clone() * dilation.clone() - pad.clone()
}

fn conv2d(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let (shape, dtype) = cx.out_tensor(0)?;
    let strides = pair(cx, "strides")?;
    let dilation = pair(cx, "dilation")?;
    let pad = padding4(cx)?;
    let groups = attr_int(cx.call, "groups").unwrap_or(1);
    let out_dtype = attr_dtype(cx.call, "out_dtype");
    // Any ordering of NCHW / OIHW: `*_axes[k]` is where canonical axis `k` is.
    let data_axes = cx.check(crate::op::nn::layout_axes(cx.call, "data_layout", "NCHW"))?;
    let kernel_axes = cx.check(crate::op::nn::layout_axes(cx.call, "kernel_layout", "OIHW"))?;
    let out_axes = cx.check(crate::op::nn::layout_axes(cx.call, "out_layout", "NCHW"))?;
    cx.te1(&[0, 1], |xs| {
        let (data, w) = (&xs[0], &xs[1]);
        let [_, _, h, wd] = to_canonical(data.shape(), data_axes);
        let [o, cg, kh, kw] = to_canonical(w.shape(), kernel_axes);
        let (h, wd) = (&h, &wd);
        let rc = reduce_axis(cg.clone(), "rc");
        let ry = reduce_axis(kh, "ry");
        let rx = reduce_axis(kw, "rx");
        let per_group = o.clone().floordiv(groups);
        let convert = |e: PrimExpr| {
            if out_dtype.is_void() {
                e
            } else {
                e.cast(out_dtype)
            }
        };
        let canonical = data_axes == [0, 1, 2, 3] && out_axes == [0, 1, 2, 3];
        let name = if canonical {
            "T_conv2d_nchw".to_string()
        } else {
            "T_conv2d".to_string()
        };
        // A depthwise convolution (one filter per group: MobileNet's,
        // EfficientNet's) is no matrix product: each output channel reads
        // its own input channels, so it stays one NCHW reduction, which
        // DefaultSchedule runs as a window reduction (case 7) with the bias
        // and activation after it as its epilogue.
        let depthwise = o.as_int() == Some(groups);
        if groups > 1 && !depthwise && canonical && kernel_axes == [0, 1, 2, 3] {
            // The group is an axis of its own, so each group's product is
            // an implicit GEMM (DefaultSchedule's case 6): the data does
            // not depend on the output channel within the group. A second
            // stage lays the groups out as NCHW channels.
            let g = PrimExpr::int(groups);
            let grouped_shape = vec![
                shape[0].clone(),
                g,
                per_group.clone(),
                shape[2].clone(),
                shape[3].clone(),
            ];
            let grouped = compute("T_conv2d_grouped", grouped_shape, |i| {
                let y = tap(&i[3], &ry.to_expr(), &strides[0], &dilation[0], &pad[0]);
                let x = tap(&i[4], &rx.to_expr(), &strides[1], &dilation[1], &pad[1]);
                let c = i[1].clone() * cg.clone() + rc.to_expr();
                let inside = in_range(&y, h).and(in_range(&x, wd));
                let at = [i[0].clone(), c, clamp_index(y, h), clamp_index(x, wd)];
                let v = PrimExpr::select(inside, convert(data.at(&at)), te::zero(dtype));
                let oc = i[1].clone() * per_group.clone() + i[2].clone();
                let k = convert(w.at(&[oc, rc.to_expr(), ry.to_expr(), rx.to_expr()]));
                Reduce {
                    combiner: Combiner::Sum,
                    source: v * k,
                    axes: vec![rc.clone(), ry.clone(), rx.clone()],
                }
            });
            return Ok(compute(&name, shape, |i| {
                grouped.at(&[
                    i[0].clone(),
                    i[1].clone().floordiv(per_group.clone()),
                    i[1].clone().floormod(per_group.clone()),
                    i[2].clone(),
                    i[3].clone(),
                ])
            }));
        }
        Ok(compute(&name, shape, |phys| {
            // The output index in NCHW order.
            let i = to_canonical(phys, out_axes);
            let y = tap(&i[2], &ry.to_expr(), &strides[0], &dilation[0], &pad[0]);
            let x = tap(&i[3], &rx.to_expr(), &strides[1], &dilation[1], &pad[1]);
            let c = if groups == 1 {
                rc.to_expr()
            } else {
                i[1].clone().floordiv(per_group.clone()) * cg.clone() + rc.to_expr()
            };
            let inside = in_range(&y, h).and(in_range(&x, wd));
            let at = [i[0].clone(), c, clamp_index(y, h), clamp_index(x, wd)];
            let v = data.at(&to_layout(at, data_axes));
            let v = PrimExpr::select(inside, convert(v), te::zero(dtype));
            let kat = [i[1].clone(), rc.to_expr(), ry.to_expr(), rx.to_expr()];
            let k = convert(w.at(&to_layout(kat, kernel_axes)));
            Reduce {
                combiner: Combiner::Sum,
                source: v * k,
                axes: vec![rc.clone(), ry.clone(), rx.clone()],
            }
        }))
    })
}

fn max_pool2d(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let (shape, dtype) = cx.out_tensor(0)?;
    let pool = pair(cx, "pool_size")?;
    let strides = pair(cx, "strides")?;
    let dilation = pair(cx, "dilation")?;
    let pad = padding4(cx)?;
    // Any ordering of NCHW: `*_axes[k]` is where canonical axis `k` is.
    let data_axes = cx.check(crate::op::nn::layout_axes(cx.call, "layout", "NCHW"))?;
    let out_axes = cx.check(crate::op::nn::layout_axes(cx.call, "out_layout", "NCHW"))?;
    cx.te1(&[0], |xs| {
        let data = &xs[0];
        let [_, _, h, wd] = to_canonical(data.shape(), data_axes);
        let (h, wd) = (&h, &wd);
        let ry = reduce_axis(pool[0].clone(), "ry");
        let rx = reduce_axis(pool[1].clone(), "rx");
        Ok(compute("T_pool_max", shape, |phys| {
            // The output index in NCHW order.
            let i = to_canonical(phys, out_axes);
            let y = tap(&i[2], &ry.to_expr(), &strides[0], &dilation[0], &pad[0]);
            let x = tap(&i[3], &rx.to_expr(), &strides[1], &dilation[1], &pad[1]);
            let inside = in_range(&y, h).and(in_range(&x, wd));
            let at = [
                i[0].clone(),
                i[1].clone(),
                clamp_index(y, h),
                clamp_index(x, wd),
            ];
            te::max(
                PrimExpr::select(
                    inside,
                    data.at(&to_layout(at, data_axes)),
                    te::lowest(dtype),
                ),
                &[ry.clone(), rx.clone()],
            )
        }))
    })
}

/// How many taps of the window at output position `o` count along one
/// axis (input extent `input`, kernel `k`, padding `before`/`after`): those
/// inside the input, or with `include_pad` those inside the padded input
/// (the reference kernel's `avg_pool2d`).
#[allow(clippy::too_many_arguments)]
fn counted_taps(
    o: &PrimExpr,
    input: &PrimExpr,
    k: &PrimExpr,
    stride: &PrimExpr,
    dilation: &PrimExpr,
    before: &PrimExpr,
    after: &PrimExpr,
    include_pad: bool,
) -> PrimExpr {
    let ceil_div = |a: PrimExpr| (a + dilation.clone() - 1).floordiv(dilation.clone());
    if include_pad {
        let base = o.clone() * stride.clone();
        let padded = input.clone() + before.clone() + after.clone();
        ceil_div(padded - base).min(k.clone()).max(0)
    } else {
        let base = o.clone() * stride.clone() - before.clone();
        let lo = ceil_div(PrimExpr::int(0) - base.clone()).max(0);
        let hi = ceil_div(input.clone() - base).min(k.clone());
        (hi - lo).max(0)
    }
}

/// TOPI's average pooling: a `pool_sum` stage over the window (padding
/// adds nothing), then `pool_avg` divides by the taps that count (0 for a
/// window where none does).
fn avg_pool2d(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let (shape, dtype) = cx.out_tensor(0)?;
    let pool = pair(cx, "pool_size")?;
    let strides = pair(cx, "strides")?;
    let dilation = pair(cx, "dilation")?;
    let pad = padding4(cx)?;
    let include_pad = attr_bool(cx.call, "count_include_pad", false);
    let data_axes = cx.check(crate::op::nn::layout_axes(cx.call, "layout", "NCHW"))?;
    let out_axes = cx.check(crate::op::nn::layout_axes(cx.call, "out_layout", "NCHW"))?;
    cx.te1(&[0], |xs| {
        let data = &xs[0];
        let [_, _, h, wd] = to_canonical(data.shape(), data_axes);
        let (h, wd) = (&h, &wd);
        let ry = reduce_axis(pool[0].clone(), "ry");
        let rx = reduce_axis(pool[1].clone(), "rx");
        let sum = compute("pool_sum", shape.clone(), |phys| {
            let i = to_canonical(phys, out_axes);
            let y = tap(&i[2], &ry.to_expr(), &strides[0], &dilation[0], &pad[0]);
            let x = tap(&i[3], &rx.to_expr(), &strides[1], &dilation[1], &pad[1]);
            let inside = in_range(&y, h).and(in_range(&x, wd));
            let at = [
                i[0].clone(),
                i[1].clone(),
                clamp_index(y, h),
                clamp_index(x, wd),
            ];
            Reduce {
                combiner: Combiner::Sum,
                source: PrimExpr::select(
                    inside,
                    data.at(&to_layout(at, data_axes)),
                    te::zero(dtype),
                ),
                axes: vec![ry.clone(), rx.clone()],
            }
        });
        Ok(compute("pool_avg", shape, |phys| {
            let i = to_canonical(phys, out_axes);
            let rows = counted_taps(
                &i[2],
                h,
                &pool[0],
                &strides[0],
                &dilation[0],
                &pad[0],
                &pad[2],
                include_pad,
            );
            let cols = counted_taps(
                &i[3],
                wd,
                &pool[1],
                &strides[1],
                &dilation[1],
                &pad[1],
                &pad[3],
                include_pad,
            );
            let n = rows * cols;
            PrimExpr::select(
                n.clone().eq_(0),
                te::zero(dtype),
                te::div(sum.at(phys), n.cast(dtype)),
            )
        }))
    })
}

/// A transposed convolution as a gather: output position `o` reads, for
/// tap `k`, input position `(o + pad_begin - k·dilation) / stride` when
/// that divides exactly and is inside the input (NCHW data, IOHW weight).
fn conv2d_transpose(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let (shape, dtype) = cx.out_tensor(0)?;
    let strides = pair(cx, "strides")?;
    let dilation = pair(cx, "dilation")?;
    let pad = padding4(cx)?;
    let groups = attr_int(cx.call, "groups").unwrap_or(1);
    let out_dtype = attr_dtype(cx.call, "out_dtype");
    cx.te1(&[0, 1], |xs| {
        let (data, w) = (&xs[0], &xs[1]);
        let [_, c, h, wd] = [0, 1, 2, 3].map(|k| data.shape()[k].clone());
        let [_, og, kh, kw] = [0, 1, 2, 3].map(|k| w.shape()[k].clone());
        let cg = c.floordiv(groups);
        let rc = reduce_axis(cg.clone(), "rc");
        let ry = reduce_axis(kh, "ry");
        let rx = reduce_axis(kw, "rx");
        let convert = |e: PrimExpr| {
            if out_dtype.is_void() {
                e
            } else {
                e.cast(out_dtype)
            }
        };
        Ok(compute("T_conv2d_transpose_nchw", shape, |i| {
            let source = |o: &PrimExpr, k: &PrimExpr, d: usize, extent: &PrimExpr| {
                let t = o.clone() + pad[d].clone() - k.clone() * dilation[d].clone();
                let q = t.clone().floordiv(strides[d].clone());
                let exact = t.floormod(strides[d].clone()).eq_(0);
                (exact.and(in_range(&q, extent)), clamp_index(q, extent))
            };
            let (ok_y, iy) = source(&i[2], &ry.to_expr(), 0, &h);
            let (ok_x, ix) = source(&i[3], &rx.to_expr(), 1, &wd);
            let group = i[1].clone().floordiv(og.clone());
            let oc = i[1].clone().floormod(og.clone());
            let ic = group * cg.clone() + rc.to_expr();
            let v = convert(data.at(&[i[0].clone(), ic.clone(), iy, ix]));
            let k = convert(w.at(&[ic, oc, ry.to_expr(), rx.to_expr()]));
            Reduce {
                combiner: Combiner::Sum,
                source: PrimExpr::select(ok_y.and(ok_x), v * k, te::zero(dtype)),
                axes: vec![rc.clone(), ry.clone(), rx.clone()],
            }
        }))
    })
}

/// TOPI's padding: one stage over the output reading, for each axis, the
/// input index the mode maps the output index to (clamped, so symbolic
/// dims the inference could not check never read out of bounds), or the
/// pad value outside the input in `constant` mode.
fn pad(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    use relax_runtime::kernels::pad::PadMode;
    let (shape, dtype) = cx.out_tensor(0)?;
    let widths = attr_ints(cx.call, "pad_width").unwrap_or_default();
    let mode = match crate::op::infer::attr(cx.call, "pad_mode") {
        Some(crate::ir::AttrValue::Str(s)) => PadMode::parse(s).map_err(super::error)?,
        _ => PadMode::Constant,
    };
    let value = float_attr(cx, "pad_value", 0.0);
    let stage = match mode {
        PadMode::Constant => "PadInput",
        PadMode::Reflect => "ReflectPadInput",
        PadMode::Replicate => "ReplicatePadInput",
        PadMode::Circular => "CircularPadInput",
    };
    cx.te1(&[0], |xs| {
        let x = &xs[0];
        let dims = x.shape().to_vec();
        Ok(compute(stage, shape, |i| {
            let mut inside: Option<PrimExpr> = None;
            let mut at = Vec::with_capacity(dims.len());
            for (axis, d) in dims.iter().enumerate() {
                let k = i[axis].clone() - widths[2 * axis];
                let src = match mode {
                    PadMode::Constant => {
                        let cond = in_range(&k, d);
                        inside = Some(match inside.take() {
                            Some(c) => c.and(cond),
                            None => cond,
                        });
                        k
                    }
                    PadMode::Reflect => {
                        let neg = PrimExpr::select(
                            k.clone().lt(0),
                            PrimExpr::int(0) - k.clone(),
                            k.clone(),
                        );
                        PrimExpr::select(
                            neg.clone().ge(d.clone()),
                            (d.clone() - 1) * 2 - neg.clone(),
                            neg,
                        )
                    }
                    PadMode::Replicate => k,
                    PadMode::Circular => k.floormod(d.clone()),
                };
                at.push(clamp_index(src, d));
            }
            let v = x.at(&at);
            match inside {
                Some(c) => PrimExpr::select(c, v, te::constant(dtype, value)),
                None => v,
            }
        }))
    })
}

/// The nn legalizations.
pub const LEGALIZE: &[(&str, Legalize)] = &[
    ("relax.nn.relu", relu),
    ("relax.nn.gelu", gelu),
    ("relax.nn.silu", silu),
    ("relax.nn.softmax", softmax),
    ("relax.nn.log_softmax", log_softmax),
    ("relax.nn.layer_norm", layer_norm),
    ("relax.nn.batch_norm", batch_norm),
    ("relax.nn.conv2d", conv2d),
    ("relax.nn.conv2d_transpose", conv2d_transpose),
    ("relax.nn.max_pool2d", max_pool2d),
    ("relax.nn.avg_pool2d", avg_pool2d),
    ("relax.nn.pad", pad),
];
