//! The module: signatures, then bodies, then the well-formedness check.
//!
//! 1. Every function's signature is lowered first and its `GlobalVar`
//!    expression gets function StructInfo (forward references work).
//! 2. Bodies are lowered through one [`BlockBuilder`]. Functions with a
//!    return annotation go in source order; one without is lowered before
//!    the functions that mention it, so its callers see its derived result.
//! 3. A function whose body has errors is dropped; the others are still
//!    checked. The module is returned only when no error was found, after
//!    `well_formed` (whose diagnostics, if any, land on the function named
//!    in them).

use super::errors::{at, line_col};
use super::lower::{callee_struct_info, global_expr, idents_in, signature, FnCx, Sig};
use super::syntax::{fn_span, FnDef, ModuleDef};
use super::types::dsl;
use super::{FrontendError, FunctionInfo, SpanRange};
use crate::block_builder::BlockBuilder;
use crate::ir::{Expr, IRModule, StructInfo};
use relax_runtime::{Diagnostic, Error};
use std::collections::{HashMap, HashSet};

/// Lowers every function of `def`; errors go to `errors`.
pub(super) fn lower(
    def: &ModuleDef,
    errors: &mut Vec<FrontendError>,
) -> (Option<IRModule>, Vec<FunctionInfo>) {
    // Unique names first: a duplicate is reported and skipped.
    let mut first: HashMap<String, proc_macro2::Span> = HashMap::new();
    let mut funcs: Vec<&FnDef> = Vec::new();
    for f in &def.functions {
        let name = f.name.to_string();
        if let Some(span) = first.get(&name) {
            errors.push(
                FrontendError::spanned(
                    &f.name,
                    format!("duplicate function `{name}` in the module"),
                )
                .with_note(format!("the first `{name}` is{}", at(*span))),
            );
            continue;
        }
        first.insert(name, f.name.span());
        funcs.push(f);
    }

    let sigs: Vec<Sig> = funcs.iter().map(|f| signature(f, errors)).collect();
    let mut globals: HashMap<String, Expr> = funcs
        .iter()
        .zip(&sigs)
        .map(|(f, s)| {
            let name = f.name.to_string();
            let expr = global_expr(&name, callee_struct_info(s, f.pure));
            (name, expr)
        })
        .collect();

    let order = lowering_order(&funcs, &sigs);
    let mut bb = BlockBuilder::new();
    let mut rets: HashMap<usize, StructInfo> = HashMap::new();
    let mut ok = true;
    for i in order {
        let (f, sig) = (funcs[i], &sigs[i]);
        match body(&mut bb, f, sig, &globals, errors) {
            Some(ret) => {
                let name = f.name.to_string();
                let params = sig
                    .params
                    .iter()
                    .map(|p| p.struct_info().cloned().unwrap_or_else(StructInfo::object))
                    .collect();
                globals.insert(
                    name.clone(),
                    global_expr(&name, StructInfo::func(params, ret.clone(), f.pure)),
                );
                rets.insert(i, ret);
            }
            None => ok = false,
        }
        if sig.failed_ret || !sig.bad_params.is_empty() {
            ok = false;
        }
    }
    let infos: Vec<FunctionInfo> = funcs
        .iter()
        .zip(&sigs)
        .enumerate()
        .map(|(i, (f, s))| FunctionInfo {
            name: f.name.to_string(),
            public: f.public,
            params: s
                .params
                .iter()
                .map(|p| {
                    (
                        p.name_hint().to_string(),
                        p.struct_info().cloned().unwrap_or_else(StructInfo::object),
                    )
                })
                .collect(),
            ret: rets
                .get(&i)
                .cloned()
                .or_else(|| s.ret.as_ref().map(|(r, _)| r.clone()))
                .unwrap_or_else(StructInfo::object),
            doc: f.doc.clone(),
            span: fn_span(f),
        })
        .collect();
    if !ok || !errors.is_empty() {
        return (None, infos);
    }
    let module = match bb.finalize() {
        Ok(m) => m,
        Err(e) => {
            errors.extend(to_errors(e, SpanRange::of(&def.ident)));
            return (None, infos);
        }
    };
    if let Err(diags) = crate::analysis::well_formed(&module) {
        for d in diags {
            errors.push(well_formed_error(d, &funcs, def));
        }
        return (None, infos);
    }
    (Some(module), infos)
}

/// The builder's error `err` as frontend errors on `range`.
fn to_errors(err: Error, range: SpanRange) -> Vec<FrontendError> {
    match err {
        Error::Compile(ds) => ds
            .into_iter()
            .map(|d| {
                let mut e = FrontendError::new(range, d.message);
                e.notes = d.notes;
                e
            })
            .collect(),
        other => vec![FrontendError::new(range, other.to_string())],
    }
}

/// A well-formedness diagnostic on the function it names.
fn well_formed_error(d: Diagnostic, funcs: &[&FnDef], def: &ModuleDef) -> FrontendError {
    let span = funcs
        .iter()
        .find(|f| d.message.contains(&format!("function `{}`", f.name)))
        .map_or_else(|| def.ident.span(), |f| fn_span(f));
    let mut e = FrontendError::new(span, d.message)
        .with_note(format!("found by the well-formedness check `{}`", d.code));
    e.notes.extend(d.notes);
    e
}

/// Source order, except that a function without a return annotation comes
/// before the functions that mention it (depth first; cycles keep source
/// order).
fn lowering_order(funcs: &[&FnDef], sigs: &[Sig]) -> Vec<usize> {
    let index: HashMap<String, usize> = funcs
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.to_string(), i))
        .collect();
    let deps: Vec<Vec<usize>> = funcs
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let mut idents = HashSet::new();
            idents_in(quote::ToTokens::to_token_stream(&f.block), &mut idents);
            let mut d: Vec<usize> = idents
                .iter()
                .filter_map(|n| index.get(n).copied())
                .filter(|&j| j != i && sigs[j].ret.is_none())
                .collect();
            d.sort_unstable();
            d
        })
        .collect();
    let mut state = vec![0u8; funcs.len()];
    let mut order = Vec::new();
    // An explicit stack: deep call chains must not overflow the real one.
    for root in 0..funcs.len() {
        if state[root] != 0 {
            continue;
        }
        let mut stack = vec![(root, 0usize)];
        state[root] = 1;
        while let Some((node, next)) = stack.pop() {
            if let Some(&dep) = deps[node].get(next) {
                stack.push((node, next + 1));
                if state[dep] == 0 {
                    state[dep] = 1;
                    stack.push((dep, 0));
                }
            } else {
                state[node] = 2;
                order.push(node);
            }
        }
    }
    order
}

/// Lowers the body of `f` into `bb`; returns the function's result
/// StructInfo, or `None` after recording its errors.
fn body(
    bb: &mut BlockBuilder,
    f: &FnDef,
    sig: &Sig,
    globals: &HashMap<String, Expr>,
    errors: &mut Vec<FrontendError>,
) -> Option<StructInfo> {
    let name = f.name.to_string();
    let before = errors.len();
    let result = bb.function(&name, sig.params.clone(), |bb| {
        bb.set_private(!f.public)?;
        bb.set_pure(f.pure)?;
        for (k, v) in &f.attrs {
            bb.set_func_attr(k, v.clone())?;
        }
        if let Some(doc) = &f.doc {
            bb.set_func_attr("doc", doc.as_str())?;
        }
        let mut cx = FnCx::new(bb, errors, globals, sig, f.pure);
        cx.reserve_names(&f.block);
        let out = cx.function_result(&f.block);
        match out {
            Ok(v) if errors.len() == before => Ok(v),
            // The errors are recorded; this only closes the function.
            _ => Err(Error::Compile(vec![])),
        }
    });
    let gv = match result {
        Ok(gv) => gv,
        Err(e) => {
            errors.extend(to_errors(e, fn_span(f).into()));
            return None;
        }
    };
    let func = bb.get().get_relax(gv.name_hint())?.clone();
    let body_sinfo = func
        .body
        .struct_info()
        .cloned()
        .unwrap_or_else(StructInfo::object);
    let Some((declared, range)) = &sig.ret else {
        return Some(func.ret_struct_info);
    };
    let mut analyzer = crate::arith::Analyzer::new();
    for p in &sig.params {
        for v in p.struct_info().map(|s| s.tir_vars()).unwrap_or_default() {
            analyzer.mark_non_negative(&v);
        }
    }
    use crate::analysis::struct_info_analysis::{struct_info_base_check, BaseCheckResult};
    if struct_info_base_check(declared, &body_sinfo, &analyzer) == BaseCheckResult::FailL0 {
        let mut e = FrontendError::new(
            *range,
            format!(
                "return annotation `{}` does not match the inferred `{}`",
                dsl(declared),
                dsl(&body_sinfo)
            ),
        );
        if let Some((l, c)) = line_col(f.block.brace_token.span.close()) {
            e = e.with_note(format!("the body of `{name}` ends at {l}:{c}"));
        }
        errors.push(e);
        return None;
    }
    let mut func = func;
    func.ret_struct_info = declared.clone();
    bb.update_func(&gv, func);
    Some(declared.clone())
}
