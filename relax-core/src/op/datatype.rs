//! `astype(x, dtype)`: the same shape, another element type.

use super::attr::{AttrDefault, AttrSpec, AttrType};
use super::infer::{attr_dtype, tensor_arg};
use super::{Arity, OpInfo, OpPatternKind};
use crate::arith::Analyzer;
use crate::ir::{Call, StructInfo, StructInfoKind, TensorStructInfo};
use relax_runtime::Diagnostic;

fn infer_astype(call: &Call, _: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let x = tensor_arg(call, 0)?;
    Ok(StructInfo::new(StructInfoKind::Tensor(TensorStructInfo {
        dtype: attr_dtype(call, "dtype"),
        ..x.clone()
    })))
}

/// The dtype ops.
pub const OPS: &[OpInfo] = &[OpInfo {
    name: "relax.astype",
    args: &["x"],
    arity: Arity::Exact(1),
    attrs: &[AttrSpec::new(
        "dtype",
        AttrType::DataType,
        AttrDefault::Required,
    )],
    infer_struct_info: infer_astype,
    purity: true,
    pattern: OpPatternKind::ElemWise,
}];

#[cfg(test)]
mod tests {
    use crate::ir::AttrValue;
    use crate::op::testing::*;

    #[test]
    fn astype() {
        let n = sym("n");
        assert_infers(
            "relax.astype",
            &[t(&[n.clone()], F32)],
            &[("dtype", AttrValue::from("float16"))],
            "R.Tensor((n,), dtype=\"float16\")",
        );
        assert_fails(
            "relax.astype",
            &[t(&[n], F32)],
            &[],
            "astype: missing required attribute `dtype`",
        );
    }
}
