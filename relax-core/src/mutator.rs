//! `ExprMutator`: rewriting traversal that owns a `BlockBuilder`.
//!
//! The mutator has the same dispatch hierarchy as [`crate::visitor`], but
//! every method returns the rewritten node, and bindings are *re-emitted*
//! through the mutator's [`BlockBuilder`]:
//!
//! 1. Visiting a binding visits its value and emits the result. A rewritten
//!    value that is not in normal form is normalized, so one binding can
//!    become several (its nested calls are bound first); returning an
//!    existing variable from `visit_var_binding`'s value, or not emitting at
//!    all, folds several into one.
//! 2. When a value's StructInfo changes, its variable is replaced by a new one
//!    with the new StructInfo, and later uses are remapped to it.
//! 3. [`ExprMutator::lookup_binding`] gives the value bound to a variable in
//!    the program being built, which is how rewrites look through variables
//!    (the MLC course's `EwiseFMARewriter` does).
//! 4. Nothing panics on a bad rewrite: an error (say, a rewrite producing a
//!    call whose shapes do not fit) is recorded in the builder and the
//!    unnormalized expression is kept, so all errors of a pass are reported
//!    together by [`mutate_module`].
//!
//! For pass writers who think in graphs, [`rewrite_dataflow_bindings`] runs a
//! closure on every binding of every dataflow block, with the block's
//! bindings at hand, and removes what became dead.

use crate::analysis::derive::is_impure_call;
use crate::analysis::struct_info_analysis::{
    erase_to_well_defined, struct_info_base_check, BaseCheckResult,
};
use crate::arith::Analyzer;
use crate::block_builder::BlockBuilder;
use crate::ir::id_hash::BuildIdHasher;
use crate::ir::{
    Binding, BindingBlock, Call, Expr, ExprKind, Function, GlobalVar, IRModule, If, MatchCast,
    SeqExpr, TirVar, Var, VarBinding,
};
use crate::visitor::{post_order_visit, ExprVisitor};
use relax_runtime::Error;
use std::collections::{HashMap, HashSet};

/// A rewriting traversal. Implementors provide their [`MutatorState`] (the
/// builder and the variable remapping table); every other method has a
/// default.
pub trait ExprMutator {
    /// The mutator's builder and remapping table.
    fn state(&mut self) -> &mut MutatorState;
    /// The builder bindings are emitted into.
    fn builder(&mut self) -> &mut BlockBuilder {
        &mut self.state().builder
    }
    /// Old variable → the variable that replaces it.
    fn var_remap(&mut self) -> &mut HashMap<Var, Var> {
        &mut self.state().var_remap
    }

    /// Any expression: dispatches on its kind.
    fn visit_expr(&mut self, expr: &Expr) -> Expr {
        match expr.kind() {
            ExprKind::Var(v) if v.is_dataflow() => self.visit_dataflow_var(expr, v),
            ExprKind::Var(v) => self.visit_var(expr, v),
            ExprKind::Call(c) => self.visit_call(expr, c),
            ExprKind::Tuple(_) => self.visit_tuple(expr),
            ExprKind::TupleGetItem(..) => self.visit_tuple_get_item(expr),
            ExprKind::If(i) => self.visit_if(expr, i),
            ExprKind::SeqExpr(s) => self.visit_seq_expr(expr, s),
            ExprKind::Function(f) => self.visit_function(expr, f),
            ExprKind::GlobalVar(gv) => self.visit_global_var(expr, gv),
            _ => self.visit_leaf(expr),
        }
    }
    /// A use of a `Var`: its replacement, if it was replaced.
    fn visit_var(&mut self, expr: &Expr, var: &Var) -> Expr {
        self.var_remap()
            .get(var)
            .map_or_else(|| expr.clone(), Expr::var)
    }
    /// A use of a `DataflowVar`: its replacement, if it was replaced.
    fn visit_dataflow_var(&mut self, expr: &Expr, var: &Var) -> Expr {
        self.visit_var(expr, var)
    }
    /// A global function name: unchanged.
    fn visit_global_var(&mut self, expr: &Expr, _gv: &GlobalVar) -> Expr {
        expr.clone()
    }
    /// Constants, shapes, prim values, strings, dtypes, extern functions and
    /// ops: unchanged.
    fn visit_leaf(&mut self, expr: &Expr) -> Expr {
        expr.clone()
    }
    /// A call: by default its parts are visited and it is rebuilt
    /// ([`ExprMutator::visit_expr_post_order`]).
    fn visit_call(&mut self, expr: &Expr, _call: &Call) -> Expr {
        self.visit_expr_post_order(expr)
    }
    /// A tuple: rebuilt from its visited fields.
    fn visit_tuple(&mut self, expr: &Expr) -> Expr {
        self.visit_expr_post_order(expr)
    }
    /// A tuple projection: rebuilt from its visited tuple.
    fn visit_tuple_get_item(&mut self, expr: &Expr) -> Expr {
        self.visit_expr_post_order(expr)
    }
    /// A conditional: the condition, then each branch in a scope of its own.
    fn visit_if(&mut self, expr: &Expr, if_: &If) -> Expr {
        let cond = self.visit_expr(&if_.cond);
        let t = self.visit_with_inner_scope(&if_.true_branch);
        let f = self.visit_with_inner_scope(&if_.false_branch);
        if cond.ptr_eq(&if_.cond) && t.ptr_eq(&if_.true_branch) && f.ptr_eq(&if_.false_branch) {
            return expr.clone();
        }
        self.normalize(Expr::if_(cond, t, f))
    }
    /// A sequence outside a function body or branch: its blocks are emitted
    /// into the current scope and its body is returned.
    fn visit_seq_expr(&mut self, _expr: &Expr, seq: &SeqExpr) -> Expr {
        for b in &seq.blocks {
            self.visit_binding_block(b);
        }
        self.visit_expr(&seq.body)
    }
    /// A function: parameters, then the body in a new scope.
    fn visit_function(&mut self, expr: &Expr, func: &Function) -> Expr {
        let params: Vec<Var> = func.params.iter().map(|p| self.visit_var_def(p)).collect();
        self.builder().begin_scope(&params);
        let body = self.visit_function_body(&func.body);
        let body = match self.builder().end_scope(body) {
            Ok(b) => b,
            Err(e) => {
                self.builder().report(e);
                return expr.clone();
            }
        };
        if body.ptr_eq(&func.body) && params == func.params {
            return expr.clone();
        }
        // A rewrite may change what the body returns: the declared result is
        // kept while it still holds, else re-derived from the new body.
        let mut ret = func.ret_struct_info.clone();
        if let Some(s) = body.struct_info() {
            let analyzer = shape_analyzer_for(&params);
            if struct_info_base_check(&ret, s, &analyzer) != BaseCheckResult::Pass {
                let defined: HashSet<TirVar> = params
                    .iter()
                    .filter_map(|p| p.struct_info())
                    .flat_map(|s| s.definable_tir_vars())
                    .collect();
                ret = erase_to_well_defined(s, &HashMap::new(), &HashMap::new(), &|v| {
                    defined.contains(v)
                });
            }
        }
        Expr::function(Function {
            params,
            body,
            ret_struct_info: ret,
            ..func.clone()
        })
    }

    /// A binding block: dispatches on its kind.
    fn visit_binding_block(&mut self, block: &BindingBlock) {
        if block.is_dataflow {
            self.visit_dataflow_block(block)
        } else {
            self.visit_binding_block_(block)
        }
    }
    /// An ordinary block: each binding is re-emitted.
    fn visit_binding_block_(&mut self, block: &BindingBlock) {
        if let Err(e) = self.builder().end_block() {
            self.builder().report(e);
        }
        block.bindings.iter().for_each(|b| self.visit_binding(b));
        if let Err(e) = self.builder().end_block() {
            self.builder().report(e);
        }
    }
    /// A dataflow block: each binding is re-emitted inside a dataflow block.
    fn visit_dataflow_block(&mut self, block: &BindingBlock) {
        if let Err(e) = self.builder().begin_dataflow() {
            self.builder().report(e);
        }
        block.bindings.iter().for_each(|b| self.visit_binding(b));
        if let Err(e) = self.builder().end_dataflow() {
            self.builder().report(e);
        }
    }
    /// A binding: dispatches on its kind.
    fn visit_binding(&mut self, binding: &Binding) {
        match binding {
            Binding::VarBinding(b) => self.visit_var_binding(b),
            Binding::MatchCast(b) => self.visit_match_cast(b),
        }
    }
    /// `var = value`: the value is visited and the binding re-emitted.
    fn visit_var_binding(&mut self, binding: &VarBinding) {
        let value = self.visit_expr(&binding.value);
        self.reemit_binding(binding, value);
    }
    /// `var = match_cast(value, sinfo)`: the value is visited and the
    /// binding re-emitted.
    fn visit_match_cast(&mut self, binding: &MatchCast) {
        let value = self.visit_expr(&binding.value);
        let value = self.normalize_argument(value);
        let var = self.visit_var_def(&binding.var);
        let b = Binding::match_cast(var, value, binding.struct_info.clone());
        if let Err(e) = self.builder().emit_normalized(b) {
            self.builder().report(e);
        }
    }
    /// A definition site: dispatches on the variable's kind.
    fn visit_var_def(&mut self, var: &Var) -> Var {
        if var.is_dataflow() {
            self.visit_var_def_dataflow_var(var)
        } else {
            self.visit_var_def_var(var)
        }
    }
    /// The definition of a `Var`: unchanged by default.
    fn visit_var_def_var(&mut self, var: &Var) -> Var {
        var.clone()
    }
    /// The definition of a `DataflowVar`: unchanged by default.
    fn visit_var_def_dataflow_var(&mut self, var: &Var) -> Var {
        var.clone()
    }

    // ----- helpers with fixed behaviour ---------------------------------

    /// Visits the children of `expr`, rebuilds it if any changed, and
    /// normalizes it (TVM's `VisitExprPostOrder`). Overrides of `visit_call`
    /// call this first, then inspect the rebuilt call.
    fn visit_expr_post_order(&mut self, expr: &Expr) -> Expr {
        let rebuilt = match expr.kind() {
            ExprKind::Call(c) => {
                let op = self.visit_expr(&c.op);
                let args: Vec<Expr> = c.args.iter().map(|a| self.visit_expr(a)).collect();
                if op.ptr_eq(&c.op) && args.iter().zip(&c.args).all(|(a, b)| a.ptr_eq(b)) {
                    return expr.clone();
                }
                Expr::call_full(op, args, c.attrs.clone(), c.sinfo_args.clone())
            }
            ExprKind::Tuple(fields) => {
                let new: Vec<Expr> = fields.iter().map(|f| self.visit_expr(f)).collect();
                if new.iter().zip(fields).all(|(a, b)| a.ptr_eq(b)) {
                    return expr.clone();
                }
                Expr::tuple(new)
            }
            ExprKind::TupleGetItem(t, i) => {
                let new = self.visit_expr(t);
                if new.ptr_eq(t) {
                    return expr.clone();
                }
                Expr::tuple_get_item(new, *i)
            }
            _ => return self.visit_expr(expr),
        };
        self.normalize(rebuilt)
    }

    /// The value bound to `var` in the program being built.
    fn lookup_binding(&mut self, var: &Var) -> Option<Expr> {
        self.builder().lookup_binding(var).cloned()
    }

    /// Normalizes through the builder; on error, reports it and keeps `expr`.
    fn normalize(&mut self, expr: Expr) -> Expr {
        match self.builder().normalize(expr.clone()) {
            Ok(e) => e,
            Err(e) => {
                self.builder().report(e);
                expr
            }
        }
    }

    /// Normalizes and binds a non-leaf; on error, reports it and keeps `expr`.
    fn normalize_argument(&mut self, expr: Expr) -> Expr {
        match self.builder().normalize_argument(expr.clone()) {
            Ok(e) => e,
            Err(e) => {
                self.builder().report(e);
                expr
            }
        }
    }

    /// Emits `binding.var = value`: the same variable if the StructInfo is
    /// unchanged, else a new one that later uses are remapped to.
    fn reemit_binding(&mut self, binding: &VarBinding, value: Expr) {
        let value = if value.ptr_eq(&binding.value) {
            value
        } else {
            self.normalize(value)
        };
        let old = self.visit_var_def(&binding.var);
        let var = match value.struct_info() {
            Some(s) if old.struct_info() != Some(s) => {
                let v = old.with_struct_info(s.clone());
                self.var_remap().insert(binding.var.clone(), v.clone());
                v
            }
            _ => old,
        };
        if let Err(e) = self
            .builder()
            .emit_normalized(Binding::var_binding(var, value))
        {
            self.builder().report(e);
        }
    }

    /// Visits a function body: its blocks are emitted into the open scope
    /// and its result expression is returned.
    fn visit_function_body(&mut self, body: &Expr) -> Expr {
        match body.kind() {
            ExprKind::SeqExpr(seq) => {
                for b in &seq.blocks {
                    self.visit_binding_block(b);
                }
                self.visit_expr(&seq.body)
            }
            _ => self.visit_expr(body),
        }
    }

    /// Visits `expr` in a nested scope and returns it as a `SeqExpr`.
    fn visit_with_inner_scope(&mut self, expr: &Expr) -> Expr {
        if let Err(e) = self.builder().begin_inner_scope() {
            self.builder().report(e);
            return expr.clone();
        }
        let out = self.visit_function_body(expr);
        match self.builder().end_inner_scope(out) {
            Ok(seq) => seq,
            Err(e) => {
                self.builder().report(e);
                expr.clone()
            }
        }
    }
}

/// An analyzer that knows the parameters' symbolic dims are non-negative.
fn shape_analyzer_for(params: &[Var]) -> Analyzer {
    let mut a = Analyzer::new();
    for v in params
        .iter()
        .filter_map(|p| p.struct_info())
        .flat_map(|s| s.tir_vars())
    {
        a.mark_non_negative(&v);
    }
    a
}

/// The state every mutator needs; embed it and return it from
/// [`ExprMutator::state`].
#[derive(Default)]
pub struct MutatorState {
    /// The builder.
    pub builder: BlockBuilder,
    /// Old variable → replacement.
    pub var_remap: HashMap<Var, Var>,
}

impl MutatorState {
    /// A state whose builder knows `module` (for global function lookups).
    pub fn with_module(module: &IRModule) -> Self {
        MutatorState {
            builder: BlockBuilder::with_module(module.clone()),
            var_remap: HashMap::new(),
        }
    }
}

/// Runs `mutator` over every Relax function of `module` and returns the
/// rewritten module, with the functions the rewrites added to the
/// builder (a pass's new PrimFuncs), or every error the rewrites produced.
pub fn mutate_module<M: ExprMutator>(
    mutator: &mut M,
    module: &IRModule,
) -> Result<IRModule, Error> {
    let mut out = module.clone();
    for (gv, f) in module.functions() {
        let Some(func) = f.as_relax() else { continue };
        let e = Expr::function(func.clone());
        let new = mutator.visit_expr(&e);
        if let Some(nf) = new.as_function() {
            out.add(gv.clone(), nf.clone());
        }
    }
    let errors = mutator.builder().take_errors();
    if !errors.is_empty() {
        return Err(Error::Compile(errors));
    }
    for (gv, f) in mutator.builder().get().functions() {
        if out.get(gv.name_hint()).is_none() {
            out.add(gv.clone(), f.clone());
        }
    }
    Ok(out)
}

/// `expr` with each use of a variable in `map` replaced by its expression
/// and what changed re-normalized (TVM's `relax.bind`); `module` resolves
/// global functions. Every error normalization found is returned.
pub fn replace_vars(
    expr: &Expr,
    map: &HashMap<Var, Expr>,
    module: &IRModule,
) -> Result<Expr, Error> {
    struct Replace<'a> {
        state: MutatorState,
        map: &'a HashMap<Var, Expr>,
    }
    impl ExprMutator for Replace<'_> {
        fn state(&mut self) -> &mut MutatorState {
            &mut self.state
        }
        fn visit_var(&mut self, expr: &Expr, var: &Var) -> Expr {
            match self.map.get(var) {
                Some(e) => e.clone(),
                None => self
                    .var_remap()
                    .get(var)
                    .map_or_else(|| expr.clone(), Expr::var),
            }
        }
    }
    let mut m = Replace {
        state: MutatorState::with_module(module),
        map,
    };
    let e = m.visit_expr(expr);
    let errors = m.state.builder.take_errors();
    if errors.is_empty() {
        Ok(e)
    } else {
        Err(Error::Compile(errors))
    }
}

/// Removes bindings whose variable is never used and whose value has no side
/// effects, until none is left (TVM's `remove_all_unused`). Every binding of
/// a dataflow block qualifies; in an ordinary block only pure values do.
///
/// One count of the uses of every variable, then one sweep from the last
/// binding to the first: a removed binding gives back the uses its value
/// made, so a chain of dead bindings goes
/// in the same sweep. Linear in the size of the function.
pub fn remove_all_unused(func: &Function) -> Function {
    let mut uses = UseCounts::default();
    count_uses(&Expr::function(func.clone()), &mut uses, 1);
    let (body, removed) = remove_unused_in(&func.body, &mut uses);
    if !removed {
        return func.clone();
    }
    Function {
        body,
        ..func.clone()
    }
}

/// Adds `delta` to the count of every use of a variable in `expr`.
fn count_uses(expr: &Expr, uses: &mut UseCounts, delta: isize) {
    Uses { uses, delta }.visit_expr(expr)
}

/// Uses per variable, keyed by the variable's id.
type UseCounts = HashMap<u64, isize, BuildIdHasher>;

struct Uses<'a> {
    uses: &'a mut UseCounts,
    delta: isize,
}

impl ExprVisitor for Uses<'_> {
    fn visit_var(&mut self, _: &Expr, v: &Var) {
        *self.uses.entry(v.id()).or_insert(0) += self.delta;
    }
    fn visit_dataflow_var(&mut self, _: &Expr, v: &Var) {
        *self.uses.entry(v.id()).or_insert(0) += self.delta;
    }
    fn visit_struct_info(&mut self, s: &crate::ir::StructInfo) {
        // A tensor's shape may be a variable; that is a use too.
        if let Some(shape) = s.as_tensor().and_then(|t| t.shape.clone()) {
            self.visit_expr(&shape);
        }
    }
}

fn is_pure_value(e: &Expr) -> bool {
    let mut pure = true;
    post_order_visit(e, |x| {
        if let Some(c) = x.as_call() {
            pure &= !is_impure_call(c);
        }
    });
    pure
}

/// One sweep of `expr` (a `SeqExpr`) from its last binding to its first;
/// whether anything was removed.
fn remove_unused_in(expr: &Expr, uses: &mut UseCounts) -> (Expr, bool) {
    let Some(seq) = expr.as_seq() else {
        return (expr.clone(), false);
    };
    let mut removed = false;
    let mut blocks = Vec::new();
    for b in seq.blocks.iter().rev() {
        let mut kept = Vec::new();
        for binding in b.bindings.iter().rev() {
            let dead = uses.get(&binding.var().id()).copied().unwrap_or(0) <= 0
                && matches!(binding, Binding::VarBinding(_))
                && (b.is_dataflow || is_pure_value(binding.value()));
            if dead {
                removed = true;
                count_uses(binding.value(), uses, -1);
                continue;
            }
            // Nested scopes (If branches) are cleaned too.
            let binding = match binding {
                Binding::VarBinding(vb) => match vb.value.kind() {
                    ExprKind::If(i) => {
                        let (t, rt) = remove_unused_in(&i.true_branch, uses);
                        let (f, rf) = remove_unused_in(&i.false_branch, uses);
                        if rt || rf {
                            removed = true;
                            let v = Expr::if_(i.cond.clone(), t, f);
                            let v = match vb.value.struct_info() {
                                Some(s) => v.with_struct_info(s.clone()),
                                None => v,
                            };
                            Binding::var_binding(vb.var.clone(), v)
                        } else {
                            binding.clone()
                        }
                    }
                    _ => binding.clone(),
                },
                _ => binding.clone(),
            };
            kept.push(binding);
        }
        if !kept.is_empty() {
            kept.reverse();
            blocks.push(BindingBlock {
                bindings: kept,
                is_dataflow: b.is_dataflow,
            });
        }
    }
    if !removed {
        return (expr.clone(), false);
    }
    blocks.reverse();
    let new = Expr::seq(blocks, seq.body.clone());
    let new = match expr.struct_info() {
        Some(s) => new.into_with_struct_info(s.clone()),
        None => new,
    };
    (new, true)
}

/// What a graph rewrite sees of the dataflow block it is in.
pub struct DataflowGraph<'a> {
    builder: &'a BlockBuilder,
}

impl DataflowGraph<'_> {
    /// The value bound to `var` (looking through variables, as a graph does).
    pub fn lookup(&self, var: &Var) -> Option<&Expr> {
        self.builder.lookup_binding(var)
    }
    /// The value bound to `expr` if it is a variable.
    pub fn producer(&self, expr: &Expr) -> Option<&Expr> {
        self.lookup(expr.as_var()?)
    }
}

/// Rewrites every binding of every dataflow block of `module`: `rewrite`
/// receives the bound variable, its (already rewritten) value and the block
/// so far, and returns a replacement value or `None`. Bindings that become
/// unused are removed afterwards.
pub fn rewrite_dataflow_bindings(
    module: &IRModule,
    rewrite: impl FnMut(&Var, &Expr, &DataflowGraph<'_>) -> Option<Expr>,
) -> Result<IRModule, Error> {
    struct Rewriter<F> {
        state: MutatorState,
        rewrite: F,
        in_dataflow: bool,
    }
    impl<F: FnMut(&Var, &Expr, &DataflowGraph<'_>) -> Option<Expr>> ExprMutator for Rewriter<F> {
        fn state(&mut self) -> &mut crate::mutator::MutatorState {
            &mut self.state
        }
        fn visit_dataflow_block(&mut self, block: &BindingBlock) {
            self.in_dataflow = true;
            if let Err(e) = self.builder().begin_dataflow() {
                self.builder().report(e);
            }
            block.bindings.iter().for_each(|b| self.visit_binding(b));
            if let Err(e) = self.builder().end_dataflow() {
                self.builder().report(e);
            }
            self.in_dataflow = false;
        }
        fn visit_var_binding(&mut self, binding: &VarBinding) {
            let value = self.visit_expr(&binding.value);
            let value = if self.in_dataflow {
                let graph = DataflowGraph {
                    builder: &self.state.builder,
                };
                (self.rewrite)(&binding.var, &value, &graph).unwrap_or(value)
            } else {
                value
            };
            self.reemit_binding(binding, value);
        }
    }
    let mut r = Rewriter {
        state: MutatorState::with_module(module),
        rewrite,
        in_dataflow: false,
    };
    let out = mutate_module(&mut r, module)?;
    let mut cleaned = out.clone();
    for (gv, f) in out.functions() {
        if let Some(func) = f.as_relax() {
            cleaned.add(gv.clone(), remove_all_unused(func));
        }
    }
    Ok(cleaned)
}

#[cfg(test)]
mod tests;
