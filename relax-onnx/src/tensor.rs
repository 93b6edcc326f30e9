//! ONNX `TensorProto`s as runtime tensors, and ONNX element types as
//! dtypes.
//!
//! A `TensorProto` holds its elements either as `raw_data` (little-endian
//! bytes) or in the typed field for its type (`float_data`, `int32_data`
//! for every integer type of at most 32 bits and `bool`, `int64_data`,
//! `double_data`, `uint64_data` for `uint32`/`uint64`; `float16` and
//! `bfloat16` keep their 16-bit patterns in the low half of each
//! `int32_data` value), or in a file beside the model (`data_location =
//! EXTERNAL`, read through [`ExternalData`] by [`to_tensor_in`], decoded as
//! `raw_data` is). Strings, and the types this project has no dtype for
//! (the float8s and float4, 4-bit integers, complex) are errors naming the
//! tensor.

use crate::error;
use crate::external::ExternalData;
use crate::proto::{tensor_proto, TensorProto};
use relax_runtime::{DataType, Error, Tensor};
use std::borrow::Cow;

/// The dtype of an ONNX element type (`TensorProto.DataType`).
pub fn dtype_of(elem_type: i32) -> Option<DataType> {
    use tensor_proto::DataType as D;
    Some(match D::try_from(elem_type).ok()? {
        D::Float => DataType::f32(),
        D::Double => DataType::f64(),
        D::Int8 => DataType::int(8),
        D::Int16 => DataType::int(16),
        D::Int32 => DataType::int(32),
        D::Int64 => DataType::int(64),
        D::Uint8 => DataType::uint(8),
        D::Uint16 => DataType::uint(16),
        D::Uint32 => DataType::uint(32),
        D::Uint64 => DataType::uint(64),
        D::Bool => DataType::bool(),
        D::Float16 => DataType::f16(),
        D::Bfloat16 => DataType::bf16(),
        _ => return None,
    })
}

/// The name of an ONNX element type, for messages.
pub fn elem_type_name(elem_type: i32) -> String {
    tensor_proto::DataType::try_from(elem_type)
        .map(|d| d.as_str_name().to_string())
        .unwrap_or_else(|_| format!("element type {elem_type}"))
}

/// `t` as a tensor; external data is an error (there is no directory to
/// read it from: see [`to_tensor_in`]). The converters read `Constant`
/// nodes' values with this.
pub fn to_tensor(t: &TensorProto) -> Result<Tensor, Error> {
    to_tensor_in(t, &mut ExternalData::unread())
}

/// `t` as a tensor, its elements read from `external` when `t` keeps them
/// in an external file.
pub fn to_tensor_in(t: &TensorProto, external: &mut ExternalData) -> Result<Tensor, Error> {
    let name = t.name();
    let what = || {
        if name.is_empty() {
            "a tensor".to_string()
        } else {
            format!("tensor `{name}`")
        }
    };
    let dtype = dtype_of(t.data_type()).ok_or_else(|| {
        error(format!(
            "{} has element type {}, which has no dtype here",
            what(),
            elem_type_name(t.data_type())
        ))
    })?;
    if let Some(d) = t.dims.iter().find(|&&d| d < 0) {
        return Err(error(format!("{} has a negative dim {d}", what())));
    }
    let numel = t
        .dims
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(usize::try_from(d).ok()?))
        .ok_or_else(|| error(format!("{} has too many elements", what())))?;
    let width = dtype.size_in_bytes();
    // The file the bytes came from, for messages.
    let mut file = None;
    let mut bytes: Cow<[u8]> = if t.data_location() == tensor_proto::DataLocation::External {
        let (bytes, location) = external.read(t, &what())?;
        file = Some(location);
        Cow::Borrowed(bytes)
    } else if let Some(raw) = &t.raw_data {
        Cow::Borrowed(raw)
    } else {
        use tensor_proto::DataType as D;
        // No capacity from the dims: they may claim more than the data holds
        // (checked below), and a huge claim must not abort the process.
        let mut out = Vec::new();
        match D::try_from(t.data_type()).map_err(|_| error(format!("{}: bad type", what())))? {
            D::Float => t
                .float_data
                .iter()
                .for_each(|v| out.extend(v.to_le_bytes())),
            D::Double => t
                .double_data
                .iter()
                .for_each(|v| out.extend(v.to_le_bytes())),
            D::Int64 => t
                .int64_data
                .iter()
                .for_each(|v| out.extend(v.to_le_bytes())),
            D::Uint32 | D::Uint64 => t
                .uint64_data
                .iter()
                .for_each(|v| out.extend(&v.to_le_bytes()[..width])),
            // int32_data holds every narrower integer type and bool, and
            // the bit patterns of float16 and bfloat16.
            _ => t
                .int32_data
                .iter()
                .for_each(|v| out.extend(&v.to_le_bytes()[..width])),
        }
        Cow::Owned(out)
    };
    if bytes.len() != numel.saturating_mul(width) {
        return Err(error(format!(
            "{} of shape {:?} and type {} has {} bytes of data{}, not {}",
            what(),
            t.dims,
            elem_type_name(t.data_type()),
            bytes.len(),
            file.map(|f| format!(" in the external file `{f}`"))
                .unwrap_or_default(),
            numel.saturating_mul(width)
        )));
    }
    if dtype.is_bool() && bytes.iter().any(|&b| b > 1) {
        // Any non-zero byte is true; the runtime's bools are 0 or 1.
        bytes
            .to_mut()
            .iter_mut()
            .for_each(|b| *b = u8::from(*b != 0));
    }
    Tensor::from_bytes(dtype, &t.dims, &bytes).map_err(|e| error(format!("{}: {e}", what())))
}

/// The ONNX element type of a dtype.
pub fn elem_type(dtype: DataType) -> Option<tensor_proto::DataType> {
    use tensor_proto::DataType as D;
    let all = [
        D::Float,
        D::Double,
        D::Int8,
        D::Int16,
        D::Int32,
        D::Int64,
        D::Uint8,
        D::Uint16,
        D::Uint32,
        D::Uint64,
        D::Bool,
        D::Float16,
        D::Bfloat16,
    ];
    all.into_iter().find(|d| dtype_of(*d as i32) == Some(dtype))
}

/// `tensor` as a `TensorProto` named `name` (its elements as raw data).
pub fn from_tensor(name: &str, tensor: &Tensor) -> Result<TensorProto, Error> {
    let ty = elem_type(tensor.dtype())
        .ok_or_else(|| error(format!("dtype {} has no ONNX element type", tensor.dtype())))?;
    Ok(TensorProto {
        name: Some(name.to_string()),
        dims: tensor.shape().to_vec(),
        data_type: Some(ty as i32),
        raw_data: Some(tensor.as_bytes().to_vec()),
        ..Default::default()
    })
}

/// A `TensorProto` file (the `.pb` inputs and outputs of ONNX's test data)
/// as its name and tensor.
pub fn decode_tensor(bytes: &[u8]) -> Result<(String, Tensor), Error> {
    use prost::Message;
    let t = TensorProto::decode(bytes).map_err(|e| error(format!("not a TensorProto: {e}")))?;
    Ok((t.name().to_string(), to_tensor(&t)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_fields_and_raw_data_give_the_same_tensor() {
        let typed = TensorProto {
            dims: vec![2, 2],
            data_type: Some(tensor_proto::DataType::Float as i32),
            float_data: vec![1.0, 2.0, 3.0, 4.0],
            ..Default::default()
        };
        let t = to_tensor(&typed).unwrap();
        assert_eq!(t.shape(), &[2, 2]);
        let raw = from_tensor("x", &t).unwrap();
        assert_eq!(
            to_tensor(&raw).unwrap().to_vec::<f32>().unwrap(),
            [1.0, 2.0, 3.0, 4.0]
        );
        let int8 = TensorProto {
            dims: vec![3],
            data_type: Some(tensor_proto::DataType::Int8 as i32),
            int32_data: vec![-1, 0, 7],
            ..Default::default()
        };
        assert_eq!(
            to_tensor(&int8).unwrap().to_vec::<i8>().unwrap(),
            [-1, 0, 7]
        );
    }

    #[test]
    fn half_tensors_from_raw_data_and_int32_data() {
        use half::{bf16, f16};
        use tensor_proto::DataType as D;
        let vals = [1.5f32, -0.0, f32::INFINITY, 65504.0];
        let h: Vec<f16> = vals.iter().map(|&v| f16::from_f32(v)).collect();
        let typed = TensorProto {
            dims: vec![2, 2],
            data_type: Some(D::Float16 as i32),
            int32_data: h.iter().map(|v| i32::from(v.to_bits())).collect(),
            ..Default::default()
        };
        let t = to_tensor(&typed).unwrap();
        assert_eq!(t.dtype(), DataType::f16());
        assert_eq!(t.to_vec::<f16>().unwrap(), h);
        let raw = from_tensor("x", &t).unwrap();
        assert_eq!(raw.data_type(), D::Float16 as i32);
        assert_eq!(raw.raw_data().len(), 8);
        assert_eq!(to_tensor(&raw).unwrap(), t);
        let b: Vec<bf16> = vals.iter().map(|&v| bf16::from_f32(v)).collect();
        let typed = TensorProto {
            dims: vec![4],
            data_type: Some(D::Bfloat16 as i32),
            int32_data: b.iter().map(|v| i32::from(v.to_bits())).collect(),
            ..Default::default()
        };
        let t = to_tensor(&typed).unwrap();
        assert_eq!(t.dtype(), DataType::bf16());
        assert_eq!(t.to_vec::<bf16>().unwrap(), b);
        assert_eq!(to_tensor(&from_tensor("y", &t).unwrap()).unwrap(), t);
        assert_eq!(elem_type(DataType::bf16()), Some(D::Bfloat16));
        assert_eq!(dtype_of(D::Float16 as i32), Some(DataType::f16()));
    }

    #[test]
    fn bad_tensors_are_errors_naming_them() {
        let short = TensorProto {
            name: Some("w".into()),
            dims: vec![3],
            data_type: Some(tensor_proto::DataType::Float as i32),
            float_data: vec![1.0],
            ..Default::default()
        };
        let e = to_tensor(&short).unwrap_err().to_string();
        assert!(
            e.contains("tensor `w`") && e.contains("4 bytes of data, not 12"),
            "{e}"
        );
        let f8 = TensorProto {
            name: Some("h".into()),
            data_type: Some(tensor_proto::DataType::Float8e4m3fn as i32),
            ..Default::default()
        };
        let e = to_tensor(&f8).unwrap_err().to_string();
        assert!(
            e.contains("tensor `h` has element type FLOAT8E4M3FN, which has no dtype"),
            "{e}"
        );
        assert!(decode_tensor(&[0xff, 0xff, 0xff]).is_err());
    }
}
