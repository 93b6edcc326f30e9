//! Shape manipulation: every output element is one input element (TOPI's
//! `transpose`, `reshape`, `expand_dims`, `squeeze`, `concatenate`,
//! `split`, `broadcast_to`).
//!
//! `reshape` and `flatten` go through the row-major flat offset; `concat`
//! selects among its inputs with clamped indices so that every load stays in
//! bounds whichever input is selected. Target shapes (`reshape`,
//! `broadcast_to`, `split`) are the call's inferred ones, which resolve `-1`
//! and symbolic sections exactly as inference does.

use super::{broadcast_index, clamp_index, error, ravel, unravel, Legalize, LegalizeCtx};
use crate::ir::{AttrValue, Expr, PrimExpr};
use crate::op::infer::{attr, attr_int, attr_ints, normalize_axes, normalize_axis};
use crate::tir::te::{compute, Tensor};
use relax_runtime::Error;

use super::statistical::input_ndim;

fn permute_dims(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let ndim = input_ndim(cx)?;
    let perm: Vec<usize> = match attr_ints(cx.call, "axes") {
        Some(a) => cx.check(normalize_axes(cx.call, &a, ndim as i32))?,
        None => (0..ndim).rev().collect(),
    };
    cx.te1(&[0], |xs| {
        let x = &xs[0];
        let shape = perm.iter().map(|&p| x.shape()[p].clone()).collect();
        Ok(compute("T_transpose", shape, |i| {
            let mut idx = vec![PrimExpr::int(0); perm.len()];
            for (j, &p) in perm.iter().enumerate() {
                idx[p] = i[j].clone();
            }
            x.at(&idx)
        }))
    })
}

/// `x` read in row-major order into `shape`.
fn reshaped(name: &str, x: &Tensor, shape: Vec<PrimExpr>) -> Tensor {
    let out = shape.clone();
    compute(name, shape, |i| x.at(&unravel(ravel(i, &out), x.shape())))
}

fn reshape(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let (shape, _) = cx.out_tensor(0)?;
    cx.te1(&[0], |xs| Ok(reshaped("T_reshape", &xs[0], shape)))
}

fn flatten(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    cx.te1(&[0], |xs| {
        let x = &xs[0];
        let n = crate::op::infer::product(x.shape());
        Ok(reshaped("T_reshape", x, vec![n]))
    })
}

fn expand_dims(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let ndim = input_ndim(cx)?;
    let axes = attr_ints(cx.call, "axis").unwrap_or_default();
    let out_ndim = ndim + axes.len();
    let axes = cx.check(normalize_axes(cx.call, &axes, out_ndim as i32))?;
    cx.te1(&[0], |xs| {
        let x = &xs[0];
        let mut dims = x.shape().iter();
        let shape = (0..out_ndim)
            .map(|i| match axes.contains(&i) {
                true => PrimExpr::int(1),
                false => dims.next().cloned().unwrap_or_else(|| PrimExpr::int(1)),
            })
            .collect();
        Ok(compute("T_expand_dims", shape, |i| {
            let idx: Vec<PrimExpr> = (0..out_ndim)
                .filter(|k| !axes.contains(k))
                .map(|k| i[k].clone())
                .collect();
            x.at(&idx)
        }))
    })
}

fn squeeze(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let ndim = input_ndim(cx)?;
    let axes: Vec<usize> = match attr_ints(cx.call, "axis") {
        Some(a) => cx.check(normalize_axes(cx.call, &a, ndim as i32))?,
        None => {
            let x = cx.check(crate::op::infer::tensor_arg(cx.call, 0))?;
            let dims = x
                .shape_values()
                .ok_or_else(|| error("squeeze: the input shape is unknown"))?;
            (0..ndim).filter(|&i| dims[i].as_int() == Some(1)).collect()
        }
    };
    cx.te1(&[0], |xs| {
        let x = &xs[0];
        let shape = (0..ndim)
            .filter(|i| !axes.contains(i))
            .map(|i| x.shape()[i].clone())
            .collect();
        Ok(compute("T_squeeze", shape, |i| {
            let mut it = i.iter();
            let idx: Vec<PrimExpr> = (0..ndim)
                .map(|k| match axes.contains(&k) {
                    true => PrimExpr::int(0),
                    false => it.next().cloned().unwrap_or_else(|| PrimExpr::int(0)),
                })
                .collect();
            x.at(&idx)
        }))
    })
}

fn concat(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let (shape, _) = cx.out_tensor(0)?;
    let axis = attr_int(cx.call, "axis").unwrap_or(0);
    let axis = cx.check(normalize_axis(cx.call, axis, shape.len() as i32))?;
    cx.te1(&[0], |xs| {
        Ok(compute("T_concat", shape.clone(), |i| {
            // Inputs from last to first: each one's elements are those at or
            // after its offset, so the select chain ends with the first.
            let mut offsets = Vec::with_capacity(xs.len());
            let mut off = PrimExpr::int(0);
            for x in xs {
                offsets.push(off.clone());
                off = off + x.shape()[axis].clone();
            }
            let load = |k: usize| {
                let x = &xs[k];
                let mut idx = i.to_vec();
                idx[axis] = clamp_index(i[axis].clone() - offsets[k].clone(), &x.shape()[axis]);
                x.at(&idx)
            };
            let mut value = load(xs.len() - 1);
            for k in (0..xs.len() - 1).rev() {
                let cond = i[axis].clone().lt(offsets[k + 1].clone());
                value = PrimExpr::select(cond, load(k), value);
            }
            value
        }))
    })
}

fn split(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let ndim = input_ndim(cx)?;
    let axis = attr_int(cx.call, "axis").unwrap_or(0);
    let axis = cx.check(normalize_axis(cx.call, axis, ndim as i32))?;
    let pieces = cx.out.as_tuple().map_or(1, <[_]>::len);
    let shapes: Vec<Vec<PrimExpr>> = (0..pieces)
        .map(|j| cx.out_tensor(j).map(|(s, _)| s))
        .collect::<Result<_, _>>()?;
    let spec = attr(cx.call, "indices_or_sections").cloned();
    let result = cx.te1_many(&[0], |xs| {
        let x = &xs[0];
        let dim = x.shape()[axis].clone();
        let offsets: Vec<PrimExpr> = match &spec {
            Some(AttrValue::Array(items)) => {
                let mut o = vec![PrimExpr::int(0)];
                o.extend(
                    items
                        .iter()
                        .filter_map(AttrValue::as_int)
                        .map(|k| PrimExpr::int(k).min(dim.clone())),
                );
                o
            }
            _ => {
                let size = dim.clone().floordiv(pieces as i64);
                (0..pieces as i64).map(|j| size.clone() * j).collect()
            }
        };
        Ok(shapes
            .iter()
            .zip(&offsets)
            .enumerate()
            .map(|(j, (shape, off))| {
                compute(&format!("T_split_{j}"), shape.clone(), |i| {
                    let mut idx = i.to_vec();
                    idx[axis] = i[axis].clone() + off.clone();
                    x.at(&idx)
                })
            })
            .collect())
    })?;
    if pieces == 1 {
        // One piece: call_tir gives a tensor; the op gives a 1-tuple.
        let v = cx.bb.emit(result)?;
        return Ok(Expr::tuple(vec![Expr::var(&v)]));
    }
    Ok(result)
}

fn broadcast_to(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let (shape, _) = cx.out_tensor(0)?;
    cx.te1(&[0], |xs| {
        let x = &xs[0];
        let out = shape.clone();
        Ok(compute("T_broadcast_to", shape, |i| {
            x.at(&broadcast_index(x.shape(), i, &out))
        }))
    })
}

/// The manipulation legalizations.
pub const LEGALIZE: &[(&str, Legalize)] = &[
    ("relax.permute_dims", permute_dims),
    ("relax.reshape", reshape),
    ("relax.flatten", flatten),
    ("relax.expand_dims", expand_dims),
    ("relax.squeeze", squeeze),
    ("relax.concat", concat),
    ("relax.split", split),
    ("relax.broadcast_to", broadcast_to),
];
