//! A package's weights: the executable's tensor constants, stored beside
//! its serialized bytes rather than inside them, so that loading can wrap
//! them in place (see the package docs).
//!
//! 1. [`Package::split_executable`] serializes an executable with each
//!    tensor of its constant pool replaced by a placeholder, the string
//!    [`SLOT`], and returns the tensors by constant index.
//! 2. The weight table ([`read_table`], a checksummed section) gives each weight's constant
//!    index, dtype, shape, and offset and length in the weight data; it is
//!    checked entry by entry: a known dtype, the length exactly the
//!    shape's bytes, inside the data, each constant index once.
//! 3. [`place`] puts the weights back: each must land on a placeholder,
//!    and no placeholder may be left over.

use super::{Package, Reader, WeightRef, WEIGHT_ALIGN};
use crate::data_type::DataType;
use crate::error::Error;
use crate::executable::Executable;
use crate::tensor::Tensor;
use crate::value::Value;
use std::collections::HashSet;

/// The placeholder of a weight in the serialized constant pool.
pub(super) const SLOT: &str = "relax.package.weight";

/// A tensor constant of an executable, stored outside it.
#[derive(Clone, Debug, PartialEq)]
pub struct Weight {
    /// Its index in the executable's constant pool.
    pub constant: usize,
    /// The tensor.
    pub tensor: Tensor,
}

impl Package {
    /// `exec` serialized with its tensor constants replaced by
    /// placeholders, and those tensors: the [`Package::executable`] and
    /// [`Package::weights`] of a package of `exec`.
    pub fn split_executable(exec: &Executable) -> (Vec<u8>, Vec<Weight>) {
        let mut rest = Executable {
            functions: exec.functions.clone(),
            kernels: exec.kernels.clone(),
            packed: exec.packed.clone(),
            constants: Vec::with_capacity(exec.constants.len()),
            natives: exec.natives.clone(),
            library: None,
        };
        let mut weights = Vec::new();
        for (i, c) in exec.constants.iter().enumerate() {
            match c {
                Value::Tensor(t) => {
                    weights.push(Weight {
                        constant: i,
                        tensor: t.clone(),
                    });
                    rest.constants.push(Value::Str(SLOT.into()));
                }
                other => rest.constants.push(other.clone()),
            }
        }
        (rest.to_bytes(), weights)
    }
}

/// The weight table and the weight data after it (see the package docs):
/// the weights, and the data with its recorded checksum.
#[allow(clippy::type_complexity)]
pub(super) fn read_table<'a>(
    r: &mut Reader<'a>,
) -> Result<(Vec<WeightRef<'a>>, (&'a [u8], u64)), Error> {
    let table = r.section("the weight table")?;
    let table_start = r.pos - 8 - table.len();
    let r_data = r;
    let r = &mut Reader {
        bytes: table,
        pos: 0,
    };
    // An entry is at least its constant, dtype length, rank, offset and
    // length.
    let count = r.len(40, "the weight table")?;
    let mut entries = Vec::with_capacity(count);
    let mut seen = HashSet::new();
    for _ in 0..count {
        let at = table_start + r.pos;
        let constant = r.u64("a weight's constant index")?;
        let dtype_text = r.str("a weight's dtype")?;
        let dtype: DataType = dtype_text.parse().map_err(|_| {
            Error::Deserialize(format!(
                "the weight at byte {at} has dtype {dtype_text:?}, which is not a data type"
            ))
        })?;
        let rank = r.len(8, "a weight's shape")?;
        let shape = (0..rank)
            .map(|_| r.u64("a weight's dimension").map(|d| d as i64))
            .collect::<Result<Vec<i64>, Error>>()?;
        let offset = r.u64("a weight's offset")?;
        let length = r.u64("a weight's length")?;
        let constant = usize::try_from(constant)
            .ok()
            .filter(|c| seen.insert(*c))
            .ok_or_else(|| {
                Error::Deserialize(format!(
                    "the weight at byte {at} fills constant {constant}, which another weight fills"
                ))
            })?;
        let bytes = expected_bytes(dtype, &shape).ok_or_else(|| {
            Error::Deserialize(format!(
                "the weight at byte {at} is a {dtype} tensor of shape {}, which no tensor can be",
                crate::tensor::fmt_shape(&shape)
            ))
        })?;
        if bytes as u64 != length {
            return Err(Error::Deserialize(format!(
                "the weight at byte {at} is a {dtype} tensor of shape {}, which needs {bytes} bytes, and its length is {length}",
                crate::tensor::fmt_shape(&shape)
            )));
        }
        entries.push((constant, dtype, shape, offset, length, at));
    }
    if r.pos != table.len() {
        return Err(Error::Deserialize(format!(
            "{} unexpected bytes after the weight table's entries",
            table.len() - r.pos
        )));
    }
    let r = r_data;
    let data_len = r.u64("the weight data")?;
    let pad = r.pos.next_multiple_of(WEIGHT_ALIGN) - r.pos;
    if r.take(pad, "the weight data's padding")?
        .iter()
        .any(|&b| b != 0)
    {
        return Err(Error::Deserialize(format!(
            "the padding before the weight data at byte {} is not zeros: the package is damaged",
            r.pos - pad
        )));
    }
    let start = r.pos;
    let data_len = usize::try_from(data_len).unwrap_or(usize::MAX);
    let data = r.take(data_len, "the weight data")?;
    let sum = r.u64("the weight data's checksum")?;
    let weights = entries
        .into_iter()
        .map(|(constant, dtype, shape, offset, length, at)| {
            let end = offset.checked_add(length).filter(|&e| e <= data.len() as u64);
            let Some(end) = end else {
                return Err(Error::Deserialize(format!(
                    "the weight at byte {at} spans bytes {offset}..{offset}+{length} of weight data of {} bytes",
                    data.len()
                )));
            };
            Ok(WeightRef {
                constant,
                dtype,
                shape,
                bytes: &data[offset as usize..end as usize],
                offset: start + offset as usize,
            })
        })
        .collect::<Result<Vec<_>, Error>>()?;
    Ok((weights, (data, sum)))
}

/// The bytes of a `dtype` tensor of `shape`, if there can be one.
fn expected_bytes(dtype: DataType, shape: &[i64]) -> Option<usize> {
    if dtype.is_void() || dtype.lanes() != 1 {
        return None;
    }
    let mut n = dtype.size_in_bytes();
    for &d in shape {
        n = n.checked_mul(usize::try_from(d).ok()?)?;
    }
    (n <= isize::MAX as usize).then_some(n)
}

/// Puts `weights` into `exec`'s constant pool, each on its placeholder;
/// fails when one names no placeholder or one is left unfilled.
pub(super) fn place(
    exec: &mut Executable,
    weights: impl Iterator<Item = Result<Weight, Error>>,
) -> Result<(), Error> {
    let count = exec.constants.len();
    for w in weights {
        let w = w?;
        let slot = exec.constants.get_mut(w.constant).ok_or_else(|| {
            Error::Deserialize(format!(
                "a weight fills constant {}, and the executable has {count} constants",
                w.constant
            ))
        })?;
        if !is_slot(slot) {
            return Err(Error::Deserialize(format!(
                "a weight fills constant {}, which is {}, not a weight's placeholder",
                w.constant,
                slot.describe()
            )));
        }
        *slot = Value::Tensor(w.tensor);
    }
    if let Some(i) = exec.constants.iter().position(is_slot) {
        return Err(Error::Deserialize(format!(
            "constant {i} of the executable is a weight's placeholder, and no weight fills it"
        )));
    }
    Ok(())
}

fn is_slot(v: &Value) -> bool {
    matches!(v, Value::Str(s) if &**s == SLOT)
}
