//! A NaN guard of a dequantized tensor: `where(isnan(y), c, y)` with
//! `y = dequantize(x, s, z)` is `y` when no element of `y` can be NaN.
//!
//! PyTorch exports a masked softmax as `Where(IsNaN(p), 0, p)` (a row that
//! is all masked gives NaN); a QDQ model quantizes `p` first, and the
//! guard then reads a dequantized tensor, which is never NaN: `x - z` is
//! an integer (computed in `int32` or `int64`), exact or rounded in
//! `float32`/`float64`, so finite, and its product with a finite scale is
//! finite or infinite, never NaN. The rule applies when `s` is a constant
//! whose elements are all finite, the dequantize produces `float32` or
//! `float64` (a `float16` cast of a wide integer could be infinite, and
//! infinity times a zero scale is NaN), and the `where` has `y`'s
//! StructInfo (`c` broadcasts into it).
//!
//! Fused, the guard reads `y` twice, and each read inlines the quantize
//! chain that produced it: dropping it halves that kernel's work.

use crate::analysis::struct_info_analysis::{struct_info_base_check, BaseCheckResult};
use crate::arith::Analyzer;
use crate::dpl::{is_op, wildcard, Bindings, Match, Pattern};
use crate::ir::{Expr, ExprKind};
use crate::op::infer::attr_dtype;
use relax_runtime::{DataType, Error};

/// The pattern `where(isnan(y), c, y)`, `y` a `dequantize` call, and its
/// parts.
pub(super) struct NanGuardRule {
    /// The whole pattern.
    pub(super) pattern: Pattern,
    /// The `dequantize` call `y`.
    dequantize: Pattern,
    /// Its scale.
    scale: Pattern,
}

impl NanGuardRule {
    pub(super) fn new() -> Result<NanGuardRule, Error> {
        let scale = wildcard();
        let dequantize = is_op("relax.dequantize")?.call([wildcard(), scale.clone(), wildcard()]);
        let isnan = is_op("relax.isnan")?.call([dequantize.clone()]);
        let pattern = is_op("relax.where")?.call([isnan, wildcard(), dequantize.clone()]);
        Ok(NanGuardRule {
            pattern,
            dequantize,
            scale,
        })
    }

    /// `y` for a guard that never takes `c` (module docs); `None`
    /// otherwise. `bindings` give the `dequantize` call's attributes (the
    /// rewrite never replaces `dequantize` bindings).
    pub(super) fn rewrite(&self, orig: &Expr, m: &Match, bindings: &Bindings) -> Option<Expr> {
        let y = m.get(&self.dequantize)?;
        let dq = super::call_of(y, bindings)?;
        let out = attr_dtype(dq, "out_dtype");
        let out = if out.is_void() { DataType::f32() } else { out };
        if out != DataType::f32() && out != DataType::f64() {
            return None;
        }
        let ExprKind::Constant(s) = m.get(&self.scale)?.kind() else {
            return None;
        };
        if !s.dtype().is_float() || !s.to_f64_vec().iter().all(|v| v.is_finite()) {
            return None;
        }
        // The guard's result is `y` itself: same dtype and shape.
        let (want, got) = (orig.struct_info()?, y.struct_info()?);
        let same = |a, b| struct_info_base_check(a, b, &Analyzer::new()) == BaseCheckResult::Pass;
        (same(want, got) && same(got, want)).then(|| y.clone())
    }
}
