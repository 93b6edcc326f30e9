//! The MLP of the MLC course's chapter 7, as Relax IR.
//!
//! Today this example parses the model from TVMScript text, checks that it is
//! well formed, prints it back, shows what the StructInfo machinery knows
//! about it (its signature with a symbolic batch dimension `n`), and shows a
//! shape mistake being reported with its location. Then it builds the model
//! for the reference interpreter, runs it on a batch, and compares the
//! prediction with ndarray's. The issues
//! after the IR foundation extend it through legalization, fusion, LLVM code
//! generation and a run on real data.

use ndarray::{Array1, Array2};
use relax::ir::IRModule;
use relax::{build, Target, Tensor, Value, VirtualMachine};
use std::time::Instant;

/// The seed's MLP with the weights as parameters and a symbolic batch size.
const MLP: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 784), dtype="float32"), w0: R.Tensor((128, 784), dtype="float32"), b0: R.Tensor((128,), dtype="float32"), w1: R.Tensor((10, 128), dtype="float32"), b1: R.Tensor((10,), dtype="float32")) -> R.Tensor(("n", 10), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            lv0: R.Tensor((784, 128), dtype="float32") = R.permute_dims(w0, axes=None)
            lv1: R.Tensor((n, 128), dtype="float32") = R.matmul(x, lv0, out_dtype="void")
            lv2: R.Tensor((n, 128), dtype="float32") = R.add(lv1, b0)
            lv3: R.Tensor((n, 128), dtype="float32") = R.nn.relu(lv2)
            lv4: R.Tensor((128, 10), dtype="float32") = R.permute_dims(w1, axes=None)
            lv5: R.Tensor((n, 10), dtype="float32") = R.matmul(lv3, lv4, out_dtype="void")
            gv: R.Tensor((n, 10), dtype="float32") = R.add(lv5, b1)
            R.output(gv)
        return gv
"#;

fn main() -> Result<(), relax::Error> {
    let module: IRModule = MLP.parse()?;
    relax::analysis::well_formed(&module)?;
    println!("{module}");
    let main = module.get_relax("main").expect("the module defines main");
    println!("main: {}", main.struct_info());

    // Run it on the reference interpreter with a symbolic batch of 3.
    let exec = build(&module, &Target::interpreter())?;
    let vm = VirtualMachine::new(&exec);
    let (x, w0, b0, w1, b1) = (
        pseudo_random((3, 784), 1),
        pseudo_random((128, 784), 2),
        pseudo_random((128, 1), 3).column(0).to_owned(),
        pseudo_random((10, 128), 4),
        pseudo_random((10, 1), 5).column(0).to_owned(),
    );
    let args: Vec<Value> = vec![
        Tensor::from(&x).into(),
        Tensor::from(&w0).into(),
        Tensor::from(&b0).into(),
        Tensor::from(&w1).into(),
        Tensor::from(&b1).into(),
    ];
    let start = Instant::now();
    let out = vm.call("main", &args)?;
    let vm_time = start.elapsed();
    let logits = out
        .as_tensor()
        .expect("main returns a tensor")
        .to_ndarray::<f32>()?;
    let start = Instant::now();
    let expected = reference(&x, &w0, &b0, &w1, &b1);
    let nd_time = start.elapsed();
    let max_diff = logits
        .iter()
        .zip(expected.iter())
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    let argmax = |row: ndarray::ArrayView1<f32>| {
        row.iter()
            .enumerate()
            .fold(
                (0, f32::MIN),
                |best, (i, &v)| if v > best.1 { (i, v) } else { best },
            )
            .0
    };
    let predicted: Vec<usize> = logits.rows().into_iter().map(argmax).collect();
    println!("\nInterpreter: predicted classes {predicted:?} for a batch of 3");
    println!("max |interpreter - ndarray| = {max_diff:e}");
    println!("latency: interpreter {vm_time:?}, ndarray {nd_time:?} (reference kernels, not compiled code)");

    // The same model with the first weight transposed by mistake: the
    // symbolic shape check finds it before anything runs.
    let wrong = MLP.replace("w0: R.Tensor((128, 784)", "w0: R.Tensor((784, 128)");
    match relax::parser::parse_module(&wrong) {
        Ok(_) => println!("\nthe wrong model was accepted (unexpected)"),
        Err(diagnostics) => {
            println!("\nWith w0 transposed by mistake:");
            for d in diagnostics {
                println!("{}", d.render("mlp.py", &wrong));
            }
        }
    }
    Ok(())
}

/// A deterministic pseudo-random matrix in [-0.1, 0.1).
fn pseudo_random(shape: (usize, usize), seed: u64) -> Array2<f32> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    Array2::from_shape_fn(shape, |_| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % 2000) as f32 / 10000.0 - 0.1
    })
}

/// The MLP on ndarray.
fn reference(
    x: &Array2<f32>,
    w0: &Array2<f32>,
    b0: &Array1<f32>,
    w1: &Array2<f32>,
    b1: &Array1<f32>,
) -> Array2<f32> {
    let h = (x.dot(&w0.t()) + b0).mapv(|v| v.max(0.0));
    h.dot(&w1.t()) + b1
}
