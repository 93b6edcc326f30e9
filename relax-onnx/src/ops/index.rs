//! Element-wise gathers and scatters, scans, triangles and one-hot:
//! `GatherElements`, `GatherND`, `ScatterElements`, `Scatter` (its
//! deprecated alias, without reductions), `ScatterND`, `CumSum`, `CumProd`, `Trilu`
//! and `OneHot`.
//!
//! 1. Negative indices count from the end of their axis in every one of
//!    these ops, as the registry ops read them; ONNX's reduction `none` is
//!    the registry's `update`.
//! 2. `CumSum`'s (and `CumProd`'s) axis is an input. A constant one is the scan's `axis`;
//!    one computed at run time selects, with `where`, among the scans along
//!    every axis (the output's shape is the input's either way). `reverse
//!    = 1` is a `flip` along the axis before and after the scan (the
//!    registry's `cumsum` has TVM's attributes, without `reverse`).
//! 3. `Trilu`'s `k` is an optional input. A constant one becomes the
//!    PrimValue argument of `tril`/`triu`; one computed at run time (it may
//!    be negative, so it cannot be bound as a dim) keeps the elements whose
//!    column minus row is at most (lower) or at least (upper) `k`, the
//!    positions as `arange` tensors.
//! 4. `OneHot`'s depth must be a constant (it decides a dim). Its indices
//!    may be floats (truncated to `int64`) and negative (`depth` is added,
//!    as ONNX specifies). Constant `[off, on]` values of dtype `float32` or
//!    `int64` become `one_hot`'s PrimValues; other values (computed at run
//!    time, or of another dtype) select through a bool `one_hot` mask with
//!    `where`, so the result always has the values' dtype.

use super::{normalize_axes, Ctx};
use relax_core::ir::{AttrValue, Attrs, Expr, PrimExpr};
use relax_runtime::{DataType, Error, Tensor};

/// The rank of a tensor value.
fn rank(cx: &Ctx, e: &Expr) -> Result<usize, Error> {
    Ok(cx.tensor(e)?.0.len())
}

pub fn gather_elements(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let indices = cx.input(1)?;
    let ndim = rank(cx, &x)?;
    let axis = normalize_axes(cx, &[cx.node.int_or("axis", 0)?], ndim)?[0];
    let attrs = Attrs::from_pairs([("axis", AttrValue::Int(axis as i64))]);
    Ok(vec![cx.call(
        "relax.gather_elements",
        vec![x, indices],
        attrs,
    )?])
}

pub fn gather_nd(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let indices = cx.input(1)?;
    let b = cx.node.int_or("batch_dims", 0)?;
    let attrs = Attrs::from_pairs([("batch_dims", AttrValue::Int(b))]);
    Ok(vec![cx.call("relax.gather_nd", vec![x, indices], attrs)?])
}

/// The node's `reduction` attribute as the registry names it.
fn reduction(cx: &Ctx) -> Result<String, Error> {
    let r = cx
        .node
        .string("reduction")?
        .unwrap_or_else(|| "none".into());
    match r.as_str() {
        "none" => Ok("update".into()),
        "add" | "mul" | "min" | "max" => Ok(r),
        other => Err(cx.error(format!("reduction `{other}` is not supported"))),
    }
}

pub fn scatter_elements(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let indices = cx.input(1)?;
    let updates = cx.input(2)?;
    let ndim = rank(cx, &x)?;
    let axis = normalize_axes(cx, &[cx.node.int_or("axis", 0)?], ndim)?[0];
    let attrs = Attrs::from_pairs([
        ("axis", AttrValue::Int(axis as i64)),
        ("reduction", AttrValue::from(reduction(cx)?.as_str())),
    ]);
    Ok(vec![cx.call(
        "relax.scatter_elements",
        vec![x, indices, updates],
        attrs,
    )?])
}

pub fn scatter_nd(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let indices = cx.input(1)?;
    let updates = cx.input(2)?;
    let attrs = Attrs::from_pairs([("reduction", AttrValue::from(reduction(cx)?.as_str()))]);
    Ok(vec![cx.call(
        "relax.scatter_nd",
        vec![x, indices, updates],
        attrs,
    )?])
}

pub fn cum_sum(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    scan(cx, "relax.cumsum")
}

pub fn cum_prod(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    scan(cx, "relax.cumprod")
}

/// `CumSum` or `CumProd`: the scan `op` (`relax.cumsum`, `relax.cumprod`)
/// along the axis input.
fn scan(cx: &mut Ctx, op: &str) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let ndim = rank(cx, &x)?;
    if !cx.is_computed(1)? {
        let axis = const_axis(cx)?;
        let axis = normalize_axes(cx, &[axis], ndim)?[0] as i64;
        return Ok(vec![scan_along(cx, op, x, axis)?]);
    }
    // An axis computed at run time: the scan along every axis, the one
    // the axis names selected (the output's shape is the input's either
    // way).
    let a = cx.input(1)?;
    let a = cx.call("relax.reshape", vec![a, Expr::shape(vec![])], Attrs::new())?;
    let a = cx.astype(a, DataType::i64())?;
    let n = cx.scalar(ndim as f64, DataType::i64())?;
    let a = cx.wrap_negative(a, n)?;
    let mut y = scan_along(cx, op, x.clone(), 0)?;
    for k in 1..ndim as i64 {
        let yk = scan_along(cx, op, x.clone(), k)?;
        let k = cx.scalar(k as f64, DataType::i64())?;
        let this = cx.op2("relax.equal", a.clone(), k)?;
        y = cx.call("relax.where", vec![this, yk, y], Attrs::new())?;
    }
    Ok(vec![y])
}

/// The scan's constant axis.
fn const_axis(cx: &mut Ctx) -> Result<i64, Error> {
    Ok(match cx.ints_input(1)?.as_deref() {
        Some([a]) => *a,
        Some(other) => {
            return Err(cx.error(format!(
                "the axis input must hold one value, found {}",
                other.len()
            )))
        }
        None => return Err(cx.error("input 1 (axis) is required")),
    })
}

/// The node's scan `op` of `x` along `axis` (normalized).
fn scan_along(cx: &mut Ctx, op: &str, mut x: Expr, axis: i64) -> Result<Expr, Error> {
    let reverse = cx.node.int_or("reverse", 0)? != 0;
    let exclusive = cx.node.int_or("exclusive", 0)? != 0;
    let flip = |cx: &mut Ctx, e: Expr| {
        cx.call(
            "relax.flip",
            vec![e],
            Attrs::from_pairs([("axis", AttrValue::Int(axis))]),
        )
    };
    if reverse {
        x = flip(cx, x)?;
    }
    let attrs = Attrs::from_pairs([
        ("axis", AttrValue::Int(axis)),
        ("exclusive", AttrValue::Bool(exclusive)),
    ]);
    let mut y = cx.call(op, vec![x], attrs)?;
    if reverse {
        y = flip(cx, y)?;
    }
    Ok(y)
}

pub fn trilu(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let upper = cx.node.int_or("upper", 1)? != 0;
    if cx.is_computed(1)? {
        // A `k` computed at run time (it may be negative, so it is no dim):
        // keep x where `j - i` is at most `k` (lower) or at least `k`
        // (upper), with the row and column positions as tensors.
        let (dims, dtype) = cx.tensor(&x)?;
        if dims.len() < 2 {
            return Err(cx.error("the input must have rank 2 or more"));
        }
        let i = cx.positions(dims[dims.len() - 2].clone(), true)?;
        let j = cx.positions(dims[dims.len() - 1].clone(), false)?;
        let diff = cx.op2("relax.subtract", j, i)?;
        let k = cx.input(1)?;
        let k = cx.call("relax.reshape", vec![k, Expr::shape(vec![])], Attrs::new())?;
        let k = cx.astype(k, DataType::i64())?;
        let op = if upper {
            "relax.greater_equal"
        } else {
            "relax.less_equal"
        };
        let keep = cx.op2(op, diff, k)?;
        let zero = cx.scalar(0.0, dtype)?;
        return Ok(vec![cx.call(
            "relax.where",
            vec![keep, x, zero],
            Attrs::new(),
        )?]);
    }
    let k = match cx.ints_input(1)?.as_deref() {
        None => 0,
        Some([k]) => *k,
        Some(other) => {
            return Err(cx.error(format!("k must hold one value, found {}", other.len())))
        }
    };
    let k = PrimExpr::int(k);
    let op = if upper { "relax.triu" } else { "relax.tril" };
    Ok(vec![cx.call(
        op,
        vec![x, Expr::prim_value(k)],
        Attrs::new(),
    )?])
}

/// A PrimValue holding element `i` of `t`, if its dtype is one the
/// reference kernel keeps (see `relax_runtime::kernels::index`).
fn prim_of(t: &Tensor, i: usize) -> Option<Expr> {
    let v = *t.to_f64_vec().get(i)?;
    if t.dtype() == DataType::f32() {
        Some(Expr::prim_value(PrimExpr::float(DataType::f32(), v)))
    } else if t.dtype() == DataType::i64() {
        Some(Expr::prim_value(PrimExpr::int(v as i64)))
    } else {
        None
    }
}

pub fn one_hot(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let mut indices = cx.input(0)?;
    let depth = cx
        .const_input(1)?
        .ok_or_else(|| cx.error("input 1 (depth) is required"))?;
    let depth = match depth.to_f64_vec().as_slice() {
        [d] if *d >= 0.0 => *d as i64,
        other => {
            return Err(cx.error(format!(
                "depth must be one non-negative value, found {other:?}"
            )))
        }
    };
    let values = cx.input(2)?;
    let (idims, idtype) = cx.tensor(&indices)?;
    let axis = cx.node.int_or("axis", -1)?;
    normalize_axes(cx, &[axis], idims.len() + 1)?;
    if !idtype.is_integer() {
        let attrs = Attrs::from_pairs([("dtype", AttrValue::DataType(DataType::i64()))]);
        indices = cx.call("relax.astype", vec![indices], attrs)?;
    }
    let idtype = cx.tensor(&indices)?.1;
    // Negative indices count from the end: `where(i < 0, i + depth, i)`.
    let zero = cx.scalar(0.0, idtype)?;
    let d = cx.scalar(depth as f64, idtype)?;
    let negative = cx.op2("relax.less", indices.clone(), zero)?;
    let shifted = cx.op2("relax.add", indices.clone(), d)?;
    let indices = cx.call(
        "relax.where",
        vec![negative, shifted, indices],
        Attrs::new(),
    )?;
    let attrs = Attrs::from_pairs([
        ("depth", AttrValue::Int(depth)),
        ("axis", AttrValue::Int(axis)),
    ]);
    let constant = cx.const_input(2).ok().flatten();
    if let Some(t) = constant {
        if t.numel() != 2 {
            return Err(cx.error(format!(
                "values must hold [off, on], found {} values",
                t.numel()
            )));
        }
        if let (Some(off), Some(on)) = (prim_of(&t, 0), prim_of(&t, 1)) {
            return Ok(vec![cx.call(
                "relax.one_hot",
                vec![indices, on, off],
                attrs,
            )?]);
        }
    }
    let mask = cx.call(
        "relax.one_hot",
        vec![
            indices,
            Expr::prim_value(PrimExpr::bool(true)),
            Expr::prim_value(PrimExpr::bool(false)),
        ],
        attrs,
    )?;
    let pick = |cx: &mut Ctx, i: i64| -> Result<Expr, Error> {
        let at = Expr::constant(Tensor::scalar(i));
        let flat = cx.call(
            "relax.reshape",
            vec![values.clone(), Expr::shape(vec![PrimExpr::int(-1)])],
            Attrs::new(),
        )?;
        cx.call(
            "relax.take",
            vec![flat, at],
            Attrs::from_pairs([("axis", AttrValue::Int(0))]),
        )
    };
    let (off, on) = (pick(cx, 0)?, pick(cx, 1)?);
    Ok(vec![cx.call(
        "relax.where",
        vec![mask, on, off],
        Attrs::new(),
    )?])
}
