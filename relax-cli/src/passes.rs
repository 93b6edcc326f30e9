//! The passes `relax print --passes` and `relax dot --fuse` run, by name.
//!
//! A pass with a parameter takes it in parentheses:
//! `ToMixedPrecision(bfloat16)` computes in bfloat16 (plain
//! `ToMixedPrecision` in float16, TVM's default), accumulating in float32.

use relax_core::ir::IRModule;
use relax_core::transform::{
    AnnotateTIROpPattern, CanonicalizeBindings, Conv2dToMatmul, Conv2dWinograd, ConvertLayout,
    ConvertToDataflow, DeadCodeElimination, DecomposeOpsForInference, DefaultSchedule,
    EliminateCommonSubexpr, FakeQuantizationToInteger, FlashAttention, FoldConstant, FuseOps,
    FuseTIR, InlinePrivateFunctions, LambdaLift, LegalizeOps, LiftTransformParams, Pass,
    PrepackWeights, RewriteAttention, RewriteDataflowReshape, ToMixedPrecision, ToNonDataflow,
};
use relax_runtime::DataType;

/// The names `run` knows.
pub const NAMES: &[&str] = &[
    "LambdaLift",
    "LegalizeOps",
    "AnnotateTIROpPattern",
    "FoldConstant",
    "FuseOps",
    "FuseTIR",
    "DeadCodeElimination",
    "PrepackWeights",
    "DefaultSchedule",
    "CanonicalizeBindings",
    "EliminateCommonSubexpr",
    "ConvertToDataflow",
    "ToNonDataflow",
    "InlinePrivateFunctions",
    "DecomposeOpsForInference",
    "LiftTransformParams",
    "FakeQuantizationToInteger",
    "Conv2dWinograd",
    "ConvertLayout",
    "Conv2dToMatmul",
    "RewriteAttention",
    "FlashAttention",
    "RewriteDataflowReshape",
    "ToMixedPrecision(float16|bfloat16)",
];

/// The mixed dtype `ToMixedPrecision(arg)` names: `float16` or `bfloat16`
/// (also `f16`, `bf16`).
pub fn mixed_dtype(arg: &str) -> Result<DataType, String> {
    match arg.trim() {
        "float16" | "f16" => Ok(DataType::f16()),
        "bfloat16" | "bf16" => Ok(DataType::bf16()),
        other => Err(format!(
            "ToMixedPrecision: the mixed dtype must be float16 or bfloat16, found `{other}`"
        )),
    }
}

/// Runs the pass named `name` (with its parameter in parentheses, if it
/// takes one) on `module`.
pub fn run(spec: &str, module: IRModule) -> Result<IRModule, String> {
    let (name, arg) = match spec.split_once('(') {
        Some((name, rest)) => {
            let arg = rest
                .strip_suffix(')')
                .ok_or_else(|| format!("`{spec}`: a parameter is written `{name}(value)`"))?;
            (name.trim(), Some(arg))
        }
        None => (spec.trim(), None),
    };
    if let Some(arg) = arg {
        if name != "ToMixedPrecision" {
            return Err(format!("{name} takes no parameter, and `{arg}` was given"));
        }
    }
    let pass: Box<dyn Pass> = match name {
        "ToMixedPrecision" => {
            let dtype = arg.map_or(Ok(DataType::f16()), mixed_dtype)?;
            Box::new(ToMixedPrecision::with_dtype(dtype))
        }
        "LambdaLift" => Box::new(LambdaLift),
        "LegalizeOps" => Box::new(LegalizeOps::default()),
        "AnnotateTIROpPattern" => Box::new(AnnotateTIROpPattern),
        "FoldConstant" => Box::new(FoldConstant),
        "FuseOps" => Box::new(FuseOps::default()),
        "FuseTIR" => Box::new(FuseTIR::default()),
        "DeadCodeElimination" => Box::new(DeadCodeElimination::default()),
        "PrepackWeights" => Box::new(PrepackWeights),
        "DefaultSchedule" => Box::new(DefaultSchedule::for_host()),
        "CanonicalizeBindings" => Box::new(CanonicalizeBindings),
        "EliminateCommonSubexpr" => Box::new(EliminateCommonSubexpr::default()),
        "ConvertToDataflow" => Box::new(ConvertToDataflow::default()),
        "ToNonDataflow" => Box::new(ToNonDataflow),
        "InlinePrivateFunctions" => Box::new(InlinePrivateFunctions),
        "DecomposeOpsForInference" => Box::new(DecomposeOpsForInference::default()),
        "LiftTransformParams" => Box::new(LiftTransformParams),
        "FakeQuantizationToInteger" => Box::new(FakeQuantizationToInteger::default()),
        "Conv2dWinograd" => Box::new(Conv2dWinograd::default()),
        // TVM's usual CPU choice: every conv2d to NHWC data, HWIO weights.
        "ConvertLayout" => Box::new(
            ConvertLayout::new([("relax.nn.conv2d", vec!["NHWC", "HWIO"])])
                .map_err(|e| e.to_string())?,
        ),
        "Conv2dToMatmul" => Box::new(Conv2dToMatmul),
        "RewriteAttention" => Box::new(RewriteAttention),
        "FlashAttention" => Box::new(FlashAttention),
        "RewriteDataflowReshape" => Box::new(RewriteDataflowReshape),
        _ => {
            return Err(format!(
                "no pass named `{name}` (passes: {})",
                NAMES.join(", ")
            ))
        }
    };
    pass.run(module).map_err(|e| format!("{name}: {e}"))
}
