//! Constant bound analysis: an [`Interval`] holding every value an integer
//! expression can take, given the ranges the analyzer knows for variables.
//!
//! 1. Structural on `PrimExpr` ([`Bounds::of_expr`]): each node combines its
//!    children's intervals (see [`Interval`]'s operations).
//! 2. On the canonical form ([`Bounds::of_poly`]): the constant plus the sum
//!    of `coefficient × monomial`, where a monomial's repeated atoms are taken
//!    as powers so `n*n` is known to be non-negative.
//! 3. Variables range over their recorded interval; without one, a signed
//!    variable is unbounded, an unsigned one non-negative and a bool in
//!    `{0, 1}`. Arithmetic is over the mathematical integers (no wrapping).

use super::canonical::Poly;
use super::interval::Interval;
use crate::ir::prim_expr::{PrimExpr, PrimExprKind, TirVar};
use std::collections::HashMap;

/// Bound analysis over known variable ranges.
pub(crate) struct Bounds<'a> {
    /// Ranges recorded by the analyzer (`mark_non_negative`, `bind_range`).
    pub ranges: &'a HashMap<TirVar, Interval>,
    /// Symbolic exclusive upper bounds (`Analyzer::bind_loop`).
    pub upper: &'a HashMap<TirVar, PrimExpr>,
}

impl Bounds<'_> {
    /// The range of a variable.
    pub fn of_var(&self, v: &TirVar) -> Interval {
        let by_type = if v.dtype().is_bool() {
            Interval::boolean()
        } else if v.dtype().is_uint() {
            Interval::non_negative()
        } else {
            Interval::everything()
        };
        match self.ranges.get(v) {
            Some(r) => r.intersect(by_type),
            None => by_type,
        }
    }

    /// The bound of any expression, node by node.
    pub fn of_expr(&self, e: &PrimExpr) -> Interval {
        use PrimExprKind::*;
        match e.kind() {
            Var(v) => self.of_var(v),
            IntImm(v) => Interval::point(*v),
            FloatImm(_) => Interval::everything(),
            Add(a, b) => self.of_expr(a).add(self.of_expr(b)),
            Sub(a, b) => self.of_expr(a).sub(self.of_expr(b)),
            Mul(a, b) if a == b => self.of_expr(a).pow(2),
            Mul(a, b) => self.of_expr(a).mul(self.of_expr(b)),
            Div(a, b) => self.of_expr(a).floordiv(self.of_expr(b)),
            Mod(a, b) => self.of_expr(a).floormod(self.of_expr(b)),
            Min(a, b) => self.of_expr(a).min(self.of_expr(b)),
            Max(a, b) => self.of_expr(a).max(self.of_expr(b)),
            Select(_, t, f) => self.of_expr(t).union(self.of_expr(f)),
            // A cast between integer types of at least 64 bits keeps the
            // value; anything else is only known to fit its type.
            Cast(a) if e.dtype().is_int() && e.dtype().bits() >= 64 && a.dtype().is_integer() => {
                self.of_expr(a)
            }
            Cast(_) | BufferLoad(..) | Call(..) if e.dtype().is_uint() => Interval::non_negative(),
            Cast(_) | BufferLoad(..) | Call(..) => Interval::everything(),
            Eq(..) | Ne(..) | Lt(..) | Le(..) | Gt(..) | Ge(..) | And(..) | Or(..) | Not(_) => {
                Interval::boolean()
            }
        }
    }

    /// The bound of a canonical polynomial.
    pub fn of_poly(&self, p: &Poly) -> Interval {
        let mut acc = Interval::point(p.constant);
        for (m, k) in &p.terms {
            let mut mono: Option<Interval> = None;
            let mut i = 0;
            while i < m.len() {
                // Equal atoms are adjacent in a sorted monomial: a run is a power.
                let mut j = i + 1;
                while j < m.len() && m[j] == m[i] {
                    j += 1;
                }
                let factor = self.of_expr(&m[i].0).pow(j - i);
                mono = Some(match mono {
                    None => factor,
                    Some(acc) => acc.mul(factor),
                });
                i = j;
            }
            let mono = mono.unwrap_or_else(|| Interval::point(1));
            acc = acc.add(mono.mul(Interval::point(*k)));
        }
        acc
    }
}
