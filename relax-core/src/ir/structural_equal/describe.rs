//! Short, one-line descriptions of IR nodes for mismatch reports.
//!
//! A report names the node at the place of a difference, not the whole
//! subtree: `Var x`, `Call of relax.add`, `Constant float32 (2, 3)`. StructInfo
//! and PrimExprs are small and print as TVMScript through their `Display`.

use crate::ir::attrs::AttrValue;
use crate::ir::expr::{Binding, Expr, ExprKind, Var};
use crate::ir::module::BaseFunc;
pub(super) use crate::ir::struct_info::fmt_dims as dims;
use crate::ir::struct_info::StructInfo;
use relax_runtime::tensor::fmt_shape;

/// `Var x` or `DataflowVar lv0`.
pub(super) fn var(v: &Var) -> String {
    let kind = if v.is_dataflow() {
        "DataflowVar"
    } else {
        "Var"
    };
    format!("{kind} {}", v.name_hint())
}

/// What a call calls, as the call's description names it.
fn callee(op: &Expr) -> String {
    match op.kind() {
        ExprKind::Op(op) => op.name().to_string(),
        ExprKind::GlobalVar(gv) => gv.name_hint().to_string(),
        ExprKind::Var(v) => v.name_hint().to_string(),
        ExprKind::ExternFunc(symbol) => format!("{symbol:?}"),
        _ => "an expression".to_string(),
    }
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// One line naming the kind of `e` and its distinguishing leaf data.
pub(super) fn expr(e: &Expr) -> String {
    match e.kind() {
        ExprKind::Constant(t) => format!("Constant {} {}", t.dtype(), fmt_shape(t.shape())),
        ExprKind::Var(v) => var(v),
        ExprKind::GlobalVar(gv) => format!("GlobalVar {}", gv.name_hint()),
        ExprKind::Tuple(fields) => format!("Tuple of {}", plural(fields.len(), "field")),
        ExprKind::SeqExpr(seq) => format!("SeqExpr of {}", plural(seq.blocks.len(), "block")),
        ExprKind::PrimValue(v) => format!("PrimValue {v}"),
        ExprKind::StringImm(s) => format!("StringImm {s:?}"),
        ExprKind::DataTypeImm(d) => format!("DataTypeImm {d}"),
        ExprKind::Function(f) => format!("Function of {}", plural(f.params.len(), "param")),
        ExprKind::If(_) => "If".to_string(),
        ExprKind::ExternFunc(symbol) => format!("ExternFunc {symbol:?}"),
        ExprKind::Call(call) => format!("Call of {}", callee(&call.op)),
        ExprKind::ShapeExpr(values) => format!("ShapeExpr {}", dims(values)),
        ExprKind::TupleGetItem(_, index) => format!("TupleGetItem [{index}]"),
        ExprKind::Op(op) => format!("Op {}", op.name()),
    }
}

/// `VarBinding of lv0` or `MatchCast of lv0`.
pub(super) fn binding(b: &Binding) -> String {
    match b {
        Binding::VarBinding(vb) => format!("VarBinding of {}", var(&vb.var)),
        Binding::MatchCast(mc) => format!("MatchCast of {}", var(&mc.var)),
    }
}

/// `DataflowBlock` or `BindingBlock`.
pub(super) fn block_kind(is_dataflow: bool) -> &'static str {
    if is_dataflow {
        "DataflowBlock"
    } else {
        "BindingBlock"
    }
}

/// `pure` or `impure`.
pub(super) fn purity(pure: bool) -> &'static str {
    if pure {
        "pure"
    } else {
        "impure"
    }
}

/// A Relax function, a PrimFunc or an external function.
pub(super) fn base_func(f: &BaseFunc) -> String {
    match f {
        BaseFunc::Relax(_) => "a Relax function".into(),
        BaseFunc::Prim(_) => "a PrimFunc".into(),
        BaseFunc::Extern(symbol) => format!("the external function {symbol:?}"),
    }
}

/// The StructInfo annotation of a variable, or its absence.
pub(super) fn annotation(s: Option<&StructInfo>) -> String {
    match s {
        Some(s) => s.to_string(),
        None => "no StructInfo".to_string(),
    }
}

/// An attribute value as TVMScript writes it.
pub(super) fn attr(v: &AttrValue) -> String {
    match v {
        AttrValue::None => "None".to_string(),
        AttrValue::Bool(b) => if *b { "True" } else { "False" }.to_string(),
        AttrValue::Int(i) => i.to_string(),
        AttrValue::Float(f) => format!("{f:?}"),
        AttrValue::Str(s) => format!("{s:?}"),
        AttrValue::DataType(d) => format!("\"{d}\""),
        AttrValue::PrimExpr(e) => e.to_string(),
        AttrValue::Array(items) => format!(
            "[{}]",
            items.iter().map(attr).collect::<Vec<_>>().join(", ")
        ),
    }
}
