//! The rows as Relax modules (TVMScript text), built for `Target::host()`
//! with the default pipeline, exactly as a user's module would be.

use relax::ir::IRModule;
use relax::{Target, VirtualMachine};

/// The seed's MLP, 784-128-10, weights as parameters, symbolic batch.
pub const MLP: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 784), dtype="float32"), w0: R.Tensor((128, 784), dtype="float32"), b0: R.Tensor((128,), dtype="float32"), w1: R.Tensor((10, 128), dtype="float32"), b1: R.Tensor((10,), dtype="float32")) -> R.Tensor(("n", 10), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            lv0 = R.permute_dims(w0)
            lv1 = R.matmul(x, lv0)
            lv2 = R.add(lv1, b0)
            lv3 = R.nn.relu(lv2)
            lv4 = R.permute_dims(w1)
            lv5 = R.matmul(lv3, lv4)
            gv = R.add(lv5, b1)
            R.output(gv)
        return gv
"#;

/// Softmax over the last axis of a (64, 1000) matrix.
pub const SOFTMAX: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((64, 1000), dtype="float32")) -> R.Tensor((64, 1000), dtype="float32"):
        with R.dataflow():
            gv = R.nn.softmax(x, axis=-1)
            R.output(gv)
        return gv
"#;

/// Layer norm over the last axis of a (64, 768) matrix.
pub const LAYER_NORM: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((64, 768), dtype="float32"), g: R.Tensor((768,), dtype="float32"), b: R.Tensor((768,), dtype="float32")) -> R.Tensor((64, 768), dtype="float32"):
        with R.dataflow():
            gv = R.nn.layer_norm(x, g, b, axes=[-1], epsilon=1e-5)
            R.output(gv)
        return gv
"#;

/// `relu(x + y)` over 4M floats.
pub const ADD_RELU: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4194304,), dtype="float32"), y: R.Tensor((4194304,), dtype="float32")) -> R.Tensor((4194304,), dtype="float32"):
        with R.dataflow():
            lv = R.add(x, y)
            gv = R.nn.relu(lv)
            R.output(gv)
        return gv
"#;

/// `relu((x + y) * z)` over 4M floats: three elementwise ops.
pub const CHAIN3: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4194304,), dtype="float32"), y: R.Tensor((4194304,), dtype="float32"), z: R.Tensor((4194304,), dtype="float32")) -> R.Tensor((4194304,), dtype="float32"):
        with R.dataflow():
            lv = R.add(x, y)
            lv1 = R.multiply(lv, z)
            gv = R.nn.relu(lv1)
            R.output(gv)
        return gv
"#;

/// The transpose of a 4096 × 4096 matrix.
pub const TRANSPOSE: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4096, 4096), dtype="float32")) -> R.Tensor((4096, 4096), dtype="float32"):
        with R.dataflow():
            gv = R.permute_dims(x, axes=None)
            R.output(gv)
        return gv
"#;

/// The sums of the rows and of the columns of a 4096 × 1024 matrix.
pub const SUM_ROWS: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4096, 1024), dtype="float32")) -> R.Tensor((4096,), dtype="float32"):
        with R.dataflow():
            gv = R.sum(x, axis=[1])
            R.output(gv)
        return gv
"#;

pub const SUM_COLS: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4096, 1024), dtype="float32")) -> R.Tensor((1024,), dtype="float32"):
        with R.dataflow():
            gv = R.sum(x, axis=[0])
            R.output(gv)
        return gv
"#;

/// `A B` for matrices of any shape (one build serves every size).
pub const MATMUL: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor(("m", "k"), dtype="float32"), b: R.Tensor(("k", "n"), dtype="float32")) -> R.Tensor(("m", "n"), dtype="float32"):
        m = T.int64()
        k = T.int64()
        n = T.int64()
        with R.dataflow():
            gv = R.matmul(a, b)
            R.output(gv)
        return gv
"#;

/// An integer matrix product, `uint8 × int8 → int32` (the product the
/// quantized importer and the QDQ rewrite emit), symbolic shapes.
pub const MATMUL_INT8: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor(("m", "k"), dtype="uint8"), b: R.Tensor(("k", "n"), dtype="int8")) -> R.Tensor(("m", "n"), dtype="int32"):
        m = T.int64()
        k = T.int64()
        n = T.int64()
        with R.dataflow():
            gv = R.matmul(a, b, out_dtype="int32")
            R.output(gv)
        return gv
"#;

/// A ResNet-style 3×3 convolution: 1×64×56×56, 64 filters, padding 1.
pub const CONV_RESNET: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 64, 56, 56), dtype="float32"), w: R.Tensor((64, 64, 3, 3), dtype="float32")) -> R.Tensor((1, 64, 56, 56), dtype="float32"):
        with R.dataflow():
            gv = R.nn.conv2d(x, w, padding=[1, 1, 1, 1])
            R.output(gv)
        return gv
"#;

/// A first layer: 1×3×224×224, 64 filters of 7×7, stride 2, padding 3.
pub const CONV_FIRST: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 3, 224, 224), dtype="float32"), w: R.Tensor((64, 3, 7, 7), dtype="float32")) -> R.Tensor((1, 64, 112, 112), dtype="float32"):
        with R.dataflow():
            gv = R.nn.conv2d(x, w, strides=[2, 2], padding=[3, 3, 3, 3])
            R.output(gv)
        return gv
"#;

/// A depthwise convolution (MobileNet v2's second block): 1×144×56×56,
/// one 3×3 filter per channel, padding 1.
pub const CONV_DEPTHWISE: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 144, 56, 56), dtype="float32"), w: R.Tensor((144, 1, 3, 3), dtype="float32")) -> R.Tensor((1, 144, 56, 56), dtype="float32"):
        with R.dataflow():
            gv = R.nn.conv2d(x, w, padding=[1, 1, 1, 1], groups=144)
            R.output(gv)
        return gv
"#;

/// Parses and builds `text` for the host.
pub fn compile(text: &str) -> VirtualMachine {
    let module: IRModule = text.parse().unwrap_or_else(|e| panic!("{e}"));
    let exec = relax::build(&module, &Target::host()).unwrap_or_else(|e| panic!("{e}"));
    VirtualMachine::new(&exec)
}
