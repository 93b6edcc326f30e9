//! `decompose_reduction`: a reduction block's `init` becomes a block of
//! its own, in a loop nest placed just before a given loop (TVM's
//! `decompose_reduction`).
//!
//! 1. The loop must be one of the block's loops, and no loop above it may
//!    be bound to a reduce variable: then each output element's whole
//!    reduction runs inside one iteration of the loops above, after the
//!    init nest of that iteration.
//! 2. The init block `<name>_init` has the block's spatial variables
//!    (fresh ones, same names), bound as in the block but through copies
//!    of the loops from the given loop down that its bindings use
//!    (`<loop>_init`); it writes what the block writes and runs its init.
//!    The block's predicate, if any, is copied; it may not use a loop that
//!    is not copied.
//! 3. The block loses its `init`.

use super::tree::{self, map_children, replace_loop};
use super::{BlockRV, Instruction, LoopRV, Result, Schedule, ScheduleError};
use crate::ir::prim_expr::{PrimExpr, TirVar};
use crate::ir::Attrs;
use crate::tir::{Block, BufferRegion, IterKind, IterVar, Stmt, Substitute};

/// `s` with the init of the block named `name` removed.
fn drop_init(s: &Stmt, name: &str) -> Stmt {
    let s = match s {
        Stmt::Block(b) if b.name == name => {
            let mut b = (**b).clone();
            b.init = None;
            Stmt::Block(Box::new(b))
        }
        _ => s.clone(),
    };
    map_children(&s, &mut |c| Ok(drop_init(c, name))).expect("infallible")
}

impl Schedule {
    /// Moves `block`'s init into a new block before `loop_rv` (TVM's
    /// `decompose_reduction`); returns the init block.
    pub fn decompose_reduction(&mut self, block: BlockRV, loop_rv: LoopRV) -> Result<BlockRV> {
        let name = self.block_name(block)?;
        let var = self.loop_var(loop_rv)?;
        let what = self.describe_loop(loop_rv);
        let err = |m: String| {
            Err(ScheduleError::new(format!(
                "decompose_reduction: block {name:?} {m}"
            )))
        };
        let (b, loops) = tree::the_block(&self.func.body, &name, "decompose_reduction")?;
        let Some(init) = b.init.as_deref() else {
            return err("has no init".into());
        };
        let headers: Vec<(TirVar, PrimExpr, PrimExpr, crate::tir::ForKind)> = loops
            .iter()
            .map(|l| match l {
                Stmt::For {
                    loop_var,
                    min,
                    extent,
                    kind,
                    ..
                } => (loop_var.clone(), min.clone(), extent.clone(), *kind),
                _ => unreachable!("find_blocks collects loops"),
            })
            .collect();
        let Some(p) = headers.iter().position(|h| h.0 == var) else {
            return err(format!("is not under {what}"));
        };
        for (iv, value) in b.iter_vars.iter().zip(&b.iter_values) {
            if iv.kind != IterKind::Reduce {
                continue;
            }
            if let Some(h) = headers[..p]
                .iter()
                .find(|h| value.free_vars().contains(&h.0))
            {
                return err(format!(
                    "binds its reduce variable {} to loop {}, which is above {what}",
                    iv.var.name(),
                    h.0.name()
                ));
            }
        }
        let predicate = tree::realizes(&self.func.body)
            .into_iter()
            .find(|(_, r)| r.name == name)
            .and_then(|(p, _)| p.cloned());
        let reduce_vars: Vec<TirVar> = b
            .iter_vars
            .iter()
            .filter(|iv| iv.kind == IterKind::Reduce)
            .map(|iv| iv.var.clone())
            .collect();
        let mut used: Vec<TirVar> = Vec::new();
        for (iv, value) in b.iter_vars.iter().zip(&b.iter_values) {
            if iv.kind == IterKind::Spatial {
                used.extend(value.free_vars());
            }
        }
        if let Some(pred) = &predicate {
            used.extend(pred.free_vars());
        }
        let inner = &headers[p..];
        let copied: Vec<_> = inner.iter().filter(|h| used.contains(&h.0)).collect();
        if let Some(pred) = &predicate {
            if let Some(h) = inner
                .iter()
                .find(|h| pred.free_vars().contains(&h.0) && !copied.iter().any(|c| c.0 == h.0))
            {
                return err(format!("has a predicate on loop {}", h.0.name()));
            }
        }
        let mut sub = Substitute::default();
        let mut init_headers = Vec::new();
        for h in &copied {
            let bounds_use_other =
                h.1.free_vars()
                    .into_iter()
                    .chain(h.2.free_vars())
                    .any(|u| inner.iter().any(|x| x.0 == u));
            if bounds_use_other {
                return err(format!(
                    "has loop {} whose bounds use another of its loops",
                    h.0.name()
                ));
            }
            let nv = TirVar::with_dtype(format!("{}_init", h.0.name()), h.0.dtype());
            sub.vars.insert(h.0.clone(), nv.to_expr());
            init_headers.push((nv, h.1.clone(), h.2.clone(), h.3));
        }
        // The init block's own iteration variables.
        let mut iv_sub = Substitute::default();
        let mut iter_vars = Vec::new();
        let mut iter_values = Vec::new();
        for (iv, value) in b.iter_vars.iter().zip(&b.iter_values) {
            if iv.kind != IterKind::Spatial {
                continue;
            }
            let nv = TirVar::with_dtype(iv.var.name(), iv.var.dtype());
            iv_sub.vars.insert(iv.var.clone(), nv.to_expr());
            iter_vars.push(IterVar {
                var: nv,
                min: iv.min.clone(),
                extent: iv.extent.clone(),
                kind: IterKind::Spatial,
            });
            iter_values.push(sub.expr(value));
        }
        let init_free = init.free_vars();
        if let Some(r) = reduce_vars.iter().find(|r| init_free.contains(r)) {
            return err(format!(
                "has an init that uses reduce variable {}",
                r.name()
            ));
        }
        let mut writes = Vec::new();
        for w in &b.writes {
            let mut region = Vec::new();
            for (lo, n) in &w.region {
                let fv: Vec<TirVar> = lo.free_vars().into_iter().chain(n.free_vars()).collect();
                if let Some(r) = reduce_vars.iter().find(|r| fv.contains(r)) {
                    return err(format!(
                        "writes {} at a region that depends on reduce variable {}",
                        w.buffer.name(),
                        r.name()
                    ));
                }
                region.push((iv_sub.expr(lo), iv_sub.expr(n)));
            }
            writes.push(BufferRegion {
                buffer: w.buffer.clone(),
                region,
            });
        }
        let init_name = format!("{name}_init");
        if !tree::find_blocks(&self.func.body, &init_name).is_empty() {
            return err(format!(
                "cannot get an init block: a block {init_name:?} exists"
            ));
        }
        let init_block = Stmt::Block(Box::new(Block {
            name: init_name.clone(),
            iter_vars,
            iter_values,
            reads: vec![],
            writes,
            init: None,
            body: Box::new(iv_sub.stmt(init)),
            alloc_buffers: vec![],
            annotations: Attrs::new(),
        }));
        let realize = match &predicate {
            Some(pred) => Stmt::IfThenElse {
                cond: sub.expr(pred),
                then_case: Box::new(init_block),
                else_case: None,
            },
            None => init_block,
        };
        let init_nest = init_headers
            .iter()
            .rev()
            .fold(realize, |body, (v, min, extent, kind)| Stmt::For {
                loop_var: v.clone(),
                min: min.clone(),
                extent: extent.clone(),
                kind: *kind,
                body: Box::new(body),
                annotations: Attrs::new(),
            });
        let body = drop_init(&self.func.body, &name);
        self.func.body = replace_loop(&body, &var, &mut |s| {
            Ok(Stmt::Seq(vec![init_nest.clone(), s.clone()]))
        })?;
        let out = self.new_block(&init_name);
        self.trace.insts.push(Instruction::DecomposeReduction {
            block: block.0,
            loop_rv: loop_rv.0,
            out: out.0,
        });
        Ok(out)
    }
}
