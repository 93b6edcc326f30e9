//! Lowering of StructInfo annotations (`R.Tensor((n, 4), "float32")`, …).
//!
//! The accepted spellings are TVMScript's (see the `parser` module docs):
//! each `R.<Kind>` takes its fields positionally or by keyword, and the bare
//! `R.Tensor`, `R.Shape`, `R.Tuple`, `R.Object` mean "nothing known".
//!
//! Symbolic variables: a dimension written as a lone string (`"n"`) declares
//! `n` in the function's scope if it is new; [`Lowerer::declare_string_dims`]
//! does that for a whole annotation before it is lowered, so that
//! `(x: R.Tensor(("n * 2",)), y: R.Tensor(("n",)))` works in any order.

use super::lower::{Lowered, Lowerer};
use super::prim::is_identifier;
use super::syntax::{self, ExprKind as SK, Ident};
use crate::ir::{DeriveFunc, StructInfo, StructInfoKind, UNKNOWN_NDIM};
use relax_runtime::DataType;

/// The StructInfo kinds, for "expected …" messages.
const KINDS: &str = "R.Tensor, R.Shape, R.Prim, R.Tuple, R.Callable or R.Object";

impl Lowerer<'_> {
    /// Lowers an annotation. In a `match_cast` pattern (`declare_bare`), a
    /// bare unknown name standing alone as a dimension declares it.
    pub(super) fn struct_info(
        &mut self,
        e: &syntax::Expr,
        declare_bare: bool,
    ) -> Lowered<StructInfo> {
        let (path, args, kwargs): (String, &[syntax::Expr], &[(Ident, syntax::Expr)]) =
            match &e.kind {
                SK::Call { func, args, kwargs } => match func.dotted() {
                    Some(p) => (p, args, kwargs),
                    None => return self.unknown_struct_info(e),
                },
                SK::Attr(..) | SK::Name(_) => match e.dotted() {
                    Some(p) => (p, &[], &[]),
                    None => return self.unknown_struct_info(e),
                },
                _ => return self.unknown_struct_info(e),
            };
        let bare = !matches!(e.kind, SK::Call { .. });
        let mut a = Args::new(args, kwargs);
        let result = match path.as_str() {
            // TVM 0.27 calls the object StructInfo `R.Any`.
            "R.Object" | "R.Any" => Some(StructInfo::object()),
            // TVM 0.27 writes `R.Prim("int64")` as the TIR type `T.int64`.
            p if bare && p.starts_with("T.") && p[2..].parse::<DataType>().is_ok() => {
                p[2..].parse::<DataType>().ok().map(StructInfo::prim)
            }
            "R.Tensor" if bare => Some(StructInfo::tensor_ndim(UNKNOWN_NDIM, DataType::void())),
            "R.Tensor" => self.tensor(&mut a, declare_bare),
            "R.Shape" if bare => Some(StructInfo::shape_ndim(UNKNOWN_NDIM)),
            "R.Shape" => self.shape_sinfo(&mut a, declare_bare),
            "R.Prim" => self.prim_sinfo(&mut a, e, declare_bare),
            "R.Tuple" => {
                let fields: Vec<&syntax::Expr> = match a.positional.as_slice() {
                    [one] if matches!(one.kind, SK::List(_)) => match &one.kind {
                        SK::List(items) => items.iter().collect(),
                        _ => vec![],
                    },
                    _ => a.positional.to_vec(),
                };
                a.positional.clear();
                self.lower_all(fields, |this, f| this.struct_info(f, declare_bare))
                    .map(StructInfo::tuple)
            }
            "R.Callable" if bare => Some(StructInfo::opaque_func(
                DeriveFunc::Default,
                StructInfo::object(),
            )),
            "R.Callable" => self.callable(&mut a, e, declare_bare),
            _ => return self.unknown_struct_info(e),
        };
        self.finish_args(&a, &path);
        result
    }

    fn unknown_struct_info(&mut self, e: &syntax::Expr) -> Lowered<StructInfo> {
        let span = match &e.kind {
            SK::Call { func, .. } => func.span,
            _ => e.span,
        };
        self.error(
            "unknown-struct-info",
            span,
            format!(
                "expected a struct info such as {KINDS}, found {}",
                e.describe()
            ),
        );
        None
    }

    /// Reports arguments no form consumed.
    pub(super) fn finish_args(&mut self, a: &Args<'_>, path: &str) {
        if let Some(p) = a.positional.first() {
            self.error(
                "syntax-error",
                p.span,
                format!(
                    "expected fewer positional arguments to `{path}`, found {}",
                    p.describe()
                ),
            );
        }
        for (k, _) in &a.kwargs {
            self.error(
                "syntax-error",
                k.span,
                format!(
                    "expected a known keyword argument of `{path}`, found `{}`",
                    k.name
                ),
            );
        }
    }

    fn dtype_arg(&mut self, e: &syntax::Expr) -> Lowered<DataType> {
        match &e.kind {
            SK::None => Some(DataType::void()),
            _ => self.dtype_string(e),
        }
    }

    fn int_arg(&mut self, e: &syntax::Expr, what: &str) -> Lowered<i32> {
        let v = match &e.kind {
            SK::Int(v) => Some(*v),
            SK::Unary(syntax::UnOp::Neg, inner) => match inner.kind {
                SK::Int(v) => v.checked_neg(),
                _ => None,
            },
            _ => None,
        };
        match v.and_then(|v| i32::try_from(v).ok()).filter(|v| *v >= -1) {
            Some(v) => Some(v),
            None => {
                self.error(
                    "syntax-error",
                    e.span,
                    format!(
                        "expected {what} (an integer, -1 for unknown), found {}",
                        e.describe()
                    ),
                );
                None
            }
        }
    }

    /// A list (or tuple) of dimensions, `[n, 4]`.
    pub(super) fn dims(
        &mut self,
        e: &syntax::Expr,
        declare_bare: bool,
    ) -> Lowered<Vec<crate::ir::PrimExpr>> {
        let (SK::Tuple(items) | SK::List(items)) = &e.kind else {
            self.error(
                "syntax-error",
                e.span,
                format!(
                    "expected a list of dimensions such as `[n, 4]`, found {}",
                    e.describe()
                ),
            );
            return None;
        };
        self.lower_all(items, |this, d| this.dim(d, declare_bare))
    }

    /// `R.Tensor(shape?, dtype?, ndim=…)`
    fn tensor(&mut self, a: &mut Args<'_>, declare_bare: bool) -> Lowered<StructInfo> {
        // A leading string is the dtype: `R.Tensor("float32", ndim=2)`.
        let (shape, dtype) = match a.positional.first().map(|p| &p.kind) {
            Some(SK::Str(_)) => (a.take("shape", usize::MAX), a.take("dtype", 0)),
            _ => (a.take("shape", 0), a.take("dtype", 0)),
        };
        let ndim = a.take("ndim", usize::MAX);
        if let Some((k, _)) = a.kwargs.iter().find(|(k, _)| k.name == "vdevice") {
            self.error(
                "unsupported-syntax",
                k.span,
                "expected no `vdevice` (virtual devices are not supported), found one",
            );
        }
        a.kwargs.retain(|(k, _)| k.name != "vdevice");
        let dtype = match dtype {
            Some(d) => self.dtype_arg(d)?,
            None => DataType::void(),
        };
        let ndim_v = match ndim {
            Some(n) => Some(self.int_arg(n, "ndim")?),
            None => None,
        };
        match shape.map(|s| (s, &s.kind)) {
            None | Some((_, SK::None)) => Some(StructInfo::tensor_ndim(
                ndim_v.unwrap_or(UNKNOWN_NDIM),
                dtype,
            )),
            Some((s, SK::Tuple(_) | SK::List(_))) => {
                let dims = self.dims(s, declare_bare)?;
                if let (Some(n), Some(nd)) = (ndim_v, ndim) {
                    if n != UNKNOWN_NDIM && n as usize != dims.len() {
                        self.error(
                            "syntax-error",
                            nd.span,
                            format!("expected ndim={} to match the shape's {} dimensions, found ndim={n}", dims.len(), dims.len()),
                        );
                        return None;
                    }
                }
                Some(StructInfo::tensor(dims, dtype))
            }
            Some((s, SK::Name(n))) => {
                let Some(v) = self.lookup_var(n) else {
                    self.error(
                        "undefined-variable",
                        s.span,
                        format!("expected a shape tuple or a variable of struct info R.Shape, found undefined `{n}`"),
                    );
                    return None;
                };
                if !v
                    .struct_info()
                    .is_some_and(|si| matches!(si.kind(), StructInfoKind::Shape(_)))
                {
                    let found = v
                        .struct_info()
                        .map_or("no struct info".to_string(), |s| s.to_string());
                    self.error(
                        "syntax-error",
                        s.span,
                        format!("expected a variable of struct info R.Shape as the shape, found `{n}` of {found}"),
                    );
                    return None;
                }
                Some(StructInfo::tensor_with_shape_expr(v.to_expr(), dtype))
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
        }
    }

    /// `R.Shape([n, m])`, `R.Shape(ndim=2)`
    fn shape_sinfo(&mut self, a: &mut Args<'_>, declare_bare: bool) -> Lowered<StructInfo> {
        let values = a.take("values", 0);
        let ndim = a.take("ndim", usize::MAX);
        let ndim_v = match ndim {
            Some(n) => Some(self.int_arg(n, "ndim")?),
            None => None,
        };
        match values {
            None => Some(StructInfo::shape_ndim(ndim_v.unwrap_or(UNKNOWN_NDIM))),
            Some(v) if matches!(v.kind, SK::None) => {
                Some(StructInfo::shape_ndim(ndim_v.unwrap_or(UNKNOWN_NDIM)))
            }
            Some(v) => {
                let dims = self.dims(v, declare_bare)?;
                if let Some(n) = ndim_v {
                    if n != UNKNOWN_NDIM && n as usize != dims.len() {
                        if let Some(nd) = ndim {
                            self.error(
                                "syntax-error",
                                nd.span,
                                format!(
                                    "expected ndim={} to match the {} values, found ndim={n}",
                                    dims.len(),
                                    dims.len()
                                ),
                            );
                        }
                        return None;
                    }
                }
                Some(StructInfo::shape(dims))
            }
        }
    }

    /// `R.Prim("int64")`, `R.Prim(value=n)`
    fn prim_sinfo(
        &mut self,
        a: &mut Args<'_>,
        e: &syntax::Expr,
        declare_bare: bool,
    ) -> Lowered<StructInfo> {
        let dtype = a.take("dtype", 0);
        let value = a.take("value", usize::MAX);
        let dtype = match dtype {
            Some(d) => Some(self.dtype_arg(d)?),
            None => None,
        };
        match value {
            Some(v) => {
                let p = self.dim_or_prim(v, declare_bare)?;
                if let Some(dt) = dtype {
                    if dt != p.dtype() {
                        self.error(
                            "syntax-error",
                            v.span,
                            format!(
                                "expected a value of dtype {dt}, found `{p}` of dtype {}",
                                p.dtype()
                            ),
                        );
                        return None;
                    }
                }
                Some(StructInfo::prim_value(p))
            }
            None => match dtype {
                Some(dt) => Some(StructInfo::prim(dt)),
                None => {
                    self.error(
                        "syntax-error",
                        e.span,
                        "expected a dtype or `value=` in `R.Prim(…)`, found neither",
                    );
                    None
                }
            },
        }
    }

    /// A prim value: declares like a dimension when it stands alone.
    fn dim_or_prim(
        &mut self,
        v: &syntax::Expr,
        declare_bare: bool,
    ) -> Lowered<crate::ir::PrimExpr> {
        match &v.kind {
            SK::Str(_) | SK::Name(_) => self.dim(v, declare_bare),
            _ => self.prim(v),
        }
    }

    /// `R.Callable((A,), R, purity)`, `R.Callable(derive_func="…", ret=R)`
    fn callable(
        &mut self,
        a: &mut Args<'_>,
        e: &syntax::Expr,
        declare_bare: bool,
    ) -> Lowered<StructInfo> {
        let params = a.take("params", 0);
        let ret = a.take("ret", 0);
        let purity = a.take("purity", 0);
        let derive = a.take("derive_func", usize::MAX);
        let ret = match ret {
            Some(r) => self.struct_info(r, declare_bare)?,
            None => StructInfo::object(),
        };
        let purity = match purity.map(|p| (p, &p.kind)) {
            None | Some((_, SK::None)) => true,
            Some((_, SK::Bool(b))) => *b,
            Some((p, _)) => {
                self.error(
                    "syntax-error",
                    p.span,
                    format!(
                        "expected `True` or `False` as the purity, found {}",
                        p.describe()
                    ),
                );
                return None;
            }
        };
        if let Some(d) = derive {
            let kind = match &d.kind {
                SK::Str(s) if s == "default_derive" => DeriveFunc::Default,
                SK::Str(s) if s == "empty_derive" => DeriveFunc::Empty,
                _ => {
                    self.error(
                        "syntax-error",
                        d.span,
                        format!(
                            "expected \"default_derive\" or \"empty_derive\", found {}",
                            d.describe()
                        ),
                    );
                    return None;
                }
            };
            if let Some(p) = params.filter(|p| !matches!(p.kind, SK::None)) {
                self.error(
                    "syntax-error",
                    p.span,
                    "expected either parameters or `derive_func` in `R.Callable`, found both",
                );
                return None;
            }
            return Some(StructInfo::opaque_func(kind, ret));
        }
        let Some(params) = params else {
            self.error(
                "syntax-error",
                e.span,
                "expected parameters `(A, B)` or `derive_func=` in `R.Callable(…)`, found neither",
            );
            return None;
        };
        let (SK::Tuple(items) | SK::List(items)) = &params.kind else {
            self.error(
                "syntax-error",
                params.span,
                format!(
                    "expected a tuple of parameter struct infos, found {}",
                    params.describe()
                ),
            );
            return None;
        };
        let ps = self.lower_all(items, |this, p| this.struct_info(p, declare_bare))?;
        Some(StructInfo::func(ps, ret, purity))
    }

    /// Declares the symbolic variables that lone string dimensions of an
    /// annotation introduce (before anything in the signature is lowered).
    pub(super) fn declare_string_dims(&mut self, e: &syntax::Expr) {
        let SK::Call { func, args, kwargs } = &e.kind else {
            return;
        };
        let path = func.dotted().unwrap_or_default();
        let mut a = Args::new(args, kwargs);
        let mut dims: Vec<&syntax::Expr> = Vec::new();
        match path.as_str() {
            "R.Tensor" if !matches!(a.positional.first().map(|p| &p.kind), Some(SK::Str(_))) => {
                if let Some(s) = a.take("shape", 0) {
                    if let SK::Tuple(items) | SK::List(items) = &s.kind {
                        dims.extend(items);
                    }
                }
            }
            "R.Shape" => {
                if let Some(s) = a.take("values", 0) {
                    if let SK::Tuple(items) | SK::List(items) = &s.kind {
                        dims.extend(items);
                    }
                }
            }
            "R.Prim" => {
                let _ = a.take("dtype", 0);
                if let Some(v) = a.take("value", usize::MAX) {
                    dims.push(v);
                }
            }
            "R.Tuple" => {
                for f in args {
                    self.declare_string_dims(f);
                }
            }
            _ => {}
        }
        // A nested function's signature declares its own variables, as in
        // TVM: its `"n"` is not the enclosing function's `n`.
        for d in dims {
            if let SK::Str(s) = &d.kind {
                if is_identifier(s) && !self.declared_in_function(s) {
                    self.declare_sym(s, DataType::i64());
                }
            }
        }
    }
}

/// Arguments being consumed by name or position.
pub(super) struct Args<'a> {
    pub positional: Vec<&'a syntax::Expr>,
    pub kwargs: Vec<&'a (Ident, syntax::Expr)>,
}

impl<'a> Args<'a> {
    pub fn new(args: &'a [syntax::Expr], kwargs: &'a [(Ident, syntax::Expr)]) -> Self {
        Args {
            positional: args.iter().collect(),
            kwargs: kwargs.iter().collect(),
        }
    }
    /// The argument named `name`, else the positional one at `pos` if it is
    /// the first remaining (`usize::MAX`: keyword only).
    pub fn take(&mut self, name: &str, pos: usize) -> Option<&'a syntax::Expr> {
        if let Some(i) = self.kwargs.iter().position(|(k, _)| k.name == name) {
            return Some(&self.kwargs.remove(i).1);
        }
        if pos != usize::MAX && !self.positional.is_empty() {
            return Some(self.positional.remove(0));
        }
        None
    }
}
