//! ONNX external data: tensors whose elements live in a file beside the
//! model rather than in it (what PyTorch's exporter writes for a model over
//! 2 GB, and `onnx.save_model(..., save_as_external_data=True)` for any).
//!
//! Such a `TensorProto` has `data_location = EXTERNAL` and `external_data`
//! entries: `location`, the file's path relative to the model file's
//! directory; `offset` and `length`, in bytes, both optional (from the
//! start, to the end of the file); and `checksum`, which is not checked.
//! Other keys are ignored. The bytes found there are the tensor's elements
//! as `raw_data` would hold them (see `tensor.rs`).
//!
//! [`ExternalData`] holds the model's directory and the files read so far:
//! each distinct file is memory-mapped once per import, so a multi-GB
//! weight file goes from the page cache into the tensors, one copy each,
//! without first being read into a heap buffer.
//!
//! A location is refused, with an `Err` naming the tensor and the file,
//! when it is absolute, has a `..` component, or resolves (through
//! symlinks) to a path outside the model's directory; so is a missing
//! file, an `offset` or `length` that is not a number or reaches past the
//! end of the file, and external data in a model given as bytes, which has
//! no directory to look in.

use crate::error;
use crate::proto::TensorProto;
use memmap2::Mmap;
use relax_runtime::Error;
use std::collections::HashMap;
use std::fs::File;
use std::path::{Component, Path, PathBuf};

/// Where one import finds the files that external tensors name: the model
/// file's directory, and the files mapped so far.
#[derive(Debug, Default)]
pub struct ExternalData {
    /// The model file's directory; `None` for a model given as bytes, or
    /// where external data is not read.
    dir: Option<PathBuf>,
    /// Where there is no directory, a tensor outside a model (`true`) or
    /// in a model given as bytes: what the error says.
    outside_a_model: bool,
    /// `dir` canonicalized, computed at the first external tensor.
    root: Option<PathBuf>,
    /// Each file read so far, by its canonical path.
    maps: HashMap<PathBuf, Mmap>,
}

/// Where a tensor's external bytes are, as its `external_data` says.
struct Entry<'a> {
    location: &'a str,
    offset: Option<&'a str>,
    length: Option<&'a str>,
}

impl ExternalData {
    /// External data read relative to `dir`, the model file's directory.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        ExternalData {
            dir: Some(dir.into()),
            ..Default::default()
        }
    }

    /// No directory: every external tensor is an error (a model given as
    /// bytes).
    pub fn none() -> Self {
        ExternalData::default()
    }

    /// No directory, for a tensor read on its own or outside a graph's
    /// initializers (a `Constant` node's value): every external tensor is
    /// an error saying where external data is read.
    pub fn unread() -> Self {
        ExternalData {
            outside_a_model: true,
            ..Default::default()
        }
    }

    /// The external bytes of `t` (described as `what` in errors), and the
    /// location they were read from.
    pub fn read<'s, 't>(
        &'s mut self,
        t: &'t TensorProto,
        what: &str,
    ) -> Result<(&'s [u8], &'t str), Error> {
        let entry = entry(t, what)?;
        let location = entry.location;
        let fail = |why: String| error(format!("{what}: external data file `{location}`: {why}"));
        let Some(dir) = &self.dir else {
            if self.outside_a_model {
                return Err(error(format!(
                    "{what} keeps its data in the external file `{location}`, which is read \
                     only for the initializers of a model imported with `from_onnx_file`"
                )));
            }
            return Err(error(format!(
                "{what} keeps its data in the external file `{location}`, but the model was \
                 given as bytes, with no directory to find that file in: import it with \
                 `from_onnx_file`"
            )));
        };
        let relative = Path::new(location);
        if location.is_empty() {
            return Err(fail("the location is empty".into()));
        }
        if relative.is_absolute() || relative.has_root() {
            return Err(fail(
                "the location is an absolute path; it must be relative to the model's directory"
                    .into(),
            ));
        }
        if relative
            .components()
            .any(|c| matches!(c, Component::ParentDir | Component::Prefix(_)))
        {
            return Err(fail(
                "the location has a `..` component; it must stay inside the model's directory"
                    .into(),
            ));
        }
        let root = match &self.root {
            Some(root) => root.clone(),
            None => {
                let root = dir
                    .canonicalize()
                    .map_err(|e| fail(format!("the model's directory {}: {e}", dir.display())))?;
                self.root = Some(root.clone());
                root
            }
        };
        let path = root
            .join(relative)
            .canonicalize()
            .map_err(|e| fail(format!("{}: {e}", root.join(relative).display())))?;
        if !path.starts_with(&root) {
            return Err(fail(format!(
                "it resolves to {}, outside the model's directory {}",
                path.display(),
                root.display()
            )));
        }
        if !self.maps.contains_key(&path) {
            let file = File::open(&path).map_err(|e| fail(format!("{}: {e}", path.display())))?;
            let meta = file
                .metadata()
                .map_err(|e| fail(format!("{}: {e}", path.display())))?;
            if !meta.is_file() {
                return Err(fail(format!("{} is not a regular file", path.display())));
            }
            // SAFETY: the map is only read, and lives as long as this
            // `ExternalData` (one import). Were another process to shrink
            // the file meanwhile, reading past its new end would fault, as
            // with every loader that maps its weights; the file is the
            // user's own model, opened read-only.
            let map = unsafe { Mmap::map(&file) }
                .map_err(|e| fail(format!("{}: cannot map it: {e}", path.display())))?;
            self.maps.insert(path.clone(), map);
        }
        let Some(map) = self.maps.get(&path) else {
            return Err(fail("the file was not mapped".into()));
        };
        let size = map.len() as u64;
        let number = |key: &str, value: Option<&str>| -> Result<Option<u64>, Error> {
            value
                .map(|v| {
                    v.trim()
                        .parse::<u64>()
                        .map_err(|_| fail(format!("`{key}` is `{v}`, expected a number of bytes")))
                })
                .transpose()
        };
        let offset = number("offset", entry.offset)?.unwrap_or(0);
        if offset > size {
            return Err(fail(format!(
                "the offset {offset} is past the end of the file ({size} bytes)"
            )));
        }
        let length = number("length", entry.length)?.unwrap_or(size - offset);
        let end = offset.checked_add(length).filter(|&end| end <= size);
        let Some(end) = end else {
            return Err(fail(format!(
                "{length} bytes from offset {offset} reach past the end of the file ({size} bytes)"
            )));
        };
        // Both are at most the map's length, a usize.
        let (start, end) = (offset as usize, end as usize);
        Ok((&map[start..end], location))
    }
}

/// The `external_data` entries of `t`.
fn entry<'t>(t: &'t TensorProto, what: &str) -> Result<Entry<'t>, Error> {
    let get = |key: &str| {
        t.external_data
            .iter()
            .find(|e| e.key() == key)
            .map(|e| e.value())
    };
    let location = get("location").ok_or_else(|| {
        error(format!(
            "{what} keeps its data in an external file, but its `external_data` has no \
             `location`"
        ))
    })?;
    Ok(Entry {
        location,
        offset: get("offset"),
        length: get("length"),
    })
}
