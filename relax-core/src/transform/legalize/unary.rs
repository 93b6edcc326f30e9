//! Unary elementwise ops: one intrinsic or a short expression per element.

use super::{Legalize, LegalizeCtx};
use crate::ir::{Expr, PrimExpr};
use crate::tir::te::{self, compute};
use relax_runtime::Error;

/// `-x`: `-1 * x` for floats (exact, keeps the sign of zero), `0 - x`
/// (wrapping) for integers.
pub(crate) fn negate(x: PrimExpr) -> PrimExpr {
    let dtype = x.dtype();
    if dtype.is_float() {
        te::constant(dtype, -1.0) * x
    } else {
        te::zero(dtype) - x
    }
}

/// `1 / (1 + e^-x)` (the `sigmoid` intrinsic, as TOPI's).
pub(crate) fn sigmoid(x: PrimExpr) -> PrimExpr {
    te::unary("sigmoid", x)
}

fn abs(x: PrimExpr) -> PrimExpr {
    let dtype = x.dtype();
    if dtype.is_uint() || dtype.is_bool() {
        return x;
    }
    PrimExpr::select(x.clone().lt(te::zero(dtype)), negate(x.clone()), x)
}

/// An elementwise stage of `f` over argument 0.
pub(crate) fn elementwise(
    cx: &mut LegalizeCtx<'_>,
    f: impl Fn(PrimExpr) -> PrimExpr,
) -> Result<Expr, Error> {
    let name = format!("T_{}", cx.name());
    cx.te1(&[0], |xs| {
        let x = &xs[0];
        Ok(compute(&name, x.shape().to_vec(), |i| f(x.at(i))))
    })
}

macro_rules! unary_ops {
    ($($f:ident => $name:literal, $e:expr;)*) => {
        $(
            fn $f(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
                elementwise(cx, $e)
            }
        )*
        /// The unary legalizations.
        pub const LEGALIZE: &[(&str, Legalize)] = &[$(($name, $f)),*];
    };
}

unary_ops! {
    negative_ => "relax.negative", negate;
    abs_ => "relax.abs", abs;
    exp => "relax.exp", |x| te::unary("exp", x);
    log => "relax.log", |x| te::unary("log", x);
    sqrt => "relax.sqrt", |x| te::unary("sqrt", x);
    rsqrt => "relax.rsqrt", |x| te::unary("rsqrt", x);
    tanh => "relax.tanh", |x| te::unary("tanh", x);
    sigmoid_ => "relax.sigmoid", sigmoid;
}
