//! Floor divisions and modulos of a flattened index by a symbolic extent.
//!
//! A reshape's index flattens and splits again: `(i·n + j) // n` and
//! `(i·n + j) % n`. The analyzer knows the ranges of iteration variables
//! over constant extents only, so with `n` symbolic (a sequence length)
//! those stayed divisions computed per element, and the loads that read
//! through them were not affine (gathered lane by lane), where the static
//! twin's indices simplify to `i` and `j`. Here, when the dividend is a
//! sum of terms that are multiples of `n` plus at most one iteration
//! variable whose extent is `n` (so it lies in `[0, n)`), the division is
//! the sum of the quotients and the modulo that variable. Exact for any
//! `n` the loops run with (an extent of 0 runs nothing).

use super::nest::Axis;
use crate::ir::prim_expr::{PrimExpr, PrimExprKind};

/// `e` with each such division and modulo by a symbolic extent of `axes`
/// replaced (module docs), innermost first.
pub(super) fn divide_symbolic(e: &PrimExpr, axes: &[Axis]) -> PrimExpr {
    let e = e.map_children(|c| divide_symbolic(c, axes));
    let (a, n, div) = match e.kind() {
        PrimExprKind::Div(a, n) => (a, n, true),
        PrimExprKind::Mod(a, n) => (a, n, false),
        _ => return e,
    };
    if n.as_int().is_some() || !e.dtype().is_integer() {
        return e;
    }
    match split(a, n, axes) {
        Some((q, _)) if div => q,
        Some((_, r)) => r,
        None => e,
    }
}

/// `a` as `q · n + r`, with `r` zero or an iteration variable over
/// `[0, n)`.
fn split(a: &PrimExpr, n: &PrimExpr, axes: &[Axis]) -> Option<(PrimExpr, PrimExpr)> {
    let mut terms = Vec::new();
    flatten_sum(a, &mut terms);
    let zero = PrimExpr::int_of(a.dtype(), 0);
    let mut q: Option<PrimExpr> = None;
    let mut r: Option<PrimExpr> = None;
    for t in terms {
        if let Some(qt) = quotient(t, n) {
            q = Some(match q {
                None => qt,
                Some(q) => q + qt,
            });
            continue;
        }
        let below_n = t
            .as_var()
            .is_some_and(|v| axes.iter().any(|x| x.var == *v && x.extent == *n));
        if !below_n || r.is_some() {
            return None;
        }
        r = Some(t.clone());
    }
    Some((q.unwrap_or_else(|| zero.clone()), r.unwrap_or(zero)))
}

/// The terms of a sum.
fn flatten_sum<'a>(e: &'a PrimExpr, out: &mut Vec<&'a PrimExpr>) {
    match e.kind() {
        PrimExprKind::Add(a, b) => {
            flatten_sum(a, out);
            flatten_sum(b, out);
        }
        _ => out.push(e),
    }
}

/// `t / n` when `t` is a product with the factor `n`.
fn quotient(t: &PrimExpr, n: &PrimExpr) -> Option<PrimExpr> {
    if t == n {
        return Some(PrimExpr::int_of(t.dtype(), 1));
    }
    match t.kind() {
        PrimExprKind::Mul(x, y) => quotient(x, n)
            .map(|qx| qx * y.clone())
            .or_else(|| quotient(y, n).map(|qy| x.clone() * qy)),
        _ => None,
    }
}
