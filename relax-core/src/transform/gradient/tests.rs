//! `Gradient`: the before/expected modules of TVM's documentation and
//! `test_transform_gradient.py` (written for this project's printer), every
//! rule against central finite differences in float64 on the interpreter,
//! and the errors.

use super::*;
use crate::backend::{build, Target};
use crate::transform::test_util::{assert_pass, parse};
use relax_runtime::{Tensor, Value, VirtualMachine};

#[test]
fn add_then_sum_as_tvm_documents_it() {
    let before = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((3, 3), dtype="float32"), y: R.Tensor((3, 3), dtype="float32")) -> R.Tensor((), dtype="float32"):
        with R.dataflow():
            lv1: R.Tensor((3, 3), dtype="float32") = R.add(x, y)
            lv2: R.Tensor((), dtype="float32") = R.sum(lv1, axis=None, keepdims=False)
            R.output(lv2)
        return lv2
"#;
    let expected = format!(
        "{before}{}",
        r#"
    @R.function
    def main_adjoint(x: R.Tensor((3, 3), dtype="float32"), y: R.Tensor((3, 3), dtype="float32")) -> R.Tuple(R.Tensor((), dtype="float32"), R.Tuple(R.Tensor((3, 3), dtype="float32"), R.Tensor((3, 3), dtype="float32"))):
        with R.dataflow():
            lv1: R.Tensor((3, 3), dtype="float32") = R.add(x, y)
            lv2: R.Tensor((), dtype="float32") = R.sum(lv1, axis=None, keepdims=False)
            lv2_adjoint: R.Tensor((), dtype="float32") = R.ones(R.shape([]), dtype="float32")
            lv1_adjoint: R.Tensor((3, 3), dtype="float32") = R.broadcast_to(lv2_adjoint, R.shape([3, 3]))
            x_adjoint: R.Tensor((3, 3), dtype="float32") = lv1_adjoint
            y_adjoint: R.Tensor((3, 3), dtype="float32") = lv1_adjoint
            R.output(lv2, x_adjoint, y_adjoint)
        return (lv2, (x_adjoint, y_adjoint))
"#
    );
    assert_pass(&Gradient::new("main"), parse(before), parse(&expected));
}

#[test]
fn target_index_picks_a_field_and_unused_parameters_get_zeros() {
    // TVM's second documented case: the target is the second result, so
    // `x` gets zeros.
    let before = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((3, 3), dtype="float32"), y: R.Tensor((3, 3), dtype="float32")) -> R.Tuple(R.Tensor((), dtype="float32"), R.Tensor((), dtype="float32")):
        with R.dataflow():
            lv1: R.Tensor((), dtype="float32") = R.sum(x, axis=None, keepdims=False)
            lv2: R.Tensor((), dtype="float32") = R.sum(y, axis=None, keepdims=False)
            R.output(lv1, lv2)
        return (lv1, lv2)
"#;
    let expected = format!(
        "{before}{}",
        r#"
    @R.function
    def main_adjoint(x: R.Tensor((3, 3), dtype="float32"), y: R.Tensor((3, 3), dtype="float32")) -> R.Tuple(R.Tuple(R.Tensor((), dtype="float32"), R.Tensor((), dtype="float32")), R.Tuple(R.Tensor((3, 3), dtype="float32"), R.Tensor((3, 3), dtype="float32"))):
        with R.dataflow():
            lv1: R.Tensor((), dtype="float32") = R.sum(x, axis=None, keepdims=False)
            lv2: R.Tensor((), dtype="float32") = R.sum(y, axis=None, keepdims=False)
            lv2_adjoint: R.Tensor((), dtype="float32") = R.ones(R.shape([]), dtype="float32")
            x_adjoint: R.Tensor((3, 3), dtype="float32") = R.zeros(R.shape([3, 3]), dtype="float32")
            y_adjoint: R.Tensor((3, 3), dtype="float32") = R.broadcast_to(lv2_adjoint, R.shape([3, 3]))
            R.output(lv1, lv2, x_adjoint, y_adjoint)
        return ((lv1, lv2), (x_adjoint, y_adjoint))
"#
    );
    assert_pass(
        &Gradient::new("main").target_index(1),
        parse(before),
        parse(&expected),
    );
}

#[test]
fn a_variable_used_twice_sums_its_contributions() {
    let before = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((3,), dtype="float32")) -> R.Tensor((), dtype="float32"):
        with R.dataflow():
            lv1: R.Tensor((3,), dtype="float32") = R.multiply(x, x)
            lv2: R.Tensor((), dtype="float32") = R.sum(lv1, axis=None, keepdims=False)
            R.output(lv2)
        return lv2
"#;
    let expected = format!(
        "{before}{}",
        r#"
    @R.function
    def main_adjoint(x: R.Tensor((3,), dtype="float32")) -> R.Tuple(R.Tensor((), dtype="float32"), R.Tuple(R.Tensor((3,), dtype="float32"))):
        with R.dataflow():
            lv1: R.Tensor((3,), dtype="float32") = R.multiply(x, x)
            lv2: R.Tensor((), dtype="float32") = R.sum(lv1, axis=None, keepdims=False)
            lv2_adjoint: R.Tensor((), dtype="float32") = R.ones(R.shape([]), dtype="float32")
            lv1_adjoint: R.Tensor((3,), dtype="float32") = R.broadcast_to(lv2_adjoint, R.shape([3]))
            lv: R.Tensor((3,), dtype="float32") = R.multiply(lv1_adjoint, x)
            lv3: R.Tensor((3,), dtype="float32") = R.multiply(lv1_adjoint, x)
            x_adjoint: R.Tensor((3,), dtype="float32") = R.add(lv, lv3)
            R.output(lv2, x_adjoint)
        return (lv2, (x_adjoint,))
"#
    );
    assert_pass(&Gradient::new("main"), parse(before), parse(&expected));
}

#[test]
fn require_grads_selects_parameters() {
    let before = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32"), b: R.Tensor((3,), dtype="float32")) -> R.Tensor((), dtype="float32"):
        with R.dataflow():
            lv1: R.Tensor((2, 3), dtype="float32") = R.add(x, b)
            lv2: R.Tensor((), dtype="float32") = R.sum(lv1, axis=None, keepdims=False)
            R.output(lv2)
        return lv2
"#;
    let expected = format!(
        "{before}{}",
        r#"
    @R.function
    def main_adjoint(x: R.Tensor((2, 3), dtype="float32"), b: R.Tensor((3,), dtype="float32")) -> R.Tuple(R.Tensor((), dtype="float32"), R.Tuple(R.Tensor((3,), dtype="float32"))):
        with R.dataflow():
            lv1: R.Tensor((2, 3), dtype="float32") = R.add(x, b)
            lv2: R.Tensor((), dtype="float32") = R.sum(lv1, axis=None, keepdims=False)
            lv2_adjoint: R.Tensor((), dtype="float32") = R.ones(R.shape([]), dtype="float32")
            lv1_adjoint: R.Tensor((2, 3), dtype="float32") = R.broadcast_to(lv2_adjoint, R.shape([2, 3]))
            b_adjoint: R.Tensor((3,), dtype="float32") = R.sum(lv1_adjoint, axis=[0], keepdims=False)
            R.output(lv2, b_adjoint)
        return (lv2, (b_adjoint,))
"#
    );
    assert_pass(
        &Gradient::new("main").require_grads(["b"]),
        parse(before),
        parse(&expected),
    );
}

/// A module whose `main(<params>, w)` returns `sum(out * w)`, `out` made by
/// `body` (which binds `out`), in float64.
fn loss_module(params: &str, body: &str, out_shape: &str) -> IRModule {
    let body: String = body
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| format!("            {l}\n"))
        .collect();
    parse(&format!(
        r#"
@I.ir_module
class Module:
    @R.function
    def main({params}, w: R.Tensor({out_shape}, dtype="float64")) -> R.Tensor((), dtype="float64"):
        with R.dataflow():
{body}            lw = R.multiply(out, w)
            loss = R.sum(lw, axis=None, keepdims=False)
            R.output(loss)
        return loss
"#
    ))
}

/// Deterministic values in `[lo, hi]`, none within 0.05 of zero (the kinks
/// of relu and abs).
fn values(seed: u64, n: usize, lo: f64, hi: f64) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let u = (s >> 11) as f64 / (1u64 << 53) as f64;
            let v = lo + (hi - lo) * u;
            if v.abs() < 0.05 {
                v + 0.1
            } else {
                v
            }
        })
        .collect()
}

fn tensor(shape: &[i64], data: Vec<f64>) -> Value {
    Value::Tensor(Tensor::from_vec(shape, data).unwrap())
}

fn as_f64(v: &Value) -> Vec<f64> {
    match v {
        Value::Tensor(t) => t.to_f64_vec(),
        other => panic!("not a tensor: {other:?}"),
    }
}

/// The adjoint of `module`'s `main` against central finite differences:
/// `inputs` are the parameters before `w` (shapes and values), `required`
/// the indices of those differentiated.
#[track_caller]
fn check_gradient(module: IRModule, inputs: Vec<(Vec<i64>, Vec<f64>)>, required: &[usize]) {
    check_gradient_with(module, inputs, required, 1e-6, 1e-6)
}

/// [`check_gradient`] with a finite-difference step and tolerance.
#[track_caller]
fn check_gradient_with(
    module: IRModule,
    inputs: Vec<(Vec<i64>, Vec<f64>)>,
    required: &[usize],
    eps: f64,
    tol: f64,
) {
    let f = module.get_relax("main").unwrap().clone();
    let names: Vec<String> = required
        .iter()
        .map(|&i| f.params[i].name_hint().to_string())
        .collect();
    let with_adjoint = Gradient::new("main")
        .require_grads(names.clone())
        .run(module)
        .unwrap_or_else(|e| panic!("{e}"));
    crate::analysis::well_formed(&with_adjoint).unwrap_or_else(|e| panic!("{e:?}\n{with_adjoint}"));
    let exec = build(&with_adjoint, &Target::interpreter())
        .unwrap_or_else(|e| panic!("{e}\n{with_adjoint}"));
    let vm = VirtualMachine::new(&exec);
    // `w`: the last parameter, shaped like `out`.
    let w_sinfo = f.params.last().unwrap().struct_info().unwrap();
    let w_shape: Vec<i64> = w_sinfo
        .as_tensor()
        .and_then(|t| t.shape_values())
        .map(|d| d.iter().map(|x| x.as_int().unwrap()).collect())
        .unwrap();
    let n_w: i64 = w_shape.iter().product();
    let w = tensor(&w_shape, values(99, n_w as usize, -1.0, 1.0));
    let args = |inputs: &[(Vec<i64>, Vec<f64>)]| -> Vec<Value> {
        let mut a: Vec<Value> = inputs.iter().map(|(s, d)| tensor(s, d.clone())).collect();
        a.push(w.clone());
        a
    };
    let loss = |inputs: &[(Vec<i64>, Vec<f64>)]| -> f64 {
        as_f64(&vm.call("main", &args(inputs)).unwrap())[0]
    };
    let result = vm.call("main_adjoint", &args(&inputs)).unwrap();
    let Value::Tuple(parts) = result else {
        panic!("main_adjoint returns a tuple")
    };
    assert!((as_f64(&parts[0])[0] - loss(&inputs)).abs() < 1e-12);
    let Value::Tuple(grads) = &parts[1] else {
        panic!("the adjoints are a tuple")
    };
    assert_eq!(grads.len(), required.len());
    for (k, &i) in required.iter().enumerate() {
        let got = as_f64(&grads[k]);
        assert_eq!(got.len(), inputs[i].1.len(), "adjoint of `{}`", names[k]);
        for (j, &adjoint) in got.iter().enumerate() {
            let mut plus = inputs.clone();
            plus[i].1[j] += eps;
            let mut minus = inputs.clone();
            minus[i].1[j] -= eps;
            let fd = (loss(&plus) - loss(&minus)) / (2.0 * eps);
            assert!(
                (adjoint - fd).abs() <= tol + 10.0 * tol * fd.abs(),
                "d loss / d {}[{j}]: adjoint {} but finite differences {fd}\n{}",
                names[k],
                adjoint,
                with_adjoint
            );
        }
    }
}

/// One op case: parameters, the body binding `out`, `out`'s shape, and
/// the inputs' shapes and value ranges.
#[track_caller]
fn case(params: &str, body: &str, out_shape: &str, inputs: &[(&[i64], f64, f64)]) {
    let inputs: Vec<(Vec<i64>, Vec<f64>)> = inputs
        .iter()
        .enumerate()
        .map(|(k, (shape, lo, hi))| {
            let n: i64 = shape.iter().product();
            (shape.to_vec(), values(k as u64 + 1, n as usize, *lo, *hi))
        })
        .collect();
    let required: Vec<usize> = (0..inputs.len()).collect();
    check_gradient(loss_module(params, body, out_shape), inputs, &required);
}

const X23: &str = r#"x: R.Tensor((2, 3), dtype="float64")"#;

#[test]
fn unary_rules_match_finite_differences() {
    for op in [
        "R.negative(x)",
        "R.abs(x)",
        "R.exp(x)",
        "R.sigmoid(x)",
        "R.tanh(x)",
        "R.nn.relu(x)",
        "R.nn.silu(x)",
        "R.nn.softmax(x, axis=-1)",
        "R.nn.softmax(x, axis=0)",
        "R.nn.log_softmax(x, axis=1)",
    ] {
        case(
            X23,
            &format!("out = {op}"),
            "(2, 3)",
            &[(&[2, 3], -2.0, 2.0)],
        );
    }
    // Through float32 and back: finite differences see float32's rounding.
    check_gradient_with(
        loss_module(
            X23,
            "lv = R.astype(x, dtype=\"float32\")\nout = R.astype(lv, dtype=\"float64\")",
            "(2, 3)",
        ),
        vec![(vec![2, 3], values(1, 6, -2.0, 2.0))],
        &[0],
        1e-2,
        1e-4,
    );
    for op in [
        "R.sin(x)",
        "R.cos(x)",
        "R.tan(x)",
        "R.atan(x)",
        "R.sinh(x)",
        "R.cosh(x)",
        "R.erf(x)",
        "R.square(x)",
    ] {
        case(
            X23,
            &format!("out = {op}"),
            "(2, 3)",
            &[(&[2, 3], -1.2, 1.2)],
        );
    }
    for op in ["R.log(x)", "R.sqrt(x)", "R.rsqrt(x)"] {
        case(
            X23,
            &format!("out = {op}"),
            "(2, 3)",
            &[(&[2, 3], 0.5, 2.0)],
        );
    }
}

#[test]
fn binary_rules_with_broadcasting_match_finite_differences() {
    let xy = |x: &str, y: &str| {
        format!(r#"x: R.Tensor({x}, dtype="float64"), y: R.Tensor({y}, dtype="float64")"#)
    };
    for op in [
        "add", "subtract", "multiply", "divide", "maximum", "minimum",
    ] {
        // Both ways: y's leading axis, and an inner axis of size 1 in x.
        case(
            &xy("(2, 1, 3)", "(4, 3)"),
            &format!("out = R.{op}(x, y)"),
            "(2, 4, 3)",
            &[(&[2, 1, 3], 0.5, 2.0), (&[4, 3], -2.0, -0.5)],
        );
        case(
            &xy("(2, 3)", "(2, 3)"),
            &format!("out = R.{op}(x, y)"),
            "(2, 3)",
            &[(&[2, 3], -2.0, 2.0), (&[2, 3], 0.5, 2.0)],
        );
    }
    case(
        &xy("(2, 3)", "(3,)"),
        "out = R.power(x, y)",
        "(2, 3)",
        &[(&[2, 3], 0.5, 2.0), (&[3], -1.5, 1.5)],
    );
    case(
        &xy("(2, 3)", "(2, 3)"),
        "c = R.greater(x, y)\nout = R.where(c, x, y)",
        "(2, 3)",
        &[(&[2, 3], -2.0, 2.0), (&[2, 3], -2.0, 2.0)],
    );
}

#[test]
fn reduction_and_layout_rules_match_finite_differences() {
    let x234 = r#"x: R.Tensor((2, 3, 4), dtype="float64")"#;
    let x = &[(&[2i64, 3, 4][..], -2.0, 2.0)];
    for (op, out) in [
        ("R.sum(x, axis=[1], keepdims=False)", "(2, 4)"),
        ("R.sum(x, axis=[0, 2], keepdims=True)", "(1, 3, 1)"),
        ("R.sum(x, axis=[-1], keepdims=False)", "(2, 3)"),
        ("R.mean(x, axis=[0, 2], keepdims=False)", "(3,)"),
        ("R.mean(x, axis=None, keepdims=True)", "(1, 1, 1)"),
        ("R.permute_dims(x, axes=[1, 2, 0])", "(3, 4, 2)"),
        ("R.permute_dims(x, axes=None)", "(4, 3, 2)"),
        ("R.reshape(x, R.shape([6, 4]))", "(6, 4)"),
        ("R.flatten(x)", "(24,)"),
        ("R.expand_dims(x, axis=[1])", "(2, 1, 3, 4)"),
        (
            "R.split(x, indices_or_sections=[1], axis=1)[1]",
            "(2, 2, 4)",
        ),
    ] {
        let body = if op.contains("split") {
            "s = R.split(x, indices_or_sections=[1], axis=1)\nout = s[1]".to_string()
        } else {
            format!("out = {op}")
        };
        case(x234, &body, out, x);
    }
    let x213 = r#"x: R.Tensor((2, 1, 3), dtype="float64")"#;
    let x = &[(&[2i64, 1, 3][..], -2.0, 2.0)];
    case(x213, "out = R.squeeze(x, axis=[1])", "(2, 3)", x);
    case(
        x213,
        "out = R.broadcast_to(x, R.shape([4, 2, 5, 3]))",
        "(4, 2, 5, 3)",
        x,
    );
}

#[test]
fn tuple_rules_match_finite_differences() {
    let xy = r#"x: R.Tensor((2, 3), dtype="float64"), y: R.Tensor((2, 2), dtype="float64")"#;
    let inputs = &[(&[2i64, 3][..], -2.0, 2.0), (&[2i64, 2][..], -2.0, 2.0)];
    case(xy, "out = R.concat((x, y), axis=1)", "(2, 5)", inputs);
    case(
        xy,
        "t = (x, y)\nc = R.concat(t, axis=1)\ns = R.split(c, indices_or_sections=[2], axis=1)\na = s[0]\nb = s[1]\nsb = R.sum(b, axis=[1], keepdims=True)\nout = R.multiply(a, sb)",
        "(2, 2)",
        inputs,
    );
    case(
        xy,
        "t = (x, y)\na = t[1]\nb = t[0]\nout = R.matmul(a, b)",
        "(2, 3)",
        inputs,
    );
}

#[test]
fn matmul_rules_match_finite_differences() {
    let ab = |a: &str, b: &str| {
        format!(r#"a: R.Tensor({a}, dtype="float64"), b: R.Tensor({b}, dtype="float64")"#)
    };
    for (a, b, out) in [
        (&[2i64, 3][..], &[3i64, 4][..], "(2, 4)"),
        (&[5, 2, 3], &[3, 4], "(5, 2, 4)"),
        (&[2, 1, 2, 3], &[4, 3, 5], "(2, 4, 2, 5)"),
        (&[3], &[3, 4], "(4,)"),
        (&[2, 3], &[3], "(2,)"),
        (&[3], &[2, 3, 4], "(2, 4)"),
        (&[2, 4, 3], &[3], "(2, 4)"),
        (&[3], &[3], "()"),
    ] {
        let shape = |s: &[i64]| {
            let inner: Vec<String> = s.iter().map(i64::to_string).collect();
            if s.len() == 1 {
                format!("({},)", inner[0])
            } else {
                format!("({})", inner.join(", "))
            }
        };
        case(
            &ab(&shape(a), &shape(b)),
            "out = R.matmul(a, b)",
            out,
            &[(a, -1.0, 1.0), (b, -1.0, 1.0)],
        );
    }
}

#[test]
fn a_symbolic_mean_divides_by_a_counted_extent() {
    let module = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 3), dtype="float64"), w: R.Tensor((3,), dtype="float64")) -> R.Tensor((), dtype="float64"):
        with R.dataflow():
            out = R.mean(x, axis=[0], keepdims=False)
            lw = R.multiply(out, w)
            loss = R.sum(lw, axis=None, keepdims=False)
            R.output(loss)
        return loss
"#,
    );
    check_gradient(module, vec![(vec![5, 3], values(3, 15, -1.0, 1.0))], &[0]);
}

#[test]
fn the_mlp_loss_matches_finite_differences_and_the_host_build() {
    // The training example's loss: cross-entropy of the MLP's logits.
    let module = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4, 5), dtype="float64"), w0: R.Tensor((6, 5), dtype="float64"), b0: R.Tensor((6,), dtype="float64"), w1: R.Tensor((3, 6), dtype="float64"), b1: R.Tensor((3,), dtype="float64"), w: R.Tensor((4, 3), dtype="float64")) -> R.Tensor((), dtype="float64"):
        with R.dataflow():
            w0t = R.permute_dims(w0, axes=None)
            lv0 = R.matmul(x, w0t)
            lv1 = R.add(lv0, b0)
            lv2 = R.nn.relu(lv1)
            w1t = R.permute_dims(w1, axes=None)
            lv3 = R.matmul(lv2, w1t)
            logits = R.add(lv3, b1)
            lsm = R.nn.log_softmax(logits, axis=-1)
            picked = R.multiply(lsm, w)
            per_row = R.sum(picked, axis=[1], keepdims=False)
            mean = R.mean(per_row, axis=None, keepdims=False)
            loss = R.negative(mean)
            R.output(loss)
        return loss
"#,
    );
    let shapes: [&[i64]; 5] = [&[4, 5], &[6, 5], &[6], &[3, 6], &[3]];
    let inputs: Vec<(Vec<i64>, Vec<f64>)> = shapes
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let n: i64 = s.iter().product();
            (s.to_vec(), values(k as u64 + 7, n as usize, -1.0, 1.0))
        })
        .collect();
    check_gradient(module.clone(), inputs.clone(), &[1, 2, 3, 4]);
    // The same adjoint through LLVM gives the interpreter's numbers (when
    // relax-core is built with LLVM: `cargo test -p relax-core` alone is not).
    if !cfg!(feature = "llvm") {
        return;
    }
    let adjoint = Gradient::new("main")
        .require_grads(["w0", "b0", "w1", "b1"])
        .run(module)
        .unwrap();
    let mut args: Vec<Value> = inputs.iter().map(|(s, d)| tensor(s, d.clone())).collect();
    args.push(tensor(&[4, 3], values(5, 12, 0.0, 1.0)));
    let run = |target: Target| {
        let vm = VirtualMachine::new(&build(&adjoint, &target).unwrap());
        vm.call("main_adjoint", &args).unwrap()
    };
    let flat = |v: &Value| -> Vec<f64> {
        let Value::Tuple(p) = v else { panic!() };
        let Value::Tuple(g) = &p[1] else { panic!() };
        g.iter().flat_map(as_f64).collect()
    };
    let (interp, host) = (run(Target::interpreter()), run(Target::host()));
    for (a, b) in flat(&interp).iter().zip(flat(&host)) {
        assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    }
}

#[track_caller]
fn assert_error(module: &str, pass: Gradient, needle: &str) {
    let err = pass.run(parse(module)).unwrap_err().to_string();
    assert!(err.contains(needle), "{err}");
}

#[test]
fn what_cannot_be_differentiated_is_an_error() {
    let scalar_of = |body: &str, ret: &str| {
        format!(
            r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float32"), i: R.Tensor((2,), dtype="int64")) -> {ret}:
        with R.dataflow():
            {body}
            R.output(gv)
        return gv
"#
        )
    };
    let not_scalar = scalar_of("gv = R.exp(x)", r#"R.Tensor((2, 3), dtype="float32")"#);
    assert_error(
        &not_scalar,
        Gradient::new("main").require_grads(["x"]),
        "the target `gv` of `main` must be a float scalar",
    );
    let take = scalar_of(
        "lv = R.take(x, i, axis=0)\n            gv = R.sum(lv, axis=None, keepdims=False)",
        r#"R.Tensor((), dtype="float32")"#,
    );
    assert_error(
        &take,
        Gradient::new("main").require_grads(["x"]),
        "no gradient rule for `relax.take`",
    );
    let floor = scalar_of(
        "lv = R.floor(x)\n            gv = R.sum(lv, axis=None, keepdims=False)",
        r#"R.Tensor((), dtype="float32")"#,
    );
    assert_error(
        &floor,
        Gradient::new("main").require_grads(["x"]),
        "no gradient rule for `relax.floor`",
    );
    assert_error(
        &take,
        Gradient::new("main"),
        "parameter `i` of `main` needs a gradient, so it must be a float tensor",
    );
    assert_error(&take, Gradient::new("nope"), "no Relax function `nope`");
    assert_error(
        &take,
        Gradient::new("main").require_grads(["y"]),
        "`main` has no parameter `y`",
    );
    assert_error(
        &take,
        Gradient::new("main").require_grads(["x"]).target_index(2),
        "target_index 2 given, but `main` returns one value",
    );
}
