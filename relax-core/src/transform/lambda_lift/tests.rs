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
fn a_local_function_used_as_a_value_becomes_a_closure() {
    // Without captures the value is the lifted function itself.
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
    let expected = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: T) -> R.Tuple(R.Callable((R.Tensor((4,), dtype="float32"),), R.Tensor((4,), dtype="float32"))):
        cls = Module
        inner: R.Callable((R.Tensor((4,), dtype="float32"),), R.Tensor((4,), dtype="float32"), True) = cls.main_inner
        t: R.Tuple(R.Callable((R.Tensor((4,), dtype="float32"),), R.Tensor((4,), dtype="float32"))) = (inner,)
        return t

    @R.function(private=True)
    def main_inner(y: T) -> T:
        return y
"#;
    check(before, expected);
    // With captures it is a closure over them (TVM's make_closure).
    check(CLOSURE, CLOSURE_LIFTED);
}

/// `adder(a)` returns a function adding `a`, which `main` calls.
const CLOSURE: &str = r#"
@I.ir_module
class Module:
    @R.function
    def adder(a: T) -> R.Callable((R.Tensor((4,), dtype="float32"),), R.Tensor((4,), dtype="float32"), True):
        @R.function
        def add_a(b: T) -> T:
            c: T = R.add(a, b)
            return c

        return add_a

    @R.function
    def main(x: T, y: T) -> T:
        cls = Module
        f: R.Callable((R.Tensor((4,), dtype="float32"),), R.Tensor((4,), dtype="float32"), True) = cls.adder(x)
        z: T = f(y)
        return z
"#;

const CLOSURE_LIFTED: &str = r#"
@I.ir_module
class Module:
    @R.function
    def adder(a: T) -> R.Callable((R.Tensor((4,), dtype="float32"),), R.Tensor((4,), dtype="float32"), True):
        cls = Module
        add_a: R.Callable((R.Tensor((4,), dtype="float32"),), R.Tensor((4,), dtype="float32"), True) = R.make_closure(cls.adder_add_a, (a,))
        return add_a

    @R.function(private=True)
    def adder_add_a(a: T, b: T) -> T:
        c: T = R.add(a, b)
        return c

    @R.function
    def main(x: T, y: T) -> T:
        cls = Module
        f: R.Callable((R.Tensor((4,), dtype="float32"),), R.Tensor((4,), dtype="float32"), True) = cls.adder(x)
        z: T = f(y)
        return z
"#;

/// A local function that calls itself: `count(n, acc)` adds `x` to `acc`
/// `n` times.
const RECURSIVE: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: T, n: R.Tensor((), dtype="int64")) -> T:
        @R.function
        def count(k: R.Tensor((), dtype="int64"), acc: T) -> T:
            c: R.Tensor((), dtype="bool") = R.greater(k, R.const(0, "int64"))
            if c:
                acc1: T = R.add(acc, x)
                k1: R.Tensor((), dtype="int64") = R.subtract(k, R.const(1, "int64"))
                r: T = count(k1, acc1)
            else:
                r: T = acc
            return r

        z: T = count(n, x)
        return z
"#;

#[test]
fn a_recursive_local_function_calls_its_lifted_self() {
    let expected = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: T, n: R.Tensor((), dtype="int64")) -> T:
        cls = Module
        z: T = cls.main_count(x, n, x)
        return z

    @R.function(private=True)
    def main_count(x: T, k: R.Tensor((), dtype="int64"), acc: T) -> T:
        cls = Module
        c: R.Tensor((), dtype="bool") = R.greater(k, R.const(0, "int64"))
        if c:
            acc1: T = R.add(acc, x)
            k1: R.Tensor((), dtype="int64") = R.subtract(k, R.const(1, "int64"))
            r: T = cls.main_count(x, k1, acc1)
        else:
            r: T = acc
        return r
"#;
    check(RECURSIVE, expected);
}

#[test]
fn closures_and_recursion_build_and_run_on_every_target() {
    let t = |v: Vec<f32>| -> Value { Tensor::from_vec(&[4], v).unwrap().into() };
    let x = t(vec![1.0, 2.0, 3.0, 4.0]);
    let y = t(vec![10.0, 20.0, 30.0, 40.0]);
    let n: Value = Tensor::from_vec(&[], vec![3i64]).unwrap().into();
    let mut targets = vec![Target::interpreter(), Target::tir_interpreter()];
    if cfg!(feature = "llvm") {
        targets.push(Target::host());
    }
    for target in targets {
        let exec = build(&parse(CLOSURE), &target).unwrap_or_else(|e| panic!("{target}: {e}"));
        let got = VirtualMachine::new(&exec)
            .call("main", &[x.clone(), y.clone()])
            .unwrap();
        let got = got.as_tensor().unwrap().to_vec::<f32>().unwrap();
        assert_eq!(got, [11.0, 22.0, 33.0, 44.0], "{target}: closure");
        let exec = build(&parse(RECURSIVE), &target).unwrap_or_else(|e| panic!("{target}: {e}"));
        let got = VirtualMachine::new(&exec)
            .call("main", &[x.clone(), n.clone()])
            .unwrap();
        // x + 3·x
        let got = got.as_tensor().unwrap().to_vec::<f32>().unwrap();
        assert_eq!(got, [4.0, 8.0, 12.0, 16.0], "{target}: recursion");
        // TVM's spelling: R.make_closure and R.invoke_closure written out.
        let text = include_str!("../../../tests/roundtrip/closures.py");
        let module: IRModule = text.parse().unwrap();
        let exec = build(&module, &target).unwrap_or_else(|e| panic!("{target}: {e}"));
        let got = VirtualMachine::new(&exec)
            .call("main", &[x.clone(), y.clone()])
            .unwrap();
        let got = got.as_tensor().unwrap().to_vec::<f32>().unwrap();
        assert_eq!(got, [11.0, 22.0, 33.0, 44.0], "{target}: invoke_closure");
    }
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
