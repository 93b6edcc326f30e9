//! Elementwise kernels: the broadcasting binary ops, the comparisons, the
//! unary math ops, `ewise_fma`, `where` and `astype`.
//!
//! Semantics, where TVM's and NumPy's differ or C's would be undefined:
//!
//! 1. Broadcasting is NumPy's (shapes aligned at the right, each dim equal
//!    or 1); `where` broadcasts its three operands together. Operand dtypes
//!    must be equal (no promotion).
//! 2. Integer `add`, `subtract`, `multiply`, `negative` and `power` wrap
//!    around on overflow. Integer `divide` is TVM's: C division truncating
//!    toward zero (`-7 / 2 == -3`), and division by zero is an error; float
//!    `divide` is IEEE (`1 / 0 == inf`). Integer `power` with a negative
//!    exponent is an error.
//! 3. Float `maximum`/`minimum` give NaN when either operand is NaN (as
//!    `numpy.maximum`); comparisons follow IEEE (`NaN != NaN`).
//! 4. The transcendental ops (`exp`, `log`, `sqrt`, `rsqrt`, `tanh`,
//!    `sigmoid`, `erf`, the trigonometric and hyperbolic functions and
//!    their inverses) take any float type; each element is computed in
//!    `f64` and rounded once to the tensor's type, so an `f32` (`float16`,
//!    `bfloat16`) result is the correctly rounded value up to `f64`'s own
//!    error. The arithmetic ops on `float16` and `bfloat16` compute in
//!    `f32` and round each result once (see `dispatch`, item 4). `sigmoid` is computed
//!    in the form that cannot overflow for either sign of `x`.
//! 5. `ewise_fma(x1, x2, x3)` needs equal shapes and rounds twice (a multiply
//!    then an add, each to the tensor's type), as the unfused expression TVM
//!    legalizes it to.
//! 6. `floor_divide` and `floor_mod` are Python's `//` and `%` (the
//!    quotient rounded toward negative infinity, the remainder with the
//!    divisor's sign); `mod` is C's `fmod` (truncated quotient, remainder
//!    with the dividend's sign). On integers all three are errors on a zero
//!    divisor and wrap (`MIN // -1 == MIN`). On floats, `floor_divide` is
//!    `floor(x / y)` with the quotient rounded to the tensor's type first,
//!    `floor_mod` is NumPy's: the exact `fmod`, plus `y` when it is
//!    nonzero and its sign differs from `y`'s (so `-3 % inf == inf` and
//!    `3 % inf == 3`, where `x - floor(x / y) · y` gives NaN), rounded
//!    once; `mod` is the exact `fmod`.
//! 7. `floor`, `ceil`, `round` (half to even, as TVM and ONNX), `trunc`
//!    are the identity on integers. `sign` gives -1, 0 or 1 (a float zero
//!    or NaN is returned as it is). `square` wraps on integers. `isnan`,
//!    `isinf` and `isfinite` give `bool` (integers are always finite).
//! 8. `logical_*` take and give `bool`. `bitwise_*` take integers or
//!    `bool`. `left_shift`/`right_shift` take integers; `right_shift` is
//!    arithmetic on signed types; a shift amount outside `[0, bits)` gives
//!    0 (or -1 for a right shift of a negative value), as NumPy, where C is
//!    undefined.
//! 9. `astype` converts as a C cast: floats to integers truncate toward zero
//!    (saturating at the bounds, NaN giving 0, where C is undefined),
//!    narrowing integers keep the low bits, integers to floats round to
//!    nearest, anything to `bool` is `x != 0` (NaN is `true`), and `bool` to
//!    numbers is 0 or 1.

use super::alloc;
use super::args::{
    broadcast_elems, broadcast_shapes, check_arity, same_dtype, tensor_arg, tensor_value, udims,
    view,
};
use super::dispatch::{
    dispatch, unsupported, with_any, with_float, with_int, with_num, Float, Num, Scalar, Wide,
};
use super::{Kernel, KernelAttrs};
use crate::data_type::DataType;
use crate::tensor::{fmt_shape, Tensor};
use crate::value::Value;

/// The elementwise kernels.
pub const KERNELS: &[(&str, Kernel)] = &[
    ("relax.add", add),
    ("relax.subtract", subtract),
    ("relax.multiply", multiply),
    ("relax.divide", divide),
    ("relax.power", power),
    ("relax.maximum", maximum),
    ("relax.minimum", minimum),
    ("relax.equal", equal),
    ("relax.not_equal", not_equal),
    ("relax.less", less),
    ("relax.less_equal", less_equal),
    ("relax.greater", greater),
    ("relax.greater_equal", greater_equal),
    ("relax.floor_divide", floor_divide),
    ("relax.floor_mod", floor_mod),
    ("relax.mod", mod_),
    ("relax.logical_and", logical_and),
    ("relax.logical_or", logical_or),
    ("relax.logical_xor", logical_xor),
    ("relax.bitwise_and", bitwise_and),
    ("relax.bitwise_or", bitwise_or),
    ("relax.bitwise_xor", bitwise_xor),
    ("relax.left_shift", left_shift),
    ("relax.right_shift", right_shift),
    ("relax.negative", negative),
    ("relax.abs", abs),
    ("relax.exp", exp),
    ("relax.log", log),
    ("relax.sqrt", sqrt),
    ("relax.rsqrt", rsqrt),
    ("relax.tanh", tanh),
    ("relax.sigmoid", sigmoid),
    ("relax.erf", erf),
    ("relax.sin", sin),
    ("relax.cos", cos),
    ("relax.tan", tan),
    ("relax.asin", asin),
    ("relax.acos", acos),
    ("relax.atan", atan),
    ("relax.sinh", sinh),
    ("relax.cosh", cosh),
    ("relax.asinh", asinh),
    ("relax.acosh", acosh),
    ("relax.atanh", atanh),
    ("relax.floor", floor),
    ("relax.ceil", ceil),
    ("relax.round", round),
    ("relax.trunc", trunc),
    ("relax.sign", sign),
    ("relax.square", square),
    ("relax.isnan", isnan),
    ("relax.isinf", isinf),
    ("relax.isfinite", isfinite),
    ("relax.logical_not", logical_not),
    ("relax.bitwise_not", bitwise_not),
    ("relax.ewise_fma", ewise_fma),
    ("relax.where", where_),
    ("relax.astype", astype),
];

/// A binary arithmetic operation.
#[derive(Clone, Copy)]
enum Arith {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
    Max,
    Min,
}

fn arith<T: Num>(f: Arith, x: T, y: T) -> Result<T, String> {
    match f {
        Arith::Add => Ok(x.add(y)),
        Arith::Sub => Ok(x.sub(y)),
        Arith::Mul => Ok(x.mul(y)),
        Arith::Div => x.div(y),
        Arith::Pow => x.pow(y),
        Arith::Max => Ok(x.maximum(y)),
        Arith::Min => Ok(x.minimum(y)),
    }
}

/// A comparison.
#[derive(Clone, Copy)]
enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

fn compare<T: PartialOrd>(f: Cmp, x: T, y: T) -> bool {
    match f {
        Cmp::Eq => x == y,
        Cmp::Ne => x != y,
        Cmp::Lt => x < y,
        Cmp::Le => x <= y,
        Cmp::Gt => x > y,
        Cmp::Ge => x >= y,
    }
}

/// The two tensor operands of a binary op and their broadcast shape.
fn binary_operands(args: &[Value]) -> Result<(&Tensor, &Tensor, Vec<usize>), String> {
    check_arity(args, 2)?;
    let a = tensor_arg(args, 0, "x1")?;
    let b = tensor_arg(args, 1, "x2")?;
    same_dtype(&[("x1", a), ("x2", b)])?;
    let shape = broadcast_shapes(&[("x1", &udims(a.shape())), ("x2", &udims(b.shape()))])?;
    Ok((a, b, shape))
}

fn binary_arith(f: Arith, args: &[Value]) -> Result<Value, String> {
    let (a, b, shape) = binary_operands(args)?;
    with_num!(a.dtype(), T => {
        let x = broadcast_elems::<T>(a, &shape)?;
        let y = broadcast_elems::<T>(b, &shape)?;
        let data = alloc::try_collect(
            x.len(),
            x.iter().zip(y.iter()).map(|(&p, &q)| arith(f, p, q)),
        )?;
        tensor_value(&shape, data)
    })
}

fn binary_compare(f: Cmp, args: &[Value]) -> Result<Value, String> {
    let (a, b, shape) = binary_operands(args)?;
    with_any!(a.dtype(), T => {
        let x = broadcast_elems::<T>(a, &shape)?;
        let y = broadcast_elems::<T>(b, &shape)?;
        let data = alloc::collect(x.len(), x.iter().zip(y.iter()).map(|(&p, &q)| compare(f, p, q)))?;
        tensor_value(&shape, data)
    })
}

macro_rules! binary_kernels {
    ($($f:ident => $name:literal, $via:ident($kind:expr);)*) => {$(
        #[doc = concat!("`", $name, "`.")]
        fn $f(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
            with_scalars(args, |args| $via($kind, args))
        }
    )*};
}

binary_kernels! {
    add => "relax.add", binary_arith(Arith::Add);
    subtract => "relax.subtract", binary_arith(Arith::Sub);
    multiply => "relax.multiply", binary_arith(Arith::Mul);
    divide => "relax.divide", binary_arith(Arith::Div);
    power => "relax.power", binary_arith(Arith::Pow);
    maximum => "relax.maximum", binary_arith(Arith::Max);
    minimum => "relax.minimum", binary_arith(Arith::Min);
    equal => "relax.equal", binary_compare(Cmp::Eq);
    not_equal => "relax.not_equal", binary_compare(Cmp::Ne);
    less => "relax.less", binary_compare(Cmp::Lt);
    less_equal => "relax.less_equal", binary_compare(Cmp::Le);
    greater => "relax.greater", binary_compare(Cmp::Gt);
    greater_equal => "relax.greater_equal", binary_compare(Cmp::Ge);
}

/// `x` as an `i128` (a float, which the integer kernels never see, truncated).
fn int_of<T: Scalar>(x: T) -> i128 {
    match x.to_wide() {
        Wide::Int(i) => i,
        Wide::Float(f) => f as i128,
    }
}

/// `v` rounded to the float type `T`, as an `f64`.
fn round_to<T: Scalar>(v: f64) -> f64 {
    match T::from_wide(Wide::Float(v)).to_wide() {
        Wide::Float(f) => f,
        Wide::Int(i) => i as f64,
    }
}

/// A binary kernel over operands of which either or both may be prim
/// values (`Value::Int`, `Value::Float`, `Value::Bool`, TVM's `R.Prim`
/// operands). A prim value next to a tensor is a 0-d tensor of the
/// tensor's dtype (converted as a C cast); two prim values are computed as
/// 0-d tensors of the first one's kind (`int64`, `float64` or `bool`) and
/// the result is a prim value again.
fn with_scalars(
    args: &[Value],
    f: impl FnOnce(&[Value]) -> Result<Value, String>,
) -> Result<Value, String> {
    let is_prim = |v: &Value| matches!(v, Value::Int(_) | Value::Float(_) | Value::Bool(_));
    if !args.iter().any(is_prim) {
        return f(args);
    }
    check_arity(args, 2)?;
    let dtype = match args.iter().find_map(Value::as_tensor) {
        Some(t) => t.dtype(),
        None => match &args[0] {
            Value::Float(_) => DataType::f64(),
            Value::Bool(_) => DataType::bool(),
            _ => DataType::i64(),
        },
    };
    let both = args.iter().all(is_prim);
    let operands = args
        .iter()
        .map(|v| match v {
            Value::Int(i) => prim_tensor(Wide::Int(i128::from(*i)), dtype).map(Value::Tensor),
            Value::Float(x) => prim_tensor(Wide::Float(*x), dtype).map(Value::Tensor),
            Value::Bool(b) => prim_tensor(Wide::Int(i128::from(*b)), dtype).map(Value::Tensor),
            v => Ok(v.clone()),
        })
        .collect::<Result<Vec<_>, _>>()?;
    let out = f(&operands)?;
    if !both {
        return Ok(out);
    }
    let Value::Tensor(t) = &out else {
        return Ok(out);
    };
    if t.dtype().is_bool() || t.dtype().is_float() {
        let v = t.to_f64_vec().first().copied().unwrap_or(0.0);
        return Ok(match t.dtype().is_bool() {
            true => Value::Bool(v != 0.0),
            false => Value::Float(v),
        });
    }
    with_int!(t.dtype(), T => {
        let first = view::<T>(t)?.iter().next().map_or(0, |&e| int_of(e));
        Ok(Value::Int(first as i64))
    })
}

/// A 0-d tensor of `dtype` holding `v` (converted as a C cast).
fn prim_tensor(v: Wide, dtype: DataType) -> Result<Tensor, String> {
    with_any!(dtype, T => Ok(Tensor::scalar(T::from_wide(v))))
}

/// An integer binary op computed on `i128`s (the operands exactly, the
/// result wrapped to the type), over the integer types and, if
/// `with_bool`, `bool`. `f` gets the operands and the type's width.
fn binary_int(
    args: &[Value],
    with_bool: bool,
    f: impl Fn(i128, i128, u32) -> Result<i128, String>,
) -> Result<Value, String> {
    let (a, b, shape) = binary_operands(args)?;
    let dtype = a.dtype();
    if dtype.is_bool() && !with_bool {
        return Err(unsupported(dtype));
    }
    let bits = u32::from(dtype.bits());
    dispatch!(dtype, [i8, i16, i32, i64, u8, u16, u32, u64, bool], T => {
        let x = broadcast_elems::<T>(a, &shape)?;
        let y = broadcast_elems::<T>(b, &shape)?;
        let data = alloc::try_collect(
            x.len(),
            x.iter().zip(y.iter()).map(|(&p, &q)| {
                f(int_of(p), int_of(q), bits).map(|r| T::from_wide(Wide::Int(r)))
            }),
        )?;
        tensor_value(&shape, data)
    })
}

/// A logical op on two `bool` tensors.
fn binary_bool(args: &[Value], f: fn(bool, bool) -> bool) -> Result<Value, String> {
    let (a, b, shape) = binary_operands(args)?;
    if !a.dtype().is_bool() {
        return Err(unsupported(a.dtype()));
    }
    let x = broadcast_elems::<bool>(a, &shape)?;
    let y = broadcast_elems::<bool>(b, &shape)?;
    let data = alloc::collect(x.len(), x.iter().zip(y.iter()).map(|(&p, &q)| f(p, q)))?;
    tensor_value(&shape, data)
}

/// Which quotient or remainder.
#[derive(Clone, Copy)]
enum DivMod {
    FloorDiv,
    FloorMod,
    Mod,
}

fn div_mod_int(op: DivMod, a: i128, b: i128) -> Result<i128, String> {
    if b == 0 {
        return Err("integer division by zero".into());
    }
    let (q, r) = (a / b, a % b);
    let floor_fix = r != 0 && ((r < 0) != (b < 0));
    Ok(match op {
        DivMod::FloorDiv => q - floor_fix as i128,
        DivMod::FloorMod if floor_fix => r + b,
        DivMod::FloorMod | DivMod::Mod => r,
    })
}

fn div_mod_float(op: DivMod, x: f64, y: f64, round: fn(f64) -> f64) -> f64 {
    match op {
        DivMod::FloorDiv => round(x / y).floor(),
        DivMod::FloorMod => {
            let r = x % y;
            round(if r != 0.0 && (r < 0.0) != (y < 0.0) {
                r + y
            } else {
                r
            })
        }
        DivMod::Mod => round(x % y),
    }
}

fn binary_div_mod(op: DivMod, args: &[Value]) -> Result<Value, String> {
    let (a, b, shape) = binary_operands(args)?;
    if !a.dtype().is_float() {
        return binary_int(args, false, |p, q, _| div_mod_int(op, p, q));
    }
    with_float!(a.dtype(), T => {
        let x = broadcast_elems::<T>(a, &shape)?;
        let y = broadcast_elems::<T>(b, &shape)?;
        let data = alloc::collect(
            x.len(),
            x.iter().zip(y.iter()).map(|(&p, &q)| {
                T::from_f64(div_mod_float(op, p.to_f64(), q.to_f64(), round_to::<T>))
            }),
        )?;
        tensor_value(&shape, data)
    })
}

/// `a << b` or `a >> b` (arithmetic) in `bits` bits; see the module docs
/// for amounts outside `[0, bits)`.
fn shift(left: bool, a: i128, b: i128, bits: u32) -> i128 {
    if b < 0 || b >= i128::from(bits) {
        return if left || a >= 0 { 0 } else { -1 };
    }
    if left {
        a.wrapping_shl(b as u32)
    } else {
        a >> b
    }
}

/// `floor_divide`.
fn floor_divide(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    with_scalars(args, |args| binary_div_mod(DivMod::FloorDiv, args))
}

/// `floor_mod`.
fn floor_mod(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    with_scalars(args, |args| binary_div_mod(DivMod::FloorMod, args))
}

/// `mod` (C's `fmod`).
fn mod_(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    with_scalars(args, |args| binary_div_mod(DivMod::Mod, args))
}

/// `logical_and`.
fn logical_and(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    with_scalars(args, |args| binary_bool(args, |p, q| p && q))
}

/// `logical_or`.
fn logical_or(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    with_scalars(args, |args| binary_bool(args, |p, q| p || q))
}

/// `logical_xor`.
fn logical_xor(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    with_scalars(args, |args| binary_bool(args, |p, q| p != q))
}

/// `bitwise_and`.
fn bitwise_and(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    with_scalars(args, |args| binary_int(args, true, |p, q, _| Ok(p & q)))
}

/// `bitwise_or`.
fn bitwise_or(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    with_scalars(args, |args| binary_int(args, true, |p, q, _| Ok(p | q)))
}

/// `bitwise_xor`.
fn bitwise_xor(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    with_scalars(args, |args| binary_int(args, true, |p, q, _| Ok(p ^ q)))
}

/// `left_shift`.
fn left_shift(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    with_scalars(args, |args| {
        binary_int(args, false, |p, q, bits| Ok(shift(true, p, q, bits)))
    })
}

/// `right_shift` (arithmetic on signed types).
fn right_shift(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    with_scalars(args, |args| {
        binary_int(args, false, |p, q, bits| Ok(shift(false, p, q, bits)))
    })
}

/// The single tensor argument of a unary op.
pub(crate) fn unary_operand(args: &[Value]) -> Result<&Tensor, String> {
    check_arity(args, 1)?;
    tensor_arg(args, 0, "x")
}

/// Applies `f` to every element of the single float tensor argument, in
/// `f64`, rounding each result once to the tensor's dtype.
pub(crate) fn float_unary(args: &[Value], f: fn(f64) -> f64) -> Result<Value, String> {
    let x = unary_operand(args)?;
    with_float!(x.dtype(), T => {
        let v = view::<T>(x)?;
        let data = alloc::collect(v.len(), v.iter().map(|&e| T::from_f64(f(e.to_f64()))))?;
        tensor_value(&udims(x.shape()), data)
    })
}

/// `1 / (1 + e^-x)`, in a form whose exponential never overflows.
pub(crate) fn sigmoid_f64(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// `relax.negative`: `-x` (wrapping for integers).
fn negative(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    let x = unary_operand(args)?;
    with_num!(x.dtype(), T => {
        let v = view::<T>(x)?;
        let data = alloc::collect(v.len(), v.iter().map(|&e| Num::neg(e)))?;
        tensor_value(&udims(x.shape()), data)
    })
}

/// `relax.abs`: `|x|` (the identity for unsigned integers).
fn abs(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    let x = unary_operand(args)?;
    with_num!(x.dtype(), T => {
        let v = view::<T>(x)?;
        let data = alloc::collect(v.len(), v.iter().map(|&e| Num::abs(e)))?;
        tensor_value(&udims(x.shape()), data)
    })
}

/// `relax.exp`.
fn exp(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    float_unary(args, f64::exp)
}

/// `relax.log`: the natural logarithm (NaN below 0, `-inf` at 0).
fn log(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    float_unary(args, f64::ln)
}

/// `relax.sqrt` (NaN below 0).
fn sqrt(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    float_unary(args, f64::sqrt)
}

/// `relax.rsqrt`: `1 / sqrt(x)`.
fn rsqrt(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    float_unary(args, |v| 1.0 / v.sqrt())
}

/// `relax.tanh`.
fn tanh(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    float_unary(args, f64::tanh)
}

/// `relax.sigmoid`: `1 / (1 + e^-x)`.
fn sigmoid(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    float_unary(args, sigmoid_f64)
}

macro_rules! float_unary_kernels {
    ($($f:ident => $name:literal, $e:expr;)*) => {$(
        #[doc = concat!("`", $name, "`.")]
        fn $f(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
            float_unary(args, $e)
        }
    )*};
}

float_unary_kernels! {
    erf => "relax.erf", super::activation::erf;
    sin => "relax.sin", f64::sin;
    cos => "relax.cos", f64::cos;
    tan => "relax.tan", f64::tan;
    asin => "relax.asin", f64::asin;
    acos => "relax.acos", f64::acos;
    atan => "relax.atan", f64::atan;
    sinh => "relax.sinh", f64::sinh;
    cosh => "relax.cosh", f64::cosh;
    asinh => "relax.asinh", f64::asinh;
    acosh => "relax.acosh", f64::acosh;
    atanh => "relax.atanh", f64::atanh;
}

/// A rounding op: `f` on floats, the identity on integers.
fn rounding(args: &[Value], f: fn(f64) -> f64) -> Result<Value, String> {
    let x = unary_operand(args)?;
    if x.dtype().is_float() {
        return float_unary(args, f);
    }
    with_num!(x.dtype(), T => {
        let _ = view::<T>(x)?;
        Ok(Value::Tensor(x.clone()))
    })
}

/// `relax.floor`.
fn floor(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    rounding(args, f64::floor)
}

/// `relax.ceil`.
fn ceil(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    rounding(args, f64::ceil)
}

/// `relax.round`: halves to even.
fn round(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    rounding(args, f64::round_ties_even)
}

/// `relax.trunc`.
fn trunc(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    rounding(args, f64::trunc)
}

/// `relax.sign`: -1, 0 or 1; a float zero or NaN is kept as it is.
fn sign(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    let x = unary_operand(args)?;
    with_num!(x.dtype(), T => {
        let v = view::<T>(x)?;
        let data = alloc::collect(
            v.len(),
            v.iter().map(|&e| match e.partial_cmp(&T::ZERO) {
                Some(std::cmp::Ordering::Greater) => T::ONE,
                Some(std::cmp::Ordering::Less) => Num::neg(T::ONE),
                _ => e,
            }),
        )?;
        tensor_value(&udims(x.shape()), data)
    })
}

/// `relax.square`: `x * x` (wrapping for integers).
fn square(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    let x = unary_operand(args)?;
    with_num!(x.dtype(), T => {
        let v = view::<T>(x)?;
        let data = alloc::collect(v.len(), v.iter().map(|&e| Num::mul(e, e)))?;
        tensor_value(&udims(x.shape()), data)
    })
}

/// A predicate of each element (of a numeric tensor), as `bool`s.
fn predicate(args: &[Value], f: fn(f64) -> bool) -> Result<Value, String> {
    let x = unary_operand(args)?;
    with_num!(x.dtype(), T => {
        let v = view::<T>(x)?;
        let data = alloc::collect(
            v.len(),
            v.iter().map(|&e| match e.to_wide() {
                Wide::Float(g) => f(g),
                Wide::Int(_) => f(0.0),
            }),
        )?;
        tensor_value(&udims(x.shape()), data)
    })
}

/// `relax.isnan`.
fn isnan(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    predicate(args, f64::is_nan)
}

/// `relax.isinf`.
fn isinf(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    predicate(args, f64::is_infinite)
}

/// `relax.isfinite`.
fn isfinite(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    predicate(args, f64::is_finite)
}

/// `relax.logical_not` of a `bool` tensor.
fn logical_not(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    let x = unary_operand(args)?;
    if !x.dtype().is_bool() {
        return Err(unsupported(x.dtype()));
    }
    let v = view::<bool>(x)?;
    let data = alloc::collect(v.len(), v.iter().map(|&e| !e))?;
    tensor_value(&udims(x.shape()), data)
}

/// `relax.bitwise_not` of an integer or `bool` tensor.
fn bitwise_not(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    let x = unary_operand(args)?;
    if x.dtype().is_bool() {
        return logical_not(args, &KernelAttrs::default());
    }
    dispatch!(x.dtype(), [i8, i16, i32, i64, u8, u16, u32, u64], T => {
        let v = view::<T>(x)?;
        let data = alloc::collect(v.len(), v.iter().map(|&e| T::from_wide(Wide::Int(!int_of(e)))))?;
        tensor_value(&udims(x.shape()), data)
    })
}

/// `relax.ewise_fma`: `x1 * x2 + x3` on equal shapes.
fn ewise_fma(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 3)?;
    let names = ["x1", "x2", "x3"];
    let xs = [
        tensor_arg(args, 0, names[0])?,
        tensor_arg(args, 1, names[1])?,
        tensor_arg(args, 2, names[2])?,
    ];
    let dtype = same_dtype(&[("x1", xs[0]), ("x2", xs[1]), ("x3", xs[2])])?;
    for i in 1..3 {
        if xs[i].shape() != xs[0].shape() {
            return Err(format!(
                "shapes differ: x1 is {}, {} is {}",
                fmt_shape(xs[0].shape()),
                names[i],
                fmt_shape(xs[i].shape())
            ));
        }
    }
    with_num!(dtype, T => {
        let (a, b, c) = (view::<T>(xs[0])?, view::<T>(xs[1])?, view::<T>(xs[2])?);
        let data = alloc::collect(
            a.len(),
            a.iter()
                .zip(b.iter())
                .zip(c.iter())
                .map(|((&p, &q), &r)| Num::add(Num::mul(p, q), r)),
        )?;
        tensor_value(&udims(xs[0].shape()), data)
    })
}

/// `relax.where`: `x1` where `condition` holds, else `x2`, the three
/// broadcast together.
fn where_(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 3)?;
    let c = tensor_arg(args, 0, "condition")?;
    let a = tensor_arg(args, 1, "x1")?;
    let b = tensor_arg(args, 2, "x2")?;
    if !c.dtype().is_bool() {
        return Err(format!(
            "condition must have dtype bool, found {}",
            c.dtype()
        ));
    }
    let dtype = same_dtype(&[("x1", a), ("x2", b)])?;
    let shape = broadcast_shapes(&[
        ("condition", &udims(c.shape())),
        ("x1", &udims(a.shape())),
        ("x2", &udims(b.shape())),
    ])?;
    let cond = broadcast_elems::<bool>(c, &shape)?;
    with_any!(dtype, T => {
        let x = broadcast_elems::<T>(a, &shape)?;
        let y = broadcast_elems::<T>(b, &shape)?;
        let data = alloc::collect(
            cond.len(),
            cond.iter()
                .zip(x.iter().zip(y.iter()))
                .map(|(&k, (&p, &q))| if k { p } else { q }),
        )?;
        tensor_value(&shape, data)
    })
}

/// `relax.astype`: each element converted to the `dtype` attribute's type.
fn astype(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    let x = unary_operand(args)?;
    let to = attrs.dtype("dtype")?;
    if to.is_void() {
        return Err("the `dtype` attribute is required".into());
    }
    cast(x, to).map(Value::Tensor)
}

/// `x` with each element converted to `to` as `relax.astype` converts
/// (module docs, item 9); a dtype without a kernel element type is an error.
pub fn cast(x: &Tensor, to: DataType) -> Result<Tensor, String> {
    with_any!(x.dtype(), S => {
        let src = view::<S>(x)?;
        with_any!(to, D => {
            let data = alloc::collect(src.len(), src.iter().map(|&v| D::from_wide(v.to_wide())))?;
            alloc::tensor(x.shape(), &data)
        })
    })
}

#[cfg(test)]
mod tests {
    use crate::data_type::DataType;
    use crate::executable::KernelAttr;
    use crate::kernels::testing::*;
    use crate::value::Value;
    use std::slice::from_ref;

    #[test]
    fn add_broadcasts_numpy_style() {
        // (2,1,3) + (4,1) -> (2,4,3): out[i,j,k] = a[i,0,k] + b[j,0].
        let a = tv(&[2, 1, 3], vec![0.0f32, 1.0, 2.0, 10.0, 11.0, 12.0]);
        let b = tv(&[4, 1], vec![100.0f32, 200.0, 300.0, 400.0]);
        let out = run("relax.add", &[a, b], &[]).unwrap();
        let mut want = Vec::new();
        for i in 0..2 {
            for j in 0..4 {
                for k in 0..3 {
                    want.push((i * 10 + k) as f32 + (j as f32 + 1.0) * 100.0);
                }
            }
        }
        assert_tensor(&out, &[2, 4, 3], &want);
    }

    #[test]
    fn integer_arithmetic() {
        let a = tv(&[4], vec![7i32, -7, 9, i32::MAX]);
        let b = tv(&[4], vec![2i32, 2, -4, 1]);
        assert_tensor(
            &run("relax.subtract", &[a.clone(), b.clone()], &[]).unwrap(),
            &[4],
            &[5i32, -9, 13, i32::MAX - 1],
        );
        assert_tensor(
            &run("relax.multiply", &[a.clone(), b.clone()], &[]).unwrap(),
            &[4],
            &[14i32, -14, -36, i32::MAX],
        );
        // Truncating division, like C and TVM.
        assert_tensor(
            &run("relax.divide", &[a.clone(), b.clone()], &[]).unwrap(),
            &[4],
            &[3i32, -3, -2, i32::MAX],
        );
        assert_tensor(
            &run("relax.add", &[a.clone(), tv(&[], vec![1i32])], &[]).unwrap(),
            &[4],
            &[8i32, -6, 10, i32::MIN],
        );
        assert_tensor(
            &run("relax.maximum", &[a.clone(), b.clone()], &[]).unwrap(),
            &[4],
            &[7i32, 2, 9, i32::MAX],
        );
        assert_tensor(
            &run("relax.minimum", &[a, b], &[]).unwrap(),
            &[4],
            &[2i32, -7, -4, 1],
        );
        let p = run(
            "relax.power",
            &[tv(&[3], vec![2u8, 3, 0]), tv(&[3], vec![3u8, 2, 0])],
            &[],
        )
        .unwrap();
        assert_tensor(&p, &[3], &[8u8, 9, 1]);
    }

    #[test]
    fn integer_errors() {
        let e = run(
            "relax.divide",
            &[tv(&[2], vec![1i64, 2]), tv(&[2], vec![1i64, 0])],
            &[],
        )
        .unwrap_err();
        assert_eq!(e, "integer division by zero");
        let e = run(
            "relax.power",
            &[tv(&[1], vec![2i16]), tv(&[1], vec![-1i16])],
            &[],
        )
        .unwrap_err();
        assert!(e.contains("negative exponent"), "{e}");
    }

    #[test]
    fn float_arithmetic() {
        let a = tv(&[3], vec![1.0f64, -2.0, 0.5]);
        let b = tv(&[3], vec![0.0f64, 4.0, 2.0]);
        let d = run("relax.divide", &[a.clone(), b.clone()], &[]).unwrap();
        assert_tensor(&d, &[3], &[f64::INFINITY, -0.5, 0.25]);
        let p = run("relax.power", &[b.clone(), tv(&[], vec![0.5f64])], &[]).unwrap();
        assert_tensor(&p, &[3], &[0.0f64, 2.0, 2.0f64.sqrt()]);
        let m = run(
            "relax.maximum",
            &[tv(&[2], vec![f32::NAN, 1.0]), tv(&[2], vec![0.0f32, 3.0])],
            &[],
        )
        .unwrap();
        let got = m.as_tensor().unwrap().to_vec::<f32>().unwrap();
        assert!(got[0].is_nan());
        assert_eq!(got[1], 3.0);
    }

    #[test]
    fn comparisons_give_bool() {
        let a = tv(&[2, 2], vec![1i64, 2, 3, 4]);
        let b = tv(&[2], vec![2i64, 2]);
        let cases: [(&str, [bool; 4]); 6] = [
            ("relax.equal", [false, true, false, false]),
            ("relax.not_equal", [true, false, true, true]),
            ("relax.less", [true, false, false, false]),
            ("relax.less_equal", [true, true, false, false]),
            ("relax.greater", [false, false, true, true]),
            ("relax.greater_equal", [false, true, true, true]),
        ];
        for (op, want) in cases {
            let out = run(op, &[a.clone(), b.clone()], &[]).unwrap();
            assert_tensor(&out, &[2, 2], &want);
        }
        let nan = run(
            "relax.equal",
            &[tv(&[1], vec![f32::NAN]), tv(&[1], vec![f32::NAN])],
            &[],
        )
        .unwrap();
        assert_tensor(&nan, &[1], &[false]);
        let bools = run(
            "relax.not_equal",
            &[tv(&[2], vec![true, false]), tv(&[], vec![true])],
            &[],
        )
        .unwrap();
        assert_tensor(&bools, &[2], &[false, true]);
    }

    #[test]
    fn empty_tensors_broadcast() {
        let out = run(
            "relax.add",
            &[
                tv(&[0, 3], Vec::<f32>::new()),
                tv(&[3], vec![1.0f32, 2.0, 3.0]),
            ],
            &[],
        )
        .unwrap();
        assert_tensor::<f32>(&out, &[0, 3], &[]);
        let out = run(
            "relax.less",
            &[tv(&[2, 0], Vec::<i8>::new()), tv(&[1, 1], vec![0i8])],
            &[],
        )
        .unwrap();
        assert_tensor::<bool>(&out, &[2, 0], &[]);
    }

    #[test]
    fn prim_value_operands_are_scalars() {
        // A prim value next to a tensor is a 0-d tensor of its dtype.
        let a = tv(&[2, 2], vec![1.0f32, 2.0, 3.0, 4.0]);
        assert_tensor(
            &run("relax.multiply", &[a.clone(), Value::Float(0.5)], &[]).unwrap(),
            &[2, 2],
            &[0.5f32, 1.0, 1.5, 2.0],
        );
        assert_tensor(
            &run("relax.subtract", &[Value::Float(10.0), a.clone()], &[]).unwrap(),
            &[2, 2],
            &[9.0f32, 8.0, 7.0, 6.0],
        );
        assert_tensor(
            &run("relax.less", &[a, Value::Float(2.5)], &[]).unwrap(),
            &[2, 2],
            &[true, true, false, false],
        );
        let i = tv(&[3], vec![7i32, -7, 8]);
        assert_tensor(
            &run("relax.floor_divide", &[i.clone(), Value::Int(2)], &[]).unwrap(),
            &[3],
            &[3i32, -4, 4],
        );
        assert_tensor(
            &run("relax.right_shift", &[i, Value::Int(1)], &[]).unwrap(),
            &[3],
            &[3i32, -4, 4],
        );
        let b = tv(&[2], vec![true, false]);
        assert_tensor(
            &run("relax.logical_and", &[b, Value::Bool(true)], &[]).unwrap(),
            &[2],
            &[true, false],
        );
        // Two prim values give a prim value.
        assert_eq!(
            run("relax.add", &[Value::Int(2), Value::Int(3)], &[]),
            Ok(Value::Int(5))
        );
        assert_eq!(
            run(
                "relax.multiply",
                &[Value::Float(1.5), Value::Float(2.0)],
                &[]
            ),
            Ok(Value::Float(3.0))
        );
        assert_eq!(
            run("relax.greater", &[Value::Int(2), Value::Int(3)], &[]),
            Ok(Value::Bool(false))
        );
        assert_eq!(
            run(
                "relax.logical_xor",
                &[Value::Bool(true), Value::Bool(false)],
                &[]
            ),
            Ok(Value::Bool(true))
        );
        assert!(run("relax.floor_mod", &[Value::Int(1), Value::Int(0)], &[]).is_err());
    }

    #[test]
    fn binary_errors_are_errors() {
        let f = tv(&[3], vec![1.0f32, 2.0, 3.0]);
        let i = tv(&[3], vec![1i64, 2, 3]);
        assert_eq!(
            run("relax.add", &[f.clone(), i], &[]).unwrap_err(),
            "dtypes differ: x1 is float32, x2 is int64"
        );
        assert_eq!(
            run(
                "relax.multiply",
                &[f.clone(), tv(&[2], vec![1.0f32, 2.0])],
                &[]
            )
            .unwrap_err(),
            "shapes do not broadcast: x1 is (3,), x2 is (2,)"
        );
        assert_eq!(
            run("relax.add", from_ref(&f), &[]).unwrap_err(),
            "expected 2 argument(s), found 1"
        );
        assert_eq!(
            run("relax.less", &[f.clone(), Value::shape(&[3])], &[]).unwrap_err(),
            "x2 must be a tensor, found the shape (3,)"
        );
        assert_eq!(
            run(
                "relax.add",
                &[tv(&[1], vec![true]), tv(&[1], vec![false])],
                &[]
            )
            .unwrap_err(),
            "dtype bool is not supported by this kernel"
        );
        let half = crate::tensor::Tensor::zeros(DataType::float(16), &[2]).unwrap();
        let bf = crate::tensor::Tensor::zeros(DataType::bf16(), &[2]).unwrap();
        assert_eq!(
            run("relax.add", &[half.into(), bf.into()], &[]).unwrap_err(),
            "dtypes differ: x1 is float16, x2 is bfloat16"
        );
    }

    #[test]
    fn unary_math() {
        let x = tv(&[4], vec![-2.0f32, 0.0, 1.0, 4.0]);
        let close = |op: &str, want: &[f64]| {
            let out = run(op, from_ref(&x), &[]).unwrap();
            assert_close_f32(&out, &[4], want);
        };
        close("relax.exp", &[(-2f64).exp(), 1.0, 1f64.exp(), 4f64.exp()]);
        close(
            "relax.tanh",
            &[(-2f64).tanh(), 0.0, 1f64.tanh(), 4f64.tanh()],
        );
        close(
            "relax.sigmoid",
            &[
                1.0 / (1.0 + 2f64.exp()),
                0.5,
                1.0 / (1.0 + (-1f64).exp()),
                1.0 / (1.0 + (-4f64).exp()),
            ],
        );
        close("relax.negative", &[2.0, 0.0, -1.0, -4.0]);
        close("relax.abs", &[2.0, 0.0, 1.0, 4.0]);
        let p = tv(&[3], vec![1.0f64, 4.0, 0.25]);
        assert_tensor(
            &run("relax.sqrt", from_ref(&p), &[]).unwrap(),
            &[3],
            &[1.0f64, 2.0, 0.5],
        );
        assert_tensor(
            &run("relax.rsqrt", from_ref(&p), &[]).unwrap(),
            &[3],
            &[1.0f64, 0.5, 2.0],
        );
        assert_tensor(
            &run("relax.log", &[p], &[]).unwrap(),
            &[3],
            &[0.0f64, 4f64.ln(), 0.25f64.ln()],
        );
        // The stable sigmoid neither overflows nor gives NaN at the extremes.
        let s = run("relax.sigmoid", &[tv(&[2], vec![-1000.0f64, 1000.0])], &[]).unwrap();
        assert_tensor(&s, &[2], &[0.0f64, 1.0]);
    }

    #[test]
    fn unary_on_integers() {
        let x = tv(&[3], vec![-3i8, 0, i8::MIN]);
        assert_tensor(
            &run("relax.negative", from_ref(&x), &[]).unwrap(),
            &[3],
            &[3i8, 0, i8::MIN],
        );
        assert_tensor(
            &run("relax.abs", from_ref(&x), &[]).unwrap(),
            &[3],
            &[3i8, 0, i8::MIN],
        );
        assert_eq!(
            run("relax.exp", &[x], &[]).unwrap_err(),
            "dtype int8 is not supported by this kernel"
        );
        let half = crate::tensor::Tensor::zeros(DataType::float(16), &[2]).unwrap();
        assert_tensor(
            &run("relax.exp", &[half.into()], &[]).unwrap(),
            &[2],
            &[half::f16::ONE; 2],
        );
        assert_eq!(
            run("relax.sqrt", &[Value::Int(3)], &[]).unwrap_err(),
            "x must be a tensor, found the integer 3"
        );
        assert_tensor::<f32>(
            &run("relax.exp", &[tv(&[0], Vec::<f32>::new())], &[]).unwrap(),
            &[0],
            &[],
        );
    }

    #[test]
    fn ewise_fma() {
        let a = tv(&[2, 2], vec![1i32, 2, 3, 4]);
        let b = tv(&[2, 2], vec![5i32, 6, 7, 8]);
        let c = tv(&[2, 2], vec![-1i32, -2, -3, -4]);
        assert_tensor(
            &run("relax.ewise_fma", &[a.clone(), b.clone(), c], &[]).unwrap(),
            &[2, 2],
            &[4i32, 10, 18, 28],
        );
        let f = tv(&[2], vec![1.5f32, 2.0]);
        assert_tensor(
            &run("relax.ewise_fma", &[f.clone(), f.clone(), f.clone()], &[]).unwrap(),
            &[2],
            &[3.75f32, 6.0],
        );
        assert_eq!(
            run(
                "relax.ewise_fma",
                &[a.clone(), b.clone(), tv(&[2], vec![1i32, 2])],
                &[]
            )
            .unwrap_err(),
            "shapes differ: x1 is (2, 2), x3 is (2,)"
        );
        assert_eq!(
            run("relax.ewise_fma", &[a.clone(), b, f], &[]).unwrap_err(),
            "dtypes differ: x1 is int32, x3 is float32"
        );
        assert!(run("relax.ewise_fma", &[a], &[]).is_err());
    }

    #[test]
    fn where_broadcasts_three_ways() {
        // condition (2,1), x1 (3,), x2 () -> (2, 3).
        let c = tv(&[2, 1], vec![true, false]);
        let a = tv(&[3], vec![1u16, 2, 3]);
        let b = tv(&[], vec![9u16]);
        assert_tensor(
            &run("relax.where", &[c.clone(), a.clone(), b.clone()], &[]).unwrap(),
            &[2, 3],
            &[1u16, 2, 3, 9, 9, 9],
        );
        let c2 = tv(&[3], vec![false, true, false]);
        let x = tv(&[2, 1], vec![1.0f64, 2.0]);
        let y = tv(&[3], vec![-1.0f64, -2.0, -3.0]);
        assert_tensor(
            &run("relax.where", &[c2, x, y], &[]).unwrap(),
            &[2, 3],
            &[-1.0f64, 1.0, -3.0, -1.0, 2.0, -3.0],
        );
        assert_eq!(
            run("relax.where", &[a.clone(), a.clone(), b.clone()], &[]).unwrap_err(),
            "condition must have dtype bool, found uint16"
        );
        assert_eq!(
            run(
                "relax.where",
                &[c.clone(), a.clone(), tv(&[1], vec![1i32])],
                &[]
            )
            .unwrap_err(),
            "dtypes differ: x1 is uint16, x2 is int32"
        );
        assert_eq!(
            run("relax.where", &[tv(&[4], vec![true; 4]), a, b], &[]).unwrap_err(),
            "shapes do not broadcast: condition is (4,), x1 is (3,), x2 is ()"
        );
    }

    #[test]
    fn astype_casts_like_c() {
        let x = tv(&[5], vec![-2.7f32, -0.5, 0.0, 2.9, 300.0]);
        let cast = |v: &Value, to: &str| {
            run(
                "relax.astype",
                from_ref(v),
                &[("dtype", KernelAttr::Str(to.into()))],
            )
        };
        assert_tensor(&cast(&x, "int32").unwrap(), &[5], &[-2i32, 0, 0, 2, 300]);
        assert_tensor(&cast(&x, "uint8").unwrap(), &[5], &[0u8, 0, 0, 2, 255]);
        assert_tensor(
            &cast(&x, "bool").unwrap(),
            &[5],
            &[true, true, false, true, true],
        );
        let b = tv(&[2], vec![true, false]);
        assert_tensor(&cast(&b, "float64").unwrap(), &[2], &[1.0f64, 0.0]);
        let i = tv(&[2], vec![257i64, -1]);
        assert_tensor(&cast(&i, "uint8").unwrap(), &[2], &[1u8, 255]);
        assert_tensor(&cast(&i, "i64").unwrap(), &[2], &[257i64, -1]);
        let typed = run(
            "relax.astype",
            from_ref(&i),
            &[("dtype", KernelAttr::DataType(DataType::f32()))],
        )
        .unwrap();
        assert_tensor(&typed, &[2], &[257.0f32, -1.0]);
        let h = half::f16::from_f32;
        assert_tensor(&cast(&i, "float16").unwrap(), &[2], &[h(257.0), h(-1.0)]);
        let b16 = cast(&cast(&x, "bfloat16").unwrap(), "float16").unwrap();
        // -2.7 and 2.9 are rounded twice (bfloat16, then float16); 300 too.
        let via = |v: f32| h(half::bf16::from_f32(v).to_f32());
        assert_tensor(
            &b16,
            &[5],
            &[via(-2.7), h(-0.5), h(0.0), via(2.9), via(300.0)],
        );
        assert_tensor(&cast(&b16, "int8").unwrap(), &[5], &[-2i8, 0, 0, 2, 127]);
        assert!(run("relax.astype", &[i], &[]).is_err());
    }

    #[test]
    fn every_numeric_dtype_runs() {
        let names = [
            "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
            "uint64",
        ];
        let base = tv(&[2, 2], vec![1i64, 2, 3, 4]);
        for name in names {
            let dtype = ("dtype", KernelAttr::Str(name.into()));
            let x = run("relax.astype", from_ref(&base), &[dtype]).unwrap();
            let x2 = x.clone();
            let bin = |op: &str| {
                let out = run(op, &[x.clone(), x2.clone()], &[]).unwrap();
                assert_eq!(out.as_tensor().unwrap().dtype().to_string(), name, "{op}");
                out.as_tensor().unwrap().to_f64_vec()
            };
            assert_eq!(bin("relax.add"), vec![2.0, 4.0, 6.0, 8.0], "{name}");
            assert_eq!(bin("relax.subtract"), vec![0.0; 4], "{name}");
            assert_eq!(bin("relax.multiply"), vec![1.0, 4.0, 9.0, 16.0], "{name}");
            assert_eq!(bin("relax.divide"), vec![1.0; 4], "{name}");
            // 4 ** 4 wraps around to 0 in 8 bits.
            let p44 = if name.ends_with('8') { 0.0 } else { 256.0 };
            assert_eq!(bin("relax.power"), vec![1.0, 4.0, 27.0, p44], "{name}");
            assert_eq!(bin("relax.maximum"), vec![1.0, 2.0, 3.0, 4.0], "{name}");
            let eq = run("relax.equal", &[x.clone(), x2.clone()], &[]).unwrap();
            assert_tensor(&eq, &[2, 2], &[true; 4]);
            let sum = run("relax.sum", from_ref(&x), &[]).unwrap();
            assert_eq!(sum.as_tensor().unwrap().to_f64_vec(), vec![10.0], "{name}");
            let neg = run("relax.negative", from_ref(&x), &[]).unwrap();
            let back = run("relax.negative", from_ref(&neg), &[]).unwrap();
            assert_eq!(back, x, "{name}");
        }
    }

    #[test]
    fn new_unary_math_matches_f64() {
        let x = tv(&[4], vec![-0.75f32, -0.25, 0.25, 0.5]);
        type F = fn(f64) -> f64;
        let fs: [(&str, F); 10] = [
            ("relax.sin", f64::sin),
            ("relax.cos", f64::cos),
            ("relax.tan", f64::tan),
            ("relax.asin", f64::asin),
            ("relax.acos", f64::acos),
            ("relax.atan", f64::atan),
            ("relax.sinh", f64::sinh),
            ("relax.cosh", f64::cosh),
            ("relax.asinh", f64::asinh),
            ("relax.atanh", f64::atanh),
        ];
        let xs = [-0.75f64, -0.25, 0.25, 0.5];
        for (op, f) in fs {
            let want: Vec<f64> = xs.iter().map(|&v| f(v)).collect();
            assert_close_f32(&run(op, from_ref(&x), &[]).unwrap(), &[4], &want);
        }
        let big = tv(&[2], vec![1.0f64, 2.0]);
        assert_tensor(
            &run("relax.acosh", from_ref(&big), &[]).unwrap(),
            &[2],
            &[0.0f64, 2f64.acosh()],
        );
        let e = run("relax.erf", &[tv(&[3], vec![0.0f64, 0.5, -3.0])], &[]).unwrap();
        let got = e.as_tensor().unwrap().to_vec::<f64>().unwrap();
        assert_eq!(got[0], 0.0);
        assert!((got[1] - 0.520_499_877_813_046_5).abs() < 1e-15);
        assert!((got[2] + 0.999_977_909_503_001_4).abs() < 1e-15);
        assert_eq!(
            run("relax.sin", &[tv(&[1], vec![1i32])], &[]).unwrap_err(),
            "dtype int32 is not supported by this kernel"
        );
    }

    #[test]
    fn rounding_sign_and_square() {
        let x = tv(&[6], vec![-2.5f32, -1.5, -0.5, 0.5, 1.5, 2.7]);
        let out = |op: &str| run(op, from_ref(&x), &[]).unwrap();
        assert_tensor(
            &out("relax.floor"),
            &[6],
            &[-3.0f32, -2.0, -1.0, 0.0, 1.0, 2.0],
        );
        assert_tensor(
            &out("relax.ceil"),
            &[6],
            &[-2.0f32, -1.0, -0.0, 1.0, 2.0, 3.0],
        );
        // Halves to even.
        assert_tensor(
            &out("relax.round"),
            &[6],
            &[-2.0f32, -2.0, -0.0, 0.0, 2.0, 3.0],
        );
        assert_tensor(
            &out("relax.trunc"),
            &[6],
            &[-2.0f32, -1.0, -0.0, 0.0, 1.0, 2.0],
        );
        assert_tensor(
            &out("relax.sign"),
            &[6],
            &[-1.0f32, -1.0, -1.0, 1.0, 1.0, 1.0],
        );
        assert_tensor(
            &out("relax.square"),
            &[6],
            &[6.25f32, 2.25, 0.25, 0.25, 2.25, 2.7f32 * 2.7],
        );
        let s = run("relax.sign", &[tv(&[2], vec![f32::NAN, 0.0])], &[]).unwrap();
        let s = s.as_tensor().unwrap().to_vec::<f32>().unwrap();
        assert!(s[0].is_nan());
        assert_eq!(s[1], 0.0);
        let i = tv(&[4], vec![-7i8, 0, 5, i8::MIN]);
        for op in ["relax.floor", "relax.ceil", "relax.round", "relax.trunc"] {
            assert_eq!(run(op, from_ref(&i), &[]).unwrap(), i, "{op}");
        }
        assert_tensor(
            &run("relax.sign", from_ref(&i), &[]).unwrap(),
            &[4],
            &[-1i8, 0, 1, -1],
        );
        assert_tensor(
            &run("relax.square", from_ref(&i), &[]).unwrap(),
            &[4],
            &[49i8, 0, 25, 0],
        );
        assert_tensor(
            &run("relax.sign", &[tv(&[2], vec![0u8, 200])], &[]).unwrap(),
            &[2],
            &[0u8, 1],
        );
    }

    #[test]
    fn predicates_give_bool() {
        let x = tv(&[4], vec![f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1.0]);
        let out = |op: &str| run(op, from_ref(&x), &[]).unwrap();
        assert_tensor(&out("relax.isnan"), &[4], &[true, false, false, false]);
        assert_tensor(&out("relax.isinf"), &[4], &[false, true, true, false]);
        assert_tensor(&out("relax.isfinite"), &[4], &[false, false, false, true]);
        let i = tv(&[1], vec![3i64]);
        assert_tensor(&run("relax.isfinite", &[i], &[]).unwrap(), &[1], &[true]);
    }

    #[test]
    fn logical_and_bitwise() {
        let a = tv(&[4], vec![true, true, false, false]);
        let b = tv(&[4], vec![true, false, true, false]);
        let cases: [(&str, [bool; 4]); 6] = [
            ("relax.logical_and", [true, false, false, false]),
            ("relax.logical_or", [true, true, true, false]),
            ("relax.logical_xor", [false, true, true, false]),
            ("relax.bitwise_and", [true, false, false, false]),
            ("relax.bitwise_or", [true, true, true, false]),
            ("relax.bitwise_xor", [false, true, true, false]),
        ];
        for (op, want) in cases {
            assert_tensor(&run(op, &[a.clone(), b.clone()], &[]).unwrap(), &[4], &want);
        }
        assert_tensor(
            &run("relax.logical_not", from_ref(&a), &[]).unwrap(),
            &[4],
            &[false, false, true, true],
        );
        assert_tensor(
            &run("relax.bitwise_not", from_ref(&a), &[]).unwrap(),
            &[4],
            &[false, false, true, true],
        );
        let x = tv(&[3], vec![0b1100i32, -1, 7]);
        let y = tv(&[3], vec![0b1010i32, 5, -8]);
        let r = |op: &str| run(op, &[x.clone(), y.clone()], &[]).unwrap();
        assert_tensor(&r("relax.bitwise_and"), &[3], &[0b1000i32, 5, 0]);
        assert_tensor(&r("relax.bitwise_or"), &[3], &[0b1110i32, -1, -1]);
        assert_tensor(&r("relax.bitwise_xor"), &[3], &[0b0110i32, -6, -1]);
        assert_tensor(
            &run("relax.bitwise_not", from_ref(&x), &[]).unwrap(),
            &[3],
            &[!0b1100i32, 0, -8],
        );
        assert_tensor(
            &run("relax.bitwise_not", &[tv(&[1], vec![5u8])], &[]).unwrap(),
            &[1],
            &[250u8],
        );
        assert_eq!(
            run("relax.logical_and", &[x.clone(), y.clone()], &[]).unwrap_err(),
            "dtype int32 is not supported by this kernel"
        );
        assert!(run(
            "relax.bitwise_and",
            &[tv(&[1], vec![1.0f32]), tv(&[1], vec![1.0f32])],
            &[]
        )
        .is_err());
    }

    #[test]
    fn shifts_define_every_amount() {
        let a = tv(&[5], vec![1i8, -128, -16, 3, -3]);
        let b = tv(&[5], vec![3i8, 1, 2, 8, -1]);
        assert_tensor(
            &run("relax.left_shift", &[a.clone(), b.clone()], &[]).unwrap(),
            &[5],
            &[8i8, 0, -64, 0, 0],
        );
        assert_tensor(
            &run("relax.right_shift", &[a, b], &[]).unwrap(),
            &[5],
            &[0i8, -64, -4, 0, -1],
        );
        let u = tv(&[3], vec![0x80u8, 0xff, 1]);
        let s = tv(&[3], vec![7u8, 4, 9]);
        assert_tensor(
            &run("relax.right_shift", &[u.clone(), s.clone()], &[]).unwrap(),
            &[3],
            &[1u8, 0x0f, 0],
        );
        assert_tensor(
            &run("relax.left_shift", &[u, s], &[]).unwrap(),
            &[3],
            &[0u8, 0xf0, 0],
        );
        let big = tv(&[1], vec![u64::MAX]);
        assert_tensor(
            &run("relax.left_shift", &[big, tv(&[1], vec![63u64])], &[]).unwrap(),
            &[1],
            &[1u64 << 63],
        );
        assert!(run(
            "relax.left_shift",
            &[tv(&[1], vec![true]), tv(&[1], vec![true])],
            &[]
        )
        .is_err());
    }

    #[test]
    fn floor_divide_floor_mod_and_mod() {
        let a = tv(&[5], vec![7i32, -7, 7, -7, i32::MIN]);
        let b = tv(&[5], vec![2i32, 2, -2, -2, -1]);
        let r = |op: &str| run(op, &[a.clone(), b.clone()], &[]).unwrap();
        assert_tensor(&r("relax.floor_divide"), &[5], &[3i32, -4, -4, 3, i32::MIN]);
        assert_tensor(&r("relax.floor_mod"), &[5], &[1i32, 1, -1, -1, 0]);
        assert_tensor(&r("relax.mod"), &[5], &[1i32, -1, 1, -1, 0]);
        for op in ["relax.floor_divide", "relax.floor_mod", "relax.mod"] {
            let e = run(op, &[tv(&[2], vec![1u8, 2]), tv(&[2], vec![1u8, 0])], &[]).unwrap_err();
            assert_eq!(e, "integer division by zero", "{op}");
        }
        let x = tv(&[4], vec![7.5f64, -7.5, 7.5, -7.5]);
        let y = tv(&[4], vec![2.0f64, 2.0, -2.0, -2.0]);
        let r = |op: &str| run(op, &[x.clone(), y.clone()], &[]).unwrap();
        assert_tensor(&r("relax.floor_divide"), &[4], &[3.0f64, -4.0, -4.0, 3.0]);
        assert_tensor(&r("relax.floor_mod"), &[4], &[1.5f64, 0.5, -0.5, -1.5]);
        assert_tensor(&r("relax.mod"), &[4], &[1.5f64, -1.5, 1.5, -1.5]);
        // An infinite divisor: the dividend, or the divisor when the signs
        // differ (NumPy's `%`); an infinite dividend or a zero divisor: NaN.
        let inf = f32::INFINITY;
        let x = tv(&[6], vec![-3.0f32, 3.0, -1.0, 1.0, inf, 1.0]);
        let y = tv(&[6], vec![inf, inf, -inf, -inf, 2.0, 0.0]);
        let m = run("relax.floor_mod", &[x, y], &[]).unwrap();
        let got = m.as_tensor().unwrap().to_f64_vec();
        assert_eq!(&got[..4], &[f64::INFINITY, 3.0, -1.0, f64::NEG_INFINITY]);
        assert!(got[4].is_nan() && got[5].is_nan());
        let z = run(
            "relax.floor_divide",
            &[tv(&[1], vec![1.0f32]), tv(&[1], vec![0.0f32])],
            &[],
        )
        .unwrap();
        assert_tensor(&z, &[1], &[f32::INFINITY]);
    }

    #[test]
    fn every_kernel_is_registered() {
        for (name, _) in super::KERNELS {
            assert!(crate::kernels::lookup(name).is_some(), "{name}");
        }
    }
}
