//! Reductions: `sum`, `mean`, `max`, `min`, `prod` over `axis` (all axes when
//! `None`), keeping reduced dims as 1 when `keepdims`.

use super::attr::{AttrDefault, AttrSpec, AttrType};
use super::infer::{attr_bool, attr_ints, normalize_axes, tensor, tensor_arg};
use super::{Arity, OpInfo, OpPatternKind};
use crate::arith::Analyzer;
use crate::ir::{Call, PrimExpr, StructInfo, TensorStructInfo, UNKNOWN_NDIM};
use relax_runtime::{DataType, Diagnostic};

/// The StructInfo of reducing `x` over the `axis` attribute of `call`.
pub(crate) fn reduce(
    call: &Call,
    x: &TensorStructInfo,
    dtype: DataType,
    ana: &Analyzer,
) -> Result<StructInfo, Diagnostic> {
    let keepdims = attr_bool(call, "keepdims", false);
    let axes = attr_ints(call, "axis");
    if x.is_unknown_ndim() {
        let ndim = match (&axes, keepdims) {
            (_, true) => UNKNOWN_NDIM,
            (None, false) => 0,
            (Some(_), false) => UNKNOWN_NDIM,
        };
        return Ok(tensor(None, ndim, dtype, ana));
    }
    let axes = match axes {
        Some(a) => normalize_axes(call, &a, x.ndim)?,
        None => (0..x.ndim as usize).collect(),
    };
    let ndim = if keepdims {
        x.ndim
    } else {
        x.ndim - axes.len() as i32
    };
    let dims = x.shape_values().map(|s| {
        s.iter()
            .enumerate()
            .filter_map(|(i, d)| match (axes.contains(&i), keepdims) {
                (false, _) => Some(d.clone()),
                (true, true) => Some(PrimExpr::int(1)),
                (true, false) => None,
            })
            .collect()
    });
    Ok(tensor(dims, ndim, dtype, ana))
}

fn infer_reduce(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let x = tensor_arg(call, 0)?;
    reduce(call, x, x.dtype, ana)
}

const REDUCE_ATTRS: &[AttrSpec] = &[
    AttrSpec::new("axis", AttrType::OptIntArray, AttrDefault::None),
    AttrSpec::new("keepdims", AttrType::Bool, AttrDefault::Bool(false)),
];

macro_rules! reductions {
    ($($name:literal),*) => {
        /// The reductions.
        pub const OPS: &[OpInfo] = &[$(OpInfo {
            name: $name,
            args: &["x"],
            arity: Arity::Exact(1),
            attrs: REDUCE_ATTRS,
            infer_struct_info: infer_reduce,
            purity: true,
            pattern: OpPatternKind::CommReduce,
        }),*];
    };
}

reductions!(
    "relax.sum",
    "relax.mean",
    "relax.max",
    "relax.min",
    "relax.prod"
);

#[cfg(test)]
mod tests {
    use crate::ir::AttrValue;
    use crate::op::testing::*;

    #[test]
    fn reductions() {
        let n = sym("n");
        let x = t(&[n.clone(), d(3), d(4)], F32);
        assert_infers(
            "relax.sum",
            &[x.clone()],
            &[("axis", ints(&[1]))],
            "R.Tensor((n, 4), dtype=\"float32\")",
        );
        assert_infers(
            "relax.mean",
            &[x.clone()],
            &[("axis", ints(&[-1])), ("keepdims", AttrValue::Bool(true))],
            "R.Tensor((n, 3, 1), dtype=\"float32\")",
        );
        assert_infers(
            "relax.max",
            &[x.clone()],
            &[],
            "R.Tensor((), dtype=\"float32\")",
        );
        assert_infers(
            "relax.min",
            &[tn(-1, F32)],
            &[],
            "R.Tensor((), dtype=\"float32\")",
        );
        assert_infers(
            "relax.sum",
            &[tn(3, F32)],
            &[("axis", ints(&[0, 1]))],
            "R.Tensor(dtype=\"float32\", ndim=1)",
        );
        assert_fails(
            "relax.sum",
            &[x.clone()],
            &[("axis", ints(&[3]))],
            "sum: axis 3 is out of range for a tensor of rank 3",
        );
        assert_fails(
            "relax.sum",
            &[x],
            &[("axis", ints(&[1, -2]))],
            "sum: axis -2 appears more than once",
        );
    }

    #[test]
    fn every_reduction_reduces_symbolic_shapes() {
        for op in super::OPS {
            let n = sym("n");
            assert_infers(
                op.name,
                &[t(&[n.clone(), d(4)], F32)],
                &[("axis", ints(&[1]))],
                "R.Tensor((n,), dtype=\"float32\")",
            );
            assert_infers(
                op.name,
                &[t(&[n.clone(), d(4)], F32)],
                &[("axis", ints(&[0])), ("keepdims", AttrValue::Bool(true))],
                "R.Tensor((1, 4), dtype=\"float32\")",
            );
        }
    }
}
