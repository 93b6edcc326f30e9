//! `set_scope`: the storage scope of a buffer a block writes (TVM's
//! `set_scope`).
//!
//! 1. The buffer is the block's `buffer_index`-th written buffer, and must
//!    be allocated in the function (a block's `alloc_buffers`): a
//!    parameter's scope is its caller's, `"global"`.
//! 2. The scope is one TVM knows: `global`, `local`, `shared`,
//!    `shared.dyn`, `warp`, `wmma.matrix_a`, `wmma.matrix_b`,
//!    `wmma.accumulator`, or one of the first four with a tag
//!    (`global.texture`, `local.cache`).
//! 3. The buffer is replaced, everywhere, by a buffer of the new scope
//!    (same name, dtype and shape; [`Buffer::with_scope`]). Setting the
//!    scope it has already changes nothing.

use super::tree;
use super::{BlockRV, Instruction, Result, Schedule, ScheduleError};
use crate::tir::{Buffer, Stmt, Substitute};

/// Whether `scope` is a storage scope TVM accepts (module docs, point 2).
pub fn valid_scope(scope: &str) -> bool {
    let (rank, tag) = match scope.split_once('.') {
        Some((r, t)) => (r, Some(t)),
        None => (scope, None),
    };
    match rank {
        "global" | "local" | "shared" | "warp" => tag.is_none_or(|t| !t.is_empty()),
        "wmma" => matches!(tag, Some("matrix_a" | "matrix_b" | "accumulator")),
        _ => false,
    }
}

/// Whether a block of `s` allocates `b`.
fn allocated(s: &Stmt, b: &Buffer) -> bool {
    match s {
        Stmt::Block(blk) if blk.alloc_buffers.contains(b) => true,
        Stmt::Allocate { buffer, .. } if buffer == b => true,
        _ => tree::children(s).into_iter().any(|c| allocated(c, b)),
    }
}

impl Schedule {
    /// Puts the `buffer_index`-th buffer `block` writes in `storage_scope`
    /// (TVM's `set_scope`; see the module docs).
    pub fn set_scope(
        &mut self,
        block: BlockRV,
        buffer_index: usize,
        storage_scope: &str,
    ) -> Result<()> {
        let name = self.block_name(block)?;
        let err = |m: String| Err(ScheduleError::new(format!("set_scope: block {name:?} {m}")));
        let (b, _) = tree::the_block(&self.func.body, &name, "set_scope")?;
        let Some(w) = b.writes.get(buffer_index) else {
            return err(format!(
                "writes {} buffers; there is no buffer_index {buffer_index}",
                b.writes.len()
            ));
        };
        let buffer = w.buffer.clone();
        if !valid_scope(storage_scope) {
            return err(format!(
                "cannot put {} in storage scope {storage_scope:?}: not a scope (\"global\", \"local\", \"shared\", \"shared.dyn\", \"warp\", \"wmma.…\")",
                buffer.name()
            ));
        }
        if !allocated(&self.func.body, &buffer) {
            return err(format!(
                "writes {}, a parameter of the function: its scope is the caller's",
                buffer.name()
            ));
        }
        if buffer.scope() != storage_scope {
            let mut sub = Substitute::default();
            sub.buffers
                .insert(buffer.id(), buffer.with_scope(storage_scope));
            self.func.body = sub.stmt(&self.func.body);
        }
        self.trace.insts.push(Instruction::SetScope {
            block: block.0,
            buffer_index,
            storage_scope: storage_scope.to_string(),
        });
        Ok(())
    }
}
