//! Lowering: DSL functions (syn syntax trees) to Relax IR, through the
//! [`BlockBuilder`].
//!
//! 1. Signatures first: every function's parameters and return annotation
//!    become StructInfo and its `GlobalVar` gets function StructInfo, so
//!    functions may call each other in any order. Bodies follow in source
//!    order, except that a function without a return annotation is lowered
//!    before its callers (its result StructInfo is derived from its body).
//! 2. Expressions are lowered bottom-up: every nested call is emitted (bound
//!    to a fresh variable) before its parent is built, so StructInfo
//!    inference of the inner call fails at the inner call's span. A `let`
//!    binds its value to a variable of the user's name; inside
//!    `R::dataflow!` that is a `DataflowVar` unless `R::output` lists it.
//! 3. Scopes are a stack of [`Frame`]s mapping names to variables. When a
//!    dataflow block ends, its dataflow variables stay in the outer frame as
//!    *escaped* slots, so a later use gets a precise message.
//! 4. Errors never stop lowering. A statement that fails binds its name to
//!    a *poisoned* variable (StructInfo `Object`, never emitted); anything
//!    computed from a poisoned value fails silently, so one mistake is
//!    reported once. A function with errors is dropped from the module.

use super::errors::{at, describe_expr, from_syn, nearest, quoted, unsupported, Failed, Lowering};
use super::syntax::{literal_attr, FnDef};
use super::types::{dsl, dtype_named, Syms, TypeCx};
use super::FrontendError;
use crate::analysis::derive::is_impure_call;
use crate::analysis::struct_info_analysis::{struct_info_base_check, BaseCheckResult};
use crate::arith::Analyzer;
use crate::block_builder::BlockBuilder;
use crate::ir::{
    AttrValue, Attrs, Binding, DataType, Expr, GlobalVar, PrimExpr, StructInfo, Tensor, TirVar, Var,
};
use proc_macro2::{Span, TokenStream, TokenTree};
use relax_runtime::Error;
use std::collections::{HashMap, HashSet};
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;

/// A lowered signature.
pub(super) struct Sig {
    pub params: Vec<Var>,
    /// Parameters whose annotation failed (poisoned in the body).
    pub bad_params: HashSet<Var>,
    pub ret: Option<(StructInfo, Span)>,
    pub syms: Syms,
    pub failed_ret: bool,
}

/// What a name in a frame stands for.
#[derive(Clone)]
enum Slot {
    Var(Var),
    /// A dataflow variable of a block that has ended (the block's span).
    Escaped(Span),
}

#[derive(Default)]
struct Frame {
    vars: HashMap<String, Slot>,
}

/// Lowers the signature of `f`: parameter and return StructInfo. Symbolic
/// dims are introduced by the parameters and must stand alone somewhere
/// among them.
pub(super) fn signature(f: &FnDef, errors: &mut Vec<FrontendError>) -> Sig {
    let mut syms = Syms::new();
    let mut cx = TypeCx {
        syms: &mut syms,
        errors,
        introduce: true,
        introduced: vec![],
    };
    let mut params = Vec::new();
    let mut bad_params = HashSet::new();
    let mut seen: HashMap<String, Span> = HashMap::new();
    for (ident, ty) in &f.params {
        let name = ident.to_string();
        if let Some(first) = seen.get(&name) {
            let note = format!("the first `{name}` is{}", at(*first));
            cx.errors.push(
                FrontendError::new(ident.span(), format!("duplicate parameter `{name}`"))
                    .with_note(note),
            );
        } else {
            seen.insert(name.clone(), ident.span());
        }
        let v = match cx.struct_info(ty) {
            Ok(s) => Var::new(&name, Some(s)),
            Err(Failed) => {
                let v = Var::new(&name, Some(StructInfo::object()));
                bad_params.insert(v.clone());
                v
            }
        };
        params.push(v);
    }
    let definable: HashSet<TirVar> = params
        .iter()
        .filter_map(|p| p.struct_info())
        .flat_map(|s| s.definable_tir_vars())
        .collect();
    let introduced = std::mem::take(&mut cx.introduced);
    for (v, span) in introduced {
        if !definable.contains(&v) {
            cx.errors.push(FrontendError::new(
                span,
                format!(
                    "symbolic dim `{}` is not defined by the parameters: it must also stand alone as a dimension of some parameter, as in `({}, …)`",
                    v.name(),
                    v.name()
                ),
            ));
        }
    }
    cx.introduce = false;
    let mut failed_ret = false;
    let ret = match &f.ret {
        Some(ty) => match cx.struct_info(ty) {
            Ok(s) => Some((s, ty.span())),
            Err(Failed) => {
                failed_ret = true;
                None
            }
        },
        None => None,
    };
    Sig {
        params,
        bad_params,
        ret,
        syms,
        failed_ret,
    }
}

/// The function StructInfo callers see.
pub(super) fn callee_struct_info(sig: &Sig, pure: bool) -> StructInfo {
    StructInfo::func(
        sig.params
            .iter()
            .map(|p| p.struct_info().cloned().unwrap_or_else(StructInfo::object))
            .collect(),
        sig.ret
            .as_ref()
            .map_or_else(StructInfo::object, |(s, _)| s.clone()),
        pure,
    )
}

/// Every identifier token in `tokens` (to find the functions a body calls).
pub(super) fn idents_in(tokens: TokenStream, out: &mut HashSet<String>) {
    for t in tokens {
        match t {
            TokenTree::Ident(i) => {
                out.insert(i.to_string());
            }
            TokenTree::Group(g) => idents_in(g.stream(), out),
            _ => {}
        }
    }
}

/// The names `let` binds in `tokens`, in order (to reserve them so the
/// builder's fresh names do not take them).
fn let_names(tokens: TokenStream, out: &mut Vec<String>) {
    let mut after_let = false;
    for t in tokens {
        match t {
            TokenTree::Ident(i) => {
                let s = i.to_string();
                if after_let && s != "mut" {
                    out.push(s.clone());
                    after_let = false;
                } else {
                    after_let = s == "let";
                }
            }
            TokenTree::Group(g) => {
                after_let = false;
                let_names(g.stream(), out);
            }
            _ => after_let = false,
        }
    }
}

/// Lowers one function body into the open function of `bb`.
pub(super) struct FnCx<'a> {
    pub bb: &'a mut BlockBuilder,
    pub errors: &'a mut Vec<FrontendError>,
    pub globals: &'a HashMap<String, Expr>,
    pub syms: Syms,
    pub pure: bool,
    frames: Vec<Frame>,
    poisoned: HashSet<Var>,
    in_dataflow: bool,
    analyzer: Analyzer,
}

fn diagnostics(err: Error) -> Vec<(String, Vec<String>)> {
    match err {
        Error::Compile(ds) => ds.into_iter().map(|d| (d.message, d.notes)).collect(),
        other => vec![(other.to_string(), vec![])],
    }
}

/// `R::name` call paths: the segments after `R`, if `path` is one.
fn r_path(path: &syn::Path) -> Option<Vec<String>> {
    let segs: Vec<&syn::PathSegment> = path.segments.iter().collect();
    if path.leading_colon.is_some() || segs.len() < 2 || segs[0].ident != "R" {
        return None;
    }
    Some(segs[1..].iter().map(|s| s.ident.to_string()).collect())
}

/// Whether `e` is a call of `R::<name>`.
fn r_call<'e>(e: &'e syn::Expr, name: &str) -> Option<&'e syn::ExprCall> {
    let syn::Expr::Call(c) = e else { return None };
    let syn::Expr::Path(p) = &*c.func else {
        return None;
    };
    let segs = r_path(&p.path)?;
    (segs.len() == 1 && segs[0] == name).then_some(c)
}

/// A call's arguments split into positional ones and `key = value` ones.
struct Args<'e> {
    positional: Vec<&'e syn::Expr>,
    keywords: Vec<(&'e syn::Ident, &'e syn::Expr)>,
}

impl<'a> FnCx<'a> {
    /// A context for the body of a function with parameters `sig.params`.
    pub(super) fn new(
        bb: &'a mut BlockBuilder,
        errors: &'a mut Vec<FrontendError>,
        globals: &'a HashMap<String, Expr>,
        sig: &Sig,
        pure: bool,
    ) -> Self {
        let mut frame = Frame::default();
        let mut analyzer = Analyzer::new();
        for p in &sig.params {
            frame
                .vars
                .insert(p.name_hint().to_string(), Slot::Var(p.clone()));
            if let Some(s) = p.struct_info() {
                for v in s.tir_vars() {
                    analyzer.mark_non_negative(&v);
                }
            }
        }
        FnCx {
            bb,
            errors,
            globals,
            syms: sig.syms.clone(),
            pure,
            frames: vec![frame],
            poisoned: sig.bad_params.clone(),
            in_dataflow: false,
            analyzer,
        }
    }

    /// Reserves the names the body binds, so fresh names avoid them.
    pub(super) fn reserve_names(&mut self, block: &syn::Block) {
        let mut names = Vec::new();
        for s in &block.stmts {
            let_names(quote::ToTokens::to_token_stream(s), &mut names);
        }
        for n in names {
            if n != "_" {
                let _ = self.bb.unique_name(&n);
            }
        }
    }

    fn error(&mut self, e: FrontendError) -> Failed {
        self.errors.push(e);
        Failed
    }

    fn report(&mut self, err: Error, span: Span) -> Failed {
        for (message, notes) in diagnostics(err) {
            let mut e = FrontendError::new(span, message);
            e.notes = notes;
            self.errors.push(e);
        }
        Failed
    }

    fn types(&mut self, introduce: bool) -> TypeCx<'_> {
        TypeCx {
            syms: &mut self.syms,
            errors: self.errors,
            introduce,
            introduced: vec![],
        }
    }

    // ----- scopes -------------------------------------------------------

    fn lookup(&self, name: &str) -> Option<&Slot> {
        self.frames.iter().rev().find_map(|f| f.vars.get(name))
    }

    fn define(&mut self, name: &str, var: Var) {
        if name == "_" {
            return;
        }
        if let Some(f) = self.frames.last_mut() {
            f.vars.insert(name.to_string(), Slot::Var(var));
        }
    }

    /// Binds `name` to a poisoned variable: uses of it fail silently.
    fn poison(&mut self, name: &str, is_output: bool) {
        let v = self.new_var(name, StructInfo::object(), is_output);
        self.poisoned.insert(v.clone());
        self.define(name, v);
    }

    fn new_var(&self, name: &str, sinfo: StructInfo, is_output: bool) -> Var {
        if self.in_dataflow && !is_output {
            Var::new_dataflow(name, Some(sinfo))
        } else {
            Var::new(name, Some(sinfo))
        }
    }

    fn names_in_scope(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .frames
            .iter()
            .flat_map(|f| {
                f.vars
                    .iter()
                    .filter(|(_, s)| matches!(s, Slot::Var(_)))
                    .map(|(k, _)| k.clone())
            })
            .collect();
        names.extend(self.globals.keys().cloned());
        names.sort();
        names
    }

    // ----- blocks and statements ----------------------------------------

    /// The statements of `block` and its trailing expression (its value).
    pub(super) fn block_value(&mut self, block: &syn::Block) -> Lowering<Expr> {
        let (last, init): (Option<&syn::Expr>, &[syn::Stmt]) = match block.stmts.split_last() {
            Some((syn::Stmt::Expr(e, None), init)) => (Some(e), init),
            _ => (None, &block.stmts[..]),
        };
        for s in init {
            self.stmt(s);
        }
        match last {
            Some(e) => self.expr(e),
            None => Err(self.error(FrontendError::new(
                block.brace_token.span.close(),
                "expected a trailing expression (the block's value) before `}`, found none",
            ))),
        }
    }

    fn stmt(&mut self, s: &syn::Stmt) {
        match s {
            syn::Stmt::Local(l) => self.local(l, false),
            syn::Stmt::Macro(m) => {
                if r_path(&m.mac.path).is_some_and(|p| p == ["dataflow"]) {
                    self.dataflow(&m.mac);
                } else if r_path(&m.mac.path).is_some_and(|p| p == ["output"]) {
                    self.error(FrontendError::new(
                        m.mac.path.span(),
                        "`R::output` is a call, not a macro: write `R::output(a, b);` at the end of `R::dataflow!`",
                    ));
                } else {
                    self.error(unsupported(
                        m.span(),
                        "`let name = …;` or `R::dataflow! { … }`",
                        &format!("the macro {}", quoted(&m.mac.path)),
                    ));
                }
            }
            syn::Stmt::Expr(e, Some(_)) => self.effect(e),
            syn::Stmt::Expr(e, None) => {
                self.error(unsupported(
                    e.span(),
                    "`let name = …;` (an `if` is an expression: bind it with `let` or make it the block's last expression)",
                    &describe_expr(e),
                ));
            }
            syn::Stmt::Item(i) => {
                self.error(unsupported(
                    i.span(),
                    "a `let` binding",
                    &format!("the item {}", quoted(i)),
                ));
            }
        }
    }

    /// `call(…);` evaluated for its effect: bound to an unused variable.
    fn effect(&mut self, e: &syn::Expr) {
        if !matches!(e, syn::Expr::Call(_)) {
            self.error(unsupported(
                e.span(),
                "`let name = …;` or a call made for its effect",
                &describe_expr(e),
            ));
            return;
        }
        let Ok(value) = self.expr(e) else { return };
        let sinfo = value
            .struct_info()
            .cloned()
            .unwrap_or_else(StructInfo::object);
        let var = self.new_var("_", sinfo, false);
        if let Err(err) = self.bb.emit_normalized(Binding::var_binding(var, value)) {
            self.report(err, e.span());
        }
    }

    fn local(&mut self, l: &syn::Local, is_output: bool) {
        let (pat, ann) = match &l.pat {
            syn::Pat::Type(pt) => (&*pt.pat, Some(&*pt.ty)),
            other => (other, None),
        };
        let name = match pat {
            syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                if let Some(m) = &pi.mutability {
                    self.error(unsupported(
                        m.span(),
                        "`let name` (relax variables are immutable)",
                        "`mut`",
                    ));
                }
                pi.ident.to_string()
            }
            syn::Pat::Wild(_) => "_".to_string(),
            other => {
                self.error(unsupported(
                    other.span(),
                    "`let name = …` (bind a tuple and use `t.0`)",
                    &format!("the pattern {}", quoted(other)),
                ));
                let mut names = HashSet::new();
                idents_in(quote::ToTokens::to_token_stream(other), &mut names);
                for n in names {
                    self.poison(&n, is_output);
                }
                return;
            }
        };
        let Some(init) = &l.init else {
            self.error(FrontendError::new(
                l.span(),
                format!("expected `let {name} = value;`, found no value"),
            ));
            self.poison(&name, is_output);
            return;
        };
        if let Some((_, diverge)) = &init.diverge {
            self.error(unsupported(diverge.span(), "`let name = value;`", "`else`"));
        }
        let ann = ann.map(|ty| (self.types(false).struct_info(ty), ty.span()));
        if let Some(c) = r_call(&init.expr, "match_cast") {
            self.let_match_cast(&name, c, ann, is_output, l.span());
            return;
        }
        let Ok(value) = self.expr(&init.expr) else {
            self.poison(&name, is_output);
            return;
        };
        let derived = value
            .struct_info()
            .cloned()
            .unwrap_or_else(StructInfo::object);
        let sinfo = match ann {
            None => derived,
            Some((Err(Failed), _)) => {
                self.poison(&name, is_output);
                return;
            }
            Some((Ok(a), span)) => {
                self.check_annotation(&a, &derived, span, "annotation");
                a
            }
        };
        let var = self.new_var(&name, sinfo, is_output);
        match self
            .bb
            .emit_normalized(Binding::var_binding(var.clone(), value))
        {
            Ok(()) => self.define(&name, var),
            Err(err) => {
                self.report(err, l.span());
                self.poison(&name, is_output);
            }
        }
    }

    /// Reports an annotation that no value of the derived StructInfo can
    /// satisfy (`FailL0`); weaker mismatches are left to run-time checks.
    pub(super) fn check_annotation(
        &mut self,
        ann: &StructInfo,
        derived: &StructInfo,
        span: Span,
        what: &str,
    ) {
        if struct_info_base_check(ann, derived, &self.analyzer) == BaseCheckResult::FailL0 {
            self.error(FrontendError::new(
                span,
                format!(
                    "{what} `{}` does not match the inferred `{}`",
                    dsl(ann),
                    dsl(derived)
                ),
            ));
        }
    }

    /// `R::dataflow! { …; R::output(a, b); }`
    fn dataflow(&mut self, mac: &syn::Macro) {
        let block_span = mac.path.span();
        if self.in_dataflow {
            self.error(FrontendError::new(
                block_span,
                "`R::dataflow!` blocks do not nest: found one inside another",
            ));
            return;
        }
        let stmts = match (|input: ParseStream| syn::Block::parse_within(input))
            .parse2(mac.tokens.clone())
        {
            Ok(s) => s,
            Err(e) => {
                self.errors.extend(from_syn(e));
                return;
            }
        };
        // The outputs: `R::output(…)` ends the block.
        let mut outputs: Vec<&syn::Ident> = Vec::new();
        let mut out_pos = None;
        for (i, s) in stmts.iter().enumerate() {
            let syn::Stmt::Expr(e, _) = s else { continue };
            let Some(c) = r_call(e, "output") else {
                continue;
            };
            if out_pos.is_some() {
                self.error(FrontendError::new(
                    e.span(),
                    "expected one `R::output(…)` per `R::dataflow!` block, found a second one",
                ));
                continue;
            }
            out_pos = Some(i);
            if let Some(next) = stmts.get(i + 1) {
                self.error(FrontendError::new(
                    next.span(),
                    "expected the end of the `R::dataflow!` block after `R::output(…)`, found another statement",
                ));
            }
            for a in &c.args {
                match a {
                    syn::Expr::Path(p) if p.path.get_ident().is_some() => {
                        outputs.extend(p.path.get_ident());
                    }
                    other => {
                        self.error(FrontendError::new(
                            other.span(),
                            format!(
                                "expected a variable name in `R::output`, found {}",
                                describe_expr(other)
                            ),
                        ));
                    }
                }
            }
        }
        // Each output is the last binding of its name in the block.
        let mut last_def: HashMap<String, usize> = HashMap::new();
        for (i, s) in stmts.iter().enumerate() {
            if let syn::Stmt::Local(l) = s {
                let pat = match &l.pat {
                    syn::Pat::Type(pt) => &*pt.pat,
                    p => p,
                };
                if let syn::Pat::Ident(pi) = pat {
                    last_def.insert(pi.ident.to_string(), i);
                }
            }
        }
        let mut output_stmts: HashSet<usize> = HashSet::new();
        for o in outputs {
            match last_def.get(&o.to_string()) {
                Some(&i) => {
                    output_stmts.insert(i);
                }
                None => {
                    self.error(FrontendError::new(
                        o.span(),
                        format!(
                            "`{o}` is not bound in this `R::dataflow!` block: `R::output` lists the block's own bindings that are used after it"
                        ),
                    ));
                }
            }
        }
        if let Err(err) = self.bb.begin_dataflow() {
            self.report(err, block_span);
            return;
        }
        self.in_dataflow = true;
        self.frames.push(Frame::default());
        for (i, s) in stmts.iter().enumerate() {
            if Some(i) == out_pos {
                continue;
            }
            match s {
                syn::Stmt::Local(l) => self.local(l, output_stmts.contains(&i)),
                syn::Stmt::Expr(e @ syn::Expr::If(_), _) => {
                    self.error(FrontendError::new(
                        e.span(),
                        "`if` is not allowed inside `R::dataflow!`: end the block before it",
                    ));
                }
                other => self.stmt(other),
            }
        }
        self.in_dataflow = false;
        let frame = self.frames.pop().unwrap_or_default();
        if let Err(err) = self.bb.end_dataflow() {
            self.report(err, block_span);
        }
        let mut names: Vec<(String, Slot)> = frame.vars.into_iter().collect();
        names.sort_by(|a, b| a.0.cmp(&b.0));
        if let Some(outer) = self.frames.last_mut() {
            for (name, slot) in names {
                let slot = match slot {
                    Slot::Var(v) if v.is_dataflow() => Slot::Escaped(block_span),
                    other => other,
                };
                outer.vars.insert(name, slot);
            }
        }
    }

    // ----- expressions ----------------------------------------------------

    /// Lowers `e` to a normalized expression (a leaf, or a non-leaf over
    /// leaves) carrying its StructInfo.
    pub(super) fn expr(&mut self, e: &syn::Expr) -> Lowering<Expr> {
        use syn::Expr as E;
        match e {
            E::Paren(p) => self.expr(&p.expr),
            E::Group(g) => self.expr(&g.expr),
            E::Lit(l) => self.literal(&l.lit, false),
            E::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => match &*u.expr {
                E::Lit(l) => self.literal(&l.lit, true),
                other => Err(self.error(unsupported(
                    u.span(),
                    "a negative literal such as `-1.0` (use `R::negative(x)` for values)",
                    &describe_expr(other),
                ))),
            },
            E::Path(p) => match p.path.get_ident() {
                Some(ident) if p.qself.is_none() => self.name_value(ident),
                _ => Err(self.error(unsupported(
                    p.span(),
                    "a variable name",
                    &format!("the path {}", quoted(p)),
                ))),
            },
            E::Tuple(t) => {
                let mut fields = Vec::new();
                let mut failed = false;
                for f in &t.elems {
                    match self.leaf(f) {
                        Ok(v) => fields.push(v),
                        Err(Failed) => failed = true,
                    }
                }
                if failed {
                    return Err(Failed);
                }
                self.normalize(Expr::tuple(fields), e.span())
            }
            E::Field(f) => {
                let syn::Member::Unnamed(index) = &f.member else {
                    return Err(self.error(unsupported(
                        f.member.span(),
                        "a tuple field such as `t.0`",
                        &quoted(&f.member),
                    )));
                };
                let base = self.leaf(&f.base)?;
                self.normalize(Expr::tuple_get_item(base, index.index as usize), e.span())
            }
            E::Call(c) => self.call(c, e),
            E::If(i) => self.if_expr(i, e),
            E::Array(a) => {
                // `[n, 4]` as a value is a shape.
                let mut dims = Vec::new();
                let mut failed = false;
                for d in &a.elems {
                    match self.types(false).dim(d) {
                        Ok(v) => dims.push(v),
                        Err(Failed) => failed = true,
                    }
                }
                if failed {
                    return Err(Failed);
                }
                self.normalize(Expr::shape(dims), e.span())
            }
            E::Assign(a) => Err(self.error(unsupported(
                a.span(),
                "an expression (`key = value` is only allowed as a keyword argument of a call)",
                &describe_expr(e),
            ))),
            E::Macro(m) if r_path(&m.mac.path).is_some_and(|p| p == ["dataflow"]) => {
                Err(self.error(FrontendError::new(
                    m.span(),
                    "`R::dataflow!` is a statement, not a value: the value after it is the block's result",
                )))
            }
            other => Err(self.error(unsupported(
                other.span(),
                "a relax expression (a call, a variable, a literal, a tuple, `t.0` or `if`)",
                &describe_expr(other),
            ))),
        }
    }

    /// Lowers `e` to a leaf, binding it to a fresh variable if needed.
    fn leaf(&mut self, e: &syn::Expr) -> Lowering<Expr> {
        let v = self.expr(e)?;
        if v.is_leaf() {
            return Ok(v);
        }
        match self.bb.emit(v) {
            Ok(var) => Ok(Expr::var(&var)),
            Err(err) => Err(self.report(err, e.span())),
        }
    }

    fn normalize(&mut self, e: Expr, span: Span) -> Lowering<Expr> {
        match self.bb.normalize(e) {
            Ok(v) => Ok(v),
            Err(err) => Err(self.report(err, span)),
        }
    }

    fn name_value(&mut self, ident: &syn::Ident) -> Lowering<Expr> {
        let name = ident.to_string();
        match self.lookup(&name).cloned() {
            Some(Slot::Var(v)) => {
                if self.poisoned.contains(&v) {
                    return Err(Failed);
                }
                return Ok(Expr::var(&v));
            }
            Some(Slot::Escaped(block)) => {
                let block_at = match super::errors::line_col(block) {
                    Some((l, c)) => format!("the block at {l}:{c}"),
                    None => "an earlier `R::dataflow!` block".to_string(),
                };
                return Err(self.error(FrontendError::new(
                    ident.span(),
                    format!(
                        "`{name}` is a dataflow variable of {block_at}; list it in R::output to use it here"
                    ),
                )));
            }
            None => {}
        }
        if let Some(g) = self.globals.get(&name) {
            return Ok(g.clone());
        }
        if self.syms.lookup(&name).is_some() {
            return Err(self.error(FrontendError::new(
                ident.span(),
                format!(
                    "`{name}` is a symbolic dim, not a relax value: use `R::prim({name})` or `R::shape([{name}])`"
                ),
            )));
        }
        let names = self.names_in_scope();
        let mut message = format!("undefined variable `{name}`");
        if let Some(n) = nearest(&name, names.iter().map(String::as_str)) {
            message.push_str(&format!("; did you mean `{n}`?"));
        }
        Err(self.error(FrontendError::new(ident.span(), message)))
    }

    /// `1.0` (f32), `2` (i64), `1.0f64`, `2i32`, `true`: rank-0 constants.
    fn literal(&mut self, lit: &syn::Lit, negative: bool) -> Lowering<Expr> {
        let span = lit.span();
        let bad = |what: String| FrontendError::new(span, what);
        let tensor = match lit {
            syn::Lit::Int(i) => {
                let digits: Result<i128, _> = i.base10_digits().parse();
                let Ok(mut v) = digits else {
                    return Err(self.error(bad(format!("integer literal `{i}` is too large"))));
                };
                if negative {
                    v = -v;
                }
                int_constant(i.suffix(), v).map_err(|m| bad(m.to_string()))
            }
            syn::Lit::Float(f) => {
                let Ok(mut v) = f.base10_digits().parse::<f64>() else {
                    return Err(self.error(bad(format!("invalid float literal `{f}`"))));
                };
                if negative {
                    v = -v;
                }
                match f.suffix() {
                    "" | "f32" => Ok(Tensor::scalar(v as f32)),
                    "f64" => Ok(Tensor::scalar(v)),
                    s => Err(bad(format!(
                        "unsupported float suffix `{s}`: expected `f32` or `f64`"
                    ))),
                }
            }
            syn::Lit::Bool(b) if !negative => Ok(Tensor::scalar(b.value)),
            syn::Lit::Str(_) => Err(bad(
                "a string is only allowed as `R::call_packed`'s function name or as an attribute value"
                    .to_string(),
            )),
            other => Err(unsupported(
                other.span(),
                "a number or bool literal",
                &quoted(other),
            )),
        };
        match tensor {
            Ok(t) => self.normalize(Expr::constant(t), span),
            Err(e) => Err(self.error(e)),
        }
    }

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
                        if args.keywords.iter().any(|(k, _)| *k == key) {
                            self.error(FrontendError::new(
                                key.span(),
                                format!("keyword argument `{key}` given twice"),
                            ));
                            failed = true;
                        }
                        args.keywords.push((key, &asg.right));
                    }
                    other => {
                        self.error(unsupported(
                            other.span(),
                            "a keyword argument `name = value`",
                            &quoted(other),
                        ));
                        failed = true;
                    }
                },
                other => {
                    if let Some((k, _)) = args.keywords.last() {
                        self.error(FrontendError::new(
                            other.span(),
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

    fn call(&mut self, c: &syn::ExprCall, whole: &syn::Expr) -> Lowering<Expr> {
        let syn::Expr::Path(p) = &*c.func else {
            return Err(self.error(unsupported(
                c.func.span(),
                "a call of `R::op(…)` or of a module function",
                &describe_expr(&c.func),
            )));
        };
        for seg in &p.path.segments {
            if !seg.arguments.is_none() {
                return Err(self.error(unsupported(
                    seg.arguments.span(),
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
                    let (value, pattern) = self.match_cast_parts(&args, whole.span())?;
                    match self.bb.emit_match_cast(value, pattern) {
                        Ok(v) => Ok(Expr::var(&v)),
                        Err(err) => Err(self.report(err, whole.span())),
                    }
                }
                "call_tir" => self.call_tir(&args, whole),
                "call_packed" => self.call_packed(&args, whole),
                "shape" => self.shape_value(&args, whole),
                "prim" => self.prim_value(&args, whole),
                "output" => Err(self.error(FrontendError::new(
                    whole.span(),
                    "`R::output(…)` may only end an `R::dataflow!` block",
                ))),
                "dataflow" => Err(self.error(FrontendError::new(
                    whole.span(),
                    "`R::dataflow` is a macro statement: write `R::dataflow! { … }`",
                ))),
                _ => self.op_call(&segs, p, &args, whole),
            };
        }
        match p.path.get_ident() {
            Some(ident) if p.qself.is_none() => self.function_call(ident, &args, whole),
            _ => Err(self.error(unsupported(
                p.span(),
                "`R::op(…)` or a module function `name(…)`",
                &format!("a call of {}", quoted(p)),
            ))),
        }
    }

    fn check_purity(&mut self, value: &Expr, span: Span, what: &str) {
        let Some(call) = value.as_call() else { return };
        if !is_impure_call(call) {
            return;
        }
        if self.in_dataflow {
            self.error(FrontendError::new(
                span,
                format!(
                    "impure call {what} inside `R::dataflow!`: dataflow blocks hold pure computations only; move it after the block"
                ),
            ));
        } else if self.pure {
            self.error(FrontendError::new(
                span,
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
            self.error(FrontendError::new(p.span(), message));
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
                let span = args
                    .keywords
                    .iter()
                    .find(|(k, _)| d.message.contains(&format!("`{k}`")))
                    .map_or_else(|| whole.span(), |(k, _)| k.span());
                return Err(self.error(FrontendError::new(span, d.message)));
            }
        };
        let value = self.normalize(call, whole.span())?;
        self.check_purity(&value, whole.span(), &format!("`R::{}`", segs.join("::")));
        Ok(value)
    }

    fn call_attrs(&mut self, keywords: &[(&syn::Ident, &syn::Expr)]) -> Lowering<Attrs> {
        let mut attrs = Attrs::new();
        let mut failed = false;
        for (k, v) in keywords {
            match self.attr_value(v) {
                Ok(a) => attrs = attrs.with(&k.to_string(), a),
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
                Err(self.error(FrontendError::new(
                    ident.span(),
                    format!(
                        "`{name}` is neither a symbolic dim in scope nor a dtype: expected an attribute value such as `1`, `[1, 2]`, `true`, `\"s\"`, `None`, `f32` or a symbolic dim"
                    ),
                )))
            }
            syn::Expr::Binary(_) | syn::Expr::Paren(_) | syn::Expr::Unary(_) => {
                self.types(false).dim(e).map(AttrValue::PrimExpr)
            }
            other => Err(self.error(unsupported(
                other.span(),
                "an attribute value (a literal, a list, `None`, a dtype or a dimension)",
                &describe_expr(other),
            ))),
        }
    }

    fn no_keywords(&mut self, args: &Args, what: &str) -> Lowering<()> {
        match args.keywords.first() {
            Some((k, _)) => Err(self.error(FrontendError::new(
                k.span(),
                format!("unknown keyword argument `{k}`: {what} takes none"),
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
                    Err(self.error(FrontendError::new(ident.span(), message)))
                }
            },
        };
        self.no_keywords(args, &format!("`{name}`"))?;
        let values = self.leaves(&args.positional);
        let (callee, values) = (callee?, values?);
        let value = self.normalize(Expr::call(callee, values), whole.span())?;
        self.check_purity(&value, whole.span(), &format!("of `{name}`"));
        Ok(value)
    }

    /// `R::match_cast(value, pattern)`: the value as a leaf and the pattern,
    /// whose new symbolic dims come into scope.
    fn match_cast_parts(&mut self, args: &Args, span: Span) -> Lowering<(Expr, StructInfo)> {
        self.no_keywords(args, "`R::match_cast`")?;
        let [value, pattern] = args.positional[..] else {
            return Err(self.error(FrontendError::new(
                span,
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

    fn let_match_cast(
        &mut self,
        name: &str,
        c: &syn::ExprCall,
        ann: Option<(Lowering<StructInfo>, Span)>,
        is_output: bool,
        span: Span,
    ) {
        let parts = self
            .split_args(c)
            .and_then(|args| self.match_cast_parts(&args, c.span()));
        let Ok((value, pattern)) = parts else {
            self.poison(name, is_output);
            return;
        };
        match ann {
            Some((Err(Failed), _)) => {
                self.poison(name, is_output);
                return;
            }
            Some((Ok(a), ann_span)) => self.check_annotation(&a, &pattern, ann_span, "annotation"),
            None => {}
        }
        let var = self.new_var(name, pattern.clone(), is_output);
        match self
            .bb
            .emit_normalized(Binding::match_cast(var.clone(), value, pattern))
        {
            Ok(()) => self.define(name, var),
            Err(err) => {
                self.report(err, span);
                self.poison(name, is_output);
            }
        }
    }

    fn call_tir(&mut self, args: &Args, whole: &syn::Expr) -> Lowering<Expr> {
        let (span, f) = match args.positional.first() {
            Some(f) => (f.span(), quoted(*f)),
            None => (whole.span(), "`f`".to_string()),
        };
        Err(self.error(FrontendError::new(
            span,
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
            Some(other) => Err(self.error(FrontendError::new(
                other.span(),
                format!(
                    "expected the packed function's name as a string literal, found {}",
                    describe_expr(other)
                ),
            ))),
            None => Err(self.error(FrontendError::new(
                whole.span(),
                "`R::call_packed` takes the packed function's name first, as in `R::call_packed(\"name\", x, sinfo = …)`",
            ))),
        };
        let rest = args.positional.get(1..).unwrap_or(&[]);
        let values = self.leaves(rest);
        let mut sinfo_args = Vec::new();
        let mut failed = false;
        for (k, v) in &args.keywords {
            if *k == "sinfo" {
                match self.types(false).struct_info_expr(v) {
                    Ok(s) => sinfo_args.push(s),
                    Err(Failed) => failed = true,
                }
            } else {
                self.error(FrontendError::new(
                    k.span(),
                    format!("unknown keyword argument `{k}` of `R::call_packed`: expected `sinfo`"),
                ));
                failed = true;
            }
        }
        let (func, values) = (func?, values?);
        if failed {
            return Err(Failed);
        }
        let call = Expr::call_full(Expr::extern_func(func), values, Attrs::new(), sinfo_args);
        let value = self.normalize(call, whole.span())?;
        self.check_purity(&value, whole.span(), "`R::call_packed`");
        Ok(value)
    }

    /// `R::shape([n, m])`
    fn shape_value(&mut self, args: &Args, whole: &syn::Expr) -> Lowering<Expr> {
        self.no_keywords(args, "`R::shape`")?;
        let elems: Vec<&syn::Expr> = match args.positional[..] {
            [syn::Expr::Array(a)] => a.elems.iter().collect(),
            [syn::Expr::Tuple(t)] => t.elems.iter().collect(),
            _ => {
                return Err(self.error(FrontendError::new(
                    whole.span(),
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
        self.normalize(Expr::shape(dims), whole.span())
    }

    /// `R::prim(n)`, `R::prim(2)`, `R::prim(true)`, `R::prim(1.5)`
    fn prim_value(&mut self, args: &Args, whole: &syn::Expr) -> Lowering<Expr> {
        self.no_keywords(args, "`R::prim`")?;
        let [arg] = args.positional[..] else {
            return Err(self.error(FrontendError::new(
                whole.span(),
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
                        return Err(self.error(FrontendError::new(
                            f.span(),
                            format!("invalid float literal `{f}`"),
                        )))
                    }
                }
            }
            other => self.types(false).dim(other)?,
        };
        self.normalize(Expr::prim_value(value), whole.span())
    }

    /// `if c { …; a } else { …; b }` as a value.
    fn if_expr(&mut self, i: &syn::ExprIf, whole: &syn::Expr) -> Lowering<Expr> {
        if self.in_dataflow {
            return Err(self.error(FrontendError::new(
                i.if_token.span,
                "`if` is not allowed inside `R::dataflow!`: end the block before it",
            )));
        }
        let cond = self.leaf(&i.cond);
        let Some((_, else_expr)) = &i.else_branch else {
            let _ = self.branch(|cx| cx.block_value(&i.then_branch));
            return Err(self.error(FrontendError::new(
                i.then_branch.brace_token.span.close(),
                "expected an `else` branch: an `if` is a value, so both branches are needed",
            )));
        };
        let t = self.branch(|cx| cx.block_value(&i.then_branch));
        let f = self.branch(|cx| match &**else_expr {
            syn::Expr::Block(b) => cx.block_value(&b.block),
            other => cx.expr(other),
        });
        let (cond, t, f) = (cond?, t?, f?);
        self.normalize(Expr::if_(cond, t, f), whole.span())
    }

    /// Lowers one `if` branch in a scope of its own; returns its `SeqExpr`.
    fn branch(&mut self, body: impl FnOnce(&mut Self) -> Lowering<Expr>) -> Lowering<Expr> {
        if let Err(err) = self.bb.begin_inner_scope() {
            return Err(self.report(err, Span::call_site()));
        }
        self.frames.push(Frame::default());
        self.syms.push();
        let out = body(self);
        self.syms.pop();
        self.frames.pop();
        let output = match &out {
            Ok(e) => e.clone(),
            Err(Failed) => Expr::tuple(vec![]),
        };
        let seq = self.bb.end_inner_scope(output);
        let value = out?;
        match seq {
            Ok(s) => Ok(s),
            Err(err) => {
                let _ = value;
                Err(self.report(err, Span::call_site()))
            }
        }
    }
}

/// A rank-0 integer (or float, for `2f32`) constant of the literal's suffix.
fn int_constant(suffix: &str, v: i128) -> Result<Tensor, String> {
    fn fit<T: TryFrom<i128> + relax_runtime::tensor::Element>(
        v: i128,
        s: &str,
    ) -> Result<Tensor, String> {
        T::try_from(v)
            .map(Tensor::scalar)
            .map_err(|_| format!("integer literal {v} does not fit in {s}"))
    }
    match suffix {
        "" | "i64" => fit::<i64>(v, "i64"),
        "i32" => fit::<i32>(v, "i32"),
        "i16" => fit::<i16>(v, "i16"),
        "i8" => fit::<i8>(v, "i8"),
        "u8" => fit::<u8>(v, "u8"),
        "u16" => fit::<u16>(v, "u16"),
        "u32" => fit::<u32>(v, "u32"),
        "u64" => fit::<u64>(v, "u64"),
        "f32" => Ok(Tensor::scalar(v as f32)),
        "f64" => Ok(Tensor::scalar(v as f64)),
        s => Err(format!(
            "unsupported integer suffix `{s}`: expected one of i8, i16, i32, i64, u8, u16, u32, u64, f32, f64"
        )),
    }
}

/// The `GlobalVar` expression of a module function, carrying its StructInfo.
pub(super) fn global_expr(name: &str, sinfo: StructInfo) -> Expr {
    Expr::global_var(GlobalVar::new(name)).with_struct_info(sinfo)
}
