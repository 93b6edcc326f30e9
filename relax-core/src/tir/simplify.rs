//! `simplify`: a PrimFunc's buffer indices in canonical form under what its
//! loops tell about their variables (TVM's `tir.transform.Simplify`).
//!
//! 1. **Facts.** Every symbolic dim of a buffer shape is non-negative; each
//!    loop variable and block iteration variable runs over `[0, extent)`
//!    ([`Analyzer::bind_loop`]), a symbolic extent included, inside its
//!    loop or block.
//! 2. **What is rewritten.** The indices of every load and store and the
//!    bounds of block regions: integer expressions only, so no float
//!    arithmetic is reordered. Values, conditions and loop bounds keep
//!    their form apart from the indices of the loads in them.
//! 3. **Why.** Inlining a reshape into a transpose into a reshape (BERT's
//!    split into heads, on `(batch, seq, 128)`) leaves indices like
//!    `((b * seq + j) // seq, (b * seq + j) % seq, …)`, several divisions by
//!    a run-time value per element; under `j < seq` they are `(b, j, …)`.

use super::{Block, BufferRegion, PrimFunc, Stmt};
use crate::arith::Analyzer;
use crate::ir::prim_expr::{PrimExpr, PrimExprKind};

/// `func` with its indices simplified (module docs).
pub fn simplify(func: &PrimFunc) -> PrimFunc {
    let mut facts = Analyzer::new();
    for b in func.buffers() {
        for d in b.shape() {
            for v in d.free_vars() {
                facts.mark_non_negative(&v);
            }
        }
    }
    PrimFunc {
        params: func.params.clone(),
        body: stmt(&func.body, &facts),
        attrs: func.attrs.clone(),
    }
}

fn index(e: &PrimExpr, a: &Analyzer) -> PrimExpr {
    let e = loads(e, a);
    if e.dtype().is_int() {
        a.simplify(&e)
    } else {
        e
    }
}

/// `e` with the indices of its loads simplified.
fn loads(e: &PrimExpr, a: &Analyzer) -> PrimExpr {
    match e.kind() {
        PrimExprKind::BufferLoad(b, idx) => {
            PrimExpr::load(b, idx.iter().map(|i| index(i, a)).collect())
        }
        _ => e.map_children(|c| loads(c, a)),
    }
}

fn region(r: &BufferRegion, a: &Analyzer) -> BufferRegion {
    BufferRegion {
        buffer: r.buffer.clone(),
        region: r
            .region
            .iter()
            .map(|(lo, n)| (index(lo, a), n.clone()))
            .collect(),
    }
}

fn stmt(s: &Stmt, a: &Analyzer) -> Stmt {
    match s {
        Stmt::For {
            loop_var,
            min,
            extent,
            kind,
            body,
            annotations,
        } => {
            let mut inner = a.clone();
            if min.as_int() == Some(0) {
                inner.bind_loop(loop_var, extent);
            }
            Stmt::For {
                loop_var: loop_var.clone(),
                min: min.clone(),
                extent: extent.clone(),
                kind: *kind,
                body: Box::new(stmt(body, &inner)),
                annotations: annotations.clone(),
            }
        }
        Stmt::Block(b) => {
            let mut inner = a.clone();
            for iv in &b.iter_vars {
                if iv.min.as_int() == Some(0) {
                    inner.bind_loop(&iv.var, &iv.extent);
                }
            }
            Stmt::Block(Box::new(Block {
                iter_values: b.iter_values.iter().map(|v| index(v, a)).collect(),
                reads: b.reads.iter().map(|r| region(r, &inner)).collect(),
                writes: b.writes.iter().map(|r| region(r, &inner)).collect(),
                init: b.init.as_ref().map(|i| Box::new(stmt(i, &inner))),
                body: Box::new(stmt(&b.body, &inner)),
                ..(**b).clone()
            }))
        }
        Stmt::BufferStore {
            buffer,
            value,
            indices,
        } => Stmt::BufferStore {
            buffer: buffer.clone(),
            value: loads(value, a),
            indices: indices.iter().map(|i| index(i, a)).collect(),
        },
        Stmt::IfThenElse {
            cond,
            then_case,
            else_case,
        } => Stmt::IfThenElse {
            cond: loads(cond, a),
            then_case: Box::new(stmt(then_case, a)),
            else_case: else_case.as_ref().map(|e| Box::new(stmt(e, a))),
        },
        Stmt::LetStmt { var, value, body } => Stmt::LetStmt {
            var: var.clone(),
            value: loads(value, a),
            body: Box::new(stmt(body, a)),
        },
        Stmt::Evaluate(e) => Stmt::Evaluate(loads(e, a)),
        Stmt::Allocate { buffer, body } => Stmt::Allocate {
            buffer: buffer.clone(),
            body: Box::new(stmt(body, a)),
        },
        Stmt::Seq(items) => Stmt::Seq(items.iter().map(|x| stmt(x, a)).collect()),
    }
}
