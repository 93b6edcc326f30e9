//! One pair of tests per rule (a valid program is accepted, a program that
//! breaks only that rule is rejected with the rule's code), plus programs with
//! several violations and malformed IR that must not panic.

use super::{well_formed, well_formed_function, well_formed_with_options, WellFormedOptions};
use crate::ir::{
    Attrs, Binding, BindingBlock, DataType, DeriveFunc, Expr, FuncStructInfo, Function, GlobalVar,
    IRModule, PrimExpr, PrimFunc, PrimStructInfo, ShapeStructInfo, StructInfo, StructInfoKind,
    TensorStructInfo, TirVar, Var,
};
use crate::tir::PrimFuncParam;
use relax_runtime::Diagnostic;

/// Terse constructors for normalized IR (every expression carries StructInfo).
mod build {
    use super::*;

    /// `R.Tensor(dims, "float32")`
    pub fn tensor(dims: Vec<PrimExpr>) -> StructInfo {
        StructInfo::tensor(dims, DataType::f32())
    }
    /// `R.Tensor((n, 4), "float32")`
    pub fn t_n4(n: &TirVar) -> StructInfo {
        tensor(vec![PrimExpr::var(n), PrimExpr::int(4)])
    }
    /// A `Var`.
    pub fn var(name: &str, sinfo: &StructInfo) -> Var {
        Var::new(name, Some(sinfo.clone()))
    }
    /// A `DataflowVar`.
    pub fn dvar(name: &str, sinfo: &StructInfo) -> Var {
        Var::new_dataflow(name, Some(sinfo.clone()))
    }
    /// A variable reference.
    pub fn r(v: &Var) -> Expr {
        Expr::var(v)
    }
    /// A call of op `name` whose result has StructInfo `sinfo`.
    pub fn op(name: &str, args: Vec<Expr>, sinfo: &StructInfo) -> Expr {
        Expr::call_op(name, args, Attrs::new()).with_struct_info(sinfo.clone())
    }
    /// A call of any callee whose result has StructInfo `sinfo`.
    pub fn call(callee: Expr, args: Vec<Expr>, sinfo: &StructInfo) -> Expr {
        Expr::call(callee, args).with_struct_info(sinfo.clone())
    }
    /// A call of the packed function `name` (impure).
    pub fn packed(name: &str, args: Vec<Expr>, sinfo: &StructInfo) -> Expr {
        call(Expr::extern_func(name), args, sinfo)
    }
    /// `v = value`
    pub fn bind(v: &Var, value: Expr) -> Binding {
        Binding::var_binding(v.clone(), value)
    }
    /// A dataflow block.
    pub fn df(bindings: Vec<Binding>) -> BindingBlock {
        BindingBlock::dataflow(bindings)
    }
    /// An ordinary binding block.
    pub fn bb(bindings: Vec<Binding>) -> BindingBlock {
        BindingBlock::new(bindings)
    }
    /// A `SeqExpr` with its body's StructInfo.
    pub fn seq(blocks: Vec<BindingBlock>, body: Expr) -> Expr {
        let sinfo = body
            .struct_info()
            .cloned()
            .unwrap_or_else(StructInfo::object);
        Expr::seq(blocks, body).with_struct_info(sinfo)
    }
    /// A pure function returning its body's StructInfo.
    pub fn func(params: Vec<Var>, body: Expr) -> Function {
        let ret = body
            .struct_info()
            .cloned()
            .unwrap_or_else(StructInfo::object);
        Function::new(params, body, ret)
    }
    /// A module of public functions.
    pub fn module(funcs: Vec<(&str, Function)>) -> IRModule {
        let mut m = IRModule::new();
        for (name, f) in funcs {
            m.add(GlobalVar::new(name), f.with_global_symbol(name));
        }
        m
    }
    /// A reference to the global function `name` of StructInfo `sinfo`.
    pub fn gref(name: &str, sinfo: StructInfo) -> Expr {
        Expr::global_var(GlobalVar::new(name)).with_struct_info(sinfo)
    }
    /// `prim(A: (n, 4) f32, B: (n, 4) f32)`: a PrimFunc for `call_tir`.
    pub fn prim_func(n: &TirVar) -> PrimFunc {
        let buffer = |name: &str| {
            PrimFuncParam::Buffer(crate::tir::Buffer::new(
                name.to_string(),
                vec![PrimExpr::var(n), PrimExpr::int(4)],
                DataType::f32(),
            ))
        };
        PrimFunc {
            params: vec![buffer("A"), buffer("B")],
            body: crate::tir::Stmt::no_op(),
            attrs: Attrs::new(),
        }
    }

    /// The seed-like valid program:
    /// `main(x: (n, 4)) { dataflow { lv = relu(x); gv = add(lv, x) } gv }`.
    pub fn relu_add() -> Function {
        let n = TirVar::new("n");
        let t = t_n4(&n);
        let x = var("x", &t);
        let lv = dvar("lv", &t);
        let gv = var("gv", &t);
        let body = seq(
            vec![df(vec![
                bind(&lv, op("relax.nn.relu", vec![r(&x)], &t)),
                bind(&gv, op("relax.add", vec![r(&lv), r(&x)], &t)),
            ])],
            r(&gv),
        );
        func(vec![x], body)
    }

    /// A one-function module `main` whose body is `blocks` then `result`.
    pub fn main_with(params: Vec<Var>, blocks: Vec<BindingBlock>, result: &Var) -> IRModule {
        module(vec![("main", func(params, seq(blocks, r(result))))])
    }

    /// The diagnostics' codes.
    pub fn codes(m: &IRModule) -> Vec<&'static str> {
        match well_formed(m) {
            Ok(()) => vec![],
            Err(ds) => ds.iter().map(|d| d.code).collect(),
        }
    }

    /// Asserts `m` is well formed.
    pub fn assert_ok(m: &IRModule) {
        if let Err(ds) = well_formed(m) {
            panic!("expected no diagnostics, got {ds:#?}");
        }
    }

    /// Asserts `m` breaks the rule `code`, and that the message names one of
    /// the module's functions; returns that diagnostic.
    pub fn assert_fails(m: &IRModule, code: &str) -> Diagnostic {
        let ds = well_formed(m).expect_err("expected a violation");
        let d = ds
            .iter()
            .find(|d| d.code == code)
            .unwrap_or_else(|| panic!("no `{code}` among {ds:#?}"))
            .clone();
        assert!(
            m.functions()
                .any(|(gv, _)| d.message.contains(&format!("`{}`", gv.name_hint()))),
            "message does not name a function: {}",
            d.message
        );
        assert!(
            d.message.chars().next().is_some_and(|c| !c.is_uppercase())
                && !d.message.ends_with('.'),
            "not a lower-case sentence without a trailing dot: {}",
            d.message
        );
        d
    }
}

use build::*;

/// Declares a rule's pair of tests: `$ok` is accepted, `$bad` is rejected
/// with `$code` and a message mentioning each of `$names`.
macro_rules! rule {
    ($name:ident, $code:literal, ok: $ok:expr, bad: $bad:expr $(, names: [$($n:literal),*])?) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            #[test]
            fn accepts_valid_program() {
                assert_ok(&$ok);
            }
            #[test]
            fn rejects_violation() {
                let _d = assert_fails(&$bad, $code);
                $($(assert!(_d.message.contains($n), "{} lacks {}", _d.message, $n);)*)?
            }
        }
    };
}

fn valid() -> IRModule {
    module(vec![("main", relu_add())])
}

// ---------------------------------------------------------------- module

fn calls_global(callee_defined: bool) -> IRModule {
    let n = TirVar::new("n");
    let t = t_n4(&n);
    let a = var("a", &t);
    let helper = func(vec![a.clone()], seq(vec![], r(&a)));
    let x = var("x", &t);
    let y = var("y", &t);
    let callee = if callee_defined { "helper" } else { "missing" };
    let main = func(
        vec![x.clone()],
        seq(
            vec![df(vec![bind(
                &y,
                call(gref(callee, helper.struct_info()), vec![r(&x)], &t),
            )])],
            r(&y),
        ),
    );
    // `helper`'s symbolic var must not be shared with `main`: rebuild it.
    let m = TirVar::new("m");
    let tm = t_n4(&m);
    let b = var("b", &tm);
    module(vec![
        ("main", main),
        ("helper", func(vec![b.clone()], seq(vec![], r(&b)))),
    ])
}

rule!(undefined_global_var, "undefined-global-var",
    ok: calls_global(true), bad: calls_global(false), names: ["`missing`"]);

rule!(global_symbol_mismatch, "global-symbol-mismatch",
    ok: valid(),
    bad: {
        let mut m = IRModule::new();
        m.add(GlobalVar::new("main"), relu_add().with_global_symbol("entry"));
        m
    },
    names: ["`entry`"]);

rule!(param_shared_between_functions, "param-shared-between-functions",
    ok: module(vec![("a", relu_add()), ("b", relu_add())]),
    bad: {
        let s = StructInfo::object();
        let x = var("x", &s);
        let f = func(vec![x.clone()], seq(vec![], r(&x)));
        module(vec![("a", f.clone()), ("b", f)])
    },
    names: ["`x`", "`a`", "`b`"]);

fn two_functions_over(n1: &TirVar, n2: &TirVar) -> IRModule {
    let one = |n: &TirVar| {
        let x = var("x", &t_n4(n));
        func(vec![x.clone()], seq(vec![], r(&x)))
    };
    module(vec![("a", one(n1)), ("b", one(n2))])
}

rule!(symbolic_var_shared_between_functions, "symbolic-var-shared-between-functions",
    ok: two_functions_over(&TirVar::new("n"), &TirVar::new("n")),
    bad: { let n = TirVar::new("n"); two_functions_over(&n, &n) },
    names: ["`n`"]);

fn call_tir_to(callee_is_prim: bool, args_tuple: bool) -> IRModule {
    let n = TirVar::new("n");
    let t = t_n4(&n);
    let x = var("x", &t);
    let y = dvar("y", &t);
    let gv = var("gv", &t);
    let pf = prim_func(&TirVar::new("k"));
    let args = if args_tuple {
        Expr::tuple(vec![r(&x)])
    } else {
        r(&x)
    };
    let callee = if callee_is_prim {
        gref("kernel", pf.struct_info())
    } else {
        gref("other", StructInfo::func(vec![t.clone()], t.clone(), true))
    };
    let value = Expr::call_full(
        Expr::op("relax.call_tir"),
        vec![callee, args],
        Attrs::new(),
        vec![t.clone()],
    )
    .with_struct_info(t.clone());
    let main = func(
        vec![x.clone()],
        seq(vec![df(vec![bind(&y, value), bind(&gv, r(&y))])], r(&gv)),
    );
    let m = TirVar::new("m");
    let a = var("a", &t_n4(&m));
    let other = func(vec![a.clone()], seq(vec![], r(&a)));
    let mut module = module(vec![("main", main), ("other", other)]);
    module.add(GlobalVar::new("kernel"), pf);
    module
}

rule!(call_tir_callee_not_prim_func, "call-tir-callee-not-prim-func",
    ok: call_tir_to(true, true), bad: call_tir_to(false, true), names: ["`other`"]);

// ---------------------------------------------------------------- scoping

rule!(undefined_var, "undefined-var",
    ok: valid(),
    bad: {
        let t = StructInfo::object();
        let (x, ghost, y) = (var("x", &t), var("ghost", &t), var("y", &t));
        main_with(vec![x], vec![bb(vec![bind(&y, r(&ghost))])], &y)
    },
    names: ["`ghost`", "is not defined"]);

#[test]
fn use_before_definition_says_so() {
    let t = StructInfo::object();
    let (x, a, b) = (var("x", &t), var("a", &t), var("b", &t));
    let m = main_with(
        vec![x.clone()],
        vec![bb(vec![bind(&a, r(&b)), bind(&b, r(&x))])],
        &b,
    );
    let d = assert_fails(&m, "undefined-var");
    assert!(
        d.message.contains("`b` is used before it is defined"),
        "{}",
        d.message
    );
}

fn local_function(recursive_self_use_in_value: bool) -> IRModule {
    let t = StructInfo::object();
    let fs = StructInfo::func(vec![t.clone()], t.clone(), true);
    let x = var("x", &t);
    let f = var("f", &fs);
    let a = var("a", &t);
    let inner_r = var("inner_r", &t);
    // f = fn(a) { inner_r = f(a); inner_r }: recursion through its own name.
    let local = func(
        vec![a.clone()],
        seq(
            vec![bb(vec![bind(&inner_r, call(r(&f), vec![r(&a)], &t))])],
            r(&inner_r),
        ),
    );
    let y = var("y", &t);
    let mut bindings = vec![bind(&f, Expr::function(local))];
    if recursive_self_use_in_value {
        bindings.push(bind(&y, op("relax.add", vec![r(&y), r(&x)], &t)));
    } else {
        bindings.push(bind(&y, call(r(&f), vec![r(&x)], &t)));
    }
    main_with(vec![x], vec![bb(bindings)], &y)
}

rule!(var_used_in_own_binding, "var-used-in-own-binding",
    ok: local_function(false), bad: local_function(true), names: ["`y`"]);

rule!(var_redefined, "var-redefined",
    ok: valid(),
    bad: {
        let t = StructInfo::object();
        let (x, y) = (var("x", &t), var("y", &t));
        main_with(vec![x.clone()], vec![bb(vec![bind(&y, r(&x)), bind(&y, r(&x))])], &y)
    },
    names: ["`y`"]);

/// `r = if c { a = x; a } else { b = x; b }`, then the result is `r` or,
/// when `leak`, the branch-local `a`.
fn if_program(leak: bool) -> IRModule {
    let t = StructInfo::object();
    let c = var("c", &StructInfo::prim(DataType::bool()));
    let x = var("x", &t);
    let (a, b, res) = (var("a", &t), var("b", &t), var("r", &t));
    let branch = |v: &Var| seq(vec![bb(vec![bind(v, r(&x))])], r(v));
    let cond = Expr::if_(r(&c), branch(&a), branch(&b)).with_struct_info(t.clone());
    main_with(
        vec![c, x.clone()],
        vec![bb(vec![bind(&res, cond)])],
        if leak { &a } else { &res },
    )
}

rule!(var_out_of_scope, "var-out-of-scope",
    ok: if_program(false), bad: if_program(true), names: ["`a`"]);

rule!(dataflow_var_outside_dataflow_block, "dataflow-var-outside-dataflow-block",
    ok: valid(),
    bad: {
        let t = StructInfo::object();
        let (x, lv, y) = (var("x", &t), dvar("lv", &t), var("y", &t));
        main_with(vec![x.clone()], vec![bb(vec![bind(&lv, r(&x)), bind(&y, r(&x))])], &y)
    },
    names: ["`lv`"]);

rule!(dataflow_var_escapes, "dataflow-var-escapes",
    ok: valid(),
    bad: {
        let t = StructInfo::object();
        let (x, lv, y) = (var("x", &t), dvar("lv", &t), var("y", &t));
        main_with(
            vec![x.clone()],
            vec![df(vec![bind(&lv, r(&x))]), bb(vec![bind(&y, r(&lv))])],
            &y,
        )
    },
    names: ["`lv`"]);

rule!(dataflow_var_param, "dataflow-var-param",
    ok: valid(),
    bad: {
        let t = StructInfo::object();
        let x = dvar("x", &t);
        module(vec![("main", func(vec![x.clone()], seq(vec![], r(&x))))])
    },
    names: ["`x`"]);

/// A local function defined in a dataflow block that uses `x` (a parameter
/// of `main`) or, when `capture`, the dataflow var `lv`.
fn closure_in_dataflow(capture: bool) -> IRModule {
    let t = StructInfo::tensor(vec![PrimExpr::int(4)], DataType::f32());
    let x = var("x", &t);
    let lv = dvar("lv", &t);
    let a = var("a", &t);
    let inner = var("inner", &t);
    let used = if capture { &lv } else { &x };
    let local = func(
        vec![a.clone()],
        seq(
            vec![bb(vec![bind(
                &inner,
                op("relax.add", vec![r(&a), r(used)], &t),
            )])],
            r(&inner),
        ),
    );
    let f = var("f", &local.struct_info());
    main_with(
        vec![x.clone()],
        vec![df(vec![bind(&lv, r(&x)), bind(&f, Expr::function(local))])],
        &f,
    )
}

rule!(dataflow_var_captured, "dataflow-var-captured",
    ok: closure_in_dataflow(false), bad: closure_in_dataflow(true), names: ["`lv`", "`f`"]);

// ---------------------------------------------------------------- symbolic vars

/// `y = match_cast(x, (m,))` then `s = shape(m)`; when `early`, the shape is
/// used before the match_cast.
fn match_cast_then_shape(early: bool) -> IRModule {
    let n = TirVar::new("n");
    let m = TirVar::new("m");
    let x = var(
        "x",
        &StructInfo::tensor(vec![PrimExpr::var(&n)], DataType::f32()),
    );
    let pattern = StructInfo::tensor(vec![PrimExpr::var(&m)], DataType::f32());
    let y = var("y", &pattern);
    let s = var("s", &StructInfo::shape(vec![PrimExpr::var(&m)]));
    let cast = Binding::match_cast(y.clone(), r(&x), pattern);
    let shape = bind(&s, Expr::shape(vec![PrimExpr::var(&m)]));
    let bindings = if early {
        vec![shape, cast]
    } else {
        vec![cast, shape]
    };
    let body = seq(vec![bb(bindings)], r(&y));
    let f = Function::new(vec![x], body, StructInfo::tensor_ndim(1, DataType::f32()));
    module(vec![("main", f)])
}

rule!(undefined_symbolic_var, "undefined-symbolic-var",
    ok: match_cast_then_shape(false), bad: match_cast_then_shape(true), names: ["`m`"]);

#[test]
fn return_annotation_sees_only_parameter_symbolic_vars() {
    // The body's `m` comes from a match_cast: not in scope in the signature.
    let n = TirVar::new("n");
    let m = TirVar::new("m");
    let x = var(
        "x",
        &StructInfo::tensor(vec![PrimExpr::var(&n)], DataType::f32()),
    );
    let pattern = StructInfo::tensor(vec![PrimExpr::var(&m)], DataType::f32());
    let y = var("y", &pattern);
    let body = seq(
        vec![bb(vec![Binding::match_cast(
            y.clone(),
            r(&x),
            pattern.clone(),
        )])],
        r(&y).with_struct_info(StructInfo::tensor_ndim(1, DataType::f32())),
    );
    let m_ret = module(vec![("main", Function::new(vec![x], body, pattern))]);
    let d = assert_fails(&m_ret, "undefined-symbolic-var");
    assert!(d.message.contains("return annotation"), "{}", d.message);
}

#[test]
fn symbolic_vars_defined_in_a_branch_stay_there() {
    let t = StructInfo::object();
    let c = var("c", &StructInfo::prim(DataType::bool()));
    let x = var("x", &StructInfo::tensor_ndim(1, DataType::f32()));
    let m = TirVar::new("m");
    let pattern = StructInfo::tensor(vec![PrimExpr::var(&m)], DataType::f32());
    let (a, b, res, s) = (var("a", &pattern), var("b", &t), var("r", &t), var("s", &t));
    let then = seq(
        vec![bb(vec![Binding::match_cast(
            a.clone(),
            r(&x),
            pattern.clone(),
        )])],
        r(&a),
    )
    .with_struct_info(t.clone());
    let otherwise = seq(vec![bb(vec![bind(&b, r(&x))])], r(&b));
    let cond = Expr::if_(r(&c), then, otherwise).with_struct_info(t.clone());
    let shape = Expr::shape(vec![PrimExpr::var(&m)]).with_struct_info(t.clone());
    let m_if = main_with(
        vec![c, x],
        vec![bb(vec![bind(&res, cond), bind(&s, shape)])],
        &s,
    );
    assert_eq!(codes(&m_if), vec!["undefined-symbolic-var"]);
}

/// `main(x: (n * 2,), y: (n,))`: `n` is bound by `y` although `x` comes
/// first. Without `y`, nothing binds `n`.
fn signature(with_binder: bool) -> IRModule {
    let n = TirVar::new("n");
    let x = var("x", &tensor(vec![PrimExpr::var(&n) * 2]));
    let mut params = vec![x.clone()];
    if with_binder {
        params.push(var("y", &tensor(vec![PrimExpr::var(&n)])));
    }
    module(vec![("main", func(params, seq(vec![], r(&x))))])
}

rule!(unbound_signature_symbolic_var, "unbound-signature-symbolic-var",
    ok: signature(true), bad: signature(false), names: ["`n`", "parameter `x`"]);

// ---------------------------------------------------------------- dataflow blocks

fn if_in_block(dataflow: bool) -> IRModule {
    let t = StructInfo::object();
    let c = var("c", &StructInfo::prim(DataType::bool()));
    let x = var("x", &t);
    let (a, b, res) = (var("a", &t), var("b", &t), var("r", &t));
    let branch = |v: &Var| seq(vec![bb(vec![bind(v, r(&x))])], r(v));
    let cond = Expr::if_(r(&c), branch(&a), branch(&b)).with_struct_info(t.clone());
    let block = if dataflow { df } else { bb };
    main_with(
        vec![c, x.clone()],
        vec![block(vec![bind(&res, cond)])],
        &res,
    )
}

rule!(if_in_dataflow_block, "if-in-dataflow-block",
    ok: if_in_block(false), bad: if_in_block(true), names: ["`r`"]);

/// An impure function calling a packed function in a dataflow or ordinary block.
fn packed_call_in(dataflow: bool) -> IRModule {
    let t = StructInfo::object();
    let (x, y) = (var("x", &t), var("y", &t));
    let block = if dataflow { df } else { bb };
    let mut f = func(
        vec![x.clone()],
        seq(
            vec![block(vec![bind(&y, packed("log", vec![r(&x)], &t))])],
            r(&y),
        ),
    );
    f.is_pure = false;
    module(vec![("main", f)])
}

rule!(impure_call_in_dataflow_block, "impure-call-in-dataflow-block",
    ok: packed_call_in(false), bad: packed_call_in(true), names: ["`log`", "`y`"]);

#[test]
fn calling_a_prim_func_directly_is_impure() {
    let mut m = call_tir_to(true, true);
    let n = TirVar::new("n");
    let t = t_n4(&n);
    let (x, y, gv) = (var("x", &t), dvar("y", &t), var("gv", &t));
    let pf = m
        .get("kernel")
        .and_then(|f| f.as_prim())
        .cloned()
        .expect("kernel");
    let direct = call(gref("kernel", pf.struct_info()), vec![r(&x)], &t);
    let main = func(
        vec![x.clone()],
        seq(vec![df(vec![bind(&y, direct), bind(&gv, r(&y))])], r(&gv)),
    )
    .with_global_symbol("main");
    m.add(GlobalVar::new("main"), main);
    let c = codes(&m);
    assert!(c.contains(&"impure-call-in-dataflow-block"), "{c:?}");
    assert!(c.contains(&"impure-call-in-pure-function"), "{c:?}");
}

/// `main` calling itself, from a dataflow block or an ordinary block.
fn self_call(dataflow: bool) -> IRModule {
    let t = StructInfo::object();
    let (x, y, z) = (var("x", &t), var("y", &t), var("z", &t));
    let me = gref("main", StructInfo::func(vec![t.clone()], t.clone(), true));
    let block = if dataflow { df } else { bb };
    main_with(
        vec![x.clone()],
        vec![block(vec![
            bind(&y, call(me, vec![r(&x)], &t)),
            bind(&z, r(&y)),
        ])],
        &z,
    )
}

rule!(recursion_in_dataflow_block, "recursion-in-dataflow-block",
    ok: self_call(false), bad: self_call(true), names: ["`main`"]);

#[test]
fn mutual_recursion_in_dataflow_is_rejected() {
    let t = StructInfo::object();
    let sig = StructInfo::func(vec![t.clone()], t.clone(), true);
    let calling = |other: &str, dataflow: bool| {
        let (x, y) = (var("x", &t), var("y", &t));
        let block = if dataflow { df } else { bb };
        func(
            vec![x.clone()],
            seq(
                vec![block(vec![bind(
                    &y,
                    call(gref(other, sig.clone()), vec![r(&x)], &t),
                )])],
                r(&y),
            ),
        )
    };
    let m = module(vec![
        ("even", calling("odd", true)),
        ("odd", calling("even", false)),
    ]);
    let d = assert_fails(&m, "recursion-in-dataflow-block");
    assert!(
        d.message.contains("`odd`") && d.message.contains("`even`"),
        "{}",
        d.message
    );
    // Only `even`'s call is in a dataflow block.
    assert_eq!(codes(&m), vec!["recursion-in-dataflow-block"]);
    // A call to a non-recursive global from a dataflow block is fine.
    let x = var("x", &t);
    let leaf = func(vec![x.clone()], seq(vec![], r(&x)));
    let m2 = module(vec![("even", calling("leaf", true)), ("leaf", leaf)]);
    assert_ok(&m2);
}

#[test]
fn local_recursion_in_its_own_dataflow_block_is_rejected() {
    let t = StructInfo::object();
    let fs = StructInfo::func(vec![t.clone()], t.clone(), true);
    let (x, f, a, y) = (var("x", &t), var("f", &fs), var("a", &t), var("y", &t));
    let (inner, out) = (dvar("inner", &t), var("out", &t));
    let local = func(
        vec![a.clone()],
        seq(
            vec![df(vec![
                bind(&inner, call(r(&f), vec![r(&a)], &t)),
                bind(&out, r(&inner)),
            ])],
            r(&out),
        ),
    );
    let m = main_with(
        vec![x.clone()],
        vec![bb(vec![
            bind(&f, Expr::function(local)),
            bind(&y, call(r(&f), vec![r(&x)], &t)),
        ])],
        &y,
    );
    let d = assert_fails(&m, "recursion-in-dataflow-block");
    assert!(d.message.contains("local function `f`"), "{}", d.message);
    assert_eq!(codes(&m).len(), 1);
}

// ---------------------------------------------------------------- purity

fn packed_in_function(pure: bool, force_pure: bool) -> IRModule {
    let t = StructInfo::object();
    let (x, y) = (var("x", &t), var("y", &t));
    let mut f = func(
        vec![x.clone()],
        seq(
            vec![bb(vec![bind(&y, packed("log", vec![r(&x)], &t))])],
            r(&y),
        ),
    );
    f.is_pure = pure;
    if force_pure {
        f = f.with_attr(crate::ir::function::attr::FORCE_PURE, true);
    }
    module(vec![("main", f)])
}

rule!(impure_call_in_pure_function, "impure-call-in-pure-function",
    ok: packed_in_function(false, false), bad: packed_in_function(true, false), names: ["`log`"]);

#[test]
fn force_pure_allows_impure_calls() {
    assert_ok(&packed_in_function(true, true));
}

rule!(force_pure_on_impure_function, "force-pure-on-impure-function",
    ok: packed_in_function(true, true), bad: packed_in_function(false, true));

#[test]
fn impure_local_closure_makes_the_call_impure() {
    let t = StructInfo::object();
    let x = var("x", &t);
    let f = var("f", &StructInfo::func(vec![t.clone()], t.clone(), false));
    let y = var("y", &t);
    // `f` is a parameter of impure function StructInfo.
    let m = main_with(
        vec![x.clone(), f.clone()],
        vec![bb(vec![bind(&y, call(r(&f), vec![r(&x)], &t))])],
        &y,
    );
    assert_eq!(codes(&m), vec!["impure-call-in-pure-function"]);
}

// ---------------------------------------------------------------- normal form

rule!(body_not_seq_expr, "body-not-seq-expr",
ok: valid(),
bad: {
    let x = var("x", &StructInfo::object());
    module(vec![("main", func(vec![x.clone()], r(&x)))])
});

#[test]
fn if_branches_must_be_seq_exprs() {
    let t = StructInfo::object();
    let c = var("c", &StructInfo::prim(DataType::bool()));
    let x = var("x", &t);
    let res = var("r", &t);
    let cond = Expr::if_(r(&c), r(&x), r(&x)).with_struct_info(t.clone());
    let m = main_with(vec![c, x.clone()], vec![bb(vec![bind(&res, cond)])], &res);
    let d = assert_fails(&m, "body-not-seq-expr");
    assert!(d.message.contains("true branch"), "{}", d.message);
    assert_eq!(codes(&m).len(), 2, "both branches are reported");
}

rule!(misplaced_seq_expr, "misplaced-seq-expr",
    ok: valid(),
    bad: {
        let t = StructInfo::object();
        let (x, a, y) = (var("x", &t), var("a", &t), var("y", &t));
        let inner = seq(vec![bb(vec![bind(&a, r(&x))])], r(&a));
        main_with(vec![x.clone()], vec![bb(vec![bind(&y, inner)])], &y)
    },
    names: ["`y`"]);

rule!(seq_body_not_leaf, "seq-body-not-leaf",
ok: valid(),
bad: {
    let t = StructInfo::object();
    let x = var("x", &t);
    let body = seq(vec![], op("relax.nn.relu", vec![r(&x)], &t));
    module(vec![("main", func(vec![x], body))])
});

rule!(nested_non_leaf, "nested-non-leaf",
    ok: valid(),
    bad: {
        let t = StructInfo::object();
        let (x, y) = (var("x", &t), var("y", &t));
        let nested = op("relax.add", vec![op("relax.nn.relu", vec![r(&x)], &t), r(&x)], &t);
        main_with(vec![x.clone()], vec![bb(vec![bind(&y, nested)])], &y)
    },
    names: ["`relax.nn.relu`", "`relax.add`", "`y`"]);

#[test]
fn tuples_of_leaves_are_leaves_but_not_of_calls() {
    let t = StructInfo::object();
    let (x, y, z) = (var("x", &t), var("y", &t), var("z", &t));
    let tup = Expr::tuple(vec![r(&x), Expr::tuple(vec![r(&x), Expr::shape(vec![])])]);
    let ok = main_with(
        vec![x.clone()],
        vec![bb(vec![bind(&y, op("relax.f", vec![tup], &t))])],
        &y,
    );
    assert_ok(&ok);
    let bad_tup = Expr::tuple(vec![r(&x), op("relax.g", vec![r(&x)], &t)]);
    let bad = main_with(vec![x.clone()], vec![bb(vec![bind(&z, bad_tup)])], &z);
    assert_eq!(codes(&bad), vec!["nested-non-leaf"]);
}

rule!(misplaced_op, "misplaced-op",
    ok: valid(),
    bad: {
        let t = StructInfo::object();
        let (x, y) = (var("x", &t), var("y", &t));
        let value = op("relax.map", vec![Expr::op("relax.nn.relu"), r(&x)], &t);
        main_with(vec![x.clone()], vec![bb(vec![bind(&y, value)])], &y)
    },
    names: ["`relax.nn.relu`"]);

rule!(empty_block, "empty-block",
ok: valid(),
bad: {
    let t = StructInfo::object();
    let (x, y) = (var("x", &t), var("y", &t));
    main_with(vec![x.clone()], vec![df(vec![]), bb(vec![bind(&y, r(&x))])], &y)
});

rule!(unmerged_blocks, "unmerged-blocks",
ok: {
    let t = StructInfo::object();
    let (x, lv, y, z) = (var("x", &t), dvar("lv", &t), var("y", &t), var("z", &t));
    main_with(
        vec![x.clone()],
        vec![df(vec![bind(&lv, r(&x)), bind(&y, r(&lv))]), bb(vec![bind(&z, r(&y))])],
        &z,
    )
},
bad: {
    let t = StructInfo::object();
    let (x, y, z) = (var("x", &t), var("y", &t), var("z", &t));
    main_with(vec![x.clone()], vec![df(vec![bind(&y, r(&x))]), df(vec![bind(&z, r(&y))])], &z)
});

rule!(op_not_normalized, "op-not-normalized",
    ok: call_tir_to(true, true), bad: call_tir_to(true, false), names: ["`relax.call_tir`"]);

// ---------------------------------------------------------------- StructInfo

rule!(missing_struct_info, "missing-struct-info",
    ok: valid(),
    bad: {
        let t = StructInfo::object();
        let (x, y) = (var("x", &t), var("y", &t));
        let bare = Expr::call_op("relax.nn.relu", vec![r(&x)], Attrs::new());
        main_with(vec![x.clone()], vec![bb(vec![bind(&y, bare)])], &y)
    },
    names: ["`relax.nn.relu`"]);

#[test]
fn struct_info_rules_can_be_turned_off() {
    let t = StructInfo::object();
    let (x, y) = (var("x", &t), Var::new("y", None));
    let bare = Expr::call_op("relax.nn.relu", vec![r(&x)], Attrs::new());
    let m = main_with(vec![x.clone()], vec![bb(vec![bind(&y, bare)])], &y);
    assert_eq!(
        codes(&m)
            .iter()
            .filter(|c| **c == "missing-struct-info")
            .count(),
        2,
        "the call and `y`"
    );
    let off = WellFormedOptions {
        check_struct_info: false,
    };
    assert_eq!(well_formed_with_options(&m, off), Ok(()));
    // As in TVM, purity is judged from StructInfo, so it goes too.
    assert_eq!(well_formed_with_options(&packed_call_in(true), off), Ok(()));
    // Structural rules stay.
    let broken = main_with(vec![x.clone()], vec![df(vec![])], &x);
    assert!(well_formed_with_options(&broken, off).is_err());
}

#[test]
fn tensor_shape_var_must_be_in_scope() {
    let s = var("s", &StructInfo::shape_ndim(2));
    let x = var(
        "x",
        &StructInfo::tensor_with_shape_expr(r(&s), DataType::f32()),
    );
    let m = module(vec![("main", func(vec![x.clone()], seq(vec![], r(&x))))]);
    let d = assert_fails(&m, "undefined-var");
    assert!(d.message.contains("`s`"), "{}", d.message);
}

#[test]
fn callable_annotations_bind_their_own_symbolic_vars() {
    // `f: R.Callable((R.Tensor((m,)),), R.Tensor((m * 2,)))` needs no outer `m`.
    let m = TirVar::new("m");
    let fs = StructInfo::func(
        vec![tensor(vec![PrimExpr::var(&m)])],
        tensor(vec![PrimExpr::var(&m) * 2]),
        true,
    );
    assert_ok(&annotated(fs));
    // Its symbolic variables do not leak into the function's scope.
    let k = TirVar::new("k");
    let fk = var(
        "f",
        &StructInfo::func(
            vec![tensor(vec![PrimExpr::var(&k)])],
            StructInfo::object(),
            true,
        ),
    );
    let y = var("y", &tensor(vec![PrimExpr::var(&k) + 1]));
    let leak = module(vec![(
        "main",
        func(vec![fk, y.clone()], seq(vec![], r(&y))),
    )]);
    assert_eq!(codes(&leak), vec!["unbound-signature-symbolic-var"]);
}

#[test]
fn nested_functions_see_outer_symbolic_vars() {
    // main(x: (n, 4)) { g = fn(a: (n, 4)) { a }; g }: `n` is the outer one.
    let n = TirVar::new("n");
    let t = t_n4(&n);
    let x = var("x", &t);
    let a = var("a", &t);
    let local = func(vec![a.clone()], seq(vec![], r(&a)));
    let g = var("g", &local.struct_info());
    let m = main_with(vec![x], vec![bb(vec![bind(&g, Expr::function(local))])], &g);
    assert_ok(&m);
}

/// `main(x: annotation) { x }`: a module whose only interesting part is the
/// parameter's annotation.
fn annotated(sinfo: StructInfo) -> IRModule {
    let x = var("x", &sinfo);
    module(vec![("main", func(vec![x.clone()], seq(vec![], r(&x))))])
}

fn tensor_sinfo(shape: Option<Expr>, dtype: DataType, ndim: i32) -> StructInfo {
    StructInfo::new(StructInfoKind::Tensor(TensorStructInfo {
        shape,
        dtype,
        ndim,
    }))
}

rule!(invalid_ndim, "invalid-ndim",
    ok: annotated(StructInfo::tensor_ndim(-1, DataType::f32())),
    bad: annotated(StructInfo::tensor_ndim(-3, DataType::f32())),
    names: ["parameter `x`", "-3"]);

rule!(ndim_mismatch, "ndim-mismatch",
    ok: annotated(tensor_sinfo(Some(Expr::shape(vec![PrimExpr::int(2)])), DataType::f32(), 1)),
    bad: annotated(tensor_sinfo(Some(Expr::shape(vec![PrimExpr::int(2)])), DataType::f32(), 3)),
    names: ["ndim 3", "1 dimensions"]);

#[test]
fn shape_struct_info_ndim_must_match_values() {
    let bad = StructInfo::new(StructInfoKind::Shape(ShapeStructInfo {
        values: Some(vec![PrimExpr::int(1), PrimExpr::int(2)]),
        ndim: 1,
    }));
    assert_fails(&annotated(bad), "ndim-mismatch");
    assert_ok(&annotated(StructInfo::shape(vec![PrimExpr::int(1)])));
}

#[test]
fn tensor_shape_var_must_agree_in_rank() {
    let s = var("s", &StructInfo::shape_ndim(2));
    let good = StructInfo::tensor_with_shape_expr(r(&s), DataType::f32());
    let x = var("x", &good);
    let m = module(vec![(
        "main",
        func(vec![s.clone(), x.clone()], seq(vec![], r(&x))),
    )]);
    assert_ok(&m);
    let bad = tensor_sinfo(Some(r(&s)), DataType::f32(), 3);
    let y = var("y", &bad);
    let m = module(vec![(
        "main",
        func(vec![s.clone(), y.clone()], seq(vec![], r(&y))),
    )]);
    assert_eq!(codes(&m), vec!["ndim-mismatch"]);
}

rule!(invalid_tensor_shape, "invalid-tensor-shape",
    ok: annotated(StructInfo::tensor(vec![PrimExpr::int(3)], DataType::f32())),
    bad: annotated(tensor_sinfo(Some(Expr::string("oops")), DataType::f32(), 1)));

rule!(invalid_prim_dtype, "invalid-prim-dtype",
    ok: annotated(StructInfo::prim(DataType::bool())),
    bad: annotated(StructInfo::prim(DataType::handle())));

rule!(invalid_dtype, "invalid-dtype",
    ok: annotated(StructInfo::tensor_ndim(2, DataType::float(16))),
    bad: annotated(StructInfo::tensor_ndim(2, DataType::int(7))),
    names: ["int7"]);

rule!(prim_value_dtype_mismatch, "prim-value-dtype-mismatch",
ok: annotated(StructInfo::prim_value(PrimExpr::int_of(DataType::i32(), 3))),
bad: annotated(StructInfo::new(StructInfoKind::Prim(PrimStructInfo {
    dtype: DataType::i32(),
    value: Some(PrimExpr::int(3)),
}))));

rule!(invalid_func_struct_info, "invalid-func-struct-info",
    ok: annotated(StructInfo::opaque_func(DeriveFunc::Default, StructInfo::object())),
    bad: annotated(StructInfo::new(StructInfoKind::Func(FuncStructInfo {
        params: Some(vec![]),
        ret: StructInfo::object(),
        purity: false,
        derive_func: Some(DeriveFunc::Default),
    }))),
    names: ["both"]);

/// `s = shape(dim)` in `main(x: (n,))`.
fn shape_value(dim: impl Fn(&TirVar) -> PrimExpr) -> IRModule {
    let n = TirVar::new("n");
    let x = var("x", &tensor(vec![PrimExpr::var(&n)]));
    let d = dim(&n);
    let s = var("s", &StructInfo::shape(vec![d.clone()]));
    main_with(vec![x], vec![bb(vec![bind(&s, Expr::shape(vec![d]))])], &s)
}

rule!(non_integer_shape_dim, "non-integer-shape-dim",
    ok: shape_value(|n| PrimExpr::var(n) * 2),
    bad: shape_value(|_| PrimExpr::float(DataType::f32(), 2.0)),
    names: ["`s`"]);

/// `p = prim_value(value)` in `main(x: (n,))`.
fn prim_value(value: impl Fn(&TirVar) -> PrimExpr) -> IRModule {
    let n = TirVar::new("n");
    let x = var("x", &tensor(vec![PrimExpr::var(&n)]));
    let pv = Expr::prim_value(value(&n));
    let p = var(
        "p",
        &pv.struct_info().cloned().unwrap_or_else(StructInfo::object),
    );
    main_with(vec![x], vec![bb(vec![bind(&p, pv)])], &p)
}

rule!(invalid_prim_value, "invalid-prim-value",
    ok: prim_value(|n| PrimExpr::var(n) + 1),
    bad: prim_value(|_| PrimExpr::float(DataType::f32(), 1.5) + PrimExpr::float(DataType::f32(), 1.0)),
    names: ["`p`"]);

#[test]
fn prim_value_literals_are_fine() {
    assert_ok(&prim_value(|_| PrimExpr::float(DataType::f32(), 1.5)));
    assert_ok(&prim_value(|_| PrimExpr::bool(true)));
    // A symbolic prim value must use defined symbolic variables.
    let m = TirVar::new("m");
    assert_eq!(
        codes(&prim_value(move |_| PrimExpr::var(&m))),
        vec!["undefined-symbolic-var"]
    );
}

/// `r = if c { … } else { … }` where `c` has StructInfo `cond`.
fn if_on(cond: StructInfo) -> IRModule {
    let t = StructInfo::object();
    let c = var("c", &cond);
    let x = var("x", &t);
    let (a, b, res) = (var("a", &t), var("b", &t), var("r", &t));
    let branch = |v: &Var| seq(vec![bb(vec![bind(v, r(&x))])], r(v));
    let e = Expr::if_(r(&c), branch(&a), branch(&b)).with_struct_info(t.clone());
    main_with(vec![c, x.clone()], vec![bb(vec![bind(&res, e)])], &res)
}

rule!(if_cond_not_bool, "if-cond-not-bool",
    ok: if_on(StructInfo::tensor(vec![], DataType::bool())),
    bad: if_on(StructInfo::tensor(vec![PrimExpr::int(4)], DataType::f32())),
    names: ["`c`"]);

rule!(struct_info_mismatch, "struct-info-mismatch",
    ok: calls_global(true),
    bad: {
        // A reference to `helper` that claims to be a tensor.
        let mut m = calls_global(true);
        let n = TirVar::new("n");
        let t = t_n4(&n);
        let (x, y) = (var("x", &t), var("y", &t));
        let wrong = gref("helper", t.clone());
        let f = func(vec![x.clone()], seq(vec![bb(vec![bind(&y, call(wrong, vec![r(&x)], &t))])], r(&y)));
        m.add(GlobalVar::new("main"), f.with_global_symbol("main"));
        m
    },
    names: ["`helper`"]);

#[test]
fn binding_annotation_disjoint_from_value_is_rejected() {
    let n = TirVar::new("n");
    let t = t_n4(&n);
    let x = var("x", &t);
    let y = var("y", &StructInfo::shape_ndim(2));
    // An unregistered op's result comes from its `sinfo_args`: a tensor.
    let value = Expr::call_full(
        Expr::op("test.opaque"),
        vec![r(&x)],
        Attrs::new(),
        vec![t.clone()],
    )
    .with_struct_info(t.clone());
    let m = main_with(vec![x.clone()], vec![bb(vec![bind(&y, value)])], &y);
    assert_fails(&m, "struct-info-mismatch");
}

rule!(match_cast_var_mismatch, "match-cast-var-mismatch",
    ok: match_cast_then_shape(false),
    bad: {
        let x = var("x", &StructInfo::object());
        let pattern = StructInfo::tensor_ndim(2, DataType::f32());
        let y = var("y", &StructInfo::object());
        let body = seq(vec![bb(vec![Binding::match_cast(y.clone(), r(&x), pattern)])], r(&y));
        module(vec![("main", func(vec![x], body))])
    },
    names: ["`y`"]);

#[test]
fn return_annotation_disjoint_from_body_is_rejected() {
    let x = var("x", &StructInfo::tensor_ndim(2, DataType::f32()));
    let f = Function::new(
        vec![x.clone()],
        seq(vec![], r(&x)),
        StructInfo::shape_ndim(2),
    );
    assert_fails(&module(vec![("main", f)]), "ret-struct-info-mismatch");
}

#[test]
fn underivable_values_are_rejected() {
    let t = StructInfo::tuple(vec![StructInfo::object()]);
    let x = var("x", &t);
    let y = var("y", &StructInfo::object());
    let get = Expr::tuple_get_item(r(&x), 5).with_struct_info(StructInfo::object());
    let m = main_with(vec![x.clone()], vec![bb(vec![bind(&y, get)])], &y);
    assert_fails(&m, "struct-info-inference-failed");
}

#[test]
fn return_annotation_consistent_with_body_is_accepted() {
    // With exact StructInfo the stub and the real check agree.
    assert_ok(&valid());
    let x = var("x", &StructInfo::tensor_ndim(2, DataType::f32()));
    let f = Function::new(vec![x.clone()], seq(vec![], r(&x)), StructInfo::object());
    assert_ok(&module(vec![("main", f)]));
}

// ---------------------------------------------------------------- together

#[test]
fn every_violation_is_reported() {
    let n = TirVar::new("n");
    let t = t_n4(&n);
    let x = var("x", &t);
    let lv = dvar("lv", &t);
    let ghost = var("ghost", &t);
    let (y, z) = (var("y", &t), var("z", &t));
    let c = var("c", &StructInfo::prim(DataType::bool()));
    let (a, b) = (var("a", &t), var("b", &t));
    let branch = |v: &Var| seq(vec![bb(vec![bind(v, r(&x))])], r(v));
    let body = seq(
        vec![
            df(vec![
                // nested-non-leaf
                bind(
                    &lv,
                    op(
                        "relax.add",
                        vec![op("relax.nn.relu", vec![r(&x)], &t), r(&x)],
                        &t,
                    ),
                ),
                // if-in-dataflow-block
                bind(
                    &y,
                    Expr::if_(r(&c), branch(&a), branch(&b)).with_struct_info(t.clone()),
                ),
            ]),
            // undefined-var, dataflow-var-escapes
            bb(vec![bind(&z, op("relax.add", vec![r(&ghost), r(&lv)], &t))]),
        ],
        r(&z),
    );
    let f = func(vec![x, c], body);
    let mut m = IRModule::new();
    // global-symbol-mismatch
    m.add(GlobalVar::new("main"), f.with_global_symbol("entry"));
    let mut got = codes(&m);
    got.sort_unstable();
    assert_eq!(
        got,
        vec![
            "dataflow-var-escapes",
            "global-symbol-mismatch",
            "if-in-dataflow-block",
            "nested-non-leaf",
            "undefined-var",
        ]
    );
}

#[test]
fn well_formed_function_checks_one_function() {
    assert_eq!(
        well_formed_function(&relu_add(), WellFormedOptions::default()),
        Ok(())
    );
    let x = dvar("x", &StructInfo::object());
    let f = func(vec![x.clone()], seq(vec![], r(&x))).with_global_symbol("lonely");
    let ds = well_formed_function(&f, WellFormedOptions::default()).expect_err("dataflow param");
    assert_eq!(ds[0].code, "dataflow-var-param");
    assert!(ds[0].message.contains("`lonely`"), "{}", ds[0].message);
}

#[test]
fn malformed_ir_does_not_panic() {
    let t = StructInfo::object();
    let x = Var::new("x", None);
    let lv = dvar("lv", &t);
    let weird = vec![
        Expr::tuple_get_item(Expr::op("relax.add"), usize::MAX),
        Expr::call(Expr::seq(vec![], Expr::op("relax.x")), vec![]),
        Expr::if_(
            Expr::function(Function::new(
                vec![lv.clone(), lv.clone()],
                Expr::op("o"),
                t.clone(),
            )),
            Expr::op("p"),
            Expr::seq(vec![df(vec![]), df(vec![])], r(&lv)),
        ),
        Expr::call_op("relax.call_tir", vec![], Attrs::new()),
        Expr::call_op("relax.call_tir", vec![r(&x), r(&x)], Attrs::new()),
        Expr::prim_value(PrimExpr::new(
            DataType::void(),
            crate::ir::PrimExprKind::IntImm(0),
        )),
        Expr::dtype(DataType::new(crate::ir::TypeCode::Float, 3, 9)),
        Expr::global_var(GlobalVar::new("nowhere")),
        Expr::extern_func("f"),
    ];
    let bindings: Vec<Binding> = weird
        .into_iter()
        .map(|e| bind(&Var::new("w", None), e))
        .chain([
            bind(&x, r(&x)),
            Binding::match_cast(
                lv.clone(),
                r(&x),
                StructInfo::new(StructInfoKind::Func(FuncStructInfo {
                    params: None,
                    ret: StructInfo::object(),
                    purity: true,
                    derive_func: None,
                })),
            ),
        ])
        .collect();
    let f = Function::new(
        vec![x.clone(), x.clone()],
        Expr::seq(vec![bb(bindings), bb(vec![])], Expr::op("relax.y")),
        tensor_sinfo(
            Some(Expr::op("z")),
            DataType::new(crate::ir::TypeCode::Int, 3, 2),
            -7,
        ),
    );
    let mut m = module(vec![("a", f.clone())]);
    m.add(GlobalVar::new("b"), f);
    let ds = well_formed(&m).expect_err("broken");
    assert!(ds.len() > 15, "{ds:#?}");
    for d in &ds {
        assert!(!d.message.is_empty() && !d.message.ends_with('.'), "{d:?}");
    }
    let _ = well_formed_function(
        &Function::new(vec![], Expr::op("x"), t),
        WellFormedOptions {
            check_struct_info: false,
        },
    );
}
