//! PrimExprs to LLVM values.
//!
//! 1. Every value is an LLVM scalar of its dtype's [value
//!    type](super::types::value_type), or, inside a vectorized loop step, a
//!    vector of that type when it depends on the loop variable. Operations
//!    broadcast a scalar operand against a vector one, so invariant
//!    subexpressions stay scalar.
//! 2. Operands are converted to the node's dtype first (TIR requires them to
//!    agree; converting instead of failing keeps a slightly off IR
//!    compilable). Comparisons convert to the wider operand type.
//! 3. `Select` whose sides read memory, and `T.if_then_else`, branch so
//!    that only the chosen side runs (a guarded out-of-range access must not
//!    fault), in a vector step too when the `Select` is the same in every
//!    lane (a padded image element broadcast against a vector of filters);
//!    other `Select`s are LLVM `select`s.
//! 4. A float update `C[i] = a * b + C[i]` (either side of the add, `C[i]`
//!    the element the store writes: a sum's running value, in a register
//!    tile or the output) is `llvm.fmuladd`: one FMA where the target has
//!    it, a rounded multiply and add where it does not. Sums may differ
//!    from the interpreter's in the last bits (their order differs too),
//!    which is why numerical comparisons of reductions use a tolerance.
//!    Every other `a * b + c` (a dequantization's `acc · scale + bias`, a
//!    normalization's `x̂ · γ + β`) rounds the product and the sum apart,
//!    as the interpreter and onnxruntime's separate ops do: a contracted
//!    rounding there would differ by one ulp, and a requantization that
//!    follows can turn that ulp into a whole quantization step.
//! 5. Integer `Div`/`Mod` are floor division/modulo. A zero divisor acts as
//!    1 and a signed divisor of -1 is handled apart, so no input traps
//!    (x86 faults on both).

use super::stmt::FuncGen;
use super::types::{internal, unsupported, value_type, Ll};
use crate::ir::prim_expr::{PrimExpr, PrimExprKind};
use crate::tir::affine::lane_invariant;
use inkwell::types::{BasicType, BasicTypeEnum, VectorType};
use inkwell::values::{BasicValue, BasicValueEnum, IntValue, VectorValue};
use inkwell::{FloatPredicate, IntPredicate};
use relax_runtime::{DataType, Error};

use inkwell::values::InstructionOpcode as Op;

/// A comparison.
#[derive(Clone, Copy)]
enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// The lane count of `v`, if it is a vector.
pub(super) fn lanes_of(v: BasicValueEnum<'_>) -> Option<u32> {
    match v {
        BasicValueEnum::VectorValue(v) => Some(v.get_type().get_size()),
        _ => None,
    }
}

/// The vector of `n` elements of the scalar type `ty`.
pub(super) fn vec_type(ty: BasicTypeEnum<'_>, n: u32) -> Result<VectorType<'_>, Error> {
    match ty {
        BasicTypeEnum::IntType(t) => Ok(t.vec_type(n)),
        BasicTypeEnum::FloatType(t) => Ok(t.vec_type(n)),
        BasicTypeEnum::PointerType(t) => Ok(t.vec_type(n)),
        other => Err(internal(format!("no vector of {other:?}"))),
    }
}

/// Whether `e` reads memory.
pub(super) fn has_load(e: &PrimExpr) -> bool {
    matches!(e.kind(), PrimExprKind::BufferLoad(..)) || e.children().into_iter().any(has_load)
}

/// The dtype both sides of a comparison are converted to.
fn common_dtype(a: DataType, b: DataType) -> DataType {
    match (a.is_float(), b.is_float()) {
        (true, true) | (false, false) if a.bits() >= b.bits() => a,
        (true, true) | (false, false) => b,
        (true, false) => a,
        (false, true) => b,
    }
}

impl<'ctx, 'm> FuncGen<'ctx, 'm> {
    /// `e` as `dtype`.
    pub fn expr_as(
        &mut self,
        e: &PrimExpr,
        dtype: DataType,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        if let Some((name, args)) = promotable(e, dtype) {
            // Integer promotion, as C does it: the narrow operation runs in
            // 32-bit lanes, since its result is widened anyway (Q4_0's
            // nibbles, shifted and masked, then converted to float).
            let wide = DataType::i32();
            let v = self.intrinsic(name, args, wide)?;
            return self.convert(v, wide, dtype);
        }
        let v = self.expr(e)?;
        self.convert(v, e.dtype(), dtype)
    }

    /// The value of `e`. See the module docs.
    pub fn expr(&mut self, e: &PrimExpr) -> Result<BasicValueEnum<'ctx>, Error> {
        use PrimExprKind as K;
        let d = e.dtype();
        match e.kind() {
            K::Var(v) => {
                if let Some(l) = &self.lanes {
                    if &l.var == v {
                        let (base, n) = (l.base, l.n);
                        return self.lane_indices(base, n);
                    }
                }
                self.vars.get(v).copied().ok_or_else(|| {
                    unsupported(format!(
                        "the variable `{v}` is not defined where it is used"
                    ))
                })
            }
            K::IntImm(i) => self.constant_int(d, *i),
            K::FloatImm(f) => {
                let ty = value_type(self.ctx, d)?;
                match ty {
                    BasicTypeEnum::FloatType(t) => Ok(t.const_float(*f).into()),
                    BasicTypeEnum::IntType(t) => Ok(t.const_int(*f as i64 as u64, true).into()),
                    _ => Err(unsupported(format!("the literal `{e}`"))),
                }
            }
            K::Add(a, b) if d.is_float() => match (a.kind(), b.kind()) {
                (K::Mul(x, y), _) if a.dtype() == d && self.is_accumulator(b) => {
                    self.mul_add(d, x, y, b)
                }
                (_, K::Mul(x, y)) if b.dtype() == d && self.is_accumulator(a) => {
                    self.mul_add(d, x, y, a)
                }
                _ => self.arith(d, a, b, Op::Add, Op::FAdd),
            },
            K::Add(a, b) => match self.word_load(e)? {
                Some(words) => Ok(words),
                None => self.arith(d, a, b, Op::Add, Op::FAdd),
            },
            K::Sub(a, b) => self.arith(d, a, b, Op::Sub, Op::FSub),
            K::Mul(a, b) => self.arith(d, a, b, Op::Mul, Op::FMul),
            K::Div(a, b) | K::Mod(a, b) => {
                let want_mod = matches!(e.kind(), K::Mod(..));
                let (x, y) = self.operands(d, a, b)?;
                if d.is_float() {
                    self.float_div_mod(x, y, want_mod)
                } else {
                    self.int_div_mod(x, y, d, want_mod, true)
                }
            }
            K::Min(a, b) | K::Max(a, b) => {
                let is_min = matches!(e.kind(), K::Min(..));
                let (x, y) = self.operands(d, a, b)?;
                if d.is_float() {
                    let name = if is_min { "llvm.minnum" } else { "llvm.maxnum" };
                    self.call_intrinsic(name, &[x, y])
                } else {
                    let pred = match (is_min, d.is_int()) {
                        (true, true) => IntPredicate::SLT,
                        (true, false) => IntPredicate::ULT,
                        (false, true) => IntPredicate::SGT,
                        (false, false) => IntPredicate::UGT,
                    };
                    let c = self.icmp(pred, x, y)?;
                    self.select(c, x, y)
                }
            }
            K::Eq(a, b) => self.compare(Cmp::Eq, a, b),
            K::Ne(a, b) => self.compare(Cmp::Ne, a, b),
            K::Lt(a, b) => self.compare(Cmp::Lt, a, b),
            K::Le(a, b) => self.compare(Cmp::Le, a, b),
            K::Gt(a, b) => self.compare(Cmp::Gt, a, b),
            K::Ge(a, b) => self.compare(Cmp::Ge, a, b),
            K::And(a, b) | K::Or(a, b) => {
                let x = self.expr_as(a, DataType::bool())?;
                let y = self.expr_as(b, DataType::bool())?;
                let (x, y) = self.broadcast2(x, y)?;
                let op = if matches!(e.kind(), K::And(..)) {
                    Op::And
                } else {
                    Op::Or
                };
                self.b.build_binop(op, x, y, "logic").ll()
            }
            K::Not(a) => {
                let x = self.expr_as(a, DataType::bool())?;
                let t = self.constant_like(x, 1)?;
                self.b.build_binop(Op::Xor, x, t, "not").ll()
            }
            K::Select(c, t, f) => {
                // The same in every lane of a vector step: one scalar
                // branch, then broadcast.
                let invariant = self
                    .lanes
                    .as_ref()
                    .is_some_and(|l| lane_invariant(&[c, t, f], &l.var));
                if (self.lanes.is_none() || invariant) && (has_load(t) || has_load(f)) {
                    return self.lazy_select(c, t, f, d);
                }
                if let Some(v) = self.masked_select(c, t, f, d)? {
                    return Ok(v);
                }
                let c = self.expr_as(c, DataType::bool())?;
                let (t, f) = self.operands(d, t, f)?;
                self.select(c, t, f)
            }
            K::Cast(a) => self.expr_as(a, d),
            K::BufferLoad(buffer, indices) => self.load(buffer, indices),
            K::Call(name, args) => self.intrinsic(name, args, d),
        }
    }

    /// Both operands as `d`, broadcast to a common shape.
    fn operands(
        &mut self,
        d: DataType,
        a: &PrimExpr,
        b: &PrimExpr,
    ) -> Result<(BasicValueEnum<'ctx>, BasicValueEnum<'ctx>), Error> {
        let x = self.expr_as(a, d)?;
        let y = self.expr_as(b, d)?;
        self.broadcast2(x, y)
    }

    /// Whether `e` reads the element the current store writes (a sum's
    /// running value: item 4 of the module docs).
    fn is_accumulator(&self, e: &PrimExpr) -> bool {
        match (e.kind(), &self.accumulator) {
            (PrimExprKind::BufferLoad(buffer, indices), Some((target, at))) => {
                buffer == target && indices == at
            }
            _ => false,
        }
    }

    /// `x * y + z` as `llvm.fmuladd` (item 4 of the module docs).
    fn mul_add(
        &mut self,
        d: DataType,
        x: &PrimExpr,
        y: &PrimExpr,
        z: &PrimExpr,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let (x, y) = self.operands(d, x, y)?;
        let z = self.expr_as(z, d)?;
        let (x, z) = self.broadcast2(x, z)?;
        let (y, z) = self.broadcast2(y, z)?;
        // `z` may have widened `x` and `y` only if both were scalars.
        let (x, y) = self.broadcast2(x, y)?;
        self.call_intrinsic("llvm.fmuladd", &[x, y, z])
    }

    fn arith(
        &mut self,
        d: DataType,
        a: &PrimExpr,
        b: &PrimExpr,
        int_op: Op,
        float_op: Op,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let (x, y) = self.operands(d, a, b)?;
        let op = if d.is_float() { float_op } else { int_op };
        self.b.build_binop(op, x, y, "arith").ll()
    }

    fn compare(
        &mut self,
        cmp: Cmp,
        a: &PrimExpr,
        b: &PrimExpr,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let d = common_dtype(a.dtype(), b.dtype());
        let (x, y) = self.operands(d, a, b)?;
        if d.is_float() {
            // Ordered comparisons are false on NaN, and `!=` is true on it,
            // as in Rust and C.
            let pred = match cmp {
                Cmp::Eq => FloatPredicate::OEQ,
                Cmp::Ne => FloatPredicate::UNE,
                Cmp::Lt => FloatPredicate::OLT,
                Cmp::Le => FloatPredicate::OLE,
                Cmp::Gt => FloatPredicate::OGT,
                Cmp::Ge => FloatPredicate::OGE,
            };
            self.fcmp(pred, x, y)
        } else {
            let s = d.is_int();
            let pred = match cmp {
                Cmp::Eq => IntPredicate::EQ,
                Cmp::Ne => IntPredicate::NE,
                Cmp::Lt if s => IntPredicate::SLT,
                Cmp::Lt => IntPredicate::ULT,
                Cmp::Le if s => IntPredicate::SLE,
                Cmp::Le => IntPredicate::ULE,
                Cmp::Gt if s => IntPredicate::SGT,
                Cmp::Gt => IntPredicate::UGT,
                Cmp::Ge if s => IntPredicate::SGE,
                Cmp::Ge => IntPredicate::UGE,
            };
            self.icmp(pred, x, y)
        }
    }

    fn float_div_mod(
        &mut self,
        x: BasicValueEnum<'ctx>,
        y: BasicValueEnum<'ctx>,
        want_mod: bool,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let q = self.b.build_binop(Op::FDiv, x, y, "fdiv").ll()?;
        if !want_mod {
            return Ok(q);
        }
        let fq = self.call_intrinsic("llvm.floor", &[q])?;
        let p = self.b.build_binop(Op::FMul, fq, y, "fmul").ll()?;
        self.b.build_binop(Op::FSub, x, p, "fmod").ll()
    }

    /// Integer division or remainder, rounding toward negative infinity
    /// (`floor`: TIR's `floordiv`/`floormod`) or toward zero (`truncdiv`/
    /// `truncmod`). A divisor of 0 gives `x` (the remainder 0), and of -1
    /// gives `-x` (wrapping for the minimum), where LLVM's division would
    /// trap.
    pub(super) fn int_div_mod(
        &mut self,
        x: BasicValueEnum<'ctx>,
        y: BasicValueEnum<'ctx>,
        d: DataType,
        want_mod: bool,
        floor: bool,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let zero = self.constant_like(x, 0)?;
        let one = self.constant_like(x, 1)?;
        let y_zero = self.icmp(IntPredicate::EQ, y, zero)?;
        if !d.is_int() {
            let safe = self.select(y_zero, one, y)?;
            let op = if want_mod { Op::URem } else { Op::UDiv };
            return self.b.build_binop(op, x, safe, "udivmod").ll();
        }
        let minus_one = self.constant_like(x, -1)?;
        let y_m1 = self.icmp(IntPredicate::EQ, y, minus_one)?;
        let bad = self.b.build_binop(Op::Or, y_zero, y_m1, "bad").ll()?;
        let safe = self.select(bad, one, y)?;
        let q = self.b.build_binop(Op::SDiv, x, safe, "q").ll()?;
        let r = self.b.build_binop(Op::SRem, x, safe, "r").ll()?;
        if !floor {
            if want_mod {
                return Ok(r);
            }
            let neg = self.b.build_binop(Op::Sub, zero, x, "neg").ll()?;
            return self.select(y_m1, neg, q);
        }
        // Truncation rounds toward zero; floor semantics step down by one
        // when the remainder is non-zero and its sign differs from the
        // divisor's.
        let r_nz = self.icmp(IntPredicate::NE, r, zero)?;
        let signs = self.b.build_binop(Op::Xor, r, safe, "signs").ll()?;
        let differ = self.icmp(IntPredicate::SLT, signs, zero)?;
        let adjust = self.b.build_binop(Op::And, r_nz, differ, "adjust").ll()?;
        if want_mod {
            let fixed = self.b.build_binop(Op::Add, r, safe, "r1").ll()?;
            // x % -1 == 0 and x % 0 == 0: `safe` is 1 there, so r is 0.
            self.select(adjust, fixed, r)
        } else {
            let fixed = self.b.build_binop(Op::Sub, q, one, "q1").ll()?;
            let floor = self.select(adjust, fixed, q)?;
            // x // -1 == -x (wrapping for the minimum); x // 0 == x.
            let neg = self.b.build_binop(Op::Sub, zero, x, "neg").ll()?;
            self.select(y_m1, neg, floor)
        }
    }

    /// `base + <0, 1, …, n-1>`.
    fn lane_indices(
        &mut self,
        base: IntValue<'ctx>,
        n: u32,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let t = base.get_type();
        let steps: Vec<IntValue> = (0..n).map(|k| t.const_int(k as u64, false)).collect();
        let steps = VectorType::const_vector(&steps);
        let splat = self.splat(base.into(), n)?;
        self.b
            .build_binop(Op::Add, BasicValueEnum::from(splat), steps.into(), "lanes")
            .ll()
    }

    /// `c ? t : f` evaluating only the chosen side, through a branch: a
    /// guarded access (`Select(i > 0, A[i - 1], 0)`) must not read memory
    /// when its guard fails. Inside a vector step (where the loop's body was
    /// checked to have no such access) both sides are computed.
    pub fn lazy_select(
        &mut self,
        c: &PrimExpr,
        t: &PrimExpr,
        f: &PrimExpr,
        d: DataType,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let cv = self.expr_as(c, DataType::bool())?;
        let cond = match cv {
            BasicValueEnum::IntValue(c) if self.lanes.is_none() => c,
            _ => {
                let (t, f) = self.operands(d, t, f)?;
                return self.select(cv, t, f);
            }
        };
        let then_bb = self.ctx.append_basic_block(self.func, "sel.then");
        let else_bb = self.ctx.append_basic_block(self.func, "sel.else");
        let merge = self.ctx.append_basic_block(self.func, "sel.end");
        self.b
            .build_conditional_branch(cond, then_bb, else_bb)
            .ll()?;
        self.b.position_at_end(then_bb);
        let tv = self.expr_as(t, d)?;
        let t_end = self
            .b
            .get_insert_block()
            .ok_or_else(|| internal("the builder has no position"))?;
        self.b.build_unconditional_branch(merge).ll()?;
        self.b.position_at_end(else_bb);
        let fv = self.expr_as(f, d)?;
        let f_end = self
            .b
            .get_insert_block()
            .ok_or_else(|| internal("the builder has no position"))?;
        self.b.build_unconditional_branch(merge).ll()?;
        self.b.position_at_end(merge);
        let phi = self.b.build_phi(tv.get_type(), "sel").ll()?;
        phi.add_incoming(&[(&tv, t_end), (&fv, f_end)]);
        Ok(phi.as_basic_value())
    }

    /// The float constant `v` with the type (and lanes) of `like`.
    pub fn constant_float_like(
        &self,
        like: BasicValueEnum<'ctx>,
        v: f64,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let scalar = |ty: BasicTypeEnum<'ctx>| -> Result<BasicValueEnum<'ctx>, Error> {
            match ty {
                BasicTypeEnum::FloatType(t) => Ok(t.const_float(v).into()),
                other => Err(internal(format!("no float constant of {other:?}"))),
            }
        };
        match like {
            BasicValueEnum::VectorValue(vv) => {
                let ty = vv.get_type();
                let c = scalar(ty.get_element_type())?;
                Ok(VectorType::const_vector(&vec![c; ty.get_size() as usize]).into())
            }
            other => scalar(other.get_type()),
        }
    }

    /// The integer (or bool) constant `v` of dtype `d`.
    pub fn constant_int(&self, d: DataType, v: i64) -> Result<BasicValueEnum<'ctx>, Error> {
        match value_type(self.ctx, d)? {
            BasicTypeEnum::IntType(t) => Ok(t.const_int(v as u64, true).into()),
            BasicTypeEnum::FloatType(t) => Ok(t.const_float(v as f64).into()),
            other => Err(internal(format!("no constant of {other:?}"))),
        }
    }

    /// The constant `v` with the type (and lanes) of `like`.
    pub fn constant_like(
        &self,
        like: BasicValueEnum<'ctx>,
        v: i64,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let scalar = |ty: BasicTypeEnum<'ctx>| -> Result<BasicValueEnum<'ctx>, Error> {
            match ty {
                BasicTypeEnum::IntType(t) => Ok(t.const_int(v as u64, true).into()),
                BasicTypeEnum::FloatType(t) => Ok(t.const_float(v as f64).into()),
                other => Err(internal(format!("no constant of {other:?}"))),
            }
        };
        match like {
            BasicValueEnum::VectorValue(vv) => {
                let ty = vv.get_type();
                let c = scalar(ty.get_element_type())?;
                let lanes = vec![c; ty.get_size() as usize];
                Ok(VectorType::const_vector(&lanes).into())
            }
            other => scalar(other.get_type()),
        }
    }

    /// `v` in every one of `n` lanes.
    pub fn splat(&mut self, v: BasicValueEnum<'ctx>, n: u32) -> Result<VectorValue<'ctx>, Error> {
        let ty = vec_type(v.get_type(), n)?;
        let i32t = self.ctx.i32_type();
        let undef = ty.get_undef();
        let first = self
            .b
            .build_insert_element(undef, v, i32t.const_zero(), "splat")
            .ll()?;
        let mask = i32t.vec_type(n).const_zero();
        self.b
            .build_shuffle_vector(first, undef, mask, "splat")
            .ll()
    }

    /// `v` as a vector of `n` lanes: as it is when it has lanes, else
    /// splat.
    pub fn with_lanes(
        &mut self,
        v: BasicValueEnum<'ctx>,
        n: u32,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        match lanes_of(v) {
            Some(_) => Ok(v),
            None => Ok(self.splat(v, n)?.into()),
        }
    }

    /// Both values with the same lanes: a scalar is splat against a vector.
    pub fn broadcast2(
        &mut self,
        x: BasicValueEnum<'ctx>,
        y: BasicValueEnum<'ctx>,
    ) -> Result<(BasicValueEnum<'ctx>, BasicValueEnum<'ctx>), Error> {
        match (lanes_of(x), lanes_of(y)) {
            (Some(n), None) => Ok((x, self.splat(y, n)?.into())),
            (None, Some(n)) => Ok((self.splat(x, n)?.into(), y)),
            _ => Ok((x, y)),
        }
    }

    /// `v` converted from dtype `from` to dtype `to` (TIR's `Cast`).
    pub fn convert(
        &mut self,
        v: BasicValueEnum<'ctx>,
        from: DataType,
        to: DataType,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        if from == to {
            return Ok(v);
        }
        if from.is_half() || to.is_half() {
            return self.convert_half(v, from, to);
        }
        let scalar = value_type(self.ctx, to)?;
        let target: BasicTypeEnum = match lanes_of(v) {
            Some(n) => vec_type(scalar, n)?.as_basic_type_enum(),
            None => scalar,
        };
        if to.is_bool() {
            // Anything non-zero is true.
            let zero = self.constant_like(v, 0)?;
            return if from.is_float() {
                self.fcmp(FloatPredicate::UNE, v, zero)
            } else {
                self.icmp(IntPredicate::NE, v, zero)
            };
        }
        let (fb, tb) = (from.bits(), to.bits());
        let op = match (from.is_float(), to.is_float()) {
            (true, true) if tb > fb => Op::FPExt,
            (true, true) if tb < fb => Op::FPTrunc,
            (true, true) => return Ok(v),
            (true, false) if to.is_int() => Op::FPToSI,
            (true, false) => Op::FPToUI,
            (false, true) if from.is_int() => Op::SIToFP,
            (false, true) => Op::UIToFP,
            (false, false) if tb > fb && from.is_int() => Op::SExt,
            (false, false) if tb > fb => Op::ZExt,
            (false, false) if tb < fb => Op::Trunc,
            // Same width, other signedness: the same bits.
            (false, false) => return Ok(v),
        };
        if !(from.is_integer() || from.is_float()) {
            return Err(unsupported(format!("a cast from `{from}` to `{to}`")));
        }
        self.b.build_cast(op, v, target, "cast").ll()
    }

    /// An integer comparison of two values of the same shape.
    pub fn icmp(
        &mut self,
        pred: IntPredicate,
        x: BasicValueEnum<'ctx>,
        y: BasicValueEnum<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let (x, y) = self.broadcast2(x, y)?;
        match (x, y) {
            (BasicValueEnum::IntValue(a), BasicValueEnum::IntValue(b)) => {
                Ok(self.b.build_int_compare(pred, a, b, "icmp").ll()?.into())
            }
            (BasicValueEnum::VectorValue(a), BasicValueEnum::VectorValue(b)) => {
                Ok(self.b.build_int_compare(pred, a, b, "icmp").ll()?.into())
            }
            _ => Err(internal("an integer comparison of non-integers")),
        }
    }

    /// A float comparison of two values of the same shape.
    pub fn fcmp(
        &mut self,
        pred: FloatPredicate,
        x: BasicValueEnum<'ctx>,
        y: BasicValueEnum<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let (x, y) = self.broadcast2(x, y)?;
        match (x, y) {
            (BasicValueEnum::FloatValue(a), BasicValueEnum::FloatValue(b)) => {
                Ok(self.b.build_float_compare(pred, a, b, "fcmp").ll()?.into())
            }
            (BasicValueEnum::VectorValue(a), BasicValueEnum::VectorValue(b)) => {
                Ok(self.b.build_float_compare(pred, a, b, "fcmp").ll()?.into())
            }
            _ => Err(internal("a float comparison of non-floats")),
        }
    }

    /// `c ? t : f`, broadcasting as needed.
    pub fn select(
        &mut self,
        c: BasicValueEnum<'ctx>,
        t: BasicValueEnum<'ctx>,
        f: BasicValueEnum<'ctx>,
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let (t, f) = self.broadcast2(t, f)?;
        let (c, t, f) = match (lanes_of(c), lanes_of(t)) {
            (Some(n), None) => (c, self.splat(t, n)?.into(), self.splat(f, n)?.into()),
            _ => (c, t, f),
        };
        match c {
            BasicValueEnum::IntValue(c) => self.b.build_select(c, t, f, "select").ll(),
            BasicValueEnum::VectorValue(c) => self.b.build_select(c, t, f, "select").ll(),
            _ => Err(internal("a select on a non-bool")),
        }
    }

    /// A call of the overloaded LLVM intrinsic `name` on values of one type.
    pub fn call_intrinsic(
        &mut self,
        name: &str,
        args: &[BasicValueEnum<'ctx>],
    ) -> Result<BasicValueEnum<'ctx>, Error> {
        let first = args
            .first()
            .ok_or_else(|| internal(format!("{name} without arguments")))?;
        let decl = inkwell::intrinsics::Intrinsic::find(name)
            .and_then(|i| i.get_declaration(self.module, &[first.get_type()]))
            .ok_or_else(|| internal(format!("no LLVM intrinsic {name}")))?;
        let args: Vec<_> = args
            .iter()
            .map(|a| a.as_basic_value_enum().into())
            .collect();
        self.b
            .build_call(decl, &args, "call")
            .ll()?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| internal(format!("{name} returned no value")))
    }
}

/// `e` as a bitwise operation on 8- or 16-bit integers that may run on
/// their 32-bit extensions when the result is converted to `to`, a wider
/// integer or a float: `bitwise_and`, `bitwise_or`, `bitwise_xor` and
/// `shift_right`, with every operand of `e`'s own dtype, commute with
/// sign or zero extension (a right shift by an amount in `[bits, 32)`
/// gives 0, or the sign, both ways; further out, the fallback is the same).
/// Not `shift_left` or `bitwise_not`, whose high bits differ.
fn promotable(e: &PrimExpr, to: DataType) -> Option<(&str, &[PrimExpr])> {
    let PrimExprKind::Call(name, args) = e.kind() else {
        return None;
    };
    let d = e.dtype().element_of();
    let narrow = d.is_integer() && !d.is_bool() && matches!(d.bits(), 8 | 16);
    let widened = (to.is_float() && !to.is_half()) || (to.is_integer() && to.bits() > d.bits());
    let commutes = matches!(
        name.as_str(),
        "bitwise_and" | "bitwise_or" | "bitwise_xor" | "shift_right"
    );
    let same = args.iter().all(|a| a.dtype().element_of() == d);
    (narrow && widened && commutes && same).then_some((name.as_str(), args.as_slice()))
}
