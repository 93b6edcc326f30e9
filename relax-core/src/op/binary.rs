//! Broadcasting binary ops: arithmetic (`add`, `subtract`, `multiply`,
//! `divide`, `power`, `maximum`, `minimum`) and comparisons (`equal`,
//! `not_equal`, `less`, `less_equal`, `greater`, `greater_equal`, which give
//! `bool`). NumPy broadcasting with symbolic dims; dtypes must agree.

use super::infer::binary_broadcast;
use super::{Arity, OpInfo, OpPatternKind};
use crate::arith::Analyzer;
use crate::ir::{Call, StructInfo};
use relax_runtime::{DataType, Diagnostic};

fn infer_arith(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    binary_broadcast(call, ana, None)
}

fn infer_compare(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    binary_broadcast(call, ana, Some(DataType::bool()))
}

macro_rules! binary {
    ($($name:literal => $infer:ident),* $(,)?) => {
        /// The binary ops.
        pub const OPS: &[OpInfo] = &[$(OpInfo {
            name: $name,
            args: &["x1", "x2"],
            arity: Arity::Exact(2),
            attrs: &[],
            infer_struct_info: $infer,
            purity: true,
            pattern: OpPatternKind::Broadcast,
        }),*];
    };
}

binary! {
    "relax.add" => infer_arith,
    "relax.subtract" => infer_arith,
    "relax.multiply" => infer_arith,
    "relax.divide" => infer_arith,
    "relax.power" => infer_arith,
    "relax.maximum" => infer_arith,
    "relax.minimum" => infer_arith,
    "relax.equal" => infer_compare,
    "relax.not_equal" => infer_compare,
    "relax.less" => infer_compare,
    "relax.less_equal" => infer_compare,
    "relax.greater" => infer_compare,
    "relax.greater_equal" => infer_compare,
}

#[cfg(test)]
mod tests {
    use crate::op::testing::*;

    #[test]
    fn same_shapes() {
        assert_infers(
            "relax.add",
            &[t(&[d(3), d(4)], F32), t(&[d(3), d(4)], F32)],
            &[],
            "R.Tensor((3, 4), dtype=\"float32\")",
        );
    }

    #[test]
    fn broadcasting_with_symbolic_dims() {
        let (n, m) = (sym("n"), sym("m"));
        assert_infers(
            "relax.multiply",
            &[t(&[n.clone(), d(1), d(4)], F32), t(&[m.clone(), d(1)], F32)],
            &[],
            "R.Tensor((n, m, 4), dtype=\"float32\")",
        );
        assert_infers(
            "relax.add",
            &[t(&[n.clone(), d(4)], F32), t(&[d(4)], F32)],
            &[],
            "R.Tensor((n, 4), dtype=\"float32\")",
        );
        // `n` against 5: n may be 1, so only the rank is known.
        assert_infers(
            "relax.add",
            &[t(&[n.clone()], F32), t(&[d(5)], F32)],
            &[],
            "R.Tensor(dtype=\"float32\", ndim=1)",
        );
        assert_infers(
            "relax.add",
            &[t(&[n.clone() + 1], F32), t(&[n.clone() + 1], F32)],
            &[],
            "R.Tensor((n + 1,), dtype=\"float32\")",
        );
    }

    #[test]
    fn comparisons_give_bool() {
        assert_infers(
            "relax.less",
            &[t(&[d(2)], F32), t(&[], F32)],
            &[],
            "R.Tensor((2,), dtype=\"bool\")",
        );
    }

    #[test]
    fn unknowns_propagate() {
        assert_infers(
            "relax.add",
            &[t(&[d(2)], F32), t(&[d(2)], VOID)],
            &[],
            "R.Tensor((2,))",
        );
        assert_infers(
            "relax.add",
            &[t(&[d(2)], F32), tn(-1, F32)],
            &[],
            "R.Tensor(dtype=\"float32\")",
        );
        assert_infers(
            "relax.add",
            &[tn(2, F32), tn(3, F32)],
            &[],
            "R.Tensor(dtype=\"float32\", ndim=3)",
        );
    }

    #[test]
    fn errors() {
        assert_fails(
            "relax.add",
            &[t(&[d(3), d(4)], F32), t(&[d(3), d(5)], F32)],
            &[],
            "add: shapes do not broadcast: x1 is (3, 4), x2 is (3, 5)",
        );
        assert_fails(
            "relax.subtract",
            &[t(&[d(3)], F32), t(&[d(3)], I64)],
            &[],
            "subtract: dtypes differ: x1 is float32, x2 is int64",
        );
        assert_fails(
            "relax.add",
            &[t(&[d(3)], F32), shape(&[d(3)])],
            &[],
            "add: x2 must be a tensor, found R.Shape([3])",
        );
        assert_fails(
            "relax.add",
            &[t(&[d(3)], F32)],
            &[],
            "add takes 2 arguments, but 1 was given",
        );
    }

    #[test]
    fn every_binary_op_broadcasts_symbolically_and_checks_dtypes() {
        for op in super::OPS {
            let n = sym("n");
            let out = if op.name.contains("equal")
                || op.name.contains("less")
                || op.name.contains("greater")
            {
                "bool"
            } else {
                "float32"
            };
            assert_infers(
                op.name,
                &[t(&[n.clone(), d(1)], F32), t(&[d(5)], F32)],
                &[],
                &format!("R.Tensor((n, 5), dtype=\"{out}\")"),
            );
            let short = op.name.trim_start_matches("relax.");
            assert_fails(
                op.name,
                &[t(&[d(2)], F32), t(&[d(3)], F32)],
                &[],
                &format!("{short}: shapes do not broadcast: x1 is (2,), x2 is (3,)"),
            );
            assert_fails(
                op.name,
                &[t(&[d(2)], F32), t(&[d(2)], I32)],
                &[],
                &format!("{short}: dtypes differ: x1 is float32, x2 is int32"),
            );
        }
    }
}
