//! Attribute schemas of ops: names, types and defaults.
//!
//! A call's attributes are normalized against its op's schema: every declared
//! attribute is present, in declaration order, with a value of its declared
//! type (defaults filled in). Values are coerced where TVMScript is lenient:
//! an int where a float is expected, a string where a dtype is expected, a
//! single int where a list of ints is expected.

use super::OpInfo;
use crate::ir::{AttrValue, Attrs, PrimExpr};
use relax_runtime::{DataType, Diagnostic};

/// The type of an attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrType {
    /// `True` / `False`.
    Bool,
    /// An integer.
    Int,
    /// An integer or `None`.
    OptInt,
    /// A float.
    Float,
    /// A float or `None`.
    OptFloat,
    /// A string.
    Str,
    /// A string or `None`.
    OptStr,
    /// A dtype; `void` means "same as the input" or "unknown".
    DataType,
    /// A list of integers.
    IntArray,
    /// A list of integers or `None`.
    OptIntArray,
    /// A list of symbolic integers (shapes, strides).
    PrimExprArray,
    /// A list of symbolic integers or `None`.
    OptPrimExprArray,
    /// A scalar number (int or float).
    Number,
    /// An integer or a list of integers, kept apart (`split`'s sections vs indices).
    IntOrIntArray,
    /// A list of numbers, kept as floats (`resize2d`'s `roi`).
    FloatArray,
}

/// The default of an attribute.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AttrDefault {
    /// The attribute must be given.
    Required,
    /// `None`.
    None,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string.
    Str(&'static str),
    /// A dtype by name.
    DataType(&'static str),
    /// A list of integers.
    IntArray(&'static [i64]),
    /// A list of floats.
    FloatArray(&'static [f64]),
    /// The value of the named attribute, declared earlier (conv2d's
    /// `out_layout` is its `data_layout` unless given, as in TVM).
    SameAs(&'static str),
}

/// One declared attribute.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AttrSpec {
    /// The keyword (`axis`, `keepdims`).
    pub name: &'static str,
    /// Its type.
    pub ty: AttrType,
    /// Its default.
    pub default: AttrDefault,
}

impl AttrSpec {
    /// A declared attribute.
    pub const fn new(name: &'static str, ty: AttrType, default: AttrDefault) -> Self {
        AttrSpec { name, ty, default }
    }
}

/// The default of `spec`, in the representation a given value of its type
/// is coerced to: a default must not differ from the same value written
/// out (`dilation=[1, 1]` is a list of `PrimExpr`s whether it was written
/// or defaulted), or a module would not survive printing and parsing.
fn default_of(spec: &AttrSpec) -> Option<AttrValue> {
    let value = default_value(spec.default)?;
    Some(coerce(spec.ty, &value).unwrap_or(value))
}

fn default_value(d: AttrDefault) -> Option<AttrValue> {
    Some(match d {
        AttrDefault::Required | AttrDefault::SameAs(_) => return None,
        AttrDefault::None => AttrValue::None,
        AttrDefault::Bool(b) => AttrValue::Bool(b),
        AttrDefault::Int(i) => AttrValue::Int(i),
        AttrDefault::Float(f) => AttrValue::Float(f),
        AttrDefault::Str(s) => AttrValue::Str(s.to_string()),
        AttrDefault::DataType(s) => AttrValue::DataType(s.parse().unwrap_or(DataType::void())),
        AttrDefault::IntArray(v) => {
            AttrValue::Array(v.iter().map(|&i| AttrValue::Int(i)).collect())
        }
        AttrDefault::FloatArray(v) => {
            AttrValue::Array(v.iter().map(|&f| AttrValue::Float(f)).collect())
        }
    })
}

fn type_name(ty: AttrType) -> &'static str {
    match ty {
        AttrType::Bool => "a bool",
        AttrType::Int => "an integer",
        AttrType::OptInt => "an integer or None",
        AttrType::Float => "a float",
        AttrType::OptFloat => "a float or None",
        AttrType::Str => "a string",
        AttrType::OptStr => "a string or None",
        AttrType::DataType => "a dtype",
        AttrType::IntArray => "a list of integers",
        AttrType::OptIntArray => "a list of integers or None",
        AttrType::PrimExprArray => "a list of integers",
        AttrType::OptPrimExprArray => "a list of integers or None",
        AttrType::Number => "a number",
        AttrType::IntOrIntArray => "an integer or a list of integers",
        AttrType::FloatArray => "a list of numbers",
    }
}

fn value_kind(v: &AttrValue) -> String {
    match v {
        AttrValue::None => "None".into(),
        AttrValue::Bool(b) => format!("the bool {}", if *b { "True" } else { "False" }),
        AttrValue::Int(i) => format!("the integer {i}"),
        AttrValue::Float(f) => format!("the float {f}"),
        AttrValue::Str(s) => format!("the string {s:?}"),
        AttrValue::DataType(d) => format!("the dtype {d}"),
        AttrValue::PrimExpr(e) => format!("the expression {e}"),
        AttrValue::Array(_) => "a list".into(),
    }
}

fn int_of(v: &AttrValue) -> Option<i64> {
    match v {
        AttrValue::Int(i) => Some(*i),
        AttrValue::PrimExpr(e) => e.as_int(),
        _ => None,
    }
}

/// Coerces `v` to `ty`, or `None` if it cannot be.
fn coerce(ty: AttrType, v: &AttrValue) -> Option<AttrValue> {
    use AttrType as T;
    use AttrValue as V;
    let int_array = |v: &AttrValue| -> Option<AttrValue> {
        match v {
            V::Array(items) => items
                .iter()
                .map(|i| int_of(i).map(V::Int))
                .collect::<Option<Vec<_>>>()
                .map(V::Array),
            other => int_of(other).map(|i| V::Array(vec![V::Int(i)])),
        }
    };
    let expr_array = |v: &AttrValue| -> Option<AttrValue> {
        let one = |i: &AttrValue| match i {
            V::Int(k) => Some(V::PrimExpr(PrimExpr::int(*k))),
            V::PrimExpr(e) if e.dtype().is_integer() => Some(V::PrimExpr(e.clone())),
            _ => None,
        };
        match v {
            V::Array(items) => items
                .iter()
                .map(one)
                .collect::<Option<Vec<_>>>()
                .map(V::Array),
            other => one(other).map(|e| V::Array(vec![e])),
        }
    };
    match (ty, v) {
        (T::Bool, V::Bool(_)) => Some(v.clone()),
        (T::Int, _) => int_of(v).map(V::Int),
        (T::OptInt, V::None) => Some(V::None),
        (T::OptInt, _) => int_of(v).map(V::Int),
        (T::Float, V::Float(_)) => Some(v.clone()),
        (T::Float, V::Int(i)) => Some(V::Float(*i as f64)),
        (T::OptFloat, V::None | V::Float(_)) => Some(v.clone()),
        (T::OptFloat, V::Int(i)) => Some(V::Float(*i as f64)),
        (T::OptStr, V::None | V::Str(_)) => Some(v.clone()),
        (T::Number, V::Float(_) | V::Int(_)) => Some(v.clone()),
        (T::Number, V::Bool(b)) => Some(V::Int(*b as i64)),
        (T::Str, V::Str(_)) => Some(v.clone()),
        (T::DataType, V::DataType(_)) => Some(v.clone()),
        (T::DataType, V::Str(s)) => s.parse::<DataType>().ok().map(V::DataType),
        (T::DataType, V::None) => Some(V::DataType(DataType::void())),
        (T::IntArray, _) => int_array(v),
        (T::IntOrIntArray, V::Array(_)) => int_array(v),
        (T::IntOrIntArray, _) => int_of(v).map(V::Int),
        (T::OptIntArray, V::None) => Some(V::None),
        (T::OptIntArray, _) => int_array(v),
        (T::PrimExprArray, _) => expr_array(v),
        (T::OptPrimExprArray, V::None) => Some(V::None),
        (T::OptPrimExprArray, _) => expr_array(v),
        (T::FloatArray, V::Array(items)) => items
            .iter()
            .map(|i| match i {
                V::Float(f) => Some(V::Float(*f)),
                V::Int(k) => Some(V::Float(*k as f64)),
                _ => None,
            })
            .collect::<Option<Vec<_>>>()
            .map(V::Array),
        _ => None,
    }
}

/// See [`OpInfo::normalize_attrs`].
pub(super) fn normalize(op: &OpInfo, given: &Attrs) -> Result<Attrs, Diagnostic> {
    let short = op.short_name();
    for (k, _) in given.iter() {
        if op.attr_spec(k).is_none() {
            let expected = if op.attrs.is_empty() {
                "it takes no attributes".to_string()
            } else {
                format!(
                    "expected one of {}",
                    op.attrs
                        .iter()
                        .map(|a| format!("`{}`", a.name))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            return Err(Diagnostic::new(
                "op-unknown-attr",
                format!("{short}: unknown attribute `{k}`; {expected}"),
            ));
        }
    }
    let mut out = Vec::with_capacity(op.attrs.len());
    for spec in op.attrs {
        let value = match given.get(spec.name) {
            Some(v) => coerce(spec.ty, v).ok_or_else(|| {
                Diagnostic::new(
                    "op-attr-type",
                    format!(
                        "{short}: attribute `{}` must be {}, found {}",
                        spec.name,
                        type_name(spec.ty),
                        value_kind(v)
                    ),
                )
            })?,
            None => match spec.default {
                AttrDefault::SameAs(other) => out
                    .iter()
                    .find(|(name, _)| *name == other)
                    .map(|(_, v): &(&str, AttrValue)| v.clone())
                    .ok_or_else(|| {
                        Diagnostic::new(
                            "op-missing-attr",
                            format!(
                                "{short}: `{}` defaults to `{other}`, which is not declared before it",
                                spec.name
                            ),
                        )
                    })?,
                _ => default_of(spec).ok_or_else(|| {
                    Diagnostic::new(
                        "op-missing-attr",
                        format!("{short}: missing required attribute `{}`", spec.name),
                    )
                })?,
            },
        };
        out.push((spec.name, value));
    }
    Ok(Attrs::from_pairs(out))
}

#[cfg(test)]
mod tests {
    use crate::ir::{AttrValue, Attrs};
    use crate::op::lookup;
    use relax_runtime::DataType;

    #[test]
    fn defaults_are_filled_in_declaration_order() {
        let sum = lookup("relax.sum").unwrap();
        let a = sum
            .normalize_attrs(&Attrs::from_pairs([("keepdims", true)]))
            .unwrap();
        let names: Vec<_> = a.iter().map(|(k, _)| k.to_string()).collect();
        assert_eq!(names, ["axis", "keepdims"]);
        assert_eq!(a.get("axis"), Some(&AttrValue::None));
    }

    #[test]
    fn values_are_coerced_where_tvmscript_is_lenient() {
        let sum = lookup("relax.sum").unwrap();
        let a = sum
            .normalize_attrs(&Attrs::from_pairs([("axis", 1i64)]))
            .unwrap();
        assert_eq!(
            a.get("axis"),
            Some(&AttrValue::Array(vec![AttrValue::Int(1)]))
        );
        let mm = lookup("relax.matmul").unwrap();
        let a = mm
            .normalize_attrs(&Attrs::from_pairs([("out_dtype", "float16")]))
            .unwrap();
        assert_eq!(
            a.get("out_dtype"),
            Some(&AttrValue::DataType(DataType::float(16)))
        );
    }

    #[test]
    fn unknown_and_ill_typed_attributes_are_errors() {
        let sum = lookup("relax.sum").unwrap();
        let e = sum
            .normalize_attrs(&Attrs::from_pairs([("axes", 1i64)]))
            .unwrap_err();
        assert_eq!(
            e.message,
            "sum: unknown attribute `axes`; expected one of `axis`, `keepdims`"
        );
        let e = sum
            .normalize_attrs(&Attrs::from_pairs([("keepdims", 3i64)]))
            .unwrap_err();
        assert_eq!(
            e.message,
            "sum: attribute `keepdims` must be a bool, found the integer 3"
        );
        let relu = lookup("relax.nn.relu").unwrap();
        let e = relu
            .normalize_attrs(&Attrs::from_pairs([("axis", 1i64)]))
            .unwrap_err();
        assert_eq!(
            e.message,
            "nn.relu: unknown attribute `axis`; it takes no attributes"
        );
        let zeros = lookup("relax.zeros").unwrap();
        let e = zeros.normalize_attrs(&Attrs::new()).unwrap_err();
        assert_eq!(e.code, "op-missing-attr");
    }

    /// Every default of every op in the registry is already in the form
    /// its type coerces to, so a defaulted attribute and the same value
    /// written out (as the printer writes it) are structurally equal, and
    /// normalizing twice changes nothing.
    #[test]
    fn defaults_are_fixpoints_of_coercion_over_the_whole_registry() {
        let mut checked = 0;
        for op in crate::op::all() {
            let mut given = Vec::new();
            for spec in op.attrs {
                let Some(default) = super::default_of(spec) else {
                    continue;
                };
                assert_eq!(
                    super::coerce(spec.ty, &default).as_ref(),
                    Some(&default),
                    "{}: the default of `{}` changes when coerced",
                    op.name,
                    spec.name
                );
                given.push((spec.name, default));
                checked += 1;
            }
            if op.attrs.iter().all(|s| super::default_of(s).is_some()) {
                let defaulted = op.normalize_attrs(&Attrs::new()).unwrap();
                let written = op.normalize_attrs(&Attrs::from_pairs(given)).unwrap();
                assert_eq!(defaulted, written, "{}", op.name);
                assert_eq!(op.normalize_attrs(&defaulted).unwrap(), defaulted);
            }
        }
        assert!(checked > 40, "only {checked} defaults seen");
    }
}
