//! FuseOps: before/expected modules (the shapes of TVM's
//! `test_transform_fuse_ops.py`, on stub PrimFuncs carrying their pattern
//! kind), and numbers unchanged by fusion.

use super::*;
use crate::ir::structural_equal_report;
use crate::transform::{AnnotateTIROpPattern, LegalizeOps};

fn module(text: &str) -> IRModule {
    text.parse().unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn check(before: &str, expected: &str) {
    check_with(&FuseOps::default(), before, expected);
}

fn check_with(pass: &FuseOps, before: &str, expected: &str) {
    let after = pass.run(module(before)).unwrap();
    crate::analysis::well_formed(&after).unwrap_or_else(|e| panic!("{e:?}\n{after}"));
    if let Err(e) = structural_equal_report(&after, &module(expected)) {
        panic!("{e}\n--- after\n{after}");
    }
}

/// Stub kernels: one per pattern kind (the bodies do not matter to FuseOps).
const KERNELS: &str = r#"
    @T.prim_func(private=True)
    def transpose(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 4), "float32")):
        T.func_attr({"op_pattern": 2})
        T.evaluate(0)

    @T.prim_func(private=True)
    def matmul(A: T.Buffer((2, 8), "float32"), B: T.Buffer((8, 4), "float32"), C: T.Buffer((2, 4), "float32")):
        T.func_attr({"op_pattern": 4})
        T.evaluate(0)

    @T.prim_func(private=True)
    def add(A: T.Buffer((2, 4), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((2, 4), "float32")):
        T.func_attr({"op_pattern": 1})
        T.evaluate(0)

    @T.prim_func(private=True)
    def relu(A: T.Buffer((2, 4), "float32"), B: T.Buffer((2, 4), "float32")):
        T.func_attr({"op_pattern": 0})
        T.evaluate(0)

    @T.prim_func(private=True)
    def opaque(A: T.Buffer((2, 4), "float32"), B: T.Buffer((2, 4), "float32")):
        T.func_attr({"op_pattern": 8})
        T.evaluate(0)
"#;

fn with_kernels(funcs: &str) -> String {
    format!("@I.ir_module\nclass Module:\n{KERNELS}\n{funcs}")
}

#[test]
fn a_dense_layer_becomes_one_primitive_function() {
    let before = with_kernels(
        r#"
    @R.function
    def main(x: R.Tensor((2, 8), dtype="float32"), w: R.Tensor((4, 8), dtype="float32"), b: R.Tensor((4,), dtype="float32")) -> R.Tensor((2, 4), dtype="float32"):
        cls = Module
        with R.dataflow():
            wt = R.call_tir(cls.transpose, (w,), out_sinfo=R.Tensor((8, 4), dtype="float32"))
            mm = R.call_tir(cls.matmul, (x, wt), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            ad = R.call_tir(cls.add, (mm, b), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            gv = R.call_tir(cls.relu, (ad,), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            R.output(gv)
        return gv
"#,
    );
    let expected = with_kernels(
        r#"
    @R.function(private=True)
    def fused_transpose_matmul_add_relu(w: R.Tensor((4, 8), dtype="float32"), x: R.Tensor((2, 8), dtype="float32"), b: R.Tensor((4,), dtype="float32")) -> R.Tensor((2, 4), dtype="float32"):
        R.func_attr({"Primitive": True})
        cls = Module
        with R.dataflow():
            wt = R.call_tir(cls.transpose, (w,), out_sinfo=R.Tensor((8, 4), dtype="float32"))
            mm = R.call_tir(cls.matmul, (x, wt), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            ad = R.call_tir(cls.add, (mm, b), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            gv = R.call_tir(cls.relu, (ad,), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            R.output(gv)
        return gv

    @R.function
    def main(x: R.Tensor((2, 8), dtype="float32"), w: R.Tensor((4, 8), dtype="float32"), b: R.Tensor((4,), dtype="float32")) -> R.Tensor((2, 4), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv = cls.fused_transpose_matmul_add_relu(w, x, b)
            R.output(gv)
        return gv
"#,
    );
    check_with(&crate::backend::fuse_ops(), &before, &expected);
    // TVM's grouping: the weight's transpose stays a call of its own.
    let tvm = FuseOps::default().run(module(&before)).unwrap();
    let names: Vec<&str> = tvm.functions().map(|(gv, _)| gv.name_hint()).collect();
    assert!(names.contains(&"fused_matmul_add_relu"), "{tvm}");
    assert!(!names.contains(&"fused_transpose_matmul_add_relu"), "{tvm}");
}

/// The two groups are structurally equal: one function, called twice (TVM's
/// `BlockBuilder::AddFunction`, `test_inception_like`).
#[test]
fn opaque_calls_split_groups_and_equal_groups_are_one_function() {
    let before = with_kernels(
        r#"
    @R.function
    def main(x: R.Tensor((2, 4), dtype="float32"), b: R.Tensor((4,), dtype="float32")) -> R.Tensor((2, 4), dtype="float32"):
        cls = Module
        with R.dataflow():
            a = R.call_tir(cls.add, (x, b), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            r = R.call_tir(cls.relu, (a,), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            o = R.call_tir(cls.opaque, (r,), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            a2 = R.call_tir(cls.add, (o, b), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            gv = R.call_tir(cls.relu, (a2,), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            R.output(gv)
        return gv
"#,
    );
    let group = |name: &str| {
        format!(
            r#"
    @R.function(private=True)
    def {name}(x: R.Tensor((2, 4), dtype="float32"), b: R.Tensor((4,), dtype="float32")) -> R.Tensor((2, 4), dtype="float32"):
        R.func_attr({{"Primitive": True}})
        cls = Module
        with R.dataflow():
            a = R.call_tir(cls.add, (x, b), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            gv = R.call_tir(cls.relu, (a,), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            R.output(gv)
        return gv
"#
        )
    };
    let expected = with_kernels(&format!(
        r#"{}{}
    @R.function
    def main(x: R.Tensor((2, 4), dtype="float32"), b: R.Tensor((4,), dtype="float32")) -> R.Tensor((2, 4), dtype="float32"):
        cls = Module
        with R.dataflow():
            r = cls.fused_add_relu(x, b)
            o = R.call_tir(cls.opaque, (r,), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            gv = cls.fused_add_relu(o, b)
            R.output(gv)
        return gv
"#,
        group("fused_add_relu"),
        ""
    ));
    check(&before, &expected);
}

/// Group-quantized weights (int8 values and a scale per group): their
/// dequantize (a cast, a broadcast multiply), its reshape back to
/// `(out, in)` and the transpose join the matmul that reads them, so the
/// fused kernel loads the int8 bytes (`GraphPartitioner`'s dequantizes).
#[test]
fn a_dequantize_of_integer_weights_fuses_into_the_matmul() {
    let kernels = r#"
    @T.prim_func(private=True)
    def cast(A: T.Buffer((4, 1, 8), "int8"), B: T.Buffer((4, 1, 8), "float32")):
        T.func_attr({"op_pattern": 0})
        T.evaluate(0)

    @T.prim_func(private=True)
    def scale(A: T.Buffer((4, 1, 8), "float32"), S: T.Buffer((4, 1, 1), "float32"), B: T.Buffer((4, 1, 8), "float32")):
        T.func_attr({"op_pattern": 1})
        T.evaluate(0)

    @T.prim_func(private=True)
    def reshape(A: T.Buffer((4, 1, 8), "float32"), B: T.Buffer((4, 8), "float32")):
        T.func_attr({"op_pattern": 2})
        T.evaluate(0)
"#;
    let body = r#"
            c = R.call_tir(cls.cast, (wq,), out_sinfo=R.Tensor((4, 1, 8), dtype="float32"))
            d = R.call_tir(cls.scale, (c, s), out_sinfo=R.Tensor((4, 1, 8), dtype="float32"))
            w = R.call_tir(cls.reshape, (d,), out_sinfo=R.Tensor((4, 8), dtype="float32"))
            wt = R.call_tir(cls.transpose, (w,), out_sinfo=R.Tensor((8, 4), dtype="float32"))
            gv = R.call_tir(cls.matmul, (x, wt), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            R.output(gv)
        return gv
"#;
    let signature = r#"(x: R.Tensor((2, 8), dtype="float32"), wq: R.Tensor((4, 1, 8), dtype="int8"), s: R.Tensor((4, 1, 1), dtype="float32")) -> R.Tensor((2, 4), dtype="float32"):"#;
    let before = with_kernels(&format!(
        r#"{kernels}
    @R.function
    def main{signature}
        cls = Module
        with R.dataflow():{body}"#
    ));
    let expected = with_kernels(&format!(
        r#"{kernels}
    @R.function(private=True)
    def fused_cast_scale_reshape_transpose_matmul(wq: R.Tensor((4, 1, 8), dtype="int8"), s: R.Tensor((4, 1, 1), dtype="float32"), x: R.Tensor((2, 8), dtype="float32")) -> R.Tensor((2, 4), dtype="float32"):
        R.func_attr({{"Primitive": True}})
        cls = Module
        with R.dataflow():{body}
    @R.function
    def main{signature}
        cls = Module
        with R.dataflow():
            gv = cls.fused_cast_scale_reshape_transpose_matmul(wq, s, x)
            R.output(gv)
        return gv
"#
    ));
    check_with(
        &FuseOps::default().injective_weights(true),
        &before,
        &expected,
    );
}

/// Two matrix products meeting in a residual `add` (ResNet's downsampling
/// block, with matmuls for its convolutions): the first product's group,
/// `matmul → add(bias)`, takes the residual add and the relu; the second
/// keeps its bias alone. One group never holds two out-elementwise-fusable
/// ops (TVM's rule); they were one `fused_matmul_add_matmul_add_add2_relu`.
#[test]
fn two_matrix_products_meeting_in_an_add_stay_in_two_groups() {
    let before = with_kernels(
        r#"
    @T.prim_func(private=True)
    def add2(A: T.Buffer((2, 4), "float32"), B: T.Buffer((2, 4), "float32"), C: T.Buffer((2, 4), "float32")):
        T.func_attr({"op_pattern": 0})
        T.evaluate(0)

    @R.function
    def main(x: R.Tensor((2, 8), dtype="float32"), w: R.Tensor((8, 4), dtype="float32"), v: R.Tensor((8, 4), dtype="float32"), b: R.Tensor((4,), dtype="float32")) -> R.Tensor((2, 4), dtype="float32"):
        cls = Module
        with R.dataflow():
            m1 = R.call_tir(cls.matmul, (x, w), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            a1 = R.call_tir(cls.add, (m1, b), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            m2 = R.call_tir(cls.matmul, (x, v), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            a2 = R.call_tir(cls.add, (m2, b), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            s = R.call_tir(cls.add2, (a2, a1), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            gv = R.call_tir(cls.relu, (s,), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            R.output(gv)
        return gv
"#,
    );
    let expected = with_kernels(
        r#"
    @T.prim_func(private=True)
    def add2(A: T.Buffer((2, 4), "float32"), B: T.Buffer((2, 4), "float32"), C: T.Buffer((2, 4), "float32")):
        T.func_attr({"op_pattern": 0})
        T.evaluate(0)

    @R.function(private=True)
    def fused_matmul_add(x: R.Tensor((2, 8), dtype="float32"), v: R.Tensor((8, 4), dtype="float32"), b: R.Tensor((4,), dtype="float32")) -> R.Tensor((2, 4), dtype="float32"):
        R.func_attr({"Primitive": True})
        cls = Module
        with R.dataflow():
            m2 = R.call_tir(cls.matmul, (x, v), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            a2 = R.call_tir(cls.add, (m2, b), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            R.output(a2)
        return a2

    @R.function(private=True)
    def fused_matmul_add_add2_relu(x: R.Tensor((2, 8), dtype="float32"), w: R.Tensor((8, 4), dtype="float32"), b: R.Tensor((4,), dtype="float32"), a2: R.Tensor((2, 4), dtype="float32")) -> R.Tensor((2, 4), dtype="float32"):
        R.func_attr({"Primitive": True})
        cls = Module
        with R.dataflow():
            m1 = R.call_tir(cls.matmul, (x, w), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            a1 = R.call_tir(cls.add, (m1, b), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            s = R.call_tir(cls.add2, (a2, a1), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            gv = R.call_tir(cls.relu, (s,), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            R.output(gv)
        return gv

    @R.function
    def main(x: R.Tensor((2, 8), dtype="float32"), w: R.Tensor((8, 4), dtype="float32"), v: R.Tensor((8, 4), dtype="float32"), b: R.Tensor((4,), dtype="float32")) -> R.Tensor((2, 4), dtype="float32"):
        cls = Module
        with R.dataflow():
            a2 = cls.fused_matmul_add(x, v, b)
            gv = cls.fused_matmul_add_add2_relu(x, w, b, a2)
            R.output(gv)
        return gv
"#,
    );
    check(&before, &expected);
}

#[test]
fn nothing_fuses_outside_a_dataflow_block_or_across_an_output() {
    let before = with_kernels(
        r#"
    @R.function
    def main(x: R.Tensor((2, 4), dtype="float32"), b: R.Tensor((4,), dtype="float32")) -> R.Tuple(R.Tensor((2, 4), dtype="float32"), R.Tensor((2, 4), dtype="float32")):
        cls = Module
        a = R.call_tir(cls.add, (x, b), out_sinfo=R.Tensor((2, 4), dtype="float32"))
        r = R.call_tir(cls.relu, (a,), out_sinfo=R.Tensor((2, 4), dtype="float32"))
        with R.dataflow():
            a1 = R.call_tir(cls.add, (r, b), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            r1 = R.call_tir(cls.relu, (a1,), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            R.output(a1, r1)
        return (a1, r1)
"#,
    );
    // `a1` is visible after its block, so it is a group's root and `r1`
    // (reading it) cannot join it; the first two bindings are not in a
    // dataflow block.
    let after = FuseOps::default().run(module(&before)).unwrap();
    structural_equal_report(&after, &module(&before)).unwrap();
}

#[test]
fn symbolic_shapes_travel_with_the_parameters() {
    let before = r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def exp(A: T.Buffer((n, 4), "float32"), B: T.Buffer((n, 4), "float32")):
        T.func_attr({"op_pattern": 0})
        n = T.int64()
        T.evaluate(0)

    @R.function
    def main(x: R.Tensor(("n", 4), dtype="float32")) -> R.Tensor(("n", 4), dtype="float32"):
        n = T.int64()
        cls = Module
        with R.dataflow():
            a = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((n, 4), dtype="float32"))
            gv = R.call_tir(cls.exp, (a,), out_sinfo=R.Tensor((n, 4), dtype="float32"))
            R.output(gv)
        return gv
"#;
    let after = FuseOps::default().run(module(before)).unwrap();
    crate::analysis::well_formed(&after).unwrap_or_else(|e| panic!("{e:?}\n{after}"));
    let fused = after.get_relax("fused_exp_exp").expect("a fused function");
    assert_eq!(fused.params.len(), 1);
    assert!(
        after
            .to_string()
            .contains("def fused_exp_exp(x: R.Tensor((\"n\", 4), dtype=\"float32\"))"),
        "{after}"
    );
}

/// A group that reshapes a `(b * s, 4)` input to `(b, s, 4)` uses `b` and
/// `s`, which no tensor parameter defines: the function takes them in one
/// `R.Shape([b, s])` parameter, and the call passes the caller's values.
#[test]
fn symbolic_variables_no_parameter_defines_come_in_a_shape() {
    let before = r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def reshape(A: T.Buffer((n, 4), "float32"), B: T.Buffer((b, s, 4), "float32")):
        T.func_attr({"op_pattern": 2})
        n = T.int64()
        b = T.int64()
        s = T.int64()
        T.evaluate(0)

    @T.prim_func(private=True)
    def exp(A: T.Buffer((b, s, 4), "float32"), B: T.Buffer((b, s, 4), "float32")):
        T.func_attr({"op_pattern": 0})
        b = T.int64()
        s = T.int64()
        T.evaluate(0)

    @R.function
    def main(x: R.Tensor(("b", "s", 4), dtype="float32"), y: R.Tensor(("b * s", 4), dtype="float32")) -> R.Tensor(("b", "s", 4), dtype="float32"):
        b = T.int64()
        s = T.int64()
        cls = Module
        with R.dataflow():
            a = R.call_tir(cls.reshape, (y,), out_sinfo=R.Tensor((b, s, 4), dtype="float32"))
            gv = R.call_tir(cls.exp, (a,), out_sinfo=R.Tensor((b, s, 4), dtype="float32"))
            R.output(gv)
        return gv
"#;
    let after = FuseOps::default().run(module(before)).unwrap();
    crate::analysis::well_formed(&after).unwrap_or_else(|e| panic!("{e:?}\n{after}"));
    let fused = after
        .get_relax("fused_reshape_exp")
        .expect("a fused function");
    assert_eq!(fused.params.len(), 2, "{after}");
    let text = after.to_string();
    assert!(text.contains(r#"tir_vars: R.Shape(["b", "s"])"#), "{text}");
    assert!(
        text.contains("cls.fused_reshape_exp(y, R.shape([b, s]))"),
        "{text}"
    );
}

/// The MLP legalized, fused, and run on the loop-level interpreter: the
/// same numbers as without fusion.
#[test]
fn fusion_keeps_the_numbers() {
    use crate::backend::{build, Target};
    use relax_runtime::{Tensor, Value, VirtualMachine};
    let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 8), dtype="float32"), w: R.Tensor((4, 8), dtype="float32"), b: R.Tensor((4,), dtype="float32")) -> R.Tensor(("n", 4), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            wt = R.permute_dims(w)
            mm = R.matmul(x, wt)
            ad = R.add(mm, b)
            r = R.nn.relu(ad)
            e = R.exp(r)
            s = R.sum(e, axis=[1], keepdims=True)
            gv = R.divide(e, s)
            R.output(gv)
        return gv
"#;
    let m = module(text);
    let legal = AnnotateTIROpPattern
        .run(LegalizeOps::default().run(m.clone()).unwrap())
        .unwrap();
    // The pipeline's FuseOps: the weight's transpose joins the matmul.
    let fused = crate::backend::fuse_ops().run(legal.clone()).unwrap();
    crate::analysis::well_formed(&fused).unwrap_or_else(|e| panic!("{e:?}\n{fused}"));
    // The dense layer and its elementwise tail fuse; the reduction (a
    // comm-reduce never starts a fusion) and the division after it (which
    // reads `e` beside the reduction) do not.
    let primitive: Vec<&str> = fused
        .functions()
        .filter(|(_, f)| {
            f.as_relax()
                .is_some_and(|f| f.attrs.get(PRIMITIVE).is_some())
        })
        .map(|(gv, _)| gv.name_hint())
        .collect();
    assert_eq!(
        primitive,
        ["fused_transpose_matmul_add_relu_tir_exp"],
        "{fused}"
    );
    let data = |n: usize, k: f32| (0..n).map(|i| ((i as f32) * k).sin()).collect::<Vec<f32>>();
    let args = vec![
        Value::Tensor(Tensor::from_vec(&[3, 8], data(24, 0.37)).unwrap()),
        Value::Tensor(Tensor::from_vec(&[4, 8], data(32, 0.11)).unwrap()),
        Value::Tensor(Tensor::from_vec(&[4], data(4, 0.5)).unwrap()),
    ];
    let run = |m: &IRModule| {
        let exec = build(m, &Target::tir_interpreter()).unwrap_or_else(|e| panic!("{e}\n{m}"));
        VirtualMachine::new(&exec).call("main", &args).unwrap()
    };
    let (want, got) = (run(&m), run(&fused));
    let (want, got) = (want.as_tensor().unwrap(), got.as_tensor().unwrap());
    assert!(want.allclose(got, 1e-5, 1e-6), "{want} vs {got}");
}

/// TVM's own test cases (`test_transform_fuse_ops.py`, run through TVM 0.27
/// by `scripts/tvm_pass_fixtures.py`): `FuseOps::default()` gives TVM's
/// module, structurally equal with attributes, on the cases of `SAME`.
#[test]
fn fuse_ops_matches_tvm_0_27() {
    const SAME: &[&str] = &[
        "test_call_tir_inplace",
        "test_concatenate",
        "test_conv2d_fuse_0",
        "test_conv2d_fuse_1",
        "test_conv2d_fuse_2",
        "test_dead_group",
        "test_edge_with_call_dps_packed",
        "test_fuse_parallel_injective",
        "test_fuse_simple",
        "test_fuse_tuple_get_elemwise",
        "test_inception_like",
        "test_layer_norm_silu",
        "test_multiple_paths",
        "test_multiple_relax_functions",
        "test_packed_params",
        "test_partially_used_tuple_param",
        "test_shape_expr_arg",
        "test_skip_call_dps_packed",
        "test_skipping_match_cast",
        "test_skipping_primvalue",
        "test_softmax",
        "test_symbolic_shape_aware_fuse",
        "test_symbolic_shape_aware_fuse_2",
        "test_tuple_consecutive",
        "test_tuple_get_root",
        "test_tuple_intermediate",
        "test_tuple_root",
    ];
    const DIFFERENT: &[(&str, &str)] = &[];
    crate::transform::test_util::assert_tvm_cases("fuse_ops", &FuseOps::default(), SAME, DIFFERENT);
}

/// With the build's option, a transpose of the second operand (a weight)
/// joins the matmul, and a transpose of the first (the data, here a
/// function input: `ConvertLayout`'s image permutation) stays a group of
/// its own, so the product does not gather its rows through it.
#[test]
fn a_data_operand_transpose_stays_out_of_the_product() {
    let kernels = r#"
    @T.prim_func(private=True)
    def transpose_x(A: T.Buffer((8, 2), "float32"), B: T.Buffer((2, 8), "float32")):
        T.func_attr({"op_pattern": 2})
        T.evaluate(0)
"#;
    let signature = r#"(x: R.Tensor((8, 2), dtype="float32"), w: R.Tensor((4, 8), dtype="float32")) -> R.Tensor((2, 4), dtype="float32"):"#;
    let before = with_kernels(&format!(
        r#"{kernels}
    @R.function
    def main{signature}
        cls = Module
        with R.dataflow():
            xt = R.call_tir(cls.transpose_x, (x,), out_sinfo=R.Tensor((2, 8), dtype="float32"))
            wt = R.call_tir(cls.transpose, (w,), out_sinfo=R.Tensor((8, 4), dtype="float32"))
            gv = R.call_tir(cls.matmul, (xt, wt), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            R.output(gv)
        return gv
"#
    ));
    let expected = with_kernels(&format!(
        r#"{kernels}
    @R.function(private=True)
    def fused_transpose_matmul(w: R.Tensor((4, 8), dtype="float32"), xt: R.Tensor((2, 8), dtype="float32")) -> R.Tensor((2, 4), dtype="float32"):
        R.func_attr({{"Primitive": True}})
        cls = Module
        with R.dataflow():
            wt = R.call_tir(cls.transpose, (w,), out_sinfo=R.Tensor((8, 4), dtype="float32"))
            gv = R.call_tir(cls.matmul, (xt, wt), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            R.output(gv)
        return gv

    @R.function
    def main{signature}
        cls = Module
        with R.dataflow():
            xt = R.call_tir(cls.transpose_x, (x,), out_sinfo=R.Tensor((2, 8), dtype="float32"))
            gv = cls.fused_transpose_matmul(w, xt)
            R.output(gv)
        return gv
"#
    ));
    check_with(
        &FuseOps::default().injective_weights(true),
        &before,
        &expected,
    );
}

/// A `split` (a `call_tir` of several outputs, bound to a tuple) joins the
/// group of the elementwise ops that read its fields, `TupleGetItem`s and
/// all, as TVM's `fused_split_sigmoid_tanh_exp_multiply_add`: a field read
/// is injective, so the split fuses into the `add` where its paths meet,
/// and the tuple never leaves the group. FuseTIR (TVM's, and the build's)
/// makes the group one PrimFunc, whose numbers are the unfused module's.
#[test]
fn a_split_fuses_with_the_elementwise_ops_reading_its_fields() {
    use crate::backend::{build, Target};
    use crate::transform::FuseTIR;
    use relax_runtime::{Tensor, Value, VirtualMachine};
    let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 12), dtype="float32"), y: R.Tensor((2, 12), dtype="float32")) -> R.Tensor((1, 4), dtype="float32"):
        with R.dataflow():
            s = R.multiply(x, y)
            m = R.sum(s, axis=[0], keepdims=True)
            parts = R.split(m, indices_or_sections=3, axis=1)
            p0 = parts[0]
            a = R.sigmoid(p0)
            p1 = parts[1]
            b = R.tanh(p1)
            p2 = parts[2]
            c = R.exp(p2)
            d = R.subtract(b, c)
            gv = R.add(a, d)
            R.output(gv)
        return gv
"#;
    let m = module(text);
    let legal = AnnotateTIROpPattern
        .run(LegalizeOps::default().run(m.clone()).unwrap())
        .unwrap();
    let fused = FuseOps::default().run(legal).unwrap();
    crate::analysis::well_formed(&fused).unwrap_or_else(|e| panic!("{e:?}\n{fused}"));
    let primitive: Vec<(&str, &Function)> = fused
        .functions()
        .filter_map(|(gv, f)| {
            let f = f.as_relax()?;
            f.attrs.get(PRIMITIVE).map(|_| (gv.name_hint(), f))
        })
        .collect();
    let names: Vec<&str> = primitive.iter().map(|(n, _)| *n).collect();
    // The product and its reduction are a group of their own; the split
    // starts the other, with the three field reads.
    assert_eq!(
        names,
        [
            "fused_multiply_sum",
            "fused_split_tir_sigmoid_tir_tanh_tir_exp_subtract_add"
        ],
        "{fused}"
    );
    let group = primitive[1].1;
    let bindings = &group.body.as_seq().unwrap().blocks[0].bindings;
    assert_eq!(bindings.len(), 9, "{fused}");
    let reads = bindings
        .iter()
        .filter(|b| matches!(b.value().kind(), ExprKind::TupleGetItem(..)))
        .count();
    assert_eq!(reads, 3, "{fused}");
    // main calls the two groups and nothing else.
    let main = fused.get_relax("main").unwrap();
    assert_eq!(
        main.body.as_seq().unwrap().blocks[0].bindings.len(),
        2,
        "{fused}"
    );
    let run = |m: &IRModule| {
        let args = vec![
            Value::Tensor(
                Tensor::from_vec(&[2, 12], (0..24).map(|i| (i as f32 * 0.3).sin()).collect())
                    .unwrap(),
            ),
            Value::Tensor(
                Tensor::from_vec(&[2, 12], (0..24).map(|i| (i as f32 * 0.7).cos()).collect())
                    .unwrap(),
            ),
        ];
        let exec = build(m, &Target::tir_interpreter()).unwrap_or_else(|e| panic!("{e}\n{m}"));
        VirtualMachine::new(&exec).call("main", &args).unwrap()
    };
    let want = run(&m);
    for fuse_tir in [FuseTIR::default(), crate::backend::fuse_tir()] {
        let tir = fuse_tir.run(fused.clone()).unwrap();
        crate::analysis::well_formed(&tir).unwrap_or_else(|e| panic!("{e:?}\n{tir}"));
        assert!(
            tir.functions().all(|(_, f)| f
                .as_relax()
                .is_none_or(|f| f.attrs.get(PRIMITIVE).is_none())),
            "a group FuseTIR did not fuse:\n{tir}"
        );
        assert!(
            tir.get("fused_split_tir_sigmoid_tir_tanh_tir_exp_subtract_add")
                .is_some_and(|f| f.as_prim().is_some()),
            "{tir}"
        );
        let got = run(&tir);
        let (w, g) = (want.as_tensor().unwrap(), got.as_tensor().unwrap());
        assert!(w.allclose(g, 1e-5, 1e-6), "{w} vs {g}\n{tir}");
    }
}

/// TVM's FuseOps keeps an injective op (a reshape) out of a group holding
/// a matmul, even when the op it feeds is the matmul's elementwise
/// epilogue; the build's `injective_producers` puts it in.
#[test]
fn a_reshape_read_by_an_epilogue_joins_it_only_with_injective_producers() {
    let before = with_kernels(
        r#"
    @T.prim_func(private=True)
    def reshape(A: T.Buffer((8,), "float32"), B: T.Buffer((2, 4), "float32")):
        T.func_attr({"op_pattern": 2})
        T.evaluate(0)

    @T.prim_func(private=True)
    def add2(A: T.Buffer((2, 4), "float32"), B: T.Buffer((2, 4), "float32"), C: T.Buffer((2, 4), "float32")):
        T.func_attr({"op_pattern": 0})
        T.evaluate(0)

    @R.function
    def main(x: R.Tensor((2, 8), dtype="float32"), w: R.Tensor((8, 4), dtype="float32"), v: R.Tensor((8,), dtype="float32")) -> R.Tensor((2, 4), dtype="float32"):
        cls = Module
        with R.dataflow():
            mm = R.call_tir(cls.matmul, (x, w), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            rs = R.call_tir(cls.reshape, (v,), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            gv = R.call_tir(cls.add2, (mm, rs), out_sinfo=R.Tensor((2, 4), dtype="float32"))
            R.output(gv)
        return gv
"#,
    );
    let names = |pass: &FuseOps| {
        let after = pass.run(module(&before)).unwrap();
        crate::analysis::well_formed(&after).unwrap_or_else(|e| panic!("{e:?}\n{after}"));
        after
            .functions()
            .filter(|(_, f)| {
                f.as_relax()
                    .is_some_and(|f| f.attrs.get(PRIMITIVE).is_some())
            })
            .map(|(gv, _)| gv.name_hint().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&FuseOps::default()), ["fused_matmul_add2"]);
    assert_eq!(
        names(&FuseOps::default().injective_producers(true)),
        ["fused_matmul_reshape_add2"]
    );
}
