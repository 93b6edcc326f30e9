//! Dtype dispatch and the scalar element types of the reference kernels.
//!
//! The kernels' shared code is split in two by what it is about: this module
//! turns a run-time dtype into a Rust type and gives that type its
//! arithmetic; [`super::args`] checks the call's arguments (arity, kinds,
//! axes, shapes) and builds results. A kernel file imports from both.
//!
//! 1. A kernel sees a [`Tensor`] whose dtype is known only at run time. The
//!    `with_*!` macros turn that dtype into a Rust type `T` and run a generic
//!    body once per supported type: [`with_float!`] (`f32`, `f64`, and
//!    `half::f16`, `half::bf16` for `float16` and `bfloat16`), [`with_int!`]
//!    (the eight integer types), [`with_num!`] (both) and [`with_any!`]
//!    (both and `bool`). A dtype outside the list runs the fallback
//!    expression; without one it is `Err(unsupported(dtype))`.
//! 2. The traits [`Scalar`] (every element type), [`Num`] (arithmetic) and
//!    [`Float`] (transcendental math through `f64`) give the generic bodies
//!    their operations. Integer arithmetic wraps on overflow, as TVM's
//!    generated machine code does (a debug-build overflow panic would
//!    otherwise be reachable from user data); integer division by zero is an
//!    error.
//! 3. Conversions between element types go through [`Wide`], a value that
//!    holds any element exactly (`i128` for integers, `f64` for floats), so
//!    `int64 → float32` rounds once and `uint64` survives, with the C cast
//!    rules applied on the way in (see [`Scalar::from_wide`]). [`cast_to`]
//!    and [`int_values`] convert whole tensors this way.
//! 4. `float16` and `bfloat16` are storage types: each operation widens its
//!    operands to `f32` (exactly), computes there (transcendental math in
//!    `f64`, as for every float) and rounds the result once to the element
//!    type, as PyTorch's and onnxruntime's CPU kernels do. Rounding is to
//!    nearest, ties to even, from any width: a value wider than `f32` is
//!    first rounded to `f32` *to odd* ([`f32_round_odd`]), which makes the
//!    second rounding exact, so `float64 → float16` is correctly rounded.
//!    NaN stays NaN and overflow gives infinity.
//! 5. Kernels that accumulate (matmul, convolutions, sums, cumulative sums,
//!    pooling averages) sum in [`Num::Acc`]: the type itself, except `f32`
//!    for the half types, rounded once to the element type at the end.

use super::alloc;
use super::args::view;
use crate::data_type::DataType;
use crate::tensor::{Element, Tensor};
use ndarray::ArrayD;

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
    // Without a fallback, an unlisted dtype is reported as unsupported.
    ($dtype:expr, [$($ty:ty),+ $(,)?], $T:ident => $body:expr) => {{
        let dtype: $crate::data_type::DataType = $dtype;
        $crate::kernels::dispatch::dispatch!(
            dtype, [$($ty),+], $T => $body, Err($crate::kernels::dispatch::unsupported(dtype))
        )
    }};
}
pub(crate) use dispatch;

/// [`dispatch!`] over the float types `f32`, `f64`, `float16` and
/// `bfloat16`.
macro_rules! with_float {
    ($dtype:expr, $T:ident => $body:expr $(, $fallback:expr)?) => {
        $crate::kernels::dispatch::dispatch!(
            $dtype, [f32, f64, half::f16, half::bf16], $T => $body $(, $fallback)?
        )
    };
}
pub(crate) use with_float;

/// [`dispatch!`] over the signed and unsigned integer types (not `bool`).
macro_rules! with_int {
    ($dtype:expr, $T:ident => $body:expr $(, $fallback:expr)?) => {
        $crate::kernels::dispatch::dispatch!(
            $dtype, [i8, i16, i32, i64, u8, u16, u32, u64], $T => $body $(, $fallback)?
        )
    };
}
pub(crate) use with_int;

/// [`dispatch!`] over the float and integer types (not `bool`): the
/// [`Num`] types.
macro_rules! with_num {
    ($dtype:expr, $T:ident => $body:expr $(, $fallback:expr)?) => {
        $crate::kernels::dispatch::dispatch!(
            $dtype,
            [f32, f64, half::f16, half::bf16, i8, i16, i32, i64, u8, u16, u32, u64],
            $T => $body $(, $fallback)?
        )
    };
}
pub(crate) use with_num;

/// [`dispatch!`] over every element type, `bool` included: every dtype a
/// tensor can hold with a Rust element type.
macro_rules! with_any {
    ($dtype:expr, $T:ident => $body:expr $(, $fallback:expr)?) => {
        $crate::kernels::dispatch::dispatch!(
            $dtype,
            [f32, f64, half::f16, half::bf16, i8, i16, i32, i64, u8, u16, u32, u64, bool],
            $T => $body $(, $fallback)?
        )
    };
}
pub(crate) use with_any;

/// The message for a dtype a kernel does not handle.
pub(crate) fn unsupported(dtype: DataType) -> String {
    format!("dtype {dtype} is not supported by this kernel")
}

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
    /// Zero (`false`), the start of a sum.
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
    /// The type a sum of this type accumulates in: the type itself, except
    /// `f32` for `float16` and `bfloat16` (module docs, item 5).
    type Acc: Num;
    /// The smallest value (`-inf` for floats), the start of a max.
    const LOWEST: Self;
    /// This value in the accumulator type (exact).
    fn to_acc(self) -> Self::Acc;
    /// An accumulated value rounded to this type.
    fn from_acc(a: Self::Acc) -> Self;
    /// `self + o` (wrapping for integers).
    fn add(self, o: Self) -> Self;
    /// `self - o` (wrapping for integers).
    fn sub(self, o: Self) -> Self;
    /// `self * o` (wrapping for integers).
    fn mul(self, o: Self) -> Self;
    /// `acc + a * b` (wrapping for integers); for floats the product is
    /// rounded before the sum, as in `acc + a * b`, not fused.
    fn mul_add(acc: Self, a: Self, b: Self) -> Self {
        acc.add(a.mul(b))
    }
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
            type Acc = $t;
            const LOWEST: Self = <$t>::MIN;
            fn to_acc(self) -> Self {
                self
            }
            fn from_acc(a: Self) -> Self {
                a
            }
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
            type Acc = $t;
            const LOWEST: Self = <$t>::NEG_INFINITY;
            fn to_acc(self) -> Self {
                self
            }
            fn from_acc(a: Self) -> Self {
                a
            }
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

/// `v` rounded to `f32` *to odd*: exact values stay, inexact ones are
/// truncated toward zero and get their last mantissa bit set. Rounding that
/// to a type with at most 22 significand bits (`float16`: 11, `bfloat16`:
/// 8) to nearest gives the same result as rounding `v` directly, which a
/// plain `v as f32` would not (a tie created by the first rounding).
pub(crate) fn f32_round_odd(v: f64) -> f32 {
    let f = v as f32;
    if !v.is_finite() || f as f64 == v {
        return f;
    }
    let mut bits = f.to_bits();
    if (f as f64).abs() > v.abs() {
        // Rounded away from zero (possibly to infinity): one step back
        // toward zero, as the sign-magnitude encoding steps.
        bits -= 1;
    }
    f32::from_bits(bits | 1)
}

/// `i` rounded to `f32` to odd, as [`f32_round_odd`] (integers of the
/// tensor types are below 2^64, far inside `f32`'s range).
fn int_f32_round_odd(i: i128) -> f32 {
    let f = i as f32;
    if f as i128 == i {
        return f;
    }
    let mut bits = f.to_bits();
    if (f as i128).unsigned_abs() > i.unsigned_abs() {
        bits -= 1;
    }
    f32::from_bits(bits | 1)
}

macro_rules! impl_half {
    ($($t:ty),*) => {$(
        impl Scalar for $t {
            const ZERO: Self = <$t>::ZERO;
            const ONE: Self = <$t>::ONE;
            fn to_wide(self) -> Wide {
                Wide::Float(self.to_f64())
            }
            fn from_wide(w: Wide) -> Self {
                <$t>::from_f32(match w {
                    Wide::Int(i) => int_f32_round_odd(i),
                    Wide::Float(f) => f32_round_odd(f),
                })
            }
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
        }
        impl Num for $t {
            type Acc = f32;
            const LOWEST: Self = <$t>::NEG_INFINITY;
            fn to_acc(self) -> f32 {
                self.to_f32()
            }
            fn from_acc(a: f32) -> Self {
                <$t>::from_f32(a)
            }
            // A sum, difference, product or quotient of two 16-bit floats
            // rounded to `f32` and then to the element type is the correctly
            // rounded result (24 >= 2 * 11 + 2 significand bits).
            fn add(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() + o.to_f32())
            }
            fn sub(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() - o.to_f32())
            }
            fn mul(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() * o.to_f32())
            }
            fn div(self, o: Self) -> Result<Self, String> {
                Ok(<$t>::from_f32(self.to_f32() / o.to_f32()))
            }
            fn pow(self, o: Self) -> Result<Self, String> {
                Ok(Float::from_f64(self.to_f64().powf(o.to_f64())))
            }
            fn neg(self) -> Self {
                -self
            }
            fn abs(self) -> Self {
                <$t>::from_bits(self.to_bits() & 0x7fff)
            }
            fn sum(xs: &[Self]) -> Self {
                Float::from_f64(xs.iter().map(|&x| x.to_f64()).sum::<f64>())
            }
            fn prod(xs: &[Self]) -> Self {
                Float::from_f64(xs.iter().map(|&x| x.to_f64()).product::<f64>())
            }
            fn mean(xs: &[Self]) -> Result<Self, String> {
                let s: f64 = xs.iter().map(|&x| x.to_f64()).sum();
                Ok(Float::from_f64(s / xs.len() as f64))
            }
        }
        impl Float for $t {
            fn to_f64(self) -> f64 {
                <$t>::to_f64(self)
            }
            fn from_f64(v: f64) -> Self {
                <$t>::from_f32(f32_round_odd(v))
            }
        }
    )*};
}
impl_half!(half::f16, half::bf16);

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

/// The elements of a numeric tensor converted to `T` (C cast rules, see
/// [`Scalar::from_wide`]); a `bool` tensor is not numeric and is an error.
pub(crate) fn cast_to<T: Num>(t: &Tensor) -> Result<ArrayD<T>, String> {
    with_num!(t.dtype(), S => {
        let v = view::<S>(t)?;
        let data = alloc::collect(v.len(), v.iter().map(|&e| T::from_wide(e.to_wide())))?;
        ArrayD::from_shape_vec(v.raw_dim(), data).map_err(|e| e.to_string())
    })
}

/// The elements of an integer (or bool) tensor as `i128`, for index tensors.
pub(crate) fn int_values(t: &Tensor) -> Result<Vec<i128>, String> {
    with_int!(
        t.dtype(),
        S => alloc::collect(t.numel(), view::<S>(t)?.iter().map(|&v| v as i128)),
        if t.dtype().is_bool() {
            alloc::collect(t.numel(), view::<bool>(t)?.iter().map(|&v| v as i128))
        } else {
            Err(format!("indices must have an integer dtype, found {}", t.dtype()))
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispatch_picks_the_matching_type() {
        fn size(dt: DataType) -> Result<usize, String> {
            with_any!(dt, T => Ok(std::mem::size_of::<T>()))
        }
        assert_eq!(size(DataType::f64()), Ok(8));
        assert_eq!(size(DataType::uint(16)), Ok(2));
        assert_eq!(size(DataType::bool()), Ok(1));
        assert_eq!(size(DataType::f16()), Ok(2));
        assert_eq!(size(DataType::bf16()), Ok(2));
        assert_eq!(
            size(DataType::int(4)),
            Err("dtype int4 is not supported by this kernel".into())
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
    fn half_conversions_round_once_to_nearest_even() {
        use half::{bf16, f16};
        // Just above the midpoint of 1 and the next float16: `v as f32`
        // (and `half`'s own f64 conversion) lose the low bit and see a tie.
        let v = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(
            f16::from_wide(v.to_wide()),
            f16::from_f64(1.0 + 2f64.powi(-10))
        );
        assert_eq!(f16::from_wide((1.0 + 2f64.powi(-11)).to_wide()), f16::ONE);
        // The same for an integer above bfloat16's midpoint at 2^24.
        let i = (1i64 << 24) + (1 << 16) + 1;
        assert_eq!(
            bf16::from_wide(i.to_wide()).to_f64(),
            ((1i64 << 24) + (1 << 17)) as f64
        );
        assert_eq!(
            bf16::from_wide(((1i64 << 24) + (1 << 16)).to_wide()).to_f64(),
            16777216.0
        );
        assert_eq!(f16::from_wide(u64::MAX.to_wide()), f16::INFINITY);
        assert_eq!(bf16::from_wide(u64::MAX.to_wide()).to_f64(), 2f64.powi(64));
        // Overflow, infinities, NaN, signed zero, subnormals.
        assert_eq!(f16::from_wide(1e6f64.to_wide()), f16::INFINITY);
        assert_eq!(f16::from_wide((-1e300f64).to_wide()), f16::NEG_INFINITY);
        assert!(f16::from_wide(f64::NAN.to_wide()).is_nan());
        assert!(bf16::from_wide(f32::NAN.to_wide()).is_nan());
        assert_eq!(bf16::from_wide(f64::INFINITY.to_wide()), bf16::INFINITY);
        assert_eq!(f16::from_wide((-0.0f64).to_wide()).to_bits(), 0x8000);
        assert_eq!(f16::from_wide(2f64.powi(-24).to_wide()).to_bits(), 1);
        assert_eq!(f16::from_wide(2f64.powi(-26).to_wide()).to_bits(), 0);
        assert_eq!(
            f16::from_wide((1.5 * 2f64.powi(-25)).to_wide()).to_bits(),
            1
        );
        // float16 <-> bfloat16: 65504 rounds up to 2^16 in bfloat16, which
        // is beyond float16.
        let big = bf16::from_wide(f16::MAX.to_wide());
        assert_eq!(big.to_f64(), 65536.0);
        assert_eq!(f16::from_wide(big.to_wide()), f16::INFINITY);
        assert!(f16::from_wide(bf16::NAN.to_wide()).is_nan());
        // To integers and bool as C casts.
        assert_eq!(i8::from_wide(f16::from_f32(-2.75).to_wide()), -2);
        assert_eq!(u8::from_wide(bf16::from_f32(1e5).to_wide()), 255);
        assert_eq!(i32::from_wide(f16::NAN.to_wide()), 0);
        assert!(bool::from_wide(bf16::from_f32(0.5).to_wide()));
        assert_eq!(f16::from_wide(true.to_wide()), f16::ONE);
        // Rounding to odd: inexact values land on the odd float of the two
        // around them; exact ones stay.
        let r = f32_round_odd(0.1);
        assert_eq!(r.to_bits() & 1, 1);
        let (below, above) = (f32::from_bits(r.to_bits() - 1) as f64, r as f64);
        assert!(below < 0.1 && 0.1 < above);
        let r = f32_round_odd(0.3);
        assert_eq!(r.to_bits() & 1, 1);
        assert!((r as f64) < 0.3 && 0.3 < f32::from_bits(r.to_bits() + 1) as f64);
        assert_eq!(f32_round_odd(-0.3), -r);
        assert_eq!(f32_round_odd(0.5), 0.5);
        assert_eq!(f32_round_odd(1e300), f32::MAX);
    }

    #[test]
    fn half_arithmetic_rounds_each_result_and_accumulates_wide() {
        use half::{bf16, f16};
        let h = f16::from_f32;
        assert_eq!(Num::add(h(2048.0), h(1.0)), h(2048.0));
        assert_eq!(Num::add(h(2048.0), h(3.0)), h(2052.0));
        assert_eq!(Num::div(h(1.0), h(3.0)).unwrap(), h(1.0 / 3.0));
        assert_eq!(Num::div(h(1.0), h(0.0)).unwrap(), f16::INFINITY);
        assert_eq!(Num::abs(h(-0.0)).to_bits(), 0);
        assert_eq!(Num::neg(h(1.5)), h(-1.5));
        assert_eq!(Num::pow(h(2.0), h(-2.0)).unwrap(), h(0.25));
        assert!(Num::maximum(h(1.0), f16::NAN).is_nan());
        assert_eq!(<f16 as Num>::LOWEST, f16::NEG_INFINITY);
        // Sums round once: 4096 ones are 4096, where adding one at a time
        // in float16 would stop at 2048.
        assert_eq!(f16::sum(&vec![f16::ONE; 4096]), h(4096.0));
        assert_eq!(
            bf16::mean(&[bf16::ONE, bf16::ZERO]).unwrap(),
            bf16::from_f32(0.5)
        );
        assert!(f16::mean(&[]).unwrap().is_nan());
        assert_eq!(<bf16 as Float>::from_f64(std::f64::consts::PI), bf16::PI);
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
    fn integer_arithmetic_wraps_and_divides_toward_zero() {
        assert_eq!(Num::add(127i8, 1), -128);
        assert_eq!(i8::mul_add(100, 10, 10), 100i8.wrapping_add(100));
        assert_eq!(Num::div(-7i32, 2), Ok(-3));
        assert_eq!(Num::div(7i32, -2), Ok(-3));
        assert!(Num::div(1u8, 0).is_err());
        assert_eq!(Num::div(i32::MIN, -1), Ok(i32::MIN));
        assert_eq!(Num::pow(3i64, 4), Ok(81));
        assert_eq!(Num::pow(2u8, 9), Ok(0));
        assert!(Num::pow(2i32, -1).is_err());
        assert_eq!(Num::neg(1u8), 255);
        assert_eq!(Num::abs(i8::MIN), i8::MIN);
    }

    #[test]
    fn maximum_and_minimum_keep_nan() {
        assert!(Num::maximum(1.0f32, f32::NAN).is_nan());
        assert!(Num::maximum(f32::NAN, 1.0f32).is_nan());
        assert!(Num::minimum(f64::NAN, 1.0).is_nan());
        assert_eq!(Num::maximum(-1.0f64, 2.0), 2.0);
        assert_eq!(Num::maximum(-3i16, 2), 2);
        assert_eq!(Num::maximum(3u8, 7), 7);
        assert_eq!(<i8 as Num>::LOWEST, i8::MIN);
        assert_eq!(<f32 as Num>::LOWEST, f32::NEG_INFINITY);
    }
}
