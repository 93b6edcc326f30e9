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
use crate::analysis::vars::{free_vars, used_other_than_as_callee};
use crate::ir::{Call, Expr, ExprKind, Function, GlobalVar, IRModule, TirVar, Var};
use crate::mutator::{mutate_module, ExprMutator, MutatorState};
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
        // Callee → the callee with its new StructInfo, and the parameter
        // indices that stay.
        let mut kept: HashMap<GlobalVar, (Expr, Vec<usize>)> = HashMap::new();
        let mut out = module.clone();
        for (gv, f) in module.functions() {
            let Some(func) = f.as_relax() else { continue };
            let is_gv = |e: &Expr| matches!(e.kind(), ExprKind::GlobalVar(g) if g == gv);
            let only_called = module
                .functions()
                .filter_map(|(_, f)| f.as_relax())
                .all(|f| !used_other_than_as_callee(&f.body, is_gv));
            if func.global_symbol().is_some() || !only_called {
                continue;
            }
            let keep = parameters_to_keep(func);
            if keep.len() == func.params.len() {
                continue;
            }
            let new = Function {
                params: keep.iter().map(|&i| func.params[i].clone()).collect(),
                ..func.clone()
            };
            let callee = Expr::global_var(gv.clone()).with_struct_info(new.struct_info());
            out.add(gv.clone(), new);
            kept.insert(gv.clone(), (callee, keep));
        }
        if kept.is_empty() {
            return Ok(module);
        }
        // Every call site passes the arguments that stay.
        let mut m = DropArguments {
            state: MutatorState::with_module(&out),
            kept: &kept,
        };
        mutate_module(&mut m, &out)
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

/// Drops the removed parameters' arguments from calls of the changed
/// functions.
struct DropArguments<'a> {
    state: MutatorState,
    kept: &'a HashMap<GlobalVar, (Expr, Vec<usize>)>,
}

impl ExprMutator for DropArguments<'_> {
    fn state(&mut self) -> &mut MutatorState {
        &mut self.state
    }
    fn visit_call(&mut self, expr: &Expr, call: &Call) -> Expr {
        let changed = match call.op.kind() {
            ExprKind::GlobalVar(g) => self.kept.get(g),
            _ => None,
        };
        let Some((callee, keep)) = changed else {
            return self.visit_expr_post_order(expr);
        };
        let args = keep
            .iter()
            .filter_map(|&i| call.args.get(i))
            .map(|a| self.visit_expr(a))
            .collect();
        self.normalize(Expr::call_full(
            callee.clone(),
            args,
            call.attrs.clone(),
            call.sinfo_args.clone(),
        ))
    }
}

#[cfg(test)]
mod tests;
