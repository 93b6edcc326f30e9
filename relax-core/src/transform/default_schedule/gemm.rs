//! Case 5 of the module docs: a matrix product too large for the caches,
//! `C[.., i, j] = init + Σ_k A(i, k) · B(k, j)` with `B` contiguous along
//! `j` (`A` in any layout), as a packed, cache-blocked GEMM in the manner
//! of GotoBLAS and BLIS. A `B` read transposed (`x · wᵀ` with `w` passed
//! in) is packed only for many rows of a large `B` (a language model's
//! prefill): packing it is a transpose on every call, and case 4's dot
//! products read a small one (the MLP's) in place as fast.
//!
//! ```text
//! for jc in N by nc:                           B panels
//!   for kc in K by kc:
//!     B_pack[jt, kk, r] = B(kc + kk, jc + jt·NR + r)     zero past N
//!     for ic in M by a chunk of at most mc rows (Parallel):
//!       A_pack[it, kk, r] = A(ic + it·MR + r, kc + kk)   zero past M
//!                               (only when A is not contiguous along k)
//!       for jt, it:                             one MR × NR register tile
//!         acc = 0
//!         for kk: acc[r, c] += A_pack[it, kk, r] · B_pack[jt, kk, c]
//!         C[tile] = (first kc ? init : C[tile]) + acc    epilogue on the last kc
//! ```
//!
//! The packs put what the micro-kernel reads next at consecutive addresses
//! (a row of the B panel is two vector registers, a column of the A panel
//! [`GEMM_MR`] broadcasts), so its inner loop is `GEMM_MR` × 2 FMAs on
//! accumulators that stay in registers, whatever the layout of the
//! operands. `NR`, the tile's columns, follows the target's vector width
//! ([`GEMM_NR_VECTORS`]). The packs are zero-padded to whole tiles, so the micro-kernel
//! never has a tail; only the write-back of a tile that crosses the edge
//! of `C` runs element by element, through a copy of the accumulators (an
//! indexed access would keep them out of registers).
//!
//! Rows are split into at least [`GEMM_MIN_CHUNKS`] chunks (an even number)
//! so both cores of a 2-core machine get work from a few hundred rows.
//! With few rows (under two register tiles per chunk: a batch of one on
//! prepacked weights, a classifier's last layer; or under half as many
//! rows as columns, so that `B` is more than twice the size of `A`: a
//! pointwise convolution of a 7 × 7 or 14 × 14 image in NHWC) and `A`
//! not packed per chunk, the rows are
//! one chunk and its column tiles are cut into up to
//! `2 · GEMM_MIN_CHUNKS` parts, one parallel iteration each, so the
//! threads share the columns and each reads its own share of `B`, where
//! each chunk of rows would read all of it
//! (EfficientNet-B0's 1280 × 1000 classifier at batch 1: 0.70 → 0.37 ms
//! on a 2-core Xeon; on a 2-core AMD EPYC with AVX2, a 49 × 320 by
//! 320 × 1280 product 0.385 → 0.325 ms, RegNet-Y's 49 × 440 by
//! 440 × 440 0.18 → 0.15 ms). With a packed `A` and fewer row tiles than chunks,
//! each chunk's columns are cut so that every thread gets work. Many
//! products (at least [`GEMM_BATCH_PARALLEL_MIN`] in the batch axes, a
//! Winograd convolution's 36) run their batch in parallel instead, each
//! iteration one whole product with its own B pack (GoogLeNet's
//! 36 × 192 × 64 × 196 product: 1.32 → 0.85 ms). An
//! `A` contiguous along `k` (a row-major matrix, a convolution's filters)
//! is read in place ([`Gemm::a_in_place`]): a tile's `GEMM_MR` rows are as
//! many streams along `k`, and the rows past `M` of the last tile read the
//! last row again (their sums are never stored). Any other `A` is packed,
//! each chunk packing its own `A_pack`. Reading ResNet's 512 × 4608
//! filters in place, where packing them transposed six rows at a time
//! took most of the time, made its 3 × 3 layer on 7 × 7 images 3.5 times
//! faster. The sum is reassociated: each `kc`
//! slice of `k` is summed in registers, then added to the partial result
//! (numerical tests compare with a tolerance that follows from `K`).
//!
//! The block sizes ([`Blocking`]) differ by operand: a matrix product
//! ([`GEMM_BLOCKING`]) takes all of `k` up to 2048 in one slice, an
//! implicit GEMM ([`WINDOW_BLOCKING`]) slices of 256 that keep its B panel
//! in the L1 cache.
//!
//! A constant `B` that [`super::prepack`] stored as panels
//! (`Bp[j / 32, k, j % 32]`, the B pack's layout for every tile width) is
//! not packed: the micro-kernel reads the panels in place, and the packed
//! schedule runs whatever the number of rows, since nothing is left to
//! amortize.
//! A single row on such panels (a classifier at batch 1, a decode step)
//! is a GEMV bound by how fast the panels stream in: `gemm/gemv.rs` runs
//! it with whole panels, two per task, where the register tiles read half
//! a panel's row per pass.
//!
//! A `B` whose rows are contiguous and fall into many of the L1 cache's
//! sets, in one product whose `A` fits L2 (a pointwise convolution of one
//! NCHW image), is not packed either: `column_panels.rs` runs its column
//! panels in parallel, each reading `B` where it is.
//!
//! When the shape is symbolic the packed loops and the register-tiled
//! schedule of case 2/4 are both emitted, chosen at run time
//! ([`Gemm::when`]): a batch-1 call does not pack a weight matrix it reads
//! once.

use super::nest::{Axis, Nest};
use super::reduction::WHOLE_ROW_TILE_COLS;
use super::util::*;
use super::{PARALLEL_MIN_WORK, VECTOR_LANES};
use crate::arith::analyzer::Analyzer;
use crate::ir::prim_expr::{PrimExpr, PrimExprKind, TirVar};
use crate::tir::affine::{guarded_load_in, maskable};
use crate::tir::buffer_uses::expr_reads;
use crate::tir::{Block, Buffer, ForKind, Stmt};
use relax_runtime::DataType;
use std::collections::HashMap;

mod column_panels;
mod gemv;

/// Rows of the register tile (broadcasts of the A panel per `k`).
pub const GEMM_MR: i64 = 6;
/// Vector registers per row of the register tile: its columns are two
/// vector registers of the target ([`Gemm::nr`]: 32 `float32` with
/// AVX-512, 16 with AVX2, 8 with SSE2), so the tile is twelve accumulator
/// registers and the inner loop needs fifteen, within every x86-64 level's
/// register file.
pub const GEMM_NR_VECTORS: i64 = 2;
/// The cache blocking of a packed GEMM: the slice of `k` a pack holds
/// (`kc`), the most rows of `C` one chunk packs (`mc`, a multiple of
/// `GEMM_MR`) and the columns of one B panel (`nc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Blocking {
    /// The slice of `k` a pack holds.
    pub kc: i64,
    /// The most rows of `C` one chunk packs.
    pub mc: i64,
    /// The columns of one B panel.
    pub nc: i64,
}

/// The blocking of a matrix product (`B` contiguous along `j`): the whole
/// of `k` up to 2048 in one slice, so each tile of `C` is written once,
/// where slices of 256 read and wrote it back four times at `K` = 1024
/// (the micro-kernel's B panel then streams from L2, which keeps up);
/// chunks of 48 rows (a 384 KiB A pack in L2 at `K` = 2048) and B panels
/// of 1024 columns. Measured on an AVX-512 EPYC (2 threads, 1024 and 2048
/// cubed), interleaved runs: about 8% over (256, 96, 512) at both sizes.
pub const GEMM_BLOCKING: Blocking = Blocking {
    kc: 2048,
    mc: 48,
    nc: 1024,
};

/// The blocking of an implicit GEMM (a convolution, `B` gathered through
/// its window, `conv.rs`): `kc × NR` of the B panel (at most 32 KiB) stays
/// in the L1 cache while the A panels stream past, `mc × kc` (96 KiB) of A
/// in L2. The matrix blocking made ResNet's 3x3 layer 16% slower.
pub const WINDOW_BLOCKING: Blocking = Blocking {
    kc: 256,
    mc: 96,
    nc: 512,
};

/// The rows of the register tile for `rows` rows with the knob's `mr`:
/// where `mr` is twelve (Intel's AVX-512 cores) and the rows are
/// provably a multiple of 14 or 7 but not of 12 (a CNN's pixels in NHWC:
/// `batch · 49` at 7 × 7, `batch · 196` at 14 × 14), the tile of that
/// height, so the last tile is not mostly padding: 49 rows took five
/// tiles of 12 (60 rows), where seven tiles of 7 take 49. A 14 × 32 tile
/// is 28 accumulators of the 32 registers, a 7 × 32 one 14, enough for
/// two FMA units of latency four.
fn rows_tile(mr: i64, rows: &PrimExpr) -> i64 {
    if mr != super::knobs::INTEL_AVX512_GEMM_MR {
        return mr;
    }
    let divides = |d: i64| {
        let r = rows.clone();
        let dt = r.dtype();
        Analyzer::new()
            .simplify(&r.floormod(PrimExpr::int_of(dt, d)))
            .as_int()
            == Some(0)
    };
    if divides(mr) {
        return mr;
    }
    [14, 7].into_iter().find(|&d| divides(d)).unwrap_or(mr)
}

/// The rows of the register tile for a product of at most this many rows
/// on prepacked panels ([`Gemm::packed_for_rows`]).
pub const GEMM_SMALL_MR: i64 = 4;
/// The fewest row chunks (below `M / mc` the chunks shrink instead).
pub const GEMM_MIN_CHUNKS: i64 = 4;
/// The fewest products (the known part of the batch axes' extent) whose
/// batch runs in parallel, each iteration one whole product, instead of
/// each product's row chunks: a Winograd convolution's 36 products of
/// 192 × 64 × 196 (GoogLeNet) forked the thread pool twice per product.
pub const GEMM_BATCH_PARALLEL_MIN: i64 = 8;
/// The largest `A` (in elements, padded to whole tiles) packed once for
/// all of a batch ([`Gemm::a_once`]): 4 MiB of `float32`.
pub const GEMM_A_ONCE_MAX: i64 = 1 << 20;
/// The largest `B` (bytes) of a narrow product run as case 2's whole-row
/// tiles instead of packed ([`Gemm::when`]): about an L1 data cache.
pub const WHOLE_ROW_B_MAX_BYTES: i64 = 64 << 10;
/// The smallest `M` worth packing for: below it the register-tiled
/// schedules read the weights in place.
pub const GEMM_MIN_ROWS: i64 = 32;
/// The smallest `K` worth packing for.
pub const GEMM_MIN_DEPTH: i64 = 16;
/// The smallest `M` worth packing a `B` read transposed for (`x · wᵀ`
/// with `w` passed in: a language model's prefill): its pack is a
/// transpose on every call, which the rows must amortize.
pub const GEMM_TRANSPOSED_B_MIN_ROWS: i64 = 256;
/// The fewest elements of a `B` read transposed worth packing: a smaller
/// one stays in the L2 cache, and case 4's dot products read it there at
/// about the packed schedule's speed (the MLP's, from batch 16 to 256).
pub const GEMM_TRANSPOSED_B_MIN_ELEMENTS: i64 = 1 << 18;

/// A nest that is a matrix product, with its two factors.
#[derive(Clone)]
pub(super) struct Gemm<'a> {
    nest: &'a Nest,
    /// The factor of the update's term free of `j`: `A(i, k)`.
    a: PrimExpr,
    /// The factor free of `i`: `B(k, j)`.
    b: PrimExpr,
    /// Columns of the register tile.
    nr: i64,
    /// Rows of the register tile ([`GEMM_MR`], the knob `gemm_mr`).
    mr: i64,
    /// Which loop runs on the thread pool.
    pub(super) parallel: GemmParallel,
    /// The cache blocking.
    blocking: Blocking,
    /// Whether `A` is packed whole, once, before the batch loop (it does
    /// not depend on the batch and is small: a convolution's filters),
    /// instead of one slice per row chunk and batch element.
    pub(super) a_once: bool,
    /// `B` already in the B pack's layout, `Bp[j / W, k, j % W]` with `W`
    /// a multiple of the tile's columns (a constant weight that
    /// [`super::prepack`] packed at build time): the micro-kernel reads it
    /// where it is, and nothing is packed.
    b_panels: Option<(Buffer, i64)>,
    /// `B` is not contiguous along `j` (read transposed, `x · wᵀ`): its
    /// pack reads along `k` and stores element by element, so the packed
    /// schedule needs more rows to pay ([`Gemm::when`]).
    b_transposed: bool,
}

/// Which loop of the packed schedule runs in parallel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum GemmParallel {
    /// The row chunks of each product (one product, or a few).
    Chunks,
    /// The batch: the batch axes fused into one `Parallel` loop, each
    /// iteration packing its own panels (many products, each small: the
    /// output rows of a convolution).
    Batch,
    /// Nothing (too little work for the thread pool).
    Serial,
}

impl Nest {
    /// The nest as a GEMM: one reduce variable, at least two spatial ones
    /// (`.., i, j`), a float update `C[..] + x · y` where one factor is
    /// free of `j` and the other (`B`) of `i` and contiguous along `j`,
    /// neither reading `C`, and an init.
    pub(super) fn gemm(&self) -> Option<Gemm<'_>> {
        self.gemm_of(true)
    }

    /// [`Nest::gemm`], with `B` read in any layout unless
    /// `contiguous_b` (an implicit GEMM's `B` is an image read through
    /// its window: `conv.rs`).
    pub(super) fn gemm_of(&self, contiguous_b: bool) -> Option<Gemm<'_>> {
        let n = self.spatial.len();
        if self.reduce.len() != 1 || n < 2 {
            return None;
        }
        let (i, j) = (&self.spatial[n - 2], &self.spatial[n - 1]);
        let (a, b) = self.product_operands(i, j)?;
        // `B` contiguous along `j`: its pack is a vector copy. A weight read
        // transposed (`x · wᵀ`) is packed element by element on every
        // call: only for many rows and a large `B` ([`Gemm::when`]).
        let nr = self.gemm_nr();
        let b_panels = panel_layout(b, &j.var, &self.reduce[0].var).filter(|(_, w)| w % nr == 0);
        let b_transposed =
            contiguous_b && b_panels.is_none() && !contiguous(&load_coeffs(b, &j.var));
        let mr = rows_tile(self.knobs.gemm_mr, &i.extent);
        let blocking = if contiguous_b {
            self.knobs.gemm_blocking
        } else {
            self.knobs.window_blocking
        };
        // A chunk packs at most `mc` rows, whole tiles.
        let blocking = Blocking {
            mc: (blocking.mc / mr * mr).max(mr),
            ..blocking
        };
        Some(Gemm {
            nest: self,
            a: a.clone(),
            b: b.clone(),
            nr,
            mr,
            blocking,
            parallel: GemmParallel::Chunks,
            a_once: false,
            b_panels,
            b_transposed,
        })
    }

    /// The factors `(A, B)` of a matrix product's update over rows `i`
    /// and columns `j`: `A` free of `j`, `B` free of `i`.
    pub(super) fn product_operands(&self, i: &Axis, j: &Axis) -> Option<(&PrimExpr, &PrimExpr)> {
        let (x, y) = self.product_update()?;
        let free = |e: &PrimExpr, axis: &Axis| !uses_var(e, &axis.var);
        if free(x, j) && free(y, i) {
            Some((x, y))
        } else if free(y, j) && free(x, i) {
            Some((y, x))
        } else {
            None
        }
    }

    /// The factors `(A, B)` of a product's update split by the column
    /// axis `j`: `A` free of `j`, `B` reading it (an implicit GEMM's
    /// weight and image, or a direct convolution's image and weight).
    pub(super) fn factors_along(&self, j: &Axis) -> Option<(&PrimExpr, &PrimExpr)> {
        let (x, y) = self.product_update()?;
        match (uses_var(x, &j.var), uses_var(y, &j.var)) {
            (false, true) => Some((x, y)),
            (true, false) => Some((y, x)),
            _ => None,
        }
    }

    /// The columns of the packed GEMM's register tile for this nest's
    /// dtype: [`GEMM_NR_VECTORS`] vectors of the target (the knob
    /// `gemm_nr_vectors`).
    pub(super) fn gemm_nr(&self) -> i64 {
        let bits = u32::from(self.buffer.dtype().bits());
        self.knobs.gemm_nr(self.vector_bits, bits)
    }

    /// The two factors `(x, y)` of a float reduction whose update is
    /// `C[..] + x · y` (`C` the output at the store's indices, read nowhere
    /// else), with an init: the shape of a matrix product.
    pub(super) fn product_update(&self) -> Option<(&PrimExpr, &PrimExpr)> {
        let term = self.sum_update()?;
        let PrimExprKind::Mul(x, y) = term.kind() else {
            return None;
        };
        Some((x, y))
    }

    /// The term `e` of a float reduction whose update is `C[..] + e` (`C`
    /// the output at the store's indices, read nowhere else), with an
    /// init: a sum.
    pub(super) fn sum_update(&self) -> Option<&PrimExpr> {
        let dt = self.buffer.dtype();
        if !dt.is_float() || dt.lanes() != 1 {
            return None;
        }
        self.init.as_ref()?;
        let PrimExprKind::Add(l, r) = self.value.kind() else {
            return None;
        };
        let is_out = |e: &PrimExpr| matches!(e.kind(), PrimExprKind::BufferLoad(buf, idx) if *buf == self.buffer && *idx == self.indices);
        let term = match (is_out(l), is_out(r)) {
            (true, false) => r,
            (false, true) => l,
            _ => return None,
        };
        if term.dtype() != dt || expr_reads(term, &self.buffer) {
            return None;
        }
        Some(term)
    }
}

/// A choice known at build time, or the run-time condition for `true`.
pub(super) type Choice = Result<bool, PrimExpr>;

/// `then` or `otherwise` by `choice`; both when it is decided at run time.
pub(super) fn branch(
    choice: &Choice,
    then: impl FnOnce() -> Stmt,
    otherwise: impl FnOnce() -> Stmt,
) -> Stmt {
    match choice {
        Ok(true) => then(),
        Ok(false) => otherwise(),
        Err(cond) => Stmt::IfThenElse {
            cond: cond.clone(),
            then_case: Box::new(then()),
            else_case: Some(Box::new(otherwise())),
        },
    }
}

/// `first`, then `then()` where `choice` holds: unconditionally when it
/// is known to, under an `if` when it is decided at run time.
pub(super) fn then_if(first: Stmt, choice: &Choice, then: impl FnOnce() -> Stmt) -> Stmt {
    match choice {
        Ok(false) => first,
        Ok(true) => seq(vec![first, then()]),
        Err(cond) => seq(vec![
            first,
            Stmt::IfThenElse {
                cond: cond.clone(),
                then_case: Box::new(then()),
                else_case: None,
            },
        ]),
    }
}

/// `version(first, last)` for the values `first` and `last` choose: one
/// version of a tile's write-back per kind of `k` slice.
pub(super) fn per_slice(
    first: &Choice,
    last: &Choice,
    version: impl Fn(bool, bool) -> Stmt,
) -> Stmt {
    branch(
        first,
        || branch(last, || version(true, true), || version(true, false)),
        || branch(last, || version(false, true), || version(false, false)),
    )
}

/// `cond` decided by the analyzer when it can be.
pub(super) fn choice(cond: PrimExpr) -> Choice {
    let c = Analyzer::new().simplify(&cond);
    match c.as_int() {
        Some(v) => Ok(v != 0),
        None => Err(c),
    }
}

/// Builds loops over the index dtype of one nest (also for the int8
/// GEMM, `gemm_int8.rs`).
pub(super) struct Loops {
    pub(super) dtype: DataType,
    pub(super) an: Analyzer,
    /// Columns of the register tile.
    pub(super) nr: i64,
    /// Rows of the register tile ([`Loops::tile`]).
    pub(super) mr: i64,
}

impl Loops {
    pub(super) fn int(&self, v: i64) -> PrimExpr {
        PrimExpr::int_of(self.dtype, v)
    }

    pub(super) fn simplify(&self, e: PrimExpr) -> PrimExpr {
        self.an.simplify(&e)
    }

    pub(super) fn ceil_div_expr(&self, e: &PrimExpr, d: &PrimExpr) -> PrimExpr {
        self.simplify((e.clone() + d.clone() - self.int(1)).floordiv(d.clone()))
    }

    pub(super) fn ceil_div(&self, e: &PrimExpr, d: i64) -> PrimExpr {
        self.ceil_div_expr(e, &self.int(d))
    }

    /// `e` rounded up to a multiple of `d`.
    pub(super) fn round_up(&self, e: &PrimExpr, d: i64) -> PrimExpr {
        self.simplify(self.ceil_div(e, d) * self.int(d))
    }

    /// A loop `name` over `[0, extent)` around `body(var)`; just `body(0)`
    /// when the extent is 1.
    pub(super) fn count(
        &self,
        name: &str,
        extent: PrimExpr,
        kind: ForKind,
        body: impl FnOnce(PrimExpr) -> Stmt,
    ) -> Stmt {
        if extent.as_int() == Some(1) {
            return body(self.int(0));
        }
        let v = TirVar::with_dtype(name, self.dtype);
        let inner = body(PrimExpr::var(&v));
        for_(&v, self.int(0), extent, kind, inner)
    }

    /// `body(value)`, with `value` bound to a variable `name` first
    /// (`LetStmt`) unless it is a constant or a variable.
    pub(super) fn bind(
        &self,
        name: &str,
        value: PrimExpr,
        body: impl FnOnce(PrimExpr) -> Stmt,
    ) -> Stmt {
        let value = self.simplify(value);
        if value.as_int().is_some() || value.as_var().is_some() {
            return body(value);
        }
        let var = TirVar::with_dtype(name, value.dtype());
        Stmt::LetStmt {
            var: var.clone(),
            value,
            body: Box::new(body(PrimExpr::var(&var))),
        }
    }

    /// A loop `name` over `[min, min + extent)` around `body(var)`.
    pub(super) fn range(
        &self,
        name: &str,
        min: PrimExpr,
        extent: PrimExpr,
        kind: ForKind,
        body: impl FnOnce(PrimExpr) -> Stmt,
    ) -> Stmt {
        let v = TirVar::with_dtype(name, self.dtype);
        let inner = body(PrimExpr::var(&v));
        for_(&v, min, extent, kind, inner)
    }

    /// The register tile's columns around `body(column)`: one vectorized
    /// loop, or unrolled vectors of [`VECTOR_LANES`] when wider.
    pub(super) fn tile_columns(&self, body: impl FnOnce(PrimExpr) -> Stmt) -> Stmt {
        if self.nr <= VECTOR_LANES {
            return self.range(
                "c",
                self.int(0),
                self.int(self.nr),
                ForKind::Vectorized,
                body,
            );
        }
        let (u, l) = (
            TirVar::with_dtype("c_u", self.dtype),
            TirVar::with_dtype("c_l", self.dtype),
        );
        let col = PrimExpr::var(&u) * self.int(VECTOR_LANES) + PrimExpr::var(&l);
        let vec = for_(
            &l,
            self.int(0),
            self.int(VECTOR_LANES),
            ForKind::Vectorized,
            body(col),
        );
        for_(
            &u,
            self.int(0),
            self.int(self.nr / VECTOR_LANES),
            ForKind::Unrolled,
            vec,
        )
    }

    /// The register tile: unrolled rows around [`Loops::tile_columns`].
    pub(super) fn tile(&self, body: impl FnOnce(PrimExpr, PrimExpr) -> Stmt) -> Stmt {
        self.range(
            "r",
            self.int(0),
            self.int(self.mr),
            ForKind::Unrolled,
            |r| self.tile_columns(|c| body(r, c)),
        )
    }
}

/// `stmts` in sequence, where a statement that binds a variable (`LetStmt`)
/// takes the statements after it into its body: a `LetStmt`'s scope runs
/// to the end of its block in TVMScript text, so this is the form that
/// prints and parses back as itself.
pub(super) fn let_seq(mut stmts: Vec<Stmt>) -> Stmt {
    let at = stmts
        .iter()
        .position(|s| matches!(s, Stmt::LetStmt { .. }))
        .filter(|&at| at + 1 < stmts.len());
    if let Some(at) = at {
        let rest = stmts.split_off(at + 1);
        if let Some(Stmt::LetStmt { var, value, body }) = stmts.pop() {
            let mut inner = vec![*body];
            inner.extend(rest);
            stmts.push(Stmt::LetStmt {
                var,
                value,
                body: Box::new(let_seq(inner)),
            });
        }
    }
    seq(stmts)
}

/// A block that only scopes `buffers`.
pub(super) fn scope(name: &str, buffers: Vec<Buffer>, body: Stmt) -> Stmt {
    Stmt::Block(Box::new(Block {
        name: name.to_string(),
        iter_vars: vec![],
        iter_values: vec![],
        reads: vec![],
        writes: vec![],
        init: None,
        body: Box::new(body),
        alloc_buffers: buffers,
        annotations: crate::ir::Attrs::new(),
    }))
}

/// Which operand a pack holds.
#[derive(Clone, Copy)]
enum Side {
    A,
    B,
}

impl Gemm<'_> {
    /// The variables of the reduction `k` and of the columns `j`.
    pub(super) fn k_and_j(&self) -> (&TirVar, &TirVar) {
        let (_, j, k) = self.axes();
        (&k.var, &j.var)
    }

    /// The factor `B(k, j)`.
    pub(super) fn b(&self) -> &PrimExpr {
        &self.b
    }

    fn axes(&self) -> (&Axis, &Axis, &Axis) {
        let n = self.nest.spatial.len();
        let s = &self.nest.spatial;
        (&s[n - 2], &s[n - 1], &self.nest.reduce[0])
    }

    /// Whether all of `A` may be packed once before the batch loop: it
    /// reads no batch variable, and its pack (`M` and `K` known) is at
    /// most [`GEMM_A_ONCE_MAX`] elements.
    pub(super) fn a_packs_once(&self) -> bool {
        let nest = self.nest;
        let n = nest.spatial.len();
        let free = nest.spatial[..n - 2]
            .iter()
            .all(|ax| !uses_var(&self.a, &ax.var));
        let (i, _, k) = self.axes();
        let size = match (i.extent.as_int(), k.extent.as_int()) {
            (Some(m), Some(k)) => (m + self.mr - 1) / self.mr * self.mr * k,
            _ => return false,
        };
        free && size <= GEMM_A_ONCE_MAX
    }

    /// Whether the batch axes run in parallel, each iteration a whole
    /// product ([`GemmParallel::Batch`]): their known extent is at least
    /// [`GEMM_BATCH_PARALLEL_MIN`] products, which share the threads evenly
    /// with one fork of the pool per call.
    pub(super) fn batch_parallel(&self) -> bool {
        let n = self.nest.spatial.len();
        super::conv::static_product(&self.nest.spatial[..n - 2])
            .is_some_and(|p| p >= GEMM_BATCH_PARALLEL_MIN)
    }

    /// Whether the micro-kernel reads `A` where it is, unpacked: it is one
    /// load whose offset is contiguous along `k` (a row-major matrix, or
    /// a convolution's filters), so a tile's rows are `GEMM_MR` streams
    /// along `k`.
    fn a_in_place(&self) -> bool {
        let (_, _, k) = self.axes();
        let PrimExprKind::BufferLoad(buf, idx) = self.a.kind() else {
            return false;
        };
        let offset = Analyzer::new().simplify(&buf.offset_of(idx));
        linear_coeff(&offset, &k.var) == Some(1)
    }

    /// The packed schedule, on prepacked panels with rows that may be few
    /// (a symbolic batch, or a constant one of at most
    /// [`GEMM_SMALL_MR`] rows): one row as a GEMV (`gemm/gemv.rs`), else
    /// register tiles of `GEMM_SMALL_MR` rows up to that many rows
    /// ([`Gemm::packed_for_tiles`]); both chosen at run time when the rows
    /// are symbolic.
    pub(super) fn packed_for_rows(&self) -> Stmt {
        let (i, _, _) = self.axes();
        let Some((panels, w)) = &self.b_panels else {
            return self.packed_for_tiles();
        };
        let idt = self.nest.index_dtype();
        let rows = i.extent.clone().cast(idt);
        let gemv = || self.gemv(panels, *w);
        let tiles = || self.packed_for_tiles();
        branch(&choice(rows.eq_(PrimExpr::int_of(idt, 1))), gemv, tiles)
    }

    /// The packed schedule, where prepacked panels take register tiles of
    /// `GEMM_SMALL_MR` rows up to that many rows: a tile of twelve rows
    /// over one row of `A` repeats its broadcasts and multiply-adds twelve
    /// times, where four keep the loads of the panels the bound.
    fn packed_for_tiles(&self) -> Stmt {
        let (i, _, _) = self.axes();
        if self.b_panels.is_none() || self.mr <= GEMM_SMALL_MR {
            return self.packed();
        }
        let small = Gemm {
            mr: GEMM_SMALL_MR,
            ..self.clone()
        };
        let idt = self.nest.index_dtype();
        let rows = i.extent.clone().cast(idt);
        match choice(rows.le(PrimExpr::int_of(idt, GEMM_SMALL_MR))) {
            Ok(true) => small.packed(),
            Ok(false) => self.packed(),
            Err(cond) => Stmt::IfThenElse {
                cond,
                then_case: Box::new(small.packed()),
                else_case: Some(Box::new(self.packed())),
            },
        }
    }

    /// When the packed schedule pays: `M ≥ GEMM_MIN_ROWS`, `N > NR / 2`,
    /// `K ≥ GEMM_MIN_DEPTH` (so the reduction is never empty) and
    /// `M · N · K ≥` [`PARALLEL_MIN_WORK`] (so the row chunks always run in
    /// parallel, and smaller products, which fit the caches, are not
    /// packed). A `B` read transposed needs `M ≥`
    /// [`GEMM_TRANSPOSED_B_MIN_ROWS`] and `K · N ≥`
    /// [`GEMM_TRANSPOSED_B_MIN_ELEMENTS`].
    pub(super) fn when(&self) -> Choice {
        if self.b_panels.is_some() {
            // Nothing to pack: the register tiles pay from one row up.
            return Ok(true);
        }
        let (i, j, k) = self.axes();
        if self.whole_rows_in_place(j, k) {
            return Ok(false);
        }
        let idt = self.nest.index_dtype();
        let at_least =
            |e: &PrimExpr, v: i64| choice(e.clone().cast(idt).ge(PrimExpr::int_of(idt, v)));
        let mut runtime: Option<PrimExpr> = None;
        let min_rows = match self.b_transposed {
            true => GEMM_TRANSPOSED_B_MIN_ROWS,
            false => GEMM_MIN_ROWS,
        };
        let mut conditions = vec![at_least(&i.extent, min_rows)];
        if self.b_transposed {
            let elements = j.extent.clone() * k.extent.clone();
            conditions.push(at_least(&elements, GEMM_TRANSPOSED_B_MIN_ELEMENTS));
        }
        conditions.extend([
            // A tile more than half full (a 1×1 convolution to 24
            // channels): its padded columns cost less than the in-place
            // schedule's smaller tiles; at half (16 channels) they do not.
            at_least(&j.extent, self.nr / 2 + 1),
            at_least(&k.extent, GEMM_MIN_DEPTH),
            at_least(
                &(i.extent.clone() * j.extent.clone() * k.extent.clone()),
                PARALLEL_MIN_WORK,
            ),
        ]);
        for c in conditions {
            match c {
                Ok(true) => {}
                Ok(false) => return Ok(false),
                Err(cond) => {
                    runtime = Some(match runtime {
                        Some(prev) => prev.and(cond),
                        None => cond,
                    })
                }
            }
        }
        runtime.map_or(Ok(true), Err)
    }

    /// Whether case 2's whole-row tiles beat the packed schedule: on a
    /// 512-bit target, a `B` contiguous along `j` of constant shape, at
    /// most [`WHOLE_ROW_TILE_COLS`] columns and [`WHOLE_ROW_B_MAX_BYTES`]
    /// (so each product's `B` stays in the L1 cache without a pack). The
    /// packed schedule would pad its columns to whole tiles of 32 (a
    /// Winograd product's 49 columns to 64) and copy `B` for nothing:
    /// GoogLeNet's 36 products of 192 × 128 × 49 ran in 0.34 ms packed,
    /// 0.30 ms as tiles of 4 × 49.
    fn whole_rows_in_place(&self, j: &Axis, k: &Axis) -> bool {
        let bytes = i64::from(self.nest.buffer.dtype().bits() / 8);
        let (Some(n), Some(depth)) = (j.extent.as_int(), k.extent.as_int()) else {
            return false;
        };
        self.nest.vector_bits >= 512
            && !self.b_transposed
            && n <= WHOLE_ROW_TILE_COLS
            && n * depth * bytes <= WHOLE_ROW_B_MAX_BYTES
    }

    /// The packed schedule (see the module docs), or, for a `B` that
    /// needs no pack, its column panels in place (`column_panels.rs`).
    pub(super) fn packed(&self) -> Stmt {
        if self.b_in_place() {
            return self.column_panels();
        }
        let nest = self.nest;
        let n = nest.spatial.len();
        let batch = new_loops(&nest.spatial[..n - 2]);
        let (i, j, k) = self.axes();
        let lp = Loops {
            dtype: nest.index_dtype(),
            an: Analyzer::new(),
            nr: self.nr,
            mr: self.mr,
        };
        let nr = self.nr;
        let m = lp.simplify(i.extent.clone().cast(lp.dtype));
        let nn = lp.simplify(j.extent.clone().cast(lp.dtype));
        let kk = lp.simplify(k.extent.clone().cast(lp.dtype));
        let dt = nest.buffer.dtype();
        let Blocking {
            kc: kc_max,
            mc: mc_max,
            nc: nc_max,
        } = self.blocking;
        let depth = kk.as_int().map_or(kc_max, |v| v.clamp(1, kc_max));
        let panel = nn
            .as_int()
            .map_or(nc_max, |v| (v.max(1) + nr - 1) / nr * nr)
            .min(nc_max);
        let b_pack = Buffer::new(
            "B_pack",
            vec![lp.int(panel / nr), lp.int(depth), lp.int(nr)],
            dt,
        );
        let a_pack = Buffer::new(
            "A_pack",
            vec![lp.int(mc_max / self.mr), lp.int(depth), lp.int(self.mr)],
            dt,
        );
        let a_all = self.a_once.then(|| {
            Buffer::new(
                "A_packed",
                vec![lp.ceil_div(&m, self.mr), kk.clone(), lp.int(self.mr)],
                dt,
            )
        });
        // The batch axes: serial loops around everything, or one fused
        // parallel loop whose iterations each own their B panel.
        let fused_batch = TirVar::with_dtype("b", lp.dtype);
        let base = match self.parallel {
            GemmParallel::Batch => unfuse(&batch, &PrimExpr::var(&fused_batch), lp.dtype),
            _ => identity(&batch),
        };
        // Where the micro-kernel reads A: the whole pack, in place, or
        // each chunk's own pack.
        let a_panel = match &a_all {
            Some(all) => APanel::Whole(all),
            None if self.a_in_place() => APanel::InPlace,
            None => APanel::PerChunk(&a_pack),
        };
        // Chunk `c` runs tiles `c·T/C .. (c+1)·T/C` of the `T` row tiles:
        // chunk sizes differ by at most one tile, so the threads finish
        // together.
        let row_tiles = lp.ceil_div(&m, self.mr);
        // Few rows (under two tiles per chunk, or under half as many rows
        // as columns: `B` more than twice the size of `A`) read in place or
        // from the whole pack run as one chunk whose columns are cut into
        // parts (`slice`): each thread then reads its own share of `B`,
        // where each row chunk would read all of it.
        let few_rows = (self.parallel == GemmParallel::Chunks
            && !matches!(a_panel, APanel::PerChunk(_)))
        .then(|| {
            let few_tiles = row_tiles.clone().lt(lp.int(2 * GEMM_MIN_CHUNKS));
            lp.simplify(few_tiles.or((m.clone() * lp.int(2)).lt(nn.clone())))
        });
        // Row chunks: when they run in parallel, at least GEMM_MIN_CHUNKS,
        // an even number; whole tiles.
        let chunks = match self.parallel {
            GemmParallel::Chunks => {
                let chunks = lp.round_up(&lp.ceil_div(&m, mc_max).max(lp.int(GEMM_MIN_CHUNKS)), 2);
                match &few_rows {
                    Some(few) => lp.simplify(PrimExpr::select(few.clone(), lp.int(1), chunks)),
                    None => chunks,
                }
            }
            _ => lp.ceil_div(&m, mc_max).max(lp.int(1)),
        };
        let k_blocks = lp.ceil_div(&kk, kc_max);
        let body = lp.bind("chunks", chunks, |chunks| {
            let rows = Rows {
                tiles: row_tiles.clone(),
                chunks,
                few: few_rows.clone(),
            };
            lp.count("jc_o", lp.ceil_div(&nn, nc_max), ForKind::Serial, |jco| {
                lp.bind("jc", jco * lp.int(nc_max), |jc| {
                    let nc = lp.int(nc_max).min(nn.clone() - jc.clone());
                    lp.bind("nc", nc, |nc| {
                        lp.count("kc_o", k_blocks.clone(), ForKind::Serial, |kco| {
                            let first = choice(kco.clone().eq_(lp.int(0)));
                            let last =
                                choice(kco.clone().eq_(lp.simplify(k_blocks.clone() - lp.int(1))));
                            lp.bind("kc", kco * lp.int(kc_max), |kc| {
                                let kl = lp.int(kc_max).min(kk.clone() - kc.clone());
                                lp.bind("kl", kl, |kl| {
                                    let slice = Slice {
                                        jc,
                                        nc,
                                        kc,
                                        kl,
                                        first,
                                        last,
                                    };
                                    self.slice(&lp, &slice, &m, &rows, a_panel, &b_pack, &base)
                                })
                            })
                        })
                    })
                })
            })
        });
        // The B pack's scope, unless `B` is in its layout already.
        let b_scope = |body: Stmt| match self.b_panels {
            Some(_) => body,
            None => scope("B_pack", vec![b_pack.clone()], body),
        };
        let looped = match self.parallel {
            GemmParallel::Batch => for_(
                &fused_batch,
                lp.int(0),
                fused_extent(&batch, lp.dtype),
                ForKind::Parallel,
                b_scope(body),
            ),
            _ => b_scope(super::util::nest(&batch, body, None)),
        };
        match a_all {
            // A is free of the batch: packed with no batch variable bound.
            Some(all) => {
                let zero = lp.int(0);
                let pack = self.pack(&lp, Side::A, &all, &HashMap::new(), &zero, &m, &zero, &kk);
                scope("A_packed", vec![all], let_seq(vec![pack, looped]))
            }
            None => looped,
        }
    }

    /// One slice of `k` for one B panel: pack the panel, then the row
    /// chunks in parallel, each packing its rows and running its tiles.
    #[allow(clippy::too_many_arguments)]
    fn slice(
        &self,
        lp: &Loops,
        sl: &Slice,
        m: &PrimExpr,
        rows: &Rows,
        a: APanel<'_>,
        b_pack: &Buffer,
        base: &HashMap<TirVar, PrimExpr>,
    ) -> Stmt {
        let nr = self.nr;
        let pack_b = match self.b_panels {
            Some(_) => None,
            None => Some(self.pack(lp, Side::B, b_pack, base, &sl.jc, &sl.nc, &sl.kc, &sl.kl)),
        };
        let kind = match self.parallel {
            GemmParallel::Chunks => ForKind::Parallel,
            _ => ForKind::Serial,
        };
        let tile_start = |c: PrimExpr| {
            lp.simplify((c * rows.tiles.clone()).floordiv(rows.chunks.clone()) * lp.int(self.mr))
        };
        // With few rows (`Rows::few`: one chunk) the columns are cut into
        // up to `2 · GEMM_MIN_CHUNKS` parts; else, with fewer row tiles
        // than chunks (a packed `A`), each chunk's columns are cut so that
        // every thread gets a share of them. Iteration `p` runs chunk
        // `p / parts`, column tiles `[q·T/parts, (q+1)·T/parts)` of the
        // panel's `T`, `q = p % parts`. With rows enough, `parts` is 1.
        let col_tiles = lp.ceil_div(&sl.nc, nr);
        let parts = match (kind, &rows.few) {
            (ForKind::Parallel, Some(few)) => lp.simplify(PrimExpr::select(
                few.clone(),
                col_tiles.clone().min(lp.int(2 * GEMM_MIN_CHUNKS)),
                lp.int(1),
            )),
            (ForKind::Parallel, None) => lp.simplify(
                lp.ceil_div_expr(&rows.chunks, &rows.tiles.clone().max(lp.int(1)))
                    .min(col_tiles.clone()),
            ),
            _ => lp.int(1),
        };
        let chunk_loop = lp.bind("parts", parts, |parts| {
            let iterations = lp.simplify(rows.chunks.clone() * parts.clone());
            lp.count("ic_o", iterations, kind, |p| {
                let ico = lp.simplify(p.clone().floordiv(parts.clone()));
                let q = lp.simplify(p.floormod(parts.clone()));
                let col_start =
                    |q: PrimExpr| lp.simplify((q * col_tiles.clone()).floordiv(parts.clone()));
                let (jt_min, jt_end) = (col_start(q.clone()), col_start(q + lp.int(1)));
                let end = tile_start(ico.clone() + lp.int(1)).min(m.clone());
                lp.bind("ic", tile_start(ico), |ic| {
                    let mc = end - ic.clone();
                    lp.bind("mc", mc, |mc| {
                        // Where the tile's A panel is: its own pack, or the
                        // whole pack at the chunk's tiles and the slice's `k`.
                        let a_at = match a {
                            APanel::PerChunk(buf) => Some((buf, lp.int(0), lp.int(0))),
                            APanel::Whole(buf) => Some((
                                buf,
                                lp.simplify(ic.clone().floordiv(lp.int(self.mr))),
                                sl.kc.clone(),
                            )),
                            APanel::InPlace => None,
                        };
                        // The tiles of column tile `jt`, `lp.nr` columns wide.
                        let column = |lp: &Loops, jt: PrimExpr| {
                            lp.bind("j0", sl.jc.clone() + jt.clone() * lp.int(nr), |j0| {
                                lp.count("it", lp.ceil_div(&mc, self.mr), ForKind::Serial, |it| {
                                    lp.bind("i0", ic.clone() + it.clone() * lp.int(self.mr), |i0| {
                                        let tile = Tile { it, jt, i0, j0 };
                                        let a = a_at.as_ref().map(|(b, t, k)| (*b, t, k));
                                        let b = BPanel::Pack(b_pack);
                                        self.micro_kernel(lp, &tile, a, b, base, sl)
                                    })
                                })
                            })
                        };
                        let tiles = match self.narrow_last_tile(&sl.nc) {
                            // The last column tile, mostly padding, in
                            // tiles half as wide (see `narrow_last_tile`).
                            Some((last, width)) => {
                                let narrow = Loops {
                                    dtype: lp.dtype,
                                    an: Analyzer::new(),
                                    nr: width,
                                    mr: lp.mr,
                                };
                                let wide_end = jt_end.clone().min(lp.int(last));
                                let extent =
                                    lp.simplify((wide_end - jt_min.clone()).max(lp.int(0)));
                                let wide = lp.range("jt", jt_min, extent, ForKind::Serial, |jt| {
                                    column(lp, jt)
                                });
                                let has_last = choice(jt_end.gt(lp.int(last)));
                                then_if(wide, &has_last, || column(&narrow, lp.int(last)))
                            }
                            None => {
                                let jt_extent = lp.simplify(jt_end - jt_min.clone());
                                lp.range("jt", jt_min, jt_extent, ForKind::Serial, |jt| {
                                    column(lp, jt)
                                })
                            }
                        };
                        match a {
                            APanel::PerChunk(buf) => {
                                let pack_a =
                                    self.pack(lp, Side::A, buf, base, &ic, &mc, &sl.kc, &sl.kl);
                                scope("A_pack", vec![buf.clone()], let_seq(vec![pack_a, tiles]))
                            }
                            APanel::Whole(_) | APanel::InPlace => tiles,
                        }
                    })
                })
            })
        });
        let_seq(pack_b.into_iter().chain([chunk_loop]).collect())
    }

    /// `(last, width)` when the last column tile is mostly padding: the
    /// panel's `nc` columns are a constant, all of `N` (one panel), and
    /// leave at most half a tile (`NR / 2`, at least 8 lanes) to the last
    /// of its tiles, `last`. That tile then runs `width` = `NR / 2`
    /// columns wide: half the multiply-adds. A 7 × 7 image's 49 pixels
    /// are three tiles of 16 and one column; with the fourth tile whole,
    /// a quarter of the products' work was padding (ResNet-50's
    /// 512 → 2048 pointwise convolution in NCHW, 1.07–1.26 ms against
    /// onnxruntime's 0.9 on a 2-core Zen 3).
    fn narrow_last_tile(&self, nc: &PrimExpr) -> Option<(i64, i64)> {
        let (_, j, _) = self.axes();
        let n = j.extent.as_int()?;
        let half = self.nr / 2;
        let left = n % self.nr;
        let one_panel = nc.as_int() == Some(n);
        (one_panel && half >= 8 && (1..=half).contains(&left)).then_some((n / self.nr, half))
    }

    /// Fills `pack` (`[tiles, kk, R]`, `R` = [`GEMM_MR`] or `NR`)
    /// with the operand of `side` at rows `start .. start + len` (`i` for
    /// A, `j` for B) and `k` in `kc .. kc + kl`; rows past `len` are zero.
    #[allow(clippy::too_many_arguments)]
    fn pack(
        &self,
        lp: &Loops,
        side: Side,
        pack: &Buffer,
        base: &HashMap<TirVar, PrimExpr>,
        start: &PrimExpr,
        len: &PrimExpr,
        kc: &PrimExpr,
        kl: &PrimExpr,
    ) -> Stmt {
        let (i, j, k) = self.axes();
        let (row_axis, factor, width) = match side {
            Side::A => (i, &self.a, self.mr),
            Side::B => (j, &self.b, self.nr),
        };
        // The row offset inside a tile innermost when the operand is
        // contiguous along rows (B of `A · B`): vector loads and stores;
        // else `k` innermost (A, or B read transposed): contiguous loads.
        let coeffs = load_coeffs(factor, &row_axis.var);
        let rows_contiguous = contiguous(&coeffs);
        // A gathered B (an image read through a window) also puts rows
        // innermost: the decoding of `k` is shared by a tile's row, and
        // neighbouring rows read neighbouring pixels.
        let gathered = matches!(side, Side::B) && !coeffs.iter().any(|c| c.is_some_and(|c| c != 1));
        let rows_inner = rows_contiguous || gathered;
        // One tile `t`, rows `r` in `[r0, r0 + rn)`: the operand, or zero.
        let fill = |t: PrimExpr, r0: PrimExpr, rn: PrimExpr, zero: bool| {
            let body = |r: PrimExpr, q: PrimExpr| {
                let value = if zero {
                    PrimExpr::float(pack.dtype(), 0.0)
                } else {
                    let mut map = base.clone();
                    let row = lp.simplify(start.clone() + t.clone() * lp.int(width) + r.clone());
                    let col = lp.simplify(kc.clone() + q.clone());
                    map.insert(row_axis.var.clone(), row.cast(row_axis.var.dtype()));
                    map.insert(k.var.clone(), col.cast(k.var.dtype()));
                    let value = factor.substitute_map(&map);
                    // A row of the pack is lanes `r < width` of one tile.
                    match r.as_var() {
                        Some(lane) => split_lane_divisions(&value, lane, width),
                        None => value,
                    }
                };
                Stmt::BufferStore {
                    buffer: pack.clone(),
                    value,
                    indices: vec![t.clone(), q, r],
                }
            };
            if rows_inner {
                lp.range("q", lp.int(0), kl.clone(), ForKind::Serial, |q| {
                    // A gather whose loads are safe whichever side of a
                    // bounds test is taken (a padded window's clamped
                    // loads) is vector code: a masked load where the
                    // unclamped row is contiguous, else a masked gather
                    // (a strided window's row: ResNet's stride-2 layers).
                    // Any other is left to LLVM: forcing vectors on it
                    // only makes LLVM warn that it could not.
                    // Loads that stay inside the image at every point of
                    // the nest, which the pack reads only at, are vector
                    // code too: one load per lane.
                    let kind = if rows_contiguous
                        || !guarded_load_in(factor, Some(&row_axis.var))
                        || self.nest.loads_in_bounds(factor)
                    {
                        ForKind::Vectorized
                    } else {
                        ForKind::Serial
                    };
                    lp.range("r", r0, rn, kind, |r| body(r, q))
                })
            } else {
                lp.range("r", r0, rn, ForKind::Serial, |r| {
                    lp.range("q", lp.int(0), kl.clone(), ForKind::Serial, |q| body(r, q))
                })
            }
        };
        lp.bind("full", len.clone().floordiv(lp.int(width)), |full| {
            let rest = len.clone() - full.clone() * lp.int(width);
            lp.bind("rest", rest, |rest| {
                // The B panel is shared by every row chunk: with the chunks
                // in parallel, its tiles are packed in parallel too (a
                // serial pack would leave the other threads waiting).
                let kind = match (side, self.parallel) {
                    (Side::B, GemmParallel::Chunks) => ForKind::Parallel,
                    _ => ForKind::Serial,
                };
                let whole = lp.range("t", lp.int(0), full.clone(), kind, |t| {
                    fill(t, lp.int(0), lp.int(width), false)
                });
                let edge = || {
                    let zeros = lp.simplify(lp.int(width) - rest.clone());
                    seq(vec![
                        fill(full.clone(), lp.int(0), rest.clone(), false),
                        fill(full.clone(), rest.clone(), zeros, true),
                    ])
                };
                then_if(whole, &choice(rest.clone().gt(lp.int(0))), edge)
            })
        })
    }

    /// One register tile: accumulate over the `k` slice, then write back.
    #[allow(clippy::too_many_arguments)]
    fn micro_kernel(
        &self,
        lp: &Loops,
        tile: &Tile,
        a_panel: Option<(&Buffer, &PrimExpr, &PrimExpr)>,
        b_panel: BPanel<'_>,
        base: &HashMap<TirVar, PrimExpr>,
        sl: &Slice,
    ) -> Stmt {
        let (first, last) = (&sl.first, &sl.last);
        let dt = self.nest.buffer.dtype();
        let (i, j, _) = self.axes();
        let m = i.extent.clone().cast(lp.dtype);
        let nn = j.extent.clone().cast(lp.dtype);
        let acc = Buffer::new("acc", vec![lp.int(self.mr), lp.int(lp.nr)], dt);
        let init = lp.tile(|r, c| Stmt::BufferStore {
            buffer: acc.clone(),
            value: PrimExpr::float(dt, 0.0),
            indices: vec![r, c],
        });
        let update = lp.range("kk", lp.int(0), sl.kl.clone(), ForKind::Serial, |q| {
            lp.tile(|r, c| {
                let at = PrimExpr::load(&acc, vec![r.clone(), c.clone()]);
                let a = match a_panel {
                    Some((a_pack, a_tile, a_k)) => {
                        PrimExpr::load(a_pack, vec![add(a_tile, &tile.it), add(a_k, &q), r.clone()])
                    }
                    // Rows past `M` read the last row again: their sums
                    // are never written back.
                    None => {
                        let (i, _, k) = self.axes();
                        let row =
                            lp.simplify((tile.i0.clone() + r.clone()).min(m.clone() - lp.int(1)));
                        let mut map = base.clone();
                        map.insert(i.var.clone(), row.cast(i.var.dtype()));
                        map.insert(k.var.clone(), add(&sl.kc, &q).cast(k.var.dtype()));
                        lp.simplify(self.a.substitute_map(&map))
                    }
                };
                let b = match (&self.b_panels, b_panel) {
                    // Columns `j0 + c` of the packed `B`: `j0` is a multiple
                    // of the tile's columns, which divide `W`.
                    (Some((panels, w)), _) => {
                        let w = lp.int(*w);
                        let panel = lp.simplify(tile.j0.clone().floordiv(w.clone()));
                        let lane = lp.simplify(tile.j0.clone().floormod(w)) + c.clone();
                        PrimExpr::load(panels, vec![panel, add(&sl.kc, &q), lane])
                    }
                    (None, BPanel::Pack(b_pack)) => {
                        PrimExpr::load(b_pack, vec![tile.jt.clone(), q, c.clone()])
                    }
                    (None, BPanel::InPlace) => {
                        let (_, j, k) = self.axes();
                        let mut map = base.clone();
                        let col = tile.j0.clone() + c.clone();
                        map.insert(j.var.clone(), col.cast(j.var.dtype()));
                        map.insert(k.var.clone(), add(&sl.kc, &q).cast(k.var.dtype()));
                        lp.simplify(self.b.substitute_map(&map))
                    }
                };
                Stmt::BufferStore {
                    buffer: acc.clone(),
                    value: at + a * b,
                    indices: vec![r, c],
                }
            })
        });
        let whole = choice(
            (tile.i0.clone() + lp.int(self.mr))
                .le(m.clone())
                .and((tile.j0.clone() + lp.int(lp.nr)).le(nn.clone())),
        );
        // A whole tile: vector stores, one version per (first, last).
        let whole_tile = |first: bool, last: bool| {
            lp.tile(|r, c| {
                let sum = PrimExpr::load(&acc, vec![r.clone(), c.clone()]);
                let start = Ok(first);
                self.write_back(base, tile, r, c, sum, &start, &Ok(last))
            })
        };
        let whole_tile = || per_slice(first, last, whole_tile);
        // A tile crossing the edge of `C`: row by row through a copy
        // (indexing `acc` by bounds known only at run time would keep it in
        // memory), one version per (first, last) as for a whole tile.
        let edge_tile = || {
            let edge = Buffer::new("acc_edge", vec![lp.int(self.mr), lp.int(lp.nr)], dt);
            let copy = lp.tile(|r, c| Stmt::BufferStore {
                buffer: edge.clone(),
                value: PrimExpr::load(&acc, vec![r.clone(), c.clone()]),
                indices: vec![r, c],
            });
            let rows = lp.simplify(lp.int(self.mr).min(m.clone() - tile.i0.clone()));
            let cols = lp.simplify(lp.int(lp.nr).min(nn.clone() - tile.j0.clone()));
            // Each row's columns as vector code (16-lane steps, then the
            // rest): a product narrower than the tile (a 1×1 convolution
            // of 24 channels) has only edge tiles.
            let store = |first: bool, last: bool| {
                lp.range("r", lp.int(0), rows.clone(), ForKind::Serial, |r| {
                    lp.range("c", lp.int(0), cols.clone(), ForKind::Vectorized, |c| {
                        let sum = PrimExpr::load(&edge, vec![r.clone(), c.clone()]);
                        self.write_back(base, tile, r, c, sum, &Ok(first), &Ok(last))
                    })
                })
            };
            let store = per_slice(first, last, store);
            scope("acc_edge", vec![edge], seq(vec![copy, store]))
        };
        let write = branch(&whole, whole_tile, edge_tile);
        scope("acc", vec![acc.clone()], seq(vec![init, update, write]))
    }

    /// The store of one element `(i0 + r, j0 + c)` of a tile whose sum over
    /// the current `k` slice is `sum` ([`tile_store`]).
    #[allow(clippy::too_many_arguments)]
    fn write_back(
        &self,
        base: &HashMap<TirVar, PrimExpr>,
        tile: &Tile,
        r: PrimExpr,
        c: PrimExpr,
        sum: PrimExpr,
        first: &Choice,
        last: &Choice,
    ) -> Stmt {
        let (i, j, _) = self.axes();
        let at = (&tile.i0, &tile.j0, r, c);
        tile_store(self.nest, (i, j), base, at, sum, first, last)
    }
}

/// The store of one element `(i0 + r, j0 + c)` of a packed product's tile
/// (rows `i`, columns `j` of `nest`) whose sum over the current `k` slice
/// is `sum`: added to the init on the first slice, else to the partial
/// result in `C`; through the epilogue on the last slice. The float and
/// the int8 GEMM share it.
pub(super) fn tile_store(
    nest: &Nest,
    (i, j): (&Axis, &Axis),
    base: &HashMap<TirVar, PrimExpr>,
    (i0, j0, r, c): (&PrimExpr, &PrimExpr, PrimExpr, PrimExpr),
    sum: PrimExpr,
    first: &Choice,
    last: &Choice,
) -> Stmt {
    let mut map = base.clone();
    map.insert(i.var.clone(), add(i0, &r).cast(i.var.dtype()));
    map.insert(j.var.clone(), add(j0, &c).cast(j.var.dtype()));
    // The lanes of a float tile's column `c` (`< nr`): divisions of the
    // column by an output row's width (folded rows, `conv.rs`) split into
    // a carry per lane.
    let lanes: Vec<TirVar> = if nest.buffer.dtype().is_float() {
        c.free_vars()
            .into_iter()
            .filter(|v| linear_coeff(&c, v) == Some(1))
            .collect()
    } else {
        vec![]
    };
    let nr = nest.gemm_nr();
    let lanes_ref = &lanes;
    let indices: Vec<PrimExpr> = nest
        .indices
        .iter()
        .map(|e| e.substitute_map(&map))
        .collect();
    let indices = split_indices(&nest.buffer, indices, &lanes, nr);
    let init = nest
        .init
        .as_ref()
        .expect("a GEMM has an init")
        .substitute_map(&map);
    let partial = PrimExpr::load(&nest.buffer, indices.clone());
    let start = match first {
        Ok(true) => init,
        Ok(false) => partial,
        Err(cond) => PrimExpr::select(cond.clone(), init, partial),
    };
    let zero = match start.kind() {
        PrimExprKind::FloatImm(z) => *z == 0.0,
        PrimExprKind::IntImm(z) => *z == 0,
        _ => false,
    };
    let value = if zero { sum } else { start + sum };
    branch(
        last,
        || split_store(nest.final_store(&map, value.clone()), lanes_ref, nr),
        || Stmt::BufferStore {
            buffer: nest.buffer.clone(),
            value: value.clone(),
            indices: indices.clone(),
        },
    )
}

/// `store` (a `BufferStore`) with [`split_lane_divisions`] applied to its
/// value and, unless they are contiguous in the lanes, its indices.
fn split_store(store: Stmt, lanes: &[TirVar], bound: i64) -> Stmt {
    match store {
        Stmt::BufferStore {
            buffer,
            value,
            indices,
        } => {
            let value = lanes
                .iter()
                .fold(value, |e, lane| split_lane_divisions(&e, lane, bound));
            let indices = split_indices(&buffer, indices, lanes, bound);
            Stmt::BufferStore {
                buffer,
                value,
                indices,
            }
        }
        other => other,
    }
}

/// `indices` into `buffer` with [`split_lane_divisions`] applied, unless
/// their flat offset is affine in each lane (a vector access as it is).
fn split_indices(
    buffer: &Buffer,
    indices: Vec<PrimExpr>,
    lanes: &[TirVar],
    bound: i64,
) -> Vec<PrimExpr> {
    let offset = Analyzer::new().simplify(&buffer.offset_of(&indices));
    if lanes.iter().all(|l| linear_coeff(&offset, l).is_some()) {
        return indices;
    }
    indices
        .into_iter()
        .map(|e| {
            lanes
                .iter()
                .fold(e, |e, lane| split_lane_divisions(&e, lane, bound))
        })
        .collect()
}

/// `e` with each `a // w` and `a % w` (`w` a constant of at least
/// `lanes`) whose `a` is `b + lane`, `lane` in `[0, lanes)`, split into
/// `b`'s part and a carry: `b // w + (b % w + lane >= w)` and
/// `b % w + lane - (w if it carried)`. The lanes of a vector then share
/// one scalar division and each compare and select, where a division per
/// lane (no vector instruction divides 64-bit integers) made a tile of
/// folded output rows (`conv.rs`: `jr // J`, `jr % J`) three times
/// slower to gather than a row's.
///
/// A load whose flat offset is affine in `lane` (a vector load as it is:
/// the folded rows of a stride-1 window, `(jr // J) · J + jr % J = jr`),
/// or a `Select` read as a masked load, is left as it is.
pub(super) fn split_lane_divisions(e: &PrimExpr, lane: &TirVar, lanes: i64) -> PrimExpr {
    match e.kind() {
        PrimExprKind::BufferLoad(buf, idx)
            if linear_coeff(&Analyzer::new().simplify(&buf.offset_of(idx)), lane).is_some() =>
        {
            return e.clone()
        }
        PrimExprKind::Select(c, t, _) if maskable(c, t, lane) => return e.clone(),
        _ => {}
    }
    let e = e.map_children(|x| split_lane_divisions(x, lane, lanes));
    let (a, w, div) = match e.kind() {
        PrimExprKind::Div(a, w) => (a, w, true),
        PrimExprKind::Mod(a, w) => (a, w, false),
        _ => return e,
    };
    if !w.as_int().is_some_and(|w| w >= lanes && w > 0) || linear_coeff(a, lane) != Some(1) {
        return e;
    }
    let an = Analyzer::new();
    let at_zero = HashMap::from([(lane.clone(), PrimExpr::int_of(lane.dtype(), 0))]);
    let b = an.simplify(&a.substitute_map(&at_zero));
    let offset = an.simplify(&(a.clone() - b.clone()));
    let dt = a.dtype();
    let m = b.clone().floormod(w.clone());
    let sum = m + offset;
    let carry = sum.clone().ge(w.clone());
    if div {
        b.floordiv(w.clone())
            + PrimExpr::select(carry, PrimExpr::int_of(dt, 1), PrimExpr::int_of(dt, 0))
    } else {
        PrimExpr::select(carry, sum.clone() - w.clone(), sum)
    }
}

/// One slice of `k` (`kc .. kc + kl`) of one B panel (columns
/// `jc .. jc + nc`), and whether it is the first and the last slice.
struct Slice {
    jc: PrimExpr,
    nc: PrimExpr,
    kc: PrimExpr,
    kl: PrimExpr,
    first: Choice,
    last: Choice,
}

/// How the rows of `C` are cut into chunks: `tiles` register tiles of
/// [`GEMM_MR`] rows, in `chunks` runs of (nearly) equal length.
struct Rows {
    tiles: PrimExpr,
    chunks: PrimExpr,
    /// Whether the rows are few (under `2 · GEMM_MIN_CHUNKS` tiles, `A`
    /// not packed per chunk): one chunk, its columns in parts. `None`
    /// where the rule does not apply.
    few: Option<PrimExpr>,
}

/// Where the micro-kernel reads `A`: the pack of its row chunk and `k`
/// slice, or the pack of all of `A` ([`Gemm::a_once`]).
#[derive(Clone, Copy)]
enum APanel<'a> {
    PerChunk(&'a Buffer),
    Whole(&'a Buffer),
    /// `A` read in place ([`Gemm::a_in_place`]).
    InPlace,
}

/// Where the micro-kernel reads `B` when it is not prepacked: the B pack,
/// or `B` itself ([`Gemm::b_in_place`]).
#[derive(Clone, Copy)]
enum BPanel<'a> {
    Pack(&'a Buffer),
    InPlace,
}

/// One register tile: its indices in the packs and its first output.
struct Tile {
    it: PrimExpr,
    jt: PrimExpr,
    i0: PrimExpr,
    j0: PrimExpr,
}

/// `(Bp, W)` when `b` is the load `Bp[j // W, k, j % W]` of a 3-D buffer
/// whose last extent is the constant `W`: a `B` already in the B pack's
/// layout ([`super::prepack`]).
pub(super) fn panel_layout(b: &PrimExpr, j: &TirVar, k: &TirVar) -> Option<(Buffer, i64)> {
    let PrimExprKind::BufferLoad(buf, idx) = b.kind() else {
        return None;
    };
    let w = match buf.shape() {
        [_, _, w] => w.as_int()?,
        _ => return None,
    };
    let is_var = |e: &PrimExpr, v: &TirVar| e.as_var() == Some(v);
    let of_j = |e: &PrimExpr, div: bool| match e.kind() {
        PrimExprKind::Div(x, d) if div => is_var(x, j) && d.as_int() == Some(w),
        PrimExprKind::Mod(x, d) if !div => is_var(x, j) && d.as_int() == Some(w),
        _ => false,
    };
    (of_j(&idx[0], true) && is_var(&idx[1], k) && of_j(&idx[2], false)).then(|| (buf.clone(), w))
}

#[cfg(test)]
mod tests {
    use super::split_lane_divisions;
    use crate::ir::prim_expr::{PrimExpr, TirVar};
    use relax_runtime::DataType;
    use std::collections::HashMap;

    /// The split divisions give the divisions' values for every lane and
    /// every base, negative ones included, and leave a divisor smaller
    /// than the lanes alone.
    #[test]
    fn split_lane_divisions_keep_the_values() {
        let i64t = DataType::i64();
        let (b, l) = (TirVar::with_dtype("b", i64t), TirVar::with_dtype("l", i64t));
        for w in [7, 16, 20, 56] {
            let a = PrimExpr::var(&b) * PrimExpr::int_of(i64t, 3) + PrimExpr::var(&l);
            let e = a.clone().floordiv(PrimExpr::int_of(i64t, w)) * PrimExpr::int_of(i64t, 100)
                + a.floormod(PrimExpr::int_of(i64t, w));
            let lanes = 16;
            let split = split_lane_divisions(&e, &l, lanes);
            assert_eq!(split == e, w < lanes, "{split}");
            for bv in -40..40 {
                for lv in 0..lanes {
                    let env = HashMap::from([(b.clone(), bv), (l.clone(), lv)]);
                    assert_eq!(split.eval(&env).unwrap(), e.eval(&env).unwrap(), "{split}");
                }
            }
        }
    }
}
