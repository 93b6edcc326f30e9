//! Creation kernels: `zeros`, `ones`, `full` and `arange`.
//!
//! 1. The first argument is a shape value (`Value::Shape`); a negative dim,
//!    or a shape whose byte size overflows the address space, is an error.
//! 2. `zeros` and `ones` take their element type from the `dtype` attribute
//!    (required). `full` takes a rank-0 fill tensor; its `dtype` attribute
//!    defaults (`void`) to the fill's dtype, and otherwise the fill value is
//!    converted as `astype` would (a C cast).
//! 3. `arange(start, end, step)` takes three prim values and writes
//!    `start + i * step` for the `ceil((end - start) / step)` values of `i`
//!    (none when that is negative), computed in `i64` when all three are
//!    integers and in `f64` otherwise, then converted to `dtype` (default
//!    `int64`; required when a value is a float).

use super::alloc;
use super::args::{check_arity, check_nonnegative, checked_numel, shape_arg, tensor_arg, view};
use super::dispatch::{with_any, Scalar, Wide};
use super::{Kernel, KernelAttrs};
use crate::data_type::DataType;
use crate::tensor::fmt_shape;
use crate::value::Value;

/// The creation kernels.
pub const KERNELS: &[(&str, Kernel)] = &[
    ("relax.zeros", zeros),
    ("relax.ones", ones),
    ("relax.full", full),
    ("relax.arange", arange),
    ("relax.eye_like", eye_like),
];

/// `relax.eye_like(x, k)`: ones where `j - i == k` over `x`'s 2-d shape,
/// zeros elsewhere, in `dtype` (`x`'s when `void`).
fn eye_like(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 2)?;
    let x = tensor_arg(args, 0, "x")?;
    let k = match &args[1] {
        Value::Int(k) => *k,
        other => return Err(format!("k must be an integer, found {}", other.describe())),
    };
    let &[rows, cols] = x.shape() else {
        return Err(format!("x must have rank 2, found rank {}", x.ndim()));
    };
    let dtype = attrs.dtype("dtype")?;
    let dtype = if dtype.is_void() { x.dtype() } else { dtype };
    with_any!(dtype, T => {
        let (one, zero) = (T::from_wide(1.to_wide()), T::from_wide(0.to_wide()));
        let data = alloc::collect(
            (rows * cols) as usize,
            (0..rows).flat_map(|i| (0..cols).map(move |j| if j - i == k { one } else { zero })),
        )?;
        alloc::tensor(&[rows, cols], &data).map(Value::Tensor)
    })
}

/// The shape argument, checked to describe a tensor that can exist.
fn creatable_shape(args: &[Value], dtype: DataType) -> Result<&[i64], String> {
    let shape = shape_arg(args, 0, "shape")?;
    check_nonnegative(shape)?;
    let bytes = shape
        .iter()
        .try_fold(dtype.size_in_bytes().max(1), |acc, &d| {
            acc.checked_mul(usize::try_from(d).ok()?)
        });
    match bytes {
        Some(b) if b <= isize::MAX as usize => Ok(shape),
        _ => Err(format!(
            "a {dtype} tensor of shape {} is too large",
            fmt_shape(shape)
        )),
    }
}

/// A tensor of `shape` and `dtype` with every element `value` (converted).
fn filled(shape: &[i64], dtype: DataType, value: Wide) -> Result<Value, String> {
    // Both paths go through `alloc`: a huge shape is an `Err`, and a VM's
    // memory limit counts the result.
    with_any!(dtype, T => {
        let v = T::from_wide(value);
        if v == T::from_wide(0.to_wide()) {
            return alloc::zeros(dtype, shape).map(Value::Tensor);
        }
        let n = checked_numel(shape)?;
        let mut data: Vec<T> = alloc::vec(n)?;
        data.resize(n, v);
        alloc::tensor(shape, &data).map(Value::Tensor)
    })
}

/// The required `dtype` attribute.
fn dtype_attr(attrs: &KernelAttrs) -> Result<DataType, String> {
    let dtype = attrs.dtype("dtype")?;
    if dtype.is_void() {
        return Err("the `dtype` attribute is required".into());
    }
    Ok(dtype)
}

/// `relax.zeros(shape)`.
fn zeros(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    constant(args, attrs, 0)
}

/// `relax.ones(shape)`.
fn ones(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    constant(args, attrs, 1)
}

/// A tensor of the `shape` argument and the `dtype` attribute filled with
/// `value`.
fn constant(args: &[Value], attrs: &KernelAttrs, value: i64) -> Result<Value, String> {
    check_arity(args, 1)?;
    let dtype = dtype_attr(attrs)?;
    let shape = creatable_shape(args, dtype)?;
    filled(shape, dtype, value.to_wide())
}

/// `relax.full(shape, fill_value)`.
fn full(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 2)?;
    let fill = tensor_arg(args, 1, "fill_value")?;
    if fill.ndim() != 0 {
        return Err(format!(
            "fill_value must be a scalar (rank 0), found shape {}",
            fmt_shape(fill.shape())
        ));
    }
    let dtype = attrs.dtype("dtype")?;
    let dtype = if dtype.is_void() { fill.dtype() } else { dtype };
    let shape = creatable_shape(args, dtype)?;
    let value = with_any!(fill.dtype(), S => {
        let v = view::<S>(fill)?;
        v.iter().next().map(|&x| x.to_wide()).ok_or_else(|| "empty fill_value".to_string())
    })?;
    filled(shape, dtype, value)
}

/// `relax.arange(start, end, step)`.
fn arange(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 3)?;
    let names = ["start", "end", "step"];
    let mut ints = [0i64; 3];
    let mut floats = [0f64; 3];
    let mut all_int = true;
    for (i, a) in args.iter().enumerate() {
        match a {
            Value::Int(v) => {
                ints[i] = *v;
                floats[i] = *v as f64;
            }
            Value::Float(v) => {
                all_int = false;
                floats[i] = *v;
            }
            other => return Err(format!("{} must be a prim value, found {other}", names[i])),
        }
    }
    let dtype = attrs.dtype("dtype")?;
    if dtype.is_void() && !all_int {
        return Err("a float arange needs its `dtype` attribute".into());
    }
    let dtype = if dtype.is_void() {
        DataType::i64()
    } else {
        dtype
    };
    let values: Vec<Wide> = if all_int {
        let [start, end, step] = ints;
        if step == 0 {
            return Err("step must not be 0".into());
        }
        let span = i128::from(end) - i128::from(start);
        let step = i128::from(step);
        let n = if step > 0 {
            (span + step - 1).div_euclid(step)
        } else {
            (-span - step - 1).div_euclid(-step)
        }
        .max(0);
        let n = usize::try_from(n).map_err(|_| "arange has too many values".to_string())?;
        let mut out = alloc::vec(n)?;
        out.extend(
            (0..n)
                .map(|i| (i128::from(start) + i as i128 * step) as i64)
                .map(|v| v.to_wide()),
        );
        out
    } else {
        let [start, end, step] = floats;
        if step == 0.0 || !step.is_finite() {
            return Err(format!("step must be finite and not 0, found {step}"));
        }
        let n = ((end - start) / step).ceil();
        if !n.is_finite() || n > isize::MAX as f64 {
            return Err(format!(
                "arange({start}, {end}, {step}) has too many values"
            ));
        }
        let n = n.max(0.0) as usize;
        let mut out = alloc::vec(n)?;
        out.extend((0..n).map(|i| (start + i as f64 * step).to_wide()));
        out
    };
    let n = values.len() as i64;
    creatable_shape(&[Value::shape(&[n])], dtype)?;
    with_any!(dtype, T => {
        let data: Vec<T> = values.into_iter().map(T::from_wide).collect();
        alloc::tensor(&[n], &data).map(Value::Tensor)
    })
}

#[cfg(test)]
mod tests {
    use crate::data_type::DataType;
    use crate::executable::KernelAttr;
    use crate::kernels::testing::*;
    use crate::value::Value;
    use std::slice::from_ref;

    fn dt(s: &str) -> (&'static str, KernelAttr) {
        ("dtype", KernelAttr::Str(s.into()))
    }

    #[test]
    fn eye_like_puts_ones_on_diagonal_k() {
        let x = tv(&[2, 3], vec![0.0f32; 6]);
        let r = run("relax.eye_like", &[x.clone(), Value::Int(1)], &[]).unwrap();
        assert_tensor(&r, &[2, 3], &[0.0f32, 1.0, 0.0, 0.0, 0.0, 1.0]);
        let r = run(
            "relax.eye_like",
            &[x.clone(), Value::Int(-1)],
            &[("dtype", KernelAttr::DataType(DataType::i32()))],
        )
        .unwrap();
        assert_tensor(&r, &[2, 3], &[0i32, 0, 0, 1, 0, 0]);
        assert!(run(
            "relax.eye_like",
            &[tv(&[3], vec![1i64, 2, 3]), Value::Int(0)],
            &[]
        )
        .is_err());
        assert!(run("relax.eye_like", &[x, Value::Float(0.0)], &[]).is_err());
    }

    #[test]
    fn arange_counts_up_and_down() {
        let run_ints = |a: i64, b: i64, c: i64, attrs: &[(&str, KernelAttr)]| {
            run(
                "relax.arange",
                &[Value::Int(a), Value::Int(b), Value::Int(c)],
                attrs,
            )
        };
        let t = run_ints(2, 9, 3, &[]).unwrap();
        assert_eq!(t.as_tensor().unwrap().to_vec::<i64>().unwrap(), [2, 5, 8]);
        let t = run_ints(9, 0, -4, &[dt("int32")]).unwrap();
        assert_eq!(t.as_tensor().unwrap().to_vec::<i32>().unwrap(), [9, 5, 1]);
        let t = run_ints(5, 2, 1, &[]).unwrap();
        assert_eq!(t.as_tensor().unwrap().shape(), &[0]);
        assert!(run_ints(0, 3, 0, &[]).unwrap_err().contains("step"));
        let f = run(
            "relax.arange",
            &[Value::Float(0.5), Value::Float(2.0), Value::Float(0.5)],
            &[dt("float32")],
        )
        .unwrap();
        assert_eq!(
            f.as_tensor().unwrap().to_vec::<f32>().unwrap(),
            [0.5, 1.0, 1.5]
        );
        assert!(run(
            "relax.arange",
            &[Value::Float(0.5), Value::Float(2.0), Value::Float(0.5)],
            &[],
        )
        .is_err());
        assert!(run(
            "relax.arange",
            &[Value::Int(0), Value::Int(i64::MAX), Value::Int(1)],
            &[],
        )
        .is_err());
    }

    #[test]
    fn zeros_and_ones() {
        let s = Value::shape(&[2, 3]);
        assert_tensor(
            &run("relax.zeros", from_ref(&s), &[dt("float32")]).unwrap(),
            &[2, 3],
            &[0.0f32; 6],
        );
        assert_tensor(
            &run("relax.ones", from_ref(&s), &[dt("int8")]).unwrap(),
            &[2, 3],
            &[1i8; 6],
        );
        assert_tensor(
            &run(
                "relax.ones",
                &[Value::shape(&[])],
                &[("dtype", KernelAttr::DataType(DataType::bool()))],
            )
            .unwrap(),
            &[],
            &[true],
        );
        assert_tensor::<u64>(
            &run("relax.zeros", &[Value::shape(&[4, 0])], &[dt("uint64")]).unwrap(),
            &[4, 0],
            &[],
        );
    }

    #[test]
    fn full_takes_the_fill_dtype_or_converts() {
        let s = Value::shape(&[3]);
        let f = tv(&[], vec![2.5f64]);
        assert_tensor(
            &run("relax.full", &[s.clone(), f.clone()], &[dt("void")]).unwrap(),
            &[3],
            &[2.5f64; 3],
        );
        assert_tensor(
            &run("relax.full", &[s.clone(), f.clone()], &[]).unwrap(),
            &[3],
            &[2.5f64; 3],
        );
        assert_tensor(
            &run("relax.full", &[s.clone(), f.clone()], &[dt("int32")]).unwrap(),
            &[3],
            &[2i32; 3],
        );
        assert_tensor(
            &run(
                "relax.full",
                &[s.clone(), tv(&[], vec![true])],
                &[dt("float32")],
            )
            .unwrap(),
            &[3],
            &[1.0f32; 3],
        );
        assert_eq!(
            run("relax.full", &[s.clone(), tv(&[1], vec![1i32])], &[]).unwrap_err(),
            "fill_value must be a scalar (rank 0), found shape (1,)"
        );
        assert_eq!(
            run("relax.full", &[s, Value::Int(1)], &[]).unwrap_err(),
            "fill_value must be a tensor, found the integer 1"
        );
    }

    #[test]
    fn creation_errors() {
        assert_eq!(
            run("relax.zeros", &[Value::shape(&[2])], &[]).unwrap_err(),
            "the `dtype` attribute is required"
        );
        assert_eq!(
            run("relax.zeros", &[Value::shape(&[2, -1])], &[dt("f32")]).unwrap_err(),
            "shape (2, -1) has a negative dimension"
        );
        assert_eq!(
            run("relax.ones", &[tv(&[1], vec![2i64])], &[dt("f32")]).unwrap_err(),
            "shape must be a shape, found an int64 tensor of shape (1,)"
        );
        assert_eq!(
            run(
                "relax.zeros",
                &[Value::shape(&[1 << 40, 1 << 40])],
                &[dt("f32")]
            )
            .unwrap_err(),
            "a float32 tensor of shape (1099511627776, 1099511627776) is too large"
        );
        assert_tensor(
            &run("relax.ones", &[Value::shape(&[2])], &[dt("float16")]).unwrap(),
            &[2],
            &[half::f16::ONE; 2],
        );
        assert!(run("relax.ones", &[], &[dt("f32")]).is_err());
        assert!(run("relax.zeros", &[Value::shape(&[2])], &[dt("floaty")]).is_err());
    }

    /// Through the VM (with its default kernel resolver), a kernel's error
    /// names the op exactly once: the VM adds it, the kernel does not.
    #[test]
    fn vm_error_names_the_op_once() {
        use crate::executable::{Arg, Callee, Executable, Instr, KernelEntry, VmFunction};
        use crate::vm::VirtualMachine;
        let main = VmFunction {
            name: "main".into(),
            params: vec![],
            num_regs: 1,
            num_slots: 0,
            instrs: vec![
                Instr::Call {
                    callee: Callee::Kernel(0),
                    args: vec![Arg::Const(0), Arg::Const(1)],
                    dst: 0,
                },
                Instr::Ret { value: Arg::Reg(0) },
            ],
        };
        let exec = Executable {
            functions: vec![main],
            kernels: vec![KernelEntry {
                op: "relax.full".into(),
                attrs: vec![],
            }],
            constants: vec![Value::shape(&[3]), tv(&[2], vec![1.0f32, 2.0])],
            ..Executable::default()
        };
        let err = VirtualMachine::new(&exec).call("main", &[]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "relax.full: fill_value must be a scalar (rank 0), found shape (2,)"
        );
    }
}
