//! The JIT: one module for all kernels, compiled in-process by MCJIT.
//!
//! 1. The module is optimized for the host CPU, then handed to an MCJIT
//!    execution engine. External symbols are mapped explicitly: the
//!    runtime's `relax_parallel_for`, `relax_workspace_alloc`/`_free` and the libm
//!    functions that calls and LLVM's own lowering of intrinsics
//!    (`llvm.exp.f32` → `expf`) use, so nothing depends on the executable
//!    exporting its symbols.
//! 2. The LLVM context, module and engine live in a [`JitOwner`] shared by
//!    every kernel ([`CompiledKernel::owner`]); the code is freed when the
//!    last kernel is dropped.
//! 3. Each kernel checks its call against its [`KernelSignature`] before
//!    running the code, and completes the scalars from the shapes.

use super::abi::{emit_kernel, KernelSignature};
use super::diagnostics::new_context;
use super::parallel::PARALLEL_FOR;
use super::partition::{groups, in_parallel};
use super::stmt::{WORKSPACE_ALLOC, WORKSPACE_FREE};
use super::target::{host_extras, host_machine, optimize, LLVM_GLOBAL};
use super::types::internal;
use crate::tir::PrimFunc;
use inkwell::context::Context;
use inkwell::execution_engine::ExecutionEngine;
use inkwell::targets::TargetMachine;
use inkwell::OptimizationLevel;
use relax_runtime::native::{CompiledKernel, KernelBuffer, KernelFn, NativeKernel, NativeLibrary};
use relax_runtime::{Error, Tensor};
use std::collections::HashMap;
use std::mem::ManuallyDrop;
use std::sync::Arc;

mod host {
    //! The C functions generated code may call, declared so their addresses
    //! can be taken (and so libm is linked in).
    macro_rules! libm {
        ($($f:ident / $d:ident : $n:tt),* $(,)?) => {
            extern "C" {
                $(libm!(@decl $f f32 $n); libm!(@decl $d f64 $n);)*
            }
            /// The libm functions by name, float32 and float64 variants.
            pub fn table() -> Vec<(&'static str, usize)> {
                vec![$((stringify!($f), $f as *const () as usize), (stringify!($d), $d as *const () as usize)),*]
            }
        };
        (@decl $name:ident $t:ident 1) => { pub fn $name(x: $t) -> $t; };
        (@decl $name:ident $t:ident 2) => { pub fn $name(x: $t, y: $t) -> $t; };
        (@decl $name:ident $t:ident 3) => { pub fn $name(x: $t, y: $t, z: $t) -> $t; };
    }
    libm! {
        expf / exp: 1, exp2f / exp2: 1, logf / log: 1, log2f / log2: 1, log10f / log10: 1,
        sinf / sin: 1, cosf / cos: 1, tanf / tan: 1, asinf / asin: 1, acosf / acos: 1,
        atanf / atan: 1, sinhf / sinh: 1, coshf / cosh: 1, tanhf / tanh: 1, erff / erf: 1,
        asinhf / asinh: 1, acoshf / acosh: 1, atanhf / atanh: 1,
        log1pf / log1p: 1, expm1f / expm1: 1, floorf / floor: 1, ceilf / ceil: 1,
        truncf / trunc: 1, roundf / round: 1, nearbyintf / nearbyint: 1, sqrtf / sqrt: 1,
        fabsf / fabs: 1, fminf / fmin: 2, fmaxf / fmax: 2, powf / pow: 2, atan2f / atan2: 2,
        fmodf / fmod: 2, fmaf / fma: 3,
    }
}

/// Whether `name` is a C function the JIT maps (a kernel may not take it).
pub(super) fn is_host_symbol(name: &str) -> bool {
    host::table().iter().any(|(n, _)| *n == name)
}

/// Every external symbol the JIT resolves, with its address.
fn host_symbols() -> Vec<(&'static str, usize)> {
    let mut t = host::table();
    t.push((
        WORKSPACE_ALLOC,
        relax_runtime::workspace::relax_workspace_alloc as *const () as usize,
    ));
    t.push((
        WORKSPACE_FREE,
        relax_runtime::workspace::relax_workspace_free as *const () as usize,
    ));
    t.push((
        PARALLEL_FOR,
        relax_runtime::parallel::relax_parallel_for as *const () as usize,
    ));
    t
}

/// Keeps JIT-compiled code alive: every part's engine and context. See
/// the module docs.
struct JitOwner {
    _parts: Vec<JitPart>,
}

/// One code generation thread's LLVM context and the engine holding its
/// module's code.
struct JitPart {
    engine: ManuallyDrop<ExecutionEngine<'static>>,
    context: *mut Context,
}

// SAFETY: after construction the engine is never used again except to be
// dropped (kernels only call the finished code), the inkwell reference
// counts inside it are never cloned out of this struct, and the context is
// only freed in `drop`, after the engine. A context and everything in it
// is only ever used by one thread at a time: the thread that built it,
// then whichever drops it.
unsafe impl Send for JitPart {}
// SAFETY: as above: shared references give no access to the engine.
unsafe impl Sync for JitPart {}

impl Drop for JitPart {
    fn drop(&mut self) {
        // SAFETY: the engine (which owns the module) goes first, then the
        // context it was created in; both are dropped exactly once.
        unsafe {
            ManuallyDrop::drop(&mut self.engine);
            drop(Box::from_raw(self.context));
        }
    }
}

/// A compiled kernel behind its signature's checks.
struct JitKernel {
    code: CompiledKernel,
    signature: KernelSignature,
}

impl NativeKernel for JitKernel {
    fn call(
        &self,
        inputs: &[&Tensor],
        outputs: &mut [Tensor],
        scalars: &[i64],
    ) -> Result<(), String> {
        let scalars = self
            .signature
            .scalars(inputs, outputs, scalars)
            .map_err(|e| format!("{}: {e}", self.code.symbol))?;
        self.code.call(inputs, outputs, &scalars)
    }

    fn call_buffers(
        &self,
        buffers: &mut [KernelBuffer<'_>],
        scalars: &[i64],
    ) -> Result<(), String> {
        let tensors: Vec<&Tensor> = buffers.iter().map(KernelBuffer::tensor).collect();
        let scalars = self
            .signature
            .scalars(&tensors, &[], scalars)
            .map_err(|e| format!("{}: {e}", self.code.symbol))?;
        drop(tensors);
        self.code.call_in_place(buffers, &scalars)
    }
}

/// The kernels of one JIT module.
struct JitLibrary {
    kernels: HashMap<String, Arc<JitKernel>>,
    description: String,
}

impl NativeLibrary for JitLibrary {
    fn lookup(&self, symbol: &str) -> Option<Arc<dyn NativeKernel>> {
        self.kernels
            .get(symbol)
            .map(|k| k.clone() as Arc<dyn NativeKernel>)
    }
    fn describe(&self) -> String {
        self.description.clone()
    }
}

/// JIT-compiles `funcs`. See [`super::jit`].
/// `done(n)` is called as each part's `n` kernels are compiled.
pub(super) fn compile(
    funcs: &[(String, PrimFunc)],
    done: &(dyn Fn(usize) + Sync),
) -> Result<Arc<dyn NativeLibrary>, Error> {
    for (i, (symbol, _)) in funcs.iter().enumerate() {
        if funcs[..i].iter().any(|(s, _)| s == symbol) {
            return Err(Error::Unsupported(format!(
                "LLVM code generation: the kernel symbol `{symbol}` is taken (by another kernel)"
            )));
        }
    }
    let mut groups = groups(funcs);
    if groups.is_empty() {
        // No kernels: still create a JIT, so a broken set-up shows.
        groups.push(Vec::new());
    }
    let built = in_parallel(&groups, |group| {
        let built = build_part(funcs, group)?;
        done(group.len());
        Ok(built)
    })?;
    let mut parts = Vec::with_capacity(built.len());
    let mut addresses = vec![0usize; funcs.len()];
    for (part, found) in built {
        parts.push(part);
        for (i, address) in found {
            addresses[i] = address;
        }
    }
    let owner = Arc::new(JitOwner { _parts: parts });
    let kernels = addresses
        .into_iter()
        .zip(funcs)
        .map(|(address, (symbol, prim_func))| {
            // SAFETY: the address is the JIT-compiled entry of `symbol`,
            // generated with the KernelFn signature by `emit_kernel`, in
            // code that `owner` keeps alive.
            let func: KernelFn = unsafe { std::mem::transmute::<usize, KernelFn>(address) };
            let kernel = JitKernel {
                code: CompiledKernel {
                    symbol: symbol.clone(),
                    func,
                    owner: owner.clone(),
                },
                signature: KernelSignature::new(prim_func),
            };
            (symbol.clone(), Arc::new(kernel))
        })
        .collect();
    Ok(Arc::new(JitLibrary {
        kernels,
        description: format!(
            "LLVM JIT for {} ({})",
            TargetMachine::get_default_triple(),
            TargetMachine::get_host_cpu_name()
        ),
    }))
}

/// Compiles the kernels `group` of `funcs` in a context of their own;
/// returns it with each kernel's (index, address).
fn build_part(
    funcs: &[(String, PrimFunc)],
    group: &[usize],
) -> Result<(JitPart, Vec<(usize, usize)>), Error> {
    let context = Box::into_raw(Box::new(new_context()));
    // SAFETY: the context lives until `JitPart::drop` (or the error path
    // below) frees it, after everything created from it.
    let ctx: &'static Context = unsafe { &*context };
    let (engine, addresses) = match build(ctx, funcs, group) {
        Ok(built) => built,
        Err(e) => {
            // SAFETY: `build` dropped everything it created from the context.
            unsafe { drop(Box::from_raw(context)) };
            return Err(e);
        }
    };
    let part = JitPart {
        engine: ManuallyDrop::new(engine),
        context,
    };
    Ok((part, addresses))
}

type Built = (ExecutionEngine<'static>, Vec<(usize, usize)>);

/// The JIT-internal name of kernel `symbol`. Kernels are looked up by
/// their symbol in the returned library; inside the LLVM module they get a
/// prefix so that a PrimFunc named like a C function (`exp`, `free`) cannot
/// collide with the host symbols the code calls.
fn jit_name(symbol: &str) -> String {
    format!("__relax_kernel.{symbol}")
}

fn build(
    ctx: &'static Context,
    funcs: &[(String, PrimFunc)],
    group: &[usize],
) -> Result<Built, Error> {
    let module = ctx.create_module("relax_jit");
    for &i in group {
        let (symbol, func) = &funcs[i];
        emit_kernel(ctx, &module, &jit_name(symbol), func, host_extras())?;
    }
    let tm = host_machine(true, None)?;
    optimize(&module, &tm, true)?;
    // Declarations for every host symbol, so each can be mapped even when
    // only the code generator's lowering refers to it.
    let any_fn = ctx.void_type().fn_type(&[], false);
    let symbols = host_symbols();
    for (name, _) in &symbols {
        if module.get_function(name).is_none() {
            module.add_function(name, any_fn, None);
        }
    }
    let engine = {
        let _guard = LLVM_GLOBAL.lock().unwrap_or_else(|p| p.into_inner());
        module
            .create_jit_execution_engine(OptimizationLevel::Aggressive)
            .map_err(|e| internal(format!("cannot create the JIT: {e}")))?
    };
    for (name, address) in &symbols {
        if let Some(f) = module.get_function(name) {
            engine.add_global_mapping(&f, *address);
        }
    }
    let mut addresses = Vec::with_capacity(group.len());
    for &i in group {
        let symbol = &funcs[i].0;
        let address = engine
            .get_function_address(&jit_name(symbol))
            .map_err(|e| internal(format!("the JIT has no `{symbol}`: {e:?}")))?;
        if address == 0 {
            return Err(internal(format!("the JIT has no `{symbol}`")));
        }
        addresses.push((i, address));
    }
    Ok((engine, addresses))
}
