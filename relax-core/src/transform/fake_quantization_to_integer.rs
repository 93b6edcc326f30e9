//! `FakeQuantizationToInteger` (Relay's pass of that name): a float
//! `matmul` of two dequantized 8-bit tensors becomes an integer `matmul`
//! of the 8-bit tensors themselves, accumulated in `int32`, and one float
//! rescale.
//!
//! 1. The pattern (written with [`crate::dpl`]):
//!    `matmul(dequantize(xq, sx, zx), dequantize(wq, sw, zw))`, where `xq`
//!    and `wq` are `int8` or `uint8` tensors of rank at least 2, `sx` and
//!    `zx` are per tensor (scalars), and `sw`, `zw` are per tensor or per
//!    axis along `wq`'s last axis (the weight's output channel). Both
//!    dequantizes produce the same float type, which the matmul keeps (its
//!    `out_dtype` unset or that type).
//! 2. The replacement (see [`integer_matmul`]):
//!    `acc = matmul(xq, wq, out_dtype="int32")
//!         - zw · Σ_k xq[.., i, k]            (skipped when zw is a constant 0)
//!         - zx · Σ_k (wq[.., k, j] - zw)     (skipped when zx is a constant 0)`
//!    which is `Σ_k (xq - zx)(wq - zw)` exactly: expanding the product gives
//!    `Σ xq·wq - zw·Σ xq - zx·Σ wq + K·zx·zw`, and the last two terms are
//!    the one column sum `zx·Σ_k (wq - zw)`, so the inner length `K` may be
//!    symbolic. For a constant weight the column sum is a constant, folded
//!    once by `FoldConstant` (the build pipeline runs it). Then
//!    `astype(acc, float) · (sx · sw)`: the integer part is exact (8-bit
//!    operands; `int32` wraps, and the exact result fits), so only the
//!    final rescale rounds, and the result is within rounding of the float
//!    path `Σ_k ((xq - zx)·sx)·((wq - zw)·sw)`.
//! 3. `conv2d` (NCHW, OIHW) the same way:
//!    `conv2d(dequantize(xq, sx, zx), dequantize(wq, sw, zw))`, the weight
//!    per tensor or per output channel (axis 0), becomes the `int32`
//!    `conv2d` of the 8-bit tensors (same strides, dilation, groups) minus
//!    `zw · conv2d(xq, ones)` (each window's input sum, per group) and
//!    `zx · Σ_{c,kh,kw} (wq - zw)` per output channel. The float path pads
//!    the dequantized input with 0, which is `zx` in the 8-bit input: with a
//!    nonzero constant `zx` and padding, the input is padded with `zx` by
//!    `nn.pad` and the convolutions have none; a `zx` known only at run
//!    time keeps the zero padding, and its term is `zx · conv2d(1, wq -
//!    zw)` (the weight summed over the taps inside the image at each
//!    output position, a constant for a constant weight) instead of the
//!    per-channel sums. [`IntegerConv2d`] builds this form, for the ONNX
//!    importer's `ConvInteger` and `QLinearConv` too.
//!    The rescale multiplies by `sx · sw`, `sw` laid along the channels.
//!    `FakeQuantizationToInteger::matmul_only()` leaves convolutions alone.
//! 4. Whatever consumed the float result (a bias `add`, a `quantize`) is
//!    unchanged. Anything else (wider integers, per-axis activation scales,
//!    rank-1 operands, mixed float types) is left as it is.
//! 5. First, a `quantize` of a `dequantize` with the same constant
//!    parameters, directly or through one layout op (`reshape`,
//!    `permute_dims`, `expand_dims`, `squeeze`), is the 8-bit tensor itself
//!    (through that layout op): the identity requantizations a QDQ model
//!    puts around its layout ops, exact for the scales it checks (see
//!    `requantize.rs`). The matmuls of item 2 then see 8-bit operands
//!    where the float model reshapes and transposes (attention's heads).
//! 6. With it, a NaN guard `where(isnan(y), c, y)` of a dequantized `y`
//!    whose scale is a finite constant is `y` (a dequantized tensor is
//!    never NaN; `nan_guard.rs`): PyTorch's masked softmax guard, which
//!    fused would read the quantize chain before it twice.
//!
//! The `int32` `matmul` of the raw 8-bit tensors is the form the VNNI
//! kernels take (`vpdpbusd`: `u8 × s8` into `i32`); the ONNX importer's
//! `MatMulInteger` builds the same form with [`integer_matmul`].

mod nan_guard;
mod requantize;

use super::Pass;
use crate::dpl::{is_op, rewrite_calls, wildcard, Bindings, Match, Pattern};
use crate::ir::{AttrValue, Attrs, Call, Expr, ExprKind, IRModule, PrimExpr, TensorStructInfo};
use crate::op::infer::{attr_dtype, attr_int};
use nan_guard::NanGuardRule;
use relax_runtime::Tensor;
use relax_runtime::{DataType, Error};
use requantize::RequantizeRule;

/// The pass. See the module docs.
#[derive(Clone, Copy, Debug)]
pub struct FakeQuantizationToInteger {
    /// Whether `conv2d` is rewritten too (item 3).
    conv2d: bool,
}

/// The pass over matmuls and convolutions.
impl Default for FakeQuantizationToInteger {
    fn default() -> Self {
        FakeQuantizationToInteger { conv2d: true }
    }
}

impl FakeQuantizationToInteger {
    /// The pass over matmuls only (convolutions keep the float path):
    /// for a target without the int8 convolution's schedule (it is
    /// `DefaultSchedule`'s on 512-bit vectors, `conv_int8.rs`).
    pub fn matmul_only() -> Self {
        FakeQuantizationToInteger { conv2d: false }
    }
}

impl Pass for FakeQuantizationToInteger {
    fn name(&self) -> &str {
        "FakeQuantizationToInteger"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        let rule = MatmulRule::new()?;
        let conv = ConvRule::new()?;
        let requantize = RequantizeRule::new()?;
        let nan_guard = NanGuardRule::new()?;
        let mut out = module.clone();
        for (gv, f) in module.functions() {
            let Some(func) = f.as_relax() else { continue };
            // Items 5 and 6 first, in their own rewrite: they replace
            // `quantize` and `where` bindings, and the products below read
            // the bindings as they are after it.
            let bindings = Bindings::of_function(func);
            let identity = |orig: &Expr, m: &Match| {
                requantize
                    .rewrite(orig, m, &bindings)
                    .unwrap_or_else(|| orig.clone())
            };
            let unguarded = |orig: &Expr, m: &Match| {
                nan_guard
                    .rewrite(orig, m, &bindings)
                    .unwrap_or_else(|| orig.clone())
            };
            let func = &rewrite_calls(
                &[
                    (&requantize.pattern, &identity),
                    (&nan_guard.pattern, &unguarded),
                ],
                func,
            )?;
            // The dequantize calls are read through the function's bindings
            // (a match records the variables); the rewrite replaces only
            // matmul bindings, so these stay valid through its rounds.
            let bindings = Bindings::of_function(func);
            let matmul = |orig: &Expr, m: &Match| {
                rule.rewrite(orig, m, &bindings)
                    .unwrap_or_else(|| orig.clone())
            };
            let conv2d = |orig: &Expr, m: &Match| {
                conv.rewrite(orig, m, &bindings)
                    .unwrap_or_else(|| orig.clone())
            };
            let rules: &[crate::dpl::Rule<'_>] = if self.conv2d {
                &[(&rule.pattern, &matmul), (&conv.pattern, &conv2d)]
            } else {
                &[(&rule.pattern, &matmul)]
            };
            let new = rewrite_calls(rules, func)?;
            out.add(gv.clone(), new);
        }
        Ok(out)
    }
}

/// The matmul pattern and the sub-patterns the rewrite reads.
struct MatmulRule {
    pattern: Pattern,
    x: Pattern,
    w: Pattern,
}

impl MatmulRule {
    fn new() -> Result<MatmulRule, Error> {
        let deq = |e: &Pattern| -> Result<Pattern, Error> {
            Ok(is_op("relax.dequantize")?.call([e.clone(), wildcard(), wildcard()]))
        };
        let x = deq(&wildcard())?;
        let w = deq(&wildcard())?;
        let pattern = is_op("relax.matmul")?.call([x.clone(), w.clone()]);
        Ok(MatmulRule { pattern, x, w })
    }

    /// The integer form of a match (module docs, item 2), or `None` when
    /// the match is not one this pass turns into integers.
    fn rewrite(&self, orig: &Expr, m: &Match, bindings: &Bindings) -> Option<Expr> {
        let (mm, x, w) = (
            orig.as_call()?,
            call_of(m.get(&self.x)?, bindings)?,
            call_of(m.get(&self.w)?, bindings)?,
        );
        if x.args.len() != 3 || w.args.len() != 3 {
            return None;
        }
        let (fx, fw) = (dequantized_type(x)?, dequantized_type(w)?);
        let mm_out = attr_dtype(mm, "out_dtype");
        if fx != fw || !(mm_out.is_void() || mm_out == fx) {
            return None;
        }
        let (xq, sx, zx) = (&x.args[0], &x.args[1], &x.args[2]);
        let (wq, sw, zw) = (&w.args[0], &w.args[1], &w.args[2]);
        let (xt, wt) = (eight_bit(xq)?, eight_bit(wq)?);
        // The activation: one scale and zero point.
        if rank(sx)? != 0 || rank(zx)? != 0 {
            return None;
        }
        // The weight: per tensor, or per axis along its last axis.
        if rank(sw)? > 0 || rank(zw)? > 0 {
            let axis = attr_int(w, "axis").unwrap_or(-1);
            if axis != -1 && axis != i64::from(wt.ndim) - 1 {
                return None;
            }
        }
        if xt.ndim < 2 || wt.ndim < 2 {
            return None;
        }
        let (zx, zw) = (int32_zero_point(zx)?, int32_zero_point(zw)?);
        let mut nest = |op: &str, args: Vec<Expr>, attrs: Attrs| Ok(Expr::call_op(op, args, attrs));
        let acc = integer_matmul(&mut nest, xq.clone(), zx, wq.clone(), zw).ok()?;
        let mut scale = Expr::call_op("relax.multiply", vec![sx.clone(), sw.clone()], Attrs::new());
        if tensor(sx)?.dtype != fx {
            scale = astype(scale, fx);
        }
        Some(Expr::call_op(
            "relax.multiply",
            vec![astype(acc, fx), scale],
            Attrs::new(),
        ))
    }
}

/// The `conv2d` pattern (module docs, item 3) and the sub-patterns the
/// rewrite reads.
struct ConvRule {
    pattern: Pattern,
    x: Pattern,
    w: Pattern,
}

impl ConvRule {
    fn new() -> Result<ConvRule, Error> {
        let deq = || -> Result<Pattern, Error> {
            Ok(is_op("relax.dequantize")?.call([wildcard(), wildcard(), wildcard()]))
        };
        let (x, w) = (deq()?, deq()?);
        let pattern = is_op("relax.nn.conv2d")?.call([x.clone(), w.clone()]);
        Ok(ConvRule { pattern, x, w })
    }

    /// The integer form of a match (module docs, item 3), or `None`.
    fn rewrite(&self, orig: &Expr, m: &Match, bindings: &Bindings) -> Option<Expr> {
        let conv = orig.as_call()?;
        let (x, w) = (
            call_of(m.get(&self.x)?, bindings)?,
            call_of(m.get(&self.w)?, bindings)?,
        );
        if x.args.len() != 3 || w.args.len() != 3 {
            return None;
        }
        let attrs = crate::op::lookup("relax.nn.conv2d")?
            .normalize_attrs(&conv.attrs)
            .ok()?;
        let layout = |k: &str| attrs.get(k).and_then(AttrValue::as_str).map(str::to_string);
        if layout("data_layout")? != "NCHW"
            || layout("kernel_layout")? != "OIHW"
            || layout("out_layout")? != "NCHW"
        {
            return None;
        }
        let (fx, fw) = (dequantized_type(x)?, dequantized_type(w)?);
        let out = attr_dtype(conv, "out_dtype");
        if fx != fw || !(out.is_void() || out == fx) {
            return None;
        }
        let (xq, sx, zx) = (&x.args[0], &x.args[1], &x.args[2]);
        let (wq, sw, zw) = (&w.args[0], &w.args[1], &w.args[2]);
        let (xt, wt) = (eight_bit(xq)?, eight_bit(wq)?);
        if xt.ndim != 4 || wt.ndim != 4 || rank(sx)? != 0 || rank(zx)? != 0 {
            return None;
        }
        // The weight: per tensor, or per output channel (axis 0).
        let per_channel = rank(sw)? > 0 || rank(zw)? > 0;
        if per_channel && attr_int(w, "axis").unwrap_or(-1) != 0 {
            return None;
        }
        let (zx32, zw32) = (int32_zero_point(zx)?, int32_zero_point(zw)?);
        let dims: Vec<i64> = wt
            .shape_values()?
            .iter()
            .map(|d| d.as_int())
            .collect::<Option<_>>()?;
        let x_dims = xt.shape_values()?.to_vec();
        let mut nest = |op: &str, args: Vec<Expr>, attrs: Attrs| Ok(Expr::call_op(op, args, attrs));
        let conv = IntegerConv2d {
            x_dims: &x_dims,
            w_dims: &dims,
            attrs,
            per_channel_zw: rank(zw)? > 0,
        };
        let acc = conv
            .build(&mut nest, xq.clone(), zx32, wq.clone(), zw32)
            .ok()?;
        let mul = |a: Expr, b: Expr| Expr::call_op("relax.multiply", vec![a, b], Attrs::new());
        let sw4 = if rank(sw)? > 0 {
            along(&mut nest, sw.clone(), 1).ok()?
        } else {
            sw.clone()
        };
        let mut scale = mul(sx.clone(), sw4);
        if tensor(sx)?.dtype != fx {
            scale = astype(scale, fx);
        }
        Some(mul(astype(acc, fx), scale))
    }
}

/// A per-channel parameter `p` (1-d) laid along `axis` of a 4-d tensor.
fn along(make: &mut MakeCall<'_>, p: Expr, axis: i64) -> Result<Expr, Error> {
    let others: Vec<AttrValue> = (0..4).filter(|&a| a != axis).map(AttrValue::Int).collect();
    make(
        "relax.expand_dims",
        vec![p],
        Attrs::from_pairs([("axis", AttrValue::Array(others))]),
    )
}

/// An `int32` `conv2d` of 8-bit tensors with their zero points (module
/// docs, item 3), shared by the pass and the ONNX importer's
/// `ConvInteger` and `QLinearConv`.
pub struct IntegerConv2d<'a> {
    /// The input's dims (NCHW).
    pub x_dims: &'a [PrimExpr],
    /// The weight's dims (OIHW), known.
    pub w_dims: &'a [i64],
    /// The convolution's attributes, normalized (NCHW, OIHW, NCHW).
    pub attrs: Attrs,
    /// Whether the weight's zero point is 1-d, one per output channel
    /// (else a scalar).
    pub per_channel_zw: bool,
}

impl IntegerConv2d<'_> {
    /// `Σ (xq - zx)·(wq - zw)` over each window, in `int32`, as the `int32`
    /// `conv2d` of `xq` and `wq` minus the zero-point corrections. `zx` and
    /// `zw` are `int32` zero points (`None`: 0). The float path pads the
    /// dequantized input with 0, which is `zx` in the 8-bit input: a
    /// constant `zx` is padded explicitly (`nn.pad`), and the convolutions
    /// have no padding; any other keeps the zero padding and subtracts
    /// `zx · conv2d(1, wq - zw)`, the weight summed over the taps inside
    /// the image at each output position (constant for a constant weight
    /// and known image dims, folded once).
    pub fn build(
        &self,
        make: &mut MakeCall<'_>,
        xq: Expr,
        zx: Option<Expr>,
        wq: Expr,
        zw: Option<Expr>,
    ) -> Result<Expr, Error> {
        let i32t = DataType::i32();
        let fail = |what: &str| Error::Unsupported(format!("an integer conv2d {what}"));
        let padding = match self.attrs.get("padding") {
            Some(AttrValue::Array(v)) => v.iter().filter_map(AttrValue::as_int).collect(),
            _ => vec![0; 4],
        };
        let padded = padding.iter().any(|&p| p != 0);
        let dtype = |d: DataType| Attrs::from_pairs([("dtype", AttrValue::DataType(d))]);
        let zw_along = |make: &mut MakeCall<'_>, axis: i64| -> Result<Option<Expr>, Error> {
            match &zw {
                Some(z) if self.per_channel_zw => Ok(Some(along(make, z.clone(), axis)?)),
                other => Ok(other.clone()),
            }
        };
        let (mut data, mut conv_attrs) = (
            xq.clone(),
            self.attrs
                .clone()
                .with("out_dtype", AttrValue::DataType(i32t)),
        );
        let zx_constant = zx.as_ref().and_then(|z| match z.kind() {
            ExprKind::Constant(t) => t.to_f64_vec().first().copied(),
            _ => None,
        });
        if let (Some(value), true) = (zx_constant, padded) {
            let [top, left, bottom, right] = padding[..] else {
                return Err(fail("needs four paddings"));
            };
            let width = [0, 0, 0, 0, top, bottom, left, right].map(AttrValue::Int);
            data = make(
                "relax.nn.pad",
                vec![data],
                Attrs::from_pairs([
                    ("pad_width", AttrValue::Array(width.to_vec())),
                    ("pad_value", AttrValue::Float(value)),
                    ("pad_mode", AttrValue::Str("constant".into())),
                ]),
            )?;
            conv_attrs = conv_attrs.with("padding", AttrValue::Array(vec![AttrValue::Int(0); 4]));
        }
        let mut acc = make(
            "relax.nn.conv2d",
            vec![data.clone(), wq.clone()],
            conv_attrs.clone(),
        )?;
        if let Some(zw4) = zw_along(make, 1)? {
            // zw · Σ over each window of the input: a conv with ones of
            // the weight's shape.
            let n: i64 = self.w_dims.iter().product();
            let n = usize::try_from(n).map_err(|_| fail("has a negative weight dim"))?;
            let ones = Tensor::from_vec(self.w_dims, vec![1i32; n])?;
            let x32 = make("relax.astype", vec![data], dtype(i32t))?;
            let sums = make(
                "relax.nn.conv2d",
                vec![x32, Expr::constant(ones)],
                conv_attrs.clone(),
            )?;
            let term = make("relax.multiply", vec![sums, zw4], Attrs::new())?;
            acc = make("relax.subtract", vec![acc, term], Attrs::new())?;
        }
        let Some(zx) = zx else {
            return Ok(acc);
        };
        let mut w32 = make("relax.astype", vec![wq], dtype(i32t))?;
        if let Some(zw0) = zw_along(make, 0)? {
            w32 = make("relax.subtract", vec![w32, zw0], Attrs::new())?;
        }
        let cols = if padded && zx_constant.is_none() {
            // zx · Σ over the taps inside the image of (wq - zw): a conv of
            // ones of one image's shape, zero padded.
            let dims: Vec<i64> = self
                .x_dims
                .iter()
                .skip(1)
                .map(|d| d.as_int())
                .collect::<Option<_>>()
                .ok_or_else(|| fail("with a run-time zero point needs the image's dims"))?;
            let shape = [vec![1], dims].concat();
            let n = usize::try_from(shape.iter().product::<i64>())
                .map_err(|_| fail("has a negative image dim"))?;
            let ones = Tensor::from_vec(&shape, vec![1i32; n])?;
            make(
                "relax.nn.conv2d",
                vec![Expr::constant(ones), w32],
                conv_attrs,
            )?
        } else {
            // zx · Σ_{c, kh, kw} (wq - zw) per output channel, (1, O, 1, 1).
            let sums = make(
                "relax.sum",
                vec![w32],
                Attrs::from_pairs([
                    (
                        "axis",
                        AttrValue::Array([1, 2, 3].map(AttrValue::Int).to_vec()),
                    ),
                    ("keepdims", AttrValue::Bool(true)),
                ]),
            )?;
            make(
                "relax.permute_dims",
                vec![sums],
                Attrs::from_pairs([(
                    "axes",
                    AttrValue::Array([1, 0, 2, 3].map(AttrValue::Int).to_vec()),
                )]),
            )?
        };
        let term = make("relax.multiply", vec![zx, cols], Attrs::new())?;
        make("relax.subtract", vec![acc, term], Attrs::new())
    }
}

/// The call `e` is, or the call bound to the variable `e`.
fn call_of<'a>(e: &'a Expr, bindings: &'a Bindings) -> Option<&'a Call> {
    match e.as_var() {
        Some(v) => bindings.value(v)?.as_call(),
        None => e.as_call(),
    }
}

/// The float type a `dequantize` call produces (its `out_dtype`, default
/// `float32`).
fn dequantized_type(call: &Call) -> Option<DataType> {
    let out = attr_dtype(call, "out_dtype");
    let out = if out.is_void() { DataType::f32() } else { out };
    out.is_float().then_some(out)
}

/// `e`'s tensor StructInfo, if known.
fn tensor(e: &Expr) -> Option<&TensorStructInfo> {
    e.struct_info()?.as_tensor()
}

/// `e`'s rank, if known.
fn rank(e: &Expr) -> Option<i32> {
    let t = tensor(e)?;
    (!t.is_unknown_ndim()).then_some(t.ndim)
}

/// `e`'s StructInfo if it is an `int8` or `uint8` tensor of known rank.
fn eight_bit(e: &Expr) -> Option<&TensorStructInfo> {
    let t = tensor(e)?;
    let d = t.dtype;
    (d.is_integer() && !d.is_bool() && d.bits() == 8 && !t.is_unknown_ndim()).then_some(t)
}

/// `astype(e, dtype)`, as a nested call.
fn astype(e: Expr, dtype: DataType) -> Expr {
    Expr::call_op(
        "relax.astype",
        vec![e],
        Attrs::from_pairs([("dtype", AttrValue::DataType(dtype))]),
    )
}

/// A zero point in `int32`: `None` for a constant 0 (its correction
/// vanishes), a constant converted now, else an `astype` (outer `None`
/// when a constant cannot be converted).
fn int32_zero_point(e: &Expr) -> Option<Option<Expr>> {
    if is_constant_zero(e) {
        return Some(None);
    }
    Some(Some(match e.kind() {
        ExprKind::Constant(t) => Expr::constant(t.astype(DataType::i32()).ok()?),
        _ => astype(e.clone(), DataType::i32()),
    }))
}

/// Whether `e` is a constant whose elements are all 0 (a zero point whose
/// correction term vanishes).
pub fn is_constant_zero(e: &Expr) -> bool {
    match e.kind() {
        ExprKind::Constant(t) => t.to_f64_vec().iter().all(|&v| v == 0.0),
        _ => false,
    }
}

/// How [`integer_matmul`] makes each call: the pass nests them (the
/// rewrite normalizes the result into bindings), the ONNX importer emits
/// them (and folds those on constants).
pub type MakeCall<'a> = dyn FnMut(&str, Vec<Expr>, Attrs) -> Result<Expr, Error> + 'a;

/// `Σ_k (xq[.., i, k] - zx)·(wq[.., k, j] - zw)` in `int32`, computed as an
/// `int32` `matmul` of the 8-bit tensors themselves minus the zero-point
/// corrections (module docs, item 2). `zx` and `zw` are `int32` zero
/// points already shaped to broadcast against the product (a scalar; for
/// `zx` one per row, `(.., m, 1)`; for `zw` one per column, `(n,)`), and
/// `None` for a zero point that is 0. `xq` and `wq` have rank at least 2.
pub fn integer_matmul(
    make: &mut MakeCall<'_>,
    xq: Expr,
    zx: Option<Expr>,
    wq: Expr,
    zw: Option<Expr>,
) -> Result<Expr, Error> {
    let i32t = DataType::i32();
    let dtype = |d: DataType| Attrs::from_pairs([("dtype", AttrValue::DataType(d))]);
    let sum_over = |axis: i64| {
        Attrs::from_pairs([
            ("axis", AttrValue::Array(vec![AttrValue::Int(axis)])),
            ("keepdims", AttrValue::Bool(true)),
        ])
    };
    let out = Attrs::from_pairs([("out_dtype", AttrValue::DataType(i32t))]);
    let mut acc = make("relax.matmul", vec![xq.clone(), wq.clone()], out)?;
    if let Some(zw) = &zw {
        // zw · Σ_k xq[.., i, k]: (.., m, 1) times the column's zero point.
        let x32 = make("relax.astype", vec![xq], dtype(i32t))?;
        let rows = make("relax.sum", vec![x32], sum_over(-1))?;
        let term = make("relax.multiply", vec![rows, zw.clone()], Attrs::new())?;
        acc = make("relax.subtract", vec![acc, term], Attrs::new())?;
    }
    if let Some(zx) = zx {
        // zx · Σ_k (wq[.., k, j] - zw): (.., 1, n) times the row's zero
        // point; K·zx·zw is in it, so K need not be known.
        let mut w32 = make("relax.astype", vec![wq], dtype(i32t))?;
        if let Some(zw) = zw {
            w32 = make("relax.subtract", vec![w32, zw], Attrs::new())?;
        }
        let cols = make("relax.sum", vec![w32], sum_over(-2))?;
        let term = make("relax.multiply", vec![zx, cols], Attrs::new())?;
        acc = make("relax.subtract", vec![acc, term], Attrs::new())?;
    }
    Ok(acc)
}

#[cfg(test)]
mod tests;
