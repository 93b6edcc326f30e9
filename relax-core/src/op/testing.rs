//! Terse builders for op inference tests.

use crate::arith::Analyzer;
use crate::ir::{AttrValue, Attrs, Expr, PrimExpr, StructInfo, TirVar};
use relax_runtime::DataType;

pub const F32: DataType = DataType::f32();
pub const F16: DataType = DataType::float(16);
pub const I64: DataType = DataType::i64();
pub const I32: DataType = DataType::i32();
pub const BOOL: DataType = DataType::bool();
pub const VOID: DataType = DataType::void();

/// An argument with the given StructInfo that is not a variable, so messages
/// name it by the op's parameter name.
pub fn arg(s: StructInfo) -> Expr {
    Expr::tuple(vec![]).with_struct_info(s)
}
/// A literal dim.
pub fn d(v: i64) -> PrimExpr {
    PrimExpr::int(v)
}
/// A fresh symbolic dim. Names repeat across calls but vars do not; tests
/// that need the same var twice keep the returned expression.
pub fn sym(name: &str) -> PrimExpr {
    PrimExpr::var(&TirVar::new(name))
}
/// A tensor argument of known shape.
pub fn t(dims: &[PrimExpr], dtype: DataType) -> Expr {
    arg(StructInfo::tensor(dims.to_vec(), dtype))
}
/// A tensor argument of known rank only (-1: unknown).
pub fn tn(ndim: i32, dtype: DataType) -> Expr {
    arg(StructInfo::tensor_ndim(ndim, dtype))
}
/// A shape argument.
pub fn shape(dims: &[PrimExpr]) -> Expr {
    Expr::shape(dims.to_vec())
}
/// An int-list attribute value.
pub fn ints(v: &[i64]) -> AttrValue {
    AttrValue::from(v.to_vec())
}

fn infer(op: &str, args: &[Expr], attrs: &[(&str, AttrValue)]) -> Result<StructInfo, String> {
    let info = crate::op::lookup(op).unwrap_or_else(|| panic!("{op} is not registered"));
    let attrs = Attrs::from_pairs(attrs.iter().map(|(k, v)| (*k, v.clone())));
    let call = info.call(args.to_vec(), &attrs).map_err(|d| d.message)?;
    let mut ana = Analyzer::new();
    for a in args {
        for v in a.struct_info().map(|s| s.tir_vars()).unwrap_or_default() {
            ana.mark_non_negative(&v);
        }
    }
    crate::op::infer_call(call.as_call().unwrap(), &ana)
        .unwrap()
        .map_err(|d| d.message)
}

/// Asserts the inferred StructInfo prints as `expected`.
pub fn assert_infers(op: &str, args: &[Expr], attrs: &[(&str, AttrValue)], expected: &str) {
    match infer(op, args, attrs) {
        Ok(s) => assert_eq!(s.to_string(), expected, "{op}"),
        Err(e) => panic!("{op}: expected {expected}, got the error: {e}"),
    }
}

/// Asserts inference (or attribute checking) fails with `message`.
pub fn assert_fails(op: &str, args: &[Expr], attrs: &[(&str, AttrValue)], message: &str) {
    match infer(op, args, attrs) {
        Ok(s) => panic!("{op}: expected the error {message:?}, inferred {s}"),
        Err(e) => assert_eq!(e, message, "{op}"),
    }
}
