//! `Parallel` loops: outlining and the call into the runtime's pool.
//!
//! 1. The loop's body becomes a private function
//!    `void <symbol>.parallel.<k>(i64 begin, i64 end, i8 *env)` running
//!    iterations `begin..end` (counted from 0; the loop variable is
//!    `min + i`).
//! 2. `env` points at a struct on the caller's stack: the loop's start, a
//!    pointer to an `i32` failure flag, then every variable and buffer
//!    pointer the body uses from the enclosing scope (buffers bring the
//!    variables of their shapes and strides), in a fixed order.
//! 3. The caller clears the flag, calls
//!    `relax_parallel_for(extent, body, env)` (relax-runtime), which returns
//!    when every iteration has run, and fails in turn if a body set the flag.
//!    Nested parallel loops outline again from the outlined body.

use super::stmt::{FailMode, FuncGen};
use super::types::{internal, unsupported, Ll};
use crate::ir::prim_expr::{PrimExpr, PrimExprKind, TirVar};
use crate::tir::{Buffer, Stmt};
use inkwell::module::Linkage;
use inkwell::types::{BasicType, BasicTypeEnum};
use inkwell::values::{BasicValueEnum, PointerValue};
use inkwell::{AddressSpace, IntPredicate};
use relax_runtime::{DataType, Error};

/// The runtime's entry point.
pub(super) const PARALLEL_FOR: &str = "relax_parallel_for";

/// What a statement uses from its scope.
#[derive(Default)]
struct Uses {
    vars: Vec<TirVar>,
    buffers: Vec<Buffer>,
}

impl Uses {
    fn expr(&mut self, e: &PrimExpr) {
        match e.kind() {
            PrimExprKind::Var(v) => {
                if !self.vars.contains(v) {
                    self.vars.push(v.clone());
                }
            }
            PrimExprKind::BufferLoad(b, _) => {
                self.buffer(b);
                e.children().into_iter().for_each(|c| self.expr(c));
            }
            _ => e.children().into_iter().for_each(|c| self.expr(c)),
        }
    }

    fn buffer(&mut self, b: &Buffer) {
        if self.buffers.contains(b) {
            return;
        }
        self.buffers.push(b.clone());
        for e in b.shape().iter().chain(b.strides()) {
            self.expr(e);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::For {
                min, extent, body, ..
            } => {
                self.expr(min);
                self.expr(extent);
                self.stmt(body);
            }
            Stmt::Block(block) => {
                block.iter_values.iter().for_each(|e| self.expr(e));
                for iv in &block.iter_vars {
                    self.expr(&iv.min);
                    self.expr(&iv.extent);
                }
                if let Some(init) = &block.init {
                    self.stmt(init);
                }
                block.alloc_buffers.iter().for_each(|b| self.buffer(b));
                self.stmt(&block.body);
            }
            Stmt::BufferStore {
                buffer,
                value,
                indices,
            } => {
                self.buffer(buffer);
                self.expr(value);
                indices.iter().for_each(|e| self.expr(e));
            }
            Stmt::Allocate { buffer, body } => {
                self.buffer(buffer);
                self.stmt(body);
            }
            Stmt::IfThenElse {
                cond,
                then_case,
                else_case,
            } => {
                self.expr(cond);
                self.stmt(then_case);
                if let Some(e) = else_case {
                    self.stmt(e);
                }
            }
            Stmt::LetStmt { value, body, .. } => {
                self.expr(value);
                self.stmt(body);
            }
            Stmt::Evaluate(e) => self.expr(e),
            Stmt::Seq(stmts) => stmts.iter().for_each(|s| self.stmt(s)),
        }
    }
}

impl<'ctx, 'm> FuncGen<'ctx, 'm> {
    /// A `Parallel` loop. See the module docs.
    pub fn parallel_for(
        &mut self,
        var: &TirVar,
        min: &PrimExpr,
        extent: &PrimExpr,
        body: &Stmt,
    ) -> Result<(), Error> {
        if self.lanes.is_some() {
            return Err(unsupported(format!(
                "the parallel loop over `{var}` inside a vector step"
            )));
        }
        let d = Self::loop_dtype(var)?;
        let start = self.scalar_of(min, d)?;
        let extent = self.scalar_of(extent, DataType::i64())?;

        // What the body needs from here, in a fixed order.
        let mut uses = Uses::default();
        uses.stmt(body);
        let mut vars: Vec<(TirVar, BasicValueEnum<'ctx>)> = uses
            .vars
            .iter()
            .filter(|v| *v != var)
            .filter_map(|v| self.vars.get(v).map(|x| (v.clone(), *x)))
            .collect();
        vars.sort_by_key(|(v, _)| v.id());
        let mut bufs: Vec<(u64, PointerValue<'ctx>)> = uses
            .buffers
            .iter()
            .filter_map(|b| self.buffers.get(&b.id()).map(|p| (b.id(), *p)))
            .collect();
        bufs.sort_by_key(|(id, _)| *id);

        let i32t = self.ctx.i32_type();
        let i32p = i32t.ptr_type(AddressSpace::default());
        let mut fields: Vec<BasicTypeEnum<'ctx>> = vec![start.get_type().into(), i32p.into()];
        fields.extend(vars.iter().map(|(_, v)| v.get_type()));
        fields.extend(bufs.iter().map(|(_, p)| p.get_type().as_basic_type_enum()));
        let env_ty = self.ctx.struct_type(&fields, false);

        // The outlined body.
        let i64t = self.ctx.i64_type();
        let i8p = self.ctx.i8_type().ptr_type(AddressSpace::default());
        let body_ty = self
            .ctx
            .void_type()
            .fn_type(&[i64t.into(), i64t.into(), i8p.into()], false);
        let name = self.fresh_name("parallel");
        let f = self
            .module
            .add_function(&name, body_ty, Some(Linkage::Internal));
        {
            let placeholder = FailMode::Return;
            let mut g = FuncGen::new(self.ctx, self.module, f, &self.symbol, placeholder);
            g.streaming = self.streaming.clone();
            g.avx512 = self.avx512;
            g.vnni = self.vnni;
            g.bf16 = self.bf16;
            g.f16c = self.f16c;
            g.auto_unroll_max_step = self.auto_unroll_max_step;
            let param = |k: u32| {
                f.get_nth_param(k)
                    .ok_or_else(|| internal("an outlined body without parameters"))
            };
            let begin = param(0)?.into_int_value();
            let end = param(1)?.into_int_value();
            let raw = param(2)?.into_pointer_value();
            let envp =
                g.b.build_pointer_cast(raw, env_ty.ptr_type(AddressSpace::default()), "env")
                    .ll()?;
            let field =
                |g: &mut FuncGen<'ctx, '_>, k: u32| -> Result<BasicValueEnum<'ctx>, Error> {
                    let p = g.b.build_struct_gep(envp, k, "field").ll()?;
                    g.b.build_load(p, "capture").ll()
                };
            let g_start = field(&mut g, 0)?.into_int_value();
            let flag = field(&mut g, 1)?.into_pointer_value();
            g.fail = FailMode::Flag(flag);
            for (k, (v, _)) in vars.iter().enumerate() {
                let x = field(&mut g, 2 + k as u32)?;
                g.vars.insert(v.clone(), x);
            }
            for (k, (id, _)) in bufs.iter().enumerate() {
                let x = field(&mut g, (2 + vars.len() + k) as u32)?;
                g.buffers.insert(*id, x.into_pointer_value());
            }
            g.build_loop(begin, end, true, super::metadata::LoopHint::None, |g, i| {
                let i = g.convert(i.into(), DataType::i64(), d)?.into_int_value();
                let iv = g.b.build_int_add(g_start, i, var.name()).ll()?;
                let old = g.bind(var, iv.into());
                let r = g.stmt(body);
                g.unbind(var, old);
                r
            })?;
            g.fence_streams()?;
            g.b.build_return(None).ll()?;
        }

        // The call.
        let env = self.entry_alloca(env_ty, 1, "env")?;
        let flag = self.entry_alloca(i32t, 1, "failed")?;
        self.b.build_store(flag, i32t.const_zero()).ll()?;
        let mut values: Vec<BasicValueEnum<'ctx>> = vec![start.into(), flag.into()];
        values.extend(vars.iter().map(|(_, v)| *v));
        values.extend(bufs.iter().map(|(_, p)| BasicValueEnum::from(*p)));
        for (k, v) in values.into_iter().enumerate() {
            let p = self.b.build_struct_gep(env, k as u32, "slot").ll()?;
            self.b.build_store(p, v).ll()?;
        }
        let runtime_ty = self.ctx.void_type().fn_type(
            &[
                i64t.into(),
                body_ty.ptr_type(AddressSpace::default()).into(),
                i8p.into(),
            ],
            false,
        );
        let runtime = self.declare(PARALLEL_FOR, runtime_ty);
        let env_raw = self.b.build_pointer_cast(env, i8p, "envp").ll()?;
        let fptr = f.as_global_value().as_pointer_value();
        self.b
            .build_call(runtime, &[extent.into(), fptr.into(), env_raw.into()], "")
            .ll()?;
        let failed = self.b.build_load(flag, "failed").ll()?.into_int_value();
        let failed = self
            .b
            .build_int_compare(IntPredicate::NE, failed, i32t.const_zero(), "failed")
            .ll()?;
        self.fail_if(failed)
    }

    /// `<symbol>.<what>.<k>` for the first `k` not taken in the module.
    fn fresh_name(&self, what: &str) -> String {
        (0..)
            .map(|k| format!("{}.{what}.{k}", self.symbol))
            .find(|n| self.module.get_function(n).is_none())
            .unwrap_or_default()
    }
}
