//! Reads TVMScript modules: prints one back in this project's canonical text,
//! or compares two structurally.
//!
//! ```text
//! cargo run --example tvmscript -- print module.py
//! cargo run --example tvmscript -- print --inline-constants module.py
//! cargo run --example tvmscript -- compare a.py b.py
//! ```
//!
//! `scripts/tvm_interop.sh` uses it to check that text printed here parses in
//! TVM and that TVM's text parses here to the same module. Errors go to
//! stderr with the parser's diagnostics; the exit status is 1 on any failure
//! (and 2 on bad usage).

use relax::ir::{structural_equal_report, IRModule};
use std::process::ExitCode;

fn read(path: &str) -> Result<IRModule, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    text.parse::<IRModule>()
        .map_err(|e| format!("{path}:\n{e}"))
}

fn run(args: &[String]) -> Result<(), String> {
    match args {
        [cmd, path] if cmd == "print" => {
            println!("{}", read(path)?);
            Ok(())
        }
        // Constants inline instead of in a metadata section (what TVM reads).
        [cmd, flag, path] if cmd == "print" && flag == "--inline-constants" => {
            println!("{}", relax::printer::module_to_string_inline(&read(path)?));
            Ok(())
        }
        [cmd, a, b] if cmd == "compare" => {
            let (a_mod, b_mod) = (read(a)?, read(b)?);
            structural_equal_report(&a_mod, &b_mod)
                .map_err(|why| format!("{a} and {b} differ: {why}"))
        }
        _ => Err(String::new()),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) if why.is_empty() => {
            eprintln!(
                "usage: tvmscript print [--inline-constants] FILE | tvmscript compare FILE FILE"
            );
            ExitCode::from(2)
        }
        Err(why) => {
            eprintln!("{why}");
            ExitCode::FAILURE
        }
    }
}
