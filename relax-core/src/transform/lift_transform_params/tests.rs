//! `LiftTransformParams`: before/expected modules (the cases of TVM's
//! `test_transform_lift_transform_params.py`, written for this project's
//! ops), and the lifted module computing what the original computed.

use super::*;
use crate::backend::{build, Target};
use crate::transform::test_util::{assert_pass, parse};
use relax_runtime::{Tensor, Value, VirtualMachine};

#[track_caller]
fn check(before: &str, expected: &str) {
    assert_pass(&LiftTransformParams, parse(before), parse(expected));
}

/// The MLP's layer: the transposed weight is lifted, the bias passes
/// through (weights read directly come first).
const MLP: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 4), dtype="float32"), w: R.Tensor((3, 4), dtype="float32"), b: R.Tensor((3,), dtype="float32")) -> R.Tensor(("n", 3), dtype="float32"):
        R.func_attr({"num_input": 1})
        n = T.int64()
        with R.dataflow():
            wt: R.Tensor((4, 3), dtype="float32") = R.permute_dims(w, axes=None)
            lv: R.Tensor((n, 3), dtype="float32") = R.matmul(x, wt, out_dtype="void")
            gv: R.Tensor((n, 3), dtype="float32") = R.add(lv, b)
            R.output(gv)
        return gv
"#;

#[test]
fn a_transposed_weight_moves_to_transform_params() {
    let expected = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 4), dtype="float32"), b: R.Tensor((3,), dtype="float32"), wt: R.Tensor((4, 3), dtype="float32")) -> R.Tensor(("n", 3), dtype="float32"):
        R.func_attr({"num_input": 1})
        n = T.int64()
        with R.dataflow():
            lv: R.Tensor((n, 3), dtype="float32") = R.matmul(x, wt, out_dtype="void")
            gv: R.Tensor((n, 3), dtype="float32") = R.add(lv, b)
            R.output(gv)
        return gv

    @R.function
    def main_transform_params(params: R.Tuple(R.Tensor((3, 4), dtype="float32"), R.Tensor((3,), dtype="float32"))) -> R.Tuple(R.Tensor((3,), dtype="float32"), R.Tensor((4, 3), dtype="float32")):
        R.func_attr({"num_input": 0})
        with R.dataflow():
            w: R.Tensor((3, 4), dtype="float32") = params[0]
            b: R.Tensor((3,), dtype="float32") = params[1]
            wt: R.Tensor((4, 3), dtype="float32") = R.permute_dims(w, axes=None)
            gv: R.Tuple(R.Tensor((3,), dtype="float32"), R.Tensor((4, 3), dtype="float32")) = (b, wt)
            R.output(gv)
        return gv
"#;
    check(MLP, expected);
}

#[test]
fn tuples_of_weights_are_lifted_through() {
    // TVM's `test_tuple`: the weight reaches the matmul through two tuples.
    let before = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 4), dtype="float32"), w: R.Tensor((4, 4), dtype="float32")) -> R.Tensor((2, 4), dtype="float32"):
        R.func_attr({"num_input": 1})
        with R.dataflow():
            l0: R.Tuple(R.Tensor((4, 4), dtype="float32")) = (w,)
            l1: R.Tuple(R.Tuple(R.Tensor((4, 4), dtype="float32"))) = (l0,)
            l2: R.Tuple(R.Tensor((4, 4), dtype="float32")) = l1[0]
            l3: R.Tensor((4, 4), dtype="float32") = l2[0]
            lv: R.Tensor((2, 4), dtype="float32") = R.matmul(x, l3, out_dtype="void")
            gv: R.Tensor((2, 4), dtype="float32") = R.matmul(lv, w, out_dtype="void")
            R.output(gv)
        return gv
"#;
    let expected = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 4), dtype="float32"), w: R.Tensor((4, 4), dtype="float32"), l3: R.Tensor((4, 4), dtype="float32")) -> R.Tensor((2, 4), dtype="float32"):
        R.func_attr({"num_input": 1})
        with R.dataflow():
            lv: R.Tensor((2, 4), dtype="float32") = R.matmul(x, l3, out_dtype="void")
            gv: R.Tensor((2, 4), dtype="float32") = R.matmul(lv, w, out_dtype="void")
            R.output(gv)
        return gv

    @R.function
    def main_transform_params(params: R.Tuple(R.Tensor((4, 4), dtype="float32"))) -> R.Tuple(R.Tensor((4, 4), dtype="float32"), R.Tensor((4, 4), dtype="float32")):
        R.func_attr({"num_input": 0})
        with R.dataflow():
            w: R.Tensor((4, 4), dtype="float32") = params[0]
            l0: R.Tuple(R.Tensor((4, 4), dtype="float32")) = (w,)
            l1: R.Tuple(R.Tuple(R.Tensor((4, 4), dtype="float32"))) = (l0,)
            l2: R.Tuple(R.Tensor((4, 4), dtype="float32")) = l1[0]
            l3: R.Tensor((4, 4), dtype="float32") = l2[0]
            gv: R.Tuple(R.Tensor((4, 4), dtype="float32"), R.Tensor((4, 4), dtype="float32")) = (w, l3)
            R.output(gv)
        return gv
"#;
    check(before, expected);
}

#[test]
fn functions_without_num_input_or_anything_to_lift_are_unchanged() {
    // TVM's `test_multiple_functions`, `func3`: no `num_input`.
    let no_attr = MLP.replace("        R.func_attr({\"num_input\": 1})\n", "");
    check(&no_attr, &no_attr);
    // Every parameter an input: nothing is a weight.
    let all_inputs = MLP.replace("\"num_input\": 1", "\"num_input\": 3");
    check(&all_inputs, &all_inputs);
}

#[test]
fn control_flow_is_not_lifted() {
    // TVM's `test_condition`: only dataflow blocks are lifted from.
    let before = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 4), dtype="float32"), w1: R.Tensor((4, 4), dtype="float32"), w2: R.Tensor((4, 4), dtype="float32"), cond: R.Tensor((), dtype="bool")) -> R.Tensor((2, 4), dtype="float32"):
        R.func_attr({"num_input": 1})
        if cond:
            w: R.Tensor((4, 4), dtype="float32") = w1
        else:
            w: R.Tensor((4, 4), dtype="float32") = w2
        with R.dataflow():
            gv: R.Tensor((2, 4), dtype="float32") = R.matmul(x, w, out_dtype="void")
            R.output(gv)
        return gv
"#;
    check(before, before);
}

#[test]
fn transform_then_main_gives_what_main_gave() {
    let before = parse(MLP);
    let lifted = LiftTransformParams.run(before.clone()).unwrap();
    let x: Value = Tensor::from_vec(&[2, 4], (0..8).map(|i| i as f32 * 0.5).collect::<Vec<_>>())
        .unwrap()
        .into();
    let w: Value = Tensor::from_vec(&[3, 4], (0..12).map(|i| i as f32 - 6.0).collect::<Vec<_>>())
        .unwrap()
        .into();
    let b: Value = Tensor::from_vec(&[3], vec![0.5f32, -1.0, 2.0])
        .unwrap()
        .into();
    let target = Target::interpreter();
    let want = VirtualMachine::new(&build(&before, &target).unwrap())
        .call("main", &[x.clone(), w.clone(), b.clone()])
        .unwrap();
    let exec = build(&lifted, &target).unwrap();
    let vm = VirtualMachine::new(&exec);
    let params = vm
        .call("main_transform_params", &[Value::Tuple(vec![w, b].into())])
        .unwrap();
    let Value::Tuple(transformed) = params else {
        panic!("transform_params returns a tuple, got {params:?}");
    };
    let mut args = vec![x];
    args.extend(transformed.iter().cloned());
    let got = vm.call("main", &args).unwrap();
    assert_eq!(
        got.as_tensor().unwrap().to_vec::<f32>().unwrap(),
        want.as_tensor().unwrap().to_vec::<f32>().unwrap()
    );
}
