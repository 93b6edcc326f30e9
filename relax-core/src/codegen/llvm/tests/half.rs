//! `float16` and `bfloat16` buffers: the JIT's bit-manipulation
//! conversions against the `half` crate's (an independent implementation)
//! over many `float32` bit patterns, every half pattern, and the rounding
//! of `float64` sources to odd first.

use super::{bp, buf, func, run, serial, store, var};
use crate::ir::prim_expr::PrimExpr;
use crate::tir::half_float::to_half_bits;
use crate::tir::{ForKind, Stmt};
use relax_runtime::{DataType, Tensor};

fn bits16(t: &Tensor) -> Vec<u16> {
    t.as_bytes()
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect()
}

fn bits32(t: &Tensor) -> Vec<u32> {
    t.as_bytes()
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// `Out[i] = Cast(to, In[i])` over `n` elements, vectorized or serial.
fn cast_kernel(n: i64, from: DataType, to: DataType, kind: ForKind) -> crate::tir::PrimFunc {
    let (a, o, i) = (buf("In", &[n], from), buf("Out", &[n], to), var("i"));
    let body = store(
        &o,
        vec![i.to_expr()],
        PrimExpr::load(&a, vec![i.to_expr()]).cast(to),
    );
    let body = match kind {
        ForKind::Serial => serial(&i, n, body),
        _ => super::for_(&i, n, kind, body),
    };
    func(vec![bp(&a), bp(&o)], body)
}

/// Float32 patterns spread over every exponent, with the specials, ties
/// and the subnormal boundary of both half types.
fn f32_patterns() -> Vec<f32> {
    let mut v: Vec<f32> = (0..1u32 << 16)
        .map(|k| f32::from_bits(k.wrapping_mul(0x9e37_79b1) ^ (k << 16)))
        .collect();
    v.extend([
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        f32::from_bits(0x7f80_0001),
        65504.0,
        65519.99,
        65520.0,
        -65520.0,
        1.0 + 2f32.powi(-11),
        1.0 + 3.0 * 2f32.powi(-11),
        1.0 + 2f32.powi(-8),
        1.0 + 3.0 * 2f32.powi(-8),
        2f32.powi(-14),
        2f32.powi(-24),
        2f32.powi(-25),
        1.5 * 2f32.powi(-25),
        2f32.powi(-15) * 1.999,
        f32::MAX,
        f32::MIN_POSITIVE,
        f32::from_bits(1),
        1.0 / 3.0,
    ]);
    v
}

#[test]
fn float32_to_half_rounds_to_nearest_even_as_the_half_crate_does() {
    let src = f32_patterns();
    let n = src.len() as i64;
    let input = Tensor::from_vec(&[n], src.clone()).unwrap();
    for kind in [ForKind::Serial, ForKind::Vectorized] {
        for to in [DataType::f16(), DataType::bf16()] {
            let out = run(
                cast_kernel(n, DataType::f32(), to, kind),
                std::slice::from_ref(&input),
                &[(to, vec![n])],
                &[],
            );
            for (x, got) in src.iter().zip(bits16(&out[0])) {
                let want = if to.is_bfloat() {
                    half::bf16::from_f32(*x).to_bits()
                } else {
                    half::f16::from_f32(*x).to_bits()
                };
                assert_eq!(got, want, "{to} of {x:e} ({:#010x}), {kind:?}", x.to_bits());
            }
        }
    }
}

#[test]
fn every_half_pattern_widens_exactly() {
    let n = 1i64 << 16;
    for from in [DataType::f16(), DataType::bf16()] {
        let pats: Vec<u16> = (0..=u16::MAX).collect();
        let bytes: Vec<u8> = pats.iter().flat_map(|b| b.to_le_bytes()).collect();
        let input = Tensor::from_bytes(from, &[n], &bytes).unwrap();
        for kind in [ForKind::Serial, ForKind::Vectorized] {
            let out = run(
                cast_kernel(n, from, DataType::f32(), kind),
                std::slice::from_ref(&input),
                &[(DataType::f32(), vec![n])],
                &[],
            );
            for (h, got) in pats.iter().zip(bits32(&out[0])) {
                let want = if from.is_bfloat() {
                    half::bf16::from_bits(*h).to_f32()
                } else {
                    half::f16::from_bits(*h).to_f32()
                };
                let got = f32::from_bits(got);
                if want.is_nan() {
                    assert!(got.is_nan(), "{from} {h:#06x} gives {got}");
                } else {
                    assert_eq!(got.to_bits(), want.to_bits(), "{from} {h:#06x}, {kind:?}");
                }
            }
        }
    }
}

#[test]
fn a_third_is_stored_as_0x3555_and_0x3eab() {
    // Computed in float32 inside the kernel, rounded once at the store.
    let (h, b, i) = (
        buf("H", &[1], DataType::f16()),
        buf("B", &[1], DataType::bf16()),
        var("i"),
    );
    let third = |d: DataType| PrimExpr::float(d, 1.0).floordiv(PrimExpr::float(d, 3.0));
    // (`Div` on floats is true division.)
    let body = serial(
        &i,
        1,
        Stmt::Seq(vec![
            store(&h, vec![i.to_expr()], third(DataType::f16())),
            store(&b, vec![i.to_expr()], third(DataType::bf16())),
        ]),
    );
    let out = run(
        func(vec![bp(&h), bp(&b)], body),
        &[],
        &[(DataType::f16(), vec![1]), (DataType::bf16(), vec![1])],
        &[],
    );
    assert_eq!(bits16(&out[0]), [0x3555]);
    assert_eq!(bits16(&out[1]), [0x3eab]);
}

#[test]
fn float64_and_int64_sources_round_once() {
    // Values just above a half tie by less than a float32 ulp, whose
    // excess `as f32` would drop (rounding down instead of up), and ties.
    let src: Vec<f64> = vec![
        1.0 + 2f64.powi(-11) + 2f64.powi(-40),
        1.0 + 2f64.powi(-11),
        -(1.0 + 2f64.powi(-8) + 2f64.powi(-40)),
        1.0 + 2f64.powi(-8),
        1e300,
        -1e-300,
        f64::NAN,
        1.0 / 3.0,
        2f64.powi(-25) + 2f64.powi(-60),
    ];
    let n = src.len() as i64;
    let input = Tensor::from_vec(&[n], src.clone()).unwrap();
    let ints: Vec<i64> = vec![
        (1 << 30) + (1 << 22) + 1,
        (1 << 30) + (1 << 22),
        -(1 << 40) - (1 << 32) - 1,
        65519,
        65520,
        -3,
        0,
        i64::MAX,
        i64::MIN,
    ];
    let int_input = Tensor::from_vec(&[n], ints.clone()).unwrap();
    for kind in [ForKind::Serial, ForKind::Vectorized] {
        for to in [DataType::f16(), DataType::bf16()] {
            let out = run(
                cast_kernel(n, DataType::f64(), to, kind),
                std::slice::from_ref(&input),
                &[(to, vec![n])],
                &[],
            );
            for (x, got) in src.iter().zip(bits16(&out[0])) {
                assert_eq!(got, to_half_bits(*x, to), "{to} of {x:e}, {kind:?}");
            }
            let out = run(
                cast_kernel(n, DataType::i64(), to, kind),
                std::slice::from_ref(&int_input),
                &[(to, vec![n])],
                &[],
            );
            for (x, got) in ints.iter().zip(bits16(&out[0])) {
                assert_eq!(got, to_half_bits(*x as f64, to), "{to} of {x}, {kind:?}");
            }
        }
    }
    // Exactly: 2^30 + 2^22 + 1 is above the bfloat16 tie, so up.
    assert_eq!(
        to_half_bits(((1 << 30) + (1 << 22) + 1) as f64, DataType::bf16()),
        0x4e81
    );
}
