//! Basic-block normal form (BBNF): the middle ground between graph form and
//! A-normal form proposed in TVM's "Basic Block Normal Form" RFC.
//!
//! In *graph form* a non-leaf expression node can be referenced from several
//! places; our `Arc` nodes allow exactly that (identity is [`Expr::ptr_eq`] /
//! [`Expr::node_id`]). Within straight-line code this is harmless and makes
//! pattern matching easy, but once scopes enter (an `If` branch, a closure) a
//! shared node no longer says *where* it is evaluated: `add(x, y)` used by an
//! `If`'s condition and by both of its branches could run once before the `If`
//! or once per branch. BBNF removes that ambiguity and keeps graph form
//! everywhere else:
//!
//! * **D0** A *block* is a group of expressions implied by the scope structure.
//! * **D1** Each graph node belongs to a single block.
//! * **D2** A value used in several blocks is referred to through a `Var`
//!   defined in a block.
//!
//! # Blocks in Relax
//!
//! 1. Each `SeqExpr` (a function body, an `If` branch, a nested function's
//!    body, or a `SeqExpr` in graph form anywhere else) is divided into its
//!    `BindingBlock`s; each is a block. The `SeqExpr`'s `body` belongs to its
//!    last block, or to the `SeqExpr` itself when it has no blocks.
//! 2. Every operand of a node is evaluated in the node's block: the `cond` of
//!    an `If` belongs to the block of the `If` (the block of the binding whose
//!    value it is), as do a call's callee and arguments and a tuple's fields.
//! 3. The branches of an `If` and the body of a nested `Function` are scopes of
//!    their own, different from the block holding the `If` or `Function`. The
//!    branch (or body) expression itself sits in a block of that scope; when it
//!    is a `SeqExpr`, its contents are in the `SeqExpr`'s own blocks.
//! 4. Blocks are identified by node identity (the owning `SeqExpr`, `If` or
//!    `Function` node and the position in it), so a scope reached along two
//!    paths of the DAG is still one block.
//!
//! # What is checked
//!
//! Non-leaf nodes (`Call`, `Tuple`, `TupleGetItem`, `If`, `SeqExpr`,
//! `Function`) are the graph nodes of D1. `Var`, `DataflowVar`, `GlobalVar`,
//! `Op` and `ExternFunc` are references, not computations. Following the
//! conclusion of the RFC's discussion, a `Constant` is treated like a
//! variable, so the literal `0` shared by two branches is fine; the other
//! immutable literals, `ShapeExpr`, `PrimValue`, `StringImm` and
//! `DataTypeImm`, are treated the same way for the same reason: referring to
//! a literal computes nothing, so it does not matter which block does it.
//!
//! The analysis (`Placement`, shared with the converter) walks the DAG once,
//! recording for each node where it occurs, and then, parents before
//! children, decides where each node is evaluated: a node used in one block
//! stays there; a node used in several blocks is placed in the innermost
//! block enclosing all of its uses (the earliest of several sibling blocks of
//! one `SeqExpr`, whose variables are visible in the later ones). A node's
//! operands are then used wherever the node is placed. The checker reports
//! exactly the nodes used in more than one block under this placement, and
//! the converter ([`crate::transform::ToBasicBlockNormalForm`]) binds exactly
//! those. Judging operands by where their user is placed reports a shared
//! subgraph once, at its root: when `mul(add(x, y), y)` is shared by two
//! branches, only the `mul` is reported, because binding it fixes the `add`
//! too. Some node is still reported whenever any node is reachable from two
//! blocks: the first such node in topological order has all its users in
//! single blocks.

use crate::ir::{Expr, ExprKind, Function, IRModule};
use relax_runtime::Diagnostic;
use std::collections::HashMap;

/// The diagnostic code of a basic-block normal form violation.
pub const NOT_BASIC_BLOCK_NORMAL_FORM: &str = "not-basic-block-normal-form";

/// Checks that `func` is in basic-block normal form: no non-leaf node is used
/// in more than one block. Each violating node is reported once.
pub fn check_basic_block_normal_form(func: &Function) -> Result<(), Vec<Diagnostic>> {
    let name = match func.global_symbol() {
        Some(symbol) => format!("`{symbol}`"),
        None => "the function".to_string(),
    };
    check_named(&name, func)
}

/// Checks every Relax function of `module` (see
/// [`check_basic_block_normal_form`]); diagnostics name the function.
pub fn is_basic_block_normal_form(module: &IRModule) -> Result<(), Vec<Diagnostic>> {
    let mut diagnostics = Vec::new();
    for (gv, func) in module.functions() {
        if let Some(func) = func.as_relax() {
            if let Err(ds) = check_named(&format!("`{}`", gv.name_hint()), func) {
                diagnostics.extend(ds);
            }
        }
    }
    if diagnostics.is_empty() {
        Ok(())
    } else {
        Err(diagnostics)
    }
}

fn check_named(name: &str, func: &Function) -> Result<(), Vec<Diagnostic>> {
    let placement = Placement::of_function(func);
    let diagnostics: Vec<Diagnostic> = placement
        .shared_nodes()
        .map(|node| {
            let info = &placement.nodes[node];
            let blocks: Vec<String> = info
                .use_blocks
                .iter()
                .map(|&b| placement.block_label(b, name))
                .collect();
            let what = placement.describe(node);
            Diagnostic::new(
                NOT_BASIC_BLOCK_NORMAL_FORM,
                format!(
                    "in {name}, {what} is used in {} blocks: {}",
                    blocks.len(),
                    blocks.join("; ")
                ),
            )
            .with_note(
                "a value used in several blocks must be bound to a variable defined in a \
                 block enclosing all of its uses (ToBasicBlockNormalForm does this)",
            )
        })
        .collect();
    if diagnostics.is_empty() {
        Ok(())
    } else {
        Err(diagnostics)
    }
}

/// A block, named by the node that owns it (node indices of [`Placement`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum BlockKey {
    /// The body position of the analysed function: its body expression, and
    /// nothing else when that body is a `SeqExpr`.
    Top,
    /// The scope opened by `owner` at `slot`: an `If`'s true (1) or false (2)
    /// branch, a nested `Function`'s body (0). Holds the branch or body
    /// expression itself.
    Region {
        /// The `If` or `Function` node.
        owner: usize,
        /// Which of its scopes.
        slot: u8,
    },
    /// Binding block `index` of the `SeqExpr` node `seq`; index 0 of a
    /// `SeqExpr` without blocks is the `SeqExpr` itself (its body).
    Seq {
        /// The `SeqExpr` node.
        seq: usize,
        /// The block index.
        index: usize,
    },
}

/// One step of a placement: a block and the *element* of it (a binding index,
/// or the number of bindings for the `SeqExpr` body; 0 in `Top` and regions).
pub(crate) type Step = (BlockKey, usize);

/// How a node is referenced.
#[derive(Clone, Copy, Debug)]
enum Occurrence {
    /// As an operand of node `parent`: evaluated wherever the parent is.
    Operand(usize),
    /// Directly as element `elem` of `block`, a block of scope `owner`
    /// (`None` for [`BlockKey::Top`]).
    Direct {
        block: BlockKey,
        elem: usize,
        owner: Option<usize>,
    },
}

/// What the analysis knows about one non-leaf node.
pub(crate) struct NodeInfo {
    /// The node.
    pub expr: Expr,
    /// Its position in a post-order walk: operands come before their users.
    pub post: usize,
    /// Where it is evaluated: the chain of blocks from the function body down
    /// to its block, each with the element that leads further down. For a
    /// shared node, the element is the first in its block using it.
    pub chain: Vec<Step>,
    /// The distinct blocks it is used in, in the order blocks are first met.
    pub use_blocks: Vec<BlockKey>,
    /// The variable name, when the node is the value of a binding (for messages).
    bound_to: Option<String>,
    occurrences: Vec<Occurrence>,
}

impl NodeInfo {
    /// Whether the node is used in more than one block (a D1 violation).
    pub fn is_shared(&self) -> bool {
        self.use_blocks.len() > 1
    }
    /// The block the node is evaluated in (where a shared node gets bound).
    pub fn block(&self) -> BlockKey {
        self.chain.last().map_or(BlockKey::Top, |s| s.0)
    }
    /// The element of [`NodeInfo::block`] before which it is evaluated.
    pub fn elem(&self) -> usize {
        self.chain.last().map_or(0, |s| s.1)
    }
}

/// Where every non-leaf node of a function is evaluated. See the module docs.
pub(crate) struct Placement {
    /// The non-leaf nodes, in the order first met (pre-order).
    pub nodes: Vec<NodeInfo>,
    index: HashMap<usize, usize>,
    block_order: HashMap<BlockKey, usize>,
    next_post: usize,
}

impl Placement {
    /// Analyses `func`.
    pub fn of_function(func: &Function) -> Placement {
        let mut p = Placement {
            nodes: Vec::new(),
            index: HashMap::new(),
            block_order: HashMap::new(),
            next_post: 0,
        };
        p.direct(&func.body, BlockKey::Top, 0, None, None);
        p.place();
        p
    }

    /// The index of `expr` in [`Placement::nodes`], if it is a non-leaf node
    /// of the analysed function.
    pub fn index_of(&self, expr: &Expr) -> Option<usize> {
        self.index.get(&expr.node_id()).copied()
    }

    /// The nodes used in more than one block, in the order first met.
    pub fn shared_nodes(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.nodes.len()).filter(|&i| self.nodes[i].is_shared())
    }

    /// Records `expr` as element `elem` of `block` and walks into it.
    fn direct(
        &mut self,
        expr: &Expr,
        block: BlockKey,
        elem: usize,
        owner: Option<usize>,
        bound_to: Option<&str>,
    ) {
        let order = self.block_order.len();
        self.block_order.entry(block).or_insert(order);
        if let Some(i) = self.visit(expr) {
            let info = &mut self.nodes[i];
            info.occurrences
                .push(Occurrence::Direct { block, elem, owner });
            if info.bound_to.is_none() {
                info.bound_to = bound_to.map(str::to_string);
            }
        }
    }

    /// Records `expr` as an operand of node `parent` and walks into it.
    fn operand(&mut self, parent: usize, expr: &Expr) {
        if let Some(i) = self.visit(expr) {
            self.nodes[i].occurrences.push(Occurrence::Operand(parent));
        }
    }

    /// Walks `expr` once per node; returns its index when it is a non-leaf.
    fn visit(&mut self, expr: &Expr) -> Option<usize> {
        if !is_graph_node(expr) {
            return None;
        }
        if let Some(&i) = self.index.get(&expr.node_id()) {
            return Some(i);
        }
        let i = self.nodes.len();
        self.index.insert(expr.node_id(), i);
        self.nodes.push(NodeInfo {
            expr: expr.clone(),
            post: 0,
            chain: Vec::new(),
            use_blocks: Vec::new(),
            bound_to: None,
            occurrences: Vec::new(),
        });
        match expr.kind() {
            ExprKind::Call(call) => {
                self.operand(i, &call.op);
                for arg in &call.args {
                    self.operand(i, arg);
                }
            }
            ExprKind::Tuple(fields) => {
                for field in fields {
                    self.operand(i, field);
                }
            }
            ExprKind::TupleGetItem(tuple, _) => self.operand(i, tuple),
            ExprKind::If(if_) => {
                self.operand(i, &if_.cond);
                for (slot, branch) in [(1, &if_.true_branch), (2, &if_.false_branch)] {
                    let block = BlockKey::Region { owner: i, slot };
                    self.direct(branch, block, 0, Some(i), None);
                }
            }
            ExprKind::Function(func) => {
                let block = BlockKey::Region { owner: i, slot: 0 };
                self.direct(&func.body, block, 0, Some(i), None);
            }
            ExprKind::SeqExpr(seq) => {
                for (index, b) in seq.blocks.iter().enumerate() {
                    let block = BlockKey::Seq { seq: i, index };
                    for (elem, binding) in b.bindings.iter().enumerate() {
                        let name = binding.var().name_hint();
                        self.direct(binding.value(), block, elem, Some(i), Some(name));
                    }
                }
                let (index, elem) = match seq.blocks.last() {
                    Some(last) => (seq.blocks.len() - 1, last.bindings.len()),
                    None => (0, 0),
                };
                self.direct(
                    &seq.body,
                    BlockKey::Seq { seq: i, index },
                    elem,
                    Some(i),
                    None,
                );
            }
            _ => {}
        }
        self.nodes[i].post = self.next_post;
        self.next_post += 1;
        Some(i)
    }

    /// Decides every node's placement, users before operands (reverse
    /// post-order), so that an operand's uses are known when it is placed.
    fn place(&mut self) {
        let mut order: Vec<usize> = (0..self.nodes.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(self.nodes[i].post));
        for i in order {
            let chains: Vec<Vec<Step>> = self.nodes[i]
                .occurrences
                .iter()
                .map(|occ| match *occ {
                    Occurrence::Operand(parent) => self.nodes[parent].chain.clone(),
                    Occurrence::Direct { block, elem, owner } => {
                        let mut chain =
                            owner.map_or_else(Vec::new, |o| self.nodes[o].chain.clone());
                        chain.push((block, elem));
                        chain
                    }
                })
                .collect();
            let mut use_blocks: Vec<BlockKey> = Vec::new();
            for chain in &chains {
                if let Some(&(block, _)) = chain.last() {
                    if !use_blocks.contains(&block) {
                        use_blocks.push(block);
                    }
                }
            }
            use_blocks.sort_by_key(|b| self.block_order.get(b).copied().unwrap_or(usize::MAX));
            let info = &mut self.nodes[i];
            info.chain = enclosing_step(&chains);
            info.use_blocks = use_blocks;
        }
    }

    /// The `SeqExpr` of node `seq`, if it is one.
    fn seq_expr(&self, seq: usize) -> Option<&crate::ir::SeqExpr> {
        self.nodes.get(seq).and_then(|n| n.expr.as_seq())
    }

    /// Whether `block` is a `DataflowBlock`.
    pub fn is_dataflow_block(&self, block: BlockKey) -> bool {
        match block {
            BlockKey::Seq { seq, index } => self
                .seq_expr(seq)
                .and_then(|s| s.blocks.get(index))
                .is_some_and(|b| b.is_dataflow),
            _ => false,
        }
    }

    /// A short description of node `node`, for messages.
    pub fn describe(&self, node: usize) -> String {
        let info = &self.nodes[node];
        let what = match info.expr.kind() {
            ExprKind::Call(call) => match call.op.kind() {
                ExprKind::Op(op) => format!("the call to {}", op.name()),
                ExprKind::GlobalVar(gv) => format!("the call to `{}`", gv.name_hint()),
                ExprKind::ExternFunc(symbol) => format!("the call to extern `{symbol}`"),
                ExprKind::Var(v) => format!("the call of `{}`", v.name_hint()),
                _ => "the call".to_string(),
            },
            ExprKind::Tuple(fields) => format!("the tuple of {} fields", fields.len()),
            ExprKind::TupleGetItem(_, index) => format!("the tuple item {index}"),
            ExprKind::If(_) => "the If".to_string(),
            ExprKind::SeqExpr(_) => "the SeqExpr".to_string(),
            ExprKind::Function(_) => "the function".to_string(),
            _ => "the expression".to_string(),
        };
        match &info.bound_to {
            Some(name) => format!("{what} bound to `{name}`"),
            None => what,
        }
    }

    /// A readable name of `block` in the function called `func_name`, e.g.
    /// "block 0 of the true branch of the If bound to `r` in block 0 of the
    /// body of `main`".
    pub fn block_label(&self, block: BlockKey, func_name: &str) -> String {
        match block {
            BlockKey::Top => format!("the body of {func_name}"),
            BlockKey::Region { owner, slot } => {
                let scope = match slot {
                    1 => "the true branch",
                    2 => "the false branch",
                    _ => "the body",
                };
                let owner_block = self.block_label(self.nodes[owner].block(), func_name);
                format!("{scope} of {} in {owner_block}", self.describe(owner))
            }
            BlockKey::Seq { seq, index } => {
                let info = &self.nodes[seq];
                let is_scope_root = info.occurrences.iter().any(|occ| {
                    matches!(
                        occ,
                        Occurrence::Direct {
                            block: BlockKey::Top | BlockKey::Region { .. },
                            ..
                        }
                    )
                });
                let around = self.block_label(info.block(), func_name);
                let scope = if is_scope_root {
                    around
                } else {
                    format!("{} in {around}", self.describe(seq))
                };
                match self.seq_expr(seq).map(|s| s.blocks.len()) {
                    Some(n) if n > 0 => {
                        let kind = if self.is_dataflow_block(block) {
                            "dataflow block"
                        } else {
                            "block"
                        };
                        format!("{kind} {index} of {scope}")
                    }
                    _ => scope,
                }
            }
        }
    }
}

/// Whether `expr` is a graph node in the sense of D1 (see the module docs).
fn is_graph_node(expr: &Expr) -> bool {
    matches!(
        expr.kind(),
        ExprKind::Call(_)
            | ExprKind::Tuple(_)
            | ExprKind::TupleGetItem(..)
            | ExprKind::If(_)
            | ExprKind::SeqExpr(_)
            | ExprKind::Function(_)
    )
}

/// The innermost step enclosing all `chains` (the uses of one node).
///
/// Chains agree on a prefix; where they first disagree:
/// * in the element of one block: that block, at the first element;
/// * in the block, all blocks of one `SeqExpr`: the earliest of them (its
///   variables are visible in the later ones), at its first element used;
/// * otherwise (different scopes, or one chain ends): the last common step.
fn enclosing_step(chains: &[Vec<Step>]) -> Vec<Step> {
    let Some(first) = chains.first() else {
        return Vec::new();
    };
    let mut depth = 0;
    loop {
        let at: Option<Vec<Step>> = chains.iter().map(|c| c.get(depth).copied()).collect();
        let Some(at) = at else {
            return first[..depth].to_vec();
        };
        let (key, elem) = at[0];
        if at.iter().all(|&(k, _)| k == key) {
            if at.iter().all(|&(_, e)| e == elem) {
                depth += 1;
                continue;
            }
            let min = at.iter().map(|&(_, e)| e).min().unwrap_or(elem);
            let mut chain = first[..depth].to_vec();
            chain.push((key, min));
            return chain;
        }
        if let BlockKey::Seq { seq, .. } = key {
            let siblings: Option<Vec<(usize, usize)>> = at
                .iter()
                .map(|&(k, e)| match k {
                    BlockKey::Seq { seq: s, index } if s == seq => Some((index, e)),
                    _ => None,
                })
                .collect();
            if let Some(siblings) = siblings {
                // Lexicographic minimum: the earliest block, then its first element.
                let (index, elem) = siblings.into_iter().min().unwrap_or((0, 0));
                let mut chain = first[..depth].to_vec();
                chain.push((BlockKey::Seq { seq, index }, elem));
                return chain;
            }
        }
        return first[..depth].to_vec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEQ0: BlockKey = BlockKey::Seq { seq: 0, index: 0 };
    const SEQ1: BlockKey = BlockKey::Seq { seq: 0, index: 1 };
    const THEN: BlockKey = BlockKey::Region { owner: 5, slot: 1 };
    const ELSE: BlockKey = BlockKey::Region { owner: 5, slot: 2 };

    #[test]
    fn uses_in_one_block_meet_at_the_first_element() {
        let chains = vec![
            vec![(BlockKey::Top, 0), (SEQ1, 4)],
            vec![(BlockKey::Top, 0), (SEQ1, 2)],
        ];
        assert_eq!(enclosing_step(&chains), vec![(BlockKey::Top, 0), (SEQ1, 2)]);
    }

    #[test]
    fn uses_in_sibling_blocks_meet_in_the_earliest() {
        let chains = vec![
            vec![(BlockKey::Top, 0), (SEQ1, 0)],
            vec![(BlockKey::Top, 0), (SEQ0, 3), (THEN, 0)],
            vec![(BlockKey::Top, 0), (SEQ0, 5)],
        ];
        assert_eq!(enclosing_step(&chains), vec![(BlockKey::Top, 0), (SEQ0, 3)]);
    }

    #[test]
    fn uses_in_different_scopes_meet_at_the_common_step() {
        let inner = BlockKey::Seq { seq: 7, index: 0 };
        let chains = vec![
            vec![(BlockKey::Top, 0), (SEQ0, 2), (THEN, 0), (inner, 1)],
            vec![(BlockKey::Top, 0), (SEQ0, 2), (ELSE, 0)],
        ];
        assert_eq!(enclosing_step(&chains), vec![(BlockKey::Top, 0), (SEQ0, 2)]);
        // A use that stops at the common step (an If's condition) is the same.
        let chains = vec![chains[0].clone(), vec![(BlockKey::Top, 0), (SEQ0, 2)]];
        assert_eq!(enclosing_step(&chains), vec![(BlockKey::Top, 0), (SEQ0, 2)]);
    }

    #[test]
    fn a_function_without_graph_nodes_is_in_the_form() {
        let x = crate::ir::Var::new("x", None);
        let func = Function::new(
            vec![x.clone()],
            Expr::var(&x),
            crate::ir::StructInfo::object(),
        );
        assert_eq!(check_basic_block_normal_form(&func), Ok(()));
        assert!(Placement::of_function(&func).nodes.is_empty());
    }
}
