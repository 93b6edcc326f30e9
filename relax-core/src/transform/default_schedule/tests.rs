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
    let got = DefaultSchedule.run(prim_module(params, before)).unwrap();
    let want = prim_module(params, after);
    if let Err(e) = structural_equal_report(&got, &want) {
        panic!("{e}\n--- got:\n{got}\n--- want:\n{want}");
    }
    // A second run finds no canonical nest left: the pass is idempotent.
    let again = DefaultSchedule.run(got.clone()).unwrap();
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
            if n * 128 >= 65536:
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
    let params = r#"A: T.Buffer((64, 32, 48), "float32"), B: T.Buffer((64, 32, 48), "float32")"#;
    let before = r#"        with T.block("root"):
            for ax0, ax1, ax2 in T.grid(64, 32, 48):
                with T.block("B"):
                    v0, v1, v2 = T.axis.remap("SSS", [ax0, ax1, ax2])
                    B[v0, v1, v2] = T.max(A[v0, v1, v2], T.float32(0.0))
"#;
    let after = r#"        with T.block("root"):
            for f in T.parallel(2048):
                for ax2 in T.vectorized(48):
                    B[f // 32, f % 32, ax2] = T.max(A[f // 32, f % 32, ax2], T.float32(0.0))
"#;
    check(params, before, after);
}

#[test]
fn a_large_one_loop_nest_is_split_into_parallel_chunks_and_a_tail() {
    let params = r#"A: T.Buffer((70000,), "float32"), B: T.Buffer((70000,), "float32")"#;
    let before = r#"        with T.block("root"):
            for ax0 in range(70000):
                with T.block("B"):
                    v0 = T.axis.spatial(70000, ax0)
                    B[v0] = A[v0] * T.float32(2.0)
"#;
    let after = r#"        with T.block("root"):
            for o in T.parallel(17):
                for i in T.vectorized(4096):
                    B[o * 4096 + i] = A[o * 4096 + i] * T.float32(2.0)
            for t in T.vectorized(69632, 70000):
                B[t] = A[t] * T.float32(2.0)
"#;
    check(params, before, after);
}

#[test]
fn gathers_are_not_vectorized() {
    // A transpose reads its input with a stride along the inner loop.
    let params = r#"A: T.Buffer((8, 4), "float32"), B: T.Buffer((4, 8), "float32")"#;
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
    check(params, before, after);
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
    // One 4 x 16 tile, the 4 columns right of it row by row, then the two
    // rows below it.
    let after = r#"        with T.block("root"):
            for ii in T.unroll(4):
                for jj in T.vectorized(16):
                    C[ii, jj] = T.float32(0.0)
            for k in range(8):
                for ii in T.unroll(4):
                    for jj in T.vectorized(16):
                        C[ii, jj] = C[ii, jj] + x[ii, k] * y[k, jj]
            for ii in range(4):
                for j in T.vectorized(16, 20):
                    C[ii, j] = T.float32(0.0)
                for k in range(8):
                    for j in T.vectorized(16, 20):
                        C[ii, j] = C[ii, j] + x[ii, k] * y[k, j]
            for it in T.serial(4, 6):
                for j in T.vectorized(20):
                    C[it, j] = T.float32(0.0)
                for k in range(8):
                    for j in T.vectorized(20):
                        C[it, j] = C[it, j] + x[it, k] * y[k, j]
"#;
    check(params, before, after);
}

#[test]
fn a_large_batched_matmul_runs_its_tile_rows_in_parallel() {
    // 64 x 64 x 32 multiply-adds: above the threshold; the batch loop of
    // one is the outermost, so the rows of tiles are parallel.
    let params = r#"x: T.Buffer((64, 32), "float32"), y: T.Buffer((32, 64), "float32"), C: T.Buffer((64, 64), "float32")"#;
    let before = r#"        with T.block("root"):
            for i, j, k in T.grid(64, 64, 32):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    with T.init():
                        C[vi, vj] = T.float32(0.0)
                    C[vi, vj] = C[vi, vj] + x[vi, vk] * y[vk, vj]
"#;
    let after = r#"        with T.block("root"):
            for io in T.parallel(16):
                for jo in range(4):
                    for ii in T.unroll(4):
                        for jj in T.vectorized(16):
                            C[io * 4 + ii, jo * 16 + jj] = T.float32(0.0)
                    for k in range(32):
                        for ii in T.unroll(4):
                            for jj in T.vectorized(16):
                                C[io * 4 + ii, jo * 16 + jj] = C[io * 4 + ii, jo * 16 + jj] + x[io * 4 + ii, k] * y[k, jo * 16 + jj]
"#;
    check(params, before, after);
}

#[test]
fn a_row_sum_keeps_its_order_and_hoists_the_init() {
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
                S[ax0] = T.float32(0.0)
                for k0 in range(20):
                    S[ax0] = S[ax0] + a[ax0, k0]
"#;
    check(params, before, after);
}

#[test]
fn a_column_sum_vectorizes_over_the_columns() {
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
            for ax0 in T.vectorized(20):
                S[ax0] = T.float32(0.0)
            for k0 in range(6):
                for ax0 in T.vectorized(20):
                    S[ax0] = S[ax0] + a[k0, ax0]
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
    //! pass) against the unscheduled ones on the loop-level interpreter
    //! (`Target::tir_interpreter()`), and both against the reference
    //! kernels, on random inputs. The sizes reach every path: tiles and
    //! their row and column tails, the serial and the parallel side of the
    //! run-time guard, fused and chunked parallel loops.

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

    fn run(exec: &Executable, args: &[Value]) -> Vec<f32> {
        let out = VirtualMachine::new(exec).call("main", args).unwrap();
        out.as_tensor().unwrap().to_vec::<f32>().unwrap()
    }

    /// Runs `text`'s `main` on inputs of `shapes` on the three targets;
    /// the results agree within `rtol` (relative to the largest magnitude).
    fn agree(text: &str, cases: &[Vec<Vec<i64>>], rtol: f32) {
        let m: IRModule = text.parse().unwrap();
        let host = build(&m, &Target::host()).unwrap();
        let tir = build(&m, &Target::tir_interpreter()).unwrap();
        let oracle = build(&m, &Target::interpreter()).unwrap();
        for (c, shapes) in cases.iter().enumerate() {
            let args: Vec<Value> = shapes
                .iter()
                .enumerate()
                .map(|(i, s)| random(s, (c * 10 + i) as u64 + 1))
                .collect();
            let (h, t, o) = (run(&host, &args), run(&tir, &args), run(&oracle, &args));
            let scale = o.iter().fold(1f32, |m, v| m.max(v.abs()));
            for (name, got) in [("host", &h), ("tir interpreter", &t)] {
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
        // 520 * 128 = 66560 elements: the parallel side.
        let cases: Vec<_> = [1, 5, 520]
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
        // Parallel chunks of 4096 and a tail of 369.
        agree(
            flat,
            &[vec![vec![70001], vec![1]], vec![vec![7], vec![1]]],
            0.0,
        );
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
        // 1041 * 63 = 65583: the fused parallel loop.
        let cases: Vec<_> = [1, 3, 1041]
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
        // (43 * 37 * 45 = 71595 multiply-adds); columns: two tiles of 16
        // and a tail of 13.
        let cases: Vec<_> = [1, 5, 43]
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
        let cases: Vec<_> = [1, 6, 2100]
            .into_iter()
            .map(|n| vec![vec![n, 33]])
            .collect();
        agree(text, &cases, 1e-5);
    }
}
