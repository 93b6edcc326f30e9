//! `relax::pattern!`: dataflow patterns written in the DSL's expression
//! syntax, checked while the macro expands.
//!
//! | DSL | pattern |
//! |---|---|
//! | `_` | an anonymous wildcard |
//! | `x` (an identifier) | a wildcard named `x` (`Match::named("x")`); the same name is the same pattern object, so `R::add(x, x)` needs one value twice |
//! | `R::matmul(a, b)`, `R::nn::relu(a)` | a call of the op with exactly these arguments |
//! | `p | q` | either |
//! | `(p)` | `p` |
//!
//! An op that is not registered is an error on its path naming the
//! nearest op; a wrong number of arguments is an error on the call naming
//! the op's arity. Attributes (`axis = 1`) and other syntax are errors
//! too. The expansion is one Rust block expression of type
//! `relax::dpl::Pattern`, built by constructor calls.

use super::errors::nearest;
use super::FrontendError;
use crate::op::Arity;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// The Rust code of the pattern `tokens` describe, or every error.
pub fn lower_pattern_macro(tokens: TokenStream) -> Result<TokenStream, Vec<FrontendError>> {
    let expr: syn::Expr = syn::parse2(tokens).map_err(|e| {
        vec![FrontendError::new(
            e.span(),
            format!("expected a pattern such as `R::add(R::matmul(x, w), _)`: {e}"),
        )]
    })?;
    let mut cx = Cx::default();
    let body = cx.pattern(&expr);
    if !cx.errors.is_empty() {
        return Err(cx.errors);
    }
    let names = cx.names.iter().map(|n| {
        let var = format_ident!("__relax_pattern_{}", n);
        quote! { let #var = ::relax::dpl::named(#n, ::relax::dpl::wildcard()); }
    });
    Ok(quote! {{
        #(#names)*
        #body
    }})
}

#[derive(Default)]
struct Cx {
    /// The named wildcards, in order of first use.
    names: Vec<String>,
    errors: Vec<FrontendError>,
}

impl Cx {
    fn pattern(&mut self, e: &syn::Expr) -> TokenStream {
        match e {
            syn::Expr::Infer(_) => quote! { ::relax::dpl::wildcard() },
            syn::Expr::Paren(p) => self.pattern(&p.expr),
            syn::Expr::Group(g) => self.pattern(&g.expr),
            syn::Expr::Binary(b) if matches!(b.op, syn::BinOp::BitOr(_)) => {
                let (l, r) = (self.pattern(&b.left), self.pattern(&b.right));
                quote! { (#l | #r) }
            }
            syn::Expr::Path(p) if p.path.get_ident().is_some() => {
                let name = p.path.get_ident().expect("checked above").to_string();
                if !self.names.contains(&name) {
                    self.names.push(name.clone());
                }
                let var = format_ident!("__relax_pattern_{}", name);
                quote! { #var.clone() }
            }
            syn::Expr::Call(c) => self.call(c),
            other => {
                self.errors.push(FrontendError::spanned(
                    other,
                    "expected a pattern: `_`, a name, a call `R::op(…)`, or `p | q`",
                ));
                quote! { ::relax::dpl::wildcard() }
            }
        }
    }

    fn call(&mut self, c: &syn::ExprCall) -> TokenStream {
        let path = match &*c.func {
            syn::Expr::Path(p) => p,
            other => {
                self.errors.push(FrontendError::spanned(
                    other,
                    "expected an op such as `R::add` as the callee",
                ));
                return quote! { ::relax::dpl::wildcard() };
            }
        };
        let segs: Vec<String> = path
            .path
            .segments
            .iter()
            .map(|s| s.ident.to_string())
            .collect();
        if segs.len() < 2 || segs[0] != "R" {
            self.errors.push(FrontendError::spanned(
                &c.func,
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
            self.errors.push(FrontendError::spanned(&c.func, message));
            return quote! { ::relax::dpl::wildcard() };
        };
        let mut args = Vec::new();
        for a in &c.args {
            if let syn::Expr::Assign(asg) = a {
                self.errors.push(FrontendError::spanned(
                    asg,
                    "attributes are not supported in patterns yet; match the call, then check its attributes with `has_attr`",
                ));
                continue;
            }
            args.push(self.pattern(a));
        }
        let n = args.len();
        let fits = match info.arity {
            Arity::Exact(k) => n == k,
            Arity::AtLeast(k) => n >= k,
        };
        if !fits {
            let want = match info.arity {
                Arity::Exact(k) => format!("{k}"),
                Arity::AtLeast(k) => format!("at least {k}"),
            };
            self.errors.push(FrontendError::spanned(
                c,
                format!("`{dsl}` takes {want} argument(s), found {n}"),
            ));
        }
        quote! { ::relax::dpl::__op(#op).call([#(#args),*]) }
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
        assert_eq!(
            errors("R::sum(x, axis = 1)")[0],
            "attributes are not supported in patterns yet; match the call, then check its attributes with `has_attr`"
        );
        assert_eq!(errors("1 + 2").len(), 1);
    }

    #[test]
    fn a_name_is_declared_once() {
        let out = lower_pattern_macro("R::add(x, x)".parse().unwrap())
            .unwrap()
            .to_string();
        assert_eq!(out.matches("named (\"x\"").count(), 1, "{out}");
    }
}
