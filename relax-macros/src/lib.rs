//! relax-macros: the procedural macros `relax::module!`, `#[relax::function]`,
//! `relax::pattern!` and `relax::rewriter!`.
//!
//! The macros are thin: relax-core's frontend (feature "syntax") parses the
//! DSL, lowers it through the BlockBuilder and checks it; its code generator
//! emits the Rust module and wrappers. This crate only connects them to
//! `proc_macro`:
//!
//! 1. On success, the generated code.
//! 2. On errors, every error as a `compile_error!` over its culprit tokens, plus a
//!    fallback expansion that keeps the module's and functions' names alive,
//!    so one mistake does not also break every use of the model.
//! 3. A panic anywhere inside is caught and becomes a `compile_error!`
//!    ("internal error in relax macro: …"): the macro itself never panics.
//!
//! Use them through the facade: `relax::module!`, `#[relax::function]`.

#![warn(missing_docs)]

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use relax_core::frontend::{codegen, lower_function_item, lower_module_macro, FrontendError};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A Relax module in the DSL: `relax::module! { pub mod m { #[function] pub fn main(…) … } }`
/// becomes `pub mod m` with `module()` (the `IRModule`) and a typed wrapper
/// for each `pub` function.
///
/// Used through the facade, `relax::module!`:
///
/// ```
/// relax::module! {
///     pub mod double {
///         #[function]
///         pub fn main(x: Tensor![(n,), f32]) -> Tensor![(n,), f32] {
///             R::add(x, x)
///         }
///     }
/// }
///
/// let x = relax::ndarray::arr1(&[1.0f32, 2.0, 3.0]);
/// assert_eq!(double::main(&x)?, relax::ndarray::arr1(&[2.0f32, 4.0, 6.0]));
///
/// // The shapes were checked when this compiled; a call checks the data.
/// let wrong = relax::ndarray::arr2(&[[1.0f32]]);
/// assert!(double::main(&wrong).is_err());
/// # Ok::<(), relax::Error>(())
/// ```
#[proc_macro]
pub fn module(input: TokenStream) -> TokenStream {
    let input = TokenStream2::from(input);
    guarded(|| match lower_module_macro(input.clone()) {
        Ok(lowered) => codegen::module_tokens(&lowered),
        Err(errors) => with_fallback(&errors, codegen::module_fallback(input.clone())),
    })
    .into()
}

/// A one-function Relax module: `#[relax::function] pub fn f(…) -> … { … }`
/// becomes the wrapper `f` plus `pub mod f { pub fn module() }`.
/// Attribute arguments: `pure = false`.
#[proc_macro_attribute]
pub fn function(attr: TokenStream, item: TokenStream) -> TokenStream {
    let (attr, item) = (TokenStream2::from(attr), TokenStream2::from(item));
    guarded(|| match lower_function_item(attr.clone(), item.clone()) {
        Ok(lowered) => codegen::function_tokens(&lowered),
        Err(errors) => with_fallback(&errors, codegen::function_fallback(item.clone())),
    })
    .into()
}

/// A dataflow pattern in the DSL's expression syntax:
/// `relax::pattern!(R::add(R::matmul(x, w), _) | R::nn::relu(x))` is a
/// `relax::dpl::Pattern`; `_` is an anonymous wildcard, an identifier a
/// named one. Ops and their arities are checked while the macro expands.
#[proc_macro]
pub fn pattern(input: TokenStream) -> TokenStream {
    let input = TokenStream2::from(input);
    guarded(
        || match relax_core::frontend::pattern::lower_pattern_macro(input.clone()) {
            Ok(tokens) => tokens,
            Err(errors) => {
                let mut out: TokenStream2 =
                    errors.iter().map(FrontendError::to_compile_error).collect();
                // Keeps the expression's type, so one mistake is one error.
                out.extend(quote::quote! { ::relax::dpl::wildcard() });
                quote::quote! {{ #out }}
            }
        },
    )
    .into()
}

/// A rewrite as two DSL functions, `fn pattern(…)` and `fn replacement(…)`
/// with the same signature (TVM's `@R.rewriter`): both are checked like the
/// functions of a `relax::module!`, and the expression is a
/// `Result<relax::dpl::PatternRewriter, relax::Error>`, a `Pass`.
#[proc_macro]
pub fn rewriter(input: TokenStream) -> TokenStream {
    let input = TokenStream2::from(input);
    guarded(|| match relax_core::frontend::rewriter::lower_rewriter_macro(input.clone()) {
        Ok(tokens) => tokens,
        Err(errors) => {
            let out: TokenStream2 = errors.iter().map(FrontendError::to_compile_error).collect();
            quote::quote! {{ #out ::core::result::Result::<::relax::dpl::PatternRewriter, ::relax::Error>::Err(::relax::Error::Unsupported(::std::string::String::new())) }}
        }
    })
    .into()
}

/// Every error as a `compile_error!`, then the fallback expansion.
fn with_fallback(errors: &[FrontendError], fallback: TokenStream2) -> TokenStream2 {
    let mut out: TokenStream2 = errors.iter().map(FrontendError::to_compile_error).collect();
    out.extend(fallback);
    out
}

/// Runs `expand`, turning a panic into a compile error at the call site.
fn guarded(expand: impl FnOnce() -> TokenStream2) -> TokenStream2 {
    catch_unwind(AssertUnwindSafe(expand)).unwrap_or_else(|payload| {
        let why = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_string());
        syn::Error::new(
            Span::call_site(),
            format!("internal error in relax macro: {why}"),
        )
        .to_compile_error()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    #[test]
    fn a_panic_becomes_a_compile_error() {
        let out = guarded(|| panic!("boom {}", 42)).to_string();
        assert!(out.contains("compile_error"), "{out}");
        assert!(
            out.contains("internal error in relax macro: boom 42"),
            "{out}"
        );
        let out = guarded(|| std::panic::panic_any(7u8)).to_string();
        assert!(out.contains("a panic without a message"), "{out}");
    }

    #[test]
    fn without_a_panic_the_expansion_is_returned() {
        assert_eq!(
            guarded(|| quote!(
                fn f() {}
            ))
            .to_string(),
            quote!(
                fn f() {}
            )
            .to_string()
        );
    }

    #[test]
    fn errors_come_before_the_fallback() {
        let errors = [
            FrontendError::new(Span::call_site(), "first"),
            FrontendError::new(Span::call_site(), "second").with_note("why"),
        ];
        let out = with_fallback(
            &errors,
            quote!(
                mod m {}
            ),
        )
        .to_string();
        let (first, second) = (out.find("first").unwrap(), out.find("second").unwrap());
        assert!(
            first < second && second < out.find("mod m").unwrap(),
            "{out}"
        );
        assert!(out.contains("note: why"), "{out}");
    }
}
