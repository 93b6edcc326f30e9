//! `ReverseSequence`: the first `sequence_lens[b]` steps along the time
//! axis of each batch entry `b` reversed, the rest kept, as one
//! `gather_elements` along the time axis with the source position
//! `where(t < len, len - 1 - t, t)` (broadcast over the other axes).

use super::{normalize_axes, Ctx};
use relax_core::ir::{AttrValue, Attrs, Expr, PrimExpr};
use relax_runtime::{DataType, Error};

/// `ReverseSequence(input, sequence_lens)` with `batch_axis` and
/// `time_axis` (0 and 1, in either order).
pub fn reverse_sequence(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&["batch_axis", "time_axis"])?;
    let x = cx.input(0)?;
    let lens = cx.input(1)?;
    let (dims, _) = cx.tensor(&x)?;
    if dims.len() < 2 {
        return Err(cx.error(format!(
            "input must have rank 2 or more, not {}",
            dims.len()
        )));
    }
    let batch_axis = normalize_axes(cx, &[cx.node.int_or("batch_axis", 1)?], dims.len())?[0];
    let time_axis = normalize_axes(cx, &[cx.node.int_or("time_axis", 0)?], dims.len())?[0];
    if batch_axis > 1 || time_axis > 1 || batch_axis == time_axis {
        return Err(cx.error(format!(
            "batch_axis {batch_axis} and time_axis {time_axis} must be 0 and 1, in either order"
        )));
    }
    let (ldims, ldtype) = cx.tensor(&lens)?;
    if ldims.len() != 1 || !ldtype.is_integer() {
        return Err(cx.error("sequence_lens must be a 1-d integer tensor"));
    }
    // Both as int64, shaped to broadcast against the input: the time
    // positions along the time axis, the lengths along the batch axis.
    let along = |axis: usize, n: PrimExpr| -> Vec<PrimExpr> {
        (0..dims.len())
            .map(|k| {
                if k == axis {
                    n.clone()
                } else {
                    PrimExpr::int(1)
                }
            })
            .collect()
    };
    let t = cx.positions(dims[time_axis].clone(), true)?;
    let t = cx.call(
        "relax.reshape",
        vec![t, super::shape(along(time_axis, dims[time_axis].clone()))],
        Attrs::new(),
    )?;
    let lens = cx.astype(lens, DataType::i64())?;
    let lens = cx.call(
        "relax.reshape",
        vec![
            lens,
            super::shape(along(batch_axis, dims[batch_axis].clone())),
        ],
        Attrs::new(),
    )?;
    let inside = cx.op2("relax.less", t.clone(), lens.clone())?;
    let one = cx.scalar(1.0, DataType::i64())?;
    let last = cx.op2("relax.subtract", lens, one)?;
    let mirrored = cx.op2("relax.subtract", last, t.clone())?;
    let src = cx.call("relax.where", vec![inside, mirrored, t], Attrs::new())?;
    let src = cx.call(
        "relax.broadcast_to",
        vec![src, super::shape(dims.clone())],
        Attrs::new(),
    )?;
    let attrs = Attrs::from_pairs([("axis", AttrValue::Int(time_axis as i64))]);
    Ok(vec![cx.call(
        "relax.gather_elements",
        vec![x, src],
        attrs,
    )?])
}
