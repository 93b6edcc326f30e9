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
//! 4. `call_tir_inplace(f, (x, y), out_sinfo, inplace_indices)` compiles
//!    to a call whose in-place outputs are not allocated: the kernel
//!    writes them into their arguments ([`NativeKernel::call_buffers`],
//!    buffers in parameter order, the written ones [`KernelBuffer::Write`]).
//!    The VM only ever hands a kernel a tensor to write that nothing else
//!    holds (see `Callee::Native` for the copy-on-write rule).
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

    /// Runs the kernel on its buffers in parameter order, any of them
    /// written (`call_tir_inplace`: an argument written in place sits among
    /// the read ones). [`NativeKernel::call`] is the case of every read
    /// buffer before every written one, which is all this default serves
    /// (it moves the written tensors into a slice for `call` and back);
    /// kernels that take their buffers by position override it.
    fn call_buffers(
        &self,
        buffers: &mut [KernelBuffer<'_>],
        scalars: &[i64],
    ) -> Result<(), String> {
        let split = buffers
            .iter()
            .position(|b| matches!(b, KernelBuffer::Write(_)))
            .unwrap_or(buffers.len());
        let (read, written) = buffers.split_at_mut(split);
        let mut outputs = Vec::with_capacity(written.len());
        for b in written.iter_mut() {
            match b {
                KernelBuffer::Write(t) => {
                    // A zero-element stand-in holds the place meanwhile.
                    let stand_in = Tensor::zeros(t.dtype(), &[0]).map_err(|e| e.to_string())?;
                    outputs.push(std::mem::replace(&mut **t, stand_in));
                }
                KernelBuffer::Read(_) => {
                    return Err(
                        "this kernel takes the buffers it writes after those it reads only".into(),
                    )
                }
            }
        }
        let inputs: Vec<&Tensor> = read.iter().map(KernelBuffer::tensor).collect();
        let result = self.call(&inputs, &mut outputs, scalars);
        for (b, t) in written.iter_mut().zip(outputs) {
            if let KernelBuffer::Write(slot) = b {
                **slot = t;
            }
        }
        result
    }
}

/// A buffer argument of a kernel, in parameter order: read only, or
/// written (an output, or an argument written in place).
pub enum KernelBuffer<'a> {
    /// A buffer the kernel only reads.
    Read(&'a Tensor),
    /// A buffer the kernel writes (uniquely owned).
    Write(&'a mut Tensor),
}

impl KernelBuffer<'_> {
    /// The tensor, for reading.
    pub fn tensor(&self) -> &Tensor {
        match self {
            KernelBuffer::Read(t) => t,
            KernelBuffer::Write(t) => t,
        }
    }
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

impl CompiledKernel {
    /// Calls the entry point on `buffers` in parameter order (see
    /// [`NativeKernel::call_buffers`]); `scalars` is the whole scalar ABI.
    pub fn call_in_place(
        &self,
        buffers: &mut [KernelBuffer<'_>],
        scalars: &[i64],
    ) -> Result<(), String> {
        let mut ptrs = Vec::with_capacity(buffers.len());
        for b in buffers.iter_mut() {
            ptrs.push(match b {
                KernelBuffer::Read(t) => t.as_bytes().as_ptr() as *mut u8,
                KernelBuffer::Write(t) => t
                    .bytes_mut()
                    .ok_or_else(|| format!("{}: a written buffer is shared", self.symbol))?
                    .as_mut_ptr(),
            });
        }
        self.enter(&ptrs, scalars)
    }

    /// Calls the entry point on one pointer per buffer, in parameter
    /// order, and turns its return code into a result.
    fn enter(&self, ptrs: &[*mut u8], scalars: &[i64]) -> Result<(), String> {
        // SAFETY: the VM checked every shape against the PrimFunc's
        // signature before this call, the written buffers are uniquely
        // owned, and the read ones are only read by generated code.
        let rc = unsafe { (self.func)(ptrs.as_ptr(), scalars.as_ptr()) };
        match rc {
            0 => Ok(()),
            code => Err(format!("{} returned error code {code}", self.symbol)),
        }
    }
}

impl NativeKernel for CompiledKernel {
    fn call_buffers(
        &self,
        buffers: &mut [KernelBuffer<'_>],
        scalars: &[i64],
    ) -> Result<(), String> {
        self.call_in_place(buffers, scalars)
    }

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
        self.enter(ptrs, scalars)
    }
}
