//! Calls: ops (`R::add(x, y)`, `R::sum(x, axis = [1])`), module
//! functions, and the special forms `R::match_cast`, `R::call_packed`,
//! `R::call_tir`, `R::shape`, `R::prim` and `R::dtype`.

use super::super::errors::{describe_expr, nearest, quoted, unsupported, Failed, Lowering};
use super::super::syntax::literal_attr;
use super::super::types::dtype_named;
use super::super::{FrontendError, SpanRange};
use super::{r_path, FnCx};
use crate::analysis::derive::is_impure_call;
use crate::ir::{AttrValue, Attrs, Binding, DataType, Expr, PrimExpr, StructInfo};

/// A call's arguments split into positional ones and `key = value` ones.
struct Args<'e> {
    positional: Vec<&'e syn::Expr>,
    keywords: Vec<Keyword<'e>>,
}

/// One `key = value` argument.
struct Keyword<'e> {
    key: &'e syn::Ident,
    value: &'e syn::Expr,
    /// The whole `key = value`, where errors about the argument go.
    whole: &'e syn::ExprAssign,
}

impl FnCx<'_> {
    fn split_args<'e>(&mut self, c: &'e syn::ExprCall) -> Lowering<Args<'e>> {
        let mut args = Args {
            positional: vec![],
            keywords: vec![],
        };
        let mut failed = false;
        for a in &c.args {
            match a {
                syn::Expr::Assign(asg) => match &*asg.left {
                    syn::Expr::Path(p) if p.path.get_ident().is_some() => {
                        let key = p.path.get_ident().expect("checked above");
                        if args.keywords.iter().any(|k| k.key == key) {
                            self.error(FrontendError::spanned(
                                asg,
                                format!("keyword argument `{key}` given twice"),
                            ));
                            failed = true;
                        }
                        args.keywords.push(Keyword {
                            key,
                            value: &asg.right,
                            whole: asg,
                        });
                    }
                    other => {
                        self.error(unsupported(
                            other,
                            "a keyword argument `name = value`",
                            &quoted(other),
                        ));
                        failed = true;
                    }
                },
                other => {
                    if let Some(k) = args.keywords.last() {
                        let k = k.key;
                        self.error(FrontendError::spanned(
                            other,
                            format!(
                                "positional argument after the keyword argument `{k}`: keyword arguments come last"
                            ),
                        ));
                        failed = true;
                    }
                    args.positional.push(other);
                }
            }
        }
        if failed {
            Err(Failed)
        } else {
            Ok(args)
        }
    }

    /// Lowers positional arguments to leaves, all of them even after a
    /// failure (so independent errors are all found).
    fn leaves(&mut self, args: &[&syn::Expr]) -> Lowering<Vec<Expr>> {
        let mut out = Vec::new();
        let mut failed = false;
        for a in args {
            match self.leaf(a) {
                Ok(v) => out.push(v),
                Err(Failed) => failed = true,
            }
        }
        if failed {
            Err(Failed)
        } else {
            Ok(out)
        }
    }

    pub(super) fn call(&mut self, c: &syn::ExprCall, whole: &syn::Expr) -> Lowering<Expr> {
        let syn::Expr::Path(p) = &*c.func else {
            return Err(self.error(unsupported(
                &*c.func,
                "a call of `R::op(…)` or of a module function",
                &describe_expr(&c.func),
            )));
        };
        for seg in &p.path.segments {
            if !seg.arguments.is_none() {
                return Err(self.error(unsupported(
                    &seg.arguments,
                    "a path without generic arguments",
                    &quoted(&seg.arguments),
                )));
            }
        }
        let args = self.split_args(c)?;
        if let Some(segs) = r_path(&p.path) {
            let path = segs.join("::");
            return match path.as_str() {
                "match_cast" => {
                    let range = SpanRange::of(whole);
                    let (value, pattern) = self.match_cast_parts(&args, range)?;
                    match self.bb.emit_match_cast(value, pattern) {
                        Ok(v) => Ok(Expr::var(&v)),
                        Err(err) => Err(self.report(err, range)),
                    }
                }
                "call_tir" => self.call_tir(&args, whole),
                "call_packed" => self.call_packed(&args, whole),
                "print" | "assert_op" => self.debug_call(&path, &args, whole),
                "shape" => self.shape_value(&args, whole),
                "prim" => self.prim_value(&args, whole),
                "dtype" => self.dtype_value(&args, whole),
                "output" => Err(self.error(FrontendError::spanned(
                    whole,
                    "`R::output(…)` may only end an `R::dataflow!` block",
                ))),
                "dataflow" => Err(self.error(FrontendError::spanned(
                    whole,
                    "`R::dataflow` is a macro statement: write `R::dataflow! { … }`",
                ))),
                _ => self.op_call(&segs, p, &args, whole),
            };
        }
        match p.path.get_ident() {
            Some(ident) if p.qself.is_none() => self.function_call(ident, &args, whole),
            _ => Err(self.error(unsupported(
                p,
                "`R::op(…)` or a module function `name(…)`",
                &format!("a call of {}", quoted(p)),
            ))),
        }
    }

    /// Reports an impure call where only pure ones are allowed; `range` is
    /// the call's tokens.
    fn check_purity(&mut self, value: &Expr, range: SpanRange, what: &str) {
        let Some(call) = value.as_call() else { return };
        if !is_impure_call(call) {
            return;
        }
        if self.in_dataflow {
            self.error(FrontendError::new(
                range,
                format!(
                    "impure call {what} inside `R::dataflow!`: dataflow blocks hold pure computations only; move it after the block"
                ),
            ));
        } else if self.pure {
            self.error(FrontendError::new(
                range,
                format!(
                    "impure call {what} in a pure function: mark the function `#[function(pure = false)]`"
                ),
            ));
        }
    }

    fn op_call(
        &mut self,
        segs: &[String],
        p: &syn::ExprPath,
        args: &Args,
        whole: &syn::Expr,
    ) -> Lowering<Expr> {
        let name = format!("relax.{}", segs.join("."));
        let Some(info) = crate::op::lookup(&name) else {
            let mut message = format!("unknown op `R::{}`", segs.join("::"));
            if let Some(n) = crate::op::nearest(&name) {
                let short = n.strip_prefix("relax.").unwrap_or(n).replace('.', "::");
                message.push_str(&format!("; did you mean `R::{short}`?"));
            }
            self.error(FrontendError::spanned(p, message));
            // The arguments may hold independent errors.
            let _ = self.leaves(&args.positional);
            return Err(Failed);
        };
        let values = self.leaves(&args.positional);
        let attrs = self.call_attrs(&args.keywords);
        let (values, attrs) = (values?, attrs?);
        let call = match info.call(values, &attrs) {
            Ok(c) => c,
            Err(d) => {
                // An error about one attribute lands on its `key = value`.
                let range = args
                    .keywords
                    .iter()
                    .find(|k| d.message.contains(&format!("`{}`", k.key)))
                    .map_or_else(|| SpanRange::of(whole), |k| SpanRange::of(k.whole));
                return Err(self.error(FrontendError::new(range, d.message)));
            }
        };
        let range = SpanRange::of(whole);
        let value = self.normalize(call, range)?;
        self.check_purity(&value, range, &format!("`R::{}`", segs.join("::")));
        Ok(value)
    }

    fn call_attrs(&mut self, keywords: &[Keyword]) -> Lowering<Attrs> {
        let mut attrs = Attrs::new();
        let mut failed = false;
        for k in keywords {
            match self.attr_value(k.value) {
                Ok(a) => attrs = attrs.with(&k.key.to_string(), a),
                Err(Failed) => failed = true,
            }
        }
        if failed {
            Err(Failed)
        } else {
            Ok(attrs)
        }
    }

    /// An attribute value: a literal, a list, `None`, a dtype or a dim.
    fn attr_value(&mut self, e: &syn::Expr) -> Lowering<AttrValue> {
        if let Some(v) = literal_attr(e) {
            return Ok(v);
        }
        match e {
            syn::Expr::Array(a) => {
                let items: Vec<_> = a.elems.iter().map(|x| self.attr_value(x)).collect();
                items
                    .into_iter()
                    .collect::<Result<Vec<_>, _>>()
                    .map(AttrValue::Array)
            }
            syn::Expr::Tuple(t) => {
                let items: Vec<_> = t.elems.iter().map(|x| self.attr_value(x)).collect();
                items
                    .into_iter()
                    .collect::<Result<Vec<_>, _>>()
                    .map(AttrValue::Array)
            }
            syn::Expr::Path(p) if p.path.get_ident().is_some() => {
                let ident = p.path.get_ident().expect("checked above");
                let name = ident.to_string();
                if name == "None" {
                    return Ok(AttrValue::None);
                }
                if let Some(v) = self.syms.lookup(&name) {
                    return Ok(AttrValue::PrimExpr(PrimExpr::var(&v)));
                }
                if let Some(d) = dtype_named(&name) {
                    return Ok(AttrValue::DataType(d));
                }
                Err(self.error(FrontendError::spanned(
                    ident,
                    format!(
                        "`{name}` is neither a symbolic dim in scope nor a dtype: expected an attribute value such as `1`, `[1, 2]`, `true`, `\"s\"`, `None`, `f32` or a symbolic dim"
                    ),
                )))
            }
            syn::Expr::Binary(_) | syn::Expr::Paren(_) | syn::Expr::Unary(_) => {
                self.types(false).dim(e).map(AttrValue::PrimExpr)
            }
            other => Err(self.error(unsupported(
                other,
                "an attribute value (a literal, a list, `None`, a dtype or a dimension)",
                &describe_expr(other),
            ))),
        }
    }

    fn no_keywords(&mut self, args: &Args, what: &str) -> Lowering<()> {
        match args.keywords.first() {
            Some(k) => Err(self.error(FrontendError::spanned(
                k.whole,
                format!("unknown keyword argument `{}`: {what} takes none", k.key),
            ))),
            None => Ok(()),
        }
    }

    fn function_call(
        &mut self,
        ident: &syn::Ident,
        args: &Args,
        whole: &syn::Expr,
    ) -> Lowering<Expr> {
        let name = ident.to_string();
        let callee = match self.lookup(&name) {
            Some(_) => self.name_value(ident),
            None => match self.globals.get(&name) {
                Some(g) => Ok(g.clone()),
                None => {
                    let mut message = format!("unknown function `{name}`");
                    let globals: Vec<&str> = self.globals.keys().map(String::as_str).collect();
                    if let Some(n) = nearest(&name, globals) {
                        message.push_str(&format!("; did you mean `{n}`?"));
                    } else if crate::op::lookup(&format!("relax.{name}")).is_some() {
                        message.push_str(&format!("; did you mean the op `R::{name}`?"));
                    }
                    Err(self.error(FrontendError::spanned(ident, message)))
                }
            },
        };
        self.no_keywords(args, &format!("`{name}`"))?;
        let values = self.leaves(&args.positional);
        let (callee, values) = (callee?, values?);
        let expected = callee
            .struct_info()
            .and_then(StructInfo::as_func)
            .and_then(|f| f.params.as_ref())
            .map(Vec::len);
        if let Some(n) = expected.filter(|&n| n != values.len()) {
            let plural = |k: usize| if k == 1 { "" } else { "s" };
            let verb = if values.len() == 1 { "was" } else { "were" };
            return Err(self.error(FrontendError::spanned(
                whole,
                format!(
                    "`{name}` takes {n} argument{}, but {} {verb} given",
                    plural(n),
                    values.len()
                ),
            )));
        }
        let range = SpanRange::of(whole);
        let value = self.normalize(Expr::call(callee, values), range)?;
        self.check_purity(&value, range, &format!("of `{name}`"));
        Ok(value)
    }

    /// `R::match_cast(value, pattern)`: the value as a leaf and the pattern,
    /// whose new symbolic dims come into scope. `range` is the call's tokens.
    fn match_cast_parts(&mut self, args: &Args, range: SpanRange) -> Lowering<(Expr, StructInfo)> {
        self.no_keywords(args, "`R::match_cast`")?;
        let [value, pattern] = args.positional[..] else {
            return Err(self.error(FrontendError::new(
                range,
                format!(
                    "`R::match_cast` takes 2 arguments (a value and an annotation), but {} were given",
                    args.positional.len()
                ),
            )));
        };
        let value = self.leaf(value);
        let mut cx = self.types(true);
        let pattern = cx.struct_info_expr(pattern);
        let introduced = std::mem::take(&mut cx.introduced);
        for (v, _) in introduced {
            self.analyzer.mark_non_negative(&v);
        }
        Ok((value?, pattern?))
    }

    pub(super) fn let_match_cast(
        &mut self,
        name: &str,
        c: &syn::ExprCall,
        ann: Option<(Lowering<StructInfo>, SpanRange)>,
        is_output: bool,
        range: SpanRange,
    ) {
        let parts = self
            .split_args(c)
            .and_then(|args| self.match_cast_parts(&args, SpanRange::of(c)));
        let Ok((value, pattern)) = parts else {
            self.poison(name, is_output);
            return;
        };
        match ann {
            Some((Err(Failed), _)) => {
                self.poison(name, is_output);
                return;
            }
            Some((Ok(a), ann_range)) => {
                self.check_annotation(&a, &pattern, ann_range, "annotation")
            }
            None => {}
        }
        let var = self.new_var(name, pattern.clone(), is_output);
        match self
            .bb
            .emit_normalized(Binding::match_cast(var.clone(), value, pattern))
        {
            Ok(()) => self.define(name, var),
            Err(err) => {
                self.report(err, range);
                self.poison(name, is_output);
            }
        }
    }

    fn call_tir(&mut self, args: &Args, whole: &syn::Expr) -> Lowering<Expr> {
        let (range, f) = match args.positional.first() {
            Some(f) => (SpanRange::of(*f), quoted(*f)),
            None => (SpanRange::of(whole), "`f`".to_string()),
        };
        Err(self.error(FrontendError::new(
            range,
            format!(
                "call_tir needs a PrimFunc {} in the module; the DSL cannot define PrimFuncs yet",
                f
            ),
        )))
    }

    /// `R::call_packed("name", args…, sinfo = S)`
    fn call_packed(&mut self, args: &Args, whole: &syn::Expr) -> Lowering<Expr> {
        let func = match args.positional.first() {
            Some(syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            })) => Ok(s.value()),
            Some(other) => Err(self.error(FrontendError::spanned(
                *other,
                format!(
                    "expected the packed function's name as a string literal, found {}",
                    describe_expr(other)
                ),
            ))),
            None => Err(self.error(FrontendError::spanned(
                whole,
                "`R::call_packed` takes the packed function's name first, as in `R::call_packed(\"name\", x, sinfo = …)`",
            ))),
        };
        let rest = args.positional.get(1..).unwrap_or(&[]);
        let values = self.leaves(rest);
        let mut sinfo_args = Vec::new();
        let mut failed = false;
        for k in &args.keywords {
            if k.key == "sinfo" {
                match self.types(false).struct_info_expr(k.value) {
                    Ok(s) => sinfo_args.push(s),
                    Err(Failed) => failed = true,
                }
            } else {
                self.error(FrontendError::spanned(
                    k.whole,
                    format!(
                        "unknown keyword argument `{}` of `R::call_packed`: expected `sinfo`",
                        k.key
                    ),
                ));
                failed = true;
            }
        }
        let (func, values) = (func?, values?);
        if failed {
            return Err(Failed);
        }
        let call = Expr::call_full(Expr::extern_func(func), values, Attrs::new(), sinfo_args);
        let range = SpanRange::of(whole);
        let value = self.normalize(call, range)?;
        self.check_purity(&value, range, "`R::call_packed`");
        Ok(value)
    }

    /// `R::print(x, …, format = "…")` and `R::assert_op(cond, x, …, format
    /// = "…")` (`op::debug`): the format, a string literal, is optional.
    fn debug_call(&mut self, path: &str, args: &Args, whole: &syn::Expr) -> Lowering<Expr> {
        let mut format = Ok(String::new());
        for k in &args.keywords {
            format = match (k.key.to_string().as_str(), k.value) {
                (
                    "format",
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(s),
                        ..
                    }),
                ) => Ok(s.value()),
                ("format", other) => Err(self.error(FrontendError::spanned(
                    other,
                    format!(
                        "expected the format of `R::{path}` as a string literal, found {}",
                        describe_expr(other)
                    ),
                ))),
                (key, _) => Err(self.error(FrontendError::spanned(
                    k.whole,
                    format!("unknown keyword argument `{key}` of `R::{path}`: expected `format`"),
                ))),
            };
        }
        if path == "assert_op" && args.positional.is_empty() {
            return Err(self.error(FrontendError::spanned(
                whole,
                "`R::assert_op` takes the condition first, as in `R::assert_op(ok, x, format = \"…\")`",
            )));
        }
        let values = self.leaves(&args.positional);
        let (format, values) = (Expr::string(format?), values?);
        let call = crate::op::debug::call(path, format, values).ok_or(Failed)?;
        let range = SpanRange::of(whole);
        let value = self.normalize(call, range)?;
        self.check_purity(&value, range, &format!("`R::{path}`"));
        Ok(value)
    }

    /// `R::shape([n, m])`
    fn shape_value(&mut self, args: &Args, whole: &syn::Expr) -> Lowering<Expr> {
        self.no_keywords(args, "`R::shape`")?;
        let elems: Vec<&syn::Expr> = match args.positional[..] {
            [syn::Expr::Array(a)] => a.elems.iter().collect(),
            [syn::Expr::Tuple(t)] => t.elems.iter().collect(),
            _ => {
                return Err(self.error(FrontendError::spanned(
                    whole,
                    "expected `R::shape([dim, …])` with one list of dimensions",
                )))
            }
        };
        let mut dims = Vec::new();
        let mut failed = false;
        for d in elems {
            match self.types(false).dim(d) {
                Ok(v) => dims.push(v),
                Err(Failed) => failed = true,
            }
        }
        if failed {
            return Err(Failed);
        }
        self.normalize(Expr::shape(dims), SpanRange::of(whole))
    }

    /// `R::dtype("int32")`: a dtype value (TVMScript's `R.dtype`), as
    /// `R::memory::view` takes its dtype.
    fn dtype_value(&mut self, args: &Args, whole: &syn::Expr) -> Lowering<Expr> {
        self.no_keywords(args, "`R::dtype`")?;
        let dtype = match args.positional[..] {
            [syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            })] => dtype_named(&s.value()).ok_or_else(|| {
                self.error(FrontendError::spanned(
                    s,
                    format!("`{}` is not a dtype", s.value()),
                ))
            })?,
            _ => {
                return Err(self.error(FrontendError::spanned(
                    whole,
                    "`R::dtype` takes one string literal, such as `R::dtype(\"int32\")`",
                )))
            }
        };
        self.normalize(Expr::dtype(dtype), SpanRange::of(whole))
    }

    /// `R::prim(n)`, `R::prim(2)`, `R::prim(true)`, `R::prim(1.5)`
    fn prim_value(&mut self, args: &Args, whole: &syn::Expr) -> Lowering<Expr> {
        self.no_keywords(args, "`R::prim`")?;
        let [arg] = args.positional[..] else {
            return Err(self.error(FrontendError::spanned(
                whole,
                format!(
                    "`R::prim` takes 1 argument, but {} were given",
                    args.positional.len()
                ),
            )));
        };
        let value = match arg {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Bool(b),
                ..
            }) => PrimExpr::bool(b.value),
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Float(f),
                ..
            }) => {
                let dtype = match f.suffix() {
                    "f64" => DataType::f64(),
                    _ => DataType::f32(),
                };
                match f.base10_digits().parse::<f64>() {
                    Ok(v) => PrimExpr::float(dtype, v),
                    Err(_) => {
                        return Err(self.error(FrontendError::spanned(
                            f,
                            format!("invalid float literal `{f}`"),
                        )))
                    }
                }
            }
            other => self.types(false).dim(other)?,
        };
        self.normalize(Expr::prim_value(value), SpanRange::of(whole))
    }
}
