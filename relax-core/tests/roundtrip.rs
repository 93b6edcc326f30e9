//! Round trip of every module in `tests/roundtrip/*.py`.

use relax_core::parser::parse_module;
use std::path::PathBuf;

fn cases() -> Vec<(String, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/roundtrip");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("tests/roundtrip exists")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "py"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    out.sort();
    out
}

#[test]
fn every_module_parses() {
    let mut failures = Vec::new();
    for (name, text) in cases() {
        if let Err(errs) = parse_module(&text) {
            for e in errs {
                failures.push(e.render(&name, &text));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
