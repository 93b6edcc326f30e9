//! Serialization tests: a round trip of an executable that uses every
//! instruction, callee, pattern, symbolic-expression, attribute and value
//! variant; targeted malformed inputs; and a corruption sweep (every byte
//! flipped several ways, every truncation) that must yield an error or an
//! executable the VM runs without panicking.

use super::*;
use crate::serialize::{FORMAT_VERSION, MAGIC, MAX_NESTING};
use half::{bf16, f16};

fn bx(e: SymExpr) -> Box<SymExpr> {
    Box::new(e)
}

/// One dim per binary/unary/select variant, over `n` (slot 0) and `k` (slot 1).
fn every_sym() -> Vec<SymExpr> {
    use SymExpr as S;
    vec![
        S::Add(slot(0), slot(1)),
        S::Sub(slot(1), slot(0)),
        S::Mul(slot(0), c(5)),
        S::FloorDiv(slot(1), slot(0)),
        S::FloorMod(slot(1), slot(0)),
        S::Min(slot(0), slot(1)),
        S::Max(slot(0), slot(1)),
        S::Eq(slot(0), c(2)),
        S::Ne(slot(0), c(2)),
        S::Lt(slot(0), slot(1)),
        S::Le(slot(1), slot(0)),
        S::Gt(slot(1), slot(0)),
        S::Ge(slot(0), slot(1)),
        S::And(bx(S::Gt(slot(0), c(0))), slot(1)),
        S::Or(c(0), bx(S::Const(0))),
        S::Not(bx(S::Lt(slot(0), c(0)))),
        S::Select(bx(S::Eq(slot(0), c(2))), c(-7), c(8)),
    ]
}

const ADD_ONE: &str = "vm.tests.serialization.add_one";
const DPS: &str = "vm.tests.serialization.dps";

fn register_host_functions() {
    register_packed(ADD_ONE, |args| {
        let v = args
            .first()
            .and_then(Value::as_int)
            .ok_or("expected an integer")?;
        v.checked_add(1).map(Value::Int).ok_or("overflow".into())
    });
    register_packed(DPS, |args| {
        let t = args
            .first()
            .and_then(Value::as_tensor)
            .ok_or("expected a tensor")?;
        let n = *t.shape().first().ok_or("expected a tensor of rank ≥ 1")?;
        let out = Tensor::zeros(DataType::f32(), &[n, 4]).map_err(|e| e.to_string())?;
        Ok(Value::tuple(vec![out.into(), Value::shape(&[7])]))
    });
}

/// Returns its attributes as values, so the test sees their evaluation.
fn attrs_kernel(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    let mut out = vec![Value::Int(args.len() as i64)];
    for (_, a) in &attrs.0 {
        out.push(match a {
            KernelAttr::None => Value::Str("none".into()),
            KernelAttr::Bool(b) => Value::Bool(*b),
            KernelAttr::Int(i) => Value::Int(*i),
            KernelAttr::Float(f) => Value::Float(*f),
            KernelAttr::Str(s) => Value::Str(s.as_str().into()),
            KernelAttr::DataType(d) => Value::DataType(*d),
            KernelAttr::Array(items) => Value::Int(items.len() as i64),
            KernelAttr::Sym(_) => return Err("an attribute was not evaluated".into()),
        });
    }
    Ok(Value::tuple(out))
}

fn rich_kernels(op: &str) -> Option<Kernel> {
    (op == "test.rich.attrs").then_some(attrs_kernel as Kernel)
}

/// An executable using every variant of every executable type.
fn rich() -> Executable {
    let instrs = vec![
        // 0, 1: parameters; `n` from x, `k` from the prim value.
        cast(
            0,
            tensor_pat(vec![bind(0, "n"), lit(4)], DataType::f32()),
            "parameter `x` of `main`",
            "R.Tensor((n, 4), dtype=\"float32\")",
        ),
        Instr::MatchCast {
            value: Arg::Reg(1),
            pattern: Pattern::Prim {
                dtype: DataType::i64(),
                value: Some(bind(1, "k")),
            },
            dst: Some(2),
            context: "parameter `k` of `main`".into(),
            expected: "R.Prim(value=k)".into(),
        },
        Instr::MakeShape {
            dims: every_sym(),
            dst: 3,
        },
        Instr::MakePrim {
            value: SymExpr::Select(bx(SymExpr::Ge(slot(0), c(1))), slot(0), c(0)),
            dtype: DataType::f64(),
            dst: 4,
        },
        Instr::MakeTuple {
            fields: vec![Arg::Reg(3), Arg::Const(0), Arg::Imm(5)],
            dst: 5,
        },
        // 5
        Instr::GetItem {
            tuple: Arg::Reg(5),
            index: 2,
            dst: 6,
        },
        Instr::Move {
            src: Arg::Const(1),
            dst: 7,
        },
        Instr::Call {
            callee: Callee::Closure(7),
            args: vec![Arg::Const(0)],
            dst: 8,
        },
        Instr::Call {
            callee: Callee::Function(1),
            args: vec![Arg::Reg(0)],
            dst: 9,
        },
        Instr::Call {
            callee: Callee::Kernel(0),
            args: vec![Arg::Reg(0), Arg::Reg(2)],
            dst: 10,
        },
        // 10
        Instr::Call {
            callee: Callee::Packed(0),
            args: vec![Arg::Reg(1)],
            dst: 11,
        },
        Instr::Call {
            callee: Callee::DpsPacked {
                name: 1,
                outputs: vec![
                    tensor_pat(vec![var(0, "n"), lit(4)], DataType::f32()),
                    Pattern::Shape {
                        ndim: Some(1),
                        dims: Some(vec![bind(2, "m")]),
                    },
                ],
            },
            args: vec![Arg::Reg(0)],
            dst: 12,
        },
        Instr::MatchCast {
            value: Arg::Const(2),
            pattern: Pattern::Tuple(vec![
                Pattern::Object,
                Pattern::Tensor {
                    ndim: Some(0),
                    dtype: None,
                    dims: None,
                },
                Pattern::Shape {
                    ndim: None,
                    dims: None,
                },
                Pattern::Prim {
                    dtype: DataType::bool(),
                    value: None,
                },
                Pattern::Func,
                Pattern::Prim {
                    dtype: DataType::f32(),
                    value: Some(DimPattern::Any),
                },
            ]),
            dst: Some(13),
            context: "the constant tuple".into(),
            expected: "R.Tuple(…)".into(),
        },
        Instr::If {
            cond: Arg::Reg(2),
            else_target: 15,
        },
        Instr::Goto { target: 16 },
        // 15
        Instr::Move {
            src: Arg::Imm(0),
            dst: 14,
        },
        Instr::MakeShape {
            dims: vec![SymExpr::Slot(2)],
            dst: 14,
        },
        Instr::MakeTuple {
            fields: (3..=14).map(|r| Arg::Reg(r as Reg)).collect(),
            dst: 15,
        },
        Instr::Kill { reg: 14 },
        ret(15),
    ];
    let ident = func(
        "ident",
        &["a"],
        1,
        0,
        vec![
            cast(
                0,
                Pattern::Tensor {
                    ndim: Some(2),
                    dtype: Some(DataType::void()),
                    dims: None,
                },
                "parameter `a` of `ident`",
                "R.Tensor(ndim=2)",
            ),
            ret(0),
        ],
    );
    Executable {
        functions: vec![func("main", &["x", "k"], 16, 3, instrs), ident],
        kernels: vec![KernelEntry {
            op: "test.rich.attrs".into(),
            attrs: vec![
                ("none".into(), KernelAttr::None),
                ("flag".into(), KernelAttr::Bool(true)),
                ("axis".into(), KernelAttr::Int(-1)),
                ("eps".into(), KernelAttr::Float(1e-5)),
                ("layout".into(), KernelAttr::Str("NCHW".into())),
                ("dtype".into(), KernelAttr::DataType(DataType::float(16))),
                (
                    "axes".into(),
                    KernelAttr::Array(vec![
                        KernelAttr::Int(0),
                        KernelAttr::Sym(SymExpr::Slot(1)),
                        KernelAttr::Array(vec![]),
                    ]),
                ),
                (
                    "size".into(),
                    KernelAttr::Sym(SymExpr::Mul(slot(0), slot(1))),
                ),
            ],
        }],
        packed: vec![ADD_ONE.into(), DPS.into()],
        constants: vec![
            Tensor::from_vec(&[2, 2], vec![1.0f32, -2.5, 3.25, 0.0])
                .unwrap()
                .into(),
            Value::Func(1),
            Value::tuple(vec![
                Value::Str("ünïcode".into()),
                Tensor::scalar(true).into(),
                Value::shape(&[]),
                Value::Bool(false),
                Value::Func(0),
                Value::Float(2.0),
            ]),
            Value::Int(i64::MIN),
            Value::Float(-0.125),
            Value::DataType(DataType::uint(8)),
            Tensor::from_vec(&[3], vec![1i64, -2, i64::MAX])
                .unwrap()
                .into(),
            Tensor::zeros(DataType::uint(8), &[0, 4]).unwrap().into(),
            Tensor::from_vec(&[2], vec![-1i8, 5]).unwrap().into(),
            Tensor::from_vec(
                &[3],
                vec![
                    f16::from_f32(1.5),
                    f16::NEG_INFINITY,
                    f16::MIN_POSITIVE_SUBNORMAL,
                ],
            )
            .unwrap()
            .into(),
            Tensor::from_vec(&[1, 2], vec![bf16::from_f32(-3.0e38), bf16::from_f32(0.1)])
                .unwrap()
                .into(),
        ],
        natives: vec!["test.native_kernel".into()],
        library: None,
    }
}

fn rich_vm(e: &Executable) -> VirtualMachine {
    VirtualMachine::new(e)
        .with_kernel_resolver(rich_kernels)
        .with_step_limit(10_000)
}

fn rich_args() -> Vec<Value> {
    vec![f32s(&[2, 4]), Value::Int(3)]
}

#[test]
fn the_rich_executable_runs() {
    register_host_functions();
    let e = rich();
    assert_eq!(e.validate(), Ok(()));
    let out = rich_vm(&e).call("main", &rich_args()).unwrap();
    let fields = out.as_tuple().unwrap();
    // n = 2, k = 3.
    assert_eq!(
        fields[0],
        Value::shape(&[5, 1, 10, 1, 1, 2, 3, 1, 0, 1, 0, 1, 0, 1, 0, 1, -7])
    );
    assert_eq!(fields[1], Value::Float(2.0));
    assert_eq!(fields[3], Value::Int(5));
    assert_eq!(fields[5], rich().constants[0]);
    assert_eq!(fields[6], f32s(&[2, 4]));
    let kernel_out = fields[7].as_tuple().unwrap();
    assert_eq!(kernel_out[0], Value::Int(2));
    assert_eq!(kernel_out[3], Value::Int(-1));
    assert_eq!(kernel_out[7], Value::Int(3));
    assert_eq!(kernel_out[8], Value::Int(6));
    assert_eq!(fields[8], Value::Int(4));
    assert_eq!(fields[11], Value::shape(&[7]));
}

#[test]
fn round_trip_preserves_everything() {
    register_host_functions();
    let e = rich();
    let bytes = e.to_bytes();
    assert_eq!(&bytes[..8], MAGIC);
    assert_eq!(bytes[8..12], FORMAT_VERSION.to_le_bytes());
    let back = Executable::from_bytes(&bytes).unwrap();
    assert_eq!(back, e);
    assert_eq!(back.to_bytes(), bytes);
    assert_eq!(
        rich_vm(&back).call("main", &rich_args()),
        rich_vm(&e).call("main", &rich_args())
    );
    let empty = Executable::default();
    assert_eq!(Executable::from_bytes(&empty.to_bytes()), Ok(empty));
}

fn deserialize_error(bytes: &[u8]) -> String {
    match Executable::from_bytes(bytes) {
        Err(Error::Deserialize(why)) => why,
        other => panic!("expected a Deserialize error, got {other:?}"),
    }
}

/// `f() { ret 1 }`: the byte offsets below follow the format.
fn tiny() -> Vec<u8> {
    exec(vec![func(
        "f",
        &[],
        1,
        0,
        vec![Instr::Ret { value: Arg::Imm(1) }],
    )])
    .to_bytes()
}

#[test]
fn header_length_and_tag_errors() {
    let ok = tiny();
    assert_eq!(ok.len(), 95);
    assert!(Executable::from_bytes(&ok).is_ok());

    assert!(deserialize_error(&[]).contains("magic"));
    let mut bad = ok.clone();
    bad[0] = b'X';
    assert!(deserialize_error(&bad).contains("magic"));
    let mut bad = ok.clone();
    bad[8] = 1;
    assert!(deserialize_error(&bad).contains("format version 1 is not supported"));
    let mut bad = ok.clone();
    bad.push(0);
    assert!(deserialize_error(&bad).contains("1 unexpected bytes"));
    let why = deserialize_error(&ok[..60]);
    assert!(why.contains("ends inside"), "{why}");
    // The function count, then a string length, far beyond the input.
    let mut bad = ok.clone();
    bad[12..20].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(deserialize_error(&bad).contains("exceeds"));
    let mut bad = ok.clone();
    bad[20..28].copy_from_slice(&(1u64 << 40).to_le_bytes());
    assert!(deserialize_error(&bad).contains("exceeds"));
    // The name `f` as a lone continuation byte.
    let mut bad = ok.clone();
    bad[28] = 0x80;
    assert!(deserialize_error(&bad).contains("UTF-8"));
    let mut bad = ok.clone();
    bad[53] = 200;
    assert!(deserialize_error(&bad).contains("not the tag of an instruction"));
    let mut bad = ok.clone();
    bad[54] = 3;
    assert!(deserialize_error(&bad).contains("not the tag of an operand"));
}

/// An executable whose only content is the constant encoded by `value`.
fn with_constant(value: &[u8]) -> Vec<u8> {
    let mut b = MAGIC.to_vec();
    b.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    for count in [0u64, 0, 0, 1] {
        b.extend_from_slice(&count.to_le_bytes());
    }
    b.extend_from_slice(value);
    // No native kernels.
    b.extend_from_slice(&0u64.to_le_bytes());
    b
}

/// A tensor constant: dtype (code, bits, lanes), dims, byte count, bytes.
fn tensor_bytes(
    code: u8,
    bits: u16,
    lanes: u16,
    dims: &[i64],
    nbytes: u64,
    data: &[u8],
) -> Vec<u8> {
    let mut v = vec![0, code];
    v.extend_from_slice(&bits.to_le_bytes());
    v.extend_from_slice(&lanes.to_le_bytes());
    v.extend_from_slice(&(dims.len() as u64).to_le_bytes());
    for d in dims {
        v.extend_from_slice(&d.to_le_bytes());
    }
    v.extend_from_slice(&nbytes.to_le_bytes());
    v.extend_from_slice(data);
    v
}

#[test]
fn tensor_and_dtype_errors() {
    let ok = with_constant(&tensor_bytes(2, 32, 1, &[2], 8, &[0; 8]));
    let e = Executable::from_bytes(&ok).unwrap();
    assert_eq!(e.constants, vec![f32s(&[2])]);

    let cases: Vec<(Vec<u8>, &str)> = vec![
        (tensor_bytes(2, 32, 1, &[-2], 8, &[0; 8]), "negative"),
        (
            tensor_bytes(2, 32, 1, &[2], 9, &[0; 9]),
            "needs 8 bytes, but 9",
        ),
        (
            tensor_bytes(2, 32, 1, &[2], 4, &[0; 4]),
            "needs 8 bytes, but 4",
        ),
        (
            tensor_bytes(3, 0, 0, &[2], 0, &[]),
            "cannot have dtype void",
        ),
        (
            tensor_bytes(2, 32, 4, &[2], 32, &[0; 32]),
            "cannot have dtype float32x4",
        ),
        (tensor_bytes(2, 0, 1, &[2], 0, &[]), "not a valid dtype"),
        (tensor_bytes(2, 999, 1, &[2], 0, &[]), "not a valid dtype"),
        (
            tensor_bytes(7, 32, 1, &[2], 8, &[0; 8]),
            "not the tag of a dtype code",
        ),
        (
            tensor_bytes(2, 32, 1, &[1 << 62, 1 << 62, 0], 0, &[]),
            "too many elements",
        ),
        (
            tensor_bytes(2, 32, 1, &[1 << 61, 4], 0, &[]),
            "too many bytes",
        ),
        (tensor_bytes(2, 32, 1, &[2], 1 << 40, &[0; 8]), "exceeds"),
        (vec![3, 2], "2 is not a boolean"),
        (vec![11], "not the tag of a value"),
    ];
    for (value, why) in cases {
        let msg = deserialize_error(&with_constant(&value));
        assert!(msg.contains(why), "expected {why:?} in {msg:?}");
    }
    // A zero-sized tensor may have huge dims after its zero.
    let zero = with_constant(&tensor_bytes(2, 32, 1, &[0, 1 << 62, 1 << 62], 0, &[]));
    assert!(Executable::from_bytes(&zero).is_ok());
}

#[test]
fn nesting_is_bounded() {
    let nested_tuples = |depth: usize| {
        let mut v = Vec::new();
        for _ in 0..depth {
            v.push(5);
            v.extend_from_slice(&1u64.to_le_bytes());
        }
        v.push(1);
        v.extend_from_slice(&7i64.to_le_bytes());
        with_constant(&v)
    };
    assert!(Executable::from_bytes(&nested_tuples(MAX_NESTING)).is_ok());
    assert!(deserialize_error(&nested_tuples(MAX_NESTING + 1)).contains("nesting"));
    assert!(deserialize_error(&nested_tuples(100_000)).contains("nesting"));

    // The same bound as validation: what validates, round-trips.
    let deep = |depth: usize| {
        let mut e = SymExpr::Const(1);
        for _ in 0..depth {
            e = SymExpr::Not(Box::new(e));
        }
        exec(vec![func(
            "f",
            &[],
            1,
            0,
            vec![
                Instr::MakeShape {
                    dims: vec![e],
                    dst: 0,
                },
                ret(0),
            ],
        )])
    };
    let ok = deep(MAX_NESTING);
    assert_eq!(ok.validate(), Ok(()));
    assert_eq!(Executable::from_bytes(&ok.to_bytes()), Ok(ok));
    let too_deep = deep(MAX_NESTING + 1);
    assert!(too_deep.validate().is_err());
    assert!(deserialize_error(&too_deep.to_bytes()).contains("nesting"));
}

/// Runs every function of `e` with arguments from a fixed pool; only
/// checks that nothing panics.
fn run_everything(e: &Executable) {
    let vm = rich_vm(e);
    let pool = [f32s(&[2, 4]), Value::Int(3), Value::Func(1)];
    for f in &e.functions {
        let args: Vec<Value> = (0..f.params.len())
            .map(|i| pool[i % pool.len()].clone())
            .collect();
        let _ = vm.call(&f.name, &args);
    }
    let _ = vm.call("main", &rich_args());
}

#[test]
fn corrupted_bytes_never_panic() {
    register_host_functions();
    let bytes = rich().to_bytes();
    let mut decoded = 0;
    for i in 0..bytes.len() {
        for flip in [0x01u8, 0x80, 0xFF, 0x10] {
            let mut b = bytes.clone();
            b[i] ^= flip;
            if let Ok(e) = Executable::from_bytes(&b) {
                decoded += 1;
                run_everything(&e);
            }
        }
    }
    // Many flips land in data (names, immediates, tensor bytes) and still
    // decode; those executables must run (or fail) cleanly too.
    assert!(decoded > 100, "only {decoded} corrupted inputs decoded");
    for len in 0..bytes.len() {
        assert!(
            Executable::from_bytes(&bytes[..len]).is_err(),
            "a prefix of {len} bytes decoded"
        );
    }
}
