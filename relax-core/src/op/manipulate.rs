//! Shape manipulation: `permute_dims`, `reshape`, `flatten`, `expand_dims`,
//! `squeeze`, `concat`, `split`, `broadcast_to`. All injective.
//!
//! `reshape` and `broadcast_to` take the target shape as their second
//! argument (a `ShapeExpr`), as in TVM; `reshape` accepts one `-1` dim and
//! checks the element count symbolically.

use super::attr::{AttrDefault, AttrSpec, AttrType};
use super::infer::{
    arg_name, arg_sinfo, attr, attr_int, attr_ints, error, fmt_dims, normalize_axes,
    normalize_axis, product, shape_arg, tensor, tensor_arg, unify_dtype,
};
use super::{Arity, OpInfo, OpPatternKind};
use crate::arith::{Analyzer, Proof};
use crate::ir::{AttrValue, Call, PrimExpr, StructInfo, UNKNOWN_NDIM};
use relax_runtime::Diagnostic;

fn infer_permute_dims(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let x = tensor_arg(call, 0)?;
    let axes = attr_ints(call, "axes");
    let ndim = match &axes {
        Some(a) => {
            if !x.is_unknown_ndim() && a.len() as i32 != x.ndim {
                return Err(error(
                    call,
                    "op-axes-length",
                    format!(
                        "axes has {} entries, but {} has rank {}",
                        a.len(),
                        arg_name(call, 0),
                        x.ndim
                    ),
                ));
            }
            a.len() as i32
        }
        None => x.ndim,
    };
    if ndim == UNKNOWN_NDIM {
        return Ok(StructInfo::tensor_ndim(UNKNOWN_NDIM, x.dtype));
    }
    let perm: Vec<usize> = match &axes {
        Some(a) => normalize_axes(call, a, ndim)?,
        None => (0..ndim as usize).rev().collect(),
    };
    let dims = x
        .shape_values()
        .map(|s| perm.iter().map(|&i| s[i].clone()).collect());
    Ok(tensor(dims, ndim, x.dtype, ana))
}

fn infer_reshape(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let x = tensor_arg(call, 0)?;
    let new = match shape_arg(call, 1)? {
        Ok(v) => v,
        Err(ndim) => return Ok(StructInfo::tensor_ndim(ndim, x.dtype)),
    };
    let wildcards: Vec<usize> = new
        .iter()
        .enumerate()
        .filter(|(_, d)| d.as_int() == Some(-1))
        .map(|(i, _)| i)
        .collect();
    if wildcards.len() > 1 {
        return Err(error(
            call,
            "op-reshape-wildcards",
            format!("at most one dimension may be -1, found {}", fmt_dims(&new)),
        ));
    }
    if let Some(bad) = new.iter().find(|d| matches!(d.as_int(), Some(v) if v < -1)) {
        return Err(error(
            call,
            "op-negative-dim",
            format!(
                "dimension {bad} of the new shape {} is negative",
                fmt_dims(&new)
            ),
        ));
    }
    let Some(old) = x.shape_values() else {
        if wildcards.is_empty() {
            return Ok(tensor(Some(new), 0, x.dtype, ana));
        }
        return Ok(StructInfo::tensor_ndim(new.len() as i32, x.dtype));
    };
    let total = ana.simplify(&product(old));
    let mut dims = new.clone();
    if let [w] = wildcards[..] {
        let known: Vec<PrimExpr> = new
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != w)
            .map(|(_, d)| d.clone())
            .collect();
        let known = ana.simplify(&product(&known));
        if let (Some(t), Some(k)) = (total.as_int(), known.as_int()) {
            if k == 0 || t % k != 0 {
                return Err(error(
                    call,
                    "op-reshape-count",
                    format!(
                        "cannot reshape {} of shape {} ({t} elements) into {}",
                        arg_name(call, 0),
                        fmt_dims(old),
                        fmt_dims(&new)
                    ),
                ));
            }
        }
        dims[w] = ana.simplify(&total.clone().floordiv(known));
    } else if ana.compare_equal(&total, &product(&new)) == Proof::Disproven {
        return Err(error(
            call,
            "op-reshape-count",
            format!(
                "cannot reshape {} of shape {} ({} elements) into {} ({} elements)",
                arg_name(call, 0),
                fmt_dims(old),
                total,
                fmt_dims(&new),
                ana.simplify(&product(&new))
            ),
        ));
    }
    Ok(tensor(Some(dims), 0, x.dtype, ana))
}

fn infer_flatten(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let x = tensor_arg(call, 0)?;
    Ok(tensor(
        x.shape_values().map(|s| vec![product(s)]),
        1,
        x.dtype,
        ana,
    ))
}

fn infer_expand_dims(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let x = tensor_arg(call, 0)?;
    let axes = attr_ints(call, "axis").unwrap_or_default();
    if x.is_unknown_ndim() {
        return Ok(StructInfo::tensor_ndim(UNKNOWN_NDIM, x.dtype));
    }
    let ndim = x.ndim + axes.len() as i32;
    let axes = normalize_axes(call, &axes, ndim)?;
    let dims = x.shape_values().map(|s| {
        let mut it = s.iter();
        (0..ndim as usize)
            .map(|i| {
                if axes.contains(&i) {
                    PrimExpr::int(1)
                } else {
                    it.next().cloned().unwrap_or_else(|| PrimExpr::int(1))
                }
            })
            .collect()
    });
    Ok(tensor(dims, ndim, x.dtype, ana))
}

fn infer_squeeze(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let x = tensor_arg(call, 0)?;
    if x.is_unknown_ndim() {
        return Ok(StructInfo::tensor_ndim(UNKNOWN_NDIM, x.dtype));
    }
    match attr_ints(call, "axis") {
        Some(axes) => {
            let axes = normalize_axes(call, &axes, x.ndim)?;
            if let Some(s) = x.shape_values() {
                for &a in &axes {
                    if ana.compare_equal(&s[a], &PrimExpr::int(1)) == Proof::Disproven {
                        return Err(error(
                            call,
                            "op-squeeze-not-one",
                            format!(
                                "dimension {a} of {} is {}, not 1: {} is {}",
                                arg_name(call, 0),
                                s[a],
                                arg_name(call, 0),
                                fmt_dims(s)
                            ),
                        ));
                    }
                }
            }
            let dims = x.shape_values().map(|s| {
                s.iter()
                    .enumerate()
                    .filter(|(i, _)| !axes.contains(i))
                    .map(|(_, d)| d.clone())
                    .collect()
            });
            Ok(tensor(dims, x.ndim - axes.len() as i32, x.dtype, ana))
        }
        None => match x.shape_values() {
            // Without axes every dim equal to 1 goes; a symbolic dim might be 1,
            // so only the dtype is known then.
            Some(s) if s.iter().all(|d| d.as_int().is_some()) => {
                let dims: Vec<_> = s
                    .iter()
                    .filter(|d| d.as_int() != Some(1))
                    .cloned()
                    .collect();
                Ok(tensor(Some(dims), 0, x.dtype, ana))
            }
            _ => Ok(StructInfo::tensor_ndim(UNKNOWN_NDIM, x.dtype)),
        },
    }
}

fn infer_concat(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let s = arg_sinfo(call, 0)?;
    let Some(fields) = s.as_tuple() else {
        return Err(error(
            call,
            "op-arg-not-tuple",
            format!(
                "{} must be a tuple of tensors, found {s}",
                arg_name(call, 0)
            ),
        ));
    };
    if fields.is_empty() {
        return Err(error(call, "op-empty-tuple", "needs at least one tensor"));
    }
    let mut ts = Vec::new();
    for (i, f) in fields.iter().enumerate() {
        ts.push(f.as_tensor().ok_or_else(|| {
            error(
                call,
                "op-arg-not-tensor",
                format!(
                    "field {i} of {} must be a tensor, found {f}",
                    arg_name(call, 0)
                ),
            )
        })?);
    }
    let mut dtype = ts[0].dtype;
    for t in &ts[1..] {
        dtype = unify_dtype(call, 0, dtype, 0, t.dtype).map_err(|_| {
            error(
                call,
                "op-dtype-mismatch",
                format!("dtypes differ: {} and {}", ts[0].dtype, t.dtype),
            )
        })?;
    }
    let ndims: Vec<i32> = ts
        .iter()
        .map(|t| t.ndim)
        .filter(|&n| n != UNKNOWN_NDIM)
        .collect();
    if let Some(&n0) = ndims.first() {
        if let Some(&bad) = ndims.iter().find(|&&n| n != n0) {
            return Err(error(
                call,
                "op-rank-mismatch",
                format!("all tensors must have the same rank, found ranks {n0} and {bad}"),
            ));
        }
    }
    let Some(&ndim) = ndims.first() else {
        return Ok(StructInfo::tensor_ndim(UNKNOWN_NDIM, dtype));
    };
    let axis = normalize_axis(call, attr_int(call, "axis").unwrap_or(0), ndim)?;
    let shapes: Option<Vec<&[PrimExpr]>> = ts.iter().map(|t| t.shape_values()).collect();
    let Some(shapes) = shapes else {
        return Ok(StructInfo::tensor_ndim(ndim, dtype));
    };
    let mut dims = shapes[0].to_vec();
    for s in &shapes[1..] {
        for (i, (a, b)) in dims.iter().zip(s.iter()).enumerate() {
            if i != axis && ana.compare_equal(a, b) == Proof::Disproven {
                return Err(error(
                    call,
                    "op-shape-mismatch",
                    format!(
                        "shapes differ outside axis {axis}: {} and {}",
                        fmt_dims(shapes[0]),
                        fmt_dims(s)
                    ),
                ));
            }
        }
        dims[axis] = dims[axis].clone() + s[axis].clone();
    }
    Ok(tensor(Some(dims), ndim, dtype, ana))
}

fn infer_split(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let x = tensor_arg(call, 0)?;
    let spec = attr(call, "indices_or_sections")
        .cloned()
        .unwrap_or(AttrValue::Int(1));
    let pieces = match &spec {
        AttrValue::Int(n) if *n <= 0 => {
            return Err(error(
                call,
                "op-split-sections",
                format!("the number of sections must be positive, found {n}"),
            ))
        }
        AttrValue::Int(n) => *n as usize,
        AttrValue::Array(a) => a.len() + 1,
        _ => 1,
    };
    if x.is_unknown_ndim() {
        return Ok(StructInfo::tuple(vec![
            StructInfo::tensor_ndim(
                UNKNOWN_NDIM,
                x.dtype
            );
            pieces
        ]));
    }
    let axis = normalize_axis(call, attr_int(call, "axis").unwrap_or(0), x.ndim)?;
    let Some(s) = x.shape_values() else {
        return Ok(StructInfo::tuple(vec![
            StructInfo::tensor_ndim(
                x.ndim, x.dtype
            );
            pieces
        ]));
    };
    let dim = &s[axis];
    let with = |d: PrimExpr| {
        let mut v = s.to_vec();
        v[axis] = d;
        tensor(Some(v), x.ndim, x.dtype, ana)
    };
    match spec {
        AttrValue::Array(items) => {
            let idx: Vec<i64> = items.iter().filter_map(AttrValue::as_int).collect();
            if idx.windows(2).any(|w| w[0] > w[1]) || idx.iter().any(|&i| i < 0) {
                return Err(error(
                    call,
                    "op-split-indices",
                    format!("split indices must be non-negative and increasing, found {idx:?}"),
                ));
            }
            let mut out = Vec::new();
            let mut prev = PrimExpr::int(0);
            for &i in &idx {
                let i = PrimExpr::int(i).min(dim.clone());
                out.push(with(i.clone() - prev.clone()));
                prev = i;
            }
            out.push(with(dim.clone() - prev));
            Ok(StructInfo::tuple(out))
        }
        _ => {
            if let Some(v) = dim.as_int() {
                if v % pieces as i64 != 0 {
                    return Err(error(
                        call,
                        "op-split-sections",
                        format!(
                            "dimension {axis} of {} is {v}, not divisible into {pieces} sections",
                            arg_name(call, 0)
                        ),
                    ));
                }
            }
            Ok(StructInfo::tuple(vec![
                with(
                    dim.clone().floordiv(pieces as i64)
                );
                pieces
            ]))
        }
    }
}

fn infer_broadcast_to(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let x = tensor_arg(call, 0)?;
    let target = match shape_arg(call, 1)? {
        Ok(v) => v,
        Err(ndim) => return Ok(StructInfo::tensor_ndim(ndim, x.dtype)),
    };
    if !x.is_unknown_ndim() && x.ndim as usize > target.len() {
        return Err(error(
            call,
            "op-broadcast-rank",
            format!(
                "cannot broadcast {} of rank {} to the lower rank {}",
                arg_name(call, 0),
                x.ndim,
                target.len()
            ),
        ));
    }
    if let Some(s) = x.shape_values() {
        let off = target.len() - s.len();
        for (i, d) in s.iter().enumerate() {
            if d.as_int() != Some(1) && ana.compare_equal(d, &target[off + i]) == Proof::Disproven {
                return Err(error(
                    call,
                    "op-shape-mismatch",
                    format!(
                        "cannot broadcast {} of shape {} to {}",
                        arg_name(call, 0),
                        fmt_dims(s),
                        fmt_dims(&target)
                    ),
                ));
            }
        }
    }
    Ok(tensor(Some(target), 0, x.dtype, ana))
}

const AXIS0: AttrSpec = AttrSpec::new("axis", AttrType::Int, AttrDefault::Int(0));

/// The manipulation ops.
pub const OPS: &[OpInfo] = &[
    OpInfo {
        name: "relax.permute_dims",
        args: &["x"],
        arity: Arity::Exact(1),
        attrs: &[AttrSpec::new(
            "axes",
            AttrType::OptIntArray,
            AttrDefault::None,
        )],
        infer_struct_info: infer_permute_dims,
        purity: true,
        pattern: OpPatternKind::Injective,
    },
    OpInfo {
        name: "relax.reshape",
        args: &["x", "shape"],
        arity: Arity::Exact(2),
        attrs: &[],
        infer_struct_info: infer_reshape,
        purity: true,
        pattern: OpPatternKind::Injective,
    },
    OpInfo {
        name: "relax.flatten",
        args: &["x"],
        arity: Arity::Exact(1),
        attrs: &[],
        infer_struct_info: infer_flatten,
        purity: true,
        pattern: OpPatternKind::Injective,
    },
    OpInfo {
        name: "relax.expand_dims",
        args: &["x"],
        arity: Arity::Exact(1),
        attrs: &[AttrSpec::new(
            "axis",
            AttrType::IntArray,
            AttrDefault::Required,
        )],
        infer_struct_info: infer_expand_dims,
        purity: true,
        pattern: OpPatternKind::Injective,
    },
    OpInfo {
        name: "relax.squeeze",
        args: &["x"],
        arity: Arity::Exact(1),
        attrs: &[AttrSpec::new(
            "axis",
            AttrType::OptIntArray,
            AttrDefault::None,
        )],
        infer_struct_info: infer_squeeze,
        purity: true,
        pattern: OpPatternKind::Injective,
    },
    OpInfo {
        name: "relax.concat",
        args: &["tensors"],
        arity: Arity::Exact(1),
        attrs: &[AXIS0],
        infer_struct_info: infer_concat,
        purity: true,
        pattern: OpPatternKind::Injective,
    },
    OpInfo {
        name: "relax.split",
        args: &["x"],
        arity: Arity::Exact(1),
        attrs: &[
            AttrSpec::new(
                "indices_or_sections",
                AttrType::IntOrIntArray,
                AttrDefault::Required,
            ),
            AXIS0,
        ],
        infer_struct_info: infer_split,
        purity: true,
        pattern: OpPatternKind::Injective,
    },
    OpInfo {
        name: "relax.broadcast_to",
        args: &["x", "shape"],
        arity: Arity::Exact(2),
        attrs: &[],
        infer_struct_info: infer_broadcast_to,
        purity: true,
        pattern: OpPatternKind::Broadcast,
    },
];

#[cfg(test)]
mod tests {
    use crate::ir::{AttrValue, Expr};
    use crate::op::testing::*;

    #[test]
    fn permute_dims() {
        let n = sym("n");
        assert_infers(
            "relax.permute_dims",
            &[t(&[n.clone(), d(3), d(4)], F32)],
            &[],
            "R.Tensor((4, 3, n), dtype=\"float32\")",
        );
        assert_infers(
            "relax.permute_dims",
            &[t(&[n.clone(), d(3), d(4)], F32)],
            &[("axes", ints(&[0, 2, 1]))],
            "R.Tensor((n, 4, 3), dtype=\"float32\")",
        );
        assert_infers(
            "relax.permute_dims",
            &[tn(-1, F32)],
            &[("axes", ints(&[1, 0]))],
            "R.Tensor(dtype=\"float32\", ndim=2)",
        );
        assert_fails(
            "relax.permute_dims",
            &[t(&[d(1), d(2)], F32)],
            &[("axes", ints(&[0, 0]))],
            "permute_dims: axis 0 appears more than once",
        );
        assert_fails(
            "relax.permute_dims",
            &[t(&[d(1), d(2)], F32)],
            &[("axes", ints(&[0]))],
            "permute_dims: axes has 1 entries, but x has rank 2",
        );
        assert_fails(
            "relax.permute_dims",
            &[t(&[d(1), d(2)], F32)],
            &[("axes", ints(&[0, 2]))],
            "permute_dims: axis 2 is out of range for a tensor of rank 2",
        );
    }

    #[test]
    fn reshape_with_wildcard_and_symbolic_count() {
        let n = sym("n");
        assert_infers(
            "relax.reshape",
            &[t(&[n.clone(), d(4), d(2)], F32), shape(&[d(-1), d(8)])],
            &[],
            "R.Tensor((n, 8), dtype=\"float32\")",
        );
        assert_infers(
            "relax.reshape",
            &[t(&[n.clone(), d(4)], F32), shape(&[d(2), n.clone() * 2])],
            &[],
            "R.Tensor((2, n * 2), dtype=\"float32\")",
        );
        assert_infers(
            "relax.reshape",
            &[t(&[d(3), d(4)], F32), shape(&[d(2), d(-1)])],
            &[],
            "R.Tensor((2, 6), dtype=\"float32\")",
        );
        assert_fails(
            "relax.reshape",
            &[t(&[d(3), d(4)], F32), shape(&[d(5), d(2)])],
            &[],
            "reshape: cannot reshape x of shape (3, 4) (12 elements) into (5, 2) (10 elements)",
        );
        assert_fails(
            "relax.reshape",
            &[t(&[d(3), d(4)], F32), shape(&[d(5), d(-1)])],
            &[],
            "reshape: cannot reshape x of shape (3, 4) (12 elements) into (5, -1)",
        );
        assert_fails(
            "relax.reshape",
            &[t(&[d(3), d(4)], F32), shape(&[d(-1), d(-1)])],
            &[],
            "reshape: at most one dimension may be -1, found (-1, -1)",
        );
        assert_fails(
            "relax.reshape",
            &[t(&[d(3)], F32), t(&[d(3)], F32)],
            &[],
            "reshape: shape must be a shape, found R.Tensor((3,), dtype=\"float32\")",
        );
    }

    #[test]
    fn flatten_expand_squeeze() {
        let n = sym("n");
        assert_infers(
            "relax.flatten",
            &[t(&[n.clone(), d(4)], F32)],
            &[],
            "R.Tensor((n * 4,), dtype=\"float32\")",
        );
        assert_infers(
            "relax.expand_dims",
            &[t(&[n.clone(), d(4)], F32)],
            &[("axis", ints(&[0, -1]))],
            "R.Tensor((1, n, 4, 1), dtype=\"float32\")",
        );
        assert_infers(
            "relax.squeeze",
            &[t(&[d(1), d(4), d(1)], F32)],
            &[],
            "R.Tensor((4,), dtype=\"float32\")",
        );
        assert_infers(
            "relax.squeeze",
            &[t(&[d(1), n.clone()], F32)],
            &[("axis", ints(&[0]))],
            "R.Tensor((n,), dtype=\"float32\")",
        );
        assert_fails(
            "relax.squeeze",
            &[t(&[d(2), d(4)], F32)],
            &[("axis", ints(&[1]))],
            "squeeze: dimension 1 of x is 4, not 1: x is (2, 4)",
        );
        assert_fails(
            "relax.expand_dims",
            &[t(&[d(2)], F32)],
            &[],
            "expand_dims: missing required attribute `axis`",
        );
    }

    #[test]
    fn concat_and_split() {
        let n = sym("n");
        let tup = Expr::tuple(vec![t(&[n.clone(), d(4)], F32), t(&[d(3), d(4)], F32)]);
        assert_infers(
            "relax.concat",
            &[tup],
            &[],
            "R.Tensor((n + 3, 4), dtype=\"float32\")",
        );
        let tup = Expr::tuple(vec![t(&[d(2), d(4)], F32), t(&[d(2), d(5)], F32)]);
        assert_fails(
            "relax.concat",
            &[tup.clone()],
            &[],
            "concat: shapes differ outside axis 0: (2, 4) and (2, 5)",
        );
        assert_infers(
            "relax.concat",
            &[tup],
            &[("axis", AttrValue::Int(1))],
            "R.Tensor((2, 9), dtype=\"float32\")",
        );
        assert_infers("relax.split", &[t(&[d(6), n.clone()], F32)], &[("indices_or_sections", AttrValue::Int(3))],
            "R.Tuple(R.Tensor((2, n), dtype=\"float32\"), R.Tensor((2, n), dtype=\"float32\"), R.Tensor((2, n), dtype=\"float32\"))");
        assert_infers("relax.split", &[t(&[d(10)], F32)], &[("indices_or_sections", ints(&[2, 5]))],
            "R.Tuple(R.Tensor((2,), dtype=\"float32\"), R.Tensor((3,), dtype=\"float32\"), R.Tensor((5,), dtype=\"float32\"))");
        assert_fails(
            "relax.split",
            &[t(&[d(7)], F32)],
            &[("indices_or_sections", AttrValue::Int(2))],
            "split: dimension 0 of x is 7, not divisible into 2 sections",
        );
        assert_fails(
            "relax.concat",
            &[t(&[d(7)], F32)],
            &[],
            "concat: tensors must be a tuple of tensors, found R.Tensor((7,), dtype=\"float32\")",
        );
    }

    #[test]
    fn broadcast_to() {
        let n = sym("n");
        assert_infers(
            "relax.broadcast_to",
            &[t(&[d(1), d(4)], F32), shape(&[n.clone(), d(3), d(4)])],
            &[],
            "R.Tensor((n, 3, 4), dtype=\"float32\")",
        );
        assert_fails(
            "relax.broadcast_to",
            &[t(&[d(2), d(4)], F32), shape(&[d(3), d(4)])],
            &[],
            "broadcast_to: cannot broadcast x of shape (2, 4) to (3, 4)",
        );
    }
}
