//! PrepackWeights: the rewrite of a PrimFunc whose weight every call passes
//! as a constant (before/expected), the panels' values, the functions it
//! leaves alone, and the packed build against the oracle.

use super::*;
use crate::backend::{build, Target};
use crate::ir::structural_equal::assert_structural_equal;
use crate::transform::test_util::{assert_close, parse, run_main_f32};
use crate::transform::BindParams;
use relax_runtime::Value;

/// `main(x, w) = matmul(x, w)` through one `call_tir`, `w` of `(k, n)`.
fn before(k: i64, n: i64) -> String {
    format!(
        r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def matmul(x: T.Buffer((8, {k}), "float32"), w: T.Buffer(({k}, {n}), "float32"), y: T.Buffer((8, {n}), "float32")):
        for i, j, k in T.grid(8, {n}, {k}):
            with T.sblock("matmul"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(x[vi, vk], w[vk, vj])
                T.writes(y[vi, vj])
                with T.init():
                    y[vi, vj] = T.float32(0)
                y[vi, vj] = y[vi, vj] + x[vi, vk] * w[vk, vj]

    @R.function
    def main(x: R.Tensor((8, {k}), "float32"), w: R.Tensor(({k}, {n}), "float32")) -> R.Tensor((8, {n}), "float32"):
        cls = Module
        with R.dataflow():
            y = R.call_tir(cls.matmul, (x, w), out_sinfo=R.Tensor((8, {n}), "float32"))
            R.output(y)
        return y
"#
    )
}

/// `k × n` weights `w[r, c] = r · 1000 + c`.
fn weights(k: i64, n: i64) -> Tensor {
    let data = (0..k * n)
        .map(|v| ((v / n) * 1000 + v % n) as f32)
        .collect();
    Tensor::from_vec(&[k, n], data).unwrap()
}

fn bound(text: &str, w: Tensor) -> IRModule {
    BindParams::new("main", [("w".to_string(), w)])
        .run(parse(text))
        .unwrap()
}

/// The constant arguments of `main`'s calls.
fn constants(m: &IRModule) -> Vec<Tensor> {
    struct Found(Vec<Tensor>);
    impl ExprVisitor for Found {
        fn visit_constant(&mut self, _expr: &Expr, data: &Tensor) {
            self.0.push(data.clone());
        }
    }
    let mut found = Found(vec![]);
    found.visit_expr(&m.get("main").unwrap().as_relax().unwrap().body);
    found.0
}

#[test]
fn a_constant_weight_of_a_matrix_product_is_stored_in_panels() {
    let m = PrepackWeights
        .run(bound(&before(16, 40), weights(16, 40)))
        .unwrap();
    crate::analysis::well_formed(&m).unwrap_or_else(|e| panic!("{e:?}\n{m}"));
    let expected: IRModule = r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def matmul(x: T.Buffer((8, 16), "float32"), w_panels: T.Buffer((2, 16, 32), "float32"), y: T.Buffer((8, 40), "float32")):
        for i, j, k in T.grid(8, 40, 16):
            with T.sblock("matmul"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(x[vi, vk], w_panels[0:2, 0:16, 0:32])
                T.writes(y[vi, vj])
                with T.init():
                    y[vi, vj] = T.float32(0)
                y[vi, vj] = y[vi, vj] + x[vi, vk] * w_panels[vj // 32, vk, vj % 32]
"#
    .parse()
    .unwrap();
    assert_structural_equal(
        m.get("matmul").unwrap().as_prim().unwrap(),
        expected.get("matmul").unwrap().as_prim().unwrap(),
    );
    // The call passes the panels: column `c` of row `r` at
    // `[c / 32, r, c % 32]`, zero past the 40 columns.
    let panels = constants(&m);
    assert_eq!(panels.len(), 1);
    assert_eq!(panels[0].shape(), &[2, 16, 32]);
    let p = panels[0].to_vec::<f32>().unwrap();
    for t in 0..2 {
        for r in 0..16 {
            for l in 0..32 {
                let c = t * 32 + l;
                let want = if c < 40 { (r * 1000 + c) as f32 } else { 0.0 };
                assert_eq!(
                    p[(t * 16 + r) * 32 + l],
                    want,
                    "panel {t}, row {r}, lane {l}"
                );
            }
        }
    }
}

#[test]
fn weights_that_are_not_always_constant_or_too_narrow_stay() {
    // A parameter, not a constant.
    let m: IRModule = before(16, 40).parse().unwrap();
    let out = PrepackWeights.run(m.clone()).unwrap();
    assert_structural_equal(&out, &m);
    // No more columns than half a panel.
    let m = bound(&before(16, 16), weights(16, 16));
    assert_structural_equal(&PrepackWeights.run(m.clone()).unwrap(), &m);
    // One call passes a constant, another a variable.
    let text = before(16, 40)
        .replace(
            "w: R.Tensor((16, 40), \"float32\")) ->",
            "w: R.Tensor((16, 40), \"float32\"), v: R.Tensor((16, 40), \"float32\")) ->",
        )
        .replace(
            "            R.output(y)",
            "            z = R.call_tir(cls.matmul, (x, v), out_sinfo=R.Tensor((8, 40), \"float32\"))\n            R.output(y)",
        );
    let m = bound(&text, weights(16, 40));
    assert_structural_equal(&PrepackWeights.run(m.clone()).unwrap(), &m);
}

/// The host build (the packed GEMM reading the panels, from one row up)
/// gives the oracle's numbers: rows from 1 to 50 of a symbolic batch, a
/// partial last panel, a bias and relu fused as the epilogue.
/// A `k × n` weight of values in `[-1, 1]`.
fn weight(k: usize, n: usize) -> Tensor {
    let w: Vec<f32> = (0..k * n)
        .map(|v| ((v * 37 % 101) as f32 - 50.0) / 50.0)
        .collect();
    Tensor::from_vec(&[k as i64, n as i64], w).unwrap()
}

/// `rows` rows of `k` inputs of values in `[-2, 2]`.
fn input(rows: usize, k: usize) -> Tensor {
    let x: Vec<f32> = (0..rows * k)
        .map(|v| ((v * 13 % 29) as f32 - 14.0) / 7.0)
        .collect();
    Tensor::from_vec(&[rows as i64, k as i64], x).unwrap()
}

/// `main(x, w, b) = relu(x · w + b)`, `x` of `(rows, k)` (`rows` a
/// constant or a quoted symbolic dim), `w` of `(k, n)`.
fn dense_relu(rows: &str, k: usize, n: usize) -> String {
    let symbolic = rows.starts_with('"');
    let declare = if symbolic {
        format!("        {} = T.int64()\n", rows.trim_matches('"'))
    } else {
        String::new()
    };
    format!(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(({rows}, {k}), dtype="float32"), w: R.Tensor(({k}, {n}), dtype="float32"), b: R.Tensor(({n},), dtype="float32")):
{declare}        with R.dataflow():
            y = R.matmul(x, w)
            a = R.add(y, b)
            z = R.nn.relu(a)
            R.output(z)
        return z
"#
    )
}

#[test]
fn the_packed_build_agrees_with_the_oracle() {
    let text = dense_relu("\"n\"", 20, 72);
    let m = bound(&text, weight(20, 72));
    let lowered = crate::backend::host_pipeline_unscheduled()
        .run(m.clone())
        .unwrap();
    assert!(constants(&lowered).iter().any(|t| t.shape() == [3, 20, 32]));
    // The scheduled kernel reads the panels and packs nothing.
    let scheduled = crate::backend::pipeline(&Target::host())
        .run(m.clone())
        .unwrap();
    let text = scheduled.to_string();
    assert!(
        text.contains("_panels[") && !text.contains("B_pack"),
        "{text}"
    );
    let host = build(&m, &Target::host()).unwrap();
    let oracle = build(&m, &Target::interpreter()).unwrap();
    for rows in [1, 5, 6, 7, 50] {
        let b: Vec<f32> = (0..72).map(|v| (v % 5) as f32 - 2.0).collect();
        let args: Vec<Value> = vec![
            input(rows, 20).into(),
            Tensor::from_vec(&[72], b).unwrap().into(),
        ];
        let (got, want) = (run_main_f32(&host, &args), run_main_f32(&oracle, &args));
        assert_close(&got, &want, &format!("{rows} rows"));
    }
}

/// With few rows (under two register tiles per parallel chunk: a
/// classifier at batch 1, a 7 × 7 image's pointwise convolution), the
/// packed GEMM on panels runs one row chunk and cuts its columns into
/// parts (`parts`), so every thread gets work and reads its own share of
/// the panels; up to four rows, its register tiles have four rows. One
/// row runs as a GEMV, each task reading two whole panels. The results
/// agree with the oracle at 1 row (the GEMV, 66 panels), 3 rows (four-row
/// tiles) and 40,
/// over 66 column tiles that the parts cut unevenly, and at 200 rows,
/// where the row chunks run in parallel instead.
#[test]
fn a_batch_of_one_shares_the_columns_between_threads() {
    let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 512), dtype="float32"), w: R.Tensor((512, 2100), dtype="float32")):
        n = T.int64()
        with R.dataflow():
            y = R.matmul(x, w)
            R.output(y)
        return y
"#;
    let m = bound(text, weight(512, 2100));
    let scheduled = crate::backend::pipeline(&Target::host())
        .run(m.clone())
        .unwrap()
        .to_string();
    assert!(
        scheduled.contains("_panels[") && scheduled.contains("parts"),
        "{scheduled}"
    );
    // One row: a GEMV over pairs of panels (`gemm/gemv.rs`); up to four
    // rows: register tiles of four rows (`GEMM_SMALL_MR`).
    assert!(scheduled.contains("if n == 1:"), "{scheduled}");
    assert!(
        scheduled.contains("acc = T.alloc_buffer((2, 32))")
            && scheduled.contains("_panels[T.min(p * 2 + r"),
        "{scheduled}"
    );
    assert!(scheduled.contains("if n <= 4:"), "{scheduled}");
    assert!(scheduled.contains("= T.alloc_buffer((4, "), "{scheduled}");
    let host = build(&m, &Target::host()).unwrap();
    let oracle = build(&m, &Target::interpreter()).unwrap();
    for rows in [1, 3, 40, 200] {
        let args: Vec<Value> = vec![input(rows, 512).into()];
        let (got, want) = (run_main_f32(&host, &args), run_main_f32(&oracle, &args));
        assert_eq!(got.len(), want.len());
        let scale = want.iter().fold(1f32, |m, v| m.max(v.abs()));
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(
                (g - w).abs() <= 1e-5 * scale,
                "{rows} rows, element {k}: {g} vs {w}"
            );
        }
    }
}

/// A product of one row known at build time runs as a GEMV alone, with
/// no run-time choice. It agrees with the oracle, with its epilogue, for an even
/// number of panels whose last pair crosses `N` (100 columns: 4 panels)
/// and an odd one, whose last task reads its one panel twice (72: 3).
#[test]
fn a_product_of_one_row_reads_pairs_of_panels() {
    for cols in [100, 72] {
        let text = dense_relu("1", 300, cols);
        let m = bound(&text, weight(300, cols));
        let scheduled = crate::backend::pipeline(&Target::host())
            .run(m.clone())
            .unwrap()
            .to_string();
        assert!(
            scheduled.contains("acc = T.alloc_buffer((2, 32))")
                && !scheduled.contains("if n == 1")
                && !scheduled.contains("T.alloc_buffer((4, "),
            "{scheduled}"
        );
        let host = build(&m, &Target::host()).unwrap();
        let oracle = build(&m, &Target::interpreter()).unwrap();
        let b: Vec<f32> = (0..cols).map(|v| (v % 5) as f32 - 2.0).collect();
        let args: Vec<Value> = vec![
            input(1, 300).into(),
            Tensor::from_vec(&[cols as i64], b).unwrap().into(),
        ];
        let (got, want) = (run_main_f32(&host, &args), run_main_f32(&oracle, &args));
        assert_close(&got, &want, &format!("{cols} columns"));
    }
}
