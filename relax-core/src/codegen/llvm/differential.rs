//! Differential tests: the loop-level interpreter and the JIT on the same
//! PrimFuncs (the TVMScript round-trip modules and a few written here) and
//! the same pseudo-random inputs. Integers must agree exactly; floats to
//! 1e-5 relative (libm and the interpreter's `f64` transcendental functions
//! may differ in the last bits).

use super::{jit, scalar_abi, CodegenOptions};
use crate::ir::module::BaseFunc;
use crate::ir::prim_expr::TirVar;
use crate::parser::parse_module;
use crate::tir::{interp, PrimFunc, PrimFuncParam};
use relax_runtime::native::NativeKernel;
use relax_runtime::{DataType, Tensor};
use std::collections::HashMap;

const MODULES: &[(&str, &str)] = &[
    (
        "tir_softmax",
        include_str!("../../../tests/roundtrip/tir_softmax.py"),
    ),
    (
        "tir_relu",
        include_str!("../../../tests/roundtrip/tir_relu.py"),
    ),
    (
        "tir_matmul_reduction",
        include_str!("../../../tests/roundtrip/tir_matmul_reduction.py"),
    ),
    (
        "tir_elementwise_broadcast",
        include_str!("../../../tests/roundtrip/tir_elementwise_broadcast.py"),
    ),
    (
        "tir_alloc_buffer",
        include_str!("../../../tests/roundtrip/tir_alloc_buffer.py"),
    ),
    (
        "tir_if_else",
        include_str!("../../../tests/roundtrip/tir_if_else.py"),
    ),
    (
        "tir_parallel_vectorized",
        include_str!("../../../tests/roundtrip/tir_parallel_vectorized.py"),
    ),
    (
        "tir_symbolic_dims",
        include_str!("../../../tests/roundtrip/tir_symbolic_dims.py"),
    ),
    (
        "loose_tir_seed_fused",
        include_str!("../../../tests/roundtrip/loose_tir_seed_fused.py"),
    ),
    ("integer_ops", INTEGER_OPS),
    ("half_ops", HALF_OPS),
];

/// Integer arithmetic, casts and loop kinds over a symbolic extent; 8- and
/// 16-bit bitwise operations converted to wider types (which the JIT runs
/// in 32-bit lanes), with shift amounts in and out of range.
const INTEGER_OPS: &str = r#"
@I.ir_module
class Module:
    @T.prim_func
    def int_ops(A: T.Buffer((n,), "int32"), B: T.Buffer((n,), "int32"), C: T.Buffer((n, 6), "int32"), D: T.Buffer((n,), "float32")):
        n = T.int64()
        for i in T.parallel(n):
            for j in T.vectorized(2):
                C[i, j] = T.Select(j == 0, T.floordiv(A[i], B[i]), T.floormod(A[i], B[i]))
            C[i, 2] = T.max(A[i], B[i]) - T.min(A[i], B[i]) * T.int32(3)
            C[i, 3] = T.Cast("int32", T.Cast("int8", A[i] * T.int32(37)))
            C[i, 4] = T.Cast("int32", T.Cast("float32", A[i]) / T.float32(3.0))
            C[i, 5] = T.Select(A[i] < B[i] and not A[i] == T.int32(0), T.int32(1), T.int32(0))
            D[i] = T.Cast("float32", A[i] % T.int32(7)) * T.float32(0.5) + T.sqrt(T.fabs(T.Cast("float32", B[i])))

    @T.prim_func
    def narrow_bitwise(A: T.Buffer((n,), "int32"), B: T.Buffer((n,), "int32"), F: T.Buffer((n, 3), "float32"), G: T.Buffer((n, 2), "int32"), V: T.Buffer((n,), "float32")):
        n = T.int64()
        for i in range(n):
            F[i, 0] = T.Cast("float32", T.bitwise_and(T.shift_right(T.Cast("uint8", A[i] * T.int32(13)), T.Cast("uint8", B[i])), T.uint8(15)))
            F[i, 1] = T.Cast("float32", T.shift_right(T.Cast("int8", A[i] * T.int32(7)), T.Cast("int8", B[i])))
            F[i, 2] = T.Cast("float32", T.bitwise_xor(T.Cast("int16", A[i] * T.int32(3001)), T.bitwise_or(T.Cast("int16", B[i]), T.int16(-256))))
            G[i, 0] = T.Cast("int32", T.shift_right(T.Cast("uint16", A[i] * T.int32(4099)), T.Cast("uint16", B[i] + T.int32(10))))
            G[i, 1] = T.Cast("int32", T.shift_left(T.Cast("uint8", A[i] * T.int32(13)), T.Cast("uint8", B[i] % T.int32(9))))
        for i in T.vectorized(n):
            V[i] = T.Cast("float32", T.bitwise_and(T.shift_right(T.Cast("uint8", A[i] * T.int32(13)), T.Cast("uint8", B[i] % T.int32(10))), T.uint8(15))) - T.float32(8.0)
"#;

/// `float16` and `bfloat16`: vectorized elementwise arithmetic and
/// intrinsics, casts between every pair of kinds (from `float64` and
/// `int64` too, which round to odd first), a reduction into a half output
/// (rounded at each store) and one through a `float32` accumulator.
const HALF_OPS: &str = r#"
@I.ir_module
class Module:
    @T.prim_func
    def half_elementwise(A: T.Buffer((n, 16), "float16"), B: T.Buffer((n, 16), "bfloat16"), C: T.Buffer((n, 16), "float16"), D: T.Buffer((n, 16), "bfloat16")):
        n = T.int64()
        for i in T.parallel(n):
            for j in T.vectorized(16):
                C[i, j] = A[i, j] * T.float16(1.5) + T.exp(A[i, j]) - T.max(A[i, j], T.float16(0.0)) / T.float16(3.0)
            for j in T.vectorized(16):
                D[i, j] = T.sigmoid(B[i, j]) * B[i, j] + T.Select(B[i, j] < T.bfloat16(0.0), T.tanh(B[i, j]), T.bfloat16(0.25))

    @T.prim_func
    def half_casts(A: T.Buffer((n,), "float16"), B: T.Buffer((n,), "bfloat16"), F: T.Buffer((n,), "float32"), G: T.Buffer((n,), "float64"), I: T.Buffer((n,), "int32"), L: T.Buffer((n,), "int64"), C: T.Buffer((n, 8), "float16"), D: T.Buffer((n, 8), "bfloat16"), E: T.Buffer((n, 6), "int32"), H: T.Buffer((n, 4), "float64"), V: T.Buffer((n,), "float16")):
        n = T.int64()
        for i in range(n):
            C[i, 0] = T.Cast("float16", B[i])
            C[i, 1] = T.Cast("float16", F[i] * T.float32(40000.0))
            C[i, 2] = T.Cast("float16", G[i] * T.float64(3.0e-6))
            C[i, 3] = T.Cast("float16", I[i] * T.int32(3277))
            C[i, 4] = T.Cast("float16", L[i] * T.int64(4097))
            C[i, 5] = T.Cast("float16", T.Cast("int8", I[i] * T.int32(11)))
            C[i, 6] = T.Cast("float16", G[i] / T.float64(7.0))
            C[i, 7] = T.Cast("float16", T.Cast("uint8", I[i] + T.int32(20)))
            D[i, 0] = T.Cast("bfloat16", A[i])
            D[i, 1] = T.Cast("bfloat16", F[i] * T.float32(1.0e30))
            D[i, 2] = T.Cast("bfloat16", G[i] / T.float64(3.0))
            D[i, 3] = T.Cast("bfloat16", I[i] * T.int32(65537))
            D[i, 4] = T.Cast("bfloat16", L[i] * T.int64(1099511627777))
            D[i, 5] = T.Cast("bfloat16", F[i] * T.float32(1.0e-39))
            D[i, 6] = T.Cast("bfloat16", T.Cast("float16", F[i]))
            D[i, 7] = T.Cast("bfloat16", I[i])
            E[i, 0] = T.Cast("int32", A[i] * T.float16(1000.0))
            E[i, 1] = T.Cast("int32", B[i] * T.bfloat16(1000.0))
            E[i, 2] = T.Cast("int32", T.Cast("float16", F[i] * T.float32(1000.0)))
            E[i, 3] = T.Cast("int32", A[i] < T.Cast("float16", B[i]))
            E[i, 4] = T.Cast("int32", T.Cast("bool", A[i]))
            E[i, 5] = T.Cast("int32", T.Cast("uint8", T.fabs(B[i]) * T.bfloat16(50.0)))
            H[i, 0] = T.Cast("float64", A[i])
            H[i, 1] = T.Cast("float64", B[i])
            H[i, 2] = T.Cast("float64", A[i] / T.float16(3.0))
            H[i, 3] = T.Cast("float64", T.Cast("float32", B[i]) + T.Cast("float32", A[i]))
        for i in T.vectorized(n):
            V[i] = T.Cast("float16", F[i] * T.float32(0.001)) + T.Cast("float16", I[i])

    @T.prim_func(s_tir=True)
    def half_matmul(A: T.Buffer((4, 8), "float16"), B: T.Buffer((8, 16), "bfloat16"), C: T.Buffer((4, 16), "float16"), D: T.Buffer((4, 16), "bfloat16")):
        acc = T.alloc_buffer((4, 16))
        for i, j, k in T.grid(4, 16, 8):
            with T.sblock("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float16(0.0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * T.Cast("float16", B[vk, vj])
        for i, j, k in T.grid(4, 16, 8):
            with T.sblock("acc"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    acc[vi, vj] = T.float32(0.0)
                acc[vi, vj] = acc[vi, vj] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", B[vk, vj])
        for i, j in T.grid(4, 16):
            with T.sblock("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                D[vi, vj] = T.Cast("bfloat16", acc[vi, vj])
"#;

/// A deterministic stream of pseudo-random numbers (64-bit LCG).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn float(&mut self) -> f64 {
        (self.next() % 100_000) as f64 / 25_000.0 - 2.0
    }
    /// A non-zero integer in -20..=20, so divisions are defined.
    fn int(&mut self) -> i64 {
        let v = (self.next() % 40) as i64 - 20;
        if v >= 0 {
            v + 1
        } else {
            v
        }
    }
}

fn random_tensor(rng: &mut Lcg, dtype: DataType, shape: &[i64]) -> Tensor {
    let n: i64 = shape.iter().product();
    let t = match (dtype.code(), dtype.bits()) {
        (relax_runtime::TypeCode::Float, 32) => {
            Tensor::from_vec(shape, (0..n).map(|_| rng.float() as f32).collect()).unwrap()
        }
        (relax_runtime::TypeCode::Float, 64) => {
            Tensor::from_vec(shape, (0..n).map(|_| rng.float()).collect()).unwrap()
        }
        (relax_runtime::TypeCode::Int, 32) => {
            Tensor::from_vec(shape, (0..n).map(|_| rng.int() as i32).collect()).unwrap()
        }
        (relax_runtime::TypeCode::Int, 64) => {
            Tensor::from_vec(shape, (0..n).map(|_| rng.int()).collect()).unwrap()
        }
        (relax_runtime::TypeCode::Float, 16) => Tensor::from_vec(
            shape,
            (0..n).map(|_| half::f16::from_f64(rng.float())).collect(),
        )
        .unwrap(),
        (relax_runtime::TypeCode::BFloat, 16) => Tensor::from_vec(
            shape,
            (0..n).map(|_| half::bf16::from_f64(rng.float())).collect(),
        )
        .unwrap(),
        _ => panic!("no random {dtype} tensors"),
    };
    assert_eq!(t.dtype(), dtype);
    t
}

fn prim_funcs(text: &str) -> Vec<(String, PrimFunc)> {
    let module = parse_module(text).unwrap_or_else(|e| panic!("{e:?}"));
    module
        .functions()
        .filter_map(|(gv, f)| match f {
            BaseFunc::Prim(p) => Some((gv.name_hint().to_string(), p.clone())),
            _ => None,
        })
        .collect()
}

/// Runs `func` on the interpreter and the JIT with every buffer random
/// (outputs included: some kernels read them) and compares everything.
fn compare(name: &str, func: &PrimFunc, kernel: &dyn NativeKernel, rng: &mut Lcg, dim: i64) {
    let env: HashMap<TirVar, i64> = scalar_abi(func).into_iter().map(|v| (v, dim)).collect();
    let scalars: Vec<i64> = func
        .params
        .iter()
        .filter_map(|p| match p {
            PrimFuncParam::Scalar(v) => Some(env[v]),
            PrimFuncParam::Buffer(_) => None,
        })
        .collect();
    let tensors: Vec<Tensor> = func
        .buffers()
        .map(|b| {
            let shape: Vec<i64> = b.shape().iter().map(|d| d.eval(&env).unwrap()).collect();
            random_tensor(rng, b.dtype(), &shape)
        })
        .collect();
    // Unshared copies: kernels write their outputs in place.
    let fresh = || -> Vec<Tensor> {
        tensors
            .iter()
            .map(|t| Tensor::from_bytes(t.dtype(), t.shape(), t.as_bytes()).unwrap())
            .collect()
    };
    let mut expected = fresh();
    interp::run(func, &[], &mut expected, &scalars)
        .unwrap_or_else(|e| panic!("{name}: interpreter: {e}"));
    let mut got = fresh();
    kernel
        .call(&[], &mut got, &scalars)
        .unwrap_or_else(|e| panic!("{name}: JIT: {e}"));
    for (k, (e, g)) in expected.iter().zip(&got).enumerate() {
        if e.as_bytes() == g.as_bytes() {
            // Identical (infinities included, which `allclose` rejects).
            continue;
        }
        if e.dtype().is_float() {
            let diff = e.max_abs_diff(g).unwrap();
            // Relative to the buffer's largest magnitude: a sum that
            // cancels is exact only to the rounding of its largest terms,
            // and the JIT contracts `a * b + c` into one FMA.
            let scale = e.to_f64_vec().iter().fold(1f64, |m, v| m.max(v.abs()));
            // A half result may round the other way when the float32
            // values it rounds differ in the last bit (an FMA, `exp`): one
            // unit in its last place.
            let tol = match (e.dtype().is_half(), e.dtype().is_bfloat()) {
                (true, true) => 2f64.powi(-7),
                (true, false) => 2f64.powi(-10),
                _ => 1e-5,
            };
            assert!(
                e.allclose(g, tol, tol * scale),
                "{name}: buffer {k} differs by up to {diff}"
            );
        } else {
            assert_eq!(e.as_bytes(), g.as_bytes(), "{name}: buffer {k}");
        }
    }
}

#[test]
fn interpreter_and_jit_agree() {
    let mut rng = Lcg(0x5eed);
    let mut count = 0;
    for (file, text) in MODULES {
        let funcs = prim_funcs(text);
        // One JIT module per file, as the VM builds one per Relax module.
        let lib = jit(&funcs, &CodegenOptions::default())
            .unwrap_or_else(|e| panic!("{file}: compile: {e}"));
        for (name, func) in &funcs {
            let kernel = lib.lookup(name).unwrap();
            let dims: &[i64] = if scalar_abi(func).is_empty() {
                &[0]
            } else {
                &[1, 5, 37]
            };
            for &dim in dims {
                compare(&format!("{file}: {name}"), func, &*kernel, &mut rng, dim);
            }
            count += 1;
        }
    }
    // Every PrimFunc of every module (a parse that dropped one would show).
    assert_eq!(count, 20);
}

/// Vectorized loops of a symbolic extent (full 16-lane steps, then a
/// scalar rest): contiguous, invariant, strided and reversed loads,
/// transcendental calls, integers, a loop starting past 0, and a
/// vectorized loop inside rows.
const SYMBOLIC_VECTORS: &str = r#"
@I.ir_module
class Module:
    @T.prim_func
    def sym_ewise(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32"), S: T.Buffer((3 * n + 2,), "float32"), I: T.Buffer((n,), "int32"), C: T.Buffer((n,), "float32"), D: T.Buffer((n,), "float32"), E: T.Buffer((n,), "int32")):
        n = T.int64()
        for i in T.vectorized(n):
            C[i] = A[i] * B[0] + T.exp(A[i]) - T.max(B[i], T.float32(0.0))
        for i in T.vectorized(n):
            D[i] = S[i * 3] + S[3 * n + 1 - i]
        for i in T.vectorized(n):
            E[i] = I[i] * T.int32(3) - T.max(I[i], T.int32(0))
        for i in T.vectorized(1, n):
            D[i] = D[i] + A[i - 1]

    @T.prim_func
    def sym_rows(A: T.Buffer((3, n), "float32"), C: T.Buffer((3, n), "float32")):
        n = T.int64()
        for r in range(3):
            for j in T.vectorized(n):
                C[r, j] = T.exp(A[r, j] - A[r, n - 1]) * T.float32(0.5)
"#;

/// The symbolic-extent vector loops agree with the interpreter at every
/// kind of remainder: none (0, 16), only the rest (1, 15), one step and
/// one element (17), several steps and a rest (100).
#[test]
fn symbolic_vector_loops_agree_at_every_remainder() {
    let mut rng = Lcg(0x51de);
    let funcs = prim_funcs(SYMBOLIC_VECTORS);
    assert_eq!(funcs.len(), 2);
    let lib = jit(&funcs, &CodegenOptions::default()).unwrap_or_else(|e| panic!("compile: {e}"));
    for (name, func) in &funcs {
        let kernel = lib.lookup(name).unwrap();
        for dim in [0, 1, 15, 16, 17, 100] {
            compare(&format!("{name} at {dim}"), func, &*kernel, &mut rng, dim);
        }
    }
    // They are vector code: 16-lane loads and stores.
    let text = super::emit_llvm_ir(&funcs, &CodegenOptions::default(), false).unwrap();
    assert!(text.contains("load <16 x float>"), "{text}");
    assert!(text.contains("store <16 x i32>"), "{text}");
}
