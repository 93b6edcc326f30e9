//! Memory planning: the compiler kills a dataflow variable's register after
//! its last use, and the VM's output pool hands the freed tensor to the next
//! output of the same dtype and shape, within a call and across calls,
//! never while anybody still holds it.

use super::*;
use relax_runtime::executable::Instr;
use relax_runtime::{Tensor, Value, VirtualMachine};

/// Four matmuls in a chain (a matmul does not fuse into a matmul): each
/// intermediate dies at the next binding but one.
const CHAIN: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((32, 32), dtype="float32"), w: R.Tensor((32, 32), dtype="float32")) -> R.Tensor((32, 32), dtype="float32"):
        with R.dataflow():
            a = R.matmul(x, w)
            b = R.matmul(a, w)
            c = R.matmul(b, w)
            gv = R.matmul(c, w)
            R.output(gv)
        return gv
"#;

const BYTES: usize = 32 * 32 * 4;

fn compiled_target() -> Target {
    if cfg!(feature = "llvm") {
        Target::host()
    } else {
        Target::tir_interpreter()
    }
}

fn input(seed: f32) -> Value {
    let data = (0..32 * 32)
        .map(|i| ((i % 7) as f32 - 3.0) * 0.05 * seed)
        .collect();
    Value::Tensor(Tensor::from_vec(&[32, 32], data).unwrap())
}

#[test]
fn dead_intermediates_are_killed_and_outputs_never() {
    let m: crate::ir::IRModule = CHAIN.parse().unwrap();
    let exec = build(&m, &compiled_target()).unwrap();
    let main = &exec.functions[0];
    let kills: Vec<u32> = main
        .instrs
        .iter()
        .filter_map(|i| match i {
            Instr::Kill { reg } => Some(*reg),
            _ => None,
        })
        .collect();
    // `a`, `b` and `c`; not `gv` (the output), not the parameters.
    assert_eq!(kills.len(), 3, "{:#?}", main.instrs);
    assert!(kills.iter().all(|r| *r >= 2), "{kills:?}");
    // Each kill comes after the last read of its register.
    for (at, i) in main.instrs.iter().enumerate() {
        if let Instr::Kill { reg } = i {
            let later = &main.instrs[at + 1..];
            assert!(
                !format!("{later:?}").contains(&format!("Reg({reg})")),
                "register {reg} is read after its kill"
            );
        }
    }
}

#[test]
fn intermediates_share_storage_and_calls_reuse_it() {
    let m: crate::ir::IRModule = CHAIN.parse().unwrap();
    let exec = build(&m, &compiled_target()).unwrap();
    let oracle = VirtualMachine::new(&build(&m, &Target::interpreter()).unwrap());
    let vm = VirtualMachine::new(&exec).with_memory_limit(1 << 30);
    let args = [input(1.0), input(2.0)];
    let want = oracle.call("main", &args).unwrap();
    let got = vm.call("main", &args).unwrap();
    let close = |a: &Value, b: &Value| {
        let (a, b) = (a.as_tensor().unwrap(), b.as_tensor().unwrap());
        let (a, b) = (a.to_vec::<f32>().unwrap(), b.to_vec::<f32>().unwrap());
        a.iter()
            .zip(&b)
            .all(|(x, y)| (x - y).abs() <= 1e-4 * (1.0 + y.abs()))
    };
    assert!(close(&got, &want));
    let budget = vm.memory_budget().unwrap();
    // Four outputs of 4 KiB, two buffers: `c` takes `a`'s, `gv` takes `b`'s.
    assert_eq!(budget.peak(), 2 * BYTES);
    // Held by the caller, the result is never written: the next call
    // needs one more buffer.
    let second = vm.call("main", &[input(3.0), input(1.0)]).unwrap();
    assert!(close(&got, &want), "the held result was written");
    assert_eq!(budget.peak(), 3 * BYTES);
    // Dropped, everything is reused: no new allocation.
    drop((got, second));
    let third = vm.call("main", &args).unwrap();
    assert!(close(&third, &want));
    assert_eq!(budget.peak(), 3 * BYTES);
    assert!(budget.live() <= 3 * BYTES);
}
