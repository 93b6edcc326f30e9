//! `Error`: the one error type users of relax-rs see.
//!
//! Every fallible public API (parsing, passes, building, running) returns
//! `Result<_, Error>`. Variants are added as the parts that raise them land.

use crate::diagnostic::Diagnostic;
use crate::tensor::TensorError;
use std::fmt;

/// What went wrong.
#[derive(Clone, Debug, PartialEq)]
pub enum Error {
    /// The program was rejected; each diagnostic says where and why.
    Compile(Vec<Diagnostic>),
    /// A tensor could not be built or read.
    Tensor(TensorError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Compile(ds) => {
                for (i, d) in ds.iter().enumerate() {
                    if i > 0 {
                        f.write_str("\n")?;
                    }
                    write!(f, "error: {d}")?;
                }
                Ok(())
            }
            Error::Tensor(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {}

impl From<Diagnostic> for Error {
    fn from(d: Diagnostic) -> Self {
        Error::Compile(vec![d])
    }
}
impl From<Vec<Diagnostic>> for Error {
    fn from(ds: Vec<Diagnostic>) -> Self {
        Error::Compile(ds)
    }
}
impl From<TensorError> for Error {
    fn from(e: TensorError) -> Self {
        Error::Tensor(e)
    }
}
