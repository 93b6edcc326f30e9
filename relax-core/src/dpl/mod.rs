//! The dataflow pattern language (TVM's `relax.dpl`, from the pattern
//! language RFC): patterns over Relax expressions, matched through a
//! function's bindings, graph patterns over a dataflow block, and
//! rewriting with them.
//!
//! | file | what |
//! |---|---|
//! | [`pattern`] | the pattern AST and its builders (`wildcard()`, `is_op(..)`, `.call([..])`, `|`, `&`, `!`, `dominates`) |
//! | [`bindings`] | what a match sees of the function: each variable's value (`var2val`), the blocks |
//! | [`matcher`] | `Pattern::matches` / `extract` → [`Match`]; `dominates` on the block's post-dominator tree |
//! | [`context`] | `PatternContext` (`used_by`, `only_used_by`, `fork_to`) and `match_dataflow` |
//! | [`rewrite`] | `rewrite_call`, `rewrite_bindings`, and `PatternRewriter`, a rewrite as a `Pass` |
//! | [`from_functions`] | a rewrite from a pattern function and a replacement function (`relax::rewriter!`) |
//!
//! A scan is linear in the block: a call pattern rejects calls of other
//! ops (through bindings) before any matching state exists, and matching
//! state is small vectors, not maps.
//!
//! ```
//! use relax_core::dpl::*;
//! # fn main() -> Result<(), relax_runtime::Error> {
//! let x = wildcard();
//! let w = wildcard();
//! let mm = is_op("relax.matmul")?.call([x, w]);
//! let dense = is_op("relax.add")?.call([mm.clone(), wildcard()]);
//! let activation = is_op("relax.nn.relu")? | is_op("relax.exp")?;
//! # let _ = (dense, activation);
//! # Ok(()) }
//! ```

pub mod bindings;
pub mod context;
pub mod from_functions;
pub mod matcher;
pub mod pattern;
pub mod rewrite;

#[cfg(test)]
mod tests;

pub use bindings::Bindings;
pub use context::{GraphMatch, PatternContext, UseKind};
pub use from_functions::rewriter_from_functions;
pub use matcher::Match;
#[doc(hidden)]
pub use pattern::__op;
pub use pattern::{
    dominates, is_call_dps_packed, is_call_packed, is_call_tir, is_const, is_dfv, is_expr,
    is_extern, is_function, is_gv, is_input, is_op, is_shape, is_tuple, is_tuple_get_item,
    is_tuple_unordered, is_var, named, reject, wildcard, Pattern, PatternKind,
};
pub use rewrite::{
    rewrite_bindings, rewrite_call, rewrite_calls, PatternRewriter, RewriteFn, Rule, MAX_ROUNDS,
};
