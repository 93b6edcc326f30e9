//! What a user's input cannot do to the process: huge symbolic shapes are
//! an `Err` (the issue's repro), overflowing shape arithmetic too, a VM's
//! memory limit holds, and the process keeps working after each.

use super::*;
use relax_runtime::{Tensor, Value, VirtualMachine};

/// The issue's repro: `R.zeros((n, n))` for an input of shape `(n,)`.
const ZEROS: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n",), dtype="float32")) -> R.Tensor(("n", "n"), dtype="float32"):
        n = T.int64()
        y = R.zeros(R.shape([n, n]), dtype="float32")
        return y
"#;

fn targets() -> Vec<Target> {
    let mut t = vec![Target::interpreter(), Target::tir_interpreter()];
    if cfg!(feature = "llvm") {
        t.push(Target::host());
    }
    t
}

fn vector(n: i64) -> Value {
    // A tensor of shape (n,) whose data is never read: a zero-length
    // stand-in would not have the shape, so keep n modest where it is
    // actually allocated.
    Value::Tensor(Tensor::zeros(relax_runtime::DataType::f32(), &[n]).unwrap())
}

#[test]
fn a_huge_symbolic_allocation_is_an_error_and_the_process_goes_on() {
    let m: crate::ir::IRModule = ZEROS.parse().unwrap();
    for target in targets() {
        let exec = build(&m, &target).unwrap();
        let vm = VirtualMachine::new(&exec);
        // 1048576² floats: 4 TiB.
        let e = vm.call("main", &[vector(1 << 20)]).unwrap_err().to_string();
        assert!(
            e.contains("cannot allocate") || e.contains("address space"),
            "{target:?}: {e}"
        );
        // The same VM still works.
        let ok = vm.call("main", &[vector(100)]).unwrap();
        assert_eq!(ok.as_tensor().unwrap().shape(), &[100, 100]);
    }
}

/// `R.zeros((n, n))` for a symbolic `n` given as a value: no input tensor
/// has to exist for a huge `n`.
const ZEROS_OF_N: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(k: R.Prim(value="n")) -> R.Tensor(("n", "n"), dtype="float32"):
        n = T.int64()
        y = R.zeros(R.shape([n, n]), dtype="float32")
        return y
"#;

#[test]
fn shape_arithmetic_near_the_integer_limits_is_an_error() {
    let m: crate::ir::IRModule = ZEROS_OF_N.parse().unwrap();
    for target in [Target::interpreter(), Target::tir_interpreter()] {
        let exec = build(&m, &target).unwrap();
        let vm = VirtualMachine::new(&exec);
        // 2^31: 2^62 elements, 2^64 bytes; 2^32: the element count itself
        // overflows i64; near 2^63 everything overflows.
        for n in [1i64 << 31, 1i64 << 32, (1i64 << 62) + 1, i64::MAX] {
            let e = vm.call("main", &[Value::Int(n)]).unwrap_err().to_string();
            assert!(
                e.contains("address space")
                    || e.contains("overflow")
                    || e.contains("too large")
                    || e.contains("cannot allocate"),
                "{target:?}, n = {n}: {e}"
            );
        }
        let ok = vm.call("main", &[Value::Int(3)]).unwrap();
        assert_eq!(ok.as_tensor().unwrap().shape(), &[3, 3]);
    }
    // The tensor constructor itself.
    let e = Tensor::zeros(relax_runtime::DataType::f32(), &[1 << 31, 1 << 31]).unwrap_err();
    assert!(e.to_string().contains("address space"), "{e}");
    let e = Tensor::zeros(relax_runtime::DataType::f32(), &[i64::MAX, 2]).unwrap_err();
    assert!(e.to_string().contains("address space"), "{e}");
}

#[test]
fn a_memory_limit_refuses_before_allocating_and_frees_with_the_tensor() {
    let m: crate::ir::IRModule = ZEROS.parse().unwrap();
    let target = if cfg!(feature = "llvm") {
        Target::host()
    } else {
        Target::tir_interpreter()
    };
    let exec = build(&m, &target).unwrap();
    let vm = VirtualMachine::new(&exec).with_memory_limit(1 << 20);
    // 1000 x 1000 floats need 4 MB: over the 1 MiB limit.
    let e = vm.call("main", &[vector(1000)]).unwrap_err().to_string();
    assert!(e.contains("memory limit of 1048576 bytes"), "{e}");
    assert_eq!(vm.memory_budget().unwrap().live(), 0);
    // 100 x 100 fit; the result stays charged while it lives, and the VM
    // keeps its buffer for the next call (which reuses it: still charged
    // once).
    let small = vm.call("main", &[vector(100)]).unwrap();
    assert_eq!(vm.memory_budget().unwrap().live(), 100 * 100 * 4);
    drop(small);
    let again = vm.call("main", &[vector(100)]).unwrap();
    assert_eq!(vm.memory_budget().unwrap().live(), 100 * 100 * 4);
    drop(again);
    // A larger request that only fits without the kept buffer still fits:
    // kept outputs are given back when the limit refuses.
    let big = vm.call("main", &[vector(510)]).unwrap();
    assert_eq!(vm.memory_budget().unwrap().live(), 510 * 510 * 4);
    drop(big);
    drop(vm);
}

#[test]
fn outputs_are_reused_across_calls_but_never_while_held() {
    let m: crate::ir::IRModule = ZEROS.parse().unwrap();
    let target = if cfg!(feature = "llvm") {
        Target::host()
    } else {
        Target::tir_interpreter()
    };
    let exec = build(&m, &target).unwrap();
    let vm = VirtualMachine::new(&exec);
    let first = vm.call("main", &[vector(64)]).unwrap();
    let first_ptr = first.as_tensor().unwrap().as_bytes().as_ptr();
    // Held: the next call writes elsewhere and leaves it alone.
    let second = vm.call("main", &[vector(64)]).unwrap();
    assert_ne!(second.as_tensor().unwrap().as_bytes().as_ptr(), first_ptr);
    assert!(first
        .as_tensor()
        .unwrap()
        .to_vec::<f32>()
        .unwrap()
        .iter()
        .all(|v| *v == 0.0));
    // Dropped: the next call reuses a kept buffer.
    let second_ptr = second.as_tensor().unwrap().as_bytes().as_ptr();
    drop(second);
    let third = vm.call("main", &[vector(64)]).unwrap();
    assert_eq!(third.as_tensor().unwrap().as_bytes().as_ptr(), second_ptr);
    assert!(third
        .as_tensor()
        .unwrap()
        .to_vec::<f32>()
        .unwrap()
        .iter()
        .all(|v| *v == 0.0));
}

/// Found by the fuzzer: an empty tensor with a huge other dim, `(2^31, 0)`,
/// made the kernels loop over two billion empty rows. Now it costs nothing
/// on every target.
#[test]
fn an_empty_tensor_with_a_huge_dim_is_cheap() {
    let text = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", "m"), dtype="float32")) -> R.Tensor(("n", "m"), dtype="float32"):
        n = T.int64()
        m = T.int64()
        with R.dataflow():
            gv = R.nn.softmax(x, axis=-1)
            R.output(gv)
        return gv
"#;
    let m: crate::ir::IRModule = text.parse().unwrap();
    for target in targets() {
        let vm = VirtualMachine::new(&build(&m, &target).unwrap());
        let x = Tensor::zeros(relax_runtime::DataType::f32(), &[1 << 31, 0]).unwrap();
        let start = std::time::Instant::now();
        let out = vm.call("main", &[Value::Tensor(x)]).unwrap();
        assert_eq!(out.as_tensor().unwrap().shape(), &[1 << 31, 0]);
        assert!(
            start.elapsed().as_secs() < 5,
            "{target:?}: {:?}",
            start.elapsed()
        );
    }
}

/// A broadcast whose result is `(n, n)` and a matmul of `(n, 0)` by
/// `(0, n)`: small inputs, outputs as large as `n` makes them.
const GROWING: &str = r#"
@I.ir_module
class Module:
    @R.function
    def outer(x: R.Tensor(("n", 1), dtype="float32"), y: R.Tensor((1, "n"), dtype="float32")) -> R.Tensor(("n", "n"), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            gv = R.add(x, y)
            R.output(gv)
        return gv

    @R.function
    def empty_inner(x: R.Tensor(("n", 0), dtype="float32"), y: R.Tensor((0, "n"), dtype="float32")) -> R.Tensor(("n", "n"), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            gv = R.matmul(x, y)
            R.output(gv)
        return gv
"#;

fn zeros(shape: &[i64]) -> Value {
    Value::Tensor(Tensor::zeros(relax_runtime::DataType::f32(), shape).unwrap())
}

/// The reference kernels (the interpreter target) allocate their outputs
/// and scratch fallibly and under the VM's memory limit, like the native
/// ones.
#[test]
fn reference_kernels_allocate_fallibly_and_under_the_memory_limit() {
    let m: crate::ir::IRModule = GROWING.parse().unwrap();
    let exec = build(&m, &Target::interpreter()).unwrap();
    // No limit: what the system refuses is an `Err` naming the op.
    let vm = VirtualMachine::new(&exec);
    let n = 1 << 21;
    let e = vm
        .call("empty_inner", &[zeros(&[n, 0]), zeros(&[0, n])])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("relax.matmul") && e.contains("cannot allocate"),
        "{e}"
    );
    let e = vm
        .call("outer", &[zeros(&[1 << 31, 1]), zeros(&[1, 1 << 31])])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("relax.add") && e.contains("address space"),
        "{e}"
    );
    // A 1 MiB limit: the broadcast operands are scratch, the sum is output.
    let vm = VirtualMachine::new(&exec).with_memory_limit(1 << 20);
    let e = vm
        .call("outer", &[zeros(&[1000, 1]), zeros(&[1, 1000])])
        .unwrap_err()
        .to_string();
    assert!(e.contains("memory limit of 1048576 bytes"), "{e}");
    assert_eq!(vm.memory_budget().unwrap().live(), 0);
    let out = vm
        .call("outer", &[zeros(&[100, 1]), zeros(&[1, 100])])
        .unwrap();
    // The scratch went back when the kernel returned; the output stays
    // charged while it lives.
    assert_eq!(vm.memory_budget().unwrap().live(), 100 * 100 * 4);
    drop(out);
    assert_eq!(vm.memory_budget().unwrap().live(), 0);
    let ok = vm
        .call("empty_inner", &[zeros(&[3, 0]), zeros(&[0, 3])])
        .unwrap();
    assert_eq!(ok.as_tensor().unwrap().to_vec::<f32>().unwrap(), [0.0; 9]);
}

/// A kernel whose scratch buffer is `(n, n)` for an input of shape
/// `(n, 0)`: the input costs nothing, the scratch would be 2^62 floats.
const HUGE_SCRATCH: &str = r#"
@I.ir_module
class Module:
    @T.prim_func(s_tir=True)
    def scratch(a: T.handle, b: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n, T.int64(0)), "float32")
        B = T.match_buffer(b, (T.int64(1),), "float32")
        with T.sblock("root"):
            T.reads()
            T.writes()
            C = T.alloc_buffer((n, n))
            for i in range(T.int64(1)):
                with T.sblock("fill"):
                    vi = T.axis.spatial(T.int64(1), i)
                    T.reads()
                    T.writes(C[n - T.int64(1), n - T.int64(1)])
                    C[n - T.int64(1), n - T.int64(1)] = T.float32(1.0)
            for i in range(T.int64(1)):
                with T.sblock("out"):
                    vi = T.axis.spatial(T.int64(1), i)
                    T.reads(C[n - T.int64(1), n - T.int64(1)])
                    T.writes(B[vi])
                    B[vi] = C[n - T.int64(1), n - T.int64(1)]

    @R.function
    def main(x: R.Tensor(("n", 0), dtype="float32")) -> R.Tensor((1,), dtype="float32"):
        n = T.int64()
        y = R.call_tir(scratch, (x,), out_sinfo=R.Tensor((1,), dtype="float32"))
        return y
"#;

/// A scratch buffer whose byte size overflows is refused by the generated
/// code (as a failed allocation) and by the loop-level interpreter, before
/// any product wraps around to a small allocation.
#[test]
fn a_scratch_buffer_whose_size_overflows_is_an_error() {
    let m: crate::ir::IRModule = HUGE_SCRATCH.parse().unwrap();
    for target in targets() {
        let vm = VirtualMachine::new(&build(&m, &target).unwrap());
        for n in [1i64 << 31, 1 << 32, i64::MAX] {
            let e = vm.call("main", &[zeros(&[n, 0])]).unwrap_err().to_string();
            assert!(
                e.contains("memory") || e.contains("scratch") || e.contains("allocat"),
                "{target:?}, n = {n}: {e}"
            );
        }
        let ok = vm.call("main", &[zeros(&[4, 0])]).unwrap();
        assert_eq!(ok.as_tensor().unwrap().to_vec::<f32>().unwrap(), [1.0]);
    }
}

/// When an inner scratch buffer cannot be had, the generated code frees the
/// outer ones before it returns: every exit path, the failing ones
/// included, frees what is live there.
#[cfg(feature = "llvm")]
#[test]
fn a_failed_allocation_frees_the_enclosing_scratch() {
    let text = HUGE_SCRATCH.replace(
        "C = T.alloc_buffer((n, n))",
        "C = T.alloc_buffer((n, n))\n            D = T.alloc_buffer((n, n))",
    );
    let m: crate::ir::IRModule = text.parse().unwrap();
    let Some(crate::ir::BaseFunc::Prim(f)) = m.get("scratch") else {
        panic!("no PrimFunc `scratch`");
    };
    let ir = crate::codegen::llvm::emit_llvm_ir(
        &[("scratch".into(), f.clone())],
        &Default::default(),
        false,
    )
    .unwrap();
    let calls = |name: &str| ir.matches(&format!("@{name}(")).count();
    // Two allocations. Frees: both on the way out, and the outer buffer
    // on each of the inner one's two failure paths (size and null).
    assert_eq!(calls("relax_workspace_alloc"), 2 + 1, "{ir}"); // and its declaration
    assert_eq!(calls("relax_workspace_free"), 2 + 2 + 1, "{ir}");
    // Declared as LLVM knows `malloc` and `free`, so alias analysis sees a
    // fresh block (the loops that fill a GEMM's pack stay vectorized).
    let declaration = |name: &str| {
        ir.lines()
            .find(|l| l.starts_with("declare") && l.contains(&format!("@{name}(")))
            .unwrap_or_else(|| panic!("no declaration of {name}: {ir}"))
            .to_string()
    };
    assert!(
        declaration("relax_workspace_alloc").contains("noalias"),
        "{ir}"
    );
    assert!(
        declaration("relax_workspace_free").contains("nocapture"),
        "{ir}"
    );
}
