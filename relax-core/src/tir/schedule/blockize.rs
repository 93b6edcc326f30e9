//! `blockize`: the subtree of a loop becomes an outer block of its own,
//! with its own iteration variables (TVM's `blockize` on a loop).
//!
//! 1. **Precondition.** Under the loop there is a perfect nest (the loop,
//!    the loops in its body) of constant extents starting at 0, ending in
//!    one block without a predicate whose iteration variables start at 0.
//!    These are the *inner* loops; the loops above are the *outer* ones.
//! 2. **Subspace division.** Each binding `v = value` is split as
//!    `value = o · E + i`: `i` is the part in inner loops (affine, with
//!    non-negative coefficients, spanning `[0, E)`), `o · E` the rest, which
//!    must be a multiple of `E` (`j0 * 16 + j1` under `j1` gives `o = j0`,
//!    `i = j1`, `E = 16`). A binding with no inner part is *outer*, one
//!    with nothing else *inner*.
//! 3. **Trivial division** (every binding outer or inner): the outer block
//!    is `blockized_<name>`; an outer variable keeps its binding there (the
//!    inner block reads it), and an inner one stays in the inner block with
//!    a unit variable (extent 1, bound to 0) in the outer block, as TVM
//!    writes it (`vjo = T.axis.spatial(1, 0)`).
//! 4. **Otherwise** the outer block is `<name>_o` and every split variable
//!    `v` becomes `v_o` (extent `⌈extent / E⌉`, bound to `o`) in the outer
//!    block and `v_i` (extent `E`, bound to `i`) in the inner one, `v` being
//!    `v_o · E + v_i` in the body; an outer binding is an outer variable, an
//!    inner one an inner variable with a unit outer one. With
//!    `preserve_unit_iters == false`, an outer variable bound to a loop of
//!    extent 1 is bound to 0 instead.
//! 5. **Regions.** The outer block reads and writes the inner block's
//!    regions relaxed over the inner variables' domains (`C[v_o * 16 :
//!    v_o * 16 + 16]`); a region not affine in them is the whole dimension.
//! 6. **Init.** A reduction's init moves to the outer block, as a nest of
//!    copies of the inner loops its spatial bindings use, around a block
//!    `<name>_init` (TVM's `T.init()` of the outer block): the outer block
//!    initializes the whole tile before the inner reduction runs.

use super::tree::{self, replace_loop};
use super::{BlockRV, Instruction, LoopRV, Result, Schedule, ScheduleError};
use crate::arith::Analyzer;
use crate::ir::prim_expr::{PrimExpr, TirVar};
use crate::ir::Attrs;
use crate::tir::affine::linear_coeff;
use crate::tir::{Block, BufferRegion, ForKind, IterKind, IterVar, Stmt, Substitute};

/// An inner loop: its variable and constant extent.
struct Inner {
    var: TirVar,
    extent: i64,
    kind: ForKind,
    annotations: Attrs,
}

/// One binding divided (module docs, point 2).
struct Division {
    /// The outer part `o` (a multiple of `E` divided by `E`).
    outer: PrimExpr,
    /// The inner part `i`.
    inner: PrimExpr,
    /// `E`, the span of the inner part.
    span: i64,
    /// Whether there is an inner part.
    has_inner: bool,
    /// Whether there is an outer part.
    has_outer: bool,
}

fn divide(value: &PrimExpr, inner: &[Inner], an: &Analyzer) -> Option<Division> {
    let mut inner_part = PrimExpr::int_of(value.dtype(), 0);
    let mut span = 0i64;
    let mut has_inner = false;
    for l in inner {
        if !value.free_vars().contains(&l.var) {
            continue;
        }
        let c = linear_coeff(value, &l.var)?;
        if c < 0 {
            return None;
        }
        if c == 0 {
            continue;
        }
        has_inner = true;
        inner_part = inner_part + l.var.to_expr() * PrimExpr::int_of(value.dtype(), c);
        span += c * (l.extent - 1);
    }
    let span = span + 1;
    let inner_part = an.simplify(&inner_part);
    let rest = an.simplify(&(value.clone() - inner_part.clone()));
    if inner.iter().any(|l| rest.free_vars().contains(&l.var)) {
        return None;
    }
    let has_outer = rest.as_int() != Some(0);
    let outer = if span == 1 {
        rest.clone()
    } else {
        let q = an.simplify(&rest.clone().floordiv(PrimExpr::int_of(rest.dtype(), span)));
        let back = an.simplify(&(q.clone() * PrimExpr::int_of(rest.dtype(), span)));
        if !an.can_prove_equal(&back, &rest) {
            return None;
        }
        q
    };
    Some(Division {
        outer,
        inner: inner_part,
        span,
        has_inner,
        has_outer,
    })
}

/// `(min, extent)` relaxed over the variables of `domains` (each `[0, E)`).
fn relax(
    min: &PrimExpr,
    extent: &PrimExpr,
    domains: &[(TirVar, i64)],
    full: &PrimExpr,
    an: &Analyzer,
) -> (PrimExpr, PrimExpr) {
    let mut lo = min.clone();
    let mut span = 0i64;
    for (v, e) in domains {
        if !min.free_vars().contains(v) {
            continue;
        }
        match linear_coeff(min, v) {
            Some(c) if c >= 0 => {
                span += c * (e - 1);
                lo = lo.substitute(&|u| (u == v).then(|| PrimExpr::int_of(v.dtype(), 0)));
            }
            _ => return (PrimExpr::int_of(full.dtype(), 0), full.clone()),
        }
    }
    let ext = extent.clone() + PrimExpr::int_of(extent.dtype(), span);
    (an.simplify(&lo), an.simplify(&ext))
}

impl Schedule {
    /// The subtree of `loop_rv` becomes a new outer block (TVM's
    /// `blockize`; see the module docs); returns the outer block.
    pub fn blockize(&mut self, loop_rv: LoopRV, preserve_unit_iters: bool) -> Result<BlockRV> {
        let var = self.loop_var(loop_rv)?;
        let what = self.describe_loop(loop_rv);
        let err = |m: String| Err(ScheduleError::new(format!("blockize: {what} {m}")));
        let top = tree::find_loop(&self.func.body, &var).expect("loop_var checked it");
        // The inner loops and the block.
        let mut inner = Vec::new();
        let mut cur = top;
        while let Stmt::For {
            loop_var,
            min,
            extent,
            kind,
            body,
            annotations,
        } = cur
        {
            let (Some(0), Some(e)) = (min.as_int(), extent.as_int()) else {
                return err(format!(
                    "has loop {} in its subtree whose range is not [0, constant)",
                    loop_var.name()
                ));
            };
            inner.push(Inner {
                var: loop_var.clone(),
                extent: e,
                kind: *kind,
                annotations: annotations.clone(),
            });
            cur = body;
        }
        let b = match tree::as_realize(cur) {
            Some((None, b)) => b.clone(),
            Some((Some(_), b)) => {
                return err(format!(
                    "holds block {:?} under a predicate, which blockize does not divide",
                    b.name
                ))
            }
            None => return err("is not a loop nest over one block".into()),
        };
        let outer_loops: Vec<(TirVar, Option<i64>)> = {
            let (_, loops) = tree::the_block(&self.func.body, &b.name, "blockize")?;
            loops
                .iter()
                .filter_map(|l| match l {
                    Stmt::For {
                        loop_var, extent, ..
                    } if !inner.iter().any(|i| &i.var == loop_var) => {
                        Some((loop_var.clone(), extent.as_int()))
                    }
                    _ => None,
                })
                .collect()
        };
        let mut an = Analyzer::new();
        for l in &inner {
            an.bind_range(&l.var, Some(0), Some(l.extent - 1));
        }
        // A unit loop is not bound: its variable stays in the bindings it
        // appears in (`i0 * 16 + i1` divides as `i0`, `i1`), as in TVM.
        for (v, e) in &outer_loops {
            if *e != Some(1) {
                an.bind_range(v, Some(0), e.map(|e| e - 1));
            }
        }
        let mut divisions = Vec::new();
        for (iv, value) in b.iter_vars.iter().zip(&b.iter_values) {
            if iv.min.as_int() != Some(0) {
                return err(format!(
                    "holds block {:?} whose variable {} does not start at 0",
                    b.name,
                    iv.var.name()
                ));
            }
            let Some(d) = divide(value, &inner, &an) else {
                return err(format!(
                    "cannot divide the binding {} = {value} of block {:?} into a part in the loops above and a part in the loops below",
                    iv.var.name(),
                    b.name
                ));
            };
            divisions.push(d);
        }
        let trivial = divisions.iter().all(|d| !(d.has_inner && d.has_outer));
        let outer_name = if trivial {
            format!("blockized_{}", b.name)
        } else {
            format!("{}_o", b.name)
        };
        if !tree::find_blocks(&self.func.body, &outer_name).is_empty() {
            return err(format!("cannot make block {outer_name:?}: one exists"));
        }
        let unit_loop = |e: &PrimExpr| {
            e.as_var()
                .is_some_and(|v| outer_loops.iter().any(|(l, x)| l == v && *x == Some(1)))
        };
        let mut outer_ivs = Vec::new();
        let mut outer_values = Vec::new();
        let mut inner_ivs = Vec::new();
        let mut inner_values = Vec::new();
        let mut sub = Substitute::default();
        for ((iv, value), d) in b.iter_vars.iter().zip(&b.iter_values).zip(&divisions) {
            let dt = iv.var.dtype();
            let name = iv.var.name();
            let (o_name, i_name) = if trivial {
                (name.to_string(), name.to_string())
            } else {
                (format!("{name}_o"), format!("{name}_i"))
            };
            if !d.has_inner {
                // An outer binding: the variable lives in the outer block.
                let ov = TirVar::with_dtype(o_name, dt);
                let bound = if !preserve_unit_iters && unit_loop(value) {
                    PrimExpr::int_of(dt, 0)
                } else {
                    value.clone()
                };
                outer_ivs.push(IterVar {
                    var: ov.clone(),
                    min: iv.min.clone(),
                    extent: iv.extent.clone(),
                    kind: iv.kind,
                });
                outer_values.push(bound);
                sub.vars.insert(iv.var.clone(), ov.to_expr());
                continue;
            }
            if !d.has_outer {
                // An inner binding, with a unit variable outside.
                let unit =
                    TirVar::with_dtype(if trivial { format!("{name}o") } else { o_name }, dt);
                outer_ivs.push(IterVar {
                    var: unit,
                    min: PrimExpr::int_of(dt, 0),
                    extent: PrimExpr::int_of(dt, 1),
                    kind: iv.kind,
                });
                outer_values.push(PrimExpr::int_of(dt, 0));
                let nv = TirVar::with_dtype(i_name, dt);
                inner_ivs.push(IterVar {
                    var: nv.clone(),
                    min: iv.min.clone(),
                    extent: iv.extent.clone(),
                    kind: iv.kind,
                });
                inner_values.push(value.clone());
                sub.vars.insert(iv.var.clone(), nv.to_expr());
                continue;
            }
            let ov = TirVar::with_dtype(o_name, dt);
            let nv = TirVar::with_dtype(i_name, dt);
            let e = PrimExpr::int_of(dt, d.span);
            let o_extent = an.simplify(
                &(iv.extent.clone() + PrimExpr::int_of(dt, d.span - 1)).floordiv(e.clone()),
            );
            let o_bound = if !preserve_unit_iters && unit_loop(&d.outer) {
                PrimExpr::int_of(dt, 0)
            } else {
                d.outer.clone()
            };
            outer_ivs.push(IterVar {
                var: ov.clone(),
                min: PrimExpr::int_of(dt, 0),
                extent: o_extent.clone(),
                kind: iv.kind,
            });
            outer_values.push(o_bound);
            inner_ivs.push(IterVar {
                var: nv.clone(),
                min: PrimExpr::int_of(dt, 0),
                extent: e.clone(),
                kind: iv.kind,
            });
            inner_values.push(d.inner.clone());
            let whole = if o_extent.as_int() == Some(1) {
                nv.to_expr()
            } else {
                ov.to_expr() * e + nv.to_expr()
            };
            sub.vars.insert(iv.var.clone(), whole);
        }
        let mut an_in = Analyzer::new();
        for iv in outer_ivs.iter().chain(&inner_ivs) {
            an_in.bind_range(&iv.var, Some(0), iv.extent.as_int().map(|e| e - 1));
        }
        let simplify_region = |r: &BufferRegion, sub: &Substitute| BufferRegion {
            buffer: r.buffer.clone(),
            region: r
                .region
                .iter()
                .map(|(m, e)| (an_in.simplify(&sub.expr(m)), an_in.simplify(&sub.expr(e))))
                .collect(),
        };
        let reads: Vec<BufferRegion> = b.reads.iter().map(|r| simplify_region(r, &sub)).collect();
        let writes: Vec<BufferRegion> = b.writes.iter().map(|r| simplify_region(r, &sub)).collect();
        let domains: Vec<(TirVar, i64)> = inner_ivs
            .iter()
            .filter_map(|iv| Some((iv.var.clone(), iv.extent.as_int()?)))
            .collect();
        let relaxed = |rs: &[BufferRegion]| -> Vec<BufferRegion> {
            rs.iter()
                .map(|r| BufferRegion {
                    buffer: r.buffer.clone(),
                    region: r
                        .region
                        .iter()
                        .zip(r.buffer.shape())
                        .map(|((m, e), full)| relax(m, e, &domains, full, &an_in))
                        .collect(),
                })
                .collect()
        };
        let body = simplify_body(&sub.clone().stmt(&b.body), &an_in);
        // The init, for the whole tile, in the outer block.
        let outer_init = match &b.init {
            None => None,
            Some(init) => Some(Box::new(self.init_nest(
                &b,
                init,
                &inner,
                &inner_ivs,
                &inner_values,
                &sub,
                &writes,
                &an_in,
            )?)),
        };
        let inner_block = Stmt::Block(Box::new(Block {
            name: b.name.clone(),
            iter_vars: inner_ivs,
            iter_values: inner_values,
            reads: reads.clone(),
            writes: writes.clone(),
            init: None,
            body: Box::new(body),
            alloc_buffers: b.alloc_buffers.clone(),
            annotations: b.annotations.clone(),
        }));
        let nest = inner.iter().rev().fold(inner_block, |body, l| Stmt::For {
            loop_var: l.var.clone(),
            min: PrimExpr::int_of(l.var.dtype(), 0),
            extent: PrimExpr::int_of(l.var.dtype(), l.extent),
            kind: l.kind,
            body: Box::new(body),
            annotations: l.annotations.clone(),
        });
        let outer = Stmt::Block(Box::new(Block {
            name: outer_name.clone(),
            iter_vars: outer_ivs,
            iter_values: outer_values,
            reads: relaxed(&reads),
            writes: relaxed(&writes),
            init: outer_init,
            body: Box::new(nest),
            alloc_buffers: vec![],
            annotations: Attrs::new(),
        }));
        self.func.body = replace_loop(&self.func.body, &var, &mut |_| Ok(outer.clone()))?;
        let out = self.new_block(&outer_name);
        self.trace.insts.push(Instruction::Blockize {
            loop_rv: loop_rv.0,
            preserve_unit_iters,
            out: out.0,
        });
        Ok(out)
    }

    /// The outer block's init (module docs, point 6): copies of the inner
    /// loops the inner spatial bindings use, around `<name>_init`.
    #[allow(clippy::too_many_arguments)]
    fn init_nest(
        &self,
        b: &Block,
        init: &Stmt,
        inner: &[Inner],
        inner_ivs: &[IterVar],
        inner_values: &[PrimExpr],
        sub: &Substitute,
        writes: &[BufferRegion],
        an: &Analyzer,
    ) -> Result<Stmt> {
        let init_name = format!("{}_init", b.name);
        if !tree::find_blocks(&self.func.body, &init_name).is_empty() {
            return Err(ScheduleError::new(format!(
                "blockize: cannot make the init block {init_name:?}: one exists"
            )));
        }
        let mut loop_copy = Substitute::default();
        let mut iv_copy = Substitute::default();
        let mut used = Vec::new();
        let mut ivs = Vec::new();
        let mut values = Vec::new();
        for (iv, value) in inner_ivs.iter().zip(inner_values) {
            if iv.kind != IterKind::Spatial {
                continue;
            }
            used.extend(value.free_vars());
            let nv = TirVar::with_dtype(format!("{}_init", iv.var.name()), iv.var.dtype());
            iv_copy.vars.insert(iv.var.clone(), nv.to_expr());
            ivs.push(IterVar {
                var: nv,
                ..iv.clone()
            });
            values.push(value.clone());
        }
        let copies: Vec<(&Inner, TirVar)> = inner
            .iter()
            .filter(|l| used.contains(&l.var))
            .map(|l| {
                let nv = TirVar::with_dtype(format!("{}_init", l.var.name()), l.var.dtype());
                (l, nv)
            })
            .collect();
        for (l, nv) in &copies {
            loop_copy.vars.insert(l.var.clone(), nv.to_expr());
        }
        let values: Vec<PrimExpr> = values.iter().map(|v| loop_copy.expr(v)).collect();
        let body = simplify_body(&iv_copy.clone().stmt(&sub.clone().stmt(init)), an);
        let writes = writes
            .iter()
            .map(|w| BufferRegion {
                buffer: w.buffer.clone(),
                region: w
                    .region
                    .iter()
                    .map(|(m, e)| (iv_copy.expr(m), iv_copy.expr(e)))
                    .collect(),
            })
            .collect();
        let block = Stmt::Block(Box::new(Block {
            name: init_name,
            iter_vars: ivs,
            iter_values: values,
            reads: vec![],
            writes,
            init: None,
            body: Box::new(body),
            alloc_buffers: vec![],
            annotations: Attrs::new(),
        }));
        Ok(copies.iter().rev().fold(block, |body, (l, nv)| Stmt::For {
            loop_var: nv.clone(),
            min: PrimExpr::int_of(nv.dtype(), 0),
            extent: PrimExpr::int_of(nv.dtype(), l.extent),
            kind: l.kind,
            body: Box::new(body),
            annotations: Attrs::new(),
        }))
    }
}

/// `s` with the indices of its loads and stores simplified by `an`.
fn simplify_body(s: &Stmt, an: &Analyzer) -> Stmt {
    fn expr(e: &PrimExpr, an: &Analyzer) -> PrimExpr {
        match e.kind() {
            crate::ir::prim_expr::PrimExprKind::BufferLoad(b, idx) => {
                PrimExpr::load(b, idx.iter().map(|i| an.simplify(&expr(i, an))).collect())
            }
            _ => e.map_children(|c| expr(c, an)),
        }
    }
    match s {
        Stmt::BufferStore {
            buffer,
            value,
            indices,
        } => Stmt::BufferStore {
            buffer: buffer.clone(),
            value: expr(value, an),
            indices: indices.iter().map(|i| an.simplify(&expr(i, an))).collect(),
        },
        _ => tree::map_children(s, &mut |c| Ok(simplify_body(c, an))).expect("infallible"),
    }
}
