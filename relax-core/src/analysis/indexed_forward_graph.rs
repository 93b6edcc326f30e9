//! `IndexedForwardGraph`: the dataflow graph of one binding block, with
//! nodes numbered in topological order (TVM's `IndexedForwardGraph`, the
//! graph its fusion partitioner and dominator analysis work on).
//!
//! 1. There is one node per variable: first the *free* variables the block
//!    reads (function parameters, variables of earlier blocks), which have no
//!    value, then one node per binding, in binding order. Index order is
//!    therefore a topological order: every producer comes before its
//!    consumers.
//! 2. An edge `p -> c` means the value bound at `c` reads the variable of
//!    `p`. Each node lists its producers (`inputs`, deduplicated, in order of
//!    first use) and its consumers (`outputs`, deduplicated, in binding
//!    order).
//! 3. `extern_ref` marks a node whose variable is visible after the block:
//!    every free variable, and every binding whose variable is not a
//!    `DataflowVar` (a dataflow block's outputs). Its value may be used by
//!    code this graph does not see.
//! 4. The graph is a snapshot: it holds the block's variables and values but
//!    does not follow later rewrites.

use super::vars::free_vars;
use crate::ir::{BindingBlock, Expr, Var};
use std::collections::HashMap;

/// One node: a variable, and the value bound to it in the block if any.
#[derive(Clone, Debug)]
pub struct GraphNode {
    /// The bound variable, or a free variable the block reads.
    pub var: Var,
    /// The bound value; `None` for a free variable (an input of the block).
    pub value: Option<Expr>,
    /// Producer nodes, deduplicated, in order of first use.
    pub inputs: Vec<usize>,
    /// Consumer nodes, deduplicated, in binding order.
    pub outputs: Vec<usize>,
    /// Whether the variable is visible after the block (see the module docs).
    pub extern_ref: bool,
}

/// The dataflow graph of a binding block. See the module docs.
#[derive(Clone, Debug, Default)]
pub struct IndexedForwardGraph {
    /// The nodes, in topological order.
    pub nodes: Vec<GraphNode>,
    index: HashMap<Var, usize>,
}

impl IndexedForwardGraph {
    /// The graph of `block` (a dataflow block, or any binding block: the
    /// edges are the same).
    pub fn from_block(block: &BindingBlock) -> Self {
        let reads: Vec<Vec<Var>> = block
            .bindings
            .iter()
            .map(|b| free_vars(b.value()))
            .collect();
        let mut g = IndexedForwardGraph::default();
        // Free variables first: read before (or without) being bound here.
        let bound: std::collections::HashSet<&Var> =
            block.bindings.iter().map(|b| b.var()).collect();
        for v in reads.iter().flatten() {
            if !bound.contains(v) && !g.index.contains_key(v) {
                g.push(v.clone(), None, true);
            }
        }
        for (binding, reads) in block.bindings.iter().zip(reads) {
            let var = binding.var();
            let me = g.push(
                var.clone(),
                Some(binding.value().clone()),
                !var.is_dataflow(),
            );
            for v in reads {
                // A variable bound later in the block cannot be read here in
                // a well-formed block; such a read is not an edge.
                let Some(&p) = g.index.get(&v) else { continue };
                if p < me {
                    g.nodes[me].inputs.push(p);
                    g.nodes[p].outputs.push(me);
                }
            }
        }
        g
    }

    fn push(&mut self, var: Var, value: Option<Expr>, extern_ref: bool) -> usize {
        let i = self.nodes.len();
        self.index.insert(var.clone(), i);
        self.nodes.push(GraphNode {
            var,
            value,
            inputs: vec![],
            outputs: vec![],
            extern_ref,
        });
        i
    }

    /// The node of `var`, if the block binds or reads it.
    pub fn node_of(&self, var: &Var) -> Option<usize> {
        self.index.get(var).copied()
    }

    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the graph has no node.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The nodes strictly between `from` and `to` on some path from `from`
    /// to `to`, in index order (empty when `to` is not reachable).
    pub fn nodes_on_paths(&self, from: usize, to: usize) -> Vec<usize> {
        if from >= to || to >= self.nodes.len() {
            return vec![];
        }
        // Forward from `from`, then backward from `to`, both within the
        // index range between them (topological order bounds every path).
        let mut reach = vec![false; to - from + 1];
        reach[0] = true;
        for i in from..to {
            if reach[i - from] {
                for &o in &self.nodes[i].outputs {
                    if o <= to {
                        reach[o - from] = true;
                    }
                }
            }
        }
        let mut back = vec![false; to - from + 1];
        back[to - from] = true;
        for i in (from + 1..=to).rev() {
            if back[i - from] {
                for &p in &self.nodes[i].inputs {
                    if p >= from {
                        back[p - from] = true;
                    }
                }
            }
        }
        (from + 1..to)
            .filter(|&i| reach[i - from] && back[i - from])
            .collect()
    }
}
