//! Two nested `Vectorized` loops as a block of vectors transposed in
//! registers: the whole tiles of a transpose (`DefaultSchedule`'s
//! `injective.rs`).
//!
//! 1. What is a block: an outer `Vectorized` loop `a` whose body is a
//!    `Vectorized` loop `b` of the same constant extent `T`, a power of two
//!    of at most [`MAX_LANES`], whose body is one `BufferStore` contiguous
//!    in `b` (with no load guarded by a `Select`), where some load is
//!    contiguous in `a` and strided in `b` (a *transposed* load). The
//!    iterations are independent (the semantics of `Vectorized`).
//! 2. How it runs: each transposed load is read as `T` vectors along `a`
//!    (one per value of `b`: whole cache lines, where a gather would read
//!    one element of each) and transposed in registers into `T` vectors
//!    along `b`. Then the store runs once per value of `a` as a vector step
//!    along `b` (see [`super::vectorize`]), the transposed loads taking
//!    their vector for that `a`, every other access as in any step.
//! 3. The transposition is `log2 T` rounds of interleaving rows `i` and
//!    `i + T/2` (LLVM `shufflevector`s the x86 back end turns into
//!    unpack/permute instructions): with the element at row `r`, column
//!    `c` addressed by the bits `r | c`, one round rotates the address left
//!    by one bit, so `log2 T` rounds give `c | r`.

use super::stmt::{FuncGen, Lanes};
use super::streaming::known_divisor;
use super::types::{internal, Ll};
use super::vectorize::{guarded_load, linear_coeff, loads_of, MAX_LANES};
use crate::ir::prim_expr::{PrimExpr, PrimExprKind, TirVar};
use crate::tir::{Buffer, ForKind, Stmt};
use inkwell::types::VectorType;
use inkwell::values::{BasicValueEnum, IntValue, VectorValue};
use relax_runtime::Error;

/// A transposed load and its vector for the current row of the block.
pub(super) struct Transposed<'ctx> {
    pub buffer: Buffer,
    pub indices: Vec<PrimExpr>,
    pub value: VectorValue<'ctx>,
}

impl<'ctx, 'm> FuncGen<'ctx, 'm> {
    /// Emits the loop over `a` as a block when it is one (module docs);
    /// `Ok(false)`, having emitted nothing, when it is not.
    pub(super) fn transpose_block(
        &mut self,
        a: &TirVar,
        a_min: &PrimExpr,
        a_extent: &PrimExpr,
        body: &Stmt,
    ) -> Result<bool, Error> {
        let Stmt::For {
            loop_var: b,
            min: b_min,
            extent: b_extent,
            kind: ForKind::Vectorized,
            body: store,
            ..
        } = body
        else {
            return Ok(false);
        };
        let Stmt::BufferStore {
            buffer,
            indices,
            value,
        } = store.as_ref()
        else {
            return Ok(false);
        };
        let t = match (a_extent.as_int(), b_extent.as_int()) {
            (Some(x), Some(y)) if x == y && (2..=MAX_LANES).contains(&x) && x.count_ones() == 1 => {
                x
            }
            _ => return Ok(false),
        };
        if self.lanes.is_some() || !self.transposed.is_empty() || guarded_load(value) {
            return Ok(false);
        }
        let contiguous_in_b = linear_coeff(&self.offset_expr(buffer, indices)?, b) == Some(1);
        let mut found = Vec::new();
        loads_of(value, &mut found);
        let mut transposed: Vec<(Buffer, Vec<PrimExpr>)> = Vec::new();
        for load in &found {
            let PrimExprKind::BufferLoad(buf, idx) = load.kind() else {
                continue;
            };
            let offset = self.offset_expr(buf, idx)?;
            let strided_in_b = !matches!(linear_coeff(&offset, b), Some(0 | 1));
            let key = (buf.clone(), idx.to_vec());
            if !buf.dtype().is_bool()
                && strided_in_b
                && linear_coeff(&offset, a) == Some(1)
                && !transposed.contains(&key)
            {
                transposed.push(key);
            }
        }
        if !contiguous_in_b || transposed.is_empty() {
            return Ok(false);
        }
        let d = Self::loop_dtype(a)?;
        let a0 = self.scalar_of(a_min, d)?;
        let b0 = self.scalar_of(b_min, Self::loop_dtype(b)?)?;
        // Each transposed load as `t` vectors along `b`, one per `a`.
        let mut columns = Vec::new();
        for (buf, idx) in &transposed {
            let mut rows = Vec::new();
            for k in 0..t {
                let at = self.plus(b0, k)?;
                let old = self.bind(b, at.into());
                self.lanes = Some(Lanes {
                    var: a.clone(),
                    base: a0,
                    n: t as u32,
                    base_divisor: known_divisor(a_min),
                });
                let row = self.load(buf, idx);
                self.lanes = None;
                self.unbind(b, old);
                rows.push(vector(row?)?);
            }
            columns.push(self.transpose(rows)?);
        }
        for k in 0..t as usize {
            let at = self.plus(a0, k as i64)?;
            let old = self.bind(a, at.into());
            self.transposed = transposed
                .iter()
                .zip(&columns)
                .map(|((buffer, indices), cols)| Transposed {
                    buffer: buffer.clone(),
                    indices: indices.clone(),
                    value: cols[k],
                })
                .collect();
            self.lanes = Some(Lanes {
                var: b.clone(),
                base: b0,
                n: t as u32,
                base_divisor: known_divisor(b_min),
            });
            let r = self.stmt(store);
            self.lanes = None;
            self.transposed.clear();
            self.unbind(a, old);
            r?;
        }
        Ok(true)
    }

    /// The vector a transposed load of the current row has, if any.
    pub(super) fn transposed_load(
        &self,
        buffer: &Buffer,
        indices: &[PrimExpr],
    ) -> Option<BasicValueEnum<'ctx>> {
        self.transposed
            .iter()
            .find(|t| t.buffer == *buffer && t.indices == indices)
            .map(|t| t.value.into())
    }

    fn plus(&self, base: IntValue<'ctx>, k: i64) -> Result<IntValue<'ctx>, Error> {
        let c = base.get_type().const_int(k as u64, true);
        self.b.build_int_add(base, c, "lane").ll()
    }

    /// `rows[r]` lane `c` becomes `result[c]` lane `r` (module docs, 3).
    fn transpose(&self, rows: Vec<VectorValue<'ctx>>) -> Result<Vec<VectorValue<'ctx>>, Error> {
        let t = rows.len();
        let half = t / 2;
        let i32t = self.ctx.i32_type();
        let mask = |from: usize| {
            let lanes: Vec<_> = (0..half)
                .flat_map(|c| [from + c, t + from + c])
                .map(|x| i32t.const_int(x as u64, false))
                .collect();
            VectorType::const_vector(&lanes)
        };
        let (low, high) = (mask(0), mask(half));
        let mut v = rows;
        for _ in 0..t.trailing_zeros() {
            let mut next = Vec::with_capacity(t);
            for i in 0..half {
                let (x, y) = (v[i], v[i + half]);
                next.push(self.b.build_shuffle_vector(x, y, low, "zip_lo").ll()?);
                next.push(self.b.build_shuffle_vector(x, y, high, "zip_hi").ll()?);
            }
            v = next;
        }
        Ok(v)
    }
}

fn vector(v: BasicValueEnum<'_>) -> Result<VectorValue<'_>, Error> {
    match v {
        BasicValueEnum::VectorValue(v) => Ok(v),
        _ => Err(internal("a row of a transposed load that is not a vector")),
    }
}
