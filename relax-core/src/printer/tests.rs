//! Snapshot tests: IR built with the constructors, printed, compared with
//! the exact text TVM would print.

use super::function_to_string;
use crate::ir::attrs::{AttrValue, Attrs};
use crate::ir::expr::{Binding, BindingBlock, Expr, GlobalVar, Var};
use crate::ir::function::Function;
use crate::ir::module::IRModule;
use crate::ir::prim_expr::{PrimExpr, TirVar};
use crate::ir::struct_info::{StructInfo, UNKNOWN_NDIM};
use crate::tir::{PrimFunc, PrimFuncParam};
use relax_runtime::{DataType, Tensor};

fn f32() -> DataType {
    DataType::f32()
}

/// A float32 tensor StructInfo with constant dims.
fn t(dims: &[i64]) -> StructInfo {
    StructInfo::tensor(dims.iter().map(|&d| PrimExpr::int(d)).collect(), f32())
}

/// A float32 tensor StructInfo with symbolic dims.
fn ts(dims: Vec<PrimExpr>) -> StructInfo {
    StructInfo::tensor(dims, f32())
}

fn v(name: &str, s: StructInfo) -> Var {
    Var::new(name, Some(s))
}

fn dv(name: &str, s: StructInfo) -> Var {
    Var::new_dataflow(name, Some(s))
}

fn e(v: &Var) -> Expr {
    Expr::var(v)
}

fn call(op: &str, args: Vec<Expr>) -> Expr {
    Expr::call_op(op, args, Attrs::new())
}

fn bind(var: &Var, value: Expr) -> Binding {
    Binding::var_binding(var.clone(), value)
}

fn public(f: Function, name: &str) -> Function {
    f.with_global_symbol(name)
}

fn func(params: Vec<Var>, blocks: Vec<BindingBlock>, ret: &Var) -> Function {
    let ret_sinfo = ret
        .struct_info()
        .cloned()
        .unwrap_or_else(StructInfo::object);
    Function::new(params, Expr::seq(blocks, e(ret)), ret_sinfo)
}

fn module(funcs: Vec<(&str, crate::ir::module::BaseFunc)>) -> IRModule {
    IRModule::from_functions(funcs.into_iter().map(|(n, f)| (GlobalVar::new(n), f)))
}

/// The seed's MLP (mlc-graph-optimization, `MLPModel.show()`), with small
/// weights so the metadata section stays readable.
#[test]
fn seed_mlp_module_with_metadata() {
    let x = v("x", t(&[1, 4]));
    let w0 = Expr::constant(
        Tensor::from_vec(&[3, 4], (0..12).map(|i| i as f32 * 0.5).collect()).unwrap(),
    );
    let b0 = Expr::constant(Tensor::from_vec(&[3], vec![0.1f32, -0.2, 0.3]).unwrap());
    let w1 =
        Expr::constant(Tensor::from_vec(&[2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap());
    let b1 = Expr::constant(Tensor::from_vec(&[2], vec![0.0f32, 1e-8]).unwrap());
    let axes = Attrs::from_pairs([("axes", AttrValue::None)]);
    let out_dtype = Attrs::from_pairs([("out_dtype", DataType::void())]);
    let lv = dv("lv", t(&[4, 3]));
    let lv1 = dv("lv1", t(&[1, 3]));
    let lv2 = dv("lv2", t(&[1, 3]));
    let lv3 = dv("lv3", t(&[1, 3]));
    let lv4 = dv("lv4", t(&[3, 2]));
    let lv5 = dv("lv5", t(&[1, 2]));
    let lv6 = dv("lv6", t(&[1, 2]));
    let gv = v("gv", t(&[1, 2]));
    let block = BindingBlock::dataflow(vec![
        bind(
            &lv,
            Expr::call_op("relax.permute_dims", vec![w0], axes.clone()),
        ),
        bind(
            &lv1,
            Expr::call_op("relax.matmul", vec![e(&x), e(&lv)], out_dtype.clone()),
        ),
        bind(&lv2, call("relax.add", vec![e(&lv1), b0])),
        bind(&lv3, call("relax.nn.relu", vec![e(&lv2)])),
        bind(&lv4, Expr::call_op("relax.permute_dims", vec![w1], axes)),
        bind(
            &lv5,
            Expr::call_op("relax.matmul", vec![e(&lv3), e(&lv4)], out_dtype),
        ),
        bind(&lv6, call("relax.add", vec![e(&lv5), b1])),
        bind(&gv, e(&lv6)),
    ]);
    let main = public(func(vec![x], vec![block], &gv), "main");
    let m = module(vec![("main", main.into())]);
    assert_eq!(
        m.to_string(),
        r#"# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 4), dtype="float32")) -> R.Tensor((1, 2), dtype="float32"):
        with R.dataflow():
            lv: R.Tensor((4, 3), dtype="float32") = R.permute_dims(metadata["relax.expr.Constant"][0], axes=None)
            lv1: R.Tensor((1, 3), dtype="float32") = R.matmul(x, lv, out_dtype=None)
            lv2: R.Tensor((1, 3), dtype="float32") = R.add(lv1, metadata["relax.expr.Constant"][1])
            lv3: R.Tensor((1, 3), dtype="float32") = R.nn.relu(lv2)
            lv4: R.Tensor((3, 2), dtype="float32") = R.permute_dims(metadata["relax.expr.Constant"][2], axes=None)
            lv5: R.Tensor((1, 2), dtype="float32") = R.matmul(lv3, lv4, out_dtype=None)
            lv6: R.Tensor((1, 2), dtype="float32") = R.add(lv5, metadata["relax.expr.Constant"][3])
            gv: R.Tensor((1, 2), dtype="float32") = lv6
            R.output(gv)
        return gv

metadata = {
    "relax.expr.Constant": [
        R.const([[0.0, 0.5, 1.0, 1.5], [2.0, 2.5, 3.0, 3.5], [4.0, 4.5, 5.0, 5.5]], "float32"),
        R.const([0.1, -0.2, 0.3], "float32"),
        R.const([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "float32"),
        R.const([0.0, 1e-8], "float32"),
    ],
}"#
    );
}

/// The seed's `ewise_fma` rewrite result, printed as a function alone.
#[test]
fn seed_ewise_fma_function() {
    let x = v("x", t(&[3, 4]));
    let y = v("y", t(&[3, 4]));
    let lv0 = dv("lv0", t(&[3, 4]));
    let gv0 = v("gv0", t(&[3, 4]));
    let block = BindingBlock::dataflow(vec![
        bind(&lv0, call("relax.multiply", vec![e(&x), e(&y)])),
        bind(&gv0, call("relax.ewise_fma", vec![e(&x), e(&y), e(&y)])),
    ]);
    let f = public(func(vec![x, y], vec![block], &gv0), "main");
    let expected = r#"# from tvm.script import relax as R

@R.function
def main(x: R.Tensor((3, 4), dtype="float32"), y: R.Tensor((3, 4), dtype="float32")) -> R.Tensor((3, 4), dtype="float32"):
    with R.dataflow():
        lv0: R.Tensor((3, 4), dtype="float32") = R.multiply(x, y)
        gv0: R.Tensor((3, 4), dtype="float32") = R.ewise_fma(x, y, y)
        R.output(gv0)
    return gv0"#;
    assert_eq!(f.to_string(), expected);
    assert_eq!(function_to_string("main", &f), expected);
    // Printed under another name, the global symbol no longer matches it and
    // is kept as an attribute.
    assert!(function_to_string("other", &f)
        .contains("def other(x: R.Tensor((3, 4), dtype=\"float32\")"));
    assert!(function_to_string("other", &f).contains("R.func_attr({\"global_symbol\": \"main\"})"));
    // As an expression it prints the same def, without the import comment.
    assert_eq!(
        Expr::function(f).to_string(),
        expected.trim_start_matches("# from tvm.script import relax as R\n\n")
    );
}

#[test]
fn symbolic_dims_in_signature_and_match_cast() {
    let n = TirVar::new("n");
    let m = TirVar::new("m");
    let x = v("x", ts(vec![n.to_expr(), PrimExpr::int(784)]));
    let y = v("y", StructInfo::tensor_ndim(2, f32()));
    let z_sinfo = ts(vec![m.to_expr(), PrimExpr::int(4)]);
    let z = v("z", z_sinfo.clone());
    let s = v("s", StructInfo::shape(vec![n.to_expr(), m.to_expr()]));
    let c = v("c", ts(vec![&n * 2, PrimExpr::int(784)]));
    let block = BindingBlock::new(vec![
        Binding::match_cast(z.clone(), e(&y), z_sinfo),
        bind(&s, Expr::shape(vec![n.to_expr(), m.to_expr()])),
        bind(
            &c,
            Expr::call_op(
                "relax.concat",
                vec![Expr::tuple(vec![e(&x), e(&x)])],
                Attrs::from_pairs([("axis", 0i64)]),
            ),
        ),
    ]);
    let f = public(func(vec![x, y], vec![block], &c), "main");
    assert_eq!(
        f.to_string(),
        r#"# from tvm.script import relax as R
# from tvm.script import tirx as T

@R.function
def main(x: R.Tensor(("n", 784), dtype="float32"), y: R.Tensor(dtype="float32", ndim=2)) -> R.Tensor(("n * 2", 784), dtype="float32"):
    n = T.int64()
    m = T.int64()
    z: R.Tensor((m, 4), dtype="float32") = R.match_cast(y, R.Tensor((m, 4), dtype="float32"))
    s: R.Shape([n, m]) = R.shape([n, m])
    c: R.Tensor((n * 2, 784), dtype="float32") = R.concat((x, x), axis=0)
    return c"#
    );
}

#[test]
fn module_with_prim_func_call_tir_call_packed_private_and_impure() {
    let n = TirVar::new("n");
    let nd = || vec![n.to_expr(), PrimExpr::int(4)];
    let add = PrimFunc {
        params: vec![
            PrimFuncParam::Buffer(crate::tir::Buffer::new("A", nd(), f32())),
            PrimFuncParam::Buffer(crate::tir::Buffer::new("B", nd(), f32())),
            PrimFuncParam::Scalar(n.clone()),
        ],
        body: crate::tir::Stmt::no_op(),
        attrs: Attrs::new(),
    };

    // A private, impure helper with attributes.
    let a = v("a", t(&[2]));
    let r = v("r", t(&[2]));
    let helper_body = BindingBlock::new(vec![bind(
        &r,
        Expr::call_full(
            Expr::extern_func("my_print"),
            vec![e(&a), Expr::string("hi")],
            Attrs::new(),
            vec![t(&[2])],
        ),
    )]);
    let mut helper = func(vec![a], vec![helper_body], &r)
        .with_attr("Primitive", 1i64)
        .with_attr("Codegen", "x\"y");
    helper.is_pure = false;

    // The public, impure entry calling both.
    let x = v("x", ts(nd()));
    let lv = v("lv", ts(nd()));
    let lv1 = v("lv1", StructInfo::tuple(vec![t(&[2]), t(&[2])]));
    let lv2 = v("lv2", t(&[2]));
    let lv3 = v("lv3", StructInfo::object());
    let body = BindingBlock::new(vec![
        bind(
            &lv,
            Expr::call_full(
                Expr::op("relax.call_tir"),
                vec![
                    Expr::global_var(GlobalVar::new("add")),
                    Expr::tuple(vec![e(&x)]),
                    Expr::shape(vec![n.to_expr()]),
                ],
                Attrs::new(),
                vec![ts(nd())],
            ),
        ),
        bind(
            &lv1,
            Expr::call_full(
                Expr::op("relax.call_dps_packed"),
                vec![Expr::extern_func("ext"), Expr::tuple(vec![e(&lv)])],
                Attrs::new(),
                vec![t(&[2]), t(&[2])],
            ),
        ),
        bind(
            &lv2,
            Expr::call(
                Expr::global_var(GlobalVar::new("helper")),
                vec![Expr::tuple_get_item(e(&lv1), 0)],
            ),
        ),
        bind(
            &lv3,
            Expr::call_full(
                Expr::extern_func("vm.builtin.nop"),
                vec![],
                Attrs::new(),
                vec![t(&[2]), StructInfo::object()],
            ),
        ),
    ]);
    let mut main = public(func(vec![x], vec![body], &lv2), "main").with_attr("num_input", 1i64);
    main.is_pure = false;
    let m = module(vec![
        ("main", main.into()),
        ("helper", helper.into()),
        ("add", add.into()),
    ]);
    assert_eq!(
        m.to_string(),
        r#"# from tvm.script import ir as I
# from tvm.script import relax as R
# from tvm.script import tirx as T

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add(A: T.Buffer(("n", 4), "float32"), B: T.Buffer(("n", 4), "float32"), n: T.int64):
        T.evaluate(0)

    @R.function(pure=False, private=True)
    def helper(a: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        R.func_attr({"Primitive": 1, "Codegen": "x\"y"})
        r: R.Tensor((2,), dtype="float32") = R.call_packed("my_print", a, R.str("hi"), ty_args=(R.Tensor((2,), dtype="float32"),))
        return r

    @R.function(pure=False)
    def main(x: R.Tensor(("n", 4), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        R.func_attr({"num_input": 1})
        cls = Module
        n = T.int64()
        lv: R.Tensor((n, 4), dtype="float32") = R.call_tir(cls.add, (x,), out_ty=R.Tensor((n, 4), dtype="float32"), tir_vars=R.shape([n]))
        lv1: R.Tuple(R.Tensor((2,), dtype="float32"), R.Tensor((2,), dtype="float32")) = R.call_dps_packed("ext", (lv,), out_ty=[R.Tensor((2,), dtype="float32"), R.Tensor((2,), dtype="float32")])
        lv2: R.Tensor((2,), dtype="float32") = cls.helper(lv1[0])
        lv3: R.Object = R.call_packed("vm.builtin.nop", ty_args=(R.Tensor((2,), dtype="float32"), R.Object))
        return lv2"#
    );
}

#[test]
fn prim_func_attrs_and_undeclared_shape_vars() {
    let n = TirVar::new("n");
    let m = TirVar::new("m");
    let f = PrimFunc {
        params: vec![
            PrimFuncParam::Buffer(crate::tir::Buffer::new(
                "A",
                vec![n.to_expr(), m.to_expr()],
                f32(),
            )),
            PrimFuncParam::Buffer(crate::tir::Buffer::new(
                "n",
                vec![PrimExpr::int(3)],
                DataType::i32(),
            )),
            PrimFuncParam::Scalar(m.clone()),
        ],
        body: crate::tir::Stmt::no_op(),
        attrs: Attrs::from_pairs([
            ("global_symbol", AttrValue::from("k")),
            ("op_pattern", AttrValue::from(0i64)),
        ]),
    };
    let text = module(vec![("k", f.into())]).to_string();
    assert!(
        text.ends_with(
            r#"    @T.prim_func
    def k(A: T.Buffer((n, "m"), "float32"), n_1: T.Buffer((3,), "int32"), m: T.int64):
        T.func_attr({"op_pattern": 0})
        T.evaluate(0)"#
        ),
        "{text}"
    );
    // `n` is declared once for the module, TVM 0.27's way; `m` is a parameter.
    assert!(
        text.contains("\nn = TypeVar(\"n\")\n@I.ir_module"),
        "{text}"
    );
    assert!(!text.contains("TypeVar(\"m\")"), "{text}");
}

#[test]
fn if_binding_prints_both_branches() {
    let c = v("c", StructInfo::tensor(vec![], DataType::bool()));
    let x = v("x", t(&[2]));
    let y = v("y", t(&[2]));
    let y1 = v("y1", t(&[2]));
    let y2 = v("y2", t(&[2]));
    let then = Expr::seq(
        vec![BindingBlock::new(vec![bind(
            &y1,
            call("relax.add", vec![e(&x), e(&x)]),
        )])],
        e(&y1),
    );
    let otherwise = Expr::seq(
        vec![BindingBlock::new(vec![bind(
            &y2,
            call("relax.multiply", vec![e(&x), e(&x)]),
        )])],
        e(&y2),
    );
    let block = BindingBlock::new(vec![bind(&y, Expr::if_(e(&c), then, otherwise))]);
    let f = public(func(vec![c, x], vec![block], &y), "main");
    assert_eq!(
        f.to_string(),
        r#"# from tvm.script import relax as R

@R.function
def main(c: R.Tensor((), dtype="bool"), x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
    if c:
        y1: R.Tensor((2,), dtype="float32") = R.add(x, x)
        y: R.Tensor((2,), dtype="float32") = y1
    else:
        y2: R.Tensor((2,), dtype="float32") = R.multiply(x, x)
        y: R.Tensor((2,), dtype="float32") = y2
    return y"#
    );
}

#[test]
fn tuples_values_and_rank0_constants() {
    let x = v("x", t(&[2]));
    let pair = StructInfo::tuple(vec![t(&[2]), StructInfo::prim(DataType::i64())]);
    let tp = v("t", pair);
    let a = v("a", t(&[2]));
    let empty = v("e", StructInfo::tuple(vec![]));
    let one = v("one", StructInfo::tuple(vec![t(&[2])]));
    let s = Var::new("s", None);
    let d = Var::new("d", None);
    let k = v("k", StructInfo::tensor(vec![], f32()));
    let b = Var::new("b", None);
    let i = Var::new("i", None);
    let p = v(
        "p",
        StructInfo::prim_value(PrimExpr::int_of(DataType::i32(), 7)),
    );
    let ef = Var::new("ef", None);
    let op = Var::new("op", None);
    let block = BindingBlock::new(vec![
        bind(
            &tp,
            Expr::tuple(vec![e(&x), Expr::prim_value(PrimExpr::int(3))]),
        ),
        bind(&a, Expr::tuple_get_item(e(&tp), 0)),
        bind(&empty, Expr::tuple(vec![])),
        bind(&one, Expr::tuple(vec![e(&x)])),
        bind(&s, Expr::string("a \"q\" \\ \n")),
        bind(&d, Expr::dtype(f32())),
        bind(&k, Expr::constant(Tensor::scalar(1.5f32))),
        bind(&b, Expr::constant(Tensor::scalar(true))),
        bind(&i, Expr::constant(Tensor::scalar(i64::MIN))),
        bind(&p, Expr::prim_value(PrimExpr::int_of(DataType::i32(), 7))),
        bind(&ef, Expr::extern_func("f")),
        bind(&op, Expr::op("relax.nn.relu")),
    ]);
    let f = public(func(vec![x], vec![block], &a), "main");
    let text = f.to_string();
    let body: Vec<&str> = text.lines().skip(5).collect();
    assert_eq!(
        body,
        [
            r#"    t: R.Tuple(R.Tensor((2,), dtype="float32"), R.Prim("int64")) = (x, R.prim_value(3))"#,
            r#"    a: R.Tensor((2,), dtype="float32") = t[0]"#,
            r#"    e: R.Tuple = ()"#,
            r#"    one: R.Tuple(R.Tensor((2,), dtype="float32")) = (x,)"#,
            r#"    s = R.str("a \"q\" \\ \n")"#,
            r#"    d = R.dtype("float32")"#,
            r#"    k: R.Tensor((), dtype="float32") = R.const(1.5, "float32")"#,
            r#"    b = R.const(True, "bool")"#,
            r#"    i = R.const(-9223372036854775808, "int64")"#,
            r#"    p: R.Prim(value=T.int32(7)) = R.prim_value(T.int32(7))"#,
            r#"    ef = R.ExternFunc("f")"#,
            r#"    op = R.nn.relu"#,
            r#"    return a"#,
        ]
    );
    // `T.int32(7)` needs the tir import.
    assert!(text.contains("# from tvm.script import tirx as T"));
}

#[test]
fn struct_info_forms() {
    let n = TirVar::new("n");
    let shape_var = v("sh", StructInfo::shape_ndim(2));
    let cases = [
        (
            StructInfo::tensor(vec![n.to_expr(), PrimExpr::int(4)], DataType::void()),
            "R.Tensor((n, 4))",
        ),
        (
            StructInfo::tensor_ndim(2, f32()),
            "R.Tensor(dtype=\"float32\", ndim=2)",
        ),
        (
            StructInfo::tensor_ndim(2, DataType::void()),
            "R.Tensor(ndim=2)",
        ),
        (
            StructInfo::tensor_ndim(UNKNOWN_NDIM, f32()),
            "R.Tensor(dtype=\"float32\")",
        ),
        (
            StructInfo::tensor_ndim(UNKNOWN_NDIM, DataType::void()),
            "R.Tensor",
        ),
        (
            StructInfo::tensor_with_shape_expr(e(&shape_var), f32()),
            "R.Tensor(sh, dtype=\"float32\")",
        ),
        (
            StructInfo::shape(vec![n.to_expr(), PrimExpr::int(2)]),
            "R.Shape([n, 2])",
        ),
        (StructInfo::shape_ndim(2), "R.Shape(ndim=2)"),
        (StructInfo::shape_ndim(UNKNOWN_NDIM), "R.Shape"),
        (StructInfo::prim(DataType::i64()), "R.Prim(\"int64\")"),
        (StructInfo::prim_value(n.to_expr()), "R.Prim(value=n)"),
        (StructInfo::object(), "R.Object"),
        (
            StructInfo::tuple(vec![StructInfo::object(), t(&[1])]),
            "R.Tuple(R.Object, R.Tensor((1,), dtype=\"float32\"))",
        ),
        (StructInfo::tuple(vec![]), "R.Tuple"),
        (
            StructInfo::func(vec![t(&[1])], StructInfo::object(), true),
            "R.Callable((R.Tensor((1,), dtype=\"float32\"),), R.Object, True)",
        ),
    ];
    for (sinfo, text) in cases {
        let mut p = super::relax::Printer::new(super::metadata::Constants::Inline);
        assert_eq!(p.sinfo(&sinfo), text);
    }
    // In a signature, every dim that mentions a symbolic var is a string.
    let mut p = super::relax::Printer::new(super::metadata::Constants::Inline);
    p.in_signature = true;
    assert_eq!(
        p.sinfo(&StructInfo::shape(vec![
            n.to_expr(),
            (&n + 1) * 2,
            PrimExpr::int(3)
        ])),
        "R.Shape([\"n\", \"(n + 1) * 2\", 3])"
    );
    assert_eq!(
        p.sinfo(&StructInfo::prim_value(n.to_expr())),
        "R.Prim(value=\"n\")"
    );
}

#[test]
fn repeated_names_get_suffixes() {
    let n = TirVar::new("x");
    let x = v("x", ts(vec![n.to_expr()]));
    let x2 = v("x", ts(vec![n.to_expr()]));
    let x3 = dv("x", ts(vec![n.to_expr()]));
    let gv = v("gv", ts(vec![n.to_expr()]));
    let blocks = vec![
        BindingBlock::new(vec![bind(&x2, call("relax.add", vec![e(&x), e(&x)]))]),
        BindingBlock::dataflow(vec![
            bind(&x3, call("relax.nn.relu", vec![e(&x2)])),
            bind(&gv, e(&x3)),
        ]),
    ];
    let f = public(func(vec![x], blocks, &gv), "main");
    let text = f.to_string();
    assert!(text.contains(r#"def main(x: R.Tensor(("x_1",), dtype="float32")) -> R.Tensor(("x_1",), dtype="float32"):"#), "{text}");
    assert!(text.contains("    x_1 = T.int64()\n"), "{text}");
    assert!(
        text.contains(r#"    x_2: R.Tensor((x_1,), dtype="float32") = R.add(x, x)"#),
        "{text}"
    );
    assert!(
        text.contains(r#"        x_3: R.Tensor((x_1,), dtype="float32") = R.nn.relu(x_2)"#),
        "{text}"
    );
    assert!(
        text.contains(
            "        gv: R.Tensor((x_1,), dtype=\"float32\") = x_3\n        R.output(gv)"
        ),
        "{text}"
    );
}

#[test]
fn nested_function_prints_as_local_def() {
    let x = v("x", t(&[2]));
    let y = v("y", t(&[2]));
    let r = v("r", t(&[2]));
    let inner = Function::new(
        vec![y.clone()],
        Expr::seq(
            vec![BindingBlock::new(vec![bind(
                &r,
                call("relax.exp", vec![e(&y)]),
            )])],
            e(&r),
        ),
        t(&[2]),
    );
    let g = v("g", inner.struct_info());
    let out = v("out", t(&[2]));
    let block = BindingBlock::new(vec![
        bind(&g, Expr::function(inner)),
        bind(&out, Expr::call(e(&g), vec![e(&x)])),
    ]);
    let f = public(func(vec![x], vec![block], &out), "main");
    assert_eq!(
        f.to_string(),
        r#"# from tvm.script import relax as R

@R.function
def main(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
    @R.function
    def g(y: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        r: R.Tensor((2,), dtype="float32") = R.exp(y)
        return r
    out: R.Tensor((2,), dtype="float32") = g(x)
    return out"#
    );
}

#[test]
fn metadata_indices_follow_first_appearance_across_functions() {
    let c0 = Expr::constant(Tensor::from_vec(&[2], vec![1i64, 2]).unwrap());
    let c1 = Expr::constant(Tensor::zeros(f32(), &[0, 3]).unwrap());
    let mk = |consts: Vec<Expr>| {
        let r = Var::new("r", None);
        Function::new(
            vec![],
            Expr::seq(
                vec![BindingBlock::new(vec![bind(&r, Expr::tuple(consts))])],
                e(&r),
            ),
            StructInfo::object(),
        )
    };
    let m = module(vec![
        ("a", mk(vec![c0.clone(), c1.clone()]).into()),
        ("b", mk(vec![c1, c0]).into()),
    ]);
    let text = m.to_string();
    assert!(
        text.contains(
            r#"r = (metadata["relax.expr.Constant"][0], metadata["relax.expr.Constant"][1])"#
        ),
        "{text}"
    );
    assert!(
        text.contains(
            r#"r = (metadata["relax.expr.Constant"][1], metadata["relax.expr.Constant"][0])"#
        ),
        "{text}"
    );
    assert!(
        text.ends_with(
            r#"metadata = {
    "relax.expr.Constant": [
        R.const([1, 2], "int64"),
        R.const([], "float32", shape=(0, 3)),
    ],
}"#
        ),
        "{text}"
    );
    assert!(
        text.contains("    @R.function(private=True)\n    def a() -> R.Object:\n"),
        "{text}"
    );
}

#[test]
fn expressions_alone() {
    let x = v("x", t(&[2]));
    assert_eq!(e(&x).to_string(), "x");
    assert_eq!(
        call("relax.add", vec![e(&x), e(&x)]).to_string(),
        "R.add(x, x)"
    );
    let c = Expr::constant(Tensor::from_vec(&[2], vec![1.0f32, 2.5]).unwrap());
    assert_eq!(c.to_string(), "R.const([1.0, 2.5], \"float32\")");
    let y = v("y", t(&[2]));
    let seq = Expr::seq(
        vec![BindingBlock::new(vec![bind(
            &y,
            call("relax.add", vec![e(&x), c]),
        )])],
        e(&y),
    );
    assert_eq!(
        seq.to_string(),
        "y: R.Tensor((2,), dtype=\"float32\") = R.add(x, R.const([1.0, 2.5], \"float32\"))\ny"
    );
    let n = TirVar::new("n");
    assert_eq!(
        Expr::shape(vec![n.to_expr(), PrimExpr::int(4)]).to_string(),
        "R.shape([n, 4])"
    );
    assert_eq!(
        Expr::prim_value(&n * 2 + 1).to_string(),
        "R.prim_value(n * 2 + 1)"
    );
}

/// Ill-formed IR still prints: no StructInfo anywhere, SeqExprs and
/// functions in argument positions, non-SeqExpr branches, a call of a call.
#[test]
fn ill_formed_ir_prints_without_panicking() {
    let x = Var::new("x", None);
    let y = Var::new("y", None);
    let inner = Function::new(vec![Var::new("z", None)], e(&x), StructInfo::object());
    let nested_seq = Expr::seq(
        vec![BindingBlock::new(vec![bind(
            &y,
            call("relax.add", vec![e(&x), e(&x)]),
        )])],
        e(&y),
    );
    let weird = Expr::call(
        call("relax.foo", vec![]),
        vec![
            nested_seq,
            Expr::function(inner),
            Expr::if_(e(&x), e(&x), e(&y)),
        ],
    );
    let w = Var::new("w", None);
    let cond_var = Var::new("w2", None);
    let body = Expr::seq(
        vec![
            BindingBlock::new(vec![bind(&w, weird.clone())]),
            BindingBlock::dataflow(vec![]),
            BindingBlock::new(vec![bind(&cond_var, Expr::if_(e(&w), e(&x), e(&y)))]),
        ],
        Expr::tuple_get_item(call("relax.bar", vec![]), 3),
    );
    let f = Function::new(vec![x.clone()], body, StructInfo::object());
    let text = f.to_string();
    assert_eq!(
        text,
        r#"# from tvm.script import relax as R

@R.function(private=True)
def main(x) -> R.Object:
    y = R.add(x, x)
    @R.function
    def f(z) -> R.Object:
        return x
    if x:
        if_result = x
    else:
        if_result = y
    w = (R.foo())(y, f, if_result)
    with R.dataflow():
        R.output()
    if w:
        w2 = x
    else:
        w2 = y
    return R.bar()[3]"#
    );
    // As bare expressions too.
    assert!(weird.to_string().ends_with("(R.foo())(y, f, if_result)"));
    let m = module(vec![("main", f.into())]);
    assert!(m.to_string().contains("    def main(x) -> R.Object:"));
    assert_eq!(IRModule::new().to_string(), "# from tvm.script import ir as I\n# from tvm.script import relax as R\n\n@I.ir_module\nclass Module:\n    pass");
}

#[test]
fn call_attributes_and_sinfo_args() {
    let n = TirVar::new("n");
    let x = v("x", t(&[2, 3]));
    let cases = [
        (
            Expr::call_op(
                "relax.sum",
                vec![e(&x)],
                Attrs::from_pairs([
                    ("axis", AttrValue::from(vec![1i64])),
                    ("keepdims", AttrValue::from(true)),
                ]),
            ),
            "R.sum(x, axis=[1], keepdims=True)",
        ),
        (
            Expr::call_op(
                "relax.astype",
                vec![e(&x)],
                Attrs::from_pairs([("dtype", DataType::float(16))]),
            ),
            "R.astype(x, dtype=\"float16\")",
        ),
        (
            Expr::call_op(
                "relax.nn.leaky_relu",
                vec![e(&x)],
                Attrs::from_pairs([("alpha", 0.1f64)]),
            ),
            "R.nn.leaky_relu(x, alpha=0.1)",
        ),
        (
            Expr::call_op(
                "relax.nn.conv2d",
                vec![e(&x)],
                Attrs::from_pairs([(
                    "strides",
                    AttrValue::Array(vec![
                        AttrValue::PrimExpr(n.to_expr() + 1),
                        AttrValue::Float(2.0),
                        AttrValue::Str("a\\b".into()),
                    ]),
                )]),
            ),
            "R.nn.conv2d(x, strides=[n + 1, 2.0, \"a\\\\b\"])",
        ),
        (
            Expr::call_full(
                Expr::op("relax.reshape"),
                vec![e(&x)],
                Attrs::new(),
                vec![t(&[6])],
            ),
            "R.reshape(x, sinfo_args=(R.Tensor((6,), dtype=\"float32\"),))",
        ),
        (
            Expr::call_full(
                Expr::global_var(GlobalVar::new("f")),
                vec![],
                Attrs::new(),
                vec![t(&[6]), StructInfo::object()],
            ),
            "cls.f(sinfo_args=(R.Tensor((6,), dtype=\"float32\"), R.Object))",
        ),
        (
            Expr::call_full(
                Expr::op("relax.call_tir"),
                vec![Expr::global_var(GlobalVar::new("g"))],
                Attrs::new(),
                vec![],
            ),
            "R.call_tir(cls.g)",
        ),
        (
            Expr::call_full(Expr::op("relax.call_tir"), vec![], Attrs::new(), vec![]),
            "R.call_tir()",
        ),
        (
            Expr::call(Expr::extern_func("p"), vec![]),
            "R.call_packed(\"p\")",
        ),
    ];
    for (expr, text) in cases {
        assert_eq!(expr.to_string(), text);
    }
}

#[test]
fn nested_function_declares_its_own_symbolic_vars() {
    let n = TirVar::new("n");
    let m = TirVar::new("m");
    let x = v("x", ts(vec![n.to_expr()]));
    let y = v("y", ts(vec![m.to_expr()]));
    let inner = Function::new(
        vec![y.clone()],
        Expr::seq(vec![], Expr::shape(vec![m.to_expr(), n.to_expr()])),
        StructInfo::shape(vec![m.to_expr(), n.to_expr()]),
    );
    let g = Var::new("g", None);
    let block = BindingBlock::new(vec![bind(&g, Expr::function(inner))]);
    let f = public(func(vec![x], vec![block], &g), "main");
    assert_eq!(
        f.to_string(),
        r#"# from tvm.script import relax as R
# from tvm.script import tirx as T

@R.function
def main(x: R.Tensor(("n",), dtype="float32")) -> R.Object:
    n = T.int64()
    @R.function
    def g(y: R.Tensor(("m",), dtype="float32")) -> R.Shape(["m", "n"]):
        m = T.int64()
        return R.shape([m, n])
    return g"#
    );
}

#[test]
fn constant_elements_print_exactly() {
    let big = Expr::constant(Tensor::from_vec(&[2], vec![i64::MAX, -1]).unwrap());
    assert_eq!(
        big.to_string(),
        "R.const([9223372036854775807, -1], \"int64\")"
    );
    let u = Expr::constant(Tensor::from_vec(&[1, 2], vec![255u8, 0]).unwrap());
    assert_eq!(u.to_string(), "R.const([[255, 0]], \"uint8\")");
    let b = Expr::constant(Tensor::from_vec(&[2], vec![true, false]).unwrap());
    assert_eq!(b.to_string(), "R.const([True, False], \"bool\")");
    let d = Expr::constant(Tensor::from_vec(&[2], vec![0.1f64, 1e300]).unwrap());
    assert_eq!(d.to_string(), "R.const([0.1, 1e300], \"float64\")");
    let z = Expr::constant(Tensor::zeros(DataType::i32(), &[3, 0]).unwrap());
    assert_eq!(
        z.to_string(),
        "R.const([[], [], []], \"int32\", shape=(3, 0))"
    );
}

#[test]
fn a_module_prints_with_its_constants_inline_for_tvm() {
    let text = include_str!("../../tests/roundtrip/constants.py");
    let m: IRModule = text.parse().unwrap();
    let inline = crate::printer::module_to_string_inline(&m);
    assert!(!inline.contains("metadata"), "{inline}");
    assert!(
        inline.contains(r#"R.const([-9223372036854775807, 42], "int64")"#),
        "{inline}"
    );
    let back: IRModule = inline.parse().unwrap();
    crate::ir::structural_equal::structural_equal_report(&m, &back).unwrap();
}

#[test]
fn module_attrs_print_parse_and_compare() {
    let text = r#"# from tvm.script import ir as I
# from tvm.script import relax as R

@I.ir_module
class Module:
    I.module_attrs({"foo": "bar", "n": 3})
    @R.function
    def main(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        return x"#;
    let m: IRModule = text.parse().unwrap();
    assert_eq!(
        m.attrs().get("foo").and_then(AttrValue::as_str),
        Some("bar")
    );
    let printed = m.to_string();
    assert!(
        printed.contains("class Module:\n    I.module_attrs({\"foo\": \"bar\", \"n\": 3})\n"),
        "{printed}"
    );
    let back: IRModule = printed.parse().unwrap();
    crate::ir::structural_equal::structural_equal_report(&m, &back).unwrap();
    assert_eq!(
        crate::ir::structural_equal::structural_hash(&m),
        crate::ir::structural_equal::structural_hash(&back)
    );
    // Attributes are part of the module: without them it differs.
    let bare = m.clone().with_attrs(Attrs::new());
    let err = crate::ir::structural_equal::structural_equal_report(&m, &bare).unwrap_err();
    assert!(err.to_string().contains("module attrs[\"foo\"]"), "{err}");
    assert_ne!(
        crate::ir::structural_equal::structural_hash(&m),
        crate::ir::structural_equal::structural_hash(&bare)
    );
}
