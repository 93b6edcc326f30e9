//! `image.resize2d`: NCHW images resized to `size` (TVM's
//! `relax.op.image.resize2d`, TOPI's `resize2d`, with ONNX `Resize`'s
//! scales, `half_pixel_symmetric` and `antialias`).
//!
//! 1. Output pixel `(y, x)` reads the input at a source coordinate given
//!    by `coordinate_transformation_mode`, per axis. Without scales the
//!    axis maps by its size ratio (TVM): `r(v) = v·(in / out)` and the
//!    resized length is `L = out`. With `scales` (`[scale_h, scale_w]`,
//!    an attribute or the fourth operand) it maps by the scale (ONNX):
//!    `r(v) = v / scale` and `L = in·scale`, which need not be `out`
//!    (ONNX's `out = floor(in·scale)`). All in `float64`:
//!    - `half_pixel`: `r(x + 0.5) - 0.5`;
//!    - `half_pixel_symmetric`: `half_pixel` shifted by
//!      `in/2·(1 - out/L)`, which keeps the centre of the image at the
//!      centre of the output (the same as `half_pixel` without scales);
//!    - `pytorch_half_pixel`: `half_pixel`, or 0 when `L` is at most 1;
//!    - `align_corners`: `x·(in - 1) / (L - 1)`, or 0 when `L` is at most 1;
//!    - `asymmetric`: `r(x)`;
//!    - `tf_half_pixel_for_nn`: `r(x + 0.5)`;
//!    - `tf_crop_and_resize`: with the axis's `roi` start `a` and end `b`
//!      (`roi` is `[a_h, a_w, b_h, b_w]`, fractions of `in - 1`, the
//!      attribute or the third operand), `a·(in - 1) + x·(b - a)·(in - 1)
//!      / (L - 1)`, or `(a + b)/2·(in - 1)` when `L` is at most 1; a pixel
//!      whose source coordinate lies outside `[0, in - 1]` on either axis
//!      is `extrapolation_value`.
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
//! 3. `antialias` (linear and cubic; ONNX's antialiased resize) widens the
//!    filter by `1 / s` where `s = min(scale, 1)` (`scale` the axis's
//!    scale, or `out / in` without scales): the pixel at distance `d`
//!    from the source coordinate weighs `k(d·s)`, `k` the triangle
//!    `max(0, 1 - |d|)` or the cubic kernel of item 2, and the weights
//!    are normalized to sum to 1 (after `cubic_exclude`, which then also
//!    applies to `linear`). The taps are the pixels `f + i` for `f =
//!    ceil(c) - 1` (`c` the source coordinate) and `i` in `1 - B ..= B`,
//!    `B = ceil(in / out)` for linear and twice that for cubic: the whole
//!    support of the widened filter whenever `out ≤ in·scale`, which holds
//!    for ONNX's sizes and scales.
//! 4. Layouts other than NCHW are reported as unsupported.

use super::alloc;
use super::args::{checked_numel, shape_arg, tensor_arg, tensor_value, view};
use super::dispatch::{with_num, Scalar, Wide};
use super::{Kernel, KernelAttrs};
use crate::executable::KernelAttr;
use crate::value::Value;

/// The resize kernel.
pub const KERNELS: &[(&str, Kernel)] = &[("relax.image.resize2d", resize2d)];

/// How source coordinates are computed (module docs, item 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoordinateMode {
    /// `r(x + 0.5) - 0.5`.
    HalfPixel,
    /// `half_pixel` shifted by `in/2·(1 - out/L)`.
    HalfPixelSymmetric,
    /// `half_pixel`, or 0 for a length of at most 1.
    PytorchHalfPixel,
    /// `x·(in - 1) / (L - 1)`, or 0 for a length of at most 1.
    AlignCorners,
    /// `r(x)`.
    Asymmetric,
    /// `r(x + 0.5)`.
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
    /// `scales` (empty: map by the size ratio).
    pub scales: Vec<f64>,
    /// `antialias`.
    pub antialias: bool,
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
    /// `scales` as `[scale_h, scale_w]`, or None to map by the size ratio.
    pub scales: Option<[f64; 2]>,
    /// `antialias` (linear and cubic only).
    pub antialias: bool,
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
            "half_pixel_symmetric" => CoordinateMode::HalfPixelSymmetric,
            "pytorch_half_pixel" => CoordinateMode::PytorchHalfPixel,
            "align_corners" => CoordinateMode::AlignCorners,
            "asymmetric" => CoordinateMode::Asymmetric,
            "tf_half_pixel_for_nn" => CoordinateMode::TfHalfPixelForNn,
            "tf_crop_and_resize" => CoordinateMode::TfCropAndResize,
            m => {
                return Err(format!(
                    "coordinate_transformation_mode {m} is not one TVM or ONNX knows"
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
        let scales = match a.scales.as_slice() {
            [] => None,
            &[h, w] => Some(check_scales([h, w])?),
            s => return Err(format!("scales must have 2 values, found {}", s.len())),
        };
        if a.antialias && method == Method::NearestNeighbor {
            return Err("antialias applies to linear and cubic, not nearest_neighbor".into());
        }
        Ok(ResizeMode {
            method,
            coordinates,
            rounding,
            cubic_alpha: a.cubic_alpha,
            cubic_exclude: a.cubic_exclude != 0,
            extrapolation_value: a.extrapolation_value,
            roi,
            scales,
            antialias: a.antialias,
        })
    }

    /// The source coordinate of output position `x` along `axis` (0 for
    /// height, 1 for width) of `input` extent resized to `output`
    /// (module docs, item 1).
    pub fn source(&self, x: f64, input: f64, output: f64, axis: usize) -> f64 {
        let scale = self.scales.map(|s| s[axis]);
        let length = scale.map_or(output, |s| input * s);
        let r = |v: f64| match scale {
            Some(s) => v / s,
            None => v * (input / output),
        };
        match self.coordinates {
            CoordinateMode::HalfPixel => r(x + 0.5) - 0.5,
            CoordinateMode::HalfPixelSymmetric => {
                input / 2.0 * (1.0 - output / length) + r(x + 0.5) - 0.5
            }
            CoordinateMode::PytorchHalfPixel if length > 1.0 => r(x + 0.5) - 0.5,
            CoordinateMode::PytorchHalfPixel => 0.0,
            CoordinateMode::AlignCorners if length > 1.0 => x * (input - 1.0) / (length - 1.0),
            CoordinateMode::AlignCorners => 0.0,
            CoordinateMode::Asymmetric => r(x),
            CoordinateMode::TfHalfPixelForNn => r(x + 0.5),
            CoordinateMode::TfCropAndResize => {
                let (a, b) = (self.roi[axis], self.roi[axis + 2]);
                if length > 1.0 {
                    a * (input - 1.0) + x * (b - a) * (input - 1.0) / (length - 1.0)
                } else {
                    0.5 * (a + b) * (input - 1.0)
                }
            }
        }
    }

    /// The antialiasing filter's `s = min(scale, 1)` along `axis` of
    /// `input` extent resized to `output` (module docs, item 3).
    pub fn antialias_scale(&self, input: f64, output: f64, axis: usize) -> f64 {
        self.scales.map_or(output / input, |s| s[axis]).min(1.0)
    }

    /// The antialiased taps' `B` (module docs, item 3) for `input`
    /// extent resized to a non-zero `output`.
    pub fn antialias_reach(&self, input: usize, output: usize) -> usize {
        let b = input.div_ceil(output.max(1)).max(1);
        if self.method == Method::Cubic {
            2 * b
        } else {
            b
        }
    }

    /// The weight of a pixel at distance `d` from the source coordinate
    /// under the (unwidened) filter of the method (linear or cubic).
    pub fn filter(&self, d: f64) -> f64 {
        let d = d.abs();
        let a = self.cubic_alpha;
        match self.method {
            Method::Cubic if d <= 1.0 => ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0,
            Method::Cubic if d < 2.0 => ((a * d - 5.0 * a) * d + 8.0 * a) * d - 4.0 * a,
            Method::Cubic => 0.0,
            _ => (1.0 - d).max(0.0),
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
    /// along an axis, for source coordinate `s` in an extent of `input`;
    /// `aa` is the antialiasing `(s, B)` of the axis when `antialias` is set.
    pub fn taps(&self, s: f64, input: usize, aa: Option<(f64, usize)>) -> Vec<(usize, f64)> {
        let last = input.saturating_sub(1) as f64;
        let clamp = |v: f64| v.clamp(0.0, last) as usize;
        if let Some((scale, reach)) = aa.filter(|_| self.antialias) {
            let f = s.ceil() - 1.0;
            let t = s - f;
            let reach = reach as f64;
            let mut taps: Vec<(f64, f64)> = (0..2 * reach as usize)
                .map(|k| {
                    let i = k as f64 + 1.0 - reach;
                    (f + i, self.filter((i - t) * scale))
                })
                .collect();
            if self.cubic_exclude {
                for (p, w) in taps.iter_mut() {
                    if *p < 0.0 || *p > last {
                        *w = 0.0;
                    }
                }
            }
            let sum: f64 = taps.iter().map(|&(_, w)| w).sum();
            let sum = if sum == 0.0 { 1.0 } else { sum };
            return taps.into_iter().map(|(p, w)| (clamp(p), w / sum)).collect();
        }
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

/// Scales checked to be finite and positive.
pub fn check_scales(s: [f64; 2]) -> Result<[f64; 2], String> {
    if s.iter().all(|v| v.is_finite() && *v > 0.0) {
        Ok(s)
    } else {
        Err(format!("scales must be finite and positive, found {s:?}"))
    }
}

/// The floats of a list attribute (absent: empty).
fn float_list(attrs: &KernelAttrs, name: &str) -> Result<Vec<f64>, String> {
    match attrs.get(name) {
        None | Some(KernelAttr::None) => Ok(vec![]),
        Some(KernelAttr::Array(items)) => items
            .iter()
            .map(|v| match v {
                KernelAttr::Float(f) => Ok(*f),
                KernelAttr::Int(i) => Ok(*i as f64),
                other => Err(format!(
                    "attribute `{name}` must hold floats, found {other:?}"
                )),
            })
            .collect(),
        other => Err(format!(
            "attribute `{name}` must be a list, found {other:?}"
        )),
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
    let roi = float_list(attrs, "roi")?;
    let scales = float_list(attrs, "scales")?;
    let antialias = match attrs.get("antialias") {
        None | Some(KernelAttr::None) => false,
        Some(KernelAttr::Bool(b)) => *b,
        Some(KernelAttr::Int(i)) => *i != 0,
        Some(other) => {
            return Err(format!(
                "attribute `antialias` must be a bool, found {other:?}"
            ))
        }
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
        scales,
        antialias,
    })
}

/// The values of the optional `roi` (4) or `scales` (2) operand `i`.
fn operand(args: &[Value], i: usize, name: &str, len: usize) -> Result<Option<Vec<f64>>, String> {
    if args.len() <= i {
        return Ok(None);
    }
    let t = tensor_arg(args, i, name)?;
    if !t.dtype().is_float() || t.shape() != [len as i64] {
        return Err(format!(
            "{name} must be a 1-d float tensor of {len} values, found {} of shape {:?}",
            t.dtype(),
            t.shape()
        ));
    }
    Ok(Some(t.to_f64_vec()))
}

/// `relax.image.resize2d(data, size[, roi[, scales]], …)` (module docs).
fn resize2d(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    if !(2..=4).contains(&args.len()) {
        return Err(format!("expected 2 to 4 arguments, found {}", args.len()));
    }
    let data = tensor_arg(args, 0, "data")?;
    let size = shape_arg(args, 1, "size")?;
    let mut mode = mode_of(attrs)?;
    if let Some(r) = operand(args, 2, "roi", 4)? {
        if r.iter().any(|v| !v.is_finite()) {
            return Err(format!("roi must be finite, found {r:?}"));
        }
        mode.roi = [r[0], r[1], r[2], r[3]];
    }
    if let Some(s) = operand(args, 3, "scales", 2)? {
        if mode.scales.is_some() {
            return Err("scales are given both as an attribute and as an operand".into());
        }
        mode.scales = Some(check_scales([s[0], s[1]])?);
    }
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
                let aa = (
                    mode.antialias_scale(input as f64, out as f64, axis),
                    mode.antialias_reach(input, out),
                );
                (!mode.extrapolates(s, input)).then(|| mode.taps(s, input, Some(aa)))
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
        assert!(resize(two_by_two(), &[3, 3], "linear", "half_pixel_sym", "round").is_err());
        let attrs = |extra: (&'static str, KernelAttr)| {
            vec![("method", KernelAttr::Str("linear".into())), extra]
        };
        let scales =
            |v: Vec<f64>| KernelAttr::Array(v.into_iter().map(KernelAttr::Float).collect());
        for (extra, message) in [
            (("scales", scales(vec![0.5])), "scales must have 2 values"),
            (("scales", scales(vec![0.5, 0.0])), "finite and positive"),
        ] {
            let r = run(
                "relax.image.resize2d",
                &[two_by_two(), Value::shape(&[1, 1])],
                &attrs(extra),
            );
            assert!(r.unwrap_err().contains(message));
        }
        let r = run(
            "relax.image.resize2d",
            &[two_by_two(), Value::shape(&[1, 1])],
            &[
                ("method", KernelAttr::Str("nearest_neighbor".into())),
                ("antialias", KernelAttr::Bool(true)),
            ],
        );
        assert!(r
            .unwrap_err()
            .contains("antialias applies to linear and cubic"));
        // Scales both as an attribute and as an operand; a roi operand of
        // the wrong length.
        let roi = tv(&[4], vec![0.0f32, 0.0, 1.0, 1.0]);
        let r = run(
            "relax.image.resize2d",
            &[
                two_by_two(),
                Value::shape(&[1, 1]),
                roi,
                tv(&[2], vec![0.5f32, 0.5]),
            ],
            &attrs(("scales", scales(vec![0.5, 0.5]))),
        );
        assert!(r
            .unwrap_err()
            .contains("both as an attribute and as an operand"));
        let r = run(
            "relax.image.resize2d",
            &[
                two_by_two(),
                Value::shape(&[1, 1]),
                tv(&[3], vec![0.0f32; 3]),
            ],
            &attrs(("method", KernelAttr::Str("linear".into()))),
        );
        assert!(r
            .unwrap_err()
            .contains("roi must be a 1-d float tensor of 4 values"));
        assert!(resize(two_by_two(), &[3, 3, 3], "linear", "half_pixel", "round").is_err());
    }

    /// `[a, b]` as a `scales` (or `roi`) attribute.
    fn floats(v: &[f64]) -> KernelAttr {
        KernelAttr::Array(v.iter().map(|&f| KernelAttr::Float(f)).collect())
    }

    /// 0.6 as ONNX's float32 scales hold it.
    const SIX_TENTHS: f64 = 0.6000000238418579;

    fn with_scales(
        x: Value,
        size: &[i64],
        method: &str,
        coords: &str,
        scales: [f64; 2],
        antialias: bool,
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
                (
                    "rounding_method",
                    KernelAttr::Str("round_prefer_floor".into()),
                ),
                ("scales", floats(&scales)),
                ("antialias", KernelAttr::Bool(antialias)),
            ],
        )
    }

    fn two_by_four() -> Value {
        tv(&[1, 1, 2, 4], (1..=8).map(|v| v as f32).collect())
    }

    /// ONNX's `downsample_scales_{linear,nearest}`: scale 0.6 maps by
    /// `1 / 0.6`, not by the size ratio (which would give 2.5 and 4.5).
    #[test]
    fn scales_map_by_the_scale() {
        let s = [SIX_TENTHS; 2];
        close(
            with_scales(two_by_four(), &[1, 2], "linear", "half_pixel", s, false),
            &[1, 1, 1, 2],
            &[2.6666665, 4.3333330],
        );
        close(
            with_scales(
                two_by_four(),
                &[1, 2],
                "nearest_neighbor",
                "half_pixel",
                s,
                false,
            ),
            &[1, 1, 1, 2],
            &[1.0, 3.0],
        );
        // The same scales as the fourth operand (with a roi operand).
        close(
            run(
                "relax.image.resize2d",
                &[
                    two_by_four(),
                    Value::shape(&[1, 2]),
                    tv(&[4], vec![0.0f32, 0.0, 1.0, 1.0]),
                    tv(&[2], vec![0.6f32, 0.6]),
                ],
                &[("method", KernelAttr::Str("linear".into()))],
            ),
            &[1, 1, 1, 2],
            &[2.6666665, 4.3333330],
        );
    }

    /// ONNX's `{down,up}sample_scales_linear_half_pixel_symmetric`.
    #[test]
    fn half_pixel_symmetric_keeps_the_centre() {
        close(
            with_scales(
                tv(&[1, 1, 1, 4], vec![1.0f32, 2.0, 3.0, 4.0]),
                &[1, 2],
                "linear",
                "half_pixel_symmetric",
                [1.0, SIX_TENTHS],
                false,
            ),
            &[1, 1, 1, 2],
            &[1.6666667, 3.3333333],
        );
        close(
            with_scales(
                two_by_two(),
                &[4, 5],
                "linear",
                "half_pixel_symmetric",
                [2.299999952316284, 2.940000057220459],
                false,
            ),
            &[1, 1, 4, 5],
            &[
                1.0, 1.1598639, 1.5, 1.8401361, 2.0, 1.5652174, 1.7250813, 2.0652175, 2.4053535,
                2.5652175, 2.4347825, 2.5946465, 2.9347825, 3.2749186, 3.4347825, 3.0, 3.1598639,
                3.5, 3.8401361, 4.0,
            ],
        );
        // Without scales it is half_pixel.
        let a = resize(
            two_by_two(),
            &[3, 5],
            "linear",
            "half_pixel_symmetric",
            "round",
        );
        let b = resize(two_by_two(), &[3, 5], "linear", "half_pixel", "round");
        assert_eq!(a.unwrap(), b.unwrap());
    }

    /// ONNX's `downsample_{scales,sizes}_{linear,cubic}_antialias`.
    #[test]
    fn antialias_widens_the_filter() {
        let s = [SIX_TENTHS; 2];
        close(
            with_scales(four_by_four(), &[2, 2], "linear", "half_pixel", s, true),
            &[1, 1, 2, 2],
            &[2.875, 4.5, 9.375, 11.0],
        );
        close(
            with_scales(four_by_four(), &[2, 2], "cubic", "half_pixel", s, true),
            &[1, 1, 2, 2],
            &[2.5180721, 4.2858863, 9.5893288, 11.3571424],
        );
        // Sizes only: the filter scale is out / in = 3/4.
        close(
            run(
                "relax.image.resize2d",
                &[four_by_four(), Value::shape(&[3, 3])],
                &[
                    ("method", KernelAttr::Str("linear".into())),
                    ("antialias", KernelAttr::Bool(true)),
                ],
            ),
            &[1, 1, 3, 3],
            &[
                2.3636363, 3.5909090, 4.8181820, 7.2727275, 8.5, 9.7272730, 12.1818180, 13.4090910,
                14.6363640,
            ],
        );
        // Upsampling: antialias changes nothing.
        let up = |aa| with_scales(two_by_two(), &[4, 4], "cubic", "half_pixel", [2.0, 2.0], aa);
        close(up(true), &[1, 1, 4, 4], &{
            let Value::Tensor(t) = up(false).unwrap() else {
                panic!()
            };
            t.to_vec::<f32>()
                .unwrap()
                .into_iter()
                .map(f64::from)
                .collect::<Vec<_>>()
        });
    }

    /// ONNX's `tf_crop_and_resize` with the roi as the third operand.
    #[test]
    fn roi_operand_crops() {
        close(
            run(
                "relax.image.resize2d",
                &[
                    four_by_four(),
                    Value::shape(&[3, 3]),
                    tv(&[4], vec![0.4f32, 0.6, 0.6, 0.8]),
                ],
                &[
                    ("method", KernelAttr::Str("linear".into())),
                    (
                        "coordinate_transformation_mode",
                        KernelAttr::Str("tf_crop_and_resize".into()),
                    ),
                ],
            ),
            &[1, 1, 3, 3],
            &[7.6, 7.9, 8.2, 8.8, 9.1, 9.4, 10.0, 10.3, 10.6],
        );
    }
}
