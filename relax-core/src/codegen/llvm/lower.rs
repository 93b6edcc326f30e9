//! Lowering before code generation: TensorIR blocks to plain statements.
//!
//! 1. A block becomes its body with every iteration variable replaced by its
//!    bound value (`iter_values`), so the rest of the back end only sees
//!    loops, stores, lets, conditionals and allocations.
//! 2. `init` runs under the guard that every reduce variable's value equals
//!    the minimum of its domain: the first iteration of the reduction, as in
//!    TVM's `LowerInitBlock`. Without reduce variables the init runs every
//!    time.
//! 3. `alloc_buffers` become `Allocate` statements around the block's
//!    statements, so the buffers live exactly as long as the block.
//! 4. Nested blocks are lowered first, so substituting an outer block's
//!    variables reaches the values of the inner blocks' variables.
//!
//! The output is again a [`Stmt`], free of `Stmt::Block`.

use crate::ir::prim_expr::{PrimExpr, TirVar};
use crate::tir::{Block, IterKind, Stmt};
use relax_runtime::Error;
use std::collections::HashMap;

/// `stmt` without blocks. See the module docs.
pub fn lower_blocks(stmt: &Stmt) -> Result<Stmt, Error> {
    match stmt {
        Stmt::Block(block) => lower_block(block),
        other => other.try_map_children(lower_blocks),
    }
}

fn lower_block(block: &Block) -> Result<Stmt, Error> {
    if block.iter_vars.len() != block.iter_values.len() {
        return Err(Error::Unsupported(format!(
            "block `{}` has {} iteration variables but {} values",
            block.name,
            block.iter_vars.len(),
            block.iter_values.len()
        )));
    }
    let map: HashMap<TirVar, PrimExpr> = block
        .iter_vars
        .iter()
        .zip(&block.iter_values)
        .map(|(iv, value)| (iv.var.clone(), value.clone()))
        .collect();
    let body = substitute(&lower_blocks(&block.body)?, &map);
    let mut stmt = match &block.init {
        None => body,
        Some(init) => {
            let init = substitute(&lower_blocks(init)?, &map);
            let guard = block
                .iter_vars
                .iter()
                .zip(&block.iter_values)
                .filter(|(iv, _)| iv.kind == IterKind::Reduce)
                .map(|(iv, value)| value.clone().eq_(iv.min.substitute_map(&map)))
                .reduce(|a, b| a.and(b));
            let init = match guard {
                Some(cond) => Stmt::IfThenElse {
                    cond,
                    then_case: Box::new(init),
                    else_case: None,
                },
                None => init,
            };
            Stmt::Seq(vec![init, body])
        }
    };
    for buffer in block.alloc_buffers.iter().rev() {
        stmt = Stmt::Allocate {
            buffer: buffer.clone(),
            body: Box::new(stmt),
        };
    }
    Ok(stmt)
}

/// `stmt` with the variables of `map` replaced in every expression. Buffer
/// shapes are left alone: they are in terms of function parameters.
pub fn substitute(stmt: &Stmt, map: &HashMap<TirVar, PrimExpr>) -> Stmt {
    if map.is_empty() {
        return stmt.clone();
    }
    let e = |x: &PrimExpr| x.substitute_map(map);
    let s = |x: &Stmt| Box::new(substitute(x, map));
    match stmt {
        Stmt::For {
            loop_var,
            min,
            extent,
            kind,
            body,
            annotations,
        } => Stmt::For {
            loop_var: loop_var.clone(),
            min: e(min),
            extent: e(extent),
            kind: *kind,
            body: s(body),
            annotations: annotations.clone(),
        },
        Stmt::Block(block) => {
            let mut block = (**block).clone();
            block.iter_values = block.iter_values.iter().map(e).collect();
            for iv in &mut block.iter_vars {
                iv.min = e(&iv.min);
                iv.extent = e(&iv.extent);
            }
            block.init = block.init.as_deref().map(s);
            block.body = s(&block.body);
            Stmt::Block(Box::new(block))
        }
        Stmt::BufferStore {
            buffer,
            value,
            indices,
        } => Stmt::BufferStore {
            buffer: buffer.clone(),
            value: e(value),
            indices: indices.iter().map(e).collect(),
        },
        Stmt::Allocate { buffer, body } => Stmt::Allocate {
            buffer: buffer.clone(),
            body: s(body),
        },
        Stmt::IfThenElse {
            cond,
            then_case,
            else_case,
        } => Stmt::IfThenElse {
            cond: e(cond),
            then_case: s(then_case),
            else_case: else_case.as_deref().map(s),
        },
        Stmt::LetStmt { var, value, body } => Stmt::LetStmt {
            var: var.clone(),
            value: e(value),
            body: s(body),
        },
        Stmt::Evaluate(x) => Stmt::Evaluate(e(x)),
        Stmt::Seq(stmts) => Stmt::Seq(stmts.iter().map(|x| substitute(x, map)).collect()),
    }
}
