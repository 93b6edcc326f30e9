//! What the pass rewrites and what it leaves, and the kernel's numbers
//! against the reference kernel: on the loop-level interpreter (the pass,
//! then the `tir_interpreter` target) and through LLVM (`Target::host()`,
//! whose pipeline runs the pass), at sizes whose rows and keys end inside
//! a block and a tile, with grouped heads, each mask, a bias, half
//! precision and symbolic lengths.

use super::*;
use crate::backend::{build, Target};
use crate::transform::test_util::parse;
use relax_runtime::{Tensor, Value, VirtualMachine};

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

fn tensor(shape: &[i64], seed: u64, dtype: &str) -> Value {
    let n = shape.iter().product::<i64>() as usize;
    let t = Tensor::from_vec(shape, values(n, seed)).unwrap();
    Value::Tensor(t.astype(dtype.parse().unwrap()).unwrap())
}

/// One attention call: the module's parameter shapes (TVMScript dims),
/// the op's attributes, and the sizes to run it at.
struct Case {
    q: &'static str,
    k: &'static str,
    v: &'static str,
    bias: Option<&'static str>,
    attrs: &'static str,
    dtype: &'static str,
    /// `(q, k, v[, bias])` shapes per run.
    runs: Vec<Vec<Vec<i64>>>,
}

impl Case {
    fn text(&self) -> String {
        attention_text([self.q, self.k, self.v], self.bias, self.attrs, self.dtype)
    }
}

/// A module whose `main` is one `nn.attention` (or `nn.attention_bias`
/// with a `bias` shape) of `q, k, v` of the given TVMScript dims (`"n"`
/// and `"m"` declared as symbolic variables when used) and attributes.
fn attention_text(qkv: [&str; 3], bias: Option<&str>, attrs: &str, dtype: &str) -> String {
    let [q, k, v] = qkv;
    let t = |s: &str| format!("R.Tensor(({s}), dtype=\"{dtype}\")");
    let mut params = format!("q: {}, k: {}, v: {}", t(q), t(k), t(v));
    let mut args = "q, k, v".to_string();
    let op = match bias {
        Some(b) => {
            params += &format!(", bias: {}", t(b));
            args += ", bias";
            "attention_bias"
        }
        None => "attention",
    };
    let vars: String = ["n", "m"]
        .iter()
        .filter(|v| format!("{q}{k}").contains(&format!("\"{v}\"")))
        .map(|v| format!("        {v} = T.int64()\n"))
        .collect();
    format!(
        "@I.ir_module\nclass Module:\n    @R.function\n    def main({params}):\n{vars}        with R.dataflow():\n            o = R.nn.{op}({args}{attrs})\n            R.output(o)\n        return o\n"
    )
}

/// Each element of `got` within `tol` (relative, plus `tol` absolute) of
/// `want`'s; `what` names the comparison in a failure.
fn assert_close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (x, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "{what}, element {x}: {g} against {w}"
        );
    }
}

fn run(exec: &relax_runtime::Executable, args: &[Value]) -> Vec<f64> {
    let out = VirtualMachine::new(exec).call("main", args).unwrap();
    out.as_tensor().unwrap().to_f64_vec()
}

fn check(case: &Case) {
    let module = parse(&case.text());
    let rewritten = FlashAttention.run(module.clone()).unwrap();
    assert!(
        rewritten.to_string().contains("flash_attention"),
        "not rewritten:\n{rewritten}"
    );
    let reference = build(&module, &Target::interpreter()).unwrap();
    let loops = build(&rewritten, &Target::tir_interpreter()).unwrap();
    let native = build(&module, &Target::host()).unwrap();
    let tol = if case.dtype == "float32" { 2e-5 } else { 1e-2 };
    for (i, shapes) in case.runs.iter().enumerate() {
        let args: Vec<Value> = shapes
            .iter()
            .enumerate()
            .map(|(a, s)| tensor(s, (i * 7 + a) as u64, case.dtype))
            .collect();
        let want = run(&reference, &args);
        for (target, exec) in [("loop interpreter", &loops), ("LLVM", &native)] {
            let what = format!("{target}, run {i} {shapes:?}\n{}", case.text());
            assert_close(&run(exec, &args), &want, tol, &what);
        }
    }
}

#[test]
fn tails_of_rows_and_keys_without_a_mask() {
    check(&Case {
        q: "1, 9, 2, 8",
        k: "1, 19, 2, 8",
        v: "1, 19, 2, 8",
        bias: None,
        attrs: "",
        dtype: "float32",
        runs: vec![vec![vec![1, 9, 2, 8], vec![1, 19, 2, 8], vec![1, 19, 2, 8]]],
    });
}

#[test]
fn top_left_with_grouped_heads_over_several_blocks() {
    // 21 positions of 2 heads per key head: 42 rows, three blocks.
    check(&Case {
        q: "2, 21, 4, 16",
        k: "2, 21, 2, 16",
        v: "2, 21, 2, 12",
        bias: None,
        attrs: ", causal_mask=\"TopLeft\"",
        dtype: "float32",
        runs: vec![vec![
            vec![2, 21, 4, 16],
            vec![2, 21, 2, 16],
            vec![2, 21, 2, 12],
        ]],
    });
}

#[test]
fn bottom_right_with_fewer_and_more_queries_than_keys() {
    check(&Case {
        q: "1, 3, 3, 4",
        k: "1, 37, 1, 4",
        v: "1, 37, 1, 4",
        bias: None,
        attrs: ", causal_mask=\"BottomRight\", scale=0.7",
        dtype: "float32",
        runs: vec![vec![vec![1, 3, 3, 4], vec![1, 37, 1, 4], vec![1, 37, 1, 4]]],
    });
    check(&Case {
        q: "1, 37, 2, 8",
        k: "1, 11, 1, 8",
        v: "1, 11, 1, 8",
        bias: None,
        attrs: ", causal_mask=\"BottomRight\"",
        dtype: "float32",
        runs: vec![vec![
            vec![1, 37, 2, 8],
            vec![1, 11, 1, 8],
            vec![1, 11, 1, 8],
        ]],
    });
}

#[test]
fn broadcast_and_full_biases() {
    check(&Case {
        q: "2, 9, 2, 8",
        k: "2, 13, 2, 8",
        v: "2, 13, 2, 8",
        bias: Some("2, 1, 1, 13"),
        attrs: "",
        dtype: "float32",
        runs: vec![vec![
            vec![2, 9, 2, 8],
            vec![2, 13, 2, 8],
            vec![2, 13, 2, 8],
            vec![2, 1, 1, 13],
        ]],
    });
    check(&Case {
        q: "2, 9, 4, 8",
        k: "2, 9, 2, 8",
        v: "2, 9, 2, 8",
        bias: Some("2, 4, 9, 9"),
        attrs: ", causal_mask=\"TopLeft\"",
        dtype: "float32",
        runs: vec![vec![
            vec![2, 9, 4, 8],
            vec![2, 9, 2, 8],
            vec![2, 9, 2, 8],
            vec![2, 4, 9, 9],
        ]],
    });
}

#[test]
fn symbolic_lengths_from_decode_to_prefill() {
    check(&Case {
        q: "1, \"n\", 4, 16",
        k: "1, \"m\", 2, 16",
        v: "1, \"m\", 2, 16",
        bias: None,
        attrs: ", causal_mask=\"BottomRight\"",
        dtype: "float32",
        runs: [(1, 30), (20, 20), (17, 33), (1, 1)]
            .into_iter()
            .map(|(n, m)| vec![vec![1, n, 4, 16], vec![1, m, 2, 16], vec![1, m, 2, 16]])
            .collect(),
    });
}

#[test]
fn half_precision_operands() {
    for dtype in ["float16", "bfloat16"] {
        check(&Case {
            q: "1, 10, 2, 8",
            k: "1, 13, 2, 8",
            v: "1, 13, 2, 8",
            bias: None,
            attrs: ", causal_mask=\"TopLeft\"",
            dtype,
            runs: vec![vec![
                vec![1, 10, 2, 8],
                vec![1, 13, 2, 8],
                vec![1, 13, 2, 8],
            ]],
        });
    }
}

#[test]
fn identical_calls_share_one_kernel_and_others_are_left_alone() {
    let module = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(q: R.Tensor((1, 8, 2, 8), dtype="float32"), s: R.Tensor((1, 1, 6, 8), dtype="float32"), w: R.Tensor((1, 8, 2, 8), dtype="float64"), h: R.Tensor((1, 4, "h", 8), dtype="float32")):
        h = T.int64()
        with R.dataflow():
            a = R.nn.attention(q, q, q)
            b = R.nn.attention(a, a, a)
            c = R.nn.attention(q, q, q, window_size=2)
            d = R.nn.attention(w, w, w)
            e = R.nn.attention(h, h, h)
            f = R.nn.attention(s, q, q, causal_mask="BottomRight")
            R.output(b, c, d, e, f)
        return (b, c, d, e, f)
"#,
    );
    let out = FlashAttention.run(module).unwrap();
    let text = out.to_string();
    // `a` and `b` share one kernel; `f`, a decode step (one query of six
    // heads over two), has its own.
    assert_eq!(
        text.matches("R.call_tir(cls.flash_attention,").count(),
        2,
        "{text}"
    );
    assert_eq!(
        text.matches("R.call_tir(cls.flash_attention1,").count(),
        1,
        "{text}"
    );
    // The window, float64 and a symbolic head count are left alone.
    assert_eq!(text.matches("R.nn.attention(").count(), 3, "{text}");
}

#[test]
fn decode_steps_on_short_blocks() {
    // Head dims that are not whole vectors: three rows (one position of
    // three grouped heads) in a block of eight, over five key tiles; then
    // two batches of two key heads.
    check(&Case {
        q: "1, 1, 3, 8",
        k: "1, 40, 1, 8",
        v: "1, 40, 1, 8",
        bias: None,
        attrs: ", causal_mask=\"BottomRight\"",
        dtype: "float32",
        runs: vec![vec![vec![1, 1, 3, 8], vec![1, 40, 1, 8], vec![1, 40, 1, 8]]],
    });
    check(&Case {
        q: "2, 2, 4, 8",
        k: "2, 37, 2, 8",
        v: "2, 37, 2, 12",
        bias: Some("2, 1, 1, 37"),
        attrs: "",
        dtype: "float32",
        runs: vec![vec![
            vec![2, 2, 4, 8],
            vec![2, 37, 2, 8],
            vec![2, 37, 2, 12],
            vec![2, 1, 1, 37],
        ]],
    });
}

#[test]
fn decode_steps_one_row_at_a_time() {
    // Head dims of whole vectors (`decode.rs`): a bias over two batches
    // of two key heads, a value head dim of its own; then TopLeft with two
    // positions, which see one and two of the 21 keys.
    check(&Case {
        q: "2, 1, 4, 32",
        k: "2, 45, 2, 32",
        v: "2, 45, 2, 16",
        bias: Some("2, 1, 1, 45"),
        attrs: "",
        dtype: "float32",
        runs: vec![vec![
            vec![2, 1, 4, 32],
            vec![2, 45, 2, 32],
            vec![2, 45, 2, 16],
            vec![2, 1, 1, 45],
        ]],
    });
    check(&Case {
        q: "1, 2, 2, 16",
        k: "1, 21, 1, 16",
        v: "1, 21, 1, 16",
        bias: None,
        attrs: ", causal_mask=\"TopLeft\"",
        dtype: "bfloat16",
        runs: vec![vec![
            vec![1, 2, 2, 16],
            vec![1, 21, 1, 16],
            vec![1, 21, 1, 16],
        ]],
    });
}

/// A row whose every visible key has a bias of `-inf` (ONNX's boolean
/// mask that allows none of them) is zeros on every path: the reference
/// kernel, FlashAttention's kernel on the loop-level interpreter and
/// through LLVM (its block path, a short block and a decode step), and the
/// legalization on both. Some rows are fully masked by the bias alone,
/// some only once the causal mask hides the keys the bias allows.
#[test]
fn fully_masked_rows_are_zeros_on_every_path() {
    use crate::transform::LegalizeOps;
    // (q, k, v, bias) dims: 18 rows in blocks of 16; a decode step with
    // head dims of whole vectors; three rows in a short block.
    let shapes: [[[i64; 4]; 4]; 3] = [
        [[1, 9, 2, 8], [1, 13, 1, 8], [1, 13, 1, 8], [1, 2, 9, 13]],
        [[1, 1, 2, 16], [1, 20, 1, 16], [1, 20, 1, 16], [1, 2, 1, 20]],
        [[1, 1, 3, 8], [1, 11, 1, 8], [1, 11, 1, 8], [1, 3, 1, 11]],
    ];
    for (n, [q, k, v, b]) in shapes.into_iter().enumerate() {
        for causal in [
            "",
            ", causal_mask=\"TopLeft\"",
            ", causal_mask=\"BottomRight\"",
        ] {
            let dims = |d: [i64; 4]| d.map(|x| x.to_string()).join(", ");
            let text = attention_text(
                [&dims(q), &dims(k), &dims(v)],
                Some(&dims(b)),
                causal,
                "float32",
            );
            let module = parse(&text);
            // Row (h, i) of the bias: all -inf for head 0's last query;
            // -inf up to the query's last visible key under either mask
            // (j <= i, or j <= i + skv - s), 0 after, for head 1's first.
            let (heads, s, skv) = (b[1], b[2], b[3]);
            let mut bias = values((heads * s * skv) as usize, 99 + n as u64);
            let last = (s - 1) as usize;
            for j in 0..skv as usize {
                bias[last * skv as usize + j] = f32::NEG_INFINITY;
                if j <= (skv - s) as usize {
                    bias[(s * skv) as usize + j] = f32::NEG_INFINITY;
                }
            }
            let args: Vec<Value> = [q, k, v]
                .iter()
                .enumerate()
                .map(|(a, d)| tensor(d, (n * 7 + a) as u64, "float32"))
                .chain([Value::Tensor(Tensor::from_vec(&b, bias).unwrap())])
                .collect();
            let flash = FlashAttention.run(module.clone()).unwrap();
            assert!(flash.to_string().contains("flash_attention"), "{flash}");
            let legal = LegalizeOps::default().run(module.clone()).unwrap();
            let want = run(&build(&module, &Target::interpreter()).unwrap(), &args);
            // Output (i, h, e): head 0's last query, and head 1's first
            // when a causal mask hides its keys past skv - s.
            let hv = v[3] as usize;
            let row = |i: usize, h: usize| &want[(i * heads as usize + h) * hv..][..hv];
            assert!(row(last, 0).iter().all(|&x| x == 0.0), "{want:?}");
            if !causal.is_empty() {
                assert!(row(0, 1).iter().all(|&x| x == 0.0), "{causal}: {want:?}");
            }
            for (path, m, target) in [
                (
                    "FlashAttention, loop interpreter",
                    &flash,
                    Target::tir_interpreter(),
                ),
                ("FlashAttention, LLVM", &module, Target::host()),
                (
                    "legalized, loop interpreter",
                    &legal,
                    Target::tir_interpreter(),
                ),
                ("legalized, LLVM", &legal, Target::host()),
            ] {
                let got = run(&build(m, &target).unwrap(), &args);
                assert_close(&got, &want, 2e-5, &format!("{path}, {q:?}{causal}"));
            }
        }
    }
}
