//! Compaction after a schedule: the matmul's register tile, and buffers
//! that must stay whole; the interpreter checks every result.

use super::*;
use crate::tir::interp::run;
use crate::tir::schedule::tests::{matmul_of, prim, text};
use crate::tir::schedule::Schedule;
use relax_runtime::Tensor;

fn matmul() -> PrimFunc {
    matmul_of(16, 32, 9)
}

fn output(f: &PrimFunc) -> Vec<f32> {
    let a = Tensor::from_vec(&[16, 9], (0..144).map(|i| (i % 7) as f32 - 3.0).collect()).unwrap();
    let b = Tensor::from_vec(&[9, 32], (0..288).map(|i| (i % 5) as f32 * 0.5).collect()).unwrap();
    let mut c = vec![Tensor::from_vec(&[16, 32], vec![7.0f32; 512]).unwrap()];
    run(f, &[&a, &b], &mut c, &[]).unwrap_or_else(|e| panic!("{e}\n{}", text(f)));
    c[0].to_vec::<f32>().unwrap()
}

/// The register tile: after `cache_write` and `reverse_compute_at`, the
/// matrix-sized `C_local` becomes a 4 × 16 tile allocated per tile.
#[test]
fn a_cache_written_back_per_tile_becomes_the_tile() {
    let mut s = Schedule::new(matmul());
    let c = s.get_block("C").unwrap();
    let [i, j, k] = s.get_loops(c).unwrap()[..] else {
        unreachable!()
    };
    let [i0, i1] = s.split(i, &[None, Some(4)]).unwrap()[..] else {
        unreachable!()
    };
    let [j0, j1] = s.split(j, &[None, Some(16)]).unwrap()[..] else {
        unreachable!()
    };
    s.reorder(&[i0, j0, k, i1, j1]).unwrap();
    let copy = s.cache_write(c, 0, "local").unwrap();
    s.reverse_compute_at(copy, j0).unwrap();
    let before = text(s.func());
    assert!(
        before.contains("C_local = T.alloc_buffer((16, 32))"),
        "{before}"
    );
    let compacted = compact_buffer_allocation(s.func());
    let t = text(&compacted);
    assert!(!t.contains("T.alloc_buffer((16, 32))"), "{t}");
    // Allocated per tile, under the tile loops, indexed from the tile.
    let tile = t
        .find("C_local = T.alloc_buffer((4, 16))")
        .expect("the tile");
    assert!(
        t.find("for i_0, j_0 in T.grid(4, 2):")
            .is_some_and(|l| l < tile),
        "{t}"
    );
    assert!(
        t.contains("C_local[vi - i_0 * 4, vj - j_0 * 16] = T.float32(0.0)"),
        "{t}"
    );
    assert_eq!(output(&compacted), output(&matmul()), "{t}");
}

/// An intermediate written by one nest and read by another spans the
/// whole function: it stays where it is.
#[test]
fn a_buffer_used_by_two_nests_stays_whole() {
    let f = prim(
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
    );
    assert_eq!(compact_buffer_allocation(&f), f);
    // Under `compute_at`, one row of B per iteration of `i`.
    let mut s = Schedule::new(f.clone());
    let b = s.get_block("B").unwrap();
    let c = s.get_block("C").unwrap();
    let [i, _] = s.get_loops(c).unwrap()[..] else {
        unreachable!()
    };
    s.compute_at(b, i).unwrap();
    let compacted = compact_buffer_allocation(s.func());
    let t = text(&compacted);
    assert!(!t.contains("T.alloc_buffer((8, 6)"), "{t}");
    let a = Tensor::from_vec(&[8, 6], (0..48).map(|i| i as f32).collect()).unwrap();
    let outputs = |f: &PrimFunc| {
        let mut c = vec![Tensor::from_vec(&[8, 6], vec![0.0f32; 48]).unwrap()];
        run(f, &[&a], &mut c, &[]).unwrap_or_else(|e| panic!("{e}\n{}", text(f)));
        c[0].to_vec::<f32>().unwrap()
    };
    assert_eq!(outputs(&compacted), outputs(&f), "{t}");
}
