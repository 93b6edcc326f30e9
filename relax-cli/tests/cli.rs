//! The `relax` binary, run as a user runs it, on one of ONNX's backend
//! cases (`relax-onnx/tests/data/test_Conv1d_stride`).

use ndarray_npy::{ReadNpyExt, WriteNpyExt};
use relax_onnx::backend_test::{compare, BackendCase};
use relax_runtime::Tensor;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn case_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../relax-onnx/tests/data/test_Conv1d_stride")
}

fn relax(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_relax"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the relax binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[track_caller]
fn ok(out: &Output) -> String {
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

#[track_caller]
fn fails(out: &Output, needle: &str) {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(needle), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// A scratch directory with the case's input as `x.npy`; the case.
fn setup(name: &str) -> (PathBuf, BackendCase) {
    let dir = std::env::temp_dir().join(format!("relax-cli-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let case = BackendCase::load(&case_dir()).unwrap();
    let x = case.data_sets[0].0[0].to_ndarray::<f32>().unwrap();
    x.write_npy(std::fs::File::create(dir.join("x.npy")).unwrap())
        .unwrap();
    (dir, case)
}

#[test]
fn import_check_run_and_print_a_model() {
    let (dir, case) = setup("run");
    let model = case_dir().join("model.onnx");
    let model = model.to_str().unwrap();
    ok(&relax(&["import", model, "-o", "model.py"], &dir));
    assert!(ok(&relax(&["check", "model.py"], &dir)).contains("well formed"));
    let expected = &case.data_sets[0].1[0];
    for (source, out) in [(model, "y_onnx.npy"), ("model.py", "y_py.npy")] {
        ok(&relax(
            &["run", source, "--input", "v0=x.npy", "-o", out],
            &dir,
        ));
        let y =
            ndarray::ArrayD::<f32>::read_npy(std::fs::File::open(dir.join(out)).unwrap()).unwrap();
        compare(&Tensor::from_ndarray(&y), expected, 1e-3, 1e-4).unwrap();
    }
    let printed = ok(&relax(
        &["print", "model.py", "--passes", "LegalizeOps"],
        &dir,
    ));
    assert!(printed.contains("R.call_tir(cls.conv2d"), "{printed}");
    let dot = ok(&relax(&["dot", "model.py", "--fuse"], &dir));
    assert!(
        dot.starts_with("digraph \"main\"") && dot.contains("subgraph cluster_1"),
        "{dot}"
    );
    let bench = ok(&relax(
        &["bench", model, "--input", "x.npy", "--runs", "5"],
        &dir,
    ));
    assert!(bench.contains("5 runs") && bench.contains("p50"), "{bench}");
}

#[test]
fn bad_input_is_an_error_on_stderr() {
    let (dir, _) = setup("errors");
    let model = case_dir().join("model.onnx");
    let model = model.to_str().unwrap();
    fails(&relax(&["run", "missing.onnx"], &dir), "missing.onnx");
    fails(
        &relax(&["run", "x.npy"], &dir),
        "a model is an ONNX file (.onnx) or TVMScript (.py)",
    );
    fails(
        &relax(&["run", model], &dir),
        "`main` takes 1 input(s) (v0), and 0 --input were given",
    );
    fails(
        &relax(&["run", model, "--input", "y=x.npy"], &dir),
        "--input 0 is named `y`, but `main`'s parameter 0 is `v0`",
    );
    fails(
        &relax(&["run", model, "--input", "nope.npy"], &dir),
        "nope.npy",
    );
    fails(
        &relax(&["print", model, "--passes", "Frob"], &dir),
        "no pass named `Frob`",
    );
    fails(
        &relax(&["import", model, "-o", "model.txt"], &dir),
        "writes TVMScript (.py)",
    );
    std::fs::write(
        dir.join("bad.py"),
        "@I.ir_module\nclass Module:\n    oops\n",
    )
    .unwrap();
    fails(&relax(&["check", "bad.py"], &dir), "bad.py");
    std::fs::write(dir.join("bad.onnx"), b"\xff\xff").unwrap();
    fails(&relax(&["check", "bad.onnx"], &dir), "not an ONNX model");
    // A wrong shape is the VM's error, naming the parameter.
    ndarray::Array2::<f32>::zeros((2, 3))
        .write_npy(std::fs::File::create(dir.join("small.npy")).unwrap())
        .unwrap();
    fails(&relax(&["run", model, "--input", "small.npy"], &dir), "v0");
}
