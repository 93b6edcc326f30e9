//! Relax functions.
//!
//! 1. `params` are `Var`s (never `DataflowVar`s) whose StructInfo is the
//!    parameter annotation. Symbolic variables standing alone as dimensions in
//!    those annotations are defined by the function and in scope in the whole
//!    body and in `ret_struct_info`.
//! 2. `body` is, in normal form, a `SeqExpr`.
//! 3. `ret_struct_info` is the declared (or, when undeclared, the inferred and
//!    erased) result StructInfo.
//! 4. A function in a module is public when its attributes hold
//!    `global_symbol` (equal to its name); otherwise it is private
//!    (`@R.function(private=True)`).

use super::attrs::{AttrValue, Attrs};
use super::expr::{Expr, Var};
use super::struct_info::StructInfo;

/// Attribute keys with a meaning to the compiler, as TVM names them.
pub mod attr {
    /// The exported symbol of a public function.
    pub const GLOBAL_SYMBOL: &str = "global_symbol";
    /// Set by FuseOps on the functions it creates.
    pub const PRIMITIVE: &str = "Primitive";
    /// Treat impure calls inside as pure.
    pub const FORCE_PURE: &str = "relax.force_pure";
    /// The number of leading parameters that are model inputs.
    pub const NUM_INPUT: &str = "num_input";
    /// The target codegen of an offloaded function.
    pub const CODEGEN: &str = "Codegen";
    /// The name of the pattern a composite function came from.
    pub const COMPOSITE: &str = "Composite";
}

/// A Relax function (a closure when nested in another function).
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    /// The parameters, in order.
    pub params: Vec<Var>,
    /// The body; normal form: a `SeqExpr`.
    pub body: Expr,
    /// The result StructInfo.
    pub ret_struct_info: StructInfo,
    /// Whether the function has no side effects (`@R.function(pure=False)` if not).
    pub is_pure: bool,
    /// Function attributes (`R.func_attr`), including `global_symbol`.
    pub attrs: Attrs,
}

impl Function {
    /// A pure function without attributes.
    pub fn new(params: Vec<Var>, body: Expr, ret_struct_info: StructInfo) -> Self {
        Function {
            params,
            body,
            ret_struct_info,
            is_pure: true,
            attrs: Attrs::new(),
        }
    }
    /// Its StructInfo: `Func(param annotations, ret, purity)`. A parameter
    /// without an annotation counts as `Object`.
    pub fn struct_info(&self) -> StructInfo {
        StructInfo::func(
            self.params
                .iter()
                .map(|p| p.struct_info().cloned().unwrap_or_else(StructInfo::object))
                .collect(),
            self.ret_struct_info.clone(),
            self.is_pure,
        )
    }
    /// The exported symbol, if public.
    pub fn global_symbol(&self) -> Option<&str> {
        self.attrs
            .get(attr::GLOBAL_SYMBOL)
            .and_then(AttrValue::as_str)
    }
    /// This function with `global_symbol` set to `name` (made public).
    pub fn with_global_symbol(mut self, name: &str) -> Self {
        self.attrs = self.attrs.with(attr::GLOBAL_SYMBOL, name);
        self
    }
    /// This function with attribute `key` set.
    pub fn with_attr(mut self, key: &str, value: impl Into<AttrValue>) -> Self {
        self.attrs = self.attrs.with(key, value);
        self
    }
}
