//! `DefaultSchedule`: CPU loop schedules for the PrimFuncs of a module (the
//! role of TVM's default schedules, `dlight`'s fallback rules for the CPU).
//!
//! The pass works on the *canonical nests* that TE lowering (and so
//! `LegalizeOps`) produces: serial loops from 0, one per block iteration
//! variable in order (spatial first, then reduce), around one block whose
//! iteration variables are bound to exactly those loops and whose body is
//! one `BufferStore` (a reduction also has an `init` storing to the same
//! element and reads the output only there; an injective block does not
//! read its output). Each such nest is replaced by plain loops, the block's
//! iteration variables substituted by expressions of the new loops; the
//! enclosing root block (the stages' scope and the owner of the
//! intermediate buffers) stays. Anything else (hand-written loops,
//! non-canonical blocks) is left unchanged and lowered as before, so the
//! pass is idempotent. Writing plain loops rather than scheduling blocks is
//! deliberate: the restructured nests (hoisted init, tiles, tails) are not
//! perfect nests a block could describe, and the back end needs no block
//! information after this pass. The one block it makes is a scope without
//! iteration variables that owns a tile's accumulator.
//!
//! Schedules (the loop kinds are those the LLVM back end acts on):
//!
//! 1. **Injective** nests (no reduce variable): the innermost loop is
//!    `Vectorized` when the store is contiguous in it and every load is
//!    contiguous or invariant in it. When some input is read with a stride
//!    along it but contiguously along another loop (a transpose), those two
//!    loops are cut into [`TRANSPOSE_TILE`]-square tiles instead, left
//!    scalar (vector code would gather lane by lane). When the nest does at
//!    least [`PARALLEL_MIN_WORK`] iterations its outer loops are fused into
//!    one `Parallel` loop (a one-loop nest is split into `Parallel` chunks
//!    of [`PARALLEL_CHUNK`] and a tail).
//! 2. **Reductions** whose innermost spatial variable `j` is contiguous in
//!    the output and in some input (a matmul `C[i, j] += A[i, k] * B[k, j]`,
//!    a column sum): the two innermost spatial loops are tiled into blocks
//!    of [`TILE_ROWS`] × [`TILE_COLS`] outputs, each accumulated in a local
//!    buffer `acc` (rows `Unrolled`, columns `Vectorized`) that LLVM keeps
//!    in registers over the whole reduction: init `acc`, run the reduce
//!    loops around the update of `acc`, write `acc` to the output. Rows and
//!    columns that do not fill a tile run row by row, a row of constant
//!    width up to [`ROW_ACCUMULATOR`] as a one-row tile (a batch-1 matmul),
//!    a wider one accumulating in the output with the `j` loop innermost.
//!    The outermost loop (a batch loop, else the rows of tiles) is
//!    `Parallel` when the nest does at least [`PARALLEL_MIN_WORK`]
//!    multiply-adds.
//! 3. **Other reductions** (a row sum, where the input is contiguous along
//!    the reduction) keep their loop order; the init is hoisted out of the
//!    reduce loops (no first-iteration guard in the inner loop) and the
//!    outermost spatial loop is `Parallel` above the same threshold.
//!
//! Symbolic extents: a nest whose amount of work is not a constant gets
//! both versions, chosen at run time by `if work >= PARALLEL_MIN_WORK`, so
//! a batch of one does not pay the thread pool's dispatch. A `Vectorized`
//! loop of symbolic extent is left to LLVM's loop vectorizer (the back
//! end's rule), so no explicit remainder loop is needed for it.
//!
//! Semantics are exact: every output element still sees its init and then
//! its updates in the original order of the reduce loops, so results are
//! bit-identical to the block form. One difference is intended: with an
//! empty reduction domain the hoisted init still runs, so the output holds
//! the reduction's identity (TVM's guarded init would leave it unwritten).
//!
//! The constants are tuned for x86-64 with AVX2 or AVX-512 and `float32`
//! (`benches/matmul_mlp.rs` measures them); they are not target parameters
//! yet.

use super::Pass;
use crate::arith::analyzer::Analyzer;
use crate::ir::prim_expr::{PrimExpr, PrimExprKind, TirVar};
use crate::ir::{BaseFunc, IRModule};
use crate::tir::{Block, Buffer, ForKind, IterKind, PrimFunc, Stmt};
use relax_runtime::{DataType, Error};
use std::collections::HashMap;

/// A nest doing fewer iterations than this runs on the calling thread:
/// below it the thread pool's dispatch (waking workers, a few microseconds)
/// costs more than it saves on vectorized code (the digits MLP at batch 64,
/// half a million multiply-adds, is faster serial).
pub const PARALLEL_MIN_WORK: i64 = 1 << 20;

/// The iterations per parallel chunk when a one-loop nest is split.
pub const PARALLEL_CHUNK: i64 = 4096;

/// Output rows per register tile of a contiguous reduction.
pub const TILE_ROWS: i64 = 4;

/// Output columns per register tile: one 16-lane vector of `float32`
/// (two AVX2 registers), so a tile holds eight accumulator registers.
pub const TILE_COLS: i64 = 16;

/// The side of the square tiles a transpose is cut into.
pub const TRANSPOSE_TILE: i64 = 16;

/// The lanes of one vector step of the LLVM back end (its `MAX_LANES`):
/// wider tile columns are unrolled vectors of this many lanes.
const VECTOR_LANES: i64 = 16;

/// The widest row of constant width that accumulates in a local buffer
/// (eight 16-lane vectors) rather than in the output.
pub const ROW_ACCUMULATOR: i64 = 128;

/// The pass. See the module docs.
#[derive(Clone, Copy, Debug, Default)]
pub struct DefaultSchedule;

impl Pass for DefaultSchedule {
    fn name(&self) -> &str {
        "DefaultSchedule"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        let mut out = module.clone();
        for (gv, f) in module.functions() {
            if let BaseFunc::Prim(pf) = f {
                out.add(gv.clone(), schedule_prim_func(pf));
            }
        }
        Ok(out)
    }
}

/// `func` with every canonical nest scheduled. See the module docs.
pub fn schedule_prim_func(func: &PrimFunc) -> PrimFunc {
    PrimFunc {
        params: func.params.clone(),
        body: schedule_stmt(&func.body),
        attrs: func.attrs.clone(),
    }
}

fn schedule_stmt(s: &Stmt) -> Stmt {
    match s {
        Stmt::For { body, .. } => match Nest::of(s) {
            Some(nest) => nest.schedule(),
            None => {
                let mut s = s.clone();
                if let Stmt::For { body: b, .. } = &mut s {
                    **b = schedule_stmt(body);
                }
                s
            }
        },
        // A scope block (the root): schedule the stages inside it.
        Stmt::Block(b) if b.iter_vars.is_empty() => {
            let mut b = (**b).clone();
            b.body = Box::new(schedule_stmt(&b.body));
            Stmt::Block(Box::new(b))
        }
        Stmt::Seq(ss) => Stmt::Seq(ss.iter().map(schedule_stmt).collect()),
        Stmt::Allocate { buffer, body } => Stmt::Allocate {
            buffer: buffer.clone(),
            body: Box::new(schedule_stmt(body)),
        },
        Stmt::LetStmt { var, value, body } => Stmt::LetStmt {
            var: var.clone(),
            value: value.clone(),
            body: Box::new(schedule_stmt(body)),
        },
        Stmt::IfThenElse {
            cond,
            then_case,
            else_case,
        } => Stmt::IfThenElse {
            cond: cond.clone(),
            then_case: Box::new(schedule_stmt(then_case)),
            else_case: else_case.as_deref().map(|e| Box::new(schedule_stmt(e))),
        },
        Stmt::Block(_) | Stmt::BufferStore { .. } | Stmt::Evaluate(_) => s.clone(),
    }
}

/// One iteration variable of a canonical nest.
#[derive(Clone)]
struct Axis {
    /// The block's iteration variable.
    var: TirVar,
    /// The loop that bound it (its name and dtype are reused).
    loop_var: TirVar,
    extent: PrimExpr,
}

/// A canonical nest (see the module docs), in terms of the block's
/// iteration variables.
struct Nest {
    spatial: Vec<Axis>,
    reduce: Vec<Axis>,
    buffer: Buffer,
    indices: Vec<PrimExpr>,
    value: PrimExpr,
    /// The init's stored value (same buffer and indices).
    init: Option<PrimExpr>,
}

impl Nest {
    /// The nest rooted at `s`, if `s` is a canonical nest.
    fn of(s: &Stmt) -> Option<Nest> {
        let mut loops = Vec::new();
        let mut cur = s;
        while let Stmt::For {
            loop_var,
            min,
            extent,
            kind: ForKind::Serial,
            body,
        } = cur
        {
            if min.as_int() != Some(0) {
                return None;
            }
            loops.push((loop_var.clone(), extent.clone()));
            cur = body;
        }
        let Stmt::Block(block) = cur else { return None };
        let Block {
            iter_vars,
            iter_values,
            init,
            body,
            alloc_buffers,
            ..
        } = &**block;
        if iter_vars.len() != loops.len()
            || iter_values.len() != loops.len()
            || !alloc_buffers.is_empty()
        {
            return None;
        }
        let mut spatial = Vec::new();
        let mut reduce = Vec::new();
        for ((iv, value), (lv, extent)) in iter_vars.iter().zip(iter_values).zip(&loops) {
            let bound = value.as_var() == Some(lv) && iv.min.as_int() == Some(0);
            if !bound || iv.extent != *extent || !is_index_dtype(lv.dtype()) {
                return None;
            }
            let axis = Axis {
                var: iv.var.clone(),
                loop_var: lv.clone(),
                extent: extent.clone(),
            };
            match iv.kind {
                // Spatial variables come first: a spatial loop inside a
                // reduce loop is not a shape the schedules below keep.
                IterKind::Spatial if reduce.is_empty() => spatial.push(axis),
                IterKind::Spatial => return None,
                IterKind::Reduce => reduce.push(axis),
            }
        }
        let Stmt::BufferStore {
            buffer,
            value,
            indices,
        } = &**body
        else {
            return None;
        };
        let init = match init.as_deref() {
            None => None,
            Some(Stmt::BufferStore {
                buffer: b,
                value: v,
                indices: i,
            }) if b == buffer && i == indices => Some(v.clone()),
            Some(_) => return None,
        };
        // A reduction writes one element per spatial point and reads the
        // output only there; the init belongs to reductions.
        if reduce.is_empty() != init.is_none() {
            return None;
        }
        let reduce_vars: Vec<&TirVar> = reduce.iter().map(|a| &a.var).collect();
        if indices
            .iter()
            .any(|i| i.free_vars().iter().any(|v| reduce_vars.contains(&v)))
        {
            return None;
        }
        let mut loads = Vec::new();
        collect_loads(value, &mut loads);
        if let Some(v) = &init {
            collect_loads(v, &mut loads);
        }
        // An injective block that reads its own output depends on the order
        // of its iterations: it is left as it is.
        if loads
            .iter()
            .any(|(b, i)| b == buffer && (i != indices || reduce.is_empty()))
        {
            return None;
        }
        Some(Nest {
            spatial,
            reduce,
            buffer: buffer.clone(),
            indices: indices.clone(),
            value: value.clone(),
            init,
        })
    }

    fn schedule(&self) -> Stmt {
        let work = self
            .spatial
            .iter()
            .chain(&self.reduce)
            .fold(PrimExpr::int(1), |acc, a| acc * a.extent.clone());
        let work = Analyzer::new().simplify(&work);
        match work.as_int() {
            Some(w) => self.build(w >= PARALLEL_MIN_WORK),
            None => Stmt::IfThenElse {
                cond: work.ge(PrimExpr::int_of(self.index_dtype(), PARALLEL_MIN_WORK)),
                then_case: Box::new(self.build(true)),
                // Every loop binds its own variable: the serial version
                // gets new ones.
                else_case: Some(Box::new(self.with_new_loops().build(false))),
            },
        }
    }

    fn build(&self, parallel: bool) -> Stmt {
        if self.reduce.is_empty() {
            self.injective(parallel)
        } else if self.contiguous_reduction() {
            self.tiled_reduction(parallel)
        } else {
            self.plain_reduction(parallel)
        }
    }

    fn with_new_loops(&self) -> Nest {
        Nest {
            spatial: new_loops(&self.spatial),
            reduce: new_loops(&self.reduce),
            buffer: self.buffer.clone(),
            indices: self.indices.clone(),
            value: self.value.clone(),
            init: self.init.clone(),
        }
    }

    fn index_dtype(&self) -> DataType {
        self.spatial
            .iter()
            .chain(&self.reduce)
            .next()
            .map_or(DataType::i64(), |a| a.var.dtype())
    }

    /// The coefficients of `var` in the flat offsets of the store and of
    /// the loads of other buffers (`None`: not affine with a constant one).
    fn coefficients(&self, var: &TirVar) -> (Option<i64>, Vec<Option<i64>>) {
        let store = linear_coeff(&self.buffer.offset_of(&self.indices), var);
        let mut loads = Vec::new();
        collect_loads(&self.value, &mut loads);
        let inputs = loads
            .iter()
            .filter(|(b, _)| *b != self.buffer)
            .map(|(b, i)| linear_coeff(&b.offset_of(i), var))
            .collect();
        (store, inputs)
    }

    /// Whether a loop over `var` as the innermost loop gives vector code:
    /// the store is contiguous and every load contiguous or invariant.
    fn vectorizes(&self, var: &TirVar) -> bool {
        let (store, loads) = self.coefficients(var);
        store == Some(1) && loads.iter().all(|c| matches!(c, Some(0 | 1)))
    }

    /// Whether the innermost spatial variable can become the innermost
    /// loop of a reduction (see the module docs, case 2).
    fn contiguous_reduction(&self) -> bool {
        let Some(j) = self.spatial.last() else {
            return false;
        };
        let (_, loads) = self.coefficients(&j.var);
        self.vectorizes(&j.var) && loads.contains(&Some(1))
    }

    /// The nest's store with the iteration variables replaced by `map`
    /// (the init's store when `init`).
    fn store(&self, map: &HashMap<TirVar, PrimExpr>, init: bool) -> Stmt {
        let value = match (&self.init, init) {
            (Some(v), true) => v,
            _ => &self.value,
        };
        Stmt::BufferStore {
            buffer: self.buffer.clone(),
            value: value.substitute_map(map),
            indices: self.indices.iter().map(|i| i.substitute_map(map)).collect(),
        }
    }

    /// Case 1 of the module docs.
    fn injective(&self, parallel: bool) -> Stmt {
        let Some((inner, outer)) = self.spatial.split_last() else {
            return self.store(&HashMap::new(), false);
        };
        if let Some(tiled) = self.transpose_tiles(parallel) {
            return tiled;
        }
        let vector = self.vectorizes(&inner.var);
        let inner_kind = if vector {
            ForKind::Vectorized
        } else {
            ForKind::Serial
        };
        let mut map = identity(&self.spatial);
        if outer.is_empty() && parallel {
            return chunked(inner, inner_kind, |v| {
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
    /// transpose): `a` and the innermost loop `b` are tiled by
    /// [`TRANSPOSE_TILE`] so that each tile's reads and writes stay in a few
    /// cache lines. The other loops keep their order outside the tiles.
    fn transpose_tiles(&self, parallel: bool) -> Option<Stmt> {
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
        // Loops shorter than a tile stay as they are.
        let short = |x: &Axis| x.extent.as_int().is_some_and(|e| e < TRANSPOSE_TILE);
        if short(a) || short(b) {
            return None;
        }
        let mut map = identity(&self.spatial);
        let an = Analyzer::new();
        let mut tiles = Vec::new();
        let mut points = Vec::new();
        for axis in [a, b] {
            let dt = axis.loop_var.dtype();
            let t = PrimExpr::int_of(dt, TRANSPOSE_TILE);
            let (o, i) = (fresh(&axis.loop_var, "_o"), fresh(&axis.loop_var, "_i"));
            let count =
                an.simplify(&(axis.extent.clone() + (TRANSPOSE_TILE - 1)).floordiv(t.clone()));
            let start = PrimExpr::var(&o) * t.clone();
            // The last tile may be partial: its extent is what is left.
            let extent = match axis.extent.as_int() {
                Some(e) if e % TRANSPOSE_TILE == 0 => t,
                _ => t.min(axis.extent.clone() - start.clone()),
            };
            map.insert(axis.var.clone(), start + PrimExpr::var(&i));
            tiles.push((o, count));
            points.push((i, extent));
        }
        let store = self.store(&map, false);
        let inner = tiles
            .iter()
            .chain(&points)
            .rev()
            .fold(store, |body, (v, extent)| {
                for_(
                    v,
                    PrimExpr::int_of(v.dtype(), 0),
                    extent.clone(),
                    ForKind::Serial,
                    body,
                )
            });
        let others: Vec<Axis> = self
            .spatial
            .iter()
            .enumerate()
            .filter(|(k, _)| *k != a_pos && *k != self.spatial.len() - 1)
            .map(|(_, x)| x.clone())
            .collect();
        if !parallel {
            return Some(nest(&others, inner, None));
        }
        if others.is_empty() {
            // The first tile loop is the outermost: make it parallel.
            let Stmt::For {
                loop_var,
                min,
                extent,
                body,
                ..
            } = inner
            else {
                return None;
            };
            return Some(for_(&loop_var, min, extent, ForKind::Parallel, *body));
        }
        Some(nest(&others, inner, Some(ForKind::Parallel)))
    }

    /// Case 3 of the module docs.
    fn plain_reduction(&self, parallel: bool) -> Stmt {
        let map = identity(self.spatial.iter().chain(&self.reduce));
        let update = nest(&self.reduce, self.store(&map, false), None);
        let body = Stmt::Seq(vec![self.store(&map, true), update]);
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
    fn row(&self, map: &HashMap<TirVar, PrimExpr>, j_min: PrimExpr, j_extent: PrimExpr) -> Stmt {
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
        Stmt::Seq(vec![j_loop(true), nest(&reduce, j_loop(false), None)])
    }

    /// A tile of outputs accumulated in a local buffer `acc` (registers,
    /// once LLVM has unrolled the rows): rows `i0 + ii` for `ii` below
    /// [`TILE_ROWS`] (`i0` given), else the one row `map` binds; columns
    /// `j0 + jj` for `jj` below `width`. The accumulator is initialized,
    /// updated over the whole reduction, then written to the output.
    fn tile(
        &self,
        map: &HashMap<TirVar, PrimExpr>,
        i0: Option<&PrimExpr>,
        j0: &PrimExpr,
        width: i64,
    ) -> Stmt {
        let n = self.spatial.len();
        let j = &self.spatial[n - 1];
        let dt = j.loop_var.dtype();
        let rows = if i0.is_some() { TILE_ROWS } else { 1 };
        let int = |v: i64| PrimExpr::int_of(dt, v);
        let acc = Buffer::new("acc", vec![int(rows), int(width)], self.buffer.dtype());
        let reduce = new_loops(&self.reduce);
        let part = |part: Part| {
            let mut map = map.clone();
            map.extend(identity(&reduce));
            // Columns: one vectorized loop, or unrolled vectors of
            // VECTOR_LANES when the width is a multiple of it.
            let (col_loops, col) = if width > VECTOR_LANES && width % VECTOR_LANES == 0 {
                let (ju, jv) = (fresh(&j.loop_var, "_u"), fresh(&j.loop_var, "_v"));
                let col = PrimExpr::var(&ju) * int(VECTOR_LANES) + PrimExpr::var(&jv);
                let loops = vec![
                    (ju, width / VECTOR_LANES, ForKind::Unrolled),
                    (jv, VECTOR_LANES, ForKind::Vectorized),
                ];
                (loops, col)
            } else {
                let jj = fresh(&j.loop_var, "_i");
                let col = PrimExpr::var(&jj);
                (vec![(jj, width, ForKind::Vectorized)], col)
            };
            map.insert(j.var.clone(), add(j0, &col));
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
            let acc_index = vec![row, col];
            let at = PrimExpr::load(&acc, acc_index.clone());
            let (buffer, indices, value) = match part {
                Part::Init => {
                    let init = self.init.as_ref().expect("a reduction has an init");
                    (&acc, acc_index, init.substitute_map(&map))
                }
                Part::Update => {
                    let value = replace_loads(&self.value, &self.buffer, &at);
                    (&acc, acc_index, value.substitute_map(&map))
                }
                Part::WriteBack => {
                    let indices = self.indices.iter().map(|e| e.substitute_map(&map));
                    (&self.buffer, indices.collect(), at)
                }
            };
            let store = Stmt::BufferStore {
                buffer: buffer.clone(),
                value,
                indices,
            };
            let body = col_loops
                .iter()
                .rev()
                .fold(store, |body, (v, extent, kind)| {
                    for_(v, int(0), int(*extent), *kind, body)
                });
            match row_loop {
                Some(ii) => for_(&ii, int(0), int(rows), ForKind::Unrolled, body),
                None => body,
            }
        };
        let body = Stmt::Seq(vec![
            part(Part::Init),
            nest(&reduce, part(Part::Update), None),
            part(Part::WriteBack),
        ]);
        Stmt::Block(Box::new(Block {
            name: format!("{}_acc", self.buffer.name()),
            iter_vars: vec![],
            iter_values: vec![],
            reads: vec![],
            writes: vec![],
            init: None,
            body: Box::new(body),
            alloc_buffers: vec![acc],
        }))
    }

    /// Case 2 of the module docs.
    fn tiled_reduction(&self, parallel: bool) -> Stmt {
        let n = self.spatial.len();
        if n == 1 {
            let j = &self.spatial[0];
            return self.row(&HashMap::new(), zero(j), j.extent.clone());
        }
        let (i, j) = (&self.spatial[n - 2], &self.spatial[n - 1]);
        let batch = &self.spatial[..n - 2];
        let map = identity(batch);
        let width = match j.extent.as_int() {
            Some(e) if e < TILE_COLS => e.max(1),
            _ => TILE_COLS,
        };
        let (idt, jdt) = (i.loop_var.dtype(), j.loop_var.dtype());
        let rows = PrimExpr::int_of(idt, TILE_ROWS);
        let cols = PrimExpr::int_of(jdt, width);
        let an = Analyzer::new();
        let tiles_i = an.simplify(&i.extent.clone().floordiv(rows.clone()));
        let tiles_j = an.simplify(&j.extent.clone().floordiv(cols.clone()));
        let rest_j = an.simplify(&j.extent.clone().floormod(cols.clone()));
        let rest_i = an.simplify(&i.extent.clone().floormod(rows.clone()));
        let full_i = an.simplify(&(tiles_i.clone() * rows.clone()));
        let full_j = an.simplify(&(tiles_j.clone() * cols.clone()));

        // Parallelize the outermost loop: a batch loop, else the tile rows.
        let batch_parallel = parallel && !batch.is_empty();
        let tile_kind = if parallel && !batch_parallel {
            ForKind::Parallel
        } else {
            ForKind::Serial
        };
        let io = fresh(&i.loop_var, "_o");
        let jo = fresh(&j.loop_var, "_o");
        // A loop of one iteration is not written: its variable is 0.
        let i0 = match tiles_i.as_int() {
            Some(1) => PrimExpr::int_of(idt, 0),
            _ => PrimExpr::var(&io) * rows.clone(),
        };
        let j0 = match tiles_j.as_int() {
            Some(1) => PrimExpr::int_of(jdt, 0),
            _ => PrimExpr::var(&jo) * cols,
        };
        // Rows i0 .. i0 + TILE_ROWS: full tiles, then the columns they leave.
        let mut parts = Vec::new();
        if !is_zero(&tiles_j) {
            let tile = self.tile(&map, Some(&i0), &j0, width);
            parts.push(loop_unless_once(&jo, tiles_j, ForKind::Serial, tile));
        }
        if !is_zero(&rest_j) {
            let ii = fresh(&i.loop_var, "_i");
            let mut m = map.clone();
            m.insert(i.var.clone(), add(&i0, &PrimExpr::var(&ii)));
            let row = self.row(&m, full_j, rest_j);
            parts.push(for_(
                &ii,
                PrimExpr::int_of(idt, 0),
                rows,
                ForKind::Serial,
                row,
            ));
        }
        let mut body = Vec::new();
        if !is_zero(&tiles_i) {
            body.push(loop_unless_once(&io, tiles_i, tile_kind, seq(parts)));
        }
        if !is_zero(&rest_i) {
            let it = fresh(&i.loop_var, "_t");
            let mut m = map.clone();
            m.insert(i.var.clone(), PrimExpr::var(&it));
            let row = self.row(&m, zero(j), j.extent.clone());
            body.push(for_(&it, full_i, rest_i, ForKind::Serial, row));
        }
        let outer = batch_parallel.then_some(ForKind::Parallel);
        nest(batch, seq(body), outer)
    }
}

/// Whether a loop variable of this dtype can be scheduled (an integer).
fn is_index_dtype(d: DataType) -> bool {
    d.is_integer() && !d.is_bool() && d.lanes() == 1
}

fn is_zero(e: &PrimExpr) -> bool {
    e.as_int() == Some(0)
}

fn zero(a: &Axis) -> PrimExpr {
    PrimExpr::int_of(a.loop_var.dtype(), 0)
}

fn seq(mut stmts: Vec<Stmt>) -> Stmt {
    if stmts.len() == 1 {
        stmts.pop().expect("one statement")
    } else {
        Stmt::Seq(stmts)
    }
}

/// A new loop variable named after `v` with `suffix`.
fn fresh(v: &TirVar, suffix: &str) -> TirVar {
    TirVar::with_dtype(format!("{}{suffix}", v.name()), v.dtype())
}

/// `axes` with new loop variables of the same names.
fn new_loops(axes: &[Axis]) -> Vec<Axis> {
    axes.iter()
        .map(|a| Axis {
            loop_var: fresh(&a.loop_var, ""),
            ..a.clone()
        })
        .collect()
}

/// Every axis' iteration variable mapped to its own loop variable.
fn identity<'a>(axes: impl IntoIterator<Item = &'a Axis>) -> HashMap<TirVar, PrimExpr> {
    axes.into_iter()
        .map(|a| (a.var.clone(), PrimExpr::var(&a.loop_var)))
        .collect()
}

/// `a + b`, or `b` when `a` is 0.
fn add(a: &PrimExpr, b: &PrimExpr) -> PrimExpr {
    if is_zero(a) {
        b.clone()
    } else {
        a.clone() + b.clone()
    }
}

/// `e` with every load of `buffer` replaced by `with`.
fn replace_loads(e: &PrimExpr, buffer: &Buffer, with: &PrimExpr) -> PrimExpr {
    match e.kind() {
        PrimExprKind::BufferLoad(b, _) if b == buffer => with.clone(),
        _ => e.map_children(|c| replace_loads(c, buffer, with)),
    }
}

/// What one loop nest of a tile does.
#[derive(Clone, Copy)]
enum Part {
    /// `acc = init`
    Init,
    /// `acc = update(acc)`
    Update,
    /// `output = acc`
    WriteBack,
}

/// A loop from 0 over `extent`, or just `body` when the extent is 1 (the
/// body then uses 0 for `var`, see the callers).
fn loop_unless_once(var: &TirVar, extent: PrimExpr, kind: ForKind, body: Stmt) -> Stmt {
    if extent.as_int() == Some(1) {
        return body;
    }
    let zero = PrimExpr::int_of(var.dtype(), 0);
    for_(var, zero, extent, kind, body)
}

fn for_(var: &TirVar, min: PrimExpr, extent: PrimExpr, kind: ForKind, body: Stmt) -> Stmt {
    Stmt::For {
        loop_var: var.clone(),
        min,
        extent,
        kind,
        body: Box::new(body),
    }
}

/// Serial loops over `axes` (their own loop variables) around `body`, the
/// outermost of kind `outer` when given.
fn nest(axes: &[Axis], body: Stmt, outer: Option<ForKind>) -> Stmt {
    axes.iter().enumerate().rev().fold(body, |body, (k, a)| {
        let kind = match outer {
            Some(kind) if k == 0 => kind,
            _ => ForKind::Serial,
        };
        for_(&a.loop_var, zero(a), a.extent.clone(), kind, body)
    })
}

/// The loops over `outer` fused into one `Parallel` loop around `inner`
/// (each axis recovered by division and modulo); a single axis is just made
/// parallel. `map` gets the axes' values and `store` rebuilds the inner
/// store with them.
fn fused(
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

/// A one-loop nest over `axis` split into `Parallel` chunks of
/// [`PARALLEL_CHUNK`] iterations (of kind `kind` inside) and a tail;
/// `store(v)` is the body with the axis at value `v`.
fn chunked(axis: &Axis, kind: ForKind, mut store: impl FnMut(PrimExpr) -> Stmt) -> Stmt {
    let dt = axis.loop_var.dtype();
    let an = Analyzer::new();
    let chunk = PrimExpr::int_of(dt, PARALLEL_CHUNK);
    let chunks = an.simplify(&axis.extent.clone().floordiv(chunk.clone()));
    let rest = an.simplify(&axis.extent.clone().floormod(chunk.clone()));
    let done = an.simplify(&(chunks.clone() * chunk.clone()));
    let (o, i, t) = (
        fresh(&axis.loop_var, "_o"),
        fresh(&axis.loop_var, "_i"),
        fresh(&axis.loop_var, "_t"),
    );
    let mut parts = Vec::new();
    if !is_zero(&chunks) {
        let body = store(PrimExpr::var(&o) * chunk.clone() + PrimExpr::var(&i));
        let inner = for_(&i, PrimExpr::int_of(dt, 0), chunk, kind, body);
        parts.push(for_(
            &o,
            PrimExpr::int_of(dt, 0),
            chunks,
            ForKind::Parallel,
            inner,
        ));
    }
    if !is_zero(&rest) {
        let body = store(PrimExpr::var(&t));
        parts.push(for_(&t, done, rest, kind, body));
    }
    seq(parts)
}

/// Every `BufferLoad` in `e`, including those inside indices.
fn collect_loads(e: &PrimExpr, out: &mut Vec<(Buffer, Vec<PrimExpr>)>) {
    if let PrimExprKind::BufferLoad(b, idx) = e.kind() {
        out.push((b.clone(), idx.clone()));
    }
    for c in e.children() {
        collect_loads(c, out);
    }
}

fn uses_var(e: &PrimExpr, v: &TirVar) -> bool {
    match e.kind() {
        PrimExprKind::Var(x) => x == v,
        _ => e.children().into_iter().any(|c| uses_var(c, v)),
    }
}

/// `Some(c)` when `e == c * v + (terms without v)` for a constant `c`.
fn linear_coeff(e: &PrimExpr, v: &TirVar) -> Option<i64> {
    use PrimExprKind as K;
    if !uses_var(e, v) {
        return Some(0);
    }
    match e.kind() {
        K::Var(_) => Some(1),
        K::Add(a, b) => linear_coeff(a, v)?.checked_add(linear_coeff(b, v)?),
        K::Sub(a, b) => linear_coeff(a, v)?.checked_sub(linear_coeff(b, v)?),
        K::Mul(a, b) => match (a.as_int(), b.as_int()) {
            (Some(k), _) => linear_coeff(b, v)?.checked_mul(k),
            (_, Some(k)) => linear_coeff(a, v)?.checked_mul(k),
            _ => None,
        },
        // Widening a signed integer keeps its value.
        K::Cast(a)
            if e.dtype().is_int() && a.dtype().is_int() && e.dtype().bits() >= a.dtype().bits() =>
        {
            linear_coeff(a, v)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests;
