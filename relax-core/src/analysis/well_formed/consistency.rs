//! StructInfo consistency (rules 29, 39–43): every expression carries
//! StructInfo, and what is stored or annotated is not provably disjoint from
//! what derivation computes again. Only [`BaseCheckResult::FailL0`] is an
//! error: weaker failures depend on symbolic values and become run-time checks.

use super::annotations::Place;
use super::walk::describe;
use super::Checker;
use crate::analysis::derive::derive_struct_info;
use crate::analysis::struct_info_analysis::{struct_info_base_check, BaseCheckResult};
use crate::ir::{Expr, ExprKind, Function, MatchCast, StructInfo, StructInfoKind, Var};

impl Checker<'_> {
    /// Rule 39: the condition is not provably anything but a bool scalar.
    pub(super) fn check_if_condition(&mut self, cond: &Expr) {
        if !self.options.check_struct_info {
            return;
        }
        let Some(sinfo) = cond.struct_info() else {
            return;
        };
        let ok = match sinfo.kind() {
            StructInfoKind::Object => true,
            StructInfoKind::Prim(p) => p.dtype.is_bool(),
            StructInfoKind::Tensor(t) => {
                (t.is_unknown_dtype() || t.dtype.is_bool()) && (t.is_unknown_ndim() || t.ndim == 0)
            }
            _ => false,
        };
        if !ok {
            let message = format!(
                "{}, the if condition ({}){} has StructInfo {sinfo}, not a bool scalar",
                self.where_(),
                describe(cond),
                self.binding_suffix()
            );
            self.report("if-cond-not-bool", message);
        }
    }

    /// Rule 29, and the scoping of StructInfo that normalization computed
    /// (leaves' StructInfo follows from their contents, checked already).
    pub(super) fn check_expr_struct_info(&mut self, expr: &Expr) {
        if !self.options.check_struct_info || matches!(expr.kind(), ExprKind::Op(_)) {
            return;
        }
        match expr.struct_info() {
            None => {
                let message = format!(
                    "{}, {}{} has no StructInfo",
                    self.where_(),
                    describe(expr),
                    self.binding_suffix()
                );
                self.report("missing-struct-info", message);
            }
            Some(sinfo) => {
                if matches!(
                    expr.kind(),
                    ExprKind::Call(_)
                        | ExprKind::If(_)
                        | ExprKind::SeqExpr(_)
                        | ExprKind::Tuple(_)
                        | ExprKind::TupleGetItem(..)
                ) {
                    let what = format!(
                        "the StructInfo of {}{}",
                        describe(expr),
                        self.binding_suffix()
                    );
                    self.check_struct_info(sinfo, &Place::new(what));
                }
            }
        }
    }

    /// Rules 40 and 43 for `var = value`.
    pub(super) fn check_binding_struct_info(&mut self, var: &Var, value: &Expr) {
        if !self.options.check_struct_info || has_missing_struct_info(value) {
            return;
        }
        let Some(var_sinfo) = var.struct_info() else {
            return;
        };
        let derived = match derive_struct_info(value, &self.derive_ctx) {
            Ok(s) => s,
            Err(d) => {
                self.report_inference_failure(var, &d.message);
                return;
            }
        };
        let disjoint = |a: &StructInfo| {
            struct_info_base_check(a, &derived, &self.derive_ctx.analyzer)
                == BaseCheckResult::FailL0
        };
        let var_disjoint = disjoint(var_sinfo);
        let stored_disjoint = value
            .struct_info()
            .filter(|stored| *stored != var_sinfo && disjoint(stored));
        if var_disjoint {
            let message = format!(
                "{}, var `{}` is annotated {var_sinfo} but its value has StructInfo {derived}",
                self.where_(),
                var.name_hint()
            );
            self.report("struct-info-mismatch", message);
        }
        if let Some(stored) = stored_disjoint {
            let message = format!(
                "{}, the value of `{}` carries StructInfo {stored} but derives {derived}",
                self.where_(),
                var.name_hint()
            );
            self.report("struct-info-mismatch", message);
        }
    }

    /// Rules 41 and 43 for `var = match_cast(value, pattern)`.
    pub(super) fn check_match_cast_struct_info(&mut self, var: &Var, m: &MatchCast) {
        if !self.options.check_struct_info {
            return;
        }
        if let Some(sinfo) = var.struct_info() {
            if *sinfo != m.struct_info {
                let message = format!(
                    "{}, match_cast var `{}` has StructInfo {sinfo} but the pattern is {}",
                    self.where_(),
                    var.name_hint(),
                    m.struct_info
                );
                self.report("match-cast-var-mismatch", message);
            }
        }
        if !has_missing_struct_info(&m.value) {
            if let Err(d) = derive_struct_info(&m.value, &self.derive_ctx) {
                self.report_inference_failure(var, &d.message);
            }
        }
    }

    pub(super) fn report_inference_failure(&mut self, var: &Var, why: &str) {
        let message = format!(
            "{}, the StructInfo of the value of `{}` cannot be derived: {why}",
            self.where_(),
            var.name_hint()
        );
        self.report("struct-info-inference-failed", message);
    }

    /// Rule 42.
    pub(super) fn check_return(&mut self, func: &Function) {
        if !self.options.check_struct_info {
            return;
        }
        let Some(stored) = func.body.struct_info() else {
            return;
        };
        // A body whose StructInfo cannot be derived has its bindings reported.
        let derived = derive_struct_info(&func.body, &self.derive_ctx).unwrap_or(stored.clone());
        if struct_info_base_check(&func.ret_struct_info, &derived, &self.derive_ctx.analyzer)
            == BaseCheckResult::FailL0
        {
            let message = format!(
                "{}, the body has StructInfo {derived}, which contradicts the return annotation {}",
                self.where_(),
                func.ret_struct_info
            );
            self.report("ret-struct-info-mismatch", message);
        }
    }
}

/// Whether `value` or one of its operands lacks StructInfo (then deriving it
/// is meaningless, and rule 29 has reported the gap).
pub(super) fn has_missing_struct_info(value: &Expr) -> bool {
    let missing = |e: &Expr| e.struct_info().is_none() && !matches!(e.kind(), ExprKind::Op(_));
    missing(value)
        || match value.kind() {
            ExprKind::Call(c) => missing(&c.op) || c.args.iter().any(missing),
            ExprKind::Tuple(fields) => fields.iter().any(missing),
            ExprKind::TupleGetItem(t, _) => missing(t),
            ExprKind::If(i) => missing(&i.cond),
            _ => false,
        }
}
