//! `AnnotateTIROpPattern`: give every PrimFunc an `op_pattern` attribute, the
//! integer of TVM's `OpPatternKind` (0 elementwise, 1 broadcast, 2
//! injective, 3 comm-reduce, 4 out-elementwise-fusable, 8 opaque), which
//! `FuseOps` reads.
//!
//! 1. A PrimFunc that names its op in `legalized_from` (LegalizeOps
//!    with its `legalized_from` option, as the build pipeline runs it): the
//!    op's registered pattern is taken.
//! 2. Otherwise the blocks are analysed as TVM's `PatternKindAnalyzer`
//!    does; the result starts elementwise and each block (but `root`)
//!    updates it in order:
//!    - a block that stores to two different index lists, or to none, makes
//!      the function opaque;
//!    - each load is compared with the store: the same indices are
//!      elementwise; the store's indices in order, some dropped (and unit
//!      dims read at 0 skipped), broadcast; indices using only the store's
//!      variables, injective; anything else ends the comparison. Broadcast
//!      loads next to an elementwise one count as elementwise;
//!    - when every load compared, the block's kind joins the result (the
//!      maximum), except that an output block after a comm-reduce makes it
//!      out-elementwise-fusable (softmax, mean);
//!    - otherwise a block with reduce variables is out-elementwise-fusable
//!      when it is a multiply-add whose both factors are reused across some
//!      output variable (matmul, convolution) or when some load's reduce
//!      index is not the bare variable (pooling), and a comm-reduce
//!      otherwise; a block without reduce variables makes it opaque.
//!
//!    An index using a symbolic dim (`x[(i * n + j) // 4]` in a reshape)
//!    uses a variable that is not the store's, so, as in TVM, such a block
//!    is opaque.
//! 3. An existing `op_pattern` is kept.

use super::legalize::LEGALIZED_FROM;
use super::Pass;
use crate::ir::TirVar;
use crate::ir::{AttrValue, BaseFunc, IRModule, PrimExpr, PrimExprKind};
use crate::op::OpPatternKind;
use crate::tir::{Block, Buffer, IterKind, PrimFunc, Stmt};
use relax_runtime::Error;

/// The attribute set by the pass.
pub const OP_PATTERN: &str = "op_pattern";

/// The pass. See the module docs.
#[derive(Clone, Copy, Debug, Default)]
pub struct AnnotateTIROpPattern;

impl Pass for AnnotateTIROpPattern {
    fn name(&self) -> &str {
        "AnnotateTIROpPattern"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        let mut out = module.clone();
        for (gv, f) in module.functions() {
            let BaseFunc::Prim(pf) = f else { continue };
            if pf.attrs.get(OP_PATTERN).is_some() {
                continue;
            }
            let kind = op_pattern(pf);
            let mut pf = pf.clone();
            pf.attrs = pf.attrs.with(OP_PATTERN, kind as i64);
            out.add(gv.clone(), pf);
        }
        Ok(out)
    }
}

/// The pattern kind of `func`. See the module docs.
pub fn op_pattern(func: &PrimFunc) -> OpPatternKind {
    if let Some(AttrValue::Str(op)) = func.attrs.get(LEGALIZED_FROM) {
        if let Some(info) = crate::op::lookup(op) {
            return info.pattern;
        }
    }
    analyze(func)
}

/// The pattern kind from the blocks alone, as TVM's `PatternKindAnalyzer`
/// computes it (see the module docs).
pub fn analyze(func: &PrimFunc) -> OpPatternKind {
    let mut a = Analyzer {
        params: func.buffers().cloned().collect(),
        kind: OpPatternKind::ElemWise,
    };
    a.visit(&func.body);
    a.kind
}

/// The walk over the function's blocks; `kind` is the result so far.
struct Analyzer {
    params: Vec<Buffer>,
    kind: OpPatternKind,
}

/// One buffer access: the buffer and its indices.
type Access = (Buffer, Vec<PrimExpr>);

impl Analyzer {
    fn visit(&mut self, s: &Stmt) {
        match s {
            Stmt::Block(b) if b.name == "root" => self.visit(&b.body),
            Stmt::Block(b) => self.block(b),
            Stmt::For { body, .. } | Stmt::Allocate { body, .. } | Stmt::LetStmt { body, .. } => {
                self.visit(body)
            }
            Stmt::IfThenElse {
                then_case,
                else_case,
                ..
            } => {
                self.visit(then_case);
                if let Some(e) = else_case {
                    self.visit(e);
                }
            }
            Stmt::Seq(ss) => ss.iter().for_each(|s| self.visit(s)),
            Stmt::BufferStore { .. } | Stmt::Evaluate(_) => {}
        }
    }

    /// Whether the block writes a parameter buffer (an output).
    fn is_output(&self, b: &Block) -> bool {
        b.writes.iter().any(|w| self.params.contains(&w.buffer))
    }

    fn block(&mut self, b: &Block) {
        use OpPatternKind as K;
        // The block's one store (several stores to other indices, or none,
        // make it opaque) and every load of its body (the init is not
        // visited).
        let mut store: Option<Vec<PrimExpr>> = None;
        let mut loads = Vec::new();
        if !body_accesses(&b.body, &mut store, &mut loads) {
            self.kind = K::Opaque;
            return;
        }
        let Some(store_idx) = store else {
            self.kind = K::Opaque;
            return;
        };
        // Step 1: the index pattern of every load against the store.
        let mut pair = K::ElemWise;
        let mut has_elemwise = false;
        for (buf, idx) in &loads {
            if *idx == store_idx {
                has_elemwise = true;
            } else if is_broadcast(&store_idx, buf, idx) {
                pair = pair.max(K::Broadcast);
            } else if is_injective(&store_idx, idx) {
                pair = pair.max(K::Injective);
            } else {
                pair = K::Opaque;
                break;
            }
        }
        // `A[i, j] = B[i, j] + C[i]` is elementwise.
        if pair == K::Broadcast && has_elemwise {
            pair = K::ElemWise;
        }
        if pair != K::Opaque {
            // A reduction followed by an output stage (softmax).
            if self.is_output(b) && self.kind == K::CommReduce {
                self.kind = K::OutEWiseFusable;
            } else {
                self.kind = self.kind.max(pair);
            }
            return;
        }
        // Step 2: reductions.
        let reduce: Vec<TirVar> = b
            .iter_vars
            .iter()
            .filter(|iv| iv.kind == IterKind::Reduce)
            .map(|iv| iv.var.clone())
            .collect();
        if reduce.is_empty() {
            self.kind = K::Opaque;
            return;
        }
        if is_fma(&b.body) {
            // A matmul or a convolution.
            self.kind = self.kind.max(K::OutEWiseFusable);
            return;
        }
        // A window reduction (pooling) is not a pure reduce.
        if loads.iter().any(|(_, idx)| !is_pure_reduce(&reduce, idx)) {
            self.kind = self.kind.max(K::OutEWiseFusable);
            return;
        }
        self.kind = self.kind.max(K::CommReduce);
    }
}

/// Collects the store's indices and the loads of a block body. False when
/// the body stores twice to different indices.
fn body_accesses(s: &Stmt, store: &mut Option<Vec<PrimExpr>>, loads: &mut Vec<Access>) -> bool {
    match s {
        Stmt::BufferStore { value, indices, .. } => {
            if store.as_ref().is_some_and(|idx| idx != indices) {
                return false;
            }
            *store = Some(indices.clone());
            indices.iter().for_each(|i| collect_loads(i, loads));
            collect_loads(value, loads);
            true
        }
        Stmt::Block(b) => body_accesses(&b.body, store, loads),
        Stmt::For {
            min, extent, body, ..
        } => {
            collect_loads(min, loads);
            collect_loads(extent, loads);
            body_accesses(body, store, loads)
        }
        Stmt::Allocate { body, .. } => body_accesses(body, store, loads),
        Stmt::LetStmt { value, body, .. } => {
            collect_loads(value, loads);
            body_accesses(body, store, loads)
        }
        Stmt::IfThenElse {
            cond,
            then_case,
            else_case,
        } => {
            collect_loads(cond, loads);
            body_accesses(then_case, store, loads)
                && else_case
                    .as_ref()
                    .is_none_or(|e| body_accesses(e, store, loads))
        }
        Stmt::Seq(ss) => ss.iter().all(|s| body_accesses(s, store, loads)),
        Stmt::Evaluate(e) => {
            collect_loads(e, loads);
            true
        }
    }
}

fn collect_loads(e: &PrimExpr, out: &mut Vec<Access>) {
    if let PrimExprKind::BufferLoad(b, idx) = e.kind() {
        out.push((b.clone(), idx.clone()));
    }
    for c in e.children() {
        collect_loads(c, out);
    }
}

/// Every load index appears among the store's indices, in order; a unit
/// dimension read at 0 is skipped (`A[i, j] = B[0, j]`).
fn is_broadcast(store: &[PrimExpr], buf: &Buffer, load: &[PrimExpr]) -> bool {
    let mut j = 0;
    for (i, idx) in load.iter().enumerate() {
        if buf.shape().get(i).and_then(|d| d.as_int()) == Some(1) && idx.as_int() == Some(0) {
            continue;
        }
        while j < store.len() && store[j] != *idx {
            j += 1;
        }
        if j == store.len() {
            return false;
        }
    }
    true
}

/// The store's indices are variables, and the load's indices use no other
/// variable (`A[i, j] = B[j, i]`, `A[i, j] = B[i - j]`).
fn is_injective(store: &[PrimExpr], load: &[PrimExpr]) -> bool {
    let Some(vars) = store_vars(store) else {
        return false;
    };
    load.iter()
        .all(|e| e.free_vars().iter().all(|v| vars.contains(v)))
}

/// The store's indices as variables, or None when one is not a variable.
fn store_vars(store: &[PrimExpr]) -> Option<Vec<TirVar>> {
    store
        .iter()
        .map(|e| match e.kind() {
            PrimExprKind::Var(v) => Some(v.clone()),
            _ => None,
        })
        .collect()
}

/// Some store variable is absent from the load's indices: the load's value
/// is reused across it (`C[i, j]` and `A[i, k]`).
fn allows_reuse(store: &[PrimExpr], load: &[PrimExpr]) -> bool {
    let Some(mut vars) = store_vars(store) else {
        return false;
    };
    for e in load {
        let used = e.free_vars();
        vars.retain(|v| !used.contains(v));
    }
    !vars.is_empty()
}

fn without_casts(mut e: &PrimExpr) -> &PrimExpr {
    while let PrimExprKind::Cast(inner) = e.kind() {
        e = inner;
    }
    e
}

/// `C[i, j] = C[i, j] + A[i, k] * B[k, j]`, casts allowed around each part.
fn is_fma(body: &Stmt) -> bool {
    let Stmt::BufferStore {
        buffer,
        value,
        indices,
    } = body
    else {
        return false;
    };
    let PrimExprKind::Add(acc, prod) = without_casts(value).kind() else {
        return false;
    };
    let PrimExprKind::Mul(a, b) = without_casts(prod).kind() else {
        return false;
    };
    let PrimExprKind::BufferLoad(acc_buf, acc_idx) = without_casts(acc).kind() else {
        return false;
    };
    if acc_buf != buffer || acc_idx != indices {
        return false;
    }
    let (PrimExprKind::BufferLoad(_, a_idx), PrimExprKind::BufferLoad(_, b_idx)) =
        (without_casts(a).kind(), without_casts(b).kind())
    else {
        return false;
    };
    allows_reuse(indices, a_idx) && allows_reuse(indices, b_idx)
}

/// Every index that uses a reduce variable is that variable alone
/// (`sum(B[i, k])`, not a window's `B[i + k]`).
fn is_pure_reduce(reduce: &[TirVar], indices: &[PrimExpr]) -> bool {
    indices.iter().all(|e| {
        let used = e.free_vars();
        match used.iter().find(|v| reduce.contains(v)) {
            None => true,
            Some(v) => matches!(e.kind(), PrimExprKind::Var(x) if x == v),
        }
    })
}

#[cfg(test)]
mod tests {
    //! TVM's own cases (`tests/python/relax/test_transform_annotate_tir_op_pattern.py`):
    //! each PrimFunc gets TVM's kind.

    use super::*;
    use crate::op::OpPatternKind as K;

    /// The `op_pattern` AnnotateTIROpPattern gives the module's only
    /// PrimFunc.
    fn kind(text: &str) -> i64 {
        let module: IRModule = text.parse().unwrap_or_else(|e| panic!("{e}\n{text}"));
        let out = AnnotateTIROpPattern.run(module).unwrap();
        let (_, f) = out.functions().next().unwrap();
        let BaseFunc::Prim(pf) = f else {
            panic!("a PrimFunc")
        };
        match pf.attrs.get(OP_PATTERN) {
            Some(AttrValue::Int(k)) => *k,
            other => panic!("op_pattern {other:?}"),
        }
    }

    fn matmul(update: &str) -> String {
        format!(
            r#"
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def tir_matmul(x: T.handle, y: T.handle, z: T.handle):
        T.func_attr({{"global_symbol": "tir_matmul"}})
        m = T.int32()
        n = T.int32()
        k = T.int32()
        A = T.match_buffer(x, (m, n), "float16")
        B = T.match_buffer(y, (n, k), "float16")
        C = T.match_buffer(z, (m, k), "float32")
        for i, j, k in T.grid(m, k, n):
            with T.sblock("matmul"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + {update}
"#
        )
    }

    #[test]
    fn a_multiply_add_is_out_elementwise_fusable_casts_or_not() {
        for update in [
            "T.Cast(\"float32\", A[vi, vk]) * T.Cast(\"float32\", B[vk, vj])",
            "T.Cast(\"float32\", A[vi, vk] * B[vk, vj])",
            "T.Cast(\"float32\", T.Cast(\"float16\", A[vi, vk] * B[vk, vj]))",
        ] {
            assert_eq!(kind(&matmul(update)), K::OutEWiseFusable as i64, "{update}");
        }
    }

    #[test]
    fn a_sum_is_a_comm_reduce() {
        let text = r#"
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def sum(x: T.handle, y: T.handle):
        A = T.match_buffer(x, (16, 16))
        B = T.match_buffer(y, (16,))
        for i, j in T.grid(16, 16):
            with T.sblock("matmul"):
                vi, vj = T.axis.remap("SR", [i, j])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vj]
"#;
        assert_eq!(kind(text), K::CommReduce as i64);
    }

    /// One elementwise block `B[..] = <value>` over the given buffers.
    fn one_block(
        a: &str,
        b: &str,
        grid: &str,
        vars: &str,
        kinds: &str,
        store: &str,
        value: &str,
    ) -> String {
        format!(
            r#"
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def f(A: T.Buffer({a}, "float32"), B: T.Buffer({b}, "float32")):
        for {vars} in T.grid{grid}:
            with T.sblock("b"):
                {vars_v} = T.axis.remap("{kinds}", [{vars}])
                B[{store}] = {value}
"#,
            vars_v = vars
                .split(", ")
                .map(|v| format!("v{v}"))
                .collect::<Vec<_>>()
                .join(", "),
        )
    }

    #[test]
    fn elementwise_broadcast_and_injective_blocks() {
        let ewise = one_block(
            "(16, 16)",
            "(16, 16)",
            "(16, 16)",
            "i, j",
            "SS",
            "vi, vj",
            "A[vi, vj] + T.float32(1)",
        );
        assert_eq!(kind(&ewise), K::ElemWise as i64);
        let broadcast = one_block(
            "(16, 16)",
            "(16, 16, 16, 16)",
            "(16, 16, 16, 16)",
            "i, j, k, l",
            "SSSS",
            "vi, vj, vk, vl",
            "A[vj, vl]",
        );
        assert_eq!(kind(&broadcast), K::Broadcast as i64);
        let injective = one_block(
            "(4, 4, 4, 4)",
            "(16, 16)",
            "(16, 16)",
            "i, j",
            "SS",
            "vi, vj",
            "A[vi // 4, vj // 4, vi % 4, vj % 4]",
        );
        assert_eq!(kind(&injective), K::Injective as i64);
    }

    #[test]
    fn a_bias_add_and_a_unit_dim_broadcast_are_elementwise() {
        let text = r#"
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def add5(A: T.Buffer((1, 64, 112, 112), "float32"), B: T.Buffer((64, 1, 1), "float32"), C: T.Buffer((1, 64, 112, 112), "float32")):
        T.func_attr({"global_symbol": "add5", "tirx.noalias": True})
        for i0, i1, i2, i3 in T.grid(1, 64, 112, 112):
            with T.sblock("T_add"):
                ax0, ax1, ax2, ax3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                T.reads(A[ax0, ax1, ax2, ax3], B[ax1, 0, 0])
                T.writes(C[ax0, ax1, ax2, ax3])
                C[ax0, ax1, ax2, ax3] = A[ax0, ax1, ax2, ax3] + B[ax1, 0, 0]
"#;
        assert_eq!(kind(text), K::ElemWise as i64);
        let text = r#"
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def tir_bias_add(A: T.Buffer((1, 1000), "float32"), B: T.Buffer((1000,), "float32"), C: T.Buffer((1, 1000), "float32")):
        T.func_attr({"global_symbol": "tir_bias_add", "tirx.noalias": True})
        for i0, i1 in T.grid(1, 1000):
            with T.sblock("T_add"):
                ax0, ax1 = T.axis.remap("SS", [i0, i1])
                T.reads(A[ax0, ax1], B[ax1])
                T.writes(C[ax0, ax1])
                C[ax0, ax1] = A[ax0, ax1] + B[ax1]
"#;
        assert_eq!(kind(text), K::ElemWise as i64);
        let text = r#"
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def add8(A: T.Buffer((128,), "float32"), B: T.Buffer((), "float32"), C: T.Buffer((128,), "float32")):
        T.func_attr({"global_symbol": "add8", "tirx.noalias": True})
        for i0 in T.serial(128):
            with T.sblock("T_add"):
                ax0 = T.axis.spatial(128, i0)
                T.reads(A[ax0], B[()])
                T.writes(C[ax0])
                C[ax0] = A[ax0] + B[()]
"#;
        assert_eq!(kind(text), K::ElemWise as i64);
    }

    #[test]
    fn pooling_and_softmax_are_out_elementwise_fusable() {
        let pool = r#"
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def max_pool2d(x: T.Buffer((1, 64, 112, 112), "float32"), y: T.Buffer((1, 64, 56, 56), "float32")):
        pad = T.sblock_alloc_buffer((1, 64, 114, 114), "float32")
        for i0, i1, i2, i3 in T.grid(1, 64, 114, 114):
            with T.sblock("pad_temp"):
                ax0, ax1, ax2, ax3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                pad[ax0, ax1, ax2, ax3] = T.if_then_else(1 <= ax2 and ax2 < 113 and 1 <= ax3 and ax3 < 113, x[ax0, ax1, ax2 - 1, ax3 - 1], T.float32(-3.4028234663852886e38))
        for i0, i1, i2, i3, i4, i5 in T.grid(1, 64, 56, 56, 3, 3):
            with T.sblock("tensor"):
                ax0, ax1, ax2, ax3, rv0, rv1 = T.axis.remap("SSSSRR", [i0, i1, i2, i3, i4, i5])
                with T.init():
                    y[ax0, ax1, ax2, ax3] = T.float32(-3.4028234663852886e38)
                y[ax0, ax1, ax2, ax3] = T.max(y[ax0, ax1, ax2, ax3], pad[ax0, ax1, ax2 * 2 + rv0, ax3 * 2 + rv1])
"#;
        assert_eq!(kind(pool), K::OutEWiseFusable as i64);
        let softmax = r#"
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def softmax(x: T.Buffer((16, 16), "float32"), y: T.Buffer((16, 16), "float32")):
        maxelem = T.sblock_alloc_buffer((16,), "float32")
        e = T.sblock_alloc_buffer((16, 16), "float32")
        expsum = T.sblock_alloc_buffer((16,), "float32")
        for i0, i1 in T.grid(16, 16):
            with T.sblock("T_softmax_maxelem"):
                i, k = T.axis.remap("SR", [i0, i1])
                with T.init():
                    maxelem[i] = T.float32(-3.4028234663852886e38)
                maxelem[i] = T.max(maxelem[i], x[i, k])
        for i0, i1 in T.grid(16, 16):
            with T.sblock("T_softmax_exp"):
                i, j = T.axis.remap("SS", [i0, i1])
                e[i, j] = T.exp(x[i, j] - maxelem[i])
        for i0, i1 in T.grid(16, 16):
            with T.sblock("T_softmax_expsum"):
                i, k = T.axis.remap("SR", [i0, i1])
                with T.init():
                    expsum[i] = T.float32(0)
                expsum[i] = expsum[i] + e[i, k]
        for i0, i1 in T.grid(16, 16):
            with T.sblock("T_softmax_norm"):
                i, j = T.axis.remap("SS", [i0, i1])
                T.writes(y[i, j])
                y[i, j] = e[i, j] / expsum[i]
"#;
        assert_eq!(kind(softmax), K::OutEWiseFusable as i64);
    }

    #[test]
    fn two_stores_to_one_index_reduce_and_to_two_indices_are_opaque() {
        let sum_sqsum = r#"
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def sum_sqsum(A: T.Buffer((32, 64), "float32"), vsum: T.Buffer((32,), "float32"), sqsum: T.Buffer((32,), "float32")):
        for ax0, k0 in T.grid(32, 64):
            with T.sblock("block"):
                v_ax0, v_k0 = T.axis.remap("SR", [ax0, k0])
                with T.init():
                    vsum[v_ax0] = T.float32(0)
                    sqsum[v_ax0] = T.float32(0)
                vsum[v_ax0] = vsum[v_ax0] + A[v_ax0, v_k0]
                sqsum[v_ax0] = sqsum[v_ax0] + A[v_ax0, v_k0] * A[v_ax0, v_k0]
"#;
        assert_eq!(kind(sum_sqsum), K::CommReduce as i64);
        let cumsum = r#"
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def cumsum(x: T.Buffer((10, 16), "float32"), out_buf: T.Buffer((160,), "float32")):
        with T.sblock("cumsum_generic"):
            for fused in T.parallel(1):
                out_buf[fused * 160] = x[fused * 160 // 16, fused * 160 % 16]
                for v_k in T.serial(159):
                    out_buf[fused * 160 + (v_k + 1)] = out_buf[fused * 160 + (v_k + 1 - 1)] + x[(fused * 160 + (v_k + 1)) // 16, (fused * 160 + (v_k + 1)) % 16]
"#;
        assert_eq!(kind(cumsum), K::Opaque as i64);
        let no_store = r#"
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def no_buffer_stores(A: T.Buffer((32, 64), "float32"), vsum: T.Buffer((32,), "float32")):
        for ax0, k0 in T.grid(32, 64):
            with T.sblock("block"):
                v_ax0, v_k0 = T.axis.remap("SR", [ax0, k0])
                T.evaluate(0)
"#;
        assert_eq!(kind(no_store), K::Opaque as i64);
    }
}
