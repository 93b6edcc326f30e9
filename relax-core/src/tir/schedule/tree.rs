//! Finding and rewriting loops and blocks in a statement tree: the
//! navigation every schedule primitive shares.
//!
//! A *realize* is a block as it sits under its loops: the [`Stmt::Block`]
//! itself, or an `IfThenElse` without else around it (the block's
//! predicate, see the [module docs](super)).

use super::{Result, ScheduleError};
use crate::ir::prim_expr::{PrimExpr, PrimExprKind, TirVar};
use crate::tir::Buffer;
use crate::tir::{Block, Stmt};

/// `s` with `f` applied to each direct child statement
/// ([`Stmt::try_map_children`] with the schedule's error type).
pub fn map_children(s: &Stmt, f: &mut dyn FnMut(&Stmt) -> Result<Stmt>) -> Result<Stmt> {
    s.try_map_children(f)
}

/// The direct child statements of `s`.
pub fn children(s: &Stmt) -> Vec<&Stmt> {
    match s {
        Stmt::For { body, .. } | Stmt::Allocate { body, .. } | Stmt::LetStmt { body, .. } => {
            vec![body]
        }
        Stmt::Block(b) => b.init.iter().map(|i| &**i).chain([&*b.body]).collect(),
        Stmt::IfThenElse {
            then_case,
            else_case,
            ..
        } => [&**then_case]
            .into_iter()
            .chain(else_case.as_deref())
            .collect(),
        Stmt::Seq(v) => v.iter().collect(),
        Stmt::BufferStore { .. } | Stmt::Evaluate(_) => vec![],
    }
}

/// The predicate and block of a realize, if `s` is one.
pub fn as_realize(s: &Stmt) -> Option<(Option<&PrimExpr>, &Block)> {
    match s {
        Stmt::Block(b) => Some((None, b)),
        Stmt::IfThenElse {
            cond,
            then_case,
            else_case: None,
        } => match &**then_case {
            Stmt::Block(b) => Some((Some(cond), b)),
            _ => None,
        },
        _ => None,
    }
}

/// The loop `for v in …` in `s`.
pub fn find_loop<'a>(s: &'a Stmt, v: &TirVar) -> Option<&'a Stmt> {
    if let Stmt::For { loop_var, .. } = s {
        if loop_var == v {
            return Some(s);
        }
    }
    children(s).into_iter().find_map(|c| find_loop(c, v))
}

/// The loops from `s` down to the loop `v`, outermost first, `v` last
/// (empty when `v` is not in `s`).
pub fn loop_path(s: &Stmt, v: &TirVar) -> Vec<TirVar> {
    fn go(s: &Stmt, v: &TirVar, path: &mut Vec<TirVar>) -> bool {
        if let Stmt::For { loop_var, .. } = s {
            path.push(loop_var.clone());
            if loop_var == v {
                return true;
            }
        }
        for c in children(s) {
            if go(c, v, path) {
                return true;
            }
        }
        if matches!(s, Stmt::For { .. }) {
            path.pop();
        }
        false
    }
    let mut path = Vec::new();
    go(s, v, &mut path);
    path
}

/// `s` with the loop `for v in …` replaced by `f(that loop)`; an `Err`
/// when `v` is not in `s`.
pub fn replace_loop(
    s: &Stmt,
    v: &TirVar,
    f: &mut dyn FnMut(&Stmt) -> Result<Stmt>,
) -> Result<Stmt> {
    fn go(
        s: &Stmt,
        v: &TirVar,
        f: &mut dyn FnMut(&Stmt) -> Result<Stmt>,
        found: &mut bool,
    ) -> Result<Stmt> {
        if let Stmt::For { loop_var, .. } = s {
            if loop_var == v {
                *found = true;
                return f(s);
            }
        }
        if *found || find_loop(s, v).is_none() {
            return Ok(s.clone());
        }
        map_children(s, &mut |c| go(c, v, f, found))
    }
    let mut found = false;
    let out = go(s, v, f, &mut found)?;
    if !found {
        return Err(ScheduleError::new(format!(
            "loop {} is not in the function",
            v.name()
        )));
    }
    Ok(out)
}

/// Every block named `name` in `s`, each with the loops between it and
/// its parent block (outermost first).
pub fn find_blocks<'a>(s: &'a Stmt, name: &str) -> Vec<(&'a Block, Vec<&'a Stmt>)> {
    fn go<'a>(
        s: &'a Stmt,
        name: &str,
        loops: &mut Vec<&'a Stmt>,
        out: &mut Vec<(&'a Block, Vec<&'a Stmt>)>,
    ) {
        match s {
            Stmt::Block(b) => {
                if b.name == name {
                    out.push((b, loops.clone()));
                }
                let mut inner = Vec::new();
                for c in children(s) {
                    go(c, name, &mut inner, out);
                }
            }
            Stmt::For { body, .. } => {
                loops.push(s);
                go(body, name, loops, out);
                loops.pop();
            }
            _ => {
                for c in children(s) {
                    go(c, name, loops, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    go(s, name, &mut Vec::new(), &mut out);
    out
}

/// The unique block named `name` with its loops, or an `Err` for
/// `primitive`.
pub fn the_block<'a>(
    s: &'a Stmt,
    name: &str,
    primitive: &str,
) -> Result<(&'a Block, Vec<&'a Stmt>)> {
    let mut found = find_blocks(s, name);
    match found.len() {
        1 => Ok(found.pop().expect("one block")),
        0 => Err(ScheduleError::new(format!(
            "{primitive}: no block named {name:?} in the function"
        ))),
        n => Err(ScheduleError::new(format!(
            "{primitive}: {n} blocks are named {name:?}; block names must be unique"
        ))),
    }
}

/// Every realize in `s` (blocks nested in blocks included), with its
/// predicate.
pub fn realizes(s: &Stmt) -> Vec<(Option<&PrimExpr>, &Block)> {
    fn go<'a>(s: &'a Stmt, out: &mut Vec<(Option<&'a PrimExpr>, &'a Block)>) {
        if let Some((p, b)) = as_realize(s) {
            out.push((p, b));
            if let Some(i) = &b.init {
                go(i, out);
            }
            go(&b.body, out);
            return;
        }
        for c in children(s) {
            go(c, out);
        }
    }
    let mut out = Vec::new();
    go(s, &mut out);
    out
}

/// Whether `s` stores to a buffer outside any block.
pub fn has_store_outside_blocks(s: &Stmt) -> bool {
    match s {
        Stmt::BufferStore { .. } => true,
        Stmt::Block(_) => false,
        _ => children(s).into_iter().any(has_store_outside_blocks),
    }
}

/// `s` with `cond` added to the predicate of every realize in it: pushed
/// through loops and sequences down to the blocks, so the loop nest stays
/// perfect; any other statement is wrapped whole.
pub fn add_predicate(s: &Stmt, cond: &PrimExpr) -> Stmt {
    match s {
        Stmt::For { .. } | Stmt::Seq(_) => {
            map_children(s, &mut |c| Ok(add_predicate(c, cond))).expect("infallible")
        }
        Stmt::IfThenElse {
            cond: old,
            then_case,
            else_case: None,
        } if matches!(**then_case, Stmt::Block(_)) => Stmt::IfThenElse {
            cond: old.clone().and(cond.clone()),
            then_case: then_case.clone(),
            else_case: None,
        },
        _ => Stmt::IfThenElse {
            cond: cond.clone(),
            then_case: Box::new(s.clone()),
            else_case: None,
        },
    }
}

/// Every index tuple at which `s` loads `buffer`, outside the blocks
/// nested in it (each block is its own reader).
pub fn loads(s: &Stmt, buffer: &Buffer, out: &mut Vec<Vec<PrimExpr>>) {
    fn expr(e: &PrimExpr, buffer: &Buffer, out: &mut Vec<Vec<PrimExpr>>) {
        if let PrimExprKind::BufferLoad(b, idx) = e.kind() {
            if b == buffer {
                out.push(idx.clone());
            }
        }
        for c in e.children() {
            expr(c, buffer, out);
        }
    }
    match s {
        Stmt::BufferStore { value, indices, .. } => {
            expr(value, buffer, out);
            indices.iter().for_each(|i| expr(i, buffer, out));
        }
        Stmt::IfThenElse { cond, .. } => expr(cond, buffer, out),
        Stmt::LetStmt { value, .. } => expr(value, buffer, out),
        Stmt::Evaluate(e) => expr(e, buffer, out),
        Stmt::For { min, extent, .. } => {
            expr(min, buffer, out);
            expr(extent, buffer, out);
        }
        _ => {}
    }
    for c in children(s) {
        if matches!(c, Stmt::Block(_)) {
            continue;
        }
        loads(c, buffer, out);
    }
}

/// Each iteration variable of `b` with the value it is bound to.
pub fn bindings(b: &Block) -> std::collections::HashMap<TirVar, PrimExpr> {
    b.iter_vars
        .iter()
        .map(|iv| iv.var.clone())
        .zip(b.iter_values.iter().cloned())
        .collect()
}

/// The first and last point of a region, or `None` when an extent is not
/// constant.
pub fn region_corners(r: &crate::tir::BufferRegion) -> Option<[Vec<PrimExpr>; 2]> {
    let first: Vec<PrimExpr> = r.region.iter().map(|(lo, _)| lo.clone()).collect();
    let mut last = Vec::with_capacity(first.len());
    for (lo, n) in &r.region {
        last.push(lo.clone() + PrimExpr::int_of(n.dtype(), n.as_int()? - 1));
    }
    Some([first, last])
}
