//! The `float16` and `bfloat16` kernels checked against `float32`: each op
//! runs on half-precision inputs and, separately, in `float32` on the same
//! values widened; the half result must be the `float32` result rounded to
//! the half type (bit for bit where both compute the same `f32` values,
//! within one unit in the last place where the `f32` result was itself
//! rounded from `f64`). The accumulating kernels are also checked to sum in
//! `f32`, not in the element type.

use crate::data_type::DataType;
use crate::executable::KernelAttr;
use crate::kernels::testing::{ints, run, tv};
use crate::value::Value;

const HALVES: [DataType; 2] = [DataType::f16(), DataType::bf16()];

/// `v` converted to `dtype` by the `astype` kernel.
fn to(v: &Value, dtype: DataType) -> Value {
    run(
        "relax.astype",
        std::slice::from_ref(v),
        &[("dtype", KernelAttr::DataType(dtype))],
    )
    .unwrap()
}

/// The 16-bit patterns of a half tensor as integers that order like the
/// values (sign-magnitude to two's complement), so that their difference
/// counts units in the last place.
fn ordered_bits(v: &Value) -> Vec<Option<i32>> {
    let t = v.as_tensor().unwrap();
    assert_eq!(t.dtype().bits(), 16);
    let f = t.to_f64_vec();
    t.as_bytes()
        .chunks_exact(2)
        .zip(f)
        .map(|(b, x)| {
            let bits = u16::from_le_bytes([b[0], b[1]]) as i32;
            (!x.is_nan()).then_some(if bits & 0x8000 != 0 {
                -(bits & 0x7fff)
            } else {
                bits
            })
        })
        .collect()
}

/// Runs `op` on `inputs` (float32 tensors, indices as they are) in each
/// half type and in float32 on the same values, and asserts the half
/// result is the float32 one rounded, within `ulps` units in the last place
/// (a result that is not a float, as `argmax`'s, must be the same).
#[track_caller]
fn check(op: &str, inputs: &[Value], attrs: &[(&str, KernelAttr)], ulps: i32) {
    for dtype in HALVES {
        let narrow = |v: &Value| {
            let t = v.as_tensor().unwrap();
            if t.dtype() == DataType::f32() {
                to(v, dtype)
            } else {
                v.clone()
            }
        };
        let halves: Vec<Value> = inputs.iter().map(narrow).collect();
        let widened: Vec<Value> = halves
            .iter()
            .map(|v| match v.as_tensor().unwrap().dtype() {
                d if d == dtype => to(v, DataType::f32()),
                _ => v.clone(),
            })
            .collect();
        let got = run(op, &halves, attrs).unwrap_or_else(|e| panic!("{op} in {dtype}: {e}"));
        let wide = run(op, &widened, attrs).unwrap();
        if wide.as_tensor().unwrap().dtype() != DataType::f32() {
            // Indices or booleans: the same as in float32.
            assert_eq!(got.as_tensor(), wide.as_tensor(), "{op} in {dtype}");
            continue;
        }
        let want = to(&wide, dtype);
        let (g, w) = (got.as_tensor().unwrap(), want.as_tensor().unwrap());
        assert_eq!(g.dtype(), dtype, "{op}");
        assert_eq!(g.shape(), w.shape(), "{op} in {dtype}");
        for (i, (a, b)) in ordered_bits(&got)
            .into_iter()
            .zip(ordered_bits(&want))
            .enumerate()
        {
            let close = match (a, b) {
                (Some(a), Some(b)) => (a - b).abs() <= ulps,
                (a, b) => a == b,
            };
            assert!(
                close,
                "{op} in {dtype}, element {i}: got {:?}, want {:?}",
                g.to_f64_vec(),
                w.to_f64_vec()
            );
        }
    }
}

/// A float32 tensor of `shape` with varied values of both signs.
fn data(shape: &[i64], seed: u32) -> Value {
    let n: i64 = shape.iter().product();
    let v = (0..n as u32)
        .map(|i| {
            let k = i
                .wrapping_mul(2654435761)
                .wrapping_add(seed.wrapping_mul(40503))
                % 1000;
            (k as f32 - 500.0) / 97.0
        })
        .collect();
    tv(shape, v)
}

#[test]
fn elementwise_ops_round_the_f32_result_once() {
    let (a, b) = (data(&[3, 4], 1), data(&[4], 2));
    for op in [
        "relax.add",
        "relax.subtract",
        "relax.multiply",
        "relax.divide",
        "relax.maximum",
        "relax.minimum",
        "relax.floor_divide",
        "relax.floor_mod",
        "relax.mod",
    ] {
        check(op, &[a.clone(), b.clone()], &[], 0);
    }
    check("relax.power", &[a.clone(), tv(&[], vec![2.0f32])], &[], 0);
    check("relax.less", &[a.clone(), b.clone()], &[], 0);
    for op in [
        "relax.exp",
        "relax.tanh",
        "relax.sigmoid",
        "relax.erf",
        "relax.sin",
        "relax.negative",
        "relax.abs",
        "relax.floor",
        "relax.round",
        "relax.sign",
        "relax.square",
        "relax.nn.relu",
        "relax.nn.gelu",
        "relax.nn.silu",
    ] {
        check(op, std::slice::from_ref(&a), &[], 1);
    }
    let pos = run("relax.abs", std::slice::from_ref(&a), &[]).unwrap();
    for op in ["relax.sqrt", "relax.log", "relax.rsqrt"] {
        check(op, std::slice::from_ref(&pos), &[], 1);
    }
    let c = tv(&[3, 4], (0..12).map(|i| i % 3 == 0).collect());
    check("relax.where", &[c, a.clone(), b], &[], 0);
    check("relax.isnan", &[tv(&[2], vec![f32::NAN, 1.0])], &[], 0);
}

#[test]
fn accumulating_kernels_sum_in_f32() {
    let out_void = ("out_dtype", KernelAttr::DataType(DataType::void()));
    check(
        "relax.matmul",
        &[data(&[2, 3, 5], 3), data(&[5, 4], 4)],
        std::slice::from_ref(&out_void),
        0,
    );
    // 3000 ones: in float16 one at a time the sum would stop at 2048.
    let ones = tv(&[1, 3000], vec![1.0f32; 3000]);
    let col = tv(&[3000, 1], vec![1.0f32; 3000]);
    check(
        "relax.matmul",
        &[ones.clone(), col],
        std::slice::from_ref(&out_void),
        0,
    );
    let m = run(
        "relax.matmul",
        &[
            to(&ones, DataType::f16()),
            to(&tv(&[3000, 1], vec![1.0f32; 3000]), DataType::f16()),
        ],
        std::slice::from_ref(&out_void),
    )
    .unwrap();
    assert_eq!(m.as_tensor().unwrap().to_f64_vec(), vec![3000.0]);
    let sum = run("relax.sum", &[to(&ones, DataType::f16())], &[]).unwrap();
    assert_eq!(sum.as_tensor().unwrap().to_f64_vec(), vec![3000.0]);

    let conv = [
        ("strides", ints(&[1, 1])),
        ("padding", ints(&[1, 0, 0, 1])),
        ("dilation", ints(&[1, 1])),
        ("groups", KernelAttr::Int(1)),
        ("data_layout", KernelAttr::Str("NCHW".into())),
        ("kernel_layout", KernelAttr::Str("OIHW".into())),
        ("out_layout", KernelAttr::None),
        out_void.clone(),
    ];
    check(
        "relax.nn.conv2d",
        &[data(&[1, 3, 5, 5], 5), data(&[2, 3, 3, 3], 6)],
        &conv,
        0,
    );
    let mut transpose = conv.to_vec();
    transpose[5] = ("kernel_layout", KernelAttr::Str("IOHW".into()));
    transpose.push(("output_padding", ints(&[0, 0])));
    check(
        "relax.nn.conv2d_transpose",
        &[data(&[1, 3, 4, 4], 7), data(&[3, 2, 3, 3], 8)],
        &transpose,
        0,
    );
    let pool = [
        ("pool_size", ints(&[2, 2])),
        ("strides", ints(&[1, 1])),
        ("padding", ints(&[0, 0, 1, 1])),
        ("dilation", ints(&[1, 1])),
        ("ceil_mode", KernelAttr::Bool(false)),
        ("count_include_pad", KernelAttr::Bool(false)),
        ("layout", KernelAttr::Str("NCHW".into())),
    ];
    let x = data(&[1, 2, 4, 4], 9);
    check("relax.nn.avg_pool2d", std::slice::from_ref(&x), &pool, 0);
    check("relax.nn.max_pool2d", std::slice::from_ref(&x), &pool, 0);
    check(
        "relax.cumsum",
        &[data(&[3, 40], 10)],
        &[("axis", KernelAttr::Int(1))],
        0,
    );
}

#[test]
fn reductions_and_normalizations_round_once() {
    let x = data(&[3, 4, 5], 11);
    for op in ["relax.sum", "relax.mean", "relax.max", "relax.min"] {
        check(op, std::slice::from_ref(&x), &[("axis", ints(&[1, 2]))], 1);
    }
    check(
        "relax.prod",
        &[data(&[4, 3], 12)],
        &[("axis", ints(&[1]))],
        1,
    );
    check(
        "relax.argmax",
        std::slice::from_ref(&x),
        &[("axis", KernelAttr::Int(2))],
        0,
    );
    for op in ["relax.nn.softmax", "relax.nn.log_softmax"] {
        check(
            op,
            std::slice::from_ref(&x),
            &[("axis", KernelAttr::Int(-1))],
            1,
        );
    }
    check(
        "relax.nn.layer_norm",
        &[x.clone(), data(&[5], 13), data(&[5], 14)],
        &[
            ("axes", ints(&[-1])),
            ("epsilon", KernelAttr::Float(1e-5)),
            ("center", KernelAttr::Bool(true)),
            ("scale", KernelAttr::Bool(true)),
        ],
        1,
    );
    let (q, k, v) = (
        data(&[1, 3, 4, 2], 16),
        data(&[1, 5, 2, 2], 17),
        data(&[1, 5, 2, 3], 18),
    );
    let mask = ("causal_mask", KernelAttr::Str("BottomRight".into()));
    check(
        "relax.nn.attention",
        &[q.clone(), k.clone(), v.clone()],
        &[mask],
        1,
    );
    check(
        "relax.nn.attention_bias",
        &[q, k, v, data(&[1, 1, 3, 5], 19)],
        &[("scale", KernelAttr::Float(0.25))],
        1,
    );
}

#[test]
fn data_movement_keeps_the_bits() {
    let x = data(&[2, 3, 4], 15);
    check(
        "relax.permute_dims",
        std::slice::from_ref(&x),
        &[("axes", ints(&[2, 0, 1]))],
        0,
    );
    check(
        "relax.take",
        &[x.clone(), tv(&[2], vec![2i64, 0])],
        &[("axis", KernelAttr::Int(1))],
        0,
    );
    check("relax.flip", &[x], &[("axis", KernelAttr::Int(0))], 0);
}
