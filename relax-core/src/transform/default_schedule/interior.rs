//! Case 2's tiles at the borders of a padded image: a reduction whose
//! loads are guarded (a padded NHWC convolution, whose legalized update
//! reads `Select(1 <= h + ry and h + ry < H + 1, X[n, clamp(h + ry - 1), …],
//! 0)` at every tap) has its full tiles written twice,
//!
//! ```text
//! if the tile lies in the interior:   the update simplified there: no
//!                                     guards, no clamps
//! else:                               the update as written
//! ```
//!
//! The interior is a range `[lo, hi)` of each guarded spatial axis other
//! than the innermost (the tile's vector lanes, which guards on the image
//! do not vary along), the widest range within [`MAX_BORDER`] of each end
//! where the simplified update no longer tests that axis. TVM's
//! `LoopPartition` cuts the loops at the same points; a test per tile keeps
//! one loop nest, and one copy of the tile code more. Along the tiles' row
//! axis (an NHWC image's pixels) case 2 also runs the rows in three runs,
//! `[0, lo)`, `[lo, hi)` and `[hi, extent)` ([`Nest::interior_rows`]), so
//! the interior's tiles start at its first row. Only the simplification
//! under all the ranges together is used, so the search cannot make the
//! schedule wrong: every output element sees the same sum either way.

use super::nest::{ranges, Nest};
use crate::arith::analyzer::Analyzer;
use crate::ir::prim_expr::{PrimExpr, PrimExprKind, TirVar};
use crate::tir::affine::uses_var;
use crate::tir::Stmt;
use std::collections::HashMap;

/// The widest border searched for (a 9 × 9 window's padding).
const MAX_BORDER: i64 = 4;

/// Where a guarded nest's update needs no guards.
pub(super) struct Interior {
    /// `(spatial position, lo, hi)`: the axis lies in `[lo, hi)`.
    bounds: Vec<(usize, i64, i64)>,
    /// The update simplified for those ranges.
    value: PrimExpr,
}

/// Whether `e` has a `Select` whose condition reads `var`.
fn guarded_by(e: &PrimExpr, var: &TirVar) -> bool {
    if let PrimExprKind::Select(c, _, _) = e.kind() {
        if uses_var(c, var) {
            return true;
        }
    }
    e.children().into_iter().any(|c| guarded_by(c, var))
}

impl Nest {
    /// The update simplified with each spatial axis of `bounds` (its
    /// position, `lo`, `hi`) in `[lo, hi)` and every other axis in its
    /// extent.
    pub(super) fn simplified_in(&self, bounds: &[(usize, i64, i64)]) -> PrimExpr {
        let mut an = ranges(self.spatial.iter().chain(&self.reduce));
        for &(p, lo, hi) in bounds {
            an.bind_range(&self.spatial[p].var, Some(lo), Some(hi - 1));
        }
        an.simplify(&self.value)
    }

    /// The interior (module docs), if some guarded axis has one.
    pub(super) fn interior(&self) -> Option<Interior> {
        let n = self.spatial.len();
        if self.reduce.is_empty() || n < 2 {
            return None;
        }
        let mut bounds = Vec::new();
        for (p, axis) in self.spatial[..n - 1].iter().enumerate() {
            let Some(extent) = axis.extent.as_int() else {
                continue;
            };
            if !guarded_by(&self.value, &axis.var) {
                continue;
            }
            let clear = |lo: i64, trim: i64| {
                lo < extent - trim
                    && !guarded_by(&self.simplified_in(&[(p, lo, extent - trim)]), &axis.var)
            };
            let Some(lo) = (0..=MAX_BORDER).find(|&lo| clear(lo, MAX_BORDER)) else {
                continue;
            };
            let trim = (0..=MAX_BORDER)
                .find(|&t| clear(lo, t))
                .expect("MAX_BORDER clears");
            bounds.push((p, lo, extent - trim));
        }
        if bounds.is_empty() {
            return None;
        }
        let value = self.simplified_in(&bounds);
        Some(Interior { bounds, value })
    }

    /// The interior's rows `[lo, hi)` along the tiles' row axis (the
    /// spatial axis before the innermost), when that axis is guarded and
    /// has a border at either end.
    pub(super) fn interior_rows(&self) -> Option<(i64, i64)> {
        let n = self.spatial.len();
        let extent = self.spatial.get(n.checked_sub(2)?)?.extent.as_int()?;
        let interior = self.interior()?;
        let &(_, lo, hi) = interior.bounds.iter().find(|(p, _, _)| *p == n - 2)?;
        (lo > 0 || hi < extent).then_some((lo, hi))
    }

    /// A full tile of case 2 (`Nest::tile` of `rows` rows at `i0`,
    /// columns `j0`) versioned on the interior (module docs) when the
    /// update is guarded.
    pub(super) fn interior_tile(
        &self,
        map: &HashMap<TirVar, PrimExpr>,
        i0: &PrimExpr,
        rows: i64,
        j0: &PrimExpr,
        width: i64,
    ) -> Stmt {
        let tile = self.tile(map, Some((i0, rows)), j0, width);
        let Some(interior) = self.interior() else {
            return tile;
        };
        let inside = self.tile_inside(&interior.bounds, map, i0, rows);
        let inside = inside.map(|c| Analyzer::new().simplify(&c));
        match inside {
            // A tile that never lies inside (the last rows of a small
            // image): only the update as written.
            Some(cond) if cond.as_int() == Some(0) => tile,
            Some(cond) => Stmt::IfThenElse {
                cond,
                then_case: Box::new(self.with_value(interior.value).tile(
                    map,
                    Some((i0, rows)),
                    j0,
                    width,
                )),
                else_case: Some(Box::new(tile)),
            },
            None => tile,
        }
    }

    /// Whether the tile of `rows` rows at `i0` (and the outer axes `map`
    /// binds) lies within `bounds`.
    fn tile_inside(
        &self,
        bounds: &[(usize, i64, i64)],
        map: &HashMap<TirVar, PrimExpr>,
        i0: &PrimExpr,
        rows: i64,
    ) -> Option<PrimExpr> {
        let n = self.spatial.len();
        let mut cond: Option<PrimExpr> = None;
        for &(p, lo, hi) in bounds {
            let axis = &self.spatial[p];
            let int = |v: i64| PrimExpr::int_of(axis.var.dtype(), v);
            // The tile's first and last index along the axis.
            let (first, last) = if p == n - 2 {
                (i0.clone(), i0.clone() + int(rows - 1))
            } else {
                let at = map.get(&axis.var)?;
                (at.clone(), at.clone())
            };
            let below = last.lt(int(hi));
            let inside = if lo == 0 {
                below
            } else {
                first.ge(int(lo)).and(below)
            };
            cond = Some(match cond {
                Some(c) => c.and(inside),
                None => inside,
            });
        }
        cond
    }

    /// This nest with the update `value`.
    fn with_value(&self, value: PrimExpr) -> Nest {
        Nest {
            spatial: self.spatial.clone(),
            reduce: self.reduce.clone(),
            buffer: self.buffer.clone(),
            indices: self.indices.clone(),
            value,
            init: self.init.clone(),
            epilogue: self.epilogue.clone(),
            vector_bits: self.vector_bits,
            knobs: self.knobs,
        }
    }
}
