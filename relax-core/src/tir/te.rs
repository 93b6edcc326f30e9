//! A small tensor-expression (TE) layer: describe a computation tensor by
//! tensor, then lower it to a [`PrimFunc`](super::PrimFunc) with one
//! TensorIR block per stage (TVM's `te.placeholder` / `te.compute` /
//! `te.create_prim_func`).
//!
//! The representation:
//!
//! 1. A [`Tensor`] is an immutable, shared handle: a [`Buffer`] (name, shape
//!    and dtype; the buffer's id is the tensor's identity) and the
//!    [`Operation`] that produces it: a *placeholder* (an input, produced by
//!    nobody) or a *compute stage* (one value per index of its shape).
//! 2. A compute stage has one spatial axis variable per output dim and a
//!    [`ComputeBody`]: either a plain [`PrimExpr`] of those variables, or a
//!    [`Reduce`]: a commutative [`Combiner`] (sum, product, max, min) of a
//!    source expression over reduce axes made by [`reduce_axis`].
//! 3. Reading a tensor is an ordinary `BufferLoad` of its buffer, made by
//!    [`Tensor::at`]. While [`compute`] runs its closure, every `at` records
//!    the tensor read as an input of the stage being built (a thread-local
//!    stack, live only during the closure), so a stage knows the stages it
//!    depends on without a separate graph object.
//! 4. Shapes and index expressions are in the *caller's* symbolic variables
//!    (for `call_te`, those of the Relax function). Lowering renames them to
//!    variables of the PrimFunc's own, binds each from a buffer dim where it
//!    stands alone, and makes the others scalar parameters (see
//!    [`lower`](lower::create_prim_func)).
//!
//! Scalar semantics used by the stages (those of the loop-level
//! interpreter): `Div` is floor division on integers and true division on
//! floats, `Mod` floor modulo; [`div`] gives C division (truncating for
//! integers, as the kernels' `divide`). The float intrinsics used (`exp`,
//! `log`, `sqrt`, `rsqrt`, `tanh`, `sigmoid`, `erf`, `pow`, `fmod`, the
//! trigonometric and hyperbolic functions, `floor`, `round`, …) are each
//! computed in `f64` and rounded once; the integer ones (`bitwise_and`, …,
//! `shift_left`, `shift_right`) are exact. Float `max`/`min` are written with `Select`s so
//! that NaN propagates whatever the target's `max` does with it.
//!
//! 5. Half types (`float16`, `bfloat16`) compute in `float32` and round
//!    where they are stored ([`super::half_float`]). A stage that sums or
//!    multiplies a half-typed source (a matmul, a convolution, `sum`,
//!    softmax's denominator) is two stages: the reduction into a
//!    `float32` stage `{name}_acc` of the source cast to `float32`, and the
//!    stage itself, that accumulator cast to the half type. So a reduction
//!    rounds once, as the reference kernels (which accumulate in `float32`)
//!    do, not after every term. Max and min reductions are exact in the
//!    half type and stay one stage.

pub mod call_te;
pub mod lower;
#[cfg(test)]
mod tests;

pub use lower::{create_prim_func, LoweredFunc};

use super::buffer::Buffer;
use crate::ir::prim_expr::{PrimExpr, PrimExprKind, TirVar};
use relax_runtime::DataType;
use std::cell::RefCell;
use std::sync::Arc;

/// What produces a tensor.
#[derive(Clone, Debug)]
pub enum Operation {
    /// An input: its values come from outside.
    Placeholder,
    /// A stage computing every element of the tensor.
    Compute(ComputeOp),
}

/// A compute stage. See the module docs.
#[derive(Clone, Debug)]
pub struct ComputeOp {
    /// One spatial variable per output dim, ranging over `[0, dim)`.
    pub axis: Vec<TirVar>,
    /// The value at `axis`.
    pub body: ComputeBody,
    /// The tensors the body reads, each once, in order of first reading.
    pub inputs: Vec<Tensor>,
}

/// The value of a compute stage at one index.
#[derive(Clone, Debug)]
pub enum ComputeBody {
    /// A plain expression of the axis variables.
    Expr(PrimExpr),
    /// A reduction over reduce axes.
    Reduce(Reduce),
}

impl From<PrimExpr> for ComputeBody {
    fn from(e: PrimExpr) -> Self {
        ComputeBody::Expr(e)
    }
}

impl From<Reduce> for ComputeBody {
    fn from(r: Reduce) -> Self {
        ComputeBody::Reduce(r)
    }
}

impl ComputeBody {
    /// The dtype of the value.
    pub fn dtype(&self) -> DataType {
        match self {
            ComputeBody::Expr(e) => e.dtype(),
            ComputeBody::Reduce(r) => r.source.dtype(),
        }
    }
}

/// A commutative, associative combination with an identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Combiner {
    /// `a + b`, identity 0.
    Sum,
    /// `a * b`, identity 1.
    Prod,
    /// `max(a, b)` (NaN wins for floats), identity the lowest value.
    Max,
    /// `min(a, b)` (NaN wins for floats), identity the highest value.
    Min,
}

impl Combiner {
    /// The identity of the combination for `dtype`: 0, 1, or the lowest /
    /// highest value (`-inf`/`inf` for floats).
    pub fn identity(self, dtype: DataType) -> PrimExpr {
        match self {
            Combiner::Sum => zero(dtype),
            Combiner::Prod => one(dtype),
            Combiner::Max => lowest(dtype),
            Combiner::Min => highest(dtype),
        }
    }

    /// `acc ⊕ value`.
    pub fn combine(self, acc: PrimExpr, value: PrimExpr) -> PrimExpr {
        match self {
            Combiner::Sum => acc + value,
            Combiner::Prod => acc * value,
            Combiner::Max => maximum(acc, value),
            Combiner::Min => minimum(acc, value),
        }
    }
}

/// A reduce axis: a variable ranging over `[0, extent)`.
#[derive(Clone, Debug, PartialEq)]
pub struct ReduceAxis {
    var: TirVar,
    extent: PrimExpr,
}

impl ReduceAxis {
    /// The variable.
    pub fn var(&self) -> &TirVar {
        &self.var
    }
    /// The variable as an expression, for use in index expressions.
    pub fn to_expr(&self) -> PrimExpr {
        self.var.to_expr()
    }
    /// The number of values it takes.
    pub fn extent(&self) -> &PrimExpr {
        &self.extent
    }
}

/// A new reduce axis over `[0, extent)`. Its variable is `v_{name}` and the
/// loop over it is `name`, as TVM names them.
pub fn reduce_axis(extent: impl Into<PrimExpr>, name: &str) -> ReduceAxis {
    ReduceAxis {
        var: TirVar::new(format!("v_{name}")),
        extent: extent.into(),
    }
}

/// A reduction: `combiner` over `source` for every point of `axes`.
#[derive(Clone, Debug)]
pub struct Reduce {
    /// How values combine.
    pub combiner: Combiner,
    /// The value at one point of the reduce axes.
    pub source: PrimExpr,
    /// The axes reduced over (all of them at once).
    pub axes: Vec<ReduceAxis>,
}

/// `Σ source` over `axes`.
pub fn sum(source: PrimExpr, axes: &[ReduceAxis]) -> Reduce {
    reduce(Combiner::Sum, source, axes)
}

/// `Π source` over `axes`.
pub fn prod(source: PrimExpr, axes: &[ReduceAxis]) -> Reduce {
    reduce(Combiner::Prod, source, axes)
}

/// `max source` over `axes`.
pub fn max(source: PrimExpr, axes: &[ReduceAxis]) -> Reduce {
    reduce(Combiner::Max, source, axes)
}

/// `min source` over `axes`.
pub fn min(source: PrimExpr, axes: &[ReduceAxis]) -> Reduce {
    reduce(Combiner::Min, source, axes)
}

/// A reduction with any combiner.
pub fn reduce(combiner: Combiner, source: PrimExpr, axes: &[ReduceAxis]) -> Reduce {
    Reduce {
        combiner,
        source,
        axes: axes.to_vec(),
    }
}

struct TensorNode {
    buffer: Buffer,
    op: Operation,
}

/// A tensor of the TE layer. See the module docs.
#[derive(Clone)]
pub struct Tensor(Arc<TensorNode>);

impl std::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.0.op {
            Operation::Placeholder => "placeholder",
            Operation::Compute(_) => "compute",
        };
        write!(f, "Tensor({kind} {:?})", self.0.buffer)
    }
}

impl PartialEq for Tensor {
    fn eq(&self, other: &Self) -> bool {
        self.0.buffer == other.0.buffer
    }
}

impl Tensor {
    /// The buffer holding the tensor's values (its identity).
    pub fn buffer(&self) -> &Buffer {
        &self.0.buffer
    }
    /// The name.
    pub fn name(&self) -> &str {
        self.0.buffer.name()
    }
    /// The dims.
    pub fn shape(&self) -> &[PrimExpr] {
        self.0.buffer.shape()
    }
    /// The rank.
    pub fn ndim(&self) -> usize {
        self.0.buffer.shape().len()
    }
    /// The element type.
    pub fn dtype(&self) -> DataType {
        self.0.buffer.dtype()
    }
    /// What produces it.
    pub fn op(&self) -> &Operation {
        &self.0.op
    }
    /// Whether it is an input.
    pub fn is_placeholder(&self) -> bool {
        matches!(self.0.op, Operation::Placeholder)
    }

    /// The element at `indices` (one per dim): a `BufferLoad`. Inside a
    /// [`compute`] closure this also records the tensor as an input of the
    /// stage being built.
    pub fn at(&self, indices: &[PrimExpr]) -> PrimExpr {
        READS.with(|r| {
            if let Some(top) = r.borrow_mut().last_mut() {
                if !top.contains(self) {
                    top.push(self.clone());
                }
            }
        });
        PrimExpr::load(&self.0.buffer, indices.to_vec())
    }
}

thread_local! {
    /// One frame per `compute` closure running on this thread: the tensors
    /// it has read so far.
    static READS: RefCell<Vec<Vec<Tensor>>> = const { RefCell::new(Vec::new()) };
}

/// An input tensor.
pub fn placeholder(name: &str, shape: Vec<PrimExpr>, dtype: DataType) -> Tensor {
    Tensor(Arc::new(TensorNode {
        buffer: Buffer::new(name, shape, dtype),
        op: Operation::Placeholder,
    }))
}

/// A stage named `name` of the given shape whose element at `indices` is
/// `f(indices)`: a plain expression, or a reduction built with [`sum`],
/// [`max`], [`min`] or [`prod`]. The dims are simplified (symbolic dims
/// are taken to be non-negative), so `1 * n * 4` becomes `n * 4`.
pub fn compute<B: Into<ComputeBody>>(
    name: &str,
    shape: Vec<PrimExpr>,
    f: impl FnOnce(&[PrimExpr]) -> B,
) -> Tensor {
    compute_over("ax", name, shape, f)
}

/// A sum or product of a half type (`float16`, `bfloat16`): accumulated in
/// a `float32` stage `{name}_acc`, read by the stage `name` that rounds
/// each result to the half type once (module docs, item 5).
fn widened_reduction(
    prefix: &str,
    name: &str,
    shape: Vec<PrimExpr>,
    axis: Vec<TirVar>,
    r: &Reduce,
    inputs: Vec<Tensor>,
) -> Tensor {
    let dtype = r.source.dtype();
    let widened = ComputeBody::Reduce(Reduce {
        combiner: r.combiner,
        source: widen(&r.source),
        axes: r.axes.clone(),
    });
    let acc = Tensor(Arc::new(TensorNode {
        buffer: Buffer::new(format!("{name}_acc"), shape.clone(), DataType::f32()),
        op: Operation::Compute(ComputeOp {
            axis,
            body: widened,
            inputs,
        }),
    }));
    let axis: Vec<TirVar> = (0..shape.len())
        .map(|i| TirVar::new(format!("v_{prefix}{i}")))
        .collect();
    let indices: Vec<PrimExpr> = axis.iter().map(TirVar::to_expr).collect();
    let body = ComputeBody::Expr(PrimExpr::load(acc.buffer(), indices).cast(dtype));
    Tensor(Arc::new(TensorNode {
        buffer: Buffer::new(name, shape, dtype),
        op: Operation::Compute(ComputeOp {
            axis,
            body,
            inputs: vec![acc],
        }),
    }))
}

/// `e` as `float32`: a product of half values as the product of its
/// factors widened (the same value, since half arithmetic is `float32`'s),
/// so a matrix product keeps the `acc + x · y` form the schedules know.
fn widen(e: &PrimExpr) -> PrimExpr {
    match e.kind() {
        PrimExprKind::Mul(a, b) if e.dtype().is_half() => widen(a) * widen(b),
        _ => e.clone().cast(DataType::f32()),
    }
}

/// [`compute`] with the iteration variables named `{prefix}0`, `{prefix}1`,
/// … (`compute` names them `ax0`, … as TOPI's broadcasting stages do; a
/// stage written as TVM's `te.compute(shape, lambda *i: …)` has `i0`, …).
pub fn compute_over<B: Into<ComputeBody>>(
    prefix: &str,
    name: &str,
    shape: Vec<PrimExpr>,
    f: impl FnOnce(&[PrimExpr]) -> B,
) -> Tensor {
    let mut analyzer = crate::arith::Analyzer::new();
    for v in shape.iter().flat_map(PrimExpr::free_vars) {
        analyzer.mark_non_negative(&v);
    }
    let shape: Vec<PrimExpr> = shape.iter().map(|d| analyzer.simplify(d)).collect();
    let axis: Vec<TirVar> = (0..shape.len())
        .map(|i| TirVar::new(format!("v_{prefix}{i}")))
        .collect();
    let indices: Vec<PrimExpr> = axis.iter().map(TirVar::to_expr).collect();
    READS.with(|r| r.borrow_mut().push(Vec::new()));
    // The frame is popped even if `f` unwinds, so a panicking closure does
    // not leave a stale frame behind on this thread.
    struct Pop;
    impl Drop for Pop {
        fn drop(&mut self) {
            READS.with(|r| {
                r.borrow_mut().pop();
            });
        }
    }
    let guard = Pop;
    let body = f(&indices).into();
    let inputs = READS.with(|r| r.borrow().last().cloned().unwrap_or_default());
    drop(guard);
    let dtype = body.dtype();
    if let ComputeBody::Reduce(r) = &body {
        if dtype.is_half() && matches!(r.combiner, Combiner::Sum | Combiner::Prod) {
            return widened_reduction(prefix, name, shape, axis, r, inputs);
        }
    }
    Tensor(Arc::new(TensorNode {
        buffer: Buffer::new(name, shape, dtype),
        op: Operation::Compute(ComputeOp { axis, body, inputs }),
    }))
}

// ----- scalar helpers shared by the legalizations ------------------------

/// `0` of `dtype`.
pub fn zero(dtype: DataType) -> PrimExpr {
    constant(dtype, 0.0)
}

/// `1` of `dtype`.
pub fn one(dtype: DataType) -> PrimExpr {
    constant(dtype, 1.0)
}

/// The literal `value` of `dtype` (truncated for integer types).
pub fn constant(dtype: DataType, value: f64) -> PrimExpr {
    if dtype.is_float() {
        PrimExpr::float(dtype, value)
    } else if dtype.is_bool() {
        PrimExpr::bool(value != 0.0)
    } else {
        PrimExpr::int_of(dtype, value as i64)
    }
}

/// The lowest value of `dtype` (`-inf` for floats).
pub fn lowest(dtype: DataType) -> PrimExpr {
    if dtype.is_float() {
        PrimExpr::float(dtype, f64::NEG_INFINITY)
    } else if dtype.is_bool() {
        PrimExpr::bool(false)
    } else if dtype.is_uint() {
        PrimExpr::int_of(dtype, 0)
    } else {
        let bits = dtype.bits().clamp(1, 64) as u32;
        PrimExpr::int_of(dtype, i64::MIN >> (64 - bits))
    }
}

/// The highest value of `dtype` (`inf` for floats). For `uint64`, whose
/// maximum does not fit an `i64` literal, `i64::MAX`.
pub fn highest(dtype: DataType) -> PrimExpr {
    if dtype.is_float() {
        PrimExpr::float(dtype, f64::INFINITY)
    } else if dtype.is_bool() {
        PrimExpr::bool(true)
    } else if dtype.is_uint() {
        let bits = dtype.bits().clamp(1, 63) as u32;
        PrimExpr::int_of(dtype, ((1u64 << bits) - 1) as i64)
    } else {
        let bits = dtype.bits().clamp(1, 64) as u32;
        PrimExpr::int_of(dtype, i64::MAX >> (64 - bits))
    }
}

/// Whether `e` is NaN: `e != e` (always false for integers).
pub fn is_nan(e: &PrimExpr) -> PrimExpr {
    e.clone().ne_(e.clone())
}

/// `max(a, b)`; for floats NaN when either is NaN.
///
/// With a literal operand (not NaN) one comparison does: `b > a` is false
/// when `a` is NaN, and `!(b <= a)` is true when `b` is.
pub fn maximum(a: PrimExpr, b: PrimExpr) -> PrimExpr {
    if !a.dtype().is_float() {
        return a.max(b);
    }
    nan_propagating(a, b, PrimExpr::gt, PrimExpr::le)
}

/// `min(a, b)`; for floats NaN when either is NaN (one comparison with a
/// literal operand, as for [`maximum`]).
pub fn minimum(a: PrimExpr, b: PrimExpr) -> PrimExpr {
    if !a.dtype().is_float() {
        return a.min(b);
    }
    nan_propagating(a, b, PrimExpr::lt, PrimExpr::ge)
}

/// `b` where it `beats` `a` or is NaN, else `a` (`not_beaten` is the
/// comparison's complement on numbers): NaN when either is.
fn nan_propagating(
    a: PrimExpr,
    b: PrimExpr,
    beats: fn(PrimExpr, PrimExpr) -> PrimExpr,
    not_beaten: fn(PrimExpr, PrimExpr) -> PrimExpr,
) -> PrimExpr {
    let take_b = if is_number(&b) {
        beats(b.clone(), a.clone())
    } else if is_number(&a) {
        !not_beaten(b.clone(), a.clone())
    } else {
        // A NaN `a` is never beaten (every comparison with it is false),
        // so `a` stays unless `b` is NaN too: NaN either way.
        beats(b.clone(), a.clone()).or(is_nan(&b))
    };
    PrimExpr::select(take_b, b, a)
}

/// Whether `e` is a float literal other than NaN.
fn is_number(e: &PrimExpr) -> bool {
    matches!(e.kind(), PrimExprKind::FloatImm(v) if !v.is_nan())
}

/// `a / b` with C semantics: IEEE for floats (the `Div` node), truncating
/// toward zero for integers (floor division corrected by one when the
/// remainder is non-zero and the operands' signs differ).
pub fn div(a: PrimExpr, b: PrimExpr) -> PrimExpr {
    let dtype = a.dtype();
    if dtype.is_float() || dtype.is_uint() || dtype.is_bool() {
        return a.floordiv(b);
    }
    let q = a.clone().floordiv(b.clone());
    let r = a.clone().floormod(b.clone());
    let zero = PrimExpr::int_of(dtype, 0);
    let signs_differ = a.lt(zero.clone()).ne_(b.lt(zero.clone()));
    let fix = r.ne_(zero).and(signs_differ);
    PrimExpr::select(fix, q.clone() + PrimExpr::int_of(dtype, 1), q)
}

/// The intrinsic `name(x)` with `x`'s dtype (`exp`, `log`, `sqrt`, …).
pub fn unary(name: &str, x: PrimExpr) -> PrimExpr {
    PrimExpr::call(x.dtype(), name, vec![x])
}

/// Whether an expression reads a buffer (its value depends on data).
pub(crate) fn reads_buffer(e: &PrimExpr) -> bool {
    matches!(e.kind(), PrimExprKind::BufferLoad(..)) || e.children().into_iter().any(reads_buffer)
}
