//! relax: the Relax graph IR in Rust.
//!
//! This facade re-exports the workspace crates under the names of DESIGN.md:
//! `relax::ir`, `relax::analysis`, and the runtime types. See ARCHITECTURE.md
//! for where each part lives.

pub use relax_core::{analysis, arith, ir, op, parser, printer, tir, transform};
pub use relax_runtime::{DataType, Tensor};
pub use relax_runtime::{Diagnostic, Error, Span};
