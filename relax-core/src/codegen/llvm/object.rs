//! Ahead-of-time compilation: PrimFuncs to an object file.
//!
//! The module is built and optimized as for the JIT, for the host triple
//! with CPU `generic`, the CPU level `opts.cpu`, or the host's (with
//! `native_cpu`), using the instructions that CPU guarantees (the
//! dot-product intrinsics, F16C conversions: `target::cpu_extras`), and
//! written as
//! position-independent object code. Its undefined symbols are
//! `relax_parallel_for` and `relax_workspace_alloc`/`_free` (linked from
//! relax-runtime) and libm functions (`-lm`).
//!
//! [`compile_parts`] splits the kernels among threads
//! ([`super::partition`]), one object file each, which a linker takes
//! together; [`compile`] is one object for all of them.

use super::abi::emit_kernel;
use super::diagnostics::new_context;
use super::partition::{groups, in_parallel};
use super::target::{cpu_extras, host_machine, optimize};
use super::types::internal;
use super::{CodegenOptions, ObjectPart};
use crate::tir::PrimFunc;
use inkwell::targets::FileType;
use relax_runtime::Error;

/// Compiles `funcs` to object bytes. See [`super::emit_object`].
pub(super) fn compile(
    funcs: &[(String, PrimFunc)],
    opts: &CodegenOptions,
) -> Result<Vec<u8>, Error> {
    let all: Vec<usize> = (0..funcs.len()).collect();
    compile_group(funcs, &all, opts)
}

/// Compiles `funcs` to several objects in parallel, with the indices of
/// the kernels each defines. See [`super::emit_objects`].
/// `done(n)` is called as each part's `n` kernels are compiled.
pub(super) fn compile_parts(
    funcs: &[(String, PrimFunc)],
    opts: &CodegenOptions,
    done: &(dyn Fn(usize) + Sync),
) -> Result<Vec<ObjectPart>, Error> {
    for (i, (symbol, _)) in funcs.iter().enumerate() {
        if funcs[..i].iter().any(|(s, _)| s == symbol) {
            return Err(Error::Unsupported(format!(
                "LLVM code generation: the kernel symbol `{symbol}` is taken (by another kernel)"
            )));
        }
    }
    let mut groups = groups(funcs);
    if groups.is_empty() {
        groups.push(Vec::new());
    }
    in_parallel(&groups, |group| {
        let object = compile_group(funcs, group, opts)?;
        done(group.len());
        Ok(ObjectPart {
            object,
            kernels: group.to_vec(),
        })
    })
}

/// The object of kernels `group` of `funcs`, in a context of its own.
fn compile_group(
    funcs: &[(String, PrimFunc)],
    group: &[usize],
    opts: &CodegenOptions,
) -> Result<Vec<u8>, Error> {
    let ctx = new_context();
    let module = ctx.create_module("relax_aot");
    let extras = cpu_extras(opts);
    for &i in group {
        let (symbol, func) = &funcs[i];
        emit_kernel(&ctx, &module, symbol, func, extras)?;
    }
    let tm = host_machine(opts.native_cpu, opts.cpu.as_deref())?;
    optimize(&module, &tm, opts.native_cpu)?;
    let buffer = tm
        .write_to_memory_buffer(&module, FileType::Object)
        .map_err(|e| internal(format!("cannot write the object file: {e}")))?;
    Ok(buffer.as_slice().to_vec())
}

/// The textual LLVM IR of `funcs`, before or after optimization.
pub(super) fn ir_text(
    funcs: &[(String, PrimFunc)],
    opts: &CodegenOptions,
    optimized: bool,
) -> Result<String, Error> {
    let ctx = new_context();
    let module = ctx.create_module("relax_ir");
    let extras = cpu_extras(opts);
    for (symbol, func) in funcs {
        emit_kernel(&ctx, &module, symbol, func, extras)?;
    }
    if optimized {
        let tm = host_machine(opts.native_cpu, opts.cpu.as_deref())?;
        optimize(&module, &tm, opts.native_cpu)?;
    }
    Ok(module.print_to_string().to_string())
}
