//! `LambdaLift`: local functions become private functions of the module
//! (TVM's `relax.transform.LambdaLift`), so that a module with nested
//! functions builds (the VM runs module-level functions only).
//!
//! A binding `f = <function>` inside a function `outer` is lifted to the
//! private function `outer_f`. The variables the local function uses from
//! its surroundings (its *captures*) become its first parameters, and each
//! call `f(args)` becomes `outer_f(captures…, args)`.
//! 1. A local function only ever called loses its binding.
//! 2. One used as a value (returned, passed on, stored in a tuple) keeps
//!    it, bound to a closure as TVM binds it:
//!    `f = R.make_closure(cls.outer_f, (captures…))`, or `f = cls.outer_f`
//!    when it captures nothing; whoever receives it calls it like any
//!    function value (the VM passes the captured values first).
//! 3. A local function that calls itself calls `outer_f` directly, passing
//!    its own capture parameters on. One that uses itself as a value other
//!    than by calling is left in place, and the build reports it.
//!
//! Functions nested several levels deep are lifted from the inside out.

use super::Pass;
use crate::analysis::vars::{free_vars, used_other_than_as_callee};
use crate::ir::{Call, Expr, ExprKind, Function, IRModule, Var, VarBinding};
use crate::mutator::{replace_vars, ExprMutator, MutatorState};
use crate::visitor::post_order_visit;
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
                outer_body: func.body.clone(),
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
    let mut found = false;
    post_order_visit(e, |x| found |= matches!(x.kind(), ExprKind::Function(_)));
    found
}

struct Lift {
    state: MutatorState,
    outer: String,
    /// The body of the function being rewritten, as it was.
    outer_body: Expr,
    /// Local function variable → its lifted function (as a callee) and
    /// captures.
    lifted: HashMap<Var, (Expr, Vec<Var>)>,
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
        let mut captures: Vec<Var> = free_vars(&Expr::function(local.clone()));
        let is_local = |e: &Expr| e.as_var() == Some(&binding.var);
        let recursive = captures.contains(&binding.var);
        captures.retain(|c| c != &binding.var);
        // A function that uses itself as a value (not by calling) stays.
        if recursive && used_other_than_as_callee(&local.body, is_local) {
            self.reemit_binding(binding, visited);
            return;
        }
        let as_value = used_other_than_as_callee(&self.outer_body, is_local);
        // The captures become parameters of their own, which the body reads.
        let params: Vec<Var> = captures
            .iter()
            .map(|c| Var::new(c.name_hint(), c.struct_info().cloned()))
            .chain(local.params.iter().cloned())
            .collect();
        let replace: HashMap<Var, Expr> = captures
            .iter()
            .cloned()
            .zip(params.iter().map(Expr::var))
            .collect();
        let lifted = Function {
            params,
            ..local.clone()
        };
        let module = self.builder().get();
        let lifted = match replace_vars(&Expr::function(lifted.clone()), &replace, &module) {
            Ok(e) => e.as_function().cloned().unwrap_or(lifted),
            Err(e) => {
                self.builder().report(e);
                lifted
            }
        };
        let name = format!("{}_{}", self.outer, binding.var.name_hint());
        let sinfo = lifted.struct_info();
        let capture_params: Vec<Var> = lifted.params[..captures.len()].to_vec();
        let gv = self.builder().add_func(lifted.clone(), &name);
        let callee = Expr::global_var(gv.clone()).with_struct_info(sinfo);
        if recursive {
            // Its calls of itself become calls of the lifted function with
            // its own capture parameters first.
            let module = self.builder().get();
            let mut inner = Lift {
                state: MutatorState::with_module(&module),
                outer: self.outer.clone(),
                outer_body: lifted.body.clone(),
                lifted: HashMap::from([(
                    binding.var.clone(),
                    (callee.clone(), capture_params.clone()),
                )]),
            };
            let rewritten = inner.visit_expr(&Expr::function(lifted.clone()));
            let errors = inner.state.builder.take_errors();
            if !errors.is_empty() {
                self.builder().report(Error::Compile(errors));
            }
            if let Some(f) = rewritten.as_function() {
                self.builder().update_func(&gv, f.clone());
            }
        }
        if as_value {
            // The binding stays, bound to the closure.
            let value = if captures.is_empty() {
                callee.clone()
            } else {
                let captured: Vec<Expr> = captures
                    .iter()
                    .map(|c| self.visit_expr(&Expr::var(c)))
                    .collect();
                Expr::call(
                    Expr::op("relax.make_closure"),
                    vec![callee.clone(), Expr::tuple(captured)],
                )
            };
            let value = self.normalize(value);
            self.reemit_binding(binding, value);
        }
        self.lifted.insert(binding.var.clone(), (callee, captures));
    }

    fn visit_call(&mut self, expr: &Expr, call: &Call) -> Expr {
        let callee = call.op.as_var().and_then(|v| self.lifted.get(v)).cloned();
        let Some((op, captures)) = callee else {
            return self.visit_expr_post_order(expr);
        };
        let mut args: Vec<Expr> = captures
            .iter()
            .map(|c| self.visit_expr(&Expr::var(c)))
            .collect();
        args.extend(call.args.iter().map(|a| self.visit_expr(a)));
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
