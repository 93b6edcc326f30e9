//! The VM backend: Relax to the bytecode of `relax_runtime::executable`.
//!
//! [`codegen()`] compiles every Relax function; `shape` turns
//! symbolic shapes into shape-heap code and `MatchCast` patterns.

pub mod codegen;
mod shape;

pub use codegen::codegen;
