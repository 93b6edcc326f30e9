//! Image ops: `image.resize2d` (TVM's `relax.op.image.resize2d`): NCHW
//! data resized to `size` (one value for both axes, or height and width)
//! by `nearest_neighbor` or `linear` interpolation, under TVM's
//! coordinate-transformation and rounding modes
//! (`relax_runtime::kernels::image` defines them).

use super::attr::{AttrDefault, AttrSpec, AttrType};
use super::infer::{attr, attr_dtype, error, shape_arg, tensor, tensor_arg};
use super::{Arity, OpInfo, OpPatternKind};
use crate::arith::Analyzer;
use crate::ir::{AttrValue, Call, StructInfo};
use relax_runtime::kernels::image::ResizeMode;
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
    ResizeMode::parse(
        str_attr(call, "method", "linear"),
        str_attr(call, "coordinate_transformation_mode", "half_pixel"),
        str_attr(call, "rounding_method", "round"),
    )
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
            &[("method", AttrValue::from("cubic"))],
            "image.resize2d: method cubic is not supported (nearest_neighbor and linear are)",
        );
        assert_fails(
            "relax.image.resize2d",
            &[t(&[d(8), d(8)], F32), size],
            &[],
            "image.resize2d: data must have rank 4, found rank 2",
        );
    }
}
