//! What the data-movement, linear-algebra and convolution kernels share:
//! argument access, axis normalization, dtype dispatch and the arithmetic of
//! numeric element types.
//!
//! 1. Argument accessors check kind and position and return an error message
//!    naming the argument, so kernels never index `args` blindly.
//! 2. `dispatch_dtype!` turns a run-time [`DataType`] into a Rust element type:
//!    it expands to an `if`/`else` chain with one arm per listed type, each arm
//!    binding the caller's type name with a local `type` alias, so one generic
//!    function serves every dtype.
//! 3. [`Num`] is the arithmetic of the numeric element types: floats use IEEE
//!    arithmetic, integers wrap on overflow as TVM's generated code does (a
//!    debug-build overflow panic would otherwise be reachable from user data).
//!    Casting goes through [`Wide`], which holds every value of every element
//!    type exactly, so `int64 → float32` rounds once and `uint64` survives.

use crate::data_type::DataType;
use crate::tensor::{Element, Tensor};
use crate::value::Value;
use ndarray::{Array2, ArrayD, ArrayView2, ArrayViewD};

/// Evaluates `$body` with `$T` bound to the element type of `$dt`, trying the
/// listed types in order; `$fallback` when none matches.
macro_rules! dispatch_dtype {
    ($dt:expr, [$($ty:ty),* $(,)?], $T:ident => $body:expr, $fallback:expr) => {{
        let dt: $crate::data_type::DataType = $dt;
        $(
            if dt == <$ty as $crate::tensor::Element>::DTYPE {
                type $T = $ty;
                $body
            } else
        )* {
            $fallback
        }
    }};
}
pub(crate) use dispatch_dtype;

/// `dispatch_dtype!` over every dtype a tensor can hold with a Rust element
/// type: floats, signed and unsigned integers, and `bool`.
macro_rules! any_dtype {
    ($dt:expr, $T:ident => $body:expr) => {{
        let dt: $crate::data_type::DataType = $dt;
        $crate::kernels::support::dispatch_dtype!(
            dt,
            [f32, f64, i8, i16, i32, i64, u8, u16, u32, u64, bool],
            $T => $body,
            Err($crate::kernels::support::unsupported(dt))
        )
    }};
}
pub(crate) use any_dtype;

/// `dispatch_dtype!` over the numeric dtypes (the [`Num`] types).
macro_rules! numeric_dtype {
    ($dt:expr, $T:ident => $body:expr) => {{
        let dt: $crate::data_type::DataType = $dt;
        $crate::kernels::support::dispatch_dtype!(
            dt,
            [f32, f64, i8, i16, i32, i64, u8, u16, u32, u64],
            $T => $body,
            Err($crate::kernels::support::unsupported(dt))
        )
    }};
}
pub(crate) use numeric_dtype;

/// The message for a dtype a kernel does not handle.
pub(crate) fn unsupported(dt: DataType) -> String {
    format!("dtype {dt} is not supported by this kernel")
}

/// Checks that exactly `n` arguments were given.
pub(crate) fn check_arity(args: &[Value], n: usize) -> Result<(), String> {
    if args.len() != n {
        return Err(format!("expected {n} argument(s), found {}", args.len()));
    }
    Ok(())
}

/// Argument `i` (called `name` in messages) as a tensor.
pub(crate) fn tensor_arg<'a>(
    args: &'a [Value],
    i: usize,
    name: &str,
) -> Result<&'a Tensor, String> {
    match args.get(i) {
        Some(Value::Tensor(t)) => Ok(t),
        Some(other) => Err(format!(
            "{name} must be a tensor, found {}",
            other.describe()
        )),
        None => Err(format!("argument {name} is missing")),
    }
}

/// Argument `i` (called `name` in messages) as a shape.
pub(crate) fn shape_arg<'a>(args: &'a [Value], i: usize, name: &str) -> Result<&'a [i64], String> {
    match args.get(i) {
        Some(Value::Shape(s)) => Ok(s),
        Some(other) => Err(format!(
            "{name} must be a shape, found {}",
            other.describe()
        )),
        None => Err(format!("argument {name} is missing")),
    }
}

/// `axis` (negative counts from the end) as an index below `ndim`.
pub(crate) fn norm_axis(axis: i64, ndim: usize) -> Result<usize, String> {
    let n = ndim as i64;
    let a = if axis < 0 { axis + n } else { axis };
    if a < 0 || a >= n {
        return Err(format!(
            "axis {axis} is out of range for a tensor of rank {ndim}"
        ));
    }
    Ok(a as usize)
}

/// Each axis normalized; an axis named twice is an error.
pub(crate) fn norm_axes(axes: &[i64], ndim: usize) -> Result<Vec<usize>, String> {
    let mut out = Vec::with_capacity(axes.len());
    for &a in axes {
        let n = norm_axis(a, ndim)?;
        if out.contains(&n) {
            return Err(format!("axis {n} appears more than once"));
        }
        out.push(n);
    }
    Ok(out)
}

/// A shape as ndarray dims (the dims of a built tensor are never negative).
pub(crate) fn udims(shape: &[i64]) -> Vec<usize> {
    shape.iter().map(|&d| d.max(0) as usize).collect()
}

/// The element count of `shape`, or an error when a dim is negative or the
/// count overflows (a target shape comes from user data).
pub(crate) fn checked_numel(shape: &[i64]) -> Result<usize, String> {
    shape.iter().try_fold(1usize, |acc, &d| {
        if d < 0 {
            return Err(format!(
                "shape {} has a negative dimension",
                crate::tensor::fmt_shape(shape)
            ));
        }
        acc.checked_mul(d as usize).ok_or_else(|| {
            format!(
                "shape {} has too many elements",
                crate::tensor::fmt_shape(shape)
            )
        })
    })
}

/// `t`'s bytes under a new shape with the same element count.
pub(crate) fn reshaped(t: &Tensor, shape: &[i64]) -> Result<Tensor, String> {
    Tensor::from_bytes(t.dtype(), shape, t.as_bytes()).map_err(|e| e.to_string())
}

/// A typed view of a tensor whose dtype the caller has dispatched on.
pub(crate) fn view<T: Element>(t: &Tensor) -> Result<ArrayViewD<'_, T>, String> {
    t.view::<T>().map_err(|e| e.to_string())
}

/// An ndarray (any layout) as a tensor value.
pub(crate) fn value_of<T, S, D>(a: &ndarray::ArrayBase<S, D>) -> Value
where
    T: Element,
    S: ndarray::Data<Elem = T>,
    D: ndarray::Dimension,
{
    Value::Tensor(Tensor::from_ndarray(a))
}

/// A value of any element type, widened without loss: floats as `f64`,
/// integers and bools as `i128`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Wide {
    /// A float.
    F(f64),
    /// An integer (a bool is 0 or 1).
    I(i128),
}

/// The arithmetic of a numeric element type.
pub(crate) trait Num: Element + PartialOrd {
    /// Zero, the start of a sum.
    const ZERO: Self;
    /// The smallest value (`-inf` for floats), the start of a max.
    const LOWEST: Self;
    /// `acc + a * b`; integers wrap.
    fn mul_add(acc: Self, a: Self, b: Self) -> Self;
    /// The larger of `a` and `b`; a NaN wins, as in NumPy.
    fn max2(a: Self, b: Self) -> Self;
    /// The matrix product `a · b` of two 2-D views with matching inner dims.
    fn matmul2(a: ArrayView2<'_, Self>, b: ArrayView2<'_, Self>) -> Array2<Self>;
    /// The value widened.
    fn to_wide(self) -> Wide;
    /// A wide value converted with Rust's `as` semantics (floats to integers
    /// saturate, NaN becomes 0; integers to narrower integers wrap).
    fn from_wide(w: Wide) -> Self;
}

macro_rules! num_float {
    ($($t:ty),*) => {$(
        impl Num for $t {
            const ZERO: Self = 0.0;
            const LOWEST: Self = <$t>::NEG_INFINITY;
            fn mul_add(acc: Self, a: Self, b: Self) -> Self {
                acc + a * b
            }
            fn max2(a: Self, b: Self) -> Self {
                if a.is_nan() || b.is_nan() {
                    <$t>::NAN
                } else if b > a {
                    b
                } else {
                    a
                }
            }
            fn matmul2(a: ArrayView2<'_, Self>, b: ArrayView2<'_, Self>) -> Array2<Self> {
                // ndarray's `dot` is general_mat_mul (matrixmultiply's GEMM).
                a.dot(&b)
            }
            fn to_wide(self) -> Wide {
                Wide::F(self as f64)
            }
            fn from_wide(w: Wide) -> Self {
                match w {
                    Wide::F(f) => f as $t,
                    Wide::I(i) => i as $t,
                }
            }
        }
    )*};
}
num_float!(f32, f64);

macro_rules! num_int {
    ($($t:ty),*) => {$(
        impl Num for $t {
            const ZERO: Self = 0;
            const LOWEST: Self = <$t>::MIN;
            fn mul_add(acc: Self, a: Self, b: Self) -> Self {
                acc.wrapping_add(a.wrapping_mul(b))
            }
            fn max2(a: Self, b: Self) -> Self {
                a.max(b)
            }
            fn matmul2(a: ArrayView2<'_, Self>, b: ArrayView2<'_, Self>) -> Array2<Self> {
                // ndarray's integer `dot` would panic on overflow in debug
                // builds; a plain loop with wrapping arithmetic does not.
                let (n, k) = a.dim();
                let m = b.dim().1;
                Array2::from_shape_fn((n, m), |(i, j)| {
                    (0..k).fold(0, |acc, l| Self::mul_add(acc, a[(i, l)], b[(l, j)]))
                })
            }
            fn to_wide(self) -> Wide {
                Wide::I(self as i128)
            }
            fn from_wide(w: Wide) -> Self {
                match w {
                    Wide::F(f) => f as $t,
                    Wide::I(i) => i as $t,
                }
            }
        }
    )*};
}
num_int!(i8, i16, i32, i64, u8, u16, u32, u64);

/// The elements of a numeric tensor converted to `T` (Rust `as` semantics).
pub(crate) fn cast_to<T: Num>(t: &Tensor) -> Result<ArrayD<T>, String> {
    numeric_dtype!(t.dtype(), S => {
        Ok(view::<S>(t)?.mapv(|v| T::from_wide(v.to_wide())))
    })
}

/// The elements of an integer (or bool) tensor as `i128`, for index tensors.
pub(crate) fn int_values(t: &Tensor) -> Result<Vec<i128>, String> {
    dispatch_dtype!(
        t.dtype(),
        [i8, i16, i32, i64, u8, u16, u32, u64],
        S => Ok(view::<S>(t)?.iter().map(|&v| v as i128).collect()),
        if t.dtype().is_bool() {
            Ok(view::<bool>(t)?.iter().map(|&v| v as i128).collect())
        } else {
            Err(format!("indices must have an integer dtype, found {}", t.dtype()))
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_normalize_and_reject() {
        assert_eq!(norm_axis(-1, 3), Ok(2));
        assert_eq!(norm_axis(0, 1), Ok(0));
        assert_eq!(
            norm_axis(3, 3).unwrap_err(),
            "axis 3 is out of range for a tensor of rank 3"
        );
        assert!(norm_axis(-4, 3).is_err());
        assert!(norm_axis(0, 0).is_err());
        assert_eq!(norm_axes(&[0, -1], 2), Ok(vec![0, 1]));
        assert_eq!(
            norm_axes(&[1, -1], 2).unwrap_err(),
            "axis 1 appears more than once"
        );
    }

    #[test]
    fn casts_are_exact_where_the_type_allows() {
        let t = Tensor::from_vec(&[3], vec![u64::MAX, 1, 0]).unwrap();
        let as_i64 = cast_to::<i64>(&t).unwrap();
        assert_eq!(as_i64.as_slice().unwrap(), &[-1, 1, 0]);
        let f = Tensor::from_vec(&[3], vec![-1.5f32, 300.0, f32::NAN]).unwrap();
        assert_eq!(cast_to::<u8>(&f).unwrap().as_slice().unwrap(), &[0, 255, 0]);
        assert_eq!(
            cast_to::<f64>(&f).unwrap().as_slice().unwrap()[..2],
            [-1.5, 300.0]
        );
        let b = Tensor::from_vec(&[2], vec![true, false]).unwrap();
        assert!(cast_to::<f32>(&b).is_err());
        assert_eq!(int_values(&b).unwrap(), vec![1, 0]);
    }

    #[test]
    fn integer_arithmetic_wraps_and_float_max_keeps_nan() {
        assert_eq!(i8::mul_add(100, 10, 10), 100i8.wrapping_add(100));
        assert!(f32::max2(1.0, f32::NAN).is_nan());
        assert!(f32::max2(f32::NAN, 1.0).is_nan());
        assert_eq!(f64::max2(-1.0, 2.0), 2.0);
        assert_eq!(u8::max2(3, 7), 7);
    }

    #[test]
    fn every_kernel_is_registered_once() {
        let ours = [
            super::super::linalg::KERNELS,
            super::super::manipulate::KERNELS,
            super::super::index::KERNELS,
            super::super::conv::KERNELS,
        ];
        for (name, _) in ours.iter().flat_map(|t| t.iter()) {
            assert!(
                super::super::lookup(name).is_some(),
                "{name} is not in TABLES"
            );
            assert_eq!(
                super::super::ops().filter(|n| n == name).count(),
                1,
                "{name}"
            );
        }
        assert_eq!(ours.iter().map(|t| t.len()).sum::<usize>(), 14);
    }

    #[test]
    fn numel_rejects_negative_and_overflow() {
        assert_eq!(checked_numel(&[2, 3]), Ok(6));
        assert_eq!(checked_numel(&[]), Ok(1));
        assert!(checked_numel(&[2, -1]).is_err());
        assert!(checked_numel(&[i64::MAX, i64::MAX]).is_err());
    }
}
