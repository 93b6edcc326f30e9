//! Indexing: `take` (a gather: the index tensor is read inside the index
//! expression, so the read region of the data is its whole extent; an
//! index is clamped into its axis, so an index the reference kernel
//! rejects reads an element of the axis instead of memory past it) and
//! `strided_slice` (an affine index per sliced axis, with the begin
//! normalized and clamped by Python's slice rules as inference does).
//!
//! The gathers `gather_elements` and `gather_nd` read the data at an index
//! loaded from the index tensor, made non-negative (ONNX's indices count
//! from the end when negative) and then clamped into the axis, so the
//! generated code never reads out of bounds: an index the reference kernel
//! rejects reads some element of its axis instead (the kernel's error is
//! the specified behaviour; the clamp only keeps the machine code safe).
//! Dims of the index tensor that are not provably within data's are
//! clamped the same way.
//!
//! The scatters are not written as in-place stores (the TE layer has pure
//! stages only): each output element scans the updates that may land on
//! it, a reduction. `scatter_elements` scans the one index axis (O(n·m)
//! for m the length of the indices' `axis`), `scatter_nd` every index
//! tuple (O(n·t) for t tuples) — correct, and fine for the sizes seen so
//! far. `add`, `mul`, `min` and `max` reduce the matching updates with the
//! matching combiner and combine the result with the data; `update` first
//! finds the last matching update (the largest matching position, a `max`
//! reduction; -1 when none), then reads it, so a repeated index keeps the
//! last update as the kernel does. An index outside its axis matches no
//! output element, so it writes nothing.
//!
//! `cumsum` and `cumprod` are reductions over the whole axis of the input
//! masked to the positions up to the output's (before it, with
//! `exclusive`): O(len²) per lane, exact for integers and summed in the
//! same order as the kernel for floats. `tril`/`triu` select by
//! `col - row` against `k` (a PrimValue: a symbolic `k` becomes a scalar
//! parameter), `one_hot` compares the index with the position on the new
//! axis (an index outside `[0, depth)` gives only off values), `flip`
//! reads `len - 1 - i`.

use super::{clamp_index, convert, error, in_range, ravel, unravel, Legalize, LegalizeCtx};
use crate::ir::AttrValue;
use crate::ir::{Expr, PrimExpr};
use crate::op::create::prim_arg;
use crate::op::infer::{
    attr, attr_bool, attr_exprs, attr_int, attr_ints, normalize_axes, normalize_axis, tensor_arg,
};
use crate::tir::te::{self, compute, reduce_axis, Combiner, Reduce, ReduceAxis, Tensor};
use relax_runtime::{DataType, Error};

use super::statistical::input_ndim;

fn take(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let ndim = input_ndim(cx)?;
    let axis = match attr_int(cx.call, "axis") {
        Some(a) => Some(cx.check(normalize_axis(cx.call, a, ndim as i32))?),
        None => None,
    };
    cx.te1(&[0, 1], |xs| {
        let (x, ind) = (&xs[0], &xs[1]);
        let r = ind.ndim();
        let shape = match axis {
            None => ind.shape().to_vec(),
            Some(a) => [&x.shape()[..a], ind.shape(), &x.shape()[a + 1..]].concat(),
        };
        Ok(compute("T_take", shape, |i| match axis {
            None => {
                let numel = x
                    .shape()
                    .iter()
                    .fold(PrimExpr::int(1), |n, d| n * d.clone());
                let flat = clamp_index(ind.at(i).cast(DataType::i64()), &numel);
                x.at(&unravel(flat, x.shape()))
            }
            Some(a) => {
                let k = clamp_index(ind.at(&i[a..a + r]).cast(DataType::i64()), &x.shape()[a]);
                let idx: Vec<PrimExpr> = i[..a]
                    .iter()
                    .cloned()
                    .chain(std::iter::once(k))
                    .chain(i[a + r..].iter().cloned())
                    .collect();
                x.at(&idx)
            }
        }))
    })
}

/// The first index of `begin::stride` over a dim of size `dim`: a negative
/// literal counts from the end, then clamps into `[0, dim]` (stride > 0) or
/// `[-1, dim - 1]` (stride < 0), the rule of the op's `slice_extent`.
fn slice_begin(begin: &PrimExpr, stride: i64, dim: &PrimExpr) -> PrimExpr {
    let b = match begin.as_int() {
        Some(v) if v < 0 => dim.clone() + v,
        _ => begin.clone(),
    };
    if stride > 0 {
        b.max(0).min(dim.clone())
    } else {
        b.max(-1).min(dim.clone() - 1)
    }
}

fn strided_slice(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let ndim = input_ndim(cx)?;
    let axes = attr_ints(cx.call, "axes").unwrap_or_default();
    let axes = cx.check(normalize_axes(cx.call, &axes, ndim as i32))?;
    let begin = attr_exprs(cx.call, "begin").unwrap_or_default();
    let strides: Vec<i64> = match attr_exprs(cx.call, "strides") {
        Some(s) => s
            .iter()
            .map(|e| e.as_int())
            .collect::<Option<_>>()
            .ok_or_else(|| error("strided_slice: strides must be integer literals"))?,
        None => vec![1; axes.len()],
    };
    let inbound = attr_bool(cx.call, "assume_inbound", false);
    let (shape, _) = cx.out_tensor(0)?;
    cx.te1(&[0], |xs| {
        let x = &xs[0];
        Ok(compute("T_strided_slice", shape, |i| {
            let mut idx = i.to_vec();
            for (k, &a) in axes.iter().enumerate() {
                let s = strides[k];
                idx[a] = if inbound && s == 1 {
                    // Taken to be inside the axis, but clamped, so a wrong
                    // assumption (a symbolic dim shorter at run time than
                    // the slice) reads an element of the axis, never past
                    // it; the reference kernel reports it.
                    clamp_index(begin[k].clone() + i[a].clone(), &x.shape()[a])
                } else {
                    slice_begin(&begin[k], s, &x.shape()[a]) + i[a].clone() * s
                };
            }
            x.at(&idx)
        }))
    })
}

/// An index loaded from an index tensor, as `i64`, made non-negative
/// (a negative index counts from the end of an axis of length `dim`).
fn wrap(v: PrimExpr, dim: &PrimExpr) -> PrimExpr {
    let v = v.cast(DataType::i64());
    PrimExpr::select(v.clone().lt(0), v.clone() + dim.clone(), v)
}

/// Whether `a <= b` is known (equal expressions, or both literals).
fn provably_le(a: &PrimExpr, b: &PrimExpr) -> bool {
    match (a.as_int(), b.as_int()) {
        (Some(x), Some(y)) => x <= y,
        _ => a == b,
    }
}

/// `i`, an index below `bound`, as an index into a dim `dim`: itself when
/// `bound <= dim` is known, else clamped into `dim`.
fn fit(i: &PrimExpr, bound: &PrimExpr, dim: &PrimExpr) -> PrimExpr {
    if provably_le(bound, dim) {
        i.clone()
    } else {
        clamp_index(i.clone(), dim)
    }
}

fn gather_elements(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let ndim = input_ndim(cx)?;
    let axis = cx.check(normalize_axis(
        cx.call,
        attr_int(cx.call, "axis").unwrap_or(0),
        ndim as i32,
    ))?;
    cx.te1(&[0, 1], |xs| {
        let (x, ind) = (&xs[0], &xs[1]);
        Ok(compute("T_gather_elements", ind.shape().to_vec(), |i| {
            let dim = &x.shape()[axis];
            let idx: Vec<PrimExpr> = (0..i.len())
                .map(|d| {
                    if d == axis {
                        clamp_index(wrap(ind.at(i), dim), dim)
                    } else {
                        fit(&i[d], &ind.shape()[d], &x.shape()[d])
                    }
                })
                .collect();
            x.at(&idx)
        }))
    })
}

/// The last dim of the indices (the length of an index tuple), which
/// legalization needs as a literal.
fn tuple_len(cx: &LegalizeCtx<'_>) -> Result<usize, Error> {
    let t = cx.check(tensor_arg(cx.call, 1))?;
    t.shape_values()
        .and_then(|s| s.last())
        .and_then(PrimExpr::as_int)
        .map(|k| k as usize)
        .ok_or_else(|| {
            error(format!(
                "{}: the last dim of indices must be a known integer",
                cx.name()
            ))
        })
}

fn gather_nd(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let b = attr_int(cx.call, "batch_dims").unwrap_or(0).max(0) as usize;
    let k = tuple_len(cx)?;
    let (shape, _) = cx.out_tensor(0)?;
    cx.te1(&[0, 1], |xs| {
        let (x, ind) = (&xs[0], &xs[1]);
        let q = ind.ndim();
        Ok(compute("T_gather_nd", shape, |o| {
            let mut idx: Vec<PrimExpr> = (0..b)
                .map(|d| fit(&o[d], &ind.shape()[d], &x.shape()[d]))
                .collect();
            for j in 0..k {
                let at: Vec<PrimExpr> = o[..q - 1]
                    .iter()
                    .cloned()
                    .chain(std::iter::once(PrimExpr::int(j as i64)))
                    .collect();
                let dim = &x.shape()[b + j];
                idx.push(clamp_index(wrap(ind.at(&at), dim), dim));
            }
            idx.extend(o[q - 1..].iter().cloned());
            x.at(&idx)
        }))
    })
}

/// The scatter's `reduction` attribute.
fn reduction(cx: &LegalizeCtx<'_>) -> Result<Option<Combiner>, Error> {
    match attr(cx.call, "reduction") {
        None => Ok(None),
        Some(AttrValue::Str(r)) => match r.as_str() {
            "update" => Ok(None),
            "add" => Ok(Some(Combiner::Sum)),
            "mul" => Ok(Some(Combiner::Prod)),
            "min" => Ok(Some(Combiner::Min)),
            "max" => Ok(Some(Combiner::Max)),
            other => Err(error(format!("{}: unknown reduction {other:?}", cx.name()))),
        },
        Some(other) => Err(error(format!("{}: reduction {other:?}", cx.name()))),
    }
}

/// The output of a scatter onto `x`, given for each output index the
/// reduce axes scanned, whether the update at a point of them lands there
/// (`hit`), the update's value there (`value`) and the point's position in
/// scan order (`pos`, for `update`: the largest wins).
struct Scan<'a> {
    x: &'a Tensor,
    axes: Vec<ReduceAxis>,
    hit: &'a dyn Fn(&[PrimExpr], &[PrimExpr]) -> PrimExpr,
    value: &'a dyn Fn(&[PrimExpr], &[PrimExpr]) -> PrimExpr,
    pos: &'a dyn Fn(&[PrimExpr]) -> PrimExpr,
    /// The point of the reduce axes at a position found by `pos`.
    at_pos: &'a dyn Fn(PrimExpr) -> Vec<PrimExpr>,
}

fn scatter_stages(name: &str, s: Scan<'_>, combiner: Option<Combiner>) -> Tensor {
    let x = s.x;
    let shape = x.shape().to_vec();
    let ks: Vec<PrimExpr> = s.axes.iter().map(ReduceAxis::to_expr).collect();
    match combiner {
        Some(c) => {
            let red = compute("T_scatter_reduce", shape.clone(), |o| Reduce {
                combiner: c,
                source: PrimExpr::select((s.hit)(o, &ks), (s.value)(o, &ks), c.identity(x.dtype())),
                axes: s.axes.clone(),
            });
            compute(name, shape, |o| c.combine(x.at(o), red.at(o)))
        }
        None => {
            let last = compute("T_scatter_last", shape.clone(), |o| Reduce {
                combiner: Combiner::Max,
                source: PrimExpr::select((s.hit)(o, &ks), (s.pos)(&ks), PrimExpr::int(-1)),
                axes: s.axes.clone(),
            });
            compute(name, shape, |o| {
                let p = last.at(o);
                let point = (s.at_pos)(p.clone().max(0));
                PrimExpr::select(p.ge(0), (s.value)(o, &point), x.at(o))
            })
        }
    }
}

fn scatter_elements(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let ndim = input_ndim(cx)?;
    let axis = cx.check(normalize_axis(
        cx.call,
        attr_int(cx.call, "axis").unwrap_or(0),
        ndim as i32,
    ))?;
    let combiner = reduction(cx)?;
    cx.te1(&[0, 1, 2], |xs| {
        let (x, ind, upd) = (&xs[0], &xs[1], &xs[2]);
        // The update at index `o` with its axis coordinate `k`: the other
        // coordinates clamped into the indices (their loads are discarded
        // when `o` lies outside, see `inside`).
        let point = |o: &[PrimExpr], k: &PrimExpr| -> Vec<PrimExpr> {
            (0..o.len())
                .map(|d| {
                    if d == axis {
                        k.clone()
                    } else {
                        fit(&o[d], &x.shape()[d], &ind.shape()[d])
                    }
                })
                .collect()
        };
        let inside = |o: &[PrimExpr]| -> PrimExpr {
            (0..o.len())
                .filter(|&d| d != axis && !provably_le(&x.shape()[d], &ind.shape()[d]))
                .fold(PrimExpr::bool(true), |acc, d| {
                    acc.and(in_range(&o[d], &ind.shape()[d]))
                })
        };
        let hit = |o: &[PrimExpr], ks: &[PrimExpr]| {
            let at = point(o, &ks[0]);
            inside(o).and(wrap(ind.at(&at), &x.shape()[axis]).eq_(o[axis].clone()))
        };
        let value = |o: &[PrimExpr], ks: &[PrimExpr]| upd.at(&point(o, &ks[0]));
        let pos = |ks: &[PrimExpr]| ks[0].clone();
        let at_pos = |p: PrimExpr| vec![p];
        Ok(scatter_stages(
            "T_scatter_elements",
            Scan {
                x,
                axes: vec![reduce_axis(ind.shape()[axis].clone(), "k")],
                hit: &hit,
                value: &value,
                pos: &pos,
                at_pos: &at_pos,
            },
            combiner,
        ))
    })
}

fn scatter_nd(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let k = tuple_len(cx)?;
    let combiner = reduction(cx)?;
    cx.te1(&[0, 1, 2], |xs| {
        let (x, ind, upd) = (&xs[0], &xs[1], &xs[2]);
        let outer: Vec<PrimExpr> = ind.shape()[..ind.ndim() - 1].to_vec();
        // A tuple position `p` (over `outer`) lands on `o` when its index
        // tuple is `o[..k]`; its value there is `upd[p, o[k..]]`.
        let hit = |o: &[PrimExpr], p: &[PrimExpr]| {
            (0..k).fold(PrimExpr::bool(true), |acc, j| {
                let at: Vec<PrimExpr> = p
                    .iter()
                    .cloned()
                    .chain(std::iter::once(PrimExpr::int(j as i64)))
                    .collect();
                acc.and(wrap(ind.at(&at), &x.shape()[j]).eq_(o[j].clone()))
            })
        };
        let value = |o: &[PrimExpr], p: &[PrimExpr]| {
            let tail = (k..o.len()).map(|d| {
                let u = &upd.shape()[outer.len() + d - k];
                fit(&o[d], &x.shape()[d], u)
            });
            upd.at(&p.iter().cloned().chain(tail).collect::<Vec<_>>())
        };
        let pos = |p: &[PrimExpr]| ravel(p, &outer);
        let at_pos = |f: PrimExpr| unravel(f, &outer);
        let axes: Vec<ReduceAxis> = outer
            .iter()
            .enumerate()
            .map(|(j, d)| reduce_axis(d.clone(), &format!("k{j}")))
            .collect();
        if axes.is_empty() {
            // One index tuple: no scan.
            let shape = x.shape().to_vec();
            return Ok(compute("T_scatter_nd", shape, |o| {
                let v = value(o, &[]);
                let merged = match combiner {
                    Some(c) => c.combine(x.at(o), v),
                    None => v,
                };
                PrimExpr::select(hit(o, &[]), merged, x.at(o))
            }));
        }
        Ok(scatter_stages(
            "T_scatter_nd",
            Scan {
                x,
                axes,
                hit: &hit,
                value: &value,
                pos: &pos,
                at_pos: &at_pos,
            },
            combiner,
        ))
    })
}

fn scan(cx: &mut LegalizeCtx<'_>, combiner: Combiner) -> Result<Expr, Error> {
    let ndim = input_ndim(cx)?;
    let axis = match attr_int(cx.call, "axis") {
        Some(a) => Some(cx.check(normalize_axis(cx.call, a, ndim as i32))?),
        None => None,
    };
    let exclusive = attr_bool(cx.call, "exclusive", false);
    let (shape, dtype) = cx.out_tensor(0)?;
    let name = format!("T_{}", cx.name());
    cx.te1(&[0], |xs| {
        let x = &xs[0];
        let a = axis.unwrap_or(0);
        let len = shape[a].clone();
        let k = reduce_axis(len, "k");
        Ok(compute(&name, shape.clone(), |i| {
            let ke = k.to_expr();
            let mut at = i.to_vec();
            at[a] = ke.clone();
            let v = match axis {
                Some(_) => x.at(&at),
                None => x.at(&unravel(ke.clone(), x.shape())),
            };
            let keep = if exclusive {
                ke.lt(i[a].clone())
            } else {
                ke.le(i[a].clone())
            };
            Reduce {
                combiner,
                source: PrimExpr::select(keep, convert(v, dtype), combiner.identity(dtype)),
                axes: vec![k.clone()],
            }
        }))
    })
}

fn cumsum(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    scan(cx, Combiner::Sum)
}

fn cumprod(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    scan(cx, Combiner::Prod)
}

fn triangle(cx: &mut LegalizeCtx<'_>, upper: bool) -> Result<Expr, Error> {
    let k = cx.check(prim_arg(cx.call, 1))?.cast(DataType::i64());
    let name = format!("T_{}", cx.name());
    cx.te1(&[0], |xs| {
        let x = &xs[0];
        Ok(compute(&name, x.shape().to_vec(), |i| {
            let n = i.len();
            let diff = i[n - 1].clone() - i[n - 2].clone();
            let keep = if upper {
                diff.ge(k.clone())
            } else {
                diff.le(k.clone())
            };
            PrimExpr::select(keep, x.at(i), te::zero(x.dtype()))
        }))
    })
}

fn tril(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    triangle(cx, false)
}

fn triu(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    triangle(cx, true)
}

fn one_hot(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let on = cx.check(prim_arg(cx.call, 1))?;
    let off = cx.check(prim_arg(cx.call, 2))?;
    let (shape, dtype) = cx.out_tensor(0)?;
    let axis = cx.check(normalize_axis(
        cx.call,
        attr_int(cx.call, "axis").unwrap_or(-1),
        shape.len() as i32,
    ))?;
    cx.te1(&[0], |xs| {
        let ind = &xs[0];
        Ok(compute("T_one_hot", shape, |o| {
            let mut at = o.to_vec();
            let j = at.remove(axis);
            let hit = ind.at(&at).cast(DataType::i64()).eq_(j);
            PrimExpr::select(hit, convert(on.clone(), dtype), convert(off.clone(), dtype))
        }))
    })
}

fn flip(cx: &mut LegalizeCtx<'_>) -> Result<Expr, Error> {
    let ndim = input_ndim(cx)?;
    let axis = cx.check(normalize_axis(
        cx.call,
        attr_int(cx.call, "axis").unwrap_or(0),
        ndim as i32,
    ))?;
    cx.te1(&[0], |xs| {
        let x = &xs[0];
        Ok(compute("T_flip", x.shape().to_vec(), |i| {
            let mut at = i.to_vec();
            at[axis] = x.shape()[axis].clone() - 1 - i[axis].clone();
            x.at(&at)
        }))
    })
}

/// The indexing legalizations.
pub const LEGALIZE: &[(&str, Legalize)] = &[
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
