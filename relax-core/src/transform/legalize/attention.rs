//! Fused attention: `nn.attention` and `nn.attention_bias` (see
//! [`crate::op::attention`] for the semantics), one PrimFunc of six
//! stages, as TVM's legalization composes it:
//!
//! 1. `T_attention_score[b, h, i, j]`: `Σ_d q[b, i, h, d] · k[b, j, h/G, d]`
//!    (`G` query heads per key head, so grouped-query attention reads the
//!    key heads in place, with no broadcast copy);
//! 2. `T_attention_max[b, h, i]`: the maximum over `j` of the logits,
//!    `scale · score + bias`, to which the causal mask adds 0 for a
//!    visible key and the dtype's lowest value for a masked one (key `j`
//!    is visible to query `i` when `j ≤ i + offset`, `offset` 0 or
//!    `|seq_len_kv − seq_len|`). The mask is added, not selected: with
//!    the score's load inside a `Select`, the softmax's rows compiled to
//!    masked gathers (31 against 18 ms for 500 tokens and 12 heads);
//! 3. `T_attention_expsum[b, h, i]`: `Σ_j exp(logit − max)`;
//! 4. `T_attention_prob[b, h, i, j]`: `exp(logit − max) / expsum`, which
//!    underflows to 0 for a masked key (query `i` always sees key 0, so
//!    `max` is a visible logit). A row whose every logit is `-inf` (a bias
//!    that masks every key the row sees) is zeros, as in the reference
//!    kernel and FlashAttention: stages 3 and 4 read the maximum as at
//!    least the lowest finite value, so each exponential is 0, and divide
//!    by the sum as at least the smallest normal value, so `0 / 0` does
//!    not arise. Elsewhere neither bound changes a value: the maximum is a
//!    finite logit and the sum at least 1 (its largest term is `exp(0)`);
//! 5. `T_attention_bhsd[b, h, i, e]`: `Σ_j prob · v[b, j, h/G, e]`;
//! 6. `T_attention[b, i, h, e]`: the same, back in BSNH.
//!
//! Stage 1 is a dot product along `d` and stage 5 a batched matrix
//! product, so DefaultSchedule's dot-product, row (the softmax's stages
//! 2 to 4 together) and tiled or packed GEMM schedules run them; the
//! logits are recomputed from the score where they are read. `float16`
//! and `bfloat16` operands are read as `float32`, which every stage
//! computes in; the output is rounded once.
//! Sliding-window attention (`window_size`) is not implemented and is
//! reported.

use super::{error, Legalize, LegalizeCtx};
use crate::ir::{AttrValue, Expr, PrimExpr};
use crate::op::attention::{accumulate_dtype, causal_mask, sliding_window, CausalMask};
use crate::op::infer::attr;
use crate::tir::te::{self, compute, reduce_axis, Tensor};
use relax_runtime::Error;

/// The legalizations of this group.
pub const LEGALIZE: &[(&str, Legalize)] = &[
    ("relax.nn.attention", attention),
    ("relax.nn.attention_bias", attention),
];

fn attention(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    if sliding_window(cx.call) {
        return Err(error(format!(
            "{}: sliding-window attention (window_size) is not supported",
            cx.name()
        )));
    }
    let causal = cx.check(causal_mask(cx.call))?;
    let scale = match attr(cx.call, "scale") {
        Some(AttrValue::Float(f)) => Some(*f),
        _ => None,
    };
    let (out_dims, _) = cx.out_tensor(0)?;
    let which: Vec<usize> = (0..cx.call.args.len()).collect();
    cx.te1(&which, |xs| {
        let (q, k, v) = (&xs[0], &xs[1], &xs[2]);
        let bias = xs.get(3);
        Ok(build(q, k, v, bias, scale, causal, out_dims))
    })
}

/// The six stages (module docs).
fn build(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    bias: Option<&Tensor>,
    scale: Option<f64>,
    causal: CausalMask,
    out_dims: Vec<PrimExpr>,
) -> Tensor {
    let dtype = q.dtype();
    let acc = accumulate_dtype(dtype);
    let [batch, seq, heads, head_dim] = [0, 1, 2, 3].map(|a| q.shape()[a].clone());
    let (seq_kv, kv_heads) = (k.shape()[1].clone(), k.shape()[2].clone());
    // Query head h reads key head h / group.
    let group = heads.clone().floordiv(kv_heads);
    let kv_head = move |h: &PrimExpr| h.clone().floordiv(group.clone());
    let scale = match scale {
        Some(s) => te::constant(acc, s),
        None => match head_dim.as_int() {
            Some(d) => te::constant(acc, 1.0 / (d as f64).sqrt()),
            None => te::div(te::one(acc), te::unary("sqrt", head_dim.clone().cast(acc))),
        },
    };
    let offset = causal.offset(&seq, &seq_kv);
    let visible = move |i: &PrimExpr, j: &PrimExpr| match causal {
        CausalMask::None => None,
        _ => Some(j.clone().le(i.clone() + offset.clone())),
    };
    let scores = [batch.clone(), heads.clone(), seq.clone(), seq_kv.clone()];
    let kh = kv_head.clone();
    let score = compute("T_attention_score", scores.to_vec(), |i| {
        let (b, h, s, j) = (&i[0], &i[1], &i[2], &i[3]);
        let d = reduce_axis(head_dim.clone(), "d");
        let qd = q
            .at(&[b.clone(), s.clone(), h.clone(), d.to_expr()])
            .cast(acc);
        let kd = k.at(&[b.clone(), j.clone(), kh(h), d.to_expr()]).cast(acc);
        te::sum(qd * kd, &[d])
    });
    // The logit of (b, h, i, j), the lowest value added when masked.
    let logit = |i: &[PrimExpr]| -> PrimExpr {
        let mut x = score.at(i) * scale.clone();
        if let Some(bias) = bias {
            let idx: Vec<PrimExpr> = (0..4)
                .map(|a| match bias.shape()[a].as_int() {
                    Some(1) => PrimExpr::int(0),
                    _ => i[a].clone(),
                })
                .collect();
            x = x + bias.at(&idx).cast(acc);
        }
        match visible(&i[2], &i[3]) {
            Some(cond) => x + PrimExpr::select(cond, te::zero(acc), te::lowest(acc)),
            None => x,
        }
    };
    let rows = scores[..3].to_vec();
    let with_j = |r: &[PrimExpr], j: PrimExpr| vec![r[0].clone(), r[1].clone(), r[2].clone(), j];
    let max = compute("T_attention_max", rows.clone(), |r| {
        let j = reduce_axis(seq_kv.clone(), "j");
        te::max(logit(&with_j(r, j.to_expr())), &[j])
    });
    // The bounds of a fully masked row (module docs), in the accumulator's
    // dtype.
    let (finite_min, normal_min) = if acc.bits() == 64 {
        (f64::MIN, f64::MIN_POSITIVE)
    } else {
        (f64::from(f32::MIN), f64::from(f32::MIN_POSITIVE))
    };
    let row_max = |r: &[PrimExpr]| max.at(r).max(te::constant(acc, finite_min));
    let expsum = compute("T_attention_expsum", rows, |r| {
        let j = reduce_axis(seq_kv.clone(), "j");
        let e = te::unary("exp", logit(&with_j(r, j.to_expr())) - row_max(r));
        te::sum(e, &[j])
    });
    // A masked key's logit is the lowest value (or -inf) below a visible
    // one, so its exponential is 0.
    let prob = compute("T_attention_prob", scores.to_vec(), |i| {
        te::div(
            te::unary("exp", logit(i) - row_max(&i[..3])),
            expsum.at(&i[..3]).max(te::constant(acc, normal_min)),
        )
    });
    // A batched matrix product per (batch, head), then the heads moved
    // back between the sequence and the head dim (rounded to a half type
    // there).
    let heads_first = [batch, heads, seq, v.shape()[3].clone()];
    let out = compute("T_attention_bhsd", heads_first.to_vec(), |o| {
        let (b, h, s, e) = (&o[0], &o[1], &o[2], &o[3]);
        let j = reduce_axis(seq_kv.clone(), "j");
        let p = prob.at(&[b.clone(), h.clone(), s.clone(), j.to_expr()]);
        let ve = v
            .at(&[b.clone(), j.to_expr(), kv_head(h), e.clone()])
            .cast(acc);
        te::sum(p * ve, &[j])
    });
    compute("T_attention", out_dims, |o| {
        out.at(&[o[0].clone(), o[2].clone(), o[1].clone(), o[3].clone()])
            .cast(dtype)
    })
}
