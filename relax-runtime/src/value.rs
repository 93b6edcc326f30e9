//! `Value`: what a Relax program computes with at run time.
//!
//! 1. Each Relax value kind has a variant: tensors, prim values (`Int`,
//!    `Float`, `Bool`), shapes, tuples, strings, dtypes, and functions (a
//!    function of the executable, by index).
//! 2. Values are immutable and cheap to clone (tensors and tuples share their
//!    contents).

use crate::data_type::DataType;
use crate::tensor::Tensor;
use std::fmt;
use std::sync::Arc;

/// A run-time Relax value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A tensor.
    Tensor(Tensor),
    /// An integer prim value (`R.prim_value(3)`).
    Int(i64),
    /// A float prim value.
    Float(f64),
    /// A boolean prim value.
    Bool(bool),
    /// A shape value (`R.shape([2, 3])`).
    Shape(Arc<[i64]>),
    /// A tuple.
    Tuple(Arc<[Value]>),
    /// A string (`R.str("…")`).
    Str(Arc<str>),
    /// A dtype value (`R.dtype("float32")`).
    DataType(DataType),
    /// A function of the executable, by index (a closure without captures).
    Func(u32),
    /// A closure: a function of the executable and the values it captured,
    /// which a call passes before its own arguments (TVM's
    /// `make_closure`).
    Closure(Arc<Closure>),
    /// A key/value cache object (`R.Object` in StructInfo); clones are the
    /// same cache, which its builtins mutate in place.
    KvCache(Arc<crate::kv_cache::AttentionKvCache>),
}

/// A function of the executable with captured values, made by
/// `R.make_closure(cls.f, (captured…))`.
#[derive(Clone, Debug, PartialEq)]
pub struct Closure {
    /// The function's index in the executable.
    pub func: u32,
    /// The leading arguments of every call.
    pub captured: Vec<Value>,
}

impl Value {
    /// The tensor, if this is one.
    pub fn as_tensor(&self) -> Option<&Tensor> {
        match self {
            Value::Tensor(t) => Some(t),
            _ => None,
        }
    }
    /// The fields, if this is a tuple.
    pub fn as_tuple(&self) -> Option<&[Value]> {
        match self {
            Value::Tuple(t) => Some(t),
            _ => None,
        }
    }
    /// The dims, if this is a shape.
    pub fn as_shape(&self) -> Option<&[i64]> {
        match self {
            Value::Shape(s) => Some(s),
            _ => None,
        }
    }
    /// The integer, if this is an integer (or a boolean, as 0/1).
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Bool(b) => Some(*b as i64),
            _ => None,
        }
    }
    /// A tuple of `fields`.
    pub fn tuple(fields: Vec<Value>) -> Value {
        Value::Tuple(fields.into())
    }
    /// A shape value.
    pub fn shape(dims: &[i64]) -> Value {
        Value::Shape(dims.into())
    }
    /// A short description of the kind and structure, for error messages:
    /// `a float32 tensor of shape (3, 4)`, `the shape (2, 3)`, `a tuple of 2`.
    pub fn describe(&self) -> String {
        match self {
            Value::Tensor(t) => {
                let dtype = t.dtype().to_string();
                let article = if dtype.starts_with('i') { "an" } else { "a" };
                let shape = crate::tensor::fmt_shape(t.shape());
                format!("{article} {dtype} tensor of shape {shape}")
            }
            Value::Int(i) => format!("the integer {i}"),
            Value::Float(f) => format!("the float {f}"),
            Value::Bool(b) => format!("the bool {b}"),
            Value::Shape(s) => format!("the shape {}", crate::tensor::fmt_shape(s)),
            Value::Tuple(t) => format!("a tuple of {}", t.len()),
            Value::Str(s) => format!("the string {s:?}"),
            Value::DataType(d) => format!("the dtype {d}"),
            Value::Func(_) => "a function".to_string(),
            Value::Closure(c) => format!("a closure of {} captured values", c.captured.len()),
            Value::KvCache(c) => format!(
                "a {} KV cache of {} rows of shape {}, {} filled",
                c.dtype(),
                c.capacity(),
                crate::tensor::fmt_shape(&c.row_shape()),
                c.fill_count()
            ),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Tensor(t) => write!(f, "{t}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x}"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Shape(s) => f.write_str(&crate::tensor::fmt_shape(s)),
            Value::Tuple(t) => {
                f.write_str("(")?;
                for (i, v) in t.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                if t.len() == 1 {
                    f.write_str(",")?;
                }
                f.write_str(")")
            }
            Value::Str(s) => write!(f, "{s:?}"),
            Value::DataType(d) => write!(f, "{d}"),
            Value::Func(i) => write!(f, "<function {i}>"),
            Value::Closure(c) => write!(f, "<closure of function {}>", c.func),
            Value::KvCache(c) => {
                write!(f, "<KV cache, {} of {} rows>", c.fill_count(), c.capacity())
            }
        }
    }
}

impl From<Tensor> for Value {
    fn from(t: Tensor) -> Self {
        Value::Tensor(t)
    }
}
impl From<&Tensor> for Value {
    fn from(t: &Tensor) -> Self {
        Value::Tensor(t.clone())
    }
}
impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Float(v)
    }
}
impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}
impl From<Vec<Value>> for Value {
    fn from(v: Vec<Value>) -> Self {
        Value::tuple(v)
    }
}
impl<A: Into<Value>, B: Into<Value>> From<(A, B)> for Value {
    fn from((a, b): (A, B)) -> Self {
        Value::tuple(vec![a.into(), b.into()])
    }
}
impl<A: Into<Value>, B: Into<Value>, C: Into<Value>> From<(A, B, C)> for Value {
    fn from((a, b, c): (A, B, C)) -> Self {
        Value::tuple(vec![a.into(), b.into(), c.into()])
    }
}
