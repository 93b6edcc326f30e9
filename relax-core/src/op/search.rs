//! `where(condition, x1, x2)` (three-way broadcasting) and `argmax`/`argmin`
//! (reductions giving `int64` indices).

use super::attr::{AttrDefault, AttrSpec, AttrType};
use super::infer::{arg_name, broadcast, error, tensor, tensor_arg, unify_dtype};
use super::statistical::reduce;
use super::{Arity, OpInfo, OpPatternKind};
use crate::arith::Analyzer;
use crate::ir::{Call, StructInfo, UNKNOWN_NDIM};
use relax_runtime::{DataType, Diagnostic};

fn infer_where(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let (c, a, b) = (
        tensor_arg(call, 0)?,
        tensor_arg(call, 1)?,
        tensor_arg(call, 2)?,
    );
    if !c.dtype.is_void() && !c.dtype.is_bool() {
        return Err(error(
            call,
            "op-dtype-not-bool",
            format!(
                "{} must have dtype bool, found {}",
                arg_name(call, 0),
                c.dtype
            ),
        ));
    }
    let dtype = unify_dtype(call, 1, a.dtype, 2, b.dtype)?;
    if [c, a, b].iter().any(|t| t.is_unknown_ndim()) {
        return Ok(StructInfo::tensor_ndim(UNKNOWN_NDIM, dtype));
    }
    let ndim = c.ndim.max(a.ndim).max(b.ndim);
    let dims = match (c.shape_values(), a.shape_values(), b.shape_values()) {
        (Some(sc), Some(sa), Some(sb)) => match broadcast(call, (1, sa), (2, sb), ana)? {
            Some(ab) => broadcast(call, (0, sc), (1, &ab), ana)?,
            None => None,
        },
        _ => None,
    };
    Ok(tensor(dims, ndim, dtype, ana))
}

fn infer_arg_reduce(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let x = tensor_arg(call, 0)?;
    reduce(call, x, DataType::i64(), ana)
}

const ARG_ATTRS: &[AttrSpec] = &[
    AttrSpec::new("axis", AttrType::OptInt, AttrDefault::None),
    AttrSpec::new("keepdims", AttrType::Bool, AttrDefault::Bool(false)),
];

/// The search ops.
pub const OPS: &[OpInfo] = &[
    OpInfo {
        name: "relax.where",
        args: &["condition", "x1", "x2"],
        arity: Arity::Exact(3),
        attrs: &[],
        infer_struct_info: infer_where,
        purity: true,
        pattern: OpPatternKind::Broadcast,
    },
    OpInfo {
        name: "relax.argmax",
        args: &["x"],
        arity: Arity::Exact(1),
        attrs: ARG_ATTRS,
        infer_struct_info: infer_arg_reduce,
        purity: true,
        pattern: OpPatternKind::CommReduce,
    },
    OpInfo {
        name: "relax.argmin",
        args: &["x"],
        arity: Arity::Exact(1),
        attrs: ARG_ATTRS,
        infer_struct_info: infer_arg_reduce,
        purity: true,
        pattern: OpPatternKind::CommReduce,
    },
];

#[cfg(test)]
mod tests {
    use crate::ir::AttrValue;
    use crate::op::testing::*;

    #[test]
    fn where_broadcasts_three_ways() {
        let n = sym("n");
        assert_infers(
            "relax.where",
            &[t(&[n.clone(), d(1)], BOOL), t(&[d(4)], F32), t(&[], F32)],
            &[],
            "R.Tensor((n, 4), dtype=\"float32\")",
        );
        assert_fails(
            "relax.where",
            &[t(&[d(4)], F32), t(&[d(4)], F32), t(&[d(4)], F32)],
            &[],
            "where: condition must have dtype bool, found float32",
        );
        assert_fails(
            "relax.where",
            &[t(&[d(4)], BOOL), t(&[d(4)], F32), t(&[d(3)], F32)],
            &[],
            "where: shapes do not broadcast: x1 is (4,), x2 is (3,)",
        );
    }

    #[test]
    fn argmax_gives_int64() {
        let n = sym("n");
        assert_infers(
            "relax.argmax",
            &[t(&[n.clone(), d(10)], F32)],
            &[("axis", AttrValue::Int(1))],
            "R.Tensor((n,), dtype=\"int64\")",
        );
        assert_infers(
            "relax.argmin",
            &[t(&[n.clone(), d(10)], F32)],
            &[
                ("axis", AttrValue::Int(0)),
                ("keepdims", AttrValue::Bool(true)),
            ],
            "R.Tensor((1, 10), dtype=\"int64\")",
        );
        assert_infers(
            "relax.argmax",
            &[t(&[n.clone(), d(10)], F32)],
            &[],
            "R.Tensor((), dtype=\"int64\")",
        );
    }
}
