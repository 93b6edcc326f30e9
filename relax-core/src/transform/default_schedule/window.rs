//! Case 7 of the module docs: a *window reduction* (a pooling), a
//! reduction whose innermost output column `j` is contiguous in the output
//! and no input (cases 2 and 4 take those), whose loads are affine in `j`
//! with a small stride except where the window leaves the input (the
//! padding's bounds tests and clamped indices of `LegalizeOps`' pools).
//! The columns are partitioned, as TVM's `LoopPartition` does:
//!
//! ```text
//! for the other spatial axes (fused, Parallel):
//!   columns [0, lo):   tiles, the update as written
//!   columns [lo, hi):  tiles, the update simplified for j in [lo, hi): no
//!                      bounds tests, no clamps, loads affine in j
//!   columns [hi, W):   tiles, the update as written
//!   (each run of columns: tiles of WINDOW_TILE, then one shorter tile;
//!   a row whose window leaves the input at the top or the bottom runs all
//!   its columns as written)
//! ```
//!
//! A row of at most [`WINDOW_TILE`] columns (a small NCHW image) whose
//! rows are partitioned too, read contiguously (stride 1), is one tile
//! instead: the update simplified for the interior's rows, its column
//! tests masks of the tile's lanes.
//!
//! Each tile accumulates one vector per [`super::VECTOR_LANES`] columns
//! over the whole window (`Nest::tile`), where case 3 read and wrote the
//! output at every tap, one element at a time. The interior `[lo, hi)` is
//! found by simplifying the update for single columns from each end, then
//! checked by simplifying it for the whole range at once: only that last
//! simplification is used, so the search cannot make the schedule wrong.

use super::nest::Nest;
use super::util::*;
use crate::ir::prim_expr::{PrimExpr, TirVar};
use crate::tir::affine::guarded_load;
use crate::tir::ForKind;
use crate::tir::Stmt;
use std::collections::HashMap;

/// Columns per tile of the interior: two vectors of 16 `float32`, so two
/// independent chains of `max` or `+` hide each other's latency.
pub const WINDOW_TILE: i64 = 32;

/// The largest stride along the output columns a load of the interior
/// may have (a pool's stride, or twice it with the dilation).
const WINDOW_MAX_STRIDE: i64 = 4;

/// How far from each edge of the row the interior is looked for.
const WINDOW_SEARCH: i64 = 64;

/// The most taps (the product of the reduce extents) a tile unrolls: a
/// depthwise convolution's 3 × 3 or 5 × 5 window (and a small pool's) runs
/// as straight-line multiply-adds on the tile's accumulator registers,
/// with no loop counters or branches between them.
pub const WINDOW_UNROLL_MAX: i64 = 25;

/// Where the window stays inside the input: output columns `[lo, hi)`
/// of rows `rows` (`None`: every row), and the update simplified for them.
pub(super) struct Window {
    lo: i64,
    hi: i64,
    rows: Option<(i64, i64)>,
    interior: PrimExpr,
}

impl Nest {
    /// The update simplified with the last spatial axis `j` in `cols`,
    /// the one before it in `rows` when given, and every other axis in
    /// its extent; `None` unless every load of it is affine in `j` and
    /// runs unconditionally.
    fn clean_for(&self, cols: (i64, i64), rows: Option<(i64, i64)>) -> Option<PrimExpr> {
        let n = self.spatial.len();
        let j = &self.spatial[n - 1];
        let mut bounds = vec![(n - 1, cols.0, cols.1)];
        bounds.extend(rows.map(|(lo, hi)| (n - 2, lo, hi)));
        let v = self.simplified_in(&bounds);
        let mut loads = Vec::new();
        collect_loads(&v, &mut loads);
        // Affine, with a stride small enough that a vector of lanes reads
        // a few cache lines.
        let affine = loads.iter().all(|(b, i)| {
            linear_coeff(&b.offset_of(i), &j.var).is_some_and(|c| c.abs() <= WINDOW_MAX_STRIDE)
        });
        (affine && !guarded_load(&v)).then_some(v)
    }

    /// The points of `0..extent` that are clean (by `clean(point)`) from
    /// the first clean one near the start to the last near the end.
    fn interior_range(extent: i64, clean: impl Fn(i64) -> bool) -> Option<(i64, i64)> {
        let search = extent.min(WINDOW_SEARCH);
        let lo = (0..search).find(|&c| clean(c))?;
        let hi = (extent - search..extent)
            .rev()
            .find(|&c| c >= lo && clean(c))?
            + 1;
        Some((lo, hi))
    }

    /// The window reduction's interior (see the module docs), if the nest
    /// is one: a reduction whose store is contiguous in a last spatial
    /// axis of constant extent, with an interior where every load of the
    /// update is affine in that axis and runs unconditionally. The rows
    /// (the axis before it) are partitioned too when their borders test
    /// bounds: the columns are searched in the middle row, the rows in the
    /// middle column, then the rectangle is simplified as a whole.
    pub(super) fn window(&self) -> Option<Window> {
        let n = self.spatial.len();
        let j = self.spatial.last()?;
        let width = j.extent.as_int().filter(|&w| w > 0)?;
        if self.reduce.is_empty() || self.coefficients(&j.var).0 != Some(1) {
            return None;
        }
        let height = (n >= 2)
            .then(|| self.spatial[n - 2].extent.as_int())
            .flatten()
            .filter(|&h| h > 0);
        if let Some(cols) =
            Self::interior_range(width, |c| self.clean_for((c, c + 1), None).is_some())
        {
            let interior = self.clean_for(cols, None)?;
            return Some(Window {
                lo: cols.0,
                hi: cols.1,
                rows: None,
                interior,
            });
        }
        let height = height?;
        let mid_row = Some((height / 2, height / 2 + 1));
        let cols = Self::interior_range(width, |c| self.clean_for((c, c + 1), mid_row).is_some())?;
        let mid_col = ((cols.0 + cols.1) / 2, (cols.0 + cols.1) / 2 + 1);
        let rows = Self::interior_range(height, |r| {
            self.clean_for(mid_col, Some((r, r + 1))).is_some()
        })?;
        let interior = self.clean_for(cols, Some(rows))?;
        Some(Window {
            lo: cols.0,
            hi: cols.1,
            rows: Some(rows),
            interior,
        })
    }

    /// Columns `[start, end)` of the row `map` binds, in tiles of
    /// [`WINDOW_TILE`] and one shorter tile.
    fn window_tiles(&self, map: &HashMap<TirVar, PrimExpr>, start: i64, end: i64) -> Vec<Stmt> {
        let j = self.spatial.last().expect("a window has columns");
        let taps = self
            .reduce
            .iter()
            .try_fold(1i64, |acc, a| acc.checked_mul(a.extent.as_int()?));
        let unroll = taps.is_some_and(|t| t <= WINDOW_UNROLL_MAX);
        let tile = |j0: &PrimExpr, width: i64| {
            let t = self.tile(map, None, j0, width);
            if unroll {
                unroll_serial(&t)
            } else {
                t
            }
        };
        let int = |v: i64| PrimExpr::int_of(j.loop_var.dtype(), v);
        let mut out = Vec::new();
        let tiles = (end - start).max(0) / WINDOW_TILE;
        if tiles > 0 {
            let jo = fresh(&j.loop_var, "_o");
            // A loop of one iteration is not written: its variable is 0.
            let j0 = match tiles {
                1 => int(start),
                _ => add(&int(start), &(PrimExpr::var(&jo) * int(WINDOW_TILE))),
            };
            let tile = tile(&j0, WINDOW_TILE);
            out.push(loop_unless_once(&jo, int(tiles), ForKind::Serial, tile));
        }
        let rest = (end - start).max(0) % WINDOW_TILE;
        if rest > 0 {
            let j0 = int(start + tiles * WINDOW_TILE);
            out.push(tile(&j0, rest));
        }
        out
    }

    /// Case 7 of the module docs.
    pub(super) fn window_reduction(&self, parallel: bool, w: &Window) -> Stmt {
        let n = self.spatial.len();
        let j = &self.spatial[n - 1];
        let outer = &self.spatial[..n - 1];
        let idt = self.index_dtype();
        let width = j.extent.as_int().expect("a window has a constant width");
        // The outer axes: one fused loop (parallel at batch 1 too), or
        // their own loops.
        let fused = fresh(&outer.first().map_or(j, |a| a).loop_var, "_fused");
        let fuse = parallel && !outer.is_empty();
        let map: HashMap<TirVar, PrimExpr> = if fuse {
            unfuse(outer, &PrimExpr::var(&fused), idt)
        } else {
            identity(outer)
        };
        // Contiguous loads only take the one-tile row below: a strided one
        // would be a masked gather per tap (a stride-2 pool to 14 columns:
        // 0.12 → 0.21 ms).
        let contiguous = {
            let mut loads = Vec::new();
            collect_loads(&w.interior, &mut loads);
            loads
                .iter()
                .all(|(b, i)| matches!(linear_coeff(&b.offset_of(i), &j.var), Some(0 | 1)))
        };
        let mut row = match w.rows {
            // A row of at most one tile (a 14 × 14 or 28 × 28 image in
            // NCHW) whose rows are partitioned is one tile, the bounds tests
            // on its columns masks of its lanes: its border columns had been
            // tiles of one column each, every tap a scalar test (GoogLeNet's
            // 14 × 14 pools 0.072 → 0.042 ms).
            Some(rows) if width <= WINDOW_TILE && contiguous => {
                // The rows' bounds tests simplified away, the columns' kept.
                let (lo, hi) = rows;
                let masked = Nest {
                    value: self.simplified_in(&[(n - 2, lo, hi)]),
                    ..self.with_new_loops()
                };
                seq(masked.window_tiles(&map, 0, width))
            }
            _ => {
                let interior = Nest {
                    value: w.interior.clone(),
                    ..self.with_new_loops()
                };
                let mut row = self.window_tiles(&map, 0, w.lo);
                row.extend(interior.window_tiles(&map, w.lo, w.hi));
                row.extend(self.window_tiles(&map, w.hi, width));
                seq(row)
            }
        };
        if let Some((lo, hi)) = w.rows {
            // Rows whose window leaves the input at the top or the bottom:
            // the update as written, all along.
            let i = &self.spatial[n - 2];
            let at = map[&i.var].clone();
            let dt = at.dtype();
            let int = |v: i64| PrimExpr::int_of(dt, v);
            let inside = at.clone().ge(int(lo)).and(at.lt(int(hi)));
            row = Stmt::IfThenElse {
                cond: inside,
                then_case: Box::new(row),
                else_case: Some(Box::new(seq(self.window_tiles(&map, 0, width)))),
            };
        }
        if fuse {
            for_(
                &fused,
                PrimExpr::int_of(idt, 0),
                fused_extent(outer, idt),
                ForKind::Parallel,
                row,
            )
        } else {
            let kind = parallel.then_some(ForKind::Parallel);
            nest(outer, row, kind)
        }
    }
}

/// `s` with its serial loops (a window tile's tap loops: the tile's own
/// column and row loops are unrolled or vectorized already) unrolled.
fn unroll_serial(s: &Stmt) -> Stmt {
    match s {
        Stmt::For {
            loop_var,
            min,
            extent,
            kind,
            body,
            annotations,
        } => Stmt::For {
            loop_var: loop_var.clone(),
            min: min.clone(),
            extent: extent.clone(),
            kind: match kind {
                ForKind::Serial => ForKind::Unrolled,
                k => *k,
            },
            body: Box::new(unroll_serial(body)),
            annotations: annotations.clone(),
        },
        Stmt::Seq(ss) => Stmt::Seq(ss.iter().map(unroll_serial).collect()),
        Stmt::Block(b) => {
            let mut b = (**b).clone();
            b.body = Box::new(unroll_serial(&b.body));
            Stmt::Block(Box::new(b))
        }
        other => other.clone(),
    }
}
