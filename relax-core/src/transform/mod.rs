//! Passes: module-to-module transformations.
//!
//! 1. A pass is a small value implementing [`Pass`]: a name and
//!    `run(module) -> Result<IRModule, Error>`.
//! 2. [`Sequential`] runs passes in order; in debug builds it checks
//!    well-formedness after each one and names the pass that broke it.
//! 3. [`Pass::run_in`] runs a pass in a [`PassContext`]: instruments
//!    ([`PassTimingInstrument`], [`PrintAfterAll`], ...) see every pass,
//!    nested ones included, and passes can be disabled by name. A pass
//!    that panics becomes an error naming it.
//!
//! | file | pass |
//! |---|---|
//! | `legalize_ops.rs`, `legalize/` | `LegalizeOps`: op calls to `call_tir` of PrimFuncs, one file per op group |
//! | `annotate_tir_op_pattern.rs` | `AnnotateTIROpPattern`: each PrimFunc's fusion pattern kind |
//! | `bind_params.rs`, `bind_symbolic_vars.rs` | `BindParams` (parameters to constants), `BindSymbolicVars` (symbolic dims to constants or expressions) |
//! | `canonicalize_bindings.rs`, `eliminate_common_subexpr.rs`, `fold_constant.rs`, `dead_code_elimination.rs` | the clean-ups |
//! | `convert_to_dataflow.rs`, `to_non_dataflow.rs`, `to_basic_block_normal_form.rs`, `topological_sort.rs` | block structure |
//! | `conv2d_to_matmul.rs` | `Conv2dToMatmul`: a 1 × 1 NHWC convolution as `R.matmul` by the reshaped weight |
//! | `conv2d_winograd.rs` | `Conv2dWinograd`: stride-1 3 × 3 convolutions with a constant weight as Winograd F(m × m, 3 × 3): weight transform folded at compile time, tile transforms, a batched matmul |
//! | `convert_layout.rs` | `ConvertLayout`: convolutions to a desired layout (NHWC), carried through elementwise ops and reductions, `permute_dims` where it must leave |
//! | `decompose_ops.rs` | `DecomposeOpsForInference`: `nn.batch_norm` into the primitive ops that compute it |
//! | `lift_transform_params.rs` | `LiftTransformParams`: weight-only bindings into `<name>_transform_params` |
//! | `gradient.rs`, `gradient/rules.rs` | `Gradient`: reverse-mode differentiation, the sweep and one rule per op |
//! | `remove_unused_outputs.rs`, `remove_unused_parameters.rs`, `inline_private_functions.rs`, `lambda_lift.rs` | private functions: unused outputs and parameters, inlining, lifting local functions |
//! | `fuse_ops.rs`, `fuse_tir.rs`, `fuse_ops_by_pattern.rs` | fusion: groups from `analysis::graph_partitioner` into `Primitive` functions, each then one PrimFunc; named `dpl` patterns into `Composite` functions |
//! | `default_schedule.rs`, `default_schedule/` | `DefaultSchedule`: CPU loop schedules (injective and transposes, reductions, the packed GEMM, convolutions as implicit GEMMs, dot products, epilogues, row reductions, pooling windows) |
//! | `apply_schedule.rs` | `ApplySchedule`: a user's own `tir::schedule::Schedule` for named PrimFuncs, marked `tir.is_scheduled` so that `DefaultSchedule` keeps it |
//! | `to_mixed_precision.rs`, `to_mixed_precision/` | `ToMixedPrecision`: float32 computation in float16/bfloat16 with float32 accumulation; the op policies, the backward analysis |
//! | `fake_quantization_to_integer.rs` | `FakeQuantizationToInteger`: a matmul of dequantized 8-bit tensors as an `int32` matmul of the 8-bit tensors, zero-point corrections and one rescale |
//! | `pass_context.rs`, `instrument.rs` | `PassContext` and the instruments |

pub mod annotate_tir_op_pattern;
pub mod apply_schedule;
pub mod bind_params;
pub mod bind_symbolic_vars;
pub mod canonicalize_bindings;
pub mod conv2d_to_matmul;
pub mod conv2d_winograd;
pub mod convert_layout;
pub mod convert_to_dataflow;
pub mod dead_code_elimination;
pub mod decompose_ops;
pub mod default_schedule;
pub mod eliminate_common_subexpr;
pub mod fake_quantization_to_integer;
pub mod flash_attention;
pub mod fold_constant;
pub mod fuse_ops;
pub mod fuse_ops_by_pattern;
pub mod fuse_tir;
pub mod gradient;
pub mod inline_private_functions;
pub mod instrument;
pub mod lambda_lift;
pub mod legalize;
pub mod legalize_ops;
pub mod lift_transform_params;
pub mod pass_context;
pub mod progress;
pub mod remove_unused_outputs;
pub mod remove_unused_parameters;
pub mod rewrite_attention;
pub mod rewrite_dataflow_reshape;
#[cfg(test)]
mod test_util;
pub mod to_basic_block_normal_form;
pub mod to_mixed_precision;
pub mod to_non_dataflow;
pub mod topological_sort;
pub use annotate_tir_op_pattern::AnnotateTIROpPattern;
pub use apply_schedule::ApplySchedule;
pub use bind_params::BindParams;
pub use bind_symbolic_vars::{BindSymbolicVars, SymbolicVar};
pub use canonicalize_bindings::CanonicalizeBindings;
pub use conv2d_to_matmul::Conv2dToMatmul;
pub use conv2d_winograd::Conv2dWinograd;
pub use convert_layout::ConvertLayout;
pub use convert_to_dataflow::ConvertToDataflow;
pub use dead_code_elimination::DeadCodeElimination;
pub use decompose_ops::DecomposeOpsForInference;
pub use default_schedule::{
    kernel_key, vdpbf16ps_pays, Blocking, DefaultSchedule, Knobs, PrepackWeights,
};
pub use eliminate_common_subexpr::EliminateCommonSubexpr;
pub use fake_quantization_to_integer::FakeQuantizationToInteger;
pub use flash_attention::FlashAttention;
pub use fold_constant::FoldConstant;
pub use fuse_ops::FuseOps;
pub use fuse_ops_by_pattern::{FuseOpsByPattern, FusionPattern};
pub use fuse_tir::FuseTIR;
pub use gradient::Gradient;
pub use inline_private_functions::InlinePrivateFunctions;
pub use instrument::{
    PassInfo, PassInstrument, PassTiming, PassTimingInstrument, PrintAfterAll, PrintBeforeAll,
};
pub use lambda_lift::LambdaLift;
pub use legalize_ops::LegalizeOps;
pub use lift_transform_params::LiftTransformParams;
pub use pass_context::PassContext;
pub use progress::{BuildStage, Progress, ProgressEvent};
pub use remove_unused_outputs::RemoveUnusedOutputs;
pub use remove_unused_parameters::RemoveUnusedParameters;
pub use rewrite_attention::RewriteAttention;
pub use rewrite_dataflow_reshape::RewriteDataflowReshape;
pub use to_basic_block_normal_form::{to_basic_block_normal_form, ToBasicBlockNormalForm};
pub use to_mixed_precision::ToMixedPrecision;
pub use to_non_dataflow::ToNonDataflow;
pub use topological_sort::{SortDirection, SortOrder, TopologicalSort};

use crate::analysis::well_formed;
use crate::ir::IRModule;
use relax_runtime::{Diagnostic, Error};

/// A module-to-module transformation.
pub trait Pass: Send + Sync {
    /// The pass name, as TVM spells it (`FuseOps`, `LegalizeOps`).
    fn name(&self) -> &str;
    /// Transforms `module`.
    fn run(&self, module: IRModule) -> Result<IRModule, Error>;
    /// Transforms `module` in `ctx`: the context's instruments see this
    /// pass (and, for a [`Sequential`], every pass inside it), and a
    /// disabled pass returns `module` unchanged. Implement [`run`](Pass::run);
    /// this default wraps it.
    fn run_in(&self, module: IRModule, ctx: &PassContext) -> Result<IRModule, Error> {
        ctx.run_instrumented(self.name(), module, |module| self.run(module))
    }
}

/// Passes run one after another.
#[derive(Default)]
pub struct Sequential {
    passes: Vec<Box<dyn Pass>>,
}

impl Sequential {
    /// An empty pipeline.
    pub fn new() -> Self {
        Self::default()
    }
    /// This pipeline followed by `pass`.
    pub fn with(mut self, pass: impl Pass + 'static) -> Self {
        self.passes.push(Box::new(pass));
        self
    }
    /// The pass names, in order.
    pub fn pass_names(&self) -> Vec<&str> {
        self.passes.iter().map(|p| p.name()).collect()
    }
}

impl Pass for Sequential {
    fn name(&self) -> &str {
        "Sequential"
    }
    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        self.run_in(module, &PassContext::new())
    }
    fn run_in(&self, module: IRModule, ctx: &PassContext) -> Result<IRModule, Error> {
        ctx.run_instrumented(self.name(), module, |mut module| {
            for pass in &self.passes {
                module = pass.run_in(module, ctx)?;
                if cfg!(debug_assertions) {
                    if let Err(ds) = well_formed(&module) {
                        let mut out = vec![Diagnostic::new(
                            "pass-broke-well-formedness",
                            format!("pass {} produced an ill-formed module", pass.name()),
                        )];
                        out.extend(ds);
                        return Err(Error::Compile(out));
                    }
                }
            }
            Ok(module)
        })
    }
}
