//! `CenterCropPad`: each listed axis cropped or zero-padded to its target
//! length around the center.
//!
//! Output index `i` along an axis of length `L` with target `S` reads the
//! input at `i + trunc((L - S) / 2)` (ONNX's offset: the crop starts at
//! `floor((L - S)/2)`, the padding before is `floor((S - L)/2)`), or is 0
//! where that falls outside the input. The target may be computed at run
//! time (it is bound to symbolic dims), so each axis is a `take` of the
//! source indices (clamped into the input) and a `where` over the ones
//! inside: exact, with no branch on whether the axis is cropped or padded.

use super::{normalize_axes, Ctx};
use relax_core::ir::{AttrValue, Attrs, Expr, PrimExpr};
use relax_runtime::{DataType, Error};

/// The converter (module docs).
pub fn center_crop_pad(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&["axes"])?;
    let mut y = cx.input(0)?;
    let (dims, dtype) = cx.tensor(&y)?;
    let rank = dims.len();
    let axes = match cx.node.ints("axes")? {
        Some(a) => normalize_axes(cx, &a, rank)?,
        None => (0..rank).collect(),
    };
    if (1..axes.len()).any(|i| axes[..i].contains(&axes[i])) {
        return Err(cx.error(format!("axes {axes:?} repeat an axis")));
    }
    let target = cx
        .dims_input(1)?
        .ok_or_else(|| cx.error("input 1 (shape) is required"))?;
    if target.len() != axes.len() {
        return Err(cx.error(format!(
            "shape has {} values for {} axes",
            target.len(),
            axes.len()
        )));
    }
    let i64t = DataType::i64();
    for (&a, s) in axes.iter().zip(&target) {
        let l = &dims[a];
        if s.as_int()
            .is_some_and(|v| !(0..=i32::MAX as i64).contains(&v))
        {
            return Err(cx.error(format!("target length {s} is not in 0..2^31")));
        }
        if let (Some(s), Some(l)) = (s.as_int(), l.as_int()) {
            if s == l {
                continue;
            }
        }
        // offset = trunc((L - S) / 2), as int64 scalar tensors.
        let lt = cx.dim_tensor(l.clone())?;
        let st = cx.dim_tensor(s.clone())?;
        let diff = cx.op2("relax.subtract", lt.clone(), st)?;
        let two = cx.scalar(2.0, i64t)?;
        let zero = cx.scalar(0.0, i64t)?;
        let down = cx.op2("relax.floor_divide", diff.clone(), two.clone())?;
        let neg = cx.op1("relax.negative", diff.clone())?;
        let up = cx.op2("relax.floor_divide", neg, two)?;
        let up = cx.op1("relax.negative", up)?;
        let cropping = cx.op2("relax.greater_equal", diff, zero.clone())?;
        let offset = cx.call("relax.where", vec![cropping, down, up], Attrs::new())?;
        // Source indices and which of them are inside the input.
        let attrs = Attrs::from_pairs([("dtype", AttrValue::DataType(i64t))]);
        let idx = cx.call(
            "relax.arange",
            vec![
                Expr::prim_value(PrimExpr::int(0)),
                Expr::prim_value(s.clone()),
                Expr::prim_value(PrimExpr::int(1)),
            ],
            attrs,
        )?;
        let src = cx.op2("relax.add", idx, offset)?;
        let ge = cx.op2("relax.greater_equal", src.clone(), zero.clone())?;
        let lt_l = cx.op2("relax.less", src.clone(), lt)?;
        let inside = cx.op2("relax.logical_and", ge, lt_l)?;
        let clamped = cx.call("relax.where", vec![inside.clone(), src, zero], Attrs::new())?;
        let take = Attrs::from_pairs([("axis", AttrValue::Int(a as i64))]);
        y = cx.call("relax.take", vec![y, clamped], take)?;
        let mut mask_dims = vec![PrimExpr::int(1); rank];
        mask_dims[a] = s.clone();
        let mask = cx.call(
            "relax.reshape",
            vec![inside, super::shape(mask_dims)],
            Attrs::new(),
        )?;
        let fill = cx.scalar(0.0, dtype)?;
        y = cx.call("relax.where", vec![mask, y, fill], Attrs::new())?;
    }
    Ok(vec![y])
}
