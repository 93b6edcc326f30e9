//! Runs ONNX's backend test cases (a directory of `test_*/model.onnx` with
//! `test_data_set_*/{input,output}_*.pb`, as `onnx/backend/test/data/`
//! in the `onnx` package has them) through the importer and a build, and
//! compares with the expected outputs (rtol 1e-3, atol 1e-4). A model is
//! imported from its file (external data included) and built once for all
//! of its data sets, whatever their shapes.
//!
//! `cargo run --release -p relax-onnx --example onnx_backend -- DIR… [--interp] [--time]`
//!
//! `--time` prints each case's import and build time.

use relax_core::backend::{build, Target};
use relax_onnx::backend_test::BackendCase;
use std::path::Path;
use std::time::Instant;

fn run_case(dir: &Path, target: &Target, time: bool) -> Result<String, String> {
    let case = BackendCase::load(dir).map_err(|e| e.to_string())?;
    let start = Instant::now();
    let options = case.import_options().map_err(|e| e.to_string())?;
    let imported = case.import(&options).map_err(|e| e.to_string())?;
    let imported_in = start.elapsed();
    let start = Instant::now();
    let exec = build(&imported.module, target).map_err(|e| format!("build: {e}"))?;
    let built_in = start.elapsed();
    case.check_executable(&exec, 1e-3, 1e-4)?;
    Ok(if time {
        format!(
            " (import {:.2} s, build {:.2} s, {} data sets)",
            imported_in.as_secs_f64(),
            built_in.as_secs_f64(),
            case.data_sets.len()
        )
    } else {
        String::new()
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let time = args.iter().any(|a| a == "--time");
    let target = if args.iter().any(|a| a == "--interp") {
        Target::interpreter()
    } else {
        Target::host()
    };
    let (mut pass, mut fail) = (0, 0);
    for root in args.iter().filter(|a| !a.starts_with("--")) {
        let cases = BackendCase::all_in(Path::new(root)).unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(2)
        });
        for case in cases {
            let name = case
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            match run_case(&case, &target, time) {
                Ok(times) => {
                    pass += 1;
                    println!("ok    {name}{times}");
                }
                Err(e) => {
                    fail += 1;
                    println!("FAIL  {name}: {}", e.lines().next().unwrap_or(""));
                }
            }
        }
    }
    println!("{pass} passed, {fail} failed");
}
