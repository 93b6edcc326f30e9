//! The `ai.onnx.ml` domain's converters ([`CONVERTERS`], by op type):
//! `Binarizer` and `ArrayFeatureExtractor`.
//!
//! 1. `Binarizer` is `x > threshold` as 1 or 0 in `x`'s type (NaN gives 0).
//! 2. `ArrayFeatureExtractor` takes the indices (`int64`) along the last
//!    axis: `(…, n)` gives `(…, k)`, and a 1-d input gives `(1, k)`, as the
//!    ONNX-ML spec writes it.

use super::{shape, Converter, Ctx};
use relax_core::ir::{AttrValue, Attrs, Expr, PrimExpr};
use relax_runtime::Error;

/// Every `ai.onnx.ml` converter, by op type.
pub const CONVERTERS: &[(&str, Converter)] = &[
    ("Binarizer", binarizer),
    ("ArrayFeatureExtractor", array_feature_extractor),
];

/// The `ai.onnx.ml` converter of an op type.
pub fn lookup(op_type: &str) -> Option<Converter> {
    CONVERTERS
        .iter()
        .find(|(name, _)| *name == op_type)
        .map(|(_, f)| *f)
}

fn binarizer(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&["threshold"])?;
    let x = cx.input(0)?;
    let (_, dtype) = cx.tensor(&x)?;
    if !dtype.is_float() && !dtype.is_integer() || dtype.is_bool() {
        return Err(cx.error(format!("the input must be numeric, found {dtype}")));
    }
    let threshold = f64::from(cx.node.float_or("threshold", 0.0)?);
    let t = cx.scalar(threshold, dtype)?;
    let above = cx.op2("relax.greater", x, t)?;
    Ok(vec![cx.astype(above, dtype)?])
}

fn array_feature_extractor(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&[])?;
    let x = cx.input(0)?;
    let indices = cx.input(1)?;
    let (dims, _) = cx.tensor(&x)?;
    let (idims, idt) = cx.tensor(&indices)?;
    if !idt.is_integer() || idt.is_bool() {
        return Err(cx.error(format!("the indices must be integers, found {idt}")));
    }
    if dims.is_empty() {
        return Err(cx.error("the input must have rank 1 or more, found a scalar"));
    }
    // The indices as one list, whatever their shape.
    let k = super::product(&idims);
    let indices = cx.call(
        "relax.reshape",
        vec![indices, shape(vec![k.clone()])],
        Attrs::new(),
    )?;
    let attrs = Attrs::from_pairs([("axis", AttrValue::Int(-1))]);
    let y = cx.call("relax.take", vec![x, indices], attrs)?;
    if dims.len() > 1 {
        return Ok(vec![y]);
    }
    Ok(vec![cx.call(
        "relax.reshape",
        vec![y, shape(vec![PrimExpr::int(1), k])],
        Attrs::new(),
    )?])
}
