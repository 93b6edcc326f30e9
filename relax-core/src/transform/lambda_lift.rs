//! `LambdaLift`: local functions become private functions of the module
//! (TVM's `relax.transform.LambdaLift`), so that a module with nested
//! functions builds (the VM runs module-level functions only).
//!
//! A binding `f = <function>` inside a function `outer` is lifted to the
//! private function `outer_f`. The variables the local function uses from
//! its surroundings (its *captures*) become its first parameters, and each
//! call `f(args)` becomes `outer_f(captures…, args)`; the binding goes.
//! A local function used other than as a callee (returned, passed on,
//! stored in a tuple) needs a closure object, which the VM does not have:
//! it is left in place, and the build reports it. So is a local function
//! that calls itself (its recursive calls would need it as a value).
//! Functions nested several levels deep are lifted from the inside out.

use super::Pass;
use crate::analysis::vars::free_vars;
use crate::ir::{Call, Expr, ExprKind, Function, GlobalVar, IRModule, Var, VarBinding};
use crate::mutator::{ExprMutator, MutatorState};
use relax_runtime::Error;
use std::collections::HashMap;

/// The pass. See the module docs.
#[derive(Clone, Copy, Debug, Default)]
pub struct LambdaLift;

impl Pass for LambdaLift {
    fn name(&self) -> &str {
        "LambdaLift"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        let has_local = module
            .functions()
            .filter_map(|(_, f)| f.as_relax())
            .any(|f| contains_function(&f.body));
        if !has_local {
            return Ok(module);
        }
        let mut out = module.clone();
        for (gv, f) in module.functions() {
            let Some(func) = f.as_relax() else { continue };
            if !contains_function(&func.body) {
                continue;
            }
            let mut m = Lift {
                state: MutatorState::with_module(&out),
                outer: gv.name_hint().to_string(),
                lifted: HashMap::new(),
            };
            let e = m.visit_expr(&Expr::function(func.clone()));
            let errors = m.state.builder.take_errors();
            if !errors.is_empty() {
                return Err(Error::Compile(errors));
            }
            let with_lifted = m.state.builder.get();
            for (g, lf) in with_lifted.functions() {
                if !out.contains(g) {
                    out.add(g.clone(), lf.clone());
                }
            }
            if let Some(new) = e.as_function() {
                out.add(gv.clone(), new.clone());
            }
        }
        Ok(out)
    }
}

/// Whether `e` binds a local function somewhere.
fn contains_function(e: &Expr) -> bool {
    match e.kind() {
        ExprKind::Function(_) => true,
        ExprKind::SeqExpr(seq) => {
            seq.blocks
                .iter()
                .flat_map(|b| &b.bindings)
                .any(|b| contains_function(b.value()))
                || contains_function(&seq.body)
        }
        ExprKind::If(i) => contains_function(&i.true_branch) || contains_function(&i.false_branch),
        _ => false,
    }
}

/// Whether `var` appears in `e` other than as the callee of a call.
fn used_as_value(e: &Expr, var: &Var) -> bool {
    match e.kind() {
        ExprKind::Var(v) => v == var,
        ExprKind::Call(c) => {
            let callee = matches!(c.op.kind(), ExprKind::Var(v) if v == var);
            (!callee && used_as_value(&c.op, var)) || c.args.iter().any(|a| used_as_value(a, var))
        }
        ExprKind::Tuple(fields) => fields.iter().any(|f| used_as_value(f, var)),
        ExprKind::TupleGetItem(t, _) => used_as_value(t, var),
        ExprKind::SeqExpr(seq) => {
            seq.blocks
                .iter()
                .flat_map(|b| &b.bindings)
                .any(|b| used_as_value(b.value(), var))
                || used_as_value(&seq.body, var)
        }
        ExprKind::If(i) => {
            used_as_value(&i.cond, var)
                || used_as_value(&i.true_branch, var)
                || used_as_value(&i.false_branch, var)
        }
        ExprKind::Function(f) => used_as_value(&f.body, var),
        _ => false,
    }
}

struct Lift {
    state: MutatorState,
    outer: String,
    /// Local function variable → its lifted function and captures.
    lifted: HashMap<Var, (GlobalVar, Vec<Var>)>,
}

impl ExprMutator for Lift {
    fn state(&mut self) -> &mut MutatorState {
        &mut self.state
    }

    fn visit_var_binding(&mut self, binding: &VarBinding) {
        let ExprKind::Function(local) = binding.value.kind() else {
            let value = self.visit_expr(&binding.value);
            self.reemit_binding(binding, value);
            return;
        };
        // Whatever the local function's own body nests is lifted first.
        let visited = self.visit_expr(&binding.value);
        let local = visited
            .as_function()
            .cloned()
            .unwrap_or_else(|| local.clone());
        let captures: Vec<Var> = free_vars(&Expr::function(local.clone()));
        // A recursive local function, or one used as a value, stays.
        if captures.contains(&binding.var) || self.used_as_value_later(&binding.var) {
            self.reemit_binding(binding, visited);
            return;
        }
        let name = self.unique_name(&format!("{}_{}", self.outer, binding.var.name_hint()));
        let gv = GlobalVar::new(&name);
        // The captures become parameters of their own.
        let params: Vec<Var> = captures
            .iter()
            .map(|c| Var::new(c.name_hint(), c.struct_info().cloned()))
            .chain(local.params.iter().cloned())
            .collect();
        let lifted = Function {
            params: params.clone(),
            ..local.clone()
        };
        self.lifted
            .insert(binding.var.clone(), (gv.clone(), captures.clone()));
        // The body reads the new parameters.
        let replace: HashMap<Var, Var> = captures
            .iter()
            .cloned()
            .zip(params.iter().cloned())
            .collect();
        let mut inner = Rewrite {
            state: MutatorState::with_module(&self.builder().get()),
            replace: &replace,
        };
        let lifted_expr = inner.visit_expr(&Expr::function(lifted.clone()));
        let errors = inner.state.builder.take_errors();
        for e in errors {
            self.builder().report(Error::Compile(vec![e]));
        }
        let lifted = lifted_expr.as_function().cloned().unwrap_or(lifted);
        self.builder().add_func(lifted, &name);
    }

    fn visit_call(&mut self, expr: &Expr, call: &Call) -> Expr {
        let callee = call.op.as_var().and_then(|v| self.lifted.get(v)).cloned();
        let Some((gv, captures)) = callee else {
            return self.visit_expr_post_order(expr);
        };
        let mut args: Vec<Expr> = captures
            .iter()
            .map(|c| self.visit_expr(&Expr::var(c)))
            .collect();
        args.extend(call.args.iter().map(|a| self.visit_expr(a)));
        let op = self.builder().get().global_var_expr(&gv);
        self.normalize(Expr::call_full(
            op,
            args,
            call.attrs.clone(),
            call.sinfo_args.clone(),
        ))
    }
}

impl Lift {
    /// A name no function of the module has yet.
    fn unique_name(&mut self, base: &str) -> String {
        let module = self.builder().get();
        let mut name = base.to_string();
        let mut n = 1;
        while module.global_var(&name).is_some() {
            name = format!("{base}_{n}");
            n += 1;
        }
        name
    }

    /// Whether `var` is used as a value anywhere in the function being
    /// rewritten (looked up in the original function of the module).
    fn used_as_value_later(&mut self, var: &Var) -> bool {
        let module = self.builder().get();
        let outer = self.outer.clone();
        module
            .get_relax(&outer)
            .is_some_and(|f| used_as_value(&f.body, var))
    }
}

/// Inside a lifted function: captures become its parameters.
struct Rewrite<'a> {
    state: MutatorState,
    replace: &'a HashMap<Var, Var>,
}

impl ExprMutator for Rewrite<'_> {
    fn state(&mut self) -> &mut MutatorState {
        &mut self.state
    }
    fn visit_var(&mut self, expr: &Expr, var: &Var) -> Expr {
        if let Some(v) = self.replace.get(var) {
            return Expr::var(v);
        }
        self.var_remap()
            .get(var)
            .map_or_else(|| expr.clone(), Expr::var)
    }
}

#[cfg(test)]
mod tests;
