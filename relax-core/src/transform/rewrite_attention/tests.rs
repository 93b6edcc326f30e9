//! The export's decomposed attention becomes one attention call with the
//! same numbers (the reference kernels on the original module against the
//! host build, which runs this pass and the tiled kernel), and what does
//! not fit is left as it was.

use super::*;
use crate::backend::{build, Target};
use crate::transform::test_util::{parse, run_main_f32};
use relax_runtime::{Tensor, Value};

/// PyTorch's export of `scaled_dot_product_attention`: heads split by a
/// reshape and a transpose, `kᵀ` by a reshape, a transpose and a reshape,
/// each side scaled, a mask added, the softmax's NaN guard.
fn exported(dtype: &str, axis: i64, bias: &str, add: &str, tail: &str) -> String {
    format!(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, "s", 16), dtype="{dtype}"), mask: R.Tensor({bias}, dtype="{dtype}")) -> R.Tensor((1, 2, "s", 8), dtype="{dtype}"):
        s = T.int64()
        with R.dataflow():
            a = R.reshape(x, R.shape([1, s, 2, 8]))
            q = R.permute_dims(a, axes=[0, 2, 1, 3])
            b = R.reshape(q, R.shape([2, s, 8]))
            c = R.permute_dims(b, axes=[0, 2, 1])
            kt = R.reshape(c, R.shape([1, 2, 8, s]))
            qs = R.multiply(q, R.const(0.5, "{dtype}"))
            ks = R.multiply(kt, R.const(0.75, "{dtype}"))
            sc = R.matmul(qs, ks, out_dtype="void")
            lg = {add}
            p = R.nn.softmax(lg, axis={axis})
{tail}
            R.output(o)
        return o
"#
    )
}

const GUARD: &str = r#"            n = R.isnan(p)
            z = R.where(n, R.const(0.0, "float32"), p)
            o = R.matmul(z, q, out_dtype="void")"#;
const NO_GUARD: &str = r#"            o = R.matmul(p, q, out_dtype="void")"#;

fn values(shape: &[i64], seed: f32) -> Value {
    let n = shape.iter().product::<i64>();
    let v: Vec<f32> = (0..n)
        .map(|i| ((i as f32 + 1.0) * seed).sin() * 2.0)
        .collect();
    Value::Tensor(Tensor::from_vec(shape, v).unwrap())
}

fn check_numbers(text: &str, mask: impl Fn(i64) -> Vec<i64>) {
    let module = parse(text);
    for s in [5, 19] {
        let args = [values(&[1, s, 16], 0.37), values(&mask(s), 0.11)];
        let run = |target: &Target| run_main_f32(&build(&module, target).unwrap(), &args);
        let (want, got) = (run(&Target::interpreter()), run(&Target::host()));
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() < 1e-5, "s = {s}: {g} against {w}");
        }
    }
}

#[test]
fn the_exported_attention_becomes_one_call_with_the_product_of_the_scales() {
    let text = exported(
        "float32",
        3,
        r#"(1, 1, "s", "s")"#,
        "R.add(sc, mask)",
        GUARD,
    );
    let out = RewriteAttention.run(parse(&text)).unwrap();
    let printed = out.to_string();
    assert!(
        printed.contains("R.nn.attention_bias(") && printed.contains("scale=0.375"),
        "{printed}"
    );
    for gone in ["R.nn.softmax", "R.isnan", "R.matmul"] {
        assert!(!printed.contains(gone), "{gone} is left:\n{printed}");
    }
    check_numbers(&text, |s| vec![1, 1, s, s]);
}

#[test]
fn a_bias_of_lower_rank_added_first_and_no_guard() {
    let text = exported("float32", -1, r#"("s", "s")"#, "R.add(mask, sc)", NO_GUARD);
    let printed = RewriteAttention.run(parse(&text)).unwrap().to_string();
    assert!(
        printed.contains("R.expand_dims(mask, axis=[0, 1])")
            && printed.contains("R.nn.attention_bias("),
        "{printed}"
    );
    check_numbers(&text, |s| vec![s, s]);
}

#[test]
fn what_does_not_fit_is_left_alone() {
    // A softmax over another axis; float64, which the tiled kernel does
    // not take.
    for text in [
        exported(
            "float32",
            2,
            r#"(1, 1, "s", "s")"#,
            "R.add(sc, mask)",
            NO_GUARD,
        ),
        exported(
            "float64",
            3,
            r#"(1, 1, "s", "s")"#,
            "R.add(sc, mask)",
            NO_GUARD,
        )
        .replace("\"float32\"", "\"float64\""),
    ] {
        let before = parse(&text);
        let after = RewriteAttention.run(before.clone()).unwrap();
        crate::ir::structural_equal_report(&after, &before).unwrap();
    }
}
