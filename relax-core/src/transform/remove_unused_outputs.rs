//! `RemoveUnusedOutputs`: fields of a private function's tuple result that
//! no caller reads are no longer returned (TVM's
//! `relax.transform.RemoveUnusedOutputs`).
//!
//! A private Relax function (no `global_symbol`) whose body ends in a
//! tuple literal qualifies when every use of it in the module is a call
//! bound to a variable, `r = f(…)`, and every use of such an `r` is a
//! projection `r[i]`. The fields no projection reads are dropped from the
//! result (and from the result annotation); the projections are renumbered.
//! Whatever computed the dropped fields is left to DeadCodeElimination.

use super::Pass;
use crate::ir::{
    Binding, Expr, ExprKind, Function, GlobalVar, IRModule, StructInfo, StructInfoKind, Var,
};
use crate::mutator::{mutate_module, ExprMutator, MutatorState};
use relax_runtime::Error;
use std::collections::{BTreeSet, HashMap, HashSet};

/// The pass. See the module docs.
#[derive(Clone, Copy, Debug, Default)]
pub struct RemoveUnusedOutputs;

impl Pass for RemoveUnusedOutputs {
    fn name(&self) -> &str {
        "RemoveUnusedOutputs"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        let mut candidates: HashMap<GlobalVar, BTreeSet<usize>> = HashMap::new();
        for (gv, f) in module.functions() {
            let Some(func) = f.as_relax() else { continue };
            if func.global_symbol().is_none() && result_fields(func).is_some() {
                candidates.insert(gv.clone(), BTreeSet::new());
            }
        }
        // Which fields callers read; a use of another kind disqualifies.
        let mut disqualified: HashSet<GlobalVar> = HashSet::new();
        for (_, f) in module.functions() {
            if let Some(func) = f.as_relax() {
                walk(
                    &func.body,
                    &mut candidates,
                    &mut disqualified,
                    &mut HashMap::new(),
                );
            }
        }
        // Callee → the callee with its new StructInfo, and old field
        // index → new one.
        let mut renumber: HashMap<GlobalVar, Renumbering> = HashMap::new();
        let mut out = module.clone();
        for (gv, used) in &candidates {
            if disqualified.contains(gv) {
                continue;
            }
            let Some(func) = module.get_relax(gv.name_hint()) else {
                continue;
            };
            let Some(fields) = result_fields(func) else {
                continue;
            };
            if used.len() == fields.len() {
                continue;
            }
            let Some(seq) = func.body.as_seq() else {
                continue;
            };
            let kept: Vec<Expr> = used.iter().map(|&i| fields[i].clone()).collect();
            let ret = match func.ret_struct_info.kind() {
                StructInfoKind::Tuple(t) => {
                    StructInfo::tuple(used.iter().filter_map(|&i| t.get(i).cloned()).collect())
                }
                _ => continue,
            };
            let new = Function {
                body: Expr::seq(seq.blocks.clone(), Expr::tuple(kept)),
                ret_struct_info: ret,
                ..func.clone()
            };
            let callee = Expr::global_var(gv.clone()).with_struct_info(new.struct_info());
            out.add(gv.clone(), new);
            let map = used
                .iter()
                .enumerate()
                .map(|(new, &old)| (old, new))
                .collect();
            renumber.insert(gv.clone(), (callee, map));
        }
        if renumber.is_empty() {
            return Ok(module);
        }
        let mut m = Renumber {
            state: MutatorState::with_module(&out),
            renumber: &renumber,
            results: HashMap::new(),
        };
        mutate_module(&mut m, &out)
    }
}

/// The fields of the tuple literal `func`'s body ends in.
fn result_fields(func: &Function) -> Option<&[Expr]> {
    let seq = func.body.as_seq()?;
    match seq.body.kind() {
        ExprKind::Tuple(fields) => Some(fields),
        _ => None,
    }
}

/// The callee of `e` if it calls a candidate.
fn callee<'a>(
    e: &'a Expr,
    candidates: &HashMap<GlobalVar, BTreeSet<usize>>,
) -> Option<&'a GlobalVar> {
    match e.kind() {
        ExprKind::Call(c) => match c.op.kind() {
            ExprKind::GlobalVar(g) if candidates.contains_key(g) => Some(g),
            _ => None,
        },
        _ => None,
    }
}

/// Records the fields read through results of candidate calls in `e`
/// (`results`: the variables those results are bound to), and disqualifies
/// candidates used any other way.
fn walk(
    e: &Expr,
    candidates: &mut HashMap<GlobalVar, BTreeSet<usize>>,
    disqualified: &mut HashSet<GlobalVar>,
    results: &mut HashMap<Var, GlobalVar>,
) {
    match e.kind() {
        ExprKind::GlobalVar(g) if candidates.contains_key(g) => {
            disqualified.insert(g.clone());
        }
        ExprKind::Var(v) => {
            // A result used whole.
            if let Some(g) = results.get(v) {
                disqualified.insert(g.clone());
            }
        }
        ExprKind::TupleGetItem(t, i) => match t.kind() {
            ExprKind::Var(v) if results.contains_key(v) => {
                if let Some(used) = candidates.get_mut(&results[v]) {
                    used.insert(*i);
                }
            }
            _ => walk(t, candidates, disqualified, results),
        },
        ExprKind::Call(c) => {
            // A candidate call not bound to a variable is handled by the
            // binding case; here only its arguments are walked.
            if !matches!(c.op.kind(), ExprKind::GlobalVar(g) if candidates.contains_key(g)) {
                walk(&c.op, candidates, disqualified, results);
            }
            c.args
                .iter()
                .for_each(|a| walk(a, candidates, disqualified, results));
        }
        ExprKind::Tuple(fields) => fields
            .iter()
            .for_each(|f| walk(f, candidates, disqualified, results)),
        ExprKind::SeqExpr(seq) => {
            for b in seq.blocks.iter().flat_map(|b| &b.bindings) {
                match (b, callee(b.value(), candidates)) {
                    (Binding::VarBinding(vb), Some(g)) => {
                        results.insert(vb.var.clone(), g.clone());
                        walk(&vb.value, candidates, disqualified, results);
                    }
                    (_, Some(g)) => {
                        disqualified.insert(g.clone());
                    }
                    _ => walk(b.value(), candidates, disqualified, results),
                }
            }
            walk(&seq.body, candidates, disqualified, results);
        }
        ExprKind::If(i) => {
            walk(&i.cond, candidates, disqualified, results);
            walk(&i.true_branch, candidates, disqualified, results);
            walk(&i.false_branch, candidates, disqualified, results);
        }
        ExprKind::Function(f) => walk(&f.body, candidates, disqualified, results),
        _ => {}
    }
}

/// Renumbers the projections of the changed functions' results.
/// A changed function as a callee, and its old field indices → new ones.
type Renumbering = (Expr, HashMap<usize, usize>);

struct Renumber<'a> {
    state: MutatorState,
    renumber: &'a HashMap<GlobalVar, Renumbering>,
    /// Result variables (as rebuilt) → their callee.
    results: HashMap<Var, GlobalVar>,
}

impl ExprMutator for Renumber<'_> {
    fn state(&mut self) -> &mut MutatorState {
        &mut self.state
    }
    /// A changed function's StructInfo is its new one.
    fn visit_global_var(&mut self, expr: &Expr, gv: &GlobalVar) -> Expr {
        match self.renumber.get(gv) {
            Some((callee, _)) => callee.clone(),
            None => expr.clone(),
        }
    }
    fn visit_var_binding(&mut self, binding: &crate::ir::VarBinding) {
        let value = self.visit_expr(&binding.value);
        self.reemit_binding(binding, value);
        if let ExprKind::Call(c) = binding.value.kind() {
            if let ExprKind::GlobalVar(g) = c.op.kind() {
                if self.renumber.contains_key(g) {
                    let var = self
                        .var_remap()
                        .get(&binding.var)
                        .cloned()
                        .unwrap_or_else(|| binding.var.clone());
                    self.results.insert(var, g.clone());
                }
            }
        }
    }
    fn visit_tuple_get_item(&mut self, expr: &Expr) -> Expr {
        let ExprKind::TupleGetItem(t, i) = expr.kind() else {
            return self.visit_expr_post_order(expr);
        };
        // Renumbered before normalizing: the old index may be past the end
        // of the new result.
        let t = self.visit_expr(t);
        let new = t
            .as_var()
            .and_then(|v| self.results.get(v))
            .and_then(|g| self.renumber.get(g))
            .and_then(|(_, map)| map.get(i).copied())
            .unwrap_or(*i);
        self.normalize(Expr::tuple_get_item(t, new))
    }
}

#[cfg(test)]
mod tests;
