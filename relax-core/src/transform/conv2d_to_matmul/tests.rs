//! Conv2dToMatmul: the rewrite (before/expected) and the convolutions it
//! leaves alone.

use super::*;
use crate::ir::structural_equal::assert_structural_equal;
use crate::transform::test_util::{assert_pass, parse};

fn conv(attrs: &str, w_shape: &str) -> String {
    format!(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 7, 7, 32), dtype="float32"), w: R.Tensor({w_shape}, dtype="float32")):
        n = T.int64()
        with R.dataflow():
            y = R.nn.conv2d(x, w, {attrs}data_layout="NHWC", kernel_layout="HWIO")
            R.output(y)
        return y
"#
    )
}

#[test]
fn a_pointwise_nhwc_convolution_is_a_matmul() {
    let expected = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 7, 7, 32), dtype="float32"), w: R.Tensor((1, 1, 32, 24), dtype="float32")):
        n = T.int64()
        with R.dataflow():
            w_1 = R.reshape(w, R.shape([32, 24]))
            y = R.matmul(x, w_1, out_dtype=None)
            R.output(y)
        return y
"#,
    );
    assert_pass(
        &Conv2dToMatmul,
        parse(&conv("", "(1, 1, 32, 24)")),
        expected,
    );
}

#[test]
fn other_convolutions_stay() {
    for (attrs, w) in [
        ("", "(3, 3, 32, 24)"),
        ("strides=[2, 2], ", "(1, 1, 32, 24)"),
        ("padding=[1, 1, 1, 1], ", "(1, 1, 32, 24)"),
        ("groups=8, ", "(1, 1, 4, 24)"),
    ] {
        let m = parse(&conv(attrs, w));
        assert_structural_equal(&Conv2dToMatmul.run(m.clone()).unwrap(), &m);
    }
    // NCHW data.
    let m = parse(
        &conv("", "(1, 1, 32, 24)")
            .replace("data_layout=\"NHWC\", kernel_layout=\"HWIO\"", "")
            .replace("(\"n\", 7, 7, 32)", "(\"n\", 32, 7, 7)")
            .replace("(1, 1, 32, 24)", "(24, 32, 1, 1)"),
    );
    assert_structural_equal(&Conv2dToMatmul.run(m.clone()).unwrap(), &m);
}
