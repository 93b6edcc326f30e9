//! Elementwise unary ops: `negative`, `exp`, `log`, `sqrt`, `rsqrt`, `tanh`,
//! `sigmoid`, `abs`. The result has the input's StructInfo; the
//! transcendental ones require a float dtype (unknown dtype passes).

use super::infer::{arg_name, error, tensor_arg};
use super::{Arity, OpInfo, OpPatternKind};
use crate::arith::Analyzer;
use crate::ir::{Call, StructInfo};
use relax_runtime::Diagnostic;

/// Same StructInfo as the input tensor.
pub(crate) fn infer_same(call: &Call, _: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let x = tensor_arg(call, 0)?;
    Ok(StructInfo::new(crate::ir::StructInfoKind::Tensor(
        x.clone(),
    )))
}

/// Same StructInfo as the input, which must be of a float dtype if known.
pub(crate) fn infer_float(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let x = tensor_arg(call, 0)?;
    if !x.dtype.is_void() && !x.dtype.is_float() {
        return Err(error(
            call,
            "op-dtype-not-float",
            format!(
                "{} must have a float dtype, found {}",
                arg_name(call, 0),
                x.dtype
            ),
        ));
    }
    infer_same(call, ana)
}

macro_rules! unary {
    ($($name:literal => $infer:ident),* $(,)?) => {
        /// The unary ops.
        pub const OPS: &[OpInfo] = &[$(OpInfo {
            name: $name,
            args: &["x"],
            arity: Arity::Exact(1),
            attrs: &[],
            infer_struct_info: $infer,
            purity: true,
            pattern: OpPatternKind::ElemWise,
        }),*];
    };
}

unary! {
    "relax.negative" => infer_same,
    "relax.abs" => infer_same,
    "relax.exp" => infer_float,
    "relax.log" => infer_float,
    "relax.sqrt" => infer_float,
    "relax.rsqrt" => infer_float,
    "relax.tanh" => infer_float,
    "relax.sigmoid" => infer_float,
}

#[cfg(test)]
mod tests {
    use crate::op::testing::*;

    #[test]
    fn keeps_the_input_struct_info() {
        let n = sym("n");
        assert_infers(
            "relax.exp",
            &[t(&[n.clone(), d(4)], F32)],
            &[],
            "R.Tensor((n, 4), dtype=\"float32\")",
        );
        assert_infers(
            "relax.negative",
            &[t(&[d(2)], I64)],
            &[],
            "R.Tensor((2,), dtype=\"int64\")",
        );
        assert_infers("relax.sqrt", &[tn(-1, VOID)], &[], "R.Tensor");
    }

    #[test]
    fn transcendental_ops_need_floats() {
        assert_fails(
            "relax.exp",
            &[t(&[d(2)], I64)],
            &[],
            "exp: x must have a float dtype, found int64",
        );
        assert_fails(
            "relax.tanh",
            &[shape(&[d(2)])],
            &[],
            "tanh: x must be a tensor, found R.Shape([2])",
        );
    }

    #[test]
    fn every_unary_op_keeps_symbolic_shapes() {
        for op in super::OPS {
            let n = sym("n");
            assert_infers(
                op.name,
                &[t(&[n.clone(), d(4)], F32)],
                &[],
                "R.Tensor((n, 4), dtype=\"float32\")",
            );
            let short = op.name.trim_start_matches("relax.");
            let int_ok = matches!(short, "negative" | "abs");
            if int_ok {
                assert_infers(
                    op.name,
                    &[t(&[d(2)], I64)],
                    &[],
                    "R.Tensor((2,), dtype=\"int64\")",
                );
            } else {
                assert_fails(
                    op.name,
                    &[t(&[d(2)], I64)],
                    &[],
                    &format!("{short}: x must have a float dtype, found int64"),
                );
            }
        }
    }
}
