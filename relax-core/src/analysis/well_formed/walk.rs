//! The walk over a function: scoping of Relax variables (rules 6–13), the
//! normal form (rules 21–28), dataflow blocks and purity (rules 16–20), and
//! the consistency of StructInfo (rules 29, 39–43).
//!
//! Positions decide what is allowed: a *value* (the right side of a binding)
//! may be a non-leaf; an *operand* (inside a value) must be a leaf; a
//! function body and an `If` branch must be a `SeqExpr`.

use super::annotations::Place;
use super::module_rules::{is_impure_call, CALL_TIR_OPS, TUPLE_ARGS_OPS};
use super::{Checker, FuncCtx, VarDef};
use crate::ir::function::attr;
use crate::ir::{AttrValue, Binding, BindingBlock, Call, Expr, ExprKind, Function, If, SeqExpr};
use crate::ir::{StructInfo, Var};
use std::collections::HashSet;

impl Checker<'_> {
    /// Checks `func` (top-level or nested). `self_var` is the variable a
    /// local function is bound to, in scope in its body for recursion.
    pub(super) fn check_function(
        &mut self,
        func: &Function,
        label: String,
        self_var: Option<&Var>,
    ) {
        let force_pure = func.attrs.get(attr::FORCE_PURE).is_some_and(|v| {
            matches!(v, AttrValue::Bool(true)) || v.as_int().is_some_and(|i| i != 0)
        });
        if force_pure && !func.is_pure {
            self.report(
                "force-pure-on-impure-function",
                format!("{label} has the relax.force_pure attribute but is not pure"),
            );
        }
        let outer_dataflow = std::mem::replace(&mut self.in_dataflow, false);
        let outer_binding = self.binding_var.take();
        self.funcs.push(FuncCtx {
            label,
            requires_purity: func.is_pure && !force_pure,
            self_var: self_var.cloned(),
        });
        self.push_frame(false);
        self.push_tir_frame();

        // Parameters define the symbolic variables standing alone in their
        // annotations, whatever the parameter order.
        for p in &func.params {
            for v in p
                .struct_info()
                .map(StructInfo::definable_tir_vars)
                .unwrap_or_default()
            {
                if !self.tir_vars.contains(&v) {
                    self.define_tir_var(&v);
                }
            }
        }
        for p in &func.params {
            self.check_param(p);
        }

        match func.body.kind() {
            ExprKind::SeqExpr(seq) => self.check_seq(&func.body, seq, "the body"),
            _ => {
                let message = format!(
                    "{}, the body is {} rather than a seq expr",
                    self.where_(),
                    describe(&func.body)
                );
                self.report("body-not-seq-expr", message);
                self.check_value(&func.body);
            }
        }
        // Checked after the body, whose scopes are closed again, so that a
        // problem copied from a binding is reported at the binding.
        self.check_struct_info(&func.ret_struct_info, &Place::new("the return annotation"));
        self.check_return(func);

        self.pop_tir_frame();
        self.pop_frame();
        self.funcs.pop();
        self.binding_var = outer_binding;
        self.in_dataflow = outer_dataflow;
    }

    fn check_param(&mut self, p: &Var) {
        if p.is_dataflow() {
            let message = format!(
                "{}, parameter `{}` is a dataflow var",
                self.where_(),
                p.name_hint()
            );
            self.report("dataflow-var-param", message);
        }
        self.define_var(p, true);
        match p.struct_info() {
            Some(sinfo) => self.check_struct_info(
                sinfo,
                &Place::signature(format!("the annotation of parameter `{}`", p.name_hint())),
            ),
            None => self.report_missing_var_struct_info(p),
        }
    }

    fn report_missing_var_struct_info(&mut self, v: &Var) {
        if self.options.check_struct_info {
            let message = format!(
                "{}, var `{}` has no StructInfo",
                self.where_(),
                v.name_hint()
            );
            self.report("missing-struct-info", message);
        }
    }

    /// Records the definition of `var` (rules 3, 8) and brings it into scope.
    fn define_var(&mut self, var: &Var, is_param: bool) {
        let label = self
            .funcs
            .last()
            .map(|f| f.label.clone())
            .unwrap_or_default();
        match self.defs.get(var) {
            Some(prev) if prev.is_param && is_param && prev.func != label => {
                let message = format!(
                    "parameter `{}` of {label} is also a parameter of {}",
                    var.name_hint(),
                    prev.func
                );
                self.report("param-shared-between-functions", message);
            }
            Some(prev) => {
                let elsewhere = if prev.func == label {
                    String::new()
                } else {
                    format!(" (first in {})", prev.func)
                };
                let message = format!(
                    "{}, var `{}` is defined more than once{elsewhere}",
                    self.where_(),
                    var.name_hint()
                );
                self.report("var-redefined", message);
            }
            None => {
                self.defs.insert(
                    var.clone(),
                    VarDef {
                        is_param,
                        func: label,
                    },
                );
            }
        }
        self.bring_into_scope(var);
    }

    /// Defines the variable of a binding (rules 8, 10) and checks its annotation.
    fn define_binding_var(&mut self, var: &Var, pattern: Option<&StructInfo>) {
        if var.is_dataflow() && !self.in_dataflow {
            let message = format!(
                "{}, dataflow var `{}` is bound outside a dataflow block",
                self.where_(),
                var.name_hint()
            );
            self.report("dataflow-var-outside-dataflow-block", message);
        }
        self.define_var(var, false);
        match var.struct_info() {
            // A match_cast pattern was checked already; do not report twice.
            Some(sinfo) if Some(sinfo) == pattern => {}
            Some(sinfo) => self.check_struct_info(
                sinfo,
                &Place::new(format!("the annotation of `{}`", var.name_hint())),
            ),
            None => self.report_missing_var_struct_info(var),
        }
    }

    /// A use of the variable `v` (rules 6, 7, 9, 11, 13).
    pub(super) fn use_var(&mut self, v: &Var) {
        let kind = if v.is_dataflow() {
            "dataflow var"
        } else {
            "var"
        };
        let (code, problem) = match self.vars.get(v) {
            Some(&depth) if v.is_dataflow() && depth < self.funcs.len() => (
                "dataflow-var-captured",
                "is captured by a function defined in its dataflow block",
            ),
            Some(_) => return,
            None if self.binding_var.as_ref() == Some(v) => {
                ("var-used-in-own-binding", "is used in its own binding")
            }
            None if self.defs.contains_key(v) && v.is_dataflow() => (
                "dataflow-var-escapes",
                "is used outside the dataflow block that binds it",
            ),
            None if self.defs.contains_key(v) => (
                "var-out-of-scope",
                "is used outside the scope that defines it",
            ),
            None if self.top_defs.contains(v) => ("undefined-var", "is used before it is defined"),
            None => ("undefined-var", "is not defined"),
        };
        let message = format!("{}, {kind} `{}` {problem}", self.where_(), v.name_hint());
        self.report(code, message);
    }

    /// A `SeqExpr` in a place that allows one; `what` names the place.
    fn check_seq(&mut self, expr: &Expr, seq: &SeqExpr, what: &str) {
        self.push_frame(false);
        self.push_tir_frame();
        self.check_consolidated(&seq.blocks, what);
        for block in &seq.blocks {
            self.check_block(block);
        }
        let body = &seq.body;
        // An `Op` is a leaf that may not stand here either: rule 25 says so.
        if body.is_leaf() {
            self.check_operand(body, what);
        } else {
            let message = format!(
                "{}, the result of {what} is {}, not a leaf",
                self.where_(),
                describe(body)
            );
            self.report("seq-body-not-leaf", message);
            self.check_value(body);
        }
        self.check_expr_struct_info(expr);
        self.pop_tir_frame();
        self.pop_frame();
    }

    /// Rules 26 and 27.
    fn check_consolidated(&mut self, blocks: &[BindingBlock], what: &str) {
        let kind = |b: &BindingBlock| {
            if b.is_dataflow {
                "dataflow block"
            } else {
                "binding block"
            }
        };
        for (i, block) in blocks.iter().enumerate() {
            if block.bindings.is_empty() {
                let message = format!(
                    "{}, {what} has an empty {} (block {i})",
                    self.where_(),
                    kind(block)
                );
                self.report("empty-block", message);
            }
            if let Some(prev) = i.checked_sub(1).and_then(|j| blocks.get(j)) {
                if prev.is_dataflow == block.is_dataflow {
                    let message = format!(
                        "{}, blocks {} and {i} of {what} are adjacent {}s and should be one",
                        self.where_(),
                        i - 1,
                        kind(block)
                    );
                    self.report("unmerged-blocks", message);
                }
            }
        }
    }

    fn check_block(&mut self, block: &BindingBlock) {
        let outer = std::mem::replace(&mut self.in_dataflow, block.is_dataflow);
        if block.is_dataflow {
            self.push_frame(true);
        }
        for binding in &block.bindings {
            self.check_binding(binding);
        }
        if block.is_dataflow {
            self.pop_frame();
        }
        self.in_dataflow = outer;
    }

    fn check_binding(&mut self, binding: &Binding) {
        let var = binding.var();
        let outer = self.binding_var.replace(var.clone());
        match binding {
            Binding::VarBinding(b) => {
                if let ExprKind::Function(f) = b.value.kind() {
                    // A local function sees its own name (recursion).
                    self.push_frame(false);
                    self.bring_into_scope(var);
                    let label = format!(
                        "local function `{}` in function `{}`",
                        var.name_hint(),
                        self.top_name
                    );
                    self.check_function(f, label, Some(var));
                    self.pop_frame();
                } else {
                    self.check_value(&b.value);
                }
                self.define_binding_var(var, None);
                self.check_binding_struct_info(var, &b.value);
            }
            Binding::MatchCast(m) => {
                self.check_value(&m.value);
                for v in m.struct_info.definable_tir_vars() {
                    if !self.tir_vars.contains(&v) {
                        self.define_tir_var(&v);
                    }
                }
                self.check_struct_info(
                    &m.struct_info,
                    &Place::new(format!("the match_cast pattern of `{}`", var.name_hint())),
                );
                self.define_binding_var(var, Some(&m.struct_info));
                self.check_match_cast_struct_info(var, m);
            }
        }
        self.binding_var = outer;
    }

    /// A binding's value (rule 24 allows one level of non-leaf here).
    fn check_value(&mut self, expr: &Expr) {
        match expr.kind() {
            ExprKind::Call(call) => self.check_call(expr, call),
            ExprKind::If(i) => self.check_if(i),
            ExprKind::TupleGetItem(tuple, _) => self.check_operand(tuple, &describe(expr)),
            ExprKind::Tuple(fields) => {
                for f in fields {
                    self.check_operand(f, "a tuple");
                }
            }
            ExprKind::Function(f) => {
                let label = format!("a function literal in function `{}`", self.top_name);
                self.check_function(f, label, None);
            }
            ExprKind::SeqExpr(seq) => {
                self.report_misplaced_seq();
                self.check_seq(expr, seq, "a misplaced seq expr");
                return;
            }
            ExprKind::Op(op) => {
                self.report_misplaced_op(op.name());
                return;
            }
            _ => {
                self.check_leaf(expr);
                return;
            }
        }
        self.check_expr_struct_info(expr);
    }

    /// An operand of a non-leaf, inside `parent` (rule 24).
    fn check_operand(&mut self, expr: &Expr, parent: &str) {
        match expr.kind() {
            ExprKind::Op(op) => self.report_misplaced_op(op.name()),
            ExprKind::SeqExpr(seq) => {
                self.report_misplaced_seq();
                self.check_seq(expr, seq, "a misplaced seq expr");
            }
            ExprKind::Tuple(fields) => {
                for f in fields {
                    self.check_operand(f, parent);
                }
                self.check_expr_struct_info(expr);
            }
            _ if !expr.is_leaf() => {
                let message = format!(
                    "{}, {} is nested in {parent}{}; operands must be leaves",
                    self.where_(),
                    describe(expr),
                    self.binding_suffix()
                );
                self.report("nested-non-leaf", message);
                self.check_value(expr);
            }
            _ => self.check_leaf(expr),
        }
    }

    fn report_misplaced_op(&mut self, name: &str) {
        let message = format!(
            "{}, operator `{name}`{} is used as a value; an operator may only be called",
            self.where_(),
            self.binding_suffix()
        );
        self.report("misplaced-op", message);
    }

    fn report_misplaced_seq(&mut self) {
        let message = format!(
            "{}, a seq expr{} is neither a function body nor an if branch",
            self.where_(),
            self.binding_suffix()
        );
        self.report("misplaced-seq-expr", message);
    }

    fn check_leaf(&mut self, expr: &Expr) {
        let what = format!("{}{}", describe(expr), self.binding_suffix());
        match expr.kind() {
            ExprKind::Var(v) => {
                // A variable's StructInfo is checked where it is defined.
                self.use_var(v);
                return;
            }
            ExprKind::GlobalVar(gv) => self.check_global_var_ref(expr, gv),
            ExprKind::ShapeExpr(values) => self.check_dims(values, &Place::new(what)),
            ExprKind::PrimValue(value) => self.check_prim_value(value, &Place::new(what)),
            ExprKind::DataTypeImm(dtype) if !dtype.is_valid_scalar() => {
                let message = format!(
                    "{}, {what} is a dtype which Relax does not allow",
                    self.where_()
                );
                self.report("invalid-dtype", message);
            }
            _ => {}
        }
        self.check_expr_struct_info(expr);
    }

    fn check_call(&mut self, expr: &Expr, call: &Call) {
        let what = describe(expr);
        if !matches!(call.op.kind(), ExprKind::Op(_)) {
            self.check_operand(&call.op, &what);
        }
        for arg in &call.args {
            self.check_operand(arg, &what);
        }
        for sinfo in &call.sinfo_args {
            self.check_struct_info(sinfo, &Place::new(format!("the sinfo_args of {what}")));
        }
        if let Some(name) = expr.call_op_name() {
            if CALL_TIR_OPS.contains(&name) {
                self.check_call_tir_callee(call, name);
            }
            let args_are_tuple = call
                .args
                .get(1)
                .is_none_or(|a| matches!(a.kind(), ExprKind::Tuple(_)));
            if TUPLE_ARGS_OPS.contains(&name) && !args_are_tuple {
                let message = format!(
                    "{}, the arguments of `{name}`{} are not a tuple literal",
                    self.where_(),
                    self.binding_suffix()
                );
                self.report("op-not-normalized", message);
            }
        }
        if self.in_dataflow {
            let recursive = match call.op.kind() {
                ExprKind::GlobalVar(gv) => self.is_recursive_global_call(gv),
                ExprKind::Var(v) => self
                    .funcs
                    .last()
                    .and_then(|f| f.self_var.as_ref())
                    .is_some_and(|s| s == v),
                _ => false,
            };
            if recursive {
                let message = format!(
                    "{}, recursive {what}{} is in a dataflow block",
                    self.where_(),
                    self.binding_suffix()
                );
                self.report("recursion-in-dataflow-block", message);
            }
        }
        if self.options.check_struct_info && is_impure_call(call, self.module) {
            if self.in_dataflow {
                let message = format!(
                    "{}, impure {what}{} is in a dataflow block",
                    self.where_(),
                    self.binding_suffix()
                );
                self.report("impure-call-in-dataflow-block", message);
            }
            if self.funcs.last().is_some_and(|f| f.requires_purity) {
                let message = format!(
                    "{}, impure {what}{} is in a pure function (mark the function impure or set relax.force_pure)",
                    self.where_(),
                    self.binding_suffix()
                );
                self.report("impure-call-in-pure-function", message);
            }
        }
    }

    fn check_if(&mut self, node: &If) {
        if self.in_dataflow {
            let message = format!(
                "{}, an if{} is in a dataflow block",
                self.where_(),
                self.binding_suffix()
            );
            self.report("if-in-dataflow-block", message);
        }
        self.check_operand(&node.cond, "an if condition");
        self.check_if_condition(&node.cond);
        for (branch, what) in [
            (&node.true_branch, "the true branch"),
            (&node.false_branch, "the false branch"),
        ] {
            match branch.kind() {
                ExprKind::SeqExpr(seq) => self.check_seq(branch, seq, what),
                _ => {
                    let message = format!(
                        "{}, {what} of the if{} is {} rather than a seq expr",
                        self.where_(),
                        self.binding_suffix(),
                        describe(branch)
                    );
                    self.report("body-not-seq-expr", message);
                    self.push_frame(false);
                    self.push_tir_frame();
                    self.check_value(branch);
                    self.pop_tir_frame();
                    self.pop_frame();
                }
            }
        }
    }

    /// ``in the value of `x` `` while a binding is being checked.
    pub(super) fn binding_suffix(&self) -> String {
        match &self.binding_var {
            Some(v) => format!(" in the value of `{}`", v.name_hint()),
            None => String::new(),
        }
    }
}

/// How messages name an expression.
pub(super) fn describe(e: &Expr) -> String {
    match e.kind() {
        ExprKind::Var(v) if v.is_dataflow() => format!("dataflow var `{}`", v.name_hint()),
        ExprKind::Var(v) => format!("var `{}`", v.name_hint()),
        ExprKind::GlobalVar(g) => format!("global var `{}`", g.name_hint()),
        ExprKind::Call(c) => match c.op.kind() {
            ExprKind::Op(op) => format!("the call to `{}`", op.name()),
            ExprKind::GlobalVar(g) => format!("the call to `{}`", g.name_hint()),
            ExprKind::Var(v) => format!("the call to `{}`", v.name_hint()),
            ExprKind::ExternFunc(s) => format!("the call to extern function `{s}`"),
            _ => format!("the call to {}", describe(&c.op)),
        },
        ExprKind::Op(op) => format!("operator `{}`", op.name()),
        ExprKind::Tuple(_) => "a tuple".to_string(),
        ExprKind::TupleGetItem(_, i) => format!("the tuple item access `.{i}`"),
        ExprKind::If(_) => "an if".to_string(),
        ExprKind::SeqExpr(_) => "a seq expr".to_string(),
        ExprKind::Function(_) => "a function".to_string(),
        ExprKind::Constant(_) => "a constant".to_string(),
        ExprKind::PrimValue(v) => format!("prim value `{v}`"),
        ExprKind::StringImm(s) => format!("string {s:?}"),
        ExprKind::DataTypeImm(d) => format!("dtype `{d}`"),
        ExprKind::ExternFunc(s) => format!("extern function `{s}`"),
        ExprKind::ShapeExpr(_) => "a shape expression".to_string(),
    }
}

/// Calls `f` on `e` and every expression inside it, nested functions included.
pub(super) fn for_each_expr(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    match e.kind() {
        ExprKind::Tuple(fields) => fields.iter().for_each(|x| for_each_expr(x, f)),
        ExprKind::SeqExpr(seq) => {
            for binding in seq.blocks.iter().flat_map(|b| &b.bindings) {
                for_each_expr(binding.value(), f);
            }
            for_each_expr(&seq.body, f);
        }
        ExprKind::Function(func) => for_each_expr(&func.body, f),
        ExprKind::If(i) => {
            for_each_expr(&i.cond, f);
            for_each_expr(&i.true_branch, f);
            for_each_expr(&i.false_branch, f);
        }
        ExprKind::Call(c) => {
            for_each_expr(&c.op, f);
            c.args.iter().for_each(|x| for_each_expr(x, f));
        }
        ExprKind::TupleGetItem(t, _) => for_each_expr(t, f),
        _ => {}
    }
}

/// Every variable `func` defines: parameters and binding variables, its
/// nested functions' included.
pub(super) fn defined_vars(func: &Function) -> HashSet<Var> {
    let mut out: HashSet<Var> = func.params.iter().cloned().collect();
    for_each_expr(&func.body, &mut |e| match e.kind() {
        ExprKind::SeqExpr(seq) => out.extend(
            seq.blocks
                .iter()
                .flat_map(|b| &b.bindings)
                .map(|b| b.var().clone()),
        ),
        ExprKind::Function(f) => out.extend(f.params.iter().cloned()),
        _ => {}
    });
    out
}
