//! `ConvertToDataflow`: before/expected modules (the cases of TVM's
//! `test_transform_convert_dataflow.py`, with `R.call_packed` as the
//! impure call where TVM uses `R.print`).

use super::*;
use crate::transform::test_util::{assert_pass, parse};

#[track_caller]
fn check(before: &str, expected: &str) {
    assert_pass(
        &ConvertToDataflow::default(),
        parse(before),
        parse(expected),
    );
}

const T4: &str = r#"R.Tensor((4,), dtype="float32")"#;

fn module(functions: &str) -> String {
    format!(
        "@I.ir_module\nclass Module:\n{}",
        functions.replace("T4", T4)
    )
}

#[test]
fn a_run_of_pure_bindings_becomes_a_dataflow_block() {
    let before = module(
        r#"    @R.function
    def main(x: T4, y: T4) -> T4:
        z: T4 = R.add(x, y)
        w: T4 = R.multiply(z, y)
        v: T4 = R.add(w, x)
        return v
"#,
    );
    let expected = module(
        r#"    @R.function
    def main(x: T4, y: T4) -> T4:
        with R.dataflow():
            z: T4 = R.add(x, y)
            w: T4 = R.multiply(z, y)
            v: T4 = R.add(w, x)
            R.output(v)
        return v
"#,
    );
    check(&before, &expected);
}

#[test]
fn dataflow_blocks_small_runs_and_impure_calls_are_kept() {
    let before = module(
        r#"    @R.function
    def main(a: T4, b: T4) -> T4:
        with R.dataflow():
            x: T4 = R.add(a, b)
            y: T4 = R.multiply(x, a)
            R.output(y)
        return y

    @R.function
    def small(a: T4, b: T4) -> T4:
        x: T4 = R.add(a, b)
        return x

    @R.function(pure=False)
    def interleaved(a: T4, b: T4) -> T4:
        y: T4 = R.add(a, b)
        e: T4 = R.call_packed("log", y, sinfo_args=R.Tensor((4,), dtype="float32"))
        x: T4 = R.multiply(y, y)
        return x
"#,
    );
    check(&before, &before);
}

#[test]
fn impure_calls_split_the_blocks_and_outputs_are_what_is_used_later() {
    let before = module(
        r#"    @R.function(pure=False)
    def main(x: T4, y: T4) -> T4:
        z: T4 = R.add(x, y)
        w: T4 = R.multiply(z, y)
        v: T4 = R.add(w, x)
        e: T4 = R.call_packed("log", z, sinfo_args=R.Tensor((4,), dtype="float32"))
        a: T4 = R.multiply(v, v)
        b: T4 = R.add(a, a)
        return b
"#,
    );
    let expected = module(
        r#"    @R.function(pure=False)
    def main(x: T4, y: T4) -> T4:
        with R.dataflow():
            z: T4 = R.add(x, y)
            w: T4 = R.multiply(z, y)
            v: T4 = R.add(w, x)
            R.output(z, v)
        e: T4 = R.call_packed("log", z, sinfo_args=R.Tensor((4,), dtype="float32"))
        with R.dataflow():
            a: T4 = R.multiply(v, v)
            b: T4 = R.add(a, a)
            R.output(b)
        return b
"#,
    );
    check(&before, &expected);
}

#[test]
fn a_single_binding_merges_with_a_neighbouring_dataflow_block() {
    let before = module(
        r#"    @R.function
    def after(x: T4, y: T4) -> T4:
        with R.dataflow():
            z: T4 = R.add(x, y)
            w: T4 = R.multiply(z, y)
            R.output(w)
        v: T4 = R.add(w, x)
        return v

    @R.function
    def before(x: T4, y: T4) -> T4:
        z: T4 = R.add(x, y)
        with R.dataflow():
            w: T4 = R.multiply(z, y)
            v: T4 = R.add(w, x)
            R.output(v)
        return v
"#,
    );
    let expected = module(
        r#"    @R.function
    def after(x: T4, y: T4) -> T4:
        with R.dataflow():
            z: T4 = R.add(x, y)
            w: T4 = R.multiply(z, y)
            v: T4 = R.add(w, x)
            R.output(v)
        return v

    @R.function
    def before(x: T4, y: T4) -> T4:
        with R.dataflow():
            z: T4 = R.add(x, y)
            w: T4 = R.multiply(z, y)
            v: T4 = R.add(w, x)
            R.output(v)
        return v
"#,
    );
    check(&before, &expected);
}

#[test]
fn calls_of_pure_functions_join_and_of_impure_ones_split() {
    let before = module(
        r#"    @R.function
    def pure_extra(x: T4, y: T4) -> T4:
        z: T4 = R.add(x, y)
        w: T4 = R.nn.relu(z)
        return w

    @R.function(pure=False)
    def impure_extra(x: T4) -> T4:
        e: T4 = R.call_packed("log", x, sinfo_args=R.Tensor((4,), dtype="float32"))
        return e

    @R.function
    def main(x: T4, y: T4) -> T4:
        cls = Module
        z: T4 = R.add(x, y)
        q: T4 = cls.pure_extra(z, y)
        return q

    @R.function(pure=False)
    def effects(x: T4, y: T4) -> T4:
        cls = Module
        z: T4 = R.add(x, y)
        w: T4 = R.multiply(z, z)
        q: T4 = cls.impure_extra(w)
        return q
"#,
    );
    let expected = module(
        r#"    @R.function
    def pure_extra(x: T4, y: T4) -> T4:
        with R.dataflow():
            z: T4 = R.add(x, y)
            w: T4 = R.nn.relu(z)
            R.output(w)
        return w

    @R.function(pure=False)
    def impure_extra(x: T4) -> T4:
        e: T4 = R.call_packed("log", x, sinfo_args=R.Tensor((4,), dtype="float32"))
        return e

    @R.function
    def main(x: T4, y: T4) -> T4:
        cls = Module
        with R.dataflow():
            z: T4 = R.add(x, y)
            q: T4 = cls.pure_extra(z, y)
            R.output(q)
        return q

    @R.function(pure=False)
    def effects(x: T4, y: T4) -> T4:
        cls = Module
        with R.dataflow():
            z: T4 = R.add(x, y)
            w: T4 = R.multiply(z, z)
            R.output(w)
        q: T4 = cls.impure_extra(w)
        return q
"#,
    );
    check(&before, &expected);
}

#[test]
fn branches_are_converted_inside() {
    let before = module(
        r#"    @R.function
    def main(x: T4, c: R.Tensor((), dtype="bool")) -> T4:
        if c:
            a: T4 = R.add(x, x)
            b: T4 = R.multiply(a, a)
            r: T4 = b
        else:
            r: T4 = x
        return r
"#,
    );
    let expected = module(
        r#"    @R.function
    def main(x: T4, c: R.Tensor((), dtype="bool")) -> T4:
        if c:
            with R.dataflow():
                a: T4 = R.add(x, x)
                b: T4 = R.multiply(a, a)
                R.output(b)
            r: T4 = b
        else:
            r: T4 = x
        return r
"#,
    );
    check(&before, &expected);
}

#[test]
fn a_recursive_call_stays_outside_the_dataflow_block() {
    let before = module(
        r#"    @R.function
    def f(x: T4, n: R.Tensor((), dtype="int64")) -> T4:
        c: R.Tensor((), dtype="bool") = R.greater(n, R.const(0, "int64"))
        if c:
            a: T4 = R.add(x, x)
            m: R.Tensor((), dtype="int64") = R.subtract(n, R.const(1, "int64"))
            b: T4 = cls.f(a, m)
            r: T4 = b
        else:
            r: T4 = x
        return r
"#,
    );
    let expected = module(
        r#"    @R.function
    def f(x: T4, n: R.Tensor((), dtype="int64")) -> T4:
        c: R.Tensor((), dtype="bool") = R.greater(n, R.const(0, "int64"))
        if c:
            with R.dataflow():
                a: T4 = R.add(x, x)
                m: R.Tensor((), dtype="int64") = R.subtract(n, R.const(1, "int64"))
                R.output(a, m)
            b: T4 = cls.f(a, m)
            r: T4 = b
        else:
            r: T4 = x
        return r
"#,
    );
    check(&before, &expected);
}
