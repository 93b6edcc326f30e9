//! `T.dpbf16ps(acc, a, b)`, the `bfloat16` dot-product step, and
//! `T.reinterpret(x)`, as LLVM IR.
//!
//! `dpbf16ps` is one lane of x86's `vdpbf16ps` ([`crate::tir::interp`]
//! defines it: `acc` plus the products of the odd, then the even,
//! `bfloat16` halves of the 32-bit words `a` and `b`, each step a fused
//! multiply-add with subnormal inputs read as zero and a subnormal result
//! flushed to zero). On a CPU with AVX512-BF16 a 16-lane step is one
//! `llvm.x86.avx512bf16.dpbf16ps.512` (LLVM 14 types its `bfloat16` pairs
//! as `<16 x i32>`). Anywhere else, and for other lane counts, the same
//! arithmetic lane by lane: the halves masked or shifted into the top of
//! an `i32` and bitcast to `float`, the flush a test of the exponent bits,
//! the steps `llvm.fma` (the `fmaf` libcall where the CPU has no FMA), so
//! the fallback gives exactly the instruction's result.
//!
//! `reinterpret` is a `bitcast` between same-width scalar types of 32 or
//! 64 bits ([`crate::tir::interp::reinterpretable`]).

use super::expr::lanes_of;
use super::stmt::FuncGen;
use super::types::{internal, unsupported, Ll};
use crate::ir::prim_expr::PrimExpr;
use crate::tir::interp::reinterpretable;
use inkwell::values::{BasicValueEnum, InstructionOpcode as Op};
use inkwell::IntPredicate;
use relax_runtime::{DataType, Error};

/// The LLVM 14 intrinsic of a 16-lane `vdpbf16ps`.
pub(super) const DPBF16PS_512: &str = "llvm.x86.avx512bf16.dpbf16ps.512";

impl<'ctx, 'm> FuncGen<'ctx, 'm> {
    /// `dpbf16ps(acc, a, b)` (see the module docs).
    pub(super) fn dpbf16ps(
        &mut self,
        args: &[PrimExpr],
        dtype: DataType,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let word = |d: DataType| d.lanes() == 1 && (d.is_int() || d.is_uint()) && d.bits() == 32;
        if dtype != DataType::f32()
            || args[0].dtype() != DataType::f32()
            || !word(args[1].dtype())
            || !word(args[2].dtype())
        {
            return Err(unsupported(format!(
                "`T.dpbf16ps` of dtype `{dtype}` on ({}, {}, {}) (it takes a float32 accumulator and two 32-bit integer words and gives a float32)",
                args[0].dtype(),
                args[1].dtype(),
                args[2].dtype()
            )));
        }
        let mut vals = vec![self.expr_as(&args[0], DataType::f32())?];
        for a in &args[1..] {
            vals.push(self.expr_as(a, DataType::i32())?);
        }
        let n = vals.iter().filter_map(|v| lanes_of(*v)).max();
        if let Some(n) = n {
            for v in vals.iter_mut() {
                *v = self.with_lanes(*v, n)?;
            }
        }
        if self.bf16 && n == Some(16) {
            let decl = inkwell::intrinsics::Intrinsic::find(DPBF16PS_512)
                .and_then(|i| i.get_declaration(self.module, &[]))
                .ok_or_else(|| internal(format!("no LLVM intrinsic {DPBF16PS_512}")))?;
            let args: Vec<_> = vals.iter().map(|v| (*v).into()).collect();
            return self
                .b
                .build_call(decl, &args, "vdpbf16ps")
                .ll()?
                .try_as_basic_value()
                .basic()
                .ok_or_else(|| internal(format!("{DPBF16PS_512} returned no value")));
        }
        let (acc, a, b) = (vals[0], vals[1], vals[2]);
        let i32t = self.shaped(acc, self.ctx.i32_type().into())?;
        let acc_bits = self.b.build_bit_cast(acc, i32t, "acc_bits").ll()?;
        let mut s = self.flushed_float(acc_bits)?;
        // The odd (top) halves first, then the even ones.
        for odd in [true, false] {
            let (x, y) = (self.bf16_half(a, odd)?, self.bf16_half(b, odd)?);
            let r = self.call_intrinsic("llvm.fma", &[x, y, s])?;
            let bits = self.b.build_bit_cast(r, i32t, "dp_bits").ll()?;
            s = self.flushed_float(bits)?;
        }
        Ok(s)
    }

    /// The `bfloat16` in the top (`odd`) or bottom half of the `i32` lanes
    /// `w`, as `float` lanes, a subnormal read as zero.
    fn bf16_half(
        &mut self,
        w: BasicValueEnum<'ctx>,
        odd: bool,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let top = if odd {
            self.bin_c(Op::And, w, 0xffff_0000u32 as i32 as i64)?
        } else {
            self.bin_c(Op::Shl, w, 16)?
        };
        self.flushed_float(top)
    }

    /// The `float` lanes with the bits `x` (`i32` lanes), a subnormal
    /// flushed to zero of its sign: exponent bits all zero keep only the
    /// sign bit.
    fn flushed_float(&mut self, x: BasicValueEnum<'ctx>) -> Result<BasicValueEnum<'ctx>, Error> {
        let f32t = self.shaped(x, self.ctx.f32_type().into())?;
        let exponent = self.bin_c(Op::And, x, 0x7f80_0000)?;
        let tiny = self.icmp_c(IntPredicate::EQ, exponent, 0)?;
        let sign = self.bin_c(Op::And, x, 0x8000_0000u32 as i32 as i64)?;
        let r = self.select(tiny, sign, x)?;
        self.b.build_bit_cast(r, f32t, "flushed").ll()
    }

    /// `reinterpret(x)` as `dtype`: the same bits (see the module docs).
    pub(super) fn reinterpret(
        &mut self,
        args: &[PrimExpr],
        dtype: DataType,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let from = args[0].dtype();
        if !reinterpretable(from, dtype) {
            return Err(unsupported(format!(
                "`T.reinterpret` from `{from}` to `{dtype}` (it needs two scalar dtypes of 32 or 64 bits, not bool nor a half type)"
            )));
        }
        let x = self.expr(&args[0])?;
        let scalar = super::types::value_type(self.ctx, dtype)?;
        let ty = self.shaped(x, scalar)?;
        self.b.build_bit_cast(x, ty, "reinterpret").ll()
    }
}
