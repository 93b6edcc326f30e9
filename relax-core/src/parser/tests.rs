//! Parser tests: the IR each form lowers to, one test per error kind with its
//! location, the seed listings in their own spellings, and a no-panic test
//! over truncated and mutated round-trip files.

use super::*;
use crate::ir::function::attr;
use crate::ir::structural_equal_report;
use crate::ir::{AttrValue, Binding, ExprKind, PrimExprKind, StructInfoKind};
use crate::tir::PrimFuncParam;

fn parse(src: &str) -> IRModule {
    match parse_module(src) {
        Ok(m) => m,
        Err(errs) => panic!(
            "{}",
            errs.iter()
                .map(|e| e.render("test.py", src))
                .collect::<Vec<_>>()
                .join("\n")
        ),
    }
}

/// `(code, line, col, message)` of each error.
fn errors(src: &str) -> Vec<(&'static str, usize, usize, String)> {
    match parse_module(src) {
        Ok(_) => panic!("expected errors, the text parsed:\n{src}"),
        Err(errs) => errs
            .into_iter()
            .map(|e| {
                let sp = e.span.expect("every parser error has a span");
                let (l, c) = sp.line_col(src);
                (e.code, l, c, e.message)
            })
            .collect(),
    }
}

/// The single error of `src`.
fn error(src: &str) -> (&'static str, usize, usize, String) {
    let mut e = errors(src);
    assert_eq!(e.len(), 1, "{e:?}");
    e.remove(0)
}

/// A module with one function `main` whose body is `body` (indented 8).
fn module_with(sig: &str, body: &str) -> String {
    format!(
        "@I.ir_module\nclass Module:\n    @R.function\n    def main({sig}):\n{}",
        body.lines()
            .map(|l| format!("        {l}\n"))
            .collect::<String>()
    )
}

const EWISE: &str = r#"
# from tvm.script import ir as I
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((3, 4), dtype="float32"), y: R.Tensor((3, 4), dtype="float32")) -> R.Tensor((3, 4), dtype="float32"):
        with R.dataflow():
            lv0: R.Tensor((3, 4), dtype="float32") = R.multiply(x, y)
            gv0: R.Tensor((3, 4), dtype="float32") = R.add(lv0, y)
            R.output(gv0)
        return gv0
"#;

#[test]
fn dataflow_block_with_outputs() {
    let m = parse(EWISE);
    let f = m.get_relax("main").expect("main");
    assert_eq!(f.global_symbol(), Some("main"));
    assert!(f.is_pure);
    assert_eq!(f.params.len(), 2);
    let seq = f.body.as_seq().expect("a SeqExpr body");
    assert_eq!(seq.blocks.len(), 1);
    let block = &seq.blocks[0];
    assert!(block.is_dataflow);
    let vars: Vec<_> = block.bindings.iter().map(Binding::var).collect();
    assert!(vars[0].is_dataflow(), "lv0 is a DataflowVar");
    assert!(!vars[1].is_dataflow(), "gv0 is output");
    assert_eq!(
        block.bindings[0].value().call_op_name(),
        Some("relax.multiply")
    );
    // The add uses the very variable the multiply bound.
    let add = block.bindings[1].value().as_call().unwrap();
    assert_eq!(add.args[0].as_var(), Some(vars[0]));
    assert_eq!(add.args[1].as_var(), Some(&f.params[1]));
    assert_eq!(seq.body.as_var(), Some(vars[1]));
    assert_eq!(
        vars[1].struct_info().unwrap().to_string(),
        "R.Tensor((3, 4), dtype=\"float32\")"
    );
    assert!(f.body.struct_info().is_some());
}

#[test]
fn function_decorators_and_attributes() {
    let src = r#"
@I.ir_module
class Module:
    @R.function(pure=False, private=True)
    def f(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        R.func_attr({"Primitive": 1, "relax.force_pure": True, "name": "f", "w": 0.5, "l": [1, None]})
        return x

    @R.function(private=True)
    def g(x: R.Object) -> R.Object:
        return x
"#;
    let m = parse(src);
    let f = m.get_relax("f").unwrap();
    assert!(!f.is_pure);
    assert_eq!(f.global_symbol(), None);
    let attrs: Vec<_> = f
        .attrs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    assert_eq!(
        attrs,
        vec![
            ("Primitive".to_string(), AttrValue::Int(1)),
            (attr::FORCE_PURE.to_string(), AttrValue::Bool(true)),
            ("name".to_string(), AttrValue::Str("f".into())),
            ("w".to_string(), AttrValue::Float(0.5)),
            (
                "l".to_string(),
                AttrValue::Array(vec![AttrValue::Int(1), AttrValue::None])
            ),
        ]
    );
    assert!(m.get_relax("g").unwrap().is_pure);
}

#[test]
fn symbolic_vars_are_shared_across_the_signature_and_body() {
    let src = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n * 2",), dtype="float32"), y: R.Tensor(("n", "m"), dtype="float32")) -> R.Tensor(("n",), dtype="float32"):
        n = T.int64()
        k = T.int64()
        z: R.Tensor((n, m), dtype="float32") = R.match_cast(y, R.Tensor((n, m), dtype="float32"))
        w: R.Tensor((k,), dtype="float32") = R.match_cast(x, R.Tensor((k,), dtype="float32"))
        return w
"#;
    let m = parse(src);
    let f = m.get_relax("main").unwrap();
    let x_dim = f.params[0]
        .struct_info()
        .unwrap()
        .as_tensor()
        .unwrap()
        .shape_values()
        .unwrap()[0]
        .clone();
    let y_dims = f.params[1]
        .struct_info()
        .unwrap()
        .as_tensor()
        .unwrap()
        .shape_values()
        .unwrap()
        .to_vec();
    let n = y_dims[0].as_var().expect("n is a var").clone();
    // `"n * 2"` refers to the `n` the second parameter declares.
    assert_eq!(x_dim, PrimExpr::var(&n) * 2);
    let ret = f
        .ret_struct_info
        .as_tensor()
        .unwrap()
        .shape_values()
        .unwrap()[0]
        .clone();
    assert_eq!(ret.as_var(), Some(&n));
    let seq = f.body.as_seq().unwrap();
    let Binding::MatchCast(mc) = &seq.blocks[0].bindings[0] else {
        panic!("a match_cast")
    };
    assert_eq!(
        mc.struct_info.as_tensor().unwrap().shape_values().unwrap(),
        y_dims.as_slice()
    );
    let Binding::MatchCast(mc2) = &seq.blocks[0].bindings[1] else {
        panic!("a match_cast")
    };
    let k = mc2.struct_info.tir_vars();
    assert_eq!(k.len(), 1);
    assert_eq!(k[0].name(), "k");
    assert_ne!(k[0], n);
}

#[test]
fn match_cast_pattern_declares_bare_names() {
    let src = module_with(
        "x: R.Tensor(ndim=2)",
        "y: R.Tensor((a, b + 0), \"float32\") = R.match_cast(x, R.Tensor((a, b), \"float32\"))\nreturn y",
    );
    // The annotation is read before the pattern, and only the pattern
    // declares bare names: `b` is undefined in the annotation.
    let e = errors(&src);
    assert!(
        e.iter()
            .any(|(code, _, _, m)| *code == "undefined-symbolic-var" && m.contains("`b`")),
        "{e:?}"
    );
    let src = module_with(
        "x: R.Tensor(ndim=2)",
        "y = R.match_cast(x, R.Tensor((a, b), \"float32\"))\nz: R.Tensor((a, b), \"float32\") = y\nreturn z",
    );
    let m = parse(&src);
    let f = m.get_relax("main").unwrap();
    assert_eq!(
        f.ret_struct_info.to_string(),
        "R.Tensor(dtype=\"float32\", ndim=2)"
    );
}

#[test]
fn if_else_binds_the_branch_results() {
    let src = module_with(
        "c: R.Tensor((), \"bool\"), x: R.Tensor((2,), \"float32\")",
        "if c:\n    lv = R.add(x, x)\n    y: R.Tensor((2,), \"float32\") = lv\nelse:\n    y: R.Tensor((2,), \"float32\") = x\nreturn y",
    );
    let m = parse(&src);
    let f = m.get_relax("main").unwrap();
    let seq = f.body.as_seq().unwrap();
    let b = &seq.blocks[0].bindings[0];
    assert_eq!(b.var().name_hint(), "y");
    let ExprKind::If(i) = b.value().kind() else {
        panic!("an If")
    };
    let t = i.true_branch.as_seq().expect("a SeqExpr branch");
    assert_eq!(t.blocks[0].bindings.len(), 1);
    assert_eq!(t.body.as_var().map(|v| v.name_hint()), Some("lv"));
    let e = i.false_branch.as_seq().unwrap();
    assert!(e.blocks.is_empty());
    assert_eq!(e.body.as_var(), Some(&f.params[1]));
}

#[test]
fn calls_and_special_forms() {
    let src = r#"
@I.ir_module
class Module:
    @T.prim_func
    def k(A: T.Buffer((n, 4), "float32"), B: T.Buffer((n, 4), "float32"), n: T.int64):
        T.evaluate(0)

    @R.function(pure=False)
    def main(x: R.Tensor(("n", 4), dtype="float32")) -> R.Tensor(("n", 4), dtype="float32"):
        n = T.int64()
        cls = Module
        a = R.call_tir(cls.k, (x,), out_sinfo=R.Tensor((n, 4), dtype="float32"), tir_vars=R.shape([n]))
        b = R.call_packed("ext", a, R.str("s"), sinfo_args=R.Tensor((n, 4), dtype="float32"))
        c = R.call_dps_packed("dps", (b, x), out_sinfo=[R.Tensor((n, 4), dtype="float32"), R.Tensor((n,), dtype="float32")])
        d = R.strided_slice(b, axes=[0], begin=[0], end=[n * 2])
        t = (R.prim_value(n + 1), R.dtype("f32"), R.ExternFunc("g"), R.const(2.5, "float16"))
        e = t[2]
        return b
"#;
    let m = parse(src);
    let pf = m.get("k").unwrap().as_prim().unwrap();
    let PrimFuncParam::Scalar(n) = &pf.params[2] else {
        panic!("a scalar")
    };
    let PrimFuncParam::Buffer(buffer) = &pf.params[0] else {
        panic!("a buffer")
    };
    let shape = buffer.shape();
    assert_eq!(
        shape[0].as_var(),
        Some(n),
        "the buffer shape uses the scalar parameter"
    );
    let f = m.get_relax("main").unwrap();
    let bs = &f.body.as_seq().unwrap().blocks[0].bindings;
    let call = |i: usize| bs[i].value().as_call().unwrap().clone();
    let a = call(0);
    assert_eq!(bs[0].value().call_op_name(), Some("relax.call_tir"));
    assert!(matches!(a.args[0].kind(), ExprKind::GlobalVar(g) if g.name_hint() == "k"));
    assert!(matches!(a.args[1].kind(), ExprKind::Tuple(f) if f.len() == 1));
    assert!(matches!(a.args[2].kind(), ExprKind::ShapeExpr(v) if v.len() == 1));
    assert_eq!(a.sinfo_args.len(), 1);
    assert_eq!(
        bs[0].var().struct_info().unwrap().to_string(),
        "R.Tensor((n, 4), dtype=\"float32\")"
    );
    let b = call(1);
    assert!(matches!(b.op.kind(), ExprKind::ExternFunc(s) if s == "ext"));
    assert!(matches!(b.args[1].kind(), ExprKind::StringImm(s) if s == "s"));
    let c = call(2);
    assert!(matches!(c.args[0].kind(), ExprKind::ExternFunc(s) if s == "dps"));
    assert_eq!(c.sinfo_args.len(), 2);
    let d = call(3);
    let keys: Vec<_> = d.attrs.iter().map(|(k, _)| k.to_string()).collect();
    // The op's schema completes the attributes with their defaults, in
    // declaration order.
    assert_eq!(keys, ["axes", "begin", "end", "strides", "assume_inbound"]);
    assert!(
        matches!(d.attrs.get("end"), Some(AttrValue::Array(v)) if matches!(v[0], AttrValue::PrimExpr(_)))
    );
    let ExprKind::Tuple(t) = bs[4].value().kind() else {
        panic!("a tuple")
    };
    assert!(matches!(t[0].kind(), ExprKind::PrimValue(_)));
    assert!(matches!(t[1].kind(), ExprKind::DataTypeImm(d) if *d == DataType::f32()));
    assert!(
        matches!(t[3].kind(), ExprKind::Constant(c) if c.dtype() == DataType::float(16) && c.ndim() == 0)
    );
    assert!(matches!(bs[5].value().kind(), ExprKind::TupleGetItem(_, 2)));
}

#[test]
fn metadata_may_follow_its_uses() {
    let src = module_with(
        "",
        "c = metadata[\"relax.expr.Constant\"][1]\nreturn c",
    ) + "\nmetadata = {\"relax.expr.Constant\": [R.const([1, 2], \"int32\"), R.const([[True], [False]], \"bool\"), R.const([], \"float32\", shape=(3, 0))]}\n";
    let m = parse(&src);
    let f = m.get_relax("main").unwrap();
    let c = f.body.as_seq().unwrap().blocks[0].bindings[0]
        .value()
        .clone();
    let ExprKind::Constant(t) = c.kind() else {
        panic!("a constant")
    };
    assert_eq!(t.shape(), &[2, 1]);
    assert_eq!(t.to_vec::<bool>().unwrap(), vec![true, false]);
    assert_eq!(
        f.ret_struct_info.to_string(),
        "R.Tensor((2, 1), dtype=\"bool\")"
    );
}

#[test]
fn nested_functions_capture_and_recurse() {
    let src = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        @R.function
        def inner(y: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
            z: R.Tensor((2,), dtype="float32") = R.add(x, y)
            w = inner(z)
            return w
        r = inner(x)
        return r
"#;
    let m = parse(src);
    let f = m.get_relax("main").unwrap();
    let bs = &f.body.as_seq().unwrap().blocks[0].bindings;
    let inner_var = bs[0].var().clone();
    let inner = bs[0].value().as_function().expect("a function");
    assert_eq!(
        inner.global_symbol(),
        None,
        "nested functions are not exported"
    );
    let ibs = &inner.body.as_seq().unwrap().blocks[0].bindings;
    assert_eq!(
        ibs[0].value().as_call().unwrap().args[0].as_var(),
        Some(&f.params[0])
    );
    assert_eq!(
        ibs[1].value().as_call().unwrap().op.as_var(),
        Some(&inner_var)
    );
    assert_eq!(
        bs[1].value().as_call().unwrap().op.as_var(),
        Some(&inner_var)
    );
    assert!(matches!(
        inner_var.struct_info().unwrap().kind(),
        StructInfoKind::Func(_)
    ));
}

#[test]
fn a_nested_signature_declares_its_own_symbolic_variables() {
    // As in TVM: the inner `"n"` is a new variable, and `n` in the inner
    // body is that one; the outer `n` is still the outer function's.
    let src = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n",), dtype="float32")) -> R.Tensor(("n",), dtype="float32"):
        n = T.int64()
        @R.function
        def inner(y: R.Tensor(("n",), dtype="float32")) -> R.Tensor(("n",), dtype="float32"):
            z: R.Tensor((n,), dtype="float32") = R.multiply(y, y)
            return z
        r: R.Tensor((n,), dtype="float32") = x
        return r
"#;
    let m = parse(src);
    let f = m.get_relax("main").unwrap();
    let dim = |v: &crate::ir::Var| match v.struct_info().unwrap().kind() {
        StructInfoKind::Tensor(t) => t.shape_values().unwrap()[0].clone(),
        _ => panic!("a tensor"),
    };
    let inner = f.body.as_seq().unwrap().blocks[0].bindings[0]
        .value()
        .as_function()
        .unwrap()
        .clone();
    let (outer_n, inner_n) = (dim(&f.params[0]), dim(&inner.params[0]));
    assert_ne!(outer_n, inner_n);
    let z = inner.body.as_seq().unwrap().blocks[0].bindings[0]
        .var()
        .clone();
    assert_eq!(dim(&z), inner_n);
}

#[test]
fn forward_references_and_derived_return_types() {
    let src = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 2), "float32")):
        y = Module.helper(x)
        return y

    @R.function
    def helper(x: R.Tensor((2, 2), "float32")):
        return x
"#;
    let m = parse(src);
    let main = m.get_relax("main").unwrap();
    assert_eq!(
        main.ret_struct_info.to_string(),
        "R.Tensor((2, 2), dtype=\"float32\")"
    );
}

#[test]
fn prim_expressions_follow_python_precedence() {
    let mut vars = HashMap::new();
    let s = parse_struct_info(
        "R.Shape([n - (m - 1), n - m - 1, (n + 1) * 2, n * -2, T.min(n, m) // 2, T.Select(n < m and not n == 0, n, m)])",
        &mut vars,
    )
    .unwrap();
    assert_eq!(
        s.to_string(),
        "R.Shape([n - (m - 1), n - m - 1, (n + 1) * 2, n * (-2), T.min(n, m) // 2, T.Select(n < m and not n == 0, n, m)])"
    );
    assert_eq!(vars.len(), 2);
    let p = parse_struct_info("R.Prim(value=T.int32(3) + k)", &mut HashMap::new());
    assert!(
        p.is_err(),
        "int32 literal + int64 var mixes dtypes only with a cast"
    );
    let mut vars = HashMap::new();
    vars.insert("k".to_string(), TirVar::with_dtype("k", DataType::i32()));
    let p = parse_struct_info("R.Prim(value=k + 1)", &mut vars).unwrap();
    let v = p.as_prim().unwrap().value.clone().unwrap();
    assert_eq!(v.dtype(), DataType::i32());
    let PrimExprKind::Add(_, one) = v.kind() else {
        panic!("an add")
    };
    assert_eq!(
        one.dtype(),
        DataType::i32(),
        "the literal takes the var's dtype"
    );
}

use crate::ir::{DataType, PrimExpr};

// ----- the seeds, in their own spellings ------------------------------------

/// The MLC chapter's first module, as the seed writes it (`@tvm.script`,
/// positional dtypes, unannotated bindings).
const SEED_EWISE: &str = r#"
@tvm.script.ir_module
class MyModule:
    @R.function
    def main(x: R.Tensor((3, 4), "float32"), y: R.Tensor((3, 4), "float32")):
        with R.dataflow():
            lv0 = R.multiply(x, y)
            gv0 = R.add(lv0, y)
            R.output(gv0)
        return gv0
"#;

/// The fused MLP of the seed, with its prim_funcs reduced to signatures and
/// small metadata constants (the seed prints none).
const SEED_FUSED: &str = r#"
@I.ir_module
class Module:
    @T.prim_func
    def add(rxplaceholder: T.Buffer((T.int64(1), T.int64(3)), "float32"), rxplaceholder_1: T.Buffer((T.int64(3),), "float32"), T_add: T.Buffer((T.int64(1), T.int64(3)), "float32")):
        T.func_attr({"tir.noalias": T.bool(True)})
        T.evaluate(0)

    @T.prim_func
    def matmul(rxplaceholder: T.Buffer((T.int64(1), T.int64(4)), "float32"), rxplaceholder_1: T.Buffer((T.int64(4), T.int64(3)), "float32"), T_matmul_NN: T.Buffer((T.int64(1), T.int64(3)), "float32")):
        T.func_attr({"layout_free_buffers": [1], "tir.noalias": T.bool(True)})
        T.evaluate(0)

    @R.function
    def fused_matmul_add0(x: R.Tensor((1, 4), dtype="float32"), w: R.Tensor((4, 3), dtype="float32"), b: R.Tensor((3,), dtype="float32")) -> R.Tensor((1, 3), dtype="float32"):
        R.func_attr({"Primitive": 1})
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.matmul, (x, w), out_sinfo=R.Tensor((1, 3), dtype="float32"))
            gv = R.call_tir(cls.add, (lv, b), out_sinfo=R.Tensor((1, 3), dtype="float32"))
            R.output(gv)
        return gv

    @R.function
    def main(x: R.Tensor((1, 4), dtype="float32")) -> R.Tensor((1, 3), dtype="float32"):
        cls = Module
        with R.dataflow():
            lv2: R.Tensor((1, 3), dtype="float32") = cls.fused_matmul_add0(x, metadata["relax.expr.Constant"][0], metadata["relax.expr.Constant"][1])
            gv: R.Tensor((1, 3), dtype="float32") = lv2
            R.output(gv)
        return gv

metadata = {
    "relax.expr.Constant": [
        R.const([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0], [1.5, 2.5, 3.5]], "float32"),
        R.const([0.5, 0.25, 0.125], "float32"),
    ],
}
"#;

#[test]
fn seed_listings_parse_in_their_own_spelling() {
    let m = parse(SEED_EWISE);
    let f = m.get_relax("main").unwrap();
    assert_eq!(
        f.params[0].struct_info().unwrap().to_string(),
        "R.Tensor((3, 4), dtype=\"float32\")"
    );
    let block = &f.body.as_seq().unwrap().blocks[0];
    assert_eq!(block.bindings.len(), 2);
    assert!(block.bindings[0].var().is_dataflow());
    // Printed, it is canonical text that prints back unchanged.
    let printed = m.to_string();
    assert!(printed.contains("lv0: "), "{printed}");
    assert_eq!(printed, parse(&printed).to_string());

    let m = parse(SEED_FUSED);
    let fused = m.get_relax("fused_matmul_add0").unwrap();
    assert_eq!(fused.attrs.get(attr::PRIMITIVE), Some(&AttrValue::Int(1)));
    let bs = &fused.body.as_seq().unwrap().blocks[0].bindings;
    assert_eq!(
        bs[0].var().struct_info().unwrap().to_string(),
        "R.Tensor((1, 3), dtype=\"float32\")",
        "call_tir's StructInfo comes from out_sinfo"
    );
    let pf = m.get("add").unwrap().as_prim().unwrap();
    assert_eq!(pf.attrs.get("tir.noalias"), Some(&AttrValue::Bool(true)));
    let printed = m.to_string();
    assert_eq!(parse(&printed).to_string(), printed);
}

// ----- errors: one per kind, with its location -------------------------------

#[test]
fn syntax_error_names_expected_and_found() {
    let (code, l, c, m) = error("@I.ir_module\nclass Module:\n    @R.function\n    def main(x: R.Tensor) -> R.Tensor\n        return x\n");
    assert_eq!((code, l, c), ("syntax-error", 4, 38));
    assert_eq!(m, "expected `:`, found end of line");
    let (code, l, c, m) = error(&module_with("x: R.Tensor", "y = R.add(x, x]\nreturn y"));
    assert_eq!((code, l, c), ("syntax-error", 5, 23));
    assert_eq!(m, "expected `)` to close the `(` at 5:18, found `]`");
}

#[test]
fn undefined_variable() {
    let (code, l, c, m) = error(&module_with("x: R.Tensor", "y = R.add(x, q)\nreturn y"));
    assert_eq!((code, l, c), ("undefined-variable", 5, 22));
    assert_eq!(m, "expected a variable, found undefined `q`");
}

#[test]
fn undefined_symbolic_variable() {
    let (code, l, c, m) = error(&module_with(
        "x: R.Tensor((\"n\",), \"float32\")",
        "y: R.Tensor((m,), \"float32\") = x\nreturn y",
    ));
    assert_eq!((code, l, c), ("undefined-symbolic-var", 5, 22));
    assert!(
        m.starts_with("expected a symbolic variable, found undefined `m`"),
        "{m}"
    );
    // Inside a compound string dimension, the span points into the string.
    let (code, l, c, m) = error(&module_with("x: R.Tensor((\"k * 2\",))", "return x"));
    assert_eq!((code, l, c), ("undefined-symbolic-var", 4, 28));
    assert!(m.contains("`k`"), "{m}");
}

/// Relax's scalar expressions: integer arithmetic without casts or `/`.
#[test]
fn relax_scalar_errors() {
    let prim = |v: &str| {
        error(&module_with(
            "x: R.Tensor((\"n\",), \"float32\")",
            &format!("y = R.prim_value({v})\nreturn x"),
        ))
        .3
    };
    assert_eq!(
        prim("T.min(n, T.int8(1))"),
        "expected arguments of `T.min` of one dtype, found `n` of int64 and `T.int8(1)` of int8"
    );
    assert_eq!(
        prim("n + T.int8(1)"),
        "expected operands of `+` of one dtype, found `n` of int64 and `T.int8(1)` of int8"
    );
    assert_eq!(
        prim("T.int32(n)"),
        "expected a literal of dtype int32 in `T.int32(…)`, found `n` of dtype int64 (casts are not supported)"
    );
    assert_eq!(
        prim("n / 2"),
        "expected one of `+ - * // %` or a comparison, found `/` (use `//` for floor division)"
    );
    assert!(prim("T.exp(n)").starts_with("expected `T.min`, `T.max`, `T.Select` or a dtype"));
    assert!(prim("T.int32()").starts_with("expected a value in `T.int32(…)`, found none"));
}

#[test]
fn undefined_function() {
    let (code, l, c, m) = error(&module_with("x: R.Tensor", "y = cls.nope(x)\nreturn y"));
    assert_eq!((code, l, c), ("undefined-function", 5, 13));
    assert_eq!(
        m,
        "expected a function of the module, found undefined `nope`"
    );
}

#[test]
fn duplicate_function() {
    let src = "@I.ir_module\nclass Module:\n    @R.function\n    def f(x: R.Object):\n        return x\n\n    @R.function\n    def f(x: R.Object):\n        return x\n";
    let errs = parse_module(src).unwrap_err();
    assert_eq!(errs.len(), 1);
    let e = &errs[0];
    assert_eq!(e.code, "duplicate-function");
    assert_eq!(e.span.unwrap().line_col(src), (8, 9));
    assert_eq!(e.message, "duplicate function `f` in the module");
    assert_eq!(e.notes, vec!["first defined at 4:9".to_string()]);
}

#[test]
fn unknown_struct_info() {
    let (code, l, c, m) = error(&module_with("x: R.Tensr((2,), \"float32\")", "return x"));
    assert_eq!((code, l, c), ("unknown-struct-info", 4, 17));
    assert_eq!(
        m,
        "expected a struct info such as R.Tensor, R.Shape, R.Prim, R.Tuple, R.Callable or R.Object, found a call of `R.Tensr`"
    );
}

#[test]
fn missing_parameter_annotation() {
    let (code, l, c, m) = error(&module_with("x: R.Tensor, y", "return x"));
    assert_eq!((code, l, c), ("missing-annotation", 4, 27));
    assert_eq!(
        m,
        "expected a struct info annotation on parameter `y`, found none"
    );
}

#[test]
fn annotation_incompatible_with_value() {
    let (code, l, c, m) = error(&module_with(
        "x: R.Tensor((3, 5), \"float32\")",
        "y: R.Tensor((3, 4), \"float32\") = x\nreturn y",
    ));
    assert_eq!((code, l, c), ("struct-info-mismatch", 5, 12));
    assert_eq!(
        m,
        "annotation R.Tensor((3, 4), dtype=\"float32\") is incompatible with the value's R.Tensor((3, 5), dtype=\"float32\")"
    );
    // A less precise value is a run-time check, not an error.
    parse(&module_with(
        "x: R.Tensor(ndim=2)",
        "y: R.Tensor((3, 4), \"float32\") = x\nreturn y",
    ));
}

#[test]
fn dataflow_var_used_outside_its_block() {
    let (code, l, c, m) = error(&module_with(
        "x: R.Tensor",
        "with R.dataflow():\n    lv = x\n    gv = lv\n    R.output(gv)\nreturn lv",
    ));
    assert_eq!((code, l, c), ("dataflow-var-escapes", 9, 16));
    assert!(
        m.contains("dataflow variable `lv` used outside its dataflow block"),
        "{m}"
    );
}

#[test]
fn if_needs_else_and_matching_results() {
    let (code, l, c, m) = error(&module_with(
        "c: R.Prim(\"bool\"), x: R.Object",
        "if c:\n    y = x\nreturn y",
    ));
    assert_eq!((code, l, c), ("syntax-error", 5, 9));
    assert!(m.starts_with("expected an `else` branch"), "{m}");
    let e = errors(&module_with(
        "c: R.Prim(\"bool\"), x: R.Object",
        "if c:\n    y = x\nelse:\n    z = x\nreturn y",
    ));
    assert_eq!((e[0].0, e[0].1, e[0].2), ("syntax-error", 8, 13));
    assert!(
        e[0].3.contains("`y`") && e[0].3.contains("`z`"),
        "{}",
        e[0].3
    );
}

#[test]
fn invalid_dtype_and_constant() {
    let (code, l, c, m) = error(&module_with("x: R.Tensor((2,), \"flaot32\")", "return x"));
    assert_eq!((code, l, c), ("invalid-dtype", 4, 32));
    assert!(m.starts_with("unknown data type `flaot32`"), "{m}");
    let (code, l, c, m) = error(&module_with(
        "",
        "c = R.const([1, 300], \"uint8\")\nreturn c",
    ));
    assert_eq!((code, l, c), ("invalid-constant", 5, 25));
    assert_eq!(m, "expected a value of dtype uint8, found `300`");
    let (code, _, _, m) = error(&module_with(
        "",
        "c = R.const([[1, 2], [3]], \"int32\")\nreturn c",
    ));
    assert_eq!(code, "invalid-constant");
    assert!(m.starts_with("expected a rectangular nested list"), "{m}");
}

#[test]
fn missing_return_and_undefined_metadata() {
    let (code, l, c, m) = error(&module_with("x: R.Tensor", "y = x"));
    assert_eq!((code, l, c), ("missing-return", 4, 5));
    assert_eq!(
        m,
        "expected a `return` at the end of function `main`, found none"
    );
    let (code, l, c, m) = error(&module_with(
        "",
        "return metadata[\"relax.expr.Constant\"][0]",
    ));
    assert_eq!((code, l, c), ("undefined-metadata", 5, 16));
    assert!(m.contains("metadata"), "{m}");
}

#[test]
fn independent_errors_are_all_reported() {
    let e = errors(&module_with(
        "x: R.Tensor((\"n\",), \"float32\"), y",
        "a = R.add(x, q1)\nb = R.add(a, q2)\nc: R.Tensor((m,)) = x\nreturn b",
    ));
    let codes: Vec<_> = e.iter().map(|e| e.0).collect();
    assert_eq!(
        codes,
        [
            "missing-annotation",
            "undefined-variable",
            "undefined-variable",
            "undefined-symbolic-var"
        ],
        "{e:?}"
    );
}

#[test]
fn from_str_gives_compile_errors() {
    let r: Result<IRModule, Error> = "class X:\n    pass\n".parse();
    let Err(Error::Compile(ds)) = r else {
        panic!("expected a compile error")
    };
    assert!(ds.iter().all(|d| d.span.is_some()));
    let m: IRModule = EWISE.parse().unwrap();
    assert_eq!(m.len(), 1);
}

// ----- robustness -------------------------------------------------------------

/// A small deterministic generator (xorshift) for the mutations.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn roundtrip_files() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/roundtrip");
    let mut files: Vec<(String, String)> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter(|e| e.path().extension().is_some_and(|x| x == "py"))
                .filter_map(|e| {
                    let text = std::fs::read_to_string(e.path()).ok()?;
                    Some((e.file_name().to_string_lossy().into_owned(), text))
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// Snippets spliced into texts: tokens the grammar cares about.
const SNIPPETS: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    ":",
    ",",
    "=",
    "\"",
    "'",
    "\n",
    "\n    ",
    "    ",
    "R.",
    "T.",
    "cls.",
    "metadata",
    "R.Tensor",
    "R.Tensor((",
    "R.match_cast(",
    "with R.dataflow():",
    "R.output()",
    "if x:",
    "else:",
    "return",
    "@R.function",
    "def f(",
    "-",
    "//",
    "9999999999999999999999",
    "\\",
    "#",
    "\u{e9}",
    "\u{1F600}",
    "\t",
    "None",
    "True",
    "-1",
    "(((((",
    ")))))",
    "\"n\"",
    "T.int64()",
    "R.const(",
    "[[",
    "]]",
    ".",
    "0.5e",
    "0x",
    "**",
    "lambda",
];

fn check_no_panic(name: &str, text: &str) {
    let result = std::panic::catch_unwind(|| {
        if let Ok(m) = parse_module(text) {
            // Whatever parses must print, and the print must parse again.
            let printed = m.to_string();
            if let Err(e) = parse_module(&printed) {
                return Err(format!(
                    "{}\n--- printed\n{printed}",
                    e.iter()
                        .map(|d| d.render("printed", &printed))
                        .collect::<Vec<_>>()
                        .join("\n")
                ));
            }
        }
        Ok(())
    });
    match result {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            panic!("{name}: a parsed mutation does not survive printing:\n{e}\n--- input\n{text}")
        }
        Err(_) => panic!("{name}: the parser panicked on:\n{text}"),
    }
}

#[test]
fn never_panics_on_truncated_or_mutated_modules() {
    let files = roundtrip_files();
    assert!(files.len() >= 20, "found {} round-trip files", files.len());
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for (name, text) in &files {
        // Every prefix, on character boundaries (a sample of them).
        let cuts: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        for &cut in cuts.iter().step_by(13) {
            check_no_panic(name, &text[..cut]);
        }
        // Random edits: delete, duplicate or insert.
        for _ in 0..150 {
            let mut t = text.clone();
            for _ in 0..1 + rng.below(3) {
                let bounds: Vec<usize> =
                    t.char_indices().map(|(i, _)| i).chain([t.len()]).collect();
                let a = bounds[rng.below(bounds.len())];
                let b = bounds[rng.below(bounds.len())];
                let (lo, hi) = (a.min(b), a.max(b).min(a.min(b) + 40));
                let hi = bounds
                    .iter()
                    .copied()
                    .filter(|&x| x <= hi)
                    .max()
                    .unwrap_or(lo);
                match rng.below(3) {
                    0 => t.replace_range(lo..hi, ""),
                    1 => {
                        let piece = t[lo..hi].to_string();
                        t.insert_str(lo, &piece);
                    }
                    _ => t.insert_str(lo, SNIPPETS[rng.below(SNIPPETS.len())]),
                }
            }
            check_no_panic(name, &t);
        }
    }
}

#[test]
fn never_panics_on_pathological_inputs() {
    let deep_parens = format!("x = {}1{}", "(".repeat(100_000), ")".repeat(100_000));
    let long_chain = format!("x = a{}", " + a".repeat(100_000));
    let deep_lists = format!(
        "{}\nmetadata = {{\"relax.expr.Constant\": [R.const({}1{}, \"int32\")]}}",
        module_with("", "return metadata[\"relax.expr.Constant\"][0]"),
        "[".repeat(120),
        "]".repeat(120)
    );
    let many_funcs: String = std::iter::once("@I.ir_module\nclass Module:\n".to_string())
        .chain((0..3000).map(|i| {
            format!(
                "    @R.function\n    def f{i}(x: R.Object):\n        y = cls.f{}(x)\n        return y\n",
                i + 1
            )
        }))
        .collect();
    for text in [
        "",
        "\n\n\n",
        "\u{feff}",
        "@",
        "@I.ir_module",
        "@I.ir_module\nclass Module:",
        "@I.ir_module\nclass Module:\n    pass\n",
        "class Module:\n  @R.function\n  def f(x: R.Tensor(((\"n\" * 2,),))):\n    return x\n",
        deep_parens.as_str(),
        long_chain.as_str(),
        deep_lists.as_str(),
        many_funcs.as_str(),
        "x = '\\u12'\n",
        "x = \"\"\"unterminated",
        "\tx\n        y\n",
    ] {
        check_no_panic("pathological", text);
    }
    // The chain of 3000 functions refers to an undefined `f3000` only.
    let e = parse_module(&many_funcs).unwrap_err();
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].code, "undefined-function");
}

// ----- IR built with the constructors survives print → parse -----------------

#[test]
fn constructed_module_round_trips() {
    use crate::analysis::derive::{derive_struct_info, DeriveContext};
    use crate::ir::structural_equal::structural_equal_report;
    use crate::ir::{BindingBlock, Expr, Function, GlobalVar, Var};
    use relax_runtime::Tensor;

    let norm = |e: Expr| {
        let s = derive_struct_info(&e, &DeriveContext::default()).unwrap();
        e.with_struct_info(s)
    };
    let n = TirVar::new("n");
    let m = TirVar::new("m");
    let t_n4 = StructInfo::tensor(vec![PrimExpr::var(&n), PrimExpr::int(4)], DataType::f32());
    let x = Var::new("x", Some(t_n4.clone()));
    let y = Var::new("y", Some(StructInfo::tensor_ndim(2, DataType::f32())));
    // A dataflow block: a tuple, a get-item and an op call with attributes.
    let lv = Var::new_dataflow(
        "lv",
        Some(StructInfo::tuple(vec![t_n4.clone(), t_n4.clone()])),
    );
    let lv_value = norm(Expr::tuple(vec![x.to_expr(), x.to_expr()]));
    let gv = Var::new("gv", Some(t_n4.clone()));
    let gv_value = norm(Expr::tuple_get_item(lv.to_expr(), 1));
    let s = Var::new("s", Some(StructInfo::object()));
    let slice_attrs = crate::ir::Attrs::from_pairs([("axes", AttrValue::from(vec![1i64]))])
        .with("begin", AttrValue::from(vec![0i64]))
        .with(
            "end",
            AttrValue::Array(vec![AttrValue::PrimExpr(PrimExpr::var(&n) * 2)]),
        );
    let slice = crate::op::lookup("relax.strided_slice").unwrap();
    let s_value = norm(slice.call(vec![gv.to_expr()], &slice_attrs).unwrap());
    // A match_cast defining `m`, constants inline and in metadata.
    let pattern = StructInfo::tensor(vec![PrimExpr::var(&m), PrimExpr::int(3)], DataType::f32());
    let z = Var::new("z", Some(pattern.clone()));
    let c0 = norm(Expr::constant(Tensor::scalar(2.5f32)));
    let c1 = norm(Expr::constant(
        Tensor::from_vec(&[2, 2], vec![1i32, -2, 3, i32::MIN]).unwrap(),
    ));
    let k = Var::new("k", Some(c1.struct_info().unwrap().clone()));
    let w = Var::new("w", None);
    let w_value = norm(Expr::tuple(vec![c0, k.to_expr(), z.to_expr(), s.to_expr()]));
    let w = w.with_struct_info(w_value.struct_info().unwrap().clone());
    let blocks = vec![
        BindingBlock::dataflow(vec![
            Binding::var_binding(lv.clone(), lv_value),
            Binding::var_binding(gv.clone(), gv_value),
        ]),
        BindingBlock::new(vec![
            Binding::var_binding(s.clone(), s_value),
            Binding::match_cast(z.clone(), y.to_expr(), pattern),
            Binding::var_binding(k.clone(), c1),
            Binding::var_binding(w.clone(), w_value),
        ]),
    ];
    let body = Expr::seq(blocks, w.to_expr());
    let body = body.with_struct_info(w.struct_info().unwrap().clone());
    let ret = StructInfo::tuple(vec![
        StructInfo::tensor(vec![], DataType::f32()),
        StructInfo::tensor(vec![PrimExpr::int(2), PrimExpr::int(2)], DataType::i32()),
        StructInfo::tensor_ndim(2, DataType::f32()),
        StructInfo::object(),
    ]);
    let f = Function::new(vec![x, y], body, ret)
        .with_global_symbol("main")
        .with_attr("Primitive", 1i64);
    let module = IRModule::from_functions([(GlobalVar::new("main"), f.into())]);

    let printed = module.to_string();
    let parsed = parse(&printed);
    if let Err(mismatch) = structural_equal_report(&module, &parsed) {
        panic!("{mismatch}\n{printed}");
    }
    assert_eq!(parsed.to_string(), printed);
}

/// The MLP as TVM 0.27 prints it after LegalizeOps (module-level `TypeVar`,
/// `T.sblock`, `s_tir=True`, `out_ty=`, `tirx.noalias`), and the same module
/// in the spellings of earlier TVM versions: both parse, to the same module.
#[test]
fn reads_tvm_0_27_and_earlier_spellings_alike() {
    let tvm_0_27 = r#"# from typing import TypeVar
# from tvm.script import ir as I
# from tvm.script import tirx as T
# from tvm.script import relax as R

n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def add(lv1: T.Buffer((n, T.int64(128)), "float32"), b: T.Buffer((T.int64(128),), "float32"), T_add: T.Buffer((n, T.int64(128)), "float32")):
        T.func_attr({"tirx.noalias": True})
        # with T.sblock("root"):
        for ax0, ax1 in T.grid(n, T.int64(128)):
            with T.sblock("T_add"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(lv1[v_ax0, v_ax1], b[v_ax1])
                T.writes(T_add[v_ax0, v_ax1])
                T_add[v_ax0, v_ax1] = lv1[v_ax0, v_ax1] + b[v_ax1]

    @R.function
    def main(x: R.Tensor((n, 128), dtype="float32"), b: R.Tensor((128,), dtype="float32")) -> R.Tensor((n, 128), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv = R.call_tir(cls.add, (x, b), out_ty=R.Tensor((n, 128), dtype="float32"))
            R.output(gv)
        return gv
"#;
    let earlier = r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add(var_lv1: T.handle, b: T.Buffer((T.int64(128),), "float32"), var_T_add: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        lv1 = T.match_buffer(var_lv1, (n, T.int64(128)))
        T_add = T.match_buffer(var_T_add, (n, T.int64(128)))
        for ax0, ax1 in T.grid(n, T.int64(128)):
            with T.block("T_add"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(lv1[v_ax0, v_ax1], b[v_ax1])
                T.writes(T_add[v_ax0, v_ax1])
                T_add[v_ax0, v_ax1] = lv1[v_ax0, v_ax1] + b[v_ax1]

    @R.function
    def main(x: R.Tensor(("n", 128), dtype="float32"), b: R.Tensor((128,), dtype="float32")) -> R.Tensor(("n", 128), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            gv = R.call_tir(cls.add, (x, b), out_sinfo=R.Tensor((n, 128), dtype="float32"))
            R.output(gv)
        return gv
"#;
    let new = parse(tvm_0_27);
    // Each function has a symbolic `n` of its own, as if declared in it.
    let printed = new.to_string();
    assert!(
        printed.contains("\nn = TypeVar(\"n\")\n@I.ir_module"),
        "{printed}"
    );
    structural_equal_report(&new, &parse(&printed)).unwrap();
    structural_equal_report(&new, &parse(earlier)).unwrap();
    // `T.match_buffer` with the dtype as a keyword, as TVM's tests write it.
    let keyword = earlier.replace(
        "(var_T_add, (n, T.int64(128)))",
        "(var_T_add, (n, T.int64(128)), dtype=\"float32\")",
    );
    structural_equal_report(&new, &parse(&keyword)).unwrap();
    let old_buffers = earlier
        .replace(
            "var_lv1: T.handle",
            "lv1: T.Buffer((n, T.int64(128)), \"float32\")",
        )
        .replace(
            "var_T_add: T.handle",
            "T_add: T.Buffer((n, T.int64(128)), \"float32\")",
        )
        .replace(
            "        lv1 = T.match_buffer(var_lv1, (n, T.int64(128)))\n",
            "",
        )
        .replace(
            "        T_add = T.match_buffer(var_T_add, (n, T.int64(128)))\n",
            "",
        );
    structural_equal_report(&new, &parse(&old_buffers)).unwrap();
}

#[test]
fn a_module_level_statement_other_than_a_type_var_is_an_error() {
    let e = "m = TypeVar(\"n\")\n@I.ir_module\nclass Module:\n    pass\n"
        .parse::<IRModule>()
        .unwrap_err()
        .to_string();
    assert!(e.contains("`n = TypeVar(\"n\")`"), "{e}");
}

#[test]
fn op_attributes_may_follow_the_arguments_positionally() {
    // As TVM's Python functions take them, and TVM 0.27 prints
    // `R.strided_slice(x, (0,), (0,), (2,))`.
    let sig = r#"x: R.Tensor((4, 3), dtype="float32")"#;
    let positional = parse(&module_with(
        sig,
        "a = R.sum(x, [1], True)\nb = R.strided_slice(x, (0,), (0,), (2,), assume_inbound=False)\nreturn (a, b)",
    ));
    let keywords = parse(&module_with(
        sig,
        "a = R.sum(x, axis=[1], keepdims=True)\nb = R.strided_slice(x, axes=[0], begin=[0], end=[2])\nreturn (a, b)",
    ));
    crate::ir::structural_equal::structural_equal_report(&positional, &keywords).unwrap();

    let (code, l, c, m) = error(&module_with(sig, "a = R.sum(x, [1], axis=[0])\nreturn a"));
    assert_eq!((code, l, c), ("syntax-error", 5, 22));
    assert_eq!(m, "`axis` of `R.sum` is given twice");
    let (code, l, c, m) = error(&module_with(sig, "a = R.nn.relu(x, 1)\nreturn a"));
    assert_eq!((code, l, c), ("syntax-error", 5, 26));
    assert_eq!(
        m,
        "expected at most 1 positional arguments to `R.nn.relu` (1 argument and 0 attributes), found more"
    );
}

/// `float16` and `bfloat16` constants parse (each literal rounded once to
/// the dtype), print and parse back to the same module.
#[test]
fn half_precision_constants_round_trip() {
    let src = module_with(
        "x: R.Tensor((2,), dtype=\"bfloat16\")",
        "h = R.const([0.1, -65504.0], \"float16\")\nb = R.const([0.1, 3.0e38], \"bfloat16\")\nreturn b",
    );
    let m: IRModule = src.parse().unwrap_or_else(|e| panic!("{e:?}\n{src}"));
    let text = m.to_string();
    let back: IRModule = text.parse().unwrap_or_else(|e| panic!("{e:?}\n{text}"));
    crate::ir::structural_equal_report(&m, &back).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let main = m.get_relax("main").unwrap();
    let ExprKind::SeqExpr(seq) = main.body.kind() else {
        panic!("a body")
    };
    let consts: Vec<relax_runtime::Tensor> = seq.blocks[0]
        .bindings
        .iter()
        .filter_map(|b| match b.value().kind() {
            ExprKind::Constant(c) => Some(c.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(consts[0].dtype(), DataType::f16());
    assert_eq!(consts[0].to_f64_vec(), [0.0999755859375, -65504.0]);
    assert_eq!(consts[1].dtype(), DataType::bf16());
    assert_eq!(consts[1].to_f64_vec()[0], 0.10009765625);
}
