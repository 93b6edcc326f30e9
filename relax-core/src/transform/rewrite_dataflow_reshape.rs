//! `RewriteDataflowReshape` (TVM's pass of that name): a `call_tir` of a
//! PrimFunc that only reshapes its one input, bound to a dataflow
//! variable, becomes `R.reshape(x, R.shape(out dims))` again, which the
//! VM runs as a view of `x`'s buffer instead of a copy.
//!
//! A reshape that fusion put in a group with other ops costs nothing: it
//! is an index expression inside their kernel. One left alone (the input
//! of an opaque kernel such as `FlashAttention`'s, a KV cache's view given
//! a batch dim) is a kernel that copies every element. The row-major
//! order of the elements is unchanged by `reshape`, `expand_dims`,
//! `squeeze` and `flatten`, so sharing the buffer is exact.
//!
//! Which PrimFuncs are reshapes: those LegalizeOps wrote for these four
//! ops, as their `legalized_from` attribute records (the build pipeline's
//! LegalizeOps writes it; TVM analyses the PrimFunc's body instead). As in
//! TVM, only bindings of dataflow variables are rewritten: a dataflow
//! block's outputs, which the function may return, stay copies, and so a
//! returned tensor never shares a caller's argument. A tensor written in
//! place later is copied first when it shares its buffer (the VM's copy
//! on write), so a view is never written through.

use super::legalize::LEGALIZED_FROM;
use super::Pass;
use crate::ir::{AttrValue, BaseFunc, Expr, ExprKind, IRModule, VarBinding};
use crate::mutator::{mutate_module, ExprMutator, MutatorState};
use relax_runtime::Error;

/// The pass. See the module docs.
#[derive(Clone, Copy, Debug, Default)]
pub struct RewriteDataflowReshape;

/// The ops whose legalized PrimFuncs only reshape their input.
const RESHAPES: &[&str] = &[
    "relax.reshape",
    "relax.expand_dims",
    "relax.squeeze",
    "relax.flatten",
];

impl Pass for RewriteDataflowReshape {
    fn name(&self) -> &str {
        "RewriteDataflowReshape"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        let mut m = Rewriter {
            state: MutatorState::with_module(&module),
            module: module.clone(),
        };
        mutate_module(&mut m, &module)
    }
}

struct Rewriter {
    state: MutatorState,
    module: IRModule,
}

impl Rewriter {
    /// `R.reshape(x, R.shape(dims))` for `value`, a `call_tir` of a
    /// reshape's PrimFunc on one tensor with a known output shape.
    fn as_reshape(&self, value: &Expr) -> Option<Expr> {
        let call = value.as_call()?;
        if value.call_op_name() != Some("relax.call_tir") || call.args.len() != 2 {
            return None;
        }
        let ExprKind::GlobalVar(gv) = call.args[0].kind() else {
            return None;
        };
        let Some(BaseFunc::Prim(f)) = self.module.get(gv.name_hint()) else {
            return None;
        };
        match f.attrs.get(LEGALIZED_FROM) {
            Some(AttrValue::Str(op)) if RESHAPES.contains(&op.as_str()) => {}
            _ => return None,
        }
        let ExprKind::Tuple(args) = call.args[1].kind() else {
            return None;
        };
        let [x] = &args[..] else {
            return None;
        };
        let [out] = &call.sinfo_args[..] else {
            return None;
        };
        let out = out.as_tensor()?;
        let dims = out.shape_values()?.to_vec();
        let x_dtype = x.struct_info()?.as_tensor()?.dtype;
        (x_dtype == out.dtype).then_some(())?;
        Some(Expr::call(
            Expr::op("relax.reshape"),
            vec![x.clone(), Expr::shape(dims)],
        ))
    }
}

impl ExprMutator for Rewriter {
    fn state(&mut self) -> &mut MutatorState {
        &mut self.state
    }

    fn visit_var_binding(&mut self, binding: &VarBinding) {
        let value = self.visit_expr(&binding.value);
        match self.as_reshape(&value) {
            Some(reshape) if binding.var.is_dataflow() => {
                self.reemit_binding(binding, reshape);
            }
            _ => self.reemit_binding(binding, value),
        }
    }
}

#[cfg(test)]
#[path = "rewrite_dataflow_reshape/tests.rs"]
mod tests;
