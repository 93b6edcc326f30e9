//! Ahead-of-time compilation from build.rs (features "syntax" and "llvm");
//! the facade re-exports it as `relax::aot`.
//!
//! [`Builder`] is modelled on cxx-build: `Builder::new().file("src/model.rs")
//! .compile("model")` in a build script
//!
//! 1. reads each file and finds every `relax::module! { … }` and
//!    `#[relax::function]` in it ([`scan()`]);
//! 2. lowers each with the frontend the macros use, so the same checks run
//!    and the same messages come out, rendered as `file:line:column: error:`
//!    ([`SourceError`]);
//! 3. compiles each module for [`Target::host()`](super::Target::host): the default pipeline,
//!    VM code generation, and object files from the LLVM back end, one per
//!    module and CPU level ([`cpu_variants`]): on x86-64 every kernel is
//!    scheduled (`DefaultSchedule::for_cpu`: register tiles for the
//!    level's vector width) and compiled for `x86-64-v4-vnni-bf16`
//!    (AVX-512 with the int8 and bfloat16 dot products), `x86-64-v4`
//!    (AVX-512), `x86-64-v3` (AVX2, FMA) and the `generic` baseline, and
//!    the executable picks the best level the
//!    running CPU supports when it loads (`relax_runtime::cpu`); with
//!    [`Builder::native_cpu`] there is one variant, for the build
//!    machine's CPU. Each kernel's symbol is made unique across crates and
//!    modules: `relax_<crate>_<lib>_<module>_<kernel>`, plus `_v4x`/`_v4`/`_v3`
//!    for those levels;
//! 4. writes to OUT_DIR the static library `lib<lib>.a` (one member per
//!    module, see [`write_archive`]), each module's serialized
//!    executable `<lib>_<module>.relaxvm`, and each module's artifact file
//!    `<lib>_<module>.rs` ([`artifact_source`]);
//! 5. prints the cargo instructions: link search path and libraries,
//!    `rerun-if-changed` for each file, the cfgs `relax_aot` and
//!    `relax_aot="<module>"` and the variable `RELAX_AOT_<module>` naming the
//!    artifact file, which the generated module includes (see
//!    [`frontend::codegen::aot`](crate::frontend::codegen::aot)).
//!
//! [`Builder::compile`] prints every error and exits with status 1 (a build
//! script's way to fail without a panic's backtrace);
//! [`Builder::try_compile`] returns them instead.

mod archive;
mod diagnostics;
mod registry;
mod scan;
mod shared;

#[cfg(test)]
mod tests;

pub use archive::{write_archive, Member};
pub use diagnostics::SourceError;
pub use registry::{artifact_source, CpuVariant, KernelLink};
pub use scan::{scan, DslItem};
pub use shared::{link_shared, TRAMPOLINE_C};

use super::{host_pipeline_unscheduled, vm};
use crate::analysis::well_formed;
use crate::codegen::llvm::{emit_objects_reporting, CodegenOptions, ObjectPart};
use crate::frontend::codegen::aot::{aot_env_var, aot_key, artifact_hash};
use crate::frontend::{lower_function_item, lower_module_macro, Lowered, SpanRange};
use crate::tir::PrimFunc;
use crate::transform::progress::{BuildStage, StageCounter};
use crate::transform::DefaultSchedule;
use crate::transform::Pass;
use relax_runtime::Error;
use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Compiles the DSL modules of source files into a static library, from a
/// build script. See the module docs.
#[derive(Clone, Debug, Default)]
pub struct Builder {
    files: Vec<PathBuf>,
    /// IR modules given directly: (Rust module name, IR, the file it came
    /// from, its doc).
    ir_modules: Vec<(String, crate::ir::IRModule, PathBuf, String)>,
    native_cpu: bool,
    out_dir: Option<PathBuf>,
    crate_name: Option<String>,
    /// Candidates per kernel to measure ([`Builder::tune`]).
    tune: usize,
    /// The tuning database ([`Builder::tuning_db`]).
    tuning_db: Option<PathBuf>,
}

/// What [`Builder::try_compile`] wrote.
#[derive(Clone, Debug)]
pub struct Artifacts {
    /// The static library, `<out_dir>/lib<name>.a`.
    pub library: PathBuf,
    /// Each module compiled, in source order.
    pub modules: Vec<ModuleArtifact>,
    /// The `cargo:` lines [`Builder::compile`] prints.
    pub cargo_lines: Vec<String>,
    /// What tuning did for each module, when the Builder tunes or reads
    /// a tuning database.
    pub tuning: Vec<(String, crate::tune::TuneReport)>,
}

/// One compiled module.
#[derive(Clone, Debug)]
pub struct ModuleArtifact {
    /// The Rust module's name: the value of its `relax_aot` cfg.
    pub name: String,
    /// The hash of its IR the generated code checks.
    pub content_hash: u64,
    /// The artifact file the generated module includes.
    pub source: PathBuf,
    /// The serialized executable.
    pub executable: PathBuf,
    /// Its kernels.
    pub kernels: Vec<KernelLink>,
}

/// Why [`Builder::try_compile`] failed.
#[derive(Clone, Debug)]
pub enum AotError {
    /// Errors in the source files (every one found).
    Source(Vec<SourceError>),
    /// A file could not be read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The Builder was misused (no OUT_DIR, a bad library name).
    Config(String),
}

impl fmt::Display for AotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AotError::Source(errors) => {
                for (i, e) in errors.iter().enumerate() {
                    if i > 0 {
                        f.write_str("\n\n")?;
                    }
                    write!(f, "{e}")?;
                }
                Ok(())
            }
            AotError::Io { path, message } => {
                write!(f, "error: {}: {message}", path.display())
            }
            AotError::Config(message) => write!(f, "error: relax::aot::Builder: {message}"),
        }
    }
}

impl std::error::Error for AotError {}

/// Module names claimed by libraries of this build script, by output
/// directory: an artifact is found by its module's name, so two libraries
/// of one crate may not both define one.
static CLAIMED: Mutex<BTreeMap<(PathBuf, String), String>> = Mutex::new(BTreeMap::new());

impl Builder {
    /// A Builder with no files, for a generic CPU, writing to `$OUT_DIR`.
    pub fn new() -> Self {
        Builder::default()
    }

    /// Adds a source file (relative to the package root, as build scripts
    /// run there) to compile the DSL of.
    pub fn file(&mut self, path: impl AsRef<Path>) -> &mut Self {
        self.files.push(path.as_ref().to_path_buf());
        self
    }

    /// Adds an IR module built by other means (an imported model: the
    /// facade's `relax::aot::Builder::onnx`) to compile as the Rust module
    /// `name`. Besides its artifact, the Rust module itself is generated,
    /// as `<lib>_<name>.module.rs` in OUT_DIR, with a typed wrapper per
    /// public function; the crate includes it with
    /// `include!(env!("RELAX_AOT_MODULE_<name>"));`. `origin` is the file
    /// it came from (watched by cargo); `doc` the Rust module's doc.
    pub fn ir_module(
        &mut self,
        name: &str,
        module: crate::ir::IRModule,
        origin: impl AsRef<Path>,
        doc: &str,
    ) -> &mut Self {
        self.ir_modules.push((
            name.to_string(),
            module,
            origin.as_ref().to_path_buf(),
            doc.to_string(),
        ));
        self
    }

    /// Whether to generate code for the CPU of the building machine
    /// (`native`) rather than a generic one of its architecture. Off by
    /// default: a library for the build machine's CPU may not run elsewhere.
    pub fn native_cpu(&mut self, native: bool) -> &mut Self {
        self.native_cpu = native;
        self
    }

    /// Writes to `dir` instead of `$OUT_DIR`.
    pub fn out_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Tunes the kernels: up to `n` candidates per kernel that the tuning
    /// database lacks are measured on this machine (`crate::tune`), and
    /// the fastest recorded in the database ([`Builder::tuning_db`], by
    /// default `crate::tune::default_path()`); kernels it has are
    /// scheduled with their knobs without measuring. The knobs schedule
    /// the variants with the build machine's vector width. 0 (the
    /// default) measures nothing.
    pub fn tune(&mut self, n: usize) -> &mut Self {
        self.tune = n;
        self
    }

    /// The tuning database to read (and, with [`Builder::tune`], to
    /// extend). Without `tune` the file must exist, and only its knobs
    /// are used.
    pub fn tuning_db(&mut self, path: impl AsRef<Path>) -> &mut Self {
        self.tuning_db = Some(path.as_ref().to_path_buf());
        self
    }

    /// How this Builder tunes, if it does.
    fn tuning(&self) -> Option<crate::tune::Tuning> {
        let db = match (&self.tuning_db, self.tune) {
            (Some(db), _) => db.clone(),
            (None, n) if n >= 2 => crate::tune::default_path(),
            (None, _) => return None,
        };
        Some(if self.tune >= 2 {
            crate::tune::Tuning::measuring(db, self.tune)
        } else {
            crate::tune::Tuning::read_only(db)
        })
    }

    /// Names symbols after `name` instead of `$CARGO_PKG_NAME`.
    pub fn crate_name(&mut self, name: &str) -> &mut Self {
        self.crate_name = Some(name.to_string());
        self
    }

    /// Compiles into `lib<name>.a` and prints the cargo instructions; on
    /// error prints every error to stderr and exits with status 1.
    pub fn compile(&self, name: &str) {
        report(name, self.try_compile(name));
    }

    /// Compiles into `lib<name>.a` and returns what was written (with the
    /// cargo instructions, not printed), or every error.
    pub fn try_compile(&self, name: &str) -> Result<Artifacts, AotError> {
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(AotError::Config(format!(
                "the library name {name:?} must be letters, digits, `_` or `-`"
            )));
        }
        let out_dir = match &self.out_dir {
            Some(dir) => dir.clone(),
            None => std::env::var_os("OUT_DIR")
                .map(PathBuf::from)
                .ok_or_else(|| {
                    AotError::Config(
                        "OUT_DIR is not set: call the Builder from a build script, or give out_dir"
                            .into(),
                    )
                })?,
        };
        let crate_name = self
            .crate_name
            .clone()
            .or_else(|| std::env::var("CARGO_PKG_NAME").ok())
            .unwrap_or_else(|| "crate".into());

        let mut modules = self.lower_files()?;
        let first_imported = modules.len();
        for (name, module, origin, doc) in &self.ir_modules {
            let ident = syn::parse_str::<syn::Ident>(name).map_err(|_| {
                AotError::Config(format!("the module name {name:?} is not a Rust identifier"))
            })?;
            if modules.iter().any(|m| m.key == *name) {
                return Err(AotError::Config(format!(
                    "a second relax module named `{name}`"
                )));
            }
            let functions = imported_functions(module);
            modules.push(LoweredItem {
                key: name.clone(),
                lowered: Lowered {
                    mod_name: ident,
                    vis: syn::parse_quote!(pub),
                    doc: Some(doc.clone()),
                    module: module.clone(),
                    functions,
                    schedules: Vec::new(),
                    content_hash: artifact_hash(module),
                },
                file: origin.clone(),
                source: String::new(),
                range: SpanRange::from(proc_macro2::Span::call_site()),
            });
        }
        let opts = CodegenOptions {
            native_cpu: self.native_cpu,
            ..Default::default()
        };
        let mut errors = Vec::new();
        let mut compiled = Vec::new();
        let tuning = self.tuning();
        let mut tuning_reports = Vec::new();
        for m in &modules {
            let prefix = format!(
                "relax_{}_{}_{}",
                symbol_part(&crate_name),
                symbol_part(name),
                symbol_part(&m.key)
            );
            let result = compile_ir_module_tuned(
                &m.lowered.module,
                &prefix,
                &cpu_variants(opts.native_cpu),
                &crate::transform::PassContext::new(),
                tuning.as_ref(),
            );
            match result {
                Ok((c, report)) => {
                    compiled.push(c);
                    if let Some(r) = report {
                        tuning_reports.push((m.key.clone(), r));
                    }
                }
                Err(e) => errors.push(SourceError::new(
                    &m.file,
                    &m.source,
                    m.range,
                    format!("cannot compile module `{}`: {e}", m.key),
                )),
            }
        }
        if !errors.is_empty() {
            return Err(AotError::Source(errors));
        }
        claim(&out_dir, name, &modules)?;

        std::fs::create_dir_all(&out_dir).map_err(|e| io_error(&out_dir, e))?;
        let mut members = Vec::new();
        let mut artifacts = Vec::new();
        for (m, c) in modules.iter().zip(compiled) {
            let executable = out_dir.join(format!("{name}_{}.relaxvm", m.key));
            write(&executable, &c.executable.to_bytes())?;
            let source = out_dir.join(format!("{name}_{}.rs", m.key));
            let variants: Vec<CpuVariant> = c.objects.iter().map(|o| o.variant.clone()).collect();
            let text = artifact_source(
                &m.key,
                &m.file,
                c.content_hash,
                &executable,
                &c.kernels,
                &variants,
            );
            write(&source, text.as_bytes())?;
            for o in c.objects {
                let single = o.parts.len() == 1;
                for (j, part) in o.parts.into_iter().enumerate() {
                    members.push(Member {
                        name: if single {
                            format!("{}{}.o", m.key, o.variant.suffix)
                        } else {
                            format!("{}{}.{j}.o", m.key, o.variant.suffix)
                        },
                        data: part.object,
                        symbols: part
                            .kernels
                            .iter()
                            .map(|&k| format!("{}{}", c.kernels[k].symbol, o.variant.suffix))
                            .collect(),
                    });
                }
            }
            artifacts.push(ModuleArtifact {
                name: m.key.clone(),
                content_hash: c.content_hash,
                source,
                executable,
                kernels: c.kernels,
            });
        }
        let library = out_dir.join(format!("lib{name}.a"));
        write(&library, &write_archive(&members))?;
        // The Rust modules of the IR modules given directly.
        let mut generated = Vec::new();
        for m in &modules[first_imported..] {
            let path = out_dir.join(format!("{name}_{}.module.rs", m.key));
            let tokens = crate::frontend::codegen::imported_module_tokens(&m.lowered);
            write(&path, tokens.to_string().as_bytes())?;
            generated.push((m.key.clone(), path));
        }

        let mut lines = vec![
            format!("cargo:rustc-link-search=native={}", out_dir.display()),
            format!("cargo:rustc-link-lib=static={name}"),
        ];
        // The kernels call libm; on Windows the C runtime has it.
        if std::env::var("CARGO_CFG_TARGET_OS").map_or(true, |os| os != "windows") {
            lines.push("cargo:rustc-link-lib=m".into());
        }
        for f in self
            .files
            .iter()
            .chain(self.ir_modules.iter().map(|m| &m.2))
        {
            lines.push(format!("cargo:rerun-if-changed={}", f.display()));
        }
        if let Some(t) = &tuning {
            lines.push(format!("cargo:rerun-if-changed={}", t.db.display()));
        }
        for (key, path) in &generated {
            lines.push(format!(
                "cargo:rustc-env=RELAX_AOT_MODULE_{key}={}",
                path.display()
            ));
        }
        let values: Vec<String> = artifacts.iter().map(|a| format!("{:?}", a.name)).collect();
        lines.push(format!(
            "cargo:rustc-check-cfg=cfg(relax_aot, values(none(){}))",
            values.iter().map(|v| format!(", {v}")).collect::<String>()
        ));
        lines.push("cargo:rustc-cfg=relax_aot".into());
        for a in &artifacts {
            lines.push(format!("cargo:rustc-cfg=relax_aot={:?}", a.name));
            lines.push(format!(
                "cargo:rustc-env={}={}",
                aot_env_var(&a.name),
                a.source.display()
            ));
        }
        Ok(Artifacts {
            library,
            modules: artifacts,
            cargo_lines: lines,
            tuning: tuning_reports,
        })
    }

    /// Reads, scans and lowers every file; every error of every file.
    fn lower_files(&self) -> Result<Vec<LoweredItem>, AotError> {
        let mut errors = Vec::new();
        let mut modules: Vec<LoweredItem> = Vec::new();
        for file in &self.files {
            let source = std::fs::read_to_string(file).map_err(|e| io_error(file, e))?;
            let parsed = match syn::parse_file(&source) {
                Ok(parsed) => parsed,
                Err(e) => {
                    errors.extend(e.into_iter().map(|e| {
                        SourceError::new(file, &source, SpanRange::from(e.span()), e.to_string())
                    }));
                    continue;
                }
            };
            for item in scan(&parsed) {
                let range = item.range();
                match lower(&item) {
                    Ok(lowered) if !lowered.schedules.is_empty() => {
                        let s = &lowered.schedules[0];
                        errors.push(
                            SourceError::new(file, &source, SpanRange::from(s.span), format!("the relax module `{}` attaches a schedule to `{}`, which ahead-of-time compilation cannot run", aot_key(&lowered.mod_name), s.prim_func))
                                .with_note("a `#[schedule(…)]` function is Rust code of the crate being built, run when the module is compiled on first call; leave this module out of `relax::aot::Builder` (it is then compiled on first call), or schedule it in build.rs with `relax::transform::ApplySchedule` and `Builder::ir_module`"),
                        );
                    }
                    Ok(lowered) => {
                        let key = aot_key(&lowered.mod_name);
                        if let Some(first) = modules.iter().find(|m| m.key == key) {
                            errors.push(
                                SourceError::new(file, &source, SpanRange::of(&lowered.mod_name), format!("a second relax module named `{key}`"))
                                    .with_note(format!("the first is in {} at line {}; AOT artifacts are found by module name, so each must be unique", first.file.display(), first.range.start.start().line)),
                            );
                            continue;
                        }
                        modules.push(LoweredItem {
                            key,
                            lowered,
                            file: file.clone(),
                            source: source.clone(),
                            range,
                        });
                    }
                    Err(es) => errors.extend(
                        es.iter()
                            .map(|e| SourceError::from_frontend(file, &source, e, range)),
                    ),
                }
            }
        }
        if errors.is_empty() {
            Ok(modules)
        } else {
            Err(AotError::Source(errors))
        }
    }
}

/// The wrapper information of an IR module's public Relax functions.
fn imported_functions(module: &crate::ir::IRModule) -> Vec<crate::frontend::FunctionInfo> {
    module
        .functions()
        .filter_map(|(gv, f)| {
            let f = f.as_relax()?;
            f.global_symbol()?;
            Some(crate::frontend::FunctionInfo {
                name: gv.name_hint().to_string(),
                public: true,
                params: f
                    .params
                    .iter()
                    .map(|p| {
                        let s = p.struct_info().cloned();
                        (
                            p.name_hint().to_string(),
                            s.unwrap_or_else(crate::ir::StructInfo::object),
                        )
                    })
                    .collect(),
                ret: f.ret_struct_info.clone(),
                doc: None,
                span: proc_macro2::Span::call_site(),
            })
        })
        .collect()
}

/// What [`Builder::compile`] does with [`Builder::try_compile`]'s result:
/// prints the cargo instructions, or every error to stderr and exits with
/// status 1 (a build script's way to fail without a panic's backtrace).
pub fn report(name: &str, result: Result<Artifacts, AotError>) {
    match result {
        Ok(artifacts) => {
            for line in &artifacts.cargo_lines {
                println!("{line}");
            }
        }
        Err(e) => {
            eprintln!("{e}");
            let count = match &e {
                AotError::Source(errors) => errors.len(),
                _ => 1,
            };
            let s = if count == 1 { "" } else { "s" };
            eprintln!("\nerror: relax could not compile `{name}` due to {count} previous error{s}");
            std::process::exit(1);
        }
    }
}

/// A lowered module and where it came from.
struct LoweredItem {
    key: String,
    lowered: Lowered,
    file: PathBuf,
    source: String,
    range: SpanRange,
}

/// Lowers one DSL item as its macro would; a panic inside the frontend (a
/// bug) becomes an error on the item rather than a crashed build script.
fn lower(item: &DslItem) -> Result<Lowered, Vec<crate::frontend::FrontendError>> {
    let run = || match item {
        DslItem::Module { tokens, .. } => lower_module_macro(tokens.clone()),
        DslItem::Function { attr, item, .. } => lower_function_item(attr.clone(), item.clone()),
    };
    catch_unwind(AssertUnwindSafe(run)).unwrap_or_else(|_| {
        Err(vec![crate::frontend::FrontendError::new(
            item.range(),
            "internal error in the relax frontend (it panicked)",
        )])
    })
}

/// A module compiled for the host: its executable's bytes, its object file,
/// its kernels.
#[derive(Clone, Debug)]
pub struct CompiledModule {
    /// [`artifact_hash`] of the module it was compiled from.
    pub content_hash: u64,
    /// The executable (without its library: its kernels are the
    /// objects').
    pub executable: relax_runtime::Executable,
    /// The object files defining the kernels, one per CPU level, best first.
    pub objects: Vec<VariantObject>,
    /// The kernels, by executable name and link symbol (the baseline's;
    /// other levels add their suffix). Structurally equal kernels share
    /// one symbol (`dedupe`).
    pub kernels: Vec<KernelLink>,
}

/// The kernels of a module compiled for one CPU level.
#[derive(Clone, Debug)]
pub struct VariantObject {
    /// The level and its symbol suffix.
    pub variant: CpuVariant,
    /// The object files, compiled in parallel (`emit_objects`): together
    /// they define every kernel; each part's `kernels` index
    /// [`CompiledModule::kernels`], and name only the kernels whose symbol
    /// the part defines (a kernel structurally equal to an earlier one
    /// shares its symbol, `dedupe`).
    pub parts: Vec<ObjectPart>,
}

/// The CPU levels an ahead-of-time build compiles every kernel for, best
/// first: the build machine's CPU alone with `native_cpu`; on x86-64 the
/// levels of `relax_runtime::cpu::X86_64_LEVELS`; elsewhere the baseline.
pub fn cpu_variants(native_cpu: bool) -> Vec<CpuVariant> {
    if native_cpu {
        return vec![CpuVariant {
            cpu: "native",
            suffix: "",
        }];
    }
    if cfg!(target_arch = "x86_64") {
        relax_runtime::cpu::X86_64_LEVELS
            .iter()
            .map(|&cpu| CpuVariant {
                cpu,
                suffix: match cpu {
                    relax_runtime::cpu::V4_VNNI_BF16 => "_v4x",
                    "x86-64-v4" => "_v4",
                    "x86-64-v3" => "_v3",
                    _ => "",
                },
            })
            .collect()
    } else {
        vec![CpuVariant {
            cpu: "generic",
            suffix: "",
        }]
    }
}

/// Compiles `lowered` as `relax::build` does for [`Target::host()`](super::Target::host), with
/// the kernels emitted into an object file under symbols that start with
/// `prefix`.
pub fn compile_module(
    lowered: &Lowered,
    prefix: &str,
    opts: &CodegenOptions,
) -> Result<CompiledModule, Error> {
    compile_ir_module(
        &lowered.module,
        prefix,
        &cpu_variants(opts.native_cpu),
        &crate::transform::PassContext::new(),
    )
}

/// Compiles `module` as `relax::build` does for [`Target::host()`](super::Target::host), with
/// the kernels emitted into one object file per CPU level of `variants`
/// (best first) under symbols that start with `prefix` (plus each
/// level's suffix), the pipeline run in `ctx` (whose instruments see
/// every pass). `relax compile` uses it with the one level it compiles
/// for; [`compile_module`] with [`cpu_variants`].
pub fn compile_ir_module(
    module: &crate::ir::IRModule,
    prefix: &str,
    variants: &[CpuVariant],
    ctx: &crate::transform::PassContext,
) -> Result<CompiledModule, Error> {
    compile_ir_module_tuned(module, prefix, variants, ctx, None).map(|(c, _)| c)
}

/// [`compile_ir_module`] with tuned knobs from `tuning` (its database
/// read, the kernels it lacks measured when it tunes, `crate::tune`):
/// they schedule the kernels of every variant with this machine's vector
/// width (the knobs were measured here); other variants get the
/// defaults. Also returns what tuning did. A database that cannot be
/// read or written is an error.
pub fn compile_ir_module_tuned(
    module: &crate::ir::IRModule,
    prefix: &str,
    variants: &[CpuVariant],
    ctx: &crate::transform::PassContext,
    tuning: Option<&crate::tune::Tuning>,
) -> Result<(CompiledModule, Option<crate::tune::TuneReport>), Error> {
    well_formed(module).map_err(Error::Compile)?;
    // The host pipeline up to its loop schedules, which each CPU level
    // gets for its own vector width (`DefaultSchedule::for_cpu`); the VM
    // code does not depend on them.
    ctx.report_stage(BuildStage::Passes, 0);
    let compiled = host_pipeline_unscheduled().run_in(module.clone(), ctx)?;
    ctx.report_stage(BuildStage::Lower, 0);
    well_formed(&compiled).map_err(Error::Compile)?;
    let (tuned, report) = match tuning {
        Some(t) => {
            let (knobs, report) = t.knobs(&compiled).map_err(Error::Unsupported)?;
            (Some(std::sync::Arc::new(knobs)), Some(report))
        }
        None => (None, None),
    };
    let host_bits = DefaultSchedule::for_host().vector_bits();
    let exec = vm::codegen(&compiled)?;
    let mut kernels: Vec<KernelLink> = Vec::new();
    let mut funcs = Vec::new();
    let mut taken = HashSet::new();
    let prims = exec
        .natives
        .iter()
        .map(|name| {
            compiled.get(name).and_then(|f| f.as_prim()).ok_or_else(|| {
                Error::Unsupported(format!(
                    "the native kernel `{name}` is not a PrimFunc of the module"
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    // Structurally equal kernels are compiled once, under the first one's
    // symbol (`dedupe`).
    let first = super::dedupe::representatives(&prims);
    // The index in `kernels` of each of `funcs`.
    let mut func_kernel = Vec::new();
    for (i, (name, &func)) in exec.natives.iter().zip(&prims).enumerate() {
        if first[i] != i {
            // `kernels` is in `natives` order, and the first equal came
            // earlier.
            let symbol = kernels[first[i]].symbol.clone();
            kernels.push(KernelLink {
                name: name.clone(),
                symbol,
            });
            continue;
        }
        let base = format!("{prefix}_{}", symbol_part(name));
        let mut symbol = base.clone();
        let mut n = 1;
        while !taken.insert(symbol.clone()) {
            symbol = format!("{base}_{n}");
            n += 1;
        }
        funcs.push((symbol.clone(), func));
        func_kernel.push(kernels.len());
        kernels.push(KernelLink {
            name: name.clone(),
            symbol,
        });
    }
    // Each level's kernels, scheduled for it.
    let scheduled: Vec<Vec<(String, PrimFunc)>> = variants
        .iter()
        .map(|variant| {
            let mut schedule = DefaultSchedule::for_cpu(variant.cpu);
            if let Some(t) = tuned
                .as_ref()
                .filter(|_| schedule.vector_bits() == host_bits)
            {
                schedule = schedule.with_tuned(t.clone());
            }
            funcs
                .iter()
                .map(|(symbol, func)| {
                    let symbol = format!("{symbol}{}", variant.suffix);
                    (symbol, schedule.schedule_prim_func(func))
                })
                .collect()
        })
        .collect();
    let counter = StageCounter::start(
        ctx.progress(),
        BuildStage::Codegen,
        funcs.len() * variants.len(),
    );
    let mut objects = Vec::new();
    for (variant, renamed) in variants.iter().cloned().zip(scheduled) {
        let level_opts = CodegenOptions {
            native_cpu: variant.cpu == "native",
            cpu: match variant.cpu {
                "generic" | "native" => None,
                level => Some(level.to_string()),
            },
        };
        objects.push(VariantObject {
            parts: emit_objects_reporting(&renamed, &level_opts, &|n| counter.advance(n))?
                .into_iter()
                .map(|part| ObjectPart {
                    kernels: part.kernels.iter().map(|&f| func_kernel[f]).collect(),
                    object: part.object,
                })
                .collect(),
            variant,
        });
    }
    let compiled = CompiledModule {
        content_hash: artifact_hash(module),
        executable: exec,
        objects,
        kernels,
    };
    Ok((compiled, report))
}

/// `text` as part of a C symbol: ASCII letters, digits and `_`.
fn symbol_part(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// Records that the library `lib` defines `modules`; fails when another
/// library of this build script already defines one of them.
fn claim(out_dir: &Path, lib: &str, modules: &[LoweredItem]) -> Result<(), AotError> {
    let mut claimed = CLAIMED.lock().unwrap_or_else(|p| p.into_inner());
    let key = |m: &LoweredItem| (out_dir.to_path_buf(), m.key.clone());
    for m in modules {
        if let Some(other) = claimed.get(&key(m)).filter(|other| *other != lib) {
            return Err(AotError::Config(format!(
                "the module `{}` is already compiled into the library `{other}`; \
                 AOT artifacts are found by module name, so each must be unique",
                m.key
            )));
        }
    }
    for m in modules {
        claimed.insert(key(m), lib.to_string());
    }
    Ok(())
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), AotError> {
    std::fs::write(path, bytes).map_err(|e| io_error(path, e))
}

fn io_error(path: &Path, e: std::io::Error) -> AotError {
    AotError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}
