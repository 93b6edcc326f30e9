//! `Slice` and `Pad` by inputs computed at run time: `Slice`'s axes or
//! steps, `Pad`'s pads, constant value or axes.
//!
//! The registry's `strided_slice` and `nn.pad` take their axes, steps and
//! widths as attributes. With these only known at run time, the output's
//! rank is still known (the input's) but not its dims, so the op is
//! written as gathers, one per axis of the input, with every size bound at
//! run time:
//!
//! 1. Each axis `k`'s parameter (a start, an end, a step, a pad) is picked
//!    out of the input that lists them by axis as an `int64` scalar: the
//!    element whose axis (negative ones wrapped) is `k`, or a default when
//!    no axis names `k` ([`pick`]).
//! 2. The output dims are computed as a tensor (Python's slice rules for
//!    `Slice`, `d + begin + end` for `Pad`) and bound to fresh dims
//!    (`tensor_to_shape`, `match_cast`).
//! 3. Along each axis in turn, `take` gathers the source positions of the
//!    output's: `start + i·step` for `Slice` (always inside the axis, by
//!    step 2's clamping); for `Pad`, `i - begin` mapped into the axis by
//!    the mode (clamped for `edge`, mirrored for `reflect`, wrapped for
//!    `wrap`), and for `constant`, positions outside the axis replaced by
//!    the value after the gather. An axis of `Pad`'s input that may be
//!    empty is first extended by one element of the value, so that a
//!    gather never reads outside its input.

use super::{shape, Ctx};
use relax_core::ir::{AttrValue, Attrs, Expr, PrimExpr};
use relax_runtime::{DataType, Error};

/// The `int64` scalar of `values` at the element whose axis (in `axes`,
/// wrapped) is `k`, or `default` if none is.
pub fn pick(
    cx: &mut Ctx,
    axes: &Expr,
    values: &Expr,
    k: usize,
    default: Expr,
) -> Result<Expr, Error> {
    let i64t = DataType::i64();
    let kk = cx.scalar(k as f64, i64t)?;
    let hit = cx.op2("relax.equal", axes.clone(), kk)?;
    let zero = cx.scalar(0.0, i64t)?;
    let all = Attrs::from_pairs([
        ("axis", AttrValue::None),
        ("keepdims", AttrValue::Bool(false)),
    ]);
    let named = cx.call(
        "relax.where",
        vec![hit.clone(), values.clone(), zero.clone()],
        Attrs::new(),
    )?;
    let value = cx.call("relax.sum", vec![named], all.clone())?;
    let hit = cx.astype(hit, i64t)?;
    let count = cx.call("relax.sum", vec![hit], all)?;
    let any = cx.op2("relax.greater", count, zero)?;
    cx.call("relax.where", vec![any, value, default], Attrs::new())
}

/// The 1-d axes input `i` as `int64`, negative axes wrapped by `rank`, or
/// `0..n` when it is not given.
pub fn axes_tensor(cx: &mut Ctx, i: usize, rank: usize, n: usize) -> Result<Expr, Error> {
    let i64t = DataType::i64();
    match cx.opt_input(i)? {
        Some(axes) => {
            let axes = cx.astype(axes, i64t)?;
            let r = cx.scalar(rank as f64, i64t)?;
            cx.wrap_negative(axes, r)
        }
        None => {
            let positions = cx.positions(PrimExpr::int(n as i64), false)?;
            cx.call(
                "relax.reshape",
                vec![positions, shape(vec![PrimExpr::int(n as i64)])],
                Attrs::new(),
            )
        }
    }
}

/// The length of the 1-d input `i`, which must be known.
fn known_len(cx: &Ctx, e: &Expr, what: &str) -> Result<usize, Error> {
    let (dims, _) = cx.tensor(e)?;
    match dims.as_slice() {
        [d] => d
            .as_int()
            .map(|n| n as usize)
            .ok_or_else(|| cx.error(format!("the {what} input must have a known length"))),
        _ => Err(cx.error(format!("the {what} input must be 1-d"))),
    }
}

/// `e` (an `int64` scalar) as a 1-element vector.
fn as_vector(cx: &mut Ctx, e: Expr) -> Result<Expr, Error> {
    cx.call(
        "relax.reshape",
        vec![e, shape(vec![PrimExpr::int(1)])],
        Attrs::new(),
    )
}

/// The scalars `parts` as one `int64` vector, bound to fresh dims.
fn bind(cx: &mut Ctx, parts: Vec<Expr>) -> Result<Vec<PrimExpr>, Error> {
    let mut column = Vec::new();
    for p in parts {
        column.push(as_vector(cx, p)?);
    }
    let v = cx.call(
        "relax.concat",
        vec![Expr::tuple(column)],
        Attrs::from_pairs([("axis", AttrValue::Int(0))]),
    )?;
    cx.bind_data_dims(v)
}

/// `x` gathered along `axis` at the `int64` positions `idx` (1-d).
fn take(cx: &mut Ctx, x: Expr, idx: Expr, axis: usize) -> Result<Expr, Error> {
    cx.call(
        "relax.take",
        vec![x, idx],
        Attrs::from_pairs([("axis", AttrValue::Int(axis as i64))]),
    )
}

/// `arange(n)` as a 1-d `int64` tensor.
fn arange(cx: &mut Ctx, n: PrimExpr) -> Result<Expr, Error> {
    let p = cx.positions(n.clone(), false)?;
    cx.call("relax.reshape", vec![p, shape(vec![n])], Attrs::new())
}

/// `min(max(v, lo), hi)`.
fn clamp(cx: &mut Ctx, v: Expr, lo: Expr, hi: Expr) -> Result<Expr, Error> {
    let v = cx.op2("relax.maximum", v, lo)?;
    cx.op2("relax.minimum", v, hi)
}

/// `Slice` of `x` with starts, ends, axes and steps in inputs 1 to 4, some
/// computed at run time.
pub fn slice(cx: &mut Ctx, x: Expr) -> Result<Vec<Expr>, Error> {
    let i64t = DataType::i64();
    let (dims, _) = cx.tensor(&x)?;
    let starts = cx.input(1)?;
    let starts = cx.astype(starts, i64t)?;
    let ends = cx.input(2)?;
    let ends = cx.astype(ends, i64t)?;
    let n = known_len(cx, &starts, "starts")?;
    if known_len(cx, &ends, "ends")? != n {
        return Err(cx.error("starts and ends must have one length"));
    }
    let axes = axes_tensor(cx, 3, dims.len(), n)?;
    if known_len(cx, &axes, "axes")? != n {
        return Err(cx.error("starts and axes must have one length"));
    }
    let steps = match cx.opt_input(4)? {
        Some(s) => {
            let s = cx.astype(s, i64t)?;
            if known_len(cx, &s, "steps")? != n {
                return Err(cx.error("starts and steps must have one length"));
            }
            s
        }
        None => cx.call(
            "relax.ones",
            vec![shape(vec![PrimExpr::int(n as i64)])],
            Attrs::from_pairs([("dtype", AttrValue::DataType(i64t))]),
        )?,
    };
    let zero = cx.scalar(0.0, i64t)?;
    let one = cx.scalar(1.0, i64t)?;
    let minus_one = cx.scalar(-1.0, i64t)?;
    // Per axis: the first position and the step, and the output's length.
    let mut firsts = Vec::new();
    let mut strides = Vec::new();
    let mut lens = Vec::new();
    for (k, dim) in dims.iter().enumerate() {
        let d = cx.dim_tensor(dim.clone())?;
        let b = pick(cx, &axes, &starts, k, zero.clone())?;
        let e = pick(cx, &axes, &ends, k, d.clone())?;
        let s = pick(cx, &axes, &steps, k, one.clone())?;
        // A step of 0 is an error of the model; it is read as 1 so that
        // nothing divides by it.
        let s_zero = cx.op2("relax.equal", s.clone(), zero.clone())?;
        let s = cx.call("relax.where", vec![s_zero, one.clone(), s], Attrs::new())?;
        let forward = cx.op2("relax.greater", s.clone(), zero.clone())?;
        // Negative bounds count from the end, then are clamped into
        // [0, d] going forward and [-1, d - 1] going backward.
        let wrap =
            |cx: &mut Ctx, v: Expr| -> Result<Expr, Error> { cx.wrap_negative(v, d.clone()) };
        let (b, e) = (wrap(cx, b)?, wrap(cx, e)?);
        let lo = cx.call(
            "relax.where",
            vec![forward.clone(), zero.clone(), minus_one.clone()],
            Attrs::new(),
        )?;
        let d_minus_one = cx.op2("relax.subtract", d.clone(), one.clone())?;
        let hi = cx.call(
            "relax.where",
            vec![forward.clone(), d.clone(), d_minus_one],
            Attrs::new(),
        )?;
        let b = clamp(cx, b, lo.clone(), hi.clone())?;
        let e = clamp(cx, e, lo, hi)?;
        // The length: ceil((e - b) / s), at least 0.
        let span = cx.op2("relax.subtract", e, b.clone())?;
        let sign = cx.call(
            "relax.where",
            vec![forward, one.clone(), minus_one.clone()],
            Attrs::new(),
        )?;
        let s_minus = cx.op2("relax.subtract", s.clone(), sign)?;
        let span = cx.op2("relax.add", span, s_minus)?;
        let len = cx.op2("relax.floor_divide", span, s.clone())?;
        let len = cx.op2("relax.maximum", len, zero.clone())?;
        firsts.push(b);
        strides.push(s);
        lens.push(len);
    }
    let out = bind(cx, lens)?;
    let mut y = x;
    for (k, n) in out.into_iter().enumerate() {
        let i = arange(cx, n)?;
        let i = cx.op2("relax.multiply", i, strides[k].clone())?;
        let i = cx.op2("relax.add", i, firsts[k].clone())?;
        y = take(cx, y, i, k)?;
    }
    Ok(vec![y])
}

/// ONNX's pad modes.
#[derive(Clone, Copy, PartialEq)]
pub enum PadMode {
    Constant,
    Reflect,
    Edge,
    Wrap,
}

/// `Pad` of `x` by the pads in input 1, the constant value in input 2 and
/// the axes in input 3, some computed at run time.
pub fn pad(cx: &mut Ctx, x: Expr, mode: PadMode) -> Result<Vec<Expr>, Error> {
    let i64t = DataType::i64();
    let (dims, dtype) = cx.tensor(&x)?;
    let r = dims.len();
    let pads = cx.input(1)?;
    let pads = cx.astype(pads, i64t)?;
    let np = known_len(cx, &pads, "pads")?;
    let axes = axes_tensor(cx, 3, r, r)?;
    let na = known_len(cx, &axes, "axes")?;
    if np != 2 * na {
        return Err(cx.error(format!(
            "pads must have 2 values per padded axis ({}), found {np}",
            2 * na
        )));
    }
    let cut = |cx: &mut Ctx, from: usize| -> Result<Expr, Error> {
        cx.call(
            "relax.strided_slice",
            vec![pads.clone()],
            Attrs::from_pairs([
                ("axes", super::ints([0])),
                ("begin", super::ints([from as i64])),
                ("end", super::ints([(from + na) as i64])),
            ]),
        )
    };
    let begins = cut(cx, 0)?;
    let ends = cut(cx, na)?;
    let value = match cx.opt_input(2)? {
        Some(v) if mode == PadMode::Constant => {
            let v = cx.astype(v, dtype)?;
            cx.call("relax.reshape", vec![v, shape(vec![])], Attrs::new())?
        }
        _ => {
            let z = cx.scalar(0.0, DataType::f64())?;
            cx.astype(z, dtype)?
        }
    };
    let zero = cx.scalar(0.0, i64t)?;
    let one = cx.scalar(1.0, i64t)?;
    let mut before = Vec::new();
    let mut lens = Vec::new();
    let mut ds = Vec::new();
    for (k, dim) in dims.iter().enumerate() {
        let d = cx.dim_tensor(dim.clone())?;
        let b = pick(cx, &axes, &begins, k, zero.clone())?;
        let e = pick(cx, &axes, &ends, k, zero.clone())?;
        let len = cx.op2("relax.add", d.clone(), b.clone())?;
        let len = cx.op2("relax.add", len, e)?;
        let len = cx.op2("relax.maximum", len, zero.clone())?;
        before.push(b);
        lens.push(len);
        ds.push(d);
    }
    let out = bind(cx, lens)?;
    // An axis that may be empty gets one element of the value first, so
    // that the gathers below always read inside it (position 0).
    let mut y = x;
    for (k, dim) in dims.iter().enumerate() {
        if dim.as_int().is_some_and(|d| d > 0) {
            continue;
        }
        let (mut slab, _) = cx.tensor(&y)?;
        slab[k] = PrimExpr::int(1);
        let fill = cx.call(
            "relax.full",
            vec![shape(slab), value.clone()],
            Attrs::from_pairs([("dtype", AttrValue::DataType(dtype))]),
        )?;
        y = cx.call(
            "relax.concat",
            vec![Expr::tuple(vec![y, fill])],
            Attrs::from_pairs([("axis", AttrValue::Int(k as i64))]),
        )?;
    }
    for (k, n) in out.into_iter().enumerate() {
        let d = ds[k].clone();
        let src = arange(cx, n.clone())?;
        let src = cx.op2("relax.subtract", src, before[k].clone())?;
        let last = cx.op2("relax.subtract", d.clone(), one.clone())?;
        let last = cx.op2("relax.maximum", last, zero.clone())?;
        let idx = match mode {
            PadMode::Constant | PadMode::Edge => clamp(cx, src.clone(), zero.clone(), last)?,
            PadMode::Wrap => {
                let d1 = cx.op2("relax.maximum", d.clone(), one.clone())?;
                cx.op2("relax.floor_mod", src.clone(), d1)?
            }
            PadMode::Reflect => {
                // Mirrored about the first and last elements, with period
                // 2(d - 1): |((src mod p) + p) mod p - ...| folded back.
                let two = cx.scalar(2.0, i64t)?;
                let p = cx.op2("relax.multiply", last.clone(), two)?;
                let p1 = cx.op2("relax.maximum", p, one.clone())?;
                let m = cx.op2("relax.floor_mod", src.clone(), p1.clone())?;
                let back = cx.op2("relax.subtract", p1, m.clone())?;
                let over = cx.op2("relax.greater", m.clone(), last.clone())?;
                let folded = cx.call("relax.where", vec![over, back, m], Attrs::new())?;
                clamp(cx, folded, zero.clone(), last)?
            }
        };
        y = take(cx, y, idx, k)?;
        if mode == PadMode::Constant {
            // Positions outside the input take the value.
            let below = cx.op2("relax.less", src.clone(), zero.clone())?;
            let above = cx.op2("relax.greater_equal", src, d)?;
            let outside = cx.op2("relax.logical_or", below, above)?;
            let mut col = vec![PrimExpr::int(1); r];
            col[k] = n;
            let outside = cx.call("relax.reshape", vec![outside, shape(col)], Attrs::new())?;
            y = cx.call("relax.where", vec![outside, value.clone(), y], Attrs::new())?;
        }
    }
    Ok(vec![y])
}
