//! Evaluated attributes as kernels read them.

use crate::data_type::DataType;
use crate::executable::KernelAttr;

/// A call's attributes, complete (defaults filled in) and evaluated (no
/// symbolic values left).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelAttrs(pub Vec<(String, KernelAttr)>);

impl KernelAttrs {
    /// The raw value of `name`.
    pub fn get(&self, name: &str) -> Option<&KernelAttr> {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }
    /// Whether `name` is absent or `None`.
    pub fn is_none(&self, name: &str) -> bool {
        matches!(self.get(name), None | Some(KernelAttr::None))
    }
    /// `name` as an integer.
    pub fn int(&self, name: &str) -> Result<i64, String> {
        match self.get(name) {
            Some(KernelAttr::Int(i)) => Ok(*i),
            other => Err(format!(
                "attribute `{name}` must be an integer, found {other:?}"
            )),
        }
    }
    /// `name` as an optional integer (`None` → `Ok(None)`).
    pub fn opt_int(&self, name: &str) -> Result<Option<i64>, String> {
        if self.is_none(name) {
            return Ok(None);
        }
        self.int(name).map(Some)
    }
    /// `name` as a list of integers (a single integer counts as a list).
    pub fn ints(&self, name: &str) -> Result<Vec<i64>, String> {
        match self.get(name) {
            Some(KernelAttr::Int(i)) => Ok(vec![*i]),
            Some(KernelAttr::Array(items)) => items
                .iter()
                .map(|v| match v {
                    KernelAttr::Int(i) => Ok(*i),
                    other => Err(format!(
                        "attribute `{name}` must hold integers, found {other:?}"
                    )),
                })
                .collect(),
            other => Err(format!(
                "attribute `{name}` must be a list of integers, found {other:?}"
            )),
        }
    }
    /// `name` as an optional list of integers.
    pub fn opt_ints(&self, name: &str) -> Result<Option<Vec<i64>>, String> {
        if self.is_none(name) {
            return Ok(None);
        }
        self.ints(name).map(Some)
    }
    /// `name` as a bool (`default` when absent).
    pub fn bool_or(&self, name: &str, default: bool) -> Result<bool, String> {
        match self.get(name) {
            None | Some(KernelAttr::None) => Ok(default),
            Some(KernelAttr::Bool(b)) => Ok(*b),
            other => Err(format!(
                "attribute `{name}` must be a bool, found {other:?}"
            )),
        }
    }
    /// `name` as a float (an integer is accepted).
    pub fn float(&self, name: &str) -> Result<f64, String> {
        match self.get(name) {
            Some(KernelAttr::Float(f)) => Ok(*f),
            Some(KernelAttr::Int(i)) => Ok(*i as f64),
            other => Err(format!(
                "attribute `{name}` must be a float, found {other:?}"
            )),
        }
    }
    /// `name` as a dtype (`void` when absent or `None`).
    pub fn dtype(&self, name: &str) -> Result<DataType, String> {
        match self.get(name) {
            None | Some(KernelAttr::None) => Ok(DataType::void()),
            Some(KernelAttr::DataType(d)) => Ok(*d),
            Some(KernelAttr::Str(s)) => s.parse().map_err(|e| format!("attribute `{name}`: {e}")),
            other => Err(format!(
                "attribute `{name}` must be a dtype, found {other:?}"
            )),
        }
    }
    /// `name` as a string.
    pub fn str(&self, name: &str) -> Result<&str, String> {
        match self.get(name) {
            Some(KernelAttr::Str(s)) => Ok(s),
            other => Err(format!(
                "attribute `{name}` must be a string, found {other:?}"
            )),
        }
    }
}
