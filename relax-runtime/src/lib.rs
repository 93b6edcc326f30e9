//! relax-runtime: what runs a compiled Relax module.
//!
//! | module | what |
//! |---|---|
//! | [`data_type`] | element types |
//! | [`tensor`] | the tensor (ndarray interop) |
//! | [`value`] | run-time values |
//! | [`interop`] | Rust arguments in and results out (the DSL wrappers' conversions) |
//! | [`executable`] | VM code: functions, kernel table, constants |
//! | [`vm`] | the virtual machine |
//! | [`serialize`] | executables to bytes and back |
//! | [`kernels`] | a reference kernel for every op |
//! | [`native`] | native kernels (compiled or interpreted PrimFuncs) and their libraries |
//! | [`packed`] | the host-function registry (`call_packed`) |
//! | [`kv_cache`] | the attention KV cache object and its `vm.builtin.attention_kv_cache_*` builtins |
//! | [`parallel`] | the thread pool parallel loops of compiled kernels run on |
//! | [`workspace`] | the scratch memory of compiled kernels, reused per thread |
//! | [`cpu`] | CPU levels: which ahead-of-time code variant this CPU runs |
//! | [`diagnostic`], [`error`] | what goes wrong, for users |

#![warn(missing_docs)]

pub mod cpu;
pub mod data_type;
pub mod diagnostic;
pub mod error;
pub mod executable;
pub mod interop;
// `kernels::alloc`'s module docs link its private helpers (a map for
// readers of the source); `cargo doc` would reject them as broken links.
#[allow(rustdoc::private_intra_doc_links)]
pub mod kernels;
pub mod kv_cache;
pub mod native;
pub mod package;
pub mod packed;
pub mod parallel;
pub mod serialize;
pub mod tensor;
pub mod value;
pub mod vm;
pub mod workspace;

pub use data_type::{DataType, ParseDataTypeError, TypeCode};
pub use diagnostic::{Diagnostic, Span};
pub use error::Error;
pub use executable::Executable;
pub use interop::{FromValue, PrimArg, TensorArg};
pub use packed::register_packed;
pub use tensor::{Element, Tensor, TensorError};
pub use value::Value;
pub use vm::VirtualMachine;
