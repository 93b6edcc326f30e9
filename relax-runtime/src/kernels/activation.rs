//! Neural-network activation and normalization kernels: `nn.relu`,
//! `nn.gelu`, `nn.silu`, `nn.softmax`, `nn.log_softmax`, `nn.layer_norm`.
//!
//! 1. `relu` is `max(x, 0)` on any numeric dtype (NaN stays NaN). The others
//!    take any float type (`float16` and `bfloat16` too) and compute in
//!    `f64`, rounding each result once to the tensor's type; the sums of
//!    `softmax` and the normalizations accumulate in `f64` as well.
//! 2. `gelu` is the exact (erf) form, `x/2 · (1 + erf(x/√2))`, computed as
//!    `x/2 · erfc(-x/√2)` so that the tail for large negative `x` keeps its
//!    relative accuracy. [`erf`] and [`erfc`] are implemented here: a series
//!    of positive terms for `|x| < 2` and a continued fraction beyond;
//!    measured against Python's `math.erf`/`erfc` the relative error of
//!    `erf` is below 1e-15 everywhere and that of `erfc` below 1e-13 (the
//!    worst case is just below 2, where `erfc = 1 - erf` loses two digits).
//! 3. `silu` is `x · sigmoid(x)` with the overflow-free sigmoid.
//! 4. `softmax` and `log_softmax` work along one axis (`axis`, default -1)
//!    and subtract the lane's maximum before exponentiating, so large inputs
//!    do not overflow. A lane of an empty axis stays empty.
//! 5. `layer_norm(data, gamma, beta)` normalizes over `axes` (any order, not
//!    necessarily trailing; `gamma` and `beta` have the dims of `data` at
//!    `axes`, in that order) with the mean and the biased variance computed
//!    in two passes, then multiplies by `gamma` if `scale` and adds `beta`
//!    if `center`: `(x - mean) / sqrt(var + epsilon) · gamma + beta`.

use super::alloc;
use super::args::{
    check_arity, norm_axes, norm_axis, same_dtype, tensor_arg, tensor_value, udims, view,
};
use super::dispatch::{with_float, with_num, Float, Num, Scalar};
use super::elementwise::{float_unary, sigmoid_f64, unary_operand};
use super::reduce::{map_lanes, reduce_lanes};
use super::{Kernel, KernelAttrs};
use crate::tensor::fmt_shape;
use crate::value::Value;

/// The activation and normalization kernels.
pub const KERNELS: &[(&str, Kernel)] = &[
    ("relax.nn.relu", relu),
    ("relax.nn.gelu", gelu),
    ("relax.nn.silu", silu),
    ("relax.nn.softmax", softmax),
    ("relax.nn.log_softmax", log_softmax),
    ("relax.nn.layer_norm", layer_norm),
    ("relax.nn.batch_norm", batch_norm),
];

/// `2/√π`.
const TWO_OVER_SQRT_PI: f64 = std::f64::consts::FRAC_2_SQRT_PI;

/// `erf(x)` by the series `2/√π · e^(-x²) · Σ 2ⁿ x^(2n+1) / (1·3·…·(2n+1))`,
/// whose terms are all of one sign (no cancellation); for `|x| < 2` it
/// converges in at most about 35 terms.
fn erf_series(x: f64) -> f64 {
    let x2 = x * x;
    // The sum starts at the first term, not at 0, so that `erf(-0)` is
    // `-0` (`0 + -0` would be `+0`), as C's `erf` and LLVM's code give.
    let mut sum = x;
    let mut term = x;
    let mut n = 0.0;
    // The bound on iterations only guards against a non-finite input.
    for _ in 0..200 {
        n += 1.0;
        term *= 2.0 * x2 / (2.0 * n + 1.0);
        sum += term;
        if term.abs() <= 1e-17 * sum.abs() {
            break;
        }
    }
    TWO_OVER_SQRT_PI * (-x2).exp() * sum
}

/// `erfc(x)` for `x ≥ 2` by the continued fraction
/// `e^(-x²)/√π · 1/(x + (1/2)/(x + (2/2)/(x + (3/2)/(x + …))))`,
/// evaluated from a fixed depth of 100, at which it has converged to
/// double precision for every `x ≥ 2`.
fn erfc_continued_fraction(x: f64) -> f64 {
    let mut t = x;
    for k in (1..=100).rev() {
        t = x + (k as f64 / 2.0) / t;
    }
    TWO_OVER_SQRT_PI / 2.0 * (-x * x).exp() / t
}

/// The error function, `2/√π ∫₀ˣ e^(-t²) dt` (relative error below 1e-15).
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        x
    } else if x.abs() < 2.0 {
        erf_series(x)
    } else {
        x.signum() * (1.0 - erfc_continued_fraction(x.abs()))
    }
}

/// The complementary error function, `1 - erf(x)`, accurate in relative
/// terms also where it is tiny (relative error below 1e-13).
pub fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        x
    } else if x >= 2.0 {
        erfc_continued_fraction(x)
    } else if x <= -2.0 {
        2.0 - erfc_continued_fraction(-x)
    } else {
        1.0 - erf_series(x)
    }
}

/// `x/2 · (1 + erf(x/√2))`.
fn gelu_f64(x: f64) -> f64 {
    0.5 * x * erfc(-x * std::f64::consts::FRAC_1_SQRT_2)
}

/// `relax.nn.relu`: `max(x, 0)`.
fn relu(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    let x = unary_operand(args)?;
    with_num!(x.dtype(), T => {
        let v = view::<T>(x)?;
        let data = alloc::collect(v.len(), v.iter().map(|&e| Num::maximum(e, T::ZERO)))?;
        tensor_value(&udims(x.shape()), data)
    })
}

/// `relax.nn.gelu` (the erf form).
fn gelu(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    float_unary(args, gelu_f64)
}

/// `relax.nn.silu`: `x · sigmoid(x)`.
fn silu(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    float_unary(args, |x| x * sigmoid_f64(x))
}

/// Applies `f` to each lane of the float tensor argument along `axis`.
fn along_axis(
    args: &[Value],
    attrs: &KernelAttrs,
    f: fn(&[f64], &mut Vec<f64>),
) -> Result<Value, String> {
    let x = unary_operand(args)?;
    let axis = match attrs.get("axis") {
        None => -1,
        Some(_) => attrs.int("axis")?,
    };
    let axis = norm_axis(axis, x.ndim())?;
    with_float!(x.dtype(), T => {
        let v = view::<T>(x)?;
        let (mut wide, mut lane) = (Vec::new(), Vec::new());
        map_lanes(&v, &[axis], |xs: &[T], out: &mut Vec<T>| {
            alloc::refill(&mut wide, xs.len(), xs.iter().map(|&e| e.to_f64()))?;
            alloc::refill(&mut lane, xs.len(), std::iter::empty())?;
            f(&wide, &mut lane);
            out.extend(lane.iter().map(|&e| T::from_f64(e)));
            Ok(())
        })
    })
}

/// The lane's maximum (`-inf` for an empty lane, which has nothing to shift).
fn lane_max(xs: &[f64]) -> f64 {
    xs.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

/// `e^(x - max) / Σ e^(x - max)`.
fn softmax_lane(xs: &[f64], out: &mut Vec<f64>) {
    let m = lane_max(xs);
    let start = out.len();
    out.extend(xs.iter().map(|&x| (x - m).exp()));
    let s: f64 = out[start..].iter().sum();
    for y in &mut out[start..] {
        *y /= s;
    }
}

/// `x - max - ln Σ e^(x - max)`.
fn log_softmax_lane(xs: &[f64], out: &mut Vec<f64>) {
    let m = lane_max(xs);
    let lse = xs.iter().map(|&x| (x - m).exp()).sum::<f64>().ln();
    out.extend(xs.iter().map(|&x| x - m - lse));
}

/// `relax.nn.softmax` along `axis`.
fn softmax(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    along_axis(args, attrs, softmax_lane)
}

/// `relax.nn.log_softmax` along `axis`.
fn log_softmax(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    along_axis(args, attrs, log_softmax_lane)
}

/// `relax.nn.layer_norm(data, gamma, beta)`.
fn layer_norm(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 3)?;
    let data = tensor_arg(args, 0, "data")?;
    let gamma = tensor_arg(args, 1, "gamma")?;
    let beta = tensor_arg(args, 2, "beta")?;
    let dtype = same_dtype(&[("data", data), ("gamma", gamma), ("beta", beta)])?;
    let axes = norm_axes(&attrs.ints("axes")?, data.ndim())?;
    let epsilon = match attrs.get("epsilon") {
        None => 1e-5,
        Some(_) => attrs.float("epsilon")?,
    };
    let center = attrs.bool_or("center", true)?;
    let scale = attrs.bool_or("scale", true)?;
    let param_shape: Vec<i64> = axes.iter().map(|&a| data.shape()[a]).collect();
    for (name, p) in [("gamma", gamma), ("beta", beta)] {
        if p.shape() != param_shape.as_slice() {
            return Err(format!(
                "{name} must have shape {} (the dims of data {} at axes {:?}), found {}",
                fmt_shape(&param_shape),
                fmt_shape(data.shape()),
                axes,
                fmt_shape(p.shape())
            ));
        }
    }
    with_float!(dtype, T => {
        let v = view::<T>(data)?;
        let g = alloc::collect(gamma.numel(), view::<T>(gamma)?.iter().map(|&e| e.to_f64()))?;
        let b = alloc::collect(beta.numel(), view::<T>(beta)?.iter().map(|&e| e.to_f64()))?;
        let mut wide = Vec::new();
        map_lanes(&v, &axes, |xs: &[T], out: &mut Vec<T>| {
            alloc::refill(&mut wide, xs.len(), xs.iter().map(|&e| e.to_f64()))?;
            let xs = &wide;
            let n = xs.len() as f64;
            let mean = xs.iter().sum::<f64>() / n;
            let var = xs.iter().map(|&x| (x - mean) * (x - mean)).sum::<f64>() / n;
            let inv = 1.0 / (var + epsilon).sqrt();
            out.extend(xs.iter().enumerate().map(|(k, &x)| {
                let mut y = (x - mean) * inv;
                if scale {
                    y *= g[k];
                }
                if center {
                    y += b[k];
                }
                T::from_f64(y)
            }));
            Ok(())
        })
    })
}

/// `relax.nn.batch_norm(data, gamma, beta, moving_mean, moving_var)`:
/// `(data - mean) / sqrt(var + epsilon) · gamma + beta` per channel (the
/// dim at `axis`), and the moving statistics.
///
/// In training (`training`, TVM's default) `mean` and `var` are the batch's
/// (the biased variance over every axis but `axis`) and the moving
/// statistics come back updated, `(1 - momentum) · moving + momentum ·
/// batch`; in inference they are the moving statistics, returned as given.
fn batch_norm(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    const NAMES: [&str; 5] = ["data", "gamma", "beta", "moving_mean", "moving_var"];
    check_arity(args, 5)?;
    let mut ts = Vec::with_capacity(5);
    for (i, name) in NAMES.iter().enumerate() {
        ts.push((*name, tensor_arg(args, i, name)?));
    }
    let dtype = same_dtype(&ts)?;
    let data = ts[0].1;
    let axis = norm_axis(attrs.int("axis")?, data.ndim())?;
    let float_or = |name: &str, default: f64| match attrs.get(name) {
        None => Ok(default),
        Some(_) => attrs.float(name),
    };
    let epsilon = float_or("epsilon", 1e-5)?;
    let momentum = float_or("momentum", 0.1)?;
    let center = attrs.bool_or("center", true)?;
    let scale = attrs.bool_or("scale", true)?;
    let training = attrs.bool_or("training", true)?;
    let c = data.shape()[axis];
    for &(name, p) in &ts[1..] {
        if p.shape() != [c] {
            return Err(format!(
                "{name} must have shape ({c},) (one value per channel of data {} at axis {axis}), found {}",
                fmt_shape(data.shape()),
                fmt_shape(p.shape())
            ));
        }
    }
    let c = c as usize;
    // The channel of row-major element k is (k / inner) % c.
    let inner: usize = data.shape()[axis + 1..]
        .iter()
        .map(|&d| d as usize)
        .product();
    with_float!(dtype, T => {
        let x = view::<T>(data)?;
        let param = |i: usize| -> Result<Vec<f64>, String> {
            alloc::collect(c, view::<T>(ts[i].1)?.iter().map(|&e| e.to_f64()))
        };
        let (gamma, beta, moving_mean, moving_var) = (param(1)?, param(2)?, param(3)?, param(4)?);
        let (mean, var) = if training {
            let others: Vec<usize> = (0..x.ndim()).filter(|&a| a != axis).collect();
            let (_, mean) = reduce_lanes(&x, &others, false, |lane: &[T]| {
                Ok(lane.iter().map(|&e| e.to_f64()).sum::<f64>() / lane.len() as f64)
            })?;
            let mut k = 0;
            let (_, var) = reduce_lanes(&x, &others, false, |lane: &[T]| {
                let m = mean[k];
                k += 1;
                let dev = |e: T| e.to_f64() - m;
                Ok(lane.iter().map(|&e| dev(e) * dev(e)).sum::<f64>() / lane.len() as f64)
            })?;
            (mean, var)
        } else {
            (moving_mean.clone(), moving_var.clone())
        };
        let inv = alloc::collect(c, var.iter().map(|v| 1.0 / (v + epsilon).sqrt()))?;
        let out = alloc::collect(
            x.len(),
            x.iter().enumerate().map(|(k, &e)| {
                let ch = (k / inner.max(1)) % c.max(1);
                let mut y = (e.to_f64() - mean[ch]) * inv[ch];
                if scale {
                    y *= gamma[ch];
                }
                if center {
                    y += beta[ch];
                }
                T::from_f64(y)
            }),
        )?;
        let update = |moving: &[f64], batch: &[f64]| -> Result<Vec<T>, String> {
            alloc::collect(
                c,
                moving.iter().zip(batch).map(|(&m, &b)| {
                    T::from_f64(if training { (1.0 - momentum) * m + momentum * b } else { m })
                }),
            )
        };
        Ok(Value::tuple(vec![
            tensor_value(&udims(data.shape()), out)?,
            tensor_value(&[c], update(&moving_mean, &mean)?)?,
            tensor_value(&[c], update(&moving_var, &var)?)?,
        ]))
    })
}

#[cfg(test)]
mod tests {
    use super::{erf, erfc};
    use crate::executable::KernelAttr;
    use crate::kernels::testing::*;
    use crate::value::Value;
    use std::slice::from_ref;

    #[test]
    fn erf_matches_reference_values() {
        // Reference values from CPython's math.erf / math.erfc.
        let cases = [
            (0.5, 0.5204998778130465, 0.4795001221869535),
            (1.0, 0.8427007929497149, 0.15729920705028513),
            (1.99, 0.995111413199617, 0.004888586800383003),
            (2.0, 0.9953222650189527, 0.004677734981047265),
            (3.0, 0.9999779095030014, 2.209049699858544e-05),
            (5.0, 0.9999999999984626, 1.5374597944280351e-12),
            (1e-3, 0.0011283787909692365, 0.9988716212090307),
        ];
        for (x, e, c) in cases {
            assert!((erf(x) / e - 1.0).abs() < 1e-15, "erf({x}) = {}", erf(x));
            assert!((erf(-x) / -e - 1.0).abs() < 1e-15, "erf(-{x})");
            assert!((erfc(x) / c - 1.0).abs() < 1e-13, "erfc({x}) = {}", erfc(x));
            assert!(((erfc(-x) - (1.0 + e)) / (1.0 + e)).abs() < 1e-15);
        }
        assert_eq!(erf(0.0), 0.0);
        assert!(erf(-0.0).is_sign_negative(), "erf(-0) is -0");
        assert!(erf(0.0).is_sign_positive());
        assert_eq!(erf(40.0), 1.0);
        assert_eq!(erfc(40.0), 0.0);
        assert!(erf(f64::NAN).is_nan());
    }

    #[test]
    fn relu_gelu_silu() {
        let x = tv(&[5], vec![-3.0f32, -0.5, 0.0, 0.5, 3.0]);
        assert_tensor(
            &run("relax.nn.relu", from_ref(&x), &[]).unwrap(),
            &[5],
            &[0.0f32, 0.0, 0.0, 0.5, 3.0],
        );
        assert_tensor(
            &run("relax.nn.relu", &[tv(&[3], vec![-2i64, 0, 7])], &[]).unwrap(),
            &[3],
            &[0i64, 0, 7],
        );
        // 0.5 x (1 + erf(x / sqrt 2)) with erf values from CPython.
        let erf_3 = 0.9973002039367398; // erf(3 / sqrt 2)
        let erf_half = 0.38292492254802624; // erf(0.5 / sqrt 2)
        let gelu = run("relax.nn.gelu", from_ref(&x), &[]).unwrap();
        assert_close_f32(
            &gelu,
            &[5],
            &[
                -1.5 * (1.0 - erf_3),
                -0.25 * (1.0 - erf_half),
                0.0,
                0.25 * (1.0 + erf_half),
                1.5 * (1.0 + erf_3),
            ],
        );
        let sig = |v: f64| 1.0 / (1.0 + (-v).exp());
        let silu = run("relax.nn.silu", &[x], &[]).unwrap();
        assert_close_f32(
            &silu,
            &[5],
            &[
                -3.0 * sig(-3.0),
                -0.5 * sig(-0.5),
                0.0,
                0.5 * sig(0.5),
                3.0 * sig(3.0),
            ],
        );
        assert_eq!(
            run("relax.nn.gelu", &[tv(&[1], vec![1i32])], &[]).unwrap_err(),
            "dtype int32 is not supported by this kernel"
        );
        assert!(run("relax.nn.relu", &[tv(&[1], vec![true])], &[]).is_err());
    }

    #[test]
    fn softmax_along_axes() {
        let x = tv(&[2, 3], vec![1.0f64, 2.0, 3.0, 1000.0, 1000.0, 1000.0]);
        let e = |v: f64| v.exp();
        let s = e(1.0) + e(2.0) + e(3.0);
        let out = run("relax.nn.softmax", from_ref(&x), &[]).unwrap();
        let third = 1.0 / 3.0;
        assert_close(
            &out,
            &[2, 3],
            &[e(1.0) / s, e(2.0) / s, e(3.0) / s, third, third, third],
            1e-14,
        );
        // Along axis 0 (given as -2): columns [1, 1000], [2, 1000], [3, 1000].
        let out = run(
            "relax.nn.softmax",
            from_ref(&x),
            &[("axis", KernelAttr::Int(-2))],
        )
        .unwrap();
        let lo = |v: f64| 1.0 / (1.0 + (1000.0 - v).exp());
        assert_close(
            &out,
            &[2, 3],
            &[
                lo(1.0),
                lo(2.0),
                lo(3.0),
                1.0 - lo(1.0),
                1.0 - lo(2.0),
                1.0 - lo(3.0),
            ],
            1e-12,
        );
        let out = run(
            "relax.nn.log_softmax",
            from_ref(&x),
            &[("axis", KernelAttr::Int(1))],
        )
        .unwrap();
        let l3 = -(3f64).ln();
        assert_close(
            &out,
            &[2, 3],
            &[1.0 - s.ln(), 2.0 - s.ln(), 3.0 - s.ln(), l3, l3, l3],
            1e-14,
        );
        let f = tv(&[3], vec![0.0f32, 0.0, 89.0]);
        let out = run("relax.nn.softmax", &[f], &[]).unwrap();
        let r = (-89f64).exp();
        assert_close_f32(
            &out,
            &[3],
            &[
                r / (1.0 + 2.0 * r),
                r / (1.0 + 2.0 * r),
                1.0 / (1.0 + 2.0 * r),
            ],
        );
        let empty = run("relax.nn.softmax", &[tv(&[2, 0], Vec::<f32>::new())], &[]).unwrap();
        assert_tensor::<f32>(&empty, &[2, 0], &[]);
        assert_eq!(
            run(
                "relax.nn.softmax",
                from_ref(&x),
                &[("axis", KernelAttr::Int(2))]
            )
            .unwrap_err(),
            "axis 2 is out of range for a tensor of rank 2"
        );
        assert!(run("relax.nn.log_softmax", &[tv(&[2], vec![1i64, 2])], &[]).is_err());
        assert!(run("relax.nn.softmax", &[x.clone(), x], &[]).is_err());
    }

    fn ln_attrs(axes: &[i64]) -> Vec<(&'static str, KernelAttr)> {
        vec![
            ("axes", ints(axes)),
            ("epsilon", KernelAttr::Float(1e-5)),
            ("center", KernelAttr::Bool(true)),
            ("scale", KernelAttr::Bool(true)),
        ]
    }

    #[test]
    fn layer_norm_over_the_last_axis() {
        let x = tv(&[2, 4], vec![1.0f32, 2.0, 3.0, 4.0, -1.0, -1.0, 1.0, 1.0]);
        let g = tv(&[4], vec![1.0f32, 2.0, 1.0, 1.0]);
        let b = tv(&[4], vec![0.0f32, 0.0, 0.0, 10.0]);
        let out = run(
            "relax.nn.layer_norm",
            &[x.clone(), g.clone(), b.clone()],
            &ln_attrs(&[-1]),
        )
        .unwrap();
        // Row 0: mean 2.5, biased var 1.25; row 1: mean 0, var 1.
        let s0 = 1.0 / (1.25f64 + 1e-5).sqrt();
        let s1 = 1.0 / (1.0f64 + 1e-5).sqrt();
        assert_close_f32(
            &out,
            &[2, 4],
            &[
                -1.5 * s0,
                2.0 * -0.5 * s0,
                0.5 * s0,
                1.5 * s0 + 10.0,
                -s1,
                2.0 * -s1,
                s1,
                s1 + 10.0,
            ],
        );
        let mut plain = ln_attrs(&[1]);
        plain[2].1 = KernelAttr::Bool(false);
        plain[3].1 = KernelAttr::Bool(false);
        let out = run("relax.nn.layer_norm", &[x, g, b], &plain).unwrap();
        assert_close_f32(
            &out,
            &[2, 4],
            &[-1.5 * s0, -0.5 * s0, 0.5 * s0, 1.5 * s0, -s1, -s1, s1, s1],
        );
    }

    #[test]
    fn layer_norm_over_leading_axes_in_order() {
        // data (2, 3), axes [1, 0]: one lane of all six elements, gamma of
        // shape (3, 2) indexed [j, i].
        let x = tv(&[2, 3], vec![0.0f64, 1.0, 2.0, 3.0, 4.0, 5.0]);
        let g = tv(&[3, 2], vec![1.0f64, 10.0, 1.0, 10.0, 1.0, 10.0]);
        let b = tv(&[3, 2], vec![0.0f64; 6]);
        let attrs = ln_attrs(&[1, 0]);
        let out = run("relax.nn.layer_norm", &[x, g, b], &attrs).unwrap();
        let inv = 1.0 / (17.5f64 / 6.0 + 1e-5).sqrt();
        let want: Vec<f64> = (0..6)
            .map(|e| {
                let i = e / 3;
                let scale = if i == 0 { 1.0 } else { 10.0 };
                (e as f64 - 2.5) * inv * scale
            })
            .collect();
        assert_close(&out, &[2, 3], &want, 1e-12);
    }

    fn bn_attrs(training: bool) -> Vec<(&'static str, KernelAttr)> {
        vec![
            ("axis", KernelAttr::Int(1)),
            ("epsilon", KernelAttr::Float(0.0)),
            ("center", KernelAttr::Bool(true)),
            ("scale", KernelAttr::Bool(true)),
            ("momentum", KernelAttr::Float(0.5)),
            ("training", KernelAttr::Bool(training)),
        ]
    }

    #[test]
    fn batch_norm_in_training_and_inference() {
        // Channel 0 holds 1 and 3 (mean 2, variance 1), channel 1 holds 2
        // and 6 (mean 4, variance 4).
        let x = tv(&[2, 2], vec![1.0f64, 2.0, 3.0, 6.0]);
        let g = tv(&[2], vec![1.0f64, 2.0]);
        let b = tv(&[2], vec![0.0f64, 10.0]);
        let args = |mm: Vec<f64>, mv: Vec<f64>| {
            vec![x.clone(), g.clone(), b.clone(), tv(&[2], mm), tv(&[2], mv)]
        };
        let out = run(
            "relax.nn.batch_norm",
            &args(vec![0.0, 0.0], vec![1.0, 1.0]),
            &bn_attrs(true),
        )
        .unwrap();
        let f = out.as_tuple().unwrap();
        assert_close(&f[0], &[2, 2], &[-1.0, 8.0, 1.0, 12.0], 1e-12);
        // Moving statistics: half the old, half the batch's.
        assert_close(&f[1], &[2], &[1.0, 2.0], 1e-12);
        assert_close(&f[2], &[2], &[1.0, 2.5], 1e-12);
        // Inference normalizes with the moving statistics and returns them.
        let out = run(
            "relax.nn.batch_norm",
            &args(vec![1.0, 2.0], vec![4.0, 1.0]),
            &bn_attrs(false),
        )
        .unwrap();
        let f = out.as_tuple().unwrap();
        assert_close(&f[0], &[2, 2], &[0.0, 10.0, 1.0, 18.0], 1e-12);
        assert_close(&f[1], &[2], &[1.0, 2.0], 0.0);
        assert_close(&f[2], &[2], &[4.0, 1.0], 0.0);
        // Without scale and center: only normalized.
        let mut plain = bn_attrs(false);
        plain[2].1 = KernelAttr::Bool(false);
        plain[3].1 = KernelAttr::Bool(false);
        let out = run(
            "relax.nn.batch_norm",
            &args(vec![1.0, 2.0], vec![4.0, 1.0]),
            &plain,
        )
        .unwrap();
        assert_close(
            &out.as_tuple().unwrap()[0],
            &[2, 2],
            &[0.0, 0.0, 1.0, 4.0],
            1e-12,
        );
    }

    #[test]
    fn batch_norm_errors() {
        let x = tv(&[2, 3], vec![0.0f32; 6]);
        let c = tv(&[3], vec![1.0f32; 3]);
        let args = [
            x.clone(),
            c.clone(),
            c.clone(),
            c.clone(),
            tv(&[2], vec![1.0f32; 2]),
        ];
        let e = run("relax.nn.batch_norm", &args, &bn_attrs(false)).unwrap_err();
        assert!(e.contains("moving_var must have shape (3,)"), "{e}");
        let mut bad_axis = bn_attrs(false);
        bad_axis[0].1 = KernelAttr::Int(2);
        let args = [x, c.clone(), c.clone(), c.clone(), c.clone()];
        let e = run("relax.nn.batch_norm", &args, &bad_axis).unwrap_err();
        assert!(e.contains("axis 2"), "{e}");
        let ints = tv(&[3], vec![1i32; 3]);
        let args = [
            tv(&[1, 3], vec![1i32; 3]),
            ints.clone(),
            ints.clone(),
            ints.clone(),
            ints,
        ];
        let e = run("relax.nn.batch_norm", &args, &bn_attrs(false)).unwrap_err();
        assert!(e.contains("int32"), "{e}");
    }

    #[test]
    fn layer_norm_errors() {
        let x = tv(&[2, 4], vec![0.0f32; 8]);
        let g = tv(&[4], vec![1.0f32; 4]);
        assert_eq!(
            run(
                "relax.nn.layer_norm",
                &[x.clone(), tv(&[3], vec![1.0f32; 3]), g.clone()],
                &ln_attrs(&[1])
            )
            .unwrap_err(),
            "gamma must have shape (4,) (the dims of data (2, 4) at axes [1]), found (3,)"
        );
        assert_eq!(
            run(
                "relax.nn.layer_norm",
                &[x.clone(), g.clone(), tv(&[4], vec![1.0f64; 4])],
                &ln_attrs(&[1])
            )
            .unwrap_err(),
            "dtypes differ: data is float32, beta is float64"
        );
        assert!(run(
            "relax.nn.layer_norm",
            &[x.clone(), g.clone(), g.clone()],
            &ln_attrs(&[1, -1])
        )
        .is_err());
        assert!(run(
            "relax.nn.layer_norm",
            &[x.clone(), g.clone(), g.clone()],
            &[]
        )
        .is_err());
        assert!(run(
            "relax.nn.layer_norm",
            &[x.clone(), g.clone()],
            &ln_attrs(&[1])
        )
        .is_err());
        assert!(run(
            "relax.nn.layer_norm",
            &[x, g.clone(), Value::shape(&[4])],
            &ln_attrs(&[1])
        )
        .is_err());
        // A zero-variance lane is finite thanks to epsilon.
        let z = run(
            "relax.nn.layer_norm",
            &[
                tv(&[1, 4], vec![3.0f32; 4]),
                g.clone(),
                tv(&[4], vec![0.5f32; 4]),
            ],
            &ln_attrs(&[-1]),
        )
        .unwrap();
        assert_tensor(&z, &[1, 4], &[0.5f32; 4]);
    }
}
