//! `compact_buffer_allocation`: each intermediate buffer of the root block
//! shrinks to the region one iteration of its innermost enclosing loops
//! touches, and is allocated there (TVM's `CompactBufferAllocation`). After
//! `cache_write` and `reverse_compute_at`, a matrix-sized cache becomes the
//! register tile the schedule meant.
//!
//! 1. **Where.** A buffer `X` the root block allocates moves down to the
//!    deepest statement `L` holding every use of `X` (loads, stores, block
//!    regions) that is not inside a block with iteration variables:
//!    descending stops at a statement with two children that use `X`, or at
//!    the block itself. The loops above `L` fix their variables; the loops
//!    in `L` run over their ranges, which must be constants.
//! 2. **Region.** Each access's index (through its block's bindings) must
//!    be affine in the loops of `L`. Per dimension, its lowest and highest
//!    value over those loops give `[lo, hi]` in the loops above `L`; the
//!    union over the accesses takes the bound the analyzer proves lowest
//!    (highest). The new extent `hi - lo + 1` must be a constant, or the
//!    dimension keeps its extent and `lo = 0`.
//! 3. **Result.** When some dimension shrinks, `X` becomes `X` of the new
//!    extents, allocated around `L`; every access `X[i…]` becomes
//!    `X[i - lo, …]`, and block regions shift the same way. A buffer any
//!    analysis step fails for is left as it is.

use super::schedule::compute_at::{bounds, collect_loops};
use super::schedule::tree::{self, map_children};
use super::{Block, Buffer, BufferRegion, PrimFunc, Stmt};
use crate::arith::Analyzer;
use crate::ir::prim_expr::{PrimExpr, PrimExprKind};

/// `func` with its root block's intermediates compacted (module docs).
pub fn compact_buffer_allocation(func: &PrimFunc) -> PrimFunc {
    let Stmt::Block(root) = &func.body else {
        return func.clone();
    };
    if !root.iter_vars.is_empty() {
        return func.clone();
    }
    let mut root = (**root).clone();
    for x in root.alloc_buffers.clone() {
        if let Some(body) = compact(&root.body, &x) {
            root.body = Box::new(body);
            root.alloc_buffers.retain(|b| *b != x);
        }
    }
    PrimFunc {
        params: func.params.clone(),
        body: Stmt::Block(Box::new(root)),
        attrs: func.attrs.clone(),
    }
}

/// Whether `s` uses `x`: loads, stores or a block region.
fn uses(s: &Stmt, x: &Buffer) -> bool {
    super::buffer_uses::stmt_uses(s, x)
        || tree::realizes(s)
            .iter()
            .any(|(_, b)| b.reads.iter().chain(&b.writes).any(|r| r.buffer == *x))
}

/// `s` with `x` compacted at the statement the module docs' step 1
/// finds, under the loops `outer` above `s`; `None` when nothing changes.
fn compact(s: &Stmt, x: &Buffer) -> Option<Stmt> {
    fn go(s: &Stmt, x: &Buffer, under_loop: bool) -> Option<Stmt> {
        let users: Vec<&Stmt> = tree::children(s)
            .into_iter()
            .filter(|c| uses(c, x))
            .collect();
        let descend = match s {
            Stmt::For { .. } | Stmt::Seq(_) | Stmt::LetStmt { .. } | Stmt::Allocate { .. } => {
                users.len() == 1 && tree::as_realize(users[0]).is_none()
            }
            _ => false,
        };
        if descend {
            let inner = under_loop || matches!(s, Stmt::For { .. });
            let mut changed = None;
            let out = map_children(s, &mut |c| {
                if changed.is_none() && uses(c, x) {
                    changed = go(c, x, inner);
                    if let Some(n) = &changed {
                        return Ok(n.clone());
                    }
                }
                Ok(c.clone())
            })
            .expect("infallible");
            return changed.map(|_| out);
        }
        // `s` is the place; it must sit under a loop (or be one) for a
        // region smaller than the buffer to exist.
        if !under_loop && !matches!(s, Stmt::For { .. }) {
            return None;
        }
        rewrite_at(s, x)
    }
    go(s, x, false)
}

/// Every access of `x` in `s` as index tuples over loop variables: loads
/// and stores (through block bindings), and the first and last point of
/// each block region.
fn accesses(s: &Stmt, x: &Buffer) -> Option<Vec<Vec<PrimExpr>>> {
    let mut out = Vec::new();
    // Outside any block.
    let mut raw = Vec::new();
    tree::loads(s, x, &mut raw);
    stores(s, x, &mut raw);
    out.extend(raw);
    for (_, b) in tree::realizes(s) {
        let map = tree::bindings(b);
        let mut raw = Vec::new();
        for r in b.reads.iter().chain(&b.writes).filter(|r| r.buffer == *x) {
            raw.extend(tree::region_corners(r)?);
        }
        tree::loads(&b.body, x, &mut raw);
        stores(&b.body, x, &mut raw);
        if let Some(init) = &b.init {
            tree::loads(init, x, &mut raw);
            stores(init, x, &mut raw);
        }
        out.extend(
            raw.into_iter()
                .map(|idx| idx.iter().map(|e| e.substitute_map(&map)).collect()),
        );
    }
    Some(out)
}

/// The index tuples of the stores to `x` in `s`, outside nested blocks.
fn stores(s: &Stmt, x: &Buffer, out: &mut Vec<Vec<PrimExpr>>) {
    if let Stmt::BufferStore {
        buffer, indices, ..
    } = s
    {
        if buffer == x {
            out.push(indices.clone());
        }
    }
    for c in tree::children(s) {
        if !matches!(c, Stmt::Block(_)) {
            stores(c, x, out);
        }
    }
}

/// `s` (the place) with `x` compacted and allocated around it, or `None`.
fn rewrite_at(s: &Stmt, x: &Buffer) -> Option<Stmt> {
    let mut inner = Vec::new();
    let mut bad = None;
    collect_loops(s, &mut inner, &mut bad);
    if bad.is_some() {
        return None;
    }
    let points = accesses(s, x)?;
    if points.is_empty() {
        return None;
    }
    let a = Analyzer::new();
    let mut lows = Vec::new();
    let mut extents = Vec::new();
    let mut shrinks = false;
    for (d, dim) in x.shape().iter().enumerate() {
        let mut region: Option<(PrimExpr, PrimExpr)> = None;
        for p in &points {
            let (lo, hi) = bounds(p.get(d)?, &inner, &a)?;
            region = Some(match region {
                None => (lo, hi),
                Some((l, h)) => {
                    let l = if a.can_prove(&l.clone().le(lo.clone())) {
                        l
                    } else if a.can_prove(&lo.clone().le(l.clone())) {
                        lo
                    } else {
                        return None;
                    };
                    let h = if a.can_prove(&hi.clone().le(h.clone())) {
                        h
                    } else if a.can_prove(&h.clone().le(hi.clone())) {
                        hi
                    } else {
                        return None;
                    };
                    (l, h)
                }
            });
        }
        let (lo, hi) = region?;
        let one = PrimExpr::int_of(dim.dtype(), 1);
        let extent = a.simplify(&(hi - lo.clone() + one)).as_int();
        match (extent, dim.as_int()) {
            (Some(n), Some(full)) if n < full && n > 0 => {
                shrinks = true;
                lows.push(lo);
                extents.push(PrimExpr::int_of(dim.dtype(), n));
            }
            (Some(n), None) if n > 0 => {
                shrinks = true;
                lows.push(lo);
                extents.push(PrimExpr::int_of(dim.dtype(), n));
            }
            _ => {
                lows.push(PrimExpr::int_of(dim.dtype(), 0));
                extents.push(dim.clone());
            }
        }
    }
    if !shrinks {
        return None;
    }
    let compacted = Buffer::new(x.name(), extents, x.dtype());
    let compacted = if x.scope() == "global" {
        compacted
    } else {
        compacted.with_scope(x.scope())
    };
    let shift = Shift {
        from: x,
        to: &compacted,
        lows: &lows,
        analyzer: &a,
    };
    Some(Stmt::Allocate {
        buffer: compacted.clone(),
        body: Box::new(shift.stmt(s)),
    })
}

/// Accesses of `from` rewritten to `to`, each index less its `lows`.
struct Shift<'a> {
    from: &'a Buffer,
    to: &'a Buffer,
    lows: &'a [PrimExpr],
    analyzer: &'a Analyzer,
}

impl Shift<'_> {
    fn index(&self, idx: &[PrimExpr]) -> Vec<PrimExpr> {
        idx.iter()
            .zip(self.lows)
            .map(|(i, lo)| self.analyzer.simplify(&(self.expr(i) - lo.clone())))
            .collect()
    }

    fn expr(&self, e: &PrimExpr) -> PrimExpr {
        match e.kind() {
            PrimExprKind::BufferLoad(b, idx) if b == self.from => {
                PrimExpr::load(self.to, self.index(idx))
            }
            _ => e.map_children(|c| self.expr(c)),
        }
    }

    fn region(&self, r: &BufferRegion) -> BufferRegion {
        if r.buffer != *self.from {
            return r.clone();
        }
        let starts: Vec<PrimExpr> = r.region.iter().map(|(lo, _)| lo.clone()).collect();
        BufferRegion {
            buffer: self.to.clone(),
            region: self
                .index(&starts)
                .into_iter()
                .zip(&r.region)
                .map(|(lo, (_, n))| (lo, n.clone()))
                .collect(),
        }
    }

    fn stmt(&self, s: &Stmt) -> Stmt {
        let s = match s {
            Stmt::BufferStore {
                buffer,
                value,
                indices,
            } => {
                return if buffer == self.from {
                    Stmt::BufferStore {
                        buffer: self.to.clone(),
                        value: self.expr(value),
                        indices: self.index(indices),
                    }
                } else {
                    Stmt::BufferStore {
                        buffer: buffer.clone(),
                        value: self.expr(value),
                        indices: indices.iter().map(|i| self.expr(i)).collect(),
                    }
                }
            }
            Stmt::Block(b) => Stmt::Block(Box::new(Block {
                iter_values: b.iter_values.iter().map(|v| self.expr(v)).collect(),
                reads: b.reads.iter().map(|r| self.region(r)).collect(),
                writes: b.writes.iter().map(|r| self.region(r)).collect(),
                ..(**b).clone()
            })),
            Stmt::IfThenElse {
                cond,
                then_case,
                else_case,
            } => Stmt::IfThenElse {
                cond: self.expr(cond),
                then_case: then_case.clone(),
                else_case: else_case.clone(),
            },
            Stmt::LetStmt { var, value, body } => Stmt::LetStmt {
                var: var.clone(),
                value: self.expr(value),
                body: body.clone(),
            },
            Stmt::Evaluate(e) => Stmt::Evaluate(self.expr(e)),
            _ => s.clone(),
        };
        map_children(&s, &mut |c| Ok(self.stmt(c))).expect("infallible")
    }
}

#[cfg(test)]
mod tests;
