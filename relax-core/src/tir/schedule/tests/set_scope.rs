//! `set_scope`: TVM's test_tir_schedule_set_scope.py cases, the printer and
//! parser round trip of a scope, the errors and the trace.

use super::*;

/// TVM's `test_set_scope`: the intermediate `B` of the elementwise pair
/// becomes `scope="shared"`; the function computes the same.
#[test]
fn set_scope_of_an_intermediate() {
    let mut s = Schedule::new(elementwise());
    let b = s.get_block("B").unwrap();
    s.set_scope(b, 0, "shared").unwrap();
    let want = prim(
        "A: T.Buffer((8, 6), \"float32\"), C: T.Buffer((8, 6), \"float32\")",
        r#"        B = T.alloc_buffer((8, 6), scope="shared")
        for i, j in T.grid(8, 6):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * T.float32(2.0)
        for i, j in T.grid(8, 6):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = B[vi, vj] + T.float32(1.0)
"#,
    );
    structural_equal_report(s.func(), &want).unwrap_or_else(|e| panic!("{e}\n{}", text(s.func())));
    // The scope prints and reads back.
    let printed = text(s.func());
    assert!(
        printed.contains("B = T.alloc_buffer((8, 6), scope=\"shared\")"),
        "{printed}"
    );
    // Another scope is another function.
    let mut other = Schedule::new(elementwise());
    let ob = other.get_block("B").unwrap();
    other.set_scope(ob, 0, "local").unwrap();
    assert!(structural_equal_report(other.func(), &want).is_err());
    same_outputs(&elementwise(), s.func(), &[&[8, 6]], &[&[8, 6]]);
    replays(&s, elementwise());
    assert!(s
        .trace()
        .as_python()
        .contains("sch.set_scope(block=b0, buffer_index=0, storage_scope=\"shared\")"));
    assert!(s
        .trace()
        .as_rust()
        .contains("sch.set_scope(b0, 0, \"shared\")?;"));
}

/// TVM's `test_set_scope_fail_on_output_buffer` and
/// `test_set_scope_fail_on_incorrect_scope`, and an index out of range.
#[test]
fn set_scope_errors() {
    let mut s = Schedule::new(elementwise());
    let c = s.get_block("C").unwrap();
    let e = err(s.set_scope(c, 0, "shared"));
    assert!(e.contains("a parameter of the function"), "{e}");
    let b = s.get_block("B").unwrap();
    let e = err(s.set_scope(b, 0, "test_scope"));
    assert!(e.contains("not a scope"), "{e}");
    let e = err(s.set_scope(b, 1, "local"));
    assert!(e.contains("no buffer_index 1"), "{e}");
    assert_eq!(s.trace().insts.len(), 2, "failed steps are not recorded");
}

/// A parameter's scope cannot be written in TVMScript other than global.
#[test]
fn a_parameter_scope_other_than_global_does_not_parse() {
    let text = "@I.ir_module\nclass Module:\n    @T.prim_func\n    def main(A: T.Buffer((4,), \"float32\", scope=\"local\")):\n        A[0] = T.float32(1.0)\n";
    assert!(crate::parser::parse_module(text).is_err());
}
