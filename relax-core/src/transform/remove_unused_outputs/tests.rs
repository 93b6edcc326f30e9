//! `RemoveUnusedOutputs`: before/expected modules (after TVM's
//! `test_transform_remove_unused_outputs.py`).

use super::*;
use crate::transform::test_util::{assert_pass, parse_t4 as parse};

#[track_caller]
fn check(before: &str, expected: &str) {
    assert_pass(&RemoveUnusedOutputs, parse(before), parse(expected));
}

#[test]
fn fields_no_caller_reads_are_dropped_and_projections_renumbered() {
    let before = r#"
@I.ir_module
class Module:
    @R.function
    def main(a: T) -> T:
        cls = Module
        r: R.Tuple(R.Tensor((4,), dtype="float32"), R.Tensor((4,), dtype="float32"), R.Tensor((4,), dtype="float32")) = cls.func(a)
        x: T = r[2]
        z: T = r[2]
        y: T = R.add(x, z)
        return y

    @R.function(private=True)
    def func(a: T) -> R.Tuple(R.Tensor((4,), dtype="float32"), R.Tensor((4,), dtype="float32"), R.Tensor((4,), dtype="float32")):
        b: T = R.add(a, a)
        c: T = R.multiply(a, a)
        return (a, b, c)
"#;
    let expected = r#"
@I.ir_module
class Module:
    @R.function
    def main(a: T) -> T:
        cls = Module
        r: R.Tuple(R.Tensor((4,), dtype="float32")) = cls.func(a)
        x: T = r[0]
        z: T = r[0]
        y: T = R.add(x, z)
        return y

    @R.function(private=True)
    def func(a: T) -> R.Tuple(R.Tensor((4,), dtype="float32")):
        b: T = R.add(a, a)
        c: T = R.multiply(a, a)
        return (c,)
"#;
    check(before, expected);
}

#[test]
fn results_used_whole_and_public_functions_are_left_alone() {
    let before = r#"
@I.ir_module
class Module:
    @R.function
    def main(a: T) -> R.Tuple(R.Tensor((4,), dtype="float32"), R.Tensor((4,), dtype="float32")):
        cls = Module
        r: R.Tuple(R.Tensor((4,), dtype="float32"), R.Tensor((4,), dtype="float32")) = cls.func(a)
        s: R.Tuple(R.Tensor((4,), dtype="float32"), R.Tensor((4,), dtype="float32")) = cls.exported(a)
        x: T = s[0]
        return r

    @R.function(private=True)
    def func(a: T) -> R.Tuple(R.Tensor((4,), dtype="float32"), R.Tensor((4,), dtype="float32")):
        return (a, a)

    @R.function
    def exported(a: T) -> R.Tuple(R.Tensor((4,), dtype="float32"), R.Tensor((4,), dtype="float32")):
        return (a, a)
"#;
    check(before, before);
}
