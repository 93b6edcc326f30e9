//! `Schedule`: TVM's `tir.Schedule` over a [`PrimFunc`] — the primitives
//! that transform a function's loops and blocks without changing what it
//! computes, each checked, each recorded in a replayable [`Trace`].
//!
//! 1. **State.** A schedule owns one PrimFunc and rewrites its body step
//!    by step; [`Schedule::func`] is the current function.
//! 2. **Handles.** [`BlockRV`] and [`LoopRV`] (TVM's random variables) are
//!    indices into the schedule's table of handles. A block handle resolves
//!    by the block's name (unique in a function, as TVM's `get_block`
//!    requires), a loop handle by its loop variable, whose identity no
//!    rewrite of another loop changes: a handle stays valid across steps
//!    the way TVM's srefs do, and one whose loop or block a step removed
//!    (`split`, `fuse`, `compute_inline`) is an `Err` naming it.
//! 3. **Block predicates.** TVM's `BlockRealize` carries a predicate
//!    (`T.where`); here a block under a predicate is an `IfThenElse`
//!    without an else whose then-case is the block, directly under the
//!    innermost loop. Loop primitives look through it as TVM looks through
//!    the realize.
//! 4. **Checks.** Every primitive checks its preconditions first and
//!    returns a [`ScheduleError`] naming the block or loop; a failed step
//!    leaves the function and the trace unchanged.
//! 5. **Trace.** Every step is recorded ([`Trace`]); it prints as Rust and
//!    as TVM's Python trace and replays on a fresh schedule of the same
//!    function ([`Trace::apply_to`]).
//!
//! | file | primitives |
//! |---|---|
//! | [`tree`] | finding and rewriting loops and blocks in the statement tree |
//! | [`get`] | `get_block`, `get_loops` |
//! | [`annotate`] | `annotate`, `unannotate` |
//! | [`loop_transform`] | `split`, `fuse`, `reorder` |
//! | [`for_kind`] | `parallel`, `vectorize`, `unroll` |
//! | [`inline`] | `compute_inline` |
//! | [`reverse_inline`] | `reverse_compute_inline` |
//! | [`compute_at`] | `compute_at` |
//! | [`reverse_compute_at`] | `reverse_compute_at` |
//! | [`cache`] | `cache_read`, `cache_write` |
//! | [`reduction`] | `decompose_reduction` |
//! | [`blockize`] | `blockize` |
//! | [`tensor_intrin`] | `TensorIntrin`: the registry of tensor intrinsics (`dot_16x4_vnni`) |
//! | [`tensorize`] | `tensorize` |
//! | [`set_scope`] | `set_scope` |
//! | [`sampling`] | `sample_perfect_tile` |
//! | [`trace`] | `Trace`, `Instruction`: recording, printing, replay |

pub mod annotate;
pub mod blockize;
pub mod cache;
pub mod compute_at;
pub mod for_kind;
pub mod get;
pub mod inline;
pub mod loop_transform;
pub mod reduction;
pub mod reverse_compute_at;
pub mod reverse_inline;
pub mod sampling;
pub mod set_scope;
pub mod tensor_intrin;
pub mod tensorize;
pub mod trace;
pub mod tree;

#[cfg(test)]
pub(crate) mod tests;

pub use annotate::BlockOrLoop;
pub use tensor_intrin::TensorIntrin;
pub use trace::{Instruction, Trace};

use super::PrimFunc;
use crate::ir::prim_expr::TirVar;
use std::fmt;

/// A handle to a block (TVM's `BlockRV`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlockRV(pub(crate) usize);

/// A handle to a loop (TVM's `LoopRV`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LoopRV(pub(crate) usize);

/// A failed precondition of a schedule primitive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleError {
    /// What failed, naming the primitive and the block or loop.
    pub message: String,
}

impl ScheduleError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        ScheduleError {
            message: message.into(),
        }
    }
}

impl fmt::Display for ScheduleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ScheduleError {}

/// The result of a schedule primitive.
pub type Result<T> = std::result::Result<T, ScheduleError>;

/// What a handle refers to.
#[derive(Clone, Debug)]
pub(crate) enum Handle {
    Block(String),
    Loop(TirVar),
    /// A sampled integer (TVM's `ExprRV`).
    Expr,
}

/// A PrimFunc being scheduled. See the module docs.
#[derive(Clone, Debug)]
pub struct Schedule {
    pub(crate) func: PrimFunc,
    pub(crate) handles: Vec<Handle>,
    pub(crate) trace: Trace,
}

impl Schedule {
    /// A schedule of `func`, with an empty trace.
    pub fn new(func: PrimFunc) -> Self {
        Schedule {
            func,
            handles: Vec::new(),
            trace: Trace::default(),
        }
    }

    /// The function as scheduled so far.
    pub fn func(&self) -> &PrimFunc {
        &self.func
    }

    /// The function, consuming the schedule.
    pub fn into_func(self) -> PrimFunc {
        self.func
    }

    /// The steps applied so far.
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    pub(crate) fn new_block(&mut self, name: &str) -> BlockRV {
        self.handles.push(Handle::Block(name.to_string()));
        BlockRV(self.handles.len() - 1)
    }

    pub(crate) fn new_loop(&mut self, var: &TirVar) -> LoopRV {
        self.handles.push(Handle::Loop(var.clone()));
        LoopRV(self.handles.len() - 1)
    }

    pub(crate) fn new_expr(&mut self) -> usize {
        self.handles.push(Handle::Expr);
        self.handles.len() - 1
    }

    /// The printed name of handle `i` (`b0`, `l1`, `v2`, as TVM numbers
    /// them).
    pub(crate) fn rv_name(&self, i: usize) -> String {
        trace::rv_name(&self.handles, i)
    }

    /// The name of the block `b` refers to.
    pub(crate) fn block_name(&self, b: BlockRV) -> Result<String> {
        match self.handles.get(b.0) {
            Some(Handle::Block(name)) => Ok(name.clone()),
            _ => Err(ScheduleError::new(format!(
                "block handle {} does not belong to this schedule",
                b.0
            ))),
        }
    }

    /// The loop variable of the loop `l` refers to, which must still be in
    /// the function.
    pub(crate) fn loop_var(&self, l: LoopRV) -> Result<TirVar> {
        match self.handles.get(l.0) {
            Some(Handle::Loop(v)) => {
                if tree::find_loop(&self.func.body, v).is_none() {
                    return Err(ScheduleError::new(format!(
                        "loop {} ({}) is no longer in the function",
                        self.rv_name(l.0),
                        v.name()
                    )));
                }
                Ok(v.clone())
            }
            _ => Err(ScheduleError::new(format!(
                "loop handle {} does not belong to this schedule",
                l.0
            ))),
        }
    }

    /// `loop lN (name)`, for messages.
    pub(crate) fn describe_loop(&self, l: LoopRV) -> String {
        match self.handles.get(l.0) {
            Some(Handle::Loop(v)) => format!("loop {} ({})", self.rv_name(l.0), v.name()),
            _ => format!("loop handle {}", l.0),
        }
    }
}
