//! The DSL's diagnostics, as the compiler shows them (trybuild snapshots in
//! tests/ui/<category>/*.stderr; regenerate with TRYBUILD=overwrite), and
//! programs that must compile and run.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    for category in [
        "shape",
        "op",
        "names",
        "dataflow",
        "purity",
        "annotation",
        "syntax",
        "multiple",
        "pattern",
    ] {
        t.compile_fail(format!("tests/ui/{category}/*.rs"));
    }
    t.pass("tests/ui/pass/*.rs");
}
