//! `Resize` and `Upsample` as `image.resize2d` over the last two axes of
//! 4-d (N, C, H, W) data.
//!
//! 1. The output height and width come from `sizes` or from `scales`
//!    (`floor(in · scale)`, times the roi's extent under
//!    `tf_crop_and_resize`), given for every axis or for the axes of the
//!    `axes` attribute; the batch and channel axes must keep their size.
//!    `sizes` may be symbolic (computed from another tensor's `Shape`) or
//!    computed at run time; `scales` computed at run time give the output
//!    size as a tensor, bound to fresh symbolic dims (`tensor_to_shape`,
//!    then a `match_cast`). `keep_aspect_ratio_policy` (`not_larger`,
//!    `not_smaller`) scales the listed axes by one factor, the smallest or
//!    largest of `size / in`, each to `floor(in · factor + 0.5)`.
//! 2. `mode` `nearest`, `linear` and `cubic` are the methods
//!    `nearest_neighbor`, `linear` and `cubic`; `cubic_coeff_a` and
//!    `exclude_outside` are `cubic_alpha` and `cubic_exclude`;
//!    `nearest_mode` is the `rounding_method`; `tf_crop_and_resize` takes
//!    a constant `roi` and `extrapolation_value`. `Upsample` and `Resize`
//!    before opset 11 are `asymmetric` with `floor`.
//! 3. `image.resize2d` maps output to input coordinates by `in / out`;
//!    ONNX by `1 / scale` when `scales` are given. The two agree when
//!    `in · scale` is a whole number; a constant scale of a known dim
//!    whose product is not whole is an error, and scales computed at run
//!    time must give whole products, checked when the program runs (the
//!    output size is bound once as the floor and once as the ceiling of
//!    the product, and a `match_cast` requires the two to agree).
//!    `antialias` and `half_pixel_symmetric` have no `image.resize2d`
//!    counterpart and are errors, as is a `roi` computed at run time (it
//!    is an attribute).

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
    if cx.node.int_or("antialias", 0)? != 0 {
        return Err(cx.error("antialias = 1 is not supported (image.resize2d has no antialiasing)"));
    }
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
    if coords == "half_pixel_symmetric" {
        return Err(cx.error(
            "coordinate_transformation_mode half_pixel_symmetric is not supported \
             (image.resize2d has no such mode)",
        ));
    }
    let crop = coords == "tf_crop_and_resize";
    // The roi as (start, end) per axis, identity where not given.
    let mut roi = [(0.0f64, 1.0f64); 4];
    if crop {
        if cx.is_computed(1)? {
            return Err(cx.error(
                "a roi computed at run time is not supported (image.resize2d takes it as an attribute)",
            ));
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
        for (k, &a) in axes.iter().enumerate() {
            roi[a] = (r[k], r[k + axes.len()]);
        }
        if roi[0] != (0.0, 1.0) || roi[1] != (0.0, 1.0) {
            return Err(cx.error(format!("roi {r:?} crops the batch or channel axes")));
        }
    }
    let target = target(cx, legacy)?;
    let out = match target {
        Target::Sizes(sizes) => sized(cx, &dims, &axes, sizes)?,
        Target::Scales(sc) => scaled(cx, &dims, &axes, &sc, &roi)?,
        Target::RuntimeScales(sc) => runtime_scaled(cx, &dims, &axes, sc, &roi)?,
    };
    let mut attrs = vec![
        ("method", AttrValue::Str(method.into())),
        ("coordinate_transformation_mode", AttrValue::Str(coords)),
        ("rounding_method", AttrValue::Str(rounding)),
    ];
    if method == "cubic" {
        let a = cx.node.float_or("cubic_coeff_a", -0.75)?;
        let exclude = cx.node.int_or("exclude_outside", 0)?;
        attrs.push(("cubic_alpha", AttrValue::Float(f64::from(a))));
        attrs.push(("cubic_exclude", AttrValue::Int(i64::from(exclude != 0))));
    }
    if crop {
        let roi = [roi[2].0, roi[3].0, roi[2].1, roi[3].1];
        attrs.push(("roi", AttrValue::Array(roi.map(AttrValue::Float).to_vec())));
        let v = cx.node.float_or("extrapolation_value", 0.0)?;
        attrs.push(("extrapolation_value", AttrValue::Float(f64::from(v))));
    }
    Ok(vec![cx.call(
        "relax.image.resize2d",
        vec![x, shape(out.to_vec())],
        Attrs::from_pairs(attrs),
    )?])
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
) -> Result<[PrimExpr; 2], Error> {
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
                    for (&a, &(i, _)) in axes.iter().zip(&pairs) {
                        out[a] = PrimExpr::int((i as f64 * factor + 0.5).floor() as i64);
                    }
                }
                None => {
                    if axes.iter().any(|&a| a < 2) {
                        return Err(cx.error(format!(
                            "keep_aspect_ratio_policy {policy} with sizes not known here \
                             must list only the spatial axes, found axes {axes:?}"
                        )));
                    }
                    let kept = kept_aspect(cx, dims, axes, larger)?;
                    for (&a, d) in axes.iter().zip(kept) {
                        out[a] = d;
                    }
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
    Ok([out[2].clone(), out[3].clone()])
}

/// The listed axes' output dims under `keep_aspect_ratio_policy`, computed
/// at run time from the `sizes` input (in `float64`, as ONNX's reference
/// computes them) and bound to fresh symbolic dims.
fn kept_aspect(
    cx: &mut Ctx,
    dims: &[PrimExpr],
    axes: &[usize],
    larger: bool,
) -> Result<Vec<PrimExpr>, Error> {
    let f64t = DataType::f64();
    let sizes = cx.input(3)?;
    let sizes = cx.astype(sizes, f64t)?;
    let ins = cx.dims_tensor(axes.iter().map(|&a| dims[a].clone()).collect())?;
    let ins = cx.astype(ins, f64t)?;
    let ratios = cx.op2("relax.divide", sizes, ins.clone())?;
    let reduce = if larger { "relax.max" } else { "relax.min" };
    let factor = cx.call(reduce, vec![ratios], Attrs::new())?;
    let scaled = cx.op2("relax.multiply", ins, factor)?;
    let half = cx.scalar(0.5, f64t)?;
    let scaled = cx.op2("relax.add", scaled, half)?;
    let rounded = cx.op1("relax.floor", scaled)?;
    let rounded = cx.astype(rounded, DataType::i64())?;
    cx.bind_data_dims(rounded)
}

/// The output height and width from constant `scales` (items 1 and 3 of
/// the module docs).
fn scaled(
    cx: &mut Ctx,
    dims: &[PrimExpr],
    axes: &[usize],
    sc: &[f64],
    roi: &[(f64, f64); 4],
) -> Result<[PrimExpr; 2], Error> {
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
                let exact = d as f64 * extent;
                if exact.fract() != 0.0 {
                    return Err(cx.error(format!(
                        "scale {f} of dim {d} gives {exact}, not a whole size: \
                         image.resize2d maps coordinates by in / out, which differs from \
                         ONNX's 1 / scale here"
                    )));
                }
                if !(0.0..=i32::MAX as f64).contains(&exact) {
                    return Err(cx.error(format!("scale {f} of dim {d} is out of range")));
                }
                PrimExpr::int(exact.floor() as i64)
            }
            None if extent.fract() == 0.0 => dims[a].clone() * (extent as i64),
            None => {
                return Err(cx.error(format!(
                    "scale {f} of the symbolic dim {} is not a whole number",
                    dims[a]
                )))
            }
        };
    }
    Ok(out)
}

/// The output height and width from scales computed at run time:
/// `in · (end - start) · scale` per spatial axis (in `float64`), bound to
/// fresh symbolic dims once as its floor and once as its ceiling, so that
/// a product that is not whole fails the `match_cast` at run time (module
/// docs, item 3). The batch and channel scales are taken to be 1.
fn runtime_scaled(
    cx: &mut Ctx,
    dims: &[PrimExpr],
    axes: &[usize],
    scales: Expr,
    roi: &[(f64, f64); 4],
) -> Result<[PrimExpr; 2], Error> {
    let (sdims, _) = cx.tensor(&scales)?;
    if sdims.len() != 1 || sdims[0].as_int() != Some(axes.len() as i64) {
        return Err(cx.error(format!(
            "scales must be a 1-d tensor of {} values, found dims {}",
            axes.len(),
            relax_core::ir::struct_info::fmt_dims(&sdims)
        )));
    }
    // The positions in `scales` of the spatial axes it lists.
    let listed: Vec<(usize, usize)> = [2usize, 3]
        .into_iter()
        .filter_map(|a| axes.iter().position(|&b| b == a).map(|k| (a, k)))
        .collect();
    let mut out = [dims[2].clone(), dims[3].clone()];
    if listed.is_empty() {
        return Ok(out);
    }
    let f64t = DataType::f64();
    let at: Vec<i64> = listed.iter().map(|&(_, k)| k as i64).collect();
    let at = Tensor::from_vec(&[at.len() as i64], at).map_err(|e| cx.error(e))?;
    let picked = cx.call(
        "relax.take",
        vec![scales, Expr::constant(at)],
        Attrs::from_pairs([("axis", AttrValue::Int(0))]),
    )?;
    let picked = cx.astype(picked, f64t)?;
    let extents: Vec<f64> = listed.iter().map(|&(a, _)| roi[a].1 - roi[a].0).collect();
    let extents = Tensor::from_vec(&[extents.len() as i64], extents).map_err(|e| cx.error(e))?;
    let ins = cx.dims_tensor(listed.iter().map(|&(a, _)| dims[a].clone()).collect())?;
    let ins = cx.astype(ins, f64t)?;
    let ins = cx.op2("relax.multiply", ins, Expr::constant(extents))?;
    let exact = cx.op2("relax.multiply", ins, picked)?;
    let low = cx.op1("relax.floor", exact.clone())?;
    let high = cx.op1("relax.ceil", exact)?;
    let both = cx.call(
        "relax.concat",
        vec![Expr::tuple(vec![low, high])],
        Attrs::from_pairs([("axis", AttrValue::Int(0))]),
    )?;
    let both = cx.astype(both, DataType::i64())?;
    let both = cx.call("relax.tensor_to_shape", vec![both], Attrs::new())?;
    let name = cx.node.proto.output.first().map_or("d", String::as_str);
    let base = relax_core::printer::dsl::identifier(name);
    let vars: Vec<PrimExpr> = listed
        .iter()
        .map(|&(a, _)| relax_core::ir::TirVar::new(format!("{base}_{a}")).to_expr())
        .collect();
    // Each size twice, as its floor and its ceiling: the match fails at
    // run time unless `in · scale` is whole (module docs, item 3).
    let twice = [vars.clone(), vars.clone()].concat();
    cx.bb
        .emit_match_cast(both, relax_core::ir::StructInfo::shape(twice))
        .map_err(|e| cx.error(e))?;
    for (&(a, _), d) in listed.iter().zip(vars) {
        out[a - 2] = d;
    }
    Ok(out)
}
