//! `Attention` (opset 23 on): scaled dot-product attention, written with
//! the registry's ops as ONNX's function body defines it.
//!
//! 1. 3-d inputs `(batch, seq, heads · head_size)` are split into heads
//!    (`q_num_heads`, `kv_num_heads`) and moved to `(batch, heads, seq,
//!    head_size)`; the output goes back the same way.
//! 2. `past_key`/`past_value` are concatenated before the new keys and
//!    values along the sequence; the results are the `present_*` outputs.
//! 3. The additive bias is `(q, kv)`: a boolean `attn_mask` becomes 0 where
//!    true and `-inf` where false, a float one is added as it is, and a mask
//!    shorter than the keys is padded with `-inf` (false). `is_causal`
//!    allows key `j` for query `i` when `j <= i + offset`, where `offset` is
//!    the past length (or `nonpad_kv_seqlen - q`, per batch); the sliding
//!    window bounds `i + offset - j` the same way. `nonpad_kv_seqlen` also
//!    masks each batch's keys past its length.
//! 4. Grouped-query attention repeats each key and value head
//!    `q_num_heads / kv_num_heads` times, interleaved (`h0, h0, h1, h1, …`).
//! 5. `scores = (Q·√scale)(K·√scale)ᵀ` with `scale` defaulting to
//!    `1/√head_size`; `softcap > 0` maps them to `softcap·tanh(s/softcap)`
//!    before the bias is added; the softmax runs over the keys, and a row
//!    whose bias is `-inf` everywhere (no key allowed) gives zeros.
//! 6. `qk_matmul_output` is the scores (mode 0), after softcap (1), after
//!    the bias (2) or after the softmax (3).

use super::{ints, Ctx};
use relax_core::ir::{AttrValue, Attrs, Expr, PrimExpr};
use relax_runtime::{DataType, Error};

fn reshape(cx: &mut Ctx, x: Expr, dims: Vec<PrimExpr>) -> Result<Expr, Error> {
    cx.call("relax.reshape", vec![x, Expr::shape(dims)], Attrs::new())
}

fn transpose(cx: &mut Ctx, x: Expr, perm: &[i64]) -> Result<Expr, Error> {
    let attrs = Attrs::from_pairs([("axes", ints(perm.iter().copied()))]);
    cx.call("relax.permute_dims", vec![x], attrs)
}

/// `(b, s, h·d)` to `(b, h, s, d)`.
pub(super) fn split_heads(cx: &mut Ctx, x: Expr, heads: i64) -> Result<Expr, Error> {
    let (dims, _) = cx.tensor(&x)?;
    if dims.len() != 3 {
        return Err(cx.error("a 3-d input must be (batch, sequence, hidden)"));
    }
    let hidden = dims[2]
        .as_int()
        .ok_or_else(|| cx.error("the hidden size must be a known integer"))?;
    if heads <= 0 || hidden % heads != 0 {
        return Err(cx.error(format!(
            "a hidden size of {hidden} does not split into {heads} heads"
        )));
    }
    let d = PrimExpr::int(hidden / heads);
    let x = reshape(
        cx,
        x,
        vec![dims[0].clone(), dims[1].clone(), PrimExpr::int(heads), d],
    )?;
    transpose(cx, x, &[0, 2, 1, 3])
}

/// `(b, heads, s, d)` to `(b, heads · reps, s, d)`, each head repeated
/// `reps` times in place (`h0, h0, h1, h1, …`), as grouped-query attention
/// shares a key and value head among `reps` query heads.
pub(super) fn repeat_heads(cx: &mut Ctx, x: Expr, heads: i64, reps: i64) -> Result<Expr, Error> {
    let (d, _) = cx.tensor(&x)?;
    let with = |n: i64| {
        vec![
            d[0].clone(),
            PrimExpr::int(heads),
            PrimExpr::int(n),
            d[2].clone(),
            d[3].clone(),
        ]
    };
    let x = reshape(cx, x, with(1))?;
    let x = cx.call(
        "relax.broadcast_to",
        vec![x, Expr::shape(with(reps))],
        Attrs::new(),
    )?;
    let dims = vec![
        d[0].clone(),
        PrimExpr::int(heads * reps),
        d[2].clone(),
        d[3].clone(),
    ];
    reshape(cx, x, dims)
}

/// `where(allowed, 0, -inf)` in `dtype`.
fn bias_of(cx: &mut Ctx, allowed: Expr, dtype: DataType) -> Result<Expr, Error> {
    let zero = cx.scalar(0.0, dtype)?;
    let ninf = cx.scalar(f64::NEG_INFINITY, dtype)?;
    cx.call("relax.where", vec![allowed, zero, ninf], Attrs::new())
}

pub fn attention(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&[
        "is_causal",
        "kv_num_heads",
        "q_num_heads",
        "qk_matmul_output_mode",
        "scale",
        "softcap",
        "softmax_precision",
        "left_window_size",
        "right_window_size",
    ])?;
    let (mut q, mut k, mut v) = (cx.input(0)?, cx.input(1)?, cx.input(2)?);
    let mask = cx.opt_input(3)?;
    let past_key = cx.opt_input(4)?;
    let past_value = cx.opt_input(5)?;
    let nonpad = match cx.opt_input(6)? {
        Some(n) => Some(cx.astype(n, DataType::i64())?),
        None => None,
    };
    if past_key.is_some() != past_value.is_some() {
        return Err(cx.error("past_key and past_value must be given together"));
    }
    if nonpad.is_some() && past_key.is_some() {
        return Err(cx.error("nonpad_kv_seqlen cannot be combined with a past cache"));
    }
    let (q_dims, dtype) = cx.tensor(&q)?;
    let three_d = q_dims.len() == 3;
    if three_d {
        let qh = cx
            .node
            .int("q_num_heads")?
            .ok_or_else(|| cx.error("3-d inputs need `q_num_heads`"))?;
        let kvh = cx
            .node
            .int("kv_num_heads")?
            .ok_or_else(|| cx.error("3-d inputs need `kv_num_heads`"))?;
        q = split_heads(cx, q, qh)?;
        k = split_heads(cx, k, kvh)?;
        v = split_heads(cx, v, kvh)?;
    } else if q_dims.len() != 4 {
        return Err(cx.error("Q must be 3-d or 4-d"));
    }
    for (name, e) in [("K", &k), ("V", &v)] {
        if cx.tensor(e)?.0.len() != 4 {
            return Err(cx.error(format!("{name} must have Q's rank")));
        }
    }
    let past_len = match &past_key {
        Some(p) => cx.tensor(p)?.0.get(2).cloned().unwrap_or(PrimExpr::int(0)),
        None => PrimExpr::int(0),
    };
    if let (Some(pk), Some(pv)) = (past_key, past_value) {
        let cat = |cx: &mut Ctx, a: Expr, b: Expr| {
            cx.call(
                "relax.concat",
                vec![Expr::tuple(vec![a, b])],
                Attrs::from_pairs([("axis", AttrValue::Int(2))]),
            )
        };
        k = cat(cx, pk, k)?;
        v = cat(cx, pv, v)?;
    }
    let (present_k, present_v) = (k.clone(), v.clone());
    let (qd, _) = cx.tensor(&q)?;
    let (kd, _) = cx.tensor(&k)?;
    let (s, l) = (qd[2].clone(), kd[2].clone());
    let head_size = qd[3]
        .as_int()
        .ok_or_else(|| cx.error("the head size must be a known integer"))?;

    // The additive bias, (q, kv) or broadcastable to (b, h, q, kv).
    let mut bias: Option<Expr> = None;
    if let Some(m) = mask {
        let (md, mdt) = cx.tensor(&m)?;
        let mut m = if mdt.is_bool() {
            bias_of(cx, m, dtype)?
        } else {
            m
        };
        let last = md.last().cloned().unwrap_or(PrimExpr::int(1));
        let short = relax_core::arith::Analyzer::new().simplify(&(l.clone() - last.clone()));
        if short.as_int().is_none_or(|p| p > 0) {
            // Pad the keys' axis with -inf (a false boolean).
            let mut width = vec![0i64; 2 * md.len()];
            let pad = short
                .as_int()
                .ok_or_else(|| cx.error("a mask shorter than the keys by a symbolic length"))?;
            width[2 * md.len() - 1] = pad;
            let attrs = Attrs::from_pairs([
                ("pad_width", ints(width)),
                ("pad_value", AttrValue::Float(f64::NEG_INFINITY)),
            ]);
            m = cx.call("relax.nn.pad", vec![m], attrs)?;
        }
        bias = Some(m);
    }
    let is_causal = cx.node.int_or("is_causal", 0)? != 0;
    let left = cx.node.int_or("left_window_size", -1)?;
    let right = cx.node.int_or("right_window_size", -1)?;
    if is_causal || left >= 0 || right >= 0 {
        let i = cx.positions(s.clone(), true)?;
        let j = cx.positions(l.clone(), false)?;
        // The query's absolute position: i + offset, per batch with
        // nonpad_kv_seqlen.
        let offset = match &nonpad {
            Some(n) => {
                let sq = cx.dim_tensor(s.clone())?;
                let o = cx.op2("relax.subtract", n.clone(), sq)?;
                reshape(
                    cx,
                    o,
                    vec![
                        PrimExpr::int(-1),
                        PrimExpr::int(1),
                        PrimExpr::int(1),
                        PrimExpr::int(1),
                    ],
                )?
            }
            None => cx.dim_tensor(past_len.clone())?,
        };
        let pos = cx.op2("relax.add", i, offset)?;
        let diff = cx.op2("relax.subtract", pos, j)?;
        let mut allowed: Option<Expr> = None;
        let mut both = |cx: &mut Ctx, c: Expr| -> Result<(), Error> {
            allowed = Some(match allowed.take() {
                None => c,
                Some(a) => cx.op2("relax.logical_and", a, c)?,
            });
            Ok(())
        };
        let zero = cx.scalar(0.0, DataType::i64())?;
        if is_causal {
            let c = cx.op2("relax.greater_equal", diff.clone(), zero)?;
            both(cx, c)?;
        }
        if left >= 0 {
            let w = cx.scalar(left as f64, DataType::i64())?;
            let c = cx.op2("relax.less_equal", diff.clone(), w)?;
            both(cx, c)?;
        }
        if right >= 0 {
            let w = cx.scalar(-(right as f64), DataType::i64())?;
            let c = cx.op2("relax.greater_equal", diff, w)?;
            both(cx, c)?;
        }
        let allowed = allowed.ok_or_else(|| cx.error("no mask"))?;
        let extra = bias_of(cx, allowed, dtype)?;
        bias = Some(match bias {
            None => extra,
            Some(b) => cx.op2("relax.add", b, extra)?,
        });
    }
    if let Some(n) = &nonpad {
        let n = reshape(cx, n.clone(), vec![PrimExpr::int(-1), PrimExpr::int(1)])?;
        let j = cx.positions(l.clone(), false)?;
        let inside = cx.op2("relax.less", j, n)?;
        let pad = bias_of(cx, inside, dtype)?;
        let (bd, _) = cx.tensor(&pad)?;
        let pad = reshape(
            cx,
            pad,
            vec![bd[0].clone(), PrimExpr::int(1), PrimExpr::int(1), l.clone()],
        )?;
        bias = Some(match bias {
            None => pad,
            Some(b) => cx.op2("relax.add", b, pad)?,
        });
    }

    // Grouped-query attention: interleave-repeat the key and value heads.
    let (qh, kh) = (qd[1].clone(), kd[1].clone());
    if let (Some(qh), Some(kh)) = (qh.as_int(), kh.as_int()) {
        if qh != kh && kh > 0 && qh % kh == 0 {
            let reps = qh / kh;
            k = repeat_heads(cx, k, kh, reps)?;
            v = repeat_heads(cx, v, kh, reps)?;
        }
    }

    let scale = if cx.node.has("scale") {
        f64::from(cx.node.float_or("scale", 1.0)?)
    } else {
        1.0 / (head_size as f64).sqrt()
    };
    let root = cx.scalar(scale.sqrt(), dtype)?;
    let qs = cx.op2("relax.multiply", q, root.clone())?;
    let kt = transpose(cx, k, &[0, 1, 3, 2])?;
    let kts = cx.op2("relax.multiply", kt, root)?;
    let scores = cx.op2("relax.matmul", qs, kts)?;
    let mode = cx.node.int_or("qk_matmul_output_mode", 0)?;
    let softcap = f64::from(cx.node.float_or("softcap", 0.0)?);
    let capped = if softcap > 0.0 {
        let c = cx.scalar(softcap, dtype)?;
        let d = cx.op2("relax.divide", scores.clone(), c.clone())?;
        let t = cx.op1("relax.tanh", d)?;
        cx.op2("relax.multiply", t, c)?
    } else {
        scores.clone()
    };
    let biased = match &bias {
        Some(b) => cx.op2("relax.add", capped.clone(), b.clone())?,
        None => capped.clone(),
    };
    let softmax_attrs = Attrs::from_pairs([("axis", AttrValue::Int(-1))]);
    let mut probs = cx.call("relax.nn.softmax", vec![biased.clone()], softmax_attrs)?;
    if let Some(b) = &bias {
        // A row with no allowed key gives zeros, decided on the bias.
        let keep = Attrs::from_pairs([("axis", ints([-1])), ("keepdims", AttrValue::Bool(true))]);
        let top = cx.call("relax.max", vec![b.clone()], keep)?;
        let ninf = cx.scalar(f64::NEG_INFINITY, dtype)?;
        let none = cx.op2("relax.equal", top, ninf)?;
        let zero = cx.scalar(0.0, dtype)?;
        probs = cx.call("relax.where", vec![none, zero, probs], Attrs::new())?;
    }
    let qk_out = match mode {
        0 => scores,
        1 => capped,
        2 => biased,
        3 => probs.clone(),
        m => return Err(cx.error(format!("qk_matmul_output_mode {m} is not 0 to 3"))),
    };
    let mut y = cx.op2("relax.matmul", probs, v)?;
    if three_d {
        let (yd, _) = cx.tensor(&y)?;
        y = transpose(cx, y, &[0, 2, 1, 3])?;
        let hidden = yd[1].clone() * yd[3].clone();
        y = reshape(cx, y, vec![yd[0].clone(), yd[2].clone(), hidden])?;
    }
    Ok(vec![y, present_k, present_v, qk_out])
}
