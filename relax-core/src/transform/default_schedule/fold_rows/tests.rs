//! The batch axes of a matrix product with a shared weight fold into its
//! rows: the scheduled loops, and the host build against the oracle.

use crate::backend::{build, Target};
use crate::transform::test_util::{assert_close, parse, run_main_f32};
use crate::transform::{BindParams, Pass};
use relax_runtime::{Tensor, Value};

/// `(n, 7, 7, 20) × (20, cols)`, a pointwise convolution in NHWC as a
/// matmul, the weight a constant when `bound`.
fn module(cols: i64, bound: bool) -> crate::ir::IRModule {
    let m = parse(&format!(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 7, 7, 20), dtype="float32"), w: R.Tensor((20, {cols}), dtype="float32")):
        n = T.int64()
        with R.dataflow():
            y = R.matmul(x, w)
            z = R.nn.relu(y)
            R.output(z)
        return z
"#
    ));
    if !bound {
        return m;
    }
    BindParams::new("main", [("w".to_string(), weight(cols))])
        .run(m)
        .unwrap()
}

fn weight(cols: i64) -> Tensor {
    let data = (0..20 * cols)
        .map(|v| ((v * 37 % 101) as f32 - 50.0) / 50.0)
        .collect();
    Tensor::from_vec(&[20, cols], data).unwrap()
}

/// One product of `n · 49` rows: the register tile's rows are split back
/// into (image, row, column) only where A and C are addressed, and the
/// scheduled kernel has no loop over the 7 rows of an image.
#[test]
fn a_shared_weight_makes_one_product_of_the_batch() {
    let scheduled = crate::backend::pipeline(&Target::host())
        .run(module(64, true))
        .unwrap()
        .to_string();
    assert!(scheduled.contains("_panels["), "{scheduled}");
    assert!(scheduled.contains("// 49"), "{scheduled}");
    assert!(!scheduled.contains("T.parallel(n * 7)"), "{scheduled}");
}

/// The host build gives the oracle's numbers for 1 and 3 images, with a
/// weight prepacked (64 and 24 columns: a tile more than half full) and
/// one packed per call (a parameter).
#[test]
fn folded_products_agree_with_the_oracle() {
    for (cols, bound) in [(64, true), (24, true), (24, false)] {
        let m = module(cols, bound);
        let host = build(&m, &Target::host()).unwrap();
        let oracle = build(&m, &Target::interpreter()).unwrap();
        for n in [1, 3] {
            let x: Vec<f32> = (0..n * 49 * 20)
                .map(|v| ((v * 13 % 29) as f32 - 14.0) / 7.0)
                .collect();
            let mut args: Vec<Value> = vec![Tensor::from_vec(&[n, 7, 7, 20], x).unwrap().into()];
            if !bound {
                args.push(weight(cols).into());
            }
            let (got, want) = (run_main_f32(&host, &args), run_main_f32(&oracle, &args));
            assert_close(&got, &want, &format!("{cols} columns, {n} images"));
        }
    }
}
