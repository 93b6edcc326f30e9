//! The normalizations over trailing axes or groups: `LayerNormalization`,
//! `RMSNormalization` and `GroupNormalization`.
//!
//! 1. `LayerNormalization` normalizes over the axes from `axis` to the
//!    last. With a scale and bias of exactly the normalized shape it is
//!    `nn.layer_norm` (one fused kernel); otherwise (a broadcast scale, no
//!    bias, or the optional `Mean` and `InvStdDev` outputs asked for) it is
//!    written out: `(x - mean) / sqrt(var + epsilon) * scale + bias`, with
//!    the biased variance, as the ONNX reference computes.
//! 2. `RMSNormalization` (opset 23) is `x / sqrt(mean(x²) + epsilon) *
//!    scale` over the same axes.
//! 3. `GroupNormalization` reshapes `(N, C, …)` to `(N, G, C/G · …)`,
//!    normalizes the last axis, reshapes back and applies a per-channel
//!    scale and bias; opset 18's per-group scale and bias are repeated over
//!    each group's channels first.
//!
//! `stash_type` asks for the statistics in float32; inputs of float32 (and
//! float64, computed in float64) already are.

use super::{ints, normalize_axes, product, shape, Ctx};
use relax_core::ir::{AttrValue, Attrs, Expr, PrimExpr};
use relax_runtime::{DataType, Error};

/// `mean(x)` over `axes`, dims kept.
fn mean(cx: &mut Ctx, x: Expr, axes: &[usize]) -> Result<Expr, Error> {
    let attrs = Attrs::from_pairs([
        ("axis", ints(axes.iter().map(|&a| a as i64))),
        ("keepdims", AttrValue::Bool(true)),
    ]);
    cx.call("relax.mean", vec![x], attrs)
}

/// `1 / sqrt(v + epsilon)`.
fn inv_std(cx: &mut Ctx, v: Expr, epsilon: f64, dtype: DataType) -> Result<Expr, Error> {
    let eps = cx.scalar(epsilon, dtype)?;
    let v = cx.op2("relax.add", v, eps)?;
    cx.op1("relax.rsqrt", v)
}

/// The normalized axes, from `axis` to the last, of a rank-`ndim` input.
fn trailing_axes(cx: &Ctx, ndim: usize) -> Result<Vec<usize>, Error> {
    let axis = cx.node.int_or("axis", -1)?;
    let first = normalize_axes(cx, &[axis], ndim)?[0];
    Ok((first..ndim).collect())
}

pub fn layer_norm(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&["axis", "epsilon", "stash_type"])?;
    let x = cx.input(0)?;
    let scale = cx.input(1)?;
    let bias = cx.opt_input(2)?;
    let (dims, dtype) = cx.tensor(&x)?;
    let axes = trailing_axes(cx, dims.len())?;
    let epsilon = f64::from(cx.node.float_or("epsilon", 1e-5)?);
    let normalized = &dims[axes[0]..];
    let exact = |cx: &Ctx, e: &Expr| cx.tensor(e).is_ok_and(|(d, _)| d.as_slice() == normalized);
    let wants_stats = (1..cx.node.num_outputs()).any(|i| {
        cx.node
            .proto
            .output
            .get(i)
            .is_some_and(|name| !name.is_empty())
    });
    let fused_bias = bias
        .clone()
        .filter(|b| !wants_stats && exact(cx, &scale) && exact(cx, b));
    if let Some(b) = fused_bias {
        let attrs = Attrs::from_pairs([
            ("axes", ints(axes.iter().map(|&a| a as i64))),
            ("epsilon", AttrValue::Float(epsilon)),
        ]);
        return Ok(vec![cx.call(
            "relax.nn.layer_norm",
            vec![x, scale, b],
            attrs,
        )?]);
    }
    let m = mean(cx, x.clone(), &axes)?;
    let centered = cx.op2("relax.subtract", x, m.clone())?;
    let sq = cx.op2("relax.multiply", centered.clone(), centered.clone())?;
    let var = mean(cx, sq, &axes)?;
    let inv = inv_std(cx, var, epsilon, dtype)?;
    let normed = cx.op2("relax.multiply", centered, inv.clone())?;
    let mut y = cx.op2("relax.multiply", normed, scale)?;
    if let Some(b) = bias {
        y = cx.op2("relax.add", y, b)?;
    }
    Ok(vec![y, m, inv])
}

pub fn rms_norm(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&["axis", "epsilon", "stash_type"])?;
    let x = cx.input(0)?;
    let scale = cx.input(1)?;
    let (dims, dtype) = cx.tensor(&x)?;
    let axes = trailing_axes(cx, dims.len())?;
    let epsilon = f64::from(cx.node.float_or("epsilon", 1e-5)?);
    let sq = cx.op2("relax.multiply", x.clone(), x.clone())?;
    let ms = mean(cx, sq, &axes)?;
    let inv = inv_std(cx, ms, epsilon, dtype)?;
    let normed = cx.op2("relax.multiply", x, inv)?;
    Ok(vec![cx.op2("relax.multiply", normed, scale)?])
}

pub fn group_norm(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node
        .only_attrs(&["epsilon", "num_groups", "stash_type"])?;
    let x = cx.input(0)?;
    let mut scale = cx.input(1)?;
    let mut bias = cx.input(2)?;
    let (dims, dtype) = cx.tensor(&x)?;
    if dims.len() < 2 {
        return Err(cx.error("the input must have a channel axis (rank 2 or more)"));
    }
    let groups = cx
        .node
        .int("num_groups")?
        .filter(|&g| g > 0)
        .ok_or_else(|| cx.error("attribute `num_groups` (positive) is required"))?;
    let c = dims[1]
        .as_int()
        .ok_or_else(|| cx.error("the channel count must be a known integer"))?;
    if c % groups != 0 {
        return Err(cx.error(format!("{c} channels do not split into {groups} groups")));
    }
    let epsilon = f64::from(cx.node.float_or("epsilon", 1e-5)?);
    let per_group = c / groups;
    if cx.opset < 21 {
        // Opset 18: one scale and bias per group, repeated over its
        // channels.
        let repeat = |cx: &mut Ctx, v: Expr| -> Result<Expr, Error> {
            let g = PrimExpr::int(groups);
            let col = cx.call(
                "relax.reshape",
                vec![v, shape(vec![g.clone(), PrimExpr::int(1)])],
                Attrs::new(),
            )?;
            let wide = cx.call(
                "relax.broadcast_to",
                vec![col, shape(vec![g, PrimExpr::int(per_group)])],
                Attrs::new(),
            )?;
            cx.call(
                "relax.reshape",
                vec![wide, shape(vec![PrimExpr::int(c)])],
                Attrs::new(),
            )
        };
        scale = repeat(cx, scale)?;
        bias = repeat(cx, bias)?;
    }
    let rest = product(&dims[2..]);
    let grouped = vec![
        dims[0].clone(),
        PrimExpr::int(groups),
        PrimExpr::int(per_group) * rest,
    ];
    let g = cx.call("relax.reshape", vec![x, shape(grouped)], Attrs::new())?;
    let m = mean(cx, g.clone(), &[2])?;
    let centered = cx.op2("relax.subtract", g, m)?;
    let sq = cx.op2("relax.multiply", centered.clone(), centered.clone())?;
    let var = mean(cx, sq, &[2])?;
    let inv = inv_std(cx, var, epsilon, dtype)?;
    let normed = cx.op2("relax.multiply", centered, inv)?;
    let back = cx.call(
        "relax.reshape",
        vec![normed, shape(dims.clone())],
        Attrs::new(),
    )?;
    let mut channel = vec![PrimExpr::int(1); dims.len()];
    channel[1] = PrimExpr::int(c);
    let scale = cx.call(
        "relax.reshape",
        vec![scale, shape(channel.clone())],
        Attrs::new(),
    )?;
    let bias = cx.call("relax.reshape", vec![bias, shape(channel)], Attrs::new())?;
    let y = cx.op2("relax.multiply", back, scale)?;
    Ok(vec![cx.op2("relax.add", y, bias)?])
}
