//! `TensorScatter` (opset 24): a key-value cache update, written as the
//! registry's `scatter_elements`.
//!
//! `update` (the cache's shape but `seq` long on `axis`, default -2) is
//! written into `past_cache` (`max_seq` long there) for each batch entry
//! `b` (axis 0) from position `write_indices[b]` (default 0) on: element
//! `i` along the axis lands at `write_indices[b] + i`, taken modulo
//! `max_seq` in `circular` mode. The indices are that sum, broadcast to
//! `update`'s shape.

use super::{normalize_axes, shape, Ctx};
use relax_core::ir::{AttrValue, Attrs, Expr, PrimExpr};
use relax_runtime::{DataType, Error};

pub fn tensor_scatter(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&["axis", "mode"])?;
    let cache = cx.input(0)?;
    let update = cx.input(1)?;
    let (dims, _) = cx.tensor(&cache)?;
    let (udims, _) = cx.tensor(&update)?;
    let ndim = dims.len();
    if udims.len() != ndim {
        return Err(cx.error(format!(
            "update has rank {}, past_cache rank {ndim}",
            udims.len()
        )));
    }
    let axis = normalize_axes(cx, &[cx.node.int_or("axis", -2)?], ndim)?[0];
    if axis == 0 {
        return Err(cx.error("axis must not be the batch axis 0"));
    }
    let circular = match cx.node.string("mode")?.as_deref().unwrap_or("linear") {
        "linear" => false,
        "circular" => true,
        other => {
            return Err(cx.error(format!(
                "attribute `mode` must be \"linear\" or \"circular\", found \"{other}\""
            )))
        }
    };
    let i64t = DataType::i64();
    let ones = |k: usize, d: PrimExpr| -> Vec<PrimExpr> {
        (0..ndim)
            .map(|j| if j == k { d.clone() } else { PrimExpr::int(1) })
            .collect()
    };
    // The positions along the axis, shaped (1, …, seq, …, 1).
    let seq = udims[axis].clone();
    let attrs = Attrs::from_pairs([("dtype", AttrValue::DataType(i64t))]);
    let pos = cx.call(
        "relax.arange",
        vec![
            Expr::prim_value(PrimExpr::int(0)),
            Expr::prim_value(seq.clone()),
            Expr::prim_value(PrimExpr::int(1)),
        ],
        attrs,
    )?;
    let pos = cx.call(
        "relax.reshape",
        vec![pos, shape(ones(axis, seq))],
        Attrs::new(),
    )?;
    let idx = match cx.opt_input(2)? {
        Some(w) => {
            let w = cx.astype(w, i64t)?;
            let w = cx.call(
                "relax.reshape",
                vec![w, shape(ones(0, dims[0].clone()))],
                Attrs::new(),
            )?;
            cx.op2("relax.add", w, pos)?
        }
        None => pos,
    };
    let idx = if circular {
        let n = cx.dim_tensor(dims[axis].clone())?;
        cx.op2("relax.floor_mod", idx, n)?
    } else {
        idx
    };
    let idx = cx.call("relax.broadcast_to", vec![idx, shape(udims)], Attrs::new())?;
    let attrs = Attrs::from_pairs([
        ("axis", AttrValue::Int(axis as i64)),
        ("reduction", AttrValue::from("update")),
    ]);
    Ok(vec![cx.call(
        "relax.scatter_elements",
        vec![cache, idx, update],
        attrs,
    )?])
}
