//! Statements to LLVM IR: the per-function emitter [`FuncGen`], loops,
//! conditionals, lets and allocations.
//!
//! 1. A `FuncGen` emits one LLVM function: the kernel's body, or an outlined
//!    parallel-loop body. It maps each variable in scope to its LLVM value
//!    and each buffer in scope to a pointer to its first element.
//! 2. Loops count from `min` to `min + extent` in the loop variable's dtype
//!    (a phi in a header block); the back edge carries the loop's hint.
//! 3. Failures at run time (a scratch allocation returning null, or a scratch size
//!    past `isize::MAX` bytes) leave through [`FailMode`]: the kernel
//!    returns 2, a parallel body sets the flag its caller checks after the
//!    loop. Either way the heap scratch of the enclosing scopes is freed
//!    first.

use super::auto_unroll;
use super::metadata::{self, LoopHint};
use super::types::{internal, memory_type, unsupported, Ll};
use crate::ir::prim_expr::{PrimExpr, TirVar};
use crate::tir::{Buffer, ForKind, Stmt};
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::basic_block::BasicBlock;
use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::types::BasicType;
use inkwell::values::{BasicValueEnum, FunctionValue, IntValue, PointerValue};
use inkwell::{AddressSpace, IntPredicate};
use relax_runtime::{DataType, Error};
use std::collections::HashMap;

/// Constant-size allocations up to this many bytes go on the stack.
const STACK_LIMIT: u64 = 32 * 1024;

/// The runtime's scratch allocator (`relax_runtime::workspace`): heap
/// buffers come from it and go back to it, so a kernel called again
/// reuses the pages it touched before.
pub(super) const WORKSPACE_ALLOC: &str = "relax_workspace_alloc";
/// Gives a block back to [`WORKSPACE_ALLOC`]'s cache.
pub(super) const WORKSPACE_FREE: &str = "relax_workspace_free";

/// The kernel's return code when a heap allocation fails.
pub(super) const OUT_OF_MEMORY: u64 = 2;

/// How a function leaves on a run-time failure.
#[derive(Clone, Copy)]
pub(super) enum FailMode<'ctx> {
    /// Return [`OUT_OF_MEMORY`] (the kernel's implementation function).
    Return,
    /// Store 1 to this `i32` flag and return (an outlined parallel body).
    Flag(PointerValue<'ctx>),
}

/// The lanes of a vectorized loop step: `var` is `base + <0, 1, …, n-1>`.
pub(super) struct Lanes<'ctx> {
    /// The loop variable.
    pub var: TirVar,
    /// Its value in lane 0.
    pub base: IntValue<'ctx>,
    /// The number of lanes.
    pub n: u32,
    /// A number `base` is always a multiple of (0: `base` is 0), for the
    /// alignment of streaming stores ([`super::streaming`]).
    pub base_divisor: i64,
}

/// Emits one LLVM function. See the module docs.
pub(super) struct FuncGen<'ctx, 'm> {
    pub ctx: &'ctx Context,
    pub module: &'m Module<'ctx>,
    pub b: Builder<'ctx>,
    pub func: FunctionValue<'ctx>,
    pub entry: BasicBlock<'ctx>,
    /// The value of each variable in scope.
    pub vars: HashMap<TirVar, BasicValueEnum<'ctx>>,
    /// The element pointer of each buffer in scope, by buffer id.
    pub buffers: HashMap<u64, PointerValue<'ctx>>,
    /// Set while emitting one step of a vectorized loop.
    pub lanes: Option<Lanes<'ctx>>,
    /// The transposed loads of the current row of a transpose block
    /// ([`super::transpose`]); empty elsewhere.
    pub transposed: Vec<super::transpose::Transposed<'ctx>>,
    /// The parameter buffers (by id) written with streaming stores.
    pub streaming: std::collections::HashSet<u64>,
    /// Whether a streaming store was emitted (so the function ends with a
    /// fence).
    pub streamed: bool,
    pub fail: FailMode<'ctx>,
    /// The heap buffers (from `relax_workspace_alloc`: raw pointers and
    /// their sizes in bytes) of the enclosing
    /// `Allocate`s, innermost last: a failure frees them before leaving.
    pub heap: Vec<(PointerValue<'ctx>, IntValue<'ctx>)>,
    /// The kernel's symbol, a prefix for outlined functions.
    pub symbol: String,
    /// Whether the target CPU has AVX-512: `exp` of 16 `float32` lanes
    /// scales by `vscalefps` ([`super::math`]).
    pub avx512: bool,
    /// Whether the target CPU has AVX512-VNNI: `T.dpbusd` on 16 lanes is
    /// then one `vpdpbusd` ([`super::intrinsics`]).
    pub vnni: bool,
    /// Whether the target CPU has AVX512-BF16: `T.dpbf16ps` on 16 lanes
    /// is then one `vdpbf16ps` ([`super::dpbf16`]).
    pub bf16: bool,
    /// Whether the target CPU has F16C: a `float16` load widens with
    /// `fpext` (`vcvtph2ps`, [`super::half`]).
    pub f16c: bool,
    /// The element the store being emitted writes (buffer and indices):
    /// only an update of it, `x * y + it`, is contracted into one
    /// `llvm.fmuladd` (item 4 of [`super::expr`]'s docs).
    pub accumulator: Option<(Buffer, Vec<PrimExpr>)>,
    /// TVM's `pragma_auto_unroll_max_step` of the innermost enclosing loop
    /// that sets it ([`super::auto_unroll`]).
    pub auto_unroll_max_step: Option<i64>,
}

impl<'ctx, 'm> FuncGen<'ctx, 'm> {
    /// An emitter positioned at the start of `func`'s new entry block.
    pub fn new(
        ctx: &'ctx Context,
        module: &'m Module<'ctx>,
        func: FunctionValue<'ctx>,
        symbol: &str,
        fail: FailMode<'ctx>,
    ) -> Self {
        let b = ctx.create_builder();
        let entry = ctx.append_basic_block(func, "entry");
        b.position_at_end(entry);
        FuncGen {
            ctx,
            module,
            b,
            func,
            entry,
            vars: HashMap::new(),
            buffers: HashMap::new(),
            lanes: None,
            transposed: Vec::new(),
            streaming: Default::default(),
            streamed: false,
            fail,
            heap: Vec::new(),
            symbol: symbol.to_string(),
            avx512: false,
            vnni: false,
            bf16: false,
            f16c: false,
            accumulator: None,
            auto_unroll_max_step: None,
        }
    }

    /// Binds `var`, returning the binding it shadows.
    pub fn bind(&mut self, var: &TirVar, v: BasicValueEnum<'ctx>) -> Option<BasicValueEnum<'ctx>> {
        self.vars.insert(var.clone(), v)
    }

    /// Undoes [`FuncGen::bind`].
    pub fn unbind(&mut self, var: &TirVar, old: Option<BasicValueEnum<'ctx>>) {
        match old {
            Some(v) => self.vars.insert(var.clone(), v),
            None => self.vars.remove(var),
        };
    }

    /// Emits `s` at the current position.
    pub fn stmt(&mut self, s: &Stmt) -> Result<(), Error> {
        match s {
            Stmt::For {
                loop_var,
                min,
                extent,
                kind,
                body,
                annotations,
            } => {
                let outer = self.auto_unroll_max_step;
                if let Some(n) = auto_unroll::max_step(annotations) {
                    self.auto_unroll_max_step = Some(n);
                }
                let r = match kind {
                    ForKind::Serial => {
                        let hint = if auto_unroll::unrolls(s, self.auto_unroll_max_step) {
                            LoopHint::UnrollFull
                        } else {
                            LoopHint::None
                        };
                        self.serial_for(loop_var, min, extent, body, hint)
                    }
                    ForKind::Unrolled => {
                        let hint = if extent.as_int().is_some() {
                            LoopHint::UnrollFull
                        } else {
                            LoopHint::UnrollEnable
                        };
                        self.serial_for(loop_var, min, extent, body, hint)
                    }
                    ForKind::Vectorized => self.vectorized_for(loop_var, min, extent, body),
                    ForKind::Parallel => self.parallel_for(loop_var, min, extent, body),
                };
                self.auto_unroll_max_step = outer;
                r
            }
            Stmt::Block(block) => Err(unsupported(format!(
                "block `{}` was not lowered before code generation",
                block.name
            ))),
            Stmt::BufferStore {
                buffer,
                value,
                indices,
            } => self.store(buffer, indices, value),
            Stmt::Allocate { buffer, body } => self.allocate(buffer, body),
            Stmt::IfThenElse {
                cond,
                then_case,
                else_case,
            } => {
                let c = self.scalar_of(cond, DataType::bool())?;
                let then_bb = self.ctx.append_basic_block(self.func, "then");
                let else_bb = self.ctx.append_basic_block(self.func, "else");
                let merge = self.ctx.append_basic_block(self.func, "endif");
                self.b.build_conditional_branch(c, then_bb, else_bb).ll()?;
                self.b.position_at_end(then_bb);
                self.stmt(then_case)?;
                self.b.build_unconditional_branch(merge).ll()?;
                self.b.position_at_end(else_bb);
                if let Some(e) = else_case {
                    self.stmt(e)?;
                }
                self.b.build_unconditional_branch(merge).ll()?;
                self.b.position_at_end(merge);
                Ok(())
            }
            Stmt::LetStmt { var, value, body } => {
                let v = self.expr_as(value, var.dtype())?;
                let old = self.bind(var, v);
                let r = self.stmt(body);
                self.unbind(var, old);
                r
            }
            // Expressions have no effects; emitting it still reports what
            // it cannot compile, and LLVM drops the dead code.
            Stmt::Evaluate(e) => self.expr(e).map(|_| ()),
            Stmt::Seq(stmts) => stmts.iter().try_for_each(|s| self.stmt(s)),
        }
    }

    /// The scalar value of `e` as `dtype` (loop bounds, conditions).
    pub fn scalar_of(&mut self, e: &PrimExpr, dtype: DataType) -> Result<IntValue<'ctx>, Error> {
        match self.expr_as(e, dtype)? {
            BasicValueEnum::IntValue(v) => Ok(v),
            _ => Err(unsupported(format!(
                "`{e}` must be a scalar integer or bool here"
            ))),
        }
    }

    /// The dtype of a loop variable, if it can count.
    pub fn loop_dtype(var: &TirVar) -> Result<DataType, Error> {
        let d = var.dtype();
        if d.is_integer() && !d.is_bool() && d.lanes() == 1 {
            Ok(d)
        } else {
            Err(unsupported(format!(
                "loop variable `{var}` of dtype `{d}` (loops count in integers)"
            )))
        }
    }

    /// A scalar loop over `min .. min + extent` (`hint` for LLVM).
    pub(super) fn serial_for(
        &mut self,
        var: &TirVar,
        min: &PrimExpr,
        extent: &PrimExpr,
        body: &Stmt,
        hint: LoopHint,
    ) -> Result<(), Error> {
        let d = Self::loop_dtype(var)?;
        let start = self.scalar_of(min, d)?;
        let ext = self.scalar_of(extent, d)?;
        let end = self.b.build_int_add(start, ext, "end").ll()?;
        self.loop_over(var, start, end, d.is_int(), hint, body)
    }

    /// `for var in start..end { body }`: [`FuncGen::build_loop`] with
    /// `var` bound to the counter inside.
    pub(super) fn loop_over(
        &mut self,
        var: &TirVar,
        start: IntValue<'ctx>,
        end: IntValue<'ctx>,
        signed: bool,
        hint: LoopHint,
        body: &Stmt,
    ) -> Result<(), Error> {
        self.build_loop(start, end, signed, hint, |g, i| {
            let old = g.bind(var, i.into());
            let r = g.stmt(body);
            g.unbind(var, old);
            r
        })
    }

    /// Emits `for i in start..end { body(i) }`; `signed` picks the compare.
    pub fn build_loop(
        &mut self,
        start: IntValue<'ctx>,
        end: IntValue<'ctx>,
        signed: bool,
        hint: LoopHint,
        mut body: impl FnMut(&mut Self, IntValue<'ctx>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let pre = self.insert_block()?;
        let header = self.ctx.append_basic_block(self.func, "loop");
        let body_bb = self.ctx.append_basic_block(self.func, "body");
        let exit = self.ctx.append_basic_block(self.func, "endloop");
        self.b.build_unconditional_branch(header).ll()?;
        self.b.position_at_end(header);
        let phi = self.b.build_phi(start.get_type(), "i").ll()?;
        phi.add_incoming(&[(&start, pre)]);
        let i = phi.as_basic_value().into_int_value();
        let pred = if signed {
            IntPredicate::SLT
        } else {
            IntPredicate::ULT
        };
        let go = self.b.build_int_compare(pred, i, end, "go").ll()?;
        self.b.build_conditional_branch(go, body_bb, exit).ll()?;
        self.b.position_at_end(body_bb);
        body(self, i)?;
        // i < end, so i + 1 cannot wrap: the flag helps LLVM's loop analyses.
        let one = start.get_type().const_int(1, false);
        let next = if signed {
            self.b.build_int_nsw_add(i, one, "next").ll()?
        } else {
            self.b.build_int_nuw_add(i, one, "next").ll()?
        };
        let latch = self.insert_block()?;
        let back = self.b.build_unconditional_branch(header).ll()?;
        phi.add_incoming(&[(&next, latch)]);
        metadata::attach(self.ctx, back, hint);
        self.b.position_at_end(exit);
        Ok(())
    }

    fn insert_block(&self) -> Result<BasicBlock<'ctx>, Error> {
        self.b
            .get_insert_block()
            .ok_or_else(|| internal("the builder has no position"))
    }

    /// Branches to the failure exit when `cond` holds.
    pub fn fail_if(&mut self, cond: IntValue<'ctx>) -> Result<(), Error> {
        let fail = self.ctx.append_basic_block(self.func, "fail");
        let cont = self.ctx.append_basic_block(self.func, "ok");
        self.b.build_conditional_branch(cond, fail, cont).ll()?;
        self.b.position_at_end(fail);
        for &(raw, bytes) in self.heap.iter().rev() {
            self.build_free(raw, bytes)?;
        }
        match self.fail {
            FailMode::Return => {
                let code = self.ctx.i32_type().const_int(OUT_OF_MEMORY, false);
                self.b.build_return(Some(&code)).ll()?;
            }
            FailMode::Flag(flag) => {
                self.b
                    .build_store(flag, self.ctx.i32_type().const_int(1, false))
                    .ll()?;
                self.b.build_return(None).ll()?;
            }
        }
        self.b.position_at_end(cont);
        Ok(())
    }

    /// An `alloca` of `count` elements of `ty` in the entry block, so it is
    /// allocated once per call however often its statement runs.
    pub fn entry_alloca(
        &self,
        ty: impl BasicType<'ctx>,
        count: u64,
        name: &str,
    ) -> Result<PointerValue<'ctx>, Error> {
        let b = self.ctx.create_builder();
        match self.entry.get_first_instruction() {
            Some(first) => b.position_before(&first),
            None => b.position_at_end(self.entry),
        }
        let n = self.ctx.i64_type().const_int(count, false);
        let p = b.build_array_alloca(ty, n, name).ll()?;
        if let Some(inst) = p.as_instruction() {
            inst.set_alignment(64).map_err(internal)?;
        }
        Ok(p)
    }

    fn allocate(&mut self, buffer: &Buffer, body: &Stmt) -> Result<(), Error> {
        if !buffer.strides().is_empty() {
            return Err(unsupported(format!(
                "allocated buffer `{}` with explicit strides",
                buffer.name()
            )));
        }
        let elem_ty = memory_type(self.ctx, buffer.dtype())?;
        let elem_bytes = buffer.dtype().size_in_bytes() as u64;
        let constant = buffer
            .shape()
            .iter()
            .try_fold(1u64, |acc, d| acc.checked_mul(d.as_int()?.max(0) as u64));
        let on_stack = constant.filter(|n| n.saturating_mul(elem_bytes) <= STACK_LIMIT);
        let old = self.buffers.get(&buffer.id()).copied();
        if let Some(count) = on_stack {
            let p = self.entry_alloca(elem_ty, count.max(1), buffer.name())?;
            self.buffers.insert(buffer.id(), p);
            let r = self.stmt(body);
            self.restore_buffer(buffer, old);
            return r;
        }
        // The element count, with negative dims as empty. A count whose
        // bytes would pass `isize::MAX` fails like a refused allocation
        // (before any partial product can wrap): `count > limit / d`.
        let i64t = self.ctx.i64_type();
        let limit = i64t.const_int(isize::MAX as u64 / elem_bytes.max(1), false);
        let mut count = i64t.const_int(1, false);
        let mut too_large = self.ctx.bool_type().const_zero();
        for d in buffer.shape() {
            let d = self.scalar_of(d, DataType::i64())?;
            let neg = self
                .b
                .build_int_compare(IntPredicate::SLT, d, i64t.const_zero(), "neg")
                .ll()?;
            let d = self
                .b
                .build_select(neg, i64t.const_zero(), d, "dim")
                .ll()?
                .into_int_value();
            let zero = self
                .b
                .build_int_compare(IntPredicate::EQ, d, i64t.const_zero(), "zero")
                .ll()?;
            let divisor = self
                .b
                .build_select(zero, i64t.const_int(1, false), d, "divisor")
                .ll()?
                .into_int_value();
            let room = self.b.build_int_unsigned_div(limit, divisor, "room").ll()?;
            let over = self
                .b
                .build_int_compare(IntPredicate::UGT, count, room, "over")
                .ll()?;
            too_large = self.b.build_or(too_large, over, "too_large").ll()?;
            count = self.b.build_int_mul(count, d, "count").ll()?;
        }
        self.fail_if(too_large)?;
        let bytes = self
            .b
            .build_int_mul(count, i64t.const_int(elem_bytes, false), "bytes")
            .ll()?;
        let i8p = self.ctx.i8_type().ptr_type(AddressSpace::default());
        let alloc = self.declare(WORKSPACE_ALLOC, i8p.fn_type(&[i64t.into()], false));
        for kind in ["nounwind", "willreturn", "inaccessiblememonly"] {
            alloc.add_attribute(AttributeLoc::Function, self.enum_attr(kind));
        }
        alloc.add_attribute(AttributeLoc::Return, self.enum_attr("noalias"));
        let raw = self
            .b
            .build_call(alloc, &[bytes.into()], "raw")
            .ll()?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| internal("relax_workspace_alloc returned no value"))?
            .into_pointer_value();
        let null = self.b.build_is_null(raw, "null").ll()?;
        self.fail_if(null)?;
        let p = self
            .b
            .build_pointer_cast(raw, elem_ty.ptr_type(AddressSpace::default()), "buf")
            .ll()?;
        self.buffers.insert(buffer.id(), p);
        self.heap.push((raw, bytes));
        let r = self.stmt(body);
        self.heap.pop();
        self.restore_buffer(buffer, old);
        r?;
        self.build_free(raw, bytes)
    }

    /// The LLVM attribute `kind`. The scratch allocator's functions carry
    /// the attributes LLVM gives `malloc` and `free` (a fresh block aliases
    /// nothing; the free neither keeps the pointer for the kernel nor
    /// touches its other memory), without which alias analysis must assume
    /// the block may be any buffer and the loops that fill and read it are
    /// not vectorized (ResNet-18's first convolution ran at half speed).
    fn enum_attr(&self, kind: &str) -> inkwell::attributes::Attribute {
        self.ctx
            .create_enum_attribute(Attribute::get_named_enum_kind_id(kind), 0)
    }

    /// `relax_workspace_free(raw, bytes)`.
    fn build_free(&self, raw: PointerValue<'ctx>, bytes: IntValue<'ctx>) -> Result<(), Error> {
        let i8p = self.ctx.i8_type().ptr_type(AddressSpace::default());
        let i64t = self.ctx.i64_type();
        let ty = self
            .ctx
            .void_type()
            .fn_type(&[i8p.into(), i64t.into()], false);
        let free = self.declare(WORKSPACE_FREE, ty);
        for kind in ["nounwind", "willreturn", "inaccessiblemem_or_argmemonly"] {
            free.add_attribute(AttributeLoc::Function, self.enum_attr(kind));
        }
        free.add_attribute(AttributeLoc::Param(0), self.enum_attr("nocapture"));
        self.b
            .build_call(free, &[raw.into(), bytes.into()], "")
            .ll()?;
        Ok(())
    }

    fn restore_buffer(&mut self, buffer: &Buffer, old: Option<PointerValue<'ctx>>) {
        match old {
            Some(p) => self.buffers.insert(buffer.id(), p),
            None => self.buffers.remove(&buffer.id()),
        };
    }

    /// The function `name` of the module, declared with `ty` if absent.
    pub fn declare(
        &self,
        name: &str,
        ty: inkwell::types::FunctionType<'ctx>,
    ) -> FunctionValue<'ctx> {
        self.module
            .get_function(name)
            .unwrap_or_else(|| self.module.add_function(name, ty, None))
    }
}
