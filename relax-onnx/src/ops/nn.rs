//! Neural-network ops.
//!
//! 1. `Conv`, `MaxPool` and `AveragePool` map to `nn.conv2d`,
//!    `nn.max_pool2d` and `nn.avg_pool2d` (ONNX's
//!    `pads` = `[top, left, bottom, right]`, as Relax's 4-element
//!    padding). A 1-d one runs as 2-d on a height of 1. `auto_pad` is
//!    resolved to pads from the static input size. 3-d ones are written
//!    with the 2-d ops (`volume.rs`). `ConvTranspose` (1-d and 2-d) maps to
//!    `nn.conv2d_transpose` (3-d: over the depth taps, `volume.rs`), its `output_shape` and `auto_pad` turned into
//!    pads by ONNX's formula; a negative pad (an `output_shape` past the
//!    full result) widens the output with zeros before the bias.
//!    `LpPool` is `(avg_pool(|x|^p) · window size)^(1/p)`, the average
//!    counting the padding.
//! 2. `BatchNormalization` in training mode is `nn.batch_norm` with
//!    `training` set; in inference it is `x · a + b` with per-channel
//!    `a = scale / sqrt(var + ε)` and `b = bias - mean · a`, which fold to
//!    constants when the statistics are (TVM's frontend emits
//!    `nn.batch_norm` and leaves that to DecomposeOpsForInference and
//!    FoldConstant); `InstanceNormalization` is written with mean,
//!    subtract, sqrt, divide.
//! 3. `LRN` sums squares over a window of channels as a 2-d convolution
//!    with ones on `(N, 1, C, H·W)`, then `x / (bias + α/size · sum)^β`.
//! 4. `Gemm` is `alpha · A'B' + beta · C` with `permute_dims` for the
//!    transposes; `MatMul` is `matmul`.
//! 5. `Softmax`/`LogSoftmax` before opset 13 work on the input coerced to
//!    2-d at `axis` (default 1): a reshape around a softmax over the last
//!    axis unless `axis` is already the last.
//! 6. `Dropout` at inference is the identity; its mask, when asked for, is
//!    all true.

use super::{ints, normalize_axes, product, shape, Ctx};
use relax_core::ir::{AttrValue, Attrs, Expr, PrimExpr};
use relax_runtime::{Error, Tensor};

/// The spatial window attributes of `Conv` and the pools, for `k` spatial
/// dims with kernel `kernel`: strides, dilations, and begin/end pads.
struct Window {
    strides: Vec<i64>,
    dilations: Vec<i64>,
    pads: Vec<i64>,
}

/// The largest window value or spatial dim the converters compute with:
/// every product of two stays far inside `i64`.
const LIMIT: i64 = i32::MAX as i64;

/// Checks that each of `values` (the attribute `name`) is in `lo..=LIMIT`.
fn in_range(cx: &Ctx, name: &str, values: &[i64], lo: i64) -> Result<(), Error> {
    match values.iter().find(|&&v| !(lo..=LIMIT).contains(&v)) {
        Some(bad) => Err(cx.error(format!("{name} {values:?}: {bad} is not in {lo}..=2^31-1"))),
        None => Ok(()),
    }
}

fn window(cx: &Ctx, x: &Expr, kernel: &[i64]) -> Result<Window, Error> {
    let k = kernel.len();
    let strides = cx.node.ints("strides")?.unwrap_or_else(|| vec![1; k]);
    let dilations = cx.node.ints("dilations")?.unwrap_or_else(|| vec![1; k]);
    if strides.len() != k || dilations.len() != k {
        return Err(cx.error(format!(
            "strides {strides:?} and dilations {dilations:?} must have {k} values"
        )));
    }
    in_range(cx, "kernel_shape", kernel, 1)?;
    in_range(cx, "strides", &strides, 1)?;
    in_range(cx, "dilations", &dilations, 1)?;
    let auto_pad = cx
        .node
        .string("auto_pad")?
        .unwrap_or_else(|| "NOTSET".into());
    let pads = match auto_pad.as_str() {
        "NOTSET" => cx.node.ints("pads")?.unwrap_or_else(|| vec![0; 2 * k]),
        "VALID" => vec![0; 2 * k],
        "SAME_UPPER" | "SAME_LOWER" => {
            let dims = cx.static_dims(x)?;
            in_range(cx, "the input's dims", &dims, 0)?;
            let spatial = &dims[dims.len() - k..];
            let mut begin = Vec::new();
            let mut end = Vec::new();
            for i in 0..k {
                let out = (spatial[i] + strides[i] - 1) / strides[i];
                let total = ((out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1
                    - spatial[i])
                    .max(0);
                let small = total / 2;
                let (b, e) = if auto_pad == "SAME_UPPER" {
                    (small, total - small)
                } else {
                    (total - small, small)
                };
                begin.push(b);
                end.push(e);
            }
            begin.into_iter().chain(end).collect()
        }
        other => return Err(cx.error(format!("auto_pad `{other}` is not an ONNX value"))),
    };
    if pads.len() != 2 * k {
        return Err(cx.error(format!("pads {pads:?} must have {} values", 2 * k)));
    }
    in_range(cx, "pads", &pads, 0)?;
    Ok(Window {
        strides,
        dilations,
        pads,
    })
}

/// A 3-d window's depth part and its height/width part as a 2-d window.
fn split_depth(w: &Window) -> (super::volume::Depth, Window) {
    let depth = super::volume::Depth {
        kernel: 0,
        stride: w.strides[0],
        dilation: w.dilations[0],
        before: w.pads[0],
        after: w.pads[3],
    };
    let plane = Window {
        strides: w.strides[1..].to_vec(),
        dilations: w.dilations[1..].to_vec(),
        pads: vec![w.pads[1], w.pads[2], w.pads[4], w.pads[5]],
    };
    (depth, plane)
}

/// `x` with an axis of 1 inserted at 2 (a 1-d op run as 2-d).
fn as_2d(cx: &mut Ctx, x: Expr) -> Result<Expr, Error> {
    let attrs = Attrs::from_pairs([("axis", ints([2]))]);
    cx.call("relax.expand_dims", vec![x], attrs)
}

/// The inverse of [`as_2d`]: the result of a 1-d op run as 2-d.
fn from_2d(cx: &mut Ctx, y: Expr) -> Result<Expr, Error> {
    let attrs = Attrs::from_pairs([("axis", ints([2]))]);
    cx.call("relax.squeeze", vec![y], attrs)
}

/// `y` plus the per-channel `bias` (of `channels` values), if any.
fn add_bias(
    cx: &mut Ctx,
    y: Expr,
    bias: Option<Expr>,
    channels: i64,
    ndim: usize,
) -> Result<Expr, Error> {
    match bias {
        Some(b) => {
            let b = per_channel(cx, b, PrimExpr::int(channels), ndim)?;
            cx.op2("relax.add", y, b)
        }
        None => Ok(y),
    }
}

/// `w` for 2-d: 1-d windows get a height of 1 (stride, dilation 1, no
/// padding).
fn widen(w: &Window) -> Window {
    Window {
        strides: [vec![1], w.strides.clone()].concat(),
        dilations: [vec![1], w.dilations.clone()].concat(),
        pads: vec![0, w.pads[0], 0, w.pads[1]],
    }
}

fn spatial_rank(cx: &Ctx, x: &Expr) -> Result<usize, Error> {
    let (dims, _) = cx.tensor(x)?;
    match dims.len() {
        3 => Ok(1),
        4 => Ok(2),
        5 => Ok(3),
        n => Err(cx.error(format!(
            "a {}-d input is not supported (1-d, 2-d and 3-d are)",
            n.saturating_sub(2)
        ))),
    }
}

pub fn conv(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&[
        "auto_pad",
        "dilations",
        "group",
        "kernel_shape",
        "pads",
        "strides",
    ])?;
    let x = cx.input(0)?;
    let w = cx.input(1)?;
    let bias = cx.opt_input(2)?;
    conv_of(cx, x, w, bias)
}

/// The node's convolution (its `Conv` attributes) of `x` by `w`, plus
/// `bias` per output channel if given.
pub fn conv_of(cx: &mut Ctx, x: Expr, w: Expr, bias: Option<Expr>) -> Result<Vec<Expr>, Error> {
    let k = spatial_rank(cx, &x)?;
    let w_dims = cx.static_dims(&w)?;
    if w_dims.len() != k + 2 {
        return Err(cx.error(format!(
            "the weight has rank {}, and a {k}-d convolution needs {}",
            w_dims.len(),
            k + 2
        )));
    }
    let kernel = cx
        .node
        .ints("kernel_shape")?
        .unwrap_or_else(|| w_dims[2..].to_vec());
    if kernel.len() != k {
        return Err(cx.error(format!("kernel_shape {kernel:?} must have {k} values")));
    }
    let mut win = window(cx, &x, &kernel)?;
    let group = cx.node.int_or("group", 1)?;
    let attrs = |win: Window| conv_attrs(win, group);
    let mut y = if k == 3 {
        let (mut depth, plane) = split_depth(&win);
        depth.kernel = kernel[0];
        super::volume::conv3d(cx, x, w, depth, attrs(plane))?
    } else {
        let (x2, w2) = if k == 1 {
            win = widen(&win);
            (as_2d(cx, x)?, as_2d(cx, w)?)
        } else {
            (x, w)
        };
        cx.call("relax.nn.conv2d", vec![x2, w2], attrs(win))?
    };
    y = add_bias(cx, y, bias, w_dims[0], 2 + k.max(2))?;
    if k == 1 {
        y = from_2d(cx, y)?;
    }
    Ok(vec![y])
}

/// A convolution's attributes for `relax.nn.conv2d` (or a plane of
/// `conv3d`).
fn conv_attrs(win: Window, group: i64) -> Attrs {
    Attrs::from_pairs([
        ("strides", ints(win.strides)),
        ("padding", ints(win.pads)),
        ("dilation", ints(win.dilations)),
        ("groups", AttrValue::Int(group)),
    ])
}

/// The `relax.nn.conv2d` attributes of this node's convolution of `x` by
/// `w` (`Conv`'s attributes, as [`conv_of`] reads them), or `None` when it
/// is not 2-d.
pub fn conv2d_attrs(cx: &Ctx, x: &Expr, w: &Expr) -> Result<Option<Attrs>, Error> {
    if spatial_rank(cx, x)? != 2 {
        return Ok(None);
    }
    let w_dims = cx.static_dims(w)?;
    if w_dims.len() != 4 {
        return Err(cx.error(format!(
            "the weight has rank {}, and a 2-d convolution needs 4",
            w_dims.len()
        )));
    }
    let kernel = cx
        .node
        .ints("kernel_shape")?
        .unwrap_or_else(|| w_dims[2..].to_vec());
    if kernel.len() != 2 {
        return Err(cx.error(format!("kernel_shape {kernel:?} must have 2 values")));
    }
    let win = window(cx, x, &kernel)?;
    let group = cx.node.int_or("group", 1)?;
    Ok(Some(conv_attrs(win, group)))
}

pub fn conv_transpose(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&[
        "auto_pad",
        "dilations",
        "group",
        "kernel_shape",
        "output_padding",
        "output_shape",
        "pads",
        "strides",
    ])?;
    let x = cx.input(0)?;
    let w = cx.input(1)?;
    let bias = cx.opt_input(2)?;
    let k = spatial_rank(cx, &x)?;
    if k > 3 {
        return Err(cx.error(format!(
            "{k}-d ConvTranspose is not supported (1-d, 2-d and 3-d are)"
        )));
    }
    let x_dims = cx.static_dims(&x)?;
    let w_dims = cx.static_dims(&w)?;
    in_range(cx, "the input's dims", &x_dims, 0)?;
    in_range(cx, "the weight's dims", &w_dims, 0)?;
    if w_dims.len() != k + 2 {
        return Err(cx.error(format!(
            "the weight has rank {}, and a {k}-d transposed convolution needs {}",
            w_dims.len(),
            k + 2
        )));
    }
    let group = cx.node.int_or("group", 1)?;
    in_range(cx, "group", &[group], 1)?;
    let kernel = cx
        .node
        .ints("kernel_shape")?
        .unwrap_or_else(|| w_dims[2..].to_vec());
    let strides = cx.node.ints("strides")?.unwrap_or_else(|| vec![1; k]);
    let dilations = cx.node.ints("dilations")?.unwrap_or_else(|| vec![1; k]);
    let out_pad = cx
        .node
        .ints("output_padding")?
        .unwrap_or_else(|| vec![0; k]);
    if [&kernel, &strides, &dilations, &out_pad]
        .iter()
        .any(|v| v.len() != k)
    {
        return Err(cx.error(format!(
            "kernel_shape, strides, dilations and output_padding must have {k} values"
        )));
    }
    in_range(cx, "kernel_shape", &kernel, 1)?;
    in_range(cx, "strides", &strides, 1)?;
    in_range(cx, "dilations", &dilations, 1)?;
    in_range(cx, "output_padding", &out_pad, 0)?;
    if let Some(s) = cx.node.ints("output_shape")? {
        in_range(cx, "output_shape", &s, 0)?;
    }
    let auto_pad = cx
        .node
        .string("auto_pad")?
        .unwrap_or_else(|| "NOTSET".into());
    let output_shape = cx.node.ints("output_shape")?;
    let pads = if output_shape.is_some() || auto_pad.starts_with("SAME") {
        // The pads that give the requested output (ONNX's formula).
        let spatial = &x_dims[2..];
        let target: Vec<i64> = match &output_shape {
            Some(s) => s[s.len().saturating_sub(k)..].to_vec(),
            None => (0..k).map(|i| spatial[i] * strides[i]).collect(),
        };
        let mut begin = Vec::new();
        let mut end = Vec::new();
        for i in 0..k {
            let total =
                strides[i] * (spatial[i] - 1) + out_pad[i] + ((kernel[i] - 1) * dilations[i] + 1)
                    - target[i];
            // Floor division, as ONNX writes it (a negative total puts
            // the odd row at the end).
            let half = total.div_euclid(2);
            if auto_pad == "SAME_UPPER" {
                begin.push(half);
                end.push(total - half);
            } else {
                begin.push(total - half);
                end.push(half);
            }
        }
        begin.into_iter().chain(end).collect()
    } else {
        cx.node.ints("pads")?.unwrap_or_else(|| vec![0; 2 * k])
    };
    if pads.len() != 2 * k || pads.iter().any(|&p| !(-LIMIT..=LIMIT).contains(&p)) {
        return Err(cx.error(format!(
            "pads {pads:?} are not {} values in -2^31+1..2^31",
            2 * k
        )));
    }
    // A negative pad (from an output_shape past the full result) widens
    // the output by rows no window reaches: zeros, before the bias.
    let widen_by: Vec<i64> = pads.iter().map(|&p| (-p).max(0)).collect();
    let pads: Vec<i64> = pads.iter().map(|&p| p.max(0)).collect();
    let rank = k.max(2) + 2;
    let mut y = if k == 3 {
        let depth = super::volume::Depth {
            kernel: w_dims[2],
            stride: strides[0],
            dilation: dilations[0],
            before: pads[0],
            after: pads[3],
        };
        let attrs = Attrs::from_pairs([
            ("strides", ints(strides[1..].to_vec())),
            ("padding", ints([pads[1], pads[2], pads[4], pads[5]])),
            ("output_padding", ints(out_pad[1..].to_vec())),
            ("dilation", ints(dilations[1..].to_vec())),
            ("groups", AttrValue::Int(group)),
        ]);
        super::volume::conv_transpose3d(cx, x, w, depth, out_pad[0], attrs)?
    } else {
        conv_transpose_2d(cx, x, w, k, strides, dilations, out_pad, pads, group)?
    };
    if widen_by.iter().any(|&p| p > 0) {
        // Relax interleaves (before, after) per axis; 1-d runs on axis 3.
        let mut width = vec![0i64; 2 * rank];
        for i in 0..k {
            let axis = rank - k + i;
            width[2 * axis] = widen_by[i];
            width[2 * axis + 1] = widen_by[i + k];
        }
        let attrs = Attrs::from_pairs([
            ("pad_width", ints(width)),
            ("pad_value", AttrValue::Float(0.0)),
            ("pad_mode", AttrValue::Str("constant".into())),
        ]);
        y = cx.call("relax.nn.pad", vec![y], attrs)?;
    }
    y = add_bias(cx, y, bias, w_dims[1] * group, rank)?;
    if k == 1 {
        y = from_2d(cx, y)?;
    }
    Ok(vec![y])
}

/// A 1-d (as 2-d over a unit height) or 2-d `ConvTranspose` as
/// `nn.conv2d_transpose`, pads non-negative.
#[allow(clippy::too_many_arguments)]
fn conv_transpose_2d(
    cx: &mut Ctx,
    x: Expr,
    w: Expr,
    k: usize,
    strides: Vec<i64>,
    dilations: Vec<i64>,
    out_pad: Vec<i64>,
    pads: Vec<i64>,
    group: i64,
) -> Result<Expr, Error> {
    let (x2, w2, strides, dilations, out_pad, pads) = if k == 1 {
        (
            as_2d(cx, x)?,
            as_2d(cx, w)?,
            vec![1, strides[0]],
            vec![1, dilations[0]],
            vec![0, out_pad[0]],
            vec![0, pads[0], 0, pads[1]],
        )
    } else {
        (x, w, strides, dilations, out_pad, pads)
    };
    let attrs = Attrs::from_pairs([
        ("strides", ints(strides)),
        ("padding", ints(pads)),
        ("output_padding", ints(out_pad)),
        ("dilation", ints(dilations)),
        ("groups", AttrValue::Int(group)),
    ]);
    cx.call("relax.nn.conv2d_transpose", vec![x2, w2], attrs)
}

pub fn max_pool(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&[
        "auto_pad",
        "ceil_mode",
        "dilations",
        "kernel_shape",
        "pads",
        "storage_order",
        "strides",
    ])?;
    let x = cx.input(0)?;
    let mut y = pool(cx, x.clone(), "relax.nn.max_pool2d", None)?;
    if cx.node.num_outputs() > 1 && !cx.node.proto.output[1].is_empty() {
        // The Indices output (`pool_indices.rs`), 2-d only.
        if spatial_rank(cx, &x)? != 2 {
            return Err(cx.error("the Indices output is supported for 2-d MaxPool only"));
        }
        let kernel = cx.node.ints("kernel_shape")?.unwrap_or_default();
        let win = window(cx, &x, &kernel)?;
        let out = cx.static_dims(&y[0])?;
        let column_major = cx.node.int_or("storage_order", 0)? != 0;
        let i = super::pool_indices::max_pool_indices(
            cx,
            x,
            &kernel,
            &win.strides,
            &win.dilations,
            &win.pads,
            [out[2], out[3]],
            column_major,
        )?;
        y.push(i);
    }
    Ok(y)
}

pub fn average_pool(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&[
        "auto_pad",
        "ceil_mode",
        "count_include_pad",
        "dilations",
        "kernel_shape",
        "pads",
        "strides",
    ])?;
    let include = cx.node.int_or("count_include_pad", 0)? != 0;
    let x = cx.input(0)?;
    pool(cx, x, "relax.nn.avg_pool2d", Some(include))
}

/// `LpPool`: `(Σ |x|^p)^(1/p)` over each window, the sum an average pool
/// that counts the padding (zeros) times the window size.
pub fn lp_pool(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&[
        "auto_pad",
        "ceil_mode",
        "dilations",
        "kernel_shape",
        "p",
        "pads",
        "strides",
    ])?;
    let p = cx.node.int_or("p", 2)?;
    if p < 1 {
        return Err(cx.error(format!("p {p} must be positive")));
    }
    let x = cx.input(0)?;
    let (_, dtype) = cx.tensor(&x)?;
    let kernel = cx.node.ints("kernel_shape")?.unwrap_or_default();
    in_range(cx, "kernel_shape", &kernel, 1)?;
    let size: i64 = kernel.iter().product();
    let a = cx.op1("relax.abs", x)?;
    let pw = cx.scalar(p as f64, dtype)?;
    let powered = cx.op2("relax.power", a, pw)?;
    let mean = pool(cx, powered, "relax.nn.avg_pool2d", Some(true))?.remove(0);
    let n = cx.scalar(size as f64, dtype)?;
    let sum = cx.op2("relax.multiply", mean, n)?;
    let inv = cx.scalar(1.0 / p as f64, dtype)?;
    Ok(vec![cx.op2("relax.power", sum, inv)?])
}

/// `MaxPool` or `AveragePool` (with its `count_include_pad`) of `x` as the
/// 2-d op `op`; with `ceil_mode`, a last window that starts in the end
/// padding is sliced off (ONNX and PyTorch drop it, the Relax pools keep
/// it).
fn pool(
    cx: &mut Ctx,
    x: Expr,
    op: &str,
    count_include_pad: Option<bool>,
) -> Result<Vec<Expr>, Error> {
    let k = spatial_rank(cx, &x)?;
    let kernel = cx
        .node
        .ints("kernel_shape")?
        .ok_or_else(|| cx.error("attribute `kernel_shape` is required"))?;
    if kernel.len() != k {
        return Err(cx.error(format!("kernel_shape {kernel:?} must have {k} values")));
    }
    let mut win = window(cx, &x, &kernel)?;
    let ceil = cx.node.int_or("ceil_mode", 0)? != 0;
    let attrs = |win: Window, kernel: Vec<i64>| {
        let attrs = Attrs::from_pairs([
            ("pool_size", ints(kernel)),
            ("strides", ints(win.strides)),
            ("padding", ints(win.pads)),
            ("dilation", ints(win.dilations)),
            ("ceil_mode", AttrValue::Bool(ceil)),
        ]);
        match count_include_pad {
            Some(include) => attrs.with("count_include_pad", AttrValue::Bool(include)),
            None => attrs,
        }
    };
    let dropped = if ceil {
        last_windows_on_padding(cx, &x, &kernel, &win)?
    } else {
        vec![]
    };
    let mut y = if k == 3 {
        let (mut depth, plane) = split_depth(&win);
        depth.kernel = kernel[0];
        let a = attrs(plane, kernel[1..].to_vec());
        super::volume::pool3d(cx, x, depth, ceil, count_include_pad, a)?
    } else {
        let (x2, kernel2) = if k == 1 {
            win = widen(&win);
            (as_2d(cx, x)?, vec![1, kernel[0]])
        } else {
            (x, kernel)
        };
        let y = cx.call(op, vec![x2], attrs(win, kernel2))?;
        if k == 1 {
            from_2d(cx, y)?
        } else {
            y
        }
    };
    if !dropped.is_empty() {
        let (axes, ends): (Vec<i64>, Vec<i64>) = dropped.into_iter().unzip();
        let n = axes.len();
        let slice = Attrs::from_pairs([
            ("axes", ints(axes)),
            ("begin", ints(vec![0; n])),
            ("end", ints(ends)),
            ("strides", ints(vec![1; n])),
        ]);
        y = cx.call("relax.strided_slice", vec![y], slice)?;
    }
    Ok(vec![y])
}

/// The axes (and their lengths without it) whose last `ceil_mode` window
/// starts in the end padding, which ONNX (as PyTorch) drops and the Relax
/// pools keep; only known input dims are checked.
fn last_windows_on_padding(
    cx: &Ctx,
    x: &Expr,
    kernel: &[i64],
    win: &Window,
) -> Result<Vec<(i64, i64)>, Error> {
    let (dims, _) = cx.tensor(x)?;
    let k = kernel.len();
    let mut out = Vec::new();
    for i in 0..k {
        let Some(size) = dims[2 + i].as_int() else {
            continue;
        };
        let (s, pb, pe) = (win.strides[i], win.pads[i], win.pads[i + k]);
        let span = win.dilations[i] * (kernel[i] - 1) + 1;
        let num = size + pb + pe - span + s - 1;
        if num < 0 {
            continue;
        }
        let n = num.div_euclid(s) + 1;
        if n > 1 && (n - 1) * s >= size + pb {
            out.push(((2 + i) as i64, n - 1));
        }
    }
    Ok(out)
}

/// A reduction over every spatial axis, keeping them.
fn global_pool(cx: &mut Ctx, op: &str) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let (dims, _) = cx.tensor(&x)?;
    let axes = (2..dims.len() as i64).collect::<Vec<_>>();
    let attrs = Attrs::from_pairs([("axis", ints(axes)), ("keepdims", AttrValue::Bool(true))]);
    Ok(vec![cx.call(op, vec![x], attrs)?])
}

pub fn global_average_pool(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    global_pool(cx, "relax.mean")
}

pub fn global_max_pool(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    global_pool(cx, "relax.max")
}

pub fn batch_norm(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&[
        "epsilon",
        "momentum",
        "spatial",
        "is_test",
        "consumed_inputs",
        "training_mode",
    ])?;
    if cx.node.int_or("spatial", 1)? != 1 {
        return Err(cx.error("spatial = 0 is not supported"));
    }
    let [x, scale, bias, mean, var] = [0, 1, 2, 3, 4].map(|i| cx.input(i));
    let (x, scale, bias, mean, var) = (x?, scale?, bias?, mean?, var?);
    let (dims, dtype) = cx.tensor(&x)?;
    if dims.len() < 2 {
        return Err(cx.error("the input needs a channel axis (rank 2 or more)"));
    }
    if cx.node.int_or("training_mode", 0)? != 0 {
        return batch_norm_training(cx, [x, scale, bias, mean, var]);
    }
    // y = x · a + b with a = scale / sqrt(var + ε), b = bias - mean · a:
    // per channel, so with constant statistics a and b are folded here and
    // the two elementwise ops fuse into the producer's loop.
    let eps = cx.scalar(f64::from(cx.node.float_or("epsilon", 1e-5)?), dtype)?;
    let var_eps = cx.op2("relax.add", var, eps)?;
    let std = cx.op1("relax.sqrt", var_eps)?;
    let a = cx.op2("relax.divide", scale, std)?;
    let ma = cx.op2("relax.multiply", mean, a.clone())?;
    let b = cx.op2("relax.subtract", bias, ma)?;
    let c = dims[1].clone();
    let a = per_channel(cx, a, c.clone(), dims.len())?;
    let b = per_channel(cx, b, c, dims.len())?;
    let y = cx.op2("relax.multiply", x, a)?;
    Ok(vec![cx.op2("relax.add", y, b)?])
}

/// `BatchNormalization` with `training_mode = 1` (opset 14 on): the batch
/// mean and biased variance over every axis but 1 normalize `x`, and the
/// running statistics come out as `input · momentum + batch · (1 - momentum)`.
/// That is TVM's `nn.batch_norm` with `training` set, whose `momentum`
/// weighs the batch statistic (`(1 - m) · moving + m · batch`), so it is
/// given `1 - momentum`. The outputs are `Y`, `running_mean`, `running_var`.
fn batch_norm_training(cx: &mut Ctx, args: [Expr; 5]) -> Result<Vec<Expr>, Error> {
    let momentum = f64::from(cx.node.float_or("momentum", 0.9)?);
    let epsilon = f64::from(cx.node.float_or("epsilon", 1e-5)?);
    let attrs = Attrs::from_pairs([
        ("axis", AttrValue::Int(1)),
        ("epsilon", AttrValue::Float(epsilon)),
        ("momentum", AttrValue::Float(1.0 - momentum)),
        ("training", AttrValue::Bool(true)),
    ]);
    let out = cx.call("relax.nn.batch_norm", args.to_vec(), attrs)?;
    (0..3).map(|i| cx.item(&out, i)).collect()
}

/// `v` of shape `(C,)` reshaped to broadcast along axis 1 of rank `ndim`.
fn per_channel(cx: &mut Ctx, v: Expr, c: PrimExpr, ndim: usize) -> Result<Expr, Error> {
    let mut dims = vec![PrimExpr::int(1); ndim];
    dims[1] = c;
    cx.call("relax.reshape", vec![v, shape(dims)], Attrs::new())
}

pub fn instance_norm(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&["epsilon"])?;
    let x = cx.input(0)?;
    let scale = cx.input(1)?;
    let bias = cx.input(2)?;
    let (dims, dtype) = cx.tensor(&x)?;
    let axes: Vec<i64> = (2..dims.len() as i64).collect();
    let reduce = Attrs::from_pairs([("axis", ints(axes)), ("keepdims", AttrValue::Bool(true))]);
    let mean = cx.call("relax.mean", vec![x.clone()], reduce.clone())?;
    let centered = cx.op2("relax.subtract", x, mean)?;
    let sq = cx.op2("relax.multiply", centered.clone(), centered.clone())?;
    let var = cx.call("relax.mean", vec![sq], reduce)?;
    let eps = cx.scalar(f64::from(cx.node.float_or("epsilon", 1e-5)?), dtype)?;
    let var_eps = cx.op2("relax.add", var, eps)?;
    let std = cx.op1("relax.sqrt", var_eps)?;
    let normed = cx.op2("relax.divide", centered, std)?;
    let c = dims[1].clone();
    let scale = per_channel(cx, scale, c.clone(), dims.len())?;
    let bias = per_channel(cx, bias, c, dims.len())?;
    let y = cx.op2("relax.multiply", normed, scale)?;
    Ok(vec![cx.op2("relax.add", y, bias)?])
}

pub fn lrn(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&["alpha", "beta", "bias", "size"])?;
    let x = cx.input(0)?;
    let (dims, dtype) = cx.tensor(&x)?;
    if dims.len() != 4 {
        return Err(cx.error("only 4-d inputs (N, C, H, W) are supported"));
    }
    let size = cx
        .node
        .int("size")?
        .filter(|&s| s > 0 && s <= 1 << 16)
        .ok_or_else(|| cx.error("attribute `size` (in 1..=65536) is required"))?;
    let alpha = f64::from(cx.node.float_or("alpha", 1e-4)?);
    let beta = f64::from(cx.node.float_or("beta", 0.75)?);
    let bias = f64::from(cx.node.float_or("bias", 1.0)?);
    let sq = cx.op2("relax.multiply", x.clone(), x.clone())?;
    let hw = dims[2].clone() * dims[3].clone();
    let one = PrimExpr::int(1);
    let rows = cx.call(
        "relax.reshape",
        vec![
            sq,
            shape(vec![dims[0].clone(), one.clone(), dims[1].clone(), hw]),
        ],
        Attrs::new(),
    )?;
    let ones =
        Tensor::from_vec(&[1, 1, size, 1], vec![1.0f32; size as usize]).map_err(|e| cx.error(e))?;
    let ones = Expr::constant(ones);
    let ones = if dtype == relax_runtime::DataType::f32() {
        ones
    } else {
        let attrs = Attrs::from_pairs([("dtype", AttrValue::DataType(dtype))]);
        cx.call("relax.astype", vec![ones], attrs)?
    };
    let before = (size - 1) / 2;
    let after = size - 1 - before;
    let attrs = Attrs::from_pairs([("padding", ints([before, 0, after, 0]))]);
    let sums = cx.call("relax.nn.conv2d", vec![rows, ones], attrs)?;
    let sums = cx.call("relax.reshape", vec![sums, shape(dims)], Attrs::new())?;
    let scale = cx.scalar(alpha / size as f64, dtype)?;
    let scaled = cx.op2("relax.multiply", sums, scale)?;
    let bias = cx.scalar(bias, dtype)?;
    let base = cx.op2("relax.add", scaled, bias)?;
    let beta = cx.scalar(beta, dtype)?;
    let denom = cx.op2("relax.power", base, beta)?;
    Ok(vec![cx.op2("relax.divide", x, denom)?])
}

pub fn gemm(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node
        .only_attrs(&["alpha", "beta", "transA", "transB", "broadcast"])?;
    let mut a = cx.input(0)?;
    let mut b = cx.input(1)?;
    let c = cx.opt_input(2)?;
    let transpose = |cx: &mut Ctx, e: Expr| {
        let attrs = Attrs::from_pairs([("axes", ints([1, 0]))]);
        cx.call("relax.permute_dims", vec![e], attrs)
    };
    if cx.node.int_or("transA", 0)? != 0 {
        a = transpose(cx, a)?;
    }
    if cx.node.int_or("transB", 0)? != 0 {
        b = transpose(cx, b)?;
    }
    let (_, dtype) = cx.tensor(&a)?;
    let mut y = cx.op2("relax.matmul", a, b)?;
    let alpha = cx.node.float_or("alpha", 1.0)?;
    if alpha != 1.0 {
        let alpha = cx.scalar(f64::from(alpha), dtype)?;
        y = cx.op2("relax.multiply", y, alpha)?;
    }
    if let Some(mut c) = c {
        let beta = cx.node.float_or("beta", 1.0)?;
        if beta != 1.0 {
            let beta = cx.scalar(f64::from(beta), dtype)?;
            c = cx.op2("relax.multiply", c, beta)?;
        }
        y = cx.op2("relax.add", y, c)?;
    }
    Ok(vec![y])
}

pub fn matmul(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let a = cx.input(0)?;
    let b = cx.input(1)?;
    Ok(vec![cx.op2("relax.matmul", a, b)?])
}

fn softmax_like(cx: &mut Ctx, op: &str) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&["axis"])?;
    let x = cx.input(0)?;
    let (dims, _) = cx.tensor(&x)?;
    let ndim = dims.len();
    let default = if cx.opset < 13 { 1 } else { -1 };
    let axis = cx.node.int_or("axis", default)?;
    let axis = normalize_axes(cx, &[axis], ndim)?[0];
    let last = |a: usize| Attrs::from_pairs([("axis", AttrValue::Int(a as i64))]);
    if cx.opset >= 13 || axis + 1 == ndim {
        return Ok(vec![cx.call(op, vec![x], last(axis))?]);
    }
    // Coerced to 2-d: (prod(dims[..axis]), prod(dims[axis..])).
    let flat = vec![product(&dims[..axis]), product(&dims[axis..])];
    let x2 = cx.call("relax.reshape", vec![x, shape(flat)], Attrs::new())?;
    let y2 = cx.call(op, vec![x2], last(1))?;
    Ok(vec![cx.call(
        "relax.reshape",
        vec![y2, shape(dims)],
        Attrs::new(),
    )?])
}

pub fn softmax(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    softmax_like(cx, "relax.nn.softmax")
}

pub fn log_softmax(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    softmax_like(cx, "relax.nn.log_softmax")
}

pub fn dropout(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    if cx.opset >= 12 {
        if let Some(t) = cx.const_input(2)? {
            if t.to_f64_vec().first().is_some_and(|&v| v != 0.0) {
                return Err(cx.error("training_mode = true is not supported (inference only)"));
            }
        }
    }
    let x = cx.input(0)?;
    if cx.node.num_outputs() < 2 {
        return Ok(vec![x]);
    }
    // At inference every element is kept: the mask is all true.
    let (dims, _) = cx.tensor(&x)?;
    let attrs = Attrs::from_pairs([(
        "dtype",
        AttrValue::DataType(relax_runtime::DataType::bool()),
    )]);
    let mask = cx.call("relax.ones", vec![shape(dims)], attrs)?;
    Ok(vec![x, mask])
}
