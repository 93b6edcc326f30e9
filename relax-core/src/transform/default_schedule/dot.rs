//! Case 4 of the module docs: a reduction along a variable every input is
//! contiguous in, while no input is contiguous along the output's last
//! axis — a matmul whose right operand is read transposed
//! (`C[i, j] += A[i, k] · W[j, k]`, the MLP's `x · wᵀ` once the transpose
//! is inlined). Each output is a dot product vectorized along `k`:
//! [`VECTOR_LANES`] partial sums in a local buffer (one vector register),
//! a horizontal sum, then the tail of `k`. The partial sums reassociate the
//! reduction (numerical tests compare with a tolerance that follows from
//! its length). Row maxima and minima (softmax's first step) take the same
//! path with `max`/`min` in place of `+`, their lanes starting from the
//! reduction's init.
//!
//! **Grouped loads.** A matmul whose weight is dequantized inside it (the
//! weight read as int8 or packed int4 values and a scale per group of `G`
//! along `k`, see `GraphPartitioner`'s dequantizes) reads the scale at
//! `k // G`, and packed nibbles at `(k // 32) · 16 + k % 16` shifted by
//! `(k % 32) // 16 · 4`: loads that are not affine in `k`. When every such
//! index divides `k` by constants (floor division or modulo), `G` is the
//! least common multiple of them and of [`VECTOR_LANES`], and the loop
//! over `k` is split into groups, `k = kg · G + ki · L + l`: the loads,
//! simplified with `ki · L + l` in `[0, G)`, are then affine in the lane
//! `l` (the scale and the shift invariant, the bytes contiguous), and the
//! schedule applies when each is contiguous or invariant in `l`. The
//! groups run as the chunks do without them; the `k` past the last whole
//! group is the tail.
//!
//! **Matrix-vector products** (the rows that do not fill a block of
//! [`DOT_ROWS`]: all of a decoder's one token) take their columns
//! [`DOT_ROWS`] at a time, four weight rows summed in four independent
//! vectors that share each load of the token's row, so the adds do not
//! wait on one another. With grouped loads, each block first prefetches
//! the next block's weight rows (`T.prefetch`, a cache line at a time):
//! unpacking quantized weights takes a few vector steps per byte, which
//! fill the core's window of outstanding loads long before enough bytes
//! are in flight to stream from memory.

use super::nest::Nest;
use super::util::*;
use super::VECTOR_LANES;
use crate::ir::Attrs;

/// How a reduction combines: `C = C ⊕ term`.
#[derive(Clone, Copy)]
enum Combiner {
    Add,
    Max,
    Min,
    /// Legalization's float maximum, NaN when either side is
    /// ([`te::maximum`]: a `Select`). Taken lane by lane and then across
    /// the lanes, a NaN anywhere still reaches the result.
    NanMax,
    /// The same for the minimum ([`te::minimum`]).
    NanMin,
}

impl Combiner {
    fn apply(self, a: PrimExpr, b: PrimExpr) -> PrimExpr {
        match self {
            Combiner::Add => a + b,
            Combiner::Max => a.max(b),
            Combiner::Min => a.min(b),
            Combiner::NanMax => te::maximum(a, b),
            Combiner::NanMin => te::minimum(a, b),
        }
    }
}

/// Output rows that share each load of a dot-product block (and the
/// columns that share a matrix-vector product's row).
pub const DOT_ROWS: i64 = 4;

/// The largest group along `k` of grouped loads (see the module docs).
pub const DOT_MAX_GROUP: i64 = 1024;
use crate::arith::analyzer::Analyzer;
use crate::ir::prim_expr::{PrimExpr, PrimExprKind, TirVar};
use crate::tir::buffer_uses::expr_reads;
use crate::tir::{te, Block, Buffer, ForKind, Stmt};
use std::collections::HashMap;

impl Nest {
    /// Whether case 4 applies: one reduce variable, contiguous in some
    /// input and contiguous or absent in the others, absent from the store, a float update of the form
    /// `C[..] + term` with `term` not reading `C`, and an init.
    pub(super) fn dot_reduction_applies(&self) -> bool {
        let [k] = self.reduce.as_slice() else {
            return false;
        };
        if !self.buffer.dtype().is_float() || self.init.is_none() {
            return false;
        }
        let (store, loads) = self.coefficients(&k.var);
        let contiguous = loads.contains(&Some(1)) && loads.iter().all(|c| matches!(c, Some(0 | 1)));
        if store != Some(0) || !(contiguous || self.dot_group().is_some()) {
            return false;
        }
        self.dot_term().is_some()
    }

    /// The group `G` of grouped loads (see the module docs): `None` when
    /// every load is affine in `k` already, when some is not and dividing
    /// `k` into groups does not make every load contiguous or invariant in
    /// the lane, or when `G` would exceed [`DOT_MAX_GROUP`].
    fn dot_group(&self) -> Option<i64> {
        let [k] = self.reduce.as_slice() else {
            return None;
        };
        let mut loads = Vec::new();
        collect_loads(&self.value, &mut loads);
        let offsets: Vec<PrimExpr> = loads
            .iter()
            .filter(|(b, _)| *b != self.buffer)
            .map(|(b, i)| b.offset_of(i))
            .collect();
        let mut group = VECTOR_LANES;
        let mut grouped = false;
        for o in offsets.iter().filter(|o| linear_coeff(o, &k.var).is_none()) {
            let mut divisors = Vec::new();
            divisors_of(o, &k.var, &mut divisors);
            if divisors.is_empty() {
                return None;
            }
            for d in divisors {
                group = lcm(group, d);
                if group > DOT_MAX_GROUP {
                    return None;
                }
            }
            grouped = true;
        }
        if !grouped {
            return None;
        }
        let (map, an, [_, _, l]) = self.group_split(group);
        let mut lane_coeffs = offsets
            .iter()
            .map(|o| linear_coeff(&an.simplify(&o.substitute_map(&map)), &l));
        let mut any_contiguous = false;
        lane_coeffs
            .all(|c| {
                any_contiguous |= c == Some(1);
                matches!(c, Some(0 | 1))
            })
            .then_some(group)
            .filter(|_| any_contiguous)
    }

    /// `k := kg · G + ki · L + l` for groups of `G` (`kg · G + l` when `G`
    /// is one vector, `L`), an analyzer that knows
    /// the ranges of the spatial variables and of `kg`, `ki` and `l`, and
    /// the new variables `[kg, ki, l]`.
    fn group_split(&self, group: i64) -> (HashMap<TirVar, PrimExpr>, Analyzer, [TirVar; 3]) {
        let k = &self.reduce[0];
        let kdt = k.loop_var.dtype();
        let int = |v: i64| PrimExpr::int_of(kdt, v);
        let (kg, ki, l) = (
            fresh(&k.loop_var, "_g"),
            fresh(&k.loop_var, "_o"),
            fresh(&k.loop_var, "_l"),
        );
        let mut an = super::nest::ranges(&self.spatial);
        match k.extent.as_int() {
            Some(e) => an.bind_range(&kg, Some(0), Some((e / group - 1).max(0))),
            None => an.mark_non_negative(&kg),
        }
        an.bind_range(&ki, Some(0), Some(group / VECTOR_LANES - 1));
        an.bind_range(&l, Some(0), Some(VECTOR_LANES - 1));
        // One vector a group: no `ki`.
        let within = if group > VECTOR_LANES {
            PrimExpr::var(&ki) * int(VECTOR_LANES) + PrimExpr::var(&l)
        } else {
            PrimExpr::var(&l)
        };
        let mut map = HashMap::new();
        map.insert(k.var.clone(), PrimExpr::var(&kg) * int(group) + within);
        (map, an, [kg, ki, l])
    }

    /// `term` of an update `C[..] ⊕ term`.
    fn dot_term(&self) -> Option<PrimExpr> {
        self.dot_update().map(|(_, t)| t)
    }

    /// The combiner `⊕` (`+`, `max`, `min`) and `term` of an update
    /// `C[..] ⊕ term`.
    fn dot_update(&self) -> Option<(Combiner, PrimExpr)> {
        let is_out = |e: &PrimExpr| matches!(e.kind(), PrimExprKind::BufferLoad(buf, idx) if *buf == self.buffer && *idx == self.indices);
        let (combiner, a, b) = match self.value.kind() {
            PrimExprKind::Add(a, b) => (Combiner::Add, a, b),
            PrimExprKind::Max(a, b) => (Combiner::Max, a, b),
            PrimExprKind::Min(a, b) => (Combiner::Min, a, b),
            // `Select(take_term, term, C)`, exactly as `te::maximum(C, term)`
            // or `te::minimum(C, term)` builds it.
            PrimExprKind::Select(_, t, f) if is_out(f) => {
                let out = f.clone();
                let nan = if te::maximum(out.clone(), t.clone()) == self.value {
                    Combiner::NanMax
                } else if te::minimum(out.clone(), t.clone()) == self.value {
                    Combiner::NanMin
                } else {
                    return None;
                };
                return (!expr_reads(t, &self.buffer)).then(|| (nan, t.clone()));
            }
            _ => return None,
        };
        let reads_out = |e: &PrimExpr| expr_reads(e, &self.buffer);
        let term = match (is_out(a), is_out(b)) {
            (true, false) if !reads_out(b) => b.clone(),
            (false, true) if !reads_out(a) => a.clone(),
            _ => return None,
        };
        Some((combiner, term))
    }

    /// Case 4 of the module docs. With two or more spatial axes, rows of
    /// the second-to-last axis go [`DOT_ROWS`] at a time, sharing each
    /// load of the operand that does not depend on the row (a weight row
    /// of `x · wᵀ`); the rows that do not fill a block go one by one, their
    /// columns [`DOT_ROWS`] at a time (sharing each load of the row) and
    /// in parallel when the nest is (a matrix-vector product has no block
    /// of rows to share out). When one batch axis too short to
    /// share out ([`too_short_to_share`]) is all there is around them, the
    /// threads take (batch, column) pairs, each running its blocks of rows.
    pub(super) fn dot_reduction(&self, parallel: bool) -> Stmt {
        let n = self.spatial.len();
        if n < 2 {
            let point = self.dot_block(&identity(&self.spatial), None);
            return nest(&self.spatial, point, parallel.then_some(ForKind::Parallel));
        }
        let (i, j) = (&self.spatial[n - 2], &self.spatial[n - 1]);
        let batch = &self.spatial[..n - 2];
        let idt = i.loop_var.dtype();
        let rows = PrimExpr::int_of(idt, DOT_ROWS);
        let an = Analyzer::new();
        let tiles = an.simplify(&i.extent.clone().floordiv(rows.clone()));
        let full = an.simplify(&(tiles.clone() * rows.clone()));
        let rest = an.simplify(&(i.extent.clone() - full.clone()));
        if parallel && batch.len() == 1 && too_short_to_share(&batch[0]) {
            // One batch axis too short to share out (a batch of one: a
            // softmax's rows over (batch, heads, query)): the threads take
            // (batch, column) pairs instead, each running its rows.
            let mut per_column = Vec::new();
            if !is_zero(&tiles) {
                let io = fresh(&i.loop_var, "_o");
                let mut map = identity(batch);
                map.insert(j.var.clone(), PrimExpr::var(&j.loop_var));
                let i0 = PrimExpr::var(&io) * rows.clone();
                let block = self.dot_block(&map, Some((i, i0)));
                let zero_i = PrimExpr::int_of(idt, 0);
                per_column.push(for_(&io, zero_i, tiles, ForKind::Serial, block));
            }
            if !is_zero(&rest) {
                let it = fresh(&i.loop_var, "_t");
                let mut map = identity(batch);
                map.insert(i.var.clone(), PrimExpr::var(&it));
                map.insert(j.var.clone(), PrimExpr::var(&j.loop_var));
                let block = self.dot_block(&map, None);
                per_column.push(for_(&it, full, rest, ForKind::Serial, block));
            }
            let axes = [batch[0].clone(), j.clone()];
            return nest(&axes, seq(per_column), Some(ForKind::Parallel));
        }
        let mut body = Vec::new();
        if !is_zero(&tiles) {
            let (io, jl) = (fresh(&i.loop_var, "_o"), fresh(&j.loop_var, ""));
            let mut map = identity(batch);
            map.insert(j.var.clone(), PrimExpr::var(&jl));
            let i0 = PrimExpr::var(&io) * rows.clone();
            let block = self.dot_block(&map, Some((i, i0)));
            let inner = for_(&jl, zero(j), j.extent.clone(), ForKind::Serial, block);
            let kind = if parallel && batch.is_empty() {
                ForKind::Parallel
            } else {
                ForKind::Serial
            };
            body.push(for_(&io, PrimExpr::int_of(idt, 0), tiles, kind, inner));
        }
        if !is_zero(&rest) {
            // The rows left over are all the rows of a matrix-vector
            // product (a decoder's token, `n = 1`): without a batch to
            // share out, their columns go to the threads, [`DOT_ROWS`] at
            // a time sharing each load of the row (independent sums, so
            // the adds do not wait on one another), then one by one.
            let kind = if parallel && batch.is_empty() {
                ForKind::Parallel
            } else {
                ForKind::Serial
            };
            let it = fresh(&i.loop_var, "_t");
            let jdt = j.loop_var.dtype();
            let cols = PrimExpr::int_of(jdt, DOT_ROWS);
            let col_tiles = an.simplify(&j.extent.clone().floordiv(cols.clone()));
            let col_full = an.simplify(&(col_tiles.clone() * cols.clone()));
            let col_rest = an.simplify(&(j.extent.clone() - col_full.clone()));
            let mut per_row = Vec::new();
            let mut row_map = identity(batch);
            row_map.insert(i.var.clone(), PrimExpr::var(&it));
            if !is_zero(&col_tiles) {
                let jo = fresh(&j.loop_var, "_o");
                let j0 = PrimExpr::var(&jo) * cols.clone();
                let mut block = self.dot_block(&row_map, Some((j, j0.clone())));
                if let Some(ahead) = self.prefetch_rows(&row_map, j, j0 + cols) {
                    block = seq(vec![ahead, block]);
                }
                per_row.push(for_(&jo, zero(j), col_tiles, kind, block));
            }
            if !is_zero(&col_rest) {
                let jl = fresh(&j.loop_var, "_t");
                let mut map = row_map;
                map.insert(j.var.clone(), PrimExpr::var(&jl));
                let block = self.dot_block(&map, None);
                per_row.push(for_(&jl, col_full, col_rest, ForKind::Serial, block));
            }
            body.push(for_(&it, full, rest, ForKind::Serial, seq(per_row)));
        }
        let outer = (parallel && !batch.is_empty()).then_some(ForKind::Parallel);
        nest(batch, seq(body), outer)
    }

    /// A matrix-vector product of grouped (dequantized) weights: a
    /// prefetch of each cache line of the [`DOT_ROWS`] weight rows from
    /// `j0` along the axis `j` (the next block's, the last row standing
    /// in past the end), read while this block computes. A block of such
    /// rows takes about as long as a load from memory, so the next one
    /// arrives in time; without it the few vector steps per byte that
    /// unpacking takes fill the core's window of outstanding loads long
    /// before enough bytes are in flight (Q8_0 weights stream from memory
    /// at a third of float32's bytes per second). `None` for other
    /// nests, whose loads keep up without it.
    fn prefetch_rows(
        &self,
        map: &HashMap<TirVar, PrimExpr>,
        j: &super::nest::Axis,
        j0: PrimExpr,
    ) -> Option<Stmt> {
        let group = self.dot_group()?;
        let k = &self.reduce[0];
        let kdt = k.loop_var.dtype();
        let an = super::nest::ranges(&self.spatial);
        let mut loads = Vec::new();
        collect_loads(&self.value, &mut loads);
        let (r, p) = (fresh(&k.loop_var, "_pr"), fresh(&k.loop_var, "_pf"));
        let last = an.simplify(&(j.extent.clone() - PrimExpr::int_of(j.loop_var.dtype(), 1)));
        let row = (j0 + PrimExpr::var(&r).cast(j.var.dtype())).min(last);
        // Whole groups of `k`, at least 256.
        let reach = (256 + group - 1) / group * group;
        let mut stmts = Vec::new();
        let mut seen = Vec::new();
        for (b, idx) in loads {
            if b == self.buffer || seen.contains(&b) || !idx.iter().any(|i| uses_var(i, &j.var)) {
                continue;
            }
            seen.push(b.clone());
            // Bytes of `b` that `reach` values of `k` span, hence the `k`
            // a cache line spans (whole groups).
            let at = |kv: PrimExpr| {
                let mut m = map.clone();
                m.insert(j.var.clone(), PrimExpr::var(&j.loop_var));
                m.insert(k.var.clone(), kv);
                idx.iter().map(|i| i.substitute_map(&m)).collect::<Vec<_>>()
            };
            let span = an.simplify(
                &(b.offset_of(&at(PrimExpr::int_of(kdt, reach)))
                    - b.offset_of(&at(PrimExpr::int_of(kdt, 0)))),
            );
            let Some(bytes) = span.as_int().map(|e| e * b.dtype().size_in_bytes() as i64) else {
                continue;
            };
            if bytes <= 0 {
                continue;
            }
            let step = (CACHE_LINE_BYTES * reach / bytes / group).max(1) * group;
            let lines = an.simplify(
                &(k.extent.clone() + PrimExpr::int_of(kdt, step - 1))
                    .floordiv(PrimExpr::int_of(kdt, step)),
            );
            let mut m = map.clone();
            m.insert(j.var.clone(), row.clone());
            m.insert(
                k.var.clone(),
                PrimExpr::var(&p) * PrimExpr::int_of(kdt, step),
            );
            let indices = idx
                .iter()
                .map(|i| an.simplify(&i.substitute_map(&m)))
                .collect();
            stmts.push(for_(
                &p,
                PrimExpr::int_of(kdt, 0),
                lines,
                ForKind::Serial,
                prefetch(&b, indices),
            ));
        }
        if stmts.is_empty() {
            return None;
        }
        Some(for_(
            &r,
            PrimExpr::int_of(kdt, 0),
            PrimExpr::int_of(kdt, DOT_ROWS),
            ForKind::Serial,
            seq(stmts),
        ))
    }

    /// The dot products of one output point (`map` binds every spatial
    /// variable), or of [`DOT_ROWS`] rows `i0 + r` of the axis `i` (`map`
    /// binds the others).
    fn dot_block(
        &self,
        map: &HashMap<TirVar, PrimExpr>,
        rows: Option<(&super::nest::Axis, PrimExpr)>,
    ) -> Stmt {
        let k = &self.reduce[0];
        let (combiner, term) = self.dot_update().expect("checked by dot_reduction_applies");
        let kdt = k.loop_var.dtype();
        let int = |v: i64| PrimExpr::int_of(kdt, v);
        let lanes = int(VECTOR_LANES);
        let an = Analyzer::new();
        // Grouped loads step through whole groups of `k`, else chunks of
        // one vector.
        let group = self.dot_group();
        let step = int(group.unwrap_or(VECTOR_LANES));
        let chunks = an.simplify(&k.extent.clone().floordiv(step.clone()));
        let full = an.simplify(&(chunks.clone() * step));
        let rest = an.simplify(&(k.extent.clone() - full.clone()));
        let dtype = self.buffer.dtype();
        let nrows = if rows.is_some() { DOT_ROWS } else { 1 };
        let acc = Buffer::new("dot", vec![int(nrows), int(VECTOR_LANES)], dtype);
        // The row loop (unrolled) binds `i` to `i0 + r`; one row binds nothing.
        let row_var = fresh(&k.loop_var, "_r");
        let with_row = |m: &mut HashMap<TirVar, PrimExpr>| {
            if let Some((i, i0)) = &rows {
                m.insert(
                    i.var.clone(),
                    i0.clone() + PrimExpr::var(&row_var).cast(i.var.dtype()),
                );
            }
        };
        let acc_row = || match rows {
            Some(_) => PrimExpr::var(&row_var),
            None => int(0),
        };
        let over_rows = |body: Stmt| match rows {
            Some(_) => for_(&row_var, int(0), int(nrows), ForKind::Unrolled, body),
            None => body,
        };
        // acc[r, l] = the combiner's identity: 0 for a sum; for max and
        // min the reduction's own init (its identity, -inf / +inf).
        let mut mi = map.clone();
        with_row(&mut mi);
        let identity_value = match combiner {
            Combiner::Add => PrimExpr::float(dtype, 0.0),
            _ => self.init.as_ref().expect("checked").substitute_map(&mi),
        };
        let l0 = fresh(&k.loop_var, "_l");
        let init_acc = over_rows(for_(
            &l0,
            int(0),
            lanes.clone(),
            ForKind::Vectorized,
            Stmt::BufferStore {
                buffer: acc.clone(),
                value: identity_value,
                indices: vec![acc_row(), PrimExpr::var(&l0)],
            },
        ));
        // acc[r, l] += term[i := i0 + r, k := ko * L + l], or with groups
        // term[i := i0 + r, k := kg * G + ki * L + l] simplified in the
        // ranges of kg, ki and l.
        let mut m = map.clone();
        with_row(&mut m);
        let (outer, l1, lane_term) = match group {
            None => {
                let (ko, l1) = (fresh(&k.loop_var, "_o"), fresh(&k.loop_var, "_l"));
                m.insert(
                    k.var.clone(),
                    PrimExpr::var(&ko) * lanes.clone() + PrimExpr::var(&l1),
                );
                (vec![(ko, chunks.clone())], l1, term.substitute_map(&m))
            }
            Some(g) => {
                let (split, an, [kg, ki, l1]) = self.group_split(g);
                let split_term = an.simplify(&term.substitute_map(&split));
                let mut outer = vec![(kg, chunks.clone())];
                if g > VECTOR_LANES {
                    outer.push((ki, int(g / VECTOR_LANES)));
                }
                (outer, l1, split_term.substitute_map(&m))
            }
        };
        let lane = PrimExpr::load(&acc, vec![acc_row(), PrimExpr::var(&l1)]);
        let mut update = over_rows(for_(
            &l1,
            int(0),
            lanes.clone(),
            ForKind::Vectorized,
            Stmt::BufferStore {
                buffer: acc.clone(),
                value: combiner.apply(lane, lane_term),
                indices: vec![acc_row(), PrimExpr::var(&l1)],
            },
        ));
        for (v, extent) in outer.into_iter().rev() {
            update = for_(&v, int(0), extent, ForKind::Serial, update);
        }
        // acc[r, 0] = the lanes combined; acc[r, 0] ⊕= term over the tail
        // of k; C = init ⊕ acc[r, 0] (or the epilogue of it).
        let mut m = map.clone();
        with_row(&mut m);
        let init = self.init.as_ref().expect("checked").substitute_map(&m);
        // The lanes are combined pairwise in vectors (8 + 8, 4 + 4, 2 + 2,
        // 1 + 1): four dependent steps instead of sixteen.
        let mut finish = Vec::new();
        let mut half = VECTOR_LANES / 2;
        while half >= 1 {
            let l = fresh(&k.loop_var, "_h");
            let at = |offset: i64| {
                let lane = match offset {
                    0 => PrimExpr::var(&l),
                    o => PrimExpr::var(&l) + int(o),
                };
                PrimExpr::load(&acc, vec![acc_row(), lane])
            };
            finish.push(for_(
                &l,
                int(0),
                int(half),
                ForKind::Vectorized,
                Stmt::BufferStore {
                    buffer: acc.clone(),
                    value: combiner.apply(at(0), at(half)),
                    indices: vec![acc_row(), PrimExpr::var(&l)],
                },
            ));
            half /= 2;
        }
        let lane0 = PrimExpr::load(&acc, vec![acc_row(), int(0)]);
        let kt = fresh(&k.loop_var, "_t");
        let mut mt = m.clone();
        mt.insert(k.var.clone(), PrimExpr::var(&kt));
        if !is_zero(&rest) {
            finish.push(for_(
                &kt,
                full,
                rest.clone(),
                ForKind::Serial,
                Stmt::BufferStore {
                    buffer: acc.clone(),
                    value: combiner.apply(lane0.clone(), term.substitute_map(&mt)),
                    indices: vec![acc_row(), int(0)],
                },
            ));
        }
        finish.push(self.final_store(
            &m,
            match combiner {
                Combiner::Add => init + lane0,
                // The lanes started from the init already.
                _ => lane0,
            },
        ));
        let mut body = vec![init_acc];
        if !is_zero(&chunks) {
            body.push(update);
        }
        body.push(over_rows(seq(finish)));
        Stmt::Block(Box::new(Block {
            name: format!("{}_dot", self.buffer.name()),
            iter_vars: vec![],
            iter_values: vec![],
            reads: vec![],
            writes: vec![],
            init: None,
            body: Box::new(seq(body)),
            alloc_buffers: vec![acc],
            annotations: Attrs::new(),
        }))
    }
}

/// The positive constant divisors `c` of the floor divisions and modulos
/// `a // c`, `a % c` in `e` whose `a` uses `k`.
fn divisors_of(e: &PrimExpr, k: &TirVar, out: &mut Vec<i64>) {
    if let PrimExprKind::Div(a, c) | PrimExprKind::Mod(a, c) = e.kind() {
        if let Some(c) = c.as_int().filter(|&c| c > 0) {
            if uses_var(a, k) {
                out.push(c);
            }
        }
    }
    for c in e.children() {
        divisors_of(c, k, out);
    }
}

fn lcm(a: i64, b: i64) -> i64 {
    let (mut x, mut y) = (a, b);
    while y != 0 {
        (x, y) = (y, x % y);
    }
    a / x * b
}
