//! `astype`: each element converted to the target dtype (to `bool` as
//! `x != 0`).

use super::{convert, Legalize, LegalizeCtx};
use crate::ir::Expr;
use crate::tir::te::compute;
use relax_runtime::Error;

fn astype(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let (_, dtype) = cx.out_tensor(0)?;
    cx.te1(&[0], |xs| {
        let x = &xs[0];
        Ok(compute("T_cast", x.shape().to_vec(), |i| {
            convert(x.at(i), dtype)
        }))
    })
}

/// The dtype legalizations.
pub const LEGALIZE: &[(&str, Legalize)] = &[("relax.astype", astype)];
