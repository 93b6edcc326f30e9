//! `PrimFunc`: a loop-level function, called from Relax through `call_tir`.
//!
//! 1. Parameters are buffers (shape and dtype, symbolic dims allowed) or
//!    scalars. Outputs are buffer parameters too (destination-passing
//!    style): `call_tir(f, (x, y), out_sinfo)` calls `f(x, y, out)`.
//! 2. A symbolic dim of a buffer parameter is defined by the buffer it first
//!    appears in; a scalar parameter may carry one explicitly.
//! 3. As a Relax value (spec rule 16) a PrimFunc has StructInfo
//!    `Func(tensors and prims, Tuple([]), impure)`.

use super::buffer::Buffer;
use super::stmt::Stmt;
use crate::ir::attrs::Attrs;
use crate::ir::prim_expr::TirVar;
use crate::ir::struct_info::StructInfo;

/// One parameter of a [`PrimFunc`].
#[derive(Clone, Debug, PartialEq)]
pub enum PrimFuncParam {
    /// `A: T.Buffer((n, 4), "float32")`
    Buffer(Buffer),
    /// `n: T.int64`
    Scalar(TirVar),
}

/// A loop-level function. See the module docs.
#[derive(Clone, Debug, PartialEq)]
pub struct PrimFunc {
    /// The parameters, inputs then outputs.
    pub params: Vec<PrimFuncParam>,
    /// The body.
    pub body: Stmt,
    /// Attributes (`global_symbol`, `op_pattern`, …).
    pub attrs: Attrs,
}

impl PrimFunc {
    /// A function of `params` computing `body`, without attributes.
    pub fn new(params: Vec<PrimFuncParam>, body: Stmt) -> Self {
        PrimFunc {
            params,
            body,
            attrs: Attrs::new(),
        }
    }

    /// The buffer parameters, in order.
    pub fn buffers(&self) -> impl Iterator<Item = &Buffer> {
        self.params.iter().filter_map(|p| match p {
            PrimFuncParam::Buffer(b) => Some(b),
            PrimFuncParam::Scalar(_) => None,
        })
    }

    /// Its StructInfo as a Relax value (spec derivation rule 16).
    pub fn struct_info(&self) -> StructInfo {
        let params = self
            .params
            .iter()
            .map(|p| match p {
                PrimFuncParam::Buffer(b) => StructInfo::tensor(b.shape().to_vec(), b.dtype()),
                PrimFuncParam::Scalar(v) => StructInfo::prim(v.dtype()),
            })
            .collect();
        StructInfo::func(params, StructInfo::tuple(vec![]), false)
    }
}
