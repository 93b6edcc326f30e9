//! The loop-level interpreter. INTERFACE STUB, replaced by the TIR helper.

use super::prim_func::PrimFunc;
use relax_runtime::Tensor;

/// Runs `func` on `inputs`, writing `outputs` (the buffer parameters in
/// order: inputs then outputs); `scalars` are the scalar parameters.
pub fn run(
    func: &PrimFunc,
    inputs: &[&Tensor],
    outputs: &mut [Tensor],
    scalars: &[i64],
) -> Result<(), String> {
    let _ = (func, inputs, outputs, scalars);
    Err("the loop-level interpreter is not written yet".into())
}
