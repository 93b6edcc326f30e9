//! Checker and converter together: each case is checked, converted, and the
//! result checked again.

use super::*;
use crate::analysis::basic_block_normal_form::{
    check_basic_block_normal_form, is_basic_block_normal_form, NOT_BASIC_BLOCK_NORMAL_FORM,
};
use crate::ir::{Attrs, DataType, GlobalVar, PrimExpr, Tensor};

fn t4() -> StructInfo {
    StructInfo::tensor(vec![PrimExpr::int(4)], DataType::f32())
}
fn tensor_var(name: &str) -> Var {
    Var::new(name, Some(t4()))
}
fn flag_var() -> Var {
    Var::new("flag", Some(StructInfo::prim(DataType::bool())))
}
fn call(op: &str, args: Vec<Expr>) -> Expr {
    Expr::call_op(&format!("relax.{op}"), args, Attrs::new())
}
fn v(var: &Var) -> Expr {
    Expr::var(var)
}
fn bind(var: &Var, value: Expr) -> Binding {
    Binding::var_binding(var.clone(), value)
}
fn main_fn(params: Vec<Var>, body: Expr) -> Function {
    Function::new(params, body, t4()).with_global_symbol("main")
}
fn scalar(value: f32) -> Expr {
    Expr::constant(Tensor::scalar(value))
}

/// The body of a function, a branch or a nested function as a `SeqExpr`.
fn seq_of(expr: &Expr) -> &SeqExpr {
    expr.as_seq().expect("a SeqExpr")
}
fn if_of(expr: &Expr) -> &If {
    match expr.kind() {
        ExprKind::If(i) => i,
        other => panic!("expected an If, found {other:?}"),
    }
}
/// The var an argument refers to.
fn arg_var(call: &Expr, index: usize) -> Var {
    call.as_call().expect("a call").args[index]
        .as_var()
        .expect("a var argument")
        .clone()
}

fn errors(func: &Function) -> Vec<relax_runtime::Diagnostic> {
    match check_basic_block_normal_form(func) {
        Ok(()) => vec![],
        Err(ds) => ds,
    }
}

/// Converts `func`, asserts the result is in the form and that converting
/// again changes nothing.
fn convert(func: &Function) -> Function {
    let out = to_basic_block_normal_form(func);
    assert_eq!(check_basic_block_normal_form(&out), Ok(()), "{out:#?}");
    let again = to_basic_block_normal_form(&out);
    assert!(again.body.ptr_eq(&out.body), "conversion is not idempotent");
    assert_eq!(again, out);
    out
}

/// The RFC's failing case: `%0 = add(x, y)` is a graph node used by the
/// condition (outer block) and by both branches.
fn rfc_failing_case(bind_if: bool) -> (Function, Expr, Var, Var) {
    let (x, y) = (tensor_var("x"), tensor_var("y"));
    let add0 = call("add", vec![v(&x), v(&y)]);
    let cond = call("less", vec![add0.clone(), scalar(0.0)]);
    let t = Expr::seq(vec![], call("multiply", vec![add0.clone(), v(&x)]));
    let f = Expr::seq(vec![], call("multiply", vec![add0.clone(), v(&y)]));
    let if_ = Expr::if_(cond, t, f);
    let body = if bind_if {
        let r = tensor_var("r");
        Expr::seq(vec![BindingBlock::new(vec![bind(&r, if_)])], v(&r))
    } else {
        Expr::seq(vec![], if_)
    };
    (main_fn(vec![x.clone(), y.clone()], body), add0, x, y)
}

#[test]
fn rfc_failing_case_is_rejected() {
    let (func, _, _, _) = rfc_failing_case(true);
    let ds = errors(&func);
    assert_eq!(ds.len(), 1, "{ds:#?}");
    assert_eq!(ds[0].code, NOT_BASIC_BLOCK_NORMAL_FORM);
    assert_eq!(
        ds[0].message,
        "in `main`, the call to relax.add is used in 3 blocks: block 0 of the body of `main`; \
         the true branch of the If bound to `r` in block 0 of the body of `main`; \
         the false branch of the If bound to `r` in block 0 of the body of `main`"
    );
    assert!(!ds[0].notes.is_empty());
}

#[test]
fn rfc_failing_case_is_converted_binding_the_add_before_the_if() {
    let (func, add0, x, y) = rfc_failing_case(true);
    let out = convert(&func);
    let body = seq_of(&out.body);
    assert_eq!(body.blocks.len(), 1);
    let bindings = &body.blocks[0].bindings;
    assert_eq!(bindings.len(), 2);
    // The add is bound first, unchanged (its operands are vars already).
    let bb = bindings[0].var().clone();
    assert!(!bb.is_dataflow());
    assert_eq!(bb.name_hint(), "add");
    assert!(bindings[0].value().ptr_eq(&add0));
    // The graph-form node carries no StructInfo; it is derived for the var
    // (relax.add of two (4,) float32 tensors).
    assert_eq!(
        bb.struct_info().map(|s| s.to_string()).as_deref(),
        Some("R.Tensor((4,), dtype=\"float32\")")
    );
    // Then the If, whose condition and branches all use the var.
    assert_eq!(bindings[1].var().name_hint(), "r");
    let if_ = if_of(bindings[1].value());
    assert_eq!(arg_var(&if_.cond, 0), bb);
    let t = &seq_of(&if_.true_branch).body;
    let f = &seq_of(&if_.false_branch).body;
    assert_eq!((arg_var(t, 0), arg_var(t, 1)), (bb.clone(), x));
    assert_eq!((arg_var(f, 0), arg_var(f, 1)), (bb, y));
}

#[test]
fn a_seq_expr_without_blocks_gets_a_block_for_the_new_binding() {
    let (func, add0, _, _) = rfc_failing_case(false);
    assert_eq!(errors(&func).len(), 1);
    let out = convert(&func);
    let body = seq_of(&out.body);
    assert_eq!(body.blocks.len(), 1);
    assert!(!body.blocks[0].is_dataflow);
    let bindings = &body.blocks[0].bindings;
    assert_eq!(bindings.len(), 1);
    assert!(bindings[0].value().ptr_eq(&add0));
    let if_ = if_of(&body.body);
    assert_eq!(&arg_var(&if_.cond, 0), bindings[0].var());
}

#[test]
fn rfc_bblock_nf_example_is_accepted_and_unchanged() {
    // let %v1 = add(%x, 1); if (equal(%x, 2)) { %3 = mul(%v1, 2); add(%3, %3) } else { %v1 }
    let x = tensor_var("x");
    let (v1, r) = (tensor_var("v1"), tensor_var("r"));
    let two = scalar(2.0);
    let cond = call("equal", vec![v(&x), two.clone()]);
    let m = call("multiply", vec![v(&v1), two]);
    let t = Expr::seq(vec![], call("add", vec![m.clone(), m]));
    let f = Expr::seq(vec![], v(&v1));
    let body = Expr::seq(
        vec![BindingBlock::new(vec![
            bind(&v1, call("add", vec![v(&x), scalar(1.0)])),
            bind(&r, Expr::if_(cond, t, f)),
        ])],
        v(&r),
    );
    let func = main_fn(vec![x], body);
    assert_eq!(check_basic_block_normal_form(&func), Ok(()));
    let out = to_basic_block_normal_form(&func);
    assert!(out.body.ptr_eq(&func.body));
}

#[test]
fn sharing_inside_one_block_is_accepted() {
    let x = tensor_var("x");
    let (a, b) = (tensor_var("a"), tensor_var("b"));
    let m = call("multiply", vec![v(&x), v(&x)]);
    let body = Expr::seq(
        vec![BindingBlock::new(vec![
            bind(&a, call("add", vec![m.clone(), m.clone()])),
            bind(&b, call("subtract", vec![m, v(&a)])),
        ])],
        v(&b),
    );
    let func = main_fn(vec![x], body);
    assert_eq!(check_basic_block_normal_form(&func), Ok(()));
    assert!(to_basic_block_normal_form(&func).body.ptr_eq(&func.body));
}

#[test]
fn literals_shared_across_branches_are_accepted() {
    let (x, flag) = (tensor_var("x"), flag_var());
    let c = scalar(3.0);
    let shape = Expr::shape(vec![PrimExpr::int(2), PrimExpr::int(2)]);
    let prim = Expr::prim_value(PrimExpr::int(1));
    let dtype = Expr::dtype(DataType::f32());
    let branch = |op: &str| {
        let added = call(op, vec![v(&x), c.clone(), prim.clone(), dtype.clone()]);
        Expr::seq(vec![], call("reshape", vec![added, shape.clone()]))
    };
    let r = tensor_var("r");
    let if_ = Expr::if_(v(&flag), branch("add"), branch("subtract"));
    let body = Expr::seq(
        vec![BindingBlock::new(vec![
            bind(&r, if_),
            bind(&tensor_var("s"), call("add", vec![v(&r), c])),
        ])],
        v(&r),
    );
    let func = main_fn(vec![x, flag], body);
    assert_eq!(check_basic_block_normal_form(&func), Ok(()));
    assert!(to_basic_block_normal_form(&func).body.ptr_eq(&func.body));
}

#[test]
fn a_node_shared_by_sibling_branches_is_bound_in_the_enclosing_block() {
    // The inner If sits in the true branch of the outer one; `s` is used by
    // both inner branches only, so it belongs in the outer true branch.
    let (x, y, flag) = (tensor_var("x"), tensor_var("y"), flag_var());
    let s = call("add", vec![v(&x), v(&y)]);
    let inner = Expr::if_(
        v(&flag),
        Expr::seq(vec![], call("multiply", vec![s.clone(), v(&x)])),
        Expr::seq(vec![], call("multiply", vec![s.clone(), v(&y)])),
    );
    let r2 = tensor_var("r2");
    let outer_true = Expr::seq(vec![BindingBlock::new(vec![bind(&r2, inner)])], v(&r2));
    let r = tensor_var("r");
    let outer = Expr::if_(v(&flag), outer_true, Expr::seq(vec![], v(&x)));
    let body = Expr::seq(vec![BindingBlock::new(vec![bind(&r, outer)])], v(&r));
    let func = main_fn(vec![x, y, flag], body);

    let ds = errors(&func);
    assert_eq!(ds.len(), 1, "{ds:#?}");
    assert!(
        ds[0].message.contains(
            "the false branch of the If bound to `r2` in block 0 of the true branch of \
             the If bound to `r` in block 0 of the body of `main`"
        ),
        "{}",
        ds[0].message
    );

    let out = convert(&func);
    let outer_block = &seq_of(&out.body).blocks[0].bindings;
    assert_eq!(
        outer_block.len(),
        1,
        "nothing is hoisted to the outer block"
    );
    let true_seq = seq_of(&if_of(outer_block[0].value()).true_branch);
    let inner_bindings = &true_seq.blocks[0].bindings;
    assert_eq!(inner_bindings.len(), 2);
    assert!(inner_bindings[0].value().ptr_eq(&s));
    let bb = inner_bindings[0].var();
    assert_eq!(inner_bindings[1].var(), &r2);
    let inner_if = if_of(inner_bindings[1].value());
    assert_eq!(&arg_var(&seq_of(&inner_if.true_branch).body, 0), bb);
    assert_eq!(&arg_var(&seq_of(&inner_if.false_branch).body, 0), bb);
}

/// `s = add(x, y)` used by a binding of the outer block and inside a nested
/// function bound before it.
fn nested_function_case() -> (Function, Expr, Var, Var) {
    let (x, y, z) = (tensor_var("x"), tensor_var("y"), tensor_var("z"));
    let s = call("add", vec![v(&x), v(&y)]);
    let inner = Function::new(
        vec![z.clone()],
        Expr::seq(vec![], call("multiply", vec![s.clone(), v(&z)])),
        t4(),
    );
    let f = Var::new("f", Some(inner.struct_info()));
    let a = tensor_var("a");
    let body = Expr::seq(
        vec![BindingBlock::new(vec![
            bind(&f, Expr::function(inner)),
            bind(&a, call("multiply", vec![s.clone(), v(&x)])),
        ])],
        v(&a),
    );
    (main_fn(vec![x, y], body), s, f, a)
}

#[test]
fn a_nested_function_is_a_block_of_its_own() {
    let (func, s, f, a) = nested_function_case();
    let ds = errors(&func);
    assert_eq!(ds.len(), 1, "{ds:#?}");
    assert!(ds[0]
        .message
        .contains("the body of the function bound to `f` in block 0 of the body of `main`"));

    let out = convert(&func);
    let bindings = &seq_of(&out.body).blocks[0].bindings;
    assert_eq!(bindings.len(), 3);
    // Bound before its first use, the binding of the closure.
    assert!(bindings[0].value().ptr_eq(&s));
    let bb = bindings[0].var().clone();
    assert_eq!(bindings[1].var(), &f);
    let inner = bindings[1].value().as_function().expect("a function");
    assert_eq!(arg_var(&seq_of(&inner.body).body, 0), bb);
    assert_eq!(bindings[2].var(), &a);
    assert_eq!(arg_var(bindings[2].value(), 0), bb);
}

#[test]
fn sharing_inside_a_nested_function_is_accepted() {
    let (x, z) = (tensor_var("x"), tensor_var("z"));
    let m = call("multiply", vec![v(&z), v(&x)]);
    let (p, q) = (tensor_var("p"), tensor_var("q"));
    let inner = Function::new(
        vec![z.clone()],
        Expr::seq(
            vec![BindingBlock::new(vec![
                bind(&p, call("add", vec![m.clone(), m.clone()])),
                bind(&q, call("subtract", vec![v(&p), m])),
            ])],
            v(&q),
        ),
        t4(),
    );
    let f = Var::new("f", Some(inner.struct_info()));
    let body = Expr::seq(
        vec![BindingBlock::new(vec![bind(&f, Expr::function(inner))])],
        v(&f),
    );
    let func = main_fn(vec![x], body);
    assert_eq!(check_basic_block_normal_form(&func), Ok(()));
    assert!(to_basic_block_normal_form(&func).body.ptr_eq(&func.body));
}

#[test]
fn sharing_between_a_dataflow_block_and_a_later_block_binds_an_ordinary_var() {
    let (x, y) = (tensor_var("x"), tensor_var("y"));
    let s = call("add", vec![v(&x), v(&y)]);
    let lv0 = Var::new_dataflow("lv0", Some(t4()));
    let gv = tensor_var("gv");
    let o = tensor_var("o");
    let body = Expr::seq(
        vec![
            BindingBlock::dataflow(vec![
                bind(&lv0, call("multiply", vec![s.clone(), v(&x)])),
                bind(&gv, call("add", vec![v(&lv0), v(&y)])),
            ]),
            BindingBlock::new(vec![bind(&o, call("subtract", vec![s.clone(), v(&gv)]))]),
        ],
        v(&o),
    );
    let func = main_fn(vec![x, y], body);
    let ds = errors(&func);
    assert_eq!(ds.len(), 1, "{ds:#?}");
    assert!(ds[0].message.contains(
        "used in 2 blocks: dataflow block 0 of the body of `main`; block 1 of the body of `main`"
    ));

    let out = convert(&func);
    let blocks = &seq_of(&out.body).blocks;
    assert_eq!(blocks.len(), 2);
    assert!(blocks[0].is_dataflow && !blocks[1].is_dataflow);
    // Bound in the earlier block, as a Var: the later block must see it.
    assert_eq!(blocks[0].bindings.len(), 3);
    assert!(blocks[0].bindings[0].value().ptr_eq(&s));
    let bb = blocks[0].bindings[0].var().clone();
    assert!(!bb.is_dataflow());
    assert_eq!(blocks[0].bindings[1].var(), &lv0);
    assert_eq!(arg_var(blocks[0].bindings[1].value(), 0), bb);
    assert_eq!(blocks[1].bindings.len(), 1);
    assert_eq!(arg_var(blocks[1].bindings[0].value(), 0), bb);
}

#[test]
fn a_shared_node_is_bound_after_its_shared_operands() {
    // s1 is used by s2 and by the true branch; s2 by both branches.
    let (x, y, flag) = (tensor_var("x"), tensor_var("y"), flag_var());
    let s1 = call("add", vec![v(&x), v(&y)]);
    let s2 = call("multiply", vec![s1.clone(), s1.clone()]);
    let t = Expr::seq(vec![], call("subtract", vec![s2.clone(), s1.clone()]));
    let f = Expr::seq(vec![], s2.clone());
    let r = tensor_var("r");
    let body = Expr::seq(
        vec![BindingBlock::new(vec![bind(&r, Expr::if_(v(&flag), t, f))])],
        v(&r),
    );
    let func = main_fn(vec![x, y, flag], body);
    assert_eq!(errors(&func).len(), 2);

    let out = convert(&func);
    let bindings = &seq_of(&out.body).blocks[0].bindings;
    assert_eq!(bindings.len(), 3);
    assert!(bindings[0].value().ptr_eq(&s1));
    let (b1, b2) = (bindings[0].var().clone(), bindings[1].var().clone());
    assert_eq!(b2.name_hint(), "multiply");
    assert_eq!(
        (
            arg_var(bindings[1].value(), 0),
            arg_var(bindings[1].value(), 1)
        ),
        (b1.clone(), b1.clone())
    );
    let if_ = if_of(bindings[2].value());
    let t = &seq_of(&if_.true_branch).body;
    assert_eq!((arg_var(t, 0), arg_var(t, 1)), (b2.clone(), b1));
    // A branch that was the shared node itself is now the var.
    assert_eq!(seq_of(&if_.false_branch).body.as_var(), Some(&b2));
}

#[test]
fn a_shared_subgraph_is_reported_once_at_its_root() {
    let (x, y, flag) = (tensor_var("x"), tensor_var("y"), flag_var());
    let s = call("multiply", vec![call("add", vec![v(&x), v(&y)]), v(&y)]);
    let if_ = Expr::if_(
        v(&flag),
        Expr::seq(vec![], s.clone()),
        Expr::seq(vec![], call("negative", vec![s])),
    );
    let func = main_fn(vec![x, y, flag], Expr::seq(vec![], if_));
    let ds = errors(&func);
    assert_eq!(ds.len(), 1, "{ds:#?}");
    assert!(ds[0].message.contains("the call to relax.multiply"));
    let out = convert(&func);
    assert_eq!(seq_of(&out.body).blocks[0].bindings.len(), 1);
}

#[test]
fn graph_form_branches_that_are_not_seq_exprs() {
    // if (less(%0, 0)) { multiply(%0, x) } else { multiply(%0, y) }, the
    // branches being bare calls.
    let (x, y) = (tensor_var("x"), tensor_var("y"));
    let add0 = call("add", vec![v(&x), v(&y)]);
    let if_ = Expr::if_(
        call("less", vec![add0.clone(), scalar(0.0)]),
        call("multiply", vec![add0.clone(), v(&x)]),
        call("multiply", vec![add0.clone(), v(&y)]),
    );
    let r = tensor_var("r");
    let body = Expr::seq(vec![BindingBlock::new(vec![bind(&r, if_)])], v(&r));
    let func = main_fn(vec![x, y], body);
    assert_eq!(errors(&func).len(), 1);
    let out = convert(&func);
    let bindings = &seq_of(&out.body).blocks[0].bindings;
    assert_eq!(bindings.len(), 2);
    let bb = bindings[0].var().clone();
    let if_ = if_of(bindings[1].value());
    assert_eq!(arg_var(&if_.true_branch, 0), bb);
    assert_eq!(arg_var(&if_.false_branch, 0), bb);
}

#[test]
fn a_branch_that_is_not_a_seq_expr_gets_a_block_when_a_binding_belongs_there() {
    // The outer true branch is a bare inner If whose branches share `s`.
    let (x, y, flag) = (tensor_var("x"), tensor_var("y"), flag_var());
    let s = call("add", vec![v(&x), v(&y)]);
    let inner = Expr::if_(
        v(&flag),
        call("multiply", vec![s.clone(), v(&x)]),
        call("multiply", vec![s.clone(), v(&y)]),
    );
    let outer = Expr::if_(v(&flag), inner, v(&x));
    let func = main_fn(vec![x, y, flag], Expr::seq(vec![], outer));
    assert_eq!(errors(&func).len(), 1);
    let out = convert(&func);
    let body = seq_of(&out.body);
    assert!(
        body.blocks.is_empty(),
        "nothing is hoisted out of the branch"
    );
    let branch = seq_of(&if_of(&body.body).true_branch);
    assert_eq!(branch.blocks.len(), 1);
    assert!(branch.blocks[0].bindings[0].value().ptr_eq(&s));
    let bb = branch.blocks[0].bindings[0].var().clone();
    let inner = if_of(&branch.body);
    assert_eq!(arg_var(&inner.true_branch, 0), bb);
    assert_eq!(arg_var(&inner.false_branch, 0), bb);
}

#[test]
fn shared_tuples_are_bound_too() {
    let (x, y, flag) = (tensor_var("x"), tensor_var("y"), flag_var());
    let tuple = Expr::tuple(vec![v(&x), v(&y)]);
    let if_ = Expr::if_(
        v(&flag),
        Expr::seq(vec![], Expr::tuple_get_item(tuple.clone(), 0)),
        Expr::seq(vec![], Expr::tuple_get_item(tuple.clone(), 1)),
    );
    let func = main_fn(vec![x, y, flag], Expr::seq(vec![], if_));
    let ds = errors(&func);
    assert_eq!(ds.len(), 1);
    assert!(ds[0].message.contains("the tuple of 2 fields"));
    let out = convert(&func);
    let binding = &seq_of(&out.body).blocks[0].bindings[0];
    assert_eq!(binding.var().name_hint(), "bb");
    // A tuple of annotated vars knows its StructInfo, and the var takes it.
    assert_eq!(
        binding.var().struct_info(),
        Some(&StructInfo::tuple(vec![t4(), t4()]))
    );
}

#[test]
fn a_well_formed_anf_function_is_unchanged() {
    let (x, w, flag) = (tensor_var("x"), tensor_var("w"), flag_var());
    let lv0 = Var::new_dataflow("lv0", Some(t4()));
    let gv = tensor_var("gv");
    let t = tensor_var("t");
    let r = tensor_var("r");
    let then = Expr::seq(
        vec![BindingBlock::new(vec![bind(
            &t,
            call("multiply", vec![v(&gv), v(&gv)]),
        )])],
        v(&t),
    );
    let body = Expr::seq(
        vec![
            BindingBlock::dataflow(vec![
                bind(&lv0, call("matmul", vec![v(&x), v(&w)])),
                bind(&gv, call("add", vec![v(&lv0), v(&x)])),
            ]),
            BindingBlock::new(vec![bind(
                &r,
                Expr::if_(v(&flag), then, Expr::seq(vec![], v(&gv))),
            )]),
        ],
        v(&r),
    );
    let func = main_fn(vec![x, w, flag], body);
    assert_eq!(check_basic_block_normal_form(&func), Ok(()));
    let out = to_basic_block_normal_form(&func);
    assert!(out.body.ptr_eq(&func.body));
    assert_eq!(out, func);
}

#[test]
fn the_pass_converts_every_relax_function_of_a_module() {
    let (bad, _, _, _) = rfc_failing_case(true);
    let (good, _, _, _) = {
        let x = tensor_var("x");
        let body = Expr::seq(vec![], call("negative", vec![v(&x)]));
        (main_fn(vec![x], body), (), (), ())
    };
    let module = IRModule::from_functions([
        (GlobalVar::new("main"), BaseFunc::Relax(bad)),
        (GlobalVar::new("other"), BaseFunc::Relax(good.clone())),
    ]);
    let ds = is_basic_block_normal_form(&module).unwrap_err();
    assert_eq!(ds.len(), 1);
    assert!(ds[0].message.starts_with("in `main`,"));

    let pass = ToBasicBlockNormalForm;
    assert_eq!(pass.name(), "ToBasicBlockNormalForm");
    let out = pass.run(module).expect("the pass does not fail");
    assert_eq!(is_basic_block_normal_form(&out), Ok(()));
    assert_eq!(out.len(), 2);
    let other = out.get_relax("other").expect("other is kept");
    assert!(other.body.ptr_eq(&good.body));
}
