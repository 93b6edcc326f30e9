//! Training the digits MLP with `Gradient` and plain SGD.
//!
//! 1. The loss is written in the DSL: the main example's MLP, then the
//!    cross-entropy of its logits against one-hot labels, averaged over a
//!    batch of symbolic size `n`.
//! 2. `Gradient::new("loss")` adds `loss_adjoint`, which returns the loss
//!    and its gradient with respect to the four weights (TVM's
//!    `relax.transform.Gradient`); the example prints it.
//! 3. The module is built once through LLVM. Each step calls
//!    `loss_adjoint` on a batch of 32 training images and updates each
//!    weight by `w -= lr * dw`.
//! 4. It prints the mean training loss of every epoch and the accuracy on
//!    the held-out images (which training never sees).
//!
//! The training split is `examples/data/x_train.u8` (written once by
//! `scripts/digits_train_set.py`); the held-out images are the main
//! example's.
//!
//! Run: `cargo run --release --example train_digits [-- --epochs N]`

use relax::ndarray::{Array2, ArrayD, Axis, IxDyn};
use relax::transform::{Gradient, Pass};
use relax::{build, Target, Tensor, Value, VirtualMachine};
use std::error::Error;
use std::path::Path;
use std::time::Instant;

relax::module! {
    /// The MLP's loss and its predictions.
    pub mod digits {
        /// Mean cross-entropy of the MLP's logits on a batch; `y` one-hot.
        #[function]
        pub fn loss(
            x: Tensor![(n, 64), f32],
            y: Tensor![(n, 10), f32],
            w0: Tensor![(128, 64), f32],
            b0: Tensor![(128,), f32],
            w1: Tensor![(10, 128), f32],
            b1: Tensor![(10,), f32],
        ) -> Tensor![(), f32] {
            R::dataflow! {
                let lv0 = R::matmul(x, R::permute_dims(w0));
                let lv1 = R::add(lv0, b0);
                let lv2 = R::nn::relu(lv1);
                let lv3 = R::matmul(lv2, R::permute_dims(w1));
                let logits = R::add(lv3, b1);
                let log_probs = R::nn::log_softmax(logits);
                let picked = R::multiply(log_probs, y);
                let per_image = R::sum(picked, axis = [1]);
                let mean = R::mean(per_image);
                let gv = R::negative(mean);
                R::output(gv);
            }
            gv
        }

        /// The MLP's logits.
        #[function]
        pub fn predict(
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

fn data(name: &str) -> Result<Vec<u8>, Box<dyn Error>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/data")
        .join(name);
    Ok(std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?)
}

/// A small deterministic generator (xorshift) for the initial weights and
/// the shuffles.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn uniform(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
    /// A standard normal sample (Box-Muller).
    fn normal(&mut self) -> f32 {
        let (u, v) = (self.uniform().max(1e-7), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f32::consts::PI * v).cos()
    }
    fn shuffle(&mut self, xs: &mut [usize]) {
        for i in (1..xs.len()).rev() {
            xs.swap(i, (self.next() % (i as u64 + 1)) as usize);
        }
    }
}

/// He-initialized weight of `shape` (fan-in `shape[1]`), or zeros for a bias.
fn init(rng: &mut Rng, shape: &[usize]) -> ArrayD<f32> {
    if shape.len() == 1 {
        return ArrayD::zeros(IxDyn(shape));
    }
    let scale = (2.0 / shape[1] as f32).sqrt();
    ArrayD::from_shape_fn(IxDyn(shape), |_| rng.normal() * scale)
}

fn tensor(a: &ArrayD<f32>) -> Value {
    Tensor::from_ndarray(a).into()
}

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().collect();
    let epochs: usize = match args.iter().position(|a| a == "--epochs") {
        Some(i) => args.get(i + 1).ok_or("--epochs needs a number")?.parse()?,
        None => 30,
    };
    let (batch, lr) = (32usize, 0.1f32);

    // The loss and its adjoint.
    let module = Gradient::new("loss")
        .require_grads(["w0", "b0", "w1", "b1"])
        .run(digits::module().clone())?;
    let adjoint = module.get_relax("loss_adjoint").ok_or("no loss_adjoint")?;
    println!(
        "{}",
        relax::printer::function_to_string("loss_adjoint", adjoint)
    );
    let start = Instant::now();
    let vm = VirtualMachine::new(&build(&module, &Target::host())?);
    println!("built through LLVM in {:.2?}\n", start.elapsed());

    // The data.
    let pixels = data("x_train.u8")?;
    let labels = data("y_train.u8")?;
    let n_train = labels.len();
    let x_train = Array2::from_shape_vec((n_train, 64), pixels)?.mapv(|p| f32::from(p) / 16.0);
    let mut y_train = Array2::<f32>::zeros((n_train, 10));
    for (i, &l) in labels.iter().enumerate() {
        y_train[[i, usize::from(l)]] = 1.0;
    }
    let test_pixels: Vec<f32> = data("x_test.bin")?
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let test_labels: Vec<i64> = data("y_test.bin")?
        .chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    let x_test = Array2::from_shape_vec((test_labels.len(), 64), test_pixels)?;

    // The weights.
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut weights: Vec<ArrayD<f32>> = [&[128, 64][..], &[128], &[10, 128], &[10]]
        .iter()
        .map(|s| init(&mut rng, s))
        .collect();
    let accuracy = |weights: &[ArrayD<f32>]| -> Result<f64, Box<dyn Error>> {
        let mut call = vec![Tensor::from_ndarray(&x_test).into()];
        call.extend(weights.iter().map(tensor));
        let Value::Tensor(logits) = vm.call("predict", &call)? else {
            return Err("predict returns a tensor".into());
        };
        let logits = logits.to_ndarray::<f32>()?;
        let correct = logits
            .axis_iter(Axis(0))
            .zip(&test_labels)
            .filter(|(row, &label)| {
                let best =
                    row.iter()
                        .enumerate()
                        .fold((0, f32::MIN), |b, (i, &v)| if v > b.1 { (i, v) } else { b });
                best.0 as i64 == label
            })
            .count();
        Ok(correct as f64 / test_labels.len() as f64)
    };
    println!(
        "held-out accuracy before training: {:.2}%",
        100.0 * accuracy(&weights)?
    );

    println!("{:>6} {:>12} {:>10}", "epoch", "train loss", "time");
    let mut order: Vec<usize> = (0..n_train).collect();
    for epoch in 1..=epochs {
        let start = Instant::now();
        rng.shuffle(&mut order);
        let (mut total, mut seen) = (0.0f64, 0usize);
        for idx in order.chunks(batch) {
            let xb = x_train.select(Axis(0), idx);
            let yb = y_train.select(Axis(0), idx);
            let mut call: Vec<Value> = vec![
                Tensor::from_ndarray(&xb).into(),
                Tensor::from_ndarray(&yb).into(),
            ];
            call.extend(weights.iter().map(tensor));
            let Value::Tuple(out) = vm.call("loss_adjoint", &call)? else {
                return Err("loss_adjoint returns a tuple".into());
            };
            let (Value::Tensor(loss), Value::Tuple(grads)) = (&out[0], &out[1]) else {
                return Err("loss_adjoint returns (loss, (gradients))".into());
            };
            total += f64::from(loss.to_vec::<f32>()?[0]) * idx.len() as f64;
            seen += idx.len();
            for (w, g) in weights.iter_mut().zip(grads.iter()) {
                let Value::Tensor(g) = g else {
                    return Err("a gradient is a tensor".into());
                };
                w.scaled_add(-lr, &g.to_ndarray::<f32>()?);
            }
        }
        println!(
            "{epoch:>6} {:>12.4} {:>10.2?}",
            total / seen as f64,
            start.elapsed()
        );
    }
    println!(
        "held-out accuracy after {epochs} epochs of SGD (lr {lr}, batch {batch}): {:.2}% of {} images",
        100.0 * accuracy(&weights)?,
        test_labels.len()
    );
    Ok(())
}
