//! Sequences and optionals whose length is known at import time.
//!
//! A sequence is a Relax tuple of its elements (`SequenceConstruct` makes
//! one, `SequenceAt` takes a field, `SequenceInsert` and `SequenceErase`
//! make another), so its length must be known when the graph is imported:
//! positions must be constants, and `SplitToSequence` needs its split (or
//! the split axis) known. A sequence the graph takes as an input has a
//! length only known at run time; it is specialized at import to a tuple
//! of the length `ImportOptions::sequence_lens` gives (as `shape_dict`
//! specializes a tensor input's shape), and without one it is an object
//! that can be passed on (`Identity`, a graph output) but not taken apart
//! here, the ops that would being errors saying which option to set.
//!
//! An optional is its value when it has one and the empty tuple when it
//! has none (`Optional` without an input).

use super::{ints, normalize_axes, Ctx};
use relax_core::ir::{AttrValue, Attrs, Expr, ExprKind, StructInfoKind};
use relax_runtime::{Error, Tensor};

/// The elements of the sequence `e`: a tuple's fields.
fn elements(cx: &mut Ctx, e: &Expr) -> Result<Vec<Expr>, Error> {
    if let ExprKind::Tuple(fields) = e.kind() {
        return Ok(fields.clone());
    }
    let n = match e.struct_info().map(|s| s.kind()) {
        Some(StructInfoKind::Tuple(fields)) => fields.len(),
        _ => {
            return Err(cx.error(
                "the sequence's length is only known at run time (a graph input, or made \
                 by an op whose output length depends on data); sequences are imported as \
                 tuples of a length known at import time: for a sequence graph input, give \
                 its length in ImportOptions::sequence_lens",
            ))
        }
    };
    (0..n).map(|i| cx.item(e, i)).collect()
}

/// Input `i` as a sequence's elements.
fn sequence_input(cx: &mut Ctx, i: usize) -> Result<Vec<Expr>, Error> {
    let e = cx
        .raw_input(i)?
        .ok_or_else(|| cx.error(format!("input {i} is required")))?;
    elements(cx, &e)
}

/// A position input (a constant integer scalar) in `0..=len` (`0..len`
/// unless `end_ok`), negative ones counting from the end; `default` when
/// it is not given.
fn position(
    cx: &mut Ctx,
    i: usize,
    len: usize,
    end_ok: bool,
    default: usize,
) -> Result<usize, Error> {
    let Some(p) = cx.raw_input(i)? else {
        return Ok(default);
    };
    let value = match p.kind() {
        ExprKind::Constant(t) if t.dtype().is_integer() && t.numel() == 1 => {
            t.to_f64_vec()[0] as i64
        }
        ExprKind::PrimValue(v) if v.as_int().is_some() => v.as_int().expect("checked"),
        _ => {
            return Err(cx.error(
                "the position must be a constant: it picks a field of the sequence's tuple",
            ))
        }
    };
    let n = len as i64;
    let p = if value < 0 { value + n } else { value };
    let hi = if end_ok { n } else { n - 1 };
    if !(0..=hi).contains(&p) {
        return Err(cx.error(format!(
            "position {value} is out of range for a sequence of length {len}"
        )));
    }
    Ok(p as usize)
}

/// `SequenceConstruct(inputs…)`: the tuple of the inputs.
pub fn sequence_construct(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&[])?;
    let inputs = cx.inputs()?;
    Ok(vec![Expr::tuple(inputs)])
}

/// `SequenceEmpty`: the empty tuple.
pub fn sequence_empty(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&["dtype"])?;
    Ok(vec![Expr::tuple(vec![])])
}

/// `SequenceAt(seq, position)`: the field at `position`.
pub fn sequence_at(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&[])?;
    let elems = sequence_input(cx, 0)?;
    let p = position(cx, 1, elems.len(), false, 0)?;
    Ok(vec![elems[p].clone()])
}

/// `SequenceInsert(seq, tensor, position = len)`.
pub fn sequence_insert(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&[])?;
    let mut elems = sequence_input(cx, 0)?;
    let t = cx.input(1)?;
    let len = elems.len();
    let p = position(cx, 2, len, true, len)?;
    elems.insert(p, t);
    Ok(vec![Expr::tuple(elems)])
}

/// `SequenceErase(seq, position = len - 1)`.
pub fn sequence_erase(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&[])?;
    let mut elems = sequence_input(cx, 0)?;
    if elems.is_empty() {
        return Err(cx.error("the sequence is empty: there is nothing to erase"));
    }
    let len = elems.len();
    let p = position(cx, 1, len, false, len - 1)?;
    elems.remove(p);
    Ok(vec![Expr::tuple(elems)])
}

/// `SequenceLength(seq)`: an `int64` scalar constant.
pub fn sequence_length(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&[])?;
    let elems = sequence_input(cx, 0)?;
    Ok(vec![Expr::constant(Tensor::scalar(elems.len() as i64))])
}

/// `ConcatFromSequence(seq, axis, new_axis)`: the elements concatenated
/// along `axis`, or stacked along a new axis `axis` when `new_axis` is 1.
pub fn concat_from_sequence(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&["axis", "new_axis"])?;
    let elems = sequence_input(cx, 0)?;
    let axis = cx
        .node
        .int("axis")?
        .ok_or_else(|| cx.error("attribute `axis` is required"))?;
    let new_axis = cx.node.int_or("new_axis", 0)? != 0;
    let Some(first) = elems.first() else {
        return Err(cx.error("the sequence is empty: there is nothing to concatenate"));
    };
    let (dims, _) = cx.tensor(first)?;
    let rank = dims.len() + usize::from(new_axis);
    let axis = normalize_axes(cx, &[axis], rank)?[0];
    let parts = if new_axis {
        let attrs = Attrs::from_pairs([("axis", ints([axis as i64]))]);
        elems
            .into_iter()
            .map(|e| cx.call("relax.expand_dims", vec![e], attrs.clone()))
            .collect::<Result<Vec<_>, _>>()?
    } else {
        elems
    };
    let attrs = Attrs::from_pairs([("axis", AttrValue::Int(axis as i64))]);
    Ok(vec![cx.call(
        "relax.concat",
        vec![Expr::tuple(parts)],
        attrs,
    )?])
}

/// `SplitToSequence(input, split?, axis, keepdims)`: parts of the sizes
/// `split` gives (a constant 1-d list of sizes, a 1-d list of a known
/// length computed at run time, whose sizes are bound as dims, or a
/// constant scalar size with a shorter last part), or of size 1 with the axis kept when
/// `keepdims` is 1 and removed when it is 0, when `split` is not given.
pub fn split_to_sequence(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&["axis", "keepdims"])?;
    let x = cx.input(0)?;
    let (dims, _) = cx.tensor(&x)?;
    let axis = normalize_axes(cx, &[cx.node.int_or("axis", 0)?], dims.len())?[0];
    let keepdims = cx.node.int_or("keepdims", 1)? != 0;
    let split = match cx.raw_input(1)? {
        None => None,
        Some(e) => match e.kind() {
            ExprKind::Constant(t) if t.dtype().is_integer() && t.ndim() <= 1 => {
                let v: Vec<i64> = t.to_f64_vec().into_iter().map(|v| v as i64).collect();
                Some((t.ndim() == 0, v))
            }
            // Sizes computed at run time: a 1-d list of a known length
            // (the sequence's), each size a dim bound from the data.
            _ => {
                let (split_dims, _) = cx.tensor(&e)?;
                if split_dims.is_empty() {
                    return Err(cx.error(
                        "`split` is a scalar size computed at run time: the number of parts \
                         (the sequence's length, ceil(extent / split)) depends on data, and a \
                         sequence is a tuple of a length known at import time",
                    ));
                }
                if !matches!(split_dims.as_slice(), [d] if d.as_int().is_some()) {
                    return Err(cx.error(
                        "`split` is computed at run time and is not a 1-d list of a known \
                         length: the number of parts (the sequence's length) must be known \
                         at import time",
                    ));
                }
                let sizes = cx
                    .dims_input(1)?
                    .ok_or_else(|| cx.error("input 1 (split) is required"))?;
                let parts = super::shape::slice_parts(cx, x, axis, sizes)?;
                return Ok(vec![Expr::tuple(parts)]);
            }
        },
    };
    let d = dims[axis].as_int();
    let sizes: Vec<i64> = match &split {
        Some((false, sizes)) => sizes.clone(),
        _ => {
            let Some(d) = d else {
                return Err(cx.error(format!(
                    "axis {axis} has the symbolic extent {}: the number of parts (the \
                     sequence's length) must be known at import time",
                    dims[axis]
                )));
            };
            let chunk = match &split {
                Some((_, v)) => v[0],
                None => 1,
            };
            if chunk <= 0 {
                return Err(cx.error(format!("split size {chunk} must be positive")));
            }
            let mut sizes = Vec::new();
            let mut at = 0;
            while at < d {
                sizes.push(chunk.min(d - at));
                at += chunk;
            }
            sizes
        }
    };
    if sizes.iter().any(|&s| s < 0) {
        return Err(cx.error(format!("split {sizes:?} has a negative size")));
    }
    if let Some(d) = d {
        if sizes.iter().sum::<i64>() != d {
            return Err(cx.error(format!(
                "split {sizes:?} does not add up to the axis's extent {d}"
            )));
        }
    }
    if sizes.is_empty() {
        return Ok(vec![Expr::tuple(vec![])]);
    }
    let bounds: Vec<i64> = sizes
        .iter()
        .scan(0, |acc, s| {
            *acc += s;
            Some(*acc)
        })
        .take(sizes.len() - 1)
        .collect();
    let attrs = Attrs::from_pairs([
        ("indices_or_sections", ints(bounds)),
        ("axis", AttrValue::Int(axis as i64)),
    ]);
    let t = cx.call("relax.split", vec![x], attrs)?;
    let mut parts = Vec::new();
    for i in 0..sizes.len() {
        let p = cx.item(&t, i)?;
        parts.push(if split.is_none() && !keepdims {
            let attrs = Attrs::from_pairs([("axis", ints([axis as i64]))]);
            cx.call("relax.squeeze", vec![p], attrs)?
        } else {
            p
        });
    }
    Ok(vec![Expr::tuple(parts)])
}

/// `Optional(input?)`: the input, or the empty tuple (no value).
pub fn optional(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&["type"])?;
    match cx.raw_input(0)? {
        Some(e) => Ok(vec![e]),
        None => Ok(vec![Expr::tuple(vec![])]),
    }
}

/// Whether the optional `e` is known to hold no value: the empty tuple
/// `Optional` makes without an input.
fn is_none(e: &Expr) -> bool {
    matches!(e.kind(), ExprKind::Tuple(f) if f.is_empty())
}

/// `OptionalHasElement(input?)`: a `bool` scalar constant; an optional
/// the graph takes as an input is only known at run time (an error).
pub fn optional_has_element(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&[])?;
    let has = match cx.raw_input(0)? {
        None => false,
        Some(e) if is_none(&e) => false,
        Some(e) => match e.struct_info().map(|s| s.kind()) {
            Some(StructInfoKind::Object) | None => {
                return Err(cx.error(
                    "whether this optional has a value is only known at run time; optionals \
                     are imported as their value or the empty tuple, known at import time",
                ))
            }
            _ => true,
        },
    };
    Ok(vec![Expr::constant(Tensor::scalar(has))])
}

/// `OptionalGetElement(input)`: the value (a tensor or a sequence passes
/// through).
pub fn optional_get_element(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&[])?;
    let e = cx
        .raw_input(0)?
        .ok_or_else(|| cx.error("input 0 is required"))?;
    if is_none(&e) {
        return Err(cx.error("the optional has no value"));
    }
    Ok(vec![e])
}

/// `SequenceMap(seq, extra…)` with the subgraph `body`: the body applied
/// to each element of `seq` (and the same element of every other sequence
/// input, or a tensor input itself), inline, once per element; each body
/// output gathered into a sequence.
pub fn sequence_map(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&["body"])?;
    let body = cx
        .node
        .graph("body")?
        .ok_or_else(|| cx.error("attribute `body` is required"))?;
    let len = sequence_input(cx, 0)?.len();
    // Each input: a sequence's elements, or one tensor for every step.
    let mut inputs: Vec<Result<Vec<Expr>, Expr>> = Vec::new();
    for i in 0..cx.node.num_inputs() {
        let e = cx
            .raw_input(i)?
            .ok_or_else(|| cx.error(format!("input {i} is required")))?;
        let is_sequence = matches!(e.kind(), ExprKind::Tuple(_))
            || matches!(
                e.struct_info().map(|s| s.kind()),
                Some(StructInfoKind::Tuple(_) | StructInfoKind::Object)
            );
        if is_sequence {
            let elems = elements(cx, &e)?;
            if elems.len() != len {
                return Err(cx.error(format!(
                    "input {i} is a sequence of {} elements, and input 0 of {len}",
                    elems.len()
                )));
            }
            inputs.push(Ok(elems));
        } else {
            let t = super::as_tensor(cx.bb, e).map_err(|e| cx.error(e))?;
            inputs.push(Err(t));
        }
    }
    let n = cx.node.num_outputs();
    let mut outs: Vec<Vec<Expr>> = vec![Vec::new(); n];
    let (outer, opset) = (cx.values, cx.opset);
    for k in 0..len {
        let args = inputs
            .iter()
            .map(|v| match v {
                Ok(elems) => elems[k].clone(),
                Err(t) => t.clone(),
            })
            .collect();
        let got = crate::graph::convert_subgraph(cx.bb, outer, body, args, opset)
            .map_err(|e| cx.error(e))?;
        if got.len() != n {
            return Err(cx.error(format!(
                "the body has {} output(s), and the node {n}",
                got.len()
            )));
        }
        for (o, g) in outs.iter_mut().zip(got) {
            o.push(g);
        }
    }
    Ok(outs.into_iter().map(Expr::tuple).collect())
}
