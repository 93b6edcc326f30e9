//! ONNX's `Attention`: the forms whose semantics are exactly
//! `relax.nn.attention` / `relax.nn.attention_bias` import as that op, the
//! others as the composite of registry ops (`src/ops/attention.rs` says
//! which is which), and both give ONNX's numbers on the interpreter and
//! through LLVM. The cases under `tests/data/attention/` are ONNX's node
//! tests (1.23.2, Apache-2.0, copied unchanged, see tests/data/README.md);
//! the models built here add symbolic lengths and a past cache checked
//! against attention computed by hand.

use super::{f32_info, int_attr, model, Dim};
use relax_core::backend::{build, Target};
use relax_core::ir::IRModule;
use relax_onnx::backend_test::BackendCase;
use relax_onnx::proto::{AttributeProto, GraphProto, NodeProto, ValueInfoProto};
use relax_onnx::{from_onnx, ImportOptions};
use relax_runtime::{Tensor, Value, VirtualMachine};
use std::path::Path;

/// The case `name` under tests/data, imported; the module's text.
fn import_case(name: &str) -> (BackendCase, IRModule, String) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    let case = BackendCase::load(&dir).unwrap_or_else(|e| panic!("{name}: {e}"));
    let options = case.import_options().unwrap();
    let module = case
        .import(&options)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .module;
    let text = module.to_string();
    (case, module, text)
}

/// The case's expected outputs on the interpreter and through LLVM.
fn check_numbers(name: &str, case: &BackendCase, module: &IRModule) {
    for target in [Target::interpreter(), Target::host()] {
        case.check(module, &target, 1e-3, 1e-4)
            .unwrap_or_else(|m| panic!("{name} on {target:?}: {m}"));
    }
}

/// How many calls of `op` (`R.nn.attention(`) the text has.
fn calls(text: &str, op: &str) -> usize {
    text.matches(op).count()
}

/// (case, the fused op, its `causal_mask`, whether its operands are reached
/// by reshapes alone: 3-d inputs without a past).
const FUSED: &[(&str, &str, &str, bool)] = &[
    (
        "attention/test_attention_3d_gqa_causal",
        "R.nn.attention(",
        "causal_mask=\"TopLeft\"",
        true,
    ),
    (
        "attention/test_attention_3d_diff_heads_sizes_attn_mask",
        "R.nn.attention_bias(",
        "causal_mask=None",
        true,
    ),
    (
        "attention/test_attention_3d_with_past_and_present",
        "R.nn.attention_bias(",
        "causal_mask=None",
        false,
    ),
    (
        "attention/test_attention_4d_gqa_with_past_and_present",
        "R.nn.attention_bias(",
        "causal_mask=None",
        false,
    ),
    // is_causal over a past: key j for query i when j <= i + past, the
    // new keys as many as the queries.
    (
        "attention/test_attention_4d_causal_with_past_and_present",
        "R.nn.attention(",
        "causal_mask=\"BottomRight\"",
        false,
    ),
    (
        "attention/test_attention_4d_attn_mask_bool_4d",
        "R.nn.attention_bias(",
        "causal_mask=None",
        false,
    ),
    (
        "attention/test_attention_4d_attn_mask_3d_causal",
        "R.nn.attention_bias(",
        "causal_mask=\"TopLeft\"",
        false,
    ),
    (
        "attention/test_attention_4d_scaled",
        "R.nn.attention(",
        "causal_mask=None",
        false,
    ),
    // Rows that a boolean mask, alone or with the causal mask, leaves no
    // key: zeros, not NaN, on every path.
    (
        "attention/test_attention_causal_boolmask_nan_robustness",
        "R.nn.attention_bias(",
        "causal_mask=\"TopLeft\"",
        false,
    ),
    (
        "node/test_attention_23_boolmask_fullymasked_row_nan_robustness",
        "R.nn.attention_bias(",
        "causal_mask=None",
        false,
    ),
    (
        "node/test_attention_4d_fp16",
        "R.nn.attention(",
        "causal_mask=None",
        false,
    ),
];

#[test]
fn eligible_forms_import_as_nn_attention_and_give_onnxs_numbers() {
    for &(name, op, causal, reshapes_only) in FUSED {
        let (case, module, text) = import_case(name);
        assert_eq!(calls(&text, "R.nn.attention"), 1, "{name}:\n{text}");
        assert_eq!(calls(&text, op), 1, "{name}:\n{text}");
        assert!(text.contains(causal), "{name}: not {causal}:\n{text}");
        assert_eq!(calls(&text, "R.nn.softmax("), 0, "{name}:\n{text}");
        if reshapes_only {
            assert_eq!(calls(&text, "R.permute_dims("), 0, "{name}:\n{text}");
        }
        check_numbers(name, &case, &module);
    }
}

/// (case, why the op cannot express it).
const COMPOSITE: &[(&str, &str)] = &[
    ("attention/test_attention_4d_softcap", "softcap"),
    (
        "attention/test_attention_4d_with_qk_matmul",
        "the qk_matmul_output output",
    ),
    (
        "attention/test_attention_3d_local_window",
        "a sliding window",
    ),
    (
        "attention/test_attention_4d_gqa_causal_nonpad_decode",
        "nonpad_kv_seqlen",
    ),
    (
        "attention/test_attention_4d_diff_heads_mask4d_padded_kv",
        "a mask shorter than the keys, padded",
    ),
];

#[test]
fn other_forms_keep_the_composite_and_give_onnxs_numbers() {
    for &(name, why) in COMPOSITE {
        let (case, module, text) = import_case(name);
        assert_eq!(calls(&text, "R.nn.attention"), 0, "{name} ({why}):\n{text}");
        assert_eq!(calls(&text, "R.nn.softmax("), 1, "{name} ({why}):\n{text}");
        check_numbers(name, &case, &module);
    }
}

// ----- models built here ------------------------------------------------

/// One `Attention` node (opset 23) on the node inputs `names` (an empty
/// name an omitted one), the graph's `inputs`, output `y`.
fn attention_model(
    names: &[&str],
    inputs: Vec<ValueInfoProto>,
    y: ValueInfoProto,
    attrs: Vec<AttributeProto>,
) -> Vec<u8> {
    let node = NodeProto {
        op_type: Some("Attention".into()),
        name: Some("attention".into()),
        input: names.iter().map(|n| n.to_string()).collect(),
        output: vec![y.name().to_string()],
        attribute: attrs,
        ..Default::default()
    };
    let graph = GraphProto {
        node: vec![node],
        input: inputs,
        output: vec![y],
        ..Default::default()
    };
    model(23, graph)
}

/// Deterministic values in [-2, 2).
fn values(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as f64 / (1u64 << 24) as f64 * 4.0 - 2.0) as f32
        })
        .collect()
}

/// Attention by hand, (batch, heads, seq, head size) in and out:
/// `q (b, qh, s, d)`, `k (b, kvh, l, d)`, `v (b, kvh, l, dv)`, query head
/// `h` reading key head `h / (qh / kvh)`, scale `1/√d`, key `j` visible to
/// query `i` when `j <= i + offset` if `offset` is given.
#[allow(clippy::too_many_arguments)]
fn by_hand(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    [b, qh, s, d]: [usize; 4],
    kvh: usize,
    l: usize,
    dv: usize,
    offset: Option<usize>,
) -> Vec<f64> {
    let mut out = Vec::new();
    let scale = 1.0 / (d as f64).sqrt();
    for bi in 0..b {
        for h in 0..qh {
            let hk = h / (qh / kvh);
            for i in 0..s {
                let seen = offset.map_or(l, |o| (i + o + 1).min(l));
                let logits: Vec<f64> = (0..seen)
                    .map(|j| {
                        let dot: f64 = (0..d)
                            .map(|e| {
                                f64::from(q[((bi * qh + h) * s + i) * d + e])
                                    * f64::from(k[((bi * kvh + hk) * l + j) * d + e])
                            })
                            .sum();
                        dot * scale
                    })
                    .collect();
                let m = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let e: Vec<f64> = logits.iter().map(|x| (x - m).exp()).collect();
                let sum: f64 = e.iter().sum();
                for c in 0..dv {
                    let y: f64 = (0..seen)
                        .map(|j| e[j] / sum * f64::from(v[((bi * kvh + hk) * l + j) * dv + c]))
                        .sum();
                    out.push(y);
                }
            }
        }
    }
    out
}

/// `x (b, s, heads · size)` as `(b, heads, s, size)`.
fn heads_first(x: &[f32], b: usize, s: usize, heads: usize, size: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(x.len());
    for bi in 0..b {
        for h in 0..heads {
            for i in 0..s {
                let row = (bi * s + i) * heads * size + h * size;
                out.extend_from_slice(&x[row..row + size]);
            }
        }
    }
    out
}

/// `main`'s one output on `target`, as `f64`s.
fn run(module: &IRModule, target: &Target, args: &[Value]) -> Vec<f64> {
    let exec = build(module, target).unwrap_or_else(|e| panic!("{target:?}: {e}"));
    let out = VirtualMachine::new(&exec)
        .call("main", args)
        .unwrap_or_else(|e| panic!("{target:?}: {e}"));
    out.as_tensor().expect("one tensor").to_f64_vec()
}

fn assert_close(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (x, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-4 * (1.0 + w.abs()),
            "{what}, element {x}: {g} against {w}"
        );
    }
}

fn tensor(shape: &[usize], data: &[f32]) -> Value {
    let shape: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    Value::Tensor(Tensor::from_vec(&shape, data.to_vec()).unwrap())
}

/// A causal, grouped-query prefill of 3-d inputs over a symbolic length
/// imports as one `nn.attention` (reshapes only, `TopLeft`), and one build
/// runs it at a decode step's length and at a few prefill lengths.
#[test]
fn a_causal_3d_prefill_of_any_length_is_one_fused_call() {
    let (qh, kvh, d) = (4usize, 2usize, 16usize);
    let dims = |width: usize| [Dim::Value(1), Dim::Param("S"), Dim::Value(width as i64)];
    let bytes = attention_model(
        &["Q", "K", "V"],
        vec![
            f32_info("Q", &dims(qh * d)),
            f32_info("K", &dims(kvh * d)),
            f32_info("V", &dims(kvh * d)),
        ],
        f32_info("Y", &dims(qh * d)),
        vec![
            int_attr("is_causal", 1),
            int_attr("q_num_heads", qh as i64),
            int_attr("kv_num_heads", kvh as i64),
        ],
    );
    let module = from_onnx(&bytes, &ImportOptions::default()).unwrap().module;
    let text = module.to_string();
    assert_eq!(calls(&text, "R.nn.attention("), 1, "{text}");
    assert_eq!(calls(&text, "causal_mask=\"TopLeft\""), 1, "{text}");
    assert_eq!(calls(&text, "R.permute_dims("), 0, "{text}");
    for s in [1, 5, 20] {
        let (q, k, v) = (
            values(s * qh * d, s as u64),
            values(s * kvh * d, 100 + s as u64),
            values(s * kvh * d, 200 + s as u64),
        );
        let args = [
            tensor(&[1, s, qh * d], &q),
            tensor(&[1, s, kvh * d], &k),
            tensor(&[1, s, kvh * d], &v),
        ];
        let want = by_hand(
            &heads_first(&q, 1, s, qh, d),
            &heads_first(&k, 1, s, kvh, d),
            &heads_first(&v, 1, s, kvh, d),
            [1, qh, s, d],
            kvh,
            s,
            d,
            Some(0),
        );
        // The output is (1, s, qh · d): back to heads first to compare.
        for target in [Target::interpreter(), Target::host()] {
            let got = run(&module, &target, &args);
            let got: Vec<f32> = got.iter().map(|&x| x as f32).collect();
            let got: Vec<f64> = heads_first(&got, 1, s, qh, d)
                .into_iter()
                .map(f64::from)
                .collect();
            assert_close(&got, &want, &format!("S = {s} on {target:?}"));
        }
    }
}

/// `is_causal` over a past: with as many new keys as queries, the fused
/// op's `BottomRight` (`j <= i + |total − S|`) is ONNX's `j <= i + past`;
/// with fewer new keys it would not be, and the node keeps the composite.
/// Both against attention by hand with ONNX's offset, the past length.
#[test]
fn causal_attention_over_a_past_is_fused_only_where_the_offsets_agree() {
    let (b, h, s, past, d) = (1usize, 2usize, 3usize, 4usize, 8usize);
    for (new, fused) in [(3usize, true), (2, false)] {
        let dims = |n: usize| {
            [b, h, n, d]
                .iter()
                .map(|&x| Dim::Value(x as i64))
                .collect::<Vec<_>>()
        };
        let bytes = attention_model(
            &["Q", "K", "V", "", "past_key", "past_value"],
            vec![
                f32_info("Q", &dims(s)),
                f32_info("K", &dims(new)),
                f32_info("V", &dims(new)),
                f32_info("past_key", &dims(past)),
                f32_info("past_value", &dims(past)),
            ],
            f32_info("Y", &dims(s)),
            vec![int_attr("is_causal", 1)],
        );
        let module = from_onnx(&bytes, &ImportOptions::default()).unwrap().module;
        let text = module.to_string();
        if fused {
            assert_eq!(
                calls(&text, "causal_mask=\"BottomRight\""),
                1,
                "new keys {new}:\n{text}"
            );
        } else {
            assert_eq!(calls(&text, "R.nn.attention"), 0, "new keys {new}:\n{text}");
        }
        let (q, k, v) = (
            values(b * h * s * d, 1),
            values(b * h * new * d, 2),
            values(b * h * new * d, 3),
        );
        let (pk, pv) = (values(b * h * past * d, 4), values(b * h * past * d, 5));
        // The keys and values over the past and the new ones, per head.
        let cat = |p: &[f32], n: &[f32]| -> Vec<f32> {
            (0..b * h)
                .flat_map(|r| {
                    let mut row = p[r * past * d..(r + 1) * past * d].to_vec();
                    row.extend_from_slice(&n[r * new * d..(r + 1) * new * d]);
                    row
                })
                .collect()
        };
        let want = by_hand(
            &q,
            &cat(&pk, &k),
            &cat(&pv, &v),
            [b, h, s, d],
            h,
            past + new,
            d,
            Some(past),
        );
        let args = [
            tensor(&[b, h, s, d], &q),
            tensor(&[b, h, new, d], &k),
            tensor(&[b, h, new, d], &v),
            tensor(&[b, h, past, d], &pk),
            tensor(&[b, h, past, d], &pv),
        ];
        for target in [Target::interpreter(), Target::host()] {
            let got = run(&module, &target, &args);
            assert_close(&got, &want, &format!("new keys {new} on {target:?}"));
        }
    }
}
