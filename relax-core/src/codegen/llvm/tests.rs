//! Hand-built PrimFuncs compiled with the JIT and run through the
//! `NativeKernel` interface on tensors, against hand-computed results.

use super::{emit_object, jit, scalar_abi, CodegenOptions, KernelSignature};
use crate::ir::prim_expr::{floor_div, floor_mod, PrimExpr, TirVar};
use crate::ir::Attrs;
use crate::tir::{Block, Buffer, ForKind, IterKind, IterVar, PrimFunc, PrimFuncParam, Stmt};
use relax_runtime::{DataType, Error, Tensor};

mod dpbf16;
mod dpbusd;
mod half;
mod prefetch;
mod words;

// ---------------------------------------------------------------- helpers

fn f32t() -> DataType {
    DataType::f32()
}

fn var(name: &str) -> TirVar {
    TirVar::new(name)
}

fn buf(name: &str, shape: &[i64], dtype: DataType) -> Buffer {
    Buffer::new(
        name,
        shape.iter().map(|&d| PrimExpr::int(d)).collect(),
        dtype,
    )
}

fn load(b: &Buffer, idx: &[&TirVar]) -> PrimExpr {
    PrimExpr::load(b, idx.iter().map(|v| PrimExpr::var(v)).collect())
}

fn store(b: &Buffer, idx: Vec<PrimExpr>, value: PrimExpr) -> Stmt {
    Stmt::BufferStore {
        buffer: b.clone(),
        value,
        indices: idx,
    }
}

fn for_(v: &TirVar, extent: impl Into<PrimExpr>, kind: ForKind, body: Stmt) -> Stmt {
    Stmt::For {
        loop_var: v.clone(),
        min: PrimExpr::int(0),
        extent: extent.into(),
        kind,
        body: Box::new(body),
        annotations: Attrs::new(),
    }
}

fn serial(v: &TirVar, extent: impl Into<PrimExpr>, body: Stmt) -> Stmt {
    for_(v, extent, ForKind::Serial, body)
}

/// A block with one iteration variable per loop variable, bound to it.
fn block(
    name: &str,
    ivs: &[(&TirVar, PrimExpr, IterKind)],
    loops: &[&TirVar],
    init: Option<Stmt>,
    body: Stmt,
    alloc: Vec<Buffer>,
) -> Stmt {
    Stmt::Block(Box::new(Block {
        name: name.into(),
        iter_vars: ivs
            .iter()
            .map(|(v, ext, kind)| IterVar {
                var: (*v).clone(),
                min: PrimExpr::int(0),
                extent: ext.clone(),
                kind: *kind,
            })
            .collect(),
        iter_values: loops.iter().map(|v| PrimExpr::var(v)).collect(),
        reads: vec![],
        writes: vec![],
        init: init.map(Box::new),
        body: Box::new(body),
        alloc_buffers: alloc,
        annotations: Attrs::new(),
    }))
}

fn func(params: Vec<PrimFuncParam>, body: Stmt) -> PrimFunc {
    PrimFunc::new(params, body)
}

fn bp(b: &Buffer) -> PrimFuncParam {
    PrimFuncParam::Buffer(b.clone())
}

/// JIT-compiles `f` as `kernel` and runs it on fresh zero outputs.
fn run(
    f: PrimFunc,
    inputs: &[Tensor],
    outputs: &[(DataType, Vec<i64>)],
    scalars: &[i64],
) -> Vec<Tensor> {
    let lib = jit(&[("kernel".to_string(), f)], &CodegenOptions::default())
        .unwrap_or_else(|e| panic!("compile: {e}"));
    let k = lib.lookup("kernel").expect("the kernel is in its library");
    assert!(lib.lookup("other").is_none());
    let ins: Vec<&Tensor> = inputs.iter().collect();
    let mut outs: Vec<Tensor> = outputs
        .iter()
        .map(|(d, s)| Tensor::zeros(*d, s).unwrap())
        .collect();
    k.call(&ins, &mut outs, scalars).unwrap();
    outs
}

fn close32(a: &[f32], b: &[f32], tol: f32) {
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= tol * (1.0 + y.abs()),
            "element {i}: {x} vs {y}"
        );
    }
}

fn unsupported(r: Result<impl Sized, Error>) -> String {
    match r {
        Err(Error::Unsupported(m)) => m,
        Err(other) => panic!("expected Unsupported, got {other:?}"),
        Ok(_) => panic!("expected an error"),
    }
}

/// `out[i] = f(a[i], b[i])` over `n` elements, through a spatial block.
fn ewise(
    n: i64,
    dtype: DataType,
    kind: ForKind,
    f: impl Fn(PrimExpr, PrimExpr) -> PrimExpr,
) -> PrimFunc {
    let (a, b, c) = (
        buf("A", &[n], dtype),
        buf("B", &[n], dtype),
        buf("C", &[n], dtype),
    );
    let (i, vi) = (var("i"), var("vi"));
    let body = block(
        "C",
        &[(&vi, PrimExpr::int(n), IterKind::Spatial)],
        &[&i],
        None,
        store(
            &c,
            vec![vi.to_expr()],
            f(load(&a, &[&vi]), load(&b, &[&vi])),
        ),
        vec![],
    );
    func(vec![bp(&a), bp(&b), bp(&c)], for_(&i, n, kind, body))
}

// ---------------------------------------------------------------- tests

#[test]
fn elementwise_add_f32_and_i64() {
    let n = 37;
    let a: Vec<f32> = (0..n).map(|x| x as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|x| 100.0 - x as f32).collect();
    let out = run(
        ewise(n, f32t(), ForKind::Serial, |x, y| x + y),
        &[
            Tensor::from_vec(&[n], a.clone()).unwrap(),
            Tensor::from_vec(&[n], b.clone()).unwrap(),
        ],
        &[(f32t(), vec![n])],
        &[],
    );
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    assert_eq!(out[0].to_vec::<f32>().unwrap(), want);

    let a: Vec<i64> = (0..n).map(|x| x * 1_000_000_007 - 5).collect();
    let b: Vec<i64> = (0..n).map(|x| -3 * x).collect();
    let out = run(
        ewise(n, DataType::i64(), ForKind::Serial, |x, y| x + y),
        &[
            Tensor::from_vec(&[n], a.clone()).unwrap(),
            Tensor::from_vec(&[n], b.clone()).unwrap(),
        ],
        &[(DataType::i64(), vec![n])],
        &[],
    );
    let want: Vec<i64> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    assert_eq!(out[0].to_vec::<i64>().unwrap(), want);
}

#[test]
fn broadcasting_add_2d() {
    // C[i, j] = A[i, j] + B[j]
    let (m, n) = (3, 5);
    let (a, b, c) = (
        buf("A", &[m, n], f32t()),
        buf("B", &[n], f32t()),
        buf("C", &[m, n], f32t()),
    );
    let (i, j, vi, vj) = (var("i"), var("j"), var("vi"), var("vj"));
    let body = block(
        "C",
        &[
            (&vi, PrimExpr::int(m), IterKind::Spatial),
            (&vj, PrimExpr::int(n), IterKind::Spatial),
        ],
        &[&i, &j],
        None,
        store(
            &c,
            vec![vi.to_expr(), vj.to_expr()],
            load(&a, &[&vi, &vj]) + load(&b, &[&vj]),
        ),
        vec![],
    );
    let f = func(
        vec![bp(&a), bp(&b), bp(&c)],
        serial(&i, m, serial(&j, n, body)),
    );
    let av: Vec<f32> = (0..m * n).map(|x| x as f32).collect();
    let bv: Vec<f32> = (0..n).map(|x| 10.0 * x as f32).collect();
    let out = run(
        f,
        &[
            Tensor::from_vec(&[m, n], av.clone()).unwrap(),
            Tensor::from_vec(&[n], bv.clone()).unwrap(),
        ],
        &[(f32t(), vec![m, n])],
        &[],
    );
    let want: Vec<f32> = (0..m * n)
        .map(|k| av[k as usize] + bv[(k % n) as usize])
        .collect();
    assert_eq!(out[0].to_vec::<f32>().unwrap(), want);
}

#[test]
fn relu_with_select_and_max() {
    let n = 9;
    let (a, c, d) = (
        buf("A", &[n], f32t()),
        buf("C", &[n], f32t()),
        buf("D", &[n], f32t()),
    );
    let i = var("i");
    let zero = PrimExpr::float(f32t(), 0.0);
    let x = load(&a, &[&i]);
    let body = Stmt::Seq(vec![
        store(
            &c,
            vec![i.to_expr()],
            PrimExpr::select(x.clone().gt(zero.clone()), x.clone(), zero.clone()),
        ),
        store(&d, vec![i.to_expr()], x.max(zero)),
    ]);
    let f = func(vec![bp(&a), bp(&c), bp(&d)], serial(&i, n, body));
    let av: Vec<f32> = (0..n).map(|x| x as f32 - 4.5).collect();
    let out = run(
        f,
        &[Tensor::from_vec(&[n], av.clone()).unwrap()],
        &[(f32t(), vec![n]), (f32t(), vec![n])],
        &[],
    );
    let want: Vec<f32> = av.iter().map(|x| x.max(0.0)).collect();
    assert_eq!(out[0].to_vec::<f32>().unwrap(), want);
    assert_eq!(out[1].to_vec::<f32>().unwrap(), want);
}

/// `C = A @ B` with a reduction block and an init, as LegalizeOps writes it.
fn matmul(m: PrimExpr, k: i64, n: i64, kind: ForKind) -> (PrimFunc, Vec<PrimFuncParam>) {
    let a = Buffer::new("A", vec![m.clone(), PrimExpr::int(k)], f32t());
    let b = buf("B", &[k, n], f32t());
    let c = Buffer::new("C", vec![m.clone(), PrimExpr::int(n)], f32t());
    let (i, j, r) = (var("i"), var("j"), var("k"));
    let (vi, vj, vk) = (var("vi"), var("vj"), var("vk"));
    let init = store(
        &c,
        vec![vi.to_expr(), vj.to_expr()],
        PrimExpr::float(f32t(), 0.0),
    );
    let update = store(
        &c,
        vec![vi.to_expr(), vj.to_expr()],
        load(&c, &[&vi, &vj]) + load(&a, &[&vi, &vk]) * load(&b, &[&vk, &vj]),
    );
    let blk = block(
        "matmul",
        &[
            (&vi, m.clone(), IterKind::Spatial),
            (&vj, PrimExpr::int(n), IterKind::Spatial),
            (&vk, PrimExpr::int(k), IterKind::Reduce),
        ],
        &[&i, &j, &r],
        Some(init),
        update,
        vec![],
    );
    let body = for_(&i, m, kind, serial(&j, n, serial(&r, k, blk)));
    let params = vec![bp(&a), bp(&b), bp(&c)];
    (func(params.clone(), body), params)
}

fn matmul_ref(a: &[f32], b: &[f32], m: usize, k: usize, n: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            for r in 0..k {
                c[i * n + j] += a[i * k + r] * b[r * n + j];
            }
        }
    }
    c
}

#[test]
fn matmul_reduction_block_with_init() {
    let (m, k, n) = (4usize, 3usize, 5usize);
    let (f, _) = matmul(PrimExpr::int(m as i64), k as i64, n as i64, ForKind::Serial);
    let a: Vec<f32> = (0..m * k).map(|x| x as f32 * 0.25 - 1.0).collect();
    let b: Vec<f32> = (0..k * n).map(|x| 2.0 - x as f32 * 0.5).collect();
    // The output starts non-zero: the init must overwrite it.
    let lib = jit(&[("mm".into(), f)], &CodegenOptions::default()).unwrap();
    let kernel = lib.lookup("mm").unwrap();
    let mut out = vec![Tensor::from_vec(&[m as i64, n as i64], vec![7.0f32; m * n]).unwrap()];
    let ins = [
        &Tensor::from_vec(&[m as i64, k as i64], a.clone()).unwrap(),
        &Tensor::from_vec(&[k as i64, n as i64], b.clone()).unwrap(),
    ];
    kernel.call(&ins, &mut out, &[]).unwrap();
    close32(
        &out[0].to_vec::<f32>().unwrap(),
        &matmul_ref(&a, &b, m, k, n),
        1e-6,
    );
    assert!(lib.describe().contains("LLVM JIT"));
}

#[test]
fn reduction_over_symbolic_n_and_scalar_order() {
    // B[0] = sum(A[0..n]), with n a scalar parameter.
    let n = var("n");
    let a = Buffer::new("A", vec![n.to_expr()], DataType::f64());
    let b = buf("B", &[1], DataType::f64());
    let (i, vi) = (var("i"), var("vi"));
    let zero = PrimExpr::int(0);
    let blk = block(
        "sum",
        &[(&vi, n.to_expr(), IterKind::Reduce)],
        &[&i],
        Some(store(
            &b,
            vec![zero.clone()],
            PrimExpr::float(DataType::f64(), 0.0),
        )),
        store(
            &b,
            vec![zero.clone()],
            PrimExpr::load(&b, vec![zero]) + load(&a, &[&vi]),
        ),
        vec![],
    );
    let f = func(
        vec![bp(&a), bp(&b), PrimFuncParam::Scalar(n.clone())],
        serial(&i, n.to_expr(), blk),
    );
    assert_eq!(scalar_abi(&f), vec![n.clone()]);
    let lib = jit(&[("sum".into(), f)], &CodegenOptions::default()).unwrap();
    let k = lib.lookup("sum").unwrap();
    for len in [1i64, 7, 100] {
        let av: Vec<f64> = (0..len).map(|x| x as f64 * 1.5).collect();
        let mut out = vec![Tensor::zeros(DataType::f64(), &[1]).unwrap()];
        k.call(
            &[&Tensor::from_vec(&[len], av.clone()).unwrap()],
            &mut out,
            &[len],
        )
        .unwrap();
        assert_eq!(
            out[0].to_vec::<f64>().unwrap(),
            vec![av.iter().sum::<f64>()]
        );
    }

    // A dim that is not a scalar parameter is appended after them.
    let (p, m, q) = (var("p"), var("m"), var("q"));
    let x = Buffer::new("X", vec![m.to_expr(), q.to_expr()], f32t());
    let y = Buffer::new("Y", vec![q.to_expr(), p.to_expr() * 2], f32t());
    let g = func(
        vec![bp(&x), bp(&y), PrimFuncParam::Scalar(p.clone())],
        Stmt::no_op(),
    );
    assert_eq!(scalar_abi(&g), vec![p, m, q]);
}

#[test]
fn matmul_with_symbolic_rows_from_the_shape() {
    // `m` is only a dim of A and C: it comes after the (no) scalar params.
    let m = var("m");
    let (f, _) = matmul(m.to_expr(), 6, 3, ForKind::Parallel);
    assert_eq!(scalar_abi(&f), vec![m]);
    let (rows, k, n) = (13usize, 6usize, 3usize);
    let a: Vec<f32> = (0..rows * k).map(|x| (x % 7) as f32 - 3.0).collect();
    let b: Vec<f32> = (0..k * n).map(|x| (x % 5) as f32 * 0.5).collect();
    let out = run(
        f,
        &[
            Tensor::from_vec(&[rows as i64, k as i64], a.clone()).unwrap(),
            Tensor::from_vec(&[k as i64, n as i64], b.clone()).unwrap(),
        ],
        &[(f32t(), vec![rows as i64, n as i64])],
        &[rows as i64],
    );
    close32(
        &out[0].to_vec::<f32>().unwrap(),
        &matmul_ref(&a, &b, rows, k, n),
        1e-6,
    );
}

#[test]
fn exp_tanh_erf_and_friends() {
    let n = 8i64;
    let xs: Vec<f64> = (0..n).map(|x| x as f64 * 0.4 - 1.3).collect();
    type Case = (&'static str, fn(f64) -> f64);
    let cases: [Case; 7] = [
        ("exp", f64::exp),
        ("tanh", f64::tanh),
        ("sigmoid", |x| 1.0 / (1.0 + (-x).exp())),
        ("fabs", f64::abs),
        ("floor", f64::floor),
        ("round", f64::round_ties_even),
        ("log", |x| x.abs().ln()),
    ];
    for dtype in [DataType::f32(), DataType::f64()] {
        for (name, reference) in cases {
            let (a, c) = (buf("A", &[n], dtype), buf("C", &[n], dtype));
            let i = var("i");
            let mut arg = load(&a, &[&i]);
            if name == "log" {
                arg = PrimExpr::call(dtype, "fabs", vec![arg]);
            }
            let body = store(
                &c,
                vec![i.to_expr()],
                PrimExpr::call(dtype, name, vec![arg]),
            );
            // Vectorized too: LLVM intrinsics on vectors, libm per lane.
            for kind in [ForKind::Serial, ForKind::Parallel] {
                let f = func(vec![bp(&a), bp(&c)], for_(&i, n, kind, body.clone()));
                let input = if dtype == DataType::f32() {
                    Tensor::from_vec(&[n], xs.iter().map(|&x| x as f32).collect()).unwrap()
                } else {
                    Tensor::from_vec(&[n], xs.clone()).unwrap()
                };
                let out = run(f, &[input], &[(dtype, vec![n])], &[]);
                let got = out[0].to_f64_vec();
                for (x, g) in xs.iter().zip(&got) {
                    let want = reference(if dtype == DataType::f32() {
                        *x as f32 as f64
                    } else {
                        *x
                    });
                    assert!(
                        (g - want).abs() <= 1e-5 * (1.0 + want.abs()),
                        "{name} {dtype} {kind:?}({x}) = {g}, want {want}"
                    );
                }
            }
        }
    }
    // erf, sqrt, pow and rsqrt at known points.
    let (a, c) = (buf("A", &[4], f32t()), buf("C", &[4], f32t()));
    let (d, e) = (buf("D", &[4], f32t()), buf("E", &[4], f32t()));
    let i = var("i");
    let x = load(&a, &[&i]);
    let body = Stmt::Seq(vec![
        store(
            &c,
            vec![i.to_expr()],
            PrimExpr::call(f32t(), "erf", vec![x.clone()]),
        ),
        store(
            &d,
            vec![i.to_expr()],
            PrimExpr::call(f32t(), "pow", vec![x.clone(), PrimExpr::float(f32t(), 2.0)]),
        ),
        store(
            &e,
            vec![i.to_expr()],
            PrimExpr::call(f32t(), "rsqrt", vec![x]),
        ),
    ]);
    let f = func(vec![bp(&a), bp(&c), bp(&d), bp(&e)], serial(&i, 4, body));
    let out = run(
        f,
        &[Tensor::from_vec(&[4], vec![0.5f32, 1.0, 2.0, 4.0]).unwrap()],
        &[(f32t(), vec![4]), (f32t(), vec![4]), (f32t(), vec![4])],
        &[],
    );
    close32(
        &out[0].to_vec::<f32>().unwrap(),
        &[0.520_499_9, 0.842_700_8, 0.995_322_3, 0.999_999_98],
        1e-6,
    );
    close32(
        &out[1].to_vec::<f32>().unwrap(),
        &[0.25, 1.0, 4.0, 16.0],
        1e-6,
    );
    close32(
        &out[2].to_vec::<f32>().unwrap(),
        &[
            std::f32::consts::SQRT_2,
            1.0,
            std::f32::consts::FRAC_1_SQRT_2,
            0.5,
        ],
        1e-6,
    );
}

/// Only a sum's update `C[i] = C[i] + a * b` is one `fmuladd`: an
/// elementwise `a * s + b` (a dequantization's scale and bias) rounds the
/// product and the sum apart, bit for bit as two float32 operations, on
/// serial and vectorized loops.
#[test]
fn only_an_accumulation_contracts_into_fmuladd() {
    let n = 257i64;
    let (a, sc, b, c) = (
        buf("A", &[n], f32t()),
        buf("S", &[1], f32t()),
        buf("B", &[n], f32t()),
        buf("C", &[n], f32t()),
    );
    let (i, z) = (var("i"), var("z"));
    let scale = PrimExpr::load(&sc, vec![PrimExpr::int(0)]);
    let value = load(&a, &[&i]) * scale + load(&b, &[&i]);
    let body = store(&c, vec![i.to_expr()], value);
    // Values whose products need more than float32's bits.
    let xs: Vec<f32> = (0..n).map(|k| 1.0 + k as f32 * 0.123_456_79).collect();
    let bs: Vec<f32> = (0..n).map(|k| -(k as f32) * 0.987_654_3).collect();
    let s = 0.333_333_34f32;
    let want: Vec<f32> = xs.iter().zip(&bs).map(|(x, b)| x * s + b).collect();
    let opts = CodegenOptions::default();
    for kind in [ForKind::Serial, ForKind::Vectorized] {
        let f = func(
            vec![bp(&a), bp(&sc), bp(&b), bp(&c)],
            for_(&i, n, kind, body.clone()),
        );
        let ir = super::emit_llvm_ir(&[("k".to_string(), f.clone())], &opts, false).unwrap();
        assert!(!ir.contains("fmuladd"), "{kind:?}: {ir}");
        let inputs = [
            Tensor::from_vec(&[n], xs.clone()).unwrap(),
            Tensor::from_vec(&[1], vec![s]).unwrap(),
            Tensor::from_vec(&[n], bs.clone()).unwrap(),
        ];
        let got = run(f, &inputs, &[(f32t(), vec![n])], &[])[0]
            .to_vec::<f32>()
            .unwrap();
        assert_eq!(got, want, "{kind:?}");
    }
    // C[0] = C[0] + A[z] * B[z]: the running sum is one fmuladd a step.
    let zero = vec![PrimExpr::int(0)];
    let update = PrimExpr::load(&c, zero.clone()) + load(&a, &[&z]) * load(&b, &[&z]);
    let sum = func(
        vec![bp(&a), bp(&b), bp(&c)],
        serial(&z, n, store(&c, zero, update)),
    );
    let ir = super::emit_llvm_ir(&[("k".to_string(), sum)], &opts, false).unwrap();
    assert!(ir.contains("llvm.fmuladd"), "{ir}");
}

/// Runs `C[i] = name(A[i])` on `float32` under each loop kind and checks
/// every result against `want` (a `float64` reference, rounded): a NaN
/// gives a NaN, and otherwise `ok(x, want, got, ulps)` holds, `ulps` being
/// the distance in units of the last place. Returns each kind's results,
/// for checks of particular elements.
fn check_f32_unary(
    name: &str,
    xs: &[f32],
    kinds: &[ForKind],
    want: impl Fn(f64) -> f64,
    ok: impl Fn(f32, f32, f32, i64) -> bool,
) -> Vec<Vec<f32>> {
    let n = xs.len() as i64;
    let (a, c) = (buf("A", &[n], f32t()), buf("C", &[n], f32t()));
    let i = var("i");
    let body = store(
        &c,
        vec![i.to_expr()],
        PrimExpr::call(f32t(), name, vec![load(&a, &[&i])]),
    );
    let mut all = Vec::new();
    for &kind in kinds {
        let f = func(vec![bp(&a), bp(&c)], for_(&i, n, kind, body.clone()));
        let input = Tensor::from_vec(&[n], xs.to_vec()).unwrap();
        let got = run(f, &[input], &[(f32t(), vec![n])], &[])[0].to_f64_vec();
        let got: Vec<f32> = got.iter().map(|&g| g as f32).collect();
        for (&x, &g) in xs.iter().zip(&got) {
            if x.is_nan() {
                assert!(g.is_nan(), "{name}({x}) = {g}");
                continue;
            }
            let w = want(x as f64) as f32;
            let ulps = (g.to_bits() as i64 - w.to_bits() as i64).abs();
            assert!(
                ok(x, w, g, ulps),
                "{kind:?} {name}({x}) = {g:e}, want {w:e} ({ulps} ulps)"
            );
        }
        all.push(got);
    }
    all
}

/// `exp` of `float32` is inline vector code: within two ulps of the
/// correctly rounded result over the whole range, scalar and vectorized
/// (on an AVX-512 host, 16 lanes scaled by `vscalefps`), with exact
/// specials (0 and `inf` at the ends, NaN through, `exp(0) = 1`).
#[test]
fn exp_f32_is_accurate_over_its_whole_range() {
    let mut xs: Vec<f32> = (0..4000).map(|i| -110.0 + i as f32 * 0.05).collect();
    let zero_at = xs.len();
    xs.extend([
        0.0,
        -0.0,
        1e-30,
        -1e-30,
        88.72,
        88.73,
        -87.3,
        -103.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MAX,
        f32::MIN,
    ]);
    // Subnormal results have fewer bits to be right in.
    let ok = |_: f32, w: f32, g: f32, ulps: i64| {
        ulps <= 2 || (w < f32::MIN_POSITIVE && (g - w).abs() < 1e-44)
    };
    // Vectorized: 16 lanes scale by `vscalefps` on an AVX-512 host.
    let kinds = [ForKind::Serial, ForKind::Parallel, ForKind::Vectorized];
    for got in check_f32_unary("exp", &xs, &kinds, f64::exp, ok) {
        assert_eq!(got[zero_at], 1.0);
    }
}

/// A vector step of 16 `float32` lanes scales `exp`'s result by 2^n with
/// one `vscalefps` where the CPU level has AVX-512 (`x86-64-v4`), and by
/// building 2^n from its bits below it (`x86-64-v3`, `generic`).
#[test]
fn exp_scales_by_vscalefps_with_avx512() {
    let n = 32;
    let (a, c) = (buf("A", &[n], f32t()), buf("C", &[n], f32t()));
    let i = var("i");
    let body = store(
        &c,
        vec![i.to_expr()],
        PrimExpr::call(f32t(), "exp", vec![load(&a, &[&i])]),
    );
    let f = func(vec![bp(&a), bp(&c)], for_(&i, n, ForKind::Vectorized, body));
    for (cpu, scalef) in [
        ("x86-64-v4", true),
        ("x86-64-v3", false),
        ("generic", false),
    ] {
        let opts = CodegenOptions {
            native_cpu: false,
            cpu: Some(cpu.to_string()),
        };
        let ir = super::emit_llvm_ir(&[("k".to_string(), f.clone())], &opts, false).unwrap();
        assert_eq!(
            ir.contains("@llvm.x86.avx512.mask.scalef.ps.512"),
            scalef,
            "{cpu}: {ir}"
        );
    }
}

/// `tanh` of `float32` is inline vector code over `exp`: within four ulps
/// of the correctly rounded result across both branches (the series below
/// 0.5, the exponential form above) and exact at the specials.
#[test]
fn tanh_f32_is_accurate_on_both_branches() {
    let mut xs: Vec<f32> = (0..6001).map(|i| -15.0 + i as f32 * 0.005).collect();
    let neg_zero_at = xs.len() + 1;
    xs.extend([
        0.0,
        -0.0,
        1e-30,
        -1e-30,
        0.499_999_97,
        0.5,
        -0.5,
        45.0,
        -100.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MAX,
    ]);
    let kinds = [ForKind::Serial, ForKind::Vectorized];
    for got in check_f32_unary("tanh", &xs, &kinds, f64::tanh, |_, _, _, ulps| ulps <= 4) {
        let neg_zero = got[neg_zero_at];
        assert!(neg_zero == 0.0 && neg_zero.is_sign_negative());
    }
}

/// `erf` of `float32` is inline vector code: within six ulps of the
/// correctly rounded result on both sides of the branch at 1.5, ±1 from
/// 3.92 on, and exact at the specials (`erf(-0)` is `-0`, as the
/// reference's).
#[test]
fn erf_f32_is_accurate_on_both_branches() {
    let mut xs: Vec<f32> = (0..6001).map(|i| -6.0 + i as f32 * 0.002).collect();
    let neg_zero_at = xs.len() + 1;
    xs.extend([
        0.0,
        -0.0,
        1e-30,
        1.499_999_9,
        1.5,
        10.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
    ]);
    let erf = relax_runtime::kernels::activation::erf;
    let kinds = [ForKind::Serial, ForKind::Vectorized];
    for got in check_f32_unary("erf", &xs, &kinds, erf, |_, _, _, ulps| ulps <= 6) {
        assert!(got[neg_zero_at].is_sign_negative(), "erf(-0) is -0");
    }
}

#[test]
fn casts_between_dtypes() {
    let n = 6i64;
    let a = buf("A", &[n], f32t());
    let b = buf("B", &[n], DataType::i64());
    let to_i32 = buf("I", &[n], DataType::i32());
    let to_f64 = buf("F", &[n], DataType::f64());
    let to_i8 = buf("W", &[n], DataType::int(8));
    let to_u8 = buf("U", &[n], DataType::uint(8));
    let to_bool = buf("Z", &[n], DataType::bool());
    let u8_back = buf("V", &[n], DataType::i32());
    let i = var("i");
    let x = load(&a, &[&i]);
    let y = load(&b, &[&i]);
    let at = |buf: &Buffer, v: PrimExpr| store(buf, vec![i.to_expr()], v);
    let body = Stmt::Seq(vec![
        at(&to_i32, x.clone().cast(DataType::i32())),
        at(&to_f64, y.clone().cast(DataType::f64())),
        at(&to_i8, y.clone().cast(DataType::int(8))),
        at(&to_u8, y.clone().cast(DataType::uint(8))),
        at(&to_bool, x.cast(DataType::bool())),
        // u8 -> i32 zero-extends: 200 stays 200.
        at(&u8_back, y.cast(DataType::uint(8)).cast(DataType::i32())),
    ]);
    let f = func(
        vec![
            bp(&a),
            bp(&b),
            bp(&to_i32),
            bp(&to_f64),
            bp(&to_i8),
            bp(&to_u8),
            bp(&to_bool),
            bp(&u8_back),
        ],
        serial(&i, n, body),
    );
    let av = vec![-2.7f32, 2.7, 0.0, 0.25, -0.0, 100.9];
    let bv = vec![300i64, -1, 200, -129, 7, 1 << 40];
    let out = run(
        f,
        &[
            Tensor::from_vec(&[n], av).unwrap(),
            Tensor::from_vec(&[n], bv.clone()).unwrap(),
        ],
        &[
            (DataType::i32(), vec![n]),
            (DataType::f64(), vec![n]),
            (DataType::int(8), vec![n]),
            (DataType::uint(8), vec![n]),
            (DataType::bool(), vec![n]),
            (DataType::i32(), vec![n]),
        ],
        &[],
    );
    assert_eq!(out[0].to_vec::<i32>().unwrap(), vec![-2, 2, 0, 0, 0, 100]);
    assert_eq!(
        out[1].to_vec::<f64>().unwrap(),
        bv.iter().map(|&v| v as f64).collect::<Vec<_>>()
    );
    assert_eq!(
        out[2].to_vec::<i8>().unwrap(),
        bv.iter().map(|&v| v as i8).collect::<Vec<_>>()
    );
    assert_eq!(
        out[3].to_vec::<u8>().unwrap(),
        bv.iter().map(|&v| v as u8).collect::<Vec<_>>()
    );
    assert_eq!(
        out[4].to_vec::<bool>().unwrap(),
        vec![true, true, false, true, false, true]
    );
    assert_eq!(
        out[5].to_vec::<i32>().unwrap(),
        bv.iter().map(|&v| v as u8 as i32).collect::<Vec<_>>()
    );
}

/// `Q[i] = A[i] div B[i]`, `R[i] = A[i] mod B[i]` over `n` elements, with
/// floor division (`//`, `%`) or truncating division (`T.truncdiv`,
/// `T.truncmod`, which TVM prints as `T.Div` and `T.truncmod`).
fn div_mod_func(n: i64, dtype: DataType, floor: bool) -> PrimFunc {
    let (a, b) = (buf("A", &[n], dtype), buf("B", &[n], dtype));
    let (q, r) = (buf("Q", &[n], dtype), buf("R", &[n], dtype));
    let i = var("i");
    let (x, y) = (load(&a, &[&i]), load(&b, &[&i]));
    let (div, rem) = if floor {
        (x.clone().floordiv(y.clone()), x.floormod(y))
    } else {
        (
            PrimExpr::call(dtype, "truncdiv", vec![x.clone(), y.clone()]),
            PrimExpr::call(dtype, "truncmod", vec![x, y]),
        )
    };
    let body = Stmt::Seq(vec![
        store(&q, vec![i.to_expr()], div),
        store(&r, vec![i.to_expr()], rem),
    ]);
    func(vec![bp(&a), bp(&b), bp(&q), bp(&r)], serial(&i, n, body))
}

/// Floor and truncating division of signed integers, on LLVM against the
/// documented results (a divisor of 0 gives `x` and remainder 0, of -1
/// gives `-x`, where LLVM's division would trap), and on the loop
/// interpreter, which agrees for every other divisor and reports a
/// division by zero.
#[test]
fn floor_and_trunc_div_and_mod_with_negatives() {
    let pairs: Vec<(i64, i64)> = vec![
        (7, 2),
        (-7, 2),
        (7, -2),
        (-7, -2),
        (6, 3),
        (-6, 3),
        (0, -5),
        (i64::MIN, -1),
        (i64::MIN, 1),
        (5, 0),
    ];
    let n = pairs.len() as i64;
    for floor in [true, false] {
        for dtype in [DataType::i64(), DataType::i32()] {
            let narrow = |v: i64| {
                if dtype == DataType::i32() {
                    v as i32 as i64
                } else {
                    v
                }
            };
            let xs: Vec<i64> = pairs.iter().map(|&(x, _)| narrow(x)).collect();
            let ys: Vec<i64> = pairs.iter().map(|&(_, y)| y).collect();
            let tensor = |v: &[i64]| {
                if dtype == DataType::i32() {
                    Tensor::from_vec(&[v.len() as i64], v.iter().map(|&x| x as i32).collect())
                        .unwrap()
                } else {
                    Tensor::from_vec(&[v.len() as i64], v.to_vec()).unwrap()
                }
            };
            let out = run(
                div_mod_func(n, dtype, floor),
                &[tensor(&xs), tensor(&ys)],
                &[(dtype, vec![n]), (dtype, vec![n])],
                &[],
            );
            let (got_q, got_r) = (out[0].to_f64_vec(), out[1].to_f64_vec());
            let (mut want_q, mut want_r) = (Vec::new(), Vec::new());
            for (k, (&x, &y)) in xs.iter().zip(&ys).enumerate() {
                let (wq, wr) = match (floor_div(x, y), floor_mod(x, y)) {
                    _ if y == 0 => (x, 0),
                    _ if y == -1 => (x.wrapping_neg(), 0),
                    _ if !floor => (x / y, x % y),
                    (Some(q), Some(r)) => (q, r),
                    _ => unreachable!(),
                };
                let (wq, wr) = (narrow(wq) as f64, narrow(wr) as f64);
                assert_eq!(got_q[k], wq, "{x} / {y} ({dtype}, floor {floor})");
                assert_eq!(got_r[k], wr, "{x} % {y} ({dtype}, floor {floor})");
                want_q.push(wq);
                want_r.push(wr);
            }
            // The interpreter, without the last pair (a divisor of 0).
            let m = (n - 1) as usize;
            let mut outs = vec![
                Tensor::zeros(dtype, &[m as i64]).unwrap(),
                Tensor::zeros(dtype, &[m as i64]).unwrap(),
            ];
            let f = div_mod_func(m as i64, dtype, floor);
            crate::tir::interp::run(&f, &[&tensor(&xs[..m]), &tensor(&ys[..m])], &mut outs, &[])
                .unwrap();
            assert_eq!(outs[0].to_f64_vec(), want_q[..m], "floor {floor} ({dtype})");
            assert_eq!(outs[1].to_f64_vec(), want_r[..m], "floor {floor} ({dtype})");
            let mut outs = vec![
                Tensor::zeros(dtype, &[n]).unwrap(),
                Tensor::zeros(dtype, &[n]).unwrap(),
            ];
            let f = div_mod_func(n, dtype, floor);
            let e = crate::tir::interp::run(&f, &[&tensor(&xs), &tensor(&ys)], &mut outs, &[])
                .unwrap_err();
            assert!(e.contains("division by zero"), "{e}");
        }
    }
}

#[test]
fn alloc_buffer_intermediate_on_stack_and_heap() {
    // T = A * 2 in a block-allocated buffer, then B = T + 1.
    for (len, symbolic) in [(10i64, false), (20_000i64, false), (33i64, true)] {
        let n = var("n");
        let dim = if symbolic {
            n.to_expr()
        } else {
            PrimExpr::int(len)
        };
        let a = Buffer::new("A", vec![dim.clone()], f32t());
        let b = Buffer::new("B", vec![dim.clone()], f32t());
        let t = Buffer::new("T", vec![dim.clone()], f32t());
        let (i, j) = (var("i"), var("j"));
        let two = PrimExpr::float(f32t(), 2.0);
        let one = PrimExpr::float(f32t(), 1.0);
        let body = Stmt::Seq(vec![
            serial(
                &i,
                dim.clone(),
                store(&t, vec![i.to_expr()], load(&a, &[&i]) * two),
            ),
            serial(
                &j,
                dim.clone(),
                store(&b, vec![j.to_expr()], load(&t, &[&j]) + one),
            ),
        ]);
        let root = block("root", &[], &[], None, body, vec![t.clone()]);
        let f = func(vec![bp(&a), bp(&b)], root);
        let av: Vec<f32> = (0..len).map(|x| x as f32).collect();
        let scalars = if symbolic { vec![len] } else { vec![] };
        let out = run(
            f,
            &[Tensor::from_vec(&[len], av.clone()).unwrap()],
            &[(f32t(), vec![len])],
            &scalars,
        );
        let want: Vec<f32> = av.iter().map(|x| x * 2.0 + 1.0).collect();
        assert_eq!(out[0].to_vec::<f32>().unwrap(), want, "length {len}");
    }
}

#[test]
fn parallel_loop_with_captures_and_nesting() {
    // B[i, j] = A[i, j] * s + i, rows in parallel, the inner loop parallel
    // too; `s` is a float scalar parameter captured by both bodies.
    let (m, n) = (64i64, 33i64);
    let s = TirVar::with_dtype("s", DataType::f64());
    let a = buf("A", &[m, n], DataType::f64());
    let b = buf("B", &[m, n], DataType::f64());
    let (i, j) = (var("i"), var("j"));
    let value = load(&a, &[&i, &j]) * s.to_expr() + i.to_expr().cast(DataType::f64());
    let body = for_(
        &i,
        m,
        ForKind::Parallel,
        for_(
            &j,
            n,
            ForKind::Parallel,
            store(&b, vec![i.to_expr(), j.to_expr()], value),
        ),
    );
    let f = func(vec![bp(&a), bp(&b), PrimFuncParam::Scalar(s)], body);
    let av: Vec<f64> = (0..m * n).map(|x| x as f64 * 0.5).collect();
    let out = run(
        f,
        &[Tensor::from_vec(&[m, n], av.clone()).unwrap()],
        &[(DataType::f64(), vec![m, n])],
        &[3.0f64.to_bits() as i64],
    );
    let want: Vec<f64> = (0..m * n)
        .map(|k| av[k as usize] * 3.0 + (k / n) as f64)
        .collect();
    assert_eq!(out[0].to_vec::<f64>().unwrap(), want);
}

#[test]
fn vectorized_loops_contiguous_broadcast_gather_and_fallback() {
    // C[i, j] = A[i, j] * B[i] + A[i, 2j mod n] over rows of 37 (two
    // 16-lane steps and a 5-lane rest), j vectorized.
    let (m, n) = (3i64, 37i64);
    let a = buf("A", &[m, n], f32t());
    let b = buf("B", &[m], f32t());
    let c = buf("C", &[m, n], f32t());
    let d = buf("D", &[m, n], DataType::bool());
    let (i, j) = (var("i"), var("j"));
    let strided = PrimExpr::load(&a, vec![i.to_expr(), (j.to_expr() * 2).floormod(n)]);
    let value = load(&a, &[&i, &j]) * load(&b, &[&i]) + strided;
    let vec_body = for_(
        &j,
        n,
        ForKind::Vectorized,
        store(&c, vec![i.to_expr(), j.to_expr()], value),
    );
    // A vectorized loop whose body is not a single store: LLVM's vectorizer.
    let k = var("k");
    let fallback = for_(
        &k,
        n,
        ForKind::Vectorized,
        Stmt::Seq(vec![store(
            &d,
            vec![i.to_expr(), k.to_expr()],
            load(&a, &[&i, &k]).gt(PrimExpr::float(f32t(), 10.0)),
        )]),
    );
    let f = func(
        vec![bp(&a), bp(&b), bp(&c), bp(&d)],
        serial(&i, m, Stmt::Seq(vec![vec_body, fallback])),
    );
    let av: Vec<f32> = (0..m * n).map(|x| (x % 11) as f32 + 0.5).collect();
    let bv = vec![1.0f32, -2.0, 0.5];
    let out = run(
        f,
        &[
            Tensor::from_vec(&[m, n], av.clone()).unwrap(),
            Tensor::from_vec(&[m], bv.clone()).unwrap(),
        ],
        &[(f32t(), vec![m, n]), (DataType::bool(), vec![m, n])],
        &[],
    );
    let mut want = vec![0.0f32; (m * n) as usize];
    let mut flags = vec![false; (m * n) as usize];
    for (r, scale) in bv.iter().enumerate() {
        for q in 0..n as usize {
            let row = r * n as usize;
            want[row + q] = av[row + q] * scale + av[row + (2 * q) % n as usize];
            flags[row + q] = av[row + q] > 10.0;
        }
    }
    assert_eq!(out[0].to_vec::<f32>().unwrap(), want);
    assert_eq!(out[1].to_vec::<bool>().unwrap(), flags);
}

#[test]
fn vectorized_ewise_with_blocks_and_unrolled_loops() {
    let n = 20i64;
    let av: Vec<f32> = (0..n).map(|x| x as f32 - 7.0).collect();
    let bv: Vec<f32> = (0..n).map(|x| x as f32 * 3.0).collect();
    for kind in [ForKind::Vectorized, ForKind::Unrolled, ForKind::Parallel] {
        let f = ewise(n, f32t(), kind, |x, y| x * y.clone() - y);
        let out = run(
            f,
            &[
                Tensor::from_vec(&[n], av.clone()).unwrap(),
                Tensor::from_vec(&[n], bv.clone()).unwrap(),
            ],
            &[(f32t(), vec![n])],
            &[],
        );
        let want: Vec<f32> = av.iter().zip(&bv).map(|(x, y)| x * y - y).collect();
        assert_eq!(out[0].to_vec::<f32>().unwrap(), want, "{kind:?}");
    }
}

#[test]
fn if_then_else_let_and_bool_buffers() {
    // M[i] = A[i] < B[i]; C[i] = if M[i] { let t = A[i] * 2 in t } else { -1 }
    let n = 7i64;
    let (a, b) = (
        buf("A", &[n], DataType::i32()),
        buf("B", &[n], DataType::i32()),
    );
    let m = buf("M", &[n], DataType::bool());
    let c = buf("C", &[n], DataType::i32());
    let (i, t) = (var("i"), TirVar::with_dtype("t", DataType::i32()));
    let body = Stmt::Seq(vec![
        store(&m, vec![i.to_expr()], load(&a, &[&i]).lt(load(&b, &[&i]))),
        Stmt::IfThenElse {
            cond: load(&m, &[&i]),
            then_case: Box::new(Stmt::LetStmt {
                var: t.clone(),
                value: load(&a, &[&i]) * PrimExpr::int_of(DataType::i32(), 2),
                body: Box::new(store(&c, vec![i.to_expr()], t.to_expr())),
            }),
            else_case: Some(Box::new(store(
                &c,
                vec![i.to_expr()],
                PrimExpr::int_of(DataType::i32(), -1),
            ))),
        },
    ]);
    let f = func(vec![bp(&a), bp(&b), bp(&m), bp(&c)], serial(&i, n, body));
    let av = vec![1i32, 5, -3, 4, 0, 9, -9];
    let bv = vec![2i32, 5, -4, 8, 1, 0, 0];
    let out = run(
        f,
        &[
            Tensor::from_vec(&[n], av.clone()).unwrap(),
            Tensor::from_vec(&[n], bv.clone()).unwrap(),
        ],
        &[(DataType::bool(), vec![n]), (DataType::i32(), vec![n])],
        &[],
    );
    let flags: Vec<bool> = av.iter().zip(&bv).map(|(x, y)| x < y).collect();
    assert_eq!(out[0].to_vec::<bool>().unwrap(), flags);
    let want: Vec<i32> = av
        .iter()
        .zip(&flags)
        .map(|(x, f)| if *f { x * 2 } else { -1 })
        .collect();
    assert_eq!(out[1].to_vec::<i32>().unwrap(), want);
}

#[test]
fn several_kernels_in_one_library() {
    let add = ewise(4, f32t(), ForKind::Serial, |x, y| x + y);
    let sub = ewise(4, f32t(), ForKind::Serial, |x, y| x - y);
    let lib = jit(
        &[("add".into(), add.clone()), ("sub".into(), sub)],
        &CodegenOptions::default(),
    )
    .unwrap();
    let x = Tensor::from_vec(&[4], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let y = Tensor::from_vec(&[4], vec![0.5f32; 4]).unwrap();
    for (name, want) in [
        ("add", [1.5f32, 2.5, 3.5, 4.5]),
        ("sub", [0.5, 1.5, 2.5, 3.5]),
    ] {
        let mut out = vec![Tensor::zeros(f32t(), &[4]).unwrap()];
        lib.lookup(name)
            .unwrap()
            .call(&[&x, &y], &mut out, &[])
            .unwrap();
        assert_eq!(out[0].to_vec::<f32>().unwrap(), want);
    }
    // Kernels outlive the library handle that made them.
    let k = lib.lookup("add").unwrap();
    drop(lib);
    let mut out = vec![Tensor::zeros(f32t(), &[4]).unwrap()];
    k.call(&[&x, &y], &mut out, &[]).unwrap();
    assert_eq!(out[0].to_vec::<f32>().unwrap(), [1.5, 2.5, 3.5, 4.5]);
    // Two kernels may not share a symbol.
    let m = unsupported(jit(
        &[("add".into(), add.clone()), ("add".into(), add)],
        &CodegenOptions::default(),
    ));
    assert!(m.contains("`add` is taken"), "{m}");
}

#[test]
fn emit_object_is_an_elf_file() {
    let (mm, _) = matmul(PrimExpr::int(8), 8, 8, ForKind::Parallel);
    for native_cpu in [false, true] {
        let bytes = emit_object(
            &[("matmul".into(), mm.clone())],
            &CodegenOptions {
                native_cpu,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(bytes.len() > 64);
        assert_eq!(&bytes[..4], b"\x7fELF");
        // The kernel's symbol is in the symbol table.
        assert!(bytes.windows(7).any(|w| w == b"matmul\0"));
    }
}

#[test]
fn unsupported_constructs_are_errors_not_panics() {
    let i = var("i");
    let a = buf("A", &[4], f32t());
    let c = buf("C", &[4], f32t());
    let compile = |body: Stmt, params: Vec<PrimFuncParam>| {
        jit(
            &[("k".into(), func(params, body))],
            &CodegenOptions::default(),
        )
    };
    let ps = || vec![bp(&a), bp(&c)];

    let m = unsupported(compile(
        serial(
            &i,
            4,
            store(
                &c,
                vec![i.to_expr()],
                PrimExpr::call(f32t(), "frobnicate", vec![load(&a, &[&i])]),
            ),
        ),
        ps(),
    ));
    assert!(m.contains("T.frobnicate"), "{m}");

    let ghost = var("ghost");
    let m = unsupported(compile(
        serial(&i, 4, store(&c, vec![i.to_expr()], load(&a, &[&ghost]))),
        ps(),
    ));
    assert!(m.contains("`ghost`"), "{m}");

    let m = unsupported(compile(
        serial(
            &i,
            4,
            store(&c, vec![i.to_expr(), i.to_expr()], load(&a, &[&i])),
        ),
        ps(),
    ));
    assert!(m.contains("rank 1 indexed with 2"), "{m}");

    let other = buf("Other", &[4], f32t());
    let m = unsupported(compile(
        serial(&i, 4, store(&other, vec![i.to_expr()], load(&a, &[&i]))),
        ps(),
    ));
    assert!(m.contains("`Other`"), "{m}");

    let h = buf("H", &[4], DataType::float(16).with_lanes(4));
    let m = unsupported(compile(Stmt::no_op(), vec![bp(&h)]));
    assert!(m.contains("float16x4"), "{m}");

    let m = unsupported(compile(
        serial(
            &i,
            4,
            store(&c, vec![i.to_expr()], PrimExpr::call(f32t(), "exp", vec![])),
        ),
        ps(),
    ));
    assert!(m.contains("takes 1"), "{m}");

    let fv = TirVar::with_dtype("x", f32t());
    let m = unsupported(compile(serial(&fv, 4, Stmt::no_op()), ps()));
    assert!(m.contains("loop variable `x`"), "{m}");

    let bad_block = Stmt::Block(Box::new(Block {
        name: "bad".into(),
        iter_vars: vec![IterVar {
            var: var("v"),
            min: PrimExpr::int(0),
            extent: PrimExpr::int(4),
            kind: IterKind::Spatial,
        }],
        iter_values: vec![],
        reads: vec![],
        writes: vec![],
        init: None,
        body: Box::new(Stmt::no_op()),
        alloc_buffers: vec![],
        annotations: Attrs::new(),
    }));
    let m = unsupported(compile(bad_block, ps()));
    assert!(m.contains("block `bad`"), "{m}");

    let m = unsupported(emit_object(
        &[("relax_workspace_alloc".into(), func(ps(), Stmt::no_op()))],
        &CodegenOptions::default(),
    ));
    assert!(m.contains("`relax_workspace_alloc` is taken"), "{m}");
}

#[test]
fn generated_ir_has_vectors_loop_hints_and_the_pool_call() {
    let ir = |f: PrimFunc| {
        super::emit_llvm_ir(&[("k".into(), f)], &CodegenOptions::default(), false).unwrap()
    };
    let text = ir(ewise(37, f32t(), ForKind::Vectorized, |x, y| x + y));
    assert!(text.contains("load <16 x float>"), "{text}");
    assert!(text.contains("store <5 x float>"), "{text}");
    let text = ir(ewise(8, f32t(), ForKind::Unrolled, |x, y| x + y));
    assert!(text.contains("!\"llvm.loop.unroll.full\""), "{text}");
    // The loop ID refers to itself, as LLVM requires.
    assert!(
        text.lines().any(|l| {
            l.split_once(" = distinct !{")
                .or_else(|| l.split_once(" = !{"))
                .is_some_and(|(id, rest)| rest.starts_with(&format!("{id},")))
        }),
        "{text}"
    );
    let text = ir(ewise(8, f32t(), ForKind::Parallel, |x, y| x + y));
    assert!(text.contains("call void @relax_parallel_for"), "{text}");
    assert!(
        text.contains("define internal void @k.parallel.0"),
        "{text}"
    );
    // Optimized for the host, the scalar loop is vectorized by LLVM.
    let text = super::emit_llvm_ir(
        &[(
            "k".into(),
            ewise(1024, f32t(), ForKind::Serial, |x, y| x * y),
        )],
        &CodegenOptions {
            native_cpu: true,
            ..Default::default()
        },
        true,
    )
    .unwrap();
    assert!(text.contains("x float>"), "{text}");
}

/// A vectorized load with lanes 2 or 3 elements apart is one load of
/// exactly the span the lanes cover and a shuffle (no per-lane loads); a
/// stride of 5 is a gather. The values are the element-by-element ones,
/// with the last lane at the buffer's last element (a wider load would
/// read past it).
#[test]
fn strided_loads_read_their_span_and_shuffle() {
    for stride in [2i64, 3, 5] {
        let n = 16i64;
        let len = stride * (n - 1) + 1;
        let (a, c) = (buf("A", &[len], f32t()), buf("C", &[n], f32t()));
        let i = var("i");
        let body = store(
            &c,
            vec![i.to_expr()],
            PrimExpr::load(&a, vec![i.to_expr() * stride]),
        );
        let f = func(vec![bp(&a), bp(&c)], for_(&i, n, ForKind::Vectorized, body));
        let text = super::emit_llvm_ir(
            &[("k".into(), f.clone())],
            &CodegenOptions::default(),
            false,
        )
        .unwrap();
        let span = format!("load <{len} x float>");
        if stride <= super::memory::MAX_LOAD_STRIDE {
            assert!(text.contains(&span), "{text}");
            assert!(text.contains("shufflevector"), "{text}");
            assert!(!text.contains("insertelement"), "{text}");
        } else {
            assert!(!text.contains(&span), "{text}");
            assert!(text.contains("insertelement"), "{text}");
        }
        let av: Vec<f32> = (0..len).map(|x| x as f32 * 0.5).collect();
        let out = run(
            f,
            &[Tensor::from_vec(&[len], av).unwrap()],
            &[(f32t(), vec![n])],
            &[],
        );
        let want: Vec<f32> = (0..n).map(|k| (k * stride) as f32 * 0.5).collect();
        assert_eq!(out[0].to_vec::<f32>().unwrap(), want);
    }
}

/// With AVX-512, a vectorized store whose lanes are 2 to 4 elements
/// apart is one `llvm.masked.store` of the span they cover (the elements
/// between them masked off); without it, stores lane by lane. The values
/// are the element-by-element ones, the elements between the stored lanes
/// untouched and the last lane at the buffer's last element.
#[test]
fn strided_stores_are_masked_span_stores_with_avx512() {
    for stride in [2i64, 3, 4] {
        for n in [7i64, 14, 16] {
            let len = stride * (n - 1) + 1;
            let (a, c) = (buf("A", &[len], f32t()), buf("C", &[len], f32t()));
            let i = var("i");
            let at = vec![i.to_expr() * stride];
            let one = PrimExpr::float(f32t(), 1.0);
            let body = store(&c, at.clone(), PrimExpr::load(&a, at) + one);
            let f = func(vec![bp(&a), bp(&c)], for_(&i, n, ForKind::Vectorized, body));
            for (cpu, avx512) in [("x86-64-v4", true), ("x86-64-v3", false)] {
                let opts = CodegenOptions {
                    native_cpu: false,
                    cpu: Some(cpu.to_string()),
                };
                let ir =
                    super::emit_llvm_ir(&[("k".to_string(), f.clone())], &opts, false).unwrap();
                let what = format!("{cpu}, stride {stride}, {n} lanes: {ir}");
                assert_eq!(ir.contains("@llvm.masked.store"), avx512, "{what}");
            }
            // The JIT compiles for the host: with its AVX-512, where it has
            // it.
            let av: Vec<f32> = (0..len).map(|x| x as f32 * 0.5).collect();
            let out = run(
                f,
                &[Tensor::from_vec(&[len], av).unwrap()],
                &[(f32t(), vec![len])],
                &[],
            );
            let want: Vec<f32> = (0..len)
                .map(|e| match e % stride {
                    0 => e as f32 * 0.5 + 1.0,
                    _ => 0.0,
                })
                .collect();
            assert_eq!(
                out[0].to_vec::<f32>().unwrap(),
                want,
                "stride {stride}, {n} lanes"
            );
        }
    }
}

#[test]
fn guarded_loads_only_run_when_chosen() {
    // C[i] = i > 0 ? A[i - 2^40] : A[i] would fault if both sides ran.
    let n = 6i64;
    let (a, c, d) = (
        buf("A", &[n], f32t()),
        buf("C", &[n], f32t()),
        buf("D", &[n], f32t()),
    );
    let i = var("i");
    let far = PrimExpr::load(&a, vec![i.to_expr() - (1i64 << 40)]);
    let body = Stmt::Seq(vec![
        store(
            &c,
            vec![i.to_expr()],
            PrimExpr::select(i.to_expr().lt(0), far.clone(), load(&a, &[&i])),
        ),
        store(
            &d,
            vec![i.to_expr()],
            PrimExpr::call(
                f32t(),
                "if_then_else",
                vec![i.to_expr().ge(n), far, PrimExpr::float(f32t(), 5.0)],
            ),
        ),
    ]);
    let av: Vec<f32> = (0..n).map(|x| x as f32).collect();
    for kind in [ForKind::Serial, ForKind::Parallel] {
        let f = func(
            vec![bp(&a), bp(&c), bp(&d)],
            for_(&i, n, kind, body.clone()),
        );
        let out = run(
            f,
            &[Tensor::from_vec(&[n], av.clone()).unwrap()],
            &[(f32t(), vec![n]), (f32t(), vec![n])],
            &[],
        );
        assert_eq!(out[0].to_vec::<f32>().unwrap(), av);
        assert_eq!(out[1].to_vec::<f32>().unwrap(), vec![5.0; n as usize]);
    }
}

/// In a vector loop over `j`, `C[i, j] = W[j] * (i > 0 ? A[i - 2^40] :
/// A[i])`: the `Select` does not use `j`, so it is one scalar branch per
/// step (only the chosen side read) broadcast over the lanes, and the
/// loop is still vector code.
#[test]
fn a_guarded_select_the_same_in_every_lane_branches_once_per_step() {
    let (n, m) = (3i64, 16i64);
    let (a, w, c) = (
        buf("A", &[n], f32t()),
        buf("W", &[m], f32t()),
        buf("C", &[n, m], f32t()),
    );
    let (i, j) = (var("i"), var("j"));
    let far = PrimExpr::load(&a, vec![i.to_expr() - (1i64 << 40)]);
    let pick = PrimExpr::select(i.to_expr().lt(0), far, load(&a, &[&i]));
    let body = for_(
        &i,
        n,
        ForKind::Serial,
        for_(
            &j,
            m,
            ForKind::Vectorized,
            store(&c, vec![i.to_expr(), j.to_expr()], load(&w, &[&j]) * pick),
        ),
    );
    let f = func(vec![bp(&a), bp(&w), bp(&c)], body);
    let ir = crate::codegen::llvm::emit_llvm_ir(
        &[("f".to_string(), f.clone())],
        &crate::codegen::llvm::CodegenOptions::default(),
        false,
    )
    .unwrap();
    assert!(ir.contains("fmul <16 x float>"), "{ir}");
    let av = vec![1.0f32, 2.0, 3.0];
    let wv: Vec<f32> = (0..m).map(|x| x as f32).collect();
    let out = run(
        f,
        &[
            Tensor::from_vec(&[n], av.clone()).unwrap(),
            Tensor::from_vec(&[m], wv.clone()).unwrap(),
        ],
        &[(f32t(), vec![n, m])],
        &[],
    );
    let want: Vec<f32> = av
        .iter()
        .flat_map(|x| wv.iter().map(move |y| x * y))
        .collect();
    assert_eq!(out[0].to_vec::<f32>().unwrap(), want);
}

#[test]
fn nan_inf_fmod_and_abs() {
    let n = 5i64;
    let a = buf("A", &[n], DataType::f64());
    let (nan, inf) = (
        buf("N", &[n], DataType::bool()),
        buf("I", &[n], DataType::bool()),
    );
    let (m, ab) = (
        buf("M", &[n], DataType::f64()),
        buf("B", &[n], DataType::i32()),
    );
    let i = var("i");
    let x = load(&a, &[&i]);
    let at = |b: &Buffer, v: PrimExpr| store(b, vec![i.to_expr()], v);
    let body = Stmt::Seq(vec![
        at(
            &nan,
            PrimExpr::call(DataType::bool(), "isnan", vec![x.clone()]),
        ),
        at(
            &inf,
            PrimExpr::call(DataType::bool(), "isinf", vec![x.clone()]),
        ),
        at(
            &m,
            PrimExpr::call(
                DataType::f64(),
                "fmod",
                vec![x.clone(), PrimExpr::float(DataType::f64(), 2.5)],
            ),
        ),
        at(
            &ab,
            PrimExpr::call(DataType::i32(), "abs", vec![x.cast(DataType::i32())]),
        ),
    ]);
    let f = func(
        vec![bp(&a), bp(&nan), bp(&inf), bp(&m), bp(&ab)],
        serial(&i, n, body),
    );
    let av = vec![f64::NAN, f64::INFINITY, -7.0, 6.0, f64::NEG_INFINITY];
    let out = run(
        f,
        &[Tensor::from_vec(&[n], av).unwrap()],
        &[
            (DataType::bool(), vec![n]),
            (DataType::bool(), vec![n]),
            (DataType::f64(), vec![n]),
            (DataType::i32(), vec![n]),
        ],
        &[],
    );
    assert_eq!(
        out[0].to_vec::<bool>().unwrap(),
        [true, false, false, false, false]
    );
    assert_eq!(
        out[1].to_vec::<bool>().unwrap(),
        [false, true, false, false, true]
    );
    let fm = out[2].to_vec::<f64>().unwrap();
    assert_eq!(&fm[2..4], &[-2.0, 1.0]);
    assert_eq!(&out[3].to_vec::<i32>().unwrap()[2..4], &[7, 6]);
}

#[test]
fn calls_are_checked_and_dims_come_from_shapes() {
    // `n` is only a dim: a call may pass it or leave it to the shapes.
    let n = var("n");
    let a = Buffer::new("A", vec![n.to_expr()], f32t());
    let c = Buffer::new("C", vec![n.to_expr()], f32t());
    let i = var("i");
    let body = serial(
        &i,
        n.to_expr(),
        store(
            &c,
            vec![i.to_expr()],
            load(&a, &[&i]) * PrimExpr::float(f32t(), 3.0),
        ),
    );
    let lib = jit(
        &[("k".into(), func(vec![bp(&a), bp(&c)], body))],
        &CodegenOptions::default(),
    )
    .unwrap();
    let k = lib.lookup("k").unwrap();
    let x = Tensor::from_vec(&[3], vec![1.0f32, 2.0, 3.0]).unwrap();
    for scalars in [&[][..], &[3][..]] {
        let mut out = vec![Tensor::zeros(f32t(), &[3]).unwrap()];
        k.call(&[&x], &mut out, scalars).unwrap();
        assert_eq!(out[0].to_vec::<f32>().unwrap(), [3.0, 6.0, 9.0]);
    }
    let mut short = vec![Tensor::zeros(f32t(), &[2]).unwrap()];
    let e = k.call(&[&x], &mut short, &[]).unwrap_err();
    assert!(e.contains("buffer `C` has dim 0 = n = 3"), "{e}");
    let mut out = vec![Tensor::zeros(f32t(), &[3]).unwrap()];
    let e = k.call(&[&x], &mut out, &[4]).unwrap_err();
    assert!(e.contains("buffer `A`"), "{e}");
    let e = k.call(&[], &mut out, &[]).unwrap_err();
    assert!(e.contains("expected 2 buffer arguments, found 1"), "{e}");
    let wrong = Tensor::zeros(DataType::f64(), &[3]).unwrap();
    let e = k.call(&[&wrong], &mut out, &[]).unwrap_err();
    assert!(e.contains("float64"), "{e}");
    let e = k.call(&[&x], &mut out, &[1, 2]).unwrap_err();
    assert!(e.contains("scalar arguments"), "{e}");
}

#[test]
fn the_fast_call_check_accepts_and_computes_what_the_full_one_does() {
    // A (n, 4) and B (m,) in, C (n, m) out, `m` a scalar parameter: the
    // fast check applies. D (2 * n,) makes a second signature take the
    // full check only.
    let (n, m) = (var("n"), var("m"));
    let a = Buffer::new("A", vec![n.to_expr(), PrimExpr::int(4)], f32t());
    let b = Buffer::new("B", vec![m.to_expr()], f32t());
    let c = Buffer::new("C", vec![n.to_expr(), m.to_expr()], f32t());
    let d = Buffer::new("D", vec![n.to_expr() * PrimExpr::int(2)], f32t());
    let plain = func(
        vec![bp(&a), bp(&b), bp(&c), PrimFuncParam::Scalar(m.clone())],
        Stmt::Evaluate(PrimExpr::int(0)),
    );
    let sig = KernelSignature::new(&plain);
    assert!(sig.has_fast_check());
    let full = sig.clone().without_fast_check();
    let t = |shape: &[i64]| Tensor::zeros(f32t(), shape).unwrap();
    let cases: Vec<(Vec<Tensor>, Vec<Tensor>, Vec<i64>)> = vec![
        (vec![t(&[3, 4]), t(&[5])], vec![t(&[3, 5])], vec![5]),
        (vec![t(&[3, 4]), t(&[5])], vec![t(&[3, 5])], vec![5, 3]),
        (vec![t(&[3, 4]), t(&[5])], vec![t(&[3, 5])], vec![]),
        (vec![t(&[3, 4]), t(&[5])], vec![t(&[3, 5])], vec![6]),
        (vec![t(&[3, 5]), t(&[5])], vec![t(&[3, 5])], vec![5]),
        (vec![t(&[3, 4]), t(&[5])], vec![t(&[2, 5])], vec![5]),
        (vec![t(&[3, 4])], vec![t(&[3, 5])], vec![5]),
        (vec![t(&[3, 4, 1]), t(&[5])], vec![t(&[3, 5])], vec![5]),
        (vec![t(&[0, 4]), t(&[0])], vec![t(&[0, 0])], vec![0]),
    ];
    for (ins, outs, scalars) in &cases {
        let ins: Vec<&Tensor> = ins.iter().collect();
        assert_eq!(
            sig.scalars(&ins, outs, scalars),
            full.scalars(&ins, outs, scalars),
            "{:?} {:?} {scalars:?}",
            ins.iter().map(|t| t.shape()).collect::<Vec<_>>(),
            outs.iter().map(|t| t.shape()).collect::<Vec<_>>()
        );
    }
    let ok = sig.scalars(&[&t(&[3, 4]), &t(&[5])], &[t(&[3, 5])], &[5]);
    assert_eq!(ok, Ok(vec![5, 3]));

    let expr = func(vec![bp(&a), bp(&d)], Stmt::Evaluate(PrimExpr::int(0)));
    let sig = KernelSignature::new(&expr);
    assert!(!sig.has_fast_check());
    assert_eq!(sig.scalars(&[&t(&[3, 4])], &[t(&[6])], &[]), Ok(vec![3]));
    let e = sig.scalars(&[&t(&[3, 4])], &[t(&[5])], &[]).unwrap_err();
    assert!(e.contains("buffer `D` has dim 0"), "{e}");
}

#[test]
fn integer_pow_is_exact_and_wraps() {
    let a: Vec<i64> = vec![3, -2, 7, 2, 1, -1, -1, 5, 0, 10];
    let b: Vec<i64> = vec![4, 3, 0, 62, -5, -3, -4, -1, 0, 19];
    let want: Vec<i64> = vec![81, -8, 1, 1 << 62, 1, -1, 1, 0, 1, 10i64.wrapping_pow(19)];
    for kind in [ForKind::Serial, ForKind::Parallel] {
        let n = a.len() as i64;
        let f = ewise(n, DataType::i64(), kind, |x, y| {
            PrimExpr::call(DataType::i64(), "pow", vec![x, y])
        });
        let out = run(
            f,
            &[
                Tensor::from_vec(&[n], a.clone()).unwrap(),
                Tensor::from_vec(&[n], b.clone()).unwrap(),
            ],
            &[(DataType::i64(), vec![n])],
            &[],
        );
        assert_eq!(out[0].to_vec::<i64>().unwrap(), want);
    }
    // int32, compared with integer arithmetic (17^9 is past 2^24, where
    // float32 stops being exact).
    let f = ewise(2, DataType::i32(), ForKind::Serial, |x, y| {
        PrimExpr::call(DataType::i32(), "pow", vec![x, y])
    });
    let out = run(
        f,
        &[
            Tensor::from_vec(&[2], vec![17i32, -3]).unwrap(),
            Tensor::from_vec(&[2], vec![7i32, 5]).unwrap(),
        ],
        &[(DataType::i32(), vec![2])],
        &[],
    );
    assert_eq!(out[0].to_vec::<i32>().unwrap(), [410_338_673, -243]);
}

/// TVM's `pragma_auto_unroll_max_step` on a loop: a serial loop of at
/// most that many steps under it is fully unrolled (LLVM's
/// `unroll.full`), a longer one is not, and the results are the
/// unannotated loop's, at an odd size.
#[test]
fn auto_unroll_max_step_unrolls_short_serial_loops() {
    let annotate = |f: PrimFunc, max_step: i64| {
        let mut f = f;
        if let Stmt::For { annotations, .. } = &mut f.body {
            *annotations = annotations.with("pragma_auto_unroll_max_step", max_step);
        }
        f
    };
    let ir = |f: PrimFunc| {
        super::emit_llvm_ir(&[("k".into(), f)], &CodegenOptions::default(), false).unwrap()
    };
    let plain = || ewise(13, f32t(), ForKind::Serial, |x, y| x.clone() * y + x);
    assert!(!ir(plain()).contains("llvm.loop.unroll.full"));
    assert!(ir(annotate(plain(), 16)).contains("!\"llvm.loop.unroll.full\""));
    assert!(!ir(annotate(plain(), 12)).contains("llvm.loop.unroll.full"));
    let a: Vec<f32> = (0..13).map(|x| x as f32 * 0.25 - 1.0).collect();
    let b: Vec<f32> = (0..13).map(|x| 3.0 - x as f32).collect();
    let inputs = [
        Tensor::from_vec(&[13], a).unwrap(),
        Tensor::from_vec(&[13], b).unwrap(),
    ];
    let want = run(plain(), &inputs, &[(f32t(), vec![13])], &[]);
    let got = run(annotate(plain(), 16), &inputs, &[(f32t(), vec![13])], &[]);
    assert_eq!(
        got[0].to_vec::<f32>().unwrap(),
        want[0].to_vec::<f32>().unwrap()
    );
}
