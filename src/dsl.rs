//! Run-time support for the code that `relax::module!` and
//! `#[relax::function]` generate. Not meant to be used directly.
//!
//! A generated Rust module holds
//!
//! 1. `module()`: the `IRModule`, built on first use inside a [`Lazy`]
//!    static by constructor calls (never by parsing text);
//! 2. an [`ExecutableCache`] static: the module compiled for this process on
//!    the first call of any of its wrappers, then shared by all of them and
//!    by every thread. A failed build is remembered and returned as the
//!    same `Err` from every call; nothing here panics;
//! 3. one wrapper per public function, which converts its arguments with
//!    [`TensorArg`] and [`PrimArg`], runs the function with [`call`], and
//!    converts the result with [`FromValue`].
//!
//! Which code runs: the [`AotArtifact`] when the crate's build.rs compiled
//! the module with `relax::aot::Builder` (the generated code then builds the
//! cache with [`ExecutableCache::with_aot`]; see `relax::aot`); else the
//! module is compiled on the first call, for
//! [`Target::host()`](crate::Target::host) (kernels JIT-compiled by LLVM for
//! this CPU) with the facade's "llvm" feature (on by default), for
//! [`Target::interpreter()`](crate::Target::interpreter) without it.
//! [`ExecutableCache::backend`] says which.
//!
//! With the environment variable `RELAX_PROFILE` set (to anything but `0`)
//! when the module is first called, its VM times every kernel
//! ([`VirtualMachine::with_profiling`]); [`ExecutableCache::profile`] reads
//! the times.
//!
//! A module whose functions attach schedules (`#[schedule(matmul =
//! by_hand)]`) also holds them as `(PrimFunc name, ScheduleFn)` pairs;
//! its cache is made with [`ExecutableCache::with_schedules`], and the
//! first call compiles [`apply_schedules`]' result: the module legalized,
//! then each schedule run on its PrimFunc by `ApplySchedule` (which marks
//! it `tir.is_scheduled`, so the default schedules leave it alone).

use crate::ir::IRModule;
use crate::native::{CompiledKernel, KernelFn, NativeKernel, NativeLibrary};
use crate::tir::schedule::{Schedule, ScheduleError};
use crate::transform::{ApplySchedule, LegalizeOps, Pass};
use crate::{Error, Executable, Target, Value, VirtualMachine};
use relax_runtime::parallel::ParallelBody;
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

pub use relax_runtime::interop::{FromValue, PrimArg, TensorArg};
/// The runtime entry AOT objects call for parallel loops; an artifact holds
/// its address so the linker keeps it beside the static library.
pub use relax_runtime::parallel::relax_parallel_for;
pub use relax_runtime::vm::KernelTime;
/// A value computed on first access (the std `LazyLock`: a `static` holding
/// the generated `IRModule`).
pub use std::sync::LazyLock as Lazy;

/// A schedule attached in the DSL: a Rust function scheduling one
/// PrimFunc with TVM's primitives.
pub type ScheduleFn = fn(&mut Schedule) -> Result<(), ScheduleError>;

/// `module` as a module with attached schedules is compiled: legalized
/// (`LegalizeOps`), then each `(name, schedule)` run on the PrimFunc
/// `name` (`ApplySchedule`). A PrimFunc the legalized module lacks, or a
/// failed schedule step, is an `Err` naming it.
pub fn apply_schedules(
    module: &IRModule,
    schedules: &[(&str, ScheduleFn)],
) -> Result<IRModule, Error> {
    let legalized = LegalizeOps::default().run(module.clone())?;
    schedules
        .iter()
        .fold(ApplySchedule::default(), |pass, (name, f)| {
            pass.func(name, *f)
        })
        .run(legalized)
}

/// A module's compiled form, built on first use and shared by every call
/// (and every thread).
pub struct ExecutableCache {
    content_hash: u64,
    aot: Option<&'static AotArtifact>,
    schedules: &'static [(&'static str, ScheduleFn)],
    vm: OnceLock<Result<VirtualMachine, Error>>,
}

impl ExecutableCache {
    /// An empty cache for the module whose DSL tokens hash to `content_hash`.
    pub const fn new(content_hash: u64) -> Self {
        ExecutableCache {
            content_hash,
            aot: None,
            schedules: &[],
            vm: OnceLock::new(),
        }
    }

    /// An empty cache for a module with attached schedules: the first call
    /// compiles [`apply_schedules`]`(module, schedules)`.
    pub const fn with_schedules(
        content_hash: u64,
        schedules: &'static [(&'static str, ScheduleFn)],
    ) -> Self {
        ExecutableCache {
            content_hash,
            aot: None,
            schedules,
            vm: OnceLock::new(),
        }
    }

    /// An empty cache that loads the module from `artifact`, its
    /// ahead-of-time compiled form, instead of compiling it. The generated
    /// code has already checked (at compile time) that the artifact was
    /// built from this module.
    pub const fn with_aot(content_hash: u64, artifact: &'static AotArtifact) -> Self {
        ExecutableCache {
            content_hash,
            aot: Some(artifact),
            schedules: &[],
            vm: OnceLock::new(),
        }
    }

    /// The ahead-of-time artifact the module runs from, if any.
    pub fn aot(&self) -> Option<&'static AotArtifact> {
        self.aot
    }

    /// Which code runs the module's functions.
    pub fn backend(&self) -> Backend {
        match self.aot {
            Some(_) => Backend::Aot,
            // Mirrors the target `vm` compiles for without an artifact.
            None if cfg!(feature = "llvm") => Backend::Jit,
            None => Backend::Interpreter,
        }
    }

    /// The hash of the DSL tokens the module was generated from.
    pub fn content_hash(&self) -> u64 {
        self.content_hash
    }

    /// The virtual machine running `module`, compiling it on the first call.
    /// A build error is kept and returned by this and every later call.
    pub fn vm(&self, module: &IRModule) -> Result<&VirtualMachine, Error> {
        self.vm
            .get_or_init(|| {
                if let Some(artifact) = self.aot {
                    return artifact.load().map(|exec| new_vm(&exec));
                }
                let exec = if self.schedules.is_empty() {
                    crate::build(module, &jit_target())
                } else {
                    apply_schedules(module, self.schedules)
                        .and_then(|scheduled| crate::build(&scheduled, &jit_target()))
                };
                exec.map(|exec| new_vm(&exec))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Whether the module has been compiled (successfully or not).
    pub fn is_built(&self) -> bool {
        self.vm.get().is_some()
    }

    /// The time spent in each kernel, longest first: empty unless
    /// `RELAX_PROFILE` was set when the module was first called (see the
    /// module docs) and it has run since.
    pub fn profile(&self) -> Vec<KernelTime> {
        match self.vm.get() {
            Some(Ok(vm)) => vm.profile(),
            _ => Vec::new(),
        }
    }

    /// Forgets the kernel times recorded so far (see
    /// [`ExecutableCache::profile`]).
    pub fn reset_profile(&self) {
        if let Some(Ok(vm)) = self.vm.get() {
            vm.reset_profile();
        }
    }
}

/// The VM of a generated module: timing its kernels when `RELAX_PROFILE`
/// is set (to anything but `0`).
fn new_vm(exec: &Executable) -> VirtualMachine {
    let vm = VirtualMachine::new(exec);
    match std::env::var("RELAX_PROFILE") {
        Ok(v) if !v.is_empty() && v != "0" => vm.with_profiling(),
        _ => vm,
    }
}

/// Where a module compiled on first call runs: LLVM-compiled kernels when
/// the "llvm" feature is on, the reference interpreter otherwise.
pub fn jit_target() -> Target {
    if cfg!(feature = "llvm") {
        Target::host()
    } else {
        Target::interpreter()
    }
}

/// Where a generated module's code runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The static library build.rs compiled (`relax::aot::Builder`).
    Aot,
    /// Compiled on the first call by the LLVM JIT.
    Jit,
    /// The reference interpreter, prepared on the first call.
    Interpreter,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Aot => "aot",
            Backend::Jit => "jit",
            Backend::Interpreter => "interpreter",
        })
    }
}

/// A module compiled ahead of time by `relax::aot::Builder`: the file the
/// Builder writes to OUT_DIR is one expression of this type, which the
/// generated module includes (see `relax::aot`).
///
/// The kernels are functions of the static library the Builder linked into
/// the crate, declared `extern "C"` beside the table; the executable's
/// bytes are embedded with `include_bytes!`.
pub struct AotArtifact {
    /// The Rust module's name.
    pub module: &'static str,
    /// The hash of the IR the artifact was compiled from; the generated
    /// code asserts at compile time that it is the module's.
    pub content_hash: u64,
    /// The serialized executable ([`Executable::to_bytes`]).
    pub executable: &'static [u8],
    /// The kernels compiled for each CPU level, best first; the last one
    /// runs on any CPU of the architecture (see [`AotArtifact::variant`]).
    pub variants: &'static [AotVariant],
    /// The runtime's `relax_parallel_for`, which the compiled kernels call;
    /// holding its address makes the linker keep it.
    pub parallel_for: unsafe extern "C" fn(i64, ParallelBody, *mut u8),
}

/// The kernels of an [`AotArtifact`] compiled for one CPU level.
pub struct AotVariant {
    /// The level, as [`relax_runtime::cpu`] names it:
    /// `x86-64-v4-vnni-bf16`, `x86-64-v4`, `x86-64-v3`, `generic`, or
    /// `native` (the build machine's CPU).
    pub cpu: &'static str,
    /// Each native kernel the executable calls: its name in the executable
    /// and its compiled function.
    pub kernels: &'static [(&'static str, KernelFn)],
}

impl AotArtifact {
    /// The variant this CPU runs: the first (best) whose level it supports.
    pub fn variant(&self) -> Option<&'static AotVariant> {
        self.variants
            .iter()
            .find(|v| relax_runtime::cpu::supports(v.cpu))
    }

    /// The executable, with the kernels of [`AotArtifact::variant`]
    /// attached. Fails when the bytes do not load, when no variant runs on
    /// this CPU, or when a kernel the executable calls is missing (an
    /// artifact from another version of relax).
    pub fn load(&self) -> Result<Executable, Error> {
        let exec = Executable::from_bytes(self.executable)?;
        let Some(variant) = self.variant() else {
            let levels: Vec<&str> = self.variants.iter().map(|v| v.cpu).collect();
            return Err(Error::Unsupported(format!(
                "the AOT artifact of module `{}` has code for {} only, none of which this CPU runs",
                self.module,
                levels.join(", ")
            )));
        };
        // Statically linked code is never unloaded: the owner owns nothing.
        let owner: Arc<dyn Send + Sync> = Arc::new(());
        let kernels: HashMap<String, Arc<CompiledKernel>> = variant
            .kernels
            .iter()
            .map(|&(symbol, func)| {
                let kernel = CompiledKernel {
                    symbol: symbol.to_string(),
                    func,
                    owner: owner.clone(),
                };
                (symbol.to_string(), Arc::new(kernel))
            })
            .collect();
        if let Some(missing) = exec.natives.iter().find(|s| !kernels.contains_key(*s)) {
            return Err(Error::Unsupported(format!(
                "the AOT artifact of module `{}` has no kernel `{missing}`; rebuild it",
                self.module
            )));
        }
        let library = AotLibrary {
            module: self.module,
            kernels,
        };
        Ok(exec.with_library(Arc::new(library)))
    }
}

impl fmt::Debug for AotArtifact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AotArtifact")
            .field("module", &self.module)
            .field("content_hash", &format_args!("{:#018x}", self.content_hash))
            .field(
                "executable",
                &format_args!("{} bytes", self.executable.len()),
            )
            .field(
                "variants",
                &self.variants.iter().map(|v| v.cpu).collect::<Vec<_>>(),
            )
            .field(
                "kernels",
                &self
                    .variants
                    .first()
                    .map(|v| v.kernels.iter().map(|k| k.0).collect::<Vec<_>>())
                    .unwrap_or_default(),
            )
            .finish()
    }
}

/// The kernels of an [`AotArtifact`], by the names the executable uses.
struct AotLibrary {
    module: &'static str,
    kernels: HashMap<String, Arc<CompiledKernel>>,
}

impl NativeLibrary for AotLibrary {
    fn lookup(&self, symbol: &str) -> Option<Arc<dyn NativeKernel>> {
        self.kernels
            .get(symbol)
            .map(|k| k.clone() as Arc<dyn NativeKernel>)
    }
    fn describe(&self) -> String {
        format!("the AOT library of module `{}`", self.module)
    }
}

/// Calls the function `name` of `module` with `args`, compiling the module
/// into `cache` first if this is the first call.
pub fn call(
    module: &IRModule,
    cache: &ExecutableCache,
    name: &str,
    args: &[Value],
) -> Result<Value, Error> {
    cache.vm(module)?.call(name, args)
}

/// The weights of a model written as DSL source by `relax import -o
/// model.rs`: `bytes` (the `.weights` file) holds each tensor of `table`
/// (name, dtype, shape) in order, as raw little-endian elements, with
/// nothing between them. A file of another length, or a dtype or shape
/// the table cannot hold, is an `Err` naming the file's problem.
pub fn load_weights(
    bytes: &[u8],
    table: &[(&str, &str, &[i64])],
) -> Result<Vec<crate::Tensor>, Error> {
    let mut out = Vec::with_capacity(table.len());
    let mut at = 0usize;
    for (name, dtype, shape) in table {
        let d: crate::DataType = dtype
            .parse()
            .map_err(|_| Error::Deserialize(format!("weight `{name}`: unknown dtype {dtype}")))?;
        let numel = shape
            .iter()
            .try_fold(1usize, |n, &s| n.checked_mul(usize::try_from(s).ok()?))
            .ok_or_else(|| Error::Deserialize(format!("weight `{name}`: bad shape {shape:?}")))?;
        let len = numel
            .checked_mul(d.size_in_bytes())
            .ok_or_else(|| Error::Deserialize(format!("weight `{name}` is too large")))?;
        let end = at
            .checked_add(len)
            .filter(|&e| e <= bytes.len())
            .ok_or_else(|| {
                Error::Deserialize(format!(
                    "the weights file ends inside weight `{name}` ({} bytes, {} needed)",
                    bytes.len(),
                    at.saturating_add(len)
                ))
            })?;
        out.push(crate::Tensor::from_bytes(d, shape, &bytes[at..end])?);
        at = end;
    }
    if at != bytes.len() {
        return Err(Error::Deserialize(format!(
            "the weights file has {} bytes after the last weight",
            bytes.len() - at
        )));
    }
    Ok(out)
}

/// The bytes [`load_weights`] reads back: each tensor's elements in order.
pub fn weights_bytes(tensors: &[&crate::Tensor]) -> Vec<u8> {
    tensors.iter().flat_map(|t| t.as_bytes().to_vec()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Tensor;

    const ADD: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n",), dtype="float32"), y: R.Tensor(("n",), dtype="float32")) -> R.Tensor(("n",), dtype="float32"):
        n = T.int64()
        z: R.Tensor((n,), dtype="float32") = R.add(x, y)
        return z
"#;

    fn vector(values: &[f32]) -> Value {
        Tensor::from_slice(&[values.len() as i64], values)
            .unwrap()
            .into()
    }

    #[test]
    fn builds_once_and_calls() {
        let module: IRModule = ADD.parse().unwrap();
        let cache = ExecutableCache::new(42);
        assert!(!cache.is_built());
        assert_eq!(cache.content_hash(), 42);
        let out = call(
            &module,
            &cache,
            "main",
            &[vector(&[1.0, 2.0]), vector(&[3.0, 4.0])],
        )
        .unwrap();
        assert_eq!(out, vector(&[4.0, 6.0]));
        assert!(cache.is_built());
        let first = cache.vm(&module).unwrap() as *const VirtualMachine;
        let again = cache.vm(&module).unwrap() as *const VirtualMachine;
        assert_eq!(first, again, "the VM is built once");
    }

    #[test]
    fn relax_profile_times_the_kernels_of_a_generated_module() {
        // Other tests of this process may now build profiling VMs too,
        // which changes nothing but their timing.
        std::env::set_var("RELAX_PROFILE", "1");
        let module: IRModule = ADD.parse().unwrap();
        let cache = ExecutableCache::new(7);
        assert!(cache.profile().is_empty(), "nothing built, nothing timed");
        for _ in 0..3 {
            call(&module, &cache, "main", &[vector(&[1.0]), vector(&[2.0])]).unwrap();
        }
        let profile = cache.profile();
        assert_eq!(profile.len(), 1, "{profile:?}");
        assert_eq!(profile[0].calls, 3);
        cache.reset_profile();
        assert!(cache.profile().is_empty(), "reset forgets the calls");
        call(&module, &cache, "main", &[vector(&[1.0]), vector(&[2.0])]).unwrap();
        assert_eq!(cache.profile()[0].calls, 1, "and profiling goes on");
    }

    #[test]
    fn a_shape_mismatch_is_the_vms_error() {
        let module: IRModule = ADD.parse().unwrap();
        let cache = ExecutableCache::new(0);
        let err = call(
            &module,
            &cache,
            "main",
            &[vector(&[1.0, 2.0]), vector(&[3.0])],
        )
        .unwrap_err();
        assert!(
            matches!(&err, Error::Mismatch { context, .. } if context == "parameter `y` of `main`"),
            "{err}"
        );
    }

    const CALL_TIR: &str = r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add_one(A: T.Buffer((n,), "float32"), B: T.Buffer((n,), "float32")):
        n = T.int64()
        T.evaluate(0)

    @R.function
    def main(x: R.Tensor(("n",), dtype="float32")) -> R.Tensor(("n",), dtype="float32"):
        n = T.int64()
        cls = Module
        y = R.call_tir(cls.add_one, (x,), out_sinfo=R.Tensor((n,), dtype="float32"))
        return y
"#;

    /// `B[i] = A[i] + 1` in the kernel ABI, standing in for the compiled
    /// code of a static library: `scalars[0]` is `n`.
    unsafe extern "C" fn add_one(buffers: *const *mut u8, scalars: *const i64) -> i32 {
        // SAFETY: the VM passes two f32 buffers of n elements and n.
        unsafe {
            let n = *scalars as usize;
            let a = std::slice::from_raw_parts(*buffers as *const f32, n);
            let b = std::slice::from_raw_parts_mut(*buffers.add(1) as *mut f32, n);
            for (o, i) in b.iter_mut().zip(a) {
                *o = i + 1.0;
            }
        }
        0
    }

    /// An artifact of `CALL_TIR`'s executable with `kernels`.
    fn artifact(kernels: &'static [(&'static str, KernelFn)]) -> &'static AotArtifact {
        let module: IRModule = CALL_TIR.parse().unwrap();
        let exec = crate::build(&module, &Target::interpreter()).unwrap();
        assert_eq!(exec.natives, ["add_one"]);
        Box::leak(Box::new(AotArtifact {
            module: "m",
            content_hash: 7,
            executable: Box::leak(exec.to_bytes().into_boxed_slice()),
            variants: Box::leak(Box::new([AotVariant {
                cpu: "generic",
                kernels,
            }])),
            parallel_for: relax_parallel_for,
        }))
    }

    #[test]
    fn an_aot_cache_runs_the_artifacts_kernels_without_compiling() {
        let cache = ExecutableCache::with_aot(1, artifact(&[("add_one", add_one)]));
        assert_eq!(cache.backend(), Backend::Aot);
        assert_eq!(cache.backend().to_string(), "aot");
        assert_eq!(cache.aot().unwrap().module, "m");
        // The module passed in is not compiled: an empty one will do.
        let empty = IRModule::from_functions(std::iter::empty());
        let out = call(&empty, &cache, "main", &[vector(&[1.0, 2.5])]).unwrap();
        assert_eq!(out, vector(&[2.0, 3.5]));
        // The VM still checks arguments before the kernel runs.
        let err = call(&empty, &cache, "main", &[Value::from(1i64)]).unwrap_err();
        assert!(matches!(err, Error::Mismatch { .. }), "{err}");
        let text = format!("{:?}", cache.aot().unwrap());
        assert!(text.contains("kernels: [\"add_one\"]"), "{text}");
    }

    #[test]
    fn the_best_variant_this_cpu_runs_is_loaded() {
        let mut a = artifact(&[("add_one", add_one)]);
        let generic = &a.variants[0];
        let leaked: &'static mut AotArtifact = Box::leak(Box::new(AotArtifact {
            variants: Box::leak(Box::new([
                // A level no CPU has, with an empty table: loading it would fail.
                AotVariant {
                    cpu: "x86-64-v9",
                    kernels: &[],
                },
                AotVariant {
                    cpu: generic.cpu,
                    kernels: generic.kernels,
                },
            ])),
            ..*a
        }));
        a = leaked;
        assert_eq!(a.variant().unwrap().cpu, "generic");
        let cache = ExecutableCache::with_aot(1, a);
        let empty = IRModule::from_functions(std::iter::empty());
        let out = call(&empty, &cache, "main", &[vector(&[1.0])]).unwrap();
        assert_eq!(out, vector(&[2.0]));
        let text = format!("{a:?}");
        assert!(
            text.contains("variants: [\"x86-64-v9\", \"generic\"]"),
            "{text}"
        );
    }

    #[test]
    fn an_artifact_with_no_variant_for_this_cpu_fails_to_load() {
        let a = artifact(&[("add_one", add_one)]);
        let only_v9: &'static AotArtifact = Box::leak(Box::new(AotArtifact {
            variants: Box::leak(Box::new([AotVariant {
                cpu: "x86-64-v9",
                kernels: a.variants[0].kernels,
            }])),
            ..*a
        }));
        let err = only_v9.load().unwrap_err().to_string();
        assert!(
            err.contains("has code for x86-64-v9 only, none of which this CPU runs"),
            "{err}"
        );
    }

    #[test]
    fn an_artifact_missing_a_kernel_fails_to_load() {
        let cache = ExecutableCache::with_aot(1, artifact(&[]));
        let empty = IRModule::from_functions(std::iter::empty());
        let err = call(&empty, &cache, "main", &[vector(&[1.0])]).unwrap_err();
        assert!(
            err.to_string()
                .contains("the AOT artifact of module `m` has no kernel `add_one`"),
            "{err}"
        );
    }

    #[test]
    fn without_an_artifact_the_backend_follows_the_llvm_feature() {
        let want = if cfg!(feature = "llvm") {
            Backend::Jit
        } else {
            Backend::Interpreter
        };
        assert_eq!(ExecutableCache::new(0).backend(), want);
        assert!(ExecutableCache::new(0).aot().is_none());
    }

    #[test]
    fn a_build_failure_is_returned_by_every_call() {
        // Well-formedness fails: `z` is used but never defined.
        let z = crate::ir::Var::new("z", None);
        let f = crate::ir::Function::new(
            vec![],
            crate::ir::Expr::seq(vec![], crate::ir::Expr::var(&z)),
            crate::ir::StructInfo::object(),
        );
        let module = IRModule::from_functions([(crate::ir::GlobalVar::new("main"), f.into())]);
        let cache = ExecutableCache::new(0);
        let first = call(&module, &cache, "main", &[]).unwrap_err();
        assert!(matches!(first, Error::Compile(_)), "{first}");
        let second = call(&module, &cache, "main", &[]).unwrap_err();
        assert_eq!(first, second);
    }

    #[test]
    fn weights_round_trip_and_bad_files_are_errors() {
        let a = Tensor::from_vec(&[2, 2], vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
        let b = Tensor::from_vec(&[3], vec![7i64, 8, 9]).unwrap();
        let bytes = super::weights_bytes(&[&a, &b]);
        let table: &[(&str, &str, &[i64])] = &[("a", "float32", &[2, 2]), ("b", "int64", &[3])];
        let back = super::load_weights(&bytes, table).unwrap();
        assert_eq!(back, vec![a, b]);
        let short = super::load_weights(&bytes[..20], table)
            .unwrap_err()
            .to_string();
        assert!(short.contains("ends inside weight `b`"), "{short}");
        let mut long = bytes.clone();
        long.push(0);
        assert!(super::load_weights(&long, table).is_err());
        let bad: &[(&str, &str, &[i64])] = &[("a", "float99", &[1])];
        assert!(super::load_weights(&bytes, bad).is_err());
    }
}
