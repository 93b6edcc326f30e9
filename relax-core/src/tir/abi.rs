//! The scalar ABI of a PrimFunc: which integers a caller passes besides the
//! buffers.
//!
//! A compiled kernel has the C signature
//! [`KernelFn`](relax_runtime::native::KernelFn): one data pointer per
//! buffer parameter and one `i64` per *ABI scalar*. The buffers carry no
//! shapes, so every symbolic dim the body may read has to arrive as a
//! scalar. The ABI scalars are, in this order:
//!
//! 1. the PrimFunc's scalar parameters, in parameter order;
//! 2. then every variable of the buffer parameters' shapes and strides that
//!    is not a scalar parameter, in order of first appearance (parameter by
//!    parameter, its dims then its strides, left to right within each).
//!
//! The VM computes these values at each `call_tir` from the caller's shape
//! heap (`relax_core::backend::vm`), and the LLVM back end reads them in the
//! same order, so both sides must use [`scalar_abi`].

use super::prim_func::{PrimFunc, PrimFuncParam};
use crate::ir::TirVar;

/// The ABI scalars of `func`, in the order the kernel receives them. See
/// the module docs.
pub fn scalar_abi(func: &PrimFunc) -> Vec<TirVar> {
    let mut out: Vec<TirVar> = func
        .params
        .iter()
        .filter_map(|p| match p {
            PrimFuncParam::Scalar(v) => Some(v.clone()),
            PrimFuncParam::Buffer(_) => None,
        })
        .collect();
    for buffer in func.buffers() {
        for dim in buffer.shape().iter().chain(buffer.strides()) {
            for v in dim.free_vars() {
                if !out.contains(&v) {
                    out.push(v);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::PrimExpr;
    use crate::tir::{Buffer, Stmt};
    use relax_runtime::DataType;

    #[test]
    fn scalar_params_come_first_then_shape_vars_in_first_appearance_order() {
        let (n, m, k) = (TirVar::new("n"), TirVar::new("m"), TirVar::new("k"));
        let f32_ = DataType::f32();
        let a = Buffer::new("A", vec![PrimExpr::var(&m), PrimExpr::var(&n) * 2], f32_);
        let b = Buffer::new("B", vec![PrimExpr::var(&k) + PrimExpr::var(&m)], f32_);
        let c = Buffer::new("C", vec![PrimExpr::int(4), PrimExpr::var(&n)], f32_);
        let func = PrimFunc::new(
            vec![
                PrimFuncParam::Buffer(a),
                PrimFuncParam::Buffer(b),
                PrimFuncParam::Buffer(c),
                PrimFuncParam::Scalar(n.clone()),
            ],
            Stmt::no_op(),
        );
        // `n` is a scalar parameter: first, and not repeated for A's `n * 2`.
        assert_eq!(scalar_abi(&func), vec![n, m, k]);
    }

    #[test]
    fn stride_vars_follow_the_dims_of_their_buffer() {
        let (n, s, k) = (TirVar::new("n"), TirVar::new("s"), TirVar::new("k"));
        let f32_ = DataType::f32();
        let a = Buffer::with_strides(
            "A",
            vec![PrimExpr::var(&n), PrimExpr::int(2)],
            f32_,
            vec![PrimExpr::var(&s), PrimExpr::int(1)],
        );
        let b = Buffer::new("B", vec![PrimExpr::var(&k)], f32_);
        let func = PrimFunc::new(
            vec![PrimFuncParam::Buffer(a), PrimFuncParam::Buffer(b)],
            Stmt::no_op(),
        );
        assert_eq!(scalar_abi(&func), vec![n, s, k]);
    }

    #[test]
    fn static_shapes_need_no_scalars() {
        let a = Buffer::new("A", vec![PrimExpr::int(3)], DataType::f32());
        let func = PrimFunc::new(vec![PrimFuncParam::Buffer(a)], Stmt::no_op());
        assert!(scalar_abi(&func).is_empty());
    }
}
