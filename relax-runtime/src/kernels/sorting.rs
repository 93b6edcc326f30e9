//! Sorting kernels: `topk`.
//!
//! Each lane along the axis is sorted stably, largest first (smallest first
//! with `largest = False`), NaN counting as larger than any number; the
//! first `k` positions (every position when `k < 1`) give the values and
//! their indices along the axis, in the `dtype` attribute's integer type.
//! `ret_type` picks the tuple of both, or one of them.

use super::args::{check_arity, norm_axis, tensor_arg, tensor_value, view};
use super::dispatch::{with_any, Scalar, Wide};
use super::{Kernel, KernelAttrs};
use crate::value::Value;
use crate::DataType;
use std::cmp::Ordering;

/// The sorting kernels.
pub const KERNELS: &[(&str, Kernel)] = &[("relax.topk", topk)];

/// `a` against `b` with NaN above every number and equal to NaN.
fn order<T: Scalar>(a: T, b: T) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

/// Lanes laid out as `lane_shape` back to the input's axis order
/// (`inverse` the inverse permutation): the shape and the data, row-major.
fn restore<E: Copy>(
    lane_shape: &[usize],
    inverse: &[usize],
    data: Vec<E>,
) -> Result<(Vec<usize>, Vec<E>), String> {
    let a = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(lane_shape), data)
        .map_err(|e| e.to_string())?;
    let a = a.permuted_axes(ndarray::IxDyn(inverse));
    let shape = a.shape().to_vec();
    let data = super::alloc::collect(a.len(), a.iter().copied())?;
    Ok((shape, data))
}

/// `relax.topk(data)`.
fn topk(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 1)?;
    let x = tensor_arg(args, 0, "data")?;
    if x.ndim() == 0 {
        return Err("topk: data must have at least one axis".into());
    }
    let axis = norm_axis(attrs.int("axis")?, x.ndim())?;
    let largest = attrs.bool_or("largest", true)?;
    let ret = attrs.str("ret_type")?;
    if !["both", "values", "indices"].contains(&ret) {
        return Err(format!(
            "topk: ret_type {ret:?} is not both, values or indices"
        ));
    }
    let dtype = attrs.dtype("dtype")?;
    if !dtype.is_int() || dtype.lanes() != 1 {
        return Err(format!("topk: dtype {dtype} is not a signed integer type"));
    }
    let n = x.shape()[axis] as usize;
    let k = attrs.int("k")?;
    let k = if k < 1 { n } else { k as usize };
    if k > n {
        return Err(format!("topk: k = {k} is larger than the axis ({n})"));
    }
    let (values, indices) = with_any!(x.dtype(), T => {
        let v = view::<T>(x)?;
        // The axis last, then cut into lanes.
        let mut perm: Vec<usize> = (0..x.ndim()).filter(|&a| a != axis).collect();
        perm.push(axis);
        let data = super::alloc::collect(
            v.len(),
            v.view().permuted_axes(ndarray::IxDyn(&perm)).iter().copied(),
        )?;
        let lanes = data.len().checked_div(n).unwrap_or(0);
        let outer: usize = perm[..perm.len() - 1].iter().map(|&a| x.shape()[a] as usize).product();
        let mut vals: Vec<T> = super::alloc::collect(outer * k, std::iter::repeat_n(T::ZERO, outer * k))?;
        let mut idxs: Vec<i64> = super::alloc::collect(outer * k, std::iter::repeat_n(0i64, outer * k))?;
        let mut order_buf: Vec<usize> = Vec::with_capacity(n);
        for l in 0..lanes {
            let lane = &data[l * n..(l + 1) * n];
            order_buf.clear();
            order_buf.extend(0..n);
            order_buf.sort_by(|&a, &b| {
                let o = order(lane[a], lane[b]);
                if largest { o.reverse() } else { o }
            });
            for (o, &p) in order_buf[..k].iter().enumerate() {
                vals[l * k + o] = lane[p];
                idxs[l * k + o] = p as i64;
            }
        }
        // Back to the input's axis order: the lanes hold the other axes in
        // order, then the axis.
        let mut lane_shape: Vec<usize> = perm[..perm.len() - 1].iter().map(|&a| x.shape()[a] as usize).collect();
        lane_shape.push(k);
        let mut inverse = vec![0; perm.len()];
        for (i, &p) in perm.iter().enumerate() {
            inverse[p] = i;
        }
        let (shape, vals) = restore(&lane_shape, &inverse, vals)?;
        let vals = tensor_value(&shape, vals)?;
        let (shape, idxs) = restore(&lane_shape, &inverse, idxs)?;
        Ok::<_, String>((vals, (shape, idxs)))
    })?;
    let (shape, idxs) = indices;
    let indices = if dtype == DataType::i64() {
        tensor_value(&shape, idxs)?
    } else {
        let cast = |i: i64| Wide::Int(i128::from(i));
        crate::kernels::dispatch::dispatch!(dtype, [i8, i16, i32, i64], I => {
            let v: Vec<I> = idxs.iter().map(|&i| I::from_wide(cast(i))).collect();
            tensor_value(&shape, v)?
        }, return Err(format!("topk: dtype {dtype} is not supported")))
    };
    Ok(match ret {
        "values" => values,
        "indices" => indices,
        _ => Value::Tuple(vec![values, indices].into()),
    })
}

#[cfg(test)]
mod tests {
    use crate::executable::KernelAttr;
    use crate::kernels::testing::*;
    use crate::value::Value;
    use crate::DataType;

    fn topk_attrs(k: i64, axis: i64, largest: bool, ret: &str) -> Vec<(&'static str, KernelAttr)> {
        vec![
            ("k", KernelAttr::Int(k)),
            ("axis", KernelAttr::Int(axis)),
            ("ret_type", KernelAttr::Str(ret.into())),
            ("largest", KernelAttr::Bool(largest)),
            ("dtype", KernelAttr::DataType(DataType::i64())),
        ]
    }

    fn fields(v: &Value) -> (Value, Value) {
        match v {
            Value::Tuple(f) => (f[0].clone(), f[1].clone()),
            other => panic!("not a tuple: {other:?}"),
        }
    }

    #[test]
    fn topk_takes_the_largest_first_ties_in_order() {
        let x = tv(&[2, 4], vec![1.0f32, 3.0, 3.0, 2.0, 0.0, -1.0, 5.0, 5.0]);
        let r = run(
            "relax.topk",
            std::slice::from_ref(&x),
            &topk_attrs(3, 1, true, "both"),
        )
        .unwrap();
        let (v, i) = fields(&r);
        assert_tensor(&v, &[2, 3], &[3.0f32, 3.0, 2.0, 5.0, 5.0, 0.0]);
        assert_tensor(&i, &[2, 3], &[1i64, 2, 3, 2, 3, 0]);
        // Smallest first, along axis 0, every element (k = 0).
        let r = run(
            "relax.topk",
            std::slice::from_ref(&x),
            &topk_attrs(0, 0, false, "indices"),
        )
        .unwrap();
        assert_tensor(&r, &[2, 4], &[1i64, 1, 0, 0, 0, 0, 1, 1]);
        let r = run(
            "relax.topk",
            std::slice::from_ref(&x),
            &topk_attrs(1, -1, true, "values"),
        )
        .unwrap();
        assert_tensor(&r, &[2, 1], &[3.0f32, 5.0]);
        // NaN is the largest.
        let y = tv(&[3], vec![1.0f64, f64::NAN, 2.0]);
        let r = run("relax.topk", &[y], &topk_attrs(2, 0, false, "indices")).unwrap();
        assert_tensor(&r, &[2], &[0i64, 2]);
        // int32 indices.
        let mut a = topk_attrs(2, 0, true, "indices");
        a[4] = ("dtype", KernelAttr::DataType(DataType::i32()));
        let r = run("relax.topk", &[tv(&[3], vec![7i64, 9, 8])], &a).unwrap();
        assert_tensor(&r, &[2], &[1i32, 2]);
        assert_eq!(
            run("relax.topk", &[x], &topk_attrs(5, 1, true, "both")).unwrap_err(),
            "topk: k = 5 is larger than the axis (4)"
        );
    }
}
