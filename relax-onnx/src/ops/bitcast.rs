//! `BitCast` (opset 26): the bits of each element read as another dtype of
//! the same width, as TVM's `R.memory.view(data, shape, dtype, 0)` with
//! the input's own shape.
//!
//! The widths must match (`bool` counts as its byte); anything else is an
//! error naming both dtypes. A view as `bool` is refused, since a byte
//! other than 0 or 1 is no `bool`.

use super::{shape, Ctx};
use crate::tensor::{dtype_of, elem_type_name};
use relax_core::ir::{Attrs, Expr, PrimExpr};
use relax_runtime::Error;

pub fn bitcast(cx: &mut Ctx) -> Result<Vec<Expr>, Error> {
    cx.node.only_attrs(&["to"])?;
    let x = cx.input(0)?;
    let (dims, from) = cx.tensor(&x)?;
    let to = cx
        .node
        .int("to")?
        .ok_or_else(|| cx.error("attribute `to` is required"))?;
    let dtype = i32::try_from(to).ok().and_then(dtype_of).ok_or_else(|| {
        let name = i32::try_from(to).map_or_else(|_| to.to_string(), elem_type_name);
        cx.error(format!("bitcast to {name} is not supported"))
    })?;
    if dtype.is_bool() {
        return Err(
            cx.error("bitcast to bool is not supported (a byte other than 0 or 1 is no bool)")
        );
    }
    if from.size_in_bytes() != dtype.size_in_bytes() {
        return Err(cx.error(format!(
            "bitcast needs dtypes of one width: {from} has {} bits, {dtype} has {}",
            8 * from.size_in_bytes(),
            8 * dtype.size_in_bytes()
        )));
    }
    let args = vec![
        x,
        shape(dims),
        Expr::dtype(dtype),
        Expr::prim_value(PrimExpr::int(0)),
    ];
    Ok(vec![cx.call("relax.memory.view", args, Attrs::new())?])
}
