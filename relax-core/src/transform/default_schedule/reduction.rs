//! Cases 2 and 3 of the module docs: reductions (register-tiled when
//! contiguous along the innermost spatial variable, else with the init
//! hoisted).

use super::injective::parallel_parts;
use super::knobs::reduction_accumulators;
use super::nest::{Axis, Nest, ELEMENT_COST};
use super::util::*;
use super::{PARALLEL_MIN_WORK, ROW_ACCUMULATOR, TILE_COLS, TILE_ROWS, VECTOR_LANES};
use crate::arith::analyzer::Analyzer;
use crate::ir::prim_expr::{PrimExpr, TirVar};
use crate::ir::Attrs;
use crate::tir::{Block, Buffer, ForKind, Stmt};
use relax_runtime::DataType;
use std::collections::HashMap;

/// The least size of a matrix product's left factor whose rows a case-2
/// tile prefetches ([`Nest::streamed_rows`]): larger than a core's L2
/// cache, so read from memory.
pub const STREAMED_MIN_BYTES: i64 = 2 << 20;

impl Nest {
    /// Case 3 of the module docs.
    pub(super) fn plain_reduction(&self, parallel: bool) -> Stmt {
        if parallel && self.spatial.len() > 1 {
            // Every output element in one parallel loop: the outermost axis
            // alone is often a batch of 1 (a pooling at batch 1 ran on one
            // thread).
            let idt = self.index_dtype();
            let first = &self.spatial[0];
            let f = fresh(&first.loop_var, "_fused");
            let mut map = unfuse(&self.spatial, &PrimExpr::var(&f), idt);
            map.extend(identity(&self.reduce));
            let update = nest(&self.reduce, self.store(&map, false), None);
            let mut body = vec![self.store(&map, true), update];
            body.extend(self.epilogue_after(&map));
            return for_(
                &f,
                PrimExpr::int_of(idt, 0),
                fused_extent(&self.spatial, idt),
                ForKind::Parallel,
                Stmt::Seq(body),
            );
        }
        let map = identity(self.spatial.iter().chain(&self.reduce));
        let update = nest(&self.reduce, self.store(&map, false), None);
        let mut body = vec![self.store(&map, true), update];
        body.extend(self.epilogue_after(&map));
        let body = Stmt::Seq(body);
        let outer = if parallel {
            Some(ForKind::Parallel)
        } else {
            None
        };
        nest(&self.spatial, body, outer)
    }

    /// One output row (`i` and the batch variables bound by `map`) over
    /// columns `[j_min, j_min + j_extent)`, the `j` loop innermost. A row of
    /// constant width up to [`ROW_ACCUMULATOR`] is a one-row tile; a wider
    /// or symbolic one accumulates in the output: init, then the reduce
    /// loops around the update.
    pub(super) fn row(
        &self,
        map: &HashMap<TirVar, PrimExpr>,
        j_min: PrimExpr,
        j_extent: PrimExpr,
    ) -> Stmt {
        if let Some(w) = j_extent
            .as_int()
            .filter(|w| (1..=ROW_ACCUMULATOR).contains(w))
        {
            return self.tile(map, None, &j_min, w);
        }
        let j = self.spatial.last().expect("a contiguous reduction has a j");
        let reduce = new_loops(&self.reduce);
        // The init and the update loops each bind a variable of their own.
        let j_loop = |init: bool| {
            let jv = fresh(&j.loop_var, "");
            let mut map = map.clone();
            map.insert(j.var.clone(), PrimExpr::var(&jv));
            map.extend(identity(&reduce));
            let store = self.store(&map, init);
            for_(
                &jv,
                j_min.clone(),
                j_extent.clone(),
                ForKind::Vectorized,
                store,
            )
        };
        let mut body = vec![j_loop(true), nest(&reduce, j_loop(false), None)];
        if self.epilogue.is_some() {
            let jv = fresh(&j.loop_var, "_e");
            let mut map = map.clone();
            map.insert(j.var.clone(), PrimExpr::var(&jv));
            let epi = self.epilogue_after(&map).expect("an epilogue");
            body.push(for_(&jv, j_min, j_extent, ForKind::Vectorized, epi));
        }
        Stmt::Seq(body)
    }

    /// The one output row of a reduction whose only spatial loop is `j` (a
    /// column sum: `S[j] += x[k, j]`), large enough for the thread pool:
    /// its columns cut into [`ROW_ACCUMULATOR`]-wide one-row tiles run in
    /// parallel, each summing in registers down every row of the input,
    /// then the columns left over.
    fn parallel_row(&self, j: &Axis) -> Stmt {
        let dt = j.loop_var.dtype();
        parallel_parts(j, ROW_ACCUMULATOR, "_c", |start, rest| {
            let width = rest.unwrap_or_else(|| PrimExpr::int_of(dt, ROW_ACCUMULATOR));
            self.row(&HashMap::new(), start, width)
        })
    }

    /// Rows of a case-2 register tile `width` columns wide. [`TILE_ROWS`]
    /// by default. Where a row is one vector register (`width` at most
    /// [`VECTOR_LANES`] on a 512-bit target, at most 8 on a 256-bit one:
    /// a group of a grouped convolution, `groups.rs`), more rows:
    /// - twice [`TILE_ROWS`] where that divides the rows;
    /// - else, on a 256-bit target only, the most rows from
    ///   `TILE_ROWS + 1` up that divide them (7 for RegNet's rows of 28,
    ///   14 and 7 pixels).
    ///
    /// The tile is then about eight accumulators either way, the
    /// independent chains that two FMA units of four cycles' latency need:
    /// four one-register rows kept a Xeon's FMAs half idle (ResNet-18's
    /// Winograd products, 16 columns wide, ran at 0.19 of the FMA peak).
    pub(super) fn tile_rows(&self, width: i64) -> i64 {
        let n = self.spatial.len();
        let rows = n
            .checked_sub(2)
            .and_then(|p| self.spatial[p].extent.as_int());
        let lanes = (i64::from(self.vector_bits) / 32).min(VECTOR_LANES);
        let one_register = self.vector_bits >= 256 && width <= lanes;
        match rows {
            Some(m) if one_register && m % (2 * TILE_ROWS) == 0 => 2 * TILE_ROWS,
            Some(m) if one_register && self.vector_bits < 512 => (TILE_ROWS + 1..2 * TILE_ROWS)
                .rev()
                .find(|r| m % r == 0)
                .unwrap_or(TILE_ROWS),
            _ => TILE_ROWS,
        }
    }

    /// Whether this nest takes the wide tiles of a matrix product on a
    /// target with 32 vector registers (512-bit vectors): an update
    /// `A(i, k) · B(k, j)` that is not a direct convolution (whose tiles
    /// were measured apart). Its tiles are a whole row of up to
    /// [`WHOLE_ROW_TILE_COLS`] columns, else two vectors wide, and
    /// [`wide_product_rows`] tall: 8 to 16 accumulators where the other
    /// tiles hold 4 or 8.
    fn wide_product_tile(&self, i: &Axis, j: &Axis) -> bool {
        self.vector_bits >= 512 && !self.direct_conv() && self.product_operands(i, j).is_some()
    }

    /// A tile of outputs accumulated in a local buffer `acc` (registers,
    /// once LLVM has unrolled the rows): rows `i0 + ii` for `ii` below
    /// `rows` (`(i0, rows)` given), else the one row `map` binds; columns
    /// `j0 + jj` for `jj` below `width`. The accumulator is initialized,
    /// updated over the whole reduction, then written to the output.
    pub(super) fn tile(
        &self,
        map: &HashMap<TirVar, PrimExpr>,
        at: Option<(&PrimExpr, i64)>,
        j0: &PrimExpr,
        width: i64,
    ) -> Stmt {
        let n = self.spatial.len();
        let j = &self.spatial[n - 1];
        let dt = j.loop_var.dtype();
        let (i0, rows) = match at {
            Some((i0, rows)) => (Some(i0), rows),
            None => (None, 1),
        };
        let int = |v: i64| PrimExpr::int_of(dt, v);
        let acc = Buffer::new("acc", vec![int(rows), int(width)], self.buffer.dtype());
        let reduce = new_loops(&self.reduce);
        let part = |part: Part| {
            let mut map = map.clone();
            map.extend(identity(&reduce));
            // Columns: unrolled vectors of VECTOR_LANES, then one shorter
            // vectorized loop for the columns left (a tile as wide as a
            // Winograd product's 49 columns is three vectors and a lane).
            let groups = column_groups(width);
            let mut row_loop = None;
            let row = match i0 {
                Some(i0) => {
                    let i = &self.spatial[n - 2];
                    let ii = fresh(&i.loop_var, "_i");
                    map.insert(i.var.clone(), add(i0, &PrimExpr::var(&ii)));
                    row_loop = Some(ii.clone());
                    PrimExpr::var(&ii)
                }
                None => int(0),
            };
            let stores = groups
                .iter()
                .map(|group| {
                    let (loops, col) = group.loops(&j.loop_var, dt);
                    let mut map = map.clone();
                    map.insert(j.var.clone(), add(j0, &col));
                    let acc_index = vec![row.clone(), col];
                    let at = PrimExpr::load(&acc, acc_index.clone());
                    let store = match part {
                        Part::Init => {
                            let init = self.init.as_ref().expect("a reduction has an init");
                            Stmt::BufferStore {
                                buffer: acc.clone(),
                                value: init.substitute_map(&map),
                                indices: acc_index,
                            }
                        }
                        Part::Update => {
                            let value = replace_loads(&self.value, &self.buffer, &at);
                            Stmt::BufferStore {
                                buffer: acc.clone(),
                                value: value.substitute_map(&map),
                                indices: acc_index,
                            }
                        }
                        // The output (or the epilogue's) from the accumulator.
                        Part::WriteBack => self.final_store(&map, at),
                    };
                    loops.iter().rev().fold(store, |body, (v, extent, kind)| {
                        for_(v, int(0), int(*extent), *kind, body)
                    })
                })
                .collect();
            let body = seq(stores);
            match row_loop {
                Some(ii) => for_(&ii, int(0), int(rows), ForKind::Unrolled, body),
                None => body,
            }
        };
        let update = match i0.and_then(|i0| self.streamed_rows(map, i0, rows, &reduce)) {
            Some(streamed) => streamed(part(Part::Update)),
            None => nest(&reduce, part(Part::Update), None),
        };
        let body = Stmt::Seq(vec![part(Part::Init), update, part(Part::WriteBack)]);
        Stmt::Block(Box::new(Block {
            name: format!("{}_acc", self.buffer.name()),
            iter_vars: vec![],
            iter_values: vec![],
            reads: vec![],
            writes: vec![],
            init: None,
            body: Box::new(body),
            alloc_buffers: vec![acc],
            annotations: Attrs::new(),
        }))
    }

    /// A sum into one output row (every spatial axis but `j` of extent 1:
    /// a squeeze-and-excitation block's mean over an NHWC image) of
    /// constant width, over at least [`PARALLEL_MIN_WORK`] /
    /// [`ELEMENT_COST`] elements (each read once, as an elementwise op's):
    /// the first reduce axis is cut into up to [`SPLIT_PARTS`] parts, each
    /// summed into its own row of `partial` in parallel (as [`Nest::row`]
    /// sums a row: a one-row tile up to [`ROW_ACCUMULATOR`] wide), then
    /// the rows are added up and the epilogue applied (TVM's `rfactor` of
    /// the reduction, parallel over the factored axis). The sum is
    /// reassociated, as the packed GEMM's is. One part alone left the
    /// second core idle: EfficientNet-B0's means ran on one thread at
    /// memory speed. `None` where this does not apply.
    fn split_column_sum(&self) -> Option<Stmt> {
        let n = self.spatial.len();
        let j = &self.spatial[n - 1];
        let width = j.extent.as_int().filter(|&w| w >= 1)?;
        if self.spatial[..n - 1]
            .iter()
            .any(|a| a.extent.as_int() != Some(1))
        {
            return None;
        }
        let term = self.sum_update()?;
        let k = self.reduce.first()?;
        let rows = k.extent.as_int()?;
        let elements = self
            .reduce
            .iter()
            .try_fold(width, |acc, a| acc.checked_mul(a.extent.as_int()?))?;
        if elements.saturating_mul(ELEMENT_COST) < PARALLEL_MIN_WORK {
            return None;
        }
        let parts = (2..=SPLIT_PARTS).rev().find(|p| rows % p == 0)?;
        let chunk = rows / parts;
        let (kdt, jdt) = (k.var.dtype(), j.loop_var.dtype());
        let partial = Buffer::new(
            "partial",
            vec![PrimExpr::int_of(jdt, parts), PrimExpr::int_of(jdt, width)],
            self.buffer.dtype(),
        );
        let part = fresh(&k.loop_var, "_part");
        let part_e = PrimExpr::var(&part);
        // Rows [part · chunk, (part + 1) · chunk) of the first reduce axis.
        let k_in = Axis {
            var: fresh(&k.var, "_in"),
            loop_var: fresh(&k.loop_var, "_in"),
            extent: PrimExpr::int_of(k.extent.dtype(), chunk),
        };
        let row_at =
            part_e.clone().cast(kdt) * PrimExpr::int_of(kdt, chunk) + PrimExpr::var(&k_in.var);
        let term = term.substitute_map(&HashMap::from([(k.var.clone(), row_at)]));
        let slot = vec![part_e.clone(), PrimExpr::var(&j.var)];
        let sums = Nest {
            spatial: vec![j.clone()],
            reduce: std::iter::once(k_in)
                .chain(self.reduce[1..].iter().cloned())
                .collect(),
            buffer: partial.clone(),
            indices: slot.clone(),
            value: PrimExpr::load(&partial, slot) + term,
            init: self.init.clone(),
            epilogue: None,
            vector_bits: self.vector_bits,
            knobs: self.knobs,
        };
        // The other spatial axes are 0.
        let outer: HashMap<TirVar, PrimExpr> = self.spatial[..n - 1]
            .iter()
            .map(|a| (a.var.clone(), PrimExpr::int_of(a.var.dtype(), 0)))
            .collect();
        let zero_j = PrimExpr::int_of(jdt, 0);
        let partials = for_(
            &part,
            PrimExpr::int_of(part.dtype(), 0),
            PrimExpr::int_of(part.dtype(), parts),
            ForKind::Parallel,
            sums.row(&outer, zero_j.clone(), PrimExpr::int_of(jdt, width)),
        );
        // The rows added up, then the epilogue, one vector of columns at a
        // time.
        let jv = fresh(&j.loop_var, "_v");
        let mut map = outer;
        map.insert(j.var.clone(), PrimExpr::var(&jv));
        let total = (0..parts)
            .map(|p| PrimExpr::load(&partial, vec![PrimExpr::int_of(jdt, p), PrimExpr::var(&jv)]))
            .reduce(|a, b| a + b)
            .expect("two parts or more");
        let combine = for_(
            &jv,
            zero_j,
            PrimExpr::int_of(jdt, width),
            ForKind::Vectorized,
            self.final_store(&map, total),
        );
        Some(Stmt::Block(Box::new(Block {
            name: format!("{}_split", self.buffer.name()),
            iter_vars: vec![],
            iter_values: vec![],
            reads: vec![],
            writes: vec![],
            init: None,
            body: Box::new(seq(vec![partials, combine])),
            alloc_buffers: vec![partial],
            annotations: Attrs::new(),
        })))
    }

    /// The load of a matrix product's left factor `A(i, k)` when it is a
    /// large buffer (at least [`STREAMED_MIN_BYTES`], so read from memory)
    /// contiguous along the one reduce axis `k`: its buffer and indices.
    fn streamed_left_factor(&self) -> Option<(Buffer, Vec<PrimExpr>)> {
        let n = self.spatial.len();
        let [k] = self.reduce.as_slice() else {
            return None;
        };
        let (i, j) = (
            self.spatial.get(n.checked_sub(2)?)?,
            self.spatial.get(n - 1)?,
        );
        let (a, _) = self.product_operands(i, j)?;
        let mut loads = Vec::new();
        collect_loads(a, &mut loads);
        let mut streams = loads.into_iter().filter(|(b, idx)| {
            let bytes = b
                .shape()
                .iter()
                .try_fold(b.dtype().size_in_bytes() as i64, |acc, d| {
                    d.as_int().map(|d| acc * d)
                });
            idx.iter().any(|e| uses_var(e, &i.var))
                && bytes.is_some_and(|bytes| bytes >= STREAMED_MIN_BYTES)
                && linear_coeff(&b.offset_of(idx), &k.var) == Some(1)
        });
        match (streams.next(), streams.next()) {
            (Some(one), None) => Some(one),
            _ => None,
        }
    }

    /// A matrix product's tile of `rows` rows from `i0` whose left factor
    /// `A(i, k)` is a large buffer (at least [`STREAMED_MIN_BYTES`]: a
    /// Winograd convolution's transformed filters, read once a call from
    /// memory) contiguous along the one reduce axis `k`: the loop over `k`
    /// split by cache lines, each line's step first prefetching the same
    /// line of the next tile's rows (`T.prefetch`). The next tile's rows
    /// then arrive while this one computes; without it a tile's rows are
    /// as many streams as the core's window of outstanding loads can
    /// follow (ResNet-18's 16 · 512 · 512 Winograd filters streamed at
    /// 12 GB/s). `None` where this does not apply; else the loop around
    /// the update of `acc`, given that update.
    fn streamed_rows(
        &self,
        map: &HashMap<TirVar, PrimExpr>,
        i0: &PrimExpr,
        rows: i64,
        reduce: &[Axis],
    ) -> Option<impl FnOnce(Stmt) -> Stmt> {
        let n = self.spatial.len();
        let ([k], [k_loop]) = (self.reduce.as_slice(), reduce) else {
            return None;
        };
        let i = &self.spatial[n - 2];
        let extent = k.extent.as_int()?;
        let (b, idx) = self.streamed_left_factor()?;
        let step = CACHE_LINE_BYTES / b.dtype().size_in_bytes().max(1) as i64;
        if extent < step || extent % step != 0 {
            return None;
        }
        let kdt = k_loop.loop_var.dtype();
        let idt = i.loop_var.dtype();
        let (ko, ki, r) = (
            fresh(&k_loop.loop_var, "_o"),
            fresh(&k_loop.loop_var, "_i"),
            fresh(&i.loop_var, "_p"),
        );
        let an = Analyzer::new();
        let last = an.simplify(&(i.extent.clone() - PrimExpr::int_of(idt, 1)));
        let next_row = (i0.clone() + PrimExpr::int_of(idt, rows) + PrimExpr::var(&r)).min(last);
        let mut m = map.clone();
        m.insert(i.var.clone(), next_row);
        m.insert(
            k.var.clone(),
            (PrimExpr::var(&ko) * PrimExpr::int_of(kdt, step)).cast(k.var.dtype()),
        );
        let indices = idx
            .iter()
            .map(|e| an.simplify(&e.substitute_map(&m)))
            .collect();
        let int = move |v: i64| PrimExpr::int_of(kdt, v);
        let ahead = for_(
            &r,
            PrimExpr::int_of(idt, 0),
            PrimExpr::int_of(idt, rows),
            ForKind::Unrolled,
            prefetch(&b, indices),
        );
        let k_var = k_loop.loop_var.clone();
        Some(move |update: Stmt| {
            let at = PrimExpr::var(&ko) * int(step) + PrimExpr::var(&ki);
            let update = Stmt::LetStmt {
                var: k_var,
                value: at,
                body: Box::new(update),
            };
            let line = for_(&ki, int(0), int(step), ForKind::Serial, update);
            for_(
                &ko,
                int(0),
                int(extent / step),
                ForKind::Serial,
                seq(vec![ahead, line]),
            )
        })
    }

    /// Case 2 of the module docs.
    pub(super) fn tiled_reduction(&self, parallel: bool) -> Stmt {
        if let Some(split) = self.split_column_sum() {
            return split;
        }
        let n = self.spatial.len();
        if n == 1 {
            let j = &self.spatial[0];
            if parallel {
                return self.parallel_row(j);
            }
            return self.row(&HashMap::new(), zero(j), j.extent.clone());
        }
        let (i, j) = (&self.spatial[n - 2], &self.spatial[n - 1]);
        let batch = &self.spatial[..n - 2];
        let map = identity(batch);
        // A direct convolution's tiles on a 512-bit target are two vectors
        // of channels wide, four where they divide the channels: each
        // broadcast of an image element feeds two or four multiply-adds
        // ([`DIRECT_CONV_WIDE_COLS`]). On a 256-bit target they are
        // TILE_COLS wide, two registers: 4 × 32 was 16 accumulators, all
        // of AVX2's registers, and spilled (ResNet-50's 7 × 7 stem: 3.8–5.2
        // ms as 4 × 32, 1.9–3.1 ms as 4 × 16 on a 2-core Zen 3; 6 × 16
        // was no faster).
        let wide_product = self.wide_product_tile(i, j);
        let direct = self.direct_conv();
        let direct_wide = self.vector_bits >= 512 && direct;
        let width = match j.extent.as_int() {
            Some(e) if e < TILE_COLS => e.max(1),
            Some(e) if e % DIRECT_CONV_WIDE_COLS == 0 && direct_wide => DIRECT_CONV_WIDE_COLS,
            Some(e) if e % (2 * TILE_COLS) == 0 && direct_wide => 2 * TILE_COLS,
            Some(e) if wide_product && e <= WHOLE_ROW_TILE_COLS => e,
            Some(_) if wide_product => 2 * TILE_COLS,
            _ => TILE_COLS,
        };
        let (idt, jdt) = (i.loop_var.dtype(), j.loop_var.dtype());
        let rule_rows = if wide_product {
            // One vector wide, a product whose left factor streams from
            // memory takes four rows: fewer streams of `A` at once.
            if width <= VECTOR_LANES && self.streamed_left_factor().is_some() {
                TILE_ROWS
            } else {
                wide_product_rows(width)
            }
        } else {
            self.tile_rows(width)
        };
        // The knob's rows, where their accumulators fit.
        let vectors = (width + VECTOR_LANES - 1) / VECTOR_LANES;
        let tile_rows = match self.knobs.reduction_rows {
            r if r > 0 && r * vectors <= reduction_accumulators(self.vector_bits) => r,
            _ => rule_rows,
        };
        let rows = PrimExpr::int_of(idt, tile_rows);
        let cols = PrimExpr::int_of(jdt, width);
        let an = Analyzer::new();
        let tiles_j = an.simplify(&j.extent.clone().floordiv(cols.clone()));
        let rest_j = an.simplify(&j.extent.clone().floormod(cols.clone()));
        let full_j = an.simplify(&(tiles_j.clone() * cols.clone()));

        // Parallelize the outermost loop: a batch loop, else the tile rows.
        let batch_parallel = parallel && !batch.is_empty();
        let tile_kind = if parallel && !batch_parallel {
            ForKind::Parallel
        } else {
            ForKind::Serial
        };
        // Rows i0 .. i0 + n: full tiles, then the columns they leave.
        let band = |i0: &PrimExpr, n: i64| {
            let mut parts = Vec::new();
            if !is_zero(&tiles_j) {
                let jo = fresh(&j.loop_var, "_o");
                let j0 = match tiles_j.as_int() {
                    Some(1) => PrimExpr::int_of(jdt, 0),
                    _ => PrimExpr::var(&jo) * cols.clone(),
                };
                let tile = self.interior_tile(&map, i0, n, &j0, width);
                parts.push(loop_unless_once(
                    &jo,
                    tiles_j.clone(),
                    ForKind::Serial,
                    tile,
                ));
            }
            if let Some(rest) = rest_j.as_int().filter(|&r| r > 0) {
                // The columns left: a tile as tall as the band (as many
                // independent sums, where one row at a time was a chain of
                // scalar multiply-adds for the 49th column of a Winograd
                // product).
                parts.push(self.interior_tile(&map, i0, n, &full_j, rest));
            } else if !is_zero(&rest_j) {
                let ii = fresh(&i.loop_var, "_i");
                let mut m = map.clone();
                m.insert(i.var.clone(), add(i0, &PrimExpr::var(&ii)));
                let row = self.row(&m, full_j.clone(), rest_j.clone());
                parts.push(for_(
                    &ii,
                    PrimExpr::int_of(idt, 0),
                    PrimExpr::int_of(idt, n),
                    ForKind::Serial,
                    row,
                ));
            }
            seq(parts)
        };
        // The rows a constant count leaves: a row each is a one-row tile
        // up to ROW_ACCUMULATOR columns, its vectors independent sums; a
        // wider row would accumulate in the output at every step of the
        // reduction, so they are one shorter tile instead (the last rows
        // of pixels of a 7 × 7 or 14 × 14 NHWC depthwise convolution,
        // 672 channels wide).
        let wide = j.extent.as_int().is_none_or(|w| w > ROW_ACCUMULATOR);
        // Rows `[start, start + len)`: full tiles (`io` their loop), then
        // the rows left.
        let rows_from = |start: &PrimExpr, len: &PrimExpr, io: &TirVar| {
            let tiles = an.simplify(&len.clone().floordiv(rows.clone()));
            let rest = an.simplify(&len.clone().floormod(rows.clone()));
            let full = an.simplify(&(start.clone() + tiles.clone() * rows.clone()));
            let mut out = Vec::new();
            if !is_zero(&tiles) {
                // A loop of one iteration is not written: its row is `start`.
                let i0 = match tiles.as_int() {
                    Some(1) => start.clone(),
                    _ => an.simplify(&(start.clone() + PrimExpr::var(io) * rows.clone())),
                };
                out.push(loop_unless_once(io, tiles, tile_kind, band(&i0, tile_rows)));
            }
            if let Some(r) = rest.as_int().filter(|&r| r > 0 && wide) {
                out.push(band(&full, r));
            } else if !is_zero(&rest) {
                let it = fresh(&i.loop_var, "_t");
                let mut m = map.clone();
                m.insert(i.var.clone(), PrimExpr::var(&it));
                let row = self.row(&m, zero(j), j.extent.clone());
                out.push(for_(&it, full, rest, ForKind::Serial, row));
            }
            out
        };
        // A padded image's rows (a depthwise convolution's pixels) in
        // three runs, the border before its interior, the interior, the
        // border after (`interior.rs`), each in tiles from its first row:
        // a grid from row 0 put a 14-pixel image's interior (rows 2 to 11
        // of a 5 × 5 window) in one tile of three, the other two testing
        // every tap. Only where the tiles' loop is serial (a batch loop
        // runs in parallel), so that the runs add no fork of the pool.
        // Otherwise one run of all the rows. An empty run writes nothing.
        let int = |v: i64| PrimExpr::int_of(idt, v);
        let runs = match (self.interior_rows(), i.extent.as_int()) {
            (Some((lo, hi)), Some(e)) if tile_kind == ForKind::Serial => {
                vec![(0, lo), (lo, hi - lo), (hi, e - hi)]
                    .into_iter()
                    .map(|(start, len)| (int(start), int(len)))
                    .collect()
            }
            _ => vec![(int(0), i.extent.clone())],
        };
        let body: Vec<Stmt> = runs
            .iter()
            .flat_map(|(start, len)| rows_from(start, len, &fresh(&i.loop_var, "_o")))
            .collect();
        let outer = batch_parallel.then_some(ForKind::Parallel);
        nest(batch, seq(body), outer)
    }
}

/// The channels of a direct convolution's tile on a 512-bit target, where
/// they divide the output channels: four vectors, 16 accumulators in 4
/// pixels, each broadcast of the image feeding four multiply-adds. The
/// 7 × 7 stem of ResNet and GoogLeNet (64 channels) took 0.86 ms as tiles
/// of 4 × 32 and 0.70 ms as tiles of 4 × 64 on a 2-core Xeon; taller
/// tiles of 32 (7, 8 or 14 pixels) gained less.
pub const DIRECT_CONV_WIDE_COLS: i64 = 4 * VECTOR_LANES;

/// The most parts a sum into one output row is cut into
/// ([`Nest::split_column_sum`]): the largest count from 8 down that
/// divides its first reduce axis (an image's 112, 56, 28, 14 or 7 rows).
pub const SPLIT_PARTS: i64 = 8;

/// The widest row a matrix product's tile takes whole on a 512-bit
/// target (see [`Nest::wide_product_tile`]): four vectors. A Winograd
/// product of 28 × 28 images has 49 columns (7 × 7 tiles); as tiles of 16
/// columns plus a column computed row by row, that column cost as much as
/// the other 48 (GoogLeNet's 96 → 128 channel product: 0.30 ms; as tiles
/// of 4 rows × 49 columns: 0.15 ms).
pub const WHOLE_ROW_TILE_COLS: i64 = 4 * VECTOR_LANES;

/// Rows of a matrix product's wide tile `width` columns wide: 8 rows of
/// one or two vectors, 4 of three or four (16 accumulators at most, with
/// the vectors of `B` and the broadcast of `A` within 32 registers).
fn wide_product_rows(width: i64) -> i64 {
    if width <= 2 * VECTOR_LANES {
        2 * TILE_ROWS
    } else {
        TILE_ROWS
    }
}

/// What one loop nest of a tile does.
#[derive(Clone, Copy)]
pub(super) enum Part {
    /// `acc = init`
    Init,
    /// `acc = update(acc)`
    Update,
    /// `output = acc`
    WriteBack,
}

/// Columns `[start, start + count · lanes)` of a case-2 tile: `count`
/// unrolled vectors of `lanes` (one vectorized loop when `count` is 1).
struct ColumnGroup {
    start: i64,
    count: i64,
    lanes: i64,
}

/// A tile's `width` columns as groups: whole vectors of
/// [`VECTOR_LANES`], then the columns left as one shorter vector.
fn column_groups(width: i64) -> Vec<ColumnGroup> {
    let (whole, left) = if width > VECTOR_LANES {
        (width / VECTOR_LANES, width % VECTOR_LANES)
    } else {
        (0, width)
    };
    let mut groups = Vec::new();
    if whole > 0 {
        groups.push(ColumnGroup {
            start: 0,
            count: whole,
            lanes: VECTOR_LANES,
        });
    }
    if left > 0 {
        groups.push(ColumnGroup {
            start: whole * VECTOR_LANES,
            count: 1,
            lanes: left,
        });
    }
    groups
}

impl ColumnGroup {
    /// The group's loops (outermost first) over fresh variables named after
    /// `j`, and the column within the tile they address.
    fn loops(&self, j: &TirVar, dt: DataType) -> (Vec<(TirVar, i64, ForKind)>, PrimExpr) {
        let int = |v: i64| PrimExpr::int_of(dt, v);
        if self.count == 1 {
            let jj = fresh(j, "_i");
            let col = add(&int(self.start), &PrimExpr::var(&jj));
            return (vec![(jj, self.lanes, ForKind::Vectorized)], col);
        }
        let (ju, jv) = (fresh(j, "_u"), fresh(j, "_v"));
        let col = PrimExpr::var(&ju) * int(self.lanes) + PrimExpr::var(&jv);
        let col = add(&int(self.start), &col);
        let loops = vec![
            (ju, self.count, ForKind::Unrolled),
            (jv, self.lanes, ForKind::Vectorized),
        ];
        (loops, col)
    }
}
