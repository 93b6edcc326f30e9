//! A matrix product whose weight is shared by its batch runs as one
//! product: the batch axes fold into the rows (TVM's `fuse` of the batch
//! and row loops, done before the product is scheduled).
//!
//! `C[b, i, j] = Σ_k A[b, i, k] · B[k, j]`, `B` free of `b`, is one matrix
//! product of `extent(b) · extent(i)` rows:
//!
//! ```text
//! C[f // I, f % I, j] = Σ_k A[f // I, f % I, k] · B[k, j]     f < extent(b) · I
//! ```
//!
//! which the schedules (the packed GEMM above all) tile as one matrix.
//! Without it, a 1×1 convolution in NHWC written as a matmul
//! (`(1, 7, 7, 320) × (320, 1280)`) is 7 products of 7 rows each, and the
//! register tile of 6 rows runs a second tile for one row of each; a
//! weight that is not prepacked is packed once, not once per batch.
//!
//! Fusing two spatial loops never changes a value: every output element
//! is still computed once, from the same loads in the same order. The
//! fold applies when the row count `I` is a constant (the divisions are
//! then by a constant, which the simplifier takes apart again in flat
//! offsets) and repeats while batch axes are left.

use super::nest::{Axis, Nest};
use super::util::*;
use crate::arith::analyzer::Analyzer;
use crate::ir::prim_expr::{PrimExpr, TirVar};
use std::collections::HashMap;

impl Nest {
    /// This nest with every batch axis that `B` does not read folded into
    /// the row axis, or `None` when there is none (see the module docs).
    pub(super) fn rows_folded(&self) -> Option<Nest> {
        let mut nest = self.fold_one_batch_axis()?;
        while let Some(next) = nest.fold_one_batch_axis() {
            nest = next;
        }
        Some(nest)
    }

    /// The innermost batch axis folded into the rows.
    fn fold_one_batch_axis(&self) -> Option<Nest> {
        let n = self.spatial.len();
        if n < 3 || self.reduce.len() != 1 {
            return None;
        }
        let (b_axis, i, j) = (
            &self.spatial[n - 3],
            &self.spatial[n - 2],
            &self.spatial[n - 1],
        );
        let (a, b) = self.product_operands(i, j)?;
        let uses = |e: &PrimExpr, a: &Axis| uses_var(e, &a.var);
        // `B` shared by the batch, `A` and `C` not (else this is no batch
        // of products).
        if uses(b, b_axis) || !uses(a, b_axis) || !self.indices.iter().any(|e| uses(e, b_axis)) {
            return None;
        }
        let rows = i.extent.as_int()?;
        let dt = i.var.dtype();
        let name = format!("{}_{}", b_axis.var.name(), i.var.name());
        let folded = Axis {
            var: TirVar::with_dtype(name.clone(), dt),
            loop_var: TirVar::with_dtype(name, i.loop_var.dtype()),
            extent: Analyzer::new()
                .simplify(&(b_axis.extent.clone().cast(dt) * PrimExpr::int_of(dt, rows))),
        };
        let f = PrimExpr::var(&folded.var);
        let rows = PrimExpr::int_of(dt, rows);
        let map: HashMap<TirVar, PrimExpr> = [
            (
                b_axis.var.clone(),
                f.clone().floordiv(rows.clone()).cast(b_axis.var.dtype()),
            ),
            (i.var.clone(), f.floormod(rows)),
        ]
        .into_iter()
        .collect();
        let mut spatial = self.spatial[..n - 3].to_vec();
        spatial.push(folded);
        spatial.push(j.clone());
        Some(self.with_axes(spatial, &map))
    }
}

#[cfg(test)]
#[path = "fold_rows/tests.rs"]
mod tests;
