//! Calls into lower levels and shape access: `call_tir` (a PrimFunc in
//! destination-passing style), `call_tir_inplace` (a PrimFunc that writes
//! some of its results into its arguments, named by `inplace_indices`: per
//! output, the argument it is written into, or -1 for a fresh output; the
//! in-place outputs have their arguments' StructInfo), `call_dps_packed` (a packed function in
//! destination-passing style, assumed pure), `call_pure_packed` (a packed
//! call declared pure), `shape_of`, and the conversions between shape
//! values and tensors, `shape_to_tensor` (a shape as a 1-d `int64` tensor)
//! and `tensor_to_shape` (a 1-d integer tensor of known length as a shape
//! value whose dims are known only at run time; bind them to variables with
//! `match_cast`); closures: `make_closure` (a
//! module function with leading arguments captured) and `invoke_closure`
//! (a call of one, its result given by `sinfo_args`), which `LambdaLift`
//! makes for local functions used as values.
//!
//! `R.call_packed("f", …)` is not an op: as in TVM it is a `Call` whose callee
//! is an `ExternFunc`, impure, with its result StructInfo in `sinfo_args`.

use super::attr::{AttrDefault, AttrSpec, AttrType};
use super::infer::{arg_name, arg_sinfo, attr_ints, error, tensor_arg};
use super::{Arity, OpInfo, OpPatternKind};
use crate::arith::Analyzer;
use crate::ir::{Call, PrimExpr, StructInfo};
use relax_runtime::{DataType, Diagnostic};

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

/// `call_tir_inplace(func, args, tir_vars?)` with `inplace_indices`: as
/// TVM's `InferStructInfoCallTIRInplace`, the declared outputs (as
/// `call_tir`), after checking that there is one index per output, that
/// each is -1 or an argument's position, that no argument is named twice,
/// that at least one output is in place (else the call is a `call_tir`),
/// and that each in-place output has its argument's dtype and shape.
fn infer_call_tir_inplace(call: &Call, analyzer: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let result = infer_dps(call, analyzer)?;
    let args = arg_sinfo(call, 1)?
        .as_tuple()
        .expect("infer_dps checked the arguments are a tuple");
    // One StructInfo per output; a single tuple lists several.
    let outputs = match call.sinfo_args.as_slice() {
        [one] => one
            .as_tuple()
            .map_or_else(|| vec![one.clone()], <[_]>::to_vec),
        many => many.to_vec(),
    };
    let Some(indices) = attr_ints(call, "inplace_indices") else {
        return Err(error(
            call,
            "op-missing-attr",
            "inplace_indices must be a list of integers (one per output, -1 for a fresh output)",
        ));
    };
    if indices.len() != outputs.len() {
        return Err(error(
            call,
            "op-inplace-indices",
            format!(
                "inplace_indices must have one entry per output: expected {}, found {}",
                outputs.len(),
                indices.len()
            ),
        ));
    }
    if indices.iter().all(|&i| i == -1) {
        return Err(error(
            call,
            "op-inplace-indices",
            "inplace_indices must name at least one argument (all are -1: use call_tir)",
        ));
    }
    for (k, (&i, out)) in indices.iter().zip(&outputs).enumerate() {
        if i == -1 {
            continue;
        }
        if i < 0 || i as usize >= args.len() {
            return Err(error(
                call,
                "op-inplace-indices",
                format!(
                    "inplace_indices[{k}] must be -1 or an argument index in [0, {}), found {i}",
                    args.len()
                ),
            ));
        }
        if let Some(j) = indices[..k].iter().position(|&e| e == i) {
            return Err(error(
                call,
                "op-inplace-indices",
                format!("inplace_indices[{k}] repeats argument {i} (already inplace_indices[{j}])"),
            ));
        }
        let arg = &args[i as usize];
        let mismatch = || {
            error(
                call,
                "op-inplace-sinfo",
                format!("output {k} is written in place into argument {i}, so it must have that argument's StructInfo: expected {arg}, found {out}"),
            )
        };
        let (Some(a), Some(o)) = (arg.as_tensor(), out.as_tensor()) else {
            return Err(mismatch());
        };
        if a.dtype != o.dtype || a.ndim != o.ndim {
            return Err(mismatch());
        }
        if let (Some(ad), Some(od)) = (a.shape_values(), o.shape_values()) {
            if ad
                .iter()
                .zip(od)
                .any(|(x, y)| !analyzer.can_prove_equal(x, y))
            {
                return Err(mismatch());
            }
        }
    }
    Ok(result)
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

/// `make_closure(f, (captured…))`: `f`'s signature without the captured
/// leading parameters.
fn infer_make_closure(call: &Call, _: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let f = arg_sinfo(call, 0)?;
    let Some(func) = f.as_func() else {
        return Err(error(
            call,
            "op-arg-not-function",
            format!("{} must be a function, found {f}", arg_name(call, 0)),
        ));
    };
    let captured = arg_sinfo(call, 1)?;
    let Some(fields) = captured.as_tuple() else {
        return Err(error(
            call,
            "op-arg-not-tuple",
            format!(
                "{} must be a tuple of the captured values, found {captured}",
                arg_name(call, 1)
            ),
        ));
    };
    let Some(params) = &func.params else {
        return Ok(f.clone());
    };
    if fields.len() > params.len() {
        return Err(error(
            call,
            "op-arg-count",
            format!(
                "{} captures {} values but the function has {} parameters",
                arg_name(call, 0),
                fields.len(),
                params.len()
            ),
        ));
    }
    Ok(StructInfo::func(
        params[fields.len()..].to_vec(),
        func.ret.clone(),
        func.purity,
    ))
}

/// `invoke_closure(f, (args…), sinfo_args=[ret])`: the declared result.
fn infer_invoke_closure(call: &Call, _: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let f = arg_sinfo(call, 0)?;
    if f.as_func().is_none() && !matches!(f.kind(), crate::ir::StructInfoKind::Object) {
        return Err(error(
            call,
            "op-arg-not-function",
            format!("{} must be a closure, found {f}", arg_name(call, 0)),
        ));
    }
    let args = arg_sinfo(call, 1)?;
    if args.as_tuple().is_none() {
        return Err(error(
            call,
            "op-arg-not-tuple",
            format!(
                "{} must be a tuple of arguments, found {args}",
                arg_name(call, 1)
            ),
        ));
    }
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

fn infer_shape_to_tensor(call: &Call, _: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let s = arg_sinfo(call, 0)?;
    match s.as_shape() {
        Some(sh) if sh.ndim >= 0 => Ok(StructInfo::tensor(
            vec![PrimExpr::int(i64::from(sh.ndim))],
            DataType::i64(),
        )),
        Some(_) => Ok(StructInfo::tensor_ndim(1, DataType::i64())),
        None => Err(error(
            call,
            "op-arg-not-shape",
            format!("{} must be a shape, found {s}", arg_name(call, 0)),
        )),
    }
}

fn infer_tensor_to_shape(call: &Call, _: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let x = tensor_arg(call, 0)?;
    if !x.dtype.is_void() && !x.dtype.is_integer() {
        return Err(error(
            call,
            "op-dtype-not-integer",
            format!(
                "{} must hold integers, found {}",
                arg_name(call, 0),
                x.dtype
            ),
        ));
    }
    if !x.is_unknown_ndim() && x.ndim != 1 {
        return Err(error(
            call,
            "op-rank",
            format!(
                "{} must be a 1-d tensor, found rank {}",
                arg_name(call, 0),
                x.ndim
            ),
        ));
    }
    let len = x
        .shape_values()
        .and_then(|d| d.first().and_then(PrimExpr::as_int));
    Ok(match len {
        Some(n) => StructInfo::shape_ndim(n as i32),
        None => StructInfo::shape_ndim(-1),
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
        name: "relax.call_tir_inplace",
        args: &["func", "args", "tir_vars"],
        arity: Arity::AtLeast(2),
        attrs: &[AttrSpec::new(
            "inplace_indices",
            AttrType::IntArray,
            AttrDefault::Required,
        )],
        infer_struct_info: infer_call_tir_inplace,
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
        name: "relax.make_closure",
        args: &["func", "args"],
        arity: Arity::Exact(2),
        attrs: &[],
        infer_struct_info: infer_make_closure,
        purity: true,
        pattern: OpPatternKind::Opaque,
    },
    OpInfo {
        name: "relax.invoke_closure",
        args: &["closure", "args"],
        arity: Arity::Exact(2),
        attrs: &[],
        infer_struct_info: infer_invoke_closure,
        // As in TVM: the closure may do anything.
        purity: false,
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
    OpInfo {
        name: "relax.shape_to_tensor",
        args: &["shape"],
        arity: Arity::Exact(1),
        attrs: &[],
        infer_struct_info: infer_shape_to_tensor,
        purity: true,
        pattern: OpPatternKind::Opaque,
    },
    OpInfo {
        name: "relax.tensor_to_shape",
        args: &["x"],
        arity: Arity::Exact(1),
        attrs: &[],
        infer_struct_info: infer_tensor_to_shape,
        purity: true,
        pattern: OpPatternKind::Opaque,
    },
];

#[cfg(test)]
mod tests {
    use crate::arith::Analyzer;
    use crate::ir::{AttrValue, Attrs, Expr, GlobalVar, StructInfo};
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

    fn call_tir_inplace(
        args: Vec<Expr>,
        out: Vec<StructInfo>,
        indices: &[i64],
    ) -> Result<StructInfo, String> {
        let f = Expr::global_var(GlobalVar::new("f"));
        let attrs = Attrs::from_pairs(vec![(
            "inplace_indices".to_string(),
            AttrValue::Array(indices.iter().map(|&i| AttrValue::Int(i)).collect()),
        )]);
        let call = Expr::call_full(
            Expr::op("relax.call_tir_inplace"),
            vec![f, Expr::tuple(args)],
            attrs,
            out,
        );
        crate::op::infer_call(call.as_call().unwrap(), &Analyzer::new())
            .unwrap()
            .map_err(|d| d.message)
    }

    #[test]
    fn call_tir_inplace_returns_out_sinfo_matching_its_arguments() {
        let n = sym("n");
        let x = StructInfo::tensor(vec![n.clone(), d(3)], F32);
        let y = StructInfo::tensor(vec![], F32);
        let fresh = StructInfo::tensor(vec![d(4)], I32);
        let args = || vec![t(&[n.clone(), d(3)], F32), t(&[], F32)];
        assert_eq!(call_tir_inplace(args(), vec![x.clone()], &[0]).unwrap(), x);
        // One output in place, one fresh; the same as one tuple StructInfo.
        let both = StructInfo::tuple(vec![x.clone(), fresh.clone()]);
        assert_eq!(
            call_tir_inplace(args(), vec![x.clone(), fresh.clone()], &[0, -1]).unwrap(),
            both
        );
        assert_eq!(
            call_tir_inplace(args(), vec![both.clone()], &[0, -1]).unwrap(),
            both
        );
        assert_eq!(
            call_tir_inplace(args(), vec![fresh.clone(), y.clone()], &[-1, 1]).unwrap(),
            StructInfo::tuple(vec![fresh.clone(), y.clone()])
        );
    }

    #[test]
    fn call_tir_inplace_errors_name_the_index() {
        let n = sym("n");
        let x = StructInfo::tensor(vec![n.clone(), d(3)], F32);
        let args = || vec![t(&[n.clone(), d(3)], F32), t(&[n.clone(), d(3)], F32)];
        assert_eq!(
            call_tir_inplace(args(), vec![x.clone()], &[0, 1]).unwrap_err(),
            "call_tir_inplace: inplace_indices must have one entry per output: expected 1, found 2"
        );
        assert_eq!(
            call_tir_inplace(args(), vec![x.clone()], &[-1]).unwrap_err(),
            "call_tir_inplace: inplace_indices must name at least one argument (all are -1: use call_tir)"
        );
        assert_eq!(
            call_tir_inplace(args(), vec![x.clone()], &[2]).unwrap_err(),
            "call_tir_inplace: inplace_indices[0] must be -1 or an argument index in [0, 2), found 2"
        );
        assert_eq!(
            call_tir_inplace(args(), vec![x.clone()], &[-2]).unwrap_err(),
            "call_tir_inplace: inplace_indices[0] must be -1 or an argument index in [0, 2), found -2"
        );
        assert_eq!(
            call_tir_inplace(args(), vec![x.clone(), x.clone()], &[1, 1]).unwrap_err(),
            "call_tir_inplace: inplace_indices[1] repeats argument 1 (already inplace_indices[0])"
        );
        assert_eq!(
            call_tir_inplace(
                args(),
                vec![StructInfo::tensor(vec![n.clone(), d(3)], I32)],
                &[0]
            )
            .unwrap_err(),
            "call_tir_inplace: output 0 is written in place into argument 0, so it must have \
             that argument's StructInfo: expected R.Tensor((n, 3), dtype=\"float32\"), \
             found R.Tensor((n, 3), dtype=\"int32\")"
        );
        assert_eq!(
            call_tir_inplace(
                args(),
                vec![StructInfo::tensor(vec![d(3), d(3)], F32)],
                &[1]
            )
            .unwrap_err(),
            "call_tir_inplace: output 0 is written in place into argument 1, so it must have \
             that argument's StructInfo: expected R.Tensor((n, 3), dtype=\"float32\"), \
             found R.Tensor((3, 3), dtype=\"float32\")"
        );
        let f = Expr::global_var(GlobalVar::new("f"));
        let call = Expr::call_full(
            Expr::op("relax.call_tir_inplace"),
            vec![f, Expr::tuple(args())],
            Attrs::new(),
            vec![x],
        );
        assert_eq!(
            crate::op::infer_call(call.as_call().unwrap(), &Analyzer::new())
                .unwrap()
                .unwrap_err()
                .message,
            "call_tir_inplace: inplace_indices must be a list of integers (one per output, -1 for a fresh output)"
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

    #[test]
    fn shape_to_tensor_and_back() {
        let n = sym("n");
        assert_infers(
            "relax.shape_to_tensor",
            &[shape(&[n, d(3)])],
            &[],
            "R.Tensor((2,), dtype=\"int64\")",
        );
        assert_fails(
            "relax.shape_to_tensor",
            &[t(&[d(2)], I64)],
            &[],
            "shape_to_tensor: shape must be a shape, found R.Tensor((2,), dtype=\"int64\")",
        );
        assert_infers(
            "relax.tensor_to_shape",
            &[t(&[d(3)], I64)],
            &[],
            "R.Shape(ndim=3)",
        );
        assert_fails(
            "relax.tensor_to_shape",
            &[t(&[d(3)], F32)],
            &[],
            "tensor_to_shape: x must hold integers, found float32",
        );
        assert_fails(
            "relax.tensor_to_shape",
            &[t(&[d(3), d(1)], I64)],
            &[],
            "tensor_to_shape: x must be a 1-d tensor, found rank 2",
        );
    }

    #[test]
    fn make_closure_drops_the_captured_parameters() {
        let ten = |n: i64| StructInfo::tensor(vec![d(n)], F32);
        let f = arg(StructInfo::func(vec![ten(2), ten(3)], ten(3), true));
        let captured = |n: usize| Expr::tuple((0..n).map(|_| t(&[d(2)], F32)).collect());
        assert_infers(
            "relax.make_closure",
            &[f.clone(), captured(1)],
            &[],
            "R.Callable((R.Tensor((3,), dtype=\"float32\"),), R.Tensor((3,), dtype=\"float32\"), True)",
        );
        assert_fails(
            "relax.make_closure",
            &[f, captured(3)],
            &[],
            "make_closure: func captures 3 values but the function has 2 parameters",
        );
        assert_fails(
            "relax.make_closure",
            &[t(&[d(2)], F32), captured(1)],
            &[],
            "make_closure: func must be a function, found R.Tensor((2,), dtype=\"float32\")",
        );
    }
}
