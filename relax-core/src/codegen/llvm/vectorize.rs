//! `Vectorized` loops as LLVM vector code.
//!
//! 1. What is vectorized here: a loop whose body is a single `BufferStore`
//!    (what an elementwise block lowers to) with no load guarded by a
//!    `Select` or `if_then_else`, of a constant positive extent or of a
//!    symbolic one (a sequence length, a batch).
//!    Its iterations run as the lanes of vector steps: see
//!    [`super::memory`] for how each access becomes a vector load/store, a
//!    broadcast or a gather/scatter.
//! 2. Steps have at most [`MAX_LANES`] lanes: a longer constant loop runs a
//!    loop of full steps and then one shorter step for the remainder. A
//!    symbolic extent `n` runs `n / MAX_LANES` full steps while at least
//!    that many iterations remain, then the `n % MAX_LANES` left over as a
//!    scalar loop (the same body with the loop variable a scalar); a
//!    negative extent runs nothing, as a serial loop would. Without
//!    AVX-512 a step of 9 to 15 lanes runs as a step of 8 and one of the
//!    rest (see `vector_step`).
//! 3. Two nested `Vectorized` loops that transpose are one block of
//!    vectors transposed in registers ([`super::transpose`]).
//! 4. Any other `Vectorized` loop (a body of several statements, a
//!    guarded load, a loop nested in a vector step) is emitted as a scalar loop with
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
use inkwell::IntPredicate;
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
        let one_store = matches!(body, Stmt::BufferStore { value, .. }
            if self.lanes.is_none() && !guarded_load_in(value, Some(var)));
        let n = match extent.as_int() {
            Some(n) if n > 0 && one_store => n,
            None if one_store => return self.symbolic_vector_for(var, min, extent, body),
            _ => return self.serial_for(var, min, extent, body, LoopHint::Vectorize),
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

    /// A vectorizable loop of symbolic extent (item 2 of the module docs):
    /// full steps of [`MAX_LANES`], then a scalar loop over the rest.
    fn symbolic_vector_for(
        &mut self,
        var: &TirVar,
        min: &PrimExpr,
        extent: &PrimExpr,
        body: &Stmt,
    ) -> Result<(), Error> {
        let d = Self::loop_dtype(var)?;
        let start = self.scalar_of(min, d)?;
        let ext = self.scalar_of(extent, d)?;
        let t = start.get_type();
        let zero = t.const_zero();
        // A negative extent runs nothing: counted as 0, so that the
        // unsigned step count cannot wrap.
        let ext = if d.is_int() {
            let neg = self
                .b
                .build_int_compare(IntPredicate::SLT, ext, zero, "negative")
                .ll()?;
            self.b
                .build_select(neg, zero, ext, "extent")
                .ll()?
                .into_int_value()
        } else {
            ext
        };
        let width = t.const_int(MAX_LANES as u64, false);
        let steps = self.b.build_int_unsigned_div(ext, width, "steps").ll()?;
        let aligned = gcd(known_divisor(min), MAX_LANES);
        self.build_loop(zero, steps, d.is_int(), LoopHint::None, |g, s| {
            let off = g.b.build_int_mul(s, width, "step").ll()?;
            let base = g.b.build_int_add(start, off, "base").ll()?;
            g.vector_step(var, base, MAX_LANES as u32, aligned, body)
        })?;
        let done = self.b.build_int_mul(steps, width, "done").ll()?;
        let rest = self.b.build_int_add(start, done, "rest").ll()?;
        let end = self.b.build_int_add(start, ext, "end").ll()?;
        // At most MAX_LANES - 1 iterations: not worth LLVM's vectorizer.
        self.loop_over(var, rest, end, d.is_int(), LoopHint::None, body)
    }

    /// One step of `n` lanes from `base`, whose known divisor is
    /// `base_divisor`.
    fn vector_step(
        &mut self,
        var: &TirVar,
        base: IntValue<'ctx>,
        n: u32,
        base_divisor: i64,
        body: &Stmt,
    ) -> Result<(), Error> {
        if !self.avx512 && n > 8 && !n.is_multiple_of(8) {
            // Without AVX-512, a step of 9 to 15 lanes runs as a step of 8
            // and one of the rest: as one 9-lane step, the ninth lane of a
            // padded depthwise window's sum came out wrong on an AVX2 CPU
            // (Zen 3, LLVM 14; `depthwise_conv2d_is_a_window_reduction`).
            // Its masked loads alone, compiled and run apart, were right.
            self.vector_step(var, base, 8, base_divisor, body)?;
            let eight = base.get_type().const_int(8, false);
            let base = self.b.build_int_add(base, eight, "base").ll()?;
            return self.vector_step(var, base, n - 8, gcd(base_divisor, 8), body);
        }
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
