//! Indexing: `take` (gather along an axis) and `strided_slice`; the
//! element-wise gathers and scatters `gather_elements`, `gather_nd`,
//! `scatter_elements` and `scatter_nd` (ONNX's semantics: a negative index
//! counts from the end of its axis); the scans `cumsum` and `cumprod`; the
//! triangle masks `tril` and `triu` (`k` a PrimValue, as TVM passes it);
//! `one_hot` (on and off values as PrimValues); and `flip`.

use super::attr::{AttrDefault, AttrSpec, AttrType};
use super::create::prim_arg;
use super::infer::{
    arg_name, arg_sinfo, attr, attr_bool, attr_dtype, attr_exprs, attr_int, attr_ints, error,
    normalize_axes, normalize_axis, product, tensor, tensor_arg,
};
use super::{Arity, OpInfo, OpPatternKind};
use crate::arith::Analyzer;
use crate::ir::{AttrValue, Call, PrimExpr, StructInfo, TensorStructInfo, UNKNOWN_NDIM};
use relax_runtime::Diagnostic;

/// The scatter reductions, as ONNX and TVM name them.
pub const SCATTER_REDUCTIONS: &[&str] = &["update", "add", "mul", "min", "max"];

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

/// Checks that argument `i` has an integer dtype (or an unknown one).
fn int_arg(call: &Call, i: usize) -> Result<&TensorStructInfo, Diagnostic> {
    let t = tensor_arg(call, i)?;
    if !t.dtype.is_void() && !t.dtype.is_integer() {
        return Err(error(
            call,
            "op-dtype-not-int",
            format!(
                "{} must have an integer dtype, found {}",
                arg_name(call, i),
                t.dtype
            ),
        ));
    }
    Ok(t)
}

/// Checks that `indices` (argument `i`) has the rank of `data` (argument 0)
/// when both are known.
fn same_rank(call: &Call, data: &TensorStructInfo, i: usize) -> Result<(), Diagnostic> {
    let idx = tensor_arg(call, i)?;
    if !data.is_unknown_ndim() && !idx.is_unknown_ndim() && data.ndim != idx.ndim {
        return Err(error(
            call,
            "op-rank-mismatch",
            format!(
                "{} must have the rank of {} ({}), found rank {}",
                arg_name(call, i),
                arg_name(call, 0),
                data.ndim,
                idx.ndim
            ),
        ));
    }
    Ok(())
}

/// `gather_elements(data, indices, axis)`: the indices' shape, data's dtype.
fn infer_gather_elements(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let data = tensor_arg(call, 0)?;
    let idx = int_arg(call, 1)?;
    same_rank(call, data, 1)?;
    if !data.is_unknown_ndim() {
        normalize_axis(call, attr_int(call, "axis").unwrap_or(0), data.ndim)?;
    }
    Ok(tensor(
        idx.shape_values().map(<[_]>::to_vec),
        idx.ndim,
        data.dtype,
        ana,
    ))
}

/// `gather_nd(data, indices, batch_dims)`: `indices.shape[:-1] +
/// data.shape[batch_dims + indices.shape[-1]:]`.
fn infer_gather_nd(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let data = tensor_arg(call, 0)?;
    let idx = int_arg(call, 1)?;
    let b = attr_int(call, "batch_dims").unwrap_or(0);
    let unknown = StructInfo::tensor_ndim(UNKNOWN_NDIM, data.dtype);
    if data.is_unknown_ndim() || idx.is_unknown_ndim() {
        return Ok(unknown);
    }
    let (r, q) = (data.ndim as i64, idx.ndim as i64);
    if b < 0 || b >= r.min(q) {
        return Err(error(
            call,
            "op-gather-nd",
            format!("batch_dims {b} must be below the ranks of data ({r}) and indices ({q})"),
        ));
    }
    let Some(k) = idx
        .shape_values()
        .and_then(|s| s.last())
        .and_then(PrimExpr::as_int)
    else {
        return Ok(unknown);
    };
    if k < 1 || k > r - b {
        return Err(error(
            call,
            "op-gather-nd",
            format!(
                "the last dim of indices ({k}) must be between 1 and the rank of data less batch_dims ({})",
                r - b
            ),
        ));
    }
    let ndim = (q - 1 + r - b - k) as i32;
    let dims = match (data.shape_values(), idx.shape_values()) {
        (Some(s), Some(i)) => Some([&i[..i.len() - 1], &s[(b + k) as usize..]].concat()),
        _ => None,
    };
    Ok(tensor(dims, ndim, data.dtype, ana))
}

/// The `reduction` attribute, checked.
fn check_reduction(call: &Call) -> Result<(), Diagnostic> {
    if let Some(AttrValue::Str(r)) = attr(call, "reduction") {
        if !SCATTER_REDUCTIONS.contains(&r.as_str()) {
            return Err(error(
                call,
                "op-scatter-reduction",
                format!(
                    "reduction must be one of {}, found \"{r}\"",
                    SCATTER_REDUCTIONS.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// Checks that `updates` (argument 2) has data's dtype when both are known.
fn updates_dtype(call: &Call, data: &TensorStructInfo) -> Result<(), Diagnostic> {
    let upd = tensor_arg(call, 2)?;
    if !data.dtype.is_void() && !upd.dtype.is_void() && data.dtype != upd.dtype {
        return Err(error(
            call,
            "op-dtype-mismatch",
            format!(
                "{} must have the dtype of {} ({}), found {}",
                arg_name(call, 2),
                arg_name(call, 0),
                data.dtype,
                upd.dtype
            ),
        ));
    }
    Ok(())
}

/// `scatter_elements(data, indices, updates, axis, reduction)`: data's
/// StructInfo; indices and updates have data's rank.
fn infer_scatter_elements(call: &Call, _: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let data = tensor_arg(call, 0)?;
    int_arg(call, 1)?;
    same_rank(call, data, 1)?;
    same_rank(call, data, 2)?;
    updates_dtype(call, data)?;
    check_reduction(call)?;
    if !data.is_unknown_ndim() {
        normalize_axis(call, attr_int(call, "axis").unwrap_or(0), data.ndim)?;
    }
    Ok(arg_sinfo(call, 0)?.clone())
}

/// `scatter_nd(data, indices, updates, reduction)`: data's StructInfo.
fn infer_scatter_nd(call: &Call, _: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let data = tensor_arg(call, 0)?;
    let idx = int_arg(call, 1)?;
    updates_dtype(call, data)?;
    check_reduction(call)?;
    let k = idx
        .shape_values()
        .and_then(|s| s.last())
        .and_then(PrimExpr::as_int);
    if let Some(k) = k {
        if !data.is_unknown_ndim() && (k < 1 || k > data.ndim as i64) {
            return Err(error(
                call,
                "op-scatter-nd",
                format!(
                    "the last dim of indices ({k}) must be between 1 and the rank of data ({})",
                    data.ndim
                ),
            ));
        }
    }
    Ok(arg_sinfo(call, 0)?.clone())
}

/// `cumsum` / `cumprod(data, axis, dtype, exclusive)`: data's shape
/// (flattened without an axis), in `dtype` when given.
fn infer_scan(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let data = tensor_arg(call, 0)?;
    let dtype = match attr_dtype(call, "dtype") {
        d if d.is_void() => data.dtype,
        d => d,
    };
    let Some(axis) = attr_int(call, "axis") else {
        let dims = data.shape_values().map(|s| vec![product(s)]);
        return Ok(tensor(dims, 1, dtype, ana));
    };
    if data.is_unknown_ndim() {
        return Ok(StructInfo::tensor_ndim(UNKNOWN_NDIM, dtype));
    }
    normalize_axis(call, axis, data.ndim)?;
    Ok(tensor(
        data.shape_values().map(<[_]>::to_vec),
        data.ndim,
        dtype,
        ana,
    ))
}

/// `tril` / `triu(x, k)`: x's StructInfo; x has rank 2 or more, `k` is an
/// integer PrimValue.
fn infer_triangle(call: &Call, _: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let x = tensor_arg(call, 0)?;
    if !x.is_unknown_ndim() && x.ndim < 2 {
        return Err(error(
            call,
            "op-rank",
            format!(
                "{} must have rank 2 or more, found rank {}",
                arg_name(call, 0),
                x.ndim
            ),
        ));
    }
    let k = prim_arg(call, 1)?;
    if !k.dtype().is_integer() {
        return Err(error(
            call,
            "op-dtype-not-int",
            format!("k must be an integer, found {}", k.dtype()),
        ));
    }
    Ok(arg_sinfo(call, 0)?.clone())
}

/// `one_hot(indices, on_value, off_value, depth, axis)`: the indices' shape
/// with `depth` inserted at `axis` (of the result's rank), the on value's
/// dtype.
fn infer_one_hot(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let idx = int_arg(call, 0)?;
    let dtype_of = |i: usize| -> Result<relax_runtime::DataType, Diagnostic> {
        let s = arg_sinfo(call, i)?;
        s.as_prim().map(|p| p.dtype).ok_or_else(|| {
            error(
                call,
                "op-arg-not-prim-value",
                format!("{} must be a PrimValue, found {s}", arg_name(call, i)),
            )
        })
    };
    let (on, off) = (dtype_of(1)?, dtype_of(2)?);
    if on != off {
        return Err(error(
            call,
            "op-dtype-mismatch",
            format!("on_value and off_value must have one dtype, found {on} and {off}"),
        ));
    }
    let depth = attr_int(call, "depth").unwrap_or(0);
    if depth < 0 {
        return Err(error(
            call,
            "op-one-hot",
            format!("depth must not be negative, found {depth}"),
        ));
    }
    if idx.is_unknown_ndim() {
        return Ok(StructInfo::tensor_ndim(UNKNOWN_NDIM, on));
    }
    let axis = normalize_axis(call, attr_int(call, "axis").unwrap_or(-1), idx.ndim + 1)?;
    let dims = idx.shape_values().map(|s| {
        let mut d = s.to_vec();
        d.insert(axis, PrimExpr::int(depth));
        d
    });
    Ok(tensor(dims, idx.ndim + 1, on, ana))
}

/// `flip(data, axis)`: data's StructInfo.
fn infer_flip(call: &Call, _: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let data = tensor_arg(call, 0)?;
    if !data.is_unknown_ndim() {
        normalize_axis(call, attr_int(call, "axis").unwrap_or(0), data.ndim)?;
    }
    Ok(arg_sinfo(call, 0)?.clone())
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
    OpInfo {
        name: "relax.gather_elements",
        args: &["data", "indices"],
        arity: Arity::Exact(2),
        attrs: &[AttrSpec::new("axis", AttrType::Int, AttrDefault::Int(0))],
        infer_struct_info: infer_gather_elements,
        purity: true,
        pattern: OpPatternKind::Injective,
    },
    OpInfo {
        name: "relax.gather_nd",
        args: &["data", "indices"],
        arity: Arity::Exact(2),
        attrs: &[AttrSpec::new(
            "batch_dims",
            AttrType::Int,
            AttrDefault::Int(0),
        )],
        infer_struct_info: infer_gather_nd,
        purity: true,
        pattern: OpPatternKind::Injective,
    },
    OpInfo {
        name: "relax.scatter_elements",
        args: &["data", "indices", "updates"],
        arity: Arity::Exact(3),
        attrs: &[
            AttrSpec::new("axis", AttrType::Int, AttrDefault::Int(0)),
            AttrSpec::new("reduction", AttrType::Str, AttrDefault::Str("update")),
        ],
        infer_struct_info: infer_scatter_elements,
        purity: true,
        pattern: OpPatternKind::Opaque,
    },
    OpInfo {
        name: "relax.scatter_nd",
        args: &["data", "indices", "updates"],
        arity: Arity::Exact(3),
        attrs: &[AttrSpec::new(
            "reduction",
            AttrType::Str,
            AttrDefault::Str("update"),
        )],
        infer_struct_info: infer_scatter_nd,
        purity: true,
        pattern: OpPatternKind::Opaque,
    },
    OpInfo {
        name: "relax.cumsum",
        args: &["data"],
        arity: Arity::Exact(1),
        attrs: SCAN_ATTRS,
        infer_struct_info: infer_scan,
        purity: true,
        pattern: OpPatternKind::Opaque,
    },
    OpInfo {
        name: "relax.cumprod",
        args: &["data"],
        arity: Arity::Exact(1),
        attrs: SCAN_ATTRS,
        infer_struct_info: infer_scan,
        purity: true,
        pattern: OpPatternKind::Opaque,
    },
    OpInfo {
        name: "relax.tril",
        args: &["x", "k"],
        arity: Arity::Exact(2),
        attrs: &[],
        infer_struct_info: infer_triangle,
        purity: true,
        pattern: OpPatternKind::Injective,
    },
    OpInfo {
        name: "relax.triu",
        args: &["x", "k"],
        arity: Arity::Exact(2),
        attrs: &[],
        infer_struct_info: infer_triangle,
        purity: true,
        pattern: OpPatternKind::Injective,
    },
    OpInfo {
        name: "relax.one_hot",
        args: &["indices", "on_value", "off_value"],
        arity: Arity::Exact(3),
        attrs: &[
            AttrSpec::new("depth", AttrType::Int, AttrDefault::Required),
            AttrSpec::new("axis", AttrType::Int, AttrDefault::Int(-1)),
        ],
        infer_struct_info: infer_one_hot,
        purity: true,
        pattern: OpPatternKind::Injective,
    },
    OpInfo {
        name: "relax.flip",
        args: &["data"],
        arity: Arity::Exact(1),
        attrs: &[AttrSpec::new("axis", AttrType::Int, AttrDefault::Required)],
        infer_struct_info: infer_flip,
        purity: true,
        pattern: OpPatternKind::Injective,
    },
];

/// The attributes of `cumsum` and `cumprod`.
const SCAN_ATTRS: &[AttrSpec] = &[
    AttrSpec::new("axis", AttrType::OptInt, AttrDefault::None),
    AttrSpec::new("dtype", AttrType::DataType, AttrDefault::DataType("void")),
    AttrSpec::new("exclusive", AttrType::Bool, AttrDefault::Bool(false)),
];

#[cfg(test)]
mod tests {
    use crate::ir::{AttrValue, PrimExpr};
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

    #[test]
    fn gathers() {
        let n = sym("n");
        assert_infers(
            "relax.gather_elements",
            &[t(&[n.clone(), d(4)], F32), t(&[n.clone(), d(2)], I64)],
            &[("axis", AttrValue::Int(-1))],
            "R.Tensor((n, 2), dtype=\"float32\")",
        );
        assert_fails(
            "relax.gather_elements",
            &[t(&[d(3), d(4)], F32), t(&[d(3)], I64)],
            &[],
            "gather_elements: indices must have the rank of data (2), found rank 1",
        );
        assert_fails(
            "relax.gather_elements",
            &[t(&[d(3), d(4)], F32), t(&[d(3), d(1)], F32)],
            &[],
            "gather_elements: indices must have an integer dtype, found float32",
        );
        assert_fails(
            "relax.gather_elements",
            &[t(&[d(3), d(4)], F32), t(&[d(3), d(1)], I32)],
            &[("axis", AttrValue::Int(2))],
            "gather_elements: axis 2 is out of range for a tensor of rank 2",
        );
        assert_infers(
            "relax.gather_nd",
            &[t(&[n.clone(), d(4), d(5)], F32), t(&[d(3), d(2)], I64)],
            &[],
            "R.Tensor((3, 5), dtype=\"float32\")",
        );
        assert_infers(
            "relax.gather_nd",
            &[
                t(&[n.clone(), d(4), d(5)], F32),
                t(&[n.clone(), d(3), d(2)], I64),
            ],
            &[("batch_dims", AttrValue::Int(1))],
            "R.Tensor((n, 3), dtype=\"float32\")",
        );
        assert_infers(
            "relax.gather_nd",
            &[t(&[d(2), d(2)], I32), tn(2, I64)],
            &[],
            "R.Tensor(dtype=\"int32\")",
        );
        assert_fails(
            "relax.gather_nd",
            &[t(&[d(2), d(2)], F32), t(&[d(1), d(3)], I64)],
            &[],
            "gather_nd: the last dim of indices (3) must be between 1 and the rank of data less batch_dims (2)",
        );
        assert_fails(
            "relax.gather_nd",
            &[t(&[d(2), d(2)], F32), t(&[d(2)], I64)],
            &[("batch_dims", AttrValue::Int(1))],
            "gather_nd: batch_dims 1 must be below the ranks of data (2) and indices (1)",
        );
    }

    #[test]
    fn scatters() {
        let n = sym("n");
        let s = |v: &str| AttrValue::Str(v.into());
        assert_infers(
            "relax.scatter_elements",
            &[
                t(&[n.clone(), d(4)], F32),
                t(&[d(1), d(2)], I64),
                t(&[d(1), d(2)], F32),
            ],
            &[("axis", AttrValue::Int(1)), ("reduction", s("max"))],
            "R.Tensor((n, 4), dtype=\"float32\")",
        );
        assert_fails(
            "relax.scatter_elements",
            &[t(&[d(3)], F32), t(&[d(1)], I64), t(&[d(1)], F32)],
            &[("reduction", s("sub"))],
            "scatter_elements: reduction must be one of update, add, mul, min, max, found \"sub\"",
        );
        assert_fails(
            "relax.scatter_elements",
            &[t(&[d(3)], F32), t(&[d(1)], I64), t(&[d(1)], I32)],
            &[],
            "scatter_elements: updates must have the dtype of data (float32), found int32",
        );
        assert_fails(
            "relax.scatter_elements",
            &[t(&[d(3)], F32), t(&[d(1)], I64), t(&[d(1), d(1)], F32)],
            &[],
            "scatter_elements: updates must have the rank of data (1), found rank 2",
        );
        assert_infers(
            "relax.scatter_nd",
            &[
                t(&[n.clone(), d(4)], F32),
                t(&[d(3), d(1)], I64),
                t(&[d(3), d(4)], F32),
            ],
            &[("reduction", s("add"))],
            "R.Tensor((n, 4), dtype=\"float32\")",
        );
        assert_fails(
            "relax.scatter_nd",
            &[t(&[d(4)], F32), t(&[d(3), d(2)], I64), t(&[d(3)], F32)],
            &[],
            "scatter_nd: the last dim of indices (2) must be between 1 and the rank of data (1)",
        );
    }

    #[test]
    fn scans_triangles_one_hot_and_flip() {
        let n = sym("n");
        assert_infers(
            "relax.cumsum",
            &[t(&[n.clone(), d(4)], I32)],
            &[("axis", AttrValue::Int(1))],
            "R.Tensor((n, 4), dtype=\"int32\")",
        );
        assert_infers(
            "relax.cumprod",
            &[t(&[n.clone(), d(4)], I32)],
            &[("dtype", AttrValue::from("int64"))],
            "R.Tensor((n * 4,), dtype=\"int64\")",
        );
        assert_fails(
            "relax.cumsum",
            &[t(&[d(4)], F32)],
            &[("axis", AttrValue::Int(1))],
            "cumsum: axis 1 is out of range for a tensor of rank 1",
        );
        let k = |v: i64| crate::ir::Expr::prim_value(PrimExpr::int(v));
        assert_infers(
            "relax.tril",
            &[t(&[n.clone(), d(4)], F32), k(-1)],
            &[],
            "R.Tensor((n, 4), dtype=\"float32\")",
        );
        assert_fails(
            "relax.triu",
            &[t(&[d(4)], F32), k(0)],
            &[],
            "triu: x must have rank 2 or more, found rank 1",
        );
        assert_fails(
            "relax.triu",
            &[t(&[d(4), d(4)], F32), t(&[], I64)],
            &[],
            "triu: k must be a PrimValue, found R.Tensor((), dtype=\"int64\")",
        );
        let f = |v: f64| crate::ir::Expr::prim_value(PrimExpr::float(F32, v));
        assert_infers(
            "relax.one_hot",
            &[t(&[n.clone(), d(3)], I64), f(1.0), f(0.0)],
            &[("depth", AttrValue::Int(5))],
            "R.Tensor((n, 3, 5), dtype=\"float32\")",
        );
        assert_infers(
            "relax.one_hot",
            &[t(&[n.clone(), d(3)], I32), k(1), k(0)],
            &[("depth", AttrValue::Int(5)), ("axis", AttrValue::Int(0))],
            "R.Tensor((5, n, 3), dtype=\"int64\")",
        );
        assert_fails(
            "relax.one_hot",
            &[t(&[d(3)], I32), k(1), f(0.0)],
            &[("depth", AttrValue::Int(5))],
            "one_hot: on_value and off_value must have one dtype, found int64 and float32",
        );
        assert_fails(
            "relax.one_hot",
            &[t(&[d(3)], I32), k(1), k(0)],
            &[("depth", AttrValue::Int(5)), ("axis", AttrValue::Int(2))],
            "one_hot: axis 2 is out of range for a tensor of rank 2",
        );
        assert_infers(
            "relax.flip",
            &[t(&[n.clone(), d(4)], F32)],
            &[("axis", AttrValue::Int(-1))],
            "R.Tensor((n, 4), dtype=\"float32\")",
        );
        assert_fails(
            "relax.flip",
            &[t(&[d(4)], F32)],
            &[("axis", AttrValue::Int(1))],
            "flip: axis 1 is out of range for a tensor of rank 1",
        );
    }
}
