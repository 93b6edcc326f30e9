//! `build` and the VM lowering of `call_tir`, run on a test library of
//! kernels written in Rust (the PrimFuncs' bodies are not run: the test
//! library stands in for the interpreter and LLVM).

use super::*;
use crate::ir::IRModule;
use relax_runtime::executable::{Callee, Instr, SymExpr};
use relax_runtime::native::{NativeKernel, NativeLibrary};
use relax_runtime::{Tensor, Value, VirtualMachine};
use std::sync::Arc;

/// Kernels by symbol: `add_one` (out = in + 1), `add` (out = in0 + in1),
/// `scalars` (writes the scalars it receives into its int64 output).
struct TestLibrary;

struct TestKernel(&'static str);

impl NativeKernel for TestKernel {
    fn call(
        &self,
        inputs: &[&Tensor],
        outputs: &mut [Tensor],
        scalars: &[i64],
    ) -> Result<(), String> {
        let out = outputs.first_mut().ok_or("no output")?;
        let shape = out.shape().to_vec();
        let f32s = |t: &Tensor| t.to_vec::<f32>().map_err(|e| e.to_string());
        *out = match self.0 {
            "add_one" => {
                let x = f32s(inputs[0])?;
                if x.len() != out.numel() {
                    return Err("add_one: input and output sizes differ".into());
                }
                Tensor::from_vec(&shape, x.iter().map(|v| v + 1.0).collect())
            }
            "add" => {
                let (x, y) = (f32s(inputs[0])?, f32s(inputs[1])?);
                Tensor::from_vec(&shape, x.iter().zip(&y).map(|(a, b)| a + b).collect())
            }
            "scalars" => {
                if out.numel() != scalars.len() {
                    return Err(format!(
                        "scalars: {} scalars for an output of {}",
                        scalars.len(),
                        out.numel()
                    ));
                }
                Tensor::from_vec(&shape, scalars.to_vec())
            }
            other => return Err(format!("no test kernel {other}")),
        }
        .map_err(|e| e.to_string())?;
        Ok(())
    }
}

impl NativeLibrary for TestLibrary {
    fn lookup(&self, symbol: &str) -> Option<Arc<dyn NativeKernel>> {
        let name = ["add_one", "add", "scalars"]
            .into_iter()
            .find(|n| *n == symbol)?;
        Some(Arc::new(TestKernel(name)))
    }
    fn describe(&self) -> String {
        "the test library".into()
    }
}

fn parse(text: &str) -> IRModule {
    text.parse()
        .unwrap_or_else(|e| panic!("the test module does not parse: {e}"))
}

fn build_test(text: &str) -> Executable {
    build(&parse(text), &Target::interpreter())
        .unwrap_or_else(|e| panic!("{e}"))
        .with_library(Arc::new(TestLibrary))
}

fn build_err(text: &str) -> String {
    build(&parse(text), &Target::interpreter())
        .expect_err("the build should fail")
        .to_string()
}

fn f32_tensor(shape: &[i64], data: &[f32]) -> Value {
    Tensor::from_slice(shape, data).unwrap().into()
}

fn run(exec: &Executable, args: &[Value]) -> Result<Value, relax_runtime::Error> {
    VirtualMachine::new(exec).call("main", args)
}

/// The `Callee::Native` calls of `main`.
fn native_calls(exec: &Executable) -> Vec<(Callee, usize)> {
    let main = &exec.functions[exec.function_index("main").unwrap()];
    main.instrs
        .iter()
        .filter_map(|i| match i {
            Instr::Call { callee, args, .. } if matches!(callee, Callee::Native { .. }) => {
                Some((callee.clone(), args.len()))
            }
            _ => None,
        })
        .collect()
}

const STATIC: &str = r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add_one(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        T.evaluate(0)

    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        cls = Module
        with R.dataflow():
            y = R.call_tir(cls.add_one, (x,), out_sinfo=R.Tensor((4,), dtype="float32"))
            z = R.call_tir(cls.add_one, (y,), out_sinfo=R.Tensor((4,), dtype="float32"))
            R.output(z)
        return z
"#;

#[test]
fn call_tir_becomes_a_native_call_of_the_primfunc() {
    let exec = build_test(STATIC);
    assert_eq!(exec.natives, vec!["add_one".to_string()]);
    let calls = native_calls(&exec);
    assert_eq!(calls.len(), 2);
    let (
        Callee::Native {
            symbol,
            outputs,
            scalars,
            ..
        },
        nargs,
    ) = &calls[0]
    else {
        unreachable!()
    };
    assert_eq!(
        (*symbol, outputs.len(), scalars.len(), *nargs),
        (0, 1, 0, 1)
    );
    let out = run(&exec, &[f32_tensor(&[4], &[1.0, 2.0, 3.0, 4.0])]).unwrap();
    assert_eq!(
        out.as_tensor().unwrap().to_vec::<f32>().unwrap(),
        vec![3.0, 4.0, 5.0, 6.0]
    );
    // The inputs are checked against the buffers before the kernel runs.
    let err = run(&exec, &[f32_tensor(&[4], &[1.0; 4])]);
    assert!(err.is_ok());
}

#[test]
fn symbolic_dims_reach_the_kernel_as_abi_scalars() {
    // The PrimFunc's `m` is the caller's `n`; `k` is a scalar parameter
    // given by tir_vars; the ABI order is (k, m, j).
    let exec = build_test(
        r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def scalars(A: T.Buffer((m, j), "float32"), B: T.Buffer((3,), "int64"), k: T.int64):
        m = T.int64()
        j = T.int64()
        T.evaluate(0)

    @R.function
    def main(x: R.Tensor(("n", "p"), dtype="float32")) -> R.Tensor((3,), dtype="int64"):
        n = T.int64()
        p = T.int64()
        cls = Module
        y = R.call_tir(cls.scalars, (x,), out_sinfo=R.Tensor((3,), dtype="int64"), tir_vars=R.shape([n * p + 1]))
        return y
"#,
    );
    let (Callee::Native { scalars, .. }, _) = &native_calls(&exec)[0] else {
        unreachable!()
    };
    assert_eq!(scalars.len(), 3);
    let x = f32_tensor(&[2, 5], &[0.0; 10]);
    let out = run(&exec, &[x]).unwrap();
    assert_eq!(
        out.as_tensor().unwrap().to_vec::<i64>().unwrap(),
        vec![11, 2, 5]
    );
}

#[test]
fn dims_the_caller_cannot_express_are_bound_from_the_argument() {
    let exec = build_test(
        r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def scalars(A: T.Buffer((m, 2, m), "float32"), B: T.Buffer((1,), "int64")):
        m = T.int64()
        T.evaluate(0)

    @R.function
    def main(x: R.Tensor(dtype="float32", ndim=3)) -> R.Tensor((1,), dtype="int64"):
        cls = Module
        y = R.call_tir(cls.scalars, (x,), out_sinfo=R.Tensor((1,), dtype="int64"))
        return y
"#,
    );
    let out = run(&exec, &[f32_tensor(&[3, 2, 3], &[0.0; 18])]).unwrap();
    assert_eq!(out.as_tensor().unwrap().to_vec::<i64>().unwrap(), vec![3]);
    // `m` is bound by the first dim and checked against the third.
    let msg = run(&exec, &[f32_tensor(&[3, 2, 4], &[0.0; 24])])
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("argument 0 of call_tir of `scalars` in `main`"),
        "{msg}"
    );
    let msg = run(&exec, &[f32_tensor(&[3, 1, 3], &[0.0; 9])])
        .unwrap_err()
        .to_string();
    assert!(msg.contains("argument 0"), "{msg}");
}

#[test]
fn arguments_are_checked_against_the_buffers_at_run_time() {
    // `x` and `y` have independent dims; the PrimFunc requires them equal.
    let exec = build_test(
        r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add(A: T.Buffer((m,), "float32"), B: T.Buffer((m,), "float32"), C: T.Buffer((m,), "float32")):
        m = T.int64()
        T.evaluate(0)

    @R.function
    def main(x: R.Tensor(("n",), dtype="float32"), y: R.Tensor(("p",), dtype="float32")) -> R.Tensor(("n",), dtype="float32"):
        n = T.int64()
        cls = Module
        z = R.call_tir(cls.add, (x, y), out_sinfo=R.Tensor((n,), dtype="float32"))
        return z
"#,
    );
    let out = run(
        &exec,
        &[
            f32_tensor(&[2], &[1.0, 2.0]),
            f32_tensor(&[2], &[10.0, 20.0]),
        ],
    )
    .unwrap();
    assert_eq!(
        out.as_tensor().unwrap().to_vec::<f32>().unwrap(),
        vec![11.0, 22.0]
    );
    let msg = run(
        &exec,
        &[f32_tensor(&[2], &[1.0, 2.0]), f32_tensor(&[3], &[0.0; 3])],
    )
    .unwrap_err()
    .to_string();
    assert!(
        msg.contains("argument 1 of call_tir of `add` in `main`"),
        "{msg}"
    );
}

#[test]
fn an_output_shape_that_may_differ_from_its_buffer_is_checked() {
    let exec = build_test(
        r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add_one(A: T.Buffer((m,), "float32"), B: T.Buffer((m,), "float32")):
        m = T.int64()
        T.evaluate(0)

    @R.function
    def main(x: R.Tensor(("n",), dtype="float32"), s: R.Shape(["q"])) -> R.Tensor(("q",), dtype="float32"):
        q = T.int64()
        cls = Module
        z = R.call_tir(cls.add_one, (x,), out_sinfo=R.Tensor((q,), dtype="float32"))
        return z
"#,
    );
    let x = f32_tensor(&[2], &[1.0, 2.0]);
    assert!(run(&exec, &[x.clone(), Value::shape(&[2])]).is_ok());
    let msg = run(&exec, &[x, Value::shape(&[3])])
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("the shape of output 0 of call_tir of `add_one`"),
        "{msg}"
    );
}

#[test]
fn provable_signature_mismatches_are_build_errors() {
    let module = |buffer: &str, arg: &str, extra: &str| {
        format!(
            r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add_one(A: T.Buffer({buffer}), B: T.Buffer((4,), "float32"){extra}):
        m = T.int64()
        T.evaluate(0)

    @R.function
    def main(x: R.Tensor({arg})) -> R.Tensor((4,), dtype="float32"):
        cls = Module
        y = R.call_tir(cls.add_one, (x,), out_sinfo=R.Tensor((4,), dtype="float32"))
        return y
"#
        )
    };
    let f32_4 = r#"(4,), dtype="float32""#;
    let msg = build_err(&module(r#"(5,), "float32""#, f32_4, ""));
    assert!(
        msg.contains("argument 0 is R.Tensor((4,), dtype=\"float32\") but buffer `A`"),
        "{msg}"
    );
    let msg = build_err(&module(r#"(4,), "int32""#, f32_4, ""));
    assert!(msg.contains("buffer `A`"), "{msg}");
    let msg = build_err(&module(r#"(4, 1), "float32""#, f32_4, ""));
    assert!(msg.contains("buffer `A`"), "{msg}");
    let msg = build_err(&module(
        r#"(4,), "float32""#,
        f32_4,
        r#", C: T.Buffer((4,), "float32")"#,
    ));
    assert!(msg.contains("3 buffer parameters"), "{msg}");
    // `m` appears only inside `m * 2`: nothing determines it.
    let msg = build_err(&module(r#"(m * 2,), "float32""#, f32_4, ""));
    assert!(msg.contains("`m` cannot be determined"), "{msg}");
}

#[test]
fn outputs_must_be_allocatable() {
    let msg = build_err(
        r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add_one(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
        T.evaluate(0)

    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor(dtype="float32", ndim=1):
        cls = Module
        y = R.call_tir(cls.add_one, (x,), out_sinfo=R.Tensor(dtype="float32", ndim=1))
        return y
"#,
    );
    assert!(msg.contains("output 0 must have a known shape"), "{msg}");
}

#[test]
fn missing_tir_vars_are_an_error_when_a_scalar_is_not_a_dim() {
    let msg = build_err(
        r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add_one(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"), k: T.int64):
        T.evaluate(0)

    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        cls = Module
        y = R.call_tir(cls.add_one, (x,), out_sinfo=R.Tensor((4,), dtype="float32"))
        return y
"#,
    );
    assert!(msg.contains("`k` cannot be determined"), "{msg}");
}

#[test]
fn the_pipeline_folds_constants_and_removes_dead_code() {
    let text = r#"
@I.ir_module
class Module:
    @R.function(private=True)
    def unused(a: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        return a

    @R.function
    def main(x: R.Tensor((2,), dtype="float32")) -> R.Tensor((2,), dtype="float32"):
        with R.dataflow():
            c = R.add(R.const([1.0, 2.0], "float32"), R.const([3.0, 4.0], "float32"))
            dead = R.multiply(x, x)
            y = R.add(x, c)
            R.output(y)
        return y
"#;
    let exec = build(&parse(text), &Target::interpreter()).unwrap();
    // One kernel entry left (the add of `x`); the folded and dead calls and
    // the unreachable function are gone.
    assert_eq!(exec.kernels.len(), 1);
    assert_eq!(exec.function_index("unused"), None);
    let out = run(&exec, &[f32_tensor(&[2], &[1.0, 1.0])]).unwrap();
    assert_eq!(
        out.as_tensor().unwrap().to_vec::<f32>().unwrap(),
        vec![5.0, 7.0]
    );
}

#[test]
fn the_pipeline_has_the_zero_pipeline_order() {
    assert_eq!(
        pipeline(&Target::interpreter()).pass_names(),
        ["LambdaLift", "FoldConstant", "DeadCodeElimination"]
    );
    let zero = [
        "LambdaLift",
        "LegalizeOps",
        "AnnotateTIROpPattern",
        "FoldConstant",
        "FuseOps",
        "FuseTIR",
        "RewriteDataflowReshape",
        "DeadCodeElimination",
    ];
    // The loop-level interpreter runs the zero pipeline (with TVM build
    // pipeline's RewriteDataflowReshape); the host adds
    // Winograd convolutions and the tiled attention kernel first, its
    // GEMMs' weights in panels after fusion, and the CPU's default
    // schedules last.
    assert_eq!(pipeline(&Target::tir_interpreter()).pass_names(), zero);
    let mut host = zero.to_vec();
    host.splice(
        1..1,
        [
            "ConvertLayout",
            "Conv2dToMatmul",
            "Conv2dWinograd",
            "FoldConstant",
            "RewriteAttention",
            "FlashAttention",
        ],
    );
    host.insert(host.len() - 1, "PrepackWeights");
    // Ahead of time, the host's passes before its schedules, which each
    // CPU level gets for its own vector width.
    assert_eq!(super::host_pipeline_unscheduled().pass_names(), host);
    host.push("DefaultSchedule");
    assert_eq!(pipeline(&Target::host()).pass_names(), host);
}

#[test]
fn ill_formed_modules_are_rejected_before_any_pass() {
    let mut m = parse(STATIC);
    let gv = m.global_var("add_one").unwrap();
    m.remove(&gv);
    assert!(matches!(
        build(&m, &Target::interpreter()),
        Err(Error::Compile(_))
    ));
}

#[cfg(not(feature = "llvm"))]
#[test]
fn the_host_target_needs_llvm() {
    let err = build(&parse(STATIC), &Target::host()).unwrap_err();
    assert!(
        matches!(&err, Error::Unsupported(m) if m.contains("\"llvm\" feature")),
        "{err}"
    );
}

#[test]
fn targets_print_their_names() {
    assert_eq!(Target::interpreter().to_string(), "interpreter");
    assert_eq!(Target::tir_interpreter().to_string(), "tir-interpreter");
    assert_eq!(Target::host().to_string(), "host");
    assert!(!Target::interpreter().legalizes() && Target::host().legalizes());
}

/// Scalars compile to shape-heap expressions.
#[test]
fn tir_vars_compile_over_the_shape_heap() {
    let exec = build_test(
        r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def scalars(B: T.Buffer((1,), "int64"), k: T.int64):
        T.evaluate(0)

    @R.function
    def main(x: R.Tensor(("n",), dtype="float32")) -> R.Tensor((1,), dtype="int64"):
        n = T.int64()
        cls = Module
        y = R.call_tir(cls.scalars, (), out_sinfo=R.Tensor((1,), dtype="int64"), tir_vars=R.shape([n * 2]))
        return y
"#,
    );
    let (Callee::Native { scalars, .. }, nargs) = &native_calls(&exec)[0] else {
        unreachable!()
    };
    assert_eq!(*nargs, 0);
    assert!(matches!(&scalars[0], SymExpr::Mul(..)), "{scalars:?}");
    let out = run(&exec, &[f32_tensor(&[3], &[0.0; 3])]).unwrap();
    assert_eq!(out.as_tensor().unwrap().to_vec::<i64>().unwrap(), vec![6]);
}

#[test]
fn primfuncs_run_on_the_loop_level_interpreter() {
    let text = r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add_one(A: T.Buffer((m,), "float32"), B: T.Buffer((m,), "float32")):
        m = T.int64()
        T.evaluate(0)

    @R.function
    def main(x: R.Tensor(("n",), dtype="float32")) -> R.Tensor(("n",), dtype="float32"):
        n = T.int64()
        cls = Module
        with R.dataflow():
            y = R.call_tir(cls.add_one, (x,), out_sinfo=R.Tensor((n,), dtype="float32"))
            z = R.multiply(y, y)
            R.output(z)
        return z
"#;
    let m = super::testing::with_prim_func(parse(text), "add_one", super::testing::add_one());
    let mut targets = vec![Target::interpreter(), Target::tir_interpreter()];
    if cfg!(feature = "llvm") {
        targets.push(Target::host());
    }
    for target in targets {
        let exec = build(&m, &target).unwrap();
        let out = run(&exec, &[f32_tensor(&[3], &[1.0, 2.0, -1.0])]).unwrap();
        assert_eq!(
            out.as_tensor().unwrap().to_vec::<f32>().unwrap(),
            vec![4.0, 9.0, 0.0],
            "{target}"
        );
    }
}

#[test]
fn compound_dims_over_dims_bound_by_the_argument_are_checked_after_binding() {
    // `B` is `(m * 2,)` with `m` known only from `A` at run time.
    let exec = build_test(
        r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add_one(B: T.Buffer((m * 2,), "float32"), A: T.Buffer((m,), "float32"), C: T.Buffer((1,), "float32")):
        m = T.int64()
        T.evaluate(0)

    @R.function
    def main(b: R.Tensor(dtype="float32", ndim=1), a: R.Tensor(dtype="float32", ndim=1)) -> R.Tensor((1,), dtype="float32"):
        cls = Module
        y = R.call_tir(cls.add_one, (b, a), out_sinfo=R.Tensor((1,), dtype="float32"))
        return y
"#,
    );
    let main = &exec.functions[exec.function_index("main").unwrap()];
    let checks = main
        .instrs
        .iter()
        .filter(|i| matches!(i, Instr::MatchCast { context, .. } if context.contains("call_tir")))
        .count();
    assert_eq!(checks, 3, "{:#?}", main.instrs);
    let args = |nb: i64, na: i64| {
        [
            f32_tensor(&[nb], &vec![0.0; nb as usize]),
            f32_tensor(&[na], &vec![0.0; na as usize]),
        ]
    };
    // The test kernel fails (sizes differ), but only after the checks pass.
    let msg = run(&exec, &args(4, 2)).unwrap_err().to_string();
    assert!(
        msg.contains("add_one: input and output sizes differ"),
        "{msg}"
    );
    let msg = run(&exec, &args(5, 2)).unwrap_err().to_string();
    assert!(msg.contains("argument 0 of call_tir of `add_one`"), "{msg}");
}

/// A host build reports its stages in order, and code generation's
/// kernel count rising to the number of kernels it compiles.
#[cfg(feature = "llvm")]
#[test]
fn a_host_build_reports_monotone_progress() {
    use crate::transform::progress::testing::Recorder;
    let module = parse(
        r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((7, 5), dtype="float32"), w: R.Tensor((5, 3), dtype="float32")) -> R.Tensor((3,), dtype="float32"):
        with R.dataflow():
            y = R.matmul(x, w)
            e = R.exp(y)
            z = R.sum(e, axis=[0])
            gv = R.sqrt(z)
            R.output(gv)
        return gv
"#,
    );
    let recorder = Arc::new(Recorder::default());
    let ctx = PassContext::new().with_progress(recorder.clone());
    let exec = build_with(&module, &Target::host(), &ctx).unwrap();
    let stages = recorder.check();
    let names: Vec<BuildStage> = stages.iter().map(|s| s.0).collect();
    assert_eq!(
        names,
        [BuildStage::Passes, BuildStage::Lower, BuildStage::Codegen]
    );
    let kernels = stages[2].1;
    assert!(kernels >= 1 && kernels <= exec.natives.len(), "{stages:?}");
}
