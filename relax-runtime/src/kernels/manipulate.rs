//! Shape manipulation: `permute_dims`, `reshape`, `flatten`, `expand_dims`,
//! `squeeze`, `concat`, `split`, `broadcast_to`, `shape_of`, and the
//! conversions `shape_to_tensor` (a shape value as a 1-d `int64` tensor)
//! and `tensor_to_shape` (a 1-d integer tensor as a shape value; a negative
//! element is an error, as no dim is negative).
//!
//! 1. Ops that keep the row-major element order (`reshape`, `flatten`,
//!    `expand_dims`, `squeeze`) only relabel the shape: the result shares no
//!    state with the input but is a byte copy under the new shape, so they
//!    work for every dtype without dispatch.
//! 2. Ops that reorder elements are written once, generic over the element
//!    type, on ndarray views (`permuted_axes`, `concatenate`, `slice_axis`,
//!    `broadcast`), and dispatched over every dtype with a Rust element type.
//! 3. Every attribute is checked against the actual input (rank, axes,
//!    divisibility) before ndarray is asked to do anything that could panic.

use super::alloc;
use super::args::{
    check_arity, checked_numel, norm_axes, norm_axis, reshaped, shape_arg, tensor_arg, udims,
    value_of, view,
};
use super::dispatch::with_any;
use super::{Kernel, KernelAttrs};
use crate::executable::KernelAttr;
use crate::tensor::{fmt_shape, Element, Tensor};
use crate::value::Value;
use ndarray::{Axis, IxDyn, Slice};

/// The manipulation kernels.
pub const KERNELS: &[(&str, Kernel)] = &[
    ("relax.permute_dims", permute_dims),
    ("relax.reshape", reshape),
    ("relax.flatten", flatten),
    ("relax.expand_dims", expand_dims),
    ("relax.squeeze", squeeze),
    ("relax.concat", concat),
    ("relax.split", split),
    ("relax.broadcast_to", broadcast_to),
    ("relax.shape_of", shape_of),
    ("relax.shape_to_tensor", shape_to_tensor),
    ("relax.tensor_to_shape", tensor_to_shape),
];

/// `relax.permute_dims(x, axes)`: `axes` `None` reverses the dims.
fn permute_dims(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 1)?;
    let x = tensor_arg(args, 0, "x")?;
    let perm = match attrs.opt_ints("axes")? {
        None => (0..x.ndim()).rev().collect(),
        Some(axes) => {
            if axes.len() != x.ndim() {
                return Err(format!(
                    "axes has {} entries, but x has rank {}",
                    axes.len(),
                    x.ndim()
                ));
            }
            norm_axes(&axes, x.ndim())?
        }
    };
    fn run<T: Element>(x: &Tensor, perm: &[usize]) -> Result<Value, String> {
        value_of(&view::<T>(x)?.permuted_axes(IxDyn(perm)))
    }
    with_any!(x.dtype(), T => run::<T>(x, &perm))
}

/// `relax.reshape(x, shape)`: one dim of `shape` may be `-1`, inferred from
/// the element count.
fn reshape(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 2)?;
    let x = tensor_arg(args, 0, "x")?;
    let target = shape_arg(args, 1, "shape")?;
    let wild: Vec<usize> = (0..target.len()).filter(|&i| target[i] == -1).collect();
    if wild.len() > 1 {
        return Err(format!(
            "at most one dimension may be -1, found {}",
            fmt_shape(target)
        ));
    }
    if let Some(bad) = target.iter().find(|&&d| d < -1) {
        return Err(format!(
            "dimension {bad} of the new shape {} is negative",
            fmt_shape(target)
        ));
    }
    let total = x.numel();
    let mut dims = target.to_vec();
    if let [w] = wild[..] {
        dims[w] = 1;
        let known = checked_numel(&dims)?;
        if known == 0 || total % known != 0 {
            return Err(format!(
                "cannot reshape x of shape {} ({total} elements) into {}",
                fmt_shape(x.shape()),
                fmt_shape(target)
            ));
        }
        dims[w] = (total / known) as i64;
    } else {
        let count = checked_numel(&dims)?;
        if count != total {
            return Err(format!(
                "cannot reshape x of shape {} ({total} elements) into {} ({count} elements)",
                fmt_shape(x.shape()),
                fmt_shape(target)
            ));
        }
    }
    reshaped(x, &dims).map(Value::Tensor)
}

/// `relax.flatten(x)`: the elements as a 1-D tensor (a scalar gives `(1,)`).
fn flatten(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 1)?;
    let x = tensor_arg(args, 0, "x")?;
    reshaped(x, &[x.numel() as i64]).map(Value::Tensor)
}

/// `relax.expand_dims(x, axis)`: `axis` lists positions of new size-1 dims in
/// the result.
fn expand_dims(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 1)?;
    let x = tensor_arg(args, 0, "x")?;
    let axes = attrs.ints("axis")?;
    let ndim = x.ndim() + axes.len();
    let axes = norm_axes(&axes, ndim)?;
    let mut old = x.shape().iter();
    let dims: Vec<i64> = (0..ndim)
        .map(|i| {
            if axes.contains(&i) {
                1
            } else {
                // `ndim - axes.len()` positions remain, exactly x's dims.
                old.next().copied().unwrap_or(1)
            }
        })
        .collect();
    reshaped(x, &dims).map(Value::Tensor)
}

/// `relax.squeeze(x, axis)`: `axis` `None` removes every dim of size 1;
/// otherwise the named dims, each of which must be 1.
fn squeeze(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 1)?;
    let x = tensor_arg(args, 0, "x")?;
    let s = x.shape();
    let dims: Vec<i64> = match attrs.opt_ints("axis")? {
        None => s.iter().copied().filter(|&d| d != 1).collect(),
        Some(axes) => {
            let axes = norm_axes(&axes, x.ndim())?;
            if let Some(&a) = axes.iter().find(|&&a| s[a] != 1) {
                return Err(format!(
                    "dimension {a} of x is {}, not 1: x is {}",
                    s[a],
                    fmt_shape(s)
                ));
            }
            (0..s.len())
                .filter(|i| !axes.contains(i))
                .map(|i| s[i])
                .collect()
        }
    };
    reshaped(x, &dims).map(Value::Tensor)
}

/// `relax.concat(tensors, axis)`: the tensors (a tuple) joined along `axis`.
fn concat(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 1)?;
    let fields = match &args[0] {
        Value::Tuple(f) => f,
        other => {
            return Err(format!(
                "tensors must be a tuple of tensors, found {}",
                other.describe()
            ))
        }
    };
    let ts: Vec<&Tensor> = fields
        .iter()
        .enumerate()
        .map(|(i, f)| {
            f.as_tensor().ok_or_else(|| {
                format!(
                    "field {i} of tensors must be a tensor, found {}",
                    f.describe()
                )
            })
        })
        .collect::<Result<_, _>>()?;
    let Some(first) = ts.first() else {
        return Err("needs at least one tensor".into());
    };
    let axis = norm_axis(attrs.int("axis")?, first.ndim())?;
    for t in &ts[1..] {
        if t.dtype() != first.dtype() {
            return Err(format!(
                "dtypes differ: {} and {}",
                first.dtype(),
                t.dtype()
            ));
        }
        let same_outside = t.ndim() == first.ndim()
            && (0..t.ndim()).all(|i| i == axis || t.shape()[i] == first.shape()[i]);
        if !same_outside {
            return Err(format!(
                "shapes differ outside axis {axis}: {} and {}",
                fmt_shape(first.shape()),
                fmt_shape(t.shape())
            ));
        }
    }
    fn run<T: Element>(ts: &[&Tensor], axis: usize) -> Result<Value, String> {
        let first = ts[0].shape();
        let prod = |d: &[i64]| d.iter().map(|&v| v as usize).product::<usize>();
        let (outer, inner) = (prod(&first[..axis]), prod(&first[axis + 1..]));
        let mut out_shape = first.to_vec();
        out_shape[axis] = ts
            .iter()
            .try_fold(0i64, |n, t| n.checked_add(t.shape()[axis]))
            .ok_or("the concatenated axis is too long")?;
        let n = checked_numel(&out_shape)?;
        let mut out = alloc::vec(n)?;
        if n > 0 {
            // Each outer row is the parts' rows one after another.
            for o in 0..outer {
                for t in ts {
                    let row = t.shape()[axis] as usize * inner;
                    let data = t.as_slice::<T>().map_err(|e| e.to_string())?;
                    out.extend_from_slice(&data[o * row..(o + 1) * row]);
                }
            }
        }
        alloc::tensor(&out_shape, &out).map(Value::Tensor)
    }
    with_any!(first.dtype(), T => run::<T>(&ts, axis))
}

/// `relax.split(x, indices_or_sections, axis)`: an integer `n` cuts `axis`
/// into `n` equal pieces (it must divide the dim); a list of increasing
/// indices cuts before each index (clamped to the dim). Returns a tuple.
fn split(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 1)?;
    let x = tensor_arg(args, 0, "x")?;
    let axis = norm_axis(attrs.int("axis")?, x.ndim())?;
    let dim = x.shape()[axis];
    let bounds: Vec<(i64, i64)> = match attrs.get("indices_or_sections") {
        Some(KernelAttr::Int(n)) => {
            let n = *n;
            if n <= 0 {
                return Err(format!(
                    "the number of sections must be positive, found {n}"
                ));
            }
            if dim % n != 0 {
                return Err(format!(
                    "dimension {axis} of x is {dim}, not divisible into {n} sections"
                ));
            }
            let len = dim / n;
            alloc::collect(n as usize, (0..n).map(|i| (i * len, (i + 1) * len)))?
        }
        Some(KernelAttr::Array(_)) => {
            let idx = attrs.ints("indices_or_sections")?;
            if idx.windows(2).any(|w| w[0] > w[1]) || idx.iter().any(|&i| i < 0) {
                return Err(format!(
                    "split indices must be non-negative and increasing, found {idx:?}"
                ));
            }
            let mut cuts = vec![0];
            cuts.extend(idx.iter().map(|&i| i.min(dim)));
            cuts.push(dim);
            cuts.windows(2).map(|w| (w[0], w[1])).collect()
        }
        other => {
            return Err(format!(
                "attribute `indices_or_sections` must be an integer or a list of integers, found {other:?}"
            ))
        }
    };
    fn run<T: Element>(x: &Tensor, axis: usize, bounds: &[(i64, i64)]) -> Result<Value, String> {
        let v = view::<T>(x)?;
        let parts = alloc::try_collect(
            bounds.len(),
            bounds.iter().map(|&(a, b)| {
                value_of(&v.slice_axis(Axis(axis), Slice::from(a as isize..b as isize)))
            }),
        )?;
        Ok(Value::tuple(parts))
    }
    with_any!(x.dtype(), T => run::<T>(x, axis, &bounds))
}

/// `relax.broadcast_to(x, shape)`: NumPy broadcasting to exactly `shape`.
fn broadcast_to(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 2)?;
    let x = tensor_arg(args, 0, "x")?;
    let target = shape_arg(args, 1, "shape")?;
    checked_numel(target)?;
    let s = x.shape();
    let fits = s.len() <= target.len()
        && s.iter()
            .zip(&target[target.len() - s.len()..])
            .all(|(&d, &t)| d == 1 || d == t);
    if !fits {
        return Err(format!(
            "cannot broadcast x of shape {} to {}",
            fmt_shape(s),
            fmt_shape(target)
        ));
    }
    fn run<T: Element>(x: &Tensor, target: &[i64]) -> Result<Value, String> {
        let v = view::<T>(x)?;
        let b = v
            .broadcast(IxDyn(&udims(target)))
            .ok_or_else(|| format!("cannot broadcast x to {}", fmt_shape(target)))?;
        value_of(&b)
    }
    with_any!(x.dtype(), T => run::<T>(x, target))
}

/// `relax.shape_of(x)`: x's shape as a shape value.
fn shape_of(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 1)?;
    Ok(Value::shape(tensor_arg(args, 0, "x")?.shape()))
}

/// `relax.shape_to_tensor(shape)`: the dims as a 1-d `int64` tensor.
fn shape_to_tensor(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 1)?;
    let dims = shape_arg(args, 0, "shape")?;
    alloc::tensor(&[dims.len() as i64], dims).map(Value::Tensor)
}

/// `relax.tensor_to_shape(x)`: a 1-d integer tensor's elements as a shape.
fn tensor_to_shape(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 1)?;
    let x = tensor_arg(args, 0, "x")?;
    if x.ndim() != 1 || !x.dtype().is_integer() {
        return Err(format!(
            "x must be a 1-d integer tensor, found a {} tensor of shape {}",
            x.dtype(),
            fmt_shape(x.shape())
        ));
    }
    let dims: Vec<i64> = x.to_f64_vec().into_iter().map(|v| v as i64).collect();
    if let Some(d) = dims.iter().find(|&&d| d < 0) {
        return Err(format!(
            "x holds {d}, which is not a dim (the shape {})",
            fmt_shape(&dims)
        ));
    }
    Ok(Value::shape(&dims))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::testing::{assert_ok, attrs, ints, iota, tv};

    fn tensor(v: Value) -> Tensor {
        v.as_tensor().unwrap().clone()
    }

    #[test]
    fn shape_to_tensor_and_back() {
        let no = attrs(&[]);
        let t = shape_to_tensor(&[Value::shape(&[2, 0, 5])], &no).unwrap();
        assert_eq!(
            t.as_tensor().unwrap().to_vec::<i64>().unwrap(),
            vec![2, 0, 5]
        );
        assert_eq!(
            tensor_to_shape(&[t], &no).unwrap(),
            Value::shape(&[2, 0, 5])
        );
        let i32s = Value::Tensor(Tensor::from_vec(&[2], vec![3i32, 4]).unwrap());
        assert_eq!(
            tensor_to_shape(&[i32s], &no).unwrap(),
            Value::shape(&[3, 4])
        );
        let neg = Value::Tensor(Tensor::from_vec(&[2], vec![3i64, -1]).unwrap());
        assert!(tensor_to_shape(&[neg], &no).unwrap_err().contains("-1"));
        let float = Value::Tensor(Tensor::from_vec(&[1], vec![3.0f32]).unwrap());
        assert!(tensor_to_shape(&[float], &no).is_err());
        assert!(shape_to_tensor(&[Value::Int(1)], &no).is_err());
    }

    #[test]
    fn permute_dims_reverses_or_follows_axes() {
        let x = iota(&[2, 3]);
        let none = attrs(&[("axes", KernelAttr::None)]);
        assert_ok(
            permute_dims(std::slice::from_ref(&x), &none),
            &[3, 2],
            vec![0, 3, 1, 4, 2, 5],
        );
        let x3 = iota(&[2, 1, 3]);
        assert_ok(
            permute_dims(
                std::slice::from_ref(&x3),
                &attrs(&[("axes", ints(&[-1, 0, 1]))]),
            ),
            &[3, 2, 1],
            vec![0, 3, 1, 4, 2, 5],
        );
        let b = tv(&[2, 2], vec![true, false, false, false]);
        assert_ok(
            permute_dims(&[b], &none),
            &[2, 2],
            vec![true, false, false, false],
        );
        let u = tv(&[1, 3], vec![1u64, 2, 3]);
        assert_ok(permute_dims(&[u], &none), &[3, 1], vec![1u64, 2, 3]);
        assert_eq!(
            permute_dims(std::slice::from_ref(&x), &attrs(&[("axes", ints(&[0, 0]))])).unwrap_err(),
            "axis 0 appears more than once"
        );
        assert_eq!(
            permute_dims(std::slice::from_ref(&x), &attrs(&[("axes", ints(&[0]))])).unwrap_err(),
            "axes has 1 entries, but x has rank 2"
        );
        assert!(permute_dims(&[x], &attrs(&[("axes", ints(&[0, 2]))])).is_err());
    }

    #[test]
    fn reshape_with_and_without_wildcard() {
        let x = iota(&[2, 3]);
        assert_ok(
            reshape(&[x.clone(), Value::shape(&[3, 2])], &KernelAttrs::default()),
            &[3, 2],
            (0..6).collect::<Vec<i32>>(),
        );
        assert_ok(
            reshape(
                &[x.clone(), Value::shape(&[-1, 1, 2])],
                &KernelAttrs::default(),
            ),
            &[3, 1, 2],
            (0..6).collect::<Vec<i32>>(),
        );
        let empty = tv::<f32>(&[0, 4], vec![]);
        assert_ok(
            reshape(
                &[empty.clone(), Value::shape(&[2, 0, 3])],
                &KernelAttrs::default(),
            ),
            &[2, 0, 3],
            Vec::<f32>::new(),
        );
        assert_ok(
            reshape(
                &[empty.clone(), Value::shape(&[-1, 2])],
                &KernelAttrs::default(),
            ),
            &[0, 2],
            Vec::<f32>::new(),
        );
        let no = KernelAttrs::default();
        assert_eq!(
            reshape(&[x.clone(), Value::shape(&[4, 2])], &no).unwrap_err(),
            "cannot reshape x of shape (2, 3) (6 elements) into (4, 2) (8 elements)"
        );
        assert_eq!(
            reshape(&[x.clone(), Value::shape(&[4, -1])], &no).unwrap_err(),
            "cannot reshape x of shape (2, 3) (6 elements) into (4, -1)"
        );
        assert!(reshape(&[x.clone(), Value::shape(&[-1, -1])], &no).is_err());
        assert!(reshape(&[x.clone(), Value::shape(&[-2, -3])], &no).is_err());
        assert!(reshape(&[empty, Value::shape(&[0, -1])], &no).is_err());
        assert_eq!(
            reshape(&[x.clone(), x], &no).unwrap_err(),
            "shape must be a shape, found an int32 tensor of shape (2, 3)"
        );
    }

    #[test]
    fn flatten_expand_squeeze() {
        let no = KernelAttrs::default();
        assert_ok(flatten(&[iota(&[2, 2])], &no), &[4], vec![0, 1, 2, 3]);
        let s = Value::Tensor(Tensor::scalar(7i8));
        assert_ok(flatten(&[s], &no), &[1], vec![7i8]);
        let x = iota(&[2, 3]);
        assert_ok(
            expand_dims(
                std::slice::from_ref(&x),
                &attrs(&[("axis", ints(&[0, -1]))]),
            ),
            &[1, 2, 3, 1],
            (0..6).collect::<Vec<i32>>(),
        );
        assert_ok(
            expand_dims(
                std::slice::from_ref(&x),
                &attrs(&[("axis", KernelAttr::Int(1))]),
            ),
            &[2, 1, 3],
            (0..6).collect::<Vec<i32>>(),
        );
        assert!(expand_dims(std::slice::from_ref(&x), &attrs(&[("axis", ints(&[4]))])).is_err());
        assert!(expand_dims(
            std::slice::from_ref(&x),
            &attrs(&[("axis", ints(&[0, -4]))])
        )
        .is_err());
        let y = iota(&[1, 3, 1]);
        assert_ok(
            squeeze(
                std::slice::from_ref(&y),
                &attrs(&[("axis", KernelAttr::None)]),
            ),
            &[3],
            vec![0, 1, 2],
        );
        assert_ok(
            squeeze(std::slice::from_ref(&y), &attrs(&[("axis", ints(&[-1]))])),
            &[1, 3],
            vec![0, 1, 2],
        );
        assert_eq!(
            squeeze(&[y], &attrs(&[("axis", ints(&[1]))])).unwrap_err(),
            "dimension 1 of x is 3, not 1: x is (1, 3, 1)"
        );
        let e = tv::<f64>(&[1, 0], vec![]);
        assert_ok(
            squeeze(&[e], &attrs(&[("axis", KernelAttr::None)])),
            &[0],
            Vec::<f64>::new(),
        );
    }

    #[test]
    fn concat_along_axes_with_empty_pieces() {
        let a = iota(&[2, 2]);
        let b = tv(&[2, 1], vec![10i32, 11]);
        let tup = Value::tuple(vec![a.clone(), b.clone()]);
        assert_ok(
            concat(&[tup], &attrs(&[("axis", KernelAttr::Int(-1))])),
            &[2, 3],
            vec![0, 1, 10, 2, 3, 11],
        );
        let e = tv::<i32>(&[0, 2], vec![]);
        let tup = Value::tuple(vec![e.clone(), a.clone(), e]);
        assert_ok(
            concat(&[tup], &attrs(&[("axis", KernelAttr::Int(0))])),
            &[2, 2],
            vec![0, 1, 2, 3],
        );
        let bools = Value::tuple(vec![tv(&[1], vec![true]), tv(&[2], vec![false, true])]);
        assert_ok(
            concat(&[bools], &attrs(&[("axis", KernelAttr::Int(0))])),
            &[3],
            vec![true, false, true],
        );
        let axis0 = attrs(&[("axis", KernelAttr::Int(0))]);
        assert_eq!(
            concat(&[Value::tuple(vec![a.clone(), b.clone()])], &axis0).unwrap_err(),
            "shapes differ outside axis 0: (2, 2) and (2, 1)"
        );
        let f = tv(&[1, 2], vec![1.0f32, 2.0]);
        assert_eq!(
            concat(&[Value::tuple(vec![a.clone(), f])], &axis0).unwrap_err(),
            "dtypes differ: int32 and float32"
        );
        assert_eq!(
            concat(&[Value::tuple(vec![])], &axis0).unwrap_err(),
            "needs at least one tensor"
        );
        assert!(concat(std::slice::from_ref(&a), &axis0).is_err());
        assert!(concat(&[Value::tuple(vec![a.clone(), Value::Int(1)])], &axis0).is_err());
        let rank1 = tv(&[2], vec![0i32, 1]);
        assert!(concat(&[Value::tuple(vec![a.clone(), rank1])], &axis0).is_err());
        let scalar = Value::Tensor(Tensor::scalar(1i32));
        assert!(concat(&[Value::tuple(vec![scalar])], &axis0).is_err());
    }

    fn fields(v: Value) -> Vec<Tensor> {
        v.as_tuple()
            .unwrap()
            .iter()
            .map(|f| tensor(f.clone()))
            .collect()
    }

    #[test]
    fn split_by_sections_and_indices() {
        let x = iota(&[6, 2]);
        let parts = fields(
            split(
                std::slice::from_ref(&x),
                &attrs(&[
                    ("indices_or_sections", KernelAttr::Int(3)),
                    ("axis", KernelAttr::Int(0)),
                ]),
            )
            .unwrap(),
        );
        assert_eq!(parts.len(), 3);
        assert_eq!(parts[1].shape(), &[2, 2]);
        assert_eq!(parts[1].to_vec::<i32>().unwrap(), vec![4, 5, 6, 7]);
        let y = iota(&[2, 5]);
        let parts = fields(
            split(
                std::slice::from_ref(&y),
                &attrs(&[
                    ("indices_or_sections", ints(&[1, 3, 9])),
                    ("axis", KernelAttr::Int(-1)),
                ]),
            )
            .unwrap(),
        );
        let shapes: Vec<&[i64]> = parts.iter().map(|p| p.shape()).collect();
        assert_eq!(shapes, vec![&[2, 1][..], &[2, 2], &[2, 2], &[2, 0]]);
        assert_eq!(parts[0].to_vec::<i32>().unwrap(), vec![0, 5]);
        assert_eq!(parts[1].to_vec::<i32>().unwrap(), vec![1, 2, 6, 7]);
        assert_eq!(parts[2].to_vec::<i32>().unwrap(), vec![3, 4, 8, 9]);
        let split_x = |spec: KernelAttr| {
            split(
                std::slice::from_ref(&x),
                &attrs(&[("indices_or_sections", spec), ("axis", KernelAttr::Int(0))]),
            )
        };
        assert_eq!(
            split_x(KernelAttr::Int(4)).unwrap_err(),
            "dimension 0 of x is 6, not divisible into 4 sections"
        );
        assert!(split_x(KernelAttr::Int(0)).is_err());
        assert!(split_x(ints(&[3, 1])).is_err());
        assert!(split_x(ints(&[-1])).is_err());
        assert!(split_x(KernelAttr::None).is_err());
        // An empty axis splits into empty pieces.
        let e = tv::<f32>(&[0, 3], vec![]);
        let parts = fields(
            split(
                &[e],
                &attrs(&[
                    ("indices_or_sections", KernelAttr::Int(2)),
                    ("axis", KernelAttr::Int(0)),
                ]),
            )
            .unwrap(),
        );
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].shape(), &[0, 3]);
    }

    #[test]
    fn broadcast_to_and_shape_of() {
        let x = tv(&[2, 1], vec![1.0f32, 2.0]);
        let no = KernelAttrs::default();
        assert_ok(
            broadcast_to(&[x.clone(), Value::shape(&[2, 2, 3])], &no),
            &[2, 2, 3],
            vec![
                1.0f32, 1.0, 1.0, 2.0, 2.0, 2.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0,
            ],
        );
        assert_ok(
            broadcast_to(&[x.clone(), Value::shape(&[2, 0])], &no),
            &[2, 0],
            Vec::<f32>::new(),
        );
        assert_eq!(
            broadcast_to(&[x.clone(), Value::shape(&[3, 3])], &no).unwrap_err(),
            "cannot broadcast x of shape (2, 1) to (3, 3)"
        );
        assert!(broadcast_to(&[x.clone(), Value::shape(&[1])], &no).is_err());
        assert!(broadcast_to(&[x.clone(), Value::shape(&[2, -1])], &no).is_err());
        assert_eq!(shape_of(&[x], &no).unwrap(), Value::shape(&[2, 1]));
        assert!(shape_of(&[Value::Int(1)], &no).is_err());
    }
}
