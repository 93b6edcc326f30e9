//! The MLC course's chapter 7, end to end, on real data.
//!
//! 1. The seed's MLP is written in the DSL (`relax::module!`); its shapes
//!    were checked while `cargo build` expanded the macro.
//! 2. The module is shown before and after each step of the pipeline:
//!    LegalizeOps (every op becomes a loop-level PrimFunc called through
//!    `call_tir`), FuseOps (each dense layer's bindings become one primitive
//!    function, the seed's §7.5), FuseTIR (each primitive function one
//!    PrimFunc, §7.6–7.7) and the build.
//! 3. The model runs on the held-out digits of scikit-learn's data set
//!    (`examples/data/`, weights trained offline by
//!    `scripts/train_digits.py`), through LLVM-compiled kernels, and prints
//!    the predictions, the accuracy and the latency next to ndarray's: with
//!    the weights as parameters (transposed on every call), bound as
//!    constants (BindParams: transposed at build time), and lifted
//!    (LiftTransformParams: transposed once by `main_transform_params`).
//!
//! Run: `cargo run --release --example mlp`
//!
//! Flags (after `--`): `--time-passes` prints how long each pass of the
//! build took, `--print-after-all` prints the module after every pass (TVM's
//! `PassTimingInstrument` and `PrintAfterAll`).

use relax::ndarray::{s, Array1, Array2, Axis};
use relax::transform::{
    AnnotateTIROpPattern, BindParams, DeadCodeElimination, LegalizeOps, LiftTransformParams, Pass,
    PassContext, PassTimingInstrument, PrintAfterAll,
};
use relax::{build, build_with, Target, Tensor, Value, VirtualMachine};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

relax::module! {
    /// The seed's MLP with 64 inputs (8x8 digits) and a symbolic batch `n`.
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

/// A raw little-endian file of `examples/data/` as numbers.
fn read<T: Copy>(
    name: &str,
    decode: fn([u8; 8]) -> T,
    width: usize,
) -> Result<Vec<T>, Box<dyn std::error::Error>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/data")
        .join(name);
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(bytes
        .chunks_exact(width)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..width].copy_from_slice(c);
            decode(b)
        })
        .collect())
}

fn f32s(name: &str) -> Result<Vec<f32>, Box<dyn std::error::Error>> {
    read(name, |b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]), 4)
}

/// The median of `runs` timings of `f`.
fn median_time(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

fn reference(
    x: &Array2<f32>,
    w0: &Array2<f32>,
    b0: &Array1<f32>,
    w1: &Array2<f32>,
    b1: &Array1<f32>,
) -> Array2<f32> {
    (x.dot(&w0.t()) + b0).mapv(|v| v.max(0.0)).dot(&w1.t()) + b1
}

fn banner(title: &str) {
    println!(
        "\n==== {title} {}",
        "=".repeat(70usize.saturating_sub(title.len()))
    );
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let module = mlp::module().clone();
    banner("1. The module the macro built (shapes checked at compile time)");
    println!("{module}");

    banner("2. After LegalizeOps and AnnotateTIROpPattern");
    let legal = AnnotateTIROpPattern.run(LegalizeOps::default().run(module.clone())?)?;
    println!("{legal}");

    banner("3. After FuseOps: each group of bindings a primitive function");
    let fused = relax::backend::fuse_ops().run(legal)?;
    for (gv, f) in fused.functions() {
        if let Some(f) = f.as_relax() {
            println!(
                "{}\n",
                relax::printer::function_to_string(gv.name_hint(), f)
            );
        }
    }

    banner("4. After FuseTIR: each primitive function one PrimFunc");
    let merged = DeadCodeElimination::default().run(relax::backend::fuse_tir().run(fused)?)?;
    println!("{merged}");

    banner("5. Built for the host CPU through LLVM");
    let flags: Vec<String> = std::env::args().skip(1).collect();
    let timing = Arc::new(PassTimingInstrument::new());
    let mut ctx = PassContext::new();
    if flags.iter().any(|f| f == "--time-passes") {
        ctx = ctx.with_instrument(timing.clone());
    }
    if flags.iter().any(|f| f == "--print-after-all") {
        ctx = ctx.with_instrument(Arc::new(PrintAfterAll::new()));
    }
    let exec = build_with(&module, &Target::host(), &ctx)?;
    if !timing.timings().is_empty() {
        print!("pass timings:\n{}", timing.render());
    }
    for f in &exec.functions {
        println!(
            "VM function `{}`: {} instructions, {} registers",
            f.name,
            f.instrs.len(),
            f.num_regs
        );
    }
    println!("native kernels: {}", exec.natives.join(", "));
    let vm = VirtualMachine::new(&exec);

    banner("6. The held-out digits");
    let (w0, b0, w1, b1) = (
        Array2::from_shape_vec((128, 64), f32s("w0.bin")?)?,
        Array1::from_vec(f32s("b0.bin")?),
        Array2::from_shape_vec((10, 128), f32s("w1.bin")?)?,
        Array1::from_vec(f32s("b1.bin")?),
    );
    let pixels = f32s("x_test.bin")?;
    let labels = read("y_test.bin", i64::from_le_bytes, 8)?;
    let x = Array2::from_shape_vec((labels.len(), 64), pixels)?;

    let logits: Array2<f32> = mlp::main(&x, &w0, &b0, &w1, &b1)?;
    let predicted: Vec<usize> = logits
        .axis_iter(Axis(0))
        .map(|row| {
            row.iter()
                .enumerate()
                .fold((0, f32::MIN), |b, (i, &v)| if v > b.1 { (i, v) } else { b })
                .0
        })
        .collect();
    let correct = predicted
        .iter()
        .zip(&labels)
        .filter(|(p, l)| **p as i64 == **l)
        .count();
    println!("first 12 predictions: {:?}", &predicted[..12]);
    println!("first 12 labels:      {:?}", &labels[..12]);
    println!(
        "accuracy on {} held-out images: {:.2}% ({correct} correct)",
        labels.len(),
        100.0 * correct as f64 / labels.len() as f64
    );
    let expected = reference(&x, &w0, &b0, &w1, &b1);
    let max_diff = logits
        .iter()
        .zip(expected.iter())
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    println!("max |relax - ndarray| over all logits: {max_diff:e}");

    banner("7. Latency (median of 200 runs), same machine, same run");
    let weights: Vec<Value> = vec![
        Tensor::from(&w0).into(),
        Tensor::from(&b0).into(),
        Tensor::from(&w1).into(),
        Tensor::from(&b1).into(),
    ];
    // The seed's form (chapter 7.4): the weights bound into the module as
    // constants, so FoldConstant transposes them once, at build time.
    let names = ["w0", "w1", "b0", "b1"].map(String::from);
    let tensors = [
        Tensor::from(&w0),
        Tensor::from(&w1),
        Tensor::from(&b0),
        Tensor::from(&b1),
    ];
    let bound = BindParams::new("main", names.into_iter().zip(tensors)).run(module.clone())?;
    let bound_vm = VirtualMachine::new(&build(&bound, &Target::host())?);
    // TVM's way for weights that stay parameters: `num_input = 1` marks
    // `x` as the only run-time input, LiftTransformParams moves the weight
    // transposes into `main_transform_params`, called once; every call of
    // `main` then takes the transposed weights.
    let gv = module.global_var("main").ok_or("no main")?;
    let main = module.get_relax("main").ok_or("no main")?.clone();
    let marked = module.with_function(gv, main.with_attr("num_input", 1i64));
    let lifted = LiftTransformParams.run(marked)?;
    let lifted_vm = VirtualMachine::new(&build(&lifted, &Target::host())?);
    let transformed = lifted_vm.call(
        "main_transform_params",
        &[Value::Tuple(weights.clone().into())],
    )?;
    let Value::Tuple(transformed) = transformed else {
        return Err("main_transform_params returns a tuple".into());
    };
    println!(
        "after LiftTransformParams, main takes: {}",
        lifted
            .get_relax("main")
            .ok_or("no main")?
            .params
            .iter()
            .map(|p| p.name_hint())
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "{:>6} {:>30} {:>14} {:>12} {:>7}",
        "batch", "weights", "relax (LLVM)", "ndarray", "ratio"
    );
    for batch in [1usize, 64] {
        let xb = x.slice(s![..batch, ..]).to_owned();
        let theirs = median_time(200, || {
            std::hint::black_box(reference(&xb, &w0, &b0, &w1, &b1));
        });
        let mut args: Vec<Value> = vec![Tensor::from(&xb).into()];
        args.extend(weights.iter().cloned());
        let as_params = median_time(200, || {
            vm.call("main", &args).expect("the MLP runs");
        });
        let x_only: Vec<Value> = vec![Tensor::from(&xb).into()];
        let as_constants = median_time(200, || {
            bound_vm.call("main", &x_only).expect("the MLP runs");
        });
        let mut lifted_args = x_only.clone();
        lifted_args.extend(transformed.iter().cloned());
        let as_lifted = median_time(200, || {
            lifted_vm.call("main", &lifted_args).expect("the MLP runs");
        });
        for (how, ours) in [
            ("parameters", as_params),
            ("constants (BindParams)", as_constants),
            ("lifted (LiftTransformParams)", as_lifted),
        ] {
            println!(
                "{batch:>6} {how:>30} {:>12.1}µs {:>10.1}µs {:>6.2}x",
                ours.as_secs_f64() * 1e6,
                theirs.as_secs_f64() * 1e6,
                ours.as_secs_f64() / theirs.as_secs_f64()
            );
        }
    }
    Ok(())
}
