//! `annotate`, `unannotate`: named hints on a loop or a block (TVM's
//! `Schedule.annotate(block_or_loop, ann_key, ann_val)` and
//! `Schedule.unannotate(block_or_loop, ann_key)`).
//!
//! 1. The target is a loop or a block ([`BlockOrLoop`], from either
//!    handle); its annotations are an ordered map of name to
//!    [`AttrValue`] (`Stmt::For::annotations`, [`Block::annotations`]).
//! 2. `annotate` sets the key, replacing a value it already has (in
//!    place, so the order of keys is the order they were first set).
//! 3. `unannotate` removes the key; a key the target does not have is an
//!    `Err` naming the target and the keys it has (TVM checks the same).
//! 4. Nothing else changes: the function computes what it computed. Which
//!    names mean something is up to the passes and the back end that read
//!    them (the LLVM back end reads none today); others are carried, as
//!    TVM carries names it does not know.
//!
//! [`Block::annotations`]: crate::tir::Block::annotations

use super::tree::{self, replace_loop};
use super::{BlockRV, Instruction, LoopRV, Result, Schedule, ScheduleError};
use crate::ir::{AttrValue, Attrs};
use crate::tir::Stmt;

/// A loop or a block handle: what `annotate` and `unannotate` take
/// (TVM's `block_or_loop`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockOrLoop {
    /// A block.
    Block(BlockRV),
    /// A loop.
    Loop(LoopRV),
}

impl From<BlockRV> for BlockOrLoop {
    fn from(b: BlockRV) -> Self {
        BlockOrLoop::Block(b)
    }
}

impl From<LoopRV> for BlockOrLoop {
    fn from(l: LoopRV) -> Self {
        BlockOrLoop::Loop(l)
    }
}

impl BlockOrLoop {
    /// The handle's index in its schedule.
    pub(crate) fn index(self) -> usize {
        match self {
            BlockOrLoop::Block(b) => b.0,
            BlockOrLoop::Loop(l) => l.0,
        }
    }
}

/// `a, b` or `none`, for messages.
fn keys(attrs: &Attrs) -> String {
    if attrs.is_empty() {
        return "none".into();
    }
    attrs
        .iter()
        .map(|(k, _)| format!("{k:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `s` with the block named `name` given `f(annotations)`.
fn rewrite_block(s: &Stmt, name: &str, f: &mut dyn FnMut(&Attrs) -> Result<Attrs>) -> Result<Stmt> {
    let s = match s {
        Stmt::Block(b) if b.name == name => {
            let mut b = (**b).clone();
            b.annotations = f(&b.annotations)?;
            Stmt::Block(Box::new(b))
        }
        _ => s.clone(),
    };
    tree::map_children(&s, &mut |c| rewrite_block(c, name, f))
}

impl Schedule {
    /// Sets the annotation `ann_key` of a loop or a block to `ann_val`
    /// (TVM's `annotate`; see the module docs).
    pub fn annotate(
        &mut self,
        block_or_loop: impl Into<BlockOrLoop>,
        ann_key: &str,
        ann_val: impl Into<AttrValue>,
    ) -> Result<()> {
        let target = block_or_loop.into();
        let value = ann_val.into();
        self.rewrite_annotations(target, "annotate", &mut |a, _| {
            Ok(a.with(ann_key, value.clone()))
        })?;
        self.trace.insts.push(Instruction::Annotate {
            block_or_loop: target.index(),
            ann_key: ann_key.to_string(),
            ann_val: value,
        });
        Ok(())
    }

    /// Removes the annotation `ann_key` of a loop or a block (TVM's
    /// `unannotate`; see the module docs).
    pub fn unannotate(
        &mut self,
        block_or_loop: impl Into<BlockOrLoop>,
        ann_key: &str,
    ) -> Result<()> {
        let target = block_or_loop.into();
        self.rewrite_annotations(target, "unannotate", &mut |a, what| {
            if a.get(ann_key).is_none() {
                return Err(ScheduleError::new(format!(
                    "unannotate: {what} has no annotation {ann_key:?}; its annotations are: {}",
                    keys(a)
                )));
            }
            Ok(a.without(ann_key))
        })?;
        self.trace.insts.push(Instruction::Unannotate {
            block_or_loop: target.index(),
            ann_key: ann_key.to_string(),
        });
        Ok(())
    }

    /// Replaces the annotations of `target` by `f(annotations, target's
    /// description)`; the function is unchanged when `f` fails.
    fn rewrite_annotations(
        &mut self,
        target: BlockOrLoop,
        primitive: &str,
        f: &mut dyn FnMut(&Attrs, &str) -> Result<Attrs>,
    ) -> Result<()> {
        let body = match target {
            BlockOrLoop::Block(b) => {
                let name = self.block_name(b)?;
                tree::the_block(&self.func.body, &name, primitive)?;
                let what = format!("block {name:?}");
                rewrite_block(&self.func.body, &name, &mut |a| f(a, &what))?
            }
            BlockOrLoop::Loop(l) => {
                let var = self.loop_var(l)?;
                let what = self.describe_loop(l);
                replace_loop(&self.func.body, &var, &mut |s| {
                    let mut s = s.clone();
                    if let Stmt::For { annotations, .. } = &mut s {
                        *annotations = f(annotations, &what)?;
                    }
                    Ok(s)
                })?
            }
        };
        self.func.body = body;
        Ok(())
    }
}
