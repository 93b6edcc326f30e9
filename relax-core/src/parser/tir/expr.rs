//! Lowering of loop-level expressions: the loop-level [`ScalarSyntax`],
//! which extends Relax's scalar expressions (see `parser/prim.rs`).
//!
//! 1. Names are loop, block and let variables (innermost scope first), then
//!    the function's symbolic variables. `A[i, j]` loads from a buffer in
//!    scope, with one index per dimension.
//! 2. Floats: literals are rounded to their dtype's precision; an untyped
//!    float (`float32`) or integer literal next to a float operand takes its
//!    dtype (`x * 2` with `x: float16` multiplies by a `float16` 2), as in
//!    TVM. `T.float32(1.5)`, `T.int32(3)`, … are typed literals (applied to
//!    a non-literal of another dtype they are casts).
//! 3. Operators beyond Relax's: `/` (true division, floats only), `//` on
//!    floats (`T.floor(a / b)`), `**` (`T.pow`), `<<` and `>>` of integers
//!    (`T.shift_left`, `T.shift_right`), and `-x` of a float `x`
//!    (`0.0 - x`).
//! 4. Calls beyond Relax's: `T.Cast("dtype", x)` (also `T.cast(x, "dtype")`),
//!    `T.Div(a, b)` (TVM's printing of `tir.Div`: `T.truncdiv` of integers,
//!    true division of floats),
//!    `T.if_then_else`, `T.max_value("dtype")`/`T.min_value("dtype")`
//!    (literals) and the intrinsics the interpreter knows ([`INTRINSICS`]),
//!    whose result has the first argument's dtype (`bool` for
//!    `isnan`/`isinf`). `T.Select` needs a `bool` condition.

use super::super::lower::{Lowered, Lowerer};
use super::super::prim::{retype_int, unify, ScalarCall, ScalarSyntax};
use super::super::syntax::{self, BinOp, ExprKind as SK};
use super::TirScope;
use crate::ir::prim_expr::{PrimExpr, PrimExprKind};
use crate::tir::interp::INTRINSICS;
use crate::tir::Buffer;
use relax_runtime::{DataType, Span};

impl ScalarSyntax for TirScope {
    const CASTS: bool = true;

    fn name(&mut self, lw: &mut Lowerer<'_>, n: &str, span: Span) -> Lowered<PrimExpr> {
        if let Some(v) = self.var(n).or_else(|| lw.lookup_sym(n)) {
            return Some(v.to_expr());
        }
        if self.buffer(n).is_some() {
            lw.error(
                "syntax-error",
                span,
                format!(
                    "expected a scalar expression, found the buffer `{n}` (index it: `{n}[…]`)"
                ),
            );
        } else {
            lw.error(
                "undefined-symbolic-var",
                span,
                format!("expected a variable, found undefined `{n}` (loop variables come from `for`, block variables from `T.axis`, symbolic ones from `{n} = T.int64()`)"),
            );
        }
        None
    }

    fn other(&mut self, lw: &mut Lowerer<'_>, e: &syntax::Expr) -> Option<Lowered<PrimExpr>> {
        let SK::Subscript(base, index) = &e.kind else {
            return None;
        };
        Some(
            lw.tir_access(self, base, index)
                .map(|(b, idx)| PrimExpr::load(&b, idx)),
        )
    }

    fn call(
        &mut self,
        lw: &mut Lowerer<'_>,
        c: &ScalarCall<'_>,
        name: &str,
    ) -> Option<Lowered<PrimExpr>> {
        Some(match name {
            "Cast" | "cast" => lw.tir_cast(self, c, name),
            "max_value" | "min_value" => lw.tir_limit(c, name),
            "Select" | "if_then_else" => lw.tir_select(self, c, name),
            "Div" => lw.tir_div(self, c),
            _ if INTRINSICS.contains(&name) => lw.tir_intrinsic(self, c, name),
            _ => return None,
        })
    }

    fn expected_calls() -> String {
        format!(
            "an intrinsic ({}), `T.Cast`, `T.min`, `T.max`, `T.Select` or a dtype such as `T.float32`",
            INTRINSICS.join(", ")
        )
    }

    fn float(dt: DataType, v: f64) -> PrimExpr {
        float_lit(dt, v)
    }

    fn retype(lit: &PrimExpr, dt: DataType) -> Option<PrimExpr> {
        if lit.dtype() == dt || dt.lanes() != 1 {
            return None;
        }
        match lit.kind() {
            PrimExprKind::IntImm(v) if lit.dtype() == DataType::i64() && dt.is_float() => {
                Some(float_lit(dt, *v as f64))
            }
            PrimExprKind::FloatImm(v) if lit.dtype() == DataType::f32() && dt.is_float() => {
                Some(float_lit(dt, *v))
            }
            _ => retype_int(lit, dt),
        }
    }

    fn negate(a: PrimExpr) -> PrimExpr {
        if a.dtype().is_float() {
            PrimExpr::float(a.dtype(), 0.0) - a
        } else {
            -a
        }
    }

    fn div_or_pow(
        lw: &mut Lowerer<'_>,
        op: BinOp,
        l: PrimExpr,
        r: PrimExpr,
        span: Span,
    ) -> Lowered<PrimExpr> {
        let float = l.dtype().is_float();
        Some(match op {
            BinOp::Pow => PrimExpr::call(l.dtype(), "pow", vec![l, r]),
            BinOp::Div if float => l.floordiv(r),
            BinOp::Div => {
                lw.error(
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
            // `//` of integers (no other operator comes here).
            _ => l.floordiv(r),
        })
    }
}

/// A float literal of `dt`, its value rounded to `dt`'s precision so that
/// it prints (shortest round-trip digits of that precision) and parses back
/// to the same value.
fn float_lit(dt: DataType, v: f64) -> PrimExpr {
    let v = if dt.bits() == 32 { v as f32 as f64 } else { v };
    PrimExpr::float(dt, v)
}

impl Lowerer<'_> {
    /// A loop-level expression (see the module docs).
    pub(super) fn tir_expr(&mut self, sc: &mut TirScope, e: &syntax::Expr) -> Lowered<PrimExpr> {
        self.scalar(sc, e)
    }

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
        if let Some(r) = TirScope::retype(&v, dt) {
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

    /// `A[…]`: the buffer and the items of the index, one per dimension (a
    /// wrong count is reported at `span`).
    pub(super) fn tir_subscript<'e>(
        &mut self,
        sc: &mut TirScope,
        base: &syntax::Expr,
        index: &'e syntax::Expr,
        span: Span,
    ) -> Lowered<(Buffer, Vec<&'e syntax::Expr>)> {
        let buffer = self.tir_buffer(sc, base)?;
        let items: Vec<&syntax::Expr> = match &index.kind {
            SK::Tuple(items) => items.iter().collect(),
            _ => vec![index],
        };
        if items.len() != buffer.shape().len() {
            self.error(
                "syntax-error",
                span,
                format!(
                    "expected {} indices for buffer {}, found {}",
                    buffer.shape().len(),
                    buffer.name(),
                    items.len()
                ),
            );
            return None;
        }
        Some((buffer, items))
    }

    /// `A[i, j]`: the buffer and its indices, one per dimension.
    pub(super) fn tir_access(
        &mut self,
        sc: &mut TirScope,
        base: &syntax::Expr,
        index: &syntax::Expr,
    ) -> Lowered<(Buffer, Vec<PrimExpr>)> {
        let (buffer, items) = self.tir_subscript(sc, base, index, index.span)?;
        let indices = self.lower_all(items, |this, i| {
            if i.as_call().is_some_and(|(p, _, _)| p == "slice") {
                this.error(
                    "syntax-error",
                    i.span,
                    "expected an index, found a slice (slices are for `T.reads`/`T.writes`)",
                );
                return None;
            }
            this.tir_index(sc, i)
        })?;
        Some((buffer, indices))
    }

    /// `T.Cast("float32", x)` / `T.cast(x, "float32")`.
    fn tir_cast(&mut self, sc: &mut TirScope, c: &ScalarCall<'_>, name: &str) -> Lowered<PrimExpr> {
        if !c.arity(self, 2) {
            return None;
        }
        let (d, v) = if name == "Cast" {
            (&c.args[0], &c.args[1])
        } else {
            (&c.args[1], &c.args[0])
        };
        let dt = self.dtype_string(d);
        let v = self.tir_expr(sc, v);
        let (dt, v) = (dt?, v?);
        Some(PrimExpr::new(dt, PrimExprKind::Cast(v)))
    }

    /// `T.max_value("dtype")` / `T.min_value("dtype")`.
    fn tir_limit(&mut self, c: &ScalarCall<'_>, name: &str) -> Lowered<PrimExpr> {
        if !c.arity(self, 1) {
            return None;
        }
        let dt = self.dtype_string(&c.args[0])?;
        limit(dt, name == "max_value").or_else(|| {
            self.error(
                "invalid-dtype",
                c.args[0].span,
                format!("expected a numeric dtype in `{}`, found {dt}", c.path),
            );
            None
        })
    }

    /// `T.Select(c, t, f)` / `T.if_then_else(c, t, f)`, `c` a `bool`.
    fn tir_select(
        &mut self,
        sc: &mut TirScope,
        c: &ScalarCall<'_>,
        name: &str,
    ) -> Lowered<PrimExpr> {
        if !c.arity(self, 3) {
            return None;
        }
        let args = c.args;
        let cond = self.tir_expr(sc, &args[0]);
        let t = self.tir_expr(sc, &args[1]);
        let f = self.tir_expr(sc, &args[2]);
        let cond = cond.and_then(|v| self.expect_dtype(v, DataType::bool(), args[0].span));
        let (t, f) = unify::<TirScope>(t?, f?);
        let f = self.expect_dtype(f, t.dtype(), args[2].span)?;
        let cond = cond?;
        Some(if name == "Select" {
            PrimExpr::select(cond, t, f)
        } else {
            PrimExpr::call(t.dtype(), "if_then_else", vec![cond, t, f])
        })
    }

    /// `T.Div(a, b)`, TVM's printing of `tir.Div`: true division of
    /// floats, `T.truncdiv` (toward zero) of integers.
    fn tir_div(&mut self, sc: &mut TirScope, c: &ScalarCall<'_>) -> Lowered<PrimExpr> {
        if !c.arity(self, 2) {
            return None;
        }
        let a = self.tir_expr(sc, &c.args[0]);
        let b = self.tir_expr(sc, &c.args[1]);
        let (a, b) = unify::<TirScope>(a?, b?);
        let b = self.expect_dtype(b, a.dtype(), c.args[1].span)?;
        Some(if a.dtype().is_float() {
            a.floordiv(b)
        } else {
            PrimExpr::call(a.dtype(), "truncdiv", vec![a, b])
        })
    }

    /// `T.exp(x)`, `T.pow(x, y)`, … (see [`INTRINSICS`]).
    fn tir_intrinsic(
        &mut self,
        sc: &mut TirScope,
        c: &ScalarCall<'_>,
        name: &str,
    ) -> Lowered<PrimExpr> {
        let n = match name {
            "pow" | "atan2" | "fmod" | "bitwise_and" | "bitwise_or" | "bitwise_xor"
            | "shift_left" | "shift_right" | "truncdiv" | "truncmod" => 2,
            // The dot-product steps: `T.dpbusd(acc, a, b)` (int32 words),
            // `T.dpbf16ps(acc, a, b)` (a float32 accumulator); the result
            // has the accumulator's dtype.
            "dpbusd" | "dpbf16ps" => 3,
            // `T.prefetch(T.address_of(B[i]), rw, locality, cache_type)`.
            "prefetch" => 4,
            _ => 1,
        };
        if !c.arity(self, n) {
            return None;
        }
        let mut vals = self.lower_all(c.args, |this, a| this.tir_expr(sc, a))?;
        if vals.len() == 2 {
            let b = vals.pop()?;
            let a = vals.pop()?;
            let (a, b) = unify::<TirScope>(a, b);
            let b = self.expect_dtype(b, a.dtype(), c.args[1].span)?;
            vals = vec![a, b];
        }
        let dt = match name {
            "isnan" | "isinf" => DataType::bool(),
            "address_of" => DataType::handle(),
            "prefetch" => DataType::i32(),
            _ => vals[0].dtype(),
        };
        Some(PrimExpr::call(dt, name, vals))
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
