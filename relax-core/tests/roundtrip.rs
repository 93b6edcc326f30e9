//! Round trips through the TVMScript text format.
//!
//! Every module in `tests/roundtrip/*.py` is parsed, printed and parsed
//! again: the two modules must be structurally equal and the printed text
//! stable (`print(parse(print(m))) == print(m)`). The seed listings are also
//! parsed in their original, non-canonical spellings.

use relax_core::analysis::well_formed;
use relax_core::ir::structural_equal::structural_equal_report;
use relax_core::ir::IRModule;
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
            let text = std::fs::read_to_string(&p).unwrap();
            (name, text)
        })
        .collect();
    out.sort();
    out
}

fn parse(name: &str, text: &str) -> Result<IRModule, String> {
    parse_module(text).map_err(|errs| {
        errs.iter()
            .map(|e| e.render(name, text))
            .collect::<Vec<_>>()
            .join("\n")
    })
}

/// What the parser builds is well-formed IR.
#[test]
fn parsed_modules_are_well_formed() {
    let mut failures = Vec::new();
    for (name, text) in cases() {
        let m = parse(&name, &text).unwrap_or_else(|e| panic!("{e}"));
        if let Err(errs) = well_formed(&m) {
            let msgs: Vec<String> = errs.iter().map(|e| e.to_string()).collect();
            failures.push(format!("{name}:\n  {}", msgs.join("\n  ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn there_are_enough_cases() {
    assert!(
        cases().len() >= 20,
        "only {} round-trip modules",
        cases().len()
    );
}

#[test]
fn print_parse_is_structurally_equal_and_text_is_stable() {
    let mut failures = Vec::new();
    for (name, text) in cases() {
        let m1 = match parse(&name, &text) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!("{name}: the original does not parse:\n{e}"));
                continue;
            }
        };
        let printed = m1.to_string();
        let m2 = match parse(&format!("{name} (printed)"), &printed) {
            Ok(m) => m,
            Err(e) => {
                failures.push(format!(
                    "{name}: the printed text does not parse:\n{e}\n{printed}"
                ));
                continue;
            }
        };
        if let Err(mismatch) = structural_equal_report(&m1, &m2) {
            failures.push(format!(
                "{name}: parse(print(m)) differs from m: {mismatch}\n{printed}"
            ));
        }
        let reprinted = m2.to_string();
        if reprinted != printed {
            failures.push(format!(
                "{name}: the text is not stable\n--- first\n{printed}\n--- second\n{reprinted}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Canonical text (every file but the `loose_*` ones, which use other
/// spellings on purpose) prints back exactly as written. An `ext_*` file
/// (this project's forms that TVM 0.27 does not have) starts with a note
/// saying so, which is not part of the text.
#[test]
fn canonical_texts_print_unchanged() {
    let mut failures = Vec::new();
    for (name, text) in cases() {
        if name.starts_with("loose_") {
            continue;
        }
        let m = parse(&name, &text).unwrap_or_else(|e| panic!("{e}"));
        let printed = m.to_string();
        let canonical: String = if name.starts_with("ext_") {
            let start = text.find("# from ").unwrap_or(0);
            text[start..].to_string()
        } else {
            text.clone()
        };
        if printed.trim_end() != canonical.trim_end() {
            failures.push(format!("{name} prints differently:\n{printed}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
