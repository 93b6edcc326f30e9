//! `Bindings`: what a pattern sees of the function around an expression —
//! the value bound to each variable (TVM's `AnalyzeVar2Value`), and the
//! binding blocks, for graph patterns and `dominates`.

use crate::analysis::indexed_forward_graph::IndexedForwardGraph;
use crate::analysis::post_dominator_tree::PostDominatorTree;
use crate::ir::expr::{BindingBlock, Var};
use crate::ir::id_hash::BuildIdHasher;
use crate::ir::{Expr, ExprKind, Function, VarMap};
use std::collections::HashMap;
use std::sync::OnceLock;

/// A block's dataflow graph and its post-dominator tree, built on demand.
pub(super) struct BlockGraph {
    pub(super) graph: IndexedForwardGraph,
    pub(super) tree: PostDominatorTree,
}

/// The bindings of a function (or of nothing). See the module docs.
#[derive(Default)]
pub struct Bindings {
    /// Where each variable is bound: (block, binding) in `blocks`.
    values: VarMap<(u32, u32)>,
    /// Every binding, in program order, as (block, binding).
    order: Vec<(u32, u32)>,
    blocks: Vec<BindingBlock>,
    /// Where each variable is bound and which variable each value is bound
    /// to: only `dominates` and graph patterns need them, so they are made
    /// on first use.
    index: OnceLock<Index>,
    graphs: Vec<OnceLock<BlockGraph>>,
}

#[derive(Default)]
struct Index {
    var_of_value: HashMap<usize, Var, BuildIdHasher>,
    block_of: VarMap<usize>,
}

impl Bindings {
    /// No bindings: variables match only variable patterns.
    pub fn none() -> Self {
        Bindings::default()
    }

    /// The bindings of `func`'s body, nested scopes included.
    pub fn of_function(func: &Function) -> Self {
        let mut b = Bindings::default();
        b.collect(&func.body);
        b
    }

    /// The bindings of one block.
    pub fn of_block(block: &BindingBlock) -> Self {
        let mut b = Bindings::default();
        b.add_block(block);
        b
    }

    fn add_block(&mut self, block: &BindingBlock) {
        let at = self.blocks.len() as u32;
        self.blocks.push(block.clone());
        self.graphs.push(OnceLock::new());
        self.values.reserve(block.bindings.len());
        for (i, binding) in block.bindings.iter().enumerate() {
            self.values.insert(binding.var().clone(), (at, i as u32));
            self.order.push((at, i as u32));
            self.collect(binding.value());
        }
    }

    fn binding(&self, (block, i): (u32, u32)) -> &crate::ir::Binding {
        &self.blocks[block as usize].bindings[i as usize]
    }

    fn collect(&mut self, e: &Expr) {
        match e.kind() {
            ExprKind::SeqExpr(seq) => {
                for block in &seq.blocks {
                    self.add_block(block);
                }
                self.collect(&seq.body);
            }
            ExprKind::If(i) => {
                self.collect(&i.true_branch);
                self.collect(&i.false_branch);
            }
            ExprKind::Function(f) => self.collect(&f.body),
            _ => {}
        }
    }

    /// Every binding, in program order (nested scopes after the binding
    /// that holds them).
    pub fn iter(&self) -> impl Iterator<Item = (&Var, &Expr)> {
        self.order.iter().map(|&at| {
            let b = self.binding(at);
            (b.var(), b.value())
        })
    }

    /// The value bound to `var`.
    pub fn value(&self, var: &Var) -> Option<&Expr> {
        self.values.get(var).map(|&at| self.binding(at).value())
    }

    /// The variable bound to `expr` (the same node), if any.
    pub fn var_of(&self, expr: &Expr) -> Option<Var> {
        if let Some(v) = expr.as_var() {
            return Some(v.clone());
        }
        self.index().var_of_value.get(&expr.node_id()).cloned()
    }

    fn index(&self) -> &Index {
        self.index.get_or_init(|| {
            let mut index = Index::default();
            for (i, block) in self.blocks.iter().enumerate() {
                for b in &block.bindings {
                    index
                        .var_of_value
                        .insert(b.value().node_id(), b.var().clone());
                    index.block_of.insert(b.var().clone(), i);
                }
            }
            index
        })
    }

    /// The block binding `var`, with its graph.
    pub(super) fn graph_of(&self, var: &Var) -> Option<&BlockGraph> {
        let i = *self.index().block_of.get(var)?;
        Some(self.graphs[i].get_or_init(|| {
            let graph = IndexedForwardGraph::from_block(&self.blocks[i]);
            let tree = PostDominatorTree::new(&graph);
            BlockGraph { graph, tree }
        }))
    }
}
