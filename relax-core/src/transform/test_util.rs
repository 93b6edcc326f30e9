//! Helpers of the passes' before/expected tests.

use super::Pass;
use crate::ir::{structural_equal_report, IRModule};
use relax_runtime::{Executable, Value, VirtualMachine};

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

/// `exec`'s `main` on `args`, its one `float32` tensor result as a vector.
pub fn run_main_f32(exec: &Executable, args: &[Value]) -> Vec<f32> {
    let out = VirtualMachine::new(exec).call("main", args).unwrap();
    out.as_tensor().unwrap().to_vec::<f32>().unwrap()
}

/// `got` equals `want` within float32 rounding of reordered sums
/// (`1e-4` relative, absolute below 1); a failure names `what` and the
/// element.
#[track_caller]
pub fn assert_close(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-4 * w.abs().max(1.0),
            "{what}, element {k}: {g} vs {w}"
        );
    }
}

/// `pass` turns `before` into a module structurally equal to `expected`.
#[track_caller]
pub fn assert_pass(pass: &impl Pass, before: IRModule, expected: IRModule) {
    let got = pass.run(before).unwrap();
    if let Err(e) = structural_equal_report(&got, &expected) {
        panic!("{e}\n--- got:\n{got}\n--- want:\n{expected}");
    }
}

/// What became of one of TVM's test cases (`relax-core/tests/tvm_passes/
/// <pass>/<case>.{before,after}.py`, written by
/// `scripts/tvm_pass_fixtures.py`): `Ok` when our pass gives TVM 0.27's
/// module, structurally equal with attributes, else why not.
pub fn tvm_case(pass_dir: &str, case: &str, pass: &impl Pass) -> Result<(), String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/tvm_passes")
        .join(pass_dir);
    let read = |which: &str| -> Result<IRModule, String> {
        let path = dir.join(format!("{case}.{which}.py"));
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{path:?}: {e}"))?;
        let parsed = std::panic::catch_unwind(|| text.parse::<IRModule>());
        match parsed {
            Ok(Ok(m)) => Ok(m),
            Ok(Err(e)) => Err(format!("{which} does not parse: {e}")),
            Err(_) => Err(format!("{which}: the parser panics")),
        }
    };
    let before = read("before")?;
    let tvm = read("after")?;
    let ours = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| pass.run(before)))
        .map_err(|_| "the pass panics".to_string())?
        .map_err(|e| format!("the pass fails: {e}"))?;
    structural_equal_report(&ours, &tvm)
        .map_err(|e| format!("differs: {e}\n--- ours\n{ours}\n--- TVM 0.27\n{tvm}"))
}

/// Every case of `tests/tvm_passes/<pass_dir>`: those of `same` give TVM
/// 0.27's module, those of `different` do not (a case that starts matching
/// must move to `same`), and no case is in neither list. With
/// `TVM_CASES_RELIST` set, the lists are taken as empty, so that the
/// failure lists every case with its outcome (to write the lists anew).
#[track_caller]
pub fn assert_tvm_cases(
    pass_dir: &str,
    pass: &impl Pass,
    same: &[&str],
    different: &[(&str, &str)],
) {
    let relist = std::env::var_os("TVM_CASES_RELIST").is_some();
    let (same, different) = if relist {
        (&[][..], &[][..])
    } else {
        (same, different)
    };
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/tvm_passes")
        .join(pass_dir);
    let mut cases: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let file = e.unwrap().file_name().to_string_lossy().into_owned();
            file.strip_suffix(".before.py").map(str::to_string)
        })
        .collect();
    cases.sort();
    let mut wrong = Vec::new();
    for case in &cases {
        let got = tvm_case(pass_dir, case, pass);
        let listed_same = same.contains(&case.as_str());
        let listed_different = different.iter().any(|(n, _)| n == case);
        match (&got, listed_same, listed_different) {
            (Ok(()), true, false) | (Err(_), false, true) => {}
            (Ok(()), _, _) => wrong.push(format!("{case}: matches TVM, list it in SAME")),
            (Err(e), _, _) => {
                let first = e.lines().next().unwrap_or("");
                if std::env::var_os("TVM_CASES_VERBOSE").is_some() {
                    eprintln!("== {case}\n{e}");
                }
                wrong.push(format!(
                    "{case}: differs ({first}), listed in SAME or nowhere"
                ));
            }
        }
    }
    for name in same
        .iter()
        .copied()
        .chain(different.iter().map(|(n, _)| *n))
    {
        if !cases.iter().any(|c| c == name) {
            wrong.push(format!("{name}: listed but no fixture"));
        }
    }
    assert!(wrong.is_empty(), "{pass_dir}:\n{}", wrong.join("\n"));
}
