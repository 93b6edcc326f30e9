//! `CanonicalizeBindings`: removes indirection between variables (TVM's
//! `relax.transform.CanonicalizeBindings`).
//!
//! 1. A `Var` defined in a dataflow block and used only there becomes a
//!    `DataflowVar`.
//! 2. A variable bound to a constant is the constant at its uses.
//! 3. A binding of a variable to another (`y = x`) is removed and the uses
//!    of `y` read `x` (through chains), except when `y` is a `Var` used
//!    after its dataflow block and `x` a `DataflowVar`: then `x`'s binding
//!    defines `y` instead, and `x`'s uses read `y`.
//! 4. A `match_cast` whose value already has exactly the target StructInfo
//!    is such a binding too; so is a field of a tuple built in the same
//!    function (`t = (a, b); c = t[0]` makes `c` an alias of `a`), and a
//!    tuple of all the fields of an earlier tuple, in order.
//! 5. **Redundant symbolic variables.** A `match_cast` that defines a
//!    symbolic variable where its value's StructInfo already has a known
//!    expression (`z = R.match_cast(x, R.Tensor((o, p)))` with `x` of
//!    shape `(m, n)`) gives that variable nothing new: `o` is `m` and `p`
//!    is `n` throughout the function ([`BindSymbolicVars`]), after which
//!    the `match_cast` is trivial and rule 4 removes it (TVM's
//!    `test_replace_symbolic_variable_and_remove_match_cast`). A variable
//!    whose position in the value is unknown (`R.Tensor(ndim=2)`) stays,
//!    with its `match_cast` (TVM's `test_change_shape`).
//! 6. In a dataflow block, an output bound to a dataflow variable that
//!    nothing else reads takes that variable's value, and the variable's
//!    binding goes.
//!
//! Rules 1 to 4 are planned on the whole function first (`plan.rs`, TVM's
//! `CanonicalizePlanner`), then applied. Bindings left unused are kept
//! (`DeadCodeElimination` removes them). The pass is TVM 0.27's: TVM's own
//! test cases are checked in `canonicalize_bindings_matches_tvm_0_27`.

use super::{BindSymbolicVars, Pass};
use crate::analysis::struct_info_analysis::{
    erase_to_well_defined, struct_info_base_check, BaseCheckResult,
};
use crate::analysis::vars::free_vars;
use crate::arith::Analyzer;
use crate::ir::expr::{Binding, BindingBlock, Var};
use crate::ir::struct_info::StructInfoKind;
use crate::ir::{
    structural_equal, BaseFunc, Expr, Function, IRModule, PrimExpr, StructInfo, TirVar,
};
use crate::mutator::{mutate_module, ExprMutator, MutatorState};
use relax_runtime::Error;
use std::collections::{HashMap, HashSet};

mod plan;
use plan::Plan;

/// The pass. See the module docs.
#[derive(Clone, Copy, Debug, Default)]
pub struct CanonicalizeBindings;

impl Pass for CanonicalizeBindings {
    fn name(&self) -> &str {
        "CanonicalizeBindings"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        let mut module = module;
        let relax: Vec<_> = module
            .functions()
            .filter_map(|(gv, f)| match f {
                BaseFunc::Relax(func) => Some((gv.clone(), func.clone())),
                BaseFunc::Prim(_) | BaseFunc::Extern(_) => None,
            })
            .collect();
        let mut rebound = Vec::new();
        for (gv, func) in relax {
            let redundant = redundant_symbolic_vars(&func);
            if redundant.is_empty() {
                continue;
            }
            if let Some(new) = BindSymbolicVars::new(redundant).bind_function(&func)? {
                module.add(gv.clone(), new);
                rebound.push(gv);
            }
        }
        let mut plan = Plan::default();
        for (_, f) in module.functions() {
            if let BaseFunc::Relax(func) = f {
                let p = Plan::of(func);
                plan.replace_usage.extend(p.replace_usage);
                plan.replace_binding.extend(p.replace_binding);
                plan.remove.extend(p.remove);
                plan.inline_constant.extend(p.inline_constant);
            }
        }
        let mut m = Canonicalizer {
            state: MutatorState::with_module(&module),
            plan,
        };
        let out = mutate_module(&mut m, &module)?;
        let mut m = DataflowOutputs {
            state: MutatorState::with_module(&out),
        };
        let mut out = mutate_module(&mut m, &out)?;
        for gv in rebound {
            if let Some(f) = out.get_relax(gv.name_hint()).and_then(refined_result) {
                out.add(gv, f);
            }
        }
        Ok(out)
    }
}

/// Rule 5's last step: a result StructInfo that was erased because it
/// mentioned a replaced variable (`R.Tensor(ndim=2)` for `(o, p)`) is the
/// body's, now in the parameters' variables (`R.Tensor((m, n))`), as TVM's
/// parser derives it for the expected module.
fn refined_result(func: &Function) -> Option<Function> {
    let body = func.body.struct_info()?;
    let defined: HashSet<TirVar> = func
        .params
        .iter()
        .filter_map(|p| p.struct_info())
        .flat_map(|s| s.definable_tir_vars())
        .collect();
    let derived = erase_to_well_defined(body, &HashMap::new(), &HashMap::new(), &|v| {
        defined.contains(v)
    });
    let mut analyzer = Analyzer::new();
    for v in &defined {
        analyzer.mark_non_negative(v);
    }
    let refines =
        struct_info_base_check(&func.ret_struct_info, &derived, &analyzer) == BaseCheckResult::Pass;
    if !refines || structural_equal(&derived, &func.ret_struct_info) {
        return None;
    }
    Some(Function {
        ret_struct_info: derived,
        ..func.clone()
    })
}

/// Rule 5: each symbolic variable a top-level `match_cast` of `func`
/// defines where its value's StructInfo has a known expression in
/// variables defined before, with that expression; in binding order.
fn redundant_symbolic_vars(func: &Function) -> Vec<(TirVar, PrimExpr)> {
    let mut defined: HashSet<TirVar> = func
        .params
        .iter()
        .filter_map(|p| p.struct_info())
        .flat_map(|s| s.definable_tir_vars())
        .collect();
    let mut out = Vec::new();
    let Some(seq) = func.body.as_seq() else {
        return out;
    };
    for b in seq.blocks.iter().flat_map(|b| &b.bindings) {
        let Binding::MatchCast(mc) = b else { continue };
        let Some(value) = mc.value.struct_info() else {
            continue;
        };
        let new: HashSet<TirVar> = mc
            .struct_info
            .definable_tir_vars()
            .into_iter()
            .filter(|v| !defined.contains(v))
            .collect();
        let mut found = Vec::new();
        known_values(&mc.struct_info, value, &new, &mut found);
        for (v, e) in found {
            let known = e.free_vars().iter().all(|u| defined.contains(u));
            if known && !out.iter().any(|(w, _): &(TirVar, PrimExpr)| *w == v) {
                out.push((v, e));
            }
        }
        defined.extend(new);
    }
    out
}

/// The pairs (variable of `new` standing alone in `target`, the expression
/// at the same position of `value`).
fn known_values(
    target: &StructInfo,
    value: &StructInfo,
    new: &HashSet<TirVar>,
    out: &mut Vec<(TirVar, PrimExpr)>,
) {
    let mut pair = |t: &[PrimExpr], v: &[PrimExpr]| {
        if t.len() != v.len() {
            return;
        }
        for (t, v) in t.iter().zip(v) {
            if let Some(var) = t.as_var() {
                if new.contains(var) && !out.iter().any(|(w, _)| w == var) {
                    out.push((var.clone(), v.clone()));
                }
            }
        }
    };
    match (target.kind(), value.kind()) {
        (StructInfoKind::Tensor(t), StructInfoKind::Tensor(v)) => {
            if let (Some(t), Some(v)) = (t.shape_values(), v.shape_values()) {
                pair(t, v);
            }
        }
        (StructInfoKind::Shape(t), StructInfoKind::Shape(v)) => {
            if let (Some(t), Some(v)) = (&t.values, &v.values) {
                pair(t, v);
            }
        }
        (StructInfoKind::Prim(t), StructInfoKind::Prim(v)) => {
            if let (Some(t), Some(v)) = (&t.value, &v.value) {
                pair(std::slice::from_ref(t), std::slice::from_ref(v));
            }
        }
        (StructInfoKind::Tuple(t), StructInfoKind::Tuple(v)) if t.len() == v.len() => {
            for (t, v) in t.iter().zip(v) {
                known_values(t, v, new, out);
            }
        }
        _ => {}
    }
}

/// Applies the [`Plan`] of every function (TVM's `BindingCanonicalizer`).
struct Canonicalizer {
    state: MutatorState,
    plan: Plan,
}

impl Canonicalizer {
    /// `var` followed through `map`.
    fn follow(map: &HashMap<Var, Var>, var: &Var) -> Var {
        let mut v = var.clone();
        let mut steps = 0;
        while let Some(next) = map.get(&v) {
            if steps > map.len() {
                break;
            }
            v = next.clone();
            steps += 1;
        }
        v
    }
}

impl ExprMutator for Canonicalizer {
    fn state(&mut self) -> &mut MutatorState {
        &mut self.state
    }

    fn visit_binding(&mut self, binding: &Binding) {
        if self.plan.remove.contains(binding.var()) {
            return;
        }
        match binding {
            Binding::VarBinding(b) => self.visit_var_binding(b),
            Binding::MatchCast(b) => self.visit_match_cast(b),
        }
    }

    fn visit_var_def(&mut self, var: &Var) -> Var {
        Self::follow(&self.plan.replace_binding, var)
    }

    fn visit_var(&mut self, expr: &Expr, var: &Var) -> Expr {
        let new = Self::follow(&self.plan.replace_usage, var);
        if let Some(c) = self.plan.inline_constant.get(&new) {
            return c.clone();
        }
        match self.var_remap().get(&new) {
            Some(v) => Expr::var(v),
            None if new == *var => expr.clone(),
            None => Expr::var(&new),
        }
    }
}

/// Rule 6, on each dataflow block (TVM's `BindingCanonicalizer`'s last
/// step): an output bound to a dataflow variable that nothing else reads
/// takes that variable's value, and the variable's binding goes.
struct DataflowOutputs {
    state: MutatorState,
}

impl ExprMutator for DataflowOutputs {
    fn state(&mut self) -> &mut MutatorState {
        &mut self.state
    }

    fn visit_dataflow_block(&mut self, block: &BindingBlock) {
        let mut disqualified: HashSet<Var> = HashSet::new();
        let mut outputs: HashSet<Var> = HashSet::new();
        let mut candidates: HashMap<Var, Expr> = HashMap::new();
        for b in block.bindings.iter().rev() {
            let (var, value) = (b.var(), b.value());
            let dataflow_vars = || free_vars(value).into_iter().filter(Var::is_dataflow);
            if var.is_dataflow() {
                disqualified.extend(dataflow_vars());
                if !disqualified.contains(var) && outputs.contains(var) {
                    candidates.insert(var.clone(), value.clone());
                }
            } else if let Some(rhs) = value.as_var().filter(|v| v.is_dataflow()) {
                if !outputs.insert(rhs.clone()) {
                    disqualified.insert(rhs.clone());
                }
            } else {
                disqualified.extend(dataflow_vars());
            }
        }
        if let Err(e) = self.builder().begin_dataflow() {
            self.builder().report(e);
        }
        for b in &block.bindings {
            let var = b.var();
            if var.is_dataflow() && candidates.contains_key(var) {
                continue;
            }
            let replaced = b
                .value()
                .as_var()
                .filter(|_| !var.is_dataflow())
                .and_then(|v| candidates.get(v));
            match (replaced, b) {
                (Some(value), Binding::VarBinding(_)) => {
                    let out = Binding::var_binding(var.clone(), value.clone());
                    if let Err(e) = self.builder().emit_normalized(out) {
                        self.builder().report(e);
                    }
                }
                (Some(value), Binding::MatchCast(mc)) => {
                    let out =
                        Binding::match_cast(var.clone(), value.clone(), mc.struct_info.clone());
                    if let Err(e) = self.builder().emit_normalized(out) {
                        self.builder().report(e);
                    }
                }
                (None, _) => self.visit_binding(b),
            }
        }
        if let Err(e) = self.builder().end_dataflow() {
            self.builder().report(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::structural_equal_report;

    fn check(before: &str, expected: &str) {
        let before: IRModule = before.parse().unwrap_or_else(|e| panic!("{e}"));
        let expected: IRModule = expected.parse().unwrap_or_else(|e| panic!("{e}"));
        let after = CanonicalizeBindings.run(before).unwrap();
        crate::analysis::well_formed(&after).unwrap_or_else(|e| panic!("{e:?}\n{after}"));
        if let Err(e) = structural_equal_report(&after, &expected) {
            panic!("{e}\n{after}");
        }
    }

    /// TVM's own test cases (`test_transform_canonicalize_bindings.py`, run
    /// through TVM 0.27 by `scripts/tvm_pass_fixtures.py`):
    /// `CanonicalizeBindings` gives TVM's module, structurally
    /// equal with attributes, on the cases of `SAME`.
    #[test]
    fn canonicalize_bindings_matches_tvm_0_27() {
        const SAME: &[&str] = &[
            "test_assign_to_output_in_dataflow_block",
            "test_basic_folding_example",
            "test_canonicalization_causes_ty_update",
            "test_canonicalize_across_non_dataflow_tuple",
            "test_canonicalize_inside_branches",
            "test_canonicalize_multiple_trivial_binding_to_dataflow_var",
            "test_canonicalize_trivial_binding_to_dataflow_var",
            "test_canonicalize_trivial_var_binding_inside_dataflow_block",
            "test_canonicalize_var_to_dataflow_var_if_legal",
            "test_canonicalize_var_to_dataflow_with_trivial_binding",
            "test_canonicalize_with_updated_ty",
            "test_change_shape",
            "test_dataflow_block",
            "test_fold_const_to_output",
            "test_fold_match_cast",
            "test_inner_function",
            "test_match_cast",
            "test_multiple_outputs",
            "test_ops",
            "test_replace_symbolic_variable_and_remove_match_cast",
            "test_replace_symbolic_variable_and_remove_match_cast_of_tuple",
            "test_replace_var_with_dataflow_if_all_usage_within_dataflow_block",
            "test_same_shape",
            "test_simple_assignments",
            "test_single_output_multiple_nondataflow",
            "test_trace_partial_tuple_through_round_trip",
            "test_trace_tuple_through_round_trip",
            "test_trivial_binding_of_replaced_non_dataflow_var",
            "test_unwrap_tuple",
            "test_unwrap_tuple_of_constant",
            "test_update_dataflow_computations_if_var_replacement_occurs",
            "test_update_dataflow_computations_if_var_replacement_occurs_after_usage",
            "test_var_used_in_distinct_df_blocks",
        ];
        const DIFFERENT: &[(&str, &str)] = &[
            ("test_fold_variables_from_match_cast", "at function main / block 0 / number of bindings: lhs is 4, rhs is 6"),
            ("test_match_cast_may_have_distinct_values_in_branches", "at function main / ret_struct_info: lhs is R.Tensor(dtype=\"float32\", ndim=1), rhs is R.Tensor((M,), dtype=\"float32\")"),
        ];
        crate::transform::test_util::assert_tvm_cases(
            "canonicalize_bindings",
            &CanonicalizeBindings,
            SAME,
            DIFFERENT,
        );
    }

    #[test]
    fn simple_aliases_fold_away() {
        check(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        y = x
        z = y
        w = R.add(z, y)
        return w
"#,
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        w = R.add(x, x)
        return w
"#,
        );
    }

    /// The output `gv` aliases a dataflow variable (through `lv2`): the
    /// binding of `lv1` defines `gv` instead (rule 3), as in TVM.
    #[test]
    fn dataflow_aliases_fold_and_an_output_takes_its_source_binding() {
        check(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        with R.dataflow():
            lv = x
            lv1 = R.add(lv, lv)
            lv2 = lv1
            gv = lv2
            R.output(gv)
        return gv
"#,
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        with R.dataflow():
            gv = R.add(x, x)
            R.output(gv)
        return gv
"#,
        );
    }

    #[test]
    fn known_tuple_fields_and_redundant_match_casts() {
        check(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32"), y: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        t = (x, y)
        a = t[1]
        b = R.match_cast(a, R.Tensor((4,), dtype="float32"))
        c = R.add(b, x)
        return c
"#,
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32"), y: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        t = (x, y)
        c = R.add(y, x)
        return c
"#,
        );
    }

    /// TVM's `test_change_shape`: the input's shape is unknown, so `o` and
    /// `p` cannot be expressed in earlier variables and the `match_cast`
    /// stays; only the aliases fold.
    #[test]
    fn a_match_cast_defining_new_dims_of_an_unknown_shape_stays() {
        check(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(ndim=2)):
        y = x
        o = T.int64()
        p = T.int64()
        z = R.match_cast(x, R.Tensor((o, p)))
        w = z
        q = R.add(w, y)
        return R.add(q, w)
"#,
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(ndim=2)):
        o = T.int64()
        p = T.int64()
        z = R.match_cast(x, R.Tensor((o, p)))
        q = R.add(z, x)
        return R.add(q, z)
"#,
        );
    }

    /// TVM's `test_replace_symbolic_variable_and_remove_match_cast`: `o`
    /// and `p` are `m` and `n`; replaced, the `match_cast` is trivial and
    /// goes.
    #[test]
    fn redundant_symbolic_vars_of_a_match_cast_are_replaced_and_it_goes() {
        check(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("m", "n"))):
        y = x
        o = T.int64()
        p = T.int64()
        z = R.match_cast(x, R.Tensor((o, p)))
        w = z
        q = R.add(w, y)
        return R.add(q, w)
"#,
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("m", "n"))):
        m = T.int64()
        n = T.int64()
        q: R.Tensor((m, n)) = R.add(x, x)
        return R.add(q, x)
"#,
        );
    }

    /// TVM's `test_replace_symbolic_variable_and_remove_match_cast_of_tuple`,
    /// with the tuple fields bound to variables (this crate's normal form
    /// binds a `TupleGetItem` argument that a rewritten call takes; TVM's
    /// keeps `R.add(x[0], x[0])`).
    #[test]
    fn redundant_symbolic_vars_of_a_tuple_match_cast_are_replaced() {
        check(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tuple(R.Tensor(("m", "n")))):
        y = x
        o = T.int64()
        p = T.int64()
        z = R.match_cast(x, R.Tuple(R.Tensor((o, p))))
        w = z
        a = w[0]
        b = y[0]
        q = R.add(a, b)
        return R.add(q, a)
"#,
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tuple(R.Tensor(("m", "n")))):
        a = x[0]
        b = x[0]
        q = R.add(a, b)
        return R.add(q, a)
"#,
        );
    }

    /// A dim known as a constant: `k` is 8, and an annotation written in
    /// `k` (the result's) follows.
    #[test]
    fn a_match_cast_to_a_constant_dim_is_replaced_in_annotations() {
        check(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((8,), dtype="float32")) -> R.Tensor((8,), dtype="float32"):
        k = T.int64()
        z = R.match_cast(x, R.Tensor((k,), dtype="float32"))
        q: R.Tensor((k,), dtype="float32") = R.add(z, z)
        return q
"#,
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((8,), dtype="float32")) -> R.Tensor((8,), dtype="float32"):
        q: R.Tensor((8,), dtype="float32") = R.add(x, x)
        return q
"#,
        );
    }
}
