//! The typed Rust wrapper of one Relax function.
//!
//! A wrapper's signature follows the parameters' and result's StructInfo:
//!
//! | StructInfo | parameter | result |
//! |---|---|---|
//! | tensor of dtype `T` (a Rust element type; `float16` and `bfloat16` are `::relax::half::f16` and `bf16`) | `&impl ::relax::TensorArg<T>` | `Array<T, IxN>` (rank N ≤ 6), else `ArrayD<T>` |
//! | tensor of another or unknown dtype | `&::relax::Tensor` | `::relax::Tensor` |
//! | shape | `&[i64]` | `Vec<i64>` |
//! | prim of dtype `T` | `T` (`float16` and `bfloat16` as `f32`) | `T` |
//! | tuple | a Rust tuple of the fields' types | a Rust tuple (up to 12 fields, else `::relax::Value`) |
//! | object, callable, other prims | `::relax::Value` | `::relax::Value` |
//!
//! The body converts each argument to a `Value` (errors name the parameter),
//! calls the function through the module's executable cache and converts the
//! result with `FromValue` (errors name "the result of `f`"). Shapes are not
//! checked here: the VM checks every argument against its annotation before
//! running anything and names the parameter and dims at fault.
//!
//! Locals of the body have mixed-site hygiene, so a parameter named `args`
//! or `module` cannot capture or shadow them.

use super::super::{FrontendError, FunctionInfo};
use crate::ir::{DataType, StructInfo, StructInfoKind, TypeCode};
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};

/// The wrapper `#vis fn name(…) -> Result<…, ::relax::Error>` of `info`,
/// whose `module()` and executable cache are reached through `module_path`
/// (`self` inside the generated module, `f` beside it).
pub(super) fn wrapper(
    info: &FunctionInfo,
    vis: &TokenStream,
    module_path: &TokenStream,
) -> Result<TokenStream, FrontendError> {
    let name = rust_ident(&info.name, info.span).ok_or_else(|| {
        FrontendError::new(
            info.span,
            format!(
                "`{}` cannot name a Rust function, so it cannot get a wrapper",
                info.name
            ),
        )
    })?;
    let mut params = Vec::new();
    let mut conversions = Vec::new();
    for (pname, sinfo) in &info.params {
        let ident = rust_ident(pname, info.span).ok_or_else(|| {
            FrontendError::new(
                info.span,
                format!(
                    "parameter `{pname}` of `{}` cannot name a Rust parameter",
                    info.name
                ),
            )
        })?;
        let ty = param_type(sinfo);
        params.push(quote!(#ident: #ty));
        let context = format!("parameter `{pname}` of `{}`", info.name);
        let mut fields = 0;
        conversions.push(param_value(sinfo, quote!(#ident), &context, &mut fields));
    }
    let ret = result_type(&info.ret);
    let doc = wrapper_doc(info);
    let name_lit = Literal::string(&info.name);
    let result_context = Literal::string(&format!("the result of `{}`", info.name));
    let args = Ident::new("__args", Span::mixed_site());
    let result = Ident::new("__result", Span::mixed_site());
    Ok(quote! {
        #[doc = #doc]
        #[allow(clippy::too_many_arguments)]
        #vis fn #name(#(#params),*) -> ::std::result::Result<#ret, ::relax::Error> {
            let #args: ::std::vec::Vec<::relax::Value> = ::std::vec![#(#conversions),*];
            let #result = ::relax::dsl::call(
                #module_path::module(),
                &#module_path::__RELAX_EXECUTABLE,
                #name_lit,
                &#args,
            )?;
            ::relax::dsl::FromValue::from_value(#result, #result_context)
        }
    })
}

/// The wrapper's doc: the user's, then what the wrapper does.
fn wrapper_doc(info: &FunctionInfo) -> String {
    let params: Vec<String> = info
        .params
        .iter()
        .map(|(n, s)| format!("{n}: {s}"))
        .collect();
    let generated = format!(
        "Runs the Relax function `{}({}) -> {}`.\n\n\
         The module is compiled on the first call and cached. Arguments are \
         checked against the annotations before anything runs: a mismatch, \
         like a failed build, is an `Err` naming the culprit.",
        info.name,
        params.join(", "),
        info.ret
    );
    match &info.doc {
        Some(doc) if !doc.trim().is_empty() => format!("{doc}\n\n{generated}"),
        _ => generated,
    }
}

/// Rust source text of a token stream of a type, as a person writes it
/// (`&impl relax::TensorArg<f32>`): `TokenStream`'s `Display` puts a space
/// between every two tokens, and the paths here start with `::relax`,
/// which a crate that depends on `relax` also reaches as `relax`.
fn type_text(t: TokenStream) -> String {
    t.to_string()
        .replace(":: relax ::", "relax ::")
        .replace(" :: ", "::")
        .replace(" < ", "<")
        .replace(" >", ">")
        .replace(" , ", ", ")
        .replace("& ", "&")
        .replace("( ", "(")
        .replace(" )", ")")
        .replace(" ,)", ",)")
}

/// The type, as Rust source, that a `relax::module!` wrapper gives a
/// parameter annotated `s` (for code that calls the wrapper, such as the
/// model struct `relax import -o model.rs` writes).
pub fn param_type_text(s: &StructInfo) -> String {
    type_text(param_type(s))
}

/// The type, as Rust source, that a `relax::module!` wrapper returns for
/// a result of StructInfo `s`.
pub fn result_type_text(s: &StructInfo) -> String {
    type_text(result_type(s))
}

/// The Rust type of a parameter annotated `s`. See the module docs.
pub(super) fn param_type(s: &StructInfo) -> TokenStream {
    match s.kind() {
        StructInfoKind::Tensor(t) => match element_type(t.dtype) {
            Some(elem) => quote!(&impl ::relax::TensorArg<#elem>),
            None => quote!(&::relax::Tensor),
        },
        StructInfoKind::Shape(_) => quote!(&[i64]),
        StructInfoKind::Prim(p) => prim_type(p.dtype).unwrap_or_else(|| quote!(::relax::Value)),
        StructInfoKind::Tuple(fields) => {
            let fields = fields.iter().map(param_type);
            quote!((#(#fields,)*))
        }
        StructInfoKind::Object | StructInfoKind::Func(_) => quote!(::relax::Value),
    }
}

/// The longest tuple `FromValue` converts to a Rust tuple; longer ones stay
/// a `Value`.
const MAX_RESULT_TUPLE: usize = 12;

/// The Rust type a result of StructInfo `s` converts to. See the module docs.
pub(super) fn result_type(s: &StructInfo) -> TokenStream {
    match s.kind() {
        StructInfoKind::Tensor(t) => match element_type(t.dtype) {
            Some(elem) if (0..=6).contains(&t.ndim) => {
                let dim = format_ident!("Ix{}", t.ndim as u32);
                quote!(::relax::ndarray::Array<#elem, ::relax::ndarray::#dim>)
            }
            Some(elem) => quote!(::relax::ndarray::ArrayD<#elem>),
            None => quote!(::relax::Tensor),
        },
        StructInfoKind::Shape(_) => quote!(::std::vec::Vec<i64>),
        StructInfoKind::Prim(p) => prim_type(p.dtype).unwrap_or_else(|| quote!(::relax::Value)),
        StructInfoKind::Tuple(fields) if fields.len() <= MAX_RESULT_TUPLE => {
            let fields = fields.iter().map(result_type);
            quote!((#(#fields,)*))
        }
        StructInfoKind::Tuple(_) => quote!(::relax::Value),
        StructInfoKind::Object | StructInfoKind::Func(_) => quote!(::relax::Value),
    }
}

/// An expression of type `::relax::Value` converting the argument `x` of
/// type `param_type(s)`; it may return early with `?`. `fields` numbers the
/// locals that destructure tuples.
fn param_value(s: &StructInfo, x: TokenStream, context: &str, fields: &mut usize) -> TokenStream {
    let ctx = Literal::string(context);
    match s.kind() {
        StructInfoKind::Tensor(t) => match element_type(t.dtype) {
            Some(elem) => quote! {
                ::relax::Value::Tensor(::relax::TensorArg::<#elem>::to_tensor(#x, #ctx)?)
            },
            None => quote!(::relax::Value::Tensor(::std::clone::Clone::clone(#x))),
        },
        StructInfoKind::Shape(_) => quote!(::relax::Value::shape(#x)),
        StructInfoKind::Prim(p) if prim_type(p.dtype).is_some() => {
            quote!(::relax::dsl::PrimArg::to_value(#x, #ctx)?)
        }
        StructInfoKind::Tuple(items) => {
            let names: Vec<Ident> = items
                .iter()
                .map(|_| {
                    *fields += 1;
                    Ident::new(&format!("__field{fields}"), Span::mixed_site())
                })
                .collect();
            let values: Vec<TokenStream> = items
                .iter()
                .zip(&names)
                .enumerate()
                .map(|(i, (item, name))| {
                    let context = format!("field {i} of {context}");
                    param_value(item, quote!(#name), &context, fields)
                })
                .collect();
            quote_spanned! {Span::mixed_site()=>
                {
                    let (#(#names,)*) = #x;
                    ::relax::Value::tuple(::std::vec![#(#values),*])
                }
            }
        }
        StructInfoKind::Prim(_) | StructInfoKind::Object | StructInfoKind::Func(_) => x,
    }
}

/// The Rust element type of tensors of `dtype`, if it has one.
fn element_type(dtype: DataType) -> Option<TokenStream> {
    if dtype.lanes() != 1 {
        return None;
    }
    Some(match (dtype.code(), dtype.bits()) {
        (TypeCode::UInt, 1) => quote!(bool),
        (TypeCode::Int, 8) => quote!(i8),
        (TypeCode::Int, 16) => quote!(i16),
        (TypeCode::Int, 32) => quote!(i32),
        (TypeCode::Int, 64) => quote!(i64),
        (TypeCode::UInt, 8) => quote!(u8),
        (TypeCode::UInt, 16) => quote!(u16),
        (TypeCode::UInt, 32) => quote!(u32),
        (TypeCode::UInt, 64) => quote!(u64),
        (TypeCode::Float, 32) => quote!(f32),
        (TypeCode::Float, 64) => quote!(f64),
        (TypeCode::Float, 16) => quote!(::relax::half::f16),
        (TypeCode::BFloat, 16) => quote!(::relax::half::bf16),
        _ => return None,
    })
}

/// The Rust type of a scalar of `dtype`: the element types, and `f32` for
/// `float16` and `bfloat16` (prims travel as `f64`, and every `float16` or
/// `bfloat16` is an `f32`).
fn prim_type(dtype: DataType) -> Option<TokenStream> {
    if dtype.is_half() {
        return Some(quote!(f32));
    }
    element_type(dtype)
}

/// `name` as a Rust identifier at `span`: raw (`r#type`) when it is a
/// keyword, `None` when it cannot be one. Never panics.
pub(super) fn rust_ident(name: &str, span: Span) -> Option<Ident> {
    let name = name.strip_prefix("r#").unwrap_or(name);
    let mut chars = name.chars();
    let first = chars.next()?;
    let valid = (first == '_' || first.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
        && name != "_";
    if !valid {
        return None;
    }
    if syn::parse_str::<Ident>(name).is_ok() {
        return Some(Ident::new(name, span));
    }
    // A keyword: every one but these can be written raw.
    if matches!(name, "self" | "Self" | "super" | "crate") {
        return None;
    }
    Some(Ident::new_raw(name, span))
}
