//! Broadcasting binary ops. NumPy broadcasting with symbolic dims; dtypes
//! must agree.
//!
//! | ops | operand dtype | result dtype |
//! |---|---|---|
//! | `add`, `subtract`, `multiply`, `divide`, `power`, `maximum`, `minimum`, `floor_divide`, `floor_mod`, `mod` | any | the operands' |
//! | `equal`, `not_equal`, `less`, `less_equal`, `greater`, `greater_equal` | any | `bool` |
//! | `logical_and`, `logical_or`, `logical_xor` | `bool` | `bool` |
//! | `bitwise_and`, `bitwise_or`, `bitwise_xor` | integer or `bool` | the operands' |
//! | `left_shift`, `right_shift` | integer | the operands' |
//!
//! An operand may be a `R.Prim` (a PrimValue: a parameter `s: R.Prim("float32")`
//! or `T.float32`, `R.prim_value(…)`), TVM's scalar operand: it broadcasts
//! as a 0-d tensor of its dtype, so `R.multiply(A, s)` with `A` a
//! `R.Tensor((m, 16), "float32")` is a `R.Tensor((m, 16), "float32")`,
//! and two `R.Prim`s give a `R.Prim` of the result dtype (without a value,
//! as TVM's). Its dtype follows the rules above as a tensor's does.
//!
//! `floor_divide` and `floor_mod` round the quotient toward negative
//! infinity (Python's `//` and `%`: the remainder has the divisor's sign);
//! `mod` is C's `fmod` (truncated quotient: the remainder has the
//! dividend's sign).

use super::infer::{arg_name, binary_broadcast, error, tensor_or_prim_arg};
use super::unary::is_integer;
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

/// Both operands pass `ok` (`what` names the accepted dtypes).
fn check_both(
    call: &Call,
    ok: fn(DataType) -> bool,
    code: &'static str,
    what: &str,
) -> Result<(), Diagnostic> {
    for i in 0..2 {
        let dtype = tensor_or_prim_arg(call, i)?.dtype;
        if !dtype.is_void() && !ok(dtype) {
            return Err(error(
                call,
                code,
                format!("{} must have {what}, found {dtype}", arg_name(call, i)),
            ));
        }
    }
    Ok(())
}

fn infer_logical(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    check_both(call, DataType::is_bool, "op-dtype-not-bool", "dtype bool")?;
    binary_broadcast(call, ana, Some(DataType::bool()))
}

fn infer_bitwise(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    check_both(
        call,
        DataType::is_integer,
        "op-dtype-not-integer",
        "an integer or bool dtype",
    )?;
    binary_broadcast(call, ana, None)
}

fn infer_shift(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    check_both(call, is_integer, "op-dtype-not-integer", "an integer dtype")?;
    binary_broadcast(call, ana, None)
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
    "relax.floor_divide" => infer_arith,
    "relax.floor_mod" => infer_arith,
    "relax.mod" => infer_arith,
    "relax.logical_and" => infer_logical,
    "relax.logical_or" => infer_logical,
    "relax.logical_xor" => infer_logical,
    "relax.bitwise_and" => infer_bitwise,
    "relax.bitwise_or" => infer_bitwise,
    "relax.bitwise_xor" => infer_bitwise,
    "relax.left_shift" => infer_shift,
    "relax.right_shift" => infer_shift,
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
            "add: x2 must be a tensor or a R.Prim, found R.Shape([3])",
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
            let short = op.name.trim_start_matches("relax.");
            // The operand dtype each op takes, one it refuses (with the
            // message), and the result dtype.
            let (dt, refused) = if short.starts_with("logical_") {
                (BOOL, Some((I32, "dtype bool")))
            } else if short.starts_with("bitwise_") {
                (I32, Some((F32, "an integer or bool dtype")))
            } else if short.ends_with("_shift") {
                (I32, Some((BOOL, "an integer dtype")))
            } else {
                (F32, None)
            };
            let out = if short.contains("equal")
                || short.contains("less")
                || short.contains("greater")
                || short.starts_with("logical_")
            {
                BOOL
            } else {
                dt
            };
            let n = sym("n");
            assert_infers(
                op.name,
                &[t(&[n.clone(), d(1)], dt), t(&[d(5)], dt)],
                &[],
                &format!("R.Tensor((n, 5), dtype=\"{out}\")"),
            );
            assert_fails(
                op.name,
                &[t(&[d(2)], dt), t(&[d(3)], dt)],
                &[],
                &format!("{short}: shapes do not broadcast: x1 is (2,), x2 is (3,)"),
            );
            let other = if dt == I64 { I32 } else { I64 };
            let other = if dt == F32 { I32 } else { other };
            if refused.is_none() {
                assert_fails(
                    op.name,
                    &[t(&[d(2)], dt), t(&[d(2)], other)],
                    &[],
                    &format!("{short}: dtypes differ: x1 is {dt}, x2 is {other}"),
                );
            }
            if let Some((bad, what)) = refused {
                assert_fails(
                    op.name,
                    &[t(&[d(2)], dt), t(&[d(2)], bad)],
                    &[],
                    &format!("{short}: x2 must have {what}, found {bad}"),
                );
                if short != "left_shift" && short != "right_shift" {
                    continue;
                }
                assert_fails(
                    op.name,
                    &[t(&[d(2)], dt), t(&[d(2)], I64)],
                    &[],
                    &format!("{short}: dtypes differ: x1 is int32, x2 is int64"),
                );
            }
        }
    }

    #[test]
    fn prim_operands_are_scalars() {
        use crate::ir::{PrimExpr, StructInfo};
        let p = |dtype| arg(StructInfo::prim(dtype));
        let m = sym("m");
        assert_infers(
            "relax.multiply",
            &[t(&[m.clone(), d(16)], F32), p(F32)],
            &[],
            "R.Tensor((m, 16), dtype=\"float32\")",
        );
        assert_infers(
            "relax.subtract",
            &[p(F32), t(&[d(3)], F32)],
            &[],
            "R.Tensor((3,), dtype=\"float32\")",
        );
        assert_infers(
            "relax.less",
            &[tn(2, F32), p(F32)],
            &[],
            "R.Tensor(dtype=\"bool\", ndim=2)",
        );
        assert_infers(
            "relax.add",
            &[t(&[], I64), p(I64)],
            &[],
            "R.Tensor((), dtype=\"int64\")",
        );
        // Two Prims give a Prim, also when their values are known.
        assert_infers("relax.add", &[p(F32), p(F32)], &[], "R.Prim(\"float32\")");
        let n = arg(StructInfo::prim_value(PrimExpr::int(4)));
        assert_infers(
            "relax.multiply",
            &[n.clone(), p(I64)],
            &[],
            "R.Prim(\"int64\")",
        );
        assert_infers("relax.greater_equal", &[n, p(I64)], &[], "R.Prim(\"bool\")");
        assert_infers(
            "relax.logical_or",
            &[p(BOOL), t(&[d(2)], BOOL)],
            &[],
            "R.Tensor((2,), dtype=\"bool\")",
        );
        assert_fails(
            "relax.multiply",
            &[t(&[d(3)], F32), p(I64)],
            &[],
            "multiply: dtypes differ: x1 is float32, x2 is int64",
        );
        assert_fails(
            "relax.left_shift",
            &[t(&[d(3)], I32), p(F32)],
            &[],
            "left_shift: x2 must have an integer dtype, found float32",
        );
        assert_fails(
            "relax.add",
            &[t(&[d(3)], F32), arg(StructInfo::object())],
            &[],
            "add: x2 must be a tensor or a R.Prim, found R.Object",
        );
    }

    #[test]
    fn bitwise_ops_take_bools_too() {
        assert_infers(
            "relax.bitwise_xor",
            &[t(&[d(2)], BOOL), t(&[], BOOL)],
            &[],
            "R.Tensor((2,), dtype=\"bool\")",
        );
        assert_infers(
            "relax.logical_and",
            &[t(&[d(2)], VOID), t(&[], BOOL)],
            &[],
            "R.Tensor((2,), dtype=\"bool\")",
        );
    }
}
