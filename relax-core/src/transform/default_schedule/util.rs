//! Small builders and index analyses shared by the schedules.

use super::nest::Axis;
use crate::arith::Analyzer;
use crate::ir::prim_expr::{PrimExpr, PrimExprKind, TirVar};
use crate::ir::Attrs;
use crate::tir::{Buffer, ForKind, Stmt};
use relax_runtime::DataType;
use std::collections::HashMap;

pub(super) use crate::tir::affine::{linear_coeff, uses_var};

/// Whether a loop variable of this dtype can be scheduled (an integer).
pub(super) fn is_index_dtype(d: DataType) -> bool {
    d.is_integer() && !d.is_bool() && d.lanes() == 1
}

pub(super) fn is_zero(e: &PrimExpr) -> bool {
    e.as_int() == Some(0)
}

pub(super) fn zero(a: &Axis) -> PrimExpr {
    PrimExpr::int_of(a.loop_var.dtype(), 0)
}

pub(super) fn seq(mut stmts: Vec<Stmt>) -> Stmt {
    if stmts.len() == 1 {
        stmts.pop().expect("one statement")
    } else {
        Stmt::Seq(stmts)
    }
}

/// A new loop variable named after `v` with `suffix`.
pub(super) fn fresh(v: &TirVar, suffix: &str) -> TirVar {
    TirVar::with_dtype(format!("{}{suffix}", v.name()), v.dtype())
}

/// `axes` with new loop variables of the same names.
pub(super) fn new_loops(axes: &[Axis]) -> Vec<Axis> {
    axes.iter()
        .map(|a| Axis {
            loop_var: fresh(&a.loop_var, ""),
            ..a.clone()
        })
        .collect()
}

/// Every axis' iteration variable mapped to its own loop variable.
pub(super) fn identity<'a>(axes: impl IntoIterator<Item = &'a Axis>) -> HashMap<TirVar, PrimExpr> {
    axes.into_iter()
        .map(|a| (a.var.clone(), PrimExpr::var(&a.loop_var)))
        .collect()
}

/// Whether two extents are equal, syntactically or provably.
pub(super) fn same_extent(a: &PrimExpr, b: &PrimExpr) -> bool {
    a == b || crate::arith::Analyzer::new().compare_equal(a, b) == crate::arith::Proof::Proven
}

/// `a + b`, or `b` when `a` is 0.
pub(super) fn add(a: &PrimExpr, b: &PrimExpr) -> PrimExpr {
    if is_zero(a) {
        b.clone()
    } else {
        a.clone() + b.clone()
    }
}

/// `e` with every load of `buffer` replaced by `with`.
pub(super) fn replace_loads(e: &PrimExpr, buffer: &Buffer, with: &PrimExpr) -> PrimExpr {
    match e.kind() {
        PrimExprKind::BufferLoad(b, _) if b == buffer => with.clone(),
        _ => e.map_children(|c| replace_loads(c, buffer, with)),
    }
}

/// A loop from 0 over `extent`, or just `body` when the extent is 1 (the
/// body then uses 0 for `var`, see the callers).
pub(super) fn loop_unless_once(var: &TirVar, extent: PrimExpr, kind: ForKind, body: Stmt) -> Stmt {
    if extent.as_int() == Some(1) {
        return body;
    }
    let zero = PrimExpr::int_of(var.dtype(), 0);
    for_(var, zero, extent, kind, body)
}

pub(super) fn for_(
    var: &TirVar,
    min: PrimExpr,
    extent: PrimExpr,
    kind: ForKind,
    body: Stmt,
) -> Stmt {
    Stmt::For {
        loop_var: var.clone(),
        min,
        extent,
        kind,
        body: Box::new(body),
        annotations: Attrs::new(),
    }
}

/// Serial loops over `axes` (their own loop variables) around `body`, the
/// outermost of kind `outer` when given.
///
/// A `Parallel` outermost loop whose extent is symbolic (a batch, often 1
/// at run time) or a constant below [`FUSE_PARALLEL_BELOW`] would leave the
/// threads idle: it is fused with the next axis into one parallel loop
/// over both, each variable bound from the fused one (`a = f // e₁`,
/// `b = f % e₁`), so that the symbolic dim stays outermost and the threads
/// share the axis after it.
pub(super) fn nest(axes: &[Axis], body: Stmt, outer: Option<ForKind>) -> Stmt {
    if let ([a, b, rest @ ..], Some(ForKind::Parallel)) = (axes, outer) {
        if too_short_to_share(a) {
            return fused_parallel(a, b, nest(rest, body, None));
        }
    }
    axes.iter().enumerate().rev().fold(body, |body, (k, a)| {
        let kind = match outer {
            Some(kind) if k == 0 => kind,
            _ => ForKind::Serial,
        };
        for_(&a.loop_var, zero(a), a.extent.clone(), kind, body)
    })
}

/// The smallest constant extent of a parallel loop that [`nest`] leaves as
/// it is: a few iterations a thread.
pub(super) const FUSE_PARALLEL_BELOW: i64 = 8;

/// Whether a parallel loop over `a` alone would leave threads idle: its
/// extent is symbolic (a batch, often 1 at run time) or a constant below
/// [`FUSE_PARALLEL_BELOW`].
pub(super) fn too_short_to_share(a: &Axis) -> bool {
    a.extent.as_int().is_none_or(|e| e < FUSE_PARALLEL_BELOW)
}

/// One parallel loop over the axes `a` and `b` (`b` varying fastest)
/// around `body`, which reads their loop variables.
fn fused_parallel(a: &Axis, b: &Axis, body: Stmt) -> Stmt {
    let dt = a.loop_var.dtype();
    let f = TirVar::with_dtype(
        format!("{}_{}_fused", a.loop_var.name(), b.loop_var.name()),
        dt,
    );
    let an = Analyzer::new();
    let eb = b.extent.clone().cast(dt);
    let total = an.simplify(&(a.extent.clone().cast(dt) * eb.clone()));
    let fe = PrimExpr::var(&f);
    let bind = |var: &TirVar, value: PrimExpr, body: Stmt| Stmt::LetStmt {
        var: var.clone(),
        value: an.simplify(&value).cast(var.dtype()),
        body: Box::new(body),
    };
    let body = bind(&b.loop_var, fe.clone().floormod(eb.clone()), body);
    let body = bind(&a.loop_var, fe.floordiv(eb), body);
    for_(&f, PrimExpr::int_of(dt, 0), total, ForKind::Parallel, body)
}

/// Bytes of a cache line: the unit of the schedules' prefetches.
pub(super) const CACHE_LINE_BYTES: i64 = 64;

/// `T.prefetch(T.address_of(b[indices]), 0, 3, 1)`: TVM's hint to read
/// the cache line holding that element into every level of the cache.
pub(super) fn prefetch(b: &Buffer, indices: Vec<PrimExpr>) -> Stmt {
    let address = PrimExpr::call(
        DataType::handle(),
        "address_of",
        vec![PrimExpr::load(b, indices)],
    );
    let flag = |v: i64| PrimExpr::int_of(DataType::i32(), v);
    Stmt::Evaluate(PrimExpr::call(
        DataType::i32(),
        "prefetch",
        vec![address, flag(0), flag(3), flag(1)],
    ))
}

/// Every `BufferLoad` in `e`, including those inside indices.
pub(super) fn collect_loads(e: &PrimExpr, out: &mut Vec<(Buffer, Vec<PrimExpr>)>) {
    if let PrimExprKind::BufferLoad(b, idx) = e.kind() {
        out.push((b.clone(), idx.clone()));
    }
    for c in e.children() {
        collect_loads(c, out);
    }
}

/// The coefficient of `v` in the flat offset of every load in `e`
/// (`None`: not affine in `v` with a constant coefficient).
pub(super) fn load_coeffs(e: &PrimExpr, v: &TirVar) -> Vec<Option<i64>> {
    let mut loads = Vec::new();
    collect_loads(e, &mut loads);
    loads
        .iter()
        .map(|(buf, idx)| linear_coeff(&buf.offset_of(idx), v))
        .collect()
}

/// Whether loads with these coefficients read contiguously along their
/// variable: some with coefficient 1, the others invariant.
pub(super) fn contiguous(coeffs: &[Option<i64>]) -> bool {
    coeffs.contains(&Some(1)) && coeffs.iter().all(|c| matches!(c, Some(0 | 1)))
}

/// The product of the extents of `axes`, in `dtype`, simplified.
pub(super) fn fused_extent(axes: &[Axis], dtype: DataType) -> PrimExpr {
    let total = axes.iter().fold(PrimExpr::int_of(dtype, 1), |acc, a| {
        acc * a.extent.clone().cast(dtype)
    });
    Analyzer::new().simplify(&total)
}

/// Each of `axes`' variables as a function of `fused`, an index (of
/// `dtype`) of their flattened iteration space, the last axis varying
/// fastest.
pub(super) fn unfuse(
    axes: &[Axis],
    fused: &PrimExpr,
    dtype: DataType,
) -> HashMap<TirVar, PrimExpr> {
    let an = Analyzer::new();
    let mut map = HashMap::new();
    let mut stride = PrimExpr::int_of(dtype, 1);
    for (k, a) in axes.iter().enumerate().rev() {
        let extent = a.extent.clone().cast(dtype);
        let q = fused.clone().floordiv(stride.clone());
        let v = if k == 0 {
            q
        } else {
            q.floormod(extent.clone())
        };
        map.insert(a.var.clone(), an.simplify(&v).cast(a.var.dtype()));
        stride = an.simplify(&(stride * extent));
    }
    map
}
