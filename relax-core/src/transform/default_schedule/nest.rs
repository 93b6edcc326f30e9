//! Canonical nests: recognising the loop nest TE lowering emits around one
//! block, and what the schedules ask of it (strides, contiguity).

use super::epilogue::Epilogue;
use super::knobs::Knobs;
use super::symbolic_div::divide_symbolic;
use super::util::*;
use super::PARALLEL_MIN_WORK;
use crate::arith::analyzer::Analyzer;
use crate::ir::prim_expr::{PrimExpr, PrimExprKind, TirVar};
use crate::tir::affine::{guarded_load, in_bounds_under, loads_of};
use crate::tir::{Block, Buffer, ForKind, IterKind, Stmt};
use relax_runtime::DataType;
use std::collections::HashMap;

/// Whether `work` (in plain iterations, over index dtype `dtype`) is
/// enough to run in parallel: the answer when it is a constant, else the
/// run-time condition.
pub(super) fn parallel_choice(work: &PrimExpr, dtype: DataType) -> Result<bool, PrimExpr> {
    let work = Analyzer::new().simplify(work);
    match work.as_int() {
        Some(w) => Ok(w >= PARALLEL_MIN_WORK),
        None => Err(work.ge(PrimExpr::int_of(dtype, PARALLEL_MIN_WORK))),
    }
}

/// The reduction length below which a convolution with its channels in
/// the vector lanes runs in place rather than as an implicit GEMM
/// ([`Nest::direct_conv`]): ResNet's and GoogLeNet's 7 × 7 stem over 3
/// channels (147 taps) took 4.6 ms as an NHWC implicit GEMM, whose pack
/// tests the padding at every element, and 0.96 ms in place (a 2-core
/// Xeon, batch 1, with the transpose back to NCHW).
const DIRECT_CONV_MAX_TAPS: i64 = 160;

/// An analyzer that knows each axis' variable lies in `[0, extent)`
/// (a symbolic extent: only that it is not negative).
pub(super) fn ranges<'a>(axes: impl IntoIterator<Item = &'a Axis>) -> Analyzer {
    let mut an = Analyzer::new();
    for a in axes {
        match a.extent.as_int() {
            Some(e) => an.bind_range(&a.var, Some(0), Some(e - 1)),
            None => an.mark_non_negative(&a.var),
        }
    }
    an
}

impl Nest {
    /// Whether every load of `e` stays inside its buffer at every point
    /// of the nest's iteration domain: each index is an axis variable of
    /// the buffer's own extent, or provably in `[0, dim)` for constant
    /// `dim` given the axes' ranges. Reading such loads on both sides of
    /// a `Select` (vector code) is then harmless wherever the nest runs.
    pub(super) fn loads_in_bounds(&self, e: &PrimExpr) -> bool {
        let axes: Vec<&Axis> = self.spatial.iter().chain(&self.reduce).collect();
        let an = ranges(axes.iter().copied());
        let own_axis = |i: &PrimExpr, dim: &PrimExpr| {
            axes.iter().any(|a| {
                i.as_var() == Some(&a.var)
                    && an
                        .simplify(&(a.extent.clone().cast(dim.dtype()) - dim.clone()))
                        .as_int()
                        == Some(0)
            })
        };
        let mut loads = Vec::new();
        loads_of(e, &mut loads);
        loads.iter().all(|l| in_bounds_under(l, &an, own_axis))
    }
}

/// The intrinsics [`Nest::iteration_cost`] counts as expensive.
const TRANSCENDENTAL: &[&str] = &[
    "exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "expm1", "tanh", "sigmoid", "erf",
    "pow", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "asinh", "acosh",
    "atanh",
];

/// How many calls of [`TRANSCENDENTAL`] intrinsics `e` makes.
pub(super) fn transcendental_calls(e: &PrimExpr) -> i64 {
    let own = match e.kind() {
        PrimExprKind::Call(name, _) if TRANSCENDENTAL.contains(&name.as_str()) => 1,
        _ => 0,
    };
    own + e
        .children()
        .into_iter()
        .map(transcendental_calls)
        .sum::<i64>()
}

/// One transcendental call, in plain iterations (a vectorized `exp` is a
/// few dozen instructions per vector).
const TRANSCENDENTAL_COST: i64 = 16;

/// An injective nest's element against a reduction's multiply-add: each
/// moves its bytes through memory, where sixteen multiply-adds share one
/// vector instruction. So an elementwise nest of 64K elements and more
/// runs on the thread pool (EfficientNet's squeeze-excitation scaling of
/// 56 × 56 × 144 elements took 0.105 ms on one thread).
pub(super) const ELEMENT_COST: i64 = 16;

/// A reduction's tap whose load tests the bounds of a padded window (a
/// pool, a padded depthwise convolution): the test, the clamped indices
/// and, at the borders, scalar code cost about this many multiply-adds.
/// So GoogLeNet's 3 × 3 pools over 512 × 14 × 14 (0.9M taps) run on the
/// thread pool (0.164 ms on one thread).
const GUARDED_TAP_COST: i64 = 4;

/// One iteration variable of a canonical nest.
#[derive(Clone)]
pub(super) struct Axis {
    /// The block's iteration variable.
    pub(super) var: TirVar,
    /// The loop that bound it (its name and dtype are reused).
    pub(super) loop_var: TirVar,
    pub(super) extent: PrimExpr,
}

/// A canonical nest (see the module docs), in terms of the block's
/// iteration variables.
pub(super) struct Nest {
    pub(super) spatial: Vec<Axis>,
    pub(super) reduce: Vec<Axis>,
    pub(super) buffer: Buffer,
    pub(super) indices: Vec<PrimExpr>,
    pub(super) value: PrimExpr,
    /// The init's stored value (same buffer and indices).
    pub(super) init: Option<PrimExpr>,
    /// The elementwise stage applied to a reduction's final values
    /// (`epilogue.rs`).
    pub(super) epilogue: Option<Epilogue>,
    /// The target's vector registers, in bits (the GEMM's register tile
    /// follows it).
    pub(super) vector_bits: u32,
    /// The schedules' choices (`knobs.rs`).
    pub(super) knobs: Knobs,
}

impl Nest {
    /// The nest rooted at `s`, if `s` is a canonical nest, to be
    /// scheduled for vector registers of `vector_bits` with `knobs`.
    pub(super) fn of(s: &Stmt, vector_bits: u32, knobs: Knobs) -> Option<Nest> {
        let mut loops = Vec::new();
        let mut cur = s;
        while let Stmt::For {
            loop_var,
            min,
            extent,
            kind: ForKind::Serial,
            body,
            ..
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
        // The expressions simplified with every iteration variable in its
        // range: a reshape's flattened index, `(i·56 + j) // 56 % 4`, becomes
        // affine again (`i % 4`), so the loads the schedules look at are the
        // ones they can vectorize.
        // Divisions by a symbolic extent first (`symbolic_div.rs`).
        let an = ranges(spatial.iter().chain(&reduce));
        let axes: Vec<Axis> = spatial.iter().chain(&reduce).cloned().collect();
        let simplify = |e: &PrimExpr| an.simplify(&divide_symbolic(e, &axes));
        let value = &simplify(value);
        let indices: &Vec<PrimExpr> = &indices.iter().map(simplify).collect();
        let init = init.map(|v| simplify(&v));
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
            epilogue: None,
            vector_bits,
            knobs,
        })
    }

    /// What one iteration costs, in plain iterations: 1 (a reduction's
    /// multiply-add) or [`ELEMENT_COST`] (an injective nest's element, read
    /// and written), plus [`TRANSCENDENTAL_COST`] for each `exp`, `log`,
    /// `tanh`, … it calls (softmax's exp-heavy loops pay for the thread
    /// pool at a size where an add would not).
    fn iteration_cost(&self) -> i64 {
        let base = if self.reduce.is_empty() {
            ELEMENT_COST
        } else {
            1
        };
        base + TRANSCENDENTAL_COST * transcendental_calls(&self.value)
    }

    /// The nest's work: its iterations times [`Nest::iteration_cost`],
    /// or, for a reduction that reads each element of an operand once
    /// ([`Nest::unreused_operand`]: a matrix-vector product's weight, a
    /// sum's input; a byte of two 4-bit weights twice), its iterations
    /// times [`ELEMENT_COST`] where that is
    /// more: each multiply-add then moves a new element through memory,
    /// as an injective nest's element does, and gains as much from a
    /// second core (a decoder's 768 × 768 projection of one token, 0.6M
    /// multiply-adds of int8 weights, ran on one thread in 52 µs).
    pub(super) fn work(&self) -> PrimExpr {
        let iterations = self
            .spatial
            .iter()
            .chain(&self.reduce)
            .fold(PrimExpr::int(1), |acc, a| acc * a.extent.clone());
        let cost = self.iteration_cost();
        let computed = iterations.clone() * PrimExpr::int(cost);
        match self.unreused_operand() {
            Some(reuse) if cost < ELEMENT_COST => {
                let streamed = iterations * PrimExpr::int(ELEMENT_COST);
                match reuse.as_int() {
                    Some(1) => streamed,
                    Some(_) => computed,
                    // Decided at run time: a symbolic batch or sequence of
                    // one.
                    None => PrimExpr::select(reuse.le(PrimExpr::int(1)), streamed, computed),
                }
            }
            _ => computed,
        }
    }

    /// For a reduction, the reuse of its operand read least often, among
    /// those whose elements distinct iterations (nearly) tell apart: the
    /// product of the extents of the loops its indices do not use (1 when
    /// every iteration reads an element of its own, or a byte at most two
    /// read). `None` for an injective nest or one without such a load.
    fn unreused_operand(&self) -> Option<PrimExpr> {
        if self.reduce.is_empty() {
            return None;
        }
        let mut loads = Vec::new();
        loads_of(&self.value, &mut loads);
        let an = Analyzer::new();
        let axes: Vec<&Axis> = self.spatial.iter().chain(&self.reduce).collect();
        // Distinct iterations read distinct elements when the load's
        // offset is affine in the loop variables it uses, each step of one
        // variable passing over all the elements of the finer ones
        // (`W[j, k]`, also through `k // 32, k % 32`; not a window's
        // `x[h + kh]`); or, nearly, when those loops' iterations are at
        // most twice the buffer's elements (a byte of two 4-bit weights,
        // `Wp[j, k // 32, k % 16]` shifted by `k % 32 // 16`). The reuse is
        // then the extents of the loops it does not use.
        let reuse_of = |b: &Buffer, idx: &[PrimExpr]| -> Option<PrimExpr> {
            let offset = an.simplify(&b.offset_of(idx));
            let mut steps: Vec<(i64, Option<i64>)> = Vec::new();
            let mut affine = true;
            let mut reuse = PrimExpr::int(1);
            let mut used_iterations = Some(1i64);
            for a in &axes {
                if !uses_var(&offset, &a.var) {
                    reuse = reuse * a.extent.clone();
                    continue;
                }
                used_iterations = used_iterations
                    .zip(a.extent.as_int())
                    .and_then(|(n, e)| n.checked_mul(e));
                match linear_coeff(&offset, &a.var).filter(|c| *c != 0) {
                    Some(c) => steps.push((c.abs(), a.extent.as_int())),
                    None => affine = false,
                }
            }
            steps.sort();
            let disjoint = affine
                && steps
                    .windows(2)
                    .all(|w| w[0].1.is_some_and(|e| w[1].0 >= w[0].0 * e));
            let elements = b
                .shape()
                .iter()
                .try_fold(1i64, |n, d| d.as_int().and_then(|d| n.checked_mul(d)));
            let at_most_twice = used_iterations
                .zip(elements)
                .is_some_and(|(n, e)| n <= 2 * e);
            (disjoint || at_most_twice).then(|| an.simplify(&reuse))
        };
        let reuses: Vec<PrimExpr> = loads
            .iter()
            .filter_map(|load| match load.kind() {
                PrimExprKind::BufferLoad(b, idx) if b != &self.buffer => reuse_of(b, idx),
                _ => None,
            })
            .collect();
        // A constant reuse of 1 wins; else a symbolic one (it may be 1 at
        // run time); else none is streamed.
        reuses
            .iter()
            .find(|r| r.as_int() == Some(1))
            .or_else(|| reuses.iter().find(|r| r.as_int().is_none()))
            .cloned()
    }

    /// The nest scheduled, its batch axes first folded into the rows when
    /// the weight is shared (`fold_rows.rs`): an int8 matrix product
    /// packed for `T.dpbusd` (case 8), a large matrix product packed (case 5, which
    /// always runs in parallel), anything else in place, in parallel when
    /// the work is large enough; decided at run time when symbolic.
    pub(super) fn schedule(&self) -> Stmt {
        if let Some(folded) = self.rows_folded() {
            return folded.schedule();
        }
        if let Some(split) = self.groups_split() {
            return split.schedule_in_place();
        }
        if let Some(gemm) = self.gemm_int8() {
            return gemm.schedule();
        }
        if let Some(conv) = self.conv_int8() {
            return conv;
        }
        if let Some(mut gemm) = self.gemm() {
            if gemm.batch_parallel() {
                gemm.parallel = super::gemm::GemmParallel::Batch;
            }
            match gemm.when() {
                Ok(true) => return gemm.packed_for_rows(),
                Ok(false) => {}
                Err(cond) => {
                    return Stmt::IfThenElse {
                        cond,
                        then_case: Box::new(gemm.packed()),
                        else_case: Some(Box::new(self.with_new_loops().schedule_in_place())),
                    }
                }
            }
        }
        if let Some(flat) = self.implicit_gemm().filter(|_| !self.direct_conv()) {
            if let Some(stmt) = self.in_place_implicit_gemm() {
                return stmt;
            }
            if let Some(stmt) = flat.implicit_gemm_schedule(self) {
                return stmt;
            }
        }
        self.schedule_in_place()
    }

    /// Whether an implicit GEMM is better run in place by case 2: its
    /// output channels are the vector lanes, contiguous in the output and
    /// in the weight, the only factor that reads them (NHWC output, HWIO
    /// weight), and its reduction is shorter than
    /// [`DIRECT_CONV_MAX_TAPS`] over several axes (an image's stem, 3
    /// channels by 3 × 3 or 7 × 7).
    /// The im2col pack of so short a `k` costs as much as the products;
    /// in place, each tap is one broadcast load of the image and a
    /// multiply-add per vector of channels.
    pub(super) fn direct_conv(&self) -> bool {
        if self.reduce.len() < 2 {
            return false;
        }
        let taps = self
            .reduce
            .iter()
            .try_fold(1i64, |n, a| Some(n * a.extent.as_int()?));
        // The factor read along `j` is the weight: no other output axis.
        let n = self.spatial.len();
        let weight_along_j = self
            .factors_along(&self.spatial[n - 1])
            .is_some_and(|(_, w)| self.spatial[..n - 1].iter().all(|s| !uses_var(w, &s.var)));
        taps.is_some_and(|t| t < DIRECT_CONV_MAX_TAPS)
            && weight_along_j
            && self.contiguous_reduction()
    }

    /// The work of the schedules that read their operands in place: each
    /// tap that tests the bounds of a padded window costs
    /// [`GUARDED_TAP_COST`].
    fn in_place_work(&self) -> PrimExpr {
        let work = self.work();
        match !self.reduce.is_empty() && guarded_load(&self.value) {
            true => work * PrimExpr::int(GUARDED_TAP_COST),
            false => work,
        }
    }

    pub(super) fn schedule_in_place(&self) -> Stmt {
        match parallel_choice(&self.in_place_work(), self.index_dtype()) {
            Ok(parallel) => self.build(parallel),
            Err(cond) => Stmt::IfThenElse {
                cond,
                then_case: Box::new(self.build(true)),
                // Every loop binds its own variable: the serial version
                // gets new ones.
                else_case: Some(Box::new(self.with_new_loops().build(false))),
            },
        }
    }

    /// The schedules that read their operands in place (cases 1 to 4, 7).
    pub(super) fn build(&self, parallel: bool) -> Stmt {
        if self.reduce.is_empty() {
            self.injective(parallel)
        } else if self.contiguous_reduction() {
            self.tiled_reduction(parallel)
        } else if self.dot_reduction_applies() {
            self.dot_reduction(parallel)
        } else if let Some(window) = self.window() {
            self.window_reduction(parallel, &window)
        } else {
            self.plain_reduction(parallel)
        }
    }

    /// This nest over the spatial axes `spatial`, its old variables
    /// replaced by `map` (in terms of the new axes) and simplified in the
    /// new axes' ranges: the loops of a TVM `split`, `fuse` or `reorder`
    /// of spatial loops (`fold_rows.rs`, `groups.rs`).
    pub(super) fn with_axes(&self, spatial: Vec<Axis>, map: &HashMap<TirVar, PrimExpr>) -> Nest {
        let an = ranges(spatial.iter().chain(&self.reduce));
        let sub = |e: &PrimExpr| an.simplify(&e.substitute_map(map));
        let epilogue = self.epilogue.as_ref().map(|epi| Epilogue {
            indices: epi.indices.iter().map(sub).collect(),
            value: sub(&epi.value),
            ..epi.clone()
        });
        Nest {
            spatial,
            reduce: self.reduce.clone(),
            buffer: self.buffer.clone(),
            indices: self.indices.iter().map(sub).collect(),
            value: sub(&self.value),
            init: self.init.as_ref().map(sub),
            epilogue,
            vector_bits: self.vector_bits,
            knobs: self.knobs,
        }
    }

    pub(super) fn with_new_loops(&self) -> Nest {
        Nest {
            spatial: new_loops(&self.spatial),
            reduce: new_loops(&self.reduce),
            buffer: self.buffer.clone(),
            indices: self.indices.clone(),
            value: self.value.clone(),
            init: self.init.clone(),
            epilogue: self.epilogue.clone(),
            vector_bits: self.vector_bits,
            knobs: self.knobs,
        }
    }

    pub(super) fn index_dtype(&self) -> DataType {
        self.spatial
            .iter()
            .chain(&self.reduce)
            .next()
            .map_or(DataType::i64(), |a| a.var.dtype())
    }

    /// The coefficients of `var` in the flat offsets of the store and of
    /// the loads of other buffers (`None`: not affine with a constant one).
    pub(super) fn coefficients(&self, var: &TirVar) -> (Option<i64>, Vec<Option<i64>>) {
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
    pub(super) fn vectorizes(&self, var: &TirVar) -> bool {
        let (store, loads) = self.coefficients(var);
        store == Some(1) && loads.iter().all(|c| matches!(c, Some(0 | 1)))
    }

    /// Whether the innermost spatial variable can become the innermost
    /// loop of a reduction (see the module docs, case 2).
    pub(super) fn contiguous_reduction(&self) -> bool {
        let Some(j) = self.spatial.last() else {
            return false;
        };
        let (_, loads) = self.coefficients(&j.var);
        self.vectorizes(&j.var) && loads.contains(&Some(1))
    }

    /// The nest's store with the iteration variables replaced by `map`
    /// (the init's store when `init`).
    pub(super) fn store(&self, map: &HashMap<TirVar, PrimExpr>, init: bool) -> Stmt {
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
}
