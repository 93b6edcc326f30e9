//! Sorting: `topk` (TVM's `R.topk`), the `k` largest (or smallest)
//! elements along an axis and their indices.
//!
//! `topk(data, k, axis, ret_type, largest, dtype)`: the result has `data`'s
//! shape with the axis `k` long (the whole axis when `k < 1`), sorted
//! (largest first, or smallest first with `largest = False`); equal
//! elements keep their order along the axis, and NaN counts as larger than
//! any number. `ret_type` is `"both"` (a tuple of the values and the
//! indices), `"values"` or `"indices"`; the indices have dtype `dtype`
//! (`int32` by default, as TVM has it). A `k` larger than a known axis is
//! an error.

use super::attr::{AttrDefault, AttrSpec, AttrType};
use super::infer::{
    attr, attr_bool, attr_dtype, attr_int, error, normalize_axis, tensor, tensor_arg,
};
use super::{Arity, OpInfo, OpPatternKind};
use crate::arith::Analyzer;
use crate::ir::{AttrValue, Call, StructInfo, UNKNOWN_NDIM};
use relax_runtime::{DataType, Diagnostic};

/// `topk`'s `ret_type` values.
pub const TOPK_RET_TYPES: &[&str] = &["both", "values", "indices"];

fn infer_topk(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let x = tensor_arg(call, 0)?;
    let k = attr_int(call, "k").unwrap_or(1);
    let ret = match attr(call, "ret_type") {
        Some(AttrValue::Str(s)) => s.as_str(),
        _ => "both",
    };
    if !TOPK_RET_TYPES.contains(&ret) {
        return Err(error(
            call,
            "op-topk-ret-type",
            format!("ret_type must be one of {TOPK_RET_TYPES:?}, found {ret:?}"),
        ));
    }
    let dtype = attr_dtype(call, "dtype");
    let dtype = if dtype.is_void() {
        DataType::i32()
    } else {
        dtype
    };
    if !dtype.is_int() {
        return Err(error(
            call,
            "op-dtype-not-int",
            format!("dtype must be a signed integer type, found {dtype}"),
        ));
    }
    let _ = attr_bool(call, "largest", true);
    let (values, indices) = if x.is_unknown_ndim() {
        (
            StructInfo::tensor_ndim(UNKNOWN_NDIM, x.dtype),
            StructInfo::tensor_ndim(UNKNOWN_NDIM, dtype),
        )
    } else {
        let axis = normalize_axis(call, attr_int(call, "axis").unwrap_or(-1), x.ndim)?;
        let dims = x.shape_values().map(|s| {
            let mut dims = s.to_vec();
            if k >= 1 {
                dims[axis] = crate::ir::PrimExpr::int(k);
            }
            (dims, s[axis].as_int())
        });
        if let Some((_, Some(n))) = &dims {
            if k > *n {
                return Err(error(
                    call,
                    "op-topk-k",
                    format!("k = {k} is larger than the axis ({n})"),
                ));
            }
        }
        let dims = dims.map(|(d, _)| d);
        (
            tensor(dims.clone(), x.ndim, x.dtype, ana),
            tensor(dims, x.ndim, dtype, ana),
        )
    };
    Ok(match ret {
        "values" => values,
        "indices" => indices,
        _ => StructInfo::tuple(vec![values, indices]),
    })
}

/// The sorting ops.
pub const OPS: &[OpInfo] = &[OpInfo {
    name: "relax.topk",
    args: &["data"],
    arity: Arity::Exact(1),
    attrs: &[
        AttrSpec::new("k", AttrType::Int, AttrDefault::Int(1)),
        AttrSpec::new("axis", AttrType::Int, AttrDefault::Int(-1)),
        AttrSpec::new("ret_type", AttrType::Str, AttrDefault::Str("both")),
        AttrSpec::new("largest", AttrType::Bool, AttrDefault::Bool(true)),
        AttrSpec::new("dtype", AttrType::DataType, AttrDefault::DataType("int32")),
    ],
    infer_struct_info: infer_topk,
    purity: true,
    pattern: OpPatternKind::Opaque,
}];

#[cfg(test)]
mod tests {
    use crate::ir::AttrValue;
    use crate::op::testing::*;

    #[test]
    fn topk_shortens_the_axis_to_k() {
        let n = sym("n");
        assert_infers(
            "relax.topk",
            &[t(&[n.clone(), d(10)], F32)],
            &[("k", AttrValue::Int(3))],
            "R.Tuple(R.Tensor((n, 3), dtype=\"float32\"), R.Tensor((n, 3), dtype=\"int32\"))",
        );
        assert_infers(
            "relax.topk",
            &[t(&[n.clone(), d(10)], F32)],
            &[
                ("k", AttrValue::Int(0)),
                ("axis", AttrValue::Int(0)),
                ("ret_type", AttrValue::Str("indices".into())),
                ("dtype", AttrValue::DataType(relax_runtime::DataType::i64())),
            ],
            "R.Tensor((n, 10), dtype=\"int64\")",
        );
        assert_infers(
            "relax.topk",
            &[t(&[d(4)], I32)],
            &[
                ("k", AttrValue::Int(2)),
                ("ret_type", AttrValue::Str("values".into())),
            ],
            "R.Tensor((2,), dtype=\"int32\")",
        );
        assert_fails(
            "relax.topk",
            &[t(&[d(4)], F32)],
            &[("k", AttrValue::Int(5))],
            "topk: k = 5 is larger than the axis (4)",
        );
        assert_fails(
            "relax.topk",
            &[t(&[d(4)], F32)],
            &[("ret_type", AttrValue::Str("all".into()))],
            "topk: ret_type must be one of [\"both\", \"values\", \"indices\"], found \"all\"",
        );
        assert_fails(
            "relax.topk",
            &[t(&[d(4)], F32)],
            &[("axis", AttrValue::Int(1))],
            "topk: axis 1 is out of range for a tensor of rank 1",
        );
    }
}
