//! Tests of structural equality, its reports and its hash.

use super::*;
use crate::ir::attrs::{AttrValue, Attrs};
use crate::ir::expr::{Binding, BindingBlock, Expr, GlobalVar, Var};
use crate::ir::function::Function;
use crate::ir::module::IRModule;
use crate::ir::prim_expr::{PrimExpr, TirVar};
use crate::ir::struct_info::StructInfo;
use crate::tir::{PrimFunc, PrimFuncParam};
use relax_runtime::{DataType, Tensor};

/// The single difference a built module has from the base one.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Change {
    None,
    Op,
    ArgOrder,
    ConstValue,
    Dtype,
    Dim,
    AttrValue,
    BlockKind,
    VarKind,
    ExtraBinding,
    Purity,
    GlobalSymbol,
    RetDim,
    Module,
}

const CHANGES: [Change; 13] = [
    Change::Op,
    Change::ArgOrder,
    Change::ConstValue,
    Change::Dtype,
    Change::Dim,
    Change::AttrValue,
    Change::BlockKind,
    Change::VarKind,
    Change::ExtraBinding,
    Change::Purity,
    Change::GlobalSymbol,
    Change::RetDim,
    Change::Module,
];

fn f32_tensor(dims: Vec<PrimExpr>) -> StructInfo {
    StructInfo::tensor(dims, DataType::f32())
}

/// Builds, with fresh variables named `{prefix}x`, …:
///
/// ```text
/// @R.function
/// def main(x: R.Tensor((n, 4), "float32"), y: R.Tensor((n, 4), "float32")) -> R.Tensor((n, 4), "float32"):
///     R.func_attr({"global_symbol": "main", "num_input": 2})
///     with R.dataflow():
///         lv0: R.Tensor((n, 4)) = R.add(x, y)
///         lv1: R.Tensor((n,)) = R.sum(lv0, axis=[1], keepdims=False)
///         lv2: R.Tensor((n, 4)) = R.multiply(lv0, metadata[0])   # [1, 2, 3, 4]
///         gv: R.Tensor((n, 4)) = lv2
///         R.output(gv)
///     return gv
/// ```
///
/// with `change` applied.
fn build(prefix: &str, change: Change) -> IRModule {
    let name = |s: &str| format!("{prefix}{s}");
    let n = TirVar::new(name("n"));
    let dims = |last: i64| vec![PrimExpr::var(&n), PrimExpr::int(last)];
    let x_dtype = if change == Change::Dtype {
        DataType::float(16)
    } else {
        DataType::f32()
    };
    let x = Var::new(name("x"), Some(StructInfo::tensor(dims(4), x_dtype)));
    let y_last = if change == Change::Dim { 5 } else { 4 };
    let y = Var::new(name("y"), Some(f32_tensor(dims(y_last))));
    let dataflow = change != Change::BlockKind;
    let local = |s: &str, sinfo: StructInfo| {
        if dataflow {
            Var::new_dataflow(name(s), Some(sinfo))
        } else {
            Var::new(name(s), Some(sinfo))
        }
    };
    let lv0 = local("lv0", f32_tensor(dims(4)));
    let lv1 = local("lv1", f32_tensor(vec![PrimExpr::var(&n)]));
    let lv2 = local("lv2", f32_tensor(dims(4)));
    let gv = if change == Change::VarKind {
        Var::new_dataflow(name("gv"), Some(f32_tensor(dims(4))))
    } else {
        Var::new(name("gv"), Some(f32_tensor(dims(4))))
    };

    let op = if change == Change::Op {
        "relax.multiply"
    } else {
        "relax.add"
    };
    let args = if change == Change::ArgOrder {
        vec![y.to_expr(), x.to_expr()]
    } else {
        vec![x.to_expr(), y.to_expr()]
    };
    let axis = if change == Change::AttrValue { 0 } else { 1 };
    let third = if change == Change::ConstValue {
        7.0
    } else {
        3.0
    };
    let constant = Tensor::from_slice(&[4], &[1.0f32, 2.0, third, 4.0]).unwrap();
    let mut bindings = vec![
        Binding::var_binding(lv0.clone(), Expr::call_op(op, args, Attrs::new())),
        Binding::var_binding(
            lv1,
            Expr::call_op(
                "relax.sum",
                vec![lv0.to_expr()],
                Attrs::from_pairs([
                    ("axis", AttrValue::from(vec![axis])),
                    ("keepdims", AttrValue::from(false)),
                ]),
            ),
        ),
        Binding::var_binding(
            lv2.clone(),
            Expr::call_op(
                "relax.multiply",
                vec![lv0.to_expr(), Expr::constant(constant)],
                Attrs::new(),
            ),
        ),
        Binding::var_binding(gv.clone(), lv2.to_expr()),
    ];
    if change == Change::ExtraBinding {
        let extra = local("lv3", f32_tensor(dims(4)));
        bindings.push(Binding::var_binding(
            extra,
            Expr::call_op("relax.nn.relu", vec![gv.to_expr()], Attrs::new()),
        ));
    }
    let block = if dataflow {
        BindingBlock::dataflow(bindings)
    } else {
        BindingBlock::new(bindings)
    };
    let ret_last = if change == Change::RetDim { 8 } else { 4 };
    let mut main = Function::new(
        vec![x, y],
        Expr::seq(vec![block], gv.to_expr()),
        f32_tensor(dims(ret_last)),
    )
    .with_global_symbol(if change == Change::GlobalSymbol {
        "main2"
    } else {
        "main"
    })
    .with_attr("num_input", 2i64);
    main.is_pure = change != Change::Purity;

    let mut module = IRModule::new();
    module.add(GlobalVar::new("main"), main);
    if change == Change::Module {
        module.add(GlobalVar::new("helper"), prim_func(prefix, 4));
    }
    module
}

/// `helper(A: T.Buffer((n, k), "float32"), B: T.Buffer((n, last), "float32"), s: T.int64)`
fn prim_func(prefix: &str, last: i64) -> PrimFunc {
    let n = TirVar::new(format!("{prefix}n"));
    let k = TirVar::new(format!("{prefix}k"));
    let s = TirVar::new(format!("{prefix}s"));
    PrimFunc {
        params: vec![
            PrimFuncParam::Buffer(crate::tir::Buffer::new(
                format!("{prefix}A"),
                vec![PrimExpr::var(&n), PrimExpr::var(&k)],
                DataType::f32(),
            )),
            PrimFuncParam::Buffer(crate::tir::Buffer::new(
                format!("{prefix}B"),
                vec![PrimExpr::var(&n), PrimExpr::int(last)],
                DataType::f32(),
            )),
            PrimFuncParam::Scalar(s),
        ],
        body: crate::tir::Stmt::no_op(),
        attrs: Attrs::from_pairs([("global_symbol", "helper")]),
    }
}

fn report(change: Change) -> String {
    structural_equal_report(&build("a_", Change::None), &build("b_", change))
        .expect_err("a change must be detected")
        .message
}

#[test]
fn separately_built_modules_are_equal() {
    let a = build("a_", Change::None);
    let b = build("b_", Change::None);
    assert_ne!(a, b, "the builds must differ in var ids");
    assert!(structural_equal(&a, &b));
    assert_eq!(structural_equal_report(&a, &b), Ok(()));
    assert_structural_equal(&a, &b);
    assert_eq!(structural_hash(&a), structural_hash(&b));
    assert_eq!(
        structural_hash_map_free_vars(&a),
        structural_hash_map_free_vars(&b)
    );
    // With two functions, each compared with fresh maps.
    let a = build("a_", Change::Module);
    let b = build("b_", Change::Module);
    assert_structural_equal(&a, &b);
    assert_eq!(structural_hash(&a), structural_hash(&b));
}

#[test]
fn each_difference_is_reported_at_its_path() {
    let expected = [
        (
            Change::Op,
            "at function main / block 0 / binding 0 / value / call op: \
             lhs is Op relax.add, rhs is Op relax.multiply",
        ),
        (
            Change::ArgOrder,
            "at function main / block 0 / binding 0 / value / call args[0]: \
             lhs is Var a_x, rhs is Var b_y (lhs Var a_x corresponds to rhs Var b_x)",
        ),
        (
            Change::ConstValue,
            "at function main / block 0 / binding 2 / value / call args[1]: \
             lhs is Constant float32 (4,), rhs is Constant float32 (4,) \
             (data differ at element 2: 3 vs 7)",
        ),
        (
            Change::Dtype,
            "at function main / param 0 / struct info / dtype: lhs is float32, rhs is float16",
        ),
        (
            Change::Dim,
            "at function main / param 1 / struct info / shape / dim 1: lhs is 4, rhs is 5",
        ),
        (
            Change::AttrValue,
            "at function main / block 0 / binding 1 / value / call attrs[\"axis\"] / [0]: \
             lhs is 1, rhs is 0",
        ),
        (
            Change::BlockKind,
            "at function main / block 0: lhs is DataflowBlock, rhs is BindingBlock",
        ),
        (
            Change::VarKind,
            "at function main / block 0 / binding 3 / var: lhs is Var a_gv, rhs is DataflowVar b_gv",
        ),
        (
            Change::ExtraBinding,
            "at function main / block 0 / number of bindings: lhs is 4, rhs is 5",
        ),
        (
            Change::Purity,
            "at function main / purity: lhs is pure, rhs is impure",
        ),
        (
            Change::GlobalSymbol,
            "at function main / attrs[\"global_symbol\"]: lhs is \"main\", rhs is \"main2\"",
        ),
        (
            Change::RetDim,
            "at function main / ret_struct_info / shape / dim 1: lhs is 4, rhs is 8",
        ),
        (
            Change::Module,
            "at function helper: lhs is absent, rhs is a PrimFunc",
        ),
    ];
    assert_eq!(expected.len(), CHANGES.len());
    for (change, message) in expected {
        assert_eq!(report(change), message, "{change:?}");
        assert!(!structural_equal(
            &build("a_", Change::None),
            &build("b_", change)
        ));
    }
}

#[test]
fn report_text_is_stable() {
    // Same names on both sides: only the mapping tells x from y.
    let err = structural_equal_report(&build("", Change::None), &build("", Change::ArgOrder))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "at function main / block 0 / binding 0 / value / call args[0]: \
         lhs is Var x, rhs is Var y (lhs Var x corresponds to rhs Var x)"
    );
    assert_eq!(
        err.path,
        "function main / block 0 / binding 0 / value / call args[0]"
    );
    assert_eq!(err.lhs, "Var x");
    assert_eq!(err.rhs, "Var y");
}

#[test]
#[should_panic(expected = "structural equality failed: at function main / purity")]
fn assert_structural_equal_panics_with_the_report() {
    assert_structural_equal(&build("a_", Change::None), &build("b_", Change::Purity));
}

#[test]
fn hashes_of_differing_modules_differ() {
    let base = structural_hash(&build("a_", Change::None));
    for change in CHANGES {
        assert_ne!(base, structural_hash(&build("b_", change)), "{change:?}");
    }
    // A module compared with itself.
    let m = build("a_", Change::Module);
    assert!(structural_equal(&m, &m));
    assert_eq!(structural_hash(&m), structural_hash(&m.clone()));
}

/// `f(x: R.Tensor(dims_x), y: R.Tensor(dims_y)) -> ret { return x }`
fn sig(dims_x: Vec<PrimExpr>, dims_y: Vec<PrimExpr>, ret: Vec<PrimExpr>) -> Function {
    let x = Var::new("x", Some(f32_tensor(dims_x)));
    let y = Var::new("y", Some(f32_tensor(dims_y)));
    let body = Expr::seq(vec![], x.to_expr());
    Function::new(vec![x, y], body, f32_tensor(ret))
}

#[test]
fn symbolic_dims_are_mapped_at_their_definition() {
    let (n, m, k) = (TirVar::new("n"), TirVar::new("m"), TirVar::new("k"));
    let v = |t: &TirVar| PrimExpr::var(t);
    let four = || PrimExpr::int(4);

    // (n, 4) vs (m, 4): equal.
    let a = sig(vec![v(&n), four()], vec![four()], vec![v(&n), four()]);
    let b = sig(vec![v(&m), four()], vec![four()], vec![v(&m), four()]);
    assert!(structural_equal(&a, &b));
    assert_eq!(structural_hash(&a), structural_hash(&b));

    // (n, n) vs (n, m): not equal.
    let a = sig(vec![v(&n), v(&n)], vec![], vec![]);
    let b = sig(vec![v(&n), v(&m)], vec![], vec![]);
    let err = structural_equal_report(&a, &b).unwrap_err();
    assert_eq!(
        err.message,
        "at param 0 / struct info / shape / dim 1: lhs is n, rhs is m \
         (lhs n corresponds to rhs n)"
    );
    assert_ne!(structural_hash(&a), structural_hash(&b));

    // A var defined by one parameter and reused by the next must be reused
    // consistently: x: (n,), y: (n,) vs x: (n,), y: (m,).
    let a = sig(vec![v(&n)], vec![v(&n)], vec![]);
    let b = sig(vec![v(&m)], vec![v(&k)], vec![]);
    assert!(!structural_equal(&a, &b));

    // The result only uses vars that parameters defined: n vs a free k.
    let a = sig(vec![v(&n)], vec![], vec![v(&n)]);
    let b = sig(vec![v(&m)], vec![], vec![v(&k)]);
    let err = structural_equal_report(&a, &b).unwrap_err();
    assert_eq!(
        err.message,
        "at ret_struct_info / shape / dim 0: lhs is n, rhs is k \
         (lhs n corresponds to rhs m)"
    );

    // No algebra: n * m is not m * n.
    let a = sig(vec![v(&n), v(&m)], vec![], vec![v(&n) * v(&m)]);
    let b = sig(vec![v(&n), v(&m)], vec![], vec![v(&m) * v(&n)]);
    assert!(!structural_equal(&a, &b));
    assert!(structural_equal(&a, &a));
}

/// `match_cast(x, R.Tensor((d, 4)))` binding `lv`, then `lv2 = add(lv, lv)`
/// annotated `(d, 4)`, in a function with parameter `x: R.Tensor(ndim=2)`.
fn match_cast_fn(pattern_dim: Option<&TirVar>) -> Function {
    let d = TirVar::new("d");
    let pattern_dim = pattern_dim.unwrap_or(&d);
    let x = Var::new("x", Some(StructInfo::tensor_ndim(2, DataType::f32())));
    let pattern = f32_tensor(vec![PrimExpr::var(pattern_dim), PrimExpr::int(4)]);
    let lv = Var::new("lv", Some(pattern.clone()));
    let lv2 = Var::new("lv2", Some(pattern.clone()));
    let block = BindingBlock::new(vec![
        Binding::match_cast(lv.clone(), x.to_expr(), pattern.clone()),
        Binding::var_binding(
            lv2.clone(),
            Expr::call_op("relax.add", vec![lv.to_expr(), lv.to_expr()], Attrs::new()),
        ),
    ]);
    Function::new(
        vec![x],
        Expr::seq(vec![block], lv2.to_expr()),
        StructInfo::tensor_ndim(2, DataType::f32()),
    )
}

#[test]
fn match_cast_defines_symbolic_vars() {
    let a = match_cast_fn(None);
    let b = match_cast_fn(None);
    assert_structural_equal(&a, &b);
    assert_eq!(structural_hash(&a), structural_hash(&b));

    // A pattern that reuses a free var instead of defining one still maps it
    // (it is a definition site), so it is equal too.
    let free = TirVar::new("e");
    assert!(structural_equal(&a, &match_cast_fn(Some(&free))));

    // But binding variables' annotations are use sites: `(e, 4)` with a free
    // `e` does not match `(d, 4)` with `d` defined by the pattern.
    let lv = Var::new("lv", Some(f32_tensor(vec![PrimExpr::int(4)])));
    let e = TirVar::new("e");
    let annotated = |t: &TirVar| {
        let v = Var::new("v", Some(f32_tensor(vec![PrimExpr::var(t)])));
        Binding::var_binding(v, lv.to_expr())
    };
    let d = TirVar::new("d");
    let defining = Binding::match_cast(
        Var::new("w", Some(f32_tensor(vec![PrimExpr::var(&d)]))),
        lv.to_expr(),
        f32_tensor(vec![PrimExpr::var(&d)]),
    );
    let a = BindingBlock::new(vec![defining.clone(), annotated(&d)]);
    let b = BindingBlock::new(vec![defining.clone(), annotated(&e)]);
    let err = structural_equal_report(&a, &b).unwrap_err();
    assert_eq!(
        err.message,
        "at binding 1 / var / struct info / shape / dim 0: lhs is d, rhs is e \
         (lhs d corresponds to rhs d)"
    );
}

#[test]
fn free_vars_need_map_free_vars() {
    let add =
        |a: &Var, b: &Var| Expr::call_op("relax.add", vec![a.to_expr(), b.to_expr()], Attrs::new());
    let sinfo = || Some(f32_tensor(vec![PrimExpr::int(4)]));
    let (x, y) = (Var::new("x", sinfo()), Var::new("y", sinfo()));
    let (p, q) = (Var::new("x", sinfo()), Var::new("y", sinfo()));

    // Identical free vars are equal; others are not.
    assert!(structural_equal(&add(&x, &y), &add(&x, &y)));
    assert_eq!(structural_hash(&add(&x, &y)), structural_hash(&add(&x, &y)));
    let err = structural_equal_report(&add(&x, &y), &add(&p, &q)).unwrap_err();
    assert_eq!(
        err.message,
        "at call args[0]: lhs is Var x, rhs is Var x (both are free variables)"
    );

    // Mapped on first encounter, one-to-one.
    assert!(structural_equal_map_free_vars(&add(&x, &y), &add(&p, &q)));
    assert_eq!(
        structural_hash_map_free_vars(&add(&x, &y)),
        structural_hash_map_free_vars(&add(&p, &q))
    );
    assert!(!structural_equal_map_free_vars(&add(&x, &x), &add(&p, &q)));
    assert!(!structural_equal_map_free_vars(&add(&x, &y), &add(&p, &p)));
    assert_ne!(
        structural_hash_map_free_vars(&add(&x, &x)),
        structural_hash_map_free_vars(&add(&p, &q))
    );
    // The kind and annotation of a free var still count.
    let df = Var::new_dataflow("x", sinfo());
    assert!(!structural_equal_map_free_vars(&add(&x, &y), &add(&df, &q)));
    let wide = Var::new("x", Some(f32_tensor(vec![PrimExpr::int(5)])));
    assert!(!structural_equal_map_free_vars(
        &add(&x, &y),
        &add(&wide, &q)
    ));

    // Symbolic vars alike.
    let (n, m) = (TirVar::new("n"), TirVar::new("m"));
    assert!(!structural_equal(&PrimExpr::var(&n), &PrimExpr::var(&m)));
    assert!(structural_equal(&PrimExpr::var(&n), &PrimExpr::var(&n)));
    assert!(structural_equal_map_free_vars(
        &(PrimExpr::var(&n) + 1),
        &(PrimExpr::var(&m) + 1)
    ));
    assert!(!structural_equal_map_free_vars(
        &(PrimExpr::var(&n) + &n),
        &(PrimExpr::var(&m) + &n)
    ));
}

#[test]
fn binding_and_param_vars_must_correspond() {
    // f(a, b) { lv = add(a, b); return lv } vs the same returning a param.
    let sinfo = || Some(f32_tensor(vec![PrimExpr::int(4)]));
    let make = |return_param: bool| {
        let a = Var::new("a", sinfo());
        let b = Var::new("b", sinfo());
        let lv = Var::new("lv", sinfo());
        let value = Expr::call_op("relax.add", vec![a.to_expr(), b.to_expr()], Attrs::new());
        let result = if return_param {
            a.to_expr()
        } else {
            lv.to_expr()
        };
        Function::new(
            vec![a, b],
            Expr::seq(
                vec![BindingBlock::new(vec![Binding::var_binding(lv, value)])],
                result,
            ),
            f32_tensor(vec![PrimExpr::int(4)]),
        )
    };
    assert_structural_equal(&make(false), &make(false));
    let err = structural_equal_report(&make(false), &make(true)).unwrap_err();
    assert_eq!(
        err.message,
        "at result: lhs is Var lv, rhs is Var a (lhs Var lv corresponds to rhs Var lv)"
    );
    assert_ne!(structural_hash(&make(false)), structural_hash(&make(true)));
}

#[test]
fn nested_functions_define_their_own_params() {
    // main(x) { f = fn(z: (k,)) { return z }; r = f(x); return r }
    let make = || {
        let k = TirVar::new("k");
        let z = Var::new("z", Some(f32_tensor(vec![PrimExpr::var(&k)])));
        let inner = Function::new(
            vec![z.clone()],
            Expr::seq(vec![], z.to_expr()),
            f32_tensor(vec![PrimExpr::var(&k)]),
        );
        let x = Var::new("x", Some(f32_tensor(vec![PrimExpr::int(3)])));
        let f = Var::new("f", Some(inner.struct_info()));
        let r = Var::new("r", Some(f32_tensor(vec![PrimExpr::int(3)])));
        let block = BindingBlock::new(vec![
            Binding::var_binding(f.clone(), Expr::function(inner)),
            Binding::var_binding(r.clone(), Expr::call(f.to_expr(), vec![x.to_expr()])),
        ]);
        Function::new(
            vec![x],
            Expr::seq(vec![block], r.to_expr()),
            f32_tensor(vec![PrimExpr::int(3)]),
        )
    };
    let (a, b) = (make(), make());
    assert_structural_equal(&a, &b);
    assert_eq!(structural_hash(&a), structural_hash(&b));
}

#[test]
fn derived_struct_info_of_non_vars_is_ignored_and_attrs_are_maps() {
    let c = Expr::call_op(
        "relax.foo",
        vec![],
        Attrs::from_pairs([("a", 1i64), ("b", 2)]),
    );
    let annotated = c.with_struct_info(StructInfo::object());
    assert!(structural_equal(&c, &annotated));
    assert_eq!(structural_hash(&c), structural_hash(&annotated));

    let reordered = Expr::call_op(
        "relax.foo",
        vec![],
        Attrs::from_pairs([("b", 2i64), ("a", 1)]),
    );
    assert!(structural_equal(&c, &reordered));
    assert_eq!(structural_hash(&c), structural_hash(&reordered));

    let missing = Expr::call_op("relax.foo", vec![], Attrs::from_pairs([("a", 1i64)]));
    assert_eq!(
        structural_equal_report(&c, &missing).unwrap_err().message,
        "at call attrs[\"b\"]: lhs is 2, rhs is absent"
    );
    let float = Expr::call_op(
        "relax.foo",
        vec![],
        Attrs::from_pairs([("a", AttrValue::Float(1.0)), ("b", AttrValue::Int(2))]),
    );
    assert!(!structural_equal(&c, &float));
}

#[test]
fn prim_funcs_and_module_shape() {
    let (a, b) = (prim_func("a_", 4), prim_func("b_", 4));
    assert_structural_equal(&a, &b);
    assert_eq!(structural_hash(&a), structural_hash(&b));
    let err = structural_equal_report(&a, &prim_func("b_", 5)).unwrap_err();
    assert_eq!(err.message, "at param 1 / dim 1: lhs is 4, rhs is 5");

    // A Relax function and a PrimFunc of the same name.
    let relax_main = build("a_", Change::None);
    let prim_main = IRModule::from_functions([(GlobalVar::new("main"), a.clone().into())]);
    assert_eq!(
        structural_equal_report(&relax_main, &prim_main)
            .unwrap_err()
            .message,
        "at function main: lhs is a Relax function, rhs is a PrimFunc"
    );
    assert!(structural_equal(&IRModule::new(), &IRModule::new()));
}

#[test]
fn other_entry_points() {
    let x = Var::new("x", Some(f32_tensor(vec![PrimExpr::int(2)])));
    let y = Var::new("y", Some(f32_tensor(vec![PrimExpr::int(2)])));
    // Vars compare as definitions.
    assert!(structural_equal(&x, &y));
    assert!(!structural_equal(
        &x,
        &Var::new_dataflow("x", x.struct_info().cloned())
    ));
    // Slices share one mapping: [x, x] vs [y, x] breaks it.
    assert!(structural_equal(
        &vec![x.clone(), x.clone()],
        &vec![y.clone(), y.clone()]
    ));
    let exprs = |a: &Var, b: &Var| vec![a.to_expr(), b.to_expr()];
    assert!(!structural_equal(&exprs(&x, &y), &exprs(&y, &x)));
    assert_eq!(
        structural_equal_report(&exprs(&x, &x), &exprs(&x, &y))
            .unwrap_err()
            .path,
        "element 1"
    );
    // StructInfo on its own: `R.Callable` parameters define their vars.
    let (n, m) = (TirVar::new("n"), TirVar::new("m"));
    let callable = |t: &TirVar| {
        StructInfo::func(
            vec![f32_tensor(vec![PrimExpr::var(t)])],
            f32_tensor(vec![PrimExpr::var(t) * 2]),
            true,
        )
    };
    assert!(structural_equal(&callable(&n), &callable(&m)));
    assert_eq!(
        structural_hash(&callable(&n)),
        structural_hash(&callable(&m))
    );
    assert!(!structural_equal(
        &StructInfo::tensor_ndim(2, DataType::f32()),
        &StructInfo::object()
    ));
}

#[test]
fn equality_is_exactly_the_unchanged_pairs_and_implies_equal_hashes() {
    let all: Vec<Change> = std::iter::once(Change::None).chain(CHANGES).collect();
    for &i in &all {
        for &j in &all {
            let (a, b) = (build("a_", i), build("b_", j));
            let equal = structural_equal(&a, &b);
            assert_eq!(equal, i == j, "{i:?} vs {j:?}");
            assert_eq!(equal, structural_equal(&b, &a), "symmetry {i:?} vs {j:?}");
            if equal {
                assert_eq!(structural_hash(&a), structural_hash(&b));
            }
        }
    }
}
