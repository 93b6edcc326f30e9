//! StructInfo derivation: the StructInfo of an expression from its parts
//! (spec §"Structural Information", derivation rules 2–15), and the purity of
//! calls (spec §"Purity").
//!
//! 1. [`derive_struct_info`] looks one level deep: the sub-expressions are
//!    expected to carry their StructInfo already (they do once normalized).
//!    A sub-expression that carries none is derived first, recursively, so an
//!    unnormalized tree still gets an answer.
//! 2. A call of an `Op` asks the op registry; an op that is not registered is
//!    treated as TVM treats one without `FInferStructInfo`: its result comes
//!    from the call's `sinfo_args` (`default_derive`). Any other callee must
//!    have function StructInfo and goes through
//!    [`derive_call_ret_struct_info`].
//! 3. A `SeqExpr` is a scope: the StructInfo of its body is erased of the
//!    Relax variables bound inside it and of the symbolic variables its
//!    `MatchCast`s define. Without the enclosing scope at hand, a symbolic
//!    variable counts as defined by a `MatchCast` when nothing evaluated
//!    before it in the sequence mentions it ([`seq_expr_struct_info`] takes
//!    the enclosing scope when the caller knows it).
//! 4. Derivation uses an analyzer that knows shape dimensions are
//!    non-negative ([`shape_analyzer`]).

use super::struct_info_analysis::{
    default_derive, derive_call_ret_struct_info, erase_to_well_defined_with, shape_analyzer,
    struct_info_lca,
};
use crate::arith::Analyzer;
use crate::ir::{
    Binding, Call, DeriveFunc, Expr, ExprKind, IRModule, PrimExpr, SeqExpr, StructInfo,
    StructInfoKind, TirVar, Var, UNKNOWN_NDIM,
};
use relax_runtime::Diagnostic;
use std::borrow::Cow;
use std::collections::HashSet;

#[cfg(test)]
mod tests;

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
    match expr.kind() {
        ExprKind::Constant(t) => Ok(StructInfo::tensor(
            t.shape().iter().map(|&d| PrimExpr::int(d)).collect(),
            t.dtype(),
        )),
        ExprKind::ShapeExpr(values) => Ok(StructInfo::shape(values.clone())),
        ExprKind::PrimValue(value) => Ok(StructInfo::prim_value(value.clone())),
        ExprKind::StringImm(_) | ExprKind::DataTypeImm(_) => Ok(StructInfo::object()),
        ExprKind::ExternFunc(_) => Ok(StructInfo::opaque_func(
            DeriveFunc::Default,
            StructInfo::object(),
        )),
        ExprKind::Var(v) => v.struct_info().cloned().ok_or_else(|| {
            Diagnostic::new(
                "missing-struct-info",
                format!("variable `{}` has no struct info", v.name_hint()),
            )
        }),
        ExprKind::GlobalVar(gv) => {
            if let Some(s) = expr.struct_info() {
                return Ok(s.clone());
            }
            let Some(module) = ctx.module else {
                return Err(Diagnostic::new(
                    "unknown-global-var",
                    format!(
                        "global function `{}` has no struct info and no module defines it",
                        gv.name_hint()
                    ),
                ));
            };
            module
                .get(gv.name_hint())
                .map(|f| f.struct_info())
                .ok_or_else(|| {
                    Diagnostic::new(
                        "unknown-global-var",
                        format!(
                            "global function `{}` is not defined in the module",
                            gv.name_hint()
                        ),
                    )
                })
        }
        ExprKind::Tuple(fields) => Ok(StructInfo::tuple(
            fields
                .iter()
                .map(|f| operand_struct_info(f, ctx))
                .collect::<Result<_, _>>()?,
        )),
        ExprKind::TupleGetItem(tuple, index) => {
            let tuple = operand_struct_info(tuple, ctx)?;
            tuple_get_item_struct_info(&tuple, *index)
        }
        ExprKind::Call(call) => derive_call(call, ctx),
        ExprKind::If(if_) => {
            let cond = operand_struct_info(&if_.cond, ctx)?;
            check_if_condition(&cond)?;
            let t = operand_struct_info(&if_.true_branch, ctx)?;
            let f = operand_struct_info(&if_.false_branch, ctx)?;
            let analyzer = shape_analyzer(&ctx.analyzer, [&t, &f]);
            Ok(struct_info_lca(&t, &f, &analyzer))
        }
        ExprKind::SeqExpr(seq) => {
            let body = operand_struct_info(&seq.body, ctx)?;
            Ok(seq_expr_struct_info(seq, &body, &|_| false, &ctx.analyzer))
        }
        ExprKind::Function(f) => Ok(f.struct_info()),
        ExprKind::Op(op) => Err(Diagnostic::new(
            "op-not-a-value",
            format!(
                "operator `{}` has no struct info: an operator can only be called",
                op.name()
            ),
        )),
    }
}

/// The StructInfo a sub-expression carries, or derived when it carries none.
fn operand_struct_info(e: &Expr, ctx: &DeriveContext<'_>) -> Result<StructInfo, Diagnostic> {
    match e.struct_info() {
        Some(s) => Ok(s.clone()),
        None => derive_struct_info(e, ctx),
    }
}

/// Spec rule 12: the `index`-th field of a tuple StructInfo.
pub fn tuple_get_item_struct_info(
    tuple: &StructInfo,
    index: usize,
) -> Result<StructInfo, Diagnostic> {
    let Some(fields) = tuple.as_tuple() else {
        return Err(Diagnostic::new(
            "tuple-get-item-not-tuple",
            format!("tuple_get_item expects a tuple, found {tuple}"),
        ));
    };
    fields.get(index).cloned().ok_or_else(|| {
        Diagnostic::new(
            "tuple-index-out-of-range",
            format!(
                "tuple index {index} is out of range for {tuple}: expected an index below {}",
                fields.len()
            ),
        )
    })
}

/// The condition of an `If` must be a bool scalar: a `bool` prim, or a
/// rank-0 (or unknown-rank) tensor of dtype `bool` (or unknown dtype).
pub fn check_if_condition(cond: &StructInfo) -> Result<(), Diagnostic> {
    let ok = match cond.kind() {
        StructInfoKind::Prim(p) => p.dtype.is_bool(),
        StructInfoKind::Tensor(t) => {
            (t.ndim == 0 || t.ndim == UNKNOWN_NDIM) && (t.dtype.is_bool() || t.dtype.is_void())
        }
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(Diagnostic::new(
            "if-condition-not-bool",
            format!("the condition of an if must be a bool scalar, found {cond}"),
        ))
    }
}

fn derive_call(call: &Call, ctx: &DeriveContext<'_>) -> Result<StructInfo, Diagnostic> {
    let call = with_operand_struct_info(call, ctx)?;
    let arg_sinfos: Vec<&StructInfo> = call.args.iter().filter_map(Expr::struct_info).collect();
    match call.op.kind() {
        ExprKind::Op(op) => {
            let analyzer = shape_analyzer(
                &ctx.analyzer,
                arg_sinfos.iter().copied().chain(&call.sinfo_args),
            );
            match crate::op::lookup(op.name()) {
                Some(info) => (info.infer_struct_info)(&call, &analyzer),
                None => Ok(default_derive(&call.sinfo_args)),
            }
        }
        _ => {
            let callee = operand_struct_info(&call.op, ctx)?;
            let Some(func) = callee.as_func() else {
                return Err(Diagnostic::new(
                    "callee-not-function",
                    format!("the callee of a call must be a function, found {callee}"),
                ));
            };
            let analyzer = shape_analyzer(&ctx.analyzer, arg_sinfos);
            derive_call_ret_struct_info(func, &call, &analyzer)
        }
    }
}

/// `call` with StructInfo on every argument and on a non-`Op` callee, so
/// that inference sees what it would see in a normalized program.
fn with_operand_struct_info<'c>(
    call: &'c Call,
    ctx: &DeriveContext<'_>,
) -> Result<Cow<'c, Call>, Diagnostic> {
    let needs = |e: &Expr| e.struct_info().is_none() && !matches!(e.kind(), ExprKind::Op(_));
    if !needs(&call.op) && !call.args.iter().any(needs) {
        return Ok(Cow::Borrowed(call));
    }
    let fill = |e: &Expr| -> Result<Expr, Diagnostic> {
        if needs(e) {
            Ok(e.with_struct_info(derive_struct_info(e, ctx)?))
        } else {
            Ok(e.clone())
        }
    };
    let mut filled = call.clone();
    filled.op = fill(&call.op)?;
    filled.args = call.args.iter().map(fill).collect::<Result<_, _>>()?;
    Ok(Cow::Owned(filled))
}

/// The StructInfo of a `SeqExpr` whose body has StructInfo `body`: `body`
/// erased of the Relax variables bound in `seq` and of the symbolic
/// variables first defined by its `MatchCast`s. A variable for which
/// `is_defined_outside` holds is never treated as defined inside (a
/// `MatchCast` of it is a check, not a definition).
pub fn seq_expr_struct_info(
    seq: &SeqExpr,
    body: &StructInfo,
    is_defined_outside: &dyn Fn(&TirVar) -> bool,
    analyzer: &Analyzer,
) -> StructInfo {
    let bound: HashSet<Var> = seq
        .blocks
        .iter()
        .flat_map(|b| &b.bindings)
        .map(|b| b.var().clone())
        .collect();
    let local = match_cast_defined_vars(seq, is_defined_outside);
    if bound.is_empty() && local.is_empty() {
        return body.clone();
    }
    let shape_var = |v: &TirVar| (!local.contains(v)).then(|| PrimExpr::var(v));
    let var = |v: &Var| (!bound.contains(v)).then(|| Expr::var(v));
    erase_to_well_defined_with(body, &shape_var, &var, analyzer)
}

/// The symbolic variables that the `MatchCast`s of `seq` define: those in a
/// binding position of the cast's StructInfo that nothing evaluated before
/// mentions (a variable already in use is defined earlier, and the cast only
/// checks it).
fn match_cast_defined_vars(
    seq: &SeqExpr,
    is_defined_outside: &dyn Fn(&TirVar) -> bool,
) -> HashSet<TirVar> {
    let mut known: HashSet<TirVar> = HashSet::new();
    let mut local: HashSet<TirVar> = HashSet::new();
    for binding in seq.blocks.iter().flat_map(|b| &b.bindings) {
        mentioned_tir_vars(binding.value(), &mut known);
        if let Binding::MatchCast(mc) = binding {
            for v in mc.struct_info.definable_tir_vars() {
                if !known.contains(&v) && !is_defined_outside(&v) {
                    local.insert(v);
                }
            }
            known.extend(mc.struct_info.tir_vars());
        }
        if let Some(s) = binding.var().struct_info() {
            known.extend(s.tir_vars());
        }
    }
    local
}

/// Adds the symbolic variables that `e` and its operands mention (in their
/// StructInfo and in shape and prim values), without entering nested
/// functions, whose parameters define their own.
fn mentioned_tir_vars(e: &Expr, out: &mut HashSet<TirVar>) {
    if let Some(s) = e.struct_info() {
        out.extend(s.tir_vars());
    }
    match e.kind() {
        ExprKind::ShapeExpr(values) => out.extend(values.iter().flat_map(PrimExpr::free_vars)),
        ExprKind::PrimValue(v) => out.extend(v.free_vars()),
        ExprKind::Tuple(fields) => fields.iter().for_each(|f| mentioned_tir_vars(f, out)),
        ExprKind::TupleGetItem(t, _) => mentioned_tir_vars(t, out),
        ExprKind::Call(call) => {
            mentioned_tir_vars(&call.op, out);
            call.args.iter().for_each(|a| mentioned_tir_vars(a, out));
            call.sinfo_args
                .iter()
                .for_each(|s| out.extend(s.tir_vars()));
        }
        ExprKind::If(if_) => mentioned_tir_vars(&if_.cond, out),
        _ => {}
    }
}

/// Whether a call may have side effects (spec §"Purity"): an op's registered
/// purity (an unregistered op is pure), the purity of the callee's function
/// StructInfo, and an `ExternFunc` callee is impure. A callee whose
/// StructInfo is unknown is not reported impure: its missing StructInfo is
/// the error (see [`is_impure_call_in`] to look global functions up).
pub fn is_impure_call(call: &Call) -> bool {
    is_impure_call_in(call, None)
}

/// [`is_impure_call`], looking up the StructInfo of a `GlobalVar` callee that
/// carries none in `module`.
pub fn is_impure_call_in(call: &Call, module: Option<&IRModule>) -> bool {
    match call.op.kind() {
        ExprKind::Op(op) => crate::op::lookup(op.name()).is_some_and(|info| !info.purity),
        ExprKind::ExternFunc(_) => true,
        ExprKind::GlobalVar(gv) => {
            let sinfo = call.op.struct_info().cloned().or_else(|| {
                module
                    .and_then(|m| m.get(gv.name_hint()))
                    .map(|f| f.struct_info())
            });
            sinfo
                .as_ref()
                .and_then(StructInfo::as_func)
                .is_some_and(|f| !f.purity)
        }
        _ => call
            .op
            .struct_info()
            .and_then(StructInfo::as_func)
            .is_some_and(|f| !f.purity),
    }
}
