//! `annotate` / `unannotate`: TVM's `test_annotate_unannotate_loop` and
//! `test_annotate_unannotate_block` (test_tir_schedule_utilities.py, on
//! this file's smaller `matmul_relu`; TVM's dict-valued `test4` is left
//! out: an attribute value here is a scalar, a string or a list), the
//! errors, the trace and its replay.

use super::*;
use crate::ir::AttrValue;

/// `matmul_relu` with TVM's `matmul_relu_ann1` loop annotations.
fn matmul_relu_ann1() -> PrimFunc {
    prim(
        "A: T.Buffer((13, 9), \"float32\"), B: T.Buffer((9, 7), \"float32\"), D: T.Buffer((13, 7), \"float32\")",
        r#"        C = T.alloc_buffer((13, 7), "float32")
        for i in T.serial(13, annotations={"test1": "aaa"}):
            for j in T.serial(7, annotations={"test2": 612, "test3": ["aa", 1]}):
                for k in range(9):
                    with T.block("C"):
                        vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                        T.reads(A[vi, vk], B[vk, vj])
                        T.writes(C[vi, vj])
                        with T.init():
                            C[vi, vj] = T.float32(0.0)
                        C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(13, 7):
            with T.block("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(C[vi, vj])
                T.writes(D[vi, vj])
                D[vi, vj] = T.max(C[vi, vj], T.float32(0.0))
"#,
    )
}

/// `matmul_relu` with TVM's `matmul_relu_ann2` block annotations.
fn matmul_relu_ann2() -> PrimFunc {
    prim(
        "A: T.Buffer((13, 9), \"float32\"), B: T.Buffer((9, 7), \"float32\"), D: T.Buffer((13, 7), \"float32\")",
        r#"        C = T.alloc_buffer((13, 7), "float32")
        for i, j, k in T.grid(13, 7, 9):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(C[vi, vj])
                T.block_attr({"test1": "aaa"})
                with T.init():
                    C[vi, vj] = T.float32(0.0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
        for i, j in T.grid(13, 7):
            with T.block("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(C[vi, vj])
                T.writes(D[vi, vj])
                T.block_attr({"test2": 0.22, "test3": ["aa", 1]})
                D[vi, vj] = T.max(C[vi, vj], T.float32(0.0))
"#,
    )
}

fn list() -> AttrValue {
    AttrValue::Array(vec![AttrValue::from("aa"), AttrValue::Int(1)])
}

fn same_matmul_relu(s: &Schedule) {
    same_outputs(&matmul_relu(), s.func(), &[&[13, 9], &[9, 7]], &[&[13, 7]]);
}

/// TVM's `test_annotate_unannotate_loop`.
#[test]
fn annotate_unannotate_loop() {
    let mut s = Schedule::new(matmul_relu());
    let c = s.get_block("C").unwrap();
    let loops = s.get_loops(c).unwrap();
    s.annotate(loops[0], "test1", "aaa").unwrap();
    s.annotate(loops[1], "test2", 612_i64).unwrap();
    s.annotate(loops[1], "test3", list()).unwrap();
    structural_equal_report(s.func(), &matmul_relu_ann1())
        .unwrap_or_else(|e| panic!("{e}\n{}", text(s.func())));
    replays(&s, matmul_relu());
    same_matmul_relu(&s);
    s.unannotate(loops[0], "test1").unwrap();
    s.unannotate(loops[1], "test2").unwrap();
    s.unannotate(loops[1], "test3").unwrap();
    structural_equal_report(s.func(), &matmul_relu()).unwrap();
    replays(&s, matmul_relu());
}

/// TVM's `test_annotate_unannotate_block`.
#[test]
fn annotate_unannotate_block() {
    let mut s = Schedule::new(matmul_relu());
    let c = s.get_block("C").unwrap();
    let d = s.get_block("D").unwrap();
    s.annotate(c, "test1", "aaa").unwrap();
    s.annotate(d, "test2", 0.22).unwrap();
    s.annotate(d, "test3", list()).unwrap();
    structural_equal_report(s.func(), &matmul_relu_ann2())
        .unwrap_or_else(|e| panic!("{e}\n{}", text(s.func())));
    replays(&s, matmul_relu());
    same_matmul_relu(&s);
    s.unannotate(c, "test1").unwrap();
    s.unannotate(d, "test2").unwrap();
    s.unannotate(d, "test3").unwrap();
    structural_equal_report(s.func(), &matmul_relu()).unwrap();
    replays(&s, matmul_relu());
}

/// A key set again keeps its place and takes the new value; the
/// annotations survive later primitives that keep the loop or block
/// (`reorder`, `parallel`), and a split loop's are not copied to the new
/// loops, as in TVM.
#[test]
fn annotations_are_replaced_in_place_and_kept_by_other_primitives() {
    let mut s = Schedule::new(matmul());
    let c = s.get_block("C").unwrap();
    let [i, j, k] = s.get_loops(c).unwrap()[..] else {
        unreachable!()
    };
    s.annotate(i, "a", 1_i64).unwrap();
    s.annotate(i, "b", true).unwrap();
    s.annotate(i, "a", 2_i64).unwrap();
    s.annotate(c, "meta_schedule.tiling_structure", "SSRSRS")
        .unwrap();
    s.reorder(&[j, i]).unwrap();
    s.parallel(j).unwrap();
    let printed = text(s.func());
    assert!(
        printed.contains(r#"for i in T.serial(13, annotations={"a": 2, "b": True}):"#),
        "{printed}"
    );
    assert!(
        printed.contains(r#"T.sblock_attr({"meta_schedule.tiling_structure": "SSRSRS"})"#),
        "{printed}"
    );
    s.annotate(k, "pragma_unroll_explicit", 1_i64).unwrap();
    let [_, _] = s.split(k, &[None, Some(4)]).unwrap()[..] else {
        unreachable!()
    };
    let printed = text(s.func());
    assert!(!printed.contains("pragma_unroll_explicit"), "{printed}");
    same_matmul(&s);
    replays(&s, matmul());
}

#[test]
fn unannotate_of_a_missing_key_names_the_target() {
    let mut s = Schedule::new(matmul_relu());
    let c = s.get_block("C").unwrap();
    let [i, ..] = s.get_loops(c).unwrap()[..] else {
        unreachable!()
    };
    s.annotate(c, "x", 1_i64).unwrap();
    let m = err(s.unannotate(c, "y"));
    assert_eq!(
        m,
        r#"unannotate: block "C" has no annotation "y"; its annotations are: "x""#
    );
    let m = err(s.unannotate(i, "y"));
    assert_eq!(
        m,
        r#"unannotate: loop l1 (i) has no annotation "y"; its annotations are: none"#
    );
    // A failed step leaves the function and the trace as they were.
    let before = s.trace().insts.len();
    structural_equal_report(s.func(), &{
        let mut t = Schedule::new(matmul_relu());
        let c = t.get_block("C").unwrap();
        t.annotate(c, "x", 1_i64).unwrap();
        t.into_func()
    })
    .unwrap();
    assert_eq!(s.trace().insts.len(), before);
    // A loop that a split removed is an error naming it.
    let [_, _] = s.split(i, &[None, Some(2)]).unwrap()[..] else {
        unreachable!()
    };
    let m = err(s.annotate(i, "x", 1_i64));
    assert!(m.contains("is no longer in the function"), "{m}");
}

#[test]
fn annotate_prints_in_the_trace_as_tvm_and_as_rust() {
    let mut s = Schedule::new(matmul_relu());
    let c = s.get_block("C").unwrap();
    let [i, ..] = s.get_loops(c).unwrap()[..] else {
        unreachable!()
    };
    s.annotate(i, "test3", list()).unwrap();
    s.annotate(c, "test2", 0.22).unwrap();
    s.unannotate(i, "test3").unwrap();
    let py = s.trace().as_python();
    assert!(
        py.contains(r#"sch.annotate(block_or_loop=l1, ann_key="test3", ann_val=["aa", 1])"#),
        "{py}"
    );
    assert!(
        py.contains(r#"sch.annotate(block_or_loop=b0, ann_key="test2", ann_val=0.22)"#),
        "{py}"
    );
    assert!(
        py.contains(r#"sch.unannotate(block_or_loop=l1, ann_key="test3")"#),
        "{py}"
    );
    let rs = s.trace().as_rust();
    assert!(
        rs.contains(r#"sch.annotate(l1, "test3", AttrValue::Array(vec![AttrValue::from("aa"), AttrValue::from(1_i64)]))?;"#),
        "{rs}"
    );
    assert!(
        rs.contains(r#"sch.annotate(b0, "test2", 0.22_f64)?;"#),
        "{rs}"
    );
    assert!(rs.contains(r#"sch.unannotate(l1, "test3")?;"#), "{rs}");
    replays(&s, matmul_relu());
}
