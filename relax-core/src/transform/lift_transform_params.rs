//! `LiftTransformParams`: computation on the weights alone moves into a
//! function of its own that runs once (TVM's
//! `relax.transform.LiftTransformParams`).
//!
//! A function with the attribute `num_input = k` takes its first `k`
//! parameters at run time; the others are *weights*. A binding in a
//! dataflow block whose value uses only weights and earlier such bindings
//! (the MLP's `permute_dims(w)`) is *lifted*: it moves to a new public
//! function `<name>_transform_params(params: R.Tuple(<weights>))` with
//! `num_input = 0`, which reads each weight it needs as `params[i]`, runs
//! the lifted bindings in one dataflow block and returns, as a tuple, what
//! the original function still uses: weights it reads directly, in
//! parameter order, then lifted values, in binding order. The original
//! function keeps its first `k` parameters and takes those values in that
//! order instead of the weights (each named after what it replaces).
//!
//! Calling `<name>_transform_params` once on the weights and then `<name>`
//! with its results gives what `<name>` gave on the weights, without
//! repeating the weight-only work on every call.
//!
//! Not lifted: bindings outside dataflow blocks (control flow), `match_cast`
//! bindings, and values whose StructInfo has symbolic dims the weights do
//! not define. A function without `num_input`, or with nothing to lift, is
//! left as it is. (TVM's option to consume the parameters in place and its
//! sharing of one transform among several functions are not built.)

use super::Pass;
use crate::analysis::vars::free_vars;
use crate::block_builder::BlockBuilder;
use crate::ir::{Binding, BindingBlock, Expr, ExprKind, Function, IRModule, StructInfo, Var};
use crate::mutator::replace_vars;
use relax_runtime::{Diagnostic, Error};
use std::collections::{HashMap, HashSet};

/// The attribute that counts a function's run-time inputs.
pub const NUM_INPUT: &str = "num_input";

/// The pass. See the module docs.
#[derive(Clone, Copy, Debug, Default)]
pub struct LiftTransformParams;

impl Pass for LiftTransformParams {
    fn name(&self) -> &str {
        "LiftTransformParams"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        let mut out = module.clone();
        for (gv, func) in module.functions() {
            let Some(f) = func.as_relax() else { continue };
            let Some(k) = f.attrs.get(NUM_INPUT).and_then(|v| v.as_int()) else {
                continue;
            };
            let k = usize::try_from(k).unwrap_or(0).min(f.params.len());
            let Some(plan) = Plan::of(f, k) else { continue };
            let name = format!("{}_transform_params", gv.name_hint());
            let transform = plan.transform_function(&name, &module)?;
            let rewritten = plan.rewrite(&out, f)?;
            out.add(gv.clone(), rewritten);
            // Under a name of its own, should the module have that one.
            let mut bb = BlockBuilder::with_module(out);
            bb.add_func(transform, &name);
            out = bb.get();
        }
        Ok(out)
    }
}

fn error(message: String) -> Error {
    Error::Compile(vec![Diagnostic::new("lift-transform-params", message)])
}

/// What one function lifts.
struct Plan {
    /// The weights, in parameter order.
    weights: Vec<Var>,
    /// The run-time inputs.
    inputs: Vec<Var>,
    /// The lifted bindings, in order.
    lifted: Vec<(Var, Expr)>,
    /// What the rest of the function uses from the weights and the lifted
    /// bindings: weights in parameter order, then lifted values.
    outputs: Vec<Var>,
}

impl Plan {
    fn of(f: &Function, k: usize) -> Option<Plan> {
        let seq = f.body.as_seq()?;
        let weights: Vec<Var> = f.params[k..].to_vec();
        let defined: HashSet<_> = weights
            .iter()
            .filter_map(|w| w.struct_info())
            .flat_map(|s| s.definable_tir_vars())
            .collect();
        let mut known: HashSet<Var> = weights.iter().cloned().collect();
        let mut lifted = Vec::new();
        for block in seq.blocks.iter().filter(|b| b.is_dataflow) {
            for binding in &block.bindings {
                let Binding::VarBinding(b) = binding else {
                    continue;
                };
                let liftable = !matches!(b.value.kind(), ExprKind::Function(_) | ExprKind::If(_))
                    && free_vars(&b.value).iter().all(|v| known.contains(v))
                    && b.var
                        .struct_info()
                        .is_none_or(|s| s.tir_vars().iter().all(|v| defined.contains(v)));
                if liftable {
                    known.insert(b.var.clone());
                    lifted.push((b.var.clone(), b.value.clone()));
                }
            }
        }
        if lifted.is_empty() {
            return None;
        }
        let lifted_vars: HashSet<&Var> = lifted.iter().map(|(v, _)| v).collect();
        // What the remaining bindings and the result read.
        let mut used: HashSet<Var> = HashSet::new();
        for block in &seq.blocks {
            for binding in &block.bindings {
                if lifted_vars.contains(binding.var()) {
                    continue;
                }
                used.extend(free_vars(binding.value()));
            }
        }
        used.extend(free_vars(&seq.body));
        let outputs = weights
            .iter()
            .chain(lifted.iter().map(|(v, _)| v))
            .filter(|v| used.contains(*v))
            .cloned()
            .collect();
        Some(Plan {
            weights,
            inputs: f.params[..k].to_vec(),
            lifted,
            outputs,
        })
    }

    /// `<name>_transform_params`: the weights in, the outputs out.
    fn transform_function(&self, name: &str, module: &IRModule) -> Result<Function, Error> {
        let sinfo = |v: &Var| v.struct_info().cloned().unwrap_or_else(StructInfo::object);
        let params = Var::new(
            "params",
            Some(StructInfo::tuple(self.weights.iter().map(sinfo).collect())),
        );
        let mut bb = BlockBuilder::new();
        bb.begin_function(name, vec![params.clone()]);
        bb.set_func_attr(NUM_INPUT, 0i64)?;
        bb.begin_dataflow()?;
        let mut map: HashMap<Var, Expr> = HashMap::new();
        let needed: HashSet<Var> = self
            .lifted
            .iter()
            .flat_map(|(_, value)| free_vars(value))
            .chain(self.outputs.iter().cloned())
            .collect();
        for (i, w) in self.weights.iter().enumerate() {
            if needed.contains(w) {
                let item = Expr::tuple_get_item(Expr::var(&params), i);
                let v = bb.emit_named(item, w.name_hint())?;
                map.insert(w.clone(), Expr::var(&v));
            }
        }
        for (var, value) in &self.lifted {
            let value = replace_vars(value, &map, module)?;
            let v = bb.emit_named(value, var.name_hint())?;
            map.insert(var.clone(), Expr::var(&v));
        }
        let fields = self
            .outputs
            .iter()
            .map(|v| {
                map.get(v)
                    .cloned()
                    .ok_or_else(|| error(format!("`{}` was not lifted", v.name_hint())))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let out = bb.emit_output_named(Expr::tuple(fields), "gv")?;
        bb.end_dataflow()?;
        let gv = bb.emit_func_output(Expr::var(&out))?;
        bb.get()
            .get_relax(gv.name_hint())
            .cloned()
            .ok_or_else(|| error(format!("`{name}` was not built")))
    }

    /// The function with the lifted bindings removed and the outputs as
    /// parameters after the inputs.
    fn rewrite(&self, module: &IRModule, f: &Function) -> Result<Function, Error> {
        let mut map: HashMap<Var, Expr> = HashMap::new();
        let mut params = self.inputs.clone();
        for v in &self.outputs {
            let p = Var::new(v.name_hint(), v.struct_info().cloned());
            map.insert(v.clone(), Expr::var(&p));
            params.push(p);
        }
        let lifted: HashSet<&Var> = self.lifted.iter().map(|(v, _)| v).collect();
        let seq = f
            .body
            .as_seq()
            .ok_or_else(|| error("the body is not a SeqExpr".into()))?;
        let blocks = seq
            .blocks
            .iter()
            .map(|b| BindingBlock {
                bindings: b
                    .bindings
                    .iter()
                    .filter(|x| !lifted.contains(x.var()))
                    .cloned()
                    .collect(),
                ..b.clone()
            })
            .filter(|b| !b.bindings.is_empty())
            .collect();
        let func = Function {
            params,
            body: Expr::seq(blocks, seq.body.clone()),
            ..f.clone()
        };
        let e = replace_vars(&Expr::function(func), &map, module)?;
        e.as_function()
            .cloned()
            .ok_or_else(|| error("rewriting did not return a function".into()))
    }
}

#[cfg(test)]
mod tests;
