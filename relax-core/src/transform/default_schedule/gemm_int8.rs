//! Case 8 of the module docs: an integer matrix product,
//! `C[.., i, j] = init + Σ_k i32(A(i, k)) · i32(B(k, j))` with `C` int32
//! and `A`, `B` bytes (`uint8` or `int8`: what `R.matmul(a, b,
//! out_dtype="int32")` legalizes to), as a packed GEMM whose inner step is
//! `T.dpbusd` (x86's `vpdpbusd`: per 32-bit lane, the dot product of four
//! unsigned bytes with four signed bytes, added to the lane).
//!
//! ```text
//! for jc in N by nc:                                  B panels
//!   for kc in K by kc:
//!     B_pack[jt, q, c] = word(B'(kc + 4q + t, jc + jt·NR + c), t = 0..3)
//!                          zero past K and N
//!     B_sum[c] = Σ_k B'(kc + k, jc + c)              (A offset only)
//!     for ic in M by a chunk of at most mc rows (Parallel):
//!       A_pack[it, q, r] = word(A'(ic + it·MR + r, kc + 4q + t))
//!       A_sum[r] = Σ_k A'(ic + r, kc + k)             (B offset only)
//!       for jt, it:                                   one MR × NR tile
//!         acc = 0
//!         for q: acc[r, c] = T.dpbusd(acc[r, c], A_pack[it, q, r], B_pack[jt, q, c])
//!         C[tile] = (first kc ? init : C[tile]) + acc + correction
//!                                                     epilogue on the last kc
//! ```
//!
//! A `word` holds four consecutive `k` of one row (A) or column (B), the
//! first in the lowest byte, so one `T.dpbusd` of an `A_pack` word
//! (broadcast to the 16 lanes) with a row of `B_pack` (16 columns) is four
//! steps of `k` for 16 outputs. The register tile is [`I8_MR`] rows × two
//! 16-lane vectors ([`I8_NR`] columns): `2·I8_MR` accumulators. The packs
//! are zero-padded to whole words and whole tiles, so the micro-kernel has
//! no tail; a tile crossing the edge of `C` is written element by element
//! through a copy, as in `gemm.rs`.
//!
//! `vpdpbusd` multiplies unsigned bytes of its first operand by signed
//! bytes of its second; either pack may be the unsigned operand (the
//! broadcast `A` word or the `B` vector: lane by lane it is the same
//! product). The packs hold `A' = A + a_off` and `B' = B + b_off`, the
//! offset 128 that makes an `int8` operand unsigned (`xor 0x80`), -128
//! for a `uint8` one that must be signed, else 0. Then
//!
//! ```text
//! Σ_k A·B = Σ_k A'·B' - b_off·Σ_k A' - a_off·Σ_k B' + a_off·b_off·K
//! ```
//!
//! so all four sign combinations run on `vpdpbusd`: `u8 × s8` (A
//! unsigned) and `s8 × u8` (B unsigned) need no correction; `s8 × s8` and
//! `u8 × u8` offset one operand, A (then the column sums of `B`, taken in
//! a pass over the slice of B next to its pack) or, for an implicit GEMM
//! ([`Nest::gemm_int8_oriented`], `conv_int8.rs`), B (then the row sums of
//! `A`, next to its pack). The padding words are zero in the packs and
//! in the sums, and `K` is the slice's true depth, so the corrections are
//! exact. Every sum is int32 and wraps, as the unscheduled nest does.
//!
//! The schedule is chosen for 512-bit targets ([`DefaultSchedule`]'s
//! vector width; `T.dpbusd` on 16 lanes is one `vpdpbusd` where the CPU
//! has AVX512-VNNI, and per-byte arithmetic otherwise, still correct).
//! Narrower targets keep cases 2 and 3. The row chunks run in parallel
//! when the product is at least [`PARALLEL_MIN_WORK`] multiply-adds
//! (decided at run time for symbolic shapes, both versions emitted).
//!
//! [`DefaultSchedule`]: super::DefaultSchedule

use super::gemm::{branch, choice, let_seq, per_slice, scope, then_if, tile_store, Choice, Loops};
use super::nest::Nest;
use super::util::*;
use super::PARALLEL_MIN_WORK;
use crate::arith::analyzer::Analyzer;
use crate::ir::prim_expr::{PrimExpr, PrimExprKind, TirVar};
use crate::tir::buffer_uses::expr_reads;
use crate::tir::{Buffer, ForKind, Stmt};
use relax_runtime::DataType;
use std::collections::HashMap;

/// Rows of the register tile (broadcast `A` words per step of four `k`).
pub const I8_MR: i64 = 6;
/// Columns of the register tile: two vectors of 16 int32 lanes.
pub const I8_NR: i64 = 32;
/// The most `k` one pack holds (a multiple of 4).
pub const I8_KC: i64 = 2048;
/// The most rows one chunk packs (a multiple of [`I8_MR`]).
pub const I8_MC: i64 = 48;
/// The columns of one B panel (a multiple of [`I8_NR`]).
pub const I8_NC: i64 = 1024;
/// The fewest row chunks when they run in parallel (an even number).
pub const I8_MIN_CHUNKS: i64 = 4;

/// The largest `A` (bytes, padded to whole tiles and words) packed once
/// for a whole batch ([`GemmInt8::a_once`]): ResNet-50's largest filters.
pub const I8_A_ONCE_MAX: i64 = 4 << 20;

/// The vector width (bits) the schedule is chosen for.
const I8_VECTOR_BITS: u32 = 512;

/// An integer matrix product nest, with its two byte operands.
pub(super) struct GemmInt8<'a> {
    nest: &'a Nest,
    /// The byte operand free of `j`: `A(i, k)` (`uint8` or `int8`).
    a: PrimExpr,
    /// The byte operand free of `i`: `B(k, j)`.
    b: PrimExpr,
    /// Whether `B` is the unsigned operand of `T.dpbusd` (its vector
    /// operand is then the first): a `s8 × u8` product needs no correction.
    unsigned_b: bool,
    /// Which loop runs on the thread pool when the product is large.
    pub(super) parallel: Int8Parallel,
    /// Whether all of `A` is packed once, before the batch loop (it reads
    /// no batch variable: a convolution's filters), with its row sums.
    pub(super) a_once: bool,
    /// Whether the product is an implicit GEMM (`conv_int8.rs`): `A`'s
    /// `k` is decoded into several axes, so its pack and sums take each
    /// `k` once for all rows.
    pub(super) implicit: bool,
}

/// Which loop of the packed int8 product runs in parallel when there is
/// enough work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Int8Parallel {
    /// The row chunks of each product.
    Chunks,
    /// The batch, fused into one loop, each iteration packing its own B
    /// panels (a convolution's output rows).
    Batch,
}

impl Nest {
    /// The nest as an int8 GEMM: one reduce variable, at least two spatial
    /// ones (`.., i, j`), an int32 update `C[..] + i32(x) · i32(y)` where
    /// `x` and `y` are bytes, one free of `j` and the other of `i`,
    /// neither reading `C`, and an init; on a 512-bit target.
    pub(super) fn gemm_int8(&self) -> Option<GemmInt8<'_>> {
        self.gemm_int8_oriented(false)
    }

    /// [`Nest::gemm_int8`]; when both operands have the same sign, `B` is
    /// the unsigned operand of `T.dpbusd` if `prefer_unsigned_b` (the sign
    /// correction is then `A`'s row sums), else `A` is (`B`'s column sums).
    pub(super) fn gemm_int8_oriented(&self, prefer_unsigned_b: bool) -> Option<GemmInt8<'_>> {
        let n = self.spatial.len();
        if self.vector_bits < I8_VECTOR_BITS || self.reduce.len() != 1 || n < 2 {
            return None;
        }
        let (x, y) = self.byte_product()?;
        let (i, j) = (&self.spatial[n - 2], &self.spatial[n - 1]);
        let free = |e: &PrimExpr, v: &TirVar| !uses_var(e, v);
        let (a, b) = if free(&x, &j.var) && free(&y, &i.var) {
            (x, y)
        } else if free(&y, &j.var) && free(&x, &i.var) {
            (y, x)
        } else {
            return None;
        };
        // `vpdpbusd` multiplies unsigned bytes by signed ones: `u8 × s8`
        // and `s8 × u8` need no correction in the right orientation.
        let unsigned_b = match (a.dtype().is_uint(), b.dtype().is_uint()) {
            (true, false) => false,
            (false, true) => true,
            _ => prefer_unsigned_b,
        };
        Some(GemmInt8 {
            nest: self,
            a,
            b,
            unsigned_b,
            parallel: Int8Parallel::Chunks,
            a_once: false,
            implicit: false,
        })
    }

    /// The two byte factors `(x, y)` of an int32 reduction whose update is
    /// `C[..] + i32(x) · i32(y)` (`C` the output at the store's indices,
    /// read nowhere else) with an init. A factor read through a padding
    /// test, `select(inside, i32(x), 0)`, is the byte `select(inside, x,
    /// 0)`.
    pub(super) fn byte_product(&self) -> Option<(PrimExpr, PrimExpr)> {
        let dt = self.buffer.dtype();
        if dt != DataType::i32() {
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
        let PrimExprKind::Mul(x, y) = term.kind() else {
            return None;
        };
        if term.dtype() != dt || expr_reads(term, &self.buffer) {
            return None;
        }
        let byte = |e: &PrimExpr| match e.kind() {
            PrimExprKind::Cast(v) if e.dtype() == dt && is_byte(v.dtype()) => Some(v.clone()),
            PrimExprKind::Select(c, t, f) if e.dtype() == dt && f.as_int() == Some(0) => {
                match t.kind() {
                    PrimExprKind::Cast(v) if is_byte(v.dtype()) => Some(PrimExpr::select(
                        c.clone(),
                        v.clone(),
                        PrimExpr::int_of(v.dtype(), 0),
                    )),
                    _ => None,
                }
            }
            _ => None,
        };
        Some((byte(x)?, byte(y)?))
    }
}

/// The offset that makes a byte of `dtype` unsigned (`unsigned`: +128 for
/// `int8`) or signed (-128 for `uint8`); 0 when it already is.
fn offset(dtype: DataType, unsigned: bool) -> i64 {
    match (unsigned, dtype.is_uint()) {
        (true, false) => 128,
        (false, true) => -128,
        _ => 0,
    }
}

/// `int8` or `uint8`, one lane.
fn is_byte(d: DataType) -> bool {
    d.is_integer() && !d.is_bool() && d.bits() == 8 && d.lanes() == 1
}

impl GemmInt8<'_> {
    /// What `A` is offset by in its pack: to be unsigned (+128 for an
    /// `int8` A when it is the unsigned operand), or signed (-128 for a
    /// `uint8` A when `B` is the unsigned one); else 0.
    fn a_off(&self) -> i64 {
        offset(self.a.dtype(), !self.unsigned_b)
    }

    /// What `B` is offset by in its pack ([`GemmInt8::a_off`]'s rule).
    fn b_off(&self) -> i64 {
        offset(self.b.dtype(), self.unsigned_b)
    }

    fn axes(&self) -> (&super::nest::Axis, &super::nest::Axis, &super::nest::Axis) {
        let n = self.nest.spatial.len();
        let s = &self.nest.spatial;
        (&s[n - 2], &s[n - 1], &self.nest.reduce[0])
    }

    /// The schedule: packed, in parallel ([`GemmInt8::parallel`]) when
    /// the product is large enough (both versions when that is known only
    /// at run time).
    pub(super) fn schedule(&self) -> Stmt {
        let nest = self.nest;
        let (i, j, k) = self.axes();
        let idt = nest.index_dtype();
        let mut work =
            i.extent.clone().cast(idt) * j.extent.clone().cast(idt) * k.extent.clone().cast(idt);
        if self.parallel == Int8Parallel::Batch {
            let n = nest.spatial.len();
            work = work * fused_extent(&nest.spatial[..n - 2], idt);
        }
        // A symbolic extent is 0 (no work at all, which a parallel loop
        // does as well) or at least 1: when the static extents' product
        // is enough, the parallel version is the only one (a convolution
        // over a symbolic batch of images compiles once, not twice).
        let n = nest.spatial.len();
        let counted = match self.parallel {
            Int8Parallel::Batch => &nest.spatial[..],
            Int8Parallel::Chunks => &nest.spatial[n - 2..],
        };
        let static_work = counted.iter().chain(&nest.reduce).try_fold(1i64, |acc, a| {
            acc.checked_mul(a.extent.as_int().unwrap_or(1))
        });
        let parallel = match static_work {
            Some(w) if w >= PARALLEL_MIN_WORK => Ok(true),
            _ => choice(work.ge(PrimExpr::int_of(idt, PARALLEL_MIN_WORK))),
        };
        match parallel {
            Ok(p) => self.packed(p),
            Err(cond) => {
                // Every loop binds its own variable: the serial version
                // runs over new batch loops.
                let serial_nest = nest.with_new_loops();
                let mut serial = serial_nest
                    .gemm_int8_oriented(self.unsigned_b)
                    .expect("the same nest is an int8 GEMM");
                serial.parallel = self.parallel;
                serial.a_once = self.a_once;
                serial.implicit = self.implicit;
                Stmt::IfThenElse {
                    cond,
                    then_case: Box::new(self.packed(true)),
                    else_case: Some(Box::new(serial.packed(false))),
                }
            }
        }
    }

    /// Whether all of `A` may be packed once for the whole batch: it reads
    /// no batch variable, and its pack (`M` and `K` known) is at most
    /// [`I8_A_ONCE_MAX`] bytes.
    pub(super) fn a_packs_once(&self) -> bool {
        let n = self.nest.spatial.len();
        let free = self.nest.spatial[..n - 2]
            .iter()
            .all(|ax| !uses_var(&self.a, &ax.var));
        let (i, _, k) = self.axes();
        let size = match (i.extent.as_int(), k.extent.as_int()) {
            (Some(m), Some(k)) => (m + I8_MR - 1) / I8_MR * I8_MR * ((k + 3) / 4 * 4),
            _ => return false,
        };
        free && size <= I8_A_ONCE_MAX
    }

    /// The packed schedule (see the module docs).
    fn packed(&self, parallel: bool) -> Stmt {
        let nest = self.nest;
        let n = nest.spatial.len();
        let batch = new_loops(&nest.spatial[..n - 2]);
        let (i, j, k) = self.axes();
        let lp = Loops {
            dtype: nest.index_dtype(),
            an: Analyzer::new(),
            nr: I8_NR,
            mr: I8_MR,
        };
        let m = lp.simplify(i.extent.clone().cast(lp.dtype));
        let nn = lp.simplify(j.extent.clone().cast(lp.dtype));
        let kk = lp.simplify(k.extent.clone().cast(lp.dtype));
        // The pack's words: all of `k` when it is known and fits.
        let depth = kk.as_int().map_or(I8_KC, |v| v.clamp(1, I8_KC));
        let words = (depth + 3) / 4;
        let panel = nn
            .as_int()
            .map_or(I8_NC, |v| (v.max(1) + I8_NR - 1) / I8_NR * I8_NR)
            .min(I8_NC);
        let i32t = DataType::i32();
        let (a_pack, a_sum) = if self.a_once {
            (
                Buffer::new(
                    "A_packed",
                    vec![lp.ceil_div(&m, I8_MR), lp.ceil_div(&kk, 4), lp.int(I8_MR)],
                    i32t,
                ),
                Buffer::new("A_sums", vec![lp.round_up(&m, I8_MR)], i32t),
            )
        } else {
            (
                Buffer::new(
                    "A_pack",
                    vec![lp.int(I8_MC / I8_MR), lp.int(words), lp.int(I8_MR)],
                    i32t,
                ),
                Buffer::new("A_sum", vec![lp.int(I8_MC)], i32t),
            )
        };
        let bufs = Packs {
            b_pack: Buffer::new(
                "B_pack",
                vec![lp.int(panel / I8_NR), lp.int(words), lp.int(I8_NR)],
                i32t,
            ),
            b_sum: Buffer::new("B_sum", vec![lp.int(panel)], i32t),
            a_pack,
            a_sum,
            a_once: self.a_once,
        };
        let (chunk_kind, batch_parallel) = match (parallel, self.parallel) {
            (false, _) => (ForKind::Serial, false),
            (true, Int8Parallel::Chunks) => (ForKind::Parallel, false),
            (true, Int8Parallel::Batch) => (ForKind::Serial, true),
        };
        let chunks = if chunk_kind == ForKind::Parallel {
            lp.round_up(&lp.ceil_div(&m, I8_MC).max(lp.int(I8_MIN_CHUNKS)), 2)
        } else {
            lp.ceil_div(&m, I8_MC).max(lp.int(1))
        };
        let row_tiles = lp.ceil_div(&m, I8_MR);
        let k_blocks = lp.simplify(lp.ceil_div(&kk, I8_KC).max(lp.int(1)));
        // The batch axes: serial loops around everything, or one fused
        // parallel loop whose iterations each own their B panel.
        let fused_batch = TirVar::with_dtype("b", lp.dtype);
        let base = if batch_parallel {
            unfuse(&batch, &PrimExpr::var(&fused_batch), lp.dtype)
        } else {
            identity(&batch)
        };
        let body = lp.bind("chunks", chunks, |chunks| {
            lp.count("jc_o", lp.ceil_div(&nn, I8_NC), ForKind::Serial, |jco| {
                lp.bind("jc", jco * lp.int(I8_NC), |jc| {
                    let nc = lp.int(I8_NC).min(nn.clone() - jc.clone());
                    lp.bind("nc", nc, |nc| {
                        lp.count("kc_o", k_blocks.clone(), ForKind::Serial, |kco| {
                            let first = choice(kco.clone().eq_(lp.int(0)));
                            let last =
                                choice(kco.clone().eq_(lp.simplify(k_blocks.clone() - lp.int(1))));
                            lp.bind("kc", kco * lp.int(I8_KC), |kc| {
                                let kl = lp.int(I8_KC).min(kk.clone() - kc.clone());
                                lp.bind("kl", kl, |kl| {
                                    let sl = Slice {
                                        jc,
                                        nc,
                                        kc,
                                        kl,
                                        first,
                                        last,
                                    };
                                    let rows = Rows {
                                        m: m.clone(),
                                        tiles: row_tiles.clone(),
                                        chunks: chunks.clone(),
                                    };
                                    self.slice(&lp, &sl, &rows, &bufs, &base, chunk_kind)
                                })
                            })
                        })
                    })
                })
            })
        });
        let mut owned = vec![bufs.b_pack.clone()];
        if self.a_off() != 0 {
            owned.push(bufs.b_sum.clone());
        }
        let looped = if batch_parallel {
            for_(
                &fused_batch,
                lp.int(0),
                fused_extent(&batch, lp.dtype),
                ForKind::Parallel,
                scope("B_pack", owned, body),
            )
        } else {
            scope("B_pack", owned, super::util::nest(&batch, body, None))
        };
        if !self.a_once {
            return looped;
        }
        // All of A, packed (and summed) once with no batch variable bound:
        // one slice over the whole depth, its tiles in parallel.
        let zero = lp.int(0);
        let whole = Slice {
            jc: zero.clone(),
            nc: zero.clone(),
            kc: zero.clone(),
            kl: kk.clone(),
            first: Ok(true),
            last: Ok(true),
        };
        let kind = if parallel {
            ForKind::Parallel
        } else {
            ForKind::Serial
        };
        let none = HashMap::new();
        let mut stmts = vec![self.pack(&lp, Side::A, &bufs.a_pack, &none, &zero, &m, &whole, kind)];
        let mut owned = vec![bufs.a_pack.clone()];
        if self.b_off() != 0 {
            stmts.push(self.sums(&lp, Side::A, &bufs.a_sum, &none, &zero, &m, &whole));
            owned.push(bufs.a_sum.clone());
        }
        stmts.push(looped);
        scope("A_packed", owned, let_seq(stmts))
    }

    /// One slice of `k` of one B panel: pack the panel (and its column
    /// sums), then the row chunks (in `kind` loops), each packing its rows
    /// (unless all of A is packed already) and running its tiles.
    fn slice(
        &self,
        lp: &Loops,
        sl: &Slice,
        rows: &Rows,
        bufs: &Packs,
        base: &HashMap<TirVar, PrimExpr>,
        kind: ForKind,
    ) -> Stmt {
        let mut stages = vec![self.pack(lp, Side::B, &bufs.b_pack, base, &sl.jc, &sl.nc, sl, kind)];
        if self.a_off() != 0 {
            stages.push(self.sums(lp, Side::B, &bufs.b_sum, base, &sl.jc, &sl.nc, sl));
        }
        let tile_start = |c: PrimExpr| {
            lp.simplify((c * rows.tiles.clone()).floordiv(rows.chunks.clone()) * lp.int(I8_MR))
        };
        let chunk_loop = lp.count("ic_o", rows.chunks.clone(), kind, |ico| {
            let end = tile_start(ico.clone() + lp.int(1)).min(rows.m.clone());
            lp.bind("ic", tile_start(ico), |ic| {
                let mc = end - ic.clone();
                lp.bind("mc", mc, |mc| {
                    let tiles = lp.count("jt", lp.ceil_div(&sl.nc, I8_NR), ForKind::Serial, |jt| {
                        lp.bind("j0", sl.jc.clone() + jt.clone() * lp.int(I8_NR), |j0| {
                            lp.count("it", lp.ceil_div(&mc, I8_MR), ForKind::Serial, |it| {
                                lp.bind("i0", ic.clone() + it.clone() * lp.int(I8_MR), |i0| {
                                    // Where the tile's rows are in the A
                                    // pack and its sums: the chunk's own,
                                    // or all of A's.
                                    let (a_tile, a_row) = if bufs.a_once {
                                        let t = lp.simplify(i0.clone().floordiv(lp.int(I8_MR)));
                                        (t, i0.clone())
                                    } else {
                                        (it.clone(), lp.simplify(it.clone() * lp.int(I8_MR)))
                                    };
                                    let tile = Tile {
                                        jt,
                                        i0,
                                        j0,
                                        a_tile,
                                        a_row,
                                    };
                                    self.micro_kernel(lp, &tile, bufs, base, sl)
                                })
                            })
                        })
                    });
                    if bufs.a_once {
                        return tiles;
                    }
                    let ser = ForKind::Serial;
                    let mut stmts =
                        vec![self.pack(lp, Side::A, &bufs.a_pack, base, &ic, &mc, sl, ser)];
                    let mut owned = vec![bufs.a_pack.clone()];
                    if self.b_off() != 0 {
                        stmts.push(self.sums(lp, Side::A, &bufs.a_sum, base, &ic, &mc, sl));
                        owned.push(bufs.a_sum.clone());
                    }
                    stmts.push(tiles);
                    scope("A_pack", owned, let_seq(stmts))
                })
            })
        });
        stages.push(chunk_loop);
        let_seq(stages)
    }

    /// The operand of `side` at row `row` (`i` for A, `j` for B) and depth
    /// `k`, as the int32 value of the byte the pack holds: `A' = A +
    /// a_off` or `B' = B + b_off` (0 to 255 for the unsigned operand of
    /// `T.dpbusd`, -128 to 127 for the signed one).
    fn operand(
        &self,
        side: Side,
        base: &HashMap<TirVar, PrimExpr>,
        row: PrimExpr,
        k: PrimExpr,
    ) -> PrimExpr {
        let (i, j, kx) = self.axes();
        let (axis, factor, offset) = match side {
            Side::A => (i, &self.a, self.a_off()),
            Side::B => (j, &self.b, self.b_off()),
        };
        let mut map = base.clone();
        map.insert(axis.var.clone(), row.cast(axis.var.dtype()));
        map.insert(kx.var.clone(), k.cast(kx.var.dtype()));
        let v = Analyzer::new()
            .simplify(&factor.substitute_map(&map))
            .cast(DataType::i32());
        if offset == 0 {
            v
        } else {
            v + PrimExpr::int_of(DataType::i32(), offset)
        }
    }

    /// The word of four bytes of `side` at row `row` and depth
    /// `kc + 4q .. kc + 4q + 4`, the first in the lowest byte; with
    /// `guard`, the bytes at or past the slice's depth `kl` are zero (their
    /// loads clamped to the last `k`, so they stay in bounds).
    #[allow(clippy::too_many_arguments)]
    fn word(
        &self,
        lp: &Loops,
        side: Side,
        base: &HashMap<TirVar, PrimExpr>,
        row: &PrimExpr,
        q: &PrimExpr,
        sl: &Slice,
        guard: bool,
    ) -> PrimExpr {
        let i32t = DataType::i32();
        // The unsigned operand's bytes are 0 to 255 already.
        let unsigned = matches!(side, Side::A) != self.unsigned_b;
        let mut word: Option<PrimExpr> = None;
        for t in 0..4i64 {
            let depth = lp.simplify(q.clone() * lp.int(4) + lp.int(t));
            let at = if guard {
                lp.simplify(
                    (sl.kc.clone() + depth.clone()).min(sl.kc.clone() + sl.kl.clone() - lp.int(1)),
                )
            } else {
                lp.simplify(sl.kc.clone() + depth.clone())
            };
            let v = self.operand(side, base, row.clone(), at);
            // The byte's bits.
            let bits = if unsigned {
                v
            } else {
                PrimExpr::call(i32t, "bitwise_and", vec![v, PrimExpr::int_of(i32t, 255)])
            };
            let bits = if guard {
                PrimExpr::select(depth.lt(sl.kl.clone()), bits, PrimExpr::int_of(i32t, 0))
            } else {
                bits
            };
            let placed = if t == 0 {
                bits
            } else {
                bits * PrimExpr::int_of(i32t, 1 << (8 * t))
            };
            word = Some(match word {
                None => placed,
                Some(w) => w + placed,
            });
        }
        word.expect("four bytes")
    }

    /// Fills `pack` (`[tiles, words, R]`, `R` = [`I8_MR`] or [`I8_NR`])
    /// with the words of `side` at rows `start .. start + len` and the
    /// slice's `k`; rows past `len` and bytes past `kl` are zero. The tiles
    /// run in `kind` loops (the B panel is shared by the row chunks: packed
    /// in parallel when they run in parallel).
    #[allow(clippy::too_many_arguments)]
    fn pack(
        &self,
        lp: &Loops,
        side: Side,
        pack: &Buffer,
        base: &HashMap<TirVar, PrimExpr>,
        start: &PrimExpr,
        len: &PrimExpr,
        sl: &Slice,
        kind: ForKind,
    ) -> Stmt {
        let width = match side {
            Side::A => I8_MR,
            Side::B => I8_NR,
        };
        let i32t = DataType::i32();
        // B is read along its columns in vectors (rows innermost); A along
        // `k` (the words of one row innermost), except an A whose `k` is
        // decoded into several axes (a convolution's filters): its rows
        // innermost share one decoding of each word's `k`.
        let rows_inner = matches!(side, Side::B) || self.implicit;
        let full_words = lp.simplify(sl.kl.clone().floordiv(lp.int(4)));
        let tail = choice(sl.kl.clone().floormod(lp.int(4)).gt(lp.int(0)));
        let fill = |t: PrimExpr, r0: PrimExpr, rn: PrimExpr, zero: bool| {
            let store = |r: PrimExpr, q: PrimExpr, guard: bool| {
                let value = if zero {
                    PrimExpr::int_of(i32t, 0)
                } else {
                    let row = lp.simplify(start.clone() + t.clone() * lp.int(width) + r.clone());
                    self.word(lp, side, base, &row, &q, sl, guard)
                };
                Stmt::BufferStore {
                    buffer: pack.clone(),
                    value,
                    indices: vec![t.clone(), q, r],
                }
            };
            // The words wholly inside the slice, then the partial last one.
            let over_words = |guard: bool, body: &dyn Fn(PrimExpr) -> Stmt| {
                if guard {
                    branch(&tail, || body(full_words.clone()), || seq(vec![]))
                } else {
                    lp.range("q", lp.int(0), full_words.clone(), ForKind::Serial, body)
                }
            };
            let rows = |q: PrimExpr, guard: bool| {
                let kind = match side {
                    Side::B => ForKind::Vectorized,
                    Side::A => ForKind::Serial,
                };
                lp.range("r", r0.clone(), rn.clone(), kind, |r| store(r, q, guard))
            };
            let mut parts = vec![];
            for guard in [false, true] {
                if rows_inner {
                    parts.push(over_words(guard, &|q| rows(q, guard)));
                } else {
                    parts.push(lp.range("r", r0.clone(), rn.clone(), ForKind::Serial, |r| {
                        over_words(guard, &|q| store(r.clone(), q, guard))
                    }));
                }
            }
            seq(parts.into_iter().filter(|s| !is_empty(s)).collect())
        };
        lp.bind("full", len.clone().floordiv(lp.int(width)), |full| {
            let rest = len.clone() - full.clone() * lp.int(width);
            lp.bind("rest", rest, |rest| {
                let whole = lp.range("t", lp.int(0), full.clone(), kind, |t| {
                    fill(t, lp.int(0), lp.int(width), false)
                });
                // The last tile: its rows, then zeros; every word of it
                // (the packs' depth is whole words).
                let edge = || {
                    let zeros = lp.simplify(lp.int(width) - rest.clone());
                    let words = lp.ceil_div(&sl.kl, 4);
                    let zero_rows = lp.range("r", rest.clone(), zeros, ForKind::Serial, |r| {
                        lp.range("q", lp.int(0), words, ForKind::Serial, |q| {
                            Stmt::BufferStore {
                                buffer: pack.clone(),
                                value: PrimExpr::int_of(i32t, 0),
                                indices: vec![full.clone(), q, r],
                            }
                        })
                    });
                    seq(vec![
                        fill(full.clone(), lp.int(0), rest.clone(), false),
                        zero_rows,
                    ])
                };
                then_if(whole, &choice(rest.clone().gt(lp.int(0))), edge)
            })
        })
    }

    /// `sums[r] = Σ_k X'(start + r, kc + k)` over the slice for the rows
    /// `r < len` of `side` (`B`'s columns are summed in vectors, `k`
    /// outside).
    #[allow(clippy::too_many_arguments)]
    fn sums(
        &self,
        lp: &Loops,
        side: Side,
        sums: &Buffer,
        base: &HashMap<TirVar, PrimExpr>,
        start: &PrimExpr,
        len: &PrimExpr,
        sl: &Slice,
    ) -> Stmt {
        let i32t = DataType::i32();
        let at = |r: &PrimExpr| lp.simplify(start.clone() + r.clone());
        match side {
            Side::B => {
                let init = lp.range("r", lp.int(0), len.clone(), ForKind::Vectorized, |r| {
                    Stmt::BufferStore {
                        buffer: sums.clone(),
                        value: PrimExpr::int_of(i32t, 0),
                        indices: vec![r],
                    }
                });
                let add = lp.range("q", lp.int(0), sl.kl.clone(), ForKind::Serial, |q| {
                    lp.range("r", lp.int(0), len.clone(), ForKind::Vectorized, |r| {
                        let k = lp.simplify(sl.kc.clone() + q);
                        Stmt::BufferStore {
                            buffer: sums.clone(),
                            value: PrimExpr::load(sums, vec![r.clone()])
                                + self.operand(side, base, at(&r), k),
                            indices: vec![r],
                        }
                    })
                });
                seq(vec![init, add])
            }
            // A decoded from several axes: each `k` once for all rows.
            Side::A if self.implicit => {
                let init = lp.range("r", lp.int(0), len.clone(), ForKind::Serial, |r| {
                    Stmt::BufferStore {
                        buffer: sums.clone(),
                        value: PrimExpr::int_of(i32t, 0),
                        indices: vec![r],
                    }
                });
                let add = lp.range("q", lp.int(0), sl.kl.clone(), ForKind::Serial, |q| {
                    lp.range("r", lp.int(0), len.clone(), ForKind::Serial, |r| {
                        let k = lp.simplify(sl.kc.clone() + q);
                        Stmt::BufferStore {
                            buffer: sums.clone(),
                            value: PrimExpr::load(sums, vec![r.clone()])
                                + self.operand(side, base, at(&r), k),
                            indices: vec![r],
                        }
                    })
                });
                seq(vec![init, add])
            }
            Side::A => lp.range("r", lp.int(0), len.clone(), ForKind::Serial, |r| {
                let init = Stmt::BufferStore {
                    buffer: sums.clone(),
                    value: PrimExpr::int_of(i32t, 0),
                    indices: vec![r.clone()],
                };
                let add = lp.range("q", lp.int(0), sl.kl.clone(), ForKind::Serial, |q| {
                    let k = lp.simplify(sl.kc.clone() + q);
                    Stmt::BufferStore {
                        buffer: sums.clone(),
                        value: PrimExpr::load(sums, vec![r.clone()])
                            + self.operand(side, base, at(&r), k),
                        indices: vec![r.clone()],
                    }
                });
                seq(vec![init, add])
            }),
        }
    }

    /// The register tile: unrolled rows around two 16-lane vectors.
    fn tile(&self, lp: &Loops, body: impl FnOnce(PrimExpr, PrimExpr) -> Stmt) -> Stmt {
        lp.range("r", lp.int(0), lp.int(I8_MR), ForKind::Unrolled, |r| {
            lp.tile_columns(|c| body(r, c))
        })
    }

    /// One register tile: `T.dpbusd` over the slice's words, then the
    /// write-back with the sign corrections.
    fn micro_kernel(
        &self,
        lp: &Loops,
        tile: &Tile,
        bufs: &Packs,
        base: &HashMap<TirVar, PrimExpr>,
        sl: &Slice,
    ) -> Stmt {
        let i32t = DataType::i32();
        let (i, j, _) = self.axes();
        let m = i.extent.clone().cast(lp.dtype);
        let nn = j.extent.clone().cast(lp.dtype);
        let acc = Buffer::new("acc", vec![lp.int(I8_MR), lp.int(I8_NR)], i32t);
        let init = self.tile(lp, |r, c| Stmt::BufferStore {
            buffer: acc.clone(),
            value: PrimExpr::int_of(i32t, 0),
            indices: vec![r, c],
        });
        let words = lp.ceil_div(&sl.kl, 4);
        let update = lp.range("q", lp.int(0), words, ForKind::Serial, |q| {
            self.tile(lp, |r, c| {
                let at = PrimExpr::load(&acc, vec![r.clone(), c.clone()]);
                let word = match bufs.a_once {
                    true => add(&lp.simplify(sl.kc.clone().floordiv(lp.int(4))), &q),
                    false => q.clone(),
                };
                let a = PrimExpr::load(&bufs.a_pack, vec![tile.a_tile.clone(), word, r.clone()]);
                let b = PrimExpr::load(&bufs.b_pack, vec![tile.jt.clone(), q, c.clone()]);
                // The first operand is the unsigned one.
                let (u, v) = if self.unsigned_b { (b, a) } else { (a, b) };
                Stmt::BufferStore {
                    buffer: acc.clone(),
                    value: PrimExpr::call(i32t, "dpbusd", vec![at, u, v]),
                    indices: vec![r, c],
                }
            })
        });
        let whole = choice(
            (tile.i0.clone() + lp.int(I8_MR))
                .le(m.clone())
                .and((tile.j0.clone() + lp.int(I8_NR)).le(nn.clone())),
        );
        let whole_tile = |first: bool, last: bool| {
            self.tile(lp, |r, c| {
                let sum = PrimExpr::load(&acc, vec![r.clone(), c.clone()]);
                self.write_back(lp, bufs, base, tile, sl, r, c, sum, &Ok(first), &Ok(last))
            })
        };
        let whole_tile = || per_slice(&sl.first, &sl.last, whole_tile);
        let edge_tile = || {
            let edge = Buffer::new("acc_edge", vec![lp.int(I8_MR), lp.int(I8_NR)], i32t);
            let copy = self.tile(lp, |r, c| Stmt::BufferStore {
                buffer: edge.clone(),
                value: PrimExpr::load(&acc, vec![r.clone(), c.clone()]),
                indices: vec![r, c],
            });
            let rows = lp.simplify(lp.int(I8_MR).min(m.clone() - tile.i0.clone()));
            let cols = lp.simplify(lp.int(I8_NR).min(nn.clone() - tile.j0.clone()));
            let store = lp.range("r", lp.int(0), rows, ForKind::Serial, |r| {
                lp.range("c", lp.int(0), cols, ForKind::Serial, |c| {
                    let sum = PrimExpr::load(&edge, vec![r.clone(), c.clone()]);
                    self.write_back(lp, bufs, base, tile, sl, r, c, sum, &sl.first, &sl.last)
                })
            });
            scope("acc_edge", vec![edge], seq(vec![copy, store]))
        };
        let write = branch(&whole, whole_tile, edge_tile);
        scope("acc", vec![acc.clone()], seq(vec![init, update, write]))
    }

    /// The store of the tile's element `(r, c)` whose `Σ A'·B'` over the
    /// slice is `sum`: corrected to `Σ A·B` (module docs), added to the
    /// init on the first slice, else to the partial result in `C`; through
    /// the epilogue on the last slice.
    #[allow(clippy::too_many_arguments)]
    fn write_back(
        &self,
        lp: &Loops,
        bufs: &Packs,
        base: &HashMap<TirVar, PrimExpr>,
        tile: &Tile,
        sl: &Slice,
        r: PrimExpr,
        c: PrimExpr,
        sum: PrimExpr,
        first: &Choice,
        last: &Choice,
    ) -> Stmt {
        let i32t = DataType::i32();
        let int = |v: i64| PrimExpr::int_of(i32t, v);
        let (a_off, b_off) = (self.a_off(), self.b_off());
        // Σ A·B = Σ A'·B' - b_off·Σ A' - a_off·Σ B' + a_off·b_off·K.
        let mut sum = sum;
        if b_off != 0 {
            // The row's sum over this slice, or (all of A packed once)
            // over all of `k`, counted on the first slice only.
            let row = lp.simplify(tile.a_row.clone() + r.clone());
            let term = PrimExpr::load(&bufs.a_sum, vec![row]) * int(b_off);
            if !bufs.a_once {
                sum = sum - term;
            } else {
                match first {
                    Ok(true) => sum = sum - term,
                    Ok(false) => {}
                    Err(cond) => sum = sum - PrimExpr::select(cond.clone(), term, int(0)),
                }
            }
        }
        if a_off != 0 {
            let col = lp.simplify(tile.jt.clone() * lp.int(I8_NR) + c.clone());
            sum = sum - PrimExpr::load(&bufs.b_sum, vec![col]) * int(a_off);
        }
        if a_off != 0 && b_off != 0 {
            sum = sum + sl.kl.clone().cast(i32t) * int(a_off * b_off);
        }
        let (i, j, _) = self.axes();
        let at = (&tile.i0, &tile.j0, r, c);
        tile_store(self.nest, (i, j), base, at, sum, first, last)
    }
}

/// Whether `s` does nothing (an empty sequence).
fn is_empty(s: &Stmt) -> bool {
    matches!(s, Stmt::Seq(v) if v.is_empty())
}

/// The buffers of one packed product.
struct Packs {
    /// `[NC / NR, words, NR]`: the B panel's words.
    b_pack: Buffer,
    /// `[NC]`: the B panel's column sums (`int8` A only).
    b_sum: Buffer,
    /// `[MC / MR, words, MR]`: one row chunk's words.
    a_pack: Buffer,
    /// `[MC]`: the chunk's row sums (when `B` is offset); with `a_once`,
    /// `A_sums`, all of A's rows over all of `k`.
    a_sum: Buffer,
    /// Whether `a_pack` is all of A (`[⌈M / MR⌉, ⌈K / 4⌉, MR]`, packed
    /// once), read at the slice's words.
    a_once: bool,
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

/// The rows of `C` (`m`) as `tiles` register tiles in `chunks` runs.
struct Rows {
    m: PrimExpr,
    tiles: PrimExpr,
    chunks: PrimExpr,
}

/// Which operand a pack holds.
#[derive(Clone, Copy)]
enum Side {
    A,
    B,
}

/// One register tile: its indices in the packs and its first output.
struct Tile {
    jt: PrimExpr,
    i0: PrimExpr,
    j0: PrimExpr,
    /// The tile's index in the A pack.
    a_tile: PrimExpr,
    /// The tile's first row in the A sums.
    a_row: PrimExpr,
}
