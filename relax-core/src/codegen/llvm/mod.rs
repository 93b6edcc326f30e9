//! PrimFuncs to LLVM. INTERFACE STUB, replaced by the codegen helper.

use crate::tir::PrimFunc;
use relax_runtime::native::NativeLibrary;
use relax_runtime::Error;
use std::sync::Arc;

/// Options of code generation.
#[derive(Clone, Debug, Default)]
pub struct CodegenOptions {
    /// Generate for the host CPU's features (`native`) rather than a generic CPU.
    pub native_cpu: bool,
}

/// JIT-compiles `funcs` (symbol, PrimFunc) into a library of kernels.
pub fn jit(
    funcs: &[(String, PrimFunc)],
    opts: &CodegenOptions,
) -> Result<Arc<dyn NativeLibrary>, Error> {
    let _ = (funcs, opts);
    Err(Error::Unsupported(
        "LLVM code generation is not written yet".into(),
    ))
}

/// Compiles `funcs` into an object file (for AOT static libraries).
pub fn emit_object(funcs: &[(String, PrimFunc)], opts: &CodegenOptions) -> Result<Vec<u8>, Error> {
    let _ = (funcs, opts);
    Err(Error::Unsupported(
        "LLVM code generation is not written yet".into(),
    ))
}
