//! `Gradient`: reverse-mode automatic differentiation of one Relax function
//! (TVM's `relax.transform.Gradient`).
//!
//! `Gradient::new("main")` adds `main_adjoint` to the module. It takes
//! `main`'s parameters and returns `(main's result, (adjoint, …))`: the
//! gradient of the *target* with respect to each required parameter, in
//! parameter order.
//!
//! 1. **Input.** The function's body is one dataflow block and a result
//!    (run `ConvertToDataflow` first otherwise). The target is the result,
//!    or its `target_index`-th field when the result is a tuple; it must be
//!    a variable holding a float scalar (`R.Tensor((), "float32")`).
//! 2. **Required parameters.** All parameters by default;
//!    [`Gradient::require_grads`] names a subset. Each must be a float
//!    tensor.
//! 3. **The adjoint function.** It repeats the original bindings (new
//!    variables, the same names), then binds the adjoints in reverse
//!    order: `t_adjoint = R.ones((), dtype)` for the target, and for every
//!    variable `v` that depends on a required parameter and has a float
//!    type, `v_adjoint` = the sum of what each use of `v` contributes
//!    (one `R.add` per extra use). A parameter's adjoint is an output of
//!    the dataflow block; a required parameter the target does not depend
//!    on gets `R.zeros`. Everything is ops of the registry, so the adjoint
//!    function legalizes, fuses and builds like any other.
//! 4. **Broadcasting.** An operand broadcast by an op gets the adjoint
//!    summed over the broadcast axes (`R.sum` with `keepdims`, then
//!    `R.reshape` when the rank differs), as TVM's `collapse_sum_to` does.
//! 5. **Tuples.** A tuple-valued variable's adjoint is the tuple of its
//!    fields' adjoints (`R.zeros` for a field nothing uses): tuple
//!    construction, `t[i]`, `R.split` and `R.concat` pass adjoints through.
//!    Nested tuples are not differentiated.
//! 6. **The rules**, one per op, are in `gradient/rules.rs`. An op on the
//!    path from a required parameter to the target without a rule is an
//!    error naming the op and the binding; comparisons, creation ops and
//!    integer results carry no gradient.
//!
//! Not built: TVM's checkpointing (`R.grad.start_checkpoint`), gradients
//! of tuple-typed parameters, and differentiating functions with control
//! flow (TVM rejects those too).

mod rules;

use super::bind_symbolic_vars::with_fresh_symbolic_vars;
use super::Pass;
use crate::analysis::vars::free_vars;
use crate::block_builder::BlockBuilder;
use crate::ir::{Binding, Expr, ExprKind, IRModule, StructInfo, Var};
use crate::mutator::replace_vars;
use relax_runtime::{DataType, Diagnostic, Error};
use std::collections::{HashMap, HashSet};

/// The pass. See the module docs.
#[derive(Clone, Debug)]
pub struct Gradient {
    func_name: String,
    require_grads: Option<Vec<String>>,
    target_index: usize,
}

impl Gradient {
    /// Differentiates the function `func_name` with respect to all its
    /// parameters; the target is its result (or the result's field 0).
    pub fn new(func_name: &str) -> Self {
        Gradient {
            func_name: func_name.to_string(),
            require_grads: None,
            target_index: 0,
        }
    }

    /// Only these parameters (by name) get adjoints, in parameter order.
    pub fn require_grads<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.require_grads = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// When the function returns a tuple, the field that is the target.
    pub fn target_index(mut self, index: usize) -> Self {
        self.target_index = index;
        self
    }
}

pub(super) fn error(message: String) -> Error {
    Error::Compile(vec![Diagnostic::new("gradient", message)])
}

/// Whether values of this StructInfo carry a gradient.
fn differentiable(sinfo: Option<&StructInfo>) -> bool {
    match sinfo {
        Some(s) => match s.as_tensor() {
            Some(t) => t.dtype.is_float(),
            None => s
                .as_tuple()
                .is_some_and(|fields| fields.iter().any(|f| differentiable(Some(f)))),
        },
        None => false,
    }
}

impl Pass for Gradient {
    fn name(&self) -> &str {
        "Gradient"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        let name = &self.func_name;
        let f = module
            .get_relax(name)
            .ok_or_else(|| error(format!("the module has no Relax function `{name}`")))?;
        // A copy with its own symbolic variables, every binding's value
        // over leaves.
        let f = with_fresh_symbolic_vars(f)?;
        let f = BlockBuilder::new().normalize(Expr::function(f))?;
        let f = f
            .as_function()
            .ok_or_else(|| error(format!("`{name}` did not normalize to a function")))?;
        let seq = f
            .body
            .as_seq()
            .ok_or_else(|| error(format!("`{name}`'s body is not a SeqExpr")))?;
        let block = match &seq.blocks[..] {
            [b] if b.is_dataflow => b,
            _ => {
                return Err(error(format!(
                    "`{name}` must be one dataflow block and a result \
                     (it has {} blocks; run ConvertToDataflow first)",
                    seq.blocks.len()
                )))
            }
        };

        // The required parameters, in parameter order.
        let required: Vec<usize> = match &self.require_grads {
            None => (0..f.params.len()).collect(),
            Some(names) => {
                let mut seen = HashSet::new();
                for n in names {
                    if !f.params.iter().any(|p| p.name_hint() == n) {
                        return Err(error(format!("`{name}` has no parameter `{n}`")));
                    }
                    if !seen.insert(n.as_str()) {
                        return Err(error(format!("parameter `{n}` is required twice")));
                    }
                }
                (0..f.params.len())
                    .filter(|&i| seen.contains(f.params[i].name_hint()))
                    .collect()
            }
        };
        for &i in &required {
            let p = &f.params[i];
            let is_float_tensor = p
                .struct_info()
                .and_then(|s| s.as_tensor())
                .is_some_and(|t| t.dtype.is_float() && t.shape_values().is_some());
            if !is_float_tensor {
                return Err(error(format!(
                    "parameter `{}` of `{name}` needs a gradient, so it must be a float \
                     tensor of known shape; it is {}",
                    p.name_hint(),
                    p.struct_info()
                        .map_or("unannotated".to_string(), |s| s.to_string())
                )));
            }
        }

        // The target.
        let target = match seq.body.kind() {
            ExprKind::Tuple(fields) => fields.get(self.target_index).ok_or_else(|| {
                error(format!(
                    "target_index {} is out of range: `{name}` returns {} values",
                    self.target_index,
                    fields.len()
                ))
            })?,
            _ if self.target_index == 0 => &seq.body,
            _ => {
                return Err(error(format!(
                    "target_index {} given, but `{name}` returns one value",
                    self.target_index
                )))
            }
        };
        let target = target.as_var().ok_or_else(|| {
            error(format!(
                "the target of `{name}` must be a variable; it is {target}"
            ))
        })?;
        let target_dtype = match target.struct_info().and_then(|s| s.as_tensor()) {
            Some(t) if t.ndim == 0 && t.dtype.is_float() => t.dtype,
            _ => {
                return Err(error(format!(
                    "the target `{}` of `{name}` must be a float scalar (a 0-dim tensor); it is {}",
                    target.name_hint(),
                    target
                        .struct_info()
                        .map_or("unannotated".to_string(), |s| s.to_string())
                )))
            }
        };

        // The forward bindings, again.
        let adjoint_name = format!("{name}_adjoint");
        let params: Vec<Var> = f
            .params
            .iter()
            .map(|p| Var::new(p.name_hint(), p.struct_info().cloned()))
            .collect();
        let mut map: HashMap<Var, Expr> = f
            .params
            .iter()
            .zip(&params)
            .map(|(old, new)| (old.clone(), Expr::var(new)))
            .collect();
        let mut bb = BlockBuilder::with_module(module.clone());
        bb.begin_function(&adjoint_name, params.clone());
        for (k, v) in f.attrs.iter() {
            if k != "global_symbol" {
                bb.set_func_attr(k, v.clone())?;
            }
        }
        bb.begin_dataflow()?;
        let mut forward: Vec<(Var, Expr)> = Vec::new();
        for binding in &block.bindings {
            let value = replace_vars(binding.value(), &map, &module)?;
            let old = binding.var();
            let new = match binding {
                Binding::VarBinding(_) if old.is_dataflow() => {
                    bb.emit_named(value.clone(), old.name_hint())?
                }
                Binding::VarBinding(_) => bb.emit_output_named(value.clone(), old.name_hint())?,
                Binding::MatchCast(m) => {
                    let sinfo = m.struct_info.clone();
                    let var = if old.is_dataflow() {
                        Var::new_dataflow(old.name_hint(), Some(sinfo.clone()))
                    } else {
                        Var::new(old.name_hint(), Some(sinfo.clone()))
                    };
                    bb.emit_normalized(Binding::match_cast(var.clone(), value.clone(), sinfo))?;
                    var
                }
            };
            map.insert(old.clone(), Expr::var(&new));
            forward.push((new, value));
        }
        let target = match map.get(target).and_then(|e| e.as_var()) {
            Some(v) => v.clone(),
            None => {
                return Err(error(format!(
                    "the target `{}` is not bound in `{name}`",
                    target.name_hint()
                )))
            }
        };

        // What depends on a required parameter.
        let mut needs: HashSet<Var> = required.iter().map(|&i| params[i].clone()).collect();
        for (v, value) in &forward {
            if differentiable(v.struct_info()) && free_vars(value).iter().any(|u| needs.contains(u))
            {
                needs.insert(v.clone());
            }
        }

        // The backward sweep.
        let mut sweep = Sweep {
            bb: &mut bb,
            needs: &needs,
            contributions: HashMap::new(),
            fields: HashMap::new(),
        };
        if needs.contains(&target) {
            let seed = rules::ones(&[], target_dtype);
            sweep.contribute(&Expr::var(&target), seed)?;
        }
        for (v, value) in forward.iter().rev() {
            if !needs.contains(v) {
                continue;
            }
            let Some(adjoint) = sweep.adjoint_of(v)? else {
                continue;
            };
            sweep.propagate(v, value, adjoint)?;
        }
        let mut adjoints = Vec::new();
        for &i in &required {
            let p = &params[i];
            let cs = sweep.contributions.remove(p).unwrap_or_default();
            let value = if cs.is_empty() {
                let t = p.struct_info().and_then(|s| s.as_tensor());
                let (dims, dtype) = match t.and_then(|t| Some((t.shape_values()?, t.dtype))) {
                    Some(x) => x,
                    None => (&[][..], DataType::f32()),
                };
                rules::zeros(dims, dtype)
            } else {
                sweep.sum(cs)?
            };
            let name = format!("{}_adjoint", p.name_hint());
            adjoints.push(Expr::var(&sweep.bb.emit_output_named(value, &name)?));
        }
        bb.end_dataflow()?;
        let result = replace_vars(&seq.body, &map, &module)?;
        bb.emit_func_output(Expr::tuple(vec![result, Expr::tuple(adjoints)]))?;
        Ok(bb.get())
    }
}

/// Field `i` of a tuple's adjoint: the expression itself when it is a tuple
/// expression, else a projection of it.
fn adjoint_field(adjoint: &Expr, i: usize) -> Option<Expr> {
    match adjoint.kind() {
        ExprKind::Tuple(parts) => parts.get(i).cloned(),
        _ => Some(Expr::tuple_get_item(adjoint.clone(), i)),
    }
}

/// The state of the backward sweep.
struct Sweep<'a> {
    bb: &'a mut BlockBuilder,
    /// The variables that depend on a required parameter.
    needs: &'a HashSet<Var>,
    /// What the uses seen so far contribute to each tensor variable's
    /// adjoint.
    contributions: HashMap<Var, Vec<Expr>>,
    /// The same for each field of a tuple variable.
    fields: HashMap<(Var, usize), Vec<Expr>>,
}

impl Sweep<'_> {
    /// Records `adjoint` as a contribution to the adjoint of `to` (an
    /// argument of an op call): a variable that needs one, or a tuple
    /// expression of them.
    fn contribute(&mut self, to: &Expr, adjoint: Expr) -> Result<(), Error> {
        match to.kind() {
            ExprKind::Var(v) if self.needs.contains(v) => {
                match v.struct_info().and_then(|s| s.as_tuple()) {
                    None => self
                        .contributions
                        .entry(v.clone())
                        .or_default()
                        .push(adjoint),
                    Some(fields) => {
                        for i in 0..fields.len() {
                            let item = adjoint_field(&adjoint, i);
                            if let Some(item) = item {
                                self.fields.entry((v.clone(), i)).or_default().push(item);
                            }
                        }
                    }
                }
            }
            ExprKind::Tuple(fields) => {
                for (i, field) in fields.iter().enumerate() {
                    let item = adjoint_field(&adjoint, i);
                    if let Some(item) = item {
                        self.contribute(field, item)?;
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The sum of a tensor's contributions, an unemitted expression.
    fn sum(&mut self, mut cs: Vec<Expr>) -> Result<Expr, Error> {
        let mut acc = cs.remove(0);
        for c in cs {
            let a = rules::leaf(self.bb, acc)?;
            let c = rules::leaf(self.bb, c)?;
            acc = Expr::call_op("relax.add", vec![a, c], Default::default());
        }
        Ok(acc)
    }

    /// Binds `v_adjoint`, the sum of `v`'s contributions, or `None` when
    /// nothing `v` reaches needs it. A tuple's adjoint is a tuple
    /// expression of its fields' adjoints.
    fn adjoint_of(&mut self, v: &Var) -> Result<Option<Expr>, Error> {
        let name = format!("{}_adjoint", v.name_hint());
        let Some(fields) = v.struct_info().and_then(|s| s.as_tuple()) else {
            let Some(cs) = self.contributions.remove(v) else {
                return Ok(None);
            };
            let sum = self.sum(cs)?;
            return Ok(Some(Expr::var(&self.bb.emit_named(sum, &name)?)));
        };
        let of_fields: Vec<Option<Vec<Expr>>> = (0..fields.len())
            .map(|i| self.fields.remove(&(v.clone(), i)))
            .collect();
        if of_fields.iter().all(Option::is_none) {
            return Ok(None);
        }
        let mut parts = Vec::new();
        for (i, (field, cs)) in fields.iter().zip(of_fields).enumerate() {
            let part = match cs {
                Some(cs) => self.sum(cs)?,
                None => {
                    let t = field.as_tensor().filter(|t| t.dtype.is_float());
                    match t.and_then(|t| Some((t.shape_values()?, t.dtype))) {
                        Some((dims, dtype)) => rules::zeros(dims, dtype),
                        None => {
                            return Err(error(format!(
                                "field {i} of `{}` needs an adjoint, but it is {field} \
                                 (only float tensors of known shape are differentiated)",
                                v.name_hint()
                            )))
                        }
                    }
                }
            };
            let part_name = format!("{name}{i}");
            parts.push(Expr::var(&self.bb.emit_named(part, &part_name)?));
        }
        Ok(Some(Expr::tuple(parts)))
    }

    /// Passes `v`'s adjoint on to what `value` reads.
    fn propagate(&mut self, v: &Var, value: &Expr, adjoint: Expr) -> Result<(), Error> {
        match value.kind() {
            ExprKind::Var(_) | ExprKind::Tuple(_) => self.contribute(value, adjoint),
            ExprKind::TupleGetItem(tuple, index) => {
                let Some(t) = tuple.as_var().filter(|t| self.needs.contains(*t)) else {
                    return Ok(());
                };
                let n = t
                    .struct_info()
                    .and_then(|s| s.as_tuple())
                    .map_or(0, |f| f.len());
                if n == 0 || *index >= n {
                    return Err(error(format!(
                        "`{}` reads field {index} of `{}`, which is not a tuple with that field",
                        v.name_hint(),
                        t.name_hint()
                    )));
                }
                self.fields
                    .entry((t.clone(), *index))
                    .or_default()
                    .push(adjoint);
                Ok(())
            }
            ExprKind::Call(call) => {
                let op = value.call_op_name().ok_or_else(|| {
                    error(format!(
                        "`{}` is bound to a call of a function, which is not differentiated \
                         (inline it first)",
                        v.name_hint()
                    ))
                })?;
                let wanted: Vec<bool> = call.args.iter().map(|a| self.wants(a)).collect();
                let mut ctx = rules::Ctx {
                    bb: self.bb,
                    call,
                    op,
                    out: v,
                    adjoint,
                    wanted: &wanted,
                };
                let grads = rules::gradient(&mut ctx)?;
                for (arg, grad) in call.args.iter().zip(grads) {
                    if let Some(grad) = grad {
                        self.contribute(arg, grad)?;
                    }
                }
                Ok(())
            }
            ExprKind::Constant(_) | ExprKind::PrimValue(_) | ExprKind::ShapeExpr(_) => Ok(()),
            _ => Err(error(format!(
                "`{}` is bound to an expression Gradient does not differentiate: {value}",
                v.name_hint()
            ))),
        }
    }

    /// Whether an argument leads to a required parameter.
    fn wants(&self, arg: &Expr) -> bool {
        match arg.kind() {
            ExprKind::Var(v) => self.needs.contains(v),
            ExprKind::Tuple(fields) => fields.iter().any(|f| self.wants(f)),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests;
