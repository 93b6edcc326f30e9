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
//!    `sigmoid`) take `float32` or `float64`; each element is computed in
//!    `f64` and rounded once to the tensor's type, so an `f32` result is the
//!    correctly rounded value up to `f64`'s own error. `sigmoid` is computed
//!    in the form that cannot overflow for either sign of `x`.
//! 5. `ewise_fma(x1, x2, x3)` needs equal shapes and rounds twice (a multiply
//!    then an add), as the unfused expression TVM legalizes it to.
//! 6. `astype` converts as a C cast: floats to integers truncate toward zero
//!    (saturating at the bounds, NaN giving 0, where C is undefined),
//!    narrowing integers keep the low bits, integers to floats round to
//!    nearest, anything to `bool` is `x != 0` (NaN is `true`), and `bool` to
//!    numbers is 0 or 1.

use super::alloc;
use super::args::{
    broadcast_elems, broadcast_shapes, check_arity, same_dtype, tensor_arg, tensor_value, udims,
    view,
};
use super::dispatch::{with_any, with_float, with_num, Float, Num, Scalar};
use super::{Kernel, KernelAttrs};
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
    ("relax.negative", negative),
    ("relax.abs", abs),
    ("relax.exp", exp),
    ("relax.log", log),
    ("relax.sqrt", sqrt),
    ("relax.rsqrt", rsqrt),
    ("relax.tanh", tanh),
    ("relax.sigmoid", sigmoid),
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
            $via($kind, args)
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
    let from = x.dtype();
    with_any!(from, S => {
        let src = view::<S>(x)?;
        with_any!(to, D => {
            let data = alloc::collect(src.len(), src.iter().map(|&v| D::from_wide(v.to_wide())))?;
            tensor_value(&udims(x.shape()), data)
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
        assert_eq!(
            run("relax.add", &[half.clone().into(), half.into()], &[]).unwrap_err(),
            "dtype float16 is not supported by this kernel"
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
        assert_eq!(
            run("relax.exp", &[half.into()], &[]).unwrap_err(),
            "dtype float16 is not supported by this kernel"
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
        assert_eq!(
            cast(&i, "float16").unwrap_err(),
            "dtype float16 is not supported by this kernel"
        );
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
    fn every_kernel_is_registered() {
        for (name, _) in super::KERNELS {
            assert!(crate::kernels::lookup(name).is_some(), "{name}");
        }
    }
}
