//! Runs ONNX's backend test cases (a directory of `test_*/model.onnx` with
//! `test_data_set_*/{input,output}_*.pb`) through the importer and the
//! LLVM build, and compares with the expected outputs.
//!
//! `cargo run --release -p relax-onnx --example onnx_backend -- DIR… [--interp]`

use relax_core::backend::{build, Target};
use relax_onnx::{decode_tensor, from_onnx, ImportOptions};
use relax_runtime::{Tensor, Value, VirtualMachine};
use std::path::Path;

fn run_case(dir: &Path, target: &Target) -> Result<(), String> {
    let bytes = std::fs::read(dir.join("model.onnx")).map_err(|e| e.to_string())?;
    let imported = from_onnx(&bytes, &ImportOptions::default()).map_err(|e| e.to_string())?;
    let exec = build(&imported.module, target).map_err(|e| format!("build: {e}"))?;
    let vm = VirtualMachine::new(&exec);
    let mut sets: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    sets.sort();
    for set in sets {
        let read = |prefix: &str| -> Result<Vec<Tensor>, String> {
            let mut out = Vec::new();
            for i in 0.. {
                let p = set.join(format!("{prefix}_{i}.pb"));
                if !p.exists() {
                    break;
                }
                let bytes = std::fs::read(&p).map_err(|e| e.to_string())?;
                out.push(decode_tensor(&bytes).map_err(|e| e.to_string())?.1);
            }
            Ok(out)
        };
        let inputs = read("input")?;
        let expected = read("output")?;
        let args: Vec<Value> = inputs.into_iter().map(Value::Tensor).collect();
        let got = vm.call("main", &args).map_err(|e| format!("run: {e}"))?;
        let got: Vec<Tensor> = match got {
            Value::Tensor(t) => vec![t],
            Value::Tuple(ts) => ts
                .iter()
                .map(|v| match v {
                    Value::Tensor(t) => Ok(t.clone()),
                    _ => Err("an output is not a tensor".to_string()),
                })
                .collect::<Result<_, _>>()?,
            _ => return Err("the result is not a tensor".into()),
        };
        if got.len() != expected.len() {
            return Err(format!(
                "{} outputs, expected {}",
                got.len(),
                expected.len()
            ));
        }
        for (k, (g, e)) in got.iter().zip(&expected).enumerate() {
            if g.shape() != e.shape() {
                return Err(format!(
                    "output {k}: shape {:?}, expected {:?}",
                    g.shape(),
                    e.shape()
                ));
            }
            if !close(g, e) {
                return Err(format!("output {k}: max |diff| {:?}", g.max_abs_diff(e)));
            }
        }
    }
    Ok(())
}

/// `|g - e| <= 1e-4 + 1e-3 |e|` elementwise, NaN matching NaN (numpy's
/// `assert_allclose`, as ONNX's backend tests compare).
fn close(g: &Tensor, e: &Tensor) -> bool {
    g.dtype() == e.dtype()
        && g.to_f64_vec().iter().zip(e.to_f64_vec()).all(|(&a, b)| {
            (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= 1e-4 + 1e-3 * b.abs()
        })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let target = if args.iter().any(|a| a == "--interp") {
        Target::interpreter()
    } else {
        Target::host()
    };
    let (mut pass, mut fail) = (0, 0);
    for root in args.iter().filter(|a| !a.starts_with("--")) {
        let mut cases: Vec<_> = std::fs::read_dir(root)
            .expect("a directory of test cases")
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.join("model.onnx").exists())
            .collect();
        cases.sort();
        for case in cases {
            let name = case.file_name().unwrap().to_string_lossy().into_owned();
            match std::panic::catch_unwind(|| run_case(&case, &target)) {
                Ok(Ok(())) => {
                    pass += 1;
                    println!("ok    {name}");
                }
                Ok(Err(e)) => {
                    fail += 1;
                    println!("FAIL  {name}: {}", e.lines().next().unwrap_or(""));
                }
                Err(_) => {
                    fail += 1;
                    println!("PANIC {name}");
                }
            }
        }
    }
    println!("{pass} passed, {fail} failed");
}
