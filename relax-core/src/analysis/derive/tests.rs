//! Tests of StructInfo derivation, one group per expression kind.

use super::*;
use crate::ir::{BindingBlock, DataType, Function, GlobalVar, Tensor};

fn int(v: i64) -> PrimExpr {
    PrimExpr::int(v)
}
fn var(v: &TirVar) -> PrimExpr {
    PrimExpr::var(v)
}
fn tensor(dims: &[PrimExpr]) -> StructInfo {
    StructInfo::tensor(dims.to_vec(), DataType::f32())
}
fn derive(e: &Expr) -> Result<StructInfo, Diagnostic> {
    derive_struct_info(e, &DeriveContext::default())
}
fn arg(name: &str, sinfo: StructInfo) -> Expr {
    Expr::var(&Var::new(name, Some(sinfo)))
}
/// An op name that no registry will ever hold.
const UNREGISTERED: &str = "test.not_registered";

// ---- leaves ----

#[test]
fn leaves_derive_as_their_constructors_do() {
    let c = Expr::constant(Tensor::zeros(DataType::f32(), &[2, 3]).unwrap());
    assert_eq!(derive(&c).unwrap(), tensor(&[int(2), int(3)]));
    let n = TirVar::new("n");
    assert_eq!(
        derive(&Expr::shape(vec![var(&n), int(4)])).unwrap(),
        StructInfo::shape(vec![var(&n), int(4)])
    );
    assert_eq!(
        derive(&Expr::prim_value(int(7))).unwrap(),
        StructInfo::prim_value(int(7))
    );
    assert_eq!(derive(&Expr::string("s")).unwrap(), StructInfo::object());
    assert_eq!(
        derive(&Expr::dtype(DataType::f32())).unwrap(),
        StructInfo::object()
    );
    let ext = derive(&Expr::extern_func("my_func")).unwrap();
    assert_eq!(
        ext,
        StructInfo::opaque_func(DeriveFunc::Default, StructInfo::object())
    );
    // Every leaf agrees with what its constructor attached.
    for e in [
        c,
        Expr::shape(vec![var(&n)]),
        Expr::prim_value(int(1)),
        Expr::extern_func("g"),
    ] {
        assert_eq!(Some(&derive(&e).unwrap()), e.struct_info());
    }
}

#[test]
fn vars_carry_their_struct_info() {
    let t = tensor(&[int(3)]);
    assert_eq!(derive(&arg("x", t.clone())).unwrap(), t);
    let err = derive(&Expr::var(&Var::new("y", None))).unwrap_err();
    assert_eq!(err.code, "missing-struct-info");
    assert_eq!(err.message, "variable `y` has no struct info");
}

#[test]
fn global_vars_come_from_the_module() {
    let x = Var::new("x", Some(tensor(&[int(3)])));
    let f = Function::new(vec![x.clone()], Expr::var(&x), tensor(&[int(3)]));
    let mut module = IRModule::new();
    module.add(GlobalVar::new("f"), f.clone());
    let gv = Expr::global_var(GlobalVar::new("f"));
    let ctx = DeriveContext {
        module: Some(&module),
        ..Default::default()
    };
    assert_eq!(derive_struct_info(&gv, &ctx).unwrap(), f.struct_info());
    // Its own StructInfo wins.
    let annotated = gv.with_struct_info(StructInfo::object());
    assert_eq!(derive(&annotated).unwrap(), StructInfo::object());
    let unknown = Expr::global_var(GlobalVar::new("g"));
    let err = derive_struct_info(&unknown, &ctx).unwrap_err();
    assert_eq!(err.code, "unknown-global-var");
    assert_eq!(
        err.message,
        "global function `g` is not defined in the module"
    );
    assert_eq!(derive(&gv).unwrap_err().code, "unknown-global-var");
}

#[test]
fn ops_are_not_values() {
    let err = derive(&Expr::op("relax.add")).unwrap_err();
    assert_eq!(err.code, "op-not-a-value");
}

#[test]
fn functions_have_their_signature() {
    let n = TirVar::new("n");
    let x = Var::new("x", Some(tensor(&[var(&n)])));
    let f = Function::new(
        vec![x.clone()],
        Expr::seq(vec![], Expr::var(&x)),
        tensor(&[var(&n)]),
    );
    assert_eq!(
        derive(&Expr::function(f)).unwrap(),
        StructInfo::func(vec![tensor(&[var(&n)])], tensor(&[var(&n)]), true)
    );
}

// ---- tuples ----

#[test]
fn tuples_and_their_items() {
    let a = tensor(&[int(3)]);
    let b = StructInfo::prim(DataType::i64());
    let t = Expr::tuple(vec![arg("a", a.clone()), arg("b", b.clone())]);
    let sinfo = derive(&t).unwrap();
    assert_eq!(sinfo, StructInfo::tuple(vec![a.clone(), b.clone()]));
    assert_eq!(derive(&Expr::tuple_get_item(t.clone(), 1)).unwrap(), b);
    // A tuple variable.
    let tv = arg("t", sinfo.clone());
    assert_eq!(derive(&Expr::tuple_get_item(tv.clone(), 0)).unwrap(), a);
}

#[test]
fn tuple_get_item_errors() {
    let a = tensor(&[int(3)]);
    let tv = arg("t", StructInfo::tuple(vec![a.clone(), a.clone()]));
    let err = derive(&Expr::tuple_get_item(tv, 2)).unwrap_err();
    assert_eq!(err.code, "tuple-index-out-of-range");
    assert_eq!(
        err.message,
        "tuple index 2 is out of range for R.Tuple(R.Tensor((3,), dtype=\"float32\"), \
         R.Tensor((3,), dtype=\"float32\")): expected an index below 2"
    );
    let err = derive(&Expr::tuple_get_item(arg("x", a), 0)).unwrap_err();
    assert_eq!(err.code, "tuple-get-item-not-tuple");
    assert_eq!(
        err.message,
        "tuple_get_item expects a tuple, found R.Tensor((3,), dtype=\"float32\")"
    );
}

// ---- calls ----

#[test]
fn unregistered_ops_use_default_derive() {
    let t = tensor(&[int(3)]);
    let p = StructInfo::prim(DataType::i64());
    let x = arg("x", t.clone());
    let call = |sinfo_args| {
        Expr::call_full(
            Expr::op(UNREGISTERED),
            vec![x.clone()],
            Default::default(),
            sinfo_args,
        )
    };
    assert_eq!(derive(&call(vec![])).unwrap(), StructInfo::object());
    assert_eq!(derive(&call(vec![t.clone()])).unwrap(), t);
    assert_eq!(
        derive(&call(vec![t.clone(), p.clone()])).unwrap(),
        StructInfo::tuple(vec![t, p])
    );
}

#[test]
fn extern_func_callees_use_default_derive() {
    let t = tensor(&[int(3)]);
    let call = Expr::call_full(
        Expr::extern_func("my_packed"),
        vec![arg("x", t.clone())],
        Default::default(),
        vec![t.clone()],
    );
    assert_eq!(derive(&call).unwrap(), t);
}

#[test]
fn calls_of_functions_bind_symbolic_vars() {
    let n = TirVar::new("n");
    let m = TirVar::new("m");
    let k = TirVar::new("k");
    let f = Var::new(
        "f",
        Some(StructInfo::func(
            vec![tensor(&[var(&n), var(&m)])],
            tensor(&[var(&m), var(&n)]),
            true,
        )),
    );
    let call = Expr::call(Expr::var(&f), vec![arg("x", tensor(&[int(3), var(&k)]))]);
    assert_eq!(derive(&call).unwrap(), tensor(&[var(&k), int(3)]));
    let bad = Expr::call(
        Expr::var(&f),
        vec![arg("x", StructInfo::tensor(vec![int(3)], DataType::i32()))],
    );
    let err = derive(&bad).unwrap_err();
    assert_eq!(err.code, "call-arg-mismatch");
    assert_eq!(
        err.message,
        "argument 0 of the call: expected R.Tensor((n, m), dtype=\"float32\"), \
         found R.Tensor((3,), dtype=\"int32\")"
    );
    let arity = Expr::call(Expr::var(&f), vec![]);
    assert_eq!(derive(&arity).unwrap_err().code, "call-arity-mismatch");
}

#[test]
fn calls_of_global_functions() {
    let n = TirVar::new("n");
    let x = Var::new("x", Some(tensor(&[var(&n)])));
    let f = Function::new(vec![x.clone()], Expr::var(&x), tensor(&[var(&n), int(2)]));
    let module = IRModule::from_functions([(GlobalVar::new("f"), f.into())]);
    let ctx = DeriveContext {
        module: Some(&module),
        ..Default::default()
    };
    let call = Expr::call(
        Expr::global_var(GlobalVar::new("f")),
        vec![arg("y", tensor(&[int(5)]))],
    );
    assert_eq!(
        derive_struct_info(&call, &ctx).unwrap(),
        tensor(&[int(5), int(2)])
    );
}

#[test]
fn callee_must_be_a_function() {
    let call = Expr::call(arg("x", tensor(&[int(3)])), vec![]);
    let err = derive(&call).unwrap_err();
    assert_eq!(err.code, "callee-not-function");
    assert_eq!(
        err.message,
        "the callee of a call must be a function, found R.Tensor((3,), dtype=\"float32\")"
    );
}

#[test]
fn call_operands_without_struct_info_are_derived() {
    let n = TirVar::new("n");
    let f = Var::new(
        "f",
        Some(StructInfo::func(
            vec![StructInfo::shape(vec![var(&n)])],
            tensor(&[var(&n)]),
            true,
        )),
    );
    // A nested tuple-get-item carries no StructInfo until derived.
    let t = arg(
        "t",
        StructInfo::tuple(vec![StructInfo::shape(vec![int(4)])]),
    );
    let item = Expr::new(ExprKind::TupleGetItem(t, 0));
    let call = Expr::call(Expr::var(&f), vec![item]);
    assert_eq!(derive(&call).unwrap(), tensor(&[int(4)]));
}

// ---- if ----

fn if_of(cond: Expr, t: StructInfo, f: StructInfo) -> Expr {
    Expr::if_(
        cond,
        Expr::seq(vec![], arg("a", t)),
        Expr::seq(vec![], arg("b", f)),
    )
}

#[test]
fn if_is_the_lca_of_its_branches() {
    let n = TirVar::new("n");
    let cond = arg("c", StructInfo::prim(DataType::bool()));
    let e = if_of(
        cond.clone(),
        tensor(&[var(&n), int(3)]),
        tensor(&[var(&n), int(4)]),
    );
    assert_eq!(
        derive(&e).unwrap(),
        StructInfo::tensor_ndim(2, DataType::f32())
    );
    let e = if_of(cond, tensor(&[var(&n)]), tensor(&[var(&n)]));
    assert_eq!(derive(&e).unwrap(), tensor(&[var(&n)]));
}

#[test]
fn if_condition_must_be_a_bool_scalar() {
    let t = tensor(&[int(1)]);
    for ok in [
        StructInfo::prim(DataType::bool()),
        StructInfo::tensor(vec![], DataType::bool()),
        StructInfo::tensor_ndim(UNKNOWN_NDIM, DataType::void()),
        StructInfo::tensor_ndim(0, DataType::void()),
    ] {
        assert!(
            derive(&if_of(arg("c", ok.clone()), t.clone(), t.clone())).is_ok(),
            "{ok}"
        );
    }
    for bad in [
        StructInfo::prim(DataType::i64()),
        StructInfo::tensor(vec![int(3)], DataType::bool()),
        StructInfo::tensor(vec![], DataType::f32()),
        StructInfo::object(),
    ] {
        let err = derive(&if_of(arg("c", bad.clone()), t.clone(), t.clone())).unwrap_err();
        assert_eq!(err.code, "if-condition-not-bool");
        assert_eq!(
            err.message,
            format!("the condition of an if must be a bool scalar, found {bad}")
        );
    }
}

// ---- seq ----

#[test]
fn seq_erases_vars_defined_by_a_match_cast_inside() {
    let n = TirVar::new("n");
    let x = arg("x", StructInfo::tensor_ndim(2, DataType::f32()));
    let cast = tensor(&[var(&n), int(4)]);
    let y = Var::new("y", Some(cast.clone()));
    let seq = Expr::seq(
        vec![BindingBlock::new(vec![Binding::match_cast(
            y.clone(),
            x,
            cast,
        )])],
        Expr::var(&y),
    );
    assert_eq!(
        derive(&seq).unwrap(),
        StructInfo::tensor_ndim(2, DataType::f32())
    );
}

#[test]
fn seq_keeps_vars_defined_outside() {
    let n = TirVar::new("n");
    // x: (n, 4) comes from outside, so the cast only checks n.
    let x = arg("x", tensor(&[var(&n), int(4)]));
    let cast = tensor(&[var(&n), int(4)]);
    let y = Var::new("y", Some(cast.clone()));
    let seq = Expr::seq(
        vec![BindingBlock::dataflow(vec![Binding::match_cast(
            y.clone(),
            x,
            cast.clone(),
        )])],
        Expr::var(&y),
    );
    assert_eq!(derive(&seq).unwrap(), cast);
    // The same when the caller says n is in scope.
    let m = TirVar::new("m");
    let mcast = tensor(&[var(&m)]);
    let z = Var::new("z", Some(mcast.clone()));
    let inner = SeqExpr {
        blocks: vec![BindingBlock::new(vec![Binding::match_cast(
            z.clone(),
            arg("w", StructInfo::tensor_ndim(1, DataType::f32())),
            mcast.clone(),
        )])],
        body: Expr::var(&z),
    };
    assert_eq!(
        seq_expr_struct_info(&inner, &mcast, &|v| *v == m, &Analyzer::new()),
        mcast
    );
    assert_eq!(
        seq_expr_struct_info(&inner, &mcast, &|_| false, &Analyzer::new()),
        StructInfo::tensor_ndim(1, DataType::f32())
    );
}

#[test]
fn seq_erases_shape_vars_bound_inside() {
    let s = Var::new("s", Some(StructInfo::shape(vec![int(2), int(3)])));
    let by_s = StructInfo::tensor_with_shape_expr(Expr::var(&s), DataType::f32());
    let y = Var::new("y", Some(by_s.clone()));
    let seq = Expr::seq(
        vec![BindingBlock::new(vec![
            Binding::var_binding(s.clone(), Expr::shape(vec![int(2), int(3)])),
            Binding::var_binding(
                y.clone(),
                Expr::call_full(
                    Expr::op(UNREGISTERED),
                    vec![],
                    Default::default(),
                    vec![by_s.clone()],
                ),
            ),
        ])],
        Expr::var(&y),
    );
    assert_eq!(
        derive(&seq).unwrap(),
        StructInfo::tensor_ndim(2, DataType::f32())
    );
    // A shape variable from outside stays.
    let outer = Var::new("o", Some(StructInfo::shape_ndim(2)));
    let by_outer = StructInfo::tensor_with_shape_expr(Expr::var(&outer), DataType::f32());
    let seq = Expr::seq(vec![], arg("v", by_outer.clone()));
    assert_eq!(derive(&seq).unwrap(), by_outer);
}

// ---- purity ----

fn call_of(callee: Expr) -> Call {
    Expr::call(callee, vec![]).as_call().cloned().unwrap()
}

#[test]
fn purity_of_calls() {
    assert!(!is_impure_call(&call_of(Expr::op(UNREGISTERED))));
    assert!(is_impure_call(&call_of(Expr::extern_func("print"))));
    let pure = arg("f", StructInfo::func(vec![], StructInfo::object(), true));
    let impure = arg("g", StructInfo::func(vec![], StructInfo::object(), false));
    assert!(!is_impure_call(&call_of(pure)));
    assert!(is_impure_call(&call_of(impure)));
    let opaque = arg(
        "h",
        StructInfo::opaque_func(DeriveFunc::Default, StructInfo::object()),
    );
    assert!(is_impure_call(&call_of(opaque)));
}

#[test]
fn purity_of_global_callees() {
    let f = Function {
        is_pure: false,
        ..Function::new(
            vec![],
            Expr::seq(vec![], Expr::tuple(vec![])),
            StructInfo::tuple(vec![]),
        )
    };
    let module = IRModule::from_functions([(GlobalVar::new("f"), f.into())]);
    let bare = call_of(Expr::global_var(GlobalVar::new("f")));
    assert!(is_impure_call_in(&bare, Some(&module)));
    assert!(!is_impure_call(&bare));
    let annotated = call_of(module.global_var_expr(&GlobalVar::new("f")));
    assert!(is_impure_call(&annotated));
}
