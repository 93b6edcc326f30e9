//! Reading a model: an ONNX file (`.onnx`, through the importer) or
//! TVMScript (`.py`, through the parser).

use relax_core::ir::IRModule;
use relax_onnx::{load, ImportOptions};
use relax_runtime::Tensor;
use std::path::Path;

/// A model ready to build: the module, and the weights `main` takes after
/// its inputs (empty unless an ONNX model was imported with its weights as
/// parameters).
pub struct Model {
    pub module: IRModule,
    pub params: Vec<Tensor>,
}

/// Reads `path` by its extension.
pub fn read(path: &Path, keep_params: bool) -> Result<Model, String> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("onnx") => {
            let options = ImportOptions {
                keep_params_in_input: keep_params,
            };
            let imported = load(path, &options).map_err(|e| e.to_string())?;
            Ok(Model {
                module: imported.module,
                params: imported.params.into_iter().map(|(_, t)| t).collect(),
            })
        }
        Some("py") => {
            let text =
                std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let module = text
                .parse::<IRModule>()
                .map_err(|e| format!("{}: {e}", path.display()))?;
            Ok(Model {
                module,
                params: Vec::new(),
            })
        }
        _ => Err(format!(
            "{}: a model is an ONNX file (.onnx) or TVMScript (.py)",
            path.display()
        )),
    }
}
