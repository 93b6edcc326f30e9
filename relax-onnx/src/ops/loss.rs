//! The classification losses: `NegativeLogLikelihoodLoss` and
//! `SoftmaxCrossEntropyLoss`, written with the registry's ops.
//!
//! 1. `NegativeLogLikelihoodLoss(input (N, C, d…), target (N, d…),
//!    weight (C)?)`: each element's loss is `-input[n, target[n, d], d] ·
//!    weight[target[n, d]]` (a `gather_elements` along the classes), and 0
//!    where `target == ignore_index`.
//! 2. `reduction`: `none` keeps the `(N, d…)` losses, `sum` adds them, and
//!    `mean` (the default) divides the sum by the sum of the weights the
//!    targets picked (the number of targets not ignored, without weights).
//! 3. `SoftmaxCrossEntropyLoss` is the same loss of `log_softmax(scores)`
//!    over the classes; its optional second output is that log-probability.
//!
//! An ignored target may lie outside `[0, C)`; it is replaced by 0 before
//! the gather, so no index is out of range.

use super::{ints, Ctx};
use relax_core::ir::{AttrValue, Attrs, Expr};
use relax_runtime::{DataType, Error};

/// The loss of `log_prob` (log-probabilities, `(N, C, d…)`) at the node's
/// targets (input `target_at`), weights (input `target_at + 1`) and
/// attributes.
fn nll(cx: &mut Ctx, log_prob: Expr, target_at: usize) -> Result<Expr, Error> {
    let target = cx.input(target_at)?;
    let weight = cx.opt_input(target_at + 1)?;
    let (dims, dtype) = cx.tensor(&log_prob)?;
    if dims.len() < 2 {
        return Err(cx.error("the input must be (N, C, …)"));
    }
    let reduction = cx
        .node
        .string("reduction")?
        .unwrap_or_else(|| "mean".into());
    if !matches!(reduction.as_str(), "none" | "sum" | "mean") {
        return Err(cx.error(format!("reduction `{reduction}` is not none, sum or mean")));
    }
    let i64t = DataType::i64();
    let mut t = cx.astype(target, i64t)?;
    // Ignored targets: a mask, and a safe class (0) in their place.
    let keep = match cx.node.int("ignore_index")? {
        Some(ii) => {
            let ii = cx.scalar(ii as f64, i64t)?;
            let keep = cx.op2("relax.not_equal", t.clone(), ii)?;
            let zero = cx.scalar(0.0, i64t)?;
            t = cx.call("relax.where", vec![keep.clone(), t, zero], Attrs::new())?;
            Some(keep)
        }
        None => None,
    };
    let axis1 = Attrs::from_pairs([("axis", ints([1]))]);
    let idx = cx.call("relax.expand_dims", vec![t.clone()], axis1.clone())?;
    let picked = cx.call(
        "relax.gather_elements",
        vec![log_prob, idx],
        Attrs::from_pairs([("axis", AttrValue::Int(1))]),
    )?;
    let picked = cx.call("relax.squeeze", vec![picked], axis1)?;
    let mut loss = cx.op1("relax.negative", picked)?;
    // The weight each target picks (1 without weights), 0 where ignored.
    let mut w = match weight {
        Some(w) => Some(cx.call(
            "relax.take",
            vec![w, t],
            Attrs::from_pairs([("axis", AttrValue::Int(0))]),
        )?),
        None => None,
    };
    if let Some(keep) = keep {
        let zero = cx.scalar(0.0, dtype)?;
        let base = match w {
            Some(w) => w,
            None => {
                let one = cx.scalar(1.0, dtype)?;
                let (td, _) = cx.tensor(&keep)?;
                cx.call(
                    "relax.broadcast_to",
                    vec![one, Expr::shape(td)],
                    Attrs::new(),
                )?
            }
        };
        w = Some(cx.call("relax.where", vec![keep, base, zero], Attrs::new())?);
    }
    if let Some(w) = &w {
        loss = cx.op2("relax.multiply", loss, w.clone())?;
    }
    let all = Attrs::from_pairs([
        ("axis", AttrValue::None),
        ("keepdims", AttrValue::Bool(false)),
    ]);
    Ok(match reduction.as_str() {
        "none" => loss,
        "sum" => cx.call("relax.sum", vec![loss], all)?,
        _ => match w {
            Some(w) => {
                let total = cx.call("relax.sum", vec![loss], all.clone())?;
                let count = cx.call("relax.sum", vec![w], all)?;
                cx.op2("relax.divide", total, count)?
            }
            None => cx.call("relax.mean", vec![loss], all)?,
        },
    })
}

pub fn negative_log_likelihood_loss(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&["ignore_index", "reduction"])?;
    let input = cx.input(0)?;
    Ok(vec![nll(cx, input, 1)?])
}

pub fn softmax_cross_entropy_loss(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&["ignore_index", "reduction"])?;
    let scores = cx.input(0)?;
    let log_prob = cx.call(
        "relax.nn.log_softmax",
        vec![scores],
        Attrs::from_pairs([("axis", AttrValue::Int(1))]),
    )?;
    let loss = nll(cx, log_prob.clone(), 1)?;
    Ok(vec![loss, log_prob])
}
