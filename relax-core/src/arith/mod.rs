//! Symbolic integer arithmetic: canonical simplification and proving.
//!
//! INTERFACE STUB — the arith helper replaces the bodies (see analyzer.rs).

pub mod analyzer;

pub use analyzer::{Analyzer, Proof};
