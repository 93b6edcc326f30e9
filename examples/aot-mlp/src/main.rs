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
        let levels: Vec<&str> = artifact.variants.iter().map(|v| v.cpu).collect();
        let ran = artifact.variant().map_or("none", |v| v.cpu);
        println!(
            "AOT artifact used: module `{}`, {} kernels for each of {}, executable of {} bytes",
            artifact.module,
            artifact.variants.first().map_or(0, |v| v.kernels.len()),
            levels.join(", "),
            artifact.executable.len()
        );
        println!("CPU variant this machine runs: {ran}");
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
    if std::env::args().any(|a| a == "--bench") {
        bench::aot_against_jit(&w0, &b0, &w1, &b1)?;
    }
    Ok(())
}

/// AOT against the JIT, in one run: the same module, the AOT artifact
/// through the generated wrapper and the JIT build through a VM call that
/// does what the wrapper does (ndarray arguments in as tensors, the result
/// out as an ndarray), timed in interleaved rounds (needs `--features
/// jit`).
#[cfg(feature = "jit")]
mod bench {
    use super::{model::mlp, pseudo_random};
    use relax::ndarray::{Array1, Array2};
    use relax::{Tensor, Value};
    use std::time::Instant;

    fn per_call(reps: u32, mut f: impl FnMut()) -> f64 {
        let t = Instant::now();
        for _ in 0..reps {
            f();
        }
        t.elapsed().as_secs_f64() / f64::from(reps)
    }

    fn median(mut xs: Vec<f64>) -> f64 {
        xs.sort_by(f64::total_cmp);
        xs[xs.len() / 2]
    }

    pub fn aot_against_jit(
        w0: &Array2<f32>,
        b0: &Array1<f32>,
        w1: &Array2<f32>,
        b1: &Array1<f32>,
    ) -> Result<(), Box<dyn std::error::Error>> {
        let exec = relax::build(mlp::module(), &relax::Target::host())?;
        let jit = relax::VirtualMachine::new(&exec);
        println!("batch   aot µs   jit µs   aot/jit");
        for batch in [1usize, 64, 256] {
            let x = pseudo_random((batch, 64), 7);
            let jit_call = || {
                let args: Vec<Value> = [Tensor::from_ndarray(&x), Tensor::from_ndarray(w0)]
                    .into_iter()
                    .chain([Tensor::from_ndarray(b0), Tensor::from_ndarray(w1)])
                    .chain([Tensor::from_ndarray(b1)])
                    .map(Value::Tensor)
                    .collect();
                let out = jit.call("main", &args).expect("jit call");
                out.as_tensor()
                    .expect("a tensor")
                    .to_ndarray::<f32>()
                    .expect("f32")
            };
            let reps = if batch == 1 { 2000 } else { 200 };
            let (mut aot, mut jitted) = (Vec::new(), Vec::new());
            for _ in 0..15 {
                aot.push(per_call(reps, || {
                    std::hint::black_box(mlp::main(&x, w0, b0, w1, b1).expect("aot call"));
                }));
                jitted.push(per_call(reps, || {
                    std::hint::black_box(jit_call());
                }));
            }
            let (a, j) = (median(aot), median(jitted));
            println!(
                "{batch:>5} {:>8.1} {:>8.1} {:>9.2}",
                a * 1e6,
                j * 1e6,
                a / j
            );
        }
        Ok(())
    }
}

#[cfg(not(feature = "jit"))]
mod bench {
    pub fn aot_against_jit(
        _: &relax::ndarray::Array2<f32>,
        _: &relax::ndarray::Array1<f32>,
        _: &relax::ndarray::Array2<f32>,
        _: &relax::ndarray::Array1<f32>,
    ) -> Result<(), Box<dyn std::error::Error>> {
        Err("--bench needs the JIT: run with `--features jit`".into())
    }
}
