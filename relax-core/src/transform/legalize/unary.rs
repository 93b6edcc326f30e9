//! Unary elementwise ops: one intrinsic or a short expression per element.
//!
//! The math functions (`exp`, `erf`, `sin`, `asinh`, …) are the intrinsic
//! of the same name; `floor`, `ceil`, `round` (half to even) and `trunc`
//! are intrinsics on floats and the identity on integers; `sign` and
//! `abs` are selects; `square` is `x * x`; `isfinite` is
//! `!(isnan(x) || isinf(x))`; `logical_not` is `!x`; `bitwise_not` is the
//! intrinsic `bitwise_not` (`!x` on `bool`s).

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

/// A float intrinsic, the identity on integers (the rounding ops).
fn rounding(name: &'static str) -> impl Fn(PrimExpr) -> PrimExpr {
    move |x| {
        if x.dtype().is_float() {
            te::unary(name, x)
        } else {
            x
        }
    }
}

/// -1, 0 or 1; a float zero or NaN kept as it is (as the kernel).
fn sign(x: PrimExpr) -> PrimExpr {
    let dtype = x.dtype();
    let zero = te::zero(dtype);
    let inner = if dtype.is_uint() {
        x.clone()
    } else {
        let minus_one = te::constant(dtype, -1.0);
        PrimExpr::select(x.clone().lt(zero.clone()), minus_one, x.clone())
    };
    PrimExpr::select(x.gt(zero), te::one(dtype), inner)
}

/// A `bool` predicate intrinsic (`isnan`, `isinf`).
fn predicate(name: &str, x: PrimExpr) -> PrimExpr {
    PrimExpr::call(relax_runtime::DataType::bool(), name, vec![x])
}

fn isfinite(x: PrimExpr) -> PrimExpr {
    !(predicate("isnan", x.clone()).or(predicate("isinf", x)))
}

fn bitwise_not(x: PrimExpr) -> PrimExpr {
    if x.dtype().is_bool() {
        !x
    } else {
        te::unary("bitwise_not", x)
    }
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
    erf => "relax.erf", |x| te::unary("erf", x);
    sin => "relax.sin", |x| te::unary("sin", x);
    cos => "relax.cos", |x| te::unary("cos", x);
    tan => "relax.tan", |x| te::unary("tan", x);
    asin => "relax.asin", |x| te::unary("asin", x);
    acos => "relax.acos", |x| te::unary("acos", x);
    atan => "relax.atan", |x| te::unary("atan", x);
    sinh => "relax.sinh", |x| te::unary("sinh", x);
    cosh => "relax.cosh", |x| te::unary("cosh", x);
    asinh => "relax.asinh", |x| te::unary("asinh", x);
    acosh => "relax.acosh", |x| te::unary("acosh", x);
    atanh => "relax.atanh", |x| te::unary("atanh", x);
    floor => "relax.floor", rounding("floor");
    ceil => "relax.ceil", rounding("ceil");
    round => "relax.round", rounding("round");
    trunc => "relax.trunc", rounding("trunc");
    sign_ => "relax.sign", sign;
    square => "relax.square", |x| x.clone() * x;
    isnan => "relax.isnan", |x| predicate("isnan", x);
    isinf => "relax.isinf", |x| predicate("isinf", x);
    isfinite_ => "relax.isfinite", isfinite;
    logical_not => "relax.logical_not", |x| !x;
    bitwise_not_ => "relax.bitwise_not", bitwise_not;
}
