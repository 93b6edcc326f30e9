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

use super::shape_value::{self, ShapeValue};
use super::{ints, normalize_axes, product, shape, Ctx};
use crate::tensor::to_tensor;
use relax_core::ir::struct_info::fmt_dims;
use relax_core::ir::{AttrValue, Attrs, Expr, ExprKind, PrimExpr, PrimExprKind};
use relax_runtime::{DataType, Error, Tensor};

pub fn reshape(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let allowzero = cx.node.int_or("allowzero", 0)? != 0;
    let (dims, _) = cx.tensor(&x)?;
    let target: Vec<PrimExpr> = if cx.opset < 5 {
        cx.node
            .ints("shape")?
            .ok_or_else(|| cx.error("attribute `shape` is required"))?
            .into_iter()
            .map(PrimExpr::int)
            .collect()
    } else {
        let raw = cx
            .raw_input(1)?
            .ok_or_else(|| cx.error("input 1 (the shape) is required"))?;
        if ShapeValue::of(&raw).is_none() {
            // A shape computed from data: resolve its 0s and -1 on tensors,
            // then bind the result to fresh dims.
            let resolved = resolve_data_shape(cx, &x, raw, allowzero)?;
            return Ok(vec![cx.call(
                "relax.reshape",
                vec![x, shape(resolved)],
                Attrs::new(),
            )?]);
        }
        cx.dims_input(1)?.unwrap_or_default()
    };
    let mut out = Vec::new();
    let mut infer = None;
    for (i, s) in target.iter().enumerate() {
        out.push(match s.as_int() {
            Some(0) if !allowzero => dims.get(i).cloned().ok_or_else(|| {
                cx.error(format!(
                    "shape {} copies dim {i}, which x lacks",
                    fmt_dims(&target)
                ))
            })?,
            Some(-1) if infer.is_none() => {
                infer = Some(i);
                PrimExpr::int(1)
            }
            Some(v) if v >= 0 => PrimExpr::int(v),
            Some(_) => {
                return Err(cx.error(format!("shape {} is not a valid target", fmt_dims(&target))))
            }
            // A symbolic element is a dim: neither 0 nor -1.
            None => s.clone(),
        });
    }
    if let Some(i) = infer {
        out[i] = divide_dims(&dims, &out);
    }
    Ok(vec![cx.call(
        "relax.reshape",
        vec![x, shape(out)],
        Attrs::new(),
    )?])
}

/// `product(num) / product(den)` for the `-1` of a reshape, with the
/// factors the two share cancelled: `(batch · seq · 128) / (batch · seq ·
/// 32)` is `4`, where the simplifier alone cannot divide by a product of
/// variables. Falls back to the floor division when a factor of `den` is
/// not one of `num`'s.
pub fn divide_dims(num: &[PrimExpr], den: &[PrimExpr]) -> PrimExpr {
    fn flatten(e: &PrimExpr, out: &mut Vec<PrimExpr>, k: &mut i64) {
        match e.kind() {
            PrimExprKind::Mul(a, b) => {
                flatten(a, out, k);
                flatten(b, out, k);
            }
            PrimExprKind::IntImm(v) => *k = k.saturating_mul(*v),
            _ => out.push(e.clone()),
        }
    }
    let fallback = || shape_value::simplify(&product(num).floordiv(product(den)));
    let (mut n, mut d) = (Vec::new(), Vec::new());
    let (mut kn, mut kd) = (1i64, 1i64);
    for e in num {
        flatten(&shape_value::simplify(e), &mut n, &mut kn);
    }
    for e in den {
        flatten(&shape_value::simplify(e), &mut d, &mut kd);
    }
    for f in d {
        match n.iter().position(|g| *g == f) {
            Some(j) => {
                n.remove(j);
            }
            None => return fallback(),
        }
    }
    if kd == 0 || kn % kd != 0 {
        return fallback();
    }
    let mut out = PrimExpr::int(kn / kd);
    for f in n {
        out = out * f;
    }
    shape_value::simplify(&out)
}

/// The dims of a `Reshape` whose shape tensor `s` is computed from data:
/// its `0`s copied from `x`'s dims (unless `allowzero`) and its `-1` set to
/// what the other dims leave, computed as tensors, then bound to fresh
/// symbolic dims ([`Ctx::dims_input`]).
fn resolve_data_shape(
    cx: &mut Ctx,
    x: &Expr,
    s: Expr,
    allowzero: bool,
) -> Result<Vec<PrimExpr>, Error> {
    let (dims, _) = cx.tensor(x)?;
    let (sdims, sdtype) = cx.tensor(&s)?;
    if !sdtype.is_integer() {
        return Err(cx.error(format!(
            "the shape input must hold integers, found {sdtype}"
        )));
    }
    let len = match sdims.as_slice() {
        [d] => d
            .as_int()
            .ok_or_else(|| cx.error("the shape input must have a known length"))?,
        _ => return Err(cx.error("the shape input must be 1-d")),
    };
    let i64t = DataType::i64();
    let mut s = cx.astype(s, i64t)?;
    let zero = cx.scalar(0.0, i64t)?;
    let minus_one = cx.scalar(-1.0, i64t)?;
    let one = cx.scalar(1.0, i64t)?;
    if !allowzero {
        // x's dims, padded with 0s to the shape's length.
        let copied: Vec<PrimExpr> = (0..len as usize)
            .map(|i| dims.get(i).cloned().unwrap_or_else(|| PrimExpr::int(0)))
            .collect();
        let copied = cx.dims_tensor(copied)?;
        let is_zero = cx.op2("relax.equal", s.clone(), zero)?;
        s = cx.call("relax.where", vec![is_zero, copied, s], Attrs::new())?;
    }
    let is_wild = cx.op2("relax.equal", s.clone(), minus_one)?;
    let others = cx.call(
        "relax.where",
        vec![is_wild.clone(), one, s.clone()],
        Attrs::new(),
    )?;
    let known = cx.call(
        "relax.prod",
        vec![others],
        Attrs::from_pairs([
            ("axis", AttrValue::None),
            ("keepdims", AttrValue::Bool(false)),
        ]),
    )?;
    let total = cx.dim_tensor(product(&dims))?;
    // A 0 among the other dims (allowzero) leaves no -1 to infer (ONNX
    // forbids both); dividing by at least 1 keeps the unused quotient
    // defined.
    let one_more = cx.scalar(1.0, i64t)?;
    let known = cx.op2("relax.maximum", known, one_more)?;
    let rest = cx.op2("relax.divide", total, known)?;
    let s = cx.call("relax.where", vec![is_wild, rest, s], Attrs::new())?;
    let bound = cx.bind_data_dims(s)?;
    Ok(bound)
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
    let runtime_sizes = cx.opset >= 13
        && cx
            .raw_input(1)?
            .is_some_and(|e| !matches!(e.kind(), ExprKind::Constant(_)));
    if runtime_sizes {
        return split_at_runtime(cx, x, axis);
    }
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
            match dims[axis].as_int() {
                // Opset 18: parts of ceil(d / n), the last one shorter.
                Some(d) if parts > 0 && d % parts != 0 => {
                    let chunk = (d + parts - 1) / parts;
                    ints((1..parts).map(|k| (k * chunk).min(d)))
                }
                _ => AttrValue::Int(parts),
            }
        }
    };
    let attrs = Attrs::from_pairs([
        ("indices_or_sections", sections),
        ("axis", AttrValue::Int(axis as i64)),
    ]);
    let t = cx.call("relax.split", vec![x], attrs)?;
    (0..n).map(|i| cx.item(&t, i)).collect()
}

/// `Split` by sizes computed at run time (or symbolic): each size is a
/// dim (bound at run time when it comes from data), and each part a slice
/// from the sum of the sizes before it.
fn split_at_runtime(cx: &mut Ctx, x: Expr, axis: usize) -> Result<Vec<Expr>, Error> {
    let sizes = cx
        .dims_input(1)?
        .ok_or_else(|| cx.error("input 1 (split) is required"))?;
    let n = cx.node.num_outputs();
    if sizes.len() != n {
        return Err(cx.error(format!(
            "split {} gives {} parts for {n} outputs",
            fmt_dims(&sizes),
            sizes.len()
        )));
    }
    slice_parts(cx, x, axis, sizes)
}

/// The consecutive parts of `x` along `axis` of the sizes `sizes` (dims,
/// symbolic or bound at run time), each a slice from the sum of the sizes
/// before it.
pub(crate) fn slice_parts(
    cx: &mut Ctx,
    x: Expr,
    axis: usize,
    sizes: Vec<PrimExpr>,
) -> Result<Vec<Expr>, Error> {
    let mut begin = PrimExpr::int(0);
    let mut parts = Vec::new();
    for size in sizes {
        let end = shape_value::simplify(&(begin.clone() + size));
        let attrs = Attrs::from_pairs([
            ("axes", ints([axis as i64])),
            (
                "begin",
                AttrValue::Array(vec![AttrValue::PrimExpr(begin.clone())]),
            ),
            (
                "end",
                AttrValue::Array(vec![AttrValue::PrimExpr(end.clone())]),
            ),
            ("strides", ints([1])),
            // The sizes are taken to add up to the axis; a read past it is
            // clamped, and the reference kernel reports it.
            ("assume_inbound", AttrValue::Bool(true)),
        ]);
        parts.push(cx.call("relax.strided_slice", vec![x.clone()], attrs)?);
        begin = end;
    }
    Ok(parts)
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
    if cx.opset >= 13 && super::runtime_axes::is_runtime_axes(cx, 1)? {
        // Axes computed at run time: the dims of the axes they do not
        // name, bound at run time (as a reduction without keepdims keeps
        // them), and `x` reshaped to them; the named axes must be 1 for
        // the element counts to agree.
        let axes = super::runtime_axes::RuntimeAxes::new(cx, &x, 1)?;
        let kept = axes.kept_dims(cx)?;
        return Ok(vec![cx.call(
            "relax.reshape",
            vec![x, shape(kept)],
            Attrs::new(),
        )?]);
    }
    let axis = match axes_of(cx)? {
        Some(a) => ints(a),
        None => AttrValue::None,
    };
    let attrs = Attrs::from_pairs([("axis", axis)]);
    Ok(vec![cx.call("relax.squeeze", vec![x], attrs)?])
}

pub fn unsqueeze(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    if cx.opset >= 13
        && cx
            .raw_input(1)?
            .is_some_and(|e| !matches!(e.kind(), ExprKind::Constant(_)))
    {
        return unsqueeze_at_runtime(cx, x);
    }
    let axes = axes_of(cx)?.ok_or_else(|| cx.error("the axes are required"))?;
    let (dims, _) = cx.tensor(&x)?;
    let mut axes = normalize_axes(cx, &axes, dims.len() + axes.len())?;
    axes.sort_unstable();
    let attrs = Attrs::from_pairs([("axis", ints(axes.iter().map(|&a| a as i64)))]);
    Ok(vec![cx.call("relax.expand_dims", vec![x], attrs)?])
}

/// `Unsqueeze` by axes computed at run time. The output's rank is known
/// (the input's plus the axes' count), its dims are not: output position
/// `p` is 1 where the axes name it, else the input's dim at `p` minus the
/// number of new axes before `p`. They are computed as a tensor and bound
/// at run time, and the input reshaped to them.
fn unsqueeze_at_runtime(cx: &mut Ctx, x: Expr) -> Result<Vec<Expr>, Error> {
    let (dims, _) = cx.tensor(&x)?;
    let axes = cx.input(1)?;
    let (ad, _) = cx.tensor(&axes)?;
    let k = ad
        .first()
        .and_then(PrimExpr::as_int)
        .ok_or_else(|| cx.error("the axes input must have a known length"))?;
    let rank = dims.len() + k as usize;
    let i64t = DataType::i64();
    let axes = cx.astype(axes, i64t)?;
    let n = cx.scalar(rank as f64, i64t)?;
    let axes = cx.wrap_negative(axes, n)?;
    let zero = cx.scalar(0.0, i64t)?;
    let in_dims = cx.dims_tensor(dims.clone())?;
    let one = cx.scalar(1.0, i64t)?;
    let last = cx.scalar(dims.len().saturating_sub(1) as f64, i64t)?;
    let all = Attrs::from_pairs([
        ("axis", AttrValue::None),
        ("keepdims", AttrValue::Bool(false)),
    ]);
    let mut before = zero.clone();
    let mut out = Vec::new();
    for p in 0..rank {
        let pp = cx.scalar(p as f64, i64t)?;
        let hit = cx.op2("relax.equal", axes.clone(), pp.clone())?;
        let hit = cx.astype(hit, i64t)?;
        let new = cx.call("relax.max", vec![hit], all.clone())?;
        let is_new = cx.op2("relax.equal", new.clone(), one.clone())?;
        // The input dim this position takes, clamped into the input's
        // dims (a new position's index is not used).
        let src = cx.op2("relax.subtract", pp, before.clone())?;
        let src = cx.op2("relax.minimum", src, last.clone())?;
        let src = cx.op2("relax.maximum", src, zero.clone())?;
        let d = if dims.is_empty() {
            one.clone()
        } else {
            cx.call(
                "relax.take",
                vec![in_dims.clone(), src],
                Attrs::from_pairs([("axis", AttrValue::Int(0))]),
            )?
        };
        let d = cx.call("relax.where", vec![is_new, one.clone(), d], Attrs::new())?;
        out.push(cx.call(
            "relax.reshape",
            vec![d, shape(vec![PrimExpr::int(1)])],
            Attrs::new(),
        )?);
        before = cx.op2("relax.add", before, new)?;
    }
    let out = cx.call(
        "relax.concat",
        vec![Expr::tuple(out)],
        Attrs::from_pairs([("axis", AttrValue::Int(0))]),
    )?;
    let bound = cx.bind_data_dims(out)?;
    Ok(vec![cx.call(
        "relax.reshape",
        vec![x, shape(bound)],
        Attrs::new(),
    )?])
}

pub fn slice(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    if cx.opset >= 10 && (cx.is_computed(3)? || cx.is_computed(4)?) {
        return super::runtime_slice::slice(cx, x);
    }
    let lift = |v: Option<Vec<i64>>| v.map(|v| v.into_iter().map(PrimExpr::int).collect());
    let (starts, ends, axes, steps): (Option<Vec<PrimExpr>>, Option<Vec<PrimExpr>>, _, _) =
        if cx.opset < 10 {
            (
                lift(cx.node.ints("starts")?),
                lift(cx.node.ints("ends")?),
                cx.node.ints("axes")?,
                None,
            )
        } else {
            (
                cx.dims_input(1)?,
                cx.dims_input(2)?,
                cx.ints_input(3)?,
                cx.ints_input(4)?,
            )
        };
    let (starts, ends) = match (starts, ends) {
        (Some(s), Some(e)) if s.len() == e.len() => (s, e),
        _ => return Err(cx.error("starts and ends of one length are required")),
    };
    let (dims, _) = cx.tensor(&x)?;
    let axes = axes.unwrap_or_else(|| (0..starts.len() as i64).collect());
    let steps = steps.unwrap_or_else(|| vec![1; starts.len()]);
    if axes.len() != starts.len() || steps.len() != starts.len() {
        return Err(cx.error("starts, ends, axes and steps must have one length"));
    }
    let axes = normalize_axes(cx, &axes, dims.len())?;
    let (mut begin, mut end) = (Vec::new(), Vec::new());
    let mut inbound = true;
    for i in 0..axes.len() {
        if steps[i] == 0 {
            return Err(cx.error("a step of 0 is not a valid slice step"));
        }
        let d = &dims[axes[i]];
        match d.as_int() {
            Some(d) => {
                // Known dims: clamp as NumPy does (the op clamps too; this
                // keeps the attributes readable).
                let clamp = |v: &PrimExpr| -> Result<PrimExpr, Error> {
                    let Some(v) = v.as_int() else {
                        // A symbolic bound on a known dim.
                        return Ok(v.clone());
                    };
                    let v = if v < 0 { v.saturating_add(d) } else { v };
                    Ok(PrimExpr::int(if steps[i] > 0 {
                        v.clamp(0, d)
                    } else {
                        v.clamp(-1, d - 1)
                    }))
                };
                begin.push(clamp(&starts[i])?);
                end.push(clamp(&ends[i])?);
            }
            None => {
                // A symbolic dim: an integer bound counts from the end when
                // negative, and one past any dim (INT64_MAX) is the dim; a
                // symbolic bound is taken to be inside the dim.
                let bound = |v: &PrimExpr| match v.as_int() {
                    Some(v) if v < 0 && v > i64::from(i32::MIN) => {
                        shape_value::simplify(&(d.clone() + v))
                    }
                    Some(v) if v >= i64::from(i32::MAX) => d.clone(),
                    Some(v) if v <= i64::from(i32::MIN) => {
                        PrimExpr::int(if steps[i] > 0 { 0 } else { -1 })
                    }
                    _ => v.clone(),
                };
                begin.push(bound(&starts[i]));
                end.push(bound(&ends[i]));
            }
        }
        inbound &= steps[i] == 1;
    }
    // Bounds normalized above stay inside the dims, and symbolic ones are
    // taken to, so with unit steps the slice's extent is `end - begin`
    // (TVM's `assume_inbound`).
    let all_known = dims.iter().all(|d| d.as_int().is_some())
        && begin.iter().chain(&end).all(|e| e.as_int().is_some());
    let attrs = Attrs::from_pairs([
        ("axes", ints(axes.iter().map(|&a| a as i64))),
        (
            "begin",
            AttrValue::Array(begin.into_iter().map(AttrValue::PrimExpr).collect()),
        ),
        (
            "end",
            AttrValue::Array(end.into_iter().map(AttrValue::PrimExpr).collect()),
        ),
        ("strides", ints(steps)),
        ("assume_inbound", AttrValue::Bool(inbound && !all_known)),
    ]);
    Ok(vec![cx.call("relax.strided_slice", vec![x], attrs)?])
}

pub fn pad(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let (dims, _) = cx.tensor(&x)?;
    let ndim = dims.len();
    if cx.opset >= 11 && (cx.is_computed(1)? || cx.is_computed(2)? || cx.is_computed(3)?) {
        use super::runtime_slice::PadMode;
        let mode = match cx.node.string("mode")?.as_deref().unwrap_or("constant") {
            "constant" => PadMode::Constant,
            "reflect" => PadMode::Reflect,
            "edge" => PadMode::Edge,
            "wrap" => PadMode::Wrap,
            other => return Err(cx.error(format!("mode `{other}` is not an ONNX pad mode"))),
        };
        return super::runtime_slice::pad(cx, x, mode);
    }
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
    } else if cx.is_computed(1)? {
        // Indices computed at run time may count from the end too.
        let (_, it) = cx.tensor(&indices)?;
        if it.is_integer() && !it.is_uint() {
            let d = cx.dim_tensor(dims[axis].clone())?;
            let d = cx.astype(d, it)?;
            indices = cx.wrap_negative(indices, d)?;
        }
    }
    let attrs = Attrs::from_pairs([("axis", AttrValue::Int(axis as i64))]);
    Ok(vec![cx.call("relax.take", vec![x, indices], attrs)?])
}

pub fn tile(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let repeats = cx
        .dims_input(1)?
        .ok_or_else(|| cx.error("input 1 (repeats) is required"))?;
    let (dims, _) = cx.tensor(&x)?;
    if repeats.len() != dims.len() {
        return Err(cx.error(format!(
            "repeats {} must have one value per dim ({})",
            fmt_dims(&repeats),
            dims.len()
        )));
    }
    if repeats.iter().any(|r| r.as_int().is_some_and(|r| r < 0)) {
        return Err(cx.error(format!(
            "repeats {} must not be negative",
            fmt_dims(&repeats)
        )));
    }
    if repeats.iter().all(|r| r.as_int() == Some(1)) {
        return Ok(vec![x]);
    }
    let one = PrimExpr::int(1);
    let interleaved: Vec<PrimExpr> = dims.iter().flat_map(|d| [one.clone(), d.clone()]).collect();
    let spread: Vec<PrimExpr> = dims
        .iter()
        .zip(&repeats)
        .flat_map(|(d, r)| [r.clone(), d.clone()])
        .collect();
    let out: Vec<PrimExpr> = dims
        .iter()
        .zip(&repeats)
        .map(|(d, r)| shape_value::simplify(&(d.clone() * r.clone())))
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
        .dims_input(1)?
        .ok_or_else(|| cx.error("input 1 (the shape) is required"))?;
    let (dims, _) = cx.tensor(&x)?;
    let n = dims.len().max(target.len());
    let ana = relax_core::arith::Analyzer::new();
    let mut out = Vec::new();
    for i in 0..n {
        let d = (i + dims.len()).checked_sub(n).map(|k| dims[k].clone());
        let t = (i + target.len()).checked_sub(n).map(|k| target[k].clone());
        out.push(match (d, t) {
            (Some(d), None) => d,
            (Some(d), Some(t)) if t.as_int() == Some(1) => d,
            (None, Some(t)) => t,
            (Some(d), Some(t)) if d.as_int() == Some(1) || ana.can_prove_equal(&d, &t) => t,
            (Some(d), Some(t)) if d.as_int().is_some() && t.as_int().is_some() => {
                return Err(cx.error(format!("dim {d} does not broadcast to {t}")))
            }
            // Symbolic and not provably equal: the broadcast's own check
            // decides at run time. A known dim of x other than 1 is the
            // result's (the target's dim must then be 1 or equal).
            (Some(d), Some(t)) => {
                if d.as_int().is_some() {
                    d
                } else {
                    t
                }
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
        .dims_input(0)?
        .ok_or_else(|| cx.error("input 0 (the shape) is required"))?;
    let value = match cx.node.tensor("value")? {
        Some(t) => to_tensor(t).map_err(|e| cx.error(e))?,
        None => Tensor::from_vec(&[1], vec![0.0f32]).map_err(|e| cx.error(e))?,
    };
    if value.numel() != 1 {
        return Err(cx.error("attribute `value` must hold one element"));
    }
    let Some(known) = dims
        .iter()
        .map(PrimExpr::as_int)
        .collect::<Option<Vec<i64>>>()
    else {
        // A symbolic shape: `full` at run time.
        let fill = Expr::constant(value.reshape(&[]).map_err(|e| cx.error(e))?);
        return Ok(vec![cx.call(
            "relax.full",
            vec![shape(dims), fill],
            Attrs::new(),
        )?]);
    };
    let dims = known;
    if dims.iter().any(|&d| d < 0) {
        return Err(cx.error(format!("shape {dims:?} has a negative dim")));
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
    let (dims, _) = cx.tensor(&x)?;
    let n = dims.len() as i64;
    let clamp = |v: i64| (if v < 0 { v + n } else { v }).clamp(0, n) as usize;
    let start = clamp(cx.node.int_or("start", 0)?);
    let end = clamp(cx.node.int_or("end", n)?);
    let part = dims[start..end.max(start)].to_vec();
    // Known dims give a constant; symbolic ones a shape value.
    Ok(vec![ShapeValue::vector(part)
        .to_expr()
        .map_err(|e| cx.error(e))?])
}

pub fn size(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let (dims, _) = cx.tensor(&x)?;
    Ok(vec![ShapeValue::scalar(product(&dims))
        .to_expr()
        .map_err(|e| cx.error(e))?])
}

/// `Range(start, limit, delta)`: `arange` with the three as `PrimValue`s,
/// so a symbolic limit (a sequence length) gives a symbolic length. When a
/// bound or the step is computed from data (or is a float that is not a
/// constant), the length `max(ceil((limit - start) / delta), 0)` is
/// computed as a tensor and bound to a fresh dim (`tensor_to_shape` and
/// `match_cast`), and the values are `start + arange(0, len) * delta`.
pub fn range(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let (_, dtype) = {
        let start = cx.input(0)?;
        cx.tensor(&start)?
    };
    let attrs = Attrs::from_pairs([("dtype", AttrValue::DataType(dtype))]);
    let mut known = Vec::new();
    for i in 0..3 {
        let raw = cx
            .raw_input(i)?
            .ok_or_else(|| cx.error(format!("input {i} is required")))?;
        match (raw.kind(), ShapeValue::of(&raw)) {
            (ExprKind::Constant(t), _) if dtype.is_float() => {
                let v = t.to_f64_vec().first().copied();
                known.push(v.map(|v| PrimExpr::float(DataType::f64(), v)));
            }
            (_, Some(v)) if v.elems.len() == 1 && !dtype.is_float() => {
                known.push(v.elems.into_iter().next());
            }
            _ => known.push(None),
        }
    }
    let step_known = known[2]
        .as_ref()
        .is_some_and(|s| s.as_int().is_some() || s.dtype().is_float());
    if let (Some(a), Some(b), Some(c), true) = (&known[0], &known[1], &known[2], step_known) {
        let args = [a, b, c].map(|e| Expr::prim_value(e.clone())).to_vec();
        return Ok(vec![cx.call("relax.arange", args, attrs)?]);
    }
    // From data: the length as a tensor, bound to a fresh dim.
    let (start, limit, delta) = (cx.input(0)?, cx.input(1)?, cx.input(2)?);
    let f64t = DataType::f64();
    let i64t = DataType::i64();
    let diff = cx.op2("relax.subtract", limit, start.clone())?;
    let diff = cx.astype(diff, f64t)?;
    let step = cx.astype(delta.clone(), f64t)?;
    let q = cx.op2("relax.divide", diff, step)?;
    let q = cx.op1("relax.ceil", q)?;
    let n = cx.astype(q, i64t)?;
    let zero = cx.scalar(0.0, i64t)?;
    let n = cx.op2("relax.maximum", n, zero)?;
    let n = cx.call(
        "relax.reshape",
        vec![n, shape(vec![PrimExpr::int(1)])],
        Attrs::new(),
    )?;
    let len = cx.bind_data_dims(n)?.remove(0);
    // Integer positions, written in the output's dtype.
    let idx = cx.call(
        "relax.arange",
        vec![
            Expr::prim_value(PrimExpr::int(0)),
            Expr::prim_value(len),
            Expr::prim_value(PrimExpr::int(1)),
        ],
        attrs,
    )?;
    let scaled = cx.op2("relax.multiply", idx, delta)?;
    Ok(vec![cx.op2("relax.add", scaled, start)?])
}

pub fn identity(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    Ok(vec![cx.input(0)?])
}

/// `EyeLike`: the registry's `eye_like` over the input's 2-d shape, in the
/// `dtype` attribute's type (the input's when absent), ones on diagonal `k`.
pub fn eye_like(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let k = cx.node.int_or("k", 0)?;
    let dtype = match cx.node.int("dtype")? {
        Some(code) => crate::tensor::dtype_of(code as i32).ok_or_else(|| {
            cx.error(format!(
                "dtype {} is not supported",
                crate::tensor::elem_type_name(code as i32)
            ))
        })?,
        None => DataType::void(),
    };
    let attrs = Attrs::from_pairs([("dtype", AttrValue::DataType(dtype))]);
    let k = Expr::prim_value(PrimExpr::int(k));
    Ok(vec![cx.call("relax.eye_like", vec![x, k], attrs)?])
}
