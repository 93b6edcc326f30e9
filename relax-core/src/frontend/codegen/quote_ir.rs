//! An `IRModule` as Rust tokens: an expression that rebuilds the module
//! exactly, by calls to the IR's public constructors.
//!
//! This is how a generated `module()` builds its module at run time without
//! parsing text. The output is one block expression, with one Rust function
//! per function of the module:
//!
//! ```text
//! {
//!     fn __relax_function_0() -> ::relax::ir::BaseFunc {
//!         let mut __relax_tir_vars: Vec<TirVar> = Vec::with_capacity(1);
//!         let mut __relax_sinfos: Vec<StructInfo> = Vec::with_capacity(2);
//!         let mut __relax_vars: Vec<Var> = Vec::with_capacity(3);
//!         __relax_tir_vars.push(::relax::ir::TirVar::new("n"));       // each symbolic var once
//!         __relax_sinfos.push(…);                                      // each distinct StructInfo once
//!         __relax_vars.push(::relax::ir::Var::new("x", Some(__relax_sinfos[0].clone())));  // each Var once
//!         …
//!         ::relax::ir::BaseFunc::Relax(Function { … })
//!     }
//!     …
//!     ::relax::ir::IRModule::from_functions(vec![(GlobalVar::new("main"), __relax_function_0()), …])
//! }
//! ```
//!
//! 1. Identity is preserved: every [`Var`] and [`TirVar`] of a function is
//!    created by one `push` into its pool and every occurrence refers to
//!    that entry, so the rebuilt function has the same sharing of variables
//!    as the original (uses refer to their definitions, symbolic dims to
//!    their binders). Functions share no variables (each function binds its
//!    own), so each is rebuilt on its own.
//! 2. StructInfo is preserved exactly: each expression is rebuilt with the
//!    constructor of its kind, and when the StructInfo it carries differs
//!    from what that constructor gives it (calls, `If`, `SeqExpr` and global
//!    vars get none from their constructor), `.with_struct_info(…)` sets it.
//!    Constructor helpers (`StructInfo::tensor`, `PrimExpr::int`, …) are used
//!    only where they produce exactly the original node; otherwise the node
//!    is spelled out from its kind.
//! 3. Equal StructInfos (exact equality: vars by identity) are built once
//!    and cloned, which keeps the generated code small: in a dataflow block
//!    most bindings share a handful of tensor types.
//! 4. Constants are rebuilt from their raw bytes (a byte-string literal), so
//!    every element type and every bit pattern (NaN payloads, `-0.0`) survives.
//! 5. Every `push` comes after the `push`es it uses: an entry is made only
//!    once everything it refers to has been.
//! 6. The shape of the code is chosen for rustc's compile time. A `let`
//!    per node made one function with thousands of live locals, and every
//!    call that can unwind then needs a cleanup path dropping them: a
//!    decoder of a few hundred bindings took minutes in LLVM's CFG
//!    simplification. Four pools keep the live locals at four, and one Rust
//!    function per Relax function keeps each body as large as its function.
//!
//! The paths start with `::relax::`, the facade crate the generated code is
//! compiled against.

use crate::ir::{
    AttrValue, Attrs, BaseFunc, Binding, BindingBlock, DataType, DeriveFunc, Expr, ExprKind,
    Function, IRModule, PrimExpr, PrimExprKind, PrimFunc, StructInfo, StructInfoKind, TirVar,
    TypeCode, Var,
};
use crate::tir::PrimFuncParam;
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote};
use std::collections::HashMap;

/// The tokens of an expression that evaluates to a module structurally equal
/// to `module`, with the same StructInfo on every node. See the module docs.
pub fn quote_module(module: &IRModule) -> TokenStream {
    let mut items = Vec::new();
    let mut entries = Vec::new();
    for (i, (gv, f)) in module.functions().enumerate() {
        let mut q = Quoter::default();
        let value = match f {
            BaseFunc::Relax(f) => {
                let f = q.function(f);
                quote!(::relax::ir::BaseFunc::Relax(#f))
            }
            BaseFunc::Prim(f) => {
                let f = q.prim_func(f);
                quote!(::relax::ir::BaseFunc::Prim(#f))
            }
            BaseFunc::Extern(symbol) => {
                let symbol = Literal::string(symbol);
                quote!(::relax::ir::BaseFunc::Extern(#symbol.to_string()))
            }
        };
        let stmts = q.statements();
        let item = format_ident!("__relax_function_{i}");
        items.push(quote! {
            fn #item() -> ::relax::ir::BaseFunc {
                #stmts
                #value
            }
        });
        let name = Literal::string(gv.name_hint());
        entries.push(quote!((::relax::ir::GlobalVar::new(#name), #item())));
    }
    let module_value = quote!(::relax::ir::IRModule::from_functions(
        ::std::vec![#(#entries),*]
    ));
    let module_value = if module.attrs().is_empty() {
        module_value
    } else {
        let mut q = Quoter::default();
        let attrs = q.attrs(module.attrs());
        let stmts = q.statements();
        quote!({ #stmts #module_value.with_attrs(#attrs) })
    };
    quote! {
        {
            #(#items)*
            #module_value
        }
    }
}

/// Tokens that build each of `sinfos`, with the `let`s they need: one
/// quotation, so a symbolic variable shared between two of them is one
/// `TirVar` in the generated code too.
pub fn quote_struct_infos(sinfos: &[StructInfo]) -> (TokenStream, Vec<TokenStream>) {
    let mut q = Quoter::default();
    let values = sinfos.iter().map(|s| q.struct_info(s)).collect();
    (q.statements(), values)
}

/// Tokens that build each of `values` (call attributes), with the `let`s
/// they need.
pub fn quote_attr_values(values: &[AttrValue]) -> (TokenStream, Vec<TokenStream>) {
    let mut q = Quoter::default();
    let values = values.iter().map(|v| q.attr_value(v)).collect();
    (q.statements(), values)
}

/// The state of one quotation: the pools' entries pushed so far, in
/// dependency order, and where each node was put.
#[derive(Default)]
struct Quoter {
    pushes: Vec<TokenStream>,
    tir_vars: Pool<TirVar>,
    buffers: Pool<crate::tir::Buffer>,
    vars: Pool<Var>,
    /// Distinct StructInfos. Looked up linearly: a function has few
    /// distinct StructInfos, and `StructInfo` has no `Hash`.
    struct_infos: Vec<(StructInfo, TokenStream)>,
    struct_info_count: usize,
}

/// The entries of one pool: each node with the place (`pool[i]`) it was
/// pushed to.
struct Pool<K> {
    places: HashMap<K, TokenStream>,
}

impl<K> Default for Pool<K> {
    fn default() -> Self {
        Pool {
            places: HashMap::new(),
        }
    }
}

/// A pool's local: its name and element type.
fn pool_local(kind: PoolKind) -> (Ident, TokenStream) {
    let (name, ty) = match kind {
        PoolKind::TirVar => ("__relax_tir_vars", quote!(::relax::ir::TirVar)),
        PoolKind::Buffer => ("__relax_buffers", quote!(::relax::tir::Buffer)),
        PoolKind::Var => ("__relax_vars", quote!(::relax::ir::Var)),
        PoolKind::StructInfo => ("__relax_sinfos", quote!(::relax::ir::StructInfo)),
    };
    (Ident::new(name, Span::call_site()), ty)
}

#[derive(Clone, Copy)]
enum PoolKind {
    TirVar,
    Buffer,
    Var,
    StructInfo,
}

impl Quoter {
    /// Pushes `value` to the pool of `kind`; its place, `pool[i]`.
    fn push(&mut self, kind: PoolKind, len: usize, value: TokenStream) -> TokenStream {
        let (pool, _) = pool_local(kind);
        self.pushes.push(quote!(#pool.push(#value);));
        let i = Literal::usize_unsuffixed(len);
        quote!(#pool[#i])
    }

    /// The pools' declarations (only of the pools used) and every push.
    fn statements(&self) -> TokenStream {
        let lens = [
            (PoolKind::TirVar, self.tir_vars.places.len()),
            (PoolKind::Buffer, self.buffers.places.len()),
            (PoolKind::Var, self.vars.places.len()),
            (PoolKind::StructInfo, self.struct_info_count),
        ];
        let decls = lens.iter().filter(|(_, len)| *len > 0).map(|&(kind, len)| {
            let (pool, ty) = pool_local(kind);
            let len = Literal::usize_unsuffixed(len);
            quote!(let mut #pool: ::std::vec::Vec<#ty> = ::std::vec::Vec::with_capacity(#len);)
        });
        let pushes = &self.pushes;
        quote!(#(#decls)* #(#pushes)*)
    }

    /// The place of symbolic variable `v`, pushed on first sight.
    fn tir_var(&mut self, v: &TirVar) -> TokenStream {
        if let Some(place) = self.tir_vars.places.get(v) {
            return place.clone();
        }
        let name = Literal::string(v.name());
        let value = if v.dtype() == DataType::i64() {
            quote!(::relax::ir::TirVar::new(#name))
        } else {
            let dtype = dtype(v.dtype());
            quote!(::relax::ir::TirVar::with_dtype(#name, #dtype))
        };
        let place = self.push(PoolKind::TirVar, self.tir_vars.places.len(), value);
        self.tir_vars.places.insert(v.clone(), place.clone());
        place
    }

    /// The place of buffer `b`, pushed on first sight (after what its
    /// shape needs).
    fn buffer(&mut self, b: &crate::tir::Buffer) -> TokenStream {
        if let Some(place) = self.buffers.places.get(b) {
            return place.clone();
        }
        let name = Literal::string(b.name());
        let shape = self.prim_exprs(b.shape());
        let strides = self.prim_exprs(b.strides());
        let dt = dtype(b.dtype());
        let value = quote!(::relax::tir::Buffer::with_strides(#name, #shape, #dt, #strides));
        let place = self.push(PoolKind::Buffer, self.buffers.places.len(), value);
        self.buffers.places.insert(b.clone(), place.clone());
        place
    }

    /// The place of Relax variable `v`, pushed on first sight (after what
    /// its StructInfo needs).
    fn var(&mut self, v: &Var) -> TokenStream {
        if let Some(place) = self.vars.places.get(v) {
            return place.clone();
        }
        let sinfo = match v.struct_info() {
            Some(s) => {
                let s = self.struct_info(s);
                quote!(::std::option::Option::Some(#s))
            }
            None => quote!(::std::option::Option::None),
        };
        let name = Literal::string(v.name_hint());
        let ctor = if v.is_dataflow() {
            quote!(new_dataflow)
        } else {
            quote!(new)
        };
        let value = quote!(::relax::ir::Var::#ctor(#name, #sinfo));
        let place = self.push(PoolKind::Var, self.vars.places.len(), value);
        self.vars.places.insert(v.clone(), place.clone());
        place
    }

    fn prim_expr(&mut self, e: &PrimExpr) -> TokenStream {
        use PrimExprKind as K;
        let dt = e.dtype();
        let kind = match e.kind() {
            K::Var(v) => {
                let id = self.tir_var(v);
                if v.dtype() == dt {
                    return quote!(::relax::ir::PrimExpr::var(&#id));
                }
                quote!(Var(#id.clone()))
            }
            K::IntImm(i) => {
                let lit = i64_lit(*i);
                if dt == DataType::i64() {
                    return quote!(::relax::ir::PrimExpr::int(#lit));
                }
                if dt.is_bool() && (*i == 0 || *i == 1) {
                    let b = *i == 1;
                    return quote!(::relax::ir::PrimExpr::bool(#b));
                }
                let dt = dtype(dt);
                return quote!(::relax::ir::PrimExpr::int_of(#dt, #lit));
            }
            K::FloatImm(f) => {
                let (dt, f) = (dtype(dt), f64_lit(*f));
                return quote!(::relax::ir::PrimExpr::float(#dt, #f));
            }
            K::Not(a) => {
                let a = self.prim_expr(a);
                quote!(Not(#a))
            }
            K::Select(c, t, f) => {
                let (c, t, f) = (self.prim_expr(c), self.prim_expr(t), self.prim_expr(f));
                quote!(Select(#c, #t, #f))
            }
            K::Cast(a) => {
                let a = self.prim_expr(a);
                quote!(Cast(#a))
            }
            K::BufferLoad(buffer, idx) => {
                let b = self.buffer(buffer);
                let idx = self.prim_exprs(idx);
                quote!(BufferLoad(#b.clone(), #idx))
            }
            K::Call(name, args) => {
                let name = Literal::string(name);
                let args = self.prim_exprs(args);
                quote!(Call(::std::string::String::from(#name), #args))
            }
            K::Add(a, b) => self.binary("Add", a, b),
            K::Sub(a, b) => self.binary("Sub", a, b),
            K::Mul(a, b) => self.binary("Mul", a, b),
            K::Div(a, b) => self.binary("Div", a, b),
            K::Mod(a, b) => self.binary("Mod", a, b),
            K::Min(a, b) => self.binary("Min", a, b),
            K::Max(a, b) => self.binary("Max", a, b),
            K::Eq(a, b) => self.binary("Eq", a, b),
            K::Ne(a, b) => self.binary("Ne", a, b),
            K::Lt(a, b) => self.binary("Lt", a, b),
            K::Le(a, b) => self.binary("Le", a, b),
            K::Gt(a, b) => self.binary("Gt", a, b),
            K::Ge(a, b) => self.binary("Ge", a, b),
            K::And(a, b) => self.binary("And", a, b),
            K::Or(a, b) => self.binary("Or", a, b),
        };
        let dt = dtype(dt);
        quote!(::relax::ir::PrimExpr::new(#dt, ::relax::ir::PrimExprKind::#kind))
    }

    /// `Variant(a, b)` of `PrimExprKind`, without its path.
    fn binary(&mut self, variant: &str, a: &PrimExpr, b: &PrimExpr) -> TokenStream {
        let variant = Ident::new(variant, Span::call_site());
        let (a, b) = (self.prim_expr(a), self.prim_expr(b));
        quote!(#variant(#a, #b))
    }

    fn prim_exprs(&mut self, es: &[PrimExpr]) -> TokenStream {
        let es: Vec<TokenStream> = es.iter().map(|e| self.prim_expr(e)).collect();
        quote!(::std::vec![#(#es),*])
    }

    /// An expression of type `StructInfo` (a clone of its binding).
    fn struct_info(&mut self, s: &StructInfo) -> TokenStream {
        if let Some((_, place)) = self.struct_infos.iter().find(|(k, _)| k == s) {
            return quote!(#place.clone());
        }
        let value = self.struct_info_value(s);
        let place = self.push(PoolKind::StructInfo, self.struct_info_count, value);
        self.struct_info_count += 1;
        self.struct_infos.push((s.clone(), place.clone()));
        quote!(#place.clone())
    }

    fn struct_info_value(&mut self, s: &StructInfo) -> TokenStream {
        let kind = match s.kind() {
            StructInfoKind::Object => return quote!(::relax::ir::StructInfo::object()),
            StructInfoKind::Prim(p) => match &p.value {
                None => {
                    let dt = dtype(p.dtype);
                    return quote!(::relax::ir::StructInfo::prim(#dt));
                }
                Some(v) if v.dtype() == p.dtype => {
                    let v = self.prim_expr(v);
                    return quote!(::relax::ir::StructInfo::prim_value(#v));
                }
                Some(v) => {
                    let (dt, v) = (dtype(p.dtype), self.prim_expr(v));
                    quote! {
                        Prim(::relax::ir::PrimStructInfo {
                            dtype: #dt,
                            value: ::std::option::Option::Some(#v),
                        })
                    }
                }
            },
            StructInfoKind::Shape(sh) => match &sh.values {
                Some(vs) if vs.len() as i32 == sh.ndim => {
                    let vs = self.prim_exprs(vs);
                    return quote!(::relax::ir::StructInfo::shape(#vs));
                }
                None => {
                    let ndim = Literal::i32_unsuffixed(sh.ndim);
                    return quote!(::relax::ir::StructInfo::shape_ndim(#ndim));
                }
                Some(vs) => {
                    let (vs, ndim) = (self.prim_exprs(vs), Literal::i32_unsuffixed(sh.ndim));
                    quote! {
                        Shape(::relax::ir::ShapeStructInfo {
                            values: ::std::option::Option::Some(#vs),
                            ndim: #ndim,
                        })
                    }
                }
            },
            StructInfoKind::Tensor(t) => {
                let dt = dtype(t.dtype);
                let ndim = Literal::i32_unsuffixed(t.ndim);
                match &t.shape {
                    None => return quote!(::relax::ir::StructInfo::tensor_ndim(#ndim, #dt)),
                    Some(shape) => {
                        // `StructInfo::tensor` builds exactly `Expr::shape(values)`.
                        if let ExprKind::ShapeExpr(values) = shape.kind() {
                            if values.len() as i32 == t.ndim
                                && *shape == Expr::shape(values.clone())
                            {
                                let vs = self.prim_exprs(values);
                                return quote!(::relax::ir::StructInfo::tensor(#vs, #dt));
                            }
                        }
                        let shape = self.expr(shape);
                        quote! {
                            Tensor(::relax::ir::TensorStructInfo {
                                shape: ::std::option::Option::Some(#shape),
                                dtype: #dt,
                                ndim: #ndim,
                            })
                        }
                    }
                }
            }
            StructInfoKind::Tuple(fields) => {
                let fields: Vec<TokenStream> = fields.iter().map(|f| self.struct_info(f)).collect();
                return quote!(::relax::ir::StructInfo::tuple(::std::vec![#(#fields),*]));
            }
            StructInfoKind::Func(f) => {
                let ret = self.struct_info(&f.ret);
                let purity = f.purity;
                match (&f.params, &f.derive_func) {
                    (Some(params), None) => {
                        let params: Vec<TokenStream> =
                            params.iter().map(|p| self.struct_info(p)).collect();
                        return quote! {
                            ::relax::ir::StructInfo::func(::std::vec![#(#params),*], #ret, #purity)
                        };
                    }
                    (None, Some(derive)) if !purity => {
                        let derive = derive_func(derive);
                        return quote!(::relax::ir::StructInfo::opaque_func(#derive, #ret));
                    }
                    (params, derive) => {
                        let params = match params {
                            Some(ps) => {
                                let ps: Vec<TokenStream> =
                                    ps.iter().map(|p| self.struct_info(p)).collect();
                                quote!(::std::option::Option::Some(::std::vec![#(#ps),*]))
                            }
                            None => quote!(::std::option::Option::None),
                        };
                        let derive = match derive {
                            Some(d) => {
                                let d = derive_func(d);
                                quote!(::std::option::Option::Some(#d))
                            }
                            None => quote!(::std::option::Option::None),
                        };
                        quote! {
                            Func(::relax::ir::FuncStructInfo {
                                params: #params,
                                ret: #ret,
                                purity: #purity,
                                derive_func: #derive,
                            })
                        }
                    }
                }
            }
        };
        quote!(::relax::ir::StructInfo::new(::relax::ir::StructInfoKind::#kind))
    }

    fn expr(&mut self, e: &Expr) -> TokenStream {
        let built = self.expr_kind(e);
        // What the constructor gives the node: leaves know their StructInfo,
        // the rest get it from normalization (see `Expr::new`).
        let constructed = match e.kind() {
            ExprKind::Call(_)
            | ExprKind::If(_)
            | ExprKind::SeqExpr(_)
            | ExprKind::GlobalVar(_)
            | ExprKind::Op(_) => None,
            kind => Expr::new(kind.clone()).struct_info().cloned(),
        };
        match e.struct_info() {
            // A node without StructInfo is one the constructor left without.
            Some(s) if Some(s) != constructed.as_ref() => {
                let s = self.struct_info(s);
                quote!(#built.with_struct_info(#s))
            }
            _ => built,
        }
    }

    fn exprs(&mut self, es: &[Expr]) -> TokenStream {
        let es: Vec<TokenStream> = es.iter().map(|e| self.expr(e)).collect();
        quote!(::std::vec![#(#es),*])
    }

    fn expr_kind(&mut self, e: &Expr) -> TokenStream {
        match e.kind() {
            ExprKind::Constant(t) => {
                let dt = dtype(t.dtype());
                let shape = t.shape().iter().map(|&d| i64_lit(d));
                let bytes = Literal::byte_string(t.as_bytes());
                quote! {
                    ::relax::ir::Expr::constant(
                        ::relax::ir::Tensor::from_bytes(#dt, &[#(#shape),*], #bytes)
                            .expect("the bytes of a generated constant match its shape"),
                    )
                }
            }
            ExprKind::Var(v) => {
                let id = self.var(v);
                quote!(::relax::ir::Expr::var(&#id))
            }
            ExprKind::GlobalVar(gv) => {
                let name = Literal::string(gv.name_hint());
                quote!(::relax::ir::Expr::global_var(::relax::ir::GlobalVar::new(#name)))
            }
            ExprKind::Tuple(fields) => {
                let fields = self.exprs(fields);
                quote!(::relax::ir::Expr::tuple(#fields))
            }
            ExprKind::SeqExpr(seq) => {
                let blocks: Vec<TokenStream> = seq.blocks.iter().map(|b| self.block(b)).collect();
                let body = self.expr(&seq.body);
                quote!(::relax::ir::Expr::seq(::std::vec![#(#blocks),*], #body))
            }
            ExprKind::PrimValue(v) => {
                let v = self.prim_expr(v);
                quote!(::relax::ir::Expr::prim_value(#v))
            }
            ExprKind::StringImm(s) => {
                let s = Literal::string(s);
                quote!(::relax::ir::Expr::string(#s))
            }
            ExprKind::DataTypeImm(dt) => {
                let dt = dtype(*dt);
                quote!(::relax::ir::Expr::dtype(#dt))
            }
            ExprKind::Function(f) => {
                let f = self.function(f);
                quote!(::relax::ir::Expr::function(#f))
            }
            ExprKind::If(i) => {
                let c = self.expr(&i.cond);
                let t = self.expr(&i.true_branch);
                let f = self.expr(&i.false_branch);
                quote!(::relax::ir::Expr::if_(#c, #t, #f))
            }
            ExprKind::ExternFunc(name) => {
                let name = Literal::string(name);
                quote!(::relax::ir::Expr::extern_func(#name))
            }
            ExprKind::Call(c) => {
                let op = self.expr(&c.op);
                let args = self.exprs(&c.args);
                let attrs = self.attrs(&c.attrs);
                let sinfo: Vec<TokenStream> =
                    c.sinfo_args.iter().map(|s| self.struct_info(s)).collect();
                quote! {
                    ::relax::ir::Expr::call_full(#op, #args, #attrs, ::std::vec![#(#sinfo),*])
                }
            }
            ExprKind::ShapeExpr(values) => {
                let vs = self.prim_exprs(values);
                quote!(::relax::ir::Expr::shape(#vs))
            }
            ExprKind::TupleGetItem(t, i) => {
                let t = self.expr(t);
                let i = Literal::usize_unsuffixed(*i);
                quote!(::relax::ir::Expr::tuple_get_item(#t, #i))
            }
            ExprKind::Op(op) => {
                let name = Literal::string(op.name());
                quote!(::relax::ir::Expr::op(#name))
            }
        }
    }

    fn block(&mut self, b: &BindingBlock) -> TokenStream {
        let bindings: Vec<TokenStream> = b
            .bindings
            .iter()
            .map(|binding| match binding {
                Binding::VarBinding(vb) => {
                    // The value first, so the `let`s come in source order.
                    let value = self.expr(&vb.value);
                    let var = self.var(&vb.var);
                    quote!(::relax::ir::Binding::var_binding(#var.clone(), #value))
                }
                Binding::MatchCast(mc) => {
                    let value = self.expr(&mc.value);
                    let sinfo = self.struct_info(&mc.struct_info);
                    let var = self.var(&mc.var);
                    quote!(::relax::ir::Binding::match_cast(#var.clone(), #value, #sinfo))
                }
            })
            .collect();
        let is_dataflow = b.is_dataflow;
        quote! {
            ::relax::ir::BindingBlock {
                bindings: ::std::vec![#(#bindings),*],
                is_dataflow: #is_dataflow,
            }
        }
    }

    fn function(&mut self, f: &Function) -> TokenStream {
        let params: Vec<TokenStream> = f.params.iter().map(|p| self.var(p)).collect();
        let body = self.expr(&f.body);
        let ret = self.struct_info(&f.ret_struct_info);
        let attrs = self.attrs(&f.attrs);
        let is_pure = f.is_pure;
        quote! {
            ::relax::ir::Function {
                params: ::std::vec![#(#params.clone()),*],
                body: #body,
                ret_struct_info: #ret,
                is_pure: #is_pure,
                attrs: #attrs,
            }
        }
    }

    fn prim_func(&mut self, f: &PrimFunc) -> TokenStream {
        let params: Vec<TokenStream> = f
            .params
            .iter()
            .map(|p| match p {
                PrimFuncParam::Buffer(b) => {
                    let b = self.buffer(b);
                    quote!(::relax::tir::PrimFuncParam::Buffer(#b.clone()))
                }
                PrimFuncParam::Scalar(v) => {
                    let id = self.tir_var(v);
                    quote!(::relax::tir::PrimFuncParam::Scalar(#id.clone()))
                }
            })
            .collect();
        let attrs = self.attrs(&f.attrs);
        // The DSL defines no loop-level code, so only the signature of a
        // PrimFunc (with the no-op body) can reach this point; anything else
        // is a compile error, never silently wrong code.
        let body = if f.body == crate::tir::Stmt::no_op() {
            quote!(::relax::tir::Stmt::no_op())
        } else {
            quote!(::core::compile_error!(
                "relax macro: a PrimFunc with a loop-level body cannot be embedded yet"
            ))
        };
        quote! {
            ::relax::ir::PrimFunc {
                params: ::std::vec![#(#params),*],
                body: #body,
                attrs: #attrs,
            }
        }
    }

    fn attrs(&mut self, attrs: &Attrs) -> TokenStream {
        if attrs.is_empty() {
            return quote!(::relax::ir::Attrs::new());
        }
        let pairs: Vec<TokenStream> = attrs
            .iter()
            .map(|(k, v)| {
                let k = Literal::string(k);
                let v = self.attr_value(v);
                quote!((#k, #v))
            })
            .collect();
        quote!(::relax::ir::Attrs::from_pairs(::std::vec![#(#pairs),*]))
    }

    fn attr_value(&mut self, v: &AttrValue) -> TokenStream {
        let inner = match v {
            AttrValue::None => quote!(None),
            AttrValue::Bool(b) => quote!(Bool(#b)),
            AttrValue::Int(i) => {
                let i = i64_lit(*i);
                quote!(Int(#i))
            }
            AttrValue::Float(f) => {
                let f = f64_lit(*f);
                quote!(Float(#f))
            }
            AttrValue::Str(s) => {
                let s = Literal::string(s);
                quote!(Str(::std::string::String::from(#s)))
            }
            AttrValue::DataType(dt) => {
                let dt = dtype(*dt);
                quote!(DataType(#dt))
            }
            AttrValue::PrimExpr(e) => {
                let e = self.prim_expr(e);
                quote!(PrimExpr(#e))
            }
            AttrValue::Array(items) => {
                let items: Vec<TokenStream> = items.iter().map(|i| self.attr_value(i)).collect();
                quote!(Array(::std::vec![#(#items),*]))
            }
        };
        quote!(::relax::ir::AttrValue::#inner)
    }
}

/// A `DataType` constant expression.
fn dtype(dt: DataType) -> TokenStream {
    if dt.is_void() {
        return quote!(::relax::ir::DataType::void());
    }
    let bits = Literal::u16_unsuffixed(dt.bits());
    if dt.lanes() == 1 {
        match dt.code() {
            TypeCode::UInt if dt.bits() == 1 => return quote!(::relax::ir::DataType::bool()),
            TypeCode::Int => return quote!(::relax::ir::DataType::int(#bits)),
            TypeCode::UInt => return quote!(::relax::ir::DataType::uint(#bits)),
            TypeCode::Float => return quote!(::relax::ir::DataType::float(#bits)),
            TypeCode::BFloat | TypeCode::Handle => {}
        }
    }
    let code = match dt.code() {
        TypeCode::Int => quote!(Int),
        TypeCode::UInt => quote!(UInt),
        TypeCode::Float => quote!(Float),
        TypeCode::BFloat => quote!(BFloat),
        TypeCode::Handle => quote!(Handle),
    };
    let lanes = Literal::u16_unsuffixed(dt.lanes());
    quote!(::relax::ir::DataType::new(::relax::ir::TypeCode::#code, #bits, #lanes))
}

fn derive_func(d: &DeriveFunc) -> TokenStream {
    match d {
        DeriveFunc::Default => quote!(::relax::ir::DeriveFunc::Default),
        DeriveFunc::Empty => quote!(::relax::ir::DeriveFunc::Empty),
    }
}

/// An `i64` literal; `i64::MIN` has no literal of its own (its negation
/// overflows), so it is spelled by name.
pub(super) fn i64_lit(v: i64) -> TokenStream {
    if v == i64::MIN {
        quote!(::core::primitive::i64::MIN)
    } else {
        let lit = Literal::i64_suffixed(v);
        quote!(#lit)
    }
}

/// An `f64` expression with exactly the bits of `v`: a literal when it is
/// finite and prints back to itself, else `f64::from_bits`.
fn f64_lit(v: f64) -> TokenStream {
    if v.is_finite() && format!("{v:?}").parse::<f64>().map(f64::to_bits) == Ok(v.to_bits()) {
        let lit = Literal::f64_suffixed(v);
        quote!(#lit)
    } else {
        let bits = Literal::u64_suffixed(v.to_bits());
        quote!(::core::primitive::f64::from_bits(#bits))
    }
}
