//! Before/after tests of each primitive (TVMScript in, TVMScript out,
//! after TVM's tests/python/tir-schedule cases), the interpreter as the
//! oracle that every scheduled function computes what the original does,
//! the error cases, and trace printing and replay.

use super::*;
use crate::ir::expr::GlobalVar;
use crate::ir::module::{BaseFunc, IRModule};
use crate::ir::structural_equal::structural_equal_report;
use crate::parser::parse_module;
use crate::tir::interp::run;
use relax_runtime::Tensor;

/// The PrimFunc `main` of a module of one `@T.prim_func def main(…)`.
pub(crate) fn prim(params: &str, body: &str) -> PrimFunc {
    let text =
        format!("@I.ir_module\nclass Module:\n    @T.prim_func\n    def main({params}):\n{body}");
    let m = parse_module(&text).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
    let f = m
        .functions()
        .find_map(|(_, f)| match f {
            BaseFunc::Prim(p) => Some(p.clone()),
            _ => None,
        })
        .expect("a prim_func");
    f
}

pub(crate) fn text(f: &PrimFunc) -> String {
    IRModule::from_functions([(GlobalVar::new("main"), BaseFunc::Prim(f.clone()))]).to_string()
}

const MATMUL_PARAMS: &str = "A: T.Buffer((13, 9), \"float32\"), B: T.Buffer((9, 7), \"float32\"), C: T.Buffer((13, 7), \"float32\")";
const MATMUL_BODY: &str = r#"        for i, j, k in T.grid(13, 7, 9):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(C[vi, vj])
                with T.init():
                    C[vi, vj] = T.float32(0.0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"#;

fn matmul() -> PrimFunc {
    prim(MATMUL_PARAMS, MATMUL_BODY)
}

/// Two elementwise blocks through an intermediate `B` (TVM's
/// `elementwise` of test_tir_schedule_compute_inline.py, smaller).
fn elementwise() -> PrimFunc {
    prim(
        "A: T.Buffer((8, 6), \"float32\"), C: T.Buffer((8, 6), \"float32\")",
        r#"        B = T.alloc_buffer((8, 6), "float32")
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
    )
}

/// `B[i] = A[i] * 2` over a symbolic `n`.
fn symbolic() -> PrimFunc {
    prim(
        "A: T.Buffer((n,), \"float32\"), B: T.Buffer((n,), \"float32\")",
        r#"        n = T.int64()
        for i in range(n):
            with T.block("B"):
                vi = T.axis.spatial(n, i)
                T.reads(A[vi])
                T.writes(B[vi])
                B[vi] = A[vi] * T.float32(2.0)
"#,
    )
}

/// Deterministic pseudo-random floats in [-1, 1).
fn random(len: usize, seed: u64) -> Vec<f32> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// Runs `f` in the interpreter on random inputs of `in_shapes`; outputs
/// of `out_shapes` start as a non-zero fill (an init must overwrite it).
fn outputs(f: &PrimFunc, in_shapes: &[&[i64]], out_shapes: &[&[i64]]) -> Vec<Vec<f32>> {
    let inputs: Vec<Tensor> = in_shapes
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let n = s.iter().product::<i64>() as usize;
            Tensor::from_vec(s, random(n, i as u64 + 1)).unwrap()
        })
        .collect();
    let ins: Vec<&Tensor> = inputs.iter().collect();
    let mut outs: Vec<Tensor> = out_shapes
        .iter()
        .map(|s| {
            let n = s.iter().product::<i64>() as usize;
            Tensor::from_vec(s, vec![7.0f32; n]).unwrap()
        })
        .collect();
    run(f, &ins, &mut outs, &[]).unwrap_or_else(|e| panic!("{e}\n{}", text(f)));
    outs.iter().map(|t| t.to_vec::<f32>().unwrap()).collect()
}

/// The interpreter as oracle: `scheduled` computes what `original` does.
fn same_outputs(original: &PrimFunc, scheduled: &PrimFunc, ins: &[&[i64]], outs: &[&[i64]]) {
    let want = outputs(original, ins, outs);
    let got = outputs(scheduled, ins, outs);
    for (g, w) in got.iter().zip(&want) {
        for (a, b) in g.iter().zip(w) {
            assert!(
                (a - b).abs() <= 1e-5 * b.abs().max(1.0),
                "{a} vs {b}\n{}",
                text(scheduled)
            );
        }
    }
}

fn same_matmul(s: &Schedule) {
    same_outputs(&matmul(), s.func(), &[&[13, 9], &[9, 7]], &[&[13, 7]]);
}

fn replays(s: &Schedule, original: PrimFunc) {
    let mut fresh = Schedule::new(original);
    s.trace().apply_to(&mut fresh).unwrap();
    structural_equal_report(s.func(), fresh.func()).unwrap();
    assert_eq!(fresh.trace(), s.trace());
}

fn err<T: std::fmt::Debug>(r: Result<T>) -> String {
    r.expect_err("expected an error").message
}

// ---- before/after ---------------------------------------------------------

/// TVM's `test_split_with_inferred_factor` (elementwise, smaller): the
/// split loop's variable becomes `i_0 * 4 + i_1`, loops outside in.
#[test]
fn split_with_inferred_factor_gives_tvms_nest() {
    let f = prim(
        "A: T.Buffer((16, 8), \"float32\"), B: T.Buffer((16, 8), \"float32\")",
        r#"        for i, j in T.grid(16, 8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * T.float32(2.0)
"#,
    );
    let want = prim(
        "A: T.Buffer((16, 8), \"float32\"), B: T.Buffer((16, 8), \"float32\")",
        r#"        for i_0, i_1, j in T.grid(4, 4, 8):
            with T.block("B"):
                vi = T.axis.spatial(16, i_0 * 4 + i_1)
                vj = T.axis.spatial(8, j)
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * T.float32(2.0)
"#,
    );
    let mut s = Schedule::new(f.clone());
    let b = s.get_block("B").unwrap();
    let [i, _j] = s.get_loops(b).unwrap()[..] else {
        unreachable!()
    };
    let l = s.split(i, &[None, Some(4)]).unwrap();
    assert_eq!(l.len(), 2);
    structural_equal_report(s.func(), &want).unwrap_or_else(|e| panic!("{e}\n{}", text(s.func())));
    same_outputs(&f, s.func(), &[&[16, 8]], &[&[16, 8]]);
    replays(&s, f);
}

/// A factor that does not divide the extent gets a predicate, printed as
/// an `if` around the block, and reads nothing out of bounds.
#[test]
fn split_with_a_non_dividing_factor_guards_the_block() {
    let mut s = Schedule::new(matmul());
    let b = s.get_block("C").unwrap();
    let [i, j, k] = s.get_loops(b).unwrap()[..] else {
        unreachable!()
    };
    s.split(i, &[None, Some(4)]).unwrap();
    s.split(j, &[Some(2), Some(2), None]).unwrap();
    s.split(k, &[Some(4), None]).unwrap();
    let t = text(s.func());
    assert!(
        t.contains("for i_0, i_1, j_0, j_1, j_2, k_0, k_1 in T.grid(4, 4, 2, 2, 2, 4, 3):"),
        "{t}"
    );
    assert!(
        t.contains("if i_0 * 4 + i_1 < 13 and j_0 * 4 + j_1 * 2 + j_2 < 7 and k_0 * 3 + k_1 < 9:"),
        "{t}"
    );
    same_matmul(&s);
    replays(&s, matmul());
}

/// A symbolic extent split with an inferred factor: `(n + 3) // 4` outer
/// iterations under a predicate, for every `n`.
#[test]
fn split_of_a_symbolic_loop_stays_symbolic() {
    let mut s = Schedule::new(symbolic());
    let b = s.get_block("B").unwrap();
    let [i] = s.get_loops(b).unwrap()[..] else {
        unreachable!()
    };
    let [_, inner] = s.split(i, &[None, Some(4)]).unwrap()[..] else {
        unreachable!()
    };
    s.vectorize(inner).unwrap();
    let t = text(s.func());
    assert!(t.contains("(n + 3) // 4"), "{t}");
    for n in [1, 4, 10] {
        same_outputs(&symbolic(), s.func(), &[&[n]], &[&[n]]);
    }
}

#[test]
fn fuse_and_reorder_keep_the_matmul() {
    let mut s = Schedule::new(matmul());
    let b = s.get_block("C").unwrap();
    let [i, j, k] = s.get_loops(b).unwrap()[..] else {
        unreachable!()
    };
    s.reorder(&[k, i]).unwrap();
    let t = text(s.func());
    assert!(t.contains("for k, j, i in T.grid(9, 7, 13):"), "{t}");
    same_matmul(&s);
    s.reorder(&[i, j, k]).unwrap();
    let ij = s.fuse(&[i, j]).unwrap();
    let t = text(s.func());
    assert!(t.contains("for i_j_fused, k in T.grid(91, 9):"), "{t}");
    assert!(t.contains("T.axis.spatial(13, i_j_fused // 7)"), "{t}");
    assert!(t.contains("T.axis.spatial(7, i_j_fused % 7)"), "{t}");
    same_matmul(&s);
    let [_, inner] = s.split(ij, &[None, Some(8)]).unwrap()[..] else {
        unreachable!()
    };
    s.parallel(inner).unwrap();
    same_matmul(&s);
    replays(&s, matmul());
}

#[test]
fn loop_kinds_print_as_tvm_writes_them() {
    let mut s = Schedule::new(elementwise());
    let c = s.get_block("C").unwrap();
    let [i, j] = s.get_loops(c).unwrap()[..] else {
        unreachable!()
    };
    s.parallel(i).unwrap();
    s.vectorize(j).unwrap();
    let b = s.get_block("B").unwrap();
    let [bi, _] = s.get_loops(b).unwrap()[..] else {
        unreachable!()
    };
    s.unroll(bi).unwrap();
    let t = text(s.func());
    assert!(t.contains("for i_1 in T.parallel(8):"), "{t}");
    assert!(t.contains("for j_1 in T.vectorized(6):"), "{t}");
    assert!(t.contains("for i in T.unroll(8):"), "{t}");
    same_outputs(&elementwise(), s.func(), &[&[8, 6]], &[&[8, 6]]);
}

/// TVM's `test_compute_inline_elementwise`: the producer block and its
/// buffer go, the consumer computes `A * 2 + 1`.
#[test]
fn compute_inline_gives_tvms_elementwise() {
    let want = prim(
        "A: T.Buffer((8, 6), \"float32\"), C: T.Buffer((8, 6), \"float32\")",
        r#"        for i, j in T.grid(8, 6):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = A[vi, vj] * T.float32(2.0) + T.float32(1.0)
"#,
    );
    let mut s = Schedule::new(elementwise());
    let b = s.get_block("B").unwrap();
    s.compute_inline(b).unwrap();
    structural_equal_report(s.func(), &want).unwrap_or_else(|e| panic!("{e}\n{}", text(s.func())));
    same_outputs(&elementwise(), s.func(), &[&[8, 6]], &[&[8, 6]]);
    replays(&s, elementwise());
}

/// TVM's `test_reduction_decompose0` shape: the init becomes `C_init`
/// under copies of the spatial loops below the given loop.
#[test]
fn decompose_reduction_at_the_inner_spatial_loop() {
    let mut s = Schedule::new(matmul());
    let b = s.get_block("C").unwrap();
    let [_, j, _] = s.get_loops(b).unwrap()[..] else {
        unreachable!()
    };
    s.decompose_reduction(b, j).unwrap();
    let t = text(s.func());
    assert!(t.contains("for j_init in range(7):"), "{t}");
    assert!(t.contains("with T.sblock(\"C_init\"):"), "{t}");
    assert!(!t.contains("T.init()"), "{t}");
    same_matmul(&s);
    replays(&s, matmul());
}

/// The packed-matmul shape a default schedule builds: tiles, the
/// reduction between the tile loops, the init decomposed, the outer tile
/// loop parallel and the innermost vectorized.
#[test]
fn tiled_matmul_with_every_loop_primitive() {
    let s = tiled_matmul(matmul(), 4, 4, 3);
    same_matmul(&s);
    replays(&s, matmul());
}

fn tiled_matmul(f: PrimFunc, ti: i64, tj: i64, tk: i64) -> Schedule {
    let mut s = Schedule::new(f);
    let b = s.get_block("C").unwrap();
    let [i, j, k] = s.get_loops(b).unwrap()[..] else {
        unreachable!()
    };
    let [i0, i1] = s.split(i, &[None, Some(ti)]).unwrap()[..] else {
        unreachable!()
    };
    let [j0, j1] = s.split(j, &[None, Some(tj)]).unwrap()[..] else {
        unreachable!()
    };
    let [k0, k1] = s.split(k, &[None, Some(tk)]).unwrap()[..] else {
        unreachable!()
    };
    s.reorder(&[i0, j0, k0, i1, k1, j1]).unwrap();
    s.decompose_reduction(b, k0).unwrap();
    s.parallel(i0).unwrap();
    s.unroll(k1).unwrap();
    s.vectorize(j1).unwrap();
    s
}

#[test]
fn sample_perfect_tile_is_seeded_and_exact() {
    for seed in 0..20 {
        let mut s = Schedule::new(matmul());
        let b = s.get_block("C").unwrap();
        let [i, ..] = s.get_loops(b).unwrap()[..] else {
            unreachable!()
        };
        let f = s.sample_perfect_tile(i, 3, 4, seed).unwrap();
        assert_eq!(f.iter().product::<i64>(), 13);
        assert!(f[2] <= 4, "{f:?}");
        let mut again = Schedule::new(matmul());
        let b = again.get_block("C").unwrap();
        let [i, ..] = again.get_loops(b).unwrap()[..] else {
            unreachable!()
        };
        assert_eq!(again.sample_perfect_tile(i, 3, 4, seed).unwrap(), f);
    }
    let draws: std::collections::HashSet<Vec<i64>> = (0..40)
        .map(|seed| sampling::perfect_tile(3 * 4 * 5 * 7, 3, 64, seed).unwrap())
        .collect();
    assert!(draws.len() > 5, "{draws:?}");
    assert_eq!(sampling::perfect_tile(13, 1, 4, 0), None);
}

// ---- trace -----------------------------------------------------------------

#[test]
fn trace_prints_as_python_and_rust_and_replays() {
    let mut s = Schedule::new(matmul());
    let b = s.get_block("C").unwrap();
    let [i, j, k] = s.get_loops(b).unwrap()[..] else {
        unreachable!()
    };
    let f = s.sample_perfect_tile(j, 2, 4, 7).unwrap();
    let [j0, j1] = s.split(j, &[Some(f[0]), Some(f[1])]).unwrap()[..] else {
        unreachable!()
    };
    s.reorder(&[i, j0, k, j1]).unwrap();
    let ij = s.fuse(&[i, j0]).unwrap();
    s.parallel(ij).unwrap();
    s.decompose_reduction(b, k).unwrap();
    s.vectorize(j1).unwrap();
    let py = s.trace().as_python();
    let want = format!(
        r#"b0 = sch.get_block(name="C", func_name="main")
l1, l2, l3 = sch.get_loops(block=b0)
v4, v5 = sch.sample_perfect_tile(loop=l2, n=2, max_innermost_factor=4, decision=[{}, {}])
l6, l7 = sch.split(loop=l2, factors=[{}, {}], preserve_unit_iters=True, disable_predication=False)
sch.reorder(l1, l6, l3, l7)
l8 = sch.fuse(l1, l6, preserve_unit_iters=True)
sch.parallel(loop=l8)
b9 = sch.decompose_reduction(block=b0, loop=l3)
sch.vectorize(loop=l7)
"#,
        f[0], f[1], f[0], f[1]
    );
    assert_eq!(py, want);
    let rust = s.trace().as_rust();
    let want = format!(
        r#"let b0 = sch.get_block("C")?;
let [l1, l2, l3] = sch.get_loops(b0)?[..] else {{ unreachable!() }};
let [v4, v5] = sch.sample_perfect_tile(l2, 2, 4, 7)?[..] else {{ unreachable!() }}; // decision [{}, {}]
let [l6, l7] = sch.split(l2, &[Some({}), Some({})])?[..] else {{ unreachable!() }};
sch.reorder(&[l1, l6, l3, l7])?;
let l8 = sch.fuse(&[l1, l6])?;
sch.parallel(l8)?;
let b9 = sch.decompose_reduction(b0, l3)?;
sch.vectorize(l7)?;
"#,
        f[0], f[1], f[0], f[1]
    );
    assert_eq!(rust, want);
    same_matmul(&s);
    replays(&s, matmul());
}

// ---- errors ----------------------------------------------------------------

#[test]
fn preconditions_are_errors_naming_the_loop_or_block() {
    let mut s = Schedule::new(matmul());
    assert!(err(s.get_block("D")).contains("no block named \"D\""));
    let b = s.get_block("C").unwrap();
    let [i, j, k] = s.get_loops(b).unwrap()[..] else {
        unreachable!()
    };
    let before = s.func().clone();
    let trace = s.trace().clone();
    let e = err(s.parallel(k));
    assert!(
        e.contains("parallel: loop l3 (k) is bound to a reduce variable of block \"C\""),
        "{e}"
    );
    let e = err(s.vectorize(k));
    assert!(e.contains("vectorize: loop l3 (k)"), "{e}");
    let e = err(s.split(i, &[None, None]));
    assert!(e.contains("at most one factor may be inferred"), "{e}");
    let e = err(s.split(i, &[Some(0), None]));
    assert!(e.contains("factors must be positive"), "{e}");
    let e = err(s.fuse(&[i, k]));
    assert!(
        e.contains("fuse: loop l3 (k) is not the only statement in the body of loop l1 (i)"),
        "{e}"
    );
    let e = err(s.fuse(&[j, k]));
    assert!(
        e.contains("spatial block variable") && e.contains("loop l3 (k)"),
        "{e}"
    );
    let e = err(s.reorder(&[i, i]));
    assert!(e.contains("listed twice"), "{e}");
    let e = err(s.compute_inline(b));
    assert!(e.contains("a parameter of the function"), "{e}");
    // Nothing changed and nothing was recorded.
    assert_eq!(s.func(), &before);
    assert_eq!(s.trace(), &trace);
    // A reduce loop above the decomposition point.
    s.reorder(&[k, i]).unwrap();
    let e = err(s.decompose_reduction(b, i));
    assert!(
        e.contains("reduce variable vk to loop k, which is above loop l1 (i)"),
        "{e}"
    );
    // A handle whose loop a split removed.
    s.split(j, &[None, Some(2)]).unwrap();
    let e = err(s.unroll(j));
    assert!(
        e.contains("loop l2 (j) is no longer in the function"),
        "{e}"
    );
}

#[test]
fn loops_of_different_nests_or_blocks_are_refused() {
    let mut s = Schedule::new(elementwise());
    let b = s.get_block("B").unwrap();
    let c = s.get_block("C").unwrap();
    let [bi, _] = s.get_loops(b).unwrap()[..] else {
        unreachable!()
    };
    let [ci, cj] = s.get_loops(c).unwrap()[..] else {
        unreachable!()
    };
    let e = err(s.reorder(&[cj, bi]));
    assert!(e.contains("are not in one loop nest"), "{e}");
    let e = err(s.fuse(&[bi, ci]));
    assert!(e.contains("fuse:"), "{e}");
    let e = err(s.decompose_reduction(c, ci));
    assert!(e.contains("block \"C\" has no init"), "{e}");
    let mut v = Schedule::new(symbolic());
    let b = v.get_block("B").unwrap();
    let [i] = v.get_loops(b).unwrap()[..] else {
        unreachable!()
    };
    let e = err(v.vectorize(i));
    assert!(
        e.contains("vectorize: loop l1 (i) has extent n, not a positive constant"),
        "{e}"
    );
    let e = err(v.sample_perfect_tile(i, 2, 4, 0));
    assert!(e.contains("not a positive constant"), "{e}");
}

/// A guarded producer is not inlinable, and a nest whose blocks
/// communicate is not parallel.
#[test]
fn unsafe_inline_and_parallel_are_refused() {
    let mut s = Schedule::new(elementwise());
    let b = s.get_block("B").unwrap();
    let [bi, _] = s.get_loops(b).unwrap()[..] else {
        unreachable!()
    };
    s.split(bi, &[None, Some(3)]).unwrap();
    let e = err(s.compute_inline(b));
    assert!(
        e.contains("compute_inline: block \"B\" cannot be inlined"),
        "{e}"
    );
    let two_blocks = prim(
        "A: T.Buffer((8,), \"float32\"), C: T.Buffer((8,), \"float32\")",
        r#"        B = T.alloc_buffer((8,), "float32")
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                T.reads(A[vi])
                T.writes(B[vi])
                B[vi] = A[vi] * T.float32(2.0)
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                T.reads(B[0:8])
                T.writes(C[vi])
                C[vi] = B[7 - vi]
"#,
    );
    let mut s = Schedule::new(two_blocks);
    let c = s.get_block("C").unwrap();
    let [i] = s.get_loops(c).unwrap()[..] else {
        unreachable!()
    };
    let e = err(s.parallel(i));
    assert!(
        e.contains("reads buffer B that block \"B\" under it writes"),
        "{e}"
    );
}

// ---- the LLVM back end -----------------------------------------------------

/// A scheduled 256³ matmul compiles, runs, gives the unscheduled
/// function's result, and is timed next to it (`--nocapture` prints the
/// times).
#[cfg(feature = "llvm")]
#[test]
fn a_scheduled_matmul_compiles_and_runs_with_llvm() {
    use crate::codegen::llvm::{jit, CodegenOptions};
    let n = 256i64;
    let f = prim(
        &format!("A: T.Buffer(({n}, {n}), \"float32\"), B: T.Buffer(({n}, {n}), \"float32\"), C: T.Buffer(({n}, {n}), \"float32\")"),
        &MATMUL_BODY.replace("T.grid(13, 7, 9)", &format!("T.grid({n}, {n}, {n})")),
    );
    let s = tiled_matmul(f.clone(), 4, 16, 4);
    let a = Tensor::from_vec(&[n, n], random((n * n) as usize, 1)).unwrap();
    let b = Tensor::from_vec(&[n, n], random((n * n) as usize, 2)).unwrap();
    let mut results = Vec::new();
    // DefaultSchedule's packed GEMM for the same function, for comparison.
    let default = crate::transform::DefaultSchedule::for_host().schedule_prim_func(&f);
    for (label, func) in [
        ("unscheduled", f),
        ("scheduled", s.into_func()),
        ("DefaultSchedule", default),
    ] {
        let lib = jit(&[("mm".to_string(), func)], &CodegenOptions::default())
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        let k = lib.lookup("mm").expect("compiled");
        let mut out = vec![Tensor::from_vec(&[n, n], vec![7.0f32; (n * n) as usize]).unwrap()];
        k.call(&[&a, &b], &mut out, &[]).unwrap();
        let mut best = f64::INFINITY;
        for _ in 0..10 {
            let start = std::time::Instant::now();
            k.call(&[&a, &b], &mut out, &[]).unwrap();
            best = best.min(start.elapsed().as_secs_f64());
        }
        eprintln!(
            "{label} 256x256x256 matmul: {:.3} ms (best of 10)",
            best * 1e3
        );
        results.push(out[0].to_vec::<f32>().unwrap());
    }
    for other in &results[1..] {
        for (x, y) in results[0].iter().zip(other) {
            assert!((x - y).abs() <= 1e-4 * y.abs().max(1.0), "{x} vs {y}");
        }
    }
}

// ---- compute_at ------------------------------------------------------------

/// TVM's `test_compute_at_two_elementwise` shape: `B` moves under `C`'s
/// row loop and computes one row there.
#[test]
fn compute_at_computes_one_row_per_iteration() {
    let mut s = Schedule::new(elementwise());
    let b = s.get_block("B").unwrap();
    let c = s.get_block("C").unwrap();
    let [i, _] = s.get_loops(c).unwrap()[..] else {
        unreachable!()
    };
    s.compute_at(b, i).unwrap();
    let want = prim(
        "A: T.Buffer((8, 6), \"float32\"), C: T.Buffer((8, 6), \"float32\")",
        r#"        B = T.alloc_buffer((8, 6), "float32")
        for i in range(8):
            for ax0 in range(6):
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    vj = T.axis.spatial(6, ax0)
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * T.float32(2.0)
            for j in range(6):
                with T.block("C"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(B[vi, vj])
                    T.writes(C[vi, vj])
                    C[vi, vj] = B[vi, vj] + T.float32(1.0)
"#,
    );
    structural_equal_report(s.func(), &want).unwrap_or_else(|e| panic!("{e}\n{}", text(s.func())));
    same_outputs(&elementwise(), s.func(), &[&[8, 6]], &[&[8, 6]]);
    replays(&s, elementwise());
}

/// A stencil: each tile of 4 outputs needs 5 producer elements, which
/// overlap between tiles; the producer's domain bounds its loop.
#[test]
fn compute_at_a_stencil_tile_covers_its_halo() {
    let f = prim(
        "A: T.Buffer((9,), \"float32\"), C: T.Buffer((8,), \"float32\")",
        r#"        B = T.alloc_buffer((9,), "float32")
        for i in range(9):
            with T.block("B"):
                vi = T.axis.spatial(9, i)
                T.reads(A[vi])
                T.writes(B[vi])
                B[vi] = A[vi] * T.float32(3.0)
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                T.reads(B[vi:vi + 2])
                T.writes(C[vi])
                C[vi] = B[vi] + B[vi + 1]
"#,
    );
    let mut s = Schedule::new(f.clone());
    let b = s.get_block("B").unwrap();
    let c = s.get_block("C").unwrap();
    let [i] = s.get_loops(c).unwrap()[..] else {
        unreachable!()
    };
    let [i0, _] = s.split(i, &[None, Some(4)]).unwrap()[..] else {
        unreachable!()
    };
    s.compute_at(b, i0).unwrap();
    let t = text(s.func());
    assert!(t.contains("for ax0 in range(5):"), "{t}");
    assert!(t.contains("T.axis.spatial(9, i_0 * 4 + ax0)"), "{t}");
    same_outputs(&f, s.func(), &[&[9]], &[&[8]]);
    replays(&s, f);
}

/// A producer of the matmul's left operand computed one row at a time,
/// inside the tiled, decomposed, parallel matmul.
#[test]
fn compute_at_a_row_of_a_matmul_operand() {
    let f = prim(
        MATMUL_PARAMS,
        &format!(
            r#"        A2 = T.alloc_buffer((13, 9), "float32")
        for i, k in T.grid(13, 9):
            with T.block("A2"):
                vi, vk = T.axis.remap("SS", [i, k])
                T.reads(A[vi, vk])
                T.writes(A2[vi, vk])
                A2[vi, vk] = A[vi, vk] * T.float32(2.0)
{}"#,
            MATMUL_BODY.replace("A[vi, vk]", "A2[vi, vk]")
        ),
    );
    let mut s = Schedule::new(f.clone());
    let a2 = s.get_block("A2").unwrap();
    let c = s.get_block("C").unwrap();
    let [i, j, k] = s.get_loops(c).unwrap()[..] else {
        unreachable!()
    };
    // Under the reduction loop: one element per step, recomputed for
    // every column.
    let mut per_element = s.clone();
    per_element.compute_at(a2, k).unwrap();
    same_outputs(&f, per_element.func(), &[&[13, 9], &[9, 7]], &[&[13, 7]]);
    let e = err(s.compute_at(c, i));
    assert!(
        e.contains("compute_at: block \"C\" is not a spatial block"),
        "{e}"
    );
    let [i0, i1] = s.split(i, &[None, Some(4)]).unwrap()[..] else {
        unreachable!()
    };
    s.reorder(&[i0, j, i1, k]).unwrap();
    s.compute_at(a2, i0).unwrap();
    s.decompose_reduction(c, j).unwrap();
    let t = text(s.func());
    assert!(t.contains("for ax0, ax1 in T.grid(4, 9):"), "{t}");
    same_outputs(&f, s.func(), &[&[13, 9], &[9, 7]], &[&[13, 7]]);
    replays(&s, f);
}

#[test]
fn compute_at_refuses_readers_outside_the_loop() {
    let f = prim(
        "A: T.Buffer((8,), \"float32\"), C: T.Buffer((8,), \"float32\"), D: T.Buffer((8,), \"float32\")",
        r#"        B = T.alloc_buffer((8,), "float32")
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                T.reads(A[vi])
                T.writes(B[vi])
                B[vi] = A[vi] * T.float32(3.0)
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                T.reads(B[vi])
                T.writes(C[vi])
                C[vi] = B[vi]
        for i in range(8):
            with T.block("D"):
                vi = T.axis.spatial(8, i)
                T.reads(B[vi])
                T.writes(D[vi])
                D[vi] = B[vi]
"#,
    );
    let mut s = Schedule::new(f);
    let b = s.get_block("B").unwrap();
    let c = s.get_block("C").unwrap();
    let [i] = s.get_loops(c).unwrap()[..] else {
        unreachable!()
    };
    let e = err(s.compute_at(b, i));
    assert!(e.contains("block \"D\" outside loop l"), "{e}");
    let [bi] = s.get_loops(b).unwrap()[..] else {
        unreachable!()
    };
    let e = err(s.compute_at(c, bi));
    assert!(e.contains("compute_at: block \"C\""), "{e}");
}

/// The consumer's nest overwrites the producer's input before the loop's
/// body would run the producer: moving it there would read the new value.
#[test]
fn compute_at_refuses_to_read_an_input_after_it_is_overwritten() {
    let f = prim(
        "A: T.Buffer((8,), \"float32\"), C: T.Buffer((8,), \"float32\")",
        r#"        B = T.alloc_buffer((8,), "float32")
        for i in range(8):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                T.reads(A[vi])
                T.writes(B[vi])
                B[vi] = A[vi] * T.float32(3.0)
        for i in range(8):
            with T.block("W"):
                vi = T.axis.spatial(8, i)
                T.reads()
                T.writes(A[vi])
                A[vi] = T.float32(0.0)
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                T.reads(B[vi])
                T.writes(C[vi])
                C[vi] = B[vi]
"#,
    );
    let mut s = Schedule::new(f);
    let b = s.get_block("B").unwrap();
    let c = s.get_block("C").unwrap();
    let [i] = s.get_loops(c).unwrap()[..] else {
        unreachable!()
    };
    let e = err(s.compute_at(b, i));
    assert!(
        e.contains("or other statements write B or what the producer reads"),
        "{e}"
    );
}

// ---- reverse_compute_at ------------------------------------------------------

/// The matmul of [`MATMUL_BODY`] followed by `D = max(C, 0)` through an
/// intermediate `C`.
fn matmul_relu() -> PrimFunc {
    prim(
        "A: T.Buffer((13, 9), \"float32\"), B: T.Buffer((9, 7), \"float32\"), D: T.Buffer((13, 7), \"float32\")",
        &format!(
            r#"        C = T.alloc_buffer((13, 7), "float32")
{MATMUL_BODY}        for i, j in T.grid(13, 7):
            with T.block("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(C[vi, vj])
                T.writes(D[vi, vj])
                D[vi, vj] = T.max(C[vi, vj], T.float32(0.0))
"#
        ),
    )
}

/// The epilogue of a tiled matmul: `D` runs per row tile, after the
/// reduction of that tile, and the result is the same.
#[test]
fn reverse_compute_at_runs_the_epilogue_per_tile() {
    let f = matmul_relu();
    let mut s = Schedule::new(f.clone());
    let c = s.get_block("C").unwrap();
    let d = s.get_block("D").unwrap();
    let [i, j, k] = s.get_loops(c).unwrap()[..] else {
        unreachable!()
    };
    let e = err(s.reverse_compute_at(d, k));
    assert!(e.contains("is bound to its reduce variable vk"), "{e}");
    let [i0, i1] = s.split(i, &[Some(13), Some(1)]).unwrap()[..] else {
        unreachable!()
    };
    s.reorder(&[i0, k, i1, j]).unwrap();
    let e = err(s.reverse_compute_at(d, k));
    assert!(e.contains("is bound to its reduce variable vk"), "{e}");
    s.reorder(&[i0, i1, j, k]).unwrap();
    s.reverse_compute_at(d, i0).unwrap();
    let t = text(s.func());
    assert!(t.contains("for ax0 in range(7):"), "{t}");
    assert!(t.contains("T.axis.remap(\"SS\", [i_0, ax0])"), "{t}");
    same_outputs(&f, s.func(), &[&[13, 9], &[9, 7]], &[&[13, 7]]);
    replays(&s, f);
    // A strided producer does not cover the consumer's domain: refused.
    let strided = prim(
        "A: T.Buffer((8,), \"float32\"), C: T.Buffer((8,), \"float32\")",
        r#"        B = T.alloc_buffer((8,), "float32")
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(8, i * 2)
                T.reads(A[vi])
                T.writes(B[vi])
                B[vi] = A[vi]
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                T.reads(B[vi])
                T.writes(C[vi])
                C[vi] = B[vi]
"#,
    );
    let mut s = Schedule::new(strided);
    let b = s.get_block("B").unwrap();
    let c = s.get_block("C").unwrap();
    let [i] = s.get_loops(b).unwrap()[..] else {
        unreachable!()
    };
    let e = err(s.reverse_compute_at(c, i));
    assert!(
        e.contains("reverse_compute_at: block \"C\" cannot be shown to run for its whole domain"),
        "{e}"
    );
}

/// An elementwise consumer follows each 1×3 tile of its tiled producer
/// (the tile's row from two loops above), and the outer loop can then run
/// in parallel.
#[test]
fn reverse_compute_at_follows_dense_tiles() {
    let f = prim(
        "A: T.Buffer((12, 6), \"float32\"), C: T.Buffer((12, 6), \"float32\")",
        r#"        B = T.alloc_buffer((12, 6), "float32")
        for i, j in T.grid(12, 6):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * T.float32(2.0)
        for i, j in T.grid(12, 6):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = B[vi, vj] + T.float32(1.0)
"#,
    );
    let mut s = Schedule::new(f.clone());
    let b = s.get_block("B").unwrap();
    let c = s.get_block("C").unwrap();
    let [i, j] = s.get_loops(b).unwrap()[..] else {
        unreachable!()
    };
    let [i0, _] = s.split(i, &[None, Some(4)]).unwrap()[..] else {
        unreachable!()
    };
    let [j0, _] = s.split(j, &[None, Some(3)]).unwrap()[..] else {
        unreachable!()
    };
    s.reverse_compute_at(c, j0).unwrap();
    let t = text(s.func());
    assert!(t.contains("for ax0 in range(3):"), "{t}");
    assert!(t.contains("T.axis.spatial(12, i_0 * 4 + i_1)"), "{t}");
    same_outputs(&f, s.func(), &[&[12, 6]], &[&[12, 6]]);
    s.parallel(i0).unwrap();
    same_outputs(&f, s.func(), &[&[12, 6]], &[&[12, 6]]);
    replays(&s, f);
}

/// Loop-carried dependences: a running sum along `j` cannot run its `j`
/// loop in parallel (its rows can), nor have its loops reordered; too few
/// split factors would lose iterations.
#[test]
fn dependences_between_iterations_are_kept() {
    let scan = prim(
        "A: T.Buffer((4, 6), \"float32\"), B: T.Buffer((4, 6), \"float32\")",
        r#"        for i, j in T.grid(4, 6):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj], B[vi, vj - 1])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] + T.if_then_else(vj > 0, B[vi, T.max(vj - 1, 0)], T.float32(0.0))
"#,
    );
    let mut s = Schedule::new(scan.clone());
    let b = s.get_block("B").unwrap();
    let [i, j] = s.get_loops(b).unwrap()[..] else {
        unreachable!()
    };
    let e = err(s.parallel(j));
    assert!(e.contains("parallel: loop l2 (j)"), "{e}");
    s.parallel(i).unwrap();
    same_outputs(&scan, s.func(), &[&[4, 6]], &[&[4, 6]]);
    let e = err(s.split(j, &[Some(2), Some(2)]));
    assert!(
        e.contains("cover 4 iterations, fewer than the extent 6"),
        "{e}"
    );
    let [j0, _] = s.split(j, &[Some(2), Some(3)]).unwrap()[..] else {
        unreachable!()
    };
    // Moving `j_0` outside `i` happens to keep this scan's order, but the
    // check is conservative: a dependence must stay within one iteration of
    // every loop moved.
    let e = err(s.reorder(&[j0, i]));
    assert!(
        e.contains(
            "reorder: block \"B\" reads B that block \"B\" writes in another iteration of loop j_0"
        ),
        "{e}"
    );
    same_outputs(&scan, s.func(), &[&[4, 6]], &[&[4, 6]]);
}

// ---- cache_write -------------------------------------------------------------

/// A register tile: the matmul accumulates into `C_local`, whose tile is
/// copied back to `C` right after each tile is finished.
#[test]
fn cache_write_then_reverse_compute_at_writes_each_tile_back() {
    let mut s = Schedule::new(matmul());
    let c = s.get_block("C").unwrap();
    let [i, j, k] = s.get_loops(c).unwrap()[..] else {
        unreachable!()
    };
    let e = err(s.cache_write(c, 1, "local"));
    assert!(e.contains("there is no write 1"), "{e}");
    let copy = s.cache_write(c, 0, "local").unwrap();
    let t = text(s.func());
    assert!(t.contains("C_local = T.alloc_buffer((13, 7))"), "{t}");
    assert!(t.contains("with T.sblock(\"C_local\"):"), "{t}");
    assert!(t.contains("C[v0, v1] = C_local[v0, v1]"), "{t}");
    same_matmul(&s);
    let [i0, i1] = s.split(i, &[None, Some(13)]).unwrap()[..] else {
        unreachable!()
    };
    s.reorder(&[i0, j, i1, k]).unwrap();
    s.reverse_compute_at(copy, j).unwrap();
    same_matmul(&s);
    let py = s.trace().as_python();
    assert!(
        py.contains(
            "b4 = sch.cache_write(block=b0, write_buffer_index=0, storage_scope=\"local\")"
        ),
        "{py}"
    );
    replays(&s, matmul());
    // A second writer of the buffer: refused.
    let mut s = Schedule::new(matmul());
    let c = s.get_block("C").unwrap();
    let [_, j, _] = s.get_loops(c).unwrap()[..] else {
        unreachable!()
    };
    s.decompose_reduction(c, j).unwrap();
    let e = err(s.cache_write(c, 0, "local"));
    assert!(
        e.contains("cache_write: block \"C\" is not the only writer of C"),
        "{e}"
    );
}

/// A block under `split`'s predicate still writes its whole buffer; one
/// under any other predicate may not, and is refused.
#[test]
fn cache_write_accepts_split_predicates_only() {
    let mut s = Schedule::new(matmul());
    let c = s.get_block("C").unwrap();
    let [i, _, _] = s.get_loops(c).unwrap()[..] else {
        unreachable!()
    };
    s.split(i, &[None, Some(4)]).unwrap();
    s.cache_write(c, 0, "local").unwrap();
    same_matmul(&s);
    let f = prim(
        "A: T.Buffer((8,), \"float32\"), B: T.Buffer((8,), \"float32\")",
        r#"        for i in range(8):
            if i < 4:
                with T.block("B"):
                    vi = T.axis.spatial(8, i)
                    T.reads(A[vi])
                    T.writes(B[vi])
                    B[vi] = A[vi]
"#,
    );
    let mut s = Schedule::new(f);
    let b = s.get_block("B").unwrap();
    let e = err(s.cache_write(b, 0, "local"));
    assert!(e.contains("has the predicate"), "{e}");
}

/// Moving a block under a parallel loop: the stencil's halos overlap
/// between iterations, so compute_at refuses; a tile-owning parallel loop
/// is fine for reverse_compute_at.
#[test]
fn moving_blocks_under_parallel_loops() {
    let f = prim(
        "A: T.Buffer((9,), \"float32\"), C: T.Buffer((8,), \"float32\")",
        r#"        B = T.alloc_buffer((9,), "float32")
        for i in range(9):
            with T.block("B"):
                vi = T.axis.spatial(9, i)
                T.reads(A[vi])
                T.writes(B[vi])
                B[vi] = A[vi] * T.float32(3.0)
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                T.reads(B[vi:vi + 2])
                T.writes(C[vi])
                C[vi] = B[vi] + B[vi + 1]
"#,
    );
    let mut s = Schedule::new(f);
    let b = s.get_block("B").unwrap();
    let c = s.get_block("C").unwrap();
    let [i] = s.get_loops(c).unwrap()[..] else {
        unreachable!()
    };
    let [i0, _] = s.split(i, &[None, Some(4)]).unwrap()[..] else {
        unreachable!()
    };
    s.parallel(i0).unwrap();
    let e = err(s.compute_at(b, i0));
    assert!(
        e.contains("loop i_0 above runs its iterations at once"),
        "{e}"
    );

    let f = matmul_relu();
    let mut s = Schedule::new(f.clone());
    let c = s.get_block("C").unwrap();
    let d = s.get_block("D").unwrap();
    let [i, j, _] = s.get_loops(c).unwrap()[..] else {
        unreachable!()
    };
    s.parallel(i).unwrap();
    s.reverse_compute_at(d, j).unwrap();
    same_outputs(&f, s.func(), &[&[13, 9], &[9, 7]], &[&[13, 7]]);
}

// ---- reverse_compute_inline and cache_read -----------------------------------

/// TVM's `test_reverse_compute_inline_elementwise`: the consumer goes, the
/// producer keeps its name and computes `A * 2 + 1` into `C`.
#[test]
fn reverse_compute_inline_gives_tvms_elementwise() {
    let want = prim(
        "A: T.Buffer((8, 6), \"float32\"), C: T.Buffer((8, 6), \"float32\")",
        r#"        for i, j in T.grid(8, 6):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = A[vi, vj] * T.float32(2.0) + T.float32(1.0)
"#,
    );
    let mut s = Schedule::new(elementwise());
    let c = s.get_block("C").unwrap();
    s.reverse_compute_inline(c).unwrap();
    structural_equal_report(s.func(), &want).unwrap_or_else(|e| panic!("{e}\n{}", text(s.func())));
    same_outputs(&elementwise(), s.func(), &[&[8, 6]], &[&[8, 6]]);
    assert!(s
        .trace()
        .as_python()
        .contains("sch.reverse_compute_inline(block=b0)"));
    replays(&s, elementwise());
}

/// A consumer that reads the intermediate transposed and reads a second
/// input: the producer's variables take the consumer's places.
#[test]
fn reverse_compute_inline_maps_a_transposed_read() {
    let f = prim(
        "A: T.Buffer((8, 6), \"float32\"), E: T.Buffer((6, 8), \"float32\"), C: T.Buffer((6, 8), \"float32\")",
        r#"        B = T.alloc_buffer((8, 6), "float32")
        for i, j in T.grid(8, 6):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * T.float32(2.0)
        for i, j in T.grid(6, 8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B[vj, vi], E[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = B[vj, vi] - E[vi, vj]
"#,
    );
    let mut s = Schedule::new(f.clone());
    let c = s.get_block("C").unwrap();
    s.reverse_compute_inline(c).unwrap();
    let t = text(s.func());
    assert!(
        t.contains("C[vj, vi] = A[vi, vj] * T.float32(2.0) - E[vj, vi]"),
        "{t}"
    );
    assert!(!t.contains("alloc_buffer"), "{t}");
    same_outputs(&f, s.func(), &[&[8, 6], &[6, 8]], &[&[6, 8]]);
    replays(&s, f);
}

/// What `reverse_compute_inline` refuses: a reduction producer, a
/// consumer reading two points, a second reader of the intermediate.
#[test]
fn reverse_compute_inline_refuses_what_would_change_results() {
    let mut s = Schedule::new(matmul_relu());
    let d = s.get_block("D").unwrap();
    let e = err(s.reverse_compute_inline(d));
    assert!(
        e.contains("the producer \"C\" of C must be a spatial block without init"),
        "{e}"
    );
    let two_points = prim(
        "A: T.Buffer((6, 6), \"float32\"), C: T.Buffer((6, 6), \"float32\")",
        r#"        B = T.alloc_buffer((6, 6), "float32")
        for i, j in T.grid(6, 6):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * T.float32(2.0)
        for i, j in T.grid(6, 6):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B[vi, vj], B[vj, vi])
                T.writes(C[vi, vj])
                C[vi, vj] = B[vi, vj] + B[vj, vi]
"#,
    );
    let mut s = Schedule::new(two_points);
    let c = s.get_block("C").unwrap();
    let e = err(s.reverse_compute_inline(c));
    assert!(e.contains("reads B at more than one point"), "{e}");
    let two_readers = prim(
        "A: T.Buffer((6,), \"float32\"), C: T.Buffer((6,), \"float32\"), D: T.Buffer((6,), \"float32\")",
        r#"        B = T.alloc_buffer((6,), "float32")
        for i in range(6):
            with T.block("B"):
                vi = T.axis.spatial(6, i)
                T.reads(A[vi])
                T.writes(B[vi])
                B[vi] = A[vi] * T.float32(2.0)
        for i in range(6):
            with T.block("C"):
                vi = T.axis.spatial(6, i)
                T.reads(B[vi])
                T.writes(C[vi])
                C[vi] = B[vi] + T.float32(1.0)
        for i in range(6):
            with T.block("D"):
                vi = T.axis.spatial(6, i)
                T.reads(B[vi])
                T.writes(D[vi])
                D[vi] = B[vi] + T.float32(3.0)
"#,
    );
    let mut s = Schedule::new(two_readers.clone());
    let c = s.get_block("C").unwrap();
    let e = err(s.reverse_compute_inline(c));
    assert!(e.contains("is also read by block \"D\""), "{e}");
    assert_eq!(s.func(), &two_readers);
    assert!(s
        .trace()
        .insts
        .iter()
        .all(|i| !matches!(i, Instruction::ReverseComputeInline { .. })));
}

/// `cache_read` copies `A` into `A_shared` before the matmul's nest; after
/// `compute_at` the copy runs per row, and the result is the same.
#[test]
fn cache_read_then_compute_at_copies_a_row_per_iteration() {
    let mut s = Schedule::new(matmul());
    let c = s.get_block("C").unwrap();
    let e = err(s.cache_read(c, 2, "shared"));
    assert!(e.contains("there is no read 2"), "{e}");
    let copy = s.cache_read(c, 0, "shared").unwrap();
    let t = text(s.func());
    assert!(t.contains("A_shared = T.alloc_buffer((13, 9))"), "{t}");
    assert!(t.contains("A_shared[v0, v1] = A[v0, v1]"), "{t}");
    assert!(t.contains("A_shared[vi, vk] * B[vk, vj]"), "{t}");
    assert!(
        t.find("T.sblock(\"A_shared\")") < t.find("T.sblock(\"C\")"),
        "{t}"
    );
    same_matmul(&s);
    let [i, _, _] = s.get_loops(c).unwrap()[..] else {
        unreachable!()
    };
    s.compute_at(copy, i).unwrap();
    same_matmul(&s);
    let py = s.trace().as_python();
    assert!(
        py.contains("b1 = sch.cache_read(block=b0, read_buffer_index=0, storage_scope=\"shared\", consumer_blocks=[b0])"),
        "{py}"
    );
    replays(&s, matmul());
}

/// A block whose own nest writes the buffer it would cache is refused:
/// the copy, placed before the nest, would miss the write.
#[test]
fn cache_read_refuses_a_buffer_written_in_the_same_nest() {
    let mut s = Schedule::new(elementwise());
    let b = s.get_block("B").unwrap();
    let c = s.get_block("C").unwrap();
    let [i, _] = s.get_loops(c).unwrap()[..] else {
        unreachable!()
    };
    s.compute_at(b, i).unwrap();
    let before = s.func().clone();
    let e = err(s.cache_read(c, 0, "local"));
    assert!(
        e.contains("cache_read: block \"C\" shares its loop nest with a write of B"),
        "{e}"
    );
    assert_eq!(s.func(), &before);
}

/// Vectorizing a loop whose block reads what it writes needs the block's
/// bindings to be injective; `split`'s bindings are shown so without
/// enumerating the loops, so a 2048 × 2048 tile loop vectorizes as a
/// 16 × 16 one does.
#[test]
fn vectorize_proves_split_bindings_injective_at_any_size() {
    for n in [16, 2048] {
        let f = matmul_of(n, n, 4);
        let mut s = Schedule::new(f);
        let c = s.get_block("C").unwrap();
        let [i, j, k] = s.get_loops(c).unwrap()[..] else {
            unreachable!()
        };
        let [i0, i1] = s.split(i, &[None, Some(8)]).unwrap()[..] else {
            unreachable!()
        };
        let [j0, j1] = s.split(j, &[None, Some(16)]).unwrap()[..] else {
            unreachable!()
        };
        s.reorder(&[i0, j0, k, i1, j1]).unwrap();
        s.decompose_reduction(c, k).unwrap();
        s.vectorize(j1).unwrap_or_else(|e| panic!("n = {n}: {e}"));
        if n == 16 {
            same_outputs(
                &matmul_of(16, 16, 4),
                s.func(),
                &[&[16, 4], &[4, 16]],
                &[&[16, 16]],
            );
        }
    }
}

/// `C = A · B` for `A` of `m × k` and `B` of `k × n`, one block `C` under
/// loops `i, j, k`.
pub(crate) fn matmul_of(m: i64, n: i64, k: i64) -> PrimFunc {
    prim(
        &format!("A: T.Buffer(({m}, {k}), \"float32\"), B: T.Buffer(({k}, {n}), \"float32\"), C: T.Buffer(({m}, {n}), \"float32\")"),
        &format!(
            r#"        for i, j, k in T.grid({m}, {n}, {k}):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk], B[vk, vj])
                T.writes(C[vi, vj])
                with T.init():
                    C[vi, vj] = T.float32(0.0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"#
        ),
    )
}

mod annotate;
mod blockize;
mod set_scope;
mod tensorize;
