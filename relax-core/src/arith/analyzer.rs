//! The `Analyzer`: simplify PrimExprs and prove facts about them.
//! INTERFACE STUB: exact-equality only; replaced by the real prover.

use crate::ir::prim_expr::{PrimExpr, TirVar};

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

/// Simplifier and prover with known facts about variables.
#[derive(Clone, Debug, Default)]
pub struct Analyzer {
    non_negative: Vec<TirVar>,
}

impl Analyzer {
    /// An analyzer that knows nothing about any variable.
    pub fn new() -> Self {
        Self::default()
    }
    /// Records that `v >= 0` (shape dimensions are).
    pub fn mark_non_negative(&mut self, v: &TirVar) {
        if !self.non_negative.contains(v) {
            self.non_negative.push(v.clone())
        }
    }
    /// The canonical form of `e`.
    pub fn simplify(&self, e: &PrimExpr) -> PrimExpr {
        e.clone()
    }
    /// Whether the boolean `cond` always holds.
    pub fn prove(&self, cond: &PrimExpr) -> Proof {
        match cond.as_int() {
            Some(0) => Proof::Disproven,
            Some(_) => Proof::Proven,
            None => Proof::Unknown,
        }
    }
    /// Whether `a == b` for every value of the variables.
    pub fn compare_equal(&self, a: &PrimExpr, b: &PrimExpr) -> Proof {
        if a == b {
            return Proof::Proven;
        }
        match (a.as_int(), b.as_int()) {
            (Some(x), Some(y)) if x != y => Proof::Disproven,
            _ => Proof::Unknown,
        }
    }
    /// `compare_equal(a, b) == Proven`.
    pub fn can_prove_equal(&self, a: &PrimExpr, b: &PrimExpr) -> bool {
        self.compare_equal(a, b) == Proof::Proven
    }
}
