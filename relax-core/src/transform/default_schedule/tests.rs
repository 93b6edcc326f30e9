//! `DefaultSchedule`: PrimFuncs before and after as TVMScript text,
//! compared structurally; and, with LLVM, the scheduled functions of a few
//! ops compiled and compared with the loop-level interpreter on the
//! unscheduled ones.

use super::*;
use crate::ir::structural_equal_report;

fn parse(text: &str) -> IRModule {
    text.parse()
        .unwrap_or_else(|e| panic!("the test module does not parse: {e}\n{text}"))
}

/// A module of one private PrimFunc `f` with `params` and `body` (the body
/// indented by 8 spaces).
fn prim_module(params: &str, body: &str) -> IRModule {
    parse(&format!(
        "@I.ir_module\nclass Module:\n    @T.prim_func(private=True)\n    def f({params}):\n{body}"
    ))
}

/// Scheduling `before` gives `after` (both PrimFunc bodies over `params`).
#[track_caller]
fn check(params: &str, before: &str, after: &str) {
    let got = DefaultSchedule::with_vector_bits(256)
        .run(prim_module(params, before))
        .unwrap();
    let want = prim_module(params, after);
    if let Err(e) = structural_equal_report(&got, &want) {
        panic!("{e}\n--- got:\n{got}\n--- want:\n{want}");
    }
    // A second run finds no canonical nest left: the pass is idempotent.
    let again = DefaultSchedule::with_vector_bits(256)
        .run(got.clone())
        .unwrap();
    structural_equal_report(&again, &got).unwrap();
}

const ADD_PARAMS: &str = r#"A: T.Buffer((4, 8), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((4, 8), "float32")"#;

#[test]
fn a_small_broadcast_add_is_vectorized_and_stays_serial() {
    let before = r#"        with T.block("root"):
            for ax0, ax1 in T.grid(4, 8):
                with T.block("C"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    T.reads(A[v0, v1], B[v1])
                    T.writes(C[v0, v1])
                    C[v0, v1] = A[v0, v1] + B[v1]
"#;
    let after = r#"        with T.block("root"):
            for ax0 in range(4):
                for ax1 in T.vectorized(8):
                    C[ax0, ax1] = A[ax0, ax1] + B[ax1]
"#;
    check(ADD_PARAMS, before, after);
}

/// A channel shuffle's half (NHWC: output channel `c` is channel
/// `c // 2 + c % 2 * 6` of the concat of `A` and `B`): the channel loop
/// is split by 2, each half of the pair written out, and the indices and
/// the `Select` simplify to affine reads of `A` and of `B`
/// (`interleave.rs`).
#[test]
fn a_channel_shuffle_is_split_into_interleaved_stores() {
    let params = r#"A: T.Buffer((4, 6), "float32"), B: T.Buffer((4, 6), "float32"), C: T.Buffer((4, 6), "float32")"#;
    let before = r#"        with T.block("root"):
            for ax0, ax1 in T.grid(4, 6):
                with T.block("C"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    C[v0, v1] = T.Select(v1 // 2 + v1 % 2 * 6 < 6, A[v0, T.min(v1 // 2 + v1 % 2 * 6, 5)], B[v0, T.max(v1 // 2 + v1 % 2 * 6 - 6, 0)])
"#;
    let after = r#"        with T.block("root"):
            for ax0 in range(4):
                for ax1_o in range(3):
                    C[ax0, ax1_o * 2] = A[ax0, ax1_o]
                    C[ax0, ax1_o * 2 + 1] = B[ax0, ax1_o]
"#;
    check(params, before, after);
}

#[test]
fn symbolic_work_chooses_parallel_loops_at_run_time() {
    let params = r#"A: T.Buffer((n, 128), "float32"), B: T.Buffer((128,), "float32"), C: T.Buffer((n, 128), "float32")"#;
    let before = r#"        n = T.int64()
        with T.block("root"):
            for ax0, ax1 in T.grid(n, 128):
                with T.block("C"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    C[v0, v1] = A[v0, v1] + B[v1]
"#;
    let after = r#"        n = T.int64()
        with T.block("root"):
            if n * 2048 >= 1048576:
                for ax0 in T.parallel(n):
                    for ax1 in T.vectorized(128):
                        C[ax0, ax1] = A[ax0, ax1] + B[ax1]
            else:
                for ax0 in range(n):
                    for ax1 in T.vectorized(128):
                        C[ax0, ax1] = A[ax0, ax1] + B[ax1]
"#;
    check(params, before, after);
}

#[test]
fn large_nests_fuse_their_outer_loops_into_one_parallel_loop() {
    let params =
        r#"A: T.Buffer((64, 128, 128), "float32"), B: T.Buffer((64, 128, 128), "float32")"#;
    let before = r#"        with T.block("root"):
            for ax0, ax1, ax2 in T.grid(64, 128, 128):
                with T.block("B"):
                    v0, v1, v2 = T.axis.remap("SSS", [ax0, ax1, ax2])
                    B[v0, v1, v2] = T.max(A[v0, v1, v2], T.float32(0.0))
"#;
    let after = r#"        with T.block("root"):
            for f in T.parallel(8192):
                for ax2 in T.vectorized(128):
                    B[f // 128, f % 128, ax2] = T.max(A[f // 128, f % 128, ax2], T.float32(0.0))
"#;
    check(params, before, after);
}

#[test]
fn a_large_one_loop_nest_is_split_into_parallel_chunks_and_a_tail() {
    let params = r#"A: T.Buffer((1100000,), "float32"), B: T.Buffer((1100000,), "float32")"#;
    let before = r#"        with T.block("root"):
            for ax0 in range(1100000):
                with T.block("B"):
                    v0 = T.axis.spatial(1100000, ax0)
                    B[v0] = A[v0] * T.float32(2.0)
"#;
    let after = r#"        with T.block("root"):
            for o in T.parallel(268):
                for i in T.vectorized(4096):
                    B[o * 4096 + i] = A[o * 4096 + i] * T.float32(2.0)
            for t in T.vectorized(1097728, 1100000):
                B[t] = A[t] * T.float32(2.0)
"#;
    check(params, before, after);
}

#[test]
fn transposes_are_cut_into_square_tiles_of_nested_vector_loops() {
    // The input is read with a stride along the inner loop: vector code
    // would gather. Whole 8 x 8 tiles (one 256-bit vector of float32 per
    // row) are two nested vectorized loops, which the back end transposes
    // in registers; the tiles at the edge of the 44 columns run element by
    // element. The matrix is one block of at most 8 x 8 tiles.
    let params = r#"A: T.Buffer((44, 32), "float32"), B: T.Buffer((32, 44), "float32")"#;
    let before = r#"        with T.block("root"):
            for ax0, ax1 in T.grid(32, 44):
                with T.block("B"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    B[v0, v1] = A[v1, v0]
"#;
    let after = r#"        with T.block("root"):
            for ax0_o, ax1_o in T.grid(4, 6):
                if ax1_o * 8 + 8 <= 44:
                    for ax0_i in T.vectorized(8):
                        for ax1_i in T.vectorized(8):
                            B[ax0_o * 8 + ax0_i, ax1_o * 8 + ax1_i] = A[ax1_o * 8 + ax1_i, ax0_o * 8 + ax0_i]
                else:
                    for ax0_e, ax1_e in T.grid(8, T.min(8, 44 - ax1_o * 8)):
                        B[ax0_o * 8 + ax0_e, ax1_o * 8 + ax1_e] = A[ax1_o * 8 + ax1_e, ax0_o * 8 + ax0_e]
"#;
    check(params, before, after);
    // A transpose smaller than a tile keeps its loops.
    let small = r#"A: T.Buffer((8, 4), "float32"), B: T.Buffer((4, 8), "float32")"#;
    let before = r#"        with T.block("root"):
            for ax0, ax1 in T.grid(4, 8):
                with T.block("B"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    B[v0, v1] = A[v1, v0]
"#;
    let after = r#"        with T.block("root"):
            for ax0, ax1 in T.grid(4, 8):
                B[ax0, ax1] = A[ax1, ax0]
"#;
    check(small, before, after);
}

#[test]
fn matmul_is_tiled_with_the_reduction_outside_the_vector_loop() {
    let params = r#"x: T.Buffer((6, 8), "float32"), y: T.Buffer((8, 20), "float32"), C: T.Buffer((6, 20), "float32")"#;
    let before = r#"        with T.block("root"):
            for i, j, k in T.grid(6, 20, 8):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    T.reads(x[vi, vk], y[vk, vj])
                    T.writes(C[vi, vj])
                    with T.init():
                        C[vi, vj] = T.float32(0.0)
                    C[vi, vj] = C[vi, vj] + x[vi, vk] * y[vk, vj]
"#;
    // One 4 x 16 tile accumulated in `acc`, a 4 x 4 tile of the columns
    // right of it, then the two rows below them, each a one-row tile of a
    // vector and the 4 columns left.
    let after = r#"        with T.block("root"):
            with T.block("C_acc"):
                acc = T.alloc_buffer((4, 16))
                for ii in T.unroll(4):
                    for jj in T.vectorized(16):
                        acc[ii, jj] = T.float32(0.0)
                for k in range(8):
                    for ii in T.unroll(4):
                        for jj in T.vectorized(16):
                            acc[ii, jj] = acc[ii, jj] + x[ii, k] * y[k, jj]
                for ii in T.unroll(4):
                    for jj in T.vectorized(16):
                        C[ii, jj] = acc[ii, jj]
            with T.block("C_acc"):
                acc = T.alloc_buffer((4, 4))
                for ii in T.unroll(4):
                    for jj in T.vectorized(4):
                        acc[ii, jj] = T.float32(0.0)
                for k in range(8):
                    for ii in T.unroll(4):
                        for jj in T.vectorized(4):
                            acc[ii, jj] = acc[ii, jj] + x[ii, k] * y[k, 16 + jj]
                for ii in T.unroll(4):
                    for jj in T.vectorized(4):
                        C[ii, 16 + jj] = acc[ii, jj]
            for it in T.serial(4, 6):
                with T.block("C_acc"):
                    acc = T.alloc_buffer((1, 20))
                    for jj in T.vectorized(16):
                        acc[0, jj] = T.float32(0.0)
                    for jj in T.vectorized(4):
                        acc[0, 16 + jj] = T.float32(0.0)
                    for k in range(8):
                        for jj in T.vectorized(16):
                            acc[0, jj] = acc[0, jj] + x[it, k] * y[k, jj]
                        for jj in T.vectorized(4):
                            acc[0, 16 + jj] = acc[0, 16 + jj] + x[it, k] * y[k, 16 + jj]
                    for jj in T.vectorized(16):
                        C[it, jj] = acc[0, jj]
                    for jj in T.vectorized(4):
                        C[it, 16 + jj] = acc[0, 16 + jj]
"#;
    check(params, before, after);
}

#[test]
fn a_large_matmul_runs_its_tile_rows_in_parallel() {
    // 1024 x 128 x 8 multiply-adds: at the threshold. A reduction of 8 is
    // too short to pack for (case 5), so the operands are read in place.
    let params = r#"x: T.Buffer((1024, 8), "float32"), y: T.Buffer((8, 128), "float32"), C: T.Buffer((1024, 128), "float32")"#;
    let before = r#"        with T.block("root"):
            for i, j, k in T.grid(1024, 128, 8):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    with T.init():
                        C[vi, vj] = T.float32(0.0)
                    C[vi, vj] = C[vi, vj] + x[vi, vk] * y[vk, vj]
"#;
    let after = r#"        with T.block("root"):
            for io in T.parallel(256):
                for jo in range(8):
                    with T.block("C_acc"):
                        acc = T.alloc_buffer((4, 16))
                        for ii in T.unroll(4):
                            for jj in T.vectorized(16):
                                acc[ii, jj] = T.float32(0.0)
                        for k in range(8):
                            for ii in T.unroll(4):
                                for jj in T.vectorized(16):
                                    acc[ii, jj] = acc[ii, jj] + x[io * 4 + ii, k] * y[k, jo * 16 + jj]
                        for ii in T.unroll(4):
                            for jj in T.vectorized(16):
                                C[io * 4 + ii, jo * 16 + jj] = acc[ii, jj]
"#;
    check(params, before, after);
}

#[test]
fn a_large_matmul_is_a_packed_gemm() {
    // 64 x 128 x 128 multiply-adds (the threshold) with vectors of 256
    // bits: register tiles of 6 x 16, a B panel packed once (its tiles in
    // parallel), the 11 row tiles in four chunks of 2 or 3 tiles in
    // parallel, A (row-major) read in place, the rows past M of the last
    // tile reading row 63 again (their sums are never stored), tiles
    // across the edge of C stored row by row, each row's columns a
    // vector loop of symbolic extent.
    let params = r#"x: T.Buffer((64, 128), "float32"), w: T.Buffer((128, 128), "float32"), C: T.Buffer((64, 128), "float32")"#;
    let before = r#"        with T.block("root"):
            for i, j, k in T.grid(64, 128, 128):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    with T.init():
                        C[vi, vj] = T.float32(0.0)
                    C[vi, vj] = C[vi, vj] + x[vi, vk] * w[vk, vj]
"#;
    let after = r#"        with T.block("root"):
            with T.block("B_pack"):
                B_pack = T.alloc_buffer((8, 128, 16))
                for t in T.parallel(8):
                    for q in range(128):
                        for r in T.vectorized(16):
                            B_pack[t, q, r] = w[q, t * 16 + r]
                for ic_o in T.parallel(4):
                    ic: T.int64 = ic_o * 11 // 4 * 6
                    mc: T.int64 = T.min((ic_o * 11 + 3) // 4 * 6 + 12, 64) - ic
                    for jt in range(8):
                        j0: T.int64 = jt * 16
                        for it in range((mc + 5) // 6):
                            i0: T.int64 = ic + it * 6
                            with T.block("acc"):
                                acc = T.alloc_buffer((6, 16))
                                for r_1 in T.unroll(6):
                                    for c in T.vectorized(16):
                                        acc[r_1, c] = T.float32(0.0)
                                for kk in range(128):
                                    for r_2 in T.unroll(6):
                                        for c_1 in T.vectorized(16):
                                            acc[r_2, c_1] = acc[r_2, c_1] + x[T.min(i0 + r_2, 63), kk] * B_pack[jt, kk, c_1]
                                if i0 <= 58 and j0 <= 112:
                                    for r_3 in T.unroll(6):
                                        for c_2 in T.vectorized(16):
                                            C[i0 + r_3, j0 + c_2] = acc[r_3, c_2]
                                else:
                                    with T.block("acc_edge"):
                                        acc_edge = T.alloc_buffer((6, 16))
                                        for r_4 in T.unroll(6):
                                            for c_3 in T.vectorized(16):
                                                acc_edge[r_4, c_3] = acc[r_4, c_3]
                                        for r_5 in range(T.min(64 - i0, 6)):
                                            for c_4 in T.vectorized(T.min(128 - j0, 16)):
                                                C[i0 + r_5, j0 + c_4] = acc_edge[r_5, c_4]
"#;
    check(params, before, after);
}

#[test]
fn a_wide_row_accumulates_in_unrolled_vectors() {
    // One row of 128 outputs (a batch-1 matmul): eight 16-lane vectors.
    let params = r#"x: T.Buffer((1, 64), "float32"), y: T.Buffer((64, 128), "float32"), C: T.Buffer((1, 128), "float32")"#;
    let before = r#"        with T.block("root"):
            for i, j, k in T.grid(1, 128, 64):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    with T.init():
                        C[vi, vj] = T.float32(0.0)
                    C[vi, vj] = C[vi, vj] + x[vi, vk] * y[vk, vj]
"#;
    let after = r#"        with T.block("root"):
            for it in range(1):
                with T.block("C_acc"):
                    acc = T.alloc_buffer((1, 128))
                    for ju in T.unroll(8):
                        for jv in T.vectorized(16):
                            acc[0, ju * 16 + jv] = T.float32(0.0)
                    for k in range(64):
                        for ju in T.unroll(8):
                            for jv in T.vectorized(16):
                                acc[0, ju * 16 + jv] = acc[0, ju * 16 + jv] + x[it, k] * y[k, ju * 16 + jv]
                    for ju in T.unroll(8):
                        for jv in T.vectorized(16):
                            C[it, ju * 16 + jv] = acc[0, ju * 16 + jv]
"#;
    check(params, before, after);
}

#[test]
fn a_row_sum_is_a_vectorized_dot_with_a_tail() {
    let params = r#"a: T.Buffer((6, 20), "float32"), S: T.Buffer((6,), "float32")"#;
    let before = r#"        with T.block("root"):
            for ax0, k0 in T.grid(6, 20):
                with T.block("S"):
                    v0, vk = T.axis.remap("SR", [ax0, k0])
                    with T.init():
                        S[v0] = T.float32(0.0)
                    S[v0] = S[v0] + a[v0, vk]
"#;
    let after = r#"        with T.block("root"):
            for ax0 in range(6):
                with T.block("S_dot"):
                    dot = T.alloc_buffer((1, 16))
                    for k0_l in T.vectorized(16):
                        dot[0, k0_l] = T.float32(0.0)
                    for k0_o in range(1):
                        for k0_l_1 in T.vectorized(16):
                            dot[0, k0_l_1] = dot[0, k0_l_1] + a[ax0, k0_o * 16 + k0_l_1]
                    for k0_h in T.vectorized(8):
                        dot[0, k0_h] = dot[0, k0_h] + dot[0, k0_h + 8]
                    for k0_h_1 in T.vectorized(4):
                        dot[0, k0_h_1] = dot[0, k0_h_1] + dot[0, k0_h_1 + 4]
                    for k0_h_2 in T.vectorized(2):
                        dot[0, k0_h_2] = dot[0, k0_h_2] + dot[0, k0_h_2 + 2]
                    for k0_h_3 in T.vectorized(1):
                        dot[0, k0_h_3] = dot[0, k0_h_3] + dot[0, k0_h_3 + 1]
                    for k0_t in T.serial(16, 20):
                        dot[0, 0] = dot[0, 0] + a[ax0, k0_t]
                    S[ax0] = T.float32(0.0) + dot[0, 0]
"#;
    check(params, before, after);
}

/// Legalization's float maximum (NaN-propagating, a `Select`) is a row
/// reduction too: the lanes start from the init and combine with the same
/// `Select`, so a NaN in any lane reaches the result.
#[test]
fn a_nan_propagating_row_max_is_a_vectorized_dot() {
    let params = r#"a: T.Buffer((6, 20), "float32"), S: T.Buffer((6,), "float32")"#;
    let before = r#"        with T.block("root"):
            for ax0, k0 in T.grid(6, 20):
                with T.block("S"):
                    v0, vk = T.axis.remap("SR", [ax0, k0])
                    with T.init():
                        S[v0] = T.float32("-inf")
                    S[v0] = T.Select(a[v0, vk] > S[v0] or a[v0, vk] != a[v0, vk], a[v0, vk], S[v0])
"#;
    let after = r#"        with T.block("root"):
            for ax0 in range(6):
                with T.block("S_dot"):
                    dot = T.alloc_buffer((1, 16))
                    for k0_l in T.vectorized(16):
                        dot[0, k0_l] = T.float32("-inf")
                    for k0_o in range(1):
                        for k0_l_1 in T.vectorized(16):
                            dot[0, k0_l_1] = T.Select(a[ax0, k0_o * 16 + k0_l_1] > dot[0, k0_l_1] or a[ax0, k0_o * 16 + k0_l_1] != a[ax0, k0_o * 16 + k0_l_1], a[ax0, k0_o * 16 + k0_l_1], dot[0, k0_l_1])
                    for k0_h in T.vectorized(8):
                        dot[0, k0_h] = T.Select(dot[0, k0_h + 8] > dot[0, k0_h] or dot[0, k0_h + 8] != dot[0, k0_h + 8], dot[0, k0_h + 8], dot[0, k0_h])
                    for k0_h_1 in T.vectorized(4):
                        dot[0, k0_h_1] = T.Select(dot[0, k0_h_1 + 4] > dot[0, k0_h_1] or dot[0, k0_h_1 + 4] != dot[0, k0_h_1 + 4], dot[0, k0_h_1 + 4], dot[0, k0_h_1])
                    for k0_h_2 in T.vectorized(2):
                        dot[0, k0_h_2] = T.Select(dot[0, k0_h_2 + 2] > dot[0, k0_h_2] or dot[0, k0_h_2 + 2] != dot[0, k0_h_2 + 2], dot[0, k0_h_2 + 2], dot[0, k0_h_2])
                    for k0_h_3 in T.vectorized(1):
                        dot[0, k0_h_3] = T.Select(dot[0, k0_h_3 + 1] > dot[0, k0_h_3] or dot[0, k0_h_3 + 1] != dot[0, k0_h_3 + 1], dot[0, k0_h_3 + 1], dot[0, k0_h_3])
                    for k0_t in T.serial(16, 20):
                        dot[0, 0] = T.Select(a[ax0, k0_t] > dot[0, 0] or a[ax0, k0_t] != a[ax0, k0_t], a[ax0, k0_t], dot[0, 0])
                    S[ax0] = dot[0, 0]
"#;
    check(params, before, after);
}

const EPILOGUE_DOT_PARAMS: &str = r#"a: T.Buffer((2, 16), "float32"), w: T.Buffer((3, 16), "float32"), b: T.Buffer((3,), "float32"), O: T.Buffer((2, 3), "float32")"#;

const EPILOGUE_DOT_STAGES: &str = r#"            for ax0, ax1, k0 in T.grid(2, 3, 16):
                with T.block("t"):
                    v0, v1, vk = T.axis.remap("SSR", [ax0, ax1, k0])
                    with T.init():
                        t[v0, v1] = T.float32(0.0)
                    t[v0, v1] = t[v0, v1] + a[v0, vk] * w[v1, vk]
            for ax0, ax1 in T.grid(2, 3):
                with T.block("O"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    O[v0, v1] = t[v0, v1] + b[v1]
"#;

/// `x · wᵀ + b` as FuseTIR leaves it (a reduction into `t`, then the add):
/// the add is the dot product's epilogue, and `t` is gone.
#[test]
fn an_elementwise_stage_is_the_epilogue_of_a_dot_product() {
    let before = format!(
        "        with T.block(\"root\"):\n            t = T.alloc_buffer((2, 3))\n{EPILOGUE_DOT_STAGES}"
    );
    let after = r#"        with T.block("root"):
            for ax0_t, ax1_t in T.grid(2, 3):
                with T.block("t_dot"):
                    dot = T.alloc_buffer((1, 16))
                    for k0_l in T.vectorized(16):
                        dot[0, k0_l] = T.float32(0.0)
                    for k0_o in range(1):
                        for k0_l_1 in T.vectorized(16):
                            dot[0, k0_l_1] = dot[0, k0_l_1] + a[ax0_t, k0_o * 16 + k0_l_1] * w[ax1_t, k0_o * 16 + k0_l_1]
                    for k0_h in T.vectorized(8):
                        dot[0, k0_h] = dot[0, k0_h] + dot[0, k0_h + 8]
                    for k0_h_1 in T.vectorized(4):
                        dot[0, k0_h_1] = dot[0, k0_h_1] + dot[0, k0_h_1 + 4]
                    for k0_h_2 in T.vectorized(2):
                        dot[0, k0_h_2] = dot[0, k0_h_2] + dot[0, k0_h_2 + 2]
                    for k0_h_3 in T.vectorized(1):
                        dot[0, k0_h_3] = dot[0, k0_h_3] + dot[0, k0_h_3 + 1]
                    O[ax0_t, ax1_t] = T.float32(0.0) + dot[0, 0] + b[ax1_t]
"#;
    check(EPILOGUE_DOT_PARAMS, &before, after);
}

/// `relu(x · w)`: the register tile's write-back applies the activation.
#[test]
fn the_register_tile_writes_back_through_the_epilogue() {
    let params = r#"a: T.Buffer((4, 8), "float32"), w: T.Buffer((8, 16), "float32"), O: T.Buffer((4, 16), "float32")"#;
    let before = r#"        with T.block("root"):
            t = T.alloc_buffer((4, 16))
            for ax0, ax1, k0 in T.grid(4, 16, 8):
                with T.block("t"):
                    v0, v1, vk = T.axis.remap("SSR", [ax0, ax1, k0])
                    with T.init():
                        t[v0, v1] = T.float32(0.0)
                    t[v0, v1] = t[v0, v1] + a[v0, vk] * w[vk, v1]
            for ax0, ax1 in T.grid(4, 16):
                with T.block("O"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    O[v0, v1] = T.max(t[v0, v1], T.float32(0.0))
"#;
    let after = r#"        with T.block("root"):
            with T.block("t_acc"):
                acc = T.alloc_buffer((4, 16))
                for ax0_i in T.unroll(4):
                    for ax1_i in T.vectorized(16):
                        acc[ax0_i, ax1_i] = T.float32(0.0)
                for k0 in range(8):
                    for ax0_i_1 in T.unroll(4):
                        for ax1_i_1 in T.vectorized(16):
                            acc[ax0_i_1, ax1_i_1] = acc[ax0_i_1, ax1_i_1] + a[ax0_i_1, k0] * w[k0, ax1_i_1]
                for ax0_i_2 in T.unroll(4):
                    for ax1_i_2 in T.vectorized(16):
                        O[ax0_i_2, ax1_i_2] = T.max(acc[ax0_i_2, ax1_i_2], T.float32(0.0))
"#;
    check(params, before, after);
}

/// An intermediate another stage also reads is not an epilogue's input:
/// the stages are scheduled one by one and `t` stays.
#[test]
fn an_intermediate_read_twice_keeps_its_stages_apart() {
    let params = format!(r#"{EPILOGUE_DOT_PARAMS}, P: T.Buffer((2, 3), "float32")"#);
    let before = format!(
        "        with T.block(\"root\"):\n            t = T.alloc_buffer((2, 3))\n{EPILOGUE_DOT_STAGES}            for ax0, ax1 in T.grid(2, 3):\n                with T.block(\"P\"):\n                    v0, v1 = T.axis.remap(\"SS\", [ax0, ax1])\n                    P[v0, v1] = t[v0, v1] * T.float32(2.0)\n"
    );
    let got = DefaultSchedule::with_vector_bits(256)
        .run(prim_module(&params, &before))
        .unwrap();
    let text = got.to_string();
    assert!(text.contains("t = T.alloc_buffer((2, 3))"), "{text}");
    assert!(
        text.contains("t[ax0_t, ax1_t] = T.float32(0.0) + dot[0, 0]"),
        "{text}"
    );
    assert!(
        text.contains("O[ax0, ax1] = t[ax0, ax1] + b[ax1]"),
        "{text}"
    );
}

const ROWS_PARAMS: &str = r#"a: T.Buffer((3, 16), "float32"), O: T.Buffer((3, 16), "float32")"#;

fn rows_before(read: &str) -> String {
    format!(
        r#"        with T.block("root"):
            s = T.alloc_buffer((3,))
            for ax0, k0 in T.grid(3, 16):
                with T.block("s"):
                    v0, vk = T.axis.remap("SR", [ax0, k0])
                    with T.init():
                        s[v0] = T.float32(0.0)
                    s[v0] = s[v0] + a[v0, vk]
            for ax0, ax1 in T.grid(3, 16):
                with T.block("O"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    O[v0, v1] = a[v0, v1] / {read}
"#
    )
}

/// A row sum and the division that reads it run as one loop over the rows
/// (softmax's and layer norm's shape): each row once, while in cache.
#[test]
fn a_row_reduction_and_its_reader_share_one_row_loop() {
    let after = r#"        with T.block("root"):
            s = T.alloc_buffer((3,))
            for ax0_row in range(3):
                with T.block("s_dot"):
                    dot = T.alloc_buffer((1, 16))
                    for k0_l in T.vectorized(16):
                        dot[0, k0_l] = T.float32(0.0)
                    for k0_o in range(1):
                        for k0_l_1 in T.vectorized(16):
                            dot[0, k0_l_1] = dot[0, k0_l_1] + a[ax0_row, k0_o * 16 + k0_l_1]
                    for k0_h in T.vectorized(8):
                        dot[0, k0_h] = dot[0, k0_h] + dot[0, k0_h + 8]
                    for k0_h_1 in T.vectorized(4):
                        dot[0, k0_h_1] = dot[0, k0_h_1] + dot[0, k0_h_1 + 4]
                    for k0_h_2 in T.vectorized(2):
                        dot[0, k0_h_2] = dot[0, k0_h_2] + dot[0, k0_h_2 + 2]
                    for k0_h_3 in T.vectorized(1):
                        dot[0, k0_h_3] = dot[0, k0_h_3] + dot[0, k0_h_3 + 1]
                    s[ax0_row] = T.float32(0.0) + dot[0, 0]
                for ax1 in T.vectorized(16):
                    O[ax0_row, ax1] = a[ax0_row, ax1] / s[ax0_row]
"#;
    check(ROWS_PARAMS, &rows_before("s[v0]"), after);
}

/// Softmax's shape: the exponentials the sum adds up are also what the
/// division reads, so each is computed once, into the output, summed from
/// there and divided in place.
#[test]
fn a_summand_the_last_stage_reads_is_computed_once() {
    let before = r#"        with T.block("root"):
            s = T.alloc_buffer((3,))
            for ax0, k0 in T.grid(3, 16):
                with T.block("s"):
                    v0, vk = T.axis.remap("SR", [ax0, k0])
                    with T.init():
                        s[v0] = T.float32(0.0)
                    s[v0] = s[v0] + T.exp(a[v0, vk])
            for ax0, ax1 in T.grid(3, 16):
                with T.block("O"):
                    v0, v1 = T.axis.remap("SS", [ax0, ax1])
                    O[v0, v1] = T.exp(a[v0, v1]) / s[v0]
"#;
    let after = r#"        with T.block("root"):
            s = T.alloc_buffer((3,))
            for ax0_row in range(3):
                for ax1 in T.vectorized(16):
                    O[ax0_row, ax1] = T.exp(a[ax0_row, ax1])
                with T.block("s_dot"):
                    dot = T.alloc_buffer((1, 16))
                    for k0_l in T.vectorized(16):
                        dot[0, k0_l] = T.float32(0.0)
                    for k0_o in range(1):
                        for k0_l_1 in T.vectorized(16):
                            dot[0, k0_l_1] = dot[0, k0_l_1] + O[ax0_row, k0_o * 16 + k0_l_1]
                    for k0_h in T.vectorized(8):
                        dot[0, k0_h] = dot[0, k0_h] + dot[0, k0_h + 8]
                    for k0_h_1 in T.vectorized(4):
                        dot[0, k0_h_1] = dot[0, k0_h_1] + dot[0, k0_h_1 + 4]
                    for k0_h_2 in T.vectorized(2):
                        dot[0, k0_h_2] = dot[0, k0_h_2] + dot[0, k0_h_2 + 2]
                    for k0_h_3 in T.vectorized(1):
                        dot[0, k0_h_3] = dot[0, k0_h_3] + dot[0, k0_h_3 + 1]
                    s[ax0_row] = T.float32(0.0) + dot[0, 0]
                for ax1_1 in T.vectorized(16):
                    O[ax0_row, ax1_1] = O[ax0_row, ax1_1] / s[ax0_row]
"#;
    check(ROWS_PARAMS, before, after);
}

/// A reader of another row's value (`s[0]`) needs every row first: the
/// stages stay apart.
#[test]
fn a_reader_of_another_row_keeps_the_stages_apart() {
    let got = DefaultSchedule::with_vector_bits(256)
        .run(prim_module(ROWS_PARAMS, &rows_before("s[0]")))
        .unwrap()
        .to_string();
    assert!(!got.contains("_row"), "{got}");
    assert!(got.contains("] / s[0]"), "{got}");
}

#[test]
fn a_column_sum_accumulates_the_columns_in_vectors() {
    let params = r#"a: T.Buffer((6, 20), "float32"), S: T.Buffer((20,), "float32")"#;
    let before = r#"        with T.block("root"):
            for ax0, k0 in T.grid(20, 6):
                with T.block("S"):
                    v0, vk = T.axis.remap("SR", [ax0, k0])
                    with T.init():
                        S[v0] = T.float32(0.0)
                    S[v0] = S[v0] + a[vk, v0]
"#;
    let after = r#"        with T.block("root"):
            with T.block("S_acc"):
                acc = T.alloc_buffer((1, 20))
                for j in T.vectorized(16):
                    acc[0, j] = T.float32(0.0)
                for j in T.vectorized(4):
                    acc[0, 16 + j] = T.float32(0.0)
                for k0 in range(6):
                    for j in T.vectorized(16):
                        acc[0, j] = acc[0, j] + a[k0, j]
                    for j in T.vectorized(4):
                        acc[0, 16 + j] = acc[0, 16 + j] + a[k0, 16 + j]
                for j in T.vectorized(16):
                    S[j] = acc[0, j]
                for j in T.vectorized(4):
                    S[16 + j] = acc[0, 16 + j]
"#;
    check(params, before, after);
}

#[test]
fn loops_that_are_not_canonical_nests_are_left_alone() {
    // A hand-written loop without a block, and a block bound to an
    // expression of its loop rather than the loop itself.
    let body = r#"        for i in range(4):
            for j in range(8):
                C[i, j] = A[i, j] + B[j]
        for i in range(4):
            for j in range(8):
                with T.block("C"):
                    vi = T.axis.spatial(4, i)
                    vj = T.axis.spatial(8, 7 - j)
                    C[vi, vj] = A[vi, vj]
"#;
    check(ADD_PARAMS, body, body);
}

#[cfg(feature = "llvm")]
mod differential {
    //! Scheduled PrimFuncs compiled by LLVM (`Target::host()` runs the
    //! pass) against the reference kernels and, for inputs small enough for
    //! it, against the unscheduled PrimFuncs on the loop-level interpreter
    //! (`Target::tir_interpreter()`), on random inputs. The sizes reach
    //! every path: tiles and their row and column tails, the serial and the
    //! parallel side of the run-time guard, fused and chunked parallel
    //! loops.

    use crate::backend::{build, Target};
    use crate::ir::IRModule;
    use relax_runtime::{Executable, Tensor, Value, VirtualMachine};

    fn random(shape: &[i64], seed: u64) -> Value {
        let n: i64 = shape.iter().product();
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let data = (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s % 2001) as f32 / 1000.0 - 1.0
            })
            .collect();
        Tensor::from_vec(shape, data).unwrap().into()
    }

    use crate::transform::test_util::run_main_f32 as run;

    /// Runs `text`'s `main` on inputs of `shapes` on the targets; the
    /// results agree within `rtol` (relative to the largest magnitude). The
    /// loop-level interpreter runs inputs of up to [`INTERPRETED`] elements.
    /// The largest input (in elements) run on the loop-level interpreter.
    const INTERPRETED: i64 = 100_000;

    fn agree(text: &str, cases: &[Vec<Vec<i64>>], rtol: f32) {
        compare(text, cases, rtol, INTERPRETED, &Target::host())
    }

    /// [`agree`] with `host` for the compiled target, and the loop-level
    /// interpreter (which runs the unscheduled functions) on inputs of up
    /// to `interpreted` elements.
    fn compare(text: &str, cases: &[Vec<Vec<i64>>], rtol: f32, interpreted: i64, host: &Target) {
        let m: IRModule = text.parse().unwrap();
        let host = build(&m, host).unwrap();
        let tir = build(&m, &Target::tir_interpreter()).unwrap();
        let oracle = build(&m, &Target::interpreter()).unwrap();
        for (c, shapes) in cases.iter().enumerate() {
            let args: Vec<Value> = shapes
                .iter()
                .enumerate()
                .map(|(i, s)| random(s, (c * 10 + i) as u64 + 1))
                .collect();
            let (h, o) = (run(&host, &args), run(&oracle, &args));
            let mut results = vec![("host", h)];
            let elements: i64 = shapes.iter().map(|s| s.iter().product::<i64>()).sum();
            if elements <= interpreted {
                results.push(("tir interpreter", run(&tir, &args)));
            }
            let scale = o.iter().fold(1f32, |m, v| m.max(v.abs()));
            for (name, got) in &results {
                assert_eq!(got.len(), o.len());
                for (k, (g, w)) in got.iter().zip(&o).enumerate() {
                    assert!(
                        (g - w).abs() <= rtol * scale,
                        "{name}, inputs {shapes:?}, element {k}: {g} vs {w}"
                    );
                }
            }
        }
    }

    #[test]
    fn broadcast_add() {
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 128), dtype="float32"), b: R.Tensor((128,), dtype="float32")) -> R.Tensor(("n", 128), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            y: R.Tensor((n, 128), dtype="float32") = R.add(x, b)
            R.output(y)
        return y
"#;
        // 8200 * 128 elements: the parallel side.
        let cases: Vec<_> = [1, 5, 8200]
            .into_iter()
            .map(|n| vec![vec![n, 128], vec![128]])
            .collect();
        agree(text, &cases, 0.0);
        let flat = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("m",), dtype="float32"), b: R.Tensor((1,), dtype="float32")) -> R.Tensor(("m",), dtype="float32"):
        m = T.int64()
        with R.dataflow():
            y: R.Tensor((m,), dtype="float32") = R.add(x, b)
            R.output(y)
        return y
"#;
        // Parallel chunks of 4096 and a tail of 1; the serial side.
        let cases = [1048577, 70001, 7].map(|m| vec![vec![m], vec![1]]);
        agree(flat, &cases, 0.0);
    }

    #[test]
    fn relu() {
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 7, 9), dtype="float32")) -> R.Tensor(("n", 7, 9), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            y: R.Tensor((n, 7, 9), dtype="float32") = R.nn.relu(x)
            R.output(y)
        return y
"#;
        // 16700 * 63 elements: the fused parallel loop.
        let cases: Vec<_> = [1, 3, 1041, 16700]
            .into_iter()
            .map(|n| vec![vec![n, 7, 9]])
            .collect();
        agree(text, &cases, 0.0);
    }

    #[test]
    fn matmul() {
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 37), dtype="float32"), w: R.Tensor((37, 45), dtype="float32")) -> R.Tensor(("n", 45), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            y: R.Tensor((n, 45), dtype="float32") = R.matmul(x, w, out_dtype="void")
            R.output(y)
        return y
"#;
        // Rows: no tile, one tile and a tail, many tiles in parallel
        // (630 * 37 * 45 multiply-adds); columns: two tiles of 16
        // and a tail of 13.
        let cases: Vec<_> = [1, 5, 43, 630]
            .into_iter()
            .map(|n| vec![vec![n, 37], vec![37, 45]])
            .collect();
        agree(text, &cases, 1e-5);
        let batched = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((3, 6, 10), dtype="float32"), w: R.Tensor((3, 10, 7), dtype="float32")) -> R.Tensor((3, 6, 7), dtype="float32"):
        with R.dataflow():
            y: R.Tensor((3, 6, 7), dtype="float32") = R.matmul(x, w, out_dtype="void")
            R.output(y)
        return y
"#;
        agree(batched, &[vec![vec![3, 6, 10], vec![3, 10, 7]]], 1e-5);
    }

    #[test]
    fn sum() {
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 33), dtype="float32")) -> R.Tensor((33,), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            rows: R.Tensor((n,), dtype="float32") = R.sum(x, axis=[1], keepdims=False)
            total: R.Tensor((), dtype="float32") = R.sum(rows, axis=None, keepdims=False)
            cols: R.Tensor((33,), dtype="float32") = R.sum(x, axis=[0], keepdims=False)
            y: R.Tensor((33,), dtype="float32") = R.add(cols, total)
            R.output(y)
        return y
"#;
        let cases: Vec<_> = [1, 6, 2100, 32000]
            .into_iter()
            .map(|n| vec![vec![n, 33]])
            .collect();
        agree(text, &cases, 1e-5);
    }

    #[test]
    fn permute_dims() {
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 37), dtype="float32")) -> R.Tensor((37, "n"), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            y: R.Tensor((37, n), dtype="float32") = R.permute_dims(x, axes=None)
            R.output(y)
        return y
"#;
        // Partial tiles on both sides; 30000 * 37 elements in parallel.
        let cases: Vec<_> = [1, 20, 30000]
            .into_iter()
            .map(|n| vec![vec![n, 37]])
            .collect();
        agree(text, &cases, 0.0);
    }

    /// Softmax: the row maximum (NaN-propagating) and the row sum of
    /// exponentials become vectorized row reductions, `exp` is inline
    /// vector code, and rows of 1000 run in parallel (exp-heavy nests count
    /// as more work).
    #[test]
    fn softmax() {
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", "m"), dtype="float32")) -> R.Tensor(("n", "m"), dtype="float32"):
        n = T.int64()
        m = T.int64()
        with R.dataflow():
            y: R.Tensor((n, m), dtype="float32") = R.nn.softmax(x, axis=-1)
            R.output(y)
        return y
"#;
        let cases = vec![vec![vec![3, 7]], vec![vec![5, 33]], vec![vec![64, 1000]]];
        agree(text, &cases, 1e-5);
        // A NaN in a row makes that row NaN and leaves the others alone,
        // through the 16 partial maxima and their combination.
        let m: IRModule = text.parse().unwrap();
        let host = build(&m, &Target::host()).unwrap();
        let mut data: Vec<f32> = (0..2 * 40).map(|i| (i % 7) as f32 * 0.25).collect();
        data[5] = f32::NAN;
        let x: Value = Tensor::from_vec(&[2, 40], data).unwrap().into();
        let out = run(&host, &[x]);
        assert!(out[..40].iter().all(|v| v.is_nan()), "{out:?}");
        assert!(out[40..].iter().all(|v| v.is_finite()), "{out:?}");
        let row: f32 = out[40..].iter().sum();
        assert!((row - 1.0).abs() < 1e-5, "{row}");
    }

    /// `nn.batch_norm` in training (the normalized data and the updated
    /// moving variance) and in inference, NCHW, on every target.
    #[test]
    fn batch_norm() {
        for (training, field) in [("True", 0), ("True", 2), ("False", 0)] {
            let text = format!(
                r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", "c", "h", "w"), dtype="float32"), g: R.Tensor(("c",), dtype="float32"), b: R.Tensor(("c",), dtype="float32"), mm: R.Tensor(("c",), dtype="float32"), mv: R.Tensor(("c",), dtype="float32")):
        n = T.int64()
        c = T.int64()
        h = T.int64()
        w = T.int64()
        with R.dataflow():
            v = R.abs(mv)
            bn = R.nn.batch_norm(x, g, b, mm, v, axis=1, training={training})
            y = bn[{field}]
            R.output(y)
        return y
"#
            );
            let shapes = |n, c, hw| vec![vec![n, c, hw, hw], vec![c], vec![c], vec![c], vec![c]];
            let cases = vec![shapes(1, 3, 5), shapes(2, 16, 9), shapes(8, 64, 28)];
            agree(&text, &cases, 1e-4);
        }
    }

    /// Matmuls with their bias and activation fused as epilogues, on every
    /// path: register tiles with row and column tails, one-row tiles, wide
    /// symbolic rows accumulating in the output (the epilogue after the
    /// row), and dot products with a tail of `k`.
    #[test]
    fn matmul_epilogues() {
        let contiguous = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 37), dtype="float32"), w: R.Tensor((37, "m"), dtype="float32"), b: R.Tensor(("m",), dtype="float32")) -> R.Tensor(("n", "m"), dtype="float32"):
        n = T.int64()
        m = T.int64()
        with R.dataflow():
            lv: R.Tensor((n, m), dtype="float32") = R.matmul(x, w, out_dtype="void")
            lv1: R.Tensor((n, m), dtype="float32") = R.add(lv, b)
            y: R.Tensor((n, m), dtype="float32") = R.nn.relu(lv1)
            R.output(y)
        return y
"#;
        let cases: Vec<_> = [(1, 5), (6, 20), (9, 200)]
            .into_iter()
            .map(|(n, m)| vec![vec![n, 37], vec![37, m], vec![m]])
            .collect();
        agree(contiguous, &cases, 1e-5);
        let transposed = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 37), dtype="float32"), w: R.Tensor((24, 37), dtype="float32"), b: R.Tensor((24,), dtype="float32")) -> R.Tensor(("n", 24), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            wt: R.Tensor((37, 24), dtype="float32") = R.permute_dims(w, axes=None)
            lv: R.Tensor((n, 24), dtype="float32") = R.matmul(x, wt, out_dtype="void")
            y: R.Tensor((n, 24), dtype="float32") = R.add(lv, b)
            R.output(y)
        return y
"#;
        let cases: Vec<_> = [1, 6, 9]
            .into_iter()
            .map(|n| vec![vec![n, 37], vec![24, 37], vec![24]])
            .collect();
        agree(transposed, &cases, 1e-5);
    }

    /// A decoder's matrix-vector product `x · wᵀ` (one token, `n = 1`):
    /// above [`PARALLEL_MIN_WORK`] (1061 · 1001 multiply-adds) the
    /// columns of the rows left over from the blocks of [`dot::DOT_ROWS`]
    /// run in parallel, [`dot::DOT_ROWS`] at a time, then the column left
    /// over; one row, one block and a tail of one, and a tail of three
    /// rows, at odd sizes (no multiple of the lanes).
    #[test]
    fn a_matrix_vector_product_runs_its_columns_in_parallel() {
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 1001), dtype="float32"), w: R.Tensor((1061, 1001), dtype="float32")) -> R.Tensor(("n", 1061), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            wt: R.Tensor((1001, 1061), dtype="float32") = R.permute_dims(w, axes=None)
            y: R.Tensor((n, 1061), dtype="float32") = R.matmul(x, wt, out_dtype="void")
            R.output(y)
        return y
"#;
        let text_scheduled = scheduled(text, 512);
        // 265 blocks of 4 columns in parallel, then the last column.
        assert!(
            text_scheduled.contains("T.parallel(265)")
                && text_scheduled.contains("T.serial(1060, 1061)"),
            "the columns of the leftover rows are not parallel blocks:\n{text_scheduled}"
        );
        let cases: Vec<_> = [1, 5, 3]
            .into_iter()
            .map(|n| vec![vec![n, 1001], vec![1061, 1001]])
            .collect();
        agree(text, &cases, 1e-4);
    }

    /// Case 5, the packed GEMM, compared with the reference kernels (the
    /// loop-level interpreter runs the unscheduled functions, so it is
    /// left out): slices of `k` (the partial result kept in the
    /// intermediate between them) with a tail, two B panels and a column
    /// tail, row chunks with a tile tail, the epilogue on the last slice; a
    /// left operand read transposed; a batch; a symbolic `k` from empty to three
    /// slices; and shapes that choose the in-place schedules at run time.
    /// Each for the register tiles of SSE2, AVX2 and AVX-512 (all run on
    /// the host).
    #[test]
    fn packed_gemm() {
        let contiguous = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 300), dtype="float32"), w: R.Tensor((300, "m"), dtype="float32"), b: R.Tensor(("m",), dtype="float32")) -> R.Tensor(("n", "m"), dtype="float32"):
        n = T.int64()
        m = T.int64()
        with R.dataflow():
            lv: R.Tensor((n, m), dtype="float32") = R.matmul(x, w, out_dtype="void")
            lv1: R.Tensor((n, m), dtype="float32") = R.add(lv, b)
            y: R.Tensor((n, m), dtype="float32") = R.nn.relu(lv1)
            R.output(y)
        return y
"#;
        let cases: Vec<_> = [(1, 40), (40, 100), (97, 40), (100, 530), (200, 64)]
            .into_iter()
            .map(|(n, m)| vec![vec![n, 300], vec![300, m], vec![m]])
            .collect();
        packed(contiguous, &cases);
        let transposed_a = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((40, "n"), dtype="float32"), w: R.Tensor((40, 70), dtype="float32")) -> R.Tensor(("n", 70), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            xt: R.Tensor((n, 40), dtype="float32") = R.permute_dims(x, axes=None)
            y: R.Tensor((n, 70), dtype="float32") = R.matmul(xt, w, out_dtype="void")
            R.output(y)
        return y
"#;
        let cases: Vec<_> = [2, 400, 777]
            .into_iter()
            .map(|n| vec![vec![40, n], vec![40, 70]])
            .collect();
        packed(transposed_a, &cases);
        // A weight read transposed keeps case 4's dot products.
        let transposed_b = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((400, 40), dtype="float32"), w: R.Tensor((70, 40), dtype="float32")) -> R.Tensor((400, 70), dtype="float32"):
        with R.dataflow():
            wt: R.Tensor((40, 70), dtype="float32") = R.permute_dims(w, axes=None)
            y: R.Tensor((400, 70), dtype="float32") = R.matmul(x, wt, out_dtype="void")
            R.output(y)
        return y
"#;
        assert!(!scheduled(transposed_b, 256).contains("B_pack"));
        // A large weight read transposed with many rows (a language
        // model's prefill) is packed, chosen at run time by the rows: 300
        // rows take the packed side (a B panel's tail of 20 columns), 7
        // the dot products.
        let prefill = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 512), dtype="float32"), w: R.Tensor((532, 512), dtype="float32")) -> R.Tensor(("n", 532), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            wt: R.Tensor((512, 532), dtype="float32") = R.permute_dims(w, axes=None)
            y: R.Tensor((n, 532), dtype="float32") = R.matmul(x, wt, out_dtype="void")
            R.output(y)
        return y
"#;
        let text = scheduled(prefill, 512);
        assert!(
            text.contains("B_pack") && text.contains("n >= 256"),
            "{text}"
        );
        let cases: Vec<_> = [7, 300]
            .into_iter()
            .map(|n| vec![vec![n, 512], vec![532, 512]])
            .collect();
        packed(prefill, &cases);
        let batched = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((3, 64, 40), dtype="float32"), w: R.Tensor((3, 40, 448), dtype="float32")) -> R.Tensor((3, 64, 448), dtype="float32"):
        with R.dataflow():
            y: R.Tensor((3, 64, 448), dtype="float32") = R.matmul(x, w, out_dtype="void")
            R.output(y)
        return y
"#;
        packed(batched, &[vec![vec![3, 64, 40], vec![3, 40, 448]]]);
        let depth = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((40, "k"), dtype="float32"), w: R.Tensor(("k", 48), dtype="float32")) -> R.Tensor((40, 48), dtype="float32"):
        k = T.int64()
        with R.dataflow():
            y: R.Tensor((40, 48), dtype="float32") = R.matmul(x, w, out_dtype="void")
            R.output(y)
        return y
"#;
        let cases: Vec<_> = [0, 1, 17, 600, 1000]
            .into_iter()
            .map(|k| vec![vec![40, k], vec![k, 48]])
            .collect();
        packed(depth, &cases);
    }

    /// Case 6, convolutions as implicit GEMMs, compared with the reference
    /// kernels for each vector width: with a bias and relu fused as the
    /// epilogue, serial (small) and with the output rows in parallel,
    /// tiles with row and column tails, stride 2 with a 7×7 window,
    /// dilation, symbolic batch and image sizes down to a 1×1 output, and
    /// symbolic channels from none (the in-place fallback) up, NHWC data
    /// with HWIO weights. A grouped convolution is not a GEMM and stays in
    /// place.
    #[test]
    fn implicit_gemm_conv2d() {
        let fused = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 16, "h", "w"), dtype="float32"), k: R.Tensor((40, 16, 3, 3), dtype="float32"), b: R.Tensor((1, 40, 1, 1), dtype="float32")) -> R.Tensor(("n", 40, "h", "w"), dtype="float32"):
        n = T.int64()
        h = T.int64()
        w = T.int64()
        with R.dataflow():
            lv: R.Tensor((n, 40, h, w), dtype="float32") = R.nn.conv2d(x, k, padding=[1, 1, 1, 1])
            lv1: R.Tensor((n, 40, h, w), dtype="float32") = R.add(lv, b)
            y: R.Tensor((n, 40, h, w), dtype="float32") = R.nn.relu(lv1)
            R.output(y)
        return y
"#;
        let cases: Vec<_> = [(1, 5, 7), (2, 20, 20), (1, 1, 1), (3, 9, 33)]
            .into_iter()
            .map(|(n, h, w)| vec![vec![n, 16, h, w], vec![40, 16, 3, 3], vec![1, 40, 1, 1]])
            .collect();
        packed(fused, &cases);
        // Symbolic sizes count as much work: the output rows run in
        // parallel, the filters packed once for all of them.
        let text = scheduled(fused, 256);
        assert!(text.contains("in T.parallel(n * h):"), "{text}");
        assert!(
            text.contains("A_packed = T.alloc_buffer((7, 144, 6))"),
            "{text}"
        );
        let strided = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 3, 30, 30), dtype="float32"), k: R.Tensor((8, 3, 7, 7), dtype="float32")) -> R.Tensor((1, 8, 15, 15), dtype="float32"):
        with R.dataflow():
            y: R.Tensor((1, 8, 15, 15), dtype="float32") = R.nn.conv2d(x, k, strides=[2, 2], padding=[3, 3, 3, 3])
            R.output(y)
        return y
"#;
        packed(strided, &[vec![vec![1, 3, 30, 30], vec![8, 3, 7, 7]]]);
        // A stride-2 window over a symbolic batch whose loads are clamped
        // at zero only (the upper bound holds at every point of the nest,
        // so `LegalizeOps` leaves it out): its loads stay inside the image
        // wherever the nest runs, so the B pack's lanes are one vector of
        // loads.
        let strided2 = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 16, 20, 20), dtype="float32"), k: R.Tensor((24, 16, 3, 3), dtype="float32")) -> R.Tensor(("n", 24, 10, 10), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            y: R.Tensor((n, 24, 10, 10), dtype="float32") = R.nn.conv2d(x, k, strides=[2, 2], padding=[1, 1, 1, 1])
            R.output(y)
        return y
"#;
        let module = scheduled(strided2, 512);
        let lines: Vec<&str> = module.lines().collect();
        let store = lines
            .iter()
            .position(|l| l.contains("B_pack[") && l.contains("= T.Select("))
            .unwrap_or_else(|| panic!("{module}"));
        assert!(!lines[store].contains("T.min("), "{module}");
        assert!(lines[store - 1].contains("T.vectorized("), "{module}");
        let cases: Vec<_> = [1, 2]
            .into_iter()
            .map(|n| vec![vec![n, 16, 20, 20], vec![24, 16, 3, 3]])
            .collect();
        packed(strided2, &cases);
        let dilated = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 4, 12, 12), dtype="float32"), k: R.Tensor((6, 4, 3, 3), dtype="float32")) -> R.Tensor((1, 6, 12, 12), dtype="float32"):
        with R.dataflow():
            y: R.Tensor((1, 6, 12, 12), dtype="float32") = R.nn.conv2d(x, k, padding=[2, 2, 2, 2], dilation=[2, 2])
            R.output(y)
        return y
"#;
        packed(dilated, &[vec![vec![1, 4, 12, 12], vec![6, 4, 3, 3]]]);
        let channels = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, "c", 6, 6), dtype="float32"), k: R.Tensor((8, "c", 3, 3), dtype="float32")) -> R.Tensor((1, 8, 4, 4), dtype="float32"):
        c = T.int64()
        with R.dataflow():
            y: R.Tensor((1, 8, 4, 4), dtype="float32") = R.nn.conv2d(x, k)
            R.output(y)
        return y
"#;
        let cases: Vec<_> = [0, 1, 5]
            .into_iter()
            .map(|c| vec![vec![1, c, 6, 6], vec![8, c, 3, 3]])
            .collect();
        packed(channels, &cases);
        // TVM's NHWC data with HWIO weights: the output channel is the
        // contiguous column of the GEMM (24 channels: 216 taps, too many
        // for the direct convolution).
        let nhwc = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 12, 12, 24), dtype="float32"), k: R.Tensor((3, 3, 24, 20), dtype="float32")) -> R.Tensor(("n", 12, 12, 20), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            y: R.Tensor((n, 12, 12, 20), dtype="float32") = R.nn.conv2d(x, k, padding=[1, 1, 1, 1], data_layout="NHWC", kernel_layout="HWIO")
            R.output(y)
        return y
"#;
        let cases: Vec<_> = [1, 3]
            .into_iter()
            .map(|n| vec![vec![n, 12, 12, 24], vec![3, 3, 24, 20]])
            .collect();
        packed(nhwc, &cases);
        let grouped = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 4, 8, 8), dtype="float32"), k: R.Tensor((6, 2, 3, 3), dtype="float32")) -> R.Tensor((1, 6, 6, 6), dtype="float32"):
        with R.dataflow():
            y: R.Tensor((1, 6, 6, 6), dtype="float32") = R.nn.conv2d(x, k, groups=2)
            R.output(y)
        return y
"#;
        // The legalization gives the group an axis of its own, so a grouped
        // convolution is an implicit GEMM too (AlexNet's and ShuffleNet's).
        assert!(scheduled(grouped, 256).contains("B_pack"));
        compare(
            grouped,
            &[vec![vec![1, 4, 8, 8], vec![6, 2, 3, 3]]],
            1e-5,
            1 << 20,
            &Target::host(),
        );
    }

    /// max_pool2d over NHWC data (TVM's layout), with padding and a stride,
    /// and its NCHW output.
    #[test]
    fn max_pool2d_layouts() {
        for out in ["NHWC", "NCHW"] {
            let out_shape = if out == "NHWC" {
                "(2, 4, 4, 3)"
            } else {
                "(2, 3, 4, 4)"
            };
            let text = format!(
                r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 7, 7, 3), dtype="float32")) -> R.Tensor({out_shape}, dtype="float32"):
        with R.dataflow():
            y: R.Tensor({out_shape}, dtype="float32") = R.nn.max_pool2d(x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1], layout="NHWC", out_layout="{out}")
            R.output(y)
        return y
"#
            );
            agree(&text, &[vec![vec![2, 7, 7, 3]]], 0.0);
        }
    }

    /// Pools (case 7, window reductions) against the reference kernels:
    /// with and without padding (so with and without partitioned rows),
    /// strides 1 and 2, a dilation, ceil mode, average pools with and
    /// without the padding counted, NHWC, and interiors that fill
    /// [`super::super::window::WINDOW_TILE`]-column tiles and leave a
    /// shorter one. Compiled by LLVM and run on the bounds-checked
    /// loop-level interpreter, for each vector width; max pools are exact.
    #[test]
    fn pools_partition_their_borders() {
        let pool = |op: &str, x: [i64; 4], attrs: &str| {
            format!(
                r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(({}, {}, {}, {}), dtype="float32")):
        with R.dataflow():
            y = R.nn.{op}(x, {attrs})
            R.output(y)
        return y
"#,
                x[0], x[1], x[2], x[3]
            )
        };
        let cases = [
            (
                "max_pool2d",
                [1, 3, 71, 75],
                "pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1]",
                0.0,
            ),
            (
                "max_pool2d",
                [2, 2, 9, 40],
                "pool_size=[3, 3], strides=[1, 1], padding=[1, 1, 1, 1]",
                0.0,
            ),
            (
                "max_pool2d",
                [1, 4, 10, 70],
                "pool_size=[2, 2], strides=[2, 2]",
                0.0,
            ),
            (
                "max_pool2d",
                [1, 2, 12, 45],
                "pool_size=[3, 3], strides=[2, 2], padding=[0, 0, 1, 1], ceil_mode=True",
                0.0,
            ),
            (
                "max_pool2d",
                [1, 2, 15, 50],
                "pool_size=[3, 3], dilation=[2, 2], padding=[2, 2, 2, 2]",
                0.0,
            ),
            (
                "max_pool2d",
                [1, 9, 9, 5],
                "pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1], layout=\"NHWC\"",
                0.0,
            ),
            (
                "avg_pool2d",
                [1, 3, 17, 35],
                "pool_size=[3, 3], strides=[1, 1], padding=[1, 1, 1, 1]",
                1e-6,
            ),
            (
                "avg_pool2d",
                [1, 3, 17, 35],
                "pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1], count_include_pad=True",
                1e-6,
            ),
            // Rows of at most one tile: one masked tile per row.
            (
                "max_pool2d",
                [1, 5, 14, 14],
                "pool_size=[3, 3], strides=[1, 1], padding=[1, 1, 1, 1]",
                0.0,
            ),
            (
                "max_pool2d",
                [1, 3, 11, 20],
                "pool_size=[5, 5], strides=[1, 1], padding=[2, 2, 2, 2]",
                0.0,
            ),
            (
                "avg_pool2d",
                [1, 3, 13, 13],
                "pool_size=[3, 3], strides=[1, 1], padding=[1, 1, 1, 1]",
                1e-6,
            ),
        ];
        for (op, x, attrs, rtol) in cases {
            let text = pool(op, x, attrs);
            let shapes = vec![x.to_vec()];
            for bits in [128, 256, 512] {
                let module = scheduled(&text, bits);
                assert!(module.contains("_acc\")"), "{module}");
                compare(
                    &text,
                    std::slice::from_ref(&shapes),
                    rtol,
                    0,
                    &Target::host().with_vector_bits(bits),
                );
                let bounds_checked = Target::tir_interpreter().with_vector_bits(bits);
                compare(
                    &text,
                    std::slice::from_ref(&shapes),
                    rtol,
                    0,
                    &bounds_checked,
                );
            }
        }
    }

    /// A padded pool's interior rows and columns read the input with
    /// neither bounds tests nor clamped indices, in vector tiles; its
    /// border rows keep both.
    #[test]
    fn a_padded_pool_reads_its_interior_unguarded() {
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 64, 112, 112), dtype="float32")):
        with R.dataflow():
            y = R.nn.max_pool2d(x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])
            R.output(y)
        return y
"#;
        let module = scheduled(text, 512);
        let updates: Vec<&str> = module
            .lines()
            .filter(|l| l.trim_start().starts_with("acc") && l.contains("x["))
            .collect();
        let clamped = |l: &&&str| l.contains("T.max(") || l.contains("T.min(");
        assert!(updates.iter().any(|l| !clamped(&l)), "{module}");
        assert!(updates.iter().any(|l| clamped(&l)), "{module}");
        assert!(module.contains("T.parallel(3584)"), "{module}");
        assert!(module.contains("% 56 >= 1"), "{module}");
    }

    /// A padded pool at stride 1 whose rows are at most one tile wide (an
    /// NCHW 14 × 14 image) runs each interior row as one tile, its column
    /// tests the masks of the lanes, with no row tests and no tiles of one
    /// column; at stride 2 (a masked gather per tap) its columns stay
    /// partitioned.
    #[test]
    fn a_narrow_padded_pool_row_is_one_masked_tile() {
        let text = |stride: i64| {
            let side = (14 + 2 - 3) / stride + 1;
            format!(
                r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 512, 14, 14), dtype="float32")) -> R.Tensor((1, 512, {side}, {side}), dtype="float32"):
        with R.dataflow():
            y = R.nn.max_pool2d(x, pool_size=[3, 3], strides=[{stride}, {stride}], padding=[1, 1, 1, 1])
            R.output(y)
        return y
"#
            )
        };
        let module = scheduled(&text(1), 512);
        let then = module.split("else:").next().unwrap();
        assert!(then.contains("T.alloc_buffer((1, 14))"), "{module}");
        assert!(!module.contains("T.alloc_buffer((1, 1))"), "{module}");
        let update = then
            .lines()
            .find(|l| l.trim_start().starts_with("acc") && l.contains("x["))
            .unwrap();
        assert!(!update.contains("% 14 >= 1"), "{update}");
        let strided = scheduled(&text(2), 512);
        assert!(strided.contains("T.alloc_buffer((1, 1))"), "{strided}");
    }

    /// A padded pool's taps test its bounds, so they count as more work
    /// than a multiply-add: GoogLeNet's 3 × 3 pool over 512 × 14 × 14
    /// (0.9M taps) runs on the thread pool, a padding-free one of the same
    /// size does not. Both agree with the reference kernels.
    #[test]
    fn a_padded_pool_pays_for_the_thread_pool_sooner() {
        let text = |padding: i64| {
            let side = 14 + 2 * padding - 2;
            format!(
                r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 512, 14, 14), dtype="float32")) -> R.Tensor((1, 512, {side}, {side}), dtype="float32"):
        with R.dataflow():
            y = R.nn.max_pool2d(x, pool_size=[3, 3], strides=[1, 1], padding=[{padding}, {padding}, {padding}, {padding}])
            R.output(y)
        return y
"#
            )
        };
        for (padding, parallel) in [(1, true), (0, false)] {
            let text = text(padding);
            let module = scheduled(&text, 512);
            assert_eq!(module.contains("T.parallel("), parallel, "{module}");
            agree(&text, &[vec![vec![1, 512, 14, 14]]], 0.0);
        }
    }

    /// Transposes of every element width, through whole register-transposed
    /// tiles (16 x 16 with 512-bit vectors, 8 x 8 with 256, 4 x 4 with 128)
    /// and the element-by-element tiles at their edges, serial and
    /// parallel, with a 3-d permutation and a transpose fused with an add:
    /// bit for bit the reference kernels' results.
    #[test]
    fn transposes_of_every_dtype_are_exact() {
        let values = |dtype: &str, shape: &[i64]| -> Value {
            let n: i64 = shape.iter().product();
            let ints = (0..n).map(|i| (i * 37 + 11) % 101 - 50);
            match dtype {
                "float32" => Tensor::from_vec(shape, ints.map(|v| v as f32 * 0.25).collect()),
                "float64" => Tensor::from_vec(shape, ints.map(|v| v as f64 * 0.125).collect()),
                "int8" => Tensor::from_vec(shape, ints.map(|v| v as i8).collect()),
                "int32" => Tensor::from_vec(shape, ints.map(|v| v as i32).collect()),
                "int64" => Tensor::from_vec(shape, ints.map(|v| v * (1 << 40)).collect()),
                "uint8" => Tensor::from_vec(shape, ints.map(|v| (v + 50) as u8).collect()),
                "bool" => Tensor::from_vec(shape, ints.map(|v| v % 3 == 0).collect()),
                _ => unreachable!(),
            }
            .unwrap()
            .into()
        };
        let bytes = |exec: &Executable, args: &[Value]| {
            let out = VirtualMachine::new(exec).call("main", args).unwrap();
            out.as_tensor().unwrap().as_bytes().to_vec()
        };
        for dtype in [
            "float32", "float64", "int8", "int32", "int64", "uint8", "bool",
        ] {
            // 37 x 50: edge tiles on both sides; 64 x 48: whole tiles only;
            // 400 x 700: the parallel loop.
            let cases = [
                ("(37, 50)", "(50, 37)", "[1, 0]", vec![37, 50]),
                ("(64, 48)", "(48, 64)", "[1, 0]", vec![64, 48]),
                ("(400, 700)", "(700, 400)", "[1, 0]", vec![400, 700]),
                ("(3, 40, 33)", "(33, 3, 40)", "[2, 0, 1]", vec![3, 40, 33]),
            ];
            for (x_shape, y_shape, axes, shape) in cases {
                let text = format!(
                    r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor({x_shape}, dtype="{dtype}")) -> R.Tensor({y_shape}, dtype="{dtype}"):
        with R.dataflow():
            y: R.Tensor({y_shape}, dtype="{dtype}") = R.permute_dims(x, axes={axes})
            R.output(y)
        return y
"#
                );
                let m: IRModule = text.parse().unwrap();
                let args = [values(dtype, &shape)];
                let want = bytes(&build(&m, &Target::interpreter()).unwrap(), &args);
                for bits in [128, 256, 512] {
                    let host = build(&m, &Target::host().with_vector_bits(bits)).unwrap();
                    assert!(
                        bytes(&host, &args) == want,
                        "{dtype} {x_shape} axes {axes}, {bits}-bit vectors"
                    );
                }
            }
        }
        // A transpose fused with a broadcast add: one kernel whose tiles
        // transpose `x` and read `b` along the stored rows.
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((70, 45), dtype="float32"), b: R.Tensor((70,), dtype="float32")) -> R.Tensor((45, 70), dtype="float32"):
        with R.dataflow():
            t: R.Tensor((45, 70), dtype="float32") = R.permute_dims(x, axes=None)
            y: R.Tensor((45, 70), dtype="float32") = R.add(t, b)
            R.output(y)
        return y
"#;
        agree(text, &[vec![vec![70, 45], vec![70]]], 0.0);
    }

    /// The scheduled loops of every case (packed GEMM panels and their
    /// zero-padded tails, transpose tiles and their edges, an implicit-GEMM
    /// convolution, pooling windows over padding, row reductions, vector
    /// tails) run on the loop-level interpreter, which checks every access
    /// against its buffer's bounds, for each vector width: the code LLVM
    /// compiles never reads or writes out of bounds, and gives the
    /// reference kernels' results.
    #[test]
    fn scheduled_loops_stay_in_bounds() {
        let module = |params: &str, out: &str, body: &str| {
            format!(
                r#"
@I.ir_module
class Module:
    @R.function
    def main({params}) -> R.Tensor({out}, dtype="float32"):
        with R.dataflow():
            y: R.Tensor({out}, dtype="float32") = {body}
            R.output(y)
        return y
"#
            )
        };
        let t = |shape: &str| format!(r#"R.Tensor({shape}, dtype="float32")"#);
        let cases = [
            // A packed GEMM (1.06M multiply-adds): rows, columns and depth
            // off every tile size, two k slices (the second partial).
            (
                module(
                    &format!("x: {}, w: {}", t("(38, 300)"), t("(300, 93)")),
                    "(38, 93)",
                    "R.matmul(x, w)",
                ),
                vec![vec![38, 300], vec![300, 93]],
            ),
            // A transpose with edge tiles and edge blocks on both sides.
            (
                module(
                    &format!("x: {}", t("(150, 133)")),
                    "(133, 150)",
                    "R.permute_dims(x, axes=None)",
                ),
                vec![vec![150, 133]],
            ),
            // An implicit GEMM (1.8M multiply-adds) with padding.
            (
                module(
                    &format!("x: {}, w: {}", t("(1, 16, 20, 19)"), t("(33, 16, 3, 3)")),
                    "(1, 33, 20, 19)",
                    "R.nn.conv2d(x, w, padding=[1, 1, 1, 1])",
                ),
                vec![vec![1, 16, 20, 19], vec![33, 16, 3, 3]],
            ),
            // One whose 6 output rows of 5 are one axis (1.1M).
            (
                module(
                    &format!("x: {}, w: {}", t("(1, 32, 6, 5)"), t("(130, 32, 3, 3)")),
                    "(1, 130, 6, 5)",
                    "R.nn.conv2d(x, w, padding=[1, 1, 1, 1])",
                ),
                vec![vec![1, 32, 6, 5], vec![130, 32, 3, 3]],
            ),
            (
                module(
                    &format!("x: {}", t("(1, 5, 13, 11)")),
                    "(1, 5, 7, 6)",
                    "R.nn.max_pool2d(x, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])",
                ),
                vec![vec![1, 5, 13, 11]],
            ),
            (
                module(
                    &format!("x: {}", t("(5, 37)")),
                    "(5, 37)",
                    "R.nn.softmax(x, axis=-1)",
                ),
                vec![vec![5, 37]],
            ),
            (
                module(
                    &format!("x: {}, b: {}", t("(9, 37)"), t("(37,)")),
                    "(9, 37)",
                    "R.add(x, b)",
                ),
                vec![vec![9, 37], vec![37]],
            ),
        ];
        for (text, shapes) in &cases {
            for bits in [128, 256, 512] {
                let target = Target::tir_interpreter().with_vector_bits(bits);
                let lower = |target: &Target| {
                    let m: IRModule = text.parse().unwrap();
                    crate::transform::Pass::run(&crate::backend::pipeline(target), m)
                        .unwrap()
                        .to_string()
                };
                assert_ne!(lower(&target), lower(&Target::tir_interpreter()));
                compare(text, std::slice::from_ref(shapes), 1e-5, 0, &target);
            }
        }
    }

    /// Outputs of at least 32 MiB whose vector stores are provably 64-byte
    /// aligned are written with streaming stores (then fenced); others are
    /// not. The values are exact either way. A transpose's tiles are as
    /// wide as the target's vectors, so it streams on 512-bit vectors
    /// (built for them on any host), where its stores are 64 bytes.
    #[test]
    fn large_outputs_are_streamed() {
        let relu = |rows: i64, cols: i64| {
            format!(
                r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(({rows}, {cols}), dtype="float32")) -> R.Tensor(({rows}, {cols}), dtype="float32"):
        with R.dataflow():
            y: R.Tensor(({rows}, {cols}), dtype="float32") = R.nn.relu(x)
            R.output(y)
        return y
"#
            )
        };
        let transpose = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2048, 4096), dtype="float32")) -> R.Tensor((4096, 2048), dtype="float32"):
        with R.dataflow():
            y: R.Tensor((4096, 2048), dtype="float32") = R.permute_dims(x, axes=None)
            R.output(y)
        return y
"#;
        let wide = Target::host().with_vector_bits(512);
        let ir_for = |text: &str, target: &Target| {
            let m: IRModule = text.parse().unwrap();
            let lowered =
                crate::transform::Pass::run(&crate::backend::pipeline(target), m).unwrap();
            let funcs: Vec<_> = lowered
                .functions()
                .filter_map(|(gv, f)| f.as_prim().map(|p| (gv.name_hint().to_string(), p.clone())))
                .collect();
            crate::codegen::llvm::emit_llvm_ir(&funcs, &Default::default(), false).unwrap()
        };
        let ir = |text: &str| ir_for(text, &Target::host());
        let streams = cfg!(target_arch = "x86_64");
        // 32 MiB in rows of 4096: aligned; rows of 4100 are not; 16 MiB is
        // below the threshold.
        for (rows, cols, streamed) in [
            (2048, 4096, streams),
            (2047, 4100, false),
            (1024, 4096, false),
        ] {
            let text = relu(rows, cols);
            let code = ir(&text);
            assert_eq!(code.contains("!nontemporal"), streamed, "{rows} x {cols}");
            assert_eq!(
                code.contains("llvm.x86.sse.sfence"),
                streamed,
                "{rows} x {cols}"
            );
            let m: IRModule = text.parse().unwrap();
            let host = build(&m, &Target::host()).unwrap();
            let n = (rows * cols) as usize;
            let data: Vec<f32> = (0..n).map(|i| (i % 7) as f32 - 3.0).collect();
            let x: Value = Tensor::from_vec(&[rows, cols], data.clone())
                .unwrap()
                .into();
            let got = run(&host, &[x]);
            assert!(got.iter().zip(&data).all(|(g, v)| *g == v.max(0.0)));
        }
        assert_eq!(ir_for(transpose, &wide).contains("!nontemporal"), streams);
        let m: IRModule = transpose.parse().unwrap();
        let host = build(&m, &wide).unwrap();
        let data: Vec<f32> = (0..2048 * 4096).map(|i| i as f32).collect();
        let x: Value = Tensor::from_vec(&[2048, 4096], data.clone())
            .unwrap()
            .into();
        let got = run(&host, &[x]);
        for (k, g) in got.iter().enumerate() {
            let (i, j) = (k / 2048, k % 2048);
            assert_eq!(*g, data[j * 4096 + i], "element ({i}, {j})");
        }
    }

    /// A convolution of many filters whose output rows are narrower than
    /// the register tile (ResNet's 7 x 7 layers) runs its rows and columns
    /// as one axis
    /// of the implicit GEMM, with a bias and relu after it: the packed
    /// tiles span several output rows, and the results are the reference
    /// kernels'.
    #[test]
    fn narrow_convolutions_fuse_their_output_rows() {
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 64, 7, 7), dtype="float32"), w: R.Tensor((136, 64, 3, 3), dtype="float32"), b: R.Tensor((1, 136, 1, 1), dtype="float32")) -> R.Tensor((1, 136, 7, 7), dtype="float32"):
        with R.dataflow():
            c: R.Tensor((1, 136, 7, 7), dtype="float32") = R.nn.conv2d(x, w, padding=[1, 1, 1, 1])
            d: R.Tensor((1, 136, 7, 7), dtype="float32") = R.add(c, b)
            y: R.Tensor((1, 136, 7, 7), dtype="float32") = R.nn.relu(d)
            R.output(y)
        return y
"#;
        for bits in [128, 256, 512] {
            let module = scheduled(text, bits);
            assert!(module.contains("B_pack"), "{module}");
            assert!(
                module.contains("// 7"),
                "the output rows are not fused: {module}"
            );
            let target = Target::host().with_vector_bits(bits);
            compare(
                text,
                &[vec![
                    vec![1, 64, 7, 7],
                    vec![136, 64, 3, 3],
                    vec![1, 136, 1, 1],
                ]],
                1e-5,
                0,
                &target,
            );
        }
        // A symbolic image count (an exported model's `batch`) is taken
        // to be one image: the rows are still fused, for any batch.
        let symbolic = text
            .replace("(1, 64, 7, 7)", "(\"n\", 64, 7, 7)")
            .replace("(1, 136, 7, 7)", "(\"n\", 136, 7, 7)");
        let module = scheduled(&symbolic, 512);
        assert!(
            module.contains("B_pack") && module.contains("// 7"),
            "the output rows are not fused: {module}"
        );
        for n in [1, 3] {
            let shapes = [vec![
                vec![n, 64, 7, 7],
                vec![136, 64, 3, 3],
                vec![1, 136, 1, 1],
            ]];
            compare(&symbolic, &shapes, 1e-5, 0, &Target::host());
        }
        // A convolution of eight groups keeps its batch of (group, row)
        // products.
        let grouped = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 64, 7, 7), dtype="float32"), w: R.Tensor((128, 8, 3, 3), dtype="float32")) -> R.Tensor((1, 128, 7, 7), dtype="float32"):
        with R.dataflow():
            y: R.Tensor((1, 128, 7, 7), dtype="float32") = R.nn.conv2d(x, w, padding=[1, 1, 1, 1], groups=8)
            R.output(y)
        return y
"#;
        let module = scheduled(grouped, 512);
        assert!(
            module.contains("B_pack") && !module.contains("// 7"),
            "{module}"
        );
        let shapes = [vec![vec![1, 64, 7, 7], vec![128, 8, 3, 3]]];
        compare(grouped, &shapes, 1e-5, 0, &Target::host());
    }

    /// Output rows wider than a few tiles' worth but not a multiple of
    /// them fold by groups of rows into the GEMM's columns (20-wide rows
    /// by three: 60 of 64 columns filled, where one row filled 20 of 32),
    /// one product per group of rows; with a
    /// stride, padding and a 7 x 7 window too, and a bias and relu after
    /// it. Each agrees with the reference kernels at every vector width.
    #[test]
    fn output_rows_fold_by_groups_into_the_columns() {
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 5, 12, 20), dtype="float32"), w: R.Tensor((10, 5, 3, 3), dtype="float32"), b: R.Tensor((1, 10, 1, 1), dtype="float32")) -> R.Tensor((1, 10, 12, 20), dtype="float32"):
        with R.dataflow():
            c: R.Tensor((1, 10, 12, 20), dtype="float32") = R.nn.conv2d(x, w, padding=[1, 1, 1, 1])
            d: R.Tensor((1, 10, 12, 20), dtype="float32") = R.add(c, b)
            y: R.Tensor((1, 10, 12, 20), dtype="float32") = R.nn.relu(d)
            R.output(y)
        return y
"#;
        let shapes = vec![vec![1, 5, 12, 20], vec![10, 5, 3, 3], vec![1, 10, 1, 1]];
        for bits in [128, 256, 512] {
            let module = scheduled(text, bits);
            assert!(module.contains("B_pack"), "{module}");
            if bits == 512 {
                assert!(module.contains("// 20"), "the rows do not fold: {module}");
            }
            let target = Target::host().with_vector_bits(bits);
            compare(text, std::slice::from_ref(&shapes), 1e-5, 0, &target);
        }
        let strided = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 3, 23, 23), dtype="float32"), w: R.Tensor((9, 3, 7, 7), dtype="float32")) -> R.Tensor((1, 9, 12, 12), dtype="float32"):
        with R.dataflow():
            y: R.Tensor((1, 9, 12, 12), dtype="float32") = R.nn.conv2d(x, w, strides=[2, 2], padding=[3, 3, 3, 3])
            R.output(y)
        return y
"#;
        assert!(scheduled(strided, 512).contains("// 12"));
        packed(strided, &[vec![vec![1, 3, 23, 23], vec![9, 3, 7, 7]]]);
        // A symbolic image count keeps the folding, for any batch.
        let symbolic = text
            .replace("(1, 5, 12, 20)", "(\"n\", 5, 12, 20)")
            .replace("(1, 10, 12, 20)", "(\"n\", 10, 12, 20)");
        assert!(scheduled(&symbolic, 512).contains("// 20"));
        for n in [1, 2] {
            let shapes = [vec![
                vec![n, 5, 12, 20],
                vec![10, 5, 3, 3],
                vec![1, 10, 1, 1],
            ]];
            compare(&symbolic, &shapes, 1e-5, 0, &Target::host());
        }
    }

    /// A whole transpose tile is loaded as rows of vectors and transposed
    /// with shuffles, not gathered element by element.
    #[test]
    fn transpose_tiles_are_shuffled_in_registers() {
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((64, 64), dtype="float32")) -> R.Tensor((64, 64), dtype="float32"):
        with R.dataflow():
            y: R.Tensor((64, 64), dtype="float32") = R.permute_dims(x, axes=None)
            R.output(y)
        return y
"#;
        for (bits, lanes) in [(512, 16), (256, 8)] {
            let target = Target::host().with_vector_bits(bits);
            let m: IRModule = text.parse().unwrap();
            let lowered =
                crate::transform::Pass::run(&crate::backend::pipeline(&target), m).unwrap();
            let funcs: Vec<_> = lowered
                .functions()
                .filter_map(|(gv, f)| f.as_prim().map(|p| (gv.name_hint().to_string(), p.clone())))
                .collect();
            let ir =
                crate::codegen::llvm::emit_llvm_ir(&funcs, &Default::default(), false).unwrap();
            let vector = format!("<{lanes} x float>");
            assert!(ir.contains(&format!("load {vector}")), "{ir}");
            assert!(ir.contains(&format!("shufflevector {vector}")), "{ir}");
            assert!(ir.contains(&format!("store {vector}")), "{ir}");
            assert!(!ir.contains("insertelement"), "{ir}");
        }
    }

    /// The packed GEMM's register tile keeps its index arithmetic scalar
    /// after LLVM's optimizations: each row's broadcast load addresses its
    /// row by a scalar offset, not by a lane extracted from a vector of row
    /// offsets (what LLVM's SLP vectorizer made of it; `codegen::llvm::target`
    /// turns SLP off). A row count that is no multiple of the tile's six
    /// rows, so the rows are clamped.
    #[test]
    fn the_register_tile_addresses_its_rows_with_scalars() {
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((64, 128), dtype="float32"), w: R.Tensor((128, 1000), dtype="float32")):
        with R.dataflow():
            y = R.matmul(x, w)
            R.output(y)
        return y
"#;
        let m: IRModule = text.parse().unwrap();
        let lowered =
            crate::transform::Pass::run(&crate::backend::pipeline(&Target::host()), m).unwrap();
        let funcs: Vec<_> = lowered
            .functions()
            .filter_map(|(gv, f)| f.as_prim().map(|p| (gv.name_hint().to_string(), p.clone())))
            .collect();
        let native = crate::codegen::llvm::CodegenOptions {
            native_cpu: true,
            cpu: None,
        };
        let ir = crate::codegen::llvm::emit_llvm_ir(&funcs, &native, true).unwrap();
        assert!(ir.contains("@llvm.fmuladd.v"), "{ir}");
        assert!(!ir.contains("x i64>"), "{ir}");
    }

    /// A padded convolution's image is packed (im2col) with masked vector
    /// loads: where the window is inside the image, the row of the pack is
    /// the image's contiguous row; where it is not, the mask gives the
    /// padding. Fused output rows (7 x 7) and plain ones (40 wide), each
    /// agreeing with the reference kernels at every vector width.
    #[test]
    fn padded_images_are_packed_with_masked_loads() {
        for (c, hw, filters) in [(64, 7, 128), (8, 40, 16)] {
            let text = format!(
                r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, {c}, {hw}, {hw}), dtype="float32"), w: R.Tensor(({filters}, {c}, 3, 3), dtype="float32")):
        with R.dataflow():
            y = R.nn.conv2d(x, w, padding=[1, 1, 1, 1])
            R.output(y)
        return y
"#
            );
            for bits in [128, 256, 512] {
                let target = Target::host().with_vector_bits(bits);
                let (m, ir) = built_ir(&text, &target);
                assert!(ir.contains("call <"), "{ir}");
                assert!(ir.contains("@llvm.masked.load"), "{m}");
                let shapes = vec![vec![1, c, hw, hw], vec![filters, c, 3, 3]];
                compare(&text, std::slice::from_ref(&shapes), 1e-5, 0, &target);
            }
        }
    }

    /// A strided convolution's image is packed with masked gathers: its
    /// window's row is every second pixel, so not contiguous in the lanes,
    /// and the padding is the mask, where the lanes were read one by one
    /// behind a branch each (ResNet's stride-2 layers: 1.03 -> 0.52 ms).
    /// A 3 x 3 and a 7 x 7 (the stem's) window at stride 2, odd and even
    /// sizes, each agreeing with the reference kernels at every vector
    /// width.
    #[test]
    fn strided_padded_images_are_packed_with_masked_gathers() {
        for (c, hw, filters, k, pad) in [(16, 15, 32, 3, 1), (3, 30, 16, 7, 3)] {
            let text = format!(
                r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, {c}, {hw}, {hw}), dtype="float32"), w: R.Tensor(({filters}, {c}, {k}, {k}), dtype="float32")):
        with R.dataflow():
            y = R.nn.conv2d(x, w, strides=[2, 2], padding=[{pad}, {pad}, {pad}, {pad}])
            R.output(y)
        return y
"#
            );
            for bits in [128, 256, 512] {
                let target = Target::host().with_vector_bits(bits);
                let (m, ir) = built_ir(&text, &target);
                assert!(ir.contains("@llvm.masked.gather"), "{m}");
                let shapes = vec![vec![1, c, hw, hw], vec![filters, c, k, k]];
                compare(&text, std::slice::from_ref(&shapes), 1e-5, 0, &target);
            }
        }
    }

    /// The module `text` after the build pipeline for `target`, and the
    /// LLVM IR of its kernels before optimization.
    fn built_ir(text: &str, target: &Target) -> (IRModule, String) {
        let m: IRModule = text.parse().unwrap();
        let m = crate::transform::Pass::run(&crate::backend::pipeline(target), m).unwrap();
        let funcs: Vec<(String, crate::tir::PrimFunc)> = m
            .functions()
            .filter_map(|(gv, f)| Some((gv.name_hint().to_string(), f.as_prim()?.clone())))
            .collect();
        let opts = crate::codegen::llvm::CodegenOptions::default();
        let ir = crate::codegen::llvm::emit_llvm_ir(&funcs, &opts, false).unwrap();
        (m, ir)
    }

    /// A depthwise convolution (one filter per group) is a window
    /// reduction, not an implicit GEMM of one row: each tile of output
    /// columns accumulates in vector registers over the unrolled taps, the
    /// bias and relu applied at its write-back (no intermediate), the
    /// (batch, channel, row) axes one parallel loop. Strides 1 and 2,
    /// padding, dilation, 5 × 5 windows, a channel multiplier of one with
    /// two input channels per group, channel counts and widths that are no
    /// multiple of the vector, a symbolic batch: the compiled code agrees
    /// with the reference kernels and the unscheduled loops, and the
    /// scheduled loops stay in bounds on the loop-level interpreter.
    #[test]
    fn depthwise_conv2d_is_a_window_reduction() {
        let module = |c: i64, cg: i64, hw: (i64, i64), k: i64, attrs: &str| {
            let out = |x: i64, pad: i64, dil: i64, stride: i64| {
                (x + 2 * pad - dil * (k - 1) - 1) / stride + 1
            };
            let pad: i64 = attrs
                .split("padding=[")
                .nth(1)
                .map_or(0, |r| r[..1].parse().unwrap());
            let dil: i64 = attrs
                .split("dilation=[")
                .nth(1)
                .map_or(1, |r| r[..1].parse().unwrap());
            let stride: i64 = attrs
                .split("strides=[")
                .nth(1)
                .map_or(1, |r| r[..1].parse().unwrap());
            let (oh, ow) = (out(hw.0, pad, dil, stride), out(hw.1, pad, dil, stride));
            let text = format!(
                r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", {ci}, {h}, {w}), dtype="float32"), k: R.Tensor(({c}, {cg}, {k}, {k}), dtype="float32"), b: R.Tensor((1, {c}, 1, 1), dtype="float32")) -> R.Tensor(("n", {c}, {oh}, {ow}), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            lv: R.Tensor((n, {c}, {oh}, {ow}), dtype="float32") = R.nn.conv2d(x, k, groups={c}{attrs})
            lv1: R.Tensor((n, {c}, {oh}, {ow}), dtype="float32") = R.add(lv, b)
            y: R.Tensor((n, {c}, {oh}, {ow}), dtype="float32") = R.nn.relu(lv1)
            R.output(y)
        return y
"#,
                ci = c * cg,
                h = hw.0,
                w = hw.1,
            );
            let shapes = |n: i64| {
                vec![
                    vec![n, c * cg, hw.0, hw.1],
                    vec![c, cg, k, k],
                    vec![1, c, 1, 1],
                ]
            };
            (text, vec![shapes(1), shapes(2)])
        };
        let cases = [
            module(17, 1, (13, 40), 3, ", padding=[1, 1, 1, 1]"),
            module(8, 1, (15, 15), 3, ", strides=[2, 2], padding=[1, 1, 1, 1]"),
            module(5, 1, (12, 9), 3, ", padding=[2, 2, 2, 2], dilation=[2, 2]"),
            module(6, 1, (9, 7), 5, ", padding=[2, 2, 2, 2]"),
            module(3, 2, (8, 11), 3, ", strides=[2, 2]"),
            module(19, 1, (7, 7), 3, ", padding=[1, 1, 1, 1]"),
        ];
        // The weights are parameters, so the build keeps these NCHW
        // (`ConvertLayout::for_host` converts constant weights only).
        for (text, shapes) in &cases {
            for bits in [128, 256, 512] {
                let module = scheduled(text, bits);
                assert!(!module.contains("B_pack"), "{module}");
                assert!(
                    module.contains("rx in T.unroll("),
                    "taps not unrolled: {module}"
                );
                assert!(module.contains("T.parallel"), "{module}");
                assert!(
                    !module.contains("T_conv2d_nchw = T.alloc_buffer"),
                    "the epilogue is not fused: {module}"
                );
                let host = Target::host().with_vector_bits(bits);
                compare(text, shapes, 1e-5, 1 << 20, &host);
                let loops = Target::tir_interpreter().with_vector_bits(bits);
                compare(text, &shapes[..1], 1e-5, 0, &loops);
            }
        }
    }

    /// An NHWC depthwise convolution (channels in the vector lanes, its
    /// taps guarded at the padding) has its full tiles written twice
    /// (`interior.rs`): `if` the tile's rows and columns lie inside the
    /// padding, the update with neither guards nor clamps, else as
    /// written. Strides 1 and 2, a 5 × 5 window, channels that are no
    /// multiple of the vector, a symbolic batch: the compiled code agrees
    /// with the reference kernels, and the scheduled loops with the
    /// unscheduled ones on the loop-level interpreter. A tile that cannot
    /// lie inside (the first of each row, at stride 2) has no `if`. The
    /// pixels run in three runs, the border before the interior, the
    /// interior tiled from its first pixel, the border after: 14 pixels
    /// of a 3 × 3 window are 1, 3 · 4 and 1, the border runs one-pixel
    /// tiles of 144 channels (more than `ROW_ACCUMULATOR`, which each
    /// accumulated in the output where they were rows of their own).
    #[test]
    fn nhwc_depthwise_tiles_are_versioned_on_the_interior() {
        let module = |c: i64, (h, w): (i64, i64), k: i64, stride: i64, pad: i64| {
            let out = |x: i64| (x + 2 * pad - k) / stride + 1;
            let (oh, ow) = (out(h), out(w));
            let text = format!(
                r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", {h}, {w}, {c}), dtype="float32"), f: R.Tensor(({k}, {k}, 1, {c}), dtype="float32"), b: R.Tensor((1, 1, 1, {c}), dtype="float32")) -> R.Tensor(("n", {oh}, {ow}, {c}), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            lv: R.Tensor((n, {oh}, {ow}, {c}), dtype="float32") = R.nn.conv2d(x, f, strides=[{stride}, {stride}], padding=[{pad}, {pad}, {pad}, {pad}], groups={c}, data_layout="NHWC", kernel_layout="HWIO", out_layout="NHWC")
            y: R.Tensor((n, {oh}, {ow}, {c}), dtype="float32") = R.add(lv, b)
            R.output(y)
        return y
"#
            );
            let shapes = |n: i64| vec![vec![n, h, w, c], vec![k, k, 1, c], vec![1, 1, 1, c]];
            (text, vec![shapes(1), shapes(2)])
        };
        let cases = [
            module(48, (14, 13), 3, 1, 1),
            module(20, (15, 32), 3, 2, 1),
            module(32, (12, 12), 5, 1, 2),
            module(144, (10, 14), 3, 1, 1),
        ];
        for (text, shapes) in &cases {
            for bits in [256, 512] {
                let module = scheduled(text, bits);
                // The interior's update reads the image with no clamp.
                let at = module.find("if ax1 >= ").expect("an interior test");
                let then = module[at..].split("else:").next().unwrap();
                let update = then
                    .lines()
                    .find(|l| l.trim_start().starts_with("acc") && l.contains("] = acc"))
                    .unwrap();
                assert!(
                    !update.contains("T.Select") && !update.contains("T.max("),
                    "{update}"
                );
                if shapes[0][0][3] == 144 {
                    // The border runs: one-pixel tiles of 16 channels.
                    assert!(module.contains("T.alloc_buffer((1, 16))"), "{module}");
                    assert!(!module.contains("T.alloc_buffer((2, 16))"), "{module}");
                }
                let host = Target::host().with_vector_bits(bits);
                compare(text, shapes, 1e-5, 0, &host);
                let loops = Target::tir_interpreter().with_vector_bits(bits);
                compare(text, &shapes[..1], 1e-5, 0, &loops);
            }
        }
    }

    /// An image's stem with NCHW data and NHWC output (HWIO weights), its
    /// reduction 27 taps long, runs in place (case 2, not an implicit
    /// GEMM): tiles of 4 output pixels by 32 filters (64 where they divide
    /// the filters) on a 512-bit target, by 16 on a 256-bit one, each
    /// image element a broadcast, the padded ones one scalar branch. Strides 1 and 2, 32,
    /// 24 and 64 filters, a symbolic batch: the compiled code and the
    /// scheduled loops agree with the reference kernels.
    #[test]
    fn a_stem_with_few_taps_is_a_direct_convolution() {
        let module = |co: i64, stride: i64| {
            let o = (20 + 2 - 3) / stride + 1;
            let text = format!(
                r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 3, 20, 20), dtype="float32"), f: R.Tensor((3, 3, 3, {co}), dtype="float32")) -> R.Tensor(("n", {o}, {o}, {co}), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            y: R.Tensor((n, {o}, {o}, {co}), dtype="float32") = R.nn.conv2d(x, f, strides=[{stride}, {stride}], padding=[1, 1, 1, 1], data_layout="NCHW", kernel_layout="HWIO", out_layout="NHWC")
            R.output(y)
        return y
"#
            );
            let shapes = |n: i64| vec![vec![n, 3, 20, 20], vec![3, 3, 3, co]];
            (text, vec![shapes(1), shapes(2)], co)
        };
        for (text, shapes, co) in [module(32, 2), module(24, 1), module(64, 2)] {
            let module = scheduled(&text, 512);
            assert!(!module.contains("_pack"), "{module}");
            // Four vectors of channels where they divide them (512 bits).
            let tile = match co {
                32 => Some("T.alloc_buffer((4, 32))"),
                64 => Some("T.alloc_buffer((4, 64))"),
                _ => None,
            };
            if let Some(tile) = tile {
                assert!(module.contains(tile), "{module}");
            }
            if co == 64 {
                let narrow = scheduled(&text, 256);
                assert!(narrow.contains("T.alloc_buffer((4, 16))"), "{narrow}");
                compare(
                    &text,
                    &shapes,
                    1e-5,
                    0,
                    &Target::host().with_vector_bits(256),
                );
            }
            let host = Target::host().with_vector_bits(512);
            compare(&text, &shapes, 1e-5, 0, &host);
            let loops = Target::tir_interpreter().with_vector_bits(512);
            compare(&text, &shapes[..1], 1e-5, 0, &loops);
        }
    }

    /// A pointwise convolution of one 7 × 7 NCHW image whose filters are
    /// too large to read in place by every column panel (a packed product
    /// of 49 columns) on a 256-bit target: three column tiles of 16 and,
    /// for the one column left, a tile half as wide (8), not a fourth
    /// tile of 16 that is mostly padding; a 5 × 5 image's 25 columns leave
    /// 9, a tile of 16 as before. The compiled code agrees with the
    /// reference kernels.
    #[test]
    fn a_last_column_tile_mostly_padding_is_half_as_wide() {
        for (hw, narrow) in [(7, true), (5, false)] {
            let text = format!(
                r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 288, {hw}, {hw}), dtype="float32"), w: R.Tensor((1024, 288, 1, 1), dtype="float32")) -> R.Tensor((1, 1024, {hw}, {hw}), dtype="float32"):
        with R.dataflow():
            y: R.Tensor((1, 1024, {hw}, {hw}), dtype="float32") = R.nn.conv2d(x, w)
            z: R.Tensor((1, 1024, {hw}, {hw}), dtype="float32") = R.nn.relu(y)
            R.output(z)
        return z
"#
            );
            let module = scheduled(&text, 256);
            assert!(module.contains("B_pack"), "{module}");
            assert_eq!(
                module.contains("T.alloc_buffer((6, 8))"),
                narrow,
                "{module}"
            );
            let shapes = vec![vec![vec![1, 288, hw, hw], vec![1024, 288, 1, 1]]];
            let target = Target::host().with_vector_bits(256);
            compare(&text, &shapes, 1e-5, 0, &target);
        }
    }

    /// An int8 `R.matmul` (`out_dtype="int32"`) of operands of dtypes `ta`
    /// and `tb` with shapes `sa`, `sb`, returning its output `out`
    /// (`out_shape`) after `epilogue` (bindings reading `mm`).
    fn int8_module(
        ta: &str,
        tb: &str,
        sa: &str,
        sb: &str,
        so: &str,
        epilogue: &str,
        (out, out_dtype): (&str, &str),
    ) -> String {
        format!(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor({sa}, dtype="{ta}"), b: R.Tensor({sb}, dtype="{tb}"), s: R.Tensor(({last},), dtype="float32")) -> R.Tensor({so}, dtype="{out_dtype}"):
        with R.dataflow():
            mm: R.Tensor({so}, dtype="int32") = R.matmul(a, b, out_dtype="int32")
{epilogue}            R.output({out})
        return {out}
"#,
            last = so
                .trim_matches(|c| c == '(' || c == ')')
                .rsplit(',')
                .next()
                .unwrap()
                .trim(),
        )
    }

    /// Bytes of `dtype` with every extreme (0, 127, -128 or 128, 255 / -1)
    /// first, then pseudo-random ones.
    fn bytes(dtype: &str, shape: &[i64], seed: u64) -> Value {
        let n: i64 = shape.iter().product();
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let raw: Vec<u8> = (0..n as usize)
            .map(
                |k| match [0u8, 127, 128, 255, 1, 254].get((k + seed as usize) % 11) {
                    Some(&v) => v,
                    None => {
                        s ^= s << 13;
                        s ^= s >> 7;
                        s ^= s << 17;
                        (s >> 24) as u8
                    }
                },
            )
            .collect();
        let t = match dtype {
            "uint8" => Tensor::from_vec(shape, raw).unwrap(),
            _ => Tensor::from_vec(shape, raw.into_iter().map(|v| v as i8).collect::<Vec<i8>>())
                .unwrap(),
        };
        t.into()
    }

    /// The most multiply-adds of an int8 product run on the loop-level
    /// interpreter.
    const INT8_INTERPRETED: i64 = 600_000;

    /// The results of `text` on the reference kernels, the unscheduled
    /// functions (loop-level interpreter) and the scheduled ones (the
    /// interpreter, which checks every access, and LLVM), all for 512-bit
    /// vectors: equal. The interpreter runs products of up to
    /// [`INT8_INTERPRETED`] multiply-adds.
    fn int8_agree(text: &str, args: &[Value], tol: f32) {
        // The loop-level interpreter is slow: products of up to
        // INT8_INTERPRETED multiply-adds.
        let size = |v: &Value| v.as_tensor().unwrap().shape().iter().product::<i64>();
        let (a, b) = (size(&args[0]), size(&args[1]));
        let k = args[1].as_tensor().unwrap().shape()[0];
        int8_compare(text, args, tol, a * b / k <= INT8_INTERPRETED)
    }

    /// [`int8_agree`], on the loop-level interpreter when `interpret`.
    fn int8_compare(text: &str, args: &[Value], tol: f32, interpret: bool) {
        let m: IRModule = text.parse().unwrap();
        let mut targets = vec![
            ("reference kernels", Target::interpreter()),
            ("scheduled, LLVM", Target::host().with_vector_bits(512)),
        ];
        if interpret {
            targets.push(("unscheduled", Target::tir_interpreter()));
            targets.push((
                "scheduled, interpreted",
                Target::tir_interpreter().with_vector_bits(512),
            ));
        }
        let mut results = Vec::new();
        for (name, target) in targets {
            let exec = build(&m, &target).unwrap();
            let out = VirtualMachine::new(&exec).call("main", args).unwrap();
            let t = out.as_tensor().unwrap().clone();
            let v: Vec<f64> = match t.dtype().code() {
                relax_runtime::TypeCode::Float => t
                    .to_vec::<f32>()
                    .unwrap()
                    .into_iter()
                    .map(f64::from)
                    .collect(),
                _ if t.dtype().bits() == 8 => t
                    .to_vec::<i8>()
                    .unwrap()
                    .into_iter()
                    .map(f64::from)
                    .collect(),
                _ => t
                    .to_vec::<i32>()
                    .unwrap()
                    .into_iter()
                    .map(f64::from)
                    .collect(),
            };
            results.push((name, v));
        }
        let (_, want) = &results[0];
        let scale = want.iter().fold(1f64, |m, v| m.max(v.abs()));
        for (name, got) in &results[1..] {
            assert_eq!(got.len(), want.len());
            for (k, (g, w)) in got.iter().zip(want).enumerate() {
                assert!(
                    (g - w).abs() <= f64::from(tol) * scale,
                    "{name}, element {k}: {g} vs {w}"
                );
            }
        }
    }

    /// Case 8, the int8 GEMM on `T.dpbusd`: every sign combination, at
    /// odd sizes (tile tails of rows, columns and words of `k`), with two
    /// slices of `k`, two B panels, the parallel row chunks and a batch,
    /// against the reference kernels and the unscheduled function; the
    /// packed loops run on the interpreter too (bounds-checked), except
    /// the parallel product (too slow there).
    #[test]
    fn int8_gemm() {
        let sizes: &[(i64, i64, i64)] = &[
            (1, 1, 1),
            (7, 33, 67),
            (33, 67, 7),
            (130, 7, 33),
            (67, 130, 130),
            (7, 2051, 33),
            (3, 5, 1030),
        ];
        let combos = [
            ("uint8", "int8"),
            ("int8", "int8"),
            ("uint8", "uint8"),
            ("int8", "uint8"),
        ];
        for (c, (ta, tb)) in combos.into_iter().enumerate() {
            // The large sizes (the parallel chunks, two slices of `k`, two
            // panels) for the combinations without and with both
            // corrections: the interpreter is slow.
            let sizes = if c % 3 == 0 { sizes } else { &sizes[..4] };
            for &(m, k, n) in sizes {
                let text = int8_module(
                    ta,
                    tb,
                    &format!("({m}, {k})"),
                    &format!("({k}, {n})"),
                    &format!("({m}, {n})"),
                    "",
                    ("mm", "int32"),
                );
                if (m, k, n) == (7, 33, 67) {
                    let text = scheduled(&text, 512);
                    assert!(text.contains("T.dpbusd"), "{text}");
                }
                let args = [
                    bytes(ta, &[m, k], 1),
                    bytes(tb, &[k, n], 2),
                    random(&[n], 3),
                ];
                int8_agree(&text, &args, 0.0);
            }
        }
        // Symbolic shapes: the serial and the parallel side of the
        // run-time choice, `k` off a word.
        let symbolic = r#"
@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor(("m", "k"), dtype="int8"), b: R.Tensor(("k", "n"), dtype="uint8"), s: R.Tensor(("n",), dtype="float32")) -> R.Tensor(("m", "n"), dtype="int32"):
        m = T.int64()
        k = T.int64()
        n = T.int64()
        with R.dataflow():
            mm: R.Tensor((m, n), dtype="int32") = R.matmul(a, b, out_dtype="int32")
            R.output(mm)
        return mm
"#;
        assert!(scheduled(symbolic, 512).contains("T.dpbusd"));
        for (m, k, n) in [(5, 37, 9), (70, 131, 121)] {
            let args = [
                bytes("int8", &[m, k], 13),
                bytes("uint8", &[k, n], 14),
                random(&[n], 15),
            ];
            int8_agree(symbolic, &args, 0.0);
        }
        // A batch, the weight broadcast over it.
        let text = int8_module(
            "int8",
            "uint8",
            "(3, 13, 37)",
            "(37, 45)",
            "(3, 13, 45)",
            "",
            ("mm", "int32"),
        );
        let args = [
            bytes("int8", &[3, 13, 37], 4),
            bytes("uint8", &[37, 45], 5),
            random(&[45], 6),
        ];
        int8_agree(&text, &args, 0.0);
    }

    /// The int8 GEMM's fused epilogues: dequantization (a cast to float
    /// and a scale per column) with a bias, and a requantization to int8.
    #[test]
    fn int8_gemm_epilogues() {
        let dequantize =
            "            f = R.astype(mm, dtype=\"float32\")\n            y = R.multiply(f, s)\n";
        for (m, k, n) in [(7, 33, 67), (67, 130, 130)] {
            let text = int8_module(
                "uint8",
                "int8",
                &format!("({m}, {k})"),
                &format!("({k}, {n})"),
                &format!("({m}, {n})"),
                dequantize,
                ("y", "float32"),
            );
            let fused = scheduled(&text, 512);
            assert!(fused.contains("T.dpbusd"), "{fused}");
            // The int32 product is never stored: the epilogue runs on the
            // accumulators.
            assert!(
                !fused.contains("T.alloc_buffer(({m}, {n}), \"int32\")"),
                "{fused}"
            );
            let args = [
                bytes("uint8", &[m, k], 7),
                bytes("int8", &[k, n], 8),
                random(&[n], 9),
            ];
            int8_agree(&text, &args, 1e-6);
            let requantize = "            f = R.astype(mm, dtype=\"float32\")\n            g = R.multiply(f, R.const(0.001, \"float32\"))\n            g1 = R.maximum(g, R.const(-128.0, \"float32\"))\n            h = R.minimum(g1, R.const(127.0, \"float32\"))\n            y = R.astype(h, dtype=\"int8\")\n";
            let text = int8_module(
                "int8",
                "int8",
                &format!("({m}, {k})"),
                &format!("({k}, {n})"),
                &format!("({m}, {n})"),
                requantize,
                ("y", "int8"),
            );
            let args = [
                bytes("int8", &[m, k], 10),
                bytes("int8", &[k, n], 11),
                random(&[n], 12),
            ];
            int8_agree(&text, &args, 0.0);
        }
    }

    /// An int8 `R.nn.conv2d` (`out_dtype="int32"`) of `x` (`tx`, shape
    /// `sx`) and `w` (`tw`, `sw`) with `attrs`, output `so`, returning
    /// `out` after `epilogue` (bindings reading `c`; `s` is a float scale
    /// per output channel, `(1, O, 1, 1)`).
    #[allow(clippy::too_many_arguments)]
    fn int8_conv_module(
        (tx, sx): (&str, &str),
        (tw, sw): (&str, &str),
        attrs: &str,
        so: &str,
        channels: i64,
        epilogue: &str,
        (out, out_dtype): (&str, &str),
        symbolic: &str,
    ) -> String {
        format!(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor({sx}, dtype="{tx}"), w: R.Tensor({sw}, dtype="{tw}"), s: R.Tensor((1, {channels}, 1, 1), dtype="float32")) -> R.Tensor({so}, dtype="{out_dtype}"):
{symbolic}        with R.dataflow():
            c: R.Tensor({so}, dtype="int32") = R.nn.conv2d(x, w{attrs}, out_dtype="int32")
{epilogue}            R.output({out})
        return {out}
"#
        )
    }

    /// Case 10, the int8 convolution on `T.dpbusd`: exactly the reference
    /// kernels' and the unscheduled function's results, and the scheduled
    /// loops run on the bounds-checking interpreter too, at odd sizes: odd
    /// channels, 1 × 1, 3 × 3 and 7 × 7 windows, strides 1 and 2,
    /// padding, every sign combination, two slices of `k`, narrow rows
    /// fused, the parallel and the serial side, a symbolic batch.
    #[test]
    fn int8_conv2d() {
        // (x, w, attrs, out, interpreted)
        type Case = ([i64; 4], [i64; 4], &'static str, [i64; 4], bool);
        let cases: &[Case] = &[
            (
                [1, 5, 9, 11],
                [7, 5, 3, 3],
                ", padding=[1, 1, 1, 1]",
                [1, 7, 9, 11],
                true,
            ),
            ([2, 13, 6, 5], [9, 13, 1, 1], "", [2, 9, 6, 5], true),
            (
                [1, 3, 17, 19],
                [5, 3, 7, 7],
                ", strides=[2, 2], padding=[3, 3, 3, 3]",
                [1, 5, 9, 10],
                true,
            ),
            (
                [1, 7, 10, 9],
                [11, 7, 3, 3],
                ", strides=[2, 2], padding=[1, 1, 1, 1]",
                [1, 11, 5, 5],
                true,
            ),
            // Narrow rows fused into one axis with the filters in chunks.
            (
                [1, 9, 5, 5],
                [97, 9, 3, 3],
                ", padding=[1, 1, 1, 1]",
                [1, 97, 5, 5],
                true,
            ),
            // Two slices of `k` (2070 > I8_KC), filters packed once.
            (
                [1, 230, 4, 3],
                [5, 230, 3, 3],
                ", padding=[1, 1, 1, 1]",
                [1, 5, 4, 3],
                true,
            ),
            // Large enough for the thread pool.
            (
                [1, 19, 20, 21],
                [33, 19, 3, 3],
                ", padding=[1, 1, 1, 1]",
                [1, 33, 20, 21],
                false,
            ),
            (
                [1, 67, 7, 7],
                [129, 67, 3, 3],
                ", padding=[1, 1, 1, 1]",
                [1, 129, 7, 7],
                false,
            ),
        ];
        let combos = [
            ("uint8", "int8"),
            ("int8", "int8"),
            ("uint8", "uint8"),
            ("int8", "uint8"),
        ];
        let shape = |s: &[i64]| {
            format!(
                "({})",
                s.iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        for (c, (tx, tw)) in combos.into_iter().enumerate() {
            for (n, &(sx, sw, attrs, so, interpret)) in cases.iter().enumerate() {
                // The slow cases for the combinations without and with a
                // correction only.
                if c >= 2 && n >= 4 {
                    continue;
                }
                let text = int8_conv_module(
                    (tx, &shape(&sx)),
                    (tw, &shape(&sw)),
                    attrs,
                    &shape(&so),
                    so[1],
                    "",
                    ("c", "int32"),
                    "",
                );
                let printed = scheduled(&text, 512);
                assert!(printed.contains("T.dpbusd"), "{printed}");
                let args = [
                    bytes(tx, &sx, 1 + n as u64),
                    bytes(tw, &sw, 2 + n as u64),
                    random(&[1, so[1], 1, 1], 3),
                ];
                int8_compare(&text, &args, 0.0, interpret);
            }
        }
        // The filters are packed once for all output rows; narrow rows
        // with many filters are one product.
        let text = int8_conv_module(
            ("uint8", "(1, 5, 9, 11)"),
            ("int8", "(7, 5, 3, 3)"),
            ", padding=[1, 1, 1, 1]",
            "(1, 7, 9, 11)",
            7,
            "",
            ("c", "int32"),
            "",
        );
        assert!(scheduled(&text, 512).contains("A_packed"));
        // A symbolic batch (and image size): both sides of the run-time
        // choice of the thread pool.
        let text = int8_conv_module(
            ("uint8", "(n, 5, h, 9)"),
            ("int8", "(7, 5, 3, 3)"),
            ", padding=[1, 1, 1, 1]",
            "(n, 7, h, 9)",
            7,
            "",
            ("c", "int32"),
            "        n = T.int64()\n        h = T.int64()\n",
        );
        assert!(scheduled(&text, 512).contains("T.dpbusd"));
        for (n, h) in [(1, 5), (3, 7), (4, 100)] {
            let args = [
                bytes("uint8", &[n, 5, h, 9], 7),
                bytes("int8", &[7, 5, 3, 3], 8),
                random(&[1, 7, 1, 1], 9),
            ];
            int8_compare(&text, &args, 0.0, n * h < 30);
        }
    }

    /// The int8 convolution's fused epilogues: dequantization (a cast to
    /// float, a scale per channel) with a ReLU, and a requantization.
    #[test]
    fn int8_conv2d_epilogues() {
        let dequantize = "            f = R.astype(c, dtype=\"float32\")\n            g = R.multiply(f, s)\n            y = R.nn.relu(g)\n";
        let requantize = "            f = R.astype(c, dtype=\"float32\")\n            g = R.multiply(f, R.const(0.002, \"float32\"))\n            g1 = R.maximum(g, R.const(-128.0, \"float32\"))\n            h = R.minimum(g1, R.const(127.0, \"float32\"))\n            y = R.astype(h, dtype=\"int8\")\n";
        for (epilogue, out) in [(dequantize, "float32"), (requantize, "int8")] {
            for (sx, sw, so) in [
                ("(1, 5, 9, 11)", "(7, 5, 3, 3)", "(1, 7, 9, 11)"),
                ("(1, 9, 5, 5)", "(97, 9, 3, 3)", "(1, 97, 5, 5)"),
            ] {
                let o: i64 = sw[1..].split(',').next().unwrap().parse().unwrap();
                let text = int8_conv_module(
                    ("int8", sx),
                    ("int8", sw),
                    ", padding=[1, 1, 1, 1]",
                    so,
                    o,
                    epilogue,
                    ("y", out),
                    "",
                );
                let fused = scheduled(&text, 512);
                assert!(fused.contains("T.dpbusd"), "{fused}");
                let dims = |s: &str| -> Vec<i64> {
                    s.trim_matches(|c| c == '(' || c == ')')
                        .split(", ")
                        .map(|d| d.parse().unwrap())
                        .collect()
                };
                let args = [
                    bytes("int8", &dims(sx), 5),
                    bytes("int8", &dims(sw), 6),
                    random(&[1, o, 1, 1], 7),
                ];
                int8_compare(&text, &args, 1e-6, true);
            }
        }
    }

    /// The int8 GEMM's inner step is `vpdpbusd` where the CPU has
    /// AVX512-VNNI.
    #[test]
    fn int8_gemm_is_vpdpbusd_where_the_cpu_has_vnni() {
        let text = int8_module(
            "uint8",
            "int8",
            "(67, 130)",
            "(130, 33)",
            "(67, 33)",
            "",
            ("mm", "int32"),
        );
        let target = Target::host().with_vector_bits(512);
        let m: IRModule = text.parse().unwrap();
        let lowered = crate::transform::Pass::run(&crate::backend::pipeline(&target), m).unwrap();
        let funcs: Vec<(String, crate::tir::PrimFunc)> = lowered
            .functions()
            .filter_map(|(gv, f)| match f {
                crate::ir::BaseFunc::Prim(pf) => Some((gv.name_hint().to_string(), pf.clone())),
                _ => None,
            })
            .collect();
        let native = crate::codegen::llvm::CodegenOptions {
            native_cpu: true,
            cpu: None,
        };
        let ir = crate::codegen::llvm::emit_llvm_ir(&funcs, &native, false).unwrap();
        #[cfg(target_arch = "x86_64")]
        let vnni = std::is_x86_feature_detected!("avx512vnni");
        #[cfg(not(target_arch = "x86_64"))]
        let vnni = false;
        assert_eq!(ir.contains("llvm.x86.avx512.vpdpbusd.512"), vnni);
    }

    /// A matmul of group-quantized weights, dequantized inside its kernel
    /// (int8 values, or Q4_0's packed nibbles less 8, times a scale per
    /// group of 32 along `k`): one fused PrimFunc whose dot products step
    /// through whole groups (a `k_g` loop around the vector loop, whose
    /// bytes are vector loads and whose scale is invariant), agreeing with the unscheduled
    /// function on the loop-level interpreter and with the reference
    /// kernels, at 37 output columns (a tail of rows and of columns) and 1
    /// or 6 rows (a block of DOT_ROWS and a tail of 2). The rows left over
    /// prefetch the next block of weight rows ([`dot`]'s `prefetch_rows`).
    #[test]
    fn a_dequantized_matmul_is_a_grouped_dot_product() {
        let q4 = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 96), dtype="float32"), wp: R.Tensor((37, 3, 1, 16), dtype="uint8"), shift: R.Tensor((1, 1, 2, 1), dtype="uint8"), s: R.Tensor((37, 3, 1, 1), dtype="float32")) -> R.Tensor(("n", 37), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            h = R.right_shift(wp, shift)
            q = R.bitwise_and(h, R.const(15, "uint8"))
            c = R.astype(q, "float32")
            z = R.subtract(c, R.const(8.0, "float32"))
            w = R.multiply(z, s)
            w2 = R.reshape(w, R.shape([37, 96]))
            wt = R.permute_dims(w2)
            y = R.matmul(x, wt)
            R.output(y)
        return y
"#;
        let q8 = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 96), dtype="float32"), wq: R.Tensor((37, 3, 32), dtype="int8"), s: R.Tensor((37, 3, 1), dtype="float32")) -> R.Tensor(("n", 37), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            c = R.astype(wq, "float32")
            w = R.multiply(c, s)
            w2 = R.reshape(w, R.shape([37, 96]))
            wt = R.permute_dims(w2)
            y = R.matmul(x, wt)
            R.output(y)
        return y
"#;
        let bytes = |n: usize, seed: u64| -> Vec<u8> {
            let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            (0..n)
                .map(|_| {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    (s >> 24) as u8
                })
                .collect()
        };
        for (text, quantized) in [(q4, true), (q8, false)] {
            let module = scheduled(text, 512);
            // One kernel: the dequantize is inside the matmul's PrimFunc.
            assert_eq!(module.matches("@T.prim_func").count(), 1, "{module}");
            // No float copy of the weights; the `k` loop steps through
            // groups (`k_g`) around the vector loop.
            assert!(!module.contains("alloc_buffer((37, 96)"), "{module}");
            assert!(
                module.contains("k_g") && module.contains("T.vectorized(16)"),
                "{module}"
            );
            // The matrix-vector product's blocks of weight rows prefetch
            // the next block's lines, values and scales (in the parallel
            // and in the serial version, chosen at run time).
            assert_eq!(
                module.matches("T.prefetch(T.address_of(").count(),
                4,
                "{module}"
            );
            let m: IRModule = text.parse().unwrap();
            let host = build(&m, &Target::host()).unwrap();
            let tir = build(&m, &Target::tir_interpreter()).unwrap();
            let oracle = build(&m, &Target::interpreter()).unwrap();
            for n in [1, 6] {
                let x = random(&[n, 96], n as u64);
                let mut args = vec![x];
                if quantized {
                    args.push(
                        Tensor::from_vec(&[37, 3, 1, 16], bytes(37 * 48, 7))
                            .unwrap()
                            .into(),
                    );
                    args.push(
                        Tensor::from_vec(&[1, 1, 2, 1], vec![0u8, 4])
                            .unwrap()
                            .into(),
                    );
                    args.push(random(&[37, 3, 1, 1], 9));
                } else {
                    let w: Vec<i8> = bytes(37 * 96, 8).into_iter().map(|b| b as i8).collect();
                    args.push(Tensor::from_vec(&[37, 3, 32], w).unwrap().into());
                    args.push(random(&[37, 3, 1], 9));
                }
                let want = run(&oracle, &args);
                let scale = want.iter().fold(1f32, |m, v| m.max(v.abs()));
                for (name, got) in [("host", run(&host, &args)), ("tir", run(&tir, &args))] {
                    assert_eq!(got.len(), want.len());
                    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                        assert!(
                            (g - w).abs() <= 1e-5 * scale,
                            "{name}, n = {n}, element {k}: {g} vs {w}"
                        );
                    }
                }
            }
        }
    }

    /// `text` gets the packed schedule and agrees with the reference
    /// kernels on `cases`, for each vector width.
    fn packed(text: &str, cases: &[Vec<Vec<i64>>]) {
        for bits in [128, 256, 512] {
            let module = scheduled(text, bits);
            assert!(module.contains("B_pack"), "{module}");
            let target = Target::host().with_vector_bits(bits);
            compare(text, cases, 1e-5, 0, &target);
        }
    }

    /// A batched matmul over a symbolic batch (the Winograd product of a
    /// model exported with a symbolic batch): its parallel loop runs over
    /// the batch and the axis after it fused, so a batch of 1 still shares
    /// its products out; the same at a constant batch of 1. The results
    /// agree at batches 1 to 3, on both sides of the run-time guard, at
    /// sizes that are not multiples of the tiles.
    #[test]
    fn a_batch_of_one_shares_the_next_axis_between_threads() {
        let text = |batch: &str| {
            format!(
                r#"
@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor((9, 37, 117), dtype="float32"), x: R.Tensor(({batch}, 9, 117, 49), dtype="float32")) -> R.Tensor(({batch}, 9, 37, 49), dtype="float32"):
        with R.dataflow():
            y: R.Tensor(({batch}, 9, 37, 49), dtype="float32") = R.matmul(a, x, out_dtype="void")
            R.output(y)
        return y
"#
            )
        };
        for (batch, sizes) in [("\"n\"", vec![1, 2, 3]), ("1", vec![1])] {
            let text = text(batch);
            let s = scheduled(&text, 512);
            assert!(s.contains("_fused in T.parallel("), "{s}");
            assert!(!s.contains("in T.parallel(n):"), "{s}");
            assert!(!s.contains("in T.parallel(1):"), "{s}");
            let cases: Vec<_> = sizes
                .into_iter()
                .map(|n| vec![vec![9, 37, 117], vec![n, 9, 117, 49]])
                .collect();
            agree(&text, &cases, 1e-5);
        }
        // Too little work for threads: no parallel loop at all.
        let small = text("\"n\"").replace("117", "5");
        let cases = [vec![vec![9, 37, 5], vec![2, 9, 5, 49]]];
        agree(&small, &cases, 1e-5);
    }

    /// A matrix-vector product reads each weight once, so its work is
    /// counted as an elementwise nest's (`Nest::work`): one token's
    /// 768 × 768 projection (0.6M multiply-adds, a decoder's `x · wᵀ`)
    /// runs on the thread pool; with a symbolic count of tokens, at run
    /// time when it is one (`n <= 1`, or enough multiply-adds); 8 rows of
    /// 128 outputs reuse each weight 8 times and stay on one thread below
    /// the threshold; 4-bit weights two to a byte are streamed too. Each
    /// float32 case agrees with the reference kernels.
    #[test]
    fn a_matrix_vector_product_streams_its_weights_on_every_thread() {
        let text = |rows: &str, outs: i64| {
            format!(
                r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(({rows}, 768), dtype="float32"), w: R.Tensor(({outs}, 768), dtype="float32")) -> R.Tensor(({rows}, {outs}), dtype="float32"):
        with R.dataflow():
            t = R.permute_dims(w)
            y = R.matmul(x, t)
            R.output(y)
        return y
"#
            )
        };
        let one = scheduled(&text("1", 768), 512);
        assert!(one.contains("T.parallel("), "{one}");
        let symbolic = scheduled(&text("\"n\"", 768), 512);
        assert!(symbolic.contains("n <= 1"), "{symbolic}");
        let batch = scheduled(&text("8", 128), 512);
        assert!(!batch.contains("T.parallel("), "{batch}");
        // 4-bit weights two to a byte: each byte is read twice, still
        // streamed (the Llama example's Q4_0 projections).
        let nibbles = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 768), dtype="float32"), wp: R.Tensor((768, 24, 1, 16), dtype="uint8"), shift: R.Tensor((1, 1, 2, 1), dtype="uint8"), s: R.Tensor((768, 24, 1, 1), dtype="float32")) -> R.Tensor((1, 768), dtype="float32"):
        with R.dataflow():
            h = R.right_shift(wp, shift)
            q = R.bitwise_and(h, R.const(15, "uint8"))
            c = R.astype(q, "float32")
            z = R.subtract(c, R.const(8.0, "float32"))
            w = R.multiply(z, s)
            v = R.reshape(w, R.shape([768, 768]))
            t = R.permute_dims(v)
            y = R.matmul(x, t)
            R.output(y)
        return y
"#;
        let nibbles = scheduled(nibbles, 512);
        assert!(nibbles.contains("T.parallel("), "{nibbles}");
        for (rows, n, outs) in [
            ("1", 1, 768),
            ("\"n\"", 1, 768),
            ("\"n\"", 3, 768),
            ("8", 8, 128),
        ] {
            agree(
                &text(rows, outs),
                &[vec![vec![n, 768], vec![outs, 768]]],
                1e-4,
            );
        }
    }

    /// A product whose left factor is larger than
    /// [`reduction::STREAMED_MIN_BYTES`] (a Winograd convolution's
    /// filters, 16 × 203 × 256 here) and only 16 columns wide (case 2's
    /// register tiles): each tile's loop over `k` goes a cache line at a
    /// time, prefetching the next tile's rows (clamped to the last row);
    /// the results agree at batches 1 and 2, with a tail of rows. Its
    /// tiles are four rows tall, where a small left factor's are eight
    /// (fewer rows of `A` streaming at once: ResNet's 7 × 7 Winograd
    /// products 0.94–1.07 → 0.87–0.92 ms). A small left factor is not
    /// prefetched.
    #[test]
    fn a_large_left_factor_prefetches_the_next_tile_of_rows() {
        let text = |rows: i64| {
            format!(
                r#"
@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor((16, {rows}, 256), dtype="float32"), x: R.Tensor(("n", 16, 256, 16), dtype="float32")) -> R.Tensor(("n", 16, {rows}, 16), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            y: R.Tensor((n, 16, {rows}, 16), dtype="float32") = R.matmul(a, x, out_dtype="void")
            R.output(y)
        return y
"#
            )
        };
        let large = text(203);
        let s = scheduled(&large, 512);
        assert!(
            s.contains("T.prefetch(T.address_of(a[") && s.contains("T.min("),
            "{s}"
        );
        assert!(s.contains("acc = T.alloc_buffer((4, 16))"), "{s}");
        let cases: Vec<_> = [1, 2]
            .into_iter()
            .map(|n| vec![vec![16, 203, 256], vec![n, 16, 256, 16]])
            .collect();
        agree(&large, &cases, 1e-5);
        let small = scheduled(&text(37), 512);
        assert!(!small.contains("T.prefetch"), "{small}");
        assert!(small.contains("acc = T.alloc_buffer((8, 16))"), "{small}");
    }

    /// Many products, each large enough to pack for (the Winograd
    /// product of a convolution, 12 products of 64 × 96 × 200 per image):
    /// the batch axes run in parallel, one whole product per iteration,
    /// where each product's row chunks forked the threads twice; the row
    /// chunks inside are serial. The results agree at batches 1 and 2.
    #[test]
    fn many_products_run_their_batch_in_parallel() {
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor((12, 64, 96), dtype="float32"), x: R.Tensor(("n", 12, 96, 200), dtype="float32")) -> R.Tensor(("n", 12, 64, 200), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            y: R.Tensor((n, 12, 64, 200), dtype="float32") = R.matmul(a, x, out_dtype="void")
            R.output(y)
        return y
"#;
        for bits in [256, 512] {
            let s = scheduled(text, bits);
            assert!(s.contains("for b in T.parallel(n * 12):"), "{s}");
            assert!(
                s.contains("B_pack") && s.contains("for ic_o in range("),
                "{s}"
            );
            assert_eq!(s.matches("T.parallel(").count(), 1, "{s}");
        }
        let cases: Vec<_> = [1, 2]
            .into_iter()
            .map(|n| vec![vec![12, 64, 96], vec![n, 12, 96, 200]])
            .collect();
        agree(text, &cases, 1e-5);
    }

    /// A maximum over the last axis of `(batch, heads, query, key)` with
    /// a symbolic batch, read by nothing after it (so not a row run): the
    /// dot products run their rows by blocks of heads, and with one batch
    /// axis too short to share out, the threads take (batch, query) pairs,
    /// so a batch of one uses them all. The results agree at batches 1 and
    /// 2 and at a query length that is no multiple of the lanes.
    #[test]
    fn a_row_maximum_over_a_batch_of_one_shares_its_rows_between_threads() {
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("b", 6, "s", "s"), dtype="float32")) -> R.Tensor(("b", 6, "s"), dtype="float32"):
        b = T.int64()
        s = T.int64()
        with R.dataflow():
            y: R.Tensor((b, 6, s), dtype="float32") = R.max(x, axis=[-1])
            R.output(y)
        return y
"#;
        let s = scheduled(text, 512);
        assert!(s.contains("_fused in T.parallel(b * s)"), "{s}");
        assert!(!s.contains("in T.parallel(b):"), "{s}");
        let cases: Vec<_> = [(1, 211), (2, 37), (1, 5)]
            .into_iter()
            .map(|(b, n)| vec![vec![b, 6, n, n]])
            .collect();
        agree(text, &cases, 1e-5);
    }

    /// An attention softmax over `(batch, heads, query, key)` with a
    /// symbolic batch (BERT exported as PyTorch does): its rows are
    /// `(batch, head, query)`, one parallel loop over all of them (so a
    /// batch of one uses every thread) in which each row takes its maximum,
    /// its exponentials (once, into the output) and their sum, and divides.
    /// The results agree at batches 1 and 2 and at a query length that is
    /// no multiple of the lanes.
    #[test]
    fn a_softmax_over_a_batch_of_one_shares_its_rows_between_threads() {
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("b", 6, "s", "s"), dtype="float32")) -> R.Tensor(("b", 6, "s", "s"), dtype="float32"):
        b = T.int64()
        s = T.int64()
        with R.dataflow():
            y: R.Tensor((b, 6, s, s), dtype="float32") = R.nn.softmax(x, axis=-1)
            R.output(y)
        return y
"#;
        let s = scheduled(text, 512);
        assert!(s.contains("_row in T.parallel(b * s * 6)"), "{s}");
        assert_eq!(s.matches("T.parallel(").count(), 1, "{s}");
        // Once in the parallel loop, once in its serial twin (too little
        // work for the threads, a run-time choice).
        assert_eq!(s.matches("T.exp(").count(), 2, "{s}");
        let cases: Vec<_> = [(1, 211), (2, 37), (1, 5)]
            .into_iter()
            .map(|(b, n)| vec![vec![b, 6, n, n]])
            .collect();
        agree(text, &cases, 1e-5);
    }

    /// A reshape and transpose over a symbolic batch and sequence length
    /// (a decoder's heads split off): the reshape's divisions by `s`
    /// simplify as they do with `s` constant, so no index divides by it
    /// inside a row and the loads are vectors; the results agree at odd
    /// lengths, on both sides of the run-time guard.
    #[test]
    fn a_reshape_over_a_symbolic_length_indexes_without_dividing() {
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("b", "s", 64), dtype="float32")) -> R.Tensor(("b", 2, "s", 32), dtype="float32"):
        b = T.int64()
        s = T.int64()
        with R.dataflow():
            y: R.Tensor((b, s, 2, 32), dtype="float32") = R.reshape(x, R.shape([b, s, 2, 32]))
            z: R.Tensor((b, 2, s, 32), dtype="float32") = R.permute_dims(y, axes=[0, 2, 1, 3])
            w: R.Tensor((b, 2, s, 32), dtype="float32") = R.multiply(z, R.const(0.5, "float32"))
            R.output(w)
        return w
"#;
        let s = scheduled(text, 512);
        // Without a loop fused for threads, the load is affine in every
        // loop (the fused parallel loop divides once per row of 32).
        assert!(s.contains("x[ax0, ax2, ax1 * 32 + ax3_1]"), "{s}");
        let cases: Vec<_> = [(1, 1), (2, 17), (1, 33), (3, 5), (2, 8193)]
            .into_iter()
            .map(|(b, s)| vec![vec![b, s, 64]])
            .collect();
        agree(text, &cases, 0.0);
    }

    /// A matrix product's tile one 512-bit register wide has eight rows
    /// (eight accumulators, as two 256-bit registers a row make of four),
    /// whether or not the rows come in eights (the rows left are one-row
    /// tiles); every version computes the product.
    #[test]
    fn one_register_tiles_have_eight_rows_on_512_bit_targets() {
        let text = |m: i64| {
            format!(
                r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(({m}, 40), dtype="float32"), w: R.Tensor((40, 16), dtype="float32")) -> R.Tensor(({m}, 16), dtype="float32"):
        with R.dataflow():
            y: R.Tensor(({m}, 16), dtype="float32") = R.matmul(x, w, out_dtype="void")
            R.output(y)
        return y
"#
            )
        };
        let tile = |m: i64, bits: u32| {
            let s = scheduled(&text(m), bits);
            if s.contains("T.alloc_buffer((8, 16))") {
                8
            } else if s.contains("T.alloc_buffer((4, 16))") {
                4
            } else {
                panic!("no register tile:\n{s}")
            }
        };
        assert_eq!(tile(64, 512), 8);
        assert_eq!(tile(64, 256), 4);
        assert_eq!(tile(60, 512), 8);
        assert_eq!(tile(60, 256), 4);
        for m in [64, 60] {
            for bits in [256, 512] {
                let target = Target::host().with_vector_bits(bits);
                compare(
                    &text(m),
                    &[vec![vec![m, 40], vec![40, 16]]],
                    1e-5,
                    0,
                    &target,
                );
            }
        }
    }

    /// Winograd's products of 28 x 28 images have 49 columns. On a
    /// 512-bit target each is one tile of 4 rows x 49 columns (three
    /// vectors and one lane), neither packed (its `B` fits the L1 cache)
    /// nor with its 49th column summed row by row; a product 196 columns
    /// wide is tiles of two vectors and a tile of the 4 columns left, all
    /// 8 rows tall. On a 256-bit target the larger product is packed, as
    /// before. Every version computes the product, rows and columns left
    /// over included.
    #[test]
    fn narrow_products_are_whole_row_tiles_on_512_bit_targets() {
        let text = |o: i64, c: i64, t: i64| {
            format!(
                r#"
@I.ir_module
class Module:
    @R.function
    def main(u: R.Tensor((4, {o}, {c}), dtype="float32"), v: R.Tensor((4, {c}, {t}), dtype="float32")) -> R.Tensor((4, {o}, {t}), dtype="float32"):
        with R.dataflow():
            m: R.Tensor((4, {o}, {t}), dtype="float32") = R.matmul(u, v, out_dtype="void")
            R.output(m)
        return m
"#
            )
        };
        let narrow = scheduled(&text(1536, 128, 49), 512);
        assert!(narrow.contains("T.alloc_buffer((4, 49))"), "{narrow}");
        assert!(!narrow.contains("B_pack"), "{narrow}");
        assert!(!narrow.contains("T.alloc_buffer((1, 1))"), "{narrow}");
        assert!(scheduled(&text(1536, 128, 49), 256).contains("B_pack"));
        let wide = scheduled(&text(36, 24, 196), 512);
        assert!(wide.contains("T.alloc_buffer((8, 32))"), "{wide}");
        assert!(wide.contains("T.alloc_buffer((8, 4))"), "{wide}");
        for (o, c, t) in [(1536, 128, 49), (36, 24, 196), (13, 5, 49), (20, 7, 61)] {
            let shapes = [vec![vec![4, o, c], vec![4, c, t]]];
            for bits in [256, 512] {
                let target = Target::host().with_vector_bits(bits);
                compare(&text(o, c, t), &shapes, 1e-4, 0, &target);
            }
            // The loop-level interpreter checks every access.
            if o < 100 {
                let loops = Target::tir_interpreter().with_vector_bits(512);
                compare(&text(o, c, t), &shapes, 1e-4, 0, &loops);
            }
        }
    }

    /// A mean over an image into one row of channels (a squeeze and
    /// excitation's) is cut along the image's rows into parts summed in
    /// parallel into `partial`, then added up and divided: 56 rows in 8
    /// parts of 7, 14 rows of 480 channels (wider than a one-row tile) in
    /// 7 parts; 11 rows, which no count from 2 to 8 divides, stay one
    /// sum. Every version agrees with the reference kernels, on LLVM and
    /// on the loop-level interpreter, which checks every access.
    #[test]
    fn a_mean_into_one_row_is_summed_in_parallel_parts() {
        let text = |h: i64, w: i64, c: i64| {
            format!(
                r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, {h}, {w}, {c}), dtype="float32")) -> R.Tensor((1, 1, 1, {c}), dtype="float32"):
        with R.dataflow():
            m: R.Tensor((1, 1, 1, {c}), dtype="float32") = R.mean(x, axis=[1, 2], keepdims=True)
            R.output(m)
        return m
"#
            )
        };
        for (h, w, c, parts) in [
            (56, 56, 40, Some(8)),
            (14, 14, 480, Some(7)),
            (11, 200, 60, None),
        ] {
            let module = scheduled(&text(h, w, c), 512);
            match parts {
                Some(p) => {
                    let partial = format!("partial = T.alloc_buffer(({p}, {c}))");
                    assert!(module.contains(&partial), "{module}");
                    assert!(module.contains(&format!("T.parallel({p})")), "{module}");
                }
                None => assert!(!module.contains("partial"), "{module}"),
            }
            let shapes = [vec![vec![1, h, w, c]]];
            compare(&text(h, w, c), &shapes, 1e-5, 0, &Target::host());
            let loops = Target::tir_interpreter().with_vector_bits(512);
            compare(&text(h, w, c), &shapes, 1e-5, 0, &loops);
        }
    }

    /// A pointwise convolution of one image whose rows spread over the L1
    /// cache's sets reads the image in place, by column panels in
    /// parallel (`gemm/column_panels.rs`): no `B_pack`, the columns left
    /// of whole panels as narrower tiles (16 and 4 of 784 and 196
    /// pixels), the rows in parts where the panels are few, `k` in
    /// slices past 256; a 7 × 7 image of few filters is one product
    /// too. A 56 × 56 image (rows 12544 bytes apart, 16 L1
    /// sets) is still packed. Each agrees with the reference kernels at
    /// 256 bits (where rows 28 wide fold into two products instead) and
    /// 512, the small ones on the loop-level interpreter too.
    #[test]
    fn a_pointwise_convolution_reads_its_image_in_place_by_column_panels() {
        let text = |c: i64, o: i64, h: i64, w: i64| {
            format!(
                r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, {c}, {h}, {w}), dtype="float32"), w: R.Tensor(({o}, {c}, 1, 1), dtype="float32"), b: R.Tensor((1, {o}, 1, 1), dtype="float32")) -> R.Tensor((1, {o}, {h}, {w}), dtype="float32"):
        with R.dataflow():
            y: R.Tensor((1, {o}, {h}, {w}), dtype="float32") = R.nn.conv2d(x, w)
            z: R.Tensor((1, {o}, {h}, {w}), dtype="float32") = R.add(y, b)
            r: R.Tensor((1, {o}, {h}, {w}), dtype="float32") = R.nn.relu(z)
            R.output(r)
        return r
"#
            )
        };
        let module = scheduled(&text(256, 128, 28, 28), 512);
        assert!(!module.contains("B_pack"), "{module}");
        assert!(module.contains("T.parallel(25)"), "{module}");
        // An accumulator `cols` wide (its rows are the knob's).
        let tile = |module: &str, cols: i64| {
            let end = format!(", {cols}))");
            module
                .lines()
                .any(|l| l.contains("acc") && l.contains("T.alloc_buffer((") && l.ends_with(&end))
        };
        assert!(tile(&module, 16), "{module}");
        // 7 panels (6 and 4 columns), each of 3 parts of the 22 row tiles.
        let module = scheduled(&text(528, 256, 14, 14), 512);
        assert!(!module.contains("B_pack"), "{module}");
        assert!(module.contains("T.parallel(21)"), "{module}");
        assert!(tile(&module, 4), "{module}");
        assert!(module.contains("kc_o in range(3)"), "{module}");
        // 7 × 7: one panel and 17 columns (16 and 1) of 48 filters, where
        // each of 7 products was one 7-pixel row.
        let module = scheduled(&text(832, 48, 7, 7), 512);
        assert!(!module.contains("B_pack"), "{module}");
        assert!(tile(&module, 16) && tile(&module, 1), "{module}");
        assert!(scheduled(&text(64, 64, 56, 56), 512).contains("B_pack"));
        // (channels in, out, height, width, interpreted)
        let cases = [
            (256, 128, 28, 28, false),
            (300, 130, 10, 10, true),
            (70, 129, 9, 13, true),
            (230, 140, 7, 11, false),
            (500, 48, 7, 7, true),
        ];
        for (c, o, h, w, interpreted) in cases {
            let t = text(c, o, h, w);
            assert!(!scheduled(&t, 512).contains("B_pack"), "{c} {o} {h} {w}");
            let shapes = [vec![vec![1, c, h, w], vec![o, c, 1, 1], vec![1, o, 1, 1]]];
            for bits in [256, 512] {
                let target = Target::host().with_vector_bits(bits);
                compare(&t, &shapes, 1e-4, 0, &target);
                if interpreted && bits == 512 {
                    let loops = Target::tir_interpreter().with_vector_bits(bits);
                    compare(&t, &shapes, 1e-4, 0, &loops);
                }
            }
        }
    }

    /// A packed GEMM with under half as many rows as columns (`B` more
    /// than twice `A`) runs its rows as one chunk whose column tiles are
    /// cut into parallel parts, each thread reading its own share of `B`:
    /// 50 rows by 128 columns (9 row tiles of 6, 8 column tiles of 16 at
    /// 256 bits) in 8 parts; 70 rows by 128 columns in 4 chunks of rows.
    /// Both agree with the reference kernels, with a symbolic row count
    /// too (the choice then made at run time).
    #[test]
    fn a_product_whose_b_outweighs_its_a_cuts_its_columns_into_parts() {
        let text = |m: &str, k: i64, n: i64| {
            let decl = match m.starts_with('"') {
                true => "m = T.int64()\n        ",
                false => "",
            };
            format!(
                r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(({m}, {k}), dtype="float32"), w: R.Tensor(({k}, {n}), dtype="float32")) -> R.Tensor(({m}, {n}), dtype="float32"):
        {decl}with R.dataflow():
            y: R.Tensor(({m}, {n}), dtype="float32") = R.matmul(x, w)
            R.output(y)
        return y
"#
            )
        };
        let module = scheduled(&text("50", 300, 128), 256);
        assert!(module.contains("ic_o in T.parallel(8)"), "{module}");
        let module = scheduled(&text("70", 300, 128), 256);
        assert!(module.contains("ic_o in T.parallel(4)"), "{module}");
        for (rows, m) in [(50, "50"), (70, "70"), (50, "\"m\""), (70, "\"m\"")] {
            let shapes = [vec![vec![rows, 300], vec![300, 128]]];
            for bits in [256, 512] {
                compare(
                    &text(m, 300, 128),
                    &shapes,
                    1e-4,
                    0,
                    &Target::host().with_vector_bits(bits),
                );
            }
        }
    }

    /// `text` through the host pipeline for vectors of `bits`, printed.
    fn scheduled(text: &str, bits: u32) -> String {
        let target = Target::host().with_vector_bits(bits);
        let m: IRModule = text.parse().unwrap();
        let pipeline = crate::backend::pipeline(&target);
        crate::transform::Pass::run(&pipeline, m)
            .unwrap()
            .to_string()
    }
}
