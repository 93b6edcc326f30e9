//! A grouped convolution in NHWC runs group by group, the output channels
//! of one group in the vector lanes (case 2's register tiles).
//!
//! With `G` groups of `g` output channels each, the channel axis `c` of
//! the output is the last spatial axis, and the image is read at
//! `c // g · icg + rc`: the first input channel of `c`'s group plus the
//! reduce variable. No load is contiguous along `c`, so case 2 does not
//! apply and the nest would run one scalar at a time. Split as
//!
//! ```text
//! c = cg · g + cl        cl < g
//! Y[n, oh, ow, cg·g + cl] = Σ_{rc, ry, rx} X[n, ih, iw, cg·icg + rc] · W[ry, rx, rc, cg·g + cl]
//! ```
//!
//! with the spatial axes reordered to `(n, oh, cg, ow, cl)`, the image's
//! load no longer depends on `cl` (one broadcast per tap) and the output
//! and the weight are contiguous in it: case 2 tiles `ow` by `cl`, so a
//! tile is several pixels of one group, each tap one load of the weight's
//! vector and one broadcast per pixel (TVM's `split` and `reorder` of the
//! channel loop, done before the nest is scheduled). RegNet's 3 × 3
//! convolutions (groups of 8 channels) are such nests once
//! `ConvertLayout` puts them in NHWC.
//!
//! Splitting and reordering spatial loops never changes a value: every
//! output element is still computed once, from the same loads in the same
//! order.

use super::nest::{Axis, Nest};
use super::util::collect_loads;
use crate::ir::prim_expr::{PrimExpr, PrimExprKind, TirVar};
use std::collections::HashMap;

impl Nest {
    /// This nest with its last spatial axis split by the group width `g`
    /// of a load's `c // g`, when that makes it a case-2 reduction (see
    /// the module docs), else `None`.
    pub(super) fn groups_split(&self) -> Option<Nest> {
        let n = self.spatial.len();
        if n < 2 || self.reduce.is_empty() || self.contiguous_reduction() {
            return None;
        }
        let j = &self.spatial[n - 1];
        let channels = j.extent.as_int()?;
        let g = self.group_width(&j.var)?;
        if g < 2 || g >= channels || channels % g != 0 {
            return None;
        }
        let axis = |suffix: &str, extent: i64| Axis {
            var: TirVar::with_dtype(format!("{}{suffix}", j.var.name()), j.var.dtype()),
            loop_var: TirVar::with_dtype(
                format!("{}{suffix}", j.loop_var.name()),
                j.loop_var.dtype(),
            ),
            extent: PrimExpr::int_of(j.loop_var.dtype(), extent),
        };
        let (cg, cl) = (axis("_g", channels / g), axis("_l", g));
        let dt = j.var.dtype();
        let c = PrimExpr::var(&cg.var) * PrimExpr::int_of(dt, g) + PrimExpr::var(&cl.var);
        let map: HashMap<TirVar, PrimExpr> = [(j.var.clone(), c)].into_iter().collect();
        let mut spatial = self.spatial[..n - 2].to_vec();
        spatial.extend([cg, self.spatial[n - 2].clone(), cl]);
        let split = self.with_axes(spatial, &map);
        split.contiguous_reduction().then_some(split)
    }

    /// The group width `g` of a grouped convolution's image load: the
    /// first load of an input with an index that sums a reduce variable
    /// and a `e // g` of `var` (`rc + c // g · icg`), `g` a constant. A
    /// prepacked weight's panel, `W[c // 32, k, c % 32]`, has no such
    /// index.
    fn group_width(&self, var: &TirVar) -> Option<i64> {
        let mut loads = Vec::new();
        collect_loads(&self.value, &mut loads);
        let reduce: Vec<&TirVar> = self.reduce.iter().map(|a| &a.var).collect();
        loads
            .iter()
            .filter(|(b, _)| *b != self.buffer)
            .flat_map(|(_, indices)| indices)
            .filter(|e| e.free_vars().iter().any(|v| reduce.contains(&v)))
            .find_map(|e| divisor_of(e, var))
    }
}

/// The divisor `g` of the first `e // g` in `index`, `g` a constant and
/// `e` reading `var`.
fn divisor_of(index: &PrimExpr, var: &TirVar) -> Option<i64> {
    if let PrimExprKind::Div(e, g) = index.kind() {
        if let Some(g) = g.as_int().filter(|_| e.free_vars().contains(var)) {
            return Some(g);
        }
    }
    index
        .children()
        .into_iter()
        .find_map(|c| divisor_of(c, var))
}

#[cfg(test)]
#[path = "groups/tests.rs"]
mod tests;
