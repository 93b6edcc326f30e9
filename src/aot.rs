//! Ahead-of-time compilation from build.rs (feature "aot").
//!
//! Modelled on cxx-build. In the build script:
//!
//! ```no_run
//! // In build.rs's `main`, with `[build-dependencies] relax = { …, features = ["aot"] }`:
//! relax::aot::Builder::new()
//!     .file("src/model.rs")
//!     .compile("model");
//! ```
//!
//! [`Builder::compile`] reads `src/model.rs`, finds every
//! `relax::module! { … }` and `#[relax::function]` in it, checks and lowers
//! each with the frontend the macros use (an error is printed as
//! `src/model.rs:12:23: error: …` and the build script exits with status
//! 1), builds each module for the host (the default pipeline, then LLVM,
//! for a generic CPU of the host's architecture unless
//! [`Builder::native_cpu`]`(true)`), and writes to `OUT_DIR`:
//!
//! | file | what |
//! |---|---|
//! | `lib<name>.a` | one object per module; kernel symbols `relax_<crate>_<name>_<module>_<kernel>` |
//! | `<name>_<module>.relaxvm` | the module's serialized [`Executable`](crate::Executable) |
//! | `<name>_<module>.rs` | one expression of type `relax::dsl::AotArtifact`: the executable (`include_bytes!`), the kernels' `extern "C"` declarations and their table, and the hash of the IR it was built from |
//!
//! It then prints `cargo:rustc-link-search`, `cargo:rustc-link-lib=static=<name>`
//! (and `m`: kernels call libm), `cargo:rerun-if-changed` for each file,
//! `cargo:rustc-check-cfg`, and for each module the cfg
//! `relax_aot="<module>"` and the variable `RELAX_AOT_<module>` naming its
//! `.rs` file (plus the cfg `relax_aot`, for code of the crate that wants
//! to know whether anything was compiled ahead of time).
//!
//! # How the generated code uses the artifact
//!
//! The macros expand every module, in every crate, to a hidden inner module
//! `__relax_aot` that chooses the module's executable cache by cfg:
//!
//! 1. With `cfg(relax_aot = "<module>")` (the crate's build.rs compiled a
//!    module of that name), it includes the artifact,
//!    `include!(env!("RELAX_AOT_<module>"))`, and the cache loads the
//!    executable from those bytes on the first call, with the linked kernels
//!    attached: nothing is compiled at run time.
//! 2. A `const` assertion compares the artifact's hash with the hash of the
//!    module's IR (its TVMScript text) computed while the macro expanded. If
//!    they differ, because the module changed after build.rs ran or the
//!    artifact belongs to another module of the same name, `cargo build`
//!    fails with "the AOT artifact of module `…` is stale": a stale artifact
//!    is a build error, never wrong code.
//! 3. Without that cfg nothing changes: the module is compiled on its first
//!    call (the LLVM JIT, or the interpreter without the "llvm" feature).
//!    The cfg is unknown to crates without AOT; the hook allows
//!    `unexpected_cfgs` for itself only.
//!
//! `model::mlp::__RELAX_EXECUTABLE.backend()` says which one a module runs
//! on ([`Backend`](crate::dsl::Backend)).
//!
//! Artifacts are found by module name, so the modules a crate compiles
//! ahead of time must have distinct names (the Builder reports a second
//! module of the same name). Only the given files are read: a model split
//! over several files needs a `.file(…)` for each. The library is a GNU
//! `ar` archive, which the ELF linkers read.

pub use relax_core::backend::aot::{
    AotError, Artifacts, Builder, CompiledModule, ModuleArtifact, SourceError,
};
