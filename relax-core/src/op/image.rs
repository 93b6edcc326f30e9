//! Image ops: `image.resize2d` (TVM's `relax.op.image.resize2d`): NCHW
//! data resized to `size` (one value for both axes, or height and width)
//! by `nearest_neighbor`, `linear` or `cubic` interpolation, under TVM's
//! coordinate-transformation modes (`tf_crop_and_resize` with its `roi`
//! and `extrapolation_value`), rounding modes and cubic coefficient
//! (`relax_runtime::kernels::image` defines them).

use super::attr::{AttrDefault, AttrSpec, AttrType};
use super::infer::{attr, attr_dtype, error, shape_arg, tensor, tensor_arg};
use super::{Arity, OpInfo, OpPatternKind};
use crate::arith::Analyzer;
use crate::ir::{AttrValue, Call, StructInfo};
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
    ResizeMode::parse(&ResizeAttrs {
        method: str_attr(call, "method", "linear"),
        coordinates: str_attr(call, "coordinate_transformation_mode", "half_pixel"),
        rounding: str_attr(call, "rounding_method", "round"),
        cubic_alpha: num("cubic_alpha", -0.75),
        cubic_exclude: num("cubic_exclude", 0.0) as i64,
        extrapolation_value: num("extrapolation_value", 0.0),
        roi,
    })
    .map_err(|m| error(call, "op-attr-value", m))
}

fn infer_resize2d(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let data = tensor_arg(call, 0)?;
    resize_mode(call)?;
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

/// The image ops.
pub const OPS: &[OpInfo] = &[OpInfo {
    name: "relax.image.resize2d",
    args: &["data", "size"],
    arity: Arity::Exact(2),
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
    ],
    infer_struct_info: infer_resize2d,
    purity: true,
    pattern: OpPatternKind::Injective,
}];

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
}
