//! Lowering of `@T.prim_func` definitions to [`PrimFunc`] signatures.
//!
//! Only the signature is represented for now (see [`crate::tir`]), so the
//! body may hold just `T.func_attr({…})`, symbolic variable declarations
//! (`n = T.int64()`), `T.evaluate(0)` and `pass`; a loop-level body is
//! reported as unsupported rather than silently dropped.
//!
//! Parameters are buffers (`A: T.Buffer((n, 4), "float32")`, dtype
//! `float32` when omitted) or scalars (`n: T.int64`). Scalar parameters are
//! declared before any buffer shape is read, so `(A: T.Buffer((n,)), n: T.int64)`
//! refers to the scalar `n`.

use super::lower::{Frame, Lowered, Lowerer};
use super::sinfo::Args;
use super::syntax::{ExprKind as SK, FuncDef, StmtKind};
use crate::ir::function::attr;
use crate::ir::Attrs;
use crate::tir::{PrimFunc, PrimFuncParam};
use relax_runtime::DataType;

impl Lowerer<'_> {
    /// Lowers a `@T.prim_func` definition.
    pub(super) fn prim_func(&mut self, f: &FuncDef) -> Lowered<PrimFunc> {
        let errors_before = self.errors.len();
        let mut private = false;
        for d in &f.decorators {
            if let Some((_, _, kwargs)) = d.as_call() {
                for (k, v) in kwargs {
                    match (k.name.as_str(), &v.kind) {
                        ("private", SK::Bool(b)) => private = *b,
                        ("check_well_formed", _) => {}
                        _ => self.error(
                            "syntax-error",
                            k.span,
                            format!("expected `private=True` or `private=False` in `@T.prim_func(…)`, found `{}`", k.name),
                        ),
                    }
                }
            }
        }
        self.frames.push(Frame {
            is_function: true,
            ..Frame::default()
        });
        self.tir_prelude(f);
        // Scalar parameters first: buffer shapes may refer to them.
        let mut scalars = Vec::new();
        for p in &f.params {
            let Some(a) = &p.annotation else { continue };
            if let Some(dt) = scalar_annotation(a) {
                match dt {
                    Ok(dt) => {
                        let v = self.declare_sym(&p.name.name, dt);
                        scalars.push((p.name.name.clone(), v));
                    }
                    Err(found) => self.error(
                        "invalid-dtype",
                        a.span,
                        format!("expected a scalar type such as `T.int64`, found `T.{found}`"),
                    ),
                }
            }
        }
        let mut params = Vec::new();
        for p in &f.params {
            let Some(a) = &p.annotation else {
                self.error(
                    "missing-annotation",
                    p.name.span,
                    format!(
                        "expected a `T.Buffer(…)` or scalar type annotation on parameter `{}`, found none",
                        p.name.name
                    ),
                );
                continue;
            };
            if scalar_annotation(a).is_some() {
                if let Some((_, v)) = scalars.iter().find(|(n, _)| *n == p.name.name) {
                    params.push(PrimFuncParam::Scalar(v.clone()));
                }
                continue;
            }
            let Some((path, args, kwargs)) = a.as_call() else {
                self.error(
                    "unknown-struct-info",
                    a.span,
                    format!("expected `T.Buffer(shape, dtype)` or a scalar type such as `T.int64`, found {}", a.describe()),
                );
                continue;
            };
            if path != "T.Buffer" {
                self.error(
                    "unknown-struct-info",
                    a.span,
                    format!("expected `T.Buffer(shape, dtype)` or a scalar type such as `T.int64`, found a call of `{path}`"),
                );
                continue;
            }
            let mut args = Args::new(args, kwargs);
            let shape = args.take("shape", 0);
            let dtype = args.take("dtype", 0);
            if let Some(extra) = args.positional.first() {
                self.error(
                    "syntax-error",
                    extra.span,
                    format!(
                        "expected at most a shape and a dtype in `T.Buffer`, found {}",
                        extra.describe()
                    ),
                );
            }
            for (k, _) in &args.kwargs {
                self.error(
                    "unsupported-syntax",
                    k.span,
                    format!(
                        "expected `shape` or `dtype` in `T.Buffer`, found `{}`",
                        k.name
                    ),
                );
            }
            let dtype = match dtype.map(|d| (d, &d.kind)) {
                None => Some(DataType::f32()),
                Some((_, SK::Str(s))) => match s.parse::<DataType>() {
                    Ok(d) => Some(d),
                    Err(e) => {
                        self.error("invalid-dtype", a.span, e.to_string());
                        None
                    }
                },
                Some((d, _)) => {
                    self.error(
                        "invalid-dtype",
                        d.span,
                        format!(
                            "expected a dtype string such as \"float32\", found {}",
                            d.describe()
                        ),
                    );
                    None
                }
            };
            let dims = match shape.map(|s| (s, &s.kind)) {
                Some((_, SK::Tuple(items) | SK::List(items))) => {
                    let mut out = Vec::new();
                    let mut ok = true;
                    for d in items {
                        match self.dim(d, false) {
                            Some(p) => out.push(p),
                            None => ok = false,
                        }
                    }
                    ok.then_some(out)
                }
                Some((s, _)) => {
                    self.error(
                        "syntax-error",
                        s.span,
                        format!(
                            "expected a shape tuple such as `(n, 4)`, found {}",
                            s.describe()
                        ),
                    );
                    None
                }
                None => {
                    self.error(
                        "syntax-error",
                        a.span,
                        "expected a shape in `T.Buffer(…)`, found none",
                    );
                    None
                }
            };
            if let (Some(shape), Some(dtype)) = (dims, dtype) {
                params.push(PrimFuncParam::Buffer(crate::tir::Buffer::new(
                    p.name.name.clone(),
                    shape,
                    dtype,
                )));
            }
        }
        let mut attrs = Attrs::new();
        if !private {
            attrs = attrs.with(attr::GLOBAL_SYMBOL, f.name.name.as_str());
        }
        for s in &f.body {
            if let Some(pairs) = self.func_attr_stmt(s, "T.func_attr") {
                for (k, v) in pairs {
                    attrs = attrs.with(&k, v);
                }
                continue;
            }
            match &s.kind {
                StmtKind::Pass => {}
                StmtKind::Expr(e) if matches!(e.kind, SK::Str(_)) => {}
                StmtKind::Expr(e)
                    if e.as_call().is_some_and(|(p, args, _)| {
                        p == "T.evaluate" && args.len() == 1 && matches!(args[0].kind, SK::Int(0))
                    }) => {}
                StmtKind::Assign { value, .. }
                    if value.as_call().is_some_and(|(p, a, k)| {
                        p.starts_with("T.") && a.is_empty() && k.is_empty()
                    }) => {}
                _ => self.error(
                    "unsupported-syntax",
                    s.span,
                    "expected `T.evaluate(0)` or `pass` as a prim_func body (loop-level bodies are not supported yet), found another statement",
                ),
            }
        }
        self.frames.pop();
        (self.errors.len() == errors_before).then_some(PrimFunc {
            params,
            body: crate::tir::Stmt::no_op(),
            attrs,
        })
    }

    /// Declares `n = T.int64()` variables of a prim_func body.
    fn tir_prelude(&mut self, f: &FuncDef) {
        for s in &f.body {
            let StmtKind::Assign { targets, value, .. } = &s.kind else {
                continue;
            };
            let Some((path, [], [])) = value.as_call() else {
                continue;
            };
            let Some(name) = path.strip_prefix("T.") else {
                continue;
            };
            let [t] = targets.as_slice() else { continue };
            match name.parse::<DataType>() {
                Ok(dt) => {
                    self.declare_sym(&t.name, dt);
                }
                Err(_) => self.error(
                    "invalid-dtype",
                    value.span,
                    format!("expected a data type such as `T.int64()`, found `{path}()`"),
                ),
            }
        }
    }
}

/// `T.int64` (also `T.int64()`): the scalar dtype, if `a` names one.
fn scalar_annotation(a: &crate::parser::syntax::Expr) -> Option<Result<DataType, String>> {
    let path = match &a.kind {
        SK::Attr(..) => a.dotted()?,
        SK::Call { func, args, kwargs } if args.is_empty() && kwargs.is_empty() => func.dotted()?,
        _ => return None,
    };
    let name = path.strip_prefix("T.")?;
    if name == "Buffer" {
        return None;
    }
    Some(name.parse().map_err(|_| name.to_string()))
}
