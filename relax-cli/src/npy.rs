//! `.npy` files as tensors (with `ndarray-npy`).
//!
//! 1. Every dtype NumPy has reads and writes as itself: float16/32/64,
//!    int8 to int64, uint8 to uint64, bool. `ndarray-npy` has no float16
//!    element, so a float16 file (`'<f2'` or `'>f2'`) is read as the
//!    unsigned integers of the same width and byte order (the header's
//!    type letter swapped, `f` for `u`) and those bits taken as float16;
//!    writing does the reverse.
//! 2. `bfloat16` has no NumPy dtype. A bfloat16 tensor is written as
//!    float32, which holds every bfloat16 exactly (the widening appends 16
//!    zero bits), and [`write`] returns a note saying so for the caller to
//!    show.

use ndarray::ArrayD;
use ndarray_npy::{ReadNpyError, ReadNpyExt, WriteNpyExt};
use relax_runtime::{DataType, Tensor};
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;

/// The tensor in the `.npy` file at `path` (float16/32/64, int8 to int64,
/// uint8 to uint64, bool).
pub fn read(path: &Path) -> Result<Tensor, String> {
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let bytes = std::fs::read(path).map_err(|e| err(&e))?;
    macro_rules! try_type {
        ($($t:ty),*) => {
            $(match ArrayD::<$t>::read_npy(bytes.as_slice()) {
                Ok(a) => return Ok(Tensor::from_ndarray(&a)),
                Err(ReadNpyError::WrongDescriptor(_)) => {}
                Err(e) => return Err(err(&e)),
            })*
        };
    }
    try_type!(f32, f64, i64, i32, i16, i8, u8, u16, u32, u64, bool);
    if let Some(as_u16) = swap_type_letter(&bytes, b'f', b'u') {
        let bits = ArrayD::<u16>::read_npy(as_u16.as_slice()).map_err(|e| err(&e))?;
        let halves = bits.mapv(half::f16::from_bits);
        return Ok(Tensor::from_ndarray(&halves));
    }
    Err(err(&"the element type is not one a tensor can hold"))
}

/// `bytes` (a `.npy` file) with the header's 2-byte type `'<{from}2'` or
/// `'>{from}2'` changed to `{to}`, or `None` when the file is not one of
/// that type. The header's length does not change.
fn swap_type_letter(bytes: &[u8], from: u8, to: u8) -> Option<Vec<u8>> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return None;
    }
    let (start, len) = match bytes[6] {
        1 => (10usize, u16::from_le_bytes([bytes[8], bytes[9]]) as usize),
        2 | 3 if bytes.len() >= 12 => (
            12,
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
        ),
        _ => return None,
    };
    let header = bytes.get(start..start.checked_add(len)?)?;
    let text = std::str::from_utf8(header).ok()?;
    let descr = text.find("'descr'")?;
    let value = descr + text[descr..].find(':')? + 1;
    let rest = text[value..].trim_start();
    let at = value + (text[value..].len() - rest.len());
    let quoted = rest.as_bytes();
    if quoted.len() < 5 || quoted[0] != b'\'' || quoted[4] != b'\'' {
        return None;
    }
    if !matches!(quoted[1], b'<' | b'>') || quoted[2] != from || quoted[3] != b'2' {
        return None;
    }
    let mut out = bytes.to_vec();
    out[start + at + 2] = to;
    Some(out)
}

/// Writes `t` to `path` as `.npy`. A bfloat16 tensor is written as
/// float32 (exactly; module docs, item 2), and the note saying so is
/// returned.
pub fn write(path: &Path, t: &Tensor) -> Result<Option<String>, String> {
    let err = |e: String| format!("{}: {e}", path.display());
    let d = t.dtype();
    if d.is_bfloat() {
        let wide = t.astype(DataType::f32()).map_err(|e| err(e.to_string()))?;
        write(path, &wide)?;
        return Ok(Some(format!(
            "{}: bfloat16 has no .npy dtype; written as float32 (every bfloat16 is one exactly)",
            path.display()
        )));
    }
    let mut out = Vec::new();
    macro_rules! write_as {
        ($t:ty) => {
            t.to_ndarray::<$t>()
                .map_err(|e| err(e.to_string()))?
                .write_npy(&mut out)
                .map_err(|e| err(e.to_string()))
        };
    }
    if d == DataType::f32() {
        write_as!(f32)
    } else if d == DataType::f64() {
        write_as!(f64)
    } else if d == DataType::f16() {
        let bits = t
            .to_ndarray::<half::f16>()
            .map_err(|e| err(e.to_string()))?
            .mapv(half::f16::to_bits);
        bits.write_npy(&mut out).map_err(|e| err(e.to_string()))?;
        out = swap_type_letter(&out, b'u', b'f')
            .ok_or_else(|| err("internal error: no uint16 header to retype".into()))?;
        Ok(())
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
    }?;
    let file = File::create(path).map_err(|e| err(e.to_string()))?;
    let mut w = BufWriter::new(file);
    std::io::Write::write_all(&mut w, &out)
        .and_then(|()| std::io::Write::flush(&mut w))
        .map_err(|e| err(e.to_string()))?;
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};

    fn scratch(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("relax-npy-{}-{name}.npy", std::process::id()))
    }

    /// `.npy` bytes as NumPy writes them: a version 1.0 header padded to
    /// 64 bytes, then the data.
    fn numpy_file(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
        let mut header =
            format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
        while (10 + header.len() + 1) % 64 != 0 {
            header.push(' ');
        }
        header.push('\n');
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend((header.len() as u16).to_le_bytes());
        out.extend(header.as_bytes());
        out.extend(data);
        out
    }

    #[test]
    fn float16_files_read_and_write_as_numpy_has_them() {
        let vals = [1.5f32, -0.0, f32::INFINITY, 65504.0, 1e-7, -2.25];
        let h: Vec<f16> = vals.iter().map(|&v| f16::from_f32(v)).collect();
        let le: Vec<u8> = h.iter().flat_map(|v| v.to_le_bytes()).collect();
        let path = scratch("f16");
        std::fs::write(&path, numpy_file("<f2", "(2, 3)", &le)).unwrap();
        let t = read(&path).unwrap();
        assert_eq!((t.dtype(), t.shape()), (DataType::f16(), &[2i64, 3][..]));
        assert_eq!(t.to_vec::<f16>().unwrap(), h);
        // Big-endian data reads too.
        let be: Vec<u8> = h.iter().flat_map(|v| v.to_be_bytes()).collect();
        std::fs::write(&path, numpy_file(">f2", "(6,)", &be)).unwrap();
        assert_eq!(read(&path).unwrap().to_vec::<f16>().unwrap(), h);
        // Written back: NumPy's header type and the same bytes.
        assert_eq!(write(&path, &t), Ok(None));
        let bytes = std::fs::read(&path).unwrap();
        assert!(String::from_utf8_lossy(&bytes[..64]).contains("'descr': '<f2'"));
        assert!(bytes.ends_with(&le));
        assert_eq!(read(&path).unwrap(), t);
        // A NaN keeps its bits.
        let nan = Tensor::from_vec(&[1], vec![f16::NAN]).unwrap();
        write(&path, &nan).unwrap();
        assert!(read(&path).unwrap().to_vec::<f16>().unwrap()[0].is_nan());
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn bfloat16_is_written_as_float32_with_a_note() {
        let b: Vec<bf16> = [0.1f32, -3.0e38, 1.0]
            .iter()
            .map(|&v| bf16::from_f32(v))
            .collect();
        let t = Tensor::from_vec(&[3], b.clone()).unwrap();
        let path = scratch("bf16");
        let note = write(&path, &t).unwrap().unwrap();
        assert!(
            note.contains("bfloat16 has no .npy dtype; written as float32"),
            "{note}"
        );
        let back = read(&path).unwrap();
        assert_eq!(back.dtype(), DataType::f32());
        let want: Vec<f32> = b.iter().map(|v| v.to_f32()).collect();
        assert_eq!(back.to_vec::<f32>().unwrap(), want);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn other_two_byte_types_are_not_taken_for_float16() {
        assert_eq!(
            swap_type_letter(&numpy_file("<i2", "(1,)", &[0, 0]), b'f', b'u'),
            None
        );
        assert_eq!(
            swap_type_letter(&numpy_file("<f4", "(1,)", &[0; 4]), b'f', b'u'),
            None
        );
        assert_eq!(
            swap_type_letter(b"\x93NUMPY\x01\x00\xff\xff{", b'f', b'u'),
            None
        );
        assert_eq!(swap_type_letter(b"not npy", b'f', b'u'), None);
        let path = scratch("c8");
        std::fs::write(&path, numpy_file("<c8", "(1,)", &[0; 8])).unwrap();
        assert!(read(&path)
            .unwrap_err()
            .contains("not one a tensor can hold"));
        std::fs::remove_file(&path).unwrap();
    }
}
