//! The library that runs a build's PrimFuncs, by target.
//!
//! 1. The interpreting targets run PrimFuncs on the loop-level interpreter
//!    ([`crate::tir::interp`]); the library holds the module's PrimFuncs by
//!    symbol (the name `call_tir` refers to them by).
//! 2. [`Target::host()`] JIT-compiles them through LLVM when the "llvm"
//!    feature is on; without it the build fails rather than silently running
//!    something else. The JIT runs even when no PrimFunc is called, so a
//!    broken LLVM set-up shows at the first build.
//! 3. Only the PrimFuncs the VM code calls are included, and structurally
//!    equal ones are compiled once ([`super::dedupe`]): the library looks
//!    a copy up under its first equal's symbol.

use super::{Target, TargetKind};
use crate::ir::IRModule;
use crate::tir::interp::InterpreterLibrary;
use crate::tir::PrimFunc;
use crate::transform::progress::{BuildStage, Progress, StageCounter};
use relax_runtime::native::{NativeKernel, NativeLibrary};
use relax_runtime::Error;
use std::collections::HashMap;
use std::sync::Arc;

/// The library for `symbols` (PrimFuncs of `module`) on `target`; `None`
/// when the target needs none.
pub(super) fn library(
    target: &Target,
    module: &IRModule,
    symbols: &[String],
    progress: Option<&dyn Progress>,
) -> Result<Option<Arc<dyn NativeLibrary>>, Error> {
    let funcs = symbols
        .iter()
        .map(|s| match module.get(s).and_then(|f| f.as_prim()) {
            Some(f) => Ok((s.clone(), f.clone())),
            None => Err(Error::Unsupported(format!(
                "the native kernel `{s}` is not a PrimFunc of the module"
            ))),
        })
        .collect::<Result<Vec<_>, _>>()?;
    match target.kind {
        TargetKind::Interpreter | TargetKind::TirInterpreter => {
            if funcs.is_empty() {
                return Ok(None);
            }
            Ok(Some(Arc::new(
                funcs.into_iter().collect::<InterpreterLibrary>(),
            )))
        }
        TargetKind::Host => {
            let refs: Vec<&PrimFunc> = funcs.iter().map(|(_, f)| f).collect();
            let first = super::dedupe::representatives(&refs);
            let distinct: Vec<(String, PrimFunc)> = funcs
                .iter()
                .enumerate()
                .filter(|&(i, _)| first[i] == i)
                .map(|(_, f)| f.clone())
                .collect();
            let aliases: HashMap<String, String> = funcs
                .iter()
                .enumerate()
                .filter(|&(i, _)| first[i] != i)
                .map(|(i, (s, _))| (s.clone(), funcs[first[i]].0.clone()))
                .collect();
            let counter = StageCounter::start(progress, BuildStage::Codegen, distinct.len());
            let library = host_library(&distinct, &|n| counter.advance(n))?;
            if aliases.is_empty() {
                return Ok(Some(library));
            }
            Ok(Some(Arc::new(Aliased { library, aliases })))
        }
    }
}

/// A library whose kernels also go by other symbols: the copies of a
/// kernel found by [`super::dedupe`] call its code.
struct Aliased {
    library: Arc<dyn NativeLibrary>,
    /// Symbol of a copy → symbol of the kernel compiled for it.
    aliases: HashMap<String, String>,
}

impl NativeLibrary for Aliased {
    fn lookup(&self, symbol: &str) -> Option<Arc<dyn NativeKernel>> {
        let compiled = self.aliases.get(symbol).map_or(symbol, String::as_str);
        self.library.lookup(compiled)
    }
    fn describe(&self) -> String {
        format!(
            "{} ({} kernels calling a structurally equal kernel's code)",
            self.library.describe(),
            self.aliases.len()
        )
    }
}

#[cfg(feature = "llvm")]
fn host_library(
    funcs: &[(String, PrimFunc)],
    done: &(dyn Fn(usize) + Sync),
) -> Result<Arc<dyn NativeLibrary>, Error> {
    // JIT code runs on this machine: use all of its CPU features.
    let opts = crate::codegen::llvm::CodegenOptions {
        native_cpu: true,
        ..Default::default()
    };
    crate::codegen::llvm::jit_reporting(funcs, &opts, done)
}

#[cfg(not(feature = "llvm"))]
fn host_library(
    _: &[(String, PrimFunc)],
    _: &(dyn Fn(usize) + Sync),
) -> Result<Arc<dyn NativeLibrary>, Error> {
    Err(Error::Unsupported(
        "Target::host() compiles through LLVM, and relax-core was built without its \"llvm\" \
         feature; enable it or use Target::interpreter()"
            .into(),
    ))
}
