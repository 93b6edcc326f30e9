//! Printing the parts that carry symbolic variables: `PrimExpr`s, StructInfo
//! annotations and attribute values.
//!
//! These mirror the `Display` impls of [`PrimExpr`] and [`StructInfo`] (same
//! syntax, same Python precedence rules) but print every variable through the
//! printer's name table, so a symbolic var prints as the same unique name as
//! its `n = T.int64()` declaration. Inside a function signature a dimension
//! that mentions a symbolic var prints as a string (`"n"`, `"n * 2"`), the
//! form in which TVMScript declares symbolic vars from parameter annotations.
//! Loop-level functions (`tir.rs`) print their expressions here too.

use super::relax::Printer;
use crate::ir::attrs::AttrValue;
use crate::ir::expr::ExprKind;
use crate::ir::prim_expr::{PrimExpr, PrimExprKind, TirVar};
use crate::ir::struct_info::{DeriveFunc, StructInfo, StructInfoKind, UNKNOWN_NDIM};
use crate::tir::Buffer;
use relax_runtime::DataType;

/// Precedence levels of Python's grammar (the same table `PrimExpr`'s
/// `Display` uses), higher binds tighter.
fn precedence(k: &PrimExprKind) -> u8 {
    use PrimExprKind::*;
    match k {
        Or(..) => 1,
        And(..) => 2,
        Not(..) => 3,
        Eq(..) | Ne(..) | Lt(..) | Le(..) | Gt(..) | Ge(..) => 4,
        Add(..) | Sub(..) => 5,
        Mul(..) | Div(..) | Mod(..) => 6,
        _ => 9,
    }
}

/// `s` as a Python string literal in double quotes.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            // Other control characters would not survive a text editor.
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `(a, b)`, with Python's trailing comma for one element.
pub(crate) fn py_tuple(items: &[String]) -> String {
    match items {
        [one] => format!("({one},)"),
        _ => format!("({})", items.join(", ")),
    }
}

impl Printer {
    /// The name of a symbolic variable.
    pub(crate) fn tir_var_name(&mut self, v: &TirVar) -> String {
        self.names.get(v.id(), v.name())
    }

    /// A PrimExpr in TVMScript, variables through the name table.
    pub(crate) fn prim(&mut self, e: &PrimExpr) -> String {
        self.scalar(e, false)
    }

    /// A PrimExpr in Relax's syntax, or with `loop_level` in TIR's, which
    /// writes division of floats as `/` (Relax's `//` reads back the same
    /// node, and Relax has no `/`).
    pub(crate) fn scalar(&mut self, e: &PrimExpr, loop_level: bool) -> String {
        use PrimExprKind::*;
        let p = precedence(e.kind());
        let infix = |this: &mut Self, a: &PrimExpr, op: &str, b: &PrimExpr| -> String {
            let a = this.scalar_operand(a, p, false, loop_level);
            let b = this.scalar_operand(b, p, true, loop_level);
            format!("{a} {op} {b}")
        };
        let call = |this: &mut Self, name: &str, args: &[&PrimExpr]| -> String {
            this.uses_tir = true;
            let args: Vec<String> = args.iter().map(|a| this.scalar(a, loop_level)).collect();
            format!("T.{name}({})", args.join(", "))
        };
        match e.kind() {
            Var(v) => self.tir_var_name(v),
            IntImm(v) if e.dtype().is_bool() => (if *v != 0 { "True" } else { "False" }).into(),
            IntImm(v) if e.dtype() == DataType::i64() => v.to_string(),
            IntImm(v) => {
                self.uses_tir = true;
                format!("T.{}({v})", e.dtype())
            }
            FloatImm(v) if !v.is_finite() => {
                // As TVM prints them: a string the parser reads back.
                self.uses_tir = true;
                let text = if v.is_nan() {
                    "nan"
                } else if *v > 0.0 {
                    "inf"
                } else {
                    "-inf"
                };
                format!("T.{}(\"{text}\")", e.dtype())
            }
            FloatImm(v) => {
                self.uses_tir = true;
                format!(
                    "T.{}({})",
                    e.dtype(),
                    relax_runtime::tensor::format_float(*v, e.dtype().bits())
                )
            }
            Add(a, b) => infix(self, a, "+", b),
            Sub(a, b) => infix(self, a, "-", b),
            Mul(a, b) => infix(self, a, "*", b),
            Div(a, b) if loop_level && e.dtype().is_float() => infix(self, a, "/", b),
            Div(a, b) => infix(self, a, "//", b),
            Mod(a, b) => infix(self, a, "%", b),
            Eq(a, b) => infix(self, a, "==", b),
            Ne(a, b) => infix(self, a, "!=", b),
            Lt(a, b) => infix(self, a, "<", b),
            Le(a, b) => infix(self, a, "<=", b),
            Gt(a, b) => infix(self, a, ">", b),
            Ge(a, b) => infix(self, a, ">=", b),
            And(a, b) => infix(self, a, "and", b),
            Or(a, b) => infix(self, a, "or", b),
            Not(a) => format!("not {}", self.scalar_operand(a, p, false, loop_level)),
            Min(a, b) => call(self, "min", &[a, b]),
            Max(a, b) => call(self, "max", &[a, b]),
            Select(c, t, f) => call(self, "Select", &[c, t, f]),
            Cast(a) => {
                self.uses_tir = true;
                let a = self.scalar(a, loop_level);
                format!("T.Cast(\"{}\", {a})", e.dtype())
            }
            BufferLoad(b, idx) => self.buffer_access(b, idx, loop_level),
            Call(name, args) => {
                let args: Vec<&PrimExpr> = args.iter().collect();
                call(self, name, &args)
            }
        }
    }

    /// `A[i, j]`.
    pub(crate) fn buffer_access(
        &mut self,
        b: &Buffer,
        indices: &[PrimExpr],
        loop_level: bool,
    ) -> String {
        let name = self.names.get(b.id(), b.name());
        let idx: Vec<String> = indices.iter().map(|i| self.scalar(i, loop_level)).collect();
        format!("{name}[{}]", idx.join(", "))
    }

    /// An operand of an operator of precedence `parent`, parenthesized where
    /// Python would otherwise regroup it.
    fn scalar_operand(
        &mut self,
        e: &PrimExpr,
        parent: u8,
        right: bool,
        loop_level: bool,
    ) -> String {
        let p = precedence(e.kind());
        // Python operators are left-associative: a right operand of equal
        // precedence needs parentheses (`a - (b - c)`), a left one does not;
        // comparisons chain in Python, so they always need them.
        let needs = p < parent || (right && p == parent) || (p == 4 && parent == 4);
        let negative_literal = matches!(e.kind(), PrimExprKind::IntImm(v) if *v < 0) && parent >= 5;
        let text = self.scalar(e, loop_level);
        if needs || negative_literal {
            format!("({text})")
        } else {
            text
        }
    }

    /// A dimension or prim value of a StructInfo: in a signature, one that
    /// mentions a symbolic var prints as a string.
    fn dim(&mut self, e: &PrimExpr) -> String {
        let text = self.prim(e);
        if self.in_signature && !e.free_vars().is_empty() {
            quote(&text)
        } else {
            text
        }
    }

    fn dims(&mut self, values: &[PrimExpr]) -> Vec<String> {
        values.iter().map(|d| self.dim(d)).collect()
    }

    /// A StructInfo annotation (`R.Tensor((n, 4), dtype="float32")`, …).
    pub(crate) fn sinfo(&mut self, s: &StructInfo) -> String {
        match s.kind() {
            StructInfoKind::Object => "R.Object".into(),
            StructInfoKind::Prim(p) => match &p.value {
                Some(v) => format!("R.Prim(value={})", self.dim(v)),
                None => format!("R.Prim({})", quote(&p.dtype.to_string())),
            },
            StructInfoKind::Shape(sh) => match &sh.values {
                Some(vs) => format!("R.Shape([{}])", self.dims(vs).join(", ")),
                None if sh.ndim == UNKNOWN_NDIM => "R.Shape".into(),
                None => format!("R.Shape(ndim={})", sh.ndim),
            },
            StructInfoKind::Tensor(t) => {
                let mut args = Vec::new();
                if let Some(shape) = &t.shape {
                    args.push(match shape.kind() {
                        ExprKind::ShapeExpr(vs) => py_tuple(&self.dims(vs)),
                        _ => self.expr(shape),
                    });
                }
                if !t.dtype.is_void() {
                    args.push(format!("dtype={}", quote(&t.dtype.to_string())));
                }
                if t.shape.is_none() && t.ndim != UNKNOWN_NDIM {
                    args.push(format!("ndim={}", t.ndim));
                }
                if args.is_empty() {
                    "R.Tensor".into()
                } else {
                    format!("R.Tensor({})", args.join(", "))
                }
            }
            StructInfoKind::Tuple(fields) if fields.is_empty() => "R.Tuple".into(),
            StructInfoKind::Tuple(fields) => {
                let fields: Vec<String> = fields.iter().map(|f| self.sinfo(f)).collect();
                format!("R.Tuple({})", fields.join(", "))
            }
            StructInfoKind::Func(func) => match &func.params {
                Some(ps) => {
                    let params: Vec<String> = ps.iter().map(|p| self.sinfo(p)).collect();
                    let ret = self.sinfo(&func.ret);
                    let purity = if func.purity { "True" } else { "False" };
                    format!("R.Callable({}, {ret}, {purity})", py_tuple(&params))
                }
                // An opaque function of default derivation and unknown
                // result is bare `R.Callable`, as TVM prints it (TVM 0.27
                // rejects `derive_func=` beside `ret=`).
                None if func.ret.is_object()
                    && matches!(func.derive_func, Some(DeriveFunc::Default) | None) =>
                {
                    "R.Callable".into()
                }
                None => {
                    let derive = match func.derive_func {
                        Some(DeriveFunc::Empty) => "empty_derive",
                        _ => "default_derive",
                    };
                    let ret = self.sinfo(&func.ret);
                    format!("R.Callable(derive_func=\"{derive}\", ret={ret})")
                }
            },
        }
    }

    /// An attribute value: `1`, `True`, `1.5`, `"s"`, `"float32"`, `[a, b]`, `None`.
    pub(crate) fn attr_value(&mut self, v: &AttrValue) -> String {
        match v {
            AttrValue::None => "None".into(),
            AttrValue::Bool(b) => (if *b { "True" } else { "False" }).into(),
            AttrValue::Int(i) => i.to_string(),
            AttrValue::Float(x) => relax_runtime::tensor::format_float(*x, 64),
            AttrValue::Str(s) => quote(s),
            // "No dtype" (same as the input) is `None`, as TVM prints it;
            // TVM 0.27 rejects `"void"` there.
            AttrValue::DataType(d) if d.is_void() => "None".into(),
            AttrValue::DataType(d) => quote(&d.to_string()),
            AttrValue::PrimExpr(e) => self.prim(e),
            AttrValue::Array(items) => {
                let items: Vec<String> = items.iter().map(|i| self.attr_value(i)).collect();
                format!("[{}]", items.join(", "))
            }
        }
    }
}
