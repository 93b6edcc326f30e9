//! An `IRModule` as Rust source in the DSL (`relax::module! { … }`), the
//! inverse of the macro's lowering: `relax import model.onnx -o model.rs`
//! writes an imported model with it, for a user to check in and compile.
//!
//! 1. Each Relax function becomes `#[function] pub fn name(params) -> Ret
//!    { … }` (`pub` when it has a global symbol), its attributes
//!    `#[func_attr(key = value)]`; StructInfo prints in the DSL's
//!    annotation syntax (`Tensor![(n, 64), f32]`).
//! 2. Bindings become `let name = R::op(args, attr = value);` in
//!    `R::dataflow! { … R::output(…); }` for dataflow blocks; tuples are
//!    `(a, b)`, projections `t.0`, calls of module functions `f(x)`, shapes
//!    `R::shape([…])`, `match_cast` `R::match_cast(x, Tensor![…])`.
//! 3. A scalar constant is a suffixed literal (`0.5f32`, `3i64`); any other
//!    constant becomes a trailing parameter of its function, returned in
//!    [`DslModule::constants`] (the caller stores them as weights).
//! 4. Variable names are made Rust identifiers, unique per function.
//!
//! What the DSL cannot express is an error naming it (control flow,
//! closures, `call_tir` of PrimFuncs: modules before legalization only).

use crate::ir::{
    AttrValue, Binding, DataType, Expr, ExprKind, Function, IRModule, PrimExpr, StructInfo,
    StructInfoKind, Var,
};
use relax_runtime::Tensor;
use std::collections::{HashMap, HashSet};
use std::fmt::Write;

/// A module in DSL source.
#[derive(Clone, Debug)]
pub struct DslModule {
    /// The `relax::module! { … }` item.
    pub text: String,
    /// The non-scalar constants lifted to parameters, per function: the
    /// function, and each parameter's name and value, in parameter order.
    pub constants: Vec<(String, Vec<(String, Tensor)>)>,
}

const KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "self", "Self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where",
    "while", "async", "await", "dyn", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen", "R", "T", "None",
    "module",
];

/// `name` as a variable name of both TVMScript and Rust, keywords aside:
/// characters other than ASCII letters, digits and `_` become `_`, and an
/// empty name or one with a leading digit gets a `v` before it.
pub fn identifier(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, 'v');
    }
    s
}

/// `name` as a Rust identifier ([`identifier`], and not a keyword).
pub fn rust_identifier(name: &str) -> String {
    let mut s = identifier(name);
    if KEYWORDS.contains(&s.as_str()) || s == "_" {
        s.push('_');
    }
    s
}

/// A dtype as the DSL writes it (`f32`, `i64`, `bool`).
fn dtype(d: DataType) -> String {
    d.short_name()
}

/// A dim in the DSL's Rust-expression syntax (`n * 2 + 1`; `/` and `%`
/// floor, as the DSL reads them).
fn prim(e: &PrimExpr) -> String {
    use crate::ir::PrimExprKind as K;
    let bin = |a: &PrimExpr, op: &str, b: &PrimExpr| format!("({} {op} {})", prim(a), prim(b));
    match e.kind() {
        K::Var(v) => rust_identifier(v.name()),
        K::IntImm(i) => i.to_string(),
        K::Add(a, b) => bin(a, "+", b),
        K::Sub(a, b) => bin(a, "-", b),
        K::Mul(a, b) => bin(a, "*", b),
        K::Div(a, b) => bin(a, "/", b),
        K::Mod(a, b) => bin(a, "%", b),
        _ => format!("{e:?}"),
    }
}

fn shape(dims: &[PrimExpr]) -> String {
    let inner: Vec<String> = dims.iter().map(prim).collect();
    if inner.len() == 1 {
        format!("({},)", inner[0])
    } else {
        format!("({})", inner.join(", "))
    }
}

/// StructInfo in the DSL's annotation syntax.
pub fn struct_info(s: &StructInfo) -> Result<String, String> {
    Ok(match s.kind() {
        StructInfoKind::Tensor(t) => {
            let d = if t.dtype.is_void() {
                "_".to_string()
            } else {
                dtype(t.dtype)
            };
            match t.shape_values() {
                Some(dims) => format!("Tensor![{}, {d}]", shape(dims)),
                None if t.is_unknown_ndim() => format!("Tensor![_, {d}]"),
                None => format!("Tensor![ndim = {}, {d}]", t.ndim),
            }
        }
        StructInfoKind::Shape(sh) => match &sh.values {
            Some(v) => format!("Shape![{}]", shape(v)),
            None => format!("Shape![ndim = {}]", sh.ndim),
        },
        StructInfoKind::Tuple(fields) => {
            let f = fields
                .iter()
                .map(struct_info)
                .collect::<Result<Vec<_>, _>>()?;
            if f.len() == 1 {
                format!("({},)", f[0])
            } else {
                format!("({})", f.join(", "))
            }
        }
        StructInfoKind::Prim(p) => dtype(p.dtype),
        StructInfoKind::Object => "Object".into(),
        _ => return Err(format!("StructInfo {s} has no DSL annotation here")),
    })
}

fn attr_value(v: &AttrValue) -> Result<String, String> {
    Ok(match v {
        AttrValue::None => "None".into(),
        AttrValue::Bool(b) => b.to_string(),
        AttrValue::Int(i) => i.to_string(),
        AttrValue::Float(f) if f.is_finite() => float_literal(format!("{f:?}")),
        AttrValue::Float(f) => return Err(format!("the attribute value {f} has no literal")),
        AttrValue::Str(s) => format!("{s:?}"),
        AttrValue::DataType(d) if d.is_void() => "None".into(),
        AttrValue::DataType(d) => dtype(*d),
        AttrValue::PrimExpr(e) => prim(e),
        AttrValue::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(attr_value)
                .collect::<Result<Vec<_>, _>>()?
                .join(", ")
        ),
    })
}

/// A finite float's `Debug` text as a Rust float literal (`1` is `1.0`).
fn float_literal(s: String) -> String {
    if s.contains('.') || s.contains('e') {
        s
    } else {
        format!("{s}.0")
    }
}

/// A scalar constant as a suffixed literal, if it has one.
fn scalar_literal(t: &Tensor) -> Option<String> {
    if t.ndim() != 0 {
        return None;
    }
    let d = t.dtype();
    let v = *t.to_f64_vec().first()?;
    if d == DataType::f32() || d == DataType::f64() {
        if !v.is_finite() {
            return None;
        }
        let s = if d == DataType::f32() {
            format!("{:?}", v as f32)
        } else {
            format!("{v:?}")
        };
        Some(format!("{}{}", float_literal(s), dtype(d)))
    } else if d.is_bool() {
        Some((v != 0.0).to_string())
    } else if d.is_integer() {
        Some(format!("{}{}", v as i128, dtype(d)))
    } else {
        None
    }
}

/// The printer of one function.
struct FnPrinter {
    names: HashMap<Var, String>,
    used: HashSet<String>,
    lifted: Vec<(String, Tensor)>,
}

impl FnPrinter {
    fn name(&mut self, v: &Var) -> String {
        if let Some(n) = self.names.get(v) {
            return n.clone();
        }
        let base = rust_identifier(v.name_hint());
        let mut n = base.clone();
        let mut k = 1;
        while !self.used.insert(n.clone()) {
            n = format!("{base}_{k}");
            k += 1;
        }
        self.names.insert(v.clone(), n.clone());
        n
    }

    /// An argument or value expression.
    fn expr(&mut self, e: &Expr) -> Result<String, String> {
        Ok(match e.kind() {
            ExprKind::Var(v) => self.name(v),
            ExprKind::GlobalVar(g) => rust_identifier(g.name_hint()),
            ExprKind::Constant(t) => match scalar_literal(t) {
                Some(l) => l,
                None => {
                    let mut n = format!("const_{}", self.lifted.len());
                    while self.used.contains(&n) {
                        n.push('_');
                    }
                    self.used.insert(n.clone());
                    self.lifted.push((n.clone(), t.clone()));
                    n
                }
            },
            ExprKind::Tuple(fields) => {
                let f = fields
                    .iter()
                    .map(|x| self.expr(x))
                    .collect::<Result<Vec<_>, _>>()?;
                if f.len() == 1 {
                    format!("({},)", f[0])
                } else {
                    format!("({})", f.join(", "))
                }
            }
            ExprKind::TupleGetItem(t, i) => format!("{}.{i}", self.expr(t)?),
            ExprKind::ShapeExpr(dims) => format!(
                "R::shape([{}])",
                dims.iter().map(prim).collect::<Vec<_>>().join(", ")
            ),
            ExprKind::PrimValue(p) => format!("R::prim({})", prim(p)),
            ExprKind::DataTypeImm(d) => format!("R::dtype({:?})", d.to_string()),
            ExprKind::Call(call) => {
                let args = call
                    .args
                    .iter()
                    .map(|a| self.expr(a))
                    .collect::<Result<Vec<_>, _>>()?;
                match call.op.kind() {
                    ExprKind::Op(op) => {
                        let name = op.name();
                        if matches!(
                            name,
                            "relax.call_tir" | "relax.call_dps_packed" | "relax.call_pure_packed"
                        ) {
                            return Err(format!(
                                "`{name}` is not written back as DSL (give a module before legalization)"
                            ));
                        }
                        let path = name
                            .strip_prefix("relax.")
                            .ok_or_else(|| format!("op `{name}` is not a Relax op"))?
                            .split('.')
                            .map(|seg| {
                                // `R::r#where`: a keyword is written raw.
                                if KEYWORDS.contains(&seg) {
                                    format!("r#{seg}")
                                } else {
                                    seg.to_string()
                                }
                            })
                            .collect::<Vec<_>>()
                            .join("::");
                        let mut parts = args;
                        for (k, v) in call.attrs.iter() {
                            parts.push(format!("{k} = {}", attr_value(v)?));
                        }
                        format!("R::{path}({})", parts.join(", "))
                    }
                    ExprKind::GlobalVar(g) => {
                        format!("{}({})", rust_identifier(g.name_hint()), args.join(", "))
                    }
                    _ => return Err("a call of a closure is not written as DSL".into()),
                }
            }
            _ => return Err(format!("the expression {e} is not written as DSL")),
        })
    }

    fn function(&mut self, name: &str, f: &Function) -> Result<String, String> {
        let mut body = String::new();
        let seq = f
            .body
            .as_seq()
            .ok_or_else(|| format!("the body of `{name}` is not a SeqExpr"))?;
        let params: Vec<String> = f.params.iter().map(|p| self.name(p)).collect();
        for block in &seq.blocks {
            let mut lines = Vec::new();
            let mut outputs = Vec::new();
            for b in &block.bindings {
                let value = match b {
                    Binding::VarBinding(vb) => self.expr(&vb.value)?,
                    Binding::MatchCast(mc) => format!(
                        "R::match_cast({}, {})",
                        self.expr(&mc.value)?,
                        struct_info(&mc.struct_info)?
                    ),
                };
                let var = self.name(b.var());
                if block.is_dataflow && !b.var().is_dataflow() {
                    outputs.push(var.clone());
                }
                lines.push(format!("let {var} = {value};"));
            }
            if block.is_dataflow {
                body.push_str("            R::dataflow! {\n");
                for l in lines {
                    let _ = writeln!(body, "                {l}");
                }
                let _ = writeln!(body, "                R::output({});", outputs.join(", "));
                body.push_str("            }\n");
            } else {
                for l in lines {
                    let _ = writeln!(body, "            {l}");
                }
            }
        }
        let result = self.expr(&seq.body)?;
        let _ = writeln!(body, "            {result}");
        // The signature, lifted constants last.
        let mut sig = Vec::new();
        for (p, n) in f.params.iter().zip(&params) {
            let s = p.struct_info().cloned().unwrap_or_else(StructInfo::object);
            sig.push(format!("{n}: {}", struct_info(&s)?));
        }
        for (n, t) in &self.lifted {
            let dims: Vec<PrimExpr> = t.shape().iter().map(|&d| PrimExpr::int(d)).collect();
            sig.push(format!(
                "{n}: {}",
                struct_info(&StructInfo::tensor(dims, t.dtype()))?
            ));
        }
        let mut head = String::new();
        for (k, v) in f.attrs.iter() {
            if k == "global_symbol" {
                continue;
            }
            if let AttrValue::Int(_) | AttrValue::Str(_) | AttrValue::Bool(_) = v {
                let _ = writeln!(head, "        #[func_attr({k} = {})]", attr_value(v)?);
            }
        }
        let pure = if f.is_pure { "" } else { "(pure = false)" };
        let vis = if f.global_symbol().is_some() {
            "pub "
        } else {
            ""
        };
        Ok(format!(
            "{head}        #[function{pure}]\n        {vis}fn {}(\n{}        ) -> {} {{\n{body}        }}\n",
            rust_identifier(name),
            sig.iter()
                .map(|s| format!("            {s},\n"))
                .collect::<String>(),
            struct_info(&f.ret_struct_info)?
        ))
    }
}

/// `module` as `relax::module! { /// doc\n pub mod mod_name { … } }`.
pub fn module_to_dsl(module: &IRModule, mod_name: &str, doc: &str) -> Result<DslModule, String> {
    let mut text = String::from("relax::module! {\n");
    for line in doc.lines() {
        let _ = writeln!(text, "    /// {line}");
    }
    let _ = writeln!(text, "    pub mod {} {{", rust_identifier(mod_name));
    let mut constants = Vec::new();
    let mut first = true;
    for (gv, f) in module.functions() {
        let Some(f) = f.as_relax() else {
            return Err(format!(
                "`{}` is a PrimFunc, which the DSL does not write",
                gv.name_hint()
            ));
        };
        let mut p = FnPrinter {
            names: HashMap::new(),
            used: HashSet::new(),
            lifted: Vec::new(),
        };
        let code = p.function(gv.name_hint(), f)?;
        if !first {
            text.push('\n');
        }
        first = false;
        text.push_str(&code);
        constants.push((gv.name_hint().to_string(), p.lifted));
    }
    text.push_str("    }\n}\n");
    Ok(DslModule { text, constants })
}

#[cfg(all(test, feature = "syntax"))]
mod tests {
    use super::*;
    use crate::ir::structural_equal_report;
    use std::str::FromStr;

    /// Printed as DSL and lowered back by the macro's frontend, a module is
    /// the same module (its non-scalar constants now parameters).
    #[test]
    fn dsl_text_lowers_back_to_the_module() {
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 4), dtype="float32"), w: R.Tensor((3, 4), dtype="float32")) -> R.Tuple(R.Tensor(("n", 3), dtype="float32"), R.Tensor(("n", 2), dtype="float32")):
        n = T.int64()
        with R.dataflow():
            wt: R.Tensor((4, 3), dtype="float32") = R.permute_dims(w, axes=None)
            lv: R.Tensor((n, 3), dtype="float32") = R.matmul(x, wt, out_dtype=None)
            pos: R.Tensor((n, 3), dtype="bool") = R.greater(lv, R.const(0.5, "float32"))
            y: R.Tensor((n, 3), dtype="float32") = R.where(pos, lv, R.const(-1.0, "float32"))
            parts: R.Tuple(R.Tensor((n, 1), dtype="float32"), R.Tensor((n, 2), dtype="float32")) = R.split(y, indices_or_sections=[1], axis=1)
            tail: R.Tensor((n, 2), dtype="float32") = parts[1]
            gv = (y, tail)
            R.output(gv)
        return gv
"#;
        let module: IRModule = text.parse().unwrap();
        let dsl = module_to_dsl(&module, "m", "A test module.").unwrap();
        assert!(
            dsl.text.contains("R::r#where(pos, lv, -1.0f32)"),
            "{}",
            dsl.text
        );
        assert!(dsl.text.contains("let tail = parts.1;"), "{}", dsl.text);
        let inner = dsl
            .text
            .trim()
            .strip_prefix("relax::module! {")
            .and_then(|t| t.strip_suffix('}'))
            .unwrap();
        let tokens = proc_macro2::TokenStream::from_str(inner).unwrap();
        let lowered = crate::frontend::lower_module_macro(tokens)
            .unwrap_or_else(|e| panic!("{}\n{}", e[0].message, dsl.text));
        if let Err(e) = structural_equal_report(&lowered.module, &module) {
            panic!("{e}\n{}\n{}", dsl.text, lowered.module);
        }
    }

    /// A dtype value (`memory.view`'s) is written `R::dtype("…")` and
    /// lowers back.
    #[test]
    fn dtype_values_lower_back() {
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 3), dtype="int32"):
        gv: R.Tensor((2, 3), dtype="int32") = R.memory.view(x, R.shape([2, 3]), R.dtype("int32"), R.prim_value(0))
        return gv
"#;
        let module: IRModule = text.parse().unwrap();
        let dsl = module_to_dsl(&module, "m", "").unwrap();
        assert!(
            dsl.text
                .contains("R::memory::view(x, R::shape([2, 3]), R::dtype(\"int32\"), R::prim(0))"),
            "{}",
            dsl.text
        );
        let inner = dsl
            .text
            .trim()
            .strip_prefix("relax::module! {")
            .and_then(|t| t.strip_suffix('}'))
            .unwrap();
        let tokens = proc_macro2::TokenStream::from_str(inner).unwrap();
        let lowered = crate::frontend::lower_module_macro(tokens)
            .unwrap_or_else(|e| panic!("{}\n{}", e[0].message, dsl.text));
        if let Err(e) = structural_equal_report(&lowered.module, &module) {
            panic!("{e}\n{}\n{}", dsl.text, lowered.module);
        }
    }

    #[test]
    fn tensor_constants_become_parameters() {
        let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        gv: R.Tensor((2,), dtype="float32") = R.add(x, R.const([1.0, 2.0], "float32"))
        return gv
"#;
        let module: IRModule = text.parse().unwrap();
        let dsl = module_to_dsl(&module, "m", "").unwrap();
        assert!(
            dsl.text.contains("const_0: Tensor![(2,), f32]"),
            "{}",
            dsl.text
        );
        assert!(
            dsl.text.contains("let gv = R::add(x, const_0);"),
            "{}",
            dsl.text
        );
        assert_eq!(dsl.constants[0].1.len(), 1);
        assert_eq!(rust_identifier("input.1"), "input_1");
        assert_eq!(rust_identifier("0"), "v0");
        assert_eq!(rust_identifier("type"), "type_");
    }
}
