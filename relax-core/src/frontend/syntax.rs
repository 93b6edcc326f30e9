//! Parsing: the macro input, through syn, into DSL items.
//!
//! 1. `relax::module! { /// doc  pub mod m { #[function] pub fn f(…) … } }`
//!    becomes a [`ModuleDef`] with one [`FnDef`] per `#[function]`.
//!    `#[relax::function(attr)] fn f(…)` becomes a one-function module
//!    named after the function.
//! 2. Function attributes are read here: `#[function(pure = false)]`,
//!    `#[func_attr(Key = value, …)]`, `#[schedule(prim_func = path, …)]`
//!    (see [`AttachedSchedule`]) and doc comments. Bodies stay syn
//!    syntax trees; [`super::lower`] walks them.
//! 3. Anything that is not DSL is reported at its tokens and skipped, so
//!    the other functions are still checked.

use super::errors::{from_syn, quoted, unsupported, unsupported_at};
use super::{FrontendError, SpanRange};
use crate::ir::AttrValue;
use proc_macro2::{Span, TokenStream};
use syn::punctuated::Punctuated;

/// A parsed module.
pub(super) struct ModuleDef {
    pub ident: syn::Ident,
    pub vis: syn::Visibility,
    pub doc: Option<String>,
    pub functions: Vec<FnDef>,
}

/// A parsed function, its body still syntax.
pub(super) struct FnDef {
    pub name: syn::Ident,
    pub public: bool,
    pub pure: bool,
    pub doc: Option<String>,
    /// `#[func_attr(…)]` pairs, in order.
    pub attrs: Vec<(String, AttrValue)>,
    /// `#[schedule(…)]` pairs, in order.
    pub schedules: Vec<AttachedSchedule>,
    pub params: Vec<(syn::Ident, syn::Type)>,
    pub ret: Option<syn::Type>,
    pub block: syn::Block,
}

/// A schedule attached in the DSL: `#[schedule(matmul = by_hand)]` on a
/// relax function names a PrimFunc of the built module (as
/// `ApplySchedule` does: `matmul` after `LegalizeOps`) and the Rust
/// function that schedules it, a
/// `fn(&mut Schedule) -> Result<(), ScheduleError>` in scope where the
/// macro is invoked. It runs when the module is compiled.
#[derive(Clone, Debug)]
pub struct AttachedSchedule {
    /// The PrimFunc's name.
    pub prim_func: String,
    /// The schedule function, as written.
    pub path: syn::Path,
    /// Where the PrimFunc's name is, for errors.
    pub span: Span,
}

/// Reads the pairs of `#[schedule(name = path, …)]` into `out`.
fn schedule_attr(
    a: &syn::Attribute,
    out: &mut Vec<AttachedSchedule>,
    errors: &mut Vec<FrontendError>,
) {
    const EXPECTED: &str = "expected `#[schedule(prim_func = schedule_fn, …)]`: the name of a PrimFunc of the built module (`matmul` after LegalizeOps) and the path of a `fn(&mut Schedule) -> Result<(), ScheduleError>`";
    let pairs = match &a.meta {
        syn::Meta::List(_) => {
            match a
                .parse_args_with(Punctuated::<syn::MetaNameValue, syn::Token![,]>::parse_terminated)
            {
                Ok(pairs) => pairs,
                Err(e) => {
                    errors.push(FrontendError::spanned(
                        a,
                        format!("{EXPECTED}; found {} ({e})", quoted(a)),
                    ));
                    return;
                }
            }
        }
        _ => {
            errors.push(FrontendError::spanned(
                a,
                format!("{EXPECTED}; found {}", quoted(a)),
            ));
            return;
        }
    };
    if pairs.is_empty() {
        errors.push(FrontendError::spanned(
            a,
            format!("{EXPECTED}; found no pair"),
        ));
    }
    for nv in pairs {
        let Some(name) = nv.path.get_ident() else {
            errors.push(FrontendError::spanned(
                &nv.path,
                format!(
                    "expected the name of a PrimFunc, found {}",
                    quoted(&nv.path)
                ),
            ));
            continue;
        };
        match &nv.value {
            syn::Expr::Path(p) if p.qself.is_none() && p.attrs.is_empty() => {
                out.push(AttachedSchedule {
                    prim_func: name.to_string(),
                    path: p.path.clone(),
                    span: name.span(),
                });
            }
            syn::Expr::Closure(c) => errors.push(FrontendError::spanned(
                c,
                format!(
                    "expected the path of a schedule function for `{name}`, found a closure: define it as `fn {name}_schedule(sch: &mut Schedule) -> Result<(), ScheduleError>` and name it here"
                ),
            )),
            other => errors.push(FrontendError::spanned(
                other,
                format!(
                    "expected the path of a schedule function `fn(&mut Schedule) -> Result<(), ScheduleError>` for `{name}`, found {}",
                    quoted(other)
                ),
            )),
        }
    }
}

/// The text of the doc comments among `attrs`, one line each.
fn doc_of(attrs: &[syn::Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .map(|l| l.strip_prefix(' ').unwrap_or(&l).trim_end().to_string())
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// Parses `relax::module!`'s input.
pub(super) fn parse_module(
    input: TokenStream,
    errors: &mut Vec<FrontendError>,
) -> Option<ModuleDef> {
    let item: syn::ItemMod = match syn::parse2(input) {
        Ok(m) => m,
        Err(e) => {
            errors.extend(from_syn(e));
            return None;
        }
    };
    for a in &item.attrs {
        if !a.path().is_ident("doc") {
            errors.push(unsupported(a, "doc comments on the module", &quoted(a)));
        }
    }
    let mut functions = Vec::new();
    match &item.content {
        None => errors.push(FrontendError::spanned(
            &item.ident,
            format!(
                "expected the module's functions in braces, `mod {} {{ … }}`, found `;`",
                item.ident
            ),
        )),
        Some((_, items)) => {
            for it in items {
                match it {
                    syn::Item::Fn(f) => {
                        if let Some(def) = function(f, None, errors) {
                            functions.push(def);
                        }
                    }
                    other => errors.push(unsupported(
                        other,
                        "`#[function] fn …` items in the module",
                        &quoted(other),
                    )),
                }
            }
        }
    }
    Some(ModuleDef {
        doc: doc_of(&item.attrs),
        vis: item.vis.clone(),
        ident: item.ident.clone(),
        functions,
    })
}

/// Parses `#[relax::function(attr)] item`.
pub(super) fn parse_function_item(
    attr: TokenStream,
    item: TokenStream,
    errors: &mut Vec<FrontendError>,
) -> Option<ModuleDef> {
    let f: syn::ItemFn = match syn::parse2(item) {
        Ok(f) => f,
        Err(e) => {
            errors.extend(from_syn(e));
            return None;
        }
    };
    let pure = match syn::parse::Parser::parse2(
        Punctuated::<syn::MetaNameValue, syn::Token![,]>::parse_terminated,
        attr,
    ) {
        Ok(pairs) => function_options(pairs.iter(), errors),
        Err(e) => {
            errors.extend(from_syn(e));
            true
        }
    };
    let def = function(&f, Some(pure), errors)?;
    Some(ModuleDef {
        ident: f.sig.ident.clone(),
        vis: f.vis.clone(),
        doc: def.doc.clone(),
        functions: vec![def],
    })
}

/// Reads `pure = …` from `#[function(…)]`; returns the purity.
fn function_options<'a>(
    pairs: impl Iterator<Item = &'a syn::MetaNameValue>,
    errors: &mut Vec<FrontendError>,
) -> bool {
    let mut pure = true;
    for nv in pairs {
        if !nv.path.is_ident("pure") {
            errors.push(FrontendError::spanned(
                nv,
                format!(
                    "unknown function option {}: expected `pure = false`",
                    quoted(&nv.path)
                ),
            ));
            continue;
        }
        match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Bool(b),
                ..
            }) => pure = b.value,
            other => errors.push(FrontendError::spanned(
                other,
                format!("expected `true` or `false`, found {}", quoted(other)),
            )),
        }
    }
    pure
}

/// A literal attribute value (`1`, `-2`, `1.5`, `true`, `"x"`).
pub(super) fn literal_attr(e: &syn::Expr) -> Option<AttrValue> {
    match e {
        syn::Expr::Lit(l) => match &l.lit {
            syn::Lit::Int(i) => i.base10_parse::<i64>().ok().map(AttrValue::Int),
            syn::Lit::Float(f) => f.base10_parse::<f64>().ok().map(AttrValue::Float),
            syn::Lit::Bool(b) => Some(AttrValue::Bool(b.value)),
            syn::Lit::Str(s) => Some(AttrValue::Str(s.value())),
            _ => None,
        },
        syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => match literal_attr(&u.expr)? {
            AttrValue::Int(i) => i.checked_neg().map(AttrValue::Int),
            AttrValue::Float(f) => Some(AttrValue::Float(-f)),
            _ => None,
        },
        syn::Expr::Paren(p) => literal_attr(&p.expr),
        _ => None,
    }
}

/// One function item. `item_pure` is the purity given by
/// `#[relax::function(…)]`, for the item form.
fn function(
    f: &syn::ItemFn,
    item_pure: Option<bool>,
    errors: &mut Vec<FrontendError>,
) -> Option<FnDef> {
    let mut is_function = item_pure.is_some();
    let mut pure = item_pure.unwrap_or(true);
    let mut attrs = Vec::new();
    let mut schedules = Vec::new();
    for a in &f.attrs {
        let path = a.path();
        if path.is_ident("doc") {
            continue;
        }
        if path.is_ident("schedule") {
            schedule_attr(a, &mut schedules, errors);
            continue;
        }
        if path.is_ident("function") && item_pure.is_none() {
            is_function = true;
            match &a.meta {
                syn::Meta::Path(_) => {}
                syn::Meta::List(_) => match a.parse_args_with(
                    Punctuated::<syn::MetaNameValue, syn::Token![,]>::parse_terminated,
                ) {
                    Ok(pairs) => pure = function_options(pairs.iter(), errors),
                    Err(e) => errors.extend(from_syn(e)),
                },
                syn::Meta::NameValue(nv) => errors.push(unsupported(
                    nv,
                    "`#[function]` or `#[function(pure = false)]`",
                    &quoted(a),
                )),
            }
            continue;
        }
        if path.is_ident("func_attr") {
            match a
                .parse_args_with(Punctuated::<syn::MetaNameValue, syn::Token![,]>::parse_terminated)
            {
                Ok(pairs) => {
                    for nv in pairs {
                        let Some(key) = nv.path.get_ident() else {
                            errors.push(FrontendError::spanned(
                                &nv.path,
                                format!("expected an attribute name, found {}", quoted(&nv.path)),
                            ));
                            continue;
                        };
                        match literal_attr(&nv.value) {
                            Some(v) => attrs.push((key.to_string(), v)),
                            None => errors.push(FrontendError::spanned(
                                &nv.value,
                                format!(
                                    "expected an integer, float, bool or string attribute value, found {}",
                                    quoted(&nv.value)
                                ),
                            )),
                        }
                    }
                }
                Err(e) => errors.extend(from_syn(e)),
            }
            continue;
        }
        errors.push(unsupported(
            a,
            "`#[function]`, `#[func_attr(…)]`, `#[schedule(…)]` or a doc comment on a relax function",
            &quoted(a),
        ));
    }
    if !is_function {
        errors.push(FrontendError::spanned(
            &f.sig.ident,
            format!(
                "expected `#[function]` on `fn {}` (every fn of the module is a relax function)",
                f.sig.ident
            ),
        ));
    }
    let sig = &f.sig;
    let header_problem = if sig.constness.is_some() {
        Some(("`const`", SpanRange::of(&sig.constness)))
    } else if sig.asyncness.is_some() {
        Some(("`async`", SpanRange::of(&sig.asyncness)))
    } else if sig.unsafety.is_some() {
        Some(("`unsafe`", SpanRange::of(&sig.unsafety)))
    } else if sig.abi.is_some() {
        Some(("an `extern` ABI", SpanRange::of(&sig.abi)))
    } else if !sig.generics.params.is_empty() {
        Some(("generics", SpanRange::of(&sig.generics)))
    } else if sig.generics.where_clause.is_some() {
        Some(("generics", SpanRange::of(&sig.generics.where_clause)))
    } else if sig.variadic.is_some() {
        Some(("a variadic parameter", SpanRange::of(&sig.variadic)))
    } else {
        None
    };
    if let Some((what, range)) = header_problem {
        errors.push(unsupported_at(
            range,
            "a plain `fn name(…) -> … { … }`",
            what,
        ));
    }
    let mut params = Vec::new();
    for input in &sig.inputs {
        match input {
            syn::FnArg::Typed(pt) => match &*pt.pat {
                syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                    params.push((pi.ident.clone(), (*pt.ty).clone()))
                }
                other => errors.push(unsupported(other, "a parameter name", &quoted(other))),
            },
            syn::FnArg::Receiver(r) => {
                errors.push(unsupported(r, "a parameter `name: Type`", "`self`"))
            }
        }
    }
    let ret = match &sig.output {
        syn::ReturnType::Default => None,
        syn::ReturnType::Type(_, t) => Some((**t).clone()),
    };
    Some(FnDef {
        name: sig.ident.clone(),
        public: !matches!(f.vis, syn::Visibility::Inherited),
        pure,
        doc: doc_of(&f.attrs),
        attrs,
        schedules,
        params,
        ret,
        block: (*f.block).clone(),
    })
}

/// The span of a function for errors about the whole function.
pub(super) fn fn_span(f: &FnDef) -> Span {
    f.name.span()
}
