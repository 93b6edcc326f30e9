//! `ToBasicBlockNormalForm`: rewrites graph-form Relax into basic-block
//! normal form (see [`crate::analysis::basic_block_normal_form`] for the form
//! and for how blocks are defined).
//!
//! 1. The placement analysis finds every non-leaf node used in more than one
//!    block and the block it belongs in: the innermost block enclosing all of
//!    its uses (the earliest of several sibling blocks of one `SeqExpr`).
//! 2. Each such node gets a fresh `Var` (named after its op, else `bb`),
//!    bound in that block just before the binding (or `SeqExpr` body, or `If`
//!    condition's binding) that first uses it, and every use is replaced by
//!    the var. Bindings inserted before the same element are ordered operands
//!    first, so a shared node whose operands are shared too is bound after
//!    them.
//! 3. The new var is always an ordinary `Var`, even in a `DataflowBlock`: a
//!    node is bound only because it is used in two blocks, and a
//!    `DataflowVar` could not be seen from the second one. Its StructInfo is
//!    the node's, or, when a graph-form node has none, derived from it.
//! 4. Everything else is kept, including sharing inside one block (which the
//!    form allows) and node identity: a subtree without changes is returned
//!    as the same `Arc`, so a function already in the form comes back
//!    unchanged, and converting twice changes nothing the second time.
//! 5. When the enclosing block is a scope without bindings (a `SeqExpr` with
//!    no blocks, or a graph-form `If` branch or function body that is not a
//!    `SeqExpr`), an ordinary binding block is created for the new bindings.

use crate::analysis::basic_block_normal_form::{BlockKey, Placement};
use crate::analysis::derive::{derive_struct_info, DeriveContext};
use crate::ir::{
    BaseFunc, Binding, BindingBlock, Call, Expr, ExprKind, Function, IRModule, If, MatchCast,
    SeqExpr, StructInfo, Var, VarBinding,
};
use crate::transform::Pass;
use relax_runtime::Error;
use std::collections::{BTreeMap, HashMap};

/// Converts every Relax function of a module to basic-block normal form.
#[derive(Clone, Copy, Debug, Default)]
pub struct ToBasicBlockNormalForm;

impl Pass for ToBasicBlockNormalForm {
    fn name(&self) -> &str {
        "ToBasicBlockNormalForm"
    }
    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        let mut out = module.clone();
        for (gv, func) in module.functions() {
            if let BaseFunc::Relax(func) = func {
                out.add(gv.clone(), to_basic_block_normal_form(func));
            }
        }
        Ok(out)
    }
}

/// `func` in basic-block normal form: every non-leaf node used in more than
/// one block is bound to a fresh `Var` in the innermost block enclosing its
/// uses. See the module docs.
pub fn to_basic_block_normal_form(func: &Function) -> Function {
    let placement = Placement::of_function(func);
    let mut converter = Converter::new(&placement);
    let body = converter.scope_root(&func.body, BlockKey::Top);
    if body.ptr_eq(&func.body) {
        return func.clone();
    }
    Function {
        body,
        ..func.clone()
    }
}

/// The rewrite, one result per node (memoized by node, so sharing survives).
struct Converter<'p> {
    placement: &'p Placement,
    /// The var of each shared node, with the expression referring to it.
    vars: HashMap<usize, (Var, Expr)>,
    /// The shared nodes bound in each block, by the element they precede,
    /// operands first.
    inserts: HashMap<BlockKey, BTreeMap<usize, Vec<usize>>>,
    memo: HashMap<usize, Expr>,
}

impl<'p> Converter<'p> {
    fn new(placement: &'p Placement) -> Self {
        let mut shared: Vec<usize> = placement.shared_nodes().collect();
        shared.sort_by_key(|&i| placement.nodes[i].post);
        let mut vars = HashMap::new();
        let mut inserts: HashMap<BlockKey, BTreeMap<usize, Vec<usize>>> = HashMap::new();
        for i in shared {
            let info = &placement.nodes[i];
            let var = Var::new(name_hint(&info.expr), Some(struct_info_of(&info.expr)));
            let expr = Expr::var(&var);
            vars.insert(i, (var, expr));
            inserts
                .entry(info.block())
                .or_default()
                .entry(info.elem())
                .or_default()
                .push(i);
        }
        Converter {
            placement,
            vars,
            inserts,
            memo: HashMap::new(),
        }
    }

    /// `expr` in an operand or binding-value position: a shared node becomes
    /// its var, anything else its rewrite.
    fn use_(&mut self, expr: &Expr) -> Expr {
        match self.placement.index_of(expr) {
            None => expr.clone(),
            Some(i) => match self.vars.get(&i) {
                Some((_, var)) => var.clone(),
                None => self.rewrite(i),
            },
        }
    }

    /// `expr` as the root of a scope (`If` branch, function body): like
    /// [`Converter::use_`], but a `SeqExpr` stays a `SeqExpr` and bindings
    /// placed in the scope itself get a block of their own.
    fn scope_root(&mut self, expr: &Expr, block: BlockKey) -> Expr {
        let mut root = self.use_(expr);
        if expr.as_seq().is_some() && root.as_var().is_some() {
            root = Expr::seq(vec![], root);
        }
        let bindings = self.bindings_at(block, None);
        if bindings.is_empty() {
            root
        } else {
            Expr::seq(vec![BindingBlock::new(bindings)], root)
        }
    }

    /// The bindings of the shared nodes placed in `block` before element
    /// `elem` (all of them when `elem` is `None`).
    fn bindings_at(&mut self, block: BlockKey, elem: Option<usize>) -> Vec<Binding> {
        let nodes: Vec<usize> = match self.inserts.get(&block) {
            None => return Vec::new(),
            Some(by_elem) => match elem {
                Some(e) => by_elem.get(&e).cloned().unwrap_or_default(),
                None => by_elem.values().flatten().copied().collect(),
            },
        };
        nodes
            .into_iter()
            .filter_map(|i| {
                let value = self.rewrite(i);
                let (var, _) = self.vars.get(&i)?;
                Some(Binding::var_binding(var.clone(), value))
            })
            .collect()
    }

    /// Node `i` with its operands rewritten and its scopes converted.
    fn rewrite(&mut self, i: usize) -> Expr {
        if let Some(done) = self.memo.get(&i) {
            return done.clone();
        }
        let expr = self.placement.nodes[i].expr.clone();
        let new_kind = match expr.kind() {
            ExprKind::Call(call) => {
                let op = self.use_(&call.op);
                let args: Vec<Expr> = call.args.iter().map(|a| self.use_(a)).collect();
                let same = op.ptr_eq(&call.op) && all_same(&args, &call.args);
                (!same).then(|| {
                    ExprKind::Call(Call {
                        op,
                        args,
                        attrs: call.attrs.clone(),
                        sinfo_args: call.sinfo_args.clone(),
                    })
                })
            }
            ExprKind::Tuple(fields) => {
                let new: Vec<Expr> = fields.iter().map(|f| self.use_(f)).collect();
                (!all_same(&new, fields)).then_some(ExprKind::Tuple(new))
            }
            ExprKind::TupleGetItem(tuple, index) => {
                let new = self.use_(tuple);
                (!new.ptr_eq(tuple)).then_some(ExprKind::TupleGetItem(new, *index))
            }
            ExprKind::If(if_) => {
                let cond = self.use_(&if_.cond);
                let t = self.scope_root(&if_.true_branch, BlockKey::Region { owner: i, slot: 1 });
                let f = self.scope_root(&if_.false_branch, BlockKey::Region { owner: i, slot: 2 });
                let same = cond.ptr_eq(&if_.cond)
                    && t.ptr_eq(&if_.true_branch)
                    && f.ptr_eq(&if_.false_branch);
                (!same).then_some(ExprKind::If(If {
                    cond,
                    true_branch: t,
                    false_branch: f,
                }))
            }
            ExprKind::Function(func) => {
                let body = self.scope_root(&func.body, BlockKey::Region { owner: i, slot: 0 });
                (!body.ptr_eq(&func.body)).then(|| {
                    ExprKind::Function(Function {
                        body,
                        ..func.clone()
                    })
                })
            }
            ExprKind::SeqExpr(seq) => self.rewrite_seq(i, seq).map(ExprKind::SeqExpr),
            _ => None,
        };
        let new = match new_kind {
            None => expr,
            Some(kind) => {
                let rebuilt = Expr::new(kind);
                match expr.struct_info() {
                    Some(si) => rebuilt.with_struct_info(si.clone()),
                    None => rebuilt,
                }
            }
        };
        self.memo.insert(i, new.clone());
        new
    }

    /// The blocks of `SeqExpr` node `i` with the new bindings inserted and
    /// values rewritten, or `None` when nothing changed.
    fn rewrite_seq(&mut self, i: usize, seq: &SeqExpr) -> Option<SeqExpr> {
        let mut changed = false;
        let mut blocks = Vec::with_capacity(seq.blocks.len() + 1);
        if seq.blocks.is_empty() {
            let bindings = self.bindings_at(BlockKey::Seq { seq: i, index: 0 }, None);
            if !bindings.is_empty() {
                changed = true;
                blocks.push(BindingBlock::new(bindings));
            }
        }
        for (index, block) in seq.blocks.iter().enumerate() {
            let key = BlockKey::Seq { seq: i, index };
            let mut bindings = Vec::with_capacity(block.bindings.len());
            for (elem, binding) in block.bindings.iter().enumerate() {
                let inserted = self.bindings_at(key, Some(elem));
                changed |= !inserted.is_empty();
                bindings.extend(inserted);
                let value = self.use_(binding.value());
                if value.ptr_eq(binding.value()) {
                    bindings.push(binding.clone());
                } else {
                    changed = true;
                    bindings.push(with_value(binding, value));
                }
            }
            let before_body = self.bindings_at(key, Some(block.bindings.len()));
            changed |= !before_body.is_empty();
            bindings.extend(before_body);
            blocks.push(BindingBlock {
                bindings,
                is_dataflow: block.is_dataflow,
            });
        }
        let body = self.use_(&seq.body);
        changed |= !body.ptr_eq(&seq.body);
        changed.then_some(SeqExpr { blocks, body })
    }
}

/// `binding` with another value.
fn with_value(binding: &Binding, value: Expr) -> Binding {
    match binding {
        Binding::VarBinding(b) => Binding::VarBinding(VarBinding {
            var: b.var.clone(),
            value,
        }),
        Binding::MatchCast(b) => Binding::MatchCast(MatchCast {
            var: b.var.clone(),
            value,
            struct_info: b.struct_info.clone(),
        }),
    }
}

/// Whether both lists hold the same nodes.
fn all_same(a: &[Expr], b: &[Expr]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.ptr_eq(y))
}

/// The name of the var a shared node is bound to: the op's last name
/// component (`relax.nn.relu` gives `relu`), or `bb`.
fn name_hint(expr: &Expr) -> String {
    match expr.call_op_name() {
        Some(name) => name.rsplit('.').next().unwrap_or("bb").to_string(),
        None => "bb".to_string(),
    }
}

/// The StructInfo of a node about to be bound: its own, or, for a graph-form
/// node without one, what derivation gives (`Object` if even that fails, as
/// `Object` is true of every value).
fn struct_info_of(expr: &Expr) -> StructInfo {
    match expr.struct_info() {
        Some(si) => si.clone(),
        None => derive_struct_info(expr, &DeriveContext::default())
            .unwrap_or_else(|_| StructInfo::object()),
    }
}

#[cfg(test)]
mod tests;
