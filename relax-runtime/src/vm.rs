//! The virtual machine: an interpreter for [`Executable`]s.
//!
//! 1. The interpreter is iterative: calls between functions of the
//!    executable push a frame on an explicit stack instead of recursing
//!    on the Rust stack, so deep (or runaway) Relax recursion ends in a clean
//!    error at [`VirtualMachine::with_max_call_depth`] frames, never in a
//!    stack overflow.
//! 2. A frame holds the function's registers (`None` until written; reading
//!    one that is unset is an error), its shape heap and where the
//!    caller wants the result. Registers and slots are allocated as they are
//!    written, and what all live frames declare is bounded by
//!    [`MAX_FRAME_CELLS`], so a corrupted `num_regs` cannot exhaust memory.
//! 3. The executable is validated once, when the VM is built
//!    ([`Executable::validate`]); `call` returns that error if it failed.
//!    Everything is still read with checked accessors, so a VM never panics
//!    or indexes out of bounds whatever executable it is given.
//! 4. A VM is immutable once built (`Send + Sync`): every `call` has its own
//!    frames, so threads may share one VM and call into it at once.
//! 5. Errors a user can cause are typed: [`Error::Mismatch`] for a value that
//!    does not match its StructInfo, [`Error::ArgumentCount`],
//!    [`Error::UnknownFunction`], [`Error::Kernel`], [`Error::Packed`]. A
//!    malformed executable is [`Error::InvalidExecutable`]; a shape
//!    expression that overflows or divides by zero, an output the system
//!    cannot allocate, and the call-depth, step and memory limits
//!    ([`VirtualMachine::with_memory_limit`]) are [`Error::Runtime`], naming
//!    the function and instruction at fault. A kernel the build does not have is
//!    [`Error::Unsupported`].
//! 6. A native kernel's inputs are borrowed from the registers, not cloned,
//!    and its outputs come from the output pool (`vm/pool.rs`): a tensor
//!    nobody holds any more is reused for the next output of its dtype and
//!    shape, so a model called in a loop does not allocate.

mod heap;
mod matching;
mod pool;
mod validate;

#[cfg(test)]
mod tests;

use crate::data_type::DataType;
use crate::error::Error;
use crate::executable::{Arg, Callee, Executable, Instr, KernelAttr, Pattern, Reg, VmFunction};
use crate::executable::{DimPattern, SymExpr};
use crate::kernels::{Kernel, KernelAttrs};
use crate::native::{KernelBuffer, NativeKernel};
use crate::packed::call_packed;
use crate::tensor::{MemoryBudget, Tensor, TensorError};
use crate::value::Value;
use heap::ShapeHeap;
use matching::{pattern_text, Fail, Matcher};
use pool::OutputPool;
use std::borrow::Cow;
use std::sync::Arc;

/// Finds the reference kernel of an op by name.
pub type KernelResolver = fn(&str) -> Option<Kernel>;

/// How many frames deep calls may nest by default.
pub const DEFAULT_MAX_CALL_DEPTH: usize = 1000;

/// How many registers and shape-heap slots the frames of one call may
/// declare in total. Frames grow their storage lazily, but a corrupted
/// executable could declare billions of registers and write the last one
/// in every frame of a deep recursion; this bound turns that into an error
/// instead of an out-of-memory abort.
pub const MAX_FRAME_CELLS: u64 = 1 << 22;

/// Runs the functions of an executable. See the module docs.
///
/// An [`Executable`] comes from the compiler (`relax::build`, which is
/// `relax_core::backend::build`) or from [`Executable::from_bytes`]:
///
/// ```
/// use relax_runtime::{Tensor, Value, VirtualMachine};
///
/// let module: relax_core::ir::IRModule = r#"
/// @I.ir_module
/// class Module:
///     @R.function
///     def main(x: R.Tensor(("n",), dtype="float32")) -> R.Tensor(("n",), dtype="float32"):
///         n = T.int64()
///         gv: R.Tensor((n,), dtype="float32") = R.add(x, x)
///         return gv
/// "#
/// .parse()?;
/// let exec = relax_core::build(&module, &relax_core::Target::interpreter())?;
///
/// let vm = VirtualMachine::new(&exec);
/// let x = Tensor::from_vec(&[2], vec![1.5f32, -2.0])?;
/// let y = vm.call("main", &[Value::Tensor(x)])?;
/// assert_eq!(y.as_tensor().unwrap().to_vec::<f32>()?, [3.0f32, -4.0]);
///
/// // A wrong argument is an error naming the parameter, before anything runs.
/// let err = vm.call("main", &[Value::Tensor(Tensor::from_vec(&[2, 1], vec![1.0f32, 2.0])?)]);
/// assert!(err.unwrap_err().to_string().contains("parameter `x`"));
/// # Ok::<(), relax_runtime::Error>(())
/// ```
pub struct VirtualMachine {
    exec: Arc<Executable>,
    /// The result of [`Executable::validate`], returned by every `call`.
    valid: Result<(), Error>,
    /// The kernel of each kernel-table entry, resolved once.
    kernels: Vec<Option<Kernel>>,
    /// The native kernel of each entry of [`Executable::natives`], looked
    /// up in the attached library once (`None`: not available).
    natives: Vec<Option<Arc<dyn NativeKernel>>>,
    max_depth: usize,
    step_limit: Option<u64>,
    /// The limit on the live bytes of the tensors this VM allocates.
    budget: Option<Arc<MemoryBudget>>,
    /// Native-kernel outputs kept for reuse by dtype and shape (`pool.rs`).
    output_pool: OutputPool,
    /// With [`VirtualMachine::with_profiling`]: time spent in each kernel.
    profile: Option<std::sync::Mutex<Vec<KernelTime>>>,
}

/// How long one kernel ran, over every call since profiling began (see
/// [`VirtualMachine::with_profiling`]).
#[derive(Clone, Debug, PartialEq)]
pub struct KernelTime {
    /// The kernel: a native kernel's symbol, an op's name, or a host
    /// function's.
    pub name: String,
    /// How many times it ran.
    pub calls: u64,
    /// Its total time.
    pub total: std::time::Duration,
}

impl VirtualMachine {
    /// A VM for `exec`, with the reference kernels of [`crate::kernels`].
    pub fn new(exec: &Executable) -> Self {
        let exec = Arc::new(exec.clone());
        let valid = exec.validate();
        let natives = match &exec.library {
            Some(library) => exec.natives.iter().map(|n| library.0.lookup(n)).collect(),
            None => vec![None; exec.natives.len()],
        };
        let mut vm = VirtualMachine {
            exec,
            valid,
            kernels: Vec::new(),
            natives,
            max_depth: DEFAULT_MAX_CALL_DEPTH,
            step_limit: None,
            budget: None,
            output_pool: Default::default(),
            profile: None,
        };
        vm.resolve_kernels(crate::kernels::lookup);
        vm
    }

    /// This VM with kernels found by `resolve` instead of
    /// [`crate::kernels::lookup`] (to run with other or extra kernels).
    pub fn with_kernel_resolver(mut self, resolve: KernelResolver) -> Self {
        self.resolve_kernels(resolve);
        self
    }

    /// This VM with at most `depth` nested calls (1000 by default); a call
    /// that would go deeper fails.
    pub fn with_max_call_depth(mut self, depth: usize) -> Self {
        self.max_depth = depth.max(1);
        self
    }

    /// This VM with at most `steps` instructions per `call` (unlimited by
    /// default), to bound the running time of untrusted executables.
    pub fn with_step_limit(mut self, steps: u64) -> Self {
        self.step_limit = Some(steps);
        self
    }

    /// This VM with at most `bytes` of live tensors allocated by it at once
    /// (unlimited by default: then only what the system gives): an
    /// allocation that would pass the limit is an `Err` before any memory is
    /// taken. The tensors it returns stay charged until they are dropped.
    pub fn with_memory_limit(mut self, bytes: usize) -> Self {
        self.budget = Some(Arc::new(MemoryBudget::new(bytes)));
        self
    }

    /// This VM timing every kernel call (TVM's `VirtualMachine.profile`):
    /// [`VirtualMachine::profile`] then reports where the time went. The
    /// timing costs two clock reads per kernel call.
    pub fn with_profiling(mut self) -> Self {
        self.profile = Some(std::sync::Mutex::new(Vec::new()));
        self
    }

    /// The time spent in each kernel since profiling began, longest first
    /// (empty without [`VirtualMachine::with_profiling`]).
    pub fn profile(&self) -> Vec<KernelTime> {
        let mut out = match &self.profile {
            Some(p) => p.lock().map(|p| p.clone()).unwrap_or_default(),
            None => Vec::new(),
        };
        out.sort_by_key(|k| std::cmp::Reverse(k.total));
        out
    }

    /// Forgets the times recorded so far; profiling goes on (to time one
    /// phase of a run, such as a decoder's token-by-token steps after its
    /// prefill).
    pub fn reset_profile(&self) {
        if let Some(Ok(mut p)) = self.profile.as_ref().map(|p| p.lock()) {
            p.clear();
        }
    }

    fn record(&self, name: &str, start: Option<std::time::Instant>) {
        let (Some(profile), Some(start)) = (&self.profile, start) else {
            return;
        };
        let elapsed = start.elapsed();
        if let Ok(mut p) = profile.lock() {
            match p.iter_mut().find(|k| k.name == name) {
                Some(k) => {
                    k.calls += 1;
                    k.total += elapsed;
                }
                None => p.push(KernelTime {
                    name: name.to_string(),
                    calls: 1,
                    total: elapsed,
                }),
            }
        }
    }

    /// The memory budget, if this VM has a limit (see
    /// [`VirtualMachine::with_memory_limit`]).
    pub fn memory_budget(&self) -> Option<&MemoryBudget> {
        self.budget.as_deref()
    }

    /// The executable this VM runs.
    pub fn executable(&self) -> &Executable {
        &self.exec
    }

    fn resolve_kernels(&mut self, resolve: KernelResolver) {
        self.kernels = self.exec.kernels.iter().map(|k| resolve(&k.op)).collect();
    }

    /// Calls the function `name` with `args`.
    pub fn call(&self, name: &str, args: &[Value]) -> Result<Value, Error> {
        self.valid.clone()?;
        let index = self
            .exec
            .function_index(name)
            .ok_or_else(|| Error::UnknownFunction(name.into()))?;
        let func = &self.exec.functions[index];
        check_arity(func, args.len())?;
        self.run(index, args.to_vec())
    }

    /// Runs function `entry` on `args` (already counted) to its `Ret`.
    fn run(&self, entry: usize, args: Vec<Value>) -> Result<Value, Error> {
        let exec: &Executable = &self.exec;
        let mut stack = Vec::new();
        let mut cells: u64 = 0;
        push_frame(&mut stack, &mut cells, Frame::new(exec, entry, args, 0)?)?;
        let mut steps: u64 = 0;
        loop {
            let Some(frame) = stack.last_mut() else {
                return Err(Error::Runtime("the VM's frame stack is empty".into()));
            };
            let func = &exec.functions[frame.func];
            let at = Location {
                func: &func.name,
                pc: frame.pc,
            };
            let Some(instr) = func.instrs.get(frame.pc) else {
                return Err(at.invalid("control runs past the end of the function"));
            };
            steps += 1;
            if self.step_limit.is_some_and(|limit| steps > limit) {
                return Err(at.error(format!(
                    "the step limit of {} instructions is exceeded",
                    steps - 1
                )));
            }
            match instr {
                Instr::Call {
                    callee:
                        Callee::Native {
                            symbol,
                            outputs,
                            scalars,
                            inplace_indices,
                            moved,
                        },
                    args,
                    dst,
                } => {
                    // Native kernels borrow their inputs from the registers.
                    let start = self.profile.as_ref().map(|_| std::time::Instant::now());
                    let value = self.call_native(
                        frame,
                        *symbol,
                        outputs,
                        scalars,
                        inplace_indices,
                        moved,
                        args,
                        &at,
                    )?;
                    if start.is_some() {
                        let name = exec
                            .natives
                            .get(*symbol as usize)
                            .map_or("?", |n| n.as_str());
                        self.record(name, start);
                    }
                    frame.write(*dst, value, &at)?;
                }
                Instr::Call { callee, args, dst } => {
                    let mut argv = args
                        .iter()
                        .map(|a| frame.read(exec, a, &at))
                        .collect::<Result<Vec<_>, _>>()?;
                    let target = match callee {
                        Callee::Function(f) => Some(*f),
                        Callee::Closure(r) => match frame.reg(*r, &at)? {
                            Value::Func(f) => Some(f),
                            // A closure's captured values come first.
                            Value::Closure(c) => {
                                let mut all = c.captured.clone();
                                all.append(&mut argv);
                                argv = all;
                                Some(c.func)
                            }
                            other => {
                                return Err(Error::Mismatch {
                                    context: format!(
                                        "callee of instruction {} in `{}`",
                                        at.pc, at.func
                                    ),
                                    expected: "R.Callable".into(),
                                    found: other.describe(),
                                })
                            }
                        },
                        _ => None,
                    };
                    if let Some(f) = target {
                        // A call into the executable pushes a frame; the
                        // caller's pc stays on this `Call` until `Ret` writes
                        // the result to `dst` and steps past it.
                        let Some(callee_fn) = exec.functions.get(f as usize) else {
                            return Err(at.invalid(format!(
                                "function {f} is out of range (there are {})",
                                exec.functions.len()
                            )));
                        };
                        check_arity(callee_fn, argv.len())?;
                        if stack.len() >= self.max_depth {
                            return Err(at.error(format!(
                                "calling `{}` exceeds the call depth limit of {} frames",
                                callee_fn.name, self.max_depth
                            )));
                        }
                        let callee_frame = Frame::new(exec, f as usize, argv, *dst)?;
                        push_frame(&mut stack, &mut cells, callee_frame)?;
                        continue;
                    }
                    let start = self.profile.as_ref().map(|_| std::time::Instant::now());
                    let value = self.call_external(frame, callee, argv, &at)?;
                    if start.is_some() {
                        let name = match callee {
                            Callee::Kernel(k) => {
                                exec.kernels.get(*k as usize).map(|e| e.op.as_str())
                            }
                            Callee::Packed(p) => exec.packed.get(*p as usize).map(String::as_str),
                            _ => None,
                        };
                        self.record(name.unwrap_or("?"), start);
                    }
                    frame.write(*dst, value, &at)?;
                }
                Instr::MatchCast {
                    value,
                    pattern,
                    dst,
                    context,
                    expected,
                } => {
                    let v = operand(&frame.regs, frame.num_regs, exec, value, &at)?;
                    let mut m = Matcher {
                        heap: &mut frame.heap,
                        by: Cow::Borrowed(context.as_str()),
                    };
                    m.check(&v, pattern).map_err(|fail| match fail {
                        Fail::Found(found) => Error::Mismatch {
                            context: context.clone(),
                            expected: expected.clone(),
                            found,
                        },
                        Fail::Internal(why) => at.invalid(why),
                    })?;
                    if let Some(d) = dst {
                        let v = v.into_owned();
                        frame.write(*d, v, &at)?;
                    }
                }
                Instr::MakeShape { dims, dst } => {
                    let dims = dims
                        .iter()
                        .map(|e| frame.heap.eval(e))
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(|why| at.error(why))?;
                    frame.write(*dst, Value::Shape(dims.into()), &at)?;
                }
                Instr::MakePrim { value, dtype, dst } => {
                    let v = frame.heap.eval(value).map_err(|why| at.error(why))?;
                    let prim = if dtype.is_bool() {
                        Value::Bool(v != 0)
                    } else if dtype.is_integer() {
                        Value::Int(v)
                    } else if dtype.is_float() {
                        Value::Float(v as f64)
                    } else {
                        return Err(at.invalid(format!("a prim value cannot have dtype {dtype}")));
                    };
                    frame.write(*dst, prim, &at)?;
                }
                Instr::MakeTuple { fields, dst } => {
                    let fields = fields
                        .iter()
                        .map(|a| frame.read(exec, a, &at))
                        .collect::<Result<Vec<_>, _>>()?;
                    frame.write(*dst, Value::tuple(fields), &at)?;
                }
                Instr::GetItem { tuple, index, dst } => {
                    let t = frame.read(exec, tuple, &at)?;
                    let field = t
                        .as_tuple()
                        .and_then(|fields| fields.get(*index as usize))
                        .cloned()
                        .ok_or_else(|| Error::Mismatch {
                            context: format!(
                                "tuple operand of instruction {} in `{}`",
                                at.pc, at.func
                            ),
                            expected: format!("a tuple of at least {} fields", *index as u64 + 1),
                            found: t.describe(),
                        })?;
                    frame.write(*dst, field, &at)?;
                }
                Instr::Move { src, dst } => {
                    let v = frame.read(exec, src, &at)?;
                    frame.write(*dst, v, &at)?;
                }
                Instr::If { cond, else_target } => {
                    let c = frame.read(exec, cond, &at)?;
                    if !truth(&c).ok_or_else(|| Error::Mismatch {
                        context: format!("condition of instruction {} in `{}`", at.pc, at.func),
                        expected: "a bool tensor of rank 0, or a bool or integer prim value".into(),
                        found: c.describe(),
                    })? {
                        frame.pc = jump(func, *else_target, &at)?;
                        continue;
                    }
                }
                Instr::Goto { target } => {
                    frame.pc = jump(func, *target, &at)?;
                    continue;
                }
                Instr::Kill { reg } => frame.kill(*reg, &at)?,
                Instr::Ret { value } => {
                    let v = frame.read(exec, value, &at)?;
                    let ret_dst = frame.ret_dst;
                    cells -= frame.cells();
                    stack.pop();
                    match stack.last_mut() {
                        None => return Ok(v),
                        Some(caller) => {
                            let caller_at = Location {
                                func: &exec.functions[caller.func].name,
                                pc: caller.pc,
                            };
                            caller.write(ret_dst, v, &caller_at)?;
                            caller.pc += 1;
                            continue;
                        }
                    }
                }
            }
            frame.pc += 1;
        }
    }

    /// Calls a kernel or a host function (the callees that do not push a
    /// frame).
    fn call_external<'a>(
        &self,
        frame: &mut Frame<'a>,
        callee: &'a Callee,
        args: Vec<Value>,
        at: &Location<'_>,
    ) -> Result<Value, Error> {
        let exec: &Executable = &self.exec;
        let packed_name = |i: u32| {
            exec.packed.get(i as usize).ok_or_else(|| {
                at.invalid(format!(
                    "host function {i} is out of range (there are {})",
                    exec.packed.len()
                ))
            })
        };
        match callee {
            Callee::Kernel(k) => {
                let Some(entry) = exec.kernels.get(*k as usize) else {
                    return Err(at.invalid(format!(
                        "kernel entry {k} is out of range (there are {})",
                        exec.kernels.len()
                    )));
                };
                let Some(kernel) = self.kernels.get(*k as usize).copied().flatten() else {
                    return Err(Error::Unsupported(format!(
                        "no reference kernel for {}",
                        entry.op
                    )));
                };
                let attrs = entry
                    .attrs
                    .iter()
                    .map(|(name, a)| Ok((name.clone(), eval_attr(&frame.heap, a)?)))
                    .collect::<Result<Vec<_>, String>>()
                    .map_err(|why| at.error(format!("attributes of {}: {why}", entry.op)))?;
                let attrs = KernelAttrs(attrs);
                let result = crate::kernels::alloc::with_budget(self.budget.as_ref(), || {
                    kernel(&args, &attrs)
                });
                result.map_err(|message| Error::Kernel {
                    op: entry.op.clone(),
                    message,
                })
            }
            Callee::Packed(p) => call_packed(packed_name(*p)?, &args),
            Callee::DpsPacked { name, outputs } => {
                let name = packed_name(*name)?;
                let result = call_packed(name, &args)?;
                let context = format!("result of host function `{name}`");
                let mut m = Matcher {
                    heap: &mut frame.heap,
                    by: Cow::Owned(context.clone()),
                };
                let (checked, expected) = match outputs.as_slice() {
                    [one] => (m.check(&result, one), pattern_text(one)),
                    many => {
                        // Several outputs come back as one tuple of them.
                        let fields: Vec<String> = many.iter().map(pattern_text).collect();
                        let expected = format!("R.Tuple({})", fields.join(", "));
                        (check_outputs(&mut m, &result, many), expected)
                    }
                };
                checked.map_err(|fail| match fail {
                    Fail::Found(found) => Error::Mismatch {
                        context,
                        expected,
                        found,
                    },
                    Fail::Internal(why) => at.invalid(why),
                })?;
                Ok(result)
            }
            Callee::Function(_) | Callee::Closure(_) | Callee::Native { .. } => Err(at.invalid(
                "a call into the executable or a native kernel reached the external-call path",
            )),
        }
    }
}

impl VirtualMachine {
    /// Calls a native kernel: allocates the outputs from their patterns over
    /// the caller's shape heap, then runs the kernel in destination-passing
    /// style (see [`crate::native`]).
    ///
    /// Outputs come from the VM's pool when it keeps a tensor of their
    /// dtype and shape that nobody else holds (`vm/pool.rs`): an
    /// intermediate killed earlier in the call, or a result of an earlier
    /// call the caller has dropped. So tensors whose lifetimes do not
    /// overlap share storage, and a model called in a loop allocates
    /// nothing after its first call. A reused output is not cleared first,
    /// as TVM's VM does not initialize outputs: every kernel this project
    /// generates writes its whole output. A tensor anybody still holds is
    /// never written.
    #[allow(clippy::too_many_arguments)]
    fn call_native(
        &self,
        frame: &mut Frame<'_>,
        symbol: u32,
        outputs: &[Pattern],
        scalars: &[SymExpr],
        inplace_indices: &[i32],
        moved: &[u32],
        args: &[Arg],
        at: &Location<'_>,
    ) -> Result<Value, Error> {
        let exec: &Executable = &self.exec;
        let Some(name) = exec.natives.get(symbol as usize) else {
            return Err(at.invalid(format!("native kernel {symbol} is out of range")));
        };
        let Some(library) = &exec.library else {
            return Err(Error::Unsupported(format!(
                "native kernel `{name}` is not loaded: attach its library with Executable::with_library"
            )));
        };
        let Some(kernel) = self.natives.get(symbol as usize).cloned().flatten() else {
            return Err(Error::Unsupported(format!(
                "native kernel `{name}` is not in {}",
                library.0.describe()
            )));
        };
        // The arguments written in place, in argument order, each made
        // writable (copy on write; see `Callee::Native`).
        let mut places: Vec<usize> = inplace_indices
            .iter()
            .filter_map(|&i| usize::try_from(i).ok())
            .collect();
        places.sort_unstable();
        let mut written: Vec<Option<Tensor>> = Vec::with_capacity(places.len());
        for &i in &places {
            let Some(a) = args.get(i) else {
                return Err(at.invalid(format!(
                    "inplace index {i} of `{name}` is past its {} arguments",
                    args.len()
                )));
            };
            let value = match a {
                Arg::Reg(r) if moved.contains(&(i as u32)) => frame.take(*r, at)?,
                _ => frame.read(exec, a, at)?,
            };
            let Value::Tensor(t) = value else {
                return Err(Error::Mismatch {
                    context: format!("argument {i} of native kernel `{name}` (written in place)"),
                    expected: "a tensor".into(),
                    found: value.describe(),
                });
            };
            let t = self.writable(t).map_err(|e| {
                at.error(format!(
                    "argument {i} of native kernel `{name}`, copied to be written in place: {e}"
                ))
            })?;
            written.push(Some(t));
        }
        // The arguments read, in argument order (those written in place are
        // `written`).
        let mut inputs: Vec<&Tensor> = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            if places.contains(&i) {
                continue;
            }
            match frame.operand(&self.exec, a, at)? {
                Cow::Borrowed(Value::Tensor(t)) => inputs.push(t),
                other => {
                    return Err(Error::Mismatch {
                        context: format!("argument {i} of native kernel `{name}`"),
                        expected: "a tensor".into(),
                        found: other.describe(),
                    })
                }
            }
        }
        let mut outs = Vec::with_capacity(outputs.len());
        for p in outputs {
            let Pattern::Tensor {
                dtype: Some(dtype),
                dims: Some(dims),
                ..
            } = p
            else {
                return Err(
                    at.invalid(format!("an output of `{name}` has no known dtype and dims"))
                );
            };
            let mut shape = Vec::with_capacity(dims.len());
            for d in dims {
                let DimPattern::Check { expr, .. } = d else {
                    return Err(at.invalid(format!("an output dim of `{name}` is not computed")));
                };
                let v = frame.heap.eval(expr).map_err(|why| at.error(why))?;
                if v < 0 {
                    return Err(at.error(format!(
                        "an output of `{name}` would have the negative dim {v}"
                    )));
                }
                shape.push(v);
            }
            let t = self.allocate(*dtype, &shape).map_err(|e| {
                at.error(format!(
                    "output {} of native kernel `{name}`: {e}",
                    outs.len()
                ))
            })?;
            outs.push(t);
        }
        let scalar_values = scalars
            .iter()
            .map(|s| frame.heap.eval(s))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|why| at.error(why))?;
        // Outputs without elements have nothing to write: the kernel is not
        // run (its loops over the other dims could still take billions of
        // empty iterations, for a (2^31, 0) input).
        let nothing_to_write =
            outs.iter().all(|t| t.numel() == 0) && written.iter().flatten().all(|t| t.numel() == 0);
        let kernel_error = |message| Error::Kernel {
            op: name.clone(),
            message,
        };
        if nothing_to_write {
            // Nothing to run.
        } else if places.is_empty() {
            kernel
                .call(&inputs, &mut outs, &scalar_values)
                .map_err(kernel_error)?;
        } else {
            // The buffers in parameter order: each argument read or written,
            // then the fresh outputs.
            let mut in_place = written.iter_mut().flatten();
            let mut read = inputs.iter();
            let mut buffers = Vec::with_capacity(args.len() + outs.len());
            for i in 0..args.len() {
                buffers.push(if places.contains(&i) {
                    KernelBuffer::Write(in_place.next().expect("one per place"))
                } else {
                    KernelBuffer::Read(read.next().expect("one per argument read"))
                });
            }
            buffers.extend(outs.iter_mut().map(KernelBuffer::Write));
            kernel
                .call_buffers(&mut buffers, &scalar_values)
                .map_err(kernel_error)?;
        }
        let mut results = if inplace_indices.is_empty() {
            outs
        } else {
            let mut results = Vec::with_capacity(inplace_indices.len());
            let mut fresh = outs.into_iter();
            for &i in inplace_indices {
                let t = match usize::try_from(i) {
                    Ok(i) => places
                        .iter()
                        .position(|&p| p == i)
                        .and_then(|k| written[k].take()),
                    Err(_) => fresh.next(),
                };
                let Some(t) = t else {
                    return Err(at.invalid(format!(
                        "the inplace indices of `{name}` do not match its arguments and outputs"
                    )));
                };
                results.push(t);
            }
            results
        };
        for t in &results {
            self.output_pool.keep(t);
        }
        Ok(match results.len() {
            1 => Value::Tensor(results.pop().expect("one output")),
            _ => Value::tuple(results.into_iter().map(Value::Tensor).collect()),
        })
    }

    /// A tensor of `dtype` and `shape` for a native kernel to write: a
    /// kept one nothing else holds, else a fresh one. Kept outputs count
    /// against the memory limit: when it refuses, they are given back and
    /// the allocation tried once more.
    fn allocate(&self, dtype: DataType, shape: &[i64]) -> Result<Tensor, TensorError> {
        if let Some(t) = self.output_pool.take(dtype, shape) {
            return Ok(t);
        }
        let alloc = || Tensor::zeros_in(dtype, shape, self.budget.as_ref());
        alloc().or_else(|e| {
            if self.output_pool.is_empty() {
                return Err(e);
            }
            self.output_pool.clear();
            alloc()
        })
    }

    /// `t` ready to be written in place: itself when nothing but the
    /// output pool shares its buffer (the pool lets go of it), else a copy
    /// (copy on write; see `Callee::Native`).
    fn writable(&self, t: Tensor) -> Result<Tensor, TensorError> {
        self.output_pool.release(&t);
        if t.is_unique() {
            return Ok(t);
        }
        let mut copy = self.allocate(t.dtype(), t.shape())?;
        match copy.bytes_mut() {
            Some(bytes) => bytes.copy_from_slice(t.as_bytes()),
            None => unreachable!("an allocated or pooled tensor is unique"),
        }
        Ok(copy)
    }
}

/// Checks the tuple a DPS host function returns for several outputs.
fn check_outputs<'a>(
    m: &mut Matcher<'_, 'a>,
    result: &Value,
    outputs: &'a [Pattern],
) -> Result<(), Fail> {
    // `Pattern::Tuple` would need an owned pattern; check field by field with
    // the same wording instead.
    let Some(items) = result.as_tuple() else {
        return Err(Fail::Found(format!(
            "{}: expected a tuple of {} outputs",
            result.describe(),
            outputs.len()
        )));
    };
    if items.len() != outputs.len() {
        return Err(Fail::Found(format!(
            "{}: expected {} fields",
            result.describe(),
            outputs.len()
        )));
    }
    for (i, (v, p)) in items.iter().zip(outputs).enumerate() {
        if let Err(fail) = m.check(v, p) {
            return Err(match fail {
                Fail::Found(inner) => {
                    Fail::Found(format!("{} whose field {i} is {inner}", result.describe()))
                }
                internal => internal,
            });
        }
    }
    Ok(())
}

/// Pushes `frame`, keeping the cells all frames declare within
/// [`MAX_FRAME_CELLS`].
fn push_frame<'a>(
    stack: &mut Vec<Frame<'a>>,
    cells: &mut u64,
    frame: Frame<'a>,
) -> Result<(), Error> {
    let total = *cells + frame.cells();
    if total > MAX_FRAME_CELLS {
        return Err(Error::Runtime(format!(
            "calling `{}` would need {total} registers and shape-heap slots in all, more than the \
             limit of {MAX_FRAME_CELLS}",
            frame.name
        )));
    }
    *cells = total;
    stack.push(frame);
    Ok(())
}

/// Fails unless `func` takes `given` arguments.
fn check_arity(func: &VmFunction, given: usize) -> Result<(), Error> {
    if func.params.len() == given {
        Ok(())
    } else {
        Err(Error::ArgumentCount {
            function: func.name.clone(),
            expected: func.params.len(),
            found: given,
        })
    }
}

/// A jump target, checked against the code.
fn jump(func: &VmFunction, target: u32, at: &Location<'_>) -> Result<usize, Error> {
    if (target as usize) < func.instrs.len() {
        Ok(target as usize)
    } else {
        Err(at.invalid(format!(
            "jump target {target} is out of range (the function has {} instructions)",
            func.instrs.len()
        )))
    }
}

/// Whether a condition holds: a rank-0 bool tensor, a bool, or an integer
/// (non-zero is true); `None` for anything else.
fn truth(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::Int(i) => Some(*i != 0),
        Value::Tensor(t) if t.ndim() == 0 && t.dtype().is_bool() => {
            t.as_bytes().first().map(|b| *b != 0)
        }
        _ => None,
    }
}

/// An attribute with its symbolic integers evaluated over `heap`.
fn eval_attr(heap: &ShapeHeap<'_>, a: &KernelAttr) -> Result<KernelAttr, String> {
    Ok(match a {
        KernelAttr::Sym(e) => KernelAttr::Int(heap.eval(e)?),
        KernelAttr::Array(items) => KernelAttr::Array(
            items
                .iter()
                .map(|i| eval_attr(heap, i))
                .collect::<Result<_, _>>()?,
        ),
        other => other.clone(),
    })
}

/// Where the interpreter is, for error messages.
struct Location<'a> {
    func: &'a str,
    pc: usize,
}

impl Location<'_> {
    /// A run-time failure at this instruction.
    fn error(&self, why: String) -> Error {
        Error::Runtime(format!(
            "in `{}` at instruction {}: {why}",
            self.func, self.pc
        ))
    }
    /// A malformed executable, detected at this instruction.
    fn invalid(&self, why: impl Into<String>) -> Error {
        validate::invalid(format!(
            "`{}`, instruction {}: {}",
            self.func,
            self.pc,
            why.into()
        ))
    }
}

/// One activation of a function.
struct Frame<'a> {
    /// Index of the function in the executable.
    func: usize,
    /// Its name, for messages.
    name: &'a str,
    /// The next instruction.
    pc: usize,
    /// The register file size.
    num_regs: u32,
    /// The registers written so far (grown on write, up to `num_regs`).
    regs: Vec<Option<Value>>,
    heap: ShapeHeap<'a>,
    /// The caller's register that receives the result.
    ret_dst: Reg,
}

impl<'a> Frame<'a> {
    fn new(
        exec: &'a Executable,
        func: usize,
        args: Vec<Value>,
        ret_dst: Reg,
    ) -> Result<Self, Error> {
        let Some(f) = exec.functions.get(func) else {
            return Err(validate::invalid(format!("function {func} does not exist")));
        };
        if args.len() as u64 > u64::from(f.num_regs) {
            return Err(validate::invalid(format!(
                "function `{}` has {} parameters but only {} registers",
                f.name,
                args.len(),
                f.num_regs
            )));
        }
        Ok(Frame {
            func,
            name: &f.name,
            pc: 0,
            num_regs: f.num_regs,
            regs: args.into_iter().map(Some).collect(),
            heap: ShapeHeap::new(f.num_slots),
            ret_dst,
        })
    }

    /// The registers and slots this frame declares.
    fn cells(&self) -> u64 {
        u64::from(self.num_regs) + u64::from(self.heap.size())
    }

    /// The value in register `r`.
    fn reg(&self, r: Reg, at: &Location<'_>) -> Result<Value, Error> {
        regs_get(&self.regs, self.num_regs, r, at).cloned()
    }

    /// The value of an operand.
    fn read(&self, exec: &Executable, a: &Arg, at: &Location<'_>) -> Result<Value, Error> {
        self.operand(exec, a, at).map(Cow::into_owned)
    }

    /// The value of an operand, borrowed from the registers or the constant
    /// pool (an immediate is made).
    fn operand<'e>(
        &'e self,
        exec: &'e Executable,
        a: &Arg,
        at: &Location<'_>,
    ) -> Result<Cow<'e, Value>, Error> {
        operand(&self.regs, self.num_regs, exec, a, at)
    }

    /// The value of register `r`, moved out (the register is unset).
    fn take(&mut self, r: Reg, at: &Location<'_>) -> Result<Value, Error> {
        check_reg(self.num_regs, r, at)?;
        self.regs
            .get_mut(r as usize)
            .and_then(Option::take)
            .ok_or_else(|| at.invalid(format!("register {r} is read before it is written")))
    }

    /// Unsets register `r` (it may be unset already).
    fn kill(&mut self, r: Reg, at: &Location<'_>) -> Result<(), Error> {
        check_reg(self.num_regs, r, at)?;
        if let Some(slot) = self.regs.get_mut(r as usize) {
            *slot = None;
        }
        Ok(())
    }

    /// Writes register `r`.
    fn write(&mut self, r: Reg, v: Value, at: &Location<'_>) -> Result<(), Error> {
        check_reg(self.num_regs, r, at)?;
        let i = r as usize;
        if self.regs.len() <= i {
            self.regs.resize(i + 1, None);
        }
        self.regs[i] = Some(v);
        Ok(())
    }
}

/// An error unless `r` is one of a function's `num_regs` registers.
fn check_reg(num_regs: u32, r: Reg, at: &Location<'_>) -> Result<(), Error> {
    if r >= num_regs {
        return Err(at.invalid(format!(
            "register {r} is out of range (the function has {num_regs})"
        )));
    }
    Ok(())
}

/// Register `r` of a frame's `regs`, borrowed.
fn regs_get<'r>(
    regs: &'r [Option<Value>],
    num_regs: u32,
    r: Reg,
    at: &Location<'_>,
) -> Result<&'r Value, Error> {
    check_reg(num_regs, r, at)?;
    regs.get(r as usize)
        .and_then(Option::as_ref)
        .ok_or_else(|| at.invalid(format!("register {r} is read before it is written")))
}

/// The value of an operand, borrowed from a frame's `regs` or the constant
/// pool; an immediate is made (split from [`Frame`] so that the shape heap
/// can be borrowed mutably at the same time).
fn operand<'e>(
    regs: &'e [Option<Value>],
    num_regs: u32,
    exec: &'e Executable,
    a: &Arg,
    at: &Location<'_>,
) -> Result<Cow<'e, Value>, Error> {
    match a {
        Arg::Reg(r) => regs_get(regs, num_regs, *r, at).map(Cow::Borrowed),
        Arg::Const(c) => exec
            .constants
            .get(*c as usize)
            .map(Cow::Borrowed)
            .ok_or_else(|| {
                at.invalid(format!(
                    "constant {c} is out of range (the pool has {})",
                    exec.constants.len()
                ))
            }),
        Arg::Imm(i) => Ok(Cow::Owned(Value::Int(*i))),
    }
}

// The VM is shared between threads; keep it that way.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Executable>();
    assert_send_sync::<VirtualMachine>();
};
