//! `PrepackWeights`: a matrix product's constant weight stored in the
//! packed GEMM's panel layout at build time, so that no call packs it.
//!
//! The packed GEMM (`gemm.rs`) copies `B(k, j)` into panels
//! `B_pack[j / NR, k, j % NR]` on every call. When `B` is a constant (an
//! ONNX initializer, a folded weight), that copy is the same on every call,
//! and when the product has few rows (a transformer at batch 1, an LM head)
//! it costs as much as the product. TVM does this with
//! `AttachAttrLayoutFreeBuffers`, MetaSchedule's `RewriteLayout`,
//! `SplitLayoutRewritePreproc` and `FoldConstant`; here one pass makes the
//! same rewrite, by rule:
//!
//! 1. A *layout-free* buffer is a PrimFunc input that every use of the
//!    PrimFunc (all of them `call_tir` callees) passes a constant: a 2-D
//!    `float32` `(K, N)` with `K ≥ 16` and `N > 16` that the function does
//!    not write.
//! 2. It is rewritten when some stage of the function is a matrix product
//!    whose `B(k, j)` is exactly that buffer at `[k, j]`: the parameter
//!    becomes `Bp` of shape `(⌈N / 32⌉, K, 32)`, every load `B[x, y]`
//!    becomes `Bp[y // 32, x, y % 32]` (and the block regions that name `B`
//!    name all of `Bp`), and every call's constant becomes its panels,
//!    zero past `N`. The panels are 32 columns wide whatever the CPU level:
//!    every register tile's width (32, 16 or 8 `float32`) divides 32, so
//!    an ahead-of-time build's levels share the constants.
//! 3. `DefaultSchedule` recognizes `Bp[j // W, k, j % W]` as a `B` already
//!    packed: the micro-kernel reads the panels in place and the packed
//!    schedule is taken from one row up (`Gemm::when`).
//!
//! The rewrite keeps every function's value: `Bp[y // 32, x, y % 32]` is
//! `B[x, y]` for every `(x, y)` in `B`, so an unscheduled function (the
//! loop-level interpreter) computes what it did.

use super::nest::Nest;
use super::Knobs;
use crate::ir::prim_expr::{PrimExpr, PrimExprKind};
use crate::ir::{BaseFunc, Call, Expr, ExprKind, GlobalVar, IRModule};
use crate::mutator::{mutate_module, ExprMutator, MutatorState};
use crate::tir::buffer_uses::{stmt_reads, stmt_writes};
use crate::tir::{Buffer, BufferRegion, PrimFunc, PrimFuncParam, Stmt};
use crate::transform::Pass;
use crate::visitor::{walk_call, ExprVisitor};
use relax_runtime::{DataType, Error, Tensor};
use std::collections::{HashMap, HashSet};

/// The panels' width: a multiple of every register tile's columns.
pub const PANEL_WIDTH: i64 = 32;
/// The shallowest weight worth packing (`gemm.rs`'s `GEMM_MIN_DEPTH`).
const MIN_DEPTH: i64 = 16;

/// The pass. See the module docs.
#[derive(Clone, Copy, Debug, Default)]
pub struct PrepackWeights;

impl Pass for PrepackWeights {
    fn name(&self) -> &str {
        "PrepackWeights"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        let mut uses = Uses::default();
        for (_, f) in module.functions() {
            if let BaseFunc::Relax(func) = f {
                uses.visit_expr(&func.body);
            }
        }
        // Each PrimFunc with a layout-free buffer: its rewrite and the
        // argument positions to pack.
        let mut packed: HashMap<GlobalVar, (Expr, HashSet<usize>)> = HashMap::new();
        let mut out = module.clone();
        for (gv, f) in module.functions() {
            let Some(prim) = f.as_prim() else { continue };
            // Every reference is a `call_tir` callee.
            let Some(calls) = uses.args.get(gv.name_hint()) else {
                continue;
            };
            if uses.refs.get(gv.name_hint()) != Some(&calls.len()) {
                continue;
            }
            let mut func = prim.clone();
            let mut positions = HashSet::new();
            let arity = calls.iter().map(Vec::len).min().unwrap_or(0);
            for pos in 0..arity {
                let Some(b) = func.buffers().nth(pos) else {
                    break;
                };
                // Every call passes a constant of the buffer's shape and dtype.
                let fits = |a: &Expr| match a.kind() {
                    ExprKind::Constant(t) => {
                        t.dtype() == b.dtype()
                            && t.shape().len() == b.shape().len()
                            && t.shape()
                                .iter()
                                .zip(b.shape())
                                .all(|(x, d)| d.as_int() == Some(*x))
                    }
                    _ => false,
                };
                if !calls.iter().all(|args| fits(&args[pos])) {
                    continue;
                }
                if let Some(rewritten) = rewrite(&func, pos) {
                    func = rewritten;
                    positions.insert(pos);
                }
            }
            if !positions.is_empty() {
                let callee = Expr::global_var(gv.clone()).with_struct_info(func.struct_info());
                out.add(gv.clone(), func);
                packed.insert(gv.clone(), (callee, positions));
            }
        }
        if packed.is_empty() {
            return Ok(module);
        }
        let mut m = PackArguments {
            state: MutatorState::with_module(&out),
            packed: &packed,
            done: HashMap::new(),
        };
        mutate_module(&mut m, &out)
    }
}

/// How each PrimFunc is used: references by name, and the arguments of
/// each `call_tir` of it.
#[derive(Default)]
struct Uses {
    refs: HashMap<String, usize>,
    args: HashMap<String, Vec<Vec<Expr>>>,
}

impl ExprVisitor for Uses {
    fn visit_global_var(&mut self, _expr: &Expr, gv: &GlobalVar) {
        *self.refs.entry(gv.name_hint().to_string()).or_default() += 1;
    }

    fn visit_call(&mut self, _expr: &Expr, call: &Call) {
        if let Some((gv, args)) = call_tir(call) {
            let name = gv.name_hint().to_string();
            self.args.entry(name).or_default().push(args.to_vec());
        }
        walk_call(self, call)
    }
}

/// The callee and arguments of a `call_tir`.
fn call_tir(call: &Call) -> Option<(&GlobalVar, &[Expr])> {
    let ExprKind::Op(op) = call.op.kind() else {
        return None;
    };
    if op.name() != "relax.call_tir" {
        return None;
    }
    let ExprKind::GlobalVar(gv) = call.args.first()?.kind() else {
        return None;
    };
    match call.args.get(1)?.kind() {
        ExprKind::Tuple(args) => Some((gv, args)),
        _ => None,
    }
}

/// `func` with its buffer parameter at `pos` in panels, when it is a
/// layout-free weight some matrix product reads as its `B` (module docs).
fn rewrite(func: &PrimFunc, pos: usize) -> Option<PrimFunc> {
    let b = func.buffers().nth(pos)?.clone();
    let (k, n) = match b.shape() {
        [k, n] => (k.as_int()?, n.as_int()?),
        _ => return None,
    };
    if b.dtype() != DataType::f32() || k < MIN_DEPTH || n <= PANEL_WIDTH / 2 {
        return None;
    }
    if stmt_writes(&func.body, &b) || !reads_as_gemm_b(&func.body, &b) {
        return None;
    }
    let panels = Buffer::new(
        format!("{}_panels", b.name()),
        vec![
            PrimExpr::int((n + PANEL_WIDTH - 1) / PANEL_WIDTH),
            PrimExpr::int(k),
            PrimExpr::int(PANEL_WIDTH),
        ],
        b.dtype(),
    );
    let params = func
        .params
        .iter()
        .map(|p| match p {
            PrimFuncParam::Buffer(x) if *x == b => PrimFuncParam::Buffer(panels.clone()),
            other => other.clone(),
        })
        .collect();
    Some(PrimFunc {
        params,
        body: in_panels(&func.body, &b, &panels),
        attrs: func.attrs.clone(),
    })
}

/// Whether some stage of `s` is a matrix product whose `B(k, j)` is the
/// load `b[k, j]`: a canonical nest where `DefaultSchedule` looks for one
/// (a loop, else inside its body, scopes and sequences).
fn reads_as_gemm_b(s: &Stmt, b: &Buffer) -> bool {
    match s {
        Stmt::For { .. } if !stmt_reads(s, b) => false,
        Stmt::For { body, .. } => match Nest::of(s, 512, Knobs::default()) {
            Some(nest) => nest.gemm().is_some_and(|gemm| {
                let (k, j) = gemm.k_and_j();
                matches!(gemm.b().kind(), PrimExprKind::BufferLoad(buf, idx)
                    if buf == b && idx.len() == 2 && idx[0].as_var() == Some(k) && idx[1].as_var() == Some(j))
            }),
            None => reads_as_gemm_b(body, b),
        },
        Stmt::Block(block) => reads_as_gemm_b(&block.body, b),
        Stmt::Seq(stages) => stages.iter().any(|x| reads_as_gemm_b(x, b)),
        Stmt::Allocate { body, .. } | Stmt::LetStmt { body, .. } => reads_as_gemm_b(body, b),
        Stmt::IfThenElse {
            then_case,
            else_case,
            ..
        } => {
            reads_as_gemm_b(then_case, b)
                || else_case.as_deref().is_some_and(|x| reads_as_gemm_b(x, b))
        }
        Stmt::BufferStore { .. } | Stmt::Evaluate(_) => false,
    }
}

/// `s` with every load `b[x, y]` read as `panels[y // W, x, y % W]`, and
/// every region of `b` as all of `panels`.
fn in_panels(s: &Stmt, b: &Buffer, panels: &Buffer) -> Stmt {
    let expr = |e: &PrimExpr| load_in_panels(e, b, panels);
    let region = |r: &BufferRegion| {
        if r.buffer != *b {
            return BufferRegion {
                buffer: r.buffer.clone(),
                region: r.region.iter().map(|(m, x)| (expr(m), expr(x))).collect(),
            };
        }
        BufferRegion {
            buffer: panels.clone(),
            region: panels
                .shape()
                .iter()
                .map(|d| (PrimExpr::int_of(d.dtype(), 0), d.clone()))
                .collect(),
        }
    };
    let s = match s {
        Stmt::BufferStore {
            buffer,
            value,
            indices,
        } => Stmt::BufferStore {
            buffer: buffer.clone(),
            value: expr(value),
            indices: indices.iter().map(expr).collect(),
        },
        Stmt::Evaluate(e) => Stmt::Evaluate(expr(e)),
        Stmt::For {
            loop_var,
            min,
            extent,
            kind,
            body,
            annotations,
        } => Stmt::For {
            loop_var: loop_var.clone(),
            min: expr(min),
            extent: expr(extent),
            kind: *kind,
            body: body.clone(),
            annotations: annotations.clone(),
        },
        Stmt::IfThenElse {
            cond,
            then_case,
            else_case,
        } => Stmt::IfThenElse {
            cond: expr(cond),
            then_case: then_case.clone(),
            else_case: else_case.clone(),
        },
        Stmt::LetStmt { var, value, body } => Stmt::LetStmt {
            var: var.clone(),
            value: expr(value),
            body: body.clone(),
        },
        Stmt::Block(block) => {
            let mut block = (**block).clone();
            block.iter_values = block.iter_values.iter().map(expr).collect();
            block.reads = block.reads.iter().map(region).collect();
            block.writes = block.writes.iter().map(region).collect();
            Stmt::Block(Box::new(block))
        }
        Stmt::Allocate { .. } | Stmt::Seq(_) => s.clone(),
    };
    let Ok(s) = s.try_map_children(|c| Ok::<_, std::convert::Infallible>(in_panels(c, b, panels)));
    s
}

/// `e` with every load `b[x, y]` read as `panels[y // W, x, y % W]`.
fn load_in_panels(e: &PrimExpr, b: &Buffer, panels: &Buffer) -> PrimExpr {
    match e.kind() {
        PrimExprKind::BufferLoad(buf, idx) if buf == b && idx.len() == 2 => {
            let (x, y) = (
                load_in_panels(&idx[0], b, panels),
                load_in_panels(&idx[1], b, panels),
            );
            let w = PrimExpr::int_of(y.dtype(), PANEL_WIDTH);
            PrimExpr::load(
                panels,
                vec![y.clone().floordiv(w.clone()), x, y.floormod(w)],
            )
        }
        _ => e.map_children(|c| load_in_panels(c, b, panels)),
    }
}

/// `(K, N)` `float32` data as panels `(⌈N / W⌉, K, W)`, zero past `N`.
pub fn to_panels(data: &Tensor) -> Option<Tensor> {
    let (k, n) = match data.shape() {
        &[k, n] => (usize::try_from(k).ok()?, usize::try_from(n).ok()?),
        _ => return None,
    };
    let w = PANEL_WIDTH as usize;
    let values = data.as_slice::<f32>().ok()?;
    let tiles = n.div_ceil(w);
    let mut out = vec![0f32; tiles * k * w];
    for (t, panel) in out.chunks_mut(k * w).enumerate() {
        let (from, to) = (t * w, (t * w + w).min(n));
        for (row, dst) in panel.chunks_mut(w).enumerate() {
            dst[..to - from].copy_from_slice(&values[row * n + from..row * n + to]);
        }
    }
    let shape = [tiles as i64, k as i64, w as i64];
    Tensor::from_vec(&shape, out).ok()
}

/// Replaces the packed positions' constants with their panels.
struct PackArguments<'a> {
    state: MutatorState,
    packed: &'a HashMap<GlobalVar, (Expr, HashSet<usize>)>,
    /// Each constant's panels, by the constant's node.
    done: HashMap<usize, Expr>,
}

impl ExprMutator for PackArguments<'_> {
    fn state(&mut self) -> &mut MutatorState {
        &mut self.state
    }

    fn visit_call(&mut self, expr: &Expr, call: &Call) -> Expr {
        let Some((gv, args)) = call_tir(call) else {
            return self.visit_expr_post_order(expr);
        };
        let Some((callee, positions)) = self.packed.get(gv) else {
            return self.visit_expr_post_order(expr);
        };
        let mut fields = Vec::with_capacity(args.len());
        for (pos, arg) in args.iter().enumerate() {
            let packed = match arg.kind() {
                ExprKind::Constant(data) if positions.contains(&pos) => {
                    let id = arg.node_id();
                    // `run` checked the constant's dtype and shape.
                    let panels = self.done.entry(id).or_insert_with(|| {
                        Expr::constant(to_panels(data).expect("a 2-D float32 constant"))
                    });
                    panels.clone()
                }
                _ => self.visit_expr(arg),
            };
            fields.push(packed);
        }
        let mut new_args = call.args.clone();
        new_args[0] = callee.clone();
        new_args[1] = self.normalize(Expr::tuple(fields));
        self.normalize(Expr::call_full(
            call.op.clone(),
            new_args,
            call.attrs.clone(),
            call.sinfo_args.clone(),
        ))
    }
}

#[cfg(test)]
mod tests;
