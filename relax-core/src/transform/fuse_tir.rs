//! `FuseTIR`: merges the `call_tir`s of each primitive function made by
//! `FuseOps` into one PrimFunc (TVM's `relax.transform.FuseTIR`).
//!
//! For now this is the identity: fusion arrives with its issue, and until
//! `FuseOps` creates primitive functions there is nothing to merge. The pass
//! holds its place in the default pipeline (`backend::pipeline`).

use crate::ir::IRModule;
use crate::transform::Pass;
use relax_runtime::Error;

/// PrimFunc fusion; the identity until fusion arrives with its issue. See
/// the module docs.
#[derive(Clone, Copy, Debug, Default)]
pub struct FuseTIR;

impl Pass for FuseTIR {
    fn name(&self) -> &str {
        "FuseTIR"
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
    @T.prim_func(private=True)
    def add(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
        T.evaluate(0)

    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        cls = Module
        with R.dataflow():
            a = R.call_tir(cls.add, (x, x), out_sinfo=R.Tensor((4,), dtype="float32"))
            R.output(a)
        return a
"#;
        let before: IRModule = text.parse().unwrap();
        let after = FuseTIR.run(before.clone()).unwrap();
        structural_equal_report(&after, &before).unwrap();
        assert_eq!(after.to_string(), before.to_string());
    }
}
