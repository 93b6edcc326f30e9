//! `RemoveUnusedParameters`: parameters a private function never reads are
//! removed, with the matching arguments at every call site (TVM's
//! `relax.transform.RemoveUnusedParameters`).
//!
//! Only private Relax functions (no `global_symbol`) whose every use in the
//! module is as the callee of a call are changed: only then can every call
//! site be updated. A parameter goes when the body does not use it and the
//! symbolic variables its annotation defines are also defined by the
//! parameters that stay (an `R.Prim(value="m")` or `R.Shape(["m", "n"])`
//! passed beside a tensor of shape `(m, n)`). A parameter that alone
//! defines a symbolic variable stays, even if the body ignores it (TVM
//! would pass that variable as a new `R.Prim` parameter; that form is not
//! built).

use super::Pass;
use crate::analysis::vars::free_vars;
use crate::ir::{BaseFunc, Call, Expr, ExprKind, Function, GlobalVar, IRModule, TirVar, Var};
use crate::mutator::{ExprMutator, MutatorState};
use relax_runtime::Error;
use std::collections::{HashMap, HashSet};

/// The pass. See the module docs.
#[derive(Clone, Copy, Debug, Default)]
pub struct RemoveUnusedParameters;

impl Pass for RemoveUnusedParameters {
    fn name(&self) -> &str {
        "RemoveUnusedParameters"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        // Callee → the parameter indices that stay.
        let mut kept: HashMap<GlobalVar, Vec<usize>> = HashMap::new();
        let mut out = module.clone();
        for (gv, f) in module.functions() {
            let Some(func) = f.as_relax() else { continue };
            if func.global_symbol().is_some() || !only_called(&module, gv) {
                continue;
            }
            let keep = parameters_to_keep(func);
            if keep.len() == func.params.len() {
                continue;
            }
            let params = keep.iter().map(|&i| func.params[i].clone()).collect();
            out.add(
                gv.clone(),
                Function {
                    params,
                    ..func.clone()
                },
            );
            kept.insert(gv.clone(), keep);
        }
        if kept.is_empty() {
            return Ok(module);
        }
        // Every call site passes the arguments that stay.
        let snapshot = out.clone();
        for (gv, f) in snapshot.functions() {
            let Some(func) = f.as_relax() else { continue };
            let mut m = DropArguments {
                state: MutatorState::with_module(&snapshot),
                kept: &kept,
            };
            let e = m.visit_expr(&Expr::function(func.clone()));
            let errors = m.state.builder.take_errors();
            if !errors.is_empty() {
                return Err(Error::Compile(errors));
            }
            if let Some(new) = e.as_function() {
                out.add(gv.clone(), new.clone());
            }
        }
        Ok(out)
    }
}

/// The indices of the parameters of `func` that stay, in order.
fn parameters_to_keep(func: &Function) -> Vec<usize> {
    let used: HashSet<Var> = free_vars(&func.body).into_iter().collect();
    let definable = |p: &Var| -> Vec<TirVar> {
        p.struct_info()
            .map(|s| s.definable_tir_vars())
            .unwrap_or_default()
    };
    let mut keep: Vec<bool> = func.params.iter().map(|p| used.contains(p)).collect();
    let mut defined: HashSet<TirVar> = func
        .params
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .flat_map(|(p, _)| definable(p))
        .collect();
    for (i, p) in func.params.iter().enumerate() {
        if keep[i] {
            continue;
        }
        let vars = p.struct_info().map(|s| s.tir_vars()).unwrap_or_default();
        if !vars.iter().all(|v| defined.contains(v)) {
            keep[i] = true;
            defined.extend(definable(p));
        }
    }
    (0..func.params.len()).filter(|&i| keep[i]).collect()
}

/// Whether every use of `gv` in `module` is as the callee of a call.
fn only_called(module: &IRModule, gv: &GlobalVar) -> bool {
    module.functions().all(|(_, f)| match f {
        BaseFunc::Relax(func) => !used_as_value(&func.body, gv),
        _ => true,
    })
}

/// Whether `e` uses `gv` other than as a callee.
fn used_as_value(e: &Expr, gv: &GlobalVar) -> bool {
    match e.kind() {
        ExprKind::GlobalVar(g) => g == gv,
        ExprKind::Call(c) => {
            let op_is_gv = matches!(c.op.kind(), ExprKind::GlobalVar(g) if g == gv);
            (!op_is_gv && used_as_value(&c.op, gv)) || c.args.iter().any(|a| used_as_value(a, gv))
        }
        ExprKind::Tuple(fields) => fields.iter().any(|f| used_as_value(f, gv)),
        ExprKind::TupleGetItem(t, _) => used_as_value(t, gv),
        ExprKind::SeqExpr(seq) => {
            seq.blocks
                .iter()
                .flat_map(|b| &b.bindings)
                .any(|b| used_as_value(b.value(), gv))
                || used_as_value(&seq.body, gv)
        }
        ExprKind::If(i) => {
            used_as_value(&i.cond, gv)
                || used_as_value(&i.true_branch, gv)
                || used_as_value(&i.false_branch, gv)
        }
        ExprKind::Function(f) => used_as_value(&f.body, gv),
        _ => false,
    }
}

/// Drops the removed parameters' arguments from calls of the changed
/// functions.
struct DropArguments<'a> {
    state: MutatorState,
    kept: &'a HashMap<GlobalVar, Vec<usize>>,
}

impl ExprMutator for DropArguments<'_> {
    fn state(&mut self) -> &mut MutatorState {
        &mut self.state
    }
    fn visit_call(&mut self, _expr: &Expr, call: &Call) -> Expr {
        let args: Vec<Expr> = call.args.iter().map(|a| self.visit_expr(a)).collect();
        let keep = match call.op.kind() {
            ExprKind::GlobalVar(g) => self.kept.get(g),
            _ => None,
        };
        let op = match keep {
            // The callee's StructInfo is the new function's.
            Some(_) => match call.op.kind() {
                ExprKind::GlobalVar(g) => self.builder().get().global_var_expr(g),
                _ => call.op.clone(),
            },
            None => self.visit_expr(&call.op),
        };
        let args = match keep {
            Some(keep) => keep.iter().filter_map(|&i| args.get(i).cloned()).collect(),
            None => args,
        };
        self.normalize(Expr::call_full(
            op,
            args,
            call.attrs.clone(),
            call.sinfo_args.clone(),
        ))
    }
}

#[cfg(test)]
mod tests;
