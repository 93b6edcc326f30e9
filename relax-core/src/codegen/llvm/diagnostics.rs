//! LLVM's diagnostics: what a context does with the warnings and remarks
//! its passes report.
//!
//! Without a handler, LLVM prints every warning to stderr and exits the
//! process on an error. Kernels ask the loop vectorizer for vectors
//! (`llvm.loop.vectorize.enable`) as a hint, and a loop it cannot vectorize
//! makes it warn ("loop not vectorized"), which a user of a compiled model
//! must not see. So each context that code generation creates gets a handler
//! that drops warnings, remarks and notes, and prints errors (code
//! generation then fails through its own `Err`). Setting
//! `RELAX_LLVM_DIAGNOSTICS=1` prints every diagnostic, for kernel work.

use inkwell::context::Context;
use inkwell::llvm_sys::core::{
    LLVMContextSetDiagnosticHandler, LLVMDisposeMessage, LLVMGetDiagInfoDescription,
    LLVMGetDiagInfoSeverity,
};
use inkwell::llvm_sys::prelude::LLVMDiagnosticInfoRef;
use inkwell::llvm_sys::LLVMDiagnosticSeverity;
use std::ffi::{c_void, CStr};

/// A new LLVM context with the handler described in the module docs.
pub(super) fn new_context() -> Context {
    let ctx = Context::create();
    // SAFETY: the handler is a plain function that keeps no state (the
    // diagnostic context pointer is null) and the context outlives the call.
    unsafe { LLVMContextSetDiagnosticHandler(ctx.raw(), Some(handle), std::ptr::null_mut()) };
    ctx
}

extern "C" fn handle(info: LLVMDiagnosticInfoRef, _ctx: *mut c_void) {
    // SAFETY: LLVM passes a valid diagnostic for the duration of the call.
    let severity = unsafe { LLVMGetDiagInfoSeverity(info) };
    let verbose = std::env::var_os("RELAX_LLVM_DIAGNOSTICS").is_some_and(|v| v == "1");
    let label = match severity {
        LLVMDiagnosticSeverity::LLVMDSError => "error",
        _ if !verbose => return,
        LLVMDiagnosticSeverity::LLVMDSWarning => "warning",
        LLVMDiagnosticSeverity::LLVMDSRemark => "remark",
        LLVMDiagnosticSeverity::LLVMDSNote => "note",
    };
    // SAFETY: the description is a fresh C string that we own and dispose.
    let text = unsafe {
        let raw = LLVMGetDiagInfoDescription(info);
        let text = CStr::from_ptr(raw).to_string_lossy().into_owned();
        LLVMDisposeMessage(raw);
        text
    };
    eprintln!("relax: LLVM {label}: {text}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use inkwell::llvm_sys::core::LLVMContextGetDiagnosticHandler;

    #[test]
    fn code_generation_contexts_carry_the_quiet_handler() {
        let ctx = new_context();
        // SAFETY: reads the handler of a live context.
        let installed = unsafe { LLVMContextGetDiagnosticHandler(ctx.raw()) };
        let expected: extern "C" fn(LLVMDiagnosticInfoRef, *mut c_void) = handle;
        assert_eq!(
            installed.map(|f| f as *const () as usize),
            Some(expected as *const () as usize)
        );
    }
}
