//! `LegalizeOps`: every call of a registered op becomes a `call_tir` of a
//! PrimFunc computing it (TVM's `relax.transform.LegalizeOps`).
//!
//! 1. The op's legalization ([`super::legalize`]) describes the computation
//!    as TE stages over the call's arguments; `BlockBuilder::call_te` lowers
//!    them to a PrimFunc, adds it to the module (named after the op: `add`,
//!    `add1`, …) and returns the `call_tir`. The PrimFunc records the op in
//!    its `legalized_from` attribute, which `AnnotateTIROpPattern` reads.
//! 2. Left alone: the `call_*` family, `shape_of`, `shape_to_tensor` and
//!    `tensor_to_shape` (they are already at the level below), `nonzero`,
//!    `unique` and `vision.all_class_non_max_suppression` (their sizes or
//!    work depend on the data; the VM runs their kernels), `print` and
//!    `assert_op` (effects the VM performs), calls of things that are not registered ops, a
//!    binary op with a `R.Prim` operand of unknown value (the VM runs its
//!    kernel; see [`super::legalize`]'s `binary`), and —
//!    as TVM does — calls whose shapes are not fully known: an argument
//!    tensor of unknown dtype or rank, or a result tensor of unknown dtype or
//!    dims (the output buffer could not be allocated).
//! 3. The `call_tir`'s StructInfo must be provably the call's; it then takes
//!    the call's own StructInfo (so bindings keep their variables). A
//!    legalization producing another shape is reported as an error, never
//!    silently accepted.
//! 4. Errors (an attribute the legalization cannot use) are collected and
//!    reported together, naming the op.
//! 5. Each PrimFunc carries TVM's `tirx.noalias` attribute, as TVM 0.27
//!    writes it, so that LegalizeOps gives TVM's module, PrimFunc for
//!    PrimFunc, attributes included.
//! 6. Two options, both on in the build pipeline
//!    ([`crate::backend::pipeline`]) and off by default:
//!    - [`LegalizeOps::relu_propagates_nan`]: `nn.relu` is `max(x, 0)` with
//!      NaN propagating (NaN in, NaN out, as numpy's `maximum`, PyTorch's
//!      `relu` and this project's reference kernel give), where TVM writes
//!      `T.max(x, T.float32(0))`, which gives 0 for NaN;
//!    - [`LegalizeOps::legalized_from`]: each PrimFunc also records its op
//!      in a `legalized_from` attribute. `AnnotateTIROpPattern` then takes
//!      the op's registered pattern instead of analysing the blocks, which
//!      keeps an injective op injective when its indices use a symbolic dim
//!      (TVM's analysis calls that opaque, and FuseOps would not fuse it).

use super::legalize::{self, error, LegalizeCtx};
use super::Pass;
use crate::arith::{Analyzer, Proof};
use crate::block_builder::BlockBuilder;
use crate::ir::{Call, Expr, ExprKind, IRModule, StructInfo, StructInfoKind};
use crate::mutator::{mutate_module, ExprMutator, MutatorState};
use relax_runtime::Error;

/// The ops never legalized: they already call into the level below, or
/// (`shape_of` and the shape/tensor conversions, the closure ops,
/// `nonzero`, `unique`, non-maximum suppression, `memory.view`, `print`,
/// `assert_op`) the VM implements them, as TVM's VM builtins do.
pub const SKIPPED_OPS: &[&str] = &[
    "relax.call_tir",
    "relax.call_tir_inplace",
    "relax.call_tir_with_grad",
    "relax.call_dps_packed",
    "relax.call_pure_packed",
    "relax.make_closure",
    "relax.invoke_closure",
    "relax.shape_of",
    "relax.shape_to_tensor",
    "relax.tensor_to_shape",
    "relax.nonzero",
    "relax.unique",
    "relax.vision.all_class_non_max_suppression",
    "relax.memory.view",
    "relax.print",
    "relax.assert_op",
];

/// The pass. See the module docs. `LegalizeOps::default()` gives TVM
/// 0.27's module; every pass without arguments is made with `default()`.
#[derive(Clone, Copy, Debug, Default)]
pub struct LegalizeOps {
    relu_propagates_nan: bool,
    legalized_from: bool,
}

impl LegalizeOps {
    /// With `on`, `nn.relu` propagates NaN, as numpy and PyTorch do, where
    /// TVM's `T.max(x, 0)` gives 0 for NaN (module docs, item 6).
    pub fn relu_propagates_nan(mut self, on: bool) -> Self {
        self.relu_propagates_nan = on;
        self
    }

    /// With `on`, each PrimFunc records its op in `legalized_from`, which
    /// `AnnotateTIROpPattern` reads (module docs, item 6).
    pub fn legalized_from(mut self, on: bool) -> Self {
        self.legalized_from = on;
        self
    }
}

impl Pass for LegalizeOps {
    fn name(&self) -> &str {
        "LegalizeOps"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        let mut m = Legalizer {
            state: MutatorState::with_module(&module),
            options: *self,
        };
        // With the PrimFuncs the legalizations added to the builder.
        mutate_module(&mut m, &module)
    }
}

struct Legalizer {
    state: MutatorState,
    options: LegalizeOps,
}

impl ExprMutator for Legalizer {
    fn state(&mut self) -> &mut crate::mutator::MutatorState {
        &mut self.state
    }
    fn visit_call(&mut self, expr: &Expr, _call: &Call) -> Expr {
        let e = self.visit_expr_post_order(expr);
        let options = self.options;
        match legalize_call_with(self.builder(), &e, &options) {
            Ok(Some(new)) => new,
            Ok(None) => e,
            Err(err) => {
                self.builder().report(err);
                e
            }
        }
    }
}

/// Whether a StructInfo is a tensor (or a tuple of them) with known dtype and
/// rank, and with `dims` also known dims. Other StructInfo (shapes, prims)
/// qualifies as an argument, not as a result.
fn known(s: &StructInfo, dims: bool, result: bool) -> bool {
    match s.kind() {
        StructInfoKind::Tensor(t) => {
            !t.is_unknown_dtype() && !t.is_unknown_ndim() && (!dims || t.shape_values().is_some())
        }
        StructInfoKind::Tuple(fields) => fields.iter().all(|f| known(f, dims, result)),
        _ => !result,
    }
}

/// The legalized form of `expr` if it is a call the pass rewrites (see the
/// module docs), `None` if it is left alone.
pub fn legalize_call(bb: &mut BlockBuilder, expr: &Expr) -> Result<Option<Expr>, Error> {
    legalize_call_with(bb, expr, &LegalizeOps::default())
}

/// [`legalize_call`] with the pass's options.
pub fn legalize_call_with(
    bb: &mut BlockBuilder,
    expr: &Expr,
    options: &LegalizeOps,
) -> Result<Option<Expr>, Error> {
    let Some(call) = expr.as_call() else {
        return Ok(None);
    };
    let ExprKind::Op(op) = call.op.kind() else {
        return Ok(None);
    };
    if SKIPPED_OPS.contains(&op.name()) {
        return Ok(None);
    }
    let Some(info) = crate::op::lookup(op.name()) else {
        return Ok(None);
    };
    let Some(out) = expr.struct_info() else {
        return Ok(None);
    };
    let args_known = call
        .args
        .iter()
        .all(|a| a.struct_info().is_some_and(|s| known(s, false, false)));
    if !args_known || !known(out, true, true) {
        return Ok(None);
    }
    if info.pattern == crate::op::OpPatternKind::Broadcast
        && crate::op::binary::OPS.iter().any(|o| o.name == info.name)
        && legalize::binary::leaves(call)
    {
        return Ok(None);
    }
    let f = legalize::lookup(op.name())
        .ok_or_else(|| error(format!("{} has no legalization", info.short_name())))?;
    let attrs = info
        .normalize_attrs(&call.attrs)
        .map_err(|d| Error::Compile(vec![d]))?;
    let call = Call {
        attrs,
        ..call.clone()
    };
    let mut cx = LegalizeCtx {
        bb,
        op: info,
        call: &call,
        out,
        relu_propagates_nan: options.relu_propagates_nan,
        legalized_from: options.legalized_from,
    };
    let new = f(&mut cx)?;
    let got = new.struct_info().ok_or_else(|| {
        error(format!(
            "{}: the legalized call has no StructInfo",
            info.short_name()
        ))
    })?;
    if !provably_equal(got, out) {
        return Err(error(format!(
            "{}: the legalization computes {got}, but the call has {out}",
            info.short_name()
        )));
    }
    // Give the call_tir the call's own StructInfo (equal, maybe spelled
    // differently) so that the binding keeps its variable.
    if let Some(c) = new.as_call() {
        if c.sinfo_args.len() == 1 || out.as_tuple().is_some() {
            let sinfo_args = match out.as_tuple() {
                Some(fields) if c.sinfo_args.len() == fields.len() => fields.to_vec(),
                Some(_) => c.sinfo_args.clone(),
                None => vec![out.clone()],
            };
            let rebuilt =
                Expr::call_full(c.op.clone(), c.args.clone(), c.attrs.clone(), sinfo_args);
            return bb.normalize(rebuilt).map(Some);
        }
    }
    Ok(Some(new))
}

/// Whether two tensor / tuple StructInfos have equal dtypes and provably
/// equal dims.
fn provably_equal(a: &StructInfo, b: &StructInfo) -> bool {
    match (a.kind(), b.kind()) {
        (StructInfoKind::Tensor(x), StructInfoKind::Tensor(y)) => {
            if x.dtype != y.dtype || x.ndim != y.ndim {
                return false;
            }
            match (x.shape_values(), y.shape_values()) {
                (Some(p), Some(q)) => {
                    let mut ana = Analyzer::new();
                    for v in p.iter().chain(q).flat_map(|e| e.free_vars()) {
                        ana.mark_non_negative(&v);
                    }
                    p.iter()
                        .zip(q)
                        .all(|(d, e)| d == e || ana.compare_equal(d, e) == Proof::Proven)
                }
                (None, None) => true,
                _ => false,
            }
        }
        (StructInfoKind::Tuple(xs), StructInfoKind::Tuple(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| provably_equal(x, y))
        }
        _ => false,
    }
}
