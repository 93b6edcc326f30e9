//! `RewriteAttention`: the scaled-dot-product attention that PyTorch's
//! ONNX export decomposes (`F.scaled_dot_product_attention`, which
//! transformers' BERT, GPT-2 and Llama call) back into one
//! `R.nn.attention_bias` (or `R.nn.attention`), so that
//! [`super::FlashAttention`] runs it as one tiled kernel. TVM matches the
//! same shape with its attention rewrite pattern (`relax.backend.patterns`)
//! to offload it; here it is a pass over the pattern language's
//! [`rewrite_call`].
//!
//! What is matched, in heads-first layout (`q (B, N, S, H)`, `kᵀ (B, N,
//! H, Skv)`, `v (B, N, Skv, Hv)`):
//!
//! ```text
//! s = matmul(q · cq, kᵀ · ck)       each scale a scalar constant, or none
//! a = s + bias                      optional; the bias broadcasts to (B, N, S, Skv)
//! p = softmax(a, axis=-1)
//! p = where(isnan(p), 0, p)         optional (the export's guard for rows
//!                                   whose logits are all -inf)
//! o = matmul(p, v)
//! ```
//!
//! It becomes `permute_dims(attention_bias(q', k', v', bias, scale = cq ·
//! ck), [0, 2, 1, 3])`, where `q'`, `k'`, `v'` are the operands moved to
//! BSNH by `permute_dims` (fusion joins each with the ops that made it).
//! A bias of lower rank gets leading dims of 1.
//!
//! The rewrite is made only where FlashAttention's kernel will run the
//! result ([`super::flash_attention::config`]): that kernel also gives 0
//! for a row whose logits are all -inf, as the guard does, where TVM's
//! composite would give NaN. It runs on the host before FlashAttention
//! (`backend/pipeline.rs`).

use super::flash_attention;
use super::Pass;
use crate::arith::Analyzer;
use crate::dpl::{is_const, is_op, rewrite_call, wildcard, Bindings, Match, Pattern};
use crate::ir::{AttrValue, Attrs, Expr, ExprKind, IRModule};
use crate::op::infer::attr_int;
use relax_runtime::{DataType, Error};

/// The pass. See the module docs.
#[derive(Clone, Copy, Debug, Default)]
pub struct RewriteAttention;

impl Pass for RewriteAttention {
    fn name(&self) -> &str {
        "RewriteAttention"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        let p = Patterns::new()?;
        let mut out = module.clone();
        for (gv, f) in module.functions() {
            let Some(func) = f.as_relax() else { continue };
            let bindings = Bindings::of_function(func);
            let new = rewrite_call(
                &p.out,
                |orig, m| p.rewrite(m, &bindings).unwrap_or_else(|| orig.clone()),
                func,
            )?;
            out.add(gv.clone(), new);
        }
        Ok(out)
    }
}

/// The pattern (module docs) and the parts the rewrite reads.
struct Patterns {
    q: Pattern,
    kt: Pattern,
    v: Pattern,
    q_scale: Pattern,
    k_scale: Pattern,
    bias: Pattern,
    guard_zero: Pattern,
    probs: Pattern,
    scores: Pattern,
    out: Pattern,
}

impl Patterns {
    fn new() -> Result<Patterns, Error> {
        let op = |name: &str, args: Vec<Pattern>| -> Result<Pattern, Error> {
            Ok(is_op(name)?.call(args))
        };
        let (q, kt, v, bias) = (wildcard(), wildcard(), wildcard(), wildcard());
        let (q_scale, k_scale, guard_zero) = (is_const(), is_const(), is_const());
        let qs = op("relax.multiply", vec![q.clone(), q_scale.clone()])? | q.clone();
        let ks = op("relax.multiply", vec![kt.clone(), k_scale.clone()])? | kt.clone();
        let scores = op("relax.matmul", vec![qs, ks])?;
        let logits = op("relax.add", vec![scores.clone(), bias.clone()])?
            | op("relax.add", vec![bias.clone(), scores.clone()])?
            | scores.clone();
        let probs = op("relax.nn.softmax", vec![logits])?;
        let nan = op("relax.isnan", vec![probs.clone()])?;
        let guarded =
            op("relax.where", vec![nan, guard_zero.clone(), probs.clone()])? | probs.clone();
        let out = op("relax.matmul", vec![guarded, v.clone()])?;
        Ok(Patterns {
            q,
            kt,
            v,
            q_scale,
            k_scale,
            bias,
            guard_zero,
            probs,
            scores,
            out,
        })
    }

    /// The attention call for a match, or `None` when it does not fit
    /// (module docs). `bindings` are the function's, where a matched
    /// variable's call is found.
    fn rewrite(&self, m: &Match, bindings: &Bindings) -> Option<Expr> {
        let get = |p: &Pattern| m.get(p).cloned();
        // The call a pattern matched, through the variable bound to it.
        let call_of = |p: &Pattern| -> Option<Expr> {
            let e = get(p)?;
            match e.as_var() {
                Some(var) => bindings.value(var).cloned(),
                None => Some(e),
            }
        };
        let (q, kt, v) = (get(&self.q)?, get(&self.kt)?, get(&self.v)?);
        let softmax = call_of(&self.probs)?;
        let axis = attr_int(softmax.as_call()?, "axis").unwrap_or(-1);
        if axis != -1 && axis != 3 {
            return None;
        }
        if let Some(zero) = get(&self.guard_zero) {
            if scalar(&zero)? != 0.0 {
                return None;
            }
        }
        // Both products without an out_dtype.
        for product in [call_of(&self.scores)?, call_of(&self.out)?] {
            let c = product.as_call()?;
            if !crate::op::infer::attr_dtype(c, "out_dtype").is_void() {
                return None;
            }
        }
        let dtype = tensor_dtype(&q)?;
        if [&kt, &v].iter().any(|e| tensor_dtype(e) != Some(dtype)) {
            return None;
        }
        let mut scale = 1.0;
        for p in [&self.q_scale, &self.k_scale] {
            if let Some(c) = get(p) {
                scale *= scalar(&c)?;
            }
        }
        let heads_last = |x: Expr, axes: [i64; 4]| {
            let axes = AttrValue::Array(axes.map(AttrValue::Int).to_vec());
            infer(
                "relax.permute_dims",
                vec![x],
                Attrs::from_pairs([("axes", axes)]),
            )
        };
        let mut args = vec![
            heads_last(q, [0, 2, 1, 3])?,
            heads_last(kt, [0, 3, 1, 2])?,
            heads_last(v, [0, 2, 1, 3])?,
        ];
        if let Some(bias) = get(&self.bias) {
            let rank = bias.struct_info()?.as_tensor()?.ndim;
            if !(0..=4).contains(&rank) || tensor_dtype(&bias)? != dtype {
                return None;
            }
            args.push(match rank {
                4 => bias,
                r => {
                    let axes = (0..4 - i64::from(r)).map(AttrValue::Int).collect();
                    let attrs = Attrs::from_pairs([("axis", AttrValue::Array(axes))]);
                    infer("relax.expand_dims", vec![bias], attrs)?
                }
            });
        }
        let name = match args.len() {
            3 => "relax.nn.attention",
            _ => "relax.nn.attention_bias",
        };
        let attrs = Attrs::from_pairs([("scale", AttrValue::Float(scale))]);
        let attention = infer(name, args, attrs)?;
        flash_attention::config(attention.as_call()?)?;
        let axes = AttrValue::Array([0, 2, 1, 3].map(AttrValue::Int).to_vec());
        infer(
            "relax.permute_dims",
            vec![attention],
            Attrs::from_pairs([("axes", axes)]),
        )
    }
}

/// `name(args)` with its StructInfo inferred, or `None` when inference
/// rejects it.
fn infer(name: &str, args: Vec<Expr>, attrs: Attrs) -> Option<Expr> {
    let call = crate::op::lookup(name)?.call(args, &attrs).ok()?;
    let sinfo = crate::op::infer_call(call.as_call()?, &Analyzer::new())?.ok()?;
    Some(call.with_struct_info(sinfo))
}

fn tensor_dtype(e: &Expr) -> Option<DataType> {
    Some(e.struct_info()?.as_tensor()?.dtype)
}

/// The value of a constant with one element.
fn scalar(e: &Expr) -> Option<f64> {
    let ExprKind::Constant(t) = e.kind() else {
        return None;
    };
    match t.to_f64_vec()[..] {
        [x] => Some(x),
        _ => None,
    }
}

#[cfg(test)]
#[path = "rewrite_attention/tests.rs"]
mod tests;
