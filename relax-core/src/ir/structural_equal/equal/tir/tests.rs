//! Equality and hashing of loop-level bodies, on PrimFuncs parsed from text.

use crate::ir::module::BaseFunc;
use crate::ir::structural_equal::{structural_equal, structural_equal_report, structural_hash};
use crate::parser::parse_module;
use crate::tir::PrimFunc;

/// The PrimFunc `f` of a module holding just `def f(…)` with `body`
/// (indented by eight spaces) and `params`.
fn prim(params: &str, body: &str) -> PrimFunc {
    let text =
        format!("@I.ir_module\nclass Module:\n    @T.prim_func\n    def f({params}):\n{body}");
    let m = parse_module(&text).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
    let (_, f) = m.functions().next().unwrap();
    match f {
        BaseFunc::Prim(p) => p.clone(),
        BaseFunc::Relax(_) | BaseFunc::Extern(_) => panic!("not a prim_func"),
    }
}

const AB: &str = r#"A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32")"#;

const MATMUL: &str = r#"        for i, j, k in T.grid(4, 4, 4):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                T.reads(A[vi, vk])
                T.writes(B[vi, vj])
                with T.init():
                    B[vi, vj] = T.float32(0.0)
                B[vi, vj] = B[vi, vj] + A[vi, vk] * A[vk, vj]
"#;

#[test]
fn equal_under_renaming_of_buffers_vars_and_blocks() {
    let a = prim(AB, MATMUL);
    let renamed = MATMUL
        .replace("i, j, k", "x, y, z")
        .replace("[i, j, k]", "[x, y, z]")
        .replace("vi", "p")
        .replace("vj", "q")
        .replace("vk", "r")
        .replace("\"C\"", "\"other\"")
        .replace("A[", "X[")
        .replace("B[", "Y[");
    let b = prim(
        r#"X: T.Buffer((4, 4), "float32"), Y: T.Buffer((4, 4), "float32")"#,
        &renamed,
    );
    assert!(
        structural_equal(&a, &b),
        "{:?}",
        structural_equal_report(&a, &b)
    );
    assert_eq!(structural_hash(&a), structural_hash(&b));
}

fn differs(a: &str, b: &str, path_part: &str) {
    let fa = prim(AB, a);
    let fb = prim(AB, b);
    let r = structural_equal_report(&fa, &fb).expect_err("should differ");
    assert!(r.path.contains(path_part), "{r}");
    assert_ne!(structural_hash(&fa), structural_hash(&fb));
}

#[test]
fn different_op_bound_kind_and_buffer_differ() {
    differs(MATMUL, &MATMUL.replace("] * A[", "] + A["), "value");
    differs(
        MATMUL,
        &MATMUL.replace("T.grid(4, 4, 4)", "T.grid(4, 4, 3)"),
        "extent",
    );
    differs(MATMUL, &MATMUL.replace("\"SSR\"", "\"SSS\""), "iter var 2");
    differs(MATMUL, &MATMUL.replace("A[vk, vj]", "B[vk, vj]"), "value");
    let par = "        for i in T.parallel(4):\n            B[i, 0] = A[i, 0]\n";
    let ser = "        for i in T.serial(4):\n            B[i, 0] = A[i, 0]\n";
    differs(par, ser, "loop kind");
    let exp = "        for i in range(4):\n            B[i, 0] = T.exp(A[i, 0])\n";
    let log = "        for i in range(4):\n            B[i, 0] = T.log(A[i, 0])\n";
    differs(exp, log, "value");
}

#[test]
fn seqs_compare_flattened_and_allocs_map_buffers() {
    let a = prim(
        AB,
        "        C = T.alloc_buffer((4,))\n        for i in range(4):\n            C[i] = A[i, 0]\n        for i in range(4):\n            B[i, 0] = C[i]\n",
    );
    let b = prim(
        AB,
        "        D = T.alloc_buffer((4,))\n        for j in range(4):\n            D[j] = A[j, 0]\n        for j in range(4):\n            B[j, 0] = D[j]\n",
    );
    assert!(
        structural_equal(&a, &b),
        "{:?}",
        structural_equal_report(&a, &b)
    );
    // A scratch buffer of another shape differs at its definition.
    let c = prim(
        AB,
        "        D = T.alloc_buffer((5,))\n        for j in range(4):\n            D[j] = A[j, 0]\n        for j in range(4):\n            B[j, 0] = D[j]\n",
    );
    let r = structural_equal_report(&a, &c).unwrap_err();
    assert!(r.path.contains("allocate / dim 0"), "{r}");
    // Nested Seqs are spliced: Seq[x, Seq[y]] equals Seq[x, y].
    let crate::tir::Stmt::Allocate { buffer, body } = &a.body else {
        panic!("not an allocate")
    };
    let crate::tir::Stmt::Seq(items) = body.as_ref() else {
        panic!("not a seq")
    };
    let nested = crate::tir::Stmt::Allocate {
        buffer: buffer.clone(),
        body: Box::new(crate::tir::Stmt::Seq(vec![
            items[0].clone(),
            crate::tir::Stmt::Seq(vec![items[1].clone()]),
        ])),
    };
    let mut d = a.clone();
    d.body = nested;
    assert!(structural_equal(&a, &d));
    assert_eq!(structural_hash(&a), structural_hash(&d));
}
