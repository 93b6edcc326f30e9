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

mod calls;
mod expr;

use super::errors::{
    at, describe_expr, from_syn, quoted, unsupported, unsupported_at, Failed, Lowering,
};
use super::syntax::FnDef;
use super::types::{dsl, Syms, TypeCx};
use super::{FrontendError, SpanRange};
use crate::analysis::struct_info_analysis::{struct_info_base_check, BaseCheckResult};
use crate::arith::Analyzer;
use crate::block_builder::BlockBuilder;
use crate::ir::{Binding, Expr, GlobalVar, StructInfo, TirVar, Var};
use proc_macro2::{Span, TokenStream, TokenTree};
use relax_runtime::Error;
use std::collections::{HashMap, HashSet};
use syn::parse::{ParseStream, Parser};

/// A lowered signature.
pub(super) struct Sig {
    pub params: Vec<Var>,
    /// Parameters whose annotation failed (poisoned in the body).
    pub bad_params: HashSet<Var>,
    /// The return annotation's StructInfo and tokens.
    pub ret: Option<(StructInfo, SpanRange)>,
    pub syms: Syms,
    pub failed_ret: bool,
}

/// What a name in a frame stands for.
#[derive(Clone)]
enum Slot {
    Var(Var),
    /// A dataflow variable of a block that has ended (the span of the
    /// block's `R::dataflow!`).
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
                FrontendError::spanned(ident, format!("duplicate parameter `{name}`"))
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
            Ok(s) => Some((s, SpanRange::of(ty))),
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
    // `R::r#where`: an op named by a Rust keyword is written raw.
    Some(
        segs[1..]
            .iter()
            .map(|s| syn::ext::IdentExt::unraw(&s.ident).to_string())
            .collect(),
    )
}

/// The tokens that name a macro invocation: `R::dataflow!` without its body.
fn macro_head(mac: &syn::Macro) -> SpanRange {
    SpanRange::of(&mac.path).to(SpanRange::from(mac.bang_token.span))
}

/// The tokens that make an `if` one: `if cond`, without the branches.
fn if_head(i: &syn::ExprIf) -> SpanRange {
    SpanRange::from(i.if_token.span).to(SpanRange::of(&*i.cond))
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

    /// Records the builder's error `err` on the tokens of the culprit.
    fn report(&mut self, err: Error, range: SpanRange) -> Failed {
        for (message, notes) in diagnostics(err) {
            let mut e = FrontendError::new(range, message);
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

    /// The body of the function: its value as a leaf, so closing the
    /// function cannot fail on it.
    pub(super) fn function_result(&mut self, block: &syn::Block) -> Lowering<Expr> {
        let value = self.block_value(block)?;
        let range = block
            .stmts
            .last()
            .map_or_else(|| SpanRange::of(block), SpanRange::of);
        self.bind_leaf(value, range)
    }

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
                        macro_head(&m.mac),
                        "`R::output` is a call, not a macro: write `R::output(a, b);` at the end of `R::dataflow!`",
                    ));
                } else {
                    self.error(unsupported(
                        m,
                        "`let name = …;` or `R::dataflow! { … }`",
                        &format!("the macro {}", quoted(&m.mac.path)),
                    ));
                }
            }
            syn::Stmt::Expr(e, Some(_)) => self.effect(e),
            syn::Stmt::Expr(e, None) => {
                self.error(unsupported(
                    e,
                    "`let name = …;` (an `if` is an expression: bind it with `let` or make it the block's last expression)",
                    &describe_expr(e),
                ));
            }
            syn::Stmt::Item(i) => {
                self.error(unsupported(
                    i,
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
                e,
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
            self.report(err, SpanRange::of(e));
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
                        m,
                        "`let name` (relax variables are immutable)",
                        "`mut`",
                    ));
                }
                pi.ident.to_string()
            }
            syn::Pat::Wild(_) => "_".to_string(),
            other => {
                self.error(unsupported(
                    other,
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
            self.error(FrontendError::spanned(
                l,
                format!("expected `let {name} = value;`, found no value"),
            ));
            self.poison(&name, is_output);
            return;
        };
        if let Some((else_token, diverge)) = &init.diverge {
            let range = SpanRange::from(else_token.span).to(SpanRange::of(diverge));
            self.error(unsupported_at(range, "`let name = value;`", "`else`"));
        }
        let ann = ann.map(|ty| (self.types(false).struct_info(ty), SpanRange::of(ty)));
        if let Some(c) = r_call(&init.expr, "match_cast") {
            self.let_match_cast(&name, c, ann, is_output, SpanRange::of(l));
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
            Some((Ok(a), range)) => {
                self.check_annotation(&a, &derived, range, "annotation");
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
                self.report(err, SpanRange::of(l));
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
        range: SpanRange,
        what: &str,
    ) {
        if struct_info_base_check(ann, derived, &self.analyzer) == BaseCheckResult::FailL0 {
            self.error(FrontendError::new(
                range,
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
        let head = macro_head(mac);
        if self.in_dataflow {
            self.error(FrontendError::new(
                head,
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
                self.error(FrontendError::spanned(
                    e,
                    "expected one `R::output(…)` per `R::dataflow!` block, found a second one",
                ));
                continue;
            }
            out_pos = Some(i);
            if let Some(next) = stmts.get(i + 1) {
                self.error(FrontendError::spanned(
                    next,
                    "expected the end of the `R::dataflow!` block after `R::output(…)`, found another statement",
                ));
            }
            for a in &c.args {
                match a {
                    syn::Expr::Path(p) if p.path.get_ident().is_some() => {
                        outputs.extend(p.path.get_ident());
                    }
                    other => {
                        self.error(FrontendError::spanned(
                            other,
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
                    self.error(FrontendError::spanned(
                        o,
                        format!(
                            "`{o}` is not bound in this `R::dataflow!` block: `R::output` lists the block's own bindings that are used after it"
                        ),
                    ));
                }
            }
        }
        if let Err(err) = self.bb.begin_dataflow() {
            self.report(err, head);
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
                syn::Stmt::Expr(syn::Expr::If(i), _) => {
                    self.error(FrontendError::new(
                        if_head(i),
                        "`if` is not allowed inside `R::dataflow!`: end the block before it",
                    ));
                }
                other => self.stmt(other),
            }
        }
        self.in_dataflow = false;
        let frame = self.frames.pop().unwrap_or_default();
        if let Err(err) = self.bb.end_dataflow() {
            self.report(err, head);
        }
        let mut names: Vec<(String, Slot)> = frame.vars.into_iter().collect();
        names.sort_by(|a, b| a.0.cmp(&b.0));
        if let Some(outer) = self.frames.last_mut() {
            for (name, slot) in names {
                let slot = match slot {
                    Slot::Var(v) if v.is_dataflow() => Slot::Escaped(head.start),
                    other => other,
                };
                outer.vars.insert(name, slot);
            }
        }
    }
}

/// The `GlobalVar` expression of a module function, carrying its StructInfo.
pub(super) fn global_expr(name: &str, sinfo: StructInfo) -> Expr {
    Expr::global_var(GlobalVar::new(name)).with_struct_info(sinfo)
}
