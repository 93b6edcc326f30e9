//! `relax::pattern!`: dataflow patterns written in the DSL's expression
//! syntax, checked while the macro expands.
//!
//! | DSL | pattern |
//! |---|---|
//! | `_` | an anonymous wildcard |
//! | `x` (an identifier) | a wildcard named `x` (`Match::named("x")`); the same name is the same pattern object, so `R::add(x, x)` needs one value twice |
//! | `x: Tensor![(n, 784), f32]` | the wildcard `x` that also needs this StructInfo (`has_struct_info`); a name is annotated once, wherever it appears |
//! | `_: Tensor![ndim = 2, f32]` | an anonymous wildcard with a StructInfo |
//! | `R::matmul(a, b)`, `R::nn::relu(a)` | a call of the op with exactly these arguments |
//! | `p \| q` | either |
//! | `(p)` | `p` |
//!
//! Annotations are the DSL's (`Tensor![…]`, `Shape![…]`, tuples, scalar
//! dtypes, `Object`). Their symbolic dims are the pattern's own variables:
//! `n` binds to the matched dim on first use and must be provably equal
//! wherever it appears again, across all the annotations of one pattern.
//!
//! | `R::sum(x, axis = [1])` | the call, with this attribute (`has_attr`, the value as the op stores it; attributes not written are not checked) |
//!
//! An op that is not registered is an error on its path naming the
//! nearest op; a wrong number of arguments is an error on the call naming
//! the op's arity; an attribute the op does not have, or of the wrong type,
//! is an error on it, as in the DSL. Other syntax is an error too. The expansion is one Rust block expression of type
//! `relax::dpl::Pattern`, built by constructor calls.

use super::errors::{from_syn, nearest};
use super::types::{Syms, TypeCx};
use super::{FrontendError, SpanRange};
use crate::ir::StructInfo;
use crate::op::Arity;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::parse::{ParseStream, Parser};

/// A pattern as written, before its ops and annotations are checked.
enum Pat {
    /// `_`, maybe with an annotation.
    Wildcard(Option<syn::Type>),
    /// A named wildcard, maybe with an annotation.
    Name(syn::Ident, Option<syn::Type>),
    /// `p | q`.
    Or(Box<Pat>, Box<Pat>),
    /// `R::op(args)`; `span` covers the path and the parentheses.
    Call {
        path: syn::Path,
        args: Vec<Arg>,
        span: SpanRange,
    },
}

/// One argument of a call pattern.
enum Arg {
    Pat(Box<Pat>),
    /// `name = value`: the call must have this attribute.
    Attr(syn::Ident, Box<syn::Expr>),
}

const EXPECTED: &str = "expected a pattern: `_`, a name, a call `R::op(…)`, or `p | q`";

fn parse_alt(input: ParseStream) -> syn::Result<Pat> {
    let mut p = parse_primary(input)?;
    while input.peek(syn::Token![|]) && !input.peek(syn::Token![||]) {
        input.parse::<syn::Token![|]>()?;
        let q = parse_primary(input)?;
        p = Pat::Or(Box::new(p), Box::new(q));
    }
    Ok(p)
}

/// `: Type` after a name or `_`, if present (`::` is a path, not this).
fn parse_annotation(input: ParseStream) -> syn::Result<Option<syn::Type>> {
    if input.peek(syn::Token![:]) && !input.peek(syn::Token![::]) {
        input.parse::<syn::Token![:]>()?;
        return Ok(Some(input.parse()?));
    }
    Ok(None)
}

fn parse_primary(input: ParseStream) -> syn::Result<Pat> {
    if input.peek(syn::Token![_]) {
        input.parse::<syn::Token![_]>()?;
        return Ok(Pat::Wildcard(parse_annotation(input)?));
    }
    if input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in input);
        let p = parse_alt(&content)?;
        if !content.is_empty() {
            return Err(content.error("expected `)` or `|` after a pattern"));
        }
        return Ok(p);
    }
    if !(input.peek(syn::Ident) || input.peek(syn::Token![::])) {
        return Err(input.error(EXPECTED));
    }
    let path = input.call(syn::Path::parse_mod_style)?;
    if input.peek(syn::token::Paren) {
        let content;
        let paren = syn::parenthesized!(content in input);
        let span = SpanRange::of(&path).to(SpanRange::from(paren.span.close()));
        let mut args = Vec::new();
        while !content.is_empty() {
            if content.peek(syn::Ident)
                && content.peek2(syn::Token![=])
                && !content.peek2(syn::Token![==])
            {
                let name: syn::Ident = content.parse()?;
                content.parse::<syn::Token![=]>()?;
                let value: syn::Expr = content.parse()?;
                args.push(Arg::Attr(name, Box::new(value)));
            } else {
                args.push(Arg::Pat(Box::new(parse_alt(&content)?)));
            }
            if content.is_empty() {
                break;
            }
            content.parse::<syn::Token![,]>()?;
        }
        return Ok(Pat::Call { path, args, span });
    }
    match path.get_ident() {
        Some(ident) => Ok(Pat::Name(ident.clone(), parse_annotation(input)?)),
        None => Err(syn::Error::new_spanned(
            &path,
            "expected a call of this op, `R::op(…)`, or a name",
        )),
    }
}

/// The Rust code of the pattern `tokens` describe, or every error.
pub fn lower_pattern_macro(tokens: TokenStream) -> Result<TokenStream, Vec<FrontendError>> {
    let pat = (|input: ParseStream| {
        let p = parse_alt(input)?;
        if !input.is_empty() {
            return Err(input.error("expected `|` or the end of the pattern"));
        }
        Ok(p)
    })
    .parse2(tokens)
    .map_err(from_syn)?;
    let mut syms = Syms::new();
    let mut cx = Cx {
        names: Vec::new(),
        sinfos: Vec::new(),
        errors: Vec::new(),
        syms: &mut syms,
    };
    let body = cx.pattern(&pat);
    if !cx.errors.is_empty() {
        return Err(cx.errors);
    }
    let sinfos: Vec<StructInfo> = cx.sinfos.clone();
    let (lets, values) = super::codegen::quote_struct_infos(&sinfos);
    let sinfo_lets = values.iter().enumerate().map(|(i, v)| {
        let id = format_ident!("__relax_sinfo_{}", i);
        quote! { let #id: ::relax::ir::StructInfo = #v; }
    });
    let names = cx.names.iter().map(|(n, ann)| {
        let var = format_ident!("__relax_pattern_{}", n);
        let inner = annotated(quote!(::relax::dpl::wildcard()), *ann);
        quote! { let #var = ::relax::dpl::named(#n, #inner); }
    });
    Ok(quote! {{
        #lets
        #(#sinfo_lets)*
        #(#names)*
        #body
    }})
}

/// `inner`, with the annotation numbered `ann` if there is one.
fn annotated(inner: TokenStream, ann: Option<usize>) -> TokenStream {
    match ann {
        None => inner,
        Some(i) => {
            let id = format_ident!("__relax_sinfo_{}", i);
            quote! { #inner.has_struct_info(#id.clone()) }
        }
    }
}

struct Cx<'a> {
    /// The named wildcards in order of first use, each with the index of
    /// its annotation in `sinfos`.
    names: Vec<(String, Option<usize>)>,
    /// The annotations' StructInfos.
    sinfos: Vec<StructInfo>,
    errors: Vec<FrontendError>,
    /// The annotations' symbolic dims, shared by the whole pattern.
    syms: &'a mut Syms,
}

impl Cx<'_> {
    /// The index in `sinfos` of annotation `ty`, or `None` after an error.
    fn annotation(&mut self, ty: &syn::Type) -> Option<usize> {
        let mut cx = TypeCx {
            syms: self.syms,
            errors: &mut self.errors,
            introduce: true,
            introduced: vec![],
        };
        let s = cx.struct_info(ty).ok()?;
        self.sinfos.push(s);
        Some(self.sinfos.len() - 1)
    }

    fn pattern(&mut self, p: &Pat) -> TokenStream {
        match p {
            Pat::Wildcard(None) => quote! { ::relax::dpl::wildcard() },
            Pat::Wildcard(Some(ty)) => {
                let ann = self.annotation(ty);
                annotated(quote! { ::relax::dpl::wildcard() }, ann)
            }
            Pat::Or(a, b) => {
                let (l, r) = (self.pattern(a), self.pattern(b));
                quote! { (#l | #r) }
            }
            Pat::Name(ident, ty) => {
                let name = ident.to_string();
                let ann = ty.as_ref().and_then(|t| self.annotation(t));
                match self.names.iter_mut().find(|(n, _)| *n == name) {
                    None => self.names.push((name.clone(), ann)),
                    Some((_, first)) => {
                        if let (Some(ty), Some(_)) = (ty, &first) {
                            self.errors.push(FrontendError::spanned(
                                ty,
                                format!("`{name}` is annotated twice; a name is one pattern, annotate it once"),
                            ));
                        } else if first.is_none() {
                            *first = ann;
                        }
                    }
                }
                let var = format_ident!("__relax_pattern_{}", name);
                quote! { #var.clone() }
            }
            Pat::Call { path, args, span } => self.call(path, args, *span),
        }
    }

    fn call(&mut self, path: &syn::Path, args: &[Arg], span: SpanRange) -> TokenStream {
        let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if segs.len() < 2 || segs[0] != "R" || path.leading_colon.is_some() {
            self.errors.push(FrontendError::spanned(
                path,
                "expected an op such as `R::add` as the callee",
            ));
            return quote! { ::relax::dpl::wildcard() };
        }
        let dsl = segs.join("::");
        let op = format!("relax.{}", segs[1..].join("."));
        let Some(info) = crate::op::lookup(&op) else {
            let known = crate::op::all()
                .map(|i| i.name.trim_start_matches("relax."))
                .collect::<Vec<_>>();
            let want = segs[1..].join(".");
            let mut message = format!("unknown op `{dsl}`");
            if let Some(near) = nearest(&want, known) {
                message.push_str(&format!("; did you mean `R::{}`?", near.replace('.', "::")));
            }
            self.errors.push(FrontendError::spanned(path, message));
            return quote! { ::relax::dpl::wildcard() };
        };
        let mut lowered = Vec::new();
        let mut given = crate::ir::Attrs::new();
        let mut keys = Vec::new();
        for a in args {
            match a {
                Arg::Attr(key, value) => match pattern_attr(value) {
                    Some(v) => {
                        given = given.with(&key.to_string(), v);
                        keys.push((key, &**value));
                    }
                    None => self.errors.push(FrontendError::spanned(
                        value,
                        "expected an attribute value in a pattern: a literal, a list of them, `None` or a dtype",
                    )),
                },
                Arg::Pat(p) => lowered.push(self.pattern(p)),
            }
        }
        // The values as the op stores them (`axis = 1` may be a list), so
        // they compare equal to a matched call's; only the keys written
        // are checked.
        let mut attrs = Vec::new();
        if !keys.is_empty() {
            match info.normalize_attrs(&given) {
                Ok(norm) => {
                    for (key, _) in &keys {
                        let k = key.to_string();
                        if let Some(v) = norm.get(&k) {
                            attrs.push((k, v.clone()));
                        }
                    }
                }
                Err(d) => {
                    let at = keys
                        .iter()
                        .find(|(k, _)| d.message.contains(&format!("`{k}`")))
                        .map_or(span, |(k, v)| SpanRange::of(*k).to(SpanRange::of(*v)));
                    self.errors.push(FrontendError::new(at, d.message));
                }
            }
        }
        let n = lowered.len();
        let fits = match info.arity {
            Arity::Exact(k) => n == k,
            Arity::AtLeast(k) => n >= k,
        };
        if !fits {
            let want = match info.arity {
                Arity::Exact(k) => format!("{k}"),
                Arity::AtLeast(k) => format!("at least {k}"),
            };
            self.errors.push(FrontendError::new(
                span,
                format!("`{dsl}` takes {want} argument(s), found {n}"),
            ));
        }
        let call = quote! { ::relax::dpl::__op(#op).call([#(#lowered),*]) };
        if attrs.is_empty() {
            return call;
        }
        let values: Vec<_> = attrs.iter().map(|(_, v)| v.clone()).collect();
        let (lets, values) = super::codegen::quote_attr_values(&values);
        let keys = attrs.iter().map(|(k, _)| k);
        quote! {{
            #lets
            #call.has_attr([#((#keys, #values)),*])
        }}
    }
}

/// An attribute value written in a pattern: a literal, a list or tuple of
/// them, `None`, or a dtype name.
fn pattern_attr(e: &syn::Expr) -> Option<crate::ir::AttrValue> {
    use crate::ir::AttrValue;
    if let Some(v) = super::syntax::literal_attr(e) {
        return Some(v);
    }
    match e {
        syn::Expr::Array(a) => a
            .elems
            .iter()
            .map(pattern_attr)
            .collect::<Option<_>>()
            .map(AttrValue::Array),
        syn::Expr::Tuple(t) => t
            .elems
            .iter()
            .map(pattern_attr)
            .collect::<Option<_>>()
            .map(AttrValue::Array),
        syn::Expr::Path(p) => {
            let name = p.path.get_ident()?.to_string();
            if name == "None" {
                return Some(AttrValue::None);
            }
            super::types::dtype_named(&name).map(AttrValue::DataType)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(src: &str) -> Vec<String> {
        let tokens: TokenStream = src.parse().unwrap();
        match lower_pattern_macro(tokens) {
            Ok(_) => vec![],
            Err(es) => es.into_iter().map(|e| e.message).collect(),
        }
    }

    #[test]
    fn good_patterns_expand_and_bad_ones_are_spanned_errors() {
        assert!(errors("R::add(R::matmul(x, w), _) | R::nn::relu(x)").is_empty());
        assert_eq!(
            errors("R::matmull(x, w)"),
            ["unknown op `R::matmull`; did you mean `R::matmul`?"]
        );
        assert_eq!(
            errors("R::add(x)"),
            ["`R::add` takes 2 argument(s), found 1"]
        );
        assert!(errors("R::sum(x, axis = [1], keepdims = true)").is_empty());
        assert_eq!(errors("R::sum(x, axes = [1])").len(), 1);
        assert_eq!(errors("R::sum(x, axis = y + 1)").len(), 1);
        assert_eq!(errors("1 + 2").len(), 1);
        assert_eq!(errors("R::add(x, y) z").len(), 1);
    }

    #[test]
    fn annotations_are_checked_and_share_their_dims() {
        assert!(
            errors("R::matmul(x: Tensor![(n, 784), f32], w: Tensor![(784, m), f32])").is_empty()
        );
        assert!(errors("R::add(x, _: Tensor![ndim = 2, f32]) | R::exp(x)").is_empty());
        assert_eq!(
            errors("R::add(x: Tensor![(n, 4), f32], x: Tensor![(n, 4), f32])"),
            ["`x` is annotated twice; a name is one pattern, annotate it once"]
        );
        assert_eq!(errors("R::exp(x: Tensor![(n, 4), f33])").len(), 1);
        let out = lower_pattern_macro(
            "R::matmul(x: Tensor![(n, 784), f32], w: Tensor![(784, n), f32])"
                .parse()
                .unwrap(),
        )
        .unwrap()
        .to_string();
        assert_eq!(out.matches("TirVar :: new (\"n\")").count(), 1, "{out}");
        assert_eq!(out.matches("has_struct_info").count(), 2, "{out}");
    }

    #[test]
    fn a_name_is_declared_once() {
        let out = lower_pattern_macro("R::add(x, x)".parse().unwrap())
            .unwrap()
            .to_string();
        assert_eq!(out.matches("named (\"x\"").count(), 1, "{out}");
    }
}
