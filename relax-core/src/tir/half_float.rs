//! `float16` and `bfloat16` in the loop-level IR: stored in 16 bits,
//! computed in `float32`.
//!
//! This is what TVM does on CPUs without native half arithmetic, and the
//! rule the interpreter ([`super::interp`]) and the LLVM back end share:
//!
//! 1. **Loads** widen the stored bits to `float32` exactly.
//! 2. **Arithmetic** on an expression of dtype `float16` or `bfloat16`
//!    (`+ - * /`, `min`/`max`, intrinsics such as `T.exp`, constants) runs in
//!    `float32` and its result is a `float32` value: an intermediate half
//!    expression is *not* rounded to half precision.
//! 3. **Rounding** to the half type happens exactly where a value leaves
//!    `float32`: a `BufferStore` into a half buffer (scratch buffers too),
//!    and a `Cast` from another dtype to a half type. Both round to nearest,
//!    ties to even; NaN stays a quiet NaN, overflow is infinity.
//!
//! So a legalized op rounds once, when it writes its output, as the
//! reference kernels do (they compute each op in `float32` and round its
//! result once); fused ops whose intermediate was inlined skip that
//! intermediate rounding, as TVM's `bfloat16` legalization does.
//!
//! A `float64` (or `int64`) source is rounded to `float32` *to odd* first
//! (truncated, the lowest bit set when inexact) and then to nearest even:
//! with 24 bits against the 11 of `float16` and the 8 of `bfloat16` this
//! equals rounding the source directly, never the double rounding of
//! `f64 as f32` followed by a second rounding.

use relax_runtime::DataType;

/// `x` rounded to `float32` to odd: toward zero, with the lowest mantissa
/// bit set when the result is inexact (the sticky bit a second rounding
/// needs). NaN and infinities pass through; a finite `x` beyond the
/// `float32` range becomes its largest finite value (odd), which rounds to
/// infinity in any half type.
pub fn f64_to_f32_round_odd(x: f64) -> f32 {
    let t = x as f32;
    let back = f64::from(t);
    if x.is_nan() || back == x {
        return t;
    }
    let mut bits = t.to_bits();
    if back.abs() > x.abs() {
        // Rounded away from zero: step the magnitude back by one ulp.
        bits -= 1;
    }
    f32::from_bits(bits | 1)
}

/// The bits of `x` rounded to the half type `dtype` (`float16` or
/// `bfloat16`), to nearest even. Other dtypes are a caller's bug: they get
/// the `float16` bits.
pub fn to_half_bits(x: f64, dtype: DataType) -> u16 {
    let f = f64_to_f32_round_odd(x);
    if dtype.is_bfloat() {
        half::bf16::from_f32(f).to_bits()
    } else {
        half::f16::from_f32(f).to_bits()
    }
}

/// The value of the half-type bits `bits` of `dtype`, exactly.
pub fn from_half_bits(bits: u16, dtype: DataType) -> f64 {
    if dtype.is_bfloat() {
        half::bf16::from_bits(bits).to_f64()
    } else {
        half::f16::from_bits(bits).to_f64()
    }
}

/// `x` rounded to the half type `dtype`, as an `f64`.
pub fn round_to_half(x: f64, dtype: DataType) -> f64 {
    from_half_bits(to_half_bits(x, dtype), dtype)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thirds_and_ties_round_to_nearest_even() {
        let (h, b) = (DataType::f16(), DataType::bf16());
        assert_eq!(to_half_bits(1.0 / 3.0, h), 0x3555);
        assert_eq!(to_half_bits(1.0 / 3.0, b), 0x3eab);
        assert_eq!(to_half_bits(-2.5, h), 0xc100);
        // 1 + 2^-11 is halfway between 1 and the next half: to even (1).
        assert_eq!(to_half_bits(1.0 + 2f64.powi(-11), h), 0x3c00);
        // Just above the tie by less than a float32 ulp: up. Rounding
        // through `as f32` would lose the excess and round down.
        assert_eq!(
            to_half_bits(1.0 + 2f64.powi(-11) + 2f64.powi(-40), h),
            0x3c01
        );
        assert_eq!(
            to_half_bits(1.0 + 2f64.powi(-8) + 2f64.powi(-40), b),
            0x3f81
        );
        assert_eq!(to_half_bits(1.0 + 2f64.powi(-8), b), 0x3f80);
    }

    #[test]
    fn specials_overflow_and_subnormals() {
        let (h, b) = (DataType::f16(), DataType::bf16());
        assert_eq!(to_half_bits(65504.0, h), 0x7bff);
        assert_eq!(to_half_bits(65520.0, h), 0x7c00);
        assert_eq!(to_half_bits(-1e300, h), 0xfc00);
        assert_eq!(to_half_bits(1e300, b), 0x7f80);
        assert_eq!(to_half_bits(f64::INFINITY, b), 0x7f80);
        assert_eq!(to_half_bits(-0.0, h), 0x8000);
        // The smallest subnormal half, and half of it (a tie: to zero).
        assert_eq!(to_half_bits(2f64.powi(-24), h), 0x0001);
        assert_eq!(to_half_bits(2f64.powi(-25), h), 0x0000);
        assert_eq!(to_half_bits(2f64.powi(-25) * 1.5, h), 0x0001);
        let nan = to_half_bits(f64::NAN, h);
        assert!(half::f16::from_bits(nan).is_nan() && nan & 0x0200 != 0);
        let nan = to_half_bits(f64::NAN, b);
        assert!(half::bf16::from_bits(nan).is_nan() && nan & 0x0040 != 0);
        assert_eq!(from_half_bits(0x3555, h), 0.333251953125);
        assert_eq!(round_to_half(1.0 / 3.0, b), 0.333984375);
    }

    #[test]
    fn round_to_odd_keeps_the_sticky_bit() {
        assert_eq!(f64_to_f32_round_odd(1.0), 1.0);
        let x = 1.0 + 2f64.powi(-30);
        assert_eq!(f64_to_f32_round_odd(x).to_bits(), 1f32.to_bits() | 1);
        let x = -(1.0 + 2f64.powi(-30));
        assert_eq!(f64_to_f32_round_odd(x).to_bits(), (-1f32).to_bits() | 1);
        // Rounded up by `as f32`, stepped back toward zero.
        let x = 1.0 + 2f64.powi(-23) - 2f64.powi(-40);
        assert_eq!(f64_to_f32_round_odd(x).to_bits(), 1f32.to_bits() | 1);
        assert_eq!(f64_to_f32_round_odd(1e300), f32::MAX);
        assert!(f64_to_f32_round_odd(f64::NAN).is_nan());
    }
}
