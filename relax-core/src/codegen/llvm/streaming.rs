//! Streaming (non-temporal) stores of large outputs.
//!
//! A kernel that writes an output larger than the caches gains nothing from
//! caching it, and an ordinary store first reads every line it writes (the
//! read-for-ownership): a copy moves three bytes per byte copied instead of
//! two. So, as `memcpy` does for large copies, a vector store is emitted
//! with `!nontemporal` (x86 `vmovntps`: written around the caches) when
//!
//! 1. its buffer is a parameter (a tensor of the runtime: 64-byte aligned)
//!    of a static size of at least [`STREAM_MIN_BYTES`];
//! 2. it stores one whole 64-byte vector (16 `float32` lanes);
//! 3. its lane-0 address is provably a multiple of 64 bytes: the offset's
//!    terms without the lane variable and the step's first lane are all
//!    multiples of 16 elements ([`known_divisor`]), since a non-temporal
//!    vector store to an unaligned address faults.
//!
//! Streaming stores are weakly ordered: a function (or outlined parallel
//! body) that emitted one ends with `sfence`, so its writes are visible
//! before it returns to the caller or to the thread pool. Only x86-64 has
//! them; elsewhere every store is ordinary.

use super::stmt::FuncGen;
use super::types::{internal, Ll};
use crate::ir::prim_expr::{PrimExpr, PrimExprKind};
use crate::tir::Buffer;
use inkwell::values::InstructionValue;
use relax_runtime::Error;

/// The smallest output written with streaming stores: 16 MiB, about where
/// an output stops fitting a share of a server's last-level cache (glibc's
/// `memcpy` switches to non-temporal stores near there too).
pub const STREAM_MIN_BYTES: i64 = 32 << 20;

/// The bytes of one streaming vector store (and its alignment).
const STREAM_VECTOR_BYTES: i64 = 64;

/// Whether parameter `buffer` is written with streaming stores (rule 1).
pub(super) fn streams(buffer: &Buffer) -> bool {
    let bytes = buffer.dtype().size_in_bytes() as i64;
    let elements = buffer
        .shape()
        .iter()
        .try_fold(1i64, |acc, d| acc.checked_mul(d.as_int()?));
    cfg!(target_arch = "x86_64")
        && buffer.dtype().bits() >= 8
        && elements
            .and_then(|n| n.checked_mul(bytes))
            .is_some_and(|b| b >= STREAM_MIN_BYTES)
}

/// A number `e` is always a multiple of (0: `e` is always 0).
pub(super) fn known_divisor(e: &PrimExpr) -> i64 {
    use PrimExprKind as K;
    match e.kind() {
        K::IntImm(v) => v.checked_abs().unwrap_or(1),
        K::Add(a, b) | K::Sub(a, b) => gcd(known_divisor(a), known_divisor(b)),
        K::Mul(a, b) => {
            let (x, y) = (known_divisor(a), known_divisor(b));
            if x == 0 || y == 0 {
                0
            } else {
                x.checked_mul(y).unwrap_or(1)
            }
        }
        K::Cast(a) if e.dtype().is_integer() && a.dtype().is_integer() => known_divisor(a),
        _ => 1,
    }
}

/// The greatest common divisor (`gcd(0, x) = x`: 0 is a multiple of
/// everything).
pub(super) fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl<'ctx, 'm> FuncGen<'ctx, 'm> {
    /// Whether a contiguous vector store of `n` lanes to `buffer` at
    /// `offset` streams (module docs, rules 1 to 3).
    pub(super) fn streaming_store(&self, buffer: &Buffer, offset: &PrimExpr, n: u32) -> bool {
        let Some(lanes) = &self.lanes else {
            return false;
        };
        let bytes = buffer.dtype().size_in_bytes() as i64;
        if !self.streaming.contains(&buffer.id())
            || bytes == 0
            || i64::from(n) * bytes != STREAM_VECTOR_BYTES
        {
            return false;
        }
        let zero = PrimExpr::int_of(lanes.var.dtype(), 0);
        let mut map = std::collections::HashMap::new();
        map.insert(lanes.var.clone(), zero);
        let rest = offset.substitute_map(&map);
        // Whole vectors of 64 bytes: `bytes` divides 64.
        let need = STREAM_VECTOR_BYTES / bytes;
        gcd(known_divisor(&rest), lanes.base_divisor) % need == 0
    }

    /// Marks `store` non-temporal, aligned to its 64 bytes.
    pub(super) fn mark_streaming(&mut self, store: InstructionValue<'ctx>) -> Result<(), Error> {
        let kind = self.ctx.get_kind_id("nontemporal");
        let one = self.ctx.i32_type().const_int(1, false);
        let node = self.ctx.metadata_node(&[one.into()]);
        store.set_metadata(node, kind).map_err(internal)?;
        store
            .set_alignment(STREAM_VECTOR_BYTES as u32)
            .map_err(internal)?;
        self.streamed = true;
        Ok(())
    }

    /// `sfence` when this function emitted a streaming store.
    pub(super) fn fence_streams(&mut self) -> Result<(), Error> {
        if !self.streamed {
            return Ok(());
        }
        let f = match self.module.get_function("llvm.x86.sse.sfence") {
            Some(f) => f,
            None => {
                let t = self.ctx.void_type().fn_type(&[], false);
                self.module.add_function("llvm.x86.sse.sfence", t, None)
            }
        };
        self.b.build_call(f, &[], "").ll()?;
        Ok(())
    }
}
