//! The building blocks of recent language models that ONNX added as ops of
//! their own, written with the registry's ops as ONNX's reference defines
//! them.
//!
//! 1. `RotaryEmbedding` (opset 23): `X` is `(batch, heads, seq, head)`, or
//!    `(batch, seq, heads · head)` with `num_heads`. The first
//!    `rotary_embedding_dim` channels of each head (all of them when it is
//!    0) are rotated, the rest pass through. The caches are
//!    `(max_position, rot / 2)` gathered by `position_ids`, or, without
//!    `position_ids`, already `(batch, seq, rot / 2)`. The rotated channels
//!    form pairs `(x1, x2)`, the two halves or (with `interleaved`) the even
//!    and odd channels, and become `(cos·x1 − sin·x2, sin·x1 + cos·x2)` in
//!    the same places.
//! 2. `CausalConvWithState` (opset 27): a depthwise 1-d convolution over
//!    `(batch, channels, length)` that sees only the current and past
//!    positions. The input is prefixed with `past_state` (zeros without
//!    one), the `k − 1` positions before it, and convolved without padding,
//!    so the output keeps the input's length; an optional bias and a fused
//!    SiLU (`activation` `silu` or its alias `swish`) follow. The second
//!    output, `present_state`, is the last `k − 1` positions of the
//!    prefixed input: the `past_state` of the next call.
//! 3. `LinearAttention` (opset 27): attention with a fixed-size state per
//!    key head, `(batch, kv_heads, d_k, d_v)`, updated once per position in
//!    float32: `gated` rules first scale it by `exp(decay_t)`, `delta` rules
//!    write `beta_t · (v_t − stateᵀ·k_t)` in place of `v_t`, and every rule
//!    adds `k_t ⊗ v_t`; the output at `t` is `scale · q_t · state`, with each
//!    key head's state shared by `q_heads / kv_heads` query heads. The
//!    recurrence is unrolled, so the sequence length must be known when the
//!    model is imported (a decode step is length 1); the final state is the
//!    second output.

use super::{ints, Ctx};
use relax_core::ir::{AttrValue, Attrs, Expr, PrimExpr};
use relax_runtime::Error;

/// `x[..., begin:end:step]` along `axis`, with `begin` and `end` in range.
fn slice(
    cx: &mut Ctx,
    x: Expr,
    axis: i64,
    begin: PrimExpr,
    end: PrimExpr,
    step: i64,
) -> Result<Expr, Error> {
    let attrs = Attrs::from_pairs([
        ("axes", ints([axis])),
        ("begin", AttrValue::Array(vec![AttrValue::PrimExpr(begin)])),
        ("end", AttrValue::Array(vec![AttrValue::PrimExpr(end)])),
        ("strides", ints([step])),
    ]);
    cx.call("relax.strided_slice", vec![x], attrs)
}

fn concat(cx: &mut Ctx, parts: Vec<Expr>, axis: i64) -> Result<Expr, Error> {
    cx.call(
        "relax.concat",
        vec![Expr::tuple(parts)],
        Attrs::from_pairs([("axis", AttrValue::Int(axis))]),
    )
}

fn reshape(cx: &mut Ctx, x: Expr, dims: Vec<PrimExpr>) -> Result<Expr, Error> {
    cx.call("relax.reshape", vec![x, Expr::shape(dims)], Attrs::new())
}

fn swap_1_2(cx: &mut Ctx, x: Expr) -> Result<Expr, Error> {
    let attrs = Attrs::from_pairs([("axes", ints([0, 2, 1, 3]))]);
    cx.call("relax.permute_dims", vec![x], attrs)
}

fn expand_dims(cx: &mut Ctx, x: Expr, axis: i64) -> Result<Expr, Error> {
    let attrs = Attrs::from_pairs([("axis", ints([axis]))]);
    cx.call("relax.expand_dims", vec![x], attrs)
}

pub fn rotary_embedding(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node
        .only_attrs(&["interleaved", "num_heads", "rotary_embedding_dim"])?;
    let x = cx.input(0)?;
    let (mut cos, mut sin) = (cx.input(1)?, cx.input(2)?);
    let positions = cx.opt_input(3)?;
    let interleaved = cx.node.int_or("interleaved", 0)? != 0;
    let (x_dims, _) = cx.tensor(&x)?;

    // To (batch, seq, heads, head).
    let x = match x_dims.len() {
        4 => swap_1_2(cx, x)?,
        3 => {
            let heads = cx.node.int_or("num_heads", 0)?;
            let hidden = x_dims[2]
                .as_int()
                .ok_or_else(|| cx.error("the hidden size of a 3-d X must be a known integer"))?;
            if heads <= 0 || hidden % heads != 0 {
                return Err(cx.error(format!(
                    "a 3-d X needs `num_heads` dividing its hidden size {hidden} (num_heads is {heads})"
                )));
            }
            let dims = vec![
                x_dims[0].clone(),
                x_dims[1].clone(),
                PrimExpr::int(heads),
                PrimExpr::int(hidden / heads),
            ];
            reshape(cx, x, dims)?
        }
        n => return Err(cx.error(format!("X must be 3-d or 4-d, not {n}-d"))),
    };
    let (dims, _) = cx.tensor(&x)?;
    let head = dims[3]
        .as_int()
        .ok_or_else(|| cx.error("the head size must be a known integer"))?;
    let rot = match cx.node.int_or("rotary_embedding_dim", 0)? {
        0 => head,
        r => r,
    };
    if rot <= 0 || rot > head || rot % 2 != 0 {
        return Err(cx.error(format!(
            "rotary_embedding_dim {rot} must be even and at most the head size {head}"
        )));
    }
    let half = rot / 2;

    // The caches, to (batch, seq, 1, rot / 2).
    if let Some(p) = positions {
        let take = |cx: &mut Ctx, cache: Expr| {
            cx.call(
                "relax.take",
                vec![cache, p.clone()],
                Attrs::from_pairs([("axis", AttrValue::Int(0))]),
            )
        };
        cos = take(cx, cos)?;
        sin = take(cx, sin)?;
    }
    for (name, cache) in [("cos_cache", &cos), ("sin_cache", &sin)] {
        let (d, _) = cx.tensor(cache)?;
        if d.len() != 3 || d[2].as_int() != Some(half) {
            return Err(cx.error(format!(
                "{name} must give (batch, sequence, {half}) values, not rank {} ending in {:?}",
                d.len(),
                d.last().map(|e| e.to_string())
            )));
        }
    }
    let cos = expand_dims(cx, cos, 2)?;
    let sin = expand_dims(cx, sin, 2)?;

    let (x_rot, x_pass) = if rot < head {
        (
            slice(cx, x.clone(), 3, PrimExpr::int(0), PrimExpr::int(rot), 1)?,
            Some(slice(cx, x, 3, PrimExpr::int(rot), PrimExpr::int(head), 1)?),
        )
    } else {
        (x, None)
    };
    let (x1, x2) = if interleaved {
        (
            slice(
                cx,
                x_rot.clone(),
                3,
                PrimExpr::int(0),
                PrimExpr::int(rot),
                2,
            )?,
            slice(cx, x_rot, 3, PrimExpr::int(1), PrimExpr::int(rot), 2)?,
        )
    } else {
        (
            slice(
                cx,
                x_rot.clone(),
                3,
                PrimExpr::int(0),
                PrimExpr::int(half),
                1,
            )?,
            slice(cx, x_rot, 3, PrimExpr::int(half), PrimExpr::int(rot), 1)?,
        )
    };
    let cos_x1 = cx.op2("relax.multiply", cos.clone(), x1.clone())?;
    let sin_x2 = cx.op2("relax.multiply", sin.clone(), x2.clone())?;
    let real = cx.op2("relax.subtract", cos_x1, sin_x2)?;
    let sin_x1 = cx.op2("relax.multiply", sin, x1)?;
    let cos_x2 = cx.op2("relax.multiply", cos, x2)?;
    let imag = cx.op2("relax.add", sin_x1, cos_x2)?;
    let rotated = if interleaved {
        // (…, rot / 2, 2) with each pair side by side, then (…, rot).
        let real = expand_dims(cx, real, 4)?;
        let imag = expand_dims(cx, imag, 4)?;
        let pairs = concat(cx, vec![real, imag], 4)?;
        let mut d = dims[..3].to_vec();
        d.push(PrimExpr::int(rot));
        reshape(cx, pairs, d)?
    } else {
        concat(cx, vec![real, imag], 3)?
    };
    let y = match x_pass {
        Some(rest) => concat(cx, vec![rotated, rest], 3)?,
        None => rotated,
    };
    Ok(vec![if x_dims.len() == 4 {
        swap_1_2(cx, y)?
    } else {
        reshape(cx, y, x_dims)?
    }])
}

pub fn causal_conv_with_state(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&["activation"])?;
    let x = cx.input(0)?;
    let w = cx.input(1)?;
    let bias = cx.opt_input(2)?;
    let past = cx.opt_input(3)?;
    let silu = match cx.node.string("activation")?.as_deref() {
        None | Some("none") => false,
        Some("silu") | Some("swish") => true,
        Some(other) => {
            return Err(cx.error(format!(
                "activation `{other}` is not one of none, silu and swish"
            )))
        }
    };
    let (x_dims, dtype) = cx.tensor(&x)?;
    if x_dims.len() != 3 {
        return Err(cx.error(format!(
            "input must be (batch, channels, length), not rank {}",
            x_dims.len()
        )));
    }
    let w_dims = cx.static_dims(&w)?;
    let channels = x_dims[1]
        .as_int()
        .ok_or_else(|| cx.error("the channel count must be a known integer"))?;
    if w_dims.len() != 3 || w_dims[0] != channels || w_dims[1] != 1 || w_dims[2] < 1 {
        return Err(cx.error(format!(
            "weight must be ({channels}, 1, k) with k ≥ 1, not {w_dims:?}"
        )));
    }
    let k = w_dims[2];
    let (batch, length) = (x_dims[0].clone(), x_dims[2].clone());
    let state_dims = vec![batch.clone(), PrimExpr::int(channels), PrimExpr::int(k - 1)];
    let past = match past {
        Some(p) => p,
        None => cx.call(
            "relax.zeros",
            vec![Expr::shape(state_dims)],
            Attrs::from_pairs([("dtype", AttrValue::DataType(dtype))]),
        )?,
    };
    let padded = concat(cx, vec![past, x], 2)?;
    let present = slice(
        cx,
        padded.clone(),
        2,
        length.clone(),
        length.clone() + PrimExpr::int(k - 1),
        1,
    )?;

    // Depthwise over (batch, channels, 1, length + k − 1) and (channels, 1,
    // 1, k): a 2-d convolution with one row.
    let padded4 = expand_dims(cx, padded, 2)?;
    let w4 = expand_dims(cx, w, 2)?;
    let attrs = Attrs::from_pairs([
        ("strides", ints([1, 1])),
        ("padding", ints([0, 0, 0, 0])),
        ("dilation", ints([1, 1])),
        ("groups", AttrValue::Int(channels)),
    ]);
    let y = cx.call("relax.nn.conv2d", vec![padded4, w4], attrs)?;
    let mut y = reshape(cx, y, vec![batch, PrimExpr::int(channels), length])?;
    if let Some(b) = bias {
        let b = reshape(cx, b, vec![PrimExpr::int(channels), PrimExpr::int(1)])?;
        y = cx.op2("relax.add", y, b)?;
    }
    if silu {
        let s = cx.op1("relax.sigmoid", y.clone())?;
        y = cx.op2("relax.multiply", y, s)?;
    }
    Ok(vec![y, present])
}

/// The four recurrences of `LinearAttention`, by `update_rule`.
#[derive(Clone, Copy, PartialEq, Eq)]
struct UpdateRule {
    /// `state *= exp(decay_t)` before each write (`gated`, `gated_delta`).
    gating: bool,
    /// The write uses `beta_t · (v_t − stateᵀ·k_t)` for `v_t` (`delta`,
    /// `gated_delta`).
    delta: bool,
}

pub fn linear_attention(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&[
        "chunk_size",
        "kv_num_heads",
        "q_num_heads",
        "scale",
        "update_rule",
    ])?;
    let rule = match cx.node.string("update_rule")?.as_deref() {
        Some("linear") => UpdateRule {
            gating: false,
            delta: false,
        },
        Some("gated") => UpdateRule {
            gating: true,
            delta: false,
        },
        Some("delta") => UpdateRule {
            gating: false,
            delta: true,
        },
        None | Some("gated_delta") => UpdateRule {
            gating: true,
            delta: true,
        },
        Some(other) => {
            return Err(cx.error(format!(
                "update_rule `{other}` is not one of linear, gated, delta and gated_delta"
            )))
        }
    };
    let heads = |cx: &Ctx, name: &str| -> Result<i64, Error> {
        match cx.node.int(name)? {
            Some(h) if h > 0 => Ok(h),
            _ => Err(cx.error(format!("`{name}` must be given, and positive"))),
        }
    };
    let (qh, kvh) = (heads(cx, "q_num_heads")?, heads(cx, "kv_num_heads")?);
    if qh % kvh != 0 {
        return Err(cx.error(format!(
            "q_num_heads {qh} must be a multiple of kv_num_heads {kvh}"
        )));
    }
    let f32 = relax_runtime::DataType::f32();
    let query = cx.input(0)?;
    let (q_dims, out_dtype) = cx.tensor(&query)?;
    let (key, value) = (cx.input(1)?, cx.input(2)?);
    let past = cx.opt_input(3)?;
    let decay = cx.opt_input(4)?;
    let beta = cx.opt_input(5)?;
    if rule.gating != decay.is_some() {
        return Err(cx.error(format!(
            "this update_rule {} a decay input",
            if rule.gating { "needs" } else { "takes no" }
        )));
    }
    if rule.delta != beta.is_some() {
        return Err(cx.error(format!(
            "this update_rule {} a beta input",
            if rule.delta { "needs" } else { "takes no" }
        )));
    }
    if q_dims.len() != 3 {
        return Err(cx.error("query must be (batch, sequence, heads · head size)"));
    }
    let steps = q_dims[1].as_int().ok_or_else(|| {
        cx.error(
            "the recurrence is unrolled over the sequence, whose length must be a known integer",
        )
    })?;
    let as_heads = |cx: &mut Ctx, x: Expr, h: i64| {
        let x = cx.astype(x, f32)?;
        super::attention::split_heads(cx, x, h)
    };
    let q = as_heads(cx, query, qh)?;
    let k = as_heads(cx, key, kvh)?;
    let v = as_heads(cx, value, kvh)?;
    let (qd, _) = cx.tensor(&q)?;
    let (vd, _) = cx.tensor(&v)?;
    let (dk, dv) = (qd[3].clone(), vd[3].clone());
    let batch = q_dims[0].clone();
    let state_dims = vec![batch.clone(), PrimExpr::int(kvh), dk.clone(), dv.clone()];
    let state_dtype = match &past {
        Some(p) => cx.tensor(p)?.1,
        None => out_dtype,
    };
    let mut state = match past {
        Some(p) => cx.astype(p, f32)?,
        None => cx.call(
            "relax.zeros",
            vec![Expr::shape(state_dims)],
            Attrs::from_pairs([("dtype", AttrValue::DataType(f32))]),
        )?,
    };
    // (batch, sequence, heads, n) to (batch, heads, n, sequence): a step's
    // slice is then a column, (batch, heads, n, 1).
    let columns = |cx: &mut Ctx, x: Expr, name: &str| -> Result<Expr, Error> {
        let (d, _) = cx.tensor(&x)?;
        let last = d.get(2).and_then(PrimExpr::as_int);
        if d.len() != 3 {
            return Err(cx.error(format!("{name} must be rank 3")));
        }
        let x = cx.astype(x, f32)?;
        let (h, n) = match (name, last) {
            ("decay", Some(l)) if l == kvh => (kvh, PrimExpr::int(1)),
            ("decay", Some(l)) if dk.as_int().map(|dk| l == kvh * dk) == Some(true) => {
                (kvh, dk.clone())
            }
            ("beta", Some(l)) if l == kvh || l == 1 => (l, PrimExpr::int(1)),
            _ => {
                return Err(cx.error(format!(
                    "the last dim of {name} must be kv_num_heads{}",
                    if name == "decay" {
                        " or kv_num_heads · head size"
                    } else {
                        " or 1"
                    }
                )))
            }
        };
        let x = reshape(cx, x, vec![d[0].clone(), d[1].clone(), PrimExpr::int(h), n])?;
        let attrs = Attrs::from_pairs([("axes", ints([0, 2, 3, 1]))]);
        cx.call("relax.permute_dims", vec![x], attrs)
    };
    let decay = match decay {
        Some(g) => {
            let g = columns(cx, g, "decay")?;
            Some(cx.op1("relax.exp", g)?)
        }
        None => None,
    };
    let beta = match beta {
        Some(b) => Some(columns(cx, b, "beta")?),
        None => None,
    };
    let scale = match cx.node.float_or("scale", 0.0)? {
        s if s != 0.0 => f64::from(s),
        _ => {
            let dk = dk
                .as_int()
                .ok_or_else(|| cx.error("the head size must be a known integer"))?;
            1.0 / (dk as f64).sqrt()
        }
    };
    let scale = cx.scalar(scale, f32)?;
    let transpose = |cx: &mut Ctx, x: Expr| {
        let attrs = Attrs::from_pairs([("axes", ints([0, 1, 3, 2]))]);
        cx.call("relax.permute_dims", vec![x], attrs)
    };

    let mut outputs = Vec::with_capacity(steps as usize);
    for t in 0..steps {
        let at = |cx: &mut Ctx, x: &Expr, axis: i64| {
            slice(
                cx,
                x.clone(),
                axis,
                PrimExpr::int(t),
                PrimExpr::int(t + 1),
                1,
            )
        };
        let (q_t, k_t) = (at(cx, &q, 2)?, at(cx, &k, 2)?);
        let mut v_t = at(cx, &v, 2)?;
        if let Some(g) = &decay {
            let g_t = at(cx, g, 3)?;
            state = cx.op2("relax.multiply", state, g_t)?;
        }
        if let Some(b) = &beta {
            let retrieved = cx.op2("relax.matmul", k_t.clone(), state.clone())?;
            let diff = cx.op2("relax.subtract", v_t, retrieved)?;
            let b_t = at(cx, b, 3)?;
            v_t = cx.op2("relax.multiply", b_t, diff)?;
        }
        let k_col = transpose(cx, k_t)?;
        let write = cx.op2("relax.matmul", k_col, v_t)?;
        state = cx.op2("relax.add", state, write)?;
        let read = if qh == kvh {
            state.clone()
        } else {
            super::attention::repeat_heads(cx, state.clone(), kvh, qh / kvh)?
        };
        let o_t = cx.op2("relax.matmul", q_t, read)?;
        outputs.push(cx.op2("relax.multiply", o_t, scale.clone())?);
    }
    let hidden = dv
        .as_int()
        .map(|dv| PrimExpr::int(qh * dv))
        .ok_or_else(|| cx.error("the value head size must be a known integer"))?;
    let out_dims = vec![batch, q_dims[1].clone(), hidden];
    let o = match outputs.len() {
        // An empty sequence: no output rows, and the state as it came.
        0 => cx.call(
            "relax.zeros",
            vec![Expr::shape(out_dims)],
            Attrs::from_pairs([("dtype", AttrValue::DataType(f32))]),
        )?,
        _ => {
            let o = if outputs.len() == 1 {
                outputs.swap_remove(0)
            } else {
                concat(cx, outputs, 2)?
            };
            let o = swap_1_2(cx, o)?;
            reshape(cx, o, out_dims)?
        }
    };
    let o = cx.astype(o, out_dtype)?;
    let present = cx.astype(state, state_dtype)?;
    Ok(vec![o, present])
}
