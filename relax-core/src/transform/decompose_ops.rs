//! `DecomposeOpsForInference`: composite ops become the primitive ops that
//! compute them at inference (TVM's
//! `relax.transform.DecomposeOpsForInference`).
//!
//! 1. `R.nn.batch_norm(x, gamma, beta, moving_mean, moving_var, axis=a, …)`
//!    normalizes with the moving statistics, whatever its `training` flag
//!    says (that is what "for inference" means):
//!    `(x - mean) / sqrt(var + epsilon) · gamma + beta`, each statistic and
//!    parameter first given `x`'s rank by `expand_dims` at every axis but
//!    `a`; `scale = False` drops the multiply, `center = False` the add. The
//!    call becomes the tuple `(result, moving_mean, moving_var)`, so
//!    projections of it keep working.
//! 2. The bindings are emitted in TVM's order and the epsilon constant has
//!    `x`'s dtype, so the result is structurally equal to TVM's.
//! 3. Left alone: a call whose data has unknown rank or a dtype other than
//!    `float32`/`float64` (no constant of it can be built here).
//! 4. `DecomposeOpsForInference::function("main")` rewrites only that
//!    function, as TVM's `func_name` argument does.
//!
//! TVM's pass also turns `R.tensor_to_shape` into a builtin call; that op
//! is not in this project's registry.

use super::Pass;
use crate::block_builder::BlockBuilder;
use crate::ir::{AttrValue, Attrs, Call, Expr, IRModule};
use crate::mutator::{ExprMutator, MutatorState};
use relax_runtime::{DataType, Error, Tensor};

/// The pass. See the module docs.
#[derive(Clone, Debug, Default)]
pub struct DecomposeOpsForInference {
    /// Only this function, if given.
    func_name: Option<String>,
}

impl DecomposeOpsForInference {
    /// The pass over the function named `name` only.
    pub fn function(name: &str) -> Self {
        DecomposeOpsForInference {
            func_name: Some(name.to_string()),
        }
    }
}

impl Pass for DecomposeOpsForInference {
    fn name(&self) -> &str {
        "DecomposeOpsForInference"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        let mut m = Decompose {
            state: MutatorState::with_module(&module),
        };
        let mut out = module.clone();
        for (gv, f) in module.functions() {
            let Some(func) = f.as_relax() else { continue };
            if self
                .func_name
                .as_deref()
                .is_some_and(|n| n != gv.name_hint())
            {
                continue;
            }
            let new = m.visit_expr(&Expr::function(func.clone()));
            if let Some(nf) = new.as_function() {
                out.add(gv.clone(), nf.clone());
            }
        }
        let errors = m.builder().take_errors();
        if errors.is_empty() {
            Ok(out)
        } else {
            Err(Error::Compile(errors))
        }
    }
}

struct Decompose {
    state: MutatorState,
}

impl ExprMutator for Decompose {
    fn state(&mut self) -> &mut MutatorState {
        &mut self.state
    }

    fn visit_call(&mut self, expr: &Expr, _call: &Call) -> Expr {
        let e = self.visit_expr_post_order(expr);
        let Some(call) = e.as_call() else { return e };
        if e.call_op_name() != Some("relax.nn.batch_norm") {
            return e;
        }
        match batch_norm(self.builder(), call) {
            Ok(Some(new)) => new,
            Ok(None) => e,
            Err(err) => {
                self.builder().report(err);
                e
            }
        }
    }
}

/// A scalar constant of `dtype` holding `v`, for the float dtypes a
/// constant can be built of (Gradient's rules make theirs with it too).
pub(crate) fn scalar(v: f64, dtype: DataType) -> Option<Expr> {
    let t = if dtype == DataType::f32() {
        Tensor::scalar(v as f32)
    } else if dtype == DataType::f64() {
        Tensor::scalar(v)
    } else {
        return None;
    };
    Some(Expr::constant(t))
}

/// The inference form of a `batch_norm` call (module docs, item 1), or
/// `None` when it is left alone.
fn batch_norm(bb: &mut BlockBuilder, call: &Call) -> Result<Option<Expr>, Error> {
    let info = crate::op::lookup("relax.nn.batch_norm")
        .ok_or_else(|| Error::Unsupported("nn.batch_norm is not registered".into()))?;
    let attrs = info
        .normalize_attrs(&call.attrs)
        .map_err(|d| Error::Compile(vec![d]))?;
    let Some(data) = call.args[0]
        .struct_info()
        .and_then(|s| s.as_tensor())
        .filter(|t| !t.is_unknown_ndim())
    else {
        return Ok(None);
    };
    let ndim = data.ndim;
    let Some(epsilon) = attrs.get("epsilon").and_then(AttrValue::as_float) else {
        return Ok(None);
    };
    let Some(eps) = scalar(epsilon, data.dtype) else {
        return Ok(None);
    };
    let axis = attrs.get("axis").and_then(AttrValue::as_int).unwrap_or(1);
    let axis = if axis < 0 { axis + ndim as i64 } else { axis };
    let flag = |name: &str| attrs.get(name).and_then(AttrValue::as_bool).unwrap_or(true);
    let (center, scale) = (flag("center"), flag("scale"));
    let others: Vec<i64> = (0..ndim as i64).filter(|&a| a != axis).collect();
    let expand = |bb: &mut BlockBuilder, e: &Expr| -> Result<Expr, Error> {
        if others.is_empty() {
            return Ok(e.clone());
        }
        let axes = AttrValue::Array(others.iter().map(|&a| AttrValue::Int(a)).collect());
        let attrs = Attrs::from_pairs([("axis", axes)]);
        Ok(bb
            .emit(Expr::call_op("relax.expand_dims", vec![e.clone()], attrs))?
            .into())
    };
    let op = |bb: &mut BlockBuilder, name: &str, args: Vec<Expr>| -> Result<Expr, Error> {
        Ok(bb.emit(Expr::call_op(name, args, Attrs::default()))?.into())
    };
    let [x, gamma, beta, moving_mean, moving_var] = &call.args[..] else {
        return Ok(None);
    };
    let mean = expand(bb, moving_mean)?;
    let centered = op(bb, "relax.subtract", vec![x.clone(), mean])?;
    let var = expand(bb, moving_var)?;
    let var_eps = op(bb, "relax.add", vec![var, eps])?;
    let std = op(bb, "relax.sqrt", vec![var_eps])?;
    let mut y = op(bb, "relax.divide", vec![centered, std])?;
    if scale {
        let g = expand(bb, gamma)?;
        y = op(bb, "relax.multiply", vec![y, g])?;
    }
    if center {
        let b = expand(bb, beta)?;
        y = op(bb, "relax.add", vec![y, b])?;
    }
    Ok(Some(Expr::tuple(vec![
        y,
        moving_mean.clone(),
        moving_var.clone(),
    ])))
}

#[cfg(test)]
mod tests;
