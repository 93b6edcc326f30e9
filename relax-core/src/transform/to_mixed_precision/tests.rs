//! Before/expected cases ported from TVM's
//! `tests/python/relax/test_transform_to_mixed_precision.py` (each run for
//! `float16` and, with the dtype renamed, for `bfloat16`; accumulating in
//! `float32` and in the mixed dtype), cases of this project's own, and
//! numeric checks that a module after the pass computes what the `float32`
//! module computes, within the mixed dtype's precision.

use super::*;
use crate::transform::test_util::{assert_pass, parse};

const MIXED: [(DataType, &str); 2] = [(DataType::f16(), "float16"), (DataType::bf16(), "bfloat16")];

/// `before` becomes `acc32` (accumulating in `float32`) and `acc_mixed`
/// (accumulating in the mixed dtype), for `float16` and `bfloat16`
/// (`float16` in the expected texts stands for the mixed dtype).
#[track_caller]
fn check(before: &str, acc32: Option<&str>, acc_mixed: Option<&str>) {
    for (dtype, name) in MIXED {
        let expect = |t: &str| parse(&t.replace("\"float16\"", &format!("\"{name}\"")));
        if let Some(e) = acc32 {
            assert_pass(
                &ToMixedPrecision::with_dtype(dtype),
                parse(before),
                expect(e),
            );
        }
        if let Some(e) = acc_mixed {
            assert_pass(
                &ToMixedPrecision::with_dtype(dtype).out_dtype(dtype),
                parse(before),
                expect(e),
            );
        }
    }
}

#[test]
fn conv2d() {
    check(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 28, 28), "float32"), w: R.Tensor((4, 3, 3, 3), "float32")) -> R.Tensor((2, 4, 26, 26), "float32"):
        with R.dataflow():
            gv: R.Tensor((2, 4, 26, 26), "float32") = R.nn.conv2d(x, w, out_dtype="float32")
            R.output(gv)
        return gv
"#,
        Some(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 28, 28), "float32"), w: R.Tensor((4, 3, 3, 3), "float32")) -> R.Tensor((2, 4, 26, 26), "float32"):
        with R.dataflow():
            lv: R.Tensor((2, 3, 28, 28), "float16") = R.astype(x, dtype="float16")
            lv1: R.Tensor((4, 3, 3, 3), "float16") = R.astype(w, dtype="float16")
            gv: R.Tensor((2, 4, 26, 26), "float32") = R.nn.conv2d(lv, lv1, out_dtype="float32")
            R.output(gv)
        return gv
"#,
        ),
        Some(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 28, 28), "float32"), w: R.Tensor((4, 3, 3, 3), "float32")) -> R.Tensor((2, 4, 26, 26), "float32"):
        with R.dataflow():
            lv: R.Tensor((2, 3, 28, 28), "float16") = R.astype(x, dtype="float16")
            lv1: R.Tensor((4, 3, 3, 3), "float16") = R.astype(w, dtype="float16")
            lv2: R.Tensor((2, 4, 26, 26), "float16") = R.nn.conv2d(lv, lv1, out_dtype="float16")
            gv: R.Tensor((2, 4, 26, 26), "float32") = R.astype(lv2, dtype="float32")
            R.output(gv)
        return gv
"#,
        ),
    );
}

#[test]
fn conv2d_relu() {
    check(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 28, 28), "float32"), w: R.Tensor((4, 3, 3, 3), "float32")) -> R.Tensor((2, 4, 26, 26), "float32"):
        with R.dataflow():
            lv: R.Tensor((2, 4, 26, 26), "float32") = R.nn.conv2d(x, w, out_dtype="float32")
            gv: R.Tensor((2, 4, 26, 26), "float32") = R.nn.relu(lv)
            R.output(gv)
        return gv
"#,
        Some(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 28, 28), "float32"), w: R.Tensor((4, 3, 3, 3), "float32")) -> R.Tensor((2, 4, 26, 26), "float32"):
        with R.dataflow():
            lv: R.Tensor((2, 3, 28, 28), "float16") = R.astype(x, dtype="float16")
            lv1: R.Tensor((4, 3, 3, 3), "float16") = R.astype(w, dtype="float16")
            lv2: R.Tensor((2, 4, 26, 26), "float32") = R.nn.conv2d(lv, lv1, out_dtype="float32")
            lv_1: R.Tensor((2, 4, 26, 26), "float16") = R.astype(lv2, dtype="float16")
            lv3: R.Tensor((2, 4, 26, 26), "float16") = R.nn.relu(lv_1)
            gv: R.Tensor((2, 4, 26, 26), "float32") = R.astype(lv3, dtype="float32")
            R.output(gv)
        return gv
"#,
        ),
        Some(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 28, 28), "float32"), w: R.Tensor((4, 3, 3, 3), "float32")) -> R.Tensor((2, 4, 26, 26), "float32"):
        with R.dataflow():
            lv: R.Tensor((2, 3, 28, 28), "float16") = R.astype(x, dtype="float16")
            lv1: R.Tensor((4, 3, 3, 3), "float16") = R.astype(w, dtype="float16")
            lv_1: R.Tensor((2, 4, 26, 26), "float16") = R.nn.conv2d(lv, lv1, out_dtype="float16")
            lv2: R.Tensor((2, 4, 26, 26), "float16") = R.nn.relu(lv_1)
            gv: R.Tensor((2, 4, 26, 26), "float32") = R.astype(lv2, dtype="float32")
            R.output(gv)
        return gv
"#,
        ),
    );
}

#[test]
fn relu_conv2d_relu() {
    check(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 28, 28), "float32"), w: R.Tensor((4, 3, 3, 3), "float32")) -> R.Tensor((2, 4, 26, 26), "float32"):
        with R.dataflow():
            x0: R.Tensor((2, 3, 28, 28), "float32") = R.nn.relu(x)
            gv: R.Tensor((2, 4, 26, 26), "float32") = R.nn.conv2d(x0, w, out_dtype="float32")
            gv2: R.Tensor((2, 4, 26, 26), "float32") = R.nn.relu(gv)
            R.output(gv2)
        return gv2
"#,
        Some(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 28, 28), "float32"), w: R.Tensor((4, 3, 3, 3), "float32")) -> R.Tensor((2, 4, 26, 26), "float32"):
        with R.dataflow():
            lv: R.Tensor((4, 3, 3, 3), "float16") = R.astype(w, dtype="float16")
            x0: R.Tensor((2, 3, 28, 28), "float32") = R.nn.relu(x)
            lv1: R.Tensor((2, 3, 28, 28), "float16") = R.astype(x0, dtype="float16")
            lv2: R.Tensor((2, 4, 26, 26), "float32") = R.nn.conv2d(lv1, lv, out_dtype="float32")
            gv: R.Tensor((2, 4, 26, 26), "float16") = R.astype(lv2, dtype="float16")
            lv3: R.Tensor((2, 4, 26, 26), "float16") = R.nn.relu(gv)
            gv2: R.Tensor((2, 4, 26, 26), "float32") = R.astype(lv3, dtype="float32")
            R.output(gv2)
        return gv2
"#,
        ),
        Some(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 28, 28), "float32"), w: R.Tensor((4, 3, 3, 3), "float32")) -> R.Tensor((2, 4, 26, 26), "float32"):
        with R.dataflow():
            lv: R.Tensor((4, 3, 3, 3), "float16") = R.astype(w, dtype="float16")
            x0: R.Tensor((2, 3, 28, 28), "float32") = R.nn.relu(x)
            lv1: R.Tensor((2, 3, 28, 28), "float16") = R.astype(x0, dtype="float16")
            gv: R.Tensor((2, 4, 26, 26), "float16") = R.nn.conv2d(lv1, lv, out_dtype="float16")
            lv2: R.Tensor((2, 4, 26, 26), "float16") = R.nn.relu(gv)
            gv2: R.Tensor((2, 4, 26, 26), "float32") = R.astype(lv2, dtype="float32")
            R.output(gv2)
        return gv2
"#,
        ),
    );
}

#[test]
fn conv2d_relu_conv2d() {
    check(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 28, 28), "float32"), w: R.Tensor((4, 3, 3, 3), "float32"), w2: R.Tensor((4, 4, 3, 3), "float32")) -> R.Tensor((2, 4, 24, 24), "float32"):
        with R.dataflow():
            gv: R.Tensor((2, 4, 26, 26), "float32") = R.nn.conv2d(x, w, out_dtype="float32")
            gv2: R.Tensor((2, 4, 26, 26), "float32") = R.nn.relu(gv)
            gv3: R.Tensor((2, 4, 24, 24), "float32") = R.nn.conv2d(gv2, w2, out_dtype="float32")
            R.output(gv3)
        return gv3
"#,
        Some(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 28, 28), "float32"), w: R.Tensor((4, 3, 3, 3), "float32"), w2: R.Tensor((4, 4, 3, 3), "float32")) -> R.Tensor((2, 4, 24, 24), "float32"):
        with R.dataflow():
            lv: R.Tensor((2, 3, 28, 28), "float16") = R.astype(x, dtype="float16")
            lv1: R.Tensor((4, 3, 3, 3), "float16") = R.astype(w, dtype="float16")
            lv2: R.Tensor((4, 4, 3, 3), "float16") = R.astype(w2, dtype="float16")
            lv3: R.Tensor((2, 4, 26, 26), "float32") = R.nn.conv2d(lv, lv1, out_dtype="float32")
            gv: R.Tensor((2, 4, 26, 26), "float16") = R.astype(lv3, dtype="float16")
            gv2: R.Tensor((2, 4, 26, 26), "float16") = R.nn.relu(gv)
            gv3: R.Tensor((2, 4, 24, 24), "float32") = R.nn.conv2d(gv2, lv2, out_dtype="float32")
            R.output(gv3)
        return gv3
"#,
        ),
        Some(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 28, 28), "float32"), w: R.Tensor((4, 3, 3, 3), "float32"), w2: R.Tensor((4, 4, 3, 3), "float32")) -> R.Tensor((2, 4, 24, 24), "float32"):
        with R.dataflow():
            lv: R.Tensor((2, 3, 28, 28), "float16") = R.astype(x, dtype="float16")
            lv1: R.Tensor((4, 3, 3, 3), "float16") = R.astype(w, dtype="float16")
            lv2: R.Tensor((4, 4, 3, 3), "float16") = R.astype(w2, dtype="float16")
            gv: R.Tensor((2, 4, 26, 26), "float16") = R.nn.conv2d(lv, lv1, out_dtype="float16")
            gv2: R.Tensor((2, 4, 26, 26), "float16") = R.nn.relu(gv)
            lv3: R.Tensor((2, 4, 24, 24), "float16") = R.nn.conv2d(gv2, lv2, out_dtype="float16")
            gv3: R.Tensor((2, 4, 24, 24), "float32") = R.astype(lv3, dtype="float32")
            R.output(gv3)
        return gv3
"#,
        ),
    );
}

#[test]
fn gemm_add_silu() {
    check(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 320), "float32"), w1: R.Tensor((320, 1280), "float32"), w2: R.Tensor((2, 1280), "float32")) -> R.Tensor((2, 1280), "float32"):
        with R.dataflow():
            gv0: R.Tensor((2, 1280), "float32") = R.matmul(x, w1, out_dtype="float32")
            gv1: R.Tensor((2, 1280), "float32") = R.add(gv0, w2)
            gv2: R.Tensor((2, 1280), "float32") = R.nn.silu(gv1)
            R.output(gv2)
        return gv2
"#,
        Some(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 320), "float32"), w1: R.Tensor((320, 1280), "float32"), w2: R.Tensor((2, 1280), "float32")) -> R.Tensor((2, 1280), "float32"):
        with R.dataflow():
            lv: R.Tensor((2, 320), "float16") = R.astype(x, dtype="float16")
            lv1: R.Tensor((320, 1280), "float16") = R.astype(w1, dtype="float16")
            lv2: R.Tensor((2, 1280), "float32") = R.matmul(lv, lv1, out_dtype="float32")
            gv0: R.Tensor((2, 1280), "float16") = R.astype(lv2, dtype="float16")
            lv3: R.Tensor((2, 1280), "float32") = R.astype(gv0, dtype="float32")
            gv1: R.Tensor((2, 1280), "float32") = R.add(lv3, w2)
            gv2: R.Tensor((2, 1280), "float32") = R.nn.silu(gv1)
            R.output(gv2)
        return gv2
"#,
        ),
        Some(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 320), "float32"), w1: R.Tensor((320, 1280), "float32"), w2: R.Tensor((2, 1280), "float32")) -> R.Tensor((2, 1280), "float32"):
        with R.dataflow():
            lv: R.Tensor((2, 320), "float16") = R.astype(x, dtype="float16")
            lv1: R.Tensor((320, 1280), "float16") = R.astype(w1, dtype="float16")
            gv0: R.Tensor((2, 1280), "float16") = R.matmul(lv, lv1, out_dtype="float16")
            lv2: R.Tensor((2, 1280), "float32") = R.astype(gv0, dtype="float32")
            gv1: R.Tensor((2, 1280), "float32") = R.add(lv2, w2)
            gv2: R.Tensor((2, 1280), "float32") = R.nn.silu(gv1)
            R.output(gv2)
        return gv2
"#,
        ),
    );
}

#[test]
fn tuple() {
    let t = r#"R.Tensor((2, 4, 26, 26), "float16")"#;
    check(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 28, 28), "float32"), w: R.Tensor((4, 3, 3, 3), "float32"), w_2: R.Tensor((4, 4, 3, 3), "float32")) -> R.Tensor((2, 4, 24, 24), "float32"):
        with R.dataflow():
            gv: R.Tensor((2, 4, 26, 26), "float32") = R.nn.conv2d(x, w, out_dtype="float32")
            gv2: R.Tensor((2, 4, 26, 26), "float32") = R.nn.conv2d(x, w, out_dtype="float32")
            gv3 = (gv, gv2)
            gv4 = (gv3, gv2)
            gv5 = gv4[0]
            gv6 = gv5[0]
            gv7 = R.nn.conv2d(gv6, w_2, out_dtype="float32")
            R.output(gv7)
        return gv7
"#,
        Some(&format!(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 28, 28), "float32"), w: R.Tensor((4, 3, 3, 3), "float32"), w_2: R.Tensor((4, 4, 3, 3), "float32")) -> R.Tensor((2, 4, 24, 24), "float32"):
        with R.dataflow():
            lv: R.Tensor((2, 3, 28, 28), "float16") = R.astype(x, dtype="float16")
            lv1: R.Tensor((4, 3, 3, 3), "float16") = R.astype(w, dtype="float16")
            lv2: R.Tensor((4, 4, 3, 3), "float16") = R.astype(w_2, dtype="float16")
            lv3: R.Tensor((2, 4, 26, 26), "float32") = R.nn.conv2d(lv, lv1, out_dtype="float32")
            gv: {t} = R.astype(lv3, dtype="float16")
            lv4: R.Tensor((2, 4, 26, 26), "float32") = R.nn.conv2d(lv, lv1, out_dtype="float32")
            gv2: {t} = R.astype(lv4, dtype="float16")
            gv3: R.Tuple({t}, {t}) = (gv, gv2)
            gv4: R.Tuple(R.Tuple({t}, {t}), {t}) = (gv3, gv2)
            gv5: R.Tuple({t}, {t}) = gv4[0]
            gv6: {t} = gv5[0]
            gv7: R.Tensor((2, 4, 24, 24), "float32") = R.nn.conv2d(gv6, lv2, out_dtype="float32")
            R.output(gv7)
        return gv7
"#
        )),
        Some(&format!(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 28, 28), "float32"), w: R.Tensor((4, 3, 3, 3), "float32"), w_2: R.Tensor((4, 4, 3, 3), "float32")) -> R.Tensor((2, 4, 24, 24), "float32"):
        with R.dataflow():
            lv: R.Tensor((2, 3, 28, 28), "float16") = R.astype(x, dtype="float16")
            lv1: R.Tensor((4, 3, 3, 3), "float16") = R.astype(w, dtype="float16")
            lv2: R.Tensor((4, 4, 3, 3), "float16") = R.astype(w_2, dtype="float16")
            gv: {t} = R.nn.conv2d(lv, lv1, out_dtype="float16")
            gv2: {t} = R.nn.conv2d(lv, lv1, out_dtype="float16")
            gv3: R.Tuple({t}, {t}) = (gv, gv2)
            gv4: R.Tuple(R.Tuple({t}, {t}), {t}) = (gv3, gv2)
            gv5: R.Tuple({t}, {t}) = gv4[0]
            gv6: {t} = gv5[0]
            lv3: R.Tensor((2, 4, 24, 24), "float16") = R.nn.conv2d(gv6, lv2, out_dtype="float16")
            gv7: R.Tensor((2, 4, 24, 24), "float32") = R.astype(lv3, dtype="float32")
            R.output(gv7)
        return gv7
"#
        )),
    );
}

#[test]
fn concat_matmul() {
    check(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(lv10: R.Tensor((2, 160), "float32"), lv12: R.Tensor((2, 160), "float32"), w: R.Tensor((320, 1280), "float32")) -> R.Tensor((2, 1280), "float32"):
        with R.dataflow():
            lv13: R.Tensor((2, 320), "float32") = R.concat((lv10, lv12), axis=-1)
            lv14: R.Tensor((2, 1280), "float32") = R.matmul(lv13, w, out_dtype="float32")
            R.output(lv14)
        return lv14
"#,
        Some(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(lv10: R.Tensor((2, 160), "float32"), lv12: R.Tensor((2, 160), "float32"), w: R.Tensor((320, 1280), "float32")) -> R.Tensor((2, 1280), "float32"):
        with R.dataflow():
            lv: R.Tensor((320, 1280), "float16") = R.astype(w, dtype="float16")
            lv13: R.Tensor((2, 320), "float32") = R.concat((lv10, lv12), axis=-1)
            lv1: R.Tensor((2, 320), "float16") = R.astype(lv13, dtype="float16")
            lv14: R.Tensor((2, 1280), "float32") = R.matmul(lv1, lv, out_dtype="float32")
            R.output(lv14)
        return lv14
"#,
        ),
        Some(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(lv10: R.Tensor((2, 160), "float32"), lv12: R.Tensor((2, 160), "float32"), w: R.Tensor((320, 1280), "float32")) -> R.Tensor((2, 1280), "float32"):
        with R.dataflow():
            lv: R.Tensor((320, 1280), "float16") = R.astype(w, dtype="float16")
            lv13: R.Tensor((2, 320), "float32") = R.concat((lv10, lv12), axis=-1)
            lv1: R.Tensor((2, 320), "float16") = R.astype(lv13, dtype="float16")
            lv2: R.Tensor((2, 1280), "float16") = R.matmul(lv1, lv, out_dtype="float16")
            lv14: R.Tensor((2, 1280), "float32") = R.astype(lv2, dtype="float32")
            R.output(lv14)
        return lv14
"#,
        ),
    );
}

#[test]
fn conv2d_softmax() {
    check(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 28, 28), "float32"), w: R.Tensor((3, 3, 3, 3), "float32")) -> R.Tensor((2, 3, 28, 28), "float32"):
        with R.dataflow():
            gv: R.Tensor((2, 3, 28, 28), "float32") = R.nn.conv2d(x, w, padding=[1, 1, 1, 1])
            gv1: R.Tensor((2, 3, 28, 28), "float32") = R.nn.softmax(x, axis=1)
            gv2 = R.add(gv, gv1)
            R.output(gv2)
        return gv2
"#,
        Some(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 28, 28), "float32"), w: R.Tensor((3, 3, 3, 3), "float32")) -> R.Tensor((2, 3, 28, 28), "float32"):
        with R.dataflow():
            lv: R.Tensor((3, 3, 3, 3), "float16") = R.astype(w, dtype="float16")
            lv1: R.Tensor((2, 3, 28, 28), "float16") = R.astype(x, dtype="float16")
            lv2: R.Tensor((2, 3, 28, 28), "float32") = R.nn.conv2d(lv1, lv, padding=[1, 1, 1, 1], out_dtype="float32")
            gv: R.Tensor((2, 3, 28, 28), "float16") = R.astype(lv2, dtype="float16")
            gv1: R.Tensor((2, 3, 28, 28), "float32") = R.nn.softmax(x, axis=1)
            lv3: R.Tensor((2, 3, 28, 28), "float32") = R.astype(gv, dtype="float32")
            gv2: R.Tensor((2, 3, 28, 28), "float32") = R.add(lv3, gv1)
            R.output(gv2)
        return gv2
"#,
        ),
        Some(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 28, 28), "float32"), w: R.Tensor((3, 3, 3, 3), "float32")) -> R.Tensor((2, 3, 28, 28), "float32"):
        with R.dataflow():
            lv: R.Tensor((3, 3, 3, 3), "float16") = R.astype(w, dtype="float16")
            lv1: R.Tensor((2, 3, 28, 28), "float16") = R.astype(x, dtype="float16")
            gv: R.Tensor((2, 3, 28, 28), "float16") = R.nn.conv2d(lv1, lv, padding=[1, 1, 1, 1], out_dtype="float16")
            gv1: R.Tensor((2, 3, 28, 28), "float32") = R.nn.softmax(x, axis=1)
            lv2: R.Tensor((2, 3, 28, 28), "float32") = R.astype(gv, dtype="float32")
            gv2: R.Tensor((2, 3, 28, 28), "float32") = R.add(lv2, gv1)
            R.output(gv2)
        return gv2
"#,
        ),
    );
}

#[test]
fn tuple_get() {
    check(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 4, 64, 64), "float32"), w: R.Tensor((512, 4, 3, 3), "float32"), bias: R.Tensor((512, 1, 1), "float32")):
        with R.dataflow():
            conv = R.nn.conv2d(x, w, strides=[1, 1], padding=[0, 0, 1, 1])
            bias_out = R.add(conv, bias)
            split = R.split(bias_out, indices_or_sections=2, axis=1)
            lv3 = split[0]
            lv4 = split[1]
            out = R.add(lv3, lv4)
            R.output(out)
        return out
"#,
        None,
        Some(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 4, 64, 64), "float32"), w: R.Tensor((512, 4, 3, 3), "float32"), bias: R.Tensor((512, 1, 1), "float32")):
        with R.dataflow():
            lv = R.astype(x, dtype="float16")
            lv1 = R.astype(w, dtype="float16")
            conv = R.nn.conv2d(lv, lv1, strides=[1, 1], padding=[0, 0, 1, 1], out_dtype="float16")
            lv2 = R.astype(conv, dtype="float32")
            bias_out = R.add(lv2, bias)
            split = R.split(bias_out, indices_or_sections=2, axis=1)
            lv3 = split[0]
            lv4 = split[1]
            out = R.add(lv3, lv4)
            R.output(out)
        return out
"#,
        ),
    );
}

/// TVM's `test_conv2d_bias_fp32`, with the weights as constants: a
/// constant bias whose values fit in the mixed dtype lets `add` follow
/// the convolution into it, converted at compile time (TVM binds an
/// `R.astype` of it for `FoldConstant`); a `float16` bias of 70000 does
/// not fit, so `add` stays in `float32`.
#[test]
fn conv2d_bias_constant() {
    use relax_runtime::Tensor;
    let module = |bias: &Tensor| {
        let mut m = parse(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 4, 8, 8), "float32"), w: R.Tensor((6, 4, 3, 3), "float32"), bias: R.Tensor((6,), "float32")):
        with R.dataflow():
            lv142: R.Tensor((1, 6, 6, 6), "float32") = R.nn.conv2d(x, w, out_dtype="float32")
            lv143: R.Tensor((1, 6, 1, 1), "float32") = R.reshape(bias, R.shape([1, 6, 1, 1]))
            lv144: R.Tensor((1, 6, 6, 6), "float32") = R.add(lv142, lv143)
            R.output(lv144)
        return lv144
"#,
        );
        let params = [("bias".to_string(), bias.clone())];
        m = crate::transform::BindParams::new("main", params)
            .run(m)
            .unwrap();
        m
    };
    for (dtype, name) in MIXED {
        let small = Tensor::from_vec(&[6], vec![0.5f32, -1.0, 2.0, 3.0, -4.0, 5.0]).unwrap();
        let got = ToMixedPrecision::with_dtype(dtype)
            .out_dtype(dtype)
            .run(module(&small))
            .unwrap();
        let text = got.to_string();
        // The bias is converted once, at compile time: no astype of it.
        assert_eq!(text.matches("R.astype").count(), 3, "{text}");
        let main = got.get_relax("main").unwrap();
        assert_eq!(add_dtype(main), Some(dtype), "{name}: {text}");

        let mut big = small.to_vec::<f32>().unwrap();
        big[0] = 70000.0;
        let big = Tensor::from_vec(&[6], big).unwrap();
        let got = ToMixedPrecision::with_dtype(dtype)
            .out_dtype(dtype)
            .run(module(&big))
            .unwrap();
        let main = got.get_relax("main").unwrap();
        let text = got.to_string();
        // 70000 is past float16's 65504 but well inside bfloat16's range.
        let expect = if dtype == DataType::f16() {
            DataType::f32()
        } else {
            dtype
        };
        assert_eq!(add_dtype(main), Some(expect), "{name}: {text}");
    }
}

/// The dtype `R.add` computes in, in `f`.
fn add_dtype(f: &crate::ir::Function) -> Option<DataType> {
    let seq = f.body.as_seq()?;
    seq.blocks
        .iter()
        .flat_map(|b| b.bindings.iter())
        .find(|b| b.value().call_op_name() == Some("relax.add"))
        .and_then(|b| b.value().struct_info()?.as_tensor().map(|t| t.dtype))
}

#[test]
fn convert_sig() {
    for (dtype, name) in MIXED {
        let before = parse(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 4, 64, 64), "float32"), w: R.Tensor((512, 4, 3, 3), "float32"), bias: R.Tensor((512,), "float32")) -> R.Tensor((1, 512, 62, 62), "float32"):
        with R.dataflow():
            lv142: R.Tensor((1, 512, 62, 62), "float32") = R.nn.conv2d(x, w, strides=[1, 1], padding=[0, 0, 0, 0], out_dtype="float32")
            lv143: R.Tensor((1, 512, 1, 1), "float32") = R.reshape(bias, R.shape([1, 512, 1, 1]))
            lv144: R.Tensor((1, 512, 62, 62), "float32") = R.add(lv142, lv143)
            R.output(lv144)
        return lv144
"#,
        );
        let expected = parse(
            &r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 4, 64, 64), "float32"), w: R.Tensor((512, 4, 3, 3), "float16"), bias: R.Tensor((512,), "float16")) -> R.Tensor((1, 512, 62, 62), "float32"):
        with R.dataflow():
            lv = R.astype(x, dtype="float16")
            lv142 = R.nn.conv2d(lv, w, strides=[1, 1], padding=[0, 0, 0, 0], out_dtype="float16")
            lv143 = R.reshape(bias, R.shape([1, 512, 1, 1]))
            lv1 = R.add(lv142, lv143)
            lv144 = R.astype(lv1, dtype="float32")
            R.output(lv144)
        return lv144
"#
            .replace("\"float16\"", &format!("\"{name}\"")),
        );
        assert_pass(
            &ToMixedPrecision::with_dtype(dtype)
                .out_dtype(dtype)
                .input_names(["w", "bias"]),
            before,
            expected,
        );
    }
}

/// A `call_tir` is a `Never` op: its `float16` arguments stay as they are.
#[test]
fn call_tir_with_float16_args() {
    let m = parse(
        r#"
@I.ir_module
class Module:
    @T.prim_func
    def tir_identity(A: T.Buffer((64,), "float16"), B: T.Buffer((64,), "float16")):
        for i in range(64):
            with T.block("copy"):
                vi = T.axis.spatial(64, i)
                B[vi] = A[vi]

    @R.function
    def main(A: R.Tensor((64,), "float16")):
        cls = Module
        with R.dataflow():
            B = R.call_tir(cls.tir_identity, (A,), out_sinfo=R.Tensor((64,), "float16"))
            C = R.call_tir(cls.tir_identity, (B,), out_sinfo=R.Tensor((64,), "float16"))
            R.output(C)
        return C
"#,
    );
    assert_pass(&ToMixedPrecision::default(), m.clone(), m);
}

/// TVM's `test_dynamic_strided_slice` with `take`, a `Never` op reading an
/// integer tensor: the convolution's mixed result is cast back first.
#[test]
fn never_op_after_an_always_op() {
    check(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 28, 28), "float32"), w: R.Tensor((4, 3, 3, 3), "float32"), idx: R.Tensor((2,), "int64")) -> R.Tensor((2, 4, 26, 26), "float32"):
        with R.dataflow():
            lv: R.Tensor((2, 4, 26, 26), "float32") = R.nn.conv2d(x, w, out_dtype="float32")
            gv = R.take(lv, idx, axis=0)
            R.output(gv)
        return gv
"#,
        Some(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 28, 28), "float32"), w: R.Tensor((4, 3, 3, 3), "float32"), idx: R.Tensor((2,), "int64")) -> R.Tensor((2, 4, 26, 26), "float32"):
        with R.dataflow():
            lv: R.Tensor((2, 3, 28, 28), "float16") = R.astype(x, dtype="float16")
            lv1: R.Tensor((4, 3, 3, 3), "float16") = R.astype(w, dtype="float16")
            lv2: R.Tensor((2, 4, 26, 26), "float32") = R.nn.conv2d(lv, lv1, out_dtype="float32")
            lv3: R.Tensor((2, 4, 26, 26), "float16") = R.astype(lv2, dtype="float16")
            lv4: R.Tensor((2, 4, 26, 26), "float32") = R.astype(lv3, dtype="float32")
            gv: R.Tensor((2, 4, 26, 26), "float32") = R.take(lv4, idx, axis=0)
            R.output(gv)
        return gv
"#,
        ),
        None,
    );
}

/// Symbolic shapes stay symbolic, and a `float64` tensor is never cast.
#[test]
fn symbolic_batch_and_float64_left_alone() {
    check(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 8), "float32"), w: R.Tensor((8, 4), "float32"), d: R.Tensor(("n", 4), "float64")) -> R.Tuple(R.Tensor(("n", 4), "float32"), R.Tensor(("n", 4), "float64")):
        n = T.int64()
        with R.dataflow():
            y = R.matmul(x, w)
            z = R.add(d, d)
            gv = (y, z)
            R.output(gv)
        return gv
"#,
        Some(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 8), "float32"), w: R.Tensor((8, 4), "float32"), d: R.Tensor(("n", 4), "float64")) -> R.Tuple(R.Tensor(("n", 4), "float32"), R.Tensor(("n", 4), "float64")):
        n = T.int64()
        with R.dataflow():
            lv: R.Tensor((n, 8), "float16") = R.astype(x, dtype="float16")
            lv1: R.Tensor((8, 4), "float16") = R.astype(w, dtype="float16")
            lv2: R.Tensor((n, 4), "float32") = R.matmul(lv, lv1, out_dtype="float32")
            y: R.Tensor((n, 4), "float16") = R.astype(lv2, dtype="float16")
            z: R.Tensor((n, 4), "float64") = R.add(d, d)
            lv3: R.Tensor((n, 4), "float32") = R.astype(y, dtype="float32")
            gv = (lv3, z)
            R.output(gv)
        return gv
"#,
        ),
        None,
    );
}

#[test]
fn bad_dtypes_are_errors_naming_the_parameter() {
    let m = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2,), "float32")):
        return x
"#,
    );
    let e = ToMixedPrecision::with_dtype(DataType::f64())
        .run(m.clone())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("dtype must be float16 or bfloat16, found float64"),
        "{e}"
    );
    let e = ToMixedPrecision::with_dtype(DataType::bf16())
        .out_dtype(DataType::f16())
        .run(m)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("out_dtype must be float32 or bfloat16, found float16"),
        "{e}"
    );
}

/// A small MLP and a small conv net, `float32` against the pass's output
/// for both mixed dtypes, on the given targets: equal within the mixed
/// dtype's precision (a few ulps of it relative to the outputs' scale).
fn numeric(targets: &[crate::backend::Target]) {
    use crate::backend::build;
    use relax_runtime::{Tensor, Value, VirtualMachine};
    let mlp = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 16), "float32"), w1: R.Tensor((16, 32), "float32"), b1: R.Tensor((32,), "float32"), w2: R.Tensor((32, 8), "float32"), b2: R.Tensor((8,), "float32")) -> R.Tensor(("n", 8), "float32"):
        n = T.int64()
        with R.dataflow():
            h = R.matmul(x, w1)
            h1 = R.add(h, b1)
            a = R.nn.relu(h1)
            o = R.matmul(a, w2)
            o1 = R.add(o, b2)
            gv = R.nn.softmax(o1, axis=-1)
            R.output(gv)
        return gv
"#,
    );
    let conv = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3, 10, 10), "float32"), w: R.Tensor((4, 3, 3, 3), "float32"), b: R.Tensor((1, 4, 1, 1), "float32"), w2: R.Tensor((4, 10), "float32")) -> R.Tensor((2, 10), "float32"):
        with R.dataflow():
            c = R.nn.conv2d(x, w, padding=[1, 1, 1, 1])
            c1 = R.add(c, b)
            r = R.nn.relu(c1)
            p = R.nn.max_pool2d(r, pool_size=[2, 2], strides=[2, 2])
            m = R.mean(p, axis=[2, 3])
            gv = R.matmul(m, w2)
            R.output(gv)
        return gv
"#,
    );
    let mut seed = 0x9e37_79b9u32;
    let mut rand = |shape: &[i64]| {
        let n: i64 = shape.iter().product();
        let data: Vec<f32> = (0..n)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                (seed % 2001) as f32 / 1000.0 - 1.0
            })
            .collect();
        Value::Tensor(Tensor::from_vec(shape, data).unwrap())
    };
    let cases = [
        (
            mlp,
            vec![
                rand(&[5, 16]),
                rand(&[16, 32]),
                rand(&[32]),
                rand(&[32, 8]),
                rand(&[8]),
            ],
        ),
        (
            conv,
            vec![
                rand(&[2, 3, 10, 10]),
                rand(&[4, 3, 3, 3]),
                rand(&[1, 4, 1, 1]),
                rand(&[4, 10]),
            ],
        ),
    ];
    for (module, args) in &cases {
        let run = |m: &IRModule, t: &crate::backend::Target| {
            let exec = build(m, t).unwrap();
            let out = VirtualMachine::new(&exec).call("main", args).unwrap();
            out.as_tensor().unwrap().to_vec::<f32>().unwrap()
        };
        let want = run(module, &crate::backend::Target::interpreter());
        let scale = want.iter().fold(0f32, |a, v| a.max(v.abs())).max(1e-3);
        for (dtype, name) in MIXED {
            let mixed = ToMixedPrecision::with_dtype(dtype)
                .run(module.clone())
                .unwrap();
            let text = mixed.to_string();
            assert!(text.contains(&format!("\"{name}\"")), "{text}");
            // bfloat16 keeps 8 significant bits, float16 11: a handful of
            // roundings along the way, relative to the outputs' scale.
            let tol = if dtype == DataType::bf16() {
                4.0 / 128.0
            } else {
                4.0 / 1024.0
            };
            for t in targets {
                let got = run(&mixed, t);
                assert_eq!(got.len(), want.len());
                let worst = got
                    .iter()
                    .zip(&want)
                    .map(|(g, w)| (g - w).abs())
                    .fold(0f32, f32::max);
                assert!(
                    worst <= tol * scale,
                    "{name} on {t:?}: max difference {worst} > {} \n{text}",
                    tol * scale
                );
                assert!(worst > 0.0 || want.iter().all(|v| *v == 0.0));
            }
        }
    }
}

#[test]
fn mixed_modules_compute_the_float32_result_on_the_interpreter() {
    numeric(&[
        crate::backend::Target::interpreter(),
        crate::backend::Target::tir_interpreter(),
    ]);
}

#[cfg(feature = "llvm")]
#[test]
fn mixed_modules_compute_the_float32_result_on_llvm() {
    numeric(&[crate::backend::Target::host()]);
}

/// A weight bound as a constant and read by two matmuls is converted
/// once: both calls read the same mixed-dtype constant, and no `R.astype`
/// of it is left for run time.
#[test]
fn a_constant_is_converted_once() {
    use relax_runtime::Tensor;
    let m = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 4), "float32"), y: R.Tensor((2, 4), "float32"), w: R.Tensor((4, 3), "float32")):
        with R.dataflow():
            a = R.matmul(x, w)
            b = R.matmul(y, w)
            gv = R.add(a, b)
            R.output(gv)
        return gv
"#,
    );
    let w = Tensor::from_vec(&[4, 3], (0..12).map(|i| i as f32 * 0.25).collect()).unwrap();
    let m = crate::transform::BindParams::new("main", [("w".to_string(), w.clone())])
        .run(m)
        .unwrap();
    for (dtype, _) in MIXED {
        let got = ToMixedPrecision::with_dtype(dtype).run(m.clone()).unwrap();
        let main = got.get_relax("main").unwrap();
        let seq = main.body.as_seq().unwrap();
        let consts: Vec<Expr> = seq
            .blocks
            .iter()
            .flat_map(|b| b.bindings.iter())
            .filter(|b| b.value().call_op_name() == Some("relax.matmul"))
            .map(|b| b.value().as_call().unwrap().args[1].clone())
            .collect();
        assert_eq!(consts.len(), 2);
        assert!(consts[0].ptr_eq(&consts[1]), "{got}");
        let ExprKind::Constant(t) = consts[0].kind() else {
            panic!("{got}")
        };
        assert_eq!(t.dtype(), dtype);
        assert_eq!(t.to_f64_vec(), w.astype(dtype).unwrap().to_f64_vec());
        // At run time: x and y in, the two products to the mixed dtype,
        // the sum out; none of w.
        assert_eq!(got.to_string().matches("R.astype").count(), 5, "{got}");
    }
}

/// Bindings outside dataflow blocks are not rewritten (TVM's pass works on
/// dataflow blocks; `relax run --precision` runs `ConvertToDataflow`
/// first).
#[test]
fn bindings_outside_dataflow_blocks_are_left_alone() {
    let m = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 4), "float32"), w: R.Tensor((4, 3), "float32")) -> R.Tensor((2, 3), "float32"):
        gv = R.matmul(x, w)
        return gv
"#,
    );
    assert_pass(&ToMixedPrecision::default(), m.clone(), m);
}
