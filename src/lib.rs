//! relax: the Relax graph IR in Rust.
//!
//! This facade re-exports the workspace crates under the names of the
//! design (`docs/design.md` in the repository): `relax::ir`,
//! `relax::analysis`, `relax::BlockBuilder`, the visitors and mutators,
//! passes, and the runtime types. ARCHITECTURE.md says where each part
//! lives; `docs/guide/` has a page per task.
//!
//! ```
//! relax::module! {
//!     pub mod double {
//!         #[function]
//!         pub fn main(x: Tensor![(n,), f32]) -> Tensor![(n,), f32] {
//!             R::add(x, x)
//!         }
//!     }
//! }
//!
//! let x = relax::ndarray::arr1(&[1.0f32, 2.0, 3.0]);
//! assert_eq!(double::main(&x)?, relax::ndarray::arr1(&[2.0f32, 4.0, 6.0]));
//! # Ok::<(), relax::Error>(())
//! ```

#![warn(missing_docs)]

pub use relax_core::{
    analysis, arith, backend, block_builder, dpl, ir, mutator, op, parser, printer, tir, transform,
    visitor,
};
pub use relax_core::{build, build_with, BlockBuilder, Target};
pub use relax_runtime::{cpu, executable, kernels, native, packed, vm};
pub use relax_runtime::{FromValue, TensorArg};

/// The DSL's macros: `relax::module! { pub mod m { … } }` and
/// `#[relax::function] pub fn f(…) -> … { … }` (see `docs/design.md`,
/// "The DSL"), `relax::pattern!` and `relax::rewriter!`.
pub use relax_macros::{function, module, pattern, rewriter};

/// The `ndarray` version the generated wrappers take and return, so users
/// need not depend on the same one.
pub use ndarray;

/// The `half` version whose `f16` and `bf16` are the element types of
/// `float16` and `bfloat16` tensors (what the generated wrappers take and
/// return for them), so users need not depend on it themselves.
pub use half;

#[cfg(feature = "aot")]
pub mod aot;

/// Models from other frameworks (TVM's `relax.frontend`).
pub mod frontend {
    /// ONNX models to IRModules (feature "onnx"; TVM's
    /// `relax.frontend.onnx.from_onnx`).
    #[cfg(feature = "onnx")]
    pub use relax_onnx as onnx;
}
#[doc(hidden)]
pub mod dsl;
pub use relax_runtime::{
    register_packed, DataType, Diagnostic, Error, Executable, Span, Tensor, Value, VirtualMachine,
};

/// The README's examples, compiled and run as doctests so they stay true.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The guides' examples, compiled and run as doctests so they stay true
/// (blocks copied from a test or an example that runs are `ignore`d here).
#[cfg(doctest)]
pub mod guide_doctests {
    #[doc = include_str!("../docs/guide/dsl.md")]
    pub struct Dsl;
    #[doc = include_str!("../docs/guide/patterns.md")]
    pub struct Patterns;
    #[doc = include_str!("../docs/guide/passes.md")]
    pub struct Passes;
    #[doc = include_str!("../docs/features.md")]
    pub struct Features;
}
