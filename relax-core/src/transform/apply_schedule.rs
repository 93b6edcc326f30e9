//! `ApplySchedule`: a user's own schedules for named PrimFuncs of a module,
//! written from Rust with [`Schedule`]'s primitives (TVM's
//! `sch = tir.Schedule(mod); sch.work_on("matmul"); …; mod = sch.mod`).
//!
//! 1. Each rule names a PrimFunc of the module (its global name, e.g.
//!    `matmul` after `LegalizeOps`, or `fused_matmul_add` after `FuseTIR`)
//!    and a closure that schedules it. A name the module lacks is an
//!    `Err` listing the PrimFuncs it has; a failed step is an `Err` naming
//!    the function and the step.
//! 2. A scheduled function is marked `tir.is_scheduled` (TVM's attribute,
//!    which dlight's rules respect): [`DefaultSchedule`] leaves it as it
//!    is. It also gets `op_pattern` opaque, unless it already has a
//!    pattern, so that `FuseOps` does not merge it into a bigger kernel
//!    and lose the schedule; to schedule a fused kernel, run the fusion
//!    passes first and name the fused function.
//! 3. The scheduled function's intermediates are then compacted
//!    ([`compact_buffer_allocation`], TVM's `CompactBufferAllocation`): a
//!    cache written back per tile becomes the tile.
//! 4. `relax::build` runs its pipeline over such a module as usual: the
//!    legalized calls stay, the marked kernels keep their loops.
//!
//! [`DefaultSchedule`]: super::DefaultSchedule

use super::annotate_tir_op_pattern::OP_PATTERN;
use super::Pass;
use crate::ir::{AttrValue, BaseFunc, IRModule};
use crate::op::OpPatternKind;
use crate::tir::compact_buffer::compact_buffer_allocation;
use crate::tir::schedule::{self, Schedule};
use relax_runtime::{Diagnostic, Error};
use std::fmt;

/// TVM's attribute marking a PrimFunc whose loops are already scheduled.
pub const IS_SCHEDULED: &str = "tir.is_scheduled";

/// A user's schedule for one PrimFunc.
type Rule = Box<dyn Fn(&mut Schedule) -> schedule::Result<()> + Send + Sync>;

/// The pass. See the module docs.
#[derive(Default)]
pub struct ApplySchedule {
    rules: Vec<(String, Rule)>,
}

impl fmt::Debug for ApplySchedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApplySchedule")
            .field(
                "functions",
                &self.rules.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl ApplySchedule {
    /// Schedules the PrimFunc named `name` with `rule`.
    pub fn func(
        mut self,
        name: &str,
        rule: impl Fn(&mut Schedule) -> schedule::Result<()> + Send + Sync + 'static,
    ) -> Self {
        self.rules.push((name.to_string(), Box::new(rule)));
        self
    }
}

/// Whether `attrs` mark a function as scheduled.
pub fn is_scheduled(attrs: &crate::ir::Attrs) -> bool {
    matches!(attrs.get(IS_SCHEDULED), Some(AttrValue::Bool(true)))
}

fn error(message: String) -> Error {
    Error::Compile(vec![Diagnostic::new("ApplySchedule", message)])
}

impl Pass for ApplySchedule {
    fn name(&self) -> &str {
        "ApplySchedule"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        let mut out = module.clone();
        for (name, rule) in &self.rules {
            let found = module.functions().find_map(|(gv, f)| match f {
                BaseFunc::Prim(pf) if gv.name_hint() == name => Some((gv.clone(), pf.clone())),
                _ => None,
            });
            let Some((gv, pf)) = found else {
                let mut prims: Vec<&str> = module
                    .functions()
                    .filter(|(_, f)| matches!(f, BaseFunc::Prim(_)))
                    .map(|(gv, _)| gv.name_hint())
                    .collect();
                prims.sort_unstable();
                return Err(error(format!(
                    "the module has no PrimFunc named `{name}`; its PrimFuncs are: {}",
                    if prims.is_empty() {
                        "none".to_string()
                    } else {
                        prims.join(", ")
                    }
                )));
            };
            let mut sch = Schedule::new(pf.clone());
            rule(&mut sch).map_err(|e| error(format!("scheduling `{name}`: {e}")))?;
            let mut scheduled = compact_buffer_allocation(&sch.into_func());
            scheduled.attrs = scheduled.attrs.with(IS_SCHEDULED, true);
            if scheduled.attrs.get(OP_PATTERN).is_none() {
                scheduled.attrs = scheduled
                    .attrs
                    .with(OP_PATTERN, OpPatternKind::Opaque as i64);
            }
            out.add(gv, scheduled);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
