//! `Det`: the determinant of each `(n, n)` matrix of `(…, n, n)`, by
//! Gaussian elimination with partial pivoting, unrolled over the `n`
//! (known) columns with registry ops.
//!
//! At column `k`: the row of the largest `|a[i, k]|`, `i >= k`, is swapped
//! with row `k` (`gather_elements` by the swapped row order; the sign
//! flips when it moves), the pivot multiplies the determinant, and the rows
//! below lose their multiple of row `k`. A zero pivot (a singular matrix)
//! makes the determinant 0; it is replaced by 1 as the divisor so no NaN
//! reaches the later columns.

use super::{shape, slice_axis, Ctx};
use relax_core::ir::{AttrValue, Attrs, Expr, PrimExpr};
use relax_runtime::{DataType, Error};

pub fn det(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&[])?;
    let mut a = cx.input(0)?;
    let (dims, dtype) = cx.tensor(&a)?;
    if !dtype.is_float() {
        return Err(cx.error(format!("the input must be a float tensor, not {dtype}")));
    }
    let r = dims.len();
    if r < 2 {
        return Err(cx.error(format!("the input must have rank 2 or more, found {r}")));
    }
    let n = match (dims[r - 2].as_int(), dims[r - 1].as_int()) {
        (Some(p), Some(q)) if p == q => p,
        (Some(p), Some(q)) => {
            return Err(cx.error(format!("the matrices must be square, found {p} by {q}")))
        }
        _ => return Err(cx.error("Det needs the matrix size to be a known integer")),
    };
    let batch: Vec<PrimExpr> = dims[..r - 2].to_vec();
    let with = |tail: &[i64]| -> Vec<PrimExpr> {
        batch
            .iter()
            .cloned()
            .chain(tail.iter().map(|&d| PrimExpr::int(d)))
            .collect()
    };
    let one = cx.scalar(1.0, dtype)?;
    let zero = cx.scalar(0.0, dtype)?;
    if n == 0 {
        // The empty product.
        return Ok(vec![cx.call(
            "relax.broadcast_to",
            vec![one, shape(batch)],
            Attrs::new(),
        )?]);
    }
    let mut det = one.clone();
    let i64t = DataType::i64();
    for k in 0..n {
        // The pivot row: k plus the argmax of |a[k.., k]|.
        let col = slice_axis(cx, a.clone(), -1, k, k + 1)?;
        let col = slice_axis(cx, col, -2, k, n)?;
        let col = cx.op1("relax.abs", col)?;
        let attrs = Attrs::from_pairs([
            ("axis", AttrValue::Int(-2)),
            ("keepdims", AttrValue::Bool(true)),
        ]);
        let p = cx.call("relax.argmax", vec![col], attrs)?;
        let p = cx.astype(p, i64t)?;
        let kk = cx.scalar(k as f64, i64t)?;
        let p = cx.op2("relax.add", p, kk.clone())?;
        // Rows k and p swapped: order[i] = p if i == k, k if i == p, else i.
        let rows = cx.positions(PrimExpr::int(n), true)?;
        let is_k = cx.op2("relax.equal", rows.clone(), kk.clone())?;
        let is_p = cx.op2("relax.equal", rows.clone(), p.clone())?;
        let order = cx.call("relax.where", vec![is_p, kk.clone(), rows], Attrs::new())?;
        let order = cx.call("relax.where", vec![is_k, p.clone(), order], Attrs::new())?;
        let order = cx.call(
            "relax.broadcast_to",
            vec![order, shape(with(&[n, n]))],
            Attrs::new(),
        )?;
        let attrs = Attrs::from_pairs([("axis", AttrValue::Int(r as i64 - 2))]);
        a = cx.call("relax.gather_elements", vec![a, order], attrs)?;
        let moved = cx.op2("relax.not_equal", p, kk)?;
        let minus = cx.scalar(-1.0, dtype)?;
        let sign = cx.call("relax.where", vec![moved, minus, one.clone()], Attrs::new())?;
        // The pivot, (…, 1, 1).
        let row_k = slice_axis(cx, a.clone(), -2, k, k + 1)?;
        let pivot = slice_axis(cx, row_k.clone(), -1, k, k + 1)?;
        let signed = cx.op2("relax.multiply", pivot.clone(), sign)?;
        det = cx.op2("relax.multiply", det, signed)?;
        if k + 1 == n {
            break;
        }
        let is_zero = cx.op2("relax.equal", pivot.clone(), zero.clone())?;
        let pivot = cx.call(
            "relax.where",
            vec![is_zero, one.clone(), pivot],
            Attrs::new(),
        )?;
        let below = slice_axis(cx, a.clone(), -2, k + 1, n)?;
        let lead = slice_axis(cx, below.clone(), -1, k, k + 1)?;
        let factor = cx.op2("relax.divide", lead, pivot)?;
        let sub = cx.op2("relax.multiply", factor, row_k)?;
        let below = cx.op2("relax.subtract", below, sub)?;
        let above = slice_axis(cx, a, -2, 0, k + 1)?;
        let attrs = Attrs::from_pairs([("axis", AttrValue::Int(r as i64 - 2))]);
        a = cx.call("relax.concat", vec![Expr::tuple(vec![above, below])], attrs)?;
    }
    // det is (…, 1, 1): the batch shape.
    Ok(vec![cx.call(
        "relax.reshape",
        vec![det, shape(batch)],
        Attrs::new(),
    )?])
}
