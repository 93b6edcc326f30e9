//! Before/expected cases written from TVM's
//! `tests/python/relax/test_transform_decompose_ops.py`, and a check that
//! the decomposition computes what the op computes at inference.

use super::*;
use crate::transform::test_util::{assert_pass, parse};

/// `main` (and `main1`, a copy) normalizing a (1, 64, 112, 112) batch.
fn before(functions: &[&str], attrs: &str) -> IRModule {
    let mut text = "@I.ir_module\nclass Module:\n".to_string();
    for name in functions {
        text += &format!(
            r#"
    @R.function
    def {name}(x: R.Tensor((1, 64, 112, 112), "float32"), gamma: R.Tensor((64,), "float32"), beta: R.Tensor((64,), "float32"), moving_mean: R.Tensor((64,), "float32"), moving_var: R.Tensor((64,), "float32")):
        with R.dataflow():
            bn = R.nn.batch_norm(x, gamma, beta, moving_mean, moving_var, axis=1, epsilon=1e-5, {attrs})
            gv = bn[0]
            R.output(gv)
        return gv
"#
        );
    }
    parse(&text)
}

/// TVM's expected inference form of [`before`]'s function `name`.
fn decomposed(name: &str) -> String {
    format!(
        r#"
    @R.function
    def {name}(x: R.Tensor((1, 64, 112, 112), dtype="float32"), gamma: R.Tensor((64,), dtype="float32"), beta: R.Tensor((64,), dtype="float32"), moving_mean: R.Tensor((64,), dtype="float32"), moving_var: R.Tensor((64,), dtype="float32")) -> R.Tensor((1, 64, 112, 112), dtype="float32"):
        with R.dataflow():
            lv: R.Tensor((1, 64, 1, 1), dtype="float32") = R.expand_dims(moving_mean, axis=[0, 2, 3])
            lv1: R.Tensor((1, 64, 112, 112), dtype="float32") = R.subtract(x, lv)
            lv2: R.Tensor((1, 64, 1, 1), dtype="float32") = R.expand_dims(moving_var, axis=[0, 2, 3])
            lv3: R.Tensor((1, 64, 1, 1), dtype="float32") = R.add(lv2, R.const(9.9999997473787516e-06, "float32"))
            lv4: R.Tensor((1, 64, 1, 1), dtype="float32") = R.sqrt(lv3)
            lv5: R.Tensor((1, 64, 112, 112), dtype="float32") = R.divide(lv1, lv4)
            lv6: R.Tensor((1, 64, 1, 1), dtype="float32") = R.expand_dims(gamma, axis=[0, 2, 3])
            lv7: R.Tensor((1, 64, 112, 112), dtype="float32") = R.multiply(lv5, lv6)
            lv8: R.Tensor((1, 64, 1, 1), dtype="float32") = R.expand_dims(beta, axis=[0, 2, 3])
            lv9: R.Tensor((1, 64, 112, 112), dtype="float32") = R.add(lv7, lv8)
            bn: R.Tuple(R.Tensor((1, 64, 112, 112), dtype="float32"), R.Tensor((64,), dtype="float32"), R.Tensor((64,), dtype="float32")) = (lv9, moving_mean, moving_var)
            gv: R.Tensor((1, 64, 112, 112), dtype="float32") = bn[0]
            R.output(gv)
        return gv
"#
    )
}

#[test]
fn batch_norm_inference() {
    let expected = parse(&format!(
        "@I.ir_module\nclass Module:\n{}",
        decomposed("main")
    ));
    assert_pass(
        &DecomposeOpsForInference::function("main"),
        before(&["main"], "center=True, scale=True"),
        expected,
    );
}

#[test]
fn batch_norm_in_every_function_and_only_the_named_one() {
    let both = before(&["main", "main1"], "center=True, scale=True");
    let expected = parse(&format!(
        "@I.ir_module\nclass Module:\n{}{}",
        decomposed("main"),
        decomposed("main1")
    ));
    assert_pass(&DecomposeOpsForInference::default(), both.clone(), expected);
    // Named: `main1` keeps its batch_norm.
    let got = DecomposeOpsForInference::function("main")
        .run(both)
        .unwrap()
        .to_string();
    assert_eq!(got.matches("R.nn.batch_norm").count(), 1, "{got}");
}

#[test]
fn batch_norm_without_scale_or_center_and_in_training_mode() {
    // `scale=False, center=False`: no multiply, no add. The training flag
    // does not matter: the pass is for inference.
    let got = DecomposeOpsForInference::default()
        .run(before(
            &["main"],
            "center=False, scale=False, training=True",
        ))
        .unwrap()
        .to_string();
    assert!(!got.contains("R.nn.batch_norm"), "{got}");
    assert!(
        !got.contains("R.multiply") && got.matches("R.add").count() == 1,
        "{got}"
    );
    assert_eq!(got.matches("R.expand_dims").count(), 2, "{got}");
}

#[test]
fn a_batch_norm_of_unknown_rank_is_left_alone() {
    let m = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(dtype="float32"), p: R.Tensor((4,), dtype="float32")):
        bn = R.nn.batch_norm(x, p, p, p, p, axis=1)
        return bn
"#,
    );
    assert_pass(&DecomposeOpsForInference::default(), m.clone(), m);
}

/// The decomposed module computes what `batch_norm(…, training=False)`
/// computes, on the interpreter, for a symbolic batch and a negative axis.
#[test]
fn the_decomposition_computes_the_inference_batch_norm() {
    use crate::backend::{build, Target};
    use relax_runtime::{Value, VirtualMachine};
    let m = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 3, 2), dtype="float64"), g: R.Tensor((2,), dtype="float64"), b: R.Tensor((2,), dtype="float64"), mm: R.Tensor((2,), dtype="float64"), mv: R.Tensor((2,), dtype="float64")):
        n = T.int64()
        with R.dataflow():
            bn = R.nn.batch_norm(x, g, b, mm, mv, axis=-1, epsilon=0.5, training=False)
            gv = bn[0]
            R.output(gv)
        return gv
"#,
    );
    let decomposed = DecomposeOpsForInference::default().run(m.clone()).unwrap();
    assert!(!decomposed.to_string().contains("batch_norm"));
    let t = |shape: &[i64], data: Vec<f64>| Value::Tensor(Tensor::from_vec(shape, data).unwrap());
    let args = [
        t(&[2, 3, 2], (0..12).map(|i| i as f64 * 0.5 - 2.0).collect()),
        t(&[2], vec![2.0, -1.0]),
        t(&[2], vec![0.5, 3.0]),
        t(&[2], vec![0.25, -1.0]),
        t(&[2], vec![1.5, 0.75]),
    ];
    let run = |m: &IRModule| {
        let exec = build(m, &Target::interpreter()).unwrap();
        let out = VirtualMachine::new(&exec).call("main", &args).unwrap();
        out.as_tensor().unwrap().to_vec::<f64>().unwrap()
    };
    let (want, got) = (run(&m), run(&decomposed));
    for (g, w) in got.iter().zip(&want) {
        assert!(
            (g - w).abs() <= 1e-12 * w.abs().max(1.0),
            "{got:?} vs {want:?}"
        );
    }
}
