//! `FakeQuantizationToInteger` (Relay's pass of that name): a float
//! `matmul` of two dequantized 8-bit tensors becomes an integer `matmul`
//! of the 8-bit tensors themselves, accumulated in `int32`, and one float
//! rescale.
//!
//! 1. The pattern (written with [`crate::dpl`]):
//!    `matmul(dequantize(xq, sx, zx), dequantize(wq, sw, zw))`, where `xq`
//!    and `wq` are `int8` or `uint8` tensors of rank at least 2, `sx` and
//!    `zx` are per tensor (scalars), and `sw`, `zw` are per tensor or per
//!    axis along `wq`'s last axis (the weight's output channel). Both
//!    dequantizes produce the same float type, which the matmul keeps (its
//!    `out_dtype` unset or that type).
//! 2. The replacement (see [`integer_matmul`]):
//!    `acc = matmul(xq, wq, out_dtype="int32")
//!         - zw · Σ_k xq[.., i, k]            (skipped when zw is a constant 0)
//!         - zx · Σ_k (wq[.., k, j] - zw)     (skipped when zx is a constant 0)`
//!    which is `Σ_k (xq - zx)(wq - zw)` exactly: expanding the product gives
//!    `Σ xq·wq - zw·Σ xq - zx·Σ wq + K·zx·zw`, and the last two terms are
//!    the one column sum `zx·Σ_k (wq - zw)`, so the inner length `K` may be
//!    symbolic. For a constant weight the column sum is a constant, folded
//!    once by `FoldConstant` (the build pipeline runs it). Then
//!    `astype(acc, float) · (sx · sw)`: the integer part is exact (8-bit
//!    operands; `int32` wraps, and the exact result fits), so only the
//!    final rescale rounds, and the result is within rounding of the float
//!    path `Σ_k ((xq - zx)·sx)·((wq - zw)·sw)`.
//! 3. Whatever consumed the float result (a bias `add`, a `quantize`) is
//!    unchanged. Anything else (wider integers, per-axis activation scales,
//!    rank-1 operands, mixed float types) is left as it is.
//!
//! The `int32` `matmul` of the raw 8-bit tensors is the form the VNNI
//! kernels take (`vpdpbusd`: `u8 × s8` into `i32`); the ONNX importer's
//! `MatMulInteger` builds the same form with [`integer_matmul`].

use super::Pass;
use crate::dpl::{is_op, rewrite_call, wildcard, Bindings, Match, Pattern};
use crate::ir::{AttrValue, Attrs, Call, Expr, ExprKind, IRModule, TensorStructInfo};
use crate::op::infer::{attr_dtype, attr_int};
use relax_runtime::{DataType, Error};

/// The pass. See the module docs.
#[derive(Clone, Copy, Debug, Default)]
pub struct FakeQuantizationToInteger;

impl Pass for FakeQuantizationToInteger {
    fn name(&self) -> &str {
        "FakeQuantizationToInteger"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        let rule = MatmulRule::new()?;
        let mut out = module.clone();
        for (gv, f) in module.functions() {
            let Some(func) = f.as_relax() else { continue };
            // The dequantize calls are read through the function's bindings
            // (a match records the variables); the rewrite replaces only
            // matmul bindings, so these stay valid through its rounds.
            let bindings = Bindings::of_function(func);
            let new = rewrite_call(
                &rule.pattern,
                |orig, m| {
                    rule.rewrite(orig, m, &bindings)
                        .unwrap_or_else(|| orig.clone())
                },
                func,
            )?;
            out.add(gv.clone(), new);
        }
        Ok(out)
    }
}

/// The matmul pattern and the sub-patterns the rewrite reads.
struct MatmulRule {
    pattern: Pattern,
    x: Pattern,
    w: Pattern,
}

impl MatmulRule {
    fn new() -> Result<MatmulRule, Error> {
        let deq = |e: &Pattern| -> Result<Pattern, Error> {
            Ok(is_op("relax.dequantize")?.call([e.clone(), wildcard(), wildcard()]))
        };
        let x = deq(&wildcard())?;
        let w = deq(&wildcard())?;
        let pattern = is_op("relax.matmul")?.call([x.clone(), w.clone()]);
        Ok(MatmulRule { pattern, x, w })
    }

    /// The integer form of a match (module docs, item 2), or `None` when
    /// the match is not one this pass turns into integers.
    fn rewrite(&self, orig: &Expr, m: &Match, bindings: &Bindings) -> Option<Expr> {
        let (mm, x, w) = (
            orig.as_call()?,
            call_of(m.get(&self.x)?, bindings)?,
            call_of(m.get(&self.w)?, bindings)?,
        );
        if x.args.len() != 3 || w.args.len() != 3 {
            return None;
        }
        let (fx, fw) = (dequantized_type(x)?, dequantized_type(w)?);
        let mm_out = attr_dtype(mm, "out_dtype");
        if fx != fw || !(mm_out.is_void() || mm_out == fx) {
            return None;
        }
        let (xq, sx, zx) = (&x.args[0], &x.args[1], &x.args[2]);
        let (wq, sw, zw) = (&w.args[0], &w.args[1], &w.args[2]);
        let (xt, wt) = (eight_bit(xq)?, eight_bit(wq)?);
        // The activation: one scale and zero point.
        if rank(sx)? != 0 || rank(zx)? != 0 {
            return None;
        }
        // The weight: per tensor, or per axis along its last axis.
        if rank(sw)? > 0 || rank(zw)? > 0 {
            let axis = attr_int(w, "axis").unwrap_or(-1);
            if axis != -1 && axis != i64::from(wt.ndim) - 1 {
                return None;
            }
        }
        if xt.ndim < 2 || wt.ndim < 2 {
            return None;
        }
        let (zx, zw) = (int32_zero_point(zx)?, int32_zero_point(zw)?);
        let mut nest = |op: &str, args: Vec<Expr>, attrs: Attrs| Ok(Expr::call_op(op, args, attrs));
        let acc = integer_matmul(&mut nest, xq.clone(), zx, wq.clone(), zw).ok()?;
        let mut scale = Expr::call_op("relax.multiply", vec![sx.clone(), sw.clone()], Attrs::new());
        if tensor(sx)?.dtype != fx {
            scale = astype(scale, fx);
        }
        Some(Expr::call_op(
            "relax.multiply",
            vec![astype(acc, fx), scale],
            Attrs::new(),
        ))
    }
}

/// The call `e` is, or the call bound to the variable `e`.
fn call_of<'a>(e: &'a Expr, bindings: &'a Bindings) -> Option<&'a Call> {
    match e.as_var() {
        Some(v) => bindings.value(v)?.as_call(),
        None => e.as_call(),
    }
}

/// The float type a `dequantize` call produces (its `out_dtype`, default
/// `float32`).
fn dequantized_type(call: &Call) -> Option<DataType> {
    let out = attr_dtype(call, "out_dtype");
    let out = if out.is_void() { DataType::f32() } else { out };
    out.is_float().then_some(out)
}

/// `e`'s tensor StructInfo, if known.
fn tensor(e: &Expr) -> Option<&TensorStructInfo> {
    e.struct_info()?.as_tensor()
}

/// `e`'s rank, if known.
fn rank(e: &Expr) -> Option<i32> {
    let t = tensor(e)?;
    (!t.is_unknown_ndim()).then_some(t.ndim)
}

/// `e`'s StructInfo if it is an `int8` or `uint8` tensor of known rank.
fn eight_bit(e: &Expr) -> Option<&TensorStructInfo> {
    let t = tensor(e)?;
    let d = t.dtype;
    (d.is_integer() && !d.is_bool() && d.bits() == 8 && !t.is_unknown_ndim()).then_some(t)
}

/// `astype(e, dtype)`, as a nested call.
fn astype(e: Expr, dtype: DataType) -> Expr {
    Expr::call_op(
        "relax.astype",
        vec![e],
        Attrs::from_pairs([("dtype", AttrValue::DataType(dtype))]),
    )
}

/// A zero point in `int32`: `None` for a constant 0 (its correction
/// vanishes), a constant converted now, else an `astype` (outer `None`
/// when a constant cannot be converted).
fn int32_zero_point(e: &Expr) -> Option<Option<Expr>> {
    if is_constant_zero(e) {
        return Some(None);
    }
    Some(Some(match e.kind() {
        ExprKind::Constant(t) => Expr::constant(t.astype(DataType::i32()).ok()?),
        _ => astype(e.clone(), DataType::i32()),
    }))
}

/// Whether `e` is a constant whose elements are all 0 (a zero point whose
/// correction term vanishes).
pub fn is_constant_zero(e: &Expr) -> bool {
    match e.kind() {
        ExprKind::Constant(t) => t.to_f64_vec().iter().all(|&v| v == 0.0),
        _ => false,
    }
}

/// How [`integer_matmul`] makes each call: the pass nests them (the
/// rewrite normalizes the result into bindings), the ONNX importer emits
/// them (and folds those on constants).
pub type MakeCall<'a> = dyn FnMut(&str, Vec<Expr>, Attrs) -> Result<Expr, Error> + 'a;

/// `Σ_k (xq[.., i, k] - zx)·(wq[.., k, j] - zw)` in `int32`, computed as an
/// `int32` `matmul` of the 8-bit tensors themselves minus the zero-point
/// corrections (module docs, item 2). `zx` and `zw` are `int32` zero
/// points already shaped to broadcast against the product (a scalar; for
/// `zx` one per row, `(.., m, 1)`; for `zw` one per column, `(n,)`), and
/// `None` for a zero point that is 0. `xq` and `wq` have rank at least 2.
pub fn integer_matmul(
    make: &mut MakeCall<'_>,
    xq: Expr,
    zx: Option<Expr>,
    wq: Expr,
    zw: Option<Expr>,
) -> Result<Expr, Error> {
    let i32t = DataType::i32();
    let dtype = |d: DataType| Attrs::from_pairs([("dtype", AttrValue::DataType(d))]);
    let sum_over = |axis: i64| {
        Attrs::from_pairs([
            ("axis", AttrValue::Array(vec![AttrValue::Int(axis)])),
            ("keepdims", AttrValue::Bool(true)),
        ])
    };
    let out = Attrs::from_pairs([("out_dtype", AttrValue::DataType(i32t))]);
    let mut acc = make("relax.matmul", vec![xq.clone(), wq.clone()], out)?;
    if let Some(zw) = &zw {
        // zw · Σ_k xq[.., i, k]: (.., m, 1) times the column's zero point.
        let x32 = make("relax.astype", vec![xq], dtype(i32t))?;
        let rows = make("relax.sum", vec![x32], sum_over(-1))?;
        let term = make("relax.multiply", vec![rows, zw.clone()], Attrs::new())?;
        acc = make("relax.subtract", vec![acc, term], Attrs::new())?;
    }
    if let Some(zx) = zx {
        // zx · Σ_k (wq[.., k, j] - zw): (.., 1, n) times the row's zero
        // point; K·zx·zw is in it, so K need not be known.
        let mut w32 = make("relax.astype", vec![wq], dtype(i32t))?;
        if let Some(zw) = zw {
            w32 = make("relax.subtract", vec![w32, zw], Attrs::new())?;
        }
        let cols = make("relax.sum", vec![w32], sum_over(-2))?;
        let term = make("relax.multiply", vec![zx, cols], Attrs::new())?;
        acc = make("relax.subtract", vec![acc, term], Attrs::new())?;
    }
    Ok(acc)
}

#[cfg(test)]
mod tests;
