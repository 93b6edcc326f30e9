//! `nn.pad`: a tensor widened along each axis (TVM's `relax.op.nn.pad`).
//!
//! 1. `pad_width` holds `2·ndim` non-negative counts, interleaved as TVM
//!    reads them: `[before_0, after_0, before_1, after_1, …]`; output dim
//!    `i` is `d_i + before_i + after_i`.
//! 2. `pad_mode` says what the new positions hold, for an output position
//!    `j` of axis `i` at input offset `k = j - before_i`:
//!    - `constant`: `pad_value` (converted to the dtype as C converts);
//!    - `reflect`: the input mirrored about its edges, the edge itself not
//!      repeated (`k = -1` reads 1); a pad must be smaller than the dim;
//!    - `replicate`: the nearest edge element;
//!    - `circular`: the input repeated (`k mod d`); a pad may not exceed
//!      the dim.
//!
//!    A mode without a value to read (reflect, replicate or circular on an
//!    empty dim) and pads past the mode's limit are errors, never reads out
//!    of bounds.

use super::alloc;
use super::args::{check_arity, checked_numel, tensor_arg, tensor_value, view};
use super::dispatch::{with_any, Scalar, Wide};
use super::{Kernel, KernelAttrs};
use crate::tensor::fmt_shape;
use crate::value::Value;

/// The padding kernel.
pub const KERNELS: &[(&str, Kernel)] = &[("relax.nn.pad", pad)];

/// How the padded positions are filled (module docs, item 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PadMode {
    /// `pad_value`.
    Constant,
    /// The input mirrored about its edges, the edge not repeated.
    Reflect,
    /// The nearest edge element.
    Replicate,
    /// The input repeated.
    Circular,
}

impl PadMode {
    /// The mode named `s`.
    pub fn parse(s: &str) -> Result<PadMode, String> {
        Ok(match s {
            "constant" => PadMode::Constant,
            "reflect" => PadMode::Reflect,
            "replicate" | "edge" => PadMode::Replicate,
            "circular" => PadMode::Circular,
            _ => {
                return Err(format!(
                    "pad_mode must be constant, reflect, replicate or circular, found {s}"
                ))
            }
        })
    }

    /// Checks one axis's pads against its dim `d`.
    pub fn check(self, axis: usize, d: i64, before: i64, after: i64) -> Result<(), String> {
        let worst = before.max(after);
        let ok = match self {
            PadMode::Constant => true,
            PadMode::Reflect => worst == 0 || worst < d,
            PadMode::Replicate => worst == 0 || d > 0,
            PadMode::Circular => worst <= d,
        };
        if ok {
            return Ok(());
        }
        let limit = match self {
            PadMode::Reflect => "smaller than",
            PadMode::Replicate => "zero for an empty dim of",
            _ => "at most",
        };
        Err(format!(
            "{self:?} padding of axis {axis} must be {limit} its dim {d}, found {before} before and {after} after"
        ))
    }

    /// The input offset output offset `k` (before the input's start when
    /// negative) reads along a dim `d`, or `None` for the pad value.
    pub fn source(self, k: i64, d: i64) -> Option<i64> {
        if (0..d).contains(&k) {
            return Some(k);
        }
        match self {
            PadMode::Constant => None,
            PadMode::Reflect => Some(if k < 0 { -k } else { 2 * (d - 1) - k }),
            PadMode::Replicate => Some(k.clamp(0, d - 1)),
            PadMode::Circular => Some(k.rem_euclid(d)),
        }
    }
}

/// `relax.nn.pad(data, pad_width, pad_value, pad_mode)`.
fn pad(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 1)?;
    let x = tensor_arg(args, 0, "data")?;
    let widths = attrs.ints("pad_width")?;
    let ndim = x.ndim();
    if widths.len() != 2 * ndim {
        return Err(format!(
            "pad_width must have 2 values per axis ({}), found {}",
            2 * ndim,
            widths.len()
        ));
    }
    if let Some(bad) = widths
        .iter()
        .find(|&&w| !(0..=i32::MAX as i64).contains(&w))
    {
        return Err(format!(
            "pad_width values must be in 0..=2^31-1, found {bad}"
        ));
    }
    let mode = match attrs.get("pad_mode") {
        None => PadMode::Constant,
        Some(_) => PadMode::parse(attrs.str("pad_mode")?)?,
    };
    let value = match attrs.get("pad_value") {
        None => 0.0,
        Some(_) => attrs.float("pad_value")?,
    };
    let dims = x.shape();
    let mut out = Vec::with_capacity(ndim);
    for (i, &d) in dims.iter().enumerate() {
        let (b, a) = (widths[2 * i], widths[2 * i + 1]);
        mode.check(i, d, b, a)?;
        out.push(d + b + a);
    }
    let n = checked_numel(&out)?;
    // For each axis, the input index each output index reads.
    let sources: Vec<Vec<Option<usize>>> = (0..ndim)
        .map(|i| {
            (0..out[i])
                .map(|j| mode.source(j - widths[2 * i], dims[i]).map(|k| k as usize))
                .collect()
        })
        .collect();
    let udims: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
    let uout: Vec<usize> = out.iter().map(|&d| d as usize).collect();
    fn run<T: Scalar>(
        x: &crate::tensor::Tensor,
        sources: &[Vec<Option<usize>>],
        dims: &[usize],
        out: &[usize],
        n: usize,
        fill: T,
    ) -> Result<Value, String> {
        let v = view::<T>(x)?;
        let data = v
            .as_slice()
            .ok_or_else(|| "data is not contiguous".to_string())?;
        let mut strides = vec![1usize; dims.len()];
        for i in (0..dims.len().saturating_sub(1)).rev() {
            strides[i] = strides[i + 1] * dims[i + 1];
        }
        let mut result = alloc::vec(n)?;
        let mut idx = vec![0usize; out.len()];
        for _ in 0..n {
            let mut offset = Some(0usize);
            for (axis, &j) in idx.iter().enumerate() {
                offset = match (offset, sources[axis][j]) {
                    (Some(o), Some(k)) => Some(o + k * strides[axis]),
                    _ => None,
                };
            }
            result.push(offset.map_or(fill, |o| data[o]));
            for axis in (0..out.len()).rev() {
                idx[axis] += 1;
                if idx[axis] < out[axis] {
                    break;
                }
                idx[axis] = 0;
            }
        }
        tensor_value(out, result)
    }
    with_any!(x.dtype(), T => run::<T>(x, &sources, &udims, &uout, n, T::from_wide(Wide::Float(value))))
        .map_err(|e| format!("{e} (data {})", fmt_shape(dims)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::executable::KernelAttr;
    use crate::kernels::testing::{assert_ok, ints, run, tv};

    fn padded(mode: &str, widths: &[i64]) -> Result<Value, String> {
        let x = tv(&[2, 3], (0..6).map(|v| v as f32).collect());
        run(
            "relax.nn.pad",
            &[x],
            &[
                ("pad_width", ints(widths)),
                ("pad_value", KernelAttr::Float(5.0)),
                ("pad_mode", KernelAttr::Str(mode.into())),
            ],
        )
    }

    /// TVM 0.27's outputs for the same calls.
    #[test]
    fn every_mode_matches_tvm() {
        assert_ok(
            padded("constant", &[1, 2, 0, 0]),
            &[5, 3],
            vec![
                5.0f32, 5., 5., 0., 1., 2., 3., 4., 5., 5., 5., 5., 5., 5., 5.,
            ],
        );
        assert_ok(
            padded("reflect", &[1, 1, 2, 1]),
            &[4, 6],
            vec![
                5.0f32, 4., 3., 4., 5., 4., 2., 1., 0., 1., 2., 1., 5., 4., 3., 4., 5., 4., 2., 1.,
                0., 1., 2., 1.,
            ],
        );
        assert_ok(
            padded("replicate", &[1, 1, 2, 1]),
            &[4, 6],
            vec![
                0.0f32, 0., 0., 1., 2., 2., 0., 0., 0., 1., 2., 2., 3., 3., 3., 4., 5., 5., 3., 3.,
                3., 4., 5., 5.,
            ],
        );
        assert_ok(
            padded("circular", &[1, 1, 2, 1]),
            &[4, 6],
            vec![
                4.0f32, 5., 3., 4., 5., 3., 1., 2., 0., 1., 2., 0., 4., 5., 3., 4., 5., 3., 1., 2.,
                0., 1., 2., 0.,
            ],
        );
    }

    #[test]
    fn pads_past_a_modes_limit_are_errors() {
        // TVM 0.27 reads out of bounds for this reflect; here it is an error.
        let e = padded("reflect", &[1, 2, 0, 0]).unwrap_err();
        assert!(e.contains("must be smaller than its dim 2"), "{e}");
        assert!(padded("circular", &[0, 0, 4, 0]).is_err());
        assert!(padded("constant", &[1, 2])
            .unwrap_err()
            .contains("2 values per axis"));
        assert!(padded("wrap", &[0, 0, 0, 0])
            .unwrap_err()
            .contains("pad_mode"));
        assert!(padded("constant", &[-1, 0, 0, 0]).is_err());
        let empty = tv(&[0, 2], Vec::<i32>::new());
        let r = run(
            "relax.nn.pad",
            &[empty],
            &[
                ("pad_width", ints(&[1, 0, 0, 0])),
                ("pad_mode", KernelAttr::Str("replicate".into())),
            ],
        );
        assert!(r.is_err());
    }

    #[test]
    fn integers_and_bools_pad_too() {
        let x = tv(&[3], vec![1i64, 2, 3]);
        let r = run(
            "relax.nn.pad",
            &[x],
            &[
                ("pad_width", ints(&[2, 1])),
                ("pad_value", KernelAttr::Float(-7.0)),
            ],
        );
        assert_ok(r, &[6], vec![-7i64, -7, 1, 2, 3, -7]);
        let b = tv(&[1], vec![true]);
        let r = run("relax.nn.pad", &[b], &[("pad_width", ints(&[1, 1]))]);
        assert_ok(r, &[3], vec![false, true, false]);
    }
}
