//! relax-macros: the procedural macros `#[relax::function]` and `relax::module!`.
//!
//! The macros are thin: they will parse with `relax-core`'s frontend (feature
//! "syntax"), report its diagnostics as spanned compile errors, and emit the
//! generated wrappers. They arrive with the DSL issue; this crate exists now so
//! the workspace has its final shape.
