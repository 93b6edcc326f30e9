//! Checking a value against a [`Pattern`] (`MatchCast`, host-function results).
//!
//! 1. Checks go outside in: the kind, then the rank, the dtype, and the dims
//!    left to right; tuples check their arity, then each field in order. The
//!    first difference is reported.
//! 2. A `Bind` dim stores the actual value in its shape-heap slot unless the
//!    slot is already bound, in which case it is a check against the bound
//!    value (so `R.Tensor((n, n))` works whichever way the compiler spells
//!    the second `n`).
//! 3. A failure is described for people: the value as [`Value::describe`]
//!    says it, then where it differs ("dimension 1 is 785, expected 784"),
//!    and for a symbolic dim its value and who bound it ("expected n = 3
//!    (bound by parameter `x` of `main`)"). Inside tuples the path is spelt
//!    out ("a tuple of 2 whose field 1 is …").

use super::heap::ShapeHeap;
use crate::data_type::DataType;
use crate::executable::{DimPattern, Pattern, SymExpr};
use crate::value::Value;
use std::borrow::Cow;

/// Why a match failed.
#[derive(Debug)]
pub(super) enum Fail {
    /// The value differs: what was found, for [`crate::Error::Mismatch`].
    Found(String),
    /// The executable is broken (an unset or out-of-range slot, overflow).
    Internal(String),
}

/// Checks values against patterns over one frame's shape heap.
pub(super) struct Matcher<'h, 'a> {
    /// The caller's shape heap.
    pub heap: &'h mut ShapeHeap<'a>,
    /// Who binds the slots (the check's context).
    pub by: Cow<'a, str>,
}

impl<'a> Matcher<'_, 'a> {
    /// Checks `value` against `pattern`, binding slots.
    pub fn check(&mut self, value: &Value, pattern: &'a Pattern) -> Result<(), Fail> {
        let found = |detail: String| Fail::Found(format!("{}: {detail}", value.describe()));
        match (pattern, value) {
            (Pattern::Object, _) => Ok(()),
            (Pattern::Func, Value::Func(_) | Value::Closure(_)) => Ok(()),
            (Pattern::Tensor { ndim, dtype, dims }, Value::Tensor(t)) => {
                let rank = dims
                    .as_ref()
                    .map(|d| d.len() as u64)
                    .or(ndim.map(u64::from));
                if let Some(rank) = rank {
                    if t.ndim() as u64 != rank {
                        return Err(found(format!("rank is {}, expected {rank}", t.ndim())));
                    }
                }
                if let Some(dt) = dtype {
                    if !dt.is_void() && t.dtype() != *dt {
                        return Err(found(format!("dtype is {}, expected {dt}", t.dtype())));
                    }
                }
                self.dims(t.shape(), dims.as_deref())
                    .map_err(|e| e.detail(found))
            }
            (Pattern::Shape { ndim, dims }, Value::Shape(s)) => {
                let rank = dims
                    .as_ref()
                    .map(|d| d.len() as u64)
                    .or(ndim.map(u64::from));
                if let Some(rank) = rank {
                    if s.len() as u64 != rank {
                        return Err(found(format!("rank is {}, expected {rank}", s.len())));
                    }
                }
                self.dims(s, dims.as_deref()).map_err(|e| e.detail(found))
            }
            (Pattern::Prim { dtype, value: dim }, v) => {
                let actual = match (v, prim_kind(*dtype)) {
                    (Value::Int(i), PrimKind::Int | PrimKind::Any) => *i,
                    (Value::Bool(b), PrimKind::Bool | PrimKind::Any) => *b as i64,
                    (Value::Float(f), PrimKind::Float | PrimKind::Any) => {
                        let Some(dim) = dim else { return Ok(()) };
                        if f.fract() != 0.0 || !(-9.2e18..9.2e18).contains(f) {
                            return Err(found(format!(
                                "value is not an integer, expected {}",
                                dim_text(dim)
                            )));
                        }
                        *f as i64
                    }
                    _ => return Err(Fail::Found(value.describe())),
                };
                match dim {
                    None => Ok(()),
                    Some(dim) => self.dim(actual, dim).map_err(|e| {
                        e.detail(|exp| found(format!("value is {actual}, expected {exp}")))
                    }),
                }
            }
            (Pattern::Tuple(fields), Value::Tuple(items)) => {
                if fields.len() != items.len() {
                    return Err(found(format!("expected {} fields", fields.len())));
                }
                for (i, (p, v)) in fields.iter().zip(items.iter()).enumerate() {
                    match self.check(v, p) {
                        Ok(()) => {}
                        Err(Fail::Found(inner)) => {
                            return Err(Fail::Found(format!(
                                "{} whose field {i} is {inner}",
                                value.describe()
                            )))
                        }
                        Err(internal) => return Err(internal),
                    }
                }
                Ok(())
            }
            _ => Err(Fail::Found(value.describe())),
        }
    }

    /// Checks the dims of a tensor or shape, whose rank already matched.
    fn dims(&mut self, actual: &[i64], dims: Option<&'a [DimPattern]>) -> Result<(), DimFail> {
        let Some(dims) = dims else { return Ok(()) };
        for (i, (&a, d)) in actual.iter().zip(dims).enumerate() {
            self.dim(a, d).map_err(|e| match e {
                DimFail::Expected(exp) => {
                    DimFail::Expected(format!("dimension {i} is {a}, expected {exp}"))
                }
                internal => internal,
            })?;
        }
        Ok(())
    }

    /// Checks (or binds) one integer; on a difference, says what was expected.
    fn dim(&mut self, actual: i64, d: &'a DimPattern) -> Result<(), DimFail> {
        match d {
            DimPattern::Any => Ok(()),
            DimPattern::Bind { slot, name } => match self.heap.binding(*slot) {
                Some(b) if b.value == actual => Ok(()),
                Some(b) => Err(DimFail::Expected(format!(
                    "{name} = {} (bound by {})",
                    b.value, b.by
                ))),
                None => self
                    .heap
                    .bind(*slot, actual, name, self.by.clone())
                    .map_err(DimFail::Internal),
            },
            DimPattern::Check { expr, text } => {
                let want = self.heap.eval(expr).map_err(DimFail::Internal)?;
                if want == actual {
                    return Ok(());
                }
                Err(DimFail::Expected(self.explain(expr, text, want)))
            }
        }
    }

    /// `784`, `n = 3 (bound by …)`, `n * 2 = 6 (n = 3, bound by …)`.
    fn explain(&self, expr: &SymExpr, text: &str, want: i64) -> String {
        if text == want.to_string() {
            return text.to_string();
        }
        if let SymExpr::Slot(s) = expr {
            if let Some(b) = self.heap.binding(*s) {
                return format!("{text} = {want} (bound by {})", b.by);
            }
        }
        let mut slots = Vec::new();
        collect_slots(expr, &mut slots);
        let origins: Vec<String> = slots
            .iter()
            .filter_map(|s| self.heap.binding(*s))
            .map(|b| format!("{} = {}, bound by {}", b.name, b.value, b.by))
            .collect();
        if origins.is_empty() {
            format!("{text} = {want}")
        } else {
            format!("{text} = {want} ({})", origins.join("; "))
        }
    }
}

/// Why a dim did not match.
enum DimFail {
    /// The complete "… expected …" phrase.
    Expected(String),
    /// The executable is broken.
    Internal(String),
}

impl DimFail {
    /// Turns the phrase into a [`Fail`] by prefixing what was found.
    fn detail(self, found: impl FnOnce(String) -> Fail) -> Fail {
        match self {
            DimFail::Expected(s) => found(s),
            DimFail::Internal(s) => Fail::Internal(s),
        }
    }
}

/// Which prim values a prim dtype accepts.
enum PrimKind {
    Int,
    Float,
    Bool,
    Any,
}

fn prim_kind(dtype: DataType) -> PrimKind {
    if dtype.is_bool() {
        PrimKind::Bool
    } else if dtype.is_integer() {
        PrimKind::Int
    } else if dtype.is_float() {
        PrimKind::Float
    } else {
        PrimKind::Any
    }
}

/// The slots `e` reads, each once, in order of appearance.
fn collect_slots(e: &SymExpr, out: &mut Vec<u32>) {
    if let SymExpr::Slot(s) = e {
        if !out.contains(s) {
            out.push(*s)
        }
    }
    for o in e.operands() {
        collect_slots(o, out);
    }
}

/// How a dim pattern prints: the dim's name, its expression, or `_`.
fn dim_text(d: &DimPattern) -> &str {
    match d {
        DimPattern::Any => "_",
        DimPattern::Bind { name, .. } => name,
        DimPattern::Check { text, .. } => text,
    }
}

fn dims_text(dims: &[DimPattern]) -> String {
    let parts: Vec<&str> = dims.iter().map(dim_text).collect();
    match parts.as_slice() {
        [one] => format!("{one},"),
        _ => parts.join(", "),
    }
}

/// A pattern printed as the DSL spells the StructInfo it was compiled from
/// (`R.Tensor((n, 4), dtype="float32")`), for messages about values that no
/// instruction names, such as host-function results.
pub(super) fn pattern_text(p: &Pattern) -> String {
    match p {
        Pattern::Object => "R.Object".into(),
        Pattern::Func => "R.Callable".into(),
        Pattern::Tensor { ndim, dtype, dims } => {
            let mut parts = Vec::new();
            match (dims, ndim) {
                (Some(d), _) => parts.push(format!("({})", dims_text(d))),
                (None, Some(n)) => parts.push(format!("ndim={n}")),
                (None, None) => {}
            }
            if let Some(dt) = dtype.filter(|d| !d.is_void()) {
                parts.push(format!("dtype=\"{dt}\""));
            }
            if parts.is_empty() {
                "R.Tensor".into()
            } else {
                format!("R.Tensor({})", parts.join(", "))
            }
        }
        Pattern::Shape { ndim, dims } => match (dims, ndim) {
            (Some(d), _) => format!(
                "R.Shape([{}])",
                d.iter().map(dim_text).collect::<Vec<_>>().join(", ")
            ),
            (None, Some(n)) => format!("R.Shape(ndim={n})"),
            (None, None) => "R.Shape".into(),
        },
        Pattern::Prim { dtype, value } => match value {
            Some(v) if *dtype == DataType::i64() => format!("R.Prim(value={})", dim_text(v)),
            Some(v) => format!("R.Prim(\"{dtype}\", value={})", dim_text(v)),
            None => format!("R.Prim(\"{dtype}\")"),
        },
        Pattern::Tuple(fields) => {
            if fields.is_empty() {
                "R.Tuple".into()
            } else {
                let parts: Vec<String> = fields.iter().map(pattern_text).collect();
                format!("R.Tuple({})", parts.join(", "))
            }
        }
    }
}
