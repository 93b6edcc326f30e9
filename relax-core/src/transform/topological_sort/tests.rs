//! `TopologicalSort`: the cases of TVM's `test_transform_topological_sort.py`,
//! written for this project (`T` stands for a tensor annotation, `K1` and
//! `K2` for constants).

use super::*;
use crate::transform::test_util::{self, assert_pass};

const T: &str = r#"R.Tensor((4,), dtype="float32")"#;

fn parse(text: &str) -> IRModule {
    let text = text
        .replace(": T", &format!(": {T}"))
        .replace("K1", r#"R.const(1.0, "float32")"#)
        .replace("K2", r#"R.const(2.0, "float32")"#);
    test_util::parse(&text)
}

/// A module whose `main(params)` has one dataflow block of `rows`.
fn module(params: &str, rows: &[&str], outputs: &str, ret: &str) -> String {
    let rows: String = rows.iter().map(|r| format!("            {r}\n")).collect();
    format!(
        "@I.ir_module\nclass Module:\n    @R.function\n    def main({params}):\n        with R.dataflow():\n{rows}            R.output({outputs})\n        return {ret}\n"
    )
}

#[track_caller]
fn check(order: SortOrder, direction: SortDirection, before: &str, expected: &str) {
    assert_pass(
        &TopologicalSort::new(order, direction),
        parse(before),
        parse(expected),
    );
}

use SortDirection::*;
use SortOrder::*;

const CHAINS: [&str; 5] = [
    "B1: T = R.add(A, K1)",
    "C1: T = R.add(A, B1)",
    "B2: T = R.add(A, K2)",
    "C2: T = R.add(A, B2)",
    "D: T = R.add(C1, C2)",
];

#[test]
fn depth_first_from_inputs_finishes_each_chain() {
    let before = [CHAINS[0], CHAINS[2], CHAINS[1], CHAINS[3], CHAINS[4]];
    check(
        DepthFirst,
        FromInputs,
        &module("A: T", &before, "D", "D"),
        &module("A: T", &CHAINS, "D", "D"),
    );
    // Ties are broken by the block's order.
    let before = [CHAINS[0], CHAINS[2], CHAINS[3], CHAINS[1], CHAINS[4]];
    check(
        DepthFirst,
        FromInputs,
        &module("A: T", &before, "D", "D"),
        &module("A: T", &CHAINS, "D", "D"),
    );
    // An unused parameter changes nothing.
    let before = [CHAINS[0], CHAINS[2], CHAINS[1], CHAINS[3], CHAINS[4]];
    check(
        DepthFirst,
        FromInputs,
        &module("A: T, unused: T", &before, "D", "D"),
        &module("A: T, unused: T", &CHAINS, "D", "D"),
    );
}

#[test]
fn depth_first_from_inputs_reaches_bindings_without_inputs() {
    let before = [
        "B1: R.Tensor((), dtype=\"float32\") = K1",
        "B2: R.Tensor((), dtype=\"float32\") = K2",
        "C2: T = R.add(A, B2)",
        "C1: T = R.add(A, B1)",
        "D2: T = R.add(A, C2)",
        "D1: T = R.add(A, C1)",
        "E: T = R.add(D1, D2)",
    ];
    let after = [
        before[0], before[3], before[5], before[1], before[2], before[4], before[6],
    ];
    check(
        DepthFirst,
        FromInputs,
        &module("A: T", &before, "E", "E"),
        &module("A: T", &after, "E", "E"),
    );
}

#[test]
fn depth_first_from_inputs_follows_parameter_order() {
    let params = "A: T, B1: T, B2: T";
    let before = [
        "C2: T = R.add(A, B2)",
        "C1: T = R.add(A, B1)",
        "D2: T = R.add(A, C2)",
        "D1: T = R.add(A, C1)",
        "E: T = R.add(D1, D2)",
    ];
    let after = [before[1], before[3], before[0], before[2], before[4]];
    check(
        DepthFirst,
        FromInputs,
        &module(params, &before, "E", "E"),
        &module(params, &after, "E", "E"),
    );
}

#[test]
fn depth_first_from_outputs_follows_the_order_of_use() {
    let before = [CHAINS[2], CHAINS[0], CHAINS[3], CHAINS[1], CHAINS[4]];
    check(
        DepthFirst,
        FromOutputs,
        &module("A: T", &before, "D", "D"),
        &module("A: T", &CHAINS, "D", "D"),
    );
    // Two outputs, used as (C1, C2) after the block.
    let before = [CHAINS[2], CHAINS[0], CHAINS[3], CHAINS[1]];
    let after = &CHAINS[..4];
    check(
        DepthFirst,
        FromOutputs,
        &module("A: T", &before, "C1, C2", "(C1, C2)"),
        &module("A: T", after, "C1, C2", "(C1, C2)"),
    );
}

#[test]
fn depth_first_from_outputs_keeps_unused_bindings() {
    let before = [
        "B2: T = R.add(A, K2)",
        "B1: T = R.add(A, K1)",
        "C2: T = R.add(A, B2)",
        "C1: T = R.add(A, B1)",
        "D1: T = R.add(A, C1)",
        "D2: T = R.add(A, C2)",
        "E: T = R.add(C1, C2)",
    ];
    let after = [
        before[1], before[3], before[4], before[0], before[2], before[5], before[6],
    ];
    check(
        DepthFirst,
        FromOutputs,
        &module("A: T", &before, "E", "E"),
        &module("A: T", &after, "E", "E"),
    );
}

#[test]
fn breadth_first_goes_level_by_level_in_block_order() {
    let after = [CHAINS[0], CHAINS[2], CHAINS[1], CHAINS[3], CHAINS[4]];
    check(
        BreadthFirst,
        FromInputs,
        &module("A: T", &CHAINS, "D", "D"),
        &module("A: T", &after, "D", "D"),
    );
}
