//! Relax programs built for `Target::interpreter()` and run on the VM:
//! the seed's MLP against ndarray, the checks before any kernel runs, every
//! construct the VM lowers, host functions, serialization and threads.

use ndarray::{Array, Array1, Array2, ArrayD, IxDyn};
use relax::ir::{Attrs, Expr, IRModule, PrimExpr, StructInfo, Var};
use relax::{
    build, BlockBuilder, DataType, Error, Executable, Target, Tensor, Value, VirtualMachine,
};

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

fn run(exec: &Executable, name: &str, args: &[Value]) -> Result<Value, Error> {
    VirtualMachine::new(exec).call(name, args)
}

fn tensor_of(v: &Value) -> ArrayD<f32> {
    v.as_tensor()
        .expect("a tensor")
        .to_ndarray::<f32>()
        .expect("float32")
}

fn assert_close(a: &ArrayD<f32>, b: &ArrayD<f32>, tol: f32) {
    assert_eq!(a.shape(), b.shape());
    for (x, y) in a.iter().zip(b.iter()) {
        assert!((x - y).abs() <= tol * (1.0 + y.abs()), "{x} vs {y}");
    }
}

/// The seed's MLP (MLC chapter 7.4), built with the BlockBuilder, with a
/// symbolic batch dim and the weights as parameters.
fn mlp_module() -> IRModule {
    let n = relax::ir::TirVar::new("n");
    let f32_ = DataType::f32();
    let t = |dims: Vec<PrimExpr>| Some(StructInfo::tensor(dims, f32_));
    let d = PrimExpr::int;
    let x = Var::new("x", t(vec![PrimExpr::var(&n), d(784)]));
    let w0 = Var::new("w0", t(vec![d(128), d(784)]));
    let b0 = Var::new("b0", t(vec![d(128)]));
    let w1 = Var::new("w1", t(vec![d(10), d(128)]));
    let b1 = Var::new("b1", t(vec![d(10)]));
    let op = |name: &str, args: Vec<Expr>| {
        relax::op::lookup(name)
            .unwrap()
            .call(args, &Attrs::new())
            .unwrap()
    };
    let mut bb = BlockBuilder::new();
    let params = vec![x.clone(), w0.clone(), b0.clone(), w1.clone(), b1.clone()];
    bb.function("main", params, |bb| {
        bb.dataflow(|bb| {
            let lv0 = bb.emit(op(
                "relax.matmul",
                vec![x.to_expr(), op("relax.permute_dims", vec![w0.to_expr()])],
            ))?;
            let lv1 = bb.emit(op("relax.add", vec![lv0.to_expr(), b0.to_expr()]))?;
            let lv2 = bb.emit(op("relax.nn.relu", vec![lv1.to_expr()]))?;
            let lv3 = bb.emit(op(
                "relax.matmul",
                vec![lv2.to_expr(), op("relax.permute_dims", vec![w1.to_expr()])],
            ))?;
            let lv4 = bb.emit(op("relax.add", vec![lv3.to_expr(), b1.to_expr()]))?;
            Ok(bb.emit_output(lv4)?.to_expr())
        })
    })
    .unwrap();
    bb.finalize().unwrap()
}

fn mlp_reference(
    x: &Array2<f32>,
    w0: &Array2<f32>,
    b0: &Array1<f32>,
    w1: &Array2<f32>,
    b1: &Array1<f32>,
) -> Array2<f32> {
    let h = (x.dot(&w0.t()) + b0).mapv(|v| v.max(0.0));
    h.dot(&w1.t()) + b1
}

#[test]
fn seed_mlp_matches_ndarray_for_several_batch_sizes() {
    let exec = build(&mlp_module(), &Target::interpreter()).unwrap();
    let into2 = |a: ArrayD<f32>| a.into_dimensionality::<ndarray::Ix2>().unwrap();
    let into1 = |a: ArrayD<f32>| a.into_dimensionality::<ndarray::Ix1>().unwrap();
    let w0 = into2(random(&[128, 784], 1));
    let b0 = into1(random(&[128], 2));
    let w1 = into2(random(&[10, 128], 3));
    let b1 = into1(random(&[10], 4));
    for batch in [1, 3, 64] {
        let x = into2(random(&[batch, 784], 10 + batch as u64));
        let args: Vec<Value> = vec![
            Tensor::from(&x).into(),
            Tensor::from(&w0).into(),
            Tensor::from(&b0).into(),
            Tensor::from(&w1).into(),
            Tensor::from(&b1).into(),
        ];
        let out = run(&exec, "main", &args).unwrap();
        let expected = mlp_reference(&x, &w0, &b0, &w1, &b1).into_dyn();
        assert_close(&tensor_of(&out), &expected, 1e-5);
    }
}

#[test]
fn wrong_arguments_are_errors_naming_the_parameter_and_both_shapes() {
    let exec = build(&mlp_module(), &Target::interpreter()).unwrap();
    let t = |shape: &[usize]| Value::from(Tensor::from(&random(shape, 7)));
    let good = || {
        vec![
            t(&[2, 784]),
            t(&[128, 784]),
            t(&[128]),
            t(&[10, 128]),
            t(&[10]),
        ]
    };

    let err = run(&exec, "main", &good()[..4]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "`main` takes 5 arguments, but 4 were given"
    );

    let mut args = good();
    args[0] = t(&[2, 785]);
    let err = run(&exec, "main", &args).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("parameter `x` of `main`"), "{msg}");
    assert!(
        msg.contains("R.Tensor((n, 784), dtype=\"float32\")"),
        "{msg}"
    );
    assert!(msg.contains("(2, 785)"), "{msg}");

    let mut args = good();
    args[2] = Value::from(Tensor::from(&Array1::<f64>::zeros(128)));
    let msg = run(&exec, "main", &args).unwrap_err().to_string();
    assert!(
        msg.contains("parameter `b0` of `main`") && msg.contains("float64"),
        "{msg}"
    );

    let mut args = good();
    args[1] = t(&[128]);
    let msg = run(&exec, "main", &args).unwrap_err().to_string();
    assert!(msg.contains("parameter `w0` of `main`"), "{msg}");

    assert!(matches!(
        run(&exec, "nope", &good()),
        Err(Error::UnknownFunction(_))
    ));
}

/// A symbolic dim bound by one parameter must agree in the next.
#[test]
fn a_dim_contradicting_an_earlier_binding_is_an_error() {
    let m: IRModule = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 2), dtype="float32"), y: R.Tensor(("n", 2), dtype="float32")) -> R.Tensor(("n", 2), dtype="float32"):
        n = T.int64()
        z: R.Tensor((n, 2), dtype="float32") = R.add(x, y)
        return z
"#
    .parse()
    .unwrap();
    let exec = build(&m, &Target::interpreter()).unwrap();
    let t = |rows: usize| Value::from(Tensor::from(&random(&[rows, 2], 3)));
    let ok = run(&exec, "main", &[t(3), t(3)]).unwrap();
    assert_eq!(ok.as_tensor().unwrap().shape(), &[3, 2]);
    let msg = run(&exec, "main", &[t(3), t(4)]).unwrap_err().to_string();
    assert!(msg.contains("parameter `y` of `main`"), "{msg}");
    assert!(msg.contains("n = 3"), "{msg}");
    assert!(msg.contains('4'), "{msg}");
}

const CONSTRUCTS: &str = r#"
@I.ir_module
class Module:
    @R.function(private=True)
    def helper(a: R.Tensor(("m",), dtype="float32")) -> R.Tensor(("m",), dtype="float32"):
        m = T.int64()
        b: R.Tensor((m,), dtype="float32") = R.multiply(a, a)
        return b

    @R.function
    def main(x: R.Tensor(("n", 4), dtype="float32"), flag: R.Prim("bool")) -> R.Tuple(R.Tensor(dtype="float32", ndim=1), R.Shape(ndim=2), R.Prim("int64")):
        n = T.int64()
        with R.dataflow():
            flat: R.Tensor((n * 4,), dtype="float32") = R.reshape(x, R.shape([n * 4]))
            sq: R.Tensor((n * 4,), dtype="float32") = cls.helper(flat)
            R.output(sq)
        k: R.Tensor(ndim=1, dtype="float32") = R.match_cast(sq, R.Tensor(("k",), dtype="float32"))
        if flag:
            r: R.Tensor(dtype="float32", ndim=1) = R.negative(k)
        else:
            r: R.Tensor(dtype="float32", ndim=1) = k
        s: R.Shape([n, 4]) = R.shape([n, 4])
        p: R.Prim("int64") = R.prim_value(n * 4 + 1)
        t: R.Tuple(R.Tensor(dtype="float32", ndim=1), R.Shape([n, 4]), R.Prim("int64")) = (r, s, p)
        u: R.Tensor(dtype="float32", ndim=1) = t[0]
        return (u, s, p)
"#;

#[test]
fn every_construct_runs() {
    let m: IRModule = CONSTRUCTS.parse().unwrap();
    let exec = build(&m, &Target::interpreter()).unwrap();
    let x = ndarray::arr2(&[[1.0f32, -2.0, 3.0, 0.5], [0.0, 1.0, -1.0, 2.0]]);
    for flag in [true, false] {
        let out = run(&exec, "main", &[Tensor::from(&x).into(), Value::Bool(flag)]).unwrap();
        let fields = out.as_tuple().unwrap();
        let r = tensor_of(&fields[0]);
        let sign = if flag { -1.0 } else { 1.0 };
        let expected = x.iter().map(|v| sign * v * v).collect::<Vec<_>>();
        assert_eq!(r.iter().copied().collect::<Vec<_>>(), expected);
        assert_eq!(fields[1].as_shape().unwrap(), &[2, 4]);
        assert_eq!(fields[2], Value::Int(9));
    }
}

#[test]
fn host_functions_for_call_packed() {
    relax::register_packed("test.scale_by_two", |args: &[Value]| {
        let t = args[0].as_tensor().ok_or("expected a tensor")?;
        let a = t.to_ndarray::<f32>().map_err(|e| e.to_string())?;
        Ok(Tensor::from(a.mapv(|v| v * 2.0)).into())
    });
    let text = r#"
@I.ir_module
class Module:
    @R.function(pure=False)
    def main(x: R.Tensor((3,), dtype="float32")) -> R.Tensor((3,), dtype="float32"):
        y: R.Tensor((3,), dtype="float32") = R.call_packed("test.scale_by_two", x, sinfo_args=R.Tensor((3,), dtype="float32"))
        return y
"#;
    let m: IRModule = text.parse().unwrap();
    let exec = build(&m, &Target::interpreter()).unwrap();
    let x = Tensor::from(&ndarray::arr1(&[1.0f32, 2.0, 3.0]));
    let out = run(&exec, "main", &[x.clone().into()]).unwrap();
    assert_eq!(
        out.as_tensor().unwrap().to_vec::<f32>().unwrap(),
        vec![2.0, 4.0, 6.0]
    );

    // Unknown at build time: an error then.
    let unknown = text.replace("test.scale_by_two", "test.not_registered");
    let err = build(&unknown.parse().unwrap(), &Target::interpreter()).unwrap_err();
    assert!(err.to_string().contains("test.not_registered"), "{err}");

    // Removed after the build: an error at the call.
    relax::register_packed("test.temporary", |args: &[Value]| Ok(args[0].clone()));
    let temp: IRModule = text
        .replace("test.scale_by_two", "test.temporary")
        .parse()
        .unwrap();
    let exec = build(&temp, &Target::interpreter()).unwrap();
    assert!(relax::packed::unregister_packed("test.temporary"));
    let err = run(&exec, "main", &[x.into()]).unwrap_err();
    assert!(err.to_string().contains("test.temporary"), "{err}");
}

#[test]
fn a_built_executable_round_trips_through_bytes() {
    let exec = build(&mlp_module(), &Target::interpreter()).unwrap();
    let bytes = exec.to_bytes();
    let back = Executable::from_bytes(&bytes).unwrap();
    assert_eq!(back, exec);
    assert!(Executable::from_bytes(&bytes[..bytes.len() / 2]).is_err());
}

#[test]
fn the_same_executable_runs_on_four_threads_at_once() {
    let exec = std::sync::Arc::new(build(&mlp_module(), &Target::interpreter()).unwrap());
    let w0 = Tensor::from(&random(&[128, 784], 1));
    let b0 = Tensor::from(&random(&[128], 2));
    let w1 = Tensor::from(&random(&[10, 128], 3));
    let b1 = Tensor::from(&random(&[10], 4));
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let (exec, w0, b0, w1, b1) =
                (exec.clone(), w0.clone(), b0.clone(), w1.clone(), b1.clone());
            std::thread::spawn(move || {
                let x = random(&[i + 1, 784], 100 + i as u64);
                let vm = VirtualMachine::new(&exec);
                let args = [
                    Tensor::from(&x).into(),
                    w0.into(),
                    b0.into(),
                    w1.into(),
                    b1.into(),
                ];
                (x, vm.call("main", &args).unwrap())
            })
        })
        .collect();
    for h in handles {
        let (x, out) = h.join().unwrap();
        let v = |t: &Tensor| t.to_ndarray::<f32>().unwrap();
        let (w0, b0, w1, b1) = (v(&w0), v(&b0), v(&w1), v(&b1));
        let x2 = x.into_dimensionality::<ndarray::Ix2>().unwrap();
        let expected = mlp_reference(
            &x2,
            &w0.into_dimensionality().unwrap(),
            &b0.into_dimensionality().unwrap(),
            &w1.into_dimensionality().unwrap(),
            &b1.into_dimensionality().unwrap(),
        );
        assert_close(&tensor_of(&out), &expected.into_dyn(), 1e-5);
    }
}

/// One call of every registered op (but the `call_*` family, tested above,
/// the closure ops and the impure debugging ops),
/// built and run on the interpreter: the result has exactly the StructInfo
/// that inference promised.
#[test]
fn every_op_runs_on_the_interpreter_with_the_inferred_struct_info() {
    use relax::ir::AttrValue;
    let f32_ = DataType::f32();
    let tensor = |dims: &[i64], dt: DataType| {
        StructInfo::tensor(dims.iter().map(|&d| PrimExpr::int(d)).collect(), dt)
    };
    let shape = |dims: &[i64]| Expr::shape(dims.iter().map(|&d| PrimExpr::int(d)).collect());
    let ints = |v: &[i64]| AttrValue::from(v.to_vec());
    // (op, tensor parameters, extra leading/trailing literal args, attributes)
    let t23 = || tensor(&[2, 3], f32_);
    let mut covered = std::collections::HashSet::new();
    let samples: Vec<(&str, Vec<StructInfo>, Vec<NamedAttr>)> = vec![
        (
            "relax.matmul",
            vec![tensor(&[2, 3, 4], f32_), tensor(&[4, 5], f32_)],
            vec![],
        ),
        ("relax.ewise_fma", vec![t23(), t23(), t23()], vec![]),
        (
            "relax.permute_dims",
            vec![tensor(&[2, 3, 4], f32_)],
            vec![("axes", ints(&[2, 0, 1]))],
        ),
        ("relax.flatten", vec![t23()], vec![]),
        ("relax.expand_dims", vec![t23()], vec![("axis", ints(&[1]))]),
        ("relax.squeeze", vec![tensor(&[2, 1, 3], f32_)], vec![]),
        (
            "relax.split",
            vec![tensor(&[6, 2], f32_)],
            vec![("indices_or_sections", AttrValue::Int(3))],
        ),
        (
            "relax.strided_slice",
            vec![tensor(&[10], f32_)],
            vec![
                ("axes", ints(&[0])),
                ("begin", ints(&[1])),
                ("end", ints(&[8])),
                ("strides", ints(&[2])),
            ],
        ),
        (
            "relax.argmax",
            vec![t23()],
            vec![("axis", AttrValue::Int(1))],
        ),
        (
            "relax.argmin",
            vec![t23()],
            vec![("axis", AttrValue::Int(0))],
        ),
        (
            "relax.astype",
            vec![t23()],
            vec![("dtype", AttrValue::from("float64"))],
        ),
        ("relax.nn.softmax", vec![t23()], vec![]),
        (
            "relax.nn.log_softmax",
            vec![t23()],
            vec![("axis", AttrValue::Int(0))],
        ),
        (
            "relax.nn.layer_norm",
            vec![t23(), tensor(&[3], f32_), tensor(&[3], f32_)],
            vec![("axes", ints(&[-1]))],
        ),
        (
            "relax.nn.attention",
            vec![
                tensor(&[1, 3, 4, 2], f32_),
                tensor(&[1, 5, 2, 2], f32_),
                tensor(&[1, 5, 2, 3], f32_),
            ],
            vec![("causal_mask", AttrValue::from("BottomRight"))],
        ),
        (
            "relax.nn.attention_bias",
            vec![
                tensor(&[1, 3, 4, 2], f32_),
                tensor(&[1, 5, 2, 2], f32_),
                tensor(&[1, 5, 2, 3], f32_),
                tensor(&[1, 1, 3, 5], f32_),
            ],
            vec![],
        ),
        (
            "relax.nn.conv2d",
            vec![tensor(&[1, 2, 5, 5], f32_), tensor(&[3, 2, 3, 3], f32_)],
            vec![("padding", ints(&[1]))],
        ),
        (
            "relax.nn.batch_norm",
            vec![
                tensor(&[2, 3, 4], f32_),
                tensor(&[3], f32_),
                tensor(&[3], f32_),
                tensor(&[3], f32_),
                tensor(&[3], f32_),
            ],
            vec![("axis", AttrValue::Int(1))],
        ),
        (
            "relax.nn.max_pool2d",
            vec![tensor(&[1, 2, 5, 5], f32_)],
            vec![("pool_size", ints(&[2, 2])), ("strides", ints(&[2, 2]))],
        ),
        (
            "relax.nn.conv2d_transpose",
            vec![tensor(&[1, 2, 3, 3], f32_), tensor(&[2, 4, 3, 3], f32_)],
            vec![("strides", ints(&[2, 2])), ("padding", ints(&[1]))],
        ),
        (
            "relax.nn.pad",
            vec![tensor(&[2, 3, 4], f32_)],
            vec![
                ("pad_width", ints(&[0, 1, 2, 2, 1, 0])),
                ("pad_mode", AttrValue::from("reflect")),
            ],
        ),
        (
            "relax.nn.avg_pool2d",
            vec![tensor(&[1, 2, 5, 5], f32_)],
            vec![
                ("pool_size", ints(&[3, 3])),
                ("strides", ints(&[2, 2])),
                ("padding", ints(&[1])),
                ("ceil_mode", AttrValue::Bool(true)),
            ],
        ),
        ("relax.shape_of", vec![t23()], vec![]),
        (
            "relax.cumsum",
            vec![t23()],
            vec![("axis", AttrValue::Int(1))],
        ),
        (
            "relax.cumprod",
            vec![t23()],
            vec![("exclusive", AttrValue::Bool(true))],
        ),
        ("relax.flip", vec![t23()], vec![("axis", AttrValue::Int(0))]),
    ];
    let mut cases: Vec<OpCase> = samples
        .into_iter()
        .map(|(o, p, a)| (o.to_string(), p, vec![], a))
        .collect();
    // Ops of bool or integer operands get constant operands below.
    let not_float = [
        "relax.logical_and",
        "relax.logical_or",
        "relax.logical_xor",
        "relax.logical_not",
        "relax.bitwise_and",
        "relax.bitwise_or",
        "relax.bitwise_xor",
        "relax.bitwise_not",
        "relax.left_shift",
        "relax.right_shift",
        "relax.tensor_to_shape",
        "relax.quantize",
        "relax.dequantize",
    ];
    for op in relax::op::all() {
        if not_float.contains(&op.name) {
            continue;
        }
        let short = op.name.trim_start_matches("relax.");
        let elementwise_binary = op.args == ["x1", "x2"] && op.name != "relax.matmul";
        let reduction =
            op.attrs.iter().map(|a| a.name).eq(["axis", "keepdims"]) && !short.starts_with("arg");
        if elementwise_binary {
            cases.push((
                op.name.into(),
                vec![tensor(&[3, 1, 4], f32_), tensor(&[2, 4], f32_)],
                vec![],
                vec![],
            ));
        } else if op.args == ["x"]
            && op.attrs.is_empty()
            && !["flatten", "shape_of"].contains(&short)
        {
            cases.push((op.name.into(), vec![t23()], vec![], vec![]));
        } else if reduction {
            cases.push((
                op.name.into(),
                vec![t23()],
                vec![],
                vec![("axis", ints(&[1]))],
            ));
        }
    }
    // Ops whose arguments are not all tensor parameters.
    let trailing = |e: Expr| vec![e];
    cases.push((
        "relax.reshape".into(),
        vec![tensor(&[2, 6], f32_)],
        trailing(shape(&[3, -1])),
        vec![],
    ));
    cases.push((
        "relax.image.resize2d".into(),
        vec![tensor(&[1, 2, 3, 4], f32_)],
        trailing(shape(&[5, 7])),
        vec![("method", AttrValue::from("linear"))],
    ));
    // Sampling at grid points in (-1, 1) (TVM's layout: coordinates on
    // axis 1), and the grid of an affine map for a (3, 4) output.
    let grid = Expr::constant(
        Tensor::from_vec(
            &[1, 2, 2, 3],
            vec![
                -0.9f32, 0.0, 0.5, -0.25, 0.75, 0.1, 0.3, -0.6, 0.9, 0.2, 0.0, -0.4,
            ],
        )
        .unwrap(),
    );
    cases.push((
        "relax.image.grid_sample".into(),
        vec![tensor(&[1, 2, 3, 4], f32_)],
        trailing(grid),
        vec![("method", AttrValue::from("bilinear"))],
    ));
    cases.push((
        "relax.image.affine_grid".into(),
        vec![tensor(&[2, 2, 3], f32_)],
        trailing(shape(&[3, 4])),
        vec![],
    ));
    cases.push((
        "relax.broadcast_to".into(),
        vec![tensor(&[1, 3], f32_)],
        trailing(shape(&[4, 3])),
        vec![],
    ));
    let idx = Expr::constant(Tensor::from_vec(&[2], vec![0i64, 4]).unwrap());
    cases.push((
        "relax.take".into(),
        vec![tensor(&[5, 3], f32_)],
        trailing(idx),
        vec![("axis", AttrValue::Int(0))],
    ));
    // The gathers and scatters: indices (and updates) as constants.
    let i64s = |dims: &[i64], v: Vec<i64>| Expr::constant(Tensor::from_vec(dims, v).unwrap());
    let f32s = |dims: &[i64], v: Vec<f32>| Expr::constant(Tensor::from_vec(dims, v).unwrap());
    cases.push((
        "relax.gather_elements".into(),
        vec![t23()],
        trailing(i64s(&[2, 2], vec![0, -1, 2, 1])),
        vec![("axis", AttrValue::Int(1))],
    ));
    cases.push((
        "relax.gather_nd".into(),
        vec![t23()],
        trailing(i64s(&[2, 1], vec![1, 0])),
        vec![],
    ));
    cases.push((
        "relax.scatter_elements".into(),
        vec![t23()],
        vec![i64s(&[1, 2], vec![2, 0]), f32s(&[1, 2], vec![1.5, -2.0])],
        vec![
            ("axis", AttrValue::Int(1)),
            ("reduction", AttrValue::from("add")),
        ],
    ));
    cases.push((
        "relax.scatter_nd".into(),
        vec![t23()],
        vec![i64s(&[1, 1], vec![1]), f32s(&[1, 3], vec![1.0, 2.0, 3.0])],
        vec![],
    ));
    for op in ["relax.tril", "relax.triu"] {
        cases.push((
            op.into(),
            vec![t23()],
            trailing(Expr::prim_value(PrimExpr::int(0))),
            vec![],
        ));
    }
    cases.push((
        "relax.one_hot".into(),
        vec![],
        vec![
            i64s(&[2], vec![2, 0]),
            Expr::prim_value(PrimExpr::float(f32_, 1.0)),
            Expr::prim_value(PrimExpr::float(f32_, 0.0)),
        ],
        vec![("depth", AttrValue::Int(3))],
    ));
    let bools = |dims: &[i64], v: Vec<bool>| Expr::constant(Tensor::from_vec(dims, v).unwrap());
    for op in ["relax.logical_and", "relax.logical_or", "relax.logical_xor"] {
        cases.push((
            op.into(),
            vec![],
            vec![
                bools(&[2, 1], vec![true, false]),
                bools(&[3], vec![true, false, true]),
            ],
            vec![],
        ));
    }
    for op in [
        "relax.bitwise_and",
        "relax.bitwise_or",
        "relax.bitwise_xor",
        "relax.left_shift",
        "relax.right_shift",
    ] {
        cases.push((
            op.into(),
            vec![],
            vec![i64s(&[2, 1], vec![12, -7]), i64s(&[3], vec![1, 2, 3])],
            vec![],
        ));
    }
    // Quantize a float parameter; dequantize an int8 constant.
    cases.push((
        "relax.quantize".into(),
        vec![t23()],
        vec![
            f32s(&[3], vec![0.5, 0.25, 2.0]),
            Expr::constant(Tensor::from_vec(&[3], vec![-3i32, 0, 7]).unwrap()),
        ],
        vec![("out_dtype", AttrValue::from("uint8"))],
    ));
    let q = Expr::constant(Tensor::from_vec(&[2, 3], vec![-128i8, -1, 0, 1, 64, 127]).unwrap());
    cases.push((
        "relax.dequantize".into(),
        vec![],
        vec![
            q,
            Expr::constant(Tensor::scalar(0.5f32)),
            Expr::constant(Tensor::scalar(3i8)),
        ],
        vec![],
    ));
    cases.push((
        "relax.logical_not".into(),
        vec![],
        vec![bools(&[2], vec![true, false])],
        vec![],
    ));
    cases.push((
        "relax.bitwise_not".into(),
        vec![],
        vec![i64s(&[2], vec![5, -1])],
        vec![],
    ));
    // Shapes and tensors, and arange's prim values.
    cases.push((
        "relax.shape_to_tensor".into(),
        vec![],
        vec![shape(&[2, 3])],
        vec![],
    ));
    cases.push((
        "relax.tensor_to_shape".into(),
        vec![],
        vec![i64s(&[2], vec![4, 1])],
        vec![],
    ));
    let p = |v: i64| Expr::prim_value(PrimExpr::int(v));
    cases.push((
        "relax.arange".into(),
        vec![],
        vec![p(1), p(8), p(3)],
        vec![("dtype", AttrValue::from("float32"))],
    ));
    let cond = Expr::constant(
        Tensor::from_vec(&[2, 3], vec![true, false, true, false, false, true]).unwrap(),
    );
    cases.push(("relax.where".into(), vec![t23(), t23()], vec![cond], vec![]));
    cases.push((
        "relax.zeros".into(),
        vec![],
        vec![shape(&[2, 3])],
        vec![("dtype", AttrValue::from("float32"))],
    ));
    cases.push((
        "relax.ones".into(),
        vec![],
        vec![shape(&[2, 3])],
        vec![("dtype", AttrValue::from("int64"))],
    ));
    let fill = Expr::constant(Tensor::scalar(1.5f32));
    cases.push((
        "relax.full".into(),
        vec![],
        vec![shape(&[2, 3]), fill],
        vec![],
    ));
    cases.push((
        "relax.concat".into(),
        vec![t23(), tensor(&[1, 3], f32_)],
        vec![],
        vec![],
    ));
    // A view of a float32 tensor's bytes as int32 (ONNX's BitCast).
    cases.push((
        "relax.memory.view".into(),
        vec![t23()],
        vec![
            shape(&[2, 3]),
            Expr::dtype(relax::DataType::i32()),
            Expr::prim_value(PrimExpr::int(0)),
        ],
        vec![],
    ));
    // Sorting, sets (sizes known only at run time), eye_like, and
    // non-maximum suppression.
    cases.push((
        "relax.topk".into(),
        vec![t23()],
        vec![],
        vec![("k", AttrValue::Int(2))],
    ));
    cases.push((
        "relax.unique".into(),
        vec![t23()],
        vec![],
        vec![
            ("return_inverse", AttrValue::Bool(true)),
            ("return_counts", AttrValue::Bool(true)),
        ],
    ));
    cases.push((
        "relax.eye_like".into(),
        vec![t23()],
        vec![Expr::prim_value(relax::ir::PrimExpr::int(1))],
        vec![],
    ));
    cases.push((
        "relax.vision.all_class_non_max_suppression".into(),
        vec![tensor(&[1, 3, 4], f32_), tensor(&[1, 2, 3], f32_)],
        vec![
            i64s(&[1], vec![2]),
            f32s(&[1], vec![0.5]),
            f32s(&[1], vec![0.0]),
        ],
        vec![],
    ));

    for (op_name, params, literals, attrs) in cases {
        let vars: Vec<Var> = params
            .iter()
            .enumerate()
            .map(|(i, s)| Var::new(format!("p{i}"), Some(s.clone())))
            .collect();
        let mut args: Vec<Expr> = match op_name.as_str() {
            "relax.where" => literals
                .iter()
                .cloned()
                .chain(vars.iter().map(Var::to_expr))
                .collect(),
            "relax.concat" => vec![Expr::tuple(vars.iter().map(Var::to_expr).collect())],
            _ => vars
                .iter()
                .map(Var::to_expr)
                .chain(literals.iter().cloned())
                .collect(),
        };
        if op_name == "relax.full" {
            args = literals.clone();
        }
        let info = relax::op::lookup(&op_name).unwrap();
        let call = info
            .call(args, &Attrs::from_pairs(attrs.clone()))
            .unwrap_or_else(|e| panic!("{op_name}: {e}"));
        let mut bb = BlockBuilder::new();
        bb.function("main", vars.clone(), |bb| Ok(bb.emit(call)?.to_expr()))
            .unwrap();
        let m = bb.finalize().unwrap();
        let promised = m.get_relax("main").unwrap().ret_struct_info.clone();
        let exec = build(&m, &Target::interpreter()).unwrap_or_else(|e| panic!("{op_name}: {e}"));
        let inputs: Vec<Value> = params
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let dims: Vec<usize> = s
                    .as_tensor()
                    .unwrap()
                    .shape_values()
                    .unwrap()
                    .iter()
                    .map(|d| d.as_int().unwrap() as usize)
                    .collect();
                Tensor::from(&random(&dims, i as u64 + 1).mapv(|v| v.abs() + 0.5)).into()
            })
            .collect();
        // The VM checks the result against the promised StructInfo itself;
        // check it here too, for the message.
        let out = run(&exec, "main", &inputs).unwrap_or_else(|e| panic!("{op_name}: {e}"));
        // Tensors whose dims are known only at run time (nonzero,
        // unique): their dtypes and ranks.
        if !dims_known(&promised) {
            assert_eq!(
                describe_rank_like(&out),
                describe_rank(&promised),
                "{op_name}"
            );
            covered.insert(op_name);
            continue;
        }
        // A shape whose dims are known only at run time: its rank.
        if let Some(sh) = promised.as_shape().filter(|sh| sh.values.is_none()) {
            let dims = out
                .as_shape()
                .unwrap_or_else(|| panic!("{op_name}: {out:?}"));
            assert_eq!(dims.len() as i32, sh.ndim, "{op_name}");
            covered.insert(op_name);
            continue;
        }
        assert_eq!(
            describe_like(&out),
            describe_struct_info(&promised),
            "{op_name}"
        );
        covered.insert(op_name);
    }
    // The closure ops need functions to close over: the LambdaLift tests
    // run them on every target.
    let closures = ["relax.make_closure", "relax.invoke_closure"];
    // The debugging ops are impure, so they cannot stand in this pure
    // `main`: `op::debug`'s test builds and runs them.
    let impure = ["relax.print", "relax.assert_op"];
    for op in relax::op::all() {
        if !op.name.starts_with("relax.call_")
            && !closures.contains(&op.name)
            && !impure.contains(&op.name)
        {
            assert!(
                covered.contains(op.name),
                "no interpreter test for {}",
                op.name
            );
        }
    }
}

/// An attribute as a keyword and a value.
type NamedAttr = (&'static str, relax::ir::AttrValue);

/// One op call to run: the op, its tensor parameters, its literal
/// arguments, its attributes.
type OpCase = (String, Vec<StructInfo>, Vec<Expr>, Vec<NamedAttr>);

/// `float32(2, 3)`-style summaries of values and of StructInfo, to compare.
fn describe_like(v: &Value) -> String {
    match v {
        Value::Tensor(t) => format!("{}{:?}", t.dtype(), t.shape()),
        Value::Shape(s) => format!("shape{:?}", s.to_vec()),
        Value::Tuple(fields) => fields
            .iter()
            .map(describe_like)
            .collect::<Vec<_>>()
            .join(" "),
        other => other.describe(),
    }
}

/// Whether every tensor in `s` has known dims.
fn dims_known(s: &StructInfo) -> bool {
    match s.kind() {
        relax::ir::StructInfoKind::Tensor(t) => t.shape_values().is_some(),
        relax::ir::StructInfoKind::Tuple(f) => f.iter().all(dims_known),
        _ => true,
    }
}

/// `float32/2`-style summaries (dtype and rank) of values and StructInfo.
fn describe_rank_like(v: &Value) -> String {
    match v {
        Value::Tensor(t) => format!("{}/{}", t.dtype(), t.shape().len()),
        Value::Tuple(fields) => fields
            .iter()
            .map(describe_rank_like)
            .collect::<Vec<_>>()
            .join(" "),
        other => format!("{other:?}"),
    }
}

fn describe_rank(s: &StructInfo) -> String {
    match s.kind() {
        relax::ir::StructInfoKind::Tensor(t) => format!("{}/{}", t.dtype, t.ndim),
        relax::ir::StructInfoKind::Tuple(f) => {
            f.iter().map(describe_rank).collect::<Vec<_>>().join(" ")
        }
        _ => s.to_string(),
    }
}

fn describe_struct_info(s: &StructInfo) -> String {
    match s.kind() {
        relax::ir::StructInfoKind::Tensor(t) => {
            let dims: Vec<i64> = t
                .shape_values()
                .unwrap()
                .iter()
                .map(|d| d.as_int().unwrap())
                .collect();
            format!("{}{:?}", t.dtype, dims)
        }
        relax::ir::StructInfoKind::Shape(sh) => {
            format!(
                "shape{:?}",
                sh.values
                    .as_ref()
                    .unwrap()
                    .iter()
                    .map(|d| d.as_int().unwrap())
                    .collect::<Vec<_>>()
            )
        }
        relax::ir::StructInfoKind::Tuple(f) => f
            .iter()
            .map(describe_struct_info)
            .collect::<Vec<_>>()
            .join(" "),
        _ => s.to_string(),
    }
}

/// A toy single-head attention over a KV cache (keys double as values):
/// `prefill` creates the cache from `n` key rows, `decode` appends one row
/// and attends over the `m` filled rows. Both TVM builtins are reached
/// through `R.call_pure_packed` with `R.Object` StructInfo.
const KV_CACHE_MODULE: &str = r#"
@I.ir_module
class Module:
    @R.function
    def prefill(k: R.Tensor(("n", 4), dtype="float32")) -> R.Object:
        n = T.int64()
        c: R.Object = R.call_pure_packed("vm.builtin.attention_kv_cache_create", k, R.shape([8, 4]), R.prim_value(-1), sinfo_args=(R.Object,))
        return c

    @R.function
    def decode(c: R.Object, q: R.Tensor((1, 4), dtype="float32"), k: R.Tensor((1, 4), dtype="float32"), len: R.Shape(["m"])) -> R.Tensor((1, 4), dtype="float32"):
        m = T.int64()
        c2: R.Object = R.call_pure_packed("vm.builtin.attention_kv_cache_append", c, k, sinfo_args=(R.Object,))
        kv: R.Tensor((m, 4), dtype="float32") = R.call_pure_packed("vm.builtin.attention_kv_cache_view", c2, R.shape([m, 4]), sinfo_args=(R.Tensor((m, 4), dtype="float32"),))
        kt: R.Tensor((4, m), dtype="float32") = R.permute_dims(kv, axes=[1, 0])
        s: R.Tensor((1, m), dtype="float32") = R.matmul(q, kt)
        p: R.Tensor((1, m), dtype="float32") = R.nn.softmax(s, axis=-1)
        o: R.Tensor((1, 4), dtype="float32") = R.matmul(p, kv)
        return o
"#;

/// softmax(q·Kᵀ)·K over all `keys` rows, without a cache.
fn attend_without_cache(q: &Array2<f32>, keys: &Array2<f32>) -> Array2<f32> {
    let s = q.dot(&keys.t());
    let max = s.fold(f32::NEG_INFINITY, |a, &b| a.max(b));
    let e = s.mapv(|v| (v - max).exp());
    let p = &e / e.sum();
    p.dot(keys)
}

#[test]
fn a_kv_cache_module_prefills_and_decodes_like_attention_without_a_cache() {
    let m: IRModule = KV_CACHE_MODULE.parse().unwrap();
    // The module round-trips through the printer and the parser.
    let printed = m.to_string();
    assert!(printed.contains("R.Object"), "{printed}");
    let again: IRModule = printed.parse().unwrap_or_else(|e| panic!("{e}\n{printed}"));
    assert_eq!(again.to_string(), printed);

    for (name, target) in [
        ("interpreter", Target::interpreter()),
        ("host", Target::host()),
    ] {
        let exec = build(&m, &target).unwrap_or_else(|e| panic!("{name}: {e}"));
        let vm = VirtualMachine::new(&exec);
        let prompt = random(&[3, 4], 1).into_dimensionality().unwrap();
        let cache = vm.call("prefill", &[Tensor::from(&prompt).into()]).unwrap();
        let Value::KvCache(c) = &cache else {
            panic!("expected a KV cache, found {}", cache.describe())
        };
        let storage = c.storage_ptr();
        let mut keys: Array2<f32> = prompt.clone();
        for step in 0..5u64 {
            let q: Array2<f32> = random(&[1, 4], 10 + step).into_dimensionality().unwrap();
            let k: Array2<f32> = random(&[1, 4], 20 + step).into_dimensionality().unwrap();
            keys.push_row(k.row(0)).unwrap();
            let len = keys.nrows() as i64;
            let out = vm
                .call(
                    "decode",
                    &[
                        cache.clone(),
                        Tensor::from(&q).into(),
                        Tensor::from(&k).into(),
                        Value::shape(&[len]),
                    ],
                )
                .unwrap_or_else(|e| panic!("step {step}: {e}"));
            let want = attend_without_cache(&q, &keys).into_dyn();
            assert_close(&tensor_of(&out), &want, 1e-5);
        }
        assert_eq!((c.fill_count(), c.capacity()), (8, 8));
        // The views (`kv`) read the storage in place and died with each
        // call's registers: no append found one alive and copied the
        // storage.
        assert_eq!(c.storage_ptr(), storage, "the cache was never reallocated");
        assert!(!c.storage_is_shared(), "no view outlives its call");

        // A ninth row is past the capacity: an error naming both lengths.
        let one = Tensor::from(&Array2::<f32>::zeros((1, 4)));
        let err = vm
            .call(
                "decode",
                &[
                    cache.clone(),
                    one.clone().into(),
                    one.into(),
                    Value::shape(&[9]),
                ],
            )
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("the cache's capacity is 8 rows; append of 1 rows after 8 needs 9"),
            "{err}"
        );
    }
}

/// 100 decode steps over one cache: the cache's storage is allocated once
/// (its address never changes), every step gives back all the VM memory it
/// took, and a step's peak is a few `m`-sized intermediates (4992 bytes at
/// `m = 104`), bounded by the capacity, not by the number of steps. What a
/// step does allocate: the view's copy of the `m` filled rows (made by the
/// host function, outside the VM's budget) and the attention's `(1, m)` and
/// `(4, m)` intermediates, whose shapes change every step so that the pool
/// cannot hand back an earlier step's buffer.
#[test]
fn a_hundred_decode_steps_keep_the_cache_storage_and_bounded_vm_memory() {
    let text = KV_CACHE_MODULE.replace("R.shape([8, 4])", "R.shape([128, 4])");
    let m: IRModule = text.parse().unwrap();
    let exec = build(&m, &Target::interpreter()).unwrap();
    let vm = VirtualMachine::new(&exec).with_memory_limit(1 << 24);
    let prompt = Tensor::from(&random(&[4, 4], 3));
    let cache = vm.call("prefill", &[prompt.into()]).unwrap();
    let Value::KvCache(c) = &cache else {
        panic!("expected a KV cache, found {}", cache.describe())
    };
    let storage = c.storage_ptr();
    let q = Tensor::from(&random(&[1, 4], 4));
    let k = Tensor::from(&random(&[1, 4], 5));
    let mut peak_live = 0;
    for step in 0..100i64 {
        let out = vm
            .call(
                "decode",
                &[
                    cache.clone(),
                    q.clone().into(),
                    k.clone().into(),
                    Value::shape(&[5 + step]),
                ],
            )
            .unwrap_or_else(|e| panic!("step {step}: {e}"));
        drop(out);
        let budget = vm.memory_budget().unwrap();
        assert_eq!(budget.live(), 0, "step {step} left VM memory behind");
        peak_live = peak_live.max(budget.peak());
    }
    assert_eq!(c.fill_count(), 104);
    assert_eq!(c.storage_ptr(), storage, "appends never reallocate");
    // At most 4 tensors of the full (128, 4) float32 view's size at once.
    assert!(
        peak_live <= 4 * 128 * 4 * 4,
        "live VM memory reached {peak_live} bytes"
    );
}
