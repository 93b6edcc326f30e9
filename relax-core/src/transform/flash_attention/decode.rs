//! The tiled kernel's path for a short query (a decode step: one position
//! of a few grouped heads, at most [`super::kernel::SHORT_ROWS`] rows):
//! one row at a time, the head dim in the lanes.
//!
//! A block of rows in the lanes (`kernel.rs`) reads each key element once
//! per block, as one broadcast multiply-add, whatever the number of rows
//! it holds; three rows in a block of eight pay for eight. Here each row
//! reads its keys and values as vectors along the head dim, so the work
//! follows the rows:
//!
//! ```text
//! qv[d] = q[b, s, h, d] · scale
//! for each key tile j0:
//!   part[c, ·] = Σ_d0 qv[d0·16 + ·] · k[b, j0 + c, hk, d0·16 + ·]    16 lanes per key
//!   part[c, 0] = the lanes summed, pairwise (8 + 8, 4 + 4, 2 + 2, 1 + 1)
//!   sc[c] = part[c, 0] + bias (+ -inf where masked)
//!   the online softmax on sc, as in the block path
//!   ov[·] = ov[·]·α + Σ_c sc[c] · v[b, j0 + c, hk, ·]                 the head dim in the lanes
//! out[b, s, h, ·] = ov / l
//! ```
//!
//! One parallel iteration per (batch, key head) takes its rows in turn,
//! so a row's keys are still in the cache for the next. The head dims
//! are multiples of [`LANES`] (the caller checks).

use super::kernel::{allocate, bias_dims, let_, load, Config, Operands, KEYS};
use crate::ir::prim_expr::{PrimExpr, TirVar};
use crate::op::attention::CausalMask;
use crate::tir::te;
use crate::tir::{Buffer, ForKind, Stmt};
use relax_runtime::DataType;

/// The lanes of the head dim's vectors (`float32`, AVX-512).
pub const LANES: i64 = 16;

/// `for var in range(extent)`, vectorized, around `body(var)`.
fn vector(name: &str, extent: i64, body: impl FnOnce(PrimExpr) -> Stmt) -> Stmt {
    let v = TirVar::new(name);
    Stmt::for_range(&v, extent, ForKind::Vectorized, body(PrimExpr::var(&v)))
}

/// The parallel loop over (batch, key head), each taking its rows in turn.
pub(super) fn rows(cfg: &Config, ops: &Operands) -> Stmt {
    let f32 = DataType::f32();
    let (batch, seq, seq_kv) = (&ops.batch, &ops.seq, &ops.seq_kv);
    let (nkv, hd, hdv) = (cfg.kv_heads, cfg.head_dim, cfg.head_dim_v);
    let g = cfg.heads / nkv;
    let (fv, b, hk, rho) = (
        TirVar::new("f"),
        TirVar::new("b"),
        TirVar::new("hk"),
        TirVar::new("rho"),
    );
    let (be, hke, rhoe) = (PrimExpr::var(&b), PrimExpr::var(&hk), PrimExpr::var(&rho));
    let (s, h) = if g == 1 {
        (rhoe.clone(), hke.clone())
    } else {
        (
            rhoe.clone().floordiv(g),
            hke.clone() * g + rhoe.clone().floormod(g),
        )
    };
    let offset = cfg.causal.offset(seq, seq_kv);
    let causal = cfg.causal != CausalMask::None;

    let qv = Buffer::new("qv", vec![hd.into()], f32);
    let ov = Buffer::new("ov", vec![hdv.into()], f32);
    let part = Buffer::new("part", vec![KEYS.into(), LANES.into()], f32);
    let sc = Buffer::new("sc", vec![KEYS.into()], f32);
    // The running maximum, the new maximum, the rescale factor, the sum.
    let stats = Buffer::new("stats", vec![4.into()], f32);
    let stat = |i: i64| load(&stats, vec![PrimExpr::int(i)]);
    let set = |i: i64, v: PrimExpr| Stmt::store(&stats, vec![PrimExpr::int(i)], v);
    let zero = || PrimExpr::float(f32, 0.0);

    let mut row = Vec::new();
    row.push(vector("d", hd, |d| {
        let x = load(&ops.q, vec![be.clone(), s.clone(), h.clone(), d.clone()]).cast(f32);
        Stmt::store(&qv, vec![d], x * PrimExpr::float(f32, cfg.scale()))
    }));
    row.push(vector("e", hdv, |e| Stmt::store(&ov, vec![e], zero())));
    row.push(set(0, PrimExpr::float(f32, f32::MIN as f64)));
    row.push(set(3, zero()));

    let kv_end = if causal {
        seq_kv.clone().min(s.clone() + offset.clone() + 1)
    } else {
        seq_kv.clone()
    };
    let tiles = (kv_end.clone() + (KEYS - 1)).floordiv(KEYS);
    let t = TirVar::new("t");
    let j0 = PrimExpr::var(&t) * KEYS;
    let key = |c: i64| (j0.clone() + c).min(seq_kv.clone() - 1);

    let mut tile = Vec::new();
    // Each key's products along the head dim, then its lanes summed.
    for c in 0..KEYS {
        tile.push(vector("l", LANES, |l| {
            let dot = (0..hd / LANES)
                .map(|d0| {
                    let d = l.clone() + d0 * LANES;
                    let kd = load(&ops.k, vec![be.clone(), key(c), hke.clone(), d.clone()]);
                    load(&qv, vec![d]) * kd.cast(f32)
                })
                .reduce(|a, x| a + x)
                .expect("a head dim of at least one vector");
            Stmt::store(&part, vec![PrimExpr::int(c), l], dot)
        }));
    }
    let mut half = LANES / 2;
    while half >= 1 {
        for c in 0..KEYS {
            tile.push(vector("l", half, |l| {
                let at = |o: PrimExpr| load(&part, vec![PrimExpr::int(c), o]);
                let sum = at(l.clone()) + at(l.clone() + half);
                Stmt::store(&part, vec![PrimExpr::int(c), l], sum)
            }));
        }
        half /= 2;
    }
    // The logits: the bias, and -inf for a key past the end or not visible.
    tile.push(vector("c", KEYS, |c| {
        let j = j0.clone() + c.clone();
        let jk = j.clone().min(seq_kv.clone() - 1);
        let mut x = load(&part, vec![c.clone(), PrimExpr::int(0)]);
        if let (Some(bias), Some(ones)) = (&ops.bias, cfg.bias) {
            let at = [be.clone(), h.clone(), s.clone(), jk];
            x = x + load(bias, bias_dims(ones, at, 0)).cast(f32);
        }
        let visible = j.lt(kv_end.clone());
        let mask = PrimExpr::select(visible, zero(), PrimExpr::float(f32, f64::NEG_INFINITY));
        Stmt::store(&sc, vec![c], x + mask)
    }));
    let sc_at = |c: i64| load(&sc, vec![PrimExpr::int(c)]);
    tile.push(set(1, (0..KEYS).fold(stat(0), |m, c| m.max(sc_at(c)))));
    tile.push(set(2, PrimExpr::call(f32, "exp", vec![stat(0) - stat(1)])));
    tile.push(vector("c", KEYS, |c| {
        let p = PrimExpr::call(f32, "exp", vec![load(&sc, vec![c.clone()]) - stat(1)]);
        Stmt::store(&sc, vec![c], p)
    }));
    tile.push(set(
        3,
        (0..KEYS).fold(stat(3) * stat(2), |a, c| a + sc_at(c)),
    ));
    tile.push(set(0, stat(1)));
    tile.push(vector("e", hdv, |e| {
        let sum = (0..KEYS).fold(load(&ov, vec![e.clone()]) * stat(2), |a, c| {
            let ve = load(&ops.v, vec![be.clone(), key(c), hke.clone(), e.clone()]);
            a + sc_at(c) * ve.cast(f32)
        });
        Stmt::store(&ov, vec![e], sum)
    }));
    row.push(Stmt::for_range(&t, tiles, ForKind::Serial, Stmt::Seq(tile)));
    row.push(vector("e", hdv, |e| {
        let value = PrimExpr::select(
            stat(3).gt(zero()),
            te::div(load(&ov, vec![e.clone()]), stat(3)),
            zero(),
        );
        let at = vec![be.clone(), s.clone(), h.clone(), e];
        Stmt::store(&ops.out, at, value.cast(cfg.dtype))
    }));

    let rows = Stmt::for_range(&rho, seq.clone() * g, ForKind::Serial, Stmt::Seq(row));
    let body = allocate(vec![qv, ov, part, sc, stats], rows);
    let fe = PrimExpr::var(&fv);
    let body = let_(
        &b,
        fe.clone().floordiv(nkv),
        let_(&hk, fe.floormod(nkv), body),
    );
    Stmt::for_range(&fv, batch.clone() * nkv, ForKind::Parallel, body)
}
