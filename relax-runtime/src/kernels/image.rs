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
//!    - `tf_half_pixel_for_nn`: `(x + 0.5)·scale`.
//! 2. `nearest_neighbor` rounds the source coordinate by
//!    `rounding_method` (`round`: half away from zero; `round_prefer_floor`,
//!    `round_prefer_ceil`: halves down or up; `floor`; `ceil`) and clamps it
//!    into the image. `linear` weighs the two pixels around it along each
//!    axis by its fraction, indices clamped into the image (so a source
//!    coordinate outside repeats the edge), in `float64`, rounded once.
//! 3. `cubic`, `tf_crop_and_resize` and layouts other than NCHW are
//!    reported as unsupported.

use super::alloc;
use super::args::{check_arity, checked_numel, shape_arg, tensor_arg, tensor_value, view};
use super::dispatch::{with_num, Scalar, Wide};
use super::{Kernel, KernelAttrs};
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

/// A resize's method and coordinate rules, as read from its attributes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResizeMode {
    /// `nearest_neighbor` (else `linear`).
    pub nearest: bool,
    /// `coordinate_transformation_mode`.
    pub coordinates: CoordinateMode,
    /// `rounding_method` (nearest only).
    pub rounding: Rounding,
}

impl ResizeMode {
    /// The mode of the attribute strings, or what is not supported.
    pub fn parse(method: &str, coordinates: &str, rounding: &str) -> Result<ResizeMode, String> {
        let nearest = match method {
            "nearest_neighbor" => true,
            "linear" => false,
            "cubic" => {
                return Err(
                    "method cubic is not supported (nearest_neighbor and linear are)".into(),
                )
            }
            m => {
                return Err(format!(
                    "method must be nearest_neighbor, linear or cubic, found {m}"
                ))
            }
        };
        let coordinates = match coordinates {
            "half_pixel" => CoordinateMode::HalfPixel,
            "pytorch_half_pixel" => CoordinateMode::PytorchHalfPixel,
            "align_corners" => CoordinateMode::AlignCorners,
            "asymmetric" => CoordinateMode::Asymmetric,
            "tf_half_pixel_for_nn" => CoordinateMode::TfHalfPixelForNn,
            "tf_crop_and_resize" => {
                return Err(
                    "coordinate_transformation_mode tf_crop_and_resize is not supported".into(),
                )
            }
            m => {
                return Err(format!(
                    "coordinate_transformation_mode {m} is not one TVM knows"
                ))
            }
        };
        let rounding = match rounding {
            "round" | "" => Rounding::Round,
            "round_prefer_floor" => Rounding::RoundPreferFloor,
            "round_prefer_ceil" => Rounding::RoundPreferCeil,
            "floor" => Rounding::Floor,
            "ceil" => Rounding::Ceil,
            m => return Err(format!("rounding_method {m} is not one TVM knows")),
        };
        Ok(ResizeMode {
            nearest,
            coordinates,
            rounding,
        })
    }

    /// The source coordinate of output position `x` along an axis of
    /// `input` extent resized to `output`.
    pub fn source(&self, x: f64, input: f64, output: f64) -> f64 {
        let scale = input / output;
        match self.coordinates {
            CoordinateMode::HalfPixel => (x + 0.5) * scale - 0.5,
            CoordinateMode::PytorchHalfPixel if output > 1.0 => (x + 0.5) * scale - 0.5,
            CoordinateMode::PytorchHalfPixel => 0.0,
            CoordinateMode::AlignCorners if output > 1.0 => x * (input - 1.0) / (output - 1.0),
            CoordinateMode::AlignCorners => 0.0,
            CoordinateMode::Asymmetric => x * scale,
            CoordinateMode::TfHalfPixelForNn => (x + 0.5) * scale,
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
}

/// The mode of a call's attributes.
fn mode_of(attrs: &KernelAttrs) -> Result<ResizeMode, String> {
    let get = |name: &str, default: &'static str| -> Result<String, String> {
        match attrs.get(name) {
            None => Ok(default.to_string()),
            Some(_) => attrs.str(name).map(str::to_string),
        }
    };
    if attrs.get("layout").is_some() {
        let l = attrs.str("layout")?;
        if l != "NCHW" {
            return Err(format!("layout {l} is not supported (NCHW is)"));
        }
    }
    ResizeMode::parse(
        &get("method", "linear")?,
        &get("coordinate_transformation_mode", "half_pixel")?,
        &get("rounding_method", "round")?,
    )
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
    // Per output index, the two source indices and the second's weight
    // (nearest: one index, weight 0).
    let taps = |out: usize, input: usize| -> Vec<(usize, usize, f64)> {
        let last = input.saturating_sub(1) as f64;
        (0..out)
            .map(|o| {
                let s = mode.source(o as f64, input as f64, out as f64);
                if mode.nearest {
                    let i = mode.round(s).clamp(0.0, last) as usize;
                    (i, i, 0.0)
                } else {
                    let f = s.floor();
                    let frac = s - f;
                    let i0 = f.clamp(0.0, last) as usize;
                    let i1 = (f + 1.0).clamp(0.0, last) as usize;
                    (i0, i1, frac)
                }
            })
            .collect()
    };
    let (ys, xs) = (taps(oh, h), taps(ow, w));
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
            for &(y0, y1, fy) in &ys {
                for &(x0, x1, fx) in &xs {
                    let v = if mode.nearest {
                        at(p, y0, x0)
                    } else {
                        let top = at(p, y0, x0) * (1.0 - fx) + at(p, y0, x1) * fx;
                        let bottom = at(p, y1, x0) * (1.0 - fx) + at(p, y1, x1) * fx;
                        top * (1.0 - fy) + bottom * fy
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

    #[test]
    fn unsupported_modes_are_errors() {
        assert!(
            resize(two_by_two(), &[3, 3], "cubic", "half_pixel", "round")
                .unwrap_err()
                .contains("cubic")
        );
        assert!(resize(
            two_by_two(),
            &[3, 3],
            "linear",
            "tf_crop_and_resize",
            "round"
        )
        .is_err());
        assert!(resize(two_by_two(), &[3, 3, 3], "linear", "half_pixel", "round").is_err());
    }
}
