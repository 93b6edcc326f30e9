//! The digits MLP of `examples/mlp.rs` in bfloat16, two ways, against its
//! float32 result.
//!
//! 1. Written in bfloat16 in the DSL: `Tensor![(n, 64), bf16]` parameters
//!    (the wrapper takes ndarrays of `relax::half::bf16`), both matmuls
//!    accumulating in float32 through `out_dtype = f32`, the hidden layer
//!    rounded to bfloat16 before the bias and ReLU. Mixing dtypes without a
//!    cast is a compile error (`tests/ui/shape/f16_add_f32.rs`).
//! 2. The float32 module through `ToMixedPrecision` (TVM's pass): the pass
//!    inserts the casts, the matmuls accumulate in float32.
//!
//! Both run on the held-out digits through LLVM; the example prints each
//! one's largest difference from the float32 logits (relative to the
//! logits' largest magnitude, bfloat16 keeps 8 significant bits: about
//! 2⁻⁸ per rounding) and its accuracy.
//!
//! Run: `cargo run --release --example mlp_bf16`

use relax::half::bf16;
use relax::ndarray::{Array1, Array2, Axis};
use relax::transform::{Pass, ToMixedPrecision};
use relax::{build, DataType, Target, Tensor, Value, VirtualMachine};
use std::path::Path;

relax::module! {
    /// The MLP in float32 (as in `examples/mlp.rs`).
    pub mod mlp {
        #[function]
        pub fn main(
            x: Tensor![(n, 64), f32],
            w0: Tensor![(128, 64), f32],
            b0: Tensor![(128,), f32],
            w1: Tensor![(10, 128), f32],
            b1: Tensor![(10,), f32],
        ) -> Tensor![(n, 10), f32] {
            R::dataflow! {
                let lv0 = R::matmul(x, R::permute_dims(w0));
                let lv1 = R::add(lv0, b0);
                let lv2 = R::nn::relu(lv1);
                let lv3 = R::matmul(lv2, R::permute_dims(w1));
                let gv = R::add(lv3, b1);
                R::output(gv);
            }
            gv
        }
    }
}

relax::module! {
    /// The MLP in bfloat16, accumulating in float32.
    pub mod mlp_bf16 {
        #[function]
        pub fn main(
            x: Tensor![(n, 64), bf16],
            w0: Tensor![(128, 64), bf16],
            b0: Tensor![(128,), bf16],
            w1: Tensor![(10, 128), bf16],
            b1: Tensor![(10,), bf16],
        ) -> Tensor![(n, 10), f32] {
            R::dataflow! {
                let lv0 = R::matmul(x, R::permute_dims(w0), out_dtype = f32);
                let lv1 = R::add(R::astype(lv0, dtype = bf16), b0);
                let lv2 = R::nn::relu(lv1);
                let lv3 = R::matmul(lv2, R::permute_dims(w1), out_dtype = f32);
                let gv = R::add(lv3, R::astype(b1, dtype = f32));
                R::output(gv);
            }
            gv
        }
    }
}

/// A raw little-endian float32 file of `examples/data/`.
fn f32s(name: &str) -> Result<Vec<f32>, Box<dyn std::error::Error>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/data")
        .join(name);
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// The labels of `examples/data/y_test.bin` (little-endian int64).
fn labels() -> Result<Vec<i64>, Box<dyn std::error::Error>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/y_test.bin");
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(bytes
        .chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect())
}

/// The largest |a - b|, and the largest |b|.
fn max_diff(a: &Array2<f32>, b: &Array2<f32>) -> (f32, f32) {
    let diff = a
        .iter()
        .zip(b.iter())
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max);
    (diff, b.iter().fold(0.0f32, |m, v| m.max(v.abs())))
}

/// The share of rows whose largest logit is the label's.
fn accuracy(logits: &Array2<f32>, labels: &[i64]) -> f64 {
    let correct = logits
        .axis_iter(Axis(0))
        .zip(labels)
        .filter(|(row, &l)| {
            let best = row
                .iter()
                .enumerate()
                .fold((0, f32::MIN), |b, (i, &v)| if v > b.1 { (i, v) } else { b });
            best.0 as i64 == l
        })
        .count();
    correct as f64 / labels.len() as f64
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (w0, b0, w1, b1) = (
        Array2::from_shape_vec((128, 64), f32s("w0.bin")?)?,
        Array1::from_vec(f32s("b0.bin")?),
        Array2::from_shape_vec((10, 128), f32s("w1.bin")?)?,
        Array1::from_vec(f32s("b1.bin")?),
    );
    let labels = labels()?;
    let x = Array2::from_shape_vec((labels.len(), 64), f32s("x_test.bin")?)?;

    let want: Array2<f32> = mlp::main(&x, &w0, &b0, &w1, &b1)?;
    println!(
        "float32:                    accuracy {:.2}%",
        100.0 * accuracy(&want, &labels)
    );

    // 1. Written in bfloat16.
    let h1 = |a: &Array1<f32>| a.mapv(bf16::from_f32);
    let h2 = |a: &Array2<f32>| a.mapv(bf16::from_f32);
    let got: Array2<f32> = mlp_bf16::main(&h2(&x), &h2(&w0), &h1(&b0), &h2(&w1), &h1(&b1))?;
    let (diff, scale) = max_diff(&got, &want);
    println!(
        "bfloat16 in the DSL:        accuracy {:.2}%, max |bf16 - f32| = {diff:.4} ({:.2}% of the largest logit, {scale:.2})",
        100.0 * accuracy(&got, &labels),
        100.0 * diff / scale
    );

    // 2. The float32 module through ToMixedPrecision(bfloat16).
    let mixed = ToMixedPrecision::with_dtype(DataType::bf16()).run(mlp::module().clone())?;
    println!("\nafter ToMixedPrecision(bfloat16):\n{mixed}");
    let vm = VirtualMachine::new(&build(&mixed, &Target::host())?);
    let args: Vec<Value> = vec![
        Tensor::from(&x).into(),
        Tensor::from(&w0).into(),
        Tensor::from(&b0).into(),
        Tensor::from(&w1).into(),
        Tensor::from(&b1).into(),
    ];
    let out = vm.call("main", &args)?;
    let got = out
        .as_tensor()
        .ok_or("main returns a tensor")?
        .to_ndarray::<f32>()?
        .into_dimensionality()?;
    let (diff, scale) = max_diff(&got, &want);
    println!(
        "ToMixedPrecision(bfloat16): accuracy {:.2}%, max |bf16 - f32| = {diff:.4} ({:.2}% of the largest logit, {scale:.2})",
        100.0 * accuracy(&got, &labels),
        100.0 * diff / scale
    );
    Ok(())
}
