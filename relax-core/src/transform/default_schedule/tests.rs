use crate::backend::{pipeline, Target};
use crate::ir::IRModule;
use crate::transform::Pass;

const MLP: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 64), dtype="float32"), w0: R.Tensor((128, 64), dtype="float32"), b0: R.Tensor((128,), dtype="float32"), w1: R.Tensor((10, 128), dtype="float32"), b1: R.Tensor((10,), dtype="float32")) -> R.Tensor(("n", 10), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            lv0: R.Tensor((64, 128), dtype="float32") = R.permute_dims(w0, axes=None)
            lv1: R.Tensor((n, 128), dtype="float32") = R.matmul(x, lv0, out_dtype="void")
            lv2: R.Tensor((n, 128), dtype="float32") = R.add(lv1, b0)
            lv3: R.Tensor((n, 128), dtype="float32") = R.nn.relu(lv2)
            lv4: R.Tensor((128, 10), dtype="float32") = R.permute_dims(w1, axes=None)
            lv5: R.Tensor((n, 10), dtype="float32") = R.matmul(lv3, lv4, out_dtype="void")
            gv: R.Tensor((n, 10), dtype="float32") = R.add(lv5, b1)
            R.output(gv)
        return gv
"#;

#[test]
fn scratch_print() {
    let m: IRModule = MLP.parse().unwrap();
    let out = pipeline(&Target::host()).run(m).unwrap();
    println!("{out}");
}
