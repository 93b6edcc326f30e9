//! Code generation from a lowered module. INTERFACE STUB, replaced by the helper.

use super::Lowered;
use proc_macro2::TokenStream;

/// The Rust code for `relax::module!`: `mod` with `module()` and wrappers.
pub fn module_tokens(lowered: &Lowered) -> TokenStream {
    let _ = lowered;
    TokenStream::new()
}

/// The Rust code for `#[relax::function]`: the wrapper fn plus `mod f { module() }`.
pub fn function_tokens(lowered: &Lowered) -> TokenStream {
    let _ = lowered;
    TokenStream::new()
}
