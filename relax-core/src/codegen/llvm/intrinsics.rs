//! Intrinsic calls (`T.exp(x)`, …) to LLVM intrinsics or libm.
//!
//! | intrinsic | emitted as |
//! |---|---|
//! | `exp` of `float32` (and of `float16`, `bfloat16`, computed in `float32`) | inline vector code ([`super::math`]) |
//! | `exp` of `float64`, `exp2`, `log`, `log2`, `log10`, `sqrt`, `fabs`, `floor`, `ceil`, `trunc`, `sin`, `cos` | `llvm.<name>` (vectorizes) |
//! | `round`, `nearbyint` | `llvm.nearbyint`: halves to even, as TVM and NumPy round |
//! | `pow`, `fma` | `llvm.pow`, `llvm.fma` |
//! | `pow` on integers | exact, by squaring over the exponent's bits (wrapping); a negative exponent gives the truncated `1 / x^-e`: 1 for `x == 1`, ±1 for `x == -1`, else 0 |
//! | `rsqrt` | `1 / llvm.sqrt(x)` |
//! | `sigmoid` | `1 / (1 + exp(-x))`, `exp` as above |
//! | `tanh` and `erf` of `float32` (and of the half types) | inline vector code over `exp` ([`super::math`]) |
//! | `tanh` and `erf` of `float64`, `tan`, `asin`, `acos`, `atan`, `sinh`, `cosh`, `asinh`, `acosh`, `atanh`, `log1p`, `expm1`, `atan2` | libm (`tanhf` for float32, `tanh` for float64), one call per lane in a vector step |
//! | `fabs`/`abs` on integers | `x < 0 ? -x : x` (`abs` on floats is `llvm.fabs`) |
//! | `fmod` | `frem` (C's `fmod`: the sign of the dividend) |
//! | `isnan`, `isinf` | `x != x`, `fabs(x) == inf` (a `bool` result) |
//! | `exp10` | libm `exp10` |
//! | `bitwise_and`, `bitwise_or`, `bitwise_xor`, `bitwise_not` | `and`, `or`, `xor`, `xor -1` (integers and `bool`s) |
//! | `shift_left`, `shift_right` | `shl`, `ashr` (signed) or `lshr` (unsigned), the amount tested against the width: out of range gives 0, or the sign for `ashr` |
//! | `dpbusd(acc, a, b)` on `int32` | `llvm.x86.avx512.vpdpbusd.512` for 16 lanes on a CPU with AVX512-VNNI; else per byte: `acc + Σ_t ((a >> 8t) & 255) · ((b << 24 - 8t) >> 24)` (logical, then arithmetic shifts), wrapping |
//! | `dpbf16ps(acc, a, b)` on `float32` and two 32-bit words | `llvm.x86.avx512bf16.dpbf16ps.512` for 16 lanes on a CPU with AVX512-BF16; else its arithmetic lane by lane ([`super::dpbf16`]) |
//! | `reinterpret(x)` | `bitcast` to the call's dtype, 32 or 64 bits ([`super::dpbf16`]) |
//! | `if_then_else(c, t, f)` | a branch: only the chosen side is evaluated (see [`super::expr`]) |
//!
//! Arguments are converted to the call's dtype, which must be a float
//! (except `fabs` and the bitwise intrinsics). libm symbols resolve in the JIT through
//! [`super::jit`]'s table and in AOT objects at link time (`-lm`).

use super::expr::lanes_of;
use super::stmt::FuncGen;
use super::types::{internal, unsupported, value_type, Ll};
use crate::ir::prim_expr::PrimExpr;
use inkwell::values::{BasicValueEnum, InstructionOpcode as Op};
use inkwell::IntPredicate;
use relax_runtime::{DataType, Error};

/// The libm functions calls may use, by intrinsic name and arity; the
/// float32 variant has an `f` suffix.
pub(super) const LIBM: &[(&str, usize)] = &[
    ("tanh", 1),
    ("erf", 1),
    ("tan", 1),
    ("asin", 1),
    ("acos", 1),
    ("atan", 1),
    ("sinh", 1),
    ("cosh", 1),
    ("asinh", 1),
    ("acosh", 1),
    ("atanh", 1),
    ("log1p", 1),
    ("expm1", 1),
    ("atan2", 2),
    ("exp10", 1),
];

/// The LLVM intrinsic for a TIR intrinsic, with its arity.
fn llvm_intrinsic(name: &str) -> Option<(&'static str, usize)> {
    Some(match name {
        "exp" => ("llvm.exp", 1),
        "exp2" => ("llvm.exp2", 1),
        "log" => ("llvm.log", 1),
        "log2" => ("llvm.log2", 1),
        "log10" => ("llvm.log10", 1),
        "sqrt" => ("llvm.sqrt", 1),
        "fabs" => ("llvm.fabs", 1),
        "floor" => ("llvm.floor", 1),
        "ceil" => ("llvm.ceil", 1),
        "trunc" => ("llvm.trunc", 1),
        "round" | "nearbyint" => ("llvm.nearbyint", 1),
        "sin" => ("llvm.sin", 1),
        "cos" => ("llvm.cos", 1),
        "pow" => ("llvm.pow", 2),
        "fma" => ("llvm.fma", 3),
        _ => return None,
    })
}

fn arity(name: &str) -> Option<usize> {
    if let Some((_, n)) = llvm_intrinsic(name) {
        return Some(n);
    }
    match name {
        "rsqrt" | "sigmoid" | "abs" | "isnan" | "isinf" | "bitwise_not" => Some(1),
        "fmod" | "bitwise_and" | "bitwise_or" | "bitwise_xor" | "shift_left" | "shift_right"
        | "truncdiv" | "truncmod" => Some(2),
        "if_then_else" | "dpbusd" | "dpbf16ps" => Some(3),
        "reinterpret" | "address_of" => Some(1),
        "prefetch" => Some(4),
        _ => LIBM.iter().find(|(n, _)| *n == name).map(|(_, a)| *a),
    }
}

impl<'ctx, 'm> FuncGen<'ctx, 'm> {
    /// The intrinsic call `name(args…)` of result dtype `dtype`.
    pub fn intrinsic(
        &mut self,
        name: &str,
        args: &[PrimExpr],
        dtype: DataType,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let want = arity(name).ok_or_else(|| unsupported(format!("the intrinsic `T.{name}`")))?;
        if args.len() != want {
            return Err(unsupported(format!(
                "`T.{name}` with {} arguments (it takes {want})",
                args.len()
            )));
        }
        if name == "if_then_else" {
            return self.lazy_select(&args[0], &args[1], &args[2], dtype);
        }
        if matches!(name, "isnan" | "isinf") {
            let x = self.expr(&args[0])?;
            if !args[0].dtype().is_float() {
                // An integer is never NaN nor infinite.
                let zero = self.constant_like(x, 0)?;
                return self.icmp(IntPredicate::NE, zero, zero);
            }
            if name == "isnan" {
                return self.fcmp(inkwell::FloatPredicate::UNO, x, x);
            }
            let a = self.call_intrinsic("llvm.fabs", &[x])?;
            let inf = self.constant_float_like(a, f64::INFINITY)?;
            return self.fcmp(inkwell::FloatPredicate::OEQ, a, inf);
        }
        if name == "dpbusd" {
            return self.dpbusd(args, dtype);
        }
        if name == "dpbf16ps" {
            return self.dpbf16ps(args, dtype);
        }
        if name == "reinterpret" {
            return self.reinterpret(args, dtype);
        }
        if name == "prefetch" {
            return self.prefetch(args);
        }
        if name == "address_of" {
            return Err(unsupported(
                "`T.address_of` outside `T.prefetch`".to_string(),
            ));
        }
        if name == "truncdiv" || name == "truncmod" {
            return self.trunc_div_mod(name, args, dtype);
        }
        if name.starts_with("bitwise_") || name.starts_with("shift_") {
            return self.bitwise(name, args, dtype);
        }
        let name = if name == "abs" { "fabs" } else { name };
        if name == "fabs" && dtype.is_integer() {
            let x = self.expr_as(&args[0], dtype)?;
            if !dtype.is_int() {
                return Ok(x);
            }
            let zero = self.constant_like(x, 0)?;
            let neg = self.icmp(IntPredicate::SLT, x, zero)?;
            let minus = self.b.build_binop(Op::Sub, zero, x, "neg").ll()?;
            return self.select(neg, minus, x);
        }
        if name == "pow" && dtype.is_integer() && !dtype.is_bool() {
            return self.int_pow(args, dtype);
        }
        if !dtype.is_float() {
            return Err(unsupported(format!(
                "`T.{name}` of dtype `{dtype}` (it computes in floats)"
            )));
        }
        value_type(self.ctx, dtype)?;
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            vals.push(self.expr_as(a, dtype)?);
        }
        // Every argument with the same lanes.
        if let Some(n) = vals.iter().filter_map(|v| lanes_of(*v)).max() {
            for v in vals.iter_mut() {
                *v = self.with_lanes(*v, n)?;
            }
        }
        // Half types compute in float32.
        let f32_exp = dtype.bits() <= 32;
        if name == "exp" && f32_exp {
            return self.exp_f32(vals[0]);
        }
        if name == "tanh" && f32_exp {
            return self.tanh_f32(vals[0]);
        }
        if name == "erf" && f32_exp {
            return self.erf_f32(vals[0]);
        }
        if let Some((llvm, _)) = llvm_intrinsic(name) {
            return self.call_intrinsic(llvm, &vals);
        }
        match name {
            "fmod" => self.b.build_binop(Op::FRem, vals[0], vals[1], "fmod").ll(),
            "rsqrt" => {
                let s = self.call_intrinsic("llvm.sqrt", &vals)?;
                let one = self.constant_like(s, 1)?;
                self.b.build_binop(Op::FDiv, one, s, "rsqrt").ll()
            }
            "sigmoid" => {
                let zero = self.constant_like(vals[0], 0)?;
                let neg = self.b.build_binop(Op::FSub, zero, vals[0], "neg").ll()?;
                let e = if f32_exp {
                    self.exp_f32(neg)?
                } else {
                    self.call_intrinsic("llvm.exp", &[neg])?
                };
                let one = self.constant_like(e, 1)?;
                let den = self.b.build_binop(Op::FAdd, one, e, "den").ll()?;
                self.b.build_binop(Op::FDiv, one, den, "sigmoid").ll()
            }
            _ => {
                let symbol = if f32_exp {
                    format!("{name}f")
                } else {
                    name.to_string()
                };
                self.libm_call(&symbol, &vals)
            }
        }
    }

    /// `pow` on integers of `dtype`: `x^e` wrapping, by squaring over
    /// every bit of `e` (straight-line code, so it vectorizes); a negative
    /// signed `e` gives the truncated reciprocal power.
    fn int_pow(
        &mut self,
        args: &[PrimExpr],
        dtype: DataType,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let x = self.expr_as(&args[0], dtype)?;
        let e = self.expr_as(&args[1], dtype)?;
        let (x, e) = self.broadcast2(x, e)?;
        let zero = self.constant_like(x, 0)?;
        let one = self.constant_like(x, 1)?;
        let mut r = one;
        let mut base = x;
        let bits = dtype.bits() as i64;
        for k in 0..bits {
            let kc = self.constant_like(e, k)?;
            let shifted = self.b.build_binop(Op::LShr, e, kc, "pow_e").ll()?;
            let bit = self.b.build_binop(Op::And, shifted, one, "pow_bit").ll()?;
            let set = self.icmp(IntPredicate::NE, bit, zero)?;
            let times = self.b.build_binop(Op::Mul, r, base, "pow_r").ll()?;
            r = self.select(set, times, r)?;
            if k + 1 < bits {
                base = self.b.build_binop(Op::Mul, base, base, "pow_b").ll()?;
            }
        }
        if !dtype.is_int() {
            return Ok(r);
        }
        let minus_one = self.constant_like(x, -1)?;
        let negative = self.icmp(IntPredicate::SLT, e, zero)?;
        let low = self.b.build_binop(Op::And, e, one, "pow_odd").ll()?;
        let odd = self.icmp(IntPredicate::NE, low, zero)?;
        let x_one = self.icmp(IntPredicate::EQ, x, one)?;
        let x_minus_one = self.icmp(IntPredicate::EQ, x, minus_one)?;
        let signed_one = self.select(odd, minus_one, one)?;
        let tail = self.select(x_minus_one, signed_one, zero)?;
        let reciprocal = self.select(x_one, one, tail)?;
        self.select(negative, reciprocal, r)
    }

    /// `dpbusd(acc, a, b)` (see the module docs): `acc` plus the dot
    /// product of `a`'s four bytes, unsigned, with `b`'s, signed.
    fn dpbusd(
        &mut self,
        args: &[PrimExpr],
        dtype: DataType,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        if dtype != DataType::i32() {
            return Err(unsupported(format!(
                "`T.dpbusd` of dtype `{dtype}` (it gives an int32)"
            )));
        }
        let mut vals = Vec::with_capacity(3);
        for a in args {
            vals.push(self.expr_as(a, dtype)?);
        }
        let n = vals.iter().filter_map(|v| lanes_of(*v)).max();
        if let Some(n) = n {
            for v in vals.iter_mut() {
                *v = self.with_lanes(*v, n)?;
            }
        }
        if self.vnni && n == Some(16) {
            let name = "llvm.x86.avx512.vpdpbusd.512";
            let decl = inkwell::intrinsics::Intrinsic::find(name)
                .and_then(|i| i.get_declaration(self.module, &[]))
                .ok_or_else(|| internal(format!("no LLVM intrinsic {name}")))?;
            let args: Vec<_> = vals.iter().map(|v| (*v).into()).collect();
            return self
                .b
                .build_call(decl, &args, "vpdpbusd")
                .ll()?
                .try_as_basic_value()
                .basic()
                .ok_or_else(|| internal(format!("{name} returned no value")));
        }
        let (mut acc, a, b) = (vals[0], vals[1], vals[2]);
        let byte = self.constant_like(a, 255)?;
        let top = self.constant_like(b, 24)?;
        for t in 0..4 {
            let at = self.constant_like(a, 8 * t)?;
            let ua = self.b.build_binop(Op::LShr, a, at, "dp_a").ll()?;
            let ua = self.b.build_binop(Op::And, ua, byte, "dp_ua").ll()?;
            let up = self.constant_like(b, 24 - 8 * t)?;
            let sb = self.b.build_binop(Op::Shl, b, up, "dp_b").ll()?;
            let sb = self.b.build_binop(Op::AShr, sb, top, "dp_sb").ll()?;
            let p = self.b.build_binop(Op::Mul, ua, sb, "dp_p").ll()?;
            acc = self.b.build_binop(Op::Add, acc, p, "dp_acc").ll()?;
        }
        Ok(acc)
    }

    /// `truncdiv`/`truncmod` (TVM's `T.Div`/`T.truncmod`): integer division
    /// rounding toward zero, on integers of `dtype`, guarded as
    /// [`FuncGen::int_div_mod`] guards floor division.
    fn trunc_div_mod(
        &mut self,
        name: &str,
        args: &[PrimExpr],
        dtype: DataType,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        if !dtype.is_integer() || dtype.is_bool() {
            return Err(unsupported(format!("`T.{name}` of dtype `{dtype}`")));
        }
        let (x, y) = (
            self.expr_as(&args[0], dtype)?,
            self.expr_as(&args[1], dtype)?,
        );
        let (x, y) = match (lanes_of(x), lanes_of(y)) {
            (Some(n), _) | (None, Some(n)) => (self.with_lanes(x, n)?, self.with_lanes(y, n)?),
            (None, None) => (x, y),
        };
        self.int_div_mod(x, y, dtype.element_of(), name == "truncmod", false)
    }

    /// `bitwise_{and,or,xor,not}` and `shift_{left,right}` on integers (or
    /// `bool`s) of `dtype`. A shift amount outside `[0, bits)` (where LLVM's
    /// shifts give poison) selects 0, or the sign for a right shift of a
    /// signed value, as the interpreter does.
    fn bitwise(
        &mut self,
        name: &str,
        args: &[PrimExpr],
        dtype: DataType,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        if !dtype.is_integer() {
            return Err(unsupported(format!("`T.{name}` of dtype `{dtype}`")));
        }
        let mut vals = Vec::with_capacity(args.len());
        for a in args {
            vals.push(self.expr_as(a, dtype)?);
        }
        if let Some(n) = vals.iter().filter_map(|v| lanes_of(*v)).max() {
            for v in vals.iter_mut() {
                *v = self.with_lanes(*v, n)?;
            }
        }
        let op = match name {
            "bitwise_not" => {
                let ones = self.constant_like(vals[0], -1)?;
                return self.b.build_binop(Op::Xor, vals[0], ones, "not").ll();
            }
            "bitwise_and" => Op::And,
            "bitwise_or" => Op::Or,
            "bitwise_xor" => Op::Xor,
            "shift_left" => Op::Shl,
            "shift_right" if dtype.is_int() => Op::AShr,
            "shift_right" => Op::LShr,
            _ => return Err(unsupported(format!("the intrinsic `T.{name}`"))),
        };
        let (x, k) = (vals[0], vals[1]);
        if !name.starts_with("shift_") {
            return self.b.build_binop(op, x, k, "bitwise").ll();
        }
        self.shift(op, x, k, dtype.bits())
    }

    /// `x op k` for a shift `op` on integers of `bits` bits, an amount
    /// outside `[0, bits)` giving 0, or the sign for `ashr`.
    fn shift(
        &mut self,
        op: Op,
        x: BasicValueEnum<'ctx>,
        k: BasicValueEnum<'ctx>,
        bits: u16,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let width = self.constant_like(k, i64::from(bits))?;
        // Unsigned: a negative amount is out of range too.
        let in_range = self.icmp(IntPredicate::ULT, k, width)?;
        let zero = self.constant_like(k, 0)?;
        let safe = self.select(in_range, k, zero)?;
        let shifted = self.b.build_binop(op, x, safe, "shift").ll()?;
        let fallback = if op == Op::AShr {
            let top = self.constant_like(k, i64::from(bits) - 1)?;
            self.b.build_binop(Op::AShr, x, top, "sign").ll()?
        } else {
            zero
        };
        self.select(in_range, shifted, fallback)
    }

    /// A call of the libm function `symbol`, lane by lane on vectors.
    fn libm_call(
        &mut self,
        symbol: &str,
        args: &[BasicValueEnum<'ctx>],
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let first = args[0];
        let lanes = lanes_of(first);
        let scalar_ty = match first {
            BasicValueEnum::VectorValue(v) => v.get_type().get_element_type(),
            other => other.get_type(),
        };
        let BasicValueEnum::FloatValue(_) = scalar_ty.const_zero() else {
            return Err(internal(format!("{symbol} on a non-float")));
        };
        let params: Vec<_> = args.iter().map(|_| scalar_ty.into()).collect();
        let fn_ty = scalar_ty.into_float_type().fn_type(&params, false);
        let f = self.declare(symbol, fn_ty);
        let call =
            |g: &mut Self, xs: &[BasicValueEnum<'ctx>]| -> Result<BasicValueEnum<'ctx>, Error> {
                let xs: Vec<_> = xs.iter().map(|x| (*x).into()).collect();
                g.b.build_call(f, &xs, symbol)
                    .ll()?
                    .try_as_basic_value()
                    .basic()
                    .ok_or_else(|| internal(format!("{symbol} returned no value")))
            };
        let Some(n) = lanes else {
            return call(self, args);
        };
        let vty = super::expr::vec_type(scalar_ty, n)?;
        let mut acc = vty.get_undef();
        for k in 0..n {
            let idx = self.ctx.i32_type().const_int(k as u64, false);
            let mut xs = Vec::with_capacity(args.len());
            for a in args {
                let BasicValueEnum::VectorValue(v) = a else {
                    return Err(internal("mixed lanes in a libm call"));
                };
                xs.push(self.b.build_extract_element(*v, idx, "lane").ll()?);
            }
            let y = call(self, &xs)?;
            acc = self.b.build_insert_element(acc, y, idx, "lanes").ll()?;
        }
        Ok(acc.into())
    }
}
