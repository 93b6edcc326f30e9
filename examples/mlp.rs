//! The MLP of the MLC course's chapter 7, as Relax IR.
//!
//! Today this example parses the model from TVMScript text, checks that it is
//! well formed, prints it back, shows what the StructInfo machinery knows
//! about it (its signature with a symbolic batch dimension `n`), and shows a
//! shape mistake being reported with its location. The issues
//! after the IR foundation extend it through legalization, fusion, LLVM code
//! generation and a run on real data.

use relax::ir::IRModule;

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
