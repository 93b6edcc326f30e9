//! Tests of the TE layer: lowering and `call_te`.

use super::*;
use crate::analysis::well_formed;
use crate::block_builder::BlockBuilder;
use crate::ir::{Expr, StructInfo, Var};
use crate::tir::{IterKind, PrimFuncParam, Stmt};

const F32: DataType = DataType::f32();

fn matmul(a: &Tensor, b: &Tensor) -> Tensor {
    let k = reduce_axis(a.shape()[1].clone(), "k");
    compute("C", vec![a.shape()[0].clone(), b.shape()[1].clone()], |i| {
        sum(
            a.at(&[i[0].clone(), k.to_expr()]) * b.at(&[k.to_expr(), i[1].clone()]),
            std::slice::from_ref(&k),
        )
    })
}

/// The blocks of a statement tree, outermost first.
fn blocks(s: &Stmt) -> Vec<&crate::tir::Block> {
    let mut out = Vec::new();
    fn walk<'a>(s: &'a Stmt, out: &mut Vec<&'a crate::tir::Block>) {
        match s {
            Stmt::Block(b) => {
                out.push(b);
                walk(&b.body, out);
            }
            Stmt::For { body, .. } => walk(body, out),
            Stmt::Seq(ss) => ss.iter().for_each(|s| walk(s, out)),
            _ => {}
        }
    }
    walk(s, &mut out);
    out
}

#[test]
fn a_reduction_lowers_to_one_block_with_init() {
    let n = TirVar::new("n");
    let a = placeholder("A", vec![n.to_expr(), PrimExpr::int(4)], F32);
    let b = placeholder("B", vec![PrimExpr::int(4), PrimExpr::int(5)], F32);
    let c = matmul(&a, &b);
    let Operation::Compute(op) = c.op() else {
        panic!("a stage")
    };
    assert_eq!(op.inputs, vec![a.clone(), b.clone()]);
    let lowered = create_prim_func(&[a, b], std::slice::from_ref(&c)).unwrap();
    assert!(lowered.scalar_args.is_empty(), "n is bound from A");
    let f = &lowered.func;
    assert_eq!(f.params.len(), 3);
    let bs = blocks(&f.body);
    assert_eq!(bs.len(), 2, "root and C");
    assert_eq!(bs[0].name, "root");
    assert!(bs[0].alloc_buffers.is_empty());
    let blk = bs[1];
    assert_eq!(blk.name, "C");
    let kinds: Vec<_> = blk.iter_vars.iter().map(|iv| iv.kind).collect();
    assert_eq!(
        kinds,
        [IterKind::Spatial, IterKind::Spatial, IterKind::Reduce]
    );
    assert!(blk.init.is_some());
    assert_eq!(blk.reads.len(), 2, "A and B, not C itself");
    assert_eq!(blk.writes.len(), 1);
    // The first dim of A is the PrimFunc's own `n`, also C's first dim.
    let bufs: Vec<_> = f.buffers().collect();
    let inner = bufs[0].shape()[0].as_var().unwrap().clone();
    assert_ne!(inner, n);
    assert_eq!(bufs[2].shape()[0].as_var(), Some(&inner));
    assert_eq!(blk.iter_vars[0].extent.as_var(), Some(&inner));
}

#[test]
fn intermediate_stages_are_allocated_in_the_root_block() {
    let a = placeholder("A", vec![PrimExpr::int(3)], F32);
    let t = compute("T", vec![PrimExpr::int(3)], |i| a.at(i) * a.at(i));
    let u = compute("U", vec![PrimExpr::int(3)], |i| t.at(i) + a.at(i));
    let lowered = create_prim_func(std::slice::from_ref(&a), std::slice::from_ref(&u)).unwrap();
    let bs = blocks(&lowered.func.body);
    let names: Vec<_> = bs.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["root", "T", "U"]);
    assert_eq!(bs[0].alloc_buffers.len(), 1);
    assert_eq!(bs[0].alloc_buffers[0].name(), "T");
}

#[test]
fn lowering_errors() {
    let a = placeholder("A", vec![PrimExpr::int(3)], F32);
    let b = placeholder("B", vec![PrimExpr::int(3)], F32);
    let c = compute("C", vec![PrimExpr::int(3)], |i| a.at(i) + b.at(i));
    let e = create_prim_func(std::slice::from_ref(&a), std::slice::from_ref(&c)).unwrap_err();
    assert_eq!(
        e,
        "tensor `B` is read but is not an argument of the function"
    );
    let e = create_prim_func(std::slice::from_ref(&a), std::slice::from_ref(&a)).unwrap_err();
    assert_eq!(e, "output `A` is a placeholder, not a computed stage");
    let sneaky = compute("D", vec![PrimExpr::int(3)], |i| {
        PrimExpr::load(b.buffer(), i.to_vec())
    });
    let e = create_prim_func(&[a, b], &[sneaky]).unwrap_err();
    assert!(e.contains("loads buffer `B` directly"), "{e}");
}

#[test]
fn a_dim_inside_an_expression_becomes_a_scalar_parameter() {
    let n = TirVar::new("n");
    let a = placeholder("A", vec![n.to_expr() + 1], F32);
    let b = compute("B", vec![n.to_expr() + 1], |i| a.at(i));
    let lowered = create_prim_func(&[a], &[b]).unwrap();
    assert_eq!(lowered.scalar_args, vec![n.clone()]);
    match lowered.func.params.last() {
        Some(PrimFuncParam::Scalar(v)) => {
            assert_eq!(v.name(), "n");
            assert_ne!(v, &n);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn call_te_adds_a_prim_func_and_calls_it() {
    let n = TirVar::new("n");
    let x = Var::new(
        "x",
        Some(StructInfo::tensor(vec![n.to_expr(), PrimExpr::int(4)], F32)),
    );
    let w = Var::new(
        "w",
        Some(StructInfo::tensor(
            vec![PrimExpr::int(4), PrimExpr::int(5)],
            F32,
        )),
    );
    let mut bb = BlockBuilder::new();
    bb.function("main", vec![x.clone(), w.clone()], |bb| {
        bb.dataflow(|bb| {
            let lv = bb.emit_te("matmul", &[Expr::var(&x), Expr::var(&w)], |xs| {
                Ok(vec![matmul(&xs[0], &xs[1])])
            })?;
            // The same name again gets a fresh one.
            let lv2 = bb.emit_te("matmul", &[Expr::var(&lv), Expr::var(&w)], |xs| {
                let t = compute("T", xs[0].shape().to_vec(), |i| xs[0].at(i));
                Ok(vec![t])
            })?;
            let gv = bb.emit_output(Expr::var(&lv2))?;
            Ok(Expr::var(&gv))
        })
    })
    .unwrap();
    let m = bb.finalize().unwrap();
    well_formed(&m).unwrap();
    let text = m.to_string();
    assert!(
        text.contains("R.call_tir(cls.matmul, (x, w), out_ty=R.Tensor((n, 5), dtype=\"float32\"))"),
        "{text}"
    );
    assert!(text.contains("cls.matmul1"), "{text}");
}

#[test]
fn call_te_flattens_tuples_and_rejects_unknown_ranks() {
    let a = Var::new("a", Some(StructInfo::tensor(vec![PrimExpr::int(2)], F32)));
    let t = Var::new(
        "t",
        Some(StructInfo::tuple(vec![
            StructInfo::tensor(vec![PrimExpr::int(2)], F32),
            StructInfo::tensor(vec![PrimExpr::int(2)], F32),
        ])),
    );
    let u = Var::new("u", Some(StructInfo::tensor_ndim(-1, F32)));
    let mut bb = BlockBuilder::new();
    bb.function("main", vec![a.clone(), t.clone(), u.clone()], |bb| {
        let e = bb
            .call_te("f", &[Expr::var(&u)], |xs| Ok(vec![xs[0].clone()]))
            .unwrap_err();
        assert!(
            e.to_string().contains("needs a known dtype and rank"),
            "{e}"
        );
        let out = bb.emit_te("add3", &[Expr::var(&a), Expr::var(&t)], |xs| {
            assert_eq!(xs.len(), 3);
            let s = compute("S", vec![PrimExpr::int(2)], |i| {
                xs[0].at(i) + xs[1].at(i) + xs[2].at(i)
            });
            Ok(vec![s])
        })?;
        Ok(Expr::var(&out))
    })
    .unwrap();
    let m = bb.finalize().unwrap();
    well_formed(&m).unwrap();
    let text = m.to_string();
    assert!(text.contains("t[0]") && text.contains("t[1]"), "{text}");
}

#[test]
fn nan_propagating_max_and_c_division() {
    use std::collections::HashMap;
    let seven = PrimExpr::int(-7);
    let two = PrimExpr::int(2);
    assert_eq!(
        div(seven.clone(), two.clone()).eval(&HashMap::new()),
        Ok(-3)
    );
    assert_eq!(
        div(PrimExpr::int(7), two.clone()).eval(&HashMap::new()),
        Ok(3)
    );
    assert_eq!(
        div(PrimExpr::int(7), PrimExpr::int(-2)).eval(&HashMap::new()),
        Ok(-3)
    );
    assert_eq!(div(PrimExpr::int(-8), two).eval(&HashMap::new()), Ok(-4));
    assert_eq!(
        Combiner::Max.identity(DataType::int(8)).as_int(),
        Some(-128)
    );
    assert_eq!(Combiner::Min.identity(DataType::int(8)).as_int(), Some(127));
    assert_eq!(
        Combiner::Min.identity(DataType::uint(8)).as_int(),
        Some(255)
    );
    // Float max is a Select (NaN-aware), integer max the plain node.
    let x = PrimExpr::float(F32, 1.0);
    assert!(matches!(
        maximum(x.clone(), x).kind(),
        PrimExprKind::Select(..)
    ));
    let i = PrimExpr::int(1);
    assert!(matches!(
        maximum(i.clone(), i).kind(),
        PrimExprKind::Max(..)
    ));
}
