//! Lowering of scalar expressions: `PrimExpr`s (shape dimensions, prim
//! values, TIR attributes) and attribute values.
//!
//! 1. Names are symbolic variables, looked up in the function scopes;
//!    `True`/`False` are `bool` literals, integers `int64`, floats `float32`.
//! 2. Python precedence comes from the syntax tree; `//` and `%` are TIR's
//!    floor division and modulo. `/` is rejected on integers (it is true
//!    division in Python) and `**` is not an expression TIR has.
//! 3. An untyped integer literal next to a typed operand takes its dtype
//!    (`m + 1` with `m: int32` adds an `int32` one), as TVM does.
//! 4. A string standing for a dimension (`"n"`, `"n * 2"`) is parsed a second
//!    time; its spans are mapped back into the string.

use super::lexer::tokenize;
use super::lower::{Lowered, Lowerer};
use super::syntax::{self, parse_expression, BinOp, ExprKind as SK, UnOp};
use crate::ir::{AttrValue, PrimExpr, PrimExprKind};
use relax_runtime::{DataType, Span};

impl Lowerer<'_> {
    /// A scalar expression; every name must be a declared symbolic variable.
    pub(super) fn prim(&mut self, e: &syntax::Expr) -> Lowered<PrimExpr> {
        match &e.kind {
            SK::Int(v) => Some(PrimExpr::int(*v)),
            SK::Float(v) => Some(PrimExpr::float(DataType::f32(), *v)),
            SK::Bool(b) => Some(PrimExpr::bool(*b)),
            SK::Name(n) => match self.lookup_sym(n) {
                Some(v) => Some(PrimExpr::var(&v)),
                None if self.declare_all_syms => {
                    Some(PrimExpr::var(&self.declare_sym(n, DataType::i64())))
                }
                None => {
                    self.undefined_sym(n, e.span);
                    None
                }
            },
            SK::Str(s) => self.prim_string(s, e.span, false),
            SK::Unary(op, a) => {
                let a = self.prim(a)?;
                Some(match op {
                    UnOp::Pos => a,
                    UnOp::Not => !a,
                    UnOp::Neg => match a.kind() {
                        PrimExprKind::IntImm(v) if !a.dtype().is_bool() => match v.checked_neg() {
                            Some(n) => PrimExpr::int_of(a.dtype(), n),
                            None => -a,
                        },
                        PrimExprKind::FloatImm(v) => PrimExpr::float(a.dtype(), -v),
                        _ => -a,
                    },
                })
            }
            SK::Binary(op, l, r) => {
                let l = self.prim(l);
                let r = self.prim(r);
                let (l, r) = unify_literal(l?, r?);
                let logical = matches!(op, BinOp::And | BinOp::Or);
                if logical && !(l.dtype().is_bool() && r.dtype().is_bool()) {
                    self.error(
                        "syntax-error",
                        e.span,
                        format!(
                            "expected bool operands of `{}`, found {} and {}",
                            op.text(),
                            l.dtype(),
                            r.dtype()
                        ),
                    );
                    return None;
                }
                if !self.same_dtype(&l, &r, op.text(), e.span) {
                    return None;
                }
                Some(match op {
                    BinOp::Add => l + r,
                    BinOp::Sub => l - r,
                    BinOp::Mul => l * r,
                    BinOp::FloorDiv => l.floordiv(r),
                    BinOp::Mod => l.floormod(r),
                    BinOp::Eq => l.eq_(r),
                    BinOp::Ne => l.ne_(r),
                    BinOp::Lt => l.lt(r),
                    BinOp::Le => l.le(r),
                    BinOp::Gt => l.gt(r),
                    BinOp::Ge => l.ge(r),
                    BinOp::And => l.and(r),
                    BinOp::Or => l.or(r),
                    BinOp::Div | BinOp::Pow => {
                        let hint = if *op == BinOp::Div {
                            " (use `//` for floor division)"
                        } else {
                            ""
                        };
                        self.error(
                            "unsupported-syntax",
                            e.span,
                            format!(
                                "expected one of `+ - * // %` or a comparison, found `{}`{hint}",
                                op.text()
                            ),
                        );
                        return None;
                    }
                })
            }
            SK::Call { func, args, kwargs } => self.prim_call(e, func, args, kwargs),
            _ => {
                self.error(
                    "syntax-error",
                    e.span,
                    format!("expected a scalar expression, found {}", e.describe()),
                );
                None
            }
        }
    }

    /// Reports operands of different dtypes (TIR has no implicit casts).
    fn same_dtype(&mut self, a: &PrimExpr, b: &PrimExpr, op: &str, span: Span) -> bool {
        if a.dtype() == b.dtype() {
            return true;
        }
        self.error(
            "syntax-error",
            span,
            format!(
                "expected operands of `{op}` of one dtype, found `{a}` of {} and `{b}` of {}",
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

    /// `T.min(a, b)`, `T.max`, `T.Select`, `T.floordiv`, `T.floormod`,
    /// `T.int64(3)`, `T.float32(1.5)`, `T.bool(True)`.
    fn prim_call(
        &mut self,
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
        let Some(name) = path.strip_prefix("T.") else {
            self.error(
                "syntax-error",
                e.span,
                format!("expected a scalar expression, found a call of `{path}`"),
            );
            return None;
        };
        let arity = |n: usize, this: &mut Self| {
            if args.len() != n {
                this.error(
                    "syntax-error",
                    e.span,
                    format!(
                        "expected {n} argument{} to `{path}`, found {}",
                        if n == 1 { "" } else { "s" },
                        args.len()
                    ),
                );
                false
            } else {
                true
            }
        };
        match name {
            "min" | "max" | "floordiv" | "floormod" => {
                if !arity(2, self) {
                    return None;
                }
                let a = self.prim(&args[0]);
                let b = self.prim(&args[1]);
                let (a, b) = unify_literal(a?, b?);
                if !self.same_dtype(&a, &b, &path, e.span) {
                    return None;
                }
                Some(match name {
                    "min" => a.min(b),
                    "max" => a.max(b),
                    "floordiv" => a.floordiv(b),
                    _ => a.floormod(b),
                })
            }
            "Select" => {
                if !arity(3, self) {
                    return None;
                }
                let c = self.prim(&args[0]);
                let t = self.prim(&args[1]);
                let f = self.prim(&args[2]);
                let (t, f) = unify_literal(t?, f?);
                if !self.same_dtype(&t, &f, &path, e.span) {
                    return None;
                }
                Some(PrimExpr::select(c?, t, f))
            }
            _ => {
                let Ok(dtype) = name.parse::<DataType>() else {
                    self.error(
                        "syntax-error",
                        func.span,
                        format!(
                            "expected `T.min`, `T.max`, `T.Select` or a dtype such as `T.int64`, found `{path}`"
                        ),
                    );
                    return None;
                };
                if args.is_empty() {
                    self.error(
                        "syntax-error",
                        e.span,
                        format!(
                            "expected a value in `{path}(…)`, found none (a declaration `n = {path}()` must be its own statement)"
                        ),
                    );
                    return None;
                }
                if !arity(1, self) {
                    return None;
                }
                self.typed_literal(&args[0], dtype, &path)
            }
        }
    }

    /// `T.int32(3)`: a literal of the given dtype (or an expression that
    /// already has it).
    fn typed_literal(
        &mut self,
        a: &syntax::Expr,
        dtype: DataType,
        path: &str,
    ) -> Lowered<PrimExpr> {
        let v = self.prim(a)?;
        let mismatch = |this: &mut Self, what: String| {
            this.error(
                "syntax-error",
                a.span,
                format!("expected a literal of dtype {dtype} in `{path}(…)`, found {what}"),
            );
            None
        };
        match v.kind() {
            PrimExprKind::IntImm(i) => {
                if dtype.is_bool() {
                    Some(PrimExpr::bool(*i != 0))
                } else if dtype.is_float() {
                    Some(PrimExpr::float(dtype, *i as f64))
                } else if dtype.is_integer() {
                    if !int_fits(*i, dtype) {
                        return mismatch(self, format!("`{i}`, which is out of range"));
                    }
                    Some(PrimExpr::int_of(dtype, *i))
                } else {
                    mismatch(self, format!("`{i}`"))
                }
            }
            PrimExprKind::FloatImm(f) if dtype.is_float() => Some(PrimExpr::float(dtype, *f)),
            _ if v.dtype() == dtype => Some(v),
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
            SK::List(items) | SK::Tuple(items) => {
                let mut out = Vec::new();
                let mut ok = true;
                for it in items {
                    match self.attr_value(it) {
                        Some(v) => out.push(v),
                        None => ok = false,
                    }
                }
                ok.then_some(AttrValue::Array(out))
            }
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

/// Gives an untyped `int64` literal the integer dtype of the other operand.
fn unify_literal(l: PrimExpr, r: PrimExpr) -> (PrimExpr, PrimExpr) {
    let retype = |lit: &PrimExpr, other: &PrimExpr| -> Option<PrimExpr> {
        let v = lit.as_int()?;
        let od = other.dtype();
        (lit.dtype() == DataType::i64()
            && od != DataType::i64()
            && od.is_integer()
            && !od.is_bool()
            && int_fits(v, od))
        .then(|| PrimExpr::int_of(od, v))
    };
    if let Some(l2) = retype(&l, &r) {
        return (l2, r);
    }
    if let Some(r2) = retype(&r, &l) {
        return (l, r2);
    }
    (l, r)
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
