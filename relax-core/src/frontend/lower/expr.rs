//! Expressions: variables, literals, tuples, fields and `if`.

use super::super::errors::{
    describe_expr, line_col, nearest, quoted, unsupported, unsupported_at, Failed, Lowering,
};
use super::super::{FrontendError, SpanRange};
use super::{if_head, r_path, FnCx, Frame, Slot};
use crate::ir::{Expr, Tensor};

impl FnCx<'_> {
    // ----- expressions ----------------------------------------------------

    /// Lowers `e` to a normalized expression (a leaf, or a non-leaf over
    /// leaves) carrying its StructInfo.
    pub(in crate::frontend) fn expr(&mut self, e: &syn::Expr) -> Lowering<Expr> {
        use syn::Expr as E;
        match e {
            E::Paren(p) => self.expr(&p.expr),
            E::Group(g) => self.expr(&g.expr),
            E::Lit(l) => self.literal(&l.lit, false, SpanRange::of(e)),
            E::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => match &*u.expr {
                E::Lit(l) => self.literal(&l.lit, true, SpanRange::of(e)),
                other => Err(self.error(unsupported(
                    u,
                    "a negative literal such as `-1.0` (use `R::negative(x)` for values)",
                    &describe_expr(other),
                ))),
            },
            E::Path(p) => match p.path.get_ident() {
                Some(ident) if p.qself.is_none() => self.name_value(ident),
                _ => Err(self.error(unsupported(
                    p,
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
                self.normalize(Expr::tuple(fields), SpanRange::of(e))
            }
            E::Field(f) => {
                let syn::Member::Unnamed(index) = &f.member else {
                    return Err(self.error(unsupported(
                        &f.member,
                        "a tuple field such as `t.0`",
                        &quoted(&f.member),
                    )));
                };
                let base = self.leaf(&f.base)?;
                self.normalize(
                    Expr::tuple_get_item(base, index.index as usize),
                    SpanRange::of(e),
                )
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
                self.normalize(Expr::shape(dims), SpanRange::of(e))
            }
            E::Assign(a) => Err(self.error(unsupported(
                a,
                "an expression (`key = value` is only allowed as a keyword argument of a call)",
                &describe_expr(e),
            ))),
            E::Macro(m) if r_path(&m.mac.path).is_some_and(|p| p == ["dataflow"]) => {
                Err(self.error(FrontendError::spanned(
                    m,
                    "`R::dataflow!` is a statement, not a value: the value after it is the block's result",
                )))
            }
            other => Err(self.error(unsupported(
                other,
                "a relax expression (a call, a variable, a literal, a tuple, `t.0` or `if`)",
                &describe_expr(other),
            ))),
        }
    }

    /// Lowers `e` to a leaf, binding it to a fresh variable if needed.
    pub(super) fn leaf(&mut self, e: &syn::Expr) -> Lowering<Expr> {
        let v = self.expr(e)?;
        self.bind_leaf(v, SpanRange::of(e))
    }

    /// `v` itself if it is a leaf, else a fresh variable bound to it; an
    /// error of the builder lands on `range`.
    pub(super) fn bind_leaf(&mut self, v: Expr, range: SpanRange) -> Lowering<Expr> {
        if v.is_leaf() {
            return Ok(v);
        }
        // A nested call's temporary is named after its op (as TVM's
        // `emit_te` names results), so a message about it reads
        // `permute_dims is (785, 128)` rather than naming a made-up `lv1`.
        let hint = v
            .call_op_name()
            .and_then(|n| n.rsplit('.').next())
            .unwrap_or("lv")
            .to_string();
        match self.bb.emit_named(v, &hint) {
            Ok(var) => Ok(Expr::var(&var)),
            Err(err) => Err(self.report(err, range)),
        }
    }

    /// Fills in the StructInfo of `e`; an inference error lands on `range`
    /// (the tokens `e` was lowered from).
    pub(super) fn normalize(&mut self, e: Expr, range: SpanRange) -> Lowering<Expr> {
        match self.bb.normalize(e) {
            Ok(v) => Ok(v),
            Err(err) => Err(self.report(err, range)),
        }
    }

    pub(super) fn name_value(&mut self, ident: &syn::Ident) -> Lowering<Expr> {
        let name = ident.to_string();
        match self.lookup(&name).cloned() {
            Some(Slot::Var(v)) => {
                if self.poisoned.contains(&v) {
                    return Err(Failed);
                }
                return Ok(Expr::var(&v));
            }
            Some(Slot::Escaped(block)) => {
                let block_at = match line_col(block) {
                    Some((l, c)) => format!("the block at {l}:{c}"),
                    None => "an earlier `R::dataflow!` block".to_string(),
                };
                return Err(self.error(FrontendError::spanned(
                    ident,
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
            return Err(self.error(FrontendError::spanned(
                ident,
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
        Err(self.error(FrontendError::spanned(ident, message)))
    }

    /// `1.0` (f32), `2` (i64), `1.0f64`, `2i32`, `true`: rank-0 constants.
    /// `range` covers the literal and its `-`, if `negative`.
    fn literal(&mut self, lit: &syn::Lit, negative: bool, range: SpanRange) -> Lowering<Expr> {
        let bad = |what: String| FrontendError::new(range, what);
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
            other => Err(unsupported_at(
                range,
                "a number or bool literal",
                &quoted(other),
            )),
        };
        match tensor {
            Ok(t) => self.normalize(Expr::constant(t), range),
            Err(e) => Err(self.error(e)),
        }
    }

    /// `if c { …; a } else { …; b }` as a value.
    fn if_expr(&mut self, i: &syn::ExprIf, whole: &syn::Expr) -> Lowering<Expr> {
        if self.in_dataflow {
            return Err(self.error(FrontendError::new(
                if_head(i),
                "`if` is not allowed inside `R::dataflow!`: end the block before it",
            )));
        }
        let cond = self.leaf(&i.cond);
        let Some((_, else_expr)) = &i.else_branch else {
            let _ = self.branch(SpanRange::of(whole), |cx| cx.block_value(&i.then_branch));
            return Err(self.error(FrontendError::new(
                i.then_branch.brace_token.span.close(),
                "expected an `else` branch: an `if` is a value, so both branches are needed",
            )));
        };
        let whole = SpanRange::of(whole);
        let t = self.branch(whole, |cx| cx.block_value(&i.then_branch));
        let f = self.branch(whole, |cx| match &**else_expr {
            syn::Expr::Block(b) => cx.block_value(&b.block),
            other => cx.expr(other),
        });
        let (cond, t, f) = (cond?, t?, f?);
        self.normalize(Expr::if_(cond, t, f), whole)
    }

    /// Lowers one `if` branch in a scope of its own; returns its `SeqExpr`.
    /// `range` is the `if`'s, for the builder's own errors.
    fn branch(
        &mut self,
        range: SpanRange,
        body: impl FnOnce(&mut Self) -> Lowering<Expr>,
    ) -> Lowering<Expr> {
        if let Err(err) = self.bb.begin_inner_scope() {
            return Err(self.report(err, range));
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
                Err(self.report(err, range))
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
