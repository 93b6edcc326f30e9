//! FuseTIR: the shape of the fused module, and differential tests: every
//! op pair the fusion rules allow gives the same numbers fused and unfused,
//! on the loop-level interpreter and through LLVM.

use super::*;
use crate::backend::{build, build_with, Target};
use crate::transform::{AnnotateTIROpPattern, LegalizeOps, PassContext};
use relax_runtime::{Tensor, Value, VirtualMachine};

fn module(text: &str) -> IRModule {
    text.parse().unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// LegalizeOps, AnnotateTIROpPattern, FuseOps, FuseTIR.
fn fuse(m: &IRModule) -> IRModule {
    let m = AnnotateTIROpPattern
        .run(
            LegalizeOps::default()
                .legalized_from(true)
                .run(m.clone())
                .unwrap(),
        )
        .unwrap();
    let m = crate::backend::fuse_ops().run(m).unwrap();
    let m = crate::backend::fuse_tir().run(m).unwrap();
    crate::analysis::well_formed(&m).unwrap_or_else(|e| panic!("{e:?}\n{m}"));
    m
}

/// The number of blocks with iteration variables in a statement.
fn nests(s: &Stmt) -> usize {
    match s {
        Stmt::Block(b) => usize::from(!b.iter_vars.is_empty()) + nests(&b.body),
        Stmt::For { body, .. } | Stmt::Allocate { body, .. } | Stmt::LetStmt { body, .. } => {
            nests(body)
        }
        Stmt::IfThenElse {
            then_case,
            else_case,
            ..
        } => nests(then_case) + else_case.as_ref().map_or(0, |e| nests(e)),
        Stmt::Seq(stmts) => stmts.iter().map(nests).sum(),
        Stmt::BufferStore { .. } | Stmt::Evaluate(_) => 0,
    }
}

fn prim<'a>(m: &'a IRModule, name: &str) -> &'a PrimFunc {
    m.get(name)
        .and_then(|f| f.as_prim())
        .unwrap_or_else(|| panic!("no PrimFunc {name} in\n{m}"))
}

const CHAIN: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 16), dtype="float32"), y: R.Tensor(("n", 16), dtype="float32"), z: R.Tensor((16,), dtype="float32")) -> R.Tensor(("n", 16), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            a = R.add(x, y)
            b = R.multiply(a, z)
            c = R.nn.relu(b)
            gv = R.exp(c)
            R.output(gv)
        return gv
"#;

#[test]
fn an_elementwise_chain_becomes_one_loop_nest() {
    let m = fuse(&module(CHAIN));
    let f = prim(&m, "fused_add_multiply_relu_tir_exp");
    assert_eq!(nests(&f.body), 1, "one nest after inlining:\n{m}");
    let Stmt::Block(root) = &f.body else { panic!() };
    assert!(root.alloc_buffers.is_empty(), "no intermediate left:\n{m}");
    assert_eq!(f.params.len(), 4, "x, y, z and the result");
    // The call site is one call_tir; the primitive function is gone.
    let main = m.get_relax("main").unwrap();
    let text = crate::printer::function_to_string("main", main);
    assert!(
        text.contains("R.call_tir(cls.fused_add_multiply_relu_tir_exp, (x, y, z)"),
        "{text}"
    );
    assert!(
        m.functions().all(|(_, f)| f
            .as_relax()
            .is_none_or(|f| f.attrs.get(PRIMITIVE).is_none())),
        "{m}"
    );
}

#[test]
fn a_transpose_feeding_a_matmul_becomes_an_index_swap_and_the_epilogue_is_one_pass() {
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
            gv = R.nn.relu(ad)
            R.output(gv)
        return gv
"#;
    let m = fuse(&module(text));
    let f = prim(&m, "fused_transpose_matmul_add_relu");
    // The matmul (reading `w` transposed), and add+relu in one nest.
    assert_eq!(nests(&f.body), 2, "{m}");
    let Stmt::Block(root) = &f.body else { panic!() };
    let names: Vec<&str> = root.alloc_buffers.iter().map(|b| b.name()).collect();
    assert_eq!(names, ["mm"], "{m}");
    let text = m.to_string();
    assert!(text.contains("x[v_ax0, v_k] * w[v_ax1, v_k]"), "{text}");
}

/// Group-quantized weights (int8 values in groups of 8 along `k`, a scale
/// per group): the dequantize is inlined into the matmul, which reads the
/// int8 values at `k // 8` and `k % 8`: one nest, no float copy.
#[test]
fn a_grouped_dequantize_is_inlined_into_its_matmul() {
    let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 16), dtype="float32"), wq: R.Tensor((4, 2, 8), dtype="int8"), s: R.Tensor((4, 2, 1), dtype="float32")) -> R.Tensor(("n", 4), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            c = R.astype(wq, "float32")
            d = R.multiply(c, s)
            r = R.reshape(d, R.shape([4, 16]))
            wt = R.permute_dims(r)
            y = R.matmul(x, wt)
            R.output(y)
        return y
"#;
    let m = fuse(&module(text));
    let f = prim(&m, "fused_astype_multiply_reshape_transpose_matmul");
    let Stmt::Block(root) = &f.body else { panic!() };
    assert!(root.alloc_buffers.is_empty(), "{m}");
    assert_eq!(nests(&f.body), 1, "{m}");
}

/// The loop-level interpreter, and LLVM when it is built in.
fn targets() -> Vec<Target> {
    let mut t = vec![Target::tir_interpreter()];
    if cfg!(feature = "llvm") {
        t.push(Target::host());
    }
    t
}

/// Builds `text` with and without fusion for `target` and compares.
fn same_numbers(text: &str, args: &[Value], target: &Target) {
    let m = module(text);
    let unfused_ctx = PassContext::new().disable("FuseOps").disable("FuseTIR");
    let run =
        |exec: relax_runtime::Executable| VirtualMachine::new(&exec).call("main", args).unwrap();
    let want = run(build_with(&m, target, &unfused_ctx).unwrap());
    let got = run(build(&m, target).unwrap_or_else(|e| panic!("{e}")));
    let (want, got) = (want.as_tensor().unwrap(), got.as_tensor().unwrap());
    assert!(
        want.allclose(got, 1e-5, 1e-5),
        "{target:?}: {want}\nvs\n{got}"
    );
}

fn tensor(shape: &[i64], seed: f32) -> Value {
    let n: i64 = shape.iter().product();
    let data = (0..n)
        .map(|i| ((i as f32) * seed + seed).sin())
        .collect::<Vec<f32>>();
    Value::Tensor(Tensor::from_vec(shape, data).unwrap())
}

fn case(body: &str, params: &str, ret: &str) -> String {
    format!(
        r#"
@I.ir_module
class Module:
    @R.function
    def main({params}) -> {ret}:
        with R.dataflow():
{body}
            R.output(gv)
        return gv
"#
    )
}

#[test]
fn every_fusable_pair_gives_the_same_numbers_on_every_target() {
    let t = |s: &str| format!("R.Tensor({s}, dtype=\"float32\")");
    let cases: Vec<(&str, String, Vec<Value>)> = vec![
        (
            "elementwise -> elementwise",
            case(
                "            a = R.add(x, y)\n            gv = R.nn.relu(a)",
                &format!("x: {}, y: {}", t("(5, 7)"), t("(5, 7)")),
                &t("(5, 7)"),
            ),
            vec![tensor(&[5, 7], 0.3), tensor(&[5, 7], 0.7)],
        ),
        (
            "broadcast -> elementwise",
            case(
                "            a = R.multiply(x, y)\n            gv = R.exp(a)",
                &format!("x: {}, y: {}", t("(5, 7)"), t("(7,)")),
                &t("(5, 7)"),
            ),
            vec![tensor(&[5, 7], 0.3), tensor(&[7], 0.9)],
        ),
        (
            "injective -> matmul",
            case(
                "            a = R.permute_dims(w)\n            gv = R.matmul(x, a)",
                // k = 21: one 16-lane chunk and a tail of 5.
                &format!("x: {}, w: {}", t("(3, 21)"), t("(5, 21)")),
                &t("(3, 5)"),
            ),
            vec![tensor(&[3, 21], 0.2), tensor(&[5, 21], 0.5)],
        ),
        (
            "reshape -> elementwise",
            case(
                "            a = R.reshape(x, R.shape([6, 5]))\n            gv = R.nn.relu(a)",
                &format!("x: {}", t("(3, 10)")),
                &t("(6, 5)"),
            ),
            vec![tensor(&[3, 10], 0.4)],
        ),
        (
            "matmul -> add -> relu",
            case(
                "            a = R.matmul(x, w)\n            b = R.add(a, c)\n            gv = R.nn.relu(b)",
                &format!("x: {}, w: {}, c: {}", t("(4, 6)"), t("(6, 3)"), t("(3,)")),
                &t("(4, 3)"),
            ),
            vec![tensor(&[4, 6], 0.2), tensor(&[6, 3], 0.8), tensor(&[3], 1.1)],
        ),
        (
            "elementwise -> reduction",
            case(
                "            a = R.exp(x)\n            gv = R.sum(a, axis=[1])",
                &format!("x: {}", t("(4, 6)")),
                &t("(4,)"),
            ),
            vec![tensor(&[4, 6], 0.2)],
        ),
    ];
    // Softmax (a row max, exps, a row sum, a division) and a row max
    // alone: reductions over the contiguous axis, vectorized with `max`
    // and `+` as the combiner; nothing fuses, but every target must agree.
    for (text, shape) in [
        (
            case(
                "            gv = R.nn.softmax(x, axis=-1)",
                &format!("x: {}", t("(5, 37)")),
                &t("(5, 37)"),
            ),
            [5, 37],
        ),
        (
            case(
                "            gv = R.max(x, axis=[1])",
                &format!("x: {}", t("(5, 37)")),
                &t("(5,)"),
            ),
            [5, 37],
        ),
    ] {
        for target in targets() {
            same_numbers(&text, &[tensor(&shape, 0.3)], &target);
        }
        if cfg!(feature = "llvm") {
            let m = module(&text);
            let want = build(&m, &Target::interpreter()).unwrap();
            let got = build(&m, &Target::host()).unwrap();
            let args = [tensor(&shape, 0.3)];
            let (w, g) = (
                VirtualMachine::new(&want).call("main", &args).unwrap(),
                VirtualMachine::new(&got).call("main", &args).unwrap(),
            );
            assert!(w
                .as_tensor()
                .unwrap()
                .allclose(g.as_tensor().unwrap(), 1e-5, 1e-6));
        }
    }
    for (name, text, args) in &cases {
        let fused = fuse(&module(text));
        let count = fused
            .functions()
            .filter(|(gv, _)| gv.name_hint().starts_with("fused_"))
            .count();
        assert_eq!(count, 1, "{name}: one fused kernel\n{fused}");
        for target in targets() {
            same_numbers(text, args, &target);
        }
    }
}

#[test]
fn the_mlp_with_a_symbolic_batch_gives_the_same_numbers() {
    let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 64), dtype="float32"), w0: R.Tensor((32, 64), dtype="float32"), b0: R.Tensor((32,), dtype="float32"), w1: R.Tensor((10, 32), dtype="float32"), b1: R.Tensor((10,), dtype="float32")) -> R.Tensor(("n", 10), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            t0 = R.permute_dims(w0)
            lv0 = R.matmul(x, t0)
            lv1 = R.add(lv0, b0)
            lv2 = R.nn.relu(lv1)
            t1 = R.permute_dims(w1)
            lv3 = R.matmul(lv2, t1)
            gv = R.add(lv3, b1)
            R.output(gv)
        return gv
"#;
    for batch in [1, 7] {
        let args = vec![
            tensor(&[batch, 64], 0.1),
            tensor(&[32, 64], 0.3),
            tensor(&[32], 0.5),
            tensor(&[10, 32], 0.7),
            tensor(&[10], 0.9),
        ];
        for target in targets() {
            same_numbers(text, &args, &target);
        }
    }
}

/// GPT-2's MLP: a matmul on `(b * s, 8)` rows reshaped to `(b, s, 16)`
/// before an elementwise GELU. The fused elementwise kernel gets `b` and
/// `s` as scalar parameters, passed as `tir_vars`, and the numbers are
/// those of the unfused build at two shapes on every target.
#[test]
fn a_group_over_a_reshaped_product_takes_its_dims_as_tir_vars() {
    let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(h: R.Tensor(("b", "s", 8), dtype="float32"), w: R.Tensor((8, 16), dtype="float32")) -> R.Tensor(("b", "s", 16), dtype="float32"):
        b = T.int64()
        s = T.int64()
        with R.dataflow():
            h2 = R.reshape(h, R.shape([b * s, 8]))
            m = R.matmul(h2, w)
            x = R.reshape(m, R.shape([b, s, 16]))
            p = R.power(x, R.const(3.0, "float32"))
            q = R.multiply(p, R.const(0.044715, "float32"))
            r = R.add(x, q)
            t = R.tanh(r)
            u = R.add(t, R.const(1.0, "float32"))
            gv = R.multiply(x, u)
            R.output(gv)
        return gv
"#;
    let fused = fuse(&module(text));
    let printed = fused.to_string();
    let gelu = fused
        .functions()
        .find_map(|(gv, f)| {
            (gv.name_hint().contains("tanh"))
                .then(|| f.as_prim().cloned())
                .flatten()
        })
        .unwrap_or_else(|| panic!("one kernel for the GELU\n{printed}"));
    assert_eq!(nests(&gelu.body), 1, "{printed}");
    assert!(
        matches!(
            gelu.params.last(),
            Some(crate::tir::PrimFuncParam::Scalar(_))
        ),
        "{printed}"
    );
    assert!(printed.contains("tir_vars=R.shape([b, s])"), "{printed}");
    for (batch, seq) in [(1, 3), (2, 5)] {
        let args = vec![tensor(&[batch, seq, 8], 0.3), tensor(&[8, 16], 0.2)];
        for target in targets() {
            same_numbers(text, &args, &target);
        }
    }
}

/// Members that pass `tir_vars` (a matmul and its bias add on `(b * s, 8)`
/// rows, whose `b` and `s` no tensor parameter of the group defines): the
/// fused kernel takes `b` and `s` as scalars and gives each member's
/// scalar parameters their values.
#[test]
fn members_with_tir_vars_fuse() {
    let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("b", "s", 16), dtype="float32"), h: R.Tensor(("b * s", 8), dtype="float32"), w: R.Tensor((8, 16), dtype="float32"), bias: R.Tensor((16,), dtype="float32")) -> R.Tensor(("b", "s", 16), dtype="float32"):
        b = T.int64()
        s = T.int64()
        with R.dataflow():
            m = R.matmul(h, w)
            mb = R.add(m, bias)
            r = R.reshape(mb, R.shape([b, s, 16]))
            gv = R.add(r, x)
            R.output(gv)
        return gv
"#;
    let fused = fuse(&module(text));
    let printed = fused.to_string();
    assert!(printed.contains("fused_matmul_add"), "{printed}");
    for (batch, seq) in [(1, 3), (2, 5)] {
        let args = vec![
            tensor(&[batch, seq, 16], 0.4),
            tensor(&[batch * seq, 8], 0.3),
            tensor(&[8, 16], 0.2),
            tensor(&[16], 0.6),
        ];
        for target in targets() {
            same_numbers(text, &args, &target);
        }
    }
}

/// BERT's split into heads on a symbolic sequence: reshape, transpose,
/// scale. Inlined, the reshape's index arithmetic divides by `s`; the
/// fused kernel's indices are simplified under `j < s` and divide by
/// nothing, and the numbers are the unfused ones.
#[test]
fn an_inlined_head_split_indexes_without_division() {
    let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("b", "s", 8), dtype="float32")) -> R.Tensor(("b", 2, "s", 4), dtype="float32"):
        b = T.int64()
        s = T.int64()
        with R.dataflow():
            r = R.reshape(x, R.shape([b, s, 2, 4]))
            t = R.permute_dims(r, axes=[0, 2, 1, 3])
            gv = R.multiply(t, R.const(0.5, "float32"))
            R.output(gv)
        return gv
"#;
    let fused = fuse(&module(text));
    let kernel = fused
        .functions()
        .find_map(|(gv, f)| {
            gv.name_hint()
                .starts_with("fused_")
                .then(|| f.as_prim().cloned())
                .flatten()
        })
        .expect("one fused kernel");
    let printed =
        IRModule::from_functions([(GlobalVar::new("k"), BaseFunc::Prim(kernel))]).to_string();
    assert!(
        !printed.contains("//") && !printed.contains(" % "),
        "{printed}"
    );
    for (batch, seq) in [(1, 3), (2, 5)] {
        let args = vec![tensor(&[batch, seq, 8], 0.3)];
        for target in targets() {
            same_numbers(text, &args, &target);
        }
    }
}

/// Weights embedded as constants (as the ONNX importer and `BindParams`
/// leave them): each constant a call of the group takes becomes a buffer
/// parameter of the fused PrimFunc, before the result, and the call site
/// passes it; a constant taken twice is one parameter. The numbers are
/// those of the unfused build on every target.
#[test]
fn constants_of_a_fused_group_are_lifted_to_parameters() {
    let text = case(
        "            a = R.matmul(x, w)
            b = R.add(a, s)
            c = R.multiply(b, s)
            gv = R.nn.relu(c)",
        r#"x: R.Tensor((4, 8), dtype="float32"), w: R.Tensor((8, 16), dtype="float32"), s: R.Tensor((16,), dtype="float32")"#,
        r#"R.Tensor((4, 16), dtype="float32")"#,
    );
    let bind = |m: IRModule| {
        let t = |v: Value| v.as_tensor().unwrap().clone();
        let params = [
            ("w".to_string(), t(tensor(&[8, 16], 0.3))),
            ("s".to_string(), t(tensor(&[16], 0.7))),
        ];
        crate::transform::BindParams::new("main", params)
            .run(m)
            .unwrap()
    };
    let bound = bind(module(&text));
    let m = fuse(&bound);
    let f = prim(&m, "fused_matmul_add_multiply_relu");
    assert_eq!(
        f.params.len(),
        4,
        "x, the two constants and the result:\n{m}"
    );
    let main = crate::printer::function_to_string("main", m.get_relax("main").unwrap());
    assert!(
        main.contains("R.call_tir(cls.fused_matmul_add_multiply_relu, (x, R.const("),
        "{main}"
    );
    assert_eq!(main.matches("R.const(").count(), 2, "{main}");
    let x = [tensor(&[4, 8], 0.11)];
    let bound_text = bound.to_string();
    for target in targets() {
        same_numbers(&bound_text, &x, &target);
    }
}

/// TVM's `test_simple` (test_transform_fuse_tir.py), FuseTIR alone: the
/// PrimFuncs the primitive function called leave the module, which holds
/// the fused PrimFunc and `main` only; a PrimFunc `main` still calls
/// directly (`exp`, here) stays.
#[test]
fn the_fused_prim_funcs_leave_the_module_as_in_tvm() {
    let text = r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add(A: T.Buffer((T.int64(10), T.int64(20)), "float32"), B: T.Buffer((T.int64(10), T.int64(20)), "float32"), C: T.Buffer((T.int64(10), T.int64(20)), "float32")):
        for i, j in T.grid(T.int64(10), T.int64(20)):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] + B[vi, vj]

    @T.prim_func(private=True)
    def exp(A: T.Buffer((T.int64(10), T.int64(20)), "float32"), B: T.Buffer((T.int64(10), T.int64(20)), "float32")):
        for i, j in T.grid(T.int64(10), T.int64(20)):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = T.exp(A[vi, vj])

    @R.function(private=True)
    def fused_add_exp(x: R.Tensor((10, 20), dtype="float32"), p0: R.Tensor((10, 20), dtype="float32")) -> R.Tensor((10, 20), dtype="float32"):
        R.func_attr({"Primitive": 1})
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.add, (x, p0), out_sinfo=R.Tensor((10, 20), dtype="float32"))
            gv = R.call_tir(cls.exp, (lv,), out_sinfo=R.Tensor((10, 20), dtype="float32"))
            R.output(gv)
        return gv

    @R.function
    def main(x: R.Tensor((10, 20), dtype="float32"), p0: R.Tensor((10, 20), dtype="float32")) -> R.Tensor((10, 20), dtype="float32"):
        cls = Module
        with R.dataflow():
            a = cls.fused_add_exp(x, p0)
            gv = R.call_tir(cls.exp, (a,), out_sinfo=R.Tensor((10, 20), dtype="float32"))
            R.output(gv)
        return gv
"#;
    let before = module(text);
    let after = FuseTIR::default().run(before.clone()).unwrap();
    crate::analysis::well_formed(&after).unwrap_or_else(|e| panic!("{e:?}\n{after}"));
    let mut names: Vec<&str> = after.functions().map(|(gv, _)| gv.name_hint()).collect();
    names.sort_unstable();
    assert_eq!(names, ["exp", "fused_add_exp", "main"], "{after}");
    assert!(prim(&after, "fused_add_exp").params.len() == 3, "{after}");
    // Without `main`'s direct call, `exp` goes too.
    let alone = text.replace(
        "gv = R.call_tir(cls.exp, (a,), out_sinfo=R.Tensor((10, 20), dtype=\"float32\"))",
        "gv = a",
    );
    let after = FuseTIR::default().run(module(&alone)).unwrap();
    let mut names: Vec<&str> = after.functions().map(|(gv, _)| gv.name_hint()).collect();
    names.sort_unstable();
    assert_eq!(names, ["fused_add_exp", "main"], "{after}");
    for target in targets() {
        same_numbers(
            &alone,
            &[tensor(&[10, 20], 0.2), tensor(&[10, 20], 0.4)],
            &target,
        );
    }
}

/// A group whose first call (`add2`, given `x` twice) allocates a scratch
/// buffer in its root block and computes an intermediate (`lv`).
const SCRATCH_AND_SHARED_ARGUMENT: &str = r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add2(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
        tmp = T.alloc_buffer((4,))
        for i in range(4):
            with T.block("tmp"):
                vi = T.axis.spatial(4, i)
                T.reads(A[vi])
                T.writes(tmp[vi])
                tmp[vi] = A[vi]
        for i in range(4):
            with T.block("C"):
                vi = T.axis.spatial(4, i)
                T.reads(tmp[vi], A[vi], B[3 - vi])
                T.writes(C[vi])
                C[vi] = tmp[vi] + A[vi] * B[3 - vi]

    @T.prim_func(private=True)
    def exp(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                T.reads(A[vi])
                T.writes(B[vi])
                B[vi] = T.exp(A[vi])

    @R.function(private=True)
    def fused_add2_exp(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        R.func_attr({"Primitive": True})
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.add2, (x, x), out_sinfo=R.Tensor((4,), dtype="float32"))
            gv = R.call_tir(cls.exp, (lv,), out_sinfo=R.Tensor((4,), dtype="float32"))
            R.output(gv)
        return gv

    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        cls = Module
        with R.dataflow():
            gv = cls.fused_add2_exp(x)
            R.output(gv)
        return gv
"#;

/// The blocks of `s` by name, depth first.
fn blocks<'a>(s: &'a Stmt, out: &mut Vec<&'a Block>) {
    match s {
        Stmt::Block(b) => {
            out.push(b);
            blocks(&b.body, out);
        }
        Stmt::For { body, .. } | Stmt::Allocate { body, .. } | Stmt::LetStmt { body, .. } => {
            blocks(body, out)
        }
        Stmt::IfThenElse {
            then_case,
            else_case,
            ..
        } => {
            blocks(then_case, out);
            if let Some(e) = else_case {
                blocks(e, out);
            }
        }
        Stmt::Seq(stmts) => stmts.iter().for_each(|s| blocks(s, out)),
        Stmt::BufferStore { .. } | Stmt::Evaluate(_) => {}
    }
}

/// The read regions of the block named `name` in `f`, printed.
fn reads_of(f: &PrimFunc, name: &str) -> Vec<String> {
    let mut all = Vec::new();
    blocks(&f.body, &mut all);
    let b = all
        .into_iter()
        .find(|b| b.name == name)
        .unwrap_or_else(|| panic!("no block {name}"));
    b.reads
        .iter()
        .map(|r| {
            let dims: Vec<String> = r.region.iter().map(|(min, _)| min.to_string()).collect();
            format!("{}[{}]", r.buffer.name(), dims.join(", "))
        })
        .collect()
}

/// As TVM's FuseTIR orders the fused function's allocations: a call's
/// PrimFunc's own root allocations (`tmp`), then the intermediate the
/// call computes (`lv`).
#[test]
fn a_calls_root_allocations_come_before_the_intermediate_it_computes() {
    let after = FuseTIR::default()
        .run(module(SCRATCH_AND_SHARED_ARGUMENT))
        .unwrap();
    let Stmt::Block(root) = &prim(&after, "fused_add2_exp").body else {
        panic!("{after}")
    };
    let names: Vec<&str> = root.alloc_buffers.iter().map(|b| b.name()).collect();
    assert_eq!(names, ["tmp", "lv"], "{after}");
}

/// A PrimFunc given one tensor for two parameters reads one buffer
/// through both: `FuseTIR::default()` keeps, as TVM's does, the first of
/// that buffer's read regions (`x[vi]`, not `x[3 - vi]`); the build's
/// FuseTIR keeps both, which the schedule primitives and buffer
/// compaction read. Fused or not, the numbers are the same.
#[test]
fn regions_of_one_buffer_keep_the_first_in_tvms_layout_only() {
    let m = module(SCRATCH_AND_SHARED_ARGUMENT);
    let after = FuseTIR::default().run(m.clone()).unwrap();
    let f = prim(&after, "fused_add2_exp");
    let reads = reads_of(f, "C");
    assert_eq!(reads.len(), 2, "{after}");
    assert_eq!(reads[1], "x[vi]", "{after}");
    // Built, `C` (and `tmp` into it) is inlined into `B`, which keeps
    // both of `x`'s regions.
    let built = FuseTIR::default().inline_producers(true).run(m).unwrap();
    let reads = reads_of(prim(&built, "fused_add2_exp"), "B");
    assert!(
        reads.iter().any(|r| r.contains("3 - ")),
        "{reads:?}\n{built}"
    );
    for target in targets() {
        same_numbers(SCRATCH_AND_SHARED_ARGUMENT, &[tensor(&[4], 0.3)], &target);
    }
}

/// A group with a shape parameter (`len`, the value `m`) between its
/// tensors, whose call passes `m` to a scalar parameter of its PrimFunc
/// as `R.prim_value(m)`.
const SCALAR_ARGUMENT: &str = r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def shift(X: T.Buffer((8,), "float32"), m: T.int64, Y: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("Y"):
                vi = T.axis.spatial(8, i)
                T.reads(X[vi])
                T.writes(Y[vi])
                Y[vi] = X[vi] + T.Cast("float32", m)

    @T.prim_func(private=True)
    def add(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                T.reads(A[vi], B[vi])
                T.writes(C[vi])
                C[vi] = A[vi] + B[vi]

    @R.function(private=True)
    def fused_shift_add(x: R.Tensor((8,), dtype="float32"), len: R.Shape(["m"]), y: R.Tensor((8,), dtype="float32")) -> R.Tensor((8,), dtype="float32"):
        R.func_attr({"Primitive": True})
        cls = Module
        m = T.int64()
        with R.dataflow():
            lv = R.call_tir(cls.shift, (x, R.prim_value(m)), out_sinfo=R.Tensor((8,), dtype="float32"))
            gv = R.call_tir(cls.add, (lv, y), out_sinfo=R.Tensor((8,), dtype="float32"))
            R.output(gv)
        return gv

    @R.function
    def main(x: R.Tensor((8,), dtype="float32"), len: R.Shape(["m"]), y: R.Tensor((8,), dtype="float32")) -> R.Tensor((8,), dtype="float32"):
        cls = Module
        m = T.int64()
        with R.dataflow():
            gv = cls.fused_shift_add(x, len, y)
            R.output(gv)
        return gv
"#;

/// The parameters of `f`, printed: a buffer's name, or `scalar name`.
fn param_names(f: &PrimFunc) -> Vec<String> {
    f.params
        .iter()
        .map(|p| match p {
            PrimFuncParam::Buffer(b) => b.name().to_string(),
            PrimFuncParam::Scalar(v) => format!("scalar {}", v.name()),
        })
        .collect()
}

/// A call passing `R.prim_value(m)` to a scalar parameter fuses: the
/// scalar takes `m`. In TVM's layout (`FuseTIR::default()`) the shape
/// parameter's `m` is a scalar parameter where the shape was, before the
/// result, and the call site passes `R.prim_value(m)` there; in the
/// build's it follows the result and the call passes `tir_vars`.
#[test]
fn a_shape_parameter_is_a_scalar_in_its_place_in_tvms_layout() {
    let m = module(SCALAR_ARGUMENT);
    let after = FuseTIR::default().run(m.clone()).unwrap();
    crate::analysis::well_formed(&after).unwrap_or_else(|e| panic!("{e:?}\n{after}"));
    let f = prim(&after, "fused_shift_add");
    assert_eq!(param_names(f), ["x", "scalar m", "y", "gv"], "{after}");
    let main = crate::printer::function_to_string("main", after.get_relax("main").unwrap());
    assert!(
        main.contains("R.call_tir(cls.fused_shift_add, (x, R.prim_value(m), y)"),
        "{main}"
    );
    assert!(after.get("shift").is_none(), "{after}");
    let built = FuseTIR::default().inline_producers(true).run(m).unwrap();
    let f = prim(&built, "fused_shift_add");
    assert_eq!(param_names(f), ["x", "y", "gv", "scalar m"], "{built}");
    let main = crate::printer::function_to_string("main", built.get_relax("main").unwrap());
    assert!(main.contains("(x, y), out_ty"), "{main}");
    assert!(main.contains("tir_vars=len"), "{main}");
}

/// TVM's own test cases (`test_transform_fuse_tir.py`, run through TVM 0.27
/// by `scripts/tvm_pass_fixtures.py`): `FuseTIR::default()` gives TVM's
/// module, structurally equal with attributes, on the cases of `SAME`.
#[test]
fn fuse_tir_matches_tvm_0_27() {
    const SAME: &[&str] = &[
        "test_block_name_numeric_suffix_deduplication",
        "test_conv2d_fuse",
        "test_extern_func",
        "test_fuse_inplace_and_non_inplace",
        "test_fuse_of_dynamic_kernel_with_expression_params_and_static_args",
        "test_fuse_of_dynamic_kernel_with_var_params_and_static_args",
        "test_fuse_return_partial_result",
        "test_fuse_same_primfunc",
        "test_fuse_tuple_output",
        "test_fuse_with_call_tir_in_main",
        "test_fuse_with_const_in_argument",
        "test_fuse_with_immediate_tuple",
        "test_fuse_with_nested_tuple_as_param",
        "test_fuse_with_tuple_as_param",
        "test_gather",
        "test_inplace_simple",
        "test_multiple_relax_functions",
        "test_private_nonprimitive_func",
        "test_same_buffer_multiple_read",
        "test_simple",
        "test_skip_call_dps_packed",
        "test_symbolic_shape_aware_fuse",
        "test_symbolic_shape_aware_fuse_with_allocation",
        "test_symbolic_var_called_with_multiple_static_shapes",
        "test_symbolic_var_called_with_static_argument",
        "test_symbolic_var_called_with_static_shape",
        "test_symbolic_var_in_buffer_shape",
        "test_symbolic_var_in_call_tir_args",
        "test_tir_expression_in_shape",
        "test_tuple_input_unused_field",
        "test_two_subfunction",
        "test_unique_duplicated_buffer_allocation",
        "test_use_as_inplace_and_dps",
    ];
    const DIFFERENT: &[(&str, &str)] = &[];
    crate::transform::test_util::assert_tvm_cases("fuse_tir", &FuseTIR::default(), SAME, DIFFERENT);
}

/// A channel shuffle (ShuffleNet's, in NHWC): a concat, the shuffle's
/// reshape, transpose and reshape, and a split whose two fields feed two
/// products. The split is a call of two outputs: FuseOps groups it with
/// its producers, and FuseTIR makes the group one PrimFunc of two result
/// buffers (the call site a `call_tir` of two `out_sinfo`), which gives
/// the unfused numbers on every target (`DefaultSchedule` splits its
/// channel loop into interleaved stores, `interleave.rs`).
#[test]
fn a_split_of_two_outputs_fuses_with_its_producers() {
    let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(a: R.Tensor(("n", 3, 6), dtype="float32"), b: R.Tensor(("n", 3, 6), dtype="float32"), w: R.Tensor((6, 5), dtype="float32")) -> R.Tensor(("n", 3, 5), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            c = R.concat((a, b), axis=2)
            r = R.reshape(c, R.shape([n, 3, 2, 6]))
            t = R.permute_dims(r, axes=[0, 1, 3, 2])
            s = R.reshape(t, R.shape([n, 3, 12]))
            parts = R.split(s, indices_or_sections=2, axis=2)
            p0 = parts[0]
            p1 = parts[1]
            m0 = R.matmul(p0, w)
            m1 = R.matmul(p1, w)
            gv = R.add(m0, m1)
            R.output(gv)
        return gv
"#;
    let fused = fuse(&module(text));
    let printed = fused.to_string();
    let shuffle = fused
        .functions()
        .find_map(|(gv, f)| {
            (gv.name_hint().starts_with("fused_concat") && gv.name_hint().contains("split"))
                .then(|| f.as_prim().cloned())
                .flatten()
        })
        .unwrap_or_else(|| panic!("no fused shuffle PrimFunc in\n{printed}"));
    let buffers = shuffle
        .params
        .iter()
        .filter(|p| matches!(p, PrimFuncParam::Buffer(_)))
        .count();
    assert_eq!(buffers, 4, "two inputs and two results:\n{printed}");
    // Nothing is left calling a Relax primitive function.
    assert!(!printed.contains("= cls.fused_"), "{printed}");
    // 4000 rows take the parallel side of the fused kernel's run-time
    // guard.
    for batch in [1, 2, 4000] {
        let args = vec![
            tensor(&[batch, 3, 6], 0.3),
            tensor(&[batch, 3, 6], 0.7),
            tensor(&[6, 5], 1.1),
        ];
        for target in targets() {
            same_numbers(text, &args, &target);
        }
    }
}
