//! Helpers of the passes' before/expected tests.

use super::Pass;
use crate::ir::{structural_equal_report, IRModule};

/// `text` parsed (a test module that does not parse is a bug of the test).
pub fn parse(text: &str) -> IRModule {
    text.parse()
        .unwrap_or_else(|e| panic!("the test module does not parse: {e}\n{text}"))
}

/// [`parse`], with `: T` and `-> T` standing for `R.Tensor((4,), dtype="float32")`.
pub fn parse_t4(text: &str) -> IRModule {
    let tensor = r#"R.Tensor((4,), dtype="float32")"#;
    let text = text
        .replace(": T", &format!(": {tensor}"))
        .replace("-> T", &format!("-> {tensor}"));
    parse(&text)
}

/// `pass` turns `before` into a module structurally equal to `expected`.
#[track_caller]
pub fn assert_pass(pass: &impl Pass, before: IRModule, expected: IRModule) {
    let got = pass.run(before).unwrap();
    if let Err(e) = structural_equal_report(&got, &expected) {
        panic!("{e}\n--- got:\n{got}\n--- want:\n{expected}");
    }
}
