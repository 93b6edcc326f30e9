//! Case 5's schedule for a `B` read where it is ([`Gemm::b_in_place`]):
//! one product whose `B` rows are contiguous and spread over the L1
//! cache's sets, and whose `A` is read in place and fits a core's L2
//! cache. A pointwise convolution of one NCHW image is such a product,
//! `W[o, c] · X[c, h · w]`.
//!
//! ```text
//! for p in panels · parts (Parallel):        panel p / parts, row part p % parts
//!   j0 = (p / parts) · NR
//!   for kc in K by slices of at most IN_PLACE_KC:
//!     for it in the part's row tiles:         one MR × NR register tile
//!       acc = 0
//!       for kk: acc[r, c] += A(i0 + r, kc + kk) · B(kc + kk, j0 + c)
//!       C[tile] = (first kc ? init : C[tile]) + acc    epilogue on the last kc
//! ```
//!
//! Each iteration keeps a `kc × NR` panel of `B` in the L1 cache while
//! its row tiles stream `A` from L2: the BLIS order, with `B`'s column
//! panels as the parallel loop. The columns left of whole panels
//! (`N % NR`) are one more panel of narrower tiles: whole vectors of
//! [`VECTOR_LANES`], then the rest as one shorter vector. Nothing reads
//! past `N`, and nothing is copied.
//!
//! The packed schedule copies all of `B` (here the whole image) on every
//! call and runs its row chunks in parallel over every column. On a
//! 2-core Xeon, GoogLeNet's 256 → 128 pointwise convolution of a
//! 28 × 28 image took 0.27 ms packed and 0.19 ms this way.

use super::*;
use crate::arith::gcd;

/// The most bytes of `A` read in place by every panel: half a core's L2
/// cache, where it stays while the panels stream past.
pub const IN_PLACE_A_MAX_BYTES: i64 = 1 << 20;
/// The longest slice of `k` per panel: 256 rows of a 32-column panel of
/// `float32` are 32 KiB, within the L1 data cache.
pub const IN_PLACE_KC: i64 = 256;
/// The fewest parallel iterations: the row tiles are cut into parts when
/// there are fewer panels (a 14 × 14 image is 7 panels of 32 pixels), so
/// that the threads finish together.
pub const IN_PLACE_MIN_TASKS: i64 = 16;
/// The L1 data cache's set stride in bytes (64 sets of 64-byte lines,
/// every x86-64 core since Nehalem): rows of `B` whose stride is a
/// multiple of a large power of two within it fall into few sets.
const L1_WAY_BYTES: i64 = 4096;
/// The largest power of two `B`'s row stride in bytes may be a multiple
/// of: its `k` rows then fall into at least `L1_WAY_BYTES / 64` = 64
/// sets. A 56 × 56 image's rows (12544 bytes, a multiple of 256) fall
/// into 16, and a panel of 256 of them would evict itself.
const IN_PLACE_STRIDE_ALIGN_MAX: i64 = 64;

impl Gemm<'_> {
    /// Whether `B` is read where it is (module docs): a single product
    /// (every batch axis of extent 1, the row chunks in parallel) of
    /// constant shape, wider than one panel; `B` not prepacked nor
    /// read transposed but one load contiguous along `j` whose stride
    /// along `k` spreads its rows over the L1 cache's sets; `A` read in
    /// place, at most [`IN_PLACE_A_MAX_BYTES`].
    pub(in super::super) fn b_in_place(&self) -> bool {
        if self.b_panels.is_some()
            || self.b_transposed
            || self.parallel != GemmParallel::Chunks
            || !self.a_in_place()
        {
            return false;
        }
        let batch = &self.nest.spatial[..self.nest.spatial.len() - 2];
        if batch.iter().any(|a| a.extent.as_int() != Some(1)) {
            return false;
        }
        let (i, j, k) = self.axes();
        let (Some(m), Some(n), Some(depth)) =
            (i.extent.as_int(), j.extent.as_int(), k.extent.as_int())
        else {
            return false;
        };
        let PrimExprKind::BufferLoad(buf, idx) = self.b.kind() else {
            return false;
        };
        let offset = Analyzer::new().simplify(&buf.offset_of(idx));
        let Some(stride) = linear_coeff(&offset, &k.var) else {
            return false;
        };
        let b_bytes = i64::from(buf.dtype().bits() / 8);
        let a_bytes = i64::from(self.nest.buffer.dtype().bits() / 8);
        let stride_bytes = stride * b_bytes;
        linear_coeff(&offset, &j.var) == Some(1)
            && stride >= n
            && gcd(stride_bytes.unsigned_abs(), L1_WAY_BYTES as u64)
                <= IN_PLACE_STRIDE_ALIGN_MAX as u64
            && n > self.nr
            && depth >= GEMM_MIN_DEPTH
            && m * depth * a_bytes <= IN_PLACE_A_MAX_BYTES
    }

    /// The schedule of the module docs.
    pub(in super::super) fn column_panels(&self) -> Stmt {
        let nest = self.nest;
        let n = nest.spatial.len();
        let batch = new_loops(&nest.spatial[..n - 2]);
        let base = identity(&batch);
        let (i, j, k) = self.axes();
        let int_of = |e: &PrimExpr| e.as_int().expect("b_in_place: constant shapes");
        let (m, nn, depth) = (int_of(&i.extent), int_of(&j.extent), int_of(&k.extent));
        let loops = |nr: i64| Loops {
            dtype: nest.index_dtype(),
            an: Analyzer::new(),
            nr,
            mr: self.mr,
        };
        let lp = loops(self.nr);
        let (full, rest) = (nn / self.nr, nn % self.nr);
        let panels = full + i64::from(rest > 0);
        let row_tiles = (m + self.mr - 1) / self.mr;
        let parts = ((IN_PLACE_MIN_TASKS + panels - 1) / panels).clamp(1, row_tiles);
        let k_blocks = (depth + IN_PLACE_KC - 1) / IN_PLACE_KC;
        let kc_len = (depth + k_blocks - 1) / k_blocks;
        // The tiles of columns `j0 ..` of the tile width `lp.nr`: the `k`
        // slices around the part's row tiles `[t0, t1)`.
        let tiles = |lp: &Loops, j0: PrimExpr, t0: &PrimExpr, t1: &PrimExpr| {
            lp.count("kc_o", lp.int(k_blocks), ForKind::Serial, |kco| {
                let first = choice(kco.clone().eq_(lp.int(0)));
                let last = choice(kco.clone().eq_(lp.int(k_blocks - 1)));
                lp.bind("kc", kco * lp.int(kc_len), |kc| {
                    let kl = lp.int(kc_len).min(lp.int(depth) - kc.clone());
                    lp.bind("kl", kl, |kl| {
                        let sl = Slice {
                            jc: lp.int(0),
                            nc: lp.int(nn),
                            kc,
                            kl,
                            first,
                            last,
                        };
                        let extent = lp.simplify(t1.clone() - t0.clone());
                        lp.range("it", t0.clone(), extent, ForKind::Serial, |it| {
                            lp.bind("i0", it.clone() * lp.int(self.mr), |i0| {
                                let tile = Tile {
                                    it,
                                    jt: lp.int(0),
                                    i0,
                                    j0: j0.clone(),
                                };
                                self.micro_kernel(lp, &tile, None, BPanel::InPlace, &base, &sl)
                            })
                        })
                    })
                })
            })
        };
        let body = lp.count("p", lp.int(panels * parts), ForKind::Parallel, |p| {
            let jt = lp.simplify(p.clone().floordiv(lp.int(parts)));
            let q = lp.simplify(p.floormod(lp.int(parts)));
            let start = |q: PrimExpr| lp.simplify((q * lp.int(row_tiles)).floordiv(lp.int(parts)));
            let (t0, t1) = (start(q.clone()), start(q + lp.int(1)));
            let whole = || tiles(&lp, lp.simplify(jt.clone() * lp.int(self.nr)), &t0, &t1);
            if rest == 0 {
                return whole();
            }
            // The last panel: tiles of whole vectors, then of the rest.
            let vectors = rest / VECTOR_LANES * VECTOR_LANES;
            let narrow = [(0, vectors), (vectors, rest - vectors)]
                .into_iter()
                .filter(|&(_, w)| w > 0)
                .map(|(at, w)| tiles(&loops(w), lp.int(full * self.nr + at), &t0, &t1))
                .collect();
            // `b_in_place` takes products wider than one panel: `full` ≥ 1.
            Stmt::IfThenElse {
                cond: jt.clone().lt(lp.int(full)),
                then_case: Box::new(whole()),
                else_case: Some(Box::new(seq(narrow))),
            }
        });
        super::super::util::nest(&batch, body, None)
    }
}
