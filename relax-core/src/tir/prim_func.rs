//! `PrimFunc`: a loop-level function, called from Relax through `call_tir`.
//!
//! 1. Parameters are buffers (shape and dtype, symbolic dims allowed) or
//!    scalars. Outputs are buffer parameters too (destination-passing style).
//! 2. The body is not represented yet: it comes with the loop-level IR issue.
//!    A PrimFunc here is a signature that Relax can derive StructInfo from
//!    (spec rule 16: buffer params are tensors, scalar params are prims, the
//!    result is an empty tuple and the call is impure).

use crate::ir::attrs::Attrs;
use crate::ir::prim_expr::{PrimExpr, TirVar};
use crate::ir::struct_info::StructInfo;
use relax_runtime::DataType;

/// One parameter of a [`PrimFunc`].
#[derive(Clone, Debug, PartialEq)]
pub enum PrimFuncParam {
    /// `A: T.Buffer((n, 4), "float32")`
    Buffer {
        /// The parameter name.
        name: String,
        /// The dimensions.
        shape: Vec<PrimExpr>,
        /// The element type.
        dtype: DataType,
    },
    /// `n: T.int64`
    Scalar(TirVar),
}

/// A loop-level function's signature. See the module docs.
#[derive(Clone, Debug, PartialEq)]
pub struct PrimFunc {
    /// The parameters, inputs then outputs.
    pub params: Vec<PrimFuncParam>,
    /// Attributes (`global_symbol`, `op_pattern`, …).
    pub attrs: Attrs,
}

impl PrimFunc {
    /// Its StructInfo as a Relax value (spec derivation rule 16).
    pub fn struct_info(&self) -> StructInfo {
        let params = self
            .params
            .iter()
            .map(|p| match p {
                PrimFuncParam::Buffer { shape, dtype, .. } => {
                    StructInfo::tensor(shape.clone(), *dtype)
                }
                PrimFuncParam::Scalar(v) => StructInfo::prim(v.dtype()),
            })
            .collect();
        StructInfo::func(params, StructInfo::tuple(vec![]), false)
    }
}
