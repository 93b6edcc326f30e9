//! Graph patterns: several patterns and the use edges between them,
//! matched one to one against the bindings of a dataflow block (TVM's
//! `PatternContext` and `match_dataflow`).
//!
//! 1. Each pattern of the context is matched to a *distinct* binding of the
//!    block (the binding's variable, looking through to its value as
//!    expression patterns do).
//! 2. `used_by(a, b)` (Python's `a ^ b`): `b`'s value reads `a`'s variable.
//!    `only_used_by(a, b)` (`a >> b`): moreover nothing else reads it and it
//!    is not visible after the block. `fork_to(a, [b, c])`: `a` is used by
//!    each of them.
//! 3. Because the mapping is one to one, a diamond (`a` feeding `b` and `c`,
//!    both feeding `d`) and two parallel chains (`a1 → b`, `a2 → c`) are told
//!    apart: `a ^ b`, `a ^ c` needs one binding feeding both.
//!
//! The search assigns the patterns in the order they were added, trying
//! the block's bindings for each and checking every edge whose ends are
//! both assigned, so a context of bounded size is matched in time
//! polynomial in the block length.

use super::bindings::Bindings;
use super::matcher::Matcher;
use super::pattern::Pattern;
use crate::analysis::vars::free_vars;
use crate::ir::expr::{BindingBlock, Var};
use std::collections::HashMap;

/// How one pattern's binding is used by another's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UseKind {
    /// `a ^ b`: `b` reads `a`.
    UsedBy,
    /// `a >> b`: only `b` reads `a`.
    OnlyUsedBy,
}

/// Patterns and use edges. See the module docs.
#[derive(Clone, Debug, Default)]
pub struct PatternContext {
    patterns: Vec<Pattern>,
    edges: Vec<(usize, usize, UseKind)>,
}

/// A graph match: the binding variable each pattern matched.
#[derive(Clone, Debug, Default)]
pub struct GraphMatch {
    by_pattern: HashMap<usize, Var>,
}

impl GraphMatch {
    /// The variable whose binding `p` matched.
    pub fn get(&self, p: &Pattern) -> Option<&Var> {
        self.by_pattern.get(&p.id())
    }
}

impl PatternContext {
    /// An empty context.
    pub fn new() -> Self {
        PatternContext::default()
    }

    /// Adds `p` (once) and returns its index.
    pub fn add(&mut self, p: &Pattern) -> usize {
        match self.patterns.iter().position(|q| q.id() == p.id()) {
            Some(i) => i,
            None => {
                self.patterns.push(p.clone());
                self.patterns.len() - 1
            }
        }
    }

    /// `a ^ b`: `b` reads `a`.
    pub fn used_by(&mut self, a: &Pattern, b: &Pattern) -> &mut Self {
        let (i, j) = (self.add(a), self.add(b));
        self.edges.push((i, j, UseKind::UsedBy));
        self
    }

    /// `a >> b`: only `b` reads `a`.
    pub fn only_used_by(&mut self, a: &Pattern, b: &Pattern) -> &mut Self {
        let (i, j) = (self.add(a), self.add(b));
        self.edges.push((i, j, UseKind::OnlyUsedBy));
        self
    }

    /// `a` is used by each of `to`.
    pub fn fork_to(&mut self, a: &Pattern, to: &[Pattern]) -> &mut Self {
        for b in to {
            self.used_by(a, b);
        }
        self
    }

    /// The first one-to-one match of the context in `block`, if any.
    pub fn match_dataflow(&self, block: &BindingBlock, bindings: &Bindings) -> Option<GraphMatch> {
        let vars: Vec<Var> = block.bindings.iter().map(|b| b.var().clone()).collect();
        // Who reads whom, within the block; and what the block exports.
        let mut readers: HashMap<Var, Vec<usize>> = HashMap::new();
        for (i, b) in block.bindings.iter().enumerate() {
            for v in free_vars(b.value()) {
                readers.entry(v).or_default().push(i);
            }
        }
        // Which bindings each pattern matches on its own.
        let candidates: Vec<Vec<usize>> = self
            .patterns
            .iter()
            .map(|p| {
                (0..vars.len())
                    .filter(|&i| Matcher::new(bindings).matches(p, &vars[i].to_expr()))
                    .collect()
            })
            .collect();
        let mut assigned: Vec<Option<usize>> = vec![None; self.patterns.len()];
        let mut taken = vec![false; vars.len()];
        let ok = self.search(0, &candidates, &vars, &readers, &mut assigned, &mut taken);
        ok.then(|| GraphMatch {
            by_pattern: self
                .patterns
                .iter()
                .zip(&assigned)
                .map(|(p, a)| (p.id(), vars[a.expect("assigned")].clone()))
                .collect(),
        })
    }

    fn edge_holds(
        &self,
        kind: UseKind,
        producer: usize,
        consumer: usize,
        vars: &[Var],
        readers: &HashMap<Var, Vec<usize>>,
    ) -> bool {
        let users = readers.get(&vars[producer]).map_or(&[][..], Vec::as_slice);
        match kind {
            UseKind::UsedBy => users.contains(&consumer),
            UseKind::OnlyUsedBy => {
                vars[producer].is_dataflow()
                    && !users.is_empty()
                    && users.iter().all(|&u| u == consumer)
            }
        }
    }

    fn search(
        &self,
        k: usize,
        candidates: &[Vec<usize>],
        vars: &[Var],
        readers: &HashMap<Var, Vec<usize>>,
        assigned: &mut Vec<Option<usize>>,
        taken: &mut Vec<bool>,
    ) -> bool {
        if k == self.patterns.len() {
            return true;
        }
        for &c in &candidates[k] {
            if taken[c] {
                continue;
            }
            assigned[k] = Some(c);
            let consistent =
                self.edges
                    .iter()
                    .all(|&(a, b, kind)| match (assigned[a], assigned[b]) {
                        (Some(pa), Some(pb)) => self.edge_holds(kind, pa, pb, vars, readers),
                        _ => true,
                    });
            if consistent {
                taken[c] = true;
                if self.search(k + 1, candidates, vars, readers, assigned, taken) {
                    return true;
                }
                taken[c] = false;
            }
            assigned[k] = None;
        }
        false
    }
}
