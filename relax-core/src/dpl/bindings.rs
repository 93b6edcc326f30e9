//! `Bindings`: what a pattern sees of the function around an expression —
//! the value bound to each variable (TVM's `AnalyzeVar2Value`), and the
//! binding blocks, for graph patterns and `dominates`.

use crate::analysis::indexed_forward_graph::IndexedForwardGraph;
use crate::analysis::post_dominator_tree::PostDominatorTree;
use crate::ir::expr::{BindingBlock, Var};
use crate::ir::{Expr, ExprKind, Function};
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
    values: HashMap<Var, Expr>,
    var_of_value: HashMap<usize, Var>,
    blocks: Vec<BindingBlock>,
    block_of: HashMap<Var, usize>,
    graphs: Vec<OnceLock<BlockGraph>>,
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
        let index = self.blocks.len();
        self.blocks.push(block.clone());
        self.graphs.push(OnceLock::new());
        for binding in &block.bindings {
            self.values
                .insert(binding.var().clone(), binding.value().clone());
            self.var_of_value
                .insert(binding.value().node_id(), binding.var().clone());
            self.block_of.insert(binding.var().clone(), index);
            self.collect(binding.value());
        }
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

    /// The value bound to `var`.
    pub fn value(&self, var: &Var) -> Option<&Expr> {
        self.values.get(var)
    }

    /// The variable bound to `expr` (the same node), if any.
    pub fn var_of(&self, expr: &Expr) -> Option<Var> {
        if let Some(v) = expr.as_var() {
            return Some(v.clone());
        }
        self.var_of_value.get(&expr.node_id()).cloned()
    }

    /// The block binding `var`, with its graph.
    pub(super) fn graph_of(&self, var: &Var) -> Option<&BlockGraph> {
        let i = *self.block_of.get(var)?;
        Some(self.graphs[i].get_or_init(|| {
            let graph = IndexedForwardGraph::from_block(&self.blocks[i]);
            let tree = PostDominatorTree::new(&graph);
            BlockGraph { graph, tree }
        }))
    }
}
