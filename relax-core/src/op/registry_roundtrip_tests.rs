//! Every op of the registry survives printing and parsing back, with its
//! attributes left to their defaults and with every default written out.
//!
//! The DSL and the parser both normalize a call's attributes against the
//! op's schema (`attr::normalize`); these tests check, op by op, that a
//! defaulted attribute is the same value as the default written out, and
//! that the printer writes it so that the parser reads the same value.

use crate::ir::{structural_equal_report, IRModule};
use crate::op::{self, Arity};

/// The parameters an op's call needs when plain tensors do not do, and the
/// attributes it requires.
fn call_setup(name: &str) -> (Vec<&'static str>, &'static str) {
    let t = "R.Tensor(ndim=4, dtype=\"float32\")";
    let shape = "R.Shape(ndim=2)";
    match name {
        "relax.reshape" | "relax.broadcast_to" => (vec![t, shape], ""),
        "relax.zeros" | "relax.ones" => (vec![shape], "dtype=\"float32\""),
        "relax.shape_to_tensor" => (vec![shape], ""),
        "relax.tensor_to_shape" => (vec!["R.Tensor((3,), dtype=\"int64\")"], ""),
        // `arange` takes PrimValue literals (see `module_text`).
        "relax.arange" => (vec![], ""),
        "relax.full" => (vec![shape, "R.Tensor((), dtype=\"float32\")"], ""),
        "relax.concat" => (
            vec![
                "R.Tuple(R.Tensor(ndim=4, dtype=\"float32\"), R.Tensor(ndim=4, dtype=\"float32\"))",
            ],
            "",
        ),
        "relax.take" => (vec![t, "R.Tensor(ndim=1, dtype=\"int64\")"], ""),
        "relax.gather_elements" => (vec![t, "R.Tensor(ndim=4, dtype=\"int64\")"], ""),
        "relax.gather_nd" => (vec![t, "R.Tensor((2, 3), dtype=\"int64\")"], ""),
        "relax.scatter_elements" => (vec![t, "R.Tensor(ndim=4, dtype=\"int64\")", t], ""),
        "relax.scatter_nd" => (vec![t, "R.Tensor((2, 3), dtype=\"int64\")", t], ""),
        // `tril`, `triu` and `one_hot` take PrimValue literals too (see
        // `module_text`).
        "relax.tril" | "relax.triu" => (vec![t], ""),
        "relax.eye_like" => (vec!["R.Tensor(ndim=2, dtype=\"float32\")"], ""),
        "relax.vision.all_class_non_max_suppression" => (
            vec![
                "R.Tensor(ndim=3, dtype=\"float32\")",
                "R.Tensor(ndim=3, dtype=\"float32\")",
                "R.Tensor((1,), dtype=\"int64\")",
                "R.Tensor((1,), dtype=\"float32\")",
                "R.Tensor((1,), dtype=\"float32\")",
            ],
            "",
        ),
        "relax.one_hot" => (vec!["R.Tensor(ndim=2, dtype=\"int64\")"], "depth=4"),
        "relax.flip" => (vec![t], "axis=1"),
        // `memory.view` takes a dtype and a PrimValue literal (see
        // `module_text`).
        "relax.memory.view" => (vec![t, "R.Shape([2, 3])"], ""),
        "relax.where" => (vec!["R.Tensor(ndim=4, dtype=\"bool\")", t, t], ""),
        "relax.logical_not" => (vec!["R.Tensor(ndim=4, dtype=\"bool\")"], ""),
        "relax.logical_and" | "relax.logical_or" | "relax.logical_xor" => {
            (vec!["R.Tensor(ndim=4, dtype=\"bool\")"; 2], "")
        }
        "relax.bitwise_not" => (vec!["R.Tensor(ndim=4, dtype=\"int32\")"], ""),
        "relax.bitwise_and" | "relax.bitwise_or" | "relax.bitwise_xor" | "relax.left_shift"
        | "relax.right_shift" => (vec!["R.Tensor(ndim=4, dtype=\"int32\")"; 2], ""),
        "relax.expand_dims" => (vec![t], "axis=[0]"),
        "relax.split" => (vec![t], "indices_or_sections=2"),
        "relax.strided_slice" => (vec![t], "axes=[0], begin=[0], end=[1]"),
        "relax.astype" => (vec![t], "dtype=\"float16\""),
        "relax.quantize" => (
            vec![
                t,
                "R.Tensor((), dtype=\"float32\")",
                "R.Tensor((), dtype=\"int32\")",
            ],
            "",
        ),
        "relax.dequantize" => (
            vec![
                "R.Tensor(ndim=4, dtype=\"int8\")",
                "R.Tensor((), dtype=\"float32\")",
                "R.Tensor((), dtype=\"int32\")",
            ],
            "",
        ),
        "relax.nn.pad" => (vec![t], "pad_width=[0, 0, 0, 0, 1, 1, 1, 1]"),
        "relax.image.resize2d" => (vec![t, "R.Shape(ndim=2)"], ""),
        "relax.image.affine_grid" => (vec!["R.Tensor(ndim=3, dtype=\"float32\")", shape], ""),
        "relax.nn.batch_norm" => {
            let c = "R.Tensor(ndim=1, dtype=\"float32\")";
            (vec![t, c, c, c, c], "axis=1")
        }
        "relax.nn.layer_norm" => (
            vec![
                t,
                "R.Tensor(ndim=1, dtype=\"float32\")",
                "R.Tensor(ndim=1, dtype=\"float32\")",
            ],
            "axes=[-1]",
        ),
        _ => {
            let n = match op::lookup(name).map(|i| i.arity) {
                Some(Arity::Exact(k)) => k,
                Some(Arity::AtLeast(k)) => k.max(1),
                None => 0,
            };
            (vec![t; n], "")
        }
    }
}

/// The special forms, whose calls are not `R.<op>(args, attrs)`.
const SPECIAL_FORMS: &[&str] = &[
    "relax.call_tir",
    "relax.call_tir_inplace",
    "relax.call_dps_packed",
    "relax.make_closure",
    "relax.invoke_closure",
    // Impure, and printed with the format as a keyword after the values:
    // `op::debug`'s test covers their text.
    "relax.print",
    "relax.assert_op",
];

/// A module whose `main` calls `op` with `attrs` (besides the required ones).
fn module_text(name: &str, extra: &str) -> String {
    let (params, required) = call_setup(name);
    let params: Vec<String> = params
        .iter()
        .enumerate()
        .map(|(i, p)| format!("a{i}: {p}"))
        .collect();
    let mut args: Vec<String> = (0..params.len()).map(|i| format!("a{i}")).collect();
    if name == "relax.arange" {
        args = ["R.prim_value(0)", "R.prim_value(8)", "R.prim_value(2)"]
            .map(String::from)
            .to_vec();
    }
    if name == "relax.tril" || name == "relax.triu" || name == "relax.eye_like" {
        args.push("R.prim_value(1)".into());
    }
    if name == "relax.memory.view" {
        args.extend(["R.dtype(\"int32\")", "R.prim_value(0)"].map(String::from));
    }
    if name == "relax.one_hot" {
        args.extend(["R.prim_value(T.float32(1))", "R.prim_value(T.float32(0))"].map(String::from));
    }
    if name == "relax.call_pure_packed" {
        args.insert(0, "\"my_func\"".into());
        args.push("sinfo_args=R.Tensor(ndim=4, dtype=\"float32\")".into());
    }
    args.extend(
        [required, extra]
            .into_iter()
            .filter(|a| !a.is_empty())
            .map(String::from),
    );
    format!(
        "@I.ir_module\nclass Module:\n    @R.function\n    def main({}):\n        gv = R.{}({})\n        return gv\n",
        params.join(", "),
        name.strip_prefix("relax.").unwrap_or(name),
        args.join(", ")
    )
}

fn parse(text: &str) -> IRModule {
    text.parse()
        .unwrap_or_else(|e| panic!("does not parse: {e}\n{text}"))
}

/// The attributes the parsed call in `main` ended up with, printed as
/// keyword arguments (what writing every default out looks like).
fn written_defaults(m: &IRModule, name: &str) -> String {
    let info = op::lookup(name).unwrap();
    let text = m.to_string();
    // The printer writes `R.<op>(args, k=v, …)`: take the keywords it
    // printed for the attributes the test did not write.
    let call = text
        .lines()
        .find_map(|l| l.split_once(" = R.").map(|(_, call)| call))
        .unwrap_or_else(|| panic!("no call in\n{text}"));
    let (_, required) = call_setup(name);
    info.attrs
        .iter()
        .filter(|spec| !required.contains(&format!("{}=", spec.name)))
        .filter_map(|spec| {
            let key = format!("{}=", spec.name);
            let at = call.find(&key)?;
            // The value runs to the next top-level comma or the closing paren.
            let rest = &call[at + key.len()..];
            let mut depth = 0;
            let end = rest
                .char_indices()
                .find(|&(_, c)| {
                    match c {
                        '(' | '[' => depth += 1,
                        ')' | ']' if depth > 0 => depth -= 1,
                        ',' | ')' if depth == 0 => return true,
                        _ => {}
                    }
                    false
                })
                .map_or(rest.len(), |(i, _)| i);
            Some(format!("{key}{}", &rest[..end]))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[test]
fn every_op_survives_printing_and_parsing_back() {
    let mut checked = 0;
    for info in op::all() {
        if SPECIAL_FORMS.contains(&info.name) {
            continue;
        }
        let text = module_text(info.name, "");
        let m = parse(&text);
        let printed = m.to_string();
        let back = parse(&printed);
        if let Err(e) = structural_equal_report(&m, &back) {
            panic!("{}: {e}\n{printed}", info.name);
        }
        // The defaults written out give the same module as left out.
        let written = written_defaults(&m, info.name);
        let explicit = parse(&module_text(info.name, &written));
        if let Err(e) = structural_equal_report(&m, &explicit) {
            panic!(
                "{}: defaulted and written ({written}) differ: {e}",
                info.name
            );
        }
        checked += 1;
    }
    assert_eq!(checked, op::all().count() - SPECIAL_FORMS.len());
}

#[test]
fn every_attribute_default_is_printed() {
    // A defaulted attribute is printed like a written one (TVM prints every
    // attribute), so the check above covers every default of the registry.
    for info in op::all() {
        if SPECIAL_FORMS.contains(&info.name) || info.attrs.is_empty() {
            continue;
        }
        let m = parse(&module_text(info.name, ""));
        let written = written_defaults(&m, info.name);
        let (_, required) = call_setup(info.name);
        for spec in info.attrs {
            if required.contains(&format!("{}=", spec.name)) {
                continue;
            }
            assert!(
                written.contains(&format!("{}=", spec.name)),
                "{}: attribute `{}` is not printed: {written}",
                info.name,
                spec.name
            );
        }
    }
}

#[test]
fn resize2d_with_roi_and_scales_operands_survives_printing_and_parsing_back() {
    // TVM's two-operand call, and the ONNX form: the roi and scales as
    // operands, `antialias` and `half_pixel_symmetric`; and the scales as
    // an attribute.
    let t = "R.Tensor((1, 3, 8, 8), dtype=\"float32\")";
    for (params, call) in [
        (
            format!("x: {t}"),
            "R.image.resize2d(x, R.shape([4, 5]), method=\"cubic\")",
        ),
        (
            format!(
                "x: {t}, roi: R.Tensor((4,), dtype=\"float64\"), sc: R.Tensor((2,), dtype=\"float32\")"
            ),
            "R.image.resize2d(x, R.shape([4, 5]), roi, sc, \
             coordinate_transformation_mode=\"half_pixel_symmetric\", antialias=True)",
        ),
        (
            format!("x: {t}"),
            "R.image.resize2d(x, R.shape([4, 5]), scales=[0.6, 0.7], antialias=True)",
        ),
    ] {
        let text = format!(
            "@I.ir_module\nclass Module:\n    @R.function\n    def main({params}):\n        gv = {call}\n        return gv\n"
        );
        let m = parse(&text);
        let printed = m.to_string();
        assert!(
            printed.contains("R.Tensor((1, 3, 4, 5), dtype=\"float32\")"),
            "{printed}"
        );
        let back = parse(&printed);
        if let Err(e) = structural_equal_report(&m, &back) {
            panic!("{e}\n{printed}");
        }
    }
}
