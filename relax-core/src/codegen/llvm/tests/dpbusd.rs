//! `T.dpbusd`, the int8 dot-product step: the JIT's code, serial (the
//! per-byte fallback) and in 16-lane vector steps (`vpdpbusd` on a CPU
//! with AVX512-VNNI), against the interpreter and [`dpbusd`]'s byte loop,
//! on patterns that reach every byte's extremes.

use super::{bp, buf, func, run, serial, store, var};
use crate::ir::prim_expr::PrimExpr;
use crate::tir::interp::{self, dpbusd};
use crate::tir::ForKind;
use relax_runtime::{DataType, Tensor};

/// `Out[i] = T.dpbusd(Acc[i], A[i], B[i])` over `n` elements.
fn dpbusd_kernel(n: i64, kind: ForKind) -> crate::tir::PrimFunc {
    let i32t = DataType::i32();
    let (acc, a, b, o) = (
        buf("Acc", &[n], i32t),
        buf("A", &[n], i32t),
        buf("B", &[n], i32t),
        buf("Out", &[n], i32t),
    );
    let i = var("i");
    let at = |x: &crate::tir::Buffer| PrimExpr::load(x, vec![i.to_expr()]);
    let value = PrimExpr::call(i32t, "dpbusd", vec![at(&acc), at(&a), at(&b)]);
    let body = store(&o, vec![i.to_expr()], value);
    let body = match kind {
        ForKind::Serial => serial(&i, n, body),
        _ => super::for_(&i, n, kind, body),
    };
    func(vec![bp(&acc), bp(&a), bp(&b), bp(&o)], body)
}

/// Words whose bytes include 0, 127, 128 and 255, then pseudo-random ones.
fn words(n: usize, seed: u32) -> Vec<i32> {
    let edges = [
        0u32,
        0x7f7f_7f7f,
        0x8080_8080,
        0xffff_ffff,
        0x80ff_7f00,
        0x017f_80fe,
    ];
    (0..n as u32)
        .map(|k| match edges.get(k as usize) {
            Some(e) => e.rotate_left(seed) as i32,
            None => {
                (k.wrapping_mul(0x9e37_79b1) ^ seed.wrapping_mul(0x85eb_ca6b)).rotate_left(k) as i32
            }
        })
        .collect()
}

#[test]
fn dpbusd_matches_the_byte_loop_serial_vectorized_and_interpreted() {
    // 16-lane steps and a tail.
    let n = 53usize;
    let (acc, a, b) = (words(n, 0), words(n, 7), words(n, 13));
    // An accumulator near the top of the range: the sum wraps.
    let mut acc = acc;
    acc[1] = i32::MAX - 10;
    let want: Vec<i32> = (0..n).map(|k| dpbusd(acc[k], a[k], b[k])).collect();
    // Hand-checked lanes: 255 · -128 four times, and 127 · 127 four times.
    assert_eq!(dpbusd(0, -1, 0x8080_8080u32 as i32), -4 * 255 * 128);
    assert_eq!(dpbusd(5, 0x7f7f_7f7f, 0x7f7f_7f7f), 5 + 4 * 127 * 127);
    let t = |v: &[i32]| Tensor::from_slice(&[n as i64], v).unwrap();
    let inputs = [t(&acc), t(&a), t(&b)];
    for kind in [ForKind::Serial, ForKind::Vectorized] {
        let f = dpbusd_kernel(n as i64, kind);
        let out = run(
            f.clone(),
            &inputs,
            &[(DataType::i32(), vec![n as i64])],
            &[],
        );
        assert_eq!(out[0].to_vec::<i32>().unwrap(), want, "{kind:?}");
        let mut outs = [Tensor::zeros(DataType::i32(), &[n as i64]).unwrap()];
        let ins: Vec<&Tensor> = inputs.iter().collect();
        interp::run(&f, &ins, &mut outs, &[]).unwrap();
        assert_eq!(outs[0].to_vec::<i32>().unwrap(), want, "interpreted");
    }
}

#[test]
fn dpbusd_is_one_vpdpbusd_per_vector_step_where_the_cpu_has_vnni() {
    let f = dpbusd_kernel(64, ForKind::Vectorized);
    let funcs = [("kernel".to_string(), f)];
    let native = crate::codegen::llvm::CodegenOptions {
        native_cpu: true,
        cpu: None,
    };
    let ir = crate::codegen::llvm::emit_llvm_ir(&funcs, &native, false).unwrap();
    assert_eq!(
        ir.contains("llvm.x86.avx512.vpdpbusd.512"),
        crate::codegen::llvm::target::host_vnni(),
        "{ir}"
    );
    // Of the named CPU levels, only x86-64-v4-vnni-bf16 has VNNI; the
    // others get the per-byte code. Its object builds on any host.
    let level = |cpu: &str| crate::codegen::llvm::CodegenOptions {
        native_cpu: false,
        cpu: Some(cpu.to_string()),
    };
    for (cpu, vnni) in [
        (relax_runtime::cpu::V4_VNNI_BF16, true),
        ("x86-64-v4", false),
        ("x86-64-v3", false),
        ("generic", false),
    ] {
        let ir = crate::codegen::llvm::emit_llvm_ir(&funcs, &level(cpu), true).unwrap();
        assert_eq!(ir.contains("llvm.x86.avx512.vpdpbusd.512"), vnni, "{cpu}");
    }
    let object =
        crate::codegen::llvm::emit_object(&funcs, &level(relax_runtime::cpu::V4_VNNI_BF16));
    assert!(!object.unwrap().is_empty());
}
