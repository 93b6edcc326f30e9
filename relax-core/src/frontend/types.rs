//! Annotations: DSL types to StructInfo, and StructInfo back to DSL text.
//!
//! 1. An annotation is a Rust type: `Tensor![(n, 784), f32]`,
//!    `Tensor![ndim = 2, f32]`, `Tensor![_, _]`, `Shape![(n, m)]`,
//!    `Shape![ndim = 2]`, a tuple `(A, B)`, a scalar dtype name (`i64`,
//!    `f32`, `bool`: a `Prim`), `Object`, or `fn(A, B) -> C`.
//! 2. Dimensions are integer literals, symbolic dims (identifiers) and
//!    `+ - * / %` over them (`/` is floor division, `%` floor modulo).
//! 3. Symbolic dims live in [`Syms`], a stack of scopes. Where an annotation
//!    may *introduce* dims (parameters, `R::match_cast` patterns) an unknown
//!    name makes a new `int64` variable; elsewhere it is the error
//!    "undefined symbolic dim".
//! 4. [`dsl`] prints StructInfo in this syntax, so messages read like the
//!    user's source.

use super::errors::{quoted, unsupported, Failed, Lowering};
use super::{FrontendError, SpanRange};
use crate::ir::{DataType, PrimExpr, PrimExprKind, StructInfo, StructInfoKind, TirVar};
use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use std::collections::HashMap;
use syn::parse::{ParseStream, Parser};

/// Symbolic dims in scope, innermost scope last.
#[derive(Clone, Default)]
pub(super) struct Syms {
    frames: Vec<HashMap<String, TirVar>>,
}

impl Syms {
    /// One (function) scope.
    pub(super) fn new() -> Self {
        Syms {
            frames: vec![HashMap::new()],
        }
    }

    /// Opens a nested scope (an `if` branch).
    pub(super) fn push(&mut self) {
        self.frames.push(HashMap::new());
    }

    /// Closes the innermost scope.
    pub(super) fn pop(&mut self) {
        if self.frames.len() > 1 {
            self.frames.pop();
        }
    }

    /// The dim named `name`, if in scope.
    pub(super) fn lookup(&self, name: &str) -> Option<TirVar> {
        self.frames.iter().rev().find_map(|f| f.get(name).cloned())
    }

    /// Every name in scope (for "did you mean").
    pub(super) fn names(&self) -> Vec<String> {
        self.frames.iter().flat_map(|f| f.keys().cloned()).collect()
    }

    fn define(&mut self, name: &str, v: TirVar) {
        if let Some(f) = self.frames.last_mut() {
            f.insert(name.to_string(), v);
        }
    }
}

/// Lowers annotations and dims, recording errors.
pub(super) struct TypeCx<'a> {
    /// The dims in scope.
    pub syms: &'a mut Syms,
    /// Where errors go.
    pub errors: &'a mut Vec<FrontendError>,
    /// Whether an unknown name introduces a new dim.
    pub introduce: bool,
    /// The dims introduced so far, with the span of their first appearance.
    pub introduced: Vec<(TirVar, Span)>,
}

/// The parsed inside of `Tensor![…]` / `Shape![…]`.
enum ShapeAnn {
    Dims(Vec<syn::Expr>),
    Ndim(i32),
    Unknown,
}

enum DtypeAnn {
    Known(syn::Ident),
    Str(syn::LitStr),
    Unknown,
}

fn parse_shape_part(input: ParseStream) -> syn::Result<ShapeAnn> {
    if input.peek(syn::Token![_]) {
        input.parse::<syn::Token![_]>()?;
        return Ok(ShapeAnn::Unknown);
    }
    if input.peek(syn::Ident) && input.peek2(syn::Token![=]) {
        let key: syn::Ident = input.parse()?;
        if key != "ndim" {
            return Err(syn::Error::new_spanned(
                &key,
                format!("expected `ndim = …`, found `{key} = …`"),
            ));
        }
        input.parse::<syn::Token![=]>()?;
        let lit: syn::LitInt = input.parse()?;
        let n: i32 = lit.base10_parse()?;
        return Ok(ShapeAnn::Ndim(n));
    }
    let e: syn::Expr = input.parse()?;
    Ok(match e {
        syn::Expr::Tuple(t) => ShapeAnn::Dims(t.elems.into_iter().collect()),
        syn::Expr::Array(a) => ShapeAnn::Dims(a.elems.into_iter().collect()),
        syn::Expr::Paren(p) => ShapeAnn::Dims(vec![*p.expr]),
        other => {
            return Err(syn::Error::new_spanned(
                &other,
                format!(
                    "expected a shape such as `(n, 784)`, `ndim = 2` or `_`, found {}",
                    quoted(&other)
                ),
            ))
        }
    })
}

fn parse_dtype_part(input: ParseStream) -> syn::Result<DtypeAnn> {
    if input.peek(syn::Token![_]) {
        input.parse::<syn::Token![_]>()?;
        return Ok(DtypeAnn::Unknown);
    }
    if input.peek(syn::LitStr) {
        return Ok(DtypeAnn::Str(input.parse()?));
    }
    if input.peek(syn::Ident) && input.peek2(syn::Token![=]) {
        let key: syn::Ident = input.parse()?;
        if key != "dtype" {
            return Err(syn::Error::new_spanned(
                &key,
                format!("expected a dtype such as `f32`, found `{key} = …`"),
            ));
        }
        input.parse::<syn::Token![=]>()?;
        return parse_dtype_part(input);
    }
    Ok(DtypeAnn::Known(input.parse()?))
}

fn end(input: ParseStream) -> syn::Result<()> {
    if input.peek(syn::Token![,]) {
        input.parse::<syn::Token![,]>()?;
    }
    if !input.is_empty() {
        return Err(input.error("expected the end of the annotation"));
    }
    Ok(())
}

fn parse_tensor(tokens: TokenStream) -> syn::Result<(ShapeAnn, DtypeAnn)> {
    (|input: ParseStream| {
        let shape = parse_shape_part(input)?;
        input.parse::<syn::Token![,]>()?;
        let dtype = parse_dtype_part(input)?;
        end(input)?;
        Ok((shape, dtype))
    })
    .parse2(tokens)
}

fn parse_shape(tokens: TokenStream) -> syn::Result<ShapeAnn> {
    (|input: ParseStream| {
        let shape = parse_shape_part(input)?;
        end(input)?;
        Ok(shape)
    })
    .parse2(tokens)
}

/// The dtype named `name` (`f32`, `float32`, `bool`).
pub(super) fn dtype_named(name: &str) -> Option<DataType> {
    name.parse::<DataType>()
        .ok()
        .filter(|d| d.is_valid_scalar() && !d.is_handle())
}

impl TypeCx<'_> {
    fn error(&mut self, e: FrontendError) -> Failed {
        self.errors.push(e);
        Failed
    }

    /// The StructInfo an annotation type denotes.
    pub(super) fn struct_info(&mut self, ty: &syn::Type) -> Lowering<StructInfo> {
        use syn::Type as T;
        match ty {
            T::Macro(m) => self.macro_type(&m.mac),
            T::Paren(p) => self.struct_info(&p.elem),
            T::Group(g) => self.struct_info(&g.elem),
            T::Tuple(t) => {
                let mut fields = Vec::new();
                let mut failed = false;
                for e in &t.elems {
                    match self.struct_info(e) {
                        Ok(s) => fields.push(s),
                        Err(_) => failed = true,
                    }
                }
                if failed {
                    return Err(Failed);
                }
                Ok(StructInfo::tuple(fields))
            }
            T::Path(p) if p.qself.is_none() => {
                let Some(ident) = p.path.get_ident() else {
                    return Err(self.error(unsupported(
                        ty,
                        "an annotation such as `Tensor![(n, 4), f32]`, `i64` or `Object`",
                        &quoted(ty),
                    )));
                };
                let name = ident.to_string();
                if name == "Object" {
                    return Ok(StructInfo::object());
                }
                if let Some(d) = dtype_named(&name) {
                    if d.is_void() {
                        return Err(self.error(FrontendError::spanned(
                            ident,
                            "expected a scalar dtype such as `i64` or `f32`, found `void`",
                        )));
                    }
                    return Ok(StructInfo::prim(d));
                }
                let hint = match name.as_str() {
                    "Tensor" | "Shape" => format!("; write `{name}![…]`"),
                    _ => String::new(),
                };
                Err(self.error(FrontendError::spanned(
                    ident,
                    format!(
                        "unknown annotation `{name}`: expected `Tensor![…]`, `Shape![…]`, a tuple, a scalar dtype such as `i64`, `Object` or `fn(…) -> …`{hint}"
                    ),
                )))
            }
            T::BareFn(f) => {
                let mut params = Vec::new();
                let mut failed = false;
                for a in &f.inputs {
                    match self.struct_info(&a.ty) {
                        Ok(s) => params.push(s),
                        Err(_) => failed = true,
                    }
                }
                let ret = match &f.output {
                    syn::ReturnType::Default => Ok(StructInfo::tuple(vec![])),
                    syn::ReturnType::Type(_, t) => self.struct_info(t),
                };
                if failed || ret.is_err() {
                    return Err(Failed);
                }
                Ok(StructInfo::func(params, ret?, true))
            }
            other => Err(self.error(unsupported(
                other,
                "an annotation such as `Tensor![(n, 4), f32]`, `(A, B)`, `i64` or `Object`",
                &quoted(other),
            ))),
        }
    }

    /// An annotation written in expression position (`out = Tensor![…]`).
    pub(super) fn struct_info_expr(&mut self, e: &syn::Expr) -> Lowering<StructInfo> {
        match syn::parse2::<syn::Type>(e.to_token_stream()) {
            Ok(ty) => self.struct_info(&ty),
            Err(_) => Err(self.error(unsupported(
                e,
                "an annotation such as `Tensor![(n, 4), f32]`",
                &quoted(e),
            ))),
        }
    }

    fn macro_type(&mut self, mac: &syn::Macro) -> Lowering<StructInfo> {
        let name = mac
            .path
            .get_ident()
            .map(|i| i.to_string())
            .unwrap_or_default();
        match name.as_str() {
            "Tensor" => {
                let (shape, dtype) = match parse_tensor(mac.tokens.clone()) {
                    Ok(p) => p,
                    Err(e) => {
                        self.errors.extend(super::errors::from_syn(e));
                        return Err(Failed);
                    }
                };
                let dtype = match dtype {
                    DtypeAnn::Unknown => Ok(DataType::void()),
                    DtypeAnn::Known(i) => self.dtype(&i.to_string(), SpanRange::of(&i)),
                    DtypeAnn::Str(s) => self.dtype(&s.value(), SpanRange::of(&s)),
                };
                let shape = self.shape_ann(shape);
                let dtype = dtype?;
                Ok(match shape? {
                    ShapeValue::Dims(d) => StructInfo::tensor(d, dtype),
                    ShapeValue::Ndim(n) => StructInfo::tensor_ndim(n, dtype),
                })
            }
            "Shape" => {
                let shape = match parse_shape(mac.tokens.clone()) {
                    Ok(p) => p,
                    Err(e) => {
                        self.errors.extend(super::errors::from_syn(e));
                        return Err(Failed);
                    }
                };
                Ok(match self.shape_ann(shape)? {
                    ShapeValue::Dims(d) => StructInfo::shape(d),
                    ShapeValue::Ndim(n) => StructInfo::shape_ndim(n),
                })
            }
            _ => Err(self.error(unsupported(
                mac,
                "`Tensor![…]` or `Shape![…]`",
                &quoted(mac),
            ))),
        }
    }

    fn dtype(&mut self, name: &str, range: SpanRange) -> Lowering<DataType> {
        match dtype_named(name) {
            Some(d) => Ok(d),
            None => Err(self.error(FrontendError::new(
                range,
                format!("unknown dtype `{name}`: expected a name such as `f32`, `float32`, `i64`, `bool` or `_` (unknown)"),
            ))),
        }
    }

    fn shape_ann(&mut self, shape: ShapeAnn) -> Lowering<ShapeValue> {
        match shape {
            ShapeAnn::Unknown => Ok(ShapeValue::Ndim(crate::ir::UNKNOWN_NDIM)),
            ShapeAnn::Ndim(n) => Ok(ShapeValue::Ndim(n)),
            ShapeAnn::Dims(exprs) => {
                let mut dims = Vec::new();
                let mut failed = false;
                for e in &exprs {
                    match self.dim(e) {
                        Ok(d) => dims.push(d),
                        Err(_) => failed = true,
                    }
                }
                if failed {
                    Err(Failed)
                } else {
                    Ok(ShapeValue::Dims(dims))
                }
            }
        }
    }

    /// A dimension expression (`n`, `784`, `n * 2`, `(n + 1) / 2`).
    pub(super) fn dim(&mut self, e: &syn::Expr) -> Lowering<PrimExpr> {
        use syn::Expr as E;
        match e {
            E::Lit(l) => match &l.lit {
                syn::Lit::Int(i) => match i.base10_parse::<i64>() {
                    Ok(v) => Ok(PrimExpr::int(v)),
                    Err(_) => Err(self.error(FrontendError::spanned(
                        i,
                        format!("expected a dimension that fits in i64, found `{i}`"),
                    ))),
                },
                other => Err(self.error(FrontendError::spanned(
                    other,
                    format!(
                        "expected an integer dimension or a symbolic dim, found {}",
                        quoted(other)
                    ),
                ))),
            },
            E::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
                let ident = p.path.get_ident().expect("checked above");
                let name = ident.to_string();
                if let Some(v) = self.syms.lookup(&name) {
                    return Ok(PrimExpr::var(&v));
                }
                if self.introduce {
                    let v = TirVar::new(&name);
                    self.syms.define(&name, v.clone());
                    self.introduced.push((v.clone(), ident.span()));
                    return Ok(PrimExpr::var(&v));
                }
                let names = self.syms.names();
                let mut err = FrontendError::spanned(
                    ident,
                    format!("undefined symbolic dim `{name}`"),
                )
                .with_note(
                    "a symbolic dim is introduced by its first appearance in a parameter annotation or an `R::match_cast` pattern",
                );
                if let Some(n) = super::errors::nearest(&name, names.iter().map(String::as_str)) {
                    err.message.push_str(&format!("; did you mean `{n}`?"));
                }
                Err(self.error(err))
            }
            E::Paren(p) => self.dim(&p.expr),
            E::Group(g) => self.dim(&g.expr),
            E::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => {
                let v = self.dim(&u.expr)?;
                Ok(match v.as_int().and_then(i64::checked_neg) {
                    Some(i) => PrimExpr::int(i),
                    None => -v,
                })
            }
            E::Binary(b) => {
                let l = self.dim(&b.left);
                let r = self.dim(&b.right);
                let (l, r) = (l?, r?);
                match b.op {
                    syn::BinOp::Add(_) => Ok(l + r),
                    syn::BinOp::Sub(_) => Ok(l - r),
                    syn::BinOp::Mul(_) => Ok(l * r),
                    syn::BinOp::Div(_) => Ok(l.floordiv(r)),
                    syn::BinOp::Rem(_) => Ok(l.floormod(r)),
                    _ => Err(self.error(unsupported(
                        &b.op,
                        "`+`, `-`, `*`, `/` or `%` in a dimension",
                        &quoted(&b.op),
                    ))),
                }
            }
            other => Err(self.error(unsupported(
                other,
                "a dimension (an integer, a symbolic dim, or `+ - * / %` of them)",
                &quoted(other),
            ))),
        }
    }
}

enum ShapeValue {
    Dims(Vec<PrimExpr>),
    Ndim(i32),
}

// ----- printing in DSL syntax ------------------------------------------------

fn prec(e: &PrimExpr) -> u8 {
    use PrimExprKind as K;
    match e.kind() {
        K::Add(..) | K::Sub(..) => 5,
        K::Mul(..) | K::Div(..) | K::Mod(..) => 6,
        K::Var(_) | K::IntImm(_) | K::FloatImm(_) | K::Min(..) | K::Max(..) => 9,
        _ => 1,
    }
}

/// A dimension in DSL syntax (`n * 2`, `(n + 1) / 2`).
pub(super) fn dsl_dim(e: &PrimExpr) -> String {
    use PrimExprKind as K;
    let p = prec(e);
    let operand = |x: &PrimExpr, right: bool| {
        let q = prec(x);
        let s = dsl_dim(x);
        let neg = matches!(x.kind(), K::IntImm(v) if *v < 0);
        if q < p || (right && q == p) || neg {
            format!("({s})")
        } else {
            s
        }
    };
    let infix = |a: &PrimExpr, op: &str, b: &PrimExpr| {
        format!("{} {op} {}", operand(a, false), operand(b, true))
    };
    match e.kind() {
        K::Var(v) => v.name().to_string(),
        K::IntImm(v) if e.dtype().is_bool() => (*v != 0).to_string(),
        K::IntImm(v) => v.to_string(),
        K::Add(a, b) => infix(a, "+", b),
        K::Sub(a, b) => infix(a, "-", b),
        K::Mul(a, b) => infix(a, "*", b),
        K::Div(a, b) => infix(a, "/", b),
        K::Mod(a, b) => infix(a, "%", b),
        K::Min(a, b) => format!("min({}, {})", dsl_dim(a), dsl_dim(b)),
        K::Max(a, b) => format!("max({}, {})", dsl_dim(a), dsl_dim(b)),
        _ => e.to_string(),
    }
}

fn dsl_dims(values: &[PrimExpr]) -> String {
    match values {
        [d] => format!("({},)", dsl_dim(d)),
        _ => format!(
            "({})",
            values.iter().map(dsl_dim).collect::<Vec<_>>().join(", ")
        ),
    }
}

fn dsl_dtype(d: DataType) -> String {
    if d.is_void() {
        "_".to_string()
    } else {
        d.short_name()
    }
}

/// StructInfo in DSL syntax: `Tensor![(n, 784), f32]`, `(i64, Object)`.
pub(super) fn dsl(s: &StructInfo) -> String {
    match s.kind() {
        StructInfoKind::Object => "Object".to_string(),
        StructInfoKind::Prim(p) => match &p.value {
            Some(v) => format!("{} (= {})", dsl_dtype(p.dtype), dsl_dim(v)),
            None => dsl_dtype(p.dtype),
        },
        StructInfoKind::Shape(sh) => match &sh.values {
            Some(v) => format!("Shape![{}]", dsl_dims(v)),
            None if sh.ndim < 0 => "Shape![_]".to_string(),
            None => format!("Shape![ndim = {}]", sh.ndim),
        },
        StructInfoKind::Tensor(t) => {
            let shape = match (t.shape_values(), &t.shape) {
                (Some(v), _) => dsl_dims(v),
                (None, Some(e)) => match e.as_var() {
                    Some(v) => v.name_hint().to_string(),
                    None => "_".to_string(),
                },
                (None, None) if t.ndim >= 0 => format!("ndim = {}", t.ndim),
                (None, None) => "_".to_string(),
            };
            format!("Tensor![{shape}, {}]", dsl_dtype(t.dtype))
        }
        StructInfoKind::Tuple(fields) => match fields.as_slice() {
            [f] => format!("({},)", dsl(f)),
            _ => format!(
                "({})",
                fields.iter().map(dsl).collect::<Vec<_>>().join(", ")
            ),
        },
        StructInfoKind::Func(f) => {
            let params = match &f.params {
                Some(ps) => ps.iter().map(dsl).collect::<Vec<_>>().join(", "),
                None => "..".to_string(),
            };
            format!("fn({params}) -> {}", dsl(&f.ret))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lower(src: &str, introduce: bool) -> (Option<StructInfo>, Vec<FrontendError>) {
        let ty: syn::Type = syn::parse_str(src).unwrap();
        let mut syms = Syms::new();
        let mut errors = vec![];
        let mut cx = TypeCx {
            syms: &mut syms,
            errors: &mut errors,
            introduce,
            introduced: vec![],
        };
        let s = cx.struct_info(&ty).ok();
        (s, errors)
    }

    #[test]
    fn annotations_round_trip_through_dsl_text() {
        for src in [
            "Tensor![(n, 784), f32]",
            "Tensor![ndim = 2, f32]",
            "Tensor![_, _]",
            "Tensor![(n * 2, n / 2, n % 3, (n + 1) * 2), i64]",
            "Shape![(n, m)]",
            "Shape![ndim = 2]",
            "(Tensor![(1,), bool], i64, Object)",
            "fn(Tensor![_, f32]) -> Object",
        ] {
            let (s, errors) = lower(src, true);
            assert!(errors.is_empty(), "{src}: {errors:?}");
            assert_eq!(dsl(&s.unwrap()), src);
        }
        let (s, _) = lower("Tensor![(2, 3), \"float32\"]", false);
        assert_eq!(dsl(&s.unwrap()), "Tensor![(2, 3), f32]");
    }

    #[test]
    fn bad_annotations_are_errors() {
        let (s, errors) = lower("Tensor![(n, 4), f32]", false);
        assert!(s.is_none());
        assert_eq!(errors[0].message, "undefined symbolic dim `n`");
        let (_, errors) = lower("Tensor![(4,), flaot32]", false);
        assert!(errors[0].message.starts_with("unknown dtype `flaot32`"));
        let (_, errors) = lower("Vec<f32>", false);
        assert!(errors[0].message.starts_with("unsupported syntax"));
        let (_, errors) = lower("Tensor![(4,)]", false);
        assert_eq!(errors.len(), 1);
    }
}
