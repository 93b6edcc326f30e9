//! `BindSymbolicVars`: before/expected modules and the errors (the cases
//! of TVM's `test_bind_symbolic_vars.py`, written for this project).

use super::*;
use crate::transform::test_util::{assert_pass, parse};

#[track_caller]
fn check(pass: BindSymbolicVars, before: &str, expected: &str) {
    check_module(pass, parse(before), expected)
}

#[track_caller]
fn check_module(pass: BindSymbolicVars, before: IRModule, expected: &str) {
    assert_pass(&pass, before, parse(expected));
}

#[track_caller]
fn fails(pass: BindSymbolicVars, before: &str, message: &str) {
    match pass.run(parse(before)) {
        Ok(m) => panic!("expected an error, got:\n{m}"),
        Err(e) => assert!(e.to_string().contains(message), "{e}"),
    }
}

const MATMUL: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor(("m", "k"), dtype="float32"), b: R.Tensor(("k", "n"), dtype="float32")) -> R.Tensor(("m", "n"), dtype="float32"):
        m = T.int64()
        k = T.int64()
        n = T.int64()
        with R.dataflow():
            gv: R.Tensor((m, n), dtype="float32") = R.matmul(a, b, out_dtype="void")
            R.output(gv)
        return gv
"#;

const MATMUL_STATIC: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor((128, 64), dtype="float32"), b: R.Tensor((64, 32), dtype="float32")) -> R.Tensor((128, 32), dtype="float32"):
        with R.dataflow():
            gv: R.Tensor((128, 32), dtype="float32") = R.matmul(a, b, out_dtype="void")
            R.output(gv)
        return gv
"#;

#[test]
fn names_bind_to_constants() {
    let pass = BindSymbolicVars::new(
        [("m", 128i64), ("k", 64), ("n", 32)].map(|(k, v)| (k, PrimExpr::int(v))),
    );
    check(pass, MATMUL, MATMUL_STATIC);
}

#[test]
fn variables_bind_as_names_do() {
    let m = parse(MATMUL);
    let vars = symbolic_vars(m.get_relax("main").unwrap());
    assert_eq!(
        vars.iter().map(|v| v.name()).collect::<Vec<_>>(),
        ["m", "k", "n"]
    );
    let pass = BindSymbolicVars::new(
        vars.into_iter()
            .zip([128i64, 64, 32])
            .map(|(v, c)| (SymbolicVar::Var(v), PrimExpr::int(c))),
    )
    .in_function("main");
    check_module(pass, m, MATMUL_STATIC);
}

#[test]
fn shapes_match_cast_and_inferred_results_are_bound_and_simplified() {
    let before = r#"
@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor(("m", "n"), dtype="float32"), s: R.Shape(["m", "n"]), c: R.Tensor(dtype="float32", ndim=2)) -> R.Tensor(("m * n * 2",), dtype="float32"):
        m = T.int64()
        n = T.int64()
        d: R.Tensor((m, n), dtype="float32") = R.match_cast(c, R.Tensor((m, n), dtype="float32"))
        e: R.Tensor((m, n), dtype="float32") = R.add(a, d)
        g: R.Tensor((m * 2, n), dtype="float32") = R.concat((e, e), axis=0)
        f: R.Tensor((m * n * 2,), dtype="float32") = R.reshape(g, R.shape([m * n * 2]))
        return f
"#;
    let expected = r#"
@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor(("m", 16), dtype="float32"), s: R.Shape(["m", 16]), c: R.Tensor(dtype="float32", ndim=2)) -> R.Tensor(("m * 32",), dtype="float32"):
        m = T.int64()
        d: R.Tensor((m, 16), dtype="float32") = R.match_cast(c, R.Tensor((m, 16), dtype="float32"))
        e: R.Tensor((m, 16), dtype="float32") = R.add(a, d)
        g: R.Tensor((m * 2, 16), dtype="float32") = R.concat((e, e), axis=0)
        f: R.Tensor((m * 32,), dtype="float32") = R.reshape(g, R.shape([m * 32]))
        return f
"#;
    check(
        BindSymbolicVars::new([("n", PrimExpr::int(16))]),
        before,
        expected,
    );
}

#[test]
fn a_replacement_may_use_a_new_variable_the_parameters_define() {
    let before = r#"
@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor(("m", "n"), dtype="float32")) -> R.Tensor(("m", "n"), dtype="float32"):
        return a
"#;
    let expected = r#"
@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor(("x * 2", "x"), dtype="float32")) -> R.Tensor(("x * 2", "x"), dtype="float32"):
        x = T.int64()
        return a
"#;
    let x = TirVar::new("x");
    let pass = BindSymbolicVars::new([
        ("m", PrimExpr::var(&x) * PrimExpr::int(2)),
        ("n", PrimExpr::var(&x)),
    ]);
    check(pass, before, expected);
    // Without `n = x`, nothing defines `x`.
    let pass = BindSymbolicVars::new([("m", PrimExpr::var(&x) * PrimExpr::int(2))]);
    fails(pass, before, "without defining it");
}

#[test]
fn errors() {
    let unknown = BindSymbolicVars::new([("q", PrimExpr::int(1))]);
    fails(
        unknown,
        MATMUL,
        "no function has a symbolic variable named `q`",
    );
    let foreign = BindSymbolicVars::new([(TirVar::new("m"), PrimExpr::int(1))]);
    fails(foreign, MATMUL, "`m` (as a variable)");
    let m = parse(MATMUL);
    let var = symbolic_vars(m.get_relax("main").unwrap())[0].clone();
    let twice = BindSymbolicVars::new([
        (SymbolicVar::Var(var), PrimExpr::int(1)),
        (SymbolicVar::from("m"), PrimExpr::int(1)),
    ]);
    let err = twice.run(m).unwrap_err().to_string();
    assert!(err.contains("replaced twice"), "{err}");
    let missing = BindSymbolicVars::new([("m", PrimExpr::int(1))]).in_function("other");
    fails(missing, MATMUL, "no Relax function `other`");
}

#[test]
fn output_struct_info_and_prim_values_are_bound() {
    // TVM's `test_bind_symbolic_vars_in_tensor_shape` and
    // `test_bind_usage_of_symbolic_vars_in_prim_value`.
    let before = r#"
@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor(("m", "n"), dtype="float32"), x: R.Prim(value="m * n")) -> R.Tensor(("m * n * 2",), dtype="float32"):
        m = T.int64()
        n = T.int64()
        b: R.Tensor((m * n * 2,), dtype="float32") = R.call_dps_packed("dummy_func", (a,), out_sinfo=R.Tensor((m * n * 2,), dtype="float32"))
        return b
"#;
    let expected = r#"
@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor((16, 16), dtype="float32"), x: R.Prim(value=256)) -> R.Tensor((512,), dtype="float32"):
        b: R.Tensor((512,), dtype="float32") = R.call_dps_packed("dummy_func", (a,), out_sinfo=R.Tensor((512,), dtype="float32"))
        return b
"#;
    let pass = BindSymbolicVars::new([("m", PrimExpr::int(16)), ("n", PrimExpr::int(16))]);
    check(pass, before, expected);
}
