//! Shared machinery of the reference kernels: dtype dispatch, scalar traits,
//! argument checks and broadcasting.
//!
//! 1. A kernel sees a [`Tensor`] whose dtype is known only at run time. The
//!    `with_*!` macros turn that dtype into a Rust type `T` and run a generic
//!    body once per supported type: [`with_float!`] (`f32`, `f64`),
//!    [`with_int!`] (the eight integer types), [`with_num!`] (both) and
//!    [`with_any!`] (both and `bool`). A dtype outside the list runs the
//!    fallback expression, which is normally `Err(unsupported(op, dtype))`.
//! 2. The traits [`Scalar`] (every element type), [`Num`] (arithmetic) and
//!    [`Float`] (transcendental math through `f64`) give the generic bodies
//!    their operations. Integer arithmetic wraps on overflow, as two's
//!    complement machine code does; integer division by zero is an error.
//! 3. Conversions between element types go through [`Wide`], a value that
//!    holds any element exactly (`i128` for integers, `f64` for floats), with
//!    the C cast rules applied on the way in (see [`Scalar::from_wide`]).
//! 4. The check helpers return the error messages kernels give back: they
//!    name the op by its registry name and print shapes in the DSL's syntax.

use crate::data_type::DataType;
use crate::tensor::{fmt_shape, Element, Tensor};
use crate::value::Value;
use ndarray::{ArrayViewD, IxDyn};

/// Runs `$body` with the type alias `$T` set to the Rust type of `$dtype`,
/// trying each type of the bracketed list in turn; runs `$fallback` when
/// none matches.
macro_rules! dispatch {
    ($dtype:expr, [$($ty:ty),+ $(,)?], $T:ident => $body:expr, $fallback:expr) => {{
        let dtype: $crate::data_type::DataType = $dtype;
        $(
            if dtype == <$ty as $crate::tensor::Element>::DTYPE {
                #[allow(dead_code)]
                type $T = $ty;
                $body
            } else
        )+
        {
            $fallback
        }
    }};
}
pub(crate) use dispatch;

/// [`dispatch!`] over the float types `f32` and `f64`.
macro_rules! with_float {
    ($dtype:expr, $T:ident => $body:expr, $fallback:expr) => {
        $crate::kernels::dispatch::dispatch!($dtype, [f32, f64], $T => $body, $fallback)
    };
}
pub(crate) use with_float;

/// [`dispatch!`] over the signed and unsigned integer types (not `bool`).
// Offered to every kernel file (index dtypes are integers); not every build
// uses it.
#[allow(unused_macros)]
macro_rules! with_int {
    ($dtype:expr, $T:ident => $body:expr, $fallback:expr) => {
        $crate::kernels::dispatch::dispatch!(
            $dtype, [i8, i16, i32, i64, u8, u16, u32, u64], $T => $body, $fallback
        )
    };
}
#[allow(unused_imports)]
pub(crate) use with_int;

/// [`dispatch!`] over the float and integer types (not `bool`).
macro_rules! with_num {
    ($dtype:expr, $T:ident => $body:expr, $fallback:expr) => {
        $crate::kernels::dispatch::dispatch!(
            $dtype, [f32, f64, i8, i16, i32, i64, u8, u16, u32, u64], $T => $body, $fallback
        )
    };
}
pub(crate) use with_num;

/// [`dispatch!`] over every element type, `bool` included.
macro_rules! with_any {
    ($dtype:expr, $T:ident => $body:expr, $fallback:expr) => {
        $crate::kernels::dispatch::dispatch!(
            $dtype, [f32, f64, i8, i16, i32, i64, u8, u16, u32, u64, bool], $T => $body, $fallback
        )
    };
}
pub(crate) use with_any;

/// One element of any type, held exactly: integers (`u64` included) fit an
/// `i128`, floats an `f64`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Wide {
    /// An integer or a bool (0 or 1).
    Int(i128),
    /// A float.
    Float(f64),
}

/// An element type a kernel can read and write.
pub(crate) trait Scalar: Element + PartialOrd {
    /// Zero (`false`).
    const ZERO: Self;
    /// One (`true`).
    const ONE: Self;
    /// This value, exactly.
    fn to_wide(self) -> Wide;
    /// `w` converted as a C cast would: integers to a narrower integer keep
    /// the low bits; floats to integers truncate toward zero (saturating
    /// at the type's bounds and giving 0 for NaN, where C is undefined);
    /// integers to floats round to nearest; anything to `bool` is `!= 0`
    /// (so NaN is `true`, as in C).
    fn from_wide(w: Wide) -> Self;
    /// Whether this is a float NaN.
    fn is_nan(self) -> bool {
        false
    }
}

/// An element type with arithmetic (ints and floats, not `bool`).
pub(crate) trait Num: Scalar {
    /// `self + o` (wrapping for integers).
    fn add(self, o: Self) -> Self;
    /// `self - o` (wrapping for integers).
    fn sub(self, o: Self) -> Self;
    /// `self * o` (wrapping for integers).
    fn mul(self, o: Self) -> Self;
    /// `self / o`: IEEE for floats; truncating C division for integers,
    /// an error when `o` is zero.
    fn div(self, o: Self) -> Result<Self, String>;
    /// `self` to the power `o`: `powf` for floats; repeated (wrapping)
    /// multiplication for integers, an error for a negative exponent.
    fn pow(self, o: Self) -> Result<Self, String>;
    /// `-self` (wrapping: `-x mod 2^n` for unsigned types, as in C).
    fn neg(self) -> Self;
    /// `|self|` (wrapping at the minimum of a signed type).
    fn abs(self) -> Self;
    /// The larger of the two; NaN if either is NaN (as `numpy.maximum`).
    fn maximum(self, o: Self) -> Self {
        if self.is_nan() {
            self
        } else if o.is_nan() || o > self {
            o
        } else {
            self
        }
    }
    /// The smaller of the two; NaN if either is NaN (as `numpy.minimum`).
    fn minimum(self, o: Self) -> Self {
        if self.is_nan() {
            self
        } else if o.is_nan() || o < self {
            o
        } else {
            self
        }
    }
    /// The sum of `xs` (floats accumulate in `f64` and round once).
    fn sum(xs: &[Self]) -> Self;
    /// The product of `xs` (floats accumulate in `f64` and round once).
    fn prod(xs: &[Self]) -> Self;
    /// The mean of `xs`: NaN for an empty float slice (as numpy); for
    /// integers the wrapping sum divided by the count with truncation, as
    /// TVM's legalization (`sum / n`) computes it, and an error when empty.
    fn mean(xs: &[Self]) -> Result<Self, String>;
}

/// A float type; transcendental math is done in `f64` and rounded once.
pub(crate) trait Float: Num {
    /// Widened to `f64` (exact).
    fn to_f64(self) -> f64;
    /// Rounded from `f64`.
    fn from_f64(v: f64) -> Self;
}

/// `b` to the power `e` by square-and-multiply with `T`'s (wrapping) product.
fn int_pow<T: Num>(mut b: T, mut e: u128) -> T {
    let mut acc = T::ONE;
    while e > 0 {
        if e & 1 == 1 {
            acc = acc.mul(b);
        }
        b = b.mul(b);
        e >>= 1;
    }
    acc
}

macro_rules! impl_int {
    ($($t:ty),*) => {$(
        impl Scalar for $t {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            fn to_wide(self) -> Wide {
                Wide::Int(self as i128)
            }
            fn from_wide(w: Wide) -> Self {
                match w {
                    Wide::Int(i) => i as $t,
                    Wide::Float(f) => f as $t,
                }
            }
        }
        impl Num for $t {
            fn add(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            fn sub(self, o: Self) -> Self {
                self.wrapping_sub(o)
            }
            fn mul(self, o: Self) -> Self {
                self.wrapping_mul(o)
            }
            fn div(self, o: Self) -> Result<Self, String> {
                if o == 0 {
                    return Err("integer division by zero".into());
                }
                // `MIN / -1` overflows; it wraps to `MIN` as the hardware
                // result modulo 2^n would.
                Ok(self.wrapping_div(o))
            }
            fn pow(self, o: Self) -> Result<Self, String> {
                let e = o as i128;
                if e < 0 {
                    return Err(format!(
                        "integer power with a negative exponent ({self} ** {o})"
                    ));
                }
                Ok(int_pow(self, e as u128))
            }
            fn neg(self) -> Self {
                self.wrapping_neg()
            }
            fn abs(self) -> Self {
                if self < Self::ZERO {
                    self.wrapping_neg()
                } else {
                    self
                }
            }
            fn sum(xs: &[Self]) -> Self {
                xs.iter().fold(0, |a, &x| a.wrapping_add(x))
            }
            fn prod(xs: &[Self]) -> Self {
                xs.iter().fold(1, |a, &x| a.wrapping_mul(x))
            }
            fn mean(xs: &[Self]) -> Result<Self, String> {
                if xs.is_empty() {
                    return Err("integer mean over an empty axis".into());
                }
                let s = Self::sum(xs) as i128;
                Ok((s / xs.len() as i128) as $t)
            }
        }
    )*};
}
impl_int!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! impl_float {
    ($($t:ty),*) => {$(
        impl Scalar for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            fn to_wide(self) -> Wide {
                Wide::Float(self as f64)
            }
            fn from_wide(w: Wide) -> Self {
                match w {
                    Wide::Int(i) => i as $t,
                    Wide::Float(f) => f as $t,
                }
            }
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
        }
        impl Num for $t {
            fn add(self, o: Self) -> Self {
                self + o
            }
            fn sub(self, o: Self) -> Self {
                self - o
            }
            fn mul(self, o: Self) -> Self {
                self * o
            }
            fn div(self, o: Self) -> Result<Self, String> {
                Ok(self / o)
            }
            fn pow(self, o: Self) -> Result<Self, String> {
                Ok(self.powf(o))
            }
            fn neg(self) -> Self {
                -self
            }
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            fn sum(xs: &[Self]) -> Self {
                xs.iter().map(|&x| x as f64).sum::<f64>() as $t
            }
            fn prod(xs: &[Self]) -> Self {
                xs.iter().map(|&x| x as f64).product::<f64>() as $t
            }
            fn mean(xs: &[Self]) -> Result<Self, String> {
                let s: f64 = xs.iter().map(|&x| x as f64).sum();
                Ok((s / xs.len() as f64) as $t)
            }
        }
        impl Float for $t {
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn from_f64(v: f64) -> Self {
                v as $t
            }
        }
    )*};
}
impl_float!(f32, f64);

impl Scalar for bool {
    const ZERO: Self = false;
    const ONE: Self = true;
    fn to_wide(self) -> Wide {
        Wide::Int(self as i128)
    }
    fn from_wide(w: Wide) -> Self {
        match w {
            Wide::Int(i) => i != 0,
            Wide::Float(f) => f != 0.0,
        }
    }
}

/// The message for a dtype the kernel of `op` does not handle.
pub(crate) fn unsupported(op: &str, dtype: DataType) -> String {
    format!("{dtype} is not supported by the reference kernel of {op}")
}

/// Checks that `op` got exactly `n` arguments.
pub(crate) fn check_arity(op: &str, args: &[Value], n: usize) -> Result<(), String> {
    if args.len() == n {
        Ok(())
    } else {
        Err(format!(
            "{op} takes {n} argument{}, but {} were given",
            if n == 1 { "" } else { "s" },
            args.len()
        ))
    }
}

/// Argument `i` of `op`, named `name`, as a tensor.
pub(crate) fn tensor_arg<'a>(
    op: &str,
    args: &'a [Value],
    i: usize,
    name: &str,
) -> Result<&'a Tensor, String> {
    match args.get(i) {
        Some(Value::Tensor(t)) => Ok(t),
        Some(other) => Err(format!(
            "{op}: {name} must be a tensor, found {}",
            other.describe()
        )),
        None => Err(format!("{op}: missing argument {name}")),
    }
}

/// Checks that the named tensors have the same dtype and returns it.
pub(crate) fn same_dtype(op: &str, tensors: &[(&str, &Tensor)]) -> Result<DataType, String> {
    let (first_name, first) = tensors
        .first()
        .ok_or_else(|| format!("{op}: no tensors to compare"))?;
    for (name, t) in &tensors[1..] {
        if t.dtype() != first.dtype() {
            return Err(format!(
                "{op}: dtypes differ: {first_name} is {}, {name} is {}",
                first.dtype(),
                t.dtype()
            ));
        }
    }
    Ok(first.dtype())
}

/// A tensor's shape as `usize`s (tensor dims are never negative).
pub(crate) fn dims(t: &Tensor) -> Vec<usize> {
    t.shape().iter().map(|&d| d as usize).collect()
}

/// The NumPy broadcast of the named shapes: aligned at the right, each dim
/// equal or 1. An error names every shape when they do not broadcast.
pub(crate) fn broadcast_shapes(
    op: &str,
    shapes: &[(&str, &[usize])],
) -> Result<Vec<usize>, String> {
    let ndim = shapes.iter().map(|(_, s)| s.len()).max().unwrap_or(0);
    let mut out = vec![1usize; ndim];
    for (_, s) in shapes {
        let offset = ndim - s.len();
        for (k, &d) in s.iter().enumerate() {
            let o = &mut out[offset + k];
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                let list = shapes
                    .iter()
                    .map(|(n, s)| {
                        let s: Vec<i64> = s.iter().map(|&d| d as i64).collect();
                        format!("{n} is {}", fmt_shape(&s))
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err(format!("{op}: shapes do not broadcast: {list}"));
            }
        }
    }
    Ok(out)
}

/// `t` viewed as an ndarray of `T` (the dispatch macros make the dtype match).
pub(crate) fn view<'a, T: Element>(op: &str, t: &'a Tensor) -> Result<ArrayViewD<'a, T>, String> {
    t.view::<T>().map_err(|e| format!("{op}: {e}"))
}

/// The elements of `t` (of type `T`) broadcast to `shape` (checked by
/// [`broadcast_shapes`]), in row-major order.
pub(crate) fn broadcast_elems<T: Element>(
    op: &str,
    t: &Tensor,
    shape: &[usize],
) -> Result<Vec<T>, String> {
    let v = view::<T>(op, t)?;
    let b = v.broadcast(IxDyn(shape)).ok_or_else(|| {
        format!(
            "{op}: cannot broadcast shape {} to {}",
            fmt_shape(t.shape()),
            fmt_shape(&shape.iter().map(|&d| d as i64).collect::<Vec<_>>())
        )
    })?;
    Ok(b.iter().copied().collect())
}

/// A tensor value of `shape` from row-major `data`.
pub(crate) fn tensor_value<T: Element>(
    op: &str,
    shape: &[usize],
    data: Vec<T>,
) -> Result<Value, String> {
    let shape: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    Tensor::from_vec(&shape, data)
        .map(Value::Tensor)
        .map_err(|e| format!("{op}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispatch_picks_the_matching_type() {
        fn size(dt: DataType) -> Result<usize, String> {
            with_any!(dt, T => Ok(std::mem::size_of::<T>()), Err(unsupported("x", dt)))
        }
        assert_eq!(size(DataType::f64()), Ok(8));
        assert_eq!(size(DataType::uint(16)), Ok(2));
        assert_eq!(size(DataType::bool()), Ok(1));
        assert_eq!(
            size(DataType::float(16)),
            Err("float16 is not supported by the reference kernel of x".into())
        );
        let ints: Result<(), String> = with_int!(DataType::f32(), T => Ok(()), Err("no".into()));
        assert!(ints.is_err());
    }

    #[test]
    fn casts_follow_c() {
        assert_eq!(i32::from_wide((-2.7f64).to_wide()), -2);
        assert_eq!(u8::from_wide(300i64.to_wide()), 44);
        assert_eq!(i8::from_wide(f64::NAN.to_wide()), 0);
        assert_eq!(i8::from_wide(1e9f64.to_wide()), 127);
        assert!(bool::from_wide(f64::NAN.to_wide()));
        assert!(!bool::from_wide(0i64.to_wide()));
        assert_eq!(f32::from_wide(true.to_wide()), 1.0);
        assert_eq!(u64::from_wide(u64::MAX.to_wide()), u64::MAX);
    }

    #[test]
    fn integer_arithmetic_wraps_and_divides_toward_zero() {
        assert_eq!(Num::add(127i8, 1), -128);
        assert_eq!(Num::div(-7i32, 2), Ok(-3));
        assert_eq!(Num::div(7i32, -2), Ok(-3));
        assert!(Num::div(1u8, 0).is_err());
        assert_eq!(Num::div(i32::MIN, -1), Ok(i32::MIN));
        assert_eq!(Num::pow(3i64, 4), Ok(81));
        assert_eq!(Num::pow(2u8, 9), Ok(0));
        assert!(Num::pow(2i32, -1).is_err());
        assert_eq!(Num::neg(1u8), 255);
        assert_eq!(Num::abs(i8::MIN), i8::MIN);
        assert!(Num::maximum(1.0f32, f32::NAN).is_nan());
        assert!(Num::minimum(f64::NAN, 1.0).is_nan());
        assert_eq!(Num::maximum(-3i16, 2), 2);
    }

    #[test]
    fn broadcasting_rules() {
        let s = broadcast_shapes("relax.add", &[("x1", &[2, 1, 3]), ("x2", &[4, 1])]).unwrap();
        assert_eq!(s, vec![2, 4, 3]);
        assert_eq!(
            broadcast_shapes("relax.add", &[("x1", &[0]), ("x2", &[1])]).unwrap(),
            vec![0]
        );
        assert_eq!(
            broadcast_shapes("relax.add", &[("x1", &[3, 4]), ("x2", &[3, 5])]).unwrap_err(),
            "relax.add: shapes do not broadcast: x1 is (3, 4), x2 is (3, 5)"
        );
    }
}

/// Helpers shared by the kernel tests.
#[cfg(test)]
pub(crate) mod testing {
    use crate::executable::KernelAttr;
    use crate::kernels::KernelAttrs;
    use crate::tensor::{Element, Tensor};
    use crate::value::Value;

    /// A tensor value.
    pub(crate) fn tv<T: Element>(shape: &[i64], data: Vec<T>) -> Value {
        Value::Tensor(Tensor::from_vec(shape, data).unwrap())
    }

    /// An integer-list attribute.
    pub(crate) fn ints(v: &[i64]) -> KernelAttr {
        KernelAttr::Array(v.iter().map(|&i| KernelAttr::Int(i)).collect())
    }

    /// Runs the registered kernel of `op`.
    pub(crate) fn run(
        op: &str,
        args: &[Value],
        attrs: &[(&str, KernelAttr)],
    ) -> Result<Value, String> {
        let k = crate::kernels::lookup(op).unwrap_or_else(|| panic!("no kernel for {op}"));
        let attrs = KernelAttrs(
            attrs
                .iter()
                .map(|(n, v)| (n.to_string(), v.clone()))
                .collect(),
        );
        k(args, &attrs)
    }

    /// Asserts that `v` is a tensor of `shape` holding exactly `want`.
    #[track_caller]
    pub(crate) fn assert_tensor<T: Element>(v: &Value, shape: &[i64], want: &[T]) {
        let t = v.as_tensor().expect("a tensor");
        assert_eq!(t.shape(), shape, "shape");
        assert_eq!(t.to_vec::<T>().expect("dtype"), want);
    }

    /// Asserts that `v` is a float tensor of `shape` within relative
    /// tolerance `rel` of `want` (NaN matches NaN).
    #[track_caller]
    pub(crate) fn assert_close(v: &Value, shape: &[i64], want: &[f64], rel: f64) {
        let t = v.as_tensor().expect("a tensor");
        assert!(t.dtype().is_float(), "dtype {}", t.dtype());
        assert_eq!(t.shape(), shape, "shape");
        let got = t.to_f64_vec();
        assert_eq!(got.len(), want.len());
        for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
            let ok = (g.is_nan() && w.is_nan())
                || g == w
                || (g - w).abs() <= rel * w.abs().max(f64::MIN_POSITIVE);
            assert!(ok, "element {i}: got {g}, want {w} (got {got:?})");
        }
    }

    /// [`assert_close`] with the `f32` tolerance, `1e-6` relative.
    #[track_caller]
    pub(crate) fn assert_close_f32(v: &Value, shape: &[i64], want: &[f64]) {
        assert_eq!(v.as_tensor().unwrap().dtype(), crate::DataType::f32());
        assert_close(v, shape, want, 1e-6);
    }
}
