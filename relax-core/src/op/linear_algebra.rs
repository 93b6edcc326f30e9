//! `matmul` with NumPy semantics: 1-D operands are promoted and the added dim
//! removed again, batch dims broadcast, the inner dims must agree.

use super::attr::{AttrDefault, AttrSpec, AttrType};
use super::infer::{
    arg_name, attr_dtype, broadcast, error, fmt_tensor_shape, tensor, tensor_arg, unify_dtype,
};
use super::{Arity, OpInfo, OpPatternKind};
use crate::arith::{Analyzer, Proof};
use crate::ir::{Call, StructInfo, UNKNOWN_NDIM};
use relax_runtime::Diagnostic;

fn infer_matmul(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let (a, b) = (tensor_arg(call, 0)?, tensor_arg(call, 1)?);
    let out_dtype = attr_dtype(call, "out_dtype");
    let dtype = if out_dtype.is_void() {
        unify_dtype(call, 0, a.dtype, 1, b.dtype)?
    } else {
        out_dtype
    };
    for (i, x) in [(0, a), (1, b)] {
        if x.ndim == 0 {
            return Err(error(
                call,
                "op-rank",
                format!(
                    "{} must have rank at least 1, found a scalar",
                    arg_name(call, i)
                ),
            ));
        }
    }
    if a.is_unknown_ndim() || b.is_unknown_ndim() {
        return Ok(StructInfo::tensor_ndim(UNKNOWN_NDIM, dtype));
    }
    let ndim = a.ndim.max(b.ndim) - (a.ndim == 1) as i32 - (b.ndim == 1) as i32;
    let (Some(sa), Some(sb)) = (a.shape_values(), b.shape_values()) else {
        return Ok(StructInfo::tensor_ndim(ndim, dtype));
    };
    let k_a = &sa[sa.len() - 1];
    let k_b = if sb.len() == 1 {
        &sb[0]
    } else {
        &sb[sb.len() - 2]
    };
    if ana.compare_equal(k_a, k_b) == Proof::Disproven {
        return Err(error(
            call,
            "op-shape-mismatch",
            format!(
                "inner dimensions differ: {} is {}, {} is {}",
                arg_name(call, 0),
                fmt_tensor_shape(a),
                arg_name(call, 1),
                fmt_tensor_shape(b)
            ),
        ));
    }
    let batch_a = &sa[..sa.len().saturating_sub(2)];
    let batch_b = &sb[..sb.len().saturating_sub(2)];
    let batch = broadcast(call, (0, batch_a), (1, batch_b), ana).map_err(|_| {
        error(
            call,
            "op-shape-mismatch",
            format!(
                "batch dimensions do not broadcast: {} is {}, {} is {}",
                arg_name(call, 0),
                fmt_tensor_shape(a),
                arg_name(call, 1),
                fmt_tensor_shape(b)
            ),
        )
    })?;
    let Some(mut dims) = batch else {
        return Ok(StructInfo::tensor_ndim(ndim, dtype));
    };
    if sa.len() >= 2 {
        dims.push(sa[sa.len() - 2].clone());
    }
    if sb.len() >= 2 {
        dims.push(sb[sb.len() - 1].clone());
    }
    Ok(tensor(Some(dims), ndim, dtype, ana))
}

/// The linear-algebra ops.
pub const OPS: &[OpInfo] = &[OpInfo {
    name: "relax.matmul",
    args: &["x1", "x2"],
    arity: Arity::Exact(2),
    attrs: &[AttrSpec::new(
        "out_dtype",
        AttrType::DataType,
        AttrDefault::DataType("void"),
    )],
    infer_struct_info: infer_matmul,
    purity: true,
    pattern: OpPatternKind::OutEWiseFusable,
}];

#[cfg(test)]
mod tests {
    use crate::ir::{AttrValue, Expr, StructInfo, Var};
    use crate::op::testing::*;

    #[test]
    fn symbolic_matmul() {
        let (n, k, m) = (sym("n"), sym("k"), sym("m"));
        assert_infers(
            "relax.matmul",
            &[
                t(&[n.clone(), k.clone()], F32),
                t(&[k.clone(), m.clone()], F32),
            ],
            &[],
            "R.Tensor((n, m), dtype=\"float32\")",
        );
    }

    #[test]
    fn batched_and_vector_operands() {
        let b = sym("b");
        assert_infers(
            "relax.matmul",
            &[
                t(&[b.clone(), d(1), d(3), d(4)], F32),
                t(&[d(5), d(4), d(6)], F32),
            ],
            &[],
            "R.Tensor((b, 5, 3, 6), dtype=\"float32\")",
        );
        assert_infers(
            "relax.matmul",
            &[t(&[d(4)], F32), t(&[d(4), d(6)], F32)],
            &[],
            "R.Tensor((6,), dtype=\"float32\")",
        );
        assert_infers(
            "relax.matmul",
            &[t(&[d(3), d(4)], F32), t(&[d(4)], F32)],
            &[],
            "R.Tensor((3,), dtype=\"float32\")",
        );
        assert_infers(
            "relax.matmul",
            &[t(&[d(4)], F32), t(&[d(4)], F32)],
            &[],
            "R.Tensor((), dtype=\"float32\")",
        );
    }

    #[test]
    fn out_dtype_and_unknowns() {
        assert_infers(
            "relax.matmul",
            &[t(&[d(2), d(4)], F16), t(&[d(4), d(3)], F16)],
            &[("out_dtype", AttrValue::from("float32"))],
            "R.Tensor((2, 3), dtype=\"float32\")",
        );
        assert_infers(
            "relax.matmul",
            &[tn(3, F32), tn(2, F32)],
            &[],
            "R.Tensor(dtype=\"float32\", ndim=3)",
        );
        assert_infers(
            "relax.matmul",
            &[tn(-1, F32), tn(2, F32)],
            &[],
            "R.Tensor(dtype=\"float32\")",
        );
    }

    #[test]
    fn inner_dimension_error_names_both_shapes() {
        let n = sym("n");
        let x = Var::new("x", Some(StructInfo::tensor(vec![n.clone(), d(784)], F32)));
        let w = Var::new("w", Some(StructInfo::tensor(vec![d(128), d(784)], F32)));
        assert_fails(
            "relax.matmul",
            &[Expr::var(&x), Expr::var(&w)],
            &[],
            "matmul: inner dimensions differ: x is (n, 784), w is (128, 784)",
        );
        assert_fails(
            "relax.matmul",
            &[t(&[], F32), t(&[d(3)], F32)],
            &[],
            "matmul: x1 must have rank at least 1, found a scalar",
        );
        assert_fails(
            "relax.matmul",
            &[t(&[d(2), d(2), d(3)], F32), t(&[d(3), d(3), d(1)], F32)],
            &[],
            "matmul: batch dimensions do not broadcast: x1 is (2, 2, 3), x2 is (3, 3, 1)",
        );
    }
}
