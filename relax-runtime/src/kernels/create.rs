//! Creation kernels: `zeros`, `ones` and `full`.
//!
//! 1. The first argument is a shape value (`Value::Shape`); a negative dim,
//!    or a shape whose byte size overflows the address space, is an error.
//! 2. `zeros` and `ones` take their element type from the `dtype` attribute
//!    (required). `full` takes a rank-0 fill tensor; its `dtype` attribute
//!    defaults (`void`) to the fill's dtype, and otherwise the fill value is
//!    converted as `astype` would (a C cast).

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
];

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
        assert_eq!(
            run("relax.ones", &[Value::shape(&[2])], &[dt("float16")]).unwrap_err(),
            "dtype float16 is not supported by this kernel"
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
