//! relax: the Relax graph IR in Rust.
//!
//! This facade re-exports the workspace crates under the names of DESIGN.md:
//! `relax::ir`, `relax::analysis`, `relax::BlockBuilder`, the visitors and
//! mutators, passes, and the runtime types. See ARCHITECTURE.md for where
//! each part lives.

pub use relax_core::BlockBuilder;
pub use relax_core::{
    analysis, arith, block_builder, ir, mutator, op, parser, printer, tir, transform, visitor,
};
pub use relax_runtime::{DataType, Diagnostic, Error, Span, Tensor};
