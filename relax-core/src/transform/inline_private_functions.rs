//! `InlinePrivateFunctions`: calls of private Relax functions are replaced
//! by the functions' bodies (TVM's `relax.transform.InlinePrivateFunctions`),
//! and a private function no longer referenced is removed.
//!
//! A call `y = f(a, b)` of a private function (no `global_symbol`) is
//! inlined when `f` is not recursive (its body does not call `f`), its
//! parameters have no symbolic dims (binding those to the caller's shapes
//! is not built), its body is a flat sequence of bindings (no `If`, no
//! closure), and those bindings may stand where the call stands: only pure
//! ones (no impure call) when the call is in a dataflow block. The body's bindings are emitted
//! in place of the call with new variables (of the block's kind), the
//! parameters replaced by the arguments, and `y` is bound to the body's
//! result. Each call site is inlined once: calls inside an inlined body
//! stay calls (so mutual recursion terminates).

use super::convert_to_dataflow::may_stand_in_dataflow;
use super::Pass;
use crate::ir::{Binding, Expr, ExprKind, Function, GlobalVar, IRModule, Var, VarBinding};
use crate::mutator::{replace_vars, ExprMutator, MutatorState};
use crate::visitor::post_order_visit;
use relax_runtime::Error;
use std::collections::HashMap;

/// The pass. See the module docs.
#[derive(Clone, Copy, Debug, Default)]
pub struct InlinePrivateFunctions;

impl Pass for InlinePrivateFunctions {
    fn name(&self) -> &str {
        "InlinePrivateFunctions"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        let inlinable: HashMap<GlobalVar, Function> = module
            .functions()
            .filter_map(|(gv, f)| f.as_relax().map(|f| (gv, f)))
            .filter(|(gv, f)| f.global_symbol().is_none() && can_inline(f, gv))
            .map(|(gv, f)| (gv.clone(), f.clone()))
            .collect();
        if inlinable.is_empty() {
            return Ok(module);
        }
        let mut out = module.clone();
        for (gv, f) in module.functions() {
            let Some(func) = f.as_relax() else { continue };
            let mut m = Inline {
                state: MutatorState::with_module(&module),
                module: &module,
                inlinable: &inlinable,
            };
            let e = m.visit_expr(&Expr::function(func.clone()));
            let errors = m.state.builder.take_errors();
            if !errors.is_empty() {
                return Err(Error::Compile(errors));
            }
            if let Some(new) = e.as_function() {
                out.add(gv.clone(), new.clone());
            }
        }
        // Private functions nothing references any more go.
        for gv in inlinable.keys() {
            let referenced = out
                .functions()
                .filter(|(g, _)| *g != gv)
                .filter_map(|(_, f)| f.as_relax())
                .any(|f| mentions(&f.body, gv));
            if !referenced {
                out.remove(gv);
            }
        }
        Ok(out)
    }
}

/// Whether `f` (named `gv`) may be inlined: see the module docs.
fn can_inline(f: &Function, gv: &GlobalVar) -> bool {
    let symbolic = f
        .params
        .iter()
        .filter_map(|p| p.struct_info())
        .any(|s| !s.tir_vars().is_empty());
    let flat = f.body.as_seq().is_some_and(|seq| {
        seq.blocks
            .iter()
            .flat_map(|b| &b.bindings)
            .all(|b| !matches!(b.value().kind(), ExprKind::If(_) | ExprKind::Function(_)))
    });
    !symbolic && flat && !mentions(&f.body, gv)
}

/// Whether `e` mentions `gv`.
fn mentions(e: &Expr, gv: &GlobalVar) -> bool {
    let mut found = false;
    post_order_visit(e, |x| {
        found |= matches!(x.kind(), ExprKind::GlobalVar(g) if g == gv)
    });
    found
}

struct Inline<'a> {
    state: MutatorState,
    module: &'a IRModule,
    inlinable: &'a HashMap<GlobalVar, Function>,
}

impl Inline<'_> {
    /// The callee of `value` if it is an inlinable call that fits the
    /// current block.
    fn callee(&mut self, value: &Expr) -> Option<(Function, Vec<Expr>)> {
        let ExprKind::Call(call) = value.kind() else {
            return None;
        };
        let ExprKind::GlobalVar(g) = call.op.kind() else {
            return None;
        };
        let f = self.inlinable.get(g)?;
        if self.builder().current_block_is_dataflow() {
            let seq = f.body.as_seq()?;
            let module = self.module;
            let fits = seq
                .blocks
                .iter()
                .flat_map(|b| &b.bindings)
                .all(|b| may_stand_in_dataflow(b, module));
            if !fits {
                return None;
            }
        }
        Some((f.clone(), call.args.clone()))
    }
}

impl ExprMutator for Inline<'_> {
    fn state(&mut self) -> &mut MutatorState {
        &mut self.state
    }
    fn visit_var_binding(&mut self, binding: &VarBinding) {
        let Some((f, args)) = self.callee(&binding.value) else {
            let value = self.visit_expr(&binding.value);
            self.reemit_binding(binding, value);
            return;
        };
        let Some(seq) = f.body.as_seq() else { return };
        let args: Vec<Expr> = args.iter().map(|a| self.visit_expr(a)).collect();
        let mut map: HashMap<Var, Expr> = f.params.iter().cloned().zip(args).collect();
        for b in seq.blocks.iter().flat_map(|b| &b.bindings) {
            let emitted = replace_vars(b.value(), &map, self.module).and_then(|value| match b {
                Binding::VarBinding(vb) => self.builder().emit_named(value, vb.var.name_hint()),
                Binding::MatchCast(mc) => self
                    .builder()
                    .emit_match_cast(value, mc.struct_info.clone()),
            });
            match emitted {
                Ok(v) => {
                    map.insert(b.var().clone(), Expr::var(&v));
                }
                Err(e) => {
                    self.builder().report(e);
                    return;
                }
            }
        }
        match replace_vars(&seq.body, &map, self.module) {
            Ok(result) => self.reemit_binding(binding, result),
            Err(e) => self.builder().report(e),
        }
    }
}

#[cfg(test)]
mod tests;
