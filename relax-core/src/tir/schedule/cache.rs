//! `cache_read` and `cache_write`: a block reads or writes a buffer
//! through a copy of it (TVM's primitives of those names). A `cache_write`
//! lets a later `reverse_compute_at` write a tile back right after
//! computing it; a `cache_read` lets a later `compute_at` copy (and, once
//! layouts are scheduled, repack) a tile of an operand where it is used.
//!
//! `cache_write`:
//!
//! 1. The block must be the only writer of the buffer `X` and write all of
//!    it: its write is `X[v0, …]` at exactly its spatial variables, whose
//!    domains are `X`'s dims, and its predicate, if any, only cuts
//!    iterations outside the domain (each conjunct `e < extent` where
//!    `min + e` is a variable's binding, as `split` makes them). No other
//!    block in the block's loop nest may read `X` (it would read it before
//!    the copy).
//! 2. The cache buffer `X_<scope>` has `X`'s shape and dtype and is
//!    allocated in the root block (or around the body). Storage scopes are
//!    not modelled in this IR: `scope` only names the buffer and the block.
//! 3. The block's stores, loads and regions of `X` (its init included)
//!    use the cache; after the statement holding its nest, a nest of loops
//!    `ax0, ax1, …` over `X`'s shape runs the block `X_<scope>`, which
//!    copies the cache into `X`.
//!
//! `cache_read` (TVM's, with the block as its one consumer,
//! `consumer_blocks=[block]`):
//!
//! 1. The block reads the buffer `X`; nothing in the loop nest holding the
//!    block writes `X` (the copy runs before the nest, so it must see `X`
//!    as every iteration of the nest does).
//! 2. The cache `X_<scope>` has `X`'s shape and dtype and is allocated as
//!    `cache_write`'s is.
//! 3. Right before the statement holding the block's nest, a nest of loops
//!    `ax0, ax1, …` over `X`'s shape runs the block `X_<scope>`, which
//!    copies `X` into the cache; the block's loads and read regions of `X`
//!    use the cache. Other readers of `X` are unchanged.

use super::tree::{self, map_children};
use super::{BlockRV, Instruction, Result, Schedule, ScheduleError};
use crate::arith::Analyzer;
use crate::ir::prim_expr::{PrimExpr, TirVar};
use crate::ir::Attrs;
use crate::tir::buffer_uses::stmt_reads;
use crate::tir::{Block, Buffer, BufferRegion, ForKind, IterKind, IterVar, Stmt, Substitute};

impl Schedule {
    /// Makes `block` write its `write_index`-th written buffer through a
    /// cache (TVM's `cache_write`); returns the copy-back block.
    pub fn cache_write(
        &mut self,
        block: BlockRV,
        write_index: usize,
        storage_scope: &str,
    ) -> Result<BlockRV> {
        let name = self.block_name(block)?;
        let err = |m: String| {
            Err(ScheduleError::new(format!(
                "cache_write: block {name:?} {m}"
            )))
        };
        let body = &self.func.body;
        let (b, loops) = tree::the_block(body, &name, "cache_write")?;
        let Some(w) = b.writes.get(write_index) else {
            return err(format!(
                "writes {} buffers, there is no write {write_index}",
                b.writes.len()
            ));
        };
        let x = w.buffer.clone();
        // Written whole, at exactly the spatial variables.
        let analyzer = Analyzer::new();
        let mut seen = Vec::new();
        for ((lo, n), dim) in w.region.iter().zip(x.shape()) {
            let iv = lo
                .as_var()
                .and_then(|v| b.iter_vars.iter().find(|iv| &iv.var == v));
            let whole = iv.is_some_and(|iv| {
                iv.kind == IterKind::Spatial
                    && !seen.contains(&iv.var)
                    && iv.min.as_int() == Some(0)
                    && analyzer.can_prove_equal(&iv.extent, dim)
            });
            if !whole || n.as_int() != Some(1) {
                return err(format!(
                    "does not write all of {} at exactly its spatial variables",
                    x.name()
                ));
            }
            seen.push(iv.expect("checked").var.clone());
        }
        if stores_outside(body, &x, &name) || b.writes.iter().filter(|g| g.buffer == x).count() != 1
        {
            return err(format!("is not the only writer of {}", x.name()));
        }
        // A predicate may only cut iterations outside the domain (as the
        // ones `split` adds do); else the copy would write back elements
        // the block never computed.
        let predicate = tree::realizes(body)
            .into_iter()
            .find(|(_, r)| r.name == name)
            .and_then(|(p, _)| p.cloned());
        if let Some(p) = &predicate {
            if !domain_only(p, b, &analyzer) {
                return err(format!(
                    "has the predicate {p}, which may skip elements of {}",
                    x.name()
                ));
            }
        }
        let cache_name = format!("{}_{storage_scope}", x.name());
        if !tree::find_blocks(body, &cache_name).is_empty() {
            return err(format!(
                "cannot get a copy block: a block {cache_name:?} exists"
            ));
        }
        // The statement holding the block's nest, and its other readers.
        let top = match loops.first() {
            Some(Stmt::For { loop_var, .. }) => Some(loop_var.clone()),
            _ => None,
        };
        if let Some(top) = &top {
            let nest = tree::find_loop(body, top).expect("found");
            for (_, r) in tree::realizes(nest) {
                let reads = r.reads.iter().any(|g| g.buffer == x) || stmt_reads(&r.body, &x);
                if r.name != name && reads {
                    return err(format!(
                        "shares its loop nest with block {:?}, which reads {}",
                        r.name,
                        x.name()
                    ));
                }
            }
        }
        let cache = Buffer::new(cache_name.clone(), x.shape().to_vec(), x.dtype());
        let copy_nest = copy_nest(&cache_name, &cache, &x);
        // The block through the cache.
        let mut sub = Substitute::default();
        sub.buffers.insert(x.id(), cache.clone());
        let redirect = |s: &Stmt| -> Stmt { redirect_block(s, &name, &mut sub.clone()) };
        let redirected = redirect(body);
        // The copy after the statement holding the nest.
        let placed = match &top {
            Some(top) => place_at(&redirected, top, &copy_nest, true),
            None => None,
        };
        let Some(placed) = placed else {
            return err("is not in a loop nest inside a sequence or the body".into());
        };
        self.func.body = allocate(&placed, &cache);
        let out = self.new_block(&cache_name);
        self.trace.insts.push(Instruction::CacheWrite {
            block: block.0,
            write_index,
            storage_scope: storage_scope.to_string(),
            out: out.0,
        });
        Ok(out)
    }
}

impl Schedule {
    /// Makes `block` read its `read_index`-th read buffer through a cache
    /// (TVM's `cache_read` with `consumer_blocks=[block]`); returns the
    /// copy block.
    pub fn cache_read(
        &mut self,
        block: BlockRV,
        read_index: usize,
        storage_scope: &str,
    ) -> Result<BlockRV> {
        let name = self.block_name(block)?;
        let err = |m: String| {
            Err(ScheduleError::new(format!(
                "cache_read: block {name:?} {m}"
            )))
        };
        let body = &self.func.body;
        let (b, loops) = tree::the_block(body, &name, "cache_read")?;
        let Some(r) = b.reads.get(read_index) else {
            return err(format!(
                "reads {} buffers, there is no read {read_index}",
                b.reads.len()
            ));
        };
        let x = r.buffer.clone();
        let cache_name = format!("{}_{storage_scope}", x.name());
        if !tree::find_blocks(body, &cache_name).is_empty() {
            return err(format!(
                "cannot get a copy block: a block {cache_name:?} exists"
            ));
        }
        let Some(Stmt::For { loop_var: top, .. }) = loops.first() else {
            return err("is not in a loop nest inside a sequence or the body".into());
        };
        let nest = tree::find_loop(body, top).expect("found");
        if crate::tir::buffer_uses::stmt_writes(nest, &x) {
            return err(format!(
                "shares its loop nest with a write of {}, which the copy could not see",
                x.name()
            ));
        }
        let cache = Buffer::new(cache_name.clone(), x.shape().to_vec(), x.dtype());
        let copy_nest = copy_nest(&cache_name, &x, &cache);
        let redirected = redirect_reads(body, &name, &x, &cache);
        let Some(placed) = place_at(&redirected, top, &copy_nest, false) else {
            return err("is not in a loop nest inside a sequence or the body".into());
        };
        self.func.body = allocate(&placed, &cache);
        let out = self.new_block(&cache_name);
        self.trace.insts.push(Instruction::CacheRead {
            block: block.0,
            read_index,
            storage_scope: storage_scope.to_string(),
            out: out.0,
        });
        Ok(out)
    }
}

/// A nest of loops `ax0, ax1, …` over `from`'s shape around the block
/// `name`, which copies `from` into `to` element by element.
fn copy_nest(name: &str, from: &Buffer, to: &Buffer) -> Stmt {
    let mut iter_vars = Vec::new();
    let mut values = Vec::new();
    let mut axes = Vec::new();
    for (d, dim) in from.shape().iter().enumerate() {
        let dt = dim.dtype();
        let ax = TirVar::with_dtype(format!("ax{d}"), dt);
        let v = TirVar::with_dtype(format!("v{d}"), dt);
        iter_vars.push(IterVar {
            var: v.clone(),
            min: PrimExpr::int_of(dt, 0),
            extent: dim.clone(),
            kind: IterKind::Spatial,
        });
        values.push(ax.to_expr());
        axes.push((ax, dim.clone()));
    }
    let point: Vec<PrimExpr> = iter_vars.iter().map(|iv| iv.var.to_expr()).collect();
    let region: Vec<(PrimExpr, PrimExpr)> = point
        .iter()
        .map(|p| (p.clone(), PrimExpr::int_of(p.dtype(), 1)))
        .collect();
    let copy = Stmt::Block(Box::new(Block {
        name: name.to_string(),
        iter_vars,
        iter_values: values,
        reads: vec![BufferRegion {
            buffer: from.clone(),
            region: region.clone(),
        }],
        writes: vec![BufferRegion {
            buffer: to.clone(),
            region,
        }],
        init: None,
        body: Box::new(Stmt::BufferStore {
            buffer: to.clone(),
            value: PrimExpr::load(from, point.clone()),
            indices: point,
        }),
        alloc_buffers: vec![],
        annotations: Attrs::new(),
    }));
    axes.iter().rev().fold(copy, |body, (ax, n)| Stmt::For {
        loop_var: ax.clone(),
        min: PrimExpr::int_of(ax.dtype(), 0),
        extent: n.clone(),
        kind: ForKind::Serial,
        body: Box::new(body),
        annotations: Attrs::new(),
    })
}

/// `s` with the block `name` loading `from` (in its body and read
/// regions) from `to` instead. The block does not store to `from` (the
/// caller checked), so only its loads and read regions change.
fn redirect_reads(s: &Stmt, name: &str, from: &Buffer, to: &Buffer) -> Stmt {
    let mut sub = Substitute::default();
    sub.buffers.insert(from.id(), to.clone());
    redirect_block(s, name, &mut sub)
}

/// `s` with the block `name` reading and writing through `sub`'s buffers.
fn redirect_block(s: &Stmt, name: &str, sub: &mut Substitute) -> Stmt {
    match s {
        Stmt::Block(b) if b.name == name => sub.stmt(s),
        _ => map_children(s, &mut |c| Ok(redirect_block(c, name, sub))).expect("infallible"),
    }
}

/// `s` with `copy` placed right after (or before) the statement that is
/// (or whose only root-block body is) the loop `top`: in its sequence, or
/// with the loop made a sequence of two.
fn place_at(s: &Stmt, top: &TirVar, copy: &Stmt, after: bool) -> Option<Stmt> {
    let is_top = |c: &Stmt| matches!(c, Stmt::For { loop_var, .. } if loop_var == top);
    let pair = |c: &Stmt| match after {
        true => [c.clone(), copy.clone()],
        false => [copy.clone(), c.clone()],
    };
    match s {
        _ if is_top(s) => Some(Stmt::Seq(pair(s).to_vec())),
        Stmt::Seq(items) if items.iter().any(is_top) => {
            let mut v = Vec::new();
            for c in items {
                match is_top(c) {
                    true => v.extend(pair(c)),
                    false => v.push(c.clone()),
                }
            }
            Some(Stmt::Seq(v))
        }
        _ => {
            let mut found = None;
            let out = map_children(s, &mut |c| {
                if found.is_none() && tree::find_loop(c, top).is_some() {
                    found = place_at(c, top, copy, after);
                    if let Some(f) = &found {
                        return Ok(f.clone());
                    }
                }
                Ok(c.clone())
            })
            .expect("infallible");
            found.map(|_| out)
        }
    }
}

/// `s` with `buffer` allocated: in the root block when `s` is one, else
/// around `s`.
fn allocate(s: &Stmt, buffer: &Buffer) -> Stmt {
    match s {
        Stmt::Block(b) if b.iter_vars.is_empty() && b.init.is_none() => {
            let mut b = (**b).clone();
            b.alloc_buffers.push(buffer.clone());
            Stmt::Block(Box::new(b))
        }
        _ => Stmt::Allocate {
            buffer: buffer.clone(),
            body: Box::new(s.clone()),
        },
    }
}

/// Whether `s` stores to `x` outside the block `name`.
fn stores_outside(s: &Stmt, x: &Buffer, name: &str) -> bool {
    match s {
        Stmt::Block(b) if b.name == name => false,
        Stmt::BufferStore { buffer, .. } if buffer == x => true,
        _ => tree::children(s)
            .into_iter()
            .any(|c| stores_outside(c, x, name)),
    }
}

/// Whether every conjunct of `p` is `e < extent` for an iteration
/// variable of `b` bound to `min + e` (a bound `split` adds).
pub(super) fn domain_only(p: &PrimExpr, b: &Block, a: &Analyzer) -> bool {
    use crate::ir::prim_expr::PrimExprKind as K;
    match p.kind() {
        K::And(l, r) => domain_only(l, b, a) && domain_only(r, b, a),
        K::Lt(e, n) => b.iter_vars.iter().zip(&b.iter_values).any(|(iv, value)| {
            a.can_prove_equal(&(iv.min.clone() + e.clone()), value)
                && a.can_prove_equal(n, &iv.extent)
        }),
        _ => false,
    }
}
