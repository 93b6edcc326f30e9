//! `compute_inline`: replaces the reads of an intermediate buffer by the
//! expression that computes it (TVM's `compute_inline` schedule primitive),
//! so an elementwise chain becomes one loop nest.
//!
//! 1. The *producer* must be one canonical nest: loops around a block whose
//!    iteration variables are all spatial, without `init` or allocations,
//!    whose body stores `B[v0, …, vk] = value` with exactly its iteration
//!    variables as indices, where `value` reads only those variables (and
//!    symbolic shape variables) and not `B`. No other statement may store
//!    to `B`.
//! 2. Every *consumer* read `B[e0, …, ek]` becomes `value` with each `vi`
//!    replaced by `ei`; a consumer block's read region of `B` (a point, as
//!    in the blocks `LegalizeOps` makes) becomes the producer's read
//!    regions at that point. A consumer that reads `B` over a wider region
//!    keeps `B`: nothing is inlined then. Neither is a producer that
//!    computes something into a consumer with reduce iteration variables
//!    (a matmul would recompute it at every step of its reduction); a
//!    producer that only moves data (its value one load: a transpose, a
//!    reshape) is inlined there too, which turns `x · transpose(w)` into a
//!    matmul reading `w` with swapped indices. So is a *grouped
//!    dequantize*, a value that converts to floats integers loaded at an
//!    index that divides one of its iteration variables by a constant
//!    (int8 or 4-bit weights stored in groups along an axis, or packed two
//!    to a byte, times their group's scale): recomputed at each step, it
//!    costs a few instructions on bytes loaded from memory, where a float
//!    copy of the weights would cost four bytes a weight written and read
//!    again, and a matrix-vector product (a decoder's token) computes each
//!    weight once anyway. A dequantize read in place (a QDQ model's
//!    activations, a per-channel scale) stays a buffer, as before.
//! 3. The producer nest is removed; the caller drops `B`'s allocation.

use super::buffer_uses::{expr_reads, stmt_reads};
use super::{Block, Buffer, BufferRegion, IterKind, Stmt};
use crate::ir::prim_expr::{PrimExpr, PrimExprKind, TirVar};
use std::collections::HashMap;

/// `body` with `buffer`'s producer inlined into its readers, or `None`
/// when the rules of the module docs do not hold.
pub fn compute_inline(body: &Stmt, buffer: &Buffer) -> Option<Stmt> {
    let mut stores = 0;
    count_stores(body, buffer, &mut stores);
    if stores != 1 {
        return None;
    }
    let producer = find_producer(body, buffer)?;
    let mut ok = true;
    let out = rewrite(body, buffer, &producer, &mut ok)?;
    ok.then_some(out)
}

/// The producer's block: its iteration variables, stored value and reads.
struct Producer {
    vars: Vec<TirVar>,
    value: PrimExpr,
    reads: Vec<BufferRegion>,
}

impl Producer {
    /// Whether the value is one load (data movement only).
    fn moves_data(&self) -> bool {
        matches!(self.value.kind(), PrimExprKind::BufferLoad(..))
    }

    /// Whether the value converts to floats integers loaded at an index
    /// that divides one of the iteration variables by a constant (a
    /// grouped dequantize; see the module docs).
    fn dequantizes(&self) -> bool {
        let vars = &self.vars;
        let divides = |e: &PrimExpr| -> bool {
            fn any(e: &PrimExpr, f: &dyn Fn(&PrimExpr) -> bool) -> bool {
                f(e) || e.children().into_iter().any(|c| any(c, f))
            }
            any(e, &|x| match x.kind() {
                PrimExprKind::Div(a, c) | PrimExprKind::Mod(a, c) => {
                    c.as_int().is_some_and(|c| c > 1)
                        && a.free_vars().iter().any(|v| vars.contains(v))
                }
                _ => false,
            })
        };
        let grouped_load = |e: &PrimExpr| -> bool {
            fn loads(e: &PrimExpr, out: &mut Vec<Vec<PrimExpr>>) {
                if let PrimExprKind::BufferLoad(b, idx) = e.kind() {
                    if b.dtype().is_integer() && !b.dtype().is_bool() {
                        out.push(idx.clone());
                    }
                }
                for c in e.children() {
                    loads(c, out);
                }
            }
            let mut found = Vec::new();
            loads(e, &mut found);
            found.iter().flatten().any(divides)
        };
        fn casts<'a>(e: &'a PrimExpr, out: &mut Vec<&'a PrimExpr>) {
            match e.kind() {
                PrimExprKind::Cast(a)
                    if e.dtype().is_float() && a.dtype().is_integer() && !a.dtype().is_bool() =>
                {
                    out.push(a)
                }
                _ => e.children().into_iter().for_each(|c| casts(c, out)),
            }
        }
        let mut converted = Vec::new();
        casts(&self.value, &mut converted);
        converted.into_iter().any(grouped_load)
    }
}

impl Producer {
    /// The value at the point `indices`.
    fn at(&self, indices: &[PrimExpr]) -> PrimExpr {
        let map: HashMap<TirVar, PrimExpr> = self
            .vars
            .iter()
            .cloned()
            .zip(indices.iter().cloned())
            .collect();
        self.value.substitute_map(&map)
    }
}

fn count_stores(s: &Stmt, buffer: &Buffer, n: &mut usize) {
    match s {
        Stmt::BufferStore { buffer: b, .. } => {
            if b.id() == buffer.id() {
                *n += 1;
            }
        }
        Stmt::Block(b) => {
            if let Some(init) = &b.init {
                count_stores(init, buffer, n);
            }
            count_stores(&b.body, buffer, n);
        }
        Stmt::For { body, .. } | Stmt::Allocate { body, .. } | Stmt::LetStmt { body, .. } => {
            count_stores(body, buffer, n)
        }
        Stmt::IfThenElse {
            then_case,
            else_case,
            ..
        } => {
            count_stores(then_case, buffer, n);
            if let Some(e) = else_case {
                count_stores(e, buffer, n);
            }
        }
        Stmt::Seq(stmts) => stmts.iter().for_each(|x| count_stores(x, buffer, n)),
        Stmt::Evaluate(_) => {}
    }
}

/// Whether `s` is the producer nest of `buffer` (point 1), and its block.
fn producer_block<'a>(s: &'a Stmt, buffer: &Buffer) -> Option<&'a Block> {
    let mut cur = s;
    while let Stmt::For { body, .. } = cur {
        cur = body;
    }
    let Stmt::Block(b) = cur else { return None };
    if b.init.is_some()
        || !b.alloc_buffers.is_empty()
        || b.iter_vars.iter().any(|iv| iv.kind != IterKind::Spatial)
    {
        return None;
    }
    let Stmt::BufferStore {
        buffer: stored,
        value,
        indices,
    } = b.body.as_ref()
    else {
        return None;
    };
    if stored.id() != buffer.id() || indices.len() != b.iter_vars.len() {
        return None;
    }
    let exact = indices
        .iter()
        .zip(&b.iter_vars)
        .all(|(i, iv)| i.as_var() == Some(&iv.var));
    if !exact || expr_reads(value, buffer) {
        return None;
    }
    Some(b)
}

fn find_producer(s: &Stmt, buffer: &Buffer) -> Option<Producer> {
    if let Some(b) = producer_block(s, buffer) {
        let Stmt::BufferStore { value, .. } = b.body.as_ref() else {
            return None;
        };
        // The value may only use the block's own variables and variables
        // bound outside the nest (symbolic shapes), never its loops'.
        let mut loops = Vec::new();
        let mut cur = s;
        while let Stmt::For { loop_var, body, .. } = cur {
            loops.push(loop_var.clone());
            cur = body;
        }
        if value.free_vars().iter().any(|v| loops.contains(v)) {
            return None;
        }
        return Some(Producer {
            vars: b.iter_vars.iter().map(|iv| iv.var.clone()).collect(),
            value: value.clone(),
            reads: b.reads.clone(),
        });
    }
    match s {
        Stmt::Seq(stmts) => stmts.iter().find_map(|x| find_producer(x, buffer)),
        Stmt::Block(b) if b.iter_vars.is_empty() => find_producer(&b.body, buffer),
        Stmt::Allocate { body, .. } | Stmt::LetStmt { body, .. } => find_producer(body, buffer),
        _ => None,
    }
}

/// `e` with every read of `buffer` replaced by the producer's value.
fn inline_expr(e: &PrimExpr, buffer: &Buffer, p: &Producer) -> PrimExpr {
    match e.kind() {
        PrimExprKind::BufferLoad(b, idx) if b.id() == buffer.id() => {
            let idx: Vec<PrimExpr> = idx.iter().map(|i| inline_expr(i, buffer, p)).collect();
            p.at(&idx)
        }
        _ => e.map_children(|c| inline_expr(c, buffer, p)),
    }
}

/// The statement without the producer nest and with its value inlined;
/// `ok` turns false when a consumer breaks the rules (point 2).
fn rewrite(s: &Stmt, buffer: &Buffer, p: &Producer, ok: &mut bool) -> Option<Stmt> {
    if producer_block(s, buffer).is_some() {
        return None;
    }
    let e = |x: &PrimExpr| inline_expr(x, buffer, p);
    Some(match s {
        Stmt::Seq(stmts) => Stmt::Seq(
            stmts
                .iter()
                .filter_map(|x| rewrite(x, buffer, p, ok))
                .collect(),
        ),
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
            body: Box::new(rewrite(body, buffer, p, ok).unwrap_or_else(Stmt::no_op)),
            annotations: annotations.clone(),
        },
        Stmt::Block(b) => {
            let reads_b = b.reads.iter().any(|r| r.buffer.id() == buffer.id())
                || stmt_reads(&b.body, buffer)
                || b.init.as_ref().is_some_and(|i| stmt_reads(i, buffer));
            if reads_b
                && !p.moves_data()
                && !p.dequantizes()
                && b.iter_vars.iter().any(|iv| iv.kind == IterKind::Reduce)
            {
                *ok = false;
            }
            let mut reads = Vec::new();
            for r in &b.reads {
                if r.buffer.id() != buffer.id() {
                    reads.push(r.clone());
                    continue;
                }
                if r.region.iter().any(|(_, ext)| ext.as_int() != Some(1)) {
                    *ok = false;
                    continue;
                }
                let point: Vec<PrimExpr> = r.region.iter().map(|(min, _)| min.clone()).collect();
                let map: HashMap<TirVar, PrimExpr> = p.vars.iter().cloned().zip(point).collect();
                for pr in &p.reads {
                    reads.push(BufferRegion {
                        buffer: pr.buffer.clone(),
                        region: pr
                            .region
                            .iter()
                            .map(|(m, x)| (m.substitute_map(&map), x.substitute_map(&map)))
                            .collect(),
                    });
                }
            }
            Stmt::Block(Box::new(Block {
                name: b.name.clone(),
                iter_vars: b.iter_vars.clone(),
                iter_values: b.iter_values.iter().map(e).collect(),
                reads,
                writes: b.writes.clone(),
                init: b
                    .init
                    .as_ref()
                    .map(|i| Box::new(rewrite(i, buffer, p, ok).unwrap_or_else(Stmt::no_op))),
                body: Box::new(rewrite(&b.body, buffer, p, ok).unwrap_or_else(Stmt::no_op)),
                alloc_buffers: b.alloc_buffers.clone(),
                annotations: b.annotations.clone(),
            }))
        }
        Stmt::BufferStore {
            buffer: target,
            value,
            indices,
        } => Stmt::BufferStore {
            buffer: target.clone(),
            value: e(value),
            indices: indices.iter().map(e).collect(),
        },
        Stmt::Allocate { buffer: a, body } => Stmt::Allocate {
            buffer: a.clone(),
            body: Box::new(rewrite(body, buffer, p, ok).unwrap_or_else(Stmt::no_op)),
        },
        Stmt::IfThenElse {
            cond,
            then_case,
            else_case,
        } => Stmt::IfThenElse {
            cond: e(cond),
            then_case: Box::new(rewrite(then_case, buffer, p, ok).unwrap_or_else(Stmt::no_op)),
            else_case: else_case
                .as_ref()
                .map(|x| Box::new(rewrite(x, buffer, p, ok).unwrap_or_else(Stmt::no_op))),
        },
        Stmt::LetStmt { var, value, body } => Stmt::LetStmt {
            var: var.clone(),
            value: e(value),
            body: Box::new(rewrite(body, buffer, p, ok).unwrap_or_else(Stmt::no_op)),
        },
        Stmt::Evaluate(x) => Stmt::Evaluate(e(x)),
    })
}
