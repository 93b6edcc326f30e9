//! `CanonicalizeBindings`: removes indirection between variables (TVM's
//! `relax.transform.CanonicalizeBindings`).
//!
//! 1. A binding of a variable to another (`y = x`) is removed and the uses
//!    of `y` read `x`, unless `y` is a dataflow block's output and `x` a
//!    dataflow variable (`x` could not be seen after the block).
//! 2. A `match_cast` whose value already has exactly the target StructInfo
//!    is such a binding too.
//! 3. A field of a tuple built in the same function (`t = (a, b); c = t[0]`)
//!    is the field itself (`c` becomes an alias of `a`, then rule 1).
//! 4. **Redundant symbolic variables.** A `match_cast` that defines a
//!    symbolic variable where its value's StructInfo already has a known
//!    expression (`z = R.match_cast(x, R.Tensor((o, p)))` with `x` of
//!    shape `(m, n)`) gives that variable nothing new: `o` is `m` and `p`
//!    is `n` throughout the function ([`BindSymbolicVars`]), after which
//!    the `match_cast` is trivial and rule 2 removes it (TVM's
//!    `test_replace_symbolic_variable_and_remove_match_cast`). A variable
//!    whose position in the value is unknown (`R.Tensor(ndim=2)`) stays,
//!    with its `match_cast` (TVM's `test_change_shape`).
//!
//! Bindings left unused are kept (`DeadCodeElimination` removes them).
//! Not done yet (TVM does it): turning block outputs that are used only
//! inside the block into dataflow variables.

use super::{BindSymbolicVars, Pass};
use crate::analysis::struct_info_analysis::{
    erase_to_well_defined, struct_info_base_check, BaseCheckResult,
};
use crate::arith::Analyzer;
use crate::ir::expr::{Binding, ExprKind, MatchCast, VarBinding};
use crate::ir::struct_info::StructInfoKind;
use crate::ir::{
    structural_equal, BaseFunc, Expr, Function, IRModule, PrimExpr, StructInfo, TirVar,
};
use crate::mutator::{mutate_module, ExprMutator, MutatorState};
use relax_runtime::Error;
use std::collections::{HashMap, HashSet};

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
                BaseFunc::Prim(_) => None,
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
        let mut m = Canonicalizer {
            state: MutatorState::with_module(&module),
        };
        let mut out = mutate_module(&mut m, &module)?;
        for gv in rebound {
            if let Some(f) = out.get_relax(gv.name_hint()).and_then(refined_result) {
                out.add(gv, f);
            }
        }
        Ok(out)
    }
}

/// Rule 4's last step: a result StructInfo that was erased because it
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

/// Rule 4: each symbolic variable a top-level `match_cast` of `func`
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

struct Canonicalizer {
    state: MutatorState,
}

impl Canonicalizer {
    /// Rule 3: the field a tuple get-item reads, when the tuple is known.
    fn known_field(&mut self, value: &Expr) -> Option<Expr> {
        let ExprKind::TupleGetItem(t, i) = value.kind() else {
            return None;
        };
        let tv = t.as_var()?;
        match self.lookup_binding(tv)?.kind() {
            ExprKind::Tuple(fields) => fields.get(*i).cloned(),
            _ => None,
        }
    }

    /// Rule 1: `var = value` folds away when `value` is a variable that
    /// may stand for `var` everywhere `var` is used.
    fn fold(&mut self, var: &crate::ir::expr::Var, value: &Expr) -> bool {
        let ExprKind::Var(target) = value.kind() else {
            return false;
        };
        if !var.is_dataflow() && target.is_dataflow() {
            return false;
        }
        self.var_remap().insert(var.clone(), target.clone());
        true
    }
}

impl ExprMutator for Canonicalizer {
    fn state(&mut self) -> &mut MutatorState {
        &mut self.state
    }

    fn visit_var_binding(&mut self, binding: &VarBinding) {
        let value = self.visit_expr(&binding.value);
        let value = self.known_field(&value).unwrap_or(value);
        if self.fold(&binding.var, &value) {
            return;
        }
        self.reemit_binding(binding, value);
    }

    fn visit_match_cast(&mut self, binding: &MatchCast) {
        let value = self.visit_expr(&binding.value);
        let same = value
            .struct_info()
            .is_some_and(|s| structural_equal(s, &binding.struct_info));
        if same && self.fold(&binding.var, &value) {
            return;
        }
        // Re-emitted as the default mutator does, with the visited value.
        let value = self.normalize_argument(value);
        let var = self.visit_var_def(&binding.var);
        let out = Binding::match_cast(var, value, binding.struct_info.clone());
        if let Err(e) = self.builder().emit_normalized(out) {
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
    /// `CanonicalizeBindings::default()` gives TVM's module, structurally
    /// equal with attributes, on the cases of `SAME`.
    #[test]
    fn canonicalize_bindings_matches_tvm_0_27() {
        const SAME: &[&str] = &[
            "test_assign_to_output_in_dataflow_block",
            "test_canonicalize_trivial_var_binding_inside_dataflow_block",
            "test_canonicalize_with_updated_ty",
            "test_change_shape",
            "test_match_cast",
            "test_ops",
            "test_replace_symbolic_variable_and_remove_match_cast",
            "test_replace_symbolic_variable_and_remove_match_cast_of_tuple",
            "test_same_shape",
            "test_simple_assignments",
            "test_trace_partial_tuple_through_round_trip",
            "test_unwrap_tuple",
        ];
        const DIFFERENT: &[(&str, &str)] = &[
            ("test_basic_folding_example", "at function main / block 0 / number of bindings: lhs is 2, rhs is 1"),
            ("test_canonicalization_causes_ty_update", "at function transform_params / block 0 / number of bindings: lhs is 2, rhs is 1"),
            ("test_canonicalize_across_non_dataflow_tuple", "at function main / block 0 / binding 1 / var: lhs is Var z, rhs is DataflowVar z"),
            ("test_canonicalize_inside_branches", "at function main / block 1 / binding 0 / value / true branch / block 0 / binding 0 / va..."),
            ("test_canonicalize_multiple_trivial_binding_to_dataflow_var", "at function main / block 0 / number of bindings: lhs is 3, rhs is 1"),
            ("test_canonicalize_trivial_binding_to_dataflow_var", "at function main / block 0 / number of bindings: lhs is 2, rhs is 1"),
            ("test_canonicalize_var_to_dataflow_var_if_legal", "at function main / block 0 / binding 0 / var: lhs is Var y, rhs is DataflowVar y"),
            ("test_canonicalize_var_to_dataflow_with_trivial_binding", "at function main / block 0 / binding 0 / var: lhs is Var gv1, rhs is DataflowVar gv1"),
            ("test_dataflow_block", "at function main / block 0 / number of bindings: lhs is 2, rhs is 1"),
            ("test_fold_const_to_output", "at function main / result: lhs is Var n, rhs is Constant int32 ()"),
            ("test_fold_match_cast", "at function main / block 0 / number of bindings: lhs is 2, rhs is 1"),
            ("test_fold_variables_from_match_cast", "at function main / block 0 / number of bindings: lhs is 4, rhs is 6"),
            ("test_inner_function", "before does not parse: expected a relax operator, found unknown `R.print`"),
            ("test_match_cast_may_have_distinct_values_in_branches", "before does not parse: multiply: scale must be a tensor, found R.Prim(\"float32\")"),
            ("test_multiple_outputs", "at function main / block 0 / number of bindings: lhs is 6, rhs is 3"),
            ("test_replace_var_with_dataflow_if_all_usage_within_dataflow_block", "at function main / block 0 / number of bindings: lhs is 3, rhs is 2"),
            ("test_single_output_multiple_nondataflow", "at function main / block 0 / number of bindings: lhs is 6, rhs is 3"),
            ("test_trace_tuple_through_round_trip", "at function main / block 0 / number of bindings: lhs is 4, rhs is 3"),
            ("test_trivial_binding_of_replaced_non_dataflow_var", "at function main / block 0 / binding 0 / var: lhs is Var A, rhs is DataflowVar A"),
            ("test_unwrap_tuple_of_constant", "at function main / block 0 / binding 1 / value: lhs is Constant int64 (), rhs is TupleG..."),
            ("test_update_dataflow_computations_if_var_replacement_occurs", "at function main / block 0 / number of bindings: lhs is 3, rhs is 2"),
            ("test_update_dataflow_computations_if_var_replacement_occurs_after_usage", "at function main / block 0 / number of bindings: lhs is 3, rhs is 2"),
            ("test_var_used_in_distinct_df_blocks", "before does not parse: expected a relax operator, found unknown `R.print`"),
        ];
        crate::transform::test_util::assert_tvm_cases(
            "canonicalize_bindings",
            &CanonicalizeBindings::default(),
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

    #[test]
    fn dataflow_aliases_fold_but_an_output_keeps_its_dataflow_source() {
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
            lv1 = R.add(x, x)
            gv = lv1
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
