//! `AnnotateTIROpPattern`: give every PrimFunc an `op_pattern` attribute, the
//! integer of TVM's `OpPatternKind` (0 elementwise, 1 broadcast, 2
//! injective, 3 comm-reduce, 4 out-elementwise-fusable, 8 opaque), which
//! `FuseOps` reads.
//!
//! 1. A PrimFunc made by `LegalizeOps` names its op (`legalized_from`): the
//!    op's registered pattern is taken.
//! 2. Otherwise the blocks are analysed, as TVM's `PatternKindAnalyzer`
//!    does, and the function's kind is the largest of its blocks' kinds:
//!    - a block with reduce iteration variables is a comm-reduce, or
//!      out-elementwise-fusable when its update multiplies two loads (a
//!      matmul or convolution);
//!    - otherwise it stores one value: elementwise when every load uses the
//!      store's indices, broadcast when every load's indices are the store's
//!      with some dropped (in order), injective otherwise;
//!    - a function without blocks, or a block that is not one store, is
//!      opaque.
//! 3. An existing `op_pattern` is kept.

use super::legalize::LEGALIZED_FROM;
use super::Pass;
use crate::ir::{AttrValue, BaseFunc, IRModule, PrimExpr, PrimExprKind};
use crate::op::OpPatternKind;
use crate::tir::{Block, IterKind, PrimFunc, Stmt};
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

/// The pattern kind from the blocks alone.
pub fn analyze(func: &PrimFunc) -> OpPatternKind {
    let mut blocks = Vec::new();
    collect_blocks(&func.body, &mut blocks);
    // The root block (no iteration variables, a body of nests) only groups
    // the stages; a function whose only block is a root computes nothing.
    let stages: Vec<&Block> = blocks
        .into_iter()
        .filter(|b| !b.iter_vars.is_empty() || matches!(*b.body, Stmt::BufferStore { .. }))
        .collect();
    if stages.is_empty() {
        return OpPatternKind::Opaque;
    }
    stages
        .iter()
        .map(|b| block_pattern(b))
        .max()
        .unwrap_or(OpPatternKind::Opaque)
}

fn collect_blocks<'a>(s: &'a Stmt, out: &mut Vec<&'a Block>) {
    match s {
        Stmt::Block(b) => {
            out.push(b);
            collect_blocks(&b.body, out);
        }
        Stmt::For { body, .. } | Stmt::Allocate { body, .. } | Stmt::LetStmt { body, .. } => {
            collect_blocks(body, out)
        }
        Stmt::IfThenElse {
            then_case,
            else_case,
            ..
        } => {
            collect_blocks(then_case, out);
            if let Some(e) = else_case {
                collect_blocks(e, out);
            }
        }
        Stmt::Seq(ss) => ss.iter().for_each(|s| collect_blocks(s, out)),
        Stmt::BufferStore { .. } | Stmt::Evaluate(_) => {}
    }
}

fn loads(e: &PrimExpr, out: &mut Vec<(crate::tir::Buffer, Vec<PrimExpr>)>) {
    if let PrimExprKind::BufferLoad(b, idx) = e.kind() {
        out.push((b.clone(), idx.clone()));
    }
    for c in e.children() {
        loads(c, out);
    }
}

/// Whether `e` contains a product of two loads (`a[..] * b[..]`).
fn multiplies_loads(e: &PrimExpr) -> bool {
    let is_load = |x: &PrimExpr| {
        matches!(x.kind(), PrimExprKind::BufferLoad(..))
            || matches!(x.kind(), PrimExprKind::Cast(a) if matches!(a.kind(), PrimExprKind::BufferLoad(..)))
            || matches!(x.kind(), PrimExprKind::Select(_, t, _) if matches!(t.kind(), PrimExprKind::BufferLoad(..) | PrimExprKind::Cast(_)))
    };
    match e.kind() {
        PrimExprKind::Mul(a, b) if is_load(a) && is_load(b) => true,
        _ => e.children().into_iter().any(multiplies_loads),
    }
}

fn block_pattern(b: &Block) -> OpPatternKind {
    let Stmt::BufferStore {
        buffer,
        value,
        indices,
    } = &*b.body
    else {
        return OpPatternKind::Opaque;
    };
    if b.iter_vars.iter().any(|iv| iv.kind == IterKind::Reduce) {
        return if multiplies_loads(value) {
            OpPatternKind::OutEWiseFusable
        } else {
            OpPatternKind::CommReduce
        };
    }
    let mut ls = Vec::new();
    loads(value, &mut ls);
    let mut kind = OpPatternKind::ElemWise;
    for (_, idx) in ls.iter().filter(|(buf, _)| buf != buffer) {
        let k = if idx == indices {
            OpPatternKind::ElemWise
        } else if is_subsequence(idx, indices) {
            OpPatternKind::Broadcast
        } else {
            OpPatternKind::Injective
        };
        kind = kind.max(k);
    }
    kind
}

/// Whether `small` is `big` with some entries dropped (order kept); literal
/// zeros in `small` stand for broadcast dims and are skipped.
fn is_subsequence(small: &[PrimExpr], big: &[PrimExpr]) -> bool {
    let mut it = big.iter();
    small
        .iter()
        .filter(|e| e.as_int() != Some(0))
        .all(|e| it.any(|b| b == e))
}
