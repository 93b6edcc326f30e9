//! Which variables an expression defines and which it uses from outside
//! (TVM's `free_vars`, `bound_vars` and `all_vars` in `relax.analysis`).
//!
//! 1. A variable is *bound* in an expression when the expression defines it:
//!    a parameter of a function inside it, or the variable of a binding in
//!    one of its `SeqExpr`s.
//! 2. A variable is *free* in an expression when the expression uses it and
//!    does not bind it: for a binding's value inside a dataflow block, the
//!    free variables are exactly the values it reads from the rest of the
//!    function (its producers).
//! 3. Lists are in order of first appearance and hold each variable once, so
//!    results are deterministic (fused functions take their parameters in
//!    this order).

use crate::ir::{Expr, ExprKind, Var};
use crate::visitor::{post_order_visit, walk_expr, ExprVisitor};
use std::collections::HashSet;

/// Every variable definition and use in an expression, in order.
#[derive(Default)]
struct Collect {
    bound: Vec<Var>,
    used: Vec<Var>,
    seen_bound: HashSet<Var>,
    seen_used: HashSet<Var>,
}

impl Collect {
    fn of(expr: &Expr) -> Self {
        let mut c = Collect::default();
        c.visit_expr(expr);
        c
    }
    fn use_(&mut self, v: &Var) {
        if self.seen_used.insert(v.clone()) {
            self.used.push(v.clone());
        }
    }
    fn def(&mut self, v: &Var) {
        if self.seen_bound.insert(v.clone()) {
            self.bound.push(v.clone());
        }
    }
}

impl ExprVisitor for Collect {
    fn visit_expr(&mut self, expr: &Expr) {
        walk_expr(self, expr)
    }
    fn visit_var(&mut self, _: &Expr, v: &Var) {
        self.use_(v)
    }
    fn visit_dataflow_var(&mut self, _: &Expr, v: &Var) {
        self.use_(v)
    }
    fn visit_var_def_var(&mut self, v: &Var) {
        self.def(v)
    }
    fn visit_var_def_dataflow_var(&mut self, v: &Var) {
        self.def(v)
    }
}

/// The variables `expr` uses without binding them, in order of first use.
pub fn free_vars(expr: &Expr) -> Vec<Var> {
    let c = Collect::of(expr);
    c.used
        .into_iter()
        .filter(|v| !c.seen_bound.contains(v))
        .collect()
}

/// The variables `expr` binds (function parameters and binding variables
/// inside it), in order of definition.
pub fn bound_vars(expr: &Expr) -> Vec<Var> {
    Collect::of(expr).bound
}

/// Every variable `expr` binds or uses, bound ones first.
pub fn all_vars(expr: &Expr) -> Vec<Var> {
    let c = Collect::of(expr);
    let mut out = c.bound;
    out.extend(c.used.into_iter().filter(|v| !c.seen_bound.contains(v)));
    out
}

/// Whether `expr` uses what `is_target` picks (a function's `Var` or
/// `GlobalVar`) anywhere other than as the callee of a call: passed on,
/// returned or stored, not only called.
pub fn used_other_than_as_callee(expr: &Expr, is_target: impl Fn(&Expr) -> bool) -> bool {
    let (mut uses, mut calls) = (0usize, 0usize);
    post_order_visit(expr, |e| {
        if is_target(e) {
            uses += 1;
        }
        if let ExprKind::Call(c) = e.kind() {
            if is_target(&c.op) {
                calls += 1;
            }
        }
    });
    uses > calls
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::IRModule;

    fn main_of(text: &str) -> Expr {
        let m: IRModule = text.parse().unwrap();
        Expr::function(m.get_relax("main").unwrap().clone())
    }

    const MODULE: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32"), y: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        with R.dataflow():
            a = R.add(x, y)
            b = R.multiply(a, x)
            R.output(b)
        return b
"#;

    #[test]
    fn a_function_binds_its_params_and_bindings_and_has_no_free_vars() {
        let f = main_of(MODULE);
        let names = |vs: Vec<Var>| {
            vs.iter()
                .map(|v| v.name_hint().to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(bound_vars(&f)), ["x", "y", "a", "b"]);
        assert!(free_vars(&f).is_empty());
        assert_eq!(names(all_vars(&f)), ["x", "y", "a", "b"]);
    }

    #[test]
    fn a_binding_value_reads_its_producers_once_in_order() {
        let f = main_of(MODULE);
        let seq = f.as_function().unwrap().body.as_seq().unwrap();
        let b = seq.blocks[0].bindings[1].value();
        let names: Vec<_> = free_vars(b)
            .iter()
            .map(|v| v.name_hint().to_string())
            .collect();
        assert_eq!(names, ["a", "x"]);
        let t = Expr::tuple(vec![b.clone(), seq.blocks[0].bindings[0].var().to_expr()]);
        let names: Vec<_> = free_vars(&t)
            .iter()
            .map(|v| v.name_hint().to_string())
            .collect();
        assert_eq!(names, ["a", "x"], "each variable once");
    }
}
