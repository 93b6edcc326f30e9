//! `GridSample` and `AffineGrid` as `image.grid_sample` and
//! `image.affine_grid`, whose grids are laid out with the coordinates on
//! axis 1 (`(N, 2, H, W)`, `(N, 3, D, H, W)`) where ONNX has them last:
//! the converters move that axis with `permute_dims`.
//!
//! 1. `GridSample`: 4-d and 5-d data (`NCHW`, `NCDHW`); `mode` `linear`
//!    / `bilinear`, `nearest`, `cubic` / `bicubic` (the names before and
//!    after opset 20), `padding_mode` and `align_corners` pass through.
//! 2. `AffineGrid`: 2-d (`(N, 2, 3)` matrices, `size` `(N, C, H, W)`) is
//!    `image.affine_grid`; 3-d (`(N, 3, 4)`, `size` `(N, C, D, H, W)`),
//!    which the registry op does not cover, is written out: the base
//!    coordinates of each axis (`-1 + 2j/(L - 1)` with `align_corners`,
//!    `-1` when `L` is 1, else `-1 + (2j + 1)/L`) broadcast to
//!    `(D, H, W)`, stacked with ones as `(x, y, z, 1)` rows and multiplied
//!    by the transposed matrices. `size` may be computed at run time (its
//!    dims are bound to symbolic dims).

use super::{ints, shape, Ctx};
use relax_core::ir::{AttrValue, Attrs, Expr, PrimExpr};
use relax_runtime::{DataType, Error};

/// `x` with its axes in the order `axes`.
fn permute(cx: &mut Ctx, x: Expr, axes: &[i64]) -> Result<Expr, Error> {
    let attrs = Attrs::from_pairs([("axes", ints(axes.iter().copied()))]);
    cx.call("relax.permute_dims", vec![x], attrs)
}

/// The converter of `GridSample` (module docs, item 1).
pub fn grid_sample(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node
        .only_attrs(&["mode", "padding_mode", "align_corners"])?;
    let x = cx.input(0)?;
    let grid = cx.input(1)?;
    let (dims, _) = cx.tensor(&x)?;
    let (gdims, _) = cx.tensor(&grid)?;
    let (layout, to_channels): (&str, &[i64]) = match dims.len() {
        4 => ("NCHW", &[0, 3, 1, 2]),
        5 => ("NCDHW", &[0, 4, 1, 2, 3]),
        r => return Err(cx.error(format!("X must have rank 4 or 5, found rank {r}"))),
    };
    if gdims.len() != dims.len() {
        return Err(cx.error(format!(
            "grid must have rank {} as X has, found rank {}",
            dims.len(),
            gdims.len()
        )));
    }
    let mode = cx.node.string("mode")?.unwrap_or_else(|| "bilinear".into());
    let method = match mode.as_str() {
        "linear" | "bilinear" => "bilinear",
        "nearest" => "nearest",
        "cubic" | "bicubic" => "bicubic",
        m => return Err(cx.error(format!("mode `{m}` is not one of linear, nearest, cubic"))),
    };
    let padding = cx
        .node
        .string("padding_mode")?
        .unwrap_or_else(|| "zeros".into());
    let align = cx.node.int_or("align_corners", 0)? != 0;
    let grid = permute(cx, grid, to_channels)?;
    let attrs = Attrs::from_pairs([
        ("method", AttrValue::Str(method.into())),
        ("layout", AttrValue::Str(layout.into())),
        ("padding_mode", AttrValue::Str(padding)),
        ("align_corners", AttrValue::Bool(align)),
    ]);
    Ok(vec![cx.call(
        "relax.image.grid_sample",
        vec![x, grid],
        attrs,
    )?])
}

/// The converter of `AffineGrid` (module docs, item 2).
pub fn affine_grid(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&["align_corners"])?;
    let theta = cx.input(0)?;
    let (tdims, _) = cx.tensor(&theta)?;
    let rows = match tdims.as_slice() {
        [_, r, c] if r.as_int() == Some(2) && c.as_int() == Some(3) => 2,
        [_, r, c] if r.as_int() == Some(3) && c.as_int() == Some(4) => 3,
        _ => {
            return Err(cx.error(format!(
                "theta must be (N, 2, 3) or (N, 3, 4), found {}",
                relax_core::ir::struct_info::fmt_dims(&tdims)
            )))
        }
    };
    let size = cx
        .dims_input(1)?
        .ok_or_else(|| cx.error("input 1 (size) is required"))?;
    if rows == 3 {
        if size.len() != 5 {
            return Err(cx.error(format!(
                "size must have 5 values (N, C, D, H, W) for 3-d grids, found {}",
                size.len()
            )));
        }
        let align = cx.node.int_or("align_corners", 0)? != 0;
        return Ok(vec![affine_grid_3d(cx, theta, &size[2..], align)?]);
    }
    if size.len() != 4 {
        return Err(cx.error(format!(
            "size must have 4 values (N, C, H, W) for 2-d grids, found {}",
            size.len()
        )));
    }
    let align = cx.node.int_or("align_corners", 0)? != 0;
    let attrs = Attrs::from_pairs([("align_corners", AttrValue::Bool(align))]);
    let g = cx.call(
        "relax.image.affine_grid",
        vec![theta, shape(vec![size[2].clone(), size[3].clone()])],
        attrs,
    )?;
    Ok(vec![permute(cx, g, &[0, 2, 3, 1])?])
}

/// The base coordinates `(L,)` of an axis of length `l` (module docs,
/// item 2), in `dtype`.
fn base(cx: &mut Ctx, l: &PrimExpr, align: bool, dtype: DataType) -> Result<Expr, Error> {
    let attrs = Attrs::from_pairs([("dtype", AttrValue::DataType(dtype))]);
    let j = cx.call(
        "relax.arange",
        vec![
            Expr::prim_value(PrimExpr::int(0)),
            Expr::prim_value(l.clone()),
            Expr::prim_value(PrimExpr::int(1)),
        ],
        attrs,
    )?;
    let len = cx.dim_tensor(l.clone())?;
    let len = cx.astype(len, dtype)?;
    let (one, two) = (cx.scalar(1.0, dtype)?, cx.scalar(2.0, dtype)?);
    let minus_one = cx.scalar(-1.0, dtype)?;
    let twice = cx.op2("relax.multiply", j, two)?;
    let step = if align {
        let last = cx.op2("relax.subtract", len.clone(), one.clone())?;
        // With one element the coordinate is -1: divide 0 by 1.
        let more = cx.op2("relax.greater", len, one.clone())?;
        let last = cx.call("relax.where", vec![more, last, one], Attrs::new())?;
        cx.op2("relax.divide", twice, last)?
    } else {
        let centered = cx.op2("relax.add", twice, one)?;
        cx.op2("relax.divide", centered, len)?
    };
    cx.op2("relax.add", step, minus_one)
}

/// The 3-d `AffineGrid` of `theta` `(N, 3, 4)` over `dhw` (module docs,
/// item 2): `(N, D, H, W, 3)`.
fn affine_grid_3d(cx: &mut Ctx, theta: Expr, dhw: &[PrimExpr], align: bool) -> Result<Expr, Error> {
    let (tdims, dtype) = cx.tensor(&theta)?;
    let full = dhw.to_vec();
    let mut cols = Vec::new();
    // x along W, y along H, z along D: axis 2, 1, 0 of (D, H, W).
    for axis in [2usize, 1, 0] {
        let b = base(cx, &dhw[axis], align, dtype)?;
        let mut at = vec![PrimExpr::int(1); 3];
        at[axis] = dhw[axis].clone();
        let b = cx.call("relax.reshape", vec![b, shape(at)], Attrs::new())?;
        let b = cx.call(
            "relax.broadcast_to",
            vec![b, shape(full.clone())],
            Attrs::new(),
        )?;
        cols.push(b);
    }
    let attrs = Attrs::from_pairs([("dtype", AttrValue::DataType(dtype))]);
    cols.push(cx.call("relax.ones", vec![shape(full.clone())], attrs)?);
    let cols = cols
        .into_iter()
        .map(|c| {
            cx.call(
                "relax.expand_dims",
                vec![c],
                Attrs::from_pairs([("axis", ints([3]))]),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let homo = cx.call(
        "relax.concat",
        vec![Expr::tuple(cols)],
        Attrs::from_pairs([("axis", AttrValue::Int(3))]),
    )?;
    let points = full.iter().fold(PrimExpr::int(1), |a, d| a * d.clone());
    let homo = cx.call(
        "relax.reshape",
        vec![homo, shape(vec![points, PrimExpr::int(4)])],
        Attrs::new(),
    )?;
    let t = permute(cx, theta, &[0, 2, 1])?;
    let g = cx.op2("relax.matmul", homo, t)?;
    let mut out = vec![tdims[0].clone()];
    out.extend(full);
    out.push(PrimExpr::int(3));
    cx.call("relax.reshape", vec![g, shape(out)], Attrs::new())
}
