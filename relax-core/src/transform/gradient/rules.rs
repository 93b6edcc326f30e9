//! The gradient rules: for one op call `y = op(args)` and the adjoint `g`
//! of `y`, what each argument's adjoint gets (TVM's `FPrimalGradient`, the
//! functions of `relax/op/_op_gradient.py`). Each rule binds what it needs
//! with the block builder and returns the last step unbound, so the sweep
//! can name it `x_adjoint`.
//!
//! | op | rule (`x`, `y`, `g`) |
//! |---|---|
//! | add, subtract | `g`, `-g` |
//! | multiply, divide | `g·b`, `g·a`; `g/b`, `-(g·y)/b` |
//! | power | `g·b·a^(b-1)`, `g·y·log a` |
//! | maximum, minimum | `g` where the operand was chosen (`a` on ties) |
//! | negative, abs | `-g`; `g` or `-g` by the sign of `x` |
//! | exp, log, sqrt, rsqrt | `g·y`, `g/x`, `g/(2y)`, `-½·g·y/x` |
//! | sigmoid, tanh | `g·y·(1-y)`, `g·(1-y²)` |
//! | sin, cos, tan, atan | `g·cos x`, `-g·sin x`, `g·(1+y²)`, `g/(1+x²)` |
//! | sinh, cosh | `g·cosh x`, `g·sinh x` |
//! | erf, square | `g·2/√π·e^(-x²)`, `2·g·x` |
//! | nn.relu, nn.silu | `g` where `x > 0`; `g·(s + y·(1-s))`, `s = sigmoid(x)` |
//! | nn.softmax, nn.log_softmax | `y·(g - Σ g·y)`, `g - exp(y)·Σ g` (over `axis`) |
//! | sum, mean | `g` broadcast back over the reduced axes (÷ their size) |
//! | matmul | `g·bᵀ`, `aᵀ·g` (batch dims collapsed, 1-d operands as rows/columns) |
//! | permute_dims | `g` under the inverse permutation |
//! | reshape, flatten, expand_dims, squeeze | `g` reshaped to `x`'s shape |
//! | broadcast_to | `g` summed back to `x`'s shape |
//! | concat, split | `split(g)`, `concat(g)` |
//! | where | `g` where the condition chose the operand |
//! | astype | `g` cast back |
//! | ewise_fma | `g·b`, `g·a`, `g` |
//! | comparisons, isnan/isinf/isfinite, the logical and bitwise ops, shifts, argmax, argmin, zeros, ones, full, arange, eye_like, nonzero, one_hot, shape_of, shape_to_tensor, tensor_to_shape | none |
//!
//! The other elementwise ops (floor, ceil, round, trunc, sign, floor_divide,
//! floor_mod, mod, the inverse trigonometric and hyperbolic functions but
//! atan) have no rule, nor do the indexing ops take, strided_slice,
//! gather_elements, gather_nd, scatter_elements, scatter_nd, cumsum,
//! cumprod, tril, triu and flip: differentiating through one is an error
//! naming it.
//!
//! Every operand an op broadcasts gets its adjoint summed back to its own
//! shape ([`Ctx::collapse`]).

use super::error;
use crate::block_builder::BlockBuilder;
use crate::ir::{AttrValue, Attrs, Call, Expr, ExprKind, PrimExpr, Var};
use relax_runtime::{DataType, Error};

/// One op call being differentiated.
pub(super) struct Ctx<'a> {
    pub bb: &'a mut BlockBuilder,
    pub call: &'a Call,
    /// The op's name, `relax.…`.
    pub op: &'a str,
    /// The variable the call is bound to (`y`).
    pub out: &'a Var,
    /// `y`'s adjoint: a variable, or a tuple of variables for a tuple `y`.
    pub adjoint: Expr,
    /// Which arguments lead to a required parameter.
    pub wanted: &'a [bool],
}

/// `expr` as an argument: bound to a variable unless it is a leaf (a
/// tuple's fields each made leaves).
pub(super) fn leaf(bb: &mut BlockBuilder, expr: Expr) -> Result<Expr, Error> {
    match expr.kind() {
        ExprKind::Var(_)
        | ExprKind::Constant(_)
        | ExprKind::PrimValue(_)
        | ExprKind::ShapeExpr(_)
        | ExprKind::DataTypeImm(_)
        | ExprKind::StringImm(_) => Ok(expr),
        ExprKind::Tuple(fields) => {
            let fields = fields
                .iter()
                .map(|f| leaf(bb, f.clone()))
                .collect::<Result<_, _>>()?;
            Ok(Expr::tuple(fields))
        }
        _ => Ok(Expr::var(&bb.emit(expr)?)),
    }
}

fn dtype_attr(dtype: DataType) -> Attrs {
    Attrs::from_pairs([("dtype", AttrValue::DataType(dtype))])
}

/// `R.ones(dims, dtype)`, unbound.
pub(super) fn ones(dims: &[PrimExpr], dtype: DataType) -> Expr {
    Expr::call_op(
        "relax.ones",
        vec![Expr::shape(dims.to_vec())],
        dtype_attr(dtype),
    )
}

/// `R.zeros(dims, dtype)`, unbound.
pub(super) fn zeros(dims: &[PrimExpr], dtype: DataType) -> Expr {
    Expr::call_op(
        "relax.zeros",
        vec![Expr::shape(dims.to_vec())],
        dtype_attr(dtype),
    )
}

fn int_array(values: impl IntoIterator<Item = i64>) -> AttrValue {
    AttrValue::Array(values.into_iter().map(AttrValue::Int).collect())
}

fn axis_attrs(axes: impl IntoIterator<Item = i64>, keepdims: bool) -> Attrs {
    Attrs::from_pairs([
        ("axis", int_array(axes)),
        ("keepdims", AttrValue::Bool(keepdims)),
    ])
}

impl Ctx<'_> {
    fn arg(&self, i: usize) -> Result<&Expr, Error> {
        self.call.args.get(i).ok_or_else(|| {
            error(format!(
                "`{}` = {}: argument {i} is missing",
                self.out.name_hint(),
                self.op
            ))
        })
    }

    /// The dims and dtype of a tensor-valued expression.
    fn tensor(&self, e: &Expr) -> Result<(Vec<PrimExpr>, DataType), Error> {
        e.struct_info()
            .and_then(|s| s.as_tensor())
            .and_then(|t| Some((t.shape_values()?.to_vec(), t.dtype)))
            .ok_or_else(|| {
                error(format!(
                    "`{}` = {}(…): differentiating it needs the shape of {e}, which is not known",
                    self.out.name_hint(),
                    self.op
                ))
            })
    }

    fn y(&self) -> Expr {
        Expr::var(self.out)
    }

    /// The attributes of the call with their defaults filled in.
    fn attrs(&self) -> Result<Attrs, Error> {
        let info = crate::op::lookup(self.op)
            .ok_or_else(|| error(format!("`{}` is not a registered op", self.op)))?;
        info.normalize_attrs(&self.call.attrs)
            .map_err(|d| Error::Compile(vec![d]))
    }

    /// An integer axis attribute, made non-negative for rank `ndim`.
    fn axis(&self, attrs: &Attrs, name: &str, ndim: usize) -> Result<usize, Error> {
        let a = attrs.get(name).and_then(AttrValue::as_int).unwrap_or(0);
        normalize_axis(a, ndim).ok_or_else(|| {
            error(format!(
                "`{}` = {}: axis {a} is out of range for rank {ndim}",
                self.out.name_hint(),
                self.op
            ))
        })
    }

    /// `op(args…)` with `attrs` (defaults filled in, as the parser fills
    /// them), unbound; arguments bound first.
    fn call(&mut self, op: &str, args: Vec<Expr>, attrs: Attrs) -> Result<Expr, Error> {
        let args = args
            .into_iter()
            .map(|a| leaf(self.bb, a))
            .collect::<Result<_, _>>()?;
        let info =
            crate::op::lookup(op).ok_or_else(|| error(format!("`{op}` is not a registered op")))?;
        info.call(args, &attrs).map_err(|d| Error::Compile(vec![d]))
    }

    fn op2(&mut self, op: &str, a: Expr, b: Expr) -> Result<Expr, Error> {
        self.call(op, vec![a, b], Attrs::new())
    }

    fn op1(&mut self, op: &str, a: Expr) -> Result<Expr, Error> {
        self.call(op, vec![a], Attrs::new())
    }

    /// A scalar constant of `dtype`.
    fn scalar(&self, v: f64, dtype: DataType) -> Result<Expr, Error> {
        crate::transform::decompose_ops::scalar(v, dtype).ok_or_else(|| {
            error(format!(
                "`{}` = {}(…): the gradient needs a constant of dtype {dtype}, \
                 and only float32 and float64 constants are made here",
                self.out.name_hint(),
                self.op
            ))
        })
    }

    /// `e`, of shape `from`, summed over the axes that broadcasting added to
    /// an operand of shape `to` (TVM's `collapse_sum_to`): the leading
    /// axes, and those where `to` is 1 and `from` is not.
    fn collapse(&mut self, e: Expr, from: &[PrimExpr], to: &[PrimExpr]) -> Result<Expr, Error> {
        let (r, k) = (from.len(), to.len());
        if k > r {
            return Err(error(format!(
                "`{}` = {}(…): an operand of rank {k} cannot broadcast to rank {r}",
                self.out.name_hint(),
                self.op
            )));
        }
        let lead = r - k;
        let mut axes: Vec<i64> = (0..lead as i64).collect();
        let mut inner = false;
        for (j, d) in to.iter().enumerate() {
            if d.as_int() == Some(1) && from[lead + j].as_int() != Some(1) {
                axes.push((lead + j) as i64);
                inner = true;
            }
        }
        if axes.is_empty() {
            return Ok(e);
        }
        if !inner {
            return self.call("relax.sum", vec![e], axis_attrs(axes, false));
        }
        let summed = self.call("relax.sum", vec![e], axis_attrs(axes, true))?;
        if lead == 0 {
            return Ok(summed);
        }
        self.call(
            "relax.reshape",
            vec![summed, Expr::shape(to.to_vec())],
            Attrs::new(),
        )
    }

    /// `e`, of the call's result shape, collapsed to argument `i`'s shape.
    fn collapse_to_arg(&mut self, e: Expr, i: usize) -> Result<Expr, Error> {
        let (from, _) = self.tensor(&self.y())?;
        let (to, _) = self.tensor(&self.arg(i)?.clone())?;
        self.collapse(e, &from, &to)
    }

    /// `where(cond, g, 0)`, or `where(cond, 0, g)` when `g_if_true` is false.
    fn select(&mut self, cond: Expr, g: Expr, g_if_true: bool) -> Result<Expr, Error> {
        let (_, dtype) = self.tensor(&self.y())?;
        let zero = self.scalar(0.0, dtype)?;
        let (t, f) = if g_if_true { (g, zero) } else { (zero, g) };
        self.call("relax.where", vec![cond, t, f], Attrs::new())
    }
}

fn normalize_axis(a: i64, ndim: usize) -> Option<usize> {
    let n = ndim as i64;
    let a = if a < 0 { a + n } else { a };
    (0..n).contains(&a).then_some(a as usize)
}

/// The adjoint contribution of each argument of `ctx.call` (`None` for an
/// argument that needs none).
pub(super) fn gradient(ctx: &mut Ctx) -> Result<Vec<Option<Expr>>, Error> {
    let n = ctx.call.args.len();
    let g = ctx.adjoint.clone();
    let y = ctx.y();
    let want = |i: usize| ctx.wanted.get(i).copied().unwrap_or(false);
    let (w0, w1, w2) = (want(0), want(1), want(2));
    let mut out: Vec<Option<Expr>> = vec![None; n];
    let arg = |ctx: &Ctx, i: usize| ctx.arg(i).cloned();
    match ctx.op {
        "relax.add" | "relax.subtract" => {
            if w0 {
                out[0] = Some(ctx.collapse_to_arg(g.clone(), 0)?);
            }
            if w1 {
                let g1 = if ctx.op == "relax.add" {
                    g
                } else {
                    ctx.op1("relax.negative", g)?
                };
                out[1] = Some(ctx.collapse_to_arg(g1, 1)?);
            }
        }
        "relax.multiply" => {
            let (a, b) = (arg(ctx, 0)?, arg(ctx, 1)?);
            if w0 {
                let e = ctx.op2("relax.multiply", g.clone(), b)?;
                out[0] = Some(ctx.collapse_to_arg(e, 0)?);
            }
            if w1 {
                let e = ctx.op2("relax.multiply", g, a)?;
                out[1] = Some(ctx.collapse_to_arg(e, 1)?);
            }
        }
        "relax.divide" => {
            let b = arg(ctx, 1)?;
            if w0 {
                let e = ctx.op2("relax.divide", g.clone(), b.clone())?;
                out[0] = Some(ctx.collapse_to_arg(e, 0)?);
            }
            if w1 {
                let gy = ctx.op2("relax.multiply", g, y)?;
                let q = ctx.op2("relax.divide", gy, b)?;
                let e = ctx.op1("relax.negative", q)?;
                out[1] = Some(ctx.collapse_to_arg(e, 1)?);
            }
        }
        "relax.power" => {
            let (a, b) = (arg(ctx, 0)?, arg(ctx, 1)?);
            let (_, dtype) = ctx.tensor(&y)?;
            if w0 {
                let one = ctx.scalar(1.0, dtype)?;
                let bm1 = ctx.op2("relax.subtract", b.clone(), one)?;
                let p = ctx.op2("relax.power", a.clone(), bm1)?;
                let bp = ctx.op2("relax.multiply", b, p)?;
                let e = ctx.op2("relax.multiply", g.clone(), bp)?;
                out[0] = Some(ctx.collapse_to_arg(e, 0)?);
            }
            if w1 {
                let la = ctx.op1("relax.log", a)?;
                let gy = ctx.op2("relax.multiply", g, y)?;
                let e = ctx.op2("relax.multiply", gy, la)?;
                out[1] = Some(ctx.collapse_to_arg(e, 1)?);
            }
        }
        "relax.maximum" | "relax.minimum" => {
            let (a, b) = (arg(ctx, 0)?, arg(ctx, 1)?);
            let picks_a = if ctx.op == "relax.maximum" {
                "relax.greater_equal"
            } else {
                "relax.less_equal"
            };
            let cond = ctx.op2(picks_a, a, b)?;
            let cond = leaf(ctx.bb, cond)?;
            if w0 {
                let e = ctx.select(cond.clone(), g.clone(), true)?;
                out[0] = Some(ctx.collapse_to_arg(e, 0)?);
            }
            if w1 {
                let e = ctx.select(cond, g, false)?;
                out[1] = Some(ctx.collapse_to_arg(e, 1)?);
            }
        }
        "relax.ewise_fma" => {
            let (a, b) = (arg(ctx, 0)?, arg(ctx, 1)?);
            if w0 {
                let e = ctx.op2("relax.multiply", g.clone(), b)?;
                out[0] = Some(ctx.collapse_to_arg(e, 0)?);
            }
            if w1 {
                let e = ctx.op2("relax.multiply", g.clone(), a)?;
                out[1] = Some(ctx.collapse_to_arg(e, 1)?);
            }
            if w2 {
                out[2] = Some(ctx.collapse_to_arg(g, 2)?);
            }
        }
        "relax.where" => {
            let cond = arg(ctx, 0)?;
            if w1 {
                let e = ctx.select(cond.clone(), g.clone(), true)?;
                out[1] = Some(ctx.collapse_to_arg(e, 1)?);
            }
            if w2 {
                let e = ctx.select(cond, g, false)?;
                out[2] = Some(ctx.collapse_to_arg(e, 2)?);
            }
        }
        "relax.matmul" => {
            let (da, db) = matmul(ctx, g)?;
            out[0] = da;
            out[1] = db;
        }
        _ if w0 => out[0] = unary(ctx, g)?,
        _ => {}
    }
    Ok(out)
}

/// The rules of ops whose only differentiable argument is the first.
fn unary(ctx: &mut Ctx, g: Expr) -> Result<Option<Expr>, Error> {
    let x = ctx.arg(0)?.clone();
    let y = ctx.y();
    let dtype = || ctx.tensor(&ctx.y()).map(|(_, d)| d);
    let e = match ctx.op {
        "relax.negative" => ctx.op1("relax.negative", g)?,
        "relax.abs" => {
            let zero = ctx.scalar(0.0, dtype()?)?;
            let neg = ctx.op2("relax.less", x, zero)?;
            let ng = ctx.op1("relax.negative", g.clone())?;
            ctx.call("relax.where", vec![neg, ng, g], Attrs::new())?
        }
        "relax.exp" => ctx.op2("relax.multiply", g, y)?,
        "relax.log" => ctx.op2("relax.divide", g, x)?,
        "relax.sqrt" => {
            let two = ctx.scalar(2.0, dtype()?)?;
            let d = ctx.op2("relax.multiply", y, two)?;
            ctx.op2("relax.divide", g, d)?
        }
        "relax.rsqrt" => {
            let half = ctx.scalar(-0.5, dtype()?)?;
            let q = ctx.op2("relax.divide", y, x)?;
            let s = ctx.op2("relax.multiply", q, half)?;
            ctx.op2("relax.multiply", g, s)?
        }
        "relax.sigmoid" => {
            let one = ctx.scalar(1.0, dtype()?)?;
            let c = ctx.op2("relax.subtract", one, y.clone())?;
            let d = ctx.op2("relax.multiply", y, c)?;
            ctx.op2("relax.multiply", g, d)?
        }
        "relax.tanh" => {
            let one = ctx.scalar(1.0, dtype()?)?;
            let y2 = ctx.op2("relax.multiply", y.clone(), y)?;
            let d = ctx.op2("relax.subtract", one, y2)?;
            ctx.op2("relax.multiply", g, d)?
        }
        "relax.sin" => {
            let c = ctx.op1("relax.cos", x)?;
            ctx.op2("relax.multiply", g, c)?
        }
        "relax.cos" => {
            let s = ctx.op1("relax.sin", x)?;
            let ns = ctx.op1("relax.negative", s)?;
            ctx.op2("relax.multiply", g, ns)?
        }
        "relax.sinh" => {
            let c = ctx.op1("relax.cosh", x)?;
            ctx.op2("relax.multiply", g, c)?
        }
        "relax.cosh" => {
            let s = ctx.op1("relax.sinh", x)?;
            ctx.op2("relax.multiply", g, s)?
        }
        "relax.tan" => {
            let one = ctx.scalar(1.0, dtype()?)?;
            let y2 = ctx.op2("relax.multiply", y.clone(), y)?;
            let d = ctx.op2("relax.add", one, y2)?;
            ctx.op2("relax.multiply", g, d)?
        }
        "relax.atan" => {
            let one = ctx.scalar(1.0, dtype()?)?;
            let x2 = ctx.op2("relax.multiply", x.clone(), x)?;
            let d = ctx.op2("relax.add", one, x2)?;
            ctx.op2("relax.divide", g, d)?
        }
        "relax.erf" => {
            let k = ctx.scalar(std::f64::consts::FRAC_2_SQRT_PI, dtype()?)?;
            let x2 = ctx.op2("relax.multiply", x.clone(), x)?;
            let nx2 = ctx.op1("relax.negative", x2)?;
            let e = ctx.op1("relax.exp", nx2)?;
            let d = ctx.op2("relax.multiply", e, k)?;
            ctx.op2("relax.multiply", g, d)?
        }
        "relax.square" => {
            let two = ctx.scalar(2.0, dtype()?)?;
            let d = ctx.op2("relax.multiply", x, two)?;
            ctx.op2("relax.multiply", g, d)?
        }
        "relax.nn.relu" => {
            let zero = ctx.scalar(0.0, dtype()?)?;
            let pos = ctx.op2("relax.greater", x, zero)?;
            ctx.select(pos, g, true)?
        }
        "relax.nn.silu" => {
            let one = ctx.scalar(1.0, dtype()?)?;
            let s = ctx.op1("relax.sigmoid", x)?;
            let s = leaf(ctx.bb, s)?;
            let c = ctx.op2("relax.subtract", one, s.clone())?;
            let yc = ctx.op2("relax.multiply", y, c)?;
            let d = ctx.op2("relax.add", s, yc)?;
            ctx.op2("relax.multiply", g, d)?
        }
        "relax.nn.softmax" | "relax.nn.log_softmax" => {
            let attrs = ctx.attrs()?;
            let (dims, _) = ctx.tensor(&x)?;
            let axis = ctx.axis(&attrs, "axis", dims.len())? as i64;
            if ctx.op == "relax.nn.softmax" {
                let gy = ctx.op2("relax.multiply", g.clone(), y.clone())?;
                let s = ctx.call("relax.sum", vec![gy], axis_attrs([axis], true))?;
                let d = ctx.op2("relax.subtract", g, s)?;
                ctx.op2("relax.multiply", y, d)?
            } else {
                let s = ctx.call("relax.sum", vec![g.clone()], axis_attrs([axis], true))?;
                let e = ctx.op1("relax.exp", y)?;
                let es = ctx.op2("relax.multiply", e, s)?;
                ctx.op2("relax.subtract", g, es)?
            }
        }
        "relax.sum" | "relax.mean" => reduce(ctx, &x, g)?,
        "relax.permute_dims" => {
            let attrs = ctx.attrs()?;
            let inverse = match attrs.get("axes").and_then(AttrValue::as_array) {
                None => AttrValue::None,
                Some(axes) => {
                    let n = axes.len();
                    let mut inv = vec![0i64; n];
                    for (i, a) in axes.iter().enumerate() {
                        let a = a.as_int().and_then(|a| normalize_axis(a, n));
                        let a = a.ok_or_else(|| error(format!("bad axes {axes:?}")))?;
                        inv[a] = i as i64;
                    }
                    int_array(inv)
                }
            };
            ctx.call(
                "relax.permute_dims",
                vec![g],
                Attrs::from_pairs([("axes", inverse)]),
            )?
        }
        "relax.reshape" | "relax.flatten" | "relax.expand_dims" | "relax.squeeze" => {
            let (dims, _) = ctx.tensor(&x)?;
            ctx.call("relax.reshape", vec![g, Expr::shape(dims)], Attrs::new())?
        }
        "relax.broadcast_to" => ctx.collapse_to_arg(g, 0)?,
        "relax.astype" => {
            let (_, dtype) = ctx.tensor(&x)?;
            ctx.call("relax.astype", vec![g], dtype_attr(dtype))?
        }
        "relax.concat" => concat(ctx, g)?,
        "relax.split" => {
            let attrs = ctx.attrs()?;
            let (dims, _) = ctx.tensor(&x)?;
            let axis = ctx.axis(&attrs, "axis", dims.len())? as i64;
            ctx.call(
                "relax.concat",
                vec![g],
                Attrs::from_pairs([("axis", AttrValue::Int(axis))]),
            )?
        }
        "relax.equal"
        | "relax.not_equal"
        | "relax.less"
        | "relax.less_equal"
        | "relax.greater"
        | "relax.greater_equal"
        | "relax.isnan"
        | "relax.isinf"
        | "relax.isfinite"
        | "relax.logical_not"
        | "relax.logical_and"
        | "relax.logical_or"
        | "relax.logical_xor"
        | "relax.bitwise_not"
        | "relax.bitwise_and"
        | "relax.bitwise_or"
        | "relax.bitwise_xor"
        | "relax.left_shift"
        | "relax.right_shift"
        | "relax.argmax"
        | "relax.argmin"
        | "relax.zeros"
        | "relax.ones"
        | "relax.full"
        | "relax.shape_of"
        | "relax.shape_to_tensor"
        | "relax.tensor_to_shape"
        | "relax.arange"
        | "relax.eye_like"
        | "relax.nonzero"
        | "relax.one_hot" => return Ok(None),
        op => {
            return Err(error(format!(
                "no gradient rule for `{op}` (the binding of `{}`); the rules cover the ops \
                 listed in transform/gradient/rules.rs",
                ctx.out.name_hint()
            )))
        }
    };
    Ok(Some(e))
}

/// `sum` and `mean`: `g` given back its reduced axes and broadcast to `x`'s
/// shape (divided by the count of reduced elements for `mean`).
fn reduce(ctx: &mut Ctx, x: &Expr, g: Expr) -> Result<Expr, Error> {
    let attrs = ctx.attrs()?;
    let (dims, dtype) = ctx.tensor(x)?;
    let ndim = dims.len();
    let axes: Vec<usize> = match attrs.get("axis").and_then(AttrValue::as_array) {
        None => (0..ndim).collect(),
        Some(list) => {
            let mut axes = Vec::new();
            for a in list {
                let a = a.as_int().and_then(|a| normalize_axis(a, ndim));
                axes.push(a.ok_or_else(|| error(format!("bad reduction axes {list:?}")))?);
            }
            axes.sort_unstable();
            axes.dedup();
            axes
        }
    };
    let keepdims = attrs
        .get("keepdims")
        .and_then(AttrValue::as_bool)
        .unwrap_or(false);
    let mut grad = g;
    if !axes.is_empty() {
        if !keepdims && axes.len() < ndim {
            grad = ctx.call(
                "relax.expand_dims",
                vec![grad],
                Attrs::from_pairs([("axis", int_array(axes.iter().map(|&a| a as i64)))]),
            )?;
        }
        grad = ctx.call(
            "relax.broadcast_to",
            vec![grad, Expr::shape(dims.clone())],
            Attrs::new(),
        )?;
    }
    if ctx.op == "relax.mean" && !axes.is_empty() {
        let count: Option<i64> = axes
            .iter()
            .map(|&a| dims[a].as_int())
            .try_fold(1i64, |acc, d| d.and_then(|d| acc.checked_mul(d)));
        let divisor = match count {
            Some(c) => ctx.scalar(c as f64, dtype)?,
            // A symbolic count, as a tensor: the sum of ones over the axes.
            None => ctx.call(
                "relax.sum",
                vec![ones(&dims, dtype)],
                axis_attrs(axes.iter().map(|&a| a as i64), true),
            )?,
        };
        grad = ctx.op2("relax.divide", grad, divisor)?;
    }
    Ok(grad)
}

/// `concat((x0, x1, …), axis)`: `g` split back at the fields' extents
/// (which must be known integers along `axis`).
fn concat(ctx: &mut Ctx, g: Expr) -> Result<Expr, Error> {
    let attrs = ctx.attrs()?;
    let tuple = ctx.arg(0)?.clone();
    let fields: Vec<_> = match tuple.struct_info().and_then(|s| s.as_tuple()) {
        Some(f) => f.to_vec(),
        None => {
            return Err(error(format!(
                "`{}` = concat(…): the fields of its tuple are not known",
                ctx.out.name_hint()
            )))
        }
    };
    let (out_dims, _) = ctx.tensor(&ctx.y())?;
    let axis = ctx.axis(&attrs, "axis", out_dims.len())?;
    let mut sizes = Vec::new();
    for f in &fields {
        let d = f
            .as_tensor()
            .and_then(|t| t.shape_values())
            .and_then(|dims| dims.get(axis))
            .and_then(PrimExpr::as_int);
        sizes.push(d.ok_or_else(|| {
            error(format!(
                "`{}` = concat(…): the gradient splits at the fields' extents along axis \
                 {axis}, and {f} has none that is a known integer",
                ctx.out.name_hint()
            ))
        })?);
    }
    if fields.len() == 1 {
        return Ok(Expr::tuple(vec![g]));
    }
    let indices = sizes[..sizes.len() - 1].iter().scan(0i64, |acc, s| {
        *acc += s;
        Some(*acc)
    });
    let split = ctx.call(
        "relax.split",
        vec![g],
        Attrs::from_pairs([
            ("indices_or_sections", int_array(indices)),
            ("axis", AttrValue::Int(axis as i64)),
        ]),
    )?;
    let parts = leaf(ctx.bb, split)?;
    Ok(Expr::tuple(
        (0..fields.len())
            .map(|i| Expr::tuple_get_item(parts.clone(), i))
            .collect(),
    ))
}

/// `matmul(a, b)`: `g·bᵀ` and `aᵀ·g`, with a 1-d `a` taken as a row and a
/// 1-d `b` as a column, and batch dims that broadcast summed back: the
/// contributions of `a` and `b`, each if wanted.
fn matmul(ctx: &mut Ctx, g: Expr) -> Result<(Option<Expr>, Option<Expr>), Error> {
    let a = ctx.arg(0)?.clone();
    let b = ctx.arg(1)?.clone();
    let (a_dims, a_dtype) = ctx.tensor(&a)?;
    let (b_dims, _) = ctx.tensor(&b)?;
    let (y_dims, y_dtype) = ctx.tensor(&ctx.y())?;
    if y_dtype != a_dtype {
        return Err(error(format!(
            "`{}` = matmul(…) with out_dtype {y_dtype} on {a_dtype} operands: \
             its gradient is not built",
            ctx.out.name_hint()
        )));
    }
    let one = PrimExpr::int(1);
    let swap = |r: usize| -> Attrs {
        let mut axes: Vec<i64> = (0..r as i64).collect();
        axes.swap(r - 2, r - 1);
        Attrs::from_pairs([("axes", int_array(axes))])
    };
    // Operands and g with 1-d operands made 2-d.
    let (a2, a2_dims) = if a_dims.len() == 1 {
        let e = ctx.call(
            "relax.expand_dims",
            vec![a.clone()],
            Attrs::from_pairs([("axis", int_array([0]))]),
        )?;
        (e, vec![one.clone(), a_dims[0].clone()])
    } else {
        (a.clone(), a_dims.clone())
    };
    let (b2, b2_dims) = if b_dims.len() == 1 {
        let e = ctx.call(
            "relax.expand_dims",
            vec![b.clone()],
            Attrs::from_pairs([("axis", int_array([1]))]),
        )?;
        (e, vec![b_dims[0].clone(), one.clone()])
    } else {
        (b.clone(), b_dims.clone())
    };
    let mut g2_dims = y_dims.clone();
    if a_dims.len() == 1 {
        g2_dims.insert(g2_dims.len() - usize::from(b_dims.len() != 1), one.clone());
    }
    if b_dims.len() == 1 {
        g2_dims.push(one.clone());
    }
    let g2 = if g2_dims.len() != y_dims.len() {
        ctx.call(
            "relax.reshape",
            vec![g, Expr::shape(g2_dims.clone())],
            Attrs::new(),
        )?
    } else {
        g
    };
    let g2 = leaf(ctx.bb, g2)?;
    let r = g2_dims.len();
    let batch = &g2_dims[..r - 2];
    let (m, n) = (&g2_dims[r - 2], &g2_dims[r - 1]);
    let back =
        |ctx: &mut Ctx, e: Expr, from: Vec<PrimExpr>, two: &[PrimExpr], orig: &[PrimExpr]| {
            let c = ctx.collapse(e, &from, two)?;
            if orig.len() == 1 {
                ctx.call(
                    "relax.reshape",
                    vec![c, Expr::shape(orig.to_vec())],
                    Attrs::new(),
                )
            } else {
                Ok(c)
            }
        };
    let mut da = None;
    let mut db = None;
    if ctx.wanted.first().copied().unwrap_or(false) {
        let bt = ctx.call("relax.permute_dims", vec![b2], swap(b2_dims.len()))?;
        let e = ctx.op2("relax.matmul", g2.clone(), bt)?;
        let k = a2_dims[a2_dims.len() - 1].clone();
        let from = [batch, &[m.clone(), k]].concat();
        da = Some(back(ctx, e, from, &a2_dims, &a_dims)?);
    }
    if ctx.wanted.get(1).copied().unwrap_or(false) {
        let at = ctx.call("relax.permute_dims", vec![a2], swap(a2_dims.len()))?;
        let e = ctx.op2("relax.matmul", at, g2)?;
        let k = b2_dims[b2_dims.len() - 2].clone();
        let from = [batch, &[k, n.clone()]].concat();
        db = Some(back(ctx, e, from, &b2_dims, &b_dims)?);
    }
    Ok((da, db))
}
