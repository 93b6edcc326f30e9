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
];

/// Integer arithmetic, casts and loop kinds over a symbolic extent.
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
        if e.dtype().is_float() {
            let diff = e.max_abs_diff(g).unwrap();
            // Relative to the buffer's largest magnitude: a sum that
            // cancels is exact only to the rounding of its largest terms,
            // and the JIT contracts `a * b + c` into one FMA.
            let scale = e.to_f64_vec().iter().fold(1f64, |m, v| m.max(v.abs()));
            assert!(
                e.allclose(g, 1e-5, 1e-5 * scale),
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
    assert_eq!(count, 16);
}
