//! The `bfloat16` GEMM: which nests take it, and its results at odd sizes
//! (rows, columns and `k` that fill no tile, no vector and no pair) on the
//! loop-level interpreter and, with LLVM, compiled, against the
//! unscheduled function on the interpreter.

use super::super::DefaultSchedule;
use crate::ir::{BaseFunc, IRModule};
use crate::tir::interp;
use crate::tir::PrimFunc;
use crate::transform::Pass;
use relax_runtime::{DataType, Tensor};

/// `C = A · B` of `bfloat16` `A` (`m × k`, or `k × m` when `a_transposed`)
/// and `B` (`k × n`) summed in `float32`, as `matmul(out_dtype="float32")`
/// legalizes, with the `a_dtype` and `b_dtype` given.
fn matmul(m: i64, n: i64, k: i64, a_transposed: bool, a_dtype: &str, b_dtype: &str) -> PrimFunc {
    let module = matmul_module(m, n, k, a_transposed, a_dtype, b_dtype);
    let f = module.functions().next().map(|(_, f)| f.clone());
    match f {
        Some(BaseFunc::Prim(f)) => f,
        _ => panic!("no PrimFunc"),
    }
}

/// `f` as TVMScript text.
fn text(f: &PrimFunc) -> String {
    let mut m = IRModule::new();
    m.add(crate::ir::GlobalVar::new("f"), BaseFunc::Prim(f.clone()));
    m.to_string()
}

/// [`matmul`]'s module.
fn matmul_module(
    m: i64,
    n: i64,
    k: i64,
    a_transposed: bool,
    a_dtype: &str,
    b_dtype: &str,
) -> IRModule {
    let (a_shape, a_at) = match a_transposed {
        true => (format!("({k}, {m})"), "A[vk, vi]"),
        false => (format!("({m}, {k})"), "A[vi, vk]"),
    };
    let text = format!(
        r#"@I.ir_module
class Module:
    @T.prim_func(private=True)
    def f(A: T.Buffer({a_shape}, "{a_dtype}"), B: T.Buffer(({k}, {n}), "{b_dtype}"), C: T.Buffer(({m}, {n}), "float32")):
        for i, j, kk in T.grid({m}, {n}, {k}):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, kk])
                with T.init():
                    C[vi, vj] = T.float32(0.0)
                C[vi, vj] = C[vi, vj] + T.Cast("float32", {a_at}) * T.Cast("float32", B[vk, vj])
"#
    );
    text.parse()
        .unwrap_or_else(|e| panic!("the test module does not parse: {e}\n{text}"))
}

fn schedule(f: &PrimFunc, bf16: bool) -> PrimFunc {
    DefaultSchedule::with_vector_bits(512)
        .with_bf16(bf16)
        .schedule_prim_func(f)
}

/// `bfloat16` values in [-2, 2) with all their mantissa bits used.
fn values(n: i64, seed: u64) -> Vec<half::bf16> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            half::bf16::from_f32((s % 4001) as f32 / 1000.0 - 2.0)
        })
        .collect()
}

fn interpret(f: &PrimFunc, inputs: &[Tensor], m: i64, n: i64) -> Vec<f32> {
    let ins: Vec<&Tensor> = inputs.iter().collect();
    let mut out = [Tensor::zeros(DataType::f32(), &[m, n]).unwrap()];
    interp::run(f, &ins, &mut out, &[]).unwrap();
    out[0].to_vec::<f32>().unwrap()
}

#[test]
fn a_bf16_matmul_takes_the_bf16_gemm_only_where_the_cpu_has_the_instruction() {
    let f = matmul(64, 128, 128, false, "bfloat16", "bfloat16");
    let with = schedule(&f, true);
    let t = text(&with);
    assert!(
        t.contains("T.dpbf16ps") && t.contains("B_words") && t.contains("A_words"),
        "{t}"
    );
    // The pass is idempotent: nothing canonical is left.
    assert_eq!(text(&schedule(&with, true)), t);
    // Without AVX512-BF16, with 256-bit vectors, a float32 operand, or
    // too little work: the float32 schedules.
    assert!(!text(&schedule(&f, false)).contains("dpbf16ps"));
    let narrow = DefaultSchedule::with_vector_bits(256)
        .with_bf16(true)
        .schedule_prim_func(&f);
    assert!(!text(&narrow).contains("dpbf16ps"));
    let mixed = matmul(64, 128, 128, false, "float32", "bfloat16");
    assert!(!text(&schedule(&mixed, true)).contains("dpbf16ps"));
    let small = matmul(64, 64, 64, false, "bfloat16", "bfloat16");
    assert!(!text(&schedule(&small, true)).contains("dpbf16ps"));
    // The module pass does the same.
    let module = matmul_module(64, 128, 128, false, "bfloat16", "bfloat16");
    let out = DefaultSchedule::with_vector_bits(512)
        .with_bf16(true)
        .run(module)
        .unwrap();
    assert!(out.to_string().contains("T.dpbf16ps"));
}

/// Runs `f` compiled by LLVM.
#[cfg(feature = "llvm")]
fn compiled(f: &PrimFunc, inputs: &[Tensor], m: i64, n: i64) -> Vec<f32> {
    let opts = crate::codegen::llvm::CodegenOptions::default();
    let lib = crate::codegen::llvm::jit(&[("kernel".to_string(), f.clone())], &opts).unwrap();
    let kernel = lib.lookup("kernel").unwrap();
    let ins: Vec<&Tensor> = inputs.iter().collect();
    let mut out = [Tensor::zeros(DataType::f32(), &[m, n]).unwrap()];
    kernel.call(&ins, &mut out, &[]).unwrap();
    out[0].to_vec::<f32>().unwrap()
}

/// Within the reassociation error of a `k`-term sum of products of
/// values below 2 in magnitude: products are exact either way, and each of
/// at most `k` roundings is 2^-24 of at most `4k`.
fn close(got: &[f32], want: &[f32], k: i64) {
    let tol = 4.0 * k as f32 * k as f32 * f32::EPSILON;
    assert_eq!(got.len(), want.len());
    for (e, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol, "element {e}: {g} vs {w}");
    }
}

#[test]
fn the_bf16_gemm_matches_the_unscheduled_function_at_odd_sizes() {
    // 37 rows (4 tiles and 5), 83 columns (2 tiles and 19), k = 343 (171
    // pairs and one alone): on the interpreter, and compiled bit for bit
    // as the interpreter runs the same steps.
    let (m, n, k) = (37, 83, 343);
    let f = matmul(m, n, k, false, "bfloat16", "bfloat16");
    let s = schedule(&f, true);
    assert!(text(&s).contains("T.dpbf16ps"));
    let inputs = [
        Tensor::from_slice(&[m, k], &values(m * k, 1)).unwrap(),
        Tensor::from_slice(&[k, n], &values(k * n, 2)).unwrap(),
    ];
    let want = interpret(&f, &inputs, m, n);
    let got = interpret(&s, &inputs, m, n);
    close(&got, &want, k);
    #[cfg(feature = "llvm")]
    {
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&compiled(&s, &inputs, m, n)), bits(&got));
    }
}

/// A left operand read transposed, larger and compiled only: 101 rows,
/// 211 columns, k = 129.
#[cfg(feature = "llvm")]
#[test]
fn the_compiled_bf16_gemm_matches_with_a_transposed_left_operand() {
    let (m, n, k) = (101, 211, 129);
    let f = matmul(m, n, k, true, "bfloat16", "bfloat16");
    let s = schedule(&f, true);
    assert!(text(&s).contains("T.dpbf16ps"));
    let inputs = [
        Tensor::from_slice(&[k, m], &values(m * k, 3)).unwrap(),
        Tensor::from_slice(&[k, n], &values(k * n, 4)).unwrap(),
    ];
    close(
        &compiled(&s, &inputs, m, n),
        &compiled(&f, &inputs, m, n),
        k,
    );
}

/// `ToMixedPrecision(bfloat16)` of a float32 matmul, through the whole
/// pipeline: its `R.astype`s fuse into the matmul as casts to `bfloat16`,
/// which the bf16 GEMM takes, and the result is the float32 one within
/// bfloat16's precision.
#[cfg(feature = "llvm")]
#[test]
fn a_mixed_precision_matmul_takes_the_bf16_gemm() {
    use crate::backend::{build, Target};
    use crate::transform::ToMixedPrecision;
    use relax_runtime::{Value, VirtualMachine};
    let (m, n, k) = (45i64, 133i64, 181i64);
    let text = format!(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(({m}, {k}), dtype="float32"), w: R.Tensor(({k}, {n}), dtype="float32")) -> R.Tensor(({m}, {n}), dtype="float32"):
        with R.dataflow():
            y: R.Tensor(({m}, {n}), dtype="float32") = R.matmul(x, w, out_dtype="void")
            R.output(y)
        return y
"#
    );
    let module: IRModule = text.parse().unwrap();
    let mixed = ToMixedPrecision::with_dtype(DataType::bf16())
        .run(module.clone())
        .unwrap();
    let target = Target::host();
    let lowered = crate::backend::pipeline(&target)
        .run(mixed.clone())
        .unwrap();
    assert_eq!(
        lowered.to_string().contains("T.dpbf16ps"),
        DefaultSchedule::for_host().bf16(),
        "{lowered}"
    );
    let f32_of = |v: Vec<half::bf16>| v.iter().map(|x| x.to_f32()).collect::<Vec<f32>>();
    let args: Vec<Value> = vec![
        Tensor::from_slice(&[m, k], &f32_of(values(m * k, 5)))
            .unwrap()
            .into(),
        Tensor::from_slice(&[k, n], &f32_of(values(k * n, 6)))
            .unwrap()
            .into(),
    ];
    let run = |m: &IRModule| {
        let exec = build(m, &target).unwrap();
        let out = VirtualMachine::new(&exec).call("main", &args).unwrap();
        out.as_tensor().unwrap().to_vec::<f32>().unwrap()
    };
    // The inputs are bfloat16 values: the casts are exact, only the order
    // of the sums differs.
    close(&run(&mixed), &run(&module), k);
}
