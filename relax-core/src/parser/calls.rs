//! Lowering of `R.<name>(…)` calls: operator calls and the special forms.
//!
//! | text | IR |
//! |---|---|
//! | `R.add(x, y, key=v)` | `Call(Op relax.add, [x, y], attrs)` |
//! | `R.op(…, sinfo_args=S)` / `(S1, S2)` (TVM 0.27: `ty_args=`) | the same, with `sinfo_args` |
//! | `R.call_tir(cls.f, (x,), out_sinfo=S, tir_vars=R.shape([n]))` | `Call(Op relax.call_tir, [f, Tuple(x), shape?], sinfo_args=[S])`; `out_sinfo=[S1, S2]` gives two; TVM 0.27 writes `out_ty=` |
//! | `R.call_dps_packed("ext", (x,), out_sinfo=S)` | `Call(Op relax.call_dps_packed, [ExternFunc ext, Tuple(x)], sinfo_args=[S])` |
//! | `R.call_packed("ext", x, sinfo_args=S)` | `Call(ExternFunc ext, [x], sinfo_args=[S])` |
//! | `R.call_pure_packed("ext", x, sinfo_args=S)` | `Call(Op relax.call_pure_packed, [ExternFunc ext, x], sinfo_args=[S])` |
//! | `R.shape([n, 4])`, `R.prim_value(e)`, `R.str("s")`, `R.dtype("f32")`, `R.ExternFunc("f")`, `R.tuple(a, b)`, `R.const(…)` | the leaves |

use super::lower::{Lowered, Lowerer};
use super::sinfo::Args;
use super::syntax::{self, ExprKind as SK, Ident};
use crate::ir::{Attrs, Expr, StructInfo};

/// Names that are statements or annotations, not values.
const NOT_VALUES: &[&str] = &[
    "Tensor",
    "Shape",
    "Prim",
    "Tuple",
    "Callable",
    "Object",
    "function",
    "dataflow",
    "output",
    "func_attr",
];

impl Lowerer<'_> {
    /// `R.<path>(args, kwargs)` in value position.
    pub(super) fn r_call(
        &mut self,
        e: &syntax::Expr,
        path: &[&str],
        args: &[syntax::Expr],
        kwargs: &[(Ident, syntax::Expr)],
    ) -> Lowered<Expr> {
        let name = path.join(".");
        let mut a = Args::new(args, kwargs);
        let result = match name.as_str() {
            "match_cast" => {
                self.error(
                    "syntax-error",
                    e.span,
                    "expected `R.match_cast(…)` only as the whole value of a binding, found it inside an expression",
                );
                return None;
            }
            n if NOT_VALUES.contains(&n) => {
                self.error(
                    "syntax-error",
                    e.span,
                    format!("expected a relax expression, found `R.{n}(…)`"),
                );
                return None;
            }
            "call_tir" | "call_tir_inplace" | "call_tir_with_grad" => {
                self.call_tir(e, &name, &mut a)
            }
            "call_dps_packed" => self.call_dps_packed(e, &mut a),
            "print" | "assert_op" => self.debug_call(e, &name, &mut a),
            "call_packed" | "call_pure_packed" => self.call_packed(e, &name, &mut a),
            "shape" => {
                let v = self.one_arg(e, &mut a, "values", "R.shape")?;
                self.dims(v, false).map(Expr::shape)
            }
            "prim_value" => {
                let v = self.one_arg(e, &mut a, "value", "R.prim_value")?;
                self.prim(v).map(Expr::prim_value)
            }
            "str" => {
                let v = self.one_arg(e, &mut a, "value", "R.str")?;
                match &v.kind {
                    SK::Str(s) => Some(Expr::string(s.clone())),
                    _ => {
                        self.error(
                            "syntax-error",
                            v.span,
                            format!("expected a string, found {}", v.describe()),
                        );
                        None
                    }
                }
            }
            "dtype" => {
                let v = self.one_arg(e, &mut a, "value", "R.dtype")?;
                self.dtype_string(v).map(Expr::dtype)
            }
            "ExternFunc" | "extern" => {
                let v = self.one_arg(e, &mut a, "global_symbol", "R.ExternFunc")?;
                self.string_arg(v, "a function name").map(Expr::extern_func)
            }
            "tuple" => {
                let items: Vec<syntax::Expr> = a.positional.drain(..).cloned().collect();
                let fields = self.rexprs(&items)?;
                Some(self.derive(Expr::tuple(fields), e.span))
            }
            "const" => {
                let c = self.constant(args, kwargs, e.span);
                a.positional.clear();
                a.kwargs.clear();
                c
            }
            _ => self.op_call(e, &name, &mut a),
        };
        self.finish_args(&a, &format!("R.{name}"));
        result
    }

    fn one_arg<'a>(
        &mut self,
        e: &syntax::Expr,
        a: &mut Args<'a>,
        key: &str,
        what: &str,
    ) -> Option<&'a syntax::Expr> {
        let v = a.take(key, 0);
        if v.is_none() {
            self.error(
                "syntax-error",
                e.span,
                format!("expected an argument to `{what}(…)`, found none"),
            );
        }
        v
    }

    fn string_arg(&mut self, v: &syntax::Expr, what: &str) -> Option<String> {
        match &v.kind {
            SK::Str(s) => Some(s.clone()),
            _ => {
                self.error(
                    "syntax-error",
                    v.span,
                    format!("expected {what} as a string, found {}", v.describe()),
                );
                None
            }
        }
    }

    /// `out_sinfo=S` or `[S1, S2]`; `sinfo_args=S` or `(S1, S2)`.
    fn sinfo_list(&mut self, v: &syntax::Expr) -> Lowered<Vec<StructInfo>> {
        match &v.kind {
            SK::List(items) | SK::Tuple(items) => {
                self.lower_all(items, |this, it| this.struct_info(it, false))
            }
            _ => self.struct_info(v, false).map(|s| vec![s]),
        }
    }

    /// The argument tuple of `call_tir`-like forms: a tuple expression, or a
    /// single value wrapped in one.
    fn args_tuple(&mut self, v: &syntax::Expr) -> Lowered<Expr> {
        let x = self.rexpr(v)?;
        if x.struct_info().is_some_and(|s| s.as_tuple().is_some()) {
            return Some(x);
        }
        Some(self.derive(Expr::tuple(vec![x]), v.span))
    }

    fn call_tir(&mut self, e: &syntax::Expr, name: &str, a: &mut Args<'_>) -> Lowered<Expr> {
        let callee = a.take("gvar", 0);
        let args = a.take("args", 0);
        let out = out_sinfo(a);
        let tir_vars = a.take("tir_vars", usize::MAX);
        let (Some(callee), Some(args)) = (callee, args) else {
            self.error(
                "syntax-error",
                e.span,
                format!(
                    "expected `R.{name}(cls.func, (args…), out_sinfo=…)`, found too few arguments"
                ),
            );
            return None;
        };
        let Some(out) = out else {
            self.error(
                "syntax-error",
                e.span,
                format!("expected `out_sinfo=` in `R.{name}(…)`, found none"),
            );
            return None;
        };
        let f = self.rexpr(callee);
        let t = self.args_tuple(args);
        let s = self.sinfo_list(out);
        let tv = tir_vars.map(|v| self.rexpr(v));
        let attrs = self.op_attrs(a);
        let (f, t, s, attrs) = (f?, t?, s?, attrs?);
        let mut call_args = vec![f, t];
        if let Some(tv) = tv {
            call_args.push(tv?);
        }
        let call = Expr::call_full(Expr::op(&format!("relax.{name}")), call_args, attrs, s);
        Some(self.derive(call, e.span))
    }

    fn call_dps_packed(&mut self, e: &syntax::Expr, a: &mut Args<'_>) -> Lowered<Expr> {
        let callee = a.take("func", 0);
        let args = a.take("args", 0);
        let out = out_sinfo(a);
        let (Some(callee), Some(args), Some(out)) = (callee, args, out) else {
            self.error(
                "syntax-error",
                e.span,
                "expected `R.call_dps_packed(\"name\", (args…), out_sinfo=…)`, found too few arguments",
            );
            return None;
        };
        let f = match &callee.kind {
            SK::Str(s) => Some(Expr::extern_func(s.clone())),
            _ => self.rexpr(callee),
        };
        let t = self.args_tuple(args);
        let s = self.sinfo_list(out);
        let (f, t, s) = (f?, t?, s?);
        let call = Expr::call_full(
            Expr::op("relax.call_dps_packed"),
            vec![f, t],
            Attrs::new(),
            s,
        );
        Some(self.derive(call, e.span))
    }

    fn call_packed(&mut self, e: &syntax::Expr, name: &str, a: &mut Args<'_>) -> Lowered<Expr> {
        if a.positional.is_empty() {
            self.error(
                "syntax-error",
                e.span,
                format!("expected `R.{name}(\"function name\", args…)`, found no arguments"),
            );
            return None;
        }
        let callee = a.positional.remove(0);
        // The callee is a symbol; `call_pure_packed` also takes any
        // expression (`R.ExternFunc("f")`, a variable), as its generic form.
        let f = match &callee.kind {
            SK::Str(s) => Some(Expr::extern_func(s.clone())),
            _ if name == "call_pure_packed" => self.rexpr(callee),
            _ => {
                self.error(
                    "syntax-error",
                    callee.span,
                    format!(
                        "expected the packed function name as a string, found {}",
                        callee.describe()
                    ),
                );
                None
            }
        };
        let items: Vec<syntax::Expr> = a.positional.drain(..).cloned().collect();
        let args = self.rexprs(&items);
        let sinfo = match sinfo_args(a) {
            Some(v) => self.sinfo_list(v),
            None => Some(vec![]),
        };
        // TVM 0.27 prints the (empty) attributes' type of a packed call.
        a.take("attrs_type_key", usize::MAX);
        let attrs = self.op_attrs(a);
        let (f, args, sinfo, attrs) = (f?, args?, sinfo?, attrs?);
        let call = if name == "call_packed" {
            Expr::call_full(f, args, attrs, sinfo)
        } else {
            let mut all = vec![f];
            all.extend(args);
            Expr::call_full(Expr::op("relax.call_pure_packed"), all, attrs, sinfo)
        };
        Some(self.derive(call, e.span))
    }

    /// The remaining keyword arguments as attributes, in written order.
    fn op_attrs(&mut self, a: &mut Args<'_>) -> Lowered<Attrs> {
        let mut pairs = Vec::new();
        let mut ok = true;
        for (k, v) in a.kwargs.drain(..) {
            match self.attr_value(v) {
                Some(val) => pairs.push((k.name.clone(), val)),
                None => ok = false,
            }
        }
        ok.then(|| Attrs::from_pairs(pairs))
    }

    /// `R.print(*values, format="")` and `R.assert_op(condition, *values,
    /// format="")`: the format (a string or `R.str`) goes before the
    /// values in the call's arguments, after the condition, as TVM has it.
    fn debug_call(&mut self, e: &syntax::Expr, name: &str, a: &mut Args<'_>) -> Lowered<Expr> {
        let format = match a.take("format", usize::MAX) {
            Some(f) => match &f.kind {
                SK::Str(s) => Some(Expr::string(s.clone())),
                _ => match self.rexpr(f)? {
                    s if matches!(s.kind(), crate::ir::ExprKind::StringImm(_)) => Some(s),
                    other => {
                        self.error(
                            "syntax-error",
                            f.span,
                            format!("expected the format of `R.{name}` as a string, found {other}"),
                        );
                        None
                    }
                },
            },
            None => Some(Expr::string("")),
        };
        let items: Vec<syntax::Expr> = a.positional.drain(..).cloned().collect();
        if name == "assert_op" && items.is_empty() {
            self.error(
                "syntax-error",
                e.span,
                "expected a condition as the first argument of `R.assert_op`, found none",
            );
            return None;
        }
        let (values, format) = (self.rexprs(&items)?, format?);
        let call = crate::op::debug::call(name, format, values)?;
        Some(self.derive(call, e.span))
    }

    /// `R.<op>(args…, attr=value…, sinfo_args=…)`
    fn op_call(&mut self, e: &syntax::Expr, name: &str, a: &mut Args<'_>) -> Lowered<Expr> {
        let op_name = format!("relax.{name}");
        let Some(info) = crate::op::lookup(&op_name) else {
            let mut d = relax_runtime::Diagnostic::new(
                "unknown-op",
                format!("expected a relax operator, found unknown `R.{name}`"),
            );
            if let SK::Call { func, .. } = &e.kind {
                d = d.with_span(func.span);
            }
            if let Some(near) = crate::op::nearest(&op_name) {
                d = d.with_note(format!(
                    "did you mean `R.{}`?",
                    near.trim_start_matches("relax.")
                ));
            }
            self.errors.push(d);
            return None;
        };
        let mut items: Vec<syntax::Expr> = a.positional.drain(..).cloned().collect();
        // Positional arguments past the op's arguments are its attributes in
        // schema order, as TVM's Python functions take them (TVM 0.27 prints
        // `R.strided_slice(x, (0,), (0,), (n,))`).
        let extra = match info.arity {
            crate::op::Arity::Exact(n) if items.len() > n => items.split_off(n),
            _ => Vec::new(),
        };
        let mut positional_attrs = Vec::new();
        let mut ok = true;
        for (k, item) in extra.iter().enumerate() {
            let Some(spec) = info.attrs.get(k) else {
                self.error(
                    "syntax-error",
                    item.span,
                    format!(
                        "expected at most {} positional arguments to `R.{name}` ({} and {}), found more",
                        items.len() + info.attrs.len(),
                        plural(items.len(), "argument"),
                        plural(info.attrs.len(), "attribute"),
                    ),
                );
                ok = false;
                break;
            };
            if a.kwargs.iter().any(|(key, _)| key.name == spec.name) {
                self.error(
                    "syntax-error",
                    item.span,
                    format!("`{}` of `R.{name}` is given twice", spec.name),
                );
                ok = false;
                continue;
            }
            match self.attr_value(item) {
                Some(v) => positional_attrs.push((spec.name.to_string(), v)),
                None => ok = false,
            }
        }
        let args = self.rexprs(&items);
        let sinfo = match sinfo_args(a) {
            Some(v) => self.sinfo_list(v),
            None => Some(vec![]),
        };
        let attrs = self.op_attrs(a).map(|kw| {
            let mut pairs = positional_attrs;
            pairs.extend(kw.iter().map(|(k, v)| (k.to_string(), v.clone())));
            Attrs::from_pairs(pairs)
        });
        let (args, sinfo, attrs) = (args?, sinfo?, attrs?);
        if !ok {
            return None;
        }
        // Attributes are checked against the op's schema and completed with
        // its defaults, so `R.sum(x)` and `R.sum(x, axis=None, keepdims=False)`
        // are the same call.
        let attrs = match info.normalize_attrs(&attrs) {
            Ok(a) => a,
            Err(d) => {
                self.errors.push(d.with_span(e.span));
                return None;
            }
        };
        let call = Expr::call_full(Expr::op(&op_name), args, attrs, sinfo);
        Some(self.derive(call, e.span))
    }
}

/// The output StructInfo of a `call_tir`-like form: `out_sinfo=` as TVM
/// wrote it up to 0.26, `out_ty=` as TVM 0.27 writes it, or the next
/// positional argument.
fn out_sinfo<'a>(a: &mut Args<'a>) -> Option<&'a syntax::Expr> {
    a.take("out_sinfo", usize::MAX)
        .or_else(|| a.take("out_ty", 0))
}

/// The StructInfo arguments of a call: `sinfo_args=` as TVM wrote them up
/// to 0.26, `ty_args=` as TVM 0.27 writes them.
fn sinfo_args<'a>(a: &mut Args<'a>) -> Option<&'a syntax::Expr> {
    a.take("sinfo_args", usize::MAX)
        .or_else(|| a.take("ty_args", usize::MAX))
}

/// `1 argument`, `2 arguments`.
fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("{n} {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
