//! Hashing loop-level bodies, in the order `equal/tir.rs` compares them:
//! definitions (buffers, loop, block and let variables) are numbered where
//! the comparison maps them, block names are left out, and statement lists
//! are hashed flattened.

use super::{HashWalker, Tag};
use crate::ir::prim_expr::TirVar;
use crate::ir::structural_equal::equal::tir::flatten;
use crate::tir::{Block, Buffer, BufferRegion, Stmt};
use std::hash::Hasher;

impl HashWalker {
    /// A buffer use: its definition index, or (free) its identity.
    pub(super) fn use_buffer(&mut self, b: &Buffer) {
        self.tag(Tag::BufferUse);
        match self.buffers.get(&b.id()).copied() {
            Some(i) => {
                self.tag(Tag::BoundVar);
                self.put(&i);
            }
            None if self.map_free_vars => {
                self.tag(Tag::BoundVar);
                let i = self.buffer_index(b);
                self.put(&i);
            }
            None => {
                self.tag(Tag::FreeVar);
                self.put(&b.id());
            }
        }
    }

    fn buffer_index(&mut self, b: &Buffer) -> u64 {
        let next = self.buffers.len() as u64;
        *self.buffers.entry(b.id()).or_insert(next)
    }

    /// The strides of a buffer definition, then its number.
    pub(super) fn def_buffer_rest(&mut self, b: &Buffer) {
        self.put(&b.scope());
        self.len(b.strides().len());
        for s in b.strides() {
            self.prim_expr(s);
        }
        let i = self.buffer_index(b);
        self.put(&i);
    }

    fn def_buffer(&mut self, b: &Buffer) {
        self.tag(Tag::Buffer);
        self.put(&b.dtype());
        self.len(b.shape().len());
        for d in b.shape() {
            self.prim_expr(d);
        }
        self.def_buffer_rest(b);
    }

    fn def_tir_var(&mut self, v: &TirVar) {
        self.put(&v.dtype());
        let i = self.tir_var_index(v);
        self.put(&i);
    }

    /// A statement, as its flattened statement list.
    pub(super) fn tir_stmt(&mut self, s: &Stmt) {
        let items = flatten(s);
        self.tag(Tag::Stmt);
        self.len(items.len());
        for it in items {
            self.tir_one(it);
        }
    }

    fn tir_one(&mut self, s: &Stmt) {
        self.put(&std::mem::discriminant(s));
        match s {
            Stmt::For {
                loop_var,
                min,
                extent,
                kind,
                body,
                annotations,
            } => {
                self.put(kind);
                self.prim_expr(min);
                self.prim_expr(extent);
                self.def_tir_var(loop_var);
                self.attrs(annotations);
                self.tir_stmt(body);
            }
            Stmt::Block(b) => self.tir_block(b),
            Stmt::BufferStore {
                buffer,
                value,
                indices,
            } => {
                self.use_buffer(buffer);
                self.len(indices.len());
                for i in indices {
                    self.prim_expr(i);
                }
                self.prim_expr(value);
            }
            Stmt::Allocate { buffer, body } => {
                self.def_buffer(buffer);
                self.tir_stmt(body);
            }
            Stmt::IfThenElse {
                cond,
                then_case,
                else_case,
            } => {
                self.prim_expr(cond);
                self.tir_stmt(then_case);
                self.option(else_case.as_ref(), |h, e| h.tir_stmt(e));
            }
            Stmt::LetStmt { var, value, body } => {
                self.prim_expr(value);
                self.def_tir_var(var);
                self.tir_stmt(body);
            }
            Stmt::Evaluate(e) => self.prim_expr(e),
            // `flatten` never yields a `Seq`.
            Stmt::Seq(items) => self.state.write_usize(items.len()),
        }
    }

    fn tir_block(&mut self, b: &Block) {
        self.len(b.iter_vars.len());
        self.len(b.iter_values.len());
        for v in &b.iter_values {
            self.prim_expr(v);
        }
        for iv in &b.iter_vars {
            self.put(&iv.kind);
            self.prim_expr(&iv.min);
            self.prim_expr(&iv.extent);
            self.def_tir_var(&iv.var);
        }
        self.len(b.alloc_buffers.len());
        for a in &b.alloc_buffers {
            self.def_buffer(a);
        }
        self.regions(&b.reads);
        self.regions(&b.writes);
        self.attrs(&b.annotations);
        self.option(b.init.as_deref(), |h, i| h.tir_stmt(i));
        self.tir_stmt(&b.body);
    }

    fn regions(&mut self, rs: &[BufferRegion]) {
        self.len(rs.len());
        for r in rs {
            self.use_buffer(&r.buffer);
            self.len(r.region.len());
            for (m, e) in &r.region {
                self.prim_expr(m);
                self.prim_expr(e);
            }
        }
    }
}
