//! Lowering of scalar expressions: `PrimExpr`s (shape dimensions, prim
//! values, TIR attributes, loop-level expressions) and attribute values.
//!
//! One lowering ([`Lowerer::scalar`]) serves both places scalar expressions
//! are written; a [`ScalarSyntax`] says what sets each apart. Its provided
//! methods are the Relax rules ([`RelaxScalars`]: shape dimensions, prim
//! values, attributes); loop-level functions extend them (`tir/expr.rs`:
//! buffer loads, float arithmetic, casts, intrinsics). The common rules:
//!
//! 1. Literals: integers are `int64`, floats `float32`, `True`/`False`
//!    `bool`. In Relax, names are symbolic variables, looked up in the
//!    function scopes.
//! 2. Python precedence comes from the syntax tree; `//` and `%` are TIR's
//!    floor division and modulo. In Relax `/` is rejected on integers (it is
//!    true division in Python) and `**` is not an expression TIR has.
//! 3. An untyped integer literal next to a typed operand takes its dtype
//!    (`m + 1` with `m: int32` adds an `int32` one), as TVM does; otherwise
//!    both operands must have one dtype (TIR has no implicit casts).
//! 4. Calls: `T.min`, `T.max`, `T.floordiv`, `T.floormod`, `T.Select` and
//!    typed literals `T.int32(3)` (Relax has no casts: `T.int32(n)` of an
//!    `int64` `n` is an error).
//! 5. A string standing for a dimension (`"n"`, `"n * 2"`) is parsed a second
//!    time; its spans are mapped back into the string.

use super::lexer::tokenize;
use super::lower::{Lowered, Lowerer};
use super::syntax::{self, parse_expression, BinOp, ExprKind as SK, UnOp};
use crate::ir::{AttrValue, PrimExpr, PrimExprKind};
use relax_runtime::{DataType, Span};

/// What sets one kind of scalar expression apart. The provided methods are
/// Relax's rules; the loop-level syntax overrides them with its extras.
pub(super) trait ScalarSyntax {
    /// Whether casts exist (`T.Cast`, and `T.float32(x)` of a non-literal);
    /// dtype mismatches then suggest `T.Cast`.
    const CASTS: bool;

    /// The value of the name `n`, or an error at `span`.
    fn name(&mut self, lw: &mut Lowerer<'_>, n: &str, span: Span) -> Lowered<PrimExpr>;

    /// A form other than a literal, name, operator or call, or `None` when
    /// `e` is none of this syntax's forms.
    fn other(&mut self, lw: &mut Lowerer<'_>, e: &syntax::Expr) -> Option<Lowered<PrimExpr>>;

    /// `T.<name>(…)` for a name other than `min`, `max`, `floordiv` and
    /// `floormod`, or `None` when `name` is not one of this syntax's calls
    /// (it is then a typed literal such as `T.int32(3)`).
    fn call(
        &mut self,
        lw: &mut Lowerer<'_>,
        c: &ScalarCall<'_>,
        name: &str,
    ) -> Option<Lowered<PrimExpr>>;

    /// The calls an unknown `T.<name>` is told to be one of.
    fn expected_calls() -> String;

    /// A float literal of `dt`.
    fn float(dt: DataType, v: f64) -> PrimExpr {
        PrimExpr::float(dt, v)
    }

    /// An untyped literal as a literal of `dt` (see [`unify`]), when it
    /// can be one: in Relax an `int64` integer of another integer dtype.
    fn retype(lit: &PrimExpr, dt: DataType) -> Option<PrimExpr> {
        retype_int(lit, dt)
    }

    /// `-a` of a non-literal `a`.
    fn negate(a: PrimExpr) -> PrimExpr {
        -a
    }

    /// `l / r`, `l // r` or `l ** r` of operands of one dtype: in Relax
    /// only `//` exists.
    fn div_or_pow(
        lw: &mut Lowerer<'_>,
        op: BinOp,
        l: PrimExpr,
        r: PrimExpr,
        span: Span,
    ) -> Lowered<PrimExpr> {
        if op == BinOp::FloorDiv {
            return Some(l.floordiv(r));
        }
        let hint = if op == BinOp::Div {
            " (use `//` for floor division)"
        } else {
            ""
        };
        lw.error(
            "unsupported-syntax",
            span,
            format!(
                "expected one of `+ - * // %` or a comparison, found `{}`{hint}",
                op.text()
            ),
        );
        None
    }
}

/// Relax's scalar expressions: names are symbolic variables, a string is a
/// dimension, and there is integer arithmetic but no cast.
pub(super) struct RelaxScalars;

impl ScalarSyntax for RelaxScalars {
    const CASTS: bool = false;

    fn name(&mut self, lw: &mut Lowerer<'_>, n: &str, span: Span) -> Lowered<PrimExpr> {
        match lw.lookup_sym(n) {
            Some(v) => Some(PrimExpr::var(&v)),
            None if lw.declare_all_syms => Some(PrimExpr::var(&lw.declare_sym(n, DataType::i64()))),
            None => {
                lw.undefined_sym(n, span);
                None
            }
        }
    }

    fn other(&mut self, lw: &mut Lowerer<'_>, e: &syntax::Expr) -> Option<Lowered<PrimExpr>> {
        match &e.kind {
            SK::Str(s) => Some(lw.prim_string(s, e.span, false)),
            _ => None,
        }
    }

    fn call(
        &mut self,
        lw: &mut Lowerer<'_>,
        c: &ScalarCall<'_>,
        name: &str,
    ) -> Option<Lowered<PrimExpr>> {
        (name == "Select").then(|| lw.relax_select(c))
    }

    fn expected_calls() -> String {
        "`T.min`, `T.max`, `T.Select` or a dtype such as `T.int64`".into()
    }
}

/// A call `T.<name>(args…)` in a scalar expression, its keyword arguments
/// already rejected.
pub(super) struct ScalarCall<'e> {
    /// The whole call.
    pub e: &'e syntax::Expr,
    /// The callee (`T.exp`).
    pub func: &'e syntax::Expr,
    /// The callee's dotted path (`"T.exp"`).
    pub path: String,
    /// The positional arguments.
    pub args: &'e [syntax::Expr],
}

impl ScalarCall<'_> {
    /// Whether the call has `n` arguments; reports it when not.
    pub(super) fn arity(&self, lw: &mut Lowerer<'_>, n: usize) -> bool {
        if self.args.len() == n {
            return true;
        }
        lw.error(
            "syntax-error",
            self.e.span,
            format!(
                "expected {n} argument{} to `{}`, found {}",
                if n == 1 { "" } else { "s" },
                self.path,
                self.args.len()
            ),
        );
        false
    }
}

impl Lowerer<'_> {
    /// A Relax scalar expression; every name must be a declared symbolic
    /// variable.
    pub(super) fn prim(&mut self, e: &syntax::Expr) -> Lowered<PrimExpr> {
        self.scalar(&mut RelaxScalars, e)
    }

    /// A scalar expression of the syntax `s` (see the module docs).
    pub(super) fn scalar<S: ScalarSyntax>(
        &mut self,
        s: &mut S,
        e: &syntax::Expr,
    ) -> Lowered<PrimExpr> {
        match &e.kind {
            SK::Int(v) => Some(PrimExpr::int(*v)),
            SK::Float(v) => Some(S::float(DataType::f32(), *v)),
            SK::Bool(b) => Some(PrimExpr::bool(*b)),
            SK::Name(n) => s.name(self, n, e.span),
            SK::Unary(op, a) => {
                let a = self.scalar(s, a)?;
                Some(match op {
                    UnOp::Pos => a,
                    UnOp::Not => !a,
                    UnOp::Neg => match a.kind() {
                        PrimExprKind::IntImm(v) if !a.dtype().is_bool() => match v.checked_neg() {
                            Some(n) => PrimExpr::int_of(a.dtype(), n),
                            None => -a,
                        },
                        PrimExprKind::FloatImm(v) => S::float(a.dtype(), -v),
                        _ => S::negate(a),
                    },
                })
            }
            SK::Binary(op, l, r) => {
                let l = self.scalar(s, l);
                let r = self.scalar(s, r);
                let (l, r) = unify::<S>(l?, r?);
                self.binary::<S>(*op, l, r, e.span)
            }
            SK::Call { func, args, kwargs } => self.scalar_call(s, e, func, args, kwargs),
            _ => s.other(self, e).unwrap_or_else(|| {
                self.error(
                    "syntax-error",
                    e.span,
                    format!("expected a scalar expression, found {}", e.describe()),
                );
                None
            }),
        }
    }

    /// `l op r`, its operands already unified.
    fn binary<S: ScalarSyntax>(
        &mut self,
        op: BinOp,
        l: PrimExpr,
        r: PrimExpr,
        span: Span,
    ) -> Lowered<PrimExpr> {
        if matches!(op, BinOp::And | BinOp::Or) && !(l.dtype().is_bool() && r.dtype().is_bool()) {
            self.error(
                "syntax-error",
                span,
                format!(
                    "expected bool operands of `{}`, found {} and {}",
                    op.text(),
                    l.dtype(),
                    r.dtype()
                ),
            );
            return None;
        }
        if matches!(op, BinOp::Shl | BinOp::Shr) && !l.dtype().is_integer() {
            self.error(
                "syntax-error",
                span,
                format!(
                    "expected integer operands of `{}`, found {}",
                    op.text(),
                    l.dtype()
                ),
            );
            return None;
        }
        if !self.same_dtype::<S>(&l, &r, &format!("operands of `{}`", op.text()), span) {
            return None;
        }
        Some(match op {
            BinOp::Add => l + r,
            BinOp::Sub => l - r,
            BinOp::Mul => l * r,
            BinOp::Mod => l.floormod(r),
            BinOp::Eq => l.eq_(r),
            BinOp::Ne => l.ne_(r),
            BinOp::Lt => l.lt(r),
            BinOp::Le => l.le(r),
            BinOp::Gt => l.gt(r),
            BinOp::Ge => l.ge(r),
            BinOp::And => l.and(r),
            BinOp::Or => l.or(r),
            BinOp::Shl => PrimExpr::call(l.dtype(), "shift_left", vec![l, r]),
            BinOp::Shr => PrimExpr::call(l.dtype(), "shift_right", vec![l, r]),
            BinOp::Div | BinOp::FloorDiv | BinOp::Pow => {
                return S::div_or_pow(self, op, l, r, span)
            }
        })
    }

    /// Reports operands of different dtypes (TIR has no implicit casts);
    /// `what` names them ("operands of `+`").
    pub(super) fn same_dtype<S: ScalarSyntax>(
        &mut self,
        a: &PrimExpr,
        b: &PrimExpr,
        what: &str,
        span: Span,
    ) -> bool {
        if a.dtype() == b.dtype() {
            return true;
        }
        let hint = if S::CASTS { " (use `T.Cast`)" } else { "" };
        self.error(
            "syntax-error",
            span,
            format!(
                "expected {what} of one dtype, found `{a}` of {} and `{b}` of {}{hint}",
                a.dtype(),
                b.dtype()
            ),
        );
        false
    }

    pub(super) fn undefined_sym(&mut self, n: &str, span: Span) {
        self.error(
            "undefined-symbolic-var",
            span,
            format!(
                "expected a symbolic variable, found undefined `{n}` (declare it with a string dimension `\"{n}\"` in a parameter annotation or `{n} = T.int64()`)"
            ),
        );
    }

    /// `T.min(a, b)`, `T.max`, `T.floordiv`, `T.floormod`, the syntax's own
    /// calls, and typed literals `T.int64(3)`, `T.float32(1.5)`,
    /// `T.bool(True)`.
    fn scalar_call<S: ScalarSyntax>(
        &mut self,
        s: &mut S,
        e: &syntax::Expr,
        func: &syntax::Expr,
        args: &[syntax::Expr],
        kwargs: &[(syntax::Ident, syntax::Expr)],
    ) -> Lowered<PrimExpr> {
        let Some(path) = func.dotted() else {
            self.error(
                "syntax-error",
                e.span,
                format!("expected a scalar expression, found {}", e.describe()),
            );
            return None;
        };
        if let Some((k, _)) = kwargs.first() {
            self.error(
                "syntax-error",
                k.span,
                format!(
                    "expected positional arguments to `{path}`, found `{}=`",
                    k.name
                ),
            );
            return None;
        }
        let Some(name) = path.strip_prefix("T.").map(str::to_string) else {
            self.error(
                "syntax-error",
                e.span,
                format!("expected a scalar expression, found a call of `{path}`"),
            );
            return None;
        };
        let c = ScalarCall {
            e,
            func,
            path,
            args,
        };
        match name.as_str() {
            "min" | "max" | "floordiv" | "floormod" => {
                if !c.arity(self, 2) {
                    return None;
                }
                let a = self.scalar(s, &args[0]);
                let b = self.scalar(s, &args[1]);
                let (a, b) = unify::<S>(a?, b?);
                if !self.same_dtype::<S>(&a, &b, &format!("arguments of `{}`", c.path), e.span) {
                    return None;
                }
                Some(match name.as_str() {
                    "min" => a.min(b),
                    "max" => a.max(b),
                    "floordiv" => a.floordiv(b),
                    _ => a.floormod(b),
                })
            }
            _ => match s.call(self, &c, &name) {
                Some(v) => v,
                None => self.typed_literal(s, &c, &name),
            },
        }
    }

    /// `T.Select(c, t, f)` in Relax.
    fn relax_select(&mut self, c: &ScalarCall<'_>) -> Lowered<PrimExpr> {
        if !c.arity(self, 3) {
            return None;
        }
        let cond = self.prim(&c.args[0]);
        let t = self.prim(&c.args[1]);
        let f = self.prim(&c.args[2]);
        let (t, f) = unify::<RelaxScalars>(t?, f?);
        let what = format!("arguments of `{}`", c.path);
        if !self.same_dtype::<RelaxScalars>(&t, &f, &what, c.e.span) {
            return None;
        }
        Some(PrimExpr::select(cond?, t, f))
    }

    /// `T.int32(3)`: a literal of the dtype `name` (or an expression that
    /// already has it, or with casts a cast to it).
    fn typed_literal<S: ScalarSyntax>(
        &mut self,
        s: &mut S,
        c: &ScalarCall<'_>,
        name: &str,
    ) -> Lowered<PrimExpr> {
        let path = &c.path;
        let Ok(dtype) = name.parse::<DataType>() else {
            self.error(
                "syntax-error",
                c.func.span,
                format!("expected {}, found `{path}`", S::expected_calls()),
            );
            return None;
        };
        if c.args.is_empty() {
            self.error(
                "syntax-error",
                c.e.span,
                format!(
                    "expected a value in `{path}(…)`, found none (a declaration `n = {path}()` must be its own statement)"
                ),
            );
            return None;
        }
        if !c.arity(self, 1) {
            return None;
        }
        let a = &c.args[0];
        // TVM writes the non-finite floats as strings: `T.float32("-inf")`.
        if let (syntax::ExprKind::Str(text), true) = (&a.kind, dtype.is_float()) {
            let v = match text.trim() {
                "inf" | "+inf" => f64::INFINITY,
                "-inf" => f64::NEG_INFINITY,
                "nan" | "+nan" | "-nan" => f64::NAN,
                other => match other.parse::<f64>() {
                    Ok(v) => v,
                    Err(_) => {
                        self.error(
                            "syntax-error",
                            a.span,
                            format!("expected a float such as \"inf\", \"-inf\", \"nan\" or \"1.5\" in `{path}(…)`, found {text:?}"),
                        );
                        return None;
                    }
                },
            };
            return Some(S::float(dtype, v));
        }
        let v = self.scalar(s, a)?;
        let mismatch = |this: &mut Self, what: String| {
            this.error(
                "syntax-error",
                a.span,
                format!("expected a literal of dtype {dtype} in `{path}(…)`, found {what}"),
            );
            None
        };
        match v.kind() {
            PrimExprKind::IntImm(i) if dtype.is_bool() => Some(PrimExpr::bool(*i != 0)),
            PrimExprKind::IntImm(i) if dtype.is_float() => Some(S::float(dtype, *i as f64)),
            PrimExprKind::IntImm(i) if dtype.is_integer() => {
                if !int_fits(*i, dtype) {
                    return mismatch(self, format!("`{i}`, which is out of range"));
                }
                Some(PrimExpr::int_of(dtype, *i))
            }
            PrimExprKind::FloatImm(f) if dtype.is_float() => Some(S::float(dtype, *f)),
            _ if S::CASTS => Some(v.cast(dtype)),
            _ if v.dtype() == dtype => Some(v),
            PrimExprKind::IntImm(i) => mismatch(self, format!("`{i}`")),
            _ => mismatch(
                self,
                format!("`{v}` of dtype {} (casts are not supported)", v.dtype()),
            ),
        }
    }

    /// A dimension written as a string: `"n"` (declared if new) or an
    /// expression such as `"n * 2"` over declared variables.
    pub(super) fn prim_string(&mut self, s: &str, span: Span, declare: bool) -> Lowered<PrimExpr> {
        if is_identifier(s) {
            if let Some(v) = self.lookup_sym(s) {
                return Some(PrimExpr::var(&v));
            }
            if declare {
                return Some(PrimExpr::var(&self.declare_sym(s, DataType::i64())));
            }
        }
        // Map spans inside the string back to the source when the literal is
        // written without escapes; otherwise point at the whole literal.
        let raw = self.src.get(span.lo..span.hi).unwrap_or("");
        let offset = if raw.len() == s.len() + 2 && raw.get(1..raw.len() - 1) == Some(s) {
            Some(span.lo + 1)
        } else {
            None
        };
        let (tokens, lex_errors) = tokenize(s);
        let fix = |sp: Span| match offset {
            Some(o) => Span::new(sp.lo + o, sp.hi + o),
            None => span,
        };
        if let Some(d) = lex_errors.into_iter().next() {
            let sp = d.span.map_or(span, fix);
            self.error(
                "syntax-error",
                sp,
                format!("in a dimension string: {}", d.message),
            );
            return None;
        }
        let parsed = match parse_expression(&tokens) {
            Ok(e) => e,
            Err(d) => {
                let sp = d.span.map_or(span, fix);
                self.error(
                    "syntax-error",
                    sp,
                    format!("in a dimension string: {}", d.message),
                );
                return None;
            }
        };
        let parsed = remap_spans(parsed, &fix);
        self.prim(&parsed)
    }

    /// One dimension of a tensor or shape annotation. A string declares a
    /// new symbolic variable when it is a lone new name; so does a bare new
    /// name when `declare_bare` (a `match_cast` pattern).
    pub(super) fn dim(&mut self, e: &syntax::Expr, declare_bare: bool) -> Lowered<PrimExpr> {
        match &e.kind {
            SK::Str(s) => self.prim_string(s, e.span, true),
            SK::Name(n) if declare_bare && self.lookup_sym(n).is_none() => {
                Some(PrimExpr::var(&self.declare_sym(n, DataType::i64())))
            }
            _ => {
                let p = self.prim(e)?;
                if !p.dtype().is_integer() || p.dtype().is_bool() {
                    self.error(
                        "syntax-error",
                        e.span,
                        format!(
                            "expected an integer dimension, found `{p}` of dtype {}",
                            p.dtype()
                        ),
                    );
                    return None;
                }
                Some(p)
            }
        }
    }

    /// A call or function attribute value.
    pub(super) fn attr_value(&mut self, e: &syntax::Expr) -> Lowered<AttrValue> {
        match &e.kind {
            SK::Int(v) => Some(AttrValue::Int(*v)),
            SK::Float(v) => Some(AttrValue::Float(*v)),
            SK::Bool(b) => Some(AttrValue::Bool(*b)),
            SK::Str(s) => Some(AttrValue::Str(s.clone())),
            SK::None => Some(AttrValue::None),
            SK::List(items) | SK::Tuple(items) => self
                .lower_all(items, Self::attr_value)
                .map(AttrValue::Array),
            SK::Unary(UnOp::Neg, inner) if matches!(inner.kind, SK::Int(_) | SK::Float(_)) => {
                match inner.kind {
                    SK::Int(v) => match v.checked_neg() {
                        Some(n) => Some(AttrValue::Int(n)),
                        None => self.prim(e).map(AttrValue::PrimExpr),
                    },
                    SK::Float(v) => Some(AttrValue::Float(-v)),
                    _ => None,
                }
            }
            SK::Dict(_) => {
                self.error(
                    "syntax-error",
                    e.span,
                    "expected an attribute value (a number, string, bool, None, list or scalar expression), found a dict",
                );
                None
            }
            SK::Call { func, args, .. }
                if func.dotted().as_deref() == Some("T.bool") && args.len() == 1 =>
            {
                match args[0].kind {
                    SK::Bool(b) => Some(AttrValue::Bool(b)),
                    _ => self.prim(e).map(AttrValue::PrimExpr),
                }
            }
            _ => self.prim(e).map(AttrValue::PrimExpr),
        }
    }
}

/// The operands with an untyped literal given the other's dtype, where the
/// syntax `S` allows it (`m + 1` with `m: int32` adds an `int32` one).
pub(super) fn unify<S: ScalarSyntax>(l: PrimExpr, r: PrimExpr) -> (PrimExpr, PrimExpr) {
    if let Some(l2) = S::retype(&l, r.dtype()) {
        return (l2, r);
    }
    if let Some(r2) = S::retype(&r, l.dtype()) {
        return (l, r2);
    }
    (l, r)
}

/// An `int64` integer literal as a literal of the integer dtype `dt`, when
/// that is another dtype that can hold it.
pub(super) fn retype_int(lit: &PrimExpr, dt: DataType) -> Option<PrimExpr> {
    let v = lit.as_int()?;
    (lit.dtype() == DataType::i64()
        && dt != DataType::i64()
        && dt.is_integer()
        && !dt.is_bool()
        && int_fits(v, dt))
    .then(|| PrimExpr::int_of(dt, v))
}

/// Whether `v` is representable in the integer dtype `dt`.
pub(super) fn int_fits(v: i64, dt: DataType) -> bool {
    let bits = u32::from(dt.bits());
    if dt.is_bool() {
        return v == 0 || v == 1;
    }
    if dt.is_uint() {
        return v >= 0 && (bits >= 64 || v < (1i64 << bits));
    }
    if bits >= 64 {
        return true;
    }
    if bits == 0 {
        return false;
    }
    let half = 1i64 << (bits - 1);
    (-half..half).contains(&v)
}

/// Whether `s` is a Python identifier.
pub(super) fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
        && !syntax::is_keyword(s)
        && !matches!(s, "True" | "False" | "None")
}

/// `e` with every span mapped through `fix`.
fn remap_spans(e: syntax::Expr, fix: &dyn Fn(Span) -> Span) -> syntax::Expr {
    let span = fix(e.span);
    let kind = match e.kind {
        SK::Attr(b, mut a) => {
            a.span = fix(a.span);
            SK::Attr(Box::new(remap_spans(*b, fix)), a)
        }
        SK::Call { func, args, kwargs } => SK::Call {
            func: Box::new(remap_spans(*func, fix)),
            args: args.into_iter().map(|a| remap_spans(a, fix)).collect(),
            kwargs: kwargs
                .into_iter()
                .map(|(mut k, v)| {
                    k.span = fix(k.span);
                    (k, remap_spans(v, fix))
                })
                .collect(),
        },
        SK::Tuple(items) => SK::Tuple(items.into_iter().map(|a| remap_spans(a, fix)).collect()),
        SK::List(items) => SK::List(items.into_iter().map(|a| remap_spans(a, fix)).collect()),
        SK::Dict(items) => SK::Dict(
            items
                .into_iter()
                .map(|(k, v)| (remap_spans(k, fix), remap_spans(v, fix)))
                .collect(),
        ),
        SK::Subscript(b, i) => SK::Subscript(
            Box::new(remap_spans(*b, fix)),
            Box::new(remap_spans(*i, fix)),
        ),
        SK::Binary(op, l, r) => SK::Binary(
            op,
            Box::new(remap_spans(*l, fix)),
            Box::new(remap_spans(*r, fix)),
        ),
        SK::Unary(op, a) => SK::Unary(op, Box::new(remap_spans(*a, fix))),
        other => other,
    };
    syntax::Expr { kind, span }
}
