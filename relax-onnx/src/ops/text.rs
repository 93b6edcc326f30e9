//! Text features: `TfIdfVectorizer` over integer tokens (`pool_int64s`;
//! string pools have no dtype here).
//!
//! The pool lists n-grams by size (`ngram_counts[i]` is where the
//! `(i + 1)`-grams start); the `k`-th n-gram of the pool, in order, counts
//! into output column `ngram_indexes[k]`. A row's n-gram of size `n` at
//! skip distance `s` starts at any `i` with `i + (n - 1)·s` inside the row
//! and reads every `s`-th token; sizes in `[min_gram_length,
//! max_gram_length]` count, at every distance from 1 to `max_skip_count +
//! 1` (unigrams once, at distance 1), as ONNX's reference walks them.
//!
//! Written with the registry's ops, for a row length known at import: for
//! each size `n` and distance `s`, the `n` strided views of the row
//! (`strided_slice`, each `L = C - (n - 1)·s` long) are compared with the
//! pool's n-grams of that size (broadcast `equal`, `logical_and` over the
//! `n` tokens), and the matches summed over the start positions; the
//! counts per pool n-gram go to their output columns through a constant
//! 0/1 matrix (`matmul`, so two n-grams sharing a column add). `TF` is the
//! count, `IDF` the weight (1 without weights) where the count is
//! positive, `TFIDF` the count times the weight.

use super::{ints, shape, Ctx};
use relax_core::ir::{AttrValue, Attrs, Expr, PrimExpr};
use relax_runtime::{DataType, Error, Tensor};

pub fn tf_idf_vectorizer(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    let x = cx.input(0)?;
    let (dims, dtype) = cx.tensor(&x)?;
    if !dtype.is_integer() {
        return Err(cx.error(format!("X must hold integers, found {dtype}")));
    }
    let cols = cx.static_dims(&x)?;
    let (batch, c) = match cols.as_slice() {
        [c] => (None, *c),
        [b, c] => (Some(*b), *c),
        _ => {
            return Err(cx.error(format!(
                "X must have rank 1 or 2, found rank {}",
                dims.len()
            )))
        }
    };
    let min_n = cx.node.int_or("min_gram_length", 1)?;
    let max_n = cx.node.int_or("max_gram_length", 1)?;
    let max_skip = cx.node.int_or("max_skip_count", 0)?;
    if min_n < 1 || max_n < min_n || max_skip < 0 {
        return Err(cx.error(format!(
            "gram lengths [{min_n}, {max_n}] and skip count {max_skip} are not valid"
        )));
    }
    let mode = cx.node.string("mode")?.unwrap_or_default();
    let counts = cx.node.ints("ngram_counts")?.unwrap_or_default();
    let indexes = cx.node.ints("ngram_indexes")?.unwrap_or_default();
    let pool = cx
        .node
        .ints("pool_int64s")?
        .ok_or_else(|| cx.error("pool_int64s is required (string pools are not supported)"))?;
    let weights = cx.node.floats("weights")?;
    let out_size = indexes.iter().copied().max().map_or(0, |m| m + 1);
    if indexes.iter().any(|&i| i < 0) {
        return Err(cx.error("ngram_indexes must not be negative"));
    }
    if let Some(w) = &weights {
        if w.len() as i64 != out_size {
            return Err(cx.error(format!("{} weights for {out_size} output columns", w.len())));
        }
    }
    // The pool's n-grams by size: (size, first global n-gram number, tokens).
    let mut groups = Vec::new();
    let mut number = 0usize;
    for (i, &start) in counts.iter().enumerate() {
        let end = counts.get(i + 1).copied().unwrap_or(pool.len() as i64);
        let n = i as i64 + 1;
        if start < 0 || end < start || end as usize > pool.len() || (end - start) % n != 0 {
            return Err(cx.error(format!(
                "ngram_counts {counts:?} do not cut the pool of {} into whole n-grams",
                pool.len()
            )));
        }
        let m = ((end - start) / n) as usize;
        groups.push((n, number, pool[start as usize..end as usize].to_vec(), m));
        number += m;
    }
    if number > indexes.len() {
        return Err(cx.error(format!(
            "{number} n-grams in the pool but {} ngram_indexes",
            indexes.len()
        )));
    }
    let x = cx.astype(x, DataType::i64())?;
    // Rows as (B, C).
    let b = batch.unwrap_or(1);
    let x = cx.call(
        "relax.reshape",
        vec![x, shape(vec![PrimExpr::int(b), PrimExpr::int(c)])],
        Attrs::new(),
    )?;
    let f32t = DataType::f32();
    let mut total: Option<Expr> = None;
    for (n, first, tokens, m) in groups {
        if n < min_n || n > max_n || m == 0 {
            continue;
        }
        // The counts of this size's n-grams, (B, m).
        let mut size_counts: Option<Expr> = None;
        for s in 1..=max_skip + 1 {
            if n == 1 && s > 1 {
                break;
            }
            let len = c - (n - 1) * s;
            if len <= 0 {
                continue;
            }
            let mut all: Option<Expr> = None;
            for j in 0..n {
                let view = cx.call(
                    "relax.strided_slice",
                    vec![x.clone()],
                    Attrs::from_pairs([
                        ("axes", ints([1])),
                        ("begin", ints([j * s])),
                        ("end", ints([j * s + len])),
                    ]),
                )?;
                let view = cx.call(
                    "relax.reshape",
                    vec![
                        view,
                        shape(vec![PrimExpr::int(b), PrimExpr::int(len), PrimExpr::int(1)]),
                    ],
                    Attrs::new(),
                )?;
                let column: Vec<i64> = (0..m)
                    .map(|k| tokens[k * n as usize + j as usize])
                    .collect();
                let column =
                    Tensor::from_vec(&[1, 1, m as i64], column).map_err(|e| cx.error(e))?;
                let eq = cx.op2("relax.equal", view, Expr::constant(column))?;
                all = Some(match all {
                    None => eq,
                    Some(a) => cx.op2("relax.logical_and", a, eq)?,
                });
            }
            let Some(all) = all else { continue };
            let hits = cx.astype(all, f32t)?;
            let per_gram = cx.call(
                "relax.sum",
                vec![hits],
                Attrs::from_pairs([("axis", ints([1])), ("keepdims", AttrValue::Bool(false))]),
            )?;
            size_counts = Some(match size_counts {
                None => per_gram,
                Some(t) => cx.op2("relax.add", t, per_gram)?,
            });
        }
        let Some(size_counts) = size_counts else {
            continue;
        };
        // To the output columns: (B, m) @ (m, out_size).
        let mut place = vec![0f32; m * out_size as usize];
        for k in 0..m {
            place[k * out_size as usize + indexes[first + k] as usize] = 1.0;
        }
        let place = Tensor::from_vec(&[m as i64, out_size], place).map_err(|e| cx.error(e))?;
        let cols = cx.op2("relax.matmul", size_counts, Expr::constant(place))?;
        total = Some(match total {
            None => cols,
            Some(t) => cx.op2("relax.add", t, cols)?,
        });
    }
    let out_dims = vec![PrimExpr::int(b), PrimExpr::int(out_size)];
    let tf = match total {
        Some(t) => t,
        None => cx.call(
            "relax.zeros",
            vec![shape(out_dims)],
            Attrs::from_pairs([("dtype", AttrValue::DataType(f32t))]),
        )?,
    };
    let w = match &weights {
        Some(w) => {
            Expr::constant(Tensor::from_vec(&[out_size], w.clone()).map_err(|e| cx.error(e))?)
        }
        None => cx.scalar(1.0, f32t)?,
    };
    let y = match mode.as_str() {
        "TF" => tf,
        "IDF" => {
            let zero = cx.scalar(0.0, f32t)?;
            let seen = cx.op2("relax.greater", tf, zero.clone())?;
            let w = cx.call(
                "relax.broadcast_to",
                vec![w, shape(vec![PrimExpr::int(b), PrimExpr::int(out_size)])],
                Attrs::new(),
            )?;
            cx.call("relax.where", vec![seen, w, zero], Attrs::new())?
        }
        "TFIDF" => cx.op2("relax.multiply", tf, w)?,
        other => return Err(cx.error(format!("mode `{other}` is not TF, IDF or TFIDF"))),
    };
    if batch.is_none() {
        return Ok(vec![cx.call(
            "relax.reshape",
            vec![y, shape(vec![PrimExpr::int(out_size)])],
            Attrs::new(),
        )?]);
    }
    Ok(vec![y])
}
