//! Symbolic integer arithmetic: canonical simplification and proving.
//!
//! Relax checks shapes symbolically (`(n, 784)` against `(n * 4 // 4, 784)`),
//! so it needs to decide equalities and inequalities of `PrimExpr`s. The
//! [`Analyzer`] answers with a three-valued [`Proof`] and never claims what it
//! cannot show: *Proven* and *Disproven* hold for every value of the free
//! variables inside their known ranges, everything else is *Unknown*.
//!
//! The algorithm has three layers:
//!
//! 1. **Canonical form** (`canonical.rs`): an integer expression is a
//!    polynomial, a sum of `coefficient × product of atoms` plus a constant.
//!    Atoms are variables and the nodes that do not expand (`//`, `%`, `min`,
//!    `max`, `select`, …) over canonical children, in a total order (variables
//!    by id first). Equal polynomials therefore print as identical
//!    `PrimExpr`s, so `n*m` and `m*n`, or `(n+1)*2` and `2*n+2`, coincide.
//! 2. **Bound analysis** (`bound.rs`, `interval.rs`): every expression gets
//!    an interval of possible values from the variables' ranges (unbounded
//!    unless recorded, `[0, ∞)` after [`Analyzer::mark_non_negative`]), over
//!    `i128` with infinite ends; anything that could overflow widens to
//!    infinity rather than giving a wrong bound.
//! 3. **Rewriting** (`simplify.rs`): bottom-up, each node is rebuilt from its
//!    canonical children with exact rules: multiply out, split `a // c` into
//!    the part divisible by `c` and a remainder, fold `//`, `%`, `min`, `max`
//!    and comparisons when the bounds settle them, fold logic on constants.
//!
//! Proving `cond` is simplifying it: a constant result is the answer. When
//! the first attempt is inconclusive the prover retries with `x % c` written
//! as `x - c * (x // c)`, which lets `%` and `//` of one operand cancel.
//!
//! Arithmetic is over the mathematical integers: dtype wrap-around is not
//! modelled, and a canonical form whose coefficients would overflow `i64`
//! is not built (the expression stays as it was, with simplified children).

pub mod analyzer;
mod bound;
mod canonical;
mod interval;
mod simplify;
#[cfg(test)]
mod tests;

pub use analyzer::{Analyzer, ConstIntBound, Proof};
pub(crate) use canonical::gcd;
