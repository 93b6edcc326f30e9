//! `reverse_compute_inline`: a consumer block is removed and its
//! computation folded into the block that produces what it reads (TVM's
//! `reverse_compute_inline`), so that an epilogue (a bias add, a relu, a
//! cast) is computed where its operand is, and the intermediate buffer
//! goes.
//!
//! 1. **The consumer** `C[g(v)] = f(B[v0, …, vk], other loads)` is a
//!    spatial block without init or predicate whose body is one store. It
//!    reads the intermediate buffer `B` at exactly its iteration variables,
//!    each once, in some order, and its domains are `B`'s dims: every
//!    element of `B` is consumed exactly once.
//! 2. **The producer** is the only block that writes `B`, which is not a
//!    parameter. It is a spatial block without init whose body is one store
//!    `B[u0, …, uk] = e` at distinct iteration variables whose domains are
//!    `B`'s dims (it writes all of `B`); a predicate may only cut the
//!    iterations `split` added. No block but the consumer reads `B`.
//! 3. **Order.** The producer's and the consumer's loop nests are two
//!    statements of one sequence, the producer's first, and the consumer's
//!    nest holds only the consumer. Since the consumer's work moves up to
//!    the producer's nest, nothing run in between (the statements between
//!    the two nests, and the other blocks of the producer's nest) may use
//!    `C` or write a buffer the consumer reads.
//! 4. **Result.** The producer keeps its name, loops and iteration
//!    variables; it stores `C[g(u)] = f(e, other loads at u)` (the
//!    consumer's variables `v_i` replaced by the producer's `u` at the same
//!    position of `B`), reads what both read, and writes `C`. The
//!    consumer's nest and `B`'s allocation are removed.

use super::cache::domain_only;
use super::inline::drop_allocation;
use super::tree::{self, map_children};
use super::{BlockRV, Instruction, Result, Schedule, ScheduleError};
use crate::arith::Analyzer;
use crate::ir::prim_expr::{PrimExpr, PrimExprKind, TirVar};
use crate::tir::buffer_uses::{stmt_uses, stmt_writes};
use crate::tir::{Block, Buffer, BufferRegion, IterKind, Stmt, Substitute};

impl Schedule {
    /// Folds the consumer `block` into the producer of the buffer it reads
    /// (TVM's `reverse_compute_inline`; the module docs give the rules).
    pub fn reverse_compute_inline(&mut self, block: BlockRV) -> Result<()> {
        let name = self.block_name(block)?;
        let body = &self.func.body;
        let (c, c_loops) = tree::the_block(body, &name, "reverse_compute_inline")?;
        let err = |m: String| {
            Err(ScheduleError::new(format!(
                "reverse_compute_inline: block {name:?} {m}"
            )))
        };
        let Some((c_store, c_index, c_value)) = single_store(c) else {
            return err(
                "must be a spatial block without init whose body is one store to the buffer it writes"
                    .into(),
            );
        };
        if tree::realizes(body)
            .iter()
            .any(|(p, r)| r.name == name && p.is_some())
        {
            return err("has a predicate; only an unpredicated consumer is inlinable".into());
        }
        // The intermediate: the buffer, among those read, that one other
        // block of the function writes and that is not a parameter.
        let params: Vec<&Buffer> = self.func.buffers().collect();
        let mut candidates = Vec::new();
        for r in &c.reads {
            let writers: Vec<String> = tree::realizes(body)
                .into_iter()
                .filter(|(_, w)| w.name != name && w.writes.iter().any(|g| g.buffer == r.buffer))
                .map(|(_, w)| w.name.clone())
                .collect();
            if !params.contains(&&r.buffer)
                && !writers.is_empty()
                && !candidates.iter().any(|(b, _): &(Buffer, _)| *b == r.buffer)
            {
                candidates.push((r.buffer.clone(), writers));
            }
        }
        let (b_buf, writers) = match candidates.len() {
            1 => candidates.pop().expect("one"),
            0 => return err("reads no intermediate buffer that another block produces".into()),
            n => {
                return err(format!(
                    "reads {n} intermediate buffers; exactly one producer is inlinable into"
                ))
            }
        };
        if writers.len() != 1 {
            return err(format!(
                "reads {}, which {} blocks write; it must have one producer",
                b_buf.name(),
                writers.len()
            ));
        }
        let p_name = writers[0].clone();
        // The consumer reads B at exactly its iteration variables, once
        // each, over B's whole domain.
        let analyzer = Analyzer::new();
        let mut at = Vec::new();
        tree::loads(&c.body, &b_buf, &mut at);
        let point = match at.as_slice() {
            [first, rest @ ..] if rest.iter().all(|p| p == first) => first.clone(),
            _ => {
                return err(format!(
                    "reads {} at more than one point; it must read one element per iteration",
                    b_buf.name()
                ))
            }
        };
        let mut c_vars: Vec<TirVar> = Vec::new();
        for (idx, dim) in point.iter().zip(b_buf.shape()) {
            let iv = idx
                .as_var()
                .and_then(|v| c.iter_vars.iter().find(|iv| &iv.var == v));
            let whole = iv.is_some_and(|iv| {
                iv.kind == IterKind::Spatial
                    && !c_vars.contains(&iv.var)
                    && iv.min.as_int() == Some(0)
                    && analyzer.can_prove_equal(&iv.extent, dim)
            });
            if !whole {
                return err(format!(
                    "does not read {} at exactly its iteration variables over its whole shape",
                    b_buf.name()
                ));
            }
            c_vars.push(iv.expect("checked").var.clone());
        }
        if c_vars.len() != c.iter_vars.len() {
            return err(format!(
                "has iteration variables that do not index {}",
                b_buf.name()
            ));
        }
        // The producer writes all of B at its own iteration variables.
        let (p, _) = tree::the_block(body, &p_name, "reverse_compute_inline")?;
        let perr = |m: String| {
            Err(ScheduleError::new(format!(
                "reverse_compute_inline: the producer {p_name:?} of {} {m}",
                b_buf.name()
            )))
        };
        let Some((p_store, p_index, p_value)) = single_store(p) else {
            return perr("must be a spatial block without init whose body is one store".into());
        };
        if p_store != b_buf {
            return perr(format!("stores to {}, not only to it", p_store.name()));
        }
        let mut p_vars: Vec<TirVar> = Vec::new();
        for (idx, dim) in p_index.iter().zip(b_buf.shape()) {
            let iv = idx
                .as_var()
                .and_then(|v| p.iter_vars.iter().find(|iv| &iv.var == v));
            let whole = iv.is_some_and(|iv| {
                !p_vars.contains(&iv.var)
                    && iv.min.as_int() == Some(0)
                    && analyzer.can_prove_equal(&iv.extent, dim)
            });
            if !whole {
                return perr("does not write all of it at exactly its iteration variables".into());
            }
            p_vars.push(iv.expect("checked").var.clone());
        }
        if let Some((Some(pred), _)) = tree::realizes(body)
            .into_iter()
            .find(|(_, r)| r.name == p_name)
        {
            if !domain_only(pred, p, &analyzer) {
                return perr(format!("has the predicate {pred}, which may skip elements"));
            }
        }
        for (_, r) in tree::realizes(body) {
            let mut own = Vec::new();
            tree::loads(&r.body, &b_buf, &mut own);
            let reads = !own.is_empty() || r.reads.iter().any(|g| g.buffer == b_buf);
            if r.name != name && r.name != p_name && reads {
                return perr(format!("is also read by block {:?}", r.name));
            }
        }
        if c_loops.is_empty() {
            return err("is not under a loop nest of its own".into());
        }
        // The consumer's computation at the producer's point.
        let mut sub = Substitute::default();
        for (cv, pv) in c_vars.iter().zip(&p_vars) {
            sub.vars.insert(cv.clone(), pv.to_expr());
        }
        let at_p = |e: &PrimExpr| replace_load(&sub.expr(e), &b_buf, &p_value);
        let store = Stmt::BufferStore {
            buffer: c_store.clone(),
            indices: c_index.iter().map(at_p).collect(),
            value: at_p(&c_value),
        };
        let region = |g: &BufferRegion| BufferRegion {
            buffer: g.buffer.clone(),
            region: g
                .region
                .iter()
                .map(|(lo, n)| (sub.expr(lo), sub.expr(n)))
                .collect(),
        };
        let mut reads = p.reads.clone();
        for g in c.reads.iter().filter(|g| g.buffer != b_buf) {
            let g = region(g);
            if !reads.contains(&g) {
                reads.push(g);
            }
        }
        let merged = Block {
            reads,
            writes: c.writes.iter().map(region).collect(),
            body: Box::new(store),
            ..p.clone()
        };
        let c_reads: Vec<Buffer> = c.reads.iter().map(|g| g.buffer.clone()).collect();
        let rewritten = fold_into_producer(
            body,
            &Fold {
                producer: &p_name,
                consumer: &name,
                output: &c_store,
                consumer_reads: &c_reads,
                merged: &merged,
            },
        );
        let new_body = match rewritten {
            Ok(Some(s)) => s,
            Ok(None) => {
                return err(format!(
                    "and its producer {p_name:?} are not two loop nests of one sequence, the producer's first"
                ))
            }
            Err(m) => return err(m),
        };
        self.func.body = drop_allocation(&new_body, &b_buf);
        self.trace
            .insts
            .push(Instruction::ReverseComputeInline { block: block.0 });
        Ok(())
    }
}

/// The store, its indices and its value, when `b` is a spatial block
/// without init whose body is one store.
fn single_store(b: &Block) -> Option<(Buffer, Vec<PrimExpr>, PrimExpr)> {
    if b.init.is_some()
        || !b.alloc_buffers.is_empty()
        || b.iter_vars.iter().any(|iv| iv.kind != IterKind::Spatial)
    {
        return None;
    }
    match &*b.body {
        Stmt::BufferStore {
            buffer,
            value,
            indices,
        } if b.writes.len() == 1 && b.writes[0].buffer == *buffer => {
            Some((buffer.clone(), indices.clone(), value.clone()))
        }
        _ => None,
    }
}

/// `e` with every load of `buffer` replaced by `value`.
fn replace_load(e: &PrimExpr, buffer: &Buffer, value: &PrimExpr) -> PrimExpr {
    match e.kind() {
        PrimExprKind::BufferLoad(b, _) if b == buffer => value.clone(),
        _ => e.map_children(|c| replace_load(c, buffer, value)),
    }
}

/// What [`fold_into_producer`] moves where.
struct Fold<'a> {
    producer: &'a str,
    consumer: &'a str,
    output: &'a Buffer,
    consumer_reads: &'a [Buffer],
    merged: &'a Block,
}

impl Fold<'_> {
    /// Whether `s` uses the consumer's output or writes what it reads:
    /// it may not run between the producer and the consumer.
    fn conflicts(&self, s: &Stmt) -> bool {
        stmt_uses(s, self.output) || self.consumer_reads.iter().any(|b| stmt_writes(s, b))
    }
}

/// `s` with the sequence holding both nests rewritten: the producer block
/// replaced by the merged one and the consumer's nest removed; `None` when
/// no sequence holds both, an `Err` naming a conflict.
fn fold_into_producer(s: &Stmt, f: &Fold) -> std::result::Result<Option<Stmt>, String> {
    let has = |c: &Stmt, n: &str| !tree::find_blocks(c, n).is_empty();
    if let Stmt::Seq(items) = s {
        let ip = items.iter().position(|c| has(c, f.producer));
        let ic = items.iter().position(|c| has(c, f.consumer));
        if let (Some(ip), Some(ic)) = (ip, ic) {
            if ip >= ic {
                return Ok(None);
            }
            let nest = &items[ic];
            if tree::realizes(nest).len() != 1 || tree::has_store_outside_blocks(nest) {
                return Err("shares its loop nest with other statements".into());
            }
            for (_, r) in tree::realizes(&items[ip]) {
                if r.name != f.producer && f.conflicts(&Stmt::Block(Box::new(r.clone()))) {
                    return Err(format!(
                        "cannot move up to its producer: block {:?} beside the producer uses what it writes or reads",
                        r.name
                    ));
                }
            }
            if let Some(between) = items[ip + 1..ic].iter().find(|x| f.conflicts(x)) {
                let what = tree::realizes(between)
                    .first()
                    .map_or("a statement".to_string(), |(_, r)| {
                        format!("block {:?}", r.name)
                    });
                return Err(format!(
                    "cannot move up to its producer: {what} runs in between and uses what it writes or reads"
                ));
            }
            let mut out = Vec::with_capacity(items.len() - 1);
            for (k, c) in items.iter().enumerate() {
                if k == ip {
                    out.push(replace_block(c, f.producer, f.merged));
                } else if k != ic {
                    out.push(c.clone());
                }
            }
            return Ok(Some(if out.len() == 1 {
                out.pop().expect("one")
            } else {
                Stmt::Seq(out)
            }));
        }
    }
    let mut found: std::result::Result<Option<Stmt>, String> = Ok(None);
    let out = map_children(s, &mut |c| {
        if matches!(found, Ok(None)) && has(c, f.producer) && has(c, f.consumer) {
            found = fold_into_producer(c, f);
            if let Ok(Some(x)) = &found {
                return Ok(x.clone());
            }
        }
        Ok(c.clone())
    })
    .expect("infallible");
    found.map(|f| f.map(|_| out))
}

/// `s` with the block `name` replaced by `new`.
fn replace_block(s: &Stmt, name: &str, new: &Block) -> Stmt {
    match s {
        Stmt::Block(b) if b.name == name => Stmt::Block(Box::new(new.clone())),
        _ => map_children(s, &mut |c| Ok(replace_block(c, name, new))).expect("infallible"),
    }
}
