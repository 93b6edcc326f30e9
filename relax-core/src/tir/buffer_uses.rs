//! Where a buffer is used: whether an expression or a statement loads it,
//! and whether a statement stores to it.

use super::{Buffer, Stmt};
use crate::ir::prim_expr::{PrimExpr, PrimExprKind};

/// Whether `e` loads from `buffer`.
pub fn expr_reads(e: &PrimExpr, buffer: &Buffer) -> bool {
    match e.kind() {
        PrimExprKind::BufferLoad(b, _) if b == buffer => true,
        _ => e.children().into_iter().any(|c| expr_reads(c, buffer)),
    }
}

/// Whether any expression of `s` loads from `buffer`: values, indices,
/// conditions, loop bounds, block bindings and inits.
pub fn stmt_reads(s: &Stmt, buffer: &Buffer) -> bool {
    let e = |x: &PrimExpr| expr_reads(x, buffer);
    match s {
        Stmt::For {
            min, extent, body, ..
        } => e(min) || e(extent) || stmt_reads(body, buffer),
        Stmt::Block(b) => {
            b.iter_values.iter().any(e)
                || b.init.as_deref().is_some_and(|i| stmt_reads(i, buffer))
                || stmt_reads(&b.body, buffer)
        }
        Stmt::BufferStore { value, indices, .. } => e(value) || indices.iter().any(e),
        Stmt::Allocate { body, .. } => stmt_reads(body, buffer),
        Stmt::IfThenElse {
            cond,
            then_case,
            else_case,
        } => {
            e(cond)
                || stmt_reads(then_case, buffer)
                || else_case.as_deref().is_some_and(|x| stmt_reads(x, buffer))
        }
        Stmt::LetStmt { value, body, .. } => e(value) || stmt_reads(body, buffer),
        Stmt::Evaluate(x) => e(x),
        Stmt::Seq(ss) => ss.iter().any(|x| stmt_reads(x, buffer)),
    }
}

/// Whether `s` stores to `buffer` anywhere (block inits included).
pub fn stmt_writes(s: &Stmt, buffer: &Buffer) -> bool {
    match s {
        Stmt::BufferStore { buffer: b, .. } => b == buffer,
        Stmt::For { body, .. } | Stmt::Allocate { body, .. } | Stmt::LetStmt { body, .. } => {
            stmt_writes(body, buffer)
        }
        Stmt::Block(b) => {
            b.init.as_deref().is_some_and(|i| stmt_writes(i, buffer))
                || stmt_writes(&b.body, buffer)
        }
        Stmt::IfThenElse {
            then_case,
            else_case,
            ..
        } => {
            stmt_writes(then_case, buffer)
                || else_case.as_deref().is_some_and(|x| stmt_writes(x, buffer))
        }
        Stmt::Evaluate(_) => false,
        Stmt::Seq(ss) => ss.iter().any(|x| stmt_writes(x, buffer)),
    }
}

/// Whether `s` loads from or stores to `buffer`.
pub fn stmt_uses(s: &Stmt, buffer: &Buffer) -> bool {
    stmt_reads(s, buffer) || stmt_writes(s, buffer)
}
