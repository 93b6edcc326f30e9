//! `PostDominatorTree`: post-dominators in the dataflow graph of a block
//! (TVM's `DominatorTree::PostDom` in its fusion partitioner).
//!
//! 1. Node `a` *post-dominates* node `b` when every path from `b` to the
//!    block's exit passes through `a` (every node post-dominates itself).
//!    The exit is a virtual node after the block: a node whose variable is
//!    visible after the block (`extern_ref`) reaches it directly, and so
//!    does a node nobody reads.
//! 2. The tree's parent of a node is its immediate post-dominator; `None`
//!    means the exit. It is the least common ancestor of the node's
//!    consumers, computed in reverse topological order, so building the tree
//!    is linear in the number of edges times the tree depth.
//! 3. Used by FuseOps (a node fuses into its post-dominator) and by the
//!    pattern language's `dominates(parent, path, child)`.

use super::indexed_forward_graph::IndexedForwardGraph;

/// The post-dominator tree of an [`IndexedForwardGraph`]. See the module
/// docs.
#[derive(Clone, Debug)]
pub struct PostDominatorTree {
    parent: Vec<Option<usize>>,
    /// Distance from the exit: a child of the exit has depth 1.
    depth: Vec<usize>,
}

impl PostDominatorTree {
    /// The tree of `graph`.
    pub fn new(graph: &IndexedForwardGraph) -> Self {
        let n = graph.len();
        let mut tree = PostDominatorTree {
            parent: vec![None; n],
            depth: vec![0; n],
        };
        for i in (0..n).rev() {
            let node = &graph.nodes[i];
            let parent = if node.extern_ref || node.outputs.is_empty() {
                None
            } else {
                let mut outs = node.outputs.iter().copied();
                let first = outs.next();
                outs.fold(first, |acc, o| acc.and_then(|a| tree.lca(a, o)))
            };
            tree.parent[i] = parent;
            tree.depth[i] = parent.map_or(1, |p| tree.depth[p] + 1);
        }
        tree
    }

    /// The immediate post-dominator of `node`; `None` is the exit.
    pub fn parent(&self, node: usize) -> Option<usize> {
        self.parent[node]
    }

    /// The distance of `node` from the exit (its children have depth 1).
    pub fn depth(&self, node: usize) -> usize {
        self.depth[node]
    }

    /// The nearest common post-dominator of `a` and `b`; `None` when only
    /// the exit post-dominates both.
    pub fn lca(&self, mut a: usize, mut b: usize) -> Option<usize> {
        while a != b {
            if self.depth[a] < self.depth[b] {
                b = self.parent[b]?;
            } else {
                a = self.parent[a]?;
            }
        }
        Some(a)
    }

    /// Whether `a` post-dominates `b` (see the module docs; reflexive).
    pub fn post_dominates(&self, a: usize, b: usize) -> bool {
        let mut cur = Some(b);
        while let Some(c) = cur {
            if c == a {
                return true;
            }
            if self.depth[c] <= self.depth[a] {
                return false;
            }
            cur = self.parent[c];
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::IRModule;

    /// The graph of the first block of `main` in `text`.
    fn graph(text: &str) -> IndexedForwardGraph {
        let m: IRModule = text.parse().unwrap();
        let f = m.get_relax("main").unwrap();
        IndexedForwardGraph::from_block(&f.body.as_seq().unwrap().blocks[0])
    }

    fn names(g: &IndexedForwardGraph, ids: &[usize]) -> Vec<String> {
        ids.iter()
            .map(|&i| g.nodes[i].var.name_hint().to_string())
            .collect()
    }

    fn node(g: &IndexedForwardGraph, name: &str) -> usize {
        g.nodes
            .iter()
            .position(|n| n.var.name_hint() == name)
            .unwrap_or_else(|| panic!("no node {name}"))
    }

    const DIAMOND: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32"), w: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        with R.dataflow():
            a = R.multiply(x, w)
            b = R.nn.relu(a)
            c = R.exp(a)
            d = R.add(b, c)
            e = R.negative(d)
            R.output(e)
        return e
"#;

    /// Two producers, each with one consumer, meeting at `d`.
    const PARALLEL: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32"), w: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        with R.dataflow():
            a1 = R.multiply(x, w)
            a2 = R.multiply(w, x)
            b = R.nn.relu(a1)
            c = R.exp(a2)
            d = R.add(b, c)
            R.output(d)
        return d
"#;

    #[test]
    fn free_variables_come_first_then_bindings_in_order() {
        let g = graph(DIAMOND);
        let all: Vec<usize> = (0..g.len()).collect();
        assert_eq!(names(&g, &all), ["x", "w", "a", "b", "c", "d", "e"]);
        assert!(g.nodes[0].value.is_none() && g.nodes[0].extern_ref);
        let a = node(&g, "a");
        assert_eq!(names(&g, &g.nodes[a].inputs), ["x", "w"]);
        assert_eq!(names(&g, &g.nodes[a].outputs), ["b", "c"]);
        assert!(!g.nodes[a].extern_ref, "a is a DataflowVar");
        assert!(g.nodes[node(&g, "e")].extern_ref, "e is the block's output");
    }

    #[test]
    fn a_diamond_is_post_dominated_by_its_join() {
        let g = graph(DIAMOND);
        let t = PostDominatorTree::new(&g);
        let (a, b, c, d, e) = (
            node(&g, "a"),
            node(&g, "b"),
            node(&g, "c"),
            node(&g, "d"),
            node(&g, "e"),
        );
        assert_eq!(t.parent(a), Some(d), "a's paths meet at d");
        assert_eq!(t.parent(b), Some(d));
        assert_eq!(t.parent(d), Some(e));
        assert_eq!(t.parent(e), None, "an output reaches the exit");
        assert!(t.post_dominates(d, a) && t.post_dominates(e, a));
        assert!(!t.post_dominates(b, a), "the path through c avoids b");
        assert!(t.post_dominates(a, a), "reflexive");
        assert_eq!(t.lca(b, c), Some(d));
        assert_eq!(names(&g, &g.nodes_on_paths(a, d)), ["b", "c"]);
        assert_eq!(names(&g, &g.nodes_on_paths(a, e)), ["b", "c", "d"]);
        assert!(g.nodes_on_paths(b, c).is_empty(), "no path from b to c");
    }

    #[test]
    fn parallel_chains_have_no_common_producer() {
        let g = graph(PARALLEL);
        let t = PostDominatorTree::new(&g);
        let (a1, b, d) = (node(&g, "a1"), node(&g, "b"), node(&g, "d"));
        assert_eq!(t.parent(a1), Some(b));
        assert!(t.post_dominates(d, a1));
        assert_eq!(names(&g, &g.nodes_on_paths(a1, d)), ["b"]);
        // The inputs x and w are read by both chains and are visible after
        // the block: the exit is their immediate post-dominator.
        assert_eq!(t.parent(node(&g, "x")), None);
    }

    #[test]
    fn a_value_that_escapes_the_block_is_post_dominated_only_by_the_exit() {
        let g = graph(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tuple(R.Tensor((4,), dtype="float32"), R.Tensor((4,), dtype="float32")):
        with R.dataflow():
            a = R.exp(x)
            b = R.nn.relu(a)
            c = R.negative(a)
            R.output(a, c)
        return (a, c)
"#,
        );
        let t = PostDominatorTree::new(&g);
        let (a, b) = (node(&g, "a"), node(&g, "b"));
        assert_eq!(t.parent(a), None, "a is an output");
        assert_eq!(t.parent(b), None, "nobody reads b");
        assert!(!t.post_dominates(node(&g, "c"), a));
    }
}
