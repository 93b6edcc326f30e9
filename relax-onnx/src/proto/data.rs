//! The messages of ONNX's `onnx-data.proto` (ONNX 1.23): `SequenceProto`,
//! `OptionalProto` and `MapProto`, in which ONNX's backend test data hold
//! the sequences, optionals and maps a model takes or returns. Written by
//! hand with prost's derive (three messages, their field numbers as
//! `onnx-data.proto` declares them), beside the generated `onnx.rs`.

use super::{SparseTensorProto, TensorProto};

/// A sequence of values of one kind (`elem_type`, a
/// [`sequence_proto::DataType`]): the field of that kind holds them.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct SequenceProto {
    #[prost(string, optional, tag = "1")]
    pub name: ::core::option::Option<::prost::alloc::string::String>,
    #[prost(int32, optional, tag = "2")]
    pub elem_type: ::core::option::Option<i32>,
    #[prost(message, repeated, tag = "3")]
    pub tensor_values: ::prost::alloc::vec::Vec<TensorProto>,
    #[prost(message, repeated, tag = "4")]
    pub sparse_tensor_values: ::prost::alloc::vec::Vec<SparseTensorProto>,
    #[prost(message, repeated, tag = "5")]
    pub sequence_values: ::prost::alloc::vec::Vec<SequenceProto>,
    #[prost(message, repeated, tag = "6")]
    pub map_values: ::prost::alloc::vec::Vec<MapProto>,
    #[prost(message, repeated, tag = "7")]
    pub optional_values: ::prost::alloc::vec::Vec<OptionalProto>,
}

/// Nested types of [`SequenceProto`].
pub mod sequence_proto {
    /// What a sequence holds (also what an optional holds:
    /// `OptionalProto.DataType` has the same values).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, ::prost::Enumeration)]
    #[repr(i32)]
    pub enum DataType {
        Undefined = 0,
        Tensor = 1,
        SparseTensor = 2,
        Sequence = 3,
        Map = 4,
        Optional = 5,
    }
}

/// A map: keys (integers or strings) and a sequence of values.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct MapProto {
    #[prost(string, optional, tag = "1")]
    pub name: ::core::option::Option<::prost::alloc::string::String>,
    #[prost(int32, optional, tag = "2")]
    pub key_type: ::core::option::Option<i32>,
    #[prost(int64, repeated, packed = "false", tag = "3")]
    pub keys: ::prost::alloc::vec::Vec<i64>,
    #[prost(bytes = "vec", repeated, tag = "4")]
    pub string_keys: ::prost::alloc::vec::Vec<::prost::alloc::vec::Vec<u8>>,
    #[prost(message, optional, tag = "5")]
    pub values: ::core::option::Option<SequenceProto>,
}

/// An optional value: none, or one value of the kind `elem_type` says (a
/// [`sequence_proto::DataType`]) in the field of that kind.
#[derive(Clone, PartialEq, ::prost::Message)]
pub struct OptionalProto {
    #[prost(string, optional, tag = "1")]
    pub name: ::core::option::Option<::prost::alloc::string::String>,
    #[prost(int32, optional, tag = "2")]
    pub elem_type: ::core::option::Option<i32>,
    #[prost(message, optional, tag = "3")]
    pub tensor_value: ::core::option::Option<TensorProto>,
    #[prost(message, optional, tag = "4")]
    pub sparse_tensor_value: ::core::option::Option<SparseTensorProto>,
    #[prost(message, optional, boxed, tag = "5")]
    pub sequence_value: ::core::option::Option<::prost::alloc::boxed::Box<SequenceProto>>,
    #[prost(message, optional, boxed, tag = "6")]
    pub map_value: ::core::option::Option<::prost::alloc::boxed::Box<MapProto>>,
    #[prost(message, optional, boxed, tag = "7")]
    pub optional_value: ::core::option::Option<::prost::alloc::boxed::Box<OptionalProto>>,
}
