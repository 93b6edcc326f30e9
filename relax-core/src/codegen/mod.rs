//! Machine-code generation for the loop-level IR (feature "llvm").
//!
//! [`llvm`] lowers PrimFuncs to LLVM IR and compiles them, in-process (JIT)
//! or to an object file (AOT).

#[cfg(feature = "llvm")]
pub mod llvm;
