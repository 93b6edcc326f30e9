//! Rules about the module as a whole (global names, `call_tir` callees,
//! recursion between globals) and the purity of a call.

use super::walk::for_each_expr;
use super::Checker;
use crate::analysis::struct_info_analysis::{struct_info_base_check, BaseCheckResult};
use crate::ir::{Call, Expr, ExprKind, GlobalVar, IRModule};
use std::collections::{HashMap, HashSet};

/// Ops whose first argument is the `PrimFunc` they call.
pub(super) const CALL_TIR_OPS: &[&str] = &[
    "relax.call_tir",
    "relax.call_tir_inplace",
    "relax.call_tir_with_grad",
];

/// Ops whose arguments (the second argument) must be a tuple literal: the
/// op-specific normal form TVM's `FNormalize` imposes.
pub(super) const TUPLE_ARGS_OPS: &[&str] = &[
    "relax.call_tir",
    "relax.call_tir_inplace",
    "relax.call_tir_with_grad",
    "relax.call_dps_packed",
];

impl Checker<'_> {
    /// Checks every Relax function of `module`, in name order.
    pub(super) fn check_module(&mut self, module: &IRModule) {
        self.reach = call_graph_reach(module);
        for (gv, func) in module.functions() {
            let Some(func) = func.as_relax() else {
                continue;
            };
            if let Some(symbol) = func.global_symbol() {
                if symbol != gv.name_hint() {
                    self.report(
                        "global-symbol-mismatch",
                        format!(
                            "function `{}` has global_symbol `{symbol}`, which differs from its name",
                            gv.name_hint()
                        ),
                    );
                }
            }
            self.check_top_function(Some(gv), gv.name_hint(), func);
        }
    }

    /// Rule 1, and the function StructInfo of a `GlobalVar` (rule 40).
    pub(super) fn check_global_var_ref(&mut self, expr: &Expr, gv: &GlobalVar) {
        let Some(module) = self.module else {
            return;
        };
        let Some(func) = module.get(gv.name_hint()) else {
            let message = format!(
                "{}, global var `{}` is not a function of the module",
                self.where_(),
                gv.name_hint()
            );
            self.report("undefined-global-var", message);
            return;
        };
        if !self.options.check_struct_info {
            return;
        }
        let Some(sinfo) = expr.struct_info() else {
            return;
        };
        let expected = func.struct_info();
        let message = if sinfo.as_func().is_none() {
            format!(
                "{}, global var `{}` has StructInfo {sinfo}, which is not a function's",
                self.where_(),
                gv.name_hint()
            )
        } else if struct_info_base_check(sinfo, &expected, &self.derive_ctx.analyzer)
            == BaseCheckResult::FailL0
        {
            format!(
                "{}, global var `{}` has StructInfo {sinfo}, which contradicts its function's {expected}",
                self.where_(),
                gv.name_hint()
            )
        } else {
            return;
        };
        self.report("struct-info-mismatch", message);
    }

    /// Rule 5: `call_tir`'s callee is a `PrimFunc` of the module.
    pub(super) fn check_call_tir_callee(&mut self, call: &Call, op_name: &str) {
        let Some(module) = self.module else {
            return;
        };
        let problem = match call.args.first().map(Expr::kind) {
            None => "has no callee".to_string(),
            Some(ExprKind::GlobalVar(gv)) => match module.get(gv.name_hint()) {
                // An undefined global is rule 1's to report.
                None => return,
                Some(f) if f.as_prim().is_some() => return,
                Some(_) => format!("calls `{}`, which is not a PrimFunc", gv.name_hint()),
            },
            Some(_) => "has a callee that is not a global PrimFunc".to_string(),
        };
        let message = format!(
            "{}, `{op_name}`{} {problem}",
            self.where_(),
            self.binding_suffix()
        );
        self.report("call-tir-callee-not-prim-func", message);
    }

    /// Rule 18: whether calling `callee` from the current top-level function
    /// is a recursive call (direct, or through mutually recursive globals).
    pub(super) fn is_recursive_global_call(&self, callee: &GlobalVar) -> bool {
        let Some(top) = &self.top else {
            return false;
        };
        callee == top || self.reach.get(callee).is_some_and(|r| r.contains(top))
    }
}

/// For each Relax function, every global function its calls reach
/// (transitively; a function reaches itself only through a cycle).
pub(crate) fn call_graph_reach(module: &IRModule) -> HashMap<GlobalVar, HashSet<GlobalVar>> {
    let callees: HashMap<GlobalVar, Vec<GlobalVar>> = module
        .functions()
        .filter_map(|(gv, f)| {
            let f = f.as_relax()?;
            let mut out = Vec::new();
            for_each_expr(&f.body, &mut |e| {
                if let Some(call) = e.as_call() {
                    if let ExprKind::GlobalVar(g) = call.op.kind() {
                        if !out.contains(g) {
                            out.push(g.clone());
                        }
                    }
                }
            });
            Some((gv.clone(), out))
        })
        .collect();
    callees
        .keys()
        .map(|start| {
            let mut seen: HashSet<GlobalVar> = HashSet::new();
            let mut stack: Vec<&GlobalVar> = callees.get(start).into_iter().flatten().collect();
            while let Some(g) = stack.pop() {
                if seen.insert(g.clone()) {
                    stack.extend(callees.get(g).into_iter().flatten());
                }
            }
            (start.clone(), seen)
        })
        .collect()
}
