//! Finding the DSL in a Rust source file.
//!
//! The file is parsed with syn, as rustc would see it before expansion, and
//! its items are walked, entering inline `mod m { … }` blocks:
//!
//! 1. an item macro whose path is `relax::module` (or `::relax::module`) is
//!    a module: its tokens are what the proc macro receives;
//! 2. a `fn` with the attribute `#[relax::function]` (with or without
//!    arguments) is a one-function module: the attribute's arguments and the
//!    item without that attribute are what the proc macro receives.
//!
//! Everything else is skipped, including DSL written inside function bodies
//! (which build.rs cannot name from outside) and modules in other files
//! (`mod m;`: give those files to the Builder too). `#[cfg]` is not
//! evaluated: every module found is compiled.

use crate::frontend::SpanRange;
use proc_macro2::TokenStream;
use quote::ToTokens;

/// One use of the DSL, as the proc macro would receive it.
#[derive(Clone, Debug)]
pub enum DslItem {
    /// `relax::module! { … }`.
    Module {
        /// The tokens between the braces.
        tokens: TokenStream,
        /// The whole invocation, for errors that have no better place.
        range: SpanRange,
    },
    /// `#[relax::function(attr)] fn …`.
    Function {
        /// The attribute's arguments (empty without parentheses).
        attr: TokenStream,
        /// The item without the `relax::function` attribute.
        item: TokenStream,
        /// The whole item.
        range: SpanRange,
    },
}

impl DslItem {
    /// Where the item is, for errors that have no better place.
    pub fn range(&self) -> SpanRange {
        match self {
            DslItem::Module { range, .. } | DslItem::Function { range, .. } => *range,
        }
    }
}

/// Every use of the DSL in `file`, in source order. See the module docs.
pub fn scan(file: &syn::File) -> Vec<DslItem> {
    let mut found = Vec::new();
    scan_items(&file.items, &mut found);
    found
}

fn scan_items(items: &[syn::Item], found: &mut Vec<DslItem>) {
    for item in items {
        match item {
            syn::Item::Macro(m) if is_relax_path(&m.mac.path, "module") => {
                found.push(DslItem::Module {
                    tokens: m.mac.tokens.clone(),
                    range: SpanRange::of(m),
                });
            }
            syn::Item::Fn(f) => {
                let Some(at) = f
                    .attrs
                    .iter()
                    .position(|a| is_relax_path(a.path(), "function"))
                else {
                    continue;
                };
                let attr = match &f.attrs[at].meta {
                    syn::Meta::List(list) => list.tokens.clone(),
                    syn::Meta::Path(_) | syn::Meta::NameValue(_) => TokenStream::new(),
                };
                let mut rest = f.clone();
                rest.attrs.remove(at);
                found.push(DslItem::Function {
                    attr,
                    item: rest.to_token_stream(),
                    range: SpanRange::of(f),
                });
            }
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    scan_items(inner, found);
                }
            }
            _ => {}
        }
    }
}

/// Whether `path` is `relax::<last>` or `::relax::<last>`.
fn is_relax_path(path: &syn::Path, last: &str) -> bool {
    let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    segments.len() == 2 && segments[0] == "relax" && segments[1] == last
}
