//! Helpers shared by the ops' StructInfo inference.
//!
//! Messages follow one shape: `<op>: <what is wrong>: <arg> is <shape>, …`,
//! with shapes in the DSL's syntax (`(n, 784)`), an argument named by its
//! variable name when it is a variable and by the op's parameter name
//! otherwise.

use crate::arith::{Analyzer, Proof};
pub use crate::ir::struct_info::fmt_dims;
use crate::ir::{
    AttrValue, Call, ExprKind, PrimExpr, StructInfo, StructInfoKind, TensorStructInfo, UNKNOWN_NDIM,
};
use relax_runtime::{DataType, Diagnostic};

/// The op's short name (`nn.relu`) for messages.
pub fn op_name(call: &Call) -> String {
    match call.op.kind() {
        ExprKind::Op(op) => op
            .name()
            .strip_prefix("relax.")
            .unwrap_or(op.name())
            .to_string(),
        _ => "call".to_string(),
    }
}

/// How argument `i` is called in messages: its variable name, else the op's
/// parameter name, else `argument i`.
pub fn arg_name(call: &Call, i: usize) -> String {
    if let Some(ExprKind::Var(v)) = call.args.get(i).map(|a| a.kind()) {
        return v.name_hint().to_string();
    }
    let param = match call.op.kind() {
        ExprKind::Op(op) => super::lookup(op.name()).and_then(|info| info.args.get(i).copied()),
        _ => None,
    };
    param.map_or_else(|| format!("argument {i}"), str::to_string)
}

/// A tensor's shape for messages: its dims, else what is known of it.
pub fn fmt_tensor_shape(t: &TensorStructInfo) -> String {
    match t.shape_values() {
        Some(v) => fmt_dims(v),
        None if t.ndim == UNKNOWN_NDIM => "of unknown rank".to_string(),
        None => format!("of rank {}", t.ndim),
    }
}

/// A diagnostic for the op of `call`.
pub fn error(call: &Call, code: &'static str, what: impl std::fmt::Display) -> Diagnostic {
    Diagnostic::new(code, format!("{}: {what}", op_name(call)))
}

/// The StructInfo of argument `i`, or an error if it has none.
pub fn arg_sinfo(call: &Call, i: usize) -> Result<&StructInfo, Diagnostic> {
    call.args
        .get(i)
        .and_then(|a| a.struct_info())
        .ok_or_else(|| {
            error(
                call,
                "op-arg-missing-struct-info",
                format!("{} has no StructInfo", arg_name(call, i)),
            )
        })
}

/// Argument `i` as a tensor, or an error naming what it is instead.
pub fn tensor_arg(call: &Call, i: usize) -> Result<&TensorStructInfo, Diagnostic> {
    let s = arg_sinfo(call, i)?;
    s.as_tensor().ok_or_else(|| {
        error(
            call,
            "op-arg-not-tensor",
            format!("{} must be a tensor, found {s}", arg_name(call, i)),
        )
    })
}

/// Whether argument `i` is a `R.Prim` (a PrimValue).
pub fn is_prim_arg(call: &Call, i: usize) -> bool {
    arg_sinfo(call, i).is_ok_and(|s| s.as_prim().is_some())
}

/// Argument `i` as a tensor, a `R.Prim` counting as a 0-d tensor of its
/// dtype (the binary ops' scalar operands); an error naming what it is
/// otherwise.
pub fn tensor_or_prim_arg(call: &Call, i: usize) -> Result<TensorStructInfo, Diagnostic> {
    let s = arg_sinfo(call, i)?;
    if let Some(t) = s.as_tensor() {
        return Ok(t.clone());
    }
    if let Some(p) = s.as_prim() {
        if let Some(t) = StructInfo::tensor(vec![], p.dtype).as_tensor() {
            return Ok(t.clone());
        }
    }
    Err(error(
        call,
        "op-arg-not-tensor",
        format!(
            "{} must be a tensor or a R.Prim, found {s}",
            arg_name(call, i)
        ),
    ))
}

/// A tensor StructInfo from optional dims: known dims give a shape, else
/// `ndim` (possibly unknown) is kept.
pub fn tensor(
    dims: Option<Vec<PrimExpr>>,
    ndim: i32,
    dtype: DataType,
    ana: &Analyzer,
) -> StructInfo {
    match dims {
        Some(d) => StructInfo::tensor(d.iter().map(|e| ana.simplify(e)).collect(), dtype),
        // A rank-0 tensor's shape is known: `()`.
        None if ndim == 0 => StructInfo::tensor(vec![], dtype),
        None => StructInfo::tensor_ndim(ndim, dtype),
    }
}

/// The result dtype of two operands: equal known dtypes, `void` if either is
/// unknown, an error if they provably differ.
pub fn unify_dtype(
    call: &Call,
    i: usize,
    a: DataType,
    j: usize,
    b: DataType,
) -> Result<DataType, Diagnostic> {
    if a.is_void() || b.is_void() {
        return Ok(DataType::void());
    }
    if a != b {
        return Err(error(
            call,
            "op-dtype-mismatch",
            format!(
                "dtypes differ: {} is {a}, {} is {b}",
                arg_name(call, i),
                arg_name(call, j)
            ),
        ));
    }
    Ok(a)
}

/// NumPy broadcasting of two shapes. `Ok(None)` when a dimension pair is
/// undecidable (say `n` against `5`: `n` may be 1); an error when a pair is
/// provably incompatible.
pub fn broadcast(
    call: &Call,
    (i, a): (usize, &[PrimExpr]),
    (j, b): (usize, &[PrimExpr]),
    ana: &Analyzer,
) -> Result<Option<Vec<PrimExpr>>, Diagnostic> {
    let n = a.len().max(b.len());
    let mut out = Vec::with_capacity(n);
    for k in 0..n {
        let da = (k + a.len()).checked_sub(n).map(|x| &a[x]);
        let db = (k + b.len()).checked_sub(n).map(|x| &b[x]);
        let d = match (da, db) {
            (Some(x), None) | (None, Some(x)) => x.clone(),
            (Some(x), Some(y)) => {
                if x.as_int() == Some(1) {
                    y.clone()
                } else if y.as_int() == Some(1) {
                    x.clone()
                } else {
                    match ana.compare_equal(x, y) {
                        Proof::Proven => x.clone(),
                        Proof::Disproven => {
                            return Err(error(
                                call,
                                "op-shape-mismatch",
                                format!(
                                    "shapes do not broadcast: {} is {}, {} is {}",
                                    arg_name(call, i),
                                    fmt_dims(a),
                                    arg_name(call, j),
                                    fmt_dims(b)
                                ),
                            ))
                        }
                        Proof::Unknown => return Ok(None),
                    }
                }
            }
            (None, None) => unreachable!("k < max(len a, len b)"),
        };
        out.push(d);
    }
    Ok(Some(out))
}

/// The result StructInfo of a broadcasting binary op on arguments 0 and 1;
/// `out_dtype` overrides the unified dtype (comparisons give `bool`).
/// A `R.Prim` operand (a PrimValue) is a scalar of its dtype: a 0-d tensor
/// for broadcasting, and two of them give a `R.Prim` of the result dtype
/// (no value, as TVM's). TVM broadcasts a `R.Prim` as a shape `(1,)`, which
/// differs from this only next to a 0-d tensor (TVM infers `(1,)` where its
/// legalization computes `()`).
pub fn binary_broadcast(
    call: &Call,
    ana: &Analyzer,
    out_dtype: Option<DataType>,
) -> Result<StructInfo, Diagnostic> {
    let (x, y) = (tensor_or_prim_arg(call, 0)?, tensor_or_prim_arg(call, 1)?);
    let dtype = unify_dtype(call, 0, x.dtype, 1, y.dtype)?;
    let dtype = out_dtype.unwrap_or(dtype);
    if is_prim_arg(call, 0) && is_prim_arg(call, 1) {
        return Ok(StructInfo::prim(dtype));
    }
    let (x, y) = (&x, &y);
    let ndim = if x.is_unknown_ndim() || y.is_unknown_ndim() {
        UNKNOWN_NDIM
    } else {
        x.ndim.max(y.ndim)
    };
    let dims = match (x.shape_values(), y.shape_values()) {
        (Some(a), Some(b)) => broadcast(call, (0, a), (1, b), ana)?,
        _ => None,
    };
    Ok(tensor(dims, ndim, dtype, ana))
}

/// `axis` normalized into `0..ndim` (negative counts from the end).
pub fn normalize_axis(call: &Call, axis: i64, ndim: i32) -> Result<usize, Diagnostic> {
    let n = ndim as i64;
    let a = if axis < 0 { axis + n } else { axis };
    if a < 0 || a >= n {
        return Err(error(
            call,
            "op-axis-out-of-range",
            format!("axis {axis} is out of range for a tensor of rank {ndim}"),
        ));
    }
    Ok(a as usize)
}

/// Normalized distinct axes; an error on a repeated axis.
pub fn normalize_axes(call: &Call, axes: &[i64], ndim: i32) -> Result<Vec<usize>, Diagnostic> {
    let mut out = Vec::with_capacity(axes.len());
    for &a in axes {
        let n = normalize_axis(call, a, ndim)?;
        if out.contains(&n) {
            return Err(error(
                call,
                "op-axis-repeated",
                format!("axis {a} appears more than once"),
            ));
        }
        out.push(n);
    }
    Ok(out)
}

/// The attribute `name` of the call, if present and not `None`.
pub fn attr<'a>(call: &'a Call, name: &str) -> Option<&'a AttrValue> {
    call.attrs.get(name).filter(|v| !v.is_none())
}

/// The attribute `name` as a list of ints (a single int counts as a list).
pub fn attr_ints(call: &Call, name: &str) -> Option<Vec<i64>> {
    match attr(call, name)? {
        AttrValue::Array(items) => items.iter().map(AttrValue::as_int).collect(),
        v => v.as_int().map(|i| vec![i]),
    }
}

/// The attribute `name` as a list of PrimExprs.
pub fn attr_exprs(call: &Call, name: &str) -> Option<Vec<PrimExpr>> {
    match attr(call, name)? {
        AttrValue::Array(items) => items
            .iter()
            .map(|v| match v {
                AttrValue::Int(i) => Some(PrimExpr::int(*i)),
                AttrValue::PrimExpr(e) => Some(e.clone()),
                _ => None,
            })
            .collect(),
        AttrValue::Int(i) => Some(vec![PrimExpr::int(*i)]),
        AttrValue::PrimExpr(e) => Some(vec![e.clone()]),
        _ => None,
    }
}

/// The attribute `name` as a dtype (`void` if absent).
pub fn attr_dtype(call: &Call, name: &str) -> DataType {
    match attr(call, name) {
        Some(AttrValue::DataType(d)) => *d,
        Some(AttrValue::Str(s)) => s.parse().unwrap_or(DataType::void()),
        _ => DataType::void(),
    }
}

/// The attribute `name` as a bool (`default` if absent).
pub fn attr_bool(call: &Call, name: &str, default: bool) -> bool {
    attr(call, name)
        .and_then(AttrValue::as_bool)
        .unwrap_or(default)
}

/// The attribute `name` as an int.
pub fn attr_int(call: &Call, name: &str) -> Option<i64> {
    attr(call, name).and_then(AttrValue::as_int)
}

/// The values of a `Shape` argument: a `ShapeExpr`, or a var of known Shape
/// StructInfo. `Err` if the argument is not a shape; `Ok(None)` if its values
/// are unknown (then the rank, possibly unknown, is returned instead).
pub fn shape_arg(call: &Call, i: usize) -> Result<Result<Vec<PrimExpr>, i32>, Diagnostic> {
    let s = arg_sinfo(call, i)?;
    match s.kind() {
        StructInfoKind::Shape(sh) => Ok(sh.values.clone().ok_or(sh.ndim)),
        _ => Err(error(
            call,
            "op-arg-not-shape",
            format!("{} must be a shape, found {s}", arg_name(call, i)),
        )),
    }
}

/// The product of dims.
pub fn product(dims: &[PrimExpr]) -> PrimExpr {
    dims.iter().fold(PrimExpr::int(1), |acc, d| acc * d.clone())
}
