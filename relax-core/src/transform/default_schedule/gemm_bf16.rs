//! A `bfloat16` matrix product on AVX512-BF16: `C[.., i, j] = init +
//! Σ_k A(i, k) · B(k, j)` in `float32`, where both factors are `bfloat16`
//! loads (a `matmul(a, b, out_dtype="float32")` of `bfloat16` tensors, as
//! `ToMixedPrecision` writes it, legalizes to `f32(A[i, k]) · f32(B[k,
//! j])`) or casts to `bfloat16` (its `R.astype` of a `float32` operand,
//! fused into the matmul), `B` contiguous along `j`, every extent a
//! constant. The register
//! tile steps through `k` two at a time with `T.dpbf16ps` (x86's
//! `vdpbf16ps`: sixteen `float32` accumulators, each plus the two products
//! of a pair of `bfloat16`), so the operands are first packed into 32-bit
//! words of two consecutive `k`:
//!
//! ```text
//! B_words[jt, q, c] = B(2q, j) | B(2q+1, j) << 16     j = jt·NR + c; zero past N
//! A_words[it, q, r] = A(i, 2q) | A(i, 2q+1) << 16     i = min(it·MR + r, M - 1)
//!                       (an odd K: the last word's top half is zero)
//! for ic in row chunks (Parallel):
//!   for jt, it in the chunk:                  one MR × NR register tile
//!     acc = 0
//!     for q in ceil(K / 2): acc[r, c] = T.dpbf16ps(acc[r, c], A_words[it, q, r], B_words[jt, q, c])
//!     C[tile] = init + acc                    element by element across the edge
//! ```
//!
//! The words hold the `bfloat16` bits (`T.reinterpret` of the exact
//! `float32` value, its top half), so the products are those of the
//! `bfloat16` inputs, exactly as the unscheduled loop forms them; the sum is
//! reassociated (pairs, fused, with the instruction's flush of subnormals
//! to zero). A row of the B pack is two vector registers, a word of the A
//! pack is broadcast per row: the inner loop is `MR` × 2 `vdpbf16ps` on
//! accumulators that stay in registers.
//!
//! The pass takes this schedule only when built for a CPU that has the
//! instruction ([`super::DefaultSchedule::with_bf16`]): the lane-by-lane
//! fallback of the LLVM back end is exact but slower than the `float32`
//! GEMM, which every other target keeps.

use super::gemm::{scope, GEMM_MIN_ROWS};
use super::knobs::Knobs;
use super::nest::{Axis, Nest};
use super::util::*;
use super::{PARALLEL_MIN_WORK, VECTOR_LANES};
use crate::ir::prim_expr::{PrimExpr, PrimExprKind, TirVar};
use crate::ir::Attrs;
use crate::tir::{Block, Buffer, ForKind, Stmt};
use relax_runtime::DataType;
use std::collections::HashMap;

/// Rows of the register tile (broadcast words per `k` pair).
pub const GEMM_BF16_MR: i64 = 8;
/// Columns of the register tile: two 16-lane vectors, so the tile is
/// sixteen accumulator registers of the 32 AVX-512 has.
pub const GEMM_BF16_NR: i64 = 32;
/// The row chunks run in parallel (an even number: both cores of a
/// 2-core machine get as many).
pub const GEMM_BF16_CHUNKS: i64 = 4;

/// `s` with every canonical nest that is a `bfloat16` matrix product
/// (see the module docs) scheduled; everything else as it was.
pub(super) fn schedule_bf16_gemms(s: &Stmt, bits: u32) -> Stmt {
    if matches!(s, Stmt::For { .. }) {
        // The bfloat16 GEMM has knobs of its own, none tuned.
        if let Some(nest) = Nest::of(s, bits, Knobs::default()) {
            return match Bf16Gemm::of(&nest) {
                Some(g) => g.schedule(),
                None => s.clone(),
            };
        }
    }
    if let Stmt::Block(b) = s {
        if !b.iter_vars.is_empty() {
            return s.clone();
        }
    }
    match s.try_map_children(|c| Ok::<_, std::convert::Infallible>(schedule_bf16_gemms(c, bits))) {
        Ok(r) => r,
        Err(never) => match never {},
    }
}

/// A nest that is a `bfloat16` matrix product.
struct Bf16Gemm<'a> {
    nest: &'a Nest,
    /// `A(i, k)`, a `bfloat16` load (its `float32` value).
    a: PrimExpr,
    /// `B(k, j)`, likewise, contiguous along `j`.
    b: PrimExpr,
    m: i64,
    n: i64,
    k: i64,
}

/// `e` as a `float32` expression when its value is exactly a `bfloat16`
/// one: a `bfloat16` buffer load, or a cast to `bfloat16` (it rounds: an
/// `R.astype` that `ToMixedPrecision` put before the matmul and fusion
/// inlined), bare or cast to `float32`.
fn bf16_load(e: &PrimExpr) -> Option<PrimExpr> {
    let inner = match e.kind() {
        PrimExprKind::Cast(x) if e.dtype() == DataType::f32() => x,
        _ => e,
    };
    if inner.dtype() != DataType::bf16() {
        return None;
    }
    match inner.kind() {
        PrimExprKind::BufferLoad(..) | PrimExprKind::Cast(_) => {
            Some(inner.clone().cast(DataType::f32()))
        }
        _ => None,
    }
}

impl<'a> Bf16Gemm<'a> {
    fn of(nest: &'a Nest) -> Option<Self> {
        let s = nest.spatial.len();
        if nest.vector_bits < 512
            || nest.reduce.len() != 1
            || s < 2
            || nest.buffer.dtype() != DataType::f32()
            || nest.epilogue.is_some()
        {
            return None;
        }
        let (x, y) = nest.product_update()?;
        let (i, j) = (&nest.spatial[s - 2], &nest.spatial[s - 1]);
        let free = |e: &PrimExpr, axis: &Axis| !uses_var(e, &axis.var);
        let (a, b) = if free(x, j) && free(y, i) {
            (x, y)
        } else if free(y, j) && free(x, i) {
            (y, x)
        } else {
            return None;
        };
        let (a, b) = (bf16_load(a)?, bf16_load(b)?);
        if !contiguous(&load_coeffs(&b, &j.var)) {
            return None;
        }
        if nest.spatial.iter().any(|ax| ax.extent.as_int().is_none()) {
            return None;
        }
        let (m, n, k) = (
            i.extent.as_int()?,
            j.extent.as_int()?,
            nest.reduce[0].extent.as_int()?,
        );
        let big = m.checked_mul(n).and_then(|v| v.checked_mul(k))? >= PARALLEL_MIN_WORK;
        if m < GEMM_MIN_ROWS || n < VECTOR_LANES || k < 2 || !big {
            return None;
        }
        Some(Bf16Gemm {
            nest,
            a,
            b,
            m,
            n,
            k,
        })
    }

    fn axes(&self) -> (&Axis, &Axis, &Axis) {
        let s = &self.nest.spatial;
        (&s[s.len() - 2], &s[s.len() - 1], &self.nest.reduce[0])
    }

    fn int(&self, v: i64) -> PrimExpr {
        PrimExpr::int_of(self.nest.index_dtype(), v)
    }

    /// A loop `name` over `[min, min + extent)` around `body(var)`.
    fn range(
        &self,
        name: &str,
        min: i64,
        extent: i64,
        kind: ForKind,
        body: impl FnOnce(PrimExpr) -> Stmt,
    ) -> Stmt {
        let v = TirVar::with_dtype(name, self.nest.index_dtype());
        let inner = body(PrimExpr::var(&v));
        for_(&v, self.int(min), self.int(extent), kind, inner)
    }

    /// The tile's columns around `body(column)`: unrolled vectors of
    /// [`VECTOR_LANES`].
    fn columns(&self, body: impl FnOnce(PrimExpr) -> Stmt) -> Stmt {
        self.range(
            "c_u",
            0,
            GEMM_BF16_NR / VECTOR_LANES,
            ForKind::Unrolled,
            |u| {
                self.range("c_l", 0, VECTOR_LANES, ForKind::Vectorized, |l| {
                    body(u * self.int(VECTOR_LANES) + l)
                })
            },
        )
    }

    /// The register tile: unrolled rows around [`Bf16Gemm::columns`].
    fn tile(&self, body: impl Fn(PrimExpr, PrimExpr) -> Stmt) -> Stmt {
        self.range("r", 0, GEMM_BF16_MR, ForKind::Unrolled, |r| {
            self.columns(|c| body(r, c))
        })
    }

    /// `factor` at row `row` (of the axis `axis`) and `k` = `kk`.
    fn at(
        &self,
        factor: &PrimExpr,
        base: &HashMap<TirVar, PrimExpr>,
        axis: &Axis,
        row: PrimExpr,
        kk: PrimExpr,
    ) -> PrimExpr {
        let (_, _, k) = self.axes();
        let mut map = base.clone();
        map.insert(axis.var.clone(), row.cast(axis.var.dtype()));
        map.insert(k.var.clone(), kk.cast(k.var.dtype()));
        factor.substitute_map(&map)
    }

    /// The word of the `bfloat16` values `lo` (bits 0-15) and `hi` (bits
    /// 16-31, zero when `None`), given as their exact `float32` values.
    fn word(lo: PrimExpr, hi: Option<PrimExpr>) -> PrimExpr {
        let u32t = DataType::uint(32);
        let bits = |x: PrimExpr| PrimExpr::call(u32t, "reinterpret", vec![x]);
        let lo = PrimExpr::call(
            u32t,
            "shift_right",
            vec![bits(lo), PrimExpr::int_of(u32t, 16)],
        );
        match hi {
            None => lo,
            Some(hi) => {
                let top = PrimExpr::call(
                    u32t,
                    "bitwise_and",
                    vec![bits(hi), PrimExpr::int_of(u32t, 0xffff_0000)],
                );
                PrimExpr::call(u32t, "bitwise_or", vec![top, lo])
            }
        }
    }

    /// Stores into `pack[t, q, r]` the words of `factor` along `k` for
    /// the row `row(r)`, `r` looping over `[r0, r0 + rn)` (`kind`, the
    /// innermost loop when `rows_inner`, else outside `q`).
    #[allow(clippy::too_many_arguments)]
    fn fill(
        &self,
        pack: &Buffer,
        factor: &PrimExpr,
        axis: &Axis,
        base: &HashMap<TirVar, PrimExpr>,
        t: &PrimExpr,
        (r0, rn): (i64, i64),
        row: impl Fn(&PrimExpr) -> PrimExpr,
        rows_inner: bool,
    ) -> Stmt {
        let (full, odd) = (self.k / 2, self.k % 2 == 1);
        let store = |q: PrimExpr, r: PrimExpr, last: bool| {
            let two_q = q.clone() * self.int(2);
            let lo = self.at(factor, base, axis, row(&r), two_q.clone());
            let hi = (!last).then(|| self.at(factor, base, axis, row(&r), two_q + self.int(1)));
            Stmt::BufferStore {
                buffer: pack.clone(),
                value: Self::word(lo, hi),
                indices: vec![t.clone(), q, r],
            }
        };
        let kind = if rows_inner {
            ForKind::Vectorized
        } else {
            ForKind::Serial
        };
        let pairs = |r_outer: Option<PrimExpr>| match r_outer {
            Some(r) => self.range("q", 0, full, ForKind::Serial, |q| store(q, r, false)),
            None => self.range("q", 0, full, ForKind::Serial, |q| {
                self.range("r", r0, rn, kind, |r| store(q, r, false))
            }),
        };
        let last = |r_outer: Option<PrimExpr>| match r_outer {
            Some(r) => store(self.int(full), r, true),
            None => self.range("r", r0, rn, kind, |r| store(self.int(full), r, true)),
        };
        let both = |r: Option<PrimExpr>| {
            let mut v = vec![pairs(r.clone())];
            if odd {
                v.push(last(r));
            }
            seq(v)
        };
        if rows_inner {
            both(None)
        } else {
            self.range("r", r0, rn, kind, |r| both(Some(r)))
        }
    }

    /// The schedule (see the module docs).
    fn schedule(&self) -> Stmt {
        let nest = self.nest;
        let s = nest.spatial.len();
        let batch = new_loops(&nest.spatial[..s - 2]);
        let base = identity(&batch);
        let (i, j, _) = self.axes();
        let (mr, nr) = (GEMM_BF16_MR, GEMM_BF16_NR);
        let (m, n) = (self.m, self.n);
        let words = (self.k + 1) / 2;
        let (row_tiles, col_tiles) = ((m + mr - 1) / mr, (n + nr - 1) / nr);
        let u32t = DataType::uint(32);
        let b_words = Buffer::new(
            "B_words",
            vec![self.int(col_tiles), self.int(words), self.int(nr)],
            u32t,
        );
        let a_words = Buffer::new(
            "A_words",
            vec![self.int(row_tiles), self.int(words), self.int(mr)],
            u32t,
        );
        // The B pack: whole tiles in parallel, then the edge tile, its
        // columns past N zero.
        let col = |t: &PrimExpr| {
            let t = t.clone();
            move |c: &PrimExpr| t.clone() * self.int(nr) + c.clone()
        };
        let (full_cols, rest) = (n / nr, n % nr);
        let mut pack_b = vec![self.range("t", 0, full_cols, ForKind::Parallel, |t| {
            self.fill(&b_words, &self.b, j, &base, &t, (0, nr), col(&t), true)
        })];
        if rest > 0 {
            let t = self.int(full_cols);
            pack_b.push(self.fill(&b_words, &self.b, j, &base, &t, (0, rest), col(&t), true));
            pack_b.push(self.range("q", 0, words, ForKind::Serial, |q| {
                self.range("r", rest, nr - rest, ForKind::Vectorized, |r| {
                    Stmt::BufferStore {
                        buffer: b_words.clone(),
                        value: PrimExpr::int_of(u32t, 0),
                        indices: vec![t.clone(), q, r],
                    }
                })
            }));
        }
        // The A pack: rows past M repeat the last row (their sums are
        // never stored).
        let pack_a = self.range("t", 0, row_tiles, ForKind::Parallel, |t| {
            let row = |r: &PrimExpr| (t.clone() * self.int(mr) + r.clone()).min(self.int(m - 1));
            self.fill(&a_words, &self.a, i, &base, &t, (0, mr), row, false)
        });
        // Chunk `c` runs tiles `c·T/C .. (c+1)·T/C`.
        let chunks = GEMM_BF16_CHUNKS.min(row_tiles);
        let tiles = self.range("ic_o", 0, chunks, ForKind::Parallel, |c| {
            let start = (c.clone() * self.int(row_tiles)).floordiv(self.int(chunks));
            let end = ((c + self.int(1)) * self.int(row_tiles)).floordiv(self.int(chunks));
            let it_v = TirVar::with_dtype("it", self.nest.index_dtype());
            let jt_v = TirVar::with_dtype("jt", self.nest.index_dtype());
            let kernel = self.micro_kernel(
                &base,
                &PrimExpr::var(&it_v),
                &PrimExpr::var(&jt_v),
                &a_words,
                &b_words,
            );
            let inner = for_(&it_v, start.clone(), end - start, ForKind::Serial, kernel);
            for_(
                &jt_v,
                self.int(0),
                self.int(col_tiles),
                ForKind::Serial,
                inner,
            )
        });
        let body = seq(vec![seq(pack_b), pack_a, tiles]);
        let scoped = Stmt::Block(Box::new(Block {
            name: "bf16_words".to_string(),
            iter_vars: vec![],
            iter_values: vec![],
            reads: vec![],
            writes: vec![],
            init: None,
            body: Box::new(body),
            alloc_buffers: vec![a_words, b_words],
            annotations: Attrs::new(),
        }));
        nest_loops(&batch, scoped)
    }

    /// One register tile `(it, jt)`: accumulate over the words, then write
    /// back.
    fn micro_kernel(
        &self,
        base: &HashMap<TirVar, PrimExpr>,
        it: &PrimExpr,
        jt: &PrimExpr,
        a_words: &Buffer,
        b_words: &Buffer,
    ) -> Stmt {
        let (mr, nr) = (GEMM_BF16_MR, GEMM_BF16_NR);
        let f32t = DataType::f32();
        let acc = Buffer::new("acc", vec![self.int(mr), self.int(nr)], f32t);
        let init = self.tile(|r, c| Stmt::BufferStore {
            buffer: acc.clone(),
            value: PrimExpr::float(f32t, 0.0),
            indices: vec![r, c],
        });
        let update = self.range("q", 0, (self.k + 1) / 2, ForKind::Serial, |q| {
            self.tile(|r, c| {
                let here = PrimExpr::load(&acc, vec![r.clone(), c.clone()]);
                let a = PrimExpr::load(a_words, vec![it.clone(), q.clone(), r.clone()]);
                let b = PrimExpr::load(b_words, vec![jt.clone(), q.clone(), c.clone()]);
                Stmt::BufferStore {
                    buffer: acc.clone(),
                    value: PrimExpr::call(f32t, "dpbf16ps", vec![here, a, b]),
                    indices: vec![r, c],
                }
            })
        });
        let i0 = it.clone() * self.int(mr);
        let j0 = jt.clone() * self.int(nr);
        let whole = (i0.clone() + self.int(mr))
            .le(self.int(self.m))
            .and((j0.clone() + self.int(nr)).le(self.int(self.n)));
        let whole_tile = self.tile(|r, c| {
            let sum = PrimExpr::load(&acc, vec![r.clone(), c.clone()]);
            self.write_back(base, &i0, &j0, r, c, sum)
        });
        // Across the edge of `C`: element by element through a copy
        // (indexing `acc` by bounds known only at run time would keep it
        // out of registers).
        let edge = Buffer::new("acc_edge", vec![self.int(mr), self.int(nr)], f32t);
        let copy = self.tile(|r, c| Stmt::BufferStore {
            buffer: edge.clone(),
            value: PrimExpr::load(&acc, vec![r.clone(), c.clone()]),
            indices: vec![r, c],
        });
        let rows = self.int(mr).min(self.int(self.m) - i0.clone());
        let cols = self.int(nr).min(self.int(self.n) - j0.clone());
        let (rv, cv) = (
            TirVar::with_dtype("r", self.nest.index_dtype()),
            TirVar::with_dtype("c", self.nest.index_dtype()),
        );
        let sum = PrimExpr::load(&edge, vec![PrimExpr::var(&rv), PrimExpr::var(&cv)]);
        let store = self.write_back(base, &i0, &j0, PrimExpr::var(&rv), PrimExpr::var(&cv), sum);
        let store = for_(&cv, self.int(0), cols, ForKind::Serial, store);
        let store = for_(&rv, self.int(0), rows, ForKind::Serial, store);
        let edge_tile = scope("acc_edge", vec![edge], seq(vec![copy, store]));
        let write = Stmt::IfThenElse {
            cond: whole,
            then_case: Box::new(whole_tile),
            else_case: Some(Box::new(edge_tile)),
        };
        scope("acc", vec![acc], seq(vec![init, update, write]))
    }

    /// `C[i0 + r, j0 + c] = init + sum`.
    fn write_back(
        &self,
        base: &HashMap<TirVar, PrimExpr>,
        i0: &PrimExpr,
        j0: &PrimExpr,
        r: PrimExpr,
        c: PrimExpr,
        sum: PrimExpr,
    ) -> Stmt {
        let nest = self.nest;
        let (i, j, _) = self.axes();
        let mut map = base.clone();
        map.insert(i.var.clone(), (i0.clone() + r).cast(i.var.dtype()));
        map.insert(j.var.clone(), (j0.clone() + c).cast(j.var.dtype()));
        let indices = nest
            .indices
            .iter()
            .map(|e| e.substitute_map(&map))
            .collect();
        let init = nest.init.as_ref().map(|e| e.substitute_map(&map));
        let value = match init {
            Some(z) if matches!(z.kind(), PrimExprKind::FloatImm(v) if *v == 0.0) => sum,
            Some(z) => z + sum,
            None => sum,
        };
        Stmt::BufferStore {
            buffer: nest.buffer.clone(),
            value,
            indices,
        }
    }
}

/// Serial loops over the batch axes around `body`.
fn nest_loops(batch: &[Axis], body: Stmt) -> Stmt {
    super::util::nest(batch, body, None)
}

#[cfg(test)]
mod tests;
