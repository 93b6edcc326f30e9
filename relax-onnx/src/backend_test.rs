//! ONNX's backend test cases: a directory with `model.onnx` and
//! `test_data_set_*/` of `input_<i>.pb` and `output_<i>.pb` tensors (the
//! layout of `onnx/backend/test/data/` in the `onnx` package), and the
//! comparison those tests make, run against an imported module on a
//! target ([`BackendCase::check`]).
//!
//! A data file holds what the model's input or output of that index is
//! typed as: a `TensorProto`, a `SequenceProto` or an `OptionalProto`
//! (`onnx-data.proto`), or for an optional with a value, that value's own
//! proto (see `holds_value_itself`). They become run-time values as the importer
//! represents them: a tensor as a tensor, a sequence as a tuple of its
//! elements, an optional as its value when it has one and as the empty
//! tuple when it has none.

use crate::error;
use crate::proto::{
    sequence_proto, type_proto, ModelProto, OptionalProto, SequenceProto, TypeProto,
};
use crate::tensor::to_tensor;
use crate::{from_onnx_file, ImportOptions, Imported};
use prost::Message;
use relax_core::backend::{build, Target};
use relax_core::ir::IRModule;
use relax_runtime::{Error, Executable, Tensor, Value, VirtualMachine};
use std::path::{Path, PathBuf};

/// One case.
#[derive(Clone, Debug)]
pub struct BackendCase {
    /// The directory's name (`test_Conv2d`).
    pub name: String,
    /// The model's bytes.
    pub model: Vec<u8>,
    /// The case's directory (where `model.onnx` and any external data
    /// files are).
    pub dir: PathBuf,
    /// Each data set's inputs and expected outputs.
    pub data_sets: Vec<(Vec<Value>, Vec<Value>)>,
}

impl BackendCase {
    /// Reads the case in `dir`.
    pub fn load(dir: &Path) -> Result<BackendCase, Error> {
        let read = |p: &Path| std::fs::read(p).map_err(|e| error(format!("{}: {e}", p.display())));
        let model = read(&dir.join("model.onnx"))?;
        let proto = ModelProto::decode(model.as_slice())
            .map_err(|e| error(format!("{}: not a ModelProto: {e}", dir.display())))?;
        let graph = proto.graph.unwrap_or_default();
        let initializers: std::collections::HashSet<&str> =
            graph.initializer.iter().map(|t| t.name()).collect();
        let input_types: Vec<Option<&TypeProto>> = graph
            .input
            .iter()
            .filter(|i| !initializers.contains(i.name()))
            .map(|i| i.r#type.as_ref())
            .collect();
        let output_types: Vec<Option<&TypeProto>> =
            graph.output.iter().map(|o| o.r#type.as_ref()).collect();
        let mut sets: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| error(format!("{}: {e}", dir.display())))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .collect();
        sets.sort();
        let mut data_sets = Vec::new();
        for set in sets {
            let values =
                |prefix: &str, types: &[Option<&TypeProto>]| -> Result<Vec<Value>, Error> {
                    let mut out = Vec::new();
                    for i in 0.. {
                        let p = set.join(format!("{prefix}_{i}.pb"));
                        if !p.exists() {
                            break;
                        }
                        let ty = types.get(i).copied().flatten();
                        out.push(
                            decode_value(&read(&p)?, ty)
                                .map_err(|e| error(format!("{}: {e}", p.display())))?,
                        );
                    }
                    Ok(out)
                };
            data_sets.push((
                values("input", &input_types)?,
                values("output", &output_types)?,
            ));
        }
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(BackendCase {
            name,
            model,
            dir: dir.to_path_buf(),
            data_sets,
        })
    }

    /// The options the case's model imports with: each sequence graph
    /// input's length ([`ImportOptions::sequence_lens`]) as the first data
    /// set has it (a sequence is a tuple of a static arity), nothing else
    /// set.
    pub fn import_options(&self) -> Result<ImportOptions, Error> {
        let proto = ModelProto::decode(self.model.as_slice())
            .map_err(|e| error(format!("{}: not a ModelProto: {e}", self.dir.display())))?;
        let graph = proto.graph.unwrap_or_default();
        let initializers: std::collections::HashSet<&str> =
            graph.initializer.iter().map(|t| t.name()).collect();
        let inputs = graph
            .input
            .iter()
            .filter(|i| !initializers.contains(i.name()));
        let mut options = ImportOptions::default();
        let Some((values, _)) = self.data_sets.first() else {
            return Ok(options);
        };
        for (input, value) in inputs.zip(values) {
            let is_sequence = matches!(
                input.r#type.as_ref().and_then(|t| t.value.as_ref()),
                Some(type_proto::Value::SequenceType(_))
            );
            if let (true, Value::Tuple(fields)) = (is_sequence, value) {
                options
                    .sequence_lens
                    .insert(input.name().to_string(), fields.len());
            }
        }
        Ok(options)
    }

    /// Imports the case's model from its file, external data included.
    pub fn import(&self, options: &ImportOptions) -> Result<Imported, Error> {
        from_onnx_file(self.dir.join("model.onnx"), options)
    }

    /// Builds `module` (the imported model) for `target` and runs its
    /// `main` on every data set, each output compared with [`compare`].
    /// `Err` says what failed first.
    pub fn check(
        &self,
        module: &IRModule,
        target: &Target,
        rtol: f64,
        atol: f64,
    ) -> Result<(), String> {
        let exec = build(module, target).map_err(|e| format!("build: {e}"))?;
        self.check_executable(&exec, rtol, atol)
    }

    /// Runs an executable built from the case's model on every data set
    /// (one executable for all of them, whatever their shapes), each
    /// output compared with [`compare`].
    pub fn check_executable(&self, exec: &Executable, rtol: f64, atol: f64) -> Result<(), String> {
        let vm = VirtualMachine::new(exec);
        for (inputs, expected) in &self.data_sets {
            let got = match vm.call("main", inputs).map_err(|e| format!("run: {e}"))? {
                Value::Tuple(fields) if expected.len() != 1 => fields.to_vec(),
                v => vec![v],
            };
            if got.len() != expected.len() {
                return Err(format!(
                    "{} outputs, expected {}",
                    got.len(),
                    expected.len()
                ));
            }
            for (k, (g, e)) in got.iter().zip(expected).enumerate() {
                compare_values(g, e, rtol, atol).map_err(|m| format!("output {k}: {m}"))?;
            }
        }
        Ok(())
    }

    /// The cases in `root` (each subdirectory with a `model.onnx`), by
    /// name.
    pub fn all_in(root: &Path) -> Result<Vec<PathBuf>, Error> {
        let mut cases: Vec<PathBuf> = std::fs::read_dir(root)
            .map_err(|e| error(format!("{}: {e}", root.display())))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.join("model.onnx").exists())
            .collect();
        cases.sort();
        Ok(cases)
    }
}

/// The value in `bytes`, a serialized `TensorProto`, `SequenceProto` or
/// `OptionalProto` as `ty` (the model's type of it) says; a tensor when
/// the type is not known.
pub fn decode_value(bytes: &[u8], ty: Option<&TypeProto>) -> Result<Value, Error> {
    match ty.and_then(|t| t.value.as_ref()) {
        Some(type_proto::Value::SequenceType(_)) => {
            let s = SequenceProto::decode(bytes)
                .map_err(|e| error(format!("not a SequenceProto: {e}")))?;
            sequence_value(&s)
        }
        Some(type_proto::Value::OptionalType(opt)) => {
            let elem = opt.elem_type.as_deref();
            match OptionalProto::decode(bytes) {
                Ok(o) if !holds_value_itself(&o, elem) => optional_value(&o),
                // Not an `OptionalProto` at all, or one whose element kind
                // is not the declared one: the value's own proto.
                Ok(_) => decode_value(bytes, elem),
                Err(e) => decode_value(bytes, elem)
                    .map_err(|_| error(format!("not an OptionalProto: {e}"))),
            }
        }
        Some(type_proto::Value::MapType(_)) => Err(error("maps are not supported".into())),
        _ => {
            let t = crate::proto::TensorProto::decode(bytes)
                .map_err(|e| error(format!("not a TensorProto: {e}")))?;
            Ok(Value::Tensor(to_tensor(&t)?))
        }
    }
}

/// Whether the bytes decoded as `o` are really the optional's value
/// written as its own proto: an optional with a value is its value, and
/// writers (ONNX's `numpy_helper`, `scripts/onnx_node_suite.py`) serialize
/// a present value as a `TensorProto` or `SequenceProto`. On the wire a
/// `SequenceProto` of one tensor reads as an `OptionalProto` of that
/// tensor (the same field numbers), so the model's element type decides:
/// an `OptionalProto` whose element kind is defined and differs from the
/// declared one is the value itself.
fn holds_value_itself(o: &OptionalProto, declared: Option<&TypeProto>) -> bool {
    use sequence_proto::DataType as D;
    let declared = match declared.and_then(|t| t.value.as_ref()) {
        Some(type_proto::Value::TensorType(_)) => D::Tensor,
        Some(type_proto::Value::SequenceType(_)) => D::Sequence,
        Some(type_proto::Value::OptionalType(_)) => D::Optional,
        _ => return false,
    };
    let found = D::try_from(o.elem_type()).unwrap_or(D::Undefined);
    found != D::Undefined && found != declared
}

/// A sequence as the tuple of its elements.
fn sequence_value(s: &SequenceProto) -> Result<Value, Error> {
    use sequence_proto::DataType as D;
    let fields: Vec<Value> = match D::try_from(s.elem_type()).unwrap_or(D::Undefined) {
        D::Tensor => s
            .tensor_values
            .iter()
            .map(|t| to_tensor(t).map(Value::Tensor))
            .collect::<Result<_, _>>()?,
        D::Sequence => s
            .sequence_values
            .iter()
            .map(sequence_value)
            .collect::<Result<_, _>>()?,
        D::Optional => s
            .optional_values
            .iter()
            .map(optional_value)
            .collect::<Result<_, _>>()?,
        // An empty sequence may leave its element type undefined.
        D::Undefined if s.tensor_values.is_empty() => Vec::new(),
        other => return Err(error(format!("a sequence of {:?} is not supported", other))),
    };
    Ok(Value::Tuple(fields.into()))
}

/// An optional as its value, or the empty tuple when it has none.
fn optional_value(o: &OptionalProto) -> Result<Value, Error> {
    use sequence_proto::DataType as D;
    let none = || Value::Tuple(Vec::new().into());
    match D::try_from(o.elem_type()).unwrap_or(D::Undefined) {
        D::Tensor => o
            .tensor_value
            .as_ref()
            .map_or(Ok(none()), |t| to_tensor(t).map(Value::Tensor)),
        D::Sequence => o
            .sequence_value
            .as_ref()
            .map_or(Ok(none()), |s| sequence_value(s)),
        D::Optional => o
            .optional_value
            .as_ref()
            .map_or(Ok(none()), |v| optional_value(v)),
        D::Undefined => Ok(none()),
        other => Err(error(format!("an optional {:?} is not supported", other))),
    }
}

/// Whether `got` matches `expected`: tensors with [`compare`], tuples
/// field by field.
pub fn compare_values(got: &Value, expected: &Value, rtol: f64, atol: f64) -> Result<(), String> {
    match (got, expected) {
        (Value::Tensor(g), Value::Tensor(e)) => compare(g, e, rtol, atol),
        (Value::Tuple(g), Value::Tuple(e)) => {
            if g.len() != e.len() {
                return Err(format!(
                    "a tuple of {} fields, expected {}",
                    g.len(),
                    e.len()
                ));
            }
            for (k, (g, e)) in g.iter().zip(e.iter()).enumerate() {
                compare_values(g, e, rtol, atol).map_err(|m| format!("field {k}: {m}"))?;
            }
            Ok(())
        }
        (g, e) => Err(format!("{}, expected {}", g.describe(), e.describe())),
    }
}

/// Whether `got` matches `expected` as ONNX's backend tests require:
/// the same dtype and shape, and `|g - e| <= atol + rtol·|e|` for every
/// element, NaN matching NaN. `Err` says how it differs.
pub fn compare(got: &Tensor, expected: &Tensor, rtol: f64, atol: f64) -> Result<(), String> {
    if got.dtype() != expected.dtype() || got.shape() != expected.shape() {
        return Err(format!(
            "{} {:?}, expected {} {:?}",
            got.dtype(),
            got.shape(),
            expected.dtype(),
            expected.shape()
        ));
    }
    let (g, e) = (got.to_f64_vec(), expected.to_f64_vec());
    let mut worst: Option<(usize, f64, f64)> = None;
    for (i, (&a, &b)) in g.iter().zip(&e).enumerate() {
        let ok = (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= atol + rtol * b.abs();
        if !ok && worst.is_none_or(|(_, x, y)| (a - b).abs() > (x - y).abs()) {
            worst = Some((i, a, b));
        }
    }
    match worst {
        None => Ok(()),
        Some((i, a, b)) => Err(format!(
            "element {i} is {a}, expected {b} (|diff| {:.3e})",
            (a - b).abs()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::type_proto::{Optional, Sequence, Tensor as TensorType};

    fn ty(value: type_proto::Value) -> TypeProto {
        TypeProto {
            value: Some(value),
            ..Default::default()
        }
    }

    fn tensor_ty() -> TypeProto {
        ty(type_proto::Value::TensorType(TensorType {
            elem_type: Some(1),
            shape: None,
        }))
    }

    fn optional_of(elem: TypeProto) -> TypeProto {
        ty(type_proto::Value::OptionalType(Box::new(Optional {
            elem_type: Some(Box::new(elem)),
        })))
    }

    fn sequence_of(elem: TypeProto) -> TypeProto {
        ty(type_proto::Value::SequenceType(Box::new(Sequence {
            elem_type: Some(Box::new(elem)),
        })))
    }

    fn one_tensor() -> crate::proto::TensorProto {
        let t = Tensor::from_vec(&[2], vec![1.0f32, 2.0]).unwrap();
        crate::tensor::from_tensor("t", &t).unwrap()
    }

    /// A `SequenceProto` of one tensor and an `OptionalProto` of that
    /// tensor are the same bytes: the declared type tells them apart.
    #[test]
    fn an_optional_value_may_be_written_as_its_own_proto() {
        let seq = SequenceProto {
            elem_type: Some(1),
            tensor_values: vec![one_tensor()],
            ..Default::default()
        }
        .encode_to_vec();
        let opt_tensor = OptionalProto {
            elem_type: Some(1),
            tensor_value: Some(one_tensor()),
            ..Default::default()
        }
        .encode_to_vec();
        assert_eq!(seq, opt_tensor);
        let of_seq = optional_of(sequence_of(tensor_ty()));
        let Value::Tuple(fields) = decode_value(&seq, Some(&of_seq)).unwrap() else {
            panic!("a sequence")
        };
        assert!(matches!(&fields[..], [Value::Tensor(t)] if t.shape() == [2]));
        let of_tensor = optional_of(tensor_ty());
        let v = decode_value(&opt_tensor, Some(&of_tensor)).unwrap();
        assert!(matches!(v, Value::Tensor(t) if t.shape() == [2]));
        // A present tensor written as a TensorProto, and an empty optional.
        let bare = one_tensor().encode_to_vec();
        let v = decode_value(&bare, Some(&of_tensor)).unwrap();
        assert!(matches!(v, Value::Tensor(t) if t.shape() == [2]));
        let empty = OptionalProto::default().encode_to_vec();
        let v = decode_value(&empty, Some(&of_seq)).unwrap();
        assert!(matches!(v, Value::Tuple(f) if f.is_empty()));
    }
}
