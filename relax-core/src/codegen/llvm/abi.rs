//! The kernel ABI: the scalar order and the entry function.
//!
//! 1. [`scalar_abi`] is the order of `scalars[]`: scalar parameters, then
//!    the remaining variables of buffer shapes and strides by first
//!    appearance (see the [module docs](super)).
//! 2. Each PrimFunc becomes two functions: `<symbol>.impl`, private, taking
//!    each buffer as a `noalias` element pointer and each scalar in its own
//!    type (so LLVM knows the buffers do not overlap), and the external
//!    `<symbol>` of the `KernelFn` ABI, which unpacks the two arrays and
//!    calls it; the optimizer inlines one into the other.
//! 3. [`KernelSignature`] is the host side of the ABI: from the tensors of a
//!    call and either every [`scalar_abi`] value or only the scalar
//!    parameters (the interpreter's convention), it checks the call (buffer
//!    count, dtypes, shapes, strided extents) and returns the full
//!    `scalars[]`, reading the remaining dims off the tensors' shapes.

use super::lower::lower_blocks;
use super::stmt::{FailMode, FuncGen};
use super::target::CpuExtras;
use super::types::{internal, memory_type, unsupported, value_type, Ll};
use crate::ir::prim_expr::{PrimExpr, TirVar};
use crate::tir::{Buffer, PrimFunc, PrimFuncParam};
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use inkwell::types::{BasicMetadataTypeEnum, BasicType, BasicTypeEnum};
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, FunctionValue};
use inkwell::AddressSpace;
use relax_runtime::{DataType, Error, Tensor};
use std::collections::HashMap;

pub use crate::tir::abi::scalar_abi;

/// What a kernel call must look like, and how to complete its scalars.
/// See the module docs.
#[derive(Clone, Debug)]
pub struct KernelSignature {
    buffers: Vec<Buffer>,
    params: usize,
    abi: Vec<TirVar>,
    /// Each buffer's dims as constants and `abi` positions, when every
    /// buffer is dense and every dim is one or the other (the common case):
    /// then a call is checked without evaluating expressions.
    plain: Option<Vec<Vec<PlainDim>>>,
}

/// A dim of a dense buffer: a constant, or the `scalar_abi` variable at an
/// index.
#[derive(Clone, Copy, Debug)]
enum PlainDim {
    Const(i64),
    Var(usize),
}

impl KernelSignature {
    /// The signature of `func`.
    pub fn new(func: &PrimFunc) -> Self {
        let buffers: Vec<Buffer> = func.buffers().cloned().collect();
        let abi = scalar_abi(func);
        let plain_dim = |d: &PrimExpr| match (d.as_int(), d.as_var()) {
            (Some(c), _) => Some(PlainDim::Const(c)),
            (None, Some(v)) => abi.iter().position(|a| a == v).map(PlainDim::Var),
            (None, None) => None,
        };
        let plain = (abi.len() <= 64)
            .then(|| {
                buffers
                    .iter()
                    .map(|b| {
                        if !b.strides().is_empty() {
                            return None;
                        }
                        b.shape().iter().map(plain_dim).collect::<Option<Vec<_>>>()
                    })
                    .collect::<Option<Vec<_>>>()
            })
            .flatten();
        KernelSignature {
            buffers,
            params: func
                .params
                .iter()
                .filter(|p| matches!(p, PrimFuncParam::Scalar(_)))
                .count(),
            abi,
            plain,
        }
    }

    /// The full `scalars[]` of a call on `inputs` and `outputs`, given
    /// every [`scalar_abi`] value or only the scalar parameters'. Fails,
    /// naming the culprit, when the call does not fit.
    pub fn scalars(
        &self,
        inputs: &[&Tensor],
        outputs: &[Tensor],
        scalars: &[i64],
    ) -> Result<Vec<i64>, String> {
        // The fast check only ever accepts what the full one accepts; on
        // any doubt the full one runs and says what is wrong.
        if let Some(done) = self.plain_scalars(inputs, outputs, scalars) {
            return Ok(done);
        }
        let tensors: Vec<&Tensor> = inputs.iter().copied().chain(outputs).collect();
        self.checked_scalars(&tensors, scalars)
    }

    /// This signature with the fast check switched off, so tests can
    /// compare the two.
    #[cfg(test)]
    pub(super) fn without_fast_check(mut self) -> Self {
        self.plain = None;
        self
    }

    /// Whether calls take the fast check.
    #[cfg(test)]
    pub(super) fn has_fast_check(&self) -> bool {
        self.plain.is_some()
    }

    /// [`KernelSignature::scalars`] for dense buffers with plain dims, or
    /// `None` when that does not apply or the call does not fit.
    fn plain_scalars(
        &self,
        inputs: &[&Tensor],
        outputs: &[Tensor],
        scalars: &[i64],
    ) -> Option<Vec<i64>> {
        let plain = self.plain.as_ref()?;
        if inputs.len() + outputs.len() != plain.len() {
            return None;
        }
        if scalars.len() != self.abi.len() && scalars.len() != self.params {
            return None;
        }
        let mut values = vec![0i64; self.abi.len()];
        values[..scalars.len()].copy_from_slice(scalars);
        // Bit k: `values[k]` is known (the fast path has at most 64).
        let mut known: u64 = low_bits(scalars.len());
        let tensors = inputs.iter().copied().chain(outputs);
        for ((dims, b), t) in plain.iter().zip(&self.buffers).zip(tensors) {
            if b.dtype() != t.dtype() || dims.len() != t.ndim() {
                return None;
            }
            for (d, &actual) in dims.iter().zip(t.shape()) {
                match *d {
                    PlainDim::Const(c) if c == actual => {}
                    PlainDim::Var(k) if known & (1 << k) == 0 => {
                        values[k] = actual;
                        known |= 1 << k;
                    }
                    PlainDim::Var(k) if values[k] == actual => {}
                    _ => return None,
                }
            }
        }
        (known == low_bits(self.abi.len())).then_some(values)
    }

    /// The full check of [`KernelSignature::scalars`], on `tensors`
    /// (inputs then outputs).
    fn checked_scalars(&self, tensors: &[&Tensor], scalars: &[i64]) -> Result<Vec<i64>, String> {
        if tensors.len() != self.buffers.len() {
            return Err(format!(
                "expected {} buffer arguments, found {}",
                self.buffers.len(),
                tensors.len()
            ));
        }
        let mut env: HashMap<TirVar, i64> = HashMap::new();
        // The scalar parameters lead scalar_abi, so either list zips with it.
        if scalars.len() == self.abi.len() || scalars.len() == self.params {
            env.extend(self.abi.iter().cloned().zip(scalars.iter().copied()));
        } else {
            return Err(format!(
                "expected {} scalar arguments (or {} with the shape variables), found {}",
                self.params,
                self.abi.len(),
                scalars.len()
            ));
        }
        // Dims that are bare variables take the actual extents on first sight.
        for (b, t) in self.buffers.iter().zip(tensors) {
            if b.dtype() != t.dtype() || b.shape().len() != t.ndim() {
                return Err(format!(
                    "buffer `{}` is {} of rank {}, its argument is {} of shape {}",
                    b.name(),
                    b.dtype(),
                    b.shape().len(),
                    t.dtype(),
                    relax_runtime::tensor::fmt_shape(t.shape())
                ));
            }
            for (d, &actual) in b.shape().iter().zip(t.shape()) {
                if let Some(v) = d.as_var() {
                    env.entry(v.clone()).or_insert(actual);
                }
            }
        }
        for (b, t) in self.buffers.iter().zip(tensors) {
            let eval = |e: &PrimExpr| {
                e.eval(&env)
                    .map_err(|err| format!("buffer `{}`: {err}", b.name()))
            };
            for (axis, (d, &actual)) in b.shape().iter().zip(t.shape()).enumerate() {
                let want = eval(d)?;
                if want != actual {
                    return Err(format!(
                        "buffer `{}` has dim {axis} = {d} = {want}, its argument has shape {}",
                        b.name(),
                        relax_runtime::tensor::fmt_shape(t.shape())
                    ));
                }
            }
            if !b.strides().is_empty() {
                // The last element a strided view reaches must exist.
                let mut last: i128 = 0;
                for (s, &d) in b.strides().iter().zip(t.shape()) {
                    last += (d.max(1) as i128 - 1) * eval(s)? as i128;
                }
                if t.numel() > 0 && (last < 0 || last >= t.numel() as i128) {
                    return Err(format!(
                        "buffer `{}`: its strides reach past its {} elements",
                        b.name(),
                        t.numel()
                    ));
                }
            }
        }
        self.abi
            .iter()
            .map(|v| {
                env.get(v).copied().ok_or_else(|| {
                    format!(
                        "`{v}` is neither a scalar argument nor a dim of a buffer: \
                         pass every scalar_abi value"
                    )
                })
            })
            .collect()
    }
}

/// A mask of the low `n` bits (`n` ≤ 64).
fn low_bits(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// Names a kernel may not take: the external symbols kernels call.
fn reserved(symbol: &str) -> bool {
    symbol == super::parallel::PARALLEL_FOR
        || symbol == super::stmt::WORKSPACE_ALLOC
        || symbol == super::stmt::WORKSPACE_FREE
        || super::jit::is_host_symbol(symbol)
}

/// Adds the kernel `symbol` computing `func` to `module`, for a CPU with
/// the instructions of `extras`.
pub(super) fn emit_kernel<'ctx>(
    ctx: &'ctx Context,
    module: &Module<'ctx>,
    symbol: &str,
    func: &PrimFunc,
    extras: CpuExtras,
) -> Result<(), Error> {
    if symbol.is_empty() || symbol.contains('\0') {
        return Err(unsupported(format!("the kernel symbol {symbol:?}")));
    }
    if reserved(symbol) || module.get_function(symbol).is_some() {
        return Err(unsupported(format!(
            "the kernel symbol `{symbol}` is taken (by another kernel or a runtime function)"
        )));
    }
    let body = lower_blocks(&func.body)?;
    let buffers: Vec<_> = func.buffers().cloned().collect();
    let scalars = scalar_abi(func);

    // `<symbol>.impl(T0 *noalias, …, s0, …)`
    let mut params: Vec<BasicMetadataTypeEnum> = Vec::new();
    for b in &buffers {
        let t = memory_type(ctx, b.dtype()).map_err(|e| in_param(e, b.name()))?;
        params.push(t.ptr_type(AddressSpace::default()).into());
    }
    let mut scalar_types: Vec<BasicTypeEnum> = Vec::new();
    for v in &scalars {
        let t = value_type(ctx, v.dtype()).map_err(|e| in_param(e, v.name()))?;
        scalar_types.push(t);
        params.push(t.into());
    }
    let i32t = ctx.i32_type();
    let impl_fn = module.add_function(
        &format!("{symbol}.impl"),
        i32t.fn_type(&params, false),
        Some(Linkage::Internal),
    );
    let noalias = ctx.create_enum_attribute(Attribute::get_named_enum_kind_id("noalias"), 0);
    for k in 0..buffers.len() {
        impl_fn.add_attribute(AttributeLoc::Param(k as u32), noalias);
    }
    let mut g = FuncGen::new(ctx, module, impl_fn, symbol, FailMode::Return);
    g.avx512 = extras.avx512;
    g.vnni = extras.vnni;
    g.bf16 = extras.bf16;
    g.f16c = extras.f16c;
    for (k, b) in buffers.iter().enumerate() {
        let p = nth_param(impl_fn, k)?.into_pointer_value();
        g.buffers.insert(b.id(), p);
        if super::streaming::streams(b) {
            g.streaming.insert(b.id());
        }
    }
    for (k, v) in scalars.iter().enumerate() {
        let x = nth_param(impl_fn, buffers.len() + k)?;
        g.vars.insert(v.clone(), x);
    }
    g.stmt(&body)?;
    g.fence_streams()?;
    g.b.build_return(Some(&i32t.const_zero())).ll()?;

    // `i32 <symbol>(u8 **buffers, i64 *scalars)`
    let i8p = ctx.i8_type().ptr_type(AddressSpace::default());
    let i64t = ctx.i64_type();
    let entry_fn = module.add_function(
        symbol,
        i32t.fn_type(
            &[
                i8p.ptr_type(AddressSpace::default()).into(),
                i64t.ptr_type(AddressSpace::default()).into(),
            ],
            false,
        ),
        Some(Linkage::External),
    );
    let mut e = FuncGen::new(ctx, module, entry_fn, symbol, FailMode::Return);
    let buf_arr = nth_param(entry_fn, 0)?.into_pointer_value();
    let scalar_arr = nth_param(entry_fn, 1)?.into_pointer_value();
    let mut args: Vec<BasicMetadataValueEnum> = Vec::new();
    for (k, b) in buffers.iter().enumerate() {
        let idx = i64t.const_int(k as u64, false);
        // SAFETY (of the generated code): the VM passes one pointer per
        // buffer parameter.
        let slot = unsafe { e.b.build_in_bounds_gep(buf_arr, &[idx], "slot").ll()? };
        let raw = e.b.build_load(slot, b.name()).ll()?.into_pointer_value();
        let t = memory_type(ctx, b.dtype())?;
        let p =
            e.b.build_pointer_cast(raw, t.ptr_type(AddressSpace::default()), b.name())
                .ll()?;
        args.push(p.into());
    }
    for (k, v) in scalars.iter().enumerate() {
        let idx = i64t.const_int(k as u64, false);
        // SAFETY (of the generated code): one i64 per scalar_abi variable.
        let slot = unsafe { e.b.build_in_bounds_gep(scalar_arr, &[idx], "slot").ll()? };
        let raw = e.b.build_load(slot, v.name()).ll()?;
        let x = if v.dtype().is_float() {
            // A float scalar arrives as the bits of an f64.
            let f = e.b.build_bit_cast(raw, ctx.f64_type(), "bits").ll()?;
            e.convert(f, DataType::f64(), v.dtype())?
        } else {
            e.convert(raw, DataType::i64(), v.dtype())?
        };
        args.push(x.into());
    }
    let rc =
        e.b.build_call(impl_fn, &args, "rc")
            .ll()?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| internal("the kernel implementation returned no value"))?;
    e.b.build_return(Some(&rc)).ll()?;

    let nounwind = ctx.create_enum_attribute(Attribute::get_named_enum_kind_id("nounwind"), 0);
    for f in [impl_fn, entry_fn] {
        f.add_attribute(AttributeLoc::Function, nounwind);
    }
    if !impl_fn.verify(false) || !entry_fn.verify(false) {
        return Err(internal(format!(
            "the LLVM function for `{symbol}` does not verify"
        )));
    }
    Ok(())
}

fn nth_param(f: FunctionValue<'_>, k: usize) -> Result<BasicValueEnum<'_>, Error> {
    f.get_nth_param(k as u32)
        .ok_or_else(|| internal(format!("parameter {k} missing")))
}

fn in_param(e: Error, name: &str) -> Error {
    match e {
        Error::Unsupported(m) => Error::Unsupported(format!("{m} (parameter `{name}`)")),
        other => other,
    }
}
