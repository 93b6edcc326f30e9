//! Four consecutive bytes read as one 32-bit word, in a vector step: the
//! operands of `T.dpbusd`.
//!
//! TIR has no byte buffer viewed as words (TVM writes
//! `B.vload([0, 0], "int8x64")` and reinterprets it), so a word is written
//! as arithmetic on its bytes, the first in the lowest byte:
//!
//! ```text
//! i32(B[o]) & 255  +  (i32(B[o + 1]) & 255) · 256  +  (i32(B[o + 2]) & 255) · 65536  +  i32(B[o + 3]) · 16777216
//! ```
//!
//! with `B` of `uint8` or `int8` (a `uint8` byte needs no mask: its cast
//! zero-extends; the top byte needs none either way, its high bits fall
//! off the word), the terms in any order, a factor written `x · 2^8t` or
//! `T.shift_left(x, 8t)`. Lane by lane those are four byte loads, each
//! widened, shifted and added.
//!
//! Such a sum is read as whole 32-bit loads (x86 and AArch64 are
//! little-endian: the first byte in memory is the lowest of its word):
//!
//! - when `o` steps by exactly 4 from lane to lane, the `n` words of a
//!   step are the `4n` consecutive bytes from lane 0's `o`: one vector load
//!   of `4n` bytes, reinterpreted as `n` words (the words of a quantized
//!   matrix-vector product);
//! - when `o` is the same in every lane (or outside a vector step), one
//!   word, broadcast by the operation that uses it (`tensorize`'s VNNI
//!   intrinsic's row of `A`);
//! - otherwise one 32-bit load per lane (its `B` words, a row of `K`
//!   bytes apart), where the generic code loads and combines four bytes
//!   per lane.
//!
//! Any other form (bytes out of order or from two buffers, other widths)
//! is left to the generic lowering, which computes the same value.

use super::stmt::FuncGen;
use super::types::{internal, Ll};
use crate::arith::analyzer::Analyzer;
use crate::ir::prim_expr::{PrimExpr, PrimExprKind as K};
use crate::tir::affine::{linear_coeff, uses_var};
use crate::tir::Buffer;
use inkwell::values::{BasicValue, BasicValueEnum};
use inkwell::AddressSpace;
use relax_runtime::{DataType, Error};

/// One term of a word: byte `t` of it, read from `buffer` at the flat
/// `offset`.
struct ByteTerm {
    t: i64,
    buffer: Buffer,
    offset: PrimExpr,
}

impl<'ctx, 'm> FuncGen<'ctx, 'm> {
    /// `e` read as whole words when it is a word of four consecutive bytes
    /// (see the module docs); `None` otherwise.
    pub(super) fn word_load(
        &mut self,
        e: &PrimExpr,
    ) -> Result<Option<BasicValueEnum<'ctx>>, Error> {
        if e.dtype() != DataType::i32() || cfg!(target_endian = "big") {
            return Ok(None);
        }
        let mut terms = Vec::new();
        flatten_sum(e, &mut terms);
        if terms.len() != 4 {
            return Ok(None);
        }
        let mut bytes = Vec::with_capacity(4);
        for term in terms {
            let Some(byte) = self.byte_term(term)? else {
                return Ok(None);
            };
            bytes.push(byte);
        }
        bytes.sort_by_key(|b| b.t);
        let first = &bytes[0];
        let an = Analyzer::new();
        let in_order = bytes.iter().enumerate().all(|(t, b)| {
            b.t == t as i64
                && b.buffer == first.buffer
                && an
                    .simplify(&(b.offset.clone() - first.offset.clone()))
                    .as_int()
                    == Some(t as i64)
        });
        if !in_order {
            return Ok(None);
        }
        let (buffer, offset) = (first.buffer.clone(), first.offset.clone());
        let base = self.buffer_ptr(&buffer)?;
        let i32t = self.ctx.i32_type();
        let word_ptr = i32t.ptr_type(AddressSpace::default());
        let lanes = self.lanes.as_ref().map(|l| (l.var.clone(), l.n));
        let per_lane = match &lanes {
            None => false,
            Some((var, n)) => match linear_coeff(&offset, var) {
                Some(0) => false,
                Some(4) => {
                    // Consecutive words: one load of their bytes.
                    let raw = self.vector_load(&buffer, base, &offset, 4 * n)?;
                    let words = i32t.vec_type(*n);
                    let v = self
                        .b
                        .build_bit_cast(raw.into_vector_value(), words, "words");
                    return Ok(Some(v.ll()?));
                }
                _ => uses_var(&offset, var),
            },
        };
        if !per_lane {
            // The same word in every lane (or no vector step): one load.
            let off = self.scalar_of(&offset, DataType::i64())?;
            let p = self.element(base, off)?;
            let p = self.b.build_pointer_cast(p, word_ptr, "wptr").ll()?;
            let w = self.b.build_load(p, "word").ll()?;
            unaligned(w)?;
            return Ok(Some(w));
        }
        // A word per lane from anywhere: one 32-bit load each.
        let offsets = self.lane_offsets(&offset)?;
        let mut acc = i32t.vec_type(offsets.len() as u32).get_undef();
        for (k, off) in offsets.into_iter().enumerate() {
            let p = self.element(base, off)?;
            let p = self.b.build_pointer_cast(p, word_ptr, "wptr").ll()?;
            let w = self.b.build_load(p, "word").ll()?;
            unaligned(w)?;
            let idx = i32t.const_int(k as u64, false);
            acc = self.b.build_insert_element(acc, w, idx, "words").ll()?;
        }
        Ok(Some(acc.into()))
    }

    /// `term` as byte `t` of a word: `byte · 2^8t` (or shifted left by
    /// `8t`) where `byte` is a widened `uint8` load, or a widened `int8`
    /// load masked with 255 (unmasked only as the top byte).
    fn byte_term(&self, term: &PrimExpr) -> Result<Option<ByteTerm>, Error> {
        let (byte, t) = match term.kind() {
            K::Mul(a, b) => match (a.as_int(), b.as_int()) {
                (_, Some(c)) => (a, byte_shift(c)),
                (Some(c), _) => (b, byte_shift(c)),
                _ => return Ok(None),
            },
            K::Call(name, args) if name == "shift_left" && args.len() == 2 => {
                match args[1].as_int() {
                    Some(s) if s % 8 == 0 => (&args[0], Some(s / 8)),
                    _ => return Ok(None),
                }
            }
            _ => (term, Some(0)),
        };
        let Some(t) = t.filter(|t| (0..4).contains(t)) else {
            return Ok(None);
        };
        let (widened, masked) = match byte.kind() {
            K::Call(name, args) if name == "bitwise_and" && args.len() == 2 => {
                match (args[0].as_int(), args[1].as_int()) {
                    (_, Some(255)) => (&args[0], true),
                    (Some(255), _) => (&args[1], true),
                    _ => return Ok(None),
                }
            }
            _ => (byte, false),
        };
        let K::Cast(inner) = widened.kind() else {
            return Ok(None);
        };
        let K::BufferLoad(buffer, indices) = inner.kind() else {
            return Ok(None);
        };
        let exact = match buffer.dtype() {
            d if d == DataType::uint(8) => true,
            d if d == DataType::int(8) => masked || t == 3,
            _ => false,
        };
        if !exact || widened.dtype() != DataType::i32() {
            return Ok(None);
        }
        let offset = self.offset_expr(buffer, indices)?;
        Ok(Some(ByteTerm {
            t,
            buffer: buffer.clone(),
            offset,
        }))
    }
}

/// Marks a word's load as aligned to its byte only.
fn unaligned(load: BasicValueEnum<'_>) -> Result<(), Error> {
    load.as_instruction_value()
        .ok_or_else(|| internal("a word load that is not an instruction"))?
        .set_alignment(1)
        .map_err(internal)
}

/// The byte a factor `c` shifts to: `t` when `c` is `2^8t`.
fn byte_shift(c: i64) -> Option<i64> {
    (0..4).find(|t| c == 1 << (8 * t))
}

/// The terms of a (left- or right-nested) sum.
fn flatten_sum<'e>(e: &'e PrimExpr, out: &mut Vec<&'e PrimExpr>) {
    match e.kind() {
        K::Add(a, b) => {
            flatten_sum(a, out);
            flatten_sum(b, out);
        }
        _ => out.push(e),
    }
}
