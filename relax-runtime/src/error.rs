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
    /// A value did not match what the program requires (a parameter, a
    /// `match_cast`, a return value). `context` says which ("parameter `x`
    /// of `main`"), `expected` is the StructInfo as the DSL prints it, and
    /// `found` describes the value and, when a dim is at fault, which.
    Mismatch {
        /// What was checked.
        context: String,
        /// What was expected.
        expected: String,
        /// What was found, and where it differs.
        found: String,
    },
    /// A function was called with the wrong number of arguments.
    ArgumentCount {
        /// The function.
        function: String,
        /// How many it takes.
        expected: usize,
        /// How many were given.
        found: usize,
    },
    /// No function of that name in the executable.
    UnknownFunction(String),
    /// A kernel rejected its inputs (e.g. an index out of range in `take`).
    Kernel {
        /// The op (`relax.take`).
        op: String,
        /// Why.
        message: String,
    },
    /// A host function is missing or failed.
    Packed {
        /// The host function's name.
        name: String,
        /// Why.
        message: String,
    },
    /// Serialized bytes are not a valid executable.
    Deserialize(String),
    /// An executable is malformed (an index out of range, a jump past the
    /// end): it did not come from the compiler, or was altered.
    InvalidExecutable(String),
    /// A run-time failure that is not a mismatch: a shape expression that
    /// divides by zero or overflows, the call-depth, step or memory limit.
    Runtime(String),
    /// The program uses something this build cannot run yet.
    Unsupported(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // One diagnostic per line. The first has no `error: ` of its
            // own: whoever reports the error writes that (`relax`'s
            // `error: {e}`), as for every other variant; the ones after it
            // start their own lines with it.
            Error::Compile(ds) => {
                for (i, d) in ds.iter().enumerate() {
                    if i > 0 {
                        f.write_str("\nerror: ")?;
                    }
                    write!(f, "{d}")?;
                }
                Ok(())
            }
            Error::Tensor(e) => e.fmt(f),
            Error::Mismatch {
                context,
                expected,
                found,
            } => {
                write!(f, "{context}: expected {expected}, found {found}")
            }
            Error::ArgumentCount {
                function,
                expected,
                found,
            } => write!(
                f,
                "`{function}` takes {expected} argument{}, but {found} {} given",
                if *expected == 1 { "" } else { "s" },
                if *found == 1 { "was" } else { "were" }
            ),

            Error::UnknownFunction(name) => {
                write!(f, "the executable has no function named `{name}`")
            }
            Error::Kernel { op, message } => write!(f, "{op}: {message}"),
            Error::Packed { name, message } => write!(f, "host function `{name}`: {message}"),
            Error::Deserialize(why) => write!(f, "not a valid executable: {why}"),
            Error::InvalidExecutable(why) => write!(f, "invalid executable: {why}"),
            Error::Runtime(why) => f.write_str(why),
            Error::Unsupported(what) => write!(f, "unsupported: {what}"),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// `error: {e}` (what a reporter writes) has one `error: ` per
    /// diagnostic, never two in a row.
    #[test]
    fn reported_compile_errors_say_error_once_per_diagnostic() {
        let one = Error::from(Diagnostic::new("onnx", "bad model"));
        assert_eq!(format!("error: {one}"), "error: bad model");
        let two = Error::Compile(vec![
            Diagnostic::new("x", "first"),
            Diagnostic::new("x", "second"),
        ]);
        assert_eq!(format!("error: {two}"), "error: first\nerror: second");
    }
}
