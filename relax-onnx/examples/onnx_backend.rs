//! Runs ONNX's backend test cases (a directory of `test_*/model.onnx` with
//! `test_data_set_*/{input,output}_*.pb`, as `onnx/backend/test/data/`
//! in the `onnx` package has them) through the importer and a build, and
//! compares with the expected outputs (rtol 1e-3, atol 1e-4).
//!
//! `cargo run --release -p relax-onnx --example onnx_backend -- DIR… [--interp]`

use relax_core::backend::Target;
use relax_onnx::backend_test::BackendCase;
use relax_onnx::{from_onnx, ImportOptions};
use std::path::Path;

fn run_case(dir: &Path, target: &Target) -> Result<(), String> {
    let case = BackendCase::load(dir).map_err(|e| e.to_string())?;
    let imported = from_onnx(&case.model, &ImportOptions::default()).map_err(|e| e.to_string())?;
    case.check(&imported.module, target, 1e-3, 1e-4)
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
            match run_case(&case, &target) {
                Ok(()) => {
                    pass += 1;
                    println!("ok    {name}");
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
