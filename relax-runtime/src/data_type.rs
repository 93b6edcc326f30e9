//! Element data types, as TIR and Relax spell them.
//!
//! The representation follows TVM's `DataType`:
//!
//! 1. A type is a code (`Int`, `UInt`, `Float`, `Handle`), a bit width and a
//!    lane count. Relax values always have `lanes == 1`; vector types exist for
//!    the loop-level IR.
//! 2. `bfloat16` has a code of its own (`BFloat`), as in TVM and DLPack: it
//!    is not an IEEE width of `Float`. [`DataType::is_float`] is true for
//!    both, since every float rule of the ops applies to it alike.
//! 3. `bool` is `UInt(1)`. `void` is `Handle` with 0 bits and 0 lanes: in Relax
//!    it means "dtype unknown" (a `Tensor[_, _]` annotation).
//! 4. Text: `Display` prints TVMScript's long names (`float32`, `int64`, `bool`,
//!    `void`, `float32x4`, `bfloat16`); `FromStr` also accepts Rust's short
//!    names (`f32`, `i64`, `u8`) and `bf16`.
//!
//! The spec says both "bits 0" and "bits 64" for `Void`; this crate follows TVM's
//! code (`DataType::Void()` has 0 bits), so `void` round-trips through text.

use std::fmt;
use std::str::FromStr;

/// The kind of a [`DataType`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TypeCode {
    /// Signed two's-complement integer.
    Int,
    /// Unsigned integer; `UInt(1)` is `bool`.
    UInt,
    /// IEEE floating point.
    Float,
    /// Brain floating point: the top 16 bits of a `float32`.
    BFloat,
    /// An opaque handle; with 0 lanes it is `void`.
    Handle,
}

/// An element type: code, bit width and lane count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DataType {
    code: TypeCode,
    bits: u16,
    lanes: u16,
}

impl DataType {
    /// A type from its parts; no validation (see [`DataType::is_valid_scalar`]).
    pub const fn new(code: TypeCode, bits: u16, lanes: u16) -> Self {
        DataType { code, bits, lanes }
    }
    /// Signed integer of `bits` bits.
    pub const fn int(bits: u16) -> Self {
        Self::new(TypeCode::Int, bits, 1)
    }
    /// Unsigned integer of `bits` bits.
    pub const fn uint(bits: u16) -> Self {
        Self::new(TypeCode::UInt, bits, 1)
    }
    /// Float of `bits` bits.
    pub const fn float(bits: u16) -> Self {
        Self::new(TypeCode::Float, bits, 1)
    }
    /// `bool`, that is `UInt(1)`.
    pub const fn bool() -> Self {
        Self::uint(1)
    }
    /// `bfloat16`: the top half of a `float32` (8 exponent bits, 7 mantissa).
    pub const fn bf16() -> Self {
        Self::new(TypeCode::BFloat, 16, 1)
    }
    /// `float16`: IEEE half precision.
    pub const fn f16() -> Self {
        Self::float(16)
    }
    /// `void`: in Relax, an unknown dtype.
    pub const fn void() -> Self {
        Self::new(TypeCode::Handle, 0, 0)
    }
    /// An opaque 64-bit handle (a pointer).
    pub const fn handle() -> Self {
        Self::new(TypeCode::Handle, 64, 1)
    }
    /// `int64`, the type of every shape dimension.
    pub const fn i64() -> Self {
        Self::int(64)
    }
    /// `int32`.
    pub const fn i32() -> Self {
        Self::int(32)
    }
    /// `float32`.
    pub const fn f32() -> Self {
        Self::float(32)
    }
    /// `float64`.
    pub const fn f64() -> Self {
        Self::float(64)
    }

    /// The type code.
    pub const fn code(self) -> TypeCode {
        self.code
    }
    /// The bit width of one lane.
    pub const fn bits(self) -> u16 {
        self.bits
    }
    /// The lane count (1 for scalars, 0 for `void`).
    pub const fn lanes(self) -> u16 {
        self.lanes
    }
    /// This type with `lanes` lanes.
    pub const fn with_lanes(self, lanes: u16) -> Self {
        Self::new(self.code, self.bits, lanes)
    }
    /// This type with one lane.
    pub const fn element_of(self) -> Self {
        self.with_lanes(1)
    }

    /// Whether this is `void` (unknown in Relax).
    pub fn is_void(self) -> bool {
        self == Self::void()
    }
    /// Whether this is `bool`.
    pub fn is_bool(self) -> bool {
        self.code == TypeCode::UInt && self.bits == 1
    }
    /// Signed integer of any width.
    pub fn is_int(self) -> bool {
        self.code == TypeCode::Int
    }
    /// Unsigned integer of any width, `bool` included.
    pub fn is_uint(self) -> bool {
        self.code == TypeCode::UInt
    }
    /// Signed or unsigned integer, `bool` included.
    pub fn is_integer(self) -> bool {
        self.is_int() || self.is_uint()
    }
    /// Float of any width, `bfloat16` included.
    pub fn is_float(self) -> bool {
        matches!(self.code, TypeCode::Float | TypeCode::BFloat)
    }
    /// Whether this is `bfloat16` (of any lanes).
    pub fn is_bfloat(self) -> bool {
        self.code == TypeCode::BFloat
    }
    /// A float narrower than 32 bits (`float16`, `bfloat16`): stored in its
    /// own width and computed in `float32`.
    pub fn is_half(self) -> bool {
        self.is_float() && self.bits == 16
    }
    /// Whether this is a handle (`void` included).
    pub fn is_handle(self) -> bool {
        self.code == TypeCode::Handle
    }
    /// Bytes one element takes in memory (`bool` takes a byte).
    pub fn size_in_bytes(self) -> usize {
        (self.bits as usize).div_ceil(8) * self.lanes as usize
    }

    /// The DataType rules of the Relax spec: Int/UInt widths 1, 8, 16, 32, 64;
    /// Float widths 16, 32, 64; BFloat width 16; one lane; or `void`.
    pub fn is_valid_scalar(self) -> bool {
        match self.code {
            TypeCode::Int | TypeCode::UInt => {
                self.lanes == 1 && matches!(self.bits, 1 | 8 | 16 | 32 | 64)
            }
            TypeCode::Float => self.lanes == 1 && matches!(self.bits, 16 | 32 | 64),
            TypeCode::BFloat => self.lanes == 1 && self.bits == 16,
            TypeCode::Handle => self.is_void() || (self.bits == 64 && self.lanes == 1),
        }
    }

    /// The Rust-style short name (`f32`, `i64`, `u8`, `bool`, `void`).
    pub fn short_name(self) -> String {
        let base = match self.code {
            _ if self.is_void() => return "void".into(),
            _ if self.is_bool() && self.lanes == 1 => return "bool".into(),
            TypeCode::Int => format!("i{}", self.bits),
            TypeCode::UInt => format!("u{}", self.bits),
            TypeCode::Float => format!("f{}", self.bits),
            TypeCode::BFloat => format!("bf{}", self.bits),
            TypeCode::Handle => "handle".into(),
        };
        if self.lanes == 1 {
            base
        } else {
            format!("{base}x{}", self.lanes)
        }
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_void() {
            return f.write_str("void");
        }
        let base = match self.code {
            TypeCode::UInt if self.bits == 1 => "bool".to_string(),
            TypeCode::Int => format!("int{}", self.bits),
            TypeCode::UInt => format!("uint{}", self.bits),
            TypeCode::Float => format!("float{}", self.bits),
            TypeCode::BFloat => format!("bfloat{}", self.bits),
            TypeCode::Handle => "handle".to_string(),
        };
        if self.lanes == 1 {
            f.write_str(&base)
        } else {
            write!(f, "{base}x{}", self.lanes)
        }
    }
}

/// A string that names no data type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseDataTypeError(pub String);

impl fmt::Display for ParseDataTypeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown data type `{}` (expected a name such as float32, f32, int64, i64, uint8, bool)",
            self.0
        )
    }
}

impl std::error::Error for ParseDataTypeError {}

impl FromStr for DataType {
    type Err = ParseDataTypeError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || ParseDataTypeError(s.to_string());
        match s {
            "bool" => return Ok(Self::bool()),
            "void" => return Ok(Self::void()),
            "handle" => return Ok(Self::handle()),
            _ => {}
        }
        // A lane suffix: `float32x4`.
        let (base, lanes) = match s.rfind('x') {
            Some(i)
                if i > 0 && s[i + 1..].chars().all(|c| c.is_ascii_digit()) && i + 1 < s.len() =>
            {
                let lanes: u16 = s[i + 1..].parse().map_err(|_| err())?;
                (&s[..i], lanes)
            }
            _ => (s, 1),
        };
        if lanes == 0 {
            return Err(err());
        }
        let (code, digits) = if let Some(d) = base.strip_prefix("bfloat") {
            (TypeCode::BFloat, d)
        } else if let Some(d) = base.strip_prefix("bf") {
            (TypeCode::BFloat, d)
        } else if let Some(d) = base.strip_prefix("float") {
            (TypeCode::Float, d)
        } else if let Some(d) = base.strip_prefix("uint") {
            (TypeCode::UInt, d)
        } else if let Some(d) = base.strip_prefix("int") {
            (TypeCode::Int, d)
        } else if let Some(d) = base.strip_prefix('f') {
            (TypeCode::Float, d)
        } else if let Some(d) = base.strip_prefix('u') {
            (TypeCode::UInt, d)
        } else if let Some(d) = base.strip_prefix('i') {
            (TypeCode::Int, d)
        } else if base == "bool" {
            return Ok(Self::bool().with_lanes(lanes));
        } else {
            return Err(err());
        };
        if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
            return Err(err());
        }
        let bits: u16 = digits.parse().map_err(|_| err())?;
        if bits == 0 || bits > 128 {
            return Err(err());
        }
        Ok(Self::new(code, bits, lanes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_and_short_names_parse_to_the_same_type() {
        for (long, short, dt) in [
            ("float32", "f32", DataType::f32()),
            ("float64", "f64", DataType::f64()),
            ("float16", "f16", DataType::float(16)),
            ("bfloat16", "bf16", DataType::bf16()),
            ("int64", "i64", DataType::i64()),
            ("int8", "i8", DataType::int(8)),
            ("uint8", "u8", DataType::uint(8)),
            ("bool", "bool", DataType::bool()),
            ("void", "void", DataType::void()),
        ] {
            assert_eq!(long.parse::<DataType>().unwrap(), dt);
            assert_eq!(short.parse::<DataType>().unwrap(), dt);
            assert_eq!(dt.to_string(), long);
            assert_eq!(dt.short_name(), short);
        }
    }

    #[test]
    fn any_width_and_vector_lanes() {
        let t: DataType = "int7".parse().unwrap();
        assert_eq!((t.code(), t.bits(), t.lanes()), (TypeCode::Int, 7, 1));
        let v: DataType = "float32x4".parse().unwrap();
        assert_eq!(v, DataType::f32().with_lanes(4));
        assert_eq!(v.to_string(), "float32x4");
        assert_eq!(v.size_in_bytes(), 16);
        assert!(!v.is_valid_scalar());
    }

    #[test]
    fn rejects_garbage() {
        for s in [
            "",
            "float",
            "f",
            "x4",
            "int0",
            "float32x0",
            "tensor",
            "i-3",
            "int999",
        ] {
            assert!(s.parse::<DataType>().is_err(), "{s} should not parse");
        }
    }

    #[test]
    fn spec_validity_rules() {
        assert!(DataType::f32().is_valid_scalar());
        assert!(DataType::bool().is_valid_scalar());
        assert!(DataType::void().is_valid_scalar());
        assert!(!DataType::float(8).is_valid_scalar());
        assert!(!DataType::int(7).is_valid_scalar());
    }
}
