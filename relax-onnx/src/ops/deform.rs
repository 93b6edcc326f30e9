//! `DeformConv` (2-d): a convolution whose taps read the input at
//! positions moved by per-output offsets, written with
//! `image.grid_sample`.
//!
//! For offset group `g` and kernel tap `(i, j)`, output `(oh, ow)` reads
//! the input channels of `g` at `y = oh·stride - pad_top + i·dilation +
//! Δy`, `x = ow·stride - pad_left + j·dilation + Δx` (`Δ` from `offset`,
//! laid out `(N, groups, kH, kW, 2, oH, oW)`), bilinearly with zeros
//! outside the input: `grid_sample` (`bilinear`, `zeros`) at the grid
//! `((2x + 1)/W - 1, (2y + 1)/H - 1)` without `align_corners` names
//! exactly those pixel coordinates. Each sample is scaled by its `mask`
//! value when given. The samples `(N, C, kH·kW, oH, oW)` then meet the
//! weights as a (grouped) `matmul`, and the bias is added.

use super::{ints, shape, Ctx};
use relax_core::ir::{AttrValue, Attrs, Expr, PrimExpr};
use relax_runtime::{Error, Tensor};

/// Channels `[from, to)` of `x` along axis 1.
fn channels(cx: &mut Ctx, x: Expr, from: i64, to: i64) -> Result<Expr, Error> {
    let attrs = Attrs::from_pairs([
        ("axes", ints([1])),
        ("begin", ints([from])),
        ("end", ints([to])),
        ("strides", ints([1])),
    ]);
    cx.call("relax.strided_slice", vec![x], attrs)
}

/// `xs` concatenated along `axis`.
fn concat(cx: &mut Ctx, xs: Vec<Expr>, axis: i64) -> Result<Expr, Error> {
    let attrs = Attrs::from_pairs([("axis", AttrValue::Int(axis))]);
    cx.call("relax.concat", vec![Expr::tuple(xs)], attrs)
}

/// The converter (module docs).
pub fn deform_conv(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&[
        "dilations",
        "group",
        "kernel_shape",
        "offset_group",
        "pads",
        "strides",
    ])?;
    let x = cx.input(0)?;
    let w = cx.input(1)?;
    let offset = cx.input(2)?;
    let bias = cx.opt_input(3)?;
    let mask = cx.opt_input(4)?;
    let (xd, dtype) = cx.tensor(&x)?;
    if xd.len() != 4 {
        return Err(cx.error(format!(
            "only 2-d DeformConv is supported: X must have rank 4, found rank {}",
            xd.len()
        )));
    }
    let n = xd[0].clone();
    let xs = cx.static_dims(&x).ok();
    let wd = cx.static_dims(&w)?;
    let od = cx.tensor(&offset)?.0;
    let (Some(xs), [m, cpg, kh, kw]) = (xs, wd.as_slice()) else {
        return Err(cx.error("X's channels and image and W must be 4-d with known dims"));
    };
    let (c, h, wid) = (xs[1], xs[2], xs[3]);
    let (m, cpg, kh, kw) = (*m, *cpg, *kh, *kw);
    let group = cx.node.int_or("group", 1)?;
    let og = cx.node.int_or("offset_group", 1)?;
    if group < 1 || og < 1 || c % og != 0 || c != cpg * group || m % group != 0 {
        return Err(cx.error(format!(
            "group {group} and offset_group {og} do not fit {c} input channels, W {wd:?}"
        )));
    }
    if let Some(k) = cx.node.ints("kernel_shape")? {
        if k != [kh, kw] {
            return Err(cx.error(format!("kernel_shape {k:?} differs from W's {wd:?}")));
        }
    }
    let strides = cx.node.ints("strides")?.unwrap_or_else(|| vec![1, 1]);
    let dil = cx.node.ints("dilations")?.unwrap_or_else(|| vec![1, 1]);
    let pads = cx.node.ints("pads")?.unwrap_or_else(|| vec![0; 4]);
    if strides.len() != 2 || dil.len() != 2 || pads.len() != 4 {
        return Err(cx.error("strides, dilations and pads must have 2, 2 and 4 values"));
    }
    let k = kh * kw;
    let (oh, ow) = match od.as_slice() {
        [_, ch, a, b] if ch.as_int() == Some(og * k * 2) => match (a.as_int(), b.as_int()) {
            (Some(a), Some(b)) => (a, b),
            _ => return Err(cx.error("the offset's output size must be known")),
        },
        _ => {
            return Err(cx.error(format!(
                "offset must be (N, {}, oH, oW), found {}",
                og * k * 2,
                relax_core::ir::struct_info::fmt_dims(&od)
            )))
        }
    };
    // Normalized grid coordinate of pixel coordinates `base + Δ`, where
    // `base` varies along `axis` (2: rows, 3: columns) of the output.
    let coord =
        |cx: &mut Ctx, delta: Expr, start: i64, step: i64, len: i64, count: i64, axis: usize| {
            let base: Vec<f32> = (0..count)
                .map(|o| ((2.0 * (o * step + start) as f64 + 1.0) / len as f64 - 1.0) as f32)
                .collect();
            let mut at = [1i64, 1, 1, 1];
            at[axis] = count;
            let base = Tensor::from_vec(&at, base).map_err(|e| cx.error(e))?;
            let base = cx.astype(Expr::constant(base), dtype)?;
            let scale = cx.scalar(2.0 / len as f64, dtype)?;
            let d = cx.op2("relax.multiply", delta, scale)?;
            cx.op2("relax.add", d, base)
        };
    let mut groups = Vec::new();
    for g in 0..og {
        let cg = c / og;
        let xg = channels(cx, x.clone(), g * cg, (g + 1) * cg)?;
        let mut taps = Vec::new();
        for i in 0..kh {
            for j in 0..kw {
                let t = (g * kh + i) * kw + j;
                let dy = channels(cx, offset.clone(), 2 * t, 2 * t + 1)?;
                let dx = channels(cx, offset.clone(), 2 * t + 1, 2 * t + 2)?;
                let gy = coord(cx, dy, i * dil[0] - pads[0], strides[0], h, oh, 2)?;
                let gx = coord(cx, dx, j * dil[1] - pads[1], strides[1], wid, ow, 3)?;
                let grid = concat(cx, vec![gx, gy], 1)?;
                let attrs = Attrs::from_pairs([
                    ("method", AttrValue::Str("bilinear".into())),
                    ("layout", AttrValue::Str("NCHW".into())),
                    ("padding_mode", AttrValue::Str("zeros".into())),
                    ("align_corners", AttrValue::Bool(false)),
                ]);
                let mut s = cx.call("relax.image.grid_sample", vec![xg.clone(), grid], attrs)?;
                if let Some(mk) = &mask {
                    let mt = channels(cx, mk.clone(), t, t + 1)?;
                    s = cx.op2("relax.multiply", s, mt)?;
                }
                let s = cx.call(
                    "relax.expand_dims",
                    vec![s],
                    Attrs::from_pairs([("axis", ints([2]))]),
                )?;
                taps.push(s);
            }
        }
        groups.push(concat(cx, taps, 2)?);
    }
    // (N, C, K, oH, oW) → (N, group, C/group·K, oH·oW).
    let cols = concat(cx, groups, 1)?;
    let p = PrimExpr::int(oh * ow);
    let cols = cx.call(
        "relax.reshape",
        vec![
            cols,
            shape(vec![
                n.clone(),
                PrimExpr::int(group),
                PrimExpr::int(cpg * k),
                p.clone(),
            ]),
        ],
        Attrs::new(),
    )?;
    let wg = cx.call(
        "relax.reshape",
        vec![
            w,
            shape(vec![
                PrimExpr::int(group),
                PrimExpr::int(m / group),
                PrimExpr::int(cpg * k),
            ]),
        ],
        Attrs::new(),
    )?;
    let y = cx.op2("relax.matmul", wg, cols)?;
    let mut y = cx.call(
        "relax.reshape",
        vec![
            y,
            shape(vec![
                n,
                PrimExpr::int(m),
                PrimExpr::int(oh),
                PrimExpr::int(ow),
            ]),
        ],
        Attrs::new(),
    )?;
    if let Some(b) = bias {
        let b = cx.call(
            "relax.reshape",
            vec![
                b,
                shape(vec![
                    PrimExpr::int(1),
                    PrimExpr::int(m),
                    PrimExpr::int(1),
                    PrimExpr::int(1),
                ]),
            ],
            Attrs::new(),
        )?;
        y = cx.op2("relax.add", y, b)?;
    }
    Ok(vec![y])
}
