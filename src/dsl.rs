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
//! Which code runs: with the facade's "llvm" feature (on by default) the
//! module is compiled for [`Target::host()`](crate::Target::host) on first
//! call, its kernels JIT-compiled by LLVM for this CPU; without it, for
//! [`Target::interpreter()`](crate::Target::interpreter) (the reference
//! kernels). The cache records the content hash of the macro's input, which
//! ahead-of-time artifacts from build.rs are matched against.

use crate::ir::IRModule;
use crate::{Error, Target, Value, VirtualMachine};
use std::sync::OnceLock;

pub use relax_runtime::interop::{FromValue, PrimArg, TensorArg};
/// A value computed on first access (the std `LazyLock`: a `static` holding
/// the generated `IRModule`).
pub use std::sync::LazyLock as Lazy;

/// A module's compiled form, built on first use and shared by every call
/// (and every thread).
pub struct ExecutableCache {
    content_hash: u64,
    vm: OnceLock<Result<VirtualMachine, Error>>,
}

impl ExecutableCache {
    /// An empty cache for the module whose DSL tokens hash to `content_hash`.
    pub const fn new(content_hash: u64) -> Self {
        ExecutableCache {
            content_hash,
            vm: OnceLock::new(),
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
                crate::build(module, &jit_target()).map(|exec| VirtualMachine::new(&exec))
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Whether the module has been compiled (successfully or not).
    pub fn is_built(&self) -> bool {
        self.vm.get().is_some()
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
}
