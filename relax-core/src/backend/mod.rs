//! Back ends: from an IRModule to something that runs.
//!
//! [`build`] is `relax::build`: it checks the module, runs the pipeline for
//! the target, and produces an [`Executable`] for the
//! [`VirtualMachine`](relax_runtime::VirtualMachine).
//!
//! | target | what runs the ops |
//! |---|---|
//! | [`Target::interpreter()`] | the runtime's reference kernels |
//! | [`Target::host()`] | LLVM-compiled kernels (arrives with the code generation issue) |

pub mod vm;

use crate::analysis::well_formed;
use crate::ir::IRModule;
use relax_runtime::{Error, Executable};

/// Where a module runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    kind: TargetKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum TargetKind {
    Interpreter,
    Host,
}

impl Target {
    /// The reference interpreter: every op runs its reference kernel.
    pub fn interpreter() -> Self {
        Target {
            kind: TargetKind::Interpreter,
        }
    }
    /// The host CPU through LLVM.
    pub fn host() -> Self {
        Target {
            kind: TargetKind::Host,
        }
    }
    /// Whether this is the interpreter.
    pub fn is_interpreter(&self) -> bool {
        self.kind == TargetKind::Interpreter
    }
}

/// Compiles `module` for `target`. The module must be well formed; every
/// violation is reported otherwise.
pub fn build(module: &IRModule, target: &Target) -> Result<Executable, Error> {
    well_formed(module).map_err(Error::Compile)?;
    match target.kind {
        TargetKind::Interpreter => vm::codegen(module),
        TargetKind::Host => Err(Error::Unsupported(
            "Target::host() needs LLVM code generation, which arrives with its issue; use Target::interpreter()".into(),
        )),
    }
}
