//! Tests of the StructInfo relations: base check, LCA, erasure, call derivation.

use super::*;
use crate::ir::DataType;
use BaseCheckResult::*;

fn int(v: i64) -> PrimExpr {
    PrimExpr::int(v)
}
fn var(v: &TirVar) -> PrimExpr {
    PrimExpr::var(v)
}
fn tensor(dims: &[PrimExpr]) -> StructInfo {
    StructInfo::tensor(dims.to_vec(), DataType::f32())
}
fn tensor_of(dims: &[PrimExpr], dtype: DataType) -> StructInfo {
    StructInfo::tensor(dims.to_vec(), dtype)
}
fn check(base: &StructInfo, derived: &StructInfo) -> BaseCheckResult {
    struct_info_base_check(base, derived, &Analyzer::new())
}
fn lca(a: &StructInfo, b: &StructInfo) -> StructInfo {
    struct_info_lca(a, b, &Analyzer::new())
}
fn prim_value(e: PrimExpr) -> StructInfo {
    StructInfo::prim_value(e)
}
/// A shape variable (a Relax `Var` of Shape StructInfo).
fn shape_var(name: &str, sinfo: StructInfo) -> Var {
    Var::new(name, Some(sinfo))
}
/// A call of a callee of StructInfo `func` on variables of the given StructInfos.
fn call_with(args: &[StructInfo], sinfo_args: Vec<StructInfo>) -> Call {
    let callee = Var::new("f", None);
    let args = args
        .iter()
        .enumerate()
        .map(|(i, s)| Expr::var(&Var::new(format!("a{i}"), Some(s.clone()))))
        .collect();
    Expr::call_full(Expr::var(&callee), args, Default::default(), sinfo_args)
        .as_call()
        .cloned()
        .expect("a call")
}
fn func_of(sinfo: &StructInfo) -> &FuncStructInfo {
    sinfo.as_func().expect("a function StructInfo")
}
fn derive(func: &StructInfo, args: &[StructInfo]) -> Result<StructInfo, Diagnostic> {
    derive_call_ret_struct_info(func_of(func), &call_with(args, vec![]), &Analyzer::new())
}
fn no_vars(_: &TirVar) -> bool {
    false
}

// ---- base check: Object and kinds ----

#[test]
fn object_is_the_base_of_every_kind() {
    let n = TirVar::new("n");
    for s in [
        StructInfo::object(),
        StructInfo::prim(DataType::i64()),
        StructInfo::shape(vec![var(&n)]),
        tensor(&[var(&n), int(4)]),
        StructInfo::tuple(vec![]),
        StructInfo::func(vec![], StructInfo::object(), true),
    ] {
        assert_eq!(check(&StructInfo::object(), &s), Pass, "{s}");
    }
}

#[test]
fn object_where_a_kind_is_expected_needs_a_cast() {
    assert_eq!(check(&tensor(&[int(3)]), &StructInfo::object()), FailL1);
    assert_eq!(
        check(&StructInfo::prim(DataType::i64()), &StructInfo::object()),
        FailL1
    );
    assert_eq!(
        check(&StructInfo::tuple(vec![]), &StructInfo::object()),
        FailL1
    );
}

#[test]
fn different_kinds_are_disjoint() {
    assert_eq!(
        check(&tensor(&[int(3)]), &StructInfo::shape(vec![int(3)])),
        FailL0
    );
    assert_eq!(
        check(
            &StructInfo::tuple(vec![]),
            &StructInfo::prim(DataType::i64())
        ),
        FailL0
    );
    assert_eq!(
        check(
            &StructInfo::func(vec![], StructInfo::object(), true),
            &tensor(&[])
        ),
        FailL0
    );
}

// ---- base check: Prim ----

#[test]
fn prim_dtype_must_match() {
    let i64 = StructInfo::prim(DataType::i64());
    assert_eq!(check(&i64, &StructInfo::prim(DataType::i64())), Pass);
    assert_eq!(check(&i64, &StructInfo::prim(DataType::i32())), FailL0);
    assert_eq!(check(&i64, &StructInfo::prim(DataType::f32())), FailL0);
}

#[test]
fn prim_values_compare_with_the_analyzer() {
    let n = TirVar::new("n");
    let m = TirVar::new("m");
    // A base without a value accepts any value.
    assert_eq!(
        check(&StructInfo::prim(DataType::i64()), &prim_value(int(3))),
        Pass
    );
    // A derived without a value may or may not have the base's.
    assert_eq!(
        check(&prim_value(var(&n)), &StructInfo::prim(DataType::i64())),
        FailL2
    );
    assert_eq!(check(&prim_value(int(3)), &prim_value(int(3))), Pass);
    assert_eq!(check(&prim_value(int(3)), &prim_value(int(4))), FailL0);
    assert_eq!(check(&prim_value(var(&n)), &prim_value(var(&n))), Pass);
    assert_eq!(check(&prim_value(var(&n)), &prim_value(var(&m))), FailL2);
}

// ---- base check: Shape ----

#[test]
fn shape_ndim() {
    let any = StructInfo::shape_ndim(UNKNOWN_NDIM);
    assert_eq!(check(&any, &StructInfo::shape(vec![int(1), int(2)])), Pass);
    assert_eq!(check(&any, &StructInfo::shape_ndim(UNKNOWN_NDIM)), Pass);
    let two = StructInfo::shape_ndim(2);
    assert_eq!(check(&two, &StructInfo::shape(vec![int(1), int(2)])), Pass);
    assert_eq!(check(&two, &StructInfo::shape(vec![int(1)])), FailL0);
    assert_eq!(check(&two, &StructInfo::shape_ndim(UNKNOWN_NDIM)), FailL1);
}

#[test]
fn shape_values() {
    let n = TirVar::new("n");
    let m = TirVar::new("m");
    let base = StructInfo::shape(vec![var(&n), int(4)]);
    assert_eq!(check(&base, &StructInfo::shape_ndim(2)), FailL2);
    assert_eq!(
        check(&base, &StructInfo::shape(vec![var(&n), int(4)])),
        Pass
    );
    assert_eq!(
        check(&base, &StructInfo::shape(vec![var(&m), int(4)])),
        FailL2
    );
    assert_eq!(
        check(&base, &StructInfo::shape(vec![var(&n), int(5)])),
        FailL0
    );
    assert_eq!(
        check(
            &StructInfo::shape(vec![int(3), int(4)]),
            &StructInfo::shape(vec![int(3), int(5)])
        ),
        FailL0
    );
}

// ---- base check: Tensor ----

#[test]
fn tensor_dtype() {
    let void = StructInfo::tensor_ndim(2, DataType::void());
    assert_eq!(
        check(&void, &StructInfo::tensor_ndim(2, DataType::f32())),
        Pass
    );
    let f32 = StructInfo::tensor_ndim(2, DataType::f32());
    assert_eq!(
        check(&f32, &StructInfo::tensor_ndim(2, DataType::f32())),
        Pass
    );
    assert_eq!(
        check(&f32, &StructInfo::tensor_ndim(2, DataType::i32())),
        FailL0
    );
    assert_eq!(check(&f32, &void), FailL1);
}

#[test]
fn tensor_ndim() {
    let any = StructInfo::tensor_ndim(UNKNOWN_NDIM, DataType::f32());
    assert_eq!(check(&any, &tensor(&[int(1), int(2), int(3)])), Pass);
    let two = StructInfo::tensor_ndim(2, DataType::f32());
    assert_eq!(check(&two, &tensor(&[int(1), int(2)])), Pass);
    assert_eq!(check(&two, &tensor(&[int(1)])), FailL0);
    assert_eq!(check(&two, &any), FailL1);
}

#[test]
fn tensor_shape() {
    let n = TirVar::new("n");
    let m = TirVar::new("m");
    let base = tensor(&[var(&n), int(4)]);
    // A base without a shape accepts any shape of its rank.
    assert_eq!(
        check(&StructInfo::tensor_ndim(2, DataType::f32()), &base),
        Pass
    );
    assert_eq!(
        check(&base, &StructInfo::tensor_ndim(2, DataType::f32())),
        FailL2
    );
    assert_eq!(check(&base, &tensor(&[var(&n), int(4)])), Pass);
    assert_eq!(check(&base, &tensor(&[var(&m), int(4)])), FailL2);
    assert_eq!(check(&base, &tensor(&[var(&n), int(5)])), FailL0);
    assert_eq!(
        check(&tensor(&[int(3), int(4)]), &tensor(&[int(3), int(5)])),
        FailL0
    );
}

#[test]
fn tensor_shape_given_as_a_var() {
    let n = TirVar::new("n");
    let s = shape_var("s", StructInfo::shape_ndim(2));
    let r = shape_var("r", StructInfo::shape_ndim(2));
    let by_s = StructInfo::tensor_with_shape_expr(Expr::var(&s), DataType::f32());
    let by_r = StructInfo::tensor_with_shape_expr(Expr::var(&r), DataType::f32());
    assert_eq!(by_s.as_tensor().map(|t| t.ndim), Some(2));
    assert_eq!(
        check(
            &by_s,
            &StructInfo::tensor_with_shape_expr(Expr::var(&s), DataType::f32())
        ),
        Pass
    );
    assert_eq!(check(&by_s, &by_r), FailL2);
    assert_eq!(check(&by_s, &tensor(&[int(3), int(4)])), FailL2);
    // A shape variable whose StructInfo knows its values compares by them.
    let t = shape_var("t", StructInfo::shape(vec![var(&n), int(4)]));
    let by_t = StructInfo::tensor_with_shape_expr(Expr::var(&t), DataType::f32());
    assert_eq!(check(&by_t, &tensor(&[var(&n), int(4)])), Pass);
    assert_eq!(check(&tensor(&[var(&n), int(5)]), &by_t), FailL0);
}

#[test]
fn symbolic_dims_are_compared_algebraically() {
    let n = TirVar::new("n");
    let a = tensor(&[(&n + 1) * 2]);
    let b = tensor(&[&n * 2 + 2]);
    assert_eq!(check(&a, &b), Pass);
    assert_eq!(check(&tensor(&[&n + 1]), &tensor(&[var(&n)])), FailL0);
}

// ---- base check: Tuple ----

#[test]
fn tuple_length_and_fields() {
    let n = TirVar::new("n");
    let m = TirVar::new("m");
    let a = StructInfo::tuple(vec![tensor(&[var(&n)]), StructInfo::object()]);
    assert_eq!(
        check(&a, &StructInfo::tuple(vec![tensor(&[var(&n)])])),
        FailL0
    );
    assert_eq!(
        check(
            &a,
            &StructInfo::tuple(vec![tensor(&[var(&n)]), tensor(&[int(1)])])
        ),
        Pass
    );
    // The weakest field decides.
    assert_eq!(
        check(
            &a,
            &StructInfo::tuple(vec![tensor(&[var(&m)]), StructInfo::object()])
        ),
        FailL2
    );
    assert_eq!(
        check(
            &StructInfo::tuple(vec![tensor(&[var(&n)]), tensor(&[int(1)])]),
            &StructInfo::tuple(vec![tensor(&[var(&m)]), StructInfo::object()])
        ),
        FailL1
    );
    assert_eq!(
        check(
            &StructInfo::tuple(vec![tensor(&[var(&n)]), tensor(&[int(1)])]),
            &StructInfo::tuple(vec![tensor(&[var(&m)]), tensor(&[int(2)])])
        ),
        FailL0
    );
    assert_eq!(
        check(&StructInfo::tuple(vec![]), &StructInfo::tuple(vec![])),
        Pass
    );
}

// ---- base check: Func ----

#[test]
fn func_purity() {
    let sig = |pure| StructInfo::func(vec![tensor(&[int(3)])], tensor(&[int(3)]), pure);
    assert_eq!(check(&sig(true), &sig(false)), FailL0);
    assert_eq!(check(&sig(false), &sig(true)), Pass);
}

#[test]
fn func_params_are_contravariant_and_ret_covariant() {
    let any_tensor = StructInfo::tensor_ndim(UNKNOWN_NDIM, DataType::void());
    let matrix = StructInfo::tensor_ndim(2, DataType::f32());
    let obj = StructInfo::object();
    // A function accepting any tensor can stand where one taking matrices is expected.
    assert_eq!(
        check(
            &StructInfo::func(vec![matrix.clone()], obj.clone(), true),
            &StructInfo::func(vec![any_tensor.clone()], obj.clone(), true)
        ),
        Pass
    );
    // Not the other way round; only run time could tell.
    assert_eq!(
        check(
            &StructInfo::func(vec![any_tensor.clone()], obj.clone(), true),
            &StructInfo::func(vec![matrix.clone()], obj.clone(), true)
        ),
        FailL2
    );
    assert_eq!(
        check(
            &StructInfo::func(vec![], any_tensor.clone(), true),
            &StructInfo::func(vec![], matrix.clone(), true)
        ),
        Pass
    );
    assert_eq!(
        check(
            &StructInfo::func(vec![], matrix.clone(), true),
            &StructInfo::func(vec![], any_tensor.clone(), true)
        ),
        FailL1
    );
    assert_eq!(
        check(
            &StructInfo::func(vec![matrix.clone()], obj.clone(), true),
            &StructInfo::func(vec![matrix.clone(), matrix], obj, true)
        ),
        FailL0
    );
}

#[test]
fn func_signatures_equal_up_to_renaming_pass() {
    let n = TirVar::new("n");
    let m = TirVar::new("m");
    let sig = |v: &TirVar| StructInfo::func(vec![tensor(&[var(v)])], tensor(&[var(v)]), true);
    assert_eq!(check(&sig(&n), &sig(&m)), Pass);
    // A function of length-3 tensors is not a function of any length.
    let three = StructInfo::func(vec![tensor(&[int(3)])], tensor(&[int(3)]), true);
    assert_eq!(check(&sig(&n), &three), FailL2);
}

#[test]
fn opaque_functions() {
    let params = StructInfo::func(vec![tensor(&[int(3)])], StructInfo::object(), false);
    let empty = StructInfo::opaque_func(DeriveFunc::Empty, StructInfo::object());
    let default = StructInfo::opaque_func(DeriveFunc::Default, StructInfo::object());
    assert_eq!(check(&empty, &params), Pass);
    assert_eq!(check(&empty, &default), Pass);
    assert_eq!(check(&default, &default.clone()), Pass);
    assert_eq!(check(&default, &params), FailL2);
    assert_eq!(check(&params, &default), FailL2);
}

// ---- LCA ----

#[test]
fn lca_of_kinds() {
    let t = tensor(&[int(3)]);
    assert_eq!(lca(&t, &t), t);
    assert_eq!(lca(&StructInfo::object(), &t), StructInfo::object());
    assert_eq!(lca(&t, &StructInfo::object()), StructInfo::object());
    assert_eq!(
        lca(&t, &StructInfo::shape(vec![int(3)])),
        StructInfo::object()
    );
}

#[test]
fn lca_of_prims() {
    let n = TirVar::new("n");
    assert_eq!(
        lca(&prim_value(int(3)), &prim_value(int(4))),
        StructInfo::prim(DataType::i64())
    );
    assert_eq!(
        lca(&prim_value(var(&n)), &prim_value(var(&n))),
        prim_value(var(&n))
    );
    assert_eq!(
        lca(
            &StructInfo::prim(DataType::i64()),
            &StructInfo::prim(DataType::f32())
        ),
        StructInfo::object()
    );
}

#[test]
fn lca_of_shapes() {
    let n = TirVar::new("n");
    let m = TirVar::new("m");
    let a = StructInfo::shape(vec![var(&n), int(4)]);
    assert_eq!(lca(&a, &StructInfo::shape(vec![var(&n), int(4)])), a);
    assert_eq!(
        lca(&a, &StructInfo::shape(vec![var(&m), int(4)])),
        StructInfo::shape_ndim(2)
    );
    assert_eq!(
        lca(&a, &StructInfo::shape(vec![int(1)])),
        StructInfo::shape_ndim(UNKNOWN_NDIM)
    );
}

#[test]
fn lca_of_tensors() {
    let n = TirVar::new("n");
    let m = TirVar::new("m");
    let a = tensor(&[var(&n), int(4)]);
    assert_eq!(lca(&a, &tensor(&[var(&n), int(4)])), a);
    assert_eq!(
        lca(&a, &tensor(&[var(&m), int(4)])).to_string(),
        "R.Tensor(dtype=\"float32\", ndim=2)"
    );
    assert_eq!(
        lca(&a, &tensor_of(&[var(&n), int(4)], DataType::i32())).to_string(),
        "R.Tensor((n, 4))"
    );
    assert_eq!(
        lca(&a, &tensor(&[int(4)])).to_string(),
        "R.Tensor(dtype=\"float32\")"
    );
    assert_eq!(
        lca(
            &tensor_of(&[int(4)], DataType::i32()),
            &tensor(&[int(4), int(1)])
        ),
        StructInfo::tensor_ndim(UNKNOWN_NDIM, DataType::void())
    );
}

#[test]
fn lca_of_tuples() {
    let a = StructInfo::tuple(vec![tensor(&[int(3)]), prim_value(int(1))]);
    let b = StructInfo::tuple(vec![tensor(&[int(4)]), prim_value(int(1))]);
    assert_eq!(
        lca(&a, &b).to_string(),
        "R.Tuple(R.Tensor(dtype=\"float32\", ndim=1), R.Prim(value=1))"
    );
    assert_eq!(
        lca(&a, &StructInfo::tuple(vec![tensor(&[int(3)])])),
        StructInfo::object()
    );
}

#[test]
fn lca_of_functions() {
    let n = TirVar::new("n");
    let m = TirVar::new("m");
    let sig =
        |v: &TirVar, ret: StructInfo, pure| StructInfo::func(vec![tensor(&[var(v)])], ret, pure);
    // Alpha-equivalent parameters are kept; the results meet.
    let joined = lca(
        &sig(&n, tensor(&[var(&n)]), true),
        &sig(&m, tensor(&[var(&m), int(2)]), false),
    );
    let f = func_of(&joined);
    assert_eq!(f.params.as_ref().map(Vec::len), Some(1));
    assert_eq!(f.params.as_ref().unwrap()[0], tensor(&[var(&n)]));
    assert_eq!(
        f.ret,
        StructInfo::tensor_ndim(UNKNOWN_NDIM, DataType::f32())
    );
    assert!(!f.purity);
    // Different parameters: only "some function" remains.
    let joined = lca(
        &sig(&n, StructInfo::object(), true),
        &StructInfo::func(vec![tensor(&[int(3)])], StructInfo::object(), true),
    );
    let f = func_of(&joined);
    assert_eq!(f.params, None);
    assert_eq!(f.derive_func, Some(DeriveFunc::Empty));
    assert!(f.purity);
    let default = StructInfo::opaque_func(DeriveFunc::Default, StructInfo::object());
    assert_eq!(lca(&default, &default.clone()), default);
    assert_eq!(
        func_of(&lca(&default, &sig(&n, StructInfo::object(), true))).derive_func,
        Some(DeriveFunc::Empty)
    );
}

// ---- erasure ----

#[test]
fn erase_drops_a_shape_with_an_out_of_scope_var() {
    let n = TirVar::new("n");
    let s = tensor(&[var(&n), int(4)]);
    let erased = erase_to_well_defined(&s, &HashMap::new(), &HashMap::new(), &no_vars);
    assert_eq!(erased, StructInfo::tensor_ndim(2, DataType::f32()));
    let kept = erase_to_well_defined(&s, &HashMap::new(), &HashMap::new(), &|v| *v == n);
    assert_eq!(kept, s);
}

#[test]
fn erase_substitutes_mapped_vars() {
    let n = TirVar::new("n");
    let m = TirVar::new("m");
    let s = tensor(&[var(&n), int(4)]);
    let map = HashMap::from([(n.clone(), &m + 1)]);
    let erased = erase_to_well_defined(&s, &map, &HashMap::new(), &no_vars);
    assert_eq!(
        erased.to_string(),
        "R.Tensor((m + 1, 4), dtype=\"float32\")"
    );
    let map = HashMap::from([(n.clone(), int(3))]);
    let erased = erase_to_well_defined(&s, &map, &HashMap::new(), &no_vars);
    assert_eq!(erased, tensor(&[int(3), int(4)]));
}

#[test]
fn erase_simplifies_substituted_dims() {
    let n = TirVar::new("n");
    let s = tensor(&[&n + 1]);
    let map = HashMap::from([(n.clone(), int(3))]);
    let erased = erase_to_well_defined(&s, &map, &HashMap::new(), &no_vars);
    assert_eq!(erased, tensor(&[int(4)]));
}

#[test]
fn erase_shape_and_prim_values() {
    let n = TirVar::new("n");
    assert_eq!(
        erase_to_well_defined(
            &StructInfo::shape(vec![var(&n), int(2)]),
            &HashMap::new(),
            &HashMap::new(),
            &no_vars
        ),
        StructInfo::shape_ndim(2)
    );
    assert_eq!(
        erase_to_well_defined(
            &prim_value(&n * 2),
            &HashMap::new(),
            &HashMap::new(),
            &no_vars
        ),
        StructInfo::prim(DataType::i64())
    );
    // Nothing to erase: unchanged.
    let plain = StructInfo::prim(DataType::i64());
    assert_eq!(
        erase_to_well_defined(&plain, &HashMap::new(), &HashMap::new(), &no_vars),
        plain
    );
}

#[test]
fn erase_recurses_into_tuples() {
    let n = TirVar::new("n");
    let m = TirVar::new("m");
    let s = StructInfo::tuple(vec![
        tensor(&[var(&n)]),
        StructInfo::shape(vec![var(&m)]),
        StructInfo::object(),
    ]);
    let erased = erase_to_well_defined(&s, &HashMap::new(), &HashMap::new(), &|v| *v == m);
    assert_eq!(
        erased,
        StructInfo::tuple(vec![
            StructInfo::tensor_ndim(1, DataType::f32()),
            StructInfo::shape(vec![var(&m)]),
            StructInfo::object(),
        ])
    );
}

#[test]
fn erase_keeps_the_vars_a_signature_defines() {
    let n = TirVar::new("n");
    let k = TirVar::new("k");
    let s = StructInfo::func(vec![tensor(&[var(&n)])], tensor(&[var(&n), var(&k)]), true);
    let erased = erase_to_well_defined(&s, &HashMap::new(), &HashMap::new(), &no_vars);
    let f = func_of(&erased);
    assert_eq!(f.params, Some(vec![tensor(&[var(&n)])]));
    assert_eq!(f.ret, StructInfo::tensor_ndim(2, DataType::f32()));
    // A mapping still applies inside.
    let map = HashMap::from([(k.clone(), int(7))]);
    let erased = erase_to_well_defined(&s, &map, &HashMap::new(), &no_vars);
    assert_eq!(func_of(&erased).ret, tensor(&[var(&n), int(7)]));
}

#[test]
fn erase_shape_vars() {
    let s = shape_var("s", StructInfo::shape_ndim(2));
    let t = StructInfo::tensor_with_shape_expr(Expr::var(&s), DataType::f32());
    assert_eq!(
        erase_to_well_defined(&t, &HashMap::new(), &HashMap::new(), &no_vars),
        StructInfo::tensor_ndim(2, DataType::f32())
    );
    let to_self = HashMap::from([(s.clone(), Expr::var(&s))]);
    assert_eq!(
        erase_to_well_defined(&t, &HashMap::new(), &to_self, &no_vars),
        t
    );
    let to_literal = HashMap::from([(s.clone(), Expr::shape(vec![int(3), int(4)]))]);
    assert_eq!(
        erase_to_well_defined(&t, &HashMap::new(), &to_literal, &no_vars),
        tensor(&[int(3), int(4)])
    );
}

// ---- call result derivation ----

#[test]
fn call_binds_and_substitutes() {
    let n = TirVar::new("n");
    let m = TirVar::new("m");
    let k = TirVar::new("k");
    let f = StructInfo::func(
        vec![tensor(&[var(&n), var(&m)])],
        tensor(&[var(&m), var(&n)]),
        true,
    );
    let ret = derive(&f, &[tensor(&[int(3), var(&k)])]).unwrap();
    assert_eq!(ret, tensor(&[var(&k), int(3)]));
    assert_eq!(ret.to_string(), "R.Tensor((k, 3), dtype=\"float32\")");
}

#[test]
fn call_with_a_mismatched_literal_dim_is_an_error() {
    let n = TirVar::new("n");
    let f = StructInfo::func(vec![tensor(&[var(&n), int(4)])], tensor(&[var(&n)]), true);
    let err = derive(&f, &[tensor(&[int(3), int(5)])]).unwrap_err();
    assert_eq!(err.code, "call-arg-mismatch");
    assert_eq!(
        err.message,
        "argument 0 of the call: expected R.Tensor((n, 4), dtype=\"float32\"), \
         found R.Tensor((3, 5), dtype=\"float32\")"
    );
    assert_eq!(
        err.notes,
        vec!["the call binds the callee's n = 3".to_string()]
    );
}

#[test]
fn call_with_conflicting_bindings_is_an_error() {
    let n = TirVar::new("n");
    let f = StructInfo::func(
        vec![tensor(&[var(&n)]), tensor(&[var(&n)])],
        tensor(&[var(&n)]),
        true,
    );
    let err = derive(&f, &[tensor(&[int(3)]), tensor(&[int(4)])]).unwrap_err();
    assert_eq!(err.code, "call-arg-mismatch");
    assert!(
        err.message.starts_with("argument 1 of the call"),
        "{}",
        err.message
    );
    // Symbolic arguments that might agree are checked at run time.
    let a = TirVar::new("a");
    let b = TirVar::new("b");
    let ret = derive(&f, &[tensor(&[var(&a)]), tensor(&[var(&b)])]).unwrap();
    assert_eq!(ret, tensor(&[var(&a)]));
}

#[test]
fn call_argument_kind_dtype_and_rank_errors() {
    let f = StructInfo::func(
        vec![StructInfo::tensor_ndim(2, DataType::f32())],
        StructInfo::object(),
        true,
    );
    for bad in [
        StructInfo::tensor_ndim(2, DataType::i32()),
        StructInfo::tensor_ndim(3, DataType::f32()),
        StructInfo::shape_ndim(2),
        // Only a cast could make an Object fit: an error, as in TVM.
        StructInfo::object(),
        StructInfo::tensor_ndim(2, DataType::void()),
    ] {
        let err = derive(&f, std::slice::from_ref(&bad)).unwrap_err();
        assert_eq!(err.code, "call-arg-mismatch", "{bad}");
        assert!(
            err.message.contains(&format!("found {bad}")),
            "{}",
            err.message
        );
    }
}

#[test]
fn call_with_unknown_shapes_is_checked_at_run_time() {
    let n = TirVar::new("n");
    let m = TirVar::new("m");
    let f = StructInfo::func(
        vec![tensor(&[var(&n), var(&m)])],
        tensor(&[var(&m), var(&n)]),
        true,
    );
    let ret = derive(&f, &[StructInfo::tensor_ndim(2, DataType::f32())]).unwrap();
    assert_eq!(ret, StructInfo::tensor_ndim(2, DataType::f32()));
}

#[test]
fn call_arity_mismatch() {
    let f = StructInfo::func(
        vec![tensor(&[int(3)]), tensor(&[int(3)])],
        StructInfo::object(),
        true,
    );
    let err = derive(&f, &[tensor(&[int(3)])]).unwrap_err();
    assert_eq!(err.code, "call-arity-mismatch");
    assert_eq!(
        err.message,
        "the callee takes 2 arguments, the call passes 1"
    );
}

#[test]
fn call_result_erases_callee_vars_not_bound() {
    let n = TirVar::new("n");
    let k = TirVar::new("k");
    let f = StructInfo::func(vec![tensor(&[var(&n)])], tensor(&[var(&n), var(&k)]), true);
    let ret = derive(&f, &[tensor(&[int(3)])]).unwrap();
    assert_eq!(ret, StructInfo::tensor_ndim(2, DataType::f32()));
    // A var free in the arguments is in scope at the call site.
    let ret = derive(&f, &[tensor(&[var(&n)])]).unwrap();
    assert_eq!(ret, StructInfo::tensor_ndim(2, DataType::f32()));
    let g = StructInfo::func(vec![tensor(&[var(&n)])], tensor(&[var(&n)]), true);
    assert_eq!(
        derive(&g, &[tensor(&[var(&n)])]).unwrap(),
        tensor(&[var(&n)])
    );
}

#[test]
fn call_binds_from_a_later_parameter() {
    let n = TirVar::new("n");
    // f(x: (n * 2,), y: (n,)) -> (n,)
    let f = StructInfo::func(
        vec![tensor(&[&n * 2]), tensor(&[var(&n)])],
        tensor(&[var(&n)]),
        true,
    );
    let ret = derive(&f, &[tensor(&[int(6)]), tensor(&[int(3)])]).unwrap();
    assert_eq!(ret, tensor(&[int(3)]));
}

#[test]
fn call_checks_compound_dims_after_binding() {
    let n = TirVar::new("n");
    let f = StructInfo::func(
        vec![tensor(&[&n * 2]), tensor(&[var(&n)])],
        tensor(&[&n + 1]),
        true,
    );
    assert_eq!(
        derive(&f, &[tensor(&[int(6)]), tensor(&[int(3)])]).unwrap(),
        tensor(&[int(4)])
    );
    let err = derive(&f, &[tensor(&[int(7)]), tensor(&[int(3)])]).unwrap_err();
    assert_eq!(err.code, "call-arg-mismatch");
}

#[test]
fn call_binds_prim_shape_and_tuple_params() {
    let n = TirVar::new("n");
    let m = TirVar::new("m");
    let ret = tensor(&[var(&m), var(&n)]);
    let by_prim = StructInfo::func(
        vec![prim_value(var(&n)), prim_value(var(&m))],
        ret.clone(),
        true,
    );
    assert_eq!(
        derive(&by_prim, &[prim_value(int(2)), prim_value(int(5))]).unwrap(),
        tensor(&[int(5), int(2)])
    );
    let by_shape = StructInfo::func(
        vec![StructInfo::shape(vec![var(&n), var(&m)])],
        ret.clone(),
        true,
    );
    assert_eq!(
        derive(&by_shape, &[StructInfo::shape(vec![int(2), int(5)])]).unwrap(),
        tensor(&[int(5), int(2)])
    );
    let by_tuple = StructInfo::func(
        vec![StructInfo::tuple(vec![
            tensor(&[var(&n)]),
            tensor(&[var(&m)]),
        ])],
        ret,
        true,
    );
    assert_eq!(
        derive(
            &by_tuple,
            &[StructInfo::tuple(vec![
                tensor(&[int(2)]),
                tensor(&[int(5)])
            ])]
        )
        .unwrap(),
        tensor(&[int(5), int(2)])
    );
}

#[test]
fn call_binds_a_shape_var() {
    let s = shape_var("s", StructInfo::shape_ndim(2));
    let by_s = StructInfo::tensor_with_shape_expr(Expr::var(&s), DataType::f32());
    let f = StructInfo::func(vec![by_s.clone()], by_s, true);
    assert_eq!(
        derive(&f, &[tensor(&[int(3), int(4)])]).unwrap(),
        tensor(&[int(3), int(4)])
    );
}

#[test]
fn call_returning_a_closure_substitutes_inside_it() {
    let n = TirVar::new("n");
    let inner = StructInfo::func(vec![tensor(&[var(&n)])], tensor(&[var(&n)]), true);
    let f = StructInfo::func(vec![tensor(&[var(&n)])], inner, true);
    let ret = derive(&f, &[tensor(&[int(3)])]).unwrap();
    assert_eq!(
        ret,
        StructInfo::func(vec![tensor(&[int(3)])], tensor(&[int(3)]), true)
    );
}

#[test]
fn opaque_callees_derive_from_sinfo_args() {
    let default = StructInfo::opaque_func(DeriveFunc::Default, StructInfo::object());
    let t = tensor(&[int(3)]);
    let p = StructInfo::prim(DataType::i64());
    let cases = [
        (vec![], StructInfo::object()),
        (vec![t.clone()], t.clone()),
        (
            vec![t.clone(), p.clone()],
            StructInfo::tuple(vec![t.clone(), p.clone()]),
        ),
    ];
    for (sinfo_args, expected) in cases {
        let call = call_with(std::slice::from_ref(&t), sinfo_args);
        assert_eq!(
            derive_call_ret_struct_info(func_of(&default), &call, &Analyzer::new()).unwrap(),
            expected
        );
    }
    let empty = StructInfo::opaque_func(DeriveFunc::Empty, StructInfo::object());
    let call = call_with(&[], vec![t.clone()]);
    assert_eq!(
        derive_call_ret_struct_info(func_of(&empty), &call, &Analyzer::new()).unwrap(),
        StructInfo::object()
    );
    let ret_only = FuncStructInfo {
        params: None,
        ret: t.clone(),
        purity: false,
        derive_func: None,
    };
    assert_eq!(
        derive_call_ret_struct_info(&ret_only, &call, &Analyzer::new()).unwrap(),
        t
    );
}

#[test]
fn default_derive_shapes() {
    let t = tensor(&[int(1)]);
    assert_eq!(default_derive(&[]), StructInfo::object());
    assert_eq!(default_derive(std::slice::from_ref(&t)), t);
    assert_eq!(
        default_derive(&[t.clone(), t.clone()]),
        StructInfo::tuple(vec![t.clone(), t])
    );
}

#[test]
fn shape_var_mapping_binds_first_occurrence_only() {
    let n = TirVar::new("n");
    let mut mapping = ShapeVarMapping::new();
    get_shape_var_mapping(
        &StructInfo::tuple(vec![tensor(&[var(&n), &n * 2]), tensor(&[var(&n)])]),
        &StructInfo::tuple(vec![tensor(&[int(3), int(6)]), tensor(&[int(4)])]),
        &mut mapping,
    );
    assert_eq!(mapping.shape_vars, HashMap::from([(n.clone(), int(3))]));
    // A function StructInfo binds nothing.
    let mut mapping = ShapeVarMapping::new();
    get_shape_var_mapping(
        &StructInfo::func(vec![tensor(&[var(&n)])], StructInfo::object(), true),
        &StructInfo::func(vec![tensor(&[int(3)])], StructInfo::object(), true),
        &mut mapping,
    );
    assert!(mapping.shape_vars.is_empty());
}

#[test]
fn shape_analyzer_knows_dims_are_non_negative() {
    let n = TirVar::new("n");
    let a = shape_analyzer(&Analyzer::new(), [&tensor(&[var(&n)])]);
    assert_eq!(a.prove(&var(&n).ge(0)), Proof::Proven);
    assert_eq!(Analyzer::new().prove(&var(&n).ge(0)), Proof::Unknown);
}
