//! A rewrite given as two Relax functions, as TVM's `@R.rewriter` writes
//! it (and `relax::rewriter!` generates): `pattern(params…)` describes what
//! to find, `replacement(params…)` what to put instead.
//!
//! 1. **The pattern** is the `pattern` function's result, read through its
//!    bindings: a call of an op becomes a call pattern of that op (its
//!    attributes are not compared), a constant an `is_expr`, a tuple and a
//!    tuple field their patterns, and each parameter a wildcard named after
//!    it with the parameter's StructInfo (its symbolic dims bind on first
//!    use, so two parameters of shape `(n, m)` must agree).
//! 2. **The replacement** is the `replacement` function's result with its
//!    bindings inlined into one expression and each parameter replaced by
//!    what the pattern's parameter of the same position matched; the
//!    rewrite normalizes it into bindings of the block it lands in. A value
//!    the replacement uses twice is computed twice.
//! 3. Both functions must have the same number of parameters. A form the
//!    pattern cannot express (control flow, a call of a function) is an
//!    error naming it.

use super::pattern::{is_expr, is_tuple, is_tuple_get_item, named, wildcard, Pattern};
use super::rewrite::PatternRewriter;
use crate::ir::expr::Var;
use crate::ir::{Expr, ExprKind, Function, IRModule};
use relax_runtime::{Diagnostic, Error};
use std::collections::HashMap;

fn error(message: String) -> Error {
    Error::Compile(vec![Diagnostic::new("rewriter-unsupported", message)])
}

/// The values bound in `f`'s body, and its result.
fn bindings_of(f: &Function) -> (HashMap<Var, Expr>, Expr) {
    let mut values = HashMap::new();
    match f.body.as_seq() {
        Some(seq) => {
            for b in seq.blocks.iter().flat_map(|b| &b.bindings) {
                values.insert(b.var().clone(), b.value().clone());
            }
            (values, seq.body.clone())
        }
        None => (values, f.body.clone()),
    }
}

/// Point 1 of the module docs.
fn pattern_of(
    e: &Expr,
    values: &HashMap<Var, Expr>,
    params: &HashMap<Var, Pattern>,
) -> Result<Pattern, Error> {
    match e.kind() {
        ExprKind::Var(v) => match (params.get(v), values.get(v)) {
            (Some(p), _) => Ok(p.clone()),
            (None, Some(value)) => pattern_of(value, values, params),
            (None, None) => Err(error(format!(
                "the pattern uses `{}`, which it does not define",
                v.name_hint()
            ))),
        },
        ExprKind::Call(c) => match c.op.kind() {
            ExprKind::Op(op) => {
                let args = c
                    .args
                    .iter()
                    .map(|a| pattern_of(a, values, params))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(super::pattern::__op(op.name()).call(args))
            }
            _ => Err(error(format!(
                "a pattern function can only call operators, found a call of `{}`",
                c.op
            ))),
        },
        ExprKind::Constant(_)
        | ExprKind::PrimValue(_)
        | ExprKind::ShapeExpr(_)
        | ExprKind::StringImm(_)
        | ExprKind::DataTypeImm(_) => Ok(is_expr(e.clone())),
        ExprKind::Tuple(fields) => Ok(is_tuple(
            fields
                .iter()
                .map(|f| pattern_of(f, values, params))
                .collect::<Result<Vec<_>, _>>()?,
        )),
        ExprKind::TupleGetItem(t, i) => {
            Ok(is_tuple_get_item(pattern_of(t, values, params)?, Some(*i)))
        }
        _ => Err(error(
            "a pattern function can only use operator calls, tuples, constants and its parameters"
                .into(),
        )),
    }
}

/// Point 2 of the module docs: `e` with bound variables inlined and
/// parameters replaced.
fn inline(e: &Expr, values: &HashMap<Var, Expr>, args: &HashMap<Var, Expr>) -> Expr {
    match e.kind() {
        ExprKind::Var(v) => match (args.get(v), values.get(v)) {
            (Some(a), _) => a.clone(),
            (None, Some(value)) => inline(value, values, args),
            (None, None) => e.clone(),
        },
        ExprKind::Call(c) => Expr::call_full(
            inline(&c.op, values, args),
            c.args.iter().map(|a| inline(a, values, args)).collect(),
            c.attrs.clone(),
            c.sinfo_args.clone(),
        ),
        ExprKind::Tuple(fields) => {
            Expr::tuple(fields.iter().map(|f| inline(f, values, args)).collect())
        }
        ExprKind::TupleGetItem(t, i) => Expr::tuple_get_item(inline(t, values, args), *i),
        _ => e.clone(),
    }
}

/// The rewrite of `module`'s functions `pattern` and `replacement` as a
/// pass named `name`. See the module docs.
pub fn rewriter_from_functions(
    module: &IRModule,
    name: &str,
    pattern: &str,
    replacement: &str,
) -> Result<PatternRewriter, Error> {
    let get = |n: &str| {
        module
            .get_relax(n)
            .cloned()
            .ok_or_else(|| error(format!("the module has no Relax function `{n}`")))
    };
    let (pf, rf) = (get(pattern)?, get(replacement)?);
    if pf.params.len() != rf.params.len() {
        return Err(error(format!(
            "`{pattern}` takes {} parameters and `{replacement}` {}: they must agree",
            pf.params.len(),
            rf.params.len()
        )));
    }
    let wildcards: Vec<Pattern> = pf
        .params
        .iter()
        .map(|p| match p.struct_info() {
            Some(s) => named(p.name_hint(), wildcard().has_struct_info(s.clone())),
            None => named(p.name_hint(), wildcard()),
        })
        .collect();
    let params: HashMap<Var, Pattern> = pf
        .params
        .iter()
        .cloned()
        .zip(wildcards.iter().cloned())
        .collect();
    let (values, result) = bindings_of(&pf);
    let pat = pattern_of(&result, &values, &params)?;
    let (rvalues, rresult) = bindings_of(&rf);
    let rparams = rf.params.clone();
    let names: Vec<String> = pf
        .params
        .iter()
        .map(|p| p.name_hint().to_string())
        .collect();
    Ok(PatternRewriter::new(name, pat, move |orig, m| {
        let mut args = HashMap::new();
        for (p, n) in rparams.iter().zip(&names) {
            match m.named(n) {
                Some(e) => {
                    args.insert(p.clone(), e.clone());
                }
                None => return orig.clone(),
            }
        }
        inline(&rresult, &rvalues, &args)
    }))
}
