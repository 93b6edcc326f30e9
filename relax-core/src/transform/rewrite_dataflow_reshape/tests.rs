//! Which bindings become views, and that the host build runs them as
//! views with the same numbers.

use super::*;
use crate::backend::{build, pipeline, Target};
use crate::transform::test_util::{parse, run_main_f32};
use crate::transform::LegalizeOps;
use relax_runtime::{Tensor, Value};

const MODULE: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 8), dtype="float32")) -> R.Tensor(("n", 8), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            a = R.reshape(x, R.shape([n, 2, 4]))
            b = R.expand_dims(a, axis=[0])
            c = R.add(b, b)
            d = R.reshape(c, R.shape([n, 8]))
            R.output(d)
        return d
"#;

/// The right-hand side of each binding of `main`, printed.
fn main_values(m: &IRModule) -> Vec<String> {
    let f = m.get("main").and_then(BaseFunc::as_relax).unwrap();
    let body = f.body.as_seq().unwrap();
    body.blocks
        .iter()
        .flat_map(|b| &b.bindings)
        .map(|b| match b {
            crate::ir::Binding::VarBinding(v) => v.value.to_string(),
            crate::ir::Binding::MatchCast(m) => m.value.to_string(),
        })
        .collect()
}

#[test]
fn dataflow_reshapes_become_views_and_outputs_stay_copies() {
    let legalized = LegalizeOps::default()
        .legalized_from(true)
        .run(parse(MODULE))
        .unwrap();
    let out = RewriteDataflowReshape.run(legalized).unwrap();
    let values = main_values(&out);
    assert_eq!(values.len(), 4, "{values:?}");
    assert!(
        values[0].starts_with("R.reshape(x, R.shape([n, 2, 4]))"),
        "{values:?}"
    );
    assert!(
        values[1].starts_with("R.reshape(a, R.shape([1, n, 2, 4]))"),
        "{values:?}"
    );
    // An add is not a reshape; `d`, the block's output, stays a copy.
    assert!(values[2].starts_with("R.call_tir(cls.add"), "{values:?}");
    assert!(
        values[3].starts_with("R.call_tir(cls.reshape"),
        "{values:?}"
    );
}

#[test]
fn without_the_legalized_from_record_nothing_is_rewritten() {
    let legalized = LegalizeOps::default().run(parse(MODULE)).unwrap();
    let out = RewriteDataflowReshape.run(legalized.clone()).unwrap();
    assert_eq!(main_values(&out), main_values(&legalized));
}

#[test]
fn the_host_pipeline_runs_a_lone_reshape_as_a_view() {
    // The reshapes feed an opaque kernel (the tiled attention), so fusion
    // leaves them alone.
    let module = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(q: R.Tensor(("n", 2, 8), dtype="float32"), k: R.Tensor(("m", 2, 8), dtype="float32")) -> R.Tensor((1, "n", 2, 8), dtype="float32"):
        n = T.int64()
        m = T.int64()
        with R.dataflow():
            q1 = R.reshape(q, R.shape([1, n, 2, 8]))
            k1 = R.reshape(k, R.shape([1, m, 2, 8]))
            o = R.nn.attention(q1, k1, k1, causal_mask="BottomRight")
            R.output(o)
        return o
"#,
    );
    let lowered = pipeline(&Target::host()).run(module.clone()).unwrap();
    let values = main_values(&lowered);
    assert_eq!(
        values
            .iter()
            .filter(|v| v.starts_with("R.reshape("))
            .count(),
        2,
        "{values:?}"
    );
    let data = |rows: i64, seed: f32| {
        let v: Vec<f32> = (0..rows * 16).map(|i| (i as f32 * seed).sin()).collect();
        Value::Tensor(Tensor::from_vec(&[rows, 2, 8], v).unwrap())
    };
    let args = [data(12, 0.37), data(15, 0.71)];
    let run = |target: &Target| run_main_f32(&build(&module, target).unwrap(), &args);
    let (want, got) = (run(&Target::interpreter()), run(&Target::host()));
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() < 1e-5, "{g} against {w}");
    }
}
