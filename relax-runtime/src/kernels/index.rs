//! Indexing: `take` (gather along an axis) and `strided_slice`.
//!
//! 1. `take` checks every index before reading: TVM's default mode ("fast")
//!    assumes indices are in range, but a reference kernel must never read out
//!    of bounds, so a negative or too-large index is an error.
//! 2. `strided_slice` follows Python slice semantics exactly as the op's shape
//!    inference does (`slice_extent` in `relax_core::op::index`): negative
//!    begin/end count from the end, out-of-range values clamp, a negative
//!    stride walks backwards. Each sliced axis becomes `(first, extent,
//!    stride)` and is applied as an ndarray slice.
//! 3. With `assume_inbound` and stride 1, inference takes the extent to be
//!    `end - begin` without clamping; the kernel checks that the slice really
//!    is in bounds (then both readings agree) and reports it otherwise.

use super::alloc;
use super::args::{check_arity, checked_numel, norm_axes, norm_axis, tensor_arg, value_of, view};
use super::dispatch::{int_values, with_any};
use super::{Kernel, KernelAttrs};
use crate::tensor::{Element, Tensor};
use crate::value::Value;
use ndarray::Slice;

/// The indexing kernels.
pub const KERNELS: &[(&str, Kernel)] =
    &[("relax.take", take), ("relax.strided_slice", strided_slice)];

/// `relax.take(x, indices, axis)`: the entries of `x` at `indices` along
/// `axis` (`None`: of `x` flattened). The result has x's dims with `axis`
/// replaced by the indices' dims.
fn take(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 2)?;
    let x = tensor_arg(args, 0, "x")?;
    let indices = tensor_arg(args, 1, "indices")?;
    let axis = attrs
        .opt_int("axis")?
        .map(|a| norm_axis(a, x.ndim()))
        .transpose()?;
    let (len, out_shape) = match axis {
        None => (x.numel(), indices.shape().to_vec()),
        Some(a) => {
            let s = x.shape();
            let shape = [&s[..a], indices.shape(), &s[a + 1..]].concat();
            (s[a] as usize, shape)
        }
    };
    let values = int_values(indices)?;
    let idx = alloc::try_collect(
        values.len(),
        values.iter().map(|&i| {
            usize::try_from(i).ok().filter(|&u| u < len).ok_or_else(|| {
                format!(
                    "index {i} is out of range for {} of length {len}",
                    match axis {
                        Some(a) => format!("axis {a} of x"),
                        None => "x flattened".to_string(),
                    }
                )
            })
        }),
    )?;
    drop(values);
    // x as (outer, len, inner) blocks around the axis: each index picks one
    // inner block from every outer row.
    let (outer, inner) = match axis {
        None => (1, 1),
        Some(a) => {
            let s = x.shape();
            let prod = |d: &[i64]| d.iter().map(|&v| v as usize).product::<usize>();
            (prod(&s[..a]), prod(&s[a + 1..]))
        }
    };
    fn run<T: Element>(
        x: &Tensor,
        [outer, len, inner]: [usize; 3],
        idx: &[usize],
        out_shape: &[i64],
    ) -> Result<Value, String> {
        let data = x.as_slice::<T>().map_err(|e| e.to_string())?;
        let n = checked_numel(out_shape)?;
        let mut out = alloc::vec(n)?;
        if n > 0 {
            for o in 0..outer {
                for &i in idx {
                    let at = (o * len + i) * inner;
                    out.extend_from_slice(&data[at..at + inner]);
                }
            }
        }
        alloc::tensor(out_shape, &out).map(Value::Tensor)
    }
    with_any!(x.dtype(), T => run::<T>(x, [outer, len, inner], &idx, &out_shape))
}

/// One sliced axis: the elements `first, first + stride, …` (`extent` of them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct AxisSlice {
    first: i64,
    extent: i64,
    stride: i64,
}

impl AxisSlice {
    /// Python's `begin:end:stride` over a dim of size `dim`.
    fn python(begin: i64, end: i64, stride: i64, dim: i64) -> AxisSlice {
        let norm = |v: i64| if v < 0 { v.saturating_add(dim) } else { v };
        // Both bounds are clamped into the dim first, so the span is small
        // and the division cannot overflow, even for a stride of i64::MIN.
        let (first, span) = if stride > 0 {
            let b = norm(begin).clamp(0, dim);
            let e = norm(end).clamp(0, dim);
            (b, e - b)
        } else {
            let b = norm(begin).clamp(-1, dim - 1);
            let e = norm(end).clamp(-1, dim - 1);
            (b, b - e)
        };
        let extent = (span.max(0) as u64).div_ceil(stride.unsigned_abs()) as i64;
        AxisSlice {
            first,
            extent,
            stride,
        }
    }

    /// The same elements as an ndarray slice. ndarray applies a negative step
    /// from the end of the range, so the range is `[last, first]` then. One
    /// element is sliced with step 1, so extreme strides never reach ndarray.
    fn to_ndarray(self) -> Slice {
        match self.extent {
            0 => return Slice::new(0, Some(0), 1),
            1 => return Slice::new(self.first as isize, Some(self.first as isize + 1), 1),
            _ => {}
        }
        let last = self.first + self.stride * (self.extent - 1);
        let (lo, hi) = if self.stride > 0 {
            (self.first, last)
        } else {
            (last, self.first)
        };
        Slice::new(lo as isize, Some(hi as isize + 1), self.stride as isize)
    }
}

/// `relax.strided_slice(x, axes, begin, end, strides, assume_inbound)`.
fn strided_slice(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 1)?;
    let x = tensor_arg(args, 0, "x")?;
    let axes = attrs.ints("axes")?;
    let begin = attrs.ints("begin")?;
    let end = attrs.ints("end")?;
    let strides = attrs
        .opt_ints("strides")?
        .unwrap_or_else(|| vec![1; axes.len()]);
    if begin.len() != axes.len() || end.len() != axes.len() || strides.len() != axes.len() {
        return Err(format!(
            "axes, begin, end and strides must have the same length, found {}, {}, {} and {}",
            axes.len(),
            begin.len(),
            end.len(),
            strides.len()
        ));
    }
    if let Some(i) = strides.iter().position(|&s| s == 0) {
        return Err(format!("stride {i} is zero"));
    }
    let axes = norm_axes(&axes, x.ndim())?;
    let assume_inbound = attrs.bool_or("assume_inbound", false)?;
    let mut slices: Vec<Option<AxisSlice>> = vec![None; x.ndim()];
    for (k, &a) in axes.iter().enumerate() {
        let dim = x.shape()[a];
        let s = AxisSlice::python(begin[k], end[k], strides[k], dim);
        if assume_inbound && strides[k] == 1 && Some(s.extent) != end[k].checked_sub(begin[k]) {
            return Err(format!(
                "slice {}:{} of axis {a} (length {dim}) is out of bounds, but assume_inbound is set",
                begin[k], end[k]
            ));
        }
        slices[a] = Some(s);
    }
    fn run<T: Element>(x: &Tensor, slices: &[Option<AxisSlice>]) -> Result<Value, String> {
        let v = view::<T>(x)?;
        let sliced = v.slice_each_axis(|ax| match slices[ax.axis.index()] {
            Some(s) => s.to_ndarray(),
            None => Slice::from(..),
        });
        value_of(&sliced)
    }
    with_any!(x.dtype(), T => run::<T>(x, &slices))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::executable::KernelAttr;
    use crate::kernels::testing::{assert_ok, ints, iota, tv};

    fn axis(a: Option<i64>) -> KernelAttrs {
        KernelAttrs(vec![(
            "axis".into(),
            a.map_or(KernelAttr::None, KernelAttr::Int),
        )])
    }

    #[test]
    fn take_along_an_axis() {
        let x = iota(&[3, 2]);
        let idx = tv(&[2, 2], vec![2i64, 0, 1, 1]);
        assert_ok(
            take(&[x.clone(), idx.clone()], &axis(Some(0))),
            &[2, 2, 2],
            vec![4, 5, 0, 1, 2, 3, 2, 3],
        );
        let idx1 = tv(&[3], vec![1u8, 0, 1]);
        assert_ok(
            take(&[x.clone(), idx1], &axis(Some(-1))),
            &[3, 3],
            vec![1, 0, 1, 3, 2, 3, 5, 4, 5],
        );
        // Without an axis, x is flattened; a scalar index gives a scalar.
        assert_ok(
            take(&[x.clone(), tv(&[], vec![5i32])], &axis(None)),
            &[],
            vec![5],
        );
        let f = tv(&[2, 2], vec![1.5f64, 2.5, 3.5, 4.5]);
        assert_ok(
            take(&[f, tv(&[2], vec![3i16, 0])], &axis(None)),
            &[2],
            vec![4.5f64, 1.5],
        );
        // Empty indices and an empty x with empty indices.
        assert_ok(
            take(&[x.clone(), tv::<i64>(&[0], vec![])], &axis(Some(0))),
            &[0, 2],
            Vec::<i32>::new(),
        );
        let e = tv::<f32>(&[0, 3], vec![]);
        assert_ok(
            take(&[e, tv::<i64>(&[0], vec![])], &axis(Some(0))),
            &[0, 3],
            Vec::<f32>::new(),
        );
    }

    #[test]
    fn take_rejects_bad_indices() {
        let x = iota(&[3, 2]);
        assert_eq!(
            take(&[x.clone(), tv(&[1], vec![3i64])], &axis(Some(0))).unwrap_err(),
            "index 3 is out of range for axis 0 of x of length 3"
        );
        assert_eq!(
            take(&[x.clone(), tv(&[1], vec![-1i64])], &axis(Some(0))).unwrap_err(),
            "index -1 is out of range for axis 0 of x of length 3"
        );
        assert_eq!(
            take(&[x.clone(), tv(&[1], vec![6i32])], &axis(None)).unwrap_err(),
            "index 6 is out of range for x flattened of length 6"
        );
        assert!(take(&[x.clone(), tv(&[1], vec![u64::MAX])], &axis(None)).is_err());
        assert_eq!(
            take(&[x.clone(), tv(&[1], vec![0.0f32])], &axis(None)).unwrap_err(),
            "indices must have an integer dtype, found float32"
        );
        assert!(take(&[x.clone(), tv(&[1], vec![0i32])], &axis(Some(2))).is_err());
        let e = tv::<f32>(&[0, 3], vec![]);
        assert!(take(&[e, tv(&[1], vec![0i64])], &axis(Some(0))).is_err());
        assert!(take(&[x], &axis(None)).is_err());
    }

    fn slice_attrs(
        axes: &[i64],
        b: &[i64],
        e: &[i64],
        s: Option<&[i64]>,
        inbound: bool,
    ) -> KernelAttrs {
        KernelAttrs(vec![
            ("axes".into(), ints(axes)),
            ("begin".into(), ints(b)),
            ("end".into(), ints(e)),
            ("strides".into(), s.map_or(KernelAttr::None, ints)),
            ("assume_inbound".into(), KernelAttr::Bool(inbound)),
        ])
    }

    #[test]
    fn python_slice_extents() {
        let ext = |b, e, s, d| AxisSlice::python(b, e, s, d).extent;
        // The cases of the op's inference tests.
        assert_eq!(ext(2, 7, 2, 10), 3);
        assert_eq!(ext(-3, 100, 1, 10), 3);
        assert_eq!(ext(8, 2, -2, 10), 3);
        assert_eq!(ext(5, 2, 1, 10), 0);
        // Reversal of the whole dim, as `x[::-1]` spells it.
        assert_eq!(
            AxisSlice::python(i64::MAX, i64::MIN, -1, 4),
            AxisSlice {
                first: 3,
                extent: 4,
                stride: -1
            }
        );
        assert_eq!(ext(-1, -100, -3, 10), 4);
        assert_eq!(ext(5, 0, i64::MIN, 10), 1);
        assert_eq!(ext(0, 10, i64::MAX, 10), 1);
        assert_eq!(ext(0, 0, -1, 0), 0);
        assert_eq!(ext(0, 5, 1, 0), 0);
    }

    /// Python's slice, by walking: clamp the start, then step until the stop.
    fn python_walk(begin: i64, end: i64, step: i64, n: i64) -> Vec<i32> {
        let (lo, hi) = if step > 0 { (0, n) } else { (-1, n - 1) };
        let fix = |v: i64| {
            let v = if v < 0 { v + n } else { v };
            v.clamp(lo, hi)
        };
        let (mut i, stop) = (fix(begin), fix(end));
        let mut out = Vec::new();
        while (step > 0 && i < stop) || (step < 0 && i > stop) {
            out.push(i as i32);
            i += step;
        }
        out
    }

    #[test]
    fn strided_slice_matches_python_on_every_small_case() {
        for n in 0..5i64 {
            let x = iota(&[n]);
            for begin in -7..7 {
                for end in -7..7 {
                    for step in [-3, -2, -1, 1, 2, 3] {
                        let want = python_walk(begin, end, step, n);
                        let a = slice_attrs(&[0], &[begin], &[end], Some(&[step]), false);
                        let got = strided_slice(std::slice::from_ref(&x), &a).unwrap();
                        let got = got.as_tensor().unwrap();
                        assert_eq!(
                            (got.shape(), got.to_vec::<i32>().unwrap()),
                            (&[want.len() as i64][..], want.clone()),
                            "{begin}:{end}:{step} over {n}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn strided_slice_forward_backward_and_clamped() {
        let x = iota(&[4, 5]);
        assert_ok(
            strided_slice(
                std::slice::from_ref(&x),
                &slice_attrs(&[0, 1], &[1, 0], &[3, 5], Some(&[1, 2]), false),
            ),
            &[2, 3],
            vec![5, 7, 9, 10, 12, 14],
        );
        // Negative stride and negative indices: x[-1:0:-2, ::-1] on (4, 5).
        assert_ok(
            strided_slice(
                std::slice::from_ref(&x),
                &slice_attrs(
                    &[-2, 1],
                    &[-1, i64::MAX],
                    &[0, i64::MIN],
                    Some(&[-2, -1]),
                    false,
                ),
            ),
            &[2, 5],
            vec![19, 18, 17, 16, 15, 9, 8, 7, 6, 5],
        );
        // Out-of-range bounds clamp; strides default to 1.
        let v = tv(&[6], vec![0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_ok(
            strided_slice(
                std::slice::from_ref(&v),
                &slice_attrs(&[0], &[-100], &[3], None, false),
            ),
            &[3],
            vec![0.0f32, 1.0, 2.0],
        );
        assert_ok(
            strided_slice(
                std::slice::from_ref(&v),
                &slice_attrs(&[0], &[4], &[1], None, false),
            ),
            &[0],
            Vec::<f32>::new(),
        );
        assert_ok(
            strided_slice(
                std::slice::from_ref(&v),
                &slice_attrs(&[0], &[10], &[-10], Some(&[-4]), false),
            ),
            &[2],
            vec![5.0f32, 1.0],
        );
        let b = tv(&[3], vec![true, false, true]);
        assert_ok(
            strided_slice(&[b], &slice_attrs(&[0], &[0], &[3], Some(&[2]), false)),
            &[2],
            vec![true, true],
        );
        // Extreme strides pick one element.
        assert_ok(
            strided_slice(
                std::slice::from_ref(&v),
                &slice_attrs(&[0], &[4], &[0], Some(&[i64::MIN]), false),
            ),
            &[1],
            vec![4.0f32],
        );
        assert_ok(
            strided_slice(
                std::slice::from_ref(&v),
                &slice_attrs(&[0], &[2], &[i64::MAX], Some(&[i64::MAX]), false),
            ),
            &[1],
            vec![2.0f32],
        );
        // An empty input slices to empty.
        let e = tv::<i64>(&[0, 2], vec![]);
        assert_ok(
            strided_slice(&[e], &slice_attrs(&[0], &[-1], &[5], Some(&[-1]), false)),
            &[0, 2],
            Vec::<i64>::new(),
        );
    }

    #[test]
    fn strided_slice_assume_inbound_and_errors() {
        let v = iota(&[6]);
        assert_ok(
            strided_slice(
                std::slice::from_ref(&v),
                &slice_attrs(&[0], &[1], &[4], None, true),
            ),
            &[3],
            vec![1, 2, 3],
        );
        assert_eq!(
            strided_slice(
                std::slice::from_ref(&v),
                &slice_attrs(&[0], &[2], &[9], None, true)
            )
            .unwrap_err(),
            "slice 2:9 of axis 0 (length 6) is out of bounds, but assume_inbound is set"
        );
        assert_eq!(
            strided_slice(
                std::slice::from_ref(&v),
                &slice_attrs(&[0], &[0], &[2], Some(&[0]), false)
            )
            .unwrap_err(),
            "stride 0 is zero"
        );
        assert!(strided_slice(
            std::slice::from_ref(&v),
            &slice_attrs(&[0, 1], &[0], &[2], None, false)
        )
        .is_err());
        assert!(strided_slice(
            std::slice::from_ref(&v),
            &slice_attrs(&[1], &[0], &[2], None, false)
        )
        .is_err());
        assert!(strided_slice(
            std::slice::from_ref(&v),
            &slice_attrs(&[0, -1], &[0, 0], &[2, 2], None, false)
        )
        .is_err());
        assert!(strided_slice(
            &[Value::Int(1)],
            &slice_attrs(&[0], &[0], &[1], None, false)
        )
        .is_err());
    }
}
