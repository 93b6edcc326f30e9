//! Elementwise ops: arithmetic, comparisons, logical and bitwise ops, unary
//! math, activations.
//!
//! Before opset 7, binary ops broadcast only when `broadcast = 1`, and
//! `axis` placed the second operand's dims starting at that axis of the
//! first; that form is reshaped into numpy broadcasting (trailing ones).
//! `PRelu`'s 1-d slope before opset 7 runs along the channels (axis 1).
//! Activations the registry lacks are written exactly with its ops:
//! `LeakyRelu`, `PRelu`, `Elu`, `Selu` as a `where` on `x > 0`,
//! `Softplus` as `max(x, 0) + log(1 + exp(-|x|))` (no overflow),
//! `Softsign` as `x / (1 + |x|)`, `HardSigmoid` as a clamped line,
//! `HardSwish` as `x` times that line (`alpha = 1/6`, `beta = 1/2`),
//! `Mish` as `x · tanh(softplus(x))`, `Celu` as
//! `max(0, x) + min(0, alpha · (exp(x / alpha) - 1))`, `ThresholdedRelu`
//! and `Shrink` as `where`s, `Gelu` as `nn.gelu` (the erf form) or, with
//! `approximate = "tanh"`, `x/2 · (1 + tanh(√(2/π) · (x + 0.044715 x³)))`.
//!
//! `Mod` with `fmod = 0` is `floor_mod` (the divisor's sign), with
//! `fmod = 1` C's `fmod` (`mod`, the dividend's sign). `IsInf` honours
//! `detect_positive`/`detect_negative` by comparing with the infinity
//! wanted. `BitShift` is `left_shift` or `right_shift` by `direction`.
//! `Round` is half to even; `CastLike` is `astype` to the second input's
//! dtype.

use super::{shape, Ctx};
use relax_core::ir::{AttrValue, Attrs, Expr, PrimExpr};
use relax_runtime::{DataType, Error};

/// A binary op, with pre-opset-7 broadcasting.
fn binary(cx: &mut Ctx, op: &str) -> Result<Vec<Expr>, Error> {
    let a = cx.input(0)?;
    let mut b = cx.input(1)?;
    if cx.opset < 7 && cx.node.int_or("broadcast", 0)? == 1 {
        if let Some(axis) = cx.node.int("axis")? {
            let (a_dims, _) = cx.tensor(&a)?;
            let (b_dims, _) = cx.tensor(&b)?;
            let n = a_dims.len() as i64;
            let axis = if axis < 0 { axis + n } else { axis };
            let trailing = n - axis - b_dims.len() as i64;
            if axis < 0 || trailing < 0 {
                return Err(cx.error(format!(
                    "legacy broadcast at axis {axis} does not fit ranks {} and {}",
                    a_dims.len(),
                    b_dims.len()
                )));
            }
            if trailing > 0 {
                let mut dims = b_dims.clone();
                dims.extend((0..trailing).map(|_| PrimExpr::int(1)));
                b = cx.call("relax.reshape", vec![b, shape(dims)], Attrs::new())?;
            }
        }
    }
    Ok(vec![cx.op2(op, a, b)?])
}

/// `Pow(x, y)`: the result has x's type, whatever y's (ONNX lets them
/// differ). A float exponent of an integer base is computed in the
/// exponent's type and converted back; otherwise the exponent is converted
/// to the base's type.
pub fn pow(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let (x, y) = (cx.input(0)?, cx.input(1)?);
    let (_, xt) = cx.tensor(&x)?;
    let (_, yt) = cx.tensor(&y)?;
    if xt == yt || cx.opset < 12 {
        return binary(cx, "relax.power");
    }
    let cast = |cx: &mut Ctx, e: Expr, d: DataType| {
        cx.call(
            "relax.astype",
            vec![e],
            Attrs::from_pairs([("dtype", AttrValue::DataType(d))]),
        )
    };
    if !xt.is_float() && yt.is_float() {
        let xf = cast(cx, x, yt)?;
        let z = cx.op2("relax.power", xf, y)?;
        return Ok(vec![cast(cx, z, xt)?]);
    }
    let y = cast(cx, y, xt)?;
    Ok(vec![cx.op2("relax.power", x, y)?])
}

macro_rules! binaries {
    ($($name:ident => $op:literal),* $(,)?) => {
        $(pub fn $name(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
            binary(cx, $op)
        })*
    };
}

binaries! {
    add => "relax.add",
    sub => "relax.subtract",
    mul => "relax.multiply",
    div => "relax.divide",
    equal => "relax.equal",
    greater => "relax.greater",
    greater_or_equal => "relax.greater_equal",
    less => "relax.less",
    less_or_equal => "relax.less_equal",
    and => "relax.logical_and",
    or => "relax.logical_or",
    xor => "relax.logical_xor",
    bitwise_and => "relax.bitwise_and",
    bitwise_or => "relax.bitwise_or",
    bitwise_xor => "relax.bitwise_xor",
}

/// A variadic op folded left with `op`.
fn variadic(cx: &mut Ctx, op: &str) -> Result<Expr, Error> {
    let inputs = cx.inputs()?;
    let mut it = inputs.into_iter();
    let mut acc = it
        .next()
        .ok_or_else(|| cx.error("needs at least one input"))?;
    for x in it {
        acc = cx.op2(op, acc, x)?;
    }
    Ok(acc)
}

pub fn sum(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    Ok(vec![variadic(cx, "relax.add")?])
}

pub fn max(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    Ok(vec![variadic(cx, "relax.maximum")?])
}

pub fn min(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    Ok(vec![variadic(cx, "relax.minimum")?])
}

pub fn mean(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let n = cx.inputs()?.len();
    let total = variadic(cx, "relax.add")?;
    let (_, dtype) = cx.tensor(&total)?;
    let n = cx.scalar(n as f64, dtype)?;
    Ok(vec![cx.op2("relax.divide", total, n)?])
}

macro_rules! unaries {
    ($($name:ident => $op:literal),* $(,)?) => {
        $(pub fn $name(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
            let x = cx.input(0)?;
            Ok(vec![cx.op1($op, x)?])
        })*
    };
}

unaries! {
    relu => "relax.nn.relu",
    sigmoid => "relax.sigmoid",
    tanh => "relax.tanh",
    exp => "relax.exp",
    log => "relax.log",
    sqrt => "relax.sqrt",
    abs => "relax.abs",
    neg => "relax.negative",
    erf => "relax.erf",
    sin => "relax.sin",
    cos => "relax.cos",
    tan => "relax.tan",
    asin => "relax.asin",
    acos => "relax.acos",
    atan => "relax.atan",
    sinh => "relax.sinh",
    cosh => "relax.cosh",
    asinh => "relax.asinh",
    acosh => "relax.acosh",
    atanh => "relax.atanh",
    floor => "relax.floor",
    ceil => "relax.ceil",
    round => "relax.round",
    sign => "relax.sign",
    is_nan => "relax.isnan",
    not => "relax.logical_not",
    bitwise_not => "relax.bitwise_not",
}

pub fn bit_shift(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let op = match cx.node.string("direction")?.as_deref() {
        Some("LEFT") => "relax.left_shift",
        Some("RIGHT") => "relax.right_shift",
        other => {
            return Err(cx.error(format!(
                "attribute `direction` must be \"LEFT\" or \"RIGHT\", found {other:?}"
            )))
        }
    };
    binary(cx, op)
}

pub fn mod_(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let op = match cx.node.int_or("fmod", 0)? {
        0 => "relax.floor_mod",
        1 => "relax.mod",
        v => return Err(cx.error(format!("attribute `fmod` must be 0 or 1, found {v}"))),
    };
    binary(cx, op)
}

pub fn is_inf(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let (x, dtype) = x_and_dtype(cx)?;
    let pos = cx.node.int_or("detect_positive", 1)? != 0;
    let neg = cx.node.int_or("detect_negative", 1)? != 0;
    let y = match (pos, neg) {
        (true, true) => cx.op1("relax.isinf", x)?,
        (true, false) | (false, true) => {
            let inf = if pos {
                f64::INFINITY
            } else {
                f64::NEG_INFINITY
            };
            let inf = cx.scalar(inf, dtype)?;
            cx.op2("relax.equal", x, inf)?
        }
        // Nothing detected: `x < x` is false everywhere (NaN included).
        (false, false) => cx.op2("relax.less", x.clone(), x)?,
    };
    Ok(vec![y])
}

pub fn cast_like(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let like = cx.input(1)?;
    let (_, dtype) = cx.tensor(&like)?;
    let attrs = Attrs::from_pairs([("dtype", AttrValue::DataType(dtype))]);
    Ok(vec![cx.call("relax.astype", vec![x], attrs)?])
}

/// The input and its dtype.
fn x_and_dtype(cx: &mut Ctx) -> Result<(Expr, DataType), Error> {
    let x = cx.input(0)?;
    let (_, dtype) = cx.tensor(&x)?;
    Ok((x, dtype))
}

pub fn reciprocal(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let (x, dtype) = x_and_dtype(cx)?;
    let one = cx.scalar(1.0, dtype)?;
    Ok(vec![cx.op2("relax.divide", one, x)?])
}

/// `where(x > 0, x, negative)`.
pub(super) fn positive_or(
    cx: &mut Ctx,
    x: Expr,
    negative: Expr,
    dtype: DataType,
) -> Result<Expr, Error> {
    let zero = cx.scalar(0.0, dtype)?;
    let pos = cx.op2("relax.greater", x.clone(), zero)?;
    cx.call("relax.where", vec![pos, x, negative], Attrs::new())
}

pub fn leaky_relu(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let (x, dtype) = x_and_dtype(cx)?;
    let alpha = cx.node.float_or("alpha", 0.01)?;
    let alpha = cx.scalar(f64::from(alpha), dtype)?;
    let scaled = cx.op2("relax.multiply", x.clone(), alpha)?;
    Ok(vec![positive_or(cx, x, scaled, dtype)?])
}

pub fn prelu(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let (x, dtype) = x_and_dtype(cx)?;
    let mut slope = cx.input(1)?;
    // Before opset 7 a 1-d slope runs along the channels (axis 1).
    let (x_dims, _) = cx.tensor(&x)?;
    let (s_dims, _) = cx.tensor(&slope)?;
    if cx.opset < 7 && s_dims.len() == 1 && x_dims.len() > 2 {
        let mut dims = vec![PrimExpr::int(1); x_dims.len() - 1];
        dims[0] = s_dims[0].clone();
        slope = cx.call("relax.reshape", vec![slope, shape(dims)], Attrs::new())?;
    }
    let scaled = cx.op2("relax.multiply", x.clone(), slope)?;
    Ok(vec![positive_or(cx, x, scaled, dtype)?])
}

/// `alpha · (exp(x) - 1)`.
pub(super) fn exp_minus_one(
    cx: &mut Ctx,
    x: Expr,
    alpha: f64,
    dtype: DataType,
) -> Result<Expr, Error> {
    let e = cx.op1("relax.exp", x)?;
    let one = cx.scalar(1.0, dtype)?;
    let em1 = cx.op2("relax.subtract", e, one)?;
    let alpha = cx.scalar(alpha, dtype)?;
    cx.op2("relax.multiply", em1, alpha)
}

pub fn elu(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let (x, dtype) = x_and_dtype(cx)?;
    let alpha = f64::from(cx.node.float_or("alpha", 1.0)?);
    let neg = exp_minus_one(cx, x.clone(), alpha, dtype)?;
    Ok(vec![positive_or(cx, x, neg, dtype)?])
}

pub fn selu(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let (x, dtype) = x_and_dtype(cx)?;
    let alpha = f64::from(cx.node.float_or("alpha", 1.673_263_2)?);
    let gamma = f64::from(cx.node.float_or("gamma", 1.050_701)?);
    let neg = exp_minus_one(cx, x.clone(), alpha, dtype)?;
    let y = positive_or(cx, x, neg, dtype)?;
    let gamma = cx.scalar(gamma, dtype)?;
    Ok(vec![cx.op2("relax.multiply", y, gamma)?])
}

pub fn softplus(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let (x, dtype) = x_and_dtype(cx)?;
    Ok(vec![softplus_of(cx, x, dtype)?])
}

/// `max(x, 0) + log(1 + exp(-|x|))`: `log(1 + exp(x))` without overflow.
pub(super) fn softplus_of(cx: &mut Ctx, x: Expr, dtype: DataType) -> Result<Expr, Error> {
    let zero = cx.scalar(0.0, dtype)?;
    let pos = cx.op2("relax.maximum", x.clone(), zero)?;
    let a = cx.op1("relax.abs", x)?;
    let na = cx.op1("relax.negative", a)?;
    let e = cx.op1("relax.exp", na)?;
    let one = cx.scalar(1.0, dtype)?;
    let e1 = cx.op2("relax.add", e, one)?;
    let l = cx.op1("relax.log", e1)?;
    cx.op2("relax.add", pos, l)
}

pub fn mish(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let (x, dtype) = x_and_dtype(cx)?;
    let sp = softplus_of(cx, x.clone(), dtype)?;
    let t = cx.op1("relax.tanh", sp)?;
    Ok(vec![cx.op2("relax.multiply", x, t)?])
}

pub fn softsign(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let (x, dtype) = x_and_dtype(cx)?;
    let a = cx.op1("relax.abs", x.clone())?;
    let one = cx.scalar(1.0, dtype)?;
    let d = cx.op2("relax.add", a, one)?;
    Ok(vec![cx.op2("relax.divide", x, d)?])
}

pub fn hard_sigmoid(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let (x, dtype) = x_and_dtype(cx)?;
    let alpha = f64::from(cx.node.float_or("alpha", 0.2)?);
    let beta = f64::from(cx.node.float_or("beta", 0.5)?);
    Ok(vec![clamped_line(cx, x, alpha, beta, dtype)?])
}

pub fn hard_swish(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let (x, dtype) = x_and_dtype(cx)?;
    let line = clamped_line(cx, x.clone(), f64::from(1.0f32 / 6.0), 0.5, dtype)?;
    Ok(vec![cx.op2("relax.multiply", x, line)?])
}

/// `max(0, min(1, alpha · x + beta))`.
pub(super) fn clamped_line(
    cx: &mut Ctx,
    x: Expr,
    alpha: f64,
    beta: f64,
    dtype: DataType,
) -> Result<Expr, Error> {
    let alpha = cx.scalar(alpha, dtype)?;
    let beta = cx.scalar(beta, dtype)?;
    let line = cx.op2("relax.multiply", x, alpha)?;
    let line = cx.op2("relax.add", line, beta)?;
    let one = cx.scalar(1.0, dtype)?;
    let zero = cx.scalar(0.0, dtype)?;
    let upper = cx.op2("relax.minimum", line, one)?;
    cx.op2("relax.maximum", upper, zero)
}

pub fn gelu(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let (x, dtype) = x_and_dtype(cx)?;
    match cx.node.string("approximate")?.as_deref() {
        None | Some("none") => Ok(vec![cx.op1("relax.nn.gelu", x)?]),
        Some("tanh") => {
            // x/2 · (1 + tanh(√(2/π) · (x + 0.044715 x³)))
            let x2 = cx.op2("relax.multiply", x.clone(), x.clone())?;
            let x3 = cx.op2("relax.multiply", x2, x.clone())?;
            let c = cx.scalar(0.044715, dtype)?;
            let cx3 = cx.op2("relax.multiply", x3, c)?;
            let inner = cx.op2("relax.add", x.clone(), cx3)?;
            let k = cx.scalar((2.0 / std::f64::consts::PI).sqrt(), dtype)?;
            let inner = cx.op2("relax.multiply", inner, k)?;
            let t = cx.op1("relax.tanh", inner)?;
            let one = cx.scalar(1.0, dtype)?;
            let t1 = cx.op2("relax.add", t, one)?;
            let half = cx.scalar(0.5, dtype)?;
            let hx = cx.op2("relax.multiply", x, half)?;
            Ok(vec![cx.op2("relax.multiply", hx, t1)?])
        }
        Some(other) => Err(cx.error(format!(
            "attribute `approximate` must be \"none\" or \"tanh\", found \"{other}\""
        ))),
    }
}

pub fn thresholded_relu(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let (x, dtype) = x_and_dtype(cx)?;
    let alpha = cx.scalar(f64::from(cx.node.float_or("alpha", 1.0)?), dtype)?;
    let above = cx.op2("relax.greater", x.clone(), alpha)?;
    let zero = cx.scalar(0.0, dtype)?;
    Ok(vec![cx.call(
        "relax.where",
        vec![above, x, zero],
        Attrs::new(),
    )?])
}

pub fn celu(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let (x, dtype) = x_and_dtype(cx)?;
    let alpha = f64::from(cx.node.float_or("alpha", 1.0)?);
    let zero = cx.scalar(0.0, dtype)?;
    let pos = cx.op2("relax.maximum", x.clone(), zero.clone())?;
    let a = cx.scalar(alpha, dtype)?;
    let scaled = cx.op2("relax.divide", x, a)?;
    let neg = exp_minus_one(cx, scaled, alpha, dtype)?;
    let neg = cx.op2("relax.minimum", neg, zero)?;
    Ok(vec![cx.op2("relax.add", pos, neg)?])
}

pub fn shrink(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let (x, dtype) = x_and_dtype(cx)?;
    let bias = f64::from(cx.node.float_or("bias", 0.0)?);
    let lambd = f64::from(cx.node.float_or("lambd", 0.5)?);
    let lo = cx.scalar(-lambd, dtype)?;
    let hi = cx.scalar(lambd, dtype)?;
    let b = cx.scalar(bias, dtype)?;
    let zero = cx.scalar(0.0, dtype)?;
    let below = cx.op2("relax.less", x.clone(), lo)?;
    let above = cx.op2("relax.greater", x.clone(), hi)?;
    let plus = cx.op2("relax.add", x.clone(), b.clone())?;
    let minus = cx.op2("relax.subtract", x, b)?;
    let inner = cx.call("relax.where", vec![above, minus, zero], Attrs::new())?;
    Ok(vec![cx.call(
        "relax.where",
        vec![below, plus, inner],
        Attrs::new(),
    )?])
}

pub fn clip(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let (x, dtype) = x_and_dtype(cx)?;
    let (lo, hi) = if cx.opset < 11 {
        let lo = cx.node.has("min").then(|| cx.node.float_or("min", 0.0));
        let hi = cx.node.has("max").then(|| cx.node.float_or("max", 0.0));
        let lo = lo.transpose()?.map(|v| cx.scalar(f64::from(v), dtype));
        let hi = hi.transpose()?.map(|v| cx.scalar(f64::from(v), dtype));
        (lo.transpose()?, hi.transpose()?)
    } else {
        (cx.opt_input(1)?, cx.opt_input(2)?)
    };
    let mut y = x;
    if let Some(lo) = lo {
        y = cx.op2("relax.maximum", y, lo)?;
    }
    if let Some(hi) = hi {
        y = cx.op2("relax.minimum", y, hi)?;
    }
    Ok(vec![y])
}

pub fn cast(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let to = cx
        .node
        .int("to")?
        .ok_or_else(|| cx.error("attribute `to` is required"))?;
    let dtype = crate::tensor::dtype_of(to as i32).ok_or_else(|| {
        cx.error(format!(
            "cast to {} is not supported",
            crate::tensor::elem_type_name(to as i32)
        ))
    })?;
    let attrs = Attrs::from_pairs([("dtype", AttrValue::DataType(dtype))]);
    Ok(vec![cx.call("relax.astype", vec![x], attrs)?])
}

pub fn where_(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let args = vec![cx.input(0)?, cx.input(1)?, cx.input(2)?];
    Ok(vec![cx.call("relax.where", args, Attrs::new())?])
}
