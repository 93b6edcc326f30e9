//! Passes: module-to-module transformations.
//!
//! 1. A pass is a small value implementing [`Pass`]: a name and
//!    `run(module) -> Result<IRModule, Error>`.
//! 2. [`Sequential`] runs passes in order; in debug builds it checks
//!    well-formedness after each one and names the pass that broke it.

pub mod annotate_tir_op_pattern;
pub mod bind_params;
pub mod dead_code_elimination;
pub mod default_schedule;
pub mod fold_constant;
pub mod fuse_ops;
pub mod fuse_tir;
pub mod legalize;
pub mod legalize_ops;
pub mod to_basic_block_normal_form;
pub use annotate_tir_op_pattern::AnnotateTIROpPattern;
pub use bind_params::BindParams;
pub use dead_code_elimination::DeadCodeElimination;
pub use default_schedule::DefaultSchedule;
pub use fold_constant::FoldConstant;
pub use fuse_ops::FuseOps;
pub use fuse_tir::FuseTIR;
pub use legalize_ops::LegalizeOps;
pub use to_basic_block_normal_form::{to_basic_block_normal_form, ToBasicBlockNormalForm};

use crate::analysis::well_formed;
use crate::ir::IRModule;
use relax_runtime::{Diagnostic, Error};

/// A module-to-module transformation.
pub trait Pass: Send + Sync {
    /// The pass name, as TVM spells it (`FuseOps`, `LegalizeOps`).
    fn name(&self) -> &str;
    /// Transforms `module`.
    fn run(&self, module: IRModule) -> Result<IRModule, Error>;
}

/// Passes run one after another.
#[derive(Default)]
pub struct Sequential {
    passes: Vec<Box<dyn Pass>>,
}

impl Sequential {
    /// An empty pipeline.
    pub fn new() -> Self {
        Self::default()
    }
    /// This pipeline followed by `pass`.
    pub fn with(mut self, pass: impl Pass + 'static) -> Self {
        self.passes.push(Box::new(pass));
        self
    }
    /// The pass names, in order.
    pub fn pass_names(&self) -> Vec<&str> {
        self.passes.iter().map(|p| p.name()).collect()
    }
}

impl Pass for Sequential {
    fn name(&self) -> &str {
        "Sequential"
    }
    fn run(&self, mut module: IRModule) -> Result<IRModule, Error> {
        for pass in &self.passes {
            module = pass.run(module)?;
            if cfg!(debug_assertions) {
                if let Err(ds) = well_formed(&module) {
                    let mut out = vec![Diagnostic::new(
                        "pass-broke-well-formedness",
                        format!("pass {} produced an ill-formed module", pass.name()),
                    )];
                    out.extend(ds);
                    return Err(Error::Compile(out));
                }
            }
        }
        Ok(module)
    }
}
