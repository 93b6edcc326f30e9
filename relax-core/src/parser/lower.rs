//! Lowering: the syntax tree to the IR.
//!
//! The module is lowered in three passes so that order in the text does not
//! matter where TVMScript says it does not:
//!
//! 1. the `metadata` dict (it is printed after the class that uses it),
//! 2. every function's signature, so `cls.f` works before `f` is defined and
//!    every `GlobalVar` expression carries its function's StructInfo,
//! 3. the bodies, in text order.
//!
//! Scoping: a stack of [`Frame`]s. A function frame holds the function's
//! parameters and its symbolic variables (their scope is the whole
//! function, including nested functions, which capture them); dataflow
//! blocks and `if` branches push plain frames for the names they bind.
//!
//! Every expression is given its StructInfo as it is built (leaves have it,
//! the rest come from [`derive_struct_info`]); a binding's variable takes
//! its annotation when written and the derived StructInfo otherwise.
//! Errors are collected: a failed binding still defines its name (as
//! `R.Object`, or its annotation) so one mistake does not cascade.

use super::syntax::{self, ExprKind as SK, FuncDef, Ident, Stmt, StmtKind};
use crate::analysis::derive::{derive_struct_info, seq_expr_struct_info, DeriveContext};
use crate::analysis::struct_info_analysis::{
    erase_to_well_defined, struct_info_base_check, BaseCheckResult,
};
use crate::arith::Analyzer;
use crate::ir::function::attr;
use crate::ir::{
    AttrValue, Attrs, BaseFunc, Binding, BindingBlock, Expr, Function, GlobalVar, IRModule,
    PrimExpr, PrimFunc, StructInfo, TirVar, Var,
};
use relax_runtime::{DataType, Diagnostic, Span};
use std::collections::{HashMap, HashSet};

/// One lexical scope.
#[derive(Default)]
pub(super) struct Frame {
    /// Relax variables bound here, by name (the latest binding wins).
    pub vars: HashMap<String, Var>,
    /// Symbolic variables declared here (function frames only).
    pub sym: HashMap<String, TirVar>,
    /// Whether this frame is a function's (symbolic variables live here).
    pub is_function: bool,
}

/// What the module knows about a global function before its body is lowered.
struct GlobalInfo {
    gv: GlobalVar,
    struct_info: StructInfo,
}

/// A lowered Relax signature, kept until its body is lowered.
pub(super) struct RelaxSig {
    params: Vec<Var>,
    ret: Option<(StructInfo, Span)>,
    is_pure: bool,
    private: bool,
    frame: Frame,
}

/// The lowering state. See the module docs.
pub(super) struct Lowerer<'s> {
    /// The source text (to map spans of strings parsed a second time).
    pub src: &'s str,
    /// Every error so far.
    pub errors: Vec<Diagnostic>,
    /// The scope stack, innermost last.
    pub frames: Vec<Frame>,
    /// Facts about symbolic variables (shape dims are non-negative).
    pub analyzer: Analyzer,
    class_name: Option<String>,
    globals: HashMap<String, GlobalInfo>,
    /// The declared signatures as a module, for derivation's `ctx.module`.
    sig_module: IRModule,
    /// `metadata["relax.expr.Constant"]`, in order.
    pub(super) constants: Option<Vec<Option<Expr>>>,
    /// Dataflow variables whose block has ended, by name, for a precise
    /// message when one is used later.
    escaped: HashSet<String>,
    /// Whether an unknown symbolic variable name anywhere declares it
    /// (for [`super::parse_struct_info`], which has no signature).
    pub(super) declare_all_syms: bool,
    /// Symbolic variables *defined* so far on the path to the current
    /// point (by parameters and `match_cast`s), innermost last; scopes
    /// truncate it when they end. Declared-but-undefined variables (a
    /// `T.int64()` line) are not here.
    defined: Vec<TirVar>,
    /// Symbolic variables declared for the whole text with
    /// `n = TypeVar("n")` before the class (as TVM 0.27 prints them). Each
    /// function that names one gets a variable of its own, as if it had
    /// declared it with `n = T.int64()`.
    type_vars: HashSet<String>,
}

/// Result of lowering something whose errors were already recorded.
pub(super) type Lowered<T> = Option<T>;

impl<'s> Lowerer<'s> {
    pub(super) fn new(src: &'s str) -> Self {
        Lowerer {
            src,
            errors: Vec::new(),
            frames: Vec::new(),
            analyzer: Analyzer::new(),
            class_name: None,
            globals: HashMap::new(),
            sig_module: IRModule::new(),
            constants: None,
            escaped: HashSet::new(),
            defined: Vec::new(),
            declare_all_syms: false,
            type_vars: HashSet::new(),
        }
    }

    /// Records an error.
    pub(super) fn error(&mut self, code: &'static str, span: Span, message: impl Into<String>) {
        self.errors
            .push(Diagnostic::new(code, message).with_span(span));
    }

    /// Lowers every item with `f`, reporting the errors of all of them;
    /// `None` when any failed.
    pub(super) fn lower_all<'e, T>(
        &mut self,
        items: impl IntoIterator<Item = &'e syntax::Expr>,
        mut f: impl FnMut(&mut Self, &'e syntax::Expr) -> Lowered<T>,
    ) -> Lowered<Vec<T>> {
        let mut out = Vec::new();
        let mut ok = true;
        for it in items {
            match f(self, it) {
                Some(v) => out.push(v),
                None => ok = false,
            }
        }
        ok.then_some(out)
    }

    /// A dtype written as a string (`"float32"`).
    pub(super) fn dtype_string(&mut self, e: &syntax::Expr) -> Lowered<DataType> {
        let SK::Str(s) = &e.kind else {
            self.error(
                "invalid-dtype",
                e.span,
                format!(
                    "expected a dtype string such as \"float32\", found {}",
                    e.describe()
                ),
            );
            return None;
        };
        s.parse::<DataType>()
            .map_err(|err| self.error("invalid-dtype", e.span, err.to_string()))
            .ok()
    }

    // ----- scopes -----------------------------------------------------------

    pub(super) fn lookup_var(&self, name: &str) -> Option<Var> {
        self.frames
            .iter()
            .rev()
            .find_map(|f| f.vars.get(name).cloned())
    }

    /// The symbolic variable `name` in scope; a module-level `TypeVar` the
    /// current function has not named yet is declared in it on first use.
    pub(super) fn lookup_sym(&mut self, name: &str) -> Option<TirVar> {
        let found = self
            .frames
            .iter()
            .rev()
            .find_map(|f| f.sym.get(name).cloned());
        match found {
            None if self.type_vars.contains(name) => {
                Some(self.declare_sym(name, DataType::int(64)))
            }
            found => found,
        }
    }

    /// Whether the innermost function declares the symbolic variable `name`
    /// (in its signature or body so far).
    pub(super) fn declared_in_function(&self, name: &str) -> bool {
        self.frames
            .iter()
            .rev()
            .find(|f| f.is_function)
            .is_some_and(|f| f.sym.contains_key(name))
    }

    /// Declares a symbolic variable in the innermost function frame.
    pub(super) fn declare_sym(&mut self, name: &str, dtype: relax_runtime::DataType) -> TirVar {
        let v = TirVar::with_dtype(name, dtype);
        match self.frames.iter_mut().rev().find(|f| f.is_function) {
            Some(f) => {
                f.sym.insert(name.to_string(), v.clone());
            }
            None => {
                let mut f = Frame {
                    is_function: true,
                    ..Frame::default()
                };
                f.sym.insert(name.to_string(), v.clone());
                self.frames.push(f);
            }
        }
        v
    }

    fn define(&mut self, var: &Var) {
        if let Some(f) = self.frames.last_mut() {
            f.vars.insert(var.name_hint().to_string(), var.clone());
        }
    }

    /// Records that the symbolic variables `s` can define are defined.
    fn define_syms(&mut self, s: &StructInfo) {
        for v in s.definable_tir_vars() {
            if !self.defined.contains(&v) {
                self.defined.push(v);
            }
        }
    }

    /// A `SeqExpr` and its StructInfo: the body's, erased of what the
    /// sequence binds. `outside` is how many of `self.defined` were defined
    /// before the sequence began.
    fn seq(&mut self, blocks: Vec<BindingBlock>, body: Expr, outside: usize) -> Expr {
        let seq = Expr::seq(blocks, body);
        let Some(s) = seq.as_seq() else { return seq };
        let body_sinfo = s
            .body
            .struct_info()
            .cloned()
            .unwrap_or_else(StructInfo::object);
        let defined: HashSet<&TirVar> = self.defined.iter().take(outside).collect();
        let sinfo = seq_expr_struct_info(s, &body_sinfo, &|v| defined.contains(v), &self.analyzer);
        seq.with_struct_info(sinfo)
    }

    // ----- StructInfo plumbing ---------------------------------------------

    /// `expr` with the StructInfo derivation gives it; an error becomes a
    /// diagnostic at `span` and the StructInfo `R.Object`.
    pub(super) fn derive(&mut self, expr: Expr, span: Span) -> Expr {
        let result = {
            let ctx = DeriveContext {
                module: Some(&self.sig_module),
                analyzer: self.analyzer.clone(),
            };
            derive_struct_info(&expr, &ctx)
        };
        match result {
            Ok(s) => expr.with_struct_info(s),
            Err(mut d) => {
                d.span = Some(span);
                self.errors.push(d);
                expr.with_struct_info(StructInfo::object())
            }
        }
    }

    /// Reports an annotation that no value of the derived StructInfo can
    /// satisfy (`FailL0`); weaker mismatches are run-time checks.
    fn check_annotation(&mut self, ann: &StructInfo, derived: &StructInfo, span: Span) {
        if struct_info_base_check(ann, derived, &self.analyzer) == BaseCheckResult::FailL0 {
            self.error(
                "struct-info-mismatch",
                span,
                format!("annotation {ann} is incompatible with the value's {derived}"),
            );
        }
    }

    /// Marks the symbolic variables used as tensor or shape dimensions of
    /// `s` non-negative: they are sizes.
    fn mark_dims(&mut self, s: &StructInfo) {
        use crate::ir::StructInfoKind as K;
        let mut dims: Vec<PrimExpr> = Vec::new();
        fn walk(s: &StructInfo, dims: &mut Vec<PrimExpr>) {
            match s.kind() {
                K::Tensor(t) => dims.extend(t.shape_values().into_iter().flatten().cloned()),
                K::Shape(sh) => dims.extend(sh.values.iter().flatten().cloned()),
                K::Tuple(fields) => fields.iter().for_each(|f| walk(f, dims)),
                _ => {}
            }
        }
        walk(s, &mut dims);
        for d in dims {
            if let Some(v) = d.as_var() {
                self.analyzer.mark_non_negative(v);
            }
        }
    }

    // ----- module -----------------------------------------------------------

    /// Lowers a whole file to a module.
    pub(super) fn module(&mut self, stmts: &[Stmt]) -> Lowered<IRModule> {
        let mut class: Option<&syntax::ClassDef> = None;
        for s in stmts {
            match &s.kind {
                StmtKind::Import | StmtKind::Pass => {}
                StmtKind::Expr(e) if matches!(e.kind, SK::Str(_)) => {}
                StmtKind::ClassDef(c) => {
                    if !c.decorators.iter().any(is_ir_module_decorator) {
                        self.error(
                            "syntax-error",
                            c.name.span,
                            format!(
                                "expected `@I.ir_module` before `class {}`, found {}",
                                c.name.name,
                                c.decorators
                                    .first()
                                    .map_or("no decorator".to_string(), |d| d.describe())
                            ),
                        );
                    }
                    if class.is_some() {
                        self.error(
                            "syntax-error",
                            c.name.span,
                            format!(
                                "expected one `@I.ir_module` class per text, found a second one, `{}`",
                                c.name.name
                            ),
                        );
                        continue;
                    }
                    class = Some(c);
                }
                StmtKind::Assign { targets, value, .. }
                    if targets.len() == 1 && targets[0].name == "metadata" =>
                {
                    self.metadata(value);
                }
                StmtKind::Assign { targets, value, .. }
                    if targets.len() == 1 && is_type_var(value, &targets[0].name) =>
                {
                    self.type_vars.insert(targets[0].name.clone());
                }
                _ => self.error(
                    "syntax-error",
                    s.span,
                    "expected an `@I.ir_module` class, `metadata = {…}` or `n = TypeVar(\"n\")`, found another statement",
                ),
            }
        }
        let Some(class) = class else {
            let end = self.src.len();
            self.error(
                "syntax-error",
                Span::new(end, end),
                "expected an `@I.ir_module` class, found none",
            );
            return None;
        };
        self.class_name = Some(class.name.name.clone());

        // Pass 2: the signatures.
        enum Pending<'a> {
            Relax(&'a FuncDef, Option<RelaxSig>),
            Prim(Option<PrimFunc>),
            Extern(String),
        }
        let mut pending: Vec<(String, Pending)> = Vec::new();
        let mut first_def: HashMap<String, Span> = HashMap::new();
        let mut module_attrs = Vec::new();
        for s in &class.body {
            if let Some(pairs) = self.func_attr_stmt(s, "I.module_attrs") {
                module_attrs.extend(pairs);
                continue;
            }
            let f = match &s.kind {
                StmtKind::FuncDef(f) => f,
                StmtKind::Pass | StmtKind::Import => continue,
                StmtKind::Expr(e) if matches!(e.kind, SK::Str(_)) => continue,
                // `f = R.ExternFunc("symbol")`: an external function.
                StmtKind::Assign { targets, value, .. }
                    if targets.len() == 1
                        && matches!(value.as_call(), Some((p, _, _)) if p == "R.ExternFunc") =>
                {
                    let name = &targets[0];
                    let symbol = match value.as_call() {
                        Some((_, [arg], [])) => match &arg.kind {
                            SK::Str(s) => Some(s.clone()),
                            _ => None,
                        },
                        _ => None,
                    };
                    let Some(symbol) = symbol else {
                        self.error(
                            "syntax-error",
                            value.span,
                            "expected `R.ExternFunc(\"symbol\")` with one string",
                        );
                        continue;
                    };
                    if first_def.insert(name.name.clone(), name.span).is_some() {
                        self.error(
                            "duplicate-function",
                            name.span,
                            format!("duplicate function `{}` in the module", name.name),
                        );
                        continue;
                    }
                    pending.push((name.name.clone(), Pending::Extern(symbol)));
                    continue;
                }
                _ => {
                    self.error(
                        "syntax-error",
                        s.span,
                        "expected a `@R.function` or `@T.prim_func` definition, or `f = R.ExternFunc(\"f\")`, in the module class, found another statement",
                    );
                    continue;
                }
            };
            if let Some(first) = first_def.get(&f.name.name) {
                let (line, col) = first.line_col(self.src);
                self.errors.push(
                    Diagnostic::new(
                        "duplicate-function",
                        format!("duplicate function `{}` in the module", f.name.name),
                    )
                    .with_span(f.name.span)
                    .with_note(format!("first defined at {line}:{col}")),
                );
                continue;
            }
            first_def.insert(f.name.name.clone(), f.name.span);
            match function_kind(f) {
                Some(FuncKind::Relax) => {
                    let sig = self.relax_signature(f);
                    pending.push((f.name.name.clone(), Pending::Relax(f, sig)));
                }
                Some(FuncKind::Prim) => {
                    let pf = self.prim_func(f);
                    pending.push((f.name.name.clone(), Pending::Prim(pf)));
                }
                None => {
                    let found = f
                        .decorators
                        .first()
                        .map_or("no decorator".to_string(), |d| d.describe());
                    self.error(
                        "syntax-error",
                        f.name.span,
                        format!(
                            "expected `@R.function` or `@T.prim_func` on `def {}`, found {found}",
                            f.name.name
                        ),
                    );
                }
            }
        }
        // Declare every function before lowering any body.
        for (name, p) in &pending {
            let gv = GlobalVar::new(name);
            let (sinfo, base): (StructInfo, Option<BaseFunc>) = match p {
                Pending::Relax(_, Some(sig)) => {
                    let f = placeholder_function(sig);
                    (f.struct_info(), Some(f.into()))
                }
                Pending::Prim(Some(pf)) => (pf.struct_info(), Some(pf.clone().into())),
                Pending::Extern(symbol) => {
                    let f = BaseFunc::Extern(symbol.clone());
                    (f.struct_info(), Some(f))
                }
                _ => (StructInfo::object(), None),
            };
            if let Some(b) = base {
                self.sig_module.add(gv.clone(), b);
            }
            self.globals.insert(
                name.clone(),
                GlobalInfo {
                    gv,
                    struct_info: sinfo,
                },
            );
        }

        // Pass 3: the bodies, callees first, so that a call of a function
        // whose result is derived (no return annotation) sees that result.
        let mut funcs: Vec<(GlobalVar, BaseFunc)> = Vec::new();
        let names: Vec<&str> = pending.iter().map(|(n, _)| n.as_str()).collect();
        let refs: Vec<HashSet<String>> = pending
            .iter()
            .map(|(_, p)| match p {
                Pending::Relax(def, _) => {
                    let mut r = HashSet::new();
                    stmt_refs(&def.body, class.name.name.as_str(), &mut r);
                    r
                }
                Pending::Prim(_) | Pending::Extern(_) => HashSet::new(),
            })
            .collect();
        let order = callees_first(&names, &refs);
        let mut slots: Vec<Option<(String, Pending)>> = pending.into_iter().map(Some).collect();
        let pending: Vec<(String, Pending)> = order
            .into_iter()
            .filter_map(|i| slots.get_mut(i)?.take())
            .collect();
        for (name, p) in pending {
            let gv = GlobalVar::new(&name);
            match p {
                Pending::Prim(Some(pf)) => funcs.push((gv, pf.into())),
                Pending::Extern(symbol) => funcs.push((gv, BaseFunc::Extern(symbol))),
                Pending::Relax(def, Some(sig)) => {
                    self.escaped.clear();
                    self.analyzer = Analyzer::new();
                    if let Some(f) = self.relax_body(def, sig, None, true) {
                        if let Some(g) = self.globals.get_mut(&name) {
                            g.struct_info = f.struct_info();
                        }
                        self.sig_module.add(gv.clone(), f.clone());
                        funcs.push((gv, f.into()));
                    }
                }
                _ => {}
            }
        }
        if self.errors.is_empty() {
            Some(IRModule::from_functions(funcs).with_attrs(Attrs::from_pairs(module_attrs)))
        } else {
            None
        }
    }

    /// `metadata = {"relax.expr.Constant": [R.const(…), …]}`
    fn metadata(&mut self, value: &syntax::Expr) {
        let SK::Dict(items) = &value.kind else {
            self.error(
                "syntax-error",
                value.span,
                format!(
                    "expected a dict `{{\"relax.expr.Constant\": [...]}}` as metadata, found {}",
                    value.describe()
                ),
            );
            return;
        };
        let mut consts = Vec::new();
        for (k, v) in items {
            match &k.kind {
                SK::Str(key) if key == "relax.expr.Constant" => {}
                _ => {
                    self.error(
                        "unsupported-syntax",
                        k.span,
                        format!(
                            "expected the metadata key \"relax.expr.Constant\", found {}",
                            k.describe()
                        ),
                    );
                    continue;
                }
            }
            let (SK::List(list) | SK::Tuple(list)) = &v.kind else {
                self.error(
                    "syntax-error",
                    v.span,
                    format!("expected a list of `R.const(…)`, found {}", v.describe()),
                );
                continue;
            };
            for c in list {
                match c.as_call() {
                    Some((path, args, kwargs)) if path == "R.const" => {
                        consts.push(self.constant(args, kwargs, c.span));
                    }
                    _ => {
                        self.error(
                            "syntax-error",
                            c.span,
                            format!("expected `R.const(…)`, found {}", c.describe()),
                        );
                        consts.push(None);
                    }
                }
            }
        }
        self.constants = Some(consts);
    }

    /// `metadata["relax.expr.Constant"][i]`, if `e` is that form.
    fn metadata_ref(&mut self, e: &syntax::Expr) -> Option<Lowered<Expr>> {
        let SK::Subscript(inner, index) = &e.kind else {
            return None;
        };
        let SK::Subscript(base, key) = &inner.kind else {
            return None;
        };
        if base.as_name() != Some("metadata") {
            return None;
        }
        if !matches!(&key.kind, SK::Str(k) if k == "relax.expr.Constant") {
            self.error(
                "unsupported-syntax",
                key.span,
                format!(
                    "expected the metadata key \"relax.expr.Constant\", found {}",
                    key.describe()
                ),
            );
            return Some(None);
        }
        let SK::Int(i) = index.kind else {
            self.error(
                "syntax-error",
                index.span,
                format!(
                    "expected an integer metadata index, found {}",
                    index.describe()
                ),
            );
            return Some(None);
        };
        let Some(consts) = &self.constants else {
            self.error(
                "undefined-metadata",
                base.span,
                "expected a `metadata = {…}` dict in the text, found none",
            );
            return Some(None);
        };
        let n = consts.len();
        match usize::try_from(i).ok().and_then(|i| consts.get(i)) {
            Some(Some(c)) => Some(Some(c.clone())),
            // The constant itself failed; its error is already reported.
            Some(None) => Some(None),
            None => {
                self.error(
                    "undefined-metadata",
                    index.span,
                    format!("expected a metadata index below {n}, found {i}"),
                );
                Some(None)
            }
        }
    }

    // ----- functions --------------------------------------------------------

    /// Reads `@R.function(pure=…, private=…)`.
    fn relax_decorator(&mut self, f: &FuncDef) -> (bool, bool) {
        let mut is_pure = true;
        let mut private = false;
        for d in &f.decorators {
            let Some((_, _, kwargs)) = d.as_call() else {
                continue;
            };
            for (k, v) in kwargs {
                let slot = match k.name.as_str() {
                    "pure" => &mut is_pure,
                    "private" => &mut private,
                    "check_well_formed" => continue,
                    other => {
                        self.error(
                            "syntax-error",
                            k.span,
                            format!(
                                "expected `pure` or `private` in `@R.function(…)`, found `{other}`"
                            ),
                        );
                        continue;
                    }
                };
                match v.kind {
                    SK::Bool(b) => *slot = b,
                    _ => self.error(
                        "syntax-error",
                        v.span,
                        format!("expected `True` or `False`, found {}", v.describe()),
                    ),
                }
            }
        }
        (is_pure, private)
    }

    /// Lowers a Relax function's parameters and return annotation, in a new
    /// function frame that the body lowering reuses.
    fn relax_signature(&mut self, f: &FuncDef) -> Option<RelaxSig> {
        let (is_pure, private) = self.relax_decorator(f);
        self.frames.push(Frame {
            is_function: true,
            ..Frame::default()
        });
        self.prelude_syms(&f.body);
        // String dims standing alone declare symbolic variables wherever
        // they appear in the signature, so declare them all up front.
        for p in &f.params {
            if let Some(a) = &p.annotation {
                self.declare_string_dims(a);
            }
        }
        let mut params = Vec::new();
        let mut seen: HashMap<&str, Span> = HashMap::new();
        for p in &f.params {
            if seen.insert(&p.name.name, p.name.span).is_some() {
                self.error(
                    "duplicate-parameter",
                    p.name.span,
                    format!("duplicate parameter `{}`", p.name.name),
                );
            }
            if let Some(d) = &p.default {
                self.error(
                    "unsupported-syntax",
                    d.span,
                    format!(
                        "expected no default value for parameter `{}`, found {}",
                        p.name.name,
                        d.describe()
                    ),
                );
            }
            let sinfo = match &p.annotation {
                Some(a) => self.struct_info(a, false),
                None => {
                    self.error(
                        "missing-annotation",
                        p.name.span,
                        format!(
                            "expected a struct info annotation on parameter `{}`, found none",
                            p.name.name
                        ),
                    );
                    None
                }
            };
            let sinfo = sinfo.unwrap_or_else(StructInfo::object);
            self.mark_dims(&sinfo);
            let v = Var::new(&p.name.name, Some(sinfo));
            self.define(&v);
            params.push(v);
        }
        let ret = match &f.ret {
            Some(r) => {
                self.declare_string_dims(r);
                self.struct_info(r, false).map(|s| (s, r.span))
            }
            None => None,
        };
        let frame = self.frames.pop().unwrap_or_default();
        Some(RelaxSig {
            params,
            ret,
            is_pure,
            private,
            frame,
        })
    }

    /// Declares the `n = T.int64()` symbolic variables of a function body
    /// (TVMScript prints them first; any position is accepted).
    fn prelude_syms(&mut self, body: &[Stmt]) {
        for s in body {
            match &s.kind {
                StmtKind::Assign { targets, value, .. } => {
                    let values: Vec<&syntax::Expr> = match &value.kind {
                        SK::Tuple(items) if targets.len() > 1 => items.iter().collect(),
                        _ => vec![value],
                    };
                    if values.len() != targets.len() {
                        continue;
                    }
                    for (t, v) in targets.iter().zip(values) {
                        if let Some(dtype) = sym_decl_dtype(v) {
                            if self
                                .frames
                                .last()
                                .is_some_and(|f| f.sym.contains_key(&t.name))
                            {
                                continue;
                            }
                            match dtype {
                                Ok(dt) => {
                                    self.declare_sym(&t.name, dt);
                                }
                                Err(found) => self.error(
                                    "syntax-error",
                                    v.span,
                                    format!("expected a data type such as `T.int64()`, found `T.{found}()`"),
                                ),
                            }
                        }
                    }
                }
                StmtKind::With { body, .. } => self.prelude_syms(body),
                StmtKind::If { then, orelse, .. } => {
                    self.prelude_syms(then);
                    if let Some(o) = orelse {
                        self.prelude_syms(o);
                    }
                }
                _ => {}
            }
        }
    }

    /// Lowers a Relax function's body. `self_var` is the variable a nested
    /// function is bound to (in scope in its own body for recursion).
    fn relax_body(
        &mut self,
        f: &FuncDef,
        sig: RelaxSig,
        self_var: Option<&Var>,
        top_level: bool,
    ) -> Lowered<Function> {
        let RelaxSig {
            params,
            ret,
            is_pure,
            private,
            frame,
        } = sig;
        let defined_before = self.defined.len();
        for p in &params {
            if let Some(s) = p.struct_info() {
                self.define_syms(s);
            }
        }
        let outside = self.defined.len();
        self.frames.push(frame);
        if let Some(v) = self_var {
            self.define(v);
        }
        let errors_before = self.errors.len();
        let mut attrs = Attrs::new();
        if top_level && !private {
            attrs = attrs.with(attr::GLOBAL_SYMBOL, f.name.name.as_str());
        }
        // Find the `return`: it must end the body.
        let ret_pos = f
            .body
            .iter()
            .position(|s| matches!(s.kind, StmtKind::Return(_)));
        if let Some(i) = ret_pos {
            if let Some(extra) = f.body.get(i + 1) {
                self.error(
                    "syntax-error",
                    extra.span,
                    "expected the end of the function body after `return`, found another statement",
                );
            }
        }
        let body_stmts = &f.body[..ret_pos.unwrap_or(f.body.len())];
        for s in body_stmts {
            if let Some(pairs) = self.func_attr_stmt(s, "R.func_attr") {
                for (k, v) in pairs {
                    attrs = attrs.with(&k, v);
                }
            }
        }
        let mut blocks = self.blocks(body_stmts);
        let body_value = match ret_pos.map(|i| &f.body[i].kind) {
            Some(StmtKind::Return(Some(e))) => self.rexpr(e).map(|v| (v, e.span)),
            Some(StmtKind::Return(None)) => {
                let sp = f.body[ret_pos.unwrap_or(0)].span;
                self.error(
                    "syntax-error",
                    sp,
                    "expected a value after `return`, found none",
                );
                None
            }
            _ => {
                self.error(
                    "missing-return",
                    f.header_span,
                    format!(
                        "expected a `return` at the end of function `{}`, found none",
                        f.name.name
                    ),
                );
                None
            }
        };
        // Normal form: the body of a sequence is a leaf.
        let body_value =
            body_value.map(|(v, sp)| (self.bind_if_not_leaf(&mut blocks, v, "gv", None), sp));
        self.frames.pop();
        let result = self.finish_function(blocks, body_value, ret, outside, errors_before);
        self.defined.truncate(defined_before);
        let (seq, ret_struct_info) = result?;
        Some(Function {
            params,
            body: seq,
            ret_struct_info,
            is_pure,
            attrs,
        })
    }

    /// The body `SeqExpr` and the result StructInfo of a function.
    fn finish_function(
        &mut self,
        blocks: Vec<BindingBlock>,
        body_value: Option<(Expr, Span)>,
        ret: Option<(StructInfo, Span)>,
        outside: usize,
        errors_before: usize,
    ) -> Option<(Expr, StructInfo)> {
        let (body_value, _) = body_value?;
        if self.errors.len() > errors_before {
            return None;
        }
        let seq = self.seq(blocks, body_value, outside);
        let body_sinfo = seq
            .struct_info()
            .cloned()
            .unwrap_or_else(StructInfo::object);
        let ret_struct_info = match ret {
            Some((ann, span)) => {
                self.check_annotation(&ann, &body_sinfo, span);
                ann
            }
            None => {
                // What the parameters define (and what enclosing functions
                // define, for closures) is in scope of the signature.
                let defined: HashSet<&TirVar> = self.defined.iter().take(outside).collect();
                erase_to_well_defined(&body_sinfo, &HashMap::new(), &HashMap::new(), &|v| {
                    defined.contains(v)
                })
            }
        };
        Some((seq, ret_struct_info))
    }

    /// `R.func_attr({...})` / `T.func_attr({...})`: the pairs, if `s` is one.
    pub(super) fn func_attr_stmt(
        &mut self,
        s: &Stmt,
        path: &str,
    ) -> Option<Vec<(String, AttrValue)>> {
        let StmtKind::Expr(e) = &s.kind else {
            return None;
        };
        let (p, args, kwargs) = e.as_call()?;
        if p != path {
            return None;
        }
        match (args, kwargs) {
            ([d], []) => Some(self.attr_dict(d).unwrap_or_default()),
            _ => {
                self.error(
                    "syntax-error",
                    e.span,
                    format!("expected one dict argument to `{path}`"),
                );
                Some(Vec::new())
            }
        }
    }

    /// `{"name": value, …}`: the pairs in order, or `None` (with an error)
    /// when `d` is not a dict. A key that is not a string is an error and
    /// is left out.
    pub(super) fn attr_dict(&mut self, d: &syntax::Expr) -> Option<Vec<(String, AttrValue)>> {
        let SK::Dict(items) = &d.kind else {
            self.error(
                "syntax-error",
                d.span,
                format!("expected a dict of attributes, found {}", d.describe()),
            );
            return None;
        };
        let mut out = Vec::new();
        for (k, v) in items {
            let SK::Str(key) = &k.kind else {
                self.error(
                    "syntax-error",
                    k.span,
                    format!("expected a string attribute name, found {}", k.describe()),
                );
                continue;
            };
            if let Some(val) = self.attr_value(v) {
                out.push((key.clone(), val));
            }
        }
        Some(out)
    }

    // ----- statements -------------------------------------------------------

    /// Lowers statements to binding blocks: runs of ordinary bindings form
    /// one `BindingBlock`, each `with R.dataflow()` one `DataflowBlock`.
    fn blocks(&mut self, stmts: &[Stmt]) -> Vec<BindingBlock> {
        let mut blocks = Vec::new();
        let mut pending: Vec<Binding> = Vec::new();
        for s in stmts {
            match &s.kind {
                StmtKind::With { item, body } => {
                    if !pending.is_empty() {
                        blocks.push(BindingBlock::new(std::mem::take(&mut pending)));
                    }
                    if let Some(b) = self.dataflow_block(item, body) {
                        blocks.push(b);
                    }
                }
                _ => {
                    if let Some(b) = self.statement(s, false, &HashSet::new()) {
                        pending.push(b);
                    }
                }
            }
        }
        if !pending.is_empty() {
            blocks.push(BindingBlock::new(pending));
        }
        blocks
    }

    /// `with R.dataflow(): … R.output(a, b)`
    fn dataflow_block(&mut self, item: &syntax::Expr, body: &[Stmt]) -> Lowered<BindingBlock> {
        match item.as_call() {
            Some((p, [], [])) if p == "R.dataflow" => {}
            _ => {
                self.error(
                    "syntax-error",
                    item.span,
                    format!("expected `R.dataflow()`, found {}", item.describe()),
                );
                return None;
            }
        }
        // The outputs: `R.output(…)` must end the block.
        let mut outputs: Vec<Ident> = Vec::new();
        let mut output_pos = None;
        for (i, s) in body.iter().enumerate() {
            let StmtKind::Expr(e) = &s.kind else { continue };
            let Some(("R.output", args, kwargs)) = e
                .as_call()
                .map(|(p, a, k)| (if p == "R.output" { "R.output" } else { "" }, a, k))
            else {
                continue;
            };
            if output_pos.is_some() {
                self.error(
                    "syntax-error",
                    s.span,
                    "expected one `R.output(…)` per dataflow block, found a second one",
                );
                continue;
            }
            output_pos = Some(i);
            if let Some((k, _)) = kwargs.first() {
                self.error(
                    "syntax-error",
                    k.span,
                    format!("expected variable names in `R.output`, found `{}=`", k.name),
                );
            }
            for a in args {
                match &a.kind {
                    SK::Name(n) => outputs.push(Ident {
                        name: n.clone(),
                        span: a.span,
                    }),
                    _ => self.error(
                        "syntax-error",
                        a.span,
                        format!(
                            "expected a variable name in `R.output`, found {}",
                            a.describe()
                        ),
                    ),
                }
            }
            if let Some(next) = body.get(i + 1) {
                self.error(
                    "syntax-error",
                    next.span,
                    "expected the end of the dataflow block after `R.output(…)`, found another statement",
                );
            }
        }
        // The binding that defines each output is the last one of its name.
        let mut last_def: HashMap<&str, usize> = HashMap::new();
        for (i, s) in body.iter().enumerate() {
            match &s.kind {
                StmtKind::Assign { targets, .. } if sym_decl(s).is_none() => {
                    for t in targets {
                        last_def.insert(&t.name, i);
                    }
                }
                StmtKind::FuncDef(f) => {
                    last_def.insert(&f.name.name, i);
                }
                _ => {}
            }
        }
        let mut output_stmts: HashSet<(usize, String)> = HashSet::new();
        for o in &outputs {
            match last_def.get(o.name.as_str()) {
                Some(&i) => {
                    output_stmts.insert((i, o.name.clone()));
                }
                None => self.error(
                    "undefined-variable",
                    o.span,
                    format!(
                        "expected `{}` to be bound in this dataflow block, found no binding",
                        o.name
                    ),
                ),
            }
        }
        self.frames.push(Frame::default());
        let mut bindings = Vec::new();
        for (i, s) in body.iter().enumerate() {
            if Some(i) == output_pos {
                continue;
            }
            let outs: HashSet<String> = output_stmts
                .iter()
                .filter(|(j, _)| *j == i)
                .map(|(_, n)| n.clone())
                .collect();
            match &s.kind {
                StmtKind::With { .. } | StmtKind::If { .. } => self.error(
                    "syntax-error",
                    s.span,
                    "expected a binding in the dataflow block, found control flow (it is not allowed in a dataflow block)",
                ),
                StmtKind::Return(_) => self.error(
                    "syntax-error",
                    s.span,
                    "expected a binding in the dataflow block, found `return` (return after the block)",
                ),
                _ => {
                    if let Some(b) = self.statement(s, true, &outs) {
                        bindings.push(b);
                    }
                }
            }
        }
        let frame = self.frames.pop().unwrap_or_default();
        for (name, v) in frame.vars {
            if v.is_dataflow() {
                self.escaped.insert(name);
            } else {
                self.escaped.remove(&name);
                self.define(&v);
            }
        }
        Some(BindingBlock::dataflow(bindings))
    }

    /// Lowers one statement that is not a block; returns its binding, if it
    /// makes one. `outputs` are the names this statement binds that leave
    /// their dataflow block.
    fn statement(
        &mut self,
        s: &Stmt,
        in_dataflow: bool,
        outputs: &HashSet<String>,
    ) -> Option<Binding> {
        let make_var = |name: &str, sinfo: StructInfo| {
            if in_dataflow && !outputs.contains(name) {
                Var::new_dataflow(name, Some(sinfo))
            } else {
                Var::new(name, Some(sinfo))
            }
        };
        match &s.kind {
            StmtKind::Pass | StmtKind::Import => None,
            StmtKind::Expr(e) => {
                if matches!(e.kind, SK::Str(_)) {
                    return None; // a docstring
                }
                if let Some((p, _, _)) = e.as_call() {
                    if p == "R.func_attr" {
                        return None; // read by the function
                    }
                    if p == "R.output" {
                        self.error(
                            "syntax-error",
                            e.span,
                            "expected `R.output(…)` only at the end of a dataflow block, found it outside one",
                        );
                        return None;
                    }
                }
                if !matches!(e.kind, SK::Call { .. }) {
                    self.error(
                        "syntax-error",
                        e.span,
                        format!("expected a statement, found {}", e.describe()),
                    );
                    return None;
                }
                // A call made for its effect is bound to an unused variable.
                let value = self.rexpr(e)?;
                let sinfo = value
                    .struct_info()
                    .cloned()
                    .unwrap_or_else(StructInfo::object);
                Some(Binding::var_binding(make_var("_", sinfo), value))
            }
            StmtKind::Assign {
                targets,
                unpack,
                annotation,
                value,
            } => {
                if sym_decl(s).is_some() {
                    return None; // declared by `prelude_syms`
                }
                if targets.len() == 1
                    && annotation.is_none()
                    && value
                        .as_name()
                        .is_some_and(|n| n == "cls" || Some(n) == self.class_name.as_deref())
                {
                    return None; // `cls = Module`
                }
                if *unpack {
                    self.error(
                        "unsupported-syntax",
                        s.span,
                        "expected one name to bind, found tuple unpacking (bind the tuple and use `t[0]`)",
                    );
                    for t in targets {
                        self.define(&Var::new(&t.name, Some(StructInfo::object())));
                    }
                    return None;
                }
                let target = &targets[0];
                let ann = match annotation {
                    Some(a) => self.struct_info(a, false).map(|s| (s, a.span)),
                    None => None,
                };
                // `R.match_cast(value, S)`
                if let Some((p, args, kwargs)) = value.as_call() {
                    if p == "R.match_cast" {
                        return self.match_cast(target, ann, args, kwargs, value.span, &make_var);
                    }
                }
                let lowered = self.rexpr(value);
                let Some(v) = lowered else {
                    let fallback = ann.map_or_else(StructInfo::object, |(s, _)| s);
                    self.define(&make_var(&target.name, fallback));
                    return None;
                };
                let derived = v.struct_info().cloned().unwrap_or_else(StructInfo::object);
                let sinfo = match ann {
                    Some((a, span)) => {
                        self.check_annotation(&a, &derived, span);
                        a
                    }
                    None => derived,
                };
                let var = make_var(&target.name, sinfo);
                self.define(&var);
                Some(Binding::var_binding(var, v))
            }
            StmtKind::If { cond, then, orelse } => {
                if in_dataflow {
                    self.error(
                        "syntax-error",
                        s.span,
                        "expected a binding in the dataflow block, found control flow",
                    );
                    return None;
                }
                self.if_binding(s.span, cond, then, orelse.as_deref())
            }
            StmtKind::FuncDef(f) => {
                if function_kind(f) != Some(FuncKind::Relax) {
                    self.error(
                        "syntax-error",
                        f.name.span,
                        format!("expected `@R.function` on the nested `def {}`", f.name.name),
                    );
                    return None;
                }
                let sig = self.relax_signature(f)?;
                // With a declared result the function can call itself.
                let self_var = sig.ret.as_ref().map(|(r, _)| {
                    let fs = StructInfo::func(
                        sig.params
                            .iter()
                            .map(|p| p.struct_info().cloned().unwrap_or_else(StructInfo::object))
                            .collect(),
                        r.clone(),
                        sig.is_pure,
                    );
                    make_var(&f.name.name, fs)
                });
                let func = self.relax_body(f, sig, self_var.as_ref(), false);
                let Some(func) = func else {
                    // Keep the declared signature so callers are still checked.
                    let fallback =
                        self_var.unwrap_or_else(|| make_var(&f.name.name, StructInfo::object()));
                    self.define(&fallback);
                    return None;
                };
                let var = self_var.unwrap_or_else(|| make_var(&f.name.name, func.struct_info()));
                self.define(&var);
                Some(Binding::var_binding(var, Expr::function(func)))
            }
            StmtKind::Return(_) => {
                self.error(
                    "syntax-error",
                    s.span,
                    "expected `return` only at the end of a function body, found it here",
                );
                None
            }
            StmtKind::With { .. } => {
                self.error(
                    "syntax-error",
                    s.span,
                    "expected a binding, found a nested `with` block",
                );
                None
            }
            StmtKind::ClassDef(c) => {
                self.error(
                    "syntax-error",
                    c.name.span,
                    "expected a binding, found a class definition",
                );
                None
            }
            StmtKind::Unsupported(kw) => {
                self.error(
                    "unsupported-syntax",
                    s.span,
                    format!(
                        "expected a binding, found a `{kw}` statement (not TVMScript for Relax)"
                    ),
                );
                None
            }
        }
    }

    fn match_cast(
        &mut self,
        target: &Ident,
        ann: Option<(StructInfo, Span)>,
        args: &[syntax::Expr],
        kwargs: &[(Ident, syntax::Expr)],
        span: Span,
        make_var: &dyn Fn(&str, StructInfo) -> Var,
    ) -> Option<Binding> {
        let (value, pattern) = match (args, kwargs) {
            ([v, p], []) => (v, p),
            _ => {
                self.error(
                    "syntax-error",
                    span,
                    "expected `R.match_cast(value, struct_info)` with two arguments",
                );
                self.define(&make_var(&target.name, StructInfo::object()));
                return None;
            }
        };
        let v = self.rexpr(value);
        let pat = self.struct_info(pattern, true);
        let (Some(v), Some(pat)) = (v, pat) else {
            let fallback = ann.map_or_else(StructInfo::object, |(s, _)| s);
            self.define(&make_var(&target.name, fallback));
            return None;
        };
        self.mark_dims(&pat);
        self.define_syms(&pat);
        // The variable has the pattern's StructInfo (a well-formedness rule);
        // an annotation is only checked against it.
        if let Some((a, sp)) = ann {
            self.check_annotation(&a, &pat, sp);
        }
        let var = make_var(&target.name, pat.clone());

        self.define(&var);
        Some(Binding::match_cast(var, v, pat))
    }

    /// `if c: … y = a else: … y = b` → `y = If(c, SeqExpr(…, a), SeqExpr(…, b))`
    fn if_binding(
        &mut self,
        span: Span,
        cond: &syntax::Expr,
        then: &[Stmt],
        orelse: Option<&[Stmt]>,
    ) -> Option<Binding> {
        let b = self.if_binding_inner(span, cond, then, orelse);
        if b.is_none() {
            // Define the result names anyway, so later uses don't cascade.
            for branch in std::iter::once(then).chain(orelse) {
                if let Some(Stmt {
                    kind: StmtKind::Assign { targets, .. },
                    ..
                }) = branch.last()
                {
                    for t in targets {
                        self.define(&Var::new(&t.name, Some(StructInfo::object())));
                    }
                }
            }
        }
        b
    }

    fn if_binding_inner(
        &mut self,
        span: Span,
        cond: &syntax::Expr,
        then: &[Stmt],
        orelse: Option<&[Stmt]>,
    ) -> Option<Binding> {
        let Some(orelse) = orelse else {
            self.error(
                "syntax-error",
                span,
                "expected an `else` branch (a relax `if` needs both branches), found none",
            );
            return None;
        };
        let c = self.rexpr(cond);
        let t = self.branch(then, span);
        let e = self.branch(orelse, span);
        let (Some(t), Some(e)) = (t, e) else {
            return None;
        };
        let (tname, tann, tseq) = t;
        let (ename, eann, eseq) = e;
        if tname.name != ename.name {
            self.error(
                "syntax-error",
                ename.span,
                format!(
                    "expected the else branch to end by assigning `{}` like the then branch, found `{}`",
                    tname.name, ename.name
                ),
            );
            return None;
        }
        let c = c?;
        let value = self.derive(Expr::if_(c, tseq, eseq), span);
        let derived = value
            .struct_info()
            .cloned()
            .unwrap_or_else(StructInfo::object);
        let sinfo = match tann.or(eann) {
            Some((a, sp)) => {
                self.check_annotation(&a, &derived, sp);
                a
            }
            None => derived,
        };
        let var = Var::new(&tname.name, Some(sinfo));
        self.define(&var);
        Some(Binding::var_binding(var, value))
    }

    /// One branch: its bindings, then the final `y = value` as the result.
    #[allow(clippy::type_complexity)]
    fn branch(
        &mut self,
        stmts: &[Stmt],
        if_span: Span,
    ) -> Option<(Ident, Option<(StructInfo, Span)>, Expr)> {
        let Some((last, rest)) = stmts.split_last() else {
            self.error(
                "syntax-error",
                if_span,
                "expected a branch ending in an assignment, found an empty branch",
            );
            return None;
        };
        let StmtKind::Assign {
            targets,
            unpack: false,
            annotation,
            value,
        } = &last.kind
        else {
            self.error(
                "syntax-error",
                last.span,
                "expected the branch to end with an assignment to the `if`'s result variable, found another statement",
            );
            return None;
        };
        if value.as_call().is_some_and(|(p, _, _)| p == "R.match_cast") {
            self.error(
                "unsupported-syntax",
                value.span,
                "expected a plain value as a branch's result, found `R.match_cast` (bind it first)",
            );
            return None;
        }
        let outside = self.defined.len();
        self.frames.push(Frame::default());
        let mut blocks = self.blocks(rest);
        let ann = match annotation {
            Some(a) => self.struct_info(a, false).map(|s| (s, a.span)),
            None => None,
        };
        let body = self
            .rexpr(value)
            .map(|v| self.bind_if_not_leaf(&mut blocks, v, &targets[0].name, ann.as_ref()));
        self.frames.pop();
        let seq = body.map(|body| self.seq(blocks, body, outside));
        self.defined.truncate(outside);
        let seq = seq?;
        Some((targets[0].clone(), ann, seq))
    }

    /// `value` if it is a leaf; otherwise a new variable `name` bound to it
    /// at the end of `blocks` (in an ordinary block), as TVM's normalizer
    /// does, so that the sequence's body is a leaf.
    fn bind_if_not_leaf(
        &mut self,
        blocks: &mut Vec<BindingBlock>,
        value: Expr,
        name: &str,
        ann: Option<&(StructInfo, Span)>,
    ) -> Expr {
        if value.is_leaf() {
            return value;
        }
        let derived = value
            .struct_info()
            .cloned()
            .unwrap_or_else(StructInfo::object);
        let sinfo = match ann {
            Some((a, span)) => {
                self.check_annotation(a, &derived, *span);
                a.clone()
            }
            None => derived,
        };
        let var = Var::new(name, Some(sinfo));
        let binding = Binding::var_binding(var.clone(), value);
        match blocks.last_mut() {
            Some(b) if !b.is_dataflow => b.bindings.push(binding),
            _ => blocks.push(BindingBlock::new(vec![binding])),
        }
        Expr::var(&var)
    }

    // ----- expressions -------------------------------------------------------

    /// A reference to the module function `name`.
    pub(super) fn global_ref(&mut self, name: &str, span: Span) -> Lowered<Expr> {
        match self.globals.get(name) {
            Some(g) => Some(Expr::global_var(g.gv.clone()).with_struct_info(g.struct_info.clone())),
            None => {
                self.error(
                    "undefined-function",
                    span,
                    format!("expected a function of the module, found undefined `{name}`"),
                );
                None
            }
        }
    }

    /// Whether `path` (`cls.f`, `Module.f`) names a module function; gives `f`.
    pub(super) fn global_path<'p>(&self, path: &[&'p str]) -> Option<&'p str> {
        match path {
            [base, f] if *base == "cls" || Some(*base) == self.class_name.as_deref() => Some(f),
            _ => None,
        }
    }

    /// A Relax expression.
    pub(super) fn rexpr(&mut self, e: &syntax::Expr) -> Lowered<Expr> {
        match &e.kind {
            SK::Name(n) => {
                if let Some(v) = self.lookup_var(n) {
                    return Some(Expr::var(&v));
                }
                if self.globals.contains_key(n.as_str()) {
                    return self.global_ref(n, e.span);
                }
                if self.escaped.contains(n.as_str()) {
                    self.error(
                        "dataflow-var-escapes",
                        e.span,
                        format!(
                            "expected a variable in scope, found dataflow variable `{n}` used outside its dataflow block (list it in `R.output`)"
                        ),
                    );
                    return None;
                }
                // A symbolic variable as a value is its `PrimValue`, as
                // TVM 0.27 prints it (`v: T.int64 = n`).
                if let Some(sym) = self.lookup_sym(n) {
                    return Some(Expr::prim_value(sym.to_expr()));
                }
                self.error(
                    "undefined-variable",
                    e.span,
                    format!("expected a variable, found undefined `{n}`"),
                );
                None
            }
            SK::Attr(..) => {
                let path = e.dotted_path();
                match path.as_deref().and_then(|p| self.global_path(p)) {
                    Some(f) => {
                        let f = f.to_string();
                        self.global_ref(&f, e.span)
                    }
                    None => {
                        if let Some(p) = e.dotted() {
                            if p.starts_with("T.") {
                                return self.prim_as_value(e);
                            }
                        }
                        self.error(
                            "undefined-function",
                            e.span,
                            format!(
                                "expected a variable or `cls.<function>`, found {}",
                                e.describe()
                            ),
                        );
                        None
                    }
                }
            }
            SK::Call { func, args, kwargs } => self.call(e, func, args, kwargs),
            SK::Tuple(items) => {
                let fields = self.rexprs(items)?;
                Some(self.derive(Expr::tuple(fields), e.span))
            }
            SK::Subscript(base, index) => {
                if let Some(m) = self.metadata_ref(e) {
                    return m;
                }
                let b = self.rexpr(base);
                let i = match index.kind {
                    SK::Int(i) if i >= 0 => usize::try_from(i).ok(),
                    _ => None,
                };
                let Some(i) = i else {
                    self.error(
                        "syntax-error",
                        index.span,
                        format!(
                            "expected a non-negative integer tuple index, found {}",
                            index.describe()
                        ),
                    );
                    return None;
                };
                let b = b?;
                Some(self.derive(Expr::tuple_get_item(b, i), e.span))
            }
            SK::Str(s) => Some(Expr::string(s.clone())),
            SK::Int(_) | SK::Float(_) | SK::Bool(_) | SK::Binary(..) | SK::Unary(..) => {
                self.prim_as_value(e)
            }
            SK::None => {
                self.error(
                    "syntax-error",
                    e.span,
                    "expected a relax expression, found `None`",
                );
                None
            }
            SK::List(_) | SK::Dict(_) => {
                self.error(
                    "syntax-error",
                    e.span,
                    format!("expected a relax expression, found {}", e.describe()),
                );
                None
            }
        }
    }

    /// A scalar expression used as a value: `PrimValue`.
    fn prim_as_value(&mut self, e: &syntax::Expr) -> Lowered<Expr> {
        let p = self.prim(e)?;
        Some(Expr::prim_value(p))
    }

    fn call(
        &mut self,
        e: &syntax::Expr,
        func: &syntax::Expr,
        args: &[syntax::Expr],
        kwargs: &[(Ident, syntax::Expr)],
    ) -> Lowered<Expr> {
        let path = func.dotted_path();
        if let Some(path) = &path {
            if path.first() == Some(&"R") && path.len() > 1 {
                let rest: Vec<&str> = path[1..].to_vec();
                return self.r_call(e, &rest, args, kwargs);
            }
            if path.first() == Some(&"T") {
                return self.prim_as_value(e);
            }
        }
        let callee = self.rexpr(func);
        if let Some((k, _)) = kwargs.first() {
            self.error(
                "syntax-error",
                k.span,
                format!(
                    "expected only positional arguments in a call of a function, found `{}=`",
                    k.name
                ),
            );
        }
        let args = self.rexprs(args);
        let (callee, args) = (callee?, args?);
        if !kwargs.is_empty() {
            return None;
        }
        Some(self.derive(Expr::call(callee, args), e.span))
    }

    pub(super) fn rexprs(&mut self, items: &[syntax::Expr]) -> Lowered<Vec<Expr>> {
        self.lower_all(items, Self::rexpr)
    }
}

/// The indices of `names` in an order where each function comes after the
/// functions it refers to (`refs`), text order otherwise; cycles are broken
/// at the first function reached again.
fn callees_first(names: &[&str], refs: &[HashSet<String>]) -> Vec<usize> {
    // Depth-first post-order with an explicit stack (a module may hold many
    // functions); `state`: 0 unvisited, 1 on the stack, 2 done.
    let mut state = vec![0u8; names.len()];
    let mut out = Vec::new();
    for root in 0..names.len() {
        if state[root] != 0 {
            continue;
        }
        state[root] = 1;
        // (function, next callee index to look at)
        let mut stack = vec![(root, 0usize)];
        while let Some((i, next)) = stack.pop() {
            // Callees in text order, for a deterministic result.
            let callee = (next..names.len())
                .find(|&j| j != i && state[j] == 0 && refs[i].contains(names[j]));
            match callee {
                Some(j) => {
                    stack.push((i, j + 1));
                    state[j] = 1;
                    stack.push((j, 0));
                }
                None => {
                    state[i] = 2;
                    out.push(i);
                }
            }
        }
    }
    out
}

/// The names of module functions that statements refer to (`cls.f`,
/// `Module.f`, or a bare `f`), collected without resolving scopes.
fn stmt_refs(stmts: &[Stmt], class: &str, out: &mut HashSet<String>) {
    for s in stmts {
        match &s.kind {
            StmtKind::Expr(e) | StmtKind::Return(Some(e)) => expr_refs(e, class, out),
            StmtKind::Assign {
                annotation, value, ..
            } => {
                if let Some(a) = annotation {
                    expr_refs(a, class, out);
                }
                expr_refs(value, class, out);
            }
            StmtKind::With { item, body } => {
                expr_refs(item, class, out);
                stmt_refs(body, class, out);
            }
            StmtKind::If { cond, then, orelse } => {
                expr_refs(cond, class, out);
                stmt_refs(then, class, out);
                if let Some(o) = orelse {
                    stmt_refs(o, class, out);
                }
            }
            StmtKind::FuncDef(f) => stmt_refs(&f.body, class, out),
            _ => {}
        }
    }
}

fn expr_refs(e: &syntax::Expr, class: &str, out: &mut HashSet<String>) {
    match &e.kind {
        SK::Name(n) => {
            out.insert(n.clone());
        }
        SK::Attr(base, attr) => match base.as_name() {
            Some(b) if b == "cls" || b == class => {
                out.insert(attr.name.clone());
            }
            _ => expr_refs(base, class, out),
        },
        SK::Call { func, args, kwargs } => {
            expr_refs(func, class, out);
            args.iter().for_each(|a| expr_refs(a, class, out));
            kwargs.iter().for_each(|(_, v)| expr_refs(v, class, out));
        }
        SK::Tuple(items) | SK::List(items) => items.iter().for_each(|a| expr_refs(a, class, out)),
        SK::Dict(items) => items.iter().for_each(|(k, v)| {
            expr_refs(k, class, out);
            expr_refs(v, class, out);
        }),
        SK::Subscript(a, b) | SK::Binary(_, a, b) => {
            expr_refs(a, class, out);
            expr_refs(b, class, out);
        }
        SK::Unary(_, a) => expr_refs(a, class, out),
        _ => {}
    }
}

/// Which kind of function a `def` is, by its decorator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FuncKind {
    Relax,
    Prim,
}

fn function_kind(f: &FuncDef) -> Option<FuncKind> {
    f.decorators.iter().find_map(|d| {
        let path = match &d.kind {
            SK::Call { func, .. } => func.dotted()?,
            _ => d.dotted()?,
        };
        match path.as_str() {
            "R.function" => Some(FuncKind::Relax),
            "T.prim_func" => Some(FuncKind::Prim),
            _ => None,
        }
    })
}

/// `TypeVar("name")` (or `typing.TypeVar`) declaring `name`: TVM 0.27's
/// module-level symbolic variable.
fn is_type_var(value: &syntax::Expr, name: &str) -> bool {
    match value.as_call() {
        Some((path, args, kwargs)) => {
            matches!(path.as_str(), "TypeVar" | "typing.TypeVar")
                && kwargs.is_empty()
                && matches!(args, [a] if matches!(&a.kind, SK::Str(s) if s == name))
        }
        None => false,
    }
}

fn is_ir_module_decorator(d: &syntax::Expr) -> bool {
    let path = match &d.kind {
        SK::Call { func, .. } => func.dotted(),
        _ => d.dotted(),
    };
    matches!(
        path.as_deref(),
        Some("I.ir_module" | "tvm.script.ir_module" | "ir_module")
    )
}

/// `T.int64()` and friends: the dtype of a symbolic variable declaration,
/// or the bad name. `TypeVar("n")`, which TVM 0.27 prints in the body of a
/// nested function, declares an `int64` one.
fn sym_decl_dtype(v: &syntax::Expr) -> Option<Result<relax_runtime::DataType, String>> {
    let (path, args, kwargs) = v.as_call()?;
    if matches!(path.as_str(), "TypeVar" | "typing.TypeVar")
        && matches!(args, [a] if matches!(a.kind, SK::Str(_)))
    {
        return Some(Ok(relax_runtime::DataType::int(64)));
    }
    let name = path.strip_prefix("T.")?;
    if !args.is_empty() || !kwargs.is_empty() {
        return None;
    }
    Some(name.parse().map_err(|_| name.to_string()))
}

/// Whether `s` is a symbolic variable declaration (`n = T.int64()`).
fn sym_decl(s: &Stmt) -> Option<()> {
    let StmtKind::Assign { targets, value, .. } = &s.kind else {
        return None;
    };
    let values: Vec<&syntax::Expr> = match &value.kind {
        SK::Tuple(items) if targets.len() > 1 => items.iter().collect(),
        _ => vec![value],
    };
    (values.len() == targets.len() && values.iter().all(|v| sym_decl_dtype(v).is_some()))
        .then_some(())
}

/// A function with the signature of `sig` and a dummy body: what the module
/// knows about a function before its body is lowered.
fn placeholder_function(sig: &RelaxSig) -> Function {
    Function {
        params: sig.params.clone(),
        body: Expr::tuple(vec![]),
        ret_struct_info: sig
            .ret
            .as_ref()
            .map_or_else(StructInfo::object, |(s, _)| s.clone()),
        is_pure: sig.is_pure,
        attrs: Attrs::new(),
    }
}
