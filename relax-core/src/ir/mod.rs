//! The Relax IR: expressions, StructInfo, functions and modules.
//!
//! One file per concept, named as the Relax spec names it:
//!
//! | file | what |
//! |---|---|
//! | [`prim_expr`] | `PrimExpr`, `TirVar` (symbolic shape arithmetic) |
//! | [`struct_info`] | `StructInfo` (Object, Prim, Shape, Tensor, Tuple, Func) |
//! | [`expr`] | `Expr` and its nodes, `Var`, bindings and binding blocks |
//! | [`attrs`] | call and function attributes |
//! | [`function`] | `Function` |
//! | [`module`] | `IRModule` |
//! | [`mod@structural_equal`] | equality and hashing modulo bound variables |
//! | [`id_hash`] | `VarMap`, `VarSet`: maps keyed by variable identity, cheaply hashed |
//!
//! `DataType` comes from `relax-runtime` (tensors need it too) and is
//! re-exported here.

pub mod attrs;
pub mod expr;
pub mod function;
pub mod id_hash;
pub mod module;
pub mod prim_expr;
pub mod struct_info;
pub mod structural_equal;

pub use crate::tir::PrimFunc;
pub use attrs::{AttrValue, Attrs};
pub use expr::{
    Binding, BindingBlock, Call, Expr, ExprKind, GlobalVar, If, MatchCast, Op, SeqExpr, Var,
    VarBinding,
};
pub use function::Function;
pub use id_hash::{VarMap, VarSet};
pub use module::{BaseFunc, IRModule};
pub use prim_expr::{EvalError, PrimExpr, PrimExprKind, TirVar};
pub use relax_runtime::{DataType, Tensor, TypeCode};
pub use struct_info::{
    DeriveFunc, FuncStructInfo, PrimStructInfo, ShapeStructInfo, StructInfo, StructInfoKind,
    TensorStructInfo, UNKNOWN_NDIM,
};
pub use structural_equal::{
    assert_structural_equal, structural_equal, structural_equal_map_free_vars,
    structural_equal_report, structural_hash, structural_hash_map_free_vars, StructuralEq,
    StructuralMismatch,
};
