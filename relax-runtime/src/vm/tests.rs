//! Tests of the VM on hand-written executables: parameter checks and their
//! messages, shape-heap computation, tuples, control flow, calls (functions,
//! closures, kernels, host functions), limits, invalid executables and
//! concurrent use. Serialization tests are in [`serialization`].

mod serialization;

use super::*;
use crate::data_type::DataType;
use crate::executable::{DimPattern, KernelEntry, SymExpr};
use crate::packed::register_packed;
use crate::tensor::Tensor;

// ---------------------------------------------------------------- builders

pub(super) fn tensor(dtype: DataType, shape: &[i64]) -> Value {
    Value::Tensor(Tensor::zeros(dtype, shape).unwrap())
}

pub(super) fn f32s(shape: &[i64]) -> Value {
    tensor(DataType::f32(), shape)
}

pub(super) fn func(
    name: &str,
    params: &[&str],
    num_regs: u32,
    num_slots: u32,
    instrs: Vec<Instr>,
) -> VmFunction {
    VmFunction {
        name: name.into(),
        params: params.iter().map(|p| p.to_string()).collect(),
        num_regs,
        num_slots,
        instrs,
    }
}

pub(super) fn exec(functions: Vec<VmFunction>) -> Executable {
    Executable {
        functions,
        ..Executable::default()
    }
}

pub(super) fn bind(slot: u32, name: &str) -> DimPattern {
    DimPattern::Bind {
        slot,
        name: name.into(),
    }
}

pub(super) fn lit(v: i64) -> DimPattern {
    DimPattern::Check {
        expr: SymExpr::Const(v),
        text: v.to_string(),
    }
}

pub(super) fn var(slot: u32, name: &str) -> DimPattern {
    DimPattern::Check {
        expr: SymExpr::Slot(slot),
        text: name.into(),
    }
}

pub(super) fn slot(s: u32) -> Box<SymExpr> {
    Box::new(SymExpr::Slot(s))
}

pub(super) fn c(v: i64) -> Box<SymExpr> {
    Box::new(SymExpr::Const(v))
}

pub(super) fn tensor_pat(dims: Vec<DimPattern>, dtype: DataType) -> Pattern {
    Pattern::Tensor {
        ndim: Some(dims.len() as u32),
        dtype: Some(dtype),
        dims: Some(dims),
    }
}

pub(super) fn cast(reg: Reg, pattern: Pattern, context: &str, expected: &str) -> Instr {
    Instr::MatchCast {
        value: Arg::Reg(reg),
        pattern,
        dst: None,
        context: context.into(),
        expected: expected.into(),
    }
}

pub(super) fn ret(reg: Reg) -> Instr {
    Instr::Ret {
        value: Arg::Reg(reg),
    }
}

fn mismatch(e: Result<Value, Error>) -> (String, String, String) {
    match e {
        Err(Error::Mismatch {
            context,
            expected,
            found,
        }) => (context, expected, found),
        other => panic!("expected a mismatch, got {other:?}"),
    }
}

/// The text of an error that is not a mismatch: a missing kernel
/// (`Unsupported`), a malformed executable (`InvalidExecutable`, with its
/// "invalid executable: " prefix) or a run-time fault (`Runtime`).
fn unsupported(e: Result<Value, Error>) -> String {
    match e {
        Err(Error::Unsupported(why)) | Err(Error::Runtime(why)) => why,
        Err(e @ Error::InvalidExecutable(_)) => e.to_string(),
        other => {
            panic!("expected an Unsupported, Runtime or InvalidExecutable error, got {other:?}")
        }
    }
}

// ------------------------------------------------- parameters and MatchCast

const X_CTX: &str = "parameter `x` of `main`";
const X_SINFO: &str = "R.Tensor((n, 784), dtype=\"float32\")";
const Y_CTX: &str = "parameter `y` of `main`";
const Y_SINFO: &str = "R.Tensor((n, 10), dtype=\"float32\")";

/// `main(x: Tensor((n, 784), f32), y: Tensor((n, 10), f32)) -> Shape([n, n * 2])`.
fn two_params(y_first_dim: DimPattern) -> Executable {
    exec(vec![func(
        "main",
        &["x", "y"],
        3,
        1,
        vec![
            cast(
                0,
                tensor_pat(vec![bind(0, "n"), lit(784)], DataType::f32()),
                X_CTX,
                X_SINFO,
            ),
            cast(
                1,
                tensor_pat(vec![y_first_dim, lit(10)], DataType::f32()),
                Y_CTX,
                Y_SINFO,
            ),
            Instr::MakeShape {
                dims: vec![SymExpr::Slot(0), SymExpr::Mul(slot(0), c(2))],
                dst: 2,
            },
            ret(2),
        ],
    )])
}

#[test]
fn parameters_bind_and_check_a_symbolic_dim() {
    let vm = VirtualMachine::new(&two_params(var(0, "n")));
    let out = vm.call("main", &[f32s(&[3, 784]), f32s(&[3, 10])]);
    assert_eq!(out, Ok(Value::shape(&[3, 6])));
    // A second call starts with a fresh shape heap.
    let out = vm.call("main", &[f32s(&[5, 784]), f32s(&[5, 10])]);
    assert_eq!(out, Ok(Value::shape(&[5, 10])));
}

#[test]
fn literal_dim_mismatch_names_the_parameter_and_the_dim() {
    let vm = VirtualMachine::new(&two_params(var(0, "n")));
    let (context, expected, found) = mismatch(vm.call("main", &[f32s(&[3, 785]), f32s(&[3, 10])]));
    assert_eq!(context, X_CTX);
    assert_eq!(expected, X_SINFO);
    assert_eq!(
        found,
        "a float32 tensor of shape (3, 785): dimension 1 is 785, expected 784"
    );
}

#[test]
fn contradicting_an_earlier_binding_says_who_bound_it() {
    let vm = VirtualMachine::new(&two_params(var(0, "n")));
    let err = vm.call("main", &[f32s(&[3, 784]), f32s(&[5, 10])]);
    assert_eq!(
        err.clone().unwrap_err().to_string(),
        "parameter `y` of `main`: expected R.Tensor((n, 10), dtype=\"float32\"), found a float32 \
         tensor of shape (5, 10): dimension 0 is 5, expected n = 3 (bound by parameter `x` of `main`)"
    );
    let (context, expected, _) = mismatch(err);
    assert_eq!((context.as_str(), expected.as_str()), (Y_CTX, Y_SINFO));

    // A `Bind` of a slot that is already bound checks against it.
    let vm = VirtualMachine::new(&two_params(bind(0, "n")));
    assert_eq!(
        vm.call("main", &[f32s(&[4, 784]), f32s(&[4, 10])]),
        Ok(Value::shape(&[4, 8]))
    );
    let (_, _, found) = mismatch(vm.call("main", &[f32s(&[3, 784]), f32s(&[5, 10])]));
    assert_eq!(
        found,
        "a float32 tensor of shape (5, 10): dimension 0 is 5, expected n = 3 (bound by parameter `x` of `main`)"
    );
}

#[test]
fn compound_dim_expressions_show_their_value_and_origins() {
    let twice_n = DimPattern::Check {
        expr: SymExpr::Mul(slot(0), c(2)),
        text: "n * 2".into(),
    };
    let vm = VirtualMachine::new(&two_params(twice_n));
    assert!(vm.call("main", &[f32s(&[3, 784]), f32s(&[6, 10])]).is_ok());
    let (_, _, found) = mismatch(vm.call("main", &[f32s(&[3, 784]), f32s(&[5, 10])]));
    assert_eq!(
        found,
        "a float32 tensor of shape (5, 10): dimension 0 is 5, expected n * 2 = 6 \
         (n = 3, bound by parameter `x` of `main`)"
    );
}

#[test]
fn wrong_dtype_rank_and_kind_are_reported() {
    let vm = VirtualMachine::new(&two_params(var(0, "n")));
    let y = f32s(&[3, 10]);
    let (_, _, found) = mismatch(vm.call("main", &[tensor(DataType::f64(), &[3, 784]), y.clone()]));
    assert_eq!(
        found,
        "a float64 tensor of shape (3, 784): dtype is float64, expected float32"
    );
    let (_, _, found) = mismatch(vm.call("main", &[f32s(&[3, 784, 1]), y.clone()]));
    assert_eq!(
        found,
        "a float32 tensor of shape (3, 784, 1): rank is 3, expected 2"
    );
    let (context, _, found) = mismatch(vm.call("main", &[Value::shape(&[3, 784]), y]));
    assert_eq!(context, X_CTX);
    assert_eq!(found, "the shape (3, 784)");
}

#[test]
fn patterns_without_dims_check_only_what_they_know() {
    let e = exec(vec![func(
        "main",
        &["x"],
        1,
        0,
        vec![
            cast(
                0,
                Pattern::Tensor {
                    ndim: Some(2),
                    dtype: None,
                    dims: None,
                },
                "parameter `x` of `main`",
                "R.Tensor(ndim=2)",
            ),
            ret(0),
        ],
    )]);
    let vm = VirtualMachine::new(&e);
    assert!(vm.call("main", &[tensor(DataType::i64(), &[1, 2])]).is_ok());
    assert!(vm.call("main", &[f32s(&[7, 0])]).is_ok());
    let (_, _, found) = mismatch(vm.call("main", &[f32s(&[7])]));
    assert_eq!(
        found,
        "a float32 tensor of shape (7,): rank is 1, expected 2"
    );
}

/// `main(v)` checks `v` against `pattern` and returns it.
fn check_one(pattern: Pattern) -> VirtualMachine {
    VirtualMachine::new(&exec(vec![func(
        "main",
        &["v"],
        1,
        2,
        vec![cast(0, pattern, "parameter `v` of `main`", "P"), ret(0)],
    )]))
}

#[test]
fn shape_patterns() {
    let vm = check_one(Pattern::Shape {
        ndim: Some(2),
        dims: Some(vec![bind(0, "m"), var(0, "m")]),
    });
    assert!(vm.call("main", &[Value::shape(&[4, 4])]).is_ok());
    let (_, _, found) = mismatch(vm.call("main", &[Value::shape(&[4, 5])]));
    assert_eq!(
        found,
        "the shape (4, 5): dimension 1 is 5, expected m = 4 (bound by parameter `v` of `main`)"
    );
    let (_, _, found) = mismatch(vm.call("main", &[Value::shape(&[4])]));
    assert_eq!(found, "the shape (4,): rank is 1, expected 2");
    let (_, _, found) = mismatch(vm.call("main", &[f32s(&[4, 4])]));
    assert_eq!(found, "a float32 tensor of shape (4, 4)");
    let any_rank = check_one(Pattern::Shape {
        ndim: None,
        dims: None,
    });
    assert!(any_rank.call("main", &[Value::shape(&[])]).is_ok());
}

#[test]
fn prim_patterns_check_the_value_kind_and_value() {
    let int = check_one(Pattern::Prim {
        dtype: DataType::i64(),
        value: Some(lit(3)),
    });
    assert!(int.call("main", &[Value::Int(3)]).is_ok());
    let (_, _, found) = mismatch(int.call("main", &[Value::Int(4)]));
    assert_eq!(found, "the integer 4: value is 4, expected 3");
    let (_, _, found) = mismatch(int.call("main", &[Value::Float(3.0)]));
    assert_eq!(found, "the float 3");
    let (_, _, found) = mismatch(int.call("main", &[Value::Bool(true)]));
    assert_eq!(found, "the bool true");

    let float = check_one(Pattern::Prim {
        dtype: DataType::f32(),
        value: None,
    });
    assert!(float.call("main", &[Value::Float(2.5)]).is_ok());
    assert!(float.call("main", &[Value::Int(2)]).is_err());

    let boolean = check_one(Pattern::Prim {
        dtype: DataType::bool(),
        value: None,
    });
    assert!(boolean.call("main", &[Value::Bool(false)]).is_ok());
    assert!(boolean.call("main", &[Value::Int(0)]).is_err());

    // An int32 prim value is still a `Value::Int`; its value binds a slot.
    let bound = VirtualMachine::new(&exec(vec![func(
        "main",
        &["k", "x"],
        3,
        1,
        vec![
            cast(
                0,
                Pattern::Prim {
                    dtype: DataType::i32(),
                    value: Some(bind(0, "k")),
                },
                "parameter `k` of `main`",
                "R.Prim(value=k)",
            ),
            cast(
                1,
                tensor_pat(vec![var(0, "k")], DataType::f32()),
                "parameter `x` of `main`",
                "R.Tensor((k,), dtype=\"float32\")",
            ),
            Instr::MakePrim {
                value: SymExpr::Add(slot(0), c(1)),
                dtype: DataType::i64(),
                dst: 2,
            },
            ret(2),
        ],
    )]));
    assert_eq!(
        bound.call("main", &[Value::Int(2), f32s(&[2])]),
        Ok(Value::Int(3))
    );
    let (_, _, found) = mismatch(bound.call("main", &[Value::Int(2), f32s(&[3])]));
    assert_eq!(
        found,
        "a float32 tensor of shape (3,): dimension 0 is 3, expected k = 2 (bound by parameter `k` of `main`)"
    );
}

#[test]
fn tuple_patterns_name_the_field_at_fault() {
    let vm = check_one(Pattern::Tuple(vec![
        tensor_pat(vec![bind(0, "n")], DataType::f32()),
        Pattern::Tuple(vec![Pattern::Object, Pattern::Func]),
    ]));
    let good = Value::tuple(vec![
        f32s(&[2]),
        Value::tuple(vec![Value::Str("anything".into()), Value::Func(0)]),
    ]);
    assert!(vm.call("main", &[good]).is_ok());

    let (_, _, found) = mismatch(vm.call("main", &[Value::tuple(vec![f32s(&[2])])]));
    assert_eq!(found, "a tuple of 1: expected 2 fields");

    let bad_inner = Value::tuple(vec![
        f32s(&[2]),
        Value::tuple(vec![Value::Int(1), Value::Int(2)]),
    ]);
    let (_, _, found) = mismatch(vm.call("main", &[bad_inner]));
    assert_eq!(
        found,
        "a tuple of 2 whose field 1 is a tuple of 2 whose field 1 is the integer 2"
    );

    let bad_dtype = Value::tuple(vec![
        tensor(DataType::i32(), &[2]),
        Value::tuple(vec![Value::Int(1), Value::Func(0)]),
    ]);
    let (_, _, found) = mismatch(vm.call("main", &[bad_dtype]));
    assert_eq!(
        found,
        "a tuple of 2 whose field 0 is an int32 tensor of shape (2,): dtype is int32, expected float32"
    );
    let (_, _, found) = mismatch(vm.call("main", &[f32s(&[2])]));
    assert_eq!(found, "a float32 tensor of shape (2,)");
}

#[test]
fn match_cast_copies_to_its_destination() {
    let vm = VirtualMachine::new(&exec(vec![func(
        "main",
        &["x"],
        2,
        0,
        vec![
            Instr::MatchCast {
                value: Arg::Reg(0),
                pattern: Pattern::Object,
                dst: Some(1),
                context: "lv".into(),
                expected: "R.Object".into(),
            },
            ret(1),
        ],
    )]));
    assert_eq!(vm.call("main", &[Value::Int(9)]), Ok(Value::Int(9)));
}

// --------------------------------------------------- shape heap computation

#[test]
fn make_shape_and_make_prim_compute_over_the_heap() {
    let vm = VirtualMachine::new(&exec(vec![func(
        "main",
        &["x"],
        6,
        2,
        vec![
            cast(
                0,
                tensor_pat(vec![bind(0, "n"), bind(1, "m")], DataType::f32()),
                "parameter `x` of `main`",
                "R.Tensor((n, m), dtype=\"float32\")",
            ),
            Instr::MakeShape {
                dims: vec![
                    SymExpr::Mul(slot(0), slot(1)),
                    SymExpr::FloorDiv(Box::new(SymExpr::Sub(slot(0), c(10))), c(4)),
                    SymExpr::FloorMod(Box::new(SymExpr::Sub(slot(0), c(10))), c(4)),
                ],
                dst: 1,
            },
            Instr::MakePrim {
                value: SymExpr::Max(slot(0), slot(1)),
                dtype: DataType::i64(),
                dst: 2,
            },
            Instr::MakePrim {
                value: SymExpr::Lt(slot(0), slot(1)),
                dtype: DataType::bool(),
                dst: 3,
            },
            Instr::MakePrim {
                value: SymExpr::Select(Box::new(SymExpr::Ge(slot(0), c(3))), c(1), c(-1)),
                dtype: DataType::f64(),
                dst: 4,
            },
            Instr::MakeTuple {
                fields: vec![Arg::Reg(1), Arg::Reg(2), Arg::Reg(3), Arg::Reg(4)],
                dst: 5,
            },
            ret(5),
        ],
    )]));
    let out = vm.call("main", &[f32s(&[3, 5])]).unwrap();
    assert_eq!(
        out,
        Value::tuple(vec![
            Value::shape(&[15, -2, 1]),
            Value::Int(5),
            Value::Bool(true),
            Value::Float(1.0),
        ])
    );
}

#[test]
fn shape_arithmetic_errors_are_clean() {
    let vm = VirtualMachine::new(&exec(vec![func(
        "main",
        &["x"],
        2,
        1,
        vec![
            cast(
                0,
                Pattern::Shape {
                    ndim: Some(1),
                    dims: Some(vec![bind(0, "n")]),
                },
                "parameter `x` of `main`",
                "R.Shape([n])",
            ),
            Instr::MakeShape {
                dims: vec![
                    SymExpr::FloorDiv(c(12), slot(0)),
                    SymExpr::Mul(slot(0), c(1 << 40)),
                ],
                dst: 1,
            },
            ret(1),
        ],
    )]));
    assert_eq!(
        vm.call("main", &[Value::shape(&[4])]),
        Ok(Value::shape(&[3, 4 << 40]))
    );
    let why = unsupported(vm.call("main", &[Value::shape(&[0])]));
    assert!(why.contains("division by zero"), "{why}");
    assert!(why.contains("`main` at instruction 1"), "{why}");
    let why = unsupported(vm.call("main", &[Value::shape(&[1 << 40])]));
    assert!(why.contains("overflow"), "{why}");
}

// ------------------------------------------------------ tuples, if, goto

#[test]
fn tuples_and_get_item() {
    let mut e = exec(vec![func(
        "main",
        &["x"],
        4,
        0,
        vec![
            Instr::MakeTuple {
                fields: vec![Arg::Reg(0), Arg::Const(0), Arg::Imm(7)],
                dst: 1,
            },
            Instr::GetItem {
                tuple: Arg::Reg(1),
                index: 1,
                dst: 2,
            },
            Instr::GetItem {
                tuple: Arg::Reg(1),
                index: 2,
                dst: 3,
            },
            Instr::MakeTuple {
                fields: vec![Arg::Reg(2), Arg::Reg(3)],
                dst: 1,
            },
            ret(1),
        ],
    )]);
    e.constants.push(Value::Str("hello".into()));
    let vm = VirtualMachine::new(&e);
    assert_eq!(
        vm.call("main", &[Value::Int(1)]),
        Ok(Value::tuple(vec![
            Value::Str("hello".into()),
            Value::Int(7)
        ]))
    );

    let get = |index| {
        VirtualMachine::new(&exec(vec![func(
            "main",
            &["t"],
            2,
            0,
            vec![
                Instr::GetItem {
                    tuple: Arg::Reg(0),
                    index,
                    dst: 1,
                },
                ret(1),
            ],
        )]))
    };
    let pair = Value::tuple(vec![Value::Int(1), Value::Int(2)]);
    assert_eq!(
        get(1).call("main", std::slice::from_ref(&pair)),
        Ok(Value::Int(2))
    );
    let (context, expected, found) = mismatch(get(2).call("main", &[pair]));
    assert_eq!(context, "tuple operand of instruction 0 in `main`");
    assert_eq!(expected, "a tuple of at least 3 fields");
    assert_eq!(found, "a tuple of 2");
    let (_, _, found) = mismatch(get(0).call("main", &[Value::Int(1)]));
    assert_eq!(found, "the integer 1");
}

/// `choose(c) = if c { 1 } else { 2 }`.
fn choose() -> VirtualMachine {
    VirtualMachine::new(&exec(vec![func(
        "choose",
        &["c"],
        2,
        0,
        vec![
            Instr::If {
                cond: Arg::Reg(0),
                else_target: 3,
            },
            Instr::Move {
                src: Arg::Imm(1),
                dst: 1,
            },
            Instr::Goto { target: 4 },
            Instr::Move {
                src: Arg::Imm(2),
                dst: 1,
            },
            ret(1),
        ],
    )]))
}

#[test]
fn if_and_goto_take_both_branches() {
    let vm = choose();
    let run = |c: Value| vm.call("choose", &[c]);
    assert_eq!(run(Value::Bool(true)), Ok(Value::Int(1)));
    assert_eq!(run(Value::Bool(false)), Ok(Value::Int(2)));
    assert_eq!(run(Value::Int(5)), Ok(Value::Int(1)));
    assert_eq!(run(Value::Int(0)), Ok(Value::Int(2)));
    assert_eq!(run(Tensor::scalar(true).into()), Ok(Value::Int(1)));
    assert_eq!(run(Tensor::scalar(false).into()), Ok(Value::Int(2)));

    let (context, _, found) = mismatch(run(Tensor::scalar(1.0f32).into()));
    assert_eq!(context, "condition of instruction 0 in `choose`");
    assert_eq!(found, "a float32 tensor of shape ()");
    let (_, _, found) = mismatch(run(Tensor::from_vec(&[1], vec![true]).unwrap().into()));
    assert_eq!(found, "a bool tensor of shape (1,)");
    assert!(run(Value::Float(1.0)).is_err());
}

// ----------------------------------------------------------------- calls

/// `sum(n) = n == 0 ? 0 : n + sum(n - 1)`, through the shape heap.
fn sum_function() -> VmFunction {
    func(
        "sum",
        &["n"],
        4,
        2,
        vec![
            cast(
                0,
                Pattern::Prim {
                    dtype: DataType::i64(),
                    value: Some(bind(0, "n")),
                },
                "parameter `n` of `sum`",
                "R.Prim(value=n)",
            ),
            Instr::MakePrim {
                value: SymExpr::Eq(slot(0), c(0)),
                dtype: DataType::bool(),
                dst: 1,
            },
            Instr::If {
                cond: Arg::Reg(1),
                else_target: 4,
            },
            Instr::Ret { value: Arg::Imm(0) },
            Instr::MakePrim {
                value: SymExpr::Sub(slot(0), c(1)),
                dtype: DataType::i64(),
                dst: 2,
            },
            Instr::Call {
                callee: Callee::Function(0),
                args: vec![Arg::Reg(2)],
                dst: 3,
            },
            cast(
                3,
                Pattern::Prim {
                    dtype: DataType::i64(),
                    value: Some(bind(1, "s")),
                },
                "result of `sum`",
                "R.Prim(value=s)",
            ),
            Instr::MakePrim {
                value: SymExpr::Add(slot(0), slot(1)),
                dtype: DataType::i64(),
                dst: 3,
            },
            ret(3),
        ],
    )
}

#[test]
fn recursion_works_and_hits_the_depth_limit_cleanly() {
    let vm = VirtualMachine::new(&exec(vec![sum_function()]));
    assert_eq!(vm.call("sum", &[Value::Int(0)]), Ok(Value::Int(0)));
    assert_eq!(vm.call("sum", &[Value::Int(100)]), Ok(Value::Int(5050)));
    // 998 nested calls fit in the default limit of 1000 frames.
    assert_eq!(vm.call("sum", &[Value::Int(998)]), Ok(Value::Int(498501)));
    let why = unsupported(vm.call("sum", &[Value::Int(100_000)]));
    assert!(why.contains("call depth limit of 1000 frames"), "{why}");
    assert!(why.contains("`sum`"), "{why}");

    let shallow = VirtualMachine::new(&exec(vec![sum_function()])).with_max_call_depth(10);
    assert_eq!(shallow.call("sum", &[Value::Int(9)]), Ok(Value::Int(45)));
    assert!(shallow.call("sum", &[Value::Int(10)]).is_err());
}

#[test]
fn calls_between_functions_check_the_argument_count() {
    let e = exec(vec![
        func(
            "main",
            &["a", "b"],
            3,
            0,
            vec![
                Instr::Call {
                    callee: Callee::Function(1),
                    args: vec![Arg::Reg(1), Arg::Reg(0)],
                    dst: 2,
                },
                ret(2),
            ],
        ),
        func(
            "swap",
            &["p", "q"],
            3,
            0,
            vec![
                Instr::MakeTuple {
                    fields: vec![Arg::Reg(0), Arg::Reg(1)],
                    dst: 2,
                },
                ret(2),
            ],
        ),
        func(
            "bad_caller",
            &[],
            1,
            0,
            vec![
                Instr::Call {
                    callee: Callee::Function(1),
                    args: vec![Arg::Imm(1)],
                    dst: 0,
                },
                ret(0),
            ],
        ),
    ]);
    let vm = VirtualMachine::new(&e);
    assert_eq!(
        vm.call("main", &[Value::Int(1), Value::Int(2)]),
        Ok(Value::tuple(vec![Value::Int(2), Value::Int(1)]))
    );
    assert_eq!(
        vm.call("main", &[Value::Int(1)]),
        Err(Error::ArgumentCount {
            function: "main".into(),
            expected: 2,
            found: 1
        })
    );
    assert_eq!(
        vm.call("bad_caller", &[]),
        Err(Error::ArgumentCount {
            function: "swap".into(),
            expected: 2,
            found: 1
        })
    );
    assert_eq!(
        vm.call("nope", &[]),
        Err(Error::UnknownFunction("nope".into()))
    );
}

#[test]
fn closures_call_the_function_in_a_register() {
    let mut e = exec(vec![
        func(
            "apply",
            &["f", "x"],
            3,
            0,
            vec![
                Instr::Call {
                    callee: Callee::Closure(0),
                    args: vec![Arg::Reg(1)],
                    dst: 2,
                },
                ret(2),
            ],
        ),
        func(
            "wrap",
            &["x"],
            2,
            0,
            vec![
                Instr::MakeTuple {
                    fields: vec![Arg::Reg(0)],
                    dst: 1,
                },
                ret(1),
            ],
        ),
        func(
            "main",
            &["x"],
            3,
            0,
            vec![
                Instr::Move {
                    src: Arg::Const(0),
                    dst: 1,
                },
                Instr::Call {
                    callee: Callee::Function(0),
                    args: vec![Arg::Reg(1), Arg::Reg(0)],
                    dst: 2,
                },
                ret(2),
            ],
        ),
    ]);
    e.constants.push(Value::Func(1));
    let vm = VirtualMachine::new(&e);
    let wrapped = Ok(Value::tuple(vec![Value::Int(4)]));
    assert_eq!(vm.call("main", &[Value::Int(4)]), wrapped);
    assert_eq!(vm.call("apply", &[Value::Func(1), Value::Int(4)]), wrapped);
    let (context, expected, found) = mismatch(vm.call("apply", &[Value::Int(1), Value::Int(4)]));
    assert_eq!(context, "callee of instruction 0 in `apply`");
    assert_eq!(expected, "R.Callable");
    assert_eq!(found, "the integer 1");
    // A function value from outside that names no function.
    let why = unsupported(vm.call("apply", &[Value::Func(42), Value::Int(4)]));
    assert!(why.contains("function 42 is out of range"), "{why}");
    // Arity is checked for closures too.
    assert_eq!(
        vm.call("apply", &[Value::Func(0), Value::Int(4)]),
        Err(Error::ArgumentCount {
            function: "apply".into(),
            expected: 2,
            found: 1
        })
    );
}

#[test]
fn a_closure_passes_its_captured_values_first() {
    // `pair(a, b) = (a, b)`; `main(x)` closes `pair` over `x` with the
    // builtin and calls the closure with 7.
    let e = exec(vec![
        func(
            "pair",
            &["a", "b"],
            3,
            0,
            vec![
                Instr::MakeTuple {
                    fields: vec![Arg::Reg(0), Arg::Reg(1)],
                    dst: 2,
                },
                ret(2),
            ],
        ),
        func(
            "main",
            &["x"],
            3,
            0,
            vec![
                Instr::Call {
                    callee: Callee::Packed(0),
                    args: vec![Arg::Const(0), Arg::Reg(0)],
                    dst: 1,
                },
                Instr::Call {
                    callee: Callee::Closure(1),
                    args: vec![Arg::Imm(7)],
                    dst: 2,
                },
                ret(2),
            ],
        ),
    ]);
    let mut e = e;
    e.packed.push(crate::packed::MAKE_CLOSURE.into());
    e.constants.push(Value::Func(0));
    let vm = VirtualMachine::new(&e);
    let got = vm.call("main", &[Value::Int(3)]);
    assert_eq!(got, Ok(Value::tuple(vec![Value::Int(3), Value::Int(7)])));
    // The builtin wants a function first.
    let e2 = crate::packed::call_packed(crate::packed::MAKE_CLOSURE, &[Value::Int(1)]);
    assert!(
        matches!(&e2, Err(Error::Packed { message, .. }) if message.contains("found the integer 1")),
        "{e2:?}"
    );
    // A closure value describes itself and serializes.
    let c = crate::packed::call_packed(
        crate::packed::MAKE_CLOSURE,
        &[Value::Func(0), Value::Int(3)],
    )
    .unwrap();
    assert_eq!(c.describe(), "a closure of 1 captured values");
    let mut with_const = e.clone();
    with_const.constants.push(c.clone());
    let back = crate::Executable::from_bytes(&with_const.to_bytes()).unwrap();
    assert_eq!(back.constants.last(), Some(&c));
}

// --------------------------------------------------------------- kernels

fn shape_kernel(args: &[Value], attrs: &KernelAttrs) -> Result<Value, String> {
    let t = args
        .first()
        .and_then(Value::as_tensor)
        .ok_or("expected a tensor")?;
    let scale = attrs.int("scale")?;
    let extra = attrs.ints("extra")?;
    let mut dims: Vec<i64> = t.shape().iter().map(|d| d * scale).collect();
    dims.extend(extra);
    Ok(Value::shape(&dims))
}

fn failing_kernel(_: &[Value], _: &KernelAttrs) -> Result<Value, String> {
    Err("index 7 is out of range for axis 0 of size 3".into())
}

fn test_kernels(op: &str) -> Option<Kernel> {
    match op {
        "test.scaled_shape" => Some(shape_kernel),
        "test.fail" => Some(failing_kernel),
        _ => None,
    }
}

fn kernel_exec(op: &str) -> Executable {
    Executable {
        functions: vec![func(
            "main",
            &["x"],
            2,
            1,
            vec![
                cast(
                    0,
                    tensor_pat(vec![bind(0, "n"), DimPattern::Any], DataType::f32()),
                    "parameter `x` of `main`",
                    "R.Tensor((n, _), dtype=\"float32\")",
                ),
                Instr::Call {
                    callee: Callee::Kernel(0),
                    args: vec![Arg::Reg(0)],
                    dst: 1,
                },
                ret(1),
            ],
        )],
        kernels: vec![KernelEntry {
            op: op.into(),
            attrs: vec![
                ("scale".into(), KernelAttr::Sym(SymExpr::Add(slot(0), c(1)))),
                (
                    "extra".into(),
                    KernelAttr::Array(vec![
                        KernelAttr::Int(7),
                        KernelAttr::Sym(SymExpr::Mul(slot(0), slot(0))),
                    ]),
                ),
            ],
        }],
        ..Executable::default()
    }
}

#[test]
fn kernels_get_evaluated_attributes() {
    let vm =
        VirtualMachine::new(&kernel_exec("test.scaled_shape")).with_kernel_resolver(test_kernels);
    // n = 2: scale = 3, extra = [7, 4].
    assert_eq!(
        vm.call("main", &[f32s(&[2, 5])]),
        Ok(Value::shape(&[6, 15, 7, 4]))
    );
}

#[test]
fn profiling_counts_each_kernels_calls_and_time() {
    let exec = kernel_exec("test.scaled_shape");
    let plain = VirtualMachine::new(&exec).with_kernel_resolver(test_kernels);
    plain.call("main", &[f32s(&[2, 5])]).unwrap();
    assert!(plain.profile().is_empty(), "profiling is off by default");
    let vm = VirtualMachine::new(&exec)
        .with_kernel_resolver(test_kernels)
        .with_profiling();
    for _ in 0..3 {
        vm.call("main", &[f32s(&[2, 5])]).unwrap();
    }
    let profile = vm.profile();
    assert_eq!(profile.len(), 1);
    assert_eq!(profile[0].name, "test.scaled_shape");
    assert_eq!(profile[0].calls, 3);
}

#[test]
fn kernel_errors_and_missing_kernels() {
    let vm = VirtualMachine::new(&kernel_exec("test.fail")).with_kernel_resolver(test_kernels);
    assert_eq!(
        vm.call("main", &[f32s(&[2, 5])]),
        Err(Error::Kernel {
            op: "test.fail".into(),
            message: "index 7 is out of range for axis 0 of size 3".into()
        })
    );
    let vm = VirtualMachine::new(&kernel_exec("relax.vm_tests_no_such_op"));
    assert_eq!(
        vm.call("main", &[f32s(&[2, 5])]),
        Err(Error::Unsupported(
            "no reference kernel for relax.vm_tests_no_such_op".into()
        ))
    );
}

// ------------------------------------------------------- host functions

fn packed_exec(names: &[&str], callee: Callee) -> Executable {
    Executable {
        functions: vec![func(
            "main",
            &["x"],
            3,
            1,
            vec![
                cast(
                    0,
                    tensor_pat(vec![bind(0, "n")], DataType::f32()),
                    "parameter `x` of `main`",
                    "R.Tensor((n,), dtype=\"float32\")",
                ),
                Instr::Call {
                    callee,
                    args: vec![Arg::Reg(0), Arg::Imm(4)],
                    dst: 1,
                },
                Instr::MakeShape {
                    dims: vec![SymExpr::Slot(0)],
                    dst: 2,
                },
                Instr::MakeTuple {
                    fields: vec![Arg::Reg(1), Arg::Reg(2)],
                    dst: 2,
                },
                ret(2),
            ],
        )],
        packed: names.iter().map(|n| n.to_string()).collect(),
        ..Executable::default()
    }
}

/// A host function returning a zero f32 tensor of shape `(x.shape[0], k)`.
fn make_n_by_k(extra_cols: i64) -> impl Fn(&[Value]) -> Result<Value, String> {
    move |args| {
        let n = args[0].as_tensor().ok_or("x must be a tensor")?.shape()[0];
        let k = args[1].as_int().ok_or("k must be an integer")?;
        Ok(f32s(&[n, k + extra_cols]))
    }
}

#[test]
fn packed_calls_reach_registered_host_functions() {
    register_packed("vm.tests.packed.ok", make_n_by_k(0));
    register_packed("vm.tests.packed.err", |_| Err("device lost".into()));
    let vm = VirtualMachine::new(&packed_exec(
        &[
            "vm.tests.packed.ok",
            "vm.tests.packed.err",
            "vm.tests.packed.missing",
        ],
        Callee::Packed(0),
    ));
    assert_eq!(
        vm.call("main", &[f32s(&[3])]),
        Ok(Value::tuple(vec![f32s(&[3, 4]), Value::shape(&[3])]))
    );
    let vm = VirtualMachine::new(&packed_exec(
        &["vm.tests.packed.ok", "vm.tests.packed.err"],
        Callee::Packed(1),
    ));
    assert_eq!(
        vm.call("main", &[f32s(&[3])]),
        Err(Error::Packed {
            name: "vm.tests.packed.err".into(),
            message: "device lost".into()
        })
    );
    let vm = VirtualMachine::new(&packed_exec(
        &["vm.tests.packed.missing"],
        Callee::Packed(0),
    ));
    match vm.call("main", &[f32s(&[3])]) {
        Err(Error::Packed { name, .. }) => assert_eq!(name, "vm.tests.packed.missing"),
        other => panic!("expected a Packed error, got {other:?}"),
    }
}

#[test]
fn dps_packed_results_are_checked_against_the_outputs() {
    register_packed("vm.tests.dps.good", make_n_by_k(0));
    register_packed("vm.tests.dps.bad", make_n_by_k(1));
    let out = |dims: Vec<DimPattern>| Callee::DpsPacked {
        name: 0,
        outputs: vec![tensor_pat(dims, DataType::f32())],
    };
    let vm = VirtualMachine::new(&packed_exec(
        &["vm.tests.dps.good"],
        out(vec![var(0, "n"), lit(4)]),
    ));
    assert_eq!(
        vm.call("main", &[f32s(&[3])]),
        Ok(Value::tuple(vec![f32s(&[3, 4]), Value::shape(&[3])]))
    );

    let vm = VirtualMachine::new(&packed_exec(
        &["vm.tests.dps.bad"],
        out(vec![var(0, "n"), lit(4)]),
    ));
    let (context, expected, found) = mismatch(vm.call("main", &[f32s(&[3])]));
    assert_eq!(context, "result of host function `vm.tests.dps.bad`");
    assert_eq!(expected, "R.Tensor((n, 4), dtype=\"float32\")");
    assert_eq!(
        found,
        "a float32 tensor of shape (3, 5): dimension 1 is 5, expected 4"
    );

    // An output may bind a new symbolic dim that later code reads.
    let mut e = packed_exec(&["vm.tests.dps.bad"], out(vec![var(0, "n"), bind(1, "m")]));
    e.functions[0].num_slots = 2;
    e.functions[0].instrs[2] = Instr::MakeShape {
        dims: vec![SymExpr::Slot(1)],
        dst: 2,
    };
    let vm = VirtualMachine::new(&e);
    assert_eq!(
        vm.call("main", &[f32s(&[3])]),
        Ok(Value::tuple(vec![f32s(&[3, 5]), Value::shape(&[5])]))
    );
}

#[test]
fn dps_packed_with_several_outputs_expects_a_tuple() {
    register_packed("vm.tests.dps.pair", |args| {
        Ok(Value::tuple(vec![args[0].clone(), Value::shape(&[1, 2])]))
    });
    register_packed("vm.tests.dps.single", |args| Ok(args[0].clone()));
    let outputs = vec![
        tensor_pat(vec![var(0, "n")], DataType::f32()),
        Pattern::Shape {
            ndim: Some(2),
            dims: None,
        },
    ];
    let callee = Callee::DpsPacked {
        name: 0,
        outputs: outputs.clone(),
    };
    let vm = VirtualMachine::new(&packed_exec(&["vm.tests.dps.pair"], callee.clone()));
    assert_eq!(
        vm.call("main", &[f32s(&[3])]),
        Ok(Value::tuple(vec![
            Value::tuple(vec![f32s(&[3]), Value::shape(&[1, 2])]),
            Value::shape(&[3])
        ]))
    );
    let vm = VirtualMachine::new(&packed_exec(&["vm.tests.dps.single"], callee));
    let (_, expected, found) = mismatch(vm.call("main", &[f32s(&[3])]));
    assert_eq!(
        expected,
        "R.Tuple(R.Tensor((n,), dtype=\"float32\"), R.Shape(ndim=2))"
    );
    assert_eq!(
        found,
        "a float32 tensor of shape (3,): expected a tuple of 2 outputs"
    );
    let three = Callee::DpsPacked {
        name: 0,
        outputs: vec![outputs[0].clone(), outputs[1].clone(), Pattern::Object],
    };
    let vm = VirtualMachine::new(&packed_exec(&["vm.tests.dps.pair"], three));
    let (_, _, found) = mismatch(vm.call("main", &[f32s(&[3])]));
    assert_eq!(found, "a tuple of 2: expected 3 fields");
}

// ---------------------------------------------------- invalid executables

/// `main(x)` with one extra instruction before `ret x`; two registers, one
/// slot, one constant, one kernel entry, one host function.
fn with_instr(instr: Instr) -> Executable {
    Executable {
        functions: vec![func("main", &["x"], 2, 1, vec![instr, ret(0)])],
        kernels: vec![KernelEntry {
            op: "test.scaled_shape".into(),
            attrs: vec![],
        }],
        packed: vec!["vm.tests.invalid".into()],
        constants: vec![Value::Int(0)],
        natives: vec!["test.native_kernel".into()],
        library: None,
    }
}

fn call_to(callee: Callee) -> Instr {
    Instr::Call {
        callee,
        args: vec![],
        dst: 1,
    }
}

fn invalid_executables() -> Vec<(&'static str, Executable)> {
    let mv = |src, dst| Instr::Move { src, dst };
    let mut cases = vec![
        ("register read", with_instr(mv(Arg::Reg(2), 1))),
        ("register written", with_instr(mv(Arg::Imm(0), 2))),
        ("constant", with_instr(mv(Arg::Const(1), 1))),
        ("function", with_instr(call_to(Callee::Function(1)))),
        ("kernel entry", with_instr(call_to(Callee::Kernel(1)))),
        ("host function", with_instr(call_to(Callee::Packed(1)))),
        (
            "dps host function",
            with_instr(call_to(Callee::DpsPacked {
                name: 1,
                outputs: vec![],
            })),
        ),
        ("closure register", with_instr(call_to(Callee::Closure(9)))),
        (
            "call argument",
            with_instr(Instr::Call {
                callee: Callee::Function(0),
                args: vec![Arg::Const(3)],
                dst: 1,
            }),
        ),
        (
            "if target",
            with_instr(Instr::If {
                cond: Arg::Imm(0),
                else_target: 2,
            }),
        ),
        ("goto target", with_instr(Instr::Goto { target: 99 })),
        (
            "bind slot",
            with_instr(cast(
                0,
                tensor_pat(vec![bind(1, "n")], DataType::f32()),
                "x",
                "T",
            )),
        ),
        (
            "check slot",
            with_instr(cast(
                0,
                Pattern::Tuple(vec![Pattern::Prim {
                    dtype: DataType::i64(),
                    value: Some(var(5, "n")),
                }]),
                "x",
                "T",
            )),
        ),
        (
            "dps output slot",
            with_instr(call_to(Callee::DpsPacked {
                name: 0,
                outputs: vec![Pattern::Shape {
                    ndim: None,
                    dims: Some(vec![bind(3, "m")]),
                }],
            })),
        ),
        (
            "shape slot",
            with_instr(Instr::MakeShape {
                dims: vec![SymExpr::Add(c(1), slot(1))],
                dst: 1,
            }),
        ),
        (
            "prim slot",
            with_instr(Instr::MakePrim {
                value: SymExpr::Slot(1),
                dtype: DataType::i64(),
                dst: 1,
            }),
        ),
        (
            "prim dtype",
            with_instr(Instr::MakePrim {
                value: SymExpr::Const(1),
                dtype: DataType::handle(),
                dst: 1,
            }),
        ),
        (
            "match-cast destination",
            with_instr(Instr::MatchCast {
                value: Arg::Reg(0),
                pattern: Pattern::Object,
                dst: Some(2),
                context: "x".into(),
                expected: "R.Object".into(),
            }),
        ),
        (
            "get-item destination",
            with_instr(Instr::GetItem {
                tuple: Arg::Reg(0),
                index: 0,
                dst: 7,
            }),
        ),
        (
            "tuple field",
            with_instr(Instr::MakeTuple {
                fields: vec![Arg::Reg(0), Arg::Const(8)],
                dst: 1,
            }),
        ),
        ("ret operand", with_instr(Instr::Ret { value: Arg::Reg(3) })),
        (
            "rank and dims disagree",
            with_instr(cast(
                0,
                Pattern::Tensor {
                    ndim: Some(3),
                    dtype: None,
                    dims: Some(vec![DimPattern::Any]),
                },
                "x",
                "T",
            )),
        ),
    ];

    let mut attr_slot = with_instr(call_to(Callee::Kernel(0)));
    attr_slot.kernels[0].attrs = vec![(
        "axis".into(),
        KernelAttr::Array(vec![KernelAttr::Sym(SymExpr::Slot(4))]),
    )];
    cases.push(("kernel attribute slot", attr_slot));

    let mut func_const = with_instr(mv(Arg::Imm(0), 1));
    func_const.constants.push(Value::Func(3));
    cases.push(("function constant", func_const));

    let mut too_many_params = with_instr(mv(Arg::Imm(0), 1));
    too_many_params.functions[0].params = vec!["a".into(), "b".into(), "c".into()];
    cases.push(("parameters", too_many_params));

    let mut deep = SymExpr::Const(1);
    for _ in 0..=crate::serialize::MAX_NESTING {
        deep = SymExpr::Not(Box::new(deep));
    }
    cases.push((
        "nesting",
        with_instr(Instr::MakeShape {
            dims: vec![deep],
            dst: 1,
        }),
    ));
    cases
}

#[test]
fn every_invalid_index_is_rejected_when_the_vm_is_built() {
    for (what, e) in invalid_executables() {
        let err = e.validate().expect_err(what);
        let vm = VirtualMachine::new(&e);
        let at_call = vm.call("main", &[Value::Int(0)]).expect_err(what);
        assert!(
            matches!(err, Error::InvalidExecutable(_)),
            "{what}: {err:?}"
        );
        assert_eq!(at_call, err, "{what}");
    }
    // The well-formed variant validates and runs.
    let ok = with_instr(Instr::Move {
        src: Arg::Const(0),
        dst: 1,
    });
    assert_eq!(ok.validate(), Ok(()));
    assert_eq!(
        VirtualMachine::new(&ok).call("main", &[Value::Int(5)]),
        Ok(Value::Int(5))
    );
}

#[test]
fn the_interpreter_checks_indices_even_without_validation() {
    register_packed("vm.tests.invalid", |_| Ok(Value::Int(0)));
    for (what, e) in invalid_executables() {
        let mut vm = VirtualMachine::new(&e).with_kernel_resolver(test_kernels);
        // Skip the load-time check: every bad index must still be caught
        // where it is used (or, for a target never jumped to, be harmless).
        vm.valid = Ok(());
        let result = vm.call("main", &[Value::Int(0)]);
        let harmless = matches!(
            what,
            "function constant" | "rank and dims disagree" | "nesting"
        );
        if !harmless {
            assert!(result.is_err(), "{what}: {result:?}");
        }
    }
}

#[test]
fn runtime_faults_are_errors() {
    // A register read before it is written.
    let e = exec(vec![func("main", &[], 2, 0, vec![ret(1)])]);
    let why = unsupported(VirtualMachine::new(&e).call("main", &[]));
    assert!(
        why.contains("register 1 is read before it is written"),
        "{why}"
    );
    // A slot read before it is bound.
    let e = exec(vec![func(
        "main",
        &[],
        1,
        1,
        vec![
            Instr::MakeShape {
                dims: vec![SymExpr::Slot(0)],
                dst: 0,
            },
            ret(0),
        ],
    )]);
    let why = unsupported(VirtualMachine::new(&e).call("main", &[]));
    assert!(why.contains("slot 0 is read before it is bound"), "{why}");
    // Control running off the end, including an empty function.
    for instrs in [
        vec![],
        vec![Instr::Move {
            src: Arg::Imm(1),
            dst: 0,
        }],
    ] {
        let e = exec(vec![func("main", &[], 1, 0, instrs)]);
        let why = unsupported(VirtualMachine::new(&e).call("main", &[]));
        assert!(why.contains("past the end"), "{why}");
    }
    // An infinite loop stops at the step limit.
    let e = exec(vec![func(
        "main",
        &[],
        1,
        0,
        vec![Instr::Goto { target: 0 }],
    )]);
    let why = unsupported(
        VirtualMachine::new(&e)
            .with_step_limit(1000)
            .call("main", &[]),
    );
    assert!(why.contains("step limit of 1000 instructions"), "{why}");
}

#[test]
fn huge_register_and_slot_counts_are_refused_not_allocated() {
    let big = |num_regs: u32, num_slots: u32, dst: u32| {
        exec(vec![func(
            "main",
            &["x"],
            num_regs,
            num_slots,
            vec![
                Instr::Move {
                    src: Arg::Reg(0),
                    dst,
                },
                Instr::Ret {
                    value: Arg::Reg(dst),
                },
            ],
        )])
    };
    // Registers are allocated as they are written: a large declared file
    // within the limit costs only what is used.
    let ok = big(1 << 21, 1 << 20, (1 << 21) - 1);
    assert_eq!(
        VirtualMachine::new(&ok).call("main", &[Value::Int(3)]),
        Ok(Value::Int(3))
    );
    let huge = big(u32::MAX, 0, u32::MAX - 1);
    let why = unsupported(VirtualMachine::new(&huge).call("main", &[Value::Int(3)]));
    assert!(why.contains("more than the limit"), "{why}");
    let huge_heap = big(2, u32::MAX, 1);
    assert!(VirtualMachine::new(&huge_heap)
        .call("main", &[Value::Int(3)])
        .is_err());
    // Deep recursion of a big frame stops at the total, not at memory.
    let mut rec = exec(vec![sum_function()]);
    rec.functions[0].num_regs = 1 << 16;
    let why = unsupported(VirtualMachine::new(&rec).call("sum", &[Value::Int(500)]));
    assert!(why.contains("more than the limit"), "{why}");
}

// ------------------------------------------------------------- threading

#[test]
fn one_vm_serves_four_threads_at_once() {
    let mut e = exec(vec![sum_function()]);
    e.functions.extend(two_params(var(0, "n")).functions);
    let vm = VirtualMachine::new(&e);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..4i64)
            .map(|t| {
                let vm = &vm;
                s.spawn(move || {
                    for round in 0..25 {
                        let n = 10 * t + round;
                        assert_eq!(
                            vm.call("sum", &[Value::Int(n)]),
                            Ok(Value::Int(n * (n + 1) / 2))
                        );
                        let out = vm.call("main", &[f32s(&[n, 784]), f32s(&[n, 10])]);
                        assert_eq!(out, Ok(Value::shape(&[n, 2 * n])));
                        let (_, _, found) =
                            mismatch(vm.call("main", &[f32s(&[n, 784]), f32s(&[n + 1, 10])]));
                        assert!(found.contains(&format!("expected n = {n} ")), "{found}");
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    });
}

// ------------------------------------------------------- native kernels

/// A library with one kernel, `add_one(A: (n,), B: (n,), n)`: B = A + 1.
struct AddOneLibrary;

struct AddOne;

impl crate::native::NativeKernel for AddOne {
    fn call(
        &self,
        inputs: &[&Tensor],
        outputs: &mut [Tensor],
        scalars: &[i64],
    ) -> Result<(), String> {
        let a = inputs[0].as_slice::<f32>().map_err(|e| e.to_string())?;
        assert_eq!(scalars, &[a.len() as i64], "the scalar parameter is n");
        let out = outputs[0].bytes_mut().ok_or("shared output")?;
        for (i, v) in a.iter().enumerate() {
            out[i * 4..i * 4 + 4].copy_from_slice(&(v + 1.0).to_le_bytes());
        }
        Ok(())
    }
}

/// `add_one_inplace(A: (n,), n)`: A += 1, in place; remembers where A was.
struct AddOneInPlace;

std::thread_local! {
    /// Per test thread: the tests that run this kernel run in parallel, and
    /// the VM calls a kernel on the calling thread.
    static IN_PLACE_AT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl crate::native::NativeKernel for AddOneInPlace {
    fn call(&self, inputs: &[&Tensor], outputs: &mut [Tensor], _: &[i64]) -> Result<(), String> {
        assert!(inputs.is_empty(), "A is written, so it is passed last");
        let a = outputs[0].bytes_mut().ok_or("shared output")?;
        IN_PLACE_AT.with(|at| at.set(a.as_ptr() as usize));
        for v in a.chunks_exact_mut(4) {
            let x = f32::from_le_bytes(v.try_into().unwrap()) + 1.0;
            v.copy_from_slice(&x.to_le_bytes());
        }
        Ok(())
    }
}

impl crate::native::NativeLibrary for AddOneLibrary {
    fn lookup(&self, symbol: &str) -> Option<std::sync::Arc<dyn crate::native::NativeKernel>> {
        match symbol {
            "add_one" => Some(std::sync::Arc::new(AddOne) as _),
            "add_one_inplace" => Some(std::sync::Arc::new(AddOneInPlace) as _),
            _ => None,
        }
    }
    fn describe(&self) -> String {
        "the test library".into()
    }
}

fn native_exec() -> Executable {
    let n = || DimPattern::Check {
        expr: SymExpr::Slot(0),
        text: "n".into(),
    };
    let instrs = vec![
        Instr::MatchCast {
            value: Arg::Reg(0),
            pattern: Pattern::Tensor {
                ndim: Some(1),
                dtype: Some(DataType::f32()),
                dims: Some(vec![DimPattern::Bind {
                    slot: 0,
                    name: "n".into(),
                }]),
            },
            dst: None,
            context: "parameter `x` of `main`".into(),
            expected: "R.Tensor((n,), dtype=\"float32\")".into(),
        },
        Instr::Call {
            callee: Callee::Native {
                symbol: 0,
                outputs: vec![Pattern::Tensor {
                    ndim: Some(1),
                    dtype: Some(DataType::f32()),
                    dims: Some(vec![n()]),
                }],
                scalars: vec![SymExpr::Slot(0)],
                inplace_indices: vec![],
                moved: vec![],
            },
            args: vec![Arg::Reg(0)],
            dst: 1,
        },
        ret(1),
    ];
    Executable {
        natives: vec!["add_one".into()],
        ..exec(vec![func("main", &["x"], 2, 1, instrs)])
    }
}

#[test]
fn native_kernels_get_allocated_outputs_and_scalar_params() {
    let e = native_exec().with_library(std::sync::Arc::new(AddOneLibrary));
    let x = Tensor::from_vec(&[3], vec![1.0f32, 2.0, 3.0]).unwrap();
    let out = VirtualMachine::new(&e).call("main", &[x.into()]).unwrap();
    assert_eq!(
        out.as_tensor().unwrap().to_vec::<f32>().unwrap(),
        vec![2.0, 3.0, 4.0]
    );
    // Bytes carry the symbols but not the library.
    let back = Executable::from_bytes(&e.to_bytes()).unwrap();
    assert_eq!(back.natives, vec!["add_one".to_string()]);
    let err = VirtualMachine::new(&back).call(
        "main",
        &[Tensor::from_vec(&[1], vec![0.0f32]).unwrap().into()],
    );
    assert!(
        matches!(&err, Err(Error::Unsupported(m)) if m.contains("with_library")),
        "{err:?}"
    );
}

/// `main(x)`: `y = add_one(x)`, then `z = add_one_inplace(y)` in place
/// (moving `y` out of its register when `moved`), returning `(y, z)` when
/// `keep_y`, else `z`; with `on_param`, `z = add_one_inplace(x)` instead.
fn inplace_exec(moved: bool, keep_y: bool, on_param: bool) -> Executable {
    let mut e = native_exec();
    let instrs = &mut e.functions[0].instrs;
    instrs.pop();
    instrs.push(Instr::Call {
        callee: Callee::Native {
            symbol: 1,
            outputs: vec![],
            scalars: vec![SymExpr::Slot(0)],
            inplace_indices: vec![0],
            moved: if moved { vec![0] } else { vec![] },
        },
        args: vec![Arg::Reg(if on_param { 0 } else { 1 })],
        dst: 2,
    });
    if keep_y {
        instrs.push(Instr::MakeTuple {
            fields: vec![Arg::Reg(1), Arg::Reg(2)],
            dst: 3,
        });
        instrs.push(ret(3));
    } else {
        instrs.push(ret(2));
    }
    e.functions[0].num_regs = 4;
    e.natives.push("add_one_inplace".into());
    e.with_library(std::sync::Arc::new(AddOneLibrary))
}

fn values_f32(v: &Value) -> Vec<f32> {
    v.as_tensor().unwrap().to_vec::<f32>().unwrap()
}

#[test]
fn native_inplace_writes_a_moved_last_reference_without_copying() {
    let e = inplace_exec(true, false, false);
    let vm = VirtualMachine::new(&e);
    let x = Tensor::from_vec(&[3], vec![1.0f32, 2.0, 3.0]).unwrap();
    let z = vm.call("main", &[x.clone().into()]).unwrap();
    assert_eq!(values_f32(&z), vec![3.0, 4.0, 5.0]);
    assert_eq!(x.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0]);
    // The kernel wrote `y`'s own buffer, which is the result.
    let at = IN_PLACE_AT.with(|at| at.get());
    assert_eq!(z.as_tensor().unwrap().as_bytes().as_ptr() as usize, at);
    // Bytes keep the in-place call.
    let back = Executable::from_bytes(&e.to_bytes()).unwrap();
    assert_eq!(back.functions, e.functions);
}

#[test]
fn native_inplace_copies_what_someone_else_holds() {
    let x = || Tensor::from_vec(&[3], vec![1.0f32, 2.0, 3.0]).unwrap();
    // `y` is still read afterwards: the kernel writes a copy.
    for moved in [false, true] {
        let e = inplace_exec(moved, true, false);
        if moved {
            // A moved register that is read later is the compiler's bug;
            // the VM reports it instead of reading garbage.
            let err = VirtualMachine::new(&e).call("main", &[x().into()]);
            assert!(
                matches!(&err, Err(Error::InvalidExecutable(m)) if m.contains("read before it is written")),
                "{err:?}"
            );
            continue;
        }
        let out = VirtualMachine::new(&e).call("main", &[x().into()]).unwrap();
        let fields = out.as_tuple().unwrap();
        assert_eq!(values_f32(&fields[0]), vec![2.0, 3.0, 4.0]);
        assert_eq!(values_f32(&fields[1]), vec![3.0, 4.0, 5.0]);
    }
    // The caller's own input, moved or not: never written.
    for moved in [false, true] {
        let e = inplace_exec(moved, false, true);
        let input = x();
        let z = VirtualMachine::new(&e)
            .call("main", &[input.clone().into()])
            .unwrap();
        assert_eq!(values_f32(&z), vec![2.0, 3.0, 4.0]);
        assert_eq!(input.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0]);
        assert!(!z.as_tensor().unwrap().shares_buffer(&input));
    }
}

/// An edit of a native call's inplace indices, moved arguments and outputs.
type InplaceEdit<'a> = &'a dyn Fn(&mut Vec<i32>, &mut Vec<u32>, &mut Vec<Pattern>);

#[test]
fn native_inplace_indices_are_validated() {
    let bad = |edit: InplaceEdit<'_>| {
        let mut e = inplace_exec(true, false, false);
        if let Instr::Call {
            callee:
                Callee::Native {
                    inplace_indices,
                    moved,
                    outputs,
                    ..
                },
            ..
        } = &mut e.functions[0].instrs[2]
        {
            edit(inplace_indices, moved, outputs);
        }
        e.validate().unwrap_err().to_string()
    };
    let m = bad(&|i, _, _| *i = vec![1]);
    assert!(
        m.contains("inplace index 0 is 1, not -1 or an argument of the 1"),
        "{m}"
    );
    let m = bad(&|i, _, _| *i = vec![0, 0]);
    assert!(
        m.contains("has 0 inplace indices of -1 but 0 outputs") || m.contains("repeats argument 0"),
        "{m}"
    );
    let m = bad(&|i, _, _| *i = vec![0, -1]);
    assert!(
        m.contains("1 inplace indices of -1 but 0 outputs to allocate"),
        "{m}"
    );
    let m = bad(&|_, mv, _| *mv = vec![3]);
    assert!(
        m.contains("moved argument 3 is not an argument held in a register"),
        "{m}"
    );
    let m = bad(&|i, mv, _| {
        i.clear();
        mv.push(0);
    });
    assert!(
        m.contains("without in-place outputs moves arguments"),
        "{m}"
    );
}

#[test]
fn native_outputs_must_be_allocatable() {
    let mut e = native_exec();
    if let Instr::Call {
        callee: Callee::Native { outputs, .. },
        ..
    } = &mut e.functions[0].instrs[1]
    {
        outputs[0] = Pattern::Tensor {
            ndim: Some(1),
            dtype: None,
            dims: None,
        };
    }
    let err = e.validate().unwrap_err();
    assert!(
        err.to_string()
            .contains("not a tensor of known dtype and dims"),
        "{err}"
    );
}
