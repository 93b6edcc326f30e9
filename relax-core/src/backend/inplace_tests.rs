//! `call_tir_inplace` end to end: TVMScript modules whose PrimFuncs write
//! into their arguments, run on the loop-level interpreter and (with
//! "llvm") compiled, against results computed here; the copy-on-write rule
//! (a caller's input, a weight, a value still read later is never written)
//! and its absence of copies (an intermediate read for the last time is
//! written where it lies).

use super::*;
use crate::ir::IRModule;
use crate::transform::Pass;
use relax_runtime::executable::{Callee, Instr};
use relax_runtime::native::{KernelBuffer, NativeKernel, NativeLibrary};
use relax_runtime::{Tensor, Value, VirtualMachine};
use std::sync::{Arc, Mutex};

fn parse(text: &str) -> IRModule {
    text.parse().unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// The targets the differential tests run on.
fn targets() -> Vec<Target> {
    let mut t = vec![Target::interpreter(), Target::tir_interpreter()];
    if cfg!(feature = "llvm") {
        t.push(Target::host());
    }
    t
}

fn tensor(shape: &[i64], seed: f32) -> Tensor {
    let n: i64 = shape.iter().product();
    let data = (0..n).map(|i| ((i as f32) * 0.37 + seed).sin()).collect();
    Tensor::from_vec(shape, data).unwrap()
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_tensor().unwrap().to_vec::<f32>().unwrap()
}

fn assert_close(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-5 * (1.0 + w.abs()),
            "{what}[{i}]: {g} vs {w}"
        );
    }
}

/// `scale` (a fresh output, `2x`), `add_inplace` (`A += B[()]` in place)
/// over (7, 13).
const ADD: &str = r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def scale(A: T.Buffer((T.int64(7), T.int64(13)), "float32"), Out: T.Buffer((T.int64(7), T.int64(13)), "float32")):
        for i, j in T.grid(T.int64(7), T.int64(13)):
            with T.sblock("scale"):
                vi, vj = T.axis.remap("SS", [i, j])
                Out[vi, vj] = A[vi, vj] * T.float32(2)

    @T.prim_func(private=True)
    def add_inplace(A: T.Buffer((T.int64(7), T.int64(13)), "float32"), B: T.Buffer((), "float32")):
        for i, j in T.grid(T.int64(7), T.int64(13)):
            with T.sblock("add"):
                vi, vj = T.axis.remap("SS", [i, j])
                A[vi, vj] = A[vi, vj] + B[()]

    @R.function
    def main(x: R.Tensor((7, 13), dtype="float32"), s: R.Tensor((), dtype="float32")) -> R.Tensor((7, 13), dtype="float32"):
        cls = Module
        with R.dataflow():
            y = R.call_tir(cls.scale, (x,), out_sinfo=R.Tensor((7, 13), dtype="float32"))
            z = R.call_tir_inplace(cls.add_inplace, (y, s), out_sinfo=R.Tensor((7, 13), dtype="float32"), inplace_indices=[0])
            R.output(z)
        return z

    @R.function
    def on_input(x: R.Tensor((7, 13), dtype="float32"), s: R.Tensor((), dtype="float32")) -> R.Tensor((7, 13), dtype="float32"):
        cls = Module
        with R.dataflow():
            z = R.call_tir_inplace(cls.add_inplace, (x, s), out_sinfo=R.Tensor((7, 13), dtype="float32"), inplace_indices=[0])
            R.output(z)
        return z

    @R.function
    def still_read(x: R.Tensor((7, 13), dtype="float32"), s: R.Tensor((), dtype="float32")):
        cls = Module
        with R.dataflow():
            y = R.call_tir(cls.scale, (x,), out_sinfo=R.Tensor((7, 13), dtype="float32"))
            z = R.call_tir_inplace(cls.add_inplace, (y, s), out_sinfo=R.Tensor((7, 13), dtype="float32"), inplace_indices=[0])
            w = R.call_tir(cls.scale, (y,), out_sinfo=R.Tensor((7, 13), dtype="float32"))
            gv = (z, w)
            R.output(gv)
        return gv
"#;

#[test]
fn inplace_add_matches_on_every_target() {
    let (x, s) = (tensor(&[7, 13], 0.3), Tensor::scalar(0.25f32));
    let xs = x.to_vec::<f32>().unwrap();
    let want: Vec<f32> = xs.iter().map(|v| v * 2.0 + 0.25).collect();
    // Fused (FuseOps and FuseTIR take in-place calls in) and not.
    let targets = targets();
    let modules = [parse(ADD), add_unfused()];
    for (m, target) in modules
        .iter()
        .flat_map(|m| targets.iter().map(move |t| (m, t)))
    {
        let exec = build(m, target).unwrap_or_else(|e| panic!("{target:?}: {e}"));
        let vm = VirtualMachine::new(&exec);
        let args = [x.clone().into(), s.clone().into()];
        let z = vm.call("main", &args).unwrap();
        assert_close(&floats(&z), &want, &format!("main on {target:?}"));
        // The caller's own input is copied before it is written.
        let z = vm.call("on_input", &args).unwrap();
        let added: Vec<f32> = xs.iter().map(|v| v + 0.25).collect();
        assert_close(&floats(&z), &added, &format!("on_input on {target:?}"));
        assert_eq!(
            x.to_vec::<f32>().unwrap(),
            xs,
            "the input changed on {target:?}"
        );
        assert!(!z.as_tensor().unwrap().shares_buffer(&x));
        // A value read after the in-place call keeps its value.
        let out = vm.call("still_read", &args).unwrap();
        let fields = out.as_tuple().unwrap();
        assert_close(&floats(&fields[0]), &want, &format!("z on {target:?}"));
        let twice: Vec<f32> = xs.iter().map(|v| v * 4.0).collect();
        assert_close(&floats(&fields[1]), &twice, &format!("w on {target:?}"));
    }
}

/// `add_and_sum(A: (n, 5), B: (n, 5), S: (n,))`: `A += B` in place and
/// `S` (a fresh output) the row sums of the new `A`; `n` symbolic.
const MIXED: &str = r#"
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add_and_sum(var_A: T.handle, var_B: T.handle, var_S: T.handle):
        n = T.int64()
        A = T.match_buffer(var_A, (n, T.int64(5)), "float32")
        B = T.match_buffer(var_B, (n, T.int64(5)), "float32")
        S = T.match_buffer(var_S, (n,), "float32")
        for i, j in T.grid(n, T.int64(5)):
            with T.sblock("add"):
                vi, vj = T.axis.remap("SS", [i, j])
                A[vi, vj] = A[vi, vj] + B[vi, vj]
        for i, j in T.grid(n, T.int64(5)):
            with T.sblock("sum"):
                vi, vj = T.axis.remap("SR", [i, j])
                with T.init():
                    S[vi] = T.float32(0)
                S[vi] = S[vi] + A[vi, vj]

    @R.function
    def main(x: R.Tensor(("n", 5), dtype="float32"), y: R.Tensor(("n", 5), dtype="float32")):
        n = T.int64()
        cls = Module
        with R.dataflow():
            gv = R.call_tir_inplace(cls.add_and_sum, (x, y), out_sinfo=[R.Tensor((n, 5), dtype="float32"), R.Tensor((n,), dtype="float32")], inplace_indices=[0, -1])
            R.output(gv)
        return gv
"#;

#[test]
fn mixed_inplace_and_fresh_outputs_with_a_symbolic_dim() {
    let m = parse(MIXED);
    for n in [1i64, 3, 11] {
        let (x, y) = (tensor(&[n, 5], 0.1), tensor(&[n, 5], 0.9));
        let xs = x.to_vec::<f32>().unwrap();
        let ys = y.to_vec::<f32>().unwrap();
        let sum: Vec<f32> = xs.iter().zip(&ys).map(|(a, b)| a + b).collect();
        let rows: Vec<f32> = sum.chunks(5).map(|r| r.iter().sum()).collect();
        for target in targets() {
            let exec = build(&m, &target).unwrap_or_else(|e| panic!("{target:?}: {e}"));
            let out = VirtualMachine::new(&exec)
                .call("main", &[x.clone().into(), y.clone().into()])
                .unwrap();
            let fields = out.as_tuple().unwrap();
            let what = format!("n = {n} on {target:?}");
            assert_close(&floats(&fields[0]), &sum, &what);
            assert_close(&floats(&fields[1]), &rows, &what);
            assert_eq!(x.to_vec::<f32>().unwrap(), xs, "x changed: {what}");
        }
    }
    // A wrong shape at run time is an error naming the argument.
    let exec = build(&m, &Target::tir_interpreter()).unwrap();
    let err = VirtualMachine::new(&exec)
        .call(
            "main",
            &[tensor(&[2, 5], 0.0).into(), tensor(&[3, 5], 0.0).into()],
        )
        .unwrap_err();
    assert!(err.to_string().contains("`y`"), "{err}");
}

/// The pointers the kernels of a library write through, by symbol.
type Writes = Arc<Mutex<Vec<(String, Vec<usize>)>>>;

/// A library that records where its kernels write, then runs them.
struct Recorder(Arc<dyn NativeLibrary>, Writes);

struct Recorded(String, Arc<dyn NativeKernel>, Writes);

impl NativeKernel for Recorded {
    fn call(&self, inputs: &[&Tensor], outputs: &mut [Tensor], s: &[i64]) -> Result<(), String> {
        let at = outputs.iter().map(|t| t.as_bytes().as_ptr() as usize);
        self.2.lock().unwrap().push((self.0.clone(), at.collect()));
        self.1.call(inputs, outputs, s)
    }

    fn call_buffers(&self, buffers: &mut [KernelBuffer<'_>], s: &[i64]) -> Result<(), String> {
        let at = buffers.iter().filter_map(|b| match b {
            KernelBuffer::Write(t) => Some(t.as_bytes().as_ptr() as usize),
            KernelBuffer::Read(_) => None,
        });
        self.2.lock().unwrap().push((self.0.clone(), at.collect()));
        self.1.call_buffers(buffers, s)
    }
}

impl NativeLibrary for Recorder {
    fn lookup(&self, symbol: &str) -> Option<Arc<dyn NativeKernel>> {
        let k = self.0.lookup(symbol)?;
        Some(Arc::new(Recorded(symbol.into(), k, self.1.clone())))
    }
    fn describe(&self) -> String {
        format!("recording {}", self.0.describe())
    }
}

/// [`ADD`] with `add_inplace` opaque, so that `FuseOps` leaves it a call
/// of its own (fused, `main` is one `call_tir`).
fn add_unfused() -> IRModule {
    let def = "B: T.Buffer((), \"float32\")):\n";
    assert!(ADD.contains(def));
    parse(&ADD.replace(
        def,
        &format!("{def}        T.func_attr({{\"op_pattern\": 8}})\n"),
    ))
}

#[test]
fn a_last_read_is_written_where_it_lies() {
    let m = add_unfused();
    let (x, s) = (tensor(&[7, 13], 0.3), Tensor::scalar(0.25f32));
    for target in targets() {
        let exec = build(&m, &target).unwrap();
        // `y` dies at the in-place call: the call moves it (`moved`);
        // `still_read` reads it later, so it is shared, and copied.
        let moved = |f: &str| -> Vec<Vec<u32>> {
            let func = exec.functions.iter().find(|g| g.name == f).unwrap();
            func.instrs
                .iter()
                .filter_map(|i| match i {
                    Instr::Call {
                        callee:
                            Callee::Native {
                                inplace_indices,
                                moved,
                                ..
                            },
                        ..
                    } if !inplace_indices.is_empty() => Some(moved.clone()),
                    _ => None,
                })
                .collect()
        };
        assert_eq!(moved("main"), vec![vec![0]], "{target:?}");
        assert_eq!(moved("on_input"), vec![Vec::<u32>::new()], "{target:?}");
        assert_eq!(moved("still_read"), vec![Vec::<u32>::new()], "{target:?}");
        let writes: Writes = Default::default();
        let inner = exec.library.clone().expect("a library").0;
        let exec = exec.with_library(Arc::new(Recorder(inner, writes.clone())));
        let vm = VirtualMachine::new(&exec);
        let z = vm
            .call("main", &[x.clone().into(), s.clone().into()])
            .unwrap();
        let w = writes.lock().unwrap().clone();
        assert_eq!(w.len(), 2, "{target:?}: {w:?}");
        let z_at = z.as_tensor().unwrap().as_bytes().as_ptr() as usize;
        // `scale` wrote `y`; `add_inplace` wrote `y` again, which is `z`.
        assert_eq!(w[0], ("scale".to_string(), vec![z_at]), "{target:?}");
        assert_eq!(w[1], ("add_inplace".to_string(), vec![z_at]), "{target:?}");
    }
}

#[test]
fn a_constant_is_never_written() {
    let text = ADD.replace(
        "            z = R.call_tir_inplace(cls.add_inplace, (x, s)",
        "            o = R.ones(R.shape([7, 13]), dtype=\"float32\")\n            c = R.multiply(o, R.const(1.5, \"float32\"))\n            z = R.call_tir_inplace(cls.add_inplace, (c, s)",
    );
    // `c` folds to a constant in the pipeline; the call must copy it, so
    // every call sees 1.5 again.
    let m = parse(&text);
    for target in targets() {
        let exec = build(&m, &target).unwrap();
        let vm = VirtualMachine::new(&exec);
        let args = [tensor(&[7, 13], 0.0).into(), Tensor::scalar(1.0f32).into()];
        for _ in 0..3 {
            let z = vm.call("on_input", &args).unwrap();
            assert_close(&floats(&z), &[2.5; 91], &format!("{target:?}"));
        }
    }
}

#[test]
fn a_bad_inplace_index_is_an_error_naming_it() {
    let bad = ADD.replacen("inplace_indices=[0]", "inplace_indices=[2]", 1);
    let err = match bad.parse::<IRModule>() {
        Ok(m) => panic!("parsed:\n{m}"),
        Err(e) => e.to_string(),
    };
    assert!(
        err.contains("inplace_indices[0] must be -1 or an argument index in [0, 2), found 2"),
        "{err}"
    );
}

/// TVM's FuseTIR case `test_inplace_simple`, built: its primitive function
/// of three in-place calls on a parameter becomes one `call_tir_inplace`
/// of the fused PrimFunc, which writes a copy of the caller's `x`.
#[test]
fn a_fused_inplace_group_runs_and_leaves_the_input_alone() {
    let m = parse(include_str!(
        "../../tests/tvm_passes/fuse_tir/test_inplace_simple.before.py"
    ));
    let (x, p0) = (tensor(&[10, 20], 0.2), Tensor::scalar(0.5f32));
    let xs = x.to_vec::<f32>().unwrap();
    let want: Vec<f32> = xs.iter().map(|v| (v + 0.5).exp()).collect();
    for target in targets() {
        let exec = build(&m, &target).unwrap_or_else(|e| panic!("{target:?}: {e}"));
        let out = VirtualMachine::new(&exec)
            .call("main", &[x.clone().into(), p0.clone().into()])
            .unwrap();
        assert_close(&floats(&out), &want, &format!("{target:?}"));
        assert_eq!(x.to_vec::<f32>().unwrap(), xs, "x changed on {target:?}");
    }
    // The fused call is in place on `x`.
    let fused = crate::transform::FuseTIR::default().run(m).unwrap();
    let main = fused.get_relax("main").unwrap().to_string();
    assert!(
        main.contains("R.call_tir_inplace(cls.fused_add_exp_squeeze, (x, p0), out_ty=R.Tensor((10, 20), dtype=\"float32\"), inplace_indices=[0])"),
        "{main}"
    );
}
