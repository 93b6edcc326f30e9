//! `ToNonDataflow`: every dataflow block becomes an ordinary binding block
//! and every dataflow variable an ordinary variable (TVM's
//! `relax.transform.ToNonDataflow`), as backends without dataflow regions
//! want them.

use super::Pass;
use crate::ir::expr::{BindingBlock, Var};
use crate::ir::IRModule;
use crate::mutator::{mutate_module, ExprMutator, MutatorState};
use relax_runtime::Error;

/// The pass. See the module docs.
#[derive(Clone, Copy, Debug, Default)]
pub struct ToNonDataflow;

impl Pass for ToNonDataflow {
    fn name(&self) -> &str {
        "ToNonDataflow"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        mutate_module(
            &mut Lift {
                state: MutatorState::with_module(&module),
            },
            &module,
        )
    }
}

struct Lift {
    state: MutatorState,
}

impl ExprMutator for Lift {
    fn state(&mut self) -> &mut MutatorState {
        &mut self.state
    }

    fn visit_dataflow_block(&mut self, block: &BindingBlock) {
        self.visit_binding_block_(block);
    }

    fn visit_var_def_dataflow_var(&mut self, var: &Var) -> Var {
        let v = Var::new(var.name_hint(), var.struct_info().cloned());
        self.var_remap().insert(var.clone(), v.clone());
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::structural_equal_report;

    #[test]
    fn dataflow_blocks_and_variables_become_ordinary() {
        let before: IRModule = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        with R.dataflow():
            lv0 = R.exp(x)
            lv1 = R.add(lv0, x)
            gv = R.nn.relu(lv1)
            R.output(gv)
        return gv
"#
        .parse()
        .unwrap();
        let expected: IRModule = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="float32"):
        lv0 = R.exp(x)
        lv1 = R.add(lv0, x)
        gv = R.nn.relu(lv1)
        return gv
"#
        .parse()
        .unwrap();
        let after = ToNonDataflow.run(before).unwrap();
        crate::analysis::well_formed(&after).unwrap();
        if let Err(e) = structural_equal_report(&after, &expected) {
            panic!("{e}\n{after}");
        }
    }
}
