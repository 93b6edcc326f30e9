//! Reading a model: an ONNX file (`.onnx`, through the importer, with its
//! external data from the files beside it) or TVMScript (`.py`, through the
//! parser).

use relax_core::ir::IRModule;
use relax_onnx::{from_onnx_file, ImportOptions};
use relax_runtime::Tensor;
use std::path::Path;

/// A model ready to build: the module, the weights `main` takes after
/// its inputs (empty unless an ONNX model was imported with its weights as
/// parameters), and the name each parameter of `main` has in the model
/// file (an ONNX graph input's name, which the parameter's may differ
/// from: `gpu_0/data_0` for `gpu_0_data_0`), and the name of each output
/// (an ONNX graph output's; `output <i>` for TVMScript).
pub struct Model {
    pub module: IRModule,
    pub params: Vec<Tensor>,
    pub input_names: Vec<String>,
    pub output_names: Vec<String>,
}

/// Reads `path` by its extension.
pub fn read(path: &Path, keep_params: bool) -> Result<Model, String> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("onnx") => {
            let options = ImportOptions {
                keep_params_in_input: keep_params,
                ..Default::default()
            };
            let imported = from_onnx_file(path, &options).map_err(|e| e.to_string())?;
            Ok(Model {
                module: imported.module,
                params: imported.params.into_iter().map(|(_, t)| t).collect(),
                input_names: imported.input_names,
                output_names: imported.output_names,
            })
        }
        Some("py") => {
            let text =
                std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let module = text
                .parse::<IRModule>()
                .map_err(|e| format!("{}: {e}", path.display()))?;
            let input_names = module
                .get_relax("main")
                .map(|f| f.params.iter().map(|p| p.name_hint().to_string()).collect())
                .unwrap_or_default();
            Ok(Model {
                module,
                params: Vec::new(),
                input_names,
                output_names: Vec::new(),
            })
        }
        _ => Err(format!(
            "{}: a model is an ONNX file (.onnx) or TVMScript (.py)",
            path.display()
        )),
    }
}
