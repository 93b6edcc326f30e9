//! Tests of code generation. Generated code is compared as token text
//! (`TokenStream::to_string()` of the output against that of a `quote!`),
//! and parsed with syn to check its shape. Compiling and running the output
//! needs the facade crate, so that is tested there.

use super::fallback::dsl_struct_info;
use super::wrapper::{param_type, result_type, rust_ident, wrapper};
use super::*;
use crate::frontend::FunctionInfo;
use crate::ir::{
    AttrValue, Attrs, DataType, Expr, Function, GlobalVar, IRModule, PrimExpr, StructInfo, TirVar,
    Var,
};
use crate::visitor::ExprVisitor;
use proc_macro2::Span;
use quote::quote;
use std::collections::HashSet;
use std::path::PathBuf;

const SMALL: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 2), dtype="float32")) -> R.Tensor(("n", 2), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            gv: R.Tensor((n, 2), dtype="float32") = R.add(x, R.const(1.5, "float32"))
            R.output(gv)
        return gv
"#;

fn roundtrip_cases() -> Vec<(String, IRModule)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/roundtrip");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/roundtrip exists")
        .map(|e| e.expect("a readable entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "py"))
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("readable");
            let m: IRModule = text
                .parse()
                .unwrap_or_else(|e| panic!("{}: {e:?}", p.display()));
            (p.display().to_string(), m)
        })
        .collect()
}

/// A `Lowered` for `module`, as the frontend would give it.
fn lowered(name: &str, module: IRModule) -> Lowered {
    let functions = module
        .functions()
        .filter_map(|(gv, f)| Some((gv, f.as_relax()?)))
        .map(|(gv, f)| FunctionInfo {
            name: gv.name_hint().to_string(),
            public: f.global_symbol().is_some(),
            params: f
                .params
                .iter()
                .map(|p| {
                    let s = p.struct_info().cloned().unwrap_or_else(StructInfo::object);
                    (p.name_hint().to_string(), s)
                })
                .collect(),
            ret: f.ret_struct_info.clone(),
            doc: Some(format!("User doc of {}.", gv.name_hint())),
            span: Span::call_site(),
        })
        .collect();
    Lowered {
        mod_name: syn::Ident::new(name, Span::call_site()),
        vis: syn::parse_quote!(pub),
        doc: Some(format!("User doc of {name}.")),
        module,
        functions,
        schedules: Vec::new(),
        content_hash: 0x1234,
    }
}

fn info(name: &str, params: Vec<(&str, StructInfo)>, ret: StructInfo) -> FunctionInfo {
    FunctionInfo {
        name: name.to_string(),
        public: true,
        params: params
            .into_iter()
            .map(|(n, s)| (n.to_string(), s))
            .collect(),
        ret,
        doc: None,
        span: Span::call_site(),
    }
}

fn f32_tensor(dims: &[i64]) -> StructInfo {
    StructInfo::tensor(
        dims.iter().map(|&d| PrimExpr::int(d)).collect(),
        DataType::f32(),
    )
}

/// Every Relax variable a module defines (parameters and bindings, nested
/// functions included).
fn defined_vars(module: &IRModule) -> usize {
    struct Defs(HashSet<u64>);
    impl ExprVisitor for Defs {
        fn visit_var_def(&mut self, var: &Var) {
            self.0.insert(var.id());
        }
    }
    let mut defs = Defs(HashSet::new());
    for (_, f) in module.functions() {
        if let Some(f) = f.as_relax() {
            defs.visit_expr(&Expr::function(f.clone()));
        }
    }
    defs.0.len()
}

fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

// ---- quote_ir ----

#[test]
fn a_small_module_is_quoted_as_constructor_calls() {
    let m: IRModule = SMALL.parse().unwrap();
    let expected = quote! {
        {
            fn __relax_function_0() -> ::relax::ir::BaseFunc {
                let mut __relax_tir_vars: ::std::vec::Vec<::relax::ir::TirVar> = ::std::vec::Vec::with_capacity(1);
                let mut __relax_vars: ::std::vec::Vec<::relax::ir::Var> = ::std::vec::Vec::with_capacity(2);
                let mut __relax_sinfos: ::std::vec::Vec<::relax::ir::StructInfo> = ::std::vec::Vec::with_capacity(1);
                __relax_tir_vars.push(::relax::ir::TirVar::new("n"));
                __relax_sinfos.push(::relax::ir::StructInfo::tensor(
                    ::std::vec![::relax::ir::PrimExpr::var(&__relax_tir_vars[0]), ::relax::ir::PrimExpr::int(2i64)],
                    ::relax::ir::DataType::float(32)
                ));
                __relax_vars.push(::relax::ir::Var::new("x", ::std::option::Option::Some(__relax_sinfos[0].clone())));
                __relax_vars.push(::relax::ir::Var::new("gv", ::std::option::Option::Some(__relax_sinfos[0].clone())));
                ::relax::ir::BaseFunc::Relax(::relax::ir::Function {
                    params: ::std::vec![__relax_vars[0].clone()],
                    body: ::relax::ir::Expr::seq(
                        ::std::vec![::relax::ir::BindingBlock {
                            bindings: ::std::vec![::relax::ir::Binding::var_binding(
                                __relax_vars[1].clone(),
                                ::relax::ir::Expr::call_full(
                                    ::relax::ir::Expr::op("relax.add"),
                                    ::std::vec![
                                        ::relax::ir::Expr::var(&__relax_vars[0]),
                                        ::relax::ir::Expr::constant(
                                            ::relax::ir::Tensor::from_bytes(
                                                ::relax::ir::DataType::float(32),
                                                &[],
                                                b"\0\0\xC0?"
                                            )
                                            .expect("the bytes of a generated constant match its shape"),
                                        )
                                    ],
                                    ::relax::ir::Attrs::new(),
                                    ::std::vec![]
                                )
                                .with_struct_info(__relax_sinfos[0].clone())
                            )],
                            is_dataflow: true,
                        }],
                        ::relax::ir::Expr::var(&__relax_vars[1])
                    )
                    .with_struct_info(__relax_sinfos[0].clone()),
                    ret_struct_info: __relax_sinfos[0].clone(),
                    is_pure: true,
                    attrs: ::relax::ir::Attrs::from_pairs(::std::vec![(
                        "global_symbol",
                        ::relax::ir::AttrValue::Str(::std::string::String::from("main"))
                    )]),
                })
            }
            ::relax::ir::IRModule::from_functions(::std::vec![(
                ::relax::ir::GlobalVar::new("main"),
                __relax_function_0()
            )])
        }
    };
    assert_eq!(quote_module(&m).to_string(), expected.to_string());
}

#[test]
fn every_roundtrip_module_quotes_to_a_rust_expression() {
    let cases = roundtrip_cases();
    assert!(cases.len() >= 12, "only {} modules", cases.len());
    for (name, m) in cases {
        let tokens = quote_module(&m);
        if let Err(e) = syn::parse2::<syn::Expr>(tokens.clone()) {
            panic!("{name}: the output is not an expression: {e}\n{tokens}");
        }
        let text = tokens.to_string();
        // Each variable is created by exactly one `push`.
        let created = count(&text, ":: relax :: ir :: Var :: new (")
            + count(&text, ":: relax :: ir :: Var :: new_dataflow (");
        assert_eq!(created, defined_vars(&m), "{name}");
        // Every function of the module is rebuilt, PrimFuncs included, each
        // by a Rust function of its own.
        assert_eq!(count(&text, ":: relax :: ir :: GlobalVar :: new ("), {
            let calls = text.matches("Expr :: global_var (").count();
            m.len() + calls
        });
        assert_eq!(
            count(&text, "-> :: relax :: ir :: BaseFunc"),
            m.len(),
            "{name}"
        );
    }
}

#[test]
fn a_variable_is_created_once_and_shared_by_its_uses() {
    let n = TirVar::new("n");
    let s = StructInfo::tensor(vec![PrimExpr::var(&n)], DataType::f32());
    let x = Var::new("x", Some(s.clone()));
    // `x` twice in a tuple, and a second function with its own `x`.
    let f = Function::new(
        vec![x.clone()],
        Expr::seq(vec![], Expr::tuple(vec![Expr::var(&x), Expr::var(&x)])),
        StructInfo::tuple(vec![s.clone(), s.clone()]),
    );
    let x2 = Var::new("x", Some(s.clone()));
    let g = Function::new(vec![x2.clone()], Expr::seq(vec![], Expr::var(&x2)), s);
    let m = IRModule::from_functions([
        (GlobalVar::new("f"), f.into()),
        (GlobalVar::new("g"), g.into()),
    ]);
    let text = quote_module(&m).to_string();
    assert_eq!(count(&text, "Var :: new (\"x\""), 2, "{text}");
    // Each function rebuilds its own symbolic variables.
    assert_eq!(count(&text, "TirVar :: new (\"n\")"), 2, "{text}");
    // In `f`, one entry for the tensor type and one for the tuple of two of
    // them; in `g`, the tensor type.
    assert_eq!(count(&text, "__relax_sinfos . push ("), 3, "{text}");
    // Within a function, the uses of `x` are its one entry.
    let f_text = &text[..text.find("fn __relax_function_1").unwrap()];
    assert_eq!(
        count(f_text, "Expr :: var (& __relax_vars [0])"),
        2,
        "{text}"
    );
}

#[test]
fn general_forms_are_spelled_out_where_helpers_would_differ() {
    let q = |e: Expr| {
        let f = Function::new(vec![], Expr::seq(vec![], e), StructInfo::object());
        let m = IRModule::from_functions([(GlobalVar::new("f"), f.into())]);
        quote_module(&m).to_string()
    };
    // Literals keep their dtype, and odd values their exact bits.
    let text = q(Expr::prim_value(PrimExpr::int_of(DataType::i32(), 7)));
    assert!(text.contains("PrimExpr :: int_of (:: relax :: ir :: DataType :: int (32) , 7i64)"));
    let text = q(Expr::prim_value(PrimExpr::int(i64::MIN)));
    assert!(text.contains("PrimExpr :: int (:: core :: primitive :: i64 :: MIN)"));
    let text = q(Expr::prim_value(PrimExpr::float(DataType::f64(), f64::NAN)));
    assert!(text.contains(&format!("f64 :: from_bits ({}u64)", f64::NAN.to_bits())));
    let text = q(Expr::prim_value(PrimExpr::bool(true)));
    assert!(text.contains("PrimExpr :: bool (true)"));
    // A tensor whose shape is a variable is spelled out from its kind.
    let shape = Var::new("s", Some(StructInfo::shape_ndim(2)));
    let t = StructInfo::tensor_with_shape_expr(Expr::var(&shape), DataType::f32());
    let v = Var::new("v", Some(t));
    let text = q(Expr::var(&v));
    assert!(text.contains(
        "StructInfo :: new (:: relax :: ir :: StructInfoKind :: Tensor (:: relax :: ir :: TensorStructInfo { shape : :: std :: option :: Option :: Some (:: relax :: ir :: Expr :: var (& __relax_vars ["
    ), "{text}");
    // A var is pushed after the shape var it refers to.
    assert!(text.find("Var :: new (\"s\"").unwrap() < text.find("Var :: new (\"v\"").unwrap());
    // A prim StructInfo with a value of another dtype.
    let p = StructInfo::new(crate::ir::StructInfoKind::Prim(crate::ir::PrimStructInfo {
        dtype: DataType::i32(),
        value: Some(PrimExpr::int(3)),
    }));
    let text = q(Expr::var(&Var::new("p", Some(p))));
    assert!(text.contains("StructInfoKind :: Prim (:: relax :: ir :: PrimStructInfo { dtype"));
    // An expression whose StructInfo differs from its constructor's.
    let text = q(Expr::string("hi").with_struct_info(StructInfo::prim(DataType::i64())));
    assert!(
        text.contains("Expr :: string (\"hi\") . with_struct_info (__relax_sinfos ["),
        "{text}"
    );
}

#[test]
fn attributes_and_prim_funcs_are_quoted() {
    let attrs = Attrs::from_pairs(vec![
        ("axis", AttrValue::from(vec![1i64, -1])),
        ("keepdims", AttrValue::Bool(false)),
        ("dtype", AttrValue::DataType(DataType::f32())),
        ("eps", AttrValue::Float(1e-5)),
        ("none", AttrValue::None),
    ]);
    let x = Var::new("x", Some(f32_tensor(&[2, 3])));
    let call =
        Expr::call_op("relax.sum", vec![Expr::var(&x)], attrs).with_struct_info(f32_tensor(&[2]));
    let f = Function::new(vec![x], Expr::seq(vec![], call), f32_tensor(&[2]));
    let n = TirVar::new("n");
    let pf = crate::ir::PrimFunc {
        params: vec![
            crate::tir::PrimFuncParam::Buffer(crate::tir::Buffer::new(
                "A",
                vec![PrimExpr::var(&n)],
                DataType::f32(),
            )),
            crate::tir::PrimFuncParam::Scalar(n.clone()),
        ],
        body: crate::tir::Stmt::no_op(),
        attrs: Attrs::from_pairs(vec![("tir.noalias", true)]),
    };
    let m = IRModule::from_functions([
        (GlobalVar::new("main"), f.into()),
        (GlobalVar::new("kernel"), pf.into()),
    ]);
    let text = quote_module(&m).to_string();
    let attrs_text = quote! {
        ::relax::ir::Attrs::from_pairs(::std::vec![
            ("axis", ::relax::ir::AttrValue::Array(::std::vec![
                ::relax::ir::AttrValue::Int(1i64), ::relax::ir::AttrValue::Int(-1i64)
            ])),
            ("keepdims", ::relax::ir::AttrValue::Bool(false)),
            ("dtype", ::relax::ir::AttrValue::DataType(::relax::ir::DataType::float(32))),
            ("eps", ::relax::ir::AttrValue::Float(0.00001f64)),
            ("none", ::relax::ir::AttrValue::None)
        ])
    };
    assert!(text.contains(&attrs_text.to_string()), "{text}");
    // The buffer is built once, before the function, and shared.
    let buffer_text = quote! {
        __relax_buffers.push(::relax::tir::Buffer::with_strides(
            "A",
            ::std::vec![::relax::ir::PrimExpr::var(&__relax_tir_vars[0])],
            ::relax::ir::DataType::float(32),
            ::std::vec![]
        ));
    };
    assert!(text.contains(&buffer_text.to_string()), "{text}");
    let pf_text = quote! {
        ::relax::ir::BaseFunc::Prim(::relax::ir::PrimFunc {
            params: ::std::vec![
                ::relax::tir::PrimFuncParam::Buffer(__relax_buffers[0].clone()),
                ::relax::tir::PrimFuncParam::Scalar(__relax_tir_vars[0].clone())
            ],
            body: ::relax::tir::Stmt::no_op(),
            attrs: ::relax::ir::Attrs::from_pairs(::std::vec![
                ("tir.noalias", ::relax::ir::AttrValue::Bool(true))
            ]),
        })
    };
    assert!(text.contains(&pf_text.to_string()), "{text}");
}

// ---- wrappers ----

/// The wrapper's signature (and the wrapper parsed as a function).
fn signature(info: &FunctionInfo) -> (String, syn::ItemFn) {
    let tokens = wrapper(info, &quote!(pub), &quote!(self)).expect("a wrapper");
    let item: syn::ItemFn = syn::parse2(tokens).expect("a function item");
    let sig = &item.sig;
    (quote!(#sig).to_string(), item)
}

#[test]
fn tensor_parameters_and_results() {
    let n = TirVar::new("n");
    let f = info(
        "main",
        vec![
            (
                "x",
                StructInfo::tensor(vec![PrimExpr::var(&n), PrimExpr::int(4)], DataType::f32()),
            ),
            ("i", StructInfo::tensor_ndim(1, DataType::i64())),
            ("b", StructInfo::tensor_ndim(-1, DataType::bool())),
            ("h", StructInfo::tensor_ndim(1, DataType::float(16))),
            ("g", StructInfo::tensor_ndim(1, DataType::bf16())),
            ("u", StructInfo::tensor_ndim(2, DataType::void())),
        ],
        StructInfo::tensor(vec![PrimExpr::var(&n), PrimExpr::int(4)], DataType::f32()),
    );
    let expected = quote! {
        fn main(
            x: &impl ::relax::TensorArg<f32>,
            i: &impl ::relax::TensorArg<i64>,
            b: &impl ::relax::TensorArg<bool>,
            h: &impl ::relax::TensorArg<::relax::half::f16>,
            g: &impl ::relax::TensorArg<::relax::half::bf16>,
            u: &::relax::Tensor
        ) -> ::std::result::Result<::relax::ndarray::Array<f32, ::relax::ndarray::Ix2>, ::relax::Error>
    };
    assert_eq!(signature(&f).0, expected.to_string());
}

#[test]
fn result_types_by_rank_and_dtype() {
    let ty = |s: StructInfo| result_type(&s).to_string();
    assert_eq!(
        ty(StructInfo::tensor_ndim(0, DataType::f64())),
        quote!(::relax::ndarray::Array<f64, ::relax::ndarray::Ix0>).to_string()
    );
    assert_eq!(
        ty(StructInfo::tensor_ndim(6, DataType::uint(8))),
        quote!(::relax::ndarray::Array<u8, ::relax::ndarray::Ix6>).to_string()
    );
    assert_eq!(
        ty(StructInfo::tensor_ndim(7, DataType::i32())),
        quote!(::relax::ndarray::ArrayD<i32>).to_string()
    );
    assert_eq!(
        ty(StructInfo::tensor_ndim(-1, DataType::i32())),
        quote!(::relax::ndarray::ArrayD<i32>).to_string()
    );
    assert_eq!(
        ty(StructInfo::tensor_ndim(2, DataType::void())),
        quote!(::relax::Tensor).to_string()
    );
    assert_eq!(
        ty(StructInfo::tensor_ndim(2, DataType::float(16))),
        quote!(::relax::ndarray::Array<::relax::half::f16, ::relax::ndarray::Ix2>).to_string()
    );
    assert_eq!(
        ty(StructInfo::tensor_ndim(-1, DataType::bf16())),
        quote!(::relax::ndarray::ArrayD<::relax::half::bf16>).to_string()
    );
    assert_eq!(
        ty(StructInfo::prim(DataType::bf16())),
        quote!(f32).to_string()
    );
    assert_eq!(
        ty(StructInfo::shape_ndim(2)),
        quote!(::std::vec::Vec<i64>).to_string()
    );
    assert_eq!(
        ty(StructInfo::prim(DataType::i64())),
        quote!(i64).to_string()
    );
    assert_eq!(
        ty(StructInfo::prim(DataType::float(16))),
        quote!(f32).to_string()
    );
    assert_eq!(
        ty(StructInfo::prim(DataType::bool())),
        quote!(bool).to_string()
    );
    assert_eq!(
        ty(StructInfo::prim(DataType::handle())),
        quote!(::relax::Value).to_string()
    );
    assert_eq!(ty(StructInfo::object()), quote!(::relax::Value).to_string());
    assert_eq!(
        ty(StructInfo::func(vec![], StructInfo::object(), true)),
        quote!(::relax::Value).to_string()
    );
    assert_eq!(ty(StructInfo::tuple(vec![])), quote!(()).to_string());
    assert_eq!(
        ty(StructInfo::tuple(vec![StructInfo::prim(DataType::i64())])),
        quote!((i64,)).to_string()
    );
    assert_eq!(
        ty(StructInfo::tuple(vec![
            f32_tensor(&[2]),
            StructInfo::tuple(vec![])
        ])),
        quote!((::relax::ndarray::Array<f32, ::relax::ndarray::Ix1>, (),)).to_string()
    );
    let long = StructInfo::tuple(vec![StructInfo::prim(DataType::i64()); 13]);
    assert_eq!(ty(long), quote!(::relax::Value).to_string());
}

#[test]
fn shape_prim_tuple_and_object_parameters() {
    let f = info(
        "g",
        vec![
            ("s", StructInfo::shape_ndim(2)),
            ("k", StructInfo::prim(DataType::i64())),
            ("r", StructInfo::prim(DataType::f32())),
            ("c", StructInfo::prim(DataType::bool())),
            ("h", StructInfo::prim(DataType::float(16))),
            (
                "t",
                StructInfo::tuple(vec![f32_tensor(&[2]), StructInfo::prim(DataType::i32())]),
            ),
            ("o", StructInfo::object()),
            ("cb", StructInfo::func(vec![], StructInfo::object(), true)),
        ],
        StructInfo::tuple(vec![StructInfo::shape_ndim(1), StructInfo::object()]),
    );
    let expected = quote! {
        fn g(
            s: &[i64],
            k: i64,
            r: f32,
            c: bool,
            h: f32,
            t: (&impl ::relax::TensorArg<f32>, i32,),
            o: ::relax::Value,
            cb: ::relax::Value
        ) -> ::std::result::Result<(::std::vec::Vec<i64>, ::relax::Value,), ::relax::Error>
    };
    assert_eq!(signature(&f).0, expected.to_string());
    assert_eq!(
        param_type(&StructInfo::tuple(vec![])).to_string(),
        quote!(()).to_string()
    );
}

#[test]
fn the_wrapper_body_converts_calls_and_converts_back() {
    let f = info(
        "f",
        vec![
            ("x", f32_tensor(&[2])),
            (
                "t",
                StructInfo::tuple(vec![
                    StructInfo::prim(DataType::i64()),
                    StructInfo::shape_ndim(1),
                ]),
            ),
            ("o", StructInfo::object()),
            ("u", StructInfo::tensor_ndim(1, DataType::void())),
        ],
        f32_tensor(&[2]),
    );
    let (_, item) = signature(&f);
    let block = &item.block;
    let expected = quote! {
        {
            let __args: ::std::vec::Vec<::relax::Value> = ::std::vec![
                ::relax::Value::Tensor(::relax::TensorArg::<f32>::to_tensor(x, "parameter `x` of `f`")?),
                {
                    let (__field1, __field2,) = t;
                    ::relax::Value::tuple(::std::vec![
                        ::relax::dsl::PrimArg::to_value(__field1, "field 0 of parameter `t` of `f`")?,
                        ::relax::Value::shape(__field2)
                    ])
                },
                o,
                ::relax::Value::Tensor(::std::clone::Clone::clone(u))
            ];
            let __result = ::relax::dsl::call(
                self::module(),
                &self::__RELAX_EXECUTABLE,
                "f",
                &__args,
            )?;
            ::relax::dsl::FromValue::from_value(__result, "the result of `f`")
        }
    };
    assert_eq!(quote!(#block).to_string(), expected.to_string());
}

#[test]
fn wrapper_docs_carry_the_users_and_the_signature() {
    let mut f = info("f", vec![("x", f32_tensor(&[2]))], f32_tensor(&[2]));
    f.doc = Some(" Adds one.".into());
    let (_, item) = signature(&f);
    let doc = match &item.attrs[0].meta {
        syn::Meta::NameValue(nv) => quote::ToTokens::to_token_stream(&nv.value).to_string(),
        other => panic!("{other:?}"),
    };
    assert!(doc.starts_with("\" Adds one.\\n\\nRuns the Relax function `f(x: R.Tensor((2,), dtype=\\\"float32\\\")) -> R.Tensor((2,), dtype=\\\"float32\\\")`."), "{doc}");
}

#[test]
fn names_become_rust_identifiers_or_errors() {
    let s = Span::call_site();
    assert_eq!(rust_ident("main", s).unwrap().to_string(), "main");
    assert_eq!(rust_ident("type", s).unwrap().to_string(), "r#type");
    assert_eq!(rust_ident("r#match", s).unwrap().to_string(), "r#match");
    assert_eq!(rust_ident("_x1", s).unwrap().to_string(), "_x1");
    for bad in ["", "_", "1x", "a.b", "a-b", "self", "crate", "x y"] {
        assert!(rust_ident(bad, s).is_none(), "{bad:?}");
    }
    let f = info("x.y", vec![], StructInfo::object());
    let e = wrapper(&f, &quote!(pub), &quote!(self)).unwrap_err();
    assert!(
        e.message.contains("`x.y` cannot name a Rust function"),
        "{}",
        e.message
    );
    let f = info(
        "ok",
        vec![("a-b", StructInfo::object())],
        StructInfo::object(),
    );
    let e = wrapper(&f, &quote!(pub), &quote!(self)).unwrap_err();
    assert!(
        e.message.contains("parameter `a-b` of `ok`"),
        "{}",
        e.message
    );
}

// ---- modules and function items ----

fn parse_file(tokens: TokenStream) -> syn::File {
    syn::parse2(tokens.clone()).unwrap_or_else(|e| panic!("{e}\n{tokens}"))
}

fn fn_names(items: &[syn::Item]) -> Vec<String> {
    items
        .iter()
        .filter_map(|i| match i {
            syn::Item::Fn(f) => Some(f.sig.ident.to_string()),
            _ => None,
        })
        .collect()
}

fn doc_text(attrs: &[syn::Attribute]) -> String {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .map(|a| quote::ToTokens::to_token_stream(&a.meta).to_string())
        .collect()
}

#[test]
fn module_tokens_emit_module_and_a_wrapper_per_public_function() {
    let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        y: R.Tensor((2,), dtype="float32") = helper(x)
        return y

    @R.function(private=True)
    def helper(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        return x
"#;
    let m: IRModule = text.parse().unwrap();
    let file = parse_file(module_tokens(&lowered("mlp", m)));
    let [syn::Item::Mod(module)] = &file.items[..] else {
        panic!("expected one module, found {:?}", file.items.len())
    };
    assert_eq!(module.ident, "mlp");
    assert!(matches!(module.vis, syn::Visibility::Public(_)));
    assert!(doc_text(&module.attrs).contains("User doc of mlp."));
    let items = &module.content.as_ref().unwrap().1;
    assert_eq!(
        fn_names(items),
        ["module", "main"],
        "no wrapper for the private helper"
    );
    let main = items
        .iter()
        .find_map(|i| match i {
            syn::Item::Fn(f) if f.sig.ident == "main" => Some(f),
            _ => None,
        })
        .unwrap();
    assert!(matches!(main.vis, syn::Visibility::Public(_)));
    assert!(doc_text(&main.attrs).contains("User doc of main."));
    let hook = items
        .iter()
        .find_map(|i| match i {
            syn::Item::Mod(m) if m.ident == "__relax_aot" => Some(m),
            _ => None,
        })
        .expect("the AOT hook module");
    let statics: Vec<String> = hook
        .content
        .as_ref()
        .unwrap()
        .1
        .iter()
        .filter_map(|i| match i {
            syn::Item::Static(s) if s.ident == "EXECUTABLE" => Some(quote!(#s).to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(
        statics,
        [
            quote! {
                #[doc = r" The module's executable, loaded from the artifact on first call."]
                #[cfg(relax_aot = "mlp")]
                pub static EXECUTABLE: ::relax::dsl::ExecutableCache =
                    ::relax::dsl::ExecutableCache::with_aot(4660u64, &ARTIFACT);
            }
            .to_string(),
            quote! {
                #[doc = r" The module compiled for this process, on first call; shared by the wrappers."]
                #[cfg(not(relax_aot = "mlp"))]
                pub static EXECUTABLE: ::relax::dsl::ExecutableCache =
                    ::relax::dsl::ExecutableCache::new(4660u64);
            }
            .to_string()
        ]
    );
    assert!(items.iter().any(|i| quote!(#i).to_string()
        == quote!(
            #[doc(hidden)]
            pub use self::__relax_aot::EXECUTABLE as __RELAX_EXECUTABLE;
        )
        .to_string()));
    let all = quote!(#(#items)*).to_string();
    let module_fn = quote! {
        pub fn module() -> &'static ::relax::ir::IRModule {
            static MODULE: ::relax::dsl::Lazy<::relax::ir::IRModule> = ::relax::dsl::Lazy::new(| | {}) ;
            &MODULE
        }
    }
    .to_string();
    // The builder closure's body is elided: compare what surrounds it.
    let (head, tail) = module_fn.split_once("{ }").unwrap();
    assert!(all.contains(head), "{all}");
    assert!(all.contains(tail.trim_start_matches(')')), "{all}");
}

#[test]
fn a_public_function_named_module_is_an_error() {
    let text = r#"
@I.ir_module
class Module:
    @R.function
    def module(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        return x
"#;
    let m: IRModule = text.parse().unwrap();
    let out = module_tokens(&lowered("m", m)).to_string();
    assert!(out.contains("compile_error"), "{out}");
    assert!(out.contains("cannot be named `module`"), "{out}");
    // The module itself is still emitted, so uses of `m` still resolve.
    assert!(out.contains("mod m"), "{out}");
}

#[test]
fn function_tokens_emit_a_wrapper_and_a_module_of_the_same_name() {
    let m: IRModule = SMALL.parse().unwrap();
    let mut l = lowered("main", m);
    l.vis = syn::parse_quote!(pub(crate));
    let file = parse_file(function_tokens(&l));
    let [syn::Item::Fn(f), syn::Item::Mod(m)] = &file.items[..] else {
        panic!("expected a fn and a mod")
    };
    assert_eq!(f.sig.ident, "main");
    assert_eq!(m.ident, "main");
    assert_eq!(
        quote!(#f).to_string().matches("main :: module ()").count(),
        1
    );
    assert_eq!(
        quote!(#f)
            .to_string()
            .matches("& main :: __RELAX_EXECUTABLE")
            .count(),
        1
    );
    for vis in [&f.vis, &m.vis] {
        assert_eq!(quote!(#vis).to_string(), "pub (crate)");
    }
    let items = &m.content.as_ref().unwrap().1;
    assert_eq!(fn_names(items), ["module"]);
}

// ---- fallback ----

#[test]
fn the_module_fallback_keeps_names_and_signatures() {
    let input = quote! {
        /// Docs.
        pub mod mlp {
            #[function]
            pub fn main(
                x: Tensor![(n, 784), f32],
                s: Shape![(n,)],
                t: (Tensor![_, "float32"], i32),
                weird: Foo![1],
            ) -> Tensor![(n, 10), f32] {
                R::dataflow! { this is not valid ??? }
                gv
            }
            #[function]
            fn private(x: Tensor![ndim = 2, f32]) -> Tensor![ndim = 2, f32] { x }
            #[function]
            pub fn loose(x: Object) { x }
        }
    };
    let file = parse_file(module_fallback(input));
    let [syn::Item::Mod(m)] = &file.items[..] else {
        panic!()
    };
    assert_eq!(m.ident, "mlp");
    let items = &m.content.as_ref().unwrap().1;
    assert_eq!(fn_names(items), ["module", "main", "loose"]);
    let sig = |name: &str| {
        items
            .iter()
            .find_map(|i| match i {
                syn::Item::Fn(f) if f.sig.ident == name => {
                    let s = &f.sig;
                    Some(quote!(#s).to_string())
                }
                _ => None,
            })
            .unwrap()
    };
    assert_eq!(
        sig("main"),
        quote! {
            fn main<__A0>(
                _: &impl ::relax::TensorArg<f32>,
                _: &[i64],
                _: (&impl ::relax::TensorArg<f32>, i32,),
                _: __A0
            ) -> ::std::result::Result<::relax::ndarray::Array<f32, ::relax::ndarray::Ix2>, ::relax::Error>
        }
        .to_string()
    );
    assert_eq!(
        sig("loose"),
        quote!(fn loose<__R>(_: ::relax::Value) -> ::std::result::Result<__R, ::relax::Error>)
            .to_string()
    );
}

#[test]
fn the_function_fallback_keeps_the_item_and_its_module() {
    let item = quote! {
        pub(crate) fn add(x: Tensor![(n,), f16], k: f64) -> Tensor![(n,), f16] { R::nonsense(x, k) }
    };
    let file = parse_file(function_fallback(item));
    let [syn::Item::Fn(f), syn::Item::Mod(m)] = &file.items[..] else {
        panic!()
    };
    assert_eq!(
        (f.sig.ident.to_string(), m.ident.to_string()),
        ("add".into(), "add".into())
    );
    let sig = &f.sig;
    assert_eq!(
        quote!(#sig).to_string(),
        quote!(fn add(
            _: &impl ::relax::TensorArg<::relax::half::f16>,
            _: f64
        ) -> ::std::result::Result<
            ::relax::ndarray::Array<::relax::half::f16, ::relax::ndarray::Ix1>,
            ::relax::Error
        >)
        .to_string()
    );
    // Input that is not a function or a module gives no fallback at all.
    assert!(function_fallback(quote!(
        struct S;
    ))
    .is_empty());
    assert!(module_fallback(quote!(
        fn not_a_module() {}
    ))
    .is_empty());
    assert!(module_fallback(quote!(
        pub mod m {
            struct S;
            pub fn f() {}
        }
    ))
    .to_string()
    .contains("mod m"));
}

#[test]
fn the_module_fallback_adds_no_errors_of_its_own() {
    // A duplicate name or a function named `module` gets no second item
    // (rustc would add E0428); items that are not functions, or whose
    // signature does not parse, are skipped and the functions after them
    // still get their stubs.
    let input = quote! {
        pub mod m {
            #[function]
            pub fn f(x: Object) -> Object { x }
            #[function]
            pub fn f(y: Object) -> Object { y }
            #[function]
            pub fn module(x: Object) -> Object { x }
            struct S { a: u8 }
            use a::{b, c};
            #[function]
            pub fn broken(x: Tensor![(2,), f32]) -> = { x }
            const K: usize = 3;
            #[function]
            pub fn g(x: Object) -> Object { x }
        }
    };
    let file = parse_file(module_fallback(input));
    let [syn::Item::Mod(m)] = &file.items[..] else {
        panic!()
    };
    let items = &m.content.as_ref().unwrap().1;
    assert_eq!(fn_names(items), ["module", "f", "g"]);
}

#[test]
fn dsl_annotations_read_by_the_fallback() {
    let si = |ty: syn::Type| dsl_struct_info(&ty).map(|s| s.to_string());
    assert_eq!(
        si(syn::parse_quote!(Tensor![(n, 4), f32])).as_deref(),
        Some("R.Tensor(dtype=\"float32\", ndim=2)")
    );
    assert_eq!(
        si(syn::parse_quote!(Tensor![(128,), "int64"])).as_deref(),
        Some("R.Tensor(dtype=\"int64\", ndim=1)")
    );
    assert_eq!(
        si(syn::parse_quote!(Tensor![ndim = 3, bool])).as_deref(),
        Some("R.Tensor(dtype=\"bool\", ndim=3)")
    );
    assert_eq!(
        si(syn::parse_quote!(Tensor![_, _])).as_deref(),
        Some("R.Tensor")
    );
    assert_eq!(
        si(syn::parse_quote!(Shape![ndim = 2])).as_deref(),
        Some("R.Shape")
    );
    assert_eq!(
        si(syn::parse_quote!(i64)).as_deref(),
        Some("R.Prim(\"int64\")")
    );
    assert_eq!(si(syn::parse_quote!(Object)).as_deref(), Some("R.Object"));
    assert!(si(syn::parse_quote!((i64, Object)))
        .unwrap()
        .starts_with("R.Tuple("));
    assert!(si(syn::parse_quote!(fn(i64) -> i64))
        .unwrap()
        .starts_with("R.Callable"));
    assert_eq!(si(syn::parse_quote!(Tensor![(n,), notatype])), None);
    assert_eq!(si(syn::parse_quote!(Vec<i64>)), None);
    assert_eq!(si(syn::parse_quote!(Other![x])), None);
}

#[test]
fn wrapper_types_print_as_rust_source() {
    use super::{param_type_text, result_type_text};
    let t = StructInfo::tensor_ndim(2, DataType::f32());
    assert_eq!(param_type_text(&t), "&impl relax::TensorArg<f32>");
    assert_eq!(
        result_type_text(&t),
        "relax::ndarray::Array<f32, relax::ndarray::Ix2>"
    );
    let pair = StructInfo::tuple(vec![t.clone(), StructInfo::tensor_ndim(1, DataType::i64())]);
    assert_eq!(
        result_type_text(&pair),
        "(relax::ndarray::Array<f32, relax::ndarray::Ix2>, relax::ndarray::Array<i64, relax::ndarray::Ix1>,)"
    );
}

#[test]
fn module_attributes_are_quoted() {
    let m: IRModule = SMALL.parse().unwrap();
    let m = m.with_attrs(Attrs::from_pairs(vec![(
        "system_lib_prefix",
        AttrValue::Str("lib_".into()),
    )]));
    let text = quote_module(&m).to_string();
    assert!(
        text.contains(". with_attrs (:: relax :: ir :: Attrs :: from_pairs (:: std :: vec ! [(\"system_lib_prefix\" , :: relax :: ir :: AttrValue :: Str (:: std :: string :: String :: from (\"lib_\")))]))"),
        "{text}"
    );
    assert!(syn::parse2::<syn::Expr>(quote_module(&m)).is_ok());
}
