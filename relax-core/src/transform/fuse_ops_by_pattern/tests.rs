//! FuseOpsByPattern, and the seed's `MatmulAddFusor` (§7.4) written as the
//! seed writes it: both give the seed's module.

use super::*;
use crate::block_builder::BlockBuilder;
use crate::dpl::{is_op, wildcard};
use crate::ir::expr::{Call, Var};
use crate::ir::{structural_equal_report, Attrs, Expr, Function, StructInfo};
use crate::mutator::{remove_all_unused, ExprMutator, MutatorState};

/// The seed's MLP (its constants as parameters: the listing omits them).
const MLP: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 784), dtype="float32"), w0: R.Tensor((128, 784), dtype="float32"), b0: R.Tensor((128,), dtype="float32"), w1: R.Tensor((10, 128), dtype="float32"), b1: R.Tensor((10,), dtype="float32")) -> R.Tensor((1, 10), dtype="float32"):
        with R.dataflow():
            lv = R.permute_dims(w0)
            lv1 = R.matmul(x, lv)
            lv2 = R.add(lv1, b0)
            lv3 = R.nn.relu(lv2)
            lv4 = R.permute_dims(w1)
            lv5 = R.matmul(lv3, lv4)
            lv6 = R.add(lv5, b1)
            gv = lv6
            R.output(gv)
        return gv
"#;

/// The seed's printed result, with `{attrs}` for the fused functions'
/// attributes and `{n0}`/`{n1}` for their names.
fn seed_listing(n0: &str, n1: &str, attrs: &str, private: &str) -> String {
    format!(
        r#"
@I.ir_module
class Module:
    @R.function{private}
    def {n0}(x: R.Tensor((1, 784), dtype="float32"), w: R.Tensor((784, 128), dtype="float32"), b: R.Tensor((128,), dtype="float32")) -> R.Tensor((1, 128), dtype="float32"):
        R.func_attr({attrs})
        with R.dataflow():
            lv: R.Tensor((1, 128), dtype="float32") = R.matmul(x, w, out_dtype="void")
            gv: R.Tensor((1, 128), dtype="float32") = R.add(lv, b)
            R.output(gv)
        return gv

    @R.function{private}
    def {n1}(x: R.Tensor((1, 128), dtype="float32"), w: R.Tensor((128, 10), dtype="float32"), b: R.Tensor((10,), dtype="float32")) -> R.Tensor((1, 10), dtype="float32"):
        R.func_attr({attrs})
        with R.dataflow():
            lv: R.Tensor((1, 10), dtype="float32") = R.matmul(x, w, out_dtype="void")
            gv: R.Tensor((1, 10), dtype="float32") = R.add(lv, b)
            R.output(gv)
        return gv

    @R.function
    def main(x: R.Tensor((1, 784), dtype="float32"), w0: R.Tensor((128, 784), dtype="float32"), b0: R.Tensor((128,), dtype="float32"), w1: R.Tensor((10, 128), dtype="float32"), b1: R.Tensor((10,), dtype="float32")) -> R.Tensor((1, 10), dtype="float32"):
        cls = Module
        with R.dataflow():
            lv: R.Tensor((784, 128), dtype="float32") = R.permute_dims(w0, axes=None)
            lv2: R.Tensor((1, 128), dtype="float32") = cls.{n0}(x, lv, b0)
            lv3: R.Tensor((1, 128), dtype="float32") = R.nn.relu(lv2)
            lv4: R.Tensor((128, 10), dtype="float32") = R.permute_dims(w1, axes=None)
            lv6: R.Tensor((1, 10), dtype="float32") = cls.{n1}(lv3, lv4, b1)
            gv: R.Tensor((1, 10), dtype="float32") = lv6
            R.output(gv)
        return gv
"#
    )
}

/// The seed's `MatmulAddFusor`, line for line.
struct MatmulAddFusor {
    state: MutatorState,
    counter: usize,
}

impl ExprMutator for MatmulAddFusor {
    fn state(&mut self) -> &mut MutatorState {
        &mut self.state
    }
    fn visit_call(&mut self, expr: &Expr, _: &Call) -> Expr {
        let call = self.visit_expr_post_order(expr);
        if call.call_op_name() != Some("relax.add") {
            return call;
        }
        let args = call.as_call().unwrap().args.clone();
        let Some(value) = args[0].as_var().and_then(|v| self.lookup_binding(v)) else {
            return call;
        };
        if value.call_op_name() != Some("relax.matmul") {
            return call;
        }
        let (x, w, b) = (
            value.as_call().unwrap().args[0].clone(),
            value.as_call().unwrap().args[1].clone(),
            args[1].clone(),
        );
        let param = |name: &str, e: &Expr| Var::new(name, e.struct_info().cloned());
        let (px, pw, pb) = (param("x", &x), param("w", &w), param("b", &b));
        let fn_name = format!("fused_matmul_add{}", self.counter);
        self.counter += 1;
        let op = |name: &str, args: Vec<Expr>| {
            crate::op::lookup(name).unwrap().call(args, &Attrs::new())
        };
        let mut bb = BlockBuilder::new();
        bb.function(&fn_name, vec![px.clone(), pw.clone(), pb.clone()], |bb| {
            bb.dataflow(|bb| {
                let lv0 = bb.emit(op("relax.matmul", vec![px.to_expr(), pw.to_expr()])?)?;
                Ok(bb
                    .emit_output(op("relax.add", vec![lv0.to_expr(), pb.to_expr()])?)?
                    .to_expr())
            })
        })
        .unwrap();
        let fused: Function = bb
            .finalize()
            .unwrap()
            .get_relax(&fn_name)
            .unwrap()
            .clone()
            .with_attr("Primitive", 1i64);
        let gv = self.builder().add_func(fused, &fn_name);
        let callee = Expr::global_var(gv).with_struct_info(StructInfo::object());
        Expr::call(callee, vec![x, w, b])
    }
}

fn module(text: &str) -> IRModule {
    text.parse().unwrap_or_else(|e| panic!("{e}\n{text}"))
}

#[test]
fn the_seeds_matmul_add_fusor_gives_the_seeds_module() {
    let m = module(MLP);
    let mut fusor = MatmulAddFusor {
        state: MutatorState::with_module(&m),
        counter: 0,
    };
    let main = m.get_relax("main").unwrap();
    let updated = fusor.visit_expr(&Expr::function(main.clone()));
    let updated = remove_all_unused(updated.as_function().unwrap());
    let mut out = fusor.builder().get();
    out.add(m.global_var("main").unwrap(), updated);
    let expected = module(&seed_listing(
        "fused_matmul_add0",
        "fused_matmul_add1",
        r#"{"Primitive": 1}"#,
        "",
    ));
    if let Err(e) = structural_equal_report(&out, &expected) {
        panic!("{e}\n{out}");
    }
}

#[test]
fn fuse_ops_by_pattern_with_one_pattern_gives_the_seeds_module() {
    let x = wildcard();
    let w = wildcard();
    let b = wildcard();
    let pattern = is_op("relax.add")
        .unwrap()
        .call([is_op("relax.matmul").unwrap().call([x, w]), b]);
    let pass = FuseOpsByPattern::new(vec![FusionPattern::new("matmul_add", pattern)]);
    let out = pass.run(module(MLP)).unwrap();
    crate::analysis::well_formed(&out).unwrap();
    // As the seed's, with FuseOps' names and the composite's attribute.
    let expected = module(&seed_listing(
        "fused_matmul_add",
        "fused_matmul_add1",
        r#"{"Composite": "matmul_add", "Primitive": 1}"#,
        "(private=True)",
    ));
    if let Err(e) = structural_equal_report(&out, &expected) {
        panic!("{e}\n{out}");
    }
}

#[test]
fn a_check_can_refuse_and_codegen_is_annotated() {
    let pattern = is_op("relax.add").unwrap().call([
        is_op("relax.matmul")
            .unwrap()
            .call([wildcard(), wildcard()]),
        wildcard(),
    ]);
    let refuse = FuseOpsByPattern::new(vec![
        FusionPattern::new("dnnl.dense", pattern.clone()).with_check(|_, _| false)
    ]);
    let before = module(MLP);
    structural_equal_report(&refuse.run(before.clone()).unwrap(), &before).unwrap();
    let mut annotate = FuseOpsByPattern::new(vec![FusionPattern::new("dnnl.dense", pattern)]);
    annotate.annotate_codegen = true;
    let out = annotate.run(before).unwrap();
    let f = out.get_relax("fused_matmul_add").unwrap();
    assert_eq!(f.attrs.get("Codegen"), Some(&AttrValue::from("dnnl")));
    assert_eq!(
        f.attrs.get("Composite"),
        Some(&AttrValue::from("dnnl.dense"))
    );
}
