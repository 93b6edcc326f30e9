//! The TVMScript printer: IR to text.
//!
//! The text is TVMScript as TVM prints it (`@I.ir_module class Module:` with
//! `@R.function` and `@T.prim_func` members), the format [`crate::parser`]
//! reads back. Printing never fails and never panics: ill-formed IR prints as
//! well as it can (a variable without StructInfo has no annotation, a
//! `SeqExpr` out of place has its bindings written before the statement that
//! uses it).
//!
//! 1. Functions print in module order (sorted by name), four-space indented,
//!    separated by a blank line.
//! 2. Variables print with their name hints made unique per function
//!    (`x`, `x_1`, …); Relax vars and symbolic vars share the table
//!    (`names.rs`).
//! 3. Symbolic vars are declared from the parameter annotations, where their
//!    dims print as strings (`R.Tensor(("n", 784))`), and every symbolic var
//!    of a function gets an `n = T.int64()` line at the top of its body.
//! 4. Tensor constants of rank one or more live in the `metadata` table after
//!    the class (`metadata.rs`).
//!
//! | file | what |
//! |---|---|
//! | `relax.rs` | functions, blocks, bindings, expressions |
//! | `prim.rs` | PrimExprs (Relax's and loop-level), StructInfo annotations, attribute values |
//! | `tir.rs` | PrimFunc signatures |
//! | `metadata.rs` | constants and the metadata section |
//! | `names.rs` | the name table |

pub mod dsl;
mod metadata;
mod names;
mod prim;
mod relax;
mod tir;

#[cfg(test)]
mod tests;

use crate::ir::expr::{Expr, ExprKind};
use crate::ir::function::Function;
use crate::ir::module::{BaseFunc, IRModule};
use metadata::Constants;
use relax::Printer;
use std::collections::BTreeSet;
use std::fmt;

/// The import comments TVM writes above a script: `I` for modules, `R`
/// always, `T` when the text uses it.
fn header(module: bool, uses_tir: bool, type_vars: &BTreeSet<String>) -> String {
    let mut h = String::new();
    if !type_vars.is_empty() {
        h.push_str("# from typing import TypeVar\n");
    }
    if module {
        h.push_str("# from tvm.script import ir as I\n");
    }
    h.push_str("# from tvm.script import relax as R\n");
    if uses_tir {
        h.push_str("# from tvm.script import tirx as T\n");
    }
    h.push('\n');
    for name in type_vars {
        h.push_str(&format!("{name} = TypeVar({})\n", prim::quote(name)));
    }
    h
}

/// The TVMScript text of `f` alone, as a function named `name` (its
/// constants inline, no module around it).
pub fn function_to_string(name: &str, f: &Function) -> String {
    let mut p = Printer::new(Constants::Inline);
    p.function(name, f, true);
    let body = p.take_text();
    format!("{}{body}", header(false, p.uses_tir, &BTreeSet::new()))
}

/// The name a function printed alone goes by: its global symbol, else `main`.
fn standalone_name(f: &Function) -> &str {
    f.global_symbol().unwrap_or("main")
}

/// The module as TVMScript with every constant inline
/// (`R.const([1, 2], "int64")`), no `metadata` section: what TVM 0.27 can
/// read whole, as it can neither read this project's metadata section nor
/// print its own.
pub fn module_to_string_inline(m: &IRModule) -> String {
    module_text(m, Constants::Inline)
}

impl fmt::Display for IRModule {
    /// The module as TVMScript, with a `metadata` section when it has tensor
    /// constants of rank one or more.
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        out.write_str(&module_text(self, Constants::metadata()))
    }
}

/// The module's text without its `metadata` section, and the tensors
/// that section would hold, in order (`metadata["relax.expr.Constant"][i]`
/// is the `i`-th): what a hash of the module keys on without printing its
/// weights as text (`frontend::codegen::aot::artifact_hash`).
pub fn module_text_and_constants(m: &IRModule) -> (String, Vec<relax_runtime::Tensor>) {
    let (text, consts) = module_body(m, Constants::metadata());
    (text, consts.into_tensors())
}

/// The text of `m`, its constants written as `consts` says.
fn module_text(m: &IRModule, consts: Constants) -> String {
    let (mut out, consts) = module_body(m, consts);
    if let Some(section) = consts.section() {
        out.push_str("\n\n");
        out.push_str(&section);
    }
    out
}

/// The text of `m` up to its `metadata` section, and the constants that
/// section holds.
fn module_body(m: &IRModule, consts: Constants) -> (String, Constants) {
    let mut p = Printer::new(consts);
    p.indent = 1;
    p.type_vars = Some(BTreeSet::new());
    for (i, (gv, func)) in m.functions().enumerate() {
        if i > 0 {
            p.line("");
        }
        p.reset_scope();
        match func {
            BaseFunc::Relax(f) => p.function(gv.name_hint(), f, true),
            BaseFunc::Prim(f) => p.prim_func(gv.name_hint(), f),
            BaseFunc::Extern(symbol) => p.line(&format!(
                "{} = R.ExternFunc({})",
                gv.name_hint(),
                prim::quote(symbol)
            )),
        }
    }
    if m.is_empty() && m.attrs().is_empty() {
        p.line("pass");
    }
    let attrs = (!m.attrs().is_empty()).then(|| p.attr_dict(m.attrs()));
    let body = p.take_text();
    let mut out = header(
        true,
        p.uses_tir,
        p.type_vars.as_ref().unwrap_or(&BTreeSet::new()),
    );
    out.push_str("@I.ir_module\nclass Module:\n");
    if let Some(dict) = attrs {
        out.push_str(&format!("    I.module_attrs({dict})\n"));
    }
    out.push_str(&body);
    (out, p.consts)
}

impl fmt::Display for Function {
    /// `@R.function def <global symbol or "main">(…)` with its constants inline.
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        out.write_str(&function_to_string(standalone_name(self), self))
    }
}

impl fmt::Display for Expr {
    /// The expression in TVMScript, its constants inline. A function prints
    /// as a `def`; a `SeqExpr` prints its bindings, then its body.
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut p = Printer::new(Constants::Inline);
        match self.kind() {
            ExprKind::Function(f) => p.function(standalone_name(f), f, true),
            _ => {
                let text = p.expr(self);
                p.line(&text);
            }
        }
        out.write_str(&p.take_text())
    }
}
