//! Runs two ONNX models that build.rs compiled ahead of time: no ONNX
//! runtime, no Python, no LLVM at run time, and the shapes of every call
//! checked against the models' input types.
//!
//! 1. The digits MLP on the held-out digits of the main example: the
//!    accuracy must be onnxruntime's (97.78%, printed by
//!    `scripts/export_digits_onnx.py`).
//! 2. SqueezeNet on a 224x224 image: its output shape and latency.
//! 3. A two-layer Llama decoder exported by PyTorch (symbolic batch and
//!    sequence length): one executable gives PyTorch's logits for token ids
//!    of shape (1, 5) and (2, 12). The importer is used here only to read
//!    the test's token ids and PyTorch's logits (`.pb` tensors).
//! 4. The digits MLP imported as Rust source (`relax import … -o
//!    src/imported_mlp.rs`): a `relax::module!` whose shapes were checked
//!    when this crate compiled, and a struct that reads the weights once,
//!    `ImportedMlp::load(path)?.main(&x)`. It gives the ONNX import's logits.

include!(env!("RELAX_AOT_MODULE_digits_mlp"));
include!(env!("RELAX_AOT_MODULE_squeezenet"));
include!(env!("RELAX_AOT_MODULE_tiny_llama"));
include!("imported_mlp.rs");

use relax::ndarray::{Array2, Array3, Array4, Axis, Ix2, Ix3};
use std::path::Path;
use std::time::Instant;

fn data(name: &str) -> Result<Vec<u8>, Box<dyn std::error::Error>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../data")
        .join(name);
    Ok(std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    for (name, cache) in [
        ("digits_mlp", &digits_mlp::__RELAX_EXECUTABLE),
        ("squeezenet", &squeezenet::__RELAX_EXECUTABLE),
    ] {
        let artifact = cache.aot().ok_or("no AOT artifact")?;
        println!(
            "{name}: backend {}, CPU level {}, executable of {} bytes",
            cache.backend(),
            artifact.variant().map_or("none", |v| v.cpu),
            artifact.executable.len()
        );
    }

    let pixels: Vec<f32> = data("x_test.bin")?
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let labels: Vec<i64> = data("y_test.bin")?
        .chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    let x = Array2::from_shape_vec((labels.len(), 64), pixels)?;
    let logits = digits_mlp::main(&x)?;
    let correct = logits
        .axis_iter(Axis(0))
        .zip(&labels)
        .filter(|(row, &label)| {
            let best = row
                .iter()
                .enumerate()
                .fold((0, f32::MIN), |b, (i, &v)| if v > b.1 { (i, v) } else { b });
            best.0 as i64 == label
        })
        .count();
    let accuracy = correct as f64 / labels.len() as f64;

    // The same model as Rust source, its weights read from a file once.
    let imported =
        ImportedMlp::load(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/imported_mlp.weights"))?;
    let again = imported.main(&x)?;
    let worst = again
        .iter()
        .zip(&logits)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    println!(
        "imported_mlp (Rust source, backend {}): max |diff| from the ONNX import {worst:.2e}",
        imported_mlp::__RELAX_EXECUTABLE.backend()
    );
    if worst > 1e-4 {
        return Err("the imported source's logits are not the ONNX import's".into());
    }

    println!(
        "digits_mlp: accuracy {:.2}% on {} held-out images (onnxruntime: 97.78%)",
        100.0 * accuracy,
        labels.len()
    );
    if (accuracy - 0.9778).abs() > 0.003 {
        return Err("the accuracy is not onnxruntime's".into());
    }
    // A wrong batch shape is an error naming the parameter, not a crash.
    let bad = Array2::<f32>::zeros((2, 63));
    let err = digits_mlp::main(&bad).expect_err("a (2, 63) input is rejected");
    println!("digits_mlp on a (2, 63) input: {err}");

    let image = Array4::from_shape_fn((1, 3, 224, 224), |(_, c, y, x)| {
        ((c * 7 + y * 3 + x) % 17) as f32 / 17.0 - 0.5
    });
    let start = Instant::now();
    let probs = squeezenet::main(&image)?;
    println!(
        "squeezenet: output {:?} in {:.2?} (first call), sum {:.4}",
        probs.shape(),
        start.elapsed(),
        probs.sum()
    );

    // The decoder at two shapes, from one executable.
    let case =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../relax-onnx/tests/data/models/tiny_llama");
    for set in ["test_data_set_0", "test_data_set_1"] {
        let read = |name: &str| -> Result<relax::Tensor, Box<dyn std::error::Error>> {
            let bytes = std::fs::read(case.join(set).join(name))?;
            Ok(relax::frontend::onnx::decode_tensor(&bytes)?.1)
        };
        let ids = read("input_0.pb")?
            .to_ndarray::<i64>()?
            .into_dimensionality::<Ix2>()?;
        let want: Array3<f32> = read("output_0.pb")?
            .to_ndarray::<f32>()?
            .into_dimensionality::<Ix3>()?;
        let start = Instant::now();
        let logits = tiny_llama::main(&ids)?;
        let worst = logits
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        println!(
            "tiny_llama: token ids {:?} to logits {:?} in {:.2?}, max |diff| from PyTorch {worst:.2e}",
            ids.shape(),
            logits.shape(),
            start.elapsed()
        );
        if logits.shape() != want.shape() || worst > 1e-3 {
            return Err("the decoder's logits are not PyTorch's".into());
        }
    }
    Ok(())
}
