//! Structural equality and hashing: equality modulo the names and ids of
//! bound variables (TVM's `tvm.ir.structural_equal` / `structural_hash`).
//!
//! Two IR values are structurally equal when one can be turned into the other
//! by renaming the variables they define. The comparison walks both sides in
//! lockstep and keeps a bijection between their variables:
//!
//! 1. **Definition sites** map a lhs variable to the rhs one: function
//!    parameters, `VarBinding` and `MatchCast` variables, and symbolic
//!    [`TirVar`](super::TirVar)s inside the StructInfo of function parameters,
//!    of `match_cast` patterns, of `R.Callable` parameters and of PrimFunc
//!    parameters (a symbolic var met there unmapped on both sides is defined on
//!    first sight, so `(n, 4)` matches `(m, 4)` but `(n, n)` does not match
//!    `(n, m)`). Mapping is one-to-one in both directions.
//! 2. **Use sites** must agree with the mapping. A variable that is unmapped
//!    on both sides (a *free* variable) is equal only to itself, unless the
//!    comparison maps free variables too ([`structural_equal_map_free_vars`],
//!    TVM's `map_free_vars=True`), which then maps them on first encounter.
//! 3. Names never matter for variables, but a variable's kind (`Var` or
//!    `DataflowVar`) and its StructInfo annotation (compared where it is
//!    defined) do. Global vars, ops and extern functions compare by name.
//! 4. Nothing is algebraic: `n * m` differs from `m * n`. Constants compare by
//!    dtype, shape and bytes; attributes compare as maps from key to value.
//! 5. The StructInfo that normalization stores on a non-variable expression is
//!    derived data and is not compared; the declared parts are (variable
//!    annotations, `ret_struct_info`, `sinfo_args`, `match_cast` patterns).
//! 6. In an [`IRModule`] the function names and the module attributes
//!    must agree and each pair of functions is compared with fresh maps:
//!    variables are function-local.
//!
//! [`structural_hash`] is consistent with [`structural_equal`]: a bound
//! variable hashes by the order in which it was defined, a free one by its
//! identity. [`structural_hash_map_free_vars`] goes with
//! [`structural_equal_map_free_vars`] and hashes free variables by order of
//! first appearance. Both are deterministic within a process.
//!
//! The walks are written once per direction: `equal.rs` compares and builds the
//! report of the first difference (a path such as `function main / block 0 /
//! binding 1 / value / call args[0]` and a short description of both sides),
//! `hash.rs` hashes; the two visit fields in the same order, which the hash
//! relies on to number definitions alike.

mod describe;
mod equal;
mod hash;
#[cfg(test)]
mod tests;

use super::expr::{Binding, BindingBlock, Expr, SeqExpr, Var};
use super::function::Function;
use super::module::{BaseFunc, IRModule};
use super::prim_expr::PrimExpr;
use super::struct_info::StructInfo;
use crate::tir::PrimFunc;
use std::fmt;

pub use equal::Comparer;
pub use hash::HashWalker;

/// Where two IR values first differ, as found by [`structural_equal_report`].
///
/// `Display` prints [`message`](Self::message), for example
/// `at function main / block 0 / binding 1 / value / call args[0]: lhs is Var x, rhs is Var y`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructuralMismatch {
    /// The whole report: the path, both sides and, when it helps, why.
    pub message: String,
    /// The path from the compared values to the difference, segments joined by
    /// ` / ` (empty when the compared values differ at their root).
    pub path: String,
    /// A short description of the lhs at that place.
    pub lhs: String,
    /// A short description of the rhs at that place.
    pub rhs: String,
}

impl StructuralMismatch {
    pub(crate) fn new(path: String, lhs: String, rhs: String, note: Option<String>) -> Self {
        let place = if path.is_empty() {
            "at the root".to_string()
        } else {
            format!("at {path}")
        };
        let mut message = format!("{place}: lhs is {lhs}, rhs is {rhs}");
        if let Some(note) = note {
            message.push_str(&format!(" ({note})"));
        }
        StructuralMismatch {
            message,
            path,
            lhs,
            rhs,
        }
    }
}

impl fmt::Display for StructuralMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for StructuralMismatch {}

mod sealed {
    /// Restricts [`super::StructuralEq`] to the IR types of this crate.
    pub trait Sealed {}
}

/// IR types that can be compared with [`structural_equal`] and hashed with
/// [`structural_hash`]. Implemented for [`IRModule`], [`Function`],
/// [`PrimFunc`], [`BaseFunc`], [`Expr`], [`SeqExpr`], [`BindingBlock`],
/// [`Binding`], [`Var`] (compared as a definition), [`StructInfo`],
/// [`PrimExpr`], and slices and vectors of these (compared pairwise, with one
/// mapping across the elements).
///
/// The trait is sealed: its methods are the entry points of the two walks.
pub trait StructuralEq: sealed::Sealed {
    /// Compares `self` (lhs) with `other` (rhs) in the state `cx`.
    fn compare(&self, other: &Self, cx: &mut Comparer) -> Result<(), StructuralMismatch>;
    /// Feeds `self` into the hash state `hx`.
    fn hash_into(&self, hx: &mut HashWalker);
}

macro_rules! structural_eq {
    ($($ty:ty => $cmp:ident, $hash:ident;)*) => {$(
        impl sealed::Sealed for $ty {}
        impl StructuralEq for $ty {
            fn compare(&self, other: &Self, cx: &mut Comparer) -> Result<(), StructuralMismatch> {
                cx.$cmp(self, other)
            }
            fn hash_into(&self, hx: &mut HashWalker) {
                hx.$hash(self)
            }
        }
    )*};
}

structural_eq! {
    IRModule => module, module;
    BaseFunc => base_func, base_func;
    Function => function, function;
    PrimFunc => prim_func, prim_func;
    Expr => expr, expr;
    SeqExpr => seq, seq;
    BindingBlock => block, block;
    Binding => binding, binding;
    Var => param, param;
    StructInfo => struct_info, struct_info;
    PrimExpr => prim_expr, prim_expr;
}

impl<T: StructuralEq> sealed::Sealed for [T] {}
impl<T: StructuralEq> StructuralEq for [T] {
    fn compare(&self, other: &Self, cx: &mut Comparer) -> Result<(), StructuralMismatch> {
        cx.slice(self, other)
    }
    fn hash_into(&self, hx: &mut HashWalker) {
        hx.slice(self)
    }
}

impl<T: StructuralEq> sealed::Sealed for Vec<T> {}
impl<T: StructuralEq> StructuralEq for Vec<T> {
    fn compare(&self, other: &Self, cx: &mut Comparer) -> Result<(), StructuralMismatch> {
        cx.slice(self, other)
    }
    fn hash_into(&self, hx: &mut HashWalker) {
        hx.slice(self)
    }
}

/// Whether `a` and `b` are equal modulo the names and ids of the variables
/// they bind. Free variables must be identical. See the module docs.
pub fn structural_equal<T: StructuralEq + ?Sized>(a: &T, b: &T) -> bool {
    a.compare(b, &mut Comparer::quiet(false)).is_ok()
}

/// Like [`structural_equal`], but free variables (Relax and symbolic) are
/// also mapped, one-to-one, on first encounter (TVM's `map_free_vars=True`):
/// `add(x, y)` with `x`, `y` free equals `add(p, q)` with `p`, `q` free.
pub fn structural_equal_map_free_vars<T: StructuralEq + ?Sized>(a: &T, b: &T) -> bool {
    a.compare(b, &mut Comparer::quiet(true)).is_ok()
}

/// Compares like [`structural_equal`] and returns the first difference, with
/// the path to it and a short description of both sides.
pub fn structural_equal_report<T: StructuralEq + ?Sized>(
    a: &T,
    b: &T,
) -> Result<(), StructuralMismatch> {
    a.compare(b, &mut Comparer::new(false))
}

/// Asserts that `a` and `b` are structurally equal (a helper for tests, like
/// `tvm.ir.assert_structural_equal`).
///
/// # Panics
///
/// Panics with the report of the first difference when they are not.
#[track_caller]
pub fn assert_structural_equal<T: StructuralEq + ?Sized>(a: &T, b: &T) {
    if let Err(mismatch) = structural_equal_report(a, b) {
        panic!("structural equality failed: {mismatch}");
    }
}

/// A hash consistent with [`structural_equal`]: structurally equal values
/// hash alike. Bound variables hash by definition order, free ones by
/// identity. Deterministic within a process (free variables' ids are not
/// stable across processes).
pub fn structural_hash<T: StructuralEq + ?Sized>(a: &T) -> u64 {
    let mut hx = HashWalker::new(false);
    a.hash_into(&mut hx);
    hx.finish()
}

/// A hash consistent with [`structural_equal_map_free_vars`]: free variables
/// hash by order of first appearance, so the result is also stable across
/// processes.
pub fn structural_hash_map_free_vars<T: StructuralEq + ?Sized>(a: &T) -> u64 {
    let mut hx = HashWalker::new(true);
    a.hash_into(&mut hx);
    hx.finish()
}
