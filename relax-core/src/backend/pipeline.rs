//! The default pipeline of `relax::build` (TVM's `zero_pipeline`, followed
//! by dead-code elimination):
//!
//! 0. [`LambdaLift`]: local functions into module-level private ones (the
//!    VM runs module-level functions only);
//! 1. For `Target::host()`: [`ConvertLayout::for_host`] (a mobile net's
//!    convolutions in NHWC), [`Conv2dToMatmul`] (its 1 × 1 convolutions as
//!    matrix products), [`Conv2dWinograd`], then [`FoldConstant`] (which
//!    folds the weight transforms and permutations into constants on the
//!    reference kernels): the stride-1 3 × 3 convolutions where Winograd
//!    wins; then [`RewriteAttention`] (an export's decomposed attention as
//!    one `nn.attention`) and [`FlashAttention`]: `nn.attention` as one
//!    tiled kernel with an online softmax, where LegalizeOps would give
//!    TVM's composite;
//! 2. [`LegalizeOps`]: op calls to `call_tir` of generated PrimFuncs, with
//!    relu propagating NaN (as the reference kernel, numpy and PyTorch do)
//!    and each PrimFunc recording its op;
//! 3. [`AnnotateTIROpPattern`]: each PrimFunc's fusion pattern kind (its
//!    op's registered kind, for the PrimFuncs of step 2);
//! 4. [`FoldConstant`]: calls on constants evaluated at compile time (op
//!    calls on the reference kernels, `call_tir` on the loop-level
//!    interpreter);
//! 5. [`FuseOps`], [`FuseTIR`]: fusion (groups of bindings into primitive
//!    functions, each then one PrimFunc: [`fuse_ops`], [`fuse_tir`], with the
//!    options that keep the kernels fast);
//!    then [`RewriteDataflowReshape`] (TVM's build pipeline runs it next):
//!    a reshape left alone by fusion runs as a view, not a copy;
//! 6. For `Target::host()`: [`PrepackWeights`], the constant `B` of each
//!    matrix product in the packed GEMM's panel layout, so no call packs it;
//! 7. [`DeadCodeElimination`]: unused bindings and unreachable functions
//!    (the PrimFuncs of calls that folding or fusion removed go here);
//! 8. [`DefaultSchedule`] (`Target::host()`, and the loop-level
//!    interpreter when given a vector width): CPU loop schedules
//!    (parallel, vectorized and tiled loops) for the compiled PrimFuncs.
//!
//! `Target::interpreter()` is the oracle and runs steps 0, 4 and 7 only: its
//! op calls stay op calls, run on the reference kernels. Ahead-of-time
//! compilation runs steps 0 to 7 as the host does
//! ([`host_pipeline_unscheduled`]), then step 8 once per CPU level (the
//! panels of step 6 are the same for every level).

use super::{Target, TargetKind};
use crate::transform::{
    AnnotateTIROpPattern, Conv2dToMatmul, Conv2dWinograd, ConvertLayout, DeadCodeElimination,
    DefaultSchedule, FlashAttention, FoldConstant, FuseOps, FuseTIR, LambdaLift, LegalizeOps,
    PrepackWeights, RewriteAttention, RewriteDataflowReshape, Sequential,
};

/// LegalizeOps as step 2 runs it: relu propagates NaN, and each PrimFunc
/// records its op for AnnotateTIROpPattern.
pub fn legalize_ops() -> LegalizeOps {
    LegalizeOps::default()
        .relu_propagates_nan(true)
        .legalized_from(true)
}

/// FuseOps as step 5 runs it: a weight's injective op (the MLP's
/// `permute_dims`) joins the matmul that reads it
/// (`FuseOps::injective_weights`), and an injective op joins a group that
/// holds a matmul, a convolution or a reduction through an op after it
/// (`FuseOps::injective_producers`: a reshape read by a convolution's
/// epilogue `add`), where TVM's FuseOps leaves both alone.
pub fn fuse_ops() -> FuseOps {
    FuseOps::default()
        .injective_weights(true)
        .injective_producers(true)
}

/// FuseTIR as step 5 runs it: producers inlined into their readers
/// (`FuseTIR::inline_producers`), where TVM's FuseTIR keeps every
/// intermediate a buffer. A schedule decision (TVM's dlight makes it with
/// `compute_inline`), kept here until a schedule rule makes it.
pub fn fuse_tir() -> FuseTIR {
    FuseTIR::default().inline_producers(true)
}

/// The passes `build` runs for `target`, in order. See the module docs.
pub fn pipeline(target: &Target) -> Sequential {
    if !target.legalizes() {
        return Sequential::new()
            .with(LambdaLift)
            .with(FoldConstant)
            .with(DeadCodeElimination::default());
    }
    let passes = graph_passes(target.kind == TargetKind::Host);
    let tuned = |s: DefaultSchedule| match &target.tuned {
        Some(t) => s.with_tuned(t.clone()),
        None => s,
    };
    match (target.kind, target.vector_bits) {
        (TargetKind::Host, Some(bits)) | (TargetKind::TirInterpreter, Some(bits)) => {
            passes.with(tuned(DefaultSchedule::with_vector_bits(bits)))
        }
        (TargetKind::Host, None) => passes.with(tuned(DefaultSchedule::for_host())),
        _ => passes,
    }
}

/// The host pipeline without its loop schedules (steps 0 to 7): what
/// ahead-of-time compilation (`relax::aot`, `relax compile`) runs before
/// each CPU level's kernels get `DefaultSchedule` for that level's vector
/// width. Winograd convolutions included, as `relax::build` has them.
pub fn host_pipeline_unscheduled() -> Sequential {
    graph_passes(true)
}

/// Steps 0 to 7, with steps 1 and 6 when `host`.
fn graph_passes(host: bool) -> Sequential {
    let mut passes = Sequential::new().with(LambdaLift);
    if host {
        passes = passes
            .with(ConvertLayout::for_host())
            .with(Conv2dToMatmul)
            .with(Conv2dWinograd::default())
            .with(FoldConstant)
            .with(RewriteAttention)
            .with(FlashAttention);
    }
    passes = passes
        .with(legalize_ops())
        .with(AnnotateTIROpPattern)
        .with(FoldConstant)
        .with(fuse_ops())
        .with(fuse_tir())
        .with(RewriteDataflowReshape);
    if host {
        passes = passes.with(PrepackWeights);
    }
    passes.with(DeadCodeElimination::default())
}
