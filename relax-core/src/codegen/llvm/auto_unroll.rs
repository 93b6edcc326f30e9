//! TVM's `pragma_auto_unroll_max_step` loop annotation, as the LLVM back
//! end reads it (TVM's `UnrollLoop` pass, done with LLVM's unroller).
//!
//! 1. A loop annotated `pragma_auto_unroll_max_step = N` (an integer, as
//!    `Schedule::annotate` sets it) sets the limit for itself and every
//!    loop nested in it, up to a loop that sets its own; an annotation of
//!    another type is carried and ignored.
//! 2. Under a limit, a serial loop of constant extent whose step count is
//!    at most `N` is emitted with `llvm.loop.unroll.full`, as an
//!    `Unrolled` loop is. The step count is TVM's: a store or an
//!    evaluation counts 1, a loop its constant extent times its body's
//!    count, a sequence the sum, a conditional both arms; a loop of
//!    symbolic extent is never unrolled.
//! 3. Parallel and vectorized loops keep their kind; an outlined parallel
//!    body inherits the limit of the loop it was in.
//! 4. The computation is unchanged: unrolling is a hint to LLVM's
//!    unroller, which keeps the iterations in order.
//!
//! Other annotations (`pragma_unroll_explicit`, `software_pipeline_*`,
//! `meta_schedule.*`, …) are carried through lowering and ignored here,
//! as TVM's CPU code generator ignores names it does not know.

use crate::ir::AttrValue;
use crate::tir::Stmt;

/// The annotation's name, as TVM spells it.
pub const AUTO_UNROLL_MAX_STEP: &str = "pragma_auto_unroll_max_step";

/// The limit a loop with `annotations` sets, if any.
pub(super) fn max_step(annotations: &crate::ir::Attrs) -> Option<i64> {
    annotations
        .get(AUTO_UNROLL_MAX_STEP)
        .and_then(AttrValue::as_int)
}

/// TVM's step count of `s` (module docs, point 2); `None` when a loop in
/// it has a symbolic extent or the count overflows.
pub(super) fn step_count(s: &Stmt) -> Option<i64> {
    match s {
        Stmt::For { extent, body, .. } => extent.as_int()?.checked_mul(step_count(body)?),
        Stmt::Seq(v) => v
            .iter()
            .try_fold(0i64, |acc, s| acc.checked_add(step_count(s)?)),
        Stmt::IfThenElse {
            then_case,
            else_case,
            ..
        } => {
            let e = match else_case {
                Some(e) => step_count(e)?,
                None => 0,
            };
            step_count(then_case)?.checked_add(e)
        }
        Stmt::Allocate { body, .. } | Stmt::LetStmt { body, .. } => step_count(body),
        Stmt::Block(b) => {
            let init = match &b.init {
                Some(i) => step_count(i)?,
                None => 0,
            };
            step_count(&b.body)?.checked_add(init)
        }
        Stmt::BufferStore { .. } | Stmt::Evaluate(_) => Some(1),
    }
}

/// Whether the serial loop `s` is unrolled under the limit `limit`.
pub(super) fn unrolls(s: &Stmt, limit: Option<i64>) -> bool {
    match (limit, step_count(s)) {
        (Some(n), Some(steps)) => steps <= n,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::prim_expr::{PrimExpr, TirVar};
    use crate::ir::Attrs;
    use crate::tir::ForKind;

    fn lp(extent: PrimExpr, body: Stmt) -> Stmt {
        Stmt::For {
            loop_var: TirVar::new("i"),
            min: PrimExpr::int(0),
            extent,
            kind: ForKind::Serial,
            body: Box::new(body),
            annotations: Attrs::new(),
        }
    }

    #[test]
    fn step_counts_are_tvms() {
        let one = Stmt::no_op();
        let s = lp(
            PrimExpr::int(4),
            Stmt::Seq(vec![one.clone(), lp(PrimExpr::int(3), one.clone())]),
        );
        assert_eq!(step_count(&s), Some(4 * (1 + 3)));
        assert!(unrolls(&s, Some(16)));
        assert!(!unrolls(&s, Some(15)));
        assert!(!unrolls(&s, None));
        let n = TirVar::new("n");
        assert_eq!(step_count(&lp(PrimExpr::var(&n), one.clone())), None);
        assert_eq!(
            step_count(&lp(PrimExpr::int(i64::MAX), lp(PrimExpr::int(2), one))),
            None
        );
        let a = Attrs::new().with(AUTO_UNROLL_MAX_STEP, 8_i64);
        assert_eq!(max_step(&a), Some(8));
        assert_eq!(
            max_step(&Attrs::new().with(AUTO_UNROLL_MAX_STEP, "8")),
            None
        );
    }
}
