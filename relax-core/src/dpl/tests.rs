//! The pattern language: the RFC's examples (with `op_pattern` for Relay's
//! `TOpPattern`), the essential cases of TVM's `test_dataflow_pattern.py`,
//! graph patterns, and rewriting.

use super::*;
use crate::ir::expr::{BindingBlock, Var};
use crate::ir::{AttrValue, DataType, Expr, Function, IRModule, PrimExpr, StructInfo, TirVar};
use crate::op::OpPatternKind;
use crate::transform::Pass;

fn main_of(text: &str) -> Function {
    let m: IRModule = text.parse().unwrap_or_else(|e| panic!("{e}\n{text}"));
    m.get_relax("main").unwrap().clone()
}

/// `main`'s bindings and the value of the binding named `name`.
fn value_of(f: &Function, name: &str) -> Expr {
    let b = Bindings::of_function(f);
    let var = var_named(f, name);
    b.value(&var).unwrap().clone()
}

fn var_named(f: &Function, name: &str) -> Var {
    f.body
        .as_seq()
        .unwrap()
        .blocks
        .iter()
        .flat_map(|b| &b.bindings)
        .map(|b| b.var().clone())
        .find(|v| v.name_hint() == name)
        .unwrap_or_else(|| panic!("no binding {name}"))
}

/// A rewrite never leaves an ill-formed function.
fn assert_well_formed(f: &Function) {
    let m = IRModule::from_functions([(crate::ir::expr::GlobalVar::new("main"), f.clone().into())]);
    crate::analysis::well_formed(&m).unwrap_or_else(|e| panic!("{e:?}\n{m}"));
}

fn first_block(f: &Function) -> &BindingBlock {
    &f.body.as_seq().unwrap().blocks[0]
}

/// How many bindings of `f` call `relax.nn.relu`.
fn relu_calls(f: &Function) -> usize {
    f.body
        .as_seq()
        .unwrap()
        .blocks
        .iter()
        .flat_map(|b| &b.bindings)
        .filter(|b| b.value().call_op_name() == Some("relax.nn.relu"))
        .count()
}

fn op(name: &str) -> Pattern {
    is_op(name).unwrap()
}

/// conv2d feeding relu and exp, joined by add (the RFC's diamond, with exp
/// for leaky_relu).
const DIAMOND: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 3, 8, 8), dtype="float32"), w: R.Tensor((4, 3, 3, 3), dtype="float32")) -> R.Tensor((1, 4, 6, 6), dtype="float32"):
        with R.dataflow():
            conv = R.nn.conv2d(x, w)
            relu = R.nn.relu(conv)
            other = R.exp(conv)
            out = R.add(relu, other)
            R.output(out)
        return out
"#;

#[test]
fn test_match_op_or() {
    let f = main_of(DIAMOND);
    let b = Bindings::of_function(&f);
    // The RFC's form: the alternative matches either operator itself.
    let p = op("relax.add") | op("relax.multiply");
    assert!(p.matches(&Expr::op("relax.add"), &b));
    assert!(p.matches(&Expr::op("relax.multiply"), &b));
    assert!(!p.matches(&Expr::op("relax.subtract"), &b));
    assert!(!p.matches(&value_of(&f, "relu"), &b));
    let call = (op("relax.add") | op("relax.multiply")).call_variadic([]);
    assert!(call.matches(&value_of(&f, "out"), &b));
}

#[test]
fn test_no_match_attr_and_match_attr() {
    let f = main_of(DIAMOND);
    let b = Bindings::of_function(&f);
    let elemwise =
        |p: Pattern| p.has_attr([("op_pattern", AttrValue::Int(OpPatternKind::ElemWise as i64))]);
    // conv2d is out-elementwise-fusable, not elementwise.
    assert!(
        !elemwise(op("relax.nn.conv2d").call([wildcard(), wildcard()]))
            .matches(&value_of(&f, "conv"), &b)
    );
    assert!(elemwise(op("relax.nn.relu").call([wildcard()])).matches(&value_of(&f, "relu"), &b));
    // Call attributes too.
    let conv_nchw = op("relax.nn.conv2d")
        .call([wildcard(), wildcard()])
        .has_attr([("data_layout", AttrValue::from("NCHW"))]);
    assert!(conv_nchw.matches(&value_of(&f, "conv"), &b));
    let conv_nhwc = op("relax.nn.conv2d")
        .call([wildcard(), wildcard()])
        .has_attr([("data_layout", AttrValue::from("NHWC"))]);
    assert!(!conv_nhwc.matches(&value_of(&f, "conv"), &b));
}

#[test]
fn test_match_diamond() {
    let f = main_of(DIAMOND);
    let b = Bindings::of_function(&f);
    let conv = op("relax.nn.conv2d").call([wildcard(), wildcard()]);
    let path1 = op("relax.nn.relu").call([conv.clone()]);
    let path2 = op("relax.exp").call([conv.clone()]);
    let diamond = op("relax.add").call([path1, path2]);
    let m = diamond
        .extract(&value_of(&f, "out"), &b)
        .expect("the diamond matches");
    // The conv pattern, used twice, matched one expression: the variable.
    assert_eq!(m.get(&conv).unwrap().as_var().unwrap().name_hint(), "conv");
}

#[test]
fn test_match_dom_diamond() {
    let f = main_of(DIAMOND);
    let b = Bindings::of_function(&f);
    let conv = op("relax.nn.conv2d").call([wildcard(), wildcard()]);
    let elemwise =
        wildcard().has_attr([("op_pattern", AttrValue::Int(OpPatternKind::ElemWise as i64))]);
    let reduction = op("relax.add").call([wildcard(), wildcard()]);
    let diamond = dominates(conv.clone(), elemwise.clone(), reduction.clone());
    assert!(diamond.matches(&var_named(&f, "out").to_expr(), &b));
    assert!(diamond.matches(&value_of(&f, "out"), &b));

    // One path leaves the elementwise kinds (a transpose is injective):
    // no longer dominated through elementwise nodes.
    let broken = main_of(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 3, 8, 8), dtype="float32"), w: R.Tensor((4, 3, 3, 3), dtype="float32")) -> R.Tensor((1, 4, 6, 6), dtype="float32"):
        with R.dataflow():
            conv = R.nn.conv2d(x, w)
            relu = R.nn.relu(conv)
            t = R.permute_dims(conv, axes=[0, 1, 3, 2])
            other = R.exp(t)
            out = R.add(relu, other)
            R.output(out)
        return out
"#,
    );
    let b2 = Bindings::of_function(&broken);
    assert!(!diamond.matches(&value_of(&broken, "out"), &b2));
    // With any node allowed on the path, it matches again.
    let any = dominates(conv, wildcard(), reduction);
    assert!(any.matches(&value_of(&broken, "out"), &b2));
}

#[test]
fn dominates_needs_post_domination() {
    // `conv` also escapes the block: `out` does not post-dominate it.
    let f = main_of(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 3, 8, 8), dtype="float32"), w: R.Tensor((4, 3, 3, 3), dtype="float32")) -> R.Tuple(R.Tensor((1, 4, 6, 6), dtype="float32"), R.Tensor((1, 4, 6, 6), dtype="float32")):
        with R.dataflow():
            conv = R.nn.conv2d(x, w)
            relu = R.nn.relu(conv)
            out = R.add(relu, relu)
            R.output(conv, out)
        return (conv, out)
"#,
    );
    let b = Bindings::of_function(&f);
    let p = dominates(
        op("relax.nn.conv2d").call([wildcard(), wildcard()]),
        wildcard(),
        op("relax.add").call([wildcard(), wildcard()]),
    );
    assert!(!p.matches(&value_of(&f, "out"), &b));
}

#[test]
fn test_multi_output() {
    let f = main_of(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((6,), dtype="float32")) -> R.Tensor((3,), dtype="float32"):
        with R.dataflow():
            s = R.split(x, indices_or_sections=2)
            a = s[0]
            b = s[1]
            out = R.add(a, b)
            R.output(out)
        return out
"#,
    );
    let bind = Bindings::of_function(&f);
    let split = op("relax.split").call([wildcard()]);
    let p = op("relax.add").call([
        is_tuple_get_item(split.clone(), Some(0)),
        is_tuple_get_item(split.clone(), None),
    ]);
    assert!(p.matches(&value_of(&f, "out"), &bind));
    let wrong = op("relax.add").call([is_tuple_get_item(split.clone(), Some(1)), wildcard()]);
    assert!(!wrong.matches(&value_of(&f, "out"), &bind));
}

const MLP: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 4), dtype="float32"), w: R.Tensor((4, 4), dtype="float32"), b: R.Tensor((4,), dtype="float32")) -> R.Tensor(("n", 4), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            lv0 = R.matmul(x, w)
            lv1 = R.add(lv0, b)
            lv2 = R.add(lv1, lv1)
            lv3 = R.add(lv1, lv0)
            R.output(lv2, lv3)
        return lv3
"#;

#[test]
fn variables_match_through_their_bindings_and_inputs_have_none() {
    let f = main_of(MLP);
    let b = Bindings::of_function(&f);
    let p = op("relax.add").call([
        op("relax.matmul").call([wildcard(), wildcard()]),
        wildcard(),
    ]);
    assert!(p.matches(&value_of(&f, "lv1"), &b));
    // Without the bindings, `lv0` is only a variable.
    assert!(!p.matches(&value_of(&f, "lv1"), &Bindings::none()));
    let inputs = op("relax.matmul").call([is_input(), is_input()]);
    assert!(inputs.matches(&value_of(&f, "lv0"), &b));
    assert!(!op("relax.add")
        .call([is_input(), wildcard()])
        .matches(&value_of(&f, "lv1"), &b));
    assert!(op("relax.add")
        .call([is_dfv(Some("lv0")), is_var(Some("b"))])
        .matches(&value_of(&f, "lv1"), &b));
    assert!(!op("relax.add")
        .call([is_dfv(Some("lv9")), wildcard()])
        .matches(&value_of(&f, "lv1"), &b));
}

#[test]
fn a_pattern_object_used_twice_matches_one_expression() {
    let f = main_of(MLP);
    let b = Bindings::of_function(&f);
    let x = wildcard();
    let same = op("relax.add").call([x.clone(), x.clone()]);
    assert!(same.matches(&value_of(&f, "lv2"), &b), "add(lv1, lv1)");
    assert!(!same.matches(&value_of(&f, "lv3"), &b), "add(lv1, lv0)");
    // Two different wildcard objects match anything.
    assert!(op("relax.add")
        .call([wildcard(), wildcard()])
        .matches(&value_of(&f, "lv3"), &b));
}

#[test]
fn types_dtypes_and_shapes_use_the_prover() {
    let f = main_of(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", "m"), dtype="float32"), y: R.Tensor(("n", "m"), dtype="float32")) -> R.Tensor(("n + m", 4), dtype="float32"):
        n = T.int64()
        m = T.int64()
        with R.dataflow():
            z = R.zeros(R.shape([m + n, 4]), dtype="float32")
            s = R.add(x, y)
            R.output(z)
        return z
"#,
    );
    let b = Bindings::of_function(&f);
    let (n, m) = (TirVar::new("n"), TirVar::new("m"));
    let _ = &m;
    let seq = &f.body.as_seq().unwrap().blocks[0];
    let z = seq.bindings[0].var().to_expr();
    // The same free variables as the function's: take them from `x`.
    let xs = f.params[0]
        .struct_info()
        .unwrap()
        .as_tensor()
        .unwrap()
        .shape_values()
        .unwrap()
        .to_vec();
    let (fn_n, fn_m) = (xs[0].clone(), xs[1].clone());
    assert!(wildcard()
        .has_shape(vec![fn_n.clone() + fn_m.clone(), PrimExpr::int(4)])
        .matches(&z, &b));
    assert!(!wildcard()
        .has_shape(vec![fn_n.clone() + fn_n.clone(), PrimExpr::int(4)])
        .matches(&z, &b));
    assert!(wildcard().has_dtype(DataType::f32()).matches(&z, &b));
    assert!(!wildcard().has_dtype(DataType::f64()).matches(&z, &b));
    // A symbolic dim of the pattern binds on first use: (a, 4) matches,
    // (a, a) does not (m + n is not provably 4).
    let a = n.to_expr();
    let t = |dims: Vec<PrimExpr>| StructInfo::tensor(dims, DataType::f32());
    assert!(wildcard()
        .has_struct_info(t(vec![a.clone(), PrimExpr::int(4)]))
        .matches(&z, &b));
    assert!(!wildcard()
        .has_struct_info(t(vec![a.clone(), a.clone()]))
        .matches(&z, &b));
    // same_shape_as: both operands of the add have one shape.
    let lhs = wildcard();
    let same = op("relax.add").call([lhs.clone(), wildcard().same_shape_as(&lhs)]);
    assert!(same.matches(&value_of(&f, "s"), &b));
}

#[test]
fn named_groups_alternatives_and_negation() {
    let f = main_of(MLP);
    let b = Bindings::of_function(&f);
    let p = op("relax.add").call([
        named("mm", op("relax.matmul").call([wildcard(), wildcard()])),
        named("bias", wildcard()),
    ]);
    let m = p.extract(&value_of(&f, "lv1"), &b).unwrap();
    assert_eq!(m.named("bias").unwrap().as_var().unwrap().name_hint(), "b");
    assert_eq!(m.named("mm").unwrap().as_var().unwrap().name_hint(), "lv0");
    let not_matmul = op("relax.add").call([
        !op("relax.matmul").call([wildcard(), wildcard()]),
        wildcard(),
    ]);
    assert!(!not_matmul.matches(&value_of(&f, "lv1"), &b));
    assert!(not_matmul.matches(&value_of(&f, "lv2"), &b));
    let both =
        op("relax.add").call([wildcard(), wildcard()]) & wildcard().has_dtype(DataType::f32());
    assert!(both.matches(&value_of(&f, "lv1"), &b));
}

#[test]
fn tuples_ordered_and_unordered_and_call_tir() {
    let f = main_of(
        r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def k(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
        T.evaluate(0)

    @R.function
    def main(x: R.Tensor((4,), dtype="float32"), y: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        cls = Module
        with R.dataflow():
            t = (x, y)
            c = R.call_tir(cls.k, (x, y), out_sinfo=R.Tensor((4,), dtype="float32"))
            R.output(c)
        return c
"#,
    );
    let b = Bindings::of_function(&f);
    let (x, y) = (is_var(Some("x")), is_var(Some("y")));
    assert!(is_tuple([x.clone(), y.clone()]).matches(&value_of(&f, "t"), &b));
    assert!(!is_tuple([y.clone(), x.clone()]).matches(&value_of(&f, "t"), &b));
    assert!(is_tuple_unordered([y.clone(), x.clone()]).matches(&value_of(&f, "t"), &b));
    assert!(is_call_tir(Some("k"), [x.clone(), y.clone()]).matches(&value_of(&f, "c"), &b));
    assert!(!is_call_tir(Some("other"), [x, y]).matches(&value_of(&f, "c"), &b));
}

#[test]
fn an_unknown_op_is_an_error_naming_the_nearest() {
    let e = is_op("relax.matmull").unwrap_err().to_string();
    assert!(
        e.contains("unknown `relax.matmull`") && e.contains("relax.matmul"),
        "{e}"
    );
}

/// TVM's `test_distinguish_diamond_and_parallel`.
#[test]
fn graph_patterns_tell_a_diamond_from_parallel_chains() {
    let diamond = main_of(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        with R.dataflow():
            a = R.exp(x)
            b = R.nn.relu(a)
            c = R.negative(a)
            d = R.add(b, c)
            R.output(d)
        return d
"#,
    );
    let parallel = main_of(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        with R.dataflow():
            a1 = R.exp(x)
            a2 = R.exp(x)
            b = R.nn.relu(a1)
            c = R.negative(a2)
            d = R.add(b, c)
            R.output(d)
        return d
"#,
    );
    let a = op("relax.exp").call([wildcard()]);
    let b = op("relax.nn.relu").call([wildcard()]);
    let c = op("relax.negative").call([wildcard()]);
    let d = op("relax.add").call([wildcard(), wildcard()]);
    let mut ctx = PatternContext::new();
    ctx.fork_to(&a, &[b.clone(), c.clone()]);
    ctx.used_by(&b, &d).used_by(&c, &d);
    let m = ctx
        .match_dataflow(first_block(&diamond), &Bindings::of_function(&diamond))
        .expect("the diamond matches");
    assert_eq!(m.get(&a).unwrap().name_hint(), "a");
    assert_eq!(m.get(&d).unwrap().name_hint(), "d");
    assert!(ctx
        .match_dataflow(first_block(&parallel), &Bindings::of_function(&parallel))
        .is_none());

    // only_used_by: `a` has two readers in the diamond.
    let mut only = PatternContext::new();
    only.only_used_by(&a, &b);
    assert!(only
        .match_dataflow(first_block(&diamond), &Bindings::of_function(&diamond))
        .is_none());
    // In the parallel chains `a1` is read by `b` alone.
    assert!(only
        .match_dataflow(first_block(&parallel), &Bindings::of_function(&parallel))
        .is_some());
}

const FMA: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((3, 4), dtype="float32"), y: R.Tensor((3, 4), dtype="float32"), z: R.Tensor((3, 4), dtype="float32")) -> R.Tensor((3, 4), dtype="float32"):
        with R.dataflow():
            lv0 = R.multiply(x, y)
            gv = R.add(lv0, z)
            R.output(gv)
        return gv
"#;

/// The seed's EwiseFMA rewrite with `rewrite_call`.
#[test]
fn rewrite_call_replaces_multiply_add_by_ewise_fma() {
    let f = main_of(FMA);
    let (x, y, z) = (wildcard(), wildcard(), wildcard());
    let p = op("relax.add").call([op("relax.multiply").call([x.clone(), y.clone()]), z.clone()]);
    let out = rewrite_call(
        &p,
        |_, m| {
            Expr::call_op(
                "relax.ewise_fma",
                vec![
                    m.get(&x).unwrap().clone(),
                    m.get(&y).unwrap().clone(),
                    m.get(&z).unwrap().clone(),
                ],
                crate::ir::Attrs::new(),
            )
        },
        &f,
    )
    .unwrap();
    assert_well_formed(&out);
    let expected = main_of(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((3, 4), dtype="float32"), y: R.Tensor((3, 4), dtype="float32"), z: R.Tensor((3, 4), dtype="float32")) -> R.Tensor((3, 4), dtype="float32"):
        with R.dataflow():
            gv = R.ewise_fma(x, y, z)
            R.output(gv)
        return gv
"#,
    );
    crate::ir::structural_equal_report(&out, &expected).unwrap();
}

#[test]
fn rewrites_repeat_until_nothing_changes() {
    let f = main_of(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        with R.dataflow():
            a = R.nn.relu(x)
            b = R.nn.relu(a)
            c = R.nn.relu(b)
            R.output(c)
        return c
"#,
    );
    let inner = op("relax.nn.relu").call([wildcard()]);
    let p = op("relax.nn.relu").call([inner.clone()]);
    let out = rewrite_call(&p, |_, m| m.get(&inner).unwrap().clone(), &f).unwrap();
    assert_well_formed(&out);
    // relu(relu(relu(x))) -> relu(x): one call left, the output bound to it.
    let text = crate::printer::function_to_string("main", &out);
    assert_eq!(relu_calls(&out), 1, "{text}");
    assert!(
        text.contains("c: R.Tensor((4,), dtype=\"float32\") = a"),
        "{text}"
    );
}

#[test]
fn an_incompatible_replacement_is_an_error_naming_the_binding() {
    let f = main_of(FMA);
    let p = op("relax.add").call([wildcard(), wildcard()]);
    let e = rewrite_call(
        &p,
        |orig, _| {
            let x = orig.as_call().unwrap().args[1].clone();
            Expr::call_op("relax.sum", vec![x], crate::ir::Attrs::new())
        },
        &f,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("the replacement of `gv`") && e.contains("not compatible"),
        "{e}"
    );
}

#[test]
fn a_pattern_rewriter_is_a_pass() {
    let m: IRModule = FMA.parse().unwrap();
    let (x, y, z) = (wildcard(), wildcard(), wildcard());
    let p = op("relax.add").call([op("relax.multiply").call([x.clone(), y.clone()]), z.clone()]);
    let pass = PatternRewriter::new("FuseEwiseFMA", p, move |_, m| {
        Expr::call_op(
            "relax.ewise_fma",
            vec![
                m.get(&x).unwrap().clone(),
                m.get(&y).unwrap().clone(),
                m.get(&z).unwrap().clone(),
            ],
            crate::ir::Attrs::new(),
        )
    });
    assert_eq!(pass.name(), "FuseEwiseFMA");
    let out = pass.run(m).unwrap();
    assert!(out.to_string().contains("R.ewise_fma(x, y, z)"), "{out}");
}

#[test]
fn rewrite_bindings_replaces_matched_variables() {
    let f = main_of(FMA);
    let mul = op("relax.multiply").call([wildcard(), wildcard()]);
    let add = op("relax.add").call([wildcard(), wildcard()]);
    let mut ctx = PatternContext::new();
    ctx.only_used_by(&mul, &add);
    let out = rewrite_bindings(
        &ctx,
        |m, b| {
            let mv = m.get(&mul).unwrap();
            let av = m.get(&add).unwrap();
            let mc = b.value(mv).unwrap().as_call().unwrap().clone();
            let ac = b.value(av).unwrap().as_call().unwrap().clone();
            let fma = Expr::call_op(
                "relax.ewise_fma",
                vec![mc.args[0].clone(), mc.args[1].clone(), ac.args[1].clone()],
                crate::ir::Attrs::new(),
            );
            [(av.clone(), fma)].into_iter().collect()
        },
        &f,
    )
    .unwrap();
    assert_well_formed(&out);
    assert!(crate::printer::function_to_string("main", &out).contains("R.ewise_fma(x, y, z)"));
}

/// Matching a bounded pattern over a long block is linear: every binding
/// is tried once against the pattern.
#[test]
fn matching_a_long_block_is_linear() {
    let mut body = String::new();
    let mut prev = "x".to_string();
    for i in 0..2000 {
        body.push_str(&format!("            a{i} = R.nn.relu({prev})\n"));
        prev = format!("a{i}");
    }
    let text = format!(
        "@I.ir_module\nclass Module:\n    @R.function\n    def main(x: R.Tensor((4,), dtype=\"float32\")) -> R.Tensor((4,), dtype=\"float32\"):\n        with R.dataflow():\n{body}            R.output({prev})\n        return {prev}\n"
    );
    let f = main_of(&text);
    let inner = op("relax.nn.relu").call([wildcard()]);
    let p = op("relax.nn.relu").call([inner.clone()]);
    let start = std::time::Instant::now();
    let out = rewrite_call(&p, |_, m| m.get(&inner).unwrap().clone(), &f).unwrap();
    assert_well_formed(&out);
    assert_eq!(relu_calls(&out), 1);
    // Generous: a quadratic matcher takes minutes here.
    assert!(start.elapsed().as_secs() < 60, "{:?}", start.elapsed());
}

/// Two rewriters combined with `|` are one pass: per binding the first
/// rule that matches wins, and rounds repeat until neither changes anything.
#[test]
fn pattern_rewriters_combine_with_or() {
    let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((3, 4), dtype="float32"), y: R.Tensor((3, 4), dtype="float32"), z: R.Tensor((3, 4), dtype="float32")) -> R.Tensor((3, 4), dtype="float32"):
        with R.dataflow():
            lv0 = R.multiply(x, y)
            lv1 = R.add(lv0, z)
            lv2 = R.negative(lv1)
            gv = R.negative(lv2)
            R.output(gv)
        return gv
"#;
    let m: IRModule = text.parse().unwrap();
    let (x, y, z) = (wildcard(), wildcard(), wildcard());
    let fma = op("relax.add").call([op("relax.multiply").call([x.clone(), y.clone()]), z.clone()]);
    let fma = PatternRewriter::new("fma", fma, move |_, m| {
        let arg = |p: &Pattern| m.get(p).unwrap().clone();
        Expr::call_op(
            "relax.ewise_fma",
            vec![arg(&x), arg(&y), arg(&z)],
            crate::ir::Attrs::new(),
        )
    });
    let a = wildcard();
    let neg2 = op("relax.negative").call([op("relax.negative").call([a.clone()])]);
    let neg2 = PatternRewriter::new("negneg", neg2, move |_, m| m.get(&a).unwrap().clone());
    let both = fma | neg2;
    assert_eq!(both.name(), "fma | negneg");
    let out = both.run(m).unwrap();
    let f = out.get_relax("main").unwrap();
    assert_well_formed(f);
    let text = crate::printer::function_to_string("main", f);
    assert!(text.contains("R.ewise_fma(x, y, z)"), "{text}");
    assert!(
        !text.contains("R.negative") && !text.contains("R.multiply"),
        "{text}"
    );
}

/// A chain of bindings that a rewrite leaves unused goes in one sweep, and
/// a binding used only by a dead one goes with it.
#[test]
fn unused_chains_are_removed_in_one_sweep() {
    let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        with R.dataflow():
            a = R.exp(x)
            b = R.nn.relu(a)
            c = R.add(a, b)
            gv = R.negative(x)
            R.output(gv)
        return gv
"#;
    let f = main_of(text);
    let out = crate::mutator::remove_all_unused(&f);
    assert_well_formed(&out);
    assert_eq!(first_block(&out).bindings.len(), 1);
}
