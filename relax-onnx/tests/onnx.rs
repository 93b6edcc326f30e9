//! The ONNX importer end to end: ONNX's own backend test cases (a subset
//! committed under `tests/data/`, see its README) imported and run on the
//! interpreter and through LLVM against their expected outputs; models
//! built here for symbolic dims, parameters and opset forms; every kind of
//! bad input an `Err`; and mutated model bytes never panicking.

use prost::Message;
use relax_core::backend::{build, Target};
use relax_core::ir::{AttrValue, StructInfo};
use relax_onnx::backend_test::BackendCase;
use relax_onnx::proto::{
    attribute_proto::AttributeType, tensor_proto, tensor_shape_proto, type_proto, AttributeProto,
    GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorProto, TensorShapeProto,
    TypeProto, ValueInfoProto,
};
use relax_onnx::{from_onnx, ImportOptions};
use relax_runtime::{Tensor, Value, VirtualMachine};
use std::path::Path;

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

#[test]
fn onnx_backend_cases_give_their_expected_outputs_on_every_target() {
    let cases = BackendCase::all_in(&data_dir()).unwrap();
    assert!(cases.len() >= 30, "{} cases", cases.len());
    for dir in cases {
        let case = BackendCase::load(&dir).unwrap();
        let imported = from_onnx(&case.model, &ImportOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", case.name));
        for target in [Target::interpreter(), Target::host()] {
            case.check(&imported.module, &target, 1e-3, 1e-4)
                .unwrap_or_else(|m| panic!("{} on {target:?}: {m}", case.name));
        }
    }
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

/// `y = relu(x @ w + b)` with `x: (N, 3)`, `w: (3, 2)`, `b: (2,)`.
fn linear_relu(opset: i64) -> Vec<u8> {
    model(
        opset,
        GraphProto {
            name: Some("linear".into()),
            node: vec![
                node("MatMul", &["x", "w"], &["xw"], vec![]),
                node("Add", &["xw", "b"], &["pre"], vec![]),
                node("Relu", &["pre"], &["y"], vec![]),
            ],
            initializer: vec![
                f32_init("w", &[3, 2], vec![1.0, -1.0, 0.5, 2.0, -0.25, 0.0]),
                f32_init("b", &[2], vec![0.5, -0.5]),
            ],
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
}
