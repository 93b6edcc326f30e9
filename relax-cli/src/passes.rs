//! The passes `relax print --passes` and `relax dot --fuse` run, by name.

use relax_core::ir::IRModule;
use relax_core::transform::{
    AnnotateTIROpPattern, CanonicalizeBindings, ConvertToDataflow, DeadCodeElimination,
    DecomposeOpsForInference, DefaultSchedule, EliminateCommonSubexpr, FoldConstant, FuseOps,
    FuseTIR, InlinePrivateFunctions, LambdaLift, LegalizeOps, LiftTransformParams, Pass,
    ToNonDataflow,
};

/// The names `run` knows.
pub const NAMES: &[&str] = &[
    "LambdaLift",
    "LegalizeOps",
    "AnnotateTIROpPattern",
    "FoldConstant",
    "FuseOps",
    "FuseTIR",
    "DeadCodeElimination",
    "DefaultSchedule",
    "CanonicalizeBindings",
    "EliminateCommonSubexpr",
    "ConvertToDataflow",
    "ToNonDataflow",
    "InlinePrivateFunctions",
    "DecomposeOpsForInference",
    "LiftTransformParams",
];

/// Runs the pass named `name` on `module`.
pub fn run(name: &str, module: IRModule) -> Result<IRModule, String> {
    let pass: Box<dyn Pass> = match name {
        "LambdaLift" => Box::new(LambdaLift),
        "LegalizeOps" => Box::new(LegalizeOps::new()),
        "AnnotateTIROpPattern" => Box::new(AnnotateTIROpPattern),
        "FoldConstant" => Box::new(FoldConstant),
        "FuseOps" => Box::new(FuseOps::default()),
        "FuseTIR" => Box::new(FuseTIR),
        "DeadCodeElimination" => Box::new(DeadCodeElimination::new()),
        "DefaultSchedule" => Box::new(DefaultSchedule::for_host()),
        "CanonicalizeBindings" => Box::new(CanonicalizeBindings),
        "EliminateCommonSubexpr" => Box::new(EliminateCommonSubexpr::default()),
        "ConvertToDataflow" => Box::new(ConvertToDataflow::default()),
        "ToNonDataflow" => Box::new(ToNonDataflow),
        "InlinePrivateFunctions" => Box::new(InlinePrivateFunctions),
        "DecomposeOpsForInference" => Box::new(DecomposeOpsForInference::new()),
        "LiftTransformParams" => Box::new(LiftTransformParams),
        _ => {
            return Err(format!(
                "no pass named `{name}` (passes: {})",
                NAMES.join(", ")
            ))
        }
    };
    pass.run(module).map_err(|e| format!("{name}: {e}"))
}
