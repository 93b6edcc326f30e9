//! ConvertLayout: the rewrite (before/expected), what it leaves alone,
//! and the host build of a mobile block against the oracle.

use super::*;
use crate::backend::{build, Target};
use crate::ir::structural_equal::assert_structural_equal;
use crate::transform::test_util::{assert_close, assert_pass, parse, run_main_f32};
use crate::transform::BindParams;
use relax_runtime::{Tensor, Value};

fn nhwc() -> ConvertLayout {
    ConvertLayout::new([("relax.nn.conv2d", vec!["NHWC", "HWIO"])]).unwrap()
}

/// A mobile block: a depthwise convolution, its bias and relu6, a
/// residual, a pointwise convolution and a global average pool.
const BLOCK: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 16, 8, 8), dtype="float32"), w: R.Tensor((16, 1, 3, 3), dtype="float32"), b: R.Tensor((1, 16, 1, 1), dtype="float32"), p: R.Tensor((24, 16, 1, 1), dtype="float32")) -> R.Tensor((1, 24, 1, 1), dtype="float32"):
        with R.dataflow():
            y = R.nn.conv2d(x, w, padding=[1, 1, 1, 1], groups=16)
            a = R.add(y, b)
            c = R.maximum(a, R.const(0.0, "float32"))
            r = R.minimum(c, R.const(6.0, "float32"))
            s = R.add(r, x)
            z = R.nn.conv2d(s, p)
            m = R.mean(z, axis=[2, 3], keepdims=True)
            R.output(m)
        return m
"#;

/// The input is permuted once for both its uses, the per-channel bias
/// is permuted, the elementwise chain and the pool stay NHWC, and only
/// the block's output is permuted back (bound to its own name).
#[test]
fn a_mobile_block_runs_nhwc_between_its_input_and_output() {
    let expected = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 16, 8, 8), dtype="float32"), w: R.Tensor((16, 1, 3, 3), dtype="float32"), b: R.Tensor((1, 16, 1, 1), dtype="float32"), p: R.Tensor((24, 16, 1, 1), dtype="float32")) -> R.Tensor((1, 24, 1, 1), dtype="float32"):
        with R.dataflow():
            x_t = R.permute_dims(x, axes=[0, 2, 3, 1])
            w_t = R.permute_dims(w, axes=[2, 3, 1, 0])
            y = R.nn.conv2d(x_t, w_t, strides=[1, 1], padding=[1, 1, 1, 1], dilation=[1, 1], groups=16, data_layout="NHWC", kernel_layout="HWIO", out_layout="NHWC", out_dtype=None)
            b_t = R.permute_dims(b, axes=[0, 2, 3, 1])
            a = R.add(y, b_t)
            c = R.maximum(a, R.const(0.0, "float32"))
            r = R.minimum(c, R.const(6.0, "float32"))
            s = R.add(r, x_t)
            p_t = R.permute_dims(p, axes=[2, 3, 1, 0])
            z = R.nn.conv2d(s, p_t, strides=[1, 1], padding=[0, 0, 0, 0], dilation=[1, 1], groups=1, data_layout="NHWC", kernel_layout="HWIO", out_layout="NHWC", out_dtype=None)
            m_t = R.mean(z, axis=[1, 2], keepdims=True)
            m = R.permute_dims(m_t, axes=[0, 3, 1, 2])
            R.output(m)
        return m
"#,
    );
    assert_pass(&nhwc(), parse(BLOCK), expected);
}

/// An operator the pass does not know (a reshape) gets the value back
/// in its own layout, bound to the original variable.
#[test]
fn an_unknown_operator_reads_the_original_layout() {
    let before = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 16, 4, 4), dtype="float32"), w: R.Tensor((8, 16, 1, 1), dtype="float32")) -> R.Tensor((1, 128), dtype="float32"):
        with R.dataflow():
            y = R.nn.conv2d(x, w)
            z = R.nn.relu(y)
            f = R.reshape(z, R.shape([1, 128]))
            R.output(f)
        return f
"#,
    );
    let expected = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 16, 4, 4), dtype="float32"), w: R.Tensor((8, 16, 1, 1), dtype="float32")) -> R.Tensor((1, 128), dtype="float32"):
        with R.dataflow():
            x_t = R.permute_dims(x, axes=[0, 2, 3, 1])
            w_t = R.permute_dims(w, axes=[2, 3, 1, 0])
            y = R.nn.conv2d(x_t, w_t, strides=[1, 1], padding=[0, 0, 0, 0], dilation=[1, 1], groups=1, data_layout="NHWC", kernel_layout="HWIO", out_layout="NHWC", out_dtype=None)
            z_t = R.nn.relu(y)
            z = R.permute_dims(z_t, axes=[0, 3, 1, 2])
            f = R.reshape(z, R.shape([1, 128]))
            R.output(f)
        return f
"#,
    );
    assert_pass(&nhwc(), before, expected);
}

/// `text` (`BLOCK` or a variant) with its weights and bias bound as
/// constants (an ONNX model's initializers), the depthwise weight of
/// `group_in` input channels per group.
fn block_with_constants(text: &str, group_in: i64) -> crate::ir::IRModule {
    let consts = [
        ("w", tensor(&[16, group_in, 3, 3], 2)),
        ("b", tensor(&[1, 16, 1, 1], 3)),
        ("p", tensor(&[24, 16, 1, 1], 4)),
    ];
    BindParams::new("main", consts.map(|(n, t)| (n.to_string(), t)))
        .run(parse(text))
        .unwrap()
}

/// The build's rule converts a block whose weights are constants, with
/// a depthwise convolution or a grouped one (RegNet's), and leaves as
/// they are a function without grouped convolutions (here
/// one whose 3 × 3 convolution Winograd takes) and one whose weights are
/// passed in (they would be permuted on every call); the layouts a user
/// asks for are checked.
#[test]
fn the_host_rule_converts_nets_with_grouped_convolutions_only() {
    let converted = ConvertLayout::for_host()
        .run(block_with_constants(BLOCK, 1))
        .unwrap();
    assert!(converted.to_string().contains("data_layout=\"NHWC\""));
    let grouped = BLOCK
        .replace(", groups=16)", ", groups=4)")
        .replace("w: R.Tensor((16, 1, 3, 3)", "w: R.Tensor((16, 4, 3, 3)");
    let converted = ConvertLayout::for_host()
        .run(block_with_constants(&grouped, 4))
        .unwrap();
    assert!(converted.to_string().contains("data_layout=\"NHWC\""));
    let plain = BLOCK
        .replace(", groups=16)", ")")
        .replace("w: R.Tensor((16, 1, 3, 3)", "w: R.Tensor((16, 16, 3, 3)");
    for m in [block_with_constants(&plain, 16), parse(BLOCK)] {
        assert_structural_equal(&ConvertLayout::for_host().run(m.clone()).unwrap(), &m);
    }
    let err = ConvertLayout::new([("relax.nn.conv2d", vec!["NCWH", "OIHW"])]).unwrap_err();
    assert!(err.to_string().contains("NHWC or NCHW"), "{err}");
    let err = ConvertLayout::new([("relax.nn.max_pool2d", vec!["NHWC"])]).unwrap_err();
    assert!(err.to_string().contains("relax.nn.max_pool2d"), "{err}");
}

fn tensor(shape: &[i64], seed: i64) -> Tensor {
    let n: i64 = shape.iter().product();
    let data = (0..n)
        .map(|v| (((v * 37 + seed) % 23) as f32 - 11.0) / 8.0)
        .collect();
    Tensor::from_vec(shape, data).unwrap()
}

/// The host build (which converts the block, its 1 × 1 convolution a
/// matrix product) gives the oracle's numbers, the oracle running the
/// block as written; so does the oracle on the converted module.
#[test]
fn the_converted_block_computes_the_same_values() {
    let m = block_with_constants(BLOCK, 1);
    let args: Vec<Value> = vec![tensor(&[1, 16, 8, 8], 1).into()];
    let want = run_main_f32(&build(&m, &Target::interpreter()).unwrap(), &args);
    let converted = nhwc().run(m.clone()).unwrap();
    // The host's pointwise convolution is a matmul on prepacked panels.
    let lowered = crate::backend::host_pipeline_unscheduled()
        .run(m.clone())
        .unwrap()
        .to_string();
    assert!(lowered.contains("_panels"), "{lowered}");
    let runs = [
        build(&converted, &Target::interpreter()).unwrap(),
        build(&m, &Target::host()).unwrap(),
    ];
    for exec in &runs {
        let got = run_main_f32(exec, &args);
        assert_close(&got, &want, "the converted module");
    }
}

/// `text` with `consts` bound as constants, and that module through the
/// host's rule, printed.
fn host_converted(text: &str, consts: Vec<(&str, Tensor)>) -> (crate::ir::IRModule, String) {
    let m = BindParams::new("main", consts.into_iter().map(|(n, t)| (n.to_string(), t)))
        .run(parse(text))
        .unwrap();
    let converted = ConvertLayout::for_host()
        .run(m.clone())
        .unwrap()
        .to_string();
    (m, converted)
}

/// The stem's attributes: NCHW image, HWIO weight, NHWC output.
const STEM_LAYOUTS: &str = r#"data_layout="NCHW", kernel_layout="HWIO", out_layout="NHWC""#;

/// The `R.permute_dims` of `converted` outside the constant weights.
fn permutes(converted: &str) -> usize {
    converted
        .lines()
        .filter(|l| l.contains("R.permute_dims(") && !l.contains("metadata["))
        .count()
}

/// An image's stem (3 input channels, a constant weight) in a function
/// the host's rule converts: its data stays NCHW (the image is not
/// permuted) and its output is NHWC (`out_layout`), which the depthwise
/// convolution after it reads with no transpose between them. A 1 × 1
/// convolution of fewer than 16 channels is converted whole. The host
/// build gives the oracle's numbers.
#[test]
fn the_host_rule_keeps_a_stem_reading_nchw_and_writing_nhwc() {
    let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 3, 16, 16), dtype="float32"), s: R.Tensor((16, 3, 3, 3), dtype="float32"), w: R.Tensor((16, 1, 3, 3), dtype="float32"), p: R.Tensor((8, 16, 1, 1), dtype="float32"), q: R.Tensor((24, 8, 1, 1), dtype="float32")) -> R.Tensor((1, 24, 8, 8), dtype="float32"):
        with R.dataflow():
            y = R.nn.conv2d(x, s, strides=[2, 2], padding=[1, 1, 1, 1])
            r = R.nn.relu(y)
            z = R.nn.conv2d(r, w, padding=[1, 1, 1, 1], groups=16)
            u = R.nn.conv2d(z, p)
            v = R.nn.conv2d(u, q)
            R.output(v)
        return v
"#;
    let consts = vec![
        ("s", tensor(&[16, 3, 3, 3], 5)),
        ("w", tensor(&[16, 1, 3, 3], 6)),
        ("p", tensor(&[8, 16, 1, 1], 7)),
        ("q", tensor(&[24, 8, 1, 1], 8)),
    ];
    let (m, converted) = host_converted(text, consts);
    assert!(converted.contains(STEM_LAYOUTS), "{converted}");
    assert_eq!(
        converted.matches(r#"data_layout="NHWC""#).count(),
        3,
        "{converted}"
    );
    // Besides the constant weights, only the output is permuted.
    assert_eq!(permutes(&converted), 1, "{converted}");
    let args: Vec<Value> = vec![tensor(&[1, 3, 16, 16], 1).into()];
    let want = run_main_f32(&build(&m, &Target::interpreter()).unwrap(), &args);
    let got = run_main_f32(&build(&m, &Target::host()).unwrap(), &args);
    assert_close(&got, &want, "the converted module");
}

/// How a reshape's axes group, and the layouts it takes and gives.
#[test]
fn a_reshape_groups_its_axes_and_carries_the_layout() {
    use crate::ir::{PrimExpr, TirVar};
    use reshape::{reshape_groups, reshape_layouts};
    let n = TirVar::new("n").to_expr();
    let c = |v: i64| PrimExpr::from(v);
    // A split of the channels: (n, 116, 28, 28) → (n, 2, 58, 28, 28).
    let from = [n.clone(), c(116), c(28), c(28)];
    let to = [n.clone(), c(2), c(58), c(28), c(28)];
    let groups = reshape_groups(&from, &to).unwrap();
    assert_eq!(
        groups,
        vec![(0..1, 0..1), (1..2, 1..3), (2..3, 3..4), (3..4, 4..5)]
    );
    // Held NHWC: the input as it is, the output (n, 28, 28, 2, 58).
    let (input, output) = reshape_layouts(&[0, 2, 3, 1], &groups);
    assert_eq!((input, output), (vec![0, 2, 3, 1], vec![0, 3, 4, 1, 2]));
    // The shuffle's merge, on a value held with the two axes reversed:
    // first permuted to put them together and in order.
    let groups = reshape_groups(&[n.clone(), c(58), c(2), c(28), c(28)], &from).unwrap();
    let (input, output) = reshape_layouts(&[0, 3, 4, 2, 1], &groups);
    assert_eq!((input, output), (vec![0, 3, 4, 1, 2], vec![0, 2, 3, 1]));
    // A flatten keeps trailing ones in the last group; a symbolic extent
    // matched by nothing, or elements that do not add up, give no groups.
    let flat = reshape_groups(&[n.clone(), c(8), c(1), c(1)], &[n.clone(), c(8)]).unwrap();
    assert_eq!(flat, vec![(0..1, 0..1), (1..4, 1..2)]);
    assert_eq!(reshape_groups(&[n.clone(), c(4)], &[c(4), n.clone()]), None);
    assert_eq!(reshape_groups(&[c(6)], &[c(4)]), None);
}

/// ShuffleNet's unit: a channel shuffle (concat, reshape, transpose,
/// reshape, split) between NHWC convolutions, a max pool and a global
/// average pool. Everything stays NHWC: the shuffle is one transpose of
/// the last two axes of `(1, 4, 4, 2, 8)`, the pools are NHWC, and only
/// the image and the flattened output cross layouts.
const SHUFFLE: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 16, 8, 8), dtype="float32"), w: R.Tensor((8, 16, 1, 1), dtype="float32"), d: R.Tensor((8, 1, 3, 3), dtype="float32"), p: R.Tensor((8, 8, 1, 1), dtype="float32")) -> R.Tensor((1, 16), dtype="float32"):
        with R.dataflow():
            a = R.nn.conv2d(x, w)
            m = R.nn.max_pool2d(a, pool_size=[2, 2], strides=[2, 2])
            b = R.nn.conv2d(m, d, padding=[1, 1, 1, 1], groups=8)
            c = R.concat((m, b), axis=1)
            r = R.reshape(c, R.shape([1, 2, 8, 4, 4]))
            t = R.permute_dims(r, axes=[0, 2, 1, 3, 4])
            s = R.reshape(t, R.shape([1, 16, 4, 4]))
            parts = R.split(s, indices_or_sections=2, axis=1)
            p0 = parts[0]
            p1 = parts[1]
            q = R.nn.conv2d(p1, p)
            u = R.concat((p0, q), axis=1)
            g = R.mean(u, axis=[2, 3], keepdims=False)
            R.output(g)
        return g
"#;

#[test]
fn a_channel_shuffle_stays_nhwc() {
    let converted = nhwc().run(parse(SHUFFLE)).unwrap();
    let text = converted.to_string();
    let permutes: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("R.permute_dims("))
        .collect();
    // The image, the three weights and the shuffle itself.
    assert_eq!(permutes.len(), 5, "{text}");
    assert!(
        permutes.iter().any(|l| l.contains("axes=[0, 1, 2, 4, 3]")),
        "{text}"
    );
    for want in [
        r#"layout="NHWC", out_layout="NHWC""#,
        "R.concat((m, b), axis=3)",
        "R.shape([1, 4, 4, 2, 8])",
        "R.split(s, indices_or_sections=2, axis=3)",
        "R.mean(u, axis=[1, 2], keepdims=False)",
    ] {
        assert!(text.contains(want), "{want} in\n{text}");
    }
    let consts = [
        ("w", tensor(&[8, 16, 1, 1], 2)),
        ("d", tensor(&[8, 1, 3, 3], 3)),
        ("p", tensor(&[8, 8, 1, 1], 4)),
    ];
    let m = BindParams::new("main", consts.map(|(n, t)| (n.to_string(), t)))
        .run(parse(SHUFFLE))
        .unwrap();
    let args: Vec<Value> = vec![tensor(&[1, 16, 8, 8], 1).into()];
    let want = run_main_f32(&build(&m, &Target::interpreter()).unwrap(), &args);
    let converted = nhwc().run(m.clone()).unwrap();
    for exec in [
        build(&converted, &Target::interpreter()).unwrap(),
        build(&converted, &Target::host()).unwrap(),
    ] {
        let got = run_main_f32(&exec, &args);
        assert_close(&got, &want, "the converted module");
    }
}

/// In a function the host's rule leaves NCHW (no depthwise convolution,
/// a 3 × 3 convolution that Winograd takes: ResNet, GoogLeNet), the
/// image's stem alone is converted: it writes NHWC, its relu and max pool
/// run NHWC (vectorized over channels), and one transpose brings the
/// pooled value back to NCHW for the next convolution. The host build
/// gives the oracle's numbers.
#[test]
fn the_host_rule_converts_the_stem_of_a_winograd_net() {
    let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 3, 32, 32), dtype="float32"), s: R.Tensor((16, 3, 7, 7), dtype="float32"), w: R.Tensor((16, 16, 3, 3), dtype="float32")) -> R.Tensor((1, 16, 8, 8), dtype="float32"):
        with R.dataflow():
            y = R.nn.conv2d(x, s, strides=[2, 2], padding=[3, 3, 3, 3])
            r = R.nn.relu(y)
            p = R.nn.max_pool2d(r, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])
            z = R.nn.conv2d(p, w, padding=[1, 1, 1, 1])
            R.output(z)
        return z
"#;
    let consts = vec![
        ("s", tensor(&[16, 3, 7, 7], 5)),
        ("w", tensor(&[16, 16, 3, 3], 6)),
    ];
    let (m, converted) = host_converted(text, consts);
    assert!(converted.contains(STEM_LAYOUTS), "{converted}");
    assert!(converted.contains(r#"layout="NHWC""#), "{converted}");
    assert!(!converted.contains(r#"data_layout="NHWC""#), "{converted}");
    assert_eq!(permutes(&converted), 1, "{converted}");
    let args: Vec<Value> = vec![tensor(&[1, 3, 32, 32], 1).into()];
    let want = run_main_f32(&build(&m, &Target::interpreter()).unwrap(), &args);
    let got = run_main_f32(&build(&m, &Target::host()).unwrap(), &args);
    assert_close(&got, &want, "the converted module");
}
