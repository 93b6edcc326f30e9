//! Searching and sorting: `TopK`.
//!
//! `TopK` is the registry's `topk` (values and `int64` indices; ties keep
//! the lower index, as ONNX requires). Its `K` is an input from opset 10
//! on; a constant one is the op's `k`, and one computed at run time is
//! bound to a fresh dim (`tensor_to_shape`, `match_cast`) and cut from the
//! whole axis sorted (`k = 0`) with a `strided_slice`: the output's length
//! along the axis is that dim, clamped into the axis.

use super::{ints, Ctx};
use relax_core::ir::{AttrValue, Attrs, Expr, PrimExpr};
use relax_runtime::{DataType, Error};

pub fn top_k(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let (dims, _) = cx.tensor(&x)?;
    let axis = cx.node.int_or("axis", -1)?;
    let a = super::normalize_axes(cx, &[axis], dims.len())?[0];
    let largest = cx.node.int_or("largest", 1)? != 0;
    let topk = |cx: &mut Ctx, x: Expr, k: i64| -> Result<Expr, Error> {
        cx.call(
            "relax.topk",
            vec![x],
            Attrs::from_pairs([
                ("k", AttrValue::Int(k)),
                ("axis", AttrValue::Int(a as i64)),
                ("ret_type", AttrValue::Str("both".into())),
                ("largest", AttrValue::Bool(largest)),
                ("dtype", AttrValue::DataType(DataType::i64())),
            ]),
        )
    };
    let k = if cx.opset < 10 {
        Some(cx.node.int_or("k", -1)?)
    } else if cx.is_computed(1)? {
        None
    } else {
        let k = cx
            .ints_input(1)?
            .ok_or_else(|| cx.error("the K input is required"))?;
        match k.as_slice() {
            [k] => Some(*k),
            _ => return Err(cx.error(format!("K must hold one value, found {k:?}"))),
        }
    };
    if let Some(k) = k {
        if k < 0 {
            return Err(cx.error(format!("K = {k} is negative")));
        }
        if k == 0 {
            // An empty result along the axis: the whole sort, cut to 0.
            let both = topk(cx, x, 0)?;
            return cut(cx, both, a, PrimExpr::int(0));
        }
        let both = topk(cx, x, k)?;
        return Ok(vec![cx.item(&both, 0)?, cx.item(&both, 1)?]);
    }
    let kt = cx.input(1)?;
    let kt = cx.astype(kt, DataType::i64())?;
    let kt = cx.call(
        "relax.reshape",
        vec![kt, super::shape(vec![PrimExpr::int(1)])],
        Attrs::new(),
    )?;
    let k = cx.bind_data_dims(kt)?.remove(0);
    let both = topk(cx, x, 0)?;
    cut(cx, both, a, k)
}

/// The first `k` along `axis` of both fields of `topk`'s result.
fn cut(cx: &mut Ctx, both: Expr, axis: usize, k: PrimExpr) -> Result<Vec<Expr>, Error> {
    let attrs = Attrs::from_pairs([
        ("axes", ints([axis as i64])),
        ("begin", ints([0])),
        ("end", AttrValue::Array(vec![AttrValue::PrimExpr(k)])),
    ]);
    let mut out = Vec::new();
    for i in 0..2 {
        let f = cx.item(&both, i)?;
        out.push(cx.call("relax.strided_slice", vec![f], attrs.clone())?);
    }
    Ok(out)
}
