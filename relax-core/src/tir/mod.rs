//! The loop-level IR (TVM's TIR).
//!
//! For now this holds only what the Relax side needs to refer to a PrimFunc:
//! its signature ([`PrimFunc`]). Statements, buffers, the printer/parser for
//! `@T.prim_func` and the interpreter arrive with the loop-level IR issue.

pub mod prim_func;

pub use prim_func::{PrimFunc, PrimFuncParam};
