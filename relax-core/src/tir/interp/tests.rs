//! Interpreter tests on PrimFuncs built with the IR constructors (the text
//! format tests live with the parser's TIR tests).

use super::*;
use crate::ir::Attrs;
use crate::tir::{Block, BufferRegion, ForKind, IterVar, Stmt};

fn f32s(t: &Tensor) -> Vec<f32> {
    t.to_vec::<f32>().unwrap()
}

fn for_(v: &TirVar, extent: impl Into<PrimExpr>, body: Stmt) -> Stmt {
    Stmt::For {
        loop_var: v.clone(),
        min: PrimExpr::int(0),
        extent: extent.into(),
        kind: ForKind::Serial,
        body: Box::new(body),
        annotations: Attrs::new(),
    }
}

/// `C[i, j] = sum_k A[i, k] * B[k, j]` as a reduction block with an init.
fn matmul(n: i64, k: i64, m: i64) -> PrimFunc {
    let a = Buffer::new("A", vec![n.into(), k.into()], DataType::f32());
    let b = Buffer::new("B", vec![k.into(), m.into()], DataType::f32());
    let c = Buffer::new("C", vec![n.into(), m.into()], DataType::f32());
    let (i, j, kk) = (TirVar::new("i"), TirVar::new("j"), TirVar::new("k"));
    let (vi, vj, vk) = (TirVar::new("vi"), TirVar::new("vj"), TirVar::new("vk"));
    let iv = |v: &TirVar, ext: i64, kind| IterVar {
        var: v.clone(),
        min: PrimExpr::int(0),
        extent: ext.into(),
        kind,
    };
    let point = |buf: &Buffer, idx: Vec<&TirVar>| BufferRegion {
        buffer: buf.clone(),
        region: idx
            .into_iter()
            .map(|v| (v.to_expr(), PrimExpr::int(1)))
            .collect(),
    };
    let cij = vec![vi.to_expr(), vj.to_expr()];
    let block = Block {
        name: "C".into(),
        iter_vars: vec![
            iv(&vi, n, IterKind::Spatial),
            iv(&vj, m, IterKind::Spatial),
            iv(&vk, k, IterKind::Reduce),
        ],
        iter_values: vec![i.to_expr(), j.to_expr(), kk.to_expr()],
        reads: vec![point(&a, vec![&vi, &vk]), point(&b, vec![&vk, &vj])],
        writes: vec![point(&c, vec![&vi, &vj])],
        init: Some(Box::new(Stmt::BufferStore {
            buffer: c.clone(),
            value: PrimExpr::float(DataType::f32(), 0.0),
            indices: cij.clone(),
        })),
        body: Box::new(Stmt::BufferStore {
            buffer: c.clone(),
            value: PrimExpr::load(&c, cij.clone())
                + PrimExpr::load(&a, vec![vi.to_expr(), vk.to_expr()])
                    * PrimExpr::load(&b, vec![vk.to_expr(), vj.to_expr()]),
            indices: cij,
        }),
        alloc_buffers: vec![],
        annotations: Attrs::new(),
    };
    let body = for_(
        &i,
        n,
        for_(&j, m, for_(&kk, k, Stmt::Block(Box::new(block)))),
    );
    PrimFunc::new(
        vec![
            PrimFuncParam::Buffer(a),
            PrimFuncParam::Buffer(b),
            PrimFuncParam::Buffer(c),
        ],
        body,
    )
}

#[test]
fn matmul_with_init_sums_products() {
    let f = matmul(2, 3, 2);
    let a = Tensor::from_vec(&[2, 3], vec![1f32, 2., 3., 4., 5., 6.]).unwrap();
    let b = Tensor::from_vec(&[3, 2], vec![7f32, 8., 9., 10., 11., 12.]).unwrap();
    // Non-zero garbage in the output: init must overwrite it.
    let mut out = [Tensor::from_vec(&[2, 2], vec![100f32; 4]).unwrap()];
    run(&f, &[&a, &b], &mut out, &[]).unwrap();
    assert_eq!(f32s(&out[0]), vec![58., 64., 139., 154.]);
}

#[test]
fn wrong_counts_dtypes_and_shapes_are_errors() {
    let f = matmul(2, 3, 2);
    let a = Tensor::zeros(DataType::f32(), &[2, 3]).unwrap();
    let b = Tensor::zeros(DataType::f32(), &[3, 2]).unwrap();
    let mut out = [Tensor::zeros(DataType::f32(), &[2, 2]).unwrap()];
    let e = run(&f, &[&a], &mut out, &[]).unwrap_err();
    assert!(e.contains("expected 3 buffer arguments"), "{e}");
    let bad = Tensor::zeros(DataType::f32(), &[3, 3]).unwrap();
    let e = run(&f, &[&a, &bad], &mut out, &[]).unwrap_err();
    assert_eq!(
        e,
        "buffer B has shape (3, 2), its argument has shape (3, 3)"
    );
    let bad = Tensor::zeros(DataType::f64(), &[3, 2]).unwrap();
    let e = run(&f, &[&a, &bad], &mut out, &[]).unwrap_err();
    assert!(e.contains("dtype float32"), "{e}");
    let e = run(&f, &[&a, &b], &mut out, &[4]).unwrap_err();
    assert!(e.contains("expected 0 scalar arguments"), "{e}");
}

#[test]
fn out_of_bounds_is_an_error_naming_buffer_and_indices() {
    let a = Buffer::new("A", vec![4.into()], DataType::f32());
    let i = TirVar::new("i");
    let body = for_(
        &i,
        5,
        Stmt::BufferStore {
            buffer: a.clone(),
            value: PrimExpr::float(DataType::f32(), 1.0),
            indices: vec![i.to_expr()],
        },
    );
    let f = PrimFunc::new(vec![PrimFuncParam::Buffer(a)], body);
    let mut out = [Tensor::zeros(DataType::f32(), &[4]).unwrap()];
    let e = run(&f, &[], &mut out, &[]).unwrap_err();
    assert_eq!(e, "out-of-bounds access A[4] (shape (4,))");
}

#[test]
fn symbolic_dims_bind_on_first_sight_and_scalars_bind_in_order() {
    let n = TirVar::new("n");
    let a = Buffer::new("A", vec![n.to_expr()], DataType::i32());
    let b = Buffer::new("B", vec![n.to_expr() * 2], DataType::i32());
    let i = TirVar::new("i");
    let s = TirVar::with_dtype("s", DataType::i32());
    let body = for_(
        &i,
        n.to_expr() * 2,
        Stmt::BufferStore {
            buffer: b.clone(),
            value: PrimExpr::load(&a, vec![i.to_expr().floordiv(2)]) * s.to_expr(),
            indices: vec![i.to_expr()],
        },
    );
    let f = PrimFunc::new(
        vec![
            PrimFuncParam::Buffer(a),
            PrimFuncParam::Buffer(b),
            PrimFuncParam::Scalar(s),
        ],
        body,
    );
    let a = Tensor::from_vec(&[3], vec![1i32, 2, 3]).unwrap();
    let mut out = [Tensor::zeros(DataType::i32(), &[6]).unwrap()];
    run(&f, &[&a], &mut out, &[10]).unwrap();
    assert_eq!(
        out[0].to_vec::<i32>().unwrap(),
        vec![10, 10, 20, 20, 30, 30]
    );
    let mut bad = [Tensor::zeros(DataType::i32(), &[5]).unwrap()];
    let e = run(&f, &[&a], &mut bad, &[10]).unwrap_err();
    assert_eq!(e, "buffer B has shape (6,), its argument has shape (5,)");
}

#[test]
fn erf_is_accurate() {
    // Reference values of erf to 16 digits.
    for (x, want) in [
        (0.1, 0.1124629160182849),
        (0.5, 0.5204998778130465),
        (1.0, 0.8427007929497149),
        (2.0, 0.9953222650189527),
        (3.5, 0.9999992569016276),
        (-1.5, -0.9661051464753108),
        (1e-8, 1.1283791670955126e-8),
    ] {
        let got = erf(x);
        assert!(
            ((got - want) / want).abs() < 1e-13,
            "erf({x}) = {got}, want {want}"
        );
    }
    assert_eq!(erf(7.0), 1.0);
    assert_eq!(erf(0.0), 0.0);
}

#[test]
fn float32_rounds_after_each_operation_and_ints_wrap() {
    let m = Machine::default();
    // 1e8 + 1 is not representable in f32: the sum rounds back to 1e8.
    let big = PrimExpr::float(DataType::f32(), 1e8);
    let one = PrimExpr::float(DataType::f32(), 1.0);
    let e = (big.clone() + one) - big;
    assert_eq!(m.eval(&e).unwrap(), Val::F(0.0));
    let max = PrimExpr::int_of(DataType::i32(), i32::MAX as i64);
    let e = max + PrimExpr::int_of(DataType::i32(), 1);
    assert_eq!(m.eval(&e).unwrap(), Val::I(i32::MIN as i64));
    let e = PrimExpr::int(-7).floordiv(2);
    assert_eq!(m.eval(&e).unwrap(), Val::I(-4));
    let e = PrimExpr::int(1).floordiv(0);
    assert!(m.eval(&e).unwrap_err().contains("division by zero"));
    let e = PrimExpr::float(DataType::f32(), 2.7).cast(DataType::i32());
    assert_eq!(m.eval(&e).unwrap(), Val::I(2));
}

#[test]
fn the_library_serves_kernels_by_symbol() {
    let lib: InterpreterLibrary = [("mm".to_string(), matmul(1, 2, 1))].into_iter().collect();
    assert_eq!(lib.describe(), "the loop-level interpreter");
    assert!(lib.lookup("nope").is_none());
    let k = lib.lookup("mm").unwrap();
    let a = Tensor::from_vec(&[1, 2], vec![1f32, 2.]).unwrap();
    let b = Tensor::from_vec(&[2, 1], vec![3f32, 4.]).unwrap();
    let mut out = [Tensor::zeros(DataType::f32(), &[1, 1]).unwrap()];
    k.call(&[&a, &b], &mut out, &[]).unwrap();
    assert_eq!(f32s(&out[0]), vec![11.]);
}

#[test]
fn half_types_compute_in_float32_and_round_at_stores_and_casts() {
    let m = Machine::default();
    let (h, b, f) = (DataType::f16(), DataType::bf16(), DataType::f32());
    // Halves are 2 apart at 2048 and bfloat16s 2 apart at 256: a half-typed
    // sum is a float32 value, not rounded.
    let e = PrimExpr::float(h, 2048.0) + PrimExpr::float(h, 1.0);
    assert_eq!(m.eval(&e).unwrap(), Val::F(2049.0));
    let e = PrimExpr::float(b, 256.0) + PrimExpr::float(b, 1.0);
    assert_eq!(m.eval(&e).unwrap(), Val::F(257.0));
    // A cast from another dtype rounds, ties to even.
    for (x, dt, want) in [
        (2049.0, h, 2048.0),
        (2051.0, h, 2052.0),
        (257.0, b, 256.0),
        (259.0, b, 260.0),
        (1e6, h, f64::INFINITY),
    ] {
        let e = PrimExpr::float(f, x).cast(dt);
        assert_eq!(m.eval(&e).unwrap(), Val::F(want), "{x} as {dt}");
    }
    let e = PrimExpr::int_of(DataType::i32(), 2051).cast(h);
    assert_eq!(m.eval(&e).unwrap(), Val::F(2052.0));
    // A float16 value cast to bfloat16 rounds again: 2049 is exact in
    // neither, 2048 in both.
    let e = (PrimExpr::float(h, 2048.0) + PrimExpr::float(h, 1.0)).cast(b);
    assert_eq!(m.eval(&e).unwrap(), Val::F(2048.0));

    // A store rounds: 1/3 is stored as 0x3555 and 0x3eab.
    let (hb, bb) = (
        Buffer::new("H", vec![PrimExpr::int(1)], h),
        Buffer::new("B", vec![PrimExpr::int(1)], b),
    );
    let third = |d| PrimExpr::float(d, 1.0).floordiv(PrimExpr::float(d, 3.0));
    let body = Stmt::Seq(vec![
        Stmt::BufferStore {
            buffer: hb.clone(),
            value: third(h),
            indices: vec![PrimExpr::int(0)],
        },
        Stmt::BufferStore {
            buffer: bb.clone(),
            value: third(b),
            indices: vec![PrimExpr::int(0)],
        },
    ]);
    let func = PrimFunc::new(
        vec![PrimFuncParam::Buffer(hb), PrimFuncParam::Buffer(bb)],
        body,
    );
    let mut outs = vec![
        Tensor::zeros(h, &[1]).unwrap(),
        Tensor::zeros(b, &[1]).unwrap(),
    ];
    run(&func, &[], &mut outs, &[]).unwrap();
    assert_eq!(outs[0].as_bytes(), 0x3555u16.to_le_bytes());
    assert_eq!(outs[1].as_bytes(), 0x3eabu16.to_le_bytes());
}
