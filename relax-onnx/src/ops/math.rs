//! Math ops written with the registry's reductions and elementwise ops:
//! `Hardmax`, `LpNormalization`, `MeanVarianceNormalization`, `Swish`.
//!
//! 1. `Hardmax` is 1 at the first maximum along `axis` and 0 elsewhere:
//!    `argmax` (dims kept) compared with the positions along the axis.
//!    Before opset 13 the input is read as 2-d, `[0, axis)` by `[axis,
//!    rank)`, and the maximum is over each row (reshaped there and back).
//! 2. `LpNormalization` divides by the L1 (`sum |x|`) or L2 (`sqrt(sum
//!    x²)`) norm along `axis`; a zero norm gives 0 (as the ONNX reference,
//!    not `0 / 0`).
//! 3. `MeanVarianceNormalization` is ONNX's function body: `(x - E[x]) /
//!    (sqrt(E[x²] - E[x]²) + 1e-9)` over `axes` (default `[0, 2, 3]`).
//! 4. `Swish` (opset 24) is `x · sigmoid(alpha · x)`.

use super::{ints, normalize_axes, product, shape, Ctx};
use relax_core::ir::{AttrValue, Attrs, Expr, PrimExpr};
use relax_runtime::{DataType, Error};

/// `op` (a reduction) of `x` over `axes`, dims kept.
fn reduce_kept(cx: &mut Ctx, op: &str, x: Expr, axes: &[usize]) -> Result<Expr, Error> {
    let attrs = Attrs::from_pairs([
        ("axis", ints(axes.iter().map(|&a| a as i64))),
        ("keepdims", AttrValue::Bool(true)),
    ]);
    cx.call(op, vec![x], attrs)
}

/// The input, which must be a float tensor, with its dims and dtype.
fn float_input(cx: &mut Ctx) -> Result<(Expr, Vec<PrimExpr>, DataType), Error> {
    let x = cx.input(0)?;
    let (dims, dtype) = cx.tensor(&x)?;
    if !dtype.is_float() {
        return Err(cx.error(format!("the input must be a float tensor, not {dtype}")));
    }
    Ok((x, dims, dtype))
}

pub fn hardmax(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&["axis"])?;
    let x = cx.input(0)?;
    let (dims, dtype) = cx.tensor(&x)?;
    let default = if cx.opset < 13 { 1 } else { -1 };
    let axis = cx.node.int_or("axis", default)?;
    if dims.is_empty() {
        return Err(cx.error("the input must have rank 1 or more, found a scalar"));
    }
    let axis = normalize_axes(cx, &[axis], dims.len())?[0];
    if cx.opset >= 13 {
        return Ok(vec![hardmax_along(cx, x, &dims, axis, dtype)?]);
    }
    // Opset 1–11: the input coerced to 2-d at `axis`.
    let rows = product(&dims[..axis]);
    let cols = product(&dims[axis..]);
    let flat = cx.call(
        "relax.reshape",
        vec![x, shape(vec![rows.clone(), cols.clone()])],
        Attrs::new(),
    )?;
    let y = hardmax_along(cx, flat, &[rows, cols], 1, dtype)?;
    Ok(vec![cx.call(
        "relax.reshape",
        vec![y, shape(dims)],
        Attrs::new(),
    )?])
}

/// 1 at the first maximum of `x` along `axis`, else 0, in `dtype`.
fn hardmax_along(
    cx: &mut Ctx,
    x: Expr,
    dims: &[PrimExpr],
    axis: usize,
    dtype: DataType,
) -> Result<Expr, Error> {
    let attrs = Attrs::from_pairs([
        ("axis", AttrValue::Int(axis as i64)),
        ("keepdims", AttrValue::Bool(true)),
    ]);
    let arg = cx.call("relax.argmax", vec![x], attrs)?;
    // The positions along the axis, shaped to broadcast against `arg`.
    let n = dims[axis].clone();
    let attrs = Attrs::from_pairs([("dtype", AttrValue::DataType(DataType::i64()))]);
    let zero = Expr::prim_value(PrimExpr::int(0));
    let one = Expr::prim_value(PrimExpr::int(1));
    let pos = cx.call(
        "relax.arange",
        vec![zero, Expr::prim_value(n.clone()), one],
        attrs,
    )?;
    let pos_dims: Vec<PrimExpr> = (0..dims.len())
        .map(|k| {
            if k == axis {
                n.clone()
            } else {
                PrimExpr::int(1)
            }
        })
        .collect();
    let pos = cx.call("relax.reshape", vec![pos, shape(pos_dims)], Attrs::new())?;
    let arg = cx.astype(arg, DataType::i64())?;
    let hit = cx.op2("relax.equal", pos, arg)?;
    cx.astype(hit, dtype)
}

pub fn lp_normalization(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&["axis", "p"])?;
    let (x, dims, dtype) = float_input(cx)?;
    let axis = cx.node.int_or("axis", -1)?;
    let axes = normalize_axes(cx, &[axis], dims.len())?;
    let norm = match cx.node.int_or("p", 2)? {
        1 => {
            let a = cx.op1("relax.abs", x.clone())?;
            reduce_kept(cx, "relax.sum", a, &axes)?
        }
        2 => {
            let sq = cx.op2("relax.multiply", x.clone(), x.clone())?;
            let s = reduce_kept(cx, "relax.sum", sq, &axes)?;
            cx.op1("relax.sqrt", s)?
        }
        p => return Err(cx.error(format!("attribute `p` must be 1 or 2, found {p}"))),
    };
    let zero = cx.scalar(0.0, dtype)?;
    let is_zero = cx.op2("relax.equal", norm.clone(), zero.clone())?;
    let y = cx.op2("relax.divide", x, norm)?;
    Ok(vec![cx.call(
        "relax.where",
        vec![is_zero, zero, y],
        Attrs::new(),
    )?])
}

pub fn mean_variance_normalization(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&["axes"])?;
    let (x, dims, dtype) = float_input(cx)?;
    let axes = cx.node.ints("axes")?.unwrap_or_else(|| vec![0, 2, 3]);
    let axes = normalize_axes(cx, &axes, dims.len())?;
    let mean = reduce_kept(cx, "relax.mean", x.clone(), &axes)?;
    let sq = cx.op2("relax.multiply", x.clone(), x.clone())?;
    let mean_sq = reduce_kept(cx, "relax.mean", sq, &axes)?;
    let sq_mean = cx.op2("relax.multiply", mean.clone(), mean.clone())?;
    let var = cx.op2("relax.subtract", mean_sq, sq_mean)?;
    let std = cx.op1("relax.sqrt", var)?;
    let eps = cx.scalar(1e-9, dtype)?;
    let den = cx.op2("relax.add", std, eps)?;
    let centered = cx.op2("relax.subtract", x, mean)?;
    Ok(vec![cx.op2("relax.divide", centered, den)?])
}

pub fn swish(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&["alpha"])?;
    let (x, _, dtype) = float_input(cx)?;
    let alpha = f64::from(cx.node.float_or("alpha", 1.0)?);
    let alpha = cx.scalar(alpha, dtype)?;
    let ax = cx.op2("relax.multiply", alpha, x.clone())?;
    let s = cx.op1("relax.sigmoid", ax)?;
    Ok(vec![cx.op2("relax.multiply", x, s)?])
}
