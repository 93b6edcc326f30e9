//! `TopologicalSort`: reorder the bindings of each dataflow block of each
//! function body (TVM's `relax.transform.TopologicalSort(order,
//! direction)`; blocks inside `If` branches are left as they are).
//!
//! A binding depends on the bindings of the same block whose variables it
//! uses; everything from outside the block (parameters, earlier blocks) is
//! an *input*. Every order below is a topological order of the block (a
//! binding comes after all it uses), deterministic, and keeps every
//! binding, used or not.
//!
//! - **Depth-first from the inputs**: a search from the inputs (the
//!   function's parameters in order, then other outside variables in order
//!   of first use, then bindings that use nothing of the block, in block
//!   order). Leaving a node, its users are visited in block order; a
//!   binding is placed when the last of its dependencies and inputs is
//!   reached, so each chain is finished before the next starts.
//! - **Depth-first from the outputs**: the mirror image. The search starts
//!   from the block's outputs, in the order the rest of the function first
//!   uses them, after the bindings nothing uses (in block order); it
//!   walks to the dependencies and the order found is reversed.
//! - **Breadth-first from the inputs**: by level (a binding's level is one
//!   more than its deepest dependency's), block order within a level.
//! - **Breadth-first from the outputs**: by height (one more than its
//!   highest user's), highest first, block order within a height.

use super::Pass;
use crate::analysis::vars::free_vars;
use crate::ir::{Binding, BindingBlock, Expr, ExprKind, Function, IRModule, Var};
use relax_runtime::Error;
use std::collections::HashMap;

/// The search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortOrder {
    /// TVM's `"depth-first"`.
    DepthFirst,
    /// TVM's `"breadth-first"`.
    BreadthFirst,
}

/// Where the search starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortDirection {
    /// TVM's `"from-inputs"`.
    FromInputs,
    /// TVM's `"from-outputs"`.
    FromOutputs,
}

/// The pass. See the module docs.
#[derive(Clone, Copy, Debug)]
pub struct TopologicalSort {
    order: SortOrder,
    direction: SortDirection,
}

impl Default for TopologicalSort {
    /// TVM's default: depth-first from the inputs.
    fn default() -> Self {
        TopologicalSort::new(SortOrder::DepthFirst, SortDirection::FromInputs)
    }
}

impl TopologicalSort {
    /// The pass with TVM's `order` and `direction`.
    pub fn new(order: SortOrder, direction: SortDirection) -> Self {
        TopologicalSort { order, direction }
    }
}

impl Pass for TopologicalSort {
    fn name(&self) -> &str {
        "TopologicalSort"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        let mut out = module.clone();
        for (gv, f) in module.functions() {
            let Some(func) = f.as_relax() else { continue };
            let body = self.expr(&func.body, &func.params);
            out.add(
                gv.clone(),
                Function {
                    body,
                    ..func.clone()
                },
            );
        }
        Ok(out)
    }
}

impl TopologicalSort {
    fn expr(&self, e: &Expr, params: &[Var]) -> Expr {
        let ExprKind::SeqExpr(seq) = e.kind() else {
            return e.clone();
        };
        let mut blocks = Vec::with_capacity(seq.blocks.len());
        for (k, block) in seq.blocks.iter().enumerate() {
            if !block.is_dataflow {
                blocks.push(block.clone());
                continue;
            }
            // What the rest of the function reads, in order.
            let mut later: Vec<Var> = Vec::new();
            for b in seq.blocks[k + 1..].iter().flat_map(|b| &b.bindings) {
                later.extend(free_vars(b.value()));
            }
            later.extend(free_vars(&seq.body));
            let order = self.sort(&block.bindings, params, &later);
            let bindings = order
                .into_iter()
                .map(|i| block.bindings[i].clone())
                .collect();
            blocks.push(BindingBlock::dataflow(bindings));
        }
        // Keeps the body's StructInfo: the same bindings, reordered.
        Expr::seq(blocks, seq.body.clone()).into_with_struct_info(
            e.struct_info()
                .cloned()
                .unwrap_or_else(crate::ir::StructInfo::object),
        )
    }

    /// The new order of `bindings`, as indices.
    fn sort(&self, bindings: &[Binding], params: &[Var], later: &[Var]) -> Vec<usize> {
        let graph = Graph::of(bindings);
        match (self.order, self.direction) {
            (SortOrder::DepthFirst, SortDirection::FromInputs) => graph.depth_first(params),
            (SortOrder::DepthFirst, SortDirection::FromOutputs) => {
                graph.depth_first_from_outputs(later)
            }
            (SortOrder::BreadthFirst, SortDirection::FromInputs) => graph.by_level(false),
            (SortOrder::BreadthFirst, SortDirection::FromOutputs) => graph.by_level(true),
        }
    }
}

/// The dependencies inside one block.
struct Graph {
    vars: Vec<Var>,
    /// For each binding, the bindings it uses (in order of use, once).
    deps: Vec<Vec<usize>>,
    /// For each binding, the bindings that use it (in block order).
    users: Vec<Vec<usize>>,
    /// For each binding, the outside variables it uses (in order of use).
    inputs: Vec<Vec<Var>>,
}

impl Graph {
    fn of(bindings: &[Binding]) -> Graph {
        let index: HashMap<&Var, usize> = bindings
            .iter()
            .enumerate()
            .map(|(i, b)| (b.var(), i))
            .collect();
        let n = bindings.len();
        let mut deps = vec![Vec::new(); n];
        let mut users = vec![Vec::new(); n];
        let mut inputs = vec![Vec::new(); n];
        for (i, b) in bindings.iter().enumerate() {
            for v in free_vars(b.value()) {
                match index.get(&v) {
                    Some(&j) if j < i => {
                        if !deps[i].contains(&j) {
                            deps[i].push(j);
                            users[j].push(i);
                        }
                    }
                    _ => {
                        if !inputs[i].contains(&v) {
                            inputs[i].push(v);
                        }
                    }
                }
            }
        }
        Graph {
            vars: bindings.iter().map(|b| b.var().clone()).collect(),
            deps,
            users,
            inputs,
        }
    }

    fn len(&self) -> usize {
        self.vars.len()
    }

    /// Depth-first from the inputs (see the module docs).
    fn depth_first(&self, params: &[Var]) -> Vec<usize> {
        // The inputs, in order: parameters, then other outside variables.
        let mut roots: Vec<Var> = params.to_vec();
        for ins in &self.inputs {
            for v in ins {
                if !roots.contains(v) {
                    roots.push(v.clone());
                }
            }
        }
        let input_users = |v: &Var| -> Vec<usize> {
            (0..self.len())
                .filter(|&i| self.inputs[i].contains(v))
                .collect()
        };
        enum Node {
            Input(Var),
            Binding(usize),
        }
        let mut stack: Vec<Node> = Vec::new();
        // Bindings that use nothing of the block or outside come after the
        // inputs (pushed first: the stack's bottom).
        for i in (0..self.len()).rev() {
            if self.deps[i].is_empty() && self.inputs[i].is_empty() {
                stack.push(Node::Binding(i));
            }
        }
        for v in roots.into_iter().rev() {
            stack.push(Node::Input(v));
        }
        let mut placed = vec![false; self.len()];
        let mut order = Vec::with_capacity(self.len());
        let mut seen_inputs: Vec<Var> = Vec::new();
        while let Some(node) = stack.pop() {
            let users = match node {
                Node::Input(v) => {
                    if seen_inputs.contains(&v) {
                        continue;
                    }
                    seen_inputs.push(v.clone());
                    input_users(&v)
                }
                Node::Binding(i) => {
                    let ready = self.deps[i].iter().all(|&d| placed[d])
                        && self.inputs[i].iter().all(|v| seen_inputs.contains(v));
                    if placed[i] || !ready {
                        continue;
                    }
                    placed[i] = true;
                    order.push(i);
                    self.users[i].clone()
                }
            };
            for &u in users.iter().rev() {
                stack.push(Node::Binding(u));
            }
        }
        self.complete(order)
    }

    /// Depth-first from the outputs (see the module docs).
    fn depth_first_from_outputs(&self, later: &[Var]) -> Vec<usize> {
        let mut roots: Vec<usize> = (0..self.len())
            .filter(|&i| self.users[i].is_empty() && !later.contains(&self.vars[i]))
            .collect();
        let mut outputs: Vec<usize> = Vec::new();
        for v in later {
            if let Some(i) = self.vars.iter().position(|x| x == v) {
                if !outputs.contains(&i) {
                    outputs.push(i);
                }
            }
        }
        roots.extend(outputs);
        let mut stack: Vec<usize> = roots;
        let mut placed = vec![false; self.len()];
        let mut reversed = Vec::with_capacity(self.len());
        while let Some(i) = stack.pop() {
            if placed[i] || self.users[i].iter().any(|&u| !placed[u]) {
                continue;
            }
            placed[i] = true;
            reversed.push(i);
            stack.extend(self.deps[i].iter().copied());
        }
        reversed.reverse();
        self.complete(reversed)
    }

    /// Breadth-first: by level from the inputs, or by height from the
    /// outputs (highest first).
    fn by_level(&self, from_outputs: bool) -> Vec<usize> {
        let n = self.len();
        let mut level = vec![0usize; n];
        if from_outputs {
            for i in (0..n).rev() {
                level[i] = self.users[i]
                    .iter()
                    .map(|&u| level[u] + 1)
                    .max()
                    .unwrap_or(0);
            }
        } else {
            for i in 0..n {
                level[i] = self.deps[i]
                    .iter()
                    .map(|&d| level[d] + 1)
                    .max()
                    .unwrap_or(0);
            }
        }
        let mut order: Vec<usize> = (0..n).collect();
        if from_outputs {
            order.sort_by_key(|&i| std::cmp::Reverse(level[i]));
        } else {
            order.sort_by_key(|&i| level[i]);
        }
        order
    }

    /// `order` if it places every binding, else the block's own order
    /// (a safety net: every binding is reachable from the roots).
    fn complete(&self, order: Vec<usize>) -> Vec<usize> {
        if order.len() == self.len() {
            order
        } else {
            (0..self.len()).collect()
        }
    }
}

#[cfg(test)]
mod tests;
