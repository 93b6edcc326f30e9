//! Lowering of loop-level expressions.
//!
//! 1. Names are loop, block and let variables (innermost scope first), then
//!    the function's symbolic variables. `A[i, j]` loads from a buffer in
//!    scope, with one index per dimension.
//! 2. Literals: integers are `int64`, floats `float32`, `True`/`False`
//!    `bool`; an untyped literal next to a typed operand takes its dtype
//!    (`x * 2` with `x: float16` multiplies by a `float16` 2), as in TVM.
//!    `T.float32(1.5)`, `T.int32(3)`, … are typed literals (applied to a
//!    non-literal of another dtype they are casts).
//! 3. Operators: `+ - *`, `/` (true division, floats only), `//` (floor
//!    division; on floats `T.floor(a / b)`), `%` (floor modulo), `**`
//!    (`T.pow`), comparisons, `and`/`or`/`not`. TIR has no implicit casts:
//!    operands must agree after literal retyping.
//! 4. Calls: `T.Cast("dtype", x)` (also `T.cast(x, "dtype")`), `T.min`,
//!    `T.max`, `T.Select`, `T.floordiv`, `T.floormod`, `T.if_then_else`,
//!    `T.max_value("dtype")`/`T.min_value("dtype")` (literals) and the
//!    intrinsics the interpreter knows ([`INTRINSICS`]), whose result has
//!    the first argument's dtype (`bool` for `isnan`/`isinf`).

use super::super::lower::{Lowered, Lowerer};
use super::super::syntax::{self, BinOp, ExprKind as SK, UnOp};
use super::TirScope;
use crate::ir::prim_expr::{PrimExpr, PrimExprKind};
use crate::tir::interp::INTRINSICS;
use crate::tir::Buffer;
use relax_runtime::{DataType, Span};

/// Gives an untyped literal the dtype of the other operand (see the module
/// docs).
pub(super) fn unify(l: PrimExpr, r: PrimExpr) -> (PrimExpr, PrimExpr) {
    if let Some(l2) = retype_literal(&l, r.dtype()) {
        return (l2, r);
    }
    if let Some(r2) = retype_literal(&r, l.dtype()) {
        return (l, r2);
    }
    (l, r)
}

/// An untyped literal (an `int64` integer or a `float32` float) as a literal
/// of `dt`, when that is a different dtype that can hold it.
fn retype_literal(lit: &PrimExpr, dt: DataType) -> Option<PrimExpr> {
    if lit.dtype() == dt || dt.lanes() != 1 {
        return None;
    }
    match lit.kind() {
        PrimExprKind::IntImm(v) if lit.dtype() == DataType::i64() => {
            if dt.is_float() {
                Some(float_lit(dt, *v as f64))
            } else if dt.is_integer() && !dt.is_bool() && fits(*v, dt) {
                Some(PrimExpr::int_of(dt, *v))
            } else {
                None
            }
        }
        PrimExprKind::FloatImm(v) if lit.dtype() == DataType::f32() && dt.is_float() => {
            Some(float_lit(dt, *v))
        }
        _ => None,
    }
}

/// A float literal of `dt`, its value rounded to `dt`'s precision so that
/// it prints (shortest round-trip digits of that precision) and parses back
/// to the same value.
pub(super) fn float_lit(dt: DataType, v: f64) -> PrimExpr {
    let v = if dt.bits() == 32 { v as f32 as f64 } else { v };
    PrimExpr::float(dt, v)
}

/// Whether `v` fits in the integer dtype `dt`.
fn fits(v: i64, dt: DataType) -> bool {
    let bits = u32::from(dt.bits());
    if bits >= 64 {
        return !dt.is_uint() || v >= 0;
    }
    if dt.is_uint() {
        return v >= 0 && v < (1i64 << bits);
    }
    let half = 1i64 << (bits - 1);
    (-half..half).contains(&v)
}

impl Lowerer<'_> {
    /// `v` as a value of dtype `dt`: itself, or a retyped literal; else an
    /// error at `span`.
    pub(super) fn expect_dtype(
        &mut self,
        v: PrimExpr,
        dt: DataType,
        span: Span,
    ) -> Lowered<PrimExpr> {
        if v.dtype() == dt {
            return Some(v);
        }
        if let Some(r) = retype_literal(&v, dt) {
            return Some(r);
        }
        self.error(
            "syntax-error",
            span,
            format!(
                "expected a value of dtype {dt}, found `{v}` of dtype {} (TIR has no implicit casts; use `T.Cast`)",
                v.dtype()
            ),
        );
        None
    }

    /// An integer expression (an index, extent or bound).
    pub(super) fn tir_index(&mut self, sc: &mut TirScope, e: &syntax::Expr) -> Lowered<PrimExpr> {
        let v = self.tir_expr(sc, e)?;
        if !v.dtype().is_integer() || v.dtype().is_bool() {
            self.error(
                "syntax-error",
                e.span,
                format!(
                    "expected an integer expression, found `{v}` of dtype {}",
                    v.dtype()
                ),
            );
            return None;
        }
        Some(v)
    }

    /// The buffer a name refers to.
    pub(super) fn tir_buffer(&mut self, sc: &mut TirScope, e: &syntax::Expr) -> Lowered<Buffer> {
        match e.as_name() {
            Some(n) => match sc.buffer(n) {
                Some(b) => Some(b),
                None => {
                    self.error(
                        "undefined-var",
                        e.span,
                        format!("expected a buffer, found undefined `{n}`"),
                    );
                    None
                }
            },
            None => {
                self.error(
                    "syntax-error",
                    e.span,
                    format!("expected a buffer name, found {}", e.describe()),
                );
                None
            }
        }
    }

    /// `A[i, j]`: the buffer and its indices, one per dimension.
    pub(super) fn tir_access(
        &mut self,
        sc: &mut TirScope,
        base: &syntax::Expr,
        index: &syntax::Expr,
    ) -> Lowered<(Buffer, Vec<PrimExpr>)> {
        let buffer = self.tir_buffer(sc, base)?;
        let items: Vec<&syntax::Expr> = match &index.kind {
            SK::Tuple(items) => items.iter().collect(),
            _ => vec![index],
        };
        if items.len() != buffer.shape().len() {
            self.error(
                "syntax-error",
                index.span,
                format!(
                    "expected {} indices for buffer {}, found {}",
                    buffer.shape().len(),
                    buffer.name(),
                    items.len()
                ),
            );
            return None;
        }
        let mut out = Vec::new();
        let mut ok = true;
        for i in items {
            if i.as_call().is_some_and(|(p, _, _)| p == "slice") {
                self.error(
                    "syntax-error",
                    i.span,
                    "expected an index, found a slice (slices are for `T.reads`/`T.writes`)",
                );
                ok = false;
                continue;
            }
            match self.tir_index(sc, i) {
                Some(x) => out.push(x),
                None => ok = false,
            }
        }
        ok.then_some((buffer, out))
    }

    /// A loop-level expression (see the module docs).
    pub(super) fn tir_expr(&mut self, sc: &mut TirScope, e: &syntax::Expr) -> Lowered<PrimExpr> {
        match &e.kind {
            SK::Int(v) => Some(PrimExpr::int(*v)),
            SK::Float(v) => Some(float_lit(DataType::f32(), *v)),
            SK::Bool(b) => Some(PrimExpr::bool(*b)),
            SK::Name(n) => {
                if let Some(v) = sc.var(n).or_else(|| self.lookup_sym(n)) {
                    return Some(v.to_expr());
                }
                if sc.buffer(n).is_some() {
                    self.error(
                        "syntax-error",
                        e.span,
                        format!("expected a scalar expression, found the buffer `{n}` (index it: `{n}[…]`)"),
                    );
                } else {
                    self.error(
                        "undefined-symbolic-var",
                        e.span,
                        format!("expected a variable, found undefined `{n}` (loop variables come from `for`, block variables from `T.axis`, symbolic ones from `{n} = T.int64()`)"),
                    );
                }
                None
            }
            SK::Subscript(base, index) => {
                let (b, idx) = self.tir_access(sc, base, index)?;
                Some(PrimExpr::load(&b, idx))
            }
            SK::Unary(op, a) => {
                let a = self.tir_expr(sc, a)?;
                Some(match op {
                    UnOp::Pos => a,
                    UnOp::Not => !a,
                    UnOp::Neg => match a.kind() {
                        PrimExprKind::IntImm(v) if !a.dtype().is_bool() => match v.checked_neg() {
                            Some(n) => PrimExpr::int_of(a.dtype(), n),
                            None => -a,
                        },
                        PrimExprKind::FloatImm(v) => float_lit(a.dtype(), -v),
                        _ if a.dtype().is_float() => PrimExpr::float(a.dtype(), 0.0) - a,
                        _ => -a,
                    },
                })
            }
            SK::Binary(op, l, r) => {
                let l = self.tir_expr(sc, l);
                let r = self.tir_expr(sc, r);
                let (l, r) = unify(l?, r?);
                self.tir_binary(*op, l, r, e.span)
            }
            SK::Call { func, args, kwargs } => self.tir_call(sc, e, func, args, kwargs),
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

    fn tir_binary(&mut self, op: BinOp, l: PrimExpr, r: PrimExpr, span: Span) -> Lowered<PrimExpr> {
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
        if l.dtype() != r.dtype() {
            self.error(
                "syntax-error",
                span,
                format!(
                    "expected operands of `{}` of one dtype, found `{l}` of {} and `{r}` of {} (use `T.Cast`)",
                    op.text(),
                    l.dtype(),
                    r.dtype()
                ),
            );
            return None;
        }
        let float = l.dtype().is_float();
        Some(match op {
            BinOp::Add => l + r,
            BinOp::Sub => l - r,
            BinOp::Mul => l * r,
            BinOp::Div if float => l.floordiv(r),
            BinOp::Div => {
                self.error(
                    "unsupported-syntax",
                    span,
                    "expected `//` for integer division, found `/` (true division is for floats)",
                );
                return None;
            }
            BinOp::FloorDiv if float => {
                let dt = l.dtype();
                PrimExpr::call(dt, "floor", vec![l.floordiv(r)])
            }
            BinOp::FloorDiv => l.floordiv(r),
            BinOp::Mod => l.floormod(r),
            BinOp::Pow => PrimExpr::call(l.dtype(), "pow", vec![l, r]),
            BinOp::Eq => l.eq_(r),
            BinOp::Ne => l.ne_(r),
            BinOp::Lt => l.lt(r),
            BinOp::Le => l.le(r),
            BinOp::Gt => l.gt(r),
            BinOp::Ge => l.ge(r),
            BinOp::And => l.and(r),
            BinOp::Or => l.or(r),
        })
    }

    fn tir_call(
        &mut self,
        sc: &mut TirScope,
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
        let arity = |this: &mut Self, n: usize| {
            if args.len() == n {
                return true;
            }
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
        };
        let dtype_arg = |this: &mut Self, a: &syntax::Expr| -> Option<DataType> {
            match &a.kind {
                SK::Str(s) => match s.parse::<DataType>() {
                    Ok(d) => Some(d),
                    Err(err) => {
                        this.error("invalid-dtype", a.span, err.to_string());
                        None
                    }
                },
                _ => {
                    this.error(
                        "invalid-dtype",
                        a.span,
                        format!(
                            "expected a dtype string such as \"float32\", found {}",
                            a.describe()
                        ),
                    );
                    None
                }
            }
        };
        match name {
            "Cast" | "cast" => {
                if !arity(self, 2) {
                    return None;
                }
                let (d, v) = if name == "Cast" {
                    (&args[0], &args[1])
                } else {
                    (&args[1], &args[0])
                };
                let dt = dtype_arg(self, d);
                let v = self.tir_expr(sc, v);
                let (dt, v) = (dt?, v?);
                Some(PrimExpr::new(dt, PrimExprKind::Cast(v)))
            }
            "max_value" | "min_value" => {
                if !arity(self, 1) {
                    return None;
                }
                let dt = dtype_arg(self, &args[0])?;
                limit(dt, name == "max_value").or_else(|| {
                    self.error(
                        "invalid-dtype",
                        args[0].span,
                        format!("expected a numeric dtype in `{path}`, found {dt}"),
                    );
                    None
                })
            }
            "min" | "max" | "floordiv" | "floormod" => {
                if !arity(self, 2) {
                    return None;
                }
                let a = self.tir_expr(sc, &args[0]);
                let b = self.tir_expr(sc, &args[1]);
                let (a, b) = unify(a?, b?);
                if a.dtype() != b.dtype() {
                    self.error(
                        "syntax-error",
                        e.span,
                        format!(
                            "expected arguments of `{path}` of one dtype, found `{a}` of {} and `{b}` of {} (use `T.Cast`)",
                            a.dtype(),
                            b.dtype()
                        ),
                    );
                    return None;
                }
                Some(match name {
                    "min" => a.min(b),
                    "max" => a.max(b),
                    "floordiv" => a.floordiv(b),
                    _ => a.floormod(b),
                })
            }
            "Select" | "if_then_else" => {
                if !arity(self, 3) {
                    return None;
                }
                let c = self.tir_expr(sc, &args[0]);
                let t = self.tir_expr(sc, &args[1]);
                let f = self.tir_expr(sc, &args[2]);
                let c = c.and_then(|c| self.expect_dtype(c, DataType::bool(), args[0].span));
                let (t, f) = unify(t?, f?);
                let f = self.expect_dtype(f, t.dtype(), args[2].span)?;
                let c = c?;
                Some(if name == "Select" {
                    PrimExpr::select(c, t, f)
                } else {
                    PrimExpr::call(t.dtype(), "if_then_else", vec![c, t, f])
                })
            }
            _ if INTRINSICS.contains(&name) => {
                let n = match name {
                    "pow" | "atan2" | "fmod" => 2,
                    _ => 1,
                };
                if !arity(self, n) {
                    return None;
                }
                let mut vals = Vec::new();
                for a in args {
                    vals.push(self.tir_expr(sc, a));
                }
                let mut vals: Vec<PrimExpr> = vals.into_iter().collect::<Option<_>>()?;
                if vals.len() == 2 {
                    let b = vals.pop()?;
                    let a = vals.pop()?;
                    let (a, b) = unify(a, b);
                    let b = self.expect_dtype(b, a.dtype(), args[1].span)?;
                    vals = vec![a, b];
                }
                let dt = match name {
                    "isnan" | "isinf" => DataType::bool(),
                    _ => vals[0].dtype(),
                };
                Some(PrimExpr::call(dt, name, vals))
            }
            _ => {
                let Ok(dtype) = name.parse::<DataType>() else {
                    self.error(
                        "syntax-error",
                        func.span,
                        format!(
                            "expected an intrinsic ({}), `T.Cast`, `T.min`, `T.max`, `T.Select` or a dtype such as `T.float32`, found `{path}`",
                            INTRINSICS.join(", ")
                        ),
                    );
                    return None;
                };
                if !arity(self, 1) {
                    return None;
                }
                let v = self.tir_expr(sc, &args[0])?;
                if let Some(i) = v.as_int() {
                    if dtype.is_integer() && !dtype.is_bool() && !fits(i, dtype) {
                        self.error(
                            "syntax-error",
                            args[0].span,
                            format!("expected a literal of dtype {dtype} in `{path}(…)`, found `{i}`, which is out of range"),
                        );
                        return None;
                    }
                }
                Some(typed(v, dtype))
            }
        }
    }
}

/// `T.float32(v)`: a literal of `dtype`, or a cast of a non-literal.
fn typed(v: PrimExpr, dtype: DataType) -> PrimExpr {
    match v.kind() {
        PrimExprKind::IntImm(i) if dtype.is_bool() => PrimExpr::bool(*i != 0),
        PrimExprKind::IntImm(i) if dtype.is_float() => float_lit(dtype, *i as f64),
        PrimExprKind::IntImm(i) if dtype.is_integer() => PrimExpr::int_of(dtype, *i),
        PrimExprKind::FloatImm(f) if dtype.is_float() => float_lit(dtype, *f),
        _ => v.cast(dtype),
    }
}

/// The largest (`max`) or lowest finite value of `dt`.
fn limit(dt: DataType, max: bool) -> Option<PrimExpr> {
    let bits = u32::from(dt.bits());
    if dt.is_float() {
        let m = match bits {
            16 => 65504.0,
            32 => f32::MAX as f64,
            64 => f64::MAX,
            _ => return None,
        };
        return Some(float_lit(dt, if max { m } else { -m }));
    }
    if dt.is_bool() {
        return Some(PrimExpr::bool(max));
    }
    if dt.is_int() && (1..=64).contains(&bits) {
        let v = if max {
            i64::MAX >> (64 - bits)
        } else {
            i64::MIN >> (64 - bits)
        };
        return Some(PrimExpr::int_of(dt, v));
    }
    if dt.is_uint() && (1..64).contains(&bits) {
        let v = if max { (1i64 << bits) - 1 } else { 0 };
        return Some(PrimExpr::int_of(dt, v));
    }
    None
}
