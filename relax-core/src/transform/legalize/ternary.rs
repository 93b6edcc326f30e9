//! `ewise_fma(x1, x2, x3)`: `x1 * x2 + x3` on equal shapes, rounded twice
//! (a multiply then an add), as the reference kernel does.

use super::{Legalize, LegalizeCtx};
use crate::ir::Expr;
use crate::tir::te::compute;
use relax_runtime::Error;

fn ewise_fma(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    cx.te1(&[0, 1, 2], |xs| {
        let (a, b, c) = (&xs[0], &xs[1], &xs[2]);
        Ok(compute("T_ewise_fma", a.shape().to_vec(), |i| {
            a.at(i) * b.at(i) + c.at(i)
        }))
    })
}

/// The ternary legalizations.
pub const LEGALIZE: &[(&str, Legalize)] = &[("relax.ewise_fma", ewise_fma)];
