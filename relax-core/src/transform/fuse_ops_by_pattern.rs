//! `FuseOpsByPattern`: groups the bindings that named patterns match into
//! composite functions (TVM's `relax.transform.FuseOpsByPattern`).
//!
//! 1. For each dataflow block, the patterns are tried in the order given,
//!    each at every binding from the last to the first (so the largest
//!    match rooted at a late binding wins). A match claims the bindings its
//!    *call* patterns matched (wildcards and variable patterns are the
//!    group's inputs); a match overlapping bindings already claimed is
//!    skipped, and an optional check may refuse a match.
//! 2. Each group becomes a private function with
//!    `{"Composite": <pattern name>, "Primitive": 1}` (and, with
//!    `annotate_codegen`, `"Codegen"`: the pattern name up to its first
//!    `.`, as in `dnnl.conv2d_relu`), named and called exactly as
//!    `FuseOps` names and calls its groups (`fused_matmul_add`,
//!    `fused_matmul_add1`, …; see `fuse_ops.rs`).

use super::fuse_ops::{make_group, outline_groups, with_call_sites, PRIMITIVE};
use super::Pass;
use crate::analysis::indexed_forward_graph::IndexedForwardGraph;
use crate::dpl::{Bindings, Match, Pattern, PatternKind};
use crate::ir::expr::BindingBlock;
use crate::ir::{AttrValue, IRModule};
use relax_runtime::Error;
use std::collections::HashSet;
use std::sync::Arc;

/// A check a match must pass (TVM's `check` of a `FusionPattern`).
pub type FusionCheck = Arc<dyn Fn(&Match, &Bindings) -> bool + Send + Sync>;

/// A named pattern to fuse by.
#[derive(Clone)]
pub struct FusionPattern {
    /// The composite's name (`dnnl.conv2d_relu`).
    pub name: String,
    /// What to match.
    pub pattern: Pattern,
    /// An extra condition on a match.
    pub check: Option<FusionCheck>,
}

impl FusionPattern {
    /// `pattern` under `name`, without a check.
    pub fn new(name: &str, pattern: Pattern) -> Self {
        FusionPattern {
            name: name.to_string(),
            pattern,
            check: None,
        }
    }
    /// This pattern with `check`.
    pub fn with_check(
        mut self,
        check: impl Fn(&Match, &Bindings) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.check = Some(Arc::new(check));
        self
    }
}

/// Fusion by patterns. See the module docs.
#[derive(Clone, Default)]
pub struct FuseOpsByPattern {
    /// The patterns, tried in order.
    pub patterns: Vec<FusionPattern>,
    /// Whether composites also get `"Codegen"`.
    pub annotate_codegen: bool,
}

impl FuseOpsByPattern {
    /// Fusion by `patterns`.
    pub fn new(patterns: Vec<FusionPattern>) -> Self {
        FuseOpsByPattern {
            patterns,
            annotate_codegen: false,
        }
    }
}

impl Pass for FuseOpsByPattern {
    fn name(&self) -> &str {
        "FuseOpsByPattern"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        Ok(outline_groups(&module, |func, block, taken| {
            self.fuse_block(block, &Bindings::of_function(func), taken)
        }))
    }
}

/// The call patterns in `p` (the parts that claim bindings).
fn call_patterns(p: &Pattern, out: &mut Vec<Pattern>) {
    match p.kind() {
        PatternKind::Call { op, args, .. } => {
            out.push(p.clone());
            call_patterns(op, out);
            args.iter().for_each(|a| call_patterns(a, out));
        }
        PatternKind::Tuple { fields, .. } => fields.iter().for_each(|f| call_patterns(f, out)),
        PatternKind::TupleGetItem { tuple, .. } => {
            out.push(p.clone());
            call_patterns(tuple, out)
        }
        PatternKind::StructInfo(inner, _)
        | PatternKind::DataType(inner, _)
        | PatternKind::ShapeOf(inner, _)
        | PatternKind::Attr(inner, _)
        | PatternKind::SameShapeAs(inner, _)
        | PatternKind::Named(_, inner) => call_patterns(inner, out),
        PatternKind::Or(a, b) | PatternKind::And(a, b) => {
            call_patterns(a, out);
            call_patterns(b, out);
        }
        _ => {}
    }
}

impl FuseOpsByPattern {
    fn fuse_block(
        &self,
        block: &BindingBlock,
        bindings: &Bindings,
        taken: &mut HashSet<String>,
    ) -> (
        BindingBlock,
        Vec<(crate::ir::expr::GlobalVar, crate::ir::Function)>,
    ) {
        let graph = IndexedForwardGraph::from_block(block);
        let first_binding = graph.len() - block.bindings.len();
        let mut claimed = vec![false; graph.len()];
        let mut groups: Vec<(usize, Vec<usize>, &FusionPattern)> = Vec::new();
        for fp in &self.patterns {
            let mut calls = Vec::new();
            call_patterns(&fp.pattern, &mut calls);
            for root in (first_binding..graph.len()).rev() {
                // A group is rooted at a computation, not at a variable
                // bound to another (whose value the pattern would see
                // through the binding).
                let trivial = graph.nodes[root]
                    .value
                    .as_ref()
                    .is_none_or(|v| v.as_var().is_some());
                if claimed[root] || trivial {
                    continue;
                }
                let var = graph.nodes[root].var.to_expr();
                let Some(m) = fp.pattern.extract(&var, bindings) else {
                    continue;
                };
                if fp.check.as_ref().is_some_and(|check| !check(&m, bindings)) {
                    continue;
                }
                let mut members: Vec<usize> = calls
                    .iter()
                    .filter_map(|c| m.get(c))
                    .filter_map(|e| e.as_var())
                    .filter_map(|v| graph.node_of(v))
                    .filter(|&i| i >= first_binding)
                    .chain([root])
                    .collect();
                members.sort_unstable();
                members.dedup();
                if members.iter().any(|&i| claimed[i]) || *members.last().unwrap_or(&root) != root {
                    continue;
                }
                for &i in &members {
                    claimed[i] = true;
                }
                groups.push((root, members, fp));
            }
        }
        groups.sort_by_key(|(root, _, _)| *root);
        let mut replaced: std::collections::HashMap<usize, Vec<crate::ir::expr::Binding>> =
            std::collections::HashMap::new();
        let mut made = Vec::new();
        for (root, members, fp) in groups {
            let mut attrs = vec![
                ("Composite", AttrValue::from(fp.name.as_str())),
                (PRIMITIVE, AttrValue::Int(1)),
            ];
            if self.annotate_codegen {
                let backend = fp.name.split('.').next().unwrap_or(&fp.name).to_string();
                attrs.push(("Codegen", AttrValue::from(backend.as_str())));
            }
            let Some((gv, func, site)) =
                make_group(&graph, &members, block, first_binding, &attrs, false, taken)
            else {
                continue;
            };
            for &m in &members {
                replaced.insert(m - first_binding, vec![]);
            }
            replaced.insert(root - first_binding, site);
            made.push((gv, func));
        }
        (with_call_sites(block, replaced), made)
    }
}

#[cfg(test)]
mod tests;
