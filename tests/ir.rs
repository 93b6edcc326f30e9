//! The public API of the design's table (docs/design.md), used as code
//! outside the repository uses it: text in and out, structural equality,
//! well-formedness, the BlockBuilder and a rewrite through the mutator.

use relax::analysis::well_formed;
use relax::ir::{structural_equal, Attrs, Expr, IRModule, PrimExpr, StructInfo, Var};
use relax::mutator::{remove_all_unused, rewrite_dataflow_bindings};
use relax::{BlockBuilder, DataType, Error};

const EWISE: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((3, 4), "float32"), y: R.Tensor((3, 4), "float32")):
        with R.dataflow():
            lv0 = R.multiply(x, y)
            gv0 = R.add(lv0, y)
            R.output(gv0)
        return gv0
"#;

#[test]
fn text_round_trips_and_is_well_formed() {
    let m: IRModule = EWISE.parse().expect("the seed's module parses");
    assert!(well_formed(&m).is_ok());
    let printed = m.to_string();
    let again: IRModule = printed.parse().expect("printed text parses");
    assert!(structural_equal(&m, &again));
    assert_eq!(again.to_string(), printed);
    // The inferred StructInfo is printed on every binding.
    assert!(
        printed.contains(r#"gv0: R.Tensor((3, 4), dtype="float32") = R.add(lv0, y)"#),
        "{printed}"
    );
}

#[test]
fn a_shape_mistake_is_an_error_with_a_location() {
    let bad = EWISE.replace("y: R.Tensor((3, 4)", "y: R.Tensor((3, 5)");
    let err = bad.parse::<IRModule>().unwrap_err();
    let Error::Compile(ds) = &err else {
        panic!("a compile error, got {err}")
    };
    assert_eq!(
        ds[0].message,
        "multiply: shapes do not broadcast: x is (3, 4), y is (3, 5)"
    );
    let (line, _) = ds[0].span.expect("located").line_col(&bad);
    assert_eq!(line, 7, "the multiply is on line 7 of the text");
}

#[test]
fn builder_and_graph_rewrite_reproduce_the_seed() {
    let t = StructInfo::tensor(vec![PrimExpr::int(3), PrimExpr::int(4)], DataType::f32());
    let (x, y) = (Var::new("x", Some(t.clone())), Var::new("y", Some(t)));
    let op = |name: &str, args: Vec<Expr>| {
        relax::op::lookup(name)
            .unwrap()
            .call(args, &Attrs::new())
            .unwrap()
    };
    let mut bb = BlockBuilder::new();
    bb.function("main", vec![x.clone(), y.clone()], |bb| {
        bb.dataflow(|bb| {
            let lv0 = bb.emit_named(op("relax.multiply", vec![x.to_expr(), y.to_expr()]), "lv0")?;
            Ok(bb
                .emit_output_named(op("relax.add", vec![lv0.to_expr(), y.to_expr()]), "gv0")?
                .to_expr())
        })
    })
    .unwrap();
    let built = bb.finalize().unwrap();
    let parsed: IRModule = EWISE.parse().unwrap();
    assert!(
        structural_equal(&built, &parsed),
        "the builder and the parser agree"
    );

    let fused = rewrite_dataflow_bindings(&built, |_, value, graph| {
        let args = &value.as_call()?.args;
        let mul = graph.producer(&args[0])?;
        (value.call_op_name() == Some("relax.add") && mul.call_op_name() == Some("relax.multiply"))
            .then(|| {
                let m = &mul.as_call().unwrap().args;
                op(
                    "relax.ewise_fma",
                    vec![m[0].clone(), m[1].clone(), args[1].clone()],
                )
            })
    })
    .unwrap();
    let main = remove_all_unused(fused.get_relax("main").unwrap());
    let text = relax::printer::function_to_string("main", &main);
    let expected = r#"    with R.dataflow():
        gv0: R.Tensor((3, 4), dtype="float32") = R.ewise_fma(x, y, y)
        R.output(gv0)
    return gv0"#;
    assert!(text.contains(expected), "{text}");
}
