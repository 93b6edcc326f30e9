//! relax-runtime: what runs a compiled Relax module.
//!
//! For now this crate holds the value types every other crate shares: element
//! [`DataType`]s, the [`Tensor`], [`Diagnostic`]s and the user-facing
//! [`Error`]. The virtual machine, reference kernels and host-function
//! registry come with their issue (see ARCHITECTURE.md).

#![warn(missing_docs)]

pub mod data_type;
pub mod diagnostic;
pub mod error;
pub mod tensor;

pub use data_type::{DataType, ParseDataTypeError, TypeCode};
pub use diagnostic::{Diagnostic, Span};
pub use error::Error;
pub use tensor::{Element, Tensor, TensorError};
