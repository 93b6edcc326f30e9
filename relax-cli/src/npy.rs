//! `.npy` files as tensors (with `ndarray-npy`).

use ndarray::ArrayD;
use ndarray_npy::{ReadNpyError, ReadNpyExt, WriteNpyExt};
use relax_runtime::{DataType, Tensor};
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

/// The tensor in the `.npy` file at `path` (float32/64, int8 to int64,
/// uint8 to uint64, bool).
pub fn read(path: &Path) -> Result<Tensor, String> {
    let open = || File::open(path).map_err(|e| format!("{}: {e}", path.display()));
    macro_rules! try_type {
        ($($t:ty),*) => {
            $(match ArrayD::<$t>::read_npy(open()?) {
                Ok(a) => return Ok(Tensor::from_ndarray(&a)),
                Err(ReadNpyError::WrongDescriptor(_)) => {}
                Err(e) => return Err(format!("{}: {e}", path.display())),
            })*
        };
    }
    try_type!(f32, f64, i64, i32, i16, i8, u8, u16, u32, u64, bool);
    Err(format!(
        "{}: the element type is not one a tensor can hold",
        path.display()
    ))
}

/// Writes `t` to `path` as `.npy`.
pub fn write(path: &Path, t: &Tensor) -> Result<(), String> {
    let file = File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let w = BufWriter::new(file);
    let err = |e: String| format!("{}: {e}", path.display());
    macro_rules! write_as {
        ($t:ty) => {
            t.to_ndarray::<$t>()
                .map_err(|e| err(e.to_string()))?
                .write_npy(w)
                .map_err(|e| err(e.to_string()))
        };
    }
    let d = t.dtype();
    if d == DataType::f32() {
        write_as!(f32)
    } else if d == DataType::f64() {
        write_as!(f64)
    } else if d == DataType::i64() {
        write_as!(i64)
    } else if d == DataType::i32() {
        write_as!(i32)
    } else if d == DataType::int(16) {
        write_as!(i16)
    } else if d == DataType::int(8) {
        write_as!(i8)
    } else if d == DataType::uint(8) {
        write_as!(u8)
    } else if d == DataType::uint(16) {
        write_as!(u16)
    } else if d == DataType::uint(32) {
        write_as!(u32)
    } else if d == DataType::uint(64) {
        write_as!(u64)
    } else if d.is_bool() {
        write_as!(bool)
    } else {
        Err(err(format!("dtype {d} cannot be written as .npy")))
    }
}
