//! Reduction kernels: `sum`, `mean`, `max`, `min`, `prod` over a set of
//! axes, and `argmax`/`argmin` over one axis or the flattened tensor.
//!
//! 1. The axes are normalized first (negative axes count from the end; an
//!    axis out of range or given twice is an error). `axis = None` reduces
//!    every axis; `keepdims` keeps each reduced axis as a dim of 1.
//! 2. The algorithm is the same for every reduction (`reduce_lanes`): the
//!    input is permuted so the kept axes come first and the reduced axes
//!    last, read in that order into one buffer, and cut into equal *lanes*,
//!    one per output element, each holding the elements that reduce into
//!    it. `map_lanes` uses the same layout for ops that map each lane to a
//!    lane of the same length (softmax, layer norm) and permutes back.
//! 3. Empty axes: `sum` gives 0 and `prod` 1; `max`, `min`, `argmax` and
//!    `argmin` are an error ("reduction over an empty axis") unless the
//!    output itself is empty; a float `mean` gives NaN (as NumPy), an
//!    integer `mean` is an error.
//! 4. Floats are accumulated in `f64` and rounded once; integer sums and
//!    products wrap around. An integer `mean` divides the sum by the count
//!    with truncation, as TVM's legalization (`sum / n`) does.
//! 5. `max`/`min` of `bool` are any/all (`false < true`); the other
//!    reductions take numbers only.
//! 6. `max`/`min` propagate NaN, and `argmax`/`argmin` give the index of the
//!    first NaN if there is one (as NumPy); otherwise the first occurrence
//!    of the extreme value. `argmax`/`argmin` give `int64` indices; with
//!    `axis = None` the index is into the row-major flattened tensor.

use super::alloc;
use super::args::{check_arity, norm_axes, norm_axis, tensor_arg, tensor_value, value_of, view};
use super::dispatch::{with_any, with_num, Num, Scalar};
use super::{Kernel, KernelAttrs};
use crate::tensor::Element;
use crate::value::Value;
use ndarray::{ArrayD, ArrayViewD, IxDyn};

/// The reduction kernels.
pub const KERNELS: &[(&str, Kernel)] = &[
    ("relax.sum", sum),
    ("relax.mean", mean),
    ("relax.max", max),
    ("relax.min", min),
    ("relax.prod", prod),
    ("relax.argmax", argmax),
    ("relax.argmin", argmin),
];

/// `x`'s elements with the kept axes first and `axes` last (in the given
/// order), row-major in that order, with the permutation used, the number
/// of lanes and the lane length.
fn lanes<T: Copy>(
    x: &ArrayViewD<'_, T>,
    axes: &[usize],
) -> Result<(Vec<T>, Vec<usize>, usize, usize), String> {
    let kept: Vec<usize> = (0..x.ndim()).filter(|a| !axes.contains(a)).collect();
    let perm: Vec<usize> = kept.iter().chain(axes).copied().collect();
    let data = alloc::collect(
        x.len(),
        x.view().permuted_axes(IxDyn(&perm)).iter().copied(),
    )?;
    let outer = kept.iter().map(|&a| x.shape()[a]).product();
    let inner = axes.iter().map(|&a| x.shape()[a]).product();
    Ok((data, perm, outer, inner))
}

/// Reduces each lane of `x` over `axes` (normalized, distinct) with `f`.
/// The result has the kept dims, and a 1 for each reduced dim if
/// `keepdims`.
pub(crate) fn reduce_lanes<T: Copy, R>(
    x: &ArrayViewD<'_, T>,
    axes: &[usize],
    keepdims: bool,
    mut f: impl FnMut(&[T]) -> Result<R, String>,
) -> Result<(Vec<usize>, Vec<R>), String> {
    let (data, _, outer, inner) = lanes(x, axes)?;
    let out = alloc::try_collect(
        outer,
        (0..outer).map(|i| f(&data[i * inner..(i + 1) * inner])),
    )?;
    let shape = (0..x.ndim())
        .filter_map(|a| match (axes.contains(&a), keepdims) {
            (false, _) => Some(x.shape()[a]),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect();
    Ok((shape, out))
}

/// Maps each lane of `x` over `axes` (normalized, distinct; the lane is
/// row-major over `axes` in the given order) to a lane of the same length
/// with `f`, and returns the result in `x`'s shape.
pub(crate) fn map_lanes<T: Copy, R: Element>(
    x: &ArrayViewD<'_, T>,
    axes: &[usize],
    mut f: impl FnMut(&[T], &mut Vec<R>) -> Result<(), String>,
) -> Result<Value, String> {
    let (data, perm, outer, inner) = lanes(x, axes)?;
    let mut out: Vec<R> = alloc::vec(data.len())?;
    // Empty lanes map to empty lanes: a (2^31, 0) input costs nothing.
    let outer = if inner == 0 { 0 } else { outer };
    for i in 0..outer {
        let before = out.len();
        f(&data[i * inner..(i + 1) * inner], &mut out)?;
        if out.len() != before + inner {
            return Err("a lane map gave a lane of the wrong length".into());
        }
    }
    let permuted_shape: Vec<usize> = perm.iter().map(|&a| x.shape()[a]).collect();
    let permuted =
        ArrayD::from_shape_vec(IxDyn(&permuted_shape), out).map_err(|e| e.to_string())?;
    let mut inverse = vec![0; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inverse[p] = i;
    }
    value_of(&permuted.permuted_axes(IxDyn(&inverse)))
}

/// The error of an extremum over an empty axis.
fn empty_axis() -> String {
    "reduction over an empty axis".to_string()
}

/// Which reduction.
#[derive(Clone, Copy)]
enum Reduction {
    Sum,
    Mean,
    Max,
    Min,
    Prod,
}

fn reduce_slice<T: Num>(r: Reduction, xs: &[T]) -> Result<T, String> {
    match r {
        Reduction::Sum => Ok(T::sum(xs)),
        Reduction::Prod => Ok(T::prod(xs)),
        Reduction::Mean => T::mean(xs),
        Reduction::Max | Reduction::Min => {
            let (&first, rest) = xs.split_first().ok_or_else(empty_axis)?;
            Ok(rest.iter().fold(first, |a, &b| match r {
                Reduction::Max => a.maximum(b),
                _ => a.minimum(b),
            }))
        }
    }
}

fn reduction(r: Reduction, args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 1)?;
    let x = tensor_arg(args, 0, "x")?;
    let keepdims = attrs.bool_or("keepdims", false)?;
    let axes = match attrs.opt_ints("axis")? {
        Some(a) => norm_axes(&a, x.ndim())?,
        None => (0..x.ndim()).collect(),
    };
    if x.dtype().is_bool() && matches!(r, Reduction::Max | Reduction::Min) {
        // `max` of bools is any, `min` all (false < true).
        let v = view::<bool>(x)?;
        let (shape, data) = reduce_lanes(&v, &axes, keepdims, |lane| {
            let any = matches!(r, Reduction::Max);
            match lane {
                [] => Err(empty_axis()),
                _ if any => Ok(lane.iter().any(|&b| b)),
                _ => Ok(lane.iter().all(|&b| b)),
            }
        })?;
        return tensor_value(&shape, data);
    }
    with_num!(x.dtype(), T => {
        let v = view::<T>(x)?;
        let (shape, data) = reduce_lanes(&v, &axes, keepdims, |lane| reduce_slice(r, lane))?;
        tensor_value(&shape, data)
    })
}

/// `relax.sum`.
fn sum(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    reduction(Reduction::Sum, args, attrs)
}

/// `relax.mean`.
fn mean(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    reduction(Reduction::Mean, args, attrs)
}

/// `relax.max`.
fn max(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    reduction(Reduction::Max, args, attrs)
}

/// `relax.min`.
fn min(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    reduction(Reduction::Min, args, attrs)
}

/// `relax.prod`.
fn prod(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    reduction(Reduction::Prod, args, attrs)
}

/// The index of the first element `better` than all before it, NaN
/// counting as better than any number (so the first NaN wins).
fn arg_extreme<T: Scalar>(xs: &[T], better: fn(T, T) -> bool) -> Option<i64> {
    let mut best = 0;
    let first = *xs.first()?;
    let mut best_v = first;
    for (i, &v) in xs.iter().enumerate().skip(1) {
        if best_v.is_nan() {
            break;
        }
        if v.is_nan() || better(v, best_v) {
            best = i;
            best_v = v;
        }
    }
    Some(best as i64)
}

fn arg_reduction(want_max: bool, args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 1)?;
    let x = tensor_arg(args, 0, "x")?;
    let keepdims = attrs.bool_or("keepdims", false)?;
    let axes = match attrs.opt_int("axis")? {
        Some(a) => vec![norm_axis(a, x.ndim())?],
        None => (0..x.ndim()).collect(),
    };
    with_any!(x.dtype(), T => {
        let v = view::<T>(x)?;
        let cmp: fn(T, T) -> bool = if want_max { greater::<T> } else { less::<T> };
        let (shape, data) = reduce_lanes(&v, &axes, keepdims, |lane| {
            arg_extreme(lane, cmp).ok_or_else(empty_axis)
        })?;
        tensor_value(&shape, data)
    })
}

/// `a > b`.
fn greater<T: PartialOrd>(a: T, b: T) -> bool {
    a > b
}

/// `a < b`.
fn less<T: PartialOrd>(a: T, b: T) -> bool {
    a < b
}

/// `relax.argmax`.
fn argmax(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    arg_reduction(true, args, attrs)
}

/// `relax.argmin`.
fn argmin(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    arg_reduction(false, args, attrs)
}

#[cfg(test)]
mod tests {
    use crate::executable::KernelAttr;
    use crate::kernels::testing::*;
    use crate::value::Value;
    use std::slice::from_ref;

    fn axis(a: &[i64]) -> (&'static str, KernelAttr) {
        ("axis", ints(a))
    }
    const KEEP: (&str, KernelAttr) = ("keepdims", KernelAttr::Bool(true));

    /// x[i, j, k] = 100 i + 10 j + k, shape (2, 3, 4).
    fn x234() -> Value {
        let mut v = Vec::new();
        for i in 0..2 {
            for j in 0..3 {
                for k in 0..4 {
                    v.push((100 * i + 10 * j + k) as i64);
                }
            }
        }
        tv(&[2, 3, 4], v)
    }

    #[test]
    fn sum_over_axes() {
        let x = x234();
        // Over j: 3 * (100 i + k) + (0 + 10 + 20).
        let want: Vec<i64> = (0..2)
            .flat_map(|i| (0..4).map(move |k| 3 * (100 * i + k) + 30))
            .collect();
        let out = run("relax.sum", from_ref(&x), &[axis(&[1])]).unwrap();
        assert_tensor(&out, &[2, 4], &want);
        let out = run("relax.sum", from_ref(&x), &[axis(&[-2]), KEEP]).unwrap();
        assert_tensor(&out, &[2, 1, 4], &want);
        // Over (k, i) in that order: the same as over (i, k).
        let want: Vec<i64> = (0..3).map(|j| 4 * 100 + 8 * 10 * j + 2 * 6).collect();
        let out = run("relax.sum", from_ref(&x), &[axis(&[-1, 0])]).unwrap();
        assert_tensor(&out, &[3], &want);
        let all: i64 = (0..2)
            .flat_map(|i| (0..3).flat_map(move |j| (0..4).map(move |k| 100 * i + 10 * j + k)))
            .sum();
        let out = run("relax.sum", from_ref(&x), &[("axis", KernelAttr::None)]).unwrap();
        assert_tensor(&out, &[], &[all]);
        let out = run("relax.sum", &[x], &[KEEP]).unwrap();
        assert_tensor(&out, &[1, 1, 1], &[all]);
    }

    #[test]
    fn mean_max_min_prod() {
        let x = tv(&[2, 3], vec![1.0f32, -2.0, 4.0, 0.5, 8.0, 3.0]);
        let mean = run("relax.mean", from_ref(&x), &[axis(&[1])]).unwrap();
        assert_close_f32(&mean, &[2], &[1.0, 11.5 / 3.0]);
        let max = run("relax.max", from_ref(&x), &[axis(&[0])]).unwrap();
        assert_tensor(&max, &[3], &[1.0f32, 8.0, 4.0]);
        let min = run("relax.min", from_ref(&x), &[axis(&[-1]), KEEP]).unwrap();
        assert_tensor(&min, &[2, 1], &[-2.0f32, 0.5]);
        let prod = run("relax.prod", from_ref(&x), &[]).unwrap();
        assert_tensor(&prod, &[], &[-96.0f32]);
        let imean = run("relax.mean", &[tv(&[3], vec![1i32, 2, 4])], &[]).unwrap();
        assert_tensor(&imean, &[], &[2i32]);
        let imean = run("relax.mean", &[tv(&[2], vec![-3i32, 0])], &[]).unwrap();
        assert_tensor(&imean, &[], &[-1i32]);
        let umax = run("relax.max", &[tv(&[3], vec![3u64, u64::MAX, 0])], &[]).unwrap();
        assert_tensor(&umax, &[], &[u64::MAX]);
        let wrap = run("relax.prod", &[tv(&[2], vec![16u8, 17])], &[]).unwrap();
        assert_tensor(&wrap, &[], &[16u8]);
        let b = tv(&[2, 2], vec![true, false, false, false]);
        let any = run("relax.max", from_ref(&b), &[axis(&[1])]).unwrap();
        assert_tensor(&any, &[2], &[true, false]);
        let all = run("relax.min", from_ref(&b), &[axis(&[0])]).unwrap();
        assert_tensor(&all, &[2], &[false, false]);
        assert!(run("relax.sum", from_ref(&b), &[]).is_err());
        let nan = run("relax.max", &[tv(&[3], vec![1.0f64, f64::NAN, 2.0])], &[]).unwrap();
        assert!(nan.as_tensor().unwrap().to_vec::<f64>().unwrap()[0].is_nan());
    }

    #[test]
    fn empty_reductions() {
        let e = tv(&[0, 3], Vec::<f32>::new());
        assert_tensor(
            &run("relax.sum", from_ref(&e), &[axis(&[0])]).unwrap(),
            &[3],
            &[0.0f32; 3],
        );
        assert_tensor(
            &run("relax.prod", from_ref(&e), &[]).unwrap(),
            &[],
            &[1.0f32],
        );
        // Reducing the non-empty axis of an empty tensor gives an empty result.
        assert_tensor::<f32>(
            &run("relax.max", from_ref(&e), &[axis(&[1])]).unwrap(),
            &[0],
            &[],
        );
        assert_eq!(
            run("relax.max", from_ref(&e), &[axis(&[0])]).unwrap_err(),
            "reduction over an empty axis"
        );
        assert_eq!(
            run("relax.argmin", from_ref(&e), &[]).unwrap_err(),
            "reduction over an empty axis"
        );
        let m = run("relax.mean", &[e], &[axis(&[0])]).unwrap();
        assert_close(&m, &[3], &[f64::NAN; 3], 0.0);
        assert!(run("relax.mean", &[tv(&[0], Vec::<i64>::new())], &[]).is_err());
        assert_tensor(
            &run("relax.sum", &[tv(&[0], Vec::<i64>::new())], &[]).unwrap(),
            &[],
            &[0i64],
        );
    }

    #[test]
    fn reduction_errors() {
        let x = x234();
        assert_eq!(
            run("relax.sum", from_ref(&x), &[axis(&[3])]).unwrap_err(),
            "axis 3 is out of range for a tensor of rank 3"
        );
        assert_eq!(
            run("relax.sum", from_ref(&x), &[axis(&[1, -2])]).unwrap_err(),
            "axis 1 appears more than once"
        );
        assert_eq!(
            run("relax.prod", &[tv(&[1], vec![true])], &[]).unwrap_err(),
            "dtype bool is not supported by this kernel"
        );
        assert_eq!(
            run("relax.sum", &[], &[]).unwrap_err(),
            "expected 1 argument(s), found 0"
        );
        assert!(run("relax.sum", &[Value::shape(&[2])], &[]).is_err());
        assert!(run(
            "relax.sum",
            &[x],
            &[("keepdims", KernelAttr::Str("yes".into()))]
        )
        .is_err());
    }

    #[test]
    fn argmax_and_argmin() {
        let x = tv(&[2, 3], vec![1.0f32, 5.0, 5.0, 7.0, -1.0, 7.0]);
        let am = run(
            "relax.argmax",
            from_ref(&x),
            &[("axis", KernelAttr::Int(1))],
        )
        .unwrap();
        // Ties give the first occurrence.
        assert_tensor(&am, &[2], &[1i64, 0]);
        let am = run("relax.argmax", from_ref(&x), &[]).unwrap();
        assert_tensor(&am, &[], &[3i64]);
        let am = run(
            "relax.argmin",
            from_ref(&x),
            &[("axis", KernelAttr::Int(-2)), KEEP],
        )
        .unwrap();
        assert_tensor(&am, &[1, 3], &[0i64, 1, 0]);
        let am = run("relax.argmin", from_ref(&x), &[KEEP]).unwrap();
        assert_tensor(&am, &[1, 1], &[4i64]);
        let n = tv(&[4], vec![1.0f64, f64::NAN, 9.0, f64::NAN]);
        assert_tensor(
            &run("relax.argmax", from_ref(&n), &[]).unwrap(),
            &[],
            &[1i64],
        );
        assert_tensor(&run("relax.argmin", &[n], &[]).unwrap(), &[], &[1i64]);
        let i = tv(&[3], vec![-5i8, 3, -5]);
        assert_tensor(&run("relax.argmin", &[i], &[]).unwrap(), &[], &[0i64]);
        assert_eq!(
            run("relax.argmax", &[x], &[("axis", KernelAttr::Int(2))]).unwrap_err(),
            "axis 2 is out of range for a tensor of rank 2"
        );
        let s = tv(&[], vec![4u32]);
        assert_tensor(&run("relax.argmax", &[s], &[]).unwrap(), &[], &[0i64]);
    }
}
