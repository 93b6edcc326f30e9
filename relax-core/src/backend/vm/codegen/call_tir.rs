//! `R.call_tir(f, (args…), out_sinfo, tir_vars)` to a native-kernel call.
//!
//! The kernel of a PrimFunc takes its buffers (inputs, then the outputs the
//! VM allocates) and its ABI scalars ([`scalar_abi`]): its scalar parameters,
//! then the symbolic dims of its buffer shapes. Lowering a call matches the
//! PrimFunc's signature against the call site:
//!
//! 1. *Signature matching.* Each ABI variable is expressed in the caller's
//!    terms: a scalar parameter by the matching entry of `tir_vars`; a
//!    variable standing alone as a buffer dim by the actual dim of the first
//!    argument (or output) bound to that buffer, when the caller's
//!    StructInfo knows it. A variable the caller's StructInfo cannot express
//!    (an argument of unknown shape) gets a fresh shape-heap slot, bound at
//!    run time from the argument.
//! 2. *Inputs are checked at run time.* Every input is matched against its
//!    buffer's shape and dtype (in the caller's terms) by a `MatchCast`
//!    before the kernel runs, whatever its StructInfo promises: the value
//!    may come from a host function whose result is not checked, and
//!    compiled kernels index without bounds checks. A mismatch that is
//!    provable at build time (a literal dim, a rank or a dtype that
//!    differs) is a build error instead.
//! 3. *Outputs are allocated from `out_sinfo`*, whose every dim must be
//!    computable from the shape heap (a dim that is not is a build error).
//!    Each must equal the output buffer's shape: provably at build time, or
//!    else by a run-time check of the computed shape.
//! 4. The kernel's scalars are the ABI variables' caller expressions,
//!    compiled over the shape heap.
//!
//! `R.call_tir_inplace(f, (args…), out_sinfo, inplace_indices)` lowers the
//! same way, with TVM's signature: the PrimFunc's buffers are the arguments
//! then the outputs whose inplace index is -1; the other outputs are not
//! allocated, the kernel writes them into the arguments they name, which
//! are checked as inputs are. An in-place argument read here for the last
//! time (a dataflow variable whose register is killed after this binding)
//! is moved out of its register; the VM writes into it when nothing else
//! holds its buffer, else into a copy (copy on write, see
//! `relax_runtime::executable::Callee::Native`): a caller's input, a
//! constant or weight, a view, or a value still read later is never
//! changed.

use super::FunctionCompiler;
use crate::arith::{Analyzer, Proof};
use crate::ir::{
    BaseFunc, Call, Expr, ExprKind, PrimExpr, StructInfo, StructInfoKind, TensorStructInfo, TirVar,
    UNKNOWN_NDIM,
};
use crate::tir::abi::scalar_abi;
use crate::tir::{Buffer, PrimFunc, PrimFuncParam};
use relax_runtime::executable::{Arg, Callee, DimPattern, Instr, Pattern};
use relax_runtime::Error;
use std::collections::HashMap;

/// A build error of one `call_tir`.
fn error(what: String) -> Error {
    Error::Unsupported(what)
}

/// The dims of a tensor's StructInfo, when known (a `ShapeExpr`, or a shape
/// variable whose own StructInfo has values).
fn tensor_dims(t: &TensorStructInfo) -> Option<Vec<PrimExpr>> {
    t.shape_values()
        .map(<[_]>::to_vec)
        .or_else(|| t.shape.as_ref()?.struct_info()?.as_shape()?.values.clone())
}

/// One buffer of the callee matched with the caller's side of it.
struct Operand<'a> {
    buffer: &'a Buffer,
    /// How the caller describes it: the argument's StructInfo, or the
    /// declared output.
    actual: TensorStructInfo,
    /// For messages: "argument 0", "output 1".
    role: String,
}

impl FunctionCompiler<'_> {
    /// Compiles a `call_tir` or `call_tir_inplace` (see the module docs).
    pub(super) fn call_tir(&mut self, c: &Call) -> Result<Arg, Error> {
        let op = match c.op.kind() {
            ExprKind::Op(op) => op.name().trim_start_matches("relax.").to_string(),
            _ => "call_tir".to_string(),
        };
        let callee = match c.args.first().map(Expr::kind) {
            Some(ExprKind::GlobalVar(gv)) => gv.name_hint().to_string(),
            _ => {
                return Err(error(format!(
                    "{op} in `{}`: the callee must be a PrimFunc of the module, named directly",
                    self.name
                )))
            }
        };
        let func = match self.module.get(&callee) {
            Some(BaseFunc::Prim(f)) => f.clone(),
            Some(BaseFunc::Relax(_)) => {
                return Err(error(format!(
                    "call_tir in `{}`: `{callee}` is a Relax function, not a PrimFunc",
                    self.name
                )))
            }
            Some(BaseFunc::Extern(symbol)) => {
                return Err(error(format!(
                    "call_tir in `{}`: `{callee}` is the external function {symbol:?}, not a PrimFunc (call it with `R.call_dps_packed`)",
                    self.name
                )))
            }
            None => {
                return Err(error(format!(
                    "call_tir in `{}`: the module has no function `{callee}`",
                    self.name
                )))
            }
        };
        let site = format!("{op} of `{callee}` in `{}`", self.name);
        let (inputs, input_sinfo) = self.tuple_arguments(c, &site)?;
        let declared = flatten_outputs(&c.sinfo_args);
        let inplace_indices = match op.as_str() {
            "call_tir_inplace" => inplace_indices(c, declared.len(), inputs.len(), &site)?,
            _ => Vec::new(),
        };
        // The outputs to allocate: all, or those not written in place.
        let outputs: Vec<StructInfo> = match inplace_indices.is_empty() {
            true => declared,
            false => declared
                .into_iter()
                .zip(&inplace_indices)
                .filter(|(_, &i)| i == -1)
                .map(|(s, _)| s)
                .collect(),
        };
        // An in-place argument in a register read here for the last time,
        // and by no other argument, is moved.
        let moved: Vec<u32> = inplace_indices
            .iter()
            .filter_map(|&i| u32::try_from(i).ok())
            .filter(|&i| match &inputs[i as usize] {
                Arg::Reg(r) => {
                    self.last_reads.contains(r)
                        && inputs.iter().filter(|a| **a == Arg::Reg(*r)).count() == 1
                }
                _ => false,
            })
            .collect();
        let tir_vars = match c.args.get(2) {
            None => None,
            Some(e) => Some(shape_values_of(e).ok_or_else(|| {
                error(format!(
                    "{site}: tir_vars must be a shape of known values, found {}",
                    e.struct_info()
                        .map_or("no StructInfo".into(), |s| s.to_string())
                ))
            })?),
        };
        let operands = operands(&func, &input_sinfo, &outputs, &site)?;
        let subst = match_signature(&func, &operands, inputs.len(), tir_vars.as_deref(), &site)?;
        let analyzer = analyzer_for(&operands, &subst);

        // Inputs: a run-time check each. The first pass binds the dims only
        // the argument determines; a compound dim over one of those was
        // skipped (`Any`) and is checked by a second pass.
        let mut deferred = Vec::new();
        for (op, arg) in operands.iter().zip(&inputs) {
            let expected = expected_of(op.buffer, &subst);
            static_check(op, &expected, &analyzer, &site)?;
            let pattern = self.heap.pattern(&expected, true)?;
            let skipped = has_any(&pattern);
            let context = format!("{} of {site}", op.role);
            self.instrs.push(Instr::MatchCast {
                value: arg.clone(),
                pattern,
                dst: None,
                context: context.clone(),
                expected: expected.to_string(),
            });
            if skipped {
                deferred.push((arg.clone(), expected, context));
            }
        }
        for (value, expected, context) in deferred {
            let pattern = self.heap.pattern(&expected, false)?;
            self.instrs.push(Instr::MatchCast {
                value,
                pattern,
                dst: None,
                context,
                expected: expected.to_string(),
            });
        }

        // Outputs: allocated from out_sinfo, which must fit the buffers.
        let mut out_patterns = Vec::new();
        for op in &operands[inputs.len()..] {
            let expected = expected_of(op.buffer, &subst);
            let unproven = static_check(op, &expected, &analyzer, &site)?;
            let declared = StructInfo::new(StructInfoKind::Tensor(op.actual.clone()));
            let pattern = self.heap.pattern(&declared, false).map_err(|e| {
                error(format!(
                    "{site}: {} {declared} cannot be allocated: {e}",
                    op.role
                ))
            })?;
            if !is_allocatable(&pattern) {
                return Err(error(format!(
                    "{site}: {} must have a known shape and dtype to be allocated, found {declared}",
                    op.role
                )));
            }
            out_patterns.push(pattern);
            if unproven {
                self.check_output_shape(op, &expected, &site)?;
            }
        }

        let scalars = scalar_abi(&func)
            .iter()
            .map(|v| {
                let value = subst.get(v).ok_or_else(|| undetermined(v, &site))?;
                self.heap.sym(value).map_err(|_| undetermined(v, &site))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let symbol = self.native_index(&callee);
        Ok(self.emit_call(
            Callee::Native {
                symbol,
                outputs: out_patterns,
                scalars,
                inplace_indices,
                moved,
            },
            inputs,
        ))
    }

    /// The compiled fields of a call's argument tuple (argument 1: a tuple
    /// literal, or a variable holding one) and their StructInfo; the inputs
    /// of `call_tir`, the captured values of `make_closure`, the arguments
    /// of `invoke_closure`.
    pub(super) fn tuple_arguments(
        &mut self,
        c: &Call,
        site: &str,
    ) -> Result<(Vec<Arg>, Vec<StructInfo>), Error> {
        let Some(args) = c.args.get(1) else {
            return Err(error(format!("{site}: the arguments are missing")));
        };
        let missing = |i: usize| error(format!("{site}: argument {i} has no StructInfo"));
        if let ExprKind::Tuple(fields) = args.kind() {
            let sinfo = fields
                .iter()
                .enumerate()
                .map(|(i, f)| f.struct_info().cloned().ok_or_else(|| missing(i)))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok((self.args(fields)?, sinfo));
        }
        // A variable holding the argument tuple: take its fields apart.
        let Some(fields) = args
            .struct_info()
            .and_then(|s| s.as_tuple())
            .map(<[_]>::to_vec)
        else {
            return Err(error(format!(
                "{site}: the arguments must be a tuple, found {}",
                args.struct_info()
                    .map_or("no StructInfo".into(), |s| s.to_string())
            )));
        };
        let tuple = self.expr(args)?;
        let mut out = Vec::with_capacity(fields.len());
        for index in 0..fields.len() {
            let dst = self.fresh();
            self.instrs.push(Instr::GetItem {
                tuple: tuple.clone(),
                index: index as u32,
                dst,
            });
            out.push(Arg::Reg(dst));
        }
        Ok((out, fields))
    }

    /// Checks at run time that an output's computed shape equals its
    /// buffer's: `MatchCast(shape(out_sinfo dims), R.Shape(buffer dims))`.
    fn check_output_shape(
        &mut self,
        op: &Operand<'_>,
        expected: &StructInfo,
        site: &str,
    ) -> Result<(), Error> {
        let (Some(dims), Some(want)) = (
            tensor_dims(&op.actual),
            expected.as_tensor().and_then(tensor_dims),
        ) else {
            return Ok(());
        };
        let dims = dims
            .iter()
            .map(|d| self.heap.sym(d))
            .collect::<Result<Vec<_>, _>>()?;
        let shape = self.fresh();
        self.instrs.push(Instr::MakeShape { dims, dst: shape });
        let want_sinfo = StructInfo::shape(want);
        let pattern = self.heap.pattern(&want_sinfo, false).map_err(|e| {
            error(format!(
                "{site}: the shape of {} cannot be checked: {e}",
                op.role
            ))
        })?;
        self.instrs.push(Instr::MatchCast {
            value: Arg::Reg(shape),
            pattern,
            dst: None,
            context: format!("the shape of {} of {site}", op.role),
            expected: want_sinfo.to_string(),
        });
        Ok(())
    }

    /// The index of `symbol` in the executable's native table.
    fn native_index(&mut self, symbol: &str) -> u32 {
        super::intern(&mut self.exec.natives, symbol.to_string())
    }
}

/// Expresses every ABI variable of `func` in the caller's terms (see the
/// module docs, step 1).
fn match_signature(
    func: &PrimFunc,
    operands: &[Operand<'_>],
    inputs: usize,
    tir_vars: Option<&[PrimExpr]>,
    site: &str,
) -> Result<HashMap<TirVar, PrimExpr>, Error> {
    let mut subst: HashMap<TirVar, PrimExpr> = HashMap::new();
    let scalars: Vec<&TirVar> = func
        .params
        .iter()
        .filter_map(|p| match p {
            PrimFuncParam::Scalar(v) => Some(v),
            PrimFuncParam::Buffer(_) => None,
        })
        .collect();
    if let Some(values) = tir_vars {
        if values.len() != scalars.len() {
            return Err(error(format!(
                "{site}: tir_vars has {} values but the PrimFunc has {} scalar parameters",
                values.len(),
                scalars.len()
            )));
        }
        for (v, value) in scalars.iter().zip(values) {
            subst.insert((*v).clone(), value.clone());
        }
    }
    for op in operands {
        let Some(actual) = tensor_dims(&op.actual) else {
            continue;
        };
        if actual.len() != op.buffer.shape().len() {
            continue; // reported by the static check
        }
        for (b, a) in op.buffer.shape().iter().zip(&actual) {
            if let Some(v) = b.as_var() {
                subst.entry(v.clone()).or_insert_with(|| a.clone());
            }
        }
    }
    // What the caller cannot express is bound at run time from an input
    // where it stands alone as a dim, in a fresh slot per call site.
    for v in scalar_abi(func) {
        if subst.contains_key(&v) {
            continue;
        }
        let bindable = operands[..inputs]
            .iter()
            .any(|op| op.buffer.shape().iter().any(|d| d.as_var() == Some(&v)));
        if !bindable {
            return Err(undetermined(&v, site));
        }
        let fresh = TirVar::with_dtype(v.name(), v.dtype());
        subst.insert(v, PrimExpr::var(&fresh));
    }
    Ok(subst)
}

/// The `inplace_indices` of a `call_tir_inplace`, checked against the
/// call's outputs and arguments (StructInfo inference checked them too,
/// but the VM trusts nothing it is given).
fn inplace_indices(c: &Call, outputs: usize, args: usize, site: &str) -> Result<Vec<i32>, Error> {
    let Some(indices) = crate::op::infer::attr_ints(c, "inplace_indices") else {
        return Err(error(format!(
            "{site}: inplace_indices must be a list of integers, found none"
        )));
    };
    if indices.len() != outputs {
        return Err(error(format!(
            "{site}: inplace_indices must have one entry per output: expected {outputs}, found {}",
            indices.len()
        )));
    }
    let mut out = Vec::with_capacity(indices.len());
    for (k, &i) in indices.iter().enumerate() {
        let ok = i == -1 || (0..args as i64).contains(&i) && !indices[..k].contains(&i);
        if !ok {
            return Err(error(format!(
                "{site}: inplace_indices[{k}] must be -1 or a distinct argument index in [0, {args}), found {i}"
            )));
        }
        out.push(i as i32);
    }
    if out.iter().all(|&i| i == -1) {
        return Err(error(format!(
            "{site}: inplace_indices must name at least one argument, found only -1"
        )));
    }
    Ok(out)
}

/// The declared outputs, one StructInfo each (a single tuple StructInfo
/// lists several).
fn flatten_outputs(sinfo_args: &[StructInfo]) -> Vec<StructInfo> {
    match sinfo_args {
        [one] => match one.as_tuple() {
            Some(fields) => fields.to_vec(),
            None => vec![one.clone()],
        },
        many => many.to_vec(),
    }
}

/// The values of a shape argument (`R.shape([n])`, or a shape variable of
/// known values).
fn shape_values_of(e: &Expr) -> Option<Vec<PrimExpr>> {
    match e.kind() {
        ExprKind::ShapeExpr(values) => Some(values.clone()),
        _ => e.struct_info()?.as_shape()?.values.clone(),
    }
}

/// Pairs the PrimFunc's buffers with the inputs and outputs of the call.
fn operands<'a>(
    func: &'a PrimFunc,
    inputs: &[StructInfo],
    outputs: &[StructInfo],
    site: &str,
) -> Result<Vec<Operand<'a>>, Error> {
    let buffers: Vec<&Buffer> = func.buffers().collect();
    if buffers.len() != inputs.len() + outputs.len() {
        return Err(error(format!(
            "{site}: the PrimFunc has {} buffer parameters, but the call passes {} arguments and {} outputs",
            buffers.len(),
            inputs.len(),
            outputs.len()
        )));
    }
    if let Some(b) = buffers.iter().find(|b| !b.strides().is_empty()) {
        return Err(error(format!(
            "{site}: buffer `{}` has explicit strides; kernels take contiguous tensors",
            b.name()
        )));
    }
    let roles = (0..inputs.len())
        .map(|i| format!("argument {i}"))
        .chain((0..outputs.len()).map(|i| format!("output {i}")));
    buffers
        .into_iter()
        .zip(inputs.iter().chain(outputs))
        .zip(roles)
        .map(|((buffer, sinfo), role)| match sinfo.as_tensor() {
            Some(t) => Ok(Operand {
                buffer,
                actual: t.clone(),
                role,
            }),
            None => Err(error(format!(
                "{site}: {role} must be a tensor (for buffer `{}`), found {sinfo}",
                buffer.name()
            ))),
        })
        .collect()
}

/// The StructInfo a buffer requires, in the caller's terms.
fn expected_of(buffer: &Buffer, subst: &HashMap<TirVar, PrimExpr>) -> StructInfo {
    StructInfo::tensor(
        buffer
            .shape()
            .iter()
            .map(|d| d.substitute_map(subst))
            .collect(),
        buffer.dtype(),
    )
}

/// An analyzer that knows every dim of the call is non-negative.
fn analyzer_for(operands: &[Operand<'_>], subst: &HashMap<TirVar, PrimExpr>) -> Analyzer {
    let mut a = Analyzer::new();
    let mut mark = |e: &PrimExpr| {
        for v in e.free_vars() {
            a.mark_non_negative(&v);
        }
    };
    for op in operands {
        tensor_dims(&op.actual).iter().flatten().for_each(&mut mark);
    }
    subst.values().for_each(mark);
    a
}

/// Compares what the caller says of an operand with what its buffer
/// requires: a provable difference is an error; returns whether some dim
/// is not provably equal (then it needs a run-time check).
fn static_check(
    op: &Operand<'_>,
    expected: &StructInfo,
    analyzer: &Analyzer,
    site: &str,
) -> Result<bool, Error> {
    let Some(want) = expected.as_tensor() else {
        return Ok(true);
    };
    let mismatch = || {
        error(format!(
            "{site}: {} is {} but buffer `{}` of the PrimFunc is {expected}",
            op.role,
            StructInfo::new(StructInfoKind::Tensor(op.actual.clone())),
            op.buffer.name()
        ))
    };
    if !op.actual.dtype.is_void() && op.actual.dtype != want.dtype {
        return Err(mismatch());
    }
    if op.actual.ndim != UNKNOWN_NDIM && op.actual.ndim != want.ndim {
        return Err(mismatch());
    }
    let (Some(actual), Some(want)) = (tensor_dims(&op.actual), tensor_dims(want)) else {
        return Ok(true);
    };
    let mut unproven = op.actual.dtype.is_void();
    for (a, w) in actual.iter().zip(&want) {
        match analyzer.compare_equal(a, w) {
            Proof::Proven => {}
            Proof::Disproven => return Err(mismatch()),
            Proof::Unknown => unproven = true,
        }
    }
    Ok(unproven)
}

/// Whether the VM can allocate a tensor of this pattern: known dtype, every
/// dim computed.
fn is_allocatable(p: &Pattern) -> bool {
    match p {
        Pattern::Tensor {
            dtype: Some(dtype),
            dims: Some(dims),
            ..
        } => !dtype.is_void() && dims.iter().all(|d| matches!(d, DimPattern::Check { .. })),
        _ => false,
    }
}

/// Whether a tensor pattern skipped a dim (a compound dim over variables
/// not bound yet).
fn has_any(p: &Pattern) -> bool {
    matches!(p, Pattern::Tensor { dims: Some(dims), .. } if dims.contains(&DimPattern::Any))
}

fn undetermined(v: &TirVar, site: &str) -> Error {
    error(format!(
        "{site}: the PrimFunc's symbolic dim `{v}` cannot be determined from the call \
         (it stands alone in no buffer shape whose argument has a known shape, and no tir_vars give it)"
    ))
}
