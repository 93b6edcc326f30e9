//! DataTypes to LLVM types, and LLVM errors to [`Error`].
//!
//! 1. A value of dtype `bool` is an `i1`; in memory it takes a byte (`i8`),
//!    as in a Tensor.
//! 2. `intN`/`uintN` are `iN` (LLVM integers carry no sign; the operations
//!    pick signed or unsigned forms from the dtype), `float32`/`float64` are
//!    `float`/`double`.
//! 3. `float16` and `bfloat16` values are `float` (they compute in
//!    `float32`); in memory an element is its 16 bits, an `i16` (see
//!    [`super::half`]).
//! 4. Other widths, vector dtypes and handles are rejected with
//!    `Error::Unsupported`.

use inkwell::builder::BuilderError;
use inkwell::context::Context;
use inkwell::types::{BasicType, BasicTypeEnum};
use relax_runtime::{DataType, Error, TypeCode};

/// The LLVM type of a value of `dtype`.
pub(super) fn value_type(ctx: &Context, dtype: DataType) -> Result<BasicTypeEnum<'_>, Error> {
    if dtype.lanes() != 1 {
        return Err(unsupported(format!(
            "the vector dtype `{dtype}` (vectors come from Vectorized loops)"
        )));
    }
    Ok(match (dtype.code(), dtype.bits()) {
        (TypeCode::Int | TypeCode::UInt, 1) => ctx.bool_type().as_basic_type_enum(),
        (TypeCode::Int | TypeCode::UInt, 8) => ctx.i8_type().as_basic_type_enum(),
        (TypeCode::Int | TypeCode::UInt, 16) => ctx.i16_type().as_basic_type_enum(),
        (TypeCode::Int | TypeCode::UInt, 32) => ctx.i32_type().as_basic_type_enum(),
        (TypeCode::Int | TypeCode::UInt, 64) => ctx.i64_type().as_basic_type_enum(),
        (TypeCode::Float, 32) => ctx.f32_type().as_basic_type_enum(),
        (TypeCode::Float, 64) => ctx.f64_type().as_basic_type_enum(),
        (TypeCode::Float | TypeCode::BFloat, 16) => ctx.f32_type().as_basic_type_enum(),
        _ => return Err(unsupported(format!("values of dtype `{dtype}`"))),
    })
}

/// The LLVM type of an element of `dtype` in memory.
pub(super) fn memory_type(ctx: &Context, dtype: DataType) -> Result<BasicTypeEnum<'_>, Error> {
    if dtype.is_bool() {
        return Ok(ctx.i8_type().as_basic_type_enum());
    }
    if dtype.is_half() && dtype.lanes() == 1 {
        return Ok(ctx.i16_type().as_basic_type_enum());
    }
    value_type(ctx, dtype)
}

/// An `Unsupported` error from the back end.
pub(super) fn unsupported(what: String) -> Error {
    Error::Unsupported(format!("LLVM code generation: {what}"))
}

/// An internal failure of LLVM (a builder used wrongly, a module that does
/// not verify): a bug of this back end, reported as an error all the same.
pub(super) fn internal(what: impl std::fmt::Display) -> Error {
    Error::Unsupported(format!("LLVM code generation failed: {what}"))
}

/// `?` for inkwell's builder results.
pub(super) trait Ll<T> {
    /// The value, or the builder's error as an [`Error`].
    fn ll(self) -> Result<T, Error>;
}

impl<T> Ll<T> for Result<T, BuilderError> {
    fn ll(self) -> Result<T, Error> {
        self.map_err(internal)
    }
}
