//! Back ends: from an IRModule to something that runs.
//!
//! [`build`] is `relax::build`: it checks the module, runs the [`pipeline`]
//! of the target, checks the result again, compiles every Relax function to
//! VM code ([`vm::codegen()`]) and attaches the library that runs the
//! PrimFuncs the code calls (`call_tir`).
//!
//! | target | op calls run on | PrimFuncs run on | legalizes |
//! |---|---|---|---|
//! | [`Target::interpreter()`] | the runtime's reference kernels | the loop-level interpreter | no |
//! | [`Target::tir_interpreter()`] | (legalized to PrimFuncs) | the loop-level interpreter | yes |
//! | [`Target::host()`] | (legalized to PrimFuncs) | LLVM-compiled code (feature "llvm") | yes |
//!
//! `Target::interpreter()` is the oracle: it runs each op on its reference
//! kernel, without legalization, so it is fast to build and independent of
//! the loop-level lowering the other targets are tested against. PrimFuncs
//! the module itself calls through `call_tir` still run, on the loop-level
//! interpreter. `Target::tir_interpreter()` runs the legalized and fused
//! PrimFuncs `Target::host()` compiles, before their loop schedule,
//! interpreted: where the two disagree, the LLVM back end or the schedule
//! is wrong; where it disagrees with `Target::interpreter()`, a
//! legalization is. With [`Target::with_vector_bits`] it interprets the
//! scheduled loops, every access bounds-checked. An op without a legalization stays an op call and runs
//! on its reference kernel on every target.

#[cfg(all(feature = "syntax", feature = "llvm"))]
pub mod aot;
pub mod dedupe;
mod native;
mod pipeline;
pub mod vm;

pub use pipeline::{fuse_ops, fuse_tir, host_pipeline_unscheduled, legalize_ops, pipeline};

use crate::analysis::well_formed;
use crate::ir::IRModule;
use crate::transform::{BuildStage, Knobs, Pass, PassContext};
use relax_runtime::{Error, Executable};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// Where a module runs. See the module docs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    kind: TargetKind,
    /// The vector registers `DefaultSchedule` shapes its tiles for; `None`:
    /// the host CPU's (and no schedule on the loop-level interpreter).
    vector_bits: Option<u32>,
    /// Tuned knobs by kernel (`crate::tune`), for `DefaultSchedule`.
    tuned: Option<Arc<HashMap<u64, Knobs>>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TargetKind {
    Interpreter,
    TirInterpreter,
    Host,
}

impl Target {
    /// The reference interpreter: every op runs its reference kernel, with
    /// no legalization (the oracle).
    pub fn interpreter() -> Self {
        Target {
            kind: TargetKind::Interpreter,
            vector_bits: None,
            tuned: None,
        }
    }
    /// Ops legalized to PrimFuncs, run on the loop-level interpreter: what
    /// [`Target::host()`] compiles, without LLVM.
    pub fn tir_interpreter() -> Self {
        Target {
            kind: TargetKind::TirInterpreter,
            vector_bits: None,
            tuned: None,
        }
    }
    /// The host CPU: ops legalized to PrimFuncs compiled by LLVM (needs the
    /// "llvm" feature).
    pub fn host() -> Self {
        Target {
            kind: TargetKind::Host,
            vector_bits: None,
            tuned: None,
        }
    }
    /// This target with loop schedules shaped for vector registers of
    /// `bits` (128, 256 or 512) instead of the host CPU's: what an
    /// ahead-of-time variant for another x86-64 level gets. The code is
    /// still generated for the host, so any width runs correctly on it.
    /// On [`Target::tir_interpreter()`] it runs `DefaultSchedule` too, so
    /// the loop-level interpreter, which checks every access against its
    /// buffer's bounds, runs the scheduled loops LLVM would compile
    /// (tiles, packs, tails); without it, the unscheduled ones.
    pub fn with_vector_bits(mut self, bits: u32) -> Self {
        self.vector_bits = Some(bits);
        self
    }
    /// This target with tuned knobs for its loop schedules: each kernel
    /// whose `kernel_key` is in `tuned` is scheduled with its knobs
    /// (`DefaultSchedule::with_tuned`; `crate::tune::Tuning::knobs`
    /// reads or measures them).
    pub fn with_tuned_knobs(mut self, tuned: HashMap<u64, Knobs>) -> Self {
        self.tuned = Some(Arc::new(tuned));
        self
    }
    /// The vector width the loop schedules assume, when set.
    pub fn vector_bits(&self) -> Option<u32> {
        self.vector_bits
    }
    /// Whether this is [`Target::interpreter()`].
    pub fn is_interpreter(&self) -> bool {
        self.kind == TargetKind::Interpreter
    }
    /// Whether the pipeline lowers op calls to PrimFuncs (LegalizeOps).
    pub fn legalizes(&self) -> bool {
        self.kind != TargetKind::Interpreter
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.kind {
            TargetKind::Interpreter => "interpreter",
            TargetKind::TirInterpreter => "tir-interpreter",
            TargetKind::Host => "host",
        })
    }
}

/// Compiles `module` for `target`. The module must be well formed (every
/// violation is reported otherwise); see the module docs for the steps.
///
/// The executable runs on a [`VirtualMachine`](relax_runtime::VirtualMachine)
/// (`relax::build` and `relax::VirtualMachine` through the facade):
///
/// ```
/// use relax_core::backend::{build, Target};
/// use relax_core::ir::IRModule;
/// use relax_runtime::{Tensor, Value, VirtualMachine};
///
/// let module: IRModule = r#"
/// @I.ir_module
/// class Module:
///     @R.function
///     def main(x: R.Tensor(("n",), dtype="float32")) -> R.Tensor(("n",), dtype="float32"):
///         n = T.int64()
///         gv: R.Tensor((n,), dtype="float32") = R.multiply(x, x)
///         return gv
/// "#
/// .parse()?;
/// // `Target::host()` compiles through LLVM (feature "llvm").
/// let exec = build(&module, &Target::interpreter())?;
/// let vm = VirtualMachine::new(&exec);
/// let x = Tensor::from_vec(&[3], vec![1.0f32, 2.0, 3.0])?;
/// let y = vm.call("main", &[Value::Tensor(x)])?;
/// assert_eq!(y.as_tensor().unwrap().to_vec::<f32>()?, [1.0f32, 4.0, 9.0]);
///
/// // Arguments are checked against `main`'s signature before anything runs.
/// let bad = Tensor::from_vec(&[3], vec![1i64, 2, 3])?;
/// assert!(vm.call("main", &[Value::Tensor(bad)]).is_err());
/// # Ok::<(), relax_runtime::Error>(())
/// ```
pub fn build(module: &IRModule, target: &Target) -> Result<Executable, Error> {
    build_with(module, target, &PassContext::new())
}

/// [`build`], with the pipeline run in `ctx`: its instruments see every
/// pass (print the module after each one, time them), its disabled
/// passes are skipped (TVM's `relax.build` inside `with PassContext(...)`)
/// and its [`Progress`](crate::transform::Progress) hears of the stages
/// (passes, lowering, code generation with its kernel count).
pub fn build_with(
    module: &IRModule,
    target: &Target,
    ctx: &PassContext,
) -> Result<Executable, Error> {
    well_formed(module).map_err(Error::Compile)?;
    ctx.report_stage(BuildStage::Passes, 0);
    let lowered = pipeline(target).run_in(module.clone(), ctx)?;
    // `Sequential` checks between passes in debug builds only; the VM
    // compiler relies on a well-formed module in every build.
    ctx.report_stage(BuildStage::Lower, 0);
    well_formed(&lowered).map_err(Error::Compile)?;
    let exec = vm::codegen(&lowered)?;
    let library = native::library(target, &lowered, &exec.natives, ctx.progress())?;
    Ok(match library {
        Some(library) => exec.with_library(library),
        None => exec,
    })
}

#[cfg(test)]
mod inplace_tests;
#[cfg(test)]
mod memory_planning_tests;
#[cfg(test)]
mod never_abort_tests;
#[cfg(test)]
pub(crate) mod testing;
#[cfg(test)]
mod tests;
