//! `T.prefetch(T.address_of(B[i…]), rw, locality, cache_type)`, TVM's
//! cache-line hint: `llvm.prefetch` in the JIT's code, serial and inside a
//! vector step, a no-op on the interpreter, and TVMScript that prints and
//! parses back; anything but an element's address, or flags that are not
//! constants in range, is an error, not a crash.

use super::{bp, buf, f32t, func, load, run, store, unsupported, var};
use crate::ir::prim_expr::PrimExpr;
use crate::tir::interp;
use crate::tir::ForKind;
use relax_runtime::{DataType, Tensor};

/// `Out[i] = A[i] · 2`, each step first prefetching `A[min(i + 16, n - 1)]`
/// (or what `address` makes of that element) with `flags`.
fn kernel(
    n: i64,
    kind: ForKind,
    address: fn(PrimExpr) -> PrimExpr,
    flags: [PrimExpr; 3],
) -> crate::tir::PrimFunc {
    let (a, o) = (buf("A", &[n], f32t()), buf("Out", &[n], f32t()));
    let i = var("i");
    let ahead = PrimExpr::load(
        &a,
        vec![(i.to_expr() + PrimExpr::int(16)).min(PrimExpr::int(n - 1))],
    );
    let [rw, locality, cache] = flags;
    let hint = crate::tir::Stmt::Evaluate(PrimExpr::call(
        DataType::i32(),
        "prefetch",
        vec![address(ahead), rw, locality, cache],
    ));
    let body = store(
        &o,
        vec![i.to_expr()],
        load(&a, &[&i]) * PrimExpr::float(f32t(), 2.0),
    );
    let body = super::for_(&i, n, kind, crate::tir::Stmt::Seq(vec![hint, body]));
    func(vec![bp(&a), bp(&o)], body)
}

fn address_of(e: PrimExpr) -> PrimExpr {
    PrimExpr::call(DataType::handle(), "address_of", vec![e])
}

fn flags(rw: i64, locality: i64, cache: i64) -> [PrimExpr; 3] {
    [rw, locality, cache].map(|v| PrimExpr::int_of(DataType::i32(), v))
}

#[test]
fn prefetch_is_llvm_prefetch_and_changes_nothing() {
    let n = 37usize;
    let a: Vec<f32> = (0..n).map(|k| k as f32 - 5.5).collect();
    let want: Vec<f32> = a.iter().map(|x| x * 2.0).collect();
    let input = [Tensor::from_slice(&[n as i64], &a).unwrap()];
    for kind in [ForKind::Serial, ForKind::Vectorized] {
        let f = kernel(n as i64, kind, address_of, flags(0, 3, 1));
        let ir = crate::codegen::llvm::emit_llvm_ir(
            &[("kernel".to_string(), f.clone())],
            &Default::default(),
            false,
        )
        .unwrap();
        assert!(ir.contains("call void @llvm.prefetch"), "{kind:?}:\n{ir}");
        let out = run(f.clone(), &input, &[(f32t(), vec![n as i64])], &[]);
        assert_eq!(out[0].to_vec::<f32>().unwrap(), want, "{kind:?}");
        let mut outs = [Tensor::zeros(f32t(), &[n as i64]).unwrap()];
        interp::run(&f, &[&input[0]], &mut outs, &[]).unwrap();
        assert_eq!(outs[0].to_vec::<f32>().unwrap(), want, "interpreted");
    }
}

#[test]
fn prefetch_of_anything_but_an_address_or_with_odd_flags_is_an_error() {
    let opts = Default::default();
    let build = |f| crate::codegen::llvm::jit(&[("kernel".to_string(), f)], &opts);
    let bare = kernel(8, ForKind::Serial, |e| e, flags(0, 3, 1));
    assert!(unsupported(build(bare)).contains("T.address_of"));
    let locality = kernel(8, ForKind::Serial, address_of, flags(0, 4, 1));
    assert!(unsupported(build(locality)).contains("flags"));
}

#[test]
fn prefetch_prints_and_parses_back() {
    let text = r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def ahead(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
        for i in range(64):
            T.evaluate(T.prefetch(T.address_of(A[T.min(i + 16, 63)]), 0, 3, 1))
            B[i] = A[i]
"#;
    let m: crate::ir::IRModule = text.parse().unwrap();
    let printed = m.to_string();
    assert!(
        printed.contains("T.prefetch(T.address_of(A[T.min(i + 16, 63)])"),
        "{printed}"
    );
    let again: crate::ir::IRModule = printed.parse().unwrap();
    assert!(
        crate::ir::structural_equal::structural_equal(&m, &again),
        "{printed}"
    );
}
