//! The input and output transforms of a Winograd convolution as PrimFuncs
//! with their loops already scheduled (`tir.is_scheduled`): parallel over
//! image rows of tiles, vectorized along a row, the transform matrices'
//! entries constants of the code (zero entries skipped, so F(2, 3)'s
//! input transform is additions only).
//!
//! The layout: a tile `(th, tw)` is column `t = th · TW + tw` of the
//! transformed operands `V[n, p, c, t]` and `M[n, p, o, t]`, so the
//! product over each image `n` and transform point `p = i · α + j` is a
//! matrix product `(O, C) × (C, TH · TW)` of constant shape; a symbolic
//! batch stays an outer (batch) dim of that product, which keeps its
//! constant-shape schedule.
//!
//! **Input transform** `V[n, p, c, t] = (Bᵀ d B)[i, j]`, where `d` is the
//! α × α window of channel `c` at rows `th · m - pad_top + a` and columns
//! `tw · m - pad_left + b` (zero outside the image). One parallel
//! iteration per `(n, c, th)`:
//!
//! ```text
//! row[i, x] = Σ_a Bᵀ[i, a] · data[n, c, th·m - pad_top + a, x - pad_left]   (rows inside, x inside)
//! phase[i, b, tw] = row[i, tw·m + b]                                          (a stride-m load)
//! V[n, i·α + j, c, th·TW + tw] = Σ_b Bᵀ[j, b] · phase[i, b, tw]
//! ```
//!
//! The row transform accumulates into a zeroed stack buffer one image row
//! at a time, each a contiguous vector loop over the columns inside the
//! image, so padding needs no test inside a vector loop; a row outside the
//! image is skipped by a scalar test. An image of at most
//! [`CHANNEL_VECTOR_TILES`] tiles (14 × 14 by 4, 7 × 7 by 2) is instead
//! one iteration per `(n, c)` with every tile a lane of the vectors
//! (`channel_input_transform`): each window point one masked gather, each
//! value of `V` one contiguous store. Where a row has at least
//! [`PHASE_MIN_TILES`] tiles, each of a tile's α columns is then read out
//! of `row` once, with a stride of `m` (one span load and a shuffle per
//! vector), into `phase`, where the column transform reads it
//! contiguously: read in the combinations themselves, `row` took 22
//! strided loads per row of F(4, 3) where 6 suffice. Narrower rows read
//! `row` in the combinations.
//!
//! **Output transform** `y[n, o, th·m + r, tw·m + s] = (Aᵀ M A)[r, s]`,
//! cropped to the output: one parallel iteration per `(n, o, th)`:
//!
//! ```text
//! z[r, j, tw] = Σ_i Aᵀ[r, i] · M[n, i·α + j, o, th·TW + tw]
//! y[n, o, th·m + r, tw·m + s] = epilogue(Σ_j Aᵀ[s, j] · z[r, j, tw])   (tw·m + s < W_out)
//! ```
//!
//! The epilogue is what the rewrite absorbed from the convolution's uses:
//! a per-channel bias, then a residual of the output's shape, then relu,
//! in the order the graph computed them.

use super::matrices::Matrices;
use crate::ir::prim_expr::{PrimExpr, TirVar};
use crate::ir::AttrValue;
use crate::tir::{Buffer, ForKind, PrimFunc, PrimFuncParam, Stmt};
use crate::transform::annotate_tir_op_pattern::OP_PATTERN;
use crate::transform::apply_schedule::IS_SCHEDULED;
use relax_runtime::DataType;

/// The sizes of one rewritten convolution (NCHW data, OIHW 3 × 3
/// weights, stride and dilation 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Input channels.
    pub c_in: i64,
    /// Output channels.
    pub c_out: i64,
    /// Input rows.
    pub h: i64,
    /// Input columns.
    pub w: i64,
    /// Padding: top, left, bottom, right.
    pub pad: [i64; 4],
    /// The output tile's side.
    pub m: i64,
}

impl Geometry {
    /// The input tile's side `α = m + 2`.
    pub fn alpha(&self) -> i64 {
        self.m + 2
    }
    /// Output rows.
    pub fn out_h(&self) -> i64 {
        self.h + self.pad[0] + self.pad[2] - 2
    }
    /// Output columns.
    pub fn out_w(&self) -> i64 {
        self.w + self.pad[1] + self.pad[3] - 2
    }
    /// Tile rows.
    pub fn tiles_h(&self) -> i64 {
        (self.out_h() + self.m - 1) / self.m
    }
    /// Tile columns.
    pub fn tiles_w(&self) -> i64 {
        (self.out_w() + self.m - 1) / self.m
    }
}

/// What the output transform applies to each output element, in order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Epilogue {
    /// Adds `bias[o]` (a `(O,)` parameter).
    pub bias: bool,
    /// Adds a tensor of the output's shape (a parameter after the bias).
    pub residual: bool,
    /// `max(x, 0)`.
    pub relu: bool,
}

fn f32c(v: f64) -> PrimExpr {
    PrimExpr::float(DataType::f32(), v)
}

/// `Σ coef · term` over the nonzero coefficients (0 when all are zero).
fn combination(terms: impl IntoIterator<Item = (f64, PrimExpr)>) -> PrimExpr {
    let mut sum: Option<PrimExpr> = None;
    for (c, e) in terms {
        if c == 0.0 {
            continue;
        }
        sum = Some(match sum {
            None if c == 1.0 => e,
            None if c == -1.0 => -e,
            None => f32c(c) * e,
            Some(s) if c == 1.0 => s + e,
            Some(s) if c == -1.0 => s - e,
            Some(s) => s + f32c(c) * e,
        });
    }
    sum.unwrap_or_else(|| f32c(0.0))
}

fn load(buffer: &Buffer, indices: Vec<PrimExpr>) -> PrimExpr {
    PrimExpr::load(buffer, indices)
}

fn scheduled(params: Vec<PrimFuncParam>, body: Stmt) -> PrimFunc {
    let mut f = PrimFunc::new(params, body);
    f.attrs = f
        .attrs
        .with(IS_SCHEDULED, AttrValue::Bool(true))
        .with(OP_PATTERN, crate::op::OpPatternKind::Opaque as i64);
    f
}

/// The batch dim of the PrimFunc: the caller's constant, or a variable of
/// its own (bound from the data's first dim) for a symbolic one.
pub fn batch_dim(batch: &PrimExpr) -> PrimExpr {
    match batch.as_int() {
        Some(n) => PrimExpr::int(n),
        None => PrimExpr::var(&TirVar::new("n")),
    }
}

/// The fewest tiles in a row for which the input transform reads each
/// column of the tiles into `phase` once (module docs), measured on one
/// core of a Xeon with AVX-512 (F(4, 3)): 14 tiles (56 × 56 images)
/// 0.28 → 0.20 ms; 7 tiles (28 × 28) 0.079 → 0.101 ms, where the 7-lane
/// vectors stored and read again cost more than the strided reads saved;
/// 4 tiles the same either way.
pub const PHASE_MIN_TILES: i64 = 8;

/// The input transform's parameters, whichever form it takes: `data (N,
/// C, H, W)` and `V (N, α², C, TH·TW)`.
fn input_transform_params(geo: &Geometry, batch: &PrimExpr) -> (Buffer, Buffer) {
    let f32 = DataType::f32();
    let alpha = geo.alpha();
    let data = Buffer::new(
        "data",
        vec![batch.clone(), geo.c_in.into(), geo.h.into(), geo.w.into()],
        f32,
    );
    let tiles = geo.tiles_h() * geo.tiles_w();
    let v = Buffer::new(
        "V",
        vec![
            batch.clone(),
            (alpha * alpha).into(),
            geo.c_in.into(),
            tiles.into(),
        ],
        f32,
    );
    (data, v)
}

/// The input transform: `data (N, C, H, W)` to `V (N, α², C, TH·TW)`.
/// `batch` is the PrimFunc's batch dim ([`batch_dim`]). See the module
/// docs.
pub fn input_transform(geo: &Geometry, mats: &Matrices, batch: &PrimExpr) -> PrimFunc {
    if geo.tiles_h() * geo.tiles_w() <= CHANNEL_VECTOR_TILES {
        return channel_input_transform(geo, mats, batch);
    }
    let f32 = DataType::f32();
    let (m, alpha) = (geo.m, geo.alpha());
    let (th_n, tw_n) = (geo.tiles_h(), geo.tiles_w());
    let (c_in, h, w) = (geo.c_in, geo.h, geo.w);
    let (pt, pl) = (geo.pad[0], geo.pad[1]);
    let (data, v) = input_transform_params(geo, batch);
    // The row transform's columns: every column any tile reads.
    let width = (tw_n - 1) * m + alpha;
    let row = Buffer::new("row", vec![alpha.into(), width.into()], f32);
    let phase = Buffer::new("phase", vec![alpha.into(), alpha.into(), tw_n.into()], f32);

    let f = TirVar::new("f");
    let fe = PrimExpr::var(&f);
    let n = fe.clone().floordiv(c_in * th_n);
    let c = fe.clone().floordiv(th_n).floormod(c_in);
    let th = fe.clone().floormod(th_n);
    let t0 = th.clone() * tw_n;

    let mut stmts = Vec::new();
    for i in 0..alpha {
        let x = TirVar::new("x");
        stmts.push(Stmt::for_range(
            &x,
            width,
            ForKind::Vectorized,
            Stmt::store(&row, vec![i.into(), PrimExpr::var(&x)], f32c(0.0)),
        ));
    }
    // Columns x of `row` inside the image: pl <= x < pl + w, x < width.
    let (x0, x1) = (pl.min(width), (pl + w).min(width));
    for a in 0..alpha {
        if x1 <= x0 {
            break;
        }
        let y = th.clone() * m + (a - pt);
        let mut adds = Vec::new();
        for i in 0..alpha {
            let coef = mats.bt(i as usize, a as usize);
            if coef == 0.0 {
                continue;
            }
            let x = TirVar::new("x");
            let col = PrimExpr::var(&x) + x0;
            let src = load(
                &data,
                vec![n.clone(), c.clone(), y.clone(), col.clone() - pl],
            );
            let old = load(&row, vec![i.into(), col.clone()]);
            adds.push(Stmt::for_range(
                &x,
                x1 - x0,
                ForKind::Vectorized,
                Stmt::store(
                    &row,
                    vec![i.into(), col],
                    combination([(1.0, old), (coef, src)]),
                ),
            ));
        }
        let inside = y.clone().ge(0).and(y.lt(h));
        stmts.push(Stmt::IfThenElse {
            cond: inside,
            then_case: Box::new(Stmt::Seq(adds)),
            else_case: None,
        });
    }
    // Each column of every tile once, with the tiles along the vector:
    // `phase[i, b, tw] = row[i, tw·m + b]`, the one strided read of `row`
    // (module docs), where a row has at least PHASE_MIN_TILES tiles.
    let phased = tw_n >= PHASE_MIN_TILES;
    for i in (0..alpha).filter(|_| phased) {
        for b in 0..alpha {
            let tw = TirVar::new("tw");
            let twe = PrimExpr::var(&tw);
            let at = vec![PrimExpr::int(i), twe.clone() * m + b];
            stmts.push(Stmt::for_range(
                &tw,
                tw_n,
                ForKind::Vectorized,
                Stmt::store(&phase, vec![i.into(), b.into(), twe], load(&row, at)),
            ));
        }
    }
    for i in 0..alpha {
        for j in 0..alpha {
            let tw = TirVar::new("tw");
            let twe = PrimExpr::var(&tw);
            let value = combination((0..alpha).map(|b| {
                let column = match phased {
                    true => load(&phase, vec![i.into(), b.into(), twe.clone()]),
                    false => load(&row, vec![i.into(), twe.clone() * m + b]),
                };
                (mats.bt(j as usize, b as usize), column)
            }));
            let at = vec![
                n.clone(),
                PrimExpr::int(i * alpha + j),
                c.clone(),
                t0.clone() + twe,
            ];
            stmts.push(Stmt::for_range(
                &tw,
                tw_n,
                ForKind::Vectorized,
                Stmt::store(&v, at, value),
            ));
        }
    }
    let body = Stmt::for_range(
        &f,
        batch.clone() * (c_in * th_n),
        ForKind::Parallel,
        Stmt::Allocate {
            buffer: row,
            body: Box::new(match phased {
                true => Stmt::Allocate {
                    buffer: phase,
                    body: Box::new(Stmt::Seq(stmts)),
                },
                false => Stmt::Seq(stmts),
            }),
        },
    );
    scheduled(
        vec![PrimFuncParam::Buffer(data), PrimFuncParam::Buffer(v)],
        body,
    )
}

/// The most tiles of a channel that the input transform computes as the
/// lanes of one vector (`channel_input_transform`): 16, a 512-bit
/// register of `float32` (a 14 × 14 image's tiles of 4, a 7 × 7 image's
/// of 2).
pub const CHANNEL_VECTOR_TILES: i64 = 16;

/// The input transform of an image with at most [`CHANNEL_VECTOR_TILES`]
/// tiles: one parallel iteration per `(n, c)`, every tile a lane `t` of
/// its vectors, so each of the α² window points is one masked gather of
/// the image (zero outside it) and each of `V`'s α² values one store of
/// the channel's `TH·TW` contiguous columns:
///
/// ```text
/// d[a, b, t] = data[n, c, (t / TW)·m - pad_top + a, (t % TW)·m - pad_left + b]   (0 outside)
/// e[i, b, t] = Σ_a Bᵀ[i, a] · d[a, b, t]
/// V[n, i·α + j, c, t] = Σ_b Bᵀ[j, b] · e[i, b, t]
/// ```
///
/// Row by row, a 14 × 14 image's rows of 4 tiles were vectors of 4 lanes
/// and strided reads (0.115 ms for 256 channels on a 2-core Xeon).
fn channel_input_transform(geo: &Geometry, mats: &Matrices, batch: &PrimExpr) -> PrimFunc {
    let f32 = DataType::f32();
    let (m, alpha) = (geo.m, geo.alpha());
    let (th_n, tw_n) = (geo.tiles_h(), geo.tiles_w());
    let (c_in, h, w) = (geo.c_in, geo.h, geo.w);
    let (pt, pl) = (geo.pad[0], geo.pad[1]);
    let tiles = th_n * tw_n;
    let (data, v) = input_transform_params(geo, batch);
    let d = Buffer::new("d", vec![alpha.into(), alpha.into(), tiles.into()], f32);
    let e = Buffer::new("e", vec![alpha.into(), alpha.into(), tiles.into()], f32);

    let f = TirVar::new("f");
    let fe = PrimExpr::var(&f);
    let n = fe.clone().floordiv(c_in);
    let c = fe.clone().floormod(c_in);
    // One vector loop over the tiles `t` per statement.
    let over_tiles = |body: &dyn Fn(PrimExpr) -> Stmt| {
        let t = TirVar::new("t");
        Stmt::for_range(&t, tiles, ForKind::Vectorized, body(PrimExpr::var(&t)))
    };
    let mut stmts = Vec::new();
    for a in 0..alpha {
        for b in 0..alpha {
            stmts.push(over_tiles(&|t| {
                let y = t.clone().floordiv(tw_n) * m + (a - pt);
                let x = t.clone().floormod(tw_n) * m + (b - pl);
                let inside = y
                    .clone()
                    .ge(0)
                    .and(y.clone().lt(h))
                    .and(x.clone().ge(0))
                    .and(x.clone().lt(w));
                let at = vec![
                    n.clone(),
                    c.clone(),
                    y.min(h - 1).max(0),
                    x.min(w - 1).max(0),
                ];
                let value = PrimExpr::select(inside, load(&data, at), f32c(0.0));
                Stmt::store(&d, vec![a.into(), b.into(), t], value)
            }));
        }
    }
    for i in 0..alpha {
        for b in 0..alpha {
            stmts.push(over_tiles(&|t| {
                let value = combination((0..alpha).map(|a| {
                    let at = vec![a.into(), b.into(), t.clone()];
                    (mats.bt(i as usize, a as usize), load(&d, at))
                }));
                Stmt::store(&e, vec![i.into(), b.into(), t], value)
            }));
        }
    }
    for i in 0..alpha {
        for j in 0..alpha {
            stmts.push(over_tiles(&|t| {
                let value = combination((0..alpha).map(|b| {
                    let at = vec![i.into(), b.into(), t.clone()];
                    (mats.bt(j as usize, b as usize), load(&e, at))
                }));
                let at = vec![n.clone(), PrimExpr::int(i * alpha + j), c.clone(), t];
                Stmt::store(&v, at, value)
            }));
        }
    }
    let body = Stmt::for_range(
        &f,
        batch.clone() * c_in,
        ForKind::Parallel,
        Stmt::Allocate {
            buffer: d,
            body: Box::new(Stmt::Allocate {
                buffer: e,
                body: Box::new(Stmt::Seq(stmts)),
            }),
        },
    );
    scheduled(
        vec![PrimFuncParam::Buffer(data), PrimFuncParam::Buffer(v)],
        body,
    )
}

/// The output transform: `M (N, α², O, TH·TW)` (then `bias (O,)` and a
/// residual `(N, O, H_out, W_out)` as `epilogue` asks) to
/// `y (N, O, H_out, W_out)`. See the module docs.
pub fn output_transform(
    geo: &Geometry,
    mats: &Matrices,
    batch: &PrimExpr,
    epilogue: Epilogue,
) -> PrimFunc {
    let f32 = DataType::f32();
    let (m, alpha) = (geo.m, geo.alpha());
    let (th_n, tw_n) = (geo.tiles_h(), geo.tiles_w());
    let (c_out, ho, wo) = (geo.c_out, geo.out_h(), geo.out_w());
    let tiles = PrimExpr::int(th_n * tw_n);
    let mbuf = Buffer::new(
        "M",
        vec![batch.clone(), (alpha * alpha).into(), c_out.into(), tiles],
        f32,
    );
    let out_shape = vec![batch.clone(), c_out.into(), ho.into(), wo.into()];
    let bias = Buffer::new("bias", vec![c_out.into()], f32);
    let residual = Buffer::new("residual", out_shape.clone(), f32);
    let y = Buffer::new("y", out_shape, f32);
    let z = Buffer::new("z", vec![m.into(), alpha.into(), tw_n.into()], f32);

    let f = TirVar::new("f");
    let fe = PrimExpr::var(&f);
    let n = fe.clone().floordiv(c_out * th_n);
    let o = fe.clone().floordiv(th_n).floormod(c_out);
    let th = fe.clone().floormod(th_n);
    let t0 = th.clone() * tw_n;

    let mut stmts = Vec::new();
    for r in 0..m {
        for j in 0..alpha {
            let tw = TirVar::new("tw");
            let twe = PrimExpr::var(&tw);
            let value = combination((0..alpha).map(|i| {
                let at = vec![
                    n.clone(),
                    PrimExpr::int(i * alpha + j),
                    o.clone(),
                    t0.clone() + twe.clone(),
                ];
                (mats.at(r as usize, i as usize), load(&mbuf, at))
            }));
            let at = vec![PrimExpr::int(r), PrimExpr::int(j), twe];
            stmts.push(Stmt::for_range(
                &tw,
                tw_n,
                ForKind::Vectorized,
                Stmt::store(&z, at, value),
            ));
        }
    }
    // The last tile row may cross the bottom edge: rows from `full` on
    // exist only when th < TH - 1 or they fit.
    let full = ho - (th_n - 1) * m;
    for r in 0..m {
        let row = th.clone() * m + r;
        let mut cols = Vec::new();
        for s in 0..m {
            // Tiles whose column `s` is inside the output.
            let count = (wo - s + m - 1) / m;
            if count <= 0 {
                continue;
            }
            let tw = TirVar::new("tw");
            let twe = PrimExpr::var(&tw);
            let col = twe.clone() * m + s;
            let mut value = combination((0..alpha).map(|j| {
                let at = vec![PrimExpr::int(r), PrimExpr::int(j), twe.clone()];
                (mats.at(s as usize, j as usize), load(&z, at))
            }));
            let at = vec![n.clone(), o.clone(), row.clone(), col];
            if epilogue.bias {
                value = value + load(&bias, vec![o.clone()]);
            }
            if epilogue.residual {
                value = value + load(&residual, at.clone());
            }
            if epilogue.relu {
                value = value.max(f32c(0.0));
            }
            cols.push(Stmt::for_range(
                &tw,
                count,
                ForKind::Vectorized,
                Stmt::store(&y, at, value),
            ));
        }
        let cols = Stmt::Seq(cols);
        stmts.push(if r < full {
            cols
        } else {
            Stmt::IfThenElse {
                cond: row.lt(ho),
                then_case: Box::new(cols),
                else_case: None,
            }
        });
    }
    let body = Stmt::for_range(
        &f,
        batch.clone() * (c_out * th_n),
        ForKind::Parallel,
        Stmt::Allocate {
            buffer: z,
            body: Box::new(Stmt::Seq(stmts)),
        },
    );
    let mut params = vec![PrimFuncParam::Buffer(mbuf)];
    if epilogue.bias {
        params.push(PrimFuncParam::Buffer(bias));
    }
    if epilogue.residual {
        params.push(PrimFuncParam::Buffer(residual));
    }
    params.push(PrimFuncParam::Buffer(y));
    scheduled(params, body)
}
