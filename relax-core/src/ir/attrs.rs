//! Attributes of calls (`axis=[1], keepdims=True`) and functions
//! (`R.func_attr({"Primitive": 1})`).
//!
//! 1. Attributes are an ordered list of `name = value` pairs; the order is the
//!    op's declaration order and is the order they print in.
//! 2. Values are typed ([`AttrValue`]); an op's registry entry says which type
//!    each of its attributes has (with the op registry).
//! 3. Immutable and shared, like the rest of the IR.

use super::prim_expr::PrimExpr;
use relax_runtime::DataType;
use std::sync::Arc;

/// One attribute value.
#[derive(Clone, Debug)]
pub enum AttrValue {
    /// Python's `None`: an absent optional attribute.
    None,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string.
    Str(String),
    /// A dtype (prints as its string name, as TVMScript does).
    DataType(DataType),
    /// A symbolic integer (e.g. a conv2d stride).
    PrimExpr(PrimExpr),
    /// A list.
    Array(Vec<AttrValue>),
}

impl PartialEq for AttrValue {
    fn eq(&self, other: &Self) -> bool {
        use AttrValue::*;
        match (self, other) {
            (None, None) => true,
            (Bool(a), Bool(b)) => a == b,
            (Int(a), Int(b)) => a == b,
            (Float(a), Float(b)) => a.to_bits() == b.to_bits(),
            (Str(a), Str(b)) => a == b,
            (DataType(a), DataType(b)) => a == b,
            (PrimExpr(a), PrimExpr(b)) => a == b,
            (Array(a), Array(b)) => a == b,
            _ => false,
        }
    }
}

impl AttrValue {
    /// The integer, if this is one.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            AttrValue::Int(v) => Some(*v),
            AttrValue::PrimExpr(e) => e.as_int(),
            _ => None,
        }
    }
    /// The number as a float, if this is a float or an integer.
    pub fn as_float(&self) -> Option<f64> {
        match self {
            AttrValue::Float(v) => Some(*v),
            AttrValue::Int(v) => Some(*v as f64),
            _ => None,
        }
    }
    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            AttrValue::Bool(v) => Some(*v),
            _ => None,
        }
    }
    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            AttrValue::Str(s) => Some(s),
            _ => None,
        }
    }
    /// The list, if this is one.
    pub fn as_array(&self) -> Option<&[AttrValue]> {
        match self {
            AttrValue::Array(a) => Some(a),
            _ => None,
        }
    }
    /// Whether this is `None`.
    pub fn is_none(&self) -> bool {
        matches!(self, AttrValue::None)
    }
}

impl From<bool> for AttrValue {
    fn from(v: bool) -> Self {
        AttrValue::Bool(v)
    }
}
impl From<i64> for AttrValue {
    fn from(v: i64) -> Self {
        AttrValue::Int(v)
    }
}
impl From<f64> for AttrValue {
    fn from(v: f64) -> Self {
        AttrValue::Float(v)
    }
}
impl From<&str> for AttrValue {
    fn from(v: &str) -> Self {
        AttrValue::Str(v.to_string())
    }
}
impl From<String> for AttrValue {
    fn from(v: String) -> Self {
        AttrValue::Str(v)
    }
}
impl From<DataType> for AttrValue {
    fn from(v: DataType) -> Self {
        AttrValue::DataType(v)
    }
}
impl From<PrimExpr> for AttrValue {
    fn from(v: PrimExpr) -> Self {
        AttrValue::PrimExpr(v)
    }
}
impl From<Vec<i64>> for AttrValue {
    fn from(v: Vec<i64>) -> Self {
        AttrValue::Array(v.into_iter().map(AttrValue::Int).collect())
    }
}

/// An ordered list of named attributes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Attrs(Arc<Vec<(String, AttrValue)>>);

impl Attrs {
    /// No attributes.
    pub fn new() -> Self {
        Self::default()
    }
    /// Attributes from `(name, value)` pairs, kept in order.
    pub fn from_pairs<K: Into<String>, V: Into<AttrValue>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        Attrs(Arc::new(
            pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        ))
    }
    /// These attributes with `name` set to `value` (replacing, or appended).
    pub fn with(&self, name: &str, value: impl Into<AttrValue>) -> Self {
        let mut v = (*self.0).clone();
        let value = value.into();
        match v.iter_mut().find(|(k, _)| k == name) {
            Some(slot) => slot.1 = value,
            None => v.push((name.to_string(), value)),
        }
        Attrs(Arc::new(v))
    }
    /// These attributes without `name`.
    pub fn without(&self, name: &str) -> Self {
        Attrs(Arc::new(
            self.0.iter().filter(|(k, _)| k != name).cloned().collect(),
        ))
    }
    /// The value of `name`.
    pub fn get(&self, name: &str) -> Option<&AttrValue> {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }
    /// The pairs, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &AttrValue)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }
    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// How many.
    pub fn len(&self) -> usize {
        self.0.len()
    }
}
