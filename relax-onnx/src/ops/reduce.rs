//! Reductions: `Reduce{Sum,Mean,Max,Min,Prod}` and `ArgMax`/`ArgMin`.
//!
//! The axes are an attribute until the opset where they became an input
//! (13 for `ReduceSum`, 18 for the others). No axes reduce every axis,
//! unless `noop_with_empty_axes = 1`, which makes the op the identity.
//! `keepdims` defaults to 1.

use super::{ints, Ctx};
use relax_core::ir::{AttrValue, Attrs, Expr};
use relax_runtime::Error;

fn reduce(cx: &mut Ctx, op: &str, axes_input_from: i64) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let axes = if cx.opset < axes_input_from {
        cx.node.ints("axes")?
    } else {
        cx.ints_input(1)?
    };
    let keepdims = cx.node.int_or("keepdims", 1)? != 0;
    let axes = axes.filter(|a| !a.is_empty());
    if axes.is_none() && cx.node.int_or("noop_with_empty_axes", 0)? != 0 {
        return Ok(vec![x]);
    }
    let attrs = Attrs::from_pairs([
        ("axis", axes.map_or(AttrValue::None, ints)),
        ("keepdims", AttrValue::Bool(keepdims)),
    ]);
    Ok(vec![cx.call(op, vec![x], attrs)?])
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
    if cx.node.int_or("select_last_index", 0)? != 0 {
        return Err(cx.error("select_last_index = 1 is not supported"));
    }
    let attrs = Attrs::from_pairs([
        ("axis", AttrValue::Int(cx.node.int_or("axis", 0)?)),
        (
            "keepdims",
            AttrValue::Bool(cx.node.int_or("keepdims", 1)? != 0),
        ),
    ]);
    Ok(vec![cx.call(op, vec![x], attrs)?])
}

pub fn arg_max(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    arg(cx, "relax.argmax")
}

pub fn arg_min(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    arg(cx, "relax.argmin")
}
