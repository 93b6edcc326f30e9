//! `GraphPartitioner`: which bindings of a dataflow block fuse into one
//! kernel (TVM's `GraphPartitioner`, the grouping half of `FuseOps`).
//!
//! The input is the block's [`IndexedForwardGraph`], its
//! [`PostDominatorTree`] and a pattern kind per node ([`OpPatternKind`]:
//! elementwise ≤ broadcast ≤ injective ≤ comm-reduce ≤ out-elementwise-
//! fusable, then tuple and opaque). The output is a group per node
//! (union-find); a group is a connected set of bindings with one root, its
//! last binding.
//!
//! A node only ever fuses *into its immediate post-dominator* `d`, and then
//! every node on every path between them joins too, so a group never has a
//! value that escapes it except through its root (or through values visible
//! after the block, which are never fused away). The rules, as TVM's, run in
//! two phases over the nodes in topological order:
//!
//! 1. Phase 0, **out-elementwise-fusable** nodes (matmul, conv2d): fuse
//!    into `d` when the relation to `d` is elementwise and every node on the
//!    paths is at most broadcast — the epilogue `matmul → add → relu`.
//! 2. Phases 0 and 1, **elementwise and broadcast** nodes: fuse into `d`
//!    when the relation is at most injective or a comm-reduce, the nodes
//!    between are at most injective, and `d`'s group is at most injective,
//!    a comm-reduce or out-elementwise-fusable — chains of elementwise ops,
//!    and an elementwise producer of a reshape or concatenation, of a
//!    reduction or of a matmul.
//! 3. Phase 1, **injective** nodes (transpose, reshape, a `TupleGetItem`,
//!    a `split` whose fields are read): fuse into `d` when every node on
//!    the paths, `d` and its group included, is at most injective. With
//!    [`GraphPartitioner::with_injective_weights`] (the build pipeline's
//!    choice, for speed; TVM does not), also into a `d` that is
//!    out-elementwise-fusable
//!    with nothing in between when the node reads only the block's inputs
//!    (a weight) and is not the first operand (the data), so the MLP's
//!    `permute_dims` of a weight joins the matmul
//!    that reads it (its loop-level form is then an index swap, see
//!    `FuseTIR`). One that reads an activation stays out, as in TVM: a
//!    convolution would gather its input through the index arithmetic of,
//!    say, ShuffleNet's channel shuffle on every call (16 such kernels took
//!    4.2 ms of the model's 6.8).
//! 4. **Dequantizes** of weights (a group that reads nothing but the
//!    block's inputs, one of them of an integer dtype: int8 or packed int4
//!    values times their group's scale, which rule 2 fuses into the
//!    reshape from `(N, K / G, G)` groups back to `(N, K)`): with
//!    `injective_weights`, an injective group of this kind joins an
//!    out-elementwise-fusable `d` with nothing between, as a single
//!    weight's transpose does. The
//!    dequantize then runs inside the matmul's kernel, on the integers as
//!    they are loaded (MLC's `decode` fused into its GEMV), instead of
//!    writing a float32 copy of the weights on every call.
//! 5. Comm-reduce, tuple and opaque nodes do not start a fusion (others may
//!    fuse into a comm-reduce). Nodes without a value (the block's inputs)
//!    are never in a group with others.
//! 6. With `injective_producers` (the build pipeline's choice; TVM does
//!    not), rule 3 does not look at `d`'s group: an injective node also
//!    joins a group that holds a comm-reduce or an out-elementwise-fusable
//!    op, when `d` itself is at most injective — a reshape of an
//!    activation that a convolution's epilogue `add` reads runs inside the
//!    convolution's kernel instead of as a kernel of its own.
//!
//! [`PartitionOptions`] turns the departures on: `injective_weights`
//! (rule 3's second half and rule 4) and `injective_producers` (rule 6).
//!
//! A group has a pattern kind too, the largest of its members' (TVM's
//! `CombinePattern`), and the rules read the kinds of groups, not of
//! single nodes: the node fusing (its group's kind, so `conv2d → add(bias)`
//! fuses on as an out-elementwise-fusable group), the nodes between and
//! `d`'s group. So a group holds at most one out-elementwise-fusable op,
//! as in TVM: ResNet's residual `add` of a downsampling block takes the
//! epilogue of one of its two convolutions (the 1 × 1 downsample or the
//! 3 × 3), never both, where a group of two convolutions ran them as one
//! kernel with neither's epilogue on its accumulators.
//!
//! A fusion is refused when the merged group would have more than
//! `max_group_size` nodes (TVM's `kMaxFusedOps`, 256 by default).
//! The "relation" of a node to `d` is the largest edge kind on the paths
//! from the node to `d` (TVM's dominator pattern): an edge has its
//! consumer's kind, except that a broadcast consumer whose output has the
//! producer's shape makes the edge elementwise.

use super::indexed_forward_graph::IndexedForwardGraph;
use super::post_dominator_tree::PostDominatorTree;
use crate::ir::{Expr, ExprKind, PrimExpr};
use crate::op::OpPatternKind;

/// TVM's `kMaxFusedOps`.
pub const DEFAULT_MAX_GROUP_SIZE: usize = 256;

/// The departures from TVM's rules a partition may take, all off by
/// default (TVM's rules); the build pipeline turns them on for speed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PartitionOptions {
    /// An injective node reading only the block's inputs (a weight's
    /// transpose) or dequantizing integer weights joins the
    /// out-elementwise-fusable node it feeds (the module docs, rule 3).
    pub injective_weights: bool,
    /// An injective node joins its post-dominator's group whatever that
    /// group's kind, where TVM refuses a group holding a comm-reduce or an
    /// out-elementwise-fusable op (the module docs, rule 6).
    pub injective_producers: bool,
}

/// The partition of a block's nodes into fusion groups. See the module docs.
#[derive(Clone, Debug)]
pub struct GraphPartitioner {
    parent: Vec<usize>,
    size: Vec<usize>,
    /// The pattern kind of each group, at its root: the largest of its
    /// members' kinds.
    pattern: Vec<OpPatternKind>,
    max_group_size: usize,
}

fn rank(kind: OpPatternKind) -> u8 {
    kind as u8
}

/// The output shape of a node, when its StructInfo says it.
fn shape_of(graph: &IndexedForwardGraph, i: usize) -> Option<&[PrimExpr]> {
    graph.nodes[i]
        .var
        .struct_info()?
        .as_tensor()?
        .shape_values()
}

/// The kind of the edge `p -> c`: the consumer's kind, except that a
/// broadcast consumer whose output has the producer's shape is elementwise
/// along that edge (TVM's edge pattern: `matmul -> add(bias)` is
/// elementwise for the matmul's output).
fn edge_kind(
    graph: &IndexedForwardGraph,
    kinds: &[OpPatternKind],
    p: usize,
    c: usize,
) -> OpPatternKind {
    if kinds[c] == OpPatternKind::Broadcast {
        if let (Some(a), Some(b)) = (shape_of(graph, p), shape_of(graph, c)) {
            if a == b {
                return OpPatternKind::ElemWise;
            }
        }
    }
    kinds[c]
}

/// The largest edge kind on the paths from `i` through `between` to `d`.
fn relation(
    graph: &IndexedForwardGraph,
    kinds: &[OpPatternKind],
    i: usize,
    between: &[usize],
    d: usize,
) -> OpPatternKind {
    let on_path = |n: usize| n == d || between.binary_search(&n).is_ok();
    let mut worst = OpPatternKind::ElemWise;
    for &u in std::iter::once(&i).chain(between) {
        for &v in &graph.nodes[u].outputs {
            if on_path(v) {
                let k = edge_kind(graph, kinds, u, v);
                if rank(k) > rank(worst) {
                    worst = k;
                }
            }
        }
    }
    worst
}

/// Whether node `i` is the first operand (the data, not the weight) of
/// node `d`'s call: a transpose of a function's input image stays a
/// kernel of its own (`ConvertLayout`'s NCHW to NHWC), where inside a
/// convolution it would be a gather on every load of the window.
/// The operands are the call's arguments, or a `call_tir`'s tuple of them.
fn is_data_operand(graph: &IndexedForwardGraph, i: usize, d: usize) -> bool {
    let Some(value) = graph.nodes[d].value.as_ref() else {
        return false;
    };
    let Some(call) = value.as_call() else {
        return false;
    };
    let first = match value.call_op_name() {
        Some("relax.call_tir") => match call.args.get(1).map(Expr::kind) {
            Some(ExprKind::Tuple(fields)) => fields.first(),
            _ => None,
        },
        _ => call.args.first(),
    };
    first.and_then(Expr::as_var) == Some(&graph.nodes[i].var)
}

impl GraphPartitioner {
    /// Partitions `graph` whose node `i` has kind `kinds[i]`, by TVM's
    /// rules.
    pub fn new(
        graph: &IndexedForwardGraph,
        tree: &PostDominatorTree,
        kinds: &[OpPatternKind],
        max_group_size: usize,
    ) -> Self {
        Self::with_injective_weights(graph, tree, kinds, max_group_size, false)
    }

    /// [`GraphPartitioner::new`], and with `injective_weights` an injective
    /// node reading only the block's inputs also fuses into the
    /// out-elementwise-fusable node it feeds (the module docs, rule 3).
    pub fn with_injective_weights(
        graph: &IndexedForwardGraph,
        tree: &PostDominatorTree,
        kinds: &[OpPatternKind],
        max_group_size: usize,
        injective_weights: bool,
    ) -> Self {
        let options = PartitionOptions {
            injective_weights,
            ..PartitionOptions::default()
        };
        Self::with_options(graph, tree, kinds, max_group_size, options)
    }

    /// [`GraphPartitioner::new`] with the departures from TVM's rules that
    /// `options` turns on (the module docs, rules 3 and 6).
    pub fn with_options(
        graph: &IndexedForwardGraph,
        tree: &PostDominatorTree,
        kinds: &[OpPatternKind],
        max_group_size: usize,
        options: PartitionOptions,
    ) -> Self {
        let PartitionOptions {
            injective_weights,
            injective_producers,
        } = options;
        let n = graph.len();
        let mut p = GraphPartitioner {
            parent: (0..n).collect(),
            size: vec![1; n],
            pattern: kinds.to_vec(),
            max_group_size: max_group_size.max(1),
        };
        use OpPatternKind as K;
        for phase in 0..2 {
            for i in 0..n {
                if graph.nodes[i].value.is_none() {
                    continue;
                }
                let Some(d) = tree.parent(i) else { continue };
                if p.find(i) == p.find(d) {
                    continue;
                }
                // The kinds of the groups: of the node's, of `d`'s and of
                // those of the nodes between (see the module docs).
                let kind = p.group_pattern(i);
                let sink = p.group_pattern(d);
                let between = graph.nodes_on_paths(i, d);
                let between_kinds: Vec<OpPatternKind> =
                    between.iter().map(|&b| p.group_pattern(b)).collect();
                let relation = relation(graph, kinds, i, &between, d);
                let all_between =
                    |ok: &dyn Fn(OpPatternKind) -> bool| between_kinds.iter().all(|&k| ok(k));
                let fuse = match kind {
                    K::OutEWiseFusable => {
                        phase == 0
                            && relation == K::ElemWise
                            && all_between(&|k| rank(k) <= rank(K::Broadcast))
                            && rank(sink) <= rank(K::Broadcast)
                    }
                    K::ElemWise | K::Broadcast => {
                        (rank(relation) <= rank(K::Injective) || relation == K::CommReduce)
                            && all_between(&|k| rank(k) <= rank(K::Injective))
                            && (rank(sink) <= rank(K::Injective)
                                || sink == K::CommReduce
                                || sink == K::OutEWiseFusable)
                    }
                    K::Injective => {
                        phase == 1
                            && ((rank(relation) <= rank(K::Injective)
                                && all_between(&|k| rank(k) <= rank(K::Injective))
                                && (injective_producers || rank(sink) <= rank(K::Injective)))
                                || (injective_weights
                                    && between.is_empty()
                                    && sink == K::OutEWiseFusable
                                    && !is_data_operand(graph, i, d)
                                    && (graph.nodes[i]
                                        .inputs
                                        .iter()
                                        .all(|&x| graph.nodes[x].value.is_none())
                                        || p.dequantizes_inputs(graph, i))))
                    }
                    K::CommReduce | K::Tuple | K::Opaque => false,
                };
                if !fuse {
                    continue;
                }
                // Every node on the paths (inputs of the block excluded,
                // which cannot lie between two bindings) joins `d`'s group.
                let members: Vec<usize> = std::iter::once(i).chain(between).collect();
                let mut roots: Vec<usize> = members.iter().map(|&m| p.find(m)).collect();
                roots.push(p.find(d));
                roots.sort_unstable();
                roots.dedup();
                let total: usize = roots.iter().map(|&r| p.size[r]).sum();
                if total > p.max_group_size {
                    continue;
                }
                let target = p.find(d);
                for m in members {
                    p.union(m, target);
                }
            }
        }
        p
    }

    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }

    /// Whether `x`'s group is a dequantize of the block's inputs: every
    /// value its members read is a member's or an input of the block, and
    /// one of those inputs has an integer dtype (quantized weights).
    fn dequantizes_inputs(&mut self, graph: &IndexedForwardGraph, x: usize) -> bool {
        let root = self.find(x);
        let mut integer_input = false;
        for m in 0..graph.len() {
            if graph.nodes[m].value.is_none() || self.find(m) != root {
                continue;
            }
            for &input in &graph.nodes[m].inputs {
                if graph.nodes[input].value.is_some() {
                    if self.find(input) != root {
                        return false;
                    }
                    continue;
                }
                let dtype = graph.nodes[input]
                    .var
                    .struct_info()
                    .and_then(|s| s.as_tensor().map(|t| t.dtype));
                integer_input |= dtype.is_some_and(|d| d.is_integer() && !d.is_bool());
            }
        }
        integer_input
    }

    /// The pattern kind of `x`'s group.
    fn group_pattern(&mut self, x: usize) -> OpPatternKind {
        let root = self.find(x);
        self.pattern[root]
    }

    fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            // The root stays the later node: a group's root is its last
            // binding, which is also the representative.
            let (keep, gone) = if ra > rb { (ra, rb) } else { (rb, ra) };
            self.parent[gone] = keep;
            self.size[keep] += self.size[gone];
            if rank(self.pattern[gone]) > rank(self.pattern[keep]) {
                self.pattern[keep] = self.pattern[gone];
            }
        }
    }

    /// The group of each node: the index of its group's representative
    /// (the group's last node).
    pub fn groups(&mut self) -> Vec<usize> {
        (0..self.parent.len()).map(|i| self.find(i)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::IRModule;
    use OpPatternKind as K;

    /// The groups of the first block of `main`, as lists of binding names,
    /// with the kind of each binding given by name.
    fn groups_of(text: &str, kind_of: &dyn Fn(&str) -> OpPatternKind) -> Vec<Vec<String>> {
        groups_with(text, kind_of, true)
    }

    /// [`groups_of`], the weights rule (3) on or off (TVM's rules).
    fn groups_with(
        text: &str,
        kind_of: &dyn Fn(&str) -> OpPatternKind,
        injective_weights: bool,
    ) -> Vec<Vec<String>> {
        let options = PartitionOptions {
            injective_weights,
            ..PartitionOptions::default()
        };
        groups_with_options(text, kind_of, options)
    }

    /// [`groups_of`] with the departures of `options`.
    fn groups_with_options(
        text: &str,
        kind_of: &dyn Fn(&str) -> OpPatternKind,
        options: PartitionOptions,
    ) -> Vec<Vec<String>> {
        let m: IRModule = text.parse().unwrap();
        let f = m.get_relax("main").unwrap();
        let g = IndexedForwardGraph::from_block(&f.body.as_seq().unwrap().blocks[0]);
        let t = PostDominatorTree::new(&g);
        let kinds: Vec<OpPatternKind> = g
            .nodes
            .iter()
            .map(|n| match &n.value {
                Some(v) => kind_of(v.call_op_name().unwrap_or("")),
                None => K::Opaque,
            })
            .collect();
        let groups =
            GraphPartitioner::with_options(&g, &t, &kinds, DEFAULT_MAX_GROUP_SIZE, options)
                .groups();
        let mut out: Vec<Vec<String>> = Vec::new();
        for root in 0..g.len() {
            let members: Vec<String> = (0..g.len())
                .filter(|&i| groups[i] == root && g.nodes[i].value.is_some())
                .map(|i| g.nodes[i].var.name_hint().to_string())
                .collect();
            if members.len() > 1 {
                out.push(members);
            }
        }
        out
    }

    fn by_op(op: &str) -> OpPatternKind {
        crate::op::lookup(op).map_or(K::Opaque, |i| i.pattern)
    }

    const MLP: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 784), dtype="float32"), w0: R.Tensor((128, 784), dtype="float32"), b0: R.Tensor((128,), dtype="float32"), w1: R.Tensor((10, 128), dtype="float32"), b1: R.Tensor((10,), dtype="float32")) -> R.Tensor(("n", 10), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            t0 = R.permute_dims(w0)
            m0 = R.matmul(x, t0)
            a0 = R.add(m0, b0)
            r0 = R.nn.relu(a0)
            t1 = R.permute_dims(w1)
            m1 = R.matmul(r0, t1)
            a1 = R.add(m1, b1)
            R.output(a1)
        return a1
"#;

    #[test]
    fn the_mlp_fuses_into_transpose_matmul_add_relu_and_transpose_matmul_add() {
        assert_eq!(
            groups_of(MLP, &by_op),
            [vec!["t0", "m0", "a0", "r0"], vec!["t1", "m1", "a1"]]
        );
        // TVM's rules: the weights' transposes stay alone.
        assert_eq!(
            groups_with(MLP, &by_op, false),
            [vec!["m0", "a0", "r0"], vec!["m1", "a1"]]
        );
    }

    /// A channel shuffle (reshape, transpose, reshape of an activation)
    /// before a convolution is a group of its own, with the `relu` before
    /// it (rule 2); the convolution takes its epilogue.
    #[test]
    fn an_injective_op_on_an_activation_stays_out_of_a_convolution() {
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 8, 4, 4), dtype="float32"), w: R.Tensor((8, 2, 1, 1), dtype="float32"), b: R.Tensor((1, 8, 1, 1), dtype="float32")) -> R.Tensor((1, 8, 4, 4), dtype="float32"):
        with R.dataflow():
            r = R.nn.relu(x)
            s0 = R.reshape(r, R.shape([1, 2, 4, 4, 4]))
            s1 = R.permute_dims(s0, axes=[0, 2, 1, 3, 4])
            s2 = R.reshape(s1, R.shape([1, 8, 4, 4]))
            c = R.nn.conv2d(s2, w, groups=4)
            y = R.add(c, b)
            R.output(y)
        return y
"#;
        assert_eq!(
            groups_of(text, &by_op),
            [vec!["r", "s0", "s1", "s2"], vec!["c", "y"]]
        );
    }

    /// Rules 2, 3 and 6 around a convolution: an elementwise op fuses
    /// into the reshape after it (its post-dominator is injective), but
    /// that reshape, read by the convolution's epilogue `add`, stays out of
    /// the convolution's group by TVM's rules (the group holds an
    /// out-elementwise-fusable op) and joins it with `injective_producers`.
    #[test]
    fn an_injective_op_joins_a_convolutions_epilogue_only_with_injective_producers() {
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 8, 4, 4), dtype="float32"), w: R.Tensor((8, 8, 1, 1), dtype="float32"), v: R.Tensor((8,), dtype="float32")) -> R.Tensor((1, 8, 4, 4), dtype="float32"):
        with R.dataflow():
            c = R.nn.conv2d(x, w)
            e = R.exp(v)
            r = R.reshape(e, R.shape([1, 8, 1, 1]))
            y = R.add(c, r)
            R.output(y)
        return y
"#;
        let tvm = PartitionOptions::default();
        assert_eq!(
            groups_with_options(text, &by_op, tvm),
            [vec!["e", "r"], vec!["c", "y"]]
        );
        let producers = PartitionOptions {
            injective_producers: true,
            ..tvm
        };
        assert_eq!(
            groups_with_options(text, &by_op, producers),
            [vec!["c", "e", "r", "y"]]
        );
    }

    /// Group-quantized weights: a Q4_0 dequantize (nibbles shifted out of
    /// bytes, less 8, times each group's scale) and its reshape and
    /// transpose join the matmul that reads them; the same chain on a
    /// float input (an activation) stays out, as the channel shuffle does
    /// (one group of its own: the product fuses into the reshape, rule 2).
    #[test]
    fn a_dequantize_of_integer_weights_joins_its_matmul() {
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 64), dtype="float32"), wp: R.Tensor((24, 2, 1, 16), dtype="uint8"), shift: R.Tensor((1, 1, 2, 1), dtype="uint8"), s: R.Tensor((24, 2, 1, 1), dtype="float32"), f: R.Tensor((24, 2, 2, 16), dtype="float32")) -> R.Tensor((1, 24), dtype="float32"):
        with R.dataflow():
            h = R.right_shift(wp, shift)
            q = R.bitwise_and(h, R.const(15, "uint8"))
            c = R.astype(q, "float32")
            z = R.subtract(c, R.const(8.0, "float32"))
            w = R.multiply(z, s)
            w2 = R.reshape(w, R.shape([24, 64]))
            wt = R.permute_dims(w2)
            y = R.matmul(x, wt)
            g = R.multiply(f, s)
            g2 = R.reshape(g, R.shape([24, 64]))
            gt = R.permute_dims(g2)
            o = R.matmul(x, gt)
            R.output(y, o)
        return y
"#;
        assert_eq!(
            groups_of(text, &by_op),
            [
                vec!["h", "q", "c", "z", "w", "w2", "wt", "y"],
                vec!["g", "g2", "gt"]
            ]
        );
    }

    /// ResNet's downsampling block: the residual `add` joins two
    /// convolutions with their biases. The first one to reach it (the
    /// 1 × 1 downsample, earlier in the block) takes it with the `relu`;
    /// the 3 × 3 keeps its bias alone, as TVM's `FuseOps` groups it (a
    /// group holds one out-elementwise-fusable op).
    #[test]
    fn two_convolutions_never_share_a_group() {
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 8, 6, 6), dtype="float32"), wd: R.Tensor((16, 8, 1, 1), dtype="float32"), bd: R.Tensor((1, 16, 1, 1), dtype="float32"), wa: R.Tensor((16, 8, 3, 3), dtype="float32"), ba: R.Tensor((1, 16, 1, 1), dtype="float32"), wb: R.Tensor((16, 16, 3, 3), dtype="float32"), bb: R.Tensor((1, 16, 1, 1), dtype="float32")) -> R.Tensor((1, 16, 3, 3), dtype="float32"):
        with R.dataflow():
            d = R.nn.conv2d(x, wd, strides=[2, 2])
            db = R.add(d, bd)
            a = R.nn.conv2d(x, wa, strides=[2, 2], padding=[1, 1, 1, 1])
            ab = R.add(a, ba)
            ar = R.nn.relu(ab)
            b = R.nn.conv2d(ar, wb, padding=[1, 1, 1, 1])
            bb2 = R.add(b, bb)
            s = R.add(bb2, db)
            y = R.nn.relu(s)
            R.output(y)
        return y
"#;
        assert_eq!(
            groups_of(text, &by_op),
            [
                vec!["a", "ab", "ar"],
                vec!["b", "bb2"],
                vec!["d", "db", "s", "y"]
            ]
        );
    }

    #[test]
    fn an_elementwise_chain_is_one_group_and_an_opaque_op_stays_alone() {
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((8,), dtype="float32"), y: R.Tensor((8,), dtype="float32")) -> R.Tensor((8,), dtype="float32"):
        with R.dataflow():
            a = R.add(x, y)
            b = R.multiply(a, y)
            c = R.nn.relu(b)
            d = R.exp(c)
            e = R.sum(d)
            f = R.add(e, x)
            R.output(f)
        return f
"#;
        // With `exp` taken as opaque the chain stops before it; a
        // comm-reduce never starts a fusion, so `f` stays alone.
        let kind = |op: &str| {
            if op == "relax.exp" {
                K::Opaque
            } else {
                by_op(op)
            }
        };
        assert_eq!(groups_of(text, &kind), [vec!["a", "b", "c"]]);
        assert_eq!(
            groups_of(text, &by_op),
            [vec!["a", "b", "c", "d", "e"]],
            "elementwise ops fuse into the reduction that consumes them"
        );
    }

    #[test]
    fn a_diamond_fuses_whole_and_an_escaping_value_is_a_root() {
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((8,), dtype="float32")) -> R.Tuple(R.Tensor((8,), dtype="float32"), R.Tensor((8,), dtype="float32"), R.Tensor((8,), dtype="float32")):
        with R.dataflow():
            a = R.exp(x)
            b = R.nn.relu(a)
            c = R.negative(a)
            d = R.add(b, c)
            e = R.nn.relu(x)
            f = R.negative(e)
            R.output(d, e, f)
        return (d, e, f)
"#;
        // `e` is an output of the block: nothing fuses it away, so `f`
        // (which only `e` feeds) stays alone with it.
        assert_eq!(groups_of(text, &by_op), [vec!["a", "b", "c", "d"]]);
    }

    #[test]
    fn groups_never_grow_past_the_limit() {
        let m: IRModule = MLP.parse().unwrap();
        let f = m.get_relax("main").unwrap();
        let g = IndexedForwardGraph::from_block(&f.body.as_seq().unwrap().blocks[0]);
        let t = PostDominatorTree::new(&g);
        let kinds: Vec<OpPatternKind> = g
            .nodes
            .iter()
            .map(|n| {
                n.value
                    .as_ref()
                    .map_or(K::Opaque, |v| by_op(v.call_op_name().unwrap_or("")))
            })
            .collect();
        let mut p = GraphPartitioner::new(&g, &t, &kinds, 2);
        let groups = p.groups();
        for root in 0..g.len() {
            assert!(groups.iter().filter(|&&r| r == root).count() <= 2);
        }
    }
}
