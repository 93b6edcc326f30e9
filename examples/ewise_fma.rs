//! The MLC course's first graph rewrite (chapter 7.3): find `multiply`
//! followed by `add` and fuse them into `ewise_fma`, then remove what became
//! unused. Prints the module before and after.
//!
//! The rewrite is done three times: by a hand-written `ExprMutator`, as
//! the course writes it; by the pattern language (`relax::dpl::rewrite_call`);
//! and as a `relax::rewriter!`, two DSL functions checked at compile time.
//! The program checks that all three give the same function.
//!
//! Run: `cargo run --example ewise_fma`

use relax::dpl::{is_op, rewrite_call, wildcard, Pattern};
use relax::ir::{Attrs, Call, Expr, IRModule, PrimExpr, StructInfo, Var};
use relax::mutator::{mutate_module, remove_all_unused, ExprMutator, MutatorState};
use relax::transform::Pass;
use relax::{BlockBuilder, DataType, Error};

/// `add(lv, y)` where `lv = multiply(a, b)` becomes `ewise_fma(a, b, y)`.
struct EwiseFmaRewriter(MutatorState);

impl ExprMutator for EwiseFmaRewriter {
    fn state(&mut self) -> &mut relax::mutator::MutatorState {
        &mut self.0
    }
    fn visit_call(&mut self, expr: &Expr, _: &Call) -> Expr {
        let call = self.visit_expr_post_order(expr);
        if call.call_op_name() != Some("relax.add") {
            return call;
        }
        let args = &call.as_call().expect("checked above").args;
        let Some(value) = args[0].as_var().and_then(|v| self.lookup_binding(v)) else {
            return call;
        };
        if value.call_op_name() != Some("relax.multiply") {
            return call;
        }
        let m = &value.as_call().expect("checked above").args;
        let fma = vec![m[0].clone(), m[1].clone(), args[1].clone()];
        Expr::call_op("relax.ewise_fma", fma, Attrs::new())
    }
}

/// The seed's `MyModule`, built with the BlockBuilder.
fn my_module() -> Result<IRModule, Error> {
    let t = StructInfo::tensor(vec![PrimExpr::int(3), PrimExpr::int(4)], DataType::f32());
    let x = Var::new("x", Some(t.clone()));
    let y = Var::new("y", Some(t));
    let op = |name: &str, args: Vec<Expr>| {
        let info = relax::op::lookup(name).expect("a registered op");
        info.call(args, &Attrs::new())
    };
    let mut bb = BlockBuilder::new();
    bb.function("main", vec![x.clone(), y.clone()], |bb| {
        bb.dataflow(|bb| {
            let lv0 =
                bb.emit_named(op("relax.multiply", vec![x.to_expr(), y.to_expr()])?, "lv0")?;
            let add = op("relax.add", vec![lv0.to_expr(), y.to_expr()])?;
            Ok(bb.emit_output_named(add, "gv0")?.to_expr())
        })
    })?;
    bb.finalize()
}

fn main() -> Result<(), Error> {
    let module = my_module()?;
    println!("Before:\n{module}\n");
    let rewritten = mutate_module(
        &mut EwiseFmaRewriter(MutatorState::with_module(&module)),
        &module,
    )?;
    let main = rewritten.get_relax("main").expect("main is defined");
    println!(
        "After EwiseFMARewriter:\n{}\n",
        relax::printer::function_to_string("main", main)
    );
    let cleaned = remove_all_unused(main);
    println!(
        "After remove_all_unused:\n{}",
        relax::printer::function_to_string("main", &cleaned)
    );

    // The same rewrite with the pattern language.
    let (a, b, c) = (wildcard(), wildcard(), wildcard());
    let fma = is_op("relax.add")?.call([
        is_op("relax.multiply")?.call([a.clone(), b.clone()]),
        c.clone(),
    ]);
    let by_pattern = rewrite_call(
        &fma,
        |_, m| {
            let arg = |p: &Pattern| m.get(p).expect("matched").clone();
            Expr::call_op(
                "relax.ewise_fma",
                vec![arg(&a), arg(&b), arg(&c)],
                Attrs::new(),
            )
        },
        module.get_relax("main").expect("main is defined"),
    )?;
    println!(
        "With relax::dpl::rewrite_call:\n{}",
        relax::printer::function_to_string("main", &by_pattern)
    );
    relax::ir::structural_equal_report(&by_pattern, &cleaned)
        .map_err(|e| Error::Runtime(format!("the two rewrites differ: {e}")))?;

    // And as a rewriter in the DSL: the pattern and its replacement.
    let rewriter = relax::rewriter! {
        fn pattern(a: Tensor![(n, m), f32], b: Tensor![(n, m), f32], c: Tensor![(n, m), f32]) -> Tensor![(n, m), f32] {
            R::add(R::multiply(a, b), c)
        }
        fn replacement(a: Tensor![(n, m), f32], b: Tensor![(n, m), f32], c: Tensor![(n, m), f32]) -> Tensor![(n, m), f32] {
            R::ewise_fma(a, b, c)
        }
    }?;
    let by_rewriter = rewriter.run(module.clone())?;
    let main3 = by_rewriter.get_relax("main").expect("main is defined");
    println!(
        "With relax::rewriter!:\n{}",
        relax::printer::function_to_string("main", main3)
    );
    relax::ir::structural_equal_report(main3, &cleaned)
        .map_err(|e| Error::Runtime(format!("the rewriter differs: {e}")))?;
    println!("\nAll three rewrites give the same function.");
    Ok(())
}
