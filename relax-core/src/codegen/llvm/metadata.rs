//! Loop metadata (`!llvm.loop`): hints to LLVM's unroller and vectorizer.
//!
//! A loop ID is a distinct node whose first operand is itself, followed by
//! the options (`!{!"llvm.loop.unroll.full"}`). inkwell cannot build a
//! self-referential node, so this file goes through the C API: a temporary
//! node stands for the first operand and is then replaced by the node.

use inkwell::context::Context;
use inkwell::llvm_sys::core::{
    LLVMConstInt, LLVMGetMDKindIDInContext, LLVMInt1TypeInContext, LLVMMDNodeInContext2,
    LLVMMDStringInContext2, LLVMMetadataAsValue, LLVMSetMetadata, LLVMValueAsMetadata,
};
use inkwell::llvm_sys::debuginfo::{LLVMMetadataReplaceAllUsesWith, LLVMTemporaryMDNode};
use inkwell::llvm_sys::prelude::LLVMMetadataRef;
use inkwell::values::{AsValueRef, InstructionValue};

/// What a loop asks of LLVM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum LoopHint {
    /// Nothing.
    None,
    /// Unroll completely (`Unrolled` with a constant extent).
    UnrollFull,
    /// Unroll as LLVM sees fit (`Unrolled` with a symbolic extent).
    UnrollEnable,
    /// Vectorize (a `Vectorized` loop emitted as a scalar loop).
    Vectorize,
}

/// Attaches `hint` to the back edge `latch` of a loop.
pub(super) fn attach(ctx: &Context, latch: InstructionValue<'_>, hint: LoopHint) {
    let option = match hint {
        LoopHint::None => return,
        LoopHint::UnrollFull => "llvm.loop.unroll.full",
        LoopHint::UnrollEnable => "llvm.loop.unroll.enable",
        LoopHint::Vectorize => "llvm.loop.vectorize.enable",
    };
    // SAFETY: every reference comes from `ctx`, which outlives this call;
    // the temporary node is consumed by LLVMMetadataReplaceAllUsesWith.
    unsafe {
        let c = ctx.raw();
        let mut option_ops: Vec<LLVMMetadataRef> = vec![LLVMMDStringInContext2(
            c,
            option.as_ptr() as *const _,
            option.len(),
        )];
        if hint == LoopHint::Vectorize {
            let yes = LLVMConstInt(LLVMInt1TypeInContext(c), 1, 0);
            option_ops.push(LLVMValueAsMetadata(yes));
        }
        let option_node = LLVMMDNodeInContext2(c, option_ops.as_mut_ptr(), option_ops.len());
        let temp = LLVMTemporaryMDNode(c, std::ptr::null_mut(), 0);
        let mut ops = [temp, option_node];
        let id = LLVMMDNodeInContext2(c, ops.as_mut_ptr(), ops.len());
        LLVMMetadataReplaceAllUsesWith(temp, id);
        let name = "llvm.loop";
        let kind = LLVMGetMDKindIDInContext(c, name.as_ptr() as *const _, name.len() as u32);
        LLVMSetMetadata(latch.as_value_ref(), kind, LLVMMetadataAsValue(c, id));
    }
}
