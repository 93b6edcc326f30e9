//! `compute_inline`: a block that computes an intermediate buffer is
//! removed and its value substituted into the buffer's readers (TVM's
//! `compute_inline`), through [`crate::tir::compute_inline`], whose module
//! docs give the rules. The buffer's allocation goes with it.

use super::tree::{self, map_children};
use super::{BlockRV, Instruction, Result, Schedule, ScheduleError};
use crate::tir::buffer_uses::stmt_uses;
use crate::tir::{Buffer, Stmt};

/// `s` without the allocation of `buffer`, which nothing uses any more.
pub(super) fn drop_allocation(s: &Stmt, buffer: &Buffer) -> Stmt {
    let s = match s {
        Stmt::Allocate { buffer: b, body } if b == buffer => return drop_allocation(body, buffer),
        Stmt::Block(b) if b.alloc_buffers.contains(buffer) => {
            let mut b = (**b).clone();
            b.alloc_buffers.retain(|x| x != buffer);
            Stmt::Block(Box::new(b))
        }
        _ => s.clone(),
    };
    map_children(&s, &mut |c| Ok(drop_allocation(c, buffer))).expect("infallible")
}

impl Schedule {
    /// Inlines `block` into the readers of the buffer it writes (TVM's
    /// `compute_inline`).
    pub fn compute_inline(&mut self, block: BlockRV) -> Result<()> {
        let name = self.block_name(block)?;
        let (b, _) = tree::the_block(&self.func.body, &name, "compute_inline")?;
        let err = |m: String| {
            Err(ScheduleError::new(format!(
                "compute_inline: block {name:?} {m}"
            )))
        };
        if b.writes.len() != 1 {
            return err(format!(
                "writes {} buffers; exactly one is inlinable",
                b.writes.len()
            ));
        }
        let buffer = b.writes[0].buffer.clone();
        if self.func.buffers().any(|p| *p == buffer) {
            return err(format!(
                "writes {}, a parameter of the function, which must stay",
                buffer.name()
            ));
        }
        let Some(body) = crate::tir::compute_inline::compute_inline(&self.func.body, &buffer)
        else {
            return err(format!(
                "cannot be inlined: it must be a nest of loops around one spatial block storing {}[v0, …] (no predicate, init or allocation), the only store to {}, and every reader must read it at single points",
                buffer.name(),
                buffer.name()
            ));
        };
        if stmt_uses(&body, &buffer) || !tree::find_blocks(&body, &name).is_empty() {
            return err("was not fully inlined".into());
        }
        self.func.body = drop_allocation(&body, &buffer);
        self.trace
            .insts
            .push(Instruction::ComputeInline { block: block.0 });
        Ok(())
    }
}
