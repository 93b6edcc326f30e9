//! Indexing: `take` (gather along an axis) and `strided_slice`; the
//! gathers and scatters `gather_elements`, `gather_nd`, `scatter_elements`
//! and `scatter_nd`; the scans `cumsum` and `cumprod`; `tril` and `triu`;
//! `one_hot`; and `flip`.
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
//! 4. The gathers and scatters take ONNX's indices: a negative index counts
//!    from the end of its axis, and one outside `[-len, len)` is an error
//!    naming the index, the axis and its length (never a read or write out
//!    of bounds). An index tensor whose shape does not fit the data is an
//!    error too. Scatters apply the updates in row-major order, so with
//!    `reduction="update"` a repeated index keeps the last update.
//! 5. `cumsum` and `cumprod` convert to the `dtype` attribute first, then
//!    accumulate in that type from the start of the axis (integers wrap);
//!    `exclusive` shifts by one (the first element is 0, resp. 1). Without
//!    an axis the data is flattened.
//! 6. `one_hot` receives its on and off values as VM scalars, which carry no
//!    dtype: a float gives `float32`, an integer `int64`, a bool `bool` (the
//!    dtypes of TVMScript's untyped literals). A `one_hot` with float64 or
//!    int32 values has the right dtype once legalized, but not on the
//!    reference interpreter.

use super::alloc;
use super::args::{check_arity, checked_numel, norm_axes, norm_axis, tensor_arg, value_of, view};
use super::dispatch::{cast_to, int_values, with_any, with_num, Num, Scalar};
use super::{Kernel, KernelAttrs};
use crate::tensor::{Element, Tensor};
use crate::value::Value;
use ndarray::Slice;

/// The indexing kernels.
pub const KERNELS: &[(&str, Kernel)] = &[
    ("relax.take", take),
    ("relax.strided_slice", strided_slice),
    ("relax.gather_elements", gather_elements),
    ("relax.gather_nd", gather_nd),
    ("relax.scatter_elements", scatter_elements),
    ("relax.scatter_nd", scatter_nd),
    ("relax.cumsum", cumsum),
    ("relax.cumprod", cumprod),
    ("relax.tril", tril),
    ("relax.triu", triu),
    ("relax.one_hot", one_hot),
    ("relax.flip", flip),
];

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

// ----- gathers and scatters ----------------------------------------------

/// `dims` as `usize`s.
fn sizes(dims: &[i64]) -> Vec<usize> {
    dims.iter().map(|&d| d.max(0) as usize).collect()
}

/// The row-major multi-index of `flat` in `dims`, written into `out`.
fn unravel_into(mut flat: usize, dims: &[usize], out: &mut [usize]) {
    for (k, &d) in dims.iter().enumerate().rev() {
        if d > 0 {
            out[k] = flat % d;
            flat /= d;
        }
    }
}

/// The row-major flat offset of `idx` in `dims`.
fn ravel(idx: &[usize], dims: &[usize]) -> usize {
    idx.iter().zip(dims).fold(0, |acc, (&i, &d)| acc * d + i)
}

/// Index `v` along an axis of length `len` (negative counts from the end),
/// or the error naming it, the axis and the bound.
fn norm_index(v: i128, axis: usize, len: usize) -> Result<usize, String> {
    let n = len as i128;
    let u = if v < 0 { v + n } else { v };
    if (0..n).contains(&u) {
        Ok(u as usize)
    } else {
        Err(format!(
            "index {v} is out of range for axis {axis} of data of length {len} (valid: {} to {})",
            -n,
            n - 1
        ))
    }
}

/// Checks that `indices` fits `data` for an element-wise gather or
/// scatter: the same rank, and no dim larger than data's off `axis`.
fn check_elementwise_indices(
    data: &Tensor,
    indices: &Tensor,
    axis: usize,
    name: &str,
) -> Result<(), String> {
    let (d, i) = (data.shape(), indices.shape());
    if d.len() != i.len() {
        return Err(format!(
            "{name} must have the rank of data ({}), found rank {}",
            d.len(),
            i.len()
        ));
    }
    if let Some(k) = (0..d.len()).find(|&k| k != axis && i[k] > d[k]) {
        return Err(format!(
            "dim {k} of {name} ({}) exceeds data's ({})",
            i[k], d[k]
        ));
    }
    Ok(())
}

/// For each element of `indices`, the flat offset in `data` it names: its
/// own position with the `axis` coordinate replaced by the index.
fn element_offsets(data: &Tensor, indices: &Tensor, axis: usize) -> Result<Vec<usize>, String> {
    let values = int_values(indices)?;
    let (dd, id) = (sizes(data.shape()), sizes(indices.shape()));
    let mut pos = vec![0; id.len()];
    alloc::try_collect(
        values.len(),
        values.iter().enumerate().map(|(j, &v)| {
            unravel_into(j, &id, &mut pos);
            pos[axis] = norm_index(v, axis, dd[axis])?;
            Ok(ravel(&pos, &dd))
        }),
    )
}

/// `relax.gather_elements(data, indices, axis)`: `out[p] = data[p with
/// axis replaced by indices[p]]`, of the indices' shape.
fn gather_elements(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 2)?;
    let data = tensor_arg(args, 0, "data")?;
    let indices = tensor_arg(args, 1, "indices")?;
    let axis = norm_axis(attrs.int("axis")?, data.ndim())?;
    check_elementwise_indices(data, indices, axis, "indices")?;
    let src = element_offsets(data, indices, axis)?;
    fn run<T: Element>(data: &Tensor, src: &[usize], shape: &[i64]) -> Result<Value, String> {
        let d = data.as_slice::<T>().map_err(|e| e.to_string())?;
        let out = alloc::collect(src.len(), src.iter().map(|&s| d[s]))?;
        alloc::tensor(shape, &out).map(Value::Tensor)
    }
    with_any!(data.dtype(), T => run::<T>(data, &src, indices.shape()))
}

/// The index tuples of a `gather_nd` / `scatter_nd` (`indices` of shape
/// `(…, k)`) as flat offsets of blocks of `data`'s dims `b + k..`: the
/// first `b` dims of each tuple's position are batch dims (the offset
/// includes them).
fn tuple_offsets(data: &Tensor, indices: &Tensor, b: usize) -> Result<Vec<usize>, String> {
    let (dd, id) = (sizes(data.shape()), sizes(indices.shape()));
    let Some(&k) = id.last() else {
        return Err("indices must have rank 1 or more".into());
    };
    if k < 1 || k > dd.len().saturating_sub(b) {
        return Err(format!(
            "the last dim of indices ({k}) must be between 1 and the rank of data less batch_dims ({})",
            dd.len().saturating_sub(b)
        ));
    }
    if id[..b] != dd[..b] {
        return Err(format!(
            "the batch dims of indices {:?} and data {:?} differ",
            &id[..b],
            &dd[..b]
        ));
    }
    let values = int_values(indices)?;
    let outer = &id[..id.len() - 1];
    let m: usize = outer.iter().product();
    let mut pos = vec![0; outer.len()];
    let mut at = vec![0; b + k];
    alloc::try_collect(
        m,
        (0..m).map(|p| {
            unravel_into(p, outer, &mut pos);
            at[..b].copy_from_slice(&pos[..b]);
            for j in 0..k {
                at[b + j] = norm_index(values[p * k + j], b + j, dd[b + j])?;
            }
            Ok(ravel(&at, &dd[..b + k]))
        }),
    )
}

/// `relax.gather_nd(data, indices, batch_dims)`: for each index tuple (the
/// last dim of indices), the block of data it names; the result has shape
/// `indices.shape[:-1] + data.shape[batch_dims + k:]`.
fn gather_nd(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 2)?;
    let data = tensor_arg(args, 0, "data")?;
    let indices = tensor_arg(args, 1, "indices")?;
    let b = attrs.int("batch_dims")?;
    let (r, q) = (data.ndim(), indices.ndim());
    if b < 0 || b as usize >= r.min(q) {
        return Err(format!(
            "batch_dims {b} must be below the ranks of data ({r}) and indices ({q})"
        ));
    }
    let b = b as usize;
    let blocks = tuple_offsets(data, indices, b)?;
    let k = indices.shape()[q - 1] as usize;
    let tail = &data.shape()[b + k..];
    let inner: usize = sizes(tail).iter().product();
    let shape = [&indices.shape()[..q - 1], tail].concat();
    fn run<T: Element>(
        data: &Tensor,
        blocks: &[usize],
        inner: usize,
        shape: &[i64],
    ) -> Result<Value, String> {
        let d = data.as_slice::<T>().map_err(|e| e.to_string())?;
        let mut out = alloc::vec(checked_numel(shape)?)?;
        for &o in blocks {
            out.extend_from_slice(&d[o * inner..(o + 1) * inner]);
        }
        alloc::tensor(shape, &out).map(Value::Tensor)
    }
    with_any!(data.dtype(), T => run::<T>(data, &blocks, inner, &shape))
}

/// The scatter reductions.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reduction {
    Update,
    Add,
    Mul,
    Min,
    Max,
}

impl Reduction {
    fn parse(s: &str) -> Result<Reduction, String> {
        Ok(match s {
            "update" => Reduction::Update,
            "add" => Reduction::Add,
            "mul" => Reduction::Mul,
            "min" => Reduction::Min,
            "max" => Reduction::Max,
            _ => {
                return Err(format!(
                    "reduction must be one of update, add, mul, min, max, found \"{s}\""
                ))
            }
        })
    }
}

/// `data` with `updates[j]` combined into element `dst[j]`, in order.
fn scatter(
    data: &Tensor,
    updates: &Tensor,
    dst: &[usize],
    reduction: Reduction,
) -> Result<Value, String> {
    if updates.dtype() != data.dtype() {
        return Err(format!(
            "updates must have the dtype of data ({}), found {}",
            data.dtype(),
            updates.dtype()
        ));
    }
    fn run<T: Element>(
        data: &Tensor,
        updates: &Tensor,
        dst: &[usize],
        f: impl Fn(T, T) -> T,
    ) -> Result<Value, String> {
        let mut out = alloc::collect(data.numel(), data.to_vec::<T>().map_err(|e| e.to_string())?)?;
        let u = updates.as_slice::<T>().map_err(|e| e.to_string())?;
        for (&o, &v) in dst.iter().zip(u) {
            out[o] = f(out[o], v);
        }
        alloc::tensor(data.shape(), &out).map(Value::Tensor)
    }
    fn reduce<T: Num>(
        data: &Tensor,
        updates: &Tensor,
        dst: &[usize],
        r: Reduction,
    ) -> Result<Value, String> {
        match r {
            Reduction::Add => run::<T>(data, updates, dst, T::add),
            Reduction::Mul => run::<T>(data, updates, dst, T::mul),
            Reduction::Min => run::<T>(data, updates, dst, T::minimum),
            _ => run::<T>(data, updates, dst, T::maximum),
        }
    }
    if reduction == Reduction::Update {
        with_any!(data.dtype(), T => run::<T>(data, updates, dst, |_, v| v))
    } else {
        with_num!(data.dtype(), T => reduce::<T>(data, updates, dst, reduction))
    }
}

/// `relax.scatter_elements(data, indices, updates, axis, reduction)`: data
/// with `updates[p]` combined into `data[p with axis replaced by
/// indices[p]]`.
fn scatter_elements(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 3)?;
    let data = tensor_arg(args, 0, "data")?;
    let indices = tensor_arg(args, 1, "indices")?;
    let updates = tensor_arg(args, 2, "updates")?;
    let axis = norm_axis(attrs.int("axis")?, data.ndim())?;
    let reduction = Reduction::parse(attrs.str("reduction")?)?;
    check_elementwise_indices(data, indices, axis, "indices")?;
    if updates.shape() != indices.shape() {
        return Err(format!(
            "updates must have the shape of indices {:?}, found {:?}",
            indices.shape(),
            updates.shape()
        ));
    }
    let dst = element_offsets(data, indices, axis)?;
    scatter(data, updates, &dst, reduction)
}

/// `relax.scatter_nd(data, indices, updates, reduction)`: data with each
/// block `updates[p]` combined into the block of data that index tuple
/// `indices[p]` names.
fn scatter_nd(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 3)?;
    let data = tensor_arg(args, 0, "data")?;
    let indices = tensor_arg(args, 1, "indices")?;
    let updates = tensor_arg(args, 2, "updates")?;
    let reduction = Reduction::parse(attrs.str("reduction")?)?;
    let blocks = tuple_offsets(data, indices, 0)?;
    let q = indices.ndim();
    let k = indices.shape()[q - 1] as usize;
    let tail = &data.shape()[k..];
    let want = [&indices.shape()[..q - 1], tail].concat();
    if updates.shape() != want.as_slice() {
        return Err(format!(
            "updates must have shape {want:?} (indices' without the last dim, then data's after {k}), found {:?}",
            updates.shape()
        ));
    }
    let inner: usize = sizes(tail).iter().product();
    let dst = alloc::collect(
        blocks.len() * inner,
        blocks
            .iter()
            .flat_map(|&o| (0..inner).map(move |e| o * inner + e)),
    )?;
    scatter(data, updates, &dst, reduction)
}

// ----- scans, triangles, one_hot, flip --------------------------------------

/// `data` as (outer, len, inner) around `axis`.
fn around(shape: &[i64], axis: usize) -> [usize; 3] {
    let s = sizes(shape);
    [
        s[..axis].iter().product(),
        s[axis],
        s[axis + 1..].iter().product(),
    ]
}

fn scan(args: &[Value], attrs: &KernelAttrs, prod: bool) -> Result<Value, String> {
    check_arity(args, 1)?;
    let data = tensor_arg(args, 0, "data")?;
    let exclusive = attrs.bool_or("exclusive", false)?;
    let dtype = match attrs.get("dtype") {
        Some(crate::executable::KernelAttr::DataType(d)) if !d.is_void() => *d,
        _ => data.dtype(),
    };
    let (shape, axis) = match attrs.opt_int("axis")? {
        Some(a) => (data.shape().to_vec(), norm_axis(a, data.ndim())?),
        None => (vec![data.numel() as i64], 0),
    };
    let [outer, len, inner] = around(&shape, axis);
    fn run<T: Num>(
        data: &Tensor,
        shape: &[i64],
        [outer, len, inner]: [usize; 3],
        exclusive: bool,
        prod: bool,
    ) -> Result<Value, String> {
        let x = cast_to::<T>(data)?;
        let x = x
            .as_slice()
            .ok_or("internal error: a non-contiguous cast")?;
        let mut out = alloc::collect(x.len(), std::iter::repeat_n(T::ZERO, x.len()))?;
        for o in 0..outer {
            for e in 0..inner {
                // Accumulated in `T::Acc` (f32 for the half types), each
                // output rounded from the running value.
                let mut acc = if prod { T::Acc::ONE } else { T::Acc::ZERO };
                for i in 0..len {
                    let at = (o * len + i) * inner + e;
                    let v = x[at].to_acc();
                    let next = if prod { acc.mul(v) } else { acc.add(v) };
                    out[at] = T::from_acc(if exclusive { acc } else { next });
                    acc = next;
                }
            }
        }
        alloc::tensor(shape, &out).map(Value::Tensor)
    }
    with_num!(dtype, T => run::<T>(data, &shape, [outer, len, inner], exclusive, prod))
}

/// `relax.cumsum(data, axis, dtype, exclusive)`.
fn cumsum(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    scan(args, attrs, false)
}

/// `relax.cumprod(data, axis, dtype, exclusive)`.
fn cumprod(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    scan(args, attrs, true)
}

/// `tril` (`upper` false: keeps `j - i <= k`) or `triu` (keeps `j - i >=
/// k`) over the last two dims; the rest are zero.
fn triangle(args: &[Value], upper: bool) -> Result<Value, String> {
    check_arity(args, 2)?;
    let x = tensor_arg(args, 0, "x")?;
    let k = match &args[1] {
        Value::Int(k) => *k,
        other => return Err(format!("k must be an integer, found {}", other.describe())),
    };
    if x.ndim() < 2 {
        return Err(format!(
            "x must have rank 2 or more, found rank {}",
            x.ndim()
        ));
    }
    let s = sizes(x.shape());
    let (rows, cols) = (s[s.len() - 2], s[s.len() - 1]);
    fn run<T: Scalar>(
        x: &Tensor,
        [rows, cols]: [usize; 2],
        keep: impl Fn(i64) -> bool,
    ) -> Result<Value, String> {
        let d = x.as_slice::<T>().map_err(|e| e.to_string())?;
        let out = alloc::collect(
            d.len(),
            d.iter().enumerate().map(|(f, &v)| {
                let (i, j) = ((f / cols.max(1)) % rows.max(1), f % cols.max(1));
                if keep(j as i64 - i as i64) {
                    v
                } else {
                    T::ZERO
                }
            }),
        )?;
        alloc::tensor(x.shape(), &out).map(Value::Tensor)
    }
    let keep = move |diff: i64| if upper { diff >= k } else { diff <= k };
    with_any!(x.dtype(), T => run::<T>(x, [rows, cols], keep))
}

/// `relax.tril(x, k)`.
fn tril(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    triangle(args, false)
}

/// `relax.triu(x, k)`.
fn triu(args: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    triangle(args, true)
}

/// `relax.one_hot(indices, on_value, off_value, depth, axis)`: `on_value`
/// where the index equals the position along the new `axis`, `off_value`
/// elsewhere (an index outside `[0, depth)` gives only `off_value`s). See
/// the module docs for the result's dtype.
fn one_hot(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 3)?;
    let indices = tensor_arg(args, 0, "indices")?;
    let depth = attrs.int("depth")?;
    if depth < 0 {
        return Err(format!("depth must not be negative, found {depth}"));
    }
    let axis = norm_axis(attrs.int("axis")?, indices.ndim() + 1)?;
    let mut shape = indices.shape().to_vec();
    shape.insert(axis, depth);
    let [outer, _, inner] = around(&shape, axis);
    let values = int_values(indices)?;
    let n = checked_numel(&shape)?;
    fn run<T: Element>(
        values: &[i128],
        [outer, depth, inner]: [usize; 3],
        on: T,
        off: T,
        n: usize,
        shape: &[i64],
    ) -> Result<Value, String> {
        let mut out = alloc::collect(n, std::iter::repeat_n(off, n))?;
        for o in 0..outer {
            for e in 0..inner {
                let v = values[o * inner + e];
                if (0..depth as i128).contains(&v) {
                    out[(o * depth + v as usize) * inner + e] = on;
                }
            }
        }
        alloc::tensor(shape, &out).map(Value::Tensor)
    }
    let dims = [outer, depth as usize, inner];
    match (&args[1], &args[2]) {
        (Value::Float(on), Value::Float(off)) => {
            run::<f32>(&values, dims, *on as f32, *off as f32, n, &shape)
        }
        (Value::Int(on), Value::Int(off)) => run::<i64>(&values, dims, *on, *off, n, &shape),
        (Value::Bool(on), Value::Bool(off)) => run::<bool>(&values, dims, *on, *off, n, &shape),
        (on, off) => Err(format!(
            "on_value and off_value must be scalars of one kind, found {} and {}",
            on.describe(),
            off.describe()
        )),
    }
}

/// `relax.flip(data, axis)`: data reversed along `axis`.
fn flip(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 1)?;
    let data = tensor_arg(args, 0, "data")?;
    let axis = norm_axis(attrs.int("axis")?, data.ndim())?;
    fn run<T: Element>(data: &Tensor, axis: usize) -> Result<Value, String> {
        let v = view::<T>(data)?;
        let flipped = v.slice_each_axis(|ax| {
            if ax.axis.index() == axis {
                Slice::new(0, None, -1)
            } else {
                Slice::from(..)
            }
        });
        value_of(&flipped)
    }
    with_any!(data.dtype(), T => run::<T>(data, axis))
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

    fn kattrs(list: &[(&str, KernelAttr)]) -> KernelAttrs {
        crate::kernels::testing::attrs(list)
    }

    #[test]
    fn gather_elements_follows_onnx() {
        // ONNX's GatherElements examples, a negative index among them.
        let data = tv(&[2, 2], vec![1i32, 2, 3, 4]);
        let idx = tv(&[2, 2], vec![0i64, 0, 1, 0]);
        let a1 = kattrs(&[("axis", KernelAttr::Int(1))]);
        assert_ok(
            gather_elements(&[data.clone(), idx], &a1),
            &[2, 2],
            vec![1, 1, 4, 3],
        );
        let data = tv(&[3, 3], (1..=9).collect::<Vec<i32>>());
        let idx = tv(&[2, 3], vec![-1i32, -2, 0, -2, 0, 0]);
        let a0 = kattrs(&[("axis", KernelAttr::Int(0))]);
        assert_ok(
            gather_elements(&[data.clone(), idx], &a0),
            &[2, 3],
            vec![7, 5, 3, 4, 2, 3],
        );
        assert_eq!(
            gather_elements(&[data.clone(), tv(&[1, 1], vec![3i64])], &a0).unwrap_err(),
            "index 3 is out of range for axis 0 of data of length 3 (valid: -3 to 2)"
        );
        assert_eq!(
            gather_elements(&[data.clone(), tv(&[1, 1], vec![-4i64])], &a0).unwrap_err(),
            "index -4 is out of range for axis 0 of data of length 3 (valid: -3 to 2)"
        );
        assert!(gather_elements(&[data.clone(), tv(&[1, 4], vec![0i64; 4])], &a0).is_err());
        assert!(gather_elements(&[data, tv(&[3], vec![0i64; 3])], &a0).is_err());
    }

    #[test]
    fn gather_nd_follows_onnx() {
        let b = |v: i64| kattrs(&[("batch_dims", KernelAttr::Int(v))]);
        let data = tv(&[2, 2], vec![0i32, 1, 2, 3]);
        assert_ok(
            gather_nd(&[data.clone(), tv(&[2, 2], vec![0i64, 0, 1, 1])], &b(0)),
            &[2],
            vec![0, 3],
        );
        assert_ok(
            gather_nd(&[data.clone(), tv(&[2, 1], vec![1i64, 0])], &b(0)),
            &[2, 2],
            vec![2, 3, 0, 1],
        );
        let data = tv(&[2, 2, 2], (0..8).collect::<Vec<i32>>());
        assert_ok(
            gather_nd(&[data.clone(), tv(&[2, 1], vec![1i64, 0])], &b(1)),
            &[2, 2],
            vec![2, 3, 4, 5],
        );
        assert_ok(
            gather_nd(&[data.clone(), tv(&[1, 2], vec![-1i64, -2])], &b(0)),
            &[1, 2],
            vec![4, 5],
        );
        assert_eq!(
            gather_nd(&[data.clone(), tv(&[1, 2], vec![0i64, 2])], &b(0)).unwrap_err(),
            "index 2 is out of range for axis 1 of data of length 2 (valid: -2 to 1)"
        );
        assert!(gather_nd(&[data.clone(), tv(&[1, 4], vec![0i64; 4])], &b(0)).is_err());
        assert!(gather_nd(&[data.clone(), tv(&[3, 1], vec![0i64; 3])], &b(1)).is_err());
        assert!(gather_nd(&[data, tv(&[2, 1], vec![0i64; 2])], &b(2)).is_err());
    }

    fn scatter_attrs(axis: Option<i64>, r: &str) -> KernelAttrs {
        let mut v = vec![("reduction", KernelAttr::Str(r.into()))];
        if let Some(a) = axis {
            v.push(("axis", KernelAttr::Int(a)));
        }
        kattrs(&v)
    }

    #[test]
    fn scatter_elements_reduces_in_order() {
        let data = tv(&[1, 5], vec![1.0f32, 2.0, 3.0, 4.0, 5.0]);
        let idx = tv(&[1, 2], vec![1i64, -2]);
        let upd = tv(&[1, 2], vec![1.1f32, 2.1]);
        let run = |r: &str| {
            scatter_elements(
                &[data.clone(), idx.clone(), upd.clone()],
                &scatter_attrs(Some(1), r),
            )
        };
        assert_ok(run("update"), &[1, 5], vec![1.0f32, 1.1, 3.0, 2.1, 5.0]);
        // Repeated indices: the last update wins, or they combine.
        let dup = tv(&[1, 2], vec![1i64, 1]);
        let run = |r: &str| {
            scatter_elements(
                &[data.clone(), dup.clone(), upd.clone()],
                &scatter_attrs(Some(1), r),
            )
        };
        assert_ok(run("update"), &[1, 5], vec![1.0f32, 2.1, 3.0, 4.0, 5.0]);
        assert_ok(
            run("add"),
            &[1, 5],
            vec![1.0f32, 2.0 + 1.1 + 2.1, 3.0, 4.0, 5.0],
        );
        assert_ok(
            run("mul"),
            &[1, 5],
            vec![1.0f32, 2.0 * 1.1 * 2.1, 3.0, 4.0, 5.0],
        );
        assert_ok(run("max"), &[1, 5], vec![1.0f32, 2.1, 3.0, 4.0, 5.0]);
        assert_ok(run("min"), &[1, 5], vec![1.0f32, 1.1, 3.0, 4.0, 5.0]);
        assert!(run("sub").unwrap_err().contains("reduction must be one of"));
        let bad = tv(&[1, 1], vec![5i64]);
        assert_eq!(
            scatter_elements(
                &[data.clone(), bad, tv(&[1, 1], vec![0.0f32])],
                &scatter_attrs(Some(1), "update")
            )
            .unwrap_err(),
            "index 5 is out of range for axis 1 of data of length 5 (valid: -5 to 4)"
        );
        // Axis 0 over a 3x3 matrix (ONNX's example without an axis).
        let m = tv(&[3, 3], vec![0i32; 9]);
        let idx = tv(&[2, 3], vec![1i64, 0, 2, 0, 2, 1]);
        let upd = tv(&[2, 3], vec![1i32, 2, 3, 4, 5, 6]);
        assert_ok(
            scatter_elements(&[m.clone(), idx, upd], &scatter_attrs(Some(0), "update")),
            &[3, 3],
            vec![4, 2, 0, 1, 0, 6, 0, 5, 3],
        );
        // Bool data can be updated, not added.
        let bools = tv(&[2], vec![false, false]);
        let bi = tv(&[1], vec![1i64]);
        let bu = tv(&[1], vec![true]);
        assert_ok(
            scatter_elements(
                &[bools.clone(), bi.clone(), bu.clone()],
                &scatter_attrs(Some(0), "update"),
            ),
            &[2],
            vec![false, true],
        );
        assert!(scatter_elements(&[bools, bi, bu], &scatter_attrs(Some(0), "add")).is_err());
        assert!(scatter_elements(
            &[
                m.clone(),
                tv(&[1, 1], vec![0i64]),
                tv(&[1, 2], vec![0i32; 2])
            ],
            &scatter_attrs(Some(0), "update")
        )
        .is_err());
        assert!(scatter_elements(
            &[m, tv(&[1, 1], vec![0i64]), tv(&[1, 1], vec![0.0f32])],
            &scatter_attrs(Some(0), "update")
        )
        .is_err());
    }

    #[test]
    fn scatter_nd_follows_onnx() {
        let data = tv(&[8], (1..=8).collect::<Vec<i32>>());
        let idx = tv(&[4, 1], vec![4i64, 3, 1, 7]);
        let upd = tv(&[4], vec![9i32, 10, 11, 12]);
        assert_ok(
            scatter_nd(
                &[data.clone(), idx.clone(), upd.clone()],
                &scatter_attrs(None, "update"),
            ),
            &[8],
            vec![1, 11, 3, 10, 9, 6, 7, 12],
        );
        let idx = tv(&[2, 1], vec![0i64, -8]);
        let upd = tv(&[2], vec![5i32, 6]);
        assert_ok(
            scatter_nd(
                &[data.clone(), idx.clone(), upd.clone()],
                &scatter_attrs(None, "add"),
            ),
            &[8],
            vec![12, 2, 3, 4, 5, 6, 7, 8],
        );
        assert_ok(
            scatter_nd(
                &[data.clone(), idx.clone(), upd.clone()],
                &scatter_attrs(None, "max"),
            ),
            &[8],
            vec![6, 2, 3, 4, 5, 6, 7, 8],
        );
        // Blocks: rows of a matrix.
        let m = tv(&[3, 2], vec![0i32; 6]);
        assert_ok(
            scatter_nd(
                &[
                    m.clone(),
                    tv(&[1, 1], vec![2i64]),
                    tv(&[1, 2], vec![7i32, 8]),
                ],
                &scatter_attrs(None, "update"),
            ),
            &[3, 2],
            vec![0, 0, 0, 0, 7, 8],
        );
        assert_eq!(
            scatter_nd(
                &[data.clone(), tv(&[1, 1], vec![8i64]), tv(&[1], vec![0i32])],
                &scatter_attrs(None, "update")
            )
            .unwrap_err(),
            "index 8 is out of range for axis 0 of data of length 8 (valid: -8 to 7)"
        );
        assert!(scatter_nd(
            &[m, tv(&[1, 1], vec![2i64]), tv(&[1], vec![7i32])],
            &scatter_attrs(None, "update")
        )
        .is_err());
    }

    #[test]
    fn scans() {
        let x = tv(&[2, 3], vec![1i32, 2, 3, 4, 5, 6]);
        let a = |axis: Option<i64>, ex: bool, dt: Option<&str>| {
            let mut v = vec![
                ("axis", axis.map_or(KernelAttr::None, KernelAttr::Int)),
                ("exclusive", KernelAttr::Bool(ex)),
            ];
            if let Some(d) = dt {
                v.push(("dtype", KernelAttr::DataType(d.parse().unwrap())));
            }
            kattrs(&v)
        };
        assert_ok(
            cumsum(std::slice::from_ref(&x), &a(Some(1), false, None)),
            &[2, 3],
            vec![1, 3, 6, 4, 9, 15],
        );
        assert_ok(
            cumsum(std::slice::from_ref(&x), &a(Some(0), true, None)),
            &[2, 3],
            vec![0, 0, 0, 1, 2, 3],
        );
        assert_ok(
            cumsum(std::slice::from_ref(&x), &a(None, false, Some("int64"))),
            &[6],
            vec![1i64, 3, 6, 10, 15, 21],
        );
        assert_ok(
            cumprod(std::slice::from_ref(&x), &a(Some(-1), false, None)),
            &[2, 3],
            vec![1, 2, 6, 4, 20, 120],
        );
        assert_ok(
            cumprod(
                std::slice::from_ref(&x),
                &a(Some(-1), true, Some("float32")),
            ),
            &[2, 3],
            vec![1.0f32, 1.0, 2.0, 1.0, 4.0, 20.0],
        );
        assert!(cumsum(&[x], &a(Some(2), false, None)).is_err());
        assert_ok(
            cumsum(&[tv::<f32>(&[0, 2], vec![])], &a(Some(0), false, None)),
            &[0, 2],
            Vec::<f32>::new(),
        );
    }

    #[test]
    fn triangles_one_hot_and_flip() {
        let x = tv(&[3, 4], (1..=12).collect::<Vec<i32>>());
        assert_ok(
            tril(&[x.clone(), Value::Int(0)], &kattrs(&[])),
            &[3, 4],
            vec![1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0],
        );
        assert_ok(
            triu(&[x.clone(), Value::Int(1)], &kattrs(&[])),
            &[3, 4],
            vec![0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12],
        );
        assert_ok(
            tril(&[x.clone(), Value::Int(-2)], &kattrs(&[])),
            &[3, 4],
            vec![0, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0],
        );
        assert!(tril(&[tv(&[2], vec![1i32, 2]), Value::Int(0)], &kattrs(&[])).is_err());
        assert!(tril(&[x.clone(), Value::Float(0.0)], &kattrs(&[])).is_err());
        let oh = |axis: i64| {
            kattrs(&[
                ("depth", KernelAttr::Int(3)),
                ("axis", KernelAttr::Int(axis)),
            ])
        };
        let idx = tv(&[2], vec![2i64, 5]);
        assert_ok(
            one_hot(
                &[idx.clone(), Value::Float(1.0), Value::Float(0.0)],
                &oh(-1),
            ),
            &[2, 3],
            vec![0.0f32, 0.0, 1.0, 0.0, 0.0, 0.0],
        );
        assert_ok(
            one_hot(&[idx.clone(), Value::Int(7), Value::Int(-1)], &oh(0)),
            &[3, 2],
            vec![-1i64, -1, -1, -1, 7, -1],
        );
        assert!(one_hot(&[idx.clone(), Value::Int(7), Value::Float(0.0)], &oh(0)).is_err());
        assert!(one_hot(&[idx, Value::Int(7), Value::Int(0)], &oh(2)).is_err());
        let f = |axis: i64| kattrs(&[("axis", KernelAttr::Int(axis))]);
        assert_ok(
            flip(std::slice::from_ref(&x), &f(0)),
            &[3, 4],
            vec![9, 10, 11, 12, 5, 6, 7, 8, 1, 2, 3, 4],
        );
        assert_ok(
            flip(std::slice::from_ref(&x), &f(-1)),
            &[3, 4],
            vec![4, 3, 2, 1, 8, 7, 6, 5, 12, 11, 10, 9],
        );
        assert!(flip(&[x], &f(2)).is_err());
    }
}
