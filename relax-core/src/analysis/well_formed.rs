//! Well-formedness. INTERFACE STUB, replaced by the helper.
use crate::ir::IRModule;
use relax_runtime::Diagnostic;

/// Checks every well-formedness rule; returns all violations.
pub fn well_formed(_module: &IRModule) -> Result<(), Vec<Diagnostic>> {
    Ok(())
}
