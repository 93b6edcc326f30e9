//! Reductions: `Reduce{Sum,Mean,Max,Min,Prod}`, the composite ones
//! (`ReduceL1`, `ReduceL2`, `ReduceLogSum`, `ReduceLogSumExp`,
//! `ReduceSumSquare`), and `ArgMax`/`ArgMin`.
//!
//! 1. The axes are an attribute until the opset where they became an input
//!    (13 for `ReduceSum`, 18 for the others). No axes reduce every axis,
//!    unless `noop_with_empty_axes = 1`, which makes the op the identity.
//!    An axes input of a known length 0 is empty whatever it holds; one
//!    computed at run time otherwise is reduced over as `runtime_axes.rs`
//!    describes. `keepdims` defaults to 1.
//! 2. The composites are written with the registry's ops: `L1` is
//!    `sum(|x|)`, `L2` is `sqrt(sum(x²))`, `LogSum` is `log(sum(x))`,
//!    `SumSquare` is `sum(x²)`, and `LogSumExp` is `m + log(sum(exp(x -
//!    m)))` with `m` the maximum over the same axes, so that it does not
//!    overflow.
//! 3. `select_last_index = 1` takes the last extreme: the arg of the input
//!    reversed along the axis (a strided slice of step -1), counted back
//!    from the end.

use super::runtime_axes::{is_runtime_axes, RuntimeAxes};
use super::{ints, Ctx};
use relax_core::ir::{AttrValue, Attrs, Expr, PrimExpr};
use relax_runtime::Error;

/// The reduction's axes (`None`: every axis), or `Err` if the op is the
/// identity (`noop_with_empty_axes`), carrying the input back.
fn reduce_axes(cx: &mut Ctx, axes_input_from: i64) -> Result<Option<Vec<i64>>, Error> {
    if cx.opset < axes_input_from {
        return cx.node.ints("axes");
    }
    // An axes input of a known length 0 is empty whatever it holds.
    if let Some(e) = cx.raw_input(1)? {
        let empty = e
            .struct_info()
            .and_then(|s| s.as_tensor())
            .and_then(|t| t.shape_values())
            .is_some_and(|d| d.len() == 1 && d[0].as_int() == Some(0));
        if empty {
            return Ok(Some(vec![]));
        }
    }
    cx.ints_input(1)
}

/// The attributes of a reduction over `axes`, or `None` when the node is
/// the identity.
fn reduce_attrs(cx: &mut Ctx, axes_input_from: i64) -> Result<Option<Attrs>, Error> {
    let axes = reduce_axes(cx, axes_input_from)?.filter(|a| !a.is_empty());
    if axes.is_none() && cx.node.int_or("noop_with_empty_axes", 0)? != 0 {
        return Ok(None);
    }
    let keepdims = cx.node.int_or("keepdims", 1)? != 0;
    Ok(Some(Attrs::from_pairs([
        ("axis", axes.map_or(AttrValue::None, ints)),
        ("keepdims", AttrValue::Bool(keepdims)),
    ])))
}

/// The node's axes, computed at run time (see `runtime_axes`), if they
/// are.
fn runtime_axes(
    cx: &mut Ctx,
    x: &Expr,
    axes_input_from: i64,
) -> Result<Option<RuntimeAxes>, Error> {
    if cx.opset < axes_input_from || !is_runtime_axes(cx, 1)? {
        return Ok(None);
    }
    RuntimeAxes::new(cx, x, 1).map(Some)
}

fn keepdims(cx: &Ctx) -> Result<bool, Error> {
    Ok(cx.node.int_or("keepdims", 1)? != 0)
}

fn reduce(cx: &mut Ctx, op: &str, axes_input_from: i64) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    if let Some(axes) = runtime_axes(cx, &x, axes_input_from)? {
        let (_, dtype) = cx.tensor(&x)?;
        let mean = op == "relax.mean";
        let op = if mean { "relax.sum" } else { op };
        let x = axes.pad_identity(cx, x, op)?;
        let mut full = axes.full(cx, x, op)?;
        if mean {
            let n = axes.reduced_count(cx, dtype)?;
            full = cx.op2("relax.divide", full, n)?;
        }
        let keep = keepdims(cx)?;
        return Ok(vec![axes.finish(cx, full, keep)?]);
    }
    match reduce_attrs(cx, axes_input_from)? {
        None => Ok(vec![x]),
        Some(attrs) => Ok(vec![cx.call(op, vec![x], attrs)?]),
    }
}

/// A composite reduction: `post(sum(pre(x)))` over the node's axes.
fn composite(cx: &mut Ctx, pre: &[&str], post: &[&str]) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    if let Some(axes) = runtime_axes(cx, &x, 18)? {
        let mut y = x;
        for op in pre {
            y = apply(cx, op, y)?;
        }
        y = axes.pad_identity(cx, y, "relax.sum")?;
        y = axes.full(cx, y, "relax.sum")?;
        for op in post {
            y = apply(cx, op, y)?;
        }
        let keep = keepdims(cx)?;
        return Ok(vec![axes.finish(cx, y, keep)?]);
    }
    let Some(attrs) = reduce_attrs(cx, 18)? else {
        // The identity on the reduced values: pre then post, no sum.
        let mut y = x;
        for op in pre.iter().chain(post) {
            y = apply(cx, op, y)?;
        }
        return Ok(vec![y]);
    };
    let mut y = x;
    for op in pre {
        y = apply(cx, op, y)?;
    }
    y = cx.call("relax.sum", vec![y], attrs)?;
    for op in post {
        y = apply(cx, op, y)?;
    }
    Ok(vec![y])
}

/// `op(x)`, where `square` is `x * x`.
fn apply(cx: &mut Ctx, op: &str, x: Expr) -> Result<Expr, Error> {
    if op == "square" {
        cx.op2("relax.multiply", x.clone(), x)
    } else {
        cx.op1(op, x)
    }
}

pub fn reduce_l1(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    composite(cx, &["relax.abs"], &[])
}

pub fn reduce_l2(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    composite(cx, &["square"], &["relax.sqrt"])
}

pub fn reduce_log_sum(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    composite(cx, &[], &["relax.log"])
}

pub fn reduce_sum_square(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    composite(cx, &["square"], &[])
}

pub fn reduce_log_sum_exp(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    if let Some(axes) = runtime_axes(cx, &x, 18)? {
        // Padded with -inf, which exp makes 0: an empty axis gives
        // log(0) = -inf. A maximum of -inf (all elements -inf) shifts by 0
        // instead, so that the shift does not make -inf - -inf = NaN.
        let x = axes.pad_identity(cx, x, "relax.max")?;
        let m = axes.full(cx, x.clone(), "relax.max")?;
        let (_, dtype) = cx.tensor(&x)?;
        let ninf = cx.scalar(f64::NEG_INFINITY, dtype)?;
        let zero = cx.scalar(0.0, dtype)?;
        let all_ninf = cx.op2("relax.equal", m.clone(), ninf)?;
        let m = cx.call("relax.where", vec![all_ninf, zero, m], Attrs::new())?;
        let shifted = cx.op2("relax.subtract", x, m.clone())?;
        let e = cx.op1("relax.exp", shifted)?;
        let s = axes.full(cx, e, "relax.sum")?;
        let l = cx.op1("relax.log", s)?;
        let full = cx.op2("relax.add", l, m)?;
        let keep = keepdims(cx)?;
        return Ok(vec![axes.finish(cx, full, keep)?]);
    }
    let Some(attrs) = reduce_attrs(cx, 18)? else {
        return Ok(vec![x]);
    };
    let keep = Attrs::from_pairs([
        (
            "axis",
            attrs.get("axis").cloned().unwrap_or(AttrValue::None),
        ),
        ("keepdims", AttrValue::Bool(true)),
    ]);
    let m = cx.call("relax.max", vec![x.clone()], keep)?;
    let shifted = cx.op2("relax.subtract", x, m.clone())?;
    let e = cx.op1("relax.exp", shifted)?;
    let s = cx.call("relax.sum", vec![e], attrs.clone())?;
    let l = cx.op1("relax.log", s)?;
    let keepdims = attrs.get("keepdims") == Some(&AttrValue::Bool(true));
    let m = if keepdims {
        m
    } else {
        let squeeze = Attrs::from_pairs([(
            "axis",
            attrs.get("axis").cloned().unwrap_or(AttrValue::None),
        )]);
        cx.call("relax.squeeze", vec![m], squeeze)?
    };
    Ok(vec![cx.op2("relax.add", l, m)?])
}

pub fn reduce_sum(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    reduce(cx, "relax.sum", 13)
}

pub fn reduce_mean(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    reduce(cx, "relax.mean", 18)
}

pub fn reduce_max(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    reduce(cx, "relax.max", 18)
}

pub fn reduce_min(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    reduce(cx, "relax.min", 18)
}

pub fn reduce_prod(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    reduce(cx, "relax.prod", 18)
}

fn arg(cx: &mut Ctx, op: &str) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let axis = cx.node.int_or("axis", 0)?;
    let attrs = Attrs::from_pairs([
        ("axis", AttrValue::Int(axis)),
        (
            "keepdims",
            AttrValue::Bool(cx.node.int_or("keepdims", 1)? != 0),
        ),
    ]);
    if cx.node.int_or("select_last_index", 0)? == 0 {
        return Ok(vec![cx.call(op, vec![x], attrs)?]);
    }
    // The last extreme is the first of the reversed input, counted from
    // the end: n - 1 - arg(reverse(x)).
    let (dims, _) = cx.tensor(&x)?;
    let a = super::normalize_axes(cx, &[axis], dims.len())?[0];
    let n = dims[a].clone();
    let reverse = Attrs::from_pairs([
        ("axes", ints([a as i64])),
        ("begin", ints([-1])),
        (
            "end",
            AttrValue::Array(vec![AttrValue::PrimExpr(-(n.clone() + 1))]),
        ),
        ("strides", ints([-1])),
    ]);
    let reversed = cx.call("relax.strided_slice", vec![x], reverse)?;
    let first = cx.call(op, vec![reversed], attrs)?;
    let last = cx.dim_tensor(n - PrimExpr::int(1))?;
    Ok(vec![cx.op2("relax.subtract", last, first)?])
}

pub fn arg_max(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    arg(cx, "relax.argmax")
}

pub fn arg_min(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    arg(cx, "relax.argmin")
}
