//! Binary ops: broadcasting arithmetic, comparisons, logical and bitwise
//! ops (TOPI's `broadcast` family). Each output element combines the
//! operands' elements at the broadcast index.
//!
//! `floor_divide` is `//` on integers and `floor(a / b)` on floats;
//! `floor_mod` is `%` (floor modulo) on integers and, on floats, `T.fmod`
//! plus the divisor when the remainder is nonzero and of the other sign
//! (NumPy's, exact, and `x` itself for a finite `x` and an infinite
//! divisor of its sign, where `x - floor(x / y) · y` is NaN); `mod` is `T.fmod` on floats and, on
//! integers, the floor remainder moved to the dividend's sign (`r - b` when
//! `r != 0` and the signs differ), so no division is written that the
//! code generator does not already make safe (a zero divisor is an error on
//! the interpreter and no undefined behaviour in compiled code). The
//! logical ops are `and`, `or`, `!=` on `bool`s; the bitwise ones and the
//! shifts are the intrinsics `bitwise_and`, …, `shift_left`,
//! `shift_right` (on `bool`s, the logical ops).
//!
//! A `R.Prim` operand of known value (`R.prim_value(T.float32(0.5))`,
//! `R.Prim(value=n)`) is written into the body as a scalar constant operand
//! is. One of unknown value (a parameter `s: R.Prim("float32")`) is not
//! legalized: LegalizeOps leaves the call, which the VM runs with the op's
//! reference kernel. TVM makes it a scalar parameter of the PrimFunc,
//! which the call passes; this project's kernels take only `int64` scalars
//! from the shape heap (`tir::abi`), so a float PrimValue from a register
//! cannot reach one yet.

use super::{broadcast_index, broadcast_shape, Legalize, LegalizeCtx};
use crate::ir::{Expr, ExprKind, PrimExpr};
use crate::tir::te::{self, compute};
use relax_runtime::Error;

fn binary(cx: &mut LegalizeCtx<'_>, f: fn(PrimExpr, PrimExpr) -> PrimExpr) -> Result<Expr, Error> {
    let name = format!("T_{}", cx.name());
    // A scalar constant operand is written into the body as a literal, the
    // second operand first, as TVM's `_try_convert_to_scalar_const` does.
    // (A `R.Prim` first operand is always written in, so the second is
    // then the computation's input.)
    let prim_first = cx.call.args[0]
        .struct_info()
        .is_some_and(|s| s.as_prim().is_some());
    if let Some(b) = scalar_literal(&cx.call.args[1]).filter(|_| !prim_first) {
        return cx.te1(&[0], |xs| {
            let a = &xs[0];
            Ok(compute(&name, a.shape().to_vec(), |i| f(a.at(i), b)))
        });
    }
    if let Some(a) = scalar_literal(&cx.call.args[0]) {
        return cx.te1(&[1], |xs| {
            let b = &xs[0];
            Ok(compute(&name, b.shape().to_vec(), |i| f(a, b.at(i))))
        });
    }
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

/// The value of a scalar operand as a TIR expression: a `R.Prim` of known
/// value (`R.prim_value(…)`, `R.Prim(value=n)`: a symbolic one becomes a
/// scalar parameter of the PrimFunc, passed in `tir_vars`), or a 0-d
/// constant as a literal of its dtype (floats, and integers and `bool`s
/// whose value a double holds exactly).
fn scalar_literal(e: &Expr) -> Option<PrimExpr> {
    if let Some(p) = e.struct_info().and_then(|s| s.as_prim()) {
        return p.value.clone();
    }
    let ExprKind::Constant(t) = e.kind() else {
        return None;
    };
    if t.ndim() != 0 {
        return None;
    }
    let dtype = t.dtype();
    let v = *t.to_f64_vec().first()?;
    if dtype.is_float() {
        Some(PrimExpr::float(dtype, v))
    } else if (dtype.is_int() || dtype.is_uint() || dtype.is_bool()) && v.abs() < 2f64.powi(53) {
        Some(PrimExpr::int_of(dtype, v as i64))
    } else {
        None
    }
}

fn floor_divide_(a: PrimExpr, b: PrimExpr) -> PrimExpr {
    if a.dtype().is_float() {
        te::unary("floor", a.floordiv(b))
    } else {
        a.floordiv(b)
    }
}

/// C's `fmod`: the remainder with the sign of `a`.
fn trunc_mod(a: PrimExpr, b: PrimExpr) -> PrimExpr {
    let dtype = a.dtype();
    if dtype.is_float() {
        return PrimExpr::call(dtype, "fmod", vec![a, b]);
    }
    let r = a.clone().floormod(b.clone());
    if !dtype.is_int() {
        return r;
    }
    let zero = te::zero(dtype);
    let signs_differ = a.lt(zero.clone()).ne_(b.clone().lt(zero.clone()));
    let fix = r.clone().ne_(zero).and(signs_differ);
    PrimExpr::select(fix, r.clone() - b, r)
}

/// Floor modulo: `%` on integers; on floats, `fmod` moved to the
/// divisor's sign.
fn floor_mod_(a: PrimExpr, b: PrimExpr) -> PrimExpr {
    let dtype = a.dtype();
    if !dtype.is_float() {
        return a.floormod(b);
    }
    let r = PrimExpr::call(dtype, "fmod", vec![a, b.clone()]);
    let zero = te::zero(dtype);
    let signs_differ = r.clone().lt(zero.clone()).ne_(b.clone().lt(zero.clone()));
    let fix = r.clone().ne_(zero).and(signs_differ);
    PrimExpr::select(fix, r.clone() + b, r)
}

/// Whether LegalizeOps leaves this call of a binary op: a `R.Prim` operand
/// of unknown value (see the module docs).
pub(crate) fn leaves(call: &crate::ir::Call) -> bool {
    call.args.iter().any(|a| {
        a.struct_info()
            .and_then(|s| s.as_prim())
            .is_some_and(|p| p.value.is_none())
    })
}

/// `pow(a, b)`; a float `a` raised to a constant 2, 3 or 4 (GELU's `x³`)
/// is multiplied out, which gives the same value for every input
/// (infinities and NaN included) within the roundings of the products, and
/// vectorizes where `pow` is a libm call per element.
fn power(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let exponent = match cx.call.args.get(1).map(Expr::kind) {
        Some(crate::ir::ExprKind::Constant(t)) if t.numel() == 1 && t.dtype().is_float() => {
            t.to_f64_vec().first().copied()
        }
        _ => None,
    };
    let float_base = cx
        .call
        .args
        .first()
        .and_then(|a| a.struct_info()?.as_tensor().map(|t| t.dtype.is_float()))
        .unwrap_or(false);
    let f: fn(PrimExpr, PrimExpr) -> PrimExpr = match exponent {
        Some(e) if float_base && e == 2.0 => |a, _| a.clone() * a,
        Some(e) if float_base && e == 3.0 => |a, _| a.clone() * a.clone() * a,
        Some(e) if float_base && e == 4.0 => |a, _| {
            let sq = a.clone() * a;
            sq.clone() * sq
        },
        _ => |a, b| PrimExpr::call(a.dtype(), "pow", vec![a, b]),
    };
    binary(cx, f)
}

/// A bitwise intrinsic, or `on_bool` on `bool`s.
fn bitwise(
    name: &str,
    a: PrimExpr,
    b: PrimExpr,
    on_bool: fn(PrimExpr, PrimExpr) -> PrimExpr,
) -> PrimExpr {
    if a.dtype().is_bool() {
        on_bool(a, b)
    } else {
        PrimExpr::call(a.dtype(), name, vec![a, b])
    }
}

macro_rules! binary_ops {
    ($($f:ident => $name:literal, |$a:ident, $b:ident| $e:expr;)*) => {
        $(
            fn $f(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
                binary(cx, |$a, $b| $e)
            }
        )*
        /// The binary legalizations.
        pub const LEGALIZE: &[(&str, Legalize)] = &[$(($name, $f),)* ("relax.power", power)];
    };
}

binary_ops! {
    add => "relax.add", |a, b| a + b;
    subtract => "relax.subtract", |a, b| a - b;
    multiply => "relax.multiply", |a, b| a * b;
    divide => "relax.divide", |a, b| te::div(a, b);
    maximum => "relax.maximum", |a, b| te::maximum(a, b);
    minimum => "relax.minimum", |a, b| te::minimum(a, b);
    equal => "relax.equal", |a, b| a.eq_(b);
    not_equal => "relax.not_equal", |a, b| a.ne_(b);
    less => "relax.less", |a, b| a.lt(b);
    less_equal => "relax.less_equal", |a, b| a.le(b);
    greater => "relax.greater", |a, b| a.gt(b);
    greater_equal => "relax.greater_equal", |a, b| a.ge(b);
    floor_divide => "relax.floor_divide", |a, b| floor_divide_(a, b);
    floor_mod => "relax.floor_mod", |a, b| floor_mod_(a, b);
    mod_ => "relax.mod", |a, b| trunc_mod(a, b);
    logical_and => "relax.logical_and", |a, b| a.and(b);
    logical_or => "relax.logical_or", |a, b| a.or(b);
    logical_xor => "relax.logical_xor", |a, b| a.ne_(b);
    bitwise_and => "relax.bitwise_and", |a, b| bitwise("bitwise_and", a, b, |p, q| p.and(q));
    bitwise_or => "relax.bitwise_or", |a, b| bitwise("bitwise_or", a, b, |p, q| p.or(q));
    bitwise_xor => "relax.bitwise_xor", |a, b| bitwise("bitwise_xor", a, b, |p, q| p.ne_(q));
    left_shift => "relax.left_shift", |a, b| PrimExpr::call(a.dtype(), "shift_left", vec![a, b]);
    right_shift => "relax.right_shift", |a, b| PrimExpr::call(a.dtype(), "shift_right", vec![a, b]);
}
