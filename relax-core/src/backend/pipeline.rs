//! The default pipeline of `relax::build` (TVM's `zero_pipeline`, followed
//! by dead-code elimination):
//!
//! 1. `LegalizeOps`: op calls to `call_tir` of generated PrimFuncs — on
//!    targets that legalize ([`Target::legalizes`]);
//! 2. `AnnotateTIROpPattern`: each PrimFunc's fusion pattern kind — idem;
//! 3. [`FoldConstant`]: op calls on constants evaluated at compile time;
//! 4. [`FuseOps`], [`FuseTIR`]: fusion (identity passes until fusion
//!    arrives with its issue) — idem;
//! 5. [`DeadCodeElimination`]: unused bindings and unreachable functions
//!    (legalization leaves PrimFuncs behind that folding made unused).
//!
//! `Target::interpreter()` is the oracle and runs steps 3 and 5 only. Steps
//! 1 and 2 join the list when `LegalizeOps` and `AnnotateTIROpPattern`
//! land (written on their own branch); until then the legalizing targets
//! run op calls on the reference kernels too.

use super::Target;
use crate::transform::{DeadCodeElimination, FoldConstant, FuseOps, FuseTIR, Sequential};

/// The passes `build` runs for `target`, in order. See the module docs.
pub fn pipeline(target: &Target) -> Sequential {
    if !target.legalizes() {
        return Sequential::new()
            .with(FoldConstant)
            .with(DeadCodeElimination::new());
    }
    Sequential::new()
        .with(FoldConstant)
        .with(FuseOps)
        .with(FuseTIR)
        .with(DeadCodeElimination::new())
}
