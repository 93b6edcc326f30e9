//! The identity requantization: `quantize(dequantize(x, s, z), s, z)`, with
//! at most one layout op between the two (`reshape`, `permute_dims`,
//! `expand_dims`, `squeeze`), is `x` itself (through that layout op).
//!
//! A QDQ model (onnxruntime's `quantize_static`) wraps every tensor in a
//! `QuantizeLinear`/`DequantizeLinear` pair, layout ops included, with the
//! same parameters on both sides of a `Reshape` or `Transpose`; BERT's
//! attention is a chain of them between its projections and its batched
//! matmuls. In integers the chain is the layout ops alone, and the matmul
//! that consumes it sees the 8-bit tensor the rule in the parent module
//! wants.
//!
//! The rule applies when the two scales are the same constant `float32`
//! scalar `s` with `2^-100 <= |s| <= 2^100` (a normal number whose
//! products with the integers below stay normal), the zero points are
//! constant scalars of the same value `z` with `|z| < 2^16`, `x` is an
//! integer tensor of at most 16 bits of the type the `quantize` produces,
//! and the `dequantize` produces `float32`. Then it is exact: `a = x - z`
//! is an integer with `|a| < 2^17`, `fl(a·s) = a·s·(1 + e1)` and
//! `fl(fl(a·s) / s) = a·(1 + e1)(1 + e2)` with `|e1|, |e2| <= 2^-24`, within
//! `2^17 · 2^-23 < 1/2` of `a`, so the `quantize` rounds it back to `a`,
//! adds `z` and gets `x`, inside the output's range, unclamped.
//! Layout ops move elements and never change them.

use crate::dpl::{is_op, wildcard, Bindings, Match, Pattern};
use crate::ir::{Call, Expr, ExprKind};
use crate::op::infer::attr_dtype;
use relax_runtime::{DataType, Error};

/// The layout ops the rule looks through.
const LAYOUT_OPS: [&str; 4] = [
    "relax.reshape",
    "relax.permute_dims",
    "relax.expand_dims",
    "relax.squeeze",
];

/// The pattern `quantize(dequantize(..) | layout(dequantize(..)), ..)` and
/// its parts.
pub(super) struct RequantizeRule {
    /// The whole pattern.
    pub(super) pattern: Pattern,
    /// The `dequantize` call.
    dequantize: Pattern,
    /// Its data, scale and zero point.
    x: Pattern,
    scale: Pattern,
    zero: Pattern,
    /// The layout call, when there is one.
    layout: Pattern,
}

impl RequantizeRule {
    pub(super) fn new() -> Result<RequantizeRule, Error> {
        let (x, scale, zero) = (wildcard(), wildcard(), wildcard());
        let dequantize = is_op("relax.dequantize")?.call([x.clone(), scale.clone(), zero.clone()]);
        let mut layout: Option<Pattern> = None;
        for op in LAYOUT_OPS {
            let p = is_op(op)?.call_variadic([dequantize.clone()]);
            layout = Some(match layout {
                None => p,
                Some(l) => l | p,
            });
        }
        let layout = layout.expect("layout ops");
        let pattern = is_op("relax.quantize")?.call([
            dequantize.clone() | layout.clone(),
            wildcard(),
            wildcard(),
        ]);
        Ok(RequantizeRule {
            pattern,
            dequantize,
            x,
            scale,
            zero,
            layout,
        })
    }

    /// `x`, or the layout op on `x`, for a match that is an identity
    /// (module docs); `None` otherwise. `bindings` are the function's
    /// before the rewrite: the `dequantize` and layout bindings it reads
    /// there (for their attributes) are ones the rewrite never replaces;
    /// the operands come from the match, which sees the function as it is.
    pub(super) fn rewrite(&self, orig: &Expr, m: &Match, bindings: &Bindings) -> Option<Expr> {
        let q = orig.as_call()?;
        let dq = super::call_of(m.get(&self.dequantize)?, bindings)?;
        if q.args.len() != 3 {
            return None;
        }
        let x = m.get(&self.x)?;
        let xt = super::tensor(x)?;
        let out = attr_dtype(q, "out_dtype");
        if !xt.dtype.is_integer() || xt.dtype.is_bool() || xt.dtype.bits() > 16 || xt.dtype != out {
            return None;
        }
        let dq_out = attr_dtype(dq, "out_dtype");
        if !(dq_out.is_void() || dq_out == DataType::f32()) {
            return None;
        }
        let scale = scalar_constant(m.get(&self.scale)?, Some(DataType::f32()))?;
        let (lo, hi) = (2f64.powi(-100), 2f64.powi(100));
        if !(lo..=hi).contains(&scale.abs()) {
            return None;
        }
        if scalar_constant(&q.args[1], Some(DataType::f32()))?.to_bits() != scale.to_bits() {
            return None;
        }
        let zero = scalar_constant(m.get(&self.zero)?, None)?;
        if zero.abs() >= 65536.0 || scalar_constant(&q.args[2], None)? != zero {
            return None;
        }
        match m.get(&self.layout) {
            None => Some(x.clone()),
            Some(l) => {
                let l: &Call = super::call_of(l, bindings)?;
                let mut args = l.args.clone();
                args[0] = x.clone();
                Some(Expr::call_full(
                    l.op.clone(),
                    args,
                    l.attrs.clone(),
                    l.sinfo_args.clone(),
                ))
            }
        }
    }
}

/// The value of a constant scalar `e` (of `dtype` if given), or of a
/// one-element tensor.
fn scalar_constant(e: &Expr, dtype: Option<DataType>) -> Option<f64> {
    let ExprKind::Constant(t) = e.kind() else {
        return None;
    };
    if dtype.is_some_and(|d| t.dtype() != d) || t.numel() != 1 {
        return None;
    }
    t.to_f64_vec().first().copied()
}
