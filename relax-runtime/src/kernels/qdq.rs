//! `quantize` and `dequantize` (see `relax_core::op::qdq`).
//!
//! 1. `quantize`: the quotient `data / scale` rounded to `data`'s type
//!    (`float32` or `float64`), then rounded half to even, plus the zero
//!    point, clamped to `out_dtype`'s range; a NaN quotient gives the zero
//!    point. The sum is taken in `f64`, exact for every zero point of 32
//!    bits or fewer.
//! 2. `dequantize`: `data - zero_point` exactly (in `i128`), converted to
//!    `out_dtype` and multiplied by `scale` there (one rounding each, as the
//!    compiled code computes it).
//!
//! The integer side (`out_dtype`, `data` of `dequantize`, `zero_point`)
//! has at most 32 bits.
//!
//! `scale` and `zero_point` are scalars or 1-d along `axis`; element `f`
//! of `data` uses the entry at its index along the axis.

use super::alloc;
use super::args::{check_arity, norm_axis, tensor_arg, udims};
use super::dispatch::{with_float, with_int, Scalar, Wide};
use super::KernelAttrs;
use crate::data_type::DataType;
use crate::tensor::Tensor;
use crate::value::Value;

/// The kernels of this group.
pub const KERNELS: &[(&str, super::Kernel)] = &[
    ("relax.quantize", quantize),
    ("relax.dequantize", dequantize),
];

/// The data, the scale and zero point per element (by the index along
/// `axis`), and the output dtype.
struct Params<'a> {
    data: &'a Tensor,
    scale: Vec<f64>,
    zero_point: Vec<f64>,
    /// Element `f` reads entry `(f / inner) % len` (0 for per-tensor).
    inner: usize,
    len: usize,
    out: DataType,
}

impl Params<'_> {
    fn at(&self, f: usize) -> (f64, f64) {
        let k = if self.len == 1 {
            0
        } else {
            (f / self.inner.max(1)) % self.len
        };
        let pick = |v: &[f64]| if v.len() == 1 { v[0] } else { v[k] };
        (pick(&self.scale), pick(&self.zero_point))
    }
}

fn params<'a>(args: &'a [Value], attrs: &KernelAttrs) -> Result<Params<'a>, String> {
    check_arity(args, 3)?;
    let data = tensor_arg(args, 0, "data")?;
    let scale = tensor_arg(args, 1, "scale")?;
    let zero_point = tensor_arg(args, 2, "zero_point")?;
    let out = attrs.dtype("out_dtype")?;
    let shape = udims(data.shape());
    let (mut inner, mut len) = (1, 1);
    for (name, p) in [("scale", scale), ("zero_point", zero_point)] {
        if p.ndim() > 1 {
            return Err(format!(
                "{name} must be a scalar or 1-d, found rank {}",
                p.ndim()
            ));
        }
        if p.ndim() == 1 {
            let axis = norm_axis(attrs.int("axis")?, data.ndim())?;
            if p.numel() != shape[axis] {
                return Err(format!(
                    "{name} has {} elements, but data has {} along axis {axis}",
                    p.numel(),
                    shape[axis]
                ));
            }
            inner = shape[axis + 1..].iter().product();
            len = shape[axis];
        }
    }
    if !scale.dtype().is_float() {
        return Err(format!(
            "scale must be a float tensor, found {}",
            scale.dtype()
        ));
    }
    let zdt = zero_point.dtype();
    if zdt.is_float() || zdt.is_bool() || zdt.bits() > 32 {
        return Err(format!(
            "zero_point must be an integer tensor of at most 32 bits, found {}",
            zero_point.dtype()
        ));
    }
    Ok(Params {
        data,
        scale: scale.to_f64_vec(),
        zero_point: zero_point.to_f64_vec(),
        inner,
        len,
        out,
    })
}

/// `relax.quantize(data, scale, zero_point, axis, out_dtype)`.
fn quantize(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    let p = params(args, attrs)?;
    let ddt = p.data.dtype();
    if !(ddt.is_float() && matches!(ddt.bits(), 32 | 64)) {
        return Err(format!("data must be float32 or float64, found {ddt}"));
    }
    if p.out.bits() > 32 {
        return Err(format!(
            "out_dtype must be an integer type of at most 32 bits, found {}",
            p.out
        ));
    }
    let x = p.data.to_f64_vec();
    let quotient = |a: f64, s: f64| {
        if ddt.bits() == 32 {
            (a as f32 / s as f32) as f64
        } else {
            a / s
        }
    };
    with_int!(p.out, D => {
        let (lo, hi) = bounds::<D>();
        let out = alloc::collect(
            x.len(),
            x.iter().enumerate().map(|(f, &a)| {
                let (s, z) = p.at(f);
                let q = quotient(a, s).round_ties_even() + z;
                let q = if q.is_nan() { z } else { q.clamp(lo, hi) };
                D::from_wide(Wide::Int(q as i128))
            }),
        )?;
        alloc::tensor(p.data.shape(), &out).map(Value::Tensor)
    }, Err(format!("out_dtype must be an integer type, found {}", p.out)))
}

/// The range of the integer type `D`, as floats (exact for 32 bits or
/// fewer).
fn bounds<D: Scalar>() -> (f64, f64) {
    let bits = std::mem::size_of::<D>() as u32 * 8;
    let signed = matches!(D::from_wide(Wide::Int(-1)).to_wide(), Wide::Int(v) if v < 0);
    if signed {
        (
            -(2f64.powi(bits as i32 - 1)),
            2f64.powi(bits as i32 - 1) - 1.0,
        )
    } else {
        (0.0, 2f64.powi(bits as i32) - 1.0)
    }
}

/// `relax.dequantize(data, scale, zero_point, axis, out_dtype)`.
fn dequantize(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    let p = params(args, attrs)?;
    let ddt = p.data.dtype();
    if ddt.is_float() || ddt.is_bool() || ddt.bits() > 32 {
        return Err(format!(
            "data must be an integer tensor of at most 32 bits, found {ddt}"
        ));
    }
    let x = p.data.to_f64_vec();
    with_float!(p.out, D => {
        let out = alloc::collect(
            x.len(),
            x.iter().enumerate().map(|(f, &a)| {
                let (s, z) = p.at(f);
                let diff = D::from_wide(Wide::Int(a as i128 - z as i128));
                let s = D::from_wide(Wide::Float(s));
                D::from_wide(Wide::Float(to_f64(diff) * to_f64(s)))
            }),
        )?;
        alloc::tensor(p.data.shape(), &out).map(Value::Tensor)
    }, Err(format!("out_dtype must be float32 or float64, found {}", p.out)))
}

fn to_f64<D: Scalar>(v: D) -> f64 {
    match v.to_wide() {
        Wide::Float(f) => f,
        Wide::Int(i) => i as f64,
    }
}

#[cfg(test)]
mod tests {
    use crate::executable::KernelAttr;
    use crate::kernels::testing::*;

    #[test]
    fn quantize_rounds_half_to_even_and_saturates() {
        let x = tv(
            &[2, 4],
            vec![0.5f32, 1.5, 2.5, -0.5, 300.0, -300.0, 3.0, f32::NAN],
        );
        let q = run(
            "relax.quantize",
            &[x.clone(), tv(&[], vec![1.0f32]), tv(&[], vec![0i32])],
            &[
                ("axis", KernelAttr::Int(-1)),
                ("out_dtype", KernelAttr::Str("int8".into())),
            ],
        )
        .unwrap();
        assert_tensor(&q, &[2, 4], &[0i8, 2, 2, 0, 127, -128, 3, 0]);
        // Per axis 0 (rows): scale 0.5 and zero point 10; scale 2 and zero
        // point 128, into uint8.
        let q = run(
            "relax.quantize",
            &[x, tv(&[2], vec![0.5f32, 2.0]), tv(&[2], vec![10u8, 128])],
            &[
                ("axis", KernelAttr::Int(0)),
                ("out_dtype", KernelAttr::Str("uint8".into())),
            ],
        )
        .unwrap();
        assert_tensor(&q, &[2, 4], &[11u8, 13, 15, 9, 255, 0, 130, 128]);
    }

    #[test]
    fn dequantize_subtracts_exactly_then_scales() {
        let x = tv(&[3], vec![i32::MIN, 0, i32::MAX]);
        let y = run(
            "relax.dequantize",
            &[x, tv(&[], vec![1.0f64]), tv(&[], vec![-1i32])],
            &[
                ("axis", KernelAttr::Int(-1)),
                ("out_dtype", KernelAttr::Str("float64".into())),
            ],
        )
        .unwrap();
        assert_tensor(&y, &[3], &[-2147483647.0f64, 1.0, 2147483648.0]);
        let x = tv(&[2, 2], vec![-128i8, 127, 3, 4]);
        let y = run(
            "relax.dequantize",
            &[x, tv(&[2], vec![0.5f32, 2.0]), tv(&[2], vec![0i8, 1])],
            &[
                ("axis", KernelAttr::Int(1)),
                ("out_dtype", KernelAttr::Str("float32".into())),
            ],
        )
        .unwrap();
        assert_tensor(&y, &[2, 2], &[-64.0f32, 252.0, 1.5, 6.0]);
    }

    #[test]
    fn qdq_rejects_bad_parameters() {
        let x = tv(&[2, 3], vec![0.0f32; 6]);
        let e = run(
            "relax.quantize",
            &[x.clone(), tv(&[2], vec![1.0f32, 1.0]), tv(&[], vec![0i8])],
            &[
                ("axis", KernelAttr::Int(-1)),
                ("out_dtype", KernelAttr::Str("int8".into())),
            ],
        )
        .unwrap_err();
        assert_eq!(e, "scale has 2 elements, but data has 3 along axis 1");
        let e = run(
            "relax.quantize",
            &[x, tv(&[], vec![1.0f32]), tv(&[], vec![0.0f32])],
            &[
                ("axis", KernelAttr::Int(-1)),
                ("out_dtype", KernelAttr::Str("int8".into())),
            ],
        )
        .unwrap_err();
        assert_eq!(
            e,
            "zero_point must be an integer tensor of at most 32 bits, found float32"
        );
    }
}
