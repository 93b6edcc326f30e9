//! Case 5 for a single row on prepacked panels: a matrix-vector product
//! (GEMV), as a classifier at batch 1 or a language model's decode step
//! runs it. The weight is read once, so the product is bound by the speed
//! at which the panels stream in from memory, not by the FMAs.
//!
//! ```text
//! for b in batch (Serial):
//!   for p in ⌈P / 2⌉ (Parallel):                 panels 2p and 2p + 1 of the P
//!     acc = 0                                     [2, W]
//!     for k: acc[r, c] += A(0, k) · Bp[min(2p + r, P - 1), k, c]
//!     C[0, (2p + r) · W + c] = init + acc[r, c]   epilogue; columns below N
//! ```
//!
//! A row of a panel (`W` = 32 columns, 128 bytes) is two whole cache
//! lines, so each task reads two contiguous streams. The register tiles of
//! [`Gemm::packed`] are half a panel wide and read every other pair of
//! lines per pass, and with one row they compute the same memory-bound
//! product at half the speed: on a 2-core AVX2 EPYC, a 1 × 4096 by
//! 4096 × 4096 product out of DRAM took 8.8–9.8 ms with tiles of 4 × 16,
//! 3.7–4.0 ms with one panel per task and 2.9–3.6 ms with two
//! (onnxruntime: 4.1–4.8 ms). With an odd number of panels the last task
//! reads its one panel twice and stores the first.

use super::*;

/// The panels one task reads side by side: two streams of the weight.
pub const GEMV_PANELS: i64 = 2;

impl Gemm<'_> {
    /// The GEMV schedule of the module docs for a product of one row
    /// whose `B` is `panels`, `w` columns each (`Gemm::b_panels`).
    pub(super) fn gemv(&self, panels: &Buffer, w: i64) -> Stmt {
        let nest = self.nest;
        let n = nest.spatial.len();
        let batch = new_loops(&nest.spatial[..n - 2]);
        let base = identity(&batch);
        let (i, j, k) = self.axes();
        let lp = Loops {
            dtype: nest.index_dtype(),
            an: Analyzer::new(),
            nr: w,
            mr: GEMV_PANELS,
        };
        let dt = nest.buffer.dtype();
        let nn = lp.simplify(j.extent.clone().cast(lp.dtype));
        let depth = lp.simplify(k.extent.clone().cast(lp.dtype));
        let count = lp.ceil_div(&nn, w);
        let work = (nn.clone() * depth.clone()).as_int();
        let kind = match work {
            Some(work) if work < PARALLEL_MIN_WORK => ForKind::Serial,
            _ => ForKind::Parallel,
        };
        let zero = lp.int(0);
        let tasks = lp.ceil_div(&count, GEMV_PANELS);
        let body = lp.count("p", tasks, kind, |p| {
            let first = lp.simplify(p * lp.int(GEMV_PANELS));
            let acc = Buffer::new("acc", vec![lp.int(GEMV_PANELS), lp.int(w)], dt);
            let init = lp.tile(|r, c| Stmt::BufferStore {
                buffer: acc.clone(),
                value: PrimExpr::float(dt, 0.0),
                indices: vec![r, c],
            });
            let last_panel = lp.simplify(count.clone() - lp.int(1));
            let update = lp.range("kk", zero.clone(), depth.clone(), ForKind::Serial, |q| {
                lp.tile(|r, c| {
                    let mut map = base.clone();
                    map.insert(i.var.clone(), zero.clone().cast(i.var.dtype()));
                    map.insert(k.var.clone(), q.clone().cast(k.var.dtype()));
                    let a = lp.simplify(self.a.substitute_map(&map));
                    let panel = lp.simplify((first.clone() + r.clone()).min(last_panel.clone()));
                    let b = PrimExpr::load(panels, vec![panel, q.clone(), c.clone()]);
                    let at = PrimExpr::load(&acc, vec![r.clone(), c.clone()]);
                    Stmt::BufferStore {
                        buffer: acc.clone(),
                        value: at + a * b,
                        indices: vec![r, c],
                    }
                })
            });
            // Output column `j0 + r·W + c` of the two panels' sums.
            let j0 = lp.simplify(first.clone() * lp.int(w));
            let store = |sums: &Buffer, r: PrimExpr, c: PrimExpr| {
                let sum = PrimExpr::load(sums, vec![r.clone(), c.clone()]);
                let col = lp.simplify(r * lp.int(w)) + c;
                let at = (&zero, &j0, zero.clone(), col);
                tile_store(nest, (i, j), &base, at, sum, &Ok(true), &Ok(true))
            };
            let whole = choice(((first.clone() + lp.int(GEMV_PANELS)) * lp.int(w)).le(nn.clone()));
            let whole_tile = || lp.tile(|r, c| store(&acc, r, c));
            // The last task: each panel's columns below `N` through a copy,
            // as the packed schedule's edge tiles.
            let edge_tile = || {
                let edge = Buffer::new("acc_edge", vec![lp.int(GEMV_PANELS), lp.int(w)], dt);
                let copy = lp.tile(|r, c| Stmt::BufferStore {
                    buffer: edge.clone(),
                    value: PrimExpr::load(&acc, vec![r.clone(), c.clone()]),
                    indices: vec![r, c],
                });
                let rows = lp.range(
                    "r",
                    zero.clone(),
                    lp.int(GEMV_PANELS),
                    ForKind::Serial,
                    |r| {
                        let start = j0.clone() + r.clone() * lp.int(w);
                        let cols = lp.simplify(lp.int(w).min(nn.clone() - start).max(zero.clone()));
                        lp.range("c", zero.clone(), cols, ForKind::Vectorized, |c| {
                            store(&edge, r, c)
                        })
                    },
                );
                scope("acc_edge", vec![edge], seq(vec![copy, rows]))
            };
            let write = branch(&whole, whole_tile, edge_tile);
            scope("acc", vec![acc.clone()], seq(vec![init, update, write]))
        });
        super::super::util::nest(&batch, body, None)
    }
}
