//! `GridSample` and `AffineGrid` as `image.grid_sample` and
//! `image.affine_grid`, whose grids are laid out with the coordinates on
//! axis 1 (`(N, 2, H, W)`, `(N, 3, D, H, W)`) where ONNX has them last:
//! the converters move that axis with `permute_dims`.
//!
//! 1. `GridSample`: 4-d and 5-d data (`NCHW`, `NCDHW`); `mode` `linear`
//!    / `bilinear`, `nearest`, `cubic` / `bicubic` (the names before and
//!    after opset 20), `padding_mode` and `align_corners` pass through.
//! 2. `AffineGrid`: 2-d only (`(N, 2, 3)` matrices, `size` `(N, C, H,
//!    W)`, possibly computed at run time: its dims are bound to symbolic
//!    dims); `align_corners` passes through.

use super::{ints, shape, Ctx};
use relax_core::ir::{AttrValue, Attrs, Expr};
use relax_runtime::Error;

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
    if tdims.len() != 3 || tdims[1].as_int() != Some(2) || tdims[2].as_int() != Some(3) {
        return Err(cx.error(format!(
            "only 2-d grids are supported: theta must be (N, 2, 3), found {}",
            relax_core::ir::struct_info::fmt_dims(&tdims)
        )));
    }
    let size = cx
        .dims_input(1)?
        .ok_or_else(|| cx.error("input 1 (size) is required"))?;
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
