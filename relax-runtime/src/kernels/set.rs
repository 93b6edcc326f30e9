//! Set kernels: `nonzero` and `unique`.
//!
//! `nonzero(x)`: the indices of the non-zero elements (NaN counts as
//! non-zero, as in NumPy), in row-major order, as an `int64` tensor of
//! shape `(ndim, count)` (a scalar gives `(0, count)`, count 0 or 1).
//!
//! `unique(x)`: the distinct elements of `x` flattened, or its distinct
//! slices along `axis`; sorted ascending (slices compared element by
//! element in row-major order; NaN above every number and equal to NaN),
//! or in the order they first occur. With any `return_*`, a tuple of the
//! values then the requested `int64` vectors: each one's first occurrence,
//! every element's (slice's) unique index, each one's count.

use super::args::{check_arity, tensor_arg, tensor_value, view};
use super::dispatch::{with_any, Scalar};
use super::{Kernel, KernelAttrs};
use crate::value::Value;
use ndarray::Dimension;

/// The set kernels.
pub const KERNELS: &[(&str, Kernel)] = &[("relax.nonzero", nonzero), ("relax.unique", unique)];

/// `a` against `b` with NaN above every number and equal to NaN.
fn order<T: Scalar>(a: T, b: T) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

/// Slices compared element by element.
fn order_slices<T: Scalar>(a: &[T], b: &[T]) -> std::cmp::Ordering {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| order(x, y))
        .find(|o| o.is_ne())
        .unwrap_or(std::cmp::Ordering::Equal)
}

/// `relax.unique(x)`.
fn unique(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 1)?;
    let x = tensor_arg(args, 0, "x")?;
    let sorted = attrs.bool_or("sorted", true)?;
    let axis = match attrs.opt_int("axis")? {
        Some(a) => Some(super::args::norm_axis(a, x.ndim())?),
        None => None,
    };
    with_any!(x.dtype(), T => {
        let v = view::<T>(x)?;
        // The slices, each row-major, the axis first.
        let (n, slice_shape, data): (usize, Vec<usize>, Vec<T>) = match axis {
            Some(a) => {
                let mut perm = vec![a];
                perm.extend((0..x.ndim()).filter(|&b| b != a));
                let p = v.view().permuted_axes(ndarray::IxDyn(&perm));
                let rest: Vec<usize> = p.shape()[1..].to_vec();
                let data = super::alloc::collect(p.len(), p.iter().copied())?;
                (x.shape()[a] as usize, rest, data)
            }
            None => (v.len(), vec![], super::alloc::collect(v.len(), v.iter().copied())?),
        };
        let w: usize = slice_shape.iter().product();
        let slice = |i: usize| &data[i * w..(i + 1) * w];
        // First occurrences in order, each with its count, and every
        // slice's unique (first-occurrence) number.
        let mut firsts: Vec<usize> = Vec::new();
        let mut inverse: Vec<usize> = Vec::with_capacity(n);
        let mut by_value: Vec<usize> = Vec::new(); // firsts' numbers, sorted by value
        for i in 0..n {
            let s = slice(i);
            match by_value.binary_search_by(|&u| order_slices(slice(firsts[u]), s)) {
                Ok(p) => inverse.push(by_value[p]),
                Err(p) => {
                    by_value.insert(p, firsts.len());
                    inverse.push(firsts.len());
                    firsts.push(i);
                }
            }
        }
        // The output order: by value, or by first occurrence.
        let order_out: Vec<usize> = if sorted { by_value.clone() } else { (0..firsts.len()).collect() };
        let mut place = vec![0usize; firsts.len()];
        for (o, &u) in order_out.iter().enumerate() {
            place[u] = o;
        }
        let u = firsts.len();
        let mut values: Vec<T> = Vec::with_capacity(u * w);
        for &k in &order_out {
            values.extend_from_slice(slice(firsts[k]));
        }
        let mut counts = vec![0i64; u];
        let inverse: Vec<i64> = inverse.iter().map(|&k| place[k] as i64).collect();
        for &k in &inverse {
            counts[k as usize] += 1;
        }
        let index: Vec<i64> = order_out.iter().map(|&k| firsts[k] as i64).collect();
        let values = match axis {
            Some(a) => {
                let mut shape = vec![u];
                shape.extend(&slice_shape);
                let arr = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&shape), values)
                    .map_err(|e| e.to_string())?;
                // Back from axis-first to the input's order.
                let mut perm = vec![a];
                perm.extend((0..x.ndim()).filter(|&b| b != a));
                let mut inverse_perm = vec![0; perm.len()];
                for (i, &p) in perm.iter().enumerate() {
                    inverse_perm[p] = i;
                }
                super::args::value_of(&arr.permuted_axes(ndarray::IxDyn(&inverse_perm)))?
            }
            None => tensor_value(&[u], values)?,
        };
        let mut fields = vec![values];
        if attrs.bool_or("return_index", false)? {
            fields.push(tensor_value(&[u], index)?);
        }
        if attrs.bool_or("return_inverse", false)? {
            fields.push(tensor_value(&[n], inverse)?);
        }
        if attrs.bool_or("return_counts", false)? {
            fields.push(tensor_value(&[u], counts)?);
        }
        Ok(if fields.len() == 1 {
            fields.remove(0)
        } else {
            Value::Tuple(fields.into())
        })
    })
}

/// `relax.nonzero(x)`.
fn nonzero(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 1)?;
    let x = tensor_arg(args, 0, "x")?;
    let hits: Vec<Vec<usize>> = with_any!(x.dtype(), T => {
        let v = view::<T>(x)?;
        let mut hits = Vec::new();
        for (idx, &e) in v.indexed_iter() {
            if e != T::ZERO {
                hits.push(idx.slice().to_vec());
            }
        }
        Ok::<_, String>(hits)
    })?;
    let (r, n) = (x.ndim(), hits.len());
    let mut out = super::alloc::collect(r * n, std::iter::repeat_n(0i64, r * n))?;
    for (j, idx) in hits.iter().enumerate() {
        for (a, &i) in idx.iter().enumerate() {
            out[a * n + j] = i as i64;
        }
    }
    tensor_value(&[r, n], out)
}

#[cfg(test)]
mod tests {
    use crate::executable::KernelAttr;
    use crate::kernels::testing::*;
    use crate::value::Value;

    #[test]
    fn nonzero_lists_indices_row_major_one_row_per_axis() {
        let x = tv(&[2, 3], vec![0.0f32, 2.0, 0.0, f32::NAN, 0.0, -1.0]);
        let r = run("relax.nonzero", &[x], &[]).unwrap();
        assert_tensor(&r, &[2, 3], &[0i64, 1, 1, 1, 0, 2]);
        let b = tv(&[4], vec![true, false, false, true]);
        assert_tensor(
            &run("relax.nonzero", &[b], &[]).unwrap(),
            &[1, 2],
            &[0i64, 3],
        );
        let none = tv(&[2], vec![0i32, 0]);
        assert_tensor::<i64>(&run("relax.nonzero", &[none], &[]).unwrap(), &[1, 0], &[]);
    }

    fn unique_attrs(sorted: bool, axis: Option<i64>) -> Vec<(&'static str, KernelAttr)> {
        vec![
            ("sorted", KernelAttr::Bool(sorted)),
            ("return_index", KernelAttr::Bool(true)),
            ("return_inverse", KernelAttr::Bool(true)),
            ("return_counts", KernelAttr::Bool(true)),
            ("axis", axis.map_or(KernelAttr::None, KernelAttr::Int)),
        ]
    }

    fn fields(v: Value) -> Vec<Value> {
        match v {
            Value::Tuple(f) => f.to_vec(),
            other => panic!("not a tuple: {other:?}"),
        }
    }

    #[test]
    fn unique_sorted_or_in_first_occurrence_order() {
        let x = tv(&[6], vec![2.0f32, 1.0, 1.0, 3.0, 4.0, 3.0]);
        let f = fields(
            run(
                "relax.unique",
                std::slice::from_ref(&x),
                &unique_attrs(true, None),
            )
            .unwrap(),
        );
        assert_tensor(&f[0], &[4], &[1.0f32, 2.0, 3.0, 4.0]);
        assert_tensor(&f[1], &[4], &[1i64, 0, 3, 4]);
        assert_tensor(&f[2], &[6], &[1i64, 0, 0, 2, 3, 2]);
        assert_tensor(&f[3], &[4], &[2i64, 1, 2, 1]);
        let f = fields(run("relax.unique", &[x], &unique_attrs(false, None)).unwrap());
        assert_tensor(&f[0], &[4], &[2.0f32, 1.0, 3.0, 4.0]);
        assert_tensor(&f[1], &[4], &[0i64, 1, 3, 4]);
        assert_tensor(&f[2], &[6], &[0i64, 1, 1, 2, 3, 2]);
        assert_tensor(&f[3], &[4], &[1i64, 2, 2, 1]);
        // Columns of a matrix (axis 1).
        let m = tv(&[2, 3], vec![1i64, 0, 1, 5, 2, 5]);
        let f = fields(run("relax.unique", &[m], &unique_attrs(true, Some(-1))).unwrap());
        assert_tensor(&f[0], &[2, 2], &[0i64, 1, 2, 5]);
        assert_tensor(&f[2], &[3], &[1i64, 0, 1]);
        // Without return_*, the values alone.
        let plain = run("relax.unique", &[tv(&[3], vec![3i32, 3, 1])], &[]).unwrap();
        assert_tensor(&plain, &[2], &[1i32, 3]);
    }
}
