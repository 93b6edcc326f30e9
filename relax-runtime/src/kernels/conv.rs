//! `nn.conv2d`, `nn.conv2d_transpose`, `nn.max_pool2d` and `nn.avg_pool2d`
//! on NCHW data, as direct loops.
//!
//! 1. Geometry: strides and dilation take 1 or 2 values (height, width);
//!    padding 1, 2 or 4 values, read as `(top, left, bottom, right)` the way
//!    TVM expands them. An output extent is
//!    `floor((in + pad_begin + pad_end - span + [ceil: stride - 1]) / stride) + 1`
//!    with `span = dilation * (kernel - 1) + 1`, the formula of the ops' shape
//!    inference, so kernel and inference agree on every shape.
//! 2. The loops read the row-major buffers directly and visit only the window
//!    taps that fall inside the input: padding adds zero to the convolution's
//!    sum and counts as `-inf` (the integer minimum for integer dtypes) in the
//!    max. A window wholly in the padding (possible with `ceil_mode`, or with
//!    padding at least the window) gives that minimum.
//! 5. `avg_pool2d` divides a window's sum by how many of its taps count:
//!    those inside the input, or with `count_include_pad` those inside the
//!    padded input (taps past the padding, which `ceil_mode` can make, never
//!    count), as PyTorch, ONNX and TVM's TOPI do. A window with no tap that
//!    counts gives 0.
//! 3. `conv2d` with `out_dtype` converts both operands to it first and sums in
//!    it (TVM's `topi.nn.conv` does the same); otherwise data and weight must
//!    share a dtype. Integer sums wrap.
//! 4. Geometry attributes are limited to `i32::MAX` so that every index
//!    computation fits comfortably in `i64`.

use super::alloc;
use super::args::{check_arity, checked_numel, same_dtype, tensor_arg, tensor_value, view};
use super::dispatch::{cast_to, with_any, with_num, Num, Scalar, Wide};
use super::{Kernel, KernelAttrs};
use crate::executable::KernelAttr;
use crate::tensor::{fmt_shape, Tensor};
use crate::value::Value;

/// The convolution and pooling kernels.
pub const KERNELS: &[(&str, Kernel)] = &[
    ("relax.nn.conv2d", conv2d),
    ("relax.nn.conv2d_transpose", conv2d_transpose),
    ("relax.nn.max_pool2d", max_pool2d),
    ("relax.nn.avg_pool2d", avg_pool2d),
];

/// Rejects values outside `lo..=i32::MAX`.
fn check_range(name: &str, values: &[i64], lo: i64) -> Result<(), String> {
    match values.iter().find(|&&v| v < lo || v > i32::MAX as i64) {
        Some(bad) if *bad < lo && lo == 1 => Err(format!("{name} must be positive, found {bad}")),
        Some(bad) if *bad < lo => Err(format!("{name} must not be negative, found {bad}")),
        Some(bad) => Err(format!("{name} value {bad} is too large")),
        None => Ok(()),
    }
}

/// A `(height, width)` attribute given as 1 or 2 positive values.
fn pair(attrs: &KernelAttrs, name: &str) -> Result<[i64; 2], String> {
    let v = attrs.ints(name)?;
    let p = match v.as_slice() {
        [a] => [*a, *a],
        [a, b] => [*a, *b],
        _ => return Err(format!("{name} must have 1 or 2 values, found {}", v.len())),
    };
    check_range(name, &p, 1)?;
    Ok(p)
}

/// The sliding-window geometry shared by convolution and pooling.
#[derive(Clone, Copy, Debug)]
struct Window {
    /// Window extent (height, width).
    kernel: [i64; 2],
    strides: [i64; 2],
    dilation: [i64; 2],
    /// (top, left, bottom, right).
    padding: [i64; 4],
    ceil_mode: bool,
}

impl Window {
    fn from_attrs(attrs: &KernelAttrs, kernel: [i64; 2], ceil_mode: bool) -> Result<Self, String> {
        let p = attrs.ints("padding")?;
        let padding = match p.as_slice() {
            [a] => [*a; 4],
            [a, b] => [*a, *b, *a, *b],
            [a, b, c, d] => [*a, *b, *c, *d],
            _ => {
                return Err(format!(
                    "padding must have 1, 2 or 4 values, found {}",
                    p.len()
                ))
            }
        };
        check_range("padding", &padding, 0)?;
        Ok(Window {
            kernel,
            strides: pair(attrs, "strides")?,
            dilation: pair(attrs, "dilation")?,
            padding,
            ceil_mode,
        })
    }

    /// The output extent along spatial axis `d` (0 height, 1 width).
    fn out_extent(&self, input: i64, d: usize) -> Result<i64, String> {
        let span = self.dilation[d] * (self.kernel[d] - 1) + 1;
        let mut num = input + self.padding[d] + self.padding[d + 2] - span;
        if self.ceil_mode {
            num += self.strides[d] - 1;
        }
        let out = num.div_euclid(self.strides[d]) + 1;
        if out < 0 {
            let axis = ["height", "width"][d];
            return Err(format!(
                "the window (extent {span} with dilation) does not fit the padded input {axis} {}",
                input + self.padding[d] + self.padding[d + 2]
            ));
        }
        Ok(out)
    }

    /// The window taps of output position `o` along spatial axis `d` (0 rows,
    /// 1 columns) that fall inside an input of extent `input`, as pairs
    /// `(tap, input position)`. Taps in the padding are not visited at all,
    /// so a huge window over a small input costs nothing.
    fn taps(&self, o: usize, input: usize, d: usize) -> impl Iterator<Item = (usize, usize)> {
        let (stride, dil) = (self.strides[d], self.dilation[d]);
        // Tap k reads base + k * dil; keep 0 <= base + k * dil < input.
        let base = o as i64 * stride - self.padding[d];
        let lo = if base >= 0 {
            0
        } else {
            (-base + dil - 1) / dil
        };
        let room = input as i64 - base;
        let hi = if room <= 0 { 0 } else { (room + dil - 1) / dil };
        let hi = hi.min(self.kernel[d]);
        (lo..hi.max(lo)).map(move |k| (k as usize, (base + k * dil) as usize))
    }
}

impl Window {
    /// How many taps of output position `o` along axis `d` fall inside
    /// the input padded by the window's padding (`count_include_pad`).
    fn padded_taps(&self, o: usize, input: usize, d: usize) -> i64 {
        let (stride, dil) = (self.strides[d], self.dilation[d]);
        // In padded coordinates tap k reads o * stride + k * dil, which
        // must stay below the padded extent.
        let base = o as i64 * stride;
        let padded = input as i64 + self.padding[d] + self.padding[d + 2];
        let room = padded - base;
        let hi = if room <= 0 { 0 } else { (room + dil - 1) / dil };
        hi.min(self.kernel[d])
    }
}

/// A tensor's shape as four dims, or an error naming it.
fn dims4(t: &Tensor, name: &str) -> Result<[usize; 4], String> {
    match t.shape() {
        &[a, b, c, d] => Ok([a as usize, b as usize, c as usize, d as usize]),
        s => Err(format!("{name} must have rank 4, found rank {}", s.len())),
    }
}

/// For each letter of `canonical` (`NCHW`, `OIHW`), its position in
/// `layout`, when `layout` orders the same four letters (`NHWC`, `HWIO`,
/// `OHWI`). The compiler's StructInfo inference and legalization read
/// layouts with it too.
pub fn layout_permutation(layout: &str, canonical: &str) -> Option<[usize; 4]> {
    let letters: Vec<char> = layout.chars().collect();
    if letters.len() != 4 || canonical.chars().count() != 4 {
        return None;
    }
    let mut out = [0usize; 4];
    for (k, c) in canonical.chars().enumerate() {
        out[k] = letters.iter().position(|&l| l == c)?;
    }
    let mut seen = out;
    seen.sort_unstable();
    (seen == [0, 1, 2, 3]).then_some(out)
}

/// The layout attribute `name` (absent: `default`) and where each axis of
/// `canonical` is in it.
fn layout_axes(
    attrs: &KernelAttrs,
    name: &str,
    canonical: &str,
    default: &str,
) -> Result<(String, [usize; 4]), String> {
    let layout = match attrs.get(name) {
        None | Some(KernelAttr::None) => default.to_string(),
        Some(KernelAttr::Str(s)) => s.clone(),
        Some(other) => {
            return Err(format!(
                "attribute `{name}` must be a string, found {other:?}"
            ))
        }
    };
    match layout_permutation(&layout, canonical) {
        Some(axes) => Ok((layout, axes)),
        None => Err(format!(
            "{name} must be an ordering of {canonical}, found {layout}"
        )),
    }
}

/// `t` with its axes in the order `axes` (axis `k` of the result is axis
/// `axes[k]` of `t`), copied; `t` itself when that is its order.
fn permuted(t: &Tensor, axes: [usize; 4]) -> Result<Tensor, String> {
    if axes == [0, 1, 2, 3] {
        return Ok(t.clone());
    }
    if t.ndim() != 4 {
        return Err(format!("expected rank 4, found {}", fmt_shape(t.shape())));
    }
    fn run<T: crate::tensor::Element>(t: &Tensor, axes: [usize; 4]) -> Result<Value, String> {
        super::args::value_of(&view::<T>(t)?.permuted_axes(ndarray::IxDyn(&axes)))
    }
    let v = with_any!(t.dtype(), T => run::<T>(t, axes))?;
    match v {
        Value::Tensor(t) => Ok(t),
        other => Err(format!(
            "internal error: a permutation gave {}",
            other.describe()
        )),
    }
}

/// `relax.nn.conv2d(data, weight, strides, padding, dilation, groups,
/// data_layout, kernel_layout, out_layout, out_dtype)`: any ordering of
/// NCHW for the data and output and of OIHW for the weight (the data and
/// weight are permuted to NCHW and OIHW, the result from NCHW).
fn conv2d(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 2)?;
    let data = tensor_arg(args, 0, "data")?;
    let weight = tensor_arg(args, 1, "weight")?;
    let (data_layout, data_axes) = layout_axes(attrs, "data_layout", "NCHW", "NCHW")?;
    let (_, kernel_axes) = layout_axes(attrs, "kernel_layout", "OIHW", "OIHW")?;
    let (_, out_axes) = layout_axes(attrs, "out_layout", "NCHW", &data_layout)?;
    let nchw = conv2d_nchw(
        &permuted(data, data_axes)?,
        &permuted(weight, kernel_axes)?,
        attrs,
    )?;
    from_nchw(nchw, out_axes)
}

/// conv2d of NCHW data and OIHW weights.
fn conv2d_nchw(data: &Tensor, weight: &Tensor, attrs: &KernelAttrs) -> Result<Value, String> {
    let [n, c, h, w] = dims4(data, "data")?;
    let [o, cg, kh, kw] = dims4(weight, "weight")?;
    let groups = attrs.int("groups")?;
    check_range("groups", &[groups], 1)?;
    let g = groups as usize;
    if c != cg * g {
        return Err(format!(
            "input channels differ: data is {}, weight is {} with {groups} group(s)",
            fmt_shape(data.shape()),
            fmt_shape(weight.shape())
        ));
    }
    if o % g != 0 {
        return Err(format!(
            "the {o} output channels of weight do not divide into {groups} groups"
        ));
    }
    let win = Window::from_attrs(attrs, [kh as i64, kw as i64], false)?;
    let oh = win.out_extent(h as i64, 0)?;
    let ow = win.out_extent(w as i64, 1)?;
    checked_numel(&[n as i64, o as i64, oh, ow])?;
    let geo = ConvShape {
        data: [n, c, h, w],
        weight: [o, cg, kh, kw],
        out: [oh as usize, ow as usize],
        groups: g,
    };
    let out_dtype = attrs.dtype("out_dtype")?;
    if out_dtype.is_void() {
        let dtype = same_dtype(&[("data", data), ("weight", weight)])?;
        with_num!(dtype, T => {
            let (x, k) = (view::<T>(data)?, view::<T>(weight)?);
            conv_loop::<T>(slice(&x)?, slice(&k)?, &geo, &win)
        })
    } else {
        with_num!(out_dtype, T => {
            let (x, k) = (cast_to::<T>(data)?, cast_to::<T>(weight)?);
            conv_loop::<T>(slice(&x)?, slice(&k)?, &geo, &win)
        })
    }
}

/// `relax.nn.conv2d_transpose(data, weight, strides, padding,
/// output_padding, dilation, groups, …, out_dtype)` (module docs, item 6).
fn conv2d_transpose(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    check_arity(args, 2)?;
    let data = tensor_arg(args, 0, "data")?;
    let weight = tensor_arg(args, 1, "weight")?;
    for (name, canonical) in [
        ("data_layout", "NCHW"),
        ("kernel_layout", "IOHW"),
        ("out_layout", "NCHW"),
    ] {
        if let Some(KernelAttr::Str(l)) = attrs.get(name) {
            if l != canonical {
                return Err(format!("{name} must be {canonical}, found {l}"));
            }
        }
    }
    let [n, c, h, w] = dims4(data, "data")?;
    let [ci, og, kh, kw] = dims4(weight, "weight")?;
    let groups = attrs.int("groups")?;
    check_range("groups", &[groups], 1)?;
    let g = groups as usize;
    if c != ci || c % g != 0 {
        return Err(format!(
            "input channels differ: data is {}, weight is {} with {groups} group(s)",
            fmt_shape(data.shape()),
            fmt_shape(weight.shape())
        ));
    }
    let win = Window::from_attrs(attrs, [kh as i64, kw as i64], false)?;
    let out_pad = match attrs.get("output_padding") {
        None => [0, 0],
        Some(_) => {
            let v = attrs.ints("output_padding")?;
            match v.as_slice() {
                [a] => [*a, *a],
                [a, b] => [*a, *b],
                _ => {
                    return Err(format!(
                        "output_padding must have 1 or 2 values, found {}",
                        v.len()
                    ))
                }
            }
        }
    };
    check_range("output_padding", &out_pad, 0)?;
    let extent = |input: usize, d: usize| {
        (input as i64 - 1) * win.strides[d] - win.padding[d] - win.padding[d + 2]
            + win.dilation[d] * (win.kernel[d] - 1)
            + out_pad[d]
            + 1
    };
    let (oh, ow) = (extent(h, 0), extent(w, 1));
    if oh < 0 || ow < 0 {
        return Err(format!("the padding leaves no output ({oh} x {ow})"));
    }
    let o = og * g;
    checked_numel(&[n as i64, o as i64, oh, ow])?;
    let (oh, ow) = (oh as usize, ow as usize);
    fn run<T: Num>(
        x: &[T],
        k: &[T],
        dims: [usize; 7],
        [oh, ow]: [usize; 2],
        win: &Window,
        g: usize,
    ) -> Result<Value, String> {
        let [n, c, h, w, og, kh, kw] = dims;
        let o = og * g;
        let cg = c / g;
        let mut out = alloc::vec(n * o * oh * ow)?;
        out.resize(n * o * oh * ow, T::Acc::ZERO);
        for b in 0..n {
            for ic in 0..c {
                let group = ic / cg;
                for iy in 0..h {
                    for ix in 0..w {
                        let v = x[((b * c + ic) * h + iy) * w + ix].to_acc();
                        for oc in 0..og {
                            let out_c = group * og + oc;
                            for ky in 0..kh {
                                let y = iy as i64 * win.strides[0] - win.padding[0]
                                    + ky as i64 * win.dilation[0];
                                if !(0..oh as i64).contains(&y) {
                                    continue;
                                }
                                for kx in 0..kw {
                                    let xx = ix as i64 * win.strides[1] - win.padding[1]
                                        + kx as i64 * win.dilation[1];
                                    if !(0..ow as i64).contains(&xx) {
                                        continue;
                                    }
                                    let at = ((b * o + out_c) * oh + y as usize) * ow + xx as usize;
                                    let wk = k[((ic * og + oc) * kh + ky) * kw + kx];
                                    out[at] = T::Acc::mul_add(out[at], v, wk.to_acc());
                                }
                            }
                        }
                    }
                }
            }
        }
        let out = alloc::collect(out.len(), out.into_iter().map(T::from_acc))?;
        tensor_value(&[n, o, oh, ow], out)
    }
    let dims = [n, c, h, w, og, kh, kw];
    let out_dtype = attrs.dtype("out_dtype")?;
    if out_dtype.is_void() {
        let dtype = same_dtype(&[("data", data), ("weight", weight)])?;
        with_num!(dtype, T => {
            let (x, k) = (view::<T>(data)?, view::<T>(weight)?);
            run::<T>(slice(&x)?, slice(&k)?, dims, [oh, ow], &win, g)
        })
    } else {
        with_num!(out_dtype, T => {
            let (x, k) = (cast_to::<T>(data)?, cast_to::<T>(weight)?);
            run::<T>(slice(&x)?, slice(&k)?, dims, [oh, ow], &win, g)
        })
    }
}

/// The contiguous elements of an array (our views and casts are row-major).
fn slice<T, S>(a: &ndarray::ArrayBase<S, ndarray::IxDyn>) -> Result<&[T], String>
where
    S: ndarray::Data<Elem = T>,
{
    a.as_slice()
        .ok_or_else(|| "internal error: a tensor view is not contiguous".to_string())
}

/// The dims of one convolution.
struct ConvShape {
    /// N, C, H, W.
    data: [usize; 4],
    /// O, C / groups, KH, KW.
    weight: [usize; 4],
    /// Output height and width.
    out: [usize; 2],
    groups: usize,
}

/// The direct convolution: each output element sums its group's input
/// channels over the window. Returns the `(N, O, OH, OW)` result.
fn conv_loop<T: Num>(x: &[T], k: &[T], s: &ConvShape, win: &Window) -> Result<Value, String> {
    let [n, c, h, w] = s.data;
    let [o, cg, kh, kw] = s.weight;
    let [oh, ow] = s.out;
    let per_group = o / s.groups;
    let mut out = alloc::vec(n * o * oh * ow)?;
    for b in 0..n {
        for oc in 0..o {
            let first_ic = (oc / per_group) * cg;
            for oy in 0..oh {
                for ox in 0..ow {
                    let mut acc = T::Acc::ZERO;
                    for ci in 0..cg {
                        let plane = (b * c + first_ic + ci) * h;
                        let kplane = (oc * cg + ci) * kh;
                        for (ky, iy) in win.taps(oy, h, 0) {
                            for (kx, ix) in win.taps(ox, w, 1) {
                                acc = T::Acc::mul_add(
                                    acc,
                                    x[(plane + iy) * w + ix].to_acc(),
                                    k[(kplane + ky) * kw + kx].to_acc(),
                                );
                            }
                        }
                    }
                    out.push(T::from_acc(acc));
                }
            }
        }
    }
    tensor_value(&[n, o, oh, ow], out)
}

/// `relax.nn.max_pool2d(data, pool_size, strides, padding, dilation,
/// ceil_mode, layout, out_layout)`: any ordering of NCHW, permuted around
/// the NCHW loop.
fn max_pool2d(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    pool2d(args, attrs, false)
}

/// `relax.nn.avg_pool2d(data, …, count_include_pad, …)`: as `max_pool2d`,
/// averaging (module docs, item 5).
fn avg_pool2d(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    pool2d(args, attrs, true)
}

fn pool2d(args: &[Value], attrs: &KernelAttrs, average: bool) -> Result<Value, String> {
    check_arity(args, 1)?;
    let data = tensor_arg(args, 0, "data")?;
    let (layout, data_axes) = layout_axes(attrs, "layout", "NCHW", "NCHW")?;
    let (_, out_axes) = layout_axes(attrs, "out_layout", "NCHW", &layout)?;
    let nchw = pool2d_nchw(&permuted(data, data_axes)?, attrs, average)?;
    from_nchw(nchw, out_axes)
}

/// An NCHW result in the layout whose axes are `out_axes`.
fn from_nchw(nchw: Value, out_axes: [usize; 4]) -> Result<Value, String> {
    if out_axes == [0, 1, 2, 3] {
        return Ok(nchw);
    }
    // Output axis `out_axes[k]` is NCHW axis `k`.
    let mut back = [0usize; 4];
    for (k, &at) in out_axes.iter().enumerate() {
        back[at] = k;
    }
    match nchw {
        Value::Tensor(t) => Ok(Value::Tensor(permuted(&t, back)?)),
        other => Ok(other),
    }
}

/// Pooling of NCHW data: the max, or with `average` the mean.
fn pool2d_nchw(data: &Tensor, attrs: &KernelAttrs, average: bool) -> Result<Value, String> {
    let [n, c, h, w] = dims4(data, "data")?;
    let pool = pair(attrs, "pool_size")?;
    let win = Window::from_attrs(attrs, pool, attrs.bool_or("ceil_mode", false)?)?;
    let include_pad = attrs.bool_or("count_include_pad", false)?;
    let oh = win.out_extent(h as i64, 0)?;
    let ow = win.out_extent(w as i64, 1)?;
    checked_numel(&[n as i64, c as i64, oh, ow])?;
    let (oh, ow) = (oh as usize, ow as usize);
    let geo = [n * c, h, w, oh, ow];
    with_num!(data.dtype(), T => {
        let x = view::<T>(data)?;
        let out = if average {
            avg_pool_loop::<T>(slice(&x)?, geo, &win, include_pad)?
        } else {
            pool_loop::<T>(slice(&x)?, geo, &win)?
        };
        tensor_value(&[n, c, oh, ow], out)
    })
}

/// The max over each window of each `(h, w)` plane; `geo` is
/// `[planes, h, w, out_h, out_w]`.
fn pool_loop<T: Num>(x: &[T], geo: [usize; 5], win: &Window) -> Result<Vec<T>, String> {
    let [planes, h, w, oh, ow] = geo;
    let mut out = alloc::vec(planes * oh * ow)?;
    for p in 0..planes {
        for oy in 0..oh {
            for ox in 0..ow {
                let mut acc = T::LOWEST;
                for (_, iy) in win.taps(oy, h, 0) {
                    for (_, ix) in win.taps(ox, w, 1) {
                        acc = acc.maximum(x[(p * h + iy) * w + ix]);
                    }
                }
                out.push(acc);
            }
        }
    }
    Ok(out)
}

/// The mean over each window of each `(h, w)` plane (module docs, item 5).
fn avg_pool_loop<T: Num>(
    x: &[T],
    geo: [usize; 5],
    win: &Window,
    include_pad: bool,
) -> Result<Vec<T>, String> {
    let [planes, h, w, oh, ow] = geo;
    let count = |o: usize, input: usize, d: usize| -> i64 {
        if include_pad {
            win.padded_taps(o, input, d)
        } else {
            win.taps(o, input, d).count() as i64
        }
    };
    let mut out = alloc::vec(planes * oh * ow)?;
    for p in 0..planes {
        for oy in 0..oh {
            for ox in 0..ow {
                let mut acc = T::Acc::ZERO;
                for (_, iy) in win.taps(oy, h, 0) {
                    for (_, ix) in win.taps(ox, w, 1) {
                        acc = acc.add(x[(p * h + iy) * w + ix].to_acc());
                    }
                }
                let n = count(oy, h, 0) * count(ox, w, 1);
                out.push(if n == 0 {
                    T::ZERO
                } else {
                    T::from_acc(acc.div(T::Acc::from_wide(Wide::Int(n.into())))?)
                });
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data_type::DataType;
    use crate::kernels::testing::{assert_ok, ints, tv};

    /// Complete conv2d attributes (the defaults) with `over` replacing some.
    fn conv_attrs(over: &[(&str, KernelAttr)]) -> KernelAttrs {
        let mut a = vec![
            ("strides".to_string(), ints(&[1, 1])),
            ("padding".into(), ints(&[0, 0, 0, 0])),
            ("dilation".into(), ints(&[1, 1])),
            ("groups".into(), KernelAttr::Int(1)),
            ("data_layout".into(), KernelAttr::Str("NCHW".into())),
            ("kernel_layout".into(), KernelAttr::Str("OIHW".into())),
            ("out_layout".into(), KernelAttr::None),
            ("out_dtype".into(), KernelAttr::DataType(DataType::void())),
        ];
        for (k, v) in over {
            a.iter_mut().find(|(n, _)| n == k).unwrap().1 = v.clone();
        }
        KernelAttrs(a)
    }
    fn pool_attrs(over: &[(&str, KernelAttr)]) -> KernelAttrs {
        let mut a = vec![
            ("pool_size".to_string(), ints(&[1, 1])),
            ("strides".into(), ints(&[1, 1])),
            ("padding".into(), ints(&[0, 0, 0, 0])),
            ("dilation".into(), ints(&[1, 1])),
            ("ceil_mode".into(), KernelAttr::Bool(false)),
            ("layout".into(), KernelAttr::Str("NCHW".into())),
        ];
        for (k, v) in over {
            a.iter_mut().find(|(n, _)| n == k).unwrap().1 = v.clone();
        }
        KernelAttrs(a)
    }
    fn nine() -> Value {
        tv(&[1, 1, 3, 3], (1..=9).map(|v| v as f32).collect())
    }

    #[test]
    fn conv2d_plain() {
        let k = tv(&[1, 1, 2, 2], vec![1.0f32, 0.0, 0.0, 1.0]);
        assert_ok(
            conv2d(&[nine(), k], &conv_attrs(&[])),
            &[1, 1, 2, 2],
            vec![6.0f32, 8.0, 12.0, 14.0],
        );
        // Two images, two output channels, integers.
        let x = tv(&[2, 1, 1, 2], vec![1i32, 2, 3, 4]);
        let k = tv(&[2, 1, 1, 1], vec![10i32, -1]);
        assert_ok(
            conv2d(&[x, k], &conv_attrs(&[])),
            &[2, 2, 1, 2],
            vec![10, 20, -1, -2, 30, 40, -3, -4],
        );
    }

    #[test]
    fn conv2d_stride_padding_dilation() {
        let ones = tv(&[1, 1, 3, 3], vec![1.0f32; 9]);
        assert_ok(
            conv2d(
                &[nine(), ones],
                &conv_attrs(&[("strides", ints(&[2, 2])), ("padding", ints(&[1]))]),
            ),
            &[1, 1, 2, 2],
            vec![12.0f32, 16.0, 24.0, 28.0],
        );
        let ones2 = tv(&[1, 1, 2, 2], vec![1.0f32; 4]);
        assert_ok(
            conv2d(&[nine(), ones2], &conv_attrs(&[("dilation", ints(&[2]))])),
            &[1, 1, 1, 1],
            vec![20.0f32],
        );
        // Asymmetric padding (top, left, bottom, right) = (1, 0, 0, 1).
        let x = tv(&[1, 1, 2, 2], vec![1.0f64, 2.0, 3.0, 4.0]);
        let one = tv(&[1, 1, 1, 1], vec![1.0f64]);
        assert_ok(
            conv2d(&[x, one], &conv_attrs(&[("padding", ints(&[1, 0, 0, 1]))])),
            &[1, 1, 3, 3],
            vec![0.0f64, 0.0, 0.0, 1.0, 2.0, 0.0, 3.0, 4.0, 0.0],
        );
    }

    #[test]
    fn conv2d_groups_and_channel_sums() {
        let x = tv(
            &[1, 2, 2, 2],
            vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
        );
        let k = tv(&[2, 1, 1, 1], vec![10.0f32, 100.0]);
        assert_ok(
            conv2d(
                &[x.clone(), k],
                &conv_attrs(&[("groups", KernelAttr::Int(2))]),
            ),
            &[1, 2, 2, 2],
            vec![10.0f32, 20.0, 30.0, 40.0, 500.0, 600.0, 700.0, 800.0],
        );
        // Four output channels over two groups: channels 0-1 read input 0,
        // channels 2-3 read input 1.
        let k = tv(&[4, 1, 1, 1], vec![1.0f32, -1.0, 2.0, 0.0]);
        let r = conv2d(
            &[x.clone(), k],
            &conv_attrs(&[("groups", KernelAttr::Int(2))]),
        )
        .unwrap();
        assert_eq!(
            r.as_tensor().unwrap().to_vec::<f32>().unwrap(),
            vec![
                1.0, 2.0, 3.0, 4.0, -1.0, -2.0, -3.0, -4.0, 10.0, 12.0, 14.0, 16.0, 0.0, 0.0, 0.0,
                0.0
            ]
        );
        let k = tv(&[1, 2, 1, 1], vec![1.0f32, 1.0]);
        assert_ok(
            conv2d(&[x, k], &conv_attrs(&[])),
            &[1, 1, 2, 2],
            vec![6.0f32, 8.0, 10.0, 12.0],
        );
    }

    #[test]
    fn conv2d_out_dtype_and_empty() {
        let x = tv(&[1, 1, 1, 2], vec![100i8, 100]);
        let k = tv(&[1, 1, 1, 2], vec![1i8, 1]);
        assert_ok(
            conv2d(
                &[x, k],
                &conv_attrs(&[("out_dtype", KernelAttr::DataType(DataType::i32()))]),
            ),
            &[1, 1, 1, 1],
            vec![200i32],
        );
        let x = tv::<f32>(&[0, 1, 3, 3], vec![]);
        let k = tv(&[2, 1, 2, 2], vec![1.0f32; 8]);
        assert_ok(
            conv2d(&[x, k], &conv_attrs(&[])),
            &[0, 2, 2, 2],
            Vec::<f32>::new(),
        );
    }

    /// NHWC data, HWIO or OHWI weights: the NCHW result, permuted.
    #[test]
    fn conv2d_layouts_permute_around_nchw() {
        let data: Vec<f32> = (0..2 * 3 * 4 * 5).map(|i| (i % 7) as f32 - 3.0).collect();
        let weight: Vec<f32> = (0..6 * 3 * 2 * 2).map(|i| (i % 5) as f32 * 0.5).collect();
        let x = tv(&[2, 3, 4, 5], data);
        let w = tv(&[6, 3, 2, 2], weight);
        let nchw = conv2d(&[x.clone(), w.clone()], &conv_attrs(&[])).unwrap();
        let perm = |v: &Value, axes: [usize; 4]| {
            Value::Tensor(permuted(v.as_tensor().unwrap(), axes).unwrap())
        };
        let (x_nhwc, w_hwio, w_ohwi) = (
            perm(&x, [0, 2, 3, 1]),
            perm(&w, [2, 3, 1, 0]),
            perm(&w, [0, 2, 3, 1]),
        );
        let want_nhwc = perm(&nchw, [0, 2, 3, 1]);
        let layout = |d: &str, k: &str, o: Option<&str>| {
            let mut a = vec![
                ("data_layout", KernelAttr::Str(d.into())),
                ("kernel_layout", KernelAttr::Str(k.into())),
            ];
            if let Some(o) = o {
                a.push(("out_layout", KernelAttr::Str(o.into())));
            }
            conv_attrs(&a)
        };
        assert_eq!(
            conv2d(&[x_nhwc.clone(), w_hwio], &layout("NHWC", "HWIO", None)).unwrap(),
            want_nhwc
        );
        assert_eq!(
            conv2d(&[x_nhwc, w_ohwi], &layout("NHWC", "OHWI", Some("NCHW"))).unwrap(),
            nchw
        );
    }

    #[test]
    fn conv2d_errors() {
        let k = tv(&[1, 1, 2, 2], vec![1.0f32; 4]);
        let a = conv_attrs(&[]);
        assert_eq!(
            conv2d(
                &[nine(), k.clone()],
                &conv_attrs(&[("data_layout", KernelAttr::Str("NCHWX".into()))])
            )
            .unwrap_err(),
            "data_layout must be an ordering of NCHW, found NCHWX"
        );
        let flat = tv(&[3, 3], vec![0.0f32; 9]);
        assert_eq!(
            conv2d(&[flat, k.clone()], &a).unwrap_err(),
            "data must have rank 4, found rank 2"
        );
        let k2 = tv(&[1, 2, 2, 2], vec![1.0f32; 8]);
        assert_eq!(
            conv2d(&[nine(), k2], &a).unwrap_err(),
            "input channels differ: data is (1, 1, 3, 3), weight is (1, 2, 2, 2) with 1 group(s)"
        );
        let x2 = tv(&[1, 2, 3, 3], vec![0.0f32; 18]);
        let k3 = tv(&[3, 1, 1, 1], vec![1.0f32; 3]);
        assert!(conv2d(&[x2, k3], &conv_attrs(&[("groups", KernelAttr::Int(2))])).is_err());
        let big = tv(&[1, 1, 5, 5], vec![1.0f32; 25]);
        assert!(conv2d(&[nine(), big], &a).is_err());
        assert_eq!(
            conv2d(
                &[nine(), k.clone()],
                &conv_attrs(&[("strides", ints(&[0, 1]))])
            )
            .unwrap_err(),
            "strides must be positive, found 0"
        );
        assert!(conv2d(
            &[nine(), k.clone()],
            &conv_attrs(&[("padding", ints(&[1, 1, 1]))])
        )
        .is_err());
        assert!(conv2d(
            &[nine(), k.clone()],
            &conv_attrs(&[("padding", ints(&[-1]))])
        )
        .is_err());
        assert!(conv2d(
            &[nine(), k.clone()],
            &conv_attrs(&[("dilation", ints(&[i64::MAX]))])
        )
        .is_err());
        assert!(conv2d(
            &[nine(), k.clone()],
            &conv_attrs(&[("groups", KernelAttr::Int(0))])
        )
        .is_err());
        let ki = tv(&[1, 1, 2, 2], vec![1i32; 4]);
        assert_eq!(
            conv2d(&[nine(), ki], &a).unwrap_err(),
            "dtypes differ: data is float32, weight is int32"
        );
        assert!(conv2d(&[nine()], &a).is_err());
    }

    #[test]
    fn conv2d_transpose_scatters_each_input_through_the_kernel() {
        // One input pixel, stride 2: the kernel lands at its position.
        let x = tv(&[1, 1, 2, 2], vec![1.0f32, 2.0, 3.0, 4.0]);
        let k = tv(&[1, 1, 2, 2], vec![1.0f32, 10.0, 100.0, 1000.0]);
        let a = conv_attrs(&[
            ("strides", ints(&[2, 2])),
            ("kernel_layout", KernelAttr::Str("IOHW".into())),
        ]);
        let mut a = a;
        a.0.push(("output_padding".into(), ints(&[0, 0])));
        assert_ok(
            conv2d_transpose(&[x.clone(), k.clone()], &a),
            &[1, 1, 4, 4],
            vec![
                1.0f32, 10.0, 2.0, 20.0, 100.0, 1000.0, 200.0, 2000.0, 3.0, 30.0, 4.0, 40.0, 300.0,
                3000.0, 400.0, 4000.0,
            ],
        );
        // Stride 1 overlaps the taps; padding 1 crops the border.
        let mut b = conv_attrs(&[
            ("padding", ints(&[1])),
            ("kernel_layout", KernelAttr::Str("IOHW".into())),
        ]);
        b.0.push(("output_padding".into(), ints(&[0])));
        assert_ok(
            conv2d_transpose(&[x, k], &b),
            &[1, 1, 1, 1],
            vec![1000.0f32 + 200.0 + 30.0 + 4.0],
        );
        // Groups: two channels, each its own one-to-one map.
        let x = tv(&[1, 2, 1, 1], vec![2i32, 3]);
        let k = tv(&[2, 1, 1, 1], vec![5i32, 7]);
        let mut g = conv_attrs(&[
            ("groups", KernelAttr::Int(2)),
            ("kernel_layout", KernelAttr::Str("IOHW".into())),
        ]);
        g.0.push(("output_padding".into(), ints(&[0])));
        assert_ok(
            conv2d_transpose(&[x, k], &g),
            &[1, 2, 1, 1],
            vec![10i32, 21],
        );
    }

    #[test]
    fn avg_pool2d_counts_the_taps_inside_or_the_padded_ones() {
        let a = pool_attrs(&[("pool_size", ints(&[2, 2]))]);
        assert_ok(
            avg_pool2d(&[nine()], &a),
            &[1, 1, 2, 2],
            vec![3.0f32, 4.0, 6.0, 7.0],
        );
        // 3x3 windows, stride 2, padding 1: the corner window holds 1, 2,
        // 4, 5 inside the input and 5 padded taps.
        let padded = |include: bool| {
            let mut a = pool_attrs(&[
                ("pool_size", ints(&[3, 3])),
                ("strides", ints(&[2, 2])),
                ("padding", ints(&[1])),
            ]);
            a.0.push(("count_include_pad".into(), KernelAttr::Bool(include)));
            a
        };
        assert_ok(
            avg_pool2d(&[nine()], &padded(false)),
            &[1, 1, 2, 2],
            vec![3.0f32, 4.0, 6.0, 7.0],
        );
        assert_ok(
            avg_pool2d(&[nine()], &padded(true)),
            &[1, 1, 2, 2],
            vec![12.0f32 / 9.0, 16.0 / 9.0, 24.0 / 9.0, 28.0 / 9.0],
        );
        // ceil_mode: the last window hangs past the padding; its taps
        // there never count, even with count_include_pad.
        let mut a = pool_attrs(&[
            ("pool_size", ints(&[2, 2])),
            ("strides", ints(&[2, 2])),
            ("ceil_mode", KernelAttr::Bool(true)),
        ]);
        a.0.push(("count_include_pad".into(), KernelAttr::Bool(true)));
        assert_ok(
            avg_pool2d(&[nine()], &a),
            &[1, 1, 2, 2],
            vec![3.0f32, 4.5, 7.5, 9.0],
        );
        // Integers divide as C does.
        let x = tv(&[1, 1, 1, 3], vec![1i32, 2, 4]);
        let a = pool_attrs(&[("pool_size", ints(&[1, 2]))]);
        assert_ok(avg_pool2d(&[x], &a), &[1, 1, 1, 2], vec![1i32, 3]);
    }

    #[test]
    fn max_pool2d_windows() {
        let x = tv(&[1, 1, 4, 4], (0..16).map(|v| v as f32).collect());
        let a = pool_attrs(&[("pool_size", ints(&[2, 2])), ("strides", ints(&[2, 2]))]);
        assert_ok(
            max_pool2d(&[x], &a),
            &[1, 1, 2, 2],
            vec![5.0f32, 7.0, 13.0, 15.0],
        );
        // Padding counts as -inf: every value is negative, none becomes 0.
        let neg = tv(&[1, 1, 3, 3], (1..=9).map(|v| -(v as f64)).collect());
        let a = pool_attrs(&[
            ("pool_size", ints(&[3, 3])),
            ("strides", ints(&[2, 2])),
            ("padding", ints(&[1])),
        ]);
        assert_ok(
            max_pool2d(&[neg], &a),
            &[1, 1, 2, 2],
            vec![-1.0f64, -2.0, -4.0, -5.0],
        );
        // Dilation 2 skips the centre.
        let x = tv(&[1, 1, 3, 3], vec![9i32, 0, 1, 0, 50, 0, 2, 0, 3]);
        let a = pool_attrs(&[("pool_size", ints(&[2])), ("dilation", ints(&[2]))]);
        assert_ok(max_pool2d(&[x], &a), &[1, 1, 1, 1], vec![9i32]);
    }

    #[test]
    fn max_pool2d_ceil_mode_and_all_padding_windows() {
        let x = tv(&[1, 1, 3, 3], (0..9).map(|v| v as f32).collect());
        let floor = pool_attrs(&[("pool_size", ints(&[2, 2])), ("strides", ints(&[2, 2]))]);
        assert_ok(
            max_pool2d(std::slice::from_ref(&x), &floor),
            &[1, 1, 1, 1],
            vec![4.0f32],
        );
        let ceil = pool_attrs(&[
            ("pool_size", ints(&[2, 2])),
            ("strides", ints(&[2, 2])),
            ("ceil_mode", KernelAttr::Bool(true)),
        ]);
        assert_ok(
            max_pool2d(&[x], &ceil),
            &[1, 1, 2, 2],
            vec![4.0f32, 5.0, 7.0, 8.0],
        );
        let one = tv(&[1, 1, 1, 1], vec![3.0f32]);
        let pad = pool_attrs(&[("padding", ints(&[1]))]);
        let r = max_pool2d(&[one], &pad).unwrap();
        let r = r.as_tensor().unwrap().to_vec::<f32>().unwrap();
        assert_eq!(r[4], 3.0);
        assert!(r
            .iter()
            .enumerate()
            .all(|(i, &v)| i == 4 || v == f32::NEG_INFINITY));
        let i = tv(&[1, 1, 1, 1], vec![-5i8]);
        assert_ok(
            max_pool2d(&[i], &pool_attrs(&[("padding", ints(&[0, 1]))])),
            &[1, 1, 1, 3],
            vec![i8::MIN, -5, i8::MIN],
        );
        let e = tv::<f32>(&[1, 0, 2, 2], vec![]);
        assert_ok(max_pool2d(&[e], &floor), &[1, 0, 1, 1], Vec::<f32>::new());
    }

    #[test]
    fn taps_are_exactly_the_in_bounds_window_positions() {
        for stride in 1..4 {
            for dil in 1..4 {
                for pad in 0..4 {
                    for k in 1..5 {
                        for input in 0..6usize {
                            let win = Window {
                                kernel: [k, k],
                                strides: [stride, stride],
                                dilation: [dil, dil],
                                padding: [pad, pad, pad, pad],
                                ceil_mode: false,
                            };
                            for o in 0..6usize {
                                let want: Vec<(usize, usize)> = (0..k as usize)
                                    .filter_map(|t| {
                                        let p = o as i64 * stride + t as i64 * dil - pad;
                                        (0 <= p && p < input as i64).then_some((t, p as usize))
                                    })
                                    .collect();
                                let got: Vec<_> = win.taps(o, input, 0).collect();
                                assert_eq!(
                                    got, want,
                                    "s{stride} d{dil} p{pad} k{k} in{input} o{o}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn huge_windows_only_visit_the_input() {
        let x = tv(&[1, 1, 2, 2], vec![1.0f32, 4.0, 2.0, 3.0]);
        let big = 1i64 << 30;
        let a = pool_attrs(&[
            ("pool_size", ints(&[big])),
            ("strides", ints(&[big])),
            ("padding", ints(&[big])),
        ]);
        // Output row/column 0 starts 2^30 before the input and its window
        // ends just before it: wholly padding. Row/column 1 starts at 0.
        let ninf = f32::NEG_INFINITY;
        assert_ok(
            max_pool2d(&[x], &a),
            &[1, 1, 2, 2],
            vec![ninf, ninf, ninf, 4.0f32],
        );
    }

    #[test]
    fn max_pool2d_errors() {
        let x = tv(&[1, 1, 2, 2], vec![0.0f32; 4]);
        // A window one larger than the input leaves no position; two larger
        // would need a negative extent.
        assert_ok(
            max_pool2d(
                std::slice::from_ref(&x),
                &pool_attrs(&[("pool_size", ints(&[3]))]),
            ),
            &[1, 1, 0, 0],
            Vec::<f32>::new(),
        );
        assert!(max_pool2d(
            std::slice::from_ref(&x),
            &pool_attrs(&[("pool_size", ints(&[4]))])
        )
        .is_err());
        assert_eq!(
            max_pool2d(
                std::slice::from_ref(&x),
                &pool_attrs(&[("pool_size", ints(&[0]))])
            )
            .unwrap_err(),
            "pool_size must be positive, found 0"
        );
        assert_eq!(
            max_pool2d(
                std::slice::from_ref(&x),
                &pool_attrs(&[("layout", KernelAttr::Str("NCH".into()))])
            )
            .unwrap_err(),
            "layout must be an ordering of NCHW, found NCH"
        );
        // NHWC gives the NCHW result, permuted.
        let data: Vec<f32> = (0..2 * 3 * 4 * 4).map(|i| ((i * 7) % 11) as f32).collect();
        let x4 = tv(&[2, 3, 4, 4], data);
        let two = pool_attrs(&[("pool_size", ints(&[2, 2])), ("strides", ints(&[2, 2]))]);
        let nchw = max_pool2d(std::slice::from_ref(&x4), &two).unwrap();
        let nhwc =
            |v: &Value| Value::Tensor(permuted(v.as_tensor().unwrap(), [0, 2, 3, 1]).unwrap());
        let mut attrs = two.0.clone();
        attrs.iter_mut().find(|(n, _)| n == "layout").unwrap().1 = KernelAttr::Str("NHWC".into());
        assert_eq!(
            max_pool2d(&[nhwc(&x4)], &KernelAttrs(attrs)).unwrap(),
            nhwc(&nchw)
        );
        assert!(max_pool2d(&[x], &pool_attrs(&[("strides", ints(&[1, 1, 1]))])).is_err());
        let b = tv(&[1, 1, 1, 1], vec![true]);
        assert!(max_pool2d(&[b], &pool_attrs(&[])).is_err());
        let flat = tv(&[2, 2], vec![0.0f32; 4]);
        assert!(max_pool2d(&[flat], &pool_attrs(&[])).is_err());
    }
}
