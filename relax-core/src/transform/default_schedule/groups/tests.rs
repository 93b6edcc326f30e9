//! A grouped convolution in NHWC is tiled group by group: the scheduled
//! loops, and the host build against the oracle.

use crate::backend::{build, Target};
use crate::transform::test_util::{assert_close, parse, run_main_f32};
use crate::transform::{BindParams, Pass};
use relax_runtime::{Tensor, Value};

/// An NCHW convolution of `(n, 16, 9, 11)` by a constant `(16, 4, 3, 3)`
/// weight in 4 groups of 4 channels, padded by 1, then relu: the host's
/// `ConvertLayout` puts it in NHWC.
fn module(stride: i64) -> crate::ir::IRModule {
    let (h, w) = ((9 + 2 - 3) / stride + 1, (11 + 2 - 3) / stride + 1);
    let m = parse(&format!(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 16, 9, 11), dtype="float32"), w: R.Tensor((16, 4, 3, 3), dtype="float32")) -> R.Tensor(("n", 16, {h}, {w}), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            y = R.nn.conv2d(x, w, strides=[{stride}, {stride}], padding=[1, 1, 1, 1], groups=4)
            z = R.nn.relu(y)
            R.output(z)
        return z
"#
    ));
    let data = (0..16 * 4 * 9)
        .map(|v| ((v * 37 % 101) as f32 - 50.0) / 50.0)
        .collect();
    let weight = Tensor::from_vec(&[16, 4, 3, 3], data).unwrap();
    BindParams::new("main", [("w".to_string(), weight)])
        .run(m)
        .unwrap()
}

/// The channel axis is split by the group's 4 channels: a loop over the
/// groups outside the pixels, tiles of pixels by one group's channels,
/// and the image read at the group's first channel (a broadcast).
#[test]
fn a_grouped_convolution_is_tiled_by_group() {
    for bits in [256, 512] {
        let target = Target::host().with_vector_bits(bits);
        let scheduled = crate::backend::pipeline(&target)
            .run(module(1))
            .unwrap()
            .to_string();
        assert!(scheduled.contains("_g in range(4)"), "{bits}: {scheduled}");
        assert!(scheduled.contains("T.vectorized(4)"), "{bits}: {scheduled}");
        assert!(scheduled.contains("_g * 4]"), "{bits}: {scheduled}");
    }
}

/// The host build gives the oracle's numbers for 1 and 2 images, at
/// strides 1 and 2, on 256- and 512-bit vectors.
#[test]
fn grouped_convolutions_agree_with_the_oracle() {
    for stride in [1, 2] {
        let m = module(stride);
        let oracle = build(&m, &Target::interpreter()).unwrap();
        for bits in [256, 512] {
            let host = build(&m, &Target::host().with_vector_bits(bits)).unwrap();
            for n in [1, 2] {
                let x: Vec<f32> = (0..n * 16 * 9 * 11)
                    .map(|v| ((v * 13 % 29) as f32 - 14.0) / 7.0)
                    .collect();
                let args: Vec<Value> = vec![Tensor::from_vec(&[n, 16, 9, 11], x).unwrap().into()];
                let (got, want) = (run_main_f32(&host, &args), run_main_f32(&oracle, &args));
                assert_close(
                    &got,
                    &want,
                    &format!("stride {stride}, {bits} bits, {n} images"),
                );
            }
        }
    }
}
