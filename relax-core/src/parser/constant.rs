//! `R.const(value, dtype, shape=…)`: tensor constants from nested lists.
//!
//! 1. The shape is the nesting of the lists (`[[1, 2, 3], [4, 5, 6]]` is
//!    `(2, 3)`); a scalar is rank 0. Ragged lists are an error.
//! 2. `shape=(…)` states the shape outright; it is needed for tensors with a
//!    zero dimension (`R.const([], "float32", shape=(0, 3))`) and otherwise
//!    must hold as many elements as given.
//! 3. Without a dtype, floats make `float32`, booleans `bool`, integers
//!    `int64` (numpy's defaults as TVM applies them).
//! 4. Values are checked against the dtype: an integer dtype takes only
//!    integers in its range; `nan` and `inf` are accepted for floats.

use super::lower::{Lowered, Lowerer};
use super::prim::int_fits;
use super::syntax::{self, ExprKind as SK, Ident, UnOp};
use crate::ir::Expr;
use relax_runtime::{DataType, Span, Tensor, TypeCode};

/// One element as written.
#[derive(Clone, Copy, Debug)]
enum Scalar {
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl Lowerer<'_> {
    /// Lowers the arguments of `R.const(…)`.
    pub(super) fn constant(
        &mut self,
        args: &[syntax::Expr],
        kwargs: &[(Ident, syntax::Expr)],
        span: Span,
    ) -> Lowered<Expr> {
        let mut value = args.first();
        let mut dtype = args.get(1);
        let mut shape_arg = None;
        if let Some(extra) = args.get(2) {
            self.error(
                "syntax-error",
                extra.span,
                format!(
                    "expected at most 2 positional arguments to `R.const`, found {}",
                    extra.describe()
                ),
            );
            return None;
        }
        for (k, v) in kwargs {
            match k.name.as_str() {
                "value" if value.is_none() => value = Some(v),
                "dtype" if dtype.is_none() => dtype = Some(v),
                "shape" => shape_arg = Some(v),
                _ => {
                    self.error(
                        "syntax-error",
                        k.span,
                        format!(
                            "expected `dtype` or `shape` as a keyword of `R.const`, found `{}`",
                            k.name
                        ),
                    );
                    return None;
                }
            }
        }
        let Some(value) = value else {
            self.error(
                "syntax-error",
                span,
                "expected a value in `R.const(…)`, found none",
            );
            return None;
        };
        // Flatten the nested lists, checking that they are rectangular.
        let mut elems: Vec<(Scalar, Span)> = Vec::new();
        let data_shape = self.const_shape(value, &mut elems)?;
        let dtype = match dtype.filter(|d| !matches!(d.kind, SK::None)) {
            Some(d) => self.dtype_string(d)?,
            None => {
                if elems.iter().any(|(s, _)| matches!(s, Scalar::Float(_))) {
                    DataType::f32()
                } else if !elems.is_empty()
                    && elems.iter().all(|(s, _)| matches!(s, Scalar::Bool(_)))
                {
                    DataType::bool()
                } else if elems.is_empty() {
                    DataType::f32()
                } else {
                    DataType::i64()
                }
            }
        };
        let elem_size = match (dtype.code(), dtype.bits(), dtype.lanes()) {
            (_, _, l) if l != 1 => None,
            (TypeCode::Float, 16 | 32 | 64, _) => Some(usize::from(dtype.bits() / 8)),
            (TypeCode::BFloat, 16, _) => Some(2),
            (TypeCode::Int, 8 | 16 | 32 | 64, _) => Some(usize::from(dtype.bits() / 8)),
            (TypeCode::UInt, 8 | 16 | 32 | 64, _) => Some(usize::from(dtype.bits() / 8)),
            (TypeCode::UInt, 1, _) => Some(1),
            _ => None,
        };
        let Some(elem_size) = elem_size else {
            self.error(
                "invalid-constant",
                dtype_arg_span(args, kwargs).unwrap_or(span),
                format!("expected a constant dtype (bool, int8…64, uint8…64, float16/32/64, bfloat16), found {dtype}"),
            );
            return None;
        };
        let shape: Vec<i64> = match shape_arg {
            Some(s) => self.explicit_shape(s)?,
            None => data_shape,
        };
        let Some(numel) = shape
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(usize::try_from(d).ok()?))
        else {
            self.error(
                "invalid-constant",
                span,
                "expected a constant shape whose size fits in memory, found one too large",
            );
            return None;
        };
        if numel != elems.len() {
            self.error(
                "invalid-constant",
                shape_arg.map_or(value.span, |s| s.span),
                format!(
                    "expected {numel} elements for shape {}, found {}",
                    relax_runtime::tensor::fmt_shape(&shape),
                    elems.len()
                ),
            );
            return None;
        }
        let mut bytes = Vec::with_capacity(numel.saturating_mul(elem_size).min(1 << 30));
        let mut ok = true;
        for (s, sp) in &elems {
            if !encode(*s, dtype, &mut bytes) {
                let shown = match s {
                    Scalar::Int(v) => v.to_string(),
                    Scalar::Float(v) => v.to_string(),
                    Scalar::Bool(b) => {
                        if *b {
                            "True".into()
                        } else {
                            "False".into()
                        }
                    }
                };
                self.error(
                    "invalid-constant",
                    *sp,
                    format!("expected a value of dtype {dtype}, found `{shown}`"),
                );
                ok = false;
            }
        }
        if !ok {
            return None;
        }
        match Tensor::from_bytes(dtype, &shape, &bytes) {
            Ok(t) => Some(Expr::constant(t)),
            Err(err) => {
                self.error("invalid-constant", span, err.to_string());
                None
            }
        }
    }

    /// The shape of a nested list, pushing its elements in row-major order.
    fn const_shape(
        &mut self,
        v: &syntax::Expr,
        out: &mut Vec<(Scalar, Span)>,
    ) -> Lowered<Vec<i64>> {
        match &v.kind {
            SK::List(items) | SK::Tuple(items) => {
                let mut inner: Option<Vec<i64>> = None;
                for it in items {
                    let s = self.const_shape(it, out)?;
                    match &inner {
                        None => inner = Some(s),
                        Some(prev) if *prev != s => {
                            self.error(
                                "invalid-constant",
                                it.span,
                                format!(
                                    "expected a rectangular nested list: this element has shape {}, the first has {}",
                                    relax_runtime::tensor::fmt_shape(&s),
                                    relax_runtime::tensor::fmt_shape(prev)
                                ),
                            );
                            return None;
                        }
                        _ => {}
                    }
                }
                let mut shape = vec![items.len() as i64];
                shape.extend(inner.unwrap_or_default());
                Some(shape)
            }
            _ => {
                let s = self.const_scalar(v)?;
                out.push((s, v.span));
                Some(vec![])
            }
        }
    }

    fn const_scalar(&mut self, v: &syntax::Expr) -> Lowered<Scalar> {
        let bad = |this: &mut Self| {
            this.error(
                "invalid-constant",
                v.span,
                format!(
                    "expected a number or a bool in `R.const`, found {}",
                    v.describe()
                ),
            );
            None
        };
        match &v.kind {
            SK::Int(i) => Some(Scalar::Int(*i)),
            SK::Float(f) => Some(Scalar::Float(*f)),
            SK::Bool(b) => Some(Scalar::Bool(*b)),
            SK::Name(n) if n == "nan" => Some(Scalar::Float(f64::NAN)),
            SK::Name(n) if n == "inf" => Some(Scalar::Float(f64::INFINITY)),
            SK::Unary(UnOp::Neg, inner) => match inner.kind {
                SK::Int(i) => match i.checked_neg() {
                    Some(n) => Some(Scalar::Int(n)),
                    None => bad(self),
                },
                SK::Float(f) => Some(Scalar::Float(-f)),
                SK::Name(ref n) if n == "inf" => Some(Scalar::Float(f64::NEG_INFINITY)),
                SK::Name(ref n) if n == "nan" => Some(Scalar::Float(f64::NAN)),
                _ => bad(self),
            },
            _ => bad(self),
        }
    }

    fn explicit_shape(&mut self, s: &syntax::Expr) -> Lowered<Vec<i64>> {
        let (SK::Tuple(items) | SK::List(items)) = &s.kind else {
            self.error(
                "invalid-constant",
                s.span,
                format!(
                    "expected a shape tuple such as `(0, 3)`, found {}",
                    s.describe()
                ),
            );
            return None;
        };
        let mut out = Vec::new();
        for it in items {
            match it.kind {
                SK::Int(d) if d >= 0 => out.push(d),
                _ => {
                    self.error(
                        "invalid-constant",
                        it.span,
                        format!(
                            "expected a non-negative integer dimension, found {}",
                            it.describe()
                        ),
                    );
                    return None;
                }
            }
        }
        Some(out)
    }
}

fn dtype_arg_span(args: &[syntax::Expr], kwargs: &[(Ident, syntax::Expr)]) -> Option<Span> {
    args.get(1).map(|a| a.span).or_else(|| {
        kwargs
            .iter()
            .find(|(k, _)| k.name == "dtype")
            .map(|(_, v)| v.span)
    })
}

/// Appends `s` as little-endian bytes of `dtype`; false if it does not fit.
fn encode(s: Scalar, dtype: DataType, out: &mut Vec<u8>) -> bool {
    match dtype.code() {
        TypeCode::Float => {
            let v = match s {
                Scalar::Int(i) => i as f64,
                Scalar::Float(f) => f,
                Scalar::Bool(b) => f64::from(u8::from(b)),
            };
            match dtype.bits() {
                16 => return encode_half(v, dtype, out),
                32 => out.extend_from_slice(&(v as f32).to_le_bytes()),
                _ => out.extend_from_slice(&v.to_le_bytes()),
            }
            true
        }
        TypeCode::BFloat => {
            let v = match s {
                Scalar::Int(i) => i as f64,
                Scalar::Float(f) => f,
                Scalar::Bool(b) => f64::from(u8::from(b)),
            };
            encode_half(v, dtype, out)
        }
        _ => {
            let v = match s {
                Scalar::Int(i) => i,
                Scalar::Bool(b) => i64::from(b),
                Scalar::Float(_) => return false,
            };
            if !int_fits(v, dtype) {
                return false;
            }
            let bytes = v.to_le_bytes();
            let n = usize::from(dtype.bits().div_ceil(8)).min(8);
            out.extend_from_slice(&bytes[..n]);
            true
        }
    }
}

/// `v` as a `float16` or `bfloat16` (`dtype`), rounded once to nearest
/// even as `relax.astype` rounds.
fn encode_half(v: f64, dtype: DataType, out: &mut Vec<u8>) -> bool {
    match relax_runtime::Tensor::scalar(v).astype(dtype) {
        Ok(t) => {
            out.extend_from_slice(t.as_bytes());
            true
        }
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_precision_rounds_to_nearest_even() {
        let f16 = |v: f64| {
            let mut b = Vec::new();
            assert!(encode(Scalar::Float(v), DataType::f16(), &mut b));
            u16::from_le_bytes([b[0], b[1]])
        };
        assert_eq!(f16(1.0), 0x3c00);
        assert_eq!(f16(-2.0), 0xc000);
        assert_eq!(f16(65504.0), 0x7bff);
        assert_eq!(f16(1e6), 0x7c00);
        assert_eq!(f16(f64::NAN) & 0x7c00, 0x7c00);
        assert_eq!(f16(5.960_464_5e-8), 0x0001);
        assert_eq!(f16(0.1), 0x2e66);
        // Rounded once from the literal's f64: just above a tie rounds up.
        assert_eq!(f16(1.0 + 2f64.powi(-11) + 2f64.powi(-40)), 0x3c01);
        let mut b = Vec::new();
        assert!(encode(Scalar::Int(3), DataType::bf16(), &mut b));
        assert!(encode(Scalar::Float(0.1), DataType::bf16(), &mut b));
        assert_eq!(b, [0x40, 0x40, 0xcd, 0x3d]);
    }

    #[test]
    fn integers_are_range_checked() {
        let mut b = Vec::new();
        assert!(encode(Scalar::Int(255), DataType::uint(8), &mut b));
        assert!(!encode(Scalar::Int(256), DataType::uint(8), &mut b));
        assert!(!encode(Scalar::Int(-1), DataType::uint(8), &mut b));
        assert!(!encode(Scalar::Float(1.5), DataType::i32(), &mut b));
        assert!(encode(Scalar::Bool(true), DataType::bool(), &mut b));
        assert_eq!(b, vec![255, 1]);
    }
}
