//! Runs the MLP that build.rs compiled ahead of time, on a small batch, and
//! checks it against the same computation in ndarray.
//!
//! Nothing is compiled at run time: `mlp::main` loads the executable
//! embedded in the binary and calls the kernels of `libmodel.a`, linked in
//! by cargo. The program fails if the module ran on anything else. (The
//! run-time `relax` dependency is built without its "llvm" feature: the
//! binary does not even link LLVM.)

mod model;

use model::mlp;
use relax::dsl::Backend;
use relax::ndarray::{Array, Array1, Array2, Dimension, ShapeBuilder};

/// Deterministic values in [-0.5, 0.5): a linear congruential generator.
fn pseudo_random<D: Dimension>(shape: impl ShapeBuilder<Dim = D>, seed: u64) -> Array<f32, D> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    Array::from_shape_simple_fn(shape, || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    })
}

/// The MLP in ndarray: relu(x w0ᵀ + b0) w1ᵀ + b1.
fn reference(
    x: &Array2<f32>,
    w0: &Array2<f32>,
    b0: &Array1<f32>,
    w1: &Array2<f32>,
    b1: &Array1<f32>,
) -> Array2<f32> {
    let hidden = (x.dot(&w0.t()) + b0).mapv(|v| v.max(0.0));
    hidden.dot(&w1.t()) + b1
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let batch = 5;
    let x = pseudo_random((batch, 64), 1);
    let w0 = pseudo_random((128, 64), 2);
    let b0 = pseudo_random(128, 3);
    let w1 = pseudo_random((10, 128), 4);
    let b1 = pseudo_random(10, 5);

    let logits = mlp::main(&x, &w0, &b0, &w1, &b1)?;
    let want = reference(&x, &w0, &b0, &w1, &b1);
    let max_error = (&logits - &want).iter().fold(0.0f32, |m, d| m.max(d.abs()));

    let backend = mlp::__RELAX_EXECUTABLE.backend();
    println!("backend: {backend}");
    if let Some(artifact) = mlp::__RELAX_EXECUTABLE.aot() {
        println!(
            "AOT artifact used: module `{}`, {} kernels, executable of {} bytes",
            artifact.module,
            artifact.kernels.len(),
            artifact.executable.len()
        );
    }
    println!("logits of the first image: {:?}", logits.row(0).to_vec());
    println!("max |relax - ndarray| = {max_error:e}");

    if backend != Backend::Aot {
        return Err(format!("expected the AOT artifact to run the model, found {backend}").into());
    }
    if max_error > 1e-4 {
        return Err(format!("the result differs from ndarray's by {max_error}").into());
    }
    // The shapes are still checked at run time: a wrong batch width is an Err.
    let bad = pseudo_random((batch, 63), 6);
    match mlp::main(&bad, &w0, &b0, &w1, &b1) {
        Err(e) => println!("a (5, 63) input is rejected: {e}"),
        Ok(_) => return Err("a (5, 63) input was accepted".into()),
    }
    Ok(())
}
