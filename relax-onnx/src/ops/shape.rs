//! Shape and data-movement ops, and constants.
//!
//! Inputs that decide a shape (`Reshape`'s shape, `Slice`'s bounds, axes
//! given as inputs from opset 13 on) must be constants, possibly computed
//! from other constants during the import; before the opset where an
//! attribute became an input, the attribute is read.
//!
//! `Pad`'s pads (all begins, then all ends) are interleaved for `nn.pad`;
//! its modes `edge` and `wrap` are `replicate` and `circular` there.
//!
//! `Tile` is written with the registry's ops: `x` reshaped to interleave a
//! 1 before each dim, broadcast to `(r0, d0, r1, d1, …)`, and reshaped to
//! `(r0·d0, r1·d1, …)`. `Expand` is `broadcast_to` of the two shapes'
//! broadcast.

use super::{ints, normalize_axes, product, shape, Ctx};
use crate::tensor::to_tensor;
use relax_core::arith::Analyzer;
use relax_core::ir::{AttrValue, Attrs, Expr, PrimExpr};
use relax_runtime::{Error, Tensor};

pub fn reshape(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let target = if cx.opset < 5 {
        cx.node
            .ints("shape")?
            .ok_or_else(|| cx.error("attribute `shape` is required"))?
    } else {
        cx.ints_input(1)?
            .ok_or_else(|| cx.error("input 1 (the shape) is required"))?
    };
    let allowzero = cx.node.int_or("allowzero", 0)? != 0;
    let (dims, _) = cx.tensor(&x)?;
    let mut out = Vec::new();
    let mut infer = None;
    for (i, &s) in target.iter().enumerate() {
        out.push(match s {
            0 if !allowzero => dims.get(i).cloned().ok_or_else(|| {
                cx.error(format!("shape {target:?} copies dim {i}, which x lacks"))
            })?,
            -1 if infer.is_none() => {
                infer = Some(i);
                PrimExpr::int(1)
            }
            s if s >= 0 => PrimExpr::int(s),
            _ => return Err(cx.error(format!("shape {target:?} is not a valid target"))),
        });
    }
    if let Some(i) = infer {
        let known = product(&out);
        let total = product(&dims);
        out[i] = Analyzer::new().simplify(&total.floordiv(known));
    }
    Ok(vec![cx.call(
        "relax.reshape",
        vec![x, shape(out)],
        Attrs::new(),
    )?])
}

pub fn flatten(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let (dims, _) = cx.tensor(&x)?;
    let axis = cx.node.int_or("axis", 1)?;
    let n = dims.len() as i64;
    let axis = if axis < 0 { axis + n } else { axis };
    if !(0..=n).contains(&axis) {
        return Err(cx.error(format!("axis {axis} is out of range for rank {n}")));
    }
    let (head, tail) = dims.split_at(axis as usize);
    let out = vec![product(head), product(tail)];
    Ok(vec![cx.call(
        "relax.reshape",
        vec![x, shape(out)],
        Attrs::new(),
    )?])
}

pub fn transpose(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let axes = match cx.node.ints("perm")? {
        Some(p) => ints(p),
        None => AttrValue::None,
    };
    let attrs = Attrs::from_pairs([("axes", axes)]);
    Ok(vec![cx.call("relax.permute_dims", vec![x], attrs)?])
}

pub fn concat(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let inputs = cx.inputs()?;
    let axis = cx
        .node
        .int("axis")?
        .ok_or_else(|| cx.error("attribute `axis` is required"))?;
    let attrs = Attrs::from_pairs([("axis", AttrValue::Int(axis))]);
    Ok(vec![cx.call(
        "relax.concat",
        vec![Expr::tuple(inputs)],
        attrs,
    )?])
}

pub fn split(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let (dims, _) = cx.tensor(&x)?;
    let axis = cx.node.int_or("axis", 0)?;
    let axis = normalize_axes(cx, &[axis], dims.len())?[0];
    let sizes = if cx.opset < 13 {
        cx.node.ints("split")?
    } else {
        cx.ints_input(1)?
    };
    let n = cx.node.num_outputs();
    let sections = match sizes {
        Some(sizes) => {
            if sizes.len() != n {
                return Err(cx.error(format!(
                    "split {sizes:?} gives {} parts for {n} outputs",
                    sizes.len()
                )));
            }
            if sizes.iter().any(|&s| !(0..=i32::MAX as i64).contains(&s)) {
                return Err(cx.error(format!("split {sizes:?} has a size out of range")));
            }
            let bounds: Vec<i64> = sizes
                .iter()
                .scan(0, |acc, s| {
                    *acc += s;
                    Some(*acc)
                })
                .take(n.saturating_sub(1))
                .collect();
            ints(bounds)
        }
        None => {
            let parts = cx.node.int("num_outputs")?.unwrap_or(n as i64);
            AttrValue::Int(parts)
        }
    };
    let attrs = Attrs::from_pairs([
        ("indices_or_sections", sections),
        ("axis", AttrValue::Int(axis as i64)),
    ]);
    let t = cx.call("relax.split", vec![x], attrs)?;
    (0..n).map(|i| cx.item(&t, i)).collect()
}

/// The axes of `Squeeze`/`Unsqueeze`: an attribute before opset 13, an
/// input from 13 on.
fn axes_of(cx: &Ctx) -> Result<Option<Vec<i64>>, Error> {
    if cx.opset < 13 {
        cx.node.ints("axes")
    } else {
        cx.ints_input(1)
    }
}

pub fn squeeze(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let axis = match axes_of(cx)? {
        Some(a) => ints(a),
        None => AttrValue::None,
    };
    let attrs = Attrs::from_pairs([("axis", axis)]);
    Ok(vec![cx.call("relax.squeeze", vec![x], attrs)?])
}

pub fn unsqueeze(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let axes = axes_of(cx)?.ok_or_else(|| cx.error("the axes are required"))?;
    let (dims, _) = cx.tensor(&x)?;
    let mut axes = normalize_axes(cx, &axes, dims.len() + axes.len())?;
    axes.sort_unstable();
    let attrs = Attrs::from_pairs([("axis", ints(axes.iter().map(|&a| a as i64)))]);
    Ok(vec![cx.call("relax.expand_dims", vec![x], attrs)?])
}

pub fn slice(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let (starts, ends, axes, steps) = if cx.opset < 10 {
        (
            cx.node.ints("starts")?,
            cx.node.ints("ends")?,
            cx.node.ints("axes")?,
            None,
        )
    } else {
        (
            cx.ints_input(1)?,
            cx.ints_input(2)?,
            cx.ints_input(3)?,
            cx.ints_input(4)?,
        )
    };
    let (starts, ends) = match (starts, ends) {
        (Some(s), Some(e)) if s.len() == e.len() => (s, e),
        _ => return Err(cx.error("starts and ends of one length are required")),
    };
    let dims = cx.static_dims(&x)?;
    let axes = axes.unwrap_or_else(|| (0..starts.len() as i64).collect());
    let steps = steps.unwrap_or_else(|| vec![1; starts.len()]);
    if axes.len() != starts.len() || steps.len() != starts.len() {
        return Err(cx.error("starts, ends, axes and steps must have one length"));
    }
    let axes = normalize_axes(cx, &axes, dims.len())?;
    let (mut begin, mut end) = (Vec::new(), Vec::new());
    for i in 0..axes.len() {
        if steps[i] <= 0 {
            return Err(cx.error(format!(
                "step {} is not supported (positive only)",
                steps[i]
            )));
        }
        let d = dims[axes[i]];
        let clamp = |v: i64| {
            let v = if v < 0 { v.saturating_add(d) } else { v };
            v.clamp(0, d)
        };
        begin.push(clamp(starts[i]));
        end.push(clamp(ends[i]));
    }
    let attrs = Attrs::from_pairs([
        ("axes", ints(axes.iter().map(|&a| a as i64))),
        ("begin", ints(begin)),
        ("end", ints(end)),
        ("strides", ints(steps)),
    ]);
    Ok(vec![cx.call("relax.strided_slice", vec![x], attrs)?])
}

pub fn pad(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let (dims, _) = cx.tensor(&x)?;
    let ndim = dims.len();
    let (pads, value, axes) = if cx.opset < 11 {
        let pads = if cx.opset < 2 {
            cx.node.ints("paddings")?
        } else {
            cx.node.ints("pads")?
        };
        let value = f64::from(cx.node.float_or("value", 0.0)?);
        (pads, value, None)
    } else {
        let value = match cx.const_input(2)? {
            Some(t) => t.to_f64_vec().first().copied().unwrap_or(0.0),
            None => 0.0,
        };
        (cx.ints_input(1)?, value, cx.ints_input(3)?)
    };
    let pads = pads.ok_or_else(|| cx.error("the pads are required"))?;
    let axes = match axes {
        Some(a) => normalize_axes(cx, &a, ndim)?,
        None => (0..ndim).collect(),
    };
    if pads.len() != 2 * axes.len() {
        return Err(cx.error(format!(
            "pads {pads:?} must have 2 values per padded axis ({})",
            2 * axes.len()
        )));
    }
    if pads.iter().any(|&p| p < 0) {
        return Err(cx.error(format!(
            "negative pads {pads:?} (cropping) are not supported"
        )));
    }
    // ONNX lists all begins, then all ends; Relax interleaves them.
    let mut width = vec![0i64; 2 * ndim];
    for (k, &axis) in axes.iter().enumerate() {
        width[2 * axis] = pads[k];
        width[2 * axis + 1] = pads[k + axes.len()];
    }
    let mode = cx.node.string("mode")?.unwrap_or_else(|| "constant".into());
    let mode = match mode.as_str() {
        "constant" => "constant",
        "reflect" => "reflect",
        "edge" => "replicate",
        "wrap" => "circular",
        other => return Err(cx.error(format!("mode `{other}` is not an ONNX pad mode"))),
    };
    let attrs = Attrs::from_pairs([
        ("pad_width", ints(width)),
        ("pad_value", AttrValue::Float(value)),
        ("pad_mode", AttrValue::Str(mode.into())),
    ]);
    Ok(vec![cx.call("relax.nn.pad", vec![x], attrs)?])
}

pub fn gather(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let mut indices = cx.input(1)?;
    let (dims, _) = cx.tensor(&x)?;
    let axis = cx.node.int_or("axis", 0)?;
    let axis = normalize_axes(cx, &[axis], dims.len())?[0];
    // Negative constant indices count from the end.
    if let (Some(t), Some(d)) = (cx.const_input(1).ok().flatten(), dims[axis].as_int()) {
        let fixed: Vec<i64> = t
            .to_f64_vec()
            .into_iter()
            .map(|v| if v < 0.0 { v as i64 + d } else { v as i64 })
            .collect();
        let t = Tensor::from_vec(t.shape(), fixed).map_err(|e| cx.error(e))?;
        indices = Expr::constant(t);
    }
    let attrs = Attrs::from_pairs([("axis", AttrValue::Int(axis as i64))]);
    Ok(vec![cx.call("relax.take", vec![x, indices], attrs)?])
}

pub fn tile(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let repeats = cx
        .ints_input(1)?
        .ok_or_else(|| cx.error("input 1 (repeats) is required"))?;
    let (dims, _) = cx.tensor(&x)?;
    if repeats.len() != dims.len() {
        return Err(cx.error(format!(
            "repeats {repeats:?} must have one value per dim ({})",
            dims.len()
        )));
    }
    if repeats.iter().any(|&r| r < 0) {
        return Err(cx.error(format!("repeats {repeats:?} must not be negative")));
    }
    if repeats.iter().all(|&r| r == 1) {
        return Ok(vec![x]);
    }
    let one = PrimExpr::int(1);
    let interleaved: Vec<PrimExpr> = dims.iter().flat_map(|d| [one.clone(), d.clone()]).collect();
    let spread: Vec<PrimExpr> = dims
        .iter()
        .zip(&repeats)
        .flat_map(|(d, &r)| [PrimExpr::int(r), d.clone()])
        .collect();
    let out: Vec<PrimExpr> = dims
        .iter()
        .zip(&repeats)
        .map(|(d, &r)| Analyzer::new().simplify(&(d.clone() * r)))
        .collect();
    let a = cx.call("relax.reshape", vec![x, shape(interleaved)], Attrs::new())?;
    let b = cx.call("relax.broadcast_to", vec![a, shape(spread)], Attrs::new())?;
    Ok(vec![cx.call(
        "relax.reshape",
        vec![b, shape(out)],
        Attrs::new(),
    )?])
}

pub fn expand(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let target = cx
        .ints_input(1)?
        .ok_or_else(|| cx.error("input 1 (the shape) is required"))?;
    let (dims, _) = cx.tensor(&x)?;
    let n = dims.len().max(target.len());
    let mut out = Vec::new();
    for i in 0..n {
        let d = (i + dims.len()).checked_sub(n).map(|k| dims[k].clone());
        let t = (i + target.len()).checked_sub(n).map(|k| target[k]);
        out.push(match (d, t) {
            (Some(d), None) | (Some(d), Some(1)) => d,
            (None, Some(t)) => PrimExpr::int(t),
            (Some(d), Some(t)) if d.as_int() == Some(1) || d.as_int() == Some(t) => {
                PrimExpr::int(t)
            }
            (Some(d), Some(t)) => {
                return Err(cx.error(format!("dim {d} does not broadcast to {t}")))
            }
            (None, None) => PrimExpr::int(1),
        });
    }
    Ok(vec![cx.call(
        "relax.broadcast_to",
        vec![x, shape(out)],
        Attrs::new(),
    )?])
}

pub fn constant(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let t = if let Some(t) = cx.node.tensor("value")? {
        to_tensor(t).map_err(|e| cx.error(e))?
    } else if cx.node.has("value_float") {
        Tensor::scalar(cx.node.float_or("value_float", 0.0)?)
    } else if let Some(v) = cx.node.floats("value_floats")? {
        Tensor::from_vec(&[v.len() as i64], v).map_err(|e| cx.error(e))?
    } else if let Some(v) = cx.node.int("value_int")? {
        Tensor::scalar(v)
    } else if let Some(v) = cx.node.ints("value_ints")? {
        Tensor::from_vec(&[v.len() as i64], v).map_err(|e| cx.error(e))?
    } else {
        return Err(cx.error(
            "only value, value_float(s) and value_int(s) are supported \
             (sparse and string constants are not)",
        ));
    };
    Ok(vec![Expr::constant(t)])
}

pub fn constant_of_shape(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let dims = cx
        .ints_input(0)?
        .ok_or_else(|| cx.error("input 0 (the shape) is required"))?;
    if dims.iter().any(|&d| d < 0) {
        return Err(cx.error(format!("shape {dims:?} has a negative dim")));
    }
    let value = match cx.node.tensor("value")? {
        Some(t) => to_tensor(t).map_err(|e| cx.error(e))?,
        None => Tensor::from_vec(&[1], vec![0.0f32]).map_err(|e| cx.error(e))?,
    };
    if value.numel() != 1 {
        return Err(cx.error("attribute `value` must hold one element"));
    }
    let numel = dims
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d as usize))
        .filter(|&n| n <= 1 << 31)
        .ok_or_else(|| cx.error(format!("shape {dims:?} is too large")))?;
    let bytes = value.as_bytes().repeat(numel);
    let t = Tensor::from_bytes(value.dtype(), &dims, &bytes).map_err(|e| cx.error(e))?;
    Ok(vec![Expr::constant(t)])
}

pub fn shape_of(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let dims = cx.static_dims(&x)?;
    let n = dims.len() as i64;
    let clamp = |v: i64| (if v < 0 { v + n } else { v }).clamp(0, n) as usize;
    let start = clamp(cx.node.int_or("start", 0)?);
    let end = clamp(cx.node.int_or("end", n)?);
    let part = dims[start..end.max(start)].to_vec();
    let t = Tensor::from_vec(&[part.len() as i64], part).map_err(|e| cx.error(e))?;
    Ok(vec![Expr::constant(t)])
}

pub fn size(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let n: i64 = cx.static_dims(&x)?.iter().product();
    Ok(vec![Expr::constant(Tensor::scalar(n))])
}

pub fn identity(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    Ok(vec![cx.input(0)?])
}
