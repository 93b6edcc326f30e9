//! `Resize` and `Upsample` as `image.resize2d` over the last two axes of
//! 4-d (N, C, H, W) data.
//!
//! 1. The output height and width come from `sizes` or from `scales`
//!    (`floor(in · scale)`, times the roi's extent under
//!    `tf_crop_and_resize`), given for every axis or for the axes of the
//!    `axes` attribute; the batch and channel axes must keep their size.
//!    `sizes` may be symbolic (computed from another tensor's `Shape`) or
//!    computed at run time. Scales computed at run time, constant scales
//!    of a symbolic dim whose product is not whole, and scales with a roi
//!    computed at run time give the output size as a tensor, bound to
//!    fresh symbolic dims (`tensor_to_shape`, then a `match_cast`).
//!    `keep_aspect_ratio_policy` (`not_larger`, `not_smaller`) scales the
//!    listed axes by one factor, the smallest or largest of `size / in`,
//!    each to `floor(in · factor + 0.5)`.
//! 2. `mode` `nearest`, `linear` and `cubic` are the methods
//!    `nearest_neighbor`, `linear` and `cubic`; `cubic_coeff_a` and
//!    `exclude_outside` are `cubic_alpha` and `cubic_exclude`;
//!    `nearest_mode` is the `rounding_method`; `antialias` and every
//!    `coordinate_transformation_mode` (`half_pixel_symmetric` among them)
//!    keep their names. `tf_crop_and_resize` takes a constant `roi` as the
//!    attribute and a roi computed at run time as the third operand
//!    (`[start_h, start_w, end_h, end_w]` in `float64`, picked from ONNX's
//!    starts and ends; the batch and channel entries are checked to be
//!    (0, 1) only when constant, and not read otherwise), with its
//!    `extrapolation_value`. `Upsample` and `Resize` before opset 11 are
//!    `asymmetric` with `floor`.
//! 3. ONNX maps output to input coordinates by `1 / scale` when `scales`
//!    are given (and by the kept aspect ratio's factor), not by `in / out`
//!    as `image.resize2d` does by default: the spatial scales are passed
//!    as its `scales` attribute when constant, else as its fourth operand
//!    (after the roi operand, a constant identity roi when not cropping).
//!    `tf_crop_and_resize` maps by the roi and the output size, as ONNX's
//!    spec says, and gets no scales.

use super::{normalize_axes, shape, Ctx};
use relax_core::ir::{AttrValue, Attrs, Expr, PrimExpr};
use relax_runtime::{DataType, Error, Tensor};

/// How the output size of the resized axes is given.
enum Target {
    /// One dim per listed axis.
    Sizes(Vec<PrimExpr>),
    /// Constant scales, one per listed axis.
    Scales(Vec<f64>),
    /// Scales computed at run time: a 1-d tensor, one per listed axis.
    RuntimeScales(Expr),
}

/// The roi of the spatial axes.
enum Roi {
    /// Constant: `(start, end)` per axis (identity where not given).
    Const([(f64, f64); 4]),
    /// Computed at run time: a 1-d `float64` tensor `[start_h, start_w,
    /// end_h, end_w]`.
    Runtime(Expr),
}

/// How `image.resize2d` maps output to input coordinates.
enum Mapping {
    /// By the size ratio (ONNX's `sizes` without a kept aspect ratio, and
    /// `tf_crop_and_resize`).
    Ratio,
    /// By constant scales `[scale_h, scale_w]`.
    Const([f64; 2]),
    /// By scales computed at run time: a 1-d `float64` tensor of 2.
    Runtime(Expr),
}

/// The converter (module docs).
pub fn resize(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let (dims, _) = cx.tensor(&x)?;
    if dims.len() != 4 {
        return Err(cx.error("only 4-d (N, C, H, W) inputs are resized"));
    }
    let legacy = cx.node.op() == "Upsample" || cx.opset < 11;
    let axes = match cx.node.ints("axes")? {
        Some(a) => normalize_axes(cx, &a, 4)?,
        None => (0..4).collect(),
    };
    if (1..axes.len()).any(|i| axes[..i].contains(&axes[i])) {
        return Err(cx.error(format!("axes {axes:?} repeat an axis")));
    }
    let antialias = cx.node.int_or("antialias", 0)? != 0;
    let mode = cx.node.string("mode")?.unwrap_or_else(|| "nearest".into());
    let method = match mode.as_str() {
        "nearest" => "nearest_neighbor",
        "linear" | "bilinear" => "linear",
        "cubic" if !legacy => "cubic",
        m => {
            return Err(cx.error(format!(
                "mode `{m}` is not supported (nearest, linear and cubic are)"
            )))
        }
    };
    if antialias && method == "nearest_neighbor" {
        return Err(cx.error("antialias = 1 applies to the linear and cubic modes, not nearest"));
    }
    let (coords, rounding) = if legacy {
        ("asymmetric".to_string(), "floor".to_string())
    } else {
        (
            cx.node
                .string("coordinate_transformation_mode")?
                .unwrap_or_else(|| "half_pixel".into()),
            cx.node
                .string("nearest_mode")?
                .unwrap_or_else(|| "round_prefer_floor".into()),
        )
    };
    let crop = coords == "tf_crop_and_resize";
    let roi = if crop {
        roi(cx, &axes)?
    } else {
        Roi::Const([(0.0, 1.0); 4])
    };
    let target = target(cx, legacy)?;
    let (out, mapping) = match (target, &roi) {
        (Target::Sizes(sizes), _) => sized(cx, &dims, &axes, sizes)?,
        (Target::Scales(sc), Roi::Const(r)) => scaled(cx, &dims, &axes, &sc, r)?,
        (Target::Scales(sc), Roi::Runtime(_)) => {
            let t = Tensor::from_vec(&[sc.len() as i64], sc).map_err(|e| cx.error(e))?;
            runtime_scaled(cx, &dims, &axes, Expr::constant(t), &roi)?
        }
        (Target::RuntimeScales(sc), _) => runtime_scaled(cx, &dims, &axes, sc, &roi)?,
    };
    // `tf_crop_and_resize` maps by the roi and the output size.
    let mapping = if crop { Mapping::Ratio } else { mapping };
    let mut attrs = vec![
        ("method", AttrValue::Str(method.into())),
        ("coordinate_transformation_mode", AttrValue::Str(coords)),
        ("rounding_method", AttrValue::Str(rounding)),
    ];
    if method == "cubic" || antialias {
        let a = cx.node.float_or("cubic_coeff_a", -0.75)?;
        let exclude = cx.node.int_or("exclude_outside", 0)?;
        attrs.push(("cubic_alpha", AttrValue::Float(f64::from(a))));
        attrs.push(("cubic_exclude", AttrValue::Int(i64::from(exclude != 0))));
    }
    if antialias {
        attrs.push(("antialias", AttrValue::Bool(true)));
    }
    if crop {
        let v = cx.node.float_or("extrapolation_value", 0.0)?;
        attrs.push(("extrapolation_value", AttrValue::Float(f64::from(v))));
    }
    let mut args = vec![x, shape(out.to_vec())];
    let roi_operand = match roi {
        Roi::Const(r) => {
            let r = [r[2].0, r[3].0, r[2].1, r[3].1];
            if crop {
                attrs.push(("roi", AttrValue::Array(r.map(AttrValue::Float).to_vec())));
            }
            Expr::constant(Tensor::from_vec(&[4], r.to_vec()).map_err(|e| cx.error(e))?)
        }
        Roi::Runtime(r) => {
            args.push(r.clone());
            r
        }
    };
    match mapping {
        Mapping::Ratio => {}
        Mapping::Const(sc) => {
            attrs.push((
                "scales",
                AttrValue::Array(sc.map(AttrValue::Float).to_vec()),
            ));
        }
        Mapping::Runtime(sc) => {
            if args.len() == 2 {
                args.push(roi_operand);
            }
            args.push(sc);
        }
    }
    Ok(vec![cx.call(
        "relax.image.resize2d",
        args,
        Attrs::from_pairs(attrs),
    )?])
}

/// The roi of `tf_crop_and_resize` (input 1: a start and an end per
/// listed axis); the batch and channel axes must not be cropped (checked
/// when the roi is constant; a roi computed at run time is read for the
/// spatial axes only).
fn roi(cx: &mut Ctx, axes: &[usize]) -> Result<Roi, Error> {
    if cx.is_computed(1)? {
        let r = cx.input(1)?;
        let (rdims, rdtype) = cx.tensor(&r)?;
        if rdims.len() != 1
            || rdims[0]
                .as_int()
                .is_some_and(|n| n != 2 * axes.len() as i64)
            || !rdtype.is_float()
        {
            return Err(cx.error(format!(
                "roi must be a 1-d float tensor of {} values (2 per resized axis), found dims {} of {rdtype}",
                2 * axes.len(),
                relax_core::ir::struct_info::fmt_dims(&rdims)
            )));
        }
        // [roi..., 0, 1], so that an axis not listed reads (0, 1).
        let r = cx.astype(r, DataType::f64())?;
        let unit = Tensor::from_vec(&[2], vec![0.0f64, 1.0]).map_err(|e| cx.error(e))?;
        let ext = cx.call(
            "relax.concat",
            vec![Expr::tuple(vec![r, Expr::constant(unit)])],
            Attrs::from_pairs([("axis", AttrValue::Int(0))]),
        )?;
        let n = 2 * axes.len() as i64;
        let at = |a: usize, end: bool| match axes.iter().position(|&b| b == a) {
            Some(k) => k as i64 + if end { axes.len() as i64 } else { 0 },
            None => n + i64::from(end),
        };
        let idx = vec![at(2, false), at(3, false), at(2, true), at(3, true)];
        let idx = Tensor::from_vec(&[4], idx).map_err(|e| cx.error(e))?;
        let picked = cx.call(
            "relax.take",
            vec![ext, Expr::constant(idx)],
            Attrs::from_pairs([("axis", AttrValue::Int(0))]),
        )?;
        return Ok(Roi::Runtime(picked));
    }
    let r = cx
        .const_input(1)?
        .map(|t| t.to_f64_vec())
        .unwrap_or_default();
    if r.len() != 2 * axes.len() || r.iter().any(|v| !v.is_finite()) {
        return Err(cx.error(format!(
            "roi {r:?} must have 2 finite values per resized axis ({})",
            2 * axes.len()
        )));
    }
    let mut roi = [(0.0f64, 1.0f64); 4];
    for (k, &a) in axes.iter().enumerate() {
        roi[a] = (r[k], r[k + axes.len()]);
    }
    if roi[0] != (0.0, 1.0) || roi[1] != (0.0, 1.0) {
        return Err(cx.error(format!("roi {r:?} crops the batch or channel axes")));
    }
    Ok(Roi::Const(roi))
}

/// The `sizes` or `scales` of the node (one must be given, not empty).
fn target(cx: &mut Ctx, legacy: bool) -> Result<Target, Error> {
    if cx.node.op() == "Upsample" && cx.opset < 9 {
        let sc = cx.node.floats("scales")?.unwrap_or_default();
        return Ok(Target::Scales(sc.into_iter().map(f64::from).collect()));
    }
    let scales_at = if legacy { 1 } else { 2 };
    if !legacy {
        if let Some(sizes) = cx.dims_input(3)?.filter(|s| !s.is_empty()) {
            return Ok(Target::Sizes(sizes));
        }
    }
    if cx.is_computed(scales_at)? {
        let sc = cx.input(scales_at)?;
        return Ok(Target::RuntimeScales(sc));
    }
    match cx.const_input(scales_at)?.map(|t| t.to_f64_vec()) {
        Some(sc) if !sc.is_empty() => Ok(Target::Scales(sc)),
        _ => Err(cx.error("scales or sizes are required")),
    }
}

/// Whether two dims are known to differ.
fn differs(a: &PrimExpr, b: &PrimExpr) -> bool {
    matches!((a.as_int(), b.as_int()), (Some(x), Some(y)) if x != y)
}

/// The output height and width from `sizes` (item 1 of the module docs).
fn sized(
    cx: &mut Ctx,
    dims: &[PrimExpr],
    axes: &[usize],
    sizes: Vec<PrimExpr>,
) -> Result<([PrimExpr; 2], Mapping), Error> {
    if sizes.len() != axes.len()
        || sizes.iter().any(|d| {
            d.as_int()
                .is_some_and(|d| !(0..=i32::MAX as i64).contains(&d))
        })
    {
        return Err(cx.error(format!(
            "sizes {} must be {} values in 0..2^31",
            relax_core::ir::struct_info::fmt_dims(&sizes),
            axes.len()
        )));
    }
    let policy = cx
        .node
        .string("keep_aspect_ratio_policy")?
        .unwrap_or_else(|| "stretch".into());
    let mut out: Vec<PrimExpr> = dims.to_vec();
    let mut mapping = Mapping::Ratio;
    match policy.as_str() {
        "stretch" => {
            for (&a, s) in axes.iter().zip(&sizes) {
                out[a] = s.clone();
            }
        }
        "not_larger" | "not_smaller" => {
            let larger = policy == "not_smaller";
            let known: Option<Vec<(i64, i64)>> = axes
                .iter()
                .zip(&sizes)
                .map(|(&a, s)| Some((dims[a].as_int()?, s.as_int()?)))
                .collect();
            match known {
                Some(pairs) => {
                    let ratios = pairs.iter().map(|&(i, s)| s as f64 / i as f64);
                    let factor = if larger {
                        ratios.fold(f64::NEG_INFINITY, f64::max)
                    } else {
                        ratios.fold(f64::INFINITY, f64::min)
                    };
                    let mut sc = [1.0; 2];
                    for (&a, &(i, _)) in axes.iter().zip(&pairs) {
                        out[a] = PrimExpr::int((i as f64 * factor + 0.5).floor() as i64);
                        if a >= 2 {
                            sc[a - 2] = factor;
                        }
                    }
                    mapping = Mapping::Const(sc);
                }
                None => {
                    if axes.iter().any(|&a| a < 2) {
                        return Err(cx.error(format!(
                            "keep_aspect_ratio_policy {policy} with sizes not known here \
                             must list only the spatial axes, found axes {axes:?}"
                        )));
                    }
                    let (kept, scales) = kept_aspect(cx, dims, axes, larger)?;
                    for (&a, d) in axes.iter().zip(kept) {
                        out[a] = d;
                    }
                    mapping = Mapping::Runtime(scales);
                }
            }
        }
        p => {
            return Err(cx.error(format!(
                "keep_aspect_ratio_policy {p} is not one of stretch, not_larger, not_smaller"
            )))
        }
    }
    if differs(&out[0], &dims[0]) || differs(&out[1], &dims[1]) {
        return Err(cx.error(format!(
            "sizes {} resize the batch or channel axes",
            relax_core::ir::struct_info::fmt_dims(&sizes)
        )));
    }
    Ok(([out[2].clone(), out[3].clone()], mapping))
}

/// The listed axes' output dims under `keep_aspect_ratio_policy`, computed
/// at run time from the `sizes` input (in `float64`, as ONNX's reference
/// computes them) and bound to fresh symbolic dims; and the spatial axes'
/// scales (the factor where listed, else 1) as a tensor, to map by.
fn kept_aspect(
    cx: &mut Ctx,
    dims: &[PrimExpr],
    axes: &[usize],
    larger: bool,
) -> Result<(Vec<PrimExpr>, Expr), Error> {
    let f64t = DataType::f64();
    let sizes = cx.input(3)?;
    let sizes = cx.astype(sizes, f64t)?;
    let ins = cx.dims_tensor(axes.iter().map(|&a| dims[a].clone()).collect())?;
    let ins = cx.astype(ins, f64t)?;
    let ratios = cx.op2("relax.divide", sizes, ins.clone())?;
    let reduce = if larger { "relax.max" } else { "relax.min" };
    let factor = cx.call(reduce, vec![ratios], Attrs::new())?;
    let scaled = cx.op2("relax.multiply", ins, factor.clone())?;
    let half = cx.scalar(0.5, f64t)?;
    let scaled = cx.op2("relax.add", scaled, half)?;
    let rounded = cx.op1("relax.floor", scaled)?;
    let rounded = cx.astype(rounded, DataType::i64())?;
    let dims = cx.bind_data_dims(rounded)?;
    let factor = cx.call(
        "relax.reshape",
        vec![factor, shape(vec![PrimExpr::int(1)])],
        Attrs::new(),
    )?;
    let at = [2usize, 3].map(|a| i64::from(!axes.contains(&a))).to_vec();
    let scales = pick(cx, factor, at, 1.0)?;
    Ok((dims, scales))
}

/// The output height and width from constant `scales` (items 1 and 3 of
/// the module docs): `floor(in · (end - start) · scale)` of a known dim,
/// `in · k` of a symbolic dim for a whole `k`, else computed at run time.
fn scaled(
    cx: &mut Ctx,
    dims: &[PrimExpr],
    axes: &[usize],
    sc: &[f64],
    roi: &[(f64, f64); 4],
) -> Result<([PrimExpr; 2], Mapping), Error> {
    if sc.len() != axes.len() || sc.iter().any(|v| !v.is_finite() || *v <= 0.0) {
        return Err(cx.error(format!(
            "scales {sc:?} must be {} positive values",
            axes.len()
        )));
    }
    let mut full = [1.0f64; 4];
    for (&a, &s) in axes.iter().zip(sc) {
        full[a] = s;
    }
    if full[0] != 1.0 || full[1] != 1.0 {
        return Err(cx.error(format!("scales {sc:?} resize the batch or channel axes")));
    }
    let mut out = [PrimExpr::int(0), PrimExpr::int(0)];
    for (k, a) in [2usize, 3].into_iter().enumerate() {
        let (f, (start, end)) = (full[a], roi[a]);
        let extent = (end - start) * f;
        out[k] = match dims[a].as_int() {
            Some(d) => {
                let exact = (d as f64 * extent).floor();
                if !(0.0..=i32::MAX as f64).contains(&exact) {
                    return Err(cx.error(format!("scale {f} of dim {d} is out of range")));
                }
                PrimExpr::int(exact as i64)
            }
            None if extent.fract() == 0.0 => dims[a].clone() * (extent as i64),
            None => {
                let t =
                    Tensor::from_vec(&[sc.len() as i64], sc.to_vec()).map_err(|e| cx.error(e))?;
                return runtime_scaled(cx, dims, axes, Expr::constant(t), &Roi::Const(*roi));
            }
        };
    }
    Ok((out, Mapping::Const([full[2], full[3]])))
}

/// A 1-d `float64` tensor of the values of `t` at `at`, where an index
/// equal to `t`'s length reads `fill`.
fn pick(cx: &mut Ctx, t: Expr, at: Vec<i64>, fill: f64) -> Result<Expr, Error> {
    let t = cx.astype(t, DataType::f64())?;
    let fill = Tensor::from_vec(&[1], vec![fill]).map_err(|e| cx.error(e))?;
    let ext = cx.call(
        "relax.concat",
        vec![Expr::tuple(vec![t, Expr::constant(fill)])],
        Attrs::from_pairs([("axis", AttrValue::Int(0))]),
    )?;
    let at = Tensor::from_vec(&[at.len() as i64], at).map_err(|e| cx.error(e))?;
    cx.call(
        "relax.take",
        vec![ext, Expr::constant(at)],
        Attrs::from_pairs([("axis", AttrValue::Int(0))]),
    )
}

/// The batch and channel dims ONNX's scales give, `floor(in · scale)`,
/// matched at run time (a `match_cast`) against the input's: a run-time
/// scale that would resize either axis fails the call instead of giving
/// a result of another shape than ONNX's.
fn check_outer_unscaled(
    cx: &mut Ctx,
    dims: &[PrimExpr],
    axes: &[usize],
    scales: &Expr,
) -> Result<(), Error> {
    let (at, outer): (Vec<i64>, Vec<PrimExpr>) = axes
        .iter()
        .enumerate()
        .filter(|&(_, &a)| a < 2)
        .map(|(k, &a)| (k as i64, dims[a].clone()))
        .unzip();
    if at.is_empty() {
        return Ok(());
    }
    let f64t = DataType::f64();
    let at = Tensor::from_vec(&[at.len() as i64], at).map_err(|e| cx.error(e))?;
    let picked = cx.call(
        "relax.take",
        vec![scales.clone(), Expr::constant(at)],
        Attrs::from_pairs([("axis", AttrValue::Int(0))]),
    )?;
    let picked = cx.astype(picked, f64t)?;
    let ins = cx.dims_tensor(outer.clone())?;
    let ins = cx.astype(ins, f64t)?;
    let exact = cx.op2("relax.multiply", ins, picked)?;
    let sizes = cx.op1("relax.floor", exact)?;
    let sizes = cx.astype(sizes, DataType::i64())?;
    let sizes = cx.call("relax.tensor_to_shape", vec![sizes], Attrs::new())?;
    cx.bb
        .emit_match_cast(sizes, relax_core::ir::StructInfo::shape(outer))
        .map_err(|e| cx.error(e))?;
    Ok(())
}

/// The output height and width from scales computed at run time:
/// `floor(in · (end - start) · scale)` per spatial axis (in `float64`, as
/// ONNX's reference computes it), bound to fresh symbolic dims
/// (`tensor_to_shape`, then a `match_cast`); and the scales of the two
/// spatial axes as a tensor, to map coordinates by. This op never resizes
/// the batch and channel axes, so where their scales are listed
/// [`check_outer_unscaled`] makes any scale that would change them an
/// error when the model runs.
fn runtime_scaled(
    cx: &mut Ctx,
    dims: &[PrimExpr],
    axes: &[usize],
    scales: Expr,
    roi: &Roi,
) -> Result<([PrimExpr; 2], Mapping), Error> {
    let (sdims, _) = cx.tensor(&scales)?;
    if sdims.len() != 1 || sdims[0].as_int() != Some(axes.len() as i64) {
        return Err(cx.error(format!(
            "scales must be a 1-d tensor of {} values, found dims {}",
            axes.len(),
            relax_core::ir::struct_info::fmt_dims(&sdims)
        )));
    }
    check_outer_unscaled(cx, dims, axes, &scales)?;
    let n = axes.len() as i64;
    let listed: Vec<bool> = [2usize, 3].iter().map(|a| axes.contains(a)).collect();
    let at: Vec<i64> = [2usize, 3]
        .iter()
        .map(|a| axes.iter().position(|b| b == a).map_or(n, |k| k as i64))
        .collect();
    let spatial = pick(cx, scales, at, 1.0)?;
    if !listed.contains(&true) {
        return Ok((
            [dims[2].clone(), dims[3].clone()],
            Mapping::Runtime(spatial),
        ));
    }
    let f64t = DataType::f64();
    let extents = match roi {
        Roi::Const(r) => {
            let e = vec![r[2].1 - r[2].0, r[3].1 - r[3].0];
            Expr::constant(Tensor::from_vec(&[2], e).map_err(|e| cx.error(e))?)
        }
        Roi::Runtime(r) => {
            let take = |cx: &mut Ctx, at: Vec<i64>| {
                let at = Tensor::from_vec(&[2], at).map_err(|e| cx.error(e))?;
                cx.call(
                    "relax.take",
                    vec![r.clone(), Expr::constant(at)],
                    Attrs::from_pairs([("axis", AttrValue::Int(0))]),
                )
            };
            let (starts, ends) = (take(cx, vec![0, 1])?, take(cx, vec![2, 3])?);
            cx.op2("relax.subtract", ends, starts)?
        }
    };
    let ins = cx.dims_tensor(vec![dims[2].clone(), dims[3].clone()])?;
    let ins = cx.astype(ins, f64t)?;
    let ins = cx.op2("relax.multiply", ins, extents)?;
    let exact = cx.op2("relax.multiply", ins, spatial.clone())?;
    let sizes = cx.op1("relax.floor", exact)?;
    let sizes = cx.astype(sizes, DataType::i64())?;
    let sizes = cx.call("relax.tensor_to_shape", vec![sizes], Attrs::new())?;
    let name = cx.node.proto.output.first().map_or("d", String::as_str);
    let base = relax_core::printer::dsl::identifier(name);
    // A spatial axis not listed keeps its dim (the match checks it).
    let out: Vec<PrimExpr> = [2usize, 3]
        .iter()
        .zip(&listed)
        .map(|(&a, &l)| match l {
            true => relax_core::ir::TirVar::new(format!("{base}_{a}")).to_expr(),
            false => dims[a].clone(),
        })
        .collect();
    cx.bb
        .emit_match_cast(sizes, relax_core::ir::StructInfo::shape(out.clone()))
        .map_err(|e| cx.error(e))?;
    Ok(([out[0].clone(), out[1].clone()], Mapping::Runtime(spatial)))
}
