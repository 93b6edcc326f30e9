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
//! 5. The affine analysis that tells contiguous accesses apart, and the
//!    test for guarded loads, are [`crate::tir::affine`]'s.

use super::metadata::LoopHint;
use super::stmt::{FuncGen, Lanes};
use super::streaming::{gcd, known_divisor};
use super::types::Ll;
use crate::ir::prim_expr::{PrimExpr, TirVar};
pub(super) use crate::tir::affine::{
    guarded_load, guarded_load_in, linear_coeff, loads_of, uses_var,
};
use crate::tir::Stmt;
use inkwell::values::IntValue;
use relax_runtime::Error;

/// The most lanes of one vector step: a 512-bit register of `float32`;
/// LLVM splits wider vectors for narrower machines.
pub(super) const MAX_LANES: i64 = 16;

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
                if n > 0 && self.lanes.is_none() && !guarded_load_in(value, Some(var)) =>
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
