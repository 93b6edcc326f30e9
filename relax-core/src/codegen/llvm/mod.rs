//! PrimFuncs to machine code through LLVM: in-process ([`jit`]) or as an
//! object file for static libraries ([`emit_object`]).
//!
//! # The kernel ABI
//!
//! Each PrimFunc becomes one external function named by its symbol, of the
//! [`KernelFn`](relax_runtime::native::KernelFn) ABI
//! `i32 f(u8 **buffers, i64 *scalars)`, returning 0 on success:
//!
//! 1. `buffers[i]` is the data of the i-th buffer parameter, in parameter
//!    order (inputs then outputs), laid out row-major (or through the
//!    buffer's strides, in elements). `bool` elements take one byte.
//! 2. `scalars` holds the values of [`scalar_abi`]`(func)`: first the scalar
//!    parameters in order, then every variable that appears in a buffer
//!    parameter's shape or strides and is not a scalar parameter, in order of
//!    first appearance over the buffer parameters. This is how the VM passes
//!    symbolic dims (`n` in `A: T.Buffer((n, 4))`) without the PrimFunc
//!    declaring them. Integer scalars are passed as `i64` and truncated to the
//!    variable's dtype; a float scalar is passed as the bits of an `f64`.
//! 3. Buffers are assumed not to overlap (they carry `noalias`): the VM
//!    passes outputs it uniquely owns and generated code never writes inputs.
//! 4. It returns 2 when a heap allocation of the kernel fails (heap
//!    buffers of enclosing scopes are not freed on that path).
//!
//! The kernels [`jit`] returns take either convention through
//! [`NativeKernel::call`](relax_runtime::native::NativeKernel::call): every
//! `scalar_abi` value, or only the scalar parameters (as the interpreter
//! does), the other dims then read off the tensors' shapes by
//! [`KernelSignature`], which also checks the call.
//!
//! # Lowering
//!
//! [`lower`] removes blocks: a block becomes its body with its iteration
//! variables replaced by their values; its `init` runs under the guard
//! "every reduce variable's value equals its domain's minimum" (TVM's
//! semantics), and its `alloc_buffers` become `Allocate`s. The result is
//! emitted by [`stmt`] and [`expr`]:
//!
//! - `Serial` loops are plain loops; `Unrolled` ones carry
//!   `llvm.loop.unroll.full` metadata (`unroll.enable` when the extent is not
//!   a constant), and so do serial loops of at most TVM's
//!   `pragma_auto_unroll_max_step` steps under a loop annotated with it
//!   ([`auto_unroll`]). Other loop and block annotations are carried and
//!   ignored.
//! - `Vectorized` loops with a constant extent whose body is one
//!   `BufferStore` (without a load guarded by a `Select`) are emitted as LLVM vector code ([`vectorize`]): the loop
//!   variable becomes `<base, base+1, …>`, loads whose flat offset has
//!   coefficient 1 in it become vector loads, invariant loads are broadcast,
//!   loads with a coefficient of 2 to 4 one load of their span and a
//!   shuffle, a padded window's clamped load under its bounds test a
//!   masked load ([`masked`]), other loads are gathered lane by lane; the
//!   store is a vector store (or a scatter). At most 16 lanes at once: longer loops run a loop of 16-lane
//!   steps and one shorter step for the rest. Two nested `Vectorized` loops
//!   of one power-of-two extent that read an input transposed are a block
//!   of vectors transposed in registers ([`transpose`]). A vectorized loop asserts that
//!   its iterations are independent (TVM's semantics). Any other vectorized
//!   loop is a scalar loop with `llvm.loop.vectorize.enable` metadata, left
//!   to LLVM's loop vectorizer.
//! - A vector store of 64 bytes to a large output (at least
//!   [`streaming::STREAM_MIN_BYTES`]) at an address known to be aligned is
//!   a streaming (non-temporal) store, as in `memcpy` ([`streaming`]).
//! - `Parallel` loops are outlined ([`parallel`]) into
//!   `void body(i64 begin, i64 end, i8 *env)`, the captured variables and
//!   buffer pointers stored in a stack struct at `env`, and run through
//!   `relax_parallel_for(extent, body, env)` of
//!   [`relax_runtime::parallel`]. The JIT maps that symbol to the runtime's
//!   function; an AOT object leaves it to the linker.
//! - `Allocate` uses the stack (`alloca` in the entry block, 64-byte
//!   aligned) when its size is a constant of at most 32 KiB, else the
//!   runtime's scratch allocator (`relax_workspace_alloc`/`_free`, which
//!   keeps given-back blocks per thread for the next call) around its body.
//!
//! # Expressions
//!
//! Integers are `iN` (signed or unsigned as the dtype says), `bool` is `i1`,
//! floats are `float`/`double`; vector dtypes are rejected. `float16` and
//! `bfloat16` are 16 bits in memory and `float` in registers ([`half`]):
//! loads widen, arithmetic is `float32`'s, stores and casts to them round
//! to nearest even.
//! `Div`/`Mod` on integers are floor division and floor modulo (correct for
//! negative operands); a zero divisor gives the dividend instead of
//! trapping (the VM never passes one). On floats `Div` is true division and
//! `Mod` is `a - floor(a / b) * b`. `Min`/`Max` on floats are
//! `llvm.minnum`/`maxnum`. Intrinsics: see [`intrinsics`]. A 32-bit word
//! written as the sum of four consecutive bytes (`T.dpbusd`'s operands),
//! one word per lane of consecutive words, is one vector load of the bytes
//! ([`words`]).
//!
//! Malformed or unsupported IR (an unbound variable, a buffer that is not a
//! parameter or allocated, a wrong number of indices, an unknown intrinsic,
//! a vector dtype) is `Err(Error::Unsupported(…))` naming it; the module is
//! verified by LLVM before it is optimized.

mod abi;
mod auto_unroll;
mod diagnostics;
mod dpbf16;
mod expr;
mod half;
mod intrinsics;
mod jit;
pub mod lower;
mod masked;
mod math;
mod memory;
mod metadata;
mod object;
mod parallel;
mod partition;
mod stmt;
mod streaming;
mod target;
mod transpose;
mod types;
mod vectorize;
mod words;

#[cfg(test)]
mod differential;
#[cfg(test)]
mod tests;

pub use abi::{scalar_abi, KernelSignature};

use crate::tir::PrimFunc;
use relax_runtime::native::NativeLibrary;
use relax_runtime::Error;
use std::sync::Arc;

/// Options of code generation.
#[derive(Clone, Debug, Default)]
pub struct CodegenOptions {
    /// Generate for the host CPU's features (`native`) rather than a generic
    /// CPU. Only [`emit_object`] reads it: the JIT always targets the host.
    pub native_cpu: bool,
    /// Without `native_cpu`: the LLVM CPU to generate for, such as
    /// `x86-64-v3` (see `relax_runtime::cpu`); `None` is `generic`.
    pub cpu: Option<String>,
}

/// The host CPU as LLVM names it (`znver4`) and LLVM's feature string
/// for it (`+avx512f,…,-amx-tile,…`).
pub fn host_cpu() -> (String, String) {
    use inkwell::targets::TargetMachine;
    (
        TargetMachine::get_host_cpu_name().to_string(),
        TargetMachine::get_host_cpu_features().to_string(),
    )
}

/// JIT-compiles `funcs` (symbol, PrimFunc) into a library of kernels: one
/// LLVM module, optimized at O3 for the host CPU, kept alive by the
/// kernels it returns.
pub fn jit(
    funcs: &[(String, PrimFunc)],
    opts: &CodegenOptions,
) -> Result<Arc<dyn NativeLibrary>, Error> {
    jit_reporting(funcs, opts, &|_| {})
}

/// [`jit`], calling `done(n)` as each part of `n` kernels is compiled
/// (the parts are compiled in parallel, see `partition`).
pub fn jit_reporting(
    funcs: &[(String, PrimFunc)],
    opts: &CodegenOptions,
    done: &(dyn Fn(usize) + Sync),
) -> Result<Arc<dyn NativeLibrary>, Error> {
    let _ = opts;
    jit::compile(funcs, done)
}

/// Compiles `funcs` into an ELF/Mach-O object file for the host triple (CPU
/// `generic`, `opts.cpu`, or the host's with `opts.native_cpu`). It references
/// `relax_parallel_for` and `relax_workspace_alloc`/`_free` (from
/// relax-runtime) and libm.
pub fn emit_object(funcs: &[(String, PrimFunc)], opts: &CodegenOptions) -> Result<Vec<u8>, Error> {
    object::compile(funcs, opts)
}

/// One object file of [`emit_objects`]: its bytes and the kernels it
/// defines (indices into the `funcs` given).
#[derive(Clone, Debug)]
pub struct ObjectPart {
    /// The object file.
    pub object: Vec<u8>,
    /// The indices of its kernels, in increasing order.
    pub kernels: Vec<usize>,
}

/// Compiles `funcs` as [`emit_object`] does, into several object files
/// (a few per code generation thread: `RELAX_NUM_THREADS`, else the
/// machine's cores), compiled in parallel; linked together they define
/// every kernel. The split depends only on `funcs` and the thread count
/// (see `partition`), so a build is reproducible.
pub fn emit_objects(
    funcs: &[(String, PrimFunc)],
    opts: &CodegenOptions,
) -> Result<Vec<ObjectPart>, Error> {
    emit_objects_reporting(funcs, opts, &|_| {})
}

/// [`emit_objects`], calling `done(n)` as each object of `n` kernels is
/// compiled.
pub fn emit_objects_reporting(
    funcs: &[(String, PrimFunc)],
    opts: &CodegenOptions,
    done: &(dyn Fn(usize) + Sync),
) -> Result<Vec<ObjectPart>, Error> {
    object::compile_parts(funcs, opts, done)
}

/// The LLVM IR of `funcs` as text, optimized as [`emit_object`] would
/// (`optimized`) or as generated: for reading what the back end makes of a
/// PrimFunc.
pub fn emit_llvm_ir(
    funcs: &[(String, PrimFunc)],
    opts: &CodegenOptions,
    optimized: bool,
) -> Result<String, Error> {
    object::ir_text(funcs, opts, optimized)
}
