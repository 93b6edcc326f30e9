//! Calls into lower levels and shape access: `call_tir` (a PrimFunc in
//! destination-passing style), `call_dps_packed` (a packed function in
//! destination-passing style, assumed pure), `call_pure_packed` (a packed
//! call declared pure) and `shape_of`.
//!
//! `R.call_packed("f", …)` is not an op: as in TVM it is a `Call` whose callee
//! is an `ExternFunc`, impure, with its result StructInfo in `sinfo_args`.

use super::infer::{arg_name, arg_sinfo, error, tensor_arg};
use super::{Arity, OpInfo, OpPatternKind};
use crate::arith::Analyzer;
use crate::ir::{Call, StructInfo};
use relax_runtime::Diagnostic;

/// The declared outputs: one StructInfo, or a tuple of several.
fn infer_dps(call: &Call, _: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let s = arg_sinfo(call, 1)?;
    if s.as_tuple().is_none() {
        return Err(error(
            call,
            "op-arg-not-tuple",
            format!(
                "{} must be a tuple of arguments, found {s}",
                arg_name(call, 1)
            ),
        ));
    }
    if let Some(bad) = call
        .sinfo_args
        .iter()
        .find(|s| s.as_tensor().is_none() && s.as_tuple().is_none())
    {
        return Err(error(
            call,
            "op-out-sinfo",
            format!("each output must be a tensor, found {bad}"),
        ));
    }
    match call.sinfo_args.as_slice() {
        [] => Err(error(
            call,
            "op-out-sinfo",
            "the output StructInfo (out_sinfo) is missing",
        )),
        [one] => Ok(one.clone()),
        many => Ok(StructInfo::tuple(many.to_vec())),
    }
}

/// `call_pure_packed(func, args…)`: a packed call declared pure; its result
/// is given by `sinfo_args` (TVM's `default_derive`).
fn infer_pure_packed(call: &Call, _: &Analyzer) -> Result<StructInfo, Diagnostic> {
    Ok(match call.sinfo_args.as_slice() {
        [] => StructInfo::object(),
        [one] => one.clone(),
        many => StructInfo::tuple(many.to_vec()),
    })
}

fn infer_shape_of(call: &Call, _: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let x = tensor_arg(call, 0)?;
    Ok(match x.shape_values() {
        Some(v) => StructInfo::shape(v.to_vec()),
        None => StructInfo::shape_ndim(x.ndim),
    })
}

/// The base ops.
pub const OPS: &[OpInfo] = &[
    OpInfo {
        name: "relax.call_tir",
        args: &["func", "args", "tir_vars"],
        arity: Arity::AtLeast(2),
        attrs: &[],
        infer_struct_info: infer_dps,
        purity: true,
        pattern: OpPatternKind::Opaque,
    },
    OpInfo {
        name: "relax.call_dps_packed",
        args: &["func", "args"],
        arity: Arity::Exact(2),
        attrs: &[],
        infer_struct_info: infer_dps,
        purity: true,
        pattern: OpPatternKind::Opaque,
    },
    OpInfo {
        name: "relax.call_pure_packed",
        args: &["func", "args"],
        arity: Arity::AtLeast(1),
        attrs: &[],
        infer_struct_info: infer_pure_packed,
        purity: true,
        pattern: OpPatternKind::Opaque,
    },
    OpInfo {
        name: "relax.shape_of",
        args: &["x"],
        arity: Arity::Exact(1),
        attrs: &[],
        infer_struct_info: infer_shape_of,
        purity: true,
        pattern: OpPatternKind::Opaque,
    },
];

#[cfg(test)]
mod tests {
    use crate::arith::Analyzer;
    use crate::ir::{Attrs, Expr, GlobalVar, StructInfo};
    use crate::op::testing::*;

    fn call_tir(out: Vec<StructInfo>) -> Result<StructInfo, String> {
        let f = Expr::global_var(GlobalVar::new("f"));
        let call = Expr::call_full(
            Expr::op("relax.call_tir"),
            vec![f, Expr::tuple(vec![t(&[d(2)], F32)])],
            Attrs::new(),
            out,
        );
        crate::op::infer_call(call.as_call().unwrap(), &Analyzer::new())
            .unwrap()
            .map_err(|d| d.message)
    }

    #[test]
    fn call_tir_returns_out_sinfo() {
        let o = StructInfo::tensor(vec![d(2)], F32);
        assert_eq!(call_tir(vec![o.clone()]).unwrap(), o);
        assert_eq!(
            call_tir(vec![o.clone(), o.clone()]).unwrap(),
            StructInfo::tuple(vec![o.clone(), o])
        );
        assert_eq!(
            call_tir(vec![]).unwrap_err(),
            "call_tir: the output StructInfo (out_sinfo) is missing"
        );
        assert_eq!(
            call_tir(vec![StructInfo::object()]).unwrap_err(),
            "call_tir: each output must be a tensor, found R.Object"
        );
    }

    #[test]
    fn shape_of() {
        let n = sym("n");
        assert_infers(
            "relax.shape_of",
            &[t(&[n, d(3)], F32)],
            &[],
            "R.Shape([n, 3])",
        );
        assert_infers("relax.shape_of", &[tn(2, F32)], &[], "R.Shape(ndim=2)");
    }
}
