//! `If`: a Relax `If` whose branches are the node's two subgraphs, each
//! converted into a branch body (a `SeqExpr`) that sees the enclosing
//! graphs' values. A branch with several outputs gives a tuple, which the
//! node's outputs take apart; a tensor output whose branches disagree on
//! its shape gets fresh symbolic dims (a `match_cast`). A condition known
//! at import time converts only its branch, in place.

use super::Ctx;
use crate::graph::convert_subgraph;
use relax_core::ir::{Attrs, Expr, ExprKind, StructInfo, TirVar};
use relax_runtime::{DataType, Error};

/// `If(cond)` with the subgraphs `then_branch` and `else_branch`.
pub fn if_(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&["then_branch", "else_branch"])?;
    let then_graph = cx
        .node
        .graph("then_branch")?
        .ok_or_else(|| cx.error("attribute `then_branch` is required"))?;
    let else_graph = cx
        .node
        .graph("else_branch")?
        .ok_or_else(|| cx.error("attribute `else_branch` is required"))?;
    let cond = cx.input(0)?;
    let (dims, _) = cx.tensor(&cond)?;
    let numel = super::product(&dims);
    if numel.as_int().is_some_and(|n| n != 1) {
        return Err(cx.error(format!(
            "the condition must hold one element, and it has shape {dims:?}"
        )));
    }
    let cond = if dims.is_empty() {
        cond
    } else {
        cx.call(
            "relax.reshape",
            vec![cond, super::shape(vec![])],
            Attrs::new(),
        )?
    };
    let cond = cx.astype(cond, DataType::bool())?;
    let outer = cx.values;
    let opset = cx.opset;
    let n = cx.node.num_outputs();
    if let ExprKind::Constant(t) = cond.kind() {
        let taken = if t.to_f64_vec().first().is_some_and(|&v| v != 0.0) {
            then_graph
        } else {
            else_graph
        };
        return convert_subgraph(cx.bb, outer, taken, vec![], opset).map_err(|e| cx.error(e));
    }
    if cx.bb.current_block_is_dataflow() {
        return Err(cx.error("`If` inside a dataflow block"));
    }
    let branch = |cx: &mut Ctx, g: &crate::proto::GraphProto| -> Result<Expr, Error> {
        cx.bb.begin_inner_scope().map_err(|e| cx.error(e))?;
        let outs = convert_subgraph(cx.bb, outer, g, vec![], opset).map_err(|e| cx.error(e))?;
        if outs.len() != n {
            return Err(cx.error(format!(
                "a branch has {} output(s), and the node {n}",
                outs.len()
            )));
        }
        let out = if n == 1 {
            outs.into_iter().next().expect("one output")
        } else {
            Expr::tuple(outs)
        };
        cx.bb.end_inner_scope(out).map_err(|e| cx.error(e))
    };
    let then_body = branch(cx, then_graph)?;
    let else_body = branch(cx, else_graph)?;
    let var = cx
        .bb
        .emit(Expr::if_(cond, then_body, else_body))
        .map_err(|e| cx.error(e))?;
    let result = Expr::var(&var);
    let outs = if n == 1 {
        vec![result]
    } else {
        (0..n)
            .map(|i| cx.item(&result, i))
            .collect::<Result<Vec<_>, _>>()?
    };
    outs.into_iter()
        .enumerate()
        .map(|(i, e)| bind_dims(cx, e, i))
        .collect()
}

/// A tensor output whose branches disagree on its shape (only its rank is
/// known after the `If`) bound to fresh symbolic dims with a `match_cast`,
/// so the nodes after it see a shape; anything else as it is.
fn bind_dims(cx: &mut Ctx, e: Expr, i: usize) -> Result<Expr, Error> {
    let Some(t) = e.struct_info().and_then(|s| s.as_tensor()) else {
        return Ok(e);
    };
    if t.shape_values().is_some() || t.ndim < 0 {
        return Ok(e);
    }
    let base = relax_core::printer::dsl::identifier(
        cx.node.proto.output.get(i).map_or("if", String::as_str),
    );
    let dims = (0..t.ndim)
        .map(|k| TirVar::new(format!("{base}_{k}")).to_expr())
        .collect();
    let sinfo = StructInfo::tensor(dims, t.dtype);
    let v = cx.bb.emit_match_cast(e, sinfo).map_err(|e| cx.error(e))?;
    Ok(Expr::var(&v))
}
