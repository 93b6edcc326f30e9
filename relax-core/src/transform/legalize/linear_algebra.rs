//! `matmul` with NumPy semantics (TOPI's `matmul`): 1-D operands promoted
//! and the added dim dropped, batch dims broadcast, one reduction over the
//! inner dim; with `out_dtype` both operands are converted first and the sum
//! is accumulated in it.

use super::{broadcast_index, broadcast_shape, Legalize, LegalizeCtx};
use crate::ir::{Expr, PrimExpr};
use crate::op::infer::attr_dtype;
use crate::tir::te::{compute, reduce_axis, sum, Tensor};
use relax_runtime::Error;

fn matmul(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let out_dtype = attr_dtype(cx.call, "out_dtype");
    cx.te1(&[0, 1], |xs| {
        let (a, b) = (&xs[0], &xs[1]);
        let (ra, rb) = (a.ndim(), b.ndim());
        let batch_a = &a.shape()[..ra.saturating_sub(2)];
        let batch_b = &b.shape()[..rb.saturating_sub(2)];
        let batch = broadcast_shape(batch_a, batch_b);
        let nb = batch.len();
        let mut shape = batch.clone();
        if ra >= 2 {
            shape.push(a.shape()[ra - 2].clone());
        }
        if rb >= 2 {
            shape.push(b.shape()[rb - 1].clone());
        }
        let k = reduce_axis(a.shape()[ra - 1].clone(), "k");
        let convert = |e: PrimExpr| {
            if out_dtype.is_void() {
                e
            } else {
                e.cast(out_dtype)
            }
        };
        // The batch part of an operand's index: its batch dims aligned at
        // the right of the output's, a dim of 1 broadcast.
        let batch_index = |t: &Tensor, i: &[PrimExpr], nt: usize| -> Vec<PrimExpr> {
            broadcast_index(&t.shape()[..nt], &i[..nb], &batch)
        };
        Ok(compute("T_matmul", shape, |i| {
            let mut p = nb;
            let mut ia = batch_index(a, i, ra.saturating_sub(2));
            if ra >= 2 {
                ia.push(i[p].clone());
                p += 1;
            }
            ia.push(k.to_expr());
            let mut ib = batch_index(b, i, rb.saturating_sub(2));
            ib.push(k.to_expr());
            if rb >= 2 {
                ib.push(i[p].clone());
            }
            sum(
                convert(a.at(&ia)) * convert(b.at(&ib)),
                std::slice::from_ref(&k),
            )
        }))
    })
}

/// The linear-algebra legalizations.
pub const LEGALIZE: &[(&str, Legalize)] = &[("relax.matmul", matmul)];
