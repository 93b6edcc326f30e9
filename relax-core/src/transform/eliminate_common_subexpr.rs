//! `EliminateCommonSubexpr`: a binding whose value repeats an earlier
//! binding's of the same block reads that binding instead (TVM's
//! `relax.transform.EliminateCommonSubexpr`).
//!
//! 1. Values are compared structurally, their variables by identity (after
//!    the rewrites of earlier bindings), within one binding block: a
//!    dataflow variable of another block could not be read here.
//! 2. Only pure values count: calls of pure operators, `call_tir` and the
//!    like, tuples and tuple fields; an impure call is never merged, and
//!    neither are leaves (variables, constants: nothing to save).
//! 3. The repeat becomes an alias of the first: gone, its uses reading the
//!    first, unless it is a block output and the first a dataflow
//!    variable, when it stays as `repeat = first`.
//!    With `call_only`, only calls are merged (TVM's option).

use super::Pass;
use crate::analysis::derive::is_impure_call;
use crate::ir::expr::{BindingBlock, ExprKind, Var, VarBinding};
use crate::ir::{structural_equal, structural_hash, Expr, IRModule};
use crate::mutator::{mutate_module, ExprMutator, MutatorState};
use relax_runtime::Error;
use std::collections::HashMap;

/// The pass. See the module docs.
#[derive(Clone, Copy, Debug, Default)]
pub struct EliminateCommonSubexpr {
    /// Merge calls only (not tuples and tuple fields).
    pub call_only: bool,
}

impl Pass for EliminateCommonSubexpr {
    fn name(&self) -> &str {
        "EliminateCommonSubexpr"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        let mut m = Cse {
            state: MutatorState::with_module(&module),
            seen: HashMap::new(),
            call_only: self.call_only,
        };
        mutate_module(&mut m, &module)
    }
}

struct Cse {
    state: MutatorState,
    /// This block's values so far, by structural hash: (value, variable).
    seen: HashMap<u64, Vec<(Expr, Var)>>,
    call_only: bool,
}

impl Cse {
    fn candidate(&self, value: &Expr) -> bool {
        match value.kind() {
            ExprKind::Call(c) => !is_impure_call(c),
            ExprKind::Tuple(_) | ExprKind::TupleGetItem(..) => !self.call_only,
            _ => false,
        }
    }
}

impl ExprMutator for Cse {
    fn state(&mut self) -> &mut MutatorState {
        &mut self.state
    }

    /// Each block starts with nothing seen (point 1 of the module docs).
    fn visit_binding_block(&mut self, block: &BindingBlock) {
        let outer = std::mem::take(&mut self.seen);
        if block.is_dataflow {
            self.visit_dataflow_block(block)
        } else {
            self.visit_binding_block_(block)
        }
        self.seen = outer;
    }

    fn visit_var_binding(&mut self, binding: &VarBinding) {
        let value = self.visit_expr(&binding.value);
        if !self.candidate(&value) {
            self.reemit_binding(binding, value);
            return;
        }
        let key = structural_hash(&value);
        let first = self
            .seen
            .get(&key)
            .and_then(|vs| vs.iter().find(|(v, _)| structural_equal(v, &value)))
            .map(|(_, var)| var.clone());
        match first {
            Some(first) if binding.var.is_dataflow() || !first.is_dataflow() => {
                self.var_remap().insert(binding.var.clone(), first);
            }
            Some(first) => self.reemit_binding(binding, first.to_expr()),
            None => {
                self.reemit_binding(binding, value.clone());
                let var = self
                    .var_remap()
                    .get(&binding.var)
                    .cloned()
                    .unwrap_or_else(|| binding.var.clone());
                self.seen.entry(key).or_default().push((value, var));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::structural_equal_report;

    fn check(pass: EliminateCommonSubexpr, before: &str, expected: &str) {
        let before: IRModule = before.parse().unwrap_or_else(|e| panic!("{e}"));
        let expected: IRModule = expected.parse().unwrap_or_else(|e| panic!("{e}"));
        let after = pass.run(before).unwrap();
        crate::analysis::well_formed(&after).unwrap_or_else(|e| panic!("{e:?}\n{after}"));
        if let Err(e) = structural_equal_report(&after, &expected) {
            panic!("{e}\n{after}");
        }
    }

    #[test]
    fn a_repeated_call_reads_the_first() {
        check(
            EliminateCommonSubexpr::default(),
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32"), y: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        with R.dataflow():
            lv0 = R.add(x, y)
            lv1 = R.add(x, y)
            gv = R.multiply(lv0, lv1)
            R.output(gv)
        return gv
"#,
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32"), y: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        with R.dataflow():
            lv0 = R.add(x, y)
            gv = R.multiply(lv0, lv0)
            R.output(gv)
        return gv
"#,
        );
    }

    #[test]
    fn merges_cascade_and_outputs_keep_a_binding() {
        check(
            EliminateCommonSubexpr::default(),
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tuple(R.Tensor((2, 3), dtype="float32"), R.Tensor((2, 3), dtype="float32")):
        with R.dataflow():
            a = R.exp(x)
            b = R.exp(x)
            c = R.nn.relu(a)
            d = R.nn.relu(b)
            gv = R.nn.relu(b)
            R.output(gv, d)
        return (gv, d)
"#,
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tuple(R.Tensor((2, 3), dtype="float32"), R.Tensor((2, 3), dtype="float32")):
        with R.dataflow():
            a = R.exp(x)
            c = R.nn.relu(a)
            d = c
            gv = c
            R.output(gv, d)
        return (gv, d)
"#,
        );
    }

    #[test]
    fn impure_calls_and_other_blocks_are_not_merged() {
        let text = r#"
@I.ir_module
class Module:
    @R.function(pure=False)
    def main(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        a = R.call_packed("side_effect", x, sinfo_args=R.Tensor((2,), dtype="float32"))
        b = R.call_packed("side_effect", x, sinfo_args=R.Tensor((2,), dtype="float32"))
        with R.dataflow():
            c = R.exp(x)
            R.output(c)
        m = R.add(c, x)
        with R.dataflow():
            d = R.exp(x)
            R.output(d)
        e = R.add(m, d)
        return e
"#;
        check(EliminateCommonSubexpr::default(), text, text);
    }

    #[test]
    fn call_only_leaves_tuples() {
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2,), dtype="float32")) -> R.Tuple(R.Tuple(R.Tensor((2,), dtype="float32"), R.Tensor((2,), dtype="float32")), R.Tuple(R.Tensor((2,), dtype="float32"), R.Tensor((2,), dtype="float32"))):
        t = (x, x)
        u = (x, x)
        r = (t, u)
        return r
"#;
        check(EliminateCommonSubexpr { call_only: true }, text, text);
    }
}
