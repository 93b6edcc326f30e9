//! Tests of the loop-level text format: printer snapshots, parser errors,
//! and the interpreter on PrimFuncs written as TVMScript.

use crate::ir::module::{BaseFunc, IRModule};
use crate::ir::prim_expr::{PrimExpr, TirVar};
use crate::ir::structural_equal::{structural_equal_report, structural_hash};
use crate::ir::{AttrValue, Attrs};
use crate::parser::parse_module;
use crate::tir::interp::run;
use crate::tir::{
    Block, Buffer, BufferRegion, ForKind, IterKind, IterVar, PrimFunc, PrimFuncParam, Stmt,
};
use relax_runtime::{DataType, Tensor};

fn module(text: &str) -> IRModule {
    parse_module(text).unwrap_or_else(|e| panic!("{e:?}\n{text}"))
}

/// The PrimFunc `name` of a module.
fn func(m: &IRModule, name: &str) -> PrimFunc {
    m.functions()
        .find_map(|(gv, f)| match f {
            BaseFunc::Prim(p) if gv.name_hint() == name => Some(p.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no prim_func {name}"))
}

/// A module of one `@T.prim_func def f(params): body` (body indented by 8).
fn prim(params: &str, body: &str) -> PrimFunc {
    let text =
        format!("@I.ir_module\nclass Module:\n    @T.prim_func\n    def f({params}):\n{body}");
    func(&module(&text), "f")
}

fn errors(text: &str) -> Vec<String> {
    match parse_module(text) {
        Ok(_) => panic!("expected errors:\n{text}"),
        Err(es) => es.into_iter().map(|e| e.message).collect(),
    }
}

fn f32t(shape: &[i64], data: Vec<f32>) -> Tensor {
    Tensor::from_vec(shape, data).unwrap()
}

fn zeros(shape: &[i64]) -> Tensor {
    Tensor::zeros(DataType::f32(), shape).unwrap()
}

fn close(got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!(
            (g - w).abs() <= 1e-6 * w.abs().max(1.0),
            "{got:?} vs {want:?}"
        );
    }
}

// ---- printer snapshots ----------------------------------------------------

#[test]
fn prints_every_statement_form() {
    let f32 = DataType::f32();
    let n = TirVar::new("n");
    let a = Buffer::new("A", vec![n.to_expr(), 8.into()], f32);
    let b = Buffer::new("B", vec![n.to_expr()], f32);
    let tmp = Buffer::new("tmp", vec![8.into()], DataType::i32());
    let (i, j) = (TirVar::new("i"), TirVar::new("j"));
    let vi = TirVar::new("vi");
    let x = TirVar::with_dtype("x", f32);
    let block = Block {
        name: "B".into(),
        iter_vars: vec![IterVar {
            var: vi.clone(),
            min: PrimExpr::int(1),
            extent: n.to_expr() - 1,
            kind: IterKind::Spatial,
        }],
        iter_values: vec![i.to_expr()],
        reads: vec![BufferRegion {
            buffer: a.clone(),
            region: vec![
                (vi.to_expr(), PrimExpr::int(1)),
                (PrimExpr::int(0), PrimExpr::int(8)),
            ],
        }],
        writes: vec![BufferRegion {
            buffer: b.clone(),
            region: vec![(vi.to_expr(), PrimExpr::int(1))],
        }],
        init: None,
        body: Box::new(Stmt::LetStmt {
            var: x.clone(),
            value: PrimExpr::load(&a, vec![vi.to_expr(), 0.into()]),
            body: Box::new(Stmt::IfThenElse {
                cond: x.to_expr().gt(PrimExpr::float(f32, 0.0)),
                then_case: Box::new(Stmt::BufferStore {
                    buffer: b.clone(),
                    value: x.to_expr().floordiv(PrimExpr::float(f32, 2.0)),
                    indices: vec![vi.to_expr()],
                }),
                else_case: Some(Box::new(Stmt::BufferStore {
                    buffer: b.clone(),
                    value: PrimExpr::call(f32, "exp", vec![x.to_expr()]),
                    indices: vec![vi.to_expr()],
                })),
            }),
        }),
        alloc_buffers: vec![],
        annotations: Attrs::new(),
    };
    let body = Stmt::Allocate {
        buffer: tmp.clone(),
        body: Box::new(Stmt::Seq(vec![
            Stmt::For {
                loop_var: j.clone(),
                min: 0.into(),
                extent: 8.into(),
                kind: ForKind::Vectorized,
                body: Box::new(Stmt::BufferStore {
                    buffer: tmp.clone(),
                    value: PrimExpr::int(3).cast(DataType::i32()),
                    indices: vec![j.to_expr()],
                }),
                annotations: Attrs::new(),
            },
            Stmt::For {
                loop_var: i.clone(),
                min: 1.into(),
                extent: n.to_expr() - 1,
                kind: ForKind::Parallel,
                body: Box::new(Stmt::Block(Box::new(block))),
                annotations: Attrs::new(),
            },
            Stmt::Evaluate(PrimExpr::load(&tmp, vec![0.into()])),
        ])),
    };
    let f = PrimFunc::new(
        vec![PrimFuncParam::Buffer(a), PrimFuncParam::Buffer(b)],
        body,
    );
    let m = IRModule::from_functions([(crate::ir::expr::GlobalVar::new("k"), BaseFunc::Prim(f))]);
    let text = m.to_string();
    assert!(
        text.contains("\nn = TypeVar(\"n\")\n@I.ir_module"),
        "{text}"
    );
    let want = r#"    @T.prim_func(private=True, s_tir=True)
    def k(A: T.Buffer((n, 8), "float32"), B: T.Buffer((n,), "float32")):
        tmp = T.alloc_buffer((8,), "int32")
        for j in T.vectorized(8):
            tmp[j] = T.Cast("int32", 3)
        for i in T.parallel(1, 1 + (n - 1)):
            with T.sblock("B"):
                vi = T.axis.spatial((1, 1 + (n - 1)), i)
                T.reads(A[vi, 0:8])
                T.writes(B[vi])
                x: T.float32 = A[vi, 0]
                if x > T.float32(0.0):
                    B[vi] = x / T.float32(2.0)
                else:
                    B[vi] = T.exp(x)
        T.evaluate(tmp[0])"#;
    assert!(text.ends_with(want), "{text}");
    // It reads back as TVM's parser reads it: a function with blocks gets
    // a root block, which owns the buffers allocated at its top level.
    let m2 = module(&text);
    let f = func(&m, "k");
    let Stmt::Allocate { buffer, body } = &f.body else {
        panic!("the body starts with its allocation");
    };
    let rooted = PrimFunc::new(
        f.params.clone(),
        Stmt::Block(Box::new(Block {
            name: "root".into(),
            iter_vars: vec![],
            iter_values: vec![],
            reads: vec![],
            writes: vec![],
            init: None,
            body: body.clone(),
            alloc_buffers: vec![buffer.clone()],
            annotations: Attrs::new(),
        })),
    );
    let want =
        IRModule::from_functions([(crate::ir::expr::GlobalVar::new("k"), BaseFunc::Prim(rooted))]);
    structural_equal_report(&want, &m2).unwrap();
    assert_eq!(structural_hash(&want), structural_hash(&m2));
    // And that form prints and reads back as itself.
    let text2 = m2.to_string();
    assert!(text2.contains("with T.sblock(\"root\"):"), "{text2}");
    assert_eq!(module(&text2).to_string(), text2);
}

/// TVM's loop and block annotations (`T.serial(…, annotations={…})`,
/// `T.block_attr({…})`) print, parse back, and take part in structural
/// equality.
#[test]
fn loop_and_block_annotations_round_trip() {
    let f = prim(
        "A: T.Buffer((4, 6), \"float32\"), B: T.Buffer((4, 6), \"float32\")",
        r#"        for i in T.serial(4, annotations={"pragma_auto_unroll_max_step": 16, "pragma_unroll_explicit": 1}):
            for j in T.parallel(1, 6, annotations={"hint": "x"}):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, j])
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    T.block_attr({"meta_schedule.tiling_structure": "SSRSRS", "flags": [1, 2], "on": True})
                    B[vi, vj] = A[vi, vj]
"#,
    );
    let Stmt::Block(root) = &f.body else {
        panic!("{:?}", f.body)
    };
    let Stmt::For {
        annotations, body, ..
    } = &*root.body
    else {
        panic!("{:?}", root.body)
    };
    assert_eq!(
        annotations.get("pragma_auto_unroll_max_step"),
        Some(&AttrValue::Int(16))
    );
    let Stmt::For {
        annotations: inner,
        body,
        ..
    } = &**body
    else {
        panic!("{body:?}")
    };
    assert_eq!(inner.get("hint"), Some(&AttrValue::Str("x".into())));
    let Stmt::Block(b) = &**body else {
        panic!("{body:?}")
    };
    let keys: Vec<&str> = b.annotations.iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["meta_schedule.tiling_structure", "flags", "on"]);

    let m = IRModule::from_functions([(
        crate::ir::expr::GlobalVar::new("f"),
        BaseFunc::Prim(f.clone()),
    )]);
    let text = m.to_string();
    for line in [
        r#"for i in T.serial(4, annotations={"pragma_auto_unroll_max_step": 16, "pragma_unroll_explicit": 1}):"#,
        r#"for j in T.parallel(1, 6, annotations={"hint": "x"}):"#,
        r#"T.sblock_attr({"meta_schedule.tiling_structure": "SSRSRS", "flags": [1, 2], "on": True})"#,
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }
    let back = module(&text);
    structural_equal_report(&m, &back).unwrap();
    assert_eq!(structural_hash(&m), structural_hash(&back));
    assert_eq!(back.to_string(), text);

    // Without the loop's annotations the function is a different one.
    let plain = module(&text.replace(
        r#"T.serial(4, annotations={"pragma_auto_unroll_max_step": 16, "pragma_unroll_explicit": 1})"#,
        "range(4)",
    ));
    let e = structural_equal_report(&m, &plain).unwrap_err();
    assert!(e.to_string().contains("loop annotations"), "{e}");
    assert_ne!(structural_hash(&m), structural_hash(&plain));
}

// ---- parser errors --------------------------------------------------------

#[test]
fn parse_errors_say_what_was_expected() {
    let head = "@I.ir_module\nclass Module:\n    @T.prim_func\n    def f(A: T.Buffer((4,), \"float32\"), B: T.Buffer((4,), \"int32\")):\n";
    let cases = [
        ("        for i in range(4):\n            A[j] = T.float32(0.0)\n", "undefined `j`"),
        ("        for i in range(4):\n            A[i] = B[i]\n", "expected a value of dtype float32"),
        ("        for i in range(4):\n            B[i] = B[i] / 2\n", "`//` for integer division"),
        ("        for i in range(4):\n            A[i, 0] = T.float32(0.0)\n", "expected 1 indices for buffer A"),
        ("        for i in range(4):\n            with T.sblock(\"b\"):\n                vi, vj = T.axis.remap(\"SS\", [i, k])\n                A[vi] = T.float32(0.0)\n", "expected an enclosing loop variable"),
        ("        for i in range(4):\n            A[i] = T.frobnicate(A[i])\n", "expected an intrinsic"),
        ("        for i in T.grid(4, 4):\n            A[i] = T.float32(0.0)\n", "one extent per loop variable"),
        ("        for i in range(4):\n            with T.sblock(\"b\"):\n                T.reads(C[i])\n                A[i] = T.float32(0.0)\n", "undefined `C`"),
        ("        for i in range(4):\n            A[i] = T.min(A[i], B[i])\n", "expected arguments of `T.min` of one dtype, found `A[i]` of float32 and `B[i]` of int32 (use `T.Cast`)"),
        ("        for i in range(4):\n            A[i] = A[i] + B[i]\n", "expected operands of `+` of one dtype"),
        ("        for i in range(4):\n            A[i] = T.float32()\n", "expected a value in `T.float32(…)`, found none"),
        ("        for i in range(4):\n            A[i] = A[0:2]\n", "expected an index, found a slice"),
        ("        for i in range(4):\n            with T.sblock(\"b\"):\n                T.reads(A[i, 0])\n                A[i] = T.float32(0.0)\n", "expected 1 indices for buffer A, found 2"),
        ("        for i in range(4, annotations={\"k\": 1}):\n            A[i] = T.float32(0.0)\n", "but `annotations=` (on `T.serial`"),
        ("        for i in T.serial(4, annotations=[1]):\n            A[i] = T.float32(0.0)\n", "expected a dict of attributes, found"),
        ("        for i in T.serial(4, annotation={}):\n            A[i] = T.float32(0.0)\n", "found `annotation=`"),
        ("        for i in range(4):\n            with T.sblock(\"b\"):\n                T.block_attr({1: 2})\n                A[i] = T.float32(0.0)\n", "expected a string attribute name, found"),
    ];
    for (body, want) in cases {
        let es = errors(&format!("{head}{body}"));
        assert!(es.iter().any(|e| e.contains(want)), "{want}: {es:?}");
    }
    // Loop-level statements in a Relax function are reported as such.
    let es = errors("@I.ir_module\nclass Module:\n    @R.function\n    def main(x: R.Tensor((4,), \"float32\")) -> R.Tensor((4,), \"float32\"):\n        for i in range(4):\n            pass\n        return x\n");
    assert!(es.iter().any(|e| e.contains("`for` statement")), "{es:?}");
}

// ---- the interpreter on TVMScript ------------------------------------------

#[test]
fn interprets_matmul_with_reduction_block() {
    let m = module(include_str!(
        "../../../tests/roundtrip/tir_matmul_reduction.py"
    ));
    let f = func(&m, "matmul");
    let a: Vec<f32> = (0..32).map(|v| v as f32).collect();
    let b: Vec<f32> = (0..128).map(|v| (v % 7) as f32 - 3.0).collect();
    let mut want = vec![0f32; 64];
    for i in 0..4 {
        for j in 0..16 {
            for k in 0..8 {
                want[i * 16 + j] += a[i * 8 + k] * b[k * 16 + j];
            }
        }
    }
    let (ta, tb) = (f32t(&[4, 8], a), f32t(&[8, 16], b));
    let mut out = [zeros(&[4, 16])];
    run(&f, &[&ta, &tb], &mut out, &[]).unwrap();
    close(&out[0].to_vec::<f32>().unwrap(), &want);
}

#[test]
fn interprets_broadcast_add_relu_and_fused_alloc() {
    let m = module(include_str!(
        "../../../tests/roundtrip/tir_elementwise_broadcast.py"
    ));
    let x = f32t(&[4, 3], (0..12).map(|v| v as f32).collect());
    let y = f32t(&[3], vec![10., 20., 30.]);
    let mut out = [zeros(&[4, 3])];
    run(&func(&m, "add"), &[&x, &y], &mut out, &[]).unwrap();
    assert_eq!(
        out[0].to_vec::<f32>().unwrap(),
        vec![10., 21., 32., 13., 24., 35., 16., 27., 38., 19., 30., 41.]
    );

    let m = module(include_str!("../../../tests/roundtrip/tir_relu.py"));
    let x = f32t(&[2, 8], (0..16).map(|v| v as f32 - 8.0).collect());
    let mut out = [zeros(&[2, 8])];
    run(&func(&m, "relu"), &[&x], &mut out, &[]).unwrap();
    let want: Vec<f32> = (0..16).map(|v| (v as f32 - 8.0).max(0.0)).collect();
    assert_eq!(out[0].to_vec::<f32>().unwrap(), want);

    let m = module(include_str!("../../../tests/roundtrip/tir_alloc_buffer.py"));
    let x = f32t(&[1, 8], vec![1.; 8]);
    let w = f32t(&[8, 4], (0..32).map(|v| v as f32).collect());
    let b = f32t(&[4], vec![0.5, 0.5, 0.5, 0.5]);
    let mut out = [zeros(&[1, 4])];
    run(&func(&m, "fused_matmul_add"), &[&x, &w, &b], &mut out, &[]).unwrap();
    // Column j sums j, j+4, …, j+28: 8j + 112.
    assert_eq!(
        out[0].to_vec::<f32>().unwrap(),
        vec![112.5, 120.5, 128.5, 136.5]
    );

    let a = f32t(&[4, 16], (0..64).map(|v| v as f32).collect());
    let mut out = [zeros(&[4])];
    run(&func(&m, "row_sum"), &[&a], &mut out, &[]).unwrap();
    assert_eq!(
        out[0].to_vec::<f32>().unwrap(),
        vec![120., 376., 632., 888.]
    );
}

#[test]
fn interprets_softmax_if_else_and_symbolic_dims() {
    let m = module(include_str!("../../../tests/roundtrip/tir_softmax.py"));
    let x = vec![1f32, 2., 3., 4., 5., -1., 0., 1., 0., -1.];
    let mut want = Vec::new();
    for row in x.chunks(5) {
        let mx = row.iter().cloned().fold(f32::MIN, f32::max);
        let s: f64 = row.iter().map(|v| ((v - mx) as f64).exp()).sum();
        want.extend(row.iter().map(|v| (((v - mx) as f64).exp() / s) as f32));
    }
    let mut out = [zeros(&[2, 5])];
    run(&func(&m, "softmax"), &[&f32t(&[2, 5], x)], &mut out, &[]).unwrap();
    close(&out[0].to_vec::<f32>().unwrap(), &want);

    let m = module(include_str!("../../../tests/roundtrip/tir_if_else.py"));
    let a = f32t(&[8], vec![-1., 2., 7., 0.5, -3., 6., 6.5, 1.]);
    let mut out = [zeros(&[10])];
    run(&func(&m, "clip_pad"), &[&a], &mut out, &[]).unwrap();
    // The first loop clips into 1..9 and writes -1 / 1 at the ends; the
    // block then copies A shifted by one, keeping the ends.
    assert_eq!(
        out[0].to_vec::<f32>().unwrap(),
        vec![-1., -1., 2., 7., 0.5, -3., 6., 6.5, 1., 1.]
    );

    let m = module(include_str!(
        "../../../tests/roundtrip/tir_symbolic_dims.py"
    ));
    let a = f32t(&[3, 4], (0..12).map(|v| v as f32).collect());
    let mut out = [zeros(&[3, 4])];
    run(&func(&m, "add_n"), &[&a, &a], &mut out, &[]).unwrap();
    assert_eq!(out[0].to_vec::<f32>().unwrap()[11], 22.);
    let a = f32t(&[8], (1..=8).map(|v| v as f32).collect());
    let mut out = [zeros(&[2])];
    run(&func(&m, "tile_sum"), &[&a], &mut out, &[2]).unwrap();
    assert_eq!(out[0].to_vec::<f32>().unwrap(), vec![10., 26.]);
    // The scalar m = 3 makes A's shape (12,), not (8,).
    let e = run(&func(&m, "tile_sum"), &[&a], &mut out, &[3]).unwrap_err();
    assert_eq!(e, "buffer A has shape (12,), its argument has shape (8,)");
}

#[test]
fn interpreter_errors_for_out_of_bounds_and_shape_mismatch() {
    let f = prim(
        r#"A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")"#,
        "        for i in range(4):\n            with T.sblock(\"B\"):\n                vi = T.axis.spatial(4, i)\n                T.reads(A[vi])\n                T.writes(B[vi])\n                B[vi] = A[vi + 1]\n",
    );
    let a = f32t(&[4], vec![1., 2., 3., 4.]);
    let mut out = [zeros(&[4])];
    let e = run(&f, &[&a], &mut out, &[]).unwrap_err();
    assert_eq!(e, "out-of-bounds access A[4] (shape (4,)) in block B");
    let bad = f32t(&[5], vec![0.; 5]);
    let e = run(&f, &[&bad], &mut out, &[]).unwrap_err();
    assert_eq!(e, "buffer A has shape (4,), its argument has shape (5,)");
}

#[test]
fn the_seed_listings_run() {
    let m = module(include_str!(
        "../../../tests/roundtrip/loose_tir_seed_fused.py"
    ));
    let f = func(&m, "fused_matmul_add1");
    let x = f32t(&[1, 128], vec![0.5; 128]);
    let w = f32t(&[128, 10], (0..1280).map(|v| (v % 10) as f32).collect());
    let b = f32t(&[10], vec![1.; 10]);
    let mut out = [zeros(&[1, 10])];
    run(&f, &[&x, &w, &b], &mut out, &[]).unwrap();
    // Column j: 128 * 0.5 * j + 1.
    let want: Vec<f32> = (0..10).map(|j| 64. * j as f32 + 1.).collect();
    assert_eq!(out[0].to_vec::<f32>().unwrap(), want);
    let t = func(&m, "transpose1");
    let a = f32t(&[10, 128], (0..1280).map(|v| v as f32).collect());
    let mut out = [zeros(&[128, 10])];
    run(&t, &[&a], &mut out, &[]).unwrap();
    assert_eq!(out[0].to_vec::<f32>().unwrap()[1], 128.);
}

#[test]
fn a_library_from_a_module_serves_its_prim_funcs_by_name() {
    use relax_runtime::native::NativeLibrary;
    let m = module(include_str!(
        "../../../tests/roundtrip/tir_elementwise_broadcast.py"
    ));
    let lib = crate::tir::interp::InterpreterLibrary::from_module(&m);
    assert_eq!(lib.symbols(), vec!["add"]);
    let k = lib.lookup("add").unwrap();
    let x = f32t(&[4, 3], vec![1.; 12]);
    let y = f32t(&[3], vec![1., 2., 3.]);
    let mut out = [zeros(&[4, 3])];
    k.call(&[&x, &y], &mut out, &[]).unwrap();
    assert_eq!(out[0].to_vec::<f32>().unwrap()[..3], [2., 3., 4.]);
    let e = k.call(&[&x], &mut out, &[]).unwrap_err();
    assert!(e.contains("expected 3 buffer arguments"), "{e}");
}

// ---- loop-level extras of scalar expressions --------------------------------

/// The forms loop-level expressions add to Relax's: typed literals that
/// cast, true division and `**` of floats, float negation, and literals
/// retyped to a float operand. (`PrimExpr`'s `Display` writes every
/// division as `//`; the TIR printer writes `/` for floats.)
#[test]
fn loop_level_scalar_extras() {
    let params = "A: T.Buffer((4,), \"float32\"), B: T.Buffer((4,), \"int32\")";
    let store = |value: &str| {
        let f = prim(
            params,
            &format!("        for i in range(4):\n            A[i] = {value}\n"),
        );
        let Stmt::For { body, .. } = &f.body else {
            panic!("expected a loop: {:?}", f.body);
        };
        let Stmt::BufferStore { value, .. } = body.as_ref() else {
            panic!("expected a store: {body:?}");
        };
        value.to_string()
    };
    assert_eq!(store("T.float32(B[i])"), "T.Cast(\"float32\", B[i])");
    assert_eq!(store("A[i] / 2"), "A[i] // T.float32(2.0)");
    assert_eq!(store("-A[i]"), "T.float32(0.0) - A[i]");
    assert_eq!(
        store("A[i] ** T.float32(0.5)"),
        "T.pow(A[i], T.float32(0.5))"
    );
    // TVM prints `tir.Div` as `T.Div`: truncation of integers, true
    // division of floats.
    assert_eq!(
        store("T.Cast(\"float32\", T.Div(B[i], 2) + T.truncmod(B[i], 3))"),
        "T.Cast(\"float32\", T.truncdiv(B[i], T.int32(2)) + T.truncmod(B[i], T.int32(3)))"
    );
    assert_eq!(store("T.Div(A[i], A[i])"), "A[i] // A[i]");
    // `<<` and `>>` are TIR's shifts, below `+` as in Python.
    assert_eq!(
        store("T.Cast(\"float32\", B[i] << B[i] + 1 >> 2)"),
        "T.Cast(\"float32\", T.shift_right(T.shift_left(B[i], B[i] + T.int32(1)), T.int32(2)))"
    );
}

/// A let's type is written `x: T.float32` or, as TVM's printer writes it,
/// `x: T.let[T.float32]`: the same `LetStmt`.
#[test]
fn a_let_is_typed_either_way() {
    let text = |ty: &str| {
        format!("@I.ir_module\nclass Module:\n    @T.prim_func\n    def f(A: T.Buffer((4,), \"float32\")):\n        for i in range(4):\n            v: {ty} = A[i] + T.float32(1.0)\n            A[i] = v * v\n")
    };
    let plain = module(&text("T.float32"));
    let tvm = module(&text("T.let[T.float32]"));
    assert!(structural_equal_report(&plain, &tvm).is_ok());
    let Stmt::For { body, .. } = &func(&tvm, "f").body else {
        panic!("expected a loop");
    };
    assert!(matches!(body.as_ref(), Stmt::LetStmt { .. }), "{body:?}");
}

/// `elem_offset=0`, which TVM's printer writes on some buffers, is the
/// default; another offset is an error, as are shifts of floats.
#[test]
fn buffers_take_elem_offset_zero_and_shifts_take_integers() {
    let text = |buffer: &str| {
        format!("@I.ir_module\nclass Module:\n    @T.prim_func\n    def f(A: {buffer}):\n        for i in range(4):\n            A[i] = T.float32(0.0)\n")
    };
    let with = module(&text("T.Buffer((4,), \"float32\", elem_offset=0)"));
    let without = module(&text("T.Buffer((4,), \"float32\")"));
    assert!(structural_equal_report(&with, &without).is_ok());
    let head = "@I.ir_module\nclass Module:\n    @T.prim_func\n    def f(A: T.Buffer((4,), \"float32\", elem_offset=2)):\n        for i in range(4):\n            A[i] = A[i] << A[i]\n";
    let es = errors(head);
    assert!(
        es.iter().any(|e| e.contains("expected `elem_offset=0`")),
        "{es:?}"
    );
    assert!(
        es.iter()
            .any(|e| e.contains("expected integer operands of `<<`, found float32")),
        "{es:?}"
    );
}

/// Found by the fuzzer: a slice whose bounds have two dtypes was accepted,
/// and printed as text that did not parse back. It is an error now, as for
/// any binary operator.
#[test]
fn slice_bounds_of_two_dtypes_are_an_error() {
    let text = "@I.ir_module\nclass Module:\n    @T.prim_func\n    def f(A: T.Buffer((8,), \"float32\"), m: T.int32):\n        for i in range(m):\n            with T.sblock(\"b\"):\n                vi = T.axis.spatial(m, i)\n                T.reads(A[-1 * 4:vi * 4 + 4])\n                A[vi] = T.float32(0.0)\n";
    let es = errors(text);
    assert!(
        es.iter()
            .any(|e| e.contains("expected the bounds of a slice of one dtype")),
        "{es:?}"
    );
}

#[test]
fn a_variable_the_body_reads_but_nothing_binds_is_declared_when_printed() {
    // Found by the parser fuzz target: `n` is a module-level TypeVar the
    // signature does not use, so the printer must declare it for the body.
    let text = r#"
n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def clamp(x: T.Buffer((8,), "float32"), y: T.Buffer((8,), "float32")):
        for i in range(8):
            y[i] = T.Select(x[i] != x[n], T.float32(0.0), x[i])
"#;
    let m = module(text);
    let f = func(&m, "clamp");
    let free: Vec<String> = f
        .body
        .free_vars()
        .iter()
        .map(|v| v.name().to_string())
        .collect();
    assert_eq!(free, ["n"]);
    let printed = m.to_string();
    assert!(printed.contains("\nn = TypeVar(\"n\")\n"), "{printed}");
    // A free variable is a different one in each parse, so the two
    // modules compare by their text.
    let again = module(&printed);
    assert_eq!(again.to_string(), printed);
}
