//! The loop-level interpreter: runs a [`PrimFunc`] on tensors.
//!
//! It is the oracle compiled code is checked against, and the kernel library
//! of `Target::interpreter()` ([`InterpreterLibrary`]). It walks the
//! statement tree directly, with no lowering step:
//!
//! 1. **Binding.** Buffer parameters bind, in order, to the inputs then the
//!    outputs; scalar parameters to `scalars`. Counts and dtypes must match.
//!    A buffer dim that is a bare symbolic variable not bound yet takes the
//!    actual extent on first sight; every dim is then evaluated and compared
//!    with the actual shape. Any mismatch is an `Err`.
//! 2. **Values.** A PrimExpr evaluates to an `i64` (integers and `bool`s,
//!    wrapped to the node's width after each operation) or an `f64` (floats,
//!    rounded to the node's precision after each operation: `float32`
//!    results are exactly what `f32` arithmetic gives). `float16` and
//!    `bfloat16` follow [`super::half_float`]: their buffers hold half
//!    values, their arithmetic is `float32`'s, and a store into a half
//!    buffer or a `Cast` from another dtype to a half type rounds to it. `//` and `%` on integers are floor division
//!    and modulo; on floats `Div` is true division and `Mod` floor modulo.
//!    `Select` and `T.if_then_else` evaluate only the branch they choose, so
//!    a guarded access (`T.if_then_else(i > 0, A[i - 1], 0)`) is safe.
//! 3. **Intrinsics** ([`INTRINSICS`]): `exp exp2 exp10 log log2 log10 log1p
//!    sqrt rsqrt tanh sigmoid erf pow fabs abs floor ceil round nearbyint
//!    trunc sin cos tan asin acos atan atan2 sinh cosh asinh acosh atanh fmod
//!    if_then_else isnan isinf`, and on integers (and `bool`s) `bitwise_and
//!    bitwise_or bitwise_xor bitwise_not shift_left shift_right`,
//!    `truncdiv truncmod` (division rounding toward zero, TVM's `T.Div`;
//!    a divisor of 0 is an `Err`), and
//!    `dpbusd(acc, a, b)` on `int32` (x86's `vpdpbusd`, one lane: `acc`
//!    plus the dot product of `a`'s four bytes, unsigned, with `b`'s,
//!    signed; [`dpbusd`]), the step of an int8 matrix product;
//!    `dpbf16ps(acc, a, b)`, `float32` from 32-bit words of two `bfloat16`
//!    (x86's `vdpbf16ps`, one lane, with its DAZ/FTZ rounding;
//!    [`dpbf16ps`]), the step of a `bfloat16` one; and `reinterpret(x)`,
//!    `x`'s bits as the call's dtype (32 or 64 bits, [`reinterpretable`]).
//!    `round` is
//!    TVM's: half to even. `shift_right` is arithmetic on signed types and
//!    logical on unsigned ones; a shift amount outside `[0, bits)` gives 0
//!    (-1 for a right shift of a negative value), as NumPy and the reference
//!    kernels, where C is undefined. `erf` sums the series
//!    `erf(x) = 2/√π · e^{-x²} · Σ 2ⁿ x^{2n+1} / (1·3·…·(2n+1))`, whose terms
//!    are all positive (no cancellation), so it is accurate to a few ulps of
//!    `f64`, far below the required 1e-7 relative error.
//! 4. **Statements.** Loops of every [`ForKind`](crate::tir::ForKind) run serially. A block binds
//!    its iteration variables to their values, allocates its
//!    `alloc_buffers`, runs `init` when every reduce variable is at its
//!    domain's minimum, then its body. `Allocate` and `alloc_buffers` give
//!    zero-filled scratch for their scope.
//! 5. **Safety.** Every buffer access is bounds-checked (an out-of-bounds
//!    index is an `Err` naming the buffer and the indices), integer division
//!    by zero is an `Err`, and scratch larger than [`MAX_SCRATCH_ELEMENTS`]
//!    is refused. The interpreter never panics on any input.

use super::buffer::Buffer;
use super::half_float;
use super::prim_func::{PrimFunc, PrimFuncParam};
use super::stmt::{Block, IterKind, Stmt};
use crate::ir::prim_expr::{floor_div, floor_mod, PrimExpr, PrimExprKind, TirVar};
use relax_runtime::data_type::TypeCode;
use relax_runtime::native::{KernelBuffer, NativeKernel, NativeLibrary};
use relax_runtime::{DataType, Tensor};
use std::collections::HashMap;
use std::sync::Arc;

/// The intrinsic calls the interpreter evaluates (see the module docs).
pub const INTRINSICS: &[&str] = &[
    "exp",
    "exp2",
    "exp10",
    "log",
    "log2",
    "log10",
    "log1p",
    "sqrt",
    "rsqrt",
    "tanh",
    "sigmoid",
    "erf",
    "pow",
    "fabs",
    "abs",
    "floor",
    "ceil",
    "round",
    "nearbyint",
    "trunc",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "atan2",
    "sinh",
    "cosh",
    "asinh",
    "acosh",
    "atanh",
    "fmod",
    "if_then_else",
    "isnan",
    "isinf",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_not",
    "shift_left",
    "shift_right",
    "truncdiv",
    "truncmod",
    "dpbusd",
    "dpbf16ps",
    "reinterpret",
    "prefetch",
    "address_of",
];

/// The largest scratch buffer (`Allocate`, `alloc_buffers`) the interpreter
/// creates, in elements.
pub const MAX_SCRATCH_ELEMENTS: i64 = 1 << 28;

/// Runs `func` on `inputs`, writing `outputs` (the buffer parameters in
/// order: inputs then outputs); `scalars` are the scalar parameters in
/// order. See the module docs for the checks made.
pub fn run(
    func: &PrimFunc,
    inputs: &[&Tensor],
    outputs: &mut [Tensor],
    scalars: &[i64],
) -> Result<(), String> {
    let expected = func.buffers().count();
    if expected != inputs.len() + outputs.len() {
        return Err(format!(
            "expected {expected} buffer arguments, found {} ({} inputs and {} outputs)",
            inputs.len() + outputs.len(),
            inputs.len(),
            outputs.len()
        ));
    }
    let mut args: Vec<KernelBuffer<'_>> = inputs
        .iter()
        .map(|t| KernelBuffer::Read(t))
        .chain(outputs.iter_mut().map(KernelBuffer::Write))
        .collect();
    run_buffers(func, &mut args, scalars)
}

/// Runs `func` on its buffer arguments in parameter order, writing back the
/// [`KernelBuffer::Write`] ones (outputs, and arguments written in place by
/// `call_tir_inplace`); `scalars` are the scalar parameters in order.
pub fn run_buffers(
    func: &PrimFunc,
    args: &mut [KernelBuffer<'_>],
    scalars: &[i64],
) -> Result<(), String> {
    let buffers: Vec<&Buffer> = func.buffers().collect();
    if buffers.len() != args.len() {
        return Err(format!(
            "expected {} buffer arguments, found {}",
            buffers.len(),
            args.len()
        ));
    }
    let scalar_params: Vec<&TirVar> = func
        .params
        .iter()
        .filter_map(|p| match p {
            PrimFuncParam::Scalar(v) => Some(v),
            PrimFuncParam::Buffer(_) => None,
        })
        .collect();
    if scalar_params.len() != scalars.len() {
        return Err(format!(
            "expected {} scalar arguments, found {}",
            scalar_params.len(),
            scalars.len()
        ));
    }
    let mut m = Machine::default();
    for (v, &x) in scalar_params.iter().zip(scalars) {
        m.vars.insert(v.id(), Val::I(wrap_int(x, v.dtype())));
    }
    let actual: Vec<&Tensor> = args.iter().map(KernelBuffer::tensor).collect();
    // First sight: a bare symbolic dim takes the actual extent.
    for (b, t) in buffers.iter().zip(&actual) {
        if b.shape().len() != t.ndim() {
            return Err(format!(
                "buffer {} has {} dimensions, its argument has shape {}",
                b.name(),
                b.shape().len(),
                relax_runtime::tensor::fmt_shape(t.shape())
            ));
        }
        for (d, &n) in b.shape().iter().zip(t.shape()) {
            if let Some(v) = d.as_var() {
                m.vars.entry(v.id()).or_insert(Val::I(n));
            }
        }
    }
    for (b, t) in buffers.iter().zip(&actual) {
        if b.dtype() != t.dtype() {
            return Err(format!(
                "buffer {} has dtype {}, its argument has dtype {}",
                b.name(),
                b.dtype(),
                t.dtype()
            ));
        }
        let shape = m.shape_of(b)?;
        if shape != t.shape() {
            return Err(format!(
                "buffer {} has shape {}, its argument has shape {}",
                b.name(),
                relax_runtime::tensor::fmt_shape(&shape),
                relax_runtime::tensor::fmt_shape(t.shape())
            ));
        }
        let data = decode(t)?;
        let storage = m.storage(b, shape, data)?;
        m.buffers.insert(b.id(), storage);
    }
    drop(actual);
    m.stmt(&func.body)?;
    for (b, arg) in buffers.iter().zip(args.iter_mut()) {
        let KernelBuffer::Write(t) = arg else {
            continue;
        };
        let Some(s) = m.buffers.get(&b.id()) else {
            return Err(format!("buffer {} disappeared during the run", b.name()));
        };
        let dtype = t.dtype();
        let bytes = t
            .bytes_mut()
            .ok_or_else(|| format!("the output for buffer {} is shared", b.name()))?;
        encode(&s.data, dtype, bytes)?;
    }
    Ok(())
}

/// A scalar value: integers and bools as `I`, floats as `F`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Val {
    I(i64),
    F(f64),
}

impl Val {
    fn as_f64(self) -> f64 {
        match self {
            Val::I(i) => i as f64,
            Val::F(f) => f,
        }
    }
    fn truthy(self) -> bool {
        match self {
            Val::I(i) => i != 0,
            Val::F(f) => f != 0.0,
        }
    }
}

/// The memory behind one buffer.
struct Storage {
    name: String,
    dtype: DataType,
    shape: Vec<i64>,
    /// Element strides; row-major unless the buffer declares strides.
    strides: Vec<i64>,
    data: Vec<Val>,
}

impl Storage {
    /// The flat offset of `idx`, bounds-checked.
    fn offset(&self, idx: &[i64]) -> Result<usize, String> {
        let oob = || {
            let idx: Vec<String> = idx.iter().map(|i| i.to_string()).collect();
            format!(
                "out-of-bounds access {}[{}] (shape {})",
                self.name,
                idx.join(", "),
                relax_runtime::tensor::fmt_shape(&self.shape)
            )
        };
        if idx.len() != self.shape.len() {
            return Err(format!(
                "{} indices for buffer {} of {} dimensions",
                idx.len(),
                self.name,
                self.shape.len()
            ));
        }
        let mut off: i64 = 0;
        for ((&i, &d), &s) in idx.iter().zip(&self.shape).zip(&self.strides) {
            if i < 0 || i >= d {
                return Err(oob());
            }
            off = i
                .checked_mul(s)
                .and_then(|x| x.checked_add(off))
                .ok_or_else(oob)?;
        }
        match usize::try_from(off) {
            Ok(o) if o < self.data.len() => Ok(o),
            _ => Err(oob()),
        }
    }
}

#[derive(Default)]
struct Machine {
    /// Variable id → value.
    vars: HashMap<u64, Val>,
    /// Buffer id → memory.
    buffers: HashMap<u64, Storage>,
}

impl Machine {
    fn int(&self, e: &PrimExpr) -> Result<i64, String> {
        match self.eval(e)? {
            Val::I(i) => Ok(i),
            Val::F(_) => Err(format!("expected an integer, found the float `{e}`")),
        }
    }

    fn shape_of(&self, b: &Buffer) -> Result<Vec<i64>, String> {
        b.shape()
            .iter()
            .map(|d| {
                self.int(d)
                    .map_err(|e| format!("shape of buffer {}: {e}", b.name()))
            })
            .collect()
    }

    /// Storage for `b` with `shape` and the given elements.
    fn storage(&self, b: &Buffer, shape: Vec<i64>, data: Vec<Val>) -> Result<Storage, String> {
        let strides = if b.strides().is_empty() {
            let mut s = vec![1i64; shape.len()];
            for i in (0..shape.len().saturating_sub(1)).rev() {
                s[i] = s[i + 1].saturating_mul(shape[i + 1]);
            }
            s
        } else {
            b.strides()
                .iter()
                .map(|s| self.int(s))
                .collect::<Result<_, _>>()?
        };
        if strides.len() != shape.len() {
            return Err(format!(
                "buffer {} has {} strides for {} dimensions",
                b.name(),
                strides.len(),
                shape.len()
            ));
        }
        Ok(Storage {
            name: b.name().to_string(),
            dtype: b.dtype(),
            shape,
            strides,
            data,
        })
    }

    /// Zero-filled scratch for `b`.
    fn scratch(&self, b: &Buffer) -> Result<Storage, String> {
        let shape = self.shape_of(b)?;
        let mut n: i64 = 1;
        for &d in &shape {
            if d < 0 {
                return Err(format!("buffer {} has a negative extent {d}", b.name()));
            }
            n = n.saturating_mul(d);
        }
        if n > MAX_SCRATCH_ELEMENTS {
            return Err(format!(
                "buffer {} of {n} elements is larger than the interpreter allows ({MAX_SCRATCH_ELEMENTS})",
                b.name()
            ));
        }
        let zero = if b.dtype().is_float() {
            Val::F(0.0)
        } else {
            Val::I(0)
        };
        // Reserved fallibly: memory the system refuses is an error, not an
        // abort.
        let mut data = Vec::new();
        data.try_reserve_exact(n as usize).map_err(|_| {
            format!(
                "cannot allocate buffer {} of {n} elements: the system has no memory for it",
                b.name()
            )
        })?;
        data.resize(n as usize, zero);
        self.storage(b, shape, data)
    }

    /// Runs `f` with `b` allocated, then frees it (restoring a buffer of the
    /// same identity from an enclosing scope, which re-entry can create).
    fn with_scratch(
        &mut self,
        bufs: &[Buffer],
        f: impl FnOnce(&mut Self) -> Result<(), String>,
    ) -> Result<(), String> {
        let mut saved = Vec::with_capacity(bufs.len());
        for b in bufs {
            let s = self.scratch(b)?;
            saved.push((b.id(), self.buffers.insert(b.id(), s)));
        }
        let r = f(self);
        for (id, old) in saved.into_iter().rev() {
            match old {
                Some(s) => self.buffers.insert(id, s),
                None => self.buffers.remove(&id),
            };
        }
        r
    }

    /// Runs `f` with `v` bound to `x`, restoring any outer binding after.
    fn with_var(
        &mut self,
        v: &TirVar,
        x: Val,
        f: impl FnOnce(&mut Self) -> Result<(), String>,
    ) -> Result<(), String> {
        let old = self.vars.insert(v.id(), x);
        let r = f(self);
        match old {
            Some(o) => self.vars.insert(v.id(), o),
            None => self.vars.remove(&v.id()),
        };
        r
    }

    // ---- statements -----------------------------------------------------

    fn stmt(&mut self, s: &Stmt) -> Result<(), String> {
        match s {
            Stmt::For {
                loop_var,
                min,
                extent,
                body,
                ..
            } => {
                let lo = self.int(min)?;
                let n = self.int(extent)?;
                let old = self.vars.get(&loop_var.id()).copied();
                let mut r = Ok(());
                for k in 0..n.max(0) {
                    let i = lo
                        .checked_add(k)
                        .ok_or_else(|| format!("loop {loop_var} overflows"))?;
                    self.vars
                        .insert(loop_var.id(), Val::I(wrap_int(i, loop_var.dtype())));
                    r = self.stmt(body);
                    if r.is_err() {
                        break;
                    }
                }
                match old {
                    Some(o) => self.vars.insert(loop_var.id(), o),
                    None => self.vars.remove(&loop_var.id()),
                };
                r
            }
            Stmt::Block(b) => self.block(b),
            Stmt::BufferStore {
                buffer,
                value,
                indices,
            } => {
                let v = self.eval(value)?;
                let idx = indices
                    .iter()
                    .map(|i| self.int(i))
                    .collect::<Result<Vec<_>, _>>()?;
                let s = self
                    .buffers
                    .get_mut(&buffer.id())
                    .ok_or_else(|| format!("buffer {} is not allocated here", buffer.name()))?;
                let off = s.offset(&idx)?;
                s.data[off] = convert(v, s.dtype);
                Ok(())
            }
            Stmt::Allocate { buffer, body } => {
                self.with_scratch(std::slice::from_ref(buffer), |m| m.stmt(body))
            }
            Stmt::IfThenElse {
                cond,
                then_case,
                else_case,
            } => {
                if self.eval(cond)?.truthy() {
                    self.stmt(then_case)
                } else if let Some(e) = else_case {
                    self.stmt(e)
                } else {
                    Ok(())
                }
            }
            Stmt::LetStmt { var, value, body } => {
                let v = convert_from(self.eval(value)?, value.dtype(), var.dtype());
                self.with_var(var, v, |m| m.stmt(body))
            }
            Stmt::Evaluate(e) => self.eval(e).map(|_| ()),
            Stmt::Seq(items) => items.iter().try_for_each(|s| self.stmt(s)),
        }
    }

    fn block(&mut self, b: &Block) -> Result<(), String> {
        if b.iter_vars.len() != b.iter_values.len() {
            return Err(format!(
                "block {} has {} iteration variables and {} values",
                b.name,
                b.iter_vars.len(),
                b.iter_values.len()
            ));
        }
        let values = b
            .iter_values
            .iter()
            .zip(&b.iter_vars)
            .map(|(e, iv)| Ok(convert(self.eval(e)?, iv.var.dtype())))
            .collect::<Result<Vec<_>, String>>()?;
        let mut first = true;
        for (iv, v) in b.iter_vars.iter().zip(&values) {
            if iv.kind == IterKind::Reduce {
                let min = self.int(&iv.min)?;
                first &= *v == Val::I(min);
            }
        }
        let saved: Vec<(u64, Option<Val>)> = b
            .iter_vars
            .iter()
            .zip(&values)
            .map(|(iv, v)| (iv.var.id(), self.vars.insert(iv.var.id(), *v)))
            .collect();
        let r = self.with_scratch(&b.alloc_buffers, |m| {
            if first {
                if let Some(init) = &b.init {
                    m.stmt(init)?;
                }
            }
            m.stmt(&b.body)
        });
        for (id, old) in saved.into_iter().rev() {
            match old {
                Some(o) => self.vars.insert(id, o),
                None => self.vars.remove(&id),
            };
        }
        r.map_err(|e| {
            if e.contains(" in block ") {
                e
            } else {
                format!("{e} in block {}", b.name)
            }
        })
    }

    // ---- expressions ----------------------------------------------------

    fn eval(&self, e: &PrimExpr) -> Result<Val, String> {
        use PrimExprKind as K;
        let dt = e.dtype();
        let arith = |a: &PrimExpr,
                     b: &PrimExpr,
                     fi: fn(i64, i64) -> Option<i64>,
                     ff: fn(f64, f64) -> f64|
         -> Result<Val, String> {
            let (x, y) = (self.eval(a)?, self.eval(b)?);
            Ok(if dt.is_float() {
                Val::F(round_float(ff(x.as_f64(), y.as_f64()), dt))
            } else {
                match (x, y) {
                    (Val::I(p), Val::I(q)) => Val::I(wrap_int(
                        fi(p, q).ok_or_else(|| format!("division by zero in `{e}`"))?,
                        dt,
                    )),
                    _ => return Err(format!("mixed integer and float operands in `{e}`")),
                }
            })
        };
        let compare = |a: &PrimExpr, b: &PrimExpr, f: fn(std::cmp::Ordering) -> bool| {
            let (x, y) = (self.eval(a)?, self.eval(b)?);
            let ord = match (x, y) {
                (Val::I(p), Val::I(q)) => Some(p.cmp(&q)),
                _ => x.as_f64().partial_cmp(&y.as_f64()),
            };
            // Every comparison with NaN is false, except `!=`.
            Ok::<Val, String>(Val::I(ord.is_some_and(f) as i64))
        };
        Ok(match e.kind() {
            K::Var(v) => *self
                .vars
                .get(&v.id())
                .ok_or_else(|| format!("variable `{v}` has no value"))?,
            K::IntImm(i) => {
                if dt.is_float() {
                    Val::F(*i as f64)
                } else {
                    Val::I(*i)
                }
            }
            K::FloatImm(f) => {
                if dt.is_float() {
                    Val::F(round_float(*f, dt))
                } else {
                    Val::I(*f as i64)
                }
            }
            K::Add(a, b) => arith(a, b, |p, q| Some(p.wrapping_add(q)), |p, q| p + q)?,
            K::Sub(a, b) => arith(a, b, |p, q| Some(p.wrapping_sub(q)), |p, q| p - q)?,
            K::Mul(a, b) => arith(a, b, |p, q| Some(p.wrapping_mul(q)), |p, q| p * q)?,
            K::Div(a, b) => arith(
                a,
                b,
                |p, q| floor_div(p, q).or_else(|| (q == -1).then(|| p.wrapping_neg())),
                |p, q| p / q,
            )?,
            K::Mod(a, b) => arith(
                a,
                b,
                |p, q| floor_mod(p, q).or_else(|| (q == -1).then_some(0)),
                |p, q| p - (p / q).floor() * q,
            )?,
            K::Min(a, b) => arith(a, b, |p, q| Some(p.min(q)), f64::min)?,
            K::Max(a, b) => arith(a, b, |p, q| Some(p.max(q)), f64::max)?,
            K::Eq(a, b) => compare(a, b, |o| o.is_eq())?,
            K::Ne(a, b) => {
                let Val::I(eq) = compare(a, b, |o| o.is_eq())? else {
                    return Err(format!("bad comparison `{e}`"));
                };
                Val::I(1 - eq)
            }
            K::Lt(a, b) => compare(a, b, |o| o.is_lt())?,
            K::Le(a, b) => compare(a, b, |o| o.is_le())?,
            K::Gt(a, b) => compare(a, b, |o| o.is_gt())?,
            K::Ge(a, b) => compare(a, b, |o| o.is_ge())?,
            K::And(a, b) => Val::I((self.eval(a)?.truthy() && self.eval(b)?.truthy()) as i64),
            K::Or(a, b) => Val::I((self.eval(a)?.truthy() || self.eval(b)?.truthy()) as i64),
            K::Not(a) => Val::I(!self.eval(a)?.truthy() as i64),
            K::Select(c, t, f) => {
                let side = if self.eval(c)?.truthy() { t } else { f };
                convert_from(self.eval(side)?, side.dtype(), dt)
            }
            K::Cast(a) => convert_from(self.eval(a)?, a.dtype(), dt),
            K::BufferLoad(b, idx) => {
                let idx = idx
                    .iter()
                    .map(|i| self.int(i))
                    .collect::<Result<Vec<_>, _>>()?;
                let s = self
                    .buffers
                    .get(&b.id())
                    .ok_or_else(|| format!("buffer {} is not allocated here", b.name()))?;
                s.data[s.offset(&idx)?]
            }
            K::Call(name, args) => self.call(e, name, args)?,
        })
    }

    fn call(&self, e: &PrimExpr, name: &str, args: &[PrimExpr]) -> Result<Val, String> {
        let dt = e.dtype();
        let arity = |n: usize| {
            if args.len() == n {
                Ok(())
            } else {
                Err(format!(
                    "T.{name} takes {n} argument{}, `{e}` has {}",
                    if n == 1 { "" } else { "s" },
                    args.len()
                ))
            }
        };
        if name == "if_then_else" {
            arity(3)?;
            let side = if self.eval(&args[0])?.truthy() {
                &args[1]
            } else {
                &args[2]
            };
            return Ok(convert_from(self.eval(side)?, side.dtype(), dt));
        }
        if name == "abs" && !dt.is_float() {
            arity(1)?;
            return match self.eval(&args[0])? {
                Val::I(i) => Ok(Val::I(wrap_int(i.wrapping_abs(), dt))),
                Val::F(f) => Ok(convert(Val::F(f.abs()), dt)),
            };
        }
        if matches!(name, "isnan" | "isinf") {
            arity(1)?;
            let x = self.eval(&args[0])?.as_f64();
            let r = if name == "isnan" {
                x.is_nan()
            } else {
                x.is_infinite()
            };
            return Ok(Val::I(r as i64));
        }
        if name == "dpbusd" {
            return self.dpbusd(e, args);
        }
        if name == "dpbf16ps" {
            return self.dpbf16ps(e, args);
        }
        if name == "reinterpret" {
            return self.reinterpret(e, args);
        }
        // A cache hint: nothing to do, and its address is never read.
        if name == "prefetch" {
            arity(4)?;
            return Ok(Val::I(0));
        }
        if name == "address_of" {
            return Err("`T.address_of` outside `T.prefetch`".into());
        }
        if let Some(v) = self.integer_intrinsic(e, name, args)? {
            return Ok(v);
        }
        let unary: Option<fn(f64) -> f64> = match name {
            "exp" => Some(f64::exp),
            "exp2" => Some(f64::exp2),
            "exp10" => Some(|x| 10f64.powf(x)),
            "log" => Some(f64::ln),
            "log2" => Some(f64::log2),
            "log10" => Some(f64::log10),
            "log1p" => Some(f64::ln_1p),
            "sqrt" => Some(f64::sqrt),
            "rsqrt" => Some(|x| 1.0 / x.sqrt()),
            "tanh" => Some(f64::tanh),
            "sigmoid" => Some(|x| 1.0 / (1.0 + (-x).exp())),
            "erf" => Some(erf),
            "fabs" | "abs" => Some(f64::abs),
            "floor" => Some(f64::floor),
            "ceil" => Some(f64::ceil),
            "round" | "nearbyint" => Some(f64::round_ties_even),
            "trunc" => Some(f64::trunc),
            "sin" => Some(f64::sin),
            "cos" => Some(f64::cos),
            "tan" => Some(f64::tan),
            "asin" => Some(f64::asin),
            "acos" => Some(f64::acos),
            "atan" => Some(f64::atan),
            "sinh" => Some(f64::sinh),
            "cosh" => Some(f64::cosh),
            "asinh" => Some(f64::asinh),
            "acosh" => Some(f64::acosh),
            "atanh" => Some(f64::atanh),
            _ => None,
        };
        if let Some(f) = unary {
            arity(1)?;
            let x = self.eval(&args[0])?.as_f64();
            return Ok(float_result(f(x), dt));
        }
        if name == "pow" && dt.is_integer() && !dt.is_bool() {
            arity(2)?;
            let x = self.int(&args[0])?;
            let e = self.int(&args[1])?;
            return Ok(convert(Val::I(int_pow(x, e, dt.is_int())), dt));
        }
        let binary: Option<fn(f64, f64) -> f64> = match name {
            "pow" => Some(f64::powf),
            "atan2" => Some(f64::atan2),
            "fmod" => Some(|x, y| x % y),
            _ => None,
        };
        if let Some(f) = binary {
            arity(2)?;
            let x = self.eval(&args[0])?.as_f64();
            let y = self.eval(&args[1])?.as_f64();
            return Ok(float_result(f(x, y), dt));
        }
        Err(format!(
            "the interpreter does not know the intrinsic T.{name} (it knows {})",
            INTRINSICS.join(", ")
        ))
    }
}

impl Machine {
    /// `T.dpbusd(acc, a, b)` on `int32`: `acc` plus the dot product of the
    /// four bytes of `a`, unsigned, with the four bytes of `b`, signed
    /// (x86's `vpdpbusd`, one lane), wrapping.
    fn dpbusd(&self, e: &PrimExpr, args: &[PrimExpr]) -> Result<Val, String> {
        if args.len() != 3 || e.dtype() != DataType::i32() {
            return Err(format!(
                "T.dpbusd takes 3 int32 arguments and gives an int32, found `{e}`"
            ));
        }
        let mut vals = [0i32; 3];
        for (v, a) in vals.iter_mut().zip(args) {
            match convert(self.eval(a)?, DataType::i32()) {
                Val::I(i) => *v = i as i32,
                Val::F(_) => return Err(format!("T.dpbusd of a float in `{e}`")),
            }
        }
        Ok(Val::I(i64::from(dpbusd(vals[0], vals[1], vals[2]))))
    }

    /// The integer intrinsics: bitwise ops, shifts and truncating division,
    /// on integers of the call's dtype; `None` for another intrinsic.
    fn integer_intrinsic(
        &self,
        e: &PrimExpr,
        name: &str,
        args: &[PrimExpr],
    ) -> Result<Option<Val>, String> {
        let dt = e.dtype();
        let n = match name {
            "bitwise_not" => 1,
            "bitwise_and" | "bitwise_or" | "bitwise_xor" | "shift_left" | "shift_right"
            | "truncdiv" | "truncmod" => 2,
            _ => return Ok(None),
        };
        if args.len() != n || dt.is_float() {
            return Err(format!(
                "T.{name} takes {n} integer argument{}, found `{e}`",
                if n == 1 { "" } else { "s" }
            ));
        }
        let mut vals = Vec::with_capacity(n);
        for a in args {
            match convert(self.eval(a)?, dt) {
                Val::I(i) => vals.push(i),
                Val::F(_) => return Err(format!("T.{name} of a float in `{e}`")),
            }
        }
        let bits = i64::from(dt.bits());
        let r = match name {
            "bitwise_not" if dt.is_bool() => 1 - vals[0],
            "bitwise_not" => !vals[0],
            "bitwise_and" => vals[0] & vals[1],
            "bitwise_or" => vals[0] | vals[1],
            "bitwise_xor" => vals[0] ^ vals[1],
            "truncdiv" | "truncmod" => {
                let (x, k) = (vals[0], vals[1]);
                if k == 0 {
                    return Err(format!("division by zero in `{e}`"));
                }
                let div = name == "truncdiv";
                match (dt.is_uint(), div) {
                    (true, true) => ((x as u64) / (k as u64)) as i64,
                    (true, false) => ((x as u64) % (k as u64)) as i64,
                    (false, true) => x.wrapping_div(k),
                    (false, false) => x.wrapping_rem(k),
                }
            }
            _ => {
                let (x, k) = (vals[0], vals[1]);
                // A uint64 amount of 2^63 or more reads as negative: out of
                // range either way.
                let in_range = (0..bits).contains(&k);
                let left = name == "shift_left";
                match (in_range, left) {
                    (true, true) => x.wrapping_shl(k as u32),
                    (true, false) if dt.is_uint() => ((x as u64) >> k) as i64,
                    (true, false) => x >> k,
                    (false, false) if dt.is_int() && x < 0 => -1,
                    (false, _) => 0,
                }
            }
        };
        Ok(Some(Val::I(wrap_int(r, dt))))
    }
}

/// One lane of `vpdpbusd`: `acc + Σ_t u8(a, t) · i8(b, t)` over the four
/// bytes `t` of `a` and `b`, wrapping.
pub fn dpbusd(acc: i32, a: i32, b: i32) -> i32 {
    let (a, b) = (a.to_le_bytes(), b.to_le_bytes());
    (0..4).fold(acc, |s, t| {
        s.wrapping_add(i32::from(a[t]) * i32::from(b[t] as i8))
    })
}

/// `v` converted to `dtype` (a `Cast`): floats rounded to its precision
/// (half types to theirs), integers wrapped to its width (floats truncated
/// toward zero first), bools 0 or 1.
fn convert(v: Val, dtype: DataType) -> Val {
    if dtype.is_half() {
        return Val::F(half_float::round_to_half(v.as_f64(), dtype));
    }
    if dtype.is_float() {
        return Val::F(round_float(v.as_f64(), dtype));
    }
    if dtype.is_bool() {
        return Val::I(v.truthy() as i64);
    }
    match v {
        Val::I(i) => Val::I(wrap_int(i, dtype)),
        // `as` saturates and maps NaN to 0, never undefined.
        Val::F(f) => Val::I(wrap_int(f.trunc() as i64, dtype)),
    }
}

/// `v`, of dtype `from`, as `to`: unchanged when the dtypes agree (a half
/// expression keeps its `float32` value), else [`convert`]ed.
fn convert_from(v: Val, from: DataType, to: DataType) -> Val {
    if from == to {
        v
    } else {
        convert(v, to)
    }
}

/// The result `x` of a float operation of dtype `dtype` (an integer dtype
/// truncates it).
fn float_result(x: f64, dtype: DataType) -> Val {
    if dtype.is_float() {
        Val::F(round_float(x, dtype))
    } else {
        convert(Val::F(x), dtype)
    }
}

/// `x^e` on integers, wrapping (as the LLVM code generator's `pow` on
/// integers); a negative `e` of a signed type gives the truncated
/// reciprocal power (1 for `x == 1`, ±1 for `x == -1`, else 0).
fn int_pow(x: i64, e: i64, signed: bool) -> i64 {
    if signed && e < 0 {
        return match x {
            1 => 1,
            -1 if e % 2 != 0 => -1,
            -1 => 1,
            _ => 0,
        };
    }
    let (mut r, mut base, mut e) = (1i64, x, e as u64);
    while e != 0 {
        if e & 1 == 1 {
            r = r.wrapping_mul(base);
        }
        base = base.wrapping_mul(base);
        e >>= 1;
    }
    r
}

/// `x` rounded to the precision `dtype` computes in: `float64` as it is,
/// `float32` and the half types (computed in `float32`) to `f32`.
fn round_float(x: f64, dtype: DataType) -> f64 {
    match dtype.bits() {
        64 => x,
        _ => x as f32 as f64,
    }
}

/// `i` wrapped to the width of the integer type `dtype`.
fn wrap_int(i: i64, dtype: DataType) -> i64 {
    let bits = u32::from(dtype.bits());
    if dtype.is_bool() {
        return (i != 0) as i64;
    }
    if bits >= 64 || bits == 0 || dtype.is_float() {
        return i;
    }
    if dtype.is_uint() {
        i & ((1i64 << bits) - 1)
    } else {
        (i << (64 - bits)) >> (64 - bits)
    }
}

/// The error function (see the module docs for the method).
fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = x.abs();
    // erfc(6) < 3e-17: erf is ±1 in f64 from here on.
    if a >= 6.0 {
        return 1f64.copysign(x);
    }
    let x2 = a * a;
    let mut term = a;
    let mut sum = a;
    let mut n = 0.0;
    while term > sum * 1e-17 {
        n += 1.0;
        term *= 2.0 * x2 / (2.0 * n + 1.0);
        sum += term;
    }
    let r = 2.0 / std::f64::consts::PI.sqrt() * (-x2).exp() * sum;
    r.min(1.0).copysign(x)
}

/// The elements of `t` as values.
fn decode(t: &Tensor) -> Result<Vec<Val>, String> {
    let dt = t.dtype();
    if dt.lanes() != 1 || dt.is_handle() || (dt.is_float() && !matches!(dt.bits(), 16 | 32 | 64)) {
        return Err(format!("the interpreter does not support dtype {dt}"));
    }
    if dt.is_float() {
        return Ok(t.to_f64_vec().into_iter().map(Val::F).collect());
    }
    let w = dt.size_in_bytes();
    Ok(t.as_bytes()
        .chunks_exact(w.max(1))
        .map(|c| {
            let mut buf = [0u8; 8];
            buf[..c.len()].copy_from_slice(c);
            Val::I(wrap_int(i64::from_le_bytes(buf), dt))
        })
        .collect())
}

/// Writes `data` into `bytes` as elements of `dtype`.
fn encode(data: &[Val], dtype: DataType, bytes: &mut [u8]) -> Result<(), String> {
    let w = dtype.size_in_bytes();
    if w == 0 || bytes.len() != data.len() * w {
        return Err(format!(
            "an output of {} bytes cannot hold {} elements of {dtype}",
            bytes.len(),
            data.len()
        ));
    }
    for (v, out) in data.iter().zip(bytes.chunks_exact_mut(w)) {
        match (dtype.code(), dtype.bits()) {
            (TypeCode::Float, 64) => out.copy_from_slice(&v.as_f64().to_le_bytes()),
            (TypeCode::Float, 32) => out.copy_from_slice(&(v.as_f64() as f32).to_le_bytes()),
            (TypeCode::Float | TypeCode::BFloat, 16) => {
                out.copy_from_slice(&half_float::to_half_bits(v.as_f64(), dtype).to_le_bytes())
            }
            (TypeCode::Float | TypeCode::BFloat, _) | (TypeCode::Handle, _) => {
                return Err(format!("the interpreter does not support dtype {dtype}"))
            }
            _ => {
                let Val::I(i) = convert(*v, dtype) else {
                    return Err(format!("a float stored in an {dtype} buffer"));
                };
                out.copy_from_slice(&i.to_le_bytes()[..w]);
            }
        }
    }
    Ok(())
}

/// PrimFuncs run by the interpreter, as a [`NativeLibrary`]: the kernels of
/// `Target::interpreter()`.
#[derive(Clone, Default)]
pub struct InterpreterLibrary {
    funcs: HashMap<String, Arc<PrimFunc>>,
}

impl InterpreterLibrary {
    /// An empty library.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the kernel `symbol`.
    pub fn insert(&mut self, symbol: impl Into<String>, func: PrimFunc) {
        self.funcs.insert(symbol.into(), Arc::new(func));
    }

    /// Every PrimFunc of `module`, under its name in the module (the symbol
    /// `call_tir` calls) and, when it differs, its `global_symbol`.
    pub fn from_module(module: &crate::ir::IRModule) -> Self {
        let mut lib = InterpreterLibrary::new();
        for (gv, f) in module.functions() {
            if let crate::ir::module::BaseFunc::Prim(p) = f {
                let func = Arc::new(p.clone());
                if let Some(sym) = p
                    .attrs
                    .get(crate::ir::function::attr::GLOBAL_SYMBOL)
                    .and_then(|v| v.as_str())
                {
                    lib.funcs.insert(sym.to_string(), func.clone());
                }
                lib.funcs.insert(gv.name_hint().to_string(), func);
            }
        }
        lib
    }

    /// The symbols it holds, sorted.
    pub fn symbols(&self) -> Vec<&str> {
        let mut s: Vec<&str> = self.funcs.keys().map(String::as_str).collect();
        s.sort_unstable();
        s
    }
}

impl FromIterator<(String, PrimFunc)> for InterpreterLibrary {
    fn from_iter<I: IntoIterator<Item = (String, PrimFunc)>>(iter: I) -> Self {
        let mut lib = InterpreterLibrary::new();
        for (s, f) in iter {
            lib.insert(s, f);
        }
        lib
    }
}

/// One interpreted kernel.
struct InterpretedKernel {
    func: Arc<PrimFunc>,
}

impl InterpretedKernel {
    /// The scalar parameters among the whole scalar ABI the VM passes
    /// (`tir::abi`): they come first, then dims `run` reads off the
    /// tensors.
    fn scalar_params<'s>(&self, scalars: &'s [i64]) -> Result<&'s [i64], String> {
        let params = self
            .func
            .params
            .iter()
            .filter(|p| matches!(p, PrimFuncParam::Scalar(_)))
            .count();
        scalars.get(..params).ok_or_else(|| {
            format!(
                "{} scalars were passed for {params} scalar parameters",
                scalars.len()
            )
        })
    }
}

impl NativeKernel for InterpretedKernel {
    fn call(
        &self,
        inputs: &[&Tensor],
        outputs: &mut [Tensor],
        scalars: &[i64],
    ) -> Result<(), String> {
        run(&self.func, inputs, outputs, self.scalar_params(scalars)?)
    }

    fn call_buffers(
        &self,
        buffers: &mut [KernelBuffer<'_>],
        scalars: &[i64],
    ) -> Result<(), String> {
        run_buffers(&self.func, buffers, self.scalar_params(scalars)?)
    }
}

impl NativeLibrary for InterpreterLibrary {
    fn lookup(&self, symbol: &str) -> Option<Arc<dyn NativeKernel>> {
        let func = self.funcs.get(symbol)?.clone();
        Some(Arc::new(InterpretedKernel { func }))
    }

    fn describe(&self) -> String {
        "the loop-level interpreter".into()
    }
}

mod bit_intrinsics;
pub use bit_intrinsics::{dpbf16ps, reinterpretable};

#[cfg(test)]
mod tests;
