//! Elementwise unary ops. The result has the input's shape.
//!
//! | ops | input dtype | result dtype |
//! |---|---|---|
//! | `negative`, `abs` | any (a kernel may refuse `bool`) | the input's |
//! | `sign`, `square`, `floor`, `ceil`, `round`, `trunc` | any numeric (the rounding ops are the identity on integers) | the input's |
//! | `exp`, `log`, `sqrt`, `rsqrt`, `tanh`, `sigmoid`, `erf`, `sin`, `cos`, `tan`, `asin`, `acos`, `atan`, `sinh`, `cosh`, `asinh`, `acosh`, `atanh` | float | the input's |
//! | `isnan`, `isinf`, `isfinite` | any numeric | `bool` |
//! | `logical_not` | `bool` | `bool` |
//! | `bitwise_not` | integer or `bool` | the input's |
//!
//! An unknown dtype passes every check (and stays unknown, except for the
//! ops whose result is `bool`).

use super::infer::{arg_name, error, tensor_arg};
use super::{Arity, OpInfo, OpPatternKind};
use crate::arith::Analyzer;
use crate::ir::{Call, StructInfo, StructInfoKind};
use relax_runtime::{DataType, Diagnostic};

/// Same StructInfo as the input tensor.
pub(crate) fn infer_same(call: &Call, _: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let x = tensor_arg(call, 0)?;
    Ok(StructInfo::new(StructInfoKind::Tensor(x.clone())))
}

/// Whether `d` is a signed or unsigned integer type, `bool` excluded.
pub(crate) fn is_integer(d: DataType) -> bool {
    d.is_integer() && !d.is_bool()
}

/// Checks that argument `i`, a tensor, has a dtype `ok` accepts (or an
/// unknown one); `what` names the accepted dtypes in the message.
pub(crate) fn check_dtype(
    call: &Call,
    i: usize,
    ok: fn(DataType) -> bool,
    code: &'static str,
    what: &str,
) -> Result<(), Diagnostic> {
    let x = tensor_arg(call, i)?;
    if x.dtype.is_void() || ok(x.dtype) {
        return Ok(());
    }
    Err(error(
        call,
        code,
        format!("{} must have {what}, found {}", arg_name(call, i), x.dtype),
    ))
}

/// Same StructInfo as the input, which must be of a float dtype if known.
pub(crate) fn infer_float(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    check_dtype(
        call,
        0,
        DataType::is_float,
        "op-dtype-not-float",
        "a float dtype",
    )?;
    infer_same(call, ana)
}

/// Same StructInfo as the input, which must be numeric (not `bool`).
fn infer_numeric(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    check_dtype(
        call,
        0,
        |d| d.is_float() || is_integer(d),
        "op-dtype-not-numeric",
        "a numeric dtype",
    )?;
    infer_same(call, ana)
}

/// The input's shape with dtype `bool`, the input numeric.
fn infer_numeric_to_bool(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    infer_numeric(call, ana)?;
    let mut x = tensor_arg(call, 0)?.clone();
    x.dtype = DataType::bool();
    Ok(StructInfo::new(StructInfoKind::Tensor(x)))
}

/// Same StructInfo as the input, which must be `bool`.
fn infer_bool(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    check_dtype(
        call,
        0,
        DataType::is_bool,
        "op-dtype-not-bool",
        "dtype bool",
    )?;
    infer_same(call, ana)
}

/// Same StructInfo as the input, which must be an integer or `bool`.
fn infer_bits(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    check_dtype(
        call,
        0,
        |d| d.is_integer(),
        "op-dtype-not-integer",
        "an integer or bool dtype",
    )?;
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
    "relax.erf" => infer_float,
    "relax.sin" => infer_float,
    "relax.cos" => infer_float,
    "relax.tan" => infer_float,
    "relax.asin" => infer_float,
    "relax.acos" => infer_float,
    "relax.atan" => infer_float,
    "relax.sinh" => infer_float,
    "relax.cosh" => infer_float,
    "relax.asinh" => infer_float,
    "relax.acosh" => infer_float,
    "relax.atanh" => infer_float,
    "relax.floor" => infer_numeric,
    "relax.ceil" => infer_numeric,
    "relax.round" => infer_numeric,
    "relax.trunc" => infer_numeric,
    "relax.sign" => infer_numeric,
    "relax.square" => infer_numeric,
    "relax.isnan" => infer_numeric_to_bool,
    "relax.isinf" => infer_numeric_to_bool,
    "relax.isfinite" => infer_numeric_to_bool,
    "relax.logical_not" => infer_bool,
    "relax.bitwise_not" => infer_bits,
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
            let short = op.name.trim_start_matches("relax.");
            let to_bool = matches!(short, "isnan" | "isinf" | "isfinite");
            // The dtype each op takes, and one it refuses with its message.
            let (ok, bad, msg) = match short {
                "logical_not" => (BOOL, I64, "dtype bool"),
                "bitwise_not" => (I64, F32, "an integer or bool dtype"),
                "negative" | "abs" => (F32, F32, ""),
                "sign" | "square" | "floor" | "ceil" | "round" | "trunc" | "isnan" | "isinf"
                | "isfinite" => (F32, BOOL, "a numeric dtype"),
                _ => (F32, I64, "a float dtype"),
            };
            let out = if to_bool { BOOL } else { ok };
            let n = sym("n");
            assert_infers(
                op.name,
                &[t(&[n.clone(), d(4)], ok)],
                &[],
                &format!("R.Tensor((n, 4), dtype=\"{out}\")"),
            );
            if msg.is_empty() {
                continue;
            }
            assert_fails(
                op.name,
                &[t(&[d(2)], bad)],
                &[],
                &format!("{short}: x must have {msg}, found {bad}"),
            );
            if msg == "a numeric dtype" {
                let out = if to_bool { BOOL } else { I64 };
                assert_infers(
                    op.name,
                    &[t(&[d(2)], I64)],
                    &[],
                    &format!("R.Tensor((2,), dtype=\"{out}\")"),
                );
            }
        }
    }

    #[test]
    fn predicates_give_bool_of_unknown_dtypes_too() {
        assert_infers(
            "relax.isnan",
            &[tn(2, VOID)],
            &[],
            "R.Tensor(dtype=\"bool\", ndim=2)",
        );
        assert_infers("relax.floor", &[tn(-1, VOID)], &[], "R.Tensor");
    }
}
