//! Pooling by indices: `MaxUnpool`, and the `Indices` output of `MaxPool`.
//!
//! 1. `MaxUnpool` scatters `X` into zeros of the output shape at the
//!    flat indices `I` (over the whole output tensor, as `MaxPool`'s
//!    `Indices` count them): both flattened, a `scatter_elements` on axis
//!    0, and a reshape to `(in - 1)·stride - pads + kernel` per spatial
//!    axis. A constant `output_shape` at least that large holds the result
//!    at its start with zeros after, as ONNX's reference has it (the
//!    indices count over the inferred shape).
//! 2. `MaxPool`'s `Indices` (2-d): per window tap, the padded input's
//!    values and their flat indices (row-major over `(N, C, H, W)`, or
//!    with `storage_order` 1 over each image column-major: `n·C·H·W +
//!    c·H·W + w·H + h`) are strided slices; a running maximum over the taps
//!    in order keeps the first index of the largest value (padding is
//!    `-inf` and never wins over a value of the input).

use super::{ints, shape, Ctx};
use relax_core::ir::{AttrValue, Attrs, Expr, PrimExpr};
use relax_runtime::{DataType, Error, Tensor};

/// The converter of `MaxUnpool` (module docs, item 1).
pub fn max_unpool(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&["kernel_shape", "pads", "strides"])?;
    let x = cx.input(0)?;
    let idx = cx.input(1)?;
    let (dims, dtype) = cx.tensor(&x)?;
    let (idims, itype) = cx.tensor(&idx)?;
    if dims.len() < 3 || idims.len() != dims.len() || !itype.is_integer() {
        return Err(cx.error(format!(
            "X must have rank 3 or more and I the same rank and an integer dtype, found ranks {} and {} ({itype})",
            dims.len(),
            idims.len()
        )));
    }
    let k = dims.len() - 2;
    let kernel = cx
        .node
        .ints("kernel_shape")?
        .ok_or_else(|| cx.error("attribute `kernel_shape` is required"))?;
    let strides = cx.node.ints("strides")?.unwrap_or_else(|| vec![1; k]);
    let pads = cx.node.ints("pads")?.unwrap_or_else(|| vec![0; 2 * k]);
    if kernel.len() != k || strides.len() != k || pads.len() != 2 * k {
        return Err(cx.error(format!(
            "kernel_shape {kernel:?}, strides {strides:?} and pads {pads:?} must have {k}, {k} and {} values",
            2 * k
        )));
    }
    // The indices count over the shape the window geometry gives.
    let mut out = dims[..2].to_vec();
    for i in 0..k {
        out.push((dims[2 + i].clone() - 1) * strides[i] - (pads[i] + pads[i + k]) + kernel[i]);
    }
    let requested = match cx.opt_input(2)? {
        None => None,
        Some(_) => Some(cx.ints_input(2)?.unwrap_or_default()),
    };
    let total = out.iter().fold(PrimExpr::int(1), |a, d| a * d.clone());
    let flat = |v: Expr, cx: &mut Ctx| {
        cx.call(
            "relax.reshape",
            vec![v, shape(vec![PrimExpr::int(-1)])],
            Attrs::new(),
        )
    };
    let attrs = Attrs::from_pairs([("dtype", AttrValue::DataType(dtype))]);
    let zeros = cx.call("relax.zeros", vec![shape(vec![total])], attrs)?;
    let (xf, if_) = (flat(x, cx)?, flat(idx, cx)?);
    let attrs = Attrs::from_pairs([
        ("axis", AttrValue::Int(0)),
        ("reduction", AttrValue::from("update")),
    ]);
    let y = cx.call("relax.scatter_elements", vec![zeros, if_, xf], attrs)?;
    let y = cx.call("relax.reshape", vec![y, shape(out.clone())], Attrs::new())?;
    let Some(requested) = requested else {
        return Ok(vec![y]);
    };
    // A larger output_shape holds that result at its start, zeros after
    // (ONNX's reference).
    let grow: Option<Vec<i64>> = out
        .iter()
        .zip(&requested)
        .map(|(o, &r)| o.as_int().map(|o| r - o).filter(|g| *g >= 0))
        .collect();
    let grow = match grow {
        Some(g) if requested.len() == out.len() => g,
        _ => {
            return Err(cx.error(format!(
                "output_shape {requested:?} must be {} values at least the inferred {}",
                out.len(),
                relax_core::ir::struct_info::fmt_dims(&out)
            )))
        }
    };
    let width: Vec<i64> = grow.iter().flat_map(|&g| [0, g]).collect();
    let attrs = Attrs::from_pairs([
        ("pad_width", ints(width)),
        ("pad_value", AttrValue::Float(0.0)),
        ("pad_mode", AttrValue::Str("constant".into())),
    ]);
    Ok(vec![cx.call("relax.nn.pad", vec![y], attrs)?])
}

/// `MaxPool`'s `Indices` (module docs, item 2) of the 4-d `x` with the
/// window `kernel`, `strides`, `dilations` and `pads` (`[top, left,
/// bottom, right]`), for an output of spatial size `oh × ow`.
#[allow(clippy::too_many_arguments)]
pub fn max_pool_indices(
    cx: &mut Ctx,
    x: Expr,
    kernel: &[i64],
    strides: &[i64],
    dilations: &[i64],
    pads: &[i64],
    out_hw: [i64; 2],
    column_major: bool,
) -> Result<Expr, Error> {
    let dims = cx.static_dims(&x)?;
    let (_, dtype) = cx.tensor(&x)?;
    if !dtype.is_float() {
        return Err(cx.error(format!(
            "the Indices output needs a float input, found {dtype}"
        )));
    }
    let [n, c, h, w] = dims[..] else {
        return Err(cx.error("the Indices output needs 4-d input"));
    };
    // Windows that ceil_mode pushes past the padding read more of it.
    let mut pads = pads.to_vec();
    for (a, len) in [h, w].into_iter().enumerate() {
        let span = dilations[a] * (kernel[a] - 1) + 1;
        let needed = (out_hw[a] - 1) * strides[a] + span;
        pads[a + 2] += (needed - (len + pads[a] + pads[a + 2])).max(0);
    }
    let total = n * c * h * w;
    if total > i32::MAX as i64 {
        return Err(cx.error("the input is too large for the Indices output"));
    }
    // Flat indices of the input, laid out as the input.
    let idx: Vec<i64> = (0..total)
        .map(|f| {
            if !column_major {
                return f;
            }
            let (img, rest) = (f / (h * w), f % (h * w));
            let (y, xx) = (rest / w, rest % w);
            img * h * w + xx * h + y
        })
        .collect();
    let idx = Tensor::from_vec(&[n, c, h, w], idx).map_err(|e| cx.error(e))?;
    let pad = |v: Expr, value: f64, cx: &mut Ctx| {
        let width = vec![0, 0, 0, 0, pads[0], pads[2], pads[1], pads[3]];
        let attrs = Attrs::from_pairs([
            ("pad_width", ints(width)),
            ("pad_value", AttrValue::Float(value)),
            ("pad_mode", AttrValue::Str("constant".into())),
        ]);
        cx.call("relax.nn.pad", vec![v], attrs)
    };
    let xp = pad(x, f64::NEG_INFINITY, cx)?;
    let ip = pad(Expr::constant(idx), -1.0, cx)?;
    let mut best: Option<(Expr, Expr)> = None;
    for kh in 0..kernel[0] {
        for kw in 0..kernel[1] {
            let begin = [kh * dilations[0], kw * dilations[1]];
            let end: Vec<i64> = (0..2)
                .map(|a| begin[a] + (out_hw[a] - 1) * strides[a] + 1)
                .collect();
            let attrs = Attrs::from_pairs([
                ("axes", ints([2, 3])),
                ("begin", ints(begin)),
                ("end", ints(end)),
                ("strides", ints(strides.iter().copied())),
            ]);
            let v = cx.call("relax.strided_slice", vec![xp.clone()], attrs.clone())?;
            let i = cx.call("relax.strided_slice", vec![ip.clone()], attrs)?;
            best = Some(match best {
                None => (v, i),
                Some((bv, bi)) => {
                    let wins = cx.op2("relax.greater", v.clone(), bv.clone())?;
                    let nv = cx.call("relax.where", vec![wins.clone(), v, bv], Attrs::new())?;
                    let ni = cx.call("relax.where", vec![wins, i, bi], Attrs::new())?;
                    (nv, ni)
                }
            });
        }
    }
    let (_, i) = best.ok_or_else(|| cx.error("the window is empty"))?;
    cx.astype(i, DataType::i64())
}
