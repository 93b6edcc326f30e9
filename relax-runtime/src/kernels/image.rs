//! `image.resize2d`: NCHW images resized to `size` (TVM's
//! `relax.op.image.resize2d`, TOPI's `resize2d`).
//!
//! 1. Output pixel `(y, x)` reads the input at a source coordinate given
//!    by `coordinate_transformation_mode`, per axis, with `scale = in /
//!    out` (computed in `float64`):
//!    - `half_pixel`: `(x + 0.5)·scale - 0.5`;
//!    - `pytorch_half_pixel`: the same, or 0 when `out` is 1;
//!    - `align_corners`: `x·(in - 1) / (out - 1)`, or 0 when `out` is 1;
//!    - `asymmetric`: `x·scale`;
//!    - `tf_half_pixel_for_nn`: `(x + 0.5)·scale`;
//!    - `tf_crop_and_resize`: with the axis's `roi` start `a` and end `b`
//!      (`roi` is `[a_h, a_w, b_h, b_w]`, fractions of `in - 1`),
//!      `a·(in - 1) + x·(b - a)·(in - 1) / (out - 1)`, or
//!      `(a + b)/2·(in - 1)` when `out` is 1; a pixel whose source
//!      coordinate lies outside `[0, in - 1]` on either axis is
//!      `extrapolation_value`.
//! 2. `nearest_neighbor` rounds the source coordinate by
//!    `rounding_method` (`round`: half away from zero; `round_prefer_floor`,
//!    `round_prefer_ceil`: halves down or up; `floor`; `ceil`) and clamps it
//!    into the image. `linear` weighs the two pixels around it along each
//!    axis by its fraction `t` (`1 - t`, `t`); `cubic` weighs the four
//!    pixels `floor - 1 ..= floor + 2` by Keys' cubic convolution with
//!    coefficient `cubic_alpha` (`A`): `(A+2)|d|³ - (A+3)|d|² + 1` for a
//!    distance `|d| ≤ 1`, `A|d|³ - 5A|d|² + 8A|d| - 4A` for `1 < |d| < 2`;
//!    with `cubic_exclude` = 1 the weights of pixels outside the image are
//!    dropped and the rest renormalized to sum to 1. Tap indices are
//!    clamped into the image (a source coordinate outside repeats the
//!    edge). The sum runs in `float64` and is rounded once.
//! 3. Layouts other than NCHW are reported as unsupported.

use super::alloc;
use super::args::{check_arity, checked_numel, shape_arg, tensor_arg, tensor_value, view};
use super::dispatch::{with_num, Scalar, Wide};
use super::{Kernel, KernelAttrs};
use crate::executable::KernelAttr;
use crate::value::Value;

/// The resize kernel.
pub const KERNELS: &[(&str, Kernel)] = &[("relax.image.resize2d", resize2d)];

/// How source coordinates are computed (module docs, item 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoordinateMode {
    /// `(x + 0.5)·scale - 0.5`.
    HalfPixel,
    /// `half_pixel`, or 0 for an output extent of 1.
    PytorchHalfPixel,
    /// `x·(in - 1) / (out - 1)`, or 0 for an output extent of 1.
    AlignCorners,
    /// `x·scale`.
    Asymmetric,
    /// `(x + 0.5)·scale`.
    TfHalfPixelForNn,
    /// The `roi` of each axis stretched over the output; outside the image
    /// is `extrapolation_value`.
    TfCropAndResize,
}

/// How `nearest_neighbor` rounds (module docs, item 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    /// Half away from zero.
    Round,
    /// Halves down.
    RoundPreferFloor,
    /// Halves up.
    RoundPreferCeil,
    /// Down.
    Floor,
    /// Up.
    Ceil,
}

/// The interpolation `method` (module docs, item 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// The one pixel nearest the source coordinate.
    NearestNeighbor,
    /// The two pixels around it per axis.
    Linear,
    /// The four pixels around it per axis.
    Cubic,
}

/// The attributes of a resize, as strings and numbers.
#[derive(Clone, Debug, PartialEq)]
pub struct ResizeAttrs<'a> {
    /// `method`.
    pub method: &'a str,
    /// `coordinate_transformation_mode`.
    pub coordinates: &'a str,
    /// `rounding_method`.
    pub rounding: &'a str,
    /// `cubic_alpha`.
    pub cubic_alpha: f64,
    /// `cubic_exclude`.
    pub cubic_exclude: i64,
    /// `extrapolation_value`.
    pub extrapolation_value: f64,
    /// `roi`.
    pub roi: Vec<f64>,
}

/// A resize's method and coordinate rules, as read from its attributes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ResizeMode {
    /// `method`.
    pub method: Method,
    /// `coordinate_transformation_mode`.
    pub coordinates: CoordinateMode,
    /// `rounding_method` (nearest only).
    pub rounding: Rounding,
    /// `cubic_alpha` (cubic only).
    pub cubic_alpha: f64,
    /// `cubic_exclude` (cubic only).
    pub cubic_exclude: bool,
    /// `extrapolation_value` (`tf_crop_and_resize` only).
    pub extrapolation_value: f64,
    /// `roi` as `[start_h, start_w, end_h, end_w]` (`tf_crop_and_resize`
    /// only).
    pub roi: [f64; 4],
}

impl ResizeMode {
    /// The mode of the attributes, or what is not supported.
    pub fn parse(a: &ResizeAttrs) -> Result<ResizeMode, String> {
        let method = match a.method {
            "nearest_neighbor" => Method::NearestNeighbor,
            "linear" => Method::Linear,
            "cubic" => Method::Cubic,
            m => {
                return Err(format!(
                    "method must be nearest_neighbor, linear or cubic, found {m}"
                ))
            }
        };
        let coordinates = match a.coordinates {
            "half_pixel" => CoordinateMode::HalfPixel,
            "pytorch_half_pixel" => CoordinateMode::PytorchHalfPixel,
            "align_corners" => CoordinateMode::AlignCorners,
            "asymmetric" => CoordinateMode::Asymmetric,
            "tf_half_pixel_for_nn" => CoordinateMode::TfHalfPixelForNn,
            "tf_crop_and_resize" => CoordinateMode::TfCropAndResize,
            m => {
                return Err(format!(
                    "coordinate_transformation_mode {m} is not one TVM knows"
                ))
            }
        };
        let rounding = match a.rounding {
            "round" | "" => Rounding::Round,
            "round_prefer_floor" => Rounding::RoundPreferFloor,
            "round_prefer_ceil" => Rounding::RoundPreferCeil,
            "floor" => Rounding::Floor,
            "ceil" => Rounding::Ceil,
            m => return Err(format!("rounding_method {m} is not one TVM knows")),
        };
        let roi: [f64; 4] = match a.roi.as_slice() {
            [] => [0.0, 0.0, 1.0, 1.0],
            &[a0, a1, b0, b1] => [a0, a1, b0, b1],
            r => return Err(format!("roi must have 4 values, found {}", r.len())),
        };
        let finite = [a.cubic_alpha, a.extrapolation_value]
            .iter()
            .chain(&roi)
            .all(|v| v.is_finite());
        if !finite {
            return Err("cubic_alpha, extrapolation_value and roi must be finite".into());
        }
        Ok(ResizeMode {
            method,
            coordinates,
            rounding,
            cubic_alpha: a.cubic_alpha,
            cubic_exclude: a.cubic_exclude != 0,
            extrapolation_value: a.extrapolation_value,
            roi,
        })
    }

    /// The source coordinate of output position `x` along `axis` (0 for
    /// height, 1 for width) of `input` extent resized to `output`.
    pub fn source(&self, x: f64, input: f64, output: f64, axis: usize) -> f64 {
        let scale = input / output;
        match self.coordinates {
            CoordinateMode::HalfPixel => (x + 0.5) * scale - 0.5,
            CoordinateMode::PytorchHalfPixel if output > 1.0 => (x + 0.5) * scale - 0.5,
            CoordinateMode::PytorchHalfPixel => 0.0,
            CoordinateMode::AlignCorners if output > 1.0 => x * (input - 1.0) / (output - 1.0),
            CoordinateMode::AlignCorners => 0.0,
            CoordinateMode::Asymmetric => x * scale,
            CoordinateMode::TfHalfPixelForNn => (x + 0.5) * scale,
            CoordinateMode::TfCropAndResize => {
                let (a, b) = (self.roi[axis], self.roi[axis + 2]);
                if output > 1.0 {
                    a * (input - 1.0) + x * (b - a) * (input - 1.0) / (output - 1.0)
                } else {
                    0.5 * (a + b) * (input - 1.0)
                }
            }
        }
    }

    /// `v` rounded as `nearest_neighbor` rounds.
    pub fn round(&self, v: f64) -> f64 {
        match self.rounding {
            Rounding::Round => v.round(),
            Rounding::RoundPreferFloor => (v - 0.5).ceil(),
            Rounding::RoundPreferCeil => (v + 0.5).floor(),
            Rounding::Floor => v.floor(),
            Rounding::Ceil => v.ceil(),
        }
    }

    /// The cubic weights of the pixels `floor - 1 ..= floor + 2` for a
    /// source coordinate of fraction `t` past its floor (before
    /// `cubic_exclude`).
    pub fn cubic_weights(&self, t: f64) -> [f64; 4] {
        let a = self.cubic_alpha;
        let near = |d: f64| ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0;
        let far = |d: f64| ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a;
        [far(1.0 + t), near(t), near(1.0 - t), far(2.0 - t)]
    }

    /// The pixels (clamped indices) and weights an output position reads
    /// along an axis, for source coordinate `s` in an extent of `input`.
    pub fn taps(&self, s: f64, input: usize) -> Vec<(usize, f64)> {
        let last = input.saturating_sub(1) as f64;
        let clamp = |v: f64| v.clamp(0.0, last) as usize;
        match self.method {
            Method::NearestNeighbor => vec![(clamp(self.round(s)), 1.0)],
            Method::Linear => {
                let f = s.floor();
                vec![(clamp(f), 1.0 - (s - f)), (clamp(f + 1.0), s - f)]
            }
            Method::Cubic => {
                let f = s.floor();
                let mut w = self.cubic_weights(s - f);
                let at = |k: usize| f - 1.0 + k as f64;
                if self.cubic_exclude {
                    for (k, wk) in w.iter_mut().enumerate() {
                        if at(k) < 0.0 || at(k) > last {
                            *wk = 0.0;
                        }
                    }
                    let sum: f64 = w.iter().sum();
                    if sum != 0.0 {
                        w.iter_mut().for_each(|wk| *wk /= sum);
                    }
                }
                (0..4).map(|k| (clamp(at(k)), w[k])).collect()
            }
        }
    }

    /// Whether a source coordinate `s` in an extent of `input` reads
    /// `extrapolation_value` instead of the image.
    pub fn extrapolates(&self, s: f64, input: usize) -> bool {
        self.coordinates == CoordinateMode::TfCropAndResize
            && (s < 0.0 || s > input.saturating_sub(1) as f64)
    }
}

/// The mode of a call's attributes.
fn mode_of(attrs: &KernelAttrs) -> Result<ResizeMode, String> {
    let get = |name: &str, default: &'static str| -> Result<String, String> {
        match attrs.get(name) {
            None => Ok(default.to_string()),
            Some(_) => attrs.str(name).map(str::to_string),
        }
    };
    let num = |name: &str, default: f64| -> Result<f64, String> {
        match attrs.get(name) {
            None => Ok(default),
            Some(_) => attrs.float(name),
        }
    };
    if attrs.get("layout").is_some() {
        let l = attrs.str("layout")?;
        if l != "NCHW" {
            return Err(format!("layout {l} is not supported (NCHW is)"));
        }
    }
    let roi = match attrs.get("roi") {
        None | Some(KernelAttr::None) => vec![],
        Some(KernelAttr::Array(items)) => items
            .iter()
            .map(|v| match v {
                KernelAttr::Float(f) => Ok(*f),
                KernelAttr::Int(i) => Ok(*i as f64),
                other => Err(format!("attribute `roi` must hold floats, found {other:?}")),
            })
            .collect::<Result<_, _>>()?,
        other => return Err(format!("attribute `roi` must be a list, found {other:?}")),
    };
    let (method, coordinates, rounding) = (
        get("method", "linear")?,
        get("coordinate_transformation_mode", "half_pixel")?,
        get("rounding_method", "round")?,
    );
    ResizeMode::parse(&ResizeAttrs {
        method: &method,
        coordinates: &coordinates,
        rounding: &rounding,
        cubic_alpha: num("cubic_alpha", -0.75)?,
        cubic_exclude: num("cubic_exclude", 0.0)? as i64,
        extrapolation_value: num("extrapolation_value", 0.0)?,
        roi,
    })
}

/// `relax.image.resize2d(data, size, …)` (module docs).
fn resize2d(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 2)?;
    let data = tensor_arg(args, 0, "data")?;
    let size = shape_arg(args, 1, "size")?;
    let mode = mode_of(attrs)?;
    let &[n, c, h, w] = data.shape() else {
        return Err(format!("data must have rank 4, found rank {}", data.ndim()));
    };
    let (oh, ow) = match size {
        [s] => (*s, *s),
        [a, b] => (*a, *b),
        _ => {
            return Err(format!(
                "size must have 1 or 2 values, found {}",
                size.len()
            ))
        }
    };
    checked_numel(&[n, c, oh, ow])?;
    if (h == 0 || w == 0) && oh * ow > 0 {
        return Err("an empty image cannot be resized to a non-empty one".into());
    }
    let (planes, h, w, oh, ow) = (
        (n * c) as usize,
        h as usize,
        w as usize,
        oh as usize,
        ow as usize,
    );
    // Per output index along an axis: its taps, or None where it reads
    // the extrapolation value.
    let axis_taps = |out: usize, input: usize, axis: usize| -> Vec<Option<Vec<(usize, f64)>>> {
        (0..out)
            .map(|o| {
                let s = mode.source(o as f64, input as f64, out as f64, axis);
                (!mode.extrapolates(s, input)).then(|| mode.taps(s, input))
            })
            .collect()
    };
    let (ys, xs) = (axis_taps(oh, h, 0), axis_taps(ow, w, 1));
    with_num!(data.dtype(), T => {
        let x = view::<T>(data)?;
        let x = x.as_slice().ok_or("data is not contiguous")?;
        let mut out = alloc::vec(planes * oh * ow)?;
        let at = |p: usize, y: usize, xx: usize| -> f64 {
            match x[(p * h + y) * w + xx].to_wide() {
                Wide::Float(f) => f,
                Wide::Int(i) => i as f64,
            }
        };
        for p in 0..planes {
            for ty in &ys {
                for tx in &xs {
                    let v = match (ty, tx) {
                        (Some(ty), Some(tx)) => ty
                            .iter()
                            .map(|&(y, wy)| {
                                tx.iter().map(|&(xx, wx)| at(p, y, xx) * wx).sum::<f64>() * wy
                            })
                            .sum(),
                        _ => mode.extrapolation_value,
                    };
                    out.push(T::from_wide(Wide::Float(v)));
                }
            }
        }
        tensor_value(&[n as usize, c as usize, oh, ow], out)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::executable::KernelAttr;
    use crate::kernels::testing::{assert_ok, run, tv};

    fn resize(
        x: Value,
        size: &[i64],
        method: &str,
        coords: &str,
        rounding: &str,
    ) -> Result<Value, String> {
        run(
            "relax.image.resize2d",
            &[x, Value::shape(size)],
            &[
                ("method", KernelAttr::Str(method.into())),
                (
                    "coordinate_transformation_mode",
                    KernelAttr::Str(coords.into()),
                ),
                ("rounding_method", KernelAttr::Str(rounding.into())),
            ],
        )
    }

    fn two_by_two() -> Value {
        tv(&[1, 1, 2, 2], vec![1.0f32, 2.0, 3.0, 4.0])
    }

    /// ONNX's own examples (Resize, `upsample_nearest`, linear with
    /// `align_corners`) and PyTorch's bilinear with `half_pixel`.
    #[test]
    fn nearest_and_linear_match_onnx_and_pytorch() {
        assert_ok(
            resize(
                two_by_two(),
                &[4, 6],
                "nearest_neighbor",
                "asymmetric",
                "floor",
            ),
            &[1, 1, 4, 6],
            vec![
                1.0f32, 1., 1., 2., 2., 2., 1., 1., 1., 2., 2., 2., 3., 3., 3., 4., 4., 4., 3., 3.,
                3., 4., 4., 4.,
            ],
        );
        assert_ok(
            resize(two_by_two(), &[3, 3], "linear", "align_corners", "round"),
            &[1, 1, 3, 3],
            vec![1.0f32, 1.5, 2.0, 2.0, 2.5, 3.0, 3.0, 3.5, 4.0],
        );
        // torch.nn.functional.interpolate(x, (4, 4), mode="bilinear")
        assert_ok(
            resize(two_by_two(), &[4, 4], "linear", "half_pixel", "round"),
            &[1, 1, 4, 4],
            vec![
                1.0f32, 1.25, 1.75, 2.0, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3.0, 3.25,
                3.75, 4.0,
            ],
        );
    }

    #[test]
    fn rounding_methods_break_ties_as_named() {
        let x = tv(&[1, 1, 1, 4], vec![0.0f32, 1.0, 2.0, 3.0]);
        // asymmetric 4 -> 8: source 0.5 at output 1.
        for (rounding, at1) in [
            ("round_prefer_floor", 0.0f32),
            ("round_prefer_ceil", 1.0),
            ("round", 1.0),
            ("floor", 0.0),
            ("ceil", 1.0),
        ] {
            let r = resize(
                x.clone(),
                &[1, 8],
                "nearest_neighbor",
                "asymmetric",
                rounding,
            )
            .unwrap();
            let Value::Tensor(t) = r else { panic!() };
            assert_eq!(t.to_vec::<f32>().unwrap()[1], at1, "{rounding}");
        }
    }

    fn four_by_four() -> Value {
        tv(&[1, 1, 4, 4], (1..=16).map(|v| v as f32).collect())
    }

    fn close(r: Result<Value, String>, shape: &[i64], want: &[f64]) {
        let Value::Tensor(t) = r.unwrap() else {
            panic!("not a tensor")
        };
        assert_eq!(t.shape(), shape);
        let got = t.to_vec::<f32>().unwrap();
        for (g, w) in got.iter().zip(want) {
            assert!((f64::from(*g) - w).abs() < 1e-5, "{got:?} != {want:?}");
        }
    }

    /// Values of ONNX's reference `Resize` (opset 19) on 1..=16 as 4×4.
    #[test]
    fn cubic_matches_onnx() {
        close(
            resize(four_by_four(), &[3, 3], "cubic", "half_pixel", "round"),
            &[1, 1, 3, 3],
            &[
                1.6307926, 3.0046341, 4.3784785, 7.1261611, 8.5, 9.8738461, 12.6215368, 13.9953728,
                15.3692217,
            ],
        );
        // cubic_coeff_a = -0.5 and exclude_outside = 1.
        close(
            run(
                "relax.image.resize2d",
                &[four_by_four(), Value::shape(&[3, 3])],
                &[
                    ("method", KernelAttr::Str("cubic".into())),
                    ("cubic_alpha", KernelAttr::Float(-0.5)),
                    ("cubic_exclude", KernelAttr::Int(1)),
                ],
            ),
            &[1, 1, 3, 3],
            &[
                1.5142215, 2.9113772, 4.3085332, 7.1028442, 8.5, 9.8971558, 12.6914673, 14.0886230,
                15.4857788,
            ],
        );
    }

    /// ONNX's `tf_crop_and_resize` example with `extrapolation_value` 10.
    #[test]
    fn crop_and_resize_extrapolates_outside_the_image() {
        close(
            run(
                "relax.image.resize2d",
                &[four_by_four(), Value::shape(&[3, 3])],
                &[
                    ("method", KernelAttr::Str("linear".into())),
                    (
                        "coordinate_transformation_mode",
                        KernelAttr::Str("tf_crop_and_resize".into()),
                    ),
                    (
                        "roi",
                        KernelAttr::Array([0.4, 0.6, 1.2, 1.7].map(KernelAttr::Float).to_vec()),
                    ),
                    ("extrapolation_value", KernelAttr::Float(10.0)),
                ],
            ),
            &[1, 1, 3, 3],
            &[7.6, 10.0, 10.0, 12.4, 10.0, 10.0, 10.0, 10.0, 10.0],
        );
    }

    #[test]
    fn bad_attributes_are_errors() {
        assert!(
            resize(two_by_two(), &[3, 3], "bicubic", "half_pixel", "round")
                .unwrap_err()
                .contains("bicubic")
        );
        assert!(resize(
            two_by_two(),
            &[3, 3],
            "linear",
            "half_pixel_symmetric",
            "round"
        )
        .is_err());
        assert!(resize(two_by_two(), &[3, 3, 3], "linear", "half_pixel", "round").is_err());
    }
}
