//! `DepthToSpace` and `SpaceToDepth`: blocks of `b × b` pixels moved
//! between the spatial axes and the channels of 4-d `(N, C, H, W)` data,
//! each a `reshape` to 6-d, a `permute_dims` and a `reshape` back (exact:
//! only elements move).
//!
//! 1. `DepthToSpace` `DCR` (the default) reads the channels as
//!    `(b, b, C/b²)`, `CRD` as `(C/b², b, b)`; the output is
//!    `(N, C/b², H·b, W·b)`.
//! 2. `SpaceToDepth` reads the spatial axes as `(H/b, b, W/b, b)`; `DCR`
//!    (the default) puts the block offsets before the channel, `CRD`
//!    (opset 28) after it; the output is `(N, C·b², H/b, W/b)`.

use super::{ints, shape, Ctx};
use relax_core::ir::{Attrs, Expr, PrimExpr};
use relax_runtime::Error;

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
