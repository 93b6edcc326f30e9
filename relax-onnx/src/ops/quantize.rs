//! The integer quantization ops: `QuantizeLinear`, `DequantizeLinear`,
//! `DynamicQuantizeLinear`, `MatMulInteger`, `QLinearMatMul`,
//! `ConvInteger`, `QLinearConv`.
//!
//! 1. `QuantizeLinear` and `DequantizeLinear` are the registry's
//!    `quantize` and `dequantize`: `saturate(round(x / scale) + zero_point)`
//!    (half to even) and `(x - zero_point) · scale`. A scale of one element
//!    is per tensor; a 1-d one is per index along `axis` (default 1). A
//!    blocked scale (opset 21 `block_size`, the input's rank, `ceil(d /
//!    block_size)` along `axis`) is repeated over each block and cut to the
//!    input's length, and the op runs on the flattened tensors, one scale
//!    per element. The zero point defaults to 0 of the output type
//!    (`uint8`, or the `output_dtype` attribute); the dequantized type is
//!    the scale's (or `output_dtype`). A `dequantize` of a constant is
//!    kept (not folded at import) for `FakeQuantizationToInteger`.
//! 2. `DynamicQuantizeLinear` is ONNX's function: the range `[min(0,
//!    min x), max(0, max x)]` over 255 steps (a scale of 1/255 when the range
//!    is empty), the zero point `round(clamp(-min / scale, 0, 255))`, and
//!    `quantize` into `uint8`. `min x` and `max x` reduce the last axis
//!    first, then the rest (the same values, and a parallel, vectorized
//!    first stage).
//! 3. `MatMulInteger` is exact integer arithmetic. With 8-bit inputs of
//!    rank at least 2 (what ONNX allows, and what onnxruntime's
//!    `quantize_dynamic` writes) it is an `int32` `matmul` of the 8-bit
//!    tensors themselves (`out_dtype="int32"`, the form the VNNI kernels
//!    take) minus the zero-point corrections that
//!    `FakeQuantizationToInteger` builds (its `integer_matmul`; a zero
//!    point that is absent or a constant 0 has none, and those of a
//!    constant `B` fold at import). Otherwise both inputs in `int32` minus
//!    their zero points (a scalar, or one per row of `A` and per column of
//!    `B`), then an `int32` `matmul`.
//! 4. `QLinearMatMul` is the same integer product (the 8-bit form too),
//!    scaled as the ONNX
//!    reference does: the product in `float64` times `a_scale · b_scale /
//!    y_scale` (computed in the scales' type), then `quantize` with scale
//!    1 and the output's zero point.
//! 5. `ConvInteger` and `QLinearConv` are `Conv` (its attributes, through
//!    [`super::nn::conv_of`]) of the centered `int32` input and weight (the
//!    weight's zero point a scalar or one per output channel), so padding
//!    holds the input's zero point; `QLinearConv` adds its `int32` bias
//!    and requantizes as `QLinearMatMul` (the weight's scale a scalar or
//!    one per output channel).

use super::{product, shape, Ctx};
use relax_core::ir::{AttrValue, Attrs, Expr, PrimExpr};
use relax_core::transform::fake_quantization_to_integer::{
    integer_matmul, is_constant_zero, IntegerConv2d,
};
use relax_runtime::{DataType, Error};

/// A `quantize` or `dequantize` call of `x` with the node's scale
/// (input 1) and zero point (input 2, else `zero`), per tensor, per axis
/// or per block, into `out`.
fn qdq(cx: &mut Ctx, op: &str, x: Expr, zero: Expr, out: DataType) -> Result<Expr, Error> {
    let (dims, _) = cx.tensor(&x)?;
    let ndim = dims.len();
    let scale = cx.input(1)?;
    let zp = match cx.opt_input(2)? {
        Some(z) => z,
        None => zero,
    };
    let block = cx.node.int_or("block_size", 0)?;
    let axis = cx.node.int_or("axis", 1)?;
    let attrs = |axis: i64| {
        Attrs::from_pairs([
            ("axis", AttrValue::Int(axis)),
            ("out_dtype", AttrValue::DataType(out)),
        ])
    };
    let (sdims, _) = cx.tensor(&scale)?;
    let per_tensor = sdims.len() <= 1 && sdims.iter().all(|d| d.as_int() == Some(1));
    if per_tensor {
        let scale = scalar_of(cx, scale)?;
        let zp = scalar_of(cx, zp)?;
        return qdq_call(cx, op, vec![x, scale, zp], attrs(-1));
    }
    let a = super::normalize_axes(cx, &[axis], ndim)?[0];
    if block <= 0 {
        if sdims.len() != 1 {
            return Err(cx.error(format!(
                "a scale of rank {} needs the attribute `block_size`",
                sdims.len()
            )));
        }
        return qdq_call(cx, op, vec![x, scale, zp], attrs(a as i64));
    }
    if sdims.len() != ndim {
        return Err(cx.error(format!(
            "a blocked scale must have the input's rank {ndim}, found rank {}",
            sdims.len()
        )));
    }
    // Blocked: scale and zero point repeated to the input's shape, then
    // one per element of the flattened input.
    let scale = repeat_blocks(cx, scale, a, block, &dims)?;
    let zp = if cx.tensor(&zp)?.0.is_empty() {
        // The default zero point (no input): 0 everywhere.
        cx.call(
            "relax.broadcast_to",
            vec![zp, shape(dims.clone())],
            Attrs::new(),
        )?
    } else {
        repeat_blocks(cx, zp, a, block, &dims)?
    };
    let n = product(&dims);
    let flat = |cx: &mut Ctx, e: Expr| {
        cx.call(
            "relax.reshape",
            vec![e, shape(vec![n.clone()])],
            Attrs::new(),
        )
    };
    let (x, scale, zp) = (flat(cx, x)?, flat(cx, scale)?, flat(cx, zp)?);
    let y = cx.call(op, vec![x, scale, zp], attrs(0))?;
    cx.call("relax.reshape", vec![y, shape(dims)], Attrs::new())
}

/// The `quantize` or `dequantize` call: a `dequantize` of a constant (a
/// quantized weight) is emitted, not folded, so that
/// `FakeQuantizationToInteger` sees the 8-bit weight (the build's
/// `FoldConstant` folds what it leaves).
fn qdq_call(cx: &mut Ctx, op: &str, args: Vec<Expr>, attrs: Attrs) -> Result<Expr, Error> {
    if op != "relax.dequantize" {
        return cx.call(op, args, attrs);
    }
    let info = relax_core::op::lookup(op)
        .ok_or_else(|| cx.error(format!("`{op}` is not a registered op")))?;
    let call = info.call(args, &attrs).map_err(|d| cx.error(d.message))?;
    let var = cx.bb.emit(call).map_err(|e| cx.error(e))?;
    Ok(Expr::var(&var))
}

/// The default zero point: a scalar 0 of `dtype`.
fn zero_of(cx: &Ctx, dtype: DataType) -> Result<Expr, Error> {
    let t = relax_runtime::Tensor::zeros(dtype, &[]).map_err(|e| cx.error(e))?;
    Ok(Expr::constant(t))
}

/// `e` (of one element) as a scalar.
fn scalar_of(cx: &mut Ctx, e: Expr) -> Result<Expr, Error> {
    let (dims, _) = cx.tensor(&e)?;
    if dims.is_empty() {
        return Ok(e);
    }
    cx.call("relax.reshape", vec![e, shape(vec![])], Attrs::new())
}

/// A blocked parameter `p` (the input's rank, `ceil(d / block)` along
/// `axis`) with each entry repeated `block` times along `axis` and cut to
/// the input's dims `dims`.
fn repeat_blocks(
    cx: &mut Ctx,
    p: Expr,
    axis: usize,
    block: i64,
    dims: &[PrimExpr],
) -> Result<Expr, Error> {
    let (pdims, _) = cx.tensor(&p)?;
    for (k, (pd, d)) in pdims.iter().zip(dims).enumerate() {
        let want = if k == axis {
            d.as_int().map(|d| (d + block - 1) / block)
        } else {
            d.as_int()
        };
        if let (Some(w), Some(got)) = (want, pd.as_int()) {
            if w != got {
                return Err(cx.error(format!(
                    "a blocked scale or zero point has {got} entries along axis {k}, \
                     expected {w} (block size {block})"
                )));
            }
        }
    }
    let attrs = Attrs::from_pairs([("axis", super::ints([axis as i64 + 1]))]);
    let e = cx.call("relax.expand_dims", vec![p], attrs)?;
    let mut wide = pdims.clone();
    wide.insert(axis + 1, PrimExpr::int(block));
    let e = cx.call("relax.broadcast_to", vec![e, shape(wide)], Attrs::new())?;
    let mut merged = pdims.clone();
    merged[axis] = pdims[axis].clone() * PrimExpr::int(block);
    let e = cx.call("relax.reshape", vec![e, shape(merged)], Attrs::new())?;
    let attrs = Attrs::from_pairs([
        ("axes", super::ints([axis as i64])),
        ("begin", super::ints([0])),
        (
            "end",
            AttrValue::Array(vec![AttrValue::PrimExpr(dims[axis].clone())]),
        ),
    ]);
    cx.call("relax.strided_slice", vec![e], attrs)
}

/// The `output_dtype` attribute (opset 21+), if set.
fn output_dtype(cx: &Ctx) -> Result<Option<DataType>, Error> {
    match cx.node.int_or("output_dtype", 0)? {
        0 => Ok(None),
        t => crate::tensor::dtype_of(t as i32).map(Some).ok_or_else(|| {
            cx.error(format!(
                "output_dtype {} is not supported",
                crate::tensor::elem_type_name(t as i32)
            ))
        }),
    }
}

pub fn quantize_linear(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&[
        "axis",
        "block_size",
        "output_dtype",
        "saturate",
        "precision",
    ])?;
    let x = cx.input(0)?;
    let zp_dtype = match cx.opt_input(2)? {
        Some(z) => Some(cx.tensor(&z)?.1),
        None => None,
    };
    let out = match (output_dtype(cx)?, zp_dtype) {
        (Some(o), Some(z)) if o != z => {
            return Err(cx.error(format!(
                "output_dtype {o} differs from the zero point's type {z}"
            )))
        }
        (Some(o), _) => o,
        (None, Some(z)) => z,
        (None, None) => DataType::uint(8),
    };
    if !out.is_integer() || out.is_bool() {
        return Err(cx.error(format!("quantizing to {out} is not supported")));
    }
    let zero = zero_of(cx, out)?;
    Ok(vec![qdq(cx, "relax.quantize", x, zero, out)?])
}

pub fn dequantize_linear(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node
        .only_attrs(&["axis", "block_size", "output_dtype"])?;
    let x = cx.input(0)?;
    let (_, xdt) = cx.tensor(&x)?;
    let scale = cx.input(1)?;
    let (_, sdt) = cx.tensor(&scale)?;
    let out = output_dtype(cx)?.unwrap_or(sdt);
    if !xdt.is_integer() || xdt.is_bool() {
        return Err(cx.error(format!("dequantizing {xdt} is not supported")));
    }
    let zero = zero_of(cx, xdt)?;
    Ok(vec![qdq(cx, "relax.dequantize", x, zero, out)?])
}

pub fn dynamic_quantize_linear(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&[])?;
    let x = cx.input(0)?;
    let (_, dtype) = cx.tensor(&x)?;
    if dtype != DataType::f32() {
        return Err(cx.error(format!("the input must be float32, found {dtype}")));
    }
    let zero = cx.scalar(0.0, dtype)?;
    let hi = reduce_all(cx, "relax.max", &x)?;
    let hi = cx.op2("relax.maximum", hi, zero.clone())?;
    let lo = reduce_all(cx, "relax.min", &x)?;
    let lo = cx.op2("relax.minimum", lo, zero.clone())?;
    let range = cx.op2("relax.subtract", hi, lo.clone())?;
    let empty = cx.op2("relax.equal", range.clone(), zero.clone())?;
    let one = cx.scalar(1.0, dtype)?;
    let range = cx.call("relax.where", vec![empty, one, range], Attrs::new())?;
    let steps = cx.scalar(255.0, dtype)?;
    let scale = cx.op2("relax.divide", range, steps.clone())?;
    let shift = cx.op2("relax.divide", lo, scale.clone())?;
    let zp = cx.op2("relax.subtract", zero.clone(), shift)?;
    let zp = cx.op2("relax.maximum", zp, zero)?;
    let zp = cx.op2("relax.minimum", zp, steps)?;
    let zp = cx.op1("relax.round", zp)?;
    let zp = cx.astype(zp, DataType::uint(8))?;
    let attrs = Attrs::from_pairs([("out_dtype", AttrValue::DataType(DataType::uint(8)))]);
    let y = cx.call("relax.quantize", vec![x, scale.clone(), zp.clone()], attrs)?;
    Ok(vec![y, scale, zp])
}

/// `op` (`relax.max` or `relax.min`) over every element of `x`: for a
/// rank of 2 or more, over the last axis first and then over what is
/// left. The reduction of rows is the one the CPU schedules vectorize and
/// run in parallel (a reduction straight to a scalar is one serial
/// loop), and the result is the same: both are exact and propagate NaN,
/// and the zero's sign, which the order may change, is lost in the range
/// `max(hi, 0) - min(lo, 0)` (item 2 of the module docs).
fn reduce_all(cx: &mut Ctx, op: &str, x: &Expr) -> Result<Expr, Error> {
    let (dims, _) = cx.tensor(x)?;
    if dims.len() < 2 {
        return cx.op1(op, x.clone());
    }
    let last = Attrs::from_pairs([
        ("axis", super::ints([-1])),
        ("keepdims", AttrValue::Bool(false)),
    ]);
    let rows = cx.call(op, vec![x.clone()], last)?;
    cx.op1(op, rows)
}

/// Input `i` (an integer tensor) in `int32`, minus the zero point input
/// `zp_input` if given: a scalar, or 1-d per row (`rows`, of `A`) or per
/// column (of `B`).
fn centered(cx: &mut Ctx, i: usize, zp_input: usize, rows: bool) -> Result<Expr, Error> {
    let x = cx.input(i)?;
    let (dims, xdt) = cx.tensor(&x)?;
    if !xdt.is_integer() || xdt.is_bool() {
        return Err(cx.error(format!("input {i} must be an integer tensor, found {xdt}")));
    }
    let x = cx.astype(x, DataType::i32())?;
    let Some(zp) = cx.opt_input(zp_input)? else {
        return Ok(x);
    };
    let zp = per_row_or_column(cx, zp, &dims, rows)?;
    let zp = cx.astype(zp, DataType::i32())?;
    cx.op2("relax.subtract", x, zp)
}

/// A zero point or scale `p` for a matrix of dims `dims`: a scalar when it
/// has one element, else 1-d per row (shaped `(m, 1)`) or per column.
fn per_row_or_column(cx: &mut Ctx, p: Expr, dims: &[PrimExpr], rows: bool) -> Result<Expr, Error> {
    let (pdims, _) = cx.tensor(&p)?;
    if pdims.iter().all(|d| d.as_int() == Some(1)) {
        return scalar_of(cx, p);
    }
    if pdims.len() != 1 || dims.len() < 2 {
        return Err(cx.error(format!(
            "a zero point or scale must be a scalar or 1-d (per row or column), found rank {}",
            pdims.len()
        )));
    }
    if rows {
        let m = dims[dims.len() - 2].clone();
        cx.call(
            "relax.reshape",
            vec![p, shape(vec![m, PrimExpr::int(1)])],
            Attrs::new(),
        )
    } else {
        Ok(p)
    }
}

pub fn mat_mul_integer(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&[])?;
    Ok(vec![exact_product(cx, (0, 2), (1, 3))?])
}

/// `Σ_k (a - a_zp)(b - b_zp)` in `int32` of the inputs `a.0` and `b.0`
/// with zero point inputs `a.1` and `b.1` (module docs, item 3).
fn exact_product(cx: &mut Ctx, a: (usize, usize), b: (usize, usize)) -> Result<Expr, Error> {
    let (ai, bi) = (cx.input(a.0)?, cx.input(b.0)?);
    let ((adims, adt), (bdims, bdt)) = (cx.tensor(&ai)?, cx.tensor(&bi)?);
    let eight_bit = |d: DataType| d.is_integer() && !d.is_bool() && d.bits() == 8;
    if eight_bit(adt) && eight_bit(bdt) && adims.len() >= 2 && bdims.len() >= 2 {
        // The 8-bit tensors themselves into an int32 matmul, and the zero
        // point corrections (FakeQuantizationToInteger's form).
        let za = int32_zero_point(cx, a.1, &adims, true)?;
        let zb = int32_zero_point(cx, b.1, &bdims, false)?;
        let mut make = |op: &str, args: Vec<Expr>, attrs: Attrs| cx.call(op, args, attrs);
        return integer_matmul(&mut make, ai, za, bi, zb);
    }
    let ca = centered(cx, a.0, a.1, true)?;
    let cb = centered(cx, b.0, b.1, false)?;
    cx.op2("relax.matmul", ca, cb)
}

/// The zero point input `zp_input` of a matrix of dims `dims` in `int32`,
/// shaped to broadcast against the product (a scalar, per row `(m, 1)` or
/// per column), or `None` when it is absent or a constant 0.
fn int32_zero_point(
    cx: &mut Ctx,
    zp_input: usize,
    dims: &[PrimExpr],
    rows: bool,
) -> Result<Option<Expr>, Error> {
    let Some(zp) = cx.opt_input(zp_input)? else {
        return Ok(None);
    };
    if is_constant_zero(&zp) {
        return Ok(None);
    }
    let zp = per_row_or_column(cx, zp, dims, rows)?;
    Ok(Some(cx.astype(zp, DataType::i32())?))
}

pub fn q_linear_mat_mul(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&[])?;
    let c = exact_product(cx, (0, 2), (3, 5))?;
    let (adims, _) = {
        let a = cx.input(0)?;
        cx.tensor(&a)?
    };
    let (bdims, _) = {
        let b = cx.input(3)?;
        cx.tensor(&b)?
    };
    let a_scale = cx.input(1)?;
    let a_scale = per_row_or_column(cx, a_scale, &adims, true)?;
    let b_scale = cx.input(4)?;
    let b_scale = per_row_or_column(cx, b_scale, &bdims, false)?;
    let y_scale = cx.input(6)?;
    let y_scale = per_row_or_column(cx, y_scale, &bdims, false)?;
    let y_zp = cx.input(7)?;
    let (_, out) = cx.tensor(&y_zp)?;
    let y_zp = per_row_or_column(cx, y_zp, &bdims, false)?;
    Ok(vec![requantize(
        cx, c, a_scale, b_scale, y_scale, y_zp, out,
    )?])
}

/// `acc · a_scale · b_scale / y_scale`, computed in `float64`, rounded and
/// shifted by `y_zp` into `out`: how the QLinear ops turn their exact
/// `int32` accumulator into the output's quantized values.
fn requantize(
    cx: &mut Ctx,
    acc: Expr,
    a_scale: Expr,
    b_scale: Expr,
    y_scale: Expr,
    y_zp: Expr,
    out: DataType,
) -> Result<Expr, Error> {
    let (_, sdt) = cx.tensor(&a_scale)?;
    if !sdt.is_float() {
        return Err(cx.error(format!("the scales must be floats, found {sdt}")));
    }
    let m = cx.op2("relax.multiply", a_scale, b_scale)?;
    let m = cx.op2("relax.divide", m, y_scale)?;
    let f64t = DataType::f64();
    let acc = cx.astype(acc, f64t)?;
    let m = cx.astype(m, f64t)?;
    let d = cx.op2("relax.multiply", acc, m)?;
    let one = cx.scalar(1.0, f64t)?;
    let attrs = Attrs::from_pairs([("out_dtype", AttrValue::DataType(out))]);
    cx.call("relax.quantize", vec![d, one, y_zp], attrs)
}

/// Input `i` (an integer tensor) in `int32`, minus the zero point input
/// `zp_input` if given: a scalar, or for a weight (`weight`) one per
/// output channel, the first axis.
fn centered_per_channel(
    cx: &mut Ctx,
    i: usize,
    zp_input: usize,
    weight: bool,
) -> Result<Expr, Error> {
    let x = cx.input(i)?;
    let (dims, xdt) = cx.tensor(&x)?;
    if !xdt.is_integer() || xdt.is_bool() {
        return Err(cx.error(format!("input {i} must be an integer tensor, found {xdt}")));
    }
    let x = cx.astype(x, DataType::i32())?;
    let Some(zp) = cx.opt_input(zp_input)? else {
        return Ok(x);
    };
    let zp = if weight {
        per_channel(cx, zp, &dims, 0)?
    } else {
        scalar_of(cx, zp)?
    };
    let zp = cx.astype(zp, DataType::i32())?;
    cx.op2("relax.subtract", x, zp)
}

/// A zero point or scale `p` of one element (a scalar), or 1-d with one
/// entry per index of axis `axis` of a tensor of dims `dims` (shaped to
/// broadcast along it).
fn per_channel(cx: &mut Ctx, p: Expr, dims: &[PrimExpr], axis: usize) -> Result<Expr, Error> {
    let (pdims, _) = cx.tensor(&p)?;
    if pdims.iter().all(|d| d.as_int() == Some(1)) {
        return scalar_of(cx, p);
    }
    if pdims.len() != 1 || axis >= dims.len() {
        return Err(cx.error(format!(
            "a zero point or scale must be a scalar or 1-d (per channel), found rank {}",
            pdims.len()
        )));
    }
    let wide: Vec<PrimExpr> = (0..dims.len())
        .map(|k| {
            if k == axis {
                pdims[0].clone()
            } else {
                PrimExpr::int(1)
            }
        })
        .collect();
    cx.call("relax.reshape", vec![p, shape(wide)], Attrs::new())
}

/// `Conv`'s attributes, which `ConvInteger` and `QLinearConv` share.
const CONV_ATTRS: &[&str] = &[
    "auto_pad",
    "dilations",
    "group",
    "kernel_shape",
    "pads",
    "strides",
];

pub fn conv_integer(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(CONV_ATTRS)?;
    if let Some(acc) = integer_conv2d(cx, (0, 2), (1, 3))? {
        return Ok(vec![acc]);
    }
    let x = centered_per_channel(cx, 0, 2, false)?;
    let w = centered_per_channel(cx, 1, 3, true)?;
    super::nn::conv_of(cx, x, w, None)
}

/// The exact `int32` convolution of the 8-bit input `x.0` and weight
/// `w.0` with zero point inputs `x.1` and `w.1` in
/// `FakeQuantizationToInteger`'s form ([`IntegerConv2d`]: an `int32`
/// `conv2d` of the 8-bit tensors themselves, which runs on the `vpdpbusd`
/// kernel, minus the zero-point corrections), when the convolution is 2-d
/// and both tensors are 8-bit with known weight dims; else `None`.
fn integer_conv2d(
    cx: &mut Ctx,
    x: (usize, usize),
    w: (usize, usize),
) -> Result<Option<Expr>, Error> {
    let (xi, wi) = (cx.input(x.0)?, cx.input(w.0)?);
    let ((xdims, xdt), (wdims, wdt)) = (cx.tensor(&xi)?, cx.tensor(&wi)?);
    let eight_bit = |d: DataType| d.is_integer() && !d.is_bool() && d.bits() == 8;
    let w_dims: Option<Vec<i64>> = wdims.iter().map(|d| d.as_int()).collect();
    let (Some(w_dims), true) = (w_dims, eight_bit(xdt) && eight_bit(wdt)) else {
        return Ok(None);
    };
    let Some(attrs) = super::nn::conv2d_attrs(cx, &xi, &wi)? else {
        return Ok(None);
    };
    let zx = match cx.opt_input(x.1)? {
        Some(z) if !is_constant_zero(&z) => {
            let z = scalar_of(cx, z)?;
            Some(cx.astype(z, DataType::i32())?)
        }
        _ => None,
    };
    let (zw, per_channel_zw) = match cx.opt_input(w.1)? {
        Some(z) if !is_constant_zero(&z) => {
            let (zdims, _) = cx.tensor(&z)?;
            let z = if zdims.iter().all(|d| d.as_int() == Some(1)) {
                scalar_of(cx, z)?
            } else if zdims.len() == 1 {
                z
            } else {
                return Err(cx.error(format!(
                    "the weight's zero point must be a scalar or 1-d (per output channel), found rank {}",
                    zdims.len()
                )));
            };
            let per_channel = !cx.tensor(&z)?.0.is_empty();
            (Some(cx.astype(z, DataType::i32())?), per_channel)
        }
        _ => (None, false),
    };
    let conv = IntegerConv2d {
        x_dims: &xdims,
        w_dims: &w_dims,
        attrs,
        per_channel_zw,
    };
    let mut make = |op: &str, args: Vec<Expr>, attrs: Attrs| cx.call(op, args, attrs);
    conv.build(&mut make, xi, zx, wi, zw).map(Some)
}

pub fn q_linear_conv(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(CONV_ATTRS)?;
    let acc = match integer_conv2d(cx, (0, 2), (3, 5))? {
        Some(acc) => match cx.opt_input(8)? {
            Some(b) => {
                let b = cx.astype(b, DataType::i32())?;
                let (bdims, _) = cx.tensor(&b)?;
                let b = per_channel(
                    cx,
                    b,
                    &[
                        PrimExpr::int(1),
                        bdims[0].clone(),
                        PrimExpr::int(1),
                        PrimExpr::int(1),
                    ],
                    1,
                )?;
                cx.op2("relax.add", acc, b)?
            }
            None => acc,
        },
        None => {
            let x = centered_per_channel(cx, 0, 2, false)?;
            let w = centered_per_channel(cx, 3, 5, true)?;
            let bias = match cx.opt_input(8)? {
                Some(b) => Some(cx.astype(b, DataType::i32())?),
                None => None,
            };
            super::nn::conv_of(cx, x, w, bias)?.remove(0)
        }
    };
    let (ydims, _) = cx.tensor(&acc)?;
    let x_scale = cx.input(1)?;
    let x_scale = scalar_of(cx, x_scale)?;
    let w_scale = cx.input(4)?;
    let w_scale = per_channel(cx, w_scale, &ydims, 1)?;
    let y_scale = cx.input(6)?;
    let y_scale = scalar_of(cx, y_scale)?;
    let y_zp = cx.input(7)?;
    let (_, out) = cx.tensor(&y_zp)?;
    let y_zp = scalar_of(cx, y_zp)?;
    Ok(vec![requantize(
        cx, acc, x_scale, w_scale, y_scale, y_zp, out,
    )?])
}
