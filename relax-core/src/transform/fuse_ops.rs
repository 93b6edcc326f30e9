//! `FuseOps`: groups the bindings of dataflow blocks into primitive
//! functions (TVM's `relax.transform.FuseOps`).
//!
//! For now this is the identity: fusion arrives with its issue. The pass
//! exists so that the default pipeline (`backend::pipeline`) already has
//! TVM's shape — LegalizeOps, AnnotateTIROpPattern, FoldConstant, FuseOps,
//! FuseTIR, DeadCodeElimination — and gains fusion without changing.

use crate::ir::IRModule;
use crate::transform::Pass;
use relax_runtime::Error;

/// Operator fusion; the identity until fusion arrives with its issue. See
/// the module docs.
#[derive(Clone, Copy, Debug, Default)]
pub struct FuseOps;

impl Pass for FuseOps {
    fn name(&self) -> &str {
        "FuseOps"
    }
    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        Ok(module)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::structural_equal_report;

    #[test]
    fn leaves_a_module_unchanged() {
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 4), dtype="float32"), w: R.Tensor((4, 4), dtype="float32")) -> R.Tensor(("n", 4), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            a = R.matmul(x, w)
            b = R.nn.relu(a)
            R.output(b)
        return b
"#;
        let before: IRModule = text.parse().unwrap();
        let after = FuseOps.run(before.clone()).unwrap();
        structural_equal_report(&after, &before).unwrap();
        assert_eq!(after.to_string(), before.to_string());
    }
}
