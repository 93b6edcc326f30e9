//! Creation: `zeros`, `ones` and `full` write one value everywhere; the
//! shape is the shape argument's (the call's inferred shape). `full`
//! converts its rank-0 fill as `astype` would. `arange` writes
//! `start + i * step` (in the arguments' type, then converted); its
//! `PrimValue` arguments may name the caller's symbolic dims, which become
//! the PrimFunc's scalar parameters. `eye_like` writes 1 where
//! `j - i == k` and 0 elsewhere, over its input's shape.

use super::{convert, Legalize, LegalizeCtx};
use crate::ir::{Expr, PrimExpr};
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

fn arange(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let (shape, dtype) = cx.out_tensor(0)?;
    let arg =
        |i: usize| crate::op::create::prim_arg(cx.call, i).map_err(|d| Error::Compile(vec![d]));
    let (start, step) = (arg(0)?, arg(2)?);
    cx.te1(&[], |_| {
        Ok(compute("T_arange", shape, |i| {
            let i = i[0].clone();
            let v = if start.dtype().is_float() || step.dtype().is_float() {
                let f = if start.dtype().is_float() {
                    start.dtype()
                } else {
                    step.dtype()
                };
                start.clone().cast(f) + i.cast(f) * step.clone().cast(f)
            } else {
                start.clone() + i * step.clone()
            };
            convert(v, dtype)
        }))
    })
}

fn eye_like(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let (_, dtype) = cx.out_tensor(0)?;
    let k = crate::op::create::prim_arg(cx.call, 1).map_err(|d| Error::Compile(vec![d]))?;
    // The input is a parameter for its shape only; no element is read.
    cx.te1(&[0], |xs| {
        Ok(compute("T_eye_like", xs[0].shape().to_vec(), |i| {
            let diag = (i[1].clone() - i[0].clone()).eq_(k.clone().cast(i[0].dtype()));
            PrimExpr::select(diag, te::one(dtype), te::zero(dtype))
        }))
    })
}

/// The creation legalizations.
pub const LEGALIZE: &[(&str, Legalize)] = &[
    ("relax.zeros", zeros),
    ("relax.ones", ones),
    ("relax.full", full),
    ("relax.arange", arange),
    ("relax.eye_like", eye_like),
];
