//! `ConvertToDataflow`: runs of pure bindings outside dataflow blocks
//! become dataflow blocks (TVM's `relax.transform.ConvertToDataflow`).
//!
//! In every sequence (a function body, an `If` branch, a closure's body):
//!
//! 1. A binding is *pure* when it may stand in a dataflow block: a
//!    `match_cast`, or a value that is not an `If`, not an impure call
//!    (`R.print`, `call_packed`, a call of an impure function), and not a
//!    recursive call (of the function it is in, or of a global function
//!    that calls back into it), which a dataflow block may not hold.
//! 2. Maximal runs of consecutive pure bindings and existing dataflow
//!    blocks are gathered; a run becomes one dataflow block when it holds
//!    at least `min_size` bindings (2 by default) or touches an existing
//!    dataflow block, which it merges with.
//! 3. In each resulting dataflow block, a variable used after the block is
//!    an output (an ordinary `Var`); every other one is a `DataflowVar`.
//!
//! `If` branches and closures are converted inside as well.

use super::Pass;
use crate::analysis::derive::is_impure_call_in;
use crate::analysis::vars::free_vars;
use crate::analysis::well_formed::call_graph_reach;
use crate::ir::{Binding, BindingBlock, Expr, ExprKind, Function, GlobalVar, IRModule, Var};
use crate::mutator::replace_vars;
use relax_runtime::Error;
use std::collections::{HashMap, HashSet};

/// The pass. See the module docs.
#[derive(Clone, Copy, Debug)]
pub struct ConvertToDataflow {
    min_size: usize,
}

impl Default for ConvertToDataflow {
    fn default() -> Self {
        ConvertToDataflow { min_size: 2 }
    }
}

impl ConvertToDataflow {
    /// Runs of fewer than `min_size` pure bindings (not next to a dataflow
    /// block) stay as they are.
    pub fn with_min_size(min_size: usize) -> Self {
        ConvertToDataflow {
            min_size: min_size.max(1),
        }
    }
}

impl Pass for ConvertToDataflow {
    fn name(&self) -> &str {
        "ConvertToDataflow"
    }

    fn run(&self, module: IRModule) -> Result<IRModule, Error> {
        let mut out = module.clone();
        let reach = call_graph_reach(&module);
        for (gv, f) in module.functions() {
            let Some(func) = f.as_relax() else { continue };
            let recursive = reach
                .iter()
                .filter(|(g, r)| *g == gv || r.contains(gv))
                .map(|(g, _)| g.clone())
                .collect();
            let mut conv = Converter {
                module: &module,
                min_size: self.min_size,
                renamed: HashMap::new(),
                recursive,
            };
            let body = conv.expr(&func.body);
            let rewritten = Function {
                body,
                ..func.clone()
            };
            let e = replace_vars(&Expr::function(rewritten), &conv.renamed, &module)?;
            if let Some(f) = e.as_function() {
                out.add(gv.clone(), f.clone());
            }
        }
        Ok(out)
    }
}

struct Converter<'a> {
    module: &'a IRModule,
    min_size: usize,
    /// Variables given a new kind: old → the new one.
    renamed: HashMap<Var, Expr>,
    /// The global functions whose calls are recursive in the function
    /// being converted (it, and those that call back into it).
    recursive: HashSet<GlobalVar>,
}

/// One binding and whether it came from a dataflow block.
struct Item {
    binding: Binding,
    dataflow: bool,
}

impl Converter<'_> {
    /// `e` with its sequences converted (item 3 of the module docs renames
    /// variables through [`Converter::renamed`]).
    fn expr(&mut self, e: &Expr) -> Expr {
        match e.kind() {
            ExprKind::SeqExpr(seq) => {
                let mut items = Vec::new();
                for block in &seq.blocks {
                    for b in &block.bindings {
                        items.push(Item {
                            binding: b.with_value(self.expr(b.value())),
                            dataflow: block.is_dataflow,
                        });
                    }
                }
                let body = self.expr(&seq.body);
                let blocks = self.group(items, &body);
                Expr::seq(blocks, body)
            }
            ExprKind::If(i) => Expr::if_(
                i.cond.clone(),
                self.expr(&i.true_branch),
                self.expr(&i.false_branch),
            ),
            ExprKind::Function(f) => Expr::function(Function {
                body: self.expr(&f.body),
                ..f.clone()
            }),
            _ => e.clone(),
        }
    }

    /// Whether `b` calls a function that calls back into the one being
    /// converted (item 1 of the module docs).
    fn is_recursive_call(&self, b: &Binding) -> bool {
        let Binding::VarBinding(vb) = b else {
            return false;
        };
        matches!(vb.value.kind(), ExprKind::Call(c)
            if matches!(c.op.kind(), ExprKind::GlobalVar(g) if self.recursive.contains(g)))
    }

    /// Items 2 and 3 of the module docs.
    fn group(&mut self, items: Vec<Item>, body: &Expr) -> Vec<BindingBlock> {
        // Runs of pure or dataflow items, and the impure items between.
        let mut groups: Vec<(bool, Vec<Item>)> = Vec::new();
        for item in items {
            let pure = item.dataflow
                || (may_stand_in_dataflow(&item.binding, self.module)
                    && !self.is_recursive_call(&item.binding));
            match groups.last_mut() {
                Some((p, g)) if *p == pure => g.push(item),
                _ => groups.push((pure, vec![item])),
            }
        }
        // What each group's successors use.
        let mut used_after: Vec<HashSet<Var>> = vec![HashSet::new(); groups.len()];
        let mut used: HashSet<Var> = free_vars(body).into_iter().collect();
        for (k, (_, g)) in groups.iter().enumerate().rev() {
            used_after[k] = used.clone();
            for item in g {
                used.extend(free_vars(item.binding.value()));
            }
        }
        let mut blocks: Vec<BindingBlock> = Vec::new();
        for ((pure, g), after) in groups.into_iter().zip(used_after) {
            let touches_dataflow = g.iter().any(|i| i.dataflow);
            if !pure || (g.len() < self.min_size && !touches_dataflow) {
                let bindings = g.into_iter().map(|i| i.binding).collect();
                match blocks.last_mut() {
                    Some(b) if !b.is_dataflow => b.bindings.extend::<Vec<Binding>>(bindings),
                    _ => blocks.push(BindingBlock::new(bindings)),
                }
                continue;
            }
            // Uses later in the same block do not make an output.
            let bindings = g
                .into_iter()
                .map(|i| {
                    let var = i.binding.var().clone();
                    let output = after.contains(&var);
                    if output == var.is_dataflow() {
                        let new = if output {
                            Var::new(var.name_hint(), var.struct_info().cloned())
                        } else {
                            Var::new_dataflow(var.name_hint(), var.struct_info().cloned())
                        };
                        self.renamed.insert(var, Expr::var(&new));
                        rebind(&i.binding, new)
                    } else {
                        i.binding
                    }
                })
                .collect();
            blocks.push(BindingBlock::dataflow(bindings));
        }
        blocks
    }
}

/// Whether `b` may stand in a dataflow block (item 1 of the module docs):
/// a `match_cast`, or a value that is not an `If` and not an impure call.
pub fn may_stand_in_dataflow(b: &Binding, module: &IRModule) -> bool {
    match b {
        Binding::MatchCast(_) => true,
        Binding::VarBinding(vb) => match vb.value.kind() {
            ExprKind::If(_) => false,
            ExprKind::Call(call) => !is_impure_call_in(call, Some(module)),
            _ => true,
        },
    }
}

/// `b` binding `var` instead of its own variable.
fn rebind(b: &Binding, var: Var) -> Binding {
    match b {
        Binding::VarBinding(vb) => Binding::var_binding(var, vb.value.clone()),
        Binding::MatchCast(mc) => {
            Binding::match_cast(var, mc.value.clone(), mc.struct_info.clone())
        }
    }
}

#[cfg(test)]
mod tests;
