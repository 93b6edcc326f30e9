//! Before/expected cases of `FakeQuantizationToInteger`, the cases it
//! leaves alone, and numeric checks against the float dequantize path on
//! the interpreter and LLVM.

use super::*;
use crate::transform::test_util::{assert_pass, parse};

/// A QDQ dense layer as onnxruntime's `quantize_static` writes it: `uint8`
/// activations with a zero point, `int8` weights (per tensor, zero point
/// 0), a bias add and the requantization of the result.
const DENSE: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(xq: R.Tensor((3, 5), "uint8"), wq: R.Tensor((5, 7), "int8"), b: R.Tensor((7,), "float32")) -> R.Tensor((3, 7), "uint8"):
        with R.dataflow():
            x = R.dequantize(xq, R.const(0.05, "float32"), R.const(128, "uint8"), axis=-1, out_dtype="float32")
            w = R.dequantize(wq, R.const(0.01, "float32"), R.const(0, "int8"), axis=-1, out_dtype="float32")
            y = R.matmul(x, w)
            z = R.add(y, b)
            gv = R.quantize(z, R.const(0.1, "float32"), R.const(120, "uint8"), axis=-1, out_dtype="uint8")
            R.output(gv)
        return gv
"#;

#[test]
fn dense_with_zero_weight_zero_point_keeps_the_column_term_only() {
    let expected = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(xq: R.Tensor((3, 5), dtype="uint8"), wq: R.Tensor((5, 7), dtype="int8"), b: R.Tensor((7,), dtype="float32")) -> R.Tensor((3, 7), dtype="uint8"):
        with R.dataflow():
            lv: R.Tensor((3, 7), dtype="int32") = R.matmul(xq, wq, out_dtype="int32")
            lv1: R.Tensor((5, 7), dtype="int32") = R.astype(wq, dtype="int32")
            lv2: R.Tensor((1, 7), dtype="int32") = R.sum(lv1, axis=[-2], keepdims=True)
            lv3: R.Tensor((1, 7), dtype="int32") = R.multiply(R.const(128, "int32"), lv2)
            lv4: R.Tensor((3, 7), dtype="int32") = R.subtract(lv, lv3)
            lv5: R.Tensor((3, 7), dtype="float32") = R.astype(lv4, dtype="float32")
            lv6: R.Tensor((), dtype="float32") = R.multiply(R.const(0.05, "float32"), R.const(0.01, "float32"))
            y: R.Tensor((3, 7), dtype="float32") = R.multiply(lv5, lv6)
            z: R.Tensor((3, 7), dtype="float32") = R.add(y, b)
            gv: R.Tensor((3, 7), dtype="uint8") = R.quantize(z, R.const(0.1, "float32"), R.const(120, "uint8"), axis=-1, out_dtype="uint8")
            R.output(gv)
        return gv
"#,
    );
    assert_pass(
        &FakeQuantizationToInteger::default(),
        parse(DENSE),
        expected,
    );
}

/// Zero points that are not constants (here parameters) keep both
/// corrections; a batched activation broadcasts against a 2-d weight.
#[test]
fn variable_zero_points_keep_both_corrections() {
    let before = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(xq: R.Tensor((2, 3, 5), "int8"), wq: R.Tensor((5, 7), "int8"), sx: R.Tensor((), "float32"), zx: R.Tensor((), "int8"), sw: R.Tensor((), "float32"), zw: R.Tensor((), "int8")) -> R.Tensor((2, 3, 7), "float32"):
        with R.dataflow():
            x = R.dequantize(xq, sx, zx, axis=-1, out_dtype="float32")
            w = R.dequantize(wq, sw, zw, axis=-1, out_dtype="float32")
            gv = R.matmul(x, w)
            R.output(gv)
        return gv
"#,
    );
    let expected = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(xq: R.Tensor((2, 3, 5), dtype="int8"), wq: R.Tensor((5, 7), dtype="int8"), sx: R.Tensor((), dtype="float32"), zx: R.Tensor((), dtype="int8"), sw: R.Tensor((), dtype="float32"), zw: R.Tensor((), dtype="int8")) -> R.Tensor((2, 3, 7), dtype="float32"):
        with R.dataflow():
            lv: R.Tensor((2, 3, 7), dtype="int32") = R.matmul(xq, wq, out_dtype="int32")
            lv1: R.Tensor((2, 3, 5), dtype="int32") = R.astype(xq, dtype="int32")
            lv2: R.Tensor((2, 3, 1), dtype="int32") = R.sum(lv1, axis=[-1], keepdims=True)
            lv3: R.Tensor((), dtype="int32") = R.astype(zw, dtype="int32")
            lv4: R.Tensor((2, 3, 1), dtype="int32") = R.multiply(lv2, lv3)
            lv5: R.Tensor((2, 3, 7), dtype="int32") = R.subtract(lv, lv4)
            lv6: R.Tensor((), dtype="int32") = R.astype(zx, dtype="int32")
            lv7: R.Tensor((5, 7), dtype="int32") = R.astype(wq, dtype="int32")
            lv8: R.Tensor((), dtype="int32") = R.astype(zw, dtype="int32")
            lv9: R.Tensor((5, 7), dtype="int32") = R.subtract(lv7, lv8)
            lv10: R.Tensor((1, 7), dtype="int32") = R.sum(lv9, axis=[-2], keepdims=True)
            lv11: R.Tensor((1, 7), dtype="int32") = R.multiply(lv6, lv10)
            lv12: R.Tensor((2, 3, 7), dtype="int32") = R.subtract(lv5, lv11)
            lv13: R.Tensor((2, 3, 7), dtype="float32") = R.astype(lv12, dtype="float32")
            lv14: R.Tensor((), dtype="float32") = R.multiply(sx, sw)
            gv: R.Tensor((2, 3, 7), dtype="float32") = R.multiply(lv13, lv14)
            R.output(gv)
        return gv
"#,
    );
    assert_pass(&FakeQuantizationToInteger::default(), before, expected);
}

/// A weight quantized per output channel (its last axis): the scales
/// multiply per column; a zero activation zero point drops the column sum,
/// and the per-column weight zero points keep the row term.
#[test]
fn per_channel_weight_scales_multiply_per_column() {
    let before = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(xq: R.Tensor((3, 5), "int8"), wq: R.Tensor((5, 4), "uint8"), sw: R.Tensor((4,), "float32"), zw: R.Tensor((4,), "uint8")) -> R.Tensor((3, 4), "float32"):
        with R.dataflow():
            x = R.dequantize(xq, R.const(0.5, "float32"), R.const(0, "int8"), axis=-1, out_dtype="float32")
            w = R.dequantize(wq, sw, zw, axis=1, out_dtype="float32")
            gv = R.matmul(x, w)
            R.output(gv)
        return gv
"#,
    );
    let expected = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(xq: R.Tensor((3, 5), dtype="int8"), wq: R.Tensor((5, 4), dtype="uint8"), sw: R.Tensor((4,), dtype="float32"), zw: R.Tensor((4,), dtype="uint8")) -> R.Tensor((3, 4), dtype="float32"):
        with R.dataflow():
            lv: R.Tensor((3, 4), dtype="int32") = R.matmul(xq, wq, out_dtype="int32")
            lv1: R.Tensor((3, 5), dtype="int32") = R.astype(xq, dtype="int32")
            lv2: R.Tensor((3, 1), dtype="int32") = R.sum(lv1, axis=[-1], keepdims=True)
            lv3: R.Tensor((4,), dtype="int32") = R.astype(zw, dtype="int32")
            lv4: R.Tensor((3, 4), dtype="int32") = R.multiply(lv2, lv3)
            lv5: R.Tensor((3, 4), dtype="int32") = R.subtract(lv, lv4)
            lv6: R.Tensor((3, 4), dtype="float32") = R.astype(lv5, dtype="float32")
            lv7: R.Tensor((4,), dtype="float32") = R.multiply(R.const(0.5, "float32"), sw)
            gv: R.Tensor((3, 4), dtype="float32") = R.multiply(lv6, lv7)
            R.output(gv)
        return gv
"#,
    );
    assert_pass(&FakeQuantizationToInteger::default(), before, expected);
}

/// What the pass leaves alone: a per-axis scale on the weight's input
/// axis, a per-axis activation scale, 16-bit integers, and a matmul of one
/// dequantized operand only.
#[test]
fn other_forms_are_left_alone() {
    let cases = [
        // The weight's scale along its input axis (0), not its columns.
        (
            r#"xq: R.Tensor((3, 5), "uint8"), wq: R.Tensor((5, 4), "int8"), s: R.Tensor((5,), "float32"), z: R.Tensor((5,), "int8")"#,
            r#"x = R.dequantize(xq, R.const(0.5, "float32"), R.const(3, "uint8"), axis=-1, out_dtype="float32")
            w = R.dequantize(wq, s, z, axis=0, out_dtype="float32")"#,
        ),
        // A per-axis activation scale.
        (
            r#"xq: R.Tensor((3, 5), "uint8"), wq: R.Tensor((5, 4), "int8"), s: R.Tensor((5,), "float32"), z: R.Tensor((5,), "uint8")"#,
            r#"x = R.dequantize(xq, s, z, axis=-1, out_dtype="float32")
            w = R.dequantize(wq, R.const(0.5, "float32"), R.const(0, "int8"), axis=-1, out_dtype="float32")"#,
        ),
        // 16-bit integers.
        (
            r#"xq: R.Tensor((3, 5), "int16"), wq: R.Tensor((5, 4), "int8")"#,
            r#"x = R.dequantize(xq, R.const(0.5, "float32"), R.const(0, "int16"), axis=-1, out_dtype="float32")
            w = R.dequantize(wq, R.const(0.5, "float32"), R.const(0, "int8"), axis=-1, out_dtype="float32")"#,
        ),
        // The weight is a float already.
        (
            r#"xq: R.Tensor((3, 5), "uint8"), w: R.Tensor((5, 4), "float32")"#,
            r#"x = R.dequantize(xq, R.const(0.5, "float32"), R.const(0, "uint8"), axis=-1, out_dtype="float32")"#,
        ),
    ];
    for (params, dequantizes) in cases {
        let m = parse(&format!(
            r#"
@I.ir_module
class Module:
    @R.function
    def main({params}) -> R.Tensor((3, 4), "float32"):
        with R.dataflow():
            {dequantizes}
            gv = R.matmul(x, w)
            R.output(gv)
        return gv
"#
        ));
        assert_pass(&FakeQuantizationToInteger::default(), m.clone(), m);
    }
}

/// A batched activation (`uint8`, zero point 131) times a weight quantized
/// per output channel (`int8`, zero points per column), at sizes that are
/// not multiples of any tile or vector width, then a bias and the
/// requantization: the float path's dequantized result and quantized
/// output, against the integer form's.
const NUMERIC: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(xq: R.Tensor((2, 5, 37), "uint8"), wq: R.Tensor((37, 19), "int8"), sw: R.Tensor((19,), "float32"), zw: R.Tensor((19,), "int8"), b: R.Tensor((19,), "float32")) -> R.Tuple(R.Tensor((2, 5, 19), "float32"), R.Tensor((2, 5, 19), "uint8")):
        with R.dataflow():
            x = R.dequantize(xq, R.const(0.0173, "float32"), R.const(131, "uint8"), axis=-1, out_dtype="float32")
            w = R.dequantize(wq, sw, zw, axis=-1, out_dtype="float32")
            y = R.matmul(x, w)
            z = R.add(y, b)
            q = R.quantize(z, R.const(0.05, "float32"), R.const(128, "uint8"), axis=-1, out_dtype="uint8")
            gv = (z, q)
            R.output(gv)
        return gv
"#;

/// The arguments of [`NUMERIC`], from a fixed xorshift sequence.
fn numeric_args() -> Vec<relax_runtime::Value> {
    use relax_runtime::{Tensor, Value};
    let mut seed = 0x2545_f491u32;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    };
    let xq: Vec<u8> = (0..2 * 5 * 37).map(|_| next() as u8).collect();
    let wq: Vec<i8> = (0..37 * 19).map(|_| next() as i8).collect();
    let sw: Vec<f32> = (0..19).map(|_| (next() % 100 + 1) as f32 * 1e-4).collect();
    let zw: Vec<i8> = (0..19).map(|_| (next() % 21) as i8 - 10).collect();
    let b: Vec<f32> = (0..19)
        .map(|_| (next() % 200) as f32 / 100.0 - 1.0)
        .collect();
    vec![
        Value::Tensor(Tensor::from_vec(&[2, 5, 37], xq).unwrap()),
        Value::Tensor(Tensor::from_vec(&[37, 19], wq).unwrap()),
        Value::Tensor(Tensor::from_vec(&[19], sw).unwrap()),
        Value::Tensor(Tensor::from_vec(&[19], zw).unwrap()),
        Value::Tensor(Tensor::from_vec(&[19], b).unwrap()),
    ]
}

/// The integer form on `targets` against the float path on the
/// interpreter: the float result within rounding (the integer product is
/// exact; the float path rounds each dequantized operand and each sum),
/// the quantized output within one step. With the weight, its scales and
/// zero points bound as constants too (the column sums fold at compile
/// time).
fn numeric(targets: &[crate::backend::Target]) {
    use crate::backend::build;
    use crate::transform::BindParams;
    use relax_runtime::VirtualMachine;
    let module = parse(NUMERIC);
    let args = numeric_args();
    let run = |m: &IRModule, t: &crate::backend::Target, args: &[relax_runtime::Value]| {
        let exec = build(m, t).unwrap();
        let out = VirtualMachine::new(&exec).call("main", args).unwrap();
        let fields = out.as_tuple().unwrap();
        let z = fields[0].as_tensor().unwrap().to_vec::<f32>().unwrap();
        let q = fields[1].as_tensor().unwrap().to_vec::<u8>().unwrap();
        (z, q)
    };
    let (want_z, want_q) = run(&module, &crate::backend::Target::interpreter(), &args);
    let bound = BindParams::new(
        "main",
        ["wq", "sw", "zw"]
            .iter()
            .zip(&args[1..4])
            .map(|(n, v)| (n.to_string(), v.as_tensor().unwrap().clone())),
    )
    .run(module.clone())
    .unwrap();
    let integer = FakeQuantizationToInteger::default().run(module).unwrap();
    let integer_bound = FakeQuantizationToInteger::default().run(bound).unwrap();
    for m in [&integer, &integer_bound] {
        let text = m.to_string();
        assert!(text.contains("out_dtype=\"int32\""), "{text}");
        assert!(!text.contains("R.dequantize"), "{text}");
    }
    let scale = want_z.iter().fold(0f32, |a, v| a.max(v.abs()));
    for t in targets {
        for (m, args) in [
            (&integer, &args[..]),
            (&integer_bound, &[args[0].clone(), args[4].clone()][..]),
        ] {
            let (z, q) = run(m, t, args);
            assert_eq!(z.len(), want_z.len());
            let worst = z
                .iter()
                .zip(&want_z)
                .map(|(g, w)| (g - w).abs())
                .fold(0f32, f32::max);
            assert!(
                worst <= 1e-5 * scale,
                "{t:?}: max difference {worst} (scale {scale})"
            );
            let steps = q
                .iter()
                .zip(&want_q)
                .map(|(g, w)| (i32::from(*g) - i32::from(*w)).abs())
                .max()
                .unwrap();
            assert!(steps <= 1, "{t:?}: {steps} quantization steps off");
        }
    }
}

#[test]
fn the_integer_form_computes_the_float_path_on_the_interpreters() {
    numeric(&[
        crate::backend::Target::interpreter(),
        crate::backend::Target::tir_interpreter(),
    ]);
}

#[cfg(feature = "llvm")]
#[test]
fn the_integer_form_computes_the_float_path_on_llvm() {
    numeric(&[crate::backend::Target::host()]);
}

/// A QDQ convolution as `quantize_static` writes it (`int8` activations
/// with a zero point, weights per output channel with zero point 0), no
/// padding: the integer `conv2d` and the constant-foldable weight sums.
#[test]
fn conv2d_with_per_channel_weights() {
    let before = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(xq: R.Tensor((1, 3, 6, 6), "int8"), wq: R.Tensor((4, 3, 3, 3), "int8"), sw: R.Tensor((4,), "float32")) -> R.Tensor((1, 4, 4, 4), "float32"):
        with R.dataflow():
            x = R.dequantize(xq, R.const(0.1, "float32"), R.const(-3, "int8"), axis=-1, out_dtype="float32")
            w = R.dequantize(wq, sw, R.const(0, "int8"), axis=0, out_dtype="float32")
            gv = R.nn.conv2d(x, w)
            R.output(gv)
        return gv
"#,
    );
    let expected = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(xq: R.Tensor((1, 3, 6, 6), dtype="int8"), wq: R.Tensor((4, 3, 3, 3), dtype="int8"), sw: R.Tensor((4,), dtype="float32")) -> R.Tensor((1, 4, 4, 4), dtype="float32"):
        with R.dataflow():
            lv: R.Tensor((1, 4, 4, 4), dtype="int32") = R.nn.conv2d(xq, wq, strides=[1, 1], padding=[0, 0, 0, 0], dilation=[1, 1], groups=1, data_layout="NCHW", kernel_layout="OIHW", out_layout="NCHW", out_dtype="int32")
            lv1: R.Tensor((4, 3, 3, 3), dtype="int32") = R.astype(wq, dtype="int32")
            lv2: R.Tensor((4, 1, 1, 1), dtype="int32") = R.sum(lv1, axis=[1, 2, 3], keepdims=True)
            lv3: R.Tensor((1, 4, 1, 1), dtype="int32") = R.permute_dims(lv2, axes=[1, 0, 2, 3])
            lv4: R.Tensor((1, 4, 1, 1), dtype="int32") = R.multiply(R.const(-3, "int32"), lv3)
            lv5: R.Tensor((1, 4, 4, 4), dtype="int32") = R.subtract(lv, lv4)
            lv6: R.Tensor((1, 4, 4, 4), dtype="float32") = R.astype(lv5, dtype="float32")
            lv7: R.Tensor((1, 4, 1, 1), dtype="float32") = R.expand_dims(sw, axis=[0, 2, 3])
            lv8: R.Tensor((1, 4, 1, 1), dtype="float32") = R.multiply(R.const(0.1, "float32"), lv7)
            gv: R.Tensor((1, 4, 4, 4), dtype="float32") = R.multiply(lv6, lv8)
            R.output(gv)
        return gv
"#,
    );
    assert_pass(&FakeQuantizationToInteger::default(), before, expected);
}

/// A padded, strided, grouped convolution with every zero point nonzero
/// (the activation's a constant, padded explicitly, or a parameter, whose
/// padding is the weight's border sums; the weight's per output channel),
/// at odd sizes: the integer form against the float path on `targets`.
fn conv_numeric(targets: &[crate::backend::Target]) {
    use crate::backend::build;
    use relax_runtime::{Tensor, Value, VirtualMachine};
    let text = |zx_param: &str, zx: &str| {
        format!(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(xq: R.Tensor((2, 4, 9, 7), "uint8"), wq: R.Tensor((6, 2, 3, 3), "int8"), sw: R.Tensor((6,), "float32"), zw: R.Tensor((6,), "int8"){zx_param}) -> R.Tensor((2, 6, 5, 4), "float32"):
        with R.dataflow():
            x = R.dequantize(xq, R.const(0.031, "float32"), {zx}, axis=-1, out_dtype="float32")
            w = R.dequantize(wq, sw, zw, axis=0, out_dtype="float32")
            gv = R.nn.conv2d(x, w, strides=[2, 2], padding=[1, 1, 1, 2], groups=2)
            R.output(gv)
        return gv
"#
        )
    };
    let mut seed = 0x7f4a_7c15u32;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    };
    let xq: Vec<u8> = (0..2 * 4 * 9 * 7).map(|_| next() as u8).collect();
    let wq: Vec<i8> = (0..6 * 2 * 9).map(|_| next() as i8).collect();
    let sw: Vec<f32> = (0..6).map(|_| (next() % 100 + 1) as f32 * 1e-3).collect();
    let zw: Vec<i8> = (0..6).map(|_| (next() % 11) as i8 - 5).collect();
    let mut args = vec![
        Value::Tensor(Tensor::from_vec(&[2, 4, 9, 7], xq).unwrap()),
        Value::Tensor(Tensor::from_vec(&[6, 2, 3, 3], wq).unwrap()),
        Value::Tensor(Tensor::from_vec(&[6], sw).unwrap()),
        Value::Tensor(Tensor::from_vec(&[6], zw).unwrap()),
    ];
    let cases = [
        (text("", r#"R.const(77, "uint8")"#), true),
        (text(r#", zx: R.Tensor((), "uint8")"#, "zx"), false),
    ];
    for (source, padded) in cases {
        if !padded {
            args.push(Value::Tensor(Tensor::from_vec(&[], vec![77u8]).unwrap()));
        }
        let module = parse(&source);
        let run = |m: &IRModule, t: &crate::backend::Target| {
            let exec = build(m, t).unwrap();
            let out = VirtualMachine::new(&exec).call("main", &args).unwrap();
            out.as_tensor().unwrap().to_vec::<f32>().unwrap()
        };
        let want = run(&module, &crate::backend::Target::interpreter());
        let integer = FakeQuantizationToInteger::default().run(module).unwrap();
        let text = integer.to_string();
        assert!(
            text.contains("R.nn.pad") == padded && !text.contains("R.dequantize"),
            "{text}"
        );
        let scale = want.iter().fold(0f32, |a, v| a.max(v.abs()));
        for t in targets {
            let got = run(&integer, t);
            assert_eq!(got.len(), want.len());
            let worst = got
                .iter()
                .zip(&want)
                .map(|(g, w)| (g - w).abs())
                .fold(0f32, f32::max);
            assert!(
                worst <= 1e-5 * scale,
                "{t:?}: max difference {worst} (scale {scale})\n{text}"
            );
        }
    }
}

#[test]
fn the_integer_conv2d_computes_the_float_path_on_the_interpreters() {
    conv_numeric(&[
        crate::backend::Target::interpreter(),
        crate::backend::Target::tir_interpreter(),
    ]);
}

#[cfg(feature = "llvm")]
#[test]
fn the_integer_conv2d_computes_the_float_path_on_llvm() {
    conv_numeric(&[crate::backend::Target::host()]);
}

/// `matmul_only()` leaves a QDQ convolution as it is.
#[test]
fn matmul_only_leaves_convolutions_alone() {
    let m = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(xq: R.Tensor((1, 3, 6, 6), "int8"), wq: R.Tensor((4, 3, 3, 3), "int8")) -> R.Tensor((1, 4, 4, 4), "float32"):
        with R.dataflow():
            x = R.dequantize(xq, R.const(0.1, "float32"), R.const(-3, "int8"), axis=-1, out_dtype="float32")
            w = R.dequantize(wq, R.const(0.2, "float32"), R.const(0, "int8"), axis=0, out_dtype="float32")
            gv = R.nn.conv2d(x, w)
            R.output(gv)
        return gv
"#,
    );
    assert_pass(&FakeQuantizationToInteger::matmul_only(), m.clone(), m);
}

/// Attention's heads as `quantize_static` writes them: every layout op
/// wrapped in a dequantize/quantize pair with the same parameters. The
/// pairs go (item 5), the layout ops run on the 8-bit tensor, and the
/// batched matmul of the two heads becomes an integer one.
#[test]
fn identity_requantizations_around_layout_ops_go() {
    let before = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(aq: R.Tensor((2, 3, 8), "int8"), bq: R.Tensor((2, 4, 3, 2), "int8")) -> R.Tensor((2, 4, 3, 3), "float32"):
        with R.dataflow():
            a = R.dequantize(aq, R.const(0.006358409, "float32"), R.const(-2, "int8"), axis=-1, out_dtype="float32")
            a1 = R.reshape(a, R.shape([2, 3, 4, 2]))
            a1q = R.quantize(a1, R.const(0.006358409, "float32"), R.const(-2, "int8"), axis=-1, out_dtype="int8")
            a1d = R.dequantize(a1q, R.const(0.006358409, "float32"), R.const(-2, "int8"), axis=-1, out_dtype="float32")
            a2 = R.permute_dims(a1d, axes=[0, 2, 1, 3])
            a2q = R.quantize(a2, R.const(0.006358409, "float32"), R.const(-2, "int8"), axis=-1, out_dtype="int8")
            a2d = R.dequantize(a2q, R.const(0.006358409, "float32"), R.const(-2, "int8"), axis=-1, out_dtype="float32")
            b = R.dequantize(bq, R.const(0.25, "float32"), R.const(0, "int8"), axis=-1, out_dtype="float32")
            bt = R.permute_dims(b, axes=[0, 1, 3, 2])
            btq = R.quantize(bt, R.const(0.25, "float32"), R.const(0, "int8"), axis=-1, out_dtype="int8")
            btd = R.dequantize(btq, R.const(0.25, "float32"), R.const(0, "int8"), axis=-1, out_dtype="float32")
            gv = R.matmul(a2d, btd)
            R.output(gv)
        return gv
"#,
    );
    let expected = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(aq: R.Tensor((2, 3, 8), dtype="int8"), bq: R.Tensor((2, 4, 3, 2), dtype="int8")) -> R.Tensor((2, 4, 3, 3), dtype="float32"):
        with R.dataflow():
            a1q: R.Tensor((2, 3, 4, 2), dtype="int8") = R.reshape(aq, R.shape([2, 3, 4, 2]))
            a2q: R.Tensor((2, 4, 3, 2), dtype="int8") = R.permute_dims(a1q, axes=[0, 2, 1, 3])
            btq: R.Tensor((2, 4, 2, 3), dtype="int8") = R.permute_dims(bq, axes=[0, 1, 3, 2])
            lv: R.Tensor((2, 4, 3, 3), dtype="int32") = R.matmul(a2q, btq, out_dtype="int32")
            lv1: R.Tensor((2, 4, 2, 3), dtype="int32") = R.astype(btq, dtype="int32")
            lv2: R.Tensor((2, 4, 1, 3), dtype="int32") = R.sum(lv1, axis=[-2], keepdims=True)
            lv3: R.Tensor((2, 4, 1, 3), dtype="int32") = R.multiply(R.const(-2, "int32"), lv2)
            lv4: R.Tensor((2, 4, 3, 3), dtype="int32") = R.subtract(lv, lv3)
            lv5: R.Tensor((2, 4, 3, 3), dtype="float32") = R.astype(lv4, dtype="float32")
            lv6: R.Tensor((), dtype="float32") = R.multiply(R.const(0.006358409, "float32"), R.const(0.25, "float32"))
            gv: R.Tensor((2, 4, 3, 3), dtype="float32") = R.multiply(lv5, lv6)
            R.output(gv)
        return gv
"#,
    );
    assert_pass(&FakeQuantizationToInteger::default(), before, expected);
}

/// A dequantize straight into a quantize with the same parameters is the
/// 8-bit tensor itself (the binding is an alias of it, and goes).
#[test]
fn an_identity_requantization_is_the_tensor() {
    let before = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(xq: R.Tensor((5, 3), "uint8")) -> R.Tensor((5, 3), "uint8"):
        with R.dataflow():
            x = R.dequantize(xq, R.const(0.5, "float32"), R.const(131, "uint8"), axis=-1, out_dtype="float32")
            y = R.quantize(x, R.const(0.5, "float32"), R.const(131, "uint8"), axis=-1, out_dtype="uint8")
            gv = R.add(y, y)
            R.output(gv)
        return gv
"#,
    );
    let expected = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(xq: R.Tensor((5, 3), dtype="uint8")) -> R.Tensor((5, 3), dtype="uint8"):
        with R.dataflow():
            gv: R.Tensor((5, 3), dtype="uint8") = R.add(xq, xq)
            R.output(gv)
        return gv
"#,
    );
    assert_pass(&FakeQuantizationToInteger::default(), before, expected);
}

/// Requantizations that change the tensor stay: another scale, another
/// zero point, another type, a scale that is not a constant, a subnormal
/// scale (its products lose bits), a layout op the rule does not know.
#[test]
fn requantizations_that_change_the_tensor_stay() {
    let reshape = ("R.reshape(x, R.shape([3, 5]))", "(3, 5)");
    let flip = ("R.flip(x, axis=0)", "(5, 3)");
    let cases = [
        ("0.5", "3", "0.25", "3", "int8", reshape),
        ("0.5", "3", "0.5", "4", "int8", reshape),
        ("0.5", "3", "0.5", "3", "uint8", reshape),
        ("1e-40", "3", "1e-40", "3", "int8", reshape),
        ("0.5", "3", "0.5", "3", "int8", flip),
    ];
    for (s1, z1, s2, z2, out, (layout, shape)) in cases {
        let m = parse(&format!(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(xq: R.Tensor((5, 3), "int8")) -> R.Tensor({shape}, "{out}"):
        with R.dataflow():
            x = R.dequantize(xq, R.const({s1}, "float32"), R.const({z1}, "int8"), axis=-1, out_dtype="float32")
            y = {layout}
            gv = R.quantize(y, R.const({s2}, "float32"), R.const({z2}, "{out}"), axis=-1, out_dtype="{out}")
            R.output(gv)
        return gv
"#
        ));
        assert_pass(&FakeQuantizationToInteger::default(), m.clone(), m);
    }
    // A scale known only at run time.
    let m = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(xq: R.Tensor((5, 3), "int8"), s: R.Tensor((), "float32")) -> R.Tensor((5, 3), "int8"):
        with R.dataflow():
            x = R.dequantize(xq, s, R.const(0, "int8"), axis=-1, out_dtype="float32")
            gv = R.quantize(x, s, R.const(0, "int8"), axis=-1, out_dtype="int8")
            R.output(gv)
        return gv
"#,
    );
    assert_pass(&FakeQuantizationToInteger::default(), m.clone(), m);
}

/// Item 5's claim, checked on every byte: for scales across the range the
/// rule accepts (its ends, onnxruntime's calibrated ones, powers of two
/// and awkward mantissas) and zero points at the ends of the types,
/// `quantize(dequantize(x))` on the reference kernels gives `x` back for
/// every `int8` and `uint8` value.
#[test]
fn identity_requantization_is_exact_for_every_byte() {
    use crate::backend::{build, Target};
    use relax_runtime::{Tensor, Value, VirtualMachine};
    let scales = [
        2f64.powi(-100),
        2f64.powi(100),
        0.006358409,
        0.0027934227,
        1.0 / 3.0,
        0.1,
        1.0,
        7.0e-20,
        3.3e29,
    ];
    for (dtype, zeros) in [("int8", [-128i64, -2, 0, 127]), ("uint8", [0, 1, 128, 255])] {
        let values: Vec<i64> = if dtype == "int8" {
            (-128..128).collect()
        } else {
            (0..256).collect()
        };
        for s in scales {
            let s32 = s as f32;
            for z in zeros {
                let text = format!(
                    r#"
@I.ir_module
class Module:
    @R.function
    def main(xq: R.Tensor((256,), "{dtype}")) -> R.Tensor((256,), "{dtype}"):
        with R.dataflow():
            x = R.dequantize(xq, R.const({s32:e}, "float32"), R.const({z}, "{dtype}"), axis=-1, out_dtype="float32")
            gv = R.quantize(x, R.const({s32:e}, "float32"), R.const({z}, "{dtype}"), axis=-1, out_dtype="{dtype}")
            R.output(gv)
        return gv
"#
                );
                let m = parse(&text);
                let rewritten = FakeQuantizationToInteger::default().run(m.clone()).unwrap();
                assert!(
                    !rewritten.to_string().contains("R.quantize"),
                    "scale {s32:e}: {rewritten}"
                );
                let x = if dtype == "int8" {
                    let v: Vec<i8> = values.iter().map(|&v| v as i8).collect();
                    Tensor::from_vec(&[256], v).unwrap()
                } else {
                    let v: Vec<u8> = values.iter().map(|&v| v as u8).collect();
                    Tensor::from_vec(&[256], v).unwrap()
                };
                let exec = build(&m, &Target::interpreter()).unwrap();
                let y = VirtualMachine::new(&exec)
                    .call("main", &[Value::Tensor(x.clone())])
                    .unwrap();
                assert_eq!(
                    y.as_tensor().unwrap().to_f64_vec(),
                    x.to_f64_vec(),
                    "{dtype}, scale {s32:e}, zero point {z}"
                );
            }
        }
    }
}

/// PyTorch's masked-softmax guard on a quantized softmax (item 6): the
/// `where(isnan(p), 0, p)` of a dequantized `p` is `p`, and the quantize
/// after it reads the dequantize directly.
#[test]
fn a_nan_guard_of_a_dequantized_tensor_goes() {
    let before = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(s: R.Tensor((2, 7), "float32")) -> R.Tensor((2, 7), "int8"):
        with R.dataflow():
            p = R.nn.softmax(s, axis=1)
            pq = R.quantize(p, R.const(0.003921569, "float32"), R.const(-128, "int8"), axis=-1, out_dtype="int8")
            pd = R.dequantize(pq, R.const(0.003921569, "float32"), R.const(-128, "int8"), axis=-1, out_dtype="float32")
            nan = R.isnan(pd)
            g = R.where(nan, R.const(0.0, "float32"), pd)
            gv = R.quantize(g, R.const(0.0002855734, "float32"), R.const(-128, "int8"), axis=-1, out_dtype="int8")
            R.output(gv)
        return gv
"#,
    );
    let expected = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(s: R.Tensor((2, 7), dtype="float32")) -> R.Tensor((2, 7), dtype="int8"):
        with R.dataflow():
            p: R.Tensor((2, 7), dtype="float32") = R.nn.softmax(s, axis=1)
            pq: R.Tensor((2, 7), dtype="int8") = R.quantize(p, R.const(0.003921569, "float32"), R.const(-128, "int8"), axis=-1, out_dtype="int8")
            pd: R.Tensor((2, 7), dtype="float32") = R.dequantize(pq, R.const(0.003921569, "float32"), R.const(-128, "int8"), axis=-1, out_dtype="float32")
            gv: R.Tensor((2, 7), dtype="int8") = R.quantize(pd, R.const(0.0002855734, "float32"), R.const(-128, "int8"), axis=-1, out_dtype="int8")
            R.output(gv)
        return gv
"#,
    );
    assert_pass(&FakeQuantizationToInteger::default(), before, expected);
}

/// Guards that may take their other branch stay: a scale that is not a
/// constant (it may be NaN), an infinite one (infinity times a zero
/// difference), a `float16` dequantize, a guard of another tensor, a
/// replacement that broadcasts the result wider.
#[test]
fn nan_guards_that_may_fire_stay() {
    let cases = [
        (
            "x: R.Tensor((2, 7), \"int8\"), s: R.Tensor((), \"float32\")",
            "s",
            "float32",
            "pd",
            "R.const(0.0, \"float32\")",
            "(2, 7)",
        ),
        (
            "x: R.Tensor((2, 7), \"int8\")",
            "R.const(inf, \"float32\")",
            "float32",
            "pd",
            "R.const(0.0, \"float32\")",
            "(2, 7)",
        ),
        (
            "x: R.Tensor((2, 7), \"int8\")",
            "R.const(0.5, \"float16\")",
            "float16",
            "pd",
            "R.const(0.0, \"float16\")",
            "(2, 7)",
        ),
        (
            "x: R.Tensor((2, 7), \"int8\"), y: R.Tensor((2, 7), \"float32\")",
            "R.const(0.5, \"float32\")",
            "float32",
            "y",
            "R.const(0.0, \"float32\")",
            "(2, 7)",
        ),
        (
            "x: R.Tensor((2, 7), \"int8\"), c: R.Tensor((3, 2, 7), \"float32\")",
            "R.const(0.5, \"float32\")",
            "float32",
            "pd",
            "c",
            "(3, 2, 7)",
        ),
    ];
    for (params, scale, float, other, c, shape) in cases {
        let m = parse(&format!(
            r#"
@I.ir_module
class Module:
    @R.function
    def main({params}) -> R.Tensor({shape}, "{float}"):
        with R.dataflow():
            pd = R.dequantize(x, {scale}, R.const(1, "int8"), axis=-1, out_dtype="{float}")
            nan = R.isnan(pd)
            gv = R.where(nan, {c}, {other})
            R.output(gv)
        return gv
"#
        ));
        assert_pass(&FakeQuantizationToInteger::default(), m.clone(), m);
    }
}
