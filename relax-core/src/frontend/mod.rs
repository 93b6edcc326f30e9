//! The DSL frontend: Rust tokens in TVMScript-like syntax to a checked
//! `IRModule` (feature "syntax").
//!
//! Shared by the proc macros (`relax::module!`, `#[relax::function]`) and by
//! `relax::aot::Builder` in build.rs, which renders the same diagnostics
//! with `file:line:column`.
//!
//! 1. [`lower_module_macro`] takes the tokens of `relax::module! { … }` and
//!    [`lower_function_item`] those of a `#[relax::function]` item. Both
//!    parse with syn, lower every function through the `BlockBuilder` (so
//!    StructInfo is inferred and checked as each binding is emitted), run
//!    `well_formed`, and return a [`Lowered`] module or every error found.
//! 2. Errors are [`FrontendError`]s carrying the culprit token range (a
//!    [`SpanRange`]: first and last token, since stable Rust cannot join
//!    spans); independent errors are all reported.
//! 3. [`codegen`] turns a [`Lowered`] module back into Rust tokens: a
//!    `module()` function that rebuilds the IRModule by constructor calls,
//!    and a typed wrapper per public function.
//!
//! Nothing here panics on any input: every failure is a spanned error.
//!
//! | file | what |
//! |---|---|
//! | `syntax.rs` | syn parsing of the input into a module of functions; function attributes and docs |
//! | `types.rs` | annotations (`Tensor![(n, 4), f32]`, …) to StructInfo, symbolic dim scopes, StructInfo printed in DSL syntax |
//! | `module.rs` | signatures first, bodies in dependency order, return checks, `well_formed` |
//! | `lower.rs` | a function body: scopes, `let`, `R::dataflow!`; `lower/expr.rs` expressions, `lower/calls.rs` calls |
//! | `errors.rs` | shared message helpers (unsupported syntax, nearest names) |
//! | [`pattern`] | `relax::pattern!`: DSL expressions to dataflow patterns, ops and arities checked |
//! | [`rewriter`] | `relax::rewriter!`: a pattern function and a replacement function, checked, to a rewrite pass |
//! | [`codegen`] | Rust code from a lowered module |
//!
//! A function's `#[schedule(prim_func = path)]` attaches a Rust schedule
//! function to a PrimFunc of the built module ([`AttachedSchedule`]);
//! the generated code runs it through `ApplySchedule` when the module is
//! compiled.
//!
//! Function docs are kept twice: in [`FunctionInfo::doc`] and as the
//! function attribute `"doc"`, so they survive in the IR.

pub mod codegen;
mod errors;
mod lower;
mod module;
pub mod pattern;
pub mod rewriter;
mod syntax;
mod types;

pub use syntax::AttachedSchedule;

use crate::fnv::fnv1a;
use crate::ir::{IRModule, StructInfo};
use proc_macro2::{Punct, Spacing, Span, TokenStream, TokenTree};
use quote::ToTokens;

/// A culprit token range: the spans of its first and last tokens.
///
/// On stable Rust `Span::join` is unavailable (it returns `None` inside a
/// proc macro), so `syn::spanned::Spanned::span` of a node is only its
/// first token. Keeping both ends and handing them to `compile_error!` as
/// the spans of its first and last tokens makes rustc underline the whole
/// range, which is what `syn::Error::new_spanned` does.
#[derive(Clone, Copy, Debug)]
pub struct SpanRange {
    /// The first token's span; errors are reported as starting here.
    pub start: Span,
    /// The last token's span (the same as `start` for one token).
    pub end: Span,
}

impl SpanRange {
    /// The range from `start` to `end`.
    pub fn new(start: Span, end: Span) -> Self {
        SpanRange { start, end }
    }

    /// The range of `node`'s tokens; `Span::call_site()` when it has none.
    pub fn of(node: &(impl ToTokens + ?Sized)) -> Self {
        let mut tokens = node.to_token_stream().into_iter();
        let start = tokens.next().map_or_else(Span::call_site, |t| t.span());
        let end = tokens.last().map_or(start, |t| t.span());
        SpanRange { start, end }
    }

    /// The range from the start of `self` to the end of `other`.
    pub fn to(self, other: SpanRange) -> Self {
        SpanRange {
            start: self.start,
            end: other.end,
        }
    }
}

impl From<Span> for SpanRange {
    /// One token's range.
    fn from(span: Span) -> Self {
        SpanRange {
            start: span,
            end: span,
        }
    }
}

/// One error, located on the tokens at fault.
#[derive(Clone, Debug)]
pub struct FrontendError {
    /// The culprit token range.
    pub range: SpanRange,
    /// A lower-case sentence naming what was expected and what was found.
    pub message: String,
    /// Further context, one sentence each.
    pub notes: Vec<String>,
}

impl FrontendError {
    /// An error on `range` (a [`SpanRange`], or one token's `Span`).
    pub fn new(range: impl Into<SpanRange>, message: impl Into<String>) -> Self {
        FrontendError {
            range: range.into(),
            message: message.into(),
            notes: vec![],
        }
    }

    /// An error on all of `node`'s tokens: the syntax node at fault, such
    /// as the call `R::add(x, y)` or the annotation `Tensor![(3, 5), f32]`.
    pub fn spanned(node: &(impl ToTokens + ?Sized), message: impl Into<String>) -> Self {
        FrontendError::new(SpanRange::of(node), message)
    }

    /// The span of the culprit's first token, where the error starts (its
    /// `start()` is the line and column build.rs prints).
    pub fn span(&self) -> Span {
        self.range.start
    }

    /// This error with a note.
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// The error as a `compile_error!` invocation over its whole range.
    pub fn to_compile_error(&self) -> TokenStream {
        let mut text = self.message.clone();
        for n in &self.notes {
            text.push_str("\nnote: ");
            text.push_str(n);
        }
        // Two stand-in tokens carrying the range's ends: syn puts the first
        // one's span on `compile_error`'s path and the last one's on its
        // braces, and rustc reports the invocation from one to the other.
        let ends = [self.range.start, self.range.end].map(|span| {
            let mut p = Punct::new('#', Spacing::Alone);
            p.set_span(span);
            TokenTree::Punct(p)
        });
        syn::Error::new_spanned(TokenStream::from_iter(ends), text).to_compile_error()
    }
}

/// The signature of one function of a lowered module, as the wrapper
/// generator needs it.
#[derive(Clone, Debug)]
pub struct FunctionInfo {
    /// The function's name (its global var and its Rust wrapper's name).
    pub name: String,
    /// Whether it is `pub` (exported, gets a wrapper).
    pub public: bool,
    /// The parameters: their names and StructInfo annotations.
    pub params: Vec<(String, StructInfo)>,
    /// The declared result StructInfo.
    pub ret: StructInfo,
    /// The doc comment, if any.
    pub doc: Option<String>,
    /// Where the function's name is, for errors in generated code.
    pub span: Span,
}

/// A checked module with what code generation needs.
#[derive(Clone, Debug)]
pub struct Lowered {
    /// The Rust module's name (`mlp` for `relax::module! { pub mod mlp { … } }`,
    /// the function's name for `#[relax::function]`).
    pub mod_name: syn::Ident,
    /// The Rust module's visibility.
    pub vis: syn::Visibility,
    /// The module's doc comment, if any.
    pub doc: Option<String>,
    /// The checked IR.
    pub module: IRModule,
    /// Every function, in source order.
    pub functions: Vec<FunctionInfo>,
    /// The schedules attached with `#[schedule(…)]`, over every function,
    /// in source order; each PrimFunc at most once.
    pub schedules: Vec<AttachedSchedule>,
    /// A hash of the input tokens' text, identifying the macro invocation.
    /// AOT artifacts are matched by a hash of the module's IR instead
    /// (`codegen::aot::artifact_hash`): build.rs prints tokens with other
    /// spacing than rustc, while the IR text is the same on both sides.
    pub content_hash: u64,
}

/// Lowers the body of `relax::module! { … }`.
pub fn lower_module_macro(input: TokenStream) -> Result<Lowered, Vec<FrontendError>> {
    let content_hash = fnv1a(input.to_string().as_bytes());
    let mut errors = Vec::new();
    let def = syntax::parse_module(input, &mut errors);
    finish(def, content_hash, errors)
}

/// Lowers `#[relax::function(attr)] item`.
pub fn lower_function_item(
    attr: TokenStream,
    item: TokenStream,
) -> Result<Lowered, Vec<FrontendError>> {
    let content_hash = fnv1a(format!("{attr} | {item}").as_bytes());
    let mut errors = Vec::new();
    let def = syntax::parse_function_item(attr, item, &mut errors);
    finish(def, content_hash, errors)
}

fn finish(
    def: Option<syntax::ModuleDef>,
    content_hash: u64,
    mut errors: Vec<FrontendError>,
) -> Result<Lowered, Vec<FrontendError>> {
    let Some(def) = def else {
        return Err(errors);
    };
    let (module, functions) = module::lower(&def, &mut errors);
    let mut schedules: Vec<AttachedSchedule> = Vec::new();
    for s in def.functions.iter().flat_map(|f| &f.schedules) {
        match schedules.iter().find(|t| t.prim_func == s.prim_func) {
            Some(first) => errors.push(FrontendError::new(
                s.span,
                format!(
                    "a second schedule for the PrimFunc `{}` (the first is `{}`)",
                    s.prim_func,
                    first.path.to_token_stream()
                ),
            )),
            None => schedules.push(s.clone()),
        }
    }
    match module {
        Some(module) if errors.is_empty() => Ok(Lowered {
            mod_name: def.ident,
            vis: def.vis,
            doc: def.doc,
            module,
            functions,
            schedules,
            content_hash,
        }),
        _ => {
            if errors.is_empty() {
                errors.push(FrontendError::spanned(
                    &def.ident,
                    "the module could not be lowered (internal error without a message)",
                ));
            }
            Err(errors)
        }
    }
}

#[cfg(test)]
mod tests;
