//! Shape values: the integer arithmetic an exported model does on its own
//! shapes, kept symbolic.
//!
//! A model exported with a dynamic axis computes shapes at run time:
//! `Shape(x)`, then `Gather`, `Slice`, `Concat`, `Unsqueeze` and integer
//! arithmetic, into the shape input of a `Reshape`, an `Expand` or a
//! `ConstantOfShape`. When every dim involved is a known integer all of it
//! folds to constants. When one is symbolic (a graph input's `batch`), the
//! importer keeps the values as Relax values over the same `TirVar`s, as
//! TVM's importer does:
//!
//! 1. A rank-1 integer value is a `ShapeExpr` (`R.shape([batch, 12, 64])`),
//!    a rank-0 one a `PrimValue` (`R.prim_value(batch)`). A value whose
//!    elements are all known integers is an `int64` constant tensor, as
//!    before.
//! 2. [`evaluate`] runs the ops of shape arithmetic on such values (see
//!    [`SHAPE_OPS`]) at import time, giving such values. Dims are sizes, so
//!    every variable is taken to be non-negative, and integer `Div` and
//!    `Mod` of non-negative values are floor division and modulo.
//! 3. An op that takes a shape from an input (`Reshape`, `Expand`,
//!    `ConstantOfShape`, `Range`, `Tile`, `Slice`'s bounds) reads the
//!    elements as `PrimExpr`s ([`super::Ctx::dims_input`]), so its output's
//!    StructInfo is symbolic: a BERT layer's activations read
//!    `(batch, seq, 256)`, not `ndim=3`.
//! 4. An op that reads such a value as a tensor (a comparison, a `Cast` to
//!    float) gets `R.shape_to_tensor(…)` ([`super::Ctx::input`]).
//! 5. A shape computed from tensor data goes through `R.tensor_to_shape`
//!    and a `match_cast` to fresh symbolic variables
//!    ([`super::Ctx::dims_input`]).

use super::Ctx;
use relax_core::arith::Analyzer;
use relax_core::ir::{Expr, ExprKind, PrimExpr};
use relax_runtime::{DataType, Error, Tensor};

/// The op types [`evaluate`] computes on shape values.
pub const SHAPE_OPS: &[&str] = &[
    "Identity",
    "Gather",
    "Slice",
    "Concat",
    "Unsqueeze",
    "Squeeze",
    "Reshape",
    "Flatten",
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Mod",
    "Neg",
    "Abs",
    "Max",
    "Min",
    "Sum",
    "Cast",
    "Equal",
    "Less",
    "LessOrEqual",
    "Greater",
    "GreaterOrEqual",
    "Not",
    "Where",
    "Shape",
    "Size",
    "ReduceProd",
    "ReduceSum",
    "ReduceMax",
    "ReduceMin",
];

/// The longest constant that takes part in shape arithmetic (a longer one
/// is data, not a shape).
const MAX_LEN: usize = 64;

/// An integer value of rank 0 or 1 whose elements are `PrimExpr`s.
#[derive(Clone, Debug, PartialEq)]
pub struct ShapeValue {
    /// The elements (one for a scalar).
    pub elems: Vec<PrimExpr>,
    /// Rank 0.
    pub scalar: bool,
    /// The element type (`int64` for anything symbolic; a constant keeps
    /// its own; `bool` for comparisons).
    pub dtype: DataType,
}

impl ShapeValue {
    /// A rank-1 value.
    pub fn vector(elems: Vec<PrimExpr>) -> Self {
        ShapeValue {
            elems,
            scalar: false,
            dtype: DataType::i64(),
        }
    }

    /// A rank-0 value.
    pub fn scalar(e: PrimExpr) -> Self {
        ShapeValue {
            elems: vec![e],
            scalar: true,
            dtype: DataType::i64(),
        }
    }

    /// `e` as a shape value: a `ShapeExpr`, a `PrimValue` of an integer, or
    /// a short integer or bool constant of rank 0 or 1.
    pub fn of(e: &Expr) -> Option<ShapeValue> {
        match e.kind() {
            ExprKind::ShapeExpr(dims) => Some(ShapeValue::vector(dims.clone())),
            ExprKind::PrimValue(v) if v.dtype().is_integer() => Some(ShapeValue::scalar(v.clone())),
            ExprKind::Constant(t) => {
                let int = t.dtype().is_integer() || t.dtype().is_bool();
                if !int || t.ndim() > 1 || t.numel() > MAX_LEN {
                    return None;
                }
                let elems = t
                    .to_f64_vec()
                    .into_iter()
                    .map(|v| {
                        if t.dtype().is_bool() {
                            PrimExpr::bool(v != 0.0)
                        } else {
                            PrimExpr::int(v as i64)
                        }
                    })
                    .collect();
                Some(ShapeValue {
                    elems,
                    scalar: t.ndim() == 0,
                    dtype: t.dtype(),
                })
            }
            _ => None,
        }
    }

    /// Whether `e` is a shape value with a symbolic element.
    pub fn is_symbolic(e: &Expr) -> bool {
        matches!(e.kind(), ExprKind::ShapeExpr(_) | ExprKind::PrimValue(_))
            && ShapeValue::of(e).is_some_and(|s| s.known().is_none())
    }

    /// The elements as integers, if all are known.
    pub fn known(&self) -> Option<Vec<i64>> {
        self.elems.iter().map(PrimExpr::as_int).collect()
    }

    /// The value as an expression: a constant when every element is known,
    /// else a `ShapeExpr` or a `PrimValue`.
    pub fn to_expr(&self) -> Result<Expr, String> {
        let simplified: Vec<PrimExpr> = self.elems.iter().map(simplify).collect();
        let shape: Vec<i64> = if self.scalar {
            vec![]
        } else {
            vec![simplified.len() as i64]
        };
        let known: Option<Vec<i64>> = if self.dtype.is_bool() {
            simplified
                .iter()
                .map(|e| as_bool(e).map(i64::from))
                .collect()
        } else {
            simplified.iter().map(PrimExpr::as_int).collect()
        };
        if let Some(v) = known {
            // Two's complement: an integer's low bytes are its narrower
            // value.
            let width = self.dtype.size_in_bytes();
            let bytes: Vec<u8> = v
                .iter()
                .flat_map(|x| x.to_le_bytes()[..width].to_vec())
                .collect();
            return Tensor::from_bytes(self.dtype, &shape, &bytes)
                .map(Expr::constant)
                .map_err(|e| e.to_string());
        }
        if self.dtype != DataType::i64() {
            return Err(format!(
                "a symbolic shape value of dtype {} (only int64 is kept symbolic)",
                self.dtype
            ));
        }
        Ok(if self.scalar {
            Expr::prim_value(simplified[0].clone())
        } else {
            Expr::shape(simplified)
        })
    }
}

/// `e` simplified, its variables taken as non-negative dims.
pub fn simplify(e: &PrimExpr) -> PrimExpr {
    analyzer_for(std::slice::from_ref(e)).simplify(e)
}

/// An analyzer knowing the variables of `exprs` to be non-negative.
fn analyzer_for(exprs: &[PrimExpr]) -> Analyzer {
    let mut a = Analyzer::new();
    for e in exprs {
        for v in e.free_vars() {
            a.mark_non_negative(&v);
        }
    }
    a
}

/// A bool element's value, if known.
fn as_bool(e: &PrimExpr) -> Option<bool> {
    if let Some(v) = e.as_int() {
        return Some(v != 0);
    }
    match e.kind() {
        relax_core::ir::PrimExprKind::IntImm(v) => Some(*v != 0),
        _ => match analyzer_for(std::slice::from_ref(e)).prove(e) {
            relax_core::arith::Proof::Proven => Some(true),
            relax_core::arith::Proof::Disproven => Some(false),
            relax_core::arith::Proof::Unknown => None,
        },
    }
}

/// Runs the node in `cx` on shape values, if it is an op of shape
/// arithmetic whose inputs are all shape values and one is symbolic.
/// `Ok(None)` leaves the node to its converter.
pub fn evaluate(cx: &mut Ctx) -> Result<Option<Vec<Expr>>, Error> {
    if !SHAPE_OPS.contains(&cx.node.op()) {
        return Ok(None);
    }
    let mut raw = Vec::new();
    for i in 0..cx.node.num_inputs() {
        raw.push(cx.raw_input(i)?);
    }
    if !raw.iter().flatten().any(ShapeValue::is_symbolic) {
        return Ok(None);
    }
    let mut inputs = Vec::new();
    for e in &raw {
        inputs.push(match e {
            None => None,
            Some(e) => match ShapeValue::of(e) {
                Some(v) => Some(v),
                // A tensor input: the converter handles the node.
                None => return Ok(None),
            },
        });
    }
    let out = match compute(cx, &inputs)? {
        Some(v) => v,
        None => return Ok(None),
    };
    match out.to_expr() {
        Ok(e) => Ok(Some(vec![e])),
        // Not expressible as a shape value (a comparison the prover cannot
        // decide): the converter computes it on tensors.
        Err(_) => Ok(None),
    }
}

/// Input `i` (required).
fn arg<'a>(cx: &Ctx, inputs: &'a [Option<ShapeValue>], i: usize) -> Result<&'a ShapeValue, Error> {
    inputs
        .get(i)
        .and_then(Option::as_ref)
        .ok_or_else(|| cx.error(format!("input {i} is required")))
}

/// Known integers of input `i`, if given.
fn known_arg(cx: &Ctx, inputs: &[Option<ShapeValue>], i: usize) -> Result<Option<Vec<i64>>, Error> {
    match inputs.get(i).and_then(Option::as_ref) {
        None => Ok(None),
        Some(v) => v
            .known()
            .map(Some)
            .ok_or_else(|| cx.error(format!("input {i} must be known integers here"))),
    }
}

/// The shape-arithmetic result of the node, or `None` for a form this
/// module does not compute.
fn compute(cx: &mut Ctx, inputs: &[Option<ShapeValue>]) -> Result<Option<ShapeValue>, Error> {
    let op = cx.node.op().to_string();
    let x = arg(cx, inputs, 0)?.clone();
    Ok(match op.as_str() {
        "Identity" => Some(x),
        "Cast" => {
            let to = cx.node.int("to")?.unwrap_or(0);
            match crate::tensor::dtype_of(to as i32) {
                Some(d) if d.is_integer() => Some(x),
                _ => None,
            }
        }
        "Shape" => Some(ShapeValue::vector(vec![PrimExpr::int(if x.scalar {
            0
        } else {
            x.elems.len() as i64
        })])),
        "Size" => Some(ShapeValue::scalar(PrimExpr::int(x.elems.len() as i64))),
        "Gather" => {
            let axis = cx.node.int_or("axis", 0)?;
            let idx = arg(cx, inputs, 1)?.clone();
            let Some(idx_known) = idx.known() else {
                return Ok(None);
            };
            if x.scalar || !matches!(axis, 0 | -1) {
                return Ok(None);
            }
            let n = x.elems.len() as i64;
            let mut elems = Vec::new();
            for i in idx_known {
                let j = if i < 0 { i + n } else { i };
                if !(0..n).contains(&j) {
                    return Err(cx.error(format!("index {i} is out of range for {n} elements")));
                }
                elems.push(x.elems[j as usize].clone());
            }
            Some(ShapeValue {
                elems,
                scalar: idx.scalar,
                dtype: x.dtype,
            })
        }
        "Slice" => {
            if x.scalar {
                return Ok(None);
            }
            let (starts, ends, axes, steps) = if cx.opset < 10 {
                (
                    cx.node.ints("starts")?,
                    cx.node.ints("ends")?,
                    cx.node.ints("axes")?,
                    None,
                )
            } else {
                (
                    known_arg(cx, inputs, 1)?,
                    known_arg(cx, inputs, 2)?,
                    known_arg(cx, inputs, 3)?,
                    known_arg(cx, inputs, 4)?,
                )
            };
            let (Some(s), Some(e)) = (starts, ends) else {
                return Err(cx.error("starts and ends are required"));
            };
            if s.len() != 1 || e.len() != 1 {
                return Ok(None);
            }
            if axes.is_some_and(|a| a != [0] && a != [-1]) {
                return Ok(None);
            }
            let step = steps.and_then(|s| s.first().copied()).unwrap_or(1);
            let picked = python_slice(x.elems.len() as i64, s[0], e[0], step)
                .ok_or_else(|| cx.error("step 0 is not a valid slice step"))?;
            Some(ShapeValue {
                elems: picked.into_iter().map(|i| x.elems[i].clone()).collect(),
                scalar: false,
                dtype: x.dtype,
            })
        }
        "Concat" => {
            let mut elems = Vec::new();
            for v in inputs.iter().flatten() {
                if v.scalar {
                    return Ok(None);
                }
                elems.extend(v.elems.iter().cloned());
            }
            Some(ShapeValue {
                elems,
                scalar: false,
                dtype: x.dtype,
            })
        }
        "Unsqueeze" => {
            let axes = if cx.opset < 13 {
                cx.node.ints("axes")?
            } else {
                known_arg(cx, inputs, 1)?
            };
            match (x.scalar, axes.as_deref()) {
                (true, Some([0] | [-1])) => Some(ShapeValue { scalar: false, ..x }),
                _ => None,
            }
        }
        "Squeeze" => {
            let axes = if cx.opset < 13 {
                cx.node.ints("axes")?
            } else {
                known_arg(cx, inputs, 1)?
            };
            match (x.scalar, x.elems.len(), axes.as_deref()) {
                (false, 1, None | Some([0] | [-1])) => Some(ShapeValue { scalar: true, ..x }),
                _ => None,
            }
        }
        "Reshape" | "Flatten" => {
            let target = if op == "Flatten" {
                Some(vec![1, -1])
            } else if cx.opset < 5 {
                cx.node.ints("shape")?
            } else {
                known_arg(cx, inputs, 1)?
            };
            match target.as_deref() {
                Some([]) if x.elems.len() == 1 => Some(ShapeValue { scalar: true, ..x }),
                Some([-1]) => Some(ShapeValue { scalar: false, ..x }),
                Some([n]) if *n == x.elems.len() as i64 => Some(ShapeValue { scalar: false, ..x }),
                _ => None,
            }
        }
        "Add" | "Sub" | "Mul" | "Div" | "Mod" | "Max" | "Min" | "Sum" | "Equal" | "Less"
        | "LessOrEqual" | "Greater" | "GreaterOrEqual" => {
            if op == "Mod" && cx.node.int_or("fmod", 0)? != 0 {
                return Ok(None);
            }
            let mut acc = x;
            for (k, v) in inputs.iter().enumerate().skip(1) {
                let Some(v) = v else { continue };
                let Some(next) = elementwise(&acc, v, |a, b| match op.as_str() {
                    "Add" | "Sum" => a + b,
                    "Sub" => a - b,
                    "Mul" => a * b,
                    "Div" => a.floordiv(b),
                    "Mod" => a.floormod(b),
                    "Max" => a.max(b),
                    "Min" => a.min(b),
                    "Equal" => a.eq_(b),
                    "Less" => a.lt(b),
                    "LessOrEqual" => a.le(b),
                    "Greater" => a.gt(b),
                    _ => a.ge(b),
                }) else {
                    return Err(cx.error(format!(
                        "input {k} of {} elements does not broadcast with {}",
                        v.elems.len(),
                        acc.elems.len()
                    )));
                };
                acc = next;
            }
            if matches!(
                op.as_str(),
                "Equal" | "Less" | "LessOrEqual" | "Greater" | "GreaterOrEqual"
            ) {
                acc.dtype = DataType::bool();
            }
            Some(acc)
        }
        "Neg" => Some(ShapeValue {
            elems: x.elems.iter().map(|e| -e.clone()).collect(),
            ..x
        }),
        "Abs" => Some(ShapeValue {
            elems: x.elems.iter().map(|e| e.clone().max(-e.clone())).collect(),
            ..x
        }),
        "Not" => {
            let elems: Option<Vec<PrimExpr>> = x
                .elems
                .iter()
                .map(|e| as_bool(e).map(|b| PrimExpr::bool(!b)))
                .collect();
            elems.map(|elems| ShapeValue { elems, ..x })
        }
        "Where" => {
            let (a, b) = (arg(cx, inputs, 1)?, arg(cx, inputs, 2)?);
            let picks: Option<Vec<bool>> = x.elems.iter().map(as_bool).collect();
            let Some(picks) = picks else {
                return Ok(None);
            };
            let lens = [picks.len(), a.elems.len(), b.elems.len()];
            let len = lens.into_iter().max().unwrap_or(0);
            if lens.iter().any(|&l| l != 1 && l != len) {
                return Err(cx.error(format!("inputs of {lens:?} elements do not broadcast")));
            }
            let at = |v: &[PrimExpr], i: usize| v[if v.len() == 1 { 0 } else { i }].clone();
            let elems = (0..len)
                .map(|i| {
                    let p = picks[if picks.len() == 1 { 0 } else { i }];
                    if p {
                        at(&a.elems, i)
                    } else {
                        at(&b.elems, i)
                    }
                })
                .collect();
            Some(ShapeValue {
                elems,
                scalar: x.scalar && a.scalar && b.scalar,
                dtype: a.dtype,
            })
        }
        "ReduceProd" | "ReduceSum" | "ReduceMax" | "ReduceMin" => {
            if x.scalar || x.elems.is_empty() {
                return Ok(None);
            }
            let keep = cx.node.int_or("keepdims", 1)? != 0;
            let mut it = x.elems.iter().cloned();
            let first = it.next().unwrap_or_else(|| PrimExpr::int(0));
            let r = it.fold(first, |a, b| match op.as_str() {
                "ReduceProd" => a * b,
                "ReduceSum" => a + b,
                "ReduceMax" => a.max(b),
                _ => a.min(b),
            });
            Some(ShapeValue {
                elems: vec![r],
                scalar: !keep,
                dtype: x.dtype,
            })
        }
        _ => None,
    })
}

/// `f` over the elements of `a` and `b` broadcast together (equal lengths,
/// or one of them a single element), or `None` if they do not broadcast.
fn elementwise(
    a: &ShapeValue,
    b: &ShapeValue,
    f: impl Fn(PrimExpr, PrimExpr) -> PrimExpr,
) -> Option<ShapeValue> {
    let (n, m) = (a.elems.len(), b.elems.len());
    let len = match (n, m) {
        _ if n == m => n,
        (1, _) => m,
        (_, 1) => n,
        _ => return None,
    };
    let at = |v: &ShapeValue, i: usize| v.elems[if v.elems.len() == 1 { 0 } else { i }].clone();
    let elems = (0..len).map(|i| f(at(a, i), at(b, i))).collect();
    Some(ShapeValue {
        elems,
        scalar: a.scalar && b.scalar,
        dtype: a.dtype,
    })
}

/// The indices NumPy's `v[start:end:step]` picks from `n` elements, or
/// `None` for step 0.
pub fn python_slice(n: i64, start: i64, end: i64, step: i64) -> Option<Vec<usize>> {
    if step == 0 {
        return None;
    }
    let norm = |v: i64, lo: i64, hi: i64| {
        let v = if v < 0 { v.saturating_add(n) } else { v };
        v.clamp(lo, hi)
    };
    let mut out = Vec::new();
    if step > 0 {
        let (mut i, e) = (norm(start, 0, n), norm(end, 0, n));
        while i < e {
            out.push(i as usize);
            i += step;
        }
    } else {
        let (mut i, e) = (norm(start, -1, n - 1), norm(end, -1, n - 1));
        while i > e {
            out.push(i as usize);
            i += step;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_slices() {
        assert_eq!(python_slice(4, 1, 3, 1), Some(vec![1, 2]));
        assert_eq!(python_slice(4, -1, i64::MAX, 1), Some(vec![3]));
        assert_eq!(python_slice(4, -1, i64::MIN, -1), Some(vec![3, 2, 1, 0]));
        assert_eq!(python_slice(4, 0, 4, 2), Some(vec![0, 2]));
        assert_eq!(python_slice(4, 0, 4, 0), None);
    }

    #[test]
    fn values_fold_to_constants_when_known() {
        let n = relax_core::ir::TirVar::new("n");
        let v = ShapeValue::vector(vec![n.to_expr(), PrimExpr::int(3)]);
        assert_eq!(v.to_expr().unwrap().to_string(), "R.shape([n, 3])");
        let k = ShapeValue::vector(vec![PrimExpr::int(2), PrimExpr::int(3)]);
        assert!(matches!(k.to_expr().unwrap().kind(), ExprKind::Constant(_)));
        let s = ShapeValue::scalar(n.to_expr() * 2);
        assert!(matches!(
            s.to_expr().unwrap().kind(),
            ExprKind::PrimValue(_)
        ));
        assert_eq!(ShapeValue::of(&s.to_expr().unwrap()), Some(s));
    }
}
