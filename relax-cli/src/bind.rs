//! `--bind NAME=VALUE` of `compile`, `run` and `bench`: the imported
//! module's symbolic dims replaced by constants before the build (TVM's
//! `relax.transform.BindSymbolicVars`), so that a model with a symbolic
//! batch or sequence length can be compiled, and timed, as its static twin.

use crate::tuning::parse_dims;
use relax_core::ir::{IRModule, PrimExpr};
use relax_core::transform::{BindSymbolicVars, Pass};

/// `module` with each `NAME=VALUE` of `dims` bound in every Relax function
/// (unchanged when `dims` is empty). A name no function has is an error
/// from the pass, which says so.
pub fn bind(module: IRModule, dims: &[String]) -> Result<IRModule, String> {
    if dims.is_empty() {
        return Ok(module);
    }
    let mut parsed: Vec<(String, i64)> = parse_dims("--bind", dims)?.into_iter().collect();
    parsed.sort();
    BindSymbolicVars::new(parsed.into_iter().map(|(name, v)| (name, PrimExpr::int(v))))
        .run(module)
        .map_err(|e| format!("--bind: {e}"))
}
