//! Unary elementwise ops: one intrinsic or a short expression per element.

use super::{Legalize, LegalizeCtx};
use crate::ir::{Expr, PrimExpr};
use crate::tir::te::{self, compute_over};
use relax_runtime::Error;

/// `-x`: `x * -1` for floats (exact, keeps the sign of zero; TOPI's
/// form), `0 - x` (wrapping) for integers.
pub(crate) fn negate(x: PrimExpr) -> PrimExpr {
    let dtype = x.dtype();
    if dtype.is_float() {
        x * te::constant(dtype, -1.0)
    } else {
        te::zero(dtype) - x
    }
}

/// `1 / (1 + e^-x)` (the `sigmoid` intrinsic, as TOPI's).
pub(crate) fn sigmoid(x: PrimExpr) -> PrimExpr {
    te::unary("sigmoid", x)
}

/// `|x|`: `T.fabs` for floats (as TOPI; `|-0.0|` is `0.0`), a select for
/// signed integers, `x` itself otherwise.
fn abs(x: PrimExpr) -> PrimExpr {
    let dtype = x.dtype();
    if dtype.is_float() {
        return te::unary("fabs", x);
    }
    if dtype.is_uint() || dtype.is_bool() {
        return x;
    }
    PrimExpr::select(x.clone().lt(te::zero(dtype)), negate(x.clone()), x)
}

/// An elementwise stage of `f` over argument 0, as TVM legalizes its unary
/// ops: the PrimFunc `tir_<op>`, one stage `compute` over `i0, i1, …`
/// (`te.compute(x.shape, lambda *i: f(x(*i)))`).
pub(crate) fn elementwise(
    cx: &mut LegalizeCtx<'_>,
    f: impl Fn(PrimExpr) -> PrimExpr,
) -> Result<Expr, Error> {
    let func = format!("tir_{}", cx.name());
    elementwise_as(cx, &func, "compute", "i", f)
}

/// An elementwise stage `stage` of `f` over argument 0, in the PrimFunc
/// `func`, its iteration variables `{prefix}0`, ….
pub(crate) fn elementwise_as(
    cx: &mut LegalizeCtx<'_>,
    func: &str,
    stage: &str,
    prefix: &str,
    f: impl Fn(PrimExpr) -> PrimExpr,
) -> Result<Expr, Error> {
    let args: Vec<Expr> = cx.call.args.iter().take(1).cloned().collect();
    cx.te_named(func, &args, |xs| {
        let x = &xs[0];
        Ok(vec![compute_over(prefix, stage, x.shape().to_vec(), |i| {
            f(x.at(i))
        })])
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
