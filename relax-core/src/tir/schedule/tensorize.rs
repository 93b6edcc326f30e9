//! `tensorize`: a block's body replaced by a registered tensor
//! intrinsic's implementation (TVM's `tensorize`).
//!
//! 1. **The block** (usually the outer block [`Schedule::blockize`] made)
//!    has no init (run `decompose_reduction` first, as with TVM) and its
//!    body is a loop nest over one inner block without predicate or init.
//! 2. **Matching** against the intrinsic's description (loops over one
//!    block): the same number of loops with the same constant extents
//!    starting at 0; the same iteration variables (kind, extent) bound to
//!    the corresponding loops. The buffer accesses, in order (the store,
//!    then the loads), pair each description buffer with a buffer of the
//!    function; its *offset* is the access with the inner block's
//!    variables at 0, and the dimensions the access moves in (one per
//!    dimension of the description's buffer) are where the description's
//!    indices go, so `C[vi, vj_o * 16 + vj_i]` is `C[vi, vj_o * 16 + ·]`
//!    for the description's 1-D `C`. The description's body, translated
//!    so, must equal the inner block's body (indices compared by the
//!    arithmetic analyzer, every other node exactly).
//! 3. **Replacement.** The block's body becomes the implementation's, its
//!    buffers translated the same way and its loop variables fresh; the
//!    block keeps its iteration variables and regions.
//!
//! Any mismatch is an `Err` naming the block, the intrinsic and what
//! differs; the function is then unchanged.

use super::tensor_intrin::{strip_root, TensorIntrin};
use super::tree;
use super::{BlockRV, Instruction, LoopRV, Result, Schedule, ScheduleError};
use crate::arith::Analyzer;
use crate::ir::prim_expr::{PrimExpr, PrimExprKind, TirVar};
use crate::tir::{Block, Buffer, PrimFuncParam, Stmt};
use std::collections::HashMap;

/// Where a description buffer lives in the function.
#[derive(Clone)]
struct Placement {
    buffer: Buffer,
    offset: Vec<PrimExpr>,
    /// The function's dimension for each of the description's.
    dims: Vec<usize>,
}

impl Placement {
    fn indices(&self, idx: &[PrimExpr], an: &Analyzer) -> Vec<PrimExpr> {
        let mut out = self.offset.clone();
        for (d, i) in self.dims.iter().zip(idx) {
            out[*d] = an.simplify(&(out[*d].clone() + i.clone()));
        }
        out
    }
}

/// A loop nest over one block: the loops' `(var, extent)` and the block.
fn nest_over_block(s: &Stmt) -> Option<(Vec<(TirVar, i64)>, &Block)> {
    let mut loops = Vec::new();
    let mut cur = s;
    while let Stmt::For {
        loop_var,
        min,
        extent,
        body,
        ..
    } = cur
    {
        if min.as_int() != Some(0) {
            return None;
        }
        loops.push((loop_var.clone(), extent.as_int()?));
        cur = body;
    }
    match cur {
        Stmt::Block(b) => Some((loops, b)),
        _ => None,
    }
}

/// The buffer accesses of a block body in order: stores first, then loads
/// in evaluation order.
fn accesses(s: &Stmt, out: &mut Vec<(Buffer, Vec<PrimExpr>)>) {
    fn expr(e: &PrimExpr, out: &mut Vec<(Buffer, Vec<PrimExpr>)>) {
        if let PrimExprKind::BufferLoad(b, idx) = e.kind() {
            out.push((b.clone(), idx.clone()));
        }
        for c in e.children() {
            expr(c, out);
        }
    }
    match s {
        Stmt::BufferStore {
            buffer,
            value,
            indices,
        } => {
            out.push((buffer.clone(), indices.clone()));
            expr(value, out);
        }
        _ => {
            for c in tree::children(s) {
                accesses(c, out);
            }
        }
    }
}

/// Whether `a` and `b` are the same expression, indices compared by `an`.
fn same_expr(a: &PrimExpr, b: &PrimExpr, an: &Analyzer) -> bool {
    match (a.kind(), b.kind()) {
        (PrimExprKind::BufferLoad(x, i), PrimExprKind::BufferLoad(y, j)) => {
            x == y && i.len() == j.len() && i.iter().zip(j).all(|(p, q)| an.can_prove_equal(p, q))
        }
        _ => {
            let zero = |_: &PrimExpr| PrimExpr::int(0);
            let (ca, cb) = (a.children(), b.children());
            ca.len() == cb.len()
                && a.dtype() == b.dtype()
                && a.map_children(zero) == b.map_children(zero)
                && ca.iter().zip(&cb).all(|(p, q)| same_expr(p, q, an))
        }
    }
}

/// Rewrites the description's or implementation's statements into the
/// function: variables replaced, buffers placed.
struct Translate<'a> {
    vars: HashMap<TirVar, PrimExpr>,
    places: &'a HashMap<u64, Placement>,
    an: &'a Analyzer,
}

impl Translate<'_> {
    fn expr(&self, e: &PrimExpr) -> Result<PrimExpr> {
        Ok(match e.kind() {
            PrimExprKind::Var(v) => self.vars.get(v).cloned().unwrap_or_else(|| e.clone()),
            PrimExprKind::BufferLoad(b, idx) => {
                let idx = idx
                    .iter()
                    .map(|i| self.expr(i))
                    .collect::<Result<Vec<_>>>()?;
                let p = self.place(b)?;
                PrimExpr::load(&p.buffer, p.indices(&idx, self.an))
            }
            _ => {
                let mut err = None;
                let out = e.map_children(|c| match self.expr(c) {
                    Ok(x) => x,
                    Err(m) => {
                        err.get_or_insert(m);
                        c.clone()
                    }
                });
                if let Some(m) = err {
                    return Err(m);
                }
                out
            }
        })
    }

    fn place(&self, b: &Buffer) -> Result<&Placement> {
        self.places.get(&b.id()).ok_or_else(|| {
            ScheduleError::new(format!(
                "tensorize: the intrinsic uses buffer {} that the block's accesses do not place",
                b.name()
            ))
        })
    }

    fn stmt(&mut self, s: &Stmt) -> Result<Stmt> {
        match s {
            Stmt::BufferStore {
                buffer,
                value,
                indices,
            } => {
                let idx = indices
                    .iter()
                    .map(|i| self.expr(i))
                    .collect::<Result<Vec<_>>>()?;
                let p = self.place(buffer)?.clone();
                Ok(Stmt::BufferStore {
                    buffer: p.buffer.clone(),
                    value: self.expr(value)?,
                    indices: p.indices(&idx, self.an),
                })
            }
            Stmt::For {
                loop_var,
                min,
                extent,
                kind,
                body,
                annotations,
            } => {
                let fresh = TirVar::with_dtype(loop_var.name(), loop_var.dtype());
                self.vars.insert(loop_var.clone(), fresh.to_expr());
                Ok(Stmt::For {
                    loop_var: fresh,
                    min: self.expr(min)?,
                    extent: self.expr(extent)?,
                    kind: *kind,
                    body: Box::new(self.stmt(body)?),
                    annotations: annotations.clone(),
                })
            }
            Stmt::IfThenElse { cond, .. } => {
                let cond = self.expr(cond)?;
                let out = tree::map_children(s, &mut |c| self.stmt(c))?;
                let Stmt::IfThenElse {
                    then_case,
                    else_case,
                    ..
                } = out
                else {
                    unreachable!("map_children keeps the node")
                };
                Ok(Stmt::IfThenElse {
                    cond,
                    then_case,
                    else_case,
                })
            }
            Stmt::LetStmt { var, value, body } => Ok(Stmt::LetStmt {
                var: var.clone(),
                value: self.expr(value)?,
                body: Box::new(self.stmt(body)?),
            }),
            Stmt::Evaluate(e) => Ok(Stmt::Evaluate(self.expr(e)?)),
            Stmt::Seq(_) => tree::map_children(s, &mut |c| self.stmt(c)),
            Stmt::Block(_) | Stmt::Allocate { .. } => Err(ScheduleError::new(
                "tensorize: an intrinsic's implementation may not hold blocks or allocations",
            )),
        }
    }
}

impl Schedule {
    /// Replaces `block`'s body by the implementation of the intrinsic
    /// registered as `intrin` (TVM's `tensorize` on a block; see the
    /// module docs).
    pub fn tensorize(&mut self, block: BlockRV, intrin: &str) -> Result<()> {
        let name = self.block_name(block)?;
        let err = |m: String| {
            Err(ScheduleError::new(format!(
                "tensorize: block {name:?} with intrinsic {intrin:?}: {m}"
            )))
        };
        let Some(ti) = TensorIntrin::get(intrin) else {
            return Err(ScheduleError::new(format!(
                "tensorize: no tensor intrinsic named {intrin:?} is registered"
            )));
        };
        let (ob, loops_above) = tree::the_block(&self.func.body, &name, "tensorize")?;
        if ob.init.is_some() {
            return err("the block has an init: decompose_reduction first".into());
        }
        let Some((real_loops, ib)) = nest_over_block(&ob.body) else {
            return err("its body is not a loop nest (from 0, constant extents) over one block without predicate".into());
        };
        let (desc_body, _) = strip_root(&ti.desc.body);
        let (desc_loops, db) = nest_over_block(desc_body).expect("checked at registration");
        if ib.init.is_some() {
            return err(format!("the inner block {:?} has an init", ib.name));
        }
        if real_loops.len() != desc_loops.len()
            || real_loops.iter().zip(&desc_loops).any(|(r, d)| r.1 != d.1)
        {
            return err(format!(
                "its loops have extents {:?} where the description's have {:?}",
                real_loops.iter().map(|l| l.1).collect::<Vec<_>>(),
                desc_loops.iter().map(|l| l.1).collect::<Vec<_>>()
            ));
        }
        let mut vars: HashMap<TirVar, PrimExpr> = desc_loops
            .iter()
            .zip(&real_loops)
            .map(|(d, r)| (d.0.clone(), r.0.to_expr()))
            .collect();
        if ib.iter_vars.len() != db.iter_vars.len() {
            return err(format!(
                "the inner block has {} iteration variables where the description's has {}",
                ib.iter_vars.len(),
                db.iter_vars.len()
            ));
        }
        for ((ri, rv), (di, dv)) in ib
            .iter_vars
            .iter()
            .zip(&ib.iter_values)
            .zip(db.iter_vars.iter().zip(&db.iter_values))
        {
            let bound_alike = dv.substitute_map(&vars) == *rv;
            if ri.kind != di.kind || ri.extent.as_int() != di.extent.as_int() || !bound_alike {
                return err(format!(
                    "iteration variable {} ({:?}, extent {}, bound to {rv}) does not correspond to the description's {} ({:?}, extent {}, bound to {dv})",
                    ri.var.name(),
                    ri.kind,
                    ri.extent,
                    di.var.name(),
                    di.kind,
                    di.extent
                ));
            }
        }
        for (ri, di) in ib.iter_vars.iter().zip(&db.iter_vars) {
            vars.insert(di.var.clone(), ri.var.to_expr());
        }
        // Place the description's buffers.
        let mut an = Analyzer::new();
        for iv in &ib.iter_vars {
            an.bind_range(&iv.var, Some(0), iv.extent.as_int().map(|e| e - 1));
        }
        for (v, e) in &real_loops {
            an.bind_range(v, Some(0), Some(e - 1));
        }
        for l in &loops_above {
            if let Stmt::For {
                loop_var, extent, ..
            } = l
            {
                an.bind_range(loop_var, Some(0), extent.as_int().map(|e| e - 1));
            }
        }
        let (mut ra, mut da) = (Vec::new(), Vec::new());
        accesses(&ib.body, &mut ra);
        accesses(&db.body, &mut da);
        if ra.len() != da.len() {
            return err(format!(
                "the inner block makes {} buffer accesses where the description makes {}",
                ra.len(),
                da.len()
            ));
        }
        let desc_params: Vec<&Buffer> = ti.desc.buffers().collect();
        let inner_vars: Vec<TirVar> = ib.iter_vars.iter().map(|iv| iv.var.clone()).collect();
        let mut places: HashMap<u64, Placement> = HashMap::new();
        for ((rb, ridx), (db_, _)) in ra.iter().zip(&da) {
            if !desc_params.contains(&db_) {
                return err(format!(
                    "the description accesses {}, which is not one of its parameters",
                    db_.name()
                ));
            }
            if let Some(p) = places.get(&db_.id()) {
                if p.buffer != *rb {
                    return err(format!(
                        "the description's {} stands for both {} and {}",
                        db_.name(),
                        p.buffer.name(),
                        rb.name()
                    ));
                }
                continue;
            }
            if rb.dtype() != db_.dtype() {
                return err(format!(
                    "{} is {} where the description's {} is {}",
                    rb.name(),
                    rb.dtype(),
                    db_.name(),
                    db_.dtype()
                ));
            }
            let at_zero = |e: &PrimExpr| {
                an.simplify(&e.substitute(&|v| {
                    inner_vars
                        .contains(v)
                        .then(|| PrimExpr::int_of(v.dtype(), 0))
                }))
            };
            let offset: Vec<PrimExpr> = ridx.iter().map(at_zero).collect();
            let dims: Vec<usize> = ridx
                .iter()
                .enumerate()
                .filter(|(_, e)| e.free_vars().iter().any(|v| inner_vars.contains(v)))
                .map(|(d, _)| d)
                .collect();
            if dims.len() != db_.shape().len() {
                return err(format!(
                    "{} moves in {} dimensions where the description's {} has {}",
                    rb.name(),
                    dims.len(),
                    db_.name(),
                    db_.shape().len()
                ));
            }
            places.insert(
                db_.id(),
                Placement {
                    buffer: rb.clone(),
                    offset,
                    dims,
                },
            );
        }
        let mut tr = Translate {
            vars,
            places: &places,
            an: &an,
        };
        let translated = tr.stmt(&db.body)?;
        let same = match (&translated, &*ib.body) {
            (
                Stmt::BufferStore {
                    buffer: b1,
                    value: v1,
                    indices: i1,
                },
                Stmt::BufferStore {
                    buffer: b2,
                    value: v2,
                    indices: i2,
                },
            ) => {
                b1 == b2
                    && i1.len() == i2.len()
                    && i1.iter().zip(i2).all(|(p, q)| an.can_prove_equal(p, q))
                    && same_expr(v1, v2, &an)
            }
            _ => false,
        };
        if !same {
            return err(format!(
                "the inner block computes `{}` where the description computes `{}`",
                store_text(&ib.body),
                store_text(&translated)
            ));
        }
        // The implementation, its parameters placed as the description's.
        let mut impl_places = HashMap::new();
        for (d, p) in ti.desc.params.iter().zip(&ti.implementation.params) {
            if let (PrimFuncParam::Buffer(d), PrimFuncParam::Buffer(p)) = (d, p) {
                if let Some(place) = places.get(&d.id()) {
                    impl_places.insert(p.id(), place.clone());
                }
            }
        }
        let (impl_body, _) = strip_root(&ti.implementation.body);
        let mut tr = Translate {
            vars: HashMap::new(),
            places: &impl_places,
            an: &an,
        };
        let new_body = tr.stmt(impl_body)?;
        let ob_name = name.clone();
        self.func.body = replace_block_body(&self.func.body, &ob_name, &new_body);
        self.trace.insts.push(Instruction::Tensorize {
            block: block.0,
            intrin: intrin.to_string(),
        });
        Ok(())
    }

    /// `blockize(loop_rv)` then `tensorize` of the block made (TVM's
    /// `tensorize` on a loop); returns the block.
    pub fn tensorize_loop(&mut self, loop_rv: LoopRV, intrin: &str) -> Result<BlockRV> {
        let before = (self.func.clone(), self.trace.clone());
        let b = self.blockize(loop_rv, true)?;
        if let Err(e) = self.tensorize(b, intrin) {
            (self.func, self.trace) = before;
            return Err(e);
        }
        Ok(b)
    }
}

/// `s` with the body of the block named `name` replaced by `body`.
fn replace_block_body(s: &Stmt, name: &str, body: &Stmt) -> Stmt {
    if let Stmt::Block(b) = s {
        if b.name == name {
            let mut b = (**b).clone();
            b.body = Box::new(body.clone());
            return Stmt::Block(Box::new(b));
        }
    }
    tree::map_children(s, &mut |c| Ok(replace_block_body(c, name, body))).expect("infallible")
}

/// `B[i, j] = value` of a store, for messages.
fn store_text(s: &Stmt) -> String {
    match s {
        Stmt::BufferStore {
            buffer,
            value,
            indices,
        } => format!(
            "{}[{}] = {value}",
            buffer.name(),
            indices
                .iter()
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => "a statement that is not one store".into(),
    }
}
