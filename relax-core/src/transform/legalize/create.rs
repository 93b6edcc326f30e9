//! Creation: `zeros`, `ones` and `full` write one value everywhere; the
//! shape is the shape argument's (the call's inferred shape). `full`
//! converts its rank-0 fill as `astype` would.

use super::{convert, Legalize, LegalizeCtx};
use crate::ir::Expr;
use crate::tir::te::{self, compute};
use relax_runtime::Error;

fn fill(cx: &mut LegalizeCtx<'_>, value: f64) -> Result<Expr, Error> {
    let (shape, dtype) = cx.out_tensor(0)?;
    let name = format!("T_{}", cx.name());
    cx.te1(&[], |_| {
        Ok(compute(&name, shape, |_| te::constant(dtype, value)))
    })
}

fn zeros(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    fill(cx, 0.0)
}

fn ones(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    fill(cx, 1.0)
}

fn full(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let (shape, dtype) = cx.out_tensor(0)?;
    cx.te1(&[1], |xs| {
        let v = &xs[0];
        Ok(compute("T_full", shape, |_| convert(v.at(&[]), dtype)))
    })
}

/// The creation legalizations.
pub const LEGALIZE: &[(&str, Legalize)] = &[
    ("relax.zeros", zeros),
    ("relax.ones", ones),
    ("relax.full", full),
];
