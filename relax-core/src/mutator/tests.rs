//! Tests of the mutator: the seed's EwiseFMARewriter, 1 → n and n → 1 rewrites,
//! remapping, and error collection.

use super::*;
use crate::ir::{Attrs, PrimExpr, StructInfo};
use relax_runtime::DataType;

fn t34() -> StructInfo {
    StructInfo::tensor(vec![PrimExpr::int(3), PrimExpr::int(4)], DataType::f32())
}

fn call(op: &str, args: Vec<Expr>) -> Expr {
    crate::op::lookup(op)
        .unwrap()
        .call(args, &Attrs::new())
        .unwrap()
}

/// The seed's MyModule: `lv0 = multiply(x, y); gv0 = add(lv0, y)`.
fn my_module() -> IRModule {
    let x = Var::new("x", Some(t34()));
    let y = Var::new("y", Some(t34()));
    let mut bb = BlockBuilder::new();
    bb.function("main", vec![x.clone(), y.clone()], |bb| {
        bb.dataflow(|bb| {
            let lv0 = bb.emit_named(
                call("relax.multiply", vec![x.to_expr(), y.to_expr()]),
                "lv0",
            )?;
            let gv0 = bb.emit_output(call("relax.add", vec![lv0.to_expr(), y.to_expr()]))?;
            Ok(gv0.to_expr())
        })
    })
    .unwrap();
    bb.finalize().unwrap()
}

/// The seed's EwiseFMARewriter (MLC chapter 7.3).
struct EwiseFmaRewriter(MutatorState);

impl ExprMutator for EwiseFmaRewriter {
    fn state(&mut self) -> &mut crate::mutator::MutatorState {
        &mut self.0
    }
    fn visit_call(&mut self, expr: &Expr, _: &Call) -> Expr {
        let call = self.visit_expr_post_order(expr);
        if call.call_op_name() != Some("relax.add") {
            return call;
        }
        let args = &call.as_call().unwrap().args;
        let Some(value) = args[0].as_var().and_then(|v| self.lookup_binding(v)) else {
            return call;
        };
        if value.call_op_name() != Some("relax.multiply") {
            return call;
        }
        let m = &value.as_call().unwrap().args;
        Expr::call_op(
            "relax.ewise_fma",
            vec![m[0].clone(), m[1].clone(), args[1].clone()],
            Attrs::new(),
        )
    }
}

fn bindings_text(f: &Function) -> Vec<String> {
    let seq = f.body.as_seq().unwrap();
    seq.blocks
        .iter()
        .flat_map(|b| &b.bindings)
        .map(|b| {
            let c = b.value().as_call().unwrap();
            let args: Vec<_> = c
                .args
                .iter()
                .map(|a| a.as_var().unwrap().name_hint().to_string())
                .collect();
            format!(
                "{} = {}({})",
                b.var().name_hint(),
                b.value().call_op_name().unwrap(),
                args.join(", ")
            )
        })
        .collect()
}

#[test]
fn ewise_fma_rewriter_then_remove_all_unused() {
    let m = my_module();
    let mut r = EwiseFmaRewriter(MutatorState::with_module(&m));
    let out = mutate_module(&mut r, &m).unwrap();
    let f = out.get_relax("main").unwrap();
    assert_eq!(
        bindings_text(f),
        [
            "lv0 = relax.multiply(x, y)",
            "gv = relax.ewise_fma(x, y, y)"
        ]
    );
    let cleaned = remove_all_unused(f);
    assert_eq!(bindings_text(&cleaned), ["gv = relax.ewise_fma(x, y, y)"]);
    assert!(
        crate::analysis::well_formed(&out.with_function(GlobalVar::new("main"), cleaned)).is_ok()
    );
}

#[test]
fn the_graph_helper_does_the_same_rewrite() {
    let m = my_module();
    let out = rewrite_dataflow_bindings(&m, |_, value, graph| {
        if value.call_op_name() != Some("relax.add") {
            return None;
        }
        let args = &value.as_call()?.args;
        let mul = graph.producer(&args[0])?;
        if mul.call_op_name() != Some("relax.multiply") {
            return None;
        }
        let m = &mul.as_call()?.args;
        Some(Expr::call_op(
            "relax.ewise_fma",
            vec![m[0].clone(), m[1].clone(), args[1].clone()],
            Attrs::new(),
        ))
    })
    .unwrap();
    assert_eq!(
        bindings_text(out.get_relax("main").unwrap()),
        ["gv = relax.ewise_fma(x, y, y)"]
    );
}

/// Rewrites `nn.silu(x)` into `x * sigmoid(x)`: one binding becomes two.
struct ExpandSilu(MutatorState);

impl ExprMutator for ExpandSilu {
    fn state(&mut self) -> &mut crate::mutator::MutatorState {
        &mut self.0
    }
    fn visit_call(&mut self, expr: &Expr, _: &Call) -> Expr {
        let call = self.visit_expr_post_order(expr);
        if call.call_op_name() != Some("relax.nn.silu") {
            return call;
        }
        let x = call.as_call().unwrap().args[0].clone();
        Expr::call_op(
            "relax.multiply",
            vec![x.clone(), call_sigmoid(x)],
            Attrs::new(),
        )
    }
}

fn call_sigmoid(x: Expr) -> Expr {
    Expr::call_op("relax.sigmoid", vec![x], Attrs::new())
}

#[test]
fn one_binding_becomes_two_in_normal_form() {
    let x = Var::new("x", Some(t34()));
    let mut bb = BlockBuilder::new();
    bb.function("main", vec![x.clone()], |bb| {
        bb.dataflow(|bb| {
            let lv = bb.emit(call("relax.nn.silu", vec![x.to_expr()]))?;
            Ok(bb.emit_output(lv)?.to_expr())
        })
    })
    .unwrap();
    let m = bb.finalize().unwrap();
    let out = mutate_module(&mut ExpandSilu(MutatorState::with_module(&m)), &m).unwrap();
    let f = out.get_relax("main").unwrap();
    let text = bindings_text_loose(f);
    assert_eq!(
        text,
        ["relax.sigmoid", "relax.multiply", "-"],
        "the sigmoid is bound before the multiply"
    );
    assert!(
        crate::analysis::well_formed(&out).is_ok(),
        "{:?}",
        crate::analysis::well_formed(&out)
    );
}

fn bindings_text_loose(f: &Function) -> Vec<String> {
    let seq = f.body.as_seq().unwrap();
    seq.blocks
        .iter()
        .flat_map(|b| &b.bindings)
        .map(|b| b.value().call_op_name().unwrap_or("-").to_string())
        .collect()
}

/// Replaces `exp(x)` by `sum(x)`: the StructInfo changes, so the variable is
/// replaced and its later uses are remapped.
struct ExpToSum(MutatorState);

impl ExprMutator for ExpToSum {
    fn state(&mut self) -> &mut crate::mutator::MutatorState {
        &mut self.0
    }
    fn visit_call(&mut self, expr: &Expr, _: &Call) -> Expr {
        let call = self.visit_expr_post_order(expr);
        if call.call_op_name() != Some("relax.exp") {
            return call;
        }
        let x = call.as_call().unwrap().args[0].clone();
        crate::op::lookup("relax.sum")
            .unwrap()
            .call(vec![x], &Attrs::new())
            .unwrap()
    }
}

#[test]
fn changed_struct_info_remaps_later_uses() {
    let x = Var::new("x", Some(t34()));
    let mut bb = BlockBuilder::new();
    bb.function("main", vec![x.clone()], |bb| {
        bb.dataflow(|bb| {
            let lv = bb.emit(call("relax.exp", vec![x.to_expr()]))?;
            let lv1 = bb.emit(call("relax.negative", vec![lv.to_expr()]))?;
            Ok(bb.emit_output(lv1)?.to_expr())
        })
    })
    .unwrap();
    let m = bb.finalize().unwrap();
    let out = mutate_module(&mut ExpToSum(MutatorState::with_module(&m)), &m).unwrap();
    let f = out.get_relax("main").unwrap();
    let bindings: Vec<_> = f.body.as_seq().unwrap().blocks[0].bindings.clone();
    let scalar = "R.Tensor((), dtype=\"float32\")";
    assert_eq!(bindings[0].var().struct_info().unwrap().to_string(), scalar);
    let neg_arg = bindings[1].value().as_call().unwrap().args[0]
        .as_var()
        .unwrap()
        .clone();
    assert_eq!(
        &neg_arg,
        bindings[0].var(),
        "the use is remapped to the new variable"
    );
    assert_eq!(bindings[1].var().struct_info().unwrap().to_string(), scalar);
    assert!(
        crate::analysis::well_formed(&out).is_ok(),
        "{:?}",
        crate::analysis::well_formed(&out)
    );
}

/// A rewrite that produces an ill-shaped call is an error, not a panic.
struct BadRewrite(MutatorState);

impl ExprMutator for BadRewrite {
    fn state(&mut self) -> &mut crate::mutator::MutatorState {
        &mut self.0
    }
    fn visit_call(&mut self, expr: &Expr, _: &Call) -> Expr {
        let call = self.visit_expr_post_order(expr);
        let x = call.as_call().unwrap().args[0].clone();
        Expr::call_op("relax.matmul", vec![x.clone(), x], Attrs::new())
    }
}

#[test]
fn bad_rewrites_are_reported_together() {
    let m = my_module();
    let err = mutate_module(&mut BadRewrite(MutatorState::with_module(&m)), &m).unwrap_err();
    let Error::Compile(ds) = err else {
        panic!("expected compile errors")
    };
    assert_eq!(ds.len(), 2, "both bindings are reported: {ds:?}");
    assert!(
        ds[0].message.contains("matmul: inner dimensions differ"),
        "{}",
        ds[0].message
    );
}
