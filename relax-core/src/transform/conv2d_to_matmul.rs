//! `Conv2dToMatmul`: a pointwise convolution in NHWC is a matrix product
//! (the rewrite TVM's schedules make of a 1 × 1 `conv2d_nhwc`, done on
//! the graph).
//!
//! `R.nn.conv2d(x, w, data_layout="NHWC", kernel_layout="HWIO")` with a
//! `1 × 1` kernel, strides and dilation 1, no padding and one group is
//!
//! ```text
//! R.matmul(x, R.reshape(w, (C_in, C_out)))       (N, H, W, C_in) × (C_in, C_out)
//! ```
//!
//! exactly: the same sums in the same order. The product broadcasts the
//! weight over `(N, H, W)`, which `DefaultSchedule` folds into the rows of
//! one matrix product (`fold_rows.rs`); a constant weight's reshape is
//! folded by `FoldConstant`, and `PrepackWeights` then stores it as the
//! GEMM's panels. The build runs it after `ConvertLayout` for the host
//! (`backend/pipeline.rs`).

use super::Pass;
use crate::ir::{AttrValue, Attrs, Call, Expr, IRModule, PrimExpr, StructInfo};
use crate::mutator::{mutate_module, ExprMutator, MutatorState};
use crate::op::infer::{attr, attr_dtype, attr_int, attr_ints};
use relax_runtime::{DataType, Error};

/// The pass. See the module docs.
#[derive(Clone, Copy, Debug, Default)]
pub struct Conv2dToMatmul;

impl Pass for Conv2dToMatmul {
    fn name(&self) -> &str {
        "Conv2dToMatmul"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        let mut m = Rewriter {
            state: MutatorState::with_module(&module),
        };
        mutate_module(&mut m, &module)
    }
}

/// `(C_in, C_out)` of `call` when it is a pointwise NHWC convolution the
/// pass rewrites (module docs).
fn pointwise(call: &Call) -> Option<(PrimExpr, PrimExpr)> {
    let is =
        |name: &str, want: &str| matches!(attr(call, name), Some(AttrValue::Str(s)) if s == want);
    let all =
        |name: &str, want: i64| attr_ints(call, name).is_some_and(|v| v.iter().all(|&x| x == want));
    // The output NHWC too (an absent `out_layout` is the data layout).
    let out_nhwc = attr(call, "out_layout").is_none() || is("out_layout", "NHWC");
    let eligible = is("data_layout", "NHWC")
        && is("kernel_layout", "HWIO")
        && out_nhwc
        && all("strides", 1)
        && all("dilation", 1)
        && all("padding", 0)
        && attr_int(call, "groups").unwrap_or(1) == 1;
    if !eligible {
        return None;
    }
    let [x, w] = &call.args[..] else { return None };
    let tensor = |e: &Expr| e.struct_info().and_then(StructInfo::as_tensor).cloned();
    let (xt, wt) = (tensor(x)?, tensor(w)?);
    let out_dtype = attr_dtype(call, "out_dtype");
    if !(out_dtype.is_void() || out_dtype == xt.dtype) || xt.dtype != wt.dtype || xt.ndim != 4 {
        return None;
    }
    let dims = wt.shape_values()?;
    match dims {
        [h, w, ci, co] if h.as_int() == Some(1) && w.as_int() == Some(1) => {
            Some((ci.clone(), co.clone()))
        }
        _ => None,
    }
}

struct Rewriter {
    state: MutatorState,
}

impl ExprMutator for Rewriter {
    fn state(&mut self) -> &mut MutatorState {
        &mut self.state
    }

    fn visit_call(&mut self, expr: &Expr, _call: &Call) -> Expr {
        let e = self.visit_expr_post_order(expr);
        if e.call_op_name() != Some("relax.nn.conv2d") {
            return e;
        }
        let Some(call) = e.as_call() else { return e };
        let Some((ci, co)) = pointwise(call) else {
            return e;
        };
        let reshape = Expr::call_op(
            "relax.reshape",
            vec![call.args[1].clone(), Expr::shape(vec![ci, co])],
            Attrs::new(),
        );
        let weight = match self.builder().emit_named(reshape, "w") {
            Ok(v) => Expr::var(&v),
            Err(err) => {
                self.builder().report(err);
                return e;
            }
        };
        Expr::call_op(
            "relax.matmul",
            vec![call.args[0].clone(), weight],
            Attrs::from_pairs([("out_dtype", AttrValue::DataType(DataType::void()))]),
        )
    }
}

#[cfg(test)]
#[path = "conv2d_to_matmul/tests.rs"]
mod tests;
