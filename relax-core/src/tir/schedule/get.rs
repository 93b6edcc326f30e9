//! `get_block` and `get_loops`: handles to a function's blocks and to the
//! loops above a block.

use super::tree;
use super::{BlockRV, Instruction, LoopRV, Result, Schedule};
use crate::tir::Stmt;

impl Schedule {
    /// The block named `name` (TVM's `get_block`); an `Err` when no block
    /// or several blocks have that name.
    pub fn get_block(&mut self, name: &str) -> Result<BlockRV> {
        tree::the_block(&self.func.body, name, "get_block")?;
        let b = self.new_block(name);
        self.trace.insts.push(Instruction::GetBlock {
            name: name.to_string(),
            out: b.0,
        });
        Ok(b)
    }

    /// The loops between `block` and its parent block (or the function
    /// body), outermost first (TVM's `get_loops`).
    pub fn get_loops(&mut self, block: BlockRV) -> Result<Vec<LoopRV>> {
        let name = self.block_name(block)?;
        let (_, loops) = tree::the_block(&self.func.body, &name, "get_loops")?;
        let vars: Vec<_> = loops
            .iter()
            .filter_map(|l| match l {
                Stmt::For { loop_var, .. } => Some(loop_var.clone()),
                _ => None,
            })
            .collect();
        let out: Vec<LoopRV> = vars.iter().map(|v| self.new_loop(v)).collect();
        self.trace.insts.push(Instruction::GetLoops {
            block: block.0,
            outs: out.iter().map(|l| l.0).collect(),
        });
        Ok(out)
    }
}
