//! Epilogues: an elementwise stage after a reduction, applied where the
//! reduction's final value is known (TVM's `reverse_compute_inline` of a
//! matmul's bias and activation into its write-back).
//!
//! A fused kernel (FuseTIR's `fused_matmul_add_relu`) is a sequence of
//! stages in its root block: a reduction writing an intermediate `T`, then
//! an injective stage reading `T` and writing the output `O`. When
//!
//! 1. the reduction writes `T` at exactly its spatial variables, in order,
//! 2. the next stage is an injective canonical nest over the same extents
//!    (provably equal) that reads `T` only at its own spatial variables, in
//!    order, and
//! 3. no other stage reads `T`,
//!
//! the two become one [`Nest`] with an [`Epilogue`]: the schedules store
//! `O[…] = epilogue(value)` where they would have stored `T[…] = value`
//! (the register tile's write-back, a dot product's result), so the bias
//! and the activation run on values in registers and `T` is never written.
//! The schedules that accumulate in the output (a wide row, the plain
//! reduction) still write `T` and apply the epilogue right after each
//! point's reduction, while it is in cache. `T`'s allocation is dropped
//! when the scheduled code no longer touches it.

use super::knobs::Knobs;
use super::nest::Nest;
use super::util::*;
use crate::ir::prim_expr::{PrimExpr, TirVar};
use crate::tir::buffer_uses::{expr_reads, stmt_uses};
use crate::tir::{Buffer, Stmt};
use std::collections::HashMap;

/// The stage after a reduction, in terms of the reduction's spatial
/// variables: `buffer[indices] = value`, where `value` reads the
/// reduction's result as the variable `result`.
#[derive(Clone)]
pub(super) struct Epilogue {
    pub(super) buffer: Buffer,
    pub(super) indices: Vec<PrimExpr>,
    pub(super) value: PrimExpr,
    pub(super) result: TirVar,
}

impl Nest {
    /// The reduction's final `value` stored at the point `map` binds: to
    /// its own buffer, or through the epilogue to the epilogue's.
    pub(super) fn final_store(&self, map: &HashMap<TirVar, PrimExpr>, value: PrimExpr) -> Stmt {
        match &self.epilogue {
            None => Stmt::BufferStore {
                buffer: self.buffer.clone(),
                value,
                indices: self.indices.iter().map(|e| e.substitute_map(map)).collect(),
            },
            Some(epi) => {
                let mut m = map.clone();
                m.insert(epi.result.clone(), value);
                Stmt::BufferStore {
                    buffer: epi.buffer.clone(),
                    value: epi.value.substitute_map(&m),
                    indices: epi.indices.iter().map(|e| e.substitute_map(map)).collect(),
                }
            }
        }
    }

    /// After a schedule that accumulated in the output at the point `map`
    /// binds: the epilogue applied to it (nothing without an epilogue).
    pub(super) fn epilogue_after(&self, map: &HashMap<TirVar, PrimExpr>) -> Option<Stmt> {
        self.epilogue.as_ref()?;
        let own = PrimExpr::load(
            &self.buffer,
            self.indices.iter().map(|e| e.substitute_map(map)).collect(),
        );
        Some(self.final_store(map, own))
    }
}

/// Stage `i` of `stages` with the next one as its epilogue, if the module
/// docs' conditions hold; `allocated` are the root block's buffers.
pub(super) fn with_epilogue(
    stages: &[Stmt],
    i: usize,
    allocated: &[Buffer],
    vector_bits: u32,
    knobs: Knobs,
) -> Option<Nest> {
    let mut producer = Nest::of(stages.get(i)?, vector_bits, knobs)?;
    let consumer = Nest::of(stages.get(i + 1)?, vector_bits, knobs)?;
    let t = producer.buffer.clone();
    if producer.reduce.is_empty()
        || !consumer.reduce.is_empty()
        || !allocated.contains(&t)
        || consumer.buffer == t
        || producer.spatial.len() != consumer.spatial.len()
    {
        return None;
    }
    let own = |vars: Vec<&TirVar>, indices: &[PrimExpr]| {
        indices.len() == vars.len()
            && indices
                .iter()
                .zip(&vars)
                .all(|(e, v)| e.as_var() == Some(*v))
    };
    if !own(
        producer.spatial.iter().map(|a| &a.var).collect(),
        &producer.indices,
    ) {
        return None;
    }
    let same_extents = producer
        .spatial
        .iter()
        .zip(&consumer.spatial)
        .all(|(p, c)| same_extent(&p.extent, &c.extent));
    if !same_extents {
        return None;
    }
    let mut loads = Vec::new();
    collect_loads(&consumer.value, &mut loads);
    let consumer_vars: Vec<&TirVar> = consumer.spatial.iter().map(|a| &a.var).collect();
    if !loads
        .iter()
        .filter(|(b, _)| *b == t)
        .all(|(_, idx)| own(consumer_vars.clone(), idx))
    {
        return None;
    }
    if consumer.indices.iter().any(|e| expr_reads(e, &t)) {
        return None;
    }
    // No other stage reads `T`.
    let elsewhere = stages
        .iter()
        .enumerate()
        .filter(|(k, _)| *k != i && *k != i + 1)
        .any(|(_, s)| stmt_uses(s, &t));
    if elsewhere {
        return None;
    }
    let result = TirVar::with_dtype(format!("{}_result", t.name()), t.dtype());
    let rename: HashMap<TirVar, PrimExpr> = consumer
        .spatial
        .iter()
        .zip(&producer.spatial)
        .map(|(c, p)| (c.var.clone(), PrimExpr::var(&p.var)))
        .collect();
    let value = replace_loads(&consumer.value, &t, &PrimExpr::var(&result)).substitute_map(&rename);
    producer.epilogue = Some(Epilogue {
        buffer: consumer.buffer.clone(),
        indices: consumer
            .indices
            .iter()
            .map(|e| e.substitute_map(&rename))
            .collect(),
        value,
        result,
    });
    Some(producer)
}
