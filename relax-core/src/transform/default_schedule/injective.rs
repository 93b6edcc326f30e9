//! Case 1 of the module docs: injective nests (vectorized, parallel, and
//! transposes cut into tiles).

use super::nest::{Axis, Nest};
use super::util::*;
use super::{TRANSPOSE_BLOCK_TILES, TRANSPOSE_TILE_MAX, TRANSPOSE_TILE_MIN};
use crate::arith::analyzer::Analyzer;
use crate::ir::prim_expr::{PrimExpr, TirVar};
use crate::tir::{ForKind, Stmt};
use std::collections::HashMap;

impl Nest {
    /// Case 1 of the module docs.
    pub(super) fn injective(&self, parallel: bool) -> Stmt {
        let Some((inner, outer)) = self.spatial.split_last() else {
            return self.store(&HashMap::new(), false);
        };
        if let Some(tiled) = self.transpose_tiles(parallel) {
            return tiled;
        }
        if let Some(split) = self.interleaved(parallel) {
            return split;
        }
        let vector = self.vectorizes(&inner.var);
        let inner_kind = if vector {
            ForKind::Vectorized
        } else {
            ForKind::Serial
        };
        let mut map = identity(&self.spatial);
        if outer.is_empty() && parallel {
            return chunked(inner, inner_kind, self.knobs.parallel_chunk, |v| {
                map.insert(inner.var.clone(), v);
                self.store(&map, false)
            });
        }
        let body = for_(
            &inner.loop_var,
            zero(inner),
            inner.extent.clone(),
            inner_kind,
            self.store(&map, false),
        );
        if parallel {
            fused(outer, body, &mut map, |m| self.store(m, false))
        } else {
            nest(outer, body, Some(ForKind::Serial))
        }
    }

    /// An injective nest whose innermost loop reads some input with a
    /// stride, where that input is contiguous along another loop `a` (a
    /// transpose): `a` and the innermost loop `b` are cut into square tiles
    /// of [`Nest::transpose_tile`] (one vector of the target) whose reads
    /// and writes each stay in a few cache lines. A whole tile is two nested
    /// `Vectorized` loops, which the LLVM back end runs as a block of
    /// vectors transposed in registers; a tile at the edge runs element by
    /// element. The other loops keep their order outside the tiles.
    pub(super) fn transpose_tiles(&self, parallel: bool) -> Option<Stmt> {
        let (b, _) = self.spatial.split_last()?;
        let (store, loads) = self.coefficients(&b.var);
        if store != Some(1) || loads.iter().all(|c| matches!(c, Some(0 | 1))) {
            return None;
        }
        // The loop along which a strided load is contiguous.
        let mut all_loads = Vec::new();
        collect_loads(&self.value, &mut all_loads);
        let a_pos = self.spatial[..self.spatial.len() - 1]
            .iter()
            .position(|a| {
                all_loads.iter().any(|(buf, idx)| {
                    let offset = buf.offset_of(idx);
                    linear_coeff(&offset, &a.var) == Some(1)
                        && !matches!(linear_coeff(&offset, &b.var), Some(0 | 1))
                })
            })?;
        let a = &self.spatial[a_pos];
        let tile = self.transpose_tile();
        // Loops shorter than a tile stay as they are.
        let short = |x: &Axis| x.extent.as_int().is_some_and(|e| e < tile);
        if short(a) || short(b) {
            return None;
        }
        let an = Analyzer::new();
        let mut whole = identity(&self.spatial);
        let mut edge = identity(&self.spatial);
        let mut tiles = Vec::new();
        let mut vectors = Vec::new();
        let mut points = Vec::new();
        let mut full: Option<PrimExpr> = None;
        let block = tile * TRANSPOSE_BLOCK_TILES;
        let others: Vec<Axis> = self
            .spatial
            .iter()
            .enumerate()
            .filter(|(k, _)| *k != a_pos && *k != self.spatial.len() - 1)
            .map(|(_, x)| x.clone())
            .collect();
        // `x / d` rounded up, in the dtype of `axis`'s loop.
        let ceil = |x: PrimExpr, d: i64, axis: &Axis| {
            let d_expr = PrimExpr::int_of(axis.loop_var.dtype(), d);
            an.simplify(&((x + (d - 1)).floordiv(d_expr)))
        };
        let block_count = |axis: &Axis| ceil(axis.extent.clone(), block, axis);
        // Without other loops to run in parallel, the two block loops are
        // fused into one parallel loop `f`: block `(f / nb, f % nb)`.
        let fused_blocks = (parallel && others.is_empty()).then(|| {
            let f = fresh(&a.loop_var, "_blocks");
            let nb = block_count(b);
            let total = an.simplify(&(block_count(a) * nb.clone()));
            let ids = [
                PrimExpr::var(&f).floordiv(nb.clone()),
                PrimExpr::var(&f).floormod(nb),
            ];
            (f, total, ids)
        });
        let mut blocks = Vec::new();
        for (k, axis) in [a, b].into_iter().enumerate() {
            let dt = axis.loop_var.dtype();
            let int = |v: i64| PrimExpr::int_of(dt, v);
            let (ob, o, i, e) = (
                fresh(&axis.loop_var, "_b"),
                fresh(&axis.loop_var, "_o"),
                fresh(&axis.loop_var, "_i"),
                fresh(&axis.loop_var, "_e"),
            );
            let nblocks = block_count(axis);
            let block_id = match &fused_blocks {
                Some((_, _, ids)) => ids[k].clone(),
                None if nblocks.as_int() == Some(1) => int(0),
                None => PrimExpr::var(&ob),
            };
            let block_start = block_id * int(block);
            // The tiles of a block: all of them but in the last block.
            let count = match axis.extent.as_int() {
                Some(n) if n % block == 0 => int(TRANSPOSE_BLOCK_TILES),
                _ => an.simplify(&int(TRANSPOSE_BLOCK_TILES).min(ceil(
                    axis.extent.clone() - block_start.clone(),
                    tile,
                    axis,
                ))),
            };
            let start = an.simplify(&(block_start + PrimExpr::var(&o) * int(tile)));
            // The last tile may be partial: its extent is what is left.
            let (extent, whole_tile) = match axis.extent.as_int() {
                Some(n) if n % tile == 0 => (int(tile), None),
                _ => (
                    int(tile).min(axis.extent.clone() - start.clone()),
                    Some((start.clone() + int(tile)).le(axis.extent.clone())),
                ),
            };
            if let Some(c) = whole_tile {
                full = Some(match full {
                    None => c,
                    Some(f) => f.and(c),
                });
            }
            whole.insert(axis.var.clone(), start.clone() + PrimExpr::var(&i));
            edge.insert(axis.var.clone(), start + PrimExpr::var(&e));
            if nblocks.as_int() != Some(1) {
                blocks.push((ob, nblocks));
            }
            tiles.push((o, count));
            vectors.push((i, int(tile)));
            points.push((e, extent));
        }
        let loops = |store: Stmt, loops: &[(TirVar, PrimExpr)], kind: ForKind| {
            loops.iter().rev().fold(store, |body, (v, extent)| {
                for_(
                    v,
                    PrimExpr::int_of(v.dtype(), 0),
                    extent.clone(),
                    kind,
                    body,
                )
            })
        };
        let vector = loops(self.store(&whole, false), &vectors, ForKind::Vectorized);
        let body = match full {
            None => vector,
            Some(cond) => Stmt::IfThenElse {
                cond,
                then_case: Box::new(vector),
                else_case: Some(Box::new(loops(
                    self.store(&edge, false),
                    &points,
                    ForKind::Serial,
                ))),
            },
        };
        let inner = loops(body, &tiles, ForKind::Serial);
        if let Some((f, total, _)) = fused_blocks {
            let dt = f.dtype();
            return Some(for_(
                &f,
                PrimExpr::int_of(dt, 0),
                total,
                ForKind::Parallel,
                inner,
            ));
        }
        let inner = loops(inner, &blocks, ForKind::Serial);
        let kind = parallel.then_some(ForKind::Parallel);
        Some(nest(&others, inner, kind))
    }
}

impl Nest {
    /// The side of a transpose's square tiles: the lanes of one vector of
    /// the target for the stored dtype, within
    /// [`TRANSPOSE_TILE_MIN`]`..=`[`TRANSPOSE_TILE_MAX`].
    pub(super) fn transpose_tile(&self) -> i64 {
        let bits = i64::from(self.buffer.dtype().bits().max(8));
        (i64::from(self.vector_bits) / bits).clamp(TRANSPOSE_TILE_MIN, TRANSPOSE_TILE_MAX)
    }
}

/// The loops over `outer` fused into one `Parallel` loop around `inner`
/// (each axis recovered by division and modulo); a single axis is just made
/// parallel. `map` gets the axes' values and `store` rebuilds the inner
/// store with them.
pub(super) fn fused(
    outer: &[Axis],
    inner: Stmt,
    map: &mut HashMap<TirVar, PrimExpr>,
    store: impl Fn(&HashMap<TirVar, PrimExpr>) -> Stmt,
) -> Stmt {
    if outer.len() <= 1 {
        return nest(outer, inner, Some(ForKind::Parallel));
    }
    let dt = outer[0].loop_var.dtype();
    let name = outer
        .iter()
        .map(|a| a.loop_var.name())
        .collect::<Vec<_>>()
        .join("_");
    let f = TirVar::with_dtype(format!("{name}_fused"), dt);
    let an = Analyzer::new();
    let total = an.simplify(
        &outer
            .iter()
            .fold(PrimExpr::int_of(dt, 1), |acc, a| acc * a.extent.clone()),
    );
    // Axis k is (f // product of the later extents) % its extent; the
    // first needs no modulo.
    let mut stride = PrimExpr::int_of(dt, 1);
    for (k, a) in outer.iter().enumerate().rev() {
        let q = PrimExpr::var(&f).floordiv(stride.clone());
        let value = if k == 0 {
            q
        } else {
            q.floormod(a.extent.clone())
        };
        map.insert(a.var.clone(), an.simplify(&value));
        stride = an.simplify(&(stride * a.extent.clone()));
    }
    let Stmt::For {
        loop_var,
        min,
        extent,
        kind,
        ..
    } = inner
    else {
        return nest(outer, inner, Some(ForKind::Parallel));
    };
    let inner = for_(&loop_var, min, extent, kind, store(map));
    for_(&f, PrimExpr::int_of(dt, 0), total, ForKind::Parallel, inner)
}

/// A one-loop nest over `axis` split into `Parallel` chunks of `chunk`
/// iterations ([`super::PARALLEL_CHUNK`] by default, the knob `parallel_chunk`;
/// of kind `kind` inside) and a tail; `store(v)` is the body with the axis
/// at value `v`.
pub(super) fn chunked(
    axis: &Axis,
    kind: ForKind,
    chunk: i64,
    mut store: impl FnMut(PrimExpr) -> Stmt,
) -> Stmt {
    let dt = axis.loop_var.dtype();
    parallel_parts(axis, chunk, "_o", |start, extent| match extent {
        None => {
            let i = fresh(&axis.loop_var, "_i");
            let body = store(start + PrimExpr::var(&i));
            for_(
                &i,
                PrimExpr::int_of(dt, 0),
                PrimExpr::int_of(dt, chunk),
                kind,
                body,
            )
        }
        Some(rest) => {
            let t = fresh(&axis.loop_var, "_t");
            let body = store(PrimExpr::var(&t));
            for_(&t, start, rest, kind, body)
        }
    })
}

/// `axis` cut into parts of `width`: the whole parts in one `Parallel`
/// loop (its variable named with `suffix`), each `part(start, None)`, then
/// the rest, `part(start, Some(extent))`, when there is one.
pub(super) fn parallel_parts(
    axis: &Axis,
    width: i64,
    suffix: &str,
    mut part: impl FnMut(PrimExpr, Option<PrimExpr>) -> Stmt,
) -> Stmt {
    let dt = axis.loop_var.dtype();
    let an = Analyzer::new();
    let w = PrimExpr::int_of(dt, width);
    let parts_n = an.simplify(&axis.extent.clone().floordiv(w.clone()));
    let rest = an.simplify(&axis.extent.clone().floormod(w.clone()));
    let done = an.simplify(&(parts_n.clone() * w.clone()));
    let o = fresh(&axis.loop_var, suffix);
    let mut parts = Vec::new();
    if !is_zero(&parts_n) {
        let body = part(PrimExpr::var(&o) * w, None);
        parts.push(for_(
            &o,
            PrimExpr::int_of(dt, 0),
            parts_n,
            ForKind::Parallel,
            body,
        ));
    }
    if !is_zero(&rest) {
        parts.push(part(done, Some(rest)));
    }
    seq(parts)
}
