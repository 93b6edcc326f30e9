//! `ewise_fma(x1, x2, x3) = x1 * x2 + x3`, elementwise on equal shapes (no
//! broadcasting, as in TVM).

use super::infer::{arg_name, error, fmt_dims, tensor, tensor_arg, unify_dtype};
use super::{Arity, OpInfo, OpPatternKind};
use crate::arith::{Analyzer, Proof};
use crate::ir::{Call, StructInfo, UNKNOWN_NDIM};
use relax_runtime::Diagnostic;

fn infer_ewise_fma(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let xs = [
        tensor_arg(call, 0)?,
        tensor_arg(call, 1)?,
        tensor_arg(call, 2)?,
    ];
    let mut dtype = unify_dtype(call, 0, xs[0].dtype, 1, xs[1].dtype)?;
    dtype = unify_dtype(call, 0, dtype, 2, xs[2].dtype)?;
    let mut ndim = UNKNOWN_NDIM;
    for (i, x) in xs.iter().enumerate() {
        if x.is_unknown_ndim() {
            continue;
        }
        if ndim != UNKNOWN_NDIM && ndim != x.ndim {
            return Err(error(
                call,
                "op-rank-mismatch",
                format!(
                    "ranks differ: {} has rank {ndim}, {} has rank {}",
                    arg_name(call, 0),
                    arg_name(call, i),
                    x.ndim
                ),
            ));
        }
        ndim = x.ndim;
    }
    let mut dims = xs[0].shape_values().map(<[_]>::to_vec);
    for (i, x) in xs.iter().enumerate().skip(1) {
        let (Some(a), Some(b)) = (xs[0].shape_values(), x.shape_values()) else {
            dims = dims.or_else(|| x.shape_values().map(<[_]>::to_vec));
            continue;
        };
        for (da, db) in a.iter().zip(b) {
            if ana.compare_equal(da, db) == Proof::Disproven {
                return Err(error(
                    call,
                    "op-shape-mismatch",
                    format!(
                        "shapes differ: {} is {}, {} is {}",
                        arg_name(call, 0),
                        fmt_dims(a),
                        arg_name(call, i),
                        fmt_dims(b)
                    ),
                ));
            }
        }
    }
    Ok(tensor(dims, ndim, dtype, ana))
}

/// The ternary ops.
pub const OPS: &[OpInfo] = &[OpInfo {
    name: "relax.ewise_fma",
    args: &["x1", "x2", "x3"],
    arity: Arity::Exact(3),
    attrs: &[],
    infer_struct_info: infer_ewise_fma,
    purity: true,
    pattern: OpPatternKind::ElemWise,
}];

#[cfg(test)]
mod tests {
    use crate::op::testing::*;

    #[test]
    fn equal_shapes() {
        let n = sym("n");
        let x = t(&[n.clone(), d(4)], F32);
        assert_infers(
            "relax.ewise_fma",
            &[x.clone(), x.clone(), x],
            &[],
            "R.Tensor((n, 4), dtype=\"float32\")",
        );
    }

    #[test]
    fn mismatches() {
        let x = t(&[d(3), d(4)], F32);
        assert_fails(
            "relax.ewise_fma",
            &[x.clone(), x.clone(), t(&[d(3), d(5)], F32)],
            &[],
            "ewise_fma: shapes differ: x1 is (3, 4), x3 is (3, 5)",
        );
        assert_fails(
            "relax.ewise_fma",
            &[x.clone(), x.clone(), t(&[d(3)], F32)],
            &[],
            "ewise_fma: ranks differ: x1 has rank 2, x3 has rank 1",
        );
        assert_fails(
            "relax.ewise_fma",
            &[x.clone(), x, t(&[d(3), d(4)], I64)],
            &[],
            "ewise_fma: dtypes differ: x1 is float32, x3 is int64",
        );
    }
}
