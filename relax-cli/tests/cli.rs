//! The `relax` binary, run as a user runs it, on one of ONNX's backend
//! cases (`relax-onnx/tests/data/test_Conv1d_stride`) and on a model
//! written here, with a `/` in its input's name and its weight in an
//! external data file.

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
    assert!(
        err.starts_with("error: ") && !err.contains("error: error:"),
        "one `error: ` at the start: {err}"
    );
}

/// A scratch directory with the case's input as `x.npy`; the case.
fn setup(name: &str) -> (PathBuf, BackendCase) {
    let dir = std::env::temp_dir().join(format!("relax-cli-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let case = BackendCase::load(&case_dir()).unwrap();
    let x = case.data_sets[0].0[0]
        .as_tensor()
        .unwrap()
        .to_ndarray::<f32>()
        .unwrap();
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
    let expected = case.data_sets[0].1[0].as_tensor().unwrap();
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
    // `--pipeline`: the module the build compiles, its kernels scheduled
    // (the convolution of four channels, an image's stem to the host's
    // rule, writes NHWC from a register tile with vector loops) and no
    // Relax op left uncalled.
    let built = ok(&relax(&["print", "model.py", "--pipeline"], &dir));
    assert!(
        built.contains("acc = T.alloc_buffer(")
            && built.contains("T.vectorized(")
            && !built.contains("R.nn."),
        "{built}"
    );
    let dot = ok(&relax(&["dot", "model.py", "--fuse"], &dir));
    assert!(
        dot.starts_with("digraph \"main\"") && dot.contains("subgraph cluster_1"),
        "{dot}"
    );
    let svg = ok(&relax(&["dot", "model.py", "--fuse", "--svg"], &dir));
    assert!(svg.contains("<svg") && svg.contains("fused_"), "{svg}");
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

/// `--passes ToMixedPrecision(bfloat16)` prints the mixed module, and
/// `run --precision bf16|f16` (LLVM and the interpreter) and `bench
/// --precision` compute the case's output within the precision's tolerance.
#[test]
fn mixed_precision_print_run_and_bench() {
    let (dir, case) = setup("mixed");
    let model = case_dir().join("model.onnx");
    let model = model.to_str().unwrap();
    for (spec, dtype) in [
        ("ToMixedPrecision(bfloat16)", "bfloat16"),
        ("ToMixedPrecision", "float16"),
        ("ToMixedPrecision(f16)", "float16"),
    ] {
        let printed = ok(&relax(&["print", model, "--passes", spec], &dir));
        assert!(
            printed.contains(&format!(r#"R.astype(lv, dtype="{dtype}")"#))
                && printed.contains(r#"out_dtype="float32""#)
                && printed.contains(&format!(
                    r#"R.Tensor((2, 5, 4), dtype="{dtype}") = R.squeeze"#
                )),
            "{spec}: {printed}"
        );
    }
    let help = ok(&relax(&["print", model, "--passes", "help"], &dir));
    assert!(
        help.contains("ToMixedPrecision(float16|bfloat16)"),
        "{help}"
    );
    fails(
        &relax(
            &["print", model, "--passes", "ToMixedPrecision(int8)"],
            &dir,
        ),
        "ToMixedPrecision: the mixed dtype must be float16 or bfloat16, found `int8`",
    );
    fails(
        &relax(&["print", model, "--passes", "LegalizeOps(x)"], &dir),
        "LegalizeOps takes no parameter, and `x` was given",
    );
    fails(
        &relax(
            &["print", model, "--passes", "ToMixedPrecision(bfloat16"],
            &dir,
        ),
        "a parameter is written `ToMixedPrecision(value)`",
    );
    let expected = case.data_sets[0].1[0].as_tensor().unwrap();
    for (precision, tol) in [("bf16", 3e-2), ("f16", 4e-3), ("f32", 1e-4)] {
        for interp in [false, true] {
            let out = format!("y_{precision}_{interp}.npy");
            let mut args = vec![
                "run",
                model,
                "-i",
                "x.npy",
                "-o",
                &out,
                "--precision",
                precision,
            ];
            if interp {
                args.push("--interp");
            }
            ok(&relax(&args, &dir));
            let y = ndarray::ArrayD::<f32>::read_npy(std::fs::File::open(dir.join(&out)).unwrap())
                .unwrap();
            compare(&Tensor::from_ndarray(&y), expected, tol, tol)
                .unwrap_or_else(|e| panic!("{precision} (interp {interp}): {e}"));
        }
    }
    let bench = ok(&relax(
        &[
            "bench",
            model,
            "-i",
            "x.npy",
            "--runs",
            "2",
            "--precision",
            "bf16",
        ],
        &dir,
    ));
    assert!(bench.contains("2 runs"), "{bench}");
    let err = relax(&["run", model, "-i", "x.npy", "--precision", "f8"], &dir);
    assert_eq!(err.status.code(), Some(2), "clap rejects the value");
    assert!(text(&err.stderr).contains("bf16"), "{}", text(&err.stderr));
}

/// `import -o model.rs`: the DSL file lowers as the macro lowers it, and
/// with the weights its `load_weights` reads, gives the expected outputs.
#[test]
fn imported_dsl_files_compile_and_compute_the_model() {
    let dir = std::env::temp_dir().join(format!("relax-cli-dsl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../relax-onnx/tests/data");
    for case_name in [
        "test_Conv2d_depthwise_strided",
        "test_BatchNorm2d_eval",
        "test_GLU",
        "test_PReLU_2d_multiparam",
        "test_operator_repeat",
    ] {
        let case = BackendCase::load(&data.join(case_name)).unwrap();
        let model = data.join(case_name).join("model.onnx");
        let out = format!("{case_name}.rs");
        ok(&relax(
            &["import", model.to_str().unwrap(), "-o", &out],
            &dir,
        ));
        let source = std::fs::read_to_string(dir.join(&out)).unwrap();
        let file =
            syn::parse_file(&source).unwrap_or_else(|e| panic!("{case_name}: {e}\n{source}"));
        let tokens = file
            .items
            .iter()
            .find_map(|item| match item {
                syn::Item::Macro(m) => Some(m.mac.tokens.clone()),
                _ => None,
            })
            .expect("a relax::module! item");
        let lowered = relax_core::frontend::lower_module_macro(tokens)
            .unwrap_or_else(|e| panic!("{case_name}: {}\n{source}", e[0].message));
        // The weights table, as the generated `load_weights` reads it.
        let table: Vec<(String, String, Vec<i64>)> = file
            .items
            .iter()
            .find_map(|item| match item {
                syn::Item::Const(c) if c.ident == "WEIGHTS" => Some(c.expr.clone()),
                _ => None,
            })
            .map(|e| weights_table(&e))
            .expect("a WEIGHTS table");
        let table_refs: Vec<(&str, &str, &[i64])> = table
            .iter()
            .map(|(n, d, s)| (n.as_str(), d.as_str(), s.as_slice()))
            .collect();
        let bytes = std::fs::read(dir.join(format!("{case_name}.weights"))).unwrap();
        let weights = relax::dsl::load_weights(&bytes, &table_refs).unwrap();
        let exec =
            relax_core::backend::build(&lowered.module, &relax_core::backend::Target::host())
                .unwrap();
        let vm = relax_runtime::VirtualMachine::new(&exec);
        let (inputs, expected) = &case.data_sets[0];
        let mut args: Vec<relax_runtime::Value> = inputs.to_vec();
        args.extend(weights.into_iter().map(relax_runtime::Value::Tensor));
        let got = vm.call("main", &args).unwrap();
        let relax_runtime::Value::Tensor(got) = got else {
            panic!("{case_name}: not a tensor")
        };
        compare(&got, expected[0].as_tensor().unwrap(), 1e-3, 1e-4)
            .unwrap_or_else(|m| panic!("{case_name}: {m}"));
    }
}

/// The `WEIGHTS` table's entries: `(name, dtype, &[dims])` literals.
fn weights_table(e: &syn::Expr) -> Vec<(String, String, Vec<i64>)> {
    let syn::Expr::Reference(r) = e else {
        panic!("&[…]")
    };
    let syn::Expr::Array(a) = &*r.expr else {
        panic!("[…]")
    };
    let lit_str = |e: &syn::Expr| match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => s.value(),
        _ => panic!("a string"),
    };
    a.elems
        .iter()
        .map(|t| {
            let syn::Expr::Tuple(t) = t else {
                panic!("a tuple")
            };
            let syn::Expr::Reference(dims) = &t.elems[2] else {
                panic!("&[…]")
            };
            let syn::Expr::Array(dims) = &*dims.expr else {
                panic!("[…]")
            };
            let dims = dims
                .elems
                .iter()
                .map(|d| match d {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Int(i),
                        ..
                    }) => i.base10_parse().unwrap(),
                    _ => panic!("an integer"),
                })
                .collect();
            (lit_str(&t.elems[0]), lit_str(&t.elems[1]), dims)
        })
        .collect()
}

/// `y = relu(gpu_0/data_0) + b`, `b` (2 floats: 10, 20) at offset 4 of
/// `model.onnx.data`, both written to `dir`.
fn write_named_external_model(dir: &Path) {
    use prost::Message;
    use relax_onnx::proto::{
        tensor_proto, tensor_shape_proto, type_proto, GraphProto, ModelProto, NodeProto,
        OperatorSetIdProto, StringStringEntryProto, TensorProto, TensorShapeProto, TypeProto,
        ValueInfoProto,
    };
    let info = |name: &str| ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(tensor_proto::DataType::Float as i32),
                shape: Some(TensorShapeProto {
                    dim: vec![tensor_shape_proto::Dimension {
                        value: Some(tensor_shape_proto::dimension::Value::DimValue(2)),
                        ..Default::default()
                    }],
                }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    };
    let node = |op: &str, inputs: &[&str], output: &str| NodeProto {
        op_type: Some(op.into()),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec![output.into()],
        ..Default::default()
    };
    let entry = |k: &str, v: &str| StringStringEntryProto {
        key: Some(k.into()),
        value: Some(v.into()),
    };
    let model = ModelProto {
        ir_version: Some(8),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(17),
        }],
        graph: Some(GraphProto {
            node: vec![
                node("Relu", &["gpu_0/data_0"], "r"),
                node("Add", &["r", "b"], "out.1"),
            ],
            initializer: vec![TensorProto {
                name: Some("b".into()),
                dims: vec![2],
                data_type: Some(tensor_proto::DataType::Float as i32),
                data_location: Some(tensor_proto::DataLocation::External as i32),
                external_data: vec![
                    entry("location", "model.onnx.data"),
                    entry("offset", "4"),
                    entry("length", "8"),
                ],
                ..Default::default()
            }],
            input: vec![info("gpu_0/data_0")],
            output: vec![info("out.1")],
            ..Default::default()
        }),
        ..Default::default()
    };
    std::fs::write(dir.join("model.onnx"), model.encode_to_vec()).unwrap();
    let mut data = vec![0u8; 4];
    data.extend(10f32.to_le_bytes());
    data.extend(20f32.to_le_bytes());
    std::fs::write(dir.join("model.onnx.data"), data).unwrap();
}

/// An input is named by its ONNX name or its parameter's; the weight comes
/// from the external data file beside the model.
#[test]
fn inputs_go_by_their_graph_names_and_external_weights_are_read() {
    let dir = std::env::temp_dir().join(format!("relax-cli-names-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    write_named_external_model(&dir);
    ndarray::arr1(&[-1.0f32, 2.0])
        .write_npy(std::fs::File::create(dir.join("x.npy")).unwrap())
        .unwrap();
    for (i, name) in ["gpu_0/data_0", "gpu_0_data_0"].iter().enumerate() {
        let out = format!("y{i}.npy");
        ok(&relax(
            &[
                "run",
                "model.onnx",
                "--input",
                &format!("{name}=x.npy"),
                "-o",
                &out,
            ],
            &dir,
        ));
        let y =
            ndarray::ArrayD::<f32>::read_npy(std::fs::File::open(dir.join(&out)).unwrap()).unwrap();
        assert_eq!(y.as_slice().unwrap(), [10.0, 22.0], "--input {name}=…");
    }
    fails(
        &relax(&["run", "model.onnx", "--input", "data=x.npy"], &dir),
        "--input 0 is named `data`, but `main`'s parameter 0 is `gpu_0_data_0` \
         (the model's input `gpu_0/data_0`)",
    );
    // The model read from another directory still finds its data file.
    let parent = dir.parent().unwrap();
    let model = dir.join("model.onnx");
    ok(&relax(
        &[
            "run",
            model.to_str().unwrap(),
            "--input",
            dir.join("x.npy").to_str().unwrap(),
        ],
        parent,
    ));
    std::fs::remove_file(dir.join("model.onnx.data")).unwrap();
    fails(
        &relax(&["run", "model.onnx", "--input", "x.npy"], &dir),
        "tensor `b`: external data file `model.onnx.data`",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `relax import -o prelu.rs` writes exactly the file the UI test
/// `tests/ui/pass/imported_model.rs` compiles and runs (header line aside,
/// which names the paths): the model struct and its `load` and `main`.
#[test]
fn the_imported_model_file_is_the_one_the_ui_test_compiles() {
    let dir = std::env::temp_dir().join(format!("relax-cli-struct-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let model = root.join("relax-onnx/tests/data/test_PReLU_2d_multiparam/model.onnx");
    ok(&relax(
        &["import", model.to_str().unwrap(), "-o", "prelu.rs"],
        &dir,
    ));
    let fresh = std::fs::read_to_string(dir.join("prelu.rs")).unwrap();
    let committed = std::fs::read_to_string(root.join("tests/ui/pass/imported/prelu.rs")).unwrap();
    let body = |s: &str| s.lines().skip(1).collect::<Vec<_>>().join("\n");
    assert_eq!(
        body(&fresh),
        body(&committed),
        "regenerate tests/ui/pass/imported/prelu.rs"
    );
    assert!(fresh.contains("pub struct Prelu") && fresh.contains("pub fn main(&self, v0"));
    assert_eq!(
        std::fs::read(dir.join("prelu.weights")).unwrap(),
        std::fs::read(root.join("tests/ui/pass/imported/prelu.weights")).unwrap()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A reader that stops early (`relax print m | head`) ends the command
/// quietly, with status 0, instead of a panic on the broken pipe.
#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    // The tiny decoder's legalized module is 1.6 MB of text, far more than
    // a pipe holds.
    let model = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../relax-onnx/tests/data/models/tiny_llama/model.onnx");
    let mut child = Command::new(env!("CARGO_BIN_EXE_relax"))
        .args(["print", model.to_str().unwrap(), "--passes", "LegalizeOps"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 8];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // The read end is dropped here, and the rest of the module has nowhere
    // to go.
    let out = child.wait_with_output().unwrap();
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// Every error line has one `error: `, the import's errors included (they
/// used to print `error: error: …`).
#[test]
fn errors_say_error_once() {
    let dir = std::env::temp_dir().join(format!("relax-cli-prefix-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("bad.onnx"), b"\xff\xff").unwrap();
    let out = relax(&["run", "bad.onnx"], &dir);
    let err = text(&out.stderr);
    assert!(err.starts_with("error: "), "{err}");
    assert_eq!(err.matches("error:").count(), 1, "{err}");
    assert!(!err.contains("error: error:"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `run` shows each output by name with its dtype and shape and a numpy
/// summary; `--json` gives the same as JSON; `bench --json` the timings;
/// `--help` explains every argument with examples; `completions` writes a
/// script; a wrong input name lists the model's inputs.
#[test]
fn the_command_line_explains_itself() {
    let (dir, case) = setup("explains");
    let model = case_dir().join("model.onnx");
    let model = model.to_str().unwrap();
    let imported =
        relax_onnx::from_onnx(&case.model, &relax_onnx::ImportOptions::default()).unwrap();
    let out_name = imported.output_names[0].clone();
    let shown = ok(&relax(&["run", model, "--input", "x.npy"], &dir));
    let header = shown.lines().next().unwrap();
    assert!(
        header.starts_with(&format!("{out_name}: float32[")),
        "{shown}"
    );
    assert!(shown.lines().nth(1).unwrap().starts_with('['), "{shown}");

    let json = ok(&relax(&["run", model, "--input", "x.npy", "--json"], &dir));
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(doc[0]["name"], out_name.as_str());
    assert_eq!(doc[0]["dtype"], "float32");
    assert!(
        doc[0]["mean"].is_number() && doc[0].get("data").is_none(),
        "{doc}"
    );
    let full = ok(&relax(
        &["run", model, "--input", "x.npy", "--json", "--full"],
        &dir,
    ));
    let doc: serde_json::Value = serde_json::from_str(&full).unwrap();
    let expected = case.data_sets[0].1[0].as_tensor().unwrap();
    assert_eq!(doc[0]["data"].as_array().unwrap().len(), expected.numel());

    let bench = ok(&relax(
        &["bench", model, "--input", "x.npy", "--runs", "3", "--json"],
        &dir,
    ));
    let doc: serde_json::Value = serde_json::from_str(&bench).unwrap();
    assert_eq!(doc["runs"], 3);
    assert!(doc["ms"]["p50"].is_number(), "{doc}");

    let help = ok(&relax(&["--help"], &dir));
    for command in [
        "import",
        "check",
        "print",
        "run",
        "bench",
        "dot",
        "completions",
    ] {
        assert!(
            help.contains(&format!("relax {command}")),
            "{command}: {help}"
        );
    }
    for command in ["run", "bench", "dot", "import", "check", "print"] {
        let help = ok(&relax(&[command, "--help"], &dir));
        assert!(
            help.contains("The model") || help.contains("The ONNX model"),
            "{command}: {help}"
        );
        for line in help.lines().filter(|l| l.trim_start().starts_with('-')) {
            let described = line.split("  ").filter(|p| !p.trim().is_empty()).count() > 1;
            assert!(
                described,
                "`relax {command} --help`: `{line}` has no help text"
            );
        }
    }
    let script = ok(&relax(&["completions", "bash"], &dir));
    assert!(
        script.contains("_relax()") || script.contains("complete"),
        "{script}"
    );

    let out = relax(&["run", model, "--input", "nope=x.npy"], &dir);
    let err = text(&out.stderr);
    assert!(
        err.contains("hint: the model's inputs are, in order: "),
        "{err}"
    );
}

/// The package's header: the offset and length of its CPU level string
/// (after the magic, the version, the architecture and the OS).
fn cpu_level_range(bytes: &[u8]) -> (usize, usize) {
    let len_at = |pos: usize| u64::from_le_bytes(bytes[pos..pos + 8].try_into().unwrap()) as usize;
    let mut pos = 12;
    for _ in 0..2 {
        pos += 8 + len_at(pos);
    }
    (pos + 8, len_at(pos))
}

/// `relax compile` writes a package that `run` and `bench` load without
/// compiling: the same outputs as the model, its graph's input and output
/// names kept; a damaged file or a CPU without the package's level is an
/// error.
#[test]
fn a_compiled_package_runs_as_the_model_does() {
    let (dir, case) = setup("package");
    let model = case_dir().join("model.onnx");
    let model = model.to_str().unwrap();
    let compiled = relax(&["compile", model, "-o", "m.relax"], &dir);
    // stderr is a pipe: no progress bar is drawn.
    assert_eq!(text(&compiled.stderr), "");
    let said = ok(&compiled);
    assert!(
        said.contains(": imported in ")
            && said.contains(" s, compiled in ")
            && said.contains("wrote m.relax"),
        "{said}"
    );
    let from_model = ok(&relax(&["run", model, "--input", "v0=x.npy"], &dir));
    let from_package = ok(&relax(&["run", "m.relax", "--input", "v0=x.npy"], &dir));
    assert_eq!(from_model, from_package);
    ok(&relax(
        &["run", "m.relax", "-i", "x.npy", "-o", "y.npy"],
        &dir,
    ));
    let y =
        ndarray::ArrayD::<f32>::read_npy(std::fs::File::open(dir.join("y.npy")).unwrap()).unwrap();
    let expected = case.data_sets[0].1[0].as_tensor().unwrap();
    compare(&Tensor::from_ndarray(&y), expected, 1e-3, 1e-4).unwrap();
    let timed = relax(
        &["compile", model, "-o", "timed.relax", "--time-passes"],
        &dir,
    );
    ok(&timed);
    let timings = text(&timed.stderr);
    for needle in [
        "pass timings:",
        "LegalizeOps: ",
        "FuseTIR: ",
        "code generation (",
        "linking (cc): ",
        "stages: import ",
        ", passes ",
        ", lowering ",
        " kernels) ",
        ", linking ",
        ", writing ",
    ] {
        assert!(timings.contains(needle), "{needle}: {timings}");
    }
    let timed = relax(&["run", model, "-i", "x.npy", "--time-passes"], &dir);
    ok(&timed);
    assert!(
        text(&timed.stderr).contains("FuseOps: "),
        "{}",
        text(&timed.stderr)
    );
    let bench = ok(&relax(
        &["bench", "m.relax", "-i", "x.npy", "--runs", "3"],
        &dir,
    ));
    assert!(
        bench.contains("loaded in") && bench.contains("3 runs"),
        "{bench}"
    );

    // Every CPU runs the baseline level (without FMA: rounding differs).
    ok(&relax(
        &["compile", model, "-o", "generic.relax", "--cpu", "generic"],
        &dir,
    ));
    ok(&relax(
        &["run", "generic.relax", "-i", "x.npy", "-o", "y_generic.npy"],
        &dir,
    ));
    let y =
        ndarray::ArrayD::<f32>::read_npy(std::fs::File::open(dir.join("y_generic.npy")).unwrap())
            .unwrap();
    compare(&Tensor::from_ndarray(&y), expected, 1e-3, 1e-4).unwrap();
    fails(
        &relax(
            &["compile", model, "-o", "m.relax", "--cpu", "pentium"],
            &dir,
        ),
        "--cpu pentium is not a CPU level",
    );
    fails(
        &relax(&["compile", model, "-o", "m.bin"], &dir),
        "`compile` writes a package, named `.relax`",
    );
    fails(
        &relax(&["run", "m.relax", "-i", "x.npy", "--interp"], &dir),
        "--interp takes the model",
    );

    let bytes = std::fs::read(dir.join("m.relax")).unwrap();
    for (name, damaged, needle) in [
        (
            "short.relax",
            bytes[..bytes.len() / 2].to_vec(),
            "truncated",
        ),
        ("empty.relax", Vec::new(), "truncated"),
        (
            "flipped.relax",
            {
                let mut b = bytes.clone();
                let i = b.len() - 100;
                b[i] ^= 1;
                b
            },
            "checksum of the library does not match",
        ),
        (
            "longer.relax",
            [bytes.as_slice(), b"x"].concat(),
            "unexpected bytes",
        ),
        ("model.relax", std::fs::read(model).unwrap(), "magic number"),
        (
            "future-cpu.relax",
            {
                let mut b = bytes.clone();
                let (at, len) = cpu_level_range(&b);
                b[at..at + len].fill(b'z');
                b
            },
            "which this CPU lacks",
        ),
    ] {
        std::fs::write(dir.join(name), damaged).unwrap();
        fails(&relax(&["run", name, "-i", "x.npy"], &dir), needle);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// One package runs every size of a symbolic dim, and keeps the graph's
/// input names (`gpu_0/data_0`).
#[test]
fn a_package_keeps_symbolic_dims_and_input_names() {
    let dir = std::env::temp_dir().join(format!("relax-cli-package-sym-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("sym.py"),
        r#"@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 3), dtype="float32")) -> R.Tensor(("n", 3), dtype="float32"):
        n = T.int64()
        y = R.nn.relu(x)
        z = R.add(y, x)
        return z
"#,
    )
    .unwrap();
    ok(&relax(&["compile", "sym.py", "-o", "sym.relax"], &dir));
    for n in [1usize, 4] {
        let x = ndarray::Array2::from_shape_fn((n, 3), |(i, j)| i as f32 - j as f32);
        x.write_npy(std::fs::File::create(dir.join("x.npy")).unwrap())
            .unwrap();
        ok(&relax(
            &["run", "sym.relax", "-i", "x=x.npy", "-o", "y.npy"],
            &dir,
        ));
        let y = ndarray::Array2::<f32>::read_npy(std::fs::File::open(dir.join("y.npy")).unwrap())
            .unwrap();
        assert_eq!(y, x.mapv(|v| v.max(0.0) + v), "n = {n}");
    }
    write_named_external_model(&dir);
    ndarray::arr1(&[-1.0f32, 2.0])
        .write_npy(std::fs::File::create(dir.join("x.npy")).unwrap())
        .unwrap();
    ok(&relax(
        &["compile", "model.onnx", "-o", "named.relax"],
        &dir,
    ));
    // The package needs neither the model nor its external data.
    std::fs::remove_file(dir.join("model.onnx.data")).unwrap();
    let shown = ok(&relax(
        &["run", "named.relax", "--input", "gpu_0/data_0=x.npy"],
        &dir,
    ));
    assert!(shown.starts_with("out.1: float32[2]"), "{shown}");
    assert!(
        shown.contains("[10, 22]") || shown.contains("[10., 22.]"),
        "{shown}"
    );
    fails(
        &relax(&["run", "named.relax", "--input", "data=x.npy"], &dir),
        "(the model's input `gpu_0/data_0`)",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `relax compile --tune` measures the kernels a tuning database lacks
/// and records them; a second compile with the database measures
/// nothing; `run` with it computes what the untuned package does; a
/// bad database is an error naming the field.
#[test]
fn tuning_records_kernels_once_and_later_builds_reuse_them() {
    let dir = std::env::temp_dir().join(format!("relax-cli-tune-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A matrix product large enough for the packed GEMM (70 × 130 × 131).
    std::fs::write(
        dir.join("mm.py"),
        r#"@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((70, 130), dtype="float32"), w: R.Tensor((130, 131), dtype="float32")) -> R.Tensor((70, 131), dtype="float32"):
        y = R.matmul(x, w)
        return y
"#,
    )
    .unwrap();
    let _ = std::fs::remove_file(dir.join("db.json"));
    let first = relax(
        &[
            "compile",
            "mm.py",
            "-o",
            "t.relax",
            "--tune",
            "3",
            "--tuning-db",
            "db.json",
        ],
        &dir,
    );
    ok(&first);
    let said = text(&first.stderr);
    assert!(said.contains("tuning: 1 kernels measured"), "{said}");
    let db = std::fs::read_to_string(dir.join("db.json")).unwrap();
    assert!(
        db.contains("\"format\": \"relax-tuning-db\"") && db.contains("\"gemm_mr\""),
        "{db}"
    );
    let again = relax(
        &[
            "compile",
            "mm.py",
            "-o",
            "t.relax",
            "--tune",
            "3",
            "--tuning-db",
            "db.json",
        ],
        &dir,
    );
    ok(&again);
    let said = text(&again.stderr);
    assert!(
        said.contains("0 candidates run") && said.contains("1 from the database"),
        "{said}"
    );
    ok(&relax(&["compile", "mm.py", "-o", "plain.relax"], &dir));
    let x = ndarray::Array2::from_shape_fn((70, 130), |(i, j)| ((i * 7 + j * 3) % 11) as f32 - 5.0);
    let w = ndarray::Array2::from_shape_fn((130, 131), |(i, j)| ((i + 2 * j) % 5) as f32 - 2.0);
    x.write_npy(std::fs::File::create(dir.join("x.npy")).unwrap())
        .unwrap();
    w.write_npy(std::fs::File::create(dir.join("w.npy")).unwrap())
        .unwrap();
    let run = |args: &[&str], out: &str| {
        let mut all = vec!["run"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["-i", "x=x.npy", "-i", "w=w.npy", "-o", out]);
        ok(&relax(&all, &dir));
        ndarray::Array2::<f32>::read_npy(std::fs::File::open(dir.join(out)).unwrap()).unwrap()
    };
    // Small integers: every order of the sums is exact.
    let want = x.dot(&w);
    assert_eq!(run(&["t.relax"], "a.npy"), want);
    assert_eq!(run(&["plain.relax"], "b.npy"), want);
    assert_eq!(run(&["mm.py", "--tuning-db", "db.json"], "c.npy"), want);
    fails(
        &relax(
            &[
                "run",
                "t.relax",
                "--tuning-db",
                "db.json",
                "-i",
                "x.npy",
                "-i",
                "w.npy",
            ],
            &dir,
        ),
        "were scheduled when it was compiled",
    );
    fails(
        &relax(&["compile", "mm.py", "-o", "t.relax", "--tune", "1"], &dir),
        "at least 2",
    );
    std::fs::write(
        dir.join("bad.json"),
        db.replacen("\"gemm_mr\": ", "\"gemm_mr\": 99", 1),
    )
    .unwrap();
    fails(
        &relax(
            &[
                "compile",
                "mm.py",
                "-o",
                "t.relax",
                "--tuning-db",
                "bad.json",
            ],
            &dir,
        ),
        // 1..=32 with AVX-512's registers, 1..=16 with AVX2's.
        "gemm_mr must be in 1..=",
    );
    fails(
        &relax(
            &[
                "run",
                "mm.py",
                "--tuning-db",
                "missing.json",
                "-i",
                "x.npy",
                "-i",
                "w.npy",
            ],
            &dir,
        ),
        "missing.json",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--bind NAME=VALUE` compiles a symbolic model as its static twin:
/// `run` and `bench` at the bound size compute what the symbolic build
/// does, another size is refused by the argument check, and a bad or
/// unknown binding is an error naming it.
#[test]
fn bind_fixes_a_symbolic_dim_before_the_build() {
    let dir = std::env::temp_dir().join(format!("relax-cli-bind-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("sym.py"),
        r#"@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 3), dtype="float32")) -> R.Tensor(("n", 3), dtype="float32"):
        n = T.int64()
        y = R.nn.relu(x)
        z = R.add(y, x)
        return z
"#,
    )
    .unwrap();
    let write_x = |n: usize| {
        let x = ndarray::Array2::from_shape_fn((n, 3), |(i, j)| i as f32 - j as f32);
        x.write_npy(std::fs::File::create(dir.join("x.npy")).unwrap())
            .unwrap();
        x
    };
    let x = write_x(5);
    ok(&relax(
        &[
            "run", "sym.py", "-i", "x=x.npy", "-o", "y.npy", "--bind", "n=5",
        ],
        &dir,
    ));
    let y =
        ndarray::Array2::<f32>::read_npy(std::fs::File::open(dir.join("y.npy")).unwrap()).unwrap();
    assert_eq!(y, x.mapv(|v| v.max(0.0) + v));
    ok(&relax(
        &[
            "bench", "sym.py", "-i", "x=x.npy", "--runs", "2", "--bind", "n=5",
        ],
        &dir,
    ));
    ok(&relax(
        &["compile", "sym.py", "-o", "bound.relax", "--bind", "n=5"],
        &dir,
    ));
    ok(&relax(&["run", "bound.relax", "-i", "x=x.npy"], &dir));
    write_x(4);
    assert!(!relax(&["run", "bound.relax", "-i", "x=x.npy"], &dir)
        .status
        .success());
    fails(
        &relax(
            &["run", "bound.relax", "-i", "x=x.npy", "--bind", "n=4"],
            &dir,
        ),
        "give --bind to `relax compile`",
    );
    fails(
        &relax(&["run", "sym.py", "-i", "x=x.npy", "--bind", "n"], &dir),
        "--bind takes NAME=VALUE, found `n`",
    );
    fails(
        &relax(&["run", "sym.py", "-i", "x=x.npy", "--bind", "n=-1"], &dir),
        "--bind n: the value must be a non-negative integer, found `-1`",
    );
    fails(
        &relax(
            &[
                "run", "sym.py", "-i", "x=x.npy", "--bind", "n=4", "--bind", "n=5",
            ],
            &dir,
        ),
        "--bind n: given twice",
    );
    fails(
        &relax(&["run", "sym.py", "-i", "x=x.npy", "--bind", "m=4"], &dir),
        "--bind: ",
    );
    let _ = std::fs::remove_dir_all(&dir);
}
