//! Binary ops: broadcasting arithmetic and comparisons (TOPI's
//! `broadcast` family). Each output element combines the operands'
//! elements at the broadcast index.

use super::{broadcast_index, broadcast_shape, Legalize, LegalizeCtx};
use crate::ir::{Expr, PrimExpr};
use crate::tir::te::{self, compute};
use relax_runtime::Error;

fn binary(cx: &mut LegalizeCtx<'_>, f: fn(PrimExpr, PrimExpr) -> PrimExpr) -> Result<Expr, Error> {
    let name = format!("T_{}", cx.name());
    cx.te1(&[0, 1], |xs| {
        let (a, b) = (&xs[0], &xs[1]);
        let shape = broadcast_shape(a.shape(), b.shape());
        let out = shape.clone();
        Ok(compute(&name, shape, |i| {
            f(
                a.at(&broadcast_index(a.shape(), i, &out)),
                b.at(&broadcast_index(b.shape(), i, &out)),
            )
        }))
    })
}

macro_rules! binary_ops {
    ($($f:ident => $name:literal, |$a:ident, $b:ident| $e:expr;)*) => {
        $(
            fn $f(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
                binary(cx, |$a, $b| $e)
            }
        )*
        /// The binary legalizations.
        pub const LEGALIZE: &[(&str, Legalize)] = &[$(($name, $f)),*];
    };
}

binary_ops! {
    add => "relax.add", |a, b| a + b;
    subtract => "relax.subtract", |a, b| a - b;
    multiply => "relax.multiply", |a, b| a * b;
    divide => "relax.divide", |a, b| te::div(a, b);
    power => "relax.power", |a, b| PrimExpr::call(a.dtype(), "pow", vec![a, b]);
    maximum => "relax.maximum", |a, b| te::maximum(a, b);
    minimum => "relax.minimum", |a, b| te::minimum(a, b);
    equal => "relax.equal", |a, b| a.eq_(b);
    not_equal => "relax.not_equal", |a, b| a.ne_(b);
    less => "relax.less", |a, b| a.lt(b);
    less_equal => "relax.less_equal", |a, b| a.le(b);
    greater => "relax.greater", |a, b| a.gt(b);
    greater_equal => "relax.greater_equal", |a, b| a.ge(b);
}
