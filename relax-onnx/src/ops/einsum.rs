//! `Einsum`, written with the registry's `permute_dims`, `reshape`, `take`,
//! `multiply` and `sum`.
//!
//! The equation's operands are lists of labels: letters, and for `...` one
//! label per broadcast dim (right-aligned across the operands, as NumPy
//! aligns them). Without `->` the output is the broadcast dims, then the
//! letters that occur once, in alphabetical order.
//!
//! 1. A label repeated within an operand takes the diagonal: the two axes
//!    moved last, merged (`n · n`), and every `(n + 1)`-th element taken.
//! 2. The operands are then multiplied in turn, each permuted to the
//!    running label order and reshaped with 1s for the labels it lacks
//!    (so the product broadcasts), and every label that no later operand
//!    and not the output uses is summed out as soon as it can be.
//! 3. The remaining labels are permuted to the output's order.
//!
//! This is the definition of the sum term for term (the registry's
//! `matmul` would reorder the additions no less); its intermediate holds
//! the product of the dims of the labels two operands share with the rest.

use super::{ints, shape, Ctx};
use relax_core::ir::{AttrValue, Attrs, Expr, PrimExpr};
use relax_runtime::Error;

/// The label of broadcast dim `k` (of the `...`).
fn ellipsis_label(k: usize) -> char {
    char::from_u32(0x100 + k as u32).unwrap_or('\u{100}')
}

/// One operand: its value, its labels and their dims.
#[derive(Clone)]
struct Term {
    value: Expr,
    labels: Vec<char>,
    dims: Vec<PrimExpr>,
}

/// An operand's labels, `...` expanded for an operand of rank `rank` (its
/// broadcast dims counted from the right of `total`).
fn expand(cx: &Ctx, spec: &str, rank: usize, total: usize) -> Result<Vec<char>, Error> {
    let (head, tail, dots) = match spec.split_once("...") {
        Some((h, t)) => (h, t, true),
        None => (spec, "", false),
    };
    let letters = head.chars().chain(tail.chars());
    if let Some(c) = letters.clone().find(|c| !c.is_ascii_alphabetic()) {
        return Err(cx.error(format!("the equation has the label `{c}`, not a letter")));
    }
    let n = head.len() + tail.len();
    let broadcast = if dots {
        rank.checked_sub(n)
            .ok_or_else(|| cx.error(format!("`{spec}` has more labels than its rank {rank}")))?
    } else if n != rank {
        return Err(cx.error(format!(
            "`{spec}` has {n} labels, but its operand has rank {rank}"
        )));
    } else {
        0
    };
    let mut out: Vec<char> = head.chars().collect();
    out.extend((total - broadcast..total).map(ellipsis_label));
    out.extend(tail.chars());
    Ok(out)
}

pub fn einsum(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&["equation"])?;
    let equation: String = cx
        .node
        .string("equation")?
        .ok_or_else(|| cx.error("attribute `equation` is required"))?
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let (lhs, rhs) = match equation.split_once("->") {
        Some((l, r)) => (l.to_string(), Some(r.to_string())),
        None => (equation.clone(), None),
    };
    let specs: Vec<&str> = lhs.split(',').collect();
    let inputs = cx.inputs()?;
    if specs.len() != inputs.len() {
        return Err(cx.error(format!(
            "the equation has {} operands, the node {} inputs",
            specs.len(),
            inputs.len()
        )));
    }
    // The number of broadcast dims: the most any operand's `...` covers.
    let mut terms = Vec::new();
    let mut total = 0;
    for (spec, x) in specs.iter().zip(&inputs) {
        let (dims, _) = cx.tensor(x)?;
        let letters = spec.replace("...", "").len();
        if spec.contains("...") {
            total = total.max(dims.len().saturating_sub(letters));
        }
    }
    for (spec, x) in specs.iter().zip(inputs) {
        let (dims, _) = cx.tensor(&x)?;
        let labels = expand(cx, spec, dims.len(), total)?;
        terms.push(Term {
            value: x,
            labels,
            dims,
        });
    }
    let output: Vec<char> = match &rhs {
        Some(r) => {
            let o = expand(cx, r, r.replace("...", "").len() + total, total)?;
            for &c in &o {
                if !terms.iter().any(|t| t.labels.contains(&c)) {
                    return Err(cx.error(format!("the output label `{c}` is in no operand")));
                }
            }
            o
        }
        None => {
            let mut once: Vec<char> = ('a'..='z')
                .chain('A'..='Z')
                .filter(|c| {
                    terms
                        .iter()
                        .flat_map(|t| &t.labels)
                        .filter(|l| *l == c)
                        .count()
                        == 1
                })
                .collect();
            once.sort();
            (0..total).map(ellipsis_label).chain(once).collect()
        }
    };
    let mut terms: Vec<Term> = terms
        .into_iter()
        .map(|t| diagonals(cx, t))
        .collect::<Result<_, _>>()?;
    let mut acc = terms.remove(0);
    acc = sum_unused(cx, acc, &terms, &output)?;
    for (k, t) in terms.iter().enumerate() {
        acc = multiply(cx, acc, t.clone())?;
        acc = sum_unused(cx, acc, &terms[k + 1..], &output)?;
    }
    // The output's order.
    let perm: Vec<i64> = output
        .iter()
        .map(|c| acc.labels.iter().position(|l| l == c).unwrap_or(0) as i64)
        .collect();
    if perm.iter().enumerate().all(|(i, &p)| i as i64 == p) {
        return Ok(vec![acc.value]);
    }
    let attrs = Attrs::from_pairs([("axes", ints(perm))]);
    Ok(vec![cx.call(
        "relax.permute_dims",
        vec![acc.value],
        attrs,
    )?])
}

/// `t` with each repeated label replaced by the diagonal along it.
fn diagonals(cx: &mut Ctx, mut t: Term) -> Result<Term, Error> {
    loop {
        let repeated = t.labels.iter().enumerate().find_map(|(p, c)| {
            t.labels[p + 1..]
                .iter()
                .position(|d| d == c)
                .map(|q| (p, p + 1 + q))
        });
        let Some((p, q)) = repeated else {
            return Ok(t);
        };
        let n = t.dims[p].clone();
        if let (Some(a), Some(b)) = (n.as_int(), t.dims[q].as_int()) {
            if a != b {
                return Err(cx.error(format!(
                    "the label `{}` has dims {a} and {b} in one operand",
                    t.labels[p]
                )));
            }
        }
        // The two axes last, merged, and every (n + 1)-th element taken.
        let rest: Vec<usize> = (0..t.labels.len()).filter(|&i| i != p && i != q).collect();
        let order: Vec<usize> = rest.iter().copied().chain([p, q]).collect();
        let x = permute(cx, t.value, &order)?;
        let mut dims: Vec<PrimExpr> = rest.iter().map(|&i| t.dims[i].clone()).collect();
        let mut merged = dims.clone();
        merged.push(n.clone() * n.clone());
        let x = cx.call("relax.reshape", vec![x, shape(merged)], Attrs::new())?;
        // The flat positions k · (n + 1), k in [0, n).
        let attrs =
            Attrs::from_pairs([("dtype", AttrValue::DataType(relax_runtime::DataType::i64()))]);
        let k = cx.call(
            "relax.arange",
            vec![
                Expr::prim_value(PrimExpr::int(0)),
                Expr::prim_value(n.clone()),
                Expr::prim_value(PrimExpr::int(1)),
            ],
            attrs,
        )?;
        let stride = cx.dim_tensor(n.clone() + PrimExpr::int(1))?;
        let idx = cx.op2("relax.multiply", k, stride)?;
        let attrs = Attrs::from_pairs([("axis", AttrValue::Int(-1))]);
        let x = cx.call("relax.take", vec![x, idx], attrs)?;
        let mut labels: Vec<char> = rest.iter().map(|&i| t.labels[i]).collect();
        labels.push(t.labels[p]);
        dims.push(n);
        t = Term {
            value: x,
            labels,
            dims,
        };
    }
}

/// `x` permuted to `order`, or `x` when that is the identity.
fn permute(cx: &mut Ctx, x: Expr, order: &[usize]) -> Result<Expr, Error> {
    if order.iter().enumerate().all(|(i, &p)| i == p) {
        return Ok(x);
    }
    let attrs = Attrs::from_pairs([("axes", ints(order.iter().map(|&p| p as i64)))]);
    cx.call("relax.permute_dims", vec![x], attrs)
}

/// `t` with the labels summed out that neither `later` nor `output` uses.
fn sum_unused(cx: &mut Ctx, t: Term, later: &[Term], output: &[char]) -> Result<Term, Error> {
    let used = |c: &char| output.contains(c) || later.iter().any(|l| l.labels.contains(c));
    let axes: Vec<i64> = (0..t.labels.len())
        .filter(|&i| !used(&t.labels[i]))
        .map(|i| i as i64)
        .collect();
    if axes.is_empty() {
        return Ok(t);
    }
    let attrs = Attrs::from_pairs([
        ("axis", ints(axes.iter().copied())),
        ("keepdims", AttrValue::Bool(false)),
    ]);
    let value = cx.call("relax.sum", vec![t.value], attrs)?;
    let keep: Vec<usize> = (0..t.labels.len())
        .filter(|i| !axes.contains(&(*i as i64)))
        .collect();
    Ok(Term {
        value,
        labels: keep.iter().map(|&i| t.labels[i]).collect(),
        dims: keep.iter().map(|&i| t.dims[i].clone()).collect(),
    })
}

/// The product of `a` and `b` over the union of their labels (`a`'s, then
/// `b`'s new ones), each broadcast along the labels it lacks.
fn multiply(cx: &mut Ctx, a: Term, b: Term) -> Result<Term, Error> {
    let mut labels = a.labels.clone();
    let mut dims = a.dims.clone();
    for (c, d) in b.labels.iter().zip(&b.dims) {
        if !labels.contains(c) {
            labels.push(*c);
            dims.push(d.clone());
        }
    }
    let align = |cx: &mut Ctx, t: Term| -> Result<Expr, Error> {
        // `t`'s labels in the union's order, then 1s where it lacks one.
        let mut order: Vec<usize> = (0..t.labels.len()).collect();
        order.sort_by_key(|&i| labels.iter().position(|c| *c == t.labels[i]));
        let x = permute(cx, t.value, &order)?;
        if t.labels.len() == labels.len() {
            return Ok(x);
        }
        let wide: Vec<PrimExpr> = labels
            .iter()
            .map(|c| match t.labels.iter().position(|l| l == c) {
                Some(i) => t.dims[i].clone(),
                None => PrimExpr::int(1),
            })
            .collect();
        cx.call("relax.reshape", vec![x, shape(wide)], Attrs::new())
    };
    let x = align(cx, a)?;
    let y = align(cx, b)?;
    let value = cx.op2("relax.multiply", x, y)?;
    // A broadcast dim of 1 in `a` takes `b`'s.
    let (out_dims, _) = cx.tensor(&value)?;
    Ok(Term {
        value,
        labels,
        dims: if out_dims.len() == dims.len() {
            out_dims
        } else {
            dims
        },
    })
}
