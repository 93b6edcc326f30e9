//! Blocks of pixels moved between the spatial axes and the channels.
//! `DepthToSpace` and `SpaceToDepth` move `b × b` blocks of 4-d
//! `(N, C, H, W)` data, each a `reshape` to 6-d, a `permute_dims` and a
//! `reshape` back (exact: only elements move); `Col2Im` sums columns of
//! sliding blocks back into images.
//!
//! 1. `DepthToSpace` `DCR` (the default) reads the channels as
//!    `(b, b, C/b²)`, `CRD` as `(C/b², b, b)`; the output is
//!    `(N, C/b², H·b, W·b)`.
//! 2. `SpaceToDepth` reads the spatial axes as `(H/b, b, W/b, b)`; `DCR`
//!    (the default) puts the block offsets before the channel, `CRD`
//!    (opset 28) after it; the output is `(N, C·b², H/b, W/b)`.
//! 3. `Col2Im`: input `(N, C·∏block, L)`, any number of spatial axes;
//!    element `(n, r, l)`, with `r` read row-major as (channel, offset per
//!    axis) and `l` as the block position per axis, lands at
//!    `position·stride - pad_begin + offset·dilation` per axis. Those
//!    targets are computed as int64 tensors (so `image_shape` and
//!    `block_shape` may be computed at run time, bound to symbolic dims),
//!    the ones in the padding sent to one extra slot, and the columns
//!    summed by `scatter_elements` with `add` into zeros, the extra slot
//!    sliced off.

use super::{ints, shape, Ctx};
use relax_core::ir::{AttrValue, Attrs, Expr, PrimExpr};
use relax_runtime::{DataType, Error};

/// The input, its 4 dims, the block size and whether the mode is `CRD`.
fn setup(cx: &mut Ctx) -> Result<(Expr, Vec<PrimExpr>, i64, bool), Error> {
    cx.node.only_attrs(&["blocksize", "mode"])?;
    let x = cx.input(0)?;
    let (dims, _) = cx.tensor(&x)?;
    if dims.len() != 4 {
        return Err(cx.error(format!("input must have rank 4, found rank {}", dims.len())));
    }
    let b = cx
        .node
        .int("blocksize")?
        .ok_or_else(|| cx.error("attribute `blocksize` is required"))?;
    if !(1..=i32::MAX as i64).contains(&b) {
        return Err(cx.error(format!("blocksize {b} must be positive")));
    }
    let crd = match cx.node.string("mode")?.as_deref() {
        None | Some("DCR") => false,
        Some("CRD") => true,
        Some(m) => return Err(cx.error(format!("mode `{m}` is not DCR or CRD"))),
    };
    Ok((x, dims, b, crd))
}

/// `d / by`, which must divide exactly when `d` is known.
fn divided(cx: &Ctx, d: &PrimExpr, by: i64, what: &str) -> Result<PrimExpr, Error> {
    match d.as_int() {
        Some(v) if v % by != 0 => Err(cx.error(format!("{what} {v} is not a multiple of {by}"))),
        Some(v) => Ok(PrimExpr::int(v / by)),
        None => Ok(d.clone().floordiv(by)),
    }
}

/// `x` reshaped to `mid`, permuted by `axes`, reshaped to `out`.
fn rearrange(
    cx: &mut Ctx,
    x: Expr,
    mid: Vec<PrimExpr>,
    axes: [i64; 6],
    out: Vec<PrimExpr>,
) -> Result<Vec<Expr>, Error> {
    let y = cx.call("relax.reshape", vec![x, shape(mid)], Attrs::new())?;
    let attrs = Attrs::from_pairs([("axes", ints(axes))]);
    let y = cx.call("relax.permute_dims", vec![y], attrs)?;
    Ok(vec![cx.call(
        "relax.reshape",
        vec![y, shape(out)],
        Attrs::new(),
    )?])
}

/// The converter of `DepthToSpace` (module docs, item 1).
pub fn depth_to_space(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let (x, d, b, crd) = setup(cx)?;
    let c = divided(cx, &d[1], b * b, "the channel count")?;
    let bd = PrimExpr::int(b);
    let (n, h, w) = (d[0].clone(), d[2].clone(), d[3].clone());
    let out = vec![n.clone(), c.clone(), h.clone() * b, w.clone() * b];
    if crd {
        let mid = vec![n, c, bd.clone(), bd, h, w];
        rearrange(cx, x, mid, [0, 1, 4, 2, 5, 3], out)
    } else {
        let mid = vec![n, bd.clone(), bd, c, h, w];
        rearrange(cx, x, mid, [0, 3, 4, 1, 5, 2], out)
    }
}

/// The converter of `SpaceToDepth` (module docs, item 2).
pub fn space_to_depth(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let (x, d, b, crd) = setup(cx)?;
    let h = divided(cx, &d[2], b, "the height")?;
    let w = divided(cx, &d[3], b, "the width")?;
    let bd = PrimExpr::int(b);
    let (n, c) = (d[0].clone(), d[1].clone());
    let mid = vec![n.clone(), c.clone(), h.clone(), bd.clone(), w.clone(), bd];
    let out = vec![n, c * (b * b), h, w];
    let axes = if crd {
        [0, 1, 3, 5, 2, 4]
    } else {
        [0, 3, 5, 1, 2, 4]
    };
    rearrange(cx, x, mid, axes, out)
}

/// `Col2Im`: the columns `(N, C·∏block, L)` of sliding blocks summed back
/// into images `(N, C, image…)` (module docs, item 3).
pub fn col2im(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&["dilations", "pads", "strides"])?;
    let x = cx.input(0)?;
    let (dims, dtype) = cx.tensor(&x)?;
    if dims.len() != 3 {
        return Err(cx.error(format!("input must have rank 3, found rank {}", dims.len())));
    }
    let image = cx
        .dims_input(1)?
        .ok_or_else(|| cx.error("input 1 (image_shape) is required"))?;
    let block = cx
        .dims_input(2)?
        .ok_or_else(|| cx.error("input 2 (block_shape) is required"))?;
    let k = image.len();
    if k == 0 || block.len() != k {
        return Err(cx.error(format!(
            "image_shape and block_shape must have the same positive length, found {} and {}",
            k,
            block.len()
        )));
    }
    let strides = cx.node.ints("strides")?.unwrap_or_else(|| vec![1; k]);
    let dilations = cx.node.ints("dilations")?.unwrap_or_else(|| vec![1; k]);
    let pads = cx.node.ints("pads")?.unwrap_or_else(|| vec![0; 2 * k]);
    if strides.len() != k || dilations.len() != k || pads.len() != 2 * k {
        return Err(cx.error(format!(
            "strides {strides:?}, dilations {dilations:?} and pads {pads:?} must have {k}, {k} and {} values",
            2 * k
        )));
    }
    if strides
        .iter()
        .chain(&dilations)
        .any(|&v| !(1..=i32::MAX as i64).contains(&v))
        || pads.iter().any(|&p| !(0..=i32::MAX as i64).contains(&p))
    {
        return Err(cx.error("strides and dilations must be positive and pads non-negative"));
    }
    let i64t = DataType::i64();
    let bprod = block.iter().fold(PrimExpr::int(1), |a, b| a * b.clone());
    let c = match (dims[1].as_int(), bprod.as_int()) {
        (Some(cb), Some(b)) if b > 0 && cb % b == 0 => PrimExpr::int(cb / b),
        (Some(cb), Some(b)) => {
            return Err(cx.error(format!(
                "the {cb} input channels are not a multiple of the block size {b}"
            )))
        }
        _ => dims[1].clone().floordiv(bprod.clone()),
    };
    // Blocks per spatial axis: (image + pads - span) / stride + 1.
    let counts: Vec<PrimExpr> = (0..k)
        .map(|a| {
            let span = (block[a].clone() - 1) * dilations[a] + 1;
            (image[a].clone() + (pads[a] + pads[a + k]) - span).floordiv(strides[a]) + 1
        })
        .collect();
    let blocks = counts.iter().fold(PrimExpr::int(1), |a, b| a * b.clone());
    let blocks = relax_core::arith::Analyzer::new().simplify(&blocks);
    if let (Some(l), Some(b)) = (dims[2].as_int(), blocks.as_int()) {
        if l != b {
            return Err(cx.error(format!(
                "the input has {l} columns, and the image and block shapes give {b} blocks"
            )));
        }
    }
    // Row r = (channel, block offsets), column l = (block positions), both
    // row-major; a 1-d int64 arange each.
    let arange = |cx: &mut Ctx, n: PrimExpr| {
        let attrs = Attrs::from_pairs([("dtype", AttrValue::DataType(i64t))]);
        cx.call(
            "relax.arange",
            vec![
                Expr::prim_value(PrimExpr::int(0)),
                Expr::prim_value(n),
                Expr::prim_value(PrimExpr::int(1)),
            ],
            attrs,
        )
    };
    let rows = arange(cx, dims[1].clone())?;
    let rows = cx.call(
        "relax.reshape",
        vec![rows, shape(vec![dims[1].clone(), PrimExpr::int(1)])],
        Attrs::new(),
    )?;
    let cols = arange(cx, dims[2].clone())?;
    // Digits of a row-major index over `radices`, last first.
    let digits = |cx: &mut Ctx, mut v: Expr, radices: &[PrimExpr]| -> Result<Vec<Expr>, Error> {
        let mut out = vec![];
        for r in radices.iter().rev() {
            let rt = cx.dim_tensor(r.clone())?;
            out.push(cx.op2("relax.floor_mod", v.clone(), rt.clone())?);
            v = cx.op2("relax.floor_divide", v, rt)?;
        }
        out.push(v);
        out.reverse();
        Ok(out)
    };
    let r = digits(cx, rows, &block)?; // [channel, offset per axis]
    let l = digits(cx, cols, &counts)?; // [extra (0), position per axis]
    let zero = cx.scalar(0.0, i64t)?;
    let mut flat = r[0].clone(); // the channel
    let mut inside: Option<Expr> = None;
    for a in 0..k {
        // Position along axis a: l_a·stride - pad_begin + offset_a·dilation.
        let s = cx.scalar(strides[a] as f64, i64t)?;
        let d = cx.scalar(dilations[a] as f64, i64t)?;
        let p = cx.scalar(pads[a] as f64, i64t)?;
        let at = cx.op2("relax.multiply", l[a + 1].clone(), s)?;
        let at = cx.op2("relax.subtract", at, p)?;
        let off = cx.op2("relax.multiply", r[a + 1].clone(), d)?;
        let pos = cx.op2("relax.add", at, off)?;
        let len = cx.dim_tensor(image[a].clone())?;
        let ge = cx.op2("relax.greater_equal", pos.clone(), zero.clone())?;
        let lt = cx.op2("relax.less", pos.clone(), len.clone())?;
        let ok = cx.op2("relax.logical_and", ge, lt)?;
        inside = Some(match inside {
            Some(i) => cx.op2("relax.logical_and", i, ok)?,
            None => ok,
        });
        flat = cx.op2("relax.multiply", flat, len)?;
        flat = cx.op2("relax.add", flat, pos)?;
    }
    // Taps in the padding go to one extra slot past the images, dropped.
    let plane = image.iter().fold(c.clone(), |a, d| a * d.clone());
    let dump = cx.dim_tensor(plane.clone())?;
    let inside = inside.ok_or_else(|| cx.error("no spatial axis"))?;
    let target = cx.call("relax.where", vec![inside, flat, dump], Attrs::new())?;
    let n = dims[0].clone();
    let cl = vec![n.clone(), dims[1].clone() * dims[2].clone()];
    let full = vec![n.clone(), dims[1].clone(), dims[2].clone()];
    let target = cx.call(
        "relax.broadcast_to",
        vec![target, shape(full)],
        Attrs::new(),
    )?;
    let target = cx.call(
        "relax.reshape",
        vec![target, shape(cl.clone())],
        Attrs::new(),
    )?;
    let updates = cx.call("relax.reshape", vec![x, shape(cl)], Attrs::new())?;
    let attrs = Attrs::from_pairs([("dtype", AttrValue::DataType(dtype))]);
    let zeros = cx.call(
        "relax.zeros",
        vec![shape(vec![n.clone(), plane.clone() + 1])],
        attrs,
    )?;
    let attrs = Attrs::from_pairs([
        ("axis", AttrValue::Int(1)),
        ("reduction", AttrValue::from("add")),
    ]);
    let y = cx.call(
        "relax.scatter_elements",
        vec![zeros, target, updates],
        attrs,
    )?;
    let slice = Attrs::from_pairs([
        ("axes", ints([1])),
        ("begin", ints([0])),
        ("end", AttrValue::Array(vec![AttrValue::PrimExpr(plane)])),
        ("strides", ints([1])),
    ]);
    let y = cx.call("relax.strided_slice", vec![y], slice)?;
    let mut out = vec![n, c];
    out.extend(image);
    Ok(vec![cx.call(
        "relax.reshape",
        vec![y, shape(out)],
        Attrs::new(),
    )?])
}
