//! `Attention` (opset 23 on): scaled dot-product attention, imported as
//! the fused `relax.nn.attention` / `relax.nn.attention_bias` where the
//! node's semantics are exactly the op's, and otherwise written with the
//! registry's ops as ONNX's function body defines it.
//!
//! **Fused** (`fused`): the host pipeline's `FlashAttention` turns the op
//! into one tiled kernel, and the interpreter runs its reference kernel.
//! The operands become BSNH `(batch, seq, heads, head_size)`: 3-d inputs
//! `(batch, seq, heads · head_size)` by a reshape only (`q_num_heads`,
//! `kv_num_heads`), 4-d ones `(batch, heads, seq, head_size)` by
//! `permute_dims [0, 2, 1, 3]`; the output goes back to the node's layout
//! the same way. Query head `h` reads key head `h / (q_heads / kv_heads)`,
//! which is ONNX's interleaved repeat. `scale` is passed when given (the
//! op's default, `1/√head_size`, is ONNX's). `past_key`/`past_value` are
//! concatenated before the new keys and values as below (the `present_*`
//! outputs), and the op attends over the concatenation. `is_causal` is
//! `causal_mask="TopLeft"` without a past (key `j` for query `i` when `j <=
//! i`) and `"BottomRight"` with one (`j <= i + |Skv − S|`, which is ONNX's
//! `j <= i + past` because the new keys are as many as the queries, a
//! condition of this path). `attn_mask` is the bias, reshaped to 4-d: a
//! float one as it is, a boolean one as 0 where true and `-inf` where
//! false; a row that masks every key it sees gives zeros in the op as in
//! ONNX. The path is taken when all of these hold:
//!
//! - `softcap` is not positive, the `qk_matmul_output` output is not
//!   requested, `nonpad_kv_seqlen` is not given, and neither
//!   `left_window_size` nor `right_window_size` is set (no kernel of the
//!   op implements its `window_size`, and ONNX's window is two-sided);
//! - Q, K, V (and the past) share one float dtype, and a float mask has it
//!   too;
//! - the ranks are 3 or 4, all alike (the past 4-d), the head counts and
//!   head sizes are known integers, the query heads a multiple of the key
//!   heads, Q and K of one head size, and the batch, sequence and head
//!   dims that must agree are provably equal;
//! - with `is_causal` and a past (unless it is provably empty), the new
//!   keys are provably as many as the queries;
//! - the mask has rank 1 to 4 and covers every key (its last dim is
//!   provably the total key length: a shorter mask is padded below), and
//!   each of its other dims, aligned from the right with `(batch,
//!   q_heads, q_seq, total_seq)`, is 1 or provably that dim.
//!
//! `softmax_precision` is read by neither path: the op computes its
//! softmax in `float32` (or `float64`) whatever the operands' dtype.
//!
//! **Composite** (`composite`), everything else:
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
use relax_core::arith::Analyzer;
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
    let x = heads_last(cx, x, heads)?;
    transpose(cx, x, &[0, 2, 1, 3])
}

/// `(b, s, h·d)` to `(b, s, h, d)`: BSNH, the layout of `nn.attention`.
fn heads_last(cx: &mut Ctx, x: Expr, heads: i64) -> Result<Expr, Error> {
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
    reshape(
        cx,
        x,
        vec![dims[0].clone(), dims[1].clone(), PrimExpr::int(heads), d],
    )
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

/// The node's inputs, each given one as a tensor.
struct Inputs {
    q: Expr,
    k: Expr,
    v: Expr,
    mask: Option<Expr>,
    past_key: Option<Expr>,
    past_value: Option<Expr>,
    nonpad: Option<Expr>,
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
    let inputs = Inputs {
        q: cx.input(0)?,
        k: cx.input(1)?,
        v: cx.input(2)?,
        mask: cx.opt_input(3)?,
        past_key: cx.opt_input(4)?,
        past_value: cx.opt_input(5)?,
        nonpad: cx.opt_input(6)?,
    };
    if inputs.past_key.is_some() != inputs.past_value.is_some() {
        return Err(cx.error("past_key and past_value must be given together"));
    }
    if inputs.nonpad.is_some() && inputs.past_key.is_some() {
        return Err(cx.error("nonpad_kv_seqlen cannot be combined with a past cache"));
    }
    match plan(cx, &inputs)? {
        Some(plan) => fused(cx, inputs, plan),
        None => composite(cx, inputs),
    }
}

/// What the fused path needs to know of an eligible node.
struct Plan {
    three_d: bool,
    q_heads: i64,
    kv_heads: i64,
    v_head_size: i64,
    /// `causal_mask`, when `is_causal` is set.
    causal: Option<&'static str>,
}

/// Whether output `i` is requested (named).
fn wanted(cx: &Ctx, i: usize) -> bool {
    cx.node.proto.output.get(i).is_some_and(|n| !n.is_empty())
}

/// The fused path's plan, or `None` when the node is not eligible (the
/// module docs list the conditions).
fn plan(cx: &Ctx, x: &Inputs) -> Result<Option<Plan>, Error> {
    let mode = cx.node.int_or("qk_matmul_output_mode", 0)?;
    let softcap = f64::from(cx.node.float_or("softcap", 0.0)?);
    let windowed = cx.node.int_or("left_window_size", -1)? >= 0
        || cx.node.int_or("right_window_size", -1)? >= 0;
    if wanted(cx, 3) || !(0..=3).contains(&mode) || softcap > 0.0 || windowed || x.nonpad.is_some()
    {
        return Ok(None);
    }
    let ana = Analyzer::new();
    let same = |a: &PrimExpr, b: &PrimExpr| ana.can_prove_equal(a, b);
    let (qd, dtype) = cx.tensor(&x.q)?;
    let (kd, kdt) = cx.tensor(&x.k)?;
    let (vd, vdt) = cx.tensor(&x.v)?;
    if !dtype.is_float() || kdt != dtype || vdt != dtype {
        return Ok(None);
    }
    let three_d = qd.len() == 3;
    if !(three_d || qd.len() == 4) || kd.len() != qd.len() || vd.len() != qd.len() {
        return Ok(None);
    }
    // (heads, head size) of a 3-d input split into `heads`, or of a 4-d one.
    let heads_of = |dims: &[PrimExpr], heads: Option<i64>| -> Option<(i64, i64)> {
        if three_d {
            let (h, hidden) = (heads?, dims[2].as_int()?);
            (h > 0 && hidden % h == 0).then_some((h, hidden / h))
        } else {
            Some((dims[1].as_int()?, dims[3].as_int()?))
        }
    };
    let (qh_attr, kvh_attr) = if three_d {
        (cx.node.int("q_num_heads")?, cx.node.int("kv_num_heads")?)
    } else {
        (None, None)
    };
    let (Some((qh, d)), Some((kvh, dk)), Some((vh, dv))) = (
        heads_of(&qd, qh_attr),
        heads_of(&kd, kvh_attr),
        heads_of(&vd, kvh_attr),
    ) else {
        return Ok(None);
    };
    if kvh <= 0 || qh % kvh != 0 || vh != kvh || dk != d {
        return Ok(None);
    }
    // The sequence dims: the queries', the new keys' and values'.
    let seq = if three_d { 1 } else { 2 };
    let (s, l) = (&qd[seq], &kd[seq]);
    if !same(&qd[0], &kd[0]) || !same(&qd[0], &vd[0]) || !same(l, &vd[seq]) {
        return Ok(None);
    }
    // The past, (batch, kv_heads, past, head size) and its length.
    let mut past_len = PrimExpr::int(0);
    if let (Some(pk), Some(pv)) = (&x.past_key, &x.past_value) {
        let (pkd, pkt) = cx.tensor(pk)?;
        let (pvd, pvt) = cx.tensor(pv)?;
        if pkt != dtype || pvt != dtype || pkd.len() != 4 || pvd.len() != 4 {
            return Ok(None);
        }
        let fits = |p: &[PrimExpr], hd: i64| {
            same(&p[0], &qd[0]) && p[1].as_int() == Some(kvh) && p[3].as_int() == Some(hd)
        };
        if !fits(&pkd, d) || !fits(&pvd, dv) || !same(&pkd[2], &pvd[2]) {
            return Ok(None);
        }
        past_len = pkd[2].clone();
    }
    let no_past = past_len.as_int() == Some(0);
    let total = ana.simplify(&(past_len + l.clone()));
    let causal = if cx.node.int_or("is_causal", 0)? == 0 {
        None
    } else if no_past {
        Some("TopLeft")
    } else if same(s, l) {
        // |(past + l) - s| = past.
        Some("BottomRight")
    } else {
        return Ok(None);
    };
    if let Some(m) = &x.mask {
        let (md, mdt) = cx.tensor(m)?;
        if !(mdt.is_bool() || mdt == dtype) || md.is_empty() || md.len() > 4 {
            return Ok(None);
        }
        let target = [qd[0].clone(), PrimExpr::int(qh), s.clone(), total.clone()];
        let last = md.len() - 1;
        for (a, dim) in md.iter().enumerate() {
            let t = &target[4 - md.len() + a];
            let fits = if a == last {
                same(dim, t)
            } else {
                dim.as_int() == Some(1) || same(dim, t)
            };
            if !fits {
                return Ok(None);
            }
        }
    }
    Ok(Some(Plan {
        three_d,
        q_heads: qh,
        kv_heads: kvh,
        v_head_size: dv,
        causal,
    }))
}

/// The node as `relax.nn.attention` or `relax.nn.attention_bias` (module
/// docs).
fn fused(cx: &mut Ctx, x: Inputs, plan: Plan) -> Result<Vec<Expr>, Error> {
    let (qd, dtype) = cx.tensor(&x.q)?;
    let (kvh, dv) = (plan.kv_heads, plan.v_head_size);
    let q = if plan.three_d {
        heads_last(cx, x.q, plan.q_heads)?
    } else {
        transpose(cx, x.q, &[0, 2, 1, 3])?
    };
    // Keys and values in BSNH, and the present_* outputs when requested
    // ((batch, kv_heads, seq, head size), as the composite gives them).
    let (k, v, present_k, present_v) = match (x.past_key, x.past_value) {
        (Some(pk), Some(pv)) => {
            let (k, v) = if plan.three_d {
                (split_heads(cx, x.k, kvh)?, split_heads(cx, x.v, kvh)?)
            } else {
                (x.k, x.v)
            };
            let pk = concat_seq(cx, pk, k)?;
            let pv = concat_seq(cx, pv, v)?;
            let k = transpose(cx, pk.clone(), &[0, 2, 1, 3])?;
            let v = transpose(cx, pv.clone(), &[0, 2, 1, 3])?;
            (k, v, Some(pk), Some(pv))
        }
        _ if plan.three_d => {
            let k = heads_last(cx, x.k, kvh)?;
            let v = heads_last(cx, x.v, kvh)?;
            let present = |cx: &mut Ctx, i: usize, e: &Expr| -> Result<Option<Expr>, Error> {
                match wanted(cx, i) {
                    true => transpose(cx, e.clone(), &[0, 2, 1, 3]).map(Some),
                    false => Ok(None),
                }
            };
            let pk = present(cx, 1, &k)?;
            let pv = present(cx, 2, &v)?;
            (k, v, pk, pv)
        }
        _ => {
            let k = transpose(cx, x.k.clone(), &[0, 2, 1, 3])?;
            let v = transpose(cx, x.v.clone(), &[0, 2, 1, 3])?;
            (k, v, Some(x.k), Some(x.v))
        }
    };
    let mut args = vec![q, k, v];
    if let Some(m) = x.mask {
        let (md, mdt) = cx.tensor(&m)?;
        let mut m = m;
        if md.len() < 4 {
            let mut dims = vec![PrimExpr::int(1); 4 - md.len()];
            dims.extend(md);
            m = reshape(cx, m, dims)?;
        }
        if mdt.is_bool() {
            m = bias_of(cx, m, dtype)?;
        }
        args.push(m);
    }
    let mut attrs = Attrs::new();
    if cx.node.has("scale") {
        let scale = f64::from(cx.node.float_or("scale", 1.0)?);
        attrs = attrs.with("scale", AttrValue::Float(scale));
    }
    if let Some(c) = plan.causal {
        attrs = attrs.with("causal_mask", AttrValue::Str(c.into()));
    }
    let op = if args.len() == 4 {
        "relax.nn.attention_bias"
    } else {
        "relax.nn.attention"
    };
    let y = cx.call(op, args, attrs)?;
    // (batch, seq, q_heads, v head size) back to the node's layout.
    let y = if plan.three_d {
        let (yd, _) = cx.tensor(&y)?;
        let hidden = PrimExpr::int(plan.q_heads * dv);
        reshape(cx, y, vec![qd[0].clone(), yd[1].clone(), hidden])?
    } else {
        transpose(cx, y, &[0, 2, 1, 3])?
    };
    // An output that is not requested is never read: `y` stands in.
    let present_k = present_k.unwrap_or_else(|| y.clone());
    let present_v = present_v.unwrap_or_else(|| y.clone());
    Ok(vec![y, present_k, present_v])
}

/// `past` and `new` concatenated along the sequence (axis 2 of `(batch,
/// heads, seq, head size)`).
fn concat_seq(cx: &mut Ctx, past: Expr, new: Expr) -> Result<Expr, Error> {
    cx.call(
        "relax.concat",
        vec![Expr::tuple(vec![past, new])],
        Attrs::from_pairs([("axis", AttrValue::Int(2))]),
    )
}

/// The node written with the registry's ops (module docs).
fn composite(cx: &mut Ctx, x: Inputs) -> Result<Vec<Expr>, Error> {
    let (mut q, mut k, mut v) = (x.q, x.k, x.v);
    let (mask, past_key, past_value) = (x.mask, x.past_key, x.past_value);
    let nonpad = match x.nonpad {
        Some(n) => Some(cx.astype(n, DataType::i64())?),
        None => None,
    };
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
        k = concat_seq(cx, pk, k)?;
        v = concat_seq(cx, pv, v)?;
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
