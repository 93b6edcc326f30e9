//! Reference kernels: one per registered op, written on `ndarray`.
//!
//! 1. A kernel takes the call's arguments as [`Value`]s, in the op's argument
//!    order (a tuple argument such as `concat`'s is a `Value::Tuple`, a shape
//!    argument a `Value::Shape`), and the call's attributes, complete and
//!    evaluated ([`KernelAttrs`]).
//! 2. It returns the result value, or an error message for inputs the
//!    kernel cannot handle (an index out of range, an unsupported dtype).
//!    Kernels never panic on user data; the VM has already checked the
//!    shapes the op's StructInfo inference promised.
//! 3. Memory whose size follows from user data comes from [`alloc`]:
//!    checked, reserved fallibly, and charged to the calling VM's memory
//!    limit, so a huge shape is an error and never an abort.
//! 4. These kernels are the oracle the compiled code is tested against: they
//!    favour clarity over speed (matmul goes through ndarray's `dot`).
//!
//! One file per op group, mirroring `relax_core::op`.

pub mod activation;
pub mod alloc;
mod args;
pub mod attention;
pub mod attrs;
pub mod conv;
pub mod create;
pub mod debug;
mod dispatch;
pub mod elementwise;
pub mod grid;
#[cfg(test)]
mod half_types;
pub mod image;
pub mod index;
pub mod linalg;
pub mod manipulate;
pub mod memory;
pub mod pad;
pub mod qdq;
pub mod reduce;
pub mod set;
pub mod sorting;
#[cfg(test)]
mod testing;
pub mod vision;

pub use attrs::KernelAttrs;

use crate::value::Value;

/// A reference kernel.
pub type Kernel = fn(&[Value], &KernelAttrs) -> Result<Value, String>;

/// Every group's table of `(op name, kernel)`.
const TABLES: &[&[(&str, Kernel)]] = &[
    elementwise::KERNELS,
    reduce::KERNELS,
    create::KERNELS,
    activation::KERNELS,
    attention::KERNELS,
    linalg::KERNELS,
    manipulate::KERNELS,
    index::KERNELS,
    conv::KERNELS,
    pad::KERNELS,
    image::KERNELS,
    grid::KERNELS,
    sorting::KERNELS,
    set::KERNELS,
    vision::KERNELS,
    qdq::KERNELS,
    memory::KERNELS,
    debug::KERNELS,
];

/// The kernel of the op named `op` (`relax.add`).
pub fn lookup(op: &str) -> Option<Kernel> {
    TABLES
        .iter()
        .flat_map(|t| t.iter())
        .find(|(n, _)| *n == op)
        .map(|(_, k)| *k)
}

/// Every op that has a kernel.
pub fn ops() -> impl Iterator<Item = &'static str> {
    TABLES.iter().flat_map(|t| t.iter()).map(|(n, _)| *n)
}
