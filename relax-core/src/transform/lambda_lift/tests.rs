//! `LambdaLift`: before/expected modules (after TVM's
//! `test_transform_lambda_lift.py`) and nested functions building and
//! running on every target.

use super::*;
use crate::backend::{build, Target};
use crate::transform::test_util::{assert_pass, parse_t4 as parse};
use relax_runtime::{Tensor, Value, VirtualMachine};

#[track_caller]
fn check(before: &str, expected: &str) {
    assert_pass(&LambdaLift, parse(before), parse(expected));
}

const CAPTURING: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: T) -> T:
        @R.function
        def inner(y: T) -> T:
            z: T = R.add(y, x)
            return z

        a: T = inner(x)
        b: T = inner(a)
        return b
"#;

#[test]
fn a_local_function_becomes_a_private_function() {
    let before = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: T) -> T:
        @R.function
        def inner(y: T) -> T:
            z: T = R.add(y, y)
            return z

        a: T = inner(x)
        return a
"#;
    let expected = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: T) -> T:
        cls = Module
        a: T = cls.main_inner(x)
        return a

    @R.function(private=True)
    def main_inner(y: T) -> T:
        z: T = R.add(y, y)
        return z
"#;
    check(before, expected);
}

#[test]
fn captured_variables_become_leading_parameters() {
    let expected = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: T) -> T:
        cls = Module
        a: T = cls.main_inner(x, x)
        b: T = cls.main_inner(x, a)
        return b

    @R.function(private=True)
    def main_inner(x: T, y: T) -> T:
        z: T = R.add(y, x)
        return z
"#;
    check(CAPTURING, expected);
}

#[test]
fn a_local_function_used_as_a_value_stays() {
    let before = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: T) -> R.Tuple(R.Callable((R.Tensor((4,), dtype="float32"),), R.Tensor((4,), dtype="float32"))):
        @R.function
        def inner(y: T) -> T:
            return y

        t: R.Tuple(R.Callable((R.Tensor((4,), dtype="float32"),), R.Tensor((4,), dtype="float32"))) = (inner,)
        return t
"#;
    check(before, before);
}

#[test]
fn nested_functions_build_and_run_on_every_target() {
    let module = parse(CAPTURING);
    let x: Value = Tensor::from_vec(&[4], vec![1.0f32, 2.0, 3.0, 4.0])
        .unwrap()
        .into();
    // b = (x + x) + x
    let want = vec![3.0f32, 6.0, 9.0, 12.0];
    let mut targets = vec![Target::interpreter(), Target::tir_interpreter()];
    if cfg!(feature = "llvm") {
        targets.push(Target::host());
    }
    for target in targets {
        let exec = build(&module, &target).unwrap_or_else(|e| panic!("{target}: {e}"));
        let got = VirtualMachine::new(&exec)
            .call("main", std::slice::from_ref(&x))
            .unwrap();
        assert_eq!(
            got.as_tensor().unwrap().to_vec::<f32>().unwrap(),
            want,
            "{target}"
        );
    }
}
