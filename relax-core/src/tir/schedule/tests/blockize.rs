//! `blockize`: TVM's test_tir_schedule_blockize.py cases (TVMScript in,
//! TVMScript out), the interpreter as oracle at odd sizes, the
//! preconditions, and the trace.

use super::*;

fn check(s: &Schedule, params: &str, expected: &str) {
    let want = prim(params, expected);
    structural_equal_report(s.func(), &want).unwrap_or_else(|e| panic!("{e}\n{}", text(s.func())));
}

const SINGLE_PARAMS: &str =
    "A: T.Buffer((128, 128), \"float32\"), B: T.Buffer((128, 128), \"float32\")";

fn single_elementwise() -> PrimFunc {
    prim(
        SINGLE_PARAMS,
        r#"        for i, j in T.grid(128, 128):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * T.float32(2.0)
"#,
    )
}

/// TVM's `test_blockize_outer`: the whole nest in `blockized_B`, whose
/// variables are unit ones.
#[test]
fn blockize_outer() {
    let mut s = Schedule::new(single_elementwise());
    let b = s.get_block("B").unwrap();
    let l = s.get_loops(b).unwrap();
    s.blockize(l[0], true).unwrap();
    check(
        &s,
        SINGLE_PARAMS,
        r#"        with T.block("blockized_B"):
            vio = T.axis.spatial(1, 0)
            vjo = T.axis.spatial(1, 0)
            T.reads(A[0:128, 0:128])
            T.writes(B[0:128, 0:128])
            for i, j in T.grid(128, 128):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * T.float32(2.0)
"#,
    );
    replays(&s, single_elementwise());
}

/// TVM's `test_blockize_inner`: `vi` moves to the outer block, which the
/// inner block reads.
#[test]
fn blockize_inner() {
    let mut s = Schedule::new(single_elementwise());
    let b = s.get_block("B").unwrap();
    let l = s.get_loops(b).unwrap();
    s.blockize(l[1], true).unwrap();
    check(
        &s,
        SINGLE_PARAMS,
        r#"        for i in range(128):
            with T.block("blockized_B"):
                vi = T.axis.spatial(128, i)
                vjo = T.axis.spatial(1, 0)
                T.reads(A[vi, 0:128])
                T.writes(B[vi, 0:128])
                for j in range(128):
                    with T.block("B"):
                        vj = T.axis.spatial(128, j)
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2.0)
"#,
    );
    replays(&s, single_elementwise());
}

const INT64_PARAMS: &str = "A: T.Buffer((T.int64(16), T.int64(128)), \"float32\"), B: T.Buffer((T.int64(16), T.int64(128)), \"float32\")";

fn single_elementwise_int64() -> PrimFunc {
    prim(
        INT64_PARAMS,
        r#"        for i0, j0, i1, j1 in T.grid(T.int64(1), T.int64(8), T.int64(16), T.int64(16)):
            with T.block("B"):
                vi = T.axis.spatial(T.int64(16), i0 * T.int64(16) + i1)
                vj = T.axis.spatial(T.int64(128), j0 * T.int64(16) + j1)
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] + T.float32(1.0)
"#,
    )
}

/// TVM's `test_blockize_outer_int64_shape`, both settings of
/// `preserve_unit_iters`: `vi_o` is bound to the unit loop `i0` or to 0.
#[test]
fn blockize_outer_int64_shape() {
    for preserve in [true, false] {
        let mut s = Schedule::new(single_elementwise_int64());
        let b = s.get_block("B").unwrap();
        let l = s.get_loops(b).unwrap();
        s.blockize(l[2], preserve).unwrap();
        let vi_o = if preserve { "i0" } else { "T.int64(0)" };
        check(
            &s,
            INT64_PARAMS,
            &format!(
                r#"        for i0, j0 in T.grid(T.int64(1), T.int64(8)):
            with T.block("B_o"):
                vi_o = T.axis.spatial(T.int64(1), {vi_o})
                vj_o = T.axis.spatial(T.int64(8), j0)
                T.reads(A[T.int64(0):T.int64(16), vj_o * T.int64(16):vj_o * T.int64(16) + T.int64(16)])
                T.writes(B[T.int64(0):T.int64(16), vj_o * T.int64(16):vj_o * T.int64(16) + T.int64(16)])
                for i1, j1 in T.grid(T.int64(16), T.int64(16)):
                    with T.block("B"):
                        vi_i, vj_i = T.axis.remap("SS", [i1, j1])
                        T.reads(A[vi_i, vj_o * T.int64(16) + vj_i])
                        T.writes(B[vi_i, vj_o * T.int64(16) + vj_i])
                        B[vi_i, vj_o * T.int64(16) + vj_i] = A[vi_i, vj_o * T.int64(16) + vj_i] + T.float32(1.0)
"#
            ),
        );
        replays(&s, single_elementwise_int64());
    }
}

const ROWSUM_PARAMS: &str =
    "A: T.Buffer((128, 128), \"float32\"), B: T.Buffer((128,), \"float32\")";

fn rowsum() -> PrimFunc {
    prim(
        ROWSUM_PARAMS,
        r#"        for k, i in T.grid(128, 128):
            with T.block("B"):
                vk, vi = T.axis.remap("RS", [k, i])
                T.reads(A[vi, vk])
                T.writes(B[vi])
                with T.init():
                    B[vi] = T.float32(0.0)
                B[vi] = B[vi] + A[vi, vk]
"#,
    )
}

/// TVM's `test_blockize_init_loops`: the init becomes the outer block's,
/// a loop over the inner spatial loop around `B_init`.
#[test]
fn blockize_init_loops() {
    let mut s = Schedule::new(rowsum());
    let b = s.get_block("B").unwrap();
    let l = s.get_loops(b).unwrap();
    s.blockize(l[0], true).unwrap();
    check(
        &s,
        ROWSUM_PARAMS,
        r#"        with T.block("blockized_B"):
            vko = T.axis.reduce(1, 0)
            vio = T.axis.spatial(1, 0)
            T.reads(A[0:128, 0:128])
            T.writes(B[0:128])
            with T.init():
                for i1 in range(128):
                    with T.block("B_init"):
                        vi_init = T.axis.spatial(128, i1)
                        T.reads()
                        T.writes(B[vi_init])
                        B[vi_init] = T.float32(0.0)
            for i0, i1_1 in T.grid(128, 128):
                with T.block("B"):
                    vk, vi = T.axis.remap("RS", [i0, i1_1])
                    T.reads(A[vi, vk])
                    T.writes(B[vi])
                    B[vi] = B[vi] + A[vi, vk]
"#,
    );
    replays(&s, rowsum());
}

/// The interpreter as oracle at odd sizes: a matmul tiled by hand (13 × 7
/// × 9 with tiles that divide: 13 × 7 by 1, 9 by 3), blockized at the
/// inner tile, with the init moved outside, computes the same.
#[test]
fn a_blockized_matmul_tile_computes_the_same() {
    let mut s = Schedule::new(matmul());
    let b = s.get_block("C").unwrap();
    let l = s.get_loops(b).unwrap();
    let k = s.split(l[2], &[None, Some(3)]).unwrap();
    s.reorder(&[l[0], k[0], l[1], k[1]]).unwrap();
    let o = s.blockize(l[1], true).unwrap();
    same_matmul(&s);
    let printed = text(s.func());
    assert!(printed.contains("T.sblock(\"C_o\")"), "{printed}");
    assert!(printed.contains("with T.init()"), "{printed}");
    // The outer block can be scheduled on: its loops are those above.
    assert_eq!(s.get_loops(o).unwrap().len(), 2);
    replays(&s, matmul());
}

/// Preconditions: a nest with a sibling, a predicate, a binding that does
/// not divide.
#[test]
fn blockize_preconditions_are_errors() {
    // The split of 13 by 4 guards the block with a predicate.
    let mut s = Schedule::new(matmul());
    let b = s.get_block("C").unwrap();
    let l = s.get_loops(b).unwrap();
    let i = s.split(l[0], &[None, Some(4)]).unwrap();
    let e = err(s.blockize(i[1], true));
    assert!(e.contains("predicate"), "{e}");
    // Two nests under a loop are not one block.
    let mut s = Schedule::new(elementwise());
    let b = s.get_block("B").unwrap();
    let c = s.get_block("C").unwrap();
    let lb = s.get_loops(b).unwrap();
    let lc = s.get_loops(c).unwrap();
    s.compute_at(b, lc[0]).unwrap();
    let e = err(s.blockize(lc[0], true));
    assert!(e.contains("not a loop nest over one block"), "{e}");
    let _ = lb;
    // A binding whose outer part is not a multiple of the inner span.
    let f = prim(
        "A: T.Buffer((20,), \"float32\"), B: T.Buffer((20,), \"float32\")",
        r#"        for i, j in T.grid(4, 5):
            with T.block("B"):
                vi = T.axis.spatial(20, i * 3 + j)
                T.reads(A[vi])
                T.writes(B[vi])
                B[vi] = A[vi]
"#,
    );
    let mut s = Schedule::new(f);
    let b = s.get_block("B").unwrap();
    let l = s.get_loops(b).unwrap();
    let e = err(s.blockize(l[1], true));
    assert!(e.contains("cannot divide the binding vi"), "{e}");
    assert!(s.trace().insts.len() == 2, "a failed step is not recorded");
}

/// The trace prints TVM's Python and replays.
#[test]
fn blockize_trace_prints_as_tvm() {
    let mut s = Schedule::new(single_elementwise());
    let b = s.get_block("B").unwrap();
    let l = s.get_loops(b).unwrap();
    s.blockize(l[1], false).unwrap();
    let py = s.trace().as_python();
    assert!(
        py.contains("b3 = sch.blockize(target=l2, preserve_unit_iters=False)"),
        "{py}"
    );
    let rust = s.trace().as_rust();
    assert!(
        rust.contains("let b3 = sch.blockize(l2, false)?;"),
        "{rust}"
    );
}
