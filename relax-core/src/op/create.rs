//! Tensor creation: `zeros`, `ones` (shape argument, `dtype` attribute) and
//! `full` (shape and a rank-0 fill value; `dtype` defaults to the value's).

use super::attr::{AttrDefault, AttrSpec, AttrType};
use super::infer::{arg_name, attr_dtype, error, shape_arg, tensor, tensor_arg};
use super::{Arity, OpInfo, OpPatternKind};
use crate::arith::Analyzer;
use crate::ir::{Call, StructInfo};
use relax_runtime::Diagnostic;

fn infer_fill(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let dtype = attr_dtype(call, "dtype");
    Ok(match shape_arg(call, 0)? {
        Ok(dims) => tensor(Some(dims), 0, dtype, ana),
        Err(ndim) => StructInfo::tensor_ndim(ndim, dtype),
    })
}

fn infer_full(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let v = tensor_arg(call, 1)?;
    if v.ndim > 0 {
        return Err(error(
            call,
            "op-rank",
            format!(
                "{} must be a scalar (rank 0), found rank {}",
                arg_name(call, 1),
                v.ndim
            ),
        ));
    }
    let dtype = attr_dtype(call, "dtype");
    let dtype = if dtype.is_void() { v.dtype } else { dtype };
    Ok(match shape_arg(call, 0)? {
        Ok(dims) => tensor(Some(dims), 0, dtype, ana),
        Err(ndim) => StructInfo::tensor_ndim(ndim, dtype),
    })
}

const DTYPE_REQUIRED: AttrSpec = AttrSpec::new("dtype", AttrType::DataType, AttrDefault::Required);

/// The creation ops.
pub const OPS: &[OpInfo] = &[
    OpInfo {
        name: "relax.zeros",
        args: &["shape"],
        arity: Arity::Exact(1),
        attrs: &[DTYPE_REQUIRED],
        infer_struct_info: infer_fill,
        purity: true,
        pattern: OpPatternKind::ElemWise,
    },
    OpInfo {
        name: "relax.ones",
        args: &["shape"],
        arity: Arity::Exact(1),
        attrs: &[DTYPE_REQUIRED],
        infer_struct_info: infer_fill,
        purity: true,
        pattern: OpPatternKind::ElemWise,
    },
    OpInfo {
        name: "relax.full",
        args: &["shape", "fill_value"],
        arity: Arity::Exact(2),
        attrs: &[AttrSpec::new(
            "dtype",
            AttrType::DataType,
            AttrDefault::DataType("void"),
        )],
        infer_struct_info: infer_full,
        purity: true,
        pattern: OpPatternKind::ElemWise,
    },
];

#[cfg(test)]
mod tests {
    use crate::ir::AttrValue;
    use crate::op::testing::*;

    #[test]
    fn creation() {
        let n = sym("n");
        assert_infers(
            "relax.zeros",
            &[shape(&[n.clone(), d(3)])],
            &[("dtype", AttrValue::from("float32"))],
            "R.Tensor((n, 3), dtype=\"float32\")",
        );
        assert_infers(
            "relax.ones",
            &[shape(&[d(2)])],
            &[("dtype", AttrValue::from("i64"))],
            "R.Tensor((2,), dtype=\"int64\")",
        );
        assert_infers(
            "relax.full",
            &[shape(&[d(2)]), t(&[], F32)],
            &[],
            "R.Tensor((2,), dtype=\"float32\")",
        );
        assert_infers(
            "relax.full",
            &[shape(&[d(2)]), t(&[], F32)],
            &[("dtype", AttrValue::from("float16"))],
            "R.Tensor((2,), dtype=\"float16\")",
        );
        assert_fails(
            "relax.full",
            &[shape(&[d(2)]), t(&[d(2)], F32)],
            &[],
            "full: fill_value must be a scalar (rank 0), found rank 1",
        );
        assert_fails(
            "relax.zeros",
            &[shape(&[d(2)])],
            &[],
            "zeros: missing required attribute `dtype`",
        );
        assert_fails(
            "relax.zeros",
            &[t(&[d(2)], I64)],
            &[("dtype", AttrValue::from("float32"))],
            "zeros: shape must be a shape, found R.Tensor((2,), dtype=\"int64\")",
        );
        assert_fails(
            "relax.zeros",
            &[shape(&[d(2)])],
            &[("dtype", AttrValue::from("floaty"))],
            "zeros: attribute `dtype` must be a dtype, found the string \"floaty\"",
        );
    }
}
