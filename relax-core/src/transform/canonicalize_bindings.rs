//! `CanonicalizeBindings`: removes indirection between variables (TVM's
//! `relax.transform.CanonicalizeBindings`).
//!
//! 1. A binding of a variable to another (`y = x`) is removed and the uses
//!    of `y` read `x`, unless `y` is a dataflow block's output and `x` a
//!    dataflow variable (`x` could not be seen after the block).
//! 2. A `match_cast` whose value already has exactly the target StructInfo
//!    is such a binding too.
//! 3. A field of a tuple built in the same function (`t = (a, b); c = t[0]`)
//!    is the field itself (`c` becomes an alias of `a`, then rule 1).
//!
//! Bindings left unused are kept (`DeadCodeElimination` removes them).
//! Not done yet (TVM does it): turning block outputs that are used only
//! inside the block into dataflow variables.

use super::Pass;
use crate::ir::expr::{Binding, ExprKind, MatchCast, VarBinding};
use crate::ir::{structural_equal, Expr, IRModule};
use crate::mutator::{mutate_module, ExprMutator, MutatorState};
use relax_runtime::Error;

/// The pass. See the module docs.
#[derive(Clone, Copy, Debug, Default)]
pub struct CanonicalizeBindings;

impl Pass for CanonicalizeBindings {
    fn name(&self) -> &str {
        "CanonicalizeBindings"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        let mut m = Canonicalizer {
            state: MutatorState::with_module(&module),
        };
        mutate_module(&mut m, &module)
    }
}

struct Canonicalizer {
    state: MutatorState,
}

impl Canonicalizer {
    /// Rule 3: the field a tuple get-item reads, when the tuple is known.
    fn known_field(&mut self, value: &Expr) -> Option<Expr> {
        let ExprKind::TupleGetItem(t, i) = value.kind() else {
            return None;
        };
        let tv = t.as_var()?;
        match self.lookup_binding(tv)?.kind() {
            ExprKind::Tuple(fields) => fields.get(*i).cloned(),
            _ => None,
        }
    }

    /// Rule 1: `var = value` folds away when `value` is a variable that
    /// may stand for `var` everywhere `var` is used.
    fn fold(&mut self, var: &crate::ir::expr::Var, value: &Expr) -> bool {
        let ExprKind::Var(target) = value.kind() else {
            return false;
        };
        if !var.is_dataflow() && target.is_dataflow() {
            return false;
        }
        self.var_remap().insert(var.clone(), target.clone());
        true
    }
}

impl ExprMutator for Canonicalizer {
    fn state(&mut self) -> &mut MutatorState {
        &mut self.state
    }

    fn visit_var_binding(&mut self, binding: &VarBinding) {
        let value = self.visit_expr(&binding.value);
        let value = self.known_field(&value).unwrap_or(value);
        if self.fold(&binding.var, &value) {
            return;
        }
        self.reemit_binding(binding, value);
    }

    fn visit_match_cast(&mut self, binding: &MatchCast) {
        let value = self.visit_expr(&binding.value);
        let same = value
            .struct_info()
            .is_some_and(|s| structural_equal(s, &binding.struct_info));
        if same && self.fold(&binding.var, &value) {
            return;
        }
        // Re-emitted as the default mutator does, with the visited value.
        let value = self.normalize_argument(value);
        let var = self.visit_var_def(&binding.var);
        let out = Binding::match_cast(var, value, binding.struct_info.clone());
        if let Err(e) = self.builder().emit_normalized(out) {
            self.builder().report(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::structural_equal_report;

    fn check(before: &str, expected: &str) {
        let before: IRModule = before.parse().unwrap_or_else(|e| panic!("{e}"));
        let expected: IRModule = expected.parse().unwrap_or_else(|e| panic!("{e}"));
        let after = CanonicalizeBindings.run(before).unwrap();
        crate::analysis::well_formed(&after).unwrap_or_else(|e| panic!("{e:?}\n{after}"));
        if let Err(e) = structural_equal_report(&after, &expected) {
            panic!("{e}\n{after}");
        }
    }

    #[test]
    fn simple_aliases_fold_away() {
        check(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        y = x
        z = y
        w = R.add(z, y)
        return w
"#,
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        w = R.add(x, x)
        return w
"#,
        );
    }

    #[test]
    fn dataflow_aliases_fold_but_an_output_keeps_its_dataflow_source() {
        check(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        with R.dataflow():
            lv = x
            lv1 = R.add(lv, lv)
            lv2 = lv1
            gv = lv2
            R.output(gv)
        return gv
"#,
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        with R.dataflow():
            lv1 = R.add(x, x)
            gv = lv1
            R.output(gv)
        return gv
"#,
        );
    }

    #[test]
    fn known_tuple_fields_and_redundant_match_casts() {
        check(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32"), y: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        t = (x, y)
        a = t[1]
        b = R.match_cast(a, R.Tensor((4,), dtype="float32"))
        c = R.add(b, x)
        return c
"#,
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32"), y: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        t = (x, y)
        c = R.add(y, x)
        return c
"#,
        );
    }
}
