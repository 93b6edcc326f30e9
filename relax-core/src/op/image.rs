//! Image ops: `image.resize2d` (TVM's `relax.op.image.resize2d`): NCHW
//! data resized to `size` (one value for both axes, or height and width)
//! by `nearest_neighbor`, `linear` or `cubic` interpolation, under TVM's
//! coordinate-transformation modes (`tf_crop_and_resize` with its `roi`
//! and `extrapolation_value`) and ONNX's `half_pixel_symmetric`, rounding
//! modes and cubic coefficient, optionally mapping coordinates by
//! `scales` rather than by the size ratio and antialiased as ONNX's
//! `Resize` (`relax_runtime::kernels::image` defines them). TVM's call
//! `resize2d(data, size, …)` keeps its meaning; `roi` and `scales`
//! computed at run time are the optional third and fourth operands
//! (1-d float tensors of 4 and 2 values; `scales` as an operand needs
//! `roi` as one too), which take the place of the attributes;
//! `image.grid_sample` (TVM's `relax.op.image.grid_sample`): NCHW or
//! NCDHW data sampled at the normalized points of a grid laid out as
//! `(N, 2, Ho, Wo)` or `(N, 3, Do, Ho, Wo)`; and `image.affine_grid`
//! (TVM's `relax.op.image.affine_grid`): the `(N, 2, H, W)` grid of
//! `(N, 2, 3)` affine matrices over an output size
//! (`relax_runtime::kernels::grid` defines both).

use super::attr::{AttrDefault, AttrSpec, AttrType};
use super::infer::{attr, attr_dtype, error, shape_arg, tensor, tensor_arg};
use super::{Arity, OpInfo, OpPatternKind};
use crate::arith::Analyzer;
use crate::ir::{AttrValue, Call, StructInfo};
use relax_runtime::kernels::grid::GridSampleMode;
use relax_runtime::kernels::image::{ResizeAttrs, ResizeMode};
use relax_runtime::Diagnostic;

fn str_attr<'a>(call: &'a Call, name: &str, default: &'a str) -> &'a str {
    match attr(call, name) {
        Some(AttrValue::Str(s)) => s,
        _ => default,
    }
}

/// The mode of a `resize2d` call, checked.
pub fn resize_mode(call: &Call) -> Result<ResizeMode, Diagnostic> {
    let layout = str_attr(call, "layout", "NCHW");
    if layout != "NCHW" {
        return Err(error(
            call,
            "op-layout-unsupported",
            format!("layout {layout} is not supported (NCHW is)"),
        ));
    }
    let num = |name: &str, default: f64| {
        attr(call, name)
            .and_then(AttrValue::as_float)
            .unwrap_or(default)
    };
    let roi = match attr(call, "roi") {
        None => Some(vec![]),
        Some(AttrValue::Array(items)) => items.iter().map(AttrValue::as_float).collect(),
        Some(_) => None,
    };
    let Some(roi) = roi else {
        return Err(error(call, "op-attr-value", "roi must be a list of floats"));
    };
    let scales = match attr(call, "scales") {
        None => Some(vec![]),
        Some(AttrValue::Array(items)) => items.iter().map(AttrValue::as_float).collect(),
        Some(_) => None,
    };
    let Some(scales) = scales else {
        return Err(error(
            call,
            "op-attr-value",
            "scales must be a list of floats",
        ));
    };
    if call.args.len() > 3 && !scales.is_empty() {
        return Err(error(
            call,
            "op-attr-value",
            "scales are given both as an attribute and as an operand",
        ));
    }
    ResizeMode::parse(&ResizeAttrs {
        method: str_attr(call, "method", "linear"),
        coordinates: str_attr(call, "coordinate_transformation_mode", "half_pixel"),
        rounding: str_attr(call, "rounding_method", "round"),
        cubic_alpha: num("cubic_alpha", -0.75),
        cubic_exclude: num("cubic_exclude", 0.0) as i64,
        extrapolation_value: num("extrapolation_value", 0.0),
        roi,
        scales,
        antialias: super::infer::attr_bool(call, "antialias", false),
    })
    .map_err(|m| error(call, "op-attr-value", m))
}

fn infer_resize2d(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let data = tensor_arg(call, 0)?;
    resize_mode(call)?;
    if call.args.len() > 4 {
        return Err(error(
            call,
            "op-arg-count",
            format!("expected 2 to 4 arguments, found {}", call.args.len()),
        ));
    }
    for (i, name, len) in [(2, "roi", 4), (3, "scales", 2)] {
        if call.args.len() <= i {
            continue;
        }
        let t = tensor_arg(call, i)?;
        let known_len = t
            .shape_values()
            .and_then(|d| d.first().and_then(|v| v.as_int()));
        let bad_len = known_len.is_some_and(|n| n != len);
        if (!t.is_unknown_ndim() && t.ndim != 1)
            || bad_len
            || (!t.dtype.is_void() && !t.dtype.is_float())
        {
            return Err(error(
                call,
                "op-shape",
                format!(
                    "{name} must be a 1-d float tensor of {len} values, found {}",
                    super::infer::arg_sinfo(call, i)?
                ),
            ));
        }
    }
    if !data.is_unknown_ndim() && data.ndim != 4 {
        return Err(error(
            call,
            "op-rank",
            format!("data must have rank 4, found rank {}", data.ndim),
        ));
    }
    let out_dtype = attr_dtype(call, "out_dtype");
    let dtype = if out_dtype.is_void() {
        data.dtype
    } else {
        out_dtype
    };
    let size = match shape_arg(call, 1)? {
        Ok(v) => v,
        Err(_) => return Ok(StructInfo::tensor_ndim(4, dtype)),
    };
    let (h, w) = match size.as_slice() {
        [s] => (s.clone(), s.clone()),
        [a, b] => (a.clone(), b.clone()),
        _ => {
            return Err(error(
                call,
                "op-attr-value",
                format!("size must have 1 or 2 values, found {}", size.len()),
            ))
        }
    };
    let Some(dims) = data.shape_values() else {
        return Ok(StructInfo::tensor_ndim(4, dtype));
    };
    Ok(tensor(
        Some(vec![dims[0].clone(), dims[1].clone(), h, w]),
        4,
        dtype,
        ana,
    ))
}

/// The mode of a `grid_sample` call, checked.
pub fn grid_sample_mode(call: &Call) -> Result<GridSampleMode, Diagnostic> {
    GridSampleMode::parse(
        str_attr(call, "method", "bilinear"),
        str_attr(call, "layout", "NCHW"),
        str_attr(call, "padding_mode", "zeros"),
        super::infer::attr_bool(call, "align_corners", true),
    )
    .map_err(|m| error(call, "op-attr-value", m))
}

fn infer_grid_sample(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let data = tensor_arg(call, 0)?;
    let grid = tensor_arg(call, 1)?;
    let mode = grid_sample_mode(call)?;
    let k = mode.spatial;
    let ndim = k as i32 + 2;
    for (name, t) in [("data", &data), ("grid", &grid)] {
        if !t.is_unknown_ndim() && t.ndim != ndim {
            return Err(error(
                call,
                "op-rank",
                format!("{name} must have rank {ndim}, found rank {}", t.ndim),
            ));
        }
    }
    if !grid.dtype.is_void() && !grid.dtype.is_float() {
        return Err(error(
            call,
            "op-dtype",
            format!("grid must be a float tensor, found {}", grid.dtype),
        ));
    }
    let (Some(d), Some(g)) = (data.shape_values(), grid.shape_values()) else {
        return Ok(StructInfo::tensor_ndim(ndim, data.dtype));
    };
    if g[1].as_int().is_some_and(|c| c != k as i64) {
        return Err(error(
            call,
            "op-shape",
            format!("grid must have {k} coordinates on axis 1, found {}", g[1]),
        ));
    }
    if let (Some(a), Some(b)) = (d[0].as_int(), g[0].as_int()) {
        if a != b {
            return Err(error(
                call,
                "op-shape",
                format!("data has batch {a} and grid batch {b}"),
            ));
        }
    }
    let mut out = vec![d[0].clone(), d[1].clone()];
    out.extend(g[2..].iter().cloned());
    Ok(tensor(Some(out), ndim, data.dtype, ana))
}

fn infer_affine_grid(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let data = tensor_arg(call, 0)?;
    if !data.is_unknown_ndim() && data.ndim != 3 {
        return Err(error(
            call,
            "op-rank",
            format!("data must have rank 3 (N, 2, 3), found rank {}", data.ndim),
        ));
    }
    if !data.dtype.is_void() && !data.dtype.is_float() {
        return Err(error(
            call,
            "op-dtype",
            format!("data must be a float tensor, found {}", data.dtype),
        ));
    }
    let size = match shape_arg(call, 1)? {
        Ok(v) => Some(v),
        Err(n) if n == 2 || n < 0 => None,
        Err(n) => {
            return Err(error(
                call,
                "op-attr-value",
                format!("size must have 2 values, found {n}"),
            ))
        }
    };
    if let Some(size) = &size {
        if size.len() != 2 {
            return Err(error(
                call,
                "op-attr-value",
                format!("size must have 2 values, found {}", size.len()),
            ));
        }
    }
    let dims = data.shape_values();
    if let Some(d) = dims {
        if d[1].as_int().is_some_and(|v| v != 2) || d[2].as_int().is_some_and(|v| v != 3) {
            return Err(error(
                call,
                "op-shape",
                format!(
                    "data must be (N, 2, 3), found {}",
                    crate::ir::struct_info::fmt_dims(d)
                ),
            ));
        }
    }
    match (dims, size) {
        (Some(d), Some(s)) => Ok(tensor(
            Some(vec![
                d[0].clone(),
                crate::ir::PrimExpr::int(2),
                s[0].clone(),
                s[1].clone(),
            ]),
            4,
            data.dtype,
            ana,
        )),
        _ => Ok(StructInfo::tensor_ndim(4, data.dtype)),
    }
}

/// The image ops.
pub const OPS: &[OpInfo] = &[
    OpInfo {
        name: "relax.image.resize2d",
        args: &["data", "size", "roi", "scales"],
        arity: Arity::AtLeast(2),
        attrs: &[
            AttrSpec::new(
                "roi",
                AttrType::FloatArray,
                AttrDefault::FloatArray(&[0.0, 0.0, 0.0, 0.0]),
            ),
            AttrSpec::new("layout", AttrType::Str, AttrDefault::Str("NCHW")),
            AttrSpec::new("method", AttrType::Str, AttrDefault::Str("linear")),
            AttrSpec::new(
                "coordinate_transformation_mode",
                AttrType::Str,
                AttrDefault::Str("half_pixel"),
            ),
            AttrSpec::new("rounding_method", AttrType::Str, AttrDefault::Str("round")),
            AttrSpec::new("cubic_alpha", AttrType::Float, AttrDefault::Float(-0.75)),
            AttrSpec::new("cubic_exclude", AttrType::Int, AttrDefault::Int(0)),
            AttrSpec::new(
                "extrapolation_value",
                AttrType::Float,
                AttrDefault::Float(0.0),
            ),
            AttrSpec::new(
                "out_dtype",
                AttrType::DataType,
                AttrDefault::DataType("void"),
            ),
            AttrSpec::new("scales", AttrType::FloatArray, AttrDefault::FloatArray(&[])),
            AttrSpec::new("antialias", AttrType::Bool, AttrDefault::Bool(false)),
        ],
        infer_struct_info: infer_resize2d,
        purity: true,
        pattern: OpPatternKind::Injective,
    },
    OpInfo {
        name: "relax.image.grid_sample",
        args: &["data", "grid"],
        arity: Arity::Exact(2),
        attrs: &[
            AttrSpec::new("method", AttrType::Str, AttrDefault::Str("bilinear")),
            AttrSpec::new("layout", AttrType::Str, AttrDefault::Str("NCHW")),
            AttrSpec::new("padding_mode", AttrType::Str, AttrDefault::Str("zeros")),
            AttrSpec::new("align_corners", AttrType::Bool, AttrDefault::Bool(true)),
        ],
        infer_struct_info: infer_grid_sample,
        purity: true,
        pattern: OpPatternKind::Injective,
    },
    OpInfo {
        name: "relax.image.affine_grid",
        args: &["data", "size"],
        arity: Arity::Exact(2),
        attrs: &[AttrSpec::new(
            "align_corners",
            AttrType::Bool,
            AttrDefault::Bool(false),
        )],
        infer_struct_info: infer_affine_grid,
        purity: true,
        pattern: OpPatternKind::Injective,
    },
];

#[cfg(test)]
mod tests {
    use crate::ir::AttrValue;
    use crate::op::testing::*;

    #[test]
    fn resize2d() {
        let n = sym("n");
        let data = t(&[n.clone(), d(3), d(8), d(8)], F32);
        let size = shape(&[d(16), d(12)]);
        assert_infers(
            "relax.image.resize2d",
            &[data.clone(), size.clone()],
            &[("method", AttrValue::from("nearest_neighbor"))],
            "R.Tensor((n, 3, 16, 12), dtype=\"float32\")",
        );
        assert_fails(
            "relax.image.resize2d",
            &[data.clone(), size.clone()],
            &[("method", AttrValue::from("bicubic"))],
            "image.resize2d: method must be nearest_neighbor, linear or cubic, found bicubic",
        );
        assert_infers(
            "relax.image.resize2d",
            &[data.clone(), size.clone()],
            &[
                ("method", AttrValue::from("cubic")),
                (
                    "coordinate_transformation_mode",
                    AttrValue::from("tf_crop_and_resize"),
                ),
                ("roi", AttrValue::Array(vec![AttrValue::Float(0.25); 4])),
            ],
            "R.Tensor((n, 3, 16, 12), dtype=\"float32\")",
        );
        assert_fails(
            "relax.image.resize2d",
            &[data.clone(), size.clone()],
            &[("roi", AttrValue::Array(vec![AttrValue::Float(0.25); 3]))],
            "image.resize2d: roi must have 4 values, found 3",
        );
        assert_fails(
            "relax.image.resize2d",
            &[t(&[d(8), d(8)], F32), size],
            &[],
            "image.resize2d: data must have rank 4, found rank 2",
        );
    }

    #[test]
    fn resize2d_scales_roi_and_antialias() {
        let n = sym("n");
        let data = t(&[n.clone(), d(3), d(8), d(8)], F32);
        let size = shape(&[d(4), d(5)]);
        let roi = t(&[d(4)], F32);
        let scales = t(&[d(2)], F32);
        let floats = |v: &[f64]| AttrValue::Array(v.iter().map(|&f| AttrValue::Float(f)).collect());
        let out = "R.Tensor((n, 3, 4, 5), dtype=\"float32\")";
        assert_infers(
            "relax.image.resize2d",
            &[data.clone(), size.clone()],
            &[
                ("scales", floats(&[0.6, 0.7])),
                ("antialias", AttrValue::Bool(true)),
                (
                    "coordinate_transformation_mode",
                    AttrValue::from("half_pixel_symmetric"),
                ),
            ],
            out,
        );
        assert_infers(
            "relax.image.resize2d",
            &[data.clone(), size.clone(), roi.clone(), scales.clone()],
            &[],
            out,
        );
        assert_fails(
            "relax.image.resize2d",
            &[data.clone(), size.clone(), roi.clone(), scales.clone()],
            &[("scales", floats(&[0.6, 0.7]))],
            "image.resize2d: scales are given both as an attribute and as an operand",
        );
        assert_fails(
            "relax.image.resize2d",
            &[data.clone(), size.clone(), roi.clone(), t(&[d(3)], F32)],
            &[],
            "image.resize2d: scales must be a 1-d float tensor of 2 values, found R.Tensor((3,), dtype=\"float32\")",
        );
        assert_fails(
            "relax.image.resize2d",
            &[data.clone(), size.clone(), t(&[d(4)], I64)],
            &[],
            "image.resize2d: roi must be a 1-d float tensor of 4 values, found R.Tensor((4,), dtype=\"int64\")",
        );
        assert_fails(
            "relax.image.resize2d",
            &[data.clone(), size.clone()],
            &[("scales", floats(&[0.6, -1.0]))],
            "image.resize2d: scales must be finite and positive, found [0.6, -1.0]",
        );
        assert_fails(
            "relax.image.resize2d",
            &[data.clone(), size.clone()],
            &[
                ("method", AttrValue::from("nearest_neighbor")),
                ("antialias", AttrValue::Bool(true)),
            ],
            "image.resize2d: antialias applies to linear and cubic, not nearest_neighbor",
        );
        assert_fails(
            "relax.image.resize2d",
            &[data, size, roi.clone(), scales, roi],
            &[],
            "image.resize2d: expected 2 to 4 arguments, found 5",
        );
    }

    #[test]
    fn grid_sample() {
        let n = sym("n");
        let data = t(&[n.clone(), d(3), d(8), d(8)], F32);
        let grid = t(&[n.clone(), d(2), d(5), d(7)], F32);
        assert_infers(
            "relax.image.grid_sample",
            &[data.clone(), grid.clone()],
            &[("method", AttrValue::from("bicubic"))],
            "R.Tensor((n, 3, 5, 7), dtype=\"float32\")",
        );
        assert_infers(
            "relax.image.grid_sample",
            &[
                t(&[d(1), d(3), d(4), d(8), d(8)], F32),
                t(&[d(1), d(3), d(2), d(5), d(7)], F32),
            ],
            &[("layout", AttrValue::from("NCDHW"))],
            "R.Tensor((1, 3, 2, 5, 7), dtype=\"float32\")",
        );
        assert_fails(
            "relax.image.grid_sample",
            &[data.clone(), t(&[n.clone(), d(3), d(5), d(7)], F32)],
            &[],
            "image.grid_sample: grid must have 2 coordinates on axis 1, found 3",
        );
        assert_fails(
            "relax.image.grid_sample",
            &[data.clone(), grid.clone()],
            &[("padding_mode", AttrValue::from("wrap"))],
            "image.grid_sample: padding_mode must be zeros, border or reflection, found wrap",
        );
        assert_fails(
            "relax.image.grid_sample",
            &[
                t(&[d(2), d(3), d(8), d(8)], F32),
                t(&[d(1), d(2), d(5), d(7)], F32),
            ],
            &[],
            "image.grid_sample: data has batch 2 and grid batch 1",
        );
    }

    #[test]
    fn affine_grid() {
        let n = sym("n");
        assert_infers(
            "relax.image.affine_grid",
            &[t(&[n.clone(), d(2), d(3)], F32), shape(&[d(5), d(6)])],
            &[],
            "R.Tensor((n, 2, 5, 6), dtype=\"float32\")",
        );
        assert_fails(
            "relax.image.affine_grid",
            &[t(&[n.clone(), d(3), d(4)], F32), shape(&[d(5), d(6)])],
            &[],
            "image.affine_grid: data must be (N, 2, 3), found (n, 3, 4)",
        );
        assert_fails(
            "relax.image.affine_grid",
            &[t(&[n, d(2), d(3)], F32), shape(&[d(5), d(6), d(7)])],
            &[],
            "image.affine_grid: size must have 2 values, found 3",
        );
    }
}
