//! The tiled attention kernel of [`super::FlashAttention`], a PrimFunc
//! with its loops already scheduled (`tir.is_scheduled`).
//!
//! **Rows.** The query heads that share a key/value head (grouped-query
//! attention, `G = num_heads / num_kv_heads`) are attended together: for
//! batch `b` and key head `hk`, row `ρ` of the `seq_len · G` rows is query
//! position `ρ / G` of head `hk · G + ρ % G`, and every row reads the same
//! keys and values. A parallel iteration takes a block of [`ROWS`] rows,
//! which are the lanes of every vector in it; the block's rows past the
//! end read the last row again and are never stored. A query of at most
//! [`SHORT_ROWS`] rows in all (a decode step) takes them one at a time
//! instead, the head dim in the lanes (`decode.rs`), or, when a head dim
//! is not a whole number of vectors, as one block of [`SHORT_ROWS`].
//!
//! **Online softmax** (Milakov and Gimelshein; FlashAttention's tiling).
//! The keys are visited in tiles of [`KEYS`]; per row, a running maximum
//! `mx`, a running sum `l` of `exp(logit − mx)` and the output `O` under
//! that maximum are kept:
//!
//! ```text
//! Qt[d, r] = q[b, s(r), h(r), d] · scale                  once per block
//! for each key tile j0 (up to the block's last visible key):
//!   St[c, r] = Σ_d k[b, j0 + c, hk, d] · Qt[d, r]        KEYS vector accumulators
//!   St[c, r] += bias; + (0 or -inf) when key j0 + c is masked for row r
//!   m' = max(mx, max_c St[c, ·]);  α = exp(mx − m')
//!   St[c, r] = exp(St[c, r] − m');  l = l·α + Σ_c St[c, ·];  mx = m'
//!   Ot[e, r] = Ot[e, r]·α + Σ_c v[b, j0 + c, hk, e] · St[c, r]
//! out[b, s(r), h(r), e] = Ot[e, r] / l[r]                 0 when l is 0 (no keys)
//! ```
//!
//! `mx` starts at the lowest finite `float32`, not `-inf`, so a row whose
//! every logit is `-inf` (a bias that masks each key it sees) keeps it,
//! its exponentials `exp(-inf − mx)` are 0 and so is `l`: the row is
//! zeros, as the reference kernel and the legalization give.
//!
//! Nothing of size `seq_len × seq_len_kv` exists: a block holds its
//! queries, its output and one tile of probabilities. With a causal mask
//! the tiles stop at the block's last visible key, so a prefill computes
//! about half of the products, and only tiles that cross the diagonal or
//! the end of the keys are masked. Both products are register tiles of
//! the GEMM's shape: a vector of rows (`Qt`, `St`) times a broadcast of a
//! key or value element, [`KEYS`] or [`VALUE_CHUNK`] accumulators deep.
//!
//! Key indices past the end are clamped to the last key (the tile's tail
//! is masked), so every load is in bounds. Every stage computes in
//! `float32`; `float16` and `bfloat16` operands are widened on load and
//! the output is rounded once.

use super::decode;
use crate::ir::prim_expr::{PrimExpr, TirVar};
use crate::ir::AttrValue;
use crate::op::attention::CausalMask;
use crate::tir::te;
use crate::tir::{Buffer, ForKind, PrimFunc, PrimFuncParam, Stmt};
use crate::transform::annotate_tir_op_pattern::OP_PATTERN;
use crate::transform::apply_schedule::IS_SCHEDULED;
use relax_runtime::DataType;

/// Rows of a block: the lanes of one AVX-512 vector of `float32`.
pub const ROWS: i64 = 16;
/// Rows of a block when the query has at most this many rows in all.
pub const SHORT_ROWS: i64 = 8;
/// Keys of a tile: the score accumulators (one vector of rows each).
pub const KEYS: i64 = 8;
/// Value columns accumulated at once in the product with the values.
pub const VALUE_CHUNK: i64 = 8;

/// One kernel's sizes and options. A dim that is `None` is symbolic: the
/// PrimFunc binds a variable of its own from the operands' shapes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Config {
    /// The operands' and the result's dtype.
    pub dtype: DataType,
    /// The batch size.
    pub batch: Option<i64>,
    /// The query length.
    pub seq: Option<i64>,
    /// The key/value length.
    pub seq_kv: Option<i64>,
    /// Query heads.
    pub heads: i64,
    /// Key/value heads (a divisor of `heads`).
    pub kv_heads: i64,
    /// The query/key head dim.
    pub head_dim: i64,
    /// The value head dim.
    pub head_dim_v: i64,
    /// The bias's dims that are 1 (broadcast), when there is a bias.
    pub bias: Option<[bool; 4]>,
    /// The logits' scale, as `f64` bits (hashable).
    pub scale_bits: u64,
    /// The causal mask.
    pub causal: CausalMask,
}

impl Config {
    pub(super) fn scale(&self) -> f64 {
        f64::from_bits(self.scale_bits)
    }
}

fn dim(value: Option<i64>, name: &str) -> PrimExpr {
    match value {
        Some(n) => PrimExpr::int(n),
        None => PrimExpr::var(&TirVar::new(name)),
    }
}

pub(super) fn load(buffer: &Buffer, indices: Vec<PrimExpr>) -> PrimExpr {
    PrimExpr::load(buffer, indices)
}

/// `at` with `fill` along the bias's broadcast dims (`ones`): a bias
/// element's index (`fill` 0), or the bias's shape (`fill` 1).
pub(super) fn bias_dims(ones: [bool; 4], at: [PrimExpr; 4], fill: i64) -> Vec<PrimExpr> {
    (0..4)
        .map(|a| {
            if ones[a] {
                PrimExpr::int(fill)
            } else {
                at[a].clone()
            }
        })
        .collect()
}

pub(super) fn let_(var: &TirVar, value: PrimExpr, body: Stmt) -> Stmt {
    Stmt::LetStmt {
        var: var.clone(),
        value,
        body: Box::new(body),
    }
}

pub(super) fn allocate(buffers: Vec<Buffer>, body: Stmt) -> Stmt {
    buffers
        .into_iter()
        .rev()
        .fold(body, |body, buffer| Stmt::Allocate {
            buffer,
            body: Box::new(body),
        })
}

/// The operands, as the PrimFunc's parameters, and their symbolic dims.
pub(super) struct Operands {
    pub(super) batch: PrimExpr,
    pub(super) seq: PrimExpr,
    pub(super) seq_kv: PrimExpr,
    pub(super) q: Buffer,
    pub(super) k: Buffer,
    pub(super) v: Buffer,
    pub(super) bias: Option<Buffer>,
    pub(super) out: Buffer,
}

/// The kernel: `q, k, v[, bias], out` (module docs).
pub fn build(cfg: &Config) -> PrimFunc {
    let (batch, seq, seq_kv) = (
        dim(cfg.batch, "batch"),
        dim(cfg.seq, "seq_len"),
        dim(cfg.seq_kv, "seq_len_kv"),
    );
    let (n, nkv, hd, hdv) = (cfg.heads, cfg.kv_heads, cfg.head_dim, cfg.head_dim_v);
    let g = n / nkv;
    let q = Buffer::new(
        "q",
        vec![batch.clone(), seq.clone(), n.into(), hd.into()],
        cfg.dtype,
    );
    let k = Buffer::new(
        "k",
        vec![batch.clone(), seq_kv.clone(), nkv.into(), hd.into()],
        cfg.dtype,
    );
    let v = Buffer::new(
        "v",
        vec![batch.clone(), seq_kv.clone(), nkv.into(), hdv.into()],
        cfg.dtype,
    );
    let full = [batch.clone(), n.into(), seq.clone(), seq_kv.clone()];
    let bias = cfg
        .bias
        .map(|ones| Buffer::new("bias", bias_dims(ones, full, 1), cfg.dtype));
    let out = Buffer::new(
        "out",
        vec![batch.clone(), seq.clone(), n.into(), hdv.into()],
        cfg.dtype,
    );

    let ops = Operands {
        batch,
        seq,
        seq_kv,
        q,
        k,
        v,
        bias,
        out,
    };
    // A short query (a decode step, one position of a few grouped heads)
    // takes its rows one at a time, the head dim in the lanes
    // (`decode.rs`), or else a block of 8 rows: the same instructions as
    // 16, on vectors that Zen 4 runs two at a time.
    let rows_total = ops.seq.clone() * g;
    let short = || {
        if hd % decode::LANES == 0 && hdv % decode::LANES == 0 {
            decode::rows(cfg, &ops)
        } else {
            blocks(cfg, &ops, SHORT_ROWS)
        }
    };
    let body = match rows_total.as_int() {
        Some(r) if r <= SHORT_ROWS => short(),
        Some(_) => blocks(cfg, &ops, ROWS),
        None => Stmt::IfThenElse {
            cond: rows_total.le(SHORT_ROWS),
            then_case: Box::new(short()),
            else_case: Some(Box::new(blocks(cfg, &ops, ROWS))),
        },
    };
    let Operands {
        q, k, v, bias, out, ..
    } = ops;
    let mut params = vec![
        PrimFuncParam::Buffer(q),
        PrimFuncParam::Buffer(k),
        PrimFuncParam::Buffer(v),
    ];
    if let Some(bias) = bias {
        params.push(PrimFuncParam::Buffer(bias));
    }
    params.push(PrimFuncParam::Buffer(out));
    let mut f = PrimFunc::new(params, body);
    f.attrs = f
        .attrs
        .with(IS_SCHEDULED, AttrValue::Bool(true))
        .with(OP_PATTERN, crate::op::OpPatternKind::Opaque as i64);
    f
}

/// The parallel loop over blocks of `rows` rows (module docs).
fn blocks(cfg: &Config, ops: &Operands, rows: i64) -> Stmt {
    let f32 = DataType::f32();
    let i32 = DataType::i32();
    let (batch, seq, seq_kv) = (&ops.batch, &ops.seq, &ops.seq_kv);
    let (q, k, v, out) = (&ops.q, &ops.k, &ops.v, &ops.out);
    let bias = ops.bias.as_ref();
    let (nkv, hd, hdv) = (cfg.kv_heads, cfg.head_dim, cfg.head_dim_v);
    let g = cfg.heads / nkv;
    // Scratch of one block: the rows' queries (transposed, scaled), their
    // output (transposed), one tile of scores, and per row the running
    // maximum, the new maximum, the rescale factor, the sum, and the last
    // key it sees.
    let qt = Buffer::new("Qt", vec![hd.into(), rows.into()], f32);
    let ot = Buffer::new("Ot", vec![hdv.into(), rows.into()], f32);
    let st = Buffer::new("St", vec![KEYS.into(), rows.into()], f32);
    let row_buf = |name: &str, dt: DataType| Buffer::new(name, vec![rows.into()], dt);
    let (mx, m_new, alpha, l) = (
        row_buf("mx", f32),
        row_buf("m_new", f32),
        row_buf("alpha", f32),
        row_buf("l", f32),
    );
    let last_key = row_buf("last_key", i32);

    let rows_total = seq.clone() * g;
    let blocks = (rows_total.clone() + (rows - 1)).floordiv(rows);
    let fv = TirVar::new("f");
    let (b, hk, blk, rho0) = (
        TirVar::new("b"),
        TirVar::new("hk"),
        TirVar::new("blk"),
        TirVar::new("rho0"),
    );
    let (be, hke, rho0e) = (PrimExpr::var(&b), PrimExpr::var(&hk), PrimExpr::var(&rho0));
    // Row r of the block, clamped to the last row; its position and head.
    let row = |r: &PrimExpr| (rho0e.clone() + r.clone()).min(rows_total.clone() - 1);
    let pos = |rho: PrimExpr| if g == 1 { rho } else { rho.floordiv(g) };
    let head = |rho: PrimExpr| {
        if g == 1 {
            hke.clone()
        } else {
            hke.clone() * g + rho.floormod(g)
        }
    };
    let offset = cfg.causal.offset(seq, seq_kv);
    let causal = cfg.causal != CausalMask::None;

    let mut stmts = Vec::new();
    // The block's queries, scaled, one row per vector lane.
    {
        let (r, d) = (TirVar::new("r"), TirVar::new("d"));
        let rho = row(&PrimExpr::var(&r));
        let value = load(
            q,
            vec![be.clone(), pos(rho.clone()), head(rho), PrimExpr::var(&d)],
        )
        .cast(f32)
            * PrimExpr::float(f32, cfg.scale());
        let store = Stmt::store(&qt, vec![PrimExpr::var(&d), PrimExpr::var(&r)], value);
        stmts.push(Stmt::for_range(
            &r,
            rows,
            ForKind::Serial,
            Stmt::for_range(&d, hd, ForKind::Vectorized, store),
        ));
    }
    stmts.push(lanes(rows, |r| {
        Stmt::store(&mx, vec![r], PrimExpr::float(f32, f32::MIN as f64))
    }));
    stmts.push(lanes(rows, |r| {
        Stmt::store(&l, vec![r], PrimExpr::float(f32, 0.0))
    }));
    if causal {
        stmts.push(lanes(rows, |r| {
            let last = pos(row(&r)) + offset.clone();
            Stmt::store(&last_key, vec![r], last.cast(i32))
        }));
    }
    {
        let e = TirVar::new("e");
        stmts.push(Stmt::for_range(
            &e,
            hdv,
            ForKind::Serial,
            lanes(rows, |r| {
                Stmt::store(&ot, vec![PrimExpr::var(&e), r], PrimExpr::float(f32, 0.0))
            }),
        ));
    }

    // The keys the block visits: all, or up to its last row's last
    // visible key.
    let kv_end = if causal {
        let last_row = (rho0e.clone() + rows).min(rows_total.clone()) - 1;
        seq_kv.clone().min(pos(last_row) + offset.clone() + 1)
    } else {
        seq_kv.clone()
    };
    let tiles = (kv_end + (KEYS - 1)).floordiv(KEYS);
    let t = TirVar::new("t");
    let j0 = PrimExpr::var(&t) * KEYS;
    let key = |c: i64| (j0.clone() + c).min(seq_kv.clone() - 1);
    let st_at = |c: i64, r: &PrimExpr| load(&st, vec![PrimExpr::int(c), r.clone()]);

    let mut tile = Vec::new();
    // Scores: St[c, ·] = Σ_d k[key c, d] · Qt[d, ·].
    for c in 0..KEYS {
        tile.push(lanes(rows, |r| {
            Stmt::store(&st, vec![PrimExpr::int(c), r], PrimExpr::float(f32, 0.0))
        }));
    }
    {
        let d = TirVar::new("d");
        let de = PrimExpr::var(&d);
        let products = (0..KEYS)
            .map(|c| {
                lanes(rows, |r| {
                    let kd = load(k, vec![be.clone(), key(c), hke.clone(), de.clone()]).cast(f32);
                    let qd = load(&qt, vec![de.clone(), r.clone()]);
                    Stmt::store(
                        &st,
                        vec![PrimExpr::int(c), r.clone()],
                        st_at(c, &r) + kd * qd,
                    )
                })
            })
            .collect();
        tile.push(Stmt::for_range(
            &d,
            hd,
            ForKind::Serial,
            Stmt::Seq(products),
        ));
    }
    // Logits: the bias, then the mask where the tile needs one.
    let logits = |masked: bool| {
        let stores = (0..KEYS)
            .map(|c| {
                lanes(rows, |r| {
                    let mut x = st_at(c, &r);
                    if let (Some(bias), Some(ones)) = (&bias, cfg.bias) {
                        let rho = row(&r);
                        let at = [be.clone(), head(rho.clone()), pos(rho), key(c)];
                        x = x + load(bias, bias_dims(ones, at, 0)).cast(f32);
                    }
                    if masked {
                        let j = (j0.clone() + c).cast(i32);
                        let mut visible = j.clone().lt(seq_kv.clone().cast(i32));
                        if causal {
                            visible = visible.and(j.le(load(&last_key, vec![r.clone()])));
                        }
                        let mask = PrimExpr::select(
                            visible,
                            PrimExpr::float(f32, 0.0),
                            PrimExpr::float(f32, f64::NEG_INFINITY),
                        );
                        x = x + mask;
                    }
                    Stmt::store(&st, vec![PrimExpr::int(c), r], x)
                })
            })
            .collect::<Vec<_>>();
        Stmt::Seq(stores)
    };
    // A tile needs no mask when all its keys exist and the block's first
    // row (whose last visible key is the block's smallest) sees them all.
    let mut whole = (j0.clone() + KEYS).le(seq_kv.clone());
    if causal {
        whole = whole.and((j0.clone() + (KEYS - 1)).le(pos(rho0e.clone()) + offset.clone()));
    }
    tile.push(if bias.is_none() {
        // Without a bias, an unmasked tile's logits are its scores.
        Stmt::IfThenElse {
            cond: !whole,
            then_case: Box::new(logits(true)),
            else_case: None,
        }
    } else {
        Stmt::IfThenElse {
            cond: whole,
            then_case: Box::new(logits(false)),
            else_case: Some(Box::new(logits(true))),
        }
    });
    // The running maximum, the rescale factor, the probabilities and sum.
    tile.push(lanes(rows, |r| {
        let m = (0..KEYS).fold(load(&mx, vec![r.clone()]), |m, c| m.max(st_at(c, &r)));
        Stmt::store(&m_new, vec![r], m)
    }));
    tile.push(lanes(rows, |r| {
        let d = load(&mx, vec![r.clone()]) - load(&m_new, vec![r.clone()]);
        Stmt::store(&alpha, vec![r], PrimExpr::call(f32, "exp", vec![d]))
    }));
    for c in 0..KEYS {
        tile.push(lanes(rows, |r| {
            let x = st_at(c, &r) - load(&m_new, vec![r.clone()]);
            Stmt::store(
                &st,
                vec![PrimExpr::int(c), r],
                PrimExpr::call(f32, "exp", vec![x]),
            )
        }));
    }
    tile.push(lanes(rows, |r| {
        let old = load(&l, vec![r.clone()]) * load(&alpha, vec![r.clone()]);
        let sum = (0..KEYS).fold(old, |s, c| s + st_at(c, &r));
        Stmt::store(&l, vec![r], sum)
    }));
    tile.push(lanes(rows, |r| {
        Stmt::store(&mx, vec![r.clone()], load(&m_new, vec![r]))
    }));
    // The output: rescaled, plus the tile's probabilities times its values,
    // VALUE_CHUNK columns at a time.
    {
        let chunk = (1..=VALUE_CHUNK).rev().find(|w| hdv % w == 0).unwrap_or(1);
        let e0 = TirVar::new("e0");
        let col = |e: i64| PrimExpr::var(&e0) * chunk + e;
        let mut body = Vec::new();
        for e in 0..chunk {
            body.push(lanes(rows, |r| {
                let o = load(&ot, vec![col(e), r.clone()]) * load(&alpha, vec![r.clone()]);
                Stmt::store(&ot, vec![col(e), r], o)
            }));
        }
        for c in 0..KEYS {
            for e in 0..chunk {
                body.push(lanes(rows, |r| {
                    let ve = load(v, vec![be.clone(), key(c), hke.clone(), col(e)]).cast(f32);
                    let o = load(&ot, vec![col(e), r.clone()]) + ve * st_at(c, &r);
                    Stmt::store(&ot, vec![col(e), r], o)
                }));
            }
        }
        tile.push(Stmt::for_range(
            &e0,
            hdv / chunk,
            ForKind::Serial,
            Stmt::Seq(body),
        ));
    }
    stmts.push(Stmt::for_range(&t, tiles, ForKind::Serial, Stmt::Seq(tile)));

    // The block's rows that exist, normalized and rounded.
    {
        let (r, e) = (TirVar::new("r"), TirVar::new("e"));
        let re = PrimExpr::var(&r);
        let rho = rho0e.clone() + re.clone();
        let sum = load(&l, vec![re.clone()]);
        let value = PrimExpr::select(
            sum.clone().gt(PrimExpr::float(f32, 0.0)),
            te::div(load(&ot, vec![PrimExpr::var(&e), re.clone()]), sum),
            PrimExpr::float(f32, 0.0),
        );
        let at = vec![be.clone(), pos(rho.clone()), head(rho), PrimExpr::var(&e)];
        let store = Stmt::store(out, at, value.cast(cfg.dtype));
        let rows = PrimExpr::int(rows).min(rows_total.clone() - rho0e.clone());
        stmts.push(Stmt::for_range(
            &r,
            rows,
            ForKind::Serial,
            Stmt::for_range(&e, hdv, ForKind::Vectorized, store),
        ));
    }

    let scratch = vec![qt, ot, st, mx, m_new, alpha, l, last_key];
    let per_block = let_(
        &rho0,
        PrimExpr::var(&blk) * rows,
        allocate(scratch, Stmt::Seq(stmts)),
    );
    let fe = PrimExpr::var(&fv);
    let body = let_(
        &b,
        fe.clone().floordiv(blocks.clone() * nkv),
        let_(
            &hk,
            fe.clone().floordiv(blocks.clone()).floormod(nkv),
            let_(&blk, fe.floormod(blocks.clone()), per_block),
        ),
    );
    Stmt::for_range(&fv, batch.clone() * nkv * blocks, ForKind::Parallel, body)
}

/// A loop over a block's rows as the lanes of one vector.
fn lanes(rows: i64, body: impl FnOnce(PrimExpr) -> Stmt) -> Stmt {
    let r = TirVar::new("r");
    Stmt::for_range(&r, rows, ForKind::Vectorized, body(PrimExpr::var(&r)))
}
