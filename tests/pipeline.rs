//! The compilation pipeline end to end: `relax::build` for each target, the
//! passes it runs, and `call_tir` through the VM — on kernels written in
//! Rust (a test library), on the loop-level interpreter, and compared
//! between targets on the seed's MLP.

use ndarray::{Array, ArrayD, IxDyn};
use relax::ir::{Attrs, IRModule, PrimExpr, TirVar};
use relax::native::{NativeKernel, NativeLibrary};
use relax::tir::{Buffer, ForKind, PrimFunc, PrimFuncParam, Stmt};
use relax::transform::{DeadCodeElimination, FoldConstant, Pass};
use relax::{build, DataType, Error, Executable, Target, Tensor, Value, VirtualMachine};
use std::sync::Arc;

/// A deterministic pseudo-random array in [-1, 1).
fn random(shape: &[usize], seed: u64) -> ArrayD<f32> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    Array::from_shape_fn(IxDyn(shape), |_| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % 2000) as f32 / 1000.0 - 1.0
    })
}

fn parse(text: &str) -> IRModule {
    text.parse()
        .unwrap_or_else(|e| panic!("the test module does not parse: {e}"))
}

fn tensor(a: &ArrayD<f32>) -> Value {
    Tensor::from(a).into()
}

fn floats(v: &Value) -> ArrayD<f32> {
    v.as_tensor()
        .expect("a tensor")
        .to_ndarray::<f32>()
        .expect("float32")
}

fn assert_close(a: &ArrayD<f32>, b: &ArrayD<f32>, tol: f32, what: &str) {
    assert_eq!(a.shape(), b.shape(), "{what}");
    for (x, y) in a.iter().zip(b.iter()) {
        assert!((x - y).abs() <= tol * (1.0 + y.abs()), "{what}: {x} vs {y}");
    }
}

/// `a` equals `b` up to `tol` relative to `b`'s largest magnitude. Dot
/// products of hundreds of float32 terms are summed in different orders by
/// the reference kernels (ndarray's blocked `dot`) and by loop nests
/// (sequentially), so their rounding errors scale with the size of the
/// terms, not with each result, which cancellation can bring near zero.
fn assert_close_normwise(a: &ArrayD<f32>, b: &ArrayD<f32>, tol: f32, what: &str) {
    assert_eq!(a.shape(), b.shape(), "{what}");
    let scale = b.iter().fold(1.0f32, |m, v| m.max(v.abs()));
    for (x, y) in a.iter().zip(b.iter()) {
        assert!(
            (x - y).abs() <= tol * scale,
            "{what}: {x} vs {y} (tolerance {tol} of {scale})"
        );
    }
}

fn run(exec: &Executable, args: &[Value]) -> Result<Value, Error> {
    VirtualMachine::new(exec).call("main", args)
}

// ---------------------------------------------------------------------------
// The seed's MLP on every target.

const MLP: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 784), dtype="float32"), w0: R.Tensor((128, 784), dtype="float32"), b0: R.Tensor((128,), dtype="float32"), w1: R.Tensor((10, 128), dtype="float32"), b1: R.Tensor((10,), dtype="float32")) -> R.Tensor(("n", 10), dtype="float32"):
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

fn mlp_inputs(batch: usize) -> Vec<Value> {
    [
        vec![batch, 784],
        vec![128, 784],
        vec![128],
        vec![10, 128],
        vec![10],
    ]
    .iter()
    .enumerate()
    .map(|(i, shape)| tensor(&random(shape, 10 + i as u64)))
    .collect()
}

/// `Target::tir_interpreter()` (legalized, loop-level) gives the oracle's
/// numbers for several values of the symbolic `n` (small ones: the
/// loop-level interpreter walks every iteration).
#[test]
fn the_mlp_on_the_tir_interpreter_matches_the_oracle() {
    let m = parse(MLP);
    let oracle = build(&m, &Target::interpreter()).unwrap();
    let lowered = build(&m, &Target::tir_interpreter()).unwrap();
    // Every op was legalized: no reference kernel is left.
    assert!(lowered.kernels.is_empty(), "{:?}", lowered.kernels);
    // Fused: one kernel per dense layer.
    assert_eq!(
        lowered.natives,
        [
            "fused_transpose_matmul_add_relu",
            "fused_transpose1_matmul1_add1"
        ]
    );
    for batch in [1, 3] {
        let args = mlp_inputs(batch);
        let want = floats(&run(&oracle, &args).unwrap());
        let got = floats(&run(&lowered, &args).unwrap());
        assert_eq!(want.shape(), &[batch, 10]);
        assert_close_normwise(&got, &want, 1e-5, &format!("batch {batch}"));
    }
}

// ---------------------------------------------------------------------------
// call_tir on kernels written in Rust.

/// `add` (out = a + b) and `sum_rows` (out[i] = Σ_j a[i, j], also
/// returning the scalars it was given in its second output).
struct RustKernels;

struct RustKernel(&'static str);

impl NativeKernel for RustKernel {
    fn call(
        &self,
        inputs: &[&Tensor],
        outputs: &mut [Tensor],
        scalars: &[i64],
    ) -> Result<(), String> {
        let f = |t: &Tensor| t.to_vec::<f32>().map_err(|e| e.to_string());
        match self.0 {
            "add" => {
                let (a, b) = (f(inputs[0])?, f(inputs[1])?);
                let shape = outputs[0].shape().to_vec();
                outputs[0] =
                    Tensor::from_vec(&shape, a.iter().zip(&b).map(|(x, y)| x + y).collect())
                        .map_err(|e| e.to_string())?;
            }
            "sum_rows" => {
                let a = f(inputs[0])?;
                let (rows, cols) = (inputs[0].shape()[0] as usize, inputs[0].shape()[1] as usize);
                let sums = (0..rows)
                    .map(|r| a[r * cols..(r + 1) * cols].iter().sum::<f32>())
                    .collect();
                outputs[0] = Tensor::from_vec(&[rows as i64], sums).map_err(|e| e.to_string())?;
                outputs[1] = Tensor::from_vec(&[scalars.len() as i64], scalars.to_vec())
                    .map_err(|e| e.to_string())?;
            }
            other => return Err(format!("no kernel {other}")),
        }
        Ok(())
    }
}

impl NativeLibrary for RustKernels {
    fn lookup(&self, symbol: &str) -> Option<Arc<dyn NativeKernel>> {
        let name = ["add", "sum_rows"].into_iter().find(|n| *n == symbol)?;
        Some(Arc::new(RustKernel(name)))
    }
    fn describe(&self) -> String {
        "the kernels of tests/pipeline.rs".into()
    }
}

const HAND_WRITTEN: &str = r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add(A: T.Buffer((m, k), "float32"), B: T.Buffer((m, k), "float32"), C: T.Buffer((m, k), "float32")):
        m = T.int64()
        k = T.int64()
        T.evaluate(0)

    @T.prim_func(private=True)
    def sum_rows(A: T.Buffer((m, k), "float32"), S: T.Buffer((m,), "float32"), D: T.Buffer((3,), "int64"), scale: T.int64):
        m = T.int64()
        k = T.int64()
        T.evaluate(0)

    @T.prim_func(private=True)
    def never_called(A: T.Buffer((1,), "float32")):
        T.evaluate(0)

    @R.function
    def main(x: R.Tensor(("n", "c"), dtype="float32"), y: R.Tensor(("n", "c"), dtype="float32")) -> R.Tuple(R.Tensor(("n",), dtype="float32"), R.Tensor((3,), dtype="int64")):
        n = T.int64()
        c = T.int64()
        cls = Module
        with R.dataflow():
            s = R.call_tir(cls.add, (x, y), out_sinfo=R.Tensor((n, c), dtype="float32"))
            t = R.call_tir(cls.sum_rows, (s,), out_sinfo=[R.Tensor((n,), dtype="float32"), R.Tensor((3,), dtype="int64")], tir_vars=R.shape([c * 10]))
            R.output(t)
        return t
"#;

#[test]
fn call_tir_runs_native_kernels_with_symbolic_shapes_and_several_outputs() {
    let exec = build(&parse(HAND_WRITTEN), &Target::interpreter())
        .unwrap()
        .with_library(Arc::new(RustKernels));
    // Dead-code elimination dropped the PrimFunc nobody calls.
    assert_eq!(exec.natives, ["add", "sum_rows"]);
    let x = random(&[4, 3], 1);
    let y = random(&[4, 3], 2);
    let out = run(&exec, &[tensor(&x), tensor(&y)]).unwrap();
    let fields = out.as_tuple().unwrap();
    let want = (&x + &y).sum_axis(ndarray::Axis(1));
    assert_close(&floats(&fields[0]), &want, 1e-6, "row sums");
    // The scalar ABI: the scalar parameter (c * 10), then m, then k.
    assert_eq!(
        fields[1].as_tensor().unwrap().to_vec::<i64>().unwrap(),
        vec![30, 4, 3]
    );
    // Shapes are checked before any kernel runs.
    let err = run(&exec, &[tensor(&x), tensor(&random(&[4, 2], 3))]).unwrap_err();
    assert!(matches!(err, Error::Mismatch { .. }), "{err}");
}

#[test]
fn an_executable_with_native_kernels_round_trips_and_needs_its_library_back() {
    let exec = build(&parse(HAND_WRITTEN), &Target::interpreter()).unwrap();
    let back = Executable::from_bytes(&exec.to_bytes()).unwrap();
    assert_eq!(back.natives, exec.natives);
    let args = [tensor(&random(&[2, 2], 1)), tensor(&random(&[2, 2], 2))];
    let err = run(&back, &args).unwrap_err();
    assert!(matches!(err, Error::Unsupported(_)), "{err}");
    let out = run(&back.with_library(Arc::new(RustKernels)), &args).unwrap();
    assert_eq!(out.as_tuple().unwrap().len(), 2);
}

// ---------------------------------------------------------------------------
// PrimFuncs with bodies on the loop-level interpreter.

/// `C[i, j] = A[i, j] * B[j] + offset` for `A: (m, k)`, `B: (k,)`, with
/// `offset` a scalar parameter.
fn scale_rows() -> PrimFunc {
    let f32_ = DataType::f32();
    let (m, k) = (TirVar::new("m"), TirVar::new("k"));
    let offset = TirVar::new("offset");
    let a = Buffer::new("A", vec![PrimExpr::var(&m), PrimExpr::var(&k)], f32_);
    let b = Buffer::new("B", vec![PrimExpr::var(&k)], f32_);
    let c = Buffer::new("C", vec![PrimExpr::var(&m), PrimExpr::var(&k)], f32_);
    let (i, j) = (TirVar::new("i"), TirVar::new("j"));
    let (iv, jv) = (PrimExpr::var(&i), PrimExpr::var(&j));
    let value = PrimExpr::load(&a, vec![iv.clone(), jv.clone()])
        * PrimExpr::load(&b, vec![jv.clone()])
        + PrimExpr::var(&offset).cast(f32_);
    let store = Stmt::BufferStore {
        buffer: c.clone(),
        value,
        indices: vec![iv, jv],
    };
    let inner = Stmt::For {
        loop_var: j,
        min: PrimExpr::int(0),
        extent: PrimExpr::var(&k),
        kind: ForKind::Serial,
        body: Box::new(store),
        annotations: Attrs::new(),
    };
    let body = Stmt::For {
        loop_var: i,
        min: PrimExpr::int(0),
        extent: PrimExpr::var(&m),
        kind: ForKind::Serial,
        body: Box::new(inner),
        annotations: Attrs::new(),
    };
    PrimFunc::new(
        vec![
            PrimFuncParam::Buffer(a),
            PrimFuncParam::Buffer(b),
            PrimFuncParam::Buffer(c),
            PrimFuncParam::Scalar(offset),
        ],
        body,
    )
}

const SCALE_ROWS: &str = r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def scale_rows(A: T.Buffer((m, k), "float32"), B: T.Buffer((k,), "float32"), C: T.Buffer((m, k), "float32"), offset: T.int64):
        m = T.int64()
        k = T.int64()
        T.evaluate(0)

    @R.function
    def main(x: R.Tensor(("n", 4), dtype="float32")) -> R.Tensor(("n", 4), dtype="float32"):
        n = T.int64()
        cls = Module
        with R.dataflow():
            w = R.add(R.const([1.0, 2.0, 3.0, 4.0], "float32"), R.const([0.0, 0.0, 0.0, 1.0], "float32"))
            y = R.call_tir(cls.scale_rows, (x, w), out_sinfo=R.Tensor((n, 4), dtype="float32"), tir_vars=R.shape([n]))
            z = R.nn.relu(y)
            R.output(z)
        return z
"#;

fn scale_rows_module() -> IRModule {
    let mut m = parse(SCALE_ROWS);
    let gv = m.global_var("scale_rows").unwrap();
    m.add(gv, scale_rows());
    m
}

#[test]
fn primfuncs_run_on_the_loop_level_interpreter_on_both_interpreting_targets() {
    let m = scale_rows_module();
    let x = random(&[3, 4], 7);
    let w = ndarray::arr1(&[1.0f32, 2.0, 3.0, 5.0]);
    let want = (&x * &w + 3.0).mapv(|v| v.max(0.0));
    for target in [Target::interpreter(), Target::tir_interpreter()] {
        let exec = build(&m, &target).unwrap();
        let got = floats(&run(&exec, &[tensor(&x)]).unwrap());
        assert_close(&got, &want.clone().into_dyn(), 1e-6, &target.to_string());
    }
}

#[test]
fn the_passes_compose_by_hand_as_build_runs_them() {
    use relax::ir::ExprKind;
    let bindings = |m: &IRModule| {
        let main = m.get_relax("main").unwrap();
        main.body.as_seq().unwrap().blocks[0].bindings.clone()
    };
    // FoldConstant turns `w` into a constant and `y`'s argument into it...
    let folded = FoldConstant.run(scale_rows_module()).unwrap();
    let b = bindings(&folded);
    assert_eq!(b.len(), 3);
    assert!(matches!(b[0].value().kind(), ExprKind::Constant(_)));
    // ...so DeadCodeElimination removes the binding of `w` and keeps the
    // PrimFunc `main` still calls.
    let cleaned = DeadCodeElimination::default().run(folded).unwrap();
    assert_eq!(bindings(&cleaned).len(), 2);
    assert!(cleaned.get("scale_rows").is_some());
}

/// The seed's MLP compiled through LLVM gives the oracle's numbers.
#[cfg(feature = "llvm")]
#[test]
fn the_mlp_on_the_host_matches_the_oracle() {
    let m = parse(MLP);
    let oracle = build(&m, &Target::interpreter()).unwrap();
    let host = build(&m, &Target::host()).unwrap();
    assert!(host.kernels.is_empty(), "{:?}", host.kernels);
    for batch in [1, 3, 64] {
        let args = mlp_inputs(batch);
        let want = floats(&run(&oracle, &args).unwrap());
        let got = floats(&run(&host, &args).unwrap());
        assert_eq!(got.shape(), &[batch, 10]);
        assert_close_normwise(&got, &want, 1e-5, &format!("batch {batch}"));
    }
}

/// Hand-written PrimFuncs (with a scalar parameter and symbolic dims)
/// compiled through LLVM agree with the loop-level interpreter.
#[cfg(feature = "llvm")]
#[test]
fn primfuncs_compiled_by_llvm_match_the_interpreter() {
    let m = scale_rows_module();
    let host = build(&m, &Target::host()).unwrap();
    let interp = build(&m, &Target::tir_interpreter()).unwrap();
    for rows in [1, 5] {
        let x = tensor(&random(&[rows, 4], rows as u64));
        assert_close(
            &floats(&run(&host, std::slice::from_ref(&x)).unwrap()),
            &floats(&run(&interp, &[x]).unwrap()),
            1e-6,
            &format!("{rows} rows"),
        );
    }
}

#[cfg(not(feature = "llvm"))]
#[test]
fn the_host_target_needs_llvm() {
    let err = build(&scale_rows_module(), &Target::host()).unwrap_err();
    assert!(matches!(err, Error::Unsupported(_)), "{err}");
}
