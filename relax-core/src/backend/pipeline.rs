//! The default pipeline of `relax::build` (TVM's `zero_pipeline`, followed
//! by dead-code elimination):
//!
//! 0. [`LambdaLift`]: local functions into module-level private ones (the
//!    VM runs module-level functions only);
//! 1. For `Target::host()`: [`Conv2dWinograd`], then [`FoldConstant`]
//!    (which folds its weight transforms into constants on the reference
//!    kernels): the stride-1 3 × 3 convolutions where Winograd wins;
//! 2. [`LegalizeOps`]: op calls to `call_tir` of generated PrimFuncs;
//! 3. [`AnnotateTIROpPattern`]: each PrimFunc's fusion pattern kind;
//! 4. [`FoldConstant`]: calls on constants evaluated at compile time (op
//!    calls on the reference kernels, `call_tir` on the loop-level
//!    interpreter);
//! 5. [`FuseOps`], [`FuseTIR`]: fusion (groups of bindings into primitive
//!    functions, each then one PrimFunc);
//! 6. [`DeadCodeElimination`]: unused bindings and unreachable functions
//!    (the PrimFuncs of calls that folding or fusion removed go here);
//! 7. [`DefaultSchedule`] (`Target::host()`, and the loop-level
//!    interpreter when given a vector width): CPU loop schedules
//!    (parallel, vectorized and tiled loops) for the compiled PrimFuncs.
//!
//! `Target::interpreter()` is the oracle and runs steps 0, 4 and 6 only: its
//! op calls stay op calls, run on the reference kernels.

use super::{Target, TargetKind};
use crate::transform::{
    AnnotateTIROpPattern, Conv2dWinograd, DeadCodeElimination, DefaultSchedule, FoldConstant,
    FuseOps, FuseTIR, LambdaLift, LegalizeOps, Sequential,
};

/// The passes `build` runs for `target`, in order. See the module docs.
pub fn pipeline(target: &Target) -> Sequential {
    if !target.legalizes() {
        return Sequential::new()
            .with(LambdaLift)
            .with(FoldConstant)
            .with(DeadCodeElimination::default());
    }
    let mut passes = Sequential::new().with(LambdaLift);
    if target.kind == TargetKind::Host {
        passes = passes.with(Conv2dWinograd::default()).with(FoldConstant);
    }
    let passes = passes
        .with(LegalizeOps::default())
        .with(AnnotateTIROpPattern)
        .with(FoldConstant)
        .with(FuseOps::default())
        .with(FuseTIR)
        .with(DeadCodeElimination::default());
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
