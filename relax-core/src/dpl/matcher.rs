//! Matching one pattern against one expression.
//!
//! 1. **Through bindings.** A variable matched against a pattern that is
//!    not about variables (a call, a tuple, an op, a constant, …) matches
//!    through the value bound to it in the [`Bindings`] (TVM's `var2val`),
//!    so `R.add(lv0, b)` with `lv0 = R.matmul(x, w)` matches
//!    `is_op("relax.add")?.call([is_op("relax.matmul")?.call([..]), wildcard()])`.
//!    What a pattern reports as matched is the expression it was given
//!    (the variable), which is what a rewrite wants to reuse.
//! 2. **Identity.** A pattern object matched twice must match the same
//!    expression both times (memoized by pattern identity); alternatives
//!    that fail undo what they recorded.
//! 3. **Shapes** (`has_shape`, `has_struct_info`, `same_shape_as`) are
//!    compared with the arithmetic prover: `(n + m, 4)` matches
//!    `(m + n, 4)`. A symbolic variable of a pattern's StructInfo binds to
//!    the dim it first meets and must equal it afterwards.
//! 4. **`dominates(parent, path, child)`**: the expression matches `child`
//!    and is bound in a block; some binding of that block that produces
//!    it (transitively) matches `parent`, is post-dominated by the
//!    expression's binding (every path from it leaves the block through
//!    the expression), and every binding on those paths matches `path`.
//!    This is decided on the block's post-dominator tree
//!    (`analysis::post_dominator_tree`, the one FuseOps uses).

use super::bindings::Bindings;
use super::pattern::{Pattern, PatternKind};
use crate::arith::{Analyzer, Proof};
use crate::ir::{structural_equal, AttrValue, Expr, ExprKind, PrimExpr, StructInfo, TirVar};
use std::collections::HashMap;

/// What a pattern matched: by pattern object and by name.
#[derive(Clone, Debug, Default)]
pub struct Match {
    /// In the order matched. Patterns are small, so a scan beats hashing,
    /// and a failed alternative takes entries back by truncating.
    by_pattern: Vec<(usize, Expr)>,
    by_name: Vec<(String, Expr)>,
}

impl Match {
    /// What the pattern object `p` matched.
    pub fn get(&self, p: &Pattern) -> Option<&Expr> {
        let id = p.id();
        self.by_pattern
            .iter()
            .find(|(k, _)| *k == id)
            .map(|(_, e)| e)
    }
    /// What the pattern named `name` matched.
    pub fn named(&self, name: &str) -> Option<&Expr> {
        self.by_name.iter().find(|(k, _)| k == name).map(|(_, e)| e)
    }
    /// Every named match.
    pub fn names(&self) -> impl Iterator<Item = (&str, &Expr)> {
        self.by_name.iter().map(|(k, v)| (k.as_str(), v))
    }
}

impl Pattern {
    /// Whether this pattern matches `expr` (see the module docs).
    pub fn matches(&self, expr: &Expr, bindings: &Bindings) -> bool {
        self.extract(expr, bindings).is_some()
    }

    /// What this pattern and each of its parts matched in `expr`, if it
    /// matches.
    pub fn extract(&self, expr: &Expr, bindings: &Bindings) -> Option<Match> {
        if !could_match(self, expr, bindings) {
            return None;
        }
        let mut m = Matcher::new(bindings);
        m.matches(self, expr).then_some(m.result)
    }
}

/// `expr` looked through variable bindings (and trivial `a = b` ones), at
/// most 64 deep.
fn bound_value<'e>(expr: &'e Expr, bindings: &'e Bindings) -> &'e Expr {
    let mut e = expr;
    for _ in 0..64 {
        let Some(v) = e.as_var() else { break };
        match bindings.value(v) {
            Some(value) => e = value,
            None => break,
        }
    }
    e
}

/// A necessary condition, checked without allocating: a call of a named op
/// matches only a call of that op with a fitting number of arguments, whose
/// arguments pass the same check against the argument patterns (looking
/// through bindings, as matching does). Most bindings of a large function
/// fail here, which keeps a scan of a block with a pattern cheap.
fn could_match(p: &Pattern, expr: &Expr, bindings: &Bindings) -> bool {
    let PatternKind::Call { op, args, variadic } = p.kind() else {
        return true;
    };
    let PatternKind::Op(name) = op.kind() else {
        return true;
    };
    let ExprKind::Call(c) = bound_value(expr, bindings).kind() else {
        return false;
    };
    let arity_ok = if *variadic {
        c.args.len() >= args.len()
    } else {
        c.args.len() == args.len()
    };
    arity_ok
        && matches!(c.op.kind(), ExprKind::Op(o) if o.name() == name)
        && args
            .iter()
            .zip(&c.args)
            .all(|(p, a)| could_match(p, a, bindings))
}

/// How much was recorded at some point, so a failed alternative can take
/// back everything recorded after it.
#[derive(Clone, Copy)]
struct Mark {
    patterns: usize,
    names: usize,
    tir: usize,
}

/// The matching state (see the module docs).
pub(super) struct Matcher<'a> {
    bindings: &'a Bindings,
    pub(super) result: Match,
    /// Symbolic variables of the pattern's StructInfo, bound in order.
    tir: Vec<(TirVar, PrimExpr)>,
    /// Made on first use: most patterns never compare shapes.
    analyzer: Option<Analyzer>,
}

impl<'a> Matcher<'a> {
    pub(super) fn new(bindings: &'a Bindings) -> Self {
        Matcher {
            bindings,
            result: Match::default(),
            tir: Vec::new(),
            analyzer: None,
        }
    }

    fn proven_equal(&mut self, a: &PrimExpr, b: &PrimExpr) -> bool {
        a == b
            || self
                .analyzer
                .get_or_insert_with(Analyzer::new)
                .compare_equal(a, b)
                == Proof::Proven
    }

    fn mark(&self) -> Mark {
        Mark {
            patterns: self.result.by_pattern.len(),
            names: self.result.by_name.len(),
            tir: self.tir.len(),
        }
    }

    fn rollback(&mut self, mark: Mark) {
        self.result.by_pattern.truncate(mark.patterns);
        self.result.by_name.truncate(mark.names);
        self.tir.truncate(mark.tir);
    }

    /// `expr` looked through variable bindings (and trivial `a = b` ones).
    fn unwrap(&self, expr: &Expr) -> Expr {
        bound_value(expr, self.bindings).clone()
    }

    pub(super) fn matches(&mut self, p: &Pattern, expr: &Expr) -> bool {
        if let Some(prev) = self.result.get(p) {
            return prev.ptr_eq(expr) || structural_equal(prev, expr);
        }
        let mark = self.mark();
        let ok = self.visit(p, expr);
        if ok {
            self.result.by_pattern.push((p.id(), expr.clone()));
        } else {
            self.rollback(mark);
        }
        ok
    }

    fn visit(&mut self, p: &Pattern, expr: &Expr) -> bool {
        use PatternKind as P;
        match p.kind() {
            P::Wildcard => true,
            P::Expr(e) => structural_equal(e, expr) || structural_equal(e, &self.unwrap(expr)),
            P::Var(name) => {
                matches!(expr.kind(), ExprKind::Var(v) if name.as_deref().is_none_or(|n| v.name_hint() == n))
            }
            P::DataflowVar(name) => matches!(expr.kind(),
                ExprKind::Var(v) if v.is_dataflow() && name.as_deref().is_none_or(|n| v.name_hint() == n)),
            P::Input => {
                matches!(expr.kind(), ExprKind::Var(v) if self.bindings.value(v).is_none())
            }
            P::Named(name, inner) => {
                if !self.matches(inner, expr) {
                    return false;
                }
                match self.result.named(name) {
                    Some(prev) => prev.ptr_eq(expr) || structural_equal(prev, expr),
                    None => {
                        self.result.by_name.push((name.clone(), expr.clone()));
                        true
                    }
                }
            }
            P::Or(a, b) => self.matches(a, expr) || self.matches(b, expr),
            P::And(a, b) => self.matches(a, expr) && self.matches(b, expr),
            P::Not(a) => {
                let mark = self.mark();
                let hit = self.matches(a, expr);
                self.rollback(mark);
                !hit
            }
            P::StructInfo(inner, s) => {
                self.matches(inner, expr)
                    && expr
                        .struct_info()
                        .is_some_and(|actual| self.sinfo(s, actual))
            }
            P::DataType(inner, dtype) => {
                self.matches(inner, expr)
                    && expr
                        .struct_info()
                        .and_then(StructInfo::as_tensor)
                        .is_some_and(|t| t.dtype == *dtype)
            }
            P::ShapeOf(inner, dims) => {
                self.matches(inner, expr)
                    && shape_of(expr).is_some_and(|actual| self.dims_equal(dims, &actual))
            }
            P::SameShapeAs(inner, other) => {
                if !self.matches(inner, expr) {
                    return false;
                }
                let Some(o) = self.result.get(other).cloned() else {
                    return false;
                };
                match (shape_of(expr), shape_of(&o)) {
                    (Some(a), Some(b)) => self.dims_equal(&a, &b),
                    _ => false,
                }
            }
            P::Attr(inner, attrs) => {
                self.matches(inner, expr) && {
                    let value = self.unwrap(expr);
                    value.as_call().is_some_and(|c| {
                        attrs
                            .iter()
                            .all(|(k, v)| call_attr(&value, c, k) == Some(v.clone()))
                    })
                }
            }
            P::Dominates {
                parent,
                path,
                child,
            } => self.matches(child, expr) && self.dominates(parent, path, expr),
            // The structural forms look through variable bindings.
            _ => {
                let value = self.unwrap(expr);
                self.structural(p, &value)
            }
        }
    }

    fn structural(&mut self, p: &Pattern, value: &Expr) -> bool {
        use PatternKind as P;
        match (p.kind(), value.kind()) {
            (P::GlobalVar(name), ExprKind::GlobalVar(gv)) => {
                name.as_deref().is_none_or(|n| gv.name_hint() == n)
            }
            (P::Constant, ExprKind::Constant(_)) => true,
            (P::ExternFunc(name), ExprKind::ExternFunc(sym)) => {
                name.as_deref().is_none_or(|n| sym == n)
            }
            (P::Op(name), ExprKind::Op(op)) => op.name() == name,
            (P::Call { op, args, variadic }, ExprKind::Call(c)) => {
                let arity_ok = if *variadic {
                    c.args.len() >= args.len()
                } else {
                    c.args.len() == args.len()
                };
                arity_ok
                    && self.matches(op, &c.op)
                    && args.iter().zip(&c.args).all(|(p, a)| self.matches(p, a))
            }
            (P::Tuple { fields, unordered }, ExprKind::Tuple(items)) => {
                if fields.len() != items.len() {
                    return false;
                }
                if !unordered {
                    return fields.iter().zip(items).all(|(p, a)| self.matches(p, a));
                }
                self.unordered(fields, items, &mut vec![false; items.len()])
            }
            (P::TupleGetItem { tuple, index }, ExprKind::TupleGetItem(t, i)) => {
                index.is_none_or(|want| want == *i) && self.matches(tuple, t)
            }
            (P::Function { params, body }, ExprKind::Function(f)) => {
                params.len() == f.params.len()
                    && params
                        .iter()
                        .zip(&f.params)
                        .all(|(p, v)| self.matches(p, &v.to_expr()))
                    && self.matches(body, &f.body)
            }
            (P::Shape(dims), ExprKind::ShapeExpr(actual)) => self.dims_equal(dims, actual),
            _ => false,
        }
    }

    /// Matches `fields` to `items` one to one in any order (backtracking).
    fn unordered(&mut self, fields: &[Pattern], items: &[Expr], used: &mut Vec<bool>) -> bool {
        let Some((first, rest)) = fields.split_first() else {
            return true;
        };
        for i in 0..items.len() {
            if used[i] {
                continue;
            }
            let mark = self.mark();
            if self.matches(first, &items[i]) {
                used[i] = true;
                if self.unordered(rest, items, used) {
                    return true;
                }
                used[i] = false;
            }
            self.rollback(mark);
        }
        false
    }

    /// Pattern dims against actual ones: a pattern variable binds on first
    /// use; everything else must be provably equal.
    fn dims_equal(&mut self, pattern: &[PrimExpr], actual: &[PrimExpr]) -> bool {
        if pattern.len() != actual.len() {
            return false;
        }
        for (p, a) in pattern.iter().zip(actual) {
            if let Some(v) = p.as_var() {
                match self.tir.iter().find(|(k, _)| k == v).map(|(_, e)| e) {
                    None => {
                        self.tir.push((v.clone(), a.clone()));
                        continue;
                    }
                    Some(bound) => {
                        let bound = bound.clone();
                        if !self.proven_equal(&bound, a) {
                            return false;
                        }
                        continue;
                    }
                }
            }
            let bound: HashMap<TirVar, PrimExpr> = self.tir.iter().cloned().collect();
            let p = p.substitute_map(&bound);
            if !self.proven_equal(&p, a) {
                return false;
            }
        }
        true
    }

    fn sinfo(&mut self, pattern: &StructInfo, actual: &StructInfo) -> bool {
        if pattern.is_object() {
            return true;
        }
        match (pattern.as_tensor(), actual.as_tensor()) {
            (Some(p), Some(a)) => {
                (p.is_unknown_dtype() || p.dtype == a.dtype)
                    && (p.is_unknown_ndim() || p.ndim == a.ndim)
                    && match (p.shape_values(), a.shape_values()) {
                        (None, _) => true,
                        (Some(pd), Some(ad)) => self.dims_equal(pd, ad),
                        (Some(_), None) => false,
                    }
            }
            _ => match (pattern.as_tuple(), actual.as_tuple()) {
                (Some(ps), Some(as_)) => {
                    ps.len() == as_.len() && ps.iter().zip(as_).all(|(p, a)| self.sinfo(p, a))
                }
                _ => structural_equal(pattern, actual),
            },
        }
    }

    /// Point 4 of the module docs.
    fn dominates(&mut self, parent: &Pattern, path: &Pattern, expr: &Expr) -> bool {
        let Some(var) = self.bindings.var_of(expr) else {
            return false;
        };
        let Some(bg) = self.bindings.graph_of(&var) else {
            return false;
        };
        let Some(child) = bg.graph.node_of(&var) else {
            return false;
        };
        // Every producer of the child, transitively, within the block.
        let mut ancestors = vec![false; child + 1];
        let mut stack = vec![child];
        while let Some(n) = stack.pop() {
            for &i in &bg.graph.nodes[n].inputs {
                if !ancestors[i] {
                    ancestors[i] = true;
                    stack.push(i);
                }
            }
        }
        let node_expr = |i: usize| bg.graph.nodes[i].var.to_expr();
        for a in (0..child).rev().filter(|&a| ancestors[a]) {
            if !bg.tree.post_dominates(child, a) {
                continue;
            }
            let mark = self.mark();
            if self.matches(parent, &node_expr(a)) {
                // `path` is matched afresh at every node: it describes each
                // of them, not one expression.
                let between = bg.graph.nodes_on_paths(a, child);
                let all = between.iter().all(|&b| {
                    let mut sub = Matcher::new(self.bindings);
                    sub.matches(path, &node_expr(b))
                });
                if all {
                    return true;
                }
            }
            self.rollback(mark);
        }
        false
    }
}

/// The shape of an expression's StructInfo, if known.
fn shape_of(e: &Expr) -> Option<Vec<PrimExpr>> {
    if let ExprKind::ShapeExpr(d) = e.kind() {
        return Some(d.clone());
    }
    e.struct_info()?
        .as_tensor()?
        .shape_values()
        .map(<[PrimExpr]>::to_vec)
}

/// The attribute `key` of a call: its own attribute, or for `op_pattern`
/// the op's registered pattern kind (as TVM's `TOpPattern`).
fn call_attr(value: &Expr, call: &crate::ir::Call, key: &str) -> Option<AttrValue> {
    if let Some(v) = call.attrs.get(key) {
        return Some(v.clone());
    }
    if key == "op_pattern" {
        let op = value.call_op_name()?;
        return crate::op::lookup(op).map(|i| AttrValue::Int(i.pattern as i64));
    }
    None
}
