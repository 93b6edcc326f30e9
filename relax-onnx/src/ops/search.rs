//! Searching and sorting: `TopK`, `NonZero`, `Compress`, `Unique`, and
//! `NonMaxSuppression` (at the end).
//!
//! `TopK` is the registry's `topk` (values and `int64` indices; ties keep
//! the lower index, as ONNX requires). Its `K` is an input from opset 10
//! on; a constant one is the op's `k`, and one computed at run time is
//! bound to a fresh dim (`tensor_to_shape`, `match_cast`) and cut from the
//! whole axis sorted (`k = 0`) with a `strided_slice`: the output's length
//! along the axis is that dim, clamped into the axis.
//!
//! `NonZero` is the registry's `nonzero`, whose column count the VM learns
//! when it runs the kernel: the result is bound to `(rank, n)` with a fresh
//! `n` (`match_cast`), so what follows has a symbolic shape. `Compress` is
//! `take` of the input (flattened when no axis is given) at the non-zero
//! positions of the condition. `Unique` is the registry's `unique` with
//! every optional output; the lengths the data decides are bound to one
//! fresh dim, the number of unique values (the inverse indices have one
//! entry per element or slice, known already).

use super::{ints, shape, Ctx};
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

/// `nonzero(x)`, bound to `(rank, n)` with a fresh `n`.
fn nonzero(cx: &mut Ctx, x: Expr) -> Result<(Expr, PrimExpr), Error> {
    let (dims, _) = cx.tensor(&x)?;
    let y = cx.call("relax.nonzero", vec![x], Attrs::new())?;
    let name = cx.node.proto.output.first().map_or("nz", String::as_str);
    let n = relax_core::ir::TirVar::new(format!(
        "{}_count",
        relax_core::printer::dsl::identifier(name)
    ))
    .to_expr();
    let sinfo = relax_core::ir::StructInfo::tensor(
        vec![PrimExpr::int(dims.len() as i64), n.clone()],
        DataType::i64(),
    );
    let v = cx.bb.emit_match_cast(y, sinfo).map_err(|e| cx.error(e))?;
    Ok((Expr::var(&v), n))
}

pub fn non_zero(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    Ok(vec![nonzero(cx, x)?.0])
}

pub fn compress(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let mut x = cx.input(0)?;
    let cond = cx.input(1)?;
    let (cdims, _) = cx.tensor(&cond)?;
    if cdims.len() != 1 {
        return Err(cx.error(format!(
            "the condition must be 1-d, found rank {}",
            cdims.len()
        )));
    }
    let (dims, _) = cx.tensor(&x)?;
    let axis = match cx.node.int("axis")? {
        Some(a) => super::normalize_axes(cx, &[a], dims.len())?[0],
        None => {
            let flat = super::product(&dims);
            x = cx.call("relax.reshape", vec![x, shape(vec![flat])], Attrs::new())?;
            0
        }
    };
    let (idx, n) = nonzero(cx, cond)?;
    let idx = cx.call("relax.reshape", vec![idx, shape(vec![n])], Attrs::new())?;
    Ok(vec![cx.call(
        "relax.take",
        vec![x, idx],
        Attrs::from_pairs([("axis", AttrValue::Int(axis as i64))]),
    )?])
}

pub fn unique(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let (dims, dtype) = cx.tensor(&x)?;
    let axis = match cx.node.int("axis")? {
        Some(a) => Some(super::normalize_axes(cx, &[a], dims.len())?[0]),
        None => None,
    };
    let sorted = cx.node.int_or("sorted", 1)? != 0;
    let all = cx.call(
        "relax.unique",
        vec![x],
        Attrs::from_pairs([
            ("sorted", AttrValue::Bool(sorted)),
            ("return_index", AttrValue::Bool(true)),
            ("return_inverse", AttrValue::Bool(true)),
            ("return_counts", AttrValue::Bool(true)),
            (
                "axis",
                axis.map_or(AttrValue::None, |a| AttrValue::Int(a as i64)),
            ),
        ]),
    )?;
    let name = cx
        .node
        .proto
        .output
        .first()
        .map_or("unique", String::as_str);
    let u = relax_core::ir::TirVar::new(format!(
        "{}_count",
        relax_core::printer::dsl::identifier(name)
    ))
    .to_expr();
    let (y_dims, n) = match axis {
        Some(a) => {
            let mut d = dims.clone();
            d[a] = u.clone();
            (d, dims[a].clone())
        }
        None => (vec![u.clone()], super::product(&dims)),
    };
    let shapes = [
        (y_dims, dtype),
        (vec![u.clone()], DataType::i64()),
        (vec![n], DataType::i64()),
        (vec![u], DataType::i64()),
    ];
    let mut out = Vec::new();
    for (i, (d, dt)) in shapes.into_iter().enumerate() {
        let f = cx.item(&all, i)?;
        let sinfo = relax_core::ir::StructInfo::tensor(d, dt);
        let v = cx.bb.emit_match_cast(f, sinfo).map_err(|e| cx.error(e))?;
        out.push(Expr::var(&v));
    }
    Ok(out)
}

/// `NonMaxSuppression`: the registry's
/// `vision.all_class_non_max_suppression` (ONNX format), its padded rows
/// cut to the count it returns, bound to a fresh dim. Boxes given as
/// centres and sizes (`center_point_box = 1`) become corners first;
/// absent inputs mean no boxes (`max_output_boxes_per_class`), an IoU
/// threshold of 0, and no score threshold (`-inf`).
pub fn non_max_suppression(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let mut boxes = cx.input(0)?;
    let scores = cx.input(1)?;
    let (bdims, fdt) = cx.tensor(&boxes)?;
    if bdims.len() != 3 {
        return Err(cx.error(format!(
            "boxes must have rank 3, found rank {}",
            bdims.len()
        )));
    }
    if cx.node.int_or("center_point_box", 0)? != 0 {
        // [xc, yc, w, h] to [y1, x1, y2, x2].
        let part = |cx: &mut Ctx, b: &Expr, k: i64| -> Result<Expr, Error> {
            cx.call(
                "relax.strided_slice",
                vec![b.clone()],
                Attrs::from_pairs([
                    ("axes", ints([2])),
                    ("begin", ints([k])),
                    ("end", ints([k + 1])),
                ]),
            )
        };
        let (xc, yc) = (part(cx, &boxes, 0)?, part(cx, &boxes, 1)?);
        let (w, h) = (part(cx, &boxes, 2)?, part(cx, &boxes, 3)?);
        let half = cx.scalar(0.5, fdt)?;
        let hw = cx.op2("relax.multiply", w, half.clone())?;
        let hh = cx.op2("relax.multiply", h, half)?;
        let y1 = cx.op2("relax.subtract", yc.clone(), hh.clone())?;
        let x1 = cx.op2("relax.subtract", xc.clone(), hw.clone())?;
        let y2 = cx.op2("relax.add", yc, hh)?;
        let x2 = cx.op2("relax.add", xc, hw)?;
        boxes = cx.call(
            "relax.concat",
            vec![Expr::tuple(vec![y1, x1, y2, x2])],
            Attrs::from_pairs([("axis", AttrValue::Int(2))]),
        )?;
    }
    let one = |cx: &mut Ctx, i: usize, default: f64, dtype: DataType| -> Result<Expr, Error> {
        let v = match cx.opt_input(i)? {
            Some(v) => cx.astype(v, dtype)?,
            None => cx.scalar(default, dtype)?,
        };
        cx.call(
            "relax.reshape",
            vec![v, shape(vec![PrimExpr::int(1)])],
            Attrs::new(),
        )
    };
    let max_out = one(cx, 2, 0.0, DataType::i64())?;
    let iou = one(cx, 3, 0.0, DataType::f32())?;
    let score = one(cx, 4, f64::NEG_INFINITY, DataType::f32())?;
    let both = cx.call(
        "relax.vision.all_class_non_max_suppression",
        vec![boxes, scores, max_out, iou, score],
        Attrs::from_pairs([("output_format", AttrValue::Str("onnx".into()))]),
    )?;
    let rows = cx.item(&both, 0)?;
    let count = cx.item(&both, 1)?;
    let n = cx.bind_data_dims(count)?.remove(0);
    Ok(vec![cx.call(
        "relax.strided_slice",
        vec![rows],
        Attrs::from_pairs([
            ("axes", ints([0])),
            ("begin", ints([0])),
            ("end", AttrValue::Array(vec![AttrValue::PrimExpr(n)])),
            ("assume_inbound", AttrValue::Bool(true)),
        ]),
    )?])
}
