//! Symbolic shapes for the VM: PrimExprs become [`SymExpr`]s over shape-heap
//! slots, and StructInfo becomes the [`Pattern`]s that `MatchCast` checks
//! (TVM's `VMShapeLower`).
//!
//! 1. Each symbolic variable of a function gets one slot, allocated where the
//!    variable is first *bound*: standing alone as a dimension (or prim
//!    value) in a parameter annotation or a `match_cast` pattern.
//! 2. A pattern is compiled in one of two modes. In *bind* mode a first
//!    occurrence becomes [`DimPattern::Bind`] and a compound dimension whose
//!    variables are not all bound yet is skipped ([`DimPattern::Any`]); in
//!    *check* mode every dimension is checked. Function parameters are
//!    checked in two passes (bind all, then check all), so
//!    `f(x: (m * n,), y: (m, n))` binds `m` and `n` from `y` before checking
//!    `x`, as the spec requires.

use crate::ir::{PrimExpr, PrimExprKind, StructInfo, StructInfoKind, TirVar, UNKNOWN_NDIM};
use relax_runtime::executable::{DimPattern, Pattern, SymExpr};
use relax_runtime::Error;
use std::collections::HashMap;

/// The shape-heap layout of one function.
#[derive(Default)]
pub(super) struct ShapeHeap {
    slots: HashMap<TirVar, u32>,
}

impl ShapeHeap {
    /// How many slots are allocated.
    pub(super) fn len(&self) -> u32 {
        self.slots.len() as u32
    }

    /// Whether `v` already has a slot.
    fn is_bound(&self, v: &TirVar) -> bool {
        self.slots.contains_key(v)
    }

    fn allocate(&mut self, v: &TirVar) -> u32 {
        let next = self.slots.len() as u32;
        *self.slots.entry(v.clone()).or_insert(next)
    }

    /// `e` as a SymExpr; an unbound variable is an error (the program would
    /// use a symbolic dim before defining it, which well-formedness rejects).
    pub(super) fn sym(&self, e: &PrimExpr) -> Result<SymExpr, Error> {
        use PrimExprKind as K;
        let b = |x: &PrimExpr| self.sym(x).map(Box::new);
        Ok(match e.kind() {
            K::IntImm(v) => SymExpr::Const(*v),
            K::Var(v) => match self.slots.get(v) {
                Some(&s) => SymExpr::Slot(s),
                None => {
                    return Err(unsupported(format!(
                        "the symbolic dim `{v}` is used before it is defined"
                    )))
                }
            },
            K::FloatImm(_) => {
                return Err(unsupported(format!(
                    "the float expression `{e}` in a shape"
                )))
            }
            K::Add(x, y) => SymExpr::Add(b(x)?, b(y)?),
            K::Sub(x, y) => SymExpr::Sub(b(x)?, b(y)?),
            K::Mul(x, y) => SymExpr::Mul(b(x)?, b(y)?),
            K::Div(x, y) => SymExpr::FloorDiv(b(x)?, b(y)?),
            K::Mod(x, y) => SymExpr::FloorMod(b(x)?, b(y)?),
            K::Min(x, y) => SymExpr::Min(b(x)?, b(y)?),
            K::Max(x, y) => SymExpr::Max(b(x)?, b(y)?),
            K::Eq(x, y) => SymExpr::Eq(b(x)?, b(y)?),
            K::Ne(x, y) => SymExpr::Ne(b(x)?, b(y)?),
            K::Lt(x, y) => SymExpr::Lt(b(x)?, b(y)?),
            K::Le(x, y) => SymExpr::Le(b(x)?, b(y)?),
            K::Gt(x, y) => SymExpr::Gt(b(x)?, b(y)?),
            K::Ge(x, y) => SymExpr::Ge(b(x)?, b(y)?),
            K::And(x, y) => SymExpr::And(b(x)?, b(y)?),
            K::Or(x, y) => SymExpr::Or(b(x)?, b(y)?),
            K::Not(x) => SymExpr::Not(b(x)?),
            K::Select(c, t, f) => SymExpr::Select(b(c)?, b(t)?, b(f)?),
            K::Cast(_) | K::BufferLoad(..) | K::Call(..) => {
                return Err(unsupported(format!(
                    "the loop-level expression `{e}` in a shape"
                )))
            }
        })
    }

    /// The pattern of one dimension.
    fn dim(&mut self, e: &PrimExpr, bind: bool) -> Result<DimPattern, Error> {
        if let Some(v) = e.as_var() {
            if !self.is_bound(v) {
                if !bind {
                    return Err(unsupported(format!(
                        "the symbolic dim `{v}` is never bound"
                    )));
                }
                let slot = self.allocate(v);
                return Ok(DimPattern::Bind {
                    slot,
                    name: v.name().to_string(),
                });
            }
        }
        if bind && e.free_vars().iter().any(|v| !self.is_bound(v)) {
            return Ok(DimPattern::Any);
        }
        Ok(DimPattern::Check {
            expr: self.sym(e)?,
            text: e.to_string(),
        })
    }

    fn dims(&mut self, values: &[PrimExpr], bind: bool) -> Result<Vec<DimPattern>, Error> {
        values.iter().map(|e| self.dim(e, bind)).collect()
    }

    /// The pattern of `sinfo`, in bind or check mode (see the module docs).
    pub(super) fn pattern(&mut self, sinfo: &StructInfo, bind: bool) -> Result<Pattern, Error> {
        let ndim = |n: i32| (n != UNKNOWN_NDIM).then_some(n as u32);
        Ok(match sinfo.kind() {
            StructInfoKind::Object => Pattern::Object,
            StructInfoKind::Func(_) => Pattern::Func,
            StructInfoKind::Prim(p) => Pattern::Prim {
                dtype: p.dtype,
                value: match &p.value {
                    Some(v) => Some(self.dim(v, bind)?),
                    None => None,
                },
            },
            StructInfoKind::Shape(s) => Pattern::Shape {
                ndim: ndim(s.ndim),
                dims: match &s.values {
                    Some(v) => Some(self.dims(v, bind)?),
                    None => None,
                },
            },
            StructInfoKind::Tensor(t) => {
                // A shape given as a Relax variable is checked through the
                // values its own StructInfo knows, if any.
                let values = t
                    .shape_values()
                    .map(<[_]>::to_vec)
                    .or_else(|| t.shape.as_ref()?.struct_info()?.as_shape()?.values.clone());
                Pattern::Tensor {
                    ndim: ndim(t.ndim),
                    dtype: (!t.dtype.is_void()).then_some(t.dtype),
                    dims: match values {
                        Some(v) => Some(self.dims(&v, bind)?),
                        None => None,
                    },
                }
            }
            StructInfoKind::Tuple(fields) => Pattern::Tuple(
                fields
                    .iter()
                    .map(|f| self.pattern(f, bind))
                    .collect::<Result<_, _>>()?,
            ),
        })
    }
}

fn unsupported(what: String) -> Error {
    Error::Unsupported(what)
}

/// Whether a pattern checks anything (a pattern of only `Any`/`Object`
/// needs no instruction).
pub(super) fn is_trivial(p: &Pattern) -> bool {
    match p {
        Pattern::Object => true,
        Pattern::Tuple(fields) => fields.iter().all(is_trivial),
        _ => false,
    }
}
