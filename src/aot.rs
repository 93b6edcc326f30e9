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

//!
//! # ONNX models
//!
//! With the feature "onnx" too, [`Builder::onnx`] compiles an ONNX model
//! the same way (imported with `relax::frontend::onnx::from_onnx_file`,
//! weights as constants of the executable, external data read from the
//! model's directory) and generates its Rust module, with one typed
//! wrapper per function, like the DSL's. Cargo reruns the build script
//! when the model file changes, not when only its external data file
//! does.
//!
//! ```no_run
//! # #[cfg(feature = "onnx")]
//! // build.rs
//! relax::aot::Builder::new()
//!     .onnx("models/squeezenet.onnx", "squeezenet")
//!     .compile("models");
//! ```
//!
//! and in the crate, `include!(env!("RELAX_AOT_MODULE_squeezenet"));`
//! defines `mod squeezenet` with `squeezenet::main(&x)`. Its `module()` is
//! empty: the IR is not embedded in the binary, only its compiled form.

pub use relax_core::backend::aot::{
    AotError, Artifacts, CompiledModule, ModuleArtifact, SourceError,
};
use std::path::Path;
#[cfg(feature = "onnx")]
use std::path::PathBuf;

/// Compiles the DSL modules of source files (and, with the feature "onnx",
/// ONNX models) into a static library, from a build script. See the module
/// docs.
#[derive(Clone, Debug, Default)]
pub struct Builder {
    inner: relax_core::backend::aot::Builder,
    #[cfg(feature = "onnx")]
    onnx: Vec<(PathBuf, String)>,
}

impl Builder {
    /// A Builder with no files, for a generic CPU, writing to `$OUT_DIR`.
    pub fn new() -> Self {
        Builder::default()
    }

    /// Adds a source file (relative to the package root) to compile the DSL
    /// of.
    pub fn file(&mut self, path: impl AsRef<Path>) -> &mut Self {
        self.inner.file(path);
        self
    }

    /// Adds an ONNX model, compiled as the Rust module `module`
    /// (`include!(env!("RELAX_AOT_MODULE_<module>"))` defines it).
    #[cfg(feature = "onnx")]
    pub fn onnx(&mut self, path: impl AsRef<Path>, module: &str) -> &mut Self {
        self.onnx
            .push((path.as_ref().to_path_buf(), module.to_string()));
        self
    }

    /// Whether to generate code for the CPU of the building machine rather
    /// than a generic one of its architecture (off by default).
    pub fn native_cpu(&mut self, native: bool) -> &mut Self {
        self.inner.native_cpu(native);
        self
    }

    /// Writes to `dir` instead of `$OUT_DIR`.
    pub fn out_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.inner.out_dir(dir);
        self
    }

    /// Names symbols after `name` instead of `$CARGO_PKG_NAME`.
    pub fn crate_name(&mut self, name: &str) -> &mut Self {
        self.inner.crate_name(name);
        self
    }

    /// Measures up to `n` candidate schedules per kernel the tuning
    /// database lacks on the build machine, and keeps the fastest in the
    /// database (by default `$RELAX_TUNING_DB`, else
    /// `~/.cache/relax/tuning.json`); kernels it has get their knobs
    /// without measuring (`relax_core::tune`).
    pub fn tune(&mut self, n: usize) -> &mut Self {
        self.inner.tune(n);
        self
    }

    /// The tuning database to read (and extend with [`Builder::tune`]).
    pub fn tuning_db(&mut self, path: impl AsRef<Path>) -> &mut Self {
        self.inner.tuning_db(path);
        self
    }

    /// Compiles into `lib<name>.a` and prints the cargo instructions; on
    /// error prints every error to stderr and exits with status 1.
    pub fn compile(&self, name: &str) {
        relax_core::backend::aot::report(name, self.try_compile(name));
    }

    /// Compiles into `lib<name>.a` and returns what was written, or every
    /// error.
    pub fn try_compile(&self, name: &str) -> Result<Artifacts, AotError> {
        #[allow(unused_mut)]
        let mut inner = self.inner.clone();
        #[cfg(feature = "onnx")]
        for (path, module) in &self.onnx {
            let options = relax_onnx::ImportOptions::default();
            let imported =
                relax_onnx::from_onnx_file(path, &options).map_err(|e| AotError::Io {
                    path: path.clone(),
                    message: e.to_string(),
                })?;
            let doc = format!(
                "The ONNX model `{}` (opset {}), compiled ahead of time by `relax::aot::Builder::onnx`.",
                path.display(),
                imported.opset
            );
            inner.ir_module(module, imported.module, path, &doc);
        }
        inner.try_compile(name)
    }
}
