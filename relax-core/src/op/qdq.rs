//! Quantize and dequantize (TVM's `relax.op.qdq`):
//!
//! 1. `quantize(data, scale, zero_point, axis, out_dtype)`: `saturate(
//!    round(data / scale) + zero_point)` in the integer `out_dtype`
//!    (default `int8`), the quotient in `data`'s float type and rounded half
//!    to even, the sum clamped to the type's range.
//! 2. `dequantize(data, scale, zero_point, axis, out_dtype)`: `(data -
//!    zero_point) · scale` in the float `out_dtype` (default `float32`),
//!    the difference taken exactly in integers.
//!
//! The integer side (`quantize`'s `out_dtype`, `dequantize`'s `data`, every
//! `zero_point`) has at most 32 bits, where the float64 and int64
//! arithmetic above is exact.
//!
//! `scale` (a float) and `zero_point` (an integer) are each a scalar (one
//! pair for the whole tensor) or 1-d, one per index along `axis` (default
//! -1) of `data`. The result has `data`'s shape.

use super::attr::{AttrDefault, AttrSpec, AttrType};
use super::infer::{arg_name, attr_dtype, attr_int, error, normalize_axis, tensor_arg};
use super::{Arity, OpInfo, OpPatternKind};
use crate::arith::{Analyzer, Proof};
use crate::ir::{Call, StructInfo, StructInfoKind, TensorStructInfo};
use relax_runtime::{DataType, Diagnostic};

/// Checks `scale` (argument 1) and `zero_point` (argument 2): scalars or
/// 1-d of `data`'s length along `axis`; `scale` a float, `zero_point` an
/// integer.
fn check_params(call: &Call, ana: &Analyzer) -> Result<(), Diagnostic> {
    let data = tensor_arg(call, 0)?;
    let axis = attr_int(call, "axis").unwrap_or(-1);
    let along = if data.is_unknown_ndim() || data.ndim == 0 {
        None
    } else {
        let a = normalize_axis(call, axis, data.ndim)?;
        data.shape_values().map(|s| s[a].clone())
    };
    for (i, want_float) in [(1, true), (2, false)] {
        let p = tensor_arg(call, i)?;
        let d = p.dtype;
        if !d.is_void() && (d.is_float() != want_float || (!want_float && d.bits() > 32)) {
            let kind = if want_float {
                "a float"
            } else {
                "an integer (of at most 32 bits)"
            };
            return Err(error(
                call,
                "op-dtype",
                format!("{} must be {kind} tensor, found {d}", arg_name(call, i)),
            ));
        }
        if !p.is_unknown_ndim() && p.ndim > 1 {
            return Err(error(
                call,
                "op-rank",
                format!(
                    "{} must be a scalar or 1-d, found rank {}",
                    arg_name(call, i),
                    p.ndim
                ),
            ));
        }
        if let (Some(n), Some([len])) = (&along, p.shape_values()) {
            if ana.prove(&n.clone().eq_(len.clone())) == Proof::Disproven {
                return Err(error(
                    call,
                    "op-shape",
                    format!(
                        "{} has {len} elements, but data has {n} along axis {axis}",
                        arg_name(call, i)
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The result: `data`'s shape in the `out_dtype` attribute, which must be
/// an integer type (`want_float` false) or a float type.
fn infer_qdq(call: &Call, ana: &Analyzer, want_float: bool) -> Result<StructInfo, Diagnostic> {
    let data = tensor_arg(call, 0)?;
    let wide_int = |d: DataType| !d.is_float() && d.bits() > 32;
    if !data.dtype.is_void() && (data.dtype.is_float() == want_float || wide_int(data.dtype)) {
        let kind = if want_float {
            "an integer (of at most 32 bits)"
        } else {
            "a float"
        };
        return Err(error(
            call,
            "op-dtype",
            format!(
                "{} must be {kind} tensor, found {}",
                arg_name(call, 0),
                data.dtype
            ),
        ));
    }
    check_params(call, ana)?;
    let out = attr_dtype(call, "out_dtype");
    if out.is_void() || out.is_float() != want_float || out.is_bool() || wide_int(out) {
        let kind = if want_float {
            "a float"
        } else {
            "an integer (of at most 32 bits)"
        };
        return Err(error(
            call,
            "op-dtype",
            format!("out_dtype must be {kind} type, found {out}"),
        ));
    }
    Ok(StructInfo::new(StructInfoKind::Tensor(TensorStructInfo {
        dtype: out,
        ..data.clone()
    })))
}

fn infer_quantize(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    infer_qdq(call, ana, false)
}

fn infer_dequantize(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    infer_qdq(call, ana, true)
}

/// The quantization ops.
pub const OPS: &[OpInfo] = &[
    OpInfo {
        name: "relax.quantize",
        args: &["data", "scale", "zero_point"],
        arity: Arity::Exact(3),
        attrs: &[
            AttrSpec::new("axis", AttrType::Int, AttrDefault::Int(-1)),
            AttrSpec::new(
                "out_dtype",
                AttrType::DataType,
                AttrDefault::DataType("int8"),
            ),
        ],
        infer_struct_info: infer_quantize,
        purity: true,
        pattern: OpPatternKind::Broadcast,
    },
    OpInfo {
        name: "relax.dequantize",
        args: &["data", "scale", "zero_point"],
        arity: Arity::Exact(3),
        attrs: &[
            AttrSpec::new("axis", AttrType::Int, AttrDefault::Int(-1)),
            AttrSpec::new(
                "out_dtype",
                AttrType::DataType,
                AttrDefault::DataType("float32"),
            ),
        ],
        infer_struct_info: infer_dequantize,
        purity: true,
        pattern: OpPatternKind::Broadcast,
    },
];

#[cfg(test)]
mod tests {
    use crate::ir::AttrValue;
    use crate::op::testing::*;

    #[test]
    fn quantize_and_dequantize() {
        let n = sym("n");
        assert_infers(
            "relax.quantize",
            &[t(&[n.clone(), d(3)], F32), t(&[d(3)], F32), t(&[d(3)], I32)],
            &[("out_dtype", AttrValue::from("uint8"))],
            "R.Tensor((n, 3), dtype=\"uint8\")",
        );
        assert_infers(
            "relax.quantize",
            &[t(&[n.clone(), d(3)], F32), t(&[], F32), t(&[], I32)],
            &[],
            "R.Tensor((n, 3), dtype=\"int8\")",
        );
        assert_infers(
            "relax.dequantize",
            &[
                t(&[n.clone(), d(3)], I32),
                t(&[n.clone()], F32),
                t(&[], I32),
            ],
            &[("axis", AttrValue::Int(0))],
            "R.Tensor((n, 3), dtype=\"float32\")",
        );
        assert_fails(
            "relax.quantize",
            &[t(&[n.clone(), d(3)], F32), t(&[d(4)], F32), t(&[], I32)],
            &[],
            "quantize: scale has 4 elements, but data has 3 along axis -1",
        );
        assert_fails(
            "relax.quantize",
            &[t(&[d(3)], F32), t(&[], I32), t(&[], I32)],
            &[],
            "quantize: scale must be a float tensor, found int32",
        );
        assert_fails(
            "relax.quantize",
            &[t(&[d(3)], F32), t(&[], F32), t(&[], I32)],
            &[("out_dtype", AttrValue::from("int64"))],
            "quantize: out_dtype must be an integer (of at most 32 bits) type, found int64",
        );
        assert_fails(
            "relax.dequantize",
            &[t(&[d(3)], F32), t(&[], F32), t(&[], I32)],
            &[],
            "dequantize: data must be an integer (of at most 32 bits) tensor, found float32",
        );
        assert_fails(
            "relax.quantize",
            &[t(&[d(3)], F32), t(&[], F32), t(&[], I32)],
            &[("out_dtype", AttrValue::from("float32"))],
            "quantize: out_dtype must be an integer (of at most 32 bits) type, found float32",
        );
        assert_fails(
            "relax.dequantize",
            &[t(&[d(2), d(3)], I32), t(&[d(2), d(1)], F32), t(&[], I32)],
            &[],
            "dequantize: scale must be a scalar or 1-d, found rank 2",
        );
    }
}
