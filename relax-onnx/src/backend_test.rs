//! ONNX's backend test cases: a directory with `model.onnx` and
//! `test_data_set_*/` of `input_<i>.pb` and `output_<i>.pb` tensors (the
//! layout of `onnx/backend/test/data/` in the `onnx` package), and the
//! comparison those tests make, run against an imported module on a
//! target ([`BackendCase::check`]).

use crate::error;
use crate::tensor::decode_tensor;
use crate::{from_onnx_file, ImportOptions, Imported};
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
    pub data_sets: Vec<(Vec<Tensor>, Vec<Tensor>)>,
}

impl BackendCase {
    /// Reads the case in `dir`.
    pub fn load(dir: &Path) -> Result<BackendCase, Error> {
        let read = |p: &Path| std::fs::read(p).map_err(|e| error(format!("{}: {e}", p.display())));
        let model = read(&dir.join("model.onnx"))?;
        let mut sets: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| error(format!("{}: {e}", dir.display())))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_dir())
            .collect();
        sets.sort();
        let mut data_sets = Vec::new();
        for set in sets {
            let tensors = |prefix: &str| -> Result<Vec<Tensor>, Error> {
                let mut out = Vec::new();
                for i in 0.. {
                    let p = set.join(format!("{prefix}_{i}.pb"));
                    if !p.exists() {
                        break;
                    }
                    out.push(decode_tensor(&read(&p)?)?.1);
                }
                Ok(out)
            };
            data_sets.push((tensors("input")?, tensors("output")?));
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
            let args: Vec<Value> = inputs.iter().cloned().map(Value::Tensor).collect();
            let got = match vm.call("main", &args).map_err(|e| format!("run: {e}"))? {
                Value::Tuple(fields) => fields.to_vec(),
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
                let Value::Tensor(g) = g else {
                    return Err(format!("output {k} is not a tensor"));
                };
                compare(g, e, rtol, atol).map_err(|m| format!("output {k}: {m}"))?;
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
