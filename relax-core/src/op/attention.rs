//! Fused multi-head attention: `nn.attention(query, key, value)` and
//! `nn.attention_bias(query, key, value, bias)` (TVM's
//! `src/relax/op/nn/attention.cc`; TVM prints a call with a bias as
//! `attention_bias` so that the text parses back to the same op).
//!
//! 1. Layout BSNH: `query` is `(batch, seq_len, num_heads, head_dim)`,
//!    `key` is `(batch, seq_len_kv, num_kv_heads, head_dim)`, `value` is
//!    `(batch, seq_len_kv, num_kv_heads, head_dim_v)`; the result is
//!    `(batch, seq_len, num_heads, head_dim_v)` in `query`'s dtype.
//! 2. Grouped-query attention: `num_heads` is a multiple of
//!    `num_kv_heads`, and query head `h` reads key/value head
//!    `h / (num_heads / num_kv_heads)`.
//! 3. `softmax(scale · q·kᵀ + bias, masked) · v` per batch and head:
//!    - `scale` defaults to `1 / sqrt(head_dim)`;
//!    - `bias` is 4-D and broadcasts (each dim equal or 1) to
//!      `(batch, num_heads, seq_len, seq_len_kv)`;
//!    - `causal_mask` `"TopLeft"` lets query `i` see keys `j ≤ i`, and
//!      `"BottomRight"` keys `j ≤ i + |seq_len_kv − seq_len|` (a decode
//!      step's queries see the whole cache before them); a masked key has
//!      probability 0;
//!    - a query whose every visible key has the logit `-inf` (a bias of
//!      `-inf` for each, as a boolean mask's "no" becomes) gets zeros, not
//!      `0/0`: the reference kernel, the legalization and FlashAttention's
//!      kernel agree on it, as ONNX's `Attention` asks;
//!    - `window_size` (sliding-window attention) is accepted, as TVM's
//!      inference does, but no kernel implements it: legalization and the
//!      reference kernel report it.
//! 4. The operands share one float dtype (TVM lets them differ and takes
//!    `query`'s; here a mismatch is reported, since no kernel would
//!    convert).

use super::attr::{AttrDefault, AttrSpec, AttrType};
use super::infer::{arg_name, attr, error, fmt_tensor_shape, tensor_arg, unify_dtype};
use super::{Arity, OpInfo, OpPatternKind};
use crate::arith::{Analyzer, Proof};
use crate::ir::{AttrValue, Call, PrimExpr, StructInfo, TensorStructInfo};
use relax_runtime::{DataType, Diagnostic};

/// Which keys a query sees: the `causal_mask` attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CausalMask {
    /// Every key (`None`).
    None,
    /// Key `j` for query `i` when `j ≤ i`.
    TopLeft,
    /// Key `j` for query `i` when `j ≤ i + |seq_len_kv − seq_len|`.
    BottomRight,
}

impl CausalMask {
    /// The `offset` of "key `j` is visible to query `i` when `j ≤ i +
    /// offset`": `|seq_len_kv − seq_len|` for `BottomRight`, else 0 (no
    /// key is hidden without a mask).
    pub fn offset(self, seq_len: &PrimExpr, seq_len_kv: &PrimExpr) -> PrimExpr {
        match self {
            CausalMask::BottomRight => {
                (seq_len_kv.clone() - seq_len.clone()).max(seq_len.clone() - seq_len_kv.clone())
            }
            _ => PrimExpr::int(0),
        }
    }
}

/// Whether the call asks for sliding-window attention (`window_size`
/// set), which inference accepts and no kernel implements.
pub fn sliding_window(call: &Call) -> bool {
    !matches!(attr(call, "window_size"), None | Some(AttrValue::None))
}

/// The call's `causal_mask`, or an error naming a value that is none of
/// the three. Inference and the legalization both read it here.
pub fn causal_mask(call: &Call) -> Result<CausalMask, Diagnostic> {
    match attr(call, "causal_mask") {
        Some(AttrValue::Str(s)) if s == "TopLeft" => Ok(CausalMask::TopLeft),
        Some(AttrValue::Str(s)) if s == "BottomRight" => Ok(CausalMask::BottomRight),
        Some(AttrValue::Str(s)) => Err(error(
            call,
            "op-bad-attr",
            format!("causal_mask must be \"TopLeft\", \"BottomRight\" or None, found {s:?}"),
        )),
        _ => Ok(CausalMask::None),
    }
}

/// What each axis of a BSNH operand is, for messages.
const NAMES: [&str; 4] = [
    "batch size",
    "sequence length",
    "number of heads",
    "head dim",
];

fn infer_attention(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let q = tensor_arg(call, 0)?;
    let k = tensor_arg(call, 1)?;
    let v = tensor_arg(call, 2)?;
    let bias = if call.args.len() > 3 {
        Some(tensor_arg(call, 3)?)
    } else {
        None
    };
    let mut dtype = q.dtype;
    for (i, t) in [(1, k), (2, v)].into_iter().chain(bias.map(|b| (3, b))) {
        dtype = unify_dtype(call, 0, dtype, i, t.dtype)?;
    }
    if !dtype.is_void() && !dtype.is_float() {
        return Err(error(
            call,
            "op-dtype-not-float",
            format!(
                "{} must have a float dtype, found {dtype}",
                arg_name(call, 0)
            ),
        ));
    }
    causal_mask(call)?;
    for (i, t) in [(0, q), (1, k), (2, v)]
        .into_iter()
        .chain(bias.map(|b| (3, b)))
    {
        if !t.is_unknown_ndim() && t.ndim != 4 {
            return Err(error(
                call,
                "op-rank-mismatch",
                format!(
                    "{} must be 4-D ({}), found {}",
                    arg_name(call, i),
                    if i == 3 {
                        "broadcast to (batch, num_heads, seq_len, seq_len_kv)"
                    } else {
                        "batch, seq_len, num_heads, head_dim"
                    },
                    fmt_tensor_shape(t)
                ),
            ));
        }
    }
    let (Some(qs), Some(ks), Some(vs)) = (q.shape_values(), k.shape_values(), v.shape_values())
    else {
        return Ok(StructInfo::tensor_ndim(4, q.dtype));
    };
    let differ = |a: &PrimExpr, b: &PrimExpr| ana.compare_equal(a, b) == Proof::Disproven;
    let mismatch =
        |what: &str, (i, a): (usize, &TensorStructInfo), (j, b): (usize, &TensorStructInfo)| {
            error(
                call,
                "op-shape-mismatch",
                format!(
                    "the {what} differs: {} is {}, {} is {}",
                    arg_name(call, i),
                    fmt_tensor_shape(a),
                    arg_name(call, j),
                    fmt_tensor_shape(b)
                ),
            )
        };
    // (the axis, the two operands that must agree on it): the batch of
    // all three, the head dim of query and key, the sequence length and
    // the heads of key and value.
    let dims = [qs, ks, vs];
    let operands = [q, k, v];
    for (axis, i, j) in [(0, 0, 1), (0, 0, 2), (3, 0, 1), (1, 1, 2), (2, 1, 2)] {
        let (a, b) = (operands[i], operands[j]);
        if differ(&dims[i][axis], &dims[j][axis]) {
            return Err(mismatch(NAMES[axis], (i, a), (j, b)));
        }
    }
    let (heads, kv_heads) = (ana.simplify(&qs[2]), ana.simplify(&ks[2]));
    if let (Some(h), Some(kh)) = (heads.as_int(), kv_heads.as_int()) {
        if kh == 0 || h % kh != 0 {
            return Err(error(
                call,
                "op-shape-mismatch",
                format!(
                    "the number of query heads ({h}) must be a multiple of the number of key heads ({kh}): {} is {}, {} is {}",
                    arg_name(call, 0),
                    fmt_tensor_shape(q),
                    arg_name(call, 1),
                    fmt_tensor_shape(k)
                ),
            ));
        }
    }
    if let Some(bs) = bias.and_then(TensorStructInfo::shape_values) {
        let target = [&qs[0], &qs[2], &qs[1], &ks[1]];
        // Each dim equal to the target's or 1; seq_len_kv, the last, equal.
        for (axis, (d, t)) in bs.iter().zip(target).enumerate() {
            let not_one = ana.compare_equal(d, &PrimExpr::int(1)) == Proof::Disproven;
            if differ(d, t) && (not_one || axis == 3) {
                return Err(error(
                    call,
                    "op-shape-mismatch",
                    format!(
                        "{} does not broadcast to (batch, num_heads, seq_len, seq_len_kv) = {}: found {}",
                        arg_name(call, 3),
                        crate::ir::struct_info::fmt_dims(
                            &target.iter().map(|&e| e.clone()).collect::<Vec<_>>()
                        ),
                        fmt_tensor_shape(bias.unwrap())
                    ),
                ));
            }
        }
    }
    let dims = [qs[0].clone(), qs[1].clone(), qs[2].clone(), vs[3].clone()];
    Ok(StructInfo::tensor(
        dims.iter().map(|e| ana.simplify(e)).collect(),
        q.dtype,
    ))
}

const ATTRS: &[AttrSpec] = &[
    AttrSpec::new("scale", AttrType::OptFloat, AttrDefault::None),
    AttrSpec::new("causal_mask", AttrType::OptStr, AttrDefault::None),
    AttrSpec::new("window_size", AttrType::OptInt, AttrDefault::None),
];

/// The attention ops.
pub const OPS: &[OpInfo] = &[
    OpInfo {
        name: "relax.nn.attention",
        args: &["query", "key", "value"],
        arity: Arity::Exact(3),
        attrs: ATTRS,
        infer_struct_info: infer_attention,
        purity: true,
        pattern: OpPatternKind::Opaque,
    },
    OpInfo {
        name: "relax.nn.attention_bias",
        args: &["query", "key", "value", "bias"],
        arity: Arity::Exact(4),
        attrs: ATTRS,
        infer_struct_info: infer_attention,
        purity: true,
        pattern: OpPatternKind::Opaque,
    },
];

/// The dtype the kernels compute in: `float32` for narrower floats.
pub fn accumulate_dtype(dtype: DataType) -> DataType {
    if dtype.bits() < 32 {
        DataType::f32()
    } else {
        dtype
    }
}

#[cfg(test)]
mod tests {
    use crate::ir::AttrValue;
    use crate::op::testing::*;

    #[test]
    fn attention_infers_bsnh() {
        let n = sym("n");
        let m = sym("m");
        let q = t(&[d(1), n.clone(), d(8), d(16)], F32);
        let k = t(&[d(1), m.clone(), d(2), d(16)], F32);
        let v = t(&[d(1), m.clone(), d(2), d(32)], F32);
        assert_infers(
            "relax.nn.attention",
            &[q.clone(), k.clone(), v.clone()],
            &[("causal_mask", AttrValue::Str("BottomRight".into()))],
            "R.Tensor((1, n, 8, 32), dtype=\"float32\")",
        );
        let bias = t(&[d(1), d(1), n.clone(), m.clone()], F32);
        assert_infers(
            "relax.nn.attention_bias",
            &[q.clone(), k.clone(), v.clone(), bias],
            &[("scale", AttrValue::Float(0.5))],
            "R.Tensor((1, n, 8, 32), dtype=\"float32\")",
        );
        assert_infers(
            "relax.nn.attention",
            &[tn(-1, F16), tn(4, F16), tn(4, F16)],
            &[],
            "R.Tensor(dtype=\"float16\", ndim=4)",
        );
    }

    #[test]
    fn attention_reports_what_does_not_fit() {
        let q = t(&[d(2), d(4), d(8), d(16)], F32);
        let k = t(&[d(2), d(6), d(8), d(16)], F32);
        let v = t(&[d(2), d(6), d(8), d(32)], F32);
        let op = "relax.nn.attention";
        assert_fails(op, &[t(&[d(4), d(8), d(16)], F32), k.clone(), v.clone()], &[],
            "nn.attention: query must be 4-D (batch, seq_len, num_heads, head_dim), found (4, 8, 16)");
        assert_fails(
            op,
            &[q.clone(), t(&[d(2), d(6), d(8), d(15)], F32), v.clone()],
            &[],
            "nn.attention: the head dim differs: query is (2, 4, 8, 16), key is (2, 6, 8, 15)",
        );
        assert_fails(op, &[q.clone(), k.clone(), t(&[d(2), d(7), d(8), d(32)], F32)], &[],
            "nn.attention: the sequence length differs: key is (2, 6, 8, 16), value is (2, 7, 8, 32)");
        assert_fails(
            op,
            &[q.clone(), t(&[d(3), d(6), d(8), d(16)], F32), v.clone()],
            &[],
            "nn.attention: the batch size differs: query is (2, 4, 8, 16), key is (3, 6, 8, 16)",
        );
        assert_fails(op, &[q.clone(), t(&[d(2), d(6), d(3), d(16)], F32), t(&[d(2), d(6), d(3), d(32)], F32)], &[],
            "nn.attention: the number of query heads (8) must be a multiple of the number of key heads (3): query is (2, 4, 8, 16), key is (2, 6, 3, 16)");
        assert_fails(
            op,
            &[q.clone(), k.clone(), t(&[d(2), d(6), d(8), d(32)], F16)],
            &[],
            "nn.attention: dtypes differ: query is float32, value is float16",
        );
        assert_fails(op, &[q.clone(), k.clone(), v.clone()], &[("causal_mask", AttrValue::Str("Upper".into()))],
            "nn.attention: causal_mask must be \"TopLeft\", \"BottomRight\" or None, found \"Upper\"");
        assert_fails("relax.nn.attention_bias", &[q.clone(), k.clone(), v.clone(), t(&[d(2), d(8), d(4), d(5)], F32)], &[],
            "nn.attention_bias: bias does not broadcast to (batch, num_heads, seq_len, seq_len_kv) = (2, 8, 4, 6): found (2, 8, 4, 5)");
        assert_fails("relax.nn.attention_bias", &[q.clone(), k.clone(), v.clone(), t(&[d(2), d(3), d(4), d(6)], F32)], &[],
            "nn.attention_bias: bias does not broadcast to (batch, num_heads, seq_len, seq_len_kv) = (2, 8, 4, 6): found (2, 3, 4, 6)");
        assert_fails("relax.nn.attention_bias", &[q, k, v, t(&[d(4), d(6)], F32)], &[],
            "nn.attention_bias: bias must be 4-D (broadcast to (batch, num_heads, seq_len, seq_len_kv)), found (4, 6)");
    }
}
