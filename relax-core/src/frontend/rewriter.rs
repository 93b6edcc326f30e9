//! `relax::rewriter!`: a rewrite written as two DSL functions, in the
//! spirit of TVM's `@R.rewriter`:
//!
//! ```text
//! relax::rewriter! {
//!     fn pattern(a: Tensor![(n, m), f32], b: Tensor![(n, m), f32], c: Tensor![(n, m), f32]) -> Tensor![(n, m), f32] {
//!         R::add(R::multiply(a, b), c)
//!     }
//!     fn replacement(a: Tensor![(n, m), f32], b: Tensor![(n, m), f32], c: Tensor![(n, m), f32]) -> Tensor![(n, m), f32] {
//!         R::ewise_fma(a, b, c)
//!     }
//! }
//! ```
//!
//! 1. The input is exactly two functions, `pattern` and `replacement`,
//!    whose signatures (parameter names and annotations, result
//!    annotation) must agree token for token: a compile error on the
//!    replacement's signature otherwise.
//! 2. Both are checked as the functions of a `relax::module!` are (shapes,
//!    ops, scoping), with the same spanned errors.
//! 3. The expansion is an expression of type
//!    `Result<relax::dpl::PatternRewriter, relax::Error>` (a `Pass` named
//!    `rewriter`), built at run time by
//!    [`crate::dpl::rewriter_from_functions`] from the checked module.

use super::{codegen, lower_module_macro, FrontendError};
use proc_macro2::TokenStream;
use quote::{quote, ToTokens};

/// The Rust code of the rewriter `tokens` describe, or every error.
pub fn lower_rewriter_macro(tokens: TokenStream) -> Result<TokenStream, Vec<FrontendError>> {
    let file: syn::File = syn::parse2(tokens).map_err(|e| {
        vec![FrontendError::new(
            e.span(),
            format!("expected `fn pattern(…) -> … {{ … }} fn replacement(…) -> … {{ … }}`: {e}"),
        )]
    })?;
    let fns: Vec<&syn::ItemFn> = file
        .items
        .iter()
        .filter_map(|i| match i {
            syn::Item::Fn(f) => Some(f),
            _ => None,
        })
        .collect();
    let mut errors = Vec::new();
    for item in &file.items {
        if !matches!(item, syn::Item::Fn(_)) {
            errors.push(FrontendError::spanned(
                item,
                "expected only the functions `pattern` and `replacement`",
            ));
        }
    }
    let find = |name: &str| fns.iter().find(|f| f.sig.ident == name).copied();
    let (Some(pattern), Some(replacement)) = (find("pattern"), find("replacement")) else {
        errors.push(FrontendError::new(
            proc_macro2::Span::call_site(),
            "expected two functions, `fn pattern(…)` and `fn replacement(…)`",
        ));
        return Err(errors);
    };
    for f in &fns {
        if f.sig.ident != "pattern" && f.sig.ident != "replacement" {
            errors.push(FrontendError::spanned(
                &f.sig.ident,
                "expected only the functions `pattern` and `replacement`",
            ));
        }
    }
    let signature = |f: &syn::ItemFn| {
        let params: Vec<String> = f
            .sig
            .inputs
            .iter()
            .map(|p| p.to_token_stream().to_string())
            .collect();
        (params, f.sig.output.to_token_stream().to_string())
    };
    if signature(pattern) != signature(replacement) {
        errors.push(
            FrontendError::new(
                super::SpanRange::of(&replacement.sig.ident).to(super::SpanRange::of(&replacement.sig.output)),
                "the signature of `replacement` differs from `pattern`'s: they must take the same parameters and return the same annotation",
            )
            .with_note("a match binds the pattern's parameters, which the replacement then reads by position"),
        );
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let (p_sig, p_body) = (&pattern.sig, &pattern.block);
    let (r_sig, r_body) = (&replacement.sig, &replacement.block);
    let module = quote! {
        mod __relax_rewriter {
            #[function]
            #p_sig #p_body
            #[function]
            #r_sig #r_body
        }
    };
    let lowered = lower_module_macro(module)?;
    let items = codegen::module_tokens(&lowered);
    Ok(quote! {{
        #items
        ::relax::dpl::rewriter_from_functions(
            __relax_rewriter::module(),
            "rewriter",
            "pattern",
            "replacement",
        )
    }})
}
