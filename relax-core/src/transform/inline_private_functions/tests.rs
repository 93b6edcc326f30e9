//! `InlinePrivateFunctions`: before/expected modules (after TVM's
//! `test_transform_inline_private_functions.py`) and the limits.

use super::*;
use crate::transform::test_util::{assert_pass, parse_t4 as parse};

#[track_caller]
fn check(before: &str, expected: &str) {
    assert_pass(&InlinePrivateFunctions, parse(before), parse(expected));
}

#[test]
fn a_private_function_is_inlined_at_each_call_and_removed() {
    let before = r#"
@I.ir_module
class Module:
    @R.function
    def main(a: T, b: T) -> T:
        cls = Module
        with R.dataflow():
            x: T = cls.double_sum(a, b)
            y: T = cls.double_sum(x, a)
            R.output(y)
        return y

    @R.function(private=True)
    def double_sum(p: T, q: T) -> T:
        with R.dataflow():
            s: T = R.add(p, q)
            d: T = R.add(s, s)
            R.output(d)
        return d
"#;
    let expected = r#"
@I.ir_module
class Module:
    @R.function
    def main(a: T, b: T) -> T:
        with R.dataflow():
            s: T = R.add(a, b)
            d: T = R.add(s, s)
            x: T = d
            s1: T = R.add(x, a)
            d1: T = R.add(s1, s1)
            y: T = d1
            R.output(y)
        return y
"#;
    check(before, expected);
}

#[test]
fn public_recursive_and_impure_in_dataflow_calls_stay() {
    let before = r#"
@I.ir_module
class Module:
    @R.function(pure=False)
    def main(a: T) -> T:
        cls = Module
        with R.dataflow():
            x: T = cls.public(a)
            R.output(x)
        y: T = cls.effect(x)
        with R.dataflow():
            z: T = cls.effect(y)
            R.output(z)
        return z

    @R.function
    def public(p: T) -> T:
        return p

    @R.function(private=True, pure=False)
    def effect(p: T) -> T:
        e: T = R.call_packed("log", p, sinfo_args=R.Tensor((4,), dtype="float32"))
        return e
"#;
    let expected = r#"
@I.ir_module
class Module:
    @R.function(pure=False)
    def main(a: T) -> T:
        cls = Module
        with R.dataflow():
            x: T = cls.public(a)
            R.output(x)
        e: T = R.call_packed("log", x, sinfo_args=R.Tensor((4,), dtype="float32"))
        y: T = e
        with R.dataflow():
            z: T = cls.effect(y)
            R.output(z)
        return z

    @R.function
    def public(p: T) -> T:
        return p

    @R.function(private=True, pure=False)
    def effect(p: T) -> T:
        e: T = R.call_packed("log", p, sinfo_args=R.Tensor((4,), dtype="float32"))
        return e
"#;
    check(before, expected);
}
