//! What a macro expands to when its input has errors, beside the errors.
//!
//! Without it, one mistake in a model would also break every use of the
//! model: "cannot find module `mlp`", "cannot find function `main`". The
//! fallback keeps the names alive: the module (or function item) with an
//! empty `module()`, and for each public function a wrapper with the user's
//! parameter list whose body returns an error (it is never run, since the
//! crate does not compile).
//!
//! The fallback must not add errors of its own (a follow-on error is noise
//! beside the real one): it emits at most one stub per name, none named
//! `module` (the generated `module()` has that name), and it skips items
//! it cannot read instead of giving up on the rest of the module.
//!
//! The input is read with a small, forgiving syn parse that never looks
//! into function bodies, so it works on inputs the frontend rejected.
//! Parameter and result types come from the DSL annotations when they are
//! simple enough to read here (`Tensor![(n, 4), f32]`, `Shape![…]`, `i64`,
//! tuples, `Object`); any other becomes a type parameter, which accepts
//! whatever the caller passes.

use super::wrapper::{param_type, result_type, rust_ident};
use crate::ir::{DataType, StructInfo, UNKNOWN_NDIM};
use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::{format_ident, quote};
use std::collections::HashSet;
use syn::parse::discouraged::Speculative;
use syn::parse::{ParseStream, Parser};
use syn::{Attribute, Token, Visibility};

/// The fallback of `relax::module! { #vis mod name { … } }`: empty when the
/// input does not even have that shape.
pub fn module_fallback(input: TokenStream) -> TokenStream {
    let parsed = (|stream: ParseStream| {
        stream.call(Attribute::parse_outer)?;
        let vis: Visibility = stream.parse()?;
        stream.parse::<Token![mod]>()?;
        let name: syn::Ident = stream.parse()?;
        let content;
        syn::braced!(content in stream);
        Ok((vis, name, signatures(&content)))
    })
    .parse2(input);
    let Ok((vis, name, sigs)) = parsed else {
        return TokenStream::new();
    };
    // The frontend reports a duplicate or a function named `module`; a
    // second stub of the name would add rustc's E0428 beside it.
    let mut taken: HashSet<String> = HashSet::from(["module".to_string()]);
    let wrappers: Vec<TokenStream> = sigs
        .iter()
        .filter(|(vis, _)| matches!(vis, Visibility::Public(_)))
        .filter(|(_, sig)| taken.insert(sig.ident.to_string()))
        .map(|(_, sig)| stub(&quote!(pub), sig))
        .collect();
    let module_fn = empty_module_fn();
    quote! {
        #vis mod #name {
            #module_fn
            #(#wrappers)*
        }
    }
}

/// The fallback of `#[relax::function] #vis fn name(…) { … }`: the wrapper
/// stub and `mod name { module() }`; empty when the item is not a function.
pub fn function_fallback(item: TokenStream) -> TokenStream {
    let Ok(mut sigs) = (|stream: ParseStream| Ok(signatures(stream))).parse2(item) else {
        return TokenStream::new();
    };
    let Some((vis, sig)) = sigs.drain(..).next() else {
        return TokenStream::new();
    };
    let name = &sig.ident;
    let wrapper = stub(&quote!(#vis), &sig);
    let module_fn = empty_module_fn();
    quote! {
        #wrapper
        #vis mod #name {
            #module_fn
        }
    }
}

fn empty_module_fn() -> TokenStream {
    quote! {
        /// An empty module: the macro's input has errors.
        pub fn module() -> &'static ::relax::ir::IRModule {
            static MODULE: ::relax::dsl::Lazy<::relax::ir::IRModule> =
                ::relax::dsl::Lazy::new(::relax::ir::IRModule::new);
            &MODULE
        }
    }
}

/// The signatures of the `fn` items of `stream`, with their visibility;
/// the bodies are skipped unparsed. An item that is not a function, or
/// whose signature does not parse, is skipped up to its end (its `;` or its
/// braced body): the frontend's errors say what is wrong with it, and the
/// functions after it still get their stubs.
fn signatures(stream: ParseStream) -> Vec<(Visibility, syn::Signature)> {
    let mut out = Vec::new();
    while !stream.is_empty() {
        let fork = stream.fork();
        let item = (|| -> syn::Result<(Visibility, syn::Signature)> {
            fork.call(Attribute::parse_outer)?;
            let vis: Visibility = fork.parse()?;
            let sig: syn::Signature = fork.parse()?;
            match fork.parse::<TokenTree>()? {
                TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => Ok((vis, sig)),
                other => Err(syn::Error::new(other.span(), "expected a function body")),
            }
        })();
        match item {
            Ok(item) => {
                stream.advance_to(&fork);
                out.push(item);
            }
            Err(_) => skip_item(stream),
        }
    }
    out
}

/// Skips the tokens of one item: up to and including the first top-level
/// `;` or braced group (a stray `;` is an item of its own).
fn skip_item(stream: ParseStream) {
    let _ = stream.step(|cursor| {
        let mut rest = *cursor;
        while let Some((tt, next)) = rest.token_tree() {
            rest = next;
            match tt {
                TokenTree::Punct(p) if p.as_char() == ';' => break,
                TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => break,
                _ => {}
            }
        }
        Ok(((), rest))
    });
}

/// A wrapper with the parameters of `sig` whose body is an error.
fn stub(vis: &TokenStream, sig: &syn::Signature) -> TokenStream {
    let Some(name) = rust_ident(&sig.ident.to_string(), sig.ident.span()) else {
        return TokenStream::new();
    };
    let mut generics = Vec::new();
    let params: Vec<TokenStream> = sig
        .inputs
        .iter()
        .map(|arg| {
            let ty = match arg {
                syn::FnArg::Typed(pt) => dsl_struct_info(&pt.ty).map(|s| param_type(&s)),
                syn::FnArg::Receiver(_) => None,
            };
            let ty = ty.unwrap_or_else(|| {
                let g = format_ident!("__A{}", generics.len());
                generics.push(g.clone());
                quote!(#g)
            });
            quote!(_: #ty)
        })
        .collect();
    let ret = match &sig.output {
        syn::ReturnType::Type(_, ty) => dsl_struct_info(ty).map(|s| result_type(&s)),
        syn::ReturnType::Default => None,
    };
    let ret = ret.unwrap_or_else(|| {
        generics.push(format_ident!("__R"));
        quote!(__R)
    });
    let generics = if generics.is_empty() {
        TokenStream::new()
    } else {
        quote!(<#(#generics),*>)
    };
    let message = format!("`{name}` did not compile");
    quote! {
        #[allow(clippy::too_many_arguments)]
        #vis fn #name #generics(#(#params),*) -> ::std::result::Result<#ret, ::relax::Error> {
            ::std::result::Result::Err(::relax::Error::Unsupported(
                ::std::string::String::from(#message),
            ))
        }
    }
}

/// The StructInfo of a DSL type annotation, as far as the wrapper's Rust
/// type depends on it (kind, dtype and rank); `None` when it cannot be read
/// without the frontend.
pub(super) fn dsl_struct_info(ty: &syn::Type) -> Option<StructInfo> {
    match ty {
        syn::Type::Paren(p) => dsl_struct_info(&p.elem),
        syn::Type::Group(g) => dsl_struct_info(&g.elem),
        syn::Type::Tuple(t) => Some(StructInfo::tuple(
            t.elems.iter().map(dsl_struct_info).collect::<Option<_>>()?,
        )),
        syn::Type::BareFn(_) => Some(StructInfo::func(vec![], StructInfo::object(), true)),
        syn::Type::Path(p) if p.qself.is_none() => {
            let name = p.path.get_ident()?.to_string();
            if name == "Object" {
                return Some(StructInfo::object());
            }
            let dtype: DataType = name.parse().ok()?;
            Some(StructInfo::prim(dtype))
        }
        syn::Type::Macro(m) => {
            let kind = m.mac.path.segments.last()?.ident.to_string();
            let pieces = split_commas(m.mac.tokens.clone());
            match kind.as_str() {
                "Shape" => Some(StructInfo::shape_ndim(UNKNOWN_NDIM)),
                "Tensor" => {
                    let ndim = match pieces.first() {
                        Some(first) if pieces.len() >= 2 => rank(first),
                        _ => UNKNOWN_NDIM,
                    };
                    let dtype = match pieces.last() {
                        Some(last) if pieces.len() >= 2 => dtype_of(last)?,
                        _ => DataType::void(),
                    };
                    Some(StructInfo::tensor_ndim(ndim, dtype))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// The top-level comma-separated pieces of a token stream, empty ones dropped
/// (so a trailing comma does not count).
fn split_commas(tokens: TokenStream) -> Vec<Vec<TokenTree>> {
    let mut pieces = vec![Vec::new()];
    for tt in tokens {
        match &tt {
            TokenTree::Punct(p) if p.as_char() == ',' => pieces.push(Vec::new()),
            _ => pieces.last_mut().expect("never empty").push(tt),
        }
    }
    pieces.retain(|p| !p.is_empty());
    pieces
}

/// The rank a tensor annotation's shape part gives: `(n, 4)` → 2,
/// `ndim = 3` → 3, anything else unknown.
fn rank(piece: &[TokenTree]) -> i32 {
    match piece {
        [TokenTree::Group(g)] if g.delimiter() == Delimiter::Parenthesis => {
            split_commas(g.stream()).len() as i32
        }
        [TokenTree::Ident(i), TokenTree::Punct(eq), TokenTree::Literal(n)]
            if i == "ndim" && eq.as_char() == '=' =>
        {
            n.to_string().parse().unwrap_or(UNKNOWN_NDIM)
        }
        _ => UNKNOWN_NDIM,
    }
}

/// The dtype a tensor annotation's dtype part names (`f32`, `"float32"`,
/// `_` for unknown); `None` when it names none.
fn dtype_of(piece: &[TokenTree]) -> Option<DataType> {
    match piece {
        [TokenTree::Ident(i)] if i == "_" => Some(DataType::void()),
        [TokenTree::Ident(i)] => i.to_string().parse().ok(),
        [TokenTree::Literal(l)] => {
            let s: syn::LitStr = syn::parse2(TokenTree::Literal(l.clone()).into()).ok()?;
            s.value().parse().ok()
        }
        _ => None,
    }
}
