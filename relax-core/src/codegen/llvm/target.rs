//! The host target machine and the optimization pipeline.
//!
//! 1. Code is generated for the host triple, with CPU `generic`, a named
//!    CPU level (`x86-64-v3`, for ahead-of-time variants) or, when
//!    native, the host CPU's name and features; native modules also carry
//!    them as `target-cpu`/`target-features` function attributes, which the
//!    JIT's own code generator reads.
//! 2. Where the CPU has AVX-512 (the host's features, or the level
//!    `x86-64-v4`), functions ask for 512-bit vectors
//!    (`prefer-vector-width`, `min-legal-vector-width`): LLVM 14 otherwise
//!    splits a 16-lane `float32` vector into two 256-bit halves, and a
//!    register tile of twelve such vectors no longer fits the registers.
//! 3. The module is verified, then optimized with LLVM's new pass manager at
//!    `default<O3>` with the target machine's cost model (so the loop
//!    vectorizer and unroller know the vector width).
//! 4. LLVM's SLP vectorizer is off. Every vector in a scheduled kernel is
//!    explicit (a `T.vectorized` loop) or the loop vectorizer's; what SLP
//!    found was the unrolled register tile's scalar index arithmetic (the
//!    row offsets of its broadcast loads), which it packed into vectors and
//!    took apart again with an extract per load: ten vector-port
//!    instructions per twelve FMAs, 25% of a GEMM micro-kernel's time.

use super::types::internal;
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{CodeModel, InitializationConfig, RelocMode, Target, TargetMachine};
use inkwell::OptimizationLevel;
use relax_runtime::Error;
use std::sync::{Mutex, OnceLock};

/// Serializes the parts of LLVM that touch process-wide registries (target
/// initialization, execution engine creation).
pub(super) static LLVM_GLOBAL: Mutex<()> = Mutex::new(());

/// Initializes the native target once, and turns LLVM's SLP vectorizer off
/// (see the module docs).
pub(super) fn init() -> Result<(), Error> {
    static INIT: OnceLock<Result<(), String>> = OnceLock::new();
    INIT.get_or_init(|| {
        let _guard = LLVM_GLOBAL.lock().unwrap_or_else(|p| p.into_inner());
        without_slp_vectorizer();
        Target::initialize_native(&InitializationConfig::default())
    })
    .clone()
    .map_err(|e| internal(format!("the native target is not available: {e}")))
}

/// Sets LLVM's `-vectorize-slp=false` for the process. In LLVM 14 the
/// pass is in every `default<O3>` pipeline and reads only this option
/// (`PassBuilderOptions`' setting does not reach it), so the option is set
/// the way `opt` sets it, once, before any pipeline runs.
fn without_slp_vectorizer() {
    extern "C" {
        // LLVM's C API (llvm-c/Support.h), in the libLLVM that inkwell links.
        fn LLVMParseCommandLineOptions(
            argc: std::os::raw::c_int,
            argv: *const *const std::os::raw::c_char,
            overview: *const std::os::raw::c_char,
        );
    }
    let argv = [c"relax".as_ptr(), c"-vectorize-slp=false".as_ptr()];
    // SAFETY: two NUL-terminated static strings and a null overview, as the
    // C API documents; called once, under `LLVM_GLOBAL`, before any pass runs.
    unsafe { LLVMParseCommandLineOptions(2, argv.as_ptr(), std::ptr::null()) };
}

/// The LLVM CPU and feature string of a CPU level of `relax_runtime::cpu`:
/// LLVM names every level but `x86-64-v4-vnni-bf16`, which is `x86-64-v4`
/// with the two dot-product features.
pub(super) fn llvm_cpu(level: &str) -> (&str, &str) {
    if level == relax_runtime::cpu::V4_VNNI_BF16 {
        ("x86-64-v4", "+avx512vnni,+avx512bf16")
    } else {
        (level, "")
    }
}

/// The instructions beyond a level's baseline that kernels for `opts` may
/// use: the host's with `native_cpu`, else what the named level
/// guarantees (F16C from `x86-64-v3` on, AVX-512 from `x86-64-v4` on, VNNI
/// and BF16 at `x86-64-v4-vnni-bf16`).
pub(super) fn cpu_extras(opts: &super::CodegenOptions) -> CpuExtras {
    if opts.native_cpu {
        return host_extras();
    }
    let level = opts.cpu.as_deref().unwrap_or("generic");
    let dl = level == relax_runtime::cpu::V4_VNNI_BF16;
    let v4 = dl || level == "x86-64-v4";
    CpuExtras {
        avx512: v4,
        vnni: dl,
        bf16: dl,
        f16c: v4 || level == "x86-64-v3",
    }
}

/// [`cpu_extras`] of the host CPU.
pub(super) fn host_extras() -> CpuExtras {
    CpuExtras {
        avx512: host_has("+avx512f"),
        vnni: host_vnni(),
        bf16: host_bf16(),
        f16c: host_f16c(),
    }
}

/// See [`cpu_extras`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct CpuExtras {
    /// AVX-512 Foundation: `exp` scales by `vscalefps` ([`super::math`]).
    pub avx512: bool,
    pub vnni: bool,
    pub bf16: bool,
    pub f16c: bool,
}

/// Whether the host CPU has the LLVM feature `feature` (`+avx512f`).
fn host_has(feature: &str) -> bool {
    init().is_ok()
        && TargetMachine::get_host_cpu_features()
            .to_string_lossy()
            .split(',')
            .any(|f| f == feature)
}

/// Whether the host CPU has AVX512-VNNI (`vpdpbusd`). Of the named CPU
/// levels, only `x86-64-v4-vnni-bf16` guarantees it ([`cpu_extras`]).
pub(super) fn host_vnni() -> bool {
    host_has("+avx512vnni")
}

/// Whether the host CPU has AVX512-BF16 (`vdpbf16ps`). Of the named CPU
/// levels, only `x86-64-v4-vnni-bf16` guarantees it ([`cpu_extras`]).
pub(super) fn host_bf16() -> bool {
    host_has("+avx512bf16")
}

/// Whether the host CPU has F16C (`vcvtph2ps`).
pub(super) fn host_f16c() -> bool {
    host_has("+f16c")
}

/// A target machine for the host triple: the host's CPU (`native`), else
/// the CPU named `cpu` (an LLVM name such as `x86-64-v3`), else `generic`.
pub(super) fn host_machine(native: bool, cpu: Option<&str>) -> Result<TargetMachine, Error> {
    init()?;
    let triple = TargetMachine::get_default_triple();
    let target = Target::from_triple(&triple).map_err(internal)?;
    let (cpu, features) = if native {
        (
            TargetMachine::get_host_cpu_name().to_string(),
            TargetMachine::get_host_cpu_features().to_string(),
        )
    } else {
        let level = cpu.unwrap_or("generic");
        let (cpu, features) = llvm_cpu(level);
        (cpu.to_string(), features.to_string())
    };
    target
        .create_target_machine(
            &triple,
            &cpu,
            &features,
            OptimizationLevel::Aggressive,
            // Objects end up in position-independent executables.
            RelocMode::PIC,
            CodeModel::Default,
        )
        .ok_or_else(|| internal(format!("no target machine for {triple} ({cpu})")))
}

/// Verifies and optimizes `module` for `tm`. See the module docs.
pub(super) fn optimize(module: &Module<'_>, tm: &TargetMachine, native: bool) -> Result<(), Error> {
    module.set_triple(&tm.get_triple());
    module.set_data_layout(&tm.get_target_data().get_data_layout());
    let ctx = module.get_context();
    let nounwind = ctx.create_enum_attribute(Attribute::get_named_enum_kind_id("nounwind"), 0);
    let cpu = tm.get_cpu().to_string();
    let features = tm.get_feature_string().to_string_lossy().into_owned();
    let wide = features.contains("+avx512f") || cpu == "x86-64-v4";
    for f in module.get_functions() {
        if f.count_basic_blocks() == 0 {
            continue;
        }
        f.add_attribute(AttributeLoc::Function, nounwind);
        if wide {
            for key in ["prefer-vector-width", "min-legal-vector-width"] {
                f.add_attribute(
                    AttributeLoc::Function,
                    ctx.create_string_attribute(key, "512"),
                );
            }
        }
        if native {
            f.add_attribute(
                AttributeLoc::Function,
                ctx.create_string_attribute("target-cpu", &cpu),
            );
            f.add_attribute(
                AttributeLoc::Function,
                ctx.create_string_attribute("target-features", &features),
            );
        }
    }
    module
        .verify()
        .map_err(|e| internal(format!("the generated module does not verify: {e}")))?;
    module
        .run_passes("default<O3>", tm, PassBuilderOptions::create())
        .map_err(internal)
}
