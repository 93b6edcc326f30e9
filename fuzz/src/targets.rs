//! The fuzz targets. Each takes arbitrary bytes and must neither panic nor
//! abort; an `Err` from a target is a finding that is not a panic (printed
//! text that does not parse back).
//!
//! | target | what the bytes are | what runs |
//! |---|---|---|
//! | `parser` | TVMScript text | parse; then print, re-parse (must succeed), `well_formed`, build for the interpreter |
//! | `executable` | an executable's bytes | `Executable::from_bytes`; then every function called with small tensors, under a step limit |
//! | `vm` | choices of a module, arguments, dtypes and shapes | the call on the interpreter and on LLVM-compiled kernels |
//! | `frontend` | DSL source (`relax::module!`'s input) | tokenize, then the macro's expansion-time checks and code generation |
//! | `onnx` | an ONNX model's bytes | import; an imported module must be well formed and build for the interpreter |
//! | `onnx-external` | an ONNX model and its external data file (`mutate::split`) | both written to a scratch directory beside a symlink leading out of it, then `from_onnx_file`, checked as `onnx` is |

use crate::mutate;
use crate::rng::Rng;
use relax::ir::IRModule;
use relax::vm::VirtualMachine;
use relax::{DataType, Target, Tensor, Value};
use std::path::PathBuf;
use std::sync::Arc;

/// One fuzz target.
pub trait FuzzTarget {
    /// Its name (also its corpus directory).
    fn name(&self) -> &'static str;
    /// Tokens the mutator inserts.
    fn dictionary(&self) -> &'static [&'static str];
    /// Whether inputs are text (mutants stay valid UTF-8).
    fn text(&self) -> bool {
        !self.dictionary().is_empty()
    }
    /// Runs one input: whether it got past the first check (it parsed,
    /// decoded, tokenized, or the call ran a kernel).
    fn run(&self, input: &[u8]) -> Result<bool, String>;
    /// Seeds the target makes itself, beside its corpus directory.
    fn seeds(&self) -> Vec<Vec<u8>> {
        Vec::new()
    }
    /// `input` mutated.
    fn mutate(&self, input: &[u8], corpus: &[Vec<u8>], rng: &mut Rng) -> Vec<u8> {
        mutate::mutate(input, corpus, self.dictionary(), self.text(), rng)
    }
}

/// Every target, the VM's modules built once.
pub fn all() -> Vec<Box<dyn FuzzTarget>> {
    vec![
        Box::new(Parser),
        Box::new(ExecutableBytes),
        Box::new(VmCalls::new()),
        Box::new(Frontend),
        Box::new(OnnxModel),
        Box::new(OnnxExternal::new()),
    ]
}

/// ONNX model bytes through the importer.
struct OnnxModel;

impl FuzzTarget for OnnxModel {
    fn name(&self) -> &'static str {
        "onnx"
    }
    fn dictionary(&self) -> &'static [&'static str] {
        &[]
    }
    fn run(&self, input: &[u8]) -> Result<bool, String> {
        let options = relax::frontend::onnx::ImportOptions::default();
        let Ok(imported) = relax::frontend::onnx::from_onnx(input, &options) else {
            return Ok(false);
        };
        check_imported(&imported)?;
        Ok(true)
    }
}

/// An imported model must be well formed; it is built for the
/// interpreter (which may fail: op support is not the target's concern).
fn check_imported(imported: &relax::frontend::onnx::Imported) -> Result<(), String> {
    relax::analysis::well_formed(&imported.module)
        .map_err(|d| format!("an imported module is not well formed: {d:?}"))?;
    let _ = relax::build(&imported.module, &Target::interpreter());
    Ok(())
}

/// An ONNX model with external data: the model and its data file are
/// written to a scratch directory of this target's (which also holds
/// `link.data`, a symlink to a file outside it, on unix), and imported
/// with `from_onnx_file`.
struct OnnxExternal {
    dir: PathBuf,
}

impl OnnxExternal {
    fn new() -> Self {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let base = std::env::temp_dir().join(format!(
            "relax-fuzz-onnx-external-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let dir = base.join("model");
        // A scratch directory that cannot be made shows as every run's
        // error (a crash in the report), not as a panic here.
        let _ = std::fs::create_dir_all(&dir);
        let _ = std::fs::write(base.join("outside.data"), [0u8; 64]);
        #[cfg(unix)]
        let _ = std::os::unix::fs::symlink(base.join("outside.data"), dir.join("link.data"));
        OnnxExternal { dir }
    }
}

impl Drop for OnnxExternal {
    fn drop(&mut self) {
        if let Some(base) = self.dir.parent() {
            let _ = std::fs::remove_dir_all(base);
        }
    }
}

/// The onnx-external target's seeds: a linear layer whose weight and bias
/// are in the data file, and a `Reshape` whose target shape (an integer
/// initializer) is.
pub fn onnx_external_seeds() -> Vec<Vec<u8>> {
    use prost::Message;
    use relax::frontend::onnx::proto::{
        tensor_proto::{DataLocation, DataType as D},
        tensor_shape_proto::{dimension, Dimension},
        type_proto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, StringStringEntryProto,
        TensorProto, TensorShapeProto, TypeProto, ValueInfoProto,
    };
    let info = |name: &str, dims: &[i64]| ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(D::Float as i32),
                shape: Some(TensorShapeProto {
                    dim: dims
                        .iter()
                        .map(|&d| Dimension {
                            value: Some(dimension::Value::DimValue(d)),
                            ..Default::default()
                        })
                        .collect(),
                }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    };
    let node = |op: &str, inputs: &[&str], output: &str| NodeProto {
        op_type: Some(op.into()),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec![output.into()],
        ..Default::default()
    };
    let external = |name: &str, ty: D, dims: &[i64], offset: usize, length: usize| {
        let entry = |k: &str, v: String| StringStringEntryProto {
            key: Some(k.into()),
            value: Some(v),
        };
        TensorProto {
            name: Some(name.into()),
            dims: dims.to_vec(),
            data_type: Some(ty as i32),
            data_location: Some(DataLocation::External as i32),
            external_data: vec![
                entry("location", "model.onnx.data".into()),
                entry("offset", offset.to_string()),
                entry("length", length.to_string()),
            ],
            ..Default::default()
        }
    };
    let model = |graph: GraphProto| {
        ModelProto {
            ir_version: Some(8),
            opset_import: vec![OperatorSetIdProto {
                domain: Some(String::new()),
                version: Some(17),
            }],
            graph: Some(graph),
            ..Default::default()
        }
        .encode_to_vec()
    };
    let floats = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let mut linear_data = floats(&[1.0, -1.0, 0.5, 2.0, -0.25, 0.0]);
    linear_data.extend(floats(&[0.5, -0.5]));
    let linear = model(GraphProto {
        node: vec![
            node("MatMul", &["x", "w"], "xw"),
            node("Add", &["xw", "b"], "y"),
        ],
        initializer: vec![
            external("w", D::Float, &[3, 2], 0, 24),
            external("b", D::Float, &[2], 24, 8),
        ],
        input: vec![info("x", &[1, 3])],
        output: vec![info("y", &[1, 2])],
        ..Default::default()
    });
    let reshape_data: Vec<u8> = [3i64, 2].iter().flat_map(|x| x.to_le_bytes()).collect();
    let reshape = model(GraphProto {
        node: vec![node("Reshape", &["x", "shape"], "y")],
        initializer: vec![external("shape", D::Int64, &[2], 0, 16)],
        input: vec![info("x", &[2, 3])],
        output: vec![info("y", &[3, 2])],
        ..Default::default()
    });
    vec![
        mutate::join(&linear, &linear_data),
        mutate::join(&reshape, &reshape_data),
    ]
}

/// Tokens of external-data entries: keys, locations that stay in the
/// directory and ones that leave it, and numbers at the edges.
const EXTERNAL: &[&str] = &[
    "location",
    "offset",
    "length",
    "checksum",
    "model.onnx.data",
    "model.onnx",
    "link.data",
    "missing.data",
    "../",
    "/",
    "./",
    "/etc/passwd",
    "0",
    "24",
    "-1",
    "4294967296",
    "18446744073709551615",
    "18446744073709551616",
];

impl FuzzTarget for OnnxExternal {
    fn name(&self) -> &'static str {
        "onnx-external"
    }
    fn dictionary(&self) -> &'static [&'static str] {
        EXTERNAL
    }
    fn text(&self) -> bool {
        false
    }
    fn seeds(&self) -> Vec<Vec<u8>> {
        onnx_external_seeds()
    }
    fn mutate(&self, input: &[u8], corpus: &[Vec<u8>], rng: &mut Rng) -> Vec<u8> {
        mutate::mutate_pair(input, corpus, self.dictionary(), rng)
    }
    fn run(&self, input: &[u8]) -> Result<bool, String> {
        let (model, data) = mutate::split(input);
        let path = self.dir.join("model.onnx");
        // No map of the data file outlives an import, so rewriting it
        // here is safe.
        std::fs::write(&path, model).map_err(|e| format!("{}: {e}", path.display()))?;
        let data_path = self.dir.join("model.onnx.data");
        std::fs::write(&data_path, data).map_err(|e| format!("{}: {e}", data_path.display()))?;
        let options = relax::frontend::onnx::ImportOptions::default();
        let Ok(imported) = relax::frontend::onnx::from_onnx_file(&path, &options) else {
            return Ok(false);
        };
        check_imported(&imported)?;
        Ok(true)
    }
}

const TVMSCRIPT: &[&str] = &[
    "(",
    ")",
    "[",
    "]",
    ",",
    ":",
    "=",
    " ",
    "\n",
    "\n        ",
    "R.",
    "T.",
    "I.",
    "n",
    "m",
    "0",
    "1",
    "-1",
    "4294967296",
    "9223372036854775807",
    "\"float32\"",
    "\"int64\"",
    "\"n\"",
    "R.Tensor((n, 4), dtype=\"float32\")",
    "R.add(",
    "R.matmul(",
    "R.call_tir(",
    "R.dataflow()",
    "R.output(",
    "T.int64()",
    "T.Buffer((",
    "for i in range(",
    "T.grid(",
    "with T.block(",
    "R.match_cast(",
    "R.shape([",
    "R.prim_value(",
    "metadata[",
    "@R.function",
    "@T.prim_func",
    "return ",
    "if ",
    "else:",
    "lambda",
    "axis=",
    "R.Tuple(",
    "R.Object",
    "T.float32(\"inf\")",
];

struct Parser;

impl FuzzTarget for Parser {
    fn name(&self) -> &'static str {
        "parser"
    }
    fn dictionary(&self) -> &'static [&'static str] {
        TVMSCRIPT
    }
    fn run(&self, input: &[u8]) -> Result<bool, String> {
        let text = String::from_utf8_lossy(input);
        let Ok(m) = text.parse::<IRModule>() else {
            return Ok(false);
        };
        let printed = m.to_string();
        let again: IRModule = printed
            .parse()
            .map_err(|e| format!("printed text does not parse back: {e}\n{printed}"))?;
        let _ = relax::analysis::well_formed(&again);
        let _ = relax::build(&m, &Target::interpreter());
        Ok(true)
    }
}

struct ExecutableBytes;

/// Small arguments for any function: tensors of a few shapes and dtypes.
fn small_args(n: usize, salt: usize) -> Vec<Value> {
    let shapes: [&[i64]; 4] = [&[2, 3], &[4], &[], &[1, 784]];
    (0..n)
        .map(|i| {
            let shape = shapes[(i + salt) % shapes.len()];
            let numel: i64 = shape.iter().product();
            let data = (0..numel).map(|k| k as f32 * 0.5 - 1.0).collect();
            Value::Tensor(Tensor::from_vec(shape, data).expect("a valid shape"))
        })
        .collect()
}

impl FuzzTarget for ExecutableBytes {
    fn name(&self) -> &'static str {
        "executable"
    }
    fn dictionary(&self) -> &'static [&'static str] {
        &[]
    }
    fn run(&self, input: &[u8]) -> Result<bool, String> {
        let Ok(exec) = relax::executable::Executable::from_bytes(input) else {
            return Ok(false);
        };
        let vm = VirtualMachine::new(&exec)
            .with_step_limit(100_000)
            .with_memory_limit(64 << 20);
        for (i, f) in exec.functions.iter().enumerate().take(4) {
            let _ = vm.call(&f.name, &small_args(f.params.len(), i));
        }
        Ok(true)
    }
}

/// The seed's MLP (784-128-10, symbolic batch, weights as parameters).
pub const MLP: &str = r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 784), dtype="float32"), w0: R.Tensor((128, 784), dtype="float32"), b0: R.Tensor((128,), dtype="float32"), w1: R.Tensor((10, 128), dtype="float32"), b1: R.Tensor((10,), dtype="float32")) -> R.Tensor(("n", 10), dtype="float32"):
        n = T.int64()
        with R.dataflow():
            lv0 = R.permute_dims(w0)
            lv1 = R.matmul(x, lv0)
            lv2 = R.add(lv1, b0)
            lv3 = R.nn.relu(lv2)
            lv4 = R.permute_dims(w1)
            lv5 = R.matmul(lv3, lv4)
            gv = R.add(lv5, b1)
            R.output(gv)
        return gv
"#;

/// The modules VM calls are fuzzed against.
pub const VM_MODULES: &[&str] = &[
    MLP,
    r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", "m"), dtype="float32")) -> R.Tensor(("n", "m"), dtype="float32"):
        n = T.int64()
        m = T.int64()
        with R.dataflow():
            gv = R.nn.softmax(x, axis=-1)
            R.output(gv)
        return gv
"#,
    r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n",), dtype="float32")) -> R.Tensor(("n", "n"), dtype="float32"):
        n = T.int64()
        y = R.zeros(R.shape([n, n]), dtype="float32")
        return y
"#,
    r#"
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 4), dtype="int32"), y: R.Tensor((4,), dtype="int32"), s: R.Shape(["a", "b"])) -> R.Tensor(("n", 4), dtype="int32"):
        n = T.int64()
        a = T.int64()
        b = T.int64()
        with R.dataflow():
            lv = R.add(x, y)
            gv = R.multiply(lv, lv)
            R.output(gv)
        return gv
"#,
];

struct VmCalls {
    vms: Vec<Arc<VirtualMachine>>,
}

impl VmCalls {
    fn new() -> Self {
        let mut vms = Vec::new();
        for text in VM_MODULES {
            let m: IRModule = text.parse().expect("the fuzzed modules parse");
            for target in [Target::interpreter(), Target::host()] {
                let exec = relax::build(&m, &target).expect("the fuzzed modules build");
                let vm = VirtualMachine::new(&exec)
                    .with_memory_limit(256 << 20)
                    .with_step_limit(1_000_000);
                vms.push(Arc::new(vm));
            }
        }
        VmCalls { vms }
    }
}

/// Reads choices off the input, then zeros.
struct Choices<'a>(&'a [u8]);

impl Choices<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((b, rest)) => {
                self.0 = rest;
                *b
            }
            None => 0,
        }
    }
}

/// A dim: mostly small, sometimes an edge (0, a huge or a negative one).
fn dim(c: &mut Choices<'_>) -> i64 {
    match c.byte() {
        250 => 1 << 31,
        251 => 1 << 40,
        252 => i64::MAX,
        253 => -1,
        254 => 784,
        255 => 128,
        b => (b % 12) as i64,
    }
}

fn value(c: &mut Choices<'_>, depth: usize) -> Value {
    const DTYPES: [DataType; 6] = [
        DataType::f32(),
        DataType::f64(),
        DataType::i32(),
        DataType::i64(),
        DataType::bool(),
        DataType::float(16),
    ];
    match c.byte() % 8 {
        0 => Value::Int(i64::from(c.byte() as i8)),
        1 if depth < 3 => {
            let n = c.byte() % 4;
            Value::tuple((0..n).map(|_| value(c, depth + 1)).collect())
        }
        2 => {
            let n = c.byte() % 4;
            Value::Shape((0..n).map(|_| dim(c)).collect::<Vec<_>>().into())
        }
        _ => {
            let dtype = DTYPES[c.byte() as usize % DTYPES.len()];
            let rank = c.byte() % 4;
            let shape: Vec<i64> = (0..rank).map(|_| dim(c)).collect();
            // Only allocate what is small; a huge shape is kept when it
            // has no elements.
            let numel = shape
                .iter()
                .try_fold(1i64, |acc, d| acc.checked_mul((*d).max(0)));
            match numel {
                Some(n) if n <= 1 << 16 && shape.iter().all(|d| *d >= 0) => {
                    match Tensor::zeros(dtype, &shape) {
                        Ok(t) => Value::Tensor(t),
                        Err(_) => Value::Int(0),
                    }
                }
                _ => Value::Tensor(Tensor::zeros(dtype, &[0, 1 << 40]).expect("empty")),
            }
        }
    }
}

impl FuzzTarget for VmCalls {
    fn name(&self) -> &'static str {
        "vm"
    }
    fn dictionary(&self) -> &'static [&'static str] {
        &[]
    }
    fn run(&self, input: &[u8]) -> Result<bool, String> {
        let mut c = Choices(input);
        let vm = &self.vms[c.byte() as usize % self.vms.len()];
        let n = c.byte() % 7;
        let args: Vec<Value> = (0..n).map(|_| value(&mut c, 0)).collect();
        Ok(vm.call("main", &args).is_ok())
    }
}

struct Frontend;

const DSL: &[&str] = &[
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ",",
    ";",
    ":",
    "::",
    "=",
    "->",
    " ",
    "let ",
    "R::",
    "R::add(",
    "R::matmul(",
    "R::nn::relu(",
    "Tensor![",
    "Shape![",
    "(n, 784)",
    "f32",
    "i64",
    "n",
    "m",
    "_",
    "ndim = 2",
    "#[function]",
    "pub fn ",
    "fn ",
    "if ",
    "else ",
    "R::match_cast(",
    "axis = [1]",
    "R::dataflow!",
    "return ",
    "1.5",
    "-1",
    "18446744073709551615",
    "'a",
    "\"s\"",
];

impl FuzzTarget for Frontend {
    fn name(&self) -> &'static str {
        "frontend"
    }
    fn dictionary(&self) -> &'static [&'static str] {
        DSL
    }
    fn run(&self, input: &[u8]) -> Result<bool, String> {
        let text = String::from_utf8_lossy(input);
        let Ok(tokens) = text.parse::<proc_macro2::TokenStream>() else {
            return Ok(false);
        };
        if let Ok(lowered) = relax_core::frontend::lower_module_macro(tokens) {
            let _ = relax_core::frontend::codegen::module_tokens(&lowered);
        }
        // Outside a compiler, proc-macro2 keeps every parsed text in a
        // thread-local source map with 32-bit offsets: after a few GB of
        // inputs its spans wrap and it panics (`span_within`). Nothing of
        // this input is used any more, so its texts are dropped.
        proc_macro2::extra::invalidate_current_thread_spans();
        Ok(true)
    }
}
