//! `float16` and `bfloat16`: 16 bits in memory, `float32` in registers.
//!
//! The rules are [`crate::tir::half_float`]'s: a load widens to `float32`,
//! arithmetic on a half-typed expression is `float32` arithmetic (its
//! value type *is* `float`), and a store into a half buffer or a `Cast`
//! from another dtype to a half type rounds to nearest even.
//!
//! Every conversion is integer bit manipulation on `i16`/`i32` lanes, the
//! same for scalars and vectors, so it vectorizes and needs nothing from
//! the target: LLVM 14 lowers `fpext half` / `fptrunc … to half` to the
//! F16C instructions only where the CPU level has them and otherwise to
//! the libcalls `__gnu_h2f_ieee` / `__gnu_f2h_ieee`, which neither the
//! JIT's symbol table nor an AOT object of the `generic` level can count on
//! (and `double` → `half` is a libcall even with F16C). `bfloat` has no
//! arithmetic in LLVM 14 at all.
//!
//! 1. `bfloat16` → `float32`: the bits shifted into the top half.
//! 2. `float16` → `float32`: the exponent rebiased (normal numbers),
//!    infinities and NaN kept (exponent all ones), subnormals as
//!    `mantissa · 2⁻²⁴` (exact in `float32`).
//! 3. `float32` → `bfloat16`: `(x + 0x7fff + lsb) >> 16`, NaN made quiet
//!    (`0x0040` set) instead.
//! 4. `float32` → `float16`: normal results rebias and round at bit 13;
//!    results below 2⁻¹⁴ shift the mantissa (with its leading one) right by
//!    `126 - exponent` rounding to nearest even; 65520 and beyond is
//!    infinity; NaN keeps its top payload bits and becomes quiet.
//!
//! One exception: where the target CPU has F16C (the host, for the JIT and
//! native objects), `float16` → `float32` is LLVM's `fpext` of `half`
//! lanes, one `vcvtph2ps` per vector, and only the other direction is bit
//! manipulation. A signaling NaN then becomes quiet, as the interpreter's
//! conversion (the `half` crate's) makes it.
//!
//! 5. `float64` and integers wider than 16 bits reach `float32` rounded to
//!    odd first (through `double` for integers: `sitofp` to `double` is
//!    exact up to 32 bits and rounds as the interpreter's `i64 as f64`
//!    does), so the final rounding is the only one that shows.

use super::expr::lanes_of;
use super::stmt::FuncGen;
use super::types::{internal, unsupported, Ll};
use inkwell::types::{BasicType, BasicTypeEnum};
use inkwell::values::{BasicValueEnum, InstructionOpcode as Op};
use inkwell::{FloatPredicate, IntPredicate};
use relax_runtime::{DataType, Error};

impl<'ctx, 'm> FuncGen<'ctx, 'm> {
    /// `scalar`'s type with the lanes of `like` (scalar or vector).
    pub(super) fn shaped(
        &self,
        like: BasicValueEnum<'ctx>,
        scalar: BasicTypeEnum<'ctx>,
    ) -> Result<BasicTypeEnum<'ctx>, Error> {
        Ok(match lanes_of(like) {
            Some(n) => super::expr::vec_type(scalar, n)?.as_basic_type_enum(),
            None => scalar,
        })
    }

    fn bin(
        &mut self,
        op: Op,
        x: BasicValueEnum<'ctx>,
        y: BasicValueEnum<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        self.b.build_binop(op, x, y, "h").ll()
    }

    /// `op(x, c)` for the integer constant `c` of `x`'s type.
    pub(super) fn bin_c(
        &mut self,
        op: Op,
        x: BasicValueEnum<'ctx>,
        c: i64,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let c = self.constant_like(x, c)?;
        self.bin(op, x, c)
    }

    pub(super) fn icmp_c(
        &mut self,
        pred: IntPredicate,
        x: BasicValueEnum<'ctx>,
        c: i64,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let c = self.constant_like(x, c)?;
        self.icmp(pred, x, c)
    }

    /// Stored half bits (`i16` lanes) of `dtype` as `float32` values
    /// (items 1 and 2 of the module docs).
    pub(super) fn half_to_f32(
        &mut self,
        bits: BasicValueEnum<'ctx>,
        dtype: DataType,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let i32t = self.shaped(bits, self.ctx.i32_type().into())?;
        let f32t = self.shaped(bits, self.ctx.f32_type().into())?;
        if self.f16c && !dtype.is_bfloat() {
            // `fpext` of `half` lanes: `vcvtph2ps` (exact; a signaling NaN
            // becomes quiet, as `half`'s conversion makes it).
            let ht = self.shaped(bits, self.ctx.f16_type().into())?;
            let h = self.b.build_bit_cast(bits, ht, "hh").ll()?;
            return self.b.build_cast(Op::FPExt, h, f32t, "hf").ll();
        }
        let w = self.b.build_cast(Op::ZExt, bits, i32t, "hw").ll()?;
        if dtype.is_bfloat() {
            let top = self.bin_c(Op::Shl, w, 16)?;
            return self.b.build_bit_cast(top, f32t, "bf").ll();
        }
        let sign = self.bin_c(Op::And, w, 0x8000)?;
        let sign = self.bin_c(Op::Shl, sign, 16)?;
        let mag = self.bin_c(Op::And, w, 0x7fff)?;
        let shifted = self.bin_c(Op::Shl, mag, 13)?;
        let normal = self.bin_c(Op::Add, shifted, 0x3800_0000)?;
        let special = self.bin_c(Op::Or, shifted, 0x7f80_0000)?;
        let is_special = self.icmp_c(IntPredicate::UGE, mag, 0x7c00)?;
        let is_small = self.icmp_c(IntPredicate::ULT, mag, 0x0400)?;
        // Subnormals and zeros: the mantissa times 2^-24, exactly.
        let m = self.b.build_cast(Op::UIToFP, mag, f32t, "hm").ll()?;
        let scale = self.constant_float_like(m, 2f64.powi(-24))?;
        let small = self.bin(Op::FMul, m, scale)?;
        let small = self.b.build_bit_cast(small, i32t, "hs").ll()?;
        let r = self.select(is_special, special, normal)?;
        let r = self.select(is_small, small, r)?;
        let r = self.bin(Op::Or, r, sign)?;
        self.b.build_bit_cast(r, f32t, "h").ll()
    }

    /// `float32` values rounded to nearest even as bits (`i16` lanes) of
    /// the half type `dtype` (items 3 and 4 of the module docs).
    pub(super) fn f32_to_half(
        &mut self,
        v: BasicValueEnum<'ctx>,
        dtype: DataType,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let i32t = self.shaped(v, self.ctx.i32_type().into())?;
        let i16t = self.shaped(v, self.ctx.i16_type().into())?;
        let x = self.b.build_bit_cast(v, i32t, "fb").ll()?;
        let a = self.bin_c(Op::And, x, 0x7fff_ffff)?;
        let is_nan = self.icmp_c(IntPredicate::UGT, a, 0x7f80_0000)?;
        let top = self.bin_c(Op::LShr, x, 16)?;
        let r = if dtype.is_bfloat() {
            let lsb = self.bin_c(Op::And, top, 1)?;
            let bias = self.bin_c(Op::Add, lsb, 0x7fff)?;
            let sum = self.bin(Op::Add, x, bias)?;
            let rounded = self.bin_c(Op::LShr, sum, 16)?;
            let quiet = self.bin_c(Op::Or, top, 0x0040)?;
            self.select(is_nan, quiet, rounded)?
        } else {
            let sign = self.bin_c(Op::And, top, 0x8000)?;
            // Normal results: rebias, round at bit 13 (a carry may step
            // into the exponent, correctly).
            let r = self.bin_c(Op::Sub, a, 0x3800_0000)?;
            let odd = self.bin_c(Op::LShr, r, 13)?;
            let odd = self.bin_c(Op::And, odd, 1)?;
            let bias = self.bin_c(Op::Add, odd, 0xfff)?;
            let normal = self.bin(Op::Add, r, bias)?;
            let normal = self.bin_c(Op::LShr, normal, 13)?;
            // Subnormal results: the mantissa with its leading one, shifted
            // right by 126 - exponent (at most 31) to nearest even.
            let e = self.bin_c(Op::LShr, a, 23)?;
            let m = self.bin_c(Op::And, a, 0x7f_ffff)?;
            let m = self.bin_c(Op::Or, m, 0x80_0000)?;
            let c126 = self.constant_like(e, 126)?;
            let shift = self.bin(Op::Sub, c126, e)?;
            let far = self.icmp_c(IntPredicate::UGT, shift, 31)?;
            let c31 = self.constant_like(shift, 31)?;
            let shift = self.select(far, c31, shift)?;
            let one = self.constant_like(shift, 1)?;
            let below = self.bin(Op::Sub, shift, one)?;
            let halfway = self.bin(Op::Shl, one, below)?;
            let halfway = self.bin(Op::Sub, halfway, one)?;
            let kept = self.bin(Op::LShr, m, shift)?;
            let kept_odd = self.bin(Op::And, kept, one)?;
            let bias = self.bin(Op::Add, halfway, kept_odd)?;
            let sum = self.bin(Op::Add, m, bias)?;
            let small = self.bin(Op::LShr, sum, shift)?;
            let nan = self.bin_c(Op::LShr, a, 13)?;
            let nan = self.bin_c(Op::And, nan, 0x3ff)?;
            let nan = self.bin_c(Op::Or, nan, 0x7e00)?;
            let inf = self.constant_like(a, 0x7c00)?;
            let is_small = self.icmp_c(IntPredicate::ULT, a, 0x3880_0000)?;
            let is_over = self.icmp_c(IntPredicate::UGE, a, 0x477f_f000)?;
            let r = self.select(is_small, small, normal)?;
            let r = self.select(is_over, inf, r)?;
            let r = self.select(is_nan, nan, r)?;
            self.bin(Op::Or, r, sign)?
        };
        self.b.build_cast(Op::Trunc, r, i16t, "h").ll()
    }

    /// `float64` values rounded to `float32` to odd (item 5).
    fn f64_to_f32_odd(&mut self, v: BasicValueEnum<'ctx>) -> Result<BasicValueEnum<'ctx>, Error> {
        let f32t = self.shaped(v, self.ctx.f32_type().into())?;
        let f64t = self.shaped(v, self.ctx.f64_type().into())?;
        let i32t = self.shaped(v, self.ctx.i32_type().into())?;
        let t = self.b.build_cast(Op::FPTrunc, v, f32t, "t").ll()?;
        let back = self.b.build_cast(Op::FPExt, t, f64t, "back").ll()?;
        // Ordered and unequal: false on NaN, which passes through.
        let inexact = self.fcmp(FloatPredicate::ONE, back, v)?;
        let abs_back = self.call_intrinsic("llvm.fabs", &[back])?;
        let abs_v = self.call_intrinsic("llvm.fabs", &[v])?;
        let away = self.fcmp(FloatPredicate::OGT, abs_back, abs_v)?;
        let tb = self.b.build_bit_cast(t, i32t, "tb").ll()?;
        let step = self.b.build_cast(Op::ZExt, away, i32t, "step").ll()?;
        let toward = self.bin(Op::Sub, tb, step)?;
        let odd = self.bin_c(Op::Or, toward, 1)?;
        let r = self.select(inexact, odd, tb)?;
        self.b.build_bit_cast(r, f32t, "odd").ll()
    }

    /// `v` of dtype `from` as `to` where either is a half type (TIR's
    /// `Cast`; the module docs say where it rounds).
    pub(super) fn convert_half(
        &mut self,
        v: BasicValueEnum<'ctx>,
        from: DataType,
        to: DataType,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let f32 = DataType::f32();
        if !to.is_half() {
            // A half value is a float32 one.
            return self.convert(v, f32, to);
        }
        let wide = if from.is_half() || from == f32 {
            v
        } else if from.is_float() {
            let d = self.convert(v, from, DataType::f64())?;
            self.f64_to_f32_odd(d)?
        } else if from.is_integer() && from.bits() <= 16 {
            // Exact in float32.
            self.convert(v, from, f32)?
        } else if from.is_integer() {
            let d = self.convert(v, from, DataType::f64())?;
            self.f64_to_f32_odd(d)?
        } else {
            return Err(unsupported(format!("a cast from `{from}` to `{to}`")));
        };
        if !matches!(
            wide.get_type(),
            BasicTypeEnum::FloatType(_) | BasicTypeEnum::VectorType(_)
        ) {
            return Err(internal(format!("a {from} value that is not a float")));
        }
        let bits = self.f32_to_half(wide, to)?;
        self.half_to_f32(bits, to)
    }
}
