//! Argument checks and result building shared by the reference kernels.
//!
//! 1. Accessors check an argument's position and kind ([`check_arity`],
//!    [`tensor_arg`], [`shape_arg`], [`same_dtype`]) and return an error
//!    message naming the argument, so kernels never index `args` blindly.
//! 2. Axes and shapes come from user data: [`norm_axis`] and [`norm_axes`]
//!    resolve negative axes and reject out-of-range or repeated ones;
//!    [`checked_numel`] rejects negative dims and overflowing element counts;
//!    [`broadcast_shapes`] applies the NumPy broadcasting rules.
//! 3. Results are built by [`tensor_value`] (row-major data), [`value_of`]
//!    (an ndarray of any layout) or [`reshaped`] (the same bytes under a new
//!    shape), all through [`super::alloc`]: memory that cannot be had is an
//!    error, never an abort.
//! 4. Messages do not name the op: the VM reports a kernel's error as
//!    [`crate::error::Error::Kernel`], which prints `{op}: {message}`. Shapes
//!    are printed in the DSL's syntax, `(2, 3)`.

use super::alloc;
use crate::data_type::DataType;
use crate::tensor::{fmt_shape, Element, Tensor};
use crate::value::Value;
use ndarray::{ArrayViewD, IxDyn};

/// Checks that exactly `n` arguments were given.
pub(crate) fn check_arity(args: &[Value], n: usize) -> Result<(), String> {
    if args.len() != n {
        return Err(format!("expected {n} argument(s), found {}", args.len()));
    }
    Ok(())
}

/// Argument `i` (called `name` in messages) as a tensor.
pub(crate) fn tensor_arg<'a>(
    args: &'a [Value],
    i: usize,
    name: &str,
) -> Result<&'a Tensor, String> {
    typed_arg(args, i, name, "a tensor", Value::as_tensor)
}

/// Argument `i` (called `name` in messages) as a shape.
pub(crate) fn shape_arg<'a>(args: &'a [Value], i: usize, name: &str) -> Result<&'a [i64], String> {
    typed_arg(args, i, name, "a shape", Value::as_shape)
}

/// Argument `i` as the kind `get` extracts (`kind` names it in messages).
fn typed_arg<'a, T: ?Sized>(
    args: &'a [Value],
    i: usize,
    name: &str,
    kind: &str,
    get: fn(&'a Value) -> Option<&'a T>,
) -> Result<&'a T, String> {
    let v = args
        .get(i)
        .ok_or_else(|| format!("argument {name} is missing"))?;
    get(v).ok_or_else(|| format!("{name} must be {kind}, found {}", v.describe()))
}

/// Checks that the named tensors have the same dtype and returns it.
pub(crate) fn same_dtype(tensors: &[(&str, &Tensor)]) -> Result<DataType, String> {
    let Some(((first_name, first), rest)) = tensors.split_first() else {
        return Err("internal error: no tensors to compare".into());
    };
    for (name, t) in rest {
        if t.dtype() != first.dtype() {
            return Err(format!(
                "dtypes differ: {first_name} is {}, {name} is {}",
                first.dtype(),
                t.dtype()
            ));
        }
    }
    Ok(first.dtype())
}

/// `axis` (negative counts from the end) as an index below `ndim`.
pub(crate) fn norm_axis(axis: i64, ndim: usize) -> Result<usize, String> {
    let n = ndim as i64;
    let a = if axis < 0 { axis + n } else { axis };
    if a < 0 || a >= n {
        return Err(format!(
            "axis {axis} is out of range for a tensor of rank {ndim}"
        ));
    }
    Ok(a as usize)
}

/// Each axis normalized, in the given order; an axis named twice is an error.
pub(crate) fn norm_axes(axes: &[i64], ndim: usize) -> Result<Vec<usize>, String> {
    let mut out = Vec::with_capacity(axes.len());
    for &a in axes {
        let n = norm_axis(a, ndim)?;
        if out.contains(&n) {
            return Err(format!("axis {n} appears more than once"));
        }
        out.push(n);
    }
    Ok(out)
}

/// A shape as ndarray dims (the dims of a built tensor are never negative).
pub(crate) fn udims(shape: &[i64]) -> Vec<usize> {
    shape.iter().map(|&d| d.max(0) as usize).collect()
}

/// Checks that no dim of `shape` (from user data) is negative.
pub(crate) fn check_nonnegative(shape: &[i64]) -> Result<(), String> {
    if shape.iter().any(|&d| d < 0) {
        return Err(negative_dim(shape));
    }
    Ok(())
}

/// The message for a shape with a negative dim.
fn negative_dim(shape: &[i64]) -> String {
    format!("shape {} has a negative dimension", fmt_shape(shape))
}

/// The element count of `shape`, or an error when a dim is negative or the
/// count overflows (a target shape comes from user data). Dims are checked
/// left to right, so the first problem is the one reported.
pub(crate) fn checked_numel(shape: &[i64]) -> Result<usize, String> {
    shape.iter().try_fold(1usize, |acc, &d| {
        if d < 0 {
            return Err(negative_dim(shape));
        }
        acc.checked_mul(d as usize)
            .ok_or_else(|| format!("shape {} has too many elements", fmt_shape(shape)))
    })
}

/// The NumPy broadcast of the named shapes: aligned at the right, each dim
/// equal or 1. An error names every shape when they do not broadcast.
pub(crate) fn broadcast_shapes(shapes: &[(&str, &[usize])]) -> Result<Vec<usize>, String> {
    let ndim = shapes.iter().map(|(_, s)| s.len()).max().unwrap_or(0);
    let mut out = vec![1usize; ndim];
    for (_, s) in shapes {
        let offset = ndim - s.len();
        for (k, &d) in s.iter().enumerate() {
            let o = &mut out[offset + k];
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                let list = shapes
                    .iter()
                    .map(|(n, s)| format!("{n} is {}", fmt_udims(s)))
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err(format!("shapes do not broadcast: {list}"));
            }
        }
    }
    Ok(out)
}

/// `dims` printed as a shape.
fn fmt_udims(dims: &[usize]) -> String {
    fmt_shape(&dims.iter().map(|&d| d as i64).collect::<Vec<_>>())
}

/// A typed view of a tensor whose dtype the caller has dispatched on.
pub(crate) fn view<T: Element>(t: &Tensor) -> Result<ArrayViewD<'_, T>, String> {
    t.view::<T>().map_err(|e| e.to_string())
}

/// The elements of `t` (of type `T`) broadcast to `shape` (checked by
/// [`broadcast_shapes`]), in row-major order.
pub(crate) fn broadcast_elems<T: Element>(t: &Tensor, shape: &[usize]) -> Result<Vec<T>, String> {
    let v = view::<T>(t)?;
    let b = v.broadcast(IxDyn(shape)).ok_or_else(|| {
        format!(
            "cannot broadcast shape {} to {}",
            fmt_shape(t.shape()),
            fmt_udims(shape)
        )
    })?;
    alloc::collect(b.len(), b.iter().copied())
}

/// A tensor value of `shape` from row-major `data`.
pub(crate) fn tensor_value<T: Element>(shape: &[usize], data: Vec<T>) -> Result<Value, String> {
    let shape: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    alloc::tensor(&shape, &data).map(Value::Tensor)
}

/// An ndarray (any layout) as a tensor value.
pub(crate) fn value_of<T, S, D>(a: &ndarray::ArrayBase<S, D>) -> Result<Value, String>
where
    T: Element,
    S: ndarray::Data<Elem = T>,
    D: ndarray::Dimension,
{
    let shape: Vec<i64> = a.shape().iter().map(|&d| d as i64).collect();
    let t = match a.as_slice() {
        Some(contiguous) => alloc::tensor(&shape, contiguous)?,
        None => alloc::tensor(&shape, &alloc::collect(a.len(), a.iter().copied())?)?,
    };
    Ok(Value::Tensor(t))
}

/// `t`'s elements under a new shape with the same element count (sharing
/// its buffer: nothing is copied or allocated).
pub(crate) fn reshaped(t: &Tensor, shape: &[i64]) -> Result<Tensor, String> {
    t.reshape(shape).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_normalize_and_reject() {
        assert_eq!(norm_axis(-1, 3), Ok(2));
        assert_eq!(norm_axis(0, 1), Ok(0));
        assert_eq!(
            norm_axis(3, 3).unwrap_err(),
            "axis 3 is out of range for a tensor of rank 3"
        );
        assert!(norm_axis(-4, 3).is_err());
        assert!(norm_axis(0, 0).is_err());
        assert_eq!(norm_axes(&[0, -1], 2), Ok(vec![0, 1]));
        assert_eq!(
            norm_axes(&[1, -1], 2).unwrap_err(),
            "axis 1 appears more than once"
        );
    }

    #[test]
    fn numel_rejects_negative_and_overflow() {
        assert_eq!(checked_numel(&[2, 3]), Ok(6));
        assert_eq!(checked_numel(&[]), Ok(1));
        assert!(checked_numel(&[2, -1]).is_err());
        assert!(checked_numel(&[i64::MAX, i64::MAX]).is_err());
    }

    #[test]
    fn broadcasting_rules() {
        let s = broadcast_shapes(&[("x1", &[2, 1, 3]), ("x2", &[4, 1])]).unwrap();
        assert_eq!(s, vec![2, 4, 3]);
        assert_eq!(
            broadcast_shapes(&[("x1", &[0]), ("x2", &[1])]).unwrap(),
            vec![0]
        );
        assert_eq!(
            broadcast_shapes(&[("x1", &[3, 4]), ("x2", &[3, 5])]).unwrap_err(),
            "shapes do not broadcast: x1 is (3, 4), x2 is (3, 5)"
        );
    }
}
