//! `RemoveUnusedParameters`: before/expected modules (the cases of TVM's
//! `test_transform_remove_unused_parameters.py` that TVM expects to pass,
//! and the limits of the pass).

use super::*;
use crate::transform::test_util::{assert_pass, parse};

#[track_caller]
fn check(before: &str, expected: &str) {
    assert_pass(&RemoveUnusedParameters, parse(before), parse(expected));
}

#[test]
fn an_unused_parameter_of_a_private_function_goes_with_its_arguments() {
    let before = r#"
@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor((4,), dtype="float32"), b: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        cls = Module
        x: R.Tensor((4,), dtype="float32") = cls.func(a, b)
        y: R.Tensor((4,), dtype="float32") = cls.func(x, a)
        return y

    @R.function(private=True)
    def func(a: R.Tensor((4,), dtype="float32"), b: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        return a
"#;
    let expected = r#"
@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor((4,), dtype="float32"), b: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        cls = Module
        x: R.Tensor((4,), dtype="float32") = cls.func(a)
        y: R.Tensor((4,), dtype="float32") = cls.func(x)
        return y

    @R.function(private=True)
    def func(a: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        return a
"#;
    check(before, expected);
}

#[test]
fn a_shape_that_only_repeats_symbolic_variables_goes() {
    // TVM's `test_remove_extra_shape_variables`.
    let before = r#"
@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor(("m", "n"), dtype="float32")) -> R.Tensor(("m", "n"), dtype="float32"):
        m = T.int64()
        n = T.int64()
        cls = Module
        y: R.Tensor((m, n), dtype="float32") = cls.func(a, R.shape([m, n]))
        return y

    @R.function(private=True)
    def func(a: R.Tensor(("m", "n"), dtype="float32"), s: R.Shape(["m", "n"])) -> R.Tensor(("m", "n"), dtype="float32"):
        m = T.int64()
        n = T.int64()
        z: R.Tensor((m, n), dtype="float32") = R.zeros(R.shape([m, n]), dtype="float32")
        out: R.Tensor((m, n), dtype="float32") = R.add(a, z)
        return out
"#;
    let expected = r#"
@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor(("m", "n"), dtype="float32")) -> R.Tensor(("m", "n"), dtype="float32"):
        m = T.int64()
        n = T.int64()
        cls = Module
        y: R.Tensor((m, n), dtype="float32") = cls.func(a)
        return y

    @R.function(private=True)
    def func(a: R.Tensor(("m", "n"), dtype="float32")) -> R.Tensor(("m", "n"), dtype="float32"):
        m = T.int64()
        n = T.int64()
        z: R.Tensor((m, n), dtype="float32") = R.zeros(R.shape([m, n]), dtype="float32")
        out: R.Tensor((m, n), dtype="float32") = R.add(a, z)
        return out
"#;
    check(before, expected);
}

#[test]
fn public_functions_values_and_sole_definitions_stay() {
    let before = r#"
@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor((4,), dtype="float32"), b: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        cls = Module
        x: R.Tensor((4,), dtype="float32") = cls.exported(a, b)
        return x

    @R.function
    def exported(a: R.Tensor((4,), dtype="float32"), b: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        return a

    @R.function(private=True)
    def defines(a: R.Tensor(("m",), dtype="float32"), b: R.Tensor(("n",), dtype="float32")) -> R.Shape(["n"]):
        n = T.int64()
        return R.shape([n])
"#;
    // `exported` is public; `defines` reads `b` only through `n`, which no
    // other parameter defines.
    check(before, before);
}
