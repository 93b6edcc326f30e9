//! The plan of `CanonicalizeBindings` for one function (TVM's
//! `CanonicalizePlanner`): which variables' uses and definitions are
//! replaced, which bindings go, and which variables stand for a constant.
//!
//! The planner reads the function once, recording for every binding its
//! block, what its value is known to be (a `TupleGetItem` of a tuple built
//! in the function is the field, a tuple of all the fields of one earlier
//! tuple, in order, is that tuple), and for every variable whether it is
//! used outside its home dataflow block (outside any dataflow block, in
//! another block, or free in a nested function). Then:
//!
//! 1. A `Var` defined in a dataflow block and used only there becomes a
//!    `DataflowVar`.
//! 2. A variable bound to a constant is the constant at its uses.
//! 3. A trivial binding `y = x` (or a `match_cast` to `x`'s own StructInfo)
//!    goes, and `y`'s uses read `x` (through chains of such bindings),
//!    except when `y` is a `Var` used outside its block and `x` a
//!    `DataflowVar`: then `x`'s definition becomes `y`'s, and `x`'s uses
//!    read `y`.

use crate::analysis::vars::free_vars;
use crate::ir::expr::{Binding, ExprKind, Var};
use crate::ir::{structural_equal, Expr, Function};
use std::collections::{HashMap, HashSet};

/// What the canonicalizer changes (see the module docs).
#[derive(Default, Debug)]
pub(super) struct Plan {
    pub replace_usage: HashMap<Var, Var>,
    pub replace_binding: HashMap<Var, Var>,
    pub remove: HashSet<Var>,
    pub inline_constant: HashMap<Var, Expr>,
}

impl Plan {
    /// The plan for `func`.
    pub fn of(func: &Function) -> Plan {
        let mut p = Planner::default();
        p.function(func);
        p.plan()
    }
}

#[derive(Default)]
struct Planner {
    /// The block being read: its number and whether it is a dataflow block.
    current: Option<(usize, bool)>,
    blocks: usize,
    def_block: HashMap<Var, usize>,
    trivial: Vec<(Var, Var)>,
    known: HashMap<Var, Expr>,
    constants: Vec<(Var, Expr)>,
    defined_inside_dataflow: Vec<Var>,
    used_outside: HashSet<Var>,
}

impl Planner {
    fn plan(self) -> Plan {
        let mut plan = Plan::default();
        for var in &self.defined_inside_dataflow {
            if !var.is_dataflow() && !self.used_outside.contains(var) {
                let new = Var::new_dataflow(var.name_hint(), var.struct_info().cloned());
                plan.replace_binding.insert(var.clone(), new.clone());
                plan.replace_usage.insert(var.clone(), new);
            }
        }
        for (var, c) in &self.constants {
            plan.inline_constant.insert(var.clone(), c.clone());
        }
        let trivial: HashMap<&Var, &Var> = self.trivial.iter().map(|(a, b)| (a, b)).collect();
        for (bound_var, bound_to) in &self.trivial {
            let mut to = bound_to.clone();
            let mut seen = HashSet::new();
            while let Some(&next) = trivial.get(&to) {
                if !seen.insert(to.clone()) {
                    break;
                }
                to = next.clone();
            }
            while let Some(next) = plan.replace_binding.get(&to) {
                if !seen.insert(to.clone()) {
                    break;
                }
                to = next.clone();
            }
            if bound_var.is_dataflow()
                || !to.is_dataflow()
                || !self.used_outside.contains(bound_var)
            {
                plan.replace_usage.insert(bound_var.clone(), to);
            } else {
                plan.replace_binding.insert(to.clone(), bound_var.clone());
                plan.replace_usage.insert(to, bound_var.clone());
            }
            plan.remove.insert(bound_var.clone());
        }
        plan
    }

    fn inside_dataflow(&self) -> bool {
        matches!(self.current, Some((_, true)))
    }

    fn function(&mut self, func: &Function) {
        let saved = self.current.take();
        self.expr(&func.body);
        self.current = saved;
    }

    /// A value's variable, followed through known bindings.
    fn unwrap_var(&self, e: &Expr) -> Expr {
        let mut e = e.clone();
        let mut steps = 0;
        while let Some(next) = e.as_var().and_then(|v| self.known.get(v)) {
            if steps > self.known.len() {
                break;
            }
            e = next.clone();
            steps += 1;
        }
        e
    }

    /// What `value` is known to be (see the module docs).
    fn unwrap_known(&self, value: &Expr) -> Option<Expr> {
        match value.kind() {
            ExprKind::TupleGetItem(t, i) => match self.unwrap_var(t).kind() {
                ExprKind::Tuple(fields) => fields.get(*i).cloned(),
                _ => None,
            },
            ExprKind::Tuple(fields) if !fields.is_empty() => {
                let mut source: Option<Expr> = None;
                for (i, f) in fields.iter().enumerate() {
                    let f = self.unwrap_var(f);
                    let ExprKind::TupleGetItem(t, j) = f.kind() else {
                        return None;
                    };
                    if *j != i {
                        return None;
                    }
                    let arity = t.struct_info().and_then(|s| s.as_tuple().map(<[_]>::len))?;
                    if arity != fields.len() {
                        return None;
                    }
                    let t = self.unwrap_var(t);
                    match &source {
                        None => source = Some(t),
                        Some(s) if s.ptr_eq(&t) || same_var(s, &t) => {}
                        Some(_) => return None,
                    }
                }
                source
            }
            _ => None,
        }
    }

    fn binding(&mut self, b: &Binding) {
        let var = b.var();
        let same_sinfo = match b {
            Binding::VarBinding(_) => true,
            Binding::MatchCast(mc) => match (var.struct_info(), mc.value.struct_info()) {
                (Some(a), Some(v)) => structural_equal(a, v),
                _ => false,
            },
        };
        let mut value = b.value().clone();
        if let Some(known) = self.unwrap_known(&value) {
            value = known;
        }
        match value.kind() {
            ExprKind::Var(parent) if same_sinfo => {
                self.trivial.retain(|(v, _)| v != var);
                self.trivial.push((var.clone(), parent.clone()));
            }
            ExprKind::Constant(_) => self.constants.push((var.clone(), value.clone())),
            _ => {}
        }
        self.known.insert(var.clone(), value);
        if let Some((block, _)) = self.current {
            self.def_block.insert(var.clone(), block);
        }
        self.expr(b.value());
        if self.inside_dataflow() {
            self.defined_inside_dataflow.push(var.clone());
        }
    }

    fn expr(&mut self, e: &Expr) {
        match e.kind() {
            ExprKind::Var(v) => {
                let elsewhere = match (self.current, self.def_block.get(v)) {
                    (Some((here, _)), Some(&home)) => here != home,
                    _ => false,
                };
                if !self.inside_dataflow() || elsewhere {
                    self.used_outside.insert(v.clone());
                }
            }
            ExprKind::Call(c) => {
                self.expr(&c.op);
                c.args.iter().for_each(|a| self.expr(a));
            }
            ExprKind::Tuple(fields) => fields.iter().for_each(|f| self.expr(f)),
            ExprKind::TupleGetItem(t, _) => self.expr(t),
            ExprKind::If(i) => {
                self.expr(&i.cond);
                self.expr(&i.true_branch);
                self.expr(&i.false_branch);
            }
            ExprKind::SeqExpr(seq) => {
                let saved = self.current.take();
                for block in &seq.blocks {
                    self.current = Some((self.blocks, block.is_dataflow));
                    self.blocks += 1;
                    block.bindings.iter().for_each(|b| self.binding(b));
                    self.current = None;
                }
                self.expr(&seq.body);
                self.current = saved;
            }
            ExprKind::Function(f) => {
                for v in free_vars(e) {
                    self.used_outside.insert(v);
                }
                self.function(f);
            }
            _ => {}
        }
    }
}

fn same_var(a: &Expr, b: &Expr) -> bool {
    matches!((a.as_var(), b.as_var()), (Some(x), Some(y)) if x == y)
}
