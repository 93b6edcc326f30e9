//! Indexing: `take` (gather along an axis) and `strided_slice`.

use super::attr::{AttrDefault, AttrSpec, AttrType};
use super::infer::{
    arg_name, attr_bool, attr_exprs, attr_int, attr_ints, error, normalize_axes, normalize_axis,
    tensor, tensor_arg,
};
use super::{Arity, OpInfo, OpPatternKind};
use crate::arith::Analyzer;
use crate::ir::{Call, PrimExpr, StructInfo, UNKNOWN_NDIM};
use relax_runtime::Diagnostic;

fn infer_take(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let (x, idx) = (tensor_arg(call, 0)?, tensor_arg(call, 1)?);
    if !idx.dtype.is_void() && !idx.dtype.is_integer() {
        return Err(error(
            call,
            "op-dtype-not-int",
            format!(
                "{} must have an integer dtype, found {}",
                arg_name(call, 1),
                idx.dtype
            ),
        ));
    }
    let Some(axis) = attr_int(call, "axis") else {
        // Without an axis, x is flattened first: the result has the indices' shape.
        return Ok(tensor(
            idx.shape_values().map(<[_]>::to_vec),
            idx.ndim,
            x.dtype,
            ana,
        ));
    };
    if x.is_unknown_ndim() || idx.is_unknown_ndim() {
        return Ok(StructInfo::tensor_ndim(UNKNOWN_NDIM, x.dtype));
    }
    let axis = normalize_axis(call, axis, x.ndim)?;
    let ndim = x.ndim - 1 + idx.ndim;
    let dims = match (x.shape_values(), idx.shape_values()) {
        (Some(s), Some(i)) => Some([&s[..axis], i, &s[axis + 1..]].concat()),
        _ => None,
    };
    Ok(tensor(dims, ndim, x.dtype, ana))
}

/// The extent of `begin:end:stride` over a dim of size `dim`, Python slice
/// semantics (negative indices count from the end, out-of-range clamps).
fn slice_extent(
    begin: &PrimExpr,
    end: &PrimExpr,
    stride: &PrimExpr,
    dim: &PrimExpr,
) -> Option<PrimExpr> {
    let s = stride.as_int()?;
    let norm = |e: &PrimExpr| match e.as_int() {
        Some(v) if v < 0 => dim.clone() + v,
        _ => e.clone(),
    };
    let zero = PrimExpr::int(0);
    let clamp = |e: PrimExpr, lo: PrimExpr, hi: PrimExpr| e.max(lo).min(hi);
    if s > 0 {
        let b = clamp(norm(begin), zero.clone(), dim.clone());
        let e = clamp(norm(end), zero.clone(), dim.clone());
        Some((e - b + (s - 1)).floordiv(s).max(zero))
    } else if s < 0 {
        let b = clamp(norm(begin), PrimExpr::int(-1), dim.clone() - 1);
        let e = clamp(norm(end), PrimExpr::int(-1), dim.clone() - 1);
        Some((b - e + (-s - 1)).floordiv(-s).max(zero))
    } else {
        None
    }
}

fn infer_strided_slice(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let x = tensor_arg(call, 0)?;
    let axes = attr_ints(call, "axes").unwrap_or_default();
    let begin = attr_exprs(call, "begin").unwrap_or_default();
    let end = attr_exprs(call, "end").unwrap_or_default();
    let strides = attr_exprs(call, "strides").unwrap_or_else(|| vec![PrimExpr::int(1); axes.len()]);
    if begin.len() != axes.len() || end.len() != axes.len() || strides.len() != axes.len() {
        return Err(error(
            call,
            "op-slice-lengths",
            format!(
                "axes, begin, end and strides must have the same length, found {}, {}, {} and {}",
                axes.len(),
                begin.len(),
                end.len(),
                strides.len()
            ),
        ));
    }
    if let Some(i) = strides.iter().position(|s| s.as_int() == Some(0)) {
        return Err(error(
            call,
            "op-slice-stride",
            format!("stride {i} is zero"),
        ));
    }
    if x.is_unknown_ndim() {
        return Ok(StructInfo::tensor_ndim(UNKNOWN_NDIM, x.dtype));
    }
    let axes = normalize_axes(call, &axes, x.ndim)?;
    let Some(s) = x.shape_values() else {
        return Ok(StructInfo::tensor_ndim(x.ndim, x.dtype));
    };
    let assume_inbound = attr_bool(call, "assume_inbound", false);
    let mut dims = s.to_vec();
    for (k, &a) in axes.iter().enumerate() {
        let extent = if assume_inbound && strides[k].as_int() == Some(1) {
            Some(end[k].clone() - begin[k].clone())
        } else {
            slice_extent(&begin[k], &end[k], &strides[k], &s[a])
        };
        match extent {
            Some(e) => dims[a] = e,
            None => return Ok(StructInfo::tensor_ndim(x.ndim, x.dtype)),
        }
    }
    Ok(tensor(Some(dims), x.ndim, x.dtype, ana))
}

/// The indexing ops.
pub const OPS: &[OpInfo] = &[
    OpInfo {
        name: "relax.take",
        args: &["x", "indices"],
        arity: Arity::Exact(2),
        attrs: &[AttrSpec::new("axis", AttrType::OptInt, AttrDefault::None)],
        infer_struct_info: infer_take,
        purity: true,
        pattern: OpPatternKind::Injective,
    },
    OpInfo {
        name: "relax.strided_slice",
        args: &["x"],
        arity: Arity::Exact(1),
        attrs: &[
            AttrSpec::new("axes", AttrType::IntArray, AttrDefault::Required),
            AttrSpec::new("begin", AttrType::PrimExprArray, AttrDefault::Required),
            AttrSpec::new("end", AttrType::PrimExprArray, AttrDefault::Required),
            AttrSpec::new("strides", AttrType::OptPrimExprArray, AttrDefault::None),
            AttrSpec::new("assume_inbound", AttrType::Bool, AttrDefault::Bool(false)),
        ],
        infer_struct_info: infer_strided_slice,
        purity: true,
        pattern: OpPatternKind::Injective,
    },
];

#[cfg(test)]
mod tests {
    use crate::ir::AttrValue;
    use crate::op::testing::*;

    #[test]
    fn take() {
        let n = sym("n");
        assert_infers(
            "relax.take",
            &[t(&[n.clone(), d(4)], F32), t(&[d(2), d(3)], I64)],
            &[("axis", AttrValue::Int(0))],
            "R.Tensor((2, 3, 4), dtype=\"float32\")",
        );
        assert_infers(
            "relax.take",
            &[t(&[n.clone(), d(4)], F32), t(&[d(5)], I64)],
            &[("axis", AttrValue::Int(-1))],
            "R.Tensor((n, 5), dtype=\"float32\")",
        );
        assert_infers(
            "relax.take",
            &[t(&[n.clone(), d(4)], F32), t(&[d(5)], I32)],
            &[],
            "R.Tensor((5,), dtype=\"float32\")",
        );
        assert_fails(
            "relax.take",
            &[t(&[d(4)], F32), t(&[d(5)], F32)],
            &[],
            "take: indices must have an integer dtype, found float32",
        );
        assert_fails(
            "relax.take",
            &[t(&[d(4)], F32), t(&[d(5)], I64)],
            &[("axis", AttrValue::Int(1))],
            "take: axis 1 is out of range for a tensor of rank 1",
        );
    }

    #[test]
    fn strided_slice() {
        let attrs = |axes: &[i64], b: &[i64], e: &[i64], s: Option<&[i64]>| {
            let mut v = vec![("axes", ints(axes)), ("begin", ints(b)), ("end", ints(e))];
            if let Some(s) = s {
                v.push(("strides", ints(s)));
            }
            v
        };
        assert_infers(
            "relax.strided_slice",
            &[t(&[d(10), d(8)], F32)],
            &attrs(&[0, 1], &[2, 0], &[7, 8], Some(&[2, 3])),
            "R.Tensor((3, 3), dtype=\"float32\")",
        );
        assert_infers(
            "relax.strided_slice",
            &[t(&[d(10)], F32)],
            &attrs(&[0], &[-3], &[100], None),
            "R.Tensor((3,), dtype=\"float32\")",
        );
        assert_infers(
            "relax.strided_slice",
            &[t(&[d(10)], F32)],
            &attrs(&[0], &[8], &[2], Some(&[-2])),
            "R.Tensor((3,), dtype=\"float32\")",
        );
        assert_infers(
            "relax.strided_slice",
            &[t(&[d(10)], F32)],
            &attrs(&[0], &[5], &[2], None),
            "R.Tensor((0,), dtype=\"float32\")",
        );
        assert_fails(
            "relax.strided_slice",
            &[t(&[d(10)], F32)],
            &attrs(&[0], &[0], &[2], Some(&[0])),
            "strided_slice: stride 0 is zero",
        );
        assert_fails("relax.strided_slice", &[t(&[d(10)], F32)], &attrs(&[0, 1], &[0], &[2], None),
            "strided_slice: axes, begin, end and strides must have the same length, found 2, 1, 1 and 2");
    }
}
