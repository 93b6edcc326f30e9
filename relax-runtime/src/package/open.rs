//! Opening a package file: mapped, its weights wrapped in place (see the
//! package docs, 4).

use super::{assemble, PackageRef, Weight};
use crate::error::Error;
use crate::executable::Executable;
use crate::tensor::Tensor;
use std::path::Path;
use std::sync::Arc;

/// A package file loaded by [`open`]: the executable ready to run, and
/// what the header says about the model.
pub struct Opened {
    /// The executable, its weights reading the mapped file and its
    /// kernels loaded.
    pub executable: Executable,
    /// The CPU level its kernels were compiled for.
    pub cpu: String,
    /// See [`super::Package::input_names`].
    pub input_names: Vec<String>,
    /// See [`super::Package::output_names`].
    pub output_names: Vec<String>,
}

/// Loads the package file at `path` without reading its weights: the file
/// is mapped read-only, the header, the executable and the library are
/// checked and loaded as by [`PackageRef::load`], and each weight becomes
/// a tensor over the mapped bytes ([`Tensor::from_external`]), which keeps
/// the mapping alive. The weights' checksum is not checked (see the
/// package docs). The file must not be changed while the executable
/// lives (as for any mapped file or loaded library).
pub fn open(path: &Path) -> Result<Opened, Error> {
    let file = std::fs::File::open(path)
        .map_err(|e| Error::Deserialize(format!("cannot open the package: {e}")))?;
    let len = file
        .metadata()
        .map_err(|e| Error::Deserialize(format!("cannot read the package: {e}")))?
        .len();
    if len == 0 {
        // Nothing to map: the decoder says what is missing.
        PackageRef::parse(&[])?;
    }
    // SAFETY: the mapping is read-only; that the file does not change
    // while it is mapped is this function's documented contract, as it is
    // for the library loaded from it.
    let map = unsafe { memmap2::Mmap::map(&file) }
        .map_err(|e| Error::Deserialize(format!("cannot map the package: {e}")))?;
    let map = Arc::new(map);
    let package = PackageRef::parse(&map[..])?;
    package.check_host()?;
    let weights = package.weights.iter().map(|w| {
        let range = w.offset..w.offset + w.bytes.len();
        // SAFETY: a read-only map of a file that does not change (above),
        // kept alive by the tensor.
        let tensor = unsafe { Tensor::from_external(w.dtype, &w.shape, map.clone(), range) }?;
        Ok(Weight {
            constant: w.constant,
            tensor,
        })
    });
    let executable = assemble(
        package.executable,
        weights,
        &package.kernels,
        package.library,
    )?;
    Ok(Opened {
        executable,
        cpu: package.cpu.to_string(),
        input_names: package.input_names.clone(),
        output_names: package.output_names.clone(),
    })
}
