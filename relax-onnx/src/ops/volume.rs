//! 3-d convolution, transposed convolution and pooling, written with the
//! registry's 2-d ops: the registry has no 3-d ops, and a 3-d window is a
//! sum (or max) over its depth taps of 2-d windows ([`conv_transpose3d`]
//! says how the transposed one places its taps).
//!
//! For depth tap `kd`, the slice of the (depth-padded) input at depths
//! `kd·dilation + od·stride` for every output depth `od` is moved into the
//! batch (`(N·OD, C, H, W)`) and run through the 2-d op with the height
//! and width attributes; the taps' results are added (convolution, average)
//! or take their maximum (max pooling), and the batch is moved back to
//! `(N, C, OD, OH, OW)`. Depth padding is `nn.pad` with zeros (convolution,
//! average) or `-inf` (max). Every dim must be a known integer.
//!
//! Average pooling sums the taps' 2-d averages (each divided by its
//! height-width count) and divides by each output depth's count of depth
//! taps that count (inside the input, or with `count_include_pad` inside
//! the padded input): the counts of the windows are per-axis products, so
//! this is exact, for depth padding and for `ceil_mode` windows past it.

use super::{ints, shape, Ctx};
use relax_core::ir::{AttrValue, Attrs, Expr, PrimExpr};
use relax_runtime::Error;

/// The depth geometry: kernel, stride, dilation, pads before and after.
pub struct Depth {
    pub kernel: i64,
    pub stride: i64,
    pub dilation: i64,
    pub before: i64,
    pub after: i64,
}

impl Depth {
    /// The output depth for input depth `d`.
    fn out(&self, d: i64, ceil: bool) -> i64 {
        let span = self.dilation * (self.kernel - 1) + 1;
        let mut num = d + self.before + self.after - span;
        if ceil {
            num += self.stride - 1;
        }
        num.div_euclid(self.stride) + 1
    }
}

/// The dims of a 5-d value, each a known integer below 2^31.
fn static_dims(cx: &Ctx, e: &Expr) -> Result<Vec<i64>, Error> {
    let dims = cx.static_dims(e)?;
    if dims.len() != 5 {
        return Err(cx.error(format!(
            "a 3-d window needs 5-d operands, found rank {}",
            dims.len()
        )));
    }
    if let Some(d) = dims.iter().find(|&&d| d > i32::MAX as i64) {
        return Err(cx.error(format!("dim {d} is too large")));
    }
    Ok(dims)
}

fn dims_of(v: &[i64]) -> Vec<PrimExpr> {
    v.iter().map(|&d| PrimExpr::int(d)).collect()
}

/// `x` (5-d, static) padded along depth by `before`/`after` with `value`.
fn pad_depth(cx: &mut Ctx, x: Expr, before: i64, after: i64, value: f64) -> Result<Expr, Error> {
    if before == 0 && after == 0 {
        return Ok(x);
    }
    let attrs = Attrs::from_pairs([
        ("pad_width", ints([0, 0, 0, 0, before, after, 0, 0, 0, 0])),
        ("pad_value", AttrValue::Float(value)),
        ("pad_mode", AttrValue::Str("constant".into())),
    ]);
    cx.call("relax.nn.pad", vec![x], attrs)
}

/// Depth tap `kd` of `x` (`(N, C, D, H, W)`, padded) as a batch of 2-d
/// images `(N·OD, C, H, W)`.
fn tap_batch(
    cx: &mut Ctx,
    x: &Expr,
    dims: &[i64],
    depth: &Depth,
    od: i64,
    kd: i64,
) -> Result<Expr, Error> {
    let begin = kd * depth.dilation;
    let end = begin + (od - 1) * depth.stride + 1;
    let attrs = Attrs::from_pairs([
        ("axes", ints([2])),
        ("begin", ints([begin])),
        ("end", ints([end])),
        ("strides", ints([depth.stride])),
    ]);
    let slice = cx.call("relax.strided_slice", vec![x.clone()], attrs)?;
    let moved = cx.call(
        "relax.permute_dims",
        vec![slice],
        Attrs::from_pairs([("axes", ints([0, 2, 1, 3, 4]))]),
    )?;
    let batch = dims_of(&[dims[0] * od, dims[1], dims[3], dims[4]]);
    cx.call("relax.reshape", vec![moved, shape(batch)], Attrs::new())
}

/// `(N·OD, C', OH, OW)` back to `(N, C', OD, OH, OW)`.
fn unbatch(cx: &mut Ctx, y: Expr, n: i64, od: i64) -> Result<Expr, Error> {
    let (dims, _) = cx.tensor(&y)?;
    let split = vec![
        PrimExpr::int(n),
        PrimExpr::int(od),
        dims[1].clone(),
        dims[2].clone(),
        dims[3].clone(),
    ];
    let y = cx.call("relax.reshape", vec![y, shape(split)], Attrs::new())?;
    cx.call(
        "relax.permute_dims",
        vec![y],
        Attrs::from_pairs([("axes", ints([0, 2, 1, 3, 4]))]),
    )
}

/// `Conv` on 5-d data: `attrs2d` are conv2d's height/width attributes.
pub fn conv3d(cx: &mut Ctx, x: Expr, w: Expr, depth: Depth, attrs2d: Attrs) -> Result<Expr, Error> {
    let dims = static_dims(cx, &x)?;
    let w_dims = static_dims(cx, &w)?;
    let od = depth.out(dims[2], false);
    if od <= 0 {
        return Err(cx.error("the window does not fit the padded depth"));
    }
    let xp = pad_depth(cx, x, depth.before, depth.after, 0.0)?;
    let mut acc: Option<Expr> = None;
    for kd in 0..depth.kernel {
        let batch = tap_batch(cx, &xp, &dims, &depth, od, kd)?;
        let wk = cx.call(
            "relax.strided_slice",
            vec![w.clone()],
            Attrs::from_pairs([
                ("axes", ints([2])),
                ("begin", ints([kd])),
                ("end", ints([kd + 1])),
            ]),
        )?;
        let wk = cx.call(
            "relax.reshape",
            vec![
                wk,
                shape(dims_of(&[w_dims[0], w_dims[1], w_dims[3], w_dims[4]])),
            ],
            Attrs::new(),
        )?;
        let y = cx.call("relax.nn.conv2d", vec![batch, wk], attrs2d.clone())?;
        acc = Some(match acc {
            Some(a) => cx.op2("relax.add", a, y)?,
            None => y,
        });
    }
    let y = acc.ok_or_else(|| cx.error("the kernel has no depth"))?;
    unbatch(cx, y, dims[0], od)
}

/// `MaxPool` (average: `None`) or `AveragePool` (`Some(count_include_pad)`)
/// on 5-d data: `attrs2d` are the 2-d pool's height/width attributes.
pub fn pool3d(
    cx: &mut Ctx,
    x: Expr,
    depth: Depth,
    ceil: bool,
    average: Option<bool>,
    attrs2d: Attrs,
) -> Result<Expr, Error> {
    let dims = static_dims(cx, &x)?;
    let od = depth.out(dims[2], ceil);
    if od <= 0 {
        return Err(cx.error("the window does not fit the padded depth"));
    }
    // Depth windows past the padding (ceil_mode) read extra padding.
    let span = depth.dilation * (depth.kernel - 1) + 1;
    let overhang = ((od - 1) * depth.stride + span - (dims[2] + depth.before + depth.after)).max(0);
    // Per output depth, how many of its depth taps count (average only).
    let counts: Option<Vec<f64>> = average.map(|include| {
        let (lo, hi) = if include {
            (-depth.before, dims[2] + depth.after)
        } else {
            (0, dims[2])
        };
        (0..od)
            .map(|o| {
                let start = o * depth.stride - depth.before;
                (0..depth.kernel)
                    .filter(|&kd| (lo..hi).contains(&(start + kd * depth.dilation)))
                    .count() as f64
            })
            .collect()
    });
    let (op, fill) = match average {
        None => ("relax.nn.max_pool2d", f64::NEG_INFINITY),
        Some(_) => ("relax.nn.avg_pool2d", 0.0),
    };
    let xp = pad_depth(cx, x, depth.before, depth.after + overhang, fill)?;
    let mut acc: Option<Expr> = None;
    for kd in 0..depth.kernel {
        let batch = tap_batch(cx, &xp, &dims, &depth, od, kd)?;
        let y = cx.call(op, vec![batch], attrs2d.clone())?;
        acc = Some(match acc {
            Some(a) if average.is_some() => cx.op2("relax.add", a, y)?,
            Some(a) => cx.op2("relax.maximum", a, y)?,
            None => y,
        });
    }
    let y = acc.ok_or_else(|| cx.error("the window has no depth"))?;
    let y = unbatch(cx, y, dims[0], od)?;
    match counts {
        // A window with no depth tap that counts sums to 0: divide by 1.
        Some(counts) => {
            let (_, dtype) = cx.tensor(&y)?;
            let counts: Vec<f64> = counts.into_iter().map(|c| c.max(1.0)).collect();
            let t =
                relax_runtime::Tensor::from_vec(&[od, 1, 1], counts).map_err(|e| cx.error(e))?;
            let t = cx.astype(Expr::constant(t), dtype)?;
            cx.op2("relax.divide", y, t)
        }
        None => Ok(y),
    }
}

/// `ConvTranspose` on 5-d data (`(N, C, D, H, W)`, weight `(C, O/group,
/// KD, KH, KW)`); `attrs2d` are `conv2d_transpose`'s height/width
/// attributes, `depth` the depth geometry (pads non-negative) and
/// `out_pad` the depth's output padding.
///
/// Input depth `d` through depth tap `kd` lands on depth `d·stride +
/// kd·dilation` of the uncropped output, of length `(D - 1)·stride +
/// dilation·(KD - 1) + 1 + out_pad`. Per tap, the input's depth slices run
/// as one batch `(N·D, C, H, W)` through the 2-d transposed convolution
/// with the tap's `(C, O/group, KH, KW)` weight; the result is spread along
/// depth by the stride (zeros between), shifted by `kd·dilation` (zeros
/// around), and the taps are added. The depth pads are then cropped.
pub fn conv_transpose3d(
    cx: &mut Ctx,
    x: Expr,
    w: Expr,
    depth: Depth,
    out_pad: i64,
    attrs2d: Attrs,
) -> Result<Expr, Error> {
    let dims = static_dims(cx, &x)?;
    let w_dims = static_dims(cx, &w)?;
    let (n, d) = (dims[0], dims[2]);
    let spread_len = (d - 1) * depth.stride + 1;
    let full = spread_len + depth.dilation * (depth.kernel - 1) + out_pad;
    let od = full - depth.before - depth.after;
    if d <= 0 || od <= 0 {
        return Err(cx.error("the depth pads leave no output depth"));
    }
    let moved = cx.call(
        "relax.permute_dims",
        vec![x],
        Attrs::from_pairs([("axes", ints([0, 2, 1, 3, 4]))]),
    )?;
    let batch_dims = dims_of(&[n * d, dims[1], dims[3], dims[4]]);
    let batch = cx.call(
        "relax.reshape",
        vec![moved, shape(batch_dims)],
        Attrs::new(),
    )?;
    let mut acc: Option<Expr> = None;
    let mut plane: Vec<PrimExpr> = Vec::new();
    for kd in 0..depth.kernel {
        let wk = super::slice_axis(cx, w.clone(), 2, kd, kd + 1)?;
        let wk_dims = dims_of(&[w_dims[0], w_dims[1], w_dims[3], w_dims[4]]);
        let wk = cx.call("relax.reshape", vec![wk, shape(wk_dims)], Attrs::new())?;
        let y = cx.call(
            "relax.nn.conv2d_transpose",
            vec![batch.clone(), wk],
            attrs2d.clone(),
        )?;
        // (N·D, O, OH, OW) as (N, D, 1, O·OH·OW): one row per input depth.
        let (y_dims, _) = cx.tensor(&y)?;
        plane = y_dims[1..].to_vec();
        let rest = super::product(&plane);
        let rows = vec![
            PrimExpr::int(n),
            PrimExpr::int(d),
            PrimExpr::int(1),
            rest.clone(),
        ];
        let mut y = cx.call("relax.reshape", vec![y, shape(rows)], Attrs::new())?;
        if depth.stride > 1 {
            // stride - 1 zero rows after each input depth, the last ones dropped.
            y = pad(cx, y, vec![0, 0, 0, 0, 0, depth.stride - 1, 0, 0])?;
            let spread = vec![
                PrimExpr::int(n),
                PrimExpr::int(d * depth.stride),
                rest.clone(),
            ];
            y = cx.call("relax.reshape", vec![y, shape(spread)], Attrs::new())?;
            y = super::slice_axis(cx, y, 1, 0, spread_len)?;
        } else {
            let spread = vec![PrimExpr::int(n), PrimExpr::int(d), rest.clone()];
            y = cx.call("relax.reshape", vec![y, shape(spread)], Attrs::new())?;
        }
        let shift = kd * depth.dilation;
        y = pad(cx, y, vec![0, 0, shift, full - spread_len - shift, 0, 0])?;
        acc = Some(match acc {
            Some(a) => cx.op2("relax.add", a, y)?,
            None => y,
        });
    }
    let y = acc.ok_or_else(|| cx.error("the kernel has no depth"))?;
    let y = super::slice_axis(cx, y, 1, depth.before, full - depth.after)?;
    let mut out = vec![PrimExpr::int(n), PrimExpr::int(od)];
    out.extend(plane);
    let y = cx.call("relax.reshape", vec![y, shape(out)], Attrs::new())?;
    cx.call(
        "relax.permute_dims",
        vec![y],
        Attrs::from_pairs([("axes", ints([0, 2, 1, 3, 4]))]),
    )
}

/// `x` padded with zeros by `width` (before and after, per axis).
fn pad(cx: &mut Ctx, x: Expr, width: Vec<i64>) -> Result<Expr, Error> {
    let attrs = Attrs::from_pairs([
        ("pad_width", ints(width)),
        ("pad_value", AttrValue::Float(0.0)),
        ("pad_mode", AttrValue::Str("constant".into())),
    ]);
    cx.call("relax.nn.pad", vec![x], attrs)
}
