//! The ONNX importer end to end: ONNX's own backend test cases (a subset
//! committed under `tests/data/`, see its README) imported and run on the
//! interpreter and through LLVM against their expected outputs; models
//! built here for symbolic dims, parameters and opset forms, `shape_dict`,
//! and weights in an external data file; every kind of bad input (external
//! locations that leave the model's directory among them) an `Err`; and
//! mutated model bytes never panicking.

use prost::Message;
use relax_core::backend::{build, Target};
use relax_core::ir::{AttrValue, StructInfo};
use relax_onnx::backend_test::BackendCase;
use relax_onnx::proto::{
    attribute_proto::AttributeType, tensor_proto, tensor_shape_proto, type_proto, AttributeProto,
    GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorProto, TensorShapeProto,
    TypeProto, ValueInfoProto,
};
use relax_onnx::{from_onnx, from_onnx_file, ImportOptions};
use relax_runtime::{Tensor, Value, VirtualMachine};
use std::path::Path;

#[path = "onnx/attention.rs"]
mod attention;

fn data_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn outputs(v: Value) -> Vec<Tensor> {
    match v {
        Value::Tensor(t) => vec![t],
        Value::Tuple(fields) => fields
            .iter()
            .map(|f| match f {
                Value::Tensor(t) => t.clone(),
                other => panic!("not a tensor: {other:?}"),
            })
            .collect(),
        other => panic!("not a tensor: {other:?}"),
    }
}

/// Every case in `folder` (under tests/data) imports from its file and
/// gives its expected outputs on the interpreter and through LLVM, every
/// data set from one build.
fn check_cases(folder: &str, at_least: usize) {
    check_cases_on(folder, at_least, &[Target::interpreter(), Target::host()]);
}

/// [`check_cases`] on the given targets.
fn check_cases_on(folder: &str, at_least: usize, targets: &[Target]) {
    let cases = BackendCase::all_in(&data_dir().join(folder)).unwrap();
    assert!(cases.len() >= at_least, "{} cases", cases.len());
    for dir in cases {
        let case = BackendCase::load(&dir).unwrap();
        let options = case.import_options().unwrap();
        let imported = case
            .import(&options)
            .unwrap_or_else(|e| panic!("{}: {e}", case.name));
        for target in targets {
            case.check(&imported.module, target, 1e-3, 1e-4)
                .unwrap_or_else(|m| panic!("{} on {target:?}: {m}", case.name));
        }
    }
}

#[test]
fn onnx_backend_cases_give_their_expected_outputs_on_every_target() {
    check_cases("", 30);
}

/// One case per op type of ONNX's node suite (see tests/data/README.md).
#[test]
fn onnx_node_cases_one_per_op_type_pass_on_every_target() {
    check_cases("node", 80);
}

/// A two-layer Llama decoder (hidden size 64) exported by PyTorch with its
/// defaults (`scripts/export_torch.py --tiny-decoder`): weights in
/// `model.onnx.data`, dynamic batch and sequence axes, PyTorch's logits at
/// (1, 5) and (2, 12) from one build.
#[test]
fn a_pytorch_decoder_export_runs_at_two_shapes_from_one_build() {
    check_cases("models", 1);
}

// ----- models built here ------------------------------------------------

enum Dim {
    Value(i64),
    Param(&'static str),
}

fn value_info(name: &str, elem: tensor_proto::DataType, dims: &[Dim]) -> ValueInfoProto {
    let dim = dims
        .iter()
        .map(|d| tensor_shape_proto::Dimension {
            value: Some(match d {
                Dim::Value(v) => tensor_shape_proto::dimension::Value::DimValue(*v),
                Dim::Param(p) => tensor_shape_proto::dimension::Value::DimParam(p.to_string()),
            }),
            ..Default::default()
        })
        .collect();
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(elem as i32),
                shape: Some(TensorShapeProto { dim }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn f32_info(name: &str, dims: &[Dim]) -> ValueInfoProto {
    value_info(name, tensor_proto::DataType::Float, dims)
}

fn node(op: &str, inputs: &[&str], outputs: &[&str], attrs: Vec<AttributeProto>) -> NodeProto {
    NodeProto {
        op_type: Some(op.into()),
        name: Some(format!("{op}_0")),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: outputs.iter().map(|s| s.to_string()).collect(),
        attribute: attrs,
        ..Default::default()
    }
}

fn int_attr(name: &str, v: i64) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Int as i32),
        i: Some(v),
        ..Default::default()
    }
}

fn ints_attr(name: &str, v: &[i64]) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Ints as i32),
        ints: v.to_vec(),
        ..Default::default()
    }
}

fn f32_init(name: &str, dims: &[i64], data: Vec<f32>) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        dims: dims.to_vec(),
        data_type: Some(tensor_proto::DataType::Float as i32),
        float_data: data,
        ..Default::default()
    }
}

fn i64_init(name: &str, data: Vec<i64>) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        dims: vec![data.len() as i64],
        data_type: Some(tensor_proto::DataType::Int64 as i32),
        int64_data: data,
        ..Default::default()
    }
}

fn model(opset: i64, graph: GraphProto) -> Vec<u8> {
    ModelProto {
        ir_version: Some(8),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(opset),
        }],
        graph: Some(graph),
        ..Default::default()
    }
    .encode_to_vec()
}

/// The weights of [`linear_relu`].
const W: [f32; 6] = [1.0, -1.0, 0.5, 2.0, -0.25, 0.0];
const B: [f32; 2] = [0.5, -0.5];

/// `y = relu(x @ w + b)` with `x: (N, 3)`, `w: (3, 2)`, `b: (2,)`.
fn linear_relu(opset: i64) -> Vec<u8> {
    linear_relu_with(
        opset,
        vec![
            f32_init("w", &[3, 2], W.to_vec()),
            f32_init("b", &[2], B.to_vec()),
        ],
    )
}

/// [`linear_relu`] with the initializers `w` and `b` given.
fn linear_relu_with(opset: i64, initializer: Vec<TensorProto>) -> Vec<u8> {
    model(
        opset,
        GraphProto {
            name: Some("linear".into()),
            node: vec![
                node("MatMul", &["x", "w"], &["xw"], vec![]),
                node("Add", &["xw", "b"], &["pre"], vec![]),
                node("Relu", &["pre"], &["y"], vec![]),
            ],
            initializer,
            input: vec![f32_info("x", &[Dim::Param("N"), Dim::Value(3)])],
            output: vec![f32_info("y", &[Dim::Param("N"), Dim::Value(2)])],
            ..Default::default()
        },
    )
}

fn run(module: &relax_core::ir::IRModule, args: Vec<Value>) -> Vec<Tensor> {
    let exec = build(module, &Target::host()).unwrap();
    outputs(VirtualMachine::new(&exec).call("main", &args).unwrap())
}

#[test]
fn named_dims_stay_symbolic_and_any_batch_runs() {
    let imported = from_onnx(&linear_relu(17), &ImportOptions::default()).unwrap();
    let main = imported.module.get_relax("main").unwrap();
    assert_eq!(main.params.len(), 1, "weights are constants by default");
    let text = imported.module.to_string();
    assert!(
        text.contains(r#"x: R.Tensor(("N", 3), dtype="float32")"#),
        "{text}"
    );
    for n in [1, 4] {
        let x: Vec<f32> = (0..3 * n).map(|i| i as f32 - 2.0).collect();
        let y = run(
            &imported.module,
            vec![Value::Tensor(Tensor::from_vec(&[n, 3], x.clone()).unwrap())],
        );
        let want: Vec<f32> = (0..n as usize)
            .flat_map(|r| {
                let row = &x[3 * r..3 * r + 3];
                let w = [[1.0, -1.0], [0.5, 2.0], [-0.25, 0.0]];
                let b = [0.5, -0.5];
                (0..2).map(move |c| {
                    let s: f32 = (0..3).map(|k| row[k] * w[k][c]).sum::<f32>() + b[c];
                    s.max(0.0)
                })
            })
            .collect();
        assert_eq!(y[0].to_vec::<f32>().unwrap(), want);
    }
}

#[test]
fn weights_can_be_parameters() {
    let options = ImportOptions {
        keep_params_in_input: true,
        ..Default::default()
    };
    let imported = from_onnx(&linear_relu(17), &options).unwrap();
    let main = imported.module.get_relax("main").unwrap();
    let names: Vec<&str> = main.params.iter().map(|p| p.name_hint()).collect();
    assert_eq!(names, ["x", "w", "b"]);
    assert_eq!(main.attrs.get("num_input"), Some(&AttrValue::Int(1)));
    let params: Vec<&str> = imported.params.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(params, ["w", "b"]);
    let x = Tensor::from_vec(&[1, 3], vec![1.0f32, 2.0, 3.0]).unwrap();
    let mut args = vec![Value::Tensor(x)];
    args.extend(
        imported
            .params
            .iter()
            .map(|(_, t)| Value::Tensor(t.clone())),
    );
    let y = run(&imported.module, args);
    let constants = from_onnx(&linear_relu(17), &ImportOptions::default()).unwrap();
    let x = Tensor::from_vec(&[1, 3], vec![1.0f32, 2.0, 3.0]).unwrap();
    assert_eq!(y, run(&constants.module, vec![Value::Tensor(x)]));
}

/// `Reshape`'s target computed from the input's shape (`Shape`, `Gather`,
/// `Concat`), as exporters write it: folded during the import.
#[test]
fn shape_arithmetic_folds_into_a_static_reshape() {
    let bytes = model(
        13,
        GraphProto {
            node: vec![
                node("Shape", &["x"], &["s"], vec![]),
                node("Gather", &["s", "zero"], &["n"], vec![int_attr("axis", 0)]),
                node("Unsqueeze", &["n", "axes0"], &["n1"], vec![]),
                node(
                    "Concat",
                    &["n1", "minus_one"],
                    &["target"],
                    vec![int_attr("axis", 0)],
                ),
                node("Reshape", &["x", "target"], &["y"], vec![]),
            ],
            initializer: vec![
                TensorProto {
                    name: Some("zero".into()),
                    data_type: Some(tensor_proto::DataType::Int64 as i32),
                    int64_data: vec![0],
                    ..Default::default()
                },
                i64_init("axes0", vec![0]),
                i64_init("minus_one", vec![-1]),
            ],
            input: vec![f32_info(
                "x",
                &[Dim::Value(2), Dim::Value(3), Dim::Value(4)],
            )],
            output: vec![f32_info("y", &[Dim::Value(2), Dim::Value(12)])],
            ..Default::default()
        },
    );
    let imported = from_onnx(&bytes, &ImportOptions::default()).unwrap();
    let text = imported.module.to_string();
    assert!(text.contains("R.reshape(x, R.shape([2, 12]))"), "{text}");
    let main = imported.module.get_relax("main").unwrap();
    assert_eq!(
        main.ret_struct_info,
        StructInfo::tensor(vec![2.into(), 12.into()], relax_runtime::DataType::f32())
    );
}

/// Opset 1 to 12 forms: `Squeeze` axes and `Split` sizes as attributes.
#[test]
fn attributes_that_became_inputs_are_read_in_old_opsets() {
    let graph = |with_inputs: bool| GraphProto {
        node: vec![
            if with_inputs {
                node(
                    "Split",
                    &["x", "sizes"],
                    &["a", "b"],
                    vec![int_attr("axis", 1)],
                )
            } else {
                node(
                    "Split",
                    &["x"],
                    &["a", "b"],
                    vec![int_attr("axis", 1), ints_attr("split", &[1, 3])],
                )
            },
            if with_inputs {
                node("Squeeze", &["a", "axes1"], &["y"], vec![])
            } else {
                node("Squeeze", &["a"], &["y"], vec![ints_attr("axes", &[1])])
            },
        ],
        initializer: vec![i64_init("sizes", vec![1, 3]), i64_init("axes1", vec![1])],
        input: vec![f32_info("x", &[Dim::Value(2), Dim::Value(4)])],
        output: vec![
            f32_info("y", &[Dim::Value(2)]),
            f32_info("b", &[Dim::Value(2), Dim::Value(3)]),
        ],
        ..Default::default()
    };
    let x = Tensor::from_vec(&[2, 4], (0..8).map(|i| i as f32).collect()).unwrap();
    for (opset, with_inputs) in [(11, false), (13, true)] {
        let imported = from_onnx(&model(opset, graph(with_inputs)), &ImportOptions::default())
            .unwrap_or_else(|e| panic!("opset {opset}: {e}"));
        let got = run(&imported.module, vec![Value::Tensor(x.clone())]);
        assert_eq!(got[0].to_vec::<f32>().unwrap(), [0.0, 4.0]);
        assert_eq!(got[1].shape(), &[2, 3]);
    }
}

#[track_caller]
fn assert_import_error(bytes: &[u8], needle: &str) {
    let e = from_onnx(bytes, &ImportOptions::default())
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(e.contains(needle), "{e}");
}

#[test]
fn bad_models_are_errors_that_name_what_is_wrong() {
    assert_import_error(b"\xff\xff\xff\xff", "not an ONNX model");
    assert_import_error(&linear_relu(99), "opset 99");
    let graph = |nodes: Vec<NodeProto>| GraphProto {
        node: nodes,
        input: vec![
            f32_info("x", &[Dim::Value(2), Dim::Value(3)]),
            f32_info("s", &[Dim::Value(2)]),
        ],
        output: vec![f32_info("y", &[])],
        ..Default::default()
    };
    assert_import_error(
        &model(17, graph(vec![node("Frobnicate", &["x"], &["y"], vec![])])),
        "node \"Frobnicate_0\" (Frobnicate): op type `Frobnicate` is not supported",
    );
    let mut foreign = node("Relu", &["x"], &["y"], vec![]);
    foreign.domain = Some("com.microsoft".into());
    assert_import_error(
        &model(17, graph(vec![foreign])),
        "domain `com.microsoft` is not supported",
    );
    assert_import_error(
        &model(
            17,
            graph(vec![node("Reshape", &["x", "s"], &["y"], vec![])]),
        ),
        "the shape input must hold integers, found float32",
    );
    assert_import_error(
        &model(17, graph(vec![node("Relu", &["nowhere"], &["y"], vec![])])),
        "input `nowhere` is not computed before this node",
    );
    assert_import_error(
        &model(
            17,
            graph(vec![node(
                "Conv",
                &["x", "x"],
                &["y"],
                vec![int_attr("frob", 1)],
            )]),
        ),
        "attribute `frob` is not supported",
    );
    assert_import_error(
        &model(
            17,
            graph(vec![node(
                "Concat",
                &["x", "x"],
                &["y"],
                vec![ints_attr("axis", &[0])],
            )]),
        ),
        "attribute `axis` is INTS, expected INT",
    );
    assert_import_error(
        &model(17, graph(vec![node("Add", &["x", "s"], &["y"], vec![])])),
        "node \"Add_0\" (Add)",
    );
    assert_import_error(
        &model(17, graph(vec![node("Relu", &["x"], &["z"], vec![])])),
        "graph output `y` is never computed",
    );
}

/// Every single-byte change and every truncation of a real model's bytes
/// imports or fails with an `Err`; nothing panics.
#[test]
fn mutated_model_bytes_never_panic() {
    let bytes = std::fs::read(data_dir().join("test_Conv1d_stride/model.onnx")).unwrap();
    let try_import = |b: &[u8]| {
        let r = std::panic::catch_unwind(|| from_onnx(b, &ImportOptions::default()).map(|_| ()));
        assert!(r.is_ok(), "a panic on a mutated model of {} bytes", b.len());
    };
    for len in 0..bytes.len() {
        try_import(&bytes[..len]);
    }
    for i in 0..bytes.len() {
        for v in [0x00, 0xff, bytes[i] ^ 0x01, bytes[i].wrapping_add(0x40)] {
            let mut m = bytes.clone();
            m[i] = v;
            try_import(&m);
        }
    }
}

fn float_attr(name: &str, v: f32) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Float as i32),
        f: Some(v),
        ..Default::default()
    }
}

fn string_attr(name: &str, v: &str) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::String as i32),
        s: Some(v.as_bytes().to_vec()),
        ..Default::default()
    }
}

/// One node `op(x) -> y` on a float32 `x` of shape `(n,)`, opset 20.
fn unary_model(
    op: &str,
    attrs: Vec<AttributeProto>,
    n: i64,
    out: tensor_proto::DataType,
) -> Vec<u8> {
    model(
        20,
        GraphProto {
            name: Some(op.into()),
            node: vec![node(op, &["x"], &["y"], attrs)],
            input: vec![f32_info("x", &[Dim::Value(n)])],
            output: vec![value_info("y", out, &[Dim::Value(n)])],
            ..Default::default()
        },
    )
}

/// The composite activations (written with registry ops) and the
/// attribute forms the backend cases do not cover, on both targets,
/// against the formulas in `f64`.
#[test]
fn composite_activations_and_attribute_forms() {
    let xs = [-3.0f32, -1.0, -0.25, 0.0, 0.5, 2.0, 7.0];
    let n = xs.len() as i64;
    let softplus = |x: f64| x.max(0.0) + (-x.abs()).exp().ln_1p();
    type Formula = Box<dyn Fn(f64) -> f64>;
    let float_cases: Vec<(&str, Vec<AttributeProto>, Formula)> = vec![
        ("Mish", vec![], Box::new(move |x| x * softplus(x).tanh())),
        (
            "Celu",
            vec![float_attr("alpha", 2.0)],
            Box::new(|x: f64| x.max(0.0) + (2.0 * ((x / 2.0).exp() - 1.0)).min(0.0)),
        ),
        (
            "HardSwish",
            vec![],
            Box::new(|x: f64| x * (x / 6.0 + 0.5).clamp(0.0, 1.0)),
        ),
        (
            "ThresholdedRelu",
            vec![float_attr("alpha", 0.5)],
            Box::new(|x: f64| if x > 0.5 { x } else { 0.0 }),
        ),
        (
            "Shrink",
            vec![float_attr("lambd", 1.0), float_attr("bias", 0.5)],
            Box::new(|x: f64| {
                if x < -1.0 {
                    x + 0.5
                } else if x > 1.0 {
                    x - 0.5
                } else {
                    0.0
                }
            }),
        ),
    ];
    let x = Value::Tensor(Tensor::from_vec(&[n], xs.to_vec()).unwrap());
    for (op, attrs, f) in float_cases {
        let bytes = unary_model(op, attrs, n, tensor_proto::DataType::Float);
        let imported = from_onnx(&bytes, &ImportOptions::default()).unwrap();
        for target in [Target::interpreter(), Target::host()] {
            let exec = build(&imported.module, &target).unwrap();
            let y = outputs(
                VirtualMachine::new(&exec)
                    .call("main", std::slice::from_ref(&x))
                    .unwrap(),
            );
            let got = y[0].to_vec::<f32>().unwrap();
            for (g, &v) in got.iter().zip(&xs) {
                let want = f(f64::from(v));
                assert!(
                    (f64::from(*g) - want).abs() <= 1e-5 * (1.0 + want.abs()),
                    "{op}({v}) on {target:?}: {g}, want {want}"
                );
            }
        }
    }
    // IsInf detecting neither infinity: false everywhere, NaN included.
    let special = Value::Tensor(
        Tensor::from_vec(&[3], vec![f32::INFINITY, f32::NEG_INFINITY, f32::NAN]).unwrap(),
    );
    let bytes = unary_model(
        "IsInf",
        vec![
            int_attr("detect_positive", 0),
            int_attr("detect_negative", 0),
        ],
        3,
        tensor_proto::DataType::Bool,
    );
    let imported = from_onnx(&bytes, &ImportOptions::default()).unwrap();
    let y = run(&imported.module, vec![special]);
    assert_eq!(y[0].to_vec::<bool>().unwrap(), [false; 3]);
}

#[test]
fn bad_elementwise_attributes_are_errors() {
    let f = tensor_proto::DataType::Float;
    assert_import_error(
        &unary_model("Gelu", vec![string_attr("approximate", "erf")], 2, f),
        "attribute `approximate` must be \"none\" or \"tanh\"",
    );
    let shift = model(
        11,
        GraphProto {
            node: vec![node(
                "BitShift",
                &["x", "k"],
                &["y"],
                vec![string_attr("direction", "UP")],
            )],
            input: vec![
                value_info("x", tensor_proto::DataType::Uint8, &[Dim::Value(2)]),
                value_info("k", tensor_proto::DataType::Uint8, &[Dim::Value(2)]),
            ],
            output: vec![value_info(
                "y",
                tensor_proto::DataType::Uint8,
                &[Dim::Value(2)],
            )],
            ..Default::default()
        },
    );
    assert_import_error(
        &shift,
        "attribute `direction` must be \"LEFT\" or \"RIGHT\"",
    );
    let i64t = tensor_proto::DataType::Int64;
    assert_import_error(
        &unary_model("BitCast", vec![int_attr("to", i64t as i64)], 2, i64t),
        "(BitCast): bitcast needs dtypes of one width: float32 has 32 bits, int64 has 64",
    );
    let b = tensor_proto::DataType::Bool;
    assert_import_error(
        &unary_model("BitCast", vec![int_attr("to", b as i64)], 2, b),
        "bitcast to bool is not supported",
    );
}

// ----- external data ----------------------------------------------------

/// A fresh directory of its own under the system's temp dir.
fn scratch_dir(name: &str) -> std::path::PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "relax-onnx-{name}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A float initializer whose elements are in `location`, at `offset` for
/// `length` bytes where given.
fn external_init(
    name: &str,
    dims: &[i64],
    location: &str,
    offset: Option<&str>,
    length: Option<&str>,
) -> TensorProto {
    let entry = |k: &str, v: &str| relax_onnx::proto::StringStringEntryProto {
        key: Some(k.into()),
        value: Some(v.into()),
    };
    let mut external_data = vec![entry("location", location)];
    external_data.extend(offset.map(|v| entry("offset", v)));
    external_data.extend(length.map(|v| entry("length", v)));
    external_data.push(entry("checksum", "not checked"));
    TensorProto {
        name: Some(name.into()),
        dims: dims.to_vec(),
        data_type: Some(tensor_proto::DataType::Float as i32),
        data_location: Some(tensor_proto::DataLocation::External as i32),
        external_data,
        ..Default::default()
    }
}

/// `model.onnx.data` as the exporter writes it: `w`'s 24 bytes at 0, then
/// 8 bytes of padding, then `b`'s 8 bytes at 32.
fn data_file() -> Vec<u8> {
    let mut bytes: Vec<u8> = W.iter().flat_map(|v| v.to_le_bytes()).collect();
    bytes.extend([0xAA; 8]);
    bytes.extend(B.iter().flat_map(|v| v.to_le_bytes()));
    bytes
}

/// A directory holding `model.onnx`, whose `w` is as given and whose `b`
/// is at its place in `model.onnx.data`, and that data file; the model's
/// path.
fn external_model(name: &str, w: TensorProto) -> std::path::PathBuf {
    let dir = scratch_dir(name);
    let b = external_init("b", &[2], "model.onnx.data", Some("32"), Some("8"));
    std::fs::write(dir.join("model.onnx"), linear_relu_with(17, vec![w, b])).unwrap();
    std::fs::write(dir.join("model.onnx.data"), data_file()).unwrap();
    dir.join("model.onnx")
}

/// `w` where [`data_file`] has it.
fn good_w() -> TensorProto {
    external_init("w", &[3, 2], "model.onnx.data", Some("0"), Some("24"))
}

#[test]
fn weights_in_an_external_file_import_as_inline_ones_do() {
    let path = external_model("good", good_w());
    let x = Tensor::from_vec(&[2, 3], vec![1.0f32, 2.0, 3.0, -1.0, 0.5, 4.0]).unwrap();
    let inline = from_onnx(&linear_relu(17), &ImportOptions::default()).unwrap();
    let want = run(&inline.module, vec![Value::Tensor(x.clone())]);
    let external = from_onnx_file(&path, &ImportOptions::default()).unwrap();
    assert_eq!(run(&external.module, vec![Value::Tensor(x.clone())]), want);
    // As parameters, the weights are the same tensors.
    let options = ImportOptions {
        keep_params_in_input: true,
        ..Default::default()
    };
    let params = from_onnx_file(&path, &options).unwrap().params;
    assert_eq!(
        params,
        from_onnx(&linear_relu(17), &options).unwrap().params
    );
    // A location in a subdirectory, and one without offset or length (the
    // whole file), read too.
    let dir = path.parent().unwrap();
    std::fs::create_dir_all(dir.join("weights")).unwrap();
    let w_bytes: Vec<u8> = W.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(dir.join("weights/w.bin"), w_bytes).unwrap();
    let b = external_init("b", &[2], "model.onnx.data", Some("32"), None);
    let w = external_init("w", &[3, 2], "weights/w.bin", None, None);
    std::fs::write(dir.join("other.onnx"), linear_relu_with(17, vec![w, b])).unwrap();
    let other = from_onnx_file(dir.join("other.onnx"), &ImportOptions::default()).unwrap();
    assert_eq!(run(&other.module, vec![Value::Tensor(x)]), want);
    std::fs::remove_dir_all(dir).unwrap();
}

/// A float16 model, `y = x · w + b`, its weight `w` in an external file
/// (the bytes an exporter writes) and its bias `b` in `int32_data` (the
/// 16-bit patterns ONNX keeps there), a Cast to bfloat16 after: imported,
/// run on the interpreter, each operation rounded to float16 once.
#[test]
fn float16_weights_from_an_external_file_and_int32_data_run() {
    use half::{bf16, f16};
    let h = f16::from_f32;
    let dir = scratch_dir("half");
    let w = [h(0.5), h(-2.0), h(3.0)];
    let b = [h(0.1), h(1000.0), h(-0.0)];
    let w_bytes: Vec<u8> = w.iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(dir.join("w.bin"), w_bytes).unwrap();
    let mut w_init = external_init("w", &[3], "w.bin", None, None);
    w_init.data_type = Some(tensor_proto::DataType::Float16 as i32);
    let b_init = TensorProto {
        name: Some("b".into()),
        dims: vec![3],
        data_type: Some(tensor_proto::DataType::Float16 as i32),
        int32_data: b.iter().map(|v| i32::from(v.to_bits())).collect(),
        ..Default::default()
    };
    let half_info = |name: &str, elem| value_info(name, elem, &[Dim::Value(3)]);
    let bytes = model(
        21,
        GraphProto {
            name: Some("half".into()),
            node: vec![
                node("Mul", &["x", "w"], &["xw"], vec![]),
                node("Add", &["xw", "b"], &["y"], vec![]),
                node(
                    "Cast",
                    &["y"],
                    &["z"],
                    vec![int_attr("to", tensor_proto::DataType::Bfloat16 as i64)],
                ),
            ],
            initializer: vec![w_init, b_init],
            input: vec![half_info("x", tensor_proto::DataType::Float16)],
            output: vec![
                half_info("y", tensor_proto::DataType::Float16),
                half_info("z", tensor_proto::DataType::Bfloat16),
            ],
            ..Default::default()
        },
    );
    std::fs::write(dir.join("model.onnx"), bytes).unwrap();
    let imported = from_onnx_file(dir.join("model.onnx"), &ImportOptions::default()).unwrap();
    let text = imported.module.to_string();
    assert!(
        text.contains(r#"x: R.Tensor((3,), dtype="float16")"#),
        "{text}"
    );
    let x = [h(1.0), h(1.5), h(0.333)];
    let exec = build(&imported.module, &Target::interpreter()).unwrap();
    let args = [Value::Tensor(Tensor::from_vec(&[3], x.to_vec()).unwrap())];
    let got = outputs(VirtualMachine::new(&exec).call("main", &args).unwrap());
    let want: Vec<f16> = (0..3)
        .map(|i| h(h(x[i].to_f32() * w[i].to_f32()).to_f32() + b[i].to_f32()))
        .collect();
    assert_eq!(got[0].to_vec::<f16>().unwrap(), want);
    // The Cast rounds the float16 sums to bfloat16: 1000 - 3 = 997 is
    // exact in float16 and 996 in bfloat16 (whose spacing there is 4).
    let z = got[1].to_vec::<bf16>().unwrap();
    assert_eq!(
        z,
        want.iter()
            .map(|v| bf16::from_f32(v.to_f32()))
            .collect::<Vec<_>>()
    );
    assert_eq!(z[1].to_f32(), 996.0);
    std::fs::remove_dir_all(dir).unwrap();
}

/// The import of the model at `path` fails naming tensor `w`, `location`
/// and `why`.
#[track_caller]
fn assert_external_error(path: &Path, location: &str, why: &str) {
    let e = from_onnx_file(path, &ImportOptions::default())
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("tensor `w`") && e.contains(location) && e.contains(why),
        "{e}"
    );
    if let Some(dir) = path.parent() {
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
fn an_absolute_external_location_is_an_error() {
    // Even one naming the right file: the model's directory is the limit.
    let dir = scratch_dir("absolute");
    let absolute = dir.join("model.onnx.data");
    let absolute = absolute.to_str().unwrap();
    let path = external_model(
        "absolute",
        external_init("w", &[3, 2], absolute, Some("0"), Some("24")),
    );
    assert_external_error(&path, absolute, "absolute path");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn an_external_location_with_a_parent_component_is_an_error() {
    let path = external_model(
        "parent",
        external_init("w", &[3, 2], "../model.onnx.data", Some("0"), Some("24")),
    );
    assert_external_error(&path, "../model.onnx.data", "`..` component");
}

#[cfg(unix)]
#[test]
fn an_external_location_that_links_outside_the_model_directory_is_an_error() {
    let outside = scratch_dir("outside");
    std::fs::write(outside.join("secret.data"), data_file()).unwrap();
    let path = external_model(
        "symlink",
        external_init("w", &[3, 2], "link.data", Some("0"), Some("24")),
    );
    std::os::unix::fs::symlink(
        outside.join("secret.data"),
        path.parent().unwrap().join("link.data"),
    )
    .unwrap();
    assert_external_error(&path, "link.data", "outside the model's directory");
    let _ = std::fs::remove_dir_all(outside);
}

#[test]
fn a_missing_external_file_is_an_error() {
    let path = external_model(
        "missing",
        external_init("w", &[3, 2], "nope.data", Some("0"), Some("24")),
    );
    assert_external_error(&path, "nope.data", "nope.data:");
}

#[test]
fn an_external_range_past_the_end_of_the_file_is_an_error() {
    // The data file has 40 bytes.
    let path = external_model(
        "offset",
        external_init("w", &[3, 2], "model.onnx.data", Some("41"), Some("24")),
    );
    assert_external_error(
        &path,
        "model.onnx.data",
        "the offset 41 is past the end of the file (40 bytes)",
    );
    let path = external_model(
        "length",
        external_init("w", &[3, 2], "model.onnx.data", Some("24"), Some("24")),
    );
    assert_external_error(
        &path,
        "model.onnx.data",
        "24 bytes from offset 24 reach past",
    );
    let huge = u64::MAX.to_string();
    let path = external_model(
        "overflow",
        external_init("w", &[3, 2], "model.onnx.data", Some("8"), Some(&huge)),
    );
    assert_external_error(&path, "model.onnx.data", "reach past the end of the file");
    let path = external_model(
        "not-a-number",
        external_init("w", &[3, 2], "model.onnx.data", Some("-8"), None),
    );
    assert_external_error(&path, "model.onnx.data", "expected a number of bytes");
}

#[test]
fn an_external_length_that_disagrees_with_the_shape_is_an_error() {
    let path = external_model(
        "mismatch",
        external_init("w", &[3, 2], "model.onnx.data", Some("0"), Some("20")),
    );
    assert_external_error(
        &path,
        "model.onnx.data",
        "has 20 bytes of data in the external file `model.onnx.data`, not 24",
    );
}

#[test]
fn external_data_in_a_model_given_as_bytes_is_an_error() {
    let path = external_model("bytes", good_w());
    let bytes = std::fs::read(&path).unwrap();
    let e = from_onnx(&bytes, &ImportOptions::default())
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("tensor `w`") && e.contains("model.onnx.data") && e.contains("from_onnx_file"),
        "{e}"
    );
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
}

// ----- shape_dict and input names ----------------------------------------

fn with_shape(name: &str, dims: Vec<relax_onnx::Dim>) -> ImportOptions {
    ImportOptions {
        shape_dict: [(name.to_string(), dims)].into_iter().collect(),
        ..Default::default()
    }
}

/// `SplitToSequence` with its sizes computed at run time (a 1-d list of a
/// known length): the parts are slices at bounds bound from the data.
#[test]
fn split_to_sequence_takes_sizes_computed_at_run_time() {
    let bytes = model(
        17,
        GraphProto {
            name: Some("split".into()),
            node: vec![
                node("SplitToSequence", &["x", "s"], &["seq"], vec![]),
                node("SequenceAt", &["seq", "one"], &["y"], vec![]),
            ],
            initializer: vec![i64_init("one", vec![1])],
            input: vec![
                f32_info("x", &[Dim::Value(6)]),
                value_info("s", tensor_proto::DataType::Int64, &[Dim::Value(2)]),
            ],
            output: vec![f32_info("y", &[Dim::Param("M")])],
            ..Default::default()
        },
    );
    let imported = from_onnx(&bytes, &ImportOptions::default()).unwrap();
    let x: Vec<f32> = (0..6).map(|i| i as f32).collect();
    for (sizes, want) in [([2i64, 4], vec![2.0, 3.0, 4.0, 5.0]), ([5, 1], vec![5.0])] {
        let y = run(
            &imported.module,
            vec![
                Value::Tensor(Tensor::from_vec(&[6], x.clone()).unwrap()),
                Value::Tensor(Tensor::from_vec(&[2], sizes.to_vec()).unwrap()),
            ],
        );
        assert_eq!(y[0].to_f64_vec(), want);
    }
}

/// A sequence graph input is a tuple of the length `sequence_lens` gives,
/// each element with its own dims (`N_0`, `N_1`, …); without a length
/// the sequence ops say which option to set, and a length for a value
/// that is not a sequence input is an error.
#[test]
fn sequence_lens_specializes_a_sequence_input() {
    let path = data_dir().join("node/test_sequence_map_add_1_sequence_1_tensor/model.onnx");
    let with_len = |name: &str, n: usize| ImportOptions {
        sequence_lens: [(name.to_string(), n)].into_iter().collect(),
        ..Default::default()
    };
    let imported = from_onnx_file(&path, &with_len("x0", 2)).unwrap();
    let main = imported.module.get_relax("main").unwrap();
    let f32 = relax_runtime::DataType::f32();
    let elem =
        |name: &str| StructInfo::tensor(vec![relax_core::ir::TirVar::new(name).to_expr()], f32);
    let x0 = main.params[0].struct_info().unwrap().to_string();
    assert_eq!(
        x0,
        StructInfo::tuple(vec![elem("N_0"), elem("N_1")]).to_string()
    );

    let e = from_onnx_file(&path, &ImportOptions::default())
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("the SequenceMap node making `y0`")
            && e.contains("ImportOptions::sequence_lens"),
        "{e}"
    );
    let e = from_onnx_file(&path, &with_len("x1", 2))
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("sequence_lens names `x1`, which is not a sequence input of the graph"),
        "{e}"
    );
}

#[test]
fn shape_dict_replaces_an_input_shape() {
    use relax_onnx::Dim as D;
    let fixed = from_onnx(&linear_relu(17), &with_shape("x", vec![4.into(), 3.into()])).unwrap();
    let text = fixed.module.to_string();
    assert!(
        text.contains(r#"x: R.Tensor((4, 3), dtype="float32")"#),
        "{text}"
    );
    let main = fixed.module.get_relax("main").unwrap();
    assert_eq!(
        main.ret_struct_info,
        StructInfo::tensor(vec![4.into(), 2.into()], relax_runtime::DataType::f32())
    );
    let named = from_onnx(
        &linear_relu(17),
        &with_shape("x", vec![D::Symbolic("batch".into()), D::Fixed(3)]),
    )
    .unwrap();
    let text = named.module.to_string();
    assert!(
        text.contains(r#"x: R.Tensor(("batch", 3), dtype="float32")"#),
        "{text}"
    );

    let error = |options: &ImportOptions| {
        from_onnx(&linear_relu(17), options)
            .map(|_| ())
            .unwrap_err()
            .to_string()
    };
    let e = error(&with_shape("nope", vec![1.into(), 3.into()]));
    assert!(
        e.contains("shape_dict names `nope`, which is not an input of the graph (its inputs: x)"),
        "{e}"
    );
    let e = error(&with_shape("w", vec![3.into(), 2.into()]));
    assert!(e.contains("shape_dict names `w`"), "{e}");
    let e = error(&with_shape("x", vec![3.into()]));
    assert!(
        e.contains("shape_dict gives graph input `x` 1 dim(s), but the graph declares rank 2"),
        "{e}"
    );
    let e = error(&with_shape("x", vec![(-2).into(), 3.into()]));
    assert!(e.contains("the dim -2"), "{e}");
}

#[test]
fn imported_models_keep_their_input_names() {
    let bytes = model(
        17,
        GraphProto {
            node: vec![node("Relu", &["gpu_0/data_0"], &["out.1"], vec![])],
            input: vec![f32_info("gpu_0/data_0", &[Dim::Value(2)])],
            output: vec![f32_info("out.1", &[Dim::Value(2)])],
            ..Default::default()
        },
    );
    let imported = from_onnx(&bytes, &ImportOptions::default()).unwrap();
    let main = imported.module.get_relax("main").unwrap();
    assert_eq!(main.params[0].name_hint(), "gpu_0_data_0");
    assert_eq!(imported.input_names, ["gpu_0/data_0"]);
    let options = ImportOptions {
        keep_params_in_input: true,
        ..Default::default()
    };
    let imported = from_onnx(&linear_relu(17), &options).unwrap();
    assert_eq!(imported.input_names, ["x", "w", "b"]);
}

/// Only initializers read external data: a `Constant` node's value kept
/// outside the model is an error that says so.
#[test]
fn an_external_constant_node_value_is_an_error() {
    let dir = scratch_dir("constant");
    std::fs::write(dir.join("model.onnx.data"), data_file()).unwrap();
    let value = AttributeProto {
        name: Some("value".into()),
        r#type: Some(AttributeType::Tensor as i32),
        t: Some(external_init(
            "c",
            &[2],
            "model.onnx.data",
            Some("32"),
            Some("8"),
        )),
        ..Default::default()
    };
    let bytes = model(
        17,
        GraphProto {
            node: vec![
                node("Constant", &[], &["c"], vec![value]),
                node("Add", &["x", "c"], &["y"], vec![]),
            ],
            input: vec![f32_info("x", &[Dim::Value(2)])],
            output: vec![f32_info("y", &[Dim::Value(2)])],
            ..Default::default()
        },
    );
    std::fs::write(dir.join("model.onnx"), bytes).unwrap();
    let e = from_onnx_file(dir.join("model.onnx"), &ImportOptions::default())
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("tensor `c` keeps its data in the external file `model.onnx.data`")
            && e.contains("read only for the initializers"),
        "{e}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn attention_with_keys_of_another_rank_is_an_error() {
    let graph = GraphProto {
        node: vec![node("Attention", &["q", "k", "v"], &["y"], vec![])],
        input: vec![
            f32_info(
                "q",
                &[Dim::Value(1), Dim::Value(2), Dim::Value(3), Dim::Value(4)],
            ),
            f32_info("k", &[Dim::Value(1), Dim::Value(3), Dim::Value(8)]),
            f32_info("v", &[Dim::Value(1), Dim::Value(3), Dim::Value(8)]),
        ],
        output: vec![f32_info("y", &[])],
        ..Default::default()
    };
    assert_import_error(&model(23, graph), "K must have Q's rank");
}

fn graph_attr(name: &str, g: GraphProto) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Graph as i32),
        g: Some(g),
        ..Default::default()
    }
}

fn string_attr_of(name: &str, v: &str) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::String as i32),
        s: Some(v.as_bytes().to_vec()),
        ..Default::default()
    }
}

fn i64_scalar_init(name: &str, v: i64) -> TensorProto {
    TensorProto {
        dims: vec![],
        ..i64_init(name, vec![v])
    }
}

/// Runs `main` on both targets, which must agree (to rounding); the
/// interpreter's outputs.
fn run_both(module: &relax_core::ir::IRModule, args: &[Value]) -> Result<Vec<Tensor>, String> {
    let mut out: Option<Vec<Tensor>> = None;
    for target in [Target::interpreter(), Target::host()] {
        let exec = build(module, &target).map_err(|e| e.to_string())?;
        let got = outputs(
            VirtualMachine::new(&exec)
                .call("main", args)
                .map_err(|e| e.to_string())?,
        );
        if let Some(prev) = &out {
            assert_eq!(prev.len(), got.len());
            for (p, g) in prev.iter().zip(&got) {
                relax_onnx::backend_test::compare(g, p, 1e-5, 1e-6)
                    .unwrap_or_else(|m| panic!("{target:?}: {m}"));
            }
        } else {
            out = Some(got);
        }
    }
    Ok(out.unwrap())
}

/// `Loop(M, "", s0)` whose body adds the outer `a` to its state, scans the
/// new state out, and goes on while `iter < limit` (`limit` an outer
/// input too).
fn accumulate_loop() -> Vec<u8> {
    let i64_info = |n: &str| value_info(n, tensor_proto::DataType::Int64, &[]);
    let bool_info = |n: &str| value_info(n, tensor_proto::DataType::Bool, &[]);
    let body = GraphProto {
        name: Some("body".into()),
        node: vec![
            node("Add", &["s", "a"], &["s_next"], vec![]),
            node("Identity", &["s_next"], &["scan"], vec![]),
            node("Less", &["iter", "limit"], &["go"], vec![]),
        ],
        input: vec![
            i64_info("iter"),
            bool_info("cond"),
            f32_info("s", &[Dim::Value(2)]),
        ],
        output: vec![
            bool_info("go"),
            f32_info("s_next", &[Dim::Value(2)]),
            f32_info("scan", &[Dim::Value(2)]),
        ],
        ..Default::default()
    };
    model(
        16,
        GraphProto {
            name: Some("loop".into()),
            node: vec![node(
                "Loop",
                &["M", "", "s0"],
                &["s_final", "scans"],
                vec![graph_attr("body", body)],
            )],
            initializer: vec![f32_init("s0", &[2], vec![0.0, 0.0])],
            input: vec![
                i64_info("M"),
                i64_info("limit"),
                f32_info("a", &[Dim::Value(2)]),
            ],
            output: vec![
                f32_info("s_final", &[Dim::Value(2)]),
                f32_info("scans", &[Dim::Param("N"), Dim::Value(2)]),
            ],
            ..Default::default()
        },
    )
}

#[test]
fn a_loop_runs_its_trip_count_given_at_run_time_and_stops_on_its_condition() {
    let imported = from_onnx(&accumulate_loop(), &ImportOptions::default()).unwrap();
    let a = Tensor::from_vec(&[2], vec![1.0f32, -2.0]).unwrap();
    let call = |m: i64, limit: i64| {
        run_both(
            &imported.module,
            &[
                Value::Tensor(Tensor::scalar(m)),
                Value::Tensor(Tensor::scalar(limit)),
                Value::Tensor(a.clone()),
            ],
        )
    };
    let expect = |n: usize, got: Vec<Tensor>| {
        let last = n as f32;
        assert_eq!(
            got[0].to_f64_vec(),
            vec![f64::from(last), f64::from(-2.0 * last)]
        );
        assert_eq!(got[1].shape(), &[n as i64, 2]);
        let rows: Vec<f64> = (1..=n).flat_map(|k| [k as f64, -2.0 * k as f64]).collect();
        assert_eq!(got[1].to_f64_vec(), rows);
    };
    // The trip count ends it, the condition ends it (iterations 0..=4),
    // or it never starts.
    expect(3, call(3, 100).unwrap());
    expect(5, call(10, 4).unwrap());
    expect(0, call(0, 100).unwrap());
    // Each iteration is a call frame (and the last test one more), under
    // `main`'s: 998 iterations fit the VM's default limit of 1000 frames,
    // and a longer loop is a clean error.
    expect(998, call(998, 1_000_000).unwrap());
    let e = call(999, 1_000_000).unwrap_err();
    assert!(e.contains("call depth limit"), "{e}");
}

#[test]
fn sequences_of_known_length_are_tuples() {
    let i64_info = |n: &str| value_info(n, tensor_proto::DataType::Int64, &[]);
    let bytes = model(
        17,
        GraphProto {
            name: Some("seq".into()),
            node: vec![
                node(
                    "SplitToSequence",
                    &["x"],
                    &["parts"],
                    vec![int_attr("axis", 1), int_attr("keepdims", 0)],
                ),
                node("SequenceInsert", &["parts", "y", "zero"], &["more"], vec![]),
                node("SequenceErase", &["more", "minus_one"], &["fewer"], vec![]),
                node("SequenceLength", &["fewer"], &["n"], vec![]),
                node("SequenceAt", &["fewer", "one"], &["second"], vec![]),
                node(
                    "ConcatFromSequence",
                    &["fewer"],
                    &["stacked"],
                    vec![int_attr("axis", 0), int_attr("new_axis", 1)],
                ),
            ],
            initializer: vec![
                i64_scalar_init("zero", 0),
                i64_scalar_init("one", 1),
                i64_scalar_init("minus_one", -1),
            ],
            input: vec![
                f32_info("x", &[Dim::Value(2), Dim::Value(3)]),
                f32_info("y", &[Dim::Value(2)]),
            ],
            output: vec![
                i64_info("n"),
                f32_info("second", &[Dim::Value(2)]),
                f32_info("stacked", &[Dim::Value(3), Dim::Value(2)]),
            ],
            ..Default::default()
        },
    );
    let imported = from_onnx(&bytes, &ImportOptions::default()).unwrap();
    let x = Tensor::from_vec(&[2, 3], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    let y = Tensor::from_vec(&[2], vec![7.0f32, 8.0]).unwrap();
    let got = run_both(&imported.module, &[Value::Tensor(x), Value::Tensor(y)]).unwrap();
    // [y, x[:, 0], x[:, 1], x[:, 2]] without its last element.
    assert_eq!(got[0].to_f64_vec(), vec![3.0]);
    assert_eq!(got[1].to_f64_vec(), vec![1.0, 4.0]);
    assert_eq!(got[2].shape(), &[3, 2]);
    assert_eq!(got[2].to_f64_vec(), vec![7.0, 8.0, 1.0, 4.0, 2.0, 5.0]);
}

/// A reverse `RNN` (hidden and input size 1) over `x: (3, 2, 1)`, with
/// `sequence_lens` an input.
fn reverse_rnn(seq: Dim) -> Vec<u8> {
    model(
        14,
        GraphProto {
            name: Some("rnn".into()),
            node: vec![node(
                "RNN",
                &["x", "w", "r", "b", "lens"],
                &["y", "y_h"],
                vec![
                    int_attr("hidden_size", 1),
                    string_attr_of("direction", "reverse"),
                ],
            )],
            initializer: vec![
                f32_init("w", &[1, 1, 1], vec![0.5]),
                f32_init("r", &[1, 1, 1], vec![0.8]),
                f32_init("b", &[1, 2], vec![0.1, 0.2]),
            ],
            input: vec![
                f32_info("x", &[seq, Dim::Value(2), Dim::Value(1)]),
                value_info("lens", tensor_proto::DataType::Int32, &[Dim::Value(2)]),
            ],
            output: vec![
                f32_info(
                    "y",
                    &[Dim::Value(3), Dim::Value(1), Dim::Value(2), Dim::Value(1)],
                ),
                f32_info("y_h", &[Dim::Value(1), Dim::Value(2), Dim::Value(1)]),
            ],
            ..Default::default()
        },
    )
}

#[test]
fn a_reverse_rnn_starts_each_row_at_its_own_length() {
    let imported = from_onnx(&reverse_rnn(Dim::Value(3)), &ImportOptions::default()).unwrap();
    let xs = [0.5f32, -1.0, 1.5, 2.0, -0.5, 0.25];
    let lens = [3i32, 2];
    let x = Tensor::from_vec(&[3, 2, 1], xs.to_vec()).unwrap();
    let l = Tensor::from_vec(&[2], lens.to_vec()).unwrap();
    let got = run_both(&imported.module, &[Value::Tensor(x), Value::Tensor(l)]).unwrap();
    let mut y = [0.0f64; 6];
    let mut y_h = [0.0f64; 2];
    for b in 0..2 {
        let mut h = 0.0f64;
        for t in (0..lens[b] as usize).rev() {
            h = (0.5 * f64::from(xs[t * 2 + b]) + 0.8 * h + 0.3).tanh();
            y[t * 2 + b] = h;
        }
        y_h[b] = h;
    }
    assert_eq!(got[0].shape(), &[3, 1, 2, 1]);
    for (g, e) in got[0].to_f64_vec().iter().zip(y) {
        assert!((g - e).abs() < 1e-5, "{g} vs {e}");
    }
    for (g, e) in got[1].to_f64_vec().iter().zip(y_h) {
        assert!((g - e).abs() < 1e-5, "{g} vs {e}");
    }
    // A symbolic length runs as a loop, with the same results.
    let looped = from_onnx(&reverse_rnn(Dim::Param("T")), &ImportOptions::default()).unwrap();
    let x = Tensor::from_vec(&[3, 2, 1], xs.to_vec()).unwrap();
    let l = Tensor::from_vec(&[2], lens.to_vec()).unwrap();
    let again = run_both(&looped.module, &[Value::Tensor(x), Value::Tensor(l)]).unwrap();
    for (a, b) in got.iter().zip(&again) {
        relax_onnx::backend_test::compare(b, a, 1e-5, 1e-6).unwrap();
    }
}

/// The node suite's recurrent cases with their sequence length made
/// symbolic (`shape_dict`): the layers run as loops and give the expected
/// outputs on both targets.
#[test]
fn recurrent_layers_over_a_symbolic_sequence_length_run_as_loops() {
    for name in [
        "test_rnn_seq_length",
        "test_gru_seq_length",
        "test_lstm_with_peepholes",
    ] {
        let dir = data_dir().join("node").join(name);
        let case = BackendCase::load(&dir).unwrap();
        let bytes = std::fs::read(dir.join("model.onnx")).unwrap();
        let model = ModelProto::decode(bytes.as_slice()).unwrap();
        let x = &model.graph.as_ref().unwrap().input[0];
        let Some(type_proto::Value::TensorType(t)) = x.r#type.as_ref().unwrap().value.as_ref()
        else {
            panic!("{name}: X is not a tensor")
        };
        let mut dims: Vec<relax_onnx::Dim> = t
            .shape
            .as_ref()
            .unwrap()
            .dim
            .iter()
            .map(|d| match d.value {
                Some(tensor_shape_proto::dimension::Value::DimValue(v)) => v.into(),
                _ => panic!("{name}: a symbolic dim"),
            })
            .collect();
        dims[0] = "T".into();
        let imported = case
            .import(&with_shape(x.name(), dims))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let printed = imported.module.to_string();
        assert!(printed.contains("def loop_"), "{name}: not a loop");
        for target in [Target::interpreter(), Target::host()] {
            case.check(&imported.module, &target, 1e-3, 1e-4)
                .unwrap_or_else(|m| panic!("{name} on {target:?}: {m}"));
        }
    }
}

#[test]
fn control_flow_errors_name_the_node() {
    // A body with no outputs for the state.
    let body = GraphProto {
        name: Some("body".into()),
        node: vec![node("Identity", &["cond"], &["go"], vec![])],
        input: vec![
            value_info("iter", tensor_proto::DataType::Int64, &[]),
            value_info("cond", tensor_proto::DataType::Bool, &[]),
            f32_info("s", &[Dim::Value(2)]),
        ],
        output: vec![value_info("go", tensor_proto::DataType::Bool, &[])],
        ..Default::default()
    };
    let bytes = model(
        16,
        GraphProto {
            name: Some("bad".into()),
            node: vec![node(
                "Loop",
                &["M", "", "x"],
                &["y"],
                vec![graph_attr("body", body)],
            )],
            input: vec![
                value_info("M", tensor_proto::DataType::Int64, &[]),
                f32_info("x", &[Dim::Value(2)]),
            ],
            output: vec![f32_info("y", &[Dim::Value(2)])],
            ..Default::default()
        },
    );
    assert_import_error(&bytes, "node \"Loop_0\" (Loop)");
    // A position computed at run time cannot pick a tuple field.
    let bytes = model(
        17,
        GraphProto {
            name: Some("bad".into()),
            node: vec![
                node("SequenceConstruct", &["x", "x"], &["s"], vec![]),
                node("SequenceAt", &["s", "p"], &["y"], vec![]),
            ],
            input: vec![
                f32_info("x", &[Dim::Value(2)]),
                value_info("p", tensor_proto::DataType::Int64, &[]),
            ],
            output: vec![f32_info("y", &[Dim::Value(2)])],
            ..Default::default()
        },
    );
    assert_import_error(&bytes, "the position must be a constant");
    // An If without its else branch.
    let bytes = model(
        16,
        GraphProto {
            name: Some("bad".into()),
            node: vec![node("If", &["c"], &["y"], vec![])],
            input: vec![value_info("c", tensor_proto::DataType::Bool, &[])],
            output: vec![f32_info("y", &[Dim::Value(2)])],
            ..Default::default()
        },
    );
    assert_import_error(&bytes, "attribute `then_branch` is required");
}

/// `CausalConvWithState` over a symbolic batch and length, with no past
/// state: one build runs a length longer and one shorter than the kernel's
/// `k - 1` carried positions, and the carried state is what comes next.
#[test]
fn a_causal_conv_with_state_runs_at_any_length_from_one_build() {
    let w = [0.5f32, -1.0, 2.0, 1.0, 0.25, -0.5];
    let graph = GraphProto {
        node: vec![node(
            "CausalConvWithState",
            &["x", "w"],
            &["y", "state"],
            vec![],
        )],
        initializer: vec![f32_init("w", &[2, 1, 3], w.to_vec())],
        input: vec![f32_info(
            "x",
            &[Dim::Param("N"), Dim::Value(2), Dim::Param("L")],
        )],
        output: vec![
            f32_info("y", &[Dim::Param("N"), Dim::Value(2), Dim::Param("L")]),
            f32_info("state", &[Dim::Param("N"), Dim::Value(2), Dim::Value(2)]),
        ],
        ..Default::default()
    };
    let imported = from_onnx(&model(27, graph), &ImportOptions::default()).unwrap();
    let exec = build(&imported.module, &Target::host()).unwrap();
    for (n, l) in [(1usize, 5usize), (2, 1)] {
        let x: Vec<f32> = (0..n * 2 * l).map(|i| i as f32 - 3.0).collect();
        let arg = Tensor::from_slice(&[n as i64, 2, l as i64], &x).unwrap();
        let out = VirtualMachine::new(&exec)
            .call("main", &[Value::Tensor(arg)])
            .unwrap();
        let out = outputs(out);
        // The input of each row prefixed with two zeros.
        let padded = |b: usize, c: usize, t: usize| -> f32 {
            if t < 2 {
                0.0
            } else {
                x[(b * 2 + c) * l + t - 2]
            }
        };
        let mut y = vec![];
        let mut state = vec![];
        for b in 0..n {
            for c in 0..2 {
                for t in 0..l {
                    y.push(
                        (0..3)
                            .map(|j| w[c * 3 + j] * padded(b, c, t + j))
                            .sum::<f32>(),
                    );
                }
                state.extend([padded(b, c, l), padded(b, c, l + 1)]);
            }
        }
        assert_eq!(out[0].shape(), &[n as i64, 2, l as i64]);
        assert_eq!(out[0].as_slice::<f32>().unwrap(), &y[..]);
        assert_eq!(out[1].as_slice::<f32>().unwrap(), &state[..]);
    }
}

#[test]
fn a_linear_attention_over_an_unknown_length_is_an_error_naming_it() {
    let info = |name: &str| f32_info(name, &[Dim::Value(1), Dim::Param("T"), Dim::Value(4)]);
    let graph = GraphProto {
        node: vec![node(
            "LinearAttention",
            &["q", "k", "v"],
            &["y"],
            vec![
                int_attr("q_num_heads", 1),
                int_attr("kv_num_heads", 1),
                string_attr("update_rule", "linear"),
            ],
        )],
        input: vec![info("q"), info("k"), info("v")],
        output: vec![info("y")],
        ..Default::default()
    };
    assert_import_error(
        &model(27, graph),
        "sequence, whose length must be a known integer",
    );
}

/// `TfIdfVectorizer`'s three modes with weights (the node suite has TF
/// only), unigrams and bigrams at two skip distances, two pool n-grams in
/// one output column, on both targets; expected values from ONNX's
/// reference implementation.
#[test]
fn tf_idf_vectorizer_modes_weigh_the_counts() {
    let x = Tensor::from_vec(&[7], vec![1i64, 2, 3, 1, 2, 1, 4]).unwrap();
    let cases: [(&str, [f32; 5]); 3] = [
        ("TF", [1.0, 2.0, 2.0, 2.0, 3.0]),
        ("IDF", [0.5, 1.0, 2.0, 3.0, 4.0]),
        ("TFIDF", [0.5, 2.0, 4.0, 6.0, 12.0]),
    ];
    for (mode, want) in cases {
        let weights = AttributeProto {
            name: Some("weights".into()),
            r#type: Some(AttributeType::Floats as i32),
            floats: vec![0.5, 1.0, 2.0, 3.0, 4.0],
            ..Default::default()
        };
        let bytes = model(
            20,
            GraphProto {
                name: Some("tfidf".into()),
                node: vec![node(
                    "TfIdfVectorizer",
                    &["x"],
                    &["y"],
                    vec![
                        string_attr("mode", mode),
                        int_attr("min_gram_length", 1),
                        int_attr("max_gram_length", 2),
                        int_attr("max_skip_count", 1),
                        ints_attr("ngram_counts", &[0, 3]),
                        ints_attr("ngram_indexes", &[4, 1, 0, 3, 2]),
                        ints_attr("pool_int64s", &[1, 2, 4, 1, 2, 2, 1]),
                        weights,
                    ],
                )],
                input: vec![value_info(
                    "x",
                    tensor_proto::DataType::Int64,
                    &[Dim::Value(7)],
                )],
                output: vec![f32_info("y", &[Dim::Value(5)])],
                ..Default::default()
            },
        );
        let imported = from_onnx(&bytes, &ImportOptions::default()).unwrap();
        for target in [Target::interpreter(), Target::host()] {
            let exec = build(&imported.module, &target).unwrap();
            let y = outputs(
                VirtualMachine::new(&exec)
                    .call("main", &[Value::Tensor(x.clone())])
                    .unwrap(),
            );
            assert_eq!(y[0].to_f64_vec(), want.map(f64::from).to_vec(), "{mode}");
        }
    }
}

/// Shapes decided at run time on a symbolic dim `N`, run at `N = 2` and at
/// `N = 0` on both targets: `Pad` by run-time pads and value (an empty
/// axis padded reads nothing outside it), `ReduceMax` by run-time axes
/// (an empty axis reduces to the identity, one long), `Slice` by run-time
/// axes and steps.
#[test]
fn runtime_pads_axes_and_steps_on_a_symbolic_dim() {
    let i64_info =
        |name: &str, n: i64| value_info(name, tensor_proto::DataType::Int64, &[Dim::Value(n)]);
    let x_info = f32_info("x", &[Dim::Param("N"), Dim::Value(2)]);
    let graph = |nodes: Vec<NodeProto>, inputs: Vec<ValueInfoProto>| GraphProto {
        name: Some("g".into()),
        node: nodes,
        input: inputs,
        output: vec![f32_info("y", &[Dim::Param("M"), Dim::Param("K")])],
        ..Default::default()
    };
    let pad = model(
        18,
        graph(
            vec![node("Pad", &["x", "pads", "v"], &["y"], vec![])],
            vec![x_info.clone(), i64_info("pads", 4), f32_info("v", &[])],
        ),
    );
    let max = model(
        18,
        graph(
            vec![node("ReduceMax", &["x", "axes"], &["y"], vec![])],
            vec![x_info.clone(), i64_info("axes", 1)],
        ),
    );
    let slice = model(
        18,
        graph(
            vec![node(
                "Slice",
                &["x", "s", "e", "axes", "steps"],
                &["y"],
                vec![],
            )],
            vec![
                x_info,
                i64_info("s", 1),
                i64_info("e", 1),
                i64_info("axes", 1),
                i64_info("steps", 1),
            ],
        ),
    );
    let t = |shape: &[i64], v: Vec<f32>| Value::Tensor(Tensor::from_vec(shape, v).unwrap());
    let ti = |v: Vec<i64>| Value::Tensor(Tensor::from_vec(&[v.len() as i64], v).unwrap());
    for target in [Target::interpreter(), Target::host()] {
        let go = |bytes: &[u8], args: Vec<Value>| {
            let imported = from_onnx(bytes, &ImportOptions::default()).unwrap();
            let exec = build(&imported.module, &target).unwrap();
            outputs(VirtualMachine::new(&exec).call("main", &args).unwrap())
        };
        // Pad: one row before, one column after, with 9.
        let pads = || ti(vec![1, 0, 0, 1]);
        let v = || t(&[], vec![9.0]);
        let y = go(
            &pad,
            vec![t(&[2, 2], vec![1.0, 2.0, 3.0, 4.0]), pads(), v()],
        );
        assert_eq!(y[0].shape(), &[3, 3]);
        assert_eq!(
            y[0].to_vec::<f32>().unwrap(),
            vec![9.0, 9.0, 9.0, 1.0, 2.0, 9.0, 3.0, 4.0, 9.0]
        );
        let y = go(&pad, vec![t(&[0, 2], vec![]), pads(), v()]);
        assert_eq!(y[0].shape(), &[1, 3]);
        assert_eq!(y[0].to_vec::<f32>().unwrap(), vec![9.0; 3]);
        // ReduceMax over axis 0 (named -2), keepdims.
        let y = go(
            &max,
            vec![t(&[2, 2], vec![1.0, 5.0, 3.0, 4.0]), ti(vec![-2])],
        );
        assert_eq!(y[0].to_vec::<f32>().unwrap(), vec![3.0, 5.0]);
        let y = go(&max, vec![t(&[0, 2], vec![]), ti(vec![0])]);
        assert_eq!(y[0].shape(), &[1, 2]);
        assert_eq!(y[0].to_vec::<f32>().unwrap(), vec![f32::NEG_INFINITY; 2]);
        // Slice rows backwards: x[::-1] along axis 0.
        let args = |x: Value| {
            vec![
                x,
                ti(vec![-1]),
                ti(vec![i64::MIN]),
                ti(vec![0]),
                ti(vec![-1]),
            ]
        };
        let y = go(&slice, args(t(&[2, 2], vec![1.0, 2.0, 3.0, 4.0])));
        assert_eq!(y[0].to_vec::<f32>().unwrap(), vec![3.0, 4.0, 1.0, 2.0]);
        let y = go(&slice, args(t(&[0, 2], vec![])));
        assert_eq!(y[0].shape(), &[0, 2]);
    }
}

/// A model importing only `ai.onnx.ml` converts its ML nodes, and a
/// default-domain node in it is an error naming the missing opset; the
/// math and quantization converters reject what they cannot read.
#[test]
fn ml_only_models_and_bad_math_and_quantization_nodes_are_errors() {
    let f = tensor_proto::DataType::Float;
    let ml_only = |op: &str, domain: &str| {
        let mut n = node(op, &["x"], &["y"], vec![float_attr("threshold", 0.5)]);
        n.domain = Some(domain.into());
        ModelProto {
            ir_version: Some(8),
            opset_import: vec![OperatorSetIdProto {
                domain: Some("ai.onnx.ml".into()),
                version: Some(1),
            }],
            graph: Some(GraphProto {
                node: vec![n],
                input: vec![f32_info("x", &[Dim::Value(3)])],
                output: vec![f32_info("y", &[Dim::Value(3)])],
                ..Default::default()
            }),
            ..Default::default()
        }
        .encode_to_vec()
    };
    let m = from_onnx(
        &ml_only("Binarizer", "ai.onnx.ml"),
        &ImportOptions::default(),
    )
    .unwrap();
    let x = Tensor::from_vec(&[3], vec![0.25f32, 0.5, 2.0]).unwrap();
    let y = run(&m.module, vec![x.into()]);
    assert_eq!(y[0].to_vec::<f32>().unwrap(), [0.0, 0.0, 1.0]);
    assert_import_error(
        &ml_only("Relu", ""),
        "the model imports no version of the default ONNX opset",
    );
    assert_import_error(
        &unary_model("Einsum", vec![string_attr("equation", "ij->i")], 3, f),
        "`ij` has 2 labels, but its operand has rank 1",
    );
    assert_import_error(
        &unary_model("Einsum", vec![string_attr("equation", "i->j")], 3, f),
        "the output label `j` is in no operand",
    );
    assert_import_error(
        &unary_model("LpNormalization", vec![int_attr("p", 3)], 3, f),
        "attribute `p` must be 1 or 2, found 3",
    );
    let blocked = model(
        21,
        GraphProto {
            node: vec![node(
                "QuantizeLinear",
                &["x", "s"],
                &["y"],
                vec![int_attr("axis", 0), int_attr("block_size", 2)],
            )],
            input: vec![f32_info("x", &[Dim::Value(4), Dim::Value(2)])],
            initializer: vec![f32_init("s", &[3, 2], vec![1.0; 6])],
            output: vec![value_info(
                "y",
                tensor_proto::DataType::Uint8,
                &[Dim::Value(4), Dim::Value(2)],
            )],
            ..Default::default()
        },
    );
    assert_import_error(
        &blocked,
        "a blocked scale or zero point has 3 entries along axis 0, expected 2 (block size 2)",
    );
}

/// `Det` pivots (a zero in the corner), flips the sign per row swap and
/// gives 0 for a singular matrix, on both targets.
#[test]
fn det_pivots_and_gives_zero_for_a_singular_matrix() {
    let bytes = model(
        22,
        GraphProto {
            node: vec![node("Det", &["x"], &["y"], vec![])],
            input: vec![f32_info(
                "x",
                &[Dim::Value(2), Dim::Value(3), Dim::Value(3)],
            )],
            output: vec![f32_info("y", &[Dim::Value(2)])],
            ..Default::default()
        },
    );
    let m = from_onnx(&bytes, &ImportOptions::default()).unwrap();
    let x = Tensor::from_vec(
        &[2, 3, 3],
        vec![
            0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 9.0, // det -3
            1.0, 2.0, 3.0, 2.0, 4.0, 6.0, 1.0, 1.0, 1.0, // singular
        ],
    )
    .unwrap();
    for target in [Target::host(), Target::interpreter()] {
        let exec = build(&m.module, &target).unwrap();
        let y = outputs(
            VirtualMachine::new(&exec)
                .call("main", &[x.clone().into()])
                .unwrap(),
        );
        let y = y[0].to_vec::<f32>().unwrap();
        assert!((y[0] + 3.0).abs() < 1e-5 && y[1].abs() < 1e-5, "{y:?}");
    }
}

/// A QDQ chain (`QuantizeLinear → DequantizeLinear`, twelve times, as
/// onnxruntime's `quantize_static` writes around ops that pass a quantized
/// tensor through) fuses into one kernel that compiles in moments and gives
/// the first round trip's values. `quantize` reads its quotient several
/// times, so inlining every stage copied the input exponentially often, and
/// BERT's QDQ embedding chain never finished compiling; FuseTIR now keeps
/// an intermediate as a buffer when inlining it would pass its size limit.
#[test]
fn a_long_qdq_chain_compiles_and_round_trips_once() {
    let stages = 12;
    let mut nodes = Vec::new();
    let mut prev = "x".to_string();
    let names: Vec<(String, String)> = (0..stages)
        .map(|k| (format!("q{k}"), format!("d{k}")))
        .collect();
    for (q, d) in &names {
        nodes.push(node("QuantizeLinear", &[&prev, "s"], &[q], vec![]));
        nodes.push(node("DequantizeLinear", &[q, "s"], &[d], vec![]));
        prev = d.clone();
    }
    for (k, n) in nodes.iter_mut().enumerate() {
        n.name = Some(format!("n{k}"));
    }
    let bytes = model(
        19,
        GraphProto {
            name: Some("qdq_chain".into()),
            node: nodes,
            initializer: vec![f32_init("s", &[], vec![0.1])],
            input: vec![f32_info("x", &[Dim::Param("N"), Dim::Value(4)])],
            output: vec![f32_info(&prev, &[Dim::Param("N"), Dim::Value(4)])],
            ..Default::default()
        },
    );
    let imported = from_onnx(&bytes, &ImportOptions::default()).unwrap();
    let x: Vec<f32> = vec![-1.0, 0.04, 0.26, 1.0, 12.3, 30.0, 0.151, 7.77];
    let y = run(
        &imported.module,
        vec![Value::Tensor(Tensor::from_vec(&[2, 4], x.clone()).unwrap())],
    );
    // uint8 with zero point 0: negatives saturate to 0, above 25.5 to 255.
    let want: Vec<f32> = x
        .iter()
        .map(|v| (v / 0.1f32).round_ties_even().clamp(0.0, 255.0) * 0.1f32)
        .collect();
    assert_eq!(y[0].to_vec::<f32>().unwrap(), want);
}

/// `Resize` maps coordinates by its scales: a constant scale that does
/// not give a whole size of a symbolic dim takes the output size from the
/// data (`floor(in · scale)`) and still maps by `1 / scale`; a roi
/// computed at run time with `tf_crop_and_resize` and scales gives the
/// size `floor(in · (end - start) · scale)`; antialiased nearest is an
/// error, as in ONNX.
#[test]
fn resize_maps_by_scales_and_takes_a_roi_computed_at_run_time() {
    let resize = |inputs: &[&str], attrs, init, extra: Vec<ValueInfoProto>| {
        let mut input = vec![f32_info(
            "x",
            &[Dim::Value(1), Dim::Value(1), Dim::Param("H"), Dim::Value(4)],
        )];
        input.extend(extra);
        model(
            19,
            GraphProto {
                name: Some("resize".into()),
                node: vec![node("Resize", inputs, &["y"], attrs)],
                initializer: init,
                input,
                output: vec![f32_info("y", &[])],
                ..Default::default()
            },
        )
    };
    let x = |h: i64| {
        let v: Vec<f32> = (1..=4 * h).map(|v| v as f32).collect();
        Value::Tensor(Tensor::from_vec(&[1, 1, h, 4], v).unwrap())
    };
    // ONNX's downsample_scales_linear at H = 2 (scale 0.6: 1 × 2).
    let bytes = resize(
        &["x", "", "s"],
        vec![string_attr("mode", "linear")],
        vec![f32_init("s", &[4], vec![1.0, 1.0, 0.6, 0.6])],
        vec![],
    );
    let imported = from_onnx(&bytes, &ImportOptions::default()).unwrap();
    let y = run(&imported.module, vec![x(2)]);
    assert_eq!(y[0].shape(), &[1, 1, 1, 2]);
    let got = y[0].to_f64_vec();
    for (g, w) in got.iter().zip([2.6666665, 4.333333]) {
        assert!((g - w).abs() < 1e-5, "{got:?}");
    }
    // At H = 5: floor(5 · 0.6) = 3 rows.
    assert_eq!(run(&imported.module, vec![x(5)])[0].shape(), &[1, 1, 3, 2]);

    // tf_crop_and_resize with a roi input and scales 2: the crop (0.25,
    // 0.75) of each spatial axis, so the size is floor(in · 0.5 · 2) = in.
    let bytes = resize(
        &["x", "roi", "s"],
        vec![
            string_attr("mode", "linear"),
            string_attr("coordinate_transformation_mode", "tf_crop_and_resize"),
            ints_attr("axes", &[2, 3]),
        ],
        vec![f32_init("s", &[2], vec![2.0, 2.0])],
        vec![f32_info("roi", &[Dim::Value(4)])],
    );
    let imported = from_onnx(&bytes, &ImportOptions::default()).unwrap();
    let roi = Value::Tensor(Tensor::from_vec(&[4], vec![0.25f32, 0.25, 0.75, 0.75]).unwrap());
    let y = run(&imported.module, vec![x(3), roi]);
    assert_eq!(y[0].shape(), &[1, 1, 3, 4]);
    // Row source 0.5 + y·0.5 (in - 1 = 2, out - 1 = 2), column 0.75 +
    // x·0.5 (in - 1 = 3, out - 1 = 3): x[r][c] = 4r + c + 1.
    let want: Vec<f64> = (0..3)
        .flat_map(|r| {
            (0..4).map(move |c| 4.0 * (0.5 + 0.5 * r as f64) + 0.75 + 0.5 * c as f64 + 1.0)
        })
        .collect();
    let got = y[0].to_f64_vec();
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() < 1e-5, "{got:?} != {want:?}");
    }

    // Scales computed at run time resize H and W only: a batch or
    // channel scale that would change that axis fails the call, on both
    // targets, instead of giving another shape than ONNX's.
    let bytes = resize(
        &["x", "", "s"],
        vec![string_attr("mode", "nearest")],
        vec![],
        vec![f32_info("s", &[Dim::Value(4)])],
    );
    let imported = from_onnx(&bytes, &ImportOptions::default()).unwrap();
    let s = |v: [f32; 4]| Value::Tensor(Tensor::from_vec(&[4], v.to_vec()).unwrap());
    let y = run_both(&imported.module, &[x(2), s([1.0, 1.0, 2.0, 0.5])]).unwrap();
    assert_eq!(y[0].shape(), &[1, 1, 4, 2]);
    let err = run_both(&imported.module, &[x(2), s([1.0, 3.0, 2.0, 2.0])]).unwrap_err();
    assert!(err.contains("match_cast") || err.contains("match"), "{err}");

    let bytes = resize(
        &["x", "", "s"],
        vec![int_attr("antialias", 1)],
        vec![f32_init("s", &[4], vec![1.0, 1.0, 0.5, 0.5])],
        vec![],
    );
    assert_import_error(
        &bytes,
        "antialias = 1 applies to the linear and cubic modes",
    );
}

/// An 8-bit initializer (`uint8` or `int8`, stored in `int32_data`).
fn int8_init(
    name: &str,
    elem: tensor_proto::DataType,
    dims: &[i64],
    data: Vec<i32>,
) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        dims: dims.to_vec(),
        data_type: Some(elem as i32),
        int32_data: data,
        ..Default::default()
    }
}

/// A fixed xorshift sequence for the quantized cases.
fn xorshift(seed: u32) -> impl FnMut() -> u32 {
    let mut s = seed;
    move || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        s
    }
}

/// `MatMulInteger` of 8-bit tensors (what onnxruntime's `quantize_dynamic`
/// writes) is an `int32` matmul of the 8-bit tensors themselves, not of
/// widened copies, plus the zero-point corrections (a run-time activation
/// zero point, constant per-column weight zero points): the exact
/// product on both targets, at sizes that are not multiples of a tile.
#[test]
fn matmul_integer_multiplies_the_8bit_tensors_into_int32() {
    use tensor_proto::DataType as D;
    let (m, k, n) = (3usize, 37usize, 19usize);
    let mut next = xorshift(0x1234_5679);
    let b: Vec<i32> = (0..k * n).map(|_| next() as u8 as i8 as i32).collect();
    let bz: Vec<i32> = (0..n).map(|_| (next() % 9) as i32 - 4).collect();
    let bytes = model(
        13,
        GraphProto {
            name: Some("mmi".into()),
            node: vec![node(
                "MatMulInteger",
                &["a", "b", "az", "bz"],
                &["y"],
                vec![],
            )],
            initializer: vec![
                int8_init("b", D::Int8, &[k as i64, n as i64], b.clone()),
                int8_init("bz", D::Int8, &[n as i64], bz.clone()),
            ],
            input: vec![
                value_info("a", D::Uint8, &[Dim::Value(m as i64), Dim::Value(k as i64)]),
                value_info("az", D::Uint8, &[]),
            ],
            output: vec![value_info("y", D::Int32, &[])],
            ..Default::default()
        },
    );
    let imported = from_onnx(&bytes, &ImportOptions::default()).unwrap();
    let text = imported.module.to_string();
    assert!(
        text.contains("R.matmul(a, metadata[\"relax.expr.Constant\"][0], out_dtype=\"int32\")"),
        "{text}"
    );
    let a: Vec<u8> = (0..m * k).map(|_| next() as u8).collect();
    let az = 117u8;
    let mut want = vec![0i32; m * n];
    for i in 0..m {
        for j in 0..n {
            want[i * n + j] = (0..k)
                .map(|p| (i32::from(a[i * k + p]) - i32::from(az)) * (b[p * n + j] - bz[j]))
                .sum();
        }
    }
    let args = [
        Value::Tensor(Tensor::from_vec(&[m as i64, k as i64], a).unwrap()),
        Value::Tensor(Tensor::scalar(az)),
    ];
    for target in [Target::host(), Target::interpreter()] {
        let exec = build(&imported.module, &target).unwrap();
        let y = outputs(VirtualMachine::new(&exec).call("main", &args).unwrap());
        assert_eq!(y[0].to_vec::<i32>().unwrap(), want, "{target:?}");
    }
}

/// A QDQ `MatMul` (onnxruntime's `quantize_static`: the activation
/// quantized and dequantized, an `int8` weight dequantized per output
/// channel) keeps the weight's `dequantize` at import, so that
/// `FakeQuantizationToInteger` turns the matmul into an `int32` matmul of
/// the 8-bit tensors; its output is the float path's within rounding.
#[test]
fn a_qdq_matmul_becomes_an_integer_matmul() {
    use relax_core::transform::{FakeQuantizationToInteger, Pass};
    use tensor_proto::DataType as D;
    let (m, k, n) = (5usize, 33usize, 7usize);
    let mut next = xorshift(0x0bad_cafe);
    let w: Vec<i32> = (0..k * n).map(|_| next() as u8 as i8 as i32).collect();
    let sw: Vec<f32> = (0..n).map(|_| (next() % 50 + 1) as f32 * 1e-3).collect();
    let bytes = model(
        13,
        GraphProto {
            name: Some("qdq".into()),
            node: vec![
                node("QuantizeLinear", &["x", "sx", "zx"], &["xq"], vec![]),
                node("DequantizeLinear", &["xq", "sx", "zx"], &["xd"], vec![]),
                node(
                    "DequantizeLinear",
                    &["w", "sw", "zw"],
                    &["wd"],
                    vec![int_attr("axis", 1)],
                ),
                node("MatMul", &["xd", "wd"], &["y"], vec![]),
            ],
            initializer: vec![
                f32_init("sx", &[], vec![0.02]),
                int8_init("zx", D::Uint8, &[], vec![100]),
                int8_init("w", D::Int8, &[k as i64, n as i64], w),
                f32_init("sw", &[n as i64], sw),
                int8_init("zw", D::Int8, &[n as i64], vec![0; n]),
            ],
            input: vec![f32_info("x", &[Dim::Value(m as i64), Dim::Value(k as i64)])],
            output: vec![f32_info("y", &[])],
            ..Default::default()
        },
    );
    let imported = from_onnx(&bytes, &ImportOptions::default()).unwrap();
    let text = imported.module.to_string();
    assert_eq!(text.matches("R.dequantize(").count(), 2, "{text}");
    let integer = FakeQuantizationToInteger::default()
        .run(imported.module.clone())
        .unwrap();
    let text = integer.to_string();
    assert!(
        text.contains("out_dtype=\"int32\"") && !text.contains("R.dequantize("),
        "{text}"
    );
    let x: Vec<f32> = (0..m * k)
        .map(|_| (next() % 1000) as f32 / 200.0 - 2.0)
        .collect();
    let args = vec![Value::Tensor(
        Tensor::from_vec(&[m as i64, k as i64], x).unwrap(),
    )];
    let want = run(&imported.module, args.clone())[0]
        .to_vec::<f32>()
        .unwrap();
    let got = run(&integer, args)[0].to_vec::<f32>().unwrap();
    let scale = want.iter().fold(0f32, |a, v| a.max(v.abs()));
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() <= 1e-5 * scale, "{g} vs {w} (scale {scale})");
    }
}

/// `DynamicQuantizeLinear` of a rank-3 input with symbolic dims (its range
/// reduced over rows first, then over them): the scale, zero point and
/// bytes of ONNX's definition, computed here, on LLVM and the
/// interpreter, for inputs of either sign, all positive, and all zero.
#[test]
fn dynamic_quantize_linear_of_a_batch_of_rows() {
    let bytes = model(
        13,
        GraphProto {
            name: Some("dql".into()),
            node: vec![node(
                "DynamicQuantizeLinear",
                &["x"],
                &["y", "scale", "zp"],
                vec![],
            )],
            input: vec![f32_info(
                "x",
                &[Dim::Param("b"), Dim::Param("s"), Dim::Value(37)],
            )],
            output: vec![
                value_info("y", tensor_proto::DataType::Uint8, &[]),
                f32_info("scale", &[]),
                value_info("zp", tensor_proto::DataType::Uint8, &[]),
            ],
            ..Default::default()
        },
    );
    let imported = from_onnx(&bytes, &ImportOptions::default()).unwrap();
    let mut next = xorshift(0x5eed_1234);
    let (b, s, n) = (2usize, 5usize, 37usize);
    let cases: Vec<Vec<f32>> = vec![
        (0..b * s * n)
            .map(|_| (next() % 2001) as f32 / 300.0 - 3.1)
            .collect(),
        (0..b * s * n)
            .map(|_| (next() % 1000) as f32 / 100.0 + 0.5)
            .collect(),
        vec![0.0; b * s * n],
    ];
    for x in cases {
        // ONNX's definition, in float32 as onnxruntime computes it.
        let hi = x.iter().fold(0f32, |a, &v| a.max(v));
        let lo = x.iter().fold(0f32, |a, &v| a.min(v));
        let range = if hi - lo == 0.0 { 1.0 } else { hi - lo };
        let scale = range / 255.0;
        let zp = (0.0 - lo / scale).clamp(0.0, 255.0).round_ties_even();
        let want: Vec<u8> = x
            .iter()
            .map(|&v| ((v / scale).round_ties_even() + zp).clamp(0.0, 255.0) as u8)
            .collect();
        let args = [Value::Tensor(
            Tensor::from_vec(&[b as i64, s as i64, n as i64], x.clone()).unwrap(),
        )];
        for target in [Target::host(), Target::interpreter()] {
            let exec = build(&imported.module, &target).unwrap();
            let out = outputs(VirtualMachine::new(&exec).call("main", &args).unwrap());
            assert_eq!(out[1].to_vec::<f32>().unwrap(), vec![scale], "{target:?}");
            assert_eq!(out[2].to_vec::<u8>().unwrap(), vec![zp as u8], "{target:?}");
            assert_eq!(out[0].to_vec::<u8>().unwrap(), want, "{target:?}");
        }
    }
}
