//! The memory ops: `memory.view(data, shape, dtype, relative_byte_offset)`.
//!
//! A view reads the bytes of `data` from `relative_byte_offset` on as a
//! tensor of `shape` and `dtype` (TVM's `R.memory.view`, which TVM runs as
//! the runtime builtin `runtime.TVMArrayCreateView`). Tensors here are
//! immutable, so the view is a copy of those bytes: the result equals what
//! a shared view would read.
//!
//! 1. The view must lie inside `data`: `offset + numel(shape) · size(dtype)
//!    <= numel(data) · size(data.dtype)`, with a non-negative offset and
//!    non-negative dims; anything else is an error, never a read past the
//!    buffer.
//! 2. A `bool` view is refused (a byte other than 0 or 1 is no `bool`), as
//!    is a dtype with vector lanes.

use super::args::{check_arity, checked_numel, shape_arg, tensor_arg};
use super::{alloc, Kernel, KernelAttrs};
use crate::tensor::fmt_shape;
use crate::value::Value;

/// The memory kernels.
pub const KERNELS: &[(&str, Kernel)] = &[("relax.memory.view", view)];

/// `relax.memory.view(data, shape, dtype, relative_byte_offset)`.
fn view(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 4)?;
    let data = tensor_arg(args, 0, "data")?;
    let shape = shape_arg(args, 1, "shape")?;
    let dtype = match &args[2] {
        Value::DataType(d) => *d,
        other => return Err(format!("dtype must be a dtype, found {}", other.describe())),
    };
    let offset = match &args[3] {
        Value::Int(v) => *v,
        other => {
            return Err(format!(
                "relative_byte_offset must be an integer, found {}",
                other.describe()
            ))
        }
    };
    if dtype.is_bool() || dtype.lanes() != 1 || dtype.is_void() || dtype.is_handle() {
        return Err(format!("a view of dtype {dtype} is not supported"));
    }
    if offset < 0 {
        return Err(format!("relative_byte_offset {offset} is negative"));
    }
    if let Some(d) = shape.iter().find(|&&d| d < 0) {
        return Err(format!("dim {d} of shape {} is negative", fmt_shape(shape)));
    }
    let count = checked_numel(shape)?;
    let have = data.as_bytes().len();
    let need = count
        .checked_mul(dtype.size_in_bytes())
        .and_then(|n| n.checked_add(offset as usize))
        .filter(|&n| n <= have)
        .ok_or_else(|| {
            format!(
                "a view of shape {} and dtype {dtype} at byte {offset} does not fit in data of shape {} and dtype {} ({have} bytes)",
                fmt_shape(shape),
                fmt_shape(data.shape()),
                data.dtype()
            )
        })?;
    let mut out = alloc::zeros(dtype, shape)?;
    let bytes = &data.as_bytes()[offset as usize..need];
    out.bytes_mut()
        .ok_or("a fresh tensor is shared")?
        .copy_from_slice(bytes);
    Ok(Value::Tensor(out))
}

#[cfg(test)]
mod tests {
    use crate::data_type::DataType;
    use crate::kernels::testing::*;
    use crate::value::Value;

    fn call(x: Value, shape: &[i64], dtype: DataType, offset: i64) -> Result<Value, String> {
        run(
            "relax.memory.view",
            &[
                x,
                Value::Shape(shape.into()),
                Value::DataType(dtype),
                Value::Int(offset),
            ],
            &[],
        )
    }

    #[test]
    fn view_reinterprets_the_bytes() {
        let x = tv(&[2], vec![1.0f32, -2.5]);
        let r = call(x.clone(), &[2], DataType::i32(), 0).unwrap();
        assert_tensor(
            &r,
            &[2],
            &[1.0f32.to_bits() as i32, (-2.5f32).to_bits() as i32],
        );
        // Another shape and a narrower dtype, from byte 4 on.
        let r = call(x.clone(), &[2, 2], DataType::uint(8), 4).unwrap();
        let b = (-2.5f32).to_le_bytes();
        assert_tensor(&r, &[2, 2], &b);
        let r = call(tv(&[2], vec![-1i8, 5]), &[2], DataType::uint(8), 0).unwrap();
        assert_tensor(&r, &[2], &[255u8, 5]);
    }

    #[test]
    fn view_stays_inside_data() {
        let x = tv(&[2], vec![1.0f32, 2.0]);
        let e = call(x.clone(), &[3], DataType::i32(), 0).unwrap_err();
        assert!(e.contains("does not fit"), "{e}");
        assert!(call(x.clone(), &[2], DataType::i32(), 1).is_err());
        assert!(call(x.clone(), &[1], DataType::i32(), -4).is_err());
        assert!(call(x.clone(), &[2], DataType::bool(), 0).is_err());
        assert!(call(x, &[-1], DataType::uint(8), 0).is_err());
    }
}
