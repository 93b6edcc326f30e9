//! Lowering TE stages to a [`PrimFunc`] (TVM's `te.create_prim_func`).
//!
//! 1. The stages reachable from the outputs are ordered so that every stage
//!    comes after the stages it reads (depth-first, post-order). Every
//!    placeholder reached must be one of the function's inputs.
//! 2. Each stage becomes one loop nest around one TensorIR [`Block`]:
//!    serial loops `ax0, ax1, …` over the output dims, then loops over the
//!    reduce axes; the block's iteration variables are the stage's axis
//!    variables (spatial) and reduce variables (reduce), bound to the loops.
//!    A plain stage stores its expression; a reduction stores
//!    `out = out ⊕ source` and has an `init` storing the combiner's identity.
//!    Read regions are exact points for data-independent indices and the
//!    whole dim for data-dependent ones (`take`); accesses of one buffer are
//!    merged dim by dim. A reduction does not list its own output as read.
//! 3. The nests run in order inside a root block `root`, which allocates
//!    the intermediate stages (`alloc_buffers`).
//! 4. Parameters: the input buffers, the output buffers, then scalars.
//!    Every symbolic variable from the caller is renamed to a variable of
//!    the PrimFunc. A variable standing alone as a dim of a parameter buffer
//!    is bound from that buffer (as TVM binds shape variables); every other
//!    one becomes a scalar parameter, and [`LoweredFunc::scalar_args`] says
//!    which caller variable to pass for it (`call_tir`'s `tir_vars`).

use super::{ComputeBody, ComputeOp, Operation, Tensor};
use crate::ir::prim_expr::{PrimExpr, PrimExprKind, TirVar};
use crate::ir::Attrs;
use crate::tir::{
    Block, Buffer, BufferRegion, ForKind, IterKind, IterVar, PrimFunc, PrimFuncParam, Stmt,
};
use std::collections::{HashMap, HashSet};

/// A lowered function and what its caller must pass.
#[derive(Clone, Debug)]
pub struct LoweredFunc {
    /// The function: inputs, outputs, then scalar parameters.
    pub func: PrimFunc,
    /// For each scalar parameter, in order, the caller's variable whose
    /// value it takes.
    pub scalar_args: Vec<TirVar>,
}

/// Lowers the stages computing `outputs` from `inputs` into one PrimFunc.
/// See the module docs. Errors (as messages) when a stage reads a tensor
/// that is neither an input nor a stage, or an output is a placeholder.
pub fn create_prim_func(inputs: &[Tensor], outputs: &[Tensor]) -> Result<LoweredFunc, String> {
    if outputs.is_empty() {
        return Err("a TE function needs at least one output".into());
    }
    let mut order = Vec::new();
    let mut seen = HashSet::new();
    for out in outputs {
        if out.is_placeholder() {
            return Err(format!(
                "output `{}` is a placeholder, not a computed stage",
                out.name()
            ));
        }
        visit(out, inputs, &mut seen, &mut order)?;
    }
    let mut locals = HashSet::new();
    let mut nests = Vec::new();
    let mut intermediates = Vec::new();
    for stage in &order {
        let Operation::Compute(c) = stage.op() else {
            continue;
        };
        if !outputs.contains(stage) {
            intermediates.push(stage.buffer().clone());
        }
        nests.push(lower_stage(stage, c, &mut locals));
    }
    let body = match nests.len() {
        1 => nests.pop().expect("one nest"),
        _ => Stmt::Seq(nests),
    };
    let root = Stmt::Block(Box::new(Block {
        name: "root".into(),
        iter_vars: vec![],
        iter_values: vec![],
        reads: vec![],
        writes: vec![],
        init: None,
        body: Box::new(body),
        alloc_buffers: intermediates,
        annotations: Attrs::new(),
    }));

    let mut r = Renamer {
        locals,
        ..Renamer::default()
    };
    let mut params: Vec<PrimFuncParam> = inputs
        .iter()
        .chain(outputs)
        .map(|t| PrimFuncParam::Buffer(r.buffer(t.buffer())))
        .collect();
    let body = r.stmt(&root);
    let bound: HashSet<TirVar> = params
        .iter()
        .filter_map(|p| match p {
            PrimFuncParam::Buffer(b) => Some(b),
            PrimFuncParam::Scalar(_) => None,
        })
        .flat_map(|b| b.shape().iter().filter_map(|d| d.as_var().cloned()))
        .collect();
    let mut scalar_args = Vec::new();
    for (outer, inner) in &r.order {
        if !bound.contains(inner) {
            params.push(PrimFuncParam::Scalar(inner.clone()));
            scalar_args.push(outer.clone());
        }
    }
    Ok(LoweredFunc {
        func: PrimFunc::new(params, body),
        scalar_args,
    })
}

/// Post-order depth-first walk from `t` over the stages it reads.
fn visit(
    t: &Tensor,
    inputs: &[Tensor],
    seen: &mut HashSet<u64>,
    order: &mut Vec<Tensor>,
) -> Result<(), String> {
    if !seen.insert(t.buffer().id()) {
        return Ok(());
    }
    match t.op() {
        Operation::Placeholder => {
            if !inputs.contains(t) {
                return Err(format!(
                    "tensor `{}` is read but is not an argument of the function",
                    t.name()
                ));
            }
        }
        Operation::Compute(c) => {
            check_reads(t, c)?;
            for i in &c.inputs {
                visit(i, inputs, seen, order)?;
            }
            order.push(t.clone());
        }
    }
    Ok(())
}

/// Every buffer a stage loads must be one of the tensors it recorded.
fn check_reads(t: &Tensor, c: &ComputeOp) -> Result<(), String> {
    let mut loads = Vec::new();
    match &c.body {
        ComputeBody::Expr(e) => collect_loads(e, &mut loads),
        ComputeBody::Reduce(r) => collect_loads(&r.source, &mut loads),
    }
    for (b, _) in loads {
        if !c.inputs.iter().any(|i| i.buffer() == &b) {
            return Err(format!(
                "stage `{}` loads buffer `{}` directly; read tensors with Tensor::at",
                t.name(),
                b.name()
            ));
        }
    }
    Ok(())
}

/// Every `BufferLoad` in `e` (including those inside indices), in order.
fn collect_loads(e: &PrimExpr, out: &mut Vec<(Buffer, Vec<PrimExpr>)>) {
    if let PrimExprKind::BufferLoad(b, idx) = e.kind() {
        out.push((b.clone(), idx.clone()));
    }
    for c in e.children() {
        collect_loads(c, out);
    }
}

/// The loop variable for a block iteration variable `v_x`: `x`.
fn loop_var_for(iv: &TirVar) -> TirVar {
    let name = iv.name().strip_prefix("v_").unwrap_or(iv.name());
    TirVar::with_dtype(name, iv.dtype())
}

fn lower_stage(t: &Tensor, c: &ComputeOp, locals: &mut HashSet<TirVar>) -> Stmt {
    let out = t.buffer();
    let idx: Vec<PrimExpr> = c.axis.iter().map(TirVar::to_expr).collect();
    let mut iter_vars: Vec<IterVar> = c
        .axis
        .iter()
        .zip(t.shape())
        .map(|(v, d)| IterVar {
            var: v.clone(),
            min: PrimExpr::int(0),
            extent: d.clone(),
            kind: IterKind::Spatial,
        })
        .collect();
    let (value, init, reads_self) = match &c.body {
        ComputeBody::Expr(e) => (e.clone(), None, true),
        ComputeBody::Reduce(r) => {
            iter_vars.extend(r.axes.iter().map(|a| IterVar {
                var: a.var().clone(),
                min: PrimExpr::int(0),
                extent: a.extent().clone(),
                kind: IterKind::Reduce,
            }));
            let acc = PrimExpr::load(out, idx.clone());
            let init = Stmt::BufferStore {
                buffer: out.clone(),
                value: r.combiner.identity(out.dtype()),
                indices: idx.clone(),
            };
            (
                r.combiner.combine(acc, r.source.clone()),
                Some(Box::new(init)),
                false,
            )
        }
    };
    let mut loads = Vec::new();
    collect_loads(&value, &mut loads);
    let reads = regions(
        loads
            .into_iter()
            .filter(|(b, _)| reads_self || b != out)
            .collect(),
    );
    let writes = vec![BufferRegion {
        buffer: out.clone(),
        region: idx.iter().map(|i| (i.clone(), PrimExpr::int(1))).collect(),
    }];
    let loop_vars: Vec<TirVar> = iter_vars.iter().map(|iv| loop_var_for(&iv.var)).collect();
    for (iv, lv) in iter_vars.iter().zip(&loop_vars) {
        locals.insert(iv.var.clone());
        locals.insert(lv.clone());
    }
    let block = Stmt::Block(Box::new(Block {
        name: t.name().to_string(),
        iter_values: loop_vars.iter().map(TirVar::to_expr).collect(),
        iter_vars: iter_vars.clone(),
        reads,
        writes,
        init,
        body: Box::new(Stmt::BufferStore {
            buffer: out.clone(),
            value,
            indices: idx,
        }),
        alloc_buffers: vec![],
        annotations: Attrs::new(),
    }));
    iter_vars
        .iter()
        .zip(loop_vars)
        .rev()
        .fold(block, |body, (iv, lv)| Stmt::For {
            loop_var: lv,
            min: PrimExpr::int(0),
            extent: iv.extent.clone(),
            kind: ForKind::Serial,
            body: Box::new(body),
            annotations: Attrs::new(),
        })
}

/// The regions of a list of accesses, one per buffer in order of first
/// access. See the module docs.
fn regions(accesses: Vec<(Buffer, Vec<PrimExpr>)>) -> Vec<BufferRegion> {
    let mut out: Vec<BufferRegion> = Vec::new();
    for (b, idx) in accesses {
        let point: Vec<(PrimExpr, PrimExpr)> = idx
            .iter()
            .zip(b.shape())
            .map(|(i, d)| {
                if super::reads_buffer(i) {
                    (PrimExpr::int(0), d.clone())
                } else {
                    (i.clone(), PrimExpr::int(1))
                }
            })
            .collect();
        match out.iter_mut().find(|r| r.buffer == b) {
            Some(r) => {
                for ((have, d), new) in r.region.iter_mut().zip(b.shape()).zip(point) {
                    if *have != new {
                        *have = (PrimExpr::int(0), d.clone());
                    }
                }
            }
            None => out.push(BufferRegion {
                buffer: b,
                region: point,
            }),
        }
    }
    out
}

/// Renames the caller's variables and the buffers over them. See the
/// module docs.
#[derive(Default)]
struct Renamer {
    /// Loop and iteration variables: kept as they are.
    locals: HashSet<TirVar>,
    vars: HashMap<TirVar, TirVar>,
    /// `(caller variable, PrimFunc variable)` in order of first use.
    order: Vec<(TirVar, TirVar)>,
    buffers: HashMap<Buffer, Buffer>,
}

impl Renamer {
    fn var(&mut self, v: &TirVar) -> TirVar {
        if self.locals.contains(v) {
            return v.clone();
        }
        if let Some(n) = self.vars.get(v) {
            return n.clone();
        }
        let n = TirVar::with_dtype(v.name(), v.dtype());
        self.vars.insert(v.clone(), n.clone());
        self.order.push((v.clone(), n.clone()));
        n
    }

    fn expr(&mut self, e: &PrimExpr) -> PrimExpr {
        match e.kind() {
            PrimExprKind::Var(v) => self.var(v).to_expr(),
            PrimExprKind::BufferLoad(b, idx) => {
                let b = self.buffer(b);
                let idx = idx.iter().map(|i| self.expr(i)).collect();
                PrimExpr::load(&b, idx)
            }
            _ => e.map_children(|c| self.expr(c)),
        }
    }

    fn exprs(&mut self, es: &[PrimExpr]) -> Vec<PrimExpr> {
        es.iter().map(|e| self.expr(e)).collect()
    }

    fn buffer(&mut self, b: &Buffer) -> Buffer {
        if let Some(n) = self.buffers.get(b) {
            return n.clone();
        }
        let shape = self.exprs(b.shape());
        let strides = self.exprs(b.strides());
        let n = Buffer::with_strides(b.name(), shape, b.dtype(), strides);
        self.buffers.insert(b.clone(), n.clone());
        n
    }

    fn region(&mut self, r: &BufferRegion) -> BufferRegion {
        BufferRegion {
            buffer: self.buffer(&r.buffer),
            region: r
                .region
                .iter()
                .map(|(m, e)| (self.expr(m), self.expr(e)))
                .collect(),
        }
    }

    fn stmt(&mut self, s: &Stmt) -> Stmt {
        match s {
            Stmt::For {
                loop_var,
                min,
                extent,
                kind,
                body,
                annotations,
            } => Stmt::For {
                loop_var: self.var(loop_var),
                min: self.expr(min),
                extent: self.expr(extent),
                kind: *kind,
                body: Box::new(self.stmt(body)),
                annotations: annotations.clone(),
            },
            Stmt::Block(b) => Stmt::Block(Box::new(Block {
                name: b.name.clone(),
                iter_vars: b
                    .iter_vars
                    .iter()
                    .map(|iv| IterVar {
                        var: self.var(&iv.var),
                        min: self.expr(&iv.min),
                        extent: self.expr(&iv.extent),
                        kind: iv.kind,
                    })
                    .collect(),
                iter_values: self.exprs(&b.iter_values),
                reads: b.reads.iter().map(|r| self.region(r)).collect(),
                writes: b.writes.iter().map(|r| self.region(r)).collect(),
                init: b.init.as_ref().map(|i| Box::new(self.stmt(i))),
                body: Box::new(self.stmt(&b.body)),
                alloc_buffers: b.alloc_buffers.iter().map(|a| self.buffer(a)).collect(),
                annotations: b.annotations.clone(),
            })),
            Stmt::BufferStore {
                buffer,
                value,
                indices,
            } => Stmt::BufferStore {
                buffer: self.buffer(buffer),
                value: self.expr(value),
                indices: self.exprs(indices),
            },
            Stmt::Allocate { buffer, body } => Stmt::Allocate {
                buffer: self.buffer(buffer),
                body: Box::new(self.stmt(body)),
            },
            Stmt::IfThenElse {
                cond,
                then_case,
                else_case,
            } => Stmt::IfThenElse {
                cond: self.expr(cond),
                then_case: Box::new(self.stmt(then_case)),
                else_case: else_case.as_ref().map(|e| Box::new(self.stmt(e))),
            },
            Stmt::LetStmt { var, value, body } => Stmt::LetStmt {
                var: self.var(var),
                value: self.expr(value),
                body: Box::new(self.stmt(body)),
            },
            Stmt::Evaluate(e) => Stmt::Evaluate(self.expr(e)),
            Stmt::Seq(ss) => Stmt::Seq(ss.iter().map(|s| self.stmt(s)).collect()),
        }
    }
}
