//! `relax import model.onnx -o model.rs`: the model as a `relax::module!`
//! file a crate can check in and compile (from build.rs too), its weights
//! in a side file.
//!
//! `model.rs` holds the module (named after the file, `model`; `main` takes the
//! inputs, then the weights), a table of the weights (name, dtype, shape),
//! and `load_weights(path)`, which reads `model.weights`, written beside
//! it: the weights' elements in order, raw and little-endian (see
//! `relax::dsl::load_weights`). Constants the DSL has no literal for (any
//! non-scalar one) are weights too, after the model's own.
//!
//! It also holds a struct that owns the weights, named after the module in
//! CamelCase (`Resnet18` for `resnet18.rs`): `Resnet18::load(path)` reads
//! them once, and its `main` takes only the model's inputs and calls the
//! module's `main` with the weights after them.

use relax_core::frontend::codegen::{param_type_text, result_type_text};
use relax_core::ir::StructInfo;
use relax_core::printer::dsl::{module_to_dsl, rust_identifier};
use relax_onnx::{from_onnx_file, ImportOptions};
use relax_runtime::Tensor;
use std::fmt::Write;
use std::path::Path;

/// A model as `relax import -o model.rs` writes it.
pub struct DslModel {
    /// The `relax::module!` text.
    pub text: String,
    /// The weights `main` takes after its inputs, in order: the model's,
    /// then its lifted constants.
    pub weights: Vec<(String, Tensor)>,
    /// `main`'s inputs: name and StructInfo.
    pub inputs: Vec<(String, StructInfo)>,
    /// `main`'s result.
    pub ret: StructInfo,
}

/// The DSL text of `model` as the Rust module `name`, with its weights and
/// `main`'s signature.
pub fn weights(model: &Path, name: &str) -> Result<DslModel, String> {
    let options = ImportOptions {
        keep_params_in_input: true,
        ..Default::default()
    };
    let imported = from_onnx_file(model, &options).map_err(|e| e.to_string())?;
    let doc = format!(
        "The ONNX model `{}` (opset {}), written by `relax import`.",
        model
            .file_name()
            .map(|f| f.to_string_lossy())
            .unwrap_or_default(),
        imported.opset
    );
    let main = imported
        .module
        .get_relax("main")
        .ok_or("the imported module has no `main`")?;
    let n_inputs = main.params.len() - imported.params.len();
    let inputs = main.params[..n_inputs]
        .iter()
        .map(|p| {
            let sinfo = p.struct_info().cloned().unwrap_or_else(StructInfo::object);
            (rust_identifier(p.name_hint()), sinfo)
        })
        .collect();
    let ret = main.ret_struct_info.clone();
    let dsl = module_to_dsl(&imported.module, name, &doc)?;
    let mut all = imported.params.clone();
    for (f, lifted) in dsl.constants {
        if f == "main" {
            all.extend(lifted);
        }
    }
    Ok(DslModel {
        text: dsl.text,
        weights: all,
        inputs,
        ret,
    })
}

/// `resnet18` to `Resnet18`, `test_conv_2d` to `TestConv2d`.
fn camel(name: &str) -> String {
    name.split('_')
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}

/// The struct that owns the weights of module `name` (see the module docs).
fn model_struct(name: &str, m: &DslModel, weights_file: &str) -> String {
    let ty = camel(name);
    let params: Vec<String> = m
        .inputs
        .iter()
        .map(|(n, s)| format!("{n}: {}", param_type_text(s)))
        .collect();
    let mut args: Vec<String> = m.inputs.iter().map(|(n, _)| n.clone()).collect();
    args.extend((0..m.weights.len()).map(|i| format!("&self.weights[{i}]")));
    let args = format!("\n            {},\n        ", args.join(",\n            "));
    let mut t = String::new();
    let _ = write!(
        t,
        "\n/// `{name}` with its weights read once: `{ty}::load(\"{weights_file}\")?`, then\n\
         /// `.main(…)` with the model's inputs only.\n\
         pub struct {ty} {{\n    weights: Vec<relax::Tensor>,\n}}\n\n\
         impl {ty} {{\n    \
         /// Reads the weights file (see [`WEIGHTS`]).\n    \
         pub fn load(path: impl AsRef<std::path::Path>) -> Result<Self, relax::Error> {{\n        \
         Ok({ty} {{\n            weights: load_weights(path)?,\n        }})\n    }}\n\n    \
         /// `{name}::main` on these inputs and the loaded weights.\n    \
         pub fn main(&self, {}) -> Result<{}, relax::Error> {{\n        \
         {name}::main({})\n    }}\n}}\n",
        params.join(", "),
        result_type_text(&m.ret),
        args
    );
    t
}

/// Writes `output` (`.rs`) and its `.weights` file.
pub fn write(model: &Path, output: &Path) -> Result<(), String> {
    let name = output
        .file_stem()
        .map(|s| rust_identifier(&s.to_string_lossy()))
        .unwrap_or_else(|| "model".into());
    let m = weights(model, &name)?;
    let weights_path = output.with_extension("weights");
    let weights_file = weights_path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut text = format!(
        "// Generated by `relax import {} -o {}`.\n\
         // `main` takes the model's inputs, then its weights: `load_weights(\"{weights_file}\")`\n\
         // reads them from the file written beside this one, and `{}::load` binds them once.\n\n",
        model.display(),
        output.display(),
        camel(&name)
    );
    text.push_str(&m.text);
    text.push_str(
        "\n/// The weights `main` takes after its inputs, in order: name, dtype, shape.\n\
         pub const WEIGHTS: &[(&str, &str, &[i64])] = &[\n",
    );
    for (name, t) in &m.weights {
        let _ = writeln!(
            text,
            "    ({name:?}, {:?}, &{:?}),",
            t.dtype().to_string(),
            t.shape()
        );
    }
    text.push_str(
        "];\n\n\
         /// Reads the weights file (see [`WEIGHTS`]).\n\
         pub fn load_weights(\n    path: impl AsRef<std::path::Path>,\n) -> Result<Vec<relax::Tensor>, relax::Error> {\n    \
         let path = path.as_ref();\n    \
         let bytes = std::fs::read(path)\n        \
         .map_err(|e| relax::Error::Deserialize(format!(\"{}: {e}\", path.display())))?;\n    \
         relax::dsl::load_weights(&bytes, WEIGHTS)\n}\n",
    );
    text.push_str(&model_struct(&name, &m, &weights_file));
    std::fs::write(output, text).map_err(|e| format!("{}: {e}", output.display()))?;
    let bytes: Vec<u8> = m
        .weights
        .iter()
        .flat_map(|(_, t)| t.as_bytes().to_vec())
        .collect();
    std::fs::write(&weights_path, bytes).map_err(|e| format!("{}: {e}", weights_path.display()))
}
