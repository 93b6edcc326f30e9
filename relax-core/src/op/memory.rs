//! The memory ops: `memory.view(data, shape, dtype, relative_byte_offset)`,
//! TVM's `R.memory.view`.
//!
//! A view reads the bytes of `data`, from `relative_byte_offset` on, as a
//! tensor of `shape` and `dtype`: a reshape, a reinterpretation of the
//! bits (ONNX's `BitCast`), or a window into the buffer. The arguments are
//! Relax values, as in TVM: `shape` a shape (a `ShapeExpr` or a value of
//! Shape StructInfo), `dtype` a `DataTypeImm` and `relative_byte_offset`
//! an integer `PrimValue`. Here all four are given (TVM also accepts a
//! null value for "as `data`").
//!
//! The result is `R.Tensor(shape, dtype)`. A view that provably reaches
//! past `data` (`offset + numel(shape) · size(dtype) > numel(data) ·
//! size(data.dtype)`), a negative offset, a `bool` or vector dtype are
//! errors; what is not provable here is checked by the kernel at run
//! time. Like TVM, which lowers the op to the runtime builtin
//! `runtime.TVMArrayCreateView` rather than to TIR, the op is left to the
//! VM by `LegalizeOps` (`SKIPPED_OPS`).

use super::create::prim_arg;
use super::infer::{arg_name, error, product, shape_arg, tensor, tensor_arg};
use super::{Arity, OpInfo, OpPatternKind};
use crate::arith::{Analyzer, Proof};
use crate::ir::{Call, ExprKind, PrimExpr, StructInfo};
use relax_runtime::{DataType, Diagnostic};

const CODE: &str = "op-memory-view";

fn infer_view(call: &Call, ana: &Analyzer) -> Result<StructInfo, Diagnostic> {
    let data = tensor_arg(call, 0)?.clone();
    let shape = shape_arg(call, 1)?;
    let dtype = match call.args.get(2).map(|a| a.kind()) {
        Some(ExprKind::DataTypeImm(d)) => *d,
        _ => {
            return Err(error(
                call,
                CODE,
                format!("{} must be a DataTypeImm (R.dtype(…))", arg_name(call, 2)),
            ))
        }
    };
    if dtype.is_void() || dtype.is_bool() || dtype.is_handle() || dtype.lanes() != 1 {
        return Err(error(
            call,
            CODE,
            format!("a view of dtype {dtype} is not supported"),
        ));
    }
    let offset = prim_arg(call, 3)?;
    if !offset.dtype().is_integer() {
        return Err(error(
            call,
            CODE,
            format!("{} must be an integer, found {offset}", arg_name(call, 3)),
        ));
    }
    if ana.prove(&offset.clone().lt(PrimExpr::int(0))) == Proof::Proven {
        return Err(error(
            call,
            CODE,
            format!("{} {offset} is negative", arg_name(call, 3)),
        ));
    }
    if let (Ok(dims), Some(in_dims)) = (&shape, data.shape_values()) {
        if !data.dtype.is_void() {
            let bytes = |dims: &[PrimExpr], d: DataType| {
                product(dims).cast(DataType::i64()) * (d.size_in_bytes() as i64)
            };
            let end = offset.clone().cast(DataType::i64()) + bytes(dims, dtype);
            let past = end.gt(bytes(in_dims, data.dtype));
            if ana.prove(&past) == Proof::Proven {
                return Err(error(
                    call,
                    CODE,
                    format!(
                        "a view of {} {dtype} elements at byte {offset} reaches past data of {} {} elements",
                        ana.simplify(&product(dims)),
                        ana.simplify(&product(in_dims)),
                        data.dtype
                    ),
                ));
            }
        }
    }
    Ok(match shape {
        Ok(dims) => tensor(Some(dims), 0, dtype, ana),
        Err(ndim) => tensor(None, ndim, dtype, ana),
    })
}

/// The memory ops.
pub const OPS: &[OpInfo] = &[OpInfo {
    name: "relax.memory.view",
    args: &["data", "shape", "dtype", "relative_byte_offset"],
    arity: Arity::Exact(4),
    attrs: &[],
    infer_struct_info: infer_view,
    purity: true,
    pattern: OpPatternKind::Opaque,
}];

#[cfg(test)]
mod tests {
    use crate::ir::{Expr, PrimExpr};
    use crate::op::testing::*;
    use relax_runtime::DataType;

    fn view(x: Expr, dims: &[PrimExpr], dtype: DataType, offset: i64) -> Vec<Expr> {
        vec![
            x,
            shape(dims),
            Expr::dtype(dtype),
            Expr::prim_value(PrimExpr::int(offset)),
        ]
    }

    #[test]
    fn view_takes_the_shape_and_dtype() {
        let n = sym("n");
        assert_infers(
            "relax.memory.view",
            &view(t(&[n.clone(), d(4)], F32), &[n.clone(), d(4)], I32, 0),
            &[],
            "R.Tensor((n, 4), dtype=\"int32\")",
        );
        assert_infers(
            "relax.memory.view",
            &view(t(&[d(4)], F32), &[d(2), d(4)], DataType::uint(8), 8),
            &[],
            "R.Tensor((2, 4), dtype=\"uint8\")",
        );
    }

    #[test]
    fn view_rejects_what_does_not_fit() {
        assert_fails(
            "relax.memory.view",
            &view(t(&[d(2)], F32), &[d(3)], I32, 0),
            &[],
            "memory.view: a view of 3 int32 elements at byte 0 reaches past data of 2 float32 elements",
        );
        assert_fails(
            "relax.memory.view",
            &view(t(&[d(2)], F32), &[d(1)], I32, -4),
            &[],
            "memory.view: relative_byte_offset -4 is negative",
        );
        assert_fails(
            "relax.memory.view",
            &view(t(&[d(2)], F32), &[d(1)], BOOL, 0),
            &[],
            "memory.view: a view of dtype bool is not supported",
        );
        let mut args = view(t(&[d(2)], F32), &[d(2)], I32, 0);
        args[2] = Expr::prim_value(PrimExpr::int(1));
        assert_fails(
            "relax.memory.view",
            &args,
            &[],
            "memory.view: dtype must be a DataTypeImm (R.dtype(…))",
        );
    }
}
