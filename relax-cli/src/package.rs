//! `relax compile`: a model compiled once into a package file
//! (`model.relax`, see `relax_runtime::package`) that `relax run` and
//! `relax bench` load without compiling.
//!
//! The kernels are compiled for one CPU level, the best this machine has
//! (`relax_runtime::cpu::X86_64_LEVELS`) unless `--cpu` names another, with
//! the same pipeline and schedules as an ahead-of-time build
//! (`aot::compile_ir_module`), linked into a shared library by the system
//! C compiler (`aot::link_shared`), and stored with the serialized
//! executable, its weights beside it (64-byte aligned, so that loading
//! maps them in place) and the model's input and output names.

use crate::model::Model;
use relax_core::backend::aot::{compile_ir_module_tuned, cpu_variants, link_shared, CpuVariant};
use relax_core::transform::{BuildStage, PassContext};
use relax_core::tune::{TuneReport, Tuning};
use relax_runtime::package::{open, Package};
use relax_runtime::Executable;
use std::path::Path;
use std::time::{Duration, Instant};

/// The symbol prefix of a package's kernels.
const PREFIX: &str = "relax_pkg";

/// The CPU levels `--cpu` takes: the architecture's, best first.
pub fn levels() -> Vec<&'static str> {
    cpu_variants(false).iter().map(|v| v.cpu).collect()
}

/// The level to compile for: `cpu`, or the best this CPU runs.
fn variant(cpu: Option<&str>) -> Result<CpuVariant, String> {
    let variants = cpu_variants(false);
    match cpu {
        Some(level) => variants
            .iter()
            .find(|v| v.cpu == level)
            .cloned()
            .ok_or_else(|| {
                format!(
                    "--cpu {level} is not a CPU level of this architecture (one of: {})",
                    levels().join(", ")
                )
            }),
        None => variants
            .iter()
            .find(|v| relax_runtime::cpu::supports(v.cpu))
            .cloned()
            .ok_or_else(|| "this CPU supports none of the CPU levels".to_string()),
    }
}

/// Compiles `model` into a package for `cpu` (or this machine's best
/// level), the passes run in `ctx`, its kernels scheduled with the knobs
/// of `tuning` (read or measured, `relax_core::tune`); also returns how
/// long linking took and what tuning did.
pub fn compile(
    model: &Model,
    cpu: Option<&str>,
    ctx: &PassContext,
    tuning: Option<&Tuning>,
) -> Result<(Package, Duration, Option<TuneReport>), String> {
    if !model.params.is_empty() {
        return Err(
            "a package keeps its weights in the executable; import without keep_params".into(),
        );
    }
    let variant = variant(cpu)?;
    let (compiled, report) = compile_ir_module_tuned(
        &model.module,
        PREFIX,
        std::slice::from_ref(&variant),
        ctx,
        tuning,
    )
    .map_err(|e| e.to_string())?;
    let object = compiled
        .objects
        .first()
        .ok_or("the compiler emitted no object file")?;
    ctx.report_stage(BuildStage::Link, 0);
    let start = Instant::now();
    let parts: Vec<&[u8]> = object.parts.iter().map(|p| p.object.as_slice()).collect();
    let library = link_shared(&parts).map_err(|e| e.to_string())?;
    let linked = start.elapsed();
    // The weights go beside the executable, where loading maps them.
    let (executable, weights) = Package::split_executable(&compiled.executable);
    let package = Package {
        arch: std::env::consts::ARCH.to_string(),
        os: std::env::consts::OS.to_string(),
        cpu: variant.cpu.to_string(),
        input_names: model.input_names.clone(),
        output_names: model.output_names.clone(),
        kernels: compiled
            .kernels
            .iter()
            .map(|k| (k.name.clone(), format!("{}{}", k.symbol, variant.suffix)))
            .collect(),
        executable,
        weights,
        library,
    };
    Ok((package, linked, report))
}

/// Writes `package` to `path`; returns its size in bytes.
pub fn write(path: &Path, package: &Package) -> Result<usize, String> {
    let bytes = package.to_bytes();
    std::fs::write(path, &bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(bytes.len())
}

/// Loads the package at `path` (mapped, its weights read in place: see
/// `relax_runtime::package::open`): the executable with its kernels, and
/// the model's input and output names.
pub fn load(path: &Path) -> Result<(Executable, Vec<String>, Vec<String>), String> {
    let opened = open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((opened.executable, opened.input_names, opened.output_names))
}
