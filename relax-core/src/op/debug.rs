//! The two ops a model is debugged with, TVM's `relax.print` and
//! `relax.assert_op` (kept in TVM's `op.cc` with the other builtins):
//!
//! - `R.print(*values, format="")`: prints the values, through the
//!   Python-style format string when it is not empty (`{}` the next value,
//!   `{0}` a value by position, `{{` and `}}` braces), else separated by
//!   commas. The call's arguments are `[format, *values]`, the format a
//!   `StringImm`.
//! - `R.assert_op(condition, *values, format="")`: an error whose message
//!   is the formatted values when `condition`, a boolean scalar (a tensor of
//!   rank 0 or a `R.Prim("bool")`), is false. The arguments are
//!   `[condition, format, *values]`.
//!
//! Both are impure (dead-code elimination keeps them; a dataflow block may
//! not hold them) and return the empty tuple. They are never legalized:
//! the VM runs their kernels, as TVM's VM calls `relax.run.print` and
//! `relax.run.assert_op`.

use super::infer::{arg_name, arg_sinfo, error};
use super::{Arity, OpInfo, OpPatternKind};
use crate::arith::Analyzer;
use crate::ir::{Call, Expr, ExprKind, StructInfo, StructInfoKind, UNKNOWN_NDIM};
use relax_runtime::Diagnostic;

/// An error unless argument `i` is a string (`R.str("…")`).
fn format_arg(call: &Call, i: usize) -> Result<(), Diagnostic> {
    match call.args.get(i).map(|a| a.kind()) {
        Some(ExprKind::StringImm(_)) => Ok(()),
        _ => Err(error(
            call,
            "op-arg-type",
            format!(
                "{} must be a string (`R.str(\"…\")`), found {}",
                arg_name(call, i),
                call.args
                    .get(i)
                    .map_or("nothing".to_string(), |a| a.to_string())
            ),
        )),
    }
}

fn infer_print(call: &Call, _: &Analyzer) -> Result<StructInfo, Diagnostic> {
    format_arg(call, 0)?;
    Ok(StructInfo::tuple(vec![]))
}

fn infer_assert_op(call: &Call, _: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let cond = arg_sinfo(call, 0)?;
    let boolean = match cond.kind() {
        StructInfoKind::Tensor(t) => {
            (t.dtype.is_bool() || t.dtype.is_void()) && (t.ndim == 0 || t.ndim == UNKNOWN_NDIM)
        }
        StructInfoKind::Prim(p) => p.dtype.is_bool() || p.dtype.is_void(),
        StructInfoKind::Object => true,
        _ => false,
    };
    if !boolean {
        return Err(error(
            call,
            "op-arg-type",
            format!(
                "{} must be a boolean scalar, found {cond}",
                arg_name(call, 0)
            ),
        ));
    }
    format_arg(call, 1)?;
    Ok(StructInfo::tuple(vec![]))
}

/// The call of `relax.print` or `relax.assert_op` (`op`, without the
/// `relax.` prefix) on `values` as written, the condition first for
/// `assert_op`: the format goes first, after the condition, as TVM orders
/// the arguments. `None` for an `assert_op` without a condition.
pub fn call(op: &str, format: Expr, values: Vec<Expr>) -> Option<Expr> {
    let mut values = values.into_iter();
    let args: Vec<Expr> = match op {
        "assert_op" => [values.next()?, format].into_iter().chain(values).collect(),
        _ => std::iter::once(format).chain(values).collect(),
    };
    Some(Expr::call_full(
        Expr::op(&format!("relax.{op}")),
        args,
        crate::ir::Attrs::new(),
        vec![],
    ))
}

/// The debugging ops.
pub const OPS: &[OpInfo] = &[
    OpInfo {
        name: "relax.print",
        args: &["format", "values"],
        arity: Arity::AtLeast(1),
        attrs: &[],
        infer_struct_info: infer_print,
        purity: false,
        pattern: OpPatternKind::Opaque,
    },
    OpInfo {
        name: "relax.assert_op",
        args: &["condition", "format", "values"],
        arity: Arity::AtLeast(2),
        attrs: &[],
        infer_struct_info: infer_assert_op,
        purity: false,
        pattern: OpPatternKind::Opaque,
    },
];

#[cfg(test)]
mod tests {
    use crate::arith::Analyzer;
    use crate::ir::{Attrs, Expr, StructInfo};
    use crate::op::testing::*;

    fn infer(op: &str, args: Vec<Expr>) -> Result<StructInfo, String> {
        let call = Expr::call_full(Expr::op(op), args, Attrs::new(), vec![]);
        crate::op::infer_call(call.as_call().unwrap(), &Analyzer::new())
            .unwrap()
            .map_err(|d| d.message)
    }

    #[test]
    fn print_returns_the_empty_tuple_and_needs_a_string_format() {
        let x = t(&[d(2)], F32);
        let got = infer("relax.print", vec![Expr::string("x = {}"), x.clone()]).unwrap();
        assert_eq!(got, StructInfo::tuple(vec![]));
        let got = infer("relax.print", vec![Expr::string("")]).unwrap();
        assert_eq!(got, StructInfo::tuple(vec![]));
        let err = infer("relax.print", vec![x.clone(), x]).unwrap_err();
        assert!(err.contains("format must be a string"), "{err}");
    }

    #[test]
    fn assert_op_needs_a_boolean_scalar_condition() {
        let cond = t(&[], BOOL);
        let got = infer(
            "relax.assert_op",
            vec![cond, Expr::string("bad {}"), t(&[d(3)], F32)],
        )
        .unwrap();
        assert_eq!(got, StructInfo::tuple(vec![]));
        let prim = Expr::prim_value(crate::ir::PrimExpr::bool(true));
        assert!(infer("relax.assert_op", vec![prim, Expr::string("")]).is_ok());
        let err = infer("relax.assert_op", vec![t(&[d(2)], BOOL), Expr::string("")]).unwrap_err();
        assert!(err.contains("must be a boolean scalar"), "{err}");
        let err = infer("relax.assert_op", vec![t(&[], F32), Expr::string("")]).unwrap_err();
        assert!(err.contains("must be a boolean scalar"), "{err}");
    }

    /// TVMScript in, the same text out, and the VM runs both ops: the
    /// print passes, the assertion fails with its formatted message.
    #[test]
    fn print_and_assert_op_parse_print_and_run() {
        use crate::backend::{build, Target};
        use relax_runtime::{Tensor, Value, VirtualMachine};
        let text = r#"
@I.ir_module
class Module:
    @R.function(pure=False)
    def main(x: R.Tensor((2,), dtype="float32"), ok: R.Tensor((), dtype="bool")) -> R.Tensor((2,), dtype="float32"):
        R.print(x, format=R.str("x = {}"))
        R.assert_op(ok, x, format=R.str("not ok: {}"))
        y: R.Tensor((2,), dtype="float32") = R.add(x, x)
        return y
"#;
        let m: crate::ir::IRModule = text.parse().unwrap();
        let printed = m.to_string();
        assert!(
            printed.contains(r#"R.print(x, format=R.str("x = {}"))"#),
            "{printed}"
        );
        assert!(
            printed.contains(r#"R.assert_op(ok, x, format=R.str("not ok: {}"))"#),
            "{printed}"
        );
        let again: crate::ir::IRModule = printed.parse().unwrap();
        crate::ir::structural_equal::structural_equal_report(&m, &again).unwrap();
        let exec = build(&m, &Target::tir_interpreter()).unwrap();
        let vm = VirtualMachine::new(&exec);
        let x = Value::Tensor(Tensor::from_vec(&[2], vec![1.0f32, 2.0]).unwrap());
        let flag = |b: bool| Value::Tensor(Tensor::from_vec(&[], vec![b]).unwrap());
        let y = vm.call("main", &[x.clone(), flag(true)]).unwrap();
        assert_eq!(y.as_tensor().unwrap().to_vec::<f32>().unwrap(), [2.0, 4.0]);
        let err = vm.call("main", &[x, flag(false)]).unwrap_err().to_string();
        assert!(err.contains("not ok: "), "{err}");
    }
}
