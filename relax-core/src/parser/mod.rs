//! The TVMScript parser: text in the format [`crate::printer`] prints, back
//! to an [`IRModule`].
//!
//! ```text
//! text ──lexer──▶ tokens ──syntax──▶ Python-subset tree ──lower──▶ IRModule
//! ```
//!
//! 1. [`lexer`] turns text into tokens with byte spans, Python style
//!    (indentation tokens, implicit line joining in brackets, comments
//!    skipped).
//! 2. [`syntax`] parses the Python subset TVMScript uses into a tree that
//!    knows nothing of Relax. A syntax error stops the parse.
//! 3. The lowering (`lower` and its helpers `prim`, `sinfo`, `calls`,
//!    `constant`, `tir`) resolves names, builds the IR bottom-up with the
//!    constructors of [`crate::ir`], and gives every expression its
//!    StructInfo through [`crate::analysis::derive::derive_struct_info`].
//!    Its errors are collected, not stop-at-first.
//!
//! Every error is a [`Diagnostic`] whose span covers the culprit and whose
//! message says what was expected and what was found. The parser never
//! panics, whatever the input: deep nesting is an error, not a stack
//! overflow.
//!
//! What the text may contain is the printer's format, which is TVMScript as
//! TVM prints it, plus the spellings TVM's own parser accepts that the seed
//! documents use (`R.Tensor((3, 4), "float32")` with a positional dtype,
//! unannotated bindings). See the `tests` module for one example of each
//! form, and `tests/roundtrip/*.py` for whole modules.

mod calls;
mod constant;
pub mod lexer;
mod lower;
mod prim;
mod sinfo;
pub mod syntax;
mod tir;

#[cfg(test)]
mod tests;

use crate::ir::{IRModule, StructInfo, TirVar};
use relax_runtime::{Diagnostic, Error};
use std::collections::HashMap;
use std::str::FromStr;

/// Parses a TVMScript module (`@I.ir_module class Module: …`).
///
/// Returns every error found: syntax errors (the first one only, as later
/// ones would be noise) or, once the text parses, all independent name,
/// StructInfo and form errors.
pub fn parse_module(text: &str) -> Result<IRModule, Vec<Diagnostic>> {
    let (tokens, lex_errors) = lexer::tokenize(text);
    if !lex_errors.is_empty() {
        return Err(lex_errors);
    }
    let stmts = syntax::parse_file(&tokens).map_err(|d| vec![d])?;
    let mut lw = lower::Lowerer::new(text);
    match lw.module(&stmts) {
        Some(m) if lw.errors.is_empty() => Ok(m),
        _ => {
            if lw.errors.is_empty() {
                lw.errors
                    .push(Diagnostic::new("internal", "the module could not be built"));
            }
            Err(lw.errors)
        }
    }
}

/// Parses one StructInfo annotation such as `R.Tensor((n, 4), "float32")`.
///
/// Symbolic variables are looked up in `vars` by name; names not there yet
/// (bare or as strings) are declared as new `int64` variables and added, so
/// several annotations parsed with the same map share their variables.
/// `R.Tensor(s, …)` with a shape variable `s` is not available here (there
/// are no Relax variables in scope).
pub fn parse_struct_info(
    text: &str,
    vars: &mut HashMap<String, TirVar>,
) -> Result<StructInfo, Vec<Diagnostic>> {
    let (tokens, lex_errors) = lexer::tokenize(text);
    if !lex_errors.is_empty() {
        return Err(lex_errors);
    }
    let e = syntax::parse_expression(&tokens).map_err(|d| vec![d])?;
    let mut lw = lower::Lowerer::new(text);
    lw.declare_all_syms = true;
    lw.frames.push(lower::Frame {
        sym: vars.clone(),
        is_function: true,
        ..lower::Frame::default()
    });
    lw.declare_string_dims(&e);
    let s = lw.struct_info(&e, true);
    if let Some(f) = lw.frames.pop() {
        vars.extend(f.sym);
    }
    match s {
        Some(s) if lw.errors.is_empty() => Ok(s),
        _ => Err(lw.errors),
    }
}

impl FromStr for IRModule {
    type Err = Error;

    /// Parses TVMScript text; see [`parse_module`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_module(s).map_err(Error::Compile)
    }
}
