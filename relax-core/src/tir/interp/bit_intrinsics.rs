//! The interpreter's bit-level intrinsics on 32-bit words: `T.dpbf16ps`,
//! the `bfloat16` dot-product step, and `T.reinterpret`, a value's bits
//! read as another dtype of the same width.
//!
//! `dpbf16ps(acc, a, b)` is one lane of x86's `vdpbf16ps` (AVX512-BF16):
//! `a` and `b` are 32-bit words holding two `bfloat16` each (bits 0-15
//! the even element, 16-31 the odd one) and the result is
//!
//! ```text
//! s   = fma(odd(a),  odd(b),  acc)     then
//! out = fma(even(a), even(b), s)
//! ```
//!
//! each step an `float32` fused multiply-add rounded to nearest even, with
//! its inputs' subnormals read as zero (DAZ: the `bfloat16` halves and the
//! accumulator) and a subnormal result flushed to zero (FTZ), the sign
//! kept, whatever MXCSR says: Intel's pseudocode for the instruction
//! ("FP32 FMA with daz in, ftz out and RNE rounding"). The product of two
//! `bfloat16` is exact in `float32`, so each step rounds once.

use super::{Machine, Val};
use crate::ir::prim_expr::PrimExpr;
use relax_runtime::DataType;

/// `x`, or zero of its sign when it is subnormal (DAZ / FTZ).
fn flush(x: f32) -> f32 {
    if x.is_subnormal() {
        0f32.copysign(x)
    } else {
        x
    }
}

/// The `bfloat16` in the top (`odd`) or bottom half of `w`, as `float32`,
/// subnormals read as zero.
fn half(w: i32, odd: bool) -> f32 {
    let w = w as u32;
    flush(f32::from_bits(if odd { w & 0xffff_0000 } else { w << 16 }))
}

/// One lane of `vdpbf16ps` (see the module docs): `acc` plus the products
/// of the odd, then the even, `bfloat16` halves of `a` and `b`.
pub fn dpbf16ps(acc: f32, a: i32, b: i32) -> f32 {
    let s = flush(half(a, true).mul_add(half(b, true), flush(acc)));
    flush(half(a, false).mul_add(half(b, false), s))
}

/// Whether `T.reinterpret` from `from` to `to` is defined: one lane each,
/// the same width, 32 or 64 bits, floats and integers (the half types are
/// `float32` in registers, so their stored bits are not at hand).
pub fn reinterpretable(from: DataType, to: DataType) -> bool {
    let plain = |d: DataType| d.lanes() == 1 && !d.is_half() && !d.is_bool() && !d.is_handle();
    plain(from) && plain(to) && from.bits() == to.bits() && matches!(from.bits(), 32 | 64)
}

impl Machine {
    /// `T.dpbf16ps(acc, a, b)`: `float32` from a `float32` accumulator and
    /// two 32-bit integer words ([`dpbf16ps`]).
    pub(super) fn dpbf16ps(&self, e: &PrimExpr, args: &[PrimExpr]) -> Result<Val, String> {
        let word = |d: DataType| d.lanes() == 1 && (d.is_int() || d.is_uint()) && d.bits() == 32;
        if args.len() != 3
            || e.dtype() != DataType::f32()
            || args[0].dtype() != DataType::f32()
            || !word(args[1].dtype())
            || !word(args[2].dtype())
        {
            return Err(format!(
                "T.dpbf16ps takes a float32 accumulator and two 32-bit integer words and gives a float32, found `{e}`"
            ));
        }
        let acc = self.eval(&args[0])?.as_f64() as f32;
        let mut w = [0i32; 2];
        for (v, a) in w.iter_mut().zip(&args[1..]) {
            match self.eval(a)? {
                Val::I(i) => *v = i as u32 as i32,
                Val::F(_) => return Err(format!("T.dpbf16ps of a float word in `{e}`")),
            }
        }
        Ok(Val::F(f64::from(dpbf16ps(acc, w[0], w[1]))))
    }

    /// `T.reinterpret(x)` of the call's dtype: `x`'s bits read as it
    /// ([`reinterpretable`]).
    pub(super) fn reinterpret(&self, e: &PrimExpr, args: &[PrimExpr]) -> Result<Val, String> {
        let to = e.dtype();
        let Some(x) = args.first().filter(|_| args.len() == 1) else {
            return Err(format!("T.reinterpret takes 1 argument, found `{e}`"));
        };
        let from = x.dtype();
        if !reinterpretable(from, to) {
            return Err(format!(
                "T.reinterpret from `{from}` to `{to}` (it needs two scalar dtypes of 32 or 64 bits, not bool nor a half type), in `{e}`"
            ));
        }
        let bits = match (self.eval(x)?, from.bits()) {
            (Val::F(f), 32) => u64::from((f as f32).to_bits()),
            (Val::F(f), _) => f.to_bits(),
            (Val::I(i), 32) => u64::from(i as u32),
            (Val::I(i), _) => i as u64,
        };
        Ok(match (to.is_float(), to.bits()) {
            (true, 32) => Val::F(f64::from(f32::from_bits(bits as u32))),
            (true, _) => Val::F(f64::from_bits(bits)),
            (false, 32) if to.is_int() => Val::I(i64::from(bits as u32 as i32)),
            (false, 32) => Val::I(i64::from(bits as u32)),
            (false, _) => Val::I(bits as i64),
        })
    }
}
