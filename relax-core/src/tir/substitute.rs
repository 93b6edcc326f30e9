//! `Substitute`: a statement with variables and buffers replaced, for
//! passes that move loop-level code between functions (`FuseTIR` inlines
//! the bodies of several PrimFuncs into one).
//!
//! 1. A variable in `vars` is replaced by its expression everywhere it is
//!    read: expressions, loop bounds, block iteration domains and values,
//!    regions, buffer shapes.
//! 2. A buffer in `buffers` (by identity) is replaced in loads, stores and
//!    regions. A buffer the statement allocates (`alloc_buffers`,
//!    `Allocate`) whose shape changes under the substitution is replaced by
//!    a new buffer of the new shape, from its allocation on.
//! 3. Everything else (loop variables, block iteration variables, names)
//!    is kept: the statement's own binders are not renamed.

use super::{Block, Buffer, BufferRegion, IterVar, Stmt};
use crate::ir::prim_expr::{PrimExpr, PrimExprKind, TirVar};
use std::collections::HashMap;

/// The replacements. See the module docs.
#[derive(Clone, Debug, Default)]
pub struct Substitute {
    /// Variables and what replaces them.
    pub vars: HashMap<TirVar, PrimExpr>,
    /// Buffers (by id) and what replaces them.
    pub buffers: HashMap<u64, Buffer>,
    /// Whether the variables the statement defines (loop variables, block
    /// iteration variables, `LetStmt` variables) are replaced by fresh ones
    /// of the same name and dtype (TVM's `RenewDefs`), so that a body
    /// copied twice into one function defines distinct variables.
    pub renew_defs: bool,
}

impl Substitute {
    /// `b`'s replacement, or `b`.
    pub fn buffer(&self, b: &Buffer) -> Buffer {
        self.buffers
            .get(&b.id())
            .cloned()
            .unwrap_or_else(|| b.clone())
    }

    /// `e` with the replacements made.
    pub fn expr(&self, e: &PrimExpr) -> PrimExpr {
        match e.kind() {
            PrimExprKind::Var(v) => self.vars.get(v).cloned().unwrap_or_else(|| e.clone()),
            PrimExprKind::BufferLoad(b, idx) => {
                PrimExpr::load(&self.buffer(b), idx.iter().map(|i| self.expr(i)).collect())
            }
            _ => e.map_children(|c| self.expr(c)),
        }
    }

    /// A buffer allocated by the statement: a new one when its shape
    /// changes, registered so later uses follow.
    fn allocated(&mut self, b: &Buffer) -> Buffer {
        let shape: Vec<PrimExpr> = b.shape().iter().map(|d| self.expr(d)).collect();
        let strides: Vec<PrimExpr> = b.strides().iter().map(|d| self.expr(d)).collect();
        if shape == b.shape() && strides == b.strides() {
            return self.buffer(b);
        }
        let new = Buffer::with_strides(b.name(), shape, b.dtype(), strides);
        let new = if b.scope() == "global" {
            new
        } else {
            new.with_scope(b.scope())
        };
        self.buffers.insert(b.id(), new.clone());
        new
    }

    fn region(&self, r: &BufferRegion) -> BufferRegion {
        BufferRegion {
            buffer: self.buffer(&r.buffer),
            region: r
                .region
                .iter()
                .map(|(min, ext)| (self.expr(min), self.expr(ext)))
                .collect(),
        }
    }

    /// A definition of `v`: itself, or with `renew_defs` a fresh variable
    /// that the uses in its scope are replaced by.
    fn def(&mut self, v: &TirVar) -> TirVar {
        if !self.renew_defs {
            return v.clone();
        }
        let fresh = TirVar::with_dtype(v.name(), v.dtype());
        self.vars.insert(v.clone(), fresh.to_expr());
        fresh
    }

    /// `s` with the replacements made.
    pub fn stmt(&mut self, s: &Stmt) -> Stmt {
        match s {
            Stmt::For {
                loop_var,
                min,
                extent,
                kind,
                body,
                annotations,
            } => {
                let (min, extent) = (self.expr(min), self.expr(extent));
                Stmt::For {
                    loop_var: self.def(loop_var),
                    min,
                    extent,
                    kind: *kind,
                    body: Box::new(self.stmt(body)),
                    annotations: annotations.clone(),
                }
            }
            Stmt::Block(b) => {
                let alloc_buffers = b.alloc_buffers.iter().map(|a| self.allocated(a)).collect();
                let iter_values = b.iter_values.iter().map(|v| self.expr(v)).collect();
                let iter_vars = b
                    .iter_vars
                    .iter()
                    .map(|iv| {
                        let (min, extent) = (self.expr(&iv.min), self.expr(&iv.extent));
                        IterVar {
                            var: self.def(&iv.var),
                            min,
                            extent,
                            kind: iv.kind,
                        }
                    })
                    .collect();
                Stmt::Block(Box::new(Block {
                    name: b.name.clone(),
                    iter_vars,
                    iter_values,
                    reads: b.reads.iter().map(|r| self.region(r)).collect(),
                    writes: b.writes.iter().map(|r| self.region(r)).collect(),
                    init: b.init.as_ref().map(|i| Box::new(self.stmt(i))),
                    body: Box::new(self.stmt(&b.body)),
                    alloc_buffers,
                    annotations: b.annotations.clone(),
                }))
            }
            Stmt::BufferStore {
                buffer,
                value,
                indices,
            } => Stmt::BufferStore {
                buffer: self.buffer(buffer),
                value: self.expr(value),
                indices: indices.iter().map(|i| self.expr(i)).collect(),
            },
            Stmt::Allocate { buffer, body } => {
                let buffer = self.allocated(buffer);
                Stmt::Allocate {
                    buffer,
                    body: Box::new(self.stmt(body)),
                }
            }
            Stmt::IfThenElse {
                cond,
                then_case,
                else_case,
            } => Stmt::IfThenElse {
                cond: self.expr(cond),
                then_case: Box::new(self.stmt(then_case)),
                else_case: else_case.as_ref().map(|e| Box::new(self.stmt(e))),
            },
            Stmt::LetStmt { var, value, body } => {
                let value = self.expr(value);
                Stmt::LetStmt {
                    var: self.def(var),
                    value,
                    body: Box::new(self.stmt(body)),
                }
            }
            Stmt::Evaluate(e) => Stmt::Evaluate(self.expr(e)),
            Stmt::Seq(stmts) => Stmt::Seq(stmts.iter().map(|x| self.stmt(x)).collect()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use relax_runtime::DataType;

    #[test]
    fn replaces_variables_and_buffers_and_reshapes_allocations() {
        let n = TirVar::new("n");
        let m = TirVar::new("m");
        let a = Buffer::new("A", vec![n.to_expr()], DataType::f32());
        let b = Buffer::new("B", vec![m.to_expr()], DataType::f32());
        let tmp = Buffer::new("tmp", vec![n.to_expr()], DataType::f32());
        let i = TirVar::new("i");
        let body = Stmt::Allocate {
            buffer: tmp.clone(),
            body: Box::new(Stmt::For {
                loop_var: i.clone(),
                min: 0.into(),
                extent: n.to_expr(),
                kind: crate::tir::ForKind::Serial,
                body: Box::new(Stmt::BufferStore {
                    buffer: tmp.clone(),
                    value: PrimExpr::load(&a, vec![i.to_expr()]),
                    indices: vec![i.to_expr()],
                }),
                annotations: crate::ir::Attrs::new(),
            }),
        };
        let mut s = Substitute::default();
        s.vars.insert(n.clone(), m.to_expr());
        s.buffers.insert(a.id(), b.clone());
        let Stmt::Allocate { buffer, body } = s.stmt(&body) else {
            panic!()
        };
        assert_ne!(buffer.id(), tmp.id(), "a new buffer of the new shape");
        assert_eq!(buffer.shape(), &[m.to_expr()]);
        let Stmt::For { extent, body, .. } = *body else {
            panic!()
        };
        assert_eq!(extent, m.to_expr());
        let Stmt::BufferStore {
            buffer: stored,
            value,
            ..
        } = *body
        else {
            panic!()
        };
        assert_eq!(stored.id(), buffer.id());
        assert_eq!(value, PrimExpr::load(&b, vec![i.to_expr()]));
    }

    /// With `renew_defs`, the loop variable is a fresh one (same name) and
    /// the body reads it: two copies of one nest define distinct variables.
    #[test]
    fn renewed_definitions_are_fresh_and_used() {
        let a = Buffer::new("A", vec![4.into()], DataType::f32());
        let i = TirVar::new("i");
        let nest = Stmt::For {
            loop_var: i.clone(),
            min: 0.into(),
            extent: 4.into(),
            kind: crate::tir::ForKind::Serial,
            body: Box::new(Stmt::BufferStore {
                buffer: a.clone(),
                value: PrimExpr::float(DataType::f32(), 1.0),
                indices: vec![i.to_expr()],
            }),
            annotations: crate::ir::Attrs::new(),
        };
        let copy = |s: &Stmt| {
            let mut sub = Substitute {
                renew_defs: true,
                ..Substitute::default()
            };
            let Stmt::For { loop_var, body, .. } = sub.stmt(s) else {
                panic!()
            };
            let Stmt::BufferStore { indices, .. } = *body else {
                panic!()
            };
            (loop_var, indices)
        };
        let (v1, idx1) = copy(&nest);
        let (v2, _) = copy(&nest);
        assert_eq!(v1.name(), "i");
        assert!(v1 != i && v2 != i && v1 != v2);
        assert_eq!(idx1, vec![v1.to_expr()]);
        // Without it, the definition stays.
        let Stmt::For { loop_var, .. } = Substitute::default().stmt(&nest) else {
            panic!()
        };
        assert_eq!(loop_var, i);
    }
}
