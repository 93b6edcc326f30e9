//! `T.dpbf16ps`, the `bfloat16` dot-product step, and `T.reinterpret`:
//! the JIT's code, serial (the lane-by-lane fallback) and in 16-lane
//! vector steps (`vdpbf16ps` on a CPU with AVX512-BF16), against the
//! interpreter and [`dpbf16ps`], bit for bit, on words that reach the
//! instruction's corners: subnormal halves and accumulators (read as
//! zero), products that cancel to a subnormal (flushed), signed zeros,
//! infinities and sums that round.

use super::{bp, buf, func, run, serial, store, var};
use crate::ir::prim_expr::PrimExpr;
use crate::tir::interp::{self, dpbf16ps};
use crate::tir::ForKind;
use relax_runtime::{DataType, Tensor};

/// `Out[i] = T.dpbf16ps(Acc[i], A[i], B[i])` over `n` elements.
fn dpbf16ps_kernel(n: i64, kind: ForKind) -> crate::tir::PrimFunc {
    let (f32t, i32t) = (DataType::f32(), DataType::i32());
    let (acc, a, b, o) = (
        buf("Acc", &[n], f32t),
        buf("A", &[n], i32t),
        buf("B", &[n], i32t),
        buf("Out", &[n], f32t),
    );
    let i = var("i");
    let at = |x: &crate::tir::Buffer| PrimExpr::load(x, vec![i.to_expr()]);
    let value = PrimExpr::call(f32t, "dpbf16ps", vec![at(&acc), at(&a), at(&b)]);
    let body = store(&o, vec![i.to_expr()], value);
    let body = match kind {
        ForKind::Serial => serial(&i, n, body),
        _ => super::for_(&i, n, kind, body),
    };
    func(vec![bp(&acc), bp(&a), bp(&b), bp(&o)], body)
}

/// A word of two `bfloat16` bit patterns, `odd` on top.
fn pair(even: u16, odd: u16) -> i32 {
    (u32::from(odd) << 16 | u32::from(even)) as i32
}

/// The cases: (acc, a, b), corners first, then pseudo-random finite words.
fn cases(n: usize) -> (Vec<f32>, Vec<i32>, Vec<i32>) {
    let bf = |x: f32| (x.to_bits() >> 16) as u16;
    let sub = 0x0040u16; // a subnormal bfloat16
    let tiny = f32::from_bits(0x0000_1234); // a subnormal float32
    let corners: Vec<(f32, i32, i32)> = vec![
        (1.0, pair(bf(1.5), bf(-2.0)), pair(bf(3.0), bf(0.25))),
        // Subnormal halves are zero: only the normal pair counts.
        (0.0, pair(sub, bf(2.0)), pair(bf(1.0), bf(3.0))),
        (0.0, pair(bf(1.0), sub), pair(bf(1.0), bf(7.0))),
        // A subnormal accumulator is zero.
        (tiny, pair(bf(1.0), 0), pair(bf(1.0), 0)),
        (-tiny, 0, 0),
        // Products of small normals whose sum is subnormal: flushed.
        (0.0, pair(bf(1e-20), bf(-1e-20)), pair(bf(2e-19), bf(1e-19))),
        (
            f32::MIN_POSITIVE,
            pair(0, bf(-1.0)),
            pair(0, bf(f32::MIN_POSITIVE)),
        ),
        // Signed zeros.
        (-0.0, pair(bf(-0.0), bf(0.0)), pair(bf(1.0), bf(-1.0))),
        // Rounding of the accumulation: 2^24 + 1 + 1.
        (16_777_216.0, pair(bf(1.0), bf(1.0)), pair(bf(1.0), bf(1.0))),
        (
            1.0,
            pair(bf(1.0), bf(f32::INFINITY)),
            pair(bf(1.0), bf(2.0)),
        ),
        (f32::MAX, pair(0, bf(f32::MAX)), pair(0, bf(2.0))),
    ];
    let mut out = (Vec::new(), Vec::new(), Vec::new());
    for k in 0..n {
        let (acc, a, b) = match corners.get(k) {
            Some(c) => *c,
            None => {
                let h = |s: u32| {
                    let x = (k as u32).wrapping_mul(0x9e37_79b1) ^ s.wrapping_mul(0x85eb_ca6b);
                    // Exponents in a middle range, any sign and mantissa.
                    let x = x.rotate_left(k as u32 % 29);
                    let lo = (x & 0x807f) as u16 | (((x >> 7) % 64 + 96) as u16) << 7;
                    let hi = ((x >> 16) & 0x807f) as u16 | (((x >> 23) % 64 + 96) as u16) << 7;
                    pair(lo, hi)
                };
                let acc = (k as f32 - 20.0) * 0.375;
                (acc, h(11), h(29))
            }
        };
        out.0.push(acc);
        out.1.push(a);
        out.2.push(b);
    }
    out
}

#[test]
fn dpbf16ps_follows_the_instruction_serial_vectorized_and_interpreted() {
    // Hand-checked lanes: the odd products first, then the even ones.
    assert_eq!(
        dpbf16ps(1.0, pair(0x3fc0, 0xc000), pair(0x4040, 0x3e80)),
        1.0 - 0.5 + 4.5
    );
    assert_eq!(dpbf16ps(f32::from_bits(1), 0, 0).to_bits(), 0);
    assert_eq!(
        dpbf16ps(16_777_216.0, pair(0x3f80, 0x3f80), pair(0x3f80, 0x3f80)),
        16_777_216.0
    );
    // 16-lane steps and a tail.
    let n = 45usize;
    let (acc, a, b) = cases(n);
    let want: Vec<u32> = (0..n)
        .map(|k| dpbf16ps(acc[k], a[k], b[k]).to_bits())
        .collect();
    let inputs = [
        Tensor::from_slice(&[n as i64], &acc).unwrap(),
        Tensor::from_slice(&[n as i64], &a).unwrap(),
        Tensor::from_slice(&[n as i64], &b).unwrap(),
    ];
    let bits = |t: &Tensor| -> Vec<u32> {
        t.to_vec::<f32>()
            .unwrap()
            .iter()
            .map(|x| x.to_bits())
            .collect()
    };
    for kind in [ForKind::Serial, ForKind::Vectorized] {
        let f = dpbf16ps_kernel(n as i64, kind);
        let out = run(
            f.clone(),
            &inputs,
            &[(DataType::f32(), vec![n as i64])],
            &[],
        );
        assert_eq!(bits(&out[0]), want, "{kind:?}");
        let mut outs = [Tensor::zeros(DataType::f32(), &[n as i64]).unwrap()];
        let ins: Vec<&Tensor> = inputs.iter().collect();
        interp::run(&f, &ins, &mut outs, &[]).unwrap();
        assert_eq!(bits(&outs[0]), want, "interpreted");
    }
}

#[test]
fn dpbf16ps_is_one_vdpbf16ps_per_vector_step_where_the_cpu_has_avx512_bf16() {
    let f = dpbf16ps_kernel(64, ForKind::Vectorized);
    let funcs = [("kernel".to_string(), f)];
    let native = crate::codegen::llvm::CodegenOptions {
        native_cpu: true,
        cpu: None,
    };
    let ir = crate::codegen::llvm::emit_llvm_ir(&funcs, &native, false).unwrap();
    assert_eq!(
        ir.contains("llvm.x86.avx512bf16.dpbf16ps.512"),
        crate::codegen::llvm::target::host_bf16(),
        "{ir}"
    );
    // A named CPU level has no AVX512-BF16: the lane-by-lane code.
    let generic = crate::codegen::llvm::CodegenOptions::default();
    let ir = crate::codegen::llvm::emit_llvm_ir(&funcs, &generic, false).unwrap();
    assert!(!ir.contains("dpbf16ps.512"));
}

#[test]
fn reinterpret_is_the_same_bits_and_refuses_other_widths() {
    let (f32t, i32t, u32t) = (DataType::f32(), DataType::i32(), DataType::uint(32));
    let n = 19i64;
    let (x, y, z) = (
        buf("X", &[n], f32t),
        buf("Y", &[n], i32t),
        buf("Z", &[n], f32t),
    );
    let i = var("i");
    let xi = PrimExpr::load(&x, vec![i.to_expr()]);
    let bits = PrimExpr::call(i32t, "reinterpret", vec![xi.clone()]);
    // Through uint32 and back to float32: the value itself.
    let back = PrimExpr::call(
        f32t,
        "reinterpret",
        vec![PrimExpr::call(u32t, "reinterpret", vec![xi])],
    );
    let body = crate::tir::Stmt::Seq(vec![
        store(&y, vec![i.to_expr()], bits),
        store(&z, vec![i.to_expr()], back),
    ]);
    let xs: Vec<f32> = (0..n)
        .map(|k| match k {
            0 => -0.0,
            1 => f32::from_bits(3),
            2 => f32::NEG_INFINITY,
            _ => (k as f32 - 9.5) * 1.25e3,
        })
        .collect();
    let input = [Tensor::from_slice(&[n], &xs).unwrap()];
    let want: Vec<i32> = xs.iter().map(|v| v.to_bits() as i32).collect();
    for kind in [ForKind::Serial, ForKind::Vectorized] {
        let body = match kind {
            ForKind::Serial => serial(&i, n, body.clone()),
            _ => super::for_(&i, n, kind, body.clone()),
        };
        let f = func(vec![bp(&x), bp(&y), bp(&z)], body);
        let shapes = [(i32t, vec![n]), (f32t, vec![n])];
        let out = run(f.clone(), &input, &shapes, &[]);
        assert_eq!(out[0].to_vec::<i32>().unwrap(), want, "{kind:?}");
        assert_eq!(out[1].to_vec::<f32>().unwrap(), xs, "{kind:?}");
        let mut outs = [
            Tensor::zeros(i32t, &[n]).unwrap(),
            Tensor::zeros(f32t, &[n]).unwrap(),
        ];
        interp::run(&f, &[&input[0]], &mut outs, &[]).unwrap();
        assert_eq!(outs[0].to_vec::<i32>().unwrap(), want, "interpreted");
        assert_eq!(outs[1].to_vec::<f32>().unwrap(), xs, "interpreted");
    }
    // A width change is an error naming both dtypes, in both.
    let bad = PrimExpr::call(
        DataType::i64(),
        "reinterpret",
        vec![PrimExpr::load(&x, vec![i.to_expr()])],
    );
    let y64 = buf("Y64", &[n], DataType::i64());
    let f = func(
        vec![bp(&x), bp(&y64)],
        serial(&i, n, store(&y64, vec![i.to_expr()], bad)),
    );
    let mut outs = [Tensor::zeros(DataType::i64(), &[n]).unwrap()];
    let err = interp::run(&f, &[&input[0]], &mut outs, &[])
        .unwrap_err()
        .to_string();
    assert!(err.contains("float32") && err.contains("int64"), "{err}");
    let funcs = [("kernel".to_string(), f)];
    let err = crate::codegen::llvm::emit_llvm_ir(&funcs, &Default::default(), false)
        .unwrap_err()
        .to_string();
    assert!(err.contains("float32") && err.contains("int64"), "{err}");
}
