//! Relations between StructInfos (spec §"Subtyping", §"LUB", erasure).
//!
//! INTERFACE STUB — the helper replaces the bodies.

use crate::arith::Analyzer;
use crate::ir::{Call, Expr, FuncStructInfo, PrimExpr, StructInfo, TirVar, Var};
use relax_runtime::Diagnostic;
use std::collections::HashMap;

/// The answer of [`struct_info_base_check`] (TVM's `BaseCheckResult`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BaseCheckResult {
    /// Disjoint: no value can have both (different kinds, dtypes, ranks).
    FailL0,
    /// Statically different but possibly related (needs a cast).
    FailL1,
    /// Depends on symbolic values that cannot be decided statically.
    FailL2,
    /// Every value of `derived` is a value of `base`.
    Pass,
}

/// Whether `base` is a base of `derived`, tri-state under symbolic shapes.
pub fn struct_info_base_check(
    base: &StructInfo,
    derived: &StructInfo,
    analyzer: &Analyzer,
) -> BaseCheckResult {
    let _ = analyzer;
    if base.is_object() || base == derived {
        BaseCheckResult::Pass
    } else {
        BaseCheckResult::FailL2
    }
}

/// `struct_info_base_check(..) == Pass`.
pub fn is_base_of(base: &StructInfo, derived: &StructInfo, analyzer: &Analyzer) -> bool {
    struct_info_base_check(base, derived, analyzer) == BaseCheckResult::Pass
}

/// The least common ancestor (for the two branches of `If`).
pub fn struct_info_lca(a: &StructInfo, b: &StructInfo, analyzer: &Analyzer) -> StructInfo {
    let _ = analyzer;
    if a == b {
        a.clone()
    } else {
        StructInfo::object()
    }
}

/// Drops what refers to variables out of scope. Symbolic variables in
/// `shape_var_map` and Relax variables in `var_map` are substituted; a
/// symbolic variable for which `is_defined` holds is kept; others are erased.
pub fn erase_to_well_defined(
    sinfo: &StructInfo,
    shape_var_map: &HashMap<TirVar, PrimExpr>,
    var_map: &HashMap<Var, Expr>,
    is_defined: &dyn Fn(&TirVar) -> bool,
) -> StructInfo {
    let _ = (shape_var_map, var_map, is_defined);
    sinfo.clone()
}

/// The result StructInfo of calling a function of StructInfo `func` with the
/// arguments of `call` (which carry their StructInfo): binds the callee's
/// symbolic parameters from the arguments, checks each argument, substitutes
/// into `ret` and erases what is not defined at the call site.
pub fn derive_call_ret_struct_info(
    func: &FuncStructInfo,
    call: &Call,
    analyzer: &Analyzer,
) -> Result<StructInfo, Diagnostic> {
    let _ = (call, analyzer);
    Ok(func.ret.clone())
}
