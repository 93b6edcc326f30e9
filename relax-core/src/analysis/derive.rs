//! StructInfo derivation: the StructInfo of an expression from its parts
//! (spec §"Structural Information", derivation rules 2–15).
//!
//! INTERFACE STUB — the helper replaces the bodies; the signatures are the
//! contract the parser, well-formedness and (later) the BlockBuilder use.

use crate::arith::Analyzer;
use crate::ir::{Expr, IRModule, StructInfo};
use relax_runtime::Diagnostic;

/// What derivation may consult besides the expression.
#[derive(Clone, Default)]
pub struct DeriveContext<'a> {
    /// The module, for the StructInfo of `GlobalVar`s that do not carry one.
    pub module: Option<&'a IRModule>,
    /// Facts about symbolic variables.
    pub analyzer: Analyzer,
}

/// The StructInfo of `expr`, whose sub-expressions already carry theirs.
/// Errors are provable mistakes (a `TupleGetItem` out of range, a call whose
/// arguments provably do not fit the callee, an op's inference error).
pub fn derive_struct_info(expr: &Expr, ctx: &DeriveContext<'_>) -> Result<StructInfo, Diagnostic> {
    let _ = ctx;
    Ok(expr
        .struct_info()
        .cloned()
        .unwrap_or_else(StructInfo::object))
}
