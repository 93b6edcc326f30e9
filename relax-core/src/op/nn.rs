//! Neural-network ops: activations (`nn.relu`, `nn.gelu`, `nn.silu`),
//! `nn.softmax`/`nn.log_softmax` along an axis, `nn.layer_norm`,
//! `nn.batch_norm` (TVM's, with its `training` flag), and the
//! convolution and pooling (`nn.conv2d`, `nn.conv2d_transpose`,
//! `nn.max_pool2d`, `nn.avg_pool2d`)
//! with strides, padding and dilation as PrimExprs, and `nn.pad` (constant,
//! reflect, replicate or circular).
//!
//! Data layouts are orderings of NCHW (kernel layouts of OIHW); another
//! layout is reported as unsupported rather than guessed at.

use super::attr::{AttrDefault, AttrSpec, AttrType};
use super::infer::{
    arg_name, attr, attr_bool, attr_dtype, attr_exprs, attr_int, attr_ints, error,
    fmt_tensor_shape, normalize_axes, normalize_axis, tensor, tensor_arg, unify_dtype,
};
use super::unary::{infer_float, infer_same};
use super::{Arity, OpInfo, OpPatternKind};
use crate::arith::{Analyzer, Proof};
use crate::ir::{AttrValue, Call, DataType, PrimExpr, StructInfo, TensorStructInfo, UNKNOWN_NDIM};
use relax_runtime::Diagnostic;

fn infer_softmax(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let x = tensor_arg(call, 0)?;
    if !x.is_unknown_ndim() {
        normalize_axis(call, attr_int(call, "axis").unwrap_or(-1), x.ndim)?;
    }
    infer_float(call, ana)
}

fn infer_layer_norm(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let data = tensor_arg(call, 0)?;
    let (gamma, beta) = (tensor_arg(call, 1)?, tensor_arg(call, 2)?);
    unify_dtype(call, 0, data.dtype, 1, gamma.dtype)?;
    unify_dtype(call, 0, data.dtype, 2, beta.dtype)?;
    let axes = attr_ints(call, "axes").unwrap_or_default();
    if data.is_unknown_ndim() {
        return infer_float(call, ana);
    }
    let axes = normalize_axes(call, &axes, data.ndim)?;
    for (i, p) in [(1, gamma), (2, beta)] {
        if !p.is_unknown_ndim() && p.ndim as usize != axes.len() {
            return Err(error(
                call,
                "op-rank-mismatch",
                format!(
                    "{} must have rank {} (one dim per normalized axis), found rank {}",
                    arg_name(call, i),
                    axes.len(),
                    p.ndim
                ),
            ));
        }
        if let (Some(ds), Some(ps)) = (data.shape_values(), p.shape_values()) {
            for (k, &a) in axes.iter().enumerate() {
                if ana.compare_equal(&ds[a], &ps[k]) == Proof::Disproven {
                    return Err(error(
                        call,
                        "op-shape-mismatch",
                        format!(
                            "{} does not match the normalized dims: {} is {}, {} is {}",
                            arg_name(call, i),
                            arg_name(call, 0),
                            fmt_tensor_shape(data),
                            arg_name(call, i),
                            fmt_tensor_shape(p)
                        ),
                    ));
                }
            }
        }
    }
    infer_float(call, ana)
}

/// `nn.batch_norm(data, gamma, beta, moving_mean, moving_var)`: the
/// normalized data and the (updated, in training) moving mean and
/// variance, as a tuple. The four parameters are 1-D of `data`'s dim at
/// `axis`.
fn infer_batch_norm(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let data = tensor_arg(call, 0)?;
    let out = infer_float(call, ana)?;
    let mut dtype = data.dtype;
    for i in 1..5 {
        dtype = unify_dtype(call, 0, dtype, i, tensor_arg(call, i)?.dtype)?;
    }
    let axis = attr_int(call, "axis").unwrap_or(1);
    let channels = if data.is_unknown_ndim() {
        None
    } else {
        let a = normalize_axis(call, axis, data.ndim)?;
        data.shape_values().map(|d| d[a].clone())
    };
    for i in 1..5 {
        let p = tensor_arg(call, i)?;
        if !p.is_unknown_ndim() && p.ndim != 1 {
            return Err(error(
                call,
                "op-rank-mismatch",
                format!(
                    "{} must have rank 1 (one value per channel), found rank {}",
                    arg_name(call, i),
                    p.ndim
                ),
            ));
        }
        if let (Some(c), Some(ps)) = (&channels, p.shape_values()) {
            if ana.compare_equal(c, &ps[0]) == Proof::Disproven {
                return Err(error(
                    call,
                    "op-shape-mismatch",
                    format!(
                        "{} must have one value per channel of {} at axis {axis}: {} is {}, {} is {}",
                        arg_name(call, i),
                        arg_name(call, 0),
                        arg_name(call, 0),
                        fmt_tensor_shape(data),
                        arg_name(call, i),
                        fmt_tensor_shape(p)
                    ),
                ));
            }
        }
    }
    let stat = |i: usize| -> Result<StructInfo, Diagnostic> {
        let p = tensor_arg(call, i)?;
        Ok(match (p.shape_values(), &channels) {
            (Some(d), _) => tensor(Some(d.to_vec()), 1, dtype, ana),
            (None, Some(c)) => tensor(Some(vec![c.clone()]), 1, dtype, ana),
            (None, None) => tensor(None, 1, dtype, ana),
        })
    };
    Ok(StructInfo::tuple(vec![out, stat(3)?, stat(4)?]))
}

/// `(top, left, bottom, right)` from TVM's 1-, 2- or 4-element padding.
pub(crate) fn padding4(call: &Call) -> Result<[PrimExpr; 4], Diagnostic> {
    let p = attr_exprs(call, "padding").unwrap_or_else(|| vec![PrimExpr::int(0)]);
    Ok(match p.as_slice() {
        [a] => [a.clone(), a.clone(), a.clone(), a.clone()],
        [a, b] => [a.clone(), b.clone(), a.clone(), b.clone()],
        [a, b, c, d] => [a.clone(), b.clone(), c.clone(), d.clone()],
        _ => {
            return Err(error(
                call,
                "op-padding",
                format!("padding must have 1, 2 or 4 values, found {}", p.len()),
            ))
        }
    })
}

/// `[h, w]` from 1 or 2 values (default 1).
pub(crate) fn pair(call: &Call, name: &str) -> Result<[PrimExpr; 2], Diagnostic> {
    let v = attr_exprs(call, name).unwrap_or_else(|| vec![PrimExpr::int(1)]);
    match v.as_slice() {
        [a] => Ok([a.clone(), a.clone()]),
        [a, b] => Ok([a.clone(), b.clone()]),
        _ => Err(error(
            call,
            "op-window",
            format!("{name} must have 1 or 2 values, found {}", v.len()),
        )),
    }
}

/// The output height and width of a 2-D window over the NCHW spatial
/// dims `hw`, with `(top, left, bottom, right)` padding.
fn spatial_out(
    hw: &[PrimExpr],
    pad: &[PrimExpr; 4],
    kernel: &[PrimExpr],
    strides: &[PrimExpr; 2],
    dilation: &[PrimExpr; 2],
    ceil: bool,
) -> [PrimExpr; 2] {
    [0, 1].map(|k| {
        let pad = pad[k].clone() + pad[k + 2].clone();
        window_out(&hw[k], pad, &kernel[k], &strides[k], &dilation[k], ceil)
    })
}

/// The output extent of a sliding window.
fn window_out(
    size: &PrimExpr,
    pad: PrimExpr,
    kernel: &PrimExpr,
    stride: &PrimExpr,
    dilation: &PrimExpr,
    ceil: bool,
) -> PrimExpr {
    let span = dilation.clone() * (kernel.clone() - 1) + 1;
    let mut num = size.clone() + pad - span;
    if ceil {
        num = num + stride.clone() - 1;
    }
    num.floordiv(stride.clone()) + 1
}

fn positive(call: &Call, name: &str, v: &[PrimExpr]) -> Result<(), Diagnostic> {
    if let Some(bad) = v.iter().find(|e| matches!(e.as_int(), Some(x) if x <= 0)) {
        return Err(error(
            call,
            "op-window",
            format!("{name} must be positive, found {bad}"),
        ));
    }
    Ok(())
}

/// Where each axis of `canonical` (`NCHW`, `OIHW`) is in the layout
/// attribute `name`, which must be a permutation of it (`NHWC`, `HWIO`,
/// `OHWI`); the canonical order when the attribute is absent.
pub(crate) fn layout_axes(
    call: &Call,
    name: &str,
    canonical: &str,
) -> Result<[usize; 4], Diagnostic> {
    let layout = match attr(call, name) {
        Some(AttrValue::Str(s)) => s.as_str(),
        _ => canonical,
    };
    relax_runtime::kernels::conv::layout_permutation(layout, canonical).ok_or_else(|| {
        error(
            call,
            "op-layout-unsupported",
            format!("{name} must be an ordering of {canonical}, found {layout}"),
        )
    })
}

/// `physical` (in a layout whose canonical axes sit at `axes`, as
/// [`layout_axes`] gives them) in canonical order.
pub(crate) fn to_canonical<T: Clone>(physical: &[T], axes: [usize; 4]) -> [T; 4] {
    axes.map(|a| physical[a].clone())
}

/// `canonical` (NCHW or OIHW order) in the layout whose canonical axes sit
/// at `axes`.
pub(crate) fn to_layout<T: Clone>(canonical: [T; 4], axes: [usize; 4]) -> Vec<T> {
    let mut physical = canonical.to_vec();
    for (k, value) in canonical.into_iter().enumerate() {
        physical[axes[k]] = value;
    }
    physical
}

/// What `conv2d` and `conv2d_transpose` check alike: rank-4 operands, the
/// result dtype, strides, dilation, padding and groups.
struct ConvWindow {
    dtype: DataType,
    strides: [PrimExpr; 2],
    dilation: [PrimExpr; 2],
    pad: [PrimExpr; 4],
    groups: i64,
}

fn conv_window(
    call: &Call,
    data: &TensorStructInfo,
    weight: &TensorStructInfo,
) -> Result<ConvWindow, Diagnostic> {
    let out_dtype = attr_dtype(call, "out_dtype");
    let dtype = if out_dtype.is_void() {
        unify_dtype(call, 0, data.dtype, 1, weight.dtype)?
    } else {
        out_dtype
    };
    for (i, t) in [(0, data), (1, weight)] {
        if !t.is_unknown_ndim() && t.ndim != 4 {
            return Err(error(
                call,
                "op-rank",
                format!(
                    "{} must have rank 4, found rank {}",
                    arg_name(call, i),
                    t.ndim
                ),
            ));
        }
    }
    let strides = pair(call, "strides")?;
    let dilation = pair(call, "dilation")?;
    positive(call, "strides", &strides)?;
    positive(call, "dilation", &dilation)?;
    let pad = padding4(call)?;
    let groups = attr_int(call, "groups").unwrap_or(1);
    if groups <= 0 {
        return Err(error(
            call,
            "op-groups",
            format!("groups must be positive, found {groups}"),
        ));
    }
    Ok(ConvWindow {
        dtype,
        strides,
        dilation,
        pad,
        groups,
    })
}

fn infer_conv2d(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let (data, weight) = (tensor_arg(call, 0)?, tensor_arg(call, 1)?);
    let data_axes = layout_axes(call, "data_layout", "NCHW")?;
    let kernel_axes = layout_axes(call, "kernel_layout", "OIHW")?;
    let out_axes = layout_axes(call, "out_layout", "NCHW")?;
    let ConvWindow {
        dtype,
        strides,
        dilation,
        pad,
        groups,
    } = conv_window(call, data, weight)?;
    let (Some(ds), Some(ws)) = (data.shape_values(), weight.shape_values()) else {
        return Ok(StructInfo::tensor_ndim(4, dtype));
    };
    // In NCHW and OIHW order from here on.
    let (ds, ws) = (to_canonical(ds, data_axes), to_canonical(ws, kernel_axes));
    if ana.compare_equal(&ds[1], &(ws[1].clone() * groups)) == Proof::Disproven {
        return Err(error(
            call,
            "op-shape-mismatch",
            format!(
                "input channels differ: {} is {}, {} is {} with {groups} group(s)",
                arg_name(call, 0),
                fmt_tensor_shape(data),
                arg_name(call, 1),
                fmt_tensor_shape(weight)
            ),
        ));
    }
    let [h, w] = spatial_out(&ds[2..4], &pad, &ws[2..4], &strides, &dilation, false);
    let out = to_layout([ds[0].clone(), ws[0].clone(), h, w], out_axes);
    Ok(tensor(Some(out), 4, dtype, ana))
}

/// `nn.max_pool2d` and `nn.avg_pool2d`: the same window geometry.
fn infer_pool2d(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let data = tensor_arg(call, 0)?;
    let data_axes = layout_axes(call, "layout", "NCHW")?;
    let out_axes = layout_axes(call, "out_layout", "NCHW")?;
    if !data.is_unknown_ndim() && data.ndim != 4 {
        return Err(error(
            call,
            "op-rank",
            format!(
                "{} must have rank 4, found rank {}",
                arg_name(call, 0),
                data.ndim
            ),
        ));
    }
    let pool = pair(call, "pool_size")?;
    let strides = pair(call, "strides")?;
    let dilation = pair(call, "dilation")?;
    positive(call, "pool_size", &pool)?;
    positive(call, "strides", &strides)?;
    positive(call, "dilation", &dilation)?;
    let pad = padding4(call)?;
    let ceil = attr_bool(call, "ceil_mode", false);
    let Some(ds) = data.shape_values() else {
        return Ok(StructInfo::tensor_ndim(
            if data.is_unknown_ndim() {
                UNKNOWN_NDIM
            } else {
                4
            },
            data.dtype,
        ));
    };
    let ds = to_canonical(ds, data_axes);
    let [h, w] = spatial_out(&ds[2..4], &pad, &pool, &strides, &dilation, ceil);
    let out = to_layout([ds[0].clone(), ds[1].clone(), h, w], out_axes);
    Ok(tensor(Some(out), 4, data.dtype, ana))
}

/// `nn.conv2d_transpose` (NCHW data, IOHW weight): each output extent is
/// `(in - 1)·stride - pad_begin - pad_end + dilation·(k - 1) +
/// output_padding + 1`; the weight's first dim is the data's channels, and
/// its second times `groups` the output's.
fn infer_conv2d_transpose(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let (data, weight) = (tensor_arg(call, 0)?, tensor_arg(call, 1)?);
    for (name, canonical) in [
        ("data_layout", "NCHW"),
        ("kernel_layout", "IOHW"),
        ("out_layout", "NCHW"),
    ] {
        if let Some(AttrValue::Str(l)) = attr(call, name) {
            if l != canonical {
                return Err(error(
                    call,
                    "op-layout-unsupported",
                    format!("{name} must be {canonical}, found {l}"),
                ));
            }
        }
    }
    let ConvWindow {
        dtype,
        strides,
        dilation,
        pad,
        groups,
    } = conv_window(call, data, weight)?;
    let out_pad = match attr_exprs(call, "output_padding") {
        Some(v) if v.len() == 2 => [v[0].clone(), v[1].clone()],
        Some(v) if v.len() == 1 => [v[0].clone(), v[0].clone()],
        None => [PrimExpr::int(0), PrimExpr::int(0)],
        Some(v) => {
            return Err(error(
                call,
                "op-window",
                format!("output_padding must have 1 or 2 values, found {}", v.len()),
            ))
        }
    };
    for (k, op) in out_pad.iter().enumerate() {
        if let (Some(o), Some(s), Some(d)) =
            (op.as_int(), strides[k].as_int(), dilation[k].as_int())
        {
            if o < 0 || (o >= s && o >= d) {
                return Err(error(
                    call,
                    "op-window",
                    format!("output_padding {o} must be smaller than the stride {s} or the dilation {d}"),
                ));
            }
        }
    }
    let (Some(ds), Some(ws)) = (data.shape_values(), weight.shape_values()) else {
        return Ok(StructInfo::tensor_ndim(4, dtype));
    };
    if ana.compare_equal(&ds[1], &ws[0]) == Proof::Disproven {
        return Err(error(
            call,
            "op-shape-mismatch",
            format!(
                "input channels differ: {} is {}, {} is {}",
                arg_name(call, 0),
                fmt_tensor_shape(data),
                arg_name(call, 1),
                fmt_tensor_shape(weight)
            ),
        ));
    }
    let extent = |k: usize| {
        (ds[2 + k].clone() - 1) * strides[k].clone() - pad[k].clone() - pad[k + 2].clone()
            + dilation[k].clone() * (ws[2 + k].clone() - 1)
            + out_pad[k].clone()
            + 1
    };
    let out = vec![ds[0].clone(), ws[1].clone() * groups, extent(0), extent(1)];
    Ok(tensor(Some(out), 4, dtype, ana))
}

/// `nn.pad`: each dim widened by its two pads; the mode's limits checked
/// where the dims are known (`relax_runtime::kernels::pad`).
fn infer_pad(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    use relax_runtime::kernels::pad::PadMode;
    let data = tensor_arg(call, 0)?;
    let widths = attr_ints(call, "pad_width").unwrap_or_default();
    let mode = match attr(call, "pad_mode") {
        Some(AttrValue::Str(s)) => {
            PadMode::parse(s).map_err(|m| error(call, "op-attr-value", m))?
        }
        _ => PadMode::Constant,
    };
    if let Some(bad) = widths.iter().find(|&&w| w < 0) {
        return Err(error(
            call,
            "op-attr-value",
            format!("pad_width must not be negative, found {bad}"),
        ));
    }
    if data.is_unknown_ndim() {
        return Ok(StructInfo::tensor_ndim(UNKNOWN_NDIM, data.dtype));
    }
    let ndim = data.ndim as usize;
    if widths.len() != 2 * ndim {
        return Err(error(
            call,
            "op-attr-value",
            format!(
                "pad_width must have 2 values per axis of {} ({}), found {}",
                arg_name(call, 0),
                2 * ndim,
                widths.len()
            ),
        ));
    }
    let Some(dims) = data.shape_values() else {
        return Ok(StructInfo::tensor_ndim(data.ndim, data.dtype));
    };
    let mut out = Vec::with_capacity(ndim);
    for (i, d) in dims.iter().enumerate() {
        let (b, a) = (widths[2 * i], widths[2 * i + 1]);
        if let Some(d) = d.as_int() {
            mode.check(i, d, b, a)
                .map_err(|m| error(call, "op-attr-value", m))?;
        }
        out.push(d.clone() + b + a);
    }
    Ok(tensor(Some(out), data.ndim, data.dtype, ana))
}

const AXIS_LAST: &[AttrSpec] = &[AttrSpec::new("axis", AttrType::Int, AttrDefault::Int(-1))];
const ONES2: AttrDefault = AttrDefault::IntArray(&[1, 1]);
const ZEROS4: AttrDefault = AttrDefault::IntArray(&[0, 0, 0, 0]);

macro_rules! activation {
    ($name:literal, $infer:ident) => {
        OpInfo {
            name: $name,
            args: &["x"],
            arity: Arity::Exact(1),
            attrs: &[],
            infer_struct_info: $infer,
            purity: true,
            pattern: OpPatternKind::ElemWise,
        }
    };
}

/// The nn ops.
pub const OPS: &[OpInfo] = &[
    activation!("relax.nn.relu", infer_same),
    activation!("relax.nn.gelu", infer_float),
    activation!("relax.nn.silu", infer_float),
    OpInfo {
        name: "relax.nn.softmax",
        args: &["x"],
        arity: Arity::Exact(1),
        attrs: AXIS_LAST,
        infer_struct_info: infer_softmax,
        purity: true,
        pattern: OpPatternKind::OutEWiseFusable,
    },
    OpInfo {
        name: "relax.nn.log_softmax",
        args: &["x"],
        arity: Arity::Exact(1),
        attrs: AXIS_LAST,
        infer_struct_info: infer_softmax,
        purity: true,
        pattern: OpPatternKind::OutEWiseFusable,
    },
    OpInfo {
        name: "relax.nn.layer_norm",
        args: &["data", "gamma", "beta"],
        arity: Arity::Exact(3),
        attrs: &[
            AttrSpec::new("axes", AttrType::IntArray, AttrDefault::Required),
            AttrSpec::new("epsilon", AttrType::Float, AttrDefault::Float(1e-5)),
            AttrSpec::new("center", AttrType::Bool, AttrDefault::Bool(true)),
            AttrSpec::new("scale", AttrType::Bool, AttrDefault::Bool(true)),
        ],
        infer_struct_info: infer_layer_norm,
        purity: true,
        pattern: OpPatternKind::OutEWiseFusable,
    },
    OpInfo {
        name: "relax.nn.batch_norm",
        args: &["data", "gamma", "beta", "moving_mean", "moving_var"],
        arity: Arity::Exact(5),
        attrs: &[
            AttrSpec::new("axis", AttrType::Int, AttrDefault::Required),
            AttrSpec::new("epsilon", AttrType::Float, AttrDefault::Float(1e-5)),
            AttrSpec::new("center", AttrType::Bool, AttrDefault::Bool(true)),
            AttrSpec::new("scale", AttrType::Bool, AttrDefault::Bool(true)),
            AttrSpec::new("momentum", AttrType::Float, AttrDefault::Float(0.1)),
            AttrSpec::new("training", AttrType::Bool, AttrDefault::Bool(true)),
        ],
        infer_struct_info: infer_batch_norm,
        purity: true,
        pattern: OpPatternKind::OutEWiseFusable,
    },
    OpInfo {
        name: "relax.nn.conv2d",
        args: &["data", "weight"],
        arity: Arity::Exact(2),
        attrs: &[
            AttrSpec::new("strides", AttrType::PrimExprArray, ONES2),
            AttrSpec::new("padding", AttrType::PrimExprArray, ZEROS4),
            AttrSpec::new("dilation", AttrType::PrimExprArray, ONES2),
            AttrSpec::new("groups", AttrType::Int, AttrDefault::Int(1)),
            AttrSpec::new("data_layout", AttrType::Str, AttrDefault::Str("NCHW")),
            AttrSpec::new("kernel_layout", AttrType::Str, AttrDefault::Str("OIHW")),
            AttrSpec::new(
                "out_layout",
                AttrType::Str,
                AttrDefault::SameAs("data_layout"),
            ),
            AttrSpec::new(
                "out_dtype",
                AttrType::DataType,
                AttrDefault::DataType("void"),
            ),
        ],
        infer_struct_info: infer_conv2d,
        purity: true,
        pattern: OpPatternKind::OutEWiseFusable,
    },
    OpInfo {
        name: "relax.nn.conv2d_transpose",
        args: &["data", "weight"],
        arity: Arity::Exact(2),
        attrs: &[
            AttrSpec::new("strides", AttrType::PrimExprArray, ONES2),
            AttrSpec::new("padding", AttrType::PrimExprArray, ZEROS4),
            AttrSpec::new(
                "output_padding",
                AttrType::PrimExprArray,
                AttrDefault::IntArray(&[0, 0]),
            ),
            AttrSpec::new("dilation", AttrType::PrimExprArray, ONES2),
            AttrSpec::new("groups", AttrType::Int, AttrDefault::Int(1)),
            AttrSpec::new("data_layout", AttrType::Str, AttrDefault::Str("NCHW")),
            AttrSpec::new("kernel_layout", AttrType::Str, AttrDefault::Str("IOHW")),
            AttrSpec::new(
                "out_layout",
                AttrType::Str,
                AttrDefault::SameAs("data_layout"),
            ),
            AttrSpec::new(
                "out_dtype",
                AttrType::DataType,
                AttrDefault::DataType("void"),
            ),
        ],
        infer_struct_info: infer_conv2d_transpose,
        purity: true,
        pattern: OpPatternKind::OutEWiseFusable,
    },
    OpInfo {
        name: "relax.nn.max_pool2d",
        args: &["data"],
        arity: Arity::Exact(1),
        attrs: &[
            AttrSpec::new("pool_size", AttrType::PrimExprArray, ONES2),
            AttrSpec::new("strides", AttrType::PrimExprArray, ONES2),
            AttrSpec::new("padding", AttrType::PrimExprArray, ZEROS4),
            AttrSpec::new("dilation", AttrType::PrimExprArray, ONES2),
            AttrSpec::new("ceil_mode", AttrType::Bool, AttrDefault::Bool(false)),
            // Only average pooling reads it; max pooling keeps it for TVM's schema.
            AttrSpec::new(
                "count_include_pad",
                AttrType::Bool,
                AttrDefault::Bool(false),
            ),
            AttrSpec::new("layout", AttrType::Str, AttrDefault::Str("NCHW")),
            AttrSpec::new("out_layout", AttrType::Str, AttrDefault::SameAs("layout")),
        ],
        infer_struct_info: infer_pool2d,
        purity: true,
        pattern: OpPatternKind::OutEWiseFusable,
    },
    OpInfo {
        name: "relax.nn.avg_pool2d",
        args: &["data"],
        arity: Arity::Exact(1),
        attrs: &[
            AttrSpec::new("pool_size", AttrType::PrimExprArray, ONES2),
            AttrSpec::new("strides", AttrType::PrimExprArray, ONES2),
            AttrSpec::new("padding", AttrType::PrimExprArray, ZEROS4),
            AttrSpec::new("dilation", AttrType::PrimExprArray, ONES2),
            AttrSpec::new("ceil_mode", AttrType::Bool, AttrDefault::Bool(false)),
            // Padded positions count in the divisor.
            AttrSpec::new(
                "count_include_pad",
                AttrType::Bool,
                AttrDefault::Bool(false),
            ),
            AttrSpec::new("layout", AttrType::Str, AttrDefault::Str("NCHW")),
            AttrSpec::new("out_layout", AttrType::Str, AttrDefault::SameAs("layout")),
        ],
        infer_struct_info: infer_pool2d,
        purity: true,
        pattern: OpPatternKind::OutEWiseFusable,
    },
    OpInfo {
        name: "relax.nn.pad",
        args: &["data"],
        arity: Arity::Exact(1),
        attrs: &[
            AttrSpec::new("pad_width", AttrType::IntArray, AttrDefault::Required),
            AttrSpec::new("pad_value", AttrType::Float, AttrDefault::Float(0.0)),
            AttrSpec::new("pad_mode", AttrType::Str, AttrDefault::Str("constant")),
        ],
        infer_struct_info: infer_pad,
        purity: true,
        pattern: OpPatternKind::Injective,
    },
];

#[cfg(test)]
mod tests {
    use crate::ir::{AttrValue, Expr};
    use crate::op::testing::*;
    use relax_runtime::DataType;

    #[test]
    fn activations_and_softmax() {
        let n = sym("n");
        assert_infers(
            "relax.nn.relu",
            &[t(&[n.clone(), d(4)], F32)],
            &[],
            "R.Tensor((n, 4), dtype=\"float32\")",
        );
        assert_infers(
            "relax.nn.gelu",
            &[t(&[n.clone()], F32)],
            &[],
            "R.Tensor((n,), dtype=\"float32\")",
        );
        assert_fails(
            "relax.nn.silu",
            &[t(&[n.clone()], I64)],
            &[],
            "nn.silu: x must have a float dtype, found int64",
        );
        assert_infers(
            "relax.nn.softmax",
            &[t(&[n.clone(), d(10)], F32)],
            &[],
            "R.Tensor((n, 10), dtype=\"float32\")",
        );
        assert_fails(
            "relax.nn.log_softmax",
            &[t(&[n.clone(), d(10)], F32)],
            &[("axis", AttrValue::Int(2))],
            "nn.log_softmax: axis 2 is out of range for a tensor of rank 2",
        );
    }

    #[test]
    fn layer_norm() {
        let n = sym("n");
        let x = t(&[n.clone(), d(4), d(8)], F32);
        assert_infers(
            "relax.nn.layer_norm",
            &[x.clone(), t(&[d(8)], F32), t(&[d(8)], F32)],
            &[("axes", ints(&[-1]))],
            "R.Tensor((n, 4, 8), dtype=\"float32\")",
        );
        assert_fails("relax.nn.layer_norm", &[x.clone(), t(&[d(7)], F32), t(&[d(8)], F32)], &[("axes", ints(&[-1]))],
            "nn.layer_norm: gamma does not match the normalized dims: data is (n, 4, 8), gamma is (7,)");
        assert_fails(
            "relax.nn.layer_norm",
            &[x, t(&[d(4), d(8)], F32), t(&[d(8)], F32)],
            &[("axes", ints(&[-1]))],
            "nn.layer_norm: gamma must have rank 1 (one dim per normalized axis), found rank 2",
        );
    }

    #[test]
    fn batch_norm() {
        let n = sym("n");
        let x = t(&[n.clone(), d(4), d(8), d(8)], F32);
        let c = t(&[d(4)], F32);
        let params =
            |x: &Expr, c: &Expr| vec![x.clone(), c.clone(), c.clone(), c.clone(), c.clone()];
        assert_infers(
            "relax.nn.batch_norm",
            &params(&x, &c),
            &[("axis", AttrValue::Int(1))],
            "R.Tuple(R.Tensor((n, 4, 8, 8), dtype=\"float32\"), R.Tensor((4,), dtype=\"float32\"), R.Tensor((4,), dtype=\"float32\"))",
        );
        // A negative axis counts from the end; a parameter of unknown
        // shape takes the channel count.
        let unknown = tn(1, F32);
        let mut args = params(&t(&[n.clone(), d(8), d(4)], F32), &c);
        args[4] = unknown;
        assert_infers(
            "relax.nn.batch_norm",
            &args,
            &[("axis", AttrValue::Int(-1))],
            "R.Tuple(R.Tensor((n, 8, 4), dtype=\"float32\"), R.Tensor((4,), dtype=\"float32\"), R.Tensor((4,), dtype=\"float32\"))",
        );
        assert_fails(
            "relax.nn.batch_norm",
            &params(&x, &t(&[d(5)], F32)),
            &[("axis", AttrValue::Int(1))],
            "nn.batch_norm: gamma must have one value per channel of data at axis 1: data is (n, 4, 8, 8), gamma is (5,)",
        );
        assert_fails(
            "relax.nn.batch_norm",
            &params(&x, &t(&[d(4), d(1)], F32)),
            &[("axis", AttrValue::Int(1))],
            "nn.batch_norm: gamma must have rank 1 (one value per channel), found rank 2",
        );
        assert_fails(
            "relax.nn.batch_norm",
            &params(&x, &c),
            &[("axis", AttrValue::Int(4))],
            "nn.batch_norm: axis 4 is out of range for a tensor of rank 4",
        );
        assert_fails(
            "relax.nn.batch_norm",
            &params(&x, &t(&[d(4)], DataType::f64())),
            &[("axis", AttrValue::Int(1))],
            "nn.batch_norm: dtypes differ: data is float32, gamma is float64",
        );
        assert_fails(
            "relax.nn.batch_norm",
            &params(
                &t(&[d(2), d(4)], DataType::i32()),
                &t(&[d(4)], DataType::i32()),
            ),
            &[("axis", AttrValue::Int(1))],
            "nn.batch_norm: data must have a float dtype, found int32",
        );
    }

    #[test]
    fn conv2d_with_strides_padding_dilation() {
        let n = sym("n");
        let data = t(&[n.clone(), d(3), d(32), d(32)], F32);
        assert_infers(
            "relax.nn.conv2d",
            &[data.clone(), t(&[d(16), d(3), d(3), d(3)], F32)],
            &[],
            "R.Tensor((n, 16, 30, 30), dtype=\"float32\")",
        );
        assert_infers(
            "relax.nn.conv2d",
            &[data.clone(), t(&[d(16), d(3), d(3), d(3)], F32)],
            &[
                ("strides", ints(&[2, 2])),
                ("padding", ints(&[1])),
                ("dilation", ints(&[1, 2])),
            ],
            "R.Tensor((n, 16, 16, 15), dtype=\"float32\")",
        );
        let h = sym("h");
        assert_infers(
            "relax.nn.conv2d",
            &[
                t(&[d(1), d(4), h.clone(), d(8)], F32),
                t(&[d(8), d(2), d(3), d(3)], F32),
            ],
            &[("groups", AttrValue::Int(2)), ("padding", ints(&[1, 1]))],
            "R.Tensor((1, 8, h, 8), dtype=\"float32\")",
        );
        assert_fails("relax.nn.conv2d", &[data.clone(), t(&[d(16), d(4), d(3), d(3)], F32)], &[],
            "nn.conv2d: input channels differ: data is (n, 3, 32, 32), weight is (16, 4, 3, 3) with 1 group(s)");
        // TVM's layouts: NHWC data with HWIO or OHWI weights gives NHWC
        // unless out_layout says otherwise.
        let nhwc = t(&[n.clone(), d(32), d(32), d(3)], F32);
        let layouts = |d: &str, k: &str| {
            vec![
                ("data_layout", AttrValue::from(d)),
                ("kernel_layout", AttrValue::from(k)),
            ]
        };
        assert_infers(
            "relax.nn.conv2d",
            &[nhwc.clone(), t(&[d(3), d(3), d(3), d(16)], F32)],
            &layouts("NHWC", "HWIO"),
            "R.Tensor((n, 30, 30, 16), dtype=\"float32\")",
        );
        let mut to_nchw = layouts("NHWC", "OHWI");
        to_nchw.push(("out_layout", AttrValue::from("NCHW")));
        assert_infers(
            "relax.nn.conv2d",
            &[nhwc.clone(), t(&[d(16), d(3), d(3), d(3)], F32)],
            &to_nchw,
            "R.Tensor((n, 16, 30, 30), dtype=\"float32\")",
        );
        assert_fails(
            "relax.nn.conv2d",
            &[data.clone(), t(&[d(16), d(3), d(3), d(3)], F32)],
            &[("data_layout", AttrValue::from("NCHW4c"))],
            "nn.conv2d: data_layout must be an ordering of NCHW, found NCHW4c",
        );
        assert_fails(
            "relax.nn.conv2d",
            &[t(&[d(3), d(32)], F32), t(&[d(16), d(3), d(3), d(3)], F32)],
            &[],
            "nn.conv2d: data must have rank 4, found rank 2",
        );
    }

    #[test]
    fn conv2d_transpose() {
        let n = sym("n");
        assert_infers(
            "relax.nn.conv2d_transpose",
            &[
                t(&[n.clone(), d(4), d(5), d(6)], F32),
                t(&[d(4), d(3), d(3), d(3)], F32),
            ],
            &[
                ("strides", ints(&[2, 2])),
                ("padding", ints(&[1, 1, 1, 1])),
                ("output_padding", ints(&[1, 0])),
            ],
            "R.Tensor((n, 3, 10, 11), dtype=\"float32\")",
        );
        assert_infers(
            "relax.nn.conv2d_transpose",
            &[
                t(&[d(1), d(4), d(5), d(5)], F32),
                t(&[d(4), d(2), d(3), d(3)], F32),
            ],
            &[("groups", AttrValue::Int(2))],
            "R.Tensor((1, 4, 7, 7), dtype=\"float32\")",
        );
        assert_fails(
            "relax.nn.conv2d_transpose",
            &[t(&[d(1), d(3), d(5), d(5)], F32), t(&[d(4), d(2), d(3), d(3)], F32)],
            &[],
            "nn.conv2d_transpose: input channels differ: data is (1, 3, 5, 5), weight is (4, 2, 3, 3)",
        );
        assert_fails(
            "relax.nn.conv2d_transpose",
            &[t(&[d(1), d(4), d(5), d(5)], F32), t(&[d(4), d(2), d(3), d(3)], F32)],
            &[("output_padding", ints(&[1, 1]))],
            "nn.conv2d_transpose: output_padding 1 must be smaller than the stride 1 or the dilation 1",
        );
    }

    #[test]
    fn pad() {
        let n = sym("n");
        let attrs = |w: &[i64], mode: &str| {
            vec![("pad_width", ints(w)), ("pad_mode", AttrValue::from(mode))]
        };
        assert_infers(
            "relax.nn.pad",
            &[t(&[n.clone(), d(3)], F32)],
            &attrs(&[1, 2, 0, 3], "constant"),
            "R.Tensor((n + 3, 6), dtype=\"float32\")",
        );
        assert_infers(
            "relax.nn.pad",
            &[t(&[d(2), d(3)], F32)],
            &attrs(&[1, 1, 2, 2], "reflect"),
            "R.Tensor((4, 7), dtype=\"float32\")",
        );
        assert_fails(
            "relax.nn.pad",
            &[t(&[d(2), d(3)], F32)],
            &attrs(&[2, 0, 0, 0], "reflect"),
            "nn.pad: Reflect padding of axis 0 must be smaller than its dim 2, found 2 before and 0 after",
        );
        assert_fails(
            "relax.nn.pad",
            &[t(&[d(2), d(3)], F32)],
            &attrs(&[1, 1], "constant"),
            "nn.pad: pad_width must have 2 values per axis of data (4), found 2",
        );
        assert_fails(
            "relax.nn.pad",
            &[t(&[d(2)], F32)],
            &attrs(&[0, 0], "wrap"),
            "nn.pad: pad_mode must be constant, reflect, replicate or circular, found wrap",
        );
    }

    #[test]
    fn avg_pool2d_shares_max_pool2d_geometry() {
        let n = sym("n");
        let data = t(&[n.clone(), d(3), d(7), d(7)], F32);
        let attrs = [
            ("pool_size", ints(&[3, 3])),
            ("strides", ints(&[2, 2])),
            ("padding", ints(&[1, 1, 1, 1])),
            ("count_include_pad", AttrValue::Bool(true)),
        ];
        assert_infers(
            "relax.nn.avg_pool2d",
            &[data.clone()],
            &attrs,
            "R.Tensor((n, 3, 4, 4), dtype=\"float32\")",
        );
        assert_fails(
            "relax.nn.avg_pool2d",
            &[t(&[d(3), d(7)], F32)],
            &[],
            "nn.avg_pool2d: data must have rank 4, found rank 2",
        );
    }

    #[test]
    fn max_pool2d() {
        let n = sym("n");
        let data = t(&[n.clone(), d(3), d(32), d(31)], F32);
        assert_infers(
            "relax.nn.max_pool2d",
            &[data.clone()],
            &[("pool_size", ints(&[2, 2])), ("strides", ints(&[2, 2]))],
            "R.Tensor((n, 3, 16, 15), dtype=\"float32\")",
        );
        // NHWC in, NHWC out unless out_layout says otherwise.
        let nhwc = t(&[n.clone(), d(32), d(31), d(3)], F32);
        let mut attrs = vec![
            ("pool_size", ints(&[2, 2])),
            ("strides", ints(&[2, 2])),
            ("layout", AttrValue::from("NHWC")),
        ];
        assert_infers(
            "relax.nn.max_pool2d",
            &[nhwc.clone()],
            &attrs,
            "R.Tensor((n, 16, 15, 3), dtype=\"float32\")",
        );
        attrs.push(("out_layout", AttrValue::from("NCHW")));
        assert_infers(
            "relax.nn.max_pool2d",
            &[nhwc],
            &attrs,
            "R.Tensor((n, 3, 16, 15), dtype=\"float32\")",
        );
        assert_infers(
            "relax.nn.max_pool2d",
            &[data.clone()],
            &[
                ("pool_size", ints(&[2, 2])),
                ("strides", ints(&[2, 2])),
                ("ceil_mode", AttrValue::Bool(true)),
            ],
            "R.Tensor((n, 3, 16, 16), dtype=\"float32\")",
        );
        assert_fails(
            "relax.nn.max_pool2d",
            &[data],
            &[("strides", ints(&[0, 1]))],
            "nn.max_pool2d: strides must be positive, found 0",
        );
    }
}
