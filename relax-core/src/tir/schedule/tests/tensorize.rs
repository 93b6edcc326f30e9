//! `tensorize` with the built-in `dot_16x4_vnni` intrinsic: an int8 matrix
//! product scheduled by hand (split, reorder, decompose_reduction,
//! blockize, tensorize) equals the unscheduled one on the interpreter and
//! through LLVM, whose code is `vpdpbusd` where the CPU has AVX512-VNNI;
//! the registry's checks and tensorize's errors.

use super::*;
use crate::tir::schedule::tensor_intrin::VNNI_DOT_16X4;

fn int8_matmul(m: i64, n: i64, k: i64) -> PrimFunc {
    prim(
        &format!("A: T.Buffer(({m}, {k}), \"uint8\"), B: T.Buffer(({n}, {k}), \"int8\"), C: T.Buffer(({m}, {n}), \"int32\")"),
        &format!(
            r#"        for i, j, k in T.grid({m}, {n}, {k}):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk], B[vj, vk])
                T.writes(C[vi, vj])
                with T.init():
                    C[vi, vj] = 0
                C[vi, vj] = C[vi, vj] + T.Cast("int32", A[vi, vk]) * T.Cast("int32", B[vj, vk])
"#
        ),
    )
}

/// The schedule: `j` by 16, `k` by 4, the tile loops innermost, the init
/// out of the reduction, the 16 × 4 tile a block, tensorized.
fn tensorized(f: PrimFunc) -> Schedule {
    let mut s = Schedule::new(f);
    let c = s.get_block("C").unwrap();
    let l = s.get_loops(c).unwrap();
    let j = s.split(l[1], &[None, Some(16)]).unwrap();
    let k = s.split(l[2], &[None, Some(4)]).unwrap();
    s.reorder(&[l[0], j[0], k[0], j[1], k[1]]).unwrap();
    s.decompose_reduction(c, k[0]).unwrap();
    let o = s.blockize(j[1], true).unwrap();
    s.tensorize(o, VNNI_DOT_16X4).unwrap();
    s
}

/// Bytes of every value (A: 0..=255, B: -128..=127).
fn operands(m: i64, n: i64, k: i64) -> (Tensor, Tensor) {
    let a: Vec<u8> = (0..m * k).map(|x| ((x * 37 + 11) % 256) as u8).collect();
    let b: Vec<i8> = (0..n * k)
        .map(|x| (((x * 53 + 7) % 256) as i32 - 128) as i8)
        .collect();
    (
        Tensor::from_vec(&[m, k], a).unwrap(),
        Tensor::from_vec(&[n, k], b).unwrap(),
    )
}

fn interpret(f: &PrimFunc, a: &Tensor, b: &Tensor, m: i64, n: i64) -> Vec<i32> {
    let mut out = vec![Tensor::from_vec(&[m, n], vec![7i32; (m * n) as usize]).unwrap()];
    run(f, &[a, b], &mut out, &[]).unwrap_or_else(|e| panic!("{e}\n{}", text(f)));
    out[0].to_vec::<i32>().unwrap()
}

/// The reference: `Σ_k A · B` in int32.
fn reference(a: &Tensor, b: &Tensor, m: i64, n: i64, k: i64) -> Vec<i32> {
    let a = a.to_vec::<u8>().unwrap();
    let b = b.to_vec::<i8>().unwrap();
    let mut c = vec![0i32; (m * n) as usize];
    for i in 0..m {
        for j in 0..n {
            c[(i * n + j) as usize] = (0..k)
                .map(|x| i32::from(a[(i * k + x) as usize]) * i32::from(b[(j * k + x) as usize]))
                .sum();
        }
    }
    c
}

#[test]
fn a_tensorized_int8_matmul_equals_the_reference_on_the_interpreter() {
    // 13 rows (odd), 48 columns and 20 deep: whole 16 × 4 tiles.
    let (m, n, k) = (13, 48, 20);
    let f = int8_matmul(m, n, k);
    let s = tensorized(f.clone());
    let printed = text(s.func());
    assert!(printed.contains("T.dpbusd("), "{printed}");
    assert!(printed.contains("T.vectorized(16)"), "{printed}");
    assert!(printed.contains("T.sblock(\"C_o\")"), "{printed}");
    assert!(!printed.contains("T.sblock(\"C\")"), "{printed}");
    let (a, b) = operands(m, n, k);
    let want = reference(&a, &b, m, n, k);
    assert_eq!(interpret(&f, &a, &b, m, n), want);
    assert_eq!(interpret(s.func(), &a, &b, m, n), want);
    replays(&s, f);
    let py = s.trace().as_python();
    assert!(
        py.contains("sch.tensorize(block_or_loop=b9, tensor_intrin=\"dot_16x4_vnni\""),
        "{py}"
    );
    assert!(s
        .trace()
        .as_rust()
        .contains("sch.tensorize(b9, \"dot_16x4_vnni\")?;"));
}

#[cfg(feature = "llvm")]
#[test]
fn a_tensorized_int8_matmul_compiles_to_vpdpbusd_and_equals_the_reference() {
    use crate::codegen::llvm::{emit_llvm_ir, jit, CodegenOptions};
    let (m, n, k) = (7, 32, 36);
    let f = int8_matmul(m, n, k);
    let s = tensorized(f);
    let (a, b) = operands(m, n, k);
    let want = reference(&a, &b, m, n, k);
    let native = CodegenOptions {
        native_cpu: true,
        cpu: None,
    };
    let funcs = [("mm".to_string(), s.func().clone())];
    let lib = jit(&funcs, &native).unwrap_or_else(|e| panic!("{e}"));
    let kernel = lib.lookup("mm").expect("compiled");
    let mut out = vec![Tensor::from_vec(&[m, n], vec![7i32; (m * n) as usize]).unwrap()];
    kernel.call(&[&a, &b], &mut out, &[]).unwrap();
    assert_eq!(out[0].to_vec::<i32>().unwrap(), want);
    let ir = emit_llvm_ir(&funcs, &native, false).unwrap();
    #[cfg(target_arch = "x86_64")]
    let vnni = std::is_x86_feature_detected!("avx512vnni");
    #[cfg(not(target_arch = "x86_64"))]
    let vnni = false;
    assert_eq!(ir.contains("llvm.x86.avx512.vpdpbusd.512"), vnni);
}

/// What tensorize refuses: an intrinsic nobody registered, a block with
/// an init, a tile of the wrong shape, a float computation, operands
/// transposed; each leaves the function as it was.
#[test]
fn tensorize_refuses_what_does_not_match() {
    let f = int8_matmul(5, 32, 8);
    let mut s = Schedule::new(f.clone());
    let c = s.get_block("C").unwrap();
    let l = s.get_loops(c).unwrap();
    let j = s.split(l[1], &[None, Some(16)]).unwrap();
    let k = s.split(l[2], &[None, Some(4)]).unwrap();
    s.reorder(&[l[0], j[0], k[0], j[1], k[1]]).unwrap();
    let o = s.blockize(j[1], true).unwrap();
    let e = err(s.tensorize(o, "no_such_intrin"));
    assert!(
        e.contains("no tensor intrinsic named \"no_such_intrin\""),
        "{e}"
    );
    let e = err(s.tensorize(o, VNNI_DOT_16X4));
    assert!(e.contains("decompose_reduction first"), "{e}");

    // A 16 × 2 tile.
    let mut s = Schedule::new(f.clone());
    let c = s.get_block("C").unwrap();
    let l = s.get_loops(c).unwrap();
    let j = s.split(l[1], &[None, Some(16)]).unwrap();
    let k = s.split(l[2], &[None, Some(2)]).unwrap();
    s.reorder(&[l[0], j[0], k[0], j[1], k[1]]).unwrap();
    s.decompose_reduction(c, k[0]).unwrap();
    let before = s.func().clone();
    let e = err(s.tensorize_loop(j[1], VNNI_DOT_16X4));
    assert!(e.contains("extents [16, 2]"), "{e}");
    assert_eq!(s.func(), &before, "unchanged after a failed tensorize");

    // The operands swapped (B's bytes unsigned, A's signed) do not match.
    let swapped = prim(
        "A: T.Buffer((32, 8), \"int8\"), B: T.Buffer((5, 8), \"uint8\"), C: T.Buffer((5, 32), \"int32\")",
        r#"        for i, j, k in T.grid(5, 32, 8):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(B[vi, vk], A[vj, vk])
                T.writes(C[vi, vj])
                C[vi, vj] = C[vi, vj] + T.Cast("int32", A[vj, vk]) * T.Cast("int32", B[vi, vk])
"#,
    );
    let mut s = Schedule::new(swapped);
    let c = s.get_block("C").unwrap();
    let l = s.get_loops(c).unwrap();
    let j = s.split(l[1], &[None, Some(16)]).unwrap();
    let k = s.split(l[2], &[None, Some(4)]).unwrap();
    s.reorder(&[l[0], j[0], k[0], j[1], k[1]]).unwrap();
    let e = err(s.tensorize_loop(j[1], VNNI_DOT_16X4));
    assert!(
        e.contains("is int8 where the description's A is uint8"),
        "{e}"
    );

    // A float matmul does not match an integer intrinsic.
    let mut s = Schedule::new(matmul_of(4, 16, 8));
    let c = s.get_block("C").unwrap();
    let l = s.get_loops(c).unwrap();
    let k = s.split(l[2], &[None, Some(4)]).unwrap();
    s.reorder(&[l[0], k[0], l[1], k[1]]).unwrap();
    s.decompose_reduction(c, k[0]).unwrap();
    let e = err(s.tensorize_loop(l[1], VNNI_DOT_16X4));
    assert!(e.contains("where the description's"), "{e}");
}

/// The registry: a name is taken once unless overridden, and the two
/// functions must agree on their parameters.
#[test]
fn tensor_intrin_register_checks_its_functions() {
    let vnni = TensorIntrin::get(VNNI_DOT_16X4).expect("built in");
    let e = TensorIntrin::register(
        VNNI_DOT_16X4,
        vnni.desc.clone(),
        vnni.implementation.clone(),
        false,
    )
    .unwrap_err()
    .message;
    assert!(e.contains("registered already"), "{e}");
    TensorIntrin::register(
        "test_dot_16x4_copy",
        vnni.desc.clone(),
        vnni.implementation.clone(),
        false,
    )
    .unwrap();
    assert!(TensorIntrin::get("test_dot_16x4_copy").is_some());
    let e = TensorIntrin::register("test_bad", vnni.desc.clone(), matmul(), false)
        .unwrap_err()
        .message;
    assert!(e.contains("parameter 0"), "{e}");
    let e = TensorIntrin::register("test_bad", matmul(), matmul(), false)
        .unwrap_err()
        .message;
    assert!(
        e.contains("not a loop nest over one block without init"),
        "{e}"
    );
    let e = TensorIntrin::register("test_bad", vnni.desc.clone(), vnni.desc.clone(), false)
        .unwrap_err()
        .message;
    assert!(e.contains("the implementation has a block"), "{e}");
    assert!(TensorIntrin::get("test_bad").is_none());
}
