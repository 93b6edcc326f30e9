//! Tests of the DSL frontend: programs that lower (compared as TVMScript
//! text), one test per check (message and span), robustness and size.

use super::*;
use crate::ir::StructInfo;
use std::str::FromStr;

fn tokens(src: &str) -> TokenStream {
    TokenStream::from_str(src).expect("test input tokenizes")
}

fn lower(src: &str) -> Result<Lowered, Vec<FrontendError>> {
    lower_module_macro(tokens(src))
}

fn ok(src: &str) -> Lowered {
    match lower(src) {
        Ok(l) => l,
        Err(errors) => panic!(
            "expected the module to lower, found errors:\n{}",
            errors
                .iter()
                .map(|e| format!("{:?}: {}", e.span().start(), e.message))
                .collect::<Vec<_>>()
                .join("\n")
        ),
    }
}

fn errs(src: &str) -> Vec<FrontendError> {
    match lower(src) {
        Ok(l) => panic!("expected errors, found a module:\n{}", l.module),
        Err(e) => e,
    }
}

/// The module's text without the printer's header comments.
fn text(l: &Lowered) -> String {
    let t = l.module.to_string();
    match t.find("@I.ir_module") {
        Some(i) => t[i..].trim_end().to_string(),
        None => t,
    }
}

/// (line, column) of the `nth` occurrence of `needle` in `src`, as
/// proc-macro2 reports a span's start (1-based line, 0-based column).
fn pos(src: &str, needle: &str, nth: usize) -> (usize, usize) {
    let (offset, _) = src
        .match_indices(needle)
        .nth(nth)
        .unwrap_or_else(|| panic!("`{needle}` occurs fewer than {} times", nth + 1));
    let before = &src[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap_or("").chars().count();
    (line, col)
}

fn start(e: &FrontendError) -> (usize, usize) {
    let s = e.span().start();
    (s.line, s.column)
}

/// The source text an error covers, from its first token's start to its
/// last token's end (proc-macro2 columns count chars).
fn culprit<'s>(src: &'s str, e: &FrontendError) -> &'s str {
    let offset = |lc: proc_macro2::LineColumn| {
        let line_start: usize = src
            .split_inclusive('\n')
            .take(lc.line - 1)
            .map(str::len)
            .sum();
        let in_line: usize = src[line_start..]
            .chars()
            .take(lc.column)
            .map(char::len_utf8)
            .sum();
        line_start + in_line
    };
    &src[offset(e.range.start.start())..offset(e.range.end.end())]
}

/// The single error of `src`, checked to start at the `nth` `needle`.
fn one_error_at(src: &str, needle: &str, nth: usize) -> FrontendError {
    let errors = errs(src);
    assert_eq!(
        errors.len(),
        1,
        "expected one error, found {:?}",
        errors.iter().map(|e| &e.message).collect::<Vec<_>>()
    );
    let e = errors.into_iter().next().unwrap();
    assert_eq!(start(&e), pos(src, needle, nth), "span of: {}", e.message);
    e
}

const MLP: &str = r#"
/// The seed's MLP.
pub mod mlp {
    #[function]
    pub fn main(
        x: Tensor![(n, 784), f32],
        w0: Tensor![(128, 784), f32],
        b0: Tensor![(128,), f32],
        w1: Tensor![(10, 128), f32],
        b1: Tensor![(10,), f32],
    ) -> Tensor![(n, 10), f32] {
        R::dataflow! {
            let lv0 = R::matmul(x, R::permute_dims(w0));
            let lv1 = R::add(lv0, b0);
            let lv2 = R::nn::relu(lv1);
            let lv3 = R::matmul(lv2, R::permute_dims(w1));
            let gv = R::add(lv3, b1);
            R::output(gv);
        }
        gv
    }
}
"#;

#[test]
fn seed_mlp_with_symbolic_batch() {
    let l = ok(MLP);
    assert_eq!(l.mod_name.to_string(), "mlp");
    assert_eq!(l.doc.as_deref(), Some("The seed's MLP."));
    assert!(matches!(l.vis, syn::Visibility::Public(_)));
    let expected = r#"@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 784), dtype="float32"), w0: R.Tensor((128, 784), dtype="float32"), b0: R.Tensor((128,), dtype="float32"), w1: R.Tensor((10, 128), dtype="float32"), b1: R.Tensor((10,), dtype="float32")) -> R.Tensor(("n", 10), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            permute_dims: R.Tensor((784, 128), dtype="float32") = R.permute_dims(w0, axes=None)
            lv0: R.Tensor((n, 128), dtype="float32") = R.matmul(x, permute_dims, out_dtype=None)
            lv1: R.Tensor((n, 128), dtype="float32") = R.add(lv0, b0)
            lv2: R.Tensor((n, 128), dtype="float32") = R.nn.relu(lv1)
            permute_dims1: R.Tensor((128, 10), dtype="float32") = R.permute_dims(w1, axes=None)
            lv3: R.Tensor((n, 10), dtype="float32") = R.matmul(lv2, permute_dims1, out_dtype=None)
            gv: R.Tensor((n, 10), dtype="float32") = R.add(lv3, b1)
            R.output(gv)
        return gv"#;
    assert_eq!(text(&l), expected);
    let f = &l.functions[0];
    assert_eq!(f.name, "main");
    assert!(f.public);
    assert_eq!(f.params.len(), 5);
    assert_eq!(f.params[0].0, "x");
    assert_eq!(f.ret.to_string(), r#"R.Tensor((n, 10), dtype="float32")"#);
    assert_eq!(start_of_fn(f), pos(MLP, "main", 0));
    // The text round-trips through the TVMScript parser.
    let reparsed = crate::parser::parse_module(&l.module.to_string()).unwrap();
    crate::ir::assert_structural_equal(&reparsed, &l.module);
}

fn start_of_fn(f: &FunctionInfo) -> (usize, usize) {
    let s = f.span.start();
    (s.line, s.column)
}

#[test]
fn ewise_fma_with_keyword_free_three_arguments() {
    let l = ok(r#"pub mod m {
        #[function]
        pub fn fma(a: Tensor![(2, 3), f32], b: Tensor![(2, 3), f32], c: Tensor![(2, 3), f32]) -> Tensor![(2, 3), f32] {
            let d = R::ewise_fma(a, b, c);
            d
        }
    }"#);
    assert!(
        text(&l).contains(r#"d: R.Tensor((2, 3), dtype="float32") = R.ewise_fma(a, b, c)"#),
        "{}",
        text(&l)
    );
}

#[test]
fn two_outputs_returned_as_a_tuple() {
    let l = ok(r#"pub mod m {
        #[function]
        pub fn two(x: Tensor![(n, 4), f32]) -> (Tensor![(n, 4), f32], Tensor![(n,), f32]) {
            R::dataflow! {
                let e = R::exp(x);
                let s = R::sum(e, axis = [1], keepdims = false);
                R::output(e, s);
            }
            let t = (e, s);
            let first = t.0;
            (first, t.1)
        }
    }"#);
    let t = text(&l);
    assert!(
        t.contains(r#"s: R.Tensor((n,), dtype="float32") = R.sum(e, axis=[1], keepdims=False)"#),
        "{t}"
    );
    assert!(t.contains("t: R.Tuple(") && t.contains("= (e, s)"), "{t}");
    assert!(
        t.contains("first: R.Tensor((n, 4), dtype=\"float32\") = t[0]"),
        "{t}"
    );
    assert_eq!(
        dsl_of(&l.functions[0].ret),
        "(Tensor![(n, 4), f32], Tensor![(n,), f32])"
    );
}

fn dsl_of(s: &StructInfo) -> String {
    types::dsl(s)
}

#[test]
fn match_cast_then_reshape() {
    let l = ok(r#"pub mod m {
        #[function]
        pub fn f(x: Tensor![ndim = 2, f32]) -> Tensor![ndim = 1, f32] {
            let y = R::match_cast(x, Tensor![(m, 4), f32]);
            let z: Tensor![(m * 4,), f32] = R::reshape(y, R::shape([m * 4]));
            z
        }
    }"#);
    let t = text(&l);
    assert!(
        t.contains(r#"y: R.Tensor((m, 4), dtype="float32") = R.match_cast(x, R.Tensor((m, 4), dtype="float32"))"#),
        "{t}"
    );
    assert!(t.contains("R.reshape(y, R.shape([m * 4]))"), "{t}");
}

#[test]
fn private_helper_called_before_it_is_defined() {
    let l = ok(r#"pub mod m {
        #[function]
        pub fn main(x: Tensor![(n, 4), f32]) -> Tensor![(n, 4), f32] {
            let y = helper(x);
            y
        }
        #[function]
        fn helper(a: Tensor![(k, 4), f32]) -> Tensor![(k, 4), f32] {
            let b = R::nn::relu(a);
            b
        }
        #[function]
        fn derived(a: Tensor![(3,), f32]) {
            R::exp(a)
        }
        #[function]
        pub fn uses_derived(a: Tensor![(3,), f32]) -> Tensor![(3,), f32] {
            derived(a)
        }
    }"#);
    let t = text(&l);
    assert!(
        t.contains("@R.function(private=True)\n    def helper("),
        "{t}"
    );
    assert!(
        t.contains("y: R.Tensor((n, 4), dtype=\"float32\") = cls.helper(x)"),
        "{t}"
    );
    let helper = l.module.get_relax("helper").unwrap();
    assert_eq!(helper.global_symbol(), None);
    assert_eq!(
        l.module.get_relax("main").unwrap().global_symbol(),
        Some("main")
    );
    // Source order is kept in `functions`; the derived result is recorded.
    let names: Vec<_> = l.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["main", "helper", "derived", "uses_derived"]);
    assert!(!l.functions[1].public);
    assert_eq!(dsl_of(&l.functions[2].ret), "Tensor![(3,), f32]");
}

#[test]
fn if_on_a_bool_prim_value() {
    let l = ok(r#"pub mod m {
        #[function]
        pub fn pick(c: bool, x: Tensor![(n,), f32]) -> Tensor![(n,), f32] {
            let y = if c {
                let a = R::exp(x);
                a
            } else {
                R::negative(x)
            };
            y
        }
    }"#);
    let t = text(&l);
    assert!(t.contains("if c:"), "{t}");
    assert!(t.contains("else:"), "{t}");
    assert!(t.contains("R.negative(x)"), "{t}");
}

#[test]
fn attributes_and_docs() {
    let l = ok(r#"pub mod m {
        /// Adds one.
        /// Twice documented.
        #[function]
        #[func_attr(Primitive = 1, Codegen = "x", Scale = 0.5, Flag = true)]
        pub fn f(x: Tensor![(2,), f32]) -> Tensor![(2,), f32] {
            let one = 1.0;
            let y = R::add(x, one);
            y
        }
    }"#);
    let f = l.module.get_relax("f").unwrap();
    assert_eq!(f.attrs.get("Primitive").and_then(|v| v.as_int()), Some(1));
    assert_eq!(f.attrs.get("Codegen").and_then(|v| v.as_str()), Some("x"));
    assert_eq!(f.attrs.get("Flag").and_then(|v| v.as_bool()), Some(true));
    assert!(f.attrs.get("Scale").is_some());
    assert_eq!(
        f.attrs.get("doc").and_then(|v| v.as_str()),
        Some("Adds one.\nTwice documented.")
    );
    assert_eq!(
        l.functions[0].doc.as_deref(),
        Some("Adds one.\nTwice documented.")
    );
    assert!(
        text(&l).contains("one: R.Tensor((), dtype=\"float32\") = R.const(1.0"),
        "{}",
        text(&l)
    );
}

#[test]
fn literals_take_their_suffix_dtype() {
    let l = ok(r#"pub mod m {
        #[function]
        pub fn f() -> Object {
            let a = 2;
            let b = 1.5f64;
            let c = 3i32;
            let d = true;
            let e = -2.0;
            let n = R::prim(7);
            let s = R::shape([2, 3]);
            (a, b, c, d, e, n, s)
        }
    }"#);
    let f = l.module.get_relax("f").unwrap();
    let body = f.body.as_seq().unwrap();
    let dtypes: Vec<String> = body.blocks[0]
        .bindings
        .iter()
        .take(5)
        .map(|b| dsl_of(b.var().struct_info().unwrap()))
        .collect();
    assert_eq!(
        dtypes,
        [
            "Tensor![(), i64]",
            "Tensor![(), f64]",
            "Tensor![(), i32]",
            "Tensor![(), bool]",
            "Tensor![(), f32]"
        ]
    );
}

#[test]
fn call_packed_in_an_impure_function() {
    let l = ok(r#"pub mod m {
        #[function(pure = false)]
        pub fn f(x: Tensor![(2,), f32]) -> Tensor![(2,), f32] {
            R::call_packed("my.print", x);
            let y = R::call_packed("my.double", x, sinfo = Tensor![(2,), f32]);
            y
        }
    }"#);
    let t = text(&l);
    assert!(t.contains("@R.function(pure=False)"), "{t}");
    assert!(
        t.contains(r#"y: R.Tensor((2,), dtype="float32") = R.call_packed("my.double", x, ty_args=(R.Tensor((2,), dtype="float32"),))"#),
        "{t}"
    );
}

/// `R::print` and `R::assert_op` lower to TVM's ops, the format first
/// (after the condition); a format that is not a string literal, an
/// unknown keyword and a call inside a dataflow block are spanned errors.
#[test]
fn print_and_assert_op() {
    let l = ok(r#"pub mod m {
        #[function(pure = false)]
        pub fn f(x: Tensor![(2,), f32], ok: Tensor![(), bool]) -> Tensor![(2,), f32] {
            R::print(x, format = "x = {}");
            R::assert_op(ok, x, format = "bad: {}");
            R::print(x);
            x
        }
    }"#);
    let t = text(&l);
    assert!(t.contains(r#"R.print(x, format=R.str("x = {}"))"#), "{t}");
    assert!(
        t.contains(r#"R.assert_op(ok, x, format=R.str("bad: {}"))"#),
        "{t}"
    );
    assert!(t.contains(r#"R.print(x, format=R.str(""))"#), "{t}");
    let wrap = |body: &str| {
        format!(
            r#"pub mod m {{
        #[function(pure = false)]
        pub fn f(x: Tensor![(2,), f32]) -> Tensor![(2,), f32] {{
            {body}
            x
        }}
    }}"#
        )
    };
    let src = wrap("R::print(x, format = x);");
    let e = one_error_at(&src, "x);", 0);
    assert!(e.message.contains("as a string literal"), "{}", e.message);
    let src = wrap(r#"R::print(x, fmt = "{}");"#);
    let e = one_error_at(&src, "fmt", 0);
    assert!(
        e.message.contains("unknown keyword argument `fmt`"),
        "{}",
        e.message
    );
    let src = wrap("R::dataflow! { R::print(x); let y = R::add(x, x); R::output(y); }");
    assert!(errs(&src).iter().any(|e| e
        .message
        .contains("impure call `R::print` inside `R::dataflow!`")));
}

#[test]
fn function_item_form() {
    let attr = tokens("pure = false");
    let item = tokens(
        r#"/// Doubles.
        pub fn double(x: Tensor![(n,), f32]) -> Tensor![(n,), f32] {
            R::call_packed("my.print", x);
            R::add(x, x)
        }"#,
    );
    let l = lower_function_item(attr, item).unwrap();
    assert_eq!(l.mod_name.to_string(), "double");
    assert_eq!(l.doc.as_deref(), Some("Doubles."));
    let f = l.module.get_relax("double").unwrap();
    assert!(!f.is_pure);
    assert_eq!(f.global_symbol(), Some("double"));
    let pure = lower_function_item(
        TokenStream::new(),
        tokens("pub fn id(x: Tensor![_, _]) -> Tensor![_, _] { x }"),
    )
    .unwrap();
    assert!(pure.module.get_relax("id").unwrap().is_pure);
    let bad = lower_function_item(
        tokens("pur = false"),
        tokens("pub fn id(x: Object) -> Object { x }"),
    );
    assert!(bad.unwrap_err()[0]
        .message
        .contains("unknown function option `pur`"));
}

#[test]
fn content_hash_is_stable_and_sensitive() {
    let a = ok(MLP).content_hash;
    assert_eq!(a, ok(MLP).content_hash);
    let b = ok(&MLP.replace("(10,)", "(10, )")).content_hash;
    assert_eq!(a, b, "whitespace inside tokens does not matter");
    let c = ok(&MLP.replace("lv2", "lv9")).content_hash;
    assert_ne!(a, c);
}

#[test]
fn shadowing_makes_a_new_variable() {
    let l = ok(r#"pub mod m {
        #[function]
        pub fn f(x: Tensor![(2,), f32]) -> Tensor![(2,), f32] {
            let y = R::exp(x);
            let y = R::exp(y);
            y
        }
    }"#);
    let t = text(&l);
    assert!(
        t.contains("y: R.Tensor((2,), dtype=\"float32\") = R.exp(x)"),
        "{t}"
    );
    assert!(
        t.contains("y_1: R.Tensor((2,), dtype=\"float32\") = R.exp(y)"),
        "{t}"
    );
    assert!(t.contains("return y_1"), "{t}");
}

// ----- checks: one per kind, message and span ---------------------------------

#[test]
fn shape_mismatch_points_at_the_inner_call() {
    let src = r#"pub mod m {
        #[function]
        pub fn f(x: Tensor![(n, 784), f32], w: Tensor![(128, 784), f32]) -> Tensor![(n, 128), f32] {
            let y = R::nn::relu(R::matmul(x, w));
            y
        }
    }"#;
    let e = one_error_at(src, "R::matmul", 0);
    assert_eq!(
        e.message,
        "matmul: inner dimensions differ: x is (n, 784), w is (128, 784)"
    );
    assert_eq!(culprit(src, &e), "R::matmul(x, w)");
}

#[test]
fn dtype_mismatch_names_both_dtypes() {
    let src = r#"pub mod m {
        #[function]
        pub fn f(x: Tensor![(4,), f32], y: Tensor![(4,), i64]) -> Object {
            let z = R::add(x, y);
            z
        }
    }"#;
    let e = one_error_at(src, "R::add", 0);
    assert_eq!(culprit(src, &e), "R::add(x, y)");
    assert!(
        e.message.contains("float32") || e.message.contains("f32"),
        "{}",
        e.message
    );
    assert!(
        e.message.contains("int64") || e.message.contains("i64"),
        "{}",
        e.message
    );
}

#[test]
fn unknown_op_suggests_the_nearest() {
    let src = r#"pub mod m {
        #[function]
        pub fn f(x: Tensor![(2, 2), f32]) -> Object {
            let y = R::matmull(x, x);
            y
        }
    }"#;
    let e = one_error_at(src, "R::matmull", 0);
    assert_eq!(
        e.message,
        "unknown op `R::matmull`; did you mean `R::matmul`?"
    );
    let src = src.replace("R::matmull", "R::nn::rellu");
    let e = one_error_at(&src, "R::nn::rellu", 0);
    assert_eq!(
        e.message,
        "unknown op `R::nn::rellu`; did you mean `R::nn::relu`?"
    );
    assert_eq!(culprit(&src, &e), "R::nn::rellu");
}

#[test]
fn wrong_arity() {
    let src = r#"pub mod m {
        #[function]
        pub fn f(x: Tensor![(2, 2), f32]) -> Object {
            let y = R::add(x);
            y
        }
    }"#;
    let e = one_error_at(src, "R::add", 0);
    assert_eq!(e.message, "add takes 2 arguments, but 1 was given");
    assert_eq!(culprit(src, &e), "R::add(x)");
}

#[test]
fn unknown_and_ill_typed_attributes_point_at_the_keyword() {
    let src = r#"pub mod m {
        #[function]
        pub fn f(x: Tensor![(2, 2), f32]) -> Object {
            let y = R::sum(x, axes = [1]);
            let z = R::sum(x, keepdims = "yes");
            (y, z)
        }
    }"#;
    let errors = errs(src);
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_eq!(
        errors[0].message,
        "sum: unknown attribute `axes`; expected one of `axis`, `keepdims`"
    );
    assert_eq!(start(&errors[0]), pos(src, "axes", 0));
    assert!(
        errors[1].message.contains("keepdims"),
        "{}",
        errors[1].message
    );
    assert_eq!(start(&errors[1]), pos(src, "keepdims", 0));
    assert_eq!(culprit(src, &errors[0]), "axes = [1]");
    assert_eq!(culprit(src, &errors[1]), r#"keepdims = "yes""#);
}

#[test]
fn undefined_variable_suggests_the_nearest() {
    let src = r#"pub mod m {
        #[function]
        pub fn f(input: Tensor![(2,), f32]) -> Object {
            let y = R::exp(inptu);
            y
        }
    }"#;
    let e = one_error_at(src, "inptu", 0);
    assert_eq!(
        e.message,
        "undefined variable `inptu`; did you mean `input`?"
    );
    assert_eq!(culprit(src, &e), "inptu");
}

#[test]
fn undefined_symbolic_dim() {
    let src = r#"pub mod m {
        #[function]
        pub fn f(x: Tensor![(n,), f32]) -> Tensor![(m,), f32] {
            x
        }
    }"#;
    let e = one_error_at(src, "m,", 0);
    assert_eq!(e.message, "undefined symbolic dim `m`");
    let src = r#"pub mod m {
        #[function]
        pub fn f(x: Tensor![(n,), f32]) -> Object {
            let s = R::shape([n, k]);
            s
        }
    }"#;
    let e = one_error_at(src, "k]", 0);
    assert_eq!(e.message, "undefined symbolic dim `k`");
}

#[test]
fn dataflow_variable_used_after_its_block() {
    let src = r#"pub mod m {
        #[function]
        pub fn f(x: Tensor![(2,), f32]) -> Object {
            R::dataflow! {
                let lv = R::exp(x);
                let gv = R::exp(lv);
                R::output(gv);
            }
            let z = R::add(gv, lv);
            z
        }
    }"#;
    let e = one_error_at(src, "lv)", 1);
    let (l, c) = pos(src, "R::dataflow", 0);
    assert_eq!(
        e.message,
        format!(
            "`lv` is a dataflow variable of the block at {l}:{}; list it in R::output to use it here",
            c + 1
        )
    );
}

#[test]
fn impure_call_in_a_dataflow_block_and_in_a_pure_function() {
    let src = r#"pub mod m {
        #[function(pure = false)]
        pub fn f(x: Tensor![(2,), f32]) -> Object {
            R::dataflow! {
                let y = R::call_packed("p", x, sinfo = Tensor![(2,), f32]);
                R::output(y);
            }
            y
        }
    }"#;
    let e = one_error_at(src, "R::call_packed", 0);
    assert!(
        e.message
            .starts_with("impure call `R::call_packed` inside `R::dataflow!`"),
        "{}",
        e.message
    );
    let src = r#"pub mod m {
        #[function]
        pub fn f(x: Tensor![(2,), f32]) -> Object {
            let y = R::call_packed("p", x, sinfo = Tensor![(2,), f32]);
            y
        }
    }"#;
    let e = one_error_at(src, "R::call_packed", 0);
    assert_eq!(
        e.message,
        "impure call `R::call_packed` in a pure function: mark the function `#[function(pure = false)]`"
    );
    assert_eq!(
        culprit(src, &e),
        r#"R::call_packed("p", x, sinfo = Tensor![(2,), f32])"#
    );
}

#[test]
fn binding_annotation_provably_different() {
    let src = r#"pub mod m {
        #[function]
        pub fn f(x: Tensor![(n, 4), f32]) -> Object {
            let y: Tensor![(n, 5), f32] = R::exp(x);
            let z: Tensor![_, f32] = R::exp(x);
            (y, z)
        }
    }"#;
    let e = one_error_at(src, "Tensor![(n, 5)", 0);
    assert_eq!(
        e.message,
        "annotation `Tensor![(n, 5), f32]` does not match the inferred `Tensor![(n, 4), f32]`"
    );
    assert_eq!(culprit(src, &e), "Tensor![(n, 5), f32]");
}

#[test]
fn return_annotation_provably_different() {
    let src = r#"pub mod m {
        #[function]
        pub fn f(x: Tensor![(n, 4), f32]) -> Tensor![(n, 4), i32] {
            x
        }
    }"#;
    let e = one_error_at(src, "Tensor![(n, 4), i32]", 0);
    assert_eq!(
        e.message,
        "return annotation `Tensor![(n, 4), i32]` does not match the inferred `Tensor![(n, 4), f32]`"
    );
    assert_eq!(culprit(src, &e), "Tensor![(n, 4), i32]");
}

#[test]
fn duplicate_function_and_parameter_names() {
    let src = r#"pub mod m {
        #[function]
        pub fn f(x: Object) -> Object { x }
        #[function]
        fn f(y: Object) -> Object { y }
        #[function]
        pub fn g(x: Object, x: Object) -> Object { x }
    }"#;
    let errors = errs(src);
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_eq!(errors[0].message, "duplicate function `f` in the module");
    assert_eq!(start(&errors[0]), pos(src, "f(y", 0));
    assert_eq!(errors[1].message, "duplicate parameter `x`");
    assert_eq!(start(&errors[1]), pos(src, "x: Object)", 1));
}

#[test]
fn unsupported_syntax_names_expected_and_found() {
    let src = r#"pub mod m {
        #[function]
        pub fn f(x: Tensor![(2,), f32]) -> Object {
            let y = x.exp();
            y
        }
    }"#;
    let e = one_error_at(src, "x.exp()", 0);
    assert!(
        e.message
            .starts_with("unsupported syntax in a relax function: expected a relax expression"),
        "{}",
        e.message
    );
    assert!(
        e.message.contains("found a method call `x.exp()`"),
        "{}",
        e.message
    );
    assert_eq!(culprit(src, &e), "x.exp()");
}

#[test]
fn call_tir_needs_a_prim_func() {
    let src = r#"pub mod m {
        #[function]
        pub fn f(x: Tensor![(2,), f32]) -> Object {
            let y = R::call_tir(add_one, (x,), out = Tensor![(2,), f32]);
            y
        }
    }"#;
    let e = one_error_at(src, "add_one", 0);
    assert_eq!(
        e.message,
        "call_tir needs a PrimFunc `add_one` in the module; the DSL cannot define PrimFuncs yet"
    );
}

#[test]
fn independent_errors_are_all_reported_without_cascades() {
    let src = r#"pub mod m {
        #[function]
        pub fn f(x: Tensor![(n, 4), f32]) -> Object {
            let a = R::exx(x);
            let b = R::add(a, a);
            let c = R::nn::relu(b);
            let d = R::exp(undefined_thing);
            (c, d)
        }
        #[function]
        pub fn g(x: Tensor![(2,), f32]) -> Object {
            let y = R::sum(x, axis = [1], color = 3);
            y
        }
    }"#;
    let errors = errs(src);
    let messages: Vec<_> = errors.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert!(messages[0].starts_with("unknown op `R::exx`"));
    assert!(messages[1].starts_with("undefined variable `undefined_thing`"));
    assert!(messages[2].contains("`color`"));
}

#[test]
fn dataflow_block_rules() {
    let src = r#"pub mod m {
        #[function]
        pub fn f(x: Tensor![(2,), f32]) -> Object {
            R::dataflow! {
                let a = R::exp(x);
                R::output(b);
            }
            x
        }
    }"#;
    let e = one_error_at(src, "b)", 0);
    assert!(e
        .message
        .starts_with("`b` is not bound in this `R::dataflow!` block"));
}

#[test]
fn symbolic_dims_must_stand_alone_in_the_parameters() {
    let src = r#"pub mod m {
        #[function]
        pub fn f(x: Tensor![(n * 2,), f32]) -> Object {
            x
        }
    }"#;
    let e = one_error_at(src, "n * 2", 0);
    assert!(e
        .message
        .starts_with("symbolic dim `n` is not defined by the parameters"));
    assert_eq!(culprit(src, &e), "n");
}

#[test]
fn errors_cover_the_culprit_tokens() {
    // A negative literal is one culprit with its sign; a syn parse error
    // inside an annotation keeps its whole range; a nested `R::dataflow!`
    // is named by its head, not its body; `if` in a dataflow block by
    // `if cond`.
    let src = r#"pub mod m {
        #[function]
        pub fn f(x: Tensor![(2,), f32], c: bool) -> Object {
            let a = -300i8;
            let b: Tensor![n + 1, f32] = x;
            R::dataflow! {
                R::dataflow! {
                    let d = x;
                    R::output(d);
                }
                let e = if c { x } else { x };
                R::output(e);
            }
            (a, b, x, e)
        }
    }"#;
    let errors = errs(src);
    let found: Vec<(&str, &str)> = errors
        .iter()
        .map(|e| (culprit(src, e), e.message.as_str()))
        .collect();
    assert_eq!(found.len(), 4, "{found:?}");
    assert_eq!(found[0].0, "-300i8", "{found:?}");
    assert_eq!(found[1].0, "n + 1", "{found:?}");
    assert!(
        found[1].1.starts_with("expected a shape such as"),
        "{found:?}"
    );
    assert_eq!(found[2].0, "R::dataflow!", "{found:?}");
    assert_eq!(found[3].0, "if c", "{found:?}");
}

#[test]
fn the_compile_error_spans_the_whole_range() {
    let src = r#"pub mod m {
        #[function]
        pub fn f(x: Tensor![(2, 3), f32], y: Tensor![(2, 4), f32]) -> Object {
            let z = R::add(x, y);
            z
        }
    }"#;
    let e = one_error_at(src, "R::add", 0);
    let tokens: Vec<TokenTree> = e.to_compile_error().into_iter().collect();
    let (first, last) = (&tokens[0], &tokens[tokens.len() - 1]);
    // `::core::compile_error! { … }`: the path starts the range, the
    // braces end it; rustc reports the invocation from one to the other.
    assert_eq!(first.to_string(), ":");
    assert!(matches!(last, TokenTree::Group(_)), "{last}");
    assert_eq!(first.span().start(), pos_lc(src, "R::add", 0));
    assert_eq!(last.span().end(), e.range.end.end());
    assert_eq!(culprit(src, &e), "R::add(x, y)");
}

fn pos_lc(src: &str, needle: &str, nth: usize) -> proc_macro2::LineColumn {
    let (line, column) = pos(src, needle, nth);
    proc_macro2::LineColumn { line, column }
}

// ----- robustness and size --------------------------------------------------------

fn mutate_inputs() -> Vec<String> {
    let seeds = [
        MLP.to_string(),
        r#"pub mod m {
            #[function(pure = false)]
            #[func_attr(Primitive = 1)]
            pub fn f(c: bool, x: Tensor![(n, 4), f32]) -> (Tensor![(n, 4), f32], Tensor![(), i64]) {
                let y = R::match_cast(x, Tensor![(m, 4), f32]);
                let s = R::sum(y, axis = [1], keepdims = true);
                let z = if c { let q = R::exp(x); q } else { R::negative(x) };
                R::call_packed("p", z, sinfo = Object);
                let t = (z, R::prim(2));
                (t.0, 3i64)
            }
            #[function]
            fn g(a: Tensor![_, _]) -> Tensor![ndim = 2, f32] { a }
        }"#
        .to_string(),
    ];
    let mut out: Vec<String> = seeds.to_vec();
    for seed in &seeds {
        let toks: Vec<String> = seed
            .split_whitespace()
            .flat_map(|w| {
                // Split punctuation off words so token-level edits happen.
                let mut parts = Vec::new();
                let mut cur = String::new();
                for ch in w.chars() {
                    if ch.is_alphanumeric() || ch == '_' || ch == '.' || ch == '"' {
                        cur.push(ch);
                    } else {
                        if !cur.is_empty() {
                            parts.push(std::mem::take(&mut cur));
                        }
                        parts.push(ch.to_string());
                    }
                }
                if !cur.is_empty() {
                    parts.push(cur);
                }
                parts
            })
            .collect();
        let n = toks.len();
        let join = |v: &[String]| v.join(" ");
        // Truncations at every point.
        for i in 0..n {
            out.push(join(&toks[..i]));
        }
        // Drops, duplicates and swaps at a stride.
        for i in (0..n).step_by(3) {
            let mut v = toks.clone();
            v.remove(i);
            out.push(join(&v));
            let mut v = toks.clone();
            v.insert(i, toks[i].clone());
            out.push(join(&v));
            if i + 1 < n {
                let mut v = toks.clone();
                v.swap(i, i + 1);
                out.push(join(&v));
            }
        }
        // Replacements of identifiers and literals.
        let replacements = [
            "x",
            "n",
            "0",
            "-1",
            "1.5",
            "true",
            "R",
            "_",
            "Tensor",
            "f32",
            "999999999999999999999",
        ];
        for i in (0..n).step_by(2) {
            let r = replacements[i % replacements.len()];
            let mut v = toks.clone();
            v[i] = r.to_string();
            out.push(join(&v));
        }
    }
    out
}

#[test]
fn mutated_inputs_never_panic() {
    let inputs = mutate_inputs();
    assert!(inputs.len() >= 300, "only {} inputs", inputs.len());
    for seed in &inputs[..2] {
        ok(seed);
    }
    let mut lowered = 0;
    for src in &inputs {
        // Inputs that do not even tokenize never reach the macro.
        let Ok(ts) = TokenStream::from_str(src) else {
            continue;
        };
        let result = std::panic::catch_unwind(|| lower_module_macro(ts));
        match result {
            Ok(Ok(_)) => lowered += 1,
            Ok(Err(errors)) => assert!(!errors.is_empty(), "Err without errors for:\n{src}"),
            Err(_) => panic!("the frontend panicked on:\n{src}"),
        }
    }
    assert!(lowered >= 2, "the unmutated seeds lower");
}

#[test]
fn a_module_with_200_bindings_lowers() {
    use quote::{format_ident, quote};
    let mut stmts = Vec::new();
    let mut prev = format_ident!("x");
    for i in 0..200usize {
        let v = format_ident!("v{}", i);
        let op = match i % 4 {
            0 => quote!(R::add(#prev, x)),
            1 => quote!(R::nn::relu(#prev)),
            2 => quote!(R::multiply(#prev, #prev)),
            _ => quote!(R::exp(#prev)),
        };
        stmts.push(quote!(let #v = #op;));
        prev = v;
    }
    let input = quote! {
        pub mod big {
            #[function]
            pub fn main(x: Tensor![(n, 64), f32]) -> Tensor![(n, 64), f32] {
                R::dataflow! {
                    #(#stmts)*
                    R::output(#prev);
                }
                #prev
            }
        }
    };
    let l = lower_module_macro(input).unwrap_or_else(|e| panic!("{e:?}"));
    let f = l.module.get_relax("main").unwrap();
    assert_eq!(f.body.as_seq().unwrap().blocks[0].bindings.len(), 200);
}

#[test]
fn well_formedness_errors_land_on_the_function() {
    // Recursion inside a dataflow block passes every expansion check but
    // not the well-formedness rules.
    let src = r#"pub mod m {
        #[function]
        pub fn f(x: Tensor![(2,), f32]) -> Tensor![(2,), f32] {
            R::dataflow! {
                let y = f(x);
                R::output(y);
            }
            y
        }
    }"#;
    let errors = errs(src);
    assert!(!errors.is_empty());
    for e in &errors {
        assert_eq!(start(e), pos(src, "f(x:", 0), "{}", e.message);
        assert!(e.message.contains("function `f`"), "{}", e.message);
        assert!(e.notes[0].starts_with("found by the well-formedness check"));
    }
}

#[test]
fn items_and_attributes_that_are_not_dsl() {
    let src = r#"pub mod m {
        #[function]
        #[inline]
        pub fn f(x: Object) -> Object { x }
        pub fn g(x: Object) -> Object { x }
        struct S;
    }"#;
    let errors = errs(src);
    let messages: Vec<_> = errors.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert!(
        messages[0].starts_with("unsupported syntax in a relax function: expected `#[function]`")
    );
    assert_eq!(start(&errors[0]), pos(src, "#[inline]", 0));
    assert!(messages[1].starts_with("expected `#[function]` on `fn g`"));
    assert_eq!(start(&errors[1]), pos(src, "g(x", 0));
    assert!(messages[2].contains("found `struct S;`"), "{}", messages[2]);
}

#[test]
fn calls_between_functions_are_checked_and_purity_propagates() {
    let src = r#"pub mod m {
        #[function]
        pub fn main(x: Tensor![(3,), f32]) -> Object {
            let a = helper(x, x);
            let b = log(x);
            (a, b)
        }
        #[function(pure = false)]
        fn log(x: Tensor![(3,), f32]) -> Object {
            R::call_packed("print", x)
        }
        #[function]
        fn helper(x: Tensor![(3,), f32]) -> Object { x }
    }"#;
    let errors = errs(src);
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_eq!(start(&errors[0]), pos(src, "helper(x, x)", 0));
    assert_eq!(
        errors[0].message,
        "`helper` takes 1 argument, but 2 were given"
    );
    assert_eq!(start(&errors[1]), pos(src, "log(x)", 0));
    assert_eq!(
        errors[1].message,
        "impure call of `log` in a pure function: mark the function `#[function(pure = false)]`"
    );
}

#[test]
fn batch_norm_gives_a_tuple_and_checks_its_channels() {
    let l = ok(r#"pub mod m {
        #[function]
        pub fn bn(x: Tensor![(n, 8, 4, 4), f32], g: Tensor![(8,), f32], b: Tensor![(8,), f32], mm: Tensor![(8,), f32], mv: Tensor![(8,), f32]) -> Tensor![(n, 8, 4, 4), f32] {
            let t = R::nn::batch_norm(x, g, b, mm, mv, axis = 1, training = false);
            t.0
        }
    }"#);
    let t = text(&l);
    assert!(
        t.contains("= R.nn.batch_norm(x, g, b, mm, mv, axis=1,") && t.contains("training=False)"),
        "{t}"
    );
    assert!(
        t.contains("t: R.Tuple(R.Tensor((n, 8, 4, 4), dtype=\"float32\"), R.Tensor((8,)"),
        "{t}"
    );
    let e = one_error_at(
        r#"pub mod m {
        #[function]
        pub fn bn(x: Tensor![(2, 8), f32], g: Tensor![(7,), f32]) -> Tensor![(2, 8), f32] {
            let t = R::nn::batch_norm(x, g, g, g, g, axis = 1);
            t.0
        }
    }"#,
        "R::nn::batch_norm(x, g, g, g, g, axis = 1)",
        0,
    );
    assert!(e.message.contains("one value per channel"), "{}", e.message);
}

/// `R::dtype` takes one dtype name; anything else is an error on it.
#[test]
fn dtype_values_take_one_dtype_name() {
    let src = r#"pub mod m {
        #[function]
        pub fn f(x: Tensor![(2,), f32]) -> Object {
            let a = R::memory::view(x, R::shape([2]), R::dtype("int32"), R::prim(0));
            let b = R::dtype("int33");
            let c = R::dtype(3);
            (a, b, c)
        }
    }"#;
    let errors = errs(src);
    let found: Vec<(&str, &str)> = errors
        .iter()
        .map(|e| (culprit(src, e), e.message.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            ("\"int33\"", "`int33` is not a dtype"),
            (
                "R::dtype(3)",
                "`R::dtype` takes one string literal, such as `R::dtype(\"int32\")`"
            ),
        ]
    );
}
