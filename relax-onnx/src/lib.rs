//! ONNX models to Relax (`relax::frontend::onnx`, TVM's
//! `relax.frontend.onnx.from_onnx`).
//!
//! [`from_onnx_file`] (or [`from_onnx`], for a model in memory) decodes a
//! `ModelProto` (protobuf, with prost) and builds an `IRModule` with one
//! function, `main`:
//!
//! 1. **Parameters.** The graph's inputs that are not initializers, in
//!    order, each annotated with its type; a dim given by name
//!    (`dim_param: "N"`) is a symbolic variable of that name, shared by
//!    every input that names it, and a dim given by neither value nor name
//!    is a fresh symbolic variable. [`ImportOptions::shape_dict`] replaces
//!    the declared shape of the inputs it names (TVM's `shape_dict`). A
//!    sequence input is a tuple of the length
//!    [`ImportOptions::sequence_lens`] gives it (an opaque object when it
//!    gives none).
//!    Parameter names are the input names made identifiers (`gpu_0/data_0`
//!    becomes `gpu_0_data_0`); [`Imported::input_names`] keeps the ONNX
//!    names.
//! 2. **Weights.** The float initializers are constants by default
//!    (TVM's `keep_params_in_input = False`); with
//!    [`ImportOptions::keep_params_in_input`] they become parameters after
//!    the inputs, `main` gets `num_input` (so `LiftTransformParams` applies),
//!    and their values come back in [`Imported::params`]. Integer
//!    initializers (shapes, axes, indices) are always constants: they may
//!    decide shapes.
//!    An initializer may keep its elements in a file beside the model
//!    (ONNX external data, as PyTorch exports large models): the file is
//!    memory-mapped and read from, for a model imported with
//!    [`from_onnx_file`] (`external.rs`). A `Constant` node's tensor cannot
//!    be external: that is an error.
//! 3. **Nodes** are converted in graph order, each by the converter of its
//!    op type (`ops/`), into Relax op calls in one dataflow block; their
//!    StructInfo is inferred as they are emitted. A call whose arguments
//!    are all constants is evaluated on the spot with the op's reference
//!    kernel (the shape arithmetic of exported models: `Shape`, `Gather`,
//!    `Concat` into a `Reshape`), so converters can read shapes and axes.
//! 4. **Symbolic shapes stay symbolic** (`ops/shape_value.rs`): `Shape` of
//!    a symbolic dim is a `ShapeExpr` (or a `PrimValue`) over the same
//!    `TirVar`s, the shape arithmetic on such values runs at import time,
//!    and the ops that take a shape from an input read symbolic dims, so
//!    one module serves every batch size and sequence length. A shape
//!    computed from tensor data is bound to fresh dims at run time
//!    (`R.tensor_to_shape` and a `match_cast`).
//! 5. **Control flow, sequences, optionals.** `If` is a Relax `If` over
//!    its converted branches; `Loop`, `Scan` (and `RNN`/`GRU`/`LSTM` over
//!    a symbolic sequence length) are recursive private functions
//!    `loop_<output>` that `main` calls (`ops/loops.rs`). A graph with
//!    subgraphs is built as plain bindings and its functions then get
//!    their dataflow blocks from `ConvertToDataflow`. A sequence is a
//!    tuple of a length known at import time, an optional its value or the
//!    empty tuple; a sequence or optional graph input is an object that
//!    can only be passed on.
//! 6. **Result.** The graph's outputs: one tensor, or a tuple of them (a
//!    shape value the graph returns becomes an `int64` tensor).
//! 7. **Opsets.** The default domain (`""`, `ai.onnx`) at any version from
//!    1 to [`MAX_OPSET`]: converters follow each op's changes across
//!    versions (attributes that became inputs, legacy broadcasting,
//!    `Softmax`'s 2-d coercion before opset 13). The `ai.onnx.ml` domain
//!    has converters of its own (`ops::ml`), and a model may import it
//!    alone. Other domains are errors.
//! 8. **Errors**, never panics: a malformed file, an unsupported op, an
//!    attribute or input form a converter does not handle, each an `Err`
//!    naming the node and op (`node "conv1" (Conv): …`).
//!
//! | file | what |
//! |---|---|
//! | `proto/` | the generated message types (`gen/` regenerates them) |
//! | `tensor.rs` | `TensorProto` ↔ tensors, element types ↔ dtypes |
//! | `external.rs` | external data: files beside the model, mapped once per import, locations kept inside the model's directory |
//! | `graph.rs` | the importer: signature, initializers, the node loop, constant evaluation |
//! | `node.rs` | a node's attributes and inputs, with errors that name it |
//! | `ops/` | the converters, one file per op family (`elementwise`, `nn`, `shape`, `shape_value` for symbolic shape values, `index` for gathers and scatters, `normalization`, `attention`, `reduce`, `runtime_axes` for axes computed at run time, `loss`, `volume` for 3-d windows as 2-d ops); `Ctx::call` folds calls on constants with the reference kernels |
//! | `backend_test.rs` | ONNX's backend test cases (model, inputs, expected outputs) and their comparison |

#![warn(missing_docs)]

pub mod backend_test;
pub mod proto;
pub mod tensor;

mod external;
mod graph;
mod node;
mod ops;

pub use external::ExternalData;
pub use graph::{Dim, ImportOptions, Imported, MAX_OPSET};
pub use tensor::{decode_tensor, to_tensor, to_tensor_in};

use relax_runtime::{Diagnostic, Error};

pub(crate) fn error(message: String) -> Error {
    Error::Compile(vec![Diagnostic::new("onnx", message)])
}

/// The `ModelProto` in `bytes`; errors start with `prefix`.
fn decode(bytes: &[u8], prefix: &str) -> Result<proto::ModelProto, Error> {
    use prost::Message;
    proto::ModelProto::decode(bytes)
        .map_err(|e| error(format!("{prefix}not an ONNX model (a ModelProto): {e}")))
}

/// Imports the ONNX model in `bytes` (a serialized `ModelProto`). A model
/// whose weights are in external files has no directory to find them in
/// here: import it with [`from_onnx_file`].
pub fn from_onnx(bytes: &[u8], options: &ImportOptions) -> Result<Imported, Error> {
    graph::import(&decode(bytes, "")?, options, &mut ExternalData::none())
}

/// Imports the ONNX model in the file at `path`, reading its external data
/// (if any) from files in the same directory.
///
/// ```
/// use relax_core::backend::{build, Target};
/// use relax_onnx::{from_onnx_file, ImportOptions};
/// use relax_runtime::{Tensor, Value, VirtualMachine};
///
/// // A two-layer Llama decoder as PyTorch exports it by default: weights in
/// // `model.onnx.data` beside the model, dynamic batch and sequence axes.
/// let path = "tests/data/models/tiny_llama/model.onnx";
/// let imported = from_onnx_file(path, &ImportOptions::default())?;
/// let main = imported.module.get_relax("main").unwrap();
/// assert_eq!(main.params.len(), imported.input_names.len()); // weights are constants
///
/// // One build serves every batch size and sequence length.
/// let vm = VirtualMachine::new(&build(&imported.module, &Target::interpreter())?);
/// for (batch, seq) in [(1, 5), (2, 3)] {
///     let tokens = Tensor::from_vec(&[batch, seq], vec![0i64; (batch * seq) as usize])?;
///     let logits = vm.call("main", &[Value::Tensor(tokens)])?;
///     assert_eq!(logits.as_tensor().unwrap().shape()[..2], [batch, seq]);
/// }
/// # Ok::<(), relax_runtime::Error>(())
/// ```
pub fn from_onnx_file(
    path: impl AsRef<std::path::Path>,
    options: &ImportOptions,
) -> Result<Imported, Error> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|e| error(format!("{}: {e}", path.display())))?;
    let model = decode(&bytes, &format!("{}: ", path.display()))?;
    // `model.onnx` alone has the empty path as its parent.
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => std::path::Path::new("."),
    };
    graph::import(&model, options, &mut ExternalData::new(dir))
}

/// The same as [`from_onnx_file`].
pub fn load(path: impl AsRef<std::path::Path>, options: &ImportOptions) -> Result<Imported, Error> {
    from_onnx_file(path, options)
}

/// The op types the importer converts.
pub fn supported_ops() -> Vec<&'static str> {
    ops::CONVERTERS.iter().map(|(name, _)| *name).collect()
}
