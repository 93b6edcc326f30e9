//! `Vectorized` loops as LLVM vector code.
//!
//! 1. What is vectorized here: a loop with a constant positive extent whose
//!    body is a single `BufferStore` (what an elementwise block lowers to)
//!    with no load guarded by a `Select` or `if_then_else`.
//!    Its iterations run as the lanes of one vector step: see
//!    [`super::memory`] for how each access becomes a vector load/store, a
//!    broadcast or a gather/scatter.
//! 2. Steps have at most [`MAX_LANES`] lanes: a longer loop runs a loop of
//!    full steps and then one shorter step for the remainder.
//! 3. Two nested `Vectorized` loops that transpose are one block of
//!    vectors transposed in registers ([`super::transpose`]).
//! 4. Any other `Vectorized` loop is emitted as a scalar loop with
//!    `llvm.loop.vectorize.enable`, so LLVM's loop vectorizer decides.
//! 5. [`linear_coeff`] is the affine analysis that tells contiguous accesses
//!    apart: the coefficient of the loop variable in an offset, when the
//!    offset is affine in it with a constant coefficient.

use super::metadata::LoopHint;
use super::stmt::{FuncGen, Lanes};
use super::streaming::{gcd, known_divisor};
use super::types::Ll;
use crate::ir::prim_expr::{PrimExpr, PrimExprKind, TirVar};
use crate::tir::Stmt;
use inkwell::values::IntValue;
use relax_runtime::Error;

/// The most lanes of one vector step: a 512-bit register of `float32`;
/// LLVM splits wider vectors for narrower machines.
pub(super) const MAX_LANES: i64 = 16;

/// Whether `e` mentions `v`.
pub(super) fn uses_var(e: &PrimExpr, v: &TirVar) -> bool {
    match e.kind() {
        PrimExprKind::Var(x) => x == v,
        _ => e.children().into_iter().any(|c| uses_var(c, v)),
    }
}

/// `Some(c)` when `e == c * v + (terms without v)` for a constant `c`.
pub(super) fn linear_coeff(e: &PrimExpr, v: &TirVar) -> Option<i64> {
    use PrimExprKind as K;
    if !uses_var(e, v) {
        return Some(0);
    }
    match e.kind() {
        K::Var(_) => Some(1),
        K::Add(a, b) => linear_coeff(a, v)?.checked_add(linear_coeff(b, v)?),
        K::Sub(a, b) => linear_coeff(a, v)?.checked_sub(linear_coeff(b, v)?),
        K::Mul(a, b) => match (a.as_int(), b.as_int()) {
            (Some(k), _) => linear_coeff(b, v)?.checked_mul(k),
            (_, Some(k)) => linear_coeff(a, v)?.checked_mul(k),
            _ => None,
        },
        // A cast to an integer at least as wide keeps the value.
        K::Cast(a)
            if e.dtype().is_integer()
                && a.dtype().is_integer()
                && !a.dtype().is_bool()
                && e.dtype().bits() >= a.dtype().bits()
                && (e.dtype().is_int() || a.dtype().is_uint()) =>
        {
            linear_coeff(a, v)
        }
        _ => None,
    }
}

/// Whether `e` has a load that only runs under a condition (a side of a
/// `Select` or `if_then_else`): vector steps compute every side, so such a
/// body is left to LLVM's vectorizer, which masks the loads. A load on a
/// side that the condition makes too (relu's `x < 0 ? 0 : x`, as
/// `LegalizeOps` writes it with its NaN test) is not guarded: its address
/// is read whichever side is chosen.
pub(super) fn guarded_load(e: &PrimExpr) -> bool {
    let sides_guarded = |cond: &PrimExpr, sides: &[&PrimExpr]| {
        let mut made = Vec::new();
        loads_of(cond, &mut made);
        let mut on_sides = Vec::new();
        for side in sides {
            loads_of(side, &mut on_sides);
        }
        on_sides.iter().any(|l| !made.contains(l))
    };
    let guarded = match e.kind() {
        PrimExprKind::Select(c, t, f) => sides_guarded(c, &[t, f]),
        PrimExprKind::Call(name, args) if name == "if_then_else" && !args.is_empty() => {
            sides_guarded(&args[0], &args[1..].iter().collect::<Vec<_>>())
        }
        _ => false,
    };
    guarded || e.children().into_iter().any(guarded_load)
}

/// The loads in `e` (as expressions), outermost first.
pub(super) fn loads_of(e: &PrimExpr, out: &mut Vec<PrimExpr>) {
    if matches!(e.kind(), PrimExprKind::BufferLoad(..)) {
        out.push(e.clone());
    }
    for c in e.children() {
        loads_of(c, out);
    }
}

impl<'ctx, 'm> FuncGen<'ctx, 'm> {
    /// A `Vectorized` loop. See the module docs.
    pub fn vectorized_for(
        &mut self,
        var: &TirVar,
        min: &PrimExpr,
        extent: &PrimExpr,
        body: &Stmt,
    ) -> Result<(), Error> {
        if self.transpose_block(var, min, extent, body)? {
            return Ok(());
        }
        let d = Self::loop_dtype(var)?;
        let n = match (extent.as_int(), body) {
            (Some(n), Stmt::BufferStore { value, .. })
                if n > 0 && self.lanes.is_none() && !guarded_load(value) =>
            {
                n
            }
            _ => return self.hinted_for(var, min, extent, body),
        };
        let start = self.scalar_of(min, d)?;
        let width = n.min(MAX_LANES);
        let (steps, rest) = (n / width, n % width);
        let t = start.get_type();
        let first = known_divisor(min);
        if steps == 1 {
            self.vector_step(var, start, width as u32, first, body)?;
        } else {
            let zero = t.const_zero();
            let count = t.const_int(steps as u64, false);
            self.build_loop(zero, count, d.is_int(), LoopHint::None, |g, s| {
                let w = t.const_int(width as u64, false);
                let off = g.b.build_int_mul(s, w, "step").ll()?;
                let base = g.b.build_int_add(start, off, "base").ll()?;
                g.vector_step(var, base, width as u32, gcd(first, width), body)
            })?;
        }
        if rest > 0 {
            let done = t.const_int((steps * width) as u64, false);
            let base = self.b.build_int_add(start, done, "base").ll()?;
            let done = gcd(first, steps * width);
            self.vector_step(var, base, rest as u32, done, body)?;
        }
        Ok(())
    }

    fn hinted_for(
        &mut self,
        var: &TirVar,
        min: &PrimExpr,
        extent: &PrimExpr,
        body: &Stmt,
    ) -> Result<(), Error> {
        let d = Self::loop_dtype(var)?;
        let start = self.scalar_of(min, d)?;
        let ext = self.scalar_of(extent, d)?;
        let end = self.b.build_int_add(start, ext, "end").ll()?;
        self.build_loop(start, end, d.is_int(), LoopHint::Vectorize, |g, i| {
            let old = g.bind(var, i.into());
            let r = g.stmt(body);
            g.unbind(var, old);
            r
        })
    }

    fn vector_step(
        &mut self,
        var: &TirVar,
        base: IntValue<'ctx>,
        n: u32,
        base_divisor: i64,
        body: &Stmt,
    ) -> Result<(), Error> {
        self.lanes = Some(Lanes {
            var: var.clone(),
            base,
            n,
            base_divisor,
        });
        let r = self.stmt(body);
        self.lanes = None;
        r
    }
}
