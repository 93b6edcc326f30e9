//! Comparing loop-level bodies (PrimFunc statements).
//!
//! 1. Buffers are mapped one-to-one where they are defined: buffer
//!    parameters, a block's `alloc_buffers`, `Allocate`. A definition
//!    compares dtype, shape and strides; a use (a load, a store, a region)
//!    must agree with the mapping. A buffer unmapped on both sides is equal
//!    only to itself (or mapped on first sight when free variables are).
//! 2. Loop variables, block iteration variables and `LetStmt` variables are
//!    defined at their binding sites (their dtypes must agree); the values
//!    and bounds that bind them are compared before, as uses.
//! 3. Block names are ignored, as TVM does; everything else is compared:
//!    loop kinds, bounds, iteration kinds and domains, regions, `init`,
//!    intrinsic names.
//! 4. Statement lists are compared flattened: nested `Seq`s are spliced into
//!    their parent and a `Seq` of one statement is that statement (TVM's
//!    `SeqStmt::Flatten`), so `Seq[a, Seq[b, c]]` equals `Seq[a, b, c]`.

use super::{Comparer, Ident, Outcome, PrimOutcome, Seg};
use crate::ir::prim_expr::{PrimExpr, TirVar};
use crate::tir::{Block, Buffer, BufferRegion, ForKind, IterKind, Stmt};

impl Ident for Buffer {
    fn ident(&self) -> u64 {
        self.id()
    }
    fn label(&self) -> String {
        format!("buffer {}", self.name())
    }
}

/// `stmt` with nested `Seq`s spliced in.
pub(crate) fn flatten(stmt: &Stmt) -> Vec<&Stmt> {
    fn go<'a>(s: &'a Stmt, out: &mut Vec<&'a Stmt>) {
        match s {
            Stmt::Seq(items) => items.iter().for_each(|i| go(i, out)),
            other => out.push(other),
        }
    }
    let mut out = Vec::new();
    go(stmt, &mut out);
    out
}

/// A one-line description of a statement for reports.
pub(crate) fn describe_stmt(s: &Stmt) -> String {
    match s {
        Stmt::For { loop_var, kind, .. } => format!("{} loop over {loop_var}", kind_name(*kind)),
        Stmt::Block(b) => format!("block {:?}", b.name),
        Stmt::BufferStore { buffer, .. } => format!("store to {}", buffer.name()),
        Stmt::Allocate { buffer, .. } => format!("allocation of {}", buffer.name()),
        Stmt::IfThenElse { .. } => "if".to_string(),
        Stmt::LetStmt { var, .. } => format!("let {var}"),
        Stmt::Evaluate(e) => format!("T.evaluate({e})"),
        Stmt::Seq(items) => format!("{} statements", items.len()),
    }
}

fn kind_name(k: ForKind) -> &'static str {
    match k {
        ForKind::Serial => "serial",
        ForKind::Parallel => "parallel",
        ForKind::Vectorized => "vectorized",
        ForKind::Unrolled => "unrolled",
    }
}

fn iter_kind_name(k: IterKind) -> &'static str {
    match k {
        IterKind::Spatial => "spatial",
        IterKind::Reduce => "reduce",
    }
}

impl Comparer {
    /// Buffer uses must agree with the mapping (see the module docs).
    pub(super) fn use_buffer(&mut self, a: &Buffer, b: &Buffer) -> PrimOutcome {
        match self.buffers.check(a, b) {
            Ok(true) => Ok(()),
            Ok(false) if self.map_free_vars || a.id() == b.id() => {
                self.buffers.insert(a, b);
                Ok(())
            }
            Ok(false) => Err(Some(format!(
                "lhs {} and rhs {} are different undefined buffers",
                a.name(),
                b.name()
            ))),
            Err(note) => Err(Some(note)),
        }
    }

    fn use_buffer_at(&mut self, a: &Buffer, b: &Buffer) -> Outcome {
        match self.use_buffer(a, b) {
            Ok(()) => Ok(()),
            Err(note) => Err(self.mismatch(
                format!("buffer {}", a.name()),
                format!("buffer {}", b.name()),
                note,
            )),
        }
    }

    /// The strides of a buffer definition (dtype and shape compared by the
    /// caller), then the mapping `a ↦ b`.
    pub(super) fn def_buffer_rest(&mut self, a: &Buffer, b: &Buffer) -> Outcome {
        self.same("scope", a.scope(), b.scope())?;
        let (sa, sb) = (a.strides(), b.strides());
        self.count("number of strides", sa.len(), sb.len())?;
        for (j, (x, y)) in sa.iter().zip(sb).enumerate() {
            self.at(Seg::Item("stride", j), |c| c.prim_expr(x, y))?;
        }
        match self.buffers.check(a, b) {
            Ok(true) => Ok(()),
            Ok(false) => {
                self.buffers.insert(a, b);
                Ok(())
            }
            Err(note) => Err(self.mismatch(
                format!("buffer {}", a.name()),
                format!("buffer {}", b.name()),
                Some(note),
            )),
        }
    }

    /// A buffer definition of the body (`alloc_buffers`, `Allocate`).
    fn def_buffer(&mut self, a: &Buffer, b: &Buffer) -> Outcome {
        self.same("dtype", a.dtype(), b.dtype())?;
        let (sa, sb) = (a.shape(), b.shape());
        self.count("number of dims", sa.len(), sb.len())?;
        for (j, (x, y)) in sa.iter().zip(sb).enumerate() {
            self.at(Seg::Item("dim", j), |c| c.prim_expr(x, y))?;
        }
        self.def_buffer_rest(a, b)
    }

    /// A variable defined by a loop, a block or a let.
    fn def_tir_var(&mut self, a: &TirVar, b: &TirVar) -> Outcome {
        if a.dtype() != b.dtype() {
            return self.fail_note(
                a.name(),
                b.name(),
                format!("lhs {a} is {}, rhs {b} is {}", a.dtype(), b.dtype()),
            );
        }
        match self.tir_vars.check(a, b) {
            Ok(true) => Ok(()),
            Ok(false) => {
                self.tir_vars.insert(a, b);
                Ok(())
            }
            Err(note) => self.fail_note(a.name(), b.name(), note),
        }
    }

    fn exprs(&mut self, what: &'static str, a: &[PrimExpr], b: &[PrimExpr]) -> Outcome {
        self.count(what, a.len(), b.len())?;
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            self.at(Seg::Index(what, i), |c| c.prim_expr(x, y))?;
        }
        Ok(())
    }

    /// Two statements, compared as flattened statement lists.
    pub(super) fn tir_stmt(&mut self, a: &Stmt, b: &Stmt) -> Outcome {
        let (la, lb) = (flatten(a), flatten(b));
        if la.len() != lb.len() {
            return self.fail_note(
                describe_stmt(a),
                describe_stmt(b),
                format!("{} statements vs {}", la.len(), lb.len()),
            );
        }
        if la.len() == 1 {
            return self.tir_one(la[0], lb[0]);
        }
        for (i, (x, y)) in la.into_iter().zip(lb).enumerate() {
            self.at(Seg::Item("stmt", i), |c| c.tir_one(x, y))?;
        }
        Ok(())
    }

    /// Two statements that are not `Seq`s.
    fn tir_one(&mut self, a: &Stmt, b: &Stmt) -> Outcome {
        match (a, b) {
            (
                Stmt::For {
                    loop_var: va,
                    min: ma,
                    extent: ea,
                    kind: ka,
                    body: ba,
                    annotations: aa,
                },
                Stmt::For {
                    loop_var: vb,
                    min: mb,
                    extent: eb,
                    kind: kb,
                    body: bb,
                    annotations: ab,
                },
            ) => {
                self.same("loop kind", kind_name(*ka), kind_name(*kb))?;
                self.at(Seg::Field("min"), |c| c.prim_expr(ma, mb))?;
                self.at(Seg::Field("extent"), |c| c.prim_expr(ea, eb))?;
                self.at(Seg::Field("loop var"), |c| c.def_tir_var(va, vb))?;
                self.attrs("loop annotations", aa, ab)?;
                self.at(Seg::Field("loop body"), |c| c.tir_stmt(ba, bb))
            }
            (Stmt::Block(x), Stmt::Block(y)) => {
                let name = x.name.clone();
                self.at(Seg::Key("block", name), |c| c.tir_block(x, y))
            }
            (
                Stmt::BufferStore {
                    buffer: ba,
                    value: va,
                    indices: ia,
                },
                Stmt::BufferStore {
                    buffer: bb,
                    value: vb,
                    indices: ib,
                },
            ) => {
                self.at(Seg::Field("store"), |c| c.use_buffer_at(ba, bb))?;
                self.exprs("index", ia, ib)?;
                self.at(Seg::Field("value"), |c| c.prim_expr(va, vb))
            }
            (
                Stmt::Allocate {
                    buffer: ba,
                    body: bodya,
                },
                Stmt::Allocate {
                    buffer: bb,
                    body: bodyb,
                },
            ) => {
                self.at(Seg::Field("allocate"), |c| c.def_buffer(ba, bb))?;
                self.at(Seg::Field("body"), |c| c.tir_stmt(bodya, bodyb))
            }
            (
                Stmt::IfThenElse {
                    cond: ca,
                    then_case: ta,
                    else_case: ea,
                },
                Stmt::IfThenElse {
                    cond: cb,
                    then_case: tb,
                    else_case: eb,
                },
            ) => {
                self.at(Seg::Field("condition"), |c| c.prim_expr(ca, cb))?;
                self.at(Seg::Field("then"), |c| c.tir_stmt(ta, tb))?;
                match (ea, eb) {
                    (Some(x), Some(y)) => self.at(Seg::Field("else"), |c| c.tir_stmt(x, y)),
                    (None, None) => Ok(()),
                    (x, y) => self.at(Seg::Field("else"), |c| {
                        c.fail(
                            if x.is_some() { "present" } else { "absent" },
                            if y.is_some() { "present" } else { "absent" },
                        )
                    }),
                }
            }
            (
                Stmt::LetStmt {
                    var: va,
                    value: xa,
                    body: ba,
                },
                Stmt::LetStmt {
                    var: vb,
                    value: xb,
                    body: bb,
                },
            ) => {
                self.at(Seg::Field("value"), |c| c.prim_expr(xa, xb))?;
                self.at(Seg::Field("let var"), |c| c.def_tir_var(va, vb))?;
                self.at(Seg::Field("body"), |c| c.tir_stmt(ba, bb))
            }
            (Stmt::Evaluate(x), Stmt::Evaluate(y)) => {
                self.at(Seg::Field("evaluate"), |c| c.prim_expr(x, y))
            }
            _ => self.fail(describe_stmt(a), describe_stmt(b)),
        }
    }

    fn tir_block(&mut self, a: &Block, b: &Block) -> Outcome {
        self.count("number of iter vars", a.iter_vars.len(), b.iter_vars.len())?;
        self.count(
            "number of iter values",
            a.iter_values.len(),
            b.iter_values.len(),
        )?;
        // The values are in terms of the enclosing loops: uses, compared
        // before the block's own variables are defined.
        self.exprs("iter value", &a.iter_values, &b.iter_values)?;
        for (i, (x, y)) in a.iter_vars.iter().zip(&b.iter_vars).enumerate() {
            self.at(Seg::Item("iter var", i), |c| {
                c.same("kind", iter_kind_name(x.kind), iter_kind_name(y.kind))?;
                c.at(Seg::Field("min"), |c| c.prim_expr(&x.min, &y.min))?;
                c.at(Seg::Field("extent"), |c| c.prim_expr(&x.extent, &y.extent))?;
                c.def_tir_var(&x.var, &y.var)
            })?;
        }
        self.count(
            "number of alloc_buffers",
            a.alloc_buffers.len(),
            b.alloc_buffers.len(),
        )?;
        for (i, (x, y)) in a.alloc_buffers.iter().zip(&b.alloc_buffers).enumerate() {
            self.at(Seg::Item("alloc_buffer", i), |c| c.def_buffer(x, y))?;
        }
        self.regions("reads", &a.reads, &b.reads)?;
        self.regions("writes", &a.writes, &b.writes)?;
        self.attrs("block annotations", &a.annotations, &b.annotations)?;
        match (&a.init, &b.init) {
            (Some(x), Some(y)) => self.at(Seg::Field("init"), |c| c.tir_stmt(x, y))?,
            (None, None) => {}
            (x, y) => {
                return self.at(Seg::Field("init"), |c| {
                    c.fail(
                        if x.is_some() { "present" } else { "absent" },
                        if y.is_some() { "present" } else { "absent" },
                    )
                })
            }
        }
        self.at(Seg::Field("block body"), |c| c.tir_stmt(&a.body, &b.body))
    }

    fn regions(&mut self, what: &'static str, a: &[BufferRegion], b: &[BufferRegion]) -> Outcome {
        self.count(what, a.len(), b.len())?;
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            self.at(Seg::Index(what, i), |c| {
                c.use_buffer_at(&x.buffer, &y.buffer)?;
                c.count("region rank", x.region.len(), y.region.len())?;
                for (j, ((m1, e1), (m2, e2))) in x.region.iter().zip(&y.region).enumerate() {
                    c.at(Seg::Item("dim", j), |c| {
                        c.prim_expr(m1, m2)?;
                        c.prim_expr(e1, e2)
                    })?;
                }
                Ok(())
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
