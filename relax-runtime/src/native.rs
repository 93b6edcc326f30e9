//! Native kernels: PrimFuncs the VM calls in destination-passing style.
//!
//! 1. `call_tir(f, (x, y), out_sinfo)` compiles to a call of the kernel with
//!    symbol `f`: the VM takes the outputs from its pool or allocates them
//!    from the declared shapes, evaluated over its shape heap, then calls
//!    [`NativeKernel::call`] with the inputs, the outputs and the values of
//!    the PrimFunc's scalar parameters (its symbolic dims).
//! 2. Kernels come from a [`NativeLibrary`] attached to the executable by
//!    the compiler: LLVM-compiled functions for `Target::host()`, the
//!    loop-level interpreter for `Target::interpreter()`, or an AOT-linked
//!    static library.
//! 3. A kernel is only called after the VM has checked every argument's
//!    shape against the StructInfo the PrimFunc's signature promises, so
//!    compiled code never reads out of bounds.
//!
//! The C ABI of compiled kernels is [`KernelFn`]: one pointer per buffer
//! (inputs then outputs) and one `i64` per scalar parameter; it returns 0 on
//! success.

use crate::tensor::Tensor;
use std::fmt;
use std::sync::Arc;

/// The C ABI of a compiled kernel: `buffers[i]` points at the data of the
/// i-th buffer parameter, `scalars[j]` is the j-th scalar parameter.
pub type KernelFn = unsafe extern "C" fn(buffers: *const *mut u8, scalars: *const i64) -> i32;

/// A PrimFunc the VM can call.
pub trait NativeKernel: Send + Sync {
    /// Runs the kernel: reads `inputs`, writes `outputs` (uniquely owned, of
    /// the declared shapes and dtypes). What an output holds before the
    /// call is unspecified, as in TVM: zeros when it was just allocated,
    /// an earlier result when the VM reuses a buffer. A kernel writes every
    /// element of its outputs.
    fn call(
        &self,
        inputs: &[&Tensor],
        outputs: &mut [Tensor],
        scalars: &[i64],
    ) -> Result<(), String>;
}

/// Kernels by symbol.
pub trait NativeLibrary: Send + Sync {
    /// The kernel named `symbol`.
    fn lookup(&self, symbol: &str) -> Option<Arc<dyn NativeKernel>>;
    /// What the library is, for messages ("LLVM JIT for x86_64", "loop-level
    /// interpreter").
    fn describe(&self) -> String;
}

/// A library attached to an executable. Not serialized; compared and
/// printed by its description only.
#[derive(Clone)]
pub struct LibraryHandle(pub Arc<dyn NativeLibrary>);

impl PartialEq for LibraryHandle {
    fn eq(&self, _: &Self) -> bool {
        // The bytecode decides equality; the library is attached state.
        true
    }
}

impl fmt::Debug for LibraryHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LibraryHandle({})", self.0.describe())
    }
}

/// A kernel from a compiled function pointer of the [`KernelFn`] ABI.
pub struct CompiledKernel {
    /// The symbol, for messages.
    pub symbol: String,
    /// The entry point.
    pub func: KernelFn,
    /// Keeps the code the pointer points into alive (a JIT engine, a
    /// loaded library).
    pub owner: Arc<dyn Send + Sync>,
}

impl NativeKernel for CompiledKernel {
    fn call(
        &self,
        inputs: &[&Tensor],
        outputs: &mut [Tensor],
        scalars: &[i64],
    ) -> Result<(), String> {
        // The pointers live on the stack for the usual few buffers.
        const ON_STACK: usize = 16;
        let count = inputs.len() + outputs.len();
        let mut stack = [std::ptr::null_mut::<u8>(); ON_STACK];
        let mut heap = Vec::new();
        let ptrs: &mut [*mut u8] = if count <= ON_STACK {
            &mut stack[..count]
        } else {
            heap.resize(count, std::ptr::null_mut());
            &mut heap
        };
        for (p, t) in ptrs.iter_mut().zip(inputs) {
            *p = t.as_bytes().as_ptr() as *mut u8;
        }
        for (p, o) in ptrs[inputs.len()..].iter_mut().zip(outputs.iter_mut()) {
            let bytes = o
                .bytes_mut()
                .ok_or_else(|| format!("{}: an output buffer is shared", self.symbol))?;
            *p = bytes.as_mut_ptr();
        }
        // SAFETY: the VM checked every shape against the PrimFunc's
        // signature before this call, the outputs are uniquely owned, and the
        // inputs are only read by generated code.
        let rc = unsafe { (self.func)(ptrs.as_ptr(), scalars.as_ptr()) };
        match rc {
            0 => Ok(()),
            code => Err(format!("{} returned error code {code}", self.symbol)),
        }
    }
}
