//! The [`Analyzer`]: what is known about symbolic variables, and the public
//! entry points of simplification and proving (see the [module docs](super)).

use super::bound::Bounds;
use super::interval::{Interval, NEG_INF, POS_INF};
use super::simplify::{is_int, Simplifier};
use crate::ir::prim_expr::{PrimExpr, PrimExprKind, TirVar};
use std::collections::HashMap;

/// The answer to "is this true?" under what the analyzer knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Proof {
    /// True for every value of the free variables.
    Proven,
    /// False for every value of the free variables.
    Disproven,
    /// Depends on the values, or beyond the prover.
    Unknown,
}

/// Constant bounds of an integer expression: every value lies in
/// `[min, max]`; `None` is an unbounded side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConstIntBound {
    /// The smallest possible value, if bounded below.
    pub min: Option<i64>,
    /// The largest possible value, if bounded above.
    pub max: Option<i64>,
}

/// Simplifier and prover with known facts about variables.
#[derive(Clone, Debug, Default)]
pub struct Analyzer {
    /// The range of each variable with a recorded range; never empty.
    ranges: HashMap<TirVar, Interval>,
    /// Variables with a known value, substituted before any analysis. The
    /// values are kept free of bound variables, so one substitution pass
    /// suffices.
    bindings: HashMap<TirVar, PrimExpr>,
    /// Symbolic exclusive upper bounds: `v < upper[v]` (a loop over a
    /// symbolic extent, `for j in range(seq)`).
    upper: HashMap<TirVar, PrimExpr>,
}

impl Analyzer {
    /// An analyzer that knows nothing about any variable.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records that `v >= 0` (shape dimensions are).
    pub fn mark_non_negative(&mut self, v: &TirVar) {
        self.bind_range(v, Some(0), None)
    }

    /// Records that `min <= v <= max` (`None` is an open side), on top of
    /// what is already known. A range contradicting the known one is
    /// ignored: from contradictory facts the prover could claim anything.
    pub fn bind_range(&mut self, v: &TirVar, min: Option<i64>, max: Option<i64>) {
        let new = Interval::from_ends(min, max);
        let merged = match self.ranges.get(v) {
            Some(old) => old.intersect(new),
            None => new,
        };
        if !merged.is_empty() {
            self.ranges.insert(v.clone(), merged);
        }
    }

    /// Records that `v` runs over `[0, extent)`, as a loop variable does: a
    /// constant `extent` is a range, a symbolic one a bound `v < extent`
    /// that lets `(i * extent + v) // extent` simplify to `i`.
    pub fn bind_loop(&mut self, v: &TirVar, extent: &PrimExpr) {
        let extent = self.substitute(extent);
        match extent.as_int() {
            Some(n) if n > 0 => self.bind_range(v, Some(0), Some(n - 1)),
            _ => {
                self.bind_range(v, Some(0), None);
                if !extent.free_vars().contains(v) {
                    self.upper.insert(v.clone(), extent);
                }
            }
        }
    }

    /// Records that `v == value`: `v` is replaced by `value` before every
    /// simplification or proof. A value that mentions `v` itself (after the
    /// known bindings are substituted) is a recurrence, not a value, and is
    /// ignored.
    pub fn bind(&mut self, v: &TirVar, value: &PrimExpr) {
        let value = self.substitute(value);
        if value.free_vars().contains(v) {
            return;
        }
        let one = HashMap::from([(v.clone(), value.clone())]);
        for old in self.bindings.values_mut() {
            *old = old.substitute_map(&one);
        }
        self.bindings.insert(v.clone(), value);
    }

    /// The canonical form of `e` (see the module docs): equal polynomials
    /// give identical expressions, printed in TVM's order (`n * 2 + 1`).
    pub fn simplify(&self, e: &PrimExpr) -> PrimExpr {
        self.simplifier(false).simplify(&self.substitute(e))
    }

    /// Whether the boolean `cond` always holds (`Proven`), never holds
    /// (`Disproven`), or neither is shown (`Unknown`). An integer `cond`
    /// means `cond != 0`.
    pub fn prove(&self, cond: &PrimExpr) -> Proof {
        let cond = self.substitute(cond);
        for expand_mod in [false, true] {
            match self.simplifier(expand_mod).simplify(&cond).as_int() {
                Some(0) => return Proof::Disproven,
                Some(_) => return Proof::Proven,
                None => {}
            }
        }
        Proof::Unknown
    }

    /// `prove(cond) == Proven`.
    pub fn can_prove(&self, cond: &PrimExpr) -> bool {
        self.prove(cond) == Proof::Proven
    }

    /// Whether `a == b` for every value of the variables (`Proven`), for
    /// none (`Disproven`: the difference is a non-zero constant or its bound
    /// excludes 0), or neither is shown.
    pub fn compare_equal(&self, a: &PrimExpr, b: &PrimExpr) -> Proof {
        if !(is_int(a.dtype()) && is_int(b.dtype())) {
            // Floats: only literals are decided (`x == x` fails for NaN).
            return match (self.simplify(a).kind(), self.simplify(b).kind()) {
                (PrimExprKind::FloatImm(x), PrimExprKind::FloatImm(y)) => {
                    if x == y {
                        Proof::Proven
                    } else {
                        Proof::Disproven
                    }
                }
                _ => Proof::Unknown,
            };
        }
        self.prove(&a.clone().eq_(b))
    }

    /// `compare_equal(a, b) == Proven`.
    pub fn can_prove_equal(&self, a: &PrimExpr, b: &PrimExpr) -> bool {
        self.compare_equal(a, b) == Proof::Proven
    }

    /// Whether `e >= 0` always holds.
    pub fn can_prove_non_negative(&self, e: &PrimExpr) -> bool {
        self.const_int_bound(e).min.is_some_and(|m| m >= 0)
    }

    /// Constant bounds of the integer expression `e` under the known ranges.
    /// Booleans are in `[0, 1]`; other dtypes are unbounded.
    pub fn const_int_bound(&self, e: &PrimExpr) -> ConstIntBound {
        let e = self.substitute(e);
        let bounds = self.bounds();
        let iv = if is_int(e.dtype()) {
            let p = self.simplifier(false).poly(&e);
            bounds.of_poly(&p).intersect(bounds.of_expr(&e))
        } else if e.dtype().is_bool() {
            Interval::boolean()
        } else {
            Interval::everything()
        };
        // Lowering a lower end or raising an upper end keeps a bound sound, so
        // an end beyond i64 saturates in that direction; an end that would
        // need the other direction becomes unbounded.
        let min = (iv.lo != NEG_INF && iv.lo >= i64::MIN as i128)
            .then(|| iv.lo.min(i64::MAX as i128) as i64);
        let max = (iv.hi != POS_INF && iv.hi <= i64::MAX as i128)
            .then(|| iv.hi.max(i64::MIN as i128) as i64);
        ConstIntBound { min, max }
    }

    fn bounds(&self) -> Bounds<'_> {
        Bounds {
            ranges: &self.ranges,
            upper: &self.upper,
        }
    }

    fn simplifier(&self, expand_mod: bool) -> Simplifier<'_> {
        Simplifier {
            bounds: self.bounds(),
            expand_mod,
        }
    }

    fn substitute(&self, e: &PrimExpr) -> PrimExpr {
        e.substitute_map(&self.bindings)
    }
}
